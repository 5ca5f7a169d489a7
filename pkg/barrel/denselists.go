package barrel

import (
	"math"
	"slices"
	"sync/atomic"
)

// A word's lists in the segments are decoded, the second time a query
// asks for the word (its wordLists entry): each posting's docID and
// offset, in arrays. A query's cursors then seek by a search of the
// docIDs and read the one posting they land on, where a seek walked the
// postings' headers from a skip entry (or, in a list of fewer than two
// skip blocks, which a small segment mostly holds, from where it stood),
// a cache miss each; and the count of the matches marks the docIDs
// without reading the postings. On an index of many small segments a
// cheap query's work was mostly these walks. The arrays take 8 bytes a
// posting, at most denseBudget in all (a word's decoded lists leave it
// with its wordLists entry); a list longer than denseMax is not decoded.
const (
	denseMax    = 1 << 14
	denseBudget = 32 << 20
)

// denseLists enables the decoded lists (off only in the tests that check
// it changes nothing); denseCursors counts the cursors that walk one,
// denseDeleted those of them in a segment with deleted documents (for
// the tests).
var (
	denseLists                 = true
	denseCursors, denseDeleted atomic.Int64
)

// denseList is an inverted list decoded: each posting's docID, and its
// offset in the list's postings (postingIter.data).
type denseList struct {
	docs, offs []uint32
}

// decoded is the lists of a word decoded, by segment (nil where a list
// is not), and the bytes they take of the budget, until released.
type decoded struct {
	segs     []*denseList
	bytes    int64
	released atomic.Bool
}

// release gives the bytes of d back to the budget, once: its wordLists
// entry has left the cache.
func (idx *Index) release(d *decoded) {
	if d != nil && d.released.CompareAndSwap(false, true) {
		idx.denseBytes.Add(-d.bytes)
	}
}

// denseOf returns the decoded lists of e, by segment, decoding them the
// second time it is asked (by one search); nil before. A list is not
// decoded (nil) past the budget.
func (idx *Index) denseOf(e *wordLists) []*denseList {
	if !denseLists {
		return nil
	}
	if d := e.dense.Load(); d != nil {
		return d.segs
	}
	if e.asks.Add(1) != 2 {
		return nil
	}
	d := &decoded{segs: make([]*denseList, len(e.segs))}
	for k := range e.segs {
		l := &e.segs[k]
		if l.nf == 0 || l.nf > denseMax || !l.fullAt.valid {
			continue
		}
		size := 8 * int64(l.nf)
		if idx.denseBytes.Add(size) > denseBudget {
			idx.denseBytes.Add(-size)
			continue
		}
		dl := decodeList(l.full, l.nf)
		if dl == nil {
			idx.denseBytes.Add(-size) // damaged: walked as it is, which meets the damage
			continue
		}
		d.segs[k], d.bytes = dl, d.bytes+size
	}
	e.dense.Store(d)
	if idx.wlSlot(e.id).Load() != e {
		idx.release(d) // taken over while decoded: the cache no longer holds it
	}
	return d.segs
}

// decodeList decodes list, of n postings; nil if it is damaged, or does
// not hold n.
func decodeList(list []byte, n uint32) *denseList {
	it := newPostingIter(list)
	if len(list) > math.MaxUint32 {
		return nil
	}
	dl := &denseList{docs: make([]uint32, 0, n), offs: make([]uint32, 0, n)}
	for it.next() {
		dl.docs = append(dl.docs, it.doc)
		dl.offs = append(dl.offs, uint32(it.pos-len(it.raw)))
	}
	if it.err != nil || len(dl.docs) != int(n) {
		return nil
	}
	return dl
}

// seekDense is seek in a decoded list: the first docID at or after
// target (denseFind), and its posting read.
func (it *postingIter) seekDense(d *denseList, target uint32) bool {
	if it.err != nil {
		return false
	}
	it.lazy = false
	lo := it.denseFind(d, target)
	if lo == len(d.docs) {
		it.pos = len(it.data)
		return false
	}
	it.pos, it.prev = int(d.offs[lo]), int64(d.docs[lo])-1
	return it.next()
}

// seekDoc is seek in a decoded list (it.dd) that does not read the
// posting it lands on: the walk stands on its docID, lazy, and reads it
// when asked for its hits (load) or moved on (next). An intersection
// compares most of the postings it seeks to without reading their hits.
func (it *postingIter) seekDoc(target uint32) bool {
	if it.err != nil {
		return false
	}
	if it.doc >= target && it.prev >= 0 {
		return true
	}
	d := it.dd
	lo := it.denseFind(d, target)
	if lo == len(d.docs) {
		it.pos, it.lazy = len(it.data), false
		return false
	}
	it.doc, it.prev, it.lazy = d.docs[lo], int64(d.docs[lo]), true
	return true
}

// load reads the posting a lazy walk stands on (seekDoc); false if it
// is damaged.
func (it *postingIter) load() bool {
	if !it.lazy {
		return it.err == nil
	}
	it.lazy = false
	d := it.dd
	it.pos, it.prev = int(d.offs[it.sk]), int64(d.docs[it.sk])-1
	return it.next()
}

// denseFind is the place in d of the first docID at or after target,
// galloped to from the place of the last seek (at or before the current
// posting), which it becomes; len(d.docs) past the last.
func (it *postingIter) denseFind(d *denseList, target uint32) int {
	docs := d.docs
	lo := it.sk
	for end := min(len(docs), lo+4); lo < end && docs[lo] < target; lo++ { // mostly near
	}
	if lo < len(docs) && docs[lo] < target {
		step := 1
		for lo+step < len(docs) && docs[lo+step] < target {
			lo += step
			step *= 2
		}
		// docs[lo] is before target, docs[lo+step] (if any) not.
		j, _ := slices.BinarySearch(docs[lo+1:min(len(docs), lo+step+1)], target)
		lo += 1 + j
	}
	it.sk = lo
	return lo
}
