// Package barrel is the storage and index of "The Anatomy of a Large-Scale
// Hypertextual Web Search Engine" (Brin and Page, 1998), section 4: a
// repository of compressed pages (S2, or the paper's zlib: codec.go), each
// prefixed by docID, length and URL, from which everything else can be
// rebuilt; a document index; a
// URL-to-docID map of URL checksums merged in batch; a lexicon; forward
// barrels by wordID range with 2-byte hits (package hit); anchors, a URL
// resolver and PageRank over the links database; the sorter into short
// (title and anchor hits) and full inverted barrels; and the searcher of
// section 4.5.
//
// An index is a directory, built batch by batch (one turn of a crawl loop
// each), and the structure is chosen so that a batch costs the same
// whatever the index's size: nothing global is rewritten or read whole.
//
//   - Append-only files grow: repository, docinfo, anchors, words.
//   - Each batch writes a segment (as Lucene does): the inverted barrels of
//     the documents it indexed and their document-index entries. A
//     document's entry is in the newest segment holding it, so the document
//     index needs no global file; a merge policy keeps segments few and
//     merges early those that lost many documents to later batches.
//   - Maps that only grow (URL to docID, word to wordID, anchors by target,
//     and the changes of each word's live document frequency) are sorted
//     runs, one per batch, merged as a log-structured merge tree merges
//     them: each record is rewritten O(log n) times, and a lookup is one
//     binary search per run.
//   - Ranks are one table rewritten only when PageRank runs, on a schedule.
//
// An embedded B-tree store (bbolt) was the alternative: it updates in
// place, but a batch's new URLs and words land on random pages (a page
// write per key once the tree outgrows the batch), it has no checksums of
// its pages, and its commit would be a second commit point beside the
// manifest. Sorted immutable files keep the one commit point and check
// every byte they read.
//
// Files are written beside the old ones, fsynced, and committed by
// renaming in a new MANIFEST that holds their sizes and CRC-32C checksums.
// Readers map files and check what they read the first time they read it
// (a barrel section, a 4 KiB block of a table, a barrel's word pointers),
// so opening an index reads headers, a damaged index is reported, never
// used, and a search reads what its words need.
package barrel

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// Index is an open index, for searching and reading. It is safe for
// concurrent use.
type Index struct {
	dir   string
	m     *Manifest
	lex   *lexStore
	df    *runSet
	segs  []*segment
	urls  *runSet
	ranks *table // nil before the first ranking
	// dstats is the document statistics table (docstats.go), nil in an
	// index of format 12 and before.
	dstats *table
	info   *logView

	// The repository's and the text's views are opened by views, the
	// first time a page or a snippet is read: a query without snippets
	// reads neither (opening their maps was a seventh of the CPU of
	// opening a year's index).
	viewOnce sync.Once
	viewErr  error
	repo     *logView
	text     *logView // nil when no page has stored text

	analyzers sync.Pool // of *analysis.Analyzer, the index's analysis
	avgState
}

