package barrel

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	jsoniter "github.com/json-iterator/go"
)

// manifestJSON decodes the manifest: json-iterator, as encoding/json's
// decoder was a twentieth of the CPU of a query on an index of 44
// segments opened for it (the manifest names each segment's files). A
// manifest it refuses is reported with encoding/json's message.
var manifestJSON = jsoniter.ConfigCompatibleWithStandardLibrary

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// ErrCorrupt is wrapped by every error about a damaged index.
var ErrCorrupt = errors.New("index corrupt")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// FileSum is the size and CRC-32C of a generation file.
type FileSum struct {
	Size int64  `json:"size"`
	CRC  uint32 `json:"crc32c"`
}

// Manifest is the commit point of an index: the live segments, the files
// of the current generation with their checksums, and the committed
// lengths and CRC-32C of the append-only files. It is replaced by
// write-beside, fsync and rename, so a build that dies leaves the previous
// generation intact.
type Manifest struct {
	Format int `json:"format"`
	// Analysis is the ID of the text analysis that made the index's terms
	// (package analysis); an index of another is refused.
	Analysis   string `json:"analysis"`
	Generation int    `json:"generation"`
	Docs       uint32 `json:"docs"`    // docIDs assigned
	Fetched    uint32 `json:"fetched"` // documents in the repository
	Batches    int    `json:"batches"`
	// Pages skipped for a noindex directive, skipped because their
	// canonical URL was indexed, and indexed with a guessed charset, over
	// every batch.
	NoIndex int `json:"noindex,omitempty"`
	Folded  int `json:"canonical_folded,omitempty"`
	Guessed int `json:"charset_guessed,omitempty"`
	// LastBatch is the ID of the last batch applied (--batch): the same ID
	// again is a no-op.
	LastBatch string `json:"last_batch,omitempty"`
	// RepoCodec compresses the repository's pages (codec.go); indexes of
	// format 4 and before, which have no such field, are zlib.
	RepoCodec     string `json:"repository_codec"`
	Repository    int64  `json:"repository_bytes"`
	RepositoryCRC uint32 `json:"repository_crc32c"`
	DocInfo       int64  `json:"docinfo_bytes"`
	DocInfoCRC    uint32 `json:"docinfo_crc32c"`
	Anchors       int64  `json:"anchors_bytes"`
	AnchorsCRC    uint32 `json:"anchors_crc32c"`
	Words         int64  `json:"words_bytes"`
	WordsCRC      uint32 `json:"words_crc32c"`
	// Text holds the pages' extracted text for snippets (textstore.go).
	// Docinfo records from TextFrom on carry the offset of their page's
	// text; those before it (written by format 3) carry none, and their
	// snippets are made by parsing the stored page.
	Text     int64  `json:"text_bytes"`
	TextCRC  uint32 `json:"text_crc32c"`
	TextFrom int64  `json:"docinfo_text_from"`
	// RepoSpace and TextSpace place the repository's and the text's
	// records on disk once reclaim (reclaim.go) has dropped their dead
	// records; Repository and Text stay the files' logical lengths, the
	// offsets the document entries, anchors and docinfo records hold.
	RepoSpace Reclaimed `json:"repository_space"`
	TextSpace Reclaimed `json:"text_space"`
	// InfoSpace and AnchorSpace do the same for docinfo and the anchors
	// file (format 8 on), DocInfo and Anchors staying their logical
	// lengths; LiveAnchors counts the anchor records live (in the current
	// version of their page), which AnchorSpace.Records less it are dead.
	InfoSpace   Reclaimed `json:"docinfo_space"`
	AnchorSpace Reclaimed `json:"anchors_space"`
	LiveAnchors int64     `json:"live_anchors"`
	// LexCounts is the number of words per barrel; LexRuns and DFRuns
	// the runs of the lexicon and of the document frequencies.
	LexCounts  [64]uint32 `json:"lexicon_counts"`
	LexRuns    []RunInfo  `json:"lexicon_runs"`
	DFRuns     []RunInfo  `json:"df_runs"`
	RankSource string     `json:"rank_source"`
	// RankedAt is the batch count when ranks were last computed.
	RankedAt int `json:"ranked_at_batch"`
	// Ranks is the ID of the ranks table (one float32 per docID below
	// RankedDocs); documents after it have the rank of an unlinked page.
	Ranks      int    `json:"ranks,omitempty"`
	RankedDocs uint32 `json:"ranked_docs"`
	// DocStats is the ID of the document statistics table (docstats.go:
	// the lengths of each docID's live copy in the segments marked
	// InDocStats), 0 in an index of format 12 and before.
	DocStats int `json:"doc_stats,omitempty"`
	// URLRuns and AnchorRuns are the runs of the URL map and of the
	// anchors by target, oldest first.
	URLRuns    []RunInfo `json:"url_runs"`
	AnchorRuns []RunInfo `json:"anchor_runs"`
	// PageWords counts the live fetched documents and their words, for
	// BM25's mean page length; nil in an index written before it was
	// kept, which its next batch counts whole.
	PageWords   *PageWords         `json:"page_words,omitempty"`
	Segments    []SegmentInfo      `json:"segments"`
	NextSegment int                `json:"next_segment"`
	Files       map[string]FileSum `json:"files"`
}

