package otf2

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kairos/format/scorep"
	"kairos/trace"
)

// rankWriter writes one rank's events as a location's event file: each
// MPI call an Enter and a Leave of its MPI function's region with the MPI
// records between, the call path's user regions entered and left around
// them.
type rankWriter struct {
	w    *archiveWriter
	c    *chunkWriter
	rank int32
	rec  enc // the record being made
	// recStart is where the payload of the record begin started begins.
	recStart int

	stack []uint32 // model region nodes entered, outermost first
	path  []uint32 // scratch: the path of the next call
	main  uint32   // region "main" (wrapMain)
	begun bool     // a timed event has been written
	last  uint64   // the last timestamp written

	// pend holds the requests started and not completed yet; order
	// keeps them in the order they started (a Waitall of every
	// outstanding request completes them so), its entries of completed
	// or restarted requests skipped by their sequence number.
	pend  map[uint64]pending
	order []pendingRef
	seq   uint64
	// rma holds the one-sided transfers without a request not completed
	// yet, by matching id, the next of which is rmaMatchBase+rmaSeq+1.
	rma    map[uint64]rmaOut
	rmaSeq uint64
	ioSeq  uint64 // the matching ids of blocking I/O operations
}

// pending is a started request: an Isend's, an Irecv's with what its
// completion's record names, a request-based one-sided transfer's, or a
// non-blocking I/O operation's.
type pending struct {
	seq  uint64
	recv bool
	rma  bool
	io   bool
	peer uint32
	comm uint32 // an Irecv's communicator, a transfer's window, an I/O operation's handle
	tag  uint32
	size uint64
}

// pendingRef is an entry of rankWriter.order: a request, and the
// sequence number of its start.
type pendingRef struct {
	req, seq uint64
}

// writeRank writes rank r's event file and its (empty) local definitions
// in dir.
func (w *archiveWriter) writeRank(dir string, r int) (err error) {
	name := filepath.Join(dir, strconv.Itoa(r))
	if err := os.WriteFile(name+".def", emptyLocalDefs(), 0o644); err != nil {
		return err
	}
	f, err := os.Create(name + ".evt")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	rw := &rankWriter{w: w, c: newChunkWriter(f, eventChunkSize, true, w.chunk), rank: int32(r), pend: map[uint64]pending{}, rma: map[uint64]rmaOut{}}
	if err := rw.events(r); err != nil {
		return fmt.Errorf("rank %d: %w", r, err)
	}
	w.events[r], w.chunk = rw.c.n, rw.c.buf
	return rw.c.close()
}

// emptyLocalDefs returns a location's local definitions file without
// definitions (no mapping table, no clock offset), as libotf2 writes it.
func emptyLocalDefs() []byte {
	c := chunkWriter{buf: make([]byte, 0, chunkHeaderSize+2)}
	c.start() // records 1 to 0: none
	return append(c.buf, endOfFile, endOfBuffer)
}

