// Package ref holds the yardsticks of opic's tests: PageRank by gonum's
// network.PageRankSparse on the same graph, and the distances between two
// rankings (L1, Spearman's rank correlation, top-k overlap).
package ref

import (
	"math"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/network"
)

// Out is a graph given by the links of each page id in [0, N).
type Out interface {
	Len() int
	Links(id uint32) []uint32
}

// PageRank returns gonum's PageRankSparse of g with damping d, iterated to
// tolerance tol, normalised to sum 1.
func PageRank(g Out, d, tol float64) []float64 {
	ranks := network.PageRankSparse(&directed{g: g}, d, tol)
	pr := make([]float64, g.Len())
	var sum float64
	for id, r := range ranks {
		pr[id] = r
		sum += r
	}
	for i := range pr {
		pr[i] /= sum
	}
	return pr
}

// directed adapts Out to gonum's graph.Directed without copying the links.
type directed struct {
	g    Out
	once sync.Once
	to   [][]uint32
}

type node int64

func (n node) ID() int64 { return int64(n) }

type edge struct{ f, t node }

func (e edge) From() graph.Node         { return e.f }
func (e edge) To() graph.Node           { return e.t }
func (e edge) ReversedEdge() graph.Edge { return edge{e.t, e.f} }

func (d *directed) Node(id int64) graph.Node {
	if id < 0 || id >= int64(d.g.Len()) {
		return nil
	}
	return node(id)
}

func (d *directed) Nodes() graph.Nodes { return &span{n: d.g.Len(), i: -1} }

func (d *directed) From(id int64) graph.Nodes {
	return &list{ids: d.g.Links(uint32(id)), i: -1}
}

func (d *directed) To(id int64) graph.Nodes {
	d.once.Do(func() {
		d.to = make([][]uint32, d.g.Len())
		for u := range d.g.Len() {
			for _, v := range d.g.Links(uint32(u)) {
				d.to[v] = append(d.to[v], uint32(u))
			}
		}
	})
	return &list{ids: d.to[id], i: -1}
}

func (d *directed) HasEdgeFromTo(uid, vid int64) bool {
	_, ok := slices.BinarySearch(d.g.Links(uint32(uid)), uint32(vid))
	return ok
}

func (d *directed) HasEdgeBetween(x, y int64) bool {
	return d.HasEdgeFromTo(x, y) || d.HasEdgeFromTo(y, x)
}

func (d *directed) Edge(uid, vid int64) graph.Edge {
	if !d.HasEdgeFromTo(uid, vid) {
		return nil
	}
	return edge{node(uid), node(vid)}
}

// span iterates over the nodes 0..n-1.
type span struct{ n, i int }

func (s *span) Next() bool       { s.i++; return s.i < s.n }
func (s *span) Len() int         { return max(s.n-s.i-1, 0) }
func (s *span) Reset()           { s.i = -1 }
func (s *span) Node() graph.Node { return node(s.i) }

// list iterates over a slice of ids.
type list struct {
	ids []uint32
	i   int
}

func (l *list) Next() bool       { l.i++; return l.i < len(l.ids) }
func (l *list) Len() int         { return max(len(l.ids)-l.i-1, 0) }
func (l *list) Reset()           { l.i = -1 }
func (l *list) Node() graph.Node { return node(l.ids[l.i]) }

// L1 returns the sum of |a_i - b_i|.
func L1(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

// Spearman returns Spearman's rank correlation of a and b, ties ranked by
// their average rank.
func Spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	ma /= float64(len(ra))
	mb /= float64(len(rb))
	var cov, va, vb float64
	for i := range ra {
		x, y := ra[i]-ma, rb[i]-mb
		cov += x * y
		va += x * x
		vb += y * y
	}
	return cov / math.Sqrt(va*vb)
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(x, y int) bool { return v[idx[x]] < v[idx[y]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		avg := float64(i+j) / 2
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// Top returns the ids of the k largest values, largest first, ties by id.
func Top(v []float64, k int) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return v[idx[x]] > v[idx[y]] })
	return idx[:min(k, len(idx))]
}

// Overlap returns how many of the top k of a are in the top k of b.
func Overlap(a, b []float64, k int) int {
	in := make(map[int]bool, k)
	for _, i := range Top(b, k) {
		in[i] = true
	}
	n := 0
	for _, i := range Top(a, k) {
		if in[i] {
			n++
		}
	}
	return n
}
