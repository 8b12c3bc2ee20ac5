package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"kairos/internal/fileio"
)

// onInterrupt makes an interrupt (^C) or a termination stop the run
// without leaving the outputs being written half-done: their temporary
// files are removed (the targets are untouched, as on any failure), a
// line on stderr says so, and the process ends of the signal, as it
// would have without the handler, so that a shell running kairos in a
// loop stops the loop too (a child that exits 130 instead is taken to
// have handled the interrupt, and the loop goes on). exit gives the
// shell's code for the signal (130, 143) if the signal does not end the
// process.
func onInterrupt(stderr io.Writer, exit func(int)) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-c
		code := interrupted(s, stderr)
		signal.Reset(s)
		if n, ok := s.(syscall.Signal); ok && raise(n) {
			time.Sleep(time.Second) // the runtime ends the process of an unhandled SIGINT or SIGTERM
		}
		fileio.RemovePending() // made meanwhile: the signal was ignored (a background job's)
		exit(code)
	}()
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
