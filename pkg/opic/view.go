package opic

// The greedy policy spends most of its time waiting for memory: every visit
// depends on the cash the previous one handed out, so the loads of a visit
// cannot overlap with the next, as they do under the random policy. Visits
// are very uneven (on the 1M-page benchmark graph the 1% most visited pages
// take half of the visits, the 10% three quarters), so a Run renumbers the
// pages by in-degree, the most linked first: the pages visited most, and
// the cash of the pages most transfers go to, then share cache lines,
// memory pages and tree groups. This takes about 4 + 32/d bytes a link (d
// the mean out-degree) while the Run lasts, and about 15 ms per million
// links. Among pages of equal cash the greedy policy then takes the most
// linked first, then the lowest id (graphs of viewMin pages or more).

// pages are the arrays a Run works on: the state's own, or a renumbered
// copy.
type pages struct {
	off    []uint64
	dst    []uint32
	cash   []float64
	hist   []float64
	visits []uint32
}

// ownPages returns the state's own arrays (the graph compacted).
func (s *State) ownPages() pages {
	return pages{s.g.off, s.g.dst, s.cash, s.hist, s.visits}
}

// viewMin is the fewest pages for which Run renumbers; smaller graphs stay
// in cache anyway. A variable so that tests can renumber small graphs.
var viewMin = 1 << 16

// A view is the state's pages renumbered by in-degree, descending, ties by
// id: view page v is state page old[v].
type view struct {
	pages
	old []uint32
}

// newView renumbers the compacted graph and copies cash, history and
// visits into the new order.
func (s *State) newView() *view {
	n := len(s.cash)
	off, dst := s.g.off, s.g.dst
	deg := make([]uint32, n)
	var most uint32
	for _, j := range dst {
		deg[j]++
		most = max(most, deg[j])
	}
	// A counting sort by in-degree, descending; it keeps id order within
	// a degree, so the result is the same on every run.
	at := make([]uint32, int(most)+2)
	for _, d := range deg {
		at[most-d+1]++
	}
	for d := 1; d < len(at); d++ {
		at[d] += at[d-1]
	}
	v := &view{old: make([]uint32, n)}
	renum := deg // deg[i] is read once, then becomes i's new id
	for i, d := range deg {
		k := at[most-d]
		at[most-d]++
		v.old[k] = uint32(i)
		renum[i] = k
	}
	v.off = make([]uint64, n+1)
	v.dst = make([]uint32, len(dst))
	v.cash = make([]float64, n)
	v.hist = make([]float64, n)
	v.visits = make([]uint32, n)
	adviseHuge(v.dst)
	adviseHuge(v.off)
	adviseHuge(v.cash)
	adviseHuge(v.hist)
	adviseHuge(v.visits)
	var o uint64
	for k, i := range v.old {
		for _, j := range dst[off[i]:off[i+1]] {
			v.dst[o] = renum[j]
			o++
		}
		v.off[k+1] = o
		v.cash[k] = s.cash[i]
		v.hist[k] = s.hist[i]
		v.visits[k] = s.visits[i]
	}
	return v
}

// store copies cash, history and visits back into the state.
func (v *view) store(s *State) {
	for k, i := range v.old {
		s.cash[i] = v.cash[k]
		s.hist[i] = v.hist[k]
		s.visits[i] = v.visits[k]
	}
}
