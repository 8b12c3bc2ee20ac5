package ktr

import (
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"kairos/trace"
)

// TestTemplate: a distinct event held as a template copies back to the
// structure event it was decoded from, every field and vector (nil and
// empty apart), in one cache line; an event whose Compute is an amount,
// not a placeholder, is refused.
func TestTemplate(t *testing.T) {
	if n := unsafe.Sizeof(template{}); n > 64 {
		t.Errorf("a template takes %d bytes, more than a cache line", n)
	}
	// copyTemplate sets an Event field by field, each of its 22.
	if n := reflect.TypeFor[trace.Event]().NumField(); n != 22 {
		t.Errorf("trace.Event has %d fields: set each in copyTemplate, then change this count", n)
	}
	tr := allFields()
	for r := range tr.NumRanks() {
		evs, err := events(tr, r)
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			var w payloadWriter
			w.add(&evs[i])
			want := w.ev // the structure event, as the writer encodes it
			var tp template
			var vecs []templateVectors
			if !setTemplate(&tp, &want, &vecs) {
				t.Fatalf("rank %d event %d (%v): refused", r, i, want.Kind)
			}
			// As the rank's reader holds it, its partners relative.
			tp.relativeTo(int32(r))
			pr := payloadReader{tmplVecs: vecs, rank: int32(r)}
			var got trace.Event
			pr.copyTemplate(&got, &tp)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rank %d event %d:\n got %+v\nwant %+v", r, i, got, want)
			}
		}
	}
	for _, e := range []trace.Event{
		{Kind: trace.Compute, Compute: 3.5},
		{Kind: trace.Compute, Compute: computeFloat + 1},
		{Kind: trace.Compute, Compute: -computeInt},
	} {
		var tp template
		var vecs []templateVectors
		if setTemplate(&tp, &e, &vecs) {
			t.Errorf("%+v: taken as a template", e)
		}
	}
}

// TestTemplatePool: chunks' distinct events that are equal get one index
// in their generation, those with vectors one each; a chunk that does not
// fit what is left of a generation starts the next, twice as large, and
// the generation a reader was given keeps its events.
func TestTemplatePool(t *testing.T) {
	ev := func(tag int32) template { return template{kind: trace.Send, partner: 1, tag: tag} }
	vec := template{kind: trace.Waitall, vectors: 1}
	var p templatePool
	chunk := func(ts ...template) ([]uint16, []template) {
		idx := make([]uint16, len(ts))
		gen := p.intern(idx, ts)
		for i, j := range idx {
			if gen[j] != ts[i] {
				t.Fatalf("event %d at index %d: %+v, expected %+v", i, j, gen[j], ts[i])
			}
		}
		return idx, gen
	}
	a, g1 := chunk(ev(1), ev(2), vec)
	b, _ := chunk(ev(2), vec, ev(1), ev(3))
	if want := []uint16{0, 1, 2}; !slices.Equal(a, want) {
		t.Errorf("first chunk's indexes %v, expected %v", a, want)
	}
	// ev(2) and ev(1) pooled; vec, with its chunk's vectors, added again.
	if want := []uint16{1, 3, 0, 4}; !slices.Equal(b, want) {
		t.Errorf("second chunk's indexes %v, expected %v", b, want)
	}
	if len(g1) != minGeneration {
		t.Errorf("first generation of %d events, expected %d", len(g1), minGeneration)
	}
	// A chunk past what is left: the next generation, twice as large.
	many := make([]template, minGeneration-4)
	for i := range many {
		many[i] = ev(int32(100 + i))
	}
	_, g2 := chunk(many...)
	if len(g2) != 2*minGeneration || &g2[0] == &g1[0] {
		t.Errorf("a chunk past the first generation: a generation of %d events, expected a new one of %d", len(g2), 2*minGeneration)
	}
	if g1[0] != ev(1) || g1[4] != ev(3) {
		t.Errorf("the first generation changed: %+v, %+v", g1[0], g1[4])
	}
	// Past maxGeneration, generations stop growing.
	big := make([]template, maxTemplates)
	for round := 0; len(p.gen) < maxGeneration; round++ {
		for i := range big {
			big[i] = ev(int32(round*maxTemplates + i))
		}
		chunk(big...)
	}
	for i := range big {
		big[i] = vec // none pooled
	}
	for range 2 * maxGeneration / maxTemplates {
		chunk(big...)
	}
	if len(p.gen) != maxGeneration {
		t.Errorf("generation of %d events, expected at most %d", len(p.gen), maxGeneration)
	}
}

// TestTemplatePoolCollisions: events whose hashes collide are not taken
// for each other.
func TestTemplatePoolCollisions(t *testing.T) {
	defer func(h func(*template) uint64) { hashTemplate = h }(hashTemplate)
	hashTemplate = func(*template) uint64 { return 7 }
	var p templatePool
	ts := []template{{kind: trace.Send, tag: 1}, {kind: trace.Send, tag: 2}, {kind: trace.Send, tag: 1}}
	idx := make([]uint16, len(ts))
	gen := p.intern(idx, ts)
	for i, j := range idx {
		if gen[j] != ts[i] {
			t.Errorf("event %d at index %d: %+v, expected %+v", i, j, gen[j], ts[i])
		}
	}
	if idx[2] != idx[0] {
		t.Errorf("indexes %v: the first event not pooled", idx)
	}
}
