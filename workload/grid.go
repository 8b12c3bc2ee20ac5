package workload

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ParseGrid parses a process grid written as extents joined by "x", x
// first: "8x8", "4x4x4".
func ParseGrid(s string) ([]int, error) {
	parts := strings.Split(strings.TrimSpace(s), "x")
	if len(parts) > 3 {
		return nil, fmt.Errorf("grid %q: at most 3 extents", s)
	}
	g := make([]int, len(parts))
	for i, p := range parts {
		d, err := strconv.Atoi(p)
		if err != nil || d < 1 {
			return nil, fmt.Errorf("grid %q: extent %q is not a positive integer (want a grid such as 8x8 or 4x4x4)", s, p)
		}
		g[i] = d
	}
	return g, nil
}

// cloneGrid returns a copy of g, nil if g is empty.
func cloneGrid(g []int) []int {
	if len(g) == 0 {
		return nil
	}
	return append([]int(nil), g...)
}

func formatGrid(g []int) string {
	s := make([]string, len(g))
	for i, d := range g {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x")
}

// dimsCreate splits n ranks into a d-dimensional grid as balanced as
// possible, largest extent first, as MPI_Dims_create does.
func dimsCreate(n, d int) []int {
	var primes []int
	for m, f := n, 2; m > 1; {
		if f*f > m {
			primes = append(primes, m)
			break
		}
		if m%f == 0 {
			primes = append(primes, f)
			m /= f
		} else {
			f++
		}
	}
	dims := make([]int, d)
	for i := range dims {
		dims[i] = 1
	}
	for i := len(primes) - 1; i >= 0; i-- {
		small := 0
		for j := range dims {
			if dims[j] < dims[small] {
				small = j
			}
		}
		dims[small] *= primes[i]
	}
	sort.Sort(sort.Reverse(sort.IntSlice(dims)))
	return dims
}

// cart is a Cartesian process grid, x fastest.
type cart struct {
	dims     []int
	periodic bool
}

func (c cart) coords(r int) []int {
	x := make([]int, len(c.dims))
	for i, d := range c.dims {
		x[i] = r % d
		r /= d
	}
	return x
}

func (c cart) rank(x []int) int {
	r := 0
	for i := len(c.dims) - 1; i >= 0; i-- {
		r = r*c.dims[i] + x[i]
	}
	return r
}

// neighbour returns the rank one step in direction dir (+1 or -1) along
// axis from r, or -1 if there is none: at a non-periodic edge, or along an
// axis of extent 1 (where a periodic code would only copy locally).
func (c cart) neighbour(r, axis, dir int) int {
	d := c.dims[axis]
	if d == 1 {
		return -1
	}
	x := c.coords(r)
	x[axis] += dir
	if x[axis] < 0 || x[axis] >= d {
		if !c.periodic {
			return -1
		}
		x[axis] = (x[axis] + d) % d
	}
	return c.rank(x)
}

func isPowerOfTwo(n int) bool { return n > 0 && n&(n-1) == 0 }

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}
