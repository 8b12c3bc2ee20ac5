package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"kairos/trace"
)

// Structure returns a rank's MPI calls folded into loops, as ScalaTrace's
// RSDs and power-RSDs hold them: "3×(recv1 2×(send1) barrier1) finalize1",
// a loop written as its iteration count times its body. Calls are named by
// MPI function, numbered by call site in the order they first appear
// (send1 and send2 are sends from two places). The text stops after
// about max bytes, with "…", if max is positive.
func Structure(rd trace.Reader, max int) (string, error) {
	var c compressor
	labels := map[uint64]string{}
	perKind := map[trace.Kind]int{}
	for rd.Next() {
		e := rd.Event()
		if !e.Kind.IsMPI() {
			continue
		}
		site := e.CallSite
		if site == 0 {
			site = kindSites[e.Kind]
		}
		if _, ok := labels[site]; !ok {
			perKind[e.Kind]++
			labels[site] = e.Kind.String() + strconv.Itoa(perKind[e.Kind])
		}
		c.add(site)
	}
	if err := rd.Err(); err != nil {
		return "", err
	}
	var b strings.Builder
	writeStructure(&b, c.seq, labels, max)
	return b.String(), nil
}

// writeStructure writes seq and reports false if it stopped at max bytes.
func writeStructure(b *strings.Builder, seq []node, labels map[uint64]string, max int) bool {
	for i := range seq {
		if max > 0 && b.Len() >= max {
			b.WriteString(" …")
			return false
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		n := &seq[i]
		if !n.isLoop() {
			b.WriteString(labels[n.site])
			continue
		}
		fmt.Fprintf(b, "%d×(", n.count)
		if !writeStructure(b, n.body, labels, max) {
			return false
		}
		b.WriteByte(')')
	}
	return true
}
