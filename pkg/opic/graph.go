package opic

import "slices"

// Graph is a directed graph on dense page ids, held as compressed sparse
// rows (one offsets array, one targets array: 4 bytes an edge) that can still
// grow online: links added or replaced since the last Compact sit in a small
// side table and Compact folds them in. Every page's links are kept sorted
// and without duplicates or self-loops, the conventions of PageRank.
type Graph struct {
	n    int
	off  []uint64 // off[i]..off[i+1] are the links of page i < len(off)-1
	dst  []uint32
	over map[uint32][]uint32 // links replaced since the last Compact
	pend []uint32            // added edges, src and dst pairs, not yet compacted
}

// Len returns the number of pages.
func (g *Graph) Len() int { return g.n }

// Edges returns the number of links in the compacted part plus the pending
// ones (duplicates among pending links are counted until Compact).
func (g *Graph) Edges() int {
	e := len(g.dst) + len(g.pend)/2
	for id, l := range g.over {
		e += len(l) - g.csrDegree(id)
	}
	return e
}

// Grow makes room for pages up to n.
func (g *Graph) Grow(n int) {
	if n > g.n {
		g.n = n
	}
}

func (g *Graph) csrDegree(id uint32) int {
	if int(id)+1 >= len(g.off) {
		return 0
	}
	return int(g.off[id+1] - g.off[id])
}

// Out returns the links of page id as of the last Compact or SetLinks; the
// slice must not be modified. Pending AddEdge links are not seen until
// Compact.
func (g *Graph) Out(id uint32) []uint32 {
	if g.over != nil {
		if l, ok := g.over[id]; ok {
			return l
		}
	}
	if int(id)+1 >= len(g.off) {
		return nil
	}
	return g.dst[g.off[id]:g.off[id+1]]
}

// AddEdge adds the link src -> dst; Compact makes it visible.
func (g *Graph) AddEdge(src, dst uint32) {
	g.Grow(int(max(src, dst)) + 1)
	g.pend = append(g.pend, src, dst)
}

// SetLinks replaces the links of page id, visible at once. links is copied,
// sorted and deduplicated; a self-link is dropped.
func (g *Graph) SetLinks(id uint32, links []uint32) {
	l := slices.Clone(links)
	for _, d := range l {
		g.Grow(int(d) + 1)
	}
	g.Grow(int(id) + 1)
	l = cleanLinks(id, l)
	if g.over == nil {
		g.over = make(map[uint32][]uint32)
	}
	g.over[id] = l
	// Many replaced lists make Out slower and memory larger: fold them in.
	if len(g.over) > 1024 && len(g.over) > len(g.off)/8 {
		g.Compact()
	}
}

// cleanLinks sorts l, drops duplicates and the self-link of src.
func cleanLinks(src uint32, l []uint32) []uint32 {
	slices.Sort(l)
	l = slices.Compact(l)
	if i, ok := slices.BinarySearch(l, src); ok {
		l = slices.Delete(l, i, i+1)
	}
	return l
}

// Compact folds replaced and pending links into the rows.
func (g *Graph) Compact() {
	if len(g.over) == 0 && len(g.pend) == 0 && len(g.off) == g.n+1 {
		return
	}
	// Count the pending links of each source, then place them by a counting
	// sort: no per-page slices, 8 bytes a pending edge at most.
	cnt := make([]uint64, g.n+1)
	for i := 0; i < len(g.pend); i += 2 {
		cnt[g.pend[i]+1]++
	}
	for i := 1; i <= g.n; i++ {
		cnt[i] += cnt[i-1]
	}
	sorted := make([]uint32, len(g.pend)/2)
	fill := slices.Clone(cnt[:g.n])
	for i := 0; i < len(g.pend); i += 2 {
		s := g.pend[i]
		sorted[fill[s]] = g.pend[i+1]
		fill[s]++
	}
	fill = nil
	g.pend = nil

	off := make([]uint64, g.n+1)
	dst := make([]uint32, 0, len(g.dst)+len(sorted))
	for id := 0; id < g.n; id++ {
		start := len(dst)
		dst = append(dst, g.Out(uint32(id))...)
		dst = append(dst, sorted[cnt[id]:cnt[id+1]]...)
		row := cleanLinks(uint32(id), dst[start:])
		dst = dst[:start+len(row)]
		off[id+1] = uint64(len(dst))
	}
	g.off, g.dst, g.over = off, slices.Clip(dst), nil
}