// Open opens the index in dir.
func Open(dir string) (*Index, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	idx, err := openManifest(dir, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return idx, nil
}

func openManifest(dir string, m *Manifest) (*Index, error) {
	idx := &Index{dir: dir, m: m}
	an, _ := analysisOf(m.Analysis)
	idx.analyzers.New = func() any { return analysis.New(an) }
	ok := false
	defer func() {
		if !ok {
			idx.Close()
		}
	}()
	for _, f := range m.appendFiles() {
		if f.want == 0 {
			continue // an index of format 3 has no text file
		}
		st, err := os.Stat(filepath.Join(dir, f.name))
		if err != nil || st.Size() < f.want {
			return nil, corrupt("%s: shorter than the %d bytes committed (truncated)", f.name, f.want)
		}
	}
	var err error
	if idx.lex, err = openLexStore(dir, m); err != nil {
		return nil, err
	}
	if idx.df, err = openRuns(dir, dfKind, m.DFRuns, m); err != nil {
		return nil, err
	}
	if idx.urls, err = openRuns(dir, urlKind, m.URLRuns, m); err != nil {
		return nil, err
	}
	if m.Ranks != 0 {
		name := runName("ranks", m.Ranks)
		sum, ok := m.Files[name]
		if !ok {
			return nil, corrupt("%s missing from %s", name, manifestName)
		}
		if idx.ranks, err = openTable(dir, name, sum); err != nil {
			return nil, err
		}
		if idx.ranks.size != 4 || idx.ranks.count != int(m.RankedDocs) || m.RankedDocs > m.Docs {
			return nil, corrupt("%s: %d ranks, manifest says %d", name, idx.ranks.count, m.RankedDocs)
		}
	}
	if err := idx.openDocStats(); err != nil {
		return nil, err
	}
	for _, si := range m.Segments {
		s, err := openSegment(dir, si, m)
		if err != nil {
			return nil, err
		}
		idx.segs = append(idx.segs, s)

	}
	if idx.info, err = openLogView(dir, docInfoName, m.InfoSpace, m); err != nil {
		return nil, err
	}
	// A result's URL and title are a docinfo record each: read from a
	// mapping, ten results cost no system call (their ten preads were a
	// third of the cheapest queries' time).
	idx.info.mapCommitted(m.InfoSpace.physical(m.DocInfo))
	ok = true
	return idx, nil
}

// views opens the repository's and the text's views, the first time.
func (idx *Index) views() error {
	idx.viewOnce.Do(func() {
		m := idx.m
		if idx.repo, idx.viewErr = openLogView(idx.dir, repoName, m.RepoSpace, m); idx.viewErr == nil && m.Text > 0 {
			idx.text, idx.viewErr = openLogView(idx.dir, textName, m.TextSpace, m)
		}
		if idx.viewErr != nil {
			idx.viewErr = fmt.Errorf("%s: %w", idx.dir, idx.viewErr)
		}
	})
	return idx.viewErr
}

// Close releases the index's files and mappings.
func (idx *Index) Close() error {
	idx.repo.close()
	idx.text.close()
	idx.info.close()
	for _, s := range idx.segs {
		s.close()
	}
	idx.urls.close()
	idx.ranks.close()
	idx.dstats.close()
	idx.lex.close()
	idx.df.close()
	return nil
}

// Manifest returns the index's manifest.
func (idx *Index) Manifest() Manifest { return *idx.m }

// Docs returns the number of docIDs.
func (idx *Index) Docs() int { return int(idx.m.Docs) }

// Doc returns the document index entry of doc: the entry of the newest
// segment holding it (where it is live), and its rank.
func (idx *Index) Doc(doc uint32) (DocEntry, bool) {
	e, ok, err := idx.doc(doc)
	return e, ok && err == nil
}

func (idx *Index) doc(doc uint32) (DocEntry, bool, error) {
	if doc >= idx.m.Docs {
		return DocEntry{}, false, nil
	}
	for i := len(idx.segs) - 1; i >= 0; i-- {
		e, ok, err := idx.segs[i].entry(doc)
		if err != nil {
			return e, false, err
		}
		if ok {
			e.Rank, err = idx.rank(doc)
			return e, err == nil, err
		}
	}
	return DocEntry{}, false, corrupt("doc %d is in no segment", doc)
}

// rank is the rank of doc: the last ranking's, or for a document added
// since, the rank of a page nothing links to.
func (idx *Index) rank(doc uint32) (float32, error) {
	if idx.ranks != nil && doc < idx.m.RankedDocs {
		r, err := idx.ranks.rec(int(doc))
		if err != nil {
			return 0, err
		}
		v := math.Float32frombits(binary.LittleEndian.Uint32(r))
		if math.IsNaN(float64(v)) || v < 0 {
			return 0, corrupt("%s: bad rank of doc %d", idx.ranks.name, doc)
		}
		return v, nil
	}
	return unlinkedRank(idx.m.Docs), nil
}

// unlinkedRank is the PageRank of a page nothing links to among n.
func unlinkedRank(n uint32) float32 { return float32(0.15 / float64(max(1, n))) }

// Info returns the URL and title of doc.
func (idx *Index) Info(doc uint32) (url, title string, err error) {
	d, err := idx.docInfo(doc)
	return d.url, d.title, err
}

func (idx *Index) docInfo(doc uint32) (docInfo, error) {
	e, ok, err := idx.doc(doc)
	if err != nil {
		return docInfo{}, err
	}
	if !ok {
		return docInfo{}, fmt.Errorf("no document %d", doc)
	}
	return readDocInfoAt(idx.info, int64(e.InfoOff), idx.m.DocInfo, idx.m.TextFrom)
}

// Lookup returns the docID of a URL.
func (idx *Index) Lookup(u string) (uint32, bool, error) {
	return lookupURL(idx.urls, u, func(d uint32) (string, error) {
		got, _, err := idx.Info(d)
		return got, err
	})
}

// lookupURL finds u in the URL runs; a lone checksum match is the URL
// (64-bit checksums), several are told apart by urlOf.
func lookupURL(rs *runSet, u string, urlOf func(uint32) (string, error)) (uint32, bool, error) {
	sum := urlSum(u)
	var cands []uint32
	hi := sum + 1
	if hi == 0 {
		hi = math.MaxUint64
	}
	if err := rs.each(sum, hi, func(k, v uint64) error {
		if k == sum {
			cands = append(cands, uint32(v))
		}
		return nil
	}); err != nil {
		return 0, false, err
	}
	if len(cands) == 1 {
		return cands[0], true, nil
	}
	for _, c := range cands {
		got, err := urlOf(c)
		if err != nil {
			return 0, false, err
		}
		if got == u {
			return c, true, nil
		}
	}
	return 0, false, nil
}

// eachLive calls fn for every document in docID order of segment... in
// segment order: each live document once, with its entry.
func (idx *Index) eachLive(fn func(d uint32, e DocEntry) error) error {
	for _, s := range idx.segs {
		if err := s.eachLive(fn); err != nil {
			return err
		}
	}
	return nil
}

// ErrNotFetched is returned for a document known only as a link target.
var ErrNotFetched = errors.New("document not in the repository (only linked to)")

// Page returns the stored page of doc, uncompressed.
func (idx *Index) Page(doc uint32) (url string, body []byte, err error) {
	e, ok, err := idx.doc(doc)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", nil, fmt.Errorf("no document %d", doc)
	}
	if e.Status != StatusFetched {
		return "", nil, ErrNotFetched
	}
	if err := idx.views(); err != nil {
		return "", nil, err
	}
	rec, err := readRepoAt(idx.repo, int64(e.RepoOff), idx.m.Repository)
	if err != nil {
		return "", nil, err
	}
	if rec.Doc != doc {
		return "", nil, corrupt("repository record at %d holds doc %d, not %d", rec.Offset, rec.Doc, doc)
	}
	body, err = inflate(idx.m.RepoCodec, rec.Page)
	if err == nil && crc(body) != e.Checksum {
		err = corrupt("doc %d: page checksum mismatch", doc)
	}
	return rec.URL, body, err
}

