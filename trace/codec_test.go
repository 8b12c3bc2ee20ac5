package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func sampleEvents() []Event {
	ev := func(k Kind, f func(*Event)) Event {
		e := NewEvent(k)
		if f != nil {
			f(&e)
		}
		return e
	}
	return []Event{
		ev(Init, nil),
		ev(Compute, func(e *Event) { e.Compute = 1e9 }),
		ev(Compute, func(e *Event) { e.Compute = 1.5 }),
		ev(Compute, func(e *Event) { e.Compute = -3 }),
		ev(Isend, func(e *Event) { e.Partner, e.Tag, e.SendBytes, e.Request = 3, 7, 1024, 1 }),
		ev(Irecv, func(e *Event) { e.Partner, e.Tag, e.RecvBytes, e.Request, e.Comm = 0, AnyTag, 8, 2, 4 }),
		ev(Wait, func(e *Event) { e.Request, e.Partner = 2, 0 }),
		ev(Waitall, func(e *Event) { e.Requests = []uint64{} }),
		ev(Waitall, func(e *Event) { e.Requests = []uint64{1, 1 << 40} }),
		ev(Alltoallv, func(e *Event) {
			e.SendBytes, e.RecvBytes = 48, 48
			e.SendCounts, e.RecvCounts = []int64{0, 8, 16, 24}, []int64{24, 16, 8, 0}
			e.SendType, e.RecvType = TypeInt, TypeDouble
		}),
		ev(Bcast, func(e *Event) {
			e.Partner, e.SendBytes, e.HasTime, e.Enter, e.Exit = 2, 100, true, 5000, 9000
			e.CallSite, e.Region = 0xdeadbeefcafe, 3
		}),
		ev(Recv, func(e *Event) {
			e.Partner, e.RecvBytes, e.HasTime, e.Enter, e.Exit = AnySource, -1, true, 8000, 8000
			e.CallSite, e.Region = 0xdeadbeefcafe, 0
		}),
		ev(SendRecv, func(e *Event) { e.Partner, e.Source, e.SendBytes, e.RecvBytes = 1, 0, math.MaxInt64, math.MinInt64 }),
		ev(CommSplit, func(e *Event) { e.NewComm = 9 }),
		ev(Sleep, func(e *Event) { e.Compute = math.Inf(1) }),
		ev(WinCreate, func(e *Event) { e.Handle, e.Comm, e.SendBytes = 3, 4, 1<<20 }),
		ev(Put, func(e *Event) { e.Handle, e.Partner, e.SendBytes, e.Request = 3, 1, 8192, 5 }),
		ev(WinLock, func(e *Event) { e.Handle, e.Partner, e.Tag = 3, 1, LockExclusive }),
		ev(WinPost, func(e *Event) { e.Handle, e.NewComm = 3, 2 }),
		ev(FileWrite, func(e *Event) { e.Handle, e.SendBytes, e.Tag, e.Compute = 1<<31, 4096, IOCollective, 0.25 }),
	}
}

func TestCodecRoundTrip(t *testing.T) {
	var r Rank
	in := sampleEvents()
	for i := range in {
		r.Append(&in[i])
	}
	rd := r.Reader()
	i := 0
	for rd.Next() {
		got := rd.Event().Clone()
		if !reflect.DeepEqual(got, in[i]) {
			t.Errorf("event %d: got %+v, want %+v", i, got, in[i])
		}
		i++
	}
	if rd.Err() != nil || i != len(in) {
		t.Fatalf("decoded %d of %d events, err %v", i, len(in), rd.Err())
	}
}

// TestCodecHandleBit pins the wire position of Event.Handle: mask bit 18,
// as docs/ktr-format.md says; bit 17 is a reduction's operation, and an
// unknown one is refused.
func TestCodecHandleBit(t *testing.T) {
	e := NewEvent(WinFree)
	e.Handle = 5
	b := AppendEvent(nil, &e, &CodecState{})
	want := append([]byte{byte(WinFree)}, binary.AppendUvarint(nil, 1<<18)...)
	want = append(want, 5)
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded % x, want % x", b, want)
	}
	bad := append([]byte{byte(Allreduce)}, binary.AppendUvarint(nil, 1<<17)...)
	bad = append(bad, 99)
	var got Event
	if _, err := DecodeEvent(bad, &got, &CodecState{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("mask bit 17, operation 99: err %v, want a corruption error", err)
	}
}

func TestCodecTruncated(t *testing.T) {
	var r Rank
	in := sampleEvents()
	for i := range in {
		r.Append(&in[i])
	}
	for cut := 0; cut < len(r.data); cut++ {
		rd := NewRankReader(r.data[:cut])
		for rd.Next() {
		}
		// Any prefix either decodes cleanly up to an event boundary or
		// reports corruption; it never panics.
		_ = rd.Err()
	}
}

