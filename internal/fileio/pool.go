package fileio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// Handle reads a regular file through the process's pool of open files:
// any number of handles, on any number of files, hold at most a fixed
// number of file descriptors between them (MaxOpen). A handle that has
// not read for a while may lose its descriptor to another; its next read
// opens the file again, checking that it is still the file first opened.
// Handles of one path share one descriptor, as they read at offsets
// (pread), so that the million rank readers of one .ktr file hold one.
//
// A replay reads every rank's input in turns: without the pool it held a
// descriptor a rank, and a 2,000-rank trace failed under the usual limit
// of 1,024 open files. Below the limit nothing is ever closed early, and a
// read costs one uncontended lock more than a plain file's.
//
// A Handle is safe for concurrent use; Read keeps its own offset, like a
// file's, so that a handle read sequentially is used by one goroutine.
type Handle struct {
	e      *entry
	off    int64 // Read's offset
	closed bool
}

// entry is one path's descriptor, shared by its handles.
type entry struct {
	path       string
	info       os.FileInfo // of the file first opened, to recognise it again
	f          *os.File    // nil while the file is closed
	handles    int
	busy       int // reads in progress: the file may not be closed
	prev, next *entry
}

// pool is the set of open files. Idle open entries are in a list, least
// recently used first, from which the pool closes when it must open
// another and holds MaxOpen already.
type pool struct {
	mu     sync.Mutex
	max    int
	open   int
	byPath map[string]*entry
	idle   entry // the list's sentinel
}

var files = newPool(defaultMaxOpen())

func newPool(max int) *pool {
	p := &pool{max: max, byPath: map[string]*entry{}}
	p.idle.prev, p.idle.next = &p.idle, &p.idle
	return p
}

// defaultMaxOpen leaves a quarter of the descriptors the process may open
// (RLIMIT_NOFILE, which Go raises to its hard limit at start-up) to
// everything else, and keeps no more than 65,536 open, the kernel's memory
// being shared too.
func defaultMaxOpen() int {
	return min(max(fileLimit()*3/4, 16), 1<<16)
}

// MaxOpen returns how many files the pool holds open at most.
func MaxOpen() int {
	files.mu.Lock()
	defer files.mu.Unlock()
	return files.max
}

// SetMaxOpen changes the bound of MaxOpen (at least 1) and returns the
// previous one; files open beyond the new bound close as they become
// idle. For tests.
func SetMaxOpen(n int) int {
	files.mu.Lock()
	defer files.mu.Unlock()
	old := files.max
	files.max = max(n, 1)
	for files.open > files.max && files.idle.next != &files.idle {
		files.closeEntry(files.idle.next)
	}
	return old
}

// NumOpen returns how many files the pool holds open now. For tests.
func NumOpen() int {
	files.mu.Lock()
	defer files.mu.Unlock()
	return files.open
}

// OpenHandle opens path, a regular file, for reading through the pool. It
// opens the file at once, so that a missing or unreadable file is
// reported here.
func OpenHandle(path string) (*Handle, error) {
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	return handleOf(f)
}

// handleOf makes f, a file just opened, a pooled handle, or closes it and
// fails if it is not a regular file.
func handleOf(f *os.File) (*Handle, error) {
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return files.add(f, st), nil
}

// add registers a newly opened file: a new handle on its path's entry,
// keeping the entry's descriptor if it has one (and the file is the same).
func (p *pool) add(f *os.File, st os.FileInfo) *Handle {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.byPath[f.Name()]
	switch {
	case e == nil:
		e = &entry{path: f.Name(), info: st}
		p.byPath[e.path] = e
	case !sameVersion(e.info, st):
		// The path names another file now, or the file was written
		// since (a tool that rewrites it in place keeps its inode): the
		// new handles read it as it is, the old ones keep theirs until
		// they close (or fail to reopen).
		e = &entry{path: f.Name(), info: st}
		p.byPath[e.path] = e
	}
	e.handles++
	if e.f == nil {
		e.f = f
		p.open++
		p.makeRoom()
		p.pushIdle(e)
	} else {
		f.Close()
	}
	return &Handle{e: e}
}

