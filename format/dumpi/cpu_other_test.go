//go:build !unix

package dumpi

// processCPU is unknown here: benchmarks report wall-clock rates only.
func processCPU() float64 { return 0 }