func FuzzDecodeEvent(f *testing.F) {
	var r Rank
	in := sampleEvents()
	for i := range in {
		r.Append(&in[i])
	}
	f.Add(r.data)
	f.Add([]byte{byte(Waitall), 0x80, 0x80, 0x01, 0xff})
	// Issue 43: amounts the readers refuse (the codec carries them).
	var bad Rank
	for _, e := range []Event{
		{Kind: Compute, Compute: -1e6, Partner: NoRank, Source: NoRank},
		{Kind: Sleep, Compute: math.Inf(1), Partner: NoRank, Source: NoRank},
		{Kind: Recv, RecvBytes: -1020, Partner: 0, Source: NoRank},
		{Kind: Send, SendBytes: -1, Partner: 0, Source: NoRank},
	} {
		bad.Append(&e)
	}
	f.Add(bad.data)
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewRankReader(data)
		var re Rank
		for rd.Next() {
			re.Append(rd.Event())
		}
		if rd.Err() != nil {
			return
		}
		// What decodes cleanly re-encodes to a stream that decodes to the
		// same events.
		a, b := NewRankReader(data), re.Reader()
		for a.Next() {
			if !b.Next() {
				t.Fatal("re-encoded stream is shorter")
			}
			ea, eb := a.Event().Clone(), b.Event().Clone()
			if math.IsNaN(ea.Compute) && math.IsNaN(eb.Compute) {
				ea.Compute, eb.Compute = 0, 0
			}
			if !reflect.DeepEqual(ea, eb) {
				t.Fatalf("re-encoded event differs: %+v vs %+v", ea, eb)
			}
		}
		// Read ahead in small chunks (records and codec bytes mixed),
		// the same events come out.
		tr := New(1, NewMeta())
		tr.Ranks[0] = re
		ahead, err := Prefetch(tr, 64).OpenRank(0)
		if err != nil {
			t.Fatal(err)
		}
		defer ahead.Close()
		for c := re.Reader(); c.Next(); {
			if !ahead.Next() {
				t.Fatalf("read ahead: shorter: %v", ahead.Err())
			}
			ea, eb := c.Event().Clone(), ahead.Event().Clone()
			if math.IsNaN(ea.Compute) && math.IsNaN(eb.Compute) {
				ea.Compute, eb.Compute = 0, 0
			}
			if !reflect.DeepEqual(ea, eb) {
				t.Fatalf("read ahead: %+v, want %+v", eb, ea)
			}
		}
		if ahead.Next() || ahead.Err() != nil {
			t.Fatalf("read ahead: longer, or error %v", ahead.Err())
		}
	})
}

func TestKindNames(t *testing.T) {
	for k := Kind(1); k < numKinds; k++ {
		if got, ok := KindByName(k.String()); !ok || got != k {
			t.Errorf("KindByName(%q) = %v, %v", k.String(), got, ok)
		}
	}
}

// TestCodecSkimRequests: a reader told to skip the requests (Skim) gives
// every other field as the full decoding does, Request 0 and Requests nil.
func TestCodecSkimRequests(t *testing.T) {
	var r Rank
	in := sampleEvents()
	for i := range in {
		r.Append(&in[i])
	}
	rd := r.Reader()
	Skim(rd, SkipRequests)
	i := 0
	for rd.Next() {
		want := in[i].Clone()
		want.Request, want.Requests = 0, nil
		if got := rd.Event().Clone(); !reflect.DeepEqual(got, want) {
			t.Errorf("event %d: got %+v, want %+v", i, got, want)
		}
		i++
	}
	if rd.Err() != nil || i != len(in) {
		t.Fatalf("decoded %d of %d events, err %v", i, len(in), rd.Err())
	}
}

