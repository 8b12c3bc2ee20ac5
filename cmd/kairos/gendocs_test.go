package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

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

// readmeBlocks returns the README's fenced blocks, each as its lines.
func readmeBlocks(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	var cur []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```") && in:
			blocks, cur, in = append(blocks, cur), nil, false
		case strings.HasPrefix(l, "```"):
			in = true
		case in:
			cur = append(cur, l)
		}
	}
	return blocks
}

// shown checks that every line the README shows of a command's output
// (but "..." and the demo's own timing) is a line of what it prints.
func shown(t *testing.T, what string, lines []string, out string) {
	t.Helper()
	got := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		got[strings.TrimRight(l, " ")] = true
	}
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "" || l == "..." || strings.HasPrefix(l, "demo done in ") {
			continue
		}
		if !got[l] {
			t.Errorf("README.md shows %s printing\n%s\nwhich it does not print:\n%s", what, l, clip(out))
		}
	}
}

// TestReadmeOutputs: what the README shows the set-up's demo and the
// tour's commands print is what they print, line for line (the lines it
// shows of each), so that the README cannot drift from the program.
func TestReadmeOutputs(t *testing.T) {
	t.Chdir(t.TempDir())
	blocks := readmeBlocks(t)
	demo := -1
	for i, b := range blocks {
		if slices.Contains(b, "go run ./cmd/kairos demo     # the whole pipeline on an embedded 64-rank stencil") {
			demo = i + 1
		}
	}
	if demo < 1 || demo >= len(blocks) || len(blocks[demo]) == 0 || !strings.HasPrefix(blocks[demo][0], "== 1.") {
		t.Fatalf("README.md has no block of the demo's output after its set-up commands")
	}
	code, out, errb := csRun("demo")
	if code != exitOK {
		t.Fatalf("demo: exit %d: %s", code, errb)
	}
	shown(t, "the demo", blocks[demo], out)
	commands := 0
	for _, b := range blocks {
		if len(b) == 0 || !strings.HasPrefix(b[0], "$ kairos ") {
			continue
		}
		for i := 0; i < len(b); {
			cmd, _, _ := strings.Cut(strings.TrimPrefix(b[i], "$ kairos "), "#")
			j := i + 1
			for j < len(b) && !strings.HasPrefix(b[j], "$ ") {
				j++
			}
			code, out, errb := csRun(strings.Fields(cmd)...)
			if code != exitOK {
				t.Errorf("README.md's kairos %s: exit %d: %s", cmd, code, errb)
			}
			shown(t, "kairos "+strings.TrimSpace(cmd), b[i+1:j], out)
			commands++
			i = j
		}
	}
	if commands < 5 {
		t.Errorf("README.md's tour has %d commands", commands)
	}
}

// TestDocsLinks: every relative link of the README, BENCHMARKS.md and the
// pages of docs/ (outside code blocks) names a file that exists, and
// every #anchor a heading of the page it names, as GitHub makes anchors
// of headings (docs/formats.md linked to docs/docs/ktr-format.md, and
// docs/development.md to docs/BENCHMARKS.md).
func TestDocsLinks(t *testing.T) {
	root := testenv.RepoRoot()
	pages := []string{filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md")}
	for _, dir := range []string{"docs", "docs/cli"} {
		m, err := filepath.Glob(filepath.Join(root, dir, "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, m...)
	}
	anchors := map[string]map[string]bool{} // by page
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(page)
		if err != nil {
			return nil
		}
		a := map[string]bool{}
		seen := map[string]int{}
		for _, l := range prose(string(b)) {
			if h, ok := strings.CutPrefix(l, "#"); ok {
				slug := headingSlug(strings.TrimLeft(h, "#"))
				if n := seen[slug]; n > 0 {
					a[slug+"-"+strconv.Itoa(n)] = true
				} else {
					a[slug] = true
				}
				seen[slug]++
			}
		}
		anchors[page] = a
		return a
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, l := range prose(string(b)) {
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				file := page
				if path != "" {
					file = filepath.Join(filepath.Dir(page), path)
					if _, err := os.Stat(file); err != nil {
						t.Errorf("%s links to %s, which does not exist", rel, target)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(file, ".md") && !anchorsOf(file)[anchor] {
					t.Errorf("%s links to %s: no such heading", rel, target)
				}
			}
		}
	}
}

// prose returns the lines of a Markdown page outside its fenced code
// blocks.
func prose(page string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, l)
		}
	}
	return out
}

// headingSlug is the anchor GitHub makes of a heading: lower case, its
// punctuation dropped but hyphens and underscores, spaces made hyphens.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
