package barrel

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pairsPageRank is PageRank as barrel computed it before the link graph:
// the (from, to) pairs sorted and deduplicated, each target's rank the
// base plus its sources' shares in source order. The link graph must give
// the same ranks to the last bit.
func pairsPageRank(n int, edges [][2]uint32, d float64, iters int, tol float64) []float64 {
	es := slices.Clone(edges)
	slices.SortFunc(es, func(a, b [2]uint32) int {
		if a[0] != b[0] {
			return cmpU32(a[0], b[0])
		}
		return cmpU32(a[1], b[1])
	})
	es = slices.Compact(es)
	out := make([]int, n)
	k := 0
	for _, e := range es {
		if e[0] != e[1] {
			es[k] = e
			k++
			out[e[0]]++
		}
	}
	es = es[:k]
	pr, next := make([]float64, n), make([]float64, n)
	for i := range pr {
		pr[i] = 1 / float64(n)
	}
	for range iters {
		dangling := 0.0
		for i, o := range out {
			if o == 0 {
				dangling += pr[i]
			}
		}
		base := (1-d)/float64(n) + d*dangling/float64(n)
		for i := range next {
			next[i] = base
		}
		for _, e := range es {
			next[e[1]] += d * pr[e[0]] / float64(out[e[0]])
		}
		delta := 0.0
		for i := range pr {
			delta += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if delta < tol {
			break
		}
	}
	return pr
}

// TestLinkGraphRanks: on random graphs with duplicate links, self-links,
// pages without out-links and pages nothing links to, the link graph gives
// bit for bit the ranks of the sorted pairs, split over 1 to 7 workers.
func TestLinkGraphRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 1 + rng.IntN(300)
		edges := make([][2]uint32, rng.IntN(8*n))
		for i := range edges {
			from := uint32(rng.IntN(n))
			to := uint32(rng.IntN(n))
			if rng.IntN(5) == 0 {
				to = uint32(rng.IntN(1 + n/10)) // popular targets
			}
			edges[i] = [2]uint32{from, to}
		}
		if len(edges) > 0 { // a duplicate and a self-link
			edges = append(edges, edges[0], [2]uint32{edges[0][0], edges[0][0]})
		}
		want := pairsPageRank(n, edges, 0.85, 60, 1e-12)
		g, err := newLinkGraph(n, func(fn func(from, to uint32)) error {
			for _, e := range edges {
				fn(e[0], e[1])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for t2 := range n {
			row := g.src[g.start[t2]:g.start[t2+1]]
			if !slices.IsSorted(row) || slices.Contains(row, uint32(t2)) || len(slices.Compact(slices.Clone(row))) != len(row) {
				t.Fatalf("trial %d: target %d has sources %v", trial, t2, row)
			}
		}
		for _, workers := range []int{1, 2, 3, 7} {
			got := g.rankOn(workers, 0.85, 60, 1e-12)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("trial %d (%d pages, %d links), %d workers: page %d ranked %v, the sorted pairs %v", trial, n, len(edges), workers, i, got[i], want[i])
				}
			}
		}
	}
}

// TestLinkGraphPassesDiffer: links that change between the counting and
// the placing pass are an error, not a graph written out of bounds.
func TestLinkGraphPassesDiffer(t *testing.T) {
	pass := 0
	_, err := newLinkGraph(3, func(fn func(from, to uint32)) error {
		pass++
		fn(0, 1)
		if pass == 2 {
			fn(2, 1) // one more link to 1 than counted
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "changed between") {
		t.Fatalf("err %v", err)
	}
}

// TestRankDamagedAnchors: a ranking that meets a damaged anchor record
// stops with the record's offset and leaves the index as it was.
func TestRankDamagedAnchors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	build(t, dir, Options{}, site)
	path := filepath.Join(dir, anchorsName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-2] ^= 0xff // the last record's text
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = RankIndex(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "anchors: checksum mismatch at") {
		t.Fatalf("ranking over a damaged anchors file: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, manifestName))
	if string(after) != string(before) {
		t.Error("the failed ranking changed the manifest")
	}
}
