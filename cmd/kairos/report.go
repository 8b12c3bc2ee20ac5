package main

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kairos/check"
	"kairos/clock"
	"kairos/cluster"
	"kairos/format"
	"kairos/pattern"
	"kairos/sim"
	"kairos/stats"
	"kairos/trace"
)

func init() { verbs = append(verbs, newReportCmd) }

// reportFlags are report's flags.
type reportFlags struct {
	machine, out string
	speed        flopRate
}

func newReportCmd() *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report [flags] TRACE",
		Short: "Write one HTML page of everything Kairos says about a trace",
		Long: `Report runs every analysis on a trace and writes the results as one
self-contained HTML page (text and SVG figures, no script), to read in any
browser or to attach to a ticket:

  1. summary (kairos stats) and the communication matrix;
  2. validation (kairos check);
  3. the simulated run on a crossbar cluster (--machine, default
     N x 1Gf,125MBps,50us; kairos simulate), with each rank's time;
  4. the classification on 1G Ethernet, 10G Ethernet and InfiniBand QDR
     (kairos classify, computation at --speed for a time-independent trace);
  5. communication patterns, phases and slow instances (kairos slow
     --summary), of the trace if it is timed, else of its simulated run;
  6. the reduction to one trace per cluster of ranks, with its replay
     accuracy (kairos reduce --accuracy; with --exact if the default
     clusters' replay fails).

A section that fails says why; the others are written, and the exit status
is then 1. If every section fails, nothing is written.`,
		Example: `  kairos report run.ktr -o run.html
  kairos report experiment/traces.otf2 --machine 64x2Gf,10GBps,1us -o exp.html`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.machine, "machine", "", `crossbar cluster to simulate on (default "N x 1Gf,125MBps,50us")`)
	f.speed = 1e9
	fl.Var(&f.speed, "speed", "flop/s of the classification's computation (time-independent traces; e.g. 1Gf, 2.5e9)")
	fl.StringVarP(&f.out, "output", "o", "report.html", "HTML file to write (- for standard output)")
	return cmd
}

// reportSection is one section of the page: text, figures, or why it
// could not be made.
type reportSection struct {
	title   string
	text    bytes.Buffer
	figures [][]byte
	err     error
}

// figure draws into a new figure of the section.
func (s *reportSection) figure(draw func(io.Writer) error) {
	var b bytes.Buffer
	if err := draw(&b); err != nil {
		s.err = err
		return
	}
	s.figures = append(s.figures, b.Bytes())
}

func runReport(cmd *cobra.Command, path string, f *reportFlags) error {
	src, err := openTrace(path)
	if err != nil {
		return err
	}
	if f.machine == "" {
		f.machine = fmt.Sprintf("%dx1Gf,125MBps,50us", src.NumRanks())
	}
	start := time.Now()
	secs := reportSections(path, src, f)
	failed := 0
	for _, s := range secs {
		if s.err != nil {
			failed++
		}
	}
	if failed == len(secs) {
		// A page of errors only: like every other -o, an output that
		// failed does not replace what the file held.
		return fmt.Errorf("every section of the report failed, %s not written; the first: %s: %w", f.out, secs[0].title, secs[0].err)
	}
	if err := writeOutput(cmd, f.out, func(w io.Writer) error {
		return writeReportHTML(w, path, secs, time.Since(start))
	}); err != nil {
		return err
	}
	if failed > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "kairos report: %d of %d sections failed; the page says why\n", failed, len(secs))
		return errFailed
	}
	return nil
}

