package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"kairos/format"
	"kairos/format/otf2"
	"kairos/trace"
)

func init() { addVerb("print", newPrintCmd) }

func newPrintCmd() *cobra.Command {
	var (
		model, asJSON bool
		out           string
	)
	cmd := &cobra.Command{
		Use:   "print [flags] TRACE",
		Short: "List a trace's events in global order, one line each",
		Long: `Print lists every event of a trace in global order, one stable line per
event, in any format Kairos reads.

Model events (every format; --model for OTF2) print as
  RANK INDEX ENTER EXIT KIND FIELDS [@CALL/PATH]
with ENTER and EXIT in seconds ("-" for untimed traces) and FIELDS as
"peer=1 tag=42 send=1024 req=3" (only those that apply). Timed traces are
merged by enter time (ties by rank); untimed traces are listed rank by rank.

An OTF2 archive (traces.otf2 or its directory) prints by default its raw
event records as "otf2-print -A" prints its event lines: record name,
location, clock-corrected timestamp in ticks and the record's fields with
definitions resolved to names, then the ADDITIONAL ATTRIBUTES line of
events that carry attributes. Only otf2-print's headers are left out, so
the output compares line by line with otf2-print's events section, for
every event record of OTF2 3.0 (records of later versions print as
UNKNOWN with their location and timestamp, as otf2-print 3.0 does).

--json prints one JSON object per event instead.`,
		Example: `  kairos print experiment/traces.otf2
  kairos print --model experiment/          # OTF2 mapped to MPI calls
  kairos print --json -o events.jsonl run.ti
  diff <(kairos print scorep/traces.otf2) <(otf2-print -A scorep/traces.otf2 | sed -n '/^=== Events/,$p' | tail -n +4)`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			f, err := format.Detect(path)
			if err != nil {
				return err
			}
			return writeOutput(cmd, out, func(w io.Writer) error {
				bw := bufio.NewWriterSize(w, 1<<16)
				if f.Name == "otf2" && !model {
					err = printOTF2(bw, path, asJSON)
				} else {
					var src trace.Source
					if src, err = f.Open(path); err == nil {
						noteDefects(cmd.ErrOrStderr(), path, src.Meta())
						err = printModel(bw, src, asJSON)
					}
				}
				if ferr := bw.Flush(); err == nil {
					err = ferr
				}
				return err
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&model, "model", false, "OTF2: print the MPI calls Kairos maps the records to, not the raw records")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object per event")
	fl.StringVarP(&out, "output", "o", "-", "output file (- for standard output)")
	return cmd
}

// noteDefects tells on stderr what a reader reported about the trace:
// OTF2 defects (unbalanced regions, unresolved ranks) and its notes
// (traceNotes: an OTF2 trace without MPI, whose model has no events...).
func noteDefects(w io.Writer, path string, meta *trace.Meta) {
	if d := meta.Attrs["otf2.defects"]; d != "" {
		fmt.Fprintf(w, "kairos print: %s: note: %s\n", path, d)
	}
	for _, k := range traceNotes {
		if v := meta.Attrs[k]; v != "" {
			fmt.Fprintf(w, "kairos print: %s: note: %s\n", path, v)
		}
	}
}

// rawJSON is an OTF2 record in --json form.
type rawJSON struct {
	Record   string  `json:"record"`
	Location uint64  `json:"location"`
	Time     uint64  `json:"time"`
	Seconds  float64 `json:"seconds"`
	Fields   string  `json:"fields,omitempty"`
}

// printOTF2 prints an archive's raw records in otf2-print's global order,
// as otf2-print's event lines or as JSON lines.
func printOTF2(w io.Writer, path string, asJSON bool) error {
	a, err := otf2.OpenArchive(path)
	if err != nil {
		return err
	}
	a.KeepAttrs = true
	if !asJSON {
		return a.WriteText(w)
	}
	m, err := a.Merged()
	if err != nil {
		return err
	}
	defer m.Close()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var buf []byte
	for m.Next() {
		e := m.Event()
		buf = a.AppendText(buf[:0], e)
		line, _, _ := strings.Cut(string(buf), "\n")
		fields := ""
		if len(line) > 71 {
			fields = line[71:]
		}
		if err := enc.Encode(rawJSON{e.Name(), e.Location, e.Time, a.Seconds(e.Time), fields}); err != nil {
			return err
		}
	}
	return m.Err()
}

// modelJSON is a model event in --json form.
type modelJSON struct {
	Rank      int      `json:"rank"`
	Index     int      `json:"index"`
	Kind      string   `json:"kind"`
	Enter     *float64 `json:"enter,omitempty"`
	Exit      *float64 `json:"exit,omitempty"`
	Partner   *int32   `json:"partner,omitempty"`
	Source    *int32   `json:"source,omitempty"`
	Tag       int32    `json:"tag,omitempty"`
	Comm      uint32   `json:"comm,omitempty"`
	NewComm   uint32   `json:"new_comm,omitempty"`
	Handle    uint32   `json:"handle,omitempty"`
	SendBytes int64    `json:"send_bytes,omitempty"`
	RecvBytes int64    `json:"recv_bytes,omitempty"`
	Request   uint64   `json:"request,omitempty"`
	Requests  []uint64 `json:"requests,omitempty"`
	Compute   float64  `json:"compute,omitempty"`
	Region    string   `json:"region,omitempty"`
}

// printModel prints the model events of src, merged by enter time.
func printModel(w *bufio.Writer, src trace.Source, asJSON bool) error {
	mr, err := newRankMerge(src)
	if err != nil {
		return err
	}
	defer mr.close()
	meta := src.Meta()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var buf []byte
	for mr.next() {
		r, i, e := mr.cur()
		path := strings.Join(meta.CallPath(e.Region), "/")
		if asJSON {
			if err := enc.Encode(toJSON(r, i, e, path)); err != nil {
				return err
			}
			continue
		}
		buf = appendModelLine(buf[:0], r, i, e, path)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return mr.err
}

func toJSON(r, i int, e *trace.Event, path string) modelJSON {
	j := modelJSON{Rank: r, Index: i, Kind: e.Kind.String(), Tag: e.Tag, Comm: e.Comm, NewComm: e.NewComm, Handle: e.Handle, SendBytes: e.SendBytes,
		RecvBytes: e.RecvBytes, Request: e.Request, Requests: e.Requests, Compute: e.Compute, Region: path}
	if e.HasTime {
		en, ex := e.Enter.Seconds(), e.Exit.Seconds()
		j.Enter, j.Exit = &en, &ex
	}
	if e.Partner != trace.NoRank {
		p := e.Partner
		j.Partner = &p
	}
	if e.Source != trace.NoRank {
		s := e.Source
		j.Source = &s
	}
	return j
}

func appendSeconds(dst []byte, e *trace.Event, t trace.Time) []byte {
	if !e.HasTime {
		return append(dst, '-')
	}
	return strconv.AppendFloat(dst, t.Seconds(), 'f', 12, 64)
}

// appendModelLine formats one model event: rank, index, enter and exit
// seconds, the event and its call path.
func appendModelLine(dst []byte, r, i int, e *trace.Event, path string) []byte {
	dst = strconv.AppendInt(dst, int64(r), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, ' ')
	dst = appendSeconds(dst, e, e.Enter)
	dst = append(dst, ' ')
	dst = appendSeconds(dst, e, e.Exit)
	dst = append(dst, ' ')
	dst = append(dst, e.String()...)
	if len(e.Requests) > 0 {
		dst = append(dst, " reqs="...)
		for k, q := range e.Requests {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendUint(dst, q, 10)
		}
	}
	if path != "" {
		dst = append(dst, " @"...)
		dst = append(dst, path...)
	}
	return append(dst, '\n')
}

// rankMerge merges the ranks of a Source by event enter time, ties by
// rank; an untimed event keeps its rank's last time, so that untimed
// traces list rank by rank.
type rankMerge struct {
	rd    []trace.Reader
	last  []trace.Time
	index []int
	heap  []int
	top   int
	begun bool
	err   error
}

func newRankMerge(src trace.Source) (*rankMerge, error) {
	n := src.NumRanks()
	m := &rankMerge{rd: make([]trace.Reader, n), last: make([]trace.Time, n), index: make([]int, n), top: -1}
	for r := range m.rd {
		rd, err := src.OpenRank(r)
		if err != nil {
			m.close()
			return nil, err
		}
		m.rd[r] = rd
	}
	return m, nil
}

func (m *rankMerge) key(r int) trace.Time {
	if e := m.rd[r].Event(); e.HasTime {
		m.last[r] = e.Enter
	}
	return m.last[r]
}

func (m *rankMerge) less(a, b int) bool {
	ka, kb := m.last[a], m.last[b]
	return ka < kb || ka == kb && a < b
}

func (m *rankMerge) down(i int) {
	h := m.heap
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && m.less(h[c+1], h[c]) {
			c++
		}
		if !m.less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// advance reads rank r's next event and reports whether it has one.
func (m *rankMerge) advance(r int) bool {
	if m.rd[r].Next() {
		m.key(r)
		return true
	}
	if err := m.rd[r].Err(); err != nil && m.err == nil {
		m.err = fmt.Errorf("rank %d: %w", r, err)
	}
	return false
}

func (m *rankMerge) next() bool {
	if !m.begun {
		m.begun = true
		for r := range m.rd {
			if m.advance(r) {
				m.heap = append(m.heap, r)
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	} else if len(m.heap) > 0 {
		r := m.heap[0]
		m.index[r]++
		if !m.advance(r) {
			m.heap[0] = m.heap[len(m.heap)-1]
			m.heap = m.heap[:len(m.heap)-1]
		}
		m.down(0)
	}
	if m.err != nil || len(m.heap) == 0 {
		return false
	}
	m.top = m.heap[0]
	return true
}

func (m *rankMerge) cur() (int, int, *trace.Event) {
	return m.top, m.index[m.top], m.rd[m.top].Event()
}

func (m *rankMerge) close() {
	for _, rd := range m.rd {
		if rd != nil {
			rd.Close()
		}
	}
}
