// Package fileio opens inputs and creates outputs the way every Kairos
// command does: ".gz" and ".zst" inputs are decompressed transparently, and
// outputs are written to a temporary file in the destination directory and
// renamed into place only when complete (an output of many files, into a
// temporary directory, synced and renamed at once), so that a failed or
// interrupted run never leaves a half-written file behind.
package fileio

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Open opens path for reading, decompressing it if its name ends in ".gz"
// or ".zst". The name "-" is standard input. A regular file is read
// through the pool of open files (see Handle), so that a reader left
// waiting holds no descriptor.
func Open(path string) (io.ReadCloser, error) {
	var f io.ReadCloser
	bufSize := 1 << 16
	if path == "-" {
		f = io.NopCloser(os.Stdin)
	} else {
		o, err := OpenFile(path)
		if err != nil {
			return nil, err
		}
		f = o
		if st, err := o.Stat(); err == nil && st.Mode().IsRegular() {
			f = files.add(o, st) // handleOf without its second fstat
			bufSize = int(min(int64(bufSize), max(st.Size(), 16)))
		}
	}
	switch {
	case strings.HasSuffix(path, ".gz"):
		z, err := gzip.NewReader(bufio.NewReaderSize(f, bufSize))
		if err == io.EOF {
			// A file of no bytes at all holds no stream: it reads as
			// empty, as an empty .zst file does.
			return f, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, (&decompressor{kind: "gzip"}).explain(err))
		}
		return &stacked{Reader: &decompressor{r: z, kind: "gzip"}, closers: []io.Closer{z, f}}, nil
	case strings.HasSuffix(path, ".zst"):
		z, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &stacked{Reader: &decompressor{r: z, kind: "zstd"}, closers: []io.Closer{zstdCloser{z}, f}}, nil
	}
	return f, nil
}

// decompressor reads a decompressing reader, saying the same of every
// format where its data ends early or is damaged, with how far it got: a
// truncated .gz and a truncated .zst are the same problem to the user.
type decompressor struct {
	r    io.Reader
	kind string // "gzip", "zstd"
	n    int64  // bytes decompressed
}

func (d *decompressor) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.n += int64(n)
	if err != nil && err != io.EOF {
		err = d.explain(err)
	}
	return n, err
}

// explain describes a decompression error.
func (d *decompressor) explain(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w %s file: its data ends after %d decompressed bytes, before the end mark", ErrTruncated, d.kind, d.n)
	}
	return fmt.Errorf("corrupt %s data after %d decompressed bytes: %w", d.kind, d.n, err)
}

// ErrTruncated is the error of a compressed input cut short.
var ErrTruncated = errors.New("truncated")

type zstdCloser struct{ d *zstd.Decoder }

func (z zstdCloser) Close() error { z.d.Close(); return nil }

// stacked is a reader over a chain of readers closed innermost first.
type stacked struct {
	io.Reader
	closers []io.Closer
}

func (s *stacked) Close() error {
	var err error
	for _, c := range s.closers {
		err = errors.Join(err, c.Close())
	}
	return err
}

// File is an output being written. Nothing appears at its path until
// Commit succeeds; Abort (or a failed Commit) removes the temporary file.
type File struct {
	w      io.Writer
	buf    *bufio.Writer
	comp   io.WriteCloser
	tmp    *os.File
	dev    *os.File // a device or pipe written in place
	inTemp bool     // tmp is the output itself, in a temporary directory (CreateIn)
	path   string
	closed bool
}

