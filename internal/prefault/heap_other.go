//go:build !linux

package prefault

func adviseHeap(collapse bool) {}

func thpNever() bool { return true }