// PageWords is the number of live fetched documents and the sum of their
// word counts. Each batch adds its documents' entries and takes away
// those they supersede, so that a query reads the mean page length
// exactly, where estimating it from the segments' tables was a tenth of
// the CPU of one query on a year's index opened for it.
type PageWords struct {
	Pages int64 `json:"pages"`
	Words int64 `json:"words"`
}

// add counts entry e in (sign 1) or out (sign -1).
func (p *PageWords) add(e DocEntry, sign int64) {
	if e.Status == StatusFetched {
		p.Pages += sign
		p.Words += sign * int64(e.Words)
	}
}

// diskName is the file holding manifest entry name: segment files and
// tables are immutable and named once; the others carry the generation.
func diskName(name string, gen int) string {
	if fixedName(name) {
		return name
	}
	return genName(name, gen)
}

func fixedName(name string) bool {
	return strings.HasPrefix(name, segPrefix) || strings.HasSuffix(name, ".tab")
}

const (
	manifestName = "MANIFEST"
	repoName     = "repository"
	docInfoName  = "docinfo"
	anchorsName  = "anchors"
	textName     = "text"
	// formatNumber 14: a segment's word arrays, a barrel's, are in blocks
	// of 64 words, each with its checksum, after a fence a block
	// (segBlocksMagic), so that a word's first lookup reads one block
	// instead of its barrel's arrays whole; a format 13 index opens as it
	// is, its segments read as they were written, and becomes format 14
	// at its next commit (its new segments in blocks).
	// Format 13: a table of every document's length and title
	// length (docstats.go), so that a query reads them at a page's docID
	// instead of searching its segment's documents table; a format 12
	// index opens as it is, its lengths read from the documents tables,
	// and becomes format 13 at its next commit, which writes the table.
	// Format 12: a new table (a segment's documents, the runs, the
	// ranks) says its block size in its footer, and one of up to about 5
	// MB is checked by blocks of 1 KiB where it was 4 KiB (runs.go); a
	// format 11 index opens as it is, its tables read by blocks of 4 KiB
	// until rewritten, and becomes format 12 at its next commit.
	// Format 11: a new segment is one compound file (seg-N.seg:
	// its lists, word pointers, documents table and block sums) besides
	// its deletion list, where format 10 wrote four files; a format 10
	// index opens as it is, its segments read from their four files until
	// a merge rewrites them, and becomes format 11 at its next commit.
	// Format 10: each segment's .inv file has block checksums
	// (seg-N.sums, invsums.go), so that a query checks the blocks of the
	// lists it reads instead of their barrels whole. A format 9 index has
	// none, opens as it is (its barrels checked whole) and becomes format
	// 10 at its next commit, which writes its segments' sums. Format 9:
	// pages carry emphasis hits (hit.Emph, the words set
	// off in running text). A format 8 index has none (its pages have no
	// emphasis hits until re-indexed), opens as it is and becomes format
	// 9 at its next commit. Format 8: docinfo and the anchors file give the space of
	// their dead records back as well (Manifest.InfoSpace, AnchorSpace,
	// LiveAnchors). A format 7 index has neither field (its docinfo and
	// anchors offsets are the files' own), opens as it is and becomes
	// format 8 at its next commit, which counts its anchors, live and
	// dead, once. Format 7: the repository and the text give the space of
	// their dead records back (reclaim.go): Manifest.RepoSpace and
	// TextSpace map their logical offsets to the file on disk; and pages
	// carry definition hits (hit.Def, the terms a page defines). A format
	// 6 index has neither (its offsets are the files' own, its pages have
	// no definition hits until re-indexed), opens as it is and becomes
	// format 7 at its next commit. Format 6: each document's entry counts
	// the anchor records its postings hold (DocEntry.Anchors), so that a
	// document can wait for more anchors before it is re-indexed for them;
	// format 5's entries say 0, read as "every anchor live then", and a
	// format 5 index becomes the current format at its next commit. Format
	// 5: the repository's codec named in the manifest (S2 for a new index).
	// Format 4 (the pages' text stored for snippets, a zlib repository) is
	// read as format 5 with codec zlib, and format 3 (no text) as well,
	// with every docinfo record before TextFrom; both become the current
	// format at their next commit, keeping zlib. Formats 1 (one set of
	// barrels rewritten per batch) and 2 (segments without live document
	// frequencies) are read only by rebuild.
	formatNumber        = 14
	formatNoWordBlocks  = 13
	formatNoDocStats    = 12
	formatBigTableBlock = 11 // and the first with compound segments
	formatBlockSums     = 10
	formatNoSums        = 9
	formatNoEmph        = 8
	formatNoInfoReclaim = 7
	formatNoReclaim     = 6 // nor definition hits
	formatNoAnchors     = 5
	formatZlib          = 4
	formatNoText        = 3
)