// Create starts writing path, compressing by its extension (".gz",
// ".zst"). The name "-" writes to standard output, unbuffered by a
// temporary file, and so does a path that exists and is not a regular
// file (/dev/null, /dev/stdout, a named pipe): renaming a file over it
// would replace the device for every program of the machine.
func Create(path string) (*File, error) {
	f := &File{path: path}
	var out io.Writer
	st, err := os.Stat(path)
	switch {
	case path == "-":
		out = os.Stdout
	case err == nil && st.IsDir():
		return nil, fmt.Errorf("cannot write %s: it is a directory", path)
	case err == nil && !st.Mode().IsRegular():
		dev, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		f.dev = dev
		out = dev
	default:
		var tmp *os.File
		err := pending.make(false, func() (name string, err error) {
			if tmp, err = os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*"); err == nil {
				name = tmp.Name()
			}
			return name, err
		})
		if err != nil {
			if _, derr := os.Stat(filepath.Dir(path)); derr != nil {
				return nil, fmt.Errorf("cannot write %s: %w", path, derr)
			}
			return nil, fmt.Errorf("cannot write %s: %w", path, err)
		}
		f.tmp = tmp
		out = tmp
	}
	return f.start(out)
}

// CreateIn starts writing path, a new file of a directory MkdirTemp made
// and ReplaceDir moves into place, compressing by its extension. The
// directory is the output's temporary: the file is written in it
// directly, and ReplaceDir syncs the directory's files together, not
// each at its Commit (a TI trace of 16,384 ranks is as many files, each
// fsync a journal commit).
func CreateIn(path string) (*File, error) {
	tmp, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	f := &File{path: path, tmp: tmp, inTemp: true}
	return f.start(tmp)
}

// start makes f write to out, buffered and compressed by f's extension.
func (f *File) start(out io.Writer) (*File, error) {
	path := f.path
	f.buf = bufio.NewWriterSize(out, 1<<16)
	f.w = f.buf
	switch {
	case strings.HasSuffix(path, ".gz"):
		f.comp = gzip.NewWriter(f.buf)
	case strings.HasSuffix(path, ".zst"):
		z, err := zstd.NewWriter(f.buf, zstd.WithEncoderConcurrency(1))
		if err != nil {
			f.Abort()
			return nil, err
		}
		f.comp = z
	}
	if f.comp != nil {
		f.w = f.comp
	}
	return f, nil
}

// Write writes to the (compressing) output.
func (f *File) Write(p []byte) (int, error) { return f.w.Write(p) }