// reportSections runs every analysis on src, a section each.
func reportSections(path string, src trace.Source, f *reportFlags) []*reportSection {
	var secs []*reportSection
	section := func(title string, fill func(s *reportSection) error) {
		s := &reportSection{title: title}
		if err := fill(s); err != nil {
			s.err = err
		}
		secs = append(secs, s)
	}
	section("Summary", func(s *reportSection) error {
		st, err := stats.Collect(src, 5)
		if err != nil {
			return err
		}
		s.figure(func(w io.Writer) error { return matrixSVG(w, st, stats.Bytes, path) })
		return st.WriteText(&s.text)
	})
	section("Validation", func(s *reportSection) error {
		proto := check.SimGrid
		if replayable(path, src) != nil {
			proto = check.None
			fmt.Fprintf(&s.text, "(static checks only: %v)\n", replayable(path, src))
		}
		rep, err := check.Check(src, check.Options{Protocol: proto})
		if err != nil {
			return err
		}
		if rep.OK() {
			s.text.WriteString("valid: every message matched, every request completed, every collective consistent, no deadlock under SimGrid's send protocol\n")
		}
		for i, p := range rep.Problems {
			if i == 20 {
				fmt.Fprintf(&s.text, "... and %d more\n", len(rep.Problems)-i)
				break
			}
			fmt.Fprintf(&s.text, "rank %d event %d: %s\n", p.Rank, p.Index, p.Msg)
		}
		return nil
	})
	var simulated *trace.Trace
	section("Simulation on "+f.machine, func(s *reportSection) error {
		res, tt, err := reportSimulate(path, src, f.machine)
		if err != nil {
			return err
		}
		simulated = tt
		s.figure(func(w io.Writer) error { return rankBars(w, res, filepath.Base(path)+" on "+f.machine) })
		return printSimulation(&s.text, path, f.machine, sim.DefaultConfig(), res, nil, &simulateFlags{}, nil)
	})
	section("Classification", func(s *reportSection) error {
		if err := replayable(path, src); err != nil {
			return err
		}
		opt := clock.DefaultOptions()
		opt.Speed = float64(f.speed)
		cl, err := clock.Classify(src, clock.Interconnects, opt, clock.DefaultThresholds())
		if err != nil {
			return err
		}
		s.figure(func(w io.Writer) error { return classBars(w, []string{path}, []*clock.Classification{cl}) })
		return cl.WriteText(&s.text, path, false)
	})
	section("Patterns, phases and slow instances", func(s *reportSection) error {
		what := "the trace"
		a, err := pattern.Analyze(src, pattern.DefaultOptions())
		if err == nil && !a.Timed {
			if simulated == nil {
				return fmt.Errorf("the trace is not timed and its simulation failed")
			}
			what = "the simulated run"
			a, err = pattern.Analyze(simulated, pattern.DefaultOptions())
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(&s.text, "(of %s)\n", what)
		s.figure(func(w io.Writer) error { return slowLines(w, a, path, 5) })
		return a.WriteStory(&s.text, 5)
	})
	section("Reduction", func(s *reportSection) error {
		out, err := reportReduce(path, src, cluster.DefaultOptions(), f.machine)
		if err != nil {
			// Averaged signatures can merge ranks whose calls differ
			// (another communicator, another neighbour), which the
			// replay finds: clusters split until every member's calls
			// are its representative's replay as the trace does.
			exact := cluster.DefaultOptions()
			exact.Exact = true
			if eout, eerr := reportReduce(path, src, exact, f.machine); eerr == nil {
				fmt.Fprintf(&s.text, "With the default clusters, %v. Clusters split until each member's calls are its representative's (kairos reduce --exact) replay:\n\n", err)
				return writeReduceText(&s.text, eout)
			}
			s.err = err
			if out == nil {
				// The clusters without the accuracy the trace's replay gives.
				if out, _, err = reduceTrace(path, src, cluster.DefaultOptions(), &reduceFlags{}); err != nil {
					return err
				}
			}
		}
		return writeReduceText(&s.text, out)
	})
	return secs
}

// reportReduce reduces src with opt and replays the reduction on
// machine. It returns an error if the reduction or its replay fails, with
// the reduction if only its replay did.
func reportReduce(path string, src trace.Source, opt cluster.Options, machine string) (*reduceJSON, error) {
	out, _, err := reduceTrace(path, src, opt, &reduceFlags{accuracy: true, machine: machine})
	if err != nil {
		return nil, err
	}
	if a := out.Accuracy; a != nil && a.Failure != "" {
		return out, fmt.Errorf("the reduction does not replay: %s", a.Failure) // as kairos reduce --accuracy fails
	}
	return out, nil
}

// reportSimulate replays src on machine, untimed if it is timed, and
// returns the result and the simulated timed trace.
func reportSimulate(path string, src trace.Source, machine string) (*sim.Result, *trace.Trace, error) {
	if err := replayable(path, src); err != nil {
		return nil, nil, err
	}
	sf := &simulateFlags{cluster: machine}
	cfg, given, err := simulateConfig(sf)
	if err != nil {
		return nil, nil, err
	}
	mc, err := simulateMachine(sf, cfg, given, src.NumRanks(), scales{1, 1, 1})
	if err != nil {
		return nil, nil, err
	}
	if u, err := untimeForReplay(io.Discard, path, format.Format{}, src, mc); err != nil {
		return nil, nil, err
	} else if u != nil {
		src = u
	}
	tt := sim.NewTimedTrace(src.NumRanks(), src.Meta())
	res, err := sim.Run(src, mc.m, mc.cfg, tt)
	if err != nil {
		return nil, nil, err
	}
	return res, tt.T, nil
}

// writeReportHTML writes the page.
func writeReportHTML(w io.Writer, path string, secs []*reportSection, took time.Duration) error {
	var b strings.Builder
	name := html.EscapeString(filepath.Base(path))
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Kairos report: %s</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:13px}h2{border-bottom:1px solid #ccc;margin-top:2em}
.error{color:#b00020}svg{max-width:100%%;height:auto}</style></head><body>
<h1>Kairos report: %s</h1>
<p>%s, analysed in %.2f s. Sections:</p><ol>
`, name, name, html.EscapeString(path), took.Seconds())
	for i, s := range secs {
		fmt.Fprintf(&b, "<li><a href=\"#s%d\">%s</a></li>\n", i+1, html.EscapeString(s.title))
	}
	b.WriteString("</ol>\n")
	for i, s := range secs {
		fmt.Fprintf(&b, "<h2 id=\"s%d\">%d. %s</h2>\n", i+1, i+1, html.EscapeString(s.title))
		if s.err != nil {
			fmt.Fprintf(&b, "<p class=\"error\">%s</p>\n", html.EscapeString(s.err.Error()))
		}
		for _, fig := range s.figures {
			b.Write(fig)
		}
		if s.text.Len() > 0 {
			fmt.Fprintf(&b, "<pre>%s</pre>\n", html.EscapeString(s.text.String()))
		}
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
