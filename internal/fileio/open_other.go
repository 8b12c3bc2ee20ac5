//go:build !unix

package fileio

import "os"

// OpenFile opens path for reading (os.Open; see open_unix.go).
func OpenFile(path string) (*os.File, error) { return os.Open(path) }