// BarrelStats describes one barrel over all segments.
type BarrelStats struct {
	Barrel     int   `json:"barrel"`
	Words      int   `json:"words"`
	ShortBytes int64 `json:"short_bytes"`
	FullBytes  int64 `json:"full_bytes"`
	Postings   int64 `json:"postings"` // deleted documents' postings included
}

// Barrels describes the inverted barrels, summed over the segments.
func (idx *Index) Barrels() []BarrelStats {
	out := make([]BarrelStats, lexicon.Barrels)
	for bb := range out {
		out[bb] = BarrelStats{Barrel: bb, Words: idx.lex.Count(bb)}
		for _, s := range idx.segs {
			sec, a, err := s.sec(bb)
			if err != nil {
				continue
			}
			out[bb].ShortBytes += sec.shortLen
			out[bb].FullBytes += sec.fullLen
			for i := range a.fullN.len() {
				out[bb].Postings += int64(a.fullN.at(i))
			}
		}
	}
	return out
}

// Segments describes the live segments, oldest first.
func (idx *Index) Segments() []SegmentInfo { return slices.Clone(idx.m.Segments) }

// Words returns the number of words in the lexicon.
func (idx *Index) Words() int { return idx.lex.Len() }

// Verify reads every file of the index and checks it: the checksum of
// every barrel section and the structure of every inverted list, every
// repository, docinfo and anchors record, and the CRC-32C of the whole of
// the append-only files against the manifest.
func (idx *Index) Verify() error {
	if err := idx.views(); err != nil {
		return err
	}
	for _, s := range idx.segs {
		for bb := range lexicon.Barrels {
			_, a, err := s.sec(bb)
			if err != nil {
				return err
			}
			full, short, err := s.barrel(bb)
			if err != nil {
				return err
			}
			for i := range a.rels.len() {
				for _, l := range []struct {
					data []byte
					off  u64le
					n    u32le
				}{{short, a.shortOff, a.shortN}, {full, a.fullOff, a.fullN}} {
					it := checkedIter(l.data[l.off.at(i):l.off.at(i+1)])
					k := uint32(0)
					for it.next() {
						k++
					}
					if it.err != nil || k != l.n.at(i) {
						return corrupt("%s barrel %d word %d: bad list", filepath.Base(s.path), bb, a.rels.at(i))
					}
				}
			}
		}
		if s.sums != nil {
			inv, err := s.invData()
			if err != nil {
				return err
			}
			if err := s.sums.check(inv, filepath.Base(s.path), 0, s.invSize); err != nil {
				return err
			}
		}
		if err := s.dt.verify(); err != nil {
			return err
		}
	}
	// The kept document frequencies against the lists: every word's live
	// postings counted over the segments; every word where its run says.
	for _, t := range idx.lex.runs.tabs {
		if err := t.verify(); err != nil {
			return err
		}
		for i := range t.count {
			r, _ := t.rec(i)
			key, v := binary.LittleEndian.Uint64(r), binary.LittleEndian.Uint64(r[8:])
			w, err := idx.lex.wordAt(v & (1<<34 - 1))
			if err != nil {
				return err
			}
			if lexicon.Hash(w) != key {
				return corrupt("lexicon: word at %d has another hash", v&(1<<34-1))
			}
			id := uint32(v >> 34)
			if got, ok, err := idx.lex.lookup(w); err != nil || !ok || got != id {
				return corrupt("lexicon: %q is word %d and %d (%v)", w, id, got, err)
			}
			n, err := idx.countLive(id)
			if err != nil {
				return err
			}
			df, err := dfOf(idx.df, id)
			if err != nil {
				return err
			}
			if int64(n) != df {
				return corrupt("df: word %d in %d live documents, the lists hold %d", id, df, n)
			}
		}
	}
	for _, t := range idx.df.tabs {
		if err := t.verify(); err != nil {
			return err
		}
	}
	for _, f := range idx.m.appendFiles() {
		if f.want == 0 {
			continue
		}
		got, err := fileCRC(filepath.Join(idx.dir, f.name), f.want)
		if err != nil {
			return err
		}
		if got != f.crc {
			return corrupt("%s: checksum mismatch over the %d bytes committed", f.name, f.want)
		}
	}
	n := idx.m.Docs
	if err := eachAnchorFile(filepath.Join(idx.dir, idx.m.AnchorSpace.name(anchorsName)), idx.m.AnchorsBytes(), func(from, to uint32, _ uint64, _ []byte) error {
		if from >= n || to >= n {
			return corrupt("anchors: docID out of range")
		}
		return nil
	}); err != nil {
		return err
	}
	// Every docID live in exactly one segment, its entry pointing at its
	// docinfo record and page; the runs in order.
	live := newBitset(n)
	fetched := uint32(0)
	var pw PageWords
	if err := idx.eachLive(func(d uint32, e DocEntry) error {
		if d >= n || live.has(d) {
			return corrupt("doc %d live twice or out of range", d)
		}
		live.set(d)
		pw.add(e, 1)
		if e.Status == StatusFetched {
			fetched++
			if e.RepoOff >= uint64(idx.m.Repository) {
				return corrupt("doc %d: repository offset out of range", d)
			}
		}
		info, err := readDocInfoAt(idx.info, int64(e.InfoOff), idx.m.DocInfo, idx.m.TextFrom)
		if err == nil && info.textRef != 0 {
			if idx.text == nil {
				return corrupt("doc %d: text reference, but no %s file", d, textName)
			}
			var t *pageText
			if t, err = readTextAt(idx.text, int64(info.textRef-1), idx.m.Text); err == nil {
				if t.words != int(e.Words) {
					return corrupt("doc %d: %d words in its text, %d in its entry", d, t.words, e.Words)
				}
				err = t.check()
			}
		}
		return err
	}); err != nil {
		return err
	}
	for d := range n {
		if !live.has(d) {
			return corrupt("doc %d is live in no segment", d)
		}
	}
	if fetched != idx.m.Fetched {
		return corrupt("%d fetched documents, manifest says %d", fetched, idx.m.Fetched)
	}
	if got := idx.m.PageWords; got != nil && *got != pw {
		return corrupt("%d live fetched pages of %d words, manifest says %d of %d", pw.Pages, pw.Words, got.Pages, got.Words)
	}
	for _, t := range idx.urls.tabs {
		if err := t.verify(); err != nil {
			return err
		}
	}
	anc, err := openRuns(idx.dir, anchorKind, idx.m.AnchorRuns, idx.m)
	if err != nil {
		return err
	}
	defer anc.close()
	for _, t := range anc.tabs {
		if err := t.verify(); err != nil {
			return err
		}
	}
	if idx.ranks != nil {
		if err := idx.ranks.verify(); err != nil {
			return err
		}
		for d := range idx.m.RankedDocs {
			if _, err := idx.rank(d); err != nil {
				return err
			}
		}
	}
	if err := idx.verifyDocStats(); err != nil {
		return err
	}
	// The maps of each reclaimed file, and of a copy under way.
	for _, s := range idx.m.spaces() {
		for _, maps := range [][]int{s.sp.Maps, s.sp.copyMaps()} {
			ts, _, err := openMaps(idx.dir, maps, idx.m)
			if err != nil {
				return err
			}
			for _, t := range ts {
				err = cmp.Or(err, t.verify())
			}
			closeTables(ts)
			if err != nil {
				return err
			}
		}
	}
	sp := idx.m.RepoSpace
	return scanRepo(filepath.Join(idx.dir, sp.name(repoName)), sp.physical(idx.m.Repository), func(*RepoRecord) error { return nil })
}

