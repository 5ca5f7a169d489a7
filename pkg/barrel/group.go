package barrel

import (
	"hash/maphash"
	"sync"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
)

// hitGrouper groups a page's hits by key in the parsing worker, so that
// the one goroutine that applies pages in order looks each distinct key
// up in the lexicon once, not once a hit, and sorts the page's distinct
// words, not all its hits. It is a small open-addressing table over the
// page's keys, reused page after page.
type hitGrouper struct {
	seed   maphash.Seed
	slots  []int32 // index+1 of the distinct key; 0 empty
	hashes []uint64
	count  []uint32
	of     []int32 // the distinct key of each hit
	// in are the buffers prepare collects a page's hits in (collect),
	// read by group only, so kept page after page.
	in groupBufs
}

// groupBufs hold a page's keys and hits. A page's grouped ones go with it
// to the applier, which gives them back (release) for a later page: fresh
// ones, as large as the page, for every page cost more in allocation and
// garbage collection than the grouping does.
type groupBufs struct {
	keys         []byte
	ends, starts []uint32
	hits         []hit.Hit
}

var groupPool = sync.Pool{New: func() any { return new(groupBufs) }}

// collect starts p's keys and hits in g's buffers, for group.
func (g *hitGrouper) collect(p *prepared) {
	p.keys, p.ends, p.hits = g.in.keys[:0], g.in.ends[:0], g.in.hits[:0]
}

// release gives back the buffers of p's grouped hits, which p must no
// longer use.
func release(p *prepared) {
	if p.bufs != nil {
		groupPool.Put(p.bufs)
		p.bufs, p.keys, p.ends, p.starts, p.hits = nil, nil, nil, nil, nil
	}
}

// sized is s[:0] with room for n, s's memory if it is large enough: unlike
// slices.Grow, it does not copy s's old contents, which are not needed.
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// group rewrites p.keys and p.ends to list each distinct key once, in order
// of first appearance, and p.hits so that the hits of distinct key k are
// p.hits[p.starts[k]:p.starts[k+1]], in their order on the page.
func (g *hitGrouper) group(p *prepared) {
	n := len(p.ends)
	if n == 0 {
		p.keys, p.ends, p.hits, p.starts = nil, nil, nil, []uint32{0}
		return
	}
	if g.slots == nil {
		g.seed = maphash.MakeSeed()
	}
	size := 64
	for size < 2*n {
		size *= 2
	}
	if len(g.slots) < size {
		g.slots = make([]int32, size)
	} else {
		g.slots = g.slots[:size]
		clear(g.slots)
	}
	mask := uint64(size - 1)
	g.in = groupBufs{keys: p.keys, ends: p.ends, hits: p.hits} // for the next page
	out := groupPool.Get().(*groupBufs)
	keys := sized(out.keys, len(p.keys)/2)
	ends := sized(out.ends, n/2)
	g.hashes = g.hashes[:0]
	g.count = g.count[:0]
	g.of = sized(g.of, n)[:n]
	of := g.of
	start := uint32(0)
	for i, end := range p.ends {
		key := p.keys[start:end]
		start = end
		h := maphash.Bytes(g.seed, key)
		j := h & mask
		for {
			s := g.slots[j]
			if s == 0 {
				k := int32(len(ends))
				g.slots[j] = k + 1
				keys = append(keys, key...)
				ends = append(ends, uint32(len(keys)))
				g.hashes = append(g.hashes, h)
				g.count = append(g.count, 1)
				of[i] = k
				break
			}
			k := s - 1
			if g.hashes[k] == h && string(keyAtIndex(keys, ends, int(k))) == string(key) {
				g.count[k]++
				of[i] = k
				break
			}
			j = (j + 1) & mask
		}
	}
	// A counting sort by distinct key keeps each key's hits in page order.
	starts := sized(out.starts, len(ends)+1)[:len(ends)+1]
	starts[0] = 0
	for k, c := range g.count {
		starts[k+1] = starts[k] + c
	}
	next := g.count[:0]
	next = append(next, starts[:len(ends)]...)
	grouped := sized(out.hits, n)[:n] // every place is written below
	for i, h := range p.hits {
		k := of[i]
		grouped[next[k]] = h
		next[k]++
	}
	*out = groupBufs{keys: keys, ends: ends, starts: starts, hits: grouped}
	p.keys, p.ends, p.hits, p.starts, p.bufs = keys, ends, grouped, starts, out
}

// keyAtIndex is the k-th key of concatenated keys ending at ends.
func keyAtIndex(keys []byte, ends []uint32, k int) []byte {
	s := uint32(0)
	if k > 0 {
		s = ends[k-1]
	}
	return keys[s:ends[k]]
}