// appendFile names an append-only file on disk and its committed length.
type appendFileSum struct {
	name string
	want int64 // bytes on disk
	crc  uint32
}

// appendFiles lists the index's append-only files as they lie on disk.
func (m *Manifest) appendFiles() []appendFileSum {
	fs := []appendFileSum{{wordsName, m.Words, m.WordsCRC}}
	for _, s := range m.spaces() {
		fs = append(fs, appendFileSum{s.sp.name(s.kind), s.sp.physical(*s.size), *s.crc})
		if c := s.sp.Copy; c != nil {
			fs = append(fs, appendFileSum{c.File, c.Size, c.CRC})
		}
	}
	return fs
}

// RepositoryBytes, TextBytes, DocInfoBytes and AnchorsBytes are the
// repository's, the text's, docinfo's and the anchors file's bytes on
// disk (Repository, Text, DocInfo and Anchors are their logical lengths).
func (m *Manifest) RepositoryBytes() int64 { return m.RepoSpace.physical(m.Repository) }
func (m *Manifest) TextBytes() int64       { return m.TextSpace.physical(m.Text) }
func (m *Manifest) DocInfoBytes() int64    { return m.InfoSpace.physical(m.DocInfo) }
func (m *Manifest) AnchorsBytes() int64    { return m.AnchorSpace.physical(m.Anchors) }

// Format is the index format this barrel writes (MANIFEST "format").
const Format = formatNumber

// CommitCompletes reports whether an index of format f, once committed by
// this barrel (a batch, or Expunge), holds what this barrel's build of
// the same batches writes, its older files in their own layout: the
// formats since f add what a commit writes for the whole index (format
// 10: the segments' block sums) or a layout its new files take (11: a
// segment in one file; 12: a table's block size in its footer), which a
// reader takes either way, answering the same.
func CommitCompletes(f int) bool { return f >= formatNoSums && f <= formatNumber }

func genName(name string, gen int) string { return name + "." + strconv.Itoa(gen) }

func readManifest(dir string) (*Manifest, error) { return readManifestFormat(dir, false) }

