package opic_test

import (
	"fmt"
	"testing"

	"github.com/sekitei/crawlkit/pkg/opic"
	"github.com/sekitei/crawlkit/pkg/opic/internal/ref"
)

// The bar: with damping 0.85, L1 distance to PageRank at most 1e-3
// and Spearman's rank correlation at least 0.99.
const (
	maxL1       = 1e-3
	minSpearman = 0.99
)

func checkAgainstPageRank(t *testing.T, s *opic.State, d float64, p opic.Policy, until float64) {
	t.Helper()
	pr := pagerank(s, d)
	s.Damping = d
	s.Reset()
	steps := s.Run(p, opic.Stop{Until: until}, 7)
	imp := s.Importance()
	l1, rho := ref.L1(imp, pr), ref.Spearman(imp, pr)
	t.Logf("%s d=%v: %d pages, %d links, %d visits, 1/|H|=%.2g: L1 %.2e, Spearman %.5f",
		p, d, s.Len(), s.Edges(), steps, s.ErrorBound(), l1, rho)
	if l1 > maxL1 || rho < minSpearman {
		t.Errorf("%s d=%v: L1 %.3e (want <= %g), Spearman %.5f (want >= %g)", p, d, l1, maxL1, rho, minSpearman)
	}
}

func TestPowerLawMatchesGonumPageRank(t *testing.T) {
	for _, g := range []struct {
		n, m int
		seed uint64
	}{{2000, 16000, 1}, {3000, 30000, 2}} {
		s := powerLawState(t, g.n, g.m, g.seed)
		for _, p := range []opic.Policy{opic.Greedy, opic.Random, opic.Cyclic} {
			t.Run(fmt.Sprintf("n%d/%s", g.n, p), func(t *testing.T) {
				checkAgainstPageRank(t, s, 0.85, p, 3e-4)
			})
		}
	}
}

func TestPythonDocsMatchesGonumPageRank(t *testing.T) {
	s := loadEdges(t, "../../testdata/opic/pydocs.tsv")
	if s.Len() < 500 {
		t.Fatalf("the Python docs graph has %d pages, want about 530", s.Len())
	}
	for _, p := range []opic.Policy{opic.Greedy, opic.Random, opic.Cyclic} {
		t.Run(p.String(), func(t *testing.T) { checkAgainstPageRank(t, s, 0.85, p, 3e-4) })
	}
}

// Importance follows the damping: it matches PageRank with the same damping
// and not PageRank with another.
func TestDampingSelectsPageRank(t *testing.T) {
	s := powerLawState(t, 1500, 12000, 3)
	for _, d := range []float64{0.5, 0.7, 0.95} {
		t.Run(fmt.Sprint(d), func(t *testing.T) { checkAgainstPageRank(t, s, d, opic.Greedy, 3e-4) })
	}
	other := pagerank(s, 0.5)
	s.Damping = 0.95
	s.Reset()
	s.Run(opic.Greedy, opic.Stop{Until: 1e-4}, 1)
	if l1 := ref.L1(s.Importance(), other); l1 < 10*maxL1 {
		t.Errorf("damping 0.95 is within L1 %.2e of PageRank with damping 0.5", l1)
	}
}

// Online quality, the reason OPIC exists: after 10 visits per page on
// average, greedy's top 100 shares at least 90 pages with PageRank's, and
// greedy gets to 90 in fewer visits than random; on a generated graph and on
// the Python docs.
func TestOnlineQuality(t *testing.T) {
	for _, g := range []struct {
		name string
		s    *opic.State
	}{
		{"power law", powerLawState(t, 20000, 200000, 4)},
		{"Python docs", loadEdges(t, "../../testdata/opic/pydocs.tsv")},
	} {
		t.Run(g.name, func(t *testing.T) { checkOnlineQuality(t, g.s) })
	}
}

func checkOnlineQuality(t *testing.T, s *opic.State) {
	pr := pagerank(s, 0.85)
	n := uint64(s.Len())
	visitsTo90 := func(p opic.Policy) uint64 {
		s.Reset()
		for s.Steps() < 50*n {
			s.Run(p, opic.Stop{Steps: max(n/20, 1)}, 11)
			if ref.Overlap(s.Importance(), pr, 100) >= 90 {
				return s.Steps()
			}
		}
		return s.Steps()
	}
	s.Reset()
	s.Run(opic.Greedy, opic.Stop{Steps: 10 * n}, 1)
	if ov := ref.Overlap(s.Importance(), pr, 100); ov < 90 {
		t.Errorf("greedy after 10 visits per page: top-100 overlap %d, want >= 90", ov)
	}
	g, r := visitsTo90(opic.Greedy), visitsTo90(opic.Random)
	t.Logf("visits per page to a top-100 overlap of 90: greedy %.2f, random %.2f", float64(g)/float64(n), float64(r)/float64(n))
	if g >= r {
		t.Errorf("greedy needed %d visits, random %d: want greedy fewer", g, r)
	}
}
