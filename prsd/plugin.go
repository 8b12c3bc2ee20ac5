package prsd

import (
	"math/bits"
	"slices"
)

// A plug-in is Bahmani and Mueller's user plug-in function: a rank
// function b(me) that gives, for each rank, the end-point a code computes
// from its own rank where relative end-points differ across all ranks (NAS
// CG's transpose partner). Signatures leave out the end-points it
// explains, and a compressed trace encodes end-points relative to b(me),
// so that the ranks share their series.
type pluginFunc func(me, ranks int32) int32

// pluginFuncs are the plug-ins by name.
var pluginFuncs = map[string]pluginFunc{
	"cg": CGTranspose,
}

// PluginNames returns the names of the plug-ins, sorted.
func PluginNames() []string {
	var names []string
	for n := range pluginFuncs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// IsPlugin reports whether name is a plug-in.
func IsPlugin(name string) bool { _, ok := pluginFuncs[name]; return ok }

// CGTranspose is NAS CG's transpose exchange partner (exch_proc, seed 001
// Section 5.1) of rank me of ranks, a power of two: the ranks form a grid
// of nprows × npcols, npcols = nprows or 2 nprows, and the partner is the
// rank at the transposed position. Other numbers of ranks have no grid:
// me itself.
func CGTranspose(me, ranks int32) int32 {
	if ranks <= 0 || ranks&(ranks-1) != 0 {
		return me
	}
	l2 := bits.TrailingZeros32(uint32(ranks))
	nprows := int32(1) << (l2 / 2)
	npcols := ranks / nprows
	if npcols == nprows {
		return me%nprows*nprows + me/nprows
	}
	h := me / 2
	return 2*(h%nprows*nprows+h/nprows) + me%2
}