// readManifestFormat reads the manifest; with anyFormat an older format is
// returned too (rebuild needs only the repository's committed length).
func readManifestFormat(dir string, anyFormat bool) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, derr := os.Stat(dir); derr != nil {
				return nil, fmt.Errorf("no index at %s: %w", dir, derr)
			}
			return nil, fmt.Errorf("no index at %s (no %s; run barrel build first)", dir, manifestName)
		}
		return nil, err
	}
	var m Manifest
	if err := manifestJSON.Unmarshal(b, &m); err != nil {
		if jerr := json.Unmarshal(b, new(Manifest)); jerr != nil {
			err = jerr // encoding/json's message, on one line
		}
		return nil, corrupt("%s: %v", filepath.Join(dir, manifestName), err)
	}
	if m.Format == formatNoText {
		m.TextFrom = m.DocInfo // no record so far carries a text offset
	}
	if m.Format < formatNumber && m.RepoCodec == "" {
		m.RepoCodec = CodecZlib
	}
	if m.Format != formatNumber && m.Format != formatNoWordBlocks && m.Format != formatNoDocStats && m.Format != formatBigTableBlock && m.Format != formatBlockSums && m.Format != formatNoSums && m.Format != formatNoEmph && m.Format != formatNoInfoReclaim && m.Format != formatNoReclaim && m.Format != formatNoAnchors && m.Format != formatZlib && m.Format != formatNoText && !(anyFormat && m.Format >= 1 && m.Format < formatNumber) {
		return nil, fmt.Errorf("%s: index format %d, this barrel reads %d (barrel rebuild converts an older index)", dir, m.Format, formatNumber)
	}
	if err := checkCodec(m.RepoCodec); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, manifestName), err)
	}
	if _, ok := analysisOf(m.Analysis); !ok && !anyFormat {
		was := m.Analysis
		if was == "" {
			was = "none recorded (lower-cased words, from before stemming)"
		}
		return nil, fmt.Errorf("%s: index built with text analysis %s, this barrel analyses with %s: rebuild it (barrel rebuild, or barrel build over the same input or WARC files into a new index)", dir, was, analysis.ID(analysis.Options{}))
	}
	if m.Files == nil {
		m.Files = map[string]FileSum{}
	}
	return &m, nil
}

// analysisOf returns the options of the analysis an index records, and
// whether this barrel has it.
func analysisOf(id string) (analysis.Options, bool) {
	for _, o := range []analysis.Options{{}, {NoStem: true}} {
		if analysis.ID(o) == id {
			return o, true
		}
	}
	return analysis.Options{}, false
}

func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, manifestName+".tmp")
	if err := writeFileSync(tmp, append(b, '\n')); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, manifestName)); err != nil {
		return err
	}
	return syncDir(dir)
}