// anchorCounts counts the records of the anchors file, and the live ones
// (in the current version of their page), reading it once.
func (idx *Index) anchorCounts() (records, live int64, err error) {
	cur := make([]uint64, idx.m.Docs)
	for i := range cur {
		cur[i] = NoOffset
	}
	if err := idx.eachLive(func(d uint32, e DocEntry) error {
		if d < idx.m.Docs && e.Status == StatusFetched {
			cur[d] = e.RepoOff
		}
		return nil
	}); err != nil {
		return 0, 0, err
	}
	err = eachAnchorFile(filepath.Join(idx.dir, idx.m.AnchorSpace.name(anchorsName)), idx.m.AnchorsBytes(), func(from, _ uint32, fromOff uint64, _ []byte) error {
		records++
		if int(from) < len(cur) && cur[from] == fromOff {
			live++
		}
		return nil
	})
	return records, live, err
}

// fileCRC is the CRC-32C of the first n bytes of a file.
func fileCRC(path string, n int64) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, corrupt("%s: %v", filepath.Base(path), err)
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	if k, err := io.Copy(h, io.LimitReader(f, n)); err != nil || k != n {
		return 0, corrupt("%s: shorter than the %d bytes committed", filepath.Base(path), n)
	}
	return h.Sum32(), nil
}

// Size returns the bytes of the index's committed files.
func (idx *Index) Size() int64 {
	var n int64
	for _, f := range idx.m.appendFiles() {
		n += f.want
	}
	for _, f := range idx.m.Files {
		n += f.Size
	}
	return n
}

// DocIndexBytes is the size of the document index: the segments'
// documents tables (files of their own up to format 10, parts of the
// compound files since) and the ranks.
func (idx *Index) DocIndexBytes() int64 {
	var n int64
	for _, s := range idx.segs {
		n += int64(len(s.dt.data))
	}
	if idx.ranks != nil {
		n += int64(len(idx.ranks.data))
	}
	return n
}

// ParseDocID parses a decimal docID.
func ParseDocID(s string) (uint32, bool) {
	v, err := strconv.ParseUint(s, 10, 32)
	return uint32(v), err == nil
}
