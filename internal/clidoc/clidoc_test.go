package clidoc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func tree() *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "A tool"}
	var n int
	var s string
	run := &cobra.Command{
		Use:   "run [flags] FILE",
		Short: "Run a file",
		Long: `Run reads FILE and runs it;
.hidden files too.

Settings:
  a/b   the first
  .dot  a line roff would take for a request

- not a list; 2. not a list; *not* emphasis, <not> a tag, back\slash.`,
		Example: "  tool run x.txt",
		RunE:    func(*cobra.Command, []string) error { return nil },
	}
	run.Flags().IntVarP(&n, "count", "n", 3, "how many `times`")
	run.Flags().StringVar(&s, "mode", "", "the mode")
	run.Flags().BoolVar(new(bool), "secret", false, "")
	run.Flags().MarkHidden("secret")
	root.AddCommand(run, &cobra.Command{Use: "gone", Hidden: true, Run: func(*cobra.Command, []string) {}})
	return root
}

// TestPages: a page per available command and an index; descriptions
// split into prose and kept lines; flags with their values and defaults;
// Markdown and roff markup escaped; hidden commands and flags left out.
func TestPages(t *testing.T) {
	md, man := Pages(tree(), Options{Source: "cmd/tool", Topic: func(c *cobra.Command) (string, string) { return "../topic.md", "The topic" }})
	var names []string
	for k := range md {
		names = append(names, k)
	}
	slices.Sort(names)
	if want := []string{"README.md", "tool-run.md", "tool.md"}; !slices.Equal(names, want) {
		t.Fatalf("pages %v, want %v", names, want)
	}
	page := string(md["tool-run.md"])
	for _, want := range []string{"# tool run\n\nRun a file.\n", "```\ntool run [flags] FILE\n```",
		"```\n  a/b   the first\n  .dot  a line roff would take for a request\n```",
		"\\- not a list; 2. not a list; \\*not\\* emphasis, &lt;not&gt; a tag, back\\\\slash.",
		"| `-n, --count` | times | how many times (default 3) |", "| `--mode` | string | the mode |",
		"- [The topic](../topic.md)", "- [tool](tool.md): A tool", "(../man/tool-run.1)", "## Examples\n\n```\n  tool run x.txt\n```"} {
		if !strings.Contains(page, want) {
			t.Errorf("tool-run.md lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "secret") || strings.Contains(string(md["README.md"]), "gone") {
		t.Error("a hidden flag or command is documented")
	}
	roff := string(man["tool-run.1"])
	for _, want := range []string{".TH TOOL-RUN 1", ".SH NAME\ntool\\-run \\- Run a file\n", "\\&.hidden files too.", "back\\eslash",
		".TP\n\\fB\\-n, \\-\\-count\\fR \\fItimes\\fR\nhow many times (default 3)\n", ".SH SEE ALSO\n\\fBtool\\fR(1)"} {
		if !strings.Contains(roff, want) {
			t.Errorf("tool-run.1 lacks %q:\n%s", want, roff)
		}
	}
}

// TestWrite writes the pages and removes those of commands that are gone.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	md, man := filepath.Join(dir, "cli"), filepath.Join(dir, "man")
	if err := os.MkdirAll(md, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(md, "tool-old.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(tree(), Options{}, md, man); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"cli/tool-run.md", "cli/README.md", "man/tool-run.1", "man/tool.1"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(md, "tool-old.md")); err == nil {
		t.Error("the page of a command that is gone was kept")
	}
}