func writeFileSync(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// genWriter writes a new generation file, counting and checksumming it.
type genWriter struct {
	f   *os.File
	w   *bufio.Writer
	h   hash.Hash32
	n   int64
	err error
}

func createGen(path string) (*genWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &genWriter{f: f, w: bufio.NewWriterSize(f, 1<<20), h: crc32.New(castagnoli)}, nil
}

func (g *genWriter) Write(b []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	g.h.Write(b)
	n, err := g.w.Write(b)
	g.n += int64(n)
	g.err = err
	return n, err
}

func (g *genWriter) size() int64 { return g.n }

// finish flushes and closes the file and returns its checksum; syncFiles
// makes it durable before the manifest names it.
func (g *genWriter) finish() (FileSum, error) {
	err := g.err
	if err == nil {
		err = g.w.Flush()
	}
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return FileSum{Size: g.n, CRC: g.h.Sum32()}, err
}

// syncFiles fsyncs files concurrently (the file system can then commit them
// in fewer journal transactions than one by one).
func syncFiles(paths []string) error {
	errs := make(chan error, len(paths))
	sem := make(chan struct{}, 16)
	for _, p := range paths {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err == nil {
				err = f.Sync()
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			errs <- err
		}()
	}
	var first error
	for range paths {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// appendFile is an append-only file (repository, docinfo, anchors) cut back
// to its committed length when opened for writing.
type appendFile struct {
	f   *os.File
	w   *bufio.Writer
	off int64  // logical length (Reclaimed)
	crc uint32 // CRC-32C of the whole file, kept as it grows
	// records written since opened (each Write is one record)
	written int64
}

func openAppend(path string, committed int64, committedCRC uint32) (*appendFile, error) {
	return openAppendAt(path, Reclaimed{}, committed, committedCRC)
}

// openAppendAt opens an append-only file laid out as sp says: committed
// is its logical length, and the appendFile's offsets are logical too.
func openAppendAt(path string, sp Reclaimed, logical int64, committedCRC uint32) (*appendFile, error) {
	committed := sp.physical(logical)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() < committed {
		f.Close()
		return nil, corrupt("%s: %d bytes, manifest says %d (truncated)", filepath.Base(path), st.Size(), committed)
	}
	if st.Size() > committed { // left over by a build that did not commit
		if err := f.Truncate(committed); err != nil {
			f.Close()
			return nil, err
		}
	}
	if _, err := f.Seek(committed, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return &appendFile{f: f, w: bufio.NewWriterSize(f, 1<<20), off: logical, crc: committedCRC}, nil
}

func (a *appendFile) Write(b []byte) (int, error) {
	n, err := a.w.Write(b)
	a.off += int64(n)
	a.written++
	a.crc = crc32.Update(a.crc, castagnoli, b[:n])
	return n, err
}

func (a *appendFile) sync() error {
	if err := a.w.Flush(); err != nil {
		return err
	}
	return a.f.Sync()
}

func (a *appendFile) close() error { return a.f.Close() }

// Repository records: docID, compressed length, URL length, CRC-32C of the
// rest, then the URL and the compressed page (codec.go: S2, or zlib as
// RFC 1950 in indexes of format 4 and before).
const repoHeader = 4 + 4 + 2 + 4

func appendRepoRecord(b []byte, doc uint32, url string, z []byte) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, doc)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(z)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(url)))
	b = append(b, 0, 0, 0, 0)
	b = append(b, url...)
	b = append(b, z...)
	h := crc32.Update(crc(b[start:start+10]), castagnoli, b[start+repoHeader:])
	binary.LittleEndian.PutUint32(b[start+10:], h)
	return b
}

// RepoRecord is one document of the repository.
type RepoRecord struct {
	Doc    uint32
	URL    string
	Page   []byte // compressed page (the manifest's RepoCodec)
	Offset int64
	Size   int64
}

func parseRepoHeader(h []byte) (doc uint32, zlen int, ulen int, sum uint32) {
	return binary.LittleEndian.Uint32(h), int(binary.LittleEndian.Uint32(h[4:])),
		int(binary.LittleEndian.Uint16(h[8:])), binary.LittleEndian.Uint32(h[10:])
}

const maxRepoDoc = 256 << 20

// readRepoAt reads the repository record at off.
func readRepoAt(f io.ReaderAt, off, limit int64) (*RepoRecord, error) {
	var h [repoHeader]byte
	if off < 0 || off+repoHeader > limit {
		return nil, corrupt("repository: record offset %d out of range", off)
	}
	if _, err := f.ReadAt(h[:], off); err != nil {
		return nil, corrupt("repository: record at %d: %v", off, err)
	}
	doc, zlen, ulen, sum := parseRepoHeader(h[:])
	if zlen > maxRepoDoc || off+repoHeader+int64(ulen+zlen) > limit {
		return nil, corrupt("repository: record at %d runs past the end", off)
	}
	body := make([]byte, ulen+zlen)
	if _, err := f.ReadAt(body, off+repoHeader); err != nil {
		return nil, corrupt("repository: record at %d: %v", off, err)
	}
	if crc32.Update(crc(h[:10]), castagnoli, body) != sum {
		return nil, corrupt("repository: record at %d: checksum mismatch", off)
	}
	return &RepoRecord{Doc: doc, URL: string(body[:ulen]), Page: body[ulen:], Offset: off, Size: int64(repoHeader + ulen + zlen)}, nil
}