// events writes every event of rank r.
func (rw *rankWriter) events(r int) (err error) {
	rd, err := rw.w.src.OpenRank(r)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rd.Close(); err == nil {
			err = cerr
		}
	}()
	for i := 1; rd.Next(); i++ {
		if err := rw.event(rd.Event()); err != nil {
			return fmt.Errorf("event %d (%s): %w", i, rd.Event().String(), err)
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	return rw.finish()
}

// event writes one event: an MPI call with its records, nothing for
// computation and markers (the time between calls is the computation).
func (rw *rankWriter) event(e *trace.Event) error {
	if !e.Kind.IsMPI() {
		return nil
	}
	if !e.HasTime {
		return errUntimed
	}
	enter, exit := uint64(e.Enter), uint64(e.Exit)
	rw.w.end = max(rw.w.end, exit, enter)
	user, name := rw.w.callOf(e)
	if err := rw.moveTo(user, enter); err != nil {
		return err
	}
	if e.Kind == trace.Deferred && name == flushName {
		return rw.bufferFlush(enter, exit)
	}
	region := rw.w.region(name, true)
	if err := rw.singleton(EvEnter, enter, uint64(region)); err != nil {
		return err
	}
	if err := rw.records(e, name, enter, exit); err != nil {
		return err
	}
	return rw.singleton(EvLeave, exit, uint64(region))
}

// finish leaves the regions still entered, at the last timestamp.
func (rw *rankWriter) finish() error {
	if err := rw.leaveTo(0, rw.last); err != nil {
		return err
	}
	if rw.begun && rw.w.wrapMain {
		return rw.singleton(EvLeave, rw.last, uint64(rw.main))
	}
	return nil
}

// moveTo leaves and enters user regions at time t so that the regions
// entered are the call path of model region node user.
func (rw *rankWriter) moveTo(user uint32, t uint64) error {
	if !rw.begun {
		rw.begun = true
		if rw.w.wrapMain {
			rw.main = rw.w.region("main", false)
			if err := rw.singleton(EvEnter, t, uint64(rw.main)); err != nil {
				return err
			}
		}
	}
	regions := rw.w.meta.Regions
	rw.path = rw.path[:0]
	for n := user; n != 0 && int(n) < len(regions) && len(rw.path) < len(regions); n = regions[n].Parent {
		rw.path = append(rw.path, n)
	}
	p := rw.path
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	common := 0
	for common < len(p) && common < len(rw.stack) && p[common] == rw.stack[common] {
		common++
	}
	if err := rw.leaveTo(common, t); err != nil {
		return err
	}
	for _, n := range p[common:] {
		if err := rw.singleton(EvEnter, t, uint64(rw.w.userRegion(n))); err != nil {
			return err
		}
		rw.stack = append(rw.stack, n)
	}
	return nil
}

// leaveTo leaves the user regions entered beyond the first depth ones.
func (rw *rankWriter) leaveTo(depth int, t uint64) error {
	for len(rw.stack) > depth {
		n := rw.stack[len(rw.stack)-1]
		if err := rw.singleton(EvLeave, t, uint64(rw.w.userRegion(n))); err != nil {
			return err
		}
		rw.stack = rw.stack[:len(rw.stack)-1]
	}
	return nil
}

// records writes the MPI records of event e, a call of MPI function name
// from enter to exit: a message's when it is sent at the call's start,
// a receive's or a completion's at its end, as Score-P has them.
func (rw *rankWriter) records(e *trace.Event, name string, enter, exit uint64) error {
	w := rw.w
	switch k := e.Kind; {
	case k == trace.Send || k == trace.Isend || k == trace.SendRecv:
		typ := uint8(EvMpiSend)
		if k == trace.Isend {
			typ = EvMpiIsend
			rw.start(e.Request, pending{})
		}
		if err := rw.message(typ, enter, e.Comm, e.Partner, e.Tag, e.SendBytes, e.Request); err != nil || k != trace.SendRecv {
			return err
		}
		return rw.message(EvMpiRecv, exit, e.Comm, e.Source, e.Tag, e.RecvBytes, 0)
	case k == trace.Recv:
		return rw.message(EvMpiRecv, exit, e.Comm, e.Partner, e.Tag, e.RecvBytes, 0)
	case k == trace.Irecv:
		if e.RecvBytes < 0 {
			return errProbeFirst
		}
		oc, err := w.otf2Comm(e.Comm)
		if err != nil {
			return err
		}
		rw.start(e.Request, pending{recv: true, peer: w.commRank(e.Comm, e.Partner), comm: oc, tag: uint32(e.Tag), size: uint64(e.RecvBytes)})
		return rw.singleton(EvMpiIrecvRequest, enter, e.Request)
	case k == trace.Wait:
		return rw.complete(e.Request, exit)
	case k == trace.Waitall:
		return rw.completeAll(e.Requests, exit)
	case k == trace.Test:
		if _, ok := rw.pend[e.Request]; ok {
			return rw.singleton(EvMpiRequestTest, exit, e.Request)
		}
	case k.IsCollective() && k <= trace.Exscan:
		return rw.collective(e, enter, exit)
	case k.IsWindow():
		return rw.oneSided(e, enter, exit)
	case k.IsIO():
		return rw.io(e, name, enter, exit)
	case k == trace.Deferred && !readsDeferred(name):
		// A call whose name does not say it is a deferred one: a test
		// of no request says so, as Kairos' tracer writes a test that
		// completes nothing.
		return rw.singleton(EvMpiRequestTest, exit, undefined64)
	}
	return nil
}

// errProbeFirst is the error of a receive of the size of the message it
// matches, which OTF2 cannot say.
var errProbeFirst = errors.New("a receive of the matching message's size (RecvBytes < 0, SimGrid's probe-first form): OTF2 records every message's length")

// readsDeferred reports whether the reader reads a call of MPI function
// name without records as a deferred call.
func readsDeferred(name string) bool {
	c := classOf(name)
	return c.kind == trace.Deferred || c.test || c.wait
}

// message writes a point-to-point record of type typ (MpiSend, MpiIsend,
// MpiRecv) to or from world rank peer.
func (rw *rankWriter) message(typ uint8, t uint64, comm uint32, peer, tag int32, size int64, req uint64) error {
	if size < 0 {
		return errProbeFirst
	}
	oc, err := rw.w.otf2Comm(comm)
	if err != nil {
		return err
	}
	e := rw.begin(typ)
	e.u32(rw.w.commRank(comm, peer))
	e.u32(oc)
	e.u32(uint32(tag))
	e.u64(uint64(size))
	if typ == EvMpiIsend || typ == EvMpiIrecv {
		e.u64(req)
	}
	return rw.end(t)
}

// otf2Comm returns the OTF2 communicator of model communicator id.
func (w *archiveWriter) otf2Comm(id uint32) (uint32, error) {
	if c, ok := w.comms[id]; ok {
		w.used[id] = true
		return c, nil
	}
	return 0, fmt.Errorf("communicator %d is not one of the trace's (Meta.Comms)", id)
}

// start notes request req as started.
func (rw *rankWriter) start(req uint64, p pending) {
	rw.seq++
	p.seq = rw.seq
	rw.pend[req] = p
	rw.order = append(rw.order, pendingRef{req, p.seq})
}

// complete writes the completion of request req, if it is outstanding:
// an Isend's MpiIsendComplete, an Irecv's MpiIrecv with its sender, tag
// and size.
func (rw *rankWriter) complete(req, t uint64) error {
	p, ok := rw.pend[req]
	if !ok {
		return nil
	}
	delete(rw.pend, req)
	switch {
	case p.rma:
		return rw.rmaDone(EvRmaOpCompleteNonBlocking, t, p.comm, req)
	case p.io:
		return rw.ioDone(t, p.comm, p.size, req)
	}
	if !p.recv {
		return rw.singleton(EvMpiIsendComplete, t, req)
	}
	e := rw.begin(EvMpiIrecv)
	e.u32(p.peer)
	e.u32(p.comm)
	e.u32(p.tag)
	e.u64(p.size)
	e.u64(req)
	return rw.end(t)
}

// completeAll completes reqs, or, if nil, every outstanding request in
// the order they started.
func (rw *rankWriter) completeAll(reqs []uint64, t uint64) error {
	if reqs != nil {
		for _, r := range reqs {
			if err := rw.complete(r, t); err != nil {
				return err
			}
		}
		rw.compact()
		return nil
	}
	for _, ref := range rw.order {
		if p, ok := rw.pend[ref.req]; ok && p.seq == ref.seq {
			if err := rw.complete(ref.req, t); err != nil {
				return err
			}
		}
	}
	rw.order = rw.order[:0]
	return nil
}

// compact drops the completed requests from order once they are most
// of it, so that it keeps the size of the outstanding requests.
func (rw *rankWriter) compact() {
	if len(rw.order) < 64 || len(rw.order) < 2*len(rw.pend) {
		return
	}
	kept := rw.order[:0]
	for _, ref := range rw.order {
		if p, ok := rw.pend[ref.req]; ok && p.seq == ref.seq {
			kept = append(kept, ref)
		}
	}
	rw.order = kept
}

// kindOps are the CollectiveOps of the model's collectives.
var kindOps = func() map[trace.Kind]uint8 {
	ops := map[trace.Kind]uint8{}
	for op, k := range collectiveKinds {
		if _, ok := ops[k]; !ok {
			ops[k] = uint8(op)
		}
	}
	return ops
}()

// collective writes a collective's records: MpiCollectiveBegin and End
// around a blocking one; a non-blocking one's request and completion
// (NonBlockingCollectiveRequest and Complete) in the call that
// completes it, as the model reads it. The bytes are the ones Score-P
// counts (counted); a v-collective's count vectors go in Kairos'
// tracer's attributes.
func (rw *rankWriter) collective(e *trace.Event, enter, exit uint64) error {
	w := rw.w
	oc, err := w.otf2Comm(e.Comm)
	if err != nil {
		return err
	}
	n := w.sizes[e.Comm]
	me := int(w.commRank(e.Comm, rw.rank))
	root := uint32(undefined32)
	if e.Kind.IsRooted() {
		root = w.commRank(e.Comm, e.Partner)
	}
	sent, recv := counted(e, me, n, e.Partner == rw.rank)
	if e.Request != 0 {
		if err := rw.u64Record(EvNonBlockingCollectiveRequest, enter, e.Request); err != nil {
			return err
		}
	} else if err := rw.u64Record(EvMpiCollectiveBegin, enter, undefined64); err != nil {
		return err
	}
	typ := uint8(EvMpiCollectiveEnd)
	if e.Request != 0 {
		typ = EvNonBlockingCollectiveComplete
	}
	rec := rw.begin(typ)
	rec.u8(kindOps[e.Kind])
	rec.u32(oc)
	rec.u32(root)
	rec.u64(uint64(sent))
	rec.u64(uint64(recv))
	if e.Request != 0 {
		rec.u64(e.Request)
	}
	return rw.endWith(exit, rw.attrList(e, sent, recv, me, n))
}

// attrList returns the attribute list of collective e (nil if it needs
// none), which counted sent and recv bytes at member me of n: a
// v-collective's count vectors, as Kairos' tracer writes them (the bytes
// to or from each member, space-separated, a string definition); the
// volumes, where the reader would not get them back from those bytes
// (volumeAttrs).
func (rw *rankWriter) attrList(e *trace.Event, sent, recv int64, me, n int) []byte {
	w := rw.w
	var a enc
	start := a.begin(attrListRec)
	count := len(a.b)
	a.u8(1) // the number of attributes, compressed: one byte, set below
	a.u8(0)
	num := 0
	for _, v := range [...]struct {
		name   string
		counts []int64
	}{{attrSendCounts, e.SendCounts}, {attrRecvCounts, e.RecvCounts}} {
		if v.counts != nil {
			a.u32(w.attr(v.name, typeString))
			a.u8(typeString)
			a.u32(w.str(formatCounts(v.counts)))
			num++
		}
	}
	if s, r := readVolumes(e, sent, recv, me, n, e.Partner == rw.rank); s != e.SendBytes || r != e.RecvBytes {
		for _, v := range [...]struct {
			name  string
			bytes int64
		}{{attrSentBytes, e.SendBytes}, {attrRecvdBytes, e.RecvBytes}} {
			a.u32(w.attr(v.name, typeUint64))
			a.u8(typeUint64)
			a.u64(uint64(v.bytes))
			num++
		}
	}
	if num == 0 {
		return nil
	}
	a.b[count+1] = byte(num)
	a.end(start)
	return a.b
}

// readVolumes returns the volumes the reader makes of collective e's
// counted bytes (Source.collective).
func readVolumes(e *trace.Event, sent, recv int64, me, n int, root bool) (int64, int64) {
	if e.Kind == trace.Barrier {
		return 0, 0
	}
	if e.Kind != trace.Scan && e.Kind != trace.Exscan {
		me = -1
	}
	return scorep.Volumes(e.Kind, scorep.Counted{Sent: sent, Recv: recv, Root: root, Me: me, N: n})
}

// formatCounts returns a count vector as the attribute's string holds it.
func formatCounts(v []int64) string {
	var b strings.Builder
	for i, c := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(c, 10))
	}
	return b.String()
}

