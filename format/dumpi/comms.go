package dumpi

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
)

// DUMPI's built-in communicator handles (sst-dumpi constants.h).
const (
	commNull  = 1
	commWorld = 2
	commSelf  = 3
)

// Labels of the calls that create, free or describe communicators and
// groups: the calls the communicator pass follows.
const (
	lCommGroup      = 72
	lGroupUnion     = 73
	lGroupIntersect = 74
	lGroupDiff      = 75
	lGroupIncl      = 76
	lGroupExcl      = 77
	lGroupRangeIncl = 78
	lGroupRangeExcl = 79
	lGroupFree      = 80
	lCommSize       = 81
	lCommDup        = 84
	lCommCreate     = 85
	lCommSplit      = 86
	lCommFree       = 87
	lCartCreate     = 99
	lGraphCreate    = 101
	lCartSub        = 111
)

// creates reports whether label creates a communicator that Kairos
// tracks. The pass and the readers must agree on this set: a reader takes
// the n-th result of its rank's list at the n-th such call.
func creates(label int) bool {
	switch label {
	case lCommDup, lCommCreate, lCommSplit, lCartCreate, lGraphCreate, lCartSub:
		return true
	}
	return false
}

// followed reports whether the communicator pass needs label's records.
func followed(label int) bool {
	return creates(label) || label == lCommFree || (label >= lCommGroup && label <= lGroupFree) ||
		label == lWinPost || label == lWinStart
}

// lUse is the pseudo-label of the calls on a communicator handle between
// two changes of what it names (see collectOps): count calls.
const lUse = -1

// commOp is a communicator or group call of one rank, kept by the pass,
// or the use of a communicator handle (lUse).
type commOp struct {
	label          int
	count          int  // lUse: calls
	coll           bool // lUse: one of them a collective
	off            int64
	comm, newComm  int // communicator handles (parent, created)
	group, group2  int
	newGroup       int
	color, key     int64
	size           int64   // Cart/Graph_create: the number of members
	dims           []int32 // Cart_create: the grid's dimensions; Cart_sub: which it keeps
	ranks          []int32 // Group_incl/excl ranks, range triples
	parentRank     int     // rank in the parent communicator (pass)
	members        []int32 // Comm_create: the group's world ranks (pass)
	gid            uint32  // and the group's id (groupTable's)
	resolvedParent uint32
}

// commTable is what the pass learns: the communicators' world members and,
// for each rank, the global id each of its creating calls produced and
// the calls it makes on communicators whose members it does not know.
type commTable struct {
	n       int        // MPI_COMM_WORLD's size
	world   []int32    // its members, made when first needed
	members [][]int32  // global id - 1 -> world ranks in comm rank order
	created [][]uint32 // rank's file (see Trace.files) -> id per creating call (0: none)
	// unknown counts, per rank, the calls on each communicator handle
	// the trace does not create.
	unknown []map[int]int
	// epochs are, per rank, the groups of its MPI_Win_post and
	// MPI_Win_start calls as ids of members (0: a group the pass does not
	// know); epochIDs gives the id of members of each group (groups').
	epochs   [][]uint32
	epochIDs map[uint32]uint32
	// groups are the groups the ranks make, each once.
	groups groupTable
	// carts are the dimensions of the Cartesian communicators, by id: a
	// Cart_sub's members follow from its parent's.
	carts map[uint32][]int32
	// self is, per rank, the id of the communicator of the rank alone
	// that its collectives on MPI_COMM_SELF (or a communicator made from
	// it) are on, 0 where it makes none: one-member collectives, as the
	// OTF2 reader has them.
	self []uint32
}

