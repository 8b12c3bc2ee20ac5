//go:build linux && (amd64 || arm64)

package prefault

import (
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkFirstWrite measures what a first write to fresh anonymous
// memory costs a 4 KB page: faulted a page at a time, populated first
// (Bytes), and in 2 MB huge pages (the memory HugeHeap asks for):
//
//	go test ./internal/prefault -run '^$' -bench FirstWrite
func BenchmarkFirstWrite(b *testing.B) {
	const size = 8 << 20
	page := syscall.Getpagesize()
	for _, c := range []struct {
		name    string
		prepare func(m []byte)
	}{
		{"faulted", func([]byte) {}},
		{"populated", func(m []byte) { Bytes(m) }},
		{"huge", func(m []byte) { _ = unix.Madvise(m, unix.MADV_HUGEPAGE) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.name == "huge" && thpNever() {
				b.Skip("this machine gives no transparent huge pages")
			}
			for i := 0; i < b.N; i++ {
				// Mapped and unmapped outside the timing; 2 MB more, to
				// write 8 MB of whole huge pages.
				b.StopTimer()
				m, err := unix.Mmap(-1, 0, size+hugeBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
				if err != nil {
					b.Fatal(err)
				}
				skip := (hugeBytes - int(uintptr(unsafe.Pointer(&m[0])))%hugeBytes) % hugeBytes
				w := m[skip : skip+size]
				b.StartTimer()
				c.prepare(w)
				for j := 0; j < len(w); j += page {
					w[j] = 1
				}
				b.StopTimer()
				if err := unix.Munmap(m); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size/page), "ns/page")
		})
	}
}