// TestDecodeEventErrors: a malformed event is refused with what was wrong
// and the byte of the event where it was.
func TestDecodeEventErrors(t *testing.T) {
	varintOf := func(v int64) []byte { return binary.AppendVarint(nil, v) }
	uvarintOf := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	send := []byte{byte(Send)}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "byte 0: truncated"},
		{"no mask", send, "byte 1: truncated"},
		{"truncated partner", cat(send, uvarintOf(fPartner), []byte{0x80}), "byte 2: truncated"},
		{"overlong tag", cat(send, uvarintOf(fTag), bytes.Repeat([]byte{0xff}, 10), []byte{1}), "byte 2: truncated, or an overlong varint"},
		{"wide partner", cat(send, uvarintOf(fPartner), varintOf(1<<40)), "byte 2: value 1099511627776 does not fit 32 bits"},
		{"wide comm", cat(send, uvarintOf(fTag|fComm), varintOf(3), uvarintOf(1<<33)), "byte 3: value 8589934592 does not fit 32 bits"},
		{"call-site index", cat(send, uvarintOf(fCallSite), uvarintOf(2)), "byte 3: call-site index out of range"},
		{"operation", cat([]byte{byte(Allreduce)}, uvarintOf(fOp), []byte{200}), "byte 4: unknown reduction operation"},
		{"count", cat([]byte{byte(Waitall)}, uvarintOf(fRequests), uvarintOf(5), []byte{1}), "byte 4: count 5 exceeds"},
		{"short raw compute", cat([]byte{byte(Compute)}, uvarintOf(fComputeRaw), []byte{1, 2}), "byte 3: truncated"},
		{"kind", []byte{0, 0}, "unknown kind 0"},
		{"mask", cat(send, uvarintOf(1<<30)), "unknown field mask"},
	}
	for _, tc := range tests {
		var e Event
		_, err := DecodeEvent(tc.in, &e, &CodecState{})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrCorrupt saying %q", tc.name, err, tc.want)
		}
	}
}

// TestSameEvent: changing any one field of an event makes it another
// event with another hash (a field added to Event and forgotten by
// SameEvent or HashEvent fails here), a nil vector is not an empty one,
// and equal events are the same with the same hash.
func TestSameEvent(t *testing.T) {
	base := NewEvent(Send)
	h := HashEvent(&base)
	if again := base.Clone(); !SameEvent(&again, &base) || HashEvent(&again) != h {
		t.Fatal("equal events: not the same, or different hashes")
	}
	differs := func(name, what string, e *Event, than *Event) {
		t.Helper()
		if SameEvent(e, than) || SameEvent(than, e) {
			t.Errorf("%s: %s, the same event", name, what)
		}
		if HashEvent(e) == HashEvent(than) {
			t.Errorf("%s: %s, the same hash", name, what)
		}
	}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		e := base
		f := reflect.ValueOf(&e).Elem().Field(i)
		name := typ.Field(i).Name
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int8, reflect.Int32, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Uint8, reflect.Uint32, reflect.Uint64:
			f.SetUint(f.Uint() + 1)
		case reflect.Float64:
			f.SetFloat(1)
		case reflect.Slice:
			// nil becomes empty, then empty gets an element.
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
			differs(name, "empty against none", &e, &base)
			empty := e
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			differs(name, "one element against none", &e, &empty)
		default:
			t.Fatalf("%s: a field of kind %s the test does not change", name, f.Kind())
		}
		differs(name, "changed", &e, &base)
	}
	neg := base
	neg.Compute = math.Copysign(0, -1)
	differs("Compute", "-0 against 0", &neg, &base)
}

// TestAppendSame encodes random streams of a few distinct events, which
// vary in what the codec's state decides (call sites and regions the
// sticky ones or not, sites new to the stream, request and time bases),
// with AppendEvent and with AppendSame keeping each distinct event's
// encoding: the same bytes and the same state after every event, in a
// second stream too (its encodings forgotten).
func TestAppendSame(t *testing.T) {
	pool := sampleEvents()
	for i, site := range []uint64{0, 0xabc, 0xdeadbeefcafe, 7} {
		for _, region := range []uint32{0, 3} {
			e := NewEvent(Isend)
			e.Partner, e.SendBytes, e.CallSite, e.Region = int32(i), 64, site, region
			e.Request = uint64(i % 2) // 0, or 1 as a .ktr's structure events
			pool = append(pool, e)
			timed := e
			timed.Request, timed.HasTime, timed.Enter, timed.Exit = 1, true, 0, Time(i)
			pool = append(pool, timed)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cache := make([]Encoded, len(pool))
	for stream := range 3 {
		var plain, same CodecState
		var want, got []byte
		for i := range cache {
			cache[i].Forget()
		}
		for n := range 2000 {
			k := rng.IntN(len(pool))
			if n%7 < 3 { // runs of a few events, as iterations repeat
				k = n % 5
			}
			want = AppendEvent(want, &pool[k], &plain)
			got = same.AppendSame(got, &pool[k], &cache[k])
			if !bytes.Equal(got, want) {
				t.Fatalf("stream %d, event %d (%d): %x, AppendEvent %x", stream, n, k, got[len(got)-min(len(got), 32):], want[len(want)-min(len(want), 32):])
			}
			if !reflect.DeepEqual(same, plain) {
				t.Fatalf("stream %d, event %d (%d): state %+v, AppendEvent's %+v", stream, n, k, same, plain)
			}
		}
	}
}
