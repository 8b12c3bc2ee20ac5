package sim

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"kairos/trace"
)

// Observers lets several observers watch one simulation.
type Observers []Observer

// Action passes the action to every observer.
func (o Observers) Action(rank int, e *trace.Event, start, end float64) {
	for _, x := range o {
		x.Action(rank, e, start, end)
	}
}

// A Restarter is an Observer that can forget what it has seen, so that a
// simulation may start over (see SolverAuto); others make SolverAuto run
// SimGrid's solver from the start.
type Restarter interface {
	Observer
	Restart()
}

// Restart forgets every observer's actions; it panics unless all are
// Restarters (check with restartable).
func (o Observers) Restart() {
	for _, x := range o {
		x.(Restarter).Restart()
	}
}

// inSimGridOrder is implemented by observers whose output must list
// simultaneous actions in SimGrid's order (the verbose log): SolverAuto
// then uses SimGrid's solver, which keeps it.
type inSimGridOrder interface{ simgridOrder() }

// anyObserver reports whether is holds for obs or, for a list, for one of
// the observers in it (lists nested at any depth).
func anyObserver(obs Observer, is func(Observer) bool) bool {
	if list, ok := obs.(Observers); ok {
		return slices.ContainsFunc(list, func(x Observer) bool { return anyObserver(x, is) })
	}
	return is(obs)
}

// needsSimGridOrder reports whether obs, or one of its observers, lists
// simultaneous actions in SimGrid's order.
func needsSimGridOrder(obs Observer) bool {
	return anyObserver(obs, func(x Observer) bool { _, ok := x.(inSimGridOrder); return ok })
}

// seesMessages reports whether obs, or one of its observers, is a
// MessageObserver other than a list that records them.
func seesMessages(obs Observer) bool {
	return anyObserver(obs, func(x Observer) bool {
		if t, ok := x.(interface{ seesMessages() bool }); ok {
			return t.seesMessages()
		}
		_, ok := x.(MessageObserver)
		return ok
	})
}

// restartable reports whether obs, and every observer in it, can start
// over.
func restartable(obs Observer) bool {
	return !anyObserver(obs, func(x Observer) bool { _, ok := x.(Restarter); return !ok })
}

// Message passes the message to every observer that sees messages.
func (o Observers) Message(m Message) {
	for _, x := range o {
		if mo, ok := x.(MessageObserver); ok {
			mo.Message(m)
		}
	}
}

// TimedTrace records the simulation as a timed trace: every event of the
// input with Enter and Exit set to its simulated start and end, so that
// the pattern analyses and the classifier can read a simulated run as a
// measured one. Its memory grows with the trace (it is the output).
type TimedTrace struct {
	T *trace.Trace
	// Messages are the trace's point-to-point messages, in the order
	// their receivers' actions returned with them, unless NoMessages
	// (a third of a large run's timed trace in memory, which only a
	// Paje trace draws).
	Messages   []Message
	NoMessages bool
}

// NewTimedTrace returns a recorder for a trace of n ranks with meta.
func NewTimedTrace(n int, meta *trace.Meta) *TimedTrace {
	m := *meta
	m.Regions = append([]trace.Region{}, meta.Regions...)
	m.Comms = append([]trace.Comm{}, meta.Comms...)
	m.Attrs = map[string]string{}
	for k, v := range meta.Attrs {
		m.Attrs[k] = v
	}
	m.Attrs["simulated"] = "kairos simulate"
	return &TimedTrace{T: trace.New(n, m)}
}

// Action records one event with its simulated times.
func (t *TimedTrace) Action(rank int, e *trace.Event, start, end float64) {
	ev := *e
	ev.Enter, ev.Exit, ev.HasTime = trace.FromSeconds(start), trace.FromSeconds(end), true
	t.T.Ranks[rank].Append(&ev)
}

// Message records one point-to-point message.
func (t *TimedTrace) Message(m Message) {
	if !t.NoMessages {
		t.Messages = append(t.Messages, m)
	}
}

