// Command kairos reads, checks, converts, generates, simulates and analyses
// MPI execution traces. Each capability is a sub-command ("verb") defined in
// its own file; this file holds what they share.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"kairos/cluster"
	"kairos/format"
	"kairos/format/dumpi"
	"kairos/format/ktr"
	"kairos/format/otf2"
	_ "kairos/format/rsd"
	"kairos/format/ti"
	"kairos/internal/fileio"
	"kairos/internal/prefault"
	_ "kairos/internal/prefault/atstart" // the heap in huge pages before the packages' initialization writes it
	"kairos/trace"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// usageError marks an error in how kairos was called (exit code 2).
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// failure is a finished check that found problems (exit code 1) and has
// already reported them.
var errFailed = errors.New("failed")

// reported is an error a verb has already printed (exit code 1); with
// --json it is given on standard output too.
type reported struct{ err error }

func (r reported) Error() string        { return r.err.Error() }
func (r reported) Is(target error) bool { return target == errFailed }

// verb is a sub-command: its name (the first word of its Use) and the
// function that builds it with its flags.
type verb struct {
	name  string
	build func() *cobra.Command
}

// verbs are the sub-commands; each verb file adds its own in its init.
var verbs []verb

func addVerb(name string, build func() *cobra.Command) { verbs = append(verbs, verb{name, build}) }

// newRoot returns the command tree for a run with args: every verb, or
// only the verb args begin with. Building all the verbs' flags on a cold
// start (page faults, not work) cost a 64-rank analytic replay 5 to 10%
// of its CPU time, so a run that names its verb builds that one alone;
// help, completion, an unknown verb or a flag before the verb get the
// whole tree.
func newRoot(args ...string) *cobra.Command {
	root := &cobra.Command{
		Use:   "kairos",
		Short: "Read, check, reduce, analyse and simulate MPI execution traces",
		Long: `Kairos reads MPI execution traces (Score-P's OTF2, DUMPI, SimGrid
time-independent text, its own compact binary format), records them (a PMPI
tracer) and generates realistic synthetic ones; it checks and summarises
them, reduces them to clusters of ranks in a compressed form, simulates them on
machines that do not exist as SimGrid 3.32 does, classifies what bounds
them on many networks, finds their slow communication patterns and late
ranks, and shows it all as tables, JSON, figures and one HTML report.

Start with "kairos demo".

Environment:
  GOMEMLIMIT         the heap's soft limit (default: half the machine's
                     memory, or of its cgroup's limit, or of what ulimit -v
                     and -d leave); whatever it is, a run whose live heap
                     passes three quarters of that memory stops with an
                     error before it is refused memory or killed
  GOGC               the collector's pace (default: a heap goal of twice
                     the live heap, and at least 16 MB, 16 KB more a rank
                     in a replay)
  GODEBUG=disablethp=1  no transparent huge pages for the heap
  KAIROS_CPUPROFILE, KAIROS_MEMPROFILE  write a CPU or heap profile
                     (go tool pprof) of the run to that file
A run needs about 0.75 GB of address space (ulimit -v) before its heap,
which the Go runtime reserves at its start; below that it stops with
"failed to reserve page summary memory".`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("kairos {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	only := verbOf(args)
	for _, v := range verbs {
		if only == "" || v.name == only {
			root.AddCommand(v.build())
		}
	}
	return root
}

// verbOf returns the verb args begin with, "" if none does.
func verbOf(args []string) string {
	if len(args) > 0 {
		for _, v := range verbs {
			if v.name == args[0] {
				return v.name
			}
		}
	}
	return ""
}

// version tells which build this is, for bug reports: the module's
// version where "go install" recorded one, else the commit it was built
// from (with "+dirty" for uncommitted changes), and the Go release.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown build) " + runtime.Version()
	}
	v := info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; (v == "" || v == "(devel)") && rev != "" {
		v = "commit " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			v += "+dirty"
		}
	}
	return v + " " + runtime.Version()
}

