// Package clidoc writes the reference of a command-line program from its
// cobra commands' own definitions (use, description, flags, examples), a
// Markdown page and a man page per command, so that the reference cannot
// drift from the program: a test regenerates the pages and compares them
// with the committed ones.
//
// It is small on purpose: cobra's own generator (cobra/doc) brings a
// Markdown-to-roff converter and a YAML library, for two formats that are
// a few dozen lines each.
package clidoc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kairos/internal/fileio"
)

// Options say what the pages link to.
type Options struct {
	// Topic returns the page of the documentation, relative to the
	// Markdown pages' directory, that explains a command's subject in
	// depth ("" for none), and its title.
	Topic func(cmd *cobra.Command) (page, title string)
	// Source names the program's sources in the pages' header comment,
	// with the command that regenerates them.
	Source string
}

// Pages returns every page of root's command tree, by file name: the
// Markdown pages ("kairos-simulate.md", an index "README.md") and the man
// pages ("kairos-simulate.1"), in two maps.
func Pages(root *cobra.Command, opt Options) (markdown, man map[string][]byte) {
	markdown, man = map[string][]byte{}, map[string][]byte{}
	cmds := commands(root)
	for _, c := range cmds {
		markdown[fileName(c)+".md"] = markdownPage(c, opt)
		man[fileName(c)+".1"] = manPage(c, opt)
	}
	markdown["README.md"] = index(root, cmds, opt)
	return markdown, man
}

// Write writes the Markdown pages into mdDir and the man pages into
// manDir (a sibling of mdDir, which the Markdown pages link to), removing
// the pages of commands that no longer exist.
func Write(root *cobra.Command, opt Options, mdDir, manDir string) error {
	md, man := Pages(root, opt)
	for dir, pages := range map[string]map[string][]byte{mdDir: md, manDir: man} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		old, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			return err
		}
		for _, p := range old {
			if _, ok := pages[filepath.Base(p)]; !ok {
				if err := os.Remove(p); err != nil {
					return err
				}
			}
		}
		for name, b := range pages {
			err := fileio.WriteFile(filepath.Join(dir, name), func(w io.Writer) error { _, err := w.Write(b); return err })
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// commands returns root and every available command under it, in the
// order of their paths; help and hidden commands are left out.
func commands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root || c.Name() == "help" {
			return
		}
		out = append(out, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	sort.SliceStable(out, func(i, j int) bool { return out[i].CommandPath() < out[j].CommandPath() })
	return out
}

// fileName is a command's page name: its path with dashes.
func fileName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

func description(c *cobra.Command) string {
	if c.Long != "" {
		return c.Long
	}
	return c.Short
}

// block is a paragraph of a description: prose, or lines kept as they are
// (indented lines: lists, settings, command lines).
type block struct {
	pre   bool
	lines []string
}

// blocks splits a description into paragraphs of prose and runs of
// indented lines.
func blocks(text string) []block {
	var out []block
	for _, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		for _, line := range strings.Split(para, "\n") {
			pre := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
			if len(out) == 0 || out[len(out)-1].pre != pre || out[len(out)-1].lines == nil {
				out = append(out, block{pre: pre})
			}
			out[len(out)-1].lines = append(out[len(out)-1].lines, line)
		}
		out = append(out, block{}) // a paragraph break
	}
	var kept []block
	for _, b := range out {
		if b.lines != nil {
			kept = append(kept, b)
		}
	}
	return kept
}

// flag is a flag as the pages list it.
type flag struct {
	names, value, usage string
}

func flags(fs *pflag.FlagSet) []flag {
	var out []flag
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		names := "--" + f.Name
		if f.Shorthand != "" {
			names = "-" + f.Shorthand + ", " + names
		}
		value, usage := pflag.UnquoteUsage(f)
		switch f.DefValue {
		case "", "0", "false", "[]", "0s", "<nil>":
		default:
			if f.Value.Type() == "string" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += " (default " + f.DefValue + ")"
			}
		}
		out = append(out, flag{names, value, usage})
	})
	return out
}

// flagGroups returns a command's own flags and the flags it inherits.
func flagGroups(c *cobra.Command) [2][]flag {
	return [2][]flag{flags(c.NonInheritedFlags()), flags(c.InheritedFlags())}
}

// seeAlso lists the commands a page links to: the parent and the
// children, or for a verb its siblings on the same topic.
func seeAlso(c *cobra.Command, opt Options) []*cobra.Command {
	var out []*cobra.Command
	if p := c.Parent(); p != nil {
		out = append(out, p)
	}
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			out = append(out, s)
		}
	}
	if p := c.Parent(); p != nil && opt.Topic != nil {
		topic, _ := opt.Topic(c)
		for _, s := range p.Commands() {
			if t, _ := opt.Topic(s); s != c && s.IsAvailableCommand() && topic != "" && t == topic {
				out = append(out, s)
			}
		}
	}
	return out
}

