//go:build unix

package main

import (
	"os"
	"syscall"
)

// raise sends signal n to the process itself and reports whether it
// could.
func raise(n syscall.Signal) bool {
	return syscall.Kill(os.Getpid(), n) == nil
}