// Commit flushes, closes and renames the output into place.
func (f *File) Commit() error {
	if f.closed {
		return errors.New("fileio: commit of a closed file")
	}
	f.closed = true
	var err error
	if f.comp != nil {
		err = f.comp.Close()
	}
	err = errors.Join(err, f.buf.Flush())
	if f.dev != nil {
		err = errors.Join(err, f.dev.Close())
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		return nil
	}
	if f.tmp == nil {
		return err
	}
	if f.inTemp {
		err = errors.Join(err, f.tmp.Chmod(0o644), f.tmp.Close())
		if err != nil {
			os.Remove(f.path)
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		return nil
	}
	// CreateTemp makes the file 0600; an output is an ordinary file.
	err = errors.Join(err, f.tmp.Chmod(0o644), f.tmp.Sync(), f.tmp.Close())
	if err == nil {
		err = pending.rename(f.tmp.Name(), f.path)
	} else {
		pending.remove(f.tmp.Name())
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort discards the output. It is safe to call after Commit, so that
// "defer f.Abort()" cleans up on every error path.
func (f *File) Abort() {
	if f.closed {
		return
	}
	f.closed = true
	if f.dev != nil {
		f.dev.Close()
	}
	switch {
	case f.inTemp:
		f.tmp.Close()
		os.Remove(f.path)
	case f.tmp != nil:
		f.tmp.Close()
		pending.remove(f.tmp.Name())
	}
}

// pending is the set of temporary outputs not yet committed or aborted,
// which RemovePending removes when the process must exit at once.
var pending = tempSet{names: map[string]bool{}}

// tempSet maps each temporary output's name to whether it is a directory.
type tempSet struct {
	mu    sync.Mutex
	names map[string]bool
	hook  func() // OnPending's
	first sync.Once
}

// OnPending makes f run once, before the first temporary output is made:
// a command that writes no file then needs no handler for interrupts (a
// goroutine and a thread at every start). It is called once, before any
// output is made.
func OnPending(f func()) { pending.hook = f }

// make runs mk, which makes a temporary output (a directory if dir) and
// returns its name, and counts the name among the pending outputs, under
// the lock: RemovePending never runs in between. OnPending's function
// runs first.
func (s *tempSet) make(dir bool, mk func() (string, error)) error {
	s.first.Do(func() {
		if s.hook != nil {
			s.hook()
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	name, err := mk()
	if err == nil {
		s.names[name] = dir
	}
	return err
}

// remove deletes the temporary output name.
func (s *tempSet) remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(name)
}

// drop deletes the temporary output name, s locked.
func (s *tempSet) drop(name string) {
	if s.names[name] {
		os.RemoveAll(name)
	} else {
		os.Remove(name)
	}
	delete(s.names, name)
}

// rename moves the temporary file name into place at path (deleting it
// if that fails), under the lock: RemovePending never runs in between.
func (s *tempSet) rename(name, path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.names, name)
	err := os.Rename(name, path)
	if err != nil {
		os.Remove(name)
	}
	return err
}

// RemovePending deletes the temporary files and directories of the
// outputs being written, for a process about to exit without finishing
// them (an interrupt, the memory watchdog): their targets are untouched,
// and no hidden ".name.tmp*" file is left beside them. Outputs created
// afterwards are not affected, so the caller must exit at once.
func RemovePending() {
	pending.mu.Lock()
	defer pending.mu.Unlock()
	for name := range pending.names {
		pending.drop(name)
	}
}

// MkdirTemp makes a directory for an output built as a whole directory
// (a TI trace's per-rank files), as os.MkdirTemp does, and counts it
// among the temporary outputs: RemovePending removes it with what it
// holds. The caller renames it into place and then calls RemoveTemp,
// which removes it on every other path.
func MkdirTemp(dir, pattern string) (name string, err error) {
	err = pending.make(true, func() (string, error) {
		name, err = os.MkdirTemp(dir, pattern)
		return name, err
	})
	return name, err
}

// RemoveTemp removes the directory MkdirTemp made, if it is still there,
// and forgets it.
func RemoveTemp(name string) { pending.remove(name) }

// ReplaceDir moves directory src to dst, replacing a previous output
// there. It refuses to remove a dst holding an entry that ours does not
// accept (a file the writer does not write), and leaves dst as it was if
// the move fails.
func ReplaceDir(src, dst string, ours func(os.DirEntry) bool) error {
	if err := syncTree(src); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	old, err := os.ReadDir(dst)
	if errors.Is(err, os.ErrNotExist) {
		return os.Rename(src, dst)
	}
	if err != nil {
		return err
	}
	for _, e := range old {
		if !ours(e) {
			return fmt.Errorf("%s exists and holds %s, which Kairos did not write; remove it first", dst, e.Name())
		}
	}
	trash := src + ".old"
	if err := os.Rename(dst, trash); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		os.Rename(trash, dst)
		return err
	}
	return os.RemoveAll(trash)
}

// WriteFile writes path atomically with the content fn writes.
func WriteFile(path string, fn func(w io.Writer) error) error {
	return write(Create, path, fn)
}

// WriteFileIn writes path, in a temporary directory (CreateIn), with the
// content fn writes.
func WriteFileIn(path string, fn func(w io.Writer) error) error {
	return write(CreateIn, path, fn)
}

func write(create func(string) (*File, error), path string, fn func(w io.Writer) error) error {
	f, err := create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fn(f); err != nil {
		return err
	}
	return f.Commit()
}

// QuoteGlob escapes the characters filepath.Match reads as a pattern, so
// that a directory named "run[1]" is a path in a pattern, not a set of
// names.
func QuoteGlob(path string) string {
	if filepath.Separator == '\\' { // Windows has no escape; such names are rare there
		return path
	}
	var b strings.Builder
	for _, c := range path {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
