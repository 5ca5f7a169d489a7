package barrel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// Grouping keeps every hit, lists each distinct key once in order of first
// appearance, and keeps each key's hits in page order; the table is reused
// across pages of different sizes.
func TestHitGrouper(t *testing.T) {
	var g hitGrouper
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 5, 700, 3, 5000, 40} {
		p := &prepared{}
		var words []string
		for i := range n {
			w := fmt.Sprintf("w%d", rng.IntN(max(1, n/3)))
			words = append(words, w)
			p.keys = append(p.keys, w...)
			p.ends = append(p.ends, uint32(len(p.keys)))
			p.hits = append(p.hits, hit.Plain(false, 0, i))
		}
		g.group(p)
		var order []string
		want := map[string][]hit.Hit{}
		for i, w := range words {
			if want[w] == nil {
				order = append(order, w)
			}
			want[w] = append(want[w], hit.Plain(false, 0, i))
		}
		if len(p.ends) != len(order) || len(p.starts) != len(order)+1 || len(p.hits) != n {
			t.Fatalf("%d hits: %d keys, %d starts, %d hits; want %d keys", n, len(p.ends), len(p.starts), len(p.hits), len(order))
		}
		for k, w := range order {
			if got := string(keyAtIndex(p.keys, p.ends, k)); got != w {
				t.Fatalf("%d hits: key %d is %q, want %q", n, k, got, w)
			}
			if got := p.hits[p.starts[k]:p.starts[k+1]]; !slices.Equal(got, want[w]) {
				t.Fatalf("%d hits: the hits of %q are %v, want %v", n, w, got, want[w])
			}
		}
	}
}

// byBarrel returns the same keys with each barrel's together, in barrel
// order, each barrel's in their input order.
func TestByBarrel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var keys []uint64
	for i := range 500 {
		id := lexicon.ID(r.IntN(lexicon.Barrels), uint32(r.IntN(1000)))
		keys = append(keys, uint64(id)<<32|uint64(i))
	}
	got := byBarrel(keys, nil)
	if len(got) != len(keys) {
		t.Fatalf("%d keys in, %d out", len(keys), len(got))
	}
	want := slices.Clone(keys)
	slices.SortStableFunc(want, func(x, y uint64) int {
		return lexicon.BarrelOf(uint32(x>>32)) - lexicon.BarrelOf(uint32(y>>32))
	})
	if !slices.Equal(got, want) {
		t.Errorf("byBarrel: %x..., want %x...", got[:5], want[:5])
	}
	if again := byBarrel(keys[:3], got); !slices.Equal(again, byBarrel(keys[:3], nil)) || len(again) != 3 {
		t.Errorf("reusing the buffer: %x", again)
	}
}
