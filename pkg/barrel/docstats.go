package barrel

import (
	"encoding/binary"
	"math"
)

// The document statistics table holds, for every docID, the length and
// title length of the page's live copy (what scoring reads of its entry),
// so that a query's first look at a page reads one record at its docID.
// Without it the look-up searched the documents table of the page's
// segment: on an index opened for one query, some 7,000 such searches a
// query, a fifth of its CPU time on 100,000 pages in 35 segments. The
// prior still comes from the ranks table (one record at the docID too)
// and the document count.
//
// The table is not rewritten by every commit (8 bytes a docID: 35 MB at
// a year's 4.4 million pages) but when the ranks are, or when the
// segments it does not cover hold more than a docStatsShare-th of the
// index's docIDs. It covers the segments the manifest marks InDocStats:
// those of the commit that wrote it, and a merge of covered segments (its
// live documents are theirs, and a page re-indexed since lives in a
// segment written since). A page live in another segment has its lengths
// read from that segment's documents table, as before. Its records have
// no key: a table's search is never used on it, and verify skips the key
// order.
const (
	docStatsKind = "docstats"
	docStatSize  = 8 // words (4), title words (2), 0 (2)
)

// docStatsShare: the table is written anew once the segments it does not
// cover hold more than 1/docStatsShare of the docIDs (a variable for the
// tests).
var docStatsShare = 8

// writeDocStats makes new indexes write the table; off only in tests that
// write an index of format 12.
var writeDocStats = true

func appendDocStat(b []byte, words uint32, titleWords uint16) []byte {
	b = binary.LittleEndian.AppendUint32(b, words)
	b = binary.LittleEndian.AppendUint16(b, titleWords)
	return append(b, 0, 0)
}

func decodeDocStat(r []byte) (words uint32, titleWords uint16) {
	return binary.LittleEndian.Uint32(r), binary.LittleEndian.Uint16(r[4:])
}

// statOf is the docStat of a page of words and title words and PageRank
// rank among docs documents, as scoring weighs them.
func statOf(words uint32, titleWords uint16, rank float32, docs uint32) docStat {
	return docStat{words: words, titleWords: titleWords,
		prior: float32(priorOf(math.Log2(1 + float64(rank)*float64(docs))))}
}

// docStatsDue reports whether the commit of m (the new generation's
// segments and docIDs), ranked or not, writes the table anew.
func docStatsDue(m *Manifest, ranked bool) bool {
	if m.DocStats == 0 || ranked {
		return true
	}
	outside := 0
	for _, si := range m.Segments {
		if !si.InDocStats {
			outside += si.Docs
		}
	}
	return outside*docStatsShare > int(m.Docs)
}

// commitDocStats writes the document statistics table of m (whose Docs
// and segments are the new generation's) when due: owned are the
// documents the batch re-indexed (their entries are the builder's). The
// lengths of the others come from the table before and the segments it
// did not cover, or (an index of format 12) from every live entry.
func (b *Builder) commitDocStats(m *Manifest, owned []uint32, ranked bool, create func(string) (*genWriter, error), newID func() int) error {
	if !writeDocStats {
		if m.DocStats != 0 {
			delete(m.Files, runName(docStatsKind, m.DocStats))
			m.DocStats = 0
		}
		for i := range m.Segments {
			m.Segments[i].InDocStats = false
		}
		return nil
	}
	if !docStatsDue(m, ranked) {
		return nil
	}
	n := m.Docs
	words := make([]uint32, n)
	titles := make([]uint16, n)
	set := func(d uint32, e DocEntry) error {
		if d < n {
			words[d], titles[d] = e.Words, e.TitleWords
		}
		return nil
	}
	if old := b.old; old != nil {
		if t := old.dstats; t != nil {
			for d := range min(uint32(t.count), n) {
				r, err := t.rec(int(d))
				if err != nil {
					return err
				}
				words[d], titles[d] = decodeDocStat(r)
			}
			for _, s := range old.segs {
				if s.info.InDocStats {
					continue
				}
				if err := s.eachLive(set); err != nil {
					return err
				}
			}
		} else if err := old.eachLive(set); err != nil {
			return err
		}
	}
	for _, d := range owned {
		e, err := b.entry(d)
		if err != nil {
			return err
		}
		set(d, e)
	}
	if m.DocStats != 0 {
		delete(m.Files, runName(docStatsKind, m.DocStats))
	}
	id := newID()
	name := runName(docStatsKind, id)
	g, err := create(name)
	if err != nil {
		return err
	}
	tw := newTableWriter(g, docStatSize)
	var rec []byte
	for d := range n {
		rec = appendDocStat(rec[:0], words[d], titles[d])
		tw.add(rec)
	}
	if m.Files[name], err = tw.finish(); err != nil {
		return err
	}
	m.DocStats = id
	for i := range m.Segments {
		m.Segments[i].InDocStats = true
	}
	return nil
}

// openDocStats opens the document statistics table of m, if it has one.
func (idx *Index) openDocStats() error {
	m := idx.m
	if m.DocStats == 0 {
		return nil
	}
	name := runName(docStatsKind, m.DocStats)
	sum, ok := m.Files[name]
	if !ok {
		return corrupt("%s missing from %s", name, manifestName)
	}
	t, err := openTable(idx.dir, name, sum)
	if err != nil {
		return err
	}
	t.keyless = true
	idx.dstats = t
	if t.size != docStatSize || t.count > int(m.Docs) {
		return corrupt("%s: %d records of %d bytes; the manifest says %d docIDs", name, t.count, t.size, m.Docs)
	}
	return nil
}

// coveredBy tells whether the document statistics table holds the
// lengths of doc, live in segment sg.
func (idx *Index) coveredBy(sg *segment, doc uint32) bool {
	t := idx.dstats
	return t != nil && sg.info.InDocStats && int(doc) < t.count
}

// verifyDocStats checks the document statistics table against the live
// entries of the segments it covers.
func (idx *Index) verifyDocStats() error {
	t := idx.dstats
	if t == nil {
		return nil
	}
	if err := t.verify(); err != nil {
		return err
	}
	for _, s := range idx.segs {
		if !s.info.InDocStats {
			continue
		}
		if err := s.eachLive(func(d uint32, e DocEntry) error {
			if int(d) >= t.count {
				return corrupt("%s: no record of doc %d", t.name, d)
			}
			r, err := t.rec(int(d))
			if err != nil {
				return err
			}
			if w, tw := decodeDocStat(r); w != e.Words || tw != e.TitleWords {
				return corrupt("%s: doc %d: %d words, %d in the title; its entry says %d, %d", t.name, d, w, tw, e.Words, e.TitleWords)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}
