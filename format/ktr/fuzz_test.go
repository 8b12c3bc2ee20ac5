package ktr

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"kairos/trace"
)

// absurdTrace holds events whose amounts the reader refuses.
func absurdTrace() *trace.Trace {
	t := trace.New(1, trace.NewMeta())
	for _, e := range []trace.Event{
		{Kind: trace.Compute, Compute: -1e6, Partner: trace.NoRank, Source: trace.NoRank},
		{Kind: trace.Sleep, Compute: math.Inf(1), Partner: trace.NoRank, Source: trace.NoRank},
		{Kind: trace.Send, SendBytes: -1020, Partner: 0, Source: trace.NoRank},
	} {
		t.Ranks[0].Append(&e)
	}
	return t
}

// FuzzOpen reads arbitrary bytes as a ktr file. It must never panic,
// every error must be a located corruption error, and a file that reads
// must survive a write and read back unchanged. Its seeds are files of
// this version (their structure in both forms, past version 2's 256
// distinct events) and of versions 1 and 2. Every rank read by
// NextDistinct (trace.DistinctReader) gives the same events and error.
func FuzzOpen(f *testing.F) {
	seeds := []struct {
		src trace.Source
		o   Options
	}{
		{allFields(), Options{}},
		{allFields(), Options{ChunkSize: 48}},
		{stencil(2, 1, 3, true), Options{ChunkSize: 256}},
		{oneSided(), Options{ChunkSize: 32}},
		{trace.New(0, trace.NewMeta()), Options{}},
		{trace.New(2, trace.NewMeta()), Options{}},
		// Issue 43: many ranks claimed and empty, amounts that mean
		// nothing under valid checksums.
		{trace.New(20_000, trace.NewMeta()), Options{}},
		{absurdTrace(), Options{}},
		{stencil(2, 2, 20, true), Options{}},
		{distinctSends(300, 40, 0), Options{}},
		{shiftedTimes(), Options{ChunkSize: 4096, Fastest: true}},
	}
	for _, s := range seeds {
		data, err := os.ReadFile(writeTemp(f, s.src, s.o))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, old := range []string{"testdata/v1.ktr", "testdata/v2.ktr"} {
		data, err := os.ReadFile(old)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.ktr")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Open(path)
		var tr *trace.Trace
		if err == nil {
			tr, err = trace.Load(src)
			dtr, derr := trace.Load(distinctSource{src})
			if fmt.Sprint(derr) != fmt.Sprint(err) {
				t.Fatalf("read by NextDistinct: %v; by Next: %v", derr, err)
			}
			if err == nil {
				sameTrace(t, dtr, tr)
			}
			if terr := sameThin(src, tr); (terr == nil) != (err == nil) || terr != nil && !errors.Is(terr, ErrCorrupt) {
				t.Fatalf("read skimmed with SkipUnreplayed: %v; whole: %v", terr, err)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %q is not a corruption error", err)
			}
			return
		}
		again := filepath.Join(dir, "again.ktr")
		if err := Write(again, tr); err != nil {
			t.Fatalf("rewriting a file that read: %v", err)
		}
		back, err := Open(again)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		sameTrace(t, back, src)
	})
}

// FuzzPayload decodes arbitrary bytes as a chunk's decompressed payload of
// version 4, both structure forms and both time layouts: it must never panic, and it stops at
// an error or the payload's end; a reader whose distinct events are
// pooled (partners relative to its rank) reads the same events and
// errors as one whose are its own, and so does one that decodes for a
// trace.DistinctReader, its events made whole from their distinct events.
// Its seeds are the payloads of traces whose chunks take each form.
func FuzzPayload(f *testing.F) {
	for _, tr := range []*trace.Trace{repeatedFields(6), allFields(), stencil(2, 2, 10, true), oneSided(), distinctSends(300, 40, 0), shiftedTimes()} {
		for r := range tr.NumRanks() {
			var w payloadWriter
			rd, _ := tr.OpenRank(r)
			for rd.Next() {
				w.add(rd.Event())
			}
			raw, shifted := w.appendTo(nil, nil)
			f.Add(raw)
			if shifted != nil {
				f.Add(shifted)
			}
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var r, pooled, dist payloadReader
		r.forms, r.layouts, r.maxTmpl = true, true, maxTemplates
		pooled.forms, pooled.layouts, pooled.maxTmpl, pooled.pool, pooled.rank = true, true, maxTemplates, new(templatePool), 3
		dist = pooled
		dist.pool = new(templatePool)
		err, perr, derr := r.reset(slices.Clone(p)), pooled.reset(slices.Clone(p)), dist.reset(slices.Clone(p))
		if (err == nil) != (perr == nil) || (err == nil) != (derr == nil) {
			t.Fatalf("reset: %v, pooled %v, distinct %v", err, perr, derr)
		}
		if err != nil {
			return
		}
		var e, pe, de, whole trace.Event
		for i := 0; ; i++ {
			ok, err := r.next(&e)
			pok, perr := pooled.next(&pe)
			id, dok, derr := dist.decode(&de, true)
			if ok != pok || (err == nil) != (perr == nil) || ok != dok || fmt.Sprint(err) != fmt.Sprint(derr) {
				t.Fatalf("event %d: %v, %v; pooled %v, %v; distinct %v, %v", i, ok, err, pok, perr, dok, derr)
			}
			if !ok || err != nil {
				return
			}
			if !sameEvent(&e, &pe) {
				t.Fatalf("event %d: %+v; pooled %+v", i, e, pe)
			}
			whole = de
			if id >= 0 {
				dist.distinct(&whole, id)
				whole.Compute, whole.HasTime, whole.Enter, whole.Exit, whole.Request = de.Compute, de.HasTime, de.Enter, de.Exit, de.Request
			}
			if !sameEvent(&whole, &pe) {
				t.Fatalf("event %d by its distinct event %d: %+v; whole %+v", i, id, whole, pe)
			}
		}
	})
}

// distinctSource reads a Source's ranks by NextDistinct (a
// trace.DistinctReader's), each event made whole from its distinct event
// and its values.
type distinctSource struct{ trace.Source }

func (s distinctSource) OpenRank(r int) (trace.Reader, error) {
	rd, err := s.Source.OpenRank(r)
	if err != nil {
		return nil, err
	}
	return &distinctReader{DistinctReader: rd.(trace.DistinctReader)}, nil
}

type distinctReader struct {
	trace.DistinctReader
	ev trace.Event
}

func (r *distinctReader) Next() bool {
	id, _, ok := r.NextDistinct()
	if !ok {
		return false
	}
	v := r.DistinctReader.Event()
	if id < 0 {
		r.ev = *v
		return true
	}
	r.ev = *r.Distinct(id)
	if r.ev.Kind != v.Kind {
		panic(fmt.Sprintf("distinct event of kind %v, the event's %v", r.ev.Kind, v.Kind))
	}
	r.ev.Compute, r.ev.HasTime, r.ev.Enter, r.ev.Exit, r.ev.Request = v.Compute, v.HasTime, v.Enter, v.Exit, v.Request
	return true
}

func (r *distinctReader) Event() *trace.Event { return &r.ev }
