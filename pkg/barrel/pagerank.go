package barrel

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// linkGraph is the links database as PageRank reads it: compressed sparse
// rows by target, the sources of target t being src[start[t]:start[t+1]],
// sorted, distinct and without t itself, and out[s] the number of distinct
// targets of s. A year of a 700-page-an-hour crawl has 87 million live
// links over 4.4 million documents: as (from, to) pairs grown by append and
// sorted, they took 2.7 GB at the peak and 15 of the 25 s of a ranking
// (the copies of the growing slice and the sort); here they are counted
// in one pass over the anchors and placed in a second, 4 bytes a link,
// and each target's few sources are sorted alone. Rows by target let the
// power iteration run on every core, each filling its own targets.
type linkGraph struct {
	n     int
	start []int
	src   []uint32
	out   []uint32
}

// newLinkGraph makes the graph of n documents from the links that each
// calls, twice, with the same links in the same order: once to count
// them, once to place them.
func newLinkGraph(n int, each func(fn func(from, to uint32)) error) (*linkGraph, error) {
	count := make([]uint32, n) // 4 bytes a document: the counting pass is random increments
	if err := each(func(_, to uint32) { count[to]++ }); err != nil {
		return nil, err
	}
	g := &linkGraph{n: n, start: make([]int, n+1)}
	for t, c := range count {
		g.start[t+1] = g.start[t] + int(c)
	}
	if g.start[n] > math.MaxUint32 {
		return nil, fmt.Errorf("barrel: %d links, more than PageRank's %d", g.start[n], uint32(math.MaxUint32))
	}
	next := count // reused: where the next source of each target goes
	for t := range next {
		next[t] = uint32(g.start[t])
	}
	g.src = make([]uint32, g.start[n])
	placed, over := 0, false
	if err := each(func(from, to uint32) {
		if int(next[to]) >= g.start[to+1] {
			over = true
			return
		}
		g.src[next[to]] = from
		next[to]++
		placed++
	}); err != nil {
		return nil, err
	}
	if over || placed != g.start[n] {
		return nil, fmt.Errorf("barrel: the links changed between PageRank's two passes (%d counted, %d placed)", g.start[n], placed)
	}
	count, next = nil, nil
	// Sort each target's sources, drop duplicates and self-links, and
	// close the gaps in place (the write position never passes the read).
	g.out = make([]uint32, n)
	w := 0
	for t := range n {
		lo, hi := g.start[t], g.start[t+1]
		g.start[t] = w
		row := g.src[lo:hi]
		slices.Sort(row)
		for i, s := range row {
			if s == uint32(t) || (i > 0 && s == row[i-1]) {
				continue
			}
			g.src[w] = s
			g.out[s]++
			w++
		}
	}
	g.start[n] = w
	g.src = g.src[:w:w]
	return g, nil
}

// pageRank computes the PageRank of the graph's documents with damping d
// by power iteration until the L1 change is below tol or after iters
// rounds. Ranks sum to 1; the rank of pages without out-links is spread
// over all pages. Each target's new rank adds its sources' shares in
// increasing docID order, and the sums over all pages are taken in docID
// order, so the result does not depend on the number of cores.
func (g *linkGraph) pageRank(d float64, iters int, tol float64) []float64 {
	return g.rankOn(runtime.GOMAXPROCS(0), d, iters, tol)
}

