package prsd

import (
	"math/rand/v2"
	"testing"

	"kairos/trace"
)

// sizedSource gives each rank's events perEvent bytes (trace.Sizer), as
// a ktr file's index does; 0: it does not know them.
type sizedSource struct {
	*countingSource
	perEvent int64
}

func (s *sizedSource) RankBytes(r int) int64 {
	if s.perEvent == 0 {
		return -1
	}
	return s.perEvent * s.RankEvents(r)
}

func (s *sizedSource) RankEvents(r int) int64 { return trace.RankEvents(s.countingSource.Source, r) }

// pollingTrace is a rank that polls calls times, one call site, in one
// loop: the first noisy polls' tags and durations drawn at random, the
// others' the same.
func pollingTrace(calls, noisy int) *trace.Trace {
	tr := trace.New(1, trace.Meta{})
	rng := rand.New(rand.NewPCG(3, 4))
	var at trace.Time
	for i := range calls {
		e := trace.NewEvent(trace.Iprobe)
		e.CallSite, e.Partner, e.Tag = 1, 0, 7
		gap, dur := trace.Time(1000), trace.Time(50_000)
		if i < noisy {
			e.Tag = int32(rng.IntN(1 << 20))
			gap, dur = trace.Time(rng.IntN(1e6)), trace.Time(rng.IntN(1e8))
		}
		e.HasTime, e.Enter, e.Exit = true, at+gap, at+gap+dur
		at = e.Exit
		tr.Ranks[0].Append(&e)
	}
	return tr
}

// TestOutgrows: a rank whose calls fold into one loop whose parameters
// and times never repeat (a polling loop's) is given up at the first
// check, its series outgrowing its events' bytes (about 6.8 bytes a
// poll), or at the first past an eighth of the rank, its series taking
// more than half their bytes at both checks (10 bytes an event): its
// cluster keeps its events (settled as Outgrown) and the rank is read no
// further; a rank whose loop pays, one whose events take many bytes, one
// whose first polls are noisy and the rest regular, and one of a source
// that does not know its bytes are read to the end and keep their loops.
func TestOutgrows(t *testing.T) {
	const calls = 8 * minPayCalls
	cases := []struct {
		name     string
		noisy    int   // the noisy polls, the first
		perEvent int64 // the events' bytes in the file, each
		givenUp  int   // the calls after which the folding is given up, 0 none
	}{
		{"noisy, 1 byte an event", calls, 1, minPayCalls},
		{"noisy, 10 bytes an event", calls, 10, 2 * minPayCalls},
		{"noisy, 64 bytes an event", calls, 64, 0},
		{"noisy first, 10 bytes an event", minPayCalls + minPayCalls/8, 10, 0},
		{"regular, 1 byte an event", 0, 1, 0},
		{"noisy, bytes unknown", calls, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := pollingTrace(calls, tc.noisy)
			src := &sizedSource{&countingSource{Source: tr}, tc.perEvent}
			var settled []*Settling
			opt := DefaultOptions()
			opt.LoopsPay = 2
			opt.Settle = func(s *Settling) ([]byte, error) {
				settled = append(settled, s)
				if s.Outgrown {
					return []byte("events"), nil
				}
				return nil, nil
			}
			got, err := Build(src, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			cl := got.Clusters[0]
			givenUp := tc.givenUp > 0
			if events := cl.Events != nil; events != givenUp || events == (cl.Items != nil) {
				t.Errorf("%d items, events %v; want events %v", len(cl.Items), cl.Events != nil, givenUp)
			}
			if len(settled) != 1 || settled[0].Outgrown != givenUp || givenUp && (settled[0].Items != nil || len(settled[0].Members) != 1) {
				t.Errorf("settled %d times, want once, Outgrown %v", len(settled), givenUp)
			}
			// A call goes in as the next event is read: the check at the
			// n-th call stops after n+1 events; and before the fold,
			// foldsLittleAhead stops where the calls fold well, after
			// aheadWell+1 (one loop).
			want := calls
			if givenUp {
				want = tc.givenUp + 1
			}
			want += int(aheadWell) + 1
			if n := src.read[0]; n != want {
				t.Errorf("%d events read, want %d", n, want)
			}
			if !givenUp {
				if err := Verify(tr, got); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
