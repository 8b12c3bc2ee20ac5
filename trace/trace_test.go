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

// TestMembersMany: a list of many communicators, looked up through its
// index, gives each id's first communicator, nil for an id it does not
// define, and stays right when the list grows or an id is changed in
// place.
func TestMembersMany(t *testing.T) {
	var m Meta
	for i := range 100 {
		m.Comms = append(m.Comms, Comm{ID: uint32(7 * (i + 1) % 101), Members: []int32{int32(i)}})
	}
	m.Comms = append(m.Comms, Comm{ID: 7, Members: []int32{-1}}) // a second 7: the first counts
	for i := range 100 {
		if got := m.Members(uint32(7*(i+1)%101), 100); !slices.Equal(got, []int32{int32(i)}) {
			t.Fatalf("Members(%d) = %v, want [%d]", 7*(i+1)%101, got, i)
		}
	}
	if got := m.Members(0, 100); len(got) != 100 {
		t.Fatalf("Members(world) has %d ranks", len(got))
	}
	if got := m.Members(500, 100); got != nil {
		t.Fatalf("Members(500) = %v for an undefined communicator", got)
	}
	m.Comms[3].ID = 500
	if got := m.Members(500, 100); !slices.Equal(got, []int32{3}) {
		t.Fatalf("Members(500) = %v after the id changed in place", got)
	}
	m.Comms = append(m.Comms, Comm{ID: 600, Members: []int32{9}})
	if got := m.Members(600, 100); !slices.Equal(got, []int32{9}) {
		t.Fatalf("Members(600) = %v after an append", got)
	}
}