// rankOn is pageRank on the given number of goroutines.
func (g *linkGraph) rankOn(workers int, d float64, iters int, tol float64) []float64 {
	n := g.n
	if n == 0 {
		return nil
	}
	pr := make([]float64, n)
	next := make([]float64, n)
	share := make([]float64, n)
	for i := range pr {
		pr[i] = 1 / float64(n)
	}
	parts := g.parts(workers)
	for range iters {
		dangling := 0.0
		for i, o := range g.out {
			if o == 0 {
				dangling += pr[i]
				share[i] = 0
			} else {
				share[i] = d * pr[i] / float64(o)
			}
		}
		base := (1-d)/float64(n) + d*dangling/float64(n)
		var wg sync.WaitGroup
		for k := range len(parts) - 1 {
			wg.Add(1)
			go func(lo, hi int) {
				defer wg.Done()
				for t := lo; t < hi; t++ {
					v := base
					for _, s := range g.src[g.start[t]:g.start[t+1]] {
						v += share[s]
					}
					next[t] = v
				}
			}(parts[k], parts[k+1])
		}
		wg.Wait()
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

// parts splits the targets into k ranges of about equal links and
// documents, as boundaries 0 = parts[0] < ... < parts[len-1] = n.
func (g *linkGraph) parts(k int) []int {
	k = max(1, min(k, g.n))
	work := func(t int) int { return g.start[t] + t } // links and documents before t
	b := []int{0}
	for i := 1; i < k; i++ {
		want := work(g.n) * i / k
		t := sort.Search(g.n, func(t int) bool { return work(t) >= want })
		if t > b[len(b)-1] && t < g.n {
			b = append(b, t)
		}
	}
	return append(b, g.n)
}

// PageRank computes the PageRank of n documents over the links database
// (from, to pairs; duplicates, self-links and pairs naming a document
// past n are ignored) with damping d, by power iteration until the L1
// change is below tol or after iters rounds. Ranks sum to 1; the rank of
// pages without out-links is spread over all pages.
func PageRank(n int, edges [][2]uint32, d float64, iters int, tol float64) ([]float64, error) {
	g, err := newLinkGraph(n, func(fn func(from, to uint32)) error {
		for _, e := range edges {
			if int(e[0]) < n && int(e[1]) < n {
				fn(e[0], e[1])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g.pageRank(d, iters, tol), nil
}

// links returns the links database: every live anchor (one in the current
// version of its page), read from the anchors file. Ranking reads every
// link; it runs every PageRankEvery batches.
func (b *Builder) links() (*linkGraph, error) {
	n := b.nDocs
	cur := make([]uint64, n)
	for i := range cur {
		cur[i] = NoOffset
	}
	if b.old != nil {
		if err := b.old.eachLive(func(d uint32, e DocEntry) error {
			if d < n {
				cur[d] = e.RepoOff
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for d, e := range b.changed {
		cur[d] = e.RepoOff
	}
	if err := b.anchorsF.w.Flush(); err != nil {
		return nil, err
	}
	// The file on disk, read in order: its live records in logical order.
	sp := b.m.AnchorSpace
	path, size := filepath.Join(b.dir, sp.name(anchorsName)), sp.physical(b.anchorsF.off)
	pass := 0
	return newLinkGraph(int(n), func(fn func(from, to uint32)) error {
		pass++
		return eachLiveLink(path, size, cur, pass == 1, fn)
	})
}

// eachLiveLink calls fn with every live link of the first size bytes of
// the anchors file at path, in file order: those whose source page's
// current version (cur, by docID) is the one the anchor sits in. A
// goroutine reads and parses the records, checking each one's CRC-32C when
// verify is set (the second pass over the same bytes does not), while fn
// runs on the caller's.
func eachLiveLink(path string, size int64, cur []uint64, verify bool, fn func(from, to uint32)) error {
	f, err := os.Open(path)
	if err != nil {
		return corrupt("%s: %v", filepath.Base(path), err)
	}
	defer f.Close()
	const batch = 1 << 16
	full, free := make(chan []uint64, 4), make(chan []uint64, 6)
	stop := make(chan struct{})
	defer close(stop)
	var rerr error
	go func() {
		defer close(full)
		r := bufio.NewReaderSize(io.LimitReader(f, size), 1<<20)
		buf := make([]uint64, 0, batch)
		send := func() bool {
			select {
			case full <- buf:
			case <-stop:
				return false
			}
			select {
			case buf = <-free:
			default:
				buf = make([]uint64, 0, batch)
			}
			return true
		}
		var h [anchorHeader]byte
		text := make([]byte, 0, 1024)
		n := uint32(len(cur))
		for off := int64(0); off < size; {
			if _, err := io.ReadFull(r, h[:]); err != nil {
				rerr = corrupt("anchors: truncated record at %d", off)
				return
			}
			k := int(binary.LittleEndian.Uint16(h[16:]))
			if verify {
				text = slices.Grow(text[:0], k)[:k]
				if _, err := io.ReadFull(r, text); err != nil {
					rerr = corrupt("anchors: truncated record at %d", off)
					return
				}
				if crc32Update(crc(h[:18]), text) != binary.LittleEndian.Uint32(h[18:]) {
					rerr = corrupt("anchors: checksum mismatch at %d", off)
					return
				}
			} else if _, err := r.Discard(k); err != nil {
				rerr = corrupt("anchors: truncated record at %d", off)
				return
			}
			from, to := binary.LittleEndian.Uint32(h[:]), binary.LittleEndian.Uint32(h[4:])
			if from >= n || to >= n {
				rerr = corrupt("anchors: docID out of range at %d", off)
				return
			}
			if cur[from] == binary.LittleEndian.Uint64(h[8:]) {
				buf = append(buf, uint64(from)<<32|uint64(to))
				if len(buf) == batch && !send() {
					return
				}
			}
			off += int64(anchorHeader + k)
		}
		if len(buf) > 0 {
			send()
		}
	}()
	for links := range full {
		for _, l := range links {
			fn(uint32(l>>32), uint32(l))
		}
		select {
		case free <- links[:0]:
		default:
		}
	}
	return rerr
}