// collectOps decodes a rank's records and keeps its communicator calls.
func collectOps(d *decoder) (ops []commOp, threads int, err error) {
	use := map[int]int{} // handle -> index in ops of its use since it last changed
	var others map[uint16]bool
	for d.next() {
		c := &d.c
		if c.thread != 0 && !others[c.thread] {
			if others == nil {
				others = map[uint16]bool{}
			}
			others[c.thread] = true
		}
		if !followed(c.label) {
			if h, ok := commArg(c); ok {
				i, seen := use[h]
				if !seen {
					i, use[h] = len(ops), len(ops)
					ops = append(ops, commOp{label: lUse, comm: h})
				}
				_, coll := collectiveKinds[c.label]
				coll = coll || c.label == lFileOpen // of a file
				ops[i].count++
				ops[i].coll = ops[i].coll || coll
			}
			continue
		}
		o := commOpOf(c)
		delete(use, o.newComm)
		if o.label == lCommFree {
			delete(use, o.comm)
		}
		ops = append(ops, o)
	}
	return ops, len(others), d.err
}

// commArg returns the communicator handle a call other than the
// communicator calls names, if it names one other than MPI_COMM_WORLD and
// MPI_COMM_NULL.
func commArg(c *call) (int, bool) {
	i, ok := programs()[c.label].fields["comm"]
	if !ok {
		return 0, false
	}
	h := int(c.v[i])
	return h, h != commWorld && h != commNull
}

func commOpOf(c *call) commOp {
	o := commOp{label: c.label, off: c.off, comm: -1, newComm: -1, group: -1, group2: -1, newGroup: -1}
	get := func(name string) int64 { return c.v[field(c.label, name)] }
	switch c.label {
	case lCommGroup:
		o.comm, o.newGroup = int(get("comm")), int(get("group"))
	case lGroupUnion, lGroupIntersect, lGroupDiff:
		o.group, o.group2, o.newGroup = int(get("group1")), int(get("group2")), int(get("newgroup"))
	case lGroupIncl, lGroupExcl:
		o.group, o.newGroup = int(get("group")), int(get("newgroup"))
		o.ranks = slices.Clone(c.arr[field(c.label, "ranks")])
	case lGroupRangeIncl, lGroupRangeExcl:
		o.group, o.newGroup = int(get("group")), int(get("newgroup"))
		o.ranks = slices.Clone(c.arr[field(c.label, "ranges")])
	case lGroupFree, lWinPost, lWinStart:
		o.group = int(get("group"))
	case lCommFree:
		o.comm = int(get("comm"))
	case lCommDup:
		o.comm, o.newComm = int(get("oldcomm")), int(get("newcomm"))
	case lCommCreate:
		o.comm, o.group, o.newComm = int(get("oldcomm")), int(get("group")), int(get("newcomm"))
	case lCommSplit:
		o.comm, o.newComm = int(get("oldcomm")), int(get("newcomm"))
		o.color, o.key = get("color"), get("key")
	case lCartCreate:
		o.comm, o.newComm = int(get("oldcomm")), int(get("newcomm"))
		o.dims = slices.Clone(c.arr[field(c.label, "dims")])
		o.size = 1
		for _, d := range o.dims {
			o.size *= int64(d)
		}
	case lCartSub:
		o.comm, o.newComm = int(get("oldcomm")), int(get("newcomm"))
		o.dims = slices.Clone(c.arr[field(c.label, "remain_dims")])
	case lGraphCreate:
		o.comm, o.newComm = int(get("oldcomm")), int(get("newcomm"))
		o.size = get("nodes")
	}
	return o
}

// passRank is one rank's state in the communicator pass.
type passRank struct {
	world   int // its rank in MPI_COMM_WORLD
	ops     []commOp
	next    int
	waiting bool
	comms   map[int]uint32 // handle -> global id
	groups  map[int]uint32 // handle -> group (groupTable's id)
	created []uint32
	epochs  []uint32
}

