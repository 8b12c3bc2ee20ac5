package prsd

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Dump writes t's structure as text, ScalaTrace's trace files' content
// one item a line: each cluster with its ranklist, each loop with its
// iteration counts, each call with its ranks, its parameters per group
// of ranks (a series in a mode other than Abs is prefixed by it: rel+1
// is "the next rank") and its timing. Series print their first values.
func (t *Trace) Dump(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d ranks, %d clusters, time error %g", t.ranks, len(t.Clusters), t.TimeError)
	if t.Histograms {
		b.WriteString(", histograms")
	}
	if len(t.Plugins) > 0 {
		fmt.Fprintf(&b, ", plug-ins %s", strings.Join(t.Plugins, " "))
	}
	b.WriteByte('\n')
	for i := range t.Clusters {
		cl := &t.Clusters[i]
		fmt.Fprintf(&b, "cluster %d %s\n", i, cl.Ranks)
		if cl.Events != nil {
			b.WriteString("  its events as they are, in columns\n")
		}
		t.dumpItems(&b, cl.Items, 1)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *Trace) dumpItems(b *strings.Builder, items []*Node, depth int) {
	ind := strings.Repeat("  ", depth)
	for _, n := range items {
		b.WriteString(ind)
		if n.IsLoop() {
			b.WriteString("loop")
		} else {
			fmt.Fprintf(b, "%s %x", n.Kind, n.Site)
		}
		if n.Ranks != nil {
			fmt.Fprintf(b, " %s", n.Ranks)
		}
		for _, c := range n.Counts {
			fmt.Fprintf(b, " [%s×%s]", groupName(c.Ranks, len(n.Counts)), seriesText(&c.Series))
		}
		b.WriteByte('\n')
		for _, v := range n.Vars {
			fmt.Fprintf(b, "%s  %s", ind, groupName(v.Ranks, len(n.Vars)))
			for f := range NumFields {
				if val := v.Field(f); val != nil {
					fmt.Fprintf(b, " %s=%s", f, t.valueText(val))
				}
			}
			b.WriteByte('\n')
		}
		for _, tg := range n.Times {
			fmt.Fprintf(b, "%s  %s", ind, groupName(tg.Ranks, len(n.Times)))
			for k, name := range []string{"value", "gap", "dur", "comp"} {
				if tg.Mask&(1<<k) == 0 {
					continue
				}
				s := tg.Stats[k]
				switch l := tg.Levels[k]; {
				case tg.Hists[k] != nil && tg.Scales[k] != nil:
					fmt.Fprintf(b, " %s=histogram%s scaled by rank, groups%s", name, histText(tg.Hists[k]), seriesText(l))
				case tg.Hists[k] != nil:
					fmt.Fprintf(b, " %s=histogram%s, groups%s", name, histText(tg.Hists[k]), seriesText(l))
				case l == nil:
					fmt.Fprintf(b, " %s=%.6g[%.6g,%.6g]", name, s.Mean, s.Min, s.Max)
				case tg.Values[k] != nil:
					fmt.Fprintf(b, " %s=%v%s", name, tg.Values[k], seriesText(l))
				default:
					fmt.Fprintf(b, " %s=levels%s[%.6g,%.6g]", name, seriesText(l), s.Min, s.Max)
				}
			}
			b.WriteByte('\n')
		}
		t.dumpItems(b, n.Body, depth+1)
	}
}

// histText writes a histogram's groups: each one's instances and the
// range of its shares.
func histText(h *Histogram) string {
	parts := make([]string, len(h.Groups))
	for g, sh := range h.Groups {
		if len(sh.Levels) == 0 {
			parts[g] = fmt.Sprintf("%d in []", sh.N)
			continue
		}
		lo, hi := FromLevel(slices.Min(sh.Levels), shareEps), FromLevel(slices.Max(sh.Levels), shareEps)
		parts[g] = fmt.Sprintf("%d in [%.6g,%.6g]", sh.N, lo, hi)
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

// groupName names the ranks of one of a node's groups, of which there
// are groups: its ranklist, or, without one, "all" where it is the only
// group and "rest" where it is the last of several.
func groupName(r Ranklist, groups int) string {
	switch {
	case r != nil:
		return r.String()
	case groups > 1:
		return "rest"
	}
	return "all"
}

func (t *Trace) valueText(v *Value) string {
	s := seriesText(&v.Series)
	switch {
	case v.Mode == Rel:
		s = "rel+" + s
	case v.Mode == Family:
		s = "family:" + s
	case v.Mode == Xor:
		s = "xor:" + s
	case v.Mode >= Plugin && int(v.Mode-Plugin) < len(t.Plugins):
		s = t.Plugins[v.Mode-Plugin] + "+" + s
	}
	switch {
	case v.Alike > 0:
		s += "{" + strconv.FormatInt(v.Alike, 10) + " elements alike}"
	case v.Elems != nil:
		s += "{" + strconv.Itoa(len(v.Elems)) + " elements}"
	}
	return s
}

// seriesText writes a series: its value if constant, else its first
// values and its length.
func seriesText(s *Series) string {
	if s.IsConst() {
		return strconv.FormatInt(s.First, 10)
	}
	var c cursor
	var parts []string
	for i := range min(s.N, 4) {
		_ = i
		parts = append(parts, strconv.FormatInt(c.next(s), 10))
	}
	return "(" + strings.Join(parts, ",") + "… of " + strconv.FormatInt(s.N, 10) + ")"
}
