package sim

import (
	"testing"

	"kairos/platform"
)

// TestProfileDatesRoundAsSimGrid: a repeating profile's dates are summed
// as SimGrid's Profile::next sums them, the loop delay added to the first
// event's delay before that is added to the date. Summed the other way,
// the l1-bw.txt profile of the link-profile tests ("0.00137 30000000",
// "0.00311 125000000", PERIODICITY 0.0047) reaches its 7th period's first
// event at 0.03427 instead of SimGrid's 0.034269999999999995, and an event
// of another resource at 0.03427 would no longer come after it.
func TestProfileDatesRoundAsSimGrid(t *testing.T) {
	p, err := platform.ParseProfile("0.00137 30000000\n0.00311 125000000\nPERIODICITY 0.0047\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	ps := profileState{p: p, date: p.Events[0].Delay}
	for i := 0; i < 2*7; i++ {
		ps.pop()
	}
	if want := 0.034269999999999995; ps.date != want {
		t.Errorf("first event of the 7th period at %.18g, want SimGrid's %.18g", ps.date, want)
	}
}
