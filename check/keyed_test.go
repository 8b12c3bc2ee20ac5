package check

import (
	"testing"

	"kairos/trace"
)

// keyed returns a wait or test of a TI trace: it names its request by
// SimGrid's (source, destination, tag) key, its id being the reader's
// guess.
func keyed(k trace.Kind, src, dst, tag int32) trace.Event {
	return ev(k, func(e *trace.Event) { e.Source, e.Partner, e.Tag, e.Request = src, dst, tag, 99 })
}

// TestKeyedRequests follows SimGrid's request storage: a test that
// completes its request leaves a null request at the end of the key's
// queue, which the next wait or test of the key pops and does nothing
// with.
func TestKeyedRequests(t *testing.T) {
	kt := func(src, dst, tag int32) trace.Event { return keyed(trace.Test, src, dst, tag) }
	kw := func(src, dst, tag int32) trace.Event { return keyed(trace.Wait, src, dst, tag) }
	runCases(t, []checkCase{
		{name: "a test completes an eager send", ranks: [][]trace.Event{
			{isend(1, 5, 8, 1), kt(0, 1, 5)},
			{recv(0, 5, 8)},
		}},
		{name: "a wait after the test that completed pops its null", ranks: [][]trace.Event{
			{isend(1, 5, 8, 1), kt(0, 1, 5), kw(0, 1, 5)},
			{recv(0, 5, 8)},
		}},
		{name: "tests of a program that tests each send once", ranks: [][]trace.Event{
			{isend(1, 5, 8, 1), kt(0, 1, 5), kt(0, 1, 5), isend(1, 5, 8, 2), kt(0, 1, 5)},
			{recv(0, 5, 8), recv(0, 5, 8)},
		}},
		{name: "the next test pops the null, not the next send", ranks: [][]trace.Event{
			{isend(1, 5, 8, 1), kt(0, 1, 5), isend(1, 5, 8, 2), kt(0, 1, 5)},
			{recv(0, 5, 8), recv(0, 5, 8)},
		}, want: []string{"rank 0 event 2: warning: request 2 (isend to 1 tag 5) is never completed by a wait"}},
		{name: "a pending receive goes back, tested", ranks: [][]trace.Event{
			{irecv(1, 5, 8, 1), kt(1, 0, 5)},
			{compute(1), send(0, 5, 8)},
		}},
		{name: "other keys are apart", ranks: [][]trace.Event{
			{isend(1, 5, 8, 1), isend(1, 6, 8, 2), kt(0, 1, 6), kw(0, 1, 5)},
			{recv(0, 5, 8), recv(0, 6, 8)},
		}},
		{name: "a waitall empties the storage", ranks: [][]trace.Event{
			{isend(1, 5, 8, 1), kt(0, 1, 5), waitall(), kw(0, 1, 5)},
			{recv(0, 5, 8)},
		}, want: []string{"rank 0 event 3: wait of 0 to 1 tag 5 with no request outstanding (SimGrid's replay aborts)"}},
		{name: "a wait with nothing stored", ranks: [][]trace.Event{
			{kw(1, 0, 5)},
		}, want: []string{"rank 0 event 0: wait of 1 to 0 tag 5 with no request outstanding (SimGrid's replay aborts)"}},
		{name: "a test with nothing stored does nothing", ranks: [][]trace.Event{
			{kt(1, 0, 5)},
		}},
	})
}

// TestKeyedTestsOfLargeSends: under SimGrid's protocol a send of the
// eager limit or more completes when its receive is posted, so that two
// tests of it may both find it pending and the waits after them one
// request each (murasaki's rank 0: check said SimGrid's replay aborts,
// and smpirun replayed the trace); the static pass, whose sends complete
// at once, then only warns that the wait may find nothing. A send below
// the limit completes at once in SimGrid too: the error stays. A wait
// that finds no request under the test's key takes the one the replay
// may have more: a later wait that finds nothing is an error again (it
// stayed a warning for the rest of the rank).
func TestKeyedTestsOfLargeSends(t *testing.T) {
	kt := func() trace.Event { return keyed(trace.Test, 0, 1, 0) }
	kw := func() trace.Event { return keyed(trace.Wait, 0, 1, 0) }
	ranks := func(first int64) [][]trace.Event {
		return [][]trace.Event{
			{isend(1, 0, first, 1), kt(), kt(), isend(1, 0, 4, 2), kw(), kw()},
			{recv(0, 0, first), recv(0, 0, 4)},
		}
	}
	abort := "rank 0 event 5: wait of 0 to 1 tag 0 with no request outstanding (SimGrid's replay aborts)"
	runCases(t, []checkCase{
		{name: "1 MiB, SimGrid", ranks: ranks(1 << 20), proto: SimGrid, want: []string{
			"rank 0 event 5: warning: wait of 0 to 1 tag 0 may find no request outstanding, where SimGrid's replay aborts: " +
				"whether an earlier test of the rank completes a request there depends on the replay's timing"}},
		{name: "1 MiB, eager", ranks: ranks(1 << 20), proto: Eager, want: []string{abort}},
		{name: "8 bytes, SimGrid", ranks: ranks(8), proto: SimGrid, want: []string{abort}},
		{name: "taken, SimGrid", proto: SimGrid, ranks: [][]trace.Event{
			{isend(1, 0, 1<<20, 1), kt(), kt(), kw(), isend(1, 0, 4, 2), kw(), kw()},
			{recv(0, 0, 1<<20), recv(0, 0, 4)},
		}, want: []string{
			"rank 0 event 6: wait of 0 to 1 tag 0 with no request outstanding (SimGrid's replay aborts)",
			"rank 0 event 3: warning: wait of 0 to 1 tag 0 may find no request outstanding, where SimGrid's replay aborts: " +
				"whether an earlier test of the rank completes a request there depends on the replay's timing"}},
	})
}