// resolveComms matches the communicator-creating calls of all ranks (ops
// per rank, in program order) and returns the communicators they create.
//
// A creating call is collective over its parent communicator, so the k-th
// creating call on a parent is the same operation on every member. The
// pass advances each rank to its next creating call and completes a call
// once every member of the parent waits in one; a rank whose next call is
// on a communicator it does not know (created by a call Kairos does not
// track, or before tracing began) gets no communicator from it.
//
// ops are those of the ranks that have a file, world ranks ranks[i] of
// n: the ranks without a file cost nothing. In a partial trace (fewer
// files than n) a call whose parent has
// such members never completes that way. Once nothing else progresses,
// the calls that say their members without the others' (Comm_dup,
// Comm_create, Cart_create, Graph_create) complete with the members
// present; a Comm_split, whose members depend on the others' colors,
// gives no communicator.
func resolveComms(ops [][]commOp, world []int, n int) (*commTable, error) {
	partial := len(ops) < n
	t := &commTable{n: n, created: make([][]uint32, len(ops)), unknown: make([]map[int]int, len(ops)), epochs: make([][]uint32, len(ops)),
		self: make([]uint32, len(ops))}
	ranks := make([]passRank, len(ops))
	for r := range ranks {
		// Only a rank with calls of its own writes its maps.
		ranks[r] = passRank{world: world[r], ops: ops[r]}
		if len(ops[r]) > 0 {
			ranks[r].comms, ranks[r].groups = map[int]uint32{}, map[int]uint32{}
		}
	}
	pending := map[uint32][]int{} // parent id -> waiting ranks
	for {
		progress := false
		for r := range ranks {
			if t.advance(ranks, r, pending) {
				progress = true
			}
		}
		// In id order, so that communicator ids do not depend on map
		// iteration.
		for _, parent := range slices.Sorted(maps.Keys(pending)) {
			waiting := pending[parent]
			if done, err := t.complete(ranks, parent, waiting); err != nil {
				return nil, err
			} else if done {
				delete(pending, parent)
				progress = true
			}
		}
		if !progress && partial {
			progress = t.completeStuck(ranks, pending)
		}
		if !progress {
			break
		}
	}
	for r := range ranks {
		if ranks[r].next < len(ranks[r].ops) {
			o := ranks[r].ops[ranks[r].next]
			return nil, fmt.Errorf("rank %d: byte %d: %s on communicator %d is not matched by the other members of that communicator (communicator-creating calls differ across ranks)",
				ranks[r].world, o.off, programs()[o.label].name, o.comm)
		}
		t.created[r] = ranks[r].created
		t.epochs[r] = ranks[r].epochs
	}
	return t, nil
}

// groupID returns the id of the members of group g, a post or start
// call's (0 for none or an empty group), a new one the first time they are
// seen: the trace's Meta.Comms holds groups as communicators.
func (t *commTable) groupID(g uint32) uint32 {
	members := t.groups.members(g)
	if len(members) == 0 {
		return 0
	}
	if id, ok := t.epochIDs[g]; ok {
		return id
	}
	t.members = append(t.members, members)
	id := uint32(len(t.members))
	if t.epochIDs == nil {
		t.epochIDs = map[uint32]uint32{}
	}
	t.epochIDs[g] = id
	return id
}

// advance runs rank r's local calls up to its next creating call, which it
// then registers as waiting on its parent. It reports progress.
func (t *commTable) advance(ranks []passRank, r int, pending map[uint32][]int) bool {
	pr := &ranks[r]
	progress := false
	for !pr.waiting && pr.next < len(pr.ops) {
		o := &pr.ops[pr.next]
		if o.label == lUse {
			id, ok := t.commID(ranks, r, o.comm)
			switch {
			case !ok:
				if t.unknown[r] == nil {
					t.unknown[r] = map[int]int{}
				}
				t.unknown[r][o.comm] += o.count
			case id == selfID && o.coll && t.self[r] == 0:
				t.members = append(t.members, []int32{int32(pr.world)})
				t.self[r] = uint32(len(t.members))
			}
			pr.next++
			progress = true
			continue
		}
		if !creates(o.label) {
			t.local(ranks, r, o)
			pr.next++
			progress = true
			continue
		}
		parent, ok := t.commID(ranks, r, o.comm)
		if !ok || parent == selfID {
			// A communicator made from MPI_COMM_SELF is the rank alone
			// (PETSc duplicates it): selfID too.
			id := uint32(0)
			if ok && o.newComm >= 0 {
				id = selfID
				pr.comms[o.newComm] = selfID
			}
			pr.created = append(pr.created, id)
			pr.next++
			progress = true
			continue
		}
		o.resolvedParent = parent
		members := t.membersOf(parent)
		o.parentRank = slices.Index(members, int32(pr.world))
		if o.label == lCommCreate {
			o.gid = pr.groups[o.group]
			o.members = t.groups.members(o.gid)
		}
		pr.waiting = true
		pending[parent] = append(pending[parent], r)
		progress = true
	}
	return progress
}

