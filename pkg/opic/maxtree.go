package opic

// maxTree is the indexed max-priority queue of the greedy policy: a 16-ary
// tournament tree over the cash array. Level 0 holds the largest cash of
// every 16 consecutive pages, each level above the largest of 16 entries
// below, the last level one entry.
//
// It replaced an indexed 4-ary max-heap (about 3x slower on the 1M-page
// benchmark): a page's slot in the tree is fixed by its id, so raising its
// cash needs no position table, and level 0 (n/16 entries, 1 MB for a
// million pages) stays in cache. Every entry keeps the id of its maximum,
// so the top is read in O(1). Raising a page's cash touches its own cash
// and, only when it beats its group's maximum, the levels above; cash only
// grows between visits, so that is rare. Keys are in the offset form of
// State.cash: a uniform shift keeps the order.
type maxTree struct {
	leaves []float64
	levels [][]entry
}

// entry is the largest key of a group and the page that holds it, so that
// the top is found without a descent.
type entry struct {
	v  float64
	id uint32
}

const fan = 16

func newMaxTree(leaves []float64) *maxTree {
	t := &maxTree{leaves: leaves}
	t.build()
	return t
}

func (t *maxTree) build() {
	n := len(t.leaves)
	k := 0
	for {
		m := (n + fan - 1) / fan
		if k == len(t.levels) {
			t.levels = append(t.levels, make([]entry, m))
		}
		lv := t.levels[k]
		for g := range lv {
			lv[g] = t.groupMax(k, g)
		}
		if m <= 1 {
			t.levels = t.levels[:k+1]
			return
		}
		n = m
		k++
	}
}

// groupMax returns the largest entry of group g of the level below level k
// (the leaves for k = 0), the first among equals.
func (t *maxTree) groupMax(k, g int) entry {
	start := g * fan
	if k == 0 {
		end := min(start+fan, len(t.leaves))
		best := start
		for i := start + 1; i < end; i++ {
			if t.leaves[i] > t.leaves[best] {
				best = i
			}
		}
		return entry{t.leaves[best], uint32(best)}
	}
	below := t.levels[k-1]
	end := min(start+fan, len(below))
	best := below[start]
	for _, e := range below[start+1 : end] {
		if e.v > best.v {
			best = e
		}
	}
	return best
}

// top returns the page with most cash.
func (t *maxTree) top() uint32 { return t.levels[len(t.levels)-1][0].id }

// raised records that leaf j grew to v and reports whether j is now the
// top.
func (t *maxTree) raised(j uint32, v float64) bool {
	g := int(j)
	for _, lv := range t.levels {
		g /= fan
		if lv[g].v >= v {
			return false
		}
		lv[g] = entry{v, j}
	}
	return true
}

// lowered records that leaf j shrank.
func (t *maxTree) lowered(j uint32) {
	g := int(j) / fan
	for k, lv := range t.levels {
		m := t.groupMax(k, g)
		if lv[g] == m {
			return
		}
		lv[g] = m
		g /= fan
	}
}
