package opic

import "math"

// maxTree is the indexed max-priority queue of the greedy policy: a 16-ary
// tournament tree over the cash array. Level 0 holds the largest cash of
// every 16 consecutive pages, each level above the largest of 16 entries
// below, the last level one entry.
//
// It replaced an indexed 4-ary max-heap (about 3x slower on the 1M-page
// benchmark): a page's slot in the tree is fixed by its id, so raising its
// cash needs no position table, and level 0 stays in cache. Every entry
// keeps the id of its maximum, so the top is read in O(1). Raising a page's
// cash touches its own cash and, only when it beats its group's maximum,
// the levels above; cash only grows between visits, so that is rare. Keys
// are in the offset form of State.cash: a uniform shift keeps the order.
//
// A level stores its keys as order-preserving integers (sortKey), apart
// from the ids: a group's maximum is then found with conditional moves
// instead of unpredictable branches, and the 8-byte keys of level 0 (half
// a megabyte for a million pages) stay in the core's cache for the check
// every cash transfer makes.
type maxTree struct {
	leaves []float64
	keys   [][]uint64 // keys[k][g]: the largest key of group g below level k
	ids    [][]uint32 // ids[k][g]: the page that holds it
}

const fan = 16

// sortKey maps a float64 to an integer of the same order (for numbers:
// -0 sorts below +0, which the tree never needs to tell apart).
func sortKey(v float64) uint64 {
	b := math.Float64bits(v)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

func newMaxTree(leaves []float64) *maxTree {
	t := &maxTree{leaves: leaves}
	t.build()
	return t
}

func (t *maxTree) build() {
	n := len(t.leaves)
	t.keys, t.ids = t.keys[:0], t.ids[:0]
	for k := 0; ; k++ {
		m := (n + fan - 1) / fan
		keys, ids := make([]uint64, m), make([]uint32, m)
		t.keys, t.ids = append(t.keys, keys), append(t.ids, ids)
		for g := range keys {
			keys[g], ids[g] = t.groupMax(k, g)
		}
		if m <= 1 {
			return
		}
		n = m
	}
}

// groupMax returns the largest key of group g of the level below level k
// (the leaves for k = 0) and its page, the first among equals.
func (t *maxTree) groupMax(k, g int) (uint64, uint32) {
	start := g * fan
	if k == 0 {
		if l := t.leaves[start:min(start+fan, len(t.leaves))]; len(l) == fan {
			key, at := maxLeaf((*[fan]float64)(l))
			return key, uint32(start + at)
		}
		best, at := sortKey(t.leaves[start]), start
		for i := start + 1; i < len(t.leaves); i++ {
			if v := sortKey(t.leaves[i]); v > best {
				best, at = v, i
			}
		}
		return best, uint32(at)
	}
	below := t.keys[k-1]
	l := below[start:min(start+fan, len(below))]
	if len(l) == fan {
		key, at := maxKey((*[fan]uint64)(l))
		return key, t.ids[k-1][start+at]
	}
	best, at := l[0], 0
	for i := 1; i < len(l); i++ {
		if v := l[i]; v > best {
			best, at = v, i
		}
	}
	return best, t.ids[k-1][start+at]
}

// maxKey and maxLeaf scan a whole group. Over a fixed-size array the
// compiler turns the comparisons into conditional moves (a mispredicted
// branch at every new maximum cost more than the scan), and two chains, one
// per half, halve the length of the chain of dependent moves: together
// about twice as fast as a plain loop, the largest part of a visit.
func maxKey(l *[fan]uint64) (uint64, int) {
	b, at := l[0], 0
	c, ct := l[fan/2], fan/2
	for i := 1; i < fan/2; i++ {
		if v := l[i]; v > b {
			b, at = v, i
		}
		if v := l[i+fan/2]; v > c {
			c, ct = v, i+fan/2
		}
	}
	if c > b {
		b, at = c, ct
	}
	return b, at
}

func maxLeaf(l *[fan]float64) (uint64, int) {
	b, at := sortKey(l[0]), 0
	c, ct := sortKey(l[fan/2]), fan/2
	for i := 1; i < fan/2; i++ {
		if v := sortKey(l[i]); v > b {
			b, at = v, i
		}
		if v := sortKey(l[i+fan/2]); v > c {
			c, ct = v, i+fan/2
		}
	}
	if c > b {
		b, at = c, ct
	}
	return b, at
}

// top returns the page with most cash.
func (t *maxTree) top() uint32 { return t.ids[len(t.ids)-1][0] }

// raised records that leaf j grew to v and reports whether j is now the
// top. Among equal keys the lower id stays ahead, as in groupMax, so that
// the order in which pages are raised does not matter.
func (t *maxTree) raised(j uint32, v float64) bool {
	key := sortKey(v)
	g := int(j)
	for k, keys := range t.keys {
		g /= fan
		if keys[g] > key || keys[g] == key && t.ids[k][g] < j {
			return false
		}
		keys[g] = key
		t.ids[k][g] = j
	}
	return true
}

// lowered records that leaf j shrank.
func (t *maxTree) lowered(j uint32) {
	g := int(j) / fan
	for k, keys := range t.keys {
		key, id := t.groupMax(k, g)
		ids := t.ids[k]
		if keys[g] == key && ids[g] == id {
			return
		}
		keys[g], ids[g] = key, id
		g /= fan
	}
}
