// Package barrel is the storage and index of "The Anatomy of a Large-Scale
// Hypertextual Web Search Engine" (Brin and Page, 1998), section 4: a
// repository of zlib-compressed pages, each prefixed by docID, length and
// URL, from which everything else can be rebuilt; a fixed-width document
// index; a URL-to-docID file of sorted URL checksums merged in batch; an
// in-memory lexicon; forward barrels by wordID range with 2-byte hits
// (package hit); anchors, a URL resolver and PageRank over the links
// database; the sorter into short (title and anchor hits) and full inverted
// barrels; and the searcher of section 4.5.
//
// An index is a directory. Append-only files (repository, docinfo,
// anchors) grow batch after batch; the other files are rewritten under a
// new generation number beside the old ones, fsynced, and committed by
// renaming in a new MANIFEST that holds their sizes and CRC-32C checksums.
// Readers check those checksums (the inverted barrels lazily, the first
// time a query touches one), so a damaged index is reported, never used.
package barrel

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// Index is an open index, for searching and reading. It is safe for
// concurrent use.
type Index struct {
	dir  string
	m    *Manifest
	lex  *lexicon.Lexicon
	df   *docFreqs
	segs []*segment
	docs []DocEntry
	urls []urlEntry
	// rankLog is log2(1 + rank*N) per document: the PageRank part of the
	// score, with ranks scaled so that the mean page has 1.
	rankLog []float32
	repo    *os.File
	info    *os.File
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
	ok := false
	defer func() {
		if !ok {
			idx.Close()
		}
	}()
	read := func(name string) ([]byte, error) { return readChecked(dir, name, m.Generation, m.Files) }
	for _, f := range []struct {
		name string
		want int64
	}{{repoName, m.Repository}, {docInfoName, m.DocInfo}, {anchorsName, m.Anchors}} {
		st, err := os.Stat(filepath.Join(dir, f.name))
		if err != nil || st.Size() < f.want {
			return nil, corrupt("%s: shorter than the %d bytes committed (truncated)", f.name, f.want)
		}
	}
	b, err := read("lexicon")
	if err != nil {
		return nil, err
	}
	idx.lex = lexicon.New()
	if err := idx.lex.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if b, err = read("df"); err != nil {
		return nil, err
	}
	if idx.df, err = decodeDocFreqs(b, idx.lex); err != nil {
		return nil, err
	}
	if b, err = read("docindex"); err != nil {
		return nil, err
	}
	if idx.docs, err = decodeDocIndex(b, m.Repository, m.DocInfo); err != nil {
		return nil, err
	}
	if len(idx.docs) != int(m.Docs) {
		return nil, corrupt("docindex has %d entries, manifest says %d", len(idx.docs), m.Docs)
	}
	idx.rankLog = make([]float32, len(idx.docs))
	for i, d := range idx.docs {
		idx.rankLog[i] = float32(math.Log2(1 + float64(d.Rank)*float64(len(idx.docs))))
	}
	if b, err = read("urls"); err != nil {
		return nil, err
	}
	if idx.urls, err = decodeURLMap(b, len(idx.docs)); err != nil {
		return nil, err
	}
	for _, si := range m.Segments {
		s, err := openSegment(dir, si, m)
		if err != nil {
			return nil, err
		}
		idx.segs = append(idx.segs, s)
		for bb := range lexicon.Barrels {
			if r := s.secs[bb].rels; len(r) > 0 && int(r[len(r)-1]) >= idx.lex.Count(bb) {
				return nil, corrupt("%s: barrel %d holds a word the lexicon does not", segName(si.ID, "ptrs"), bb)
			}
		}
	}
	if idx.repo, err = os.Open(filepath.Join(dir, repoName)); err != nil {
		return nil, err
	}
	if idx.info, err = os.Open(filepath.Join(dir, docInfoName)); err != nil {
		return nil, err
	}
	ok = true
	return idx, nil
}

// Close releases the index's files and mappings.
func (idx *Index) Close() error {
	for _, f := range []*os.File{idx.repo, idx.info} {
		if f != nil {
			f.Close()
		}
	}
	for _, s := range idx.segs {
		s.close()
	}
	return nil
}

// Manifest returns the index's manifest.
func (idx *Index) Manifest() Manifest { return *idx.m }

// Docs returns the number of docIDs.
func (idx *Index) Docs() int { return len(idx.docs) }

// Doc returns the document index entry of doc.
func (idx *Index) Doc(doc uint32) (DocEntry, bool) {
	if int(doc) >= len(idx.docs) {
		return DocEntry{}, false
	}
	return idx.docs[doc], true
}