// seesMessages reports whether t records the messages (seesMessages).
func (t *TimedTrace) seesMessages() bool { return !t.NoMessages }

// Restart forgets the recorded events and messages.
func (t *TimedTrace) Restart() {
	t.T = trace.New(len(t.T.Ranks), *t.T.Meta())
	t.Messages = t.Messages[:0]
}

// Perfetto streams a Chrome / Perfetto trace-event JSON timeline: one
// track per rank, one slice per action (computations included), and a
// flow (an arrow) per message a MessageObserver sees, from the slice of
// the action that sent it to the slice of the receive, wait or waitall
// that returned with it (with Config.TraceInternals, from the date its
// send was posted, inside a collective's slice for its messages). Call
// Close to finish the JSON.
type Perfetto struct {
	w     *bufio.Writer
	first bool
	err   error
	buf   []byte
	// A flow event binds to the slice of its rank open at its timestamp:
	// it is written after that slice, so it waits in held (by rank) until
	// the rank's slices written reach it (lastStart, lastEnd).
	flows     int
	lastStart []float64
	lastEnd   []float64
	held      [][]heldFlow
}

// heldFlow is a flow event waiting for its slice, that of the action
// that began at began, to be written.
type heldFlow struct {
	ph        string
	id        int
	at, began float64
}

// NewPerfetto starts a timeline on w; hosts name the ranks' tracks.
func NewPerfetto(w io.Writer, hosts []string) *Perfetto {
	p := &Perfetto{w: bufio.NewWriterSize(w, 1<<16), first: true,
		lastStart: make([]float64, len(hosts)), lastEnd: make([]float64, len(hosts)), held: make([][]heldFlow, len(hosts))}
	for r := range p.lastStart {
		p.lastStart[r], p.lastEnd[r] = -1, -1
	}
	p.write(`{"displayTimeUnit":"ns","traceEvents":[`)
	for r, h := range hosts {
		p.sep()
		p.write(`{"name":"thread_name","ph":"M","pid":0,"tid":` + strconv.Itoa(r) + `,"args":{"name":` + strconv.Quote("rank "+strconv.Itoa(r)+" @ "+h) + `}}`)
	}
	return p
}

func (p *Perfetto) write(s string) {
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
}

func (p *Perfetto) sep() {
	if !p.first {
		p.write(",\n")
	}
	p.first = false
}