// selfID stands for MPI_COMM_SELF in the pass.
const selfID = ^uint32(0)

// commID returns the global id of rank r's communicator handle h.
func (t *commTable) commID(ranks []passRank, r, h int) (uint32, bool) {
	switch h {
	case commWorld:
		return 0, true
	case commSelf:
		return selfID, true
	}
	id, ok := ranks[r].comms[h]
	return id, ok
}

// membersOf returns the world ranks of global communicator id, not to
// be modified.
func (t *commTable) membersOf(id uint32) []int32 {
	if id != 0 {
		return t.members[id-1]
	}
	if t.world == nil {
		t.world = make([]int32, t.n)
		for i := range t.world {
			t.world[i] = int32(i)
		}
	}
	return t.world
}

// local applies a group call or Comm_free of rank r.
func (t *commTable) local(ranks []passRank, r int, o *commOp) {
	pr := &ranks[r]
	switch o.label {
	case lCommFree:
		delete(pr.comms, o.comm)
	case lGroupFree:
		delete(pr.groups, o.group)
	case lWinPost, lWinStart:
		pr.epochs = append(pr.epochs, t.groupID(pr.groups[o.group]))
	case lCommGroup:
		if id, ok := t.commID(ranks, r, o.comm); ok {
			if id == selfID {
				pr.groups[o.newGroup] = t.groups.intern([]int32{int32(pr.world)})
			} else {
				pr.groups[o.newGroup] = t.groups.ofComm(id, t.membersOf(id))
			}
		}
	default:
		g, ok := pr.groups[o.group]
		if !ok {
			delete(pr.groups, o.newGroup)
			return
		}
		if ng := t.groups.op(o, g, pr.groups[o.group2]); ng != 0 {
			pr.groups[o.newGroup] = ng
		} else {
			delete(pr.groups, o.newGroup)
		}
	}
}

// complete finishes the creating call the ranks waiting on parent are in,
// once every member of parent waits.
func (t *commTable) complete(ranks []passRank, parent uint32, waiting []int) (bool, error) {
	members := t.membersOf(parent)
	if len(waiting) < len(members) {
		return false, nil
	}
	label := ranks[waiting[0]].ops[ranks[waiting[0]].next].label
	for _, r := range waiting {
		if o := ranks[r].ops[ranks[r].next]; o.label != label {
			return false, fmt.Errorf("rank %d: byte %d: %s on communicator %d while rank %d calls %s on it: communicator-creating calls differ across ranks",
				ranks[r].world, o.off, programs()[o.label].name, parent, ranks[waiting[0]].world, programs()[label].name)
		}
	}
	// Group the members by the communicator they get: color for
	// Comm_split, group for Comm_create, first size ranks for Cart and
	// Graph, everyone for Comm_dup.
	type member struct {
		r    int
		key  int64
		prnk int
	}
	groups := map[string][]member{}
	var order []string
	for _, r := range waiting {
		o := &ranks[r].ops[ranks[r].next]
		k, ok := t.newCommKey(o, members)
		if !ok {
			continue
		}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], member{r, o.key, o.parentRank})
	}
	got := map[int]uint32{}
	for _, k := range order {
		g := groups[k]
		sort.SliceStable(g, func(i, j int) bool {
			if g[i].key != g[j].key {
				return g[i].key < g[j].key
			}
			return g[i].prnk < g[j].prnk
		})
		w := make([]int32, len(g))
		for i, m := range g {
			w[i] = int32(ranks[m.r].world)
		}
		first := &ranks[g[0].r].ops[ranks[g[0].r].next]
		if label == lCommCreate {
			// A group keeps its own order.
			w = slices.Clone(first.members)
		}
		t.members = append(t.members, w)
		id := uint32(len(t.members))
		t.setCart(id, first)
		for _, m := range g {
			got[m.r] = id
		}
	}
	for _, r := range waiting {
		pr := &ranks[r]
		o := &pr.ops[pr.next]
		id := got[r]
		pr.created = append(pr.created, id)
		if id != 0 {
			pr.comms[o.newComm] = id
		}
		pr.next++
		pr.waiting = false
	}
	return true, nil
}