// Info returns the URL and title of doc.
func (idx *Index) Info(doc uint32) (url, title string, err error) {
	e, ok := idx.Doc(doc)
	if !ok || e.Status == StatusNone {
		return "", "", fmt.Errorf("no document %d", doc)
	}
	return readDocInfoAt(idx.info, int64(e.InfoOff), idx.m.DocInfo)
}

// Lookup returns the docID of a URL.
func (idx *Index) Lookup(u string) (uint32, bool, error) {
	for _, c := range urlCandidates(idx.urls, urlSum(u)) {
		got, _, err := idx.Info(c.Doc)
		if err != nil {
			return 0, false, err
		}
		if got == u {
			return c.Doc, true, nil
		}
	}
	return 0, false, nil
}

// ErrNotFetched is returned for a document known only as a link target.
var ErrNotFetched = errors.New("document not in the repository (only linked to)")

// Page returns the stored page of doc, uncompressed.
func (idx *Index) Page(doc uint32) (url string, body []byte, err error) {
	e, ok := idx.Doc(doc)
	if !ok {
		return "", nil, fmt.Errorf("no document %d", doc)
	}
	if e.Status != StatusFetched {
		return "", nil, ErrNotFetched
	}
	rec, err := readRepoAt(idx.repo, int64(e.RepoOff), idx.m.Repository)
	if err != nil {
		return "", nil, err
	}
	if rec.Doc != doc {
		return "", nil, corrupt("repository record at %d holds doc %d, not %d", rec.Offset, rec.Doc, doc)
	}
	body, err = inflate(rec.Zlib)
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
			sec := &s.secs[bb]
			out[bb].ShortBytes += sec.shortLen
			out[bb].FullBytes += sec.fullLen
			for _, n := range sec.fullN {
				out[bb].Postings += int64(n)
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
	for _, s := range idx.segs {
		for bb := range lexicon.Barrels {
			full, short, err := s.barrel(bb)
			if err != nil {
				return err
			}
			sec := &s.secs[bb]
			for i := range sec.rels {
				for _, l := range []struct {
					data []byte
					off  []uint64
					n    []uint32
				}{{short, sec.shortOff, sec.shortN}, {full, sec.fullOff, sec.fullN}} {
					it := newPostingIter(l.data[l.off[i]:l.off[i+1]])
					k := uint32(0)
					for it.next() {
						k++
					}
					if it.err != nil || k != l.n[i] {
						return corrupt("%s barrel %d word %d: bad list", segName(s.info.ID, "inv"), bb, sec.rels[i])
					}
				}
			}
		}
		if _, err := s.docs(idx.dir, idx.m); err != nil {
			return err
		}
	}
	// The kept document frequencies against the lists: every word's live
	// postings counted over the segments.
	for bb := range lexicon.Barrels {
		for rel := range idx.lex.Count(bb) {
			id := lexicon.ID(bb, uint32(rel))
			n, err := idx.countLive(id)
			if err != nil {
				return err
			}
			if n != idx.df.get(id) {
				return corrupt("df: word %d in %d live documents, the lists hold %d", id, idx.df.get(id), n)
			}
		}
	}
	for _, f := range []struct {
		name string
		n    int64
		crc  uint32
	}{{repoName, idx.m.Repository, idx.m.RepositoryCRC}, {docInfoName, idx.m.DocInfo, idx.m.DocInfoCRC}, {anchorsName, idx.m.Anchors, idx.m.AnchorsCRC}} {
		got, err := fileCRC(filepath.Join(idx.dir, f.name), f.n)
		if err != nil {
			return err
		}
		if got != f.crc {
			return corrupt("%s: checksum mismatch over the %d bytes committed", f.name, f.n)
		}
	}
	anchors, err := readPrefix(filepath.Join(idx.dir, anchorsName), idx.m.Anchors)
	if err != nil {
		return err
	}
	n := uint32(len(idx.docs))
	if err := eachAnchor(anchors, func(from, to uint32, _ uint64, _ []byte) error {
		if from >= n || to >= n {
			return corrupt("anchors: docID out of range")
		}
		return nil
	}); err != nil {
		return err
	}
	for d := range idx.docs {
		if idx.docs[d].Status == StatusNone {
			continue
		}
		if _, _, err := idx.Info(uint32(d)); err != nil {
			return err
		}
	}
	return scanRepo(filepath.Join(idx.dir, repoName), idx.m.Repository, func(*RepoRecord) error { return nil })
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
	n := idx.m.Repository + idx.m.DocInfo + idx.m.Anchors
	for _, f := range idx.m.Files {
		n += f.Size
	}
	return n
}

// ParseDocID parses a decimal docID.
func ParseDocID(s string) (uint32, bool) {
	v, err := strconv.ParseUint(s, 10, 32)
	return uint32(v), err == nil
}
