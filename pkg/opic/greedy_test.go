package opic

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveGreedy is the greedy policy written plainly: scan for the page with
// most cash (among equals the first in rank order, the lowest id when
// rank is nil), visit it, hand on its cash.
func naiveGreedy(n int, links [][]uint32, d float64, steps int, rank []uint32) (hist, cash []float64, order []uint32) {
	cash = make([]float64, n)
	hist = make([]float64, n)
	for i := range cash {
		cash[i] = 1 / float64(n)
	}
	for range steps {
		best := 0
		for i := range cash {
			if cash[i] > cash[best] || cash[i] == cash[best] && rank != nil && rank[i] < rank[best] {
				best = i
			}
		}
		c := cash[best]
		order = append(order, uint32(best))
		hist[best] += c
		cash[best] = 0
		tele := c
		if l := links[best]; len(l) > 0 {
			share := d * c / float64(len(l))
			for _, j := range l {
				cash[j] += share
			}
			tele = c - share*float64(len(l))
		}
		for i := range cash {
			cash[i] += tele / float64(n)
		}
	}
	return hist, cash, order
}

// The tournament tree and the offset bookkeeping give the same visits and
// the same cash and history as the plain greedy algorithm, on the pages as
// they are and renumbered by in-degree as large graphs are.
func TestGreedyMatchesNaive(t *testing.T) {
	t.Run("ids", func(t *testing.T) { testGreedyMatchesNaive(t, false) })
	t.Run("renumbered", func(t *testing.T) {
		defer func(m int) { viewMin = m }(viewMin)
		viewMin = 1
		testGreedyMatchesNaive(t, true)
	})
}

func testGreedyMatchesNaive(t *testing.T, renumbered bool) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 15, 16, 17, 300, 1000} {
		s := New(0.85)
		for i := range n {
			s.AddPage([]byte{byte(i), byte(i >> 8)})
		}
		links := make([][]uint32, n)
		for i := range n {
			for range rng.IntN(8) {
				j := uint32(rng.IntN(n))
				s.AddLink(uint32(i), j)
			}
		}
		s.Compact()
		for i := range n {
			links[i] = s.Links(uint32(i))
		}
		steps := 5*n + 37
		var rank []uint32
		if renumbered {
			rank = inDegreeRank(links)
		}
		hist, cash, order := naiveGreedy(n, links, 0.85, steps, rank)
		s.Reset()
		// Run in pieces so that the tree is rebuilt and base folded midway.
		for s.Steps() < uint64(steps) {
			s.Run(Greedy, Stop{Steps: min(uint64(n)/3+1, uint64(steps)-s.Steps())}, 0)
		}
		var bad int
		for i := range n {
			p := s.Page(uint32(i))
			if !close(p.Cash, cash[i]) || !close(p.History, hist[i]) {
				bad++
				if bad < 5 {
					t.Errorf("n=%d page %d: cash %g history %g, want %g %g", n, i, p.Cash, p.History, cash[i], hist[i])
				}
			}
		}
		var visits uint32
		for i := range n {
			visits += s.Page(uint32(i)).Visits
		}
		if visits != uint32(len(order)) {
			t.Errorf("n=%d: %d visits, want %d", n, visits, len(order))
		}
	}
}

// inDegreeRank ranks pages by in-degree, descending, then by id.
func inDegreeRank(links [][]uint32) []uint32 {
	n := len(links)
	deg := make([]int, n)
	for _, l := range links {
		for _, j := range l {
			deg[j]++
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return deg[b] - deg[a] })
	rank := make([]uint32, n)
	for r, i := range order {
		rank[i] = uint32(r)
	}
	return rank
}

func close(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*(1+max(a, b, -a, -b))
}

func TestMaxTreeTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 5, 16, 17, 255, 256, 257, 5000} {
		keys := make([]float64, n)
		for i := range keys {
			keys[i] = rng.Float64()
		}
		tr := newMaxTree(keys)
		for range 3 * n {
			j := uint32(rng.IntN(n))
			if rng.IntN(2) == 0 {
				keys[j] += rng.Float64() * 0.1
				tr.raised(j, keys[j])
			} else {
				keys[j] = rng.Float64() * 0.5
				tr.lowered(j)
			}
			best := 0
			for i := range keys {
				if keys[i] > keys[best] {
					best = i
				}
			}
			if got := tr.top(); keys[got] != keys[best] {
				t.Fatalf("n=%d: top %d (%g), want %d (%g)", n, got, keys[got], best, keys[best])
			}
		}
	}
}