// completeStuck completes, in a partial trace, the creating calls that
// wait for members without a file (see resolveComms). It reports
// progress.
func (t *commTable) completeStuck(ranks []passRank, pending map[uint32][]int) bool {
	if len(pending) == 0 {
		return false
	}
	for _, parent := range slices.Sorted(maps.Keys(pending)) {
		members := t.membersOf(parent)
		ids := map[string]uint32{} // label and members -> id
		for _, r := range pending[parent] {
			pr := &ranks[r]
			o := &pr.ops[pr.next]
			var w []int32
			switch o.label {
			case lCommDup:
				w = members
			case lCommCreate:
				w = o.members
			case lCartCreate, lGraphCreate:
				if o.size >= 0 && int(o.size) <= len(members) {
					w = members[:o.size]
				}
			}
			created := uint32(0)
			if slices.Contains(w, int32(pr.world)) && o.newComm != commNull && o.newComm >= 0 {
				k := fmt.Sprint(o.label, w)
				if ids[k] == 0 {
					t.members = append(t.members, slices.Clone(w))
					ids[k] = uint32(len(t.members))
				}
				created = ids[k]
				pr.comms[o.newComm] = created
			}
			pr.created = append(pr.created, created)
			pr.next++
			pr.waiting = false
		}
		delete(pending, parent)
	}
	return true
}

// newCommKey says which new communicator rank o's call joins, false for
// none (MPI_COMM_NULL, MPI_UNDEFINED color, outside the topology).
func (t *commTable) newCommKey(o *commOp, members []int32) (string, bool) {
	if o.newComm == commNull || o.newComm < 0 {
		return "", false
	}
	switch o.label {
	case lCommSplit:
		return fmt.Sprint(o.color), true
	case lCommCreate:
		if o.members == nil {
			return "", false
		}
		return strconv.FormatUint(uint64(o.gid), 10), true // one id a group
	case lCartCreate, lGraphCreate:
		return "", int64(o.parentRank) < o.size
	case lCartSub:
		coords, ok := cartCoords(t.carts[o.resolvedParent], o.parentRank)
		if !ok || len(o.dims) != len(coords) {
			return "", false
		}
		var dropped []int64 // the coordinates in the dimensions it drops: its sub-grid
		for i, keep := range o.dims {
			if keep == 0 {
				dropped = append(dropped, coords[i])
			}
		}
		return fmt.Sprint(dropped), true
	}
	return "", true
}

// cartCoords returns the coordinates of rank r in a grid of dims, the
// last dimension varying fastest (MPI's row-major order), false if dims
// is no grid of more than r places.
func cartCoords(dims []int32, r int) ([]int64, bool) {
	if len(dims) == 0 || r < 0 {
		return nil, false
	}
	coords := make([]int64, len(dims))
	rest := int64(r)
	for i := len(dims) - 1; i >= 0; i-- {
		if dims[i] <= 0 {
			return nil, false
		}
		coords[i] = rest % int64(dims[i])
		rest /= int64(dims[i])
	}
	return coords, rest == 0
}

// setCart records the dimensions of communicator id if call o makes a
// Cartesian one: a Cart_create's, or the dimensions a Cart_sub keeps of
// its parent's.
func (t *commTable) setCart(id uint32, o *commOp) {
	var dims []int32
	switch o.label {
	case lCartCreate:
		dims = o.dims
	case lCartSub:
		parent := t.carts[o.resolvedParent]
		if len(parent) != len(o.dims) {
			return
		}
		for i, keep := range o.dims {
			if keep != 0 {
				dims = append(dims, parent[i])
			}
		}
	default:
		return
	}
	if t.carts == nil {
		t.carts = map[uint32][]int32{}
	}
	t.carts[id] = dims
}
