package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"kairos/internal/fileio"
)

// onInterrupt makes an interrupt (^C) or a termination stop the run
// without leaving the outputs being written half-done: their temporary
// files are removed (the targets are untouched, as on any failure), a
// line on stderr says so, and the run exits with the shell's code for
// the signal (130, 143).
func onInterrupt(stderr io.Writer, exit func(int)) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() { exit(interrupted(<-c, stderr)) }()
}

// interrupted discards the outputs being written and returns the exit
// code for signal s.
func interrupted(s os.Signal, stderr io.Writer) int {
	fileio.RemovePending()
	fmt.Fprintf(stderr, "kairos: %v: stopped; the outputs being written were discarded\n", s)
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitFailed
}
