package crawlsim

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestTurnsAreDeterministicAndDisjoint(t *testing.T) {
	c := Default()
	c.Hosts = 50
	a, b := c.Turn(7), c.Turn(7)
	if len(a) != 700 || !slices.EqualFunc(a, b, func(x, y Fetch) bool {
		return x.URL == y.URL && x.Digest() == y.Digest() && slices.Equal(x.Links, y.Links)
	}) {
		t.Fatal("Turn(7) differs between calls")
	}
	seen := map[string]int{}
	for turn := 0; turn < 20; turn++ {
		for i, f := range c.Turn(turn) {
			isNew := i < c.NewPerTurn
			if _, ok := seen[f.URL]; ok == isNew {
				t.Fatalf("turn %d: %s new=%v but seen=%v", turn, f.URL, isNew, ok)
			}
			seen[f.URL] = turn
			if len(f.Links) != c.Links {
				t.Fatalf("%d links", len(f.Links))
			}
		}
	}
}

// The versions a page goes through follow its Poisson rate: over many pages,
// the changes counted in a year match the rates drawn.
func TestVersionsFollowTheRates(t *testing.T) {
	c := Default()
	year := c.Start.Add(365 * 24 * time.Hour)
	var want, got float64
	for k := 0; k < 2000; k++ {
		want += c.rate(k) * 365
		got += float64(c.version(k, year))
		if c.version(k, c.Start) != 0 {
			t.Fatalf("page %d changed before the start", k)
		}
	}
	if math.Abs(got/want-1) > 0.02 {
		t.Fatalf("%.0f changes in a year, rates say %.0f", got, want)
	}
}

// LastVersions gives every page fetched by then once, at its last fetch.
func TestLastVersions(t *testing.T) {
	c := Default()
	c.Hosts, c.NewPerTurn, c.RecrawlPerTurn = 10, 20, 15
	const turns = 30
	want := map[int]Fetch{}
	for tn := range turns {
		for _, f := range c.Turn(tn) {
			want[f.Page] = f
		}
	}
	seen := map[int]bool{}
	if err := c.LastVersions(turns, func(f Fetch) error {
		w := want[f.Page]
		if seen[f.Page] || !f.At.Equal(w.At) || f.Version != w.Version {
			t.Errorf("page %d: at %v version %d (seen %v), want its last fetch at %v version %d", f.Page, f.At, f.Version, seen[f.Page], w.At, w.Version)
		}
		seen[f.Page] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != turns*c.NewPerTurn || len(want) != len(seen) {
		t.Errorf("%d pages given, %d fetched", len(seen), len(want))
	}
}
