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
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// Index is an open index, for searching and reading. It is safe for
// concurrent use.
type Index struct {
	dir  string
	m    *Manifest
	lex  *lexicon.Lexicon
	ptrs *ptrTable
	docs []DocEntry
	urls []urlEntry
	// rankLog is log2(1 + rank*N) per document: the PageRank part of the
	// score, with ranks scaled so that the mean page has 1.
	rankLog []float32
	repo    *os.File
	info    *os.File

	mu      sync.Mutex
	barrels [lexicon.Barrels]*barrelData
	maps    [][]byte
}

type barrelData struct {
	short, full []byte
	err         error
}

// Open opens the index in dir.
func Open(dir string) (*Index, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	idx := &Index{dir: dir, m: m}
	ok := false
	defer func() {
		if !ok {
			idx.Close()
		}
	}()
	read := func(name string) ([]byte, error) {
		want, found := m.Files[name]
		if !found {
			return nil, corrupt("%s missing from %s", name, manifestName)
		}
		b, err := os.ReadFile(filepath.Join(dir, genName(name, m.Generation)))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, corrupt("%s: %v", name, err)
			}
			return nil, err
		}
		return b, checkFile(name, b, want)
	}
	for _, name := range []string{repoName, docInfoName} {
		st, err := os.Stat(filepath.Join(dir, name))
		want := map[string]int64{repoName: m.Repository, docInfoName: m.DocInfo}[name]
		if err != nil || st.Size() < want {
			return nil, corrupt("%s: shorter than the %d bytes committed (truncated)", name, want)
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
	if b, err = read("wordptrs"); err != nil {
		return nil, err
	}
	idx.ptrs, err = decodePtrTable(b, func(bb int) (int64, int64) {
		return m.Files[barrelName("short", bb)].Size, m.Files[barrelName("full", bb)].Size
	})
	if err != nil {
		return nil, err
	}
	for bb := range lexicon.Barrels {
		if idx.ptrs.count(bb) != idx.lex.Count(bb) {
			return nil, corrupt("wordptrs and lexicon disagree on barrel %d", bb)
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
	idx.mu.Lock()
	for _, m := range idx.maps {
		syscall.Munmap(m)
	}
	idx.maps = nil
	idx.mu.Unlock()
	return nil
}

// barrel maps the inverted barrels of bb and checks their checksums once.
func (idx *Index) barrel(bb int) (short, full []byte, err error) {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if d := idx.barrels[bb]; d != nil {
		return d.short, d.full, d.err
	}
	d := &barrelData{}
	idx.barrels[bb] = d
	for _, kind := range []string{"short", "full"} {
		name := barrelName(kind, bb)
		want := idx.m.Files[name]
		data, err := idx.mapFile(filepath.Join(idx.dir, genName(name, idx.m.Generation)), want.Size)
		if err == nil {
			err = checkFile(name, data, want)
		}
		if err != nil {
			d.err = err
			return nil, nil, err
		}
		if kind == "short" {
			d.short = data
		} else {
			d.full = data
		}
	}
	return d.short, d.full, nil
}

func (idx *Index) mapFile(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, corrupt("%s: %v", filepath.Base(path), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != size {
		return nil, corrupt("%s: %d bytes, manifest says %d (truncated?)", filepath.Base(path), st.Size(), size)
	}
	if size == 0 {
		return []byte{}, nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	idx.maps = append(idx.maps, m)
	return m, nil
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

// BarrelStats describes one barrel.
type BarrelStats struct {
	Barrel     int   `json:"barrel"`
	Words      int   `json:"words"`
	ShortBytes int64 `json:"short_bytes"`
	FullBytes  int64 `json:"full_bytes"`
	Postings   int64 `json:"postings"`
}

// Barrels describes the inverted barrels.
func (idx *Index) Barrels() []BarrelStats {
	out := make([]BarrelStats, lexicon.Barrels)
	for bb := range out {
		var p int64
		for _, n := range idx.ptrs.fullN[bb] {
			p += int64(n)
		}
		out[bb] = BarrelStats{Barrel: bb, Words: idx.lex.Count(bb), ShortBytes: idx.m.Files[barrelName("short", bb)].Size,
			FullBytes: idx.m.Files[barrelName("full", bb)].Size, Postings: p}
	}
	return out
}

// Words returns the number of words in the lexicon.
func (idx *Index) Words() int { return idx.lex.Len() }

// Verify reads every file of the index and checks its checksums.
func (idx *Index) Verify() error {
	for bb := range lexicon.Barrels {
		short, full, err := idx.barrel(bb)
		if err != nil {
			return err
		}
		for i := range idx.ptrs.count(bb) {
			for _, l := range []struct {
				data []byte
				off  []uint64
				n    []uint32
			}{{short, idx.ptrs.shortOff[bb], idx.ptrs.shortN[bb]}, {full, idx.ptrs.fullOff[bb], idx.ptrs.fullN[bb]}} {
				it := newPostingIter(l.data[l.off[i]:l.off[i+1]])
				k := uint32(0)
				for it.next() {
					k++
				}
				if it.err != nil || k != l.n[i] {
					return corrupt("barrel %d word %d: bad list", bb, i)
				}
			}
		}
	}
	return scanRepo(filepath.Join(idx.dir, repoName), idx.m.Repository, func(*RepoRecord) error { return nil })
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
