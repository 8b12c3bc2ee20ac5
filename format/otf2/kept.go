package otf2

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/s2"

	"kairos/trace"
)

// keptFrame is about the bytes of encoded events the scan compresses as
// one frame of a kept rank: a rank being read holds one frame decoded, so
// that a replay of 1,024 ranks from kept events holds 64 MB of them.
const keptFrame = 64 << 10

// keptBuf encodes the events of a rank the scan keeps in the event codec
// (trace.AppendEvent), one stream cut between two events into frames of
// about keptFrame bytes, each compressed with S2: a polling program's
// events (HPCC's millions of MPI_Testany) take 40% of their codec's
// bytes, 4.1 an event (a stencil's 2.7). Its room is reused from one rank
// to the next.
type keptBuf struct {
	st      trace.CodecState
	raw     []byte // the frame being encoded
	out     []byte // the frames before it: each its length, then its S2 block
	scratch []byte // room for a frame's block
}

// reset empties b for another rank's events.
func (b *keptBuf) reset() {
	b.st, b.raw, b.out = trace.CodecState{}, b.raw[:0], b.out[:0]
}

// add encodes e.
func (b *keptBuf) add(e *trace.Event) {
	b.raw = trace.AppendEvent(b.raw, e, &b.st)
	if len(b.raw) >= keptFrame {
		b.seal()
	}
}

// seal compresses the frame being encoded, if any, into out.
func (b *keptBuf) seal() {
	if len(b.raw) == 0 {
		return
	}
	if n := s2.MaxEncodedLen(len(b.raw)); cap(b.scratch) < n {
		b.scratch = make([]byte, n)
	}
	block := s2.Encode(b.scratch[:cap(b.scratch)], b.raw)
	b.out = binary.AppendUvarint(b.out, uint64(len(block)))
	b.out = append(b.out, block...)
	b.raw = b.raw[:0]
}

// size is the bytes b holds: its frames and the one being encoded.
func (b *keptBuf) size() int { return len(b.out) + len(b.raw) }

// keptEvents reads a rank's kept frames (keptBuf.out), decoding one
// frame at a time into a buffer of its own.
type keptEvents struct {
	*trace.RankReader
	frames []byte // those not read yet
	buf    []byte
	err    error
}

func newKeptEvents(frames []byte) *keptEvents {
	return &keptEvents{RankReader: trace.NewRankReader(nil), frames: frames}
}

// Next decodes the next event, from the next frame where the one read is
// done.
func (k *keptEvents) Next() bool {
	for !k.RankReader.Next() {
		if k.RankReader.Err() != nil || k.err != nil || len(k.frames) == 0 {
			return false
		}
		k.err = k.nextFrame()
	}
	return true
}

// nextFrame decodes the next frame for the events' reader.
func (k *keptEvents) nextFrame() error {
	n, w := binary.Uvarint(k.frames)
	if w <= 0 || n > uint64(len(k.frames)-w) {
		return fmt.Errorf("kept events: a frame's length is damaged")
	}
	block := k.frames[w : w+int(n)]
	k.frames = k.frames[w+int(n):]
	buf, err := s2.Decode(k.buf[:cap(k.buf)], block)
	if err != nil {
		return fmt.Errorf("kept events: %w", err)
	}
	k.buf = buf
	k.RankReader.Continue(buf)
	return nil
}

// Err returns the first error met.
func (k *keptEvents) Err() error {
	if k.err != nil {
		return k.err
	}
	return k.RankReader.Err()
}

// keptReader decodes rank r's kept events, renumbered as its scan's view
// was merged, the count vectors of its v-collectives derived from the
// members' totals as a read of the records derives them (the scan spread
// them evenly and marked each with its place in the rank's index,
// rankIndex.derived: Handle, 1 for the first), and its fixes made: the
// events a read fills or voids from what the scan learnt after them.
type keptReader struct {
	*keptEvents
	ids   *renumbering
	src   *Source
	r     int
	at    int       // the next event's place
	fixes []keptFix // those not made yet, by place
}

func (k *keptReader) Next() bool {
	if !k.keptEvents.Next() {
		return false
	}
	e := k.Event()
	k.ids.event(e)
	if d := k.src.idx[k.r].derived; e.Handle != 0 && int(e.Handle) <= len(d) && countedByVectors(e.Kind) {
		n := d[e.Handle-1]
		e.Handle = 0
		spread := [2][]int64{e.SendCounts, e.RecvCounts}
		e.SendCounts, e.RecvCounts = nil, nil
		if !k.src.vt.derive(e, int32(k.r), n.seq, n.me) {
			e.SendCounts, e.RecvCounts = spread[0], spread[1]
		}
	}
	for len(k.fixes) > 0 && k.fixes[0].at == k.at {
		k.fix(e, k.fixes[0])
		k.fixes = k.fixes[1:]
	}
	k.at++
	return true
}

// fix makes e what a read after the scan gives: an isend cancelled after
// its call, or a held-back event released before its completion, void
// (a deferred call) or filled, named by its call's node.
func (k *keptReader) fix(e *trace.Event, f keptFix) {
	switch {
	case f.cancel:
		voided(e)
	case !k.src.idx[k.r].fill(e, f.ord) && e.Kind == trace.Irecv: // never completed (giveUp)
		voided(e)
	}
	named(e, k.ids.node(f.node))
}
