package barrel

import (
	"sync/atomic"
	"testing"
)

// eachSlot calls f with each slot of t's allocated blocks and returns how
// many blocks are allocated.
func eachSlot[T any](t *slotTable[T], f func(*T)) (blocks int) {
	for i := range t.blocks {
		if b := t.blocks[i].Load(); b != nil {
			blocks++
			for j := range b {
				f(&b[j])
			}
		}
	}
	return blocks
}

// TestCachesByBlock: one query on an index opened for it allocates of
// the word caches (lexicon lookups, document frequencies, lists) no more
// blocks than the slots it fills, not the whole tables; the slots it
// fills answer as the lexicon and the lists do.
func TestCachesByBlock(t *testing.T) {
	dir := t.TempDir()
	site := docStatsSite(t, dir, 0, 4)
	q := mixedQueries(site, 5, 1)[0]
	idx := open(t, dir)
	if _, err := idx.Search(q, SearchOptions{N: 10, NoSnippets: true}); err != nil {
		t.Fatal(err)
	}
	lex, df, wl := 0, 0, 0
	lexBlocks := eachSlot(&idx.lexCache, func(p *atomic.Pointer[lexEntry]) {
		if e := p.Load(); e != nil {
			lex++
			if id, ok, err := idx.lex.Lookup([]byte(e.word)); err != nil || id != e.id || ok != e.ok {
				t.Errorf("lexicon cache: %q is %d %v, the lexicon says %d %v (%v)", e.word, e.id, e.ok, id, ok, err)
			}
		}
	})
	dfBlocks := eachSlot(&idx.dfCache, func(p *atomic.Uint64) {
		if v := p.Load(); v != 0 {
			df++
			if n, err := dfOf(idx.df, uint32(v>>32-1)); err != nil || n != int64(uint32(v)) {
				t.Errorf("frequency cache: word %d on %d pages, the runs say %d (%v)", v>>32-1, uint32(v), n, err)
			}
		}
	})
	wlBlocks := eachSlot(&idx.wlCache, func(p *atomic.Pointer[wordLists]) {
		if p.Load() != nil {
			wl++
		}
	})
	for _, c := range []struct {
		name          string
		blocks, slots int
	}{{"lexicon", lexBlocks, lex}, {"frequency", dfBlocks, df}, {"lists", wlBlocks, wl}} {
		if c.slots == 0 || c.blocks > c.slots {
			t.Errorf("one query %q: %d blocks of the %s cache allocated for %d slots filled", q, c.blocks, c.name, c.slots)
		}
	}
}
