package otf2

import (
	"strconv"
	"strings"

	"kairos/trace"
)

// MPI-IO calls, written as Score-P records them (onesided.go reads them):
// the opening and closing of a file as IoCreateHandle and
// IoDestroyHandle, a read or write as IoOperationBegin and, in the call
// or in the wait that completes a non-blocking one, IoOperationComplete,
// a seek as IoSeek. A file is OTF2's I/O handle Handle-1, of the MPI-IO
// paradigm, on the OTF2 communicator of its events' Comm, each on a
// regular file of its own (the model keeps no file names).

// Values of OTF2's enums the I/O records take.
const (
	ioParadigmMPI      = 0 // the archive's only I/O paradigm
	ioParadigmParallel = 1
	ioAccessReadWrite  = 2
	ioMatchBase        = 1 << 61 // matching ids of blocking operations
	ioFlagNone         = 0
	ioSeekFromStart    = 0
)

// io writes the records of MPI-IO event e, a call of MPI function name,
// from enter to exit.
func (rw *rankWriter) io(e *trace.Event, name string, enter, exit uint64) error {
	if e.Kind == trace.FileWait {
		return rw.complete(e.Request, exit)
	}
	if e.Handle == 0 {
		return nil // no file: a call the region names alone (MPI_File_delete)
	}
	h, err := rw.w.handle(&rw.w.files, e)
	if err != nil {
		return err
	}
	var r *enc
	switch e.Kind {
	case trace.FileOpen:
		r = rw.begin(evIoCreateHandle)
		r.u32(h)
		r.u8(ioAccessReadWrite)
		r.u32(ioFlagNone) // creation flags
		r.u32(ioFlagNone) // status flags
	case trace.FileClose:
		r = rw.begin(evIoDestroyHandle)
		r.u32(h)
	case trace.FileRead, trace.FileWrite:
		return rw.ioOperation(e, h, enter, exit)
	default:
		if !strings.Contains(name, "seek") {
			return nil // set_view, sync...: Score-P records nothing I/O of them
		}
		r = rw.begin(evIoSeek)
		r.u32(h)
		r.u64(0) // offset requested
		r.u8(ioSeekFromStart)
		r.u64(0) // offset reached
	}
	return rw.end(enter)
}

// ioOperation writes a read or a write: its begin, and its completion in
// the call unless it is non-blocking (its request's wait completes it).
func (rw *rankWriter) ioOperation(e *trace.Event, h uint32, enter, exit uint64) error {
	mode, size := uint8(ioModeRead), e.RecvBytes
	if e.Kind == trace.FileWrite {
		mode, size = ioModeWrite, e.SendBytes
	}
	flags := uint32(0)
	if e.Tag&trace.IOCollective != 0 {
		flags |= ioFlagCollective
	}
	nonBlocking := e.Tag&trace.IONonBlocking != 0
	id := e.Request
	if nonBlocking {
		flags |= ioFlagNonBlocking
		rw.start(id, pending{io: true, comm: h, size: uint64(size)})
	} else {
		rw.ioSeq++
		id = ioMatchBase + rw.ioSeq
	}
	r := rw.begin(evIoOperationBegin)
	r.u32(h)
	r.u8(mode)
	r.u32(flags)
	r.u64(uint64(size))
	r.u64(id)
	if err := rw.end(enter); err != nil || nonBlocking {
		return err
	}
	return rw.ioDone(exit, h, uint64(size), id)
}

// ioDone writes the completion of I/O operation id on handle h.
func (rw *rankWriter) ioDone(t uint64, h uint32, size, id uint64) error {
	r := rw.begin(evIoOperationComplete)
	r.u32(h)
	r.u64(size)
	r.u64(id)
	return rw.end(t)
}

// ioNames returns the names of the I/O paradigm and of each file (its
// regular file's and handle's), as strings, made before the definitions;
// none for a trace without MPI-IO.
func (w *archiveWriter) ioNames() (paradigm uint32, files map[uint32]uint32) {
	if len(w.files.order) == 0 {
		return undefined32, nil
	}
	files = map[uint32]uint32{}
	for _, h := range w.files.order {
		files[h] = w.str("MPI file " + strconv.FormatUint(uint64(h), 10))
	}
	return w.str("MPI-IO"), files
}
