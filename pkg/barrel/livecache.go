package barrel

import "sync/atomic"

// The live postings of a word in a segment that later batches mostly
// superseded are cached, as docIDs: counting a query's matches reads
// every posting of its lists, and in such a segment most of them are of
// deleted documents, which a merge would have dropped. An open index
// does not change, so an entry never goes stale; the cache holds at most
// liveCacheBytes, and a word's entry is taken over by the next word of
// its slot.

const (
	liveCacheBits  = 12
	liveCacheSize  = 1 << liveCacheBits
	liveCacheBytes = 32 << 20 // the docIDs held at most, in bytes
	liveCacheMax   = 1 << 14  // the live postings of a list cached at most
)

// liveEntry is the live documents of word id's list in sg (with titled,
// of its short list, those with a title hit).
type liveEntry struct {
	sg     *segment
	id     uint32
	titled bool
	docs   []uint32
}

// liveLists enables the cache (off only in the tests that check it
// changes nothing); liveReads counts the lists read through it (for the
// tests).
var (
	liveLists = true
	liveReads atomic.Int64
)

// cachesLive reports whether sg's lists are read through the cache of
// live postings: at least half its documents are deleted.
func cachesLive(sg *segment) bool {
	return liveLists && sg.del != nil && 2*sg.info.Deleted >= sg.info.Docs
}

// liveDocs returns the documents of word id's list (list) in sg that sg
// has not deleted, in docID order, from the cache or by walking the list
// (its runs of deleted documents jumped with the skip table); with
// titled, list is the word's short list, and only its postings with a
// title hit count. The slice is shared: not to be changed.
func (idx *Index) liveDocs(sg *segment, id uint32, list []byte, titled bool) ([]uint32, error) {
	liveReads.Add(1)
	idx.liveCacheOnce.Do(func() { idx.liveCache = make([]atomic.Pointer[liveEntry], liveCacheSize) })
	h := uint32(sg.info.ID)*0x85ebca6b ^ id*0x9e3779b1
	if titled {
		h ^= 0xc2b2ae35
	}
	slot := &idx.liveCache[h>>(32-liveCacheBits)]
	if e := slot.Load(); e != nil && e.sg == sg && e.id == id && e.titled == titled {
		return e.docs, nil
	}
	var docs []uint32
	it := newPostingIter(list)
	ok := it.next()
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
		return nil, it.err
	}
	if size := int64(4 * cap(docs)); len(docs) <= liveCacheMax && idx.liveBytes.Add(size) <= liveCacheBytes {
		if old := slot.Swap(&liveEntry{sg, id, titled, docs}); old != nil {
			idx.liveBytes.Add(-int64(4 * cap(old.docs)))
		}
	} else {
		idx.liveBytes.Add(-size)
	}
	return docs, nil
}
