package trace

import (
	"reflect"
	"testing"
)

// TestEventEqualEveryField changes each field of an event in turn: Equal
// must see every change, so that a field added to Event and not to Equal
// fails here.
func TestEventEqualEveryField(t *testing.T) {
	base := Event{Kind: Isend, Partner: 3, Tag: 7, SendBytes: 64, Request: 9, Enter: 10, Exit: 20, HasTime: true,
		SendCounts: []int64{1, 2}, RecvCounts: []int64{3}, Requests: []uint64{4}, Compute: 1.5}
	if c := base.Clone(); !base.Equal(&c) {
		t.Fatal("an event differs from its clone")
	}
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		c := base.Clone()
		f := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
			f.SetInt(f.Int() + 1)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
			f.SetUint(f.Uint() + 1)
		case reflect.Float64:
			f.SetFloat(f.Float() + 1)
		case reflect.Slice:
			f.Set(reflect.Append(f, f.Index(0)))
		default:
			t.Fatalf("field %s: kind %s not covered by the test", v.Type().Field(i).Name, f.Kind())
		}
		if base.Equal(&c) {
			t.Errorf("field %s changed, Equal still reports the same event", v.Type().Field(i).Name)
		}
	}
}

func TestSameReplay(t *testing.T) {
	mk := func(edit func(tr *Trace, e *Event)) *Trace {
		meta := NewMeta()
		meta.Comms = []Comm{{ID: 1, Members: []int32{0, 1}}}
		tr := New(2, meta)
		for r := range 2 {
			for i := range 3 {
				e := NewEvent(Send)
				e.Partner, e.SendBytes, e.Enter, e.Exit, e.HasTime = int32(1-r), int64(8*i), Time(i), Time(i+1), true
				if r == 1 && i == 2 {
					edit(tr, &e)
				}
				tr.Ranks[r].Append(&e)
			}
		}
		return tr
	}
	same := mk(func(*Trace, *Event) {})
	for _, c := range []struct {
		name string
		edit func(tr *Trace, e *Event)
		want bool
	}{
		{"identical", func(*Trace, *Event) {}, true},
		{"a time", func(_ *Trace, e *Event) { e.Exit++ }, false},
		{"a size", func(_ *Trace, e *Event) { e.SendBytes++ }, false},
		{"a communicator", func(tr *Trace, _ *Event) { tr.Meta().Comms[0].Members[1] = 0 }, false},
		{"the default datatype", func(tr *Trace, _ *Event) { tr.Meta().DefaultType = TypeDouble }, false},
		{"a region's name (not replayed)", func(tr *Trace, _ *Event) { tr.Meta().AddRegion("main", 0) }, true},
	} {
		got, err := SameReplay(same, mk(c.edit))
		if err != nil || got != c.want {
			t.Errorf("%s: SameReplay = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	short := mk(func(*Trace, *Event) {})
	short.Ranks[1] = Rank{}
	if got, err := SameReplay(same, short); got || err != nil {
		t.Errorf("a rank without events: SameReplay = %v, %v; want false", got, err)
	}
}