func main() {
	if verbOf(os.Args[1:]) != "" {
		// A verb's heap in huge pages (hugeheap.go): asked for again,
		// for what the packages' initialization wrote since atstart's.
		prefault.HugeHeap()
		eachGC(hugeAfterGC)
	}
	limitMemory()
	floorGC()
	fileio.OnPending(func() { onInterrupt(os.Stderr, os.Exit) })
	stop := profile(os.Getenv("KAIROS_CPUPROFILE"))
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	memProfile(os.Getenv("KAIROS_MEMPROFILE"))
	os.Exit(code)
}

// memProfile writes the run's memory profile to path (KAIROS_MEMPROFILE),
// for "go tool pprof -sample_index=alloc_space": what each function
// allocated over the run.
func memProfile(path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kairos: KAIROS_MEMPROFILE: %v\n", err)
	}
}

// profile writes a CPU profile of the run to path (KAIROS_CPUPROFILE),
// for "go tool pprof"; it returns the function that ends it.
func profile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kairos: KAIROS_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "kairos: KAIROS_CPUPROFILE: %v\n", err)
		}
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	// Standard output is buffered (a table's cells are written one by
	// one: a stats of 256 ranks made 8 ms of system calls), and flushed
	// before anything goes to standard error, so that the two keep
	// their order, and at the end.
	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush() // what is written after the check below
	stdout, stderr = out, flushingFirst{out, stderr}
	root := newRoot(args...)
	root.SetArgs(args)
	root.SetOut(afterBars{stdout})
	root.SetErr(afterBars{stderr})
	notesTo = afterBars{stderr}
	opened, said = nil, map[string]bool{}
	cmd, err := root.ExecuteC()
	finishProgress()
	if ferr := out.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("writing the standard output: %w", ferr)
	}
	for _, src := range opened {
		printSourceWarnings(afterBars{stderr}, src)
	}
	if f := cmd.Flags().Lookup("json"); err != nil && err != errFailed && f != nil && f.Value.String() == "true" {
		// A program reading --json's output gets the error there too,
		// rather than nothing.
		writeJSON(stdout, struct {
			Error string `json:"error"`
		}{err.Error()})
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errFailed):
		return exitFailed
	}
	fmt.Fprintln(stderr, "kairos:", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintln(stderr, "Run 'kairos --help' or 'kairos <verb> --help' for usage.")
		return exitUsage
	}
	return exitFailed
}

// flushingFirst writes to w after flushing out.
type flushingFirst struct {
	out *bufio.Writer
	w   io.Writer
}

func (f flushingFirst) Write(p []byte) (int, error) {
	f.out.Flush()
	return f.w.Write(p)
}

// isCobraUsage recognises the errors cobra returns for unknown verbs and
// wrong argument counts.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

// openTrace opens a trace in any registered format, for a verb that reads
// it one rank after another.
func openTrace(path string) (trace.Source, error) {
	return openSource(path, false)
}

// openWhole is openTrace for a verb that keeps state for every rank
// (reduce, report, patterns, phases, slow): a trace that claims far more
// ranks than it holds the events of is refused (see claimed).
func openWhole(path string) (trace.Source, error) {
	src, err := openTrace(path)
	if err == nil {
		err = claimed(path, src)
	}
	return src, err
}

// claimed refuses a trace that names far more ranks than it holds the
// events of (trace.AttrClaimedRanks: a text line naming rank 10,000,000;
// or, where its reader counts each rank's events, more than 4,096 ranks
// and 64 for each rank with events) for a verb whose memory would follow
// the ranks named, not the file: check, stats, print and convert read it
// at a small cost a rank.
func claimed(path string, src trace.Source) error {
	why := src.Meta().Attrs[trace.AttrClaimedRanks]
	if n := src.NumRanks(); why == "" && n > 4096 {
		if _, empty := trace.EmptyRanks(src); n > trace.MostRanks(n-empty) {
			why = fmt.Sprintf("%d ranks, of which %d have events", n, n-empty)
		}
	}
	if why != "" {
		return fmt.Errorf("%s: %s; this verb keeps state for every rank: -np sets the ranks of a simulation, and check and stats read the trace as it is", path, why)
	}
	return nil
}

