package check_test

import (
	"fmt"

	"kairos/check"
	"kairos/trace"
)

// Two ranks each send 1 MiB to the other before receiving: fine where
// sends are buffered, a deadlock where they wait for their receive.
func ExampleCheck() {
	t := trace.New(2, trace.NewMeta())
	for r := range int32(2) {
		send := trace.NewEvent(trace.Send)
		send.Partner, send.SendBytes = 1-r, 1<<20
		recv := trace.NewEvent(trace.Recv)
		recv.Partner, recv.RecvBytes = 1-r, 1<<20
		t.Ranks[r].Append(&send)
		t.Ranks[r].Append(&recv)
	}
	for _, p := range []check.Protocol{check.Eager, check.Rendezvous} {
		rep, err := check.Check(t, check.Options{Protocol: p})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: ok=%v\n", p, rep.OK())
		for _, pr := range rep.Problems {
			fmt.Println(pr)
		}
	}
	// Output:
	// eager: ok=true
	// rendezvous: ok=false
	// rank 0 event 0: deadlock under rendezvous: send waits for rank 1 to receive its 1048576-byte message (tag 0)
	// rank 1 event 0: deadlock under rendezvous: send waits for rank 0 to receive its 1048576-byte message (tag 0)
}
