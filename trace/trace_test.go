package trace

import (
	"slices"
	"testing"
)

// TestMembersWorld: the world communicator's members are 0..n-1 for any
// n, asked in any order (the shared slice grows, and a smaller n is a
// prefix of it), and an append to them never writes into the slice that
// the next caller gets.
func TestMembersWorld(t *testing.T) {
	var m Meta
	for _, n := range []int{0, 1, 5, 3, 1000, 7, 4097, 2} {
		got := m.Members(WorldComm, n)
		if len(got) != n || cap(got) != n {
			t.Fatalf("Members(world, %d): length %d, capacity %d", n, len(got), cap(got))
		}
		for i, r := range got {
			if r != int32(i) {
				t.Fatalf("Members(world, %d)[%d] = %d", n, i, r)
			}
		}
		_ = append(got, -1)
	}
	if got := m.Members(WorldComm, 8); !slices.Equal(got, []int32{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("Members(world, 8) = %v after appends", got)
	}
}