// sameVersion reports whether a and b are the same file, of the same
// size and modification time.
func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// makeRoom closes idle files while more than max are open.
func (p *pool) makeRoom() {
	for p.open > p.max && p.idle.next != &p.idle {
		p.closeEntry(p.idle.next)
	}
}

func (p *pool) pushIdle(e *entry) {
	e.prev, e.next = p.idle.prev, &p.idle
	e.prev.next, p.idle.prev = e, e
}

func (p *pool) unlink(e *entry) {
	if e.next != nil {
		e.prev.next, e.next.prev = e.next, e.prev
		e.prev, e.next = nil, nil
	}
}

// closeEntry closes an idle entry's file.
func (p *pool) closeEntry(e *entry) {
	p.unlink(e)
	e.f.Close()
	e.f = nil
	p.open--
}

// acquire returns e's file open and marks it busy.
func (p *pool) acquire(e *entry) (*os.File, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.f == nil {
		if err := p.reopen(e); err != nil {
			return nil, err
		}
	} else {
		p.unlink(e)
	}
	e.busy++
	return e.f, nil
}

// reopen opens e's file again, making room first, and checks that it is
// the file the handles were opened on.
func (p *pool) reopen(e *entry) error {
	p.open++ // counted first, so that makeRoom leaves room for it
	p.makeRoom()
	f, err := OpenFile(e.path)
	for err != nil && isTooMany(err) && p.idle.next != &p.idle {
		p.closeEntry(p.idle.next) // other files hold descriptors: give up one more
		f, err = OpenFile(e.path)
	}
	if err != nil {
		p.open--
		return fmt.Errorf("reopening %s: %w", e.path, err)
	}
	st, err := f.Stat()
	if err == nil && (!os.SameFile(st, e.info) || !st.ModTime().Equal(e.info.ModTime())) {
		err = errors.New("the file was replaced or modified since it was opened")
	}
	if err == nil && st.Size() != e.info.Size() {
		err = fmt.Errorf("the file changed size since it was opened (%d bytes, then %d)", e.info.Size(), st.Size())
	}
	if err != nil {
		f.Close()
		p.open--
		return fmt.Errorf("%s: %w", e.path, err)
	}
	e.f = f
	return nil
}

func isTooMany(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// release ends a read of e.
func (p *pool) release(e *entry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.busy--
	if e.busy > 0 {
		return
	}
	if e.handles == 0 {
		p.drop(e)
		return
	}
	p.pushIdle(e)
	p.makeRoom()
}

// drop closes e's file and forgets e: its last handle closed.
func (p *pool) drop(e *entry) {
	if e.f != nil {
		p.closeEntry(e)
	}
	if p.byPath[e.path] == e {
		delete(p.byPath, e.path)
	}
}

// ReadAt reads len(b) bytes at off, as os.File.ReadAt does.
func (h *Handle) ReadAt(b []byte, off int64) (int, error) {
	if h.closed {
		return 0, os.ErrClosed
	}
	f, err := files.acquire(h.e)
	if err != nil {
		return 0, err
	}
	n, err := f.ReadAt(b, off)
	files.release(h.e)
	return n, err
}

// Read reads from the handle's offset, as os.File.Read does.
func (h *Handle) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := h.ReadAt(b, h.off)
	h.off += int64(n)
	if n > 0 && err == io.EOF {
		err = nil
	}
	return n, err
}

// Seek sets the offset of Read, as os.File.Seek does.
func (h *Handle) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += h.off
	case io.SeekEnd:
		off += h.Size()
	}
	if off < 0 {
		return 0, fmt.Errorf("%s: seek to negative offset %d", h.e.path, off)
	}
	h.off = off
	return off, nil
}

// Size returns the file's size when it was opened.
func (h *Handle) Size() int64 { return h.e.info.Size() }

// Name returns the path the handle was opened with.
func (h *Handle) Name() string { return h.e.path }

// Close releases the handle; the file closes with its path's last handle.
func (h *Handle) Close() error {
	if h.closed {
		return os.ErrClosed
	}
	h.closed = true
	files.mu.Lock()
	defer files.mu.Unlock()
	h.e.handles--
	if h.e.handles == 0 && h.e.busy == 0 {
		files.drop(h.e)
	}
	return nil
}
