package stats

import (
	"testing"

	"kairos/format"
	_ "kairos/format/ti"
	"kairos/internal/testenv"
)

// TestSharedRing4 summarises SimGrid's own 4-rank trace. The expected
// figures were counted from its text: 12 "isend 1024" and 3 "send 16"
// lines, all with datatype 0 (MPI_DOUBLE, 8 bytes), 103 action lines.
func TestSharedRing4(t *testing.T) {
	src, _, err := format.Open(testenv.Shared(t, "traces/ti/smpi-ring4/ring4.ti"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Collect(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ranks != 4 || s.Events != 103 || s.P2PMessages != 15 || s.P2PBytes != 12*1024*8+3*16*8 {
		t.Errorf("ranks %d events %d p2p %d msgs %d bytes", s.Ranks, s.Events, s.P2PMessages, s.P2PBytes)
	}
	if s.EventsByKind["isend"] != 12 || s.EventsByKind["waitall"] != 12 || s.EventsByKind["compute"] != 25 {
		t.Errorf("kinds %v", s.EventsByKind)
	}
	var recvd int64
	for _, r := range s.PerRank {
		recvd += r.BytesRecvd
	}
	if recvd != s.P2PBytes {
		t.Errorf("received %d bytes, sent %d", recvd, s.P2PBytes)
	}
}
