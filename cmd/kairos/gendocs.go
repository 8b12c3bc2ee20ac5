package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"kairos/internal/clidoc"
)

//go:generate go run . gen-docs ../../docs

func init() { addVerb("gen-docs", newGenDocsCmd) }

// verbTopics are the pages of docs/ that explain each verb's subject; the
// generated reference of a verb links to its topic.
var verbTopics = map[string]struct{ page, title string }{
	"check":      {"inspect.md", "Inspecting traces"},
	"classify":   {"classify.md", "What bounds an application"},
	"completion": {"", ""},
	"convert":    {"inspect.md", "Inspecting traces"},
	"demo":       {"../README.md", "The README's tour"},
	"gen":        {"gen.md", "Synthetic traces"},
	"patterns":   {"patterns.md", "Patterns, phases and slow instances"},
	"phases":     {"patterns.md", "Patterns, phases and slow instances"},
	"platform":   {"simulation.md", "Simulation"},
	"predict":    {"classify.md", "What bounds an application"},
	"print":      {"inspect.md", "Inspecting traces"},
	"reduce":     {"reduce.md", "Reducing traces"},
	"report":     {"report.md", "The HTML report"},
	"simulate":   {"simulation.md", "Simulation"},
	"slow":       {"patterns.md", "Patterns, phases and slow instances"},
	"stats":      {"inspect.md", "Inspecting traces"},
	"compare":    {"inspect.md", "Inspecting traces"},
	"tracer":     {"tracer.md", "Recording MPI programs"},
}

// docsOptions are the generated reference's links: each verb to its
// topic page in docs/ (the pages are in docs/cli).
var docsOptions = clidoc.Options{
	Source: "cmd/kairos",
	Topic: func(cmd *cobra.Command) (string, string) {
		if cmd.Parent() == nil {
			return "../../README.md", "The README"
		}
		for ; cmd.Parent().Parent() != nil; cmd = cmd.Parent() {
		}
		t := verbTopics[cmd.Name()]
		if t.page == "" {
			return "", ""
		}
		return "../" + t.page, t.title
	},
}

func newGenDocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-docs DOCS",
		Short:  "Write the reference of every command into DOCS/cli (Markdown) and DOCS/man (man pages)",
		Hidden: true,
		Args:   exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return clidoc.Write(docsRoot(), docsOptions, filepath.Join(args[0], "cli"), filepath.Join(args[0], "man"))
		},
	}
}

// docsRoot is the command tree the reference documents: every verb, and
// the completion command cobra adds when it runs.
func docsRoot() *cobra.Command {
	root := newRoot()
	root.InitDefaultCompletionCmd()
	return root
}
