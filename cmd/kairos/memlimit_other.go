//go:build !linux

package main

// physicalMemory returns 0 where the machine's memory is not known: the
// limit is left to GOMEMLIMIT.
func physicalMemory() int64 { return 0 }
