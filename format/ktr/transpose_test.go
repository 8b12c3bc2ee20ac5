package ktr

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestTranspose: appendTransposed puts byte b of value i at b*n+i, after
// what dst held, and untranspose undoes it, for columns of 0 to 40 values.
func TestTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 40; n++ {
		col := make([]byte, 8*n)
		for i := range col {
			col[i] = byte(rng.Uint32())
		}
		prefix := []byte{0xaa, 0xbb}
		got := appendTransposed(append([]byte(nil), prefix...), col)
		if !bytes.Equal(got[:2], prefix) || len(got) != 2+8*n {
			t.Fatalf("%d values: prefix or length wrong: %x", n, got)
		}
		for i := 0; i < n; i++ {
			for b := 0; b < 8; b++ {
				if got[2+b*n+i] != col[8*i+b] {
					t.Fatalf("%d values: byte %d of value %d at %d is %#x, want %#x", n, b, i, 2+b*n+i, got[2+b*n+i], col[8*i+b])
				}
			}
		}
		back := make([]byte, 8*n)
		untranspose(back, got[2:])
		if !bytes.Equal(back, col) {
			t.Fatalf("%d values: untranspose gives %x, want %x", n, back, col)
		}
	}
}

func BenchmarkUntranspose(b *testing.B) {
	src := make([]byte, 8*4096)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		untranspose(dst, src)
	}
}

func BenchmarkTranspose(b *testing.B) {
	col := make([]byte, 8*4096)
	dst := make([]byte, 0, len(col))
	b.SetBytes(int64(len(col)))
	for b.Loop() {
		dst = appendTransposed(dst[:0], col)
	}
}
