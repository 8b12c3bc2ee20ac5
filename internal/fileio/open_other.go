//go:build !unix

package fileio

import "os"

// OpenFile opens path for reading (os.Open; see open_unix.go).
func OpenFile(path string) (*os.File, error) { return os.Open(path) }

// fileLimit returns how many files the process may have open: a guess
// where there is no RLIMIT_NOFILE.
func fileLimit() int { return 512 }
