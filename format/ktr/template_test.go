package ktr

import (
	"reflect"
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
			pr := payloadReader{tmplVecs: vecs}
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
