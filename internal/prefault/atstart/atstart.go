// Package atstart asks for the Go heap in transparent huge pages as a
// program's packages are initialized (prefault.HugeHeap), before most of
// them write to it; a main package imports it for that effect alone.
//
// Packages initialize in the order of their import paths, each once those
// it imports have (Go 1.21 and later). This one and package prefault
// import only what the runtime's own initialization needs, so that they
// come right after package syscall, before unicode's tables,
// encoding/xml's, html/template's and the CLI's own. Those wrote about a
// hundred 4 KB pages of the heap one fault at a time, which on this
// project's virtual machines cost 10 to 35 µs each: `kairos --version`
// takes 1.3 ms less of CPU time with the region they write already in a
// huge page, and 64-rank analytic replays of 20 to 25 ms about 2 ms less
// (BENCHMARKS.md).
package atstart

import "kairos/internal/prefault"

func init() { prefault.HugeHeap() }