func markdownPage(c *cobra.Command, opt Options) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!-- Generated from %s by %s; do not edit. -->\n\n", opt.Source, "go generate ./cmd/kairos")
	fmt.Fprintf(&b, "# %s\n\n%s.\n\n", c.CommandPath(), mdEscape(strings.TrimSuffix(c.Short, ".")))
	fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
	for _, bl := range blocks(description(c)) {
		if bl.pre {
			fmt.Fprintf(&b, "```\n%s\n```\n\n", strings.Join(bl.lines, "\n"))
		} else {
			fmt.Fprintf(&b, "%s\n\n", mdEscape(strings.Join(bl.lines, "\n")))
		}
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	for i, fl := range flagGroups(c) {
		if len(fl) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n| flag | value | |\n|---|---|---|\n", [...]string{"Flags", "Flags of every command"}[i])
		for _, f := range fl {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.names, mdCell(f.value), mdCell(f.usage))
		}
		b.WriteString("\n")
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("## Commands\n\n| command | |\n|---|---|\n")
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				fmt.Fprintf(&b, "| [%s](%s.md) | %s |\n", s.Name(), fileName(s), mdCell(s.Short))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("## See also\n\n")
	if opt.Topic != nil {
		if page, title := opt.Topic(c); page != "" {
			fmt.Fprintf(&b, "- [%s](%s)\n", title, page)
		}
	}
	for _, s := range seeAlso(c, opt) {
		fmt.Fprintf(&b, "- [%s](%s.md): %s\n", s.CommandPath(), fileName(s), mdEscape(s.Short))
	}
	fmt.Fprintf(&b, "- its man page: [%s(1)](../man/%s.1)\n", fileName(c), fileName(c))
	return b.Bytes()
}

// index is the Markdown list of every command.
func index(root *cobra.Command, cmds []*cobra.Command, opt Options) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!-- Generated from %s by %s; do not edit. -->\n\n", opt.Source, "go generate ./cmd/kairos")
	fmt.Fprintf(&b, "# The %s commands\n\nOne page per command, generated from the commands' own definitions (what `%s <command> --help` prints); the man pages are in [../man](../man).\n\n", root.Name(), root.Name())
	b.WriteString("| command | what | topic |\n|---|---|---|\n")
	for _, c := range cmds {
		topic := ""
		if opt.Topic != nil {
			if page, title := opt.Topic(c); page != "" {
				topic = fmt.Sprintf("[%s](%s)", title, page)
			}
		}
		fmt.Fprintf(&b, "| [%s](%s.md) | %s | %s |\n", c.CommandPath(), fileName(c), mdCell(c.Short), topic)
	}
	return b.Bytes()
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "<", "&lt;", ">", "&gt;", "`", "\\`", "_", `\_`, "[", `\[`, "]", `\]`)

// mdEscape keeps prose from turning into Markdown markup.
func mdEscape(s string) string {
	lines := strings.Split(mdEscaper.Replace(s), "\n")
	for i, l := range lines {
		// A line starting with these would become a heading, a list
		// item or a quote.
		if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "#") || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "+ ") ||
			strings.HasPrefix(t, "= ") || strings.HasPrefix(t, "> ") || isOrdered(t) {
			lines[i] = `\` + l
		}
	}
	return strings.Join(lines, "\n")
}

func isOrdered(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' '
}

// mdCell escapes a table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(mdEscaper.Replace(strings.ReplaceAll(s, "\n", " ")), "|", `\|`)
}

func manPage(c *cobra.Command, opt Options) []byte {
	var b bytes.Buffer
	name := fileName(c)
	fmt.Fprintf(&b, ".\\\" Generated from %s by go generate ./cmd/kairos; do not edit.\n", opt.Source)
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"%s\" \"%s Manual\"\n", strings.ToUpper(name), c.Root().Name(), c.Root().Name())
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(name), roff(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n%s\n", roff(c.CommandPath()), roff(strings.TrimSpace(strings.TrimPrefix(c.UseLine(), c.CommandPath()))))
	b.WriteString(".SH DESCRIPTION\n")
	for _, bl := range blocks(description(c)) {
		if bl.pre {
			b.WriteString(".PP\n.RS 4\n.nf\n")
			for _, l := range bl.lines {
				b.WriteString(roffLine(l) + "\n")
			}
			b.WriteString(".fi\n.RE\n")
		} else {
			b.WriteString(".PP\n")
			for _, l := range bl.lines {
				b.WriteString(roffLine(l) + "\n")
			}
		}
	}
	for i, fl := range flagGroups(c) {
		if len(fl) == 0 {
			continue
		}
		fmt.Fprintf(&b, ".SH %s\n", [...]string{"OPTIONS", "OPTIONS OF EVERY COMMAND"}[i])
		for _, f := range fl {
			b.WriteString(".TP\n\\fB" + roff(f.names) + "\\fR")
			if f.value != "" {
				b.WriteString(" \\fI" + roff(f.value) + "\\fR")
			}
			b.WriteString("\n" + roffLine(f.usage) + "\n")
		}
	}
	if c.Example != "" {
		b.WriteString(".SH EXAMPLES\n.nf\n")
		for _, l := range strings.Split(strings.TrimRight(c.Example, "\n"), "\n") {
			b.WriteString(roffLine(l) + "\n")
		}
		b.WriteString(".fi\n")
	}
	var also []string
	for _, s := range seeAlso(c, opt) {
		also = append(also, "\\fB"+roff(fileName(s))+"\\fR(1)")
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(also, ", "))
	}
	return b.Bytes()
}

var roffEscaper = strings.NewReplacer(`\`, `\e`, "-", `\-`)

// roff escapes text for a man page.
func roff(s string) string { return roffEscaper.Replace(s) }

// roffLine escapes a line, so that one starting with a dot or a quote is
// not read as a request.
func roffLine(s string) string {
	s = roff(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