// Action writes one slice (times in microseconds, as the format wants).
func (p *Perfetto) Action(rank int, e *trace.Event, start, end float64) {
	if e.Kind == trace.Init || e.Kind == trace.Finalize {
		return
	}
	p.sep()
	b := p.buf[:0]
	b = append(b, `{"name":`...)
	b = strconv.AppendQuote(b, e.Kind.String())
	b = append(b, `,"cat":`...)
	cat := "mpi"
	if e.Kind == trace.Compute || e.Kind == trace.Sleep {
		cat = "compute"
	}
	b = strconv.AppendQuote(b, cat)
	b = append(b, `,"ph":"X","pid":0,"tid":`...)
	b = strconv.AppendInt(b, int64(rank), 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendFloat(b, start*1e6, 'f', 3, 64)
	b = append(b, `,"dur":`...)
	b = strconv.AppendFloat(b, (end-start)*1e6, 'f', 3, 64)
	b = append(b, `,"args":{"action":`...)
	b = strconv.AppendQuote(b, e.String())
	b = append(b, "}}"...)
	p.buf = b
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
	if rank < len(p.lastStart) {
		p.lastStart[rank], p.lastEnd[rank] = start, end
		kept := p.held[rank][:0]
		for _, f := range p.held[rank] {
			// The action's slice: it began then, and the event, inside
			// it, is not after its end (a zero-length action of the same
			// start is not it).
			if f.began <= start && f.at <= end {
				p.flow(f.ph, f.id, rank, f.at)
			} else {
				kept = append(kept, f)
			}
		}
		p.held[rank] = kept
	}
}

// Message writes a message's flow: its start on the sender's track at
// the start of the sending action's slice, its end on the receiver's at
// the start of the slice of the action that returned with it, the
// slices' category, as the trace viewers bind flows to slices.
func (p *Perfetto) Message(m Message) {
	if m.RecvBegan < 0 || m.Src >= len(p.lastStart) || m.Dst >= len(p.lastStart) {
		return // received by no action of the trace: no slice to bind to
	}
	id := p.flows
	p.flows++
	p.flowOn("s", id, m.Src, m.Sent, m.SentBegan)
	p.flowOn("f", id, m.Dst, m.RecvBegan, m.RecvBegan)
}

// flowOn writes a flow event of rank at its date, once the slice of the
// rank's action that began at began is written: at once if it is, or
// when Action writes it.
func (p *Perfetto) flowOn(ph string, id, rank int, at, began float64) {
	if p.lastStart[rank] >= began && p.lastEnd[rank] >= at {
		p.flow(ph, id, rank, at)
		return
	}
	p.held[rank] = append(p.held[rank], heldFlow{ph, id, at, began})
}

// flow writes one flow event of phase ph ("s" or "f").
func (p *Perfetto) flow(ph string, id, rank int, at float64) {
	p.sep()
	b := p.buf[:0]
	b = append(b, `{"name":"message","cat":"mpi","ph":"`...)
	b = append(b, ph...)
	b = append(b, `","id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	if ph == "f" {
		b = append(b, `,"bp":"e"`...)
	}
	b = append(b, `,"pid":0,"tid":`...)
	b = strconv.AppendInt(b, int64(rank), 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendFloat(b, at*1e6, 'f', 3, 64)
	b = append(b, '}')
	p.buf = b
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
}

// Close ends the JSON document and flushes it.
func (p *Perfetto) Close() error {
	p.write("\n]}\n")
	if p.err != nil {
		return p.err
	}
	return p.w.Flush()
}

// Verbose writes one line per action as SimGrid's verbose replay log does
// (--log=smpi_replay.thresh:verbose): the date the action ended, the rank
// and its host, the action and its duration.
type Verbose struct {
	W     io.Writer
	Hosts []string // per rank
	err   error
}

func (v *Verbose) simgridOrder() {}

// Action writes the line of one action.
func (v *Verbose) Action(rank int, e *trace.Event, start, end float64) {
	if v.err != nil || e.Kind == trace.Init || e.Kind == trace.Finalize {
		return
	}
	h := ""
	if rank < len(v.Hosts) {
		h = v.Hosts[rank]
	}
	_, v.err = fmt.Fprintf(v.W, "[%.6f] (%d@%s) %d %s %.6f\n", end, rank, h, rank, e.String(), end-start)
}

// Err returns the first write error.
func (v *Verbose) Err() error { return v.err }

// WritePaje writes a timed trace (from TimedTrace) as a Paje trace for
// ViTE or pajeng: one container per rank (named after its host), whose
// state is the action in progress, and a link (an arrow) for each of
// msgs (TimedTrace.Messages, nil for none) from its sending action's
// start to its arrival, as SimGrid's -trace draws point-to-point
// messages. Paje wants records in time order, so the actions are sorted
// first: memory grows with the trace.
func WritePaje(w io.Writer, t *trace.Trace, msgs []Message, hosts []string) error {
	// A record is a state change (msg < 0) or a link's start or end; seq
	// keeps records of one date in the order they were listed.
	type rec struct {
		at   trace.Time
		seq  int32
		rank int32
		msg  int32
		kind trace.Kind
		end  bool
	}
	recs := make([]rec, 0, 2*t.NumEvents()+2*len(msgs))
	add := func(x rec) {
		x.seq = int32(len(recs))
		recs = append(recs, x)
	}
	var end trace.Time
	err := trace.ForEach(t, func(r, _ int, e *trace.Event) error {
		if e.HasTime && e.Kind != trace.Init && e.Kind != trace.Finalize {
			add(rec{at: e.Enter, rank: int32(r), msg: -1, kind: e.Kind})
			add(rec{at: e.Exit, rank: int32(r), msg: -1, kind: trace.KindInvalid})
			end = max(end, e.Exit)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, m := range msgs {
		if m.Src < 0 || m.Src >= len(t.Ranks) || m.Dst < 0 || m.Dst >= len(t.Ranks) {
			return fmt.Errorf("sim: message %d from rank %d to rank %d: no such rank", i, m.Src, m.Dst)
		}
		arrived := trace.FromSeconds(m.Arrived)
		add(rec{at: trace.FromSeconds(m.Sent), rank: int32(m.Src), msg: int32(i)})
		add(rec{at: arrived, rank: int32(m.Dst), msg: int32(i), end: true})
		end = max(end, arrived)
	}
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	bw := bufio.NewWriter(w)
	bw.WriteString(pajeHeader)
	bw.WriteString("0 CT_Rank 0 \"Rank\"\n1 ST_Action CT_Rank \"Action\"\n5 LT_Msg 0 CT_Rank CT_Rank \"Message\"\n")
	for r := range t.Ranks {
		name := "rank " + strconv.Itoa(r)
		if r < len(hosts) {
			name += " @ " + hosts[r]
		}
		fmt.Fprintf(bw, "2 0.000000000 R%d CT_Rank 0 %s\n", r, strconv.Quote(name))
	}
	var b []byte
	for _, x := range recs {
		b = b[:0]
		switch {
		case x.msg >= 0:
			// Value: the size and tag; key: unique per message.
			m := &msgs[x.msg]
			b = append(b, "6 "...)
			if x.end {
				b[0] = '7'
			}
			b = strconv.AppendFloat(b, x.at.Seconds(), 'f', 9, 64)
			b = append(b, ` LT_Msg 0 "`...)
			b = strconv.AppendInt(b, m.Bytes, 10)
			b = append(b, " bytes, tag "...)
			b = strconv.AppendInt(b, int64(m.Tag), 10)
			b = append(b, `" R`...)
			b = strconv.AppendInt(b, int64(x.rank), 10)
			b = append(b, " m"...)
			b = strconv.AppendInt(b, int64(x.msg), 10)
		default:
			b = append(b, "3 "...)
			b = strconv.AppendFloat(b, x.at.Seconds(), 'f', 9, 64)
			b = append(b, " ST_Action R"...)
			b = strconv.AppendInt(b, int64(x.rank), 10)
			b = append(b, ' ')
			if x.kind == trace.KindInvalid {
				b = append(b, "idle"...)
			} else {
				b = append(b, x.kind.String()...)
			}
		}
		b = append(b, '\n')
		bw.Write(b)
	}
	for r := range t.Ranks {
		fmt.Fprintf(bw, "4 %.9f CT_Rank R%d\n", end.Seconds(), r)
	}
	return bw.Flush()
}

const pajeHeader = `%EventDef PajeDefineContainerType 0
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineStateType 1
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeCreateContainer 2
%       Time date
%       Alias string
%       Type string
%       Container string
%       Name string
%EndEventDef
%EventDef PajeSetState 3
%       Time date
%       Type string
%       Container string
%       Value string
%EndEventDef
%EventDef PajeDestroyContainer 4
%       Time date
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineLinkType 5
%       Alias string
%       Type string
%       StartContainerType string
%       EndContainerType string
%       Name string
%EndEventDef
%EventDef PajeStartLink 6
%       Time date
%       Type string
%       Container string
%       Value string
%       StartContainer string
%       Key string
%EndEventDef
%EventDef PajeEndLink 7
%       Time date
%       Type string
%       Container string
%       Value string
%       EndContainer string
%       Key string
%EndEventDef
`