// inMemory returns an OTF2 or DUMPI trace re-encoded as a .ktr held in
// memory (a few bytes an event), which the verbs that read a trace
// several times (report, reduce, slow) decode faster (report on HPCC's
// archive of 1.56 M events: a third less CPU time; BENCHMARKS.md); any
// other trace, or one that does not convert (its readers then say why),
// as it is. A .ktr converted from an archive keeps the archive's format
// in its metadata: it is read as it is too (a copy of MPICH's greq_test,
// 16.7 M events, took 2.3 s of kairos reduce's CPU time for nothing).
func inMemory(src trace.Source) trace.Source {
	if _, ok := src.(*ktr.Source); ok {
		return src
	}
	switch src.Meta().Attrs["format"] {
	case "otf2", "dumpi":
	default:
		return src
	}
	var buf bytes.Buffer
	if err := ktr.Encode(&buf, src, ktr.Scratch); err != nil {
		return src
	}
	mem, err := ktr.OpenSection(src.Meta().Attrs["format"]+" trace in memory", bytes.NewReader(buf.Bytes()), 0, int64(buf.Len()))
	if err != nil {
		return src
	}
	if k, ok := src.(interface{ DropKept() }); ok {
		k.DropKept() // an OTF2 archive's events its Open kept: copied
	}
	return mem
}

// openReplay opens a trace in any registered format, for a verb that
// replays it, all ranks' readers open at once and read in turns: there
// a TI trace is read ahead.
func openReplay(path string) (trace.Source, error) {
	src, err := openSource(path, true)
	if err == nil {
		err = claimed(path, src)
	}
	return src, err
}

// notesTo is where openSource says how a trace is read otherwise than it
// was recorded (run makes it the verb's standard error).
var notesTo io.Writer = io.Discard

// traceNotes are the Meta.Attrs by which readers say so: count vectors
// derived from totals, requests cancelled or never completed, the
// tracer's buffer flushes, collectives on intercommunicators, MPI calls
// on threads not read, measurement switched off, ranks of communicators
// that are no process's, calls a tracer left out, ranks without a file,
// calls on communicators the trace does not create.
var traceNotes = []string{otf2.AttrDerivedCounts, "otf2.cancelled", "otf2.uncompleted", "otf2.flushes", otf2.AttrInterCollectives,
	otf2.AttrThreadMPI, ti.AttrThreadMPI, otf2.AttrNoMPI, otf2.AttrDevices, otf2.AttrSwitchedOff, "otf2.unresolved", dumpi.AttrIgnored, dumpi.AttrThreads, dumpi.AttrCPUClock, "partial", "unknown-comms"}

// sayNotes writes the reader's notes on how it read the trace at path
// (traceNotes) to notesTo, each once in a run (a verb may open a trace
// twice).
func sayNotes(path string, src trace.Source) {
	for _, v := range readerNotes(src) {
		if !said[path+"\x00"+v] {
			said[path+"\x00"+v] = true
			fmt.Fprintf(notesTo, "note: %s: %s\n", path, v)
		}
	}
}

