package barrel

import "sync/atomic"

// The live postings of a word in a segment that later batches mostly
// superseded are cached, as docIDs: counting a query's matches reads
// every posting of its lists, and in such a segment most of them are of
// deleted documents, which a merge would have dropped. An open index
// does not change, so an entry never goes stale; the cache holds at most
// liveCacheBytes, and a word's entry is taken over by the next word of
// its slot. A list is cached the second time it is asked for: building
// an entry walks the whole list, where a query of a word met once may
// read only some of it; and the mark of a list asked for once does not
// take over a slot that holds a list.

const (
	liveCacheBits  = 16
	liveCacheBytes = 32 << 20 // the docIDs held at most, in bytes
	liveCacheMax   = 1 << 14  // the live postings of a list cached at most
)

// liveEntry is the live documents of word id's list in sg (with titled,
// of its short list, those with a title hit), or a mark that the list was
// asked for once, or is not to be cached.
type liveEntry struct {
	sg     *segment
	id     uint32
	titled bool
	state  uint8 // liveSeen, liveHeld or liveNot
	docs   []uint32
}

const (
	liveSeen = iota
	liveHeld
	liveNot // too long, or past the budget
)

// liveLists enables the cache (off only in the tests that check it
// changes nothing); liveReads counts the lists read through it (for the
// tests: with the live documents returned).
var (
	liveLists = true
	liveReads atomic.Int64
)

// cachesLive reports whether sg's lists are read through the cache of
// live postings: at least half its documents are deleted.
func cachesLive(sg *segment) bool {
	return liveLists && sg.mostlyDeleted()
}

// liveDocs returns the documents of word id's list (list) in sg that sg
// has not deleted, in docID order, from the cache or by walking the list
// (its runs of deleted documents jumped with the skip table); with
// titled, list is the word's short list, and only its postings with a
// title hit count. The slice is shared: not to be changed. ok is false
// when the list is not cached: the caller walks it.
func (idx *Index) liveDocs(sg *segment, id uint32, list []byte, titled bool) (docs []uint32, ok bool, err error) {
	h := uint32(sg.info.ID)*0x85ebca6b ^ id*0x9e3779b1
	if titled {
		h ^= 0xc2b2ae35
	}
	slot := idx.liveCache.slot(h>>(32-liveCacheBits), liveCacheBits)
	e := slot.Load()
	switch {
	case e == nil || e.sg != sg || e.id != id || e.titled != titled:
		if e == nil || e.state != liveHeld {
			idx.putLive(slot, &liveEntry{sg: sg, id: id, titled: titled, state: liveSeen})
		}
		return nil, false, nil
	case e.state == liveHeld:
		liveReads.Add(1)
		return e.docs, true, nil
	case e.state == liveNot:
		return nil, false, nil
	}
	it := newPostingIter(list)
	ok = it.next()
	for ok {
		if sg.del.has(it.doc) {
			ok = it.seek(sg.nextLive(it.doc + 1))
			continue
		}
		if !titled || hasTitleHit(it.hits) {
			docs = append(docs, it.doc)
		}
		ok = it.next()
	}
	if it.err != nil {
		return nil, false, it.err
	}
	if size := int64(4 * cap(docs)); len(docs) <= liveCacheMax && idx.liveBytes.Add(size) <= liveCacheBytes {
		idx.putLive(slot, &liveEntry{sg: sg, id: id, titled: titled, state: liveHeld, docs: docs})
	} else {
		idx.liveBytes.Add(-size)
		idx.putLive(slot, &liveEntry{sg: sg, id: id, titled: titled, state: liveNot})
	}
	liveReads.Add(1)
	return docs, true, nil
}

// putLive stores e in slot, the docIDs of the entry it replaces leaving
// the budget.
func (idx *Index) putLive(slot *atomic.Pointer[liveEntry], e *liveEntry) {
	if old := slot.Swap(e); old != nil && old.docs != nil {
		idx.liveBytes.Add(-int64(4 * cap(old.docs)))
	}
}
