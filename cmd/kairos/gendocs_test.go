package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kairos/internal/clidoc"
	"kairos/internal/testenv"
)

// TestDocsFresh: the committed reference in docs/cli and docs/man is what
// the commands' definitions generate, every verb has its page and a topic
// page that exists, and every topic page links to the reference of its
// verbs.
func TestDocsFresh(t *testing.T) {
	docs := filepath.Join(testenv.RepoRoot(), "docs")
	md, man := clidoc.Pages(docsRoot(), docsOptions)
	for dir, pages := range map[string]map[string][]byte{"cli": md, "man": man} {
		var stale []string
		for name, want := range pages {
			got, err := os.ReadFile(filepath.Join(docs, dir, name))
			if err != nil || !bytes.Equal(got, want) {
				stale = append(stale, name)
			}
		}
		entries, err := os.ReadDir(filepath.Join(docs, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if _, ok := pages[e.Name()]; !ok {
				stale = append(stale, e.Name()+" (no such command)")
			}
		}
		slices.Sort(stale)
		if len(stale) > 0 {
			t.Errorf("docs/%s is stale (%s): run go generate ./cmd/kairos", dir, strings.Join(stale, ", "))
		}
	}
	for _, v := range docsRoot().Commands() {
		if !v.IsAvailableCommand() || v.Name() == "help" {
			continue
		}
		topic, ok := verbTopics[v.Name()]
		if !ok {
			t.Errorf("verb %s has no topic page in verbTopics", v.Name())
			continue
		}
		if topic.page == "" {
			continue
		}
		page, err := os.ReadFile(filepath.Join(docs, topic.page))
		if err != nil {
			t.Errorf("verb %s: %v", v.Name(), err)
			continue
		}
		if link := "cli/kairos-" + v.Name() + ".md"; !strings.HasSuffix(topic.page, "README.md") && !bytes.Contains(page, []byte(link)) {
			t.Errorf("docs/%s does not link to %s", topic.page, link)
		}
	}
}
