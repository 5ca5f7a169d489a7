package barrel

import (
	"encoding/binary"
	"math"
)

// The document statistics table holds, for every docID, what scoring
// reads of a page besides its hits (docStat): its length and title length
// (the entry of its live copy) and its prior (of its rank and the
// index's document count). Without it a query's first look at a page
// searched the documents table of the page's segment and then read the
// ranks: on an index opened for one query, about 7,000 such look-ups
// were a fifth of the query's CPU time on 100,000 pages in 35 segments.
// With it a look-up is one record at the docID.
//
// Every commit writes it anew (docIDs below Docs, 12 bytes each: a
// year's crawl of 500,000 pages writes 6 MB a turn), since the prior
// depends on the document count: the lengths of the pages the batch did
// not re-index come from the table before, the others from their new
// entries, the ranks from the ranks table. Its records have no key: a
// table's search is never used on it, and verify skips the key order
// (keyless).
const (
	docStatsKind = "docstats"
	docStatSize  = 12 // prior (float32), words (4), title words (2), 0 (2)
)

// writeDocStats makes new indexes write the table; off only in tests that
// write an index of format 12.
var writeDocStats = true

func appendDocStat(b []byte, st docStat) []byte {
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(st.prior))
	b = binary.LittleEndian.AppendUint32(b, st.words)
	b = binary.LittleEndian.AppendUint16(b, st.titleWords)
	return append(b, 0, 0)
}

func decodeDocStat(r []byte) docStat {
	return docStat{prior: math.Float32frombits(binary.LittleEndian.Uint32(r)),
		words: binary.LittleEndian.Uint32(r[4:]), titleWords: binary.LittleEndian.Uint16(r[8:])}
}

// priorOfRank is the prior of a page of PageRank rank among docs
// documents, as scoring weighs it.
func priorOfRank(rank float32, docs uint32) float32 {
	return float32(priorOf(math.Log2(1 + float64(rank)*float64(docs))))
}

// statOf is the docStat of a page from its entry and rank.
func statOf(e DocEntry, rank float32, docs uint32) docStat {
	return docStat{words: e.Words, titleWords: e.TitleWords, prior: priorOfRank(rank, docs)}
}

// commitDocStats writes the document statistics table of m (whose Docs,
// ranks and segments are the new generation's): owned are the documents
// the batch re-indexed (their entries are the builder's), ranks the ranks
// computed by this commit (nil if none were).
func (b *Builder) commitDocStats(m *Manifest, owned []uint32, ranks []float32, create func(string) (*genWriter, error), newID func() int) error {
	if m.DocStats != 0 {
		delete(m.Files, runName(docStatsKind, m.DocStats))
		m.DocStats = 0
	}
	if !writeDocStats {
		return nil
	}
	n := m.Docs
	words := make([]uint32, n)
	titles := make([]uint16, n)
	// The pages the batch left as they were: from the table before, or
	// (an index of format 12) from the live entries of its segments.
	if old := b.old; old != nil {
		if t := old.dstats; t != nil {
			for d := range min(uint32(t.count), n) {
				r, err := t.rec(int(d))
				if err != nil {
					return err
				}
				st := decodeDocStat(r)
				words[d], titles[d] = st.words, st.titleWords
			}
		} else if err := old.eachLive(func(d uint32, e DocEntry) error {
			if d < n {
				words[d], titles[d] = e.Words, e.TitleWords
			}
			return nil
		}); err != nil {
			return err
		}
	}
	for _, d := range owned {
		e, err := b.entry(d)
		if err != nil {
			return err
		}
		words[d], titles[d] = e.Words, e.TitleWords
	}
	var oldRanks *table
	if ranks == nil && m.Ranks != 0 && b.old != nil {
		oldRanks = b.old.ranks // the same table: no ranking in this commit
	}
	id := newID()
	g, err := create(runName(docStatsKind, id))
	if err != nil {
		return err
	}
	tw := newTableWriter(g, docStatSize)
	unlinked := unlinkedRank(n)
	var rec []byte
	for d := range n {
		rank := unlinked
		switch {
		case ranks != nil:
			if int(d) < len(ranks) {
				rank = ranks[d]
			}
		case oldRanks != nil && d < m.RankedDocs:
			r, err := oldRanks.rec(int(d))
			if err != nil {
				return err
			}
			rank = math.Float32frombits(binary.LittleEndian.Uint32(r))
		}
		rec = appendDocStat(rec[:0], docStat{words: words[d], titleWords: titles[d], prior: priorOfRank(rank, n)})
		tw.add(rec)
	}
	name := runName(docStatsKind, id)
	if m.Files[name], err = tw.finish(); err != nil {
		return err
	}
	m.DocStats = id
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
	if t.size != docStatSize || t.count != int(m.Docs) {
		return corrupt("%s: %d records of %d bytes, manifest says %d of %d", name, t.count, t.size, m.Docs, docStatSize)
	}
	return nil
}

// verifyDocStats checks the document statistics table against the live
// entries and the ranks it was made of.
func (idx *Index) verifyDocStats() error {
	t := idx.dstats
	if t == nil {
		return nil
	}
	if err := t.verify(); err != nil {
		return err
	}
	return idx.eachLive(func(d uint32, e DocEntry) error {
		if int(d) >= t.count {
			return corrupt("%s: no record of doc %d", t.name, d)
		}
		r, err := t.rec(int(d))
		if err != nil {
			return err
		}
		rank, err := idx.rank(d)
		if err != nil {
			return err
		}
		if got, want := decodeDocStat(r), statOf(e, rank, idx.m.Docs); got != want {
			return corrupt("%s: doc %d: %+v, its entry and rank say %+v", t.name, d, got, want)
		}
		return nil
	})
}