// scanRepo calls fn for each record of the repository's first limit bytes.
func scanRepo(path string, limit int64, fn func(*RepoRecord) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, limit), 1<<20)
	var off int64
	var h [repoHeader]byte
	for off < limit {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return corrupt("repository: record at %d: truncated header", off)
		}
		doc, zlen, ulen, sum := parseRepoHeader(h[:])
		if zlen > maxRepoDoc || off+repoHeader+int64(ulen+zlen) > limit {
			return corrupt("repository: record at %d runs past the end", off)
		}
		body := make([]byte, ulen+zlen)
		if _, err := io.ReadFull(r, body); err != nil {
			return corrupt("repository: record at %d: %v", off, err)
		}
		if crc32.Update(crc(h[:10]), castagnoli, body) != sum {
			return corrupt("repository: record at %d: checksum mismatch", off)
		}
		rec := &RepoRecord{Doc: doc, URL: string(body[:ulen]), Page: body[ulen:], Offset: off, Size: int64(repoHeader + ulen + zlen)}
		if err := fn(rec); err != nil {
			return err
		}
		off += rec.Size
	}
	return nil
}

// DocInfo records: total length, CRC-32C, then uvarint URL length, URL,
// uvarint text reference (1 + the offset of the page's record in the text
// file, 0 for none), title. Records before Manifest.TextFrom have no text
// reference.
func appendDocInfo(b []byte, url, title string, textRef uint64) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	b = binary.AppendUvarint(b, uint64(len(url)))
	b = append(b, url...)
	b = binary.AppendUvarint(b, textRef)
	b = append(b, title...)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-8))
	binary.LittleEndian.PutUint32(b[start+4:], crc(b[start+8:]))
	return b
}

// docInfo is a docinfo record.
type docInfo struct {
	url, title string
	textRef    uint64 // 1 + offset in the text file; 0: no stored text
}

// docInfoBufs are readDocInfoAt's buffers.
var docInfoBufs = sync.Pool{New: func() any { return new([512]byte) }}

// readDocInfoAt reads the docinfo record at off; records from textFrom on
// carry a text reference.
// A record is read with its header in one read of up to 512 bytes (a
// result's URL and title mostly fit), the rest of a longer one after.
func readDocInfoAt(f io.ReaderAt, off, limit, textFrom int64) (docInfo, error) {
	if off < 0 || off+8 > limit {
		return docInfo{}, corrupt("docinfo: offset %d out of range", off)
	}
	buf := docInfoBufs.Get().(*[512]byte)
	defer docInfoBufs.Put(buf)
	got := buf[:min(int64(len(buf)), limit-off)]
	k, err := f.ReadAt(got, off)
	if err != nil && (err != io.EOF || k < 8) { // a short file: the record may still be whole
		return docInfo{}, corrupt("docinfo at %d: %v", off, err)
	}
	got = got[:k]
	n := int64(binary.LittleEndian.Uint32(got))
	if off+8+n > limit {
		return docInfo{}, corrupt("docinfo at %d runs past the end", off)
	}
	if 8+n <= int64(len(got)) {
		return parseDocInfo(got[:8], got[8:8+n], off, textFrom)
	}
	body := make([]byte, n)
	if _, err := f.ReadAt(body, off+8); err != nil {
		return docInfo{}, corrupt("docinfo at %d: %v", off, err)
	}
	return parseDocInfo(got[:8], body, off, textFrom)
}

// parseDocInfo parses the docinfo record at off: its header h and body.
func parseDocInfo(h, body []byte, off, textFrom int64) (docInfo, error) {
	if crc(body) != binary.LittleEndian.Uint32(h[4:]) {
		return docInfo{}, corrupt("docinfo at %d: checksum mismatch", off)
	}
	ul, k := binary.Uvarint(body)
	if k <= 0 || ul > uint64(len(body)-k) {
		return docInfo{}, corrupt("docinfo at %d: bad URL length", off)
	}
	d := docInfo{}
	rest := body[k+int(ul):]
	if off >= textFrom {
		ref, k := binary.Uvarint(rest)
		if k <= 0 {
			return docInfo{}, corrupt("docinfo at %d: bad text reference", off)
		}
		d.textRef, rest = ref, rest[k:]
	}
	// The URL and the title, cut from one string.
	str := string(body[k:])
	d.url, d.title = str[:ul], str[len(str)-len(rest):]
	return d, nil
}
