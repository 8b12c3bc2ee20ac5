//go:build !unix

package main

import "syscall"

// raise reports that the process cannot end itself of a signal here:
// onInterrupt then exits with the shell's code for it.
func raise(syscall.Signal) bool { return false }
