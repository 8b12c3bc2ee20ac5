package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
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

// TestReadme: the README is short (at most 300 lines, the reference being
// in docs/), gives the two set-up commands, and links to every page of
// docs/ it names.
func TestReadme(t *testing.T) {
	root := testenv.RepoRoot()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines, more than 300", n)
	}
	for _, cmd := range []string{"go run ./cmd/kairos demo", "go test ./..."} {
		if !strings.Contains(readme, "\n"+cmd) {
			t.Errorf("README.md does not give the set-up command %q", cmd)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(((?:docs/)[^)#]*)\)`).FindAllStringSubmatch(readme, -1) {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("README.md links to %s: %v", m[1], err)
		}
	}
}