// bufferFlush writes a BufferFlush record, the time the tracer took to
// write its buffer, which the reader reads as a deferred call named
// flushName.
func (rw *rankWriter) bufferFlush(start, stop uint64) error {
	e := rw.begin(EvBufferFlush)
	e.u64full(stop)
	return rw.end(start)
}

// singleton writes a record of one compressed field and no length
// (Enter, Leave, the request records).
func (rw *rankWriter) singleton(typ uint8, t, v uint64) error {
	rw.rec.reset()
	rw.rec.u8(typ)
	rw.rec.u64(v)
	return rw.put(t, rw.rec.b)
}

// u64Record writes a record of type typ with a length and, unless v is
// undefined64, one compressed field v (MpiCollectiveBegin has none).
func (rw *rankWriter) u64Record(typ uint8, t, v uint64) error {
	e := rw.begin(typ)
	if v != undefined64 {
		e.u64(v)
	}
	return rw.end(t)
}

// begin starts a record of type typ with a length.
func (rw *rankWriter) begin(typ uint8) *enc {
	rw.rec.reset()
	rw.recStart = rw.rec.begin(typ)
	return &rw.rec
}

// end sets the length of the record begin started and writes it at t.
func (rw *rankWriter) end(t uint64) error { return rw.endWith(t, nil) }

// endWith is end with the record's attribute list attrs (nil if none).
func (rw *rankWriter) endWith(t uint64, attrs []byte) error {
	rw.rec.end(rw.recStart)
	if attrs != nil {
		rw.rec.b = append(attrs, rw.rec.b...)
	}
	return rw.put(t, rw.rec.b)
}

// put writes record rec at time t.
func (rw *rankWriter) put(t uint64, rec []byte) error {
	rw.last = t
	return rw.c.record(t, rec)
}
