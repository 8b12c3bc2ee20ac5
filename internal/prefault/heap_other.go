//go:build !(linux && (amd64 || arm64))

package prefault

func adviseHeap(collapse bool) {}

func unadviseHeap() {}

func thpNever() bool { return true }

func fewHugeFree() bool { return true }

func mappingsBounded() bool { return true }
