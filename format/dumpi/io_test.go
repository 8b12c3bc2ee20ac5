package dumpi

import (
	"testing"

	"kairos/check"
	"kairos/trace"
)

// TestFileIO: MPI-IO calls read as the OTF2 reader reads Score-P's records
// of them: an open and close on their communicator with a handle the
// members share, reads and writes of their bytes (collective, non-blocking
// with a request that the wait completing it makes a FileWait), a split
// collective's begin and end, other calls on the file as File calls. They
// were all File calls of no handle and no bytes: stats had no MPI-IO
// bytes, and h5py's 64 MB written were missing.
func TestFileIO(t *testing.T) {
	const dtDouble, dtInt = 12, 9
	ws := writers(2)
	for _, w := range ws {
		w.call(lFileOpen, commWorld, "out.dat", 0, 0, 5)
		w.call(label(t, "MPI_File_write_at_all"), 5, 0, 10, dtDouble, nil)
		w.call(label(t, "MPI_File_iwrite"), 5, 4, dtInt, 7)
		w.call(lWait, 7, nil)
		w.call(label(t, "MPI_File_read_all_begin"), 5, 2, dtDouble)
		w.call(label(t, "MPI_File_read_all_end"), 5, nil)
		w.call(label(t, "MPI_File_set_view"), 5, 0, dtDouble, dtDouble, "native", 0)
		w.call(label(t, "MPI_File_close"), 5)
	}
	src, tr := load(t, ws)
	type want struct {
		kind       trace.Kind
		sent, recv int64
		flags      int32
		request    bool
		handle     bool
	}
	wants := []want{
		{kind: trace.FileOpen, handle: true},
		{kind: trace.FileWrite, sent: 80, flags: trace.IOCollective, handle: true},
		{kind: trace.FileWrite, sent: 16, flags: trace.IONonBlocking, request: true, handle: true},
		{kind: trace.FileWait, request: true, handle: true},
		{kind: trace.FileRead, recv: 16, flags: trace.IOCollective | trace.IONonBlocking, request: true, handle: true},
		{kind: trace.FileWait, request: true, handle: true},
		{kind: trace.File, handle: true},
		{kind: trace.FileClose, handle: true},
	}
	rd := tr.Ranks[1].Reader()
	for i, w := range wants {
		if !rd.Next() {
			t.Fatalf("event %d: none, want %v", i, w.kind)
		}
		e := rd.Event()
		if e.Kind != w.kind || e.SendBytes != w.sent || e.RecvBytes != w.recv || e.Tag != w.flags || (e.Request != 0) != w.request ||
			(e.Handle != 0) != w.handle || e.Comm != trace.WorldComm {
			t.Errorf("event %d: %v, want %+v", i, e, w)
		}
	}
	if rep, err := check.Check(src, check.Options{}); err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// label returns the DUMPI label of MPI function name.
func label(t *testing.T, name string) int {
	t.Helper()
	for l, lay := range layouts {
		if lay.name == name {
			return l
		}
	}
	t.Fatalf("no label for %s", name)
	return 0
}

// TestInitAfterEarlyCall: sst-dumpi stamps MPI_Init once PMPI_Init
// returned; after a call made before it (MPI_Initialized, as mpi4py
// makes), MPI_Init reads from that call's end, not as computation (the
// report showed 86% computation for a program that computes nothing).
func TestInitAfterEarlyCall(t *testing.T) {
	ws := writers(1)
	w := ws[0]
	w.call(label(t, "MPI_Initialized"), 0)
	w.clock += 1e9 // PMPI_Init takes a second
	w.call(lInit, 1, []string{"prog"})
	_, tr := load(t, ws)
	rd := tr.Ranks[0].Reader()
	if !rd.Next() {
		t.Fatal("no event")
	}
	early := rd.Event().Exit
	if !rd.Next() || rd.Event().Kind != trace.Init || rd.Event().Enter != early || rd.Event().Duration() < trace.FromSeconds(1) {
		t.Errorf("the init %v, want it from %v, a second long", rd.Event(), early)
	}
}
