package dumpi

import (
	"strings"
	"sync"

	"kairos/trace"
)

// lFileOpen is MPI_File_open's label, a collective call on its
// communicator (the communicator pass counts it as one, for a file of
// MPI_COMM_SELF).
const lFileOpen = 230

// ioSpec is what an MPI-IO call is in the trace model: FileOpen,
// FileClose, FileRead, FileWrite (with flags trace.IOCollective and
// trace.IONonBlocking), FileWait (a split collective's end), or File for
// the others (views, seeks, sizes, syncs).
type ioSpec struct {
	kind  trace.Kind
	flags int32
}

// ioSpecs returns the MPI-IO calls' specs by label, read from their
// names: MPI_File_iwrite_at is a non-blocking FileWrite,
// MPI_File_read_all a collective FileRead, MPI_File_write_all_begin both,
// its _end a FileWait. Made at the first DUMPI trace read, not at every
// start: the walk of every call's layout was most of the package's
// initialization, which every verb paid.
var ioSpecs = sync.OnceValue(func() map[int]ioSpec {
	specs := map[int]ioSpec{}
	for label, l := range layouts {
		f, ok := strings.CutPrefix(l.name, "MPI_File_")
		if !ok {
			continue
		}
		s := ioSpec{kind: trace.File}
		op, nonBlocking := strings.CutPrefix(f, "i")
		switch {
		case f == "open":
			s.kind = trace.FileOpen
		case f == "close":
			s.kind = trace.FileClose
		case strings.HasSuffix(f, "_end") && (strings.HasPrefix(f, "read") || strings.HasPrefix(f, "write")):
			s.kind = trace.FileWait
		case strings.HasPrefix(op, "read") || strings.HasPrefix(op, "write"):
			s.kind = trace.FileWrite
			if strings.HasPrefix(op, "read") {
				s.kind = trace.FileRead
			}
			if strings.Contains(op, "_all") || strings.Contains(op, "_ordered") {
				s.flags |= trace.IOCollective
			}
			if nonBlocking && op != f || strings.HasSuffix(op, "_begin") {
				s.flags |= trace.IONonBlocking
			}
		}
		specs[label] = s
	}
	return specs
})

// file is a file the rank opened: its handle (the same on every member
// of its communicator: opening is collective, and files are numbered as
// windows are) and communicator, and the request of its split collective
// begun and not ended (0: none).
type file struct {
	window
	split uint64
}

// fileIO maps an MPI-IO call, as the OTF2 reader has Score-P's records of
// it: an open or close of a file on its communicator, a read or write of
// its bytes (non-blocking ones with a request, which the wait that
// completes it makes a FileWait), a split collective's end, or another
// call on the file. It reports whether c was one. A call on a file the
// rank did not open in the trace, or opened on a communicator Kairos
// does not follow, is a File call of no handle: I/O, replayed as
// recorded.
func (r *Reader) fileIO(c *call) (bool, error) {
	s, ok := ioSpecs()[c.label]
	if !ok {
		return false, nil
	}
	r.local(c)
	e := &r.ev
	e.Kind = trace.File
	p := &programs()[c.label]
	get := func(name string) int64 { return c.v[field(c.label, name)] }
	if s.kind == trace.FileOpen {
		return true, r.fileOpen(c, get("comm"), get("file"))
	}
	if _, has := p.fields["file"]; !has {
		return true, nil // MPI_File_delete, MPI_Register_datarep
	}
	f, ok := r.files[get("file")]
	if !ok {
		return true, nil
	}
	e.Handle, e.Comm = f.handle, f.comm
	switch s.kind {
	case trace.FileClose:
		e.Kind = trace.FileClose
		delete(r.files, get("file"))
	case trace.FileWait:
		if f.split != 0 {
			e.Kind, e.Request = trace.FileWait, f.split
			f.split = 0
			r.files[get("file")] = f
		}
	case trace.FileRead, trace.FileWrite:
		r.transferIO(c, s, &f, get)
		r.files[get("file")] = f
	}
	return true, nil
}

// fileOpen maps an MPI_File_open of DUMPI file handle h on communicator
// handle comm.
func (r *Reader) fileOpen(c *call, comm, h int64) error {
	id, self, err := r.comm(c, comm)
	if err != nil {
		return known(err)
	}
	if self {
		if id = r.self; id == 0 {
			return nil // no communicator of the rank alone: a File call
		}
	}
	if r.files == nil {
		r.files = map[int64]file{}
	}
	f := file{window: window{handle: numbered(&r.fileSeq, id), comm: id}}
	r.files[h] = f
	e := &r.ev
	e.Kind, e.Handle, e.Comm = trace.FileOpen, f.handle, id
	return nil
}

// transferIO maps a read or write of count elements of a datatype on f: a
// non-blocking one starts a request under its DUMPI handle, which the
// wait that completes it completes (ioRequests), a split collective's
// begin one its end completes.
func (r *Reader) transferIO(c *call, s ioSpec, f *file, get func(string) int64) {
	e := &r.ev
	bytes, _ := r.bytes(get("count"), get("datatype"))
	e.Kind, e.Tag = s.kind, s.flags
	if s.kind == trace.FileRead {
		e.RecvBytes = bytes
	} else {
		e.SendBytes = bytes
	}
	if s.flags&trace.IONonBlocking == 0 {
		return
	}
	if _, has := programs()[c.label].fields["request"]; has {
		e.Request = r.startRequest(get("request"), true)
		if r.ioReqs == nil {
			r.ioReqs = map[uint64]file{}
		}
		r.ioReqs[e.Request] = *f
		return
	}
	r.lastID++ // a split collective's begin
	e.Request, f.split = r.lastID, r.lastID
}

// ioWaits takes the requests of non-blocking I/O out of those the
// current wait or test completed (r.reqs), and returns a FileWait of each
// (the wait's time and function, the file's handle and communicator).
func (r *Reader) ioWaits(c *call) []trace.Event {
	if len(r.ioReqs) == 0 {
		return nil
	}
	var waits []trace.Event
	kept := r.reqs[:0]
	for _, id := range r.reqs {
		f, ok := r.ioReqs[id]
		if !ok {
			kept = append(kept, id)
			continue
		}
		delete(r.ioReqs, id)
		w := trace.NewEvent(trace.FileWait)
		w.Enter, w.Exit, w.HasTime, w.Region = r.ev.Enter, r.ev.Exit, r.ev.HasTime, r.t.regions[c.label]
		w.Request, w.Handle, w.Comm = id, f.handle, f.comm
		waits = append(waits, w)
	}
	r.reqs = kept
	return waits
}
