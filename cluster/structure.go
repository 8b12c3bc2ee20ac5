package cluster

import (
	"strconv"

	"kairos/prsd"
	"kairos/trace"
)

// Structure returns a rank's MPI calls folded into loops, as ScalaTrace's
// RSDs and power-RSDs hold them: "3×(recv1 2×(send1) barrier1) finalize1",
// a loop written as its iteration count (the least and the most where
// its instances differ) times its body. Calls are named by MPI function,
// numbered by call site in the order they first appear (send1 and send2
// are sends from two places). The text stops after about max bytes, with
// "…", if max is positive.
func Structure(rd trace.Reader, max int) (string, error) {
	shape := prsd.NewShape(nil)
	labels := map[uint64]string{}
	perKind := map[trace.Kind]int{}
	for rd.Next() {
		e := rd.Event()
		if !e.Kind.IsMPI() {
			continue
		}
		site := prsd.StackSignature(e.Kind, e.CallSite)
		if _, ok := labels[site]; !ok {
			perKind[e.Kind]++
			labels[site] = e.Kind.String() + strconv.Itoa(perKind[e.Kind])
		}
		shape.Add(e)
	}
	if err := rd.Err(); err != nil {
		return "", err
	}
	shape.Finish()
	return shape.Format(func(k trace.Kind, site uint64) string { return labels[prsd.StackSignature(k, site)] }, max), nil
}
