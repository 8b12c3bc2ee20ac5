package rsd

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"kairos/prsd"
	"kairos/trace"
)

// noisy returns a generator's trace of ranks ranks, with 5% noise and
// 10% imbalance.
func noisy(t testing.TB, kind string, ranks, iterations int) trace.Source {
	t.Helper()
	return genNoisy(t, kind, ranks, iterations, 0.05)
}

// TestIndexedGroups: a noisy run's ranks fall into a call's timing
// groups at random; version 6 writes such groups as each rank's index,
// in a smaller file than their ranklists (version 5), whose every rank
// reads the same events, which encodes back to the same bytes.
func TestIndexedGroups(t *testing.T) {
	for _, c := range []struct {
		name              string
		kind              string
		ranks, iterations int
		eps               float64
	}{
		{"stencil 8x8", "stencil2d", 64, 200, 0.11},
		{"stencil 16x16", "stencil2d", 256, 200, 0.11},
		{"CG 128", "cg", 128, 10, 0.2},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := noisy(t, c.kind, c.ranks, c.iterations)
			tr, err := prsd.Build(src, nil, prsd.Options{TimeError: c.eps, Histograms: true})
			if err != nil {
				t.Fatal(err)
			}
			b6 := mustEncode(t, tr)
			b5, _, _, err := encode(tr, 5)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes with indexes, %d with ranklists", len(b6), len(b5))
			if len(b6) >= len(b5) {
				t.Errorf("%d bytes with indexes, %d with ranklists (version 5)", len(b6), len(b5))
			}
			back6, err := Decode(b6)
			if err != nil {
				t.Fatal(err)
			}
			back5, err := Decode(b5)
			if err != nil {
				t.Fatal(err)
			}
			if same, err := trace.SameReplay(back5, back6); !same || err != nil {
				t.Errorf("the ranks read other events from the indexes than from the ranklists (%v)", err)
			}
			if err := prsd.Verify(src, back6); err != nil {
				t.Error(err)
			}
			if !bytes.Equal(mustEncode(t, back6), b6) {
				t.Error("the decoded trace encodes to other bytes")
			}
		})
	}
}

// tagged returns a trace of 16 ranks that each send once, with tag 0 or
// 1 at random (bits of a constant): the call's two groups of parameters,
// scattered, are written as the ranks' indexes. It returns the trace,
// built, its file and the cluster's items with the offset of the index
// vector in them (after the groups' count).
func tagged(t testing.TB) (*prsd.Trace, []byte, []byte, int) {
	t.Helper()
	src := trace.New(16, trace.NewMeta())
	const bits = 0x6b2d
	want := []byte{2<<1 | 1} // two groups, indexed
	for r := range 16 {
		e := trace.NewEvent(trace.Send)
		tag := bits >> r & 1
		e.Partner, e.Tag = int32(r^1), int32(tag)
		src.Ranks[r].Append(&e)
		want = append(want, byte(tag)+1)
	}
	tr, err := prsd.Build(src, nil, prsd.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	cl := &tr.Clusters[0]
	items := newItemsWriter(siteTable(tr, make([][]byte, len(tr.Clusters))), cl.Ranks.Ranks(), Version).cluster(nil, cl.Items)
	at := bytes.Index(items, want)
	if at < 0 {
		t.Fatalf("no index vector %v in the items %v", want, items)
	}
	return tr, mustEncode(t, tr), items, at + 1
}

// TestIndexedGroupsErrors: an index above the call's group count, a
// vector of indexes cut short, a group that no index names, an index
// vector of fewer than two groups, are refused with their byte offset.
func TestIndexedGroupsErrors(t *testing.T) {
	tr, good, items, at := tagged(t)
	if _, err := Decode(good); err != nil {
		t.Fatal(err)
	}
	head := append(appendRanklist(nil, tr.Clusters[0].Ranks), formItems)
	cluster := func(items []byte) []byte {
		return withCluster(t, good, 0, append(bytes.Clone(head), items...))
	}
	with := func(i int, b ...byte) []byte {
		c := bytes.Clone(items)
		copy(c[i:], b)
		return cluster(c)
	}
	if _, err := Decode(cluster(items)); err != nil {
		t.Fatalf("the items as they are: %v", err)
	}
	off := len(head) + at // the vector's, in the cluster's block, which the errors name
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"index above the count", with(at+3, 3), fmt.Sprintf("byte %d: group index 3 for rank 3, expected 0 to 2", off+3)},
		{"truncated", cluster(items[:at+5]), fmt.Sprintf("byte %d: the group indexes of 16 ranks, in the 5 bytes left", off)},
		{"a group of none", with(at, bytes.Repeat([]byte{1}, 16)...), fmt.Sprintf("byte %d: the ranks' indexes name no rank of group 1, of 2", off)},
		{"one group", with(at-1, 1<<1|1), fmt.Sprintf("byte %d: the ranks' indexes of 1 group, expected at least 2", off-1)},
	} {
		_, err := Decode(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestEntropyBytes: the indexes' estimated size once compressed is their
// count times their order-0 entropy, in bytes, rounded up.
func TestEntropyBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		idx  []uint64
		k    int
		want int
	}{
		{"one group", []uint64{1, 1, 1, 1, 1, 1, 1, 1}, 2, 0},
		{"two alike", []uint64{1, 2, 1, 2, 1, 2, 1, 2}, 2, 1},
		{"four alike over 64", slices.Repeat([]uint64{1, 2, 3, 4}, 16), 4, 16},
		{"ranks of none", []uint64{0, 0, 0, 0, 1, 2, 1, 2}, 2, 2},
	} {
		if got := entropyBytes(c.idx, c.k); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
}
