package opic

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The graph grows online: links added after a Compact, links replaced many
// times (which folds the side table in by itself) and new pages all end up
// where a plain map of sets says they should.
func TestGraphGrowsOnline(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var g Graph
	want := map[uint32]map[uint32]bool{}
	add := func(src, dst uint32) {
		g.AddEdge(src, dst)
		if src != dst {
			if want[src] == nil {
				want[src] = map[uint32]bool{}
			}
			want[src][dst] = true
		}
	}
	check := func(stage string) {
		t.Helper()
		for id := range uint32(g.Len()) {
			var w []uint32
			for d := range want[id] {
				w = append(w, d)
			}
			slices.Sort(w)
			if got := g.Out(id); !slices.Equal(got, w) {
				t.Fatalf("%s: page %d links %v, want %v", stage, id, got, w)
			}
		}
	}
	for range 5000 {
		add(uint32(rng.IntN(300)), uint32(rng.IntN(300)))
	}
	g.Compact()
	check("first compact")
	for range 3000 {
		add(uint32(rng.IntN(600)), uint32(rng.IntN(600)))
	}
	g.Compact()
	check("second compact")
	if g.Len() < 590 {
		t.Fatalf("%d pages, want the new ones", g.Len())
	}
	// Replace the links of 2000 pages (new ones too): the side table fills
	// and is folded in along the way.
	replaced := map[uint32]bool{}
	for range 2000 {
		id := uint32(rng.IntN(2500))
		replaced[id] = true
		links := []uint32{id, uint32(rng.IntN(2500)), uint32(rng.IntN(2500)), uint32(rng.IntN(2500))}
		g.SetLinks(id, links)
		want[id] = map[uint32]bool{}
		for _, l := range links[1:] {
			if l != id {
				want[id][l] = true
			}
		}
	}
	if len(g.over) >= len(replaced) {
		t.Errorf("side table holds %d lists for %d replaced pages: never folded in", len(g.over), len(replaced))
	}
	check("after SetLinks")
	edges := 0
	for _, w := range want {
		edges += len(w)
	}
	if g.Edges() != edges {
		t.Errorf("Edges() %d, want %d", g.Edges(), edges)
	}
	g.Compact()
	check("third compact")
	if len(g.over) != 0 || len(g.pend) != 0 {
		t.Errorf("Compact left %d replaced lists and %d pending links", len(g.over), len(g.pend)/2)
	}
}

func TestNamesIntern(t *testing.T) {
	var ns Names
	long := make([]byte, nameChunk) // longer than a chunk's share: stored on its own
	for i := range long {
		long[i] = 'x'
	}
	ids := map[string]uint32{}
	for i := range 20000 {
		name := fmt.Sprintf("http://host%d.test/page/%d", i%97, i)
		if i == 500 {
			name = string(long)
		}
		id, added := ns.Intern([]byte(name))
		if !added || id != uint32(i) {
			t.Fatalf("%q: id %d added %v", name, id, added)
		}
		ids[name] = id
	}
	for name, id := range ids {
		if got, ok := ns.Lookup(name); !ok || got != id || ns.Name(id) != name {
			t.Fatalf("%q: lookup %d %v, name %q", name, got, ok, ns.Name(id))
		}
		if again, added := ns.Intern([]byte(name)); added || again != id {
			t.Fatalf("%q interned twice", name)
		}
	}
	if _, added := ns.Intern(nil); !added {
		t.Error("the empty name is a name too")
	}
}