// readerNotes returns src's notes on how it was read (traceNotes).
func readerNotes(src trace.Source) []string {
	var out []string
	for _, k := range traceNotes {
		if v := src.Meta().Attrs[k]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// said are the notes sayNotes wrote in this run.
var said = map[string]bool{}

// opened are the sources the verb opened with openSource, whose readers'
// warnings (a dropped unterminated last line...) run prints at the end,
// whatever the verb.
var opened []trace.Source

func openSource(path string, replay bool) (trace.Source, error) {
	src, f, err := format.Open(path)
	if err != nil {
		return nil, err
	}
	sayNotes(path, src)
	opened = append(opened, src)
	if src.NumRanks() == 0 {
		// Nothing to check, replay or count: a file cut before its first
		// line ended (its warning says so) or of comments only.
		return nil, fmt.Errorf("%s: not a trace: no rank has any event", path)
	}
	if replay {
		if err := replayable(path, src); err != nil {
			return nil, err
		}
	}
	if src, err = expandReduced(path, src); err != nil {
		return nil, err
	}
	if replay {
		src = readAhead(src, f.Name)
		floorRanks(src.NumRanks())
	}
	return eventProgress(src, filepath.Base(path)), nil
}

// replayable refuses a trace no replay can follow: its format's
// (trace.AttrNoReplay), or one that holds only some ranks' events (a
// rank's DUMPI file alone), a replay needing every rank's.
func replayable(path string, src trace.Source) error {
	if why := src.Meta().Attrs[trace.AttrNoReplay]; why != "" {
		return fmt.Errorf("%s: this %s trace cannot be replayed: %s", path, src.Meta().Attrs["format"], why)
	}
	if p := src.Meta().Attrs["partial"]; p != "" {
		return fmt.Errorf("%s: %s; a replay needs every rank's (stats, print and patterns read it)", path, p)
	}
	return nil
}

// expandReduced returns the whole trace that a reduced .ktr of earlier
// versions of kairos reduce (representatives and their ranklists) stands
// for, and any other trace as it is. (Reductions are .rsd files now, which
// are read as the whole trace directly.)
func expandReduced(path string, src trace.Source) (trace.Source, error) {
	if !cluster.IsReduced(src) {
		return src, nil
	}
	whole, err := cluster.FromReduced(src)
	if err != nil {
		return nil, naming(path, err)
	}
	return whole, nil
}

// A TI trace is parsed ahead by worker goroutines (trace.Prefetch), in
// chunks of readAheadBudget bytes shared among the ranks (two chunks a
// rank), from readAheadMin to readAheadMax bytes each: the replay takes
// its turns among all the ranks, and chunks that fit in a core's cache
// together spare it misses (1 KiB chunks rather than 4 KiB at 1,024 ranks
// made the analytic replay of the stencil 10% faster, 512 bytes rather
// than 1 KiB 5 to 9% at 4,096; at 64 ranks, 1 KiB chunks were 5% slower
// than 4 KiB, the chunks changing hands more often; BENCHMARKS.md). At
// 16,384 ranks, reading ahead costs 15 to 20% more memory and saves 5 to
// 15% of the time. With the other changes of 2026-11-25, the analytic
// replay of the stencils became 17% faster at 64 ranks, 18% at 256, 29% at
// 1,024 and 16% at 4,096. Check, classify and predict gain too; a verb
// reading one rank after another (stats, patterns, convert) has no parse
// to overlap and runs twice as slow read ahead, so it is not. Beyond
// readAheadRanks, the chunks' 2 KiB a rank (2 GB at a million ranks)
// would outweigh the rest of a replay's memory, so neither is a trace of
// more ranks.
const (
	readAheadBudget = 1 << 20
	readAheadMin    = 512
	readAheadMax    = 4096
	readAheadRanks  = 1 << 16
)

// readAhead returns src (of format name) read ahead where that pays:
// parsing text is up to a third of a replay's work, and TI readers share
// nothing they change.
func readAhead(src trace.Source, name string) trace.Source {
	if name != "ti" || src.NumRanks() > readAheadRanks {
		return src
	}
	n := max(src.NumRanks(), 1)
	return trace.Prefetch(src, min(max(readAheadBudget/n, readAheadMin), readAheadMax))
}

// writeOutput writes what fn writes to path ("-" or "" for stdout),
// atomically.
func writeOutput(cmd *cobra.Command, path string, fn func(w io.Writer) error) error {
	if path == "" || path == "-" {
		return fn(cmd.OutOrStdout())
	}
	return fileio.WriteFile(path, fn)
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
