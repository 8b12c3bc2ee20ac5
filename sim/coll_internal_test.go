package sim

import (
	"reflect"
	"testing"

	"kairos/trace"
)

// TestCollStateReset: reset leaves every field of a collective's state
// (the call's included) at its zero value, its slices empty: a field
// added to collState or collCall and not to reset fails here.
func TestCollStateReset(t *testing.T) {
	var st collState
	fill(t, reflect.ValueOf(&st).Elem())
	st.reset()
	checkReset(t, "collState", reflect.ValueOf(st))
}

// fill sets every field of struct v to a value other than its zero.
func fill(t *testing.T, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem() // unexported fields too
		switch f.Kind() {
		case reflect.Struct:
			fill(t, f)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(1)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(1)
		case reflect.Float64:
			f.SetFloat(1)
		default:
			t.Fatalf("%s.%s: a field of kind %s the test cannot fill", v.Type(), v.Type().Field(i).Name, f.Kind())
		}
	}
}

// checkReset reports the fields of struct v that are not zero (slices:
// not empty).
func checkReset(t *testing.T, path string, v reflect.Value) {
	for i := range v.NumField() {
		f, name := v.Field(i), path+"."+v.Type().Field(i).Name
		switch {
		case f.Kind() == reflect.Struct:
			checkReset(t, name, f)
		case f.Kind() == reflect.Slice:
			if f.Len() != 0 {
				t.Errorf("%s: %d elements left by reset", name, f.Len())
			}
		case !f.IsZero():
			t.Errorf("%s: not reset", name)
		}
	}
}

// TestPickMemo: pick answers from its memo only for the algorithm the
// memo holds, so that a run whose selector changes a kind's algorithm
// between calls (Open MPI's rules, by size) gets each call's own.
func TestPickMemo(t *testing.T) {
	var m pickMemo
	for _, c := range []struct{ algo, want string }{
		{"", "default"}, {"rdb", "rdb"}, {"rdb", "rdb"}, {"", "default"}, {"lr", "lr"}, {"rab_rdb", "rab_rdb"},
	} {
		got, tag, err := pick(&m, allreduceAlgos, c.algo, "default", tagAllreduce)
		if err != nil || tag != tagAllreduce {
			t.Fatalf("pick(%q): tag %d, %v", c.algo, tag, err)
		}
		if want := allreduceAlgos[c.want]; len(got) != len(want) || (len(want) > 0 && &got[0] != &want[0]) {
			t.Errorf("pick(%q) after %q: not the table's %q", c.algo, m.algo, c.want)
		}
	}
	if _, _, err := pick(&m, allreduceAlgos, "nonesuch", "default", tagAllreduce); err == nil {
		t.Error("unknown algorithm accepted")
	}
	if got, _, _ := pick(&m, allreduceAlgos, "rab_rdb", "default", tagAllreduce); &got[0] != &allreduceAlgos["rab_rdb"][0] {
		t.Error("an unknown algorithm spoilt the memo")
	}
}

// TestCollMemoBounded: a memo gives up a call of more operations than
// memoMaxOps, and keepable refuses counts longer than that, so that what
// the ranks keep grows with their number, not its square.
func TestCollMemoBounded(t *testing.T) {
	e := trace.NewEvent(trace.Allreduce)
	e.SendBytes = 8
	var st collState
	var m collMemo
	m.record(&e, &st, [2]bool{})
	st.ops = make([]collOp, memoMaxOps/2)
	m.phase(&st)
	m.phase(&st)
	if !m.recording || len(m.phases) != 2 {
		t.Fatalf("%d operations: recording %v, %d phases kept", memoMaxOps, m.recording, len(m.phases))
	}
	st.ops = st.ops[:1]
	m.phase(&st)
	if m.recording || len(m.phases) != 0 {
		t.Errorf("%d operations: recording %v, %d phases kept; want given up", memoMaxOps+1, m.recording, len(m.phases))
	}
	v := trace.NewEvent(trace.Alltoallv)
	v.SendCounts, v.RecvCounts = make([]int64, memoMaxOps), make([]int64, memoMaxOps)
	if !keepable(&v) {
		t.Errorf("counts of %d elements refused", memoMaxOps)
	}
	v.RecvCounts = make([]int64, memoMaxOps+1)
	if keepable(&v) {
		t.Errorf("counts of %d elements kept", memoMaxOps+1)
	}
}

// TestRootOnlyCounts: a gatherv's receive counts and a scatterv's send
// counts are the root's alone (sst-dumpi records none elsewhere): members
// without them replay as with zeros, in both engines; the root still
// needs one count a member.
func TestRootOnlyCounts(t *testing.T) {
	counts := []int64{800, 1600, 2400, 3200}
	build := func(k trace.Kind, elsewhere []int64, rootCounts []int64) *trace.Trace {
		tr := trace.New(4, trace.NewMeta())
		for r := range 4 {
			e := trace.NewEvent(k)
			e.Partner = 0
			v := elsewhere
			if r == 0 {
				v = rootCounts
			}
			if k == trace.Gatherv {
				e.SendBytes, e.RecvCounts = counts[r], v
			} else {
				e.RecvBytes, e.SendCounts = counts[r], v
			}
			tr.Ranks[r].Append(&e)
		}
		return tr
	}
	for _, k := range []trace.Kind{trace.Gatherv, trace.Scatterv} {
		for _, analytic := range []bool{false, true} {
			cfg := DefaultConfig()
			cfg.Analytic = analytic
			want, err := Run(build(k, make([]int64, 4), counts), flatMachine(t, 4), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(build(k, nil, counts), flatMachine(t, 4), cfg, nil)
			if err != nil || got.Time != want.Time {
				t.Errorf("%s (analytic %v) without counts at the members: %v, %v s; with zeros %v s", k, analytic, err, got, want.Time)
			}
			if _, err := Run(build(k, nil, nil), flatMachine(t, 4), cfg, nil); err == nil {
				t.Errorf("%s (analytic %v): a root without counts replayed", k, analytic)
			}
		}
	}
}
