//go:build !linux

package fileio

// ReserveFiles does nothing outside Linux (see reserve_linux.go).
func ReserveFiles(n int) {}
