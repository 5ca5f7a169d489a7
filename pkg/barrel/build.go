package barrel

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
)

// Options tune a build.
type Options struct {
	// SortMemory bounds the bytes of one sorter basket (default 64 MiB).
	SortMemory int64
	// Importance, when set, replaces PageRank: page importance by URL (for
	// example opic's "importance" field). Pages absent get the smallest.
	Importance map[string]float64
	// Codec is the repository compression of a new index: CodecS2 (the
	// default) or CodecZlib, the paper's (codec.go). An existing index
	// keeps the codec it was made with.
	Codec string
	// ZlibLevel is the zlib codec's level (default 1, the fastest).
	ZlibLevel int
	// PageRankEvery recomputes PageRank when this many batches have been
	// applied since the last ranking (0 or 1: every batch). Between two
	// rankings searches use the last ranks; new documents get the rank of
	// a page nothing links to.
	PageRankEvery int
	// MergeFactor is how many segments one merge takes at most, and how
	// many segments of about one size a tier of the tiered merge policy
	// holds (default DefaultMergeFactor).
	MergeFactor int
	// MaxMergeDocs bounds the documents one build reads in merges, and the
	// live documents of a merged segment (default DefaultMaxMergeDocs).
	MaxMergeDocs int
	// DeletesPct is the share of the index's documents (percent) that may
	// be deleted before merges reclaim them (default DefaultDeletesPct).
	DeletesPct int
	// FloorDocs is the segment size below which the merge policy counts a
	// segment as that size (default DefaultFloorDocs).
	FloorDocs int
	// Batch is the ID of the batch: the index records it atomically with
	// the batch, and NewBuilder refuses the same ID again with
	// ErrBatchApplied.
	Batch string
	// Analysis is the text analysis of a new index (recorded in it; an
	// existing index must have been built with the same).
	Analysis analysis.Options
	// AnchorGrowth: a document outside the batch is re-indexed for the
	// batch's anchors to it when its count of anchors passes a power of
	// 1+AnchorGrowth, about each time it has grown by this share (0:
	// DefaultAnchorGrowth; a negative value: for every new anchor, at
	// once). See anchorsCanWait.
	AnchorGrowth float64
}

// DefaultAnchorGrowth is the growth of a document's anchors that has it
// re-indexed for them: a quarter, as sekitei re-clusters a host.
const DefaultAnchorGrowth = 0.25

// ErrBatchApplied is returned by NewBuilder for a batch ID the index has
// already applied.
var ErrBatchApplied = errors.New("batch already applied")

// Stats counts what a build did.
type Stats struct {
	Added, Unchanged, Duplicate, Reindexed int
	// NoIndex counts pages not indexed for their robots directives,
	// Folded pages whose canonical is another URL (indexed under it, or
	// skipped when a page is already indexed there), and
	// Guessed pages whose charset was guessed from their bytes.
	NoIndex, Folded, Guessed int
	// Withdrawn counts the noindex pages that were indexed before and
	// left the index.
	Withdrawn int
	NewWords  int
	Anchors   int
	// Targets counts the documents outside the batch re-indexed for
	// their anchor text, AnchorsRead the anchors read to index the dirty
	// documents' anchor text, AnchorsDropped those of them a reclaim had
	// dropped (dead, known so without reading them).
	Targets, AnchorsRead, AnchorsDropped int
	// Waiting counts the targets of the batch's anchors left as they were:
	// their count of anchors passed no power of 1+Options.AnchorGrowth.
	Waiting int
	// Wall time of the phases of Commit: waiting for the last pages,
	// anchors and re-indexing, sorting, ranking and writing.
	WaitTime, AnchorTime, SortTime, FinishTime time.Duration
	// MergeTime is the wall time of the segment merges (part of FinishTime).
	MergeTime time.Duration
	// Reclaimed names the append-only file whose dead records the commit
	// dropped ("repository", "text", "docinfo" or "anchors"; reclaim.go),
	// ReclaimTime its wall time (part of FinishTime).
	Reclaimed   string
	ReclaimTime time.Duration
	// SegmentDocs is the documents of the batch's new segment (its pages
	// and the targets re-indexed for their anchors).
	SegmentDocs int
	// SegmentWords is the words of the batch's new segment; Deleted the
	// documents it marked deleted in older segments; Merged the segments
	// merged (MergedDocs their documents); Segments the live segments
	// after the batch; Ranked whether ranks were recomputed.
	SegmentWords, Deleted, Merged, MergedDocs, Segments int
	Ranked                                              bool
}

// Builder adds one batch of pages to an index and commits it.
type Builder struct {
	dir  string
	opts Options
	m    *Manifest
	lock *os.File

	lex *lexStore
	// The document index: entries the batch sets, over those of the
	// index's segments (b.old).
	nDocs     uint32
	changed   map[uint32]*DocEntry
	fetched   int // documents fetched for the first time
	withdrawn int // documents indexed before that now say noindex
	urls      *runSet
	anc       *runSet
	newAnc    [][2]uint64       // this batch's anchors by target: (to<<32|from, offset)
	anchorsOf map[uint32]uint32 // the anchor records each re-indexed document's postings hold
	// oldEntries remembers the entries oldDoc read.
	oldEntries map[uint32]oldEntry
	// bySize is the order oldDoc asks the old segments in: most
	// documents first; oldAsked counts its searches.
	bySize   []int
	oldAsked int

	batchURLs  map[string]uint32 // URLs given docIDs in this batch
	batchSums  [][2]uint64       // (checksum, docID) of those URLs
	inBatch    bitset
	repo, info *appendFile
	text       *appendFile // the pages' text, for snippets
	anchorsF   *appendFile
	fwd        *forwardSet
	pending    pendingAnchors
	newWords   int

	// the parallel pipeline of Add
	jobs    chan job
	queue   chan *prepared
	applied chan struct{}
	errMu   sync.Mutex
	err     error

	// reusable per-document buffers
	page       htmldoc.Doc
	group      hitGrouper // for re-parses
	keys       []uint64
	grouped    []uint64 // keys by barrel (indexHits)
	hits       []hit.Hit
	words      []wordHits
	sorted     []hit.Hit
	recbuf     []byte
	Stats      Stats
	done       bool
	old        *Index
	rankOnly   bool // RankIndex: no pages, ranks now
	mergeAll   bool // ForceMerge: no pages, one segment
	mergesOnly bool // Expunge: no pages, the merge policy's merges

	// live document frequencies, and what the batch takes from them: the
	// words the documents it supersedes had in their older segments
	df        *runSet
	oldN      uint32            // docIDs before the batch
	oldRepo   map[uint32]uint64 // re-crawled pages: repository offset of the version replaced
	noReclaim bool              // reclaim (reclaim.go) is off
	infoR     *logView          // docinfo, read at logical offsets
	// anchor records of the versions the batch replaced (dead with them)
	deadAnchors int64
	dead        wordSets
	dfRecs      [][2]uint64 // the batch's changes of document frequencies
	repoCache   map[uint32]uint64
}

// ErrLocked is returned when another build holds the index.
var ErrLocked = errors.New("index is locked by another build")

// NewBuilder opens (or creates) the index in dir for a new batch.
func NewBuilder(dir string, opts Options) (*Builder, error) {
	if opts.SortMemory <= 0 {
		opts.SortMemory = 64 << 20
	}
	if opts.ZlibLevel == 0 {
		opts.ZlibLevel = 1
	}
	if opts.Codec != "" {
		if err := checkCodec(opts.Codec); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
	}
	b := &Builder{dir: dir, opts: opts, lock: lock, batchURLs: map[string]uint32{}}
	b.page.Analyzer = analysis.New(opts.Analysis)
	if err := b.load(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Builder) load() error {
	m, err := readManifest(b.dir)
	if err != nil {
		if _, serr := os.Stat(filepath.Join(b.dir, manifestName)); !os.IsNotExist(serr) {
			return err
		}
		m = &Manifest{Format: formatNumber, Analysis: analysis.ID(b.opts.Analysis), RepoCodec: cmp.Or(b.opts.Codec, CodecS2), Files: map[string]FileSum{}, NextSegment: 1}
		b.lex = &lexStore{}
	} else {
		if want := analysis.ID(b.opts.Analysis); m.Analysis != want {
			return fmt.Errorf("%s: index built with analysis %s, this build analyses with %s: build a new index (barrel build over the same input into a new directory)", b.dir, m.Analysis, want)
		}
		if b.opts.Codec != "" && b.opts.Codec != m.RepoCodec {
			return fmt.Errorf("%s: the index's repository is %s; a batch cannot make it %s (barrel rebuild with that codec converts it)", b.dir, m.RepoCodec, b.opts.Codec)
		}
		if b.opts.Batch != "" && m.LastBatch == b.opts.Batch {
			return fmt.Errorf("%s: batch %s: %w", b.dir, b.opts.Batch, ErrBatchApplied)
		}
		idx, err := openManifest(b.dir, m)
		if err != nil {
			return fmt.Errorf("%s: %w", b.dir, err)
		}
		b.lex, b.urls, b.df, b.nDocs = idx.lex, idx.urls, idx.df, m.Docs
		b.old = idx
		if b.anc, err = openRuns(b.dir, anchorKind, m.AnchorRuns, m); err != nil {
			return fmt.Errorf("%s: %w", b.dir, err)
		}
	}
	b.m = m
	if m.Format < formatNoInfoReclaim {
		// Dead records are counted from the first commit of format 7.
		m.RepoSpace.Records, m.TextSpace.Records = int64(m.Fetched), int64(m.Fetched)
	}
	if m.Format < formatNoEmph {
		// and docinfo's from that of format 8; the anchors are counted
		// now, live and dead.
		m.InfoSpace.Records = int64(m.Docs)
		if b.old != nil {
			if m.AnchorSpace.Records, m.LiveAnchors, err = b.old.anchorCounts(); err != nil {
				return err
			}
		}
	}
	removeStale(b.dir, m)
	for _, s := range m.spaces() {
		if c := s.sp.Copy; c != nil { // cut back what a commit that died wrote
			a, err := openAppend(filepath.Join(b.dir, c.File), c.Size, c.CRC)
			if err != nil {
				return err
			}
			a.close()
		}
	}
	if b.repo, err = openAppendAt(filepath.Join(b.dir, m.RepoSpace.name(repoName)), m.RepoSpace, m.Repository, m.RepositoryCRC); err != nil {
		return err
	}
	if b.info, err = openAppendAt(filepath.Join(b.dir, m.InfoSpace.name(docInfoName)), m.InfoSpace, m.DocInfo, m.DocInfoCRC); err != nil {
		return err
	}
	if b.infoR, err = openLogView(b.dir, docInfoName, m.InfoSpace, m); err != nil {
		return err
	}
	if b.anchorsF, err = openAppendAt(filepath.Join(b.dir, m.AnchorSpace.name(anchorsName)), m.AnchorSpace, m.Anchors, m.AnchorsCRC); err != nil {
		return err
	}
	if b.text, err = openAppendAt(filepath.Join(b.dir, m.TextSpace.name(textName)), m.TextSpace, m.Text, m.TextCRC); err != nil {
		return err
	}
	if b.lex.log, err = openAppend(filepath.Join(b.dir, wordsName), m.Words, m.WordsCRC); err != nil {
		return err
	}
	b.lex.batch = newWordIDs()
	os.RemoveAll(filepath.Join(b.dir, "fwd.tmp"))
	b.fwd, err = newForwardSet(filepath.Join(b.dir, "fwd.tmp"))
	b.pending.path = filepath.Join(b.dir, "fwd.tmp", "anchors.pending")
	b.inBatch = newBitset(b.nDocs)
	b.oldN = b.nDocs
	b.changed = map[uint32]*DocEntry{}
	b.oldRepo = map[uint32]uint64{}
	return err
}

// Close releases the index; a batch not committed is dropped.
func (b *Builder) Close() error {
	b.wait()
	b.pending.close()
	if b.fwd != nil {
		b.fwd.close()
		os.RemoveAll(b.fwd.dir)
	}
	files := []*appendFile{b.repo, b.info, b.anchorsF, b.text}
	if b.lex != nil {
		files = append(files, b.lex.log)
	}
	for _, f := range files {
		if f != nil {
			f.close()
		}
	}
	if b.old != nil {
		b.old.Close()
	}
	b.infoR.close()
	b.anc.close()
	if b.lock != nil {
		b.lock.Close()
	}
	return nil
}

// docOf returns the docID of u, assigning a new one (with status st) when u
// was never seen.
func (b *Builder) docOf(u string, st uint8) (uint32, bool, error) {
	if d, ok := b.batchURLs[u]; ok {
		return d, false, nil
	}
	if d, ok, err := lookupURL(b.urls, u, b.docURL); err != nil || ok {
		return d, false, err
	}
	if b.nDocs >= hit.MaxInvDocID {
		return 0, false, fmt.Errorf("index full: %d documents", b.nDocs)
	}
	d := b.nDocs
	b.nDocs++
	infoOff := uint64(b.info.off)
	b.recbuf = appendDocInfo(b.recbuf[:0], u, "", 0)
	if _, err := b.info.Write(b.recbuf); err != nil {
		return 0, false, err
	}
	b.changed[d] = &DocEntry{Status: st, RepoOff: NoOffset, InfoOff: infoOff}
	b.batchURLs[u] = d
	b.batchSums = append(b.batchSums, [2]uint64{urlSum(u), uint64(d)})
	return d, true, nil
}

// lookupDoc returns the docID of u if it has one.
func (b *Builder) lookupDoc(u string) (uint32, bool, error) {
	if d, ok := b.batchURLs[u]; ok {
		return d, true, nil
	}
	return lookupURL(b.urls, u, b.docURL)
}

// entry returns the document index entry of d: the batch's, or the index's.
func (b *Builder) entry(d uint32) (DocEntry, error) {
	if e := b.changed[d]; e != nil {
		return *e, nil
	}
	if b.old == nil {
		return DocEntry{}, corrupt("doc %d has no entry", d)
	}
	e, _, ok, err := b.oldDoc(d)
	if err == nil && !ok {
		err = corrupt("doc %d has no entry", d)
	}
	return e, err
}

// oldDoc returns the entry document d had before the batch and the
// position of its segment (false for a document new in the batch),
// remembered: a commit asks for the same targets' entries several times
// (whether they wait for more anchors, where their page is, which anchors
// they held, their new entry, the segment they leave).
func (b *Builder) oldDoc(d uint32) (DocEntry, int, bool, error) {
	if c, ok := b.oldEntries[d]; ok {
		return c.e, c.seg, true, nil
	}
	if b.old == nil || d >= b.old.m.Docs {
		return DocEntry{}, 0, false, nil
	}
	found := func(e DocEntry, i int) (DocEntry, int, bool, error) {
		var err error
		if e.Rank, err = b.old.rank(d); err != nil {
			return e, 0, false, err
		}
		if b.oldEntries == nil {
			b.oldEntries = map[uint32]oldEntry{}
		}
		b.oldEntries[d] = oldEntry{e, i}
		return e, i, true, nil
	}
	// A document has one version not deleted, in the newest segment
	// holding it (a newer version deletes the older; Verify checks it).
	// A build that asks for many documents (a batch's anchors name tens
	// of thousands) reads each segment's live documents (a window of
	// docIDs at a time, liveWindow), and then searches one segment a
	// document; until then the largest segments, where most documents
	// live, are asked first, each skipped for a document it has deleted. Asking the newest
	// first took a search a segment (a year's index has 20 to 30).
	ask := func(i int) (DocEntry, int, bool, error) {
		e, ok, err := b.old.segs[i].entry(d)
		if err != nil || !ok {
			return e, 0, false, err
		}
		return found(e, i)
	}
	b.oldAsked++
	if b.oldAsked > liveBitsAfter {
		for i := len(b.old.segs) - 1; i >= 0; i-- {
			s := b.old.segs[i]
			if s.hasLive(d) {
				if e, seg, ok, err := ask(i); ok || err != nil {
					return e, seg, ok, err
				}
			}
		}
	}
	if b.bySize == nil {
		b.bySize = make([]int, len(b.old.segs))
		for i := range b.bySize {
			b.bySize[i] = i
		}
		slices.SortStableFunc(b.bySize, func(x, y int) int {
			return cmp.Compare(b.old.segs[y].dt.count, b.old.segs[x].dt.count)
		})
	}
	for _, i := range b.bySize {
		if !b.old.segs[i].del.has(d) {
			if e, seg, ok, err := ask(i); ok || err != nil {
				return e, seg, ok, err
			}
		}
	}
	// Live in none (a damaged index): the newest entry, as ever.
	for i := len(b.old.segs) - 1; i >= 0; i-- {
		if e, seg, ok, err := ask(i); ok || err != nil {
			return e, seg, ok, err
		}
	}
	return DocEntry{}, 0, false, corrupt("doc %d is in no segment", d)
}

type oldEntry struct {
	e   DocEntry
	seg int
}

func (b *Builder) docURL(d uint32) (string, error) {
	if err := b.info.w.Flush(); err != nil {
		return "", err
	}
	e, err := b.entry(d)
	if err != nil {
		return "", err
	}
	info, err := readDocInfoAt(b.infoR, int64(e.InfoOff), b.info.off, b.m.TextFrom)
	return info.url, err
}

// prepared is a page parsed and compressed by a worker, ready for the
// single goroutine that owns the lexicon and the files.
type prepared struct {
	url        string
	sum        uint32
	z          []byte
	text       []byte // the text record
	title      string
	titleWords int
	words      int
	// The page's distinct keys, concatenated, and the end of each; the
	// hits of key k are hits[starts[k]:starts[k+1]] (see hitGrouper).
	keys    []byte
	ends    []uint32
	starts  []uint32
	hits    []hit.Hit
	bufs    *groupBufs // keys, ends, starts and hits, once grouped
	links   []htmldoc.Link
	guessed bool  // charset guessed from the bytes
	noindex bool  // not to be indexed
	flags   uint8 // the directives its entry keeps (FlagNoArchive, ...)
	folded  bool  // url is the page's canonical, not the URL fetched
	done    chan struct{}
	err     error
}

// addWord adds a hit of word w: under the identifier it begins, if it
// begins one (at its first part), and under the word itself.
func (p *prepared) addWord(doc *htmldoc.Doc, w *htmldoc.Word, h hit.Hit) {
	if whole := doc.Whole(w); whole != nil {
		p.keys = append(p.keys, whole...)
		p.ends = append(p.ends, uint32(len(p.keys)))
		p.hits = append(p.hits, h)
	}
	p.keys = append(p.keys, doc.Key(w)...)
	p.ends = append(p.ends, uint32(len(p.keys)))
	p.hits = append(p.hits, h)
}

// prepare decodes, parses and compresses a page: the part of indexing
// that runs in parallel. The repository keeps the page as indexed: in
// UTF-8, so every re-parse reads what the build read.
func prepare(p *prepared, base *url.URL, pg *Page, pc *pageCompressor, doc *htmldoc.Doc, g *hitGrouper, te *textEncoder) {
	text, _, guessed := decodePage(pg)
	p.guessed = guessed
	doc.Parse(text, base)
	r := robotsOf(pg, doc)
	if r.noindex {
		p.noindex = true
		return
	}
	if c := canonicalOf(pg, doc, base); c != "" {
		p.url, p.folded = c, true
	}
	if r.nofollow {
		doc.Links = doc.Links[:0]
	}
	p.flags = r.flags()
	if meta := r.storedMeta(); meta != "" && !bytes.HasPrefix(text, []byte(meta)) {
		text = append([]byte(meta), text...)
	}
	p.sum = crc(text) // of the page as stored, which Index.Page checks
	if pc != nil {
		var err error
		if p.z, err = pc.compress(text); err != nil {
			p.err = err
			return
		}
		// The record is mostly the text compressed: made about that large
		// once, not grown from nothing.
		p.text = te.appendRecord(make([]byte, 0, len(doc.Text)/2+64), doc)
	}
	p.title = doc.Title
	p.words = len(doc.Words)
	p.links = slices.Clone(doc.Links)
	g.collect(p)
	for i := range doc.Words {
		w := &doc.Words[i]
		p.addWord(doc, w, hit.Plain(w.Capital, int(w.Font), i))
		if w.Emph { // and set off
			pos := i & (hit.EmphDfn - 1)
			if w.Dfn {
				pos |= hit.EmphDfn
			}
			p.addWord(doc, w, hit.Fancy(w.Capital, hit.Emph, pos))
		}
	}
	fancy := func(text string, typ int) int {
		pos := 0
		doc.Analyzer.Tokens([]byte(text), func(t analysis.Token) {
			if t.Whole && typ == hit.URL {
				return // "382.html", "docs.python.org": a new word per page, for no query
			}
			p.keys = append(p.keys, t.Term...)
			p.ends = append(p.ends, uint32(len(p.keys)))
			p.hits = append(p.hits, hit.Fancy(t.Capital, typ, pos))
			if !t.Whole {
				pos++
			}
		})
		return pos
	}
	p.titleWords = fancy(p.title, hit.Title)
	fancy(doc.Meta, hit.Meta)
	// The terms the page defines: an identifier joined by '_' counts
	// whole ("S_ISBLK" defines s_isblk, not isblk), its parts left out.
	// A position is left out between two entries, so the words of one
	// defined name are the ones at consecutive positions.
	pos, wholeEnd, entry := 0, -1, 0
	defs := []byte(doc.Defs)
	doc.Analyzer.Tokens(defs, func(t analysis.Token) {
		if t.Start < wholeEnd {
			return
		}
		if t.Whole {
			wholeEnd = t.End
		}
		if bytes.IndexByte(defs[entry:t.Start], '\n') >= 0 { // a new entry
			if pos > 0 {
				pos++
			}
			entry = t.Start
		}
		p.keys = append(p.keys, t.Term...)
		p.ends = append(p.ends, uint32(len(p.keys)))
		p.hits = append(p.hits, hit.Fancy(t.Capital, hit.Def, pos))
		if !t.Whole { // and the word as written (a whole is already)
			if form, ok := doc.Analyzer.DefForm(defs[t.Start:t.End]); ok {
				p.keys = append(p.keys, form...)
				p.ends = append(p.ends, uint32(len(p.keys)))
				p.hits = append(p.hits, hit.Fancy(t.Capital, hit.Def, pos))
			}
		}
		pos++
	})
	fancy(htmldoc.URLWords(p.url), hit.URL)
	g.group(p)
}

type job struct {
	p    *prepared
	base *url.URL
	page Page
}

// startWorkers starts the parse-and-compress workers and the goroutine
// that applies their results in input order.
func (b *Builder) startWorkers() {
	n := max(1, runtime.GOMAXPROCS(0))
	b.jobs = make(chan job, 4*n)
	b.queue = make(chan *prepared, 16*n)
	b.applied = make(chan struct{})
	// The workers range over this batch's channel: wait sets b.jobs to
	// nil, maybe before a worker has started.
	jobs := b.jobs
	for range n {
		go func() {
			doc := htmldoc.Doc{Analyzer: analysis.New(b.opts.Analysis)}
			pc := newPageCompressor(b.m.RepoCodec, b.opts.ZlibLevel)
			te := newTextEncoder()
			var g hitGrouper
			for j := range jobs {
				prepare(j.p, j.base, &j.page, pc, &doc, &g, te)
				close(j.p.done)
			}
		}()
	}
	go func() {
		defer close(b.applied)
		for p := range b.queue {
			<-p.done
			if b.firstErr() != nil {
				continue
			}
			if p.err != nil {
				b.setErr(p.err)
				continue
			}
			if err := b.apply(p); err != nil {
				b.setErr(err)
			}
			release(p)
		}
	}()
}

func (b *Builder) setErr(err error) {
	b.errMu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.errMu.Unlock()
}

func (b *Builder) firstErr() error {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	return b.err
}

// wait stops the workers and waits for every page to be applied.
func (b *Builder) wait() error {
	if b.jobs != nil {
		close(b.jobs)
		close(b.queue)
		<-b.applied
		b.jobs = nil
	}
	return b.firstErr()
}

// Add indexes one page fetched from pageURL. A page already in the index
// with the same content is left alone; a changed one is re-indexed under its
// docID. Pages are parsed and compressed in parallel and applied in the
// order given; an error of an earlier page may be returned by a later Add
// or by Commit. body must not be modified after the call.
func (b *Builder) Add(pageURL string, body []byte) error {
	return b.AddPage(Page{URL: pageURL, Body: body})
}

// AddPage is Add with the fetcher's decisions about the page: its
// charset, robots directives and canonical URL. A page whose directives say
// noindex is not stored (its URL stays a link target of other pages); the
// links of a nofollow page are not anchors; a page whose canonical is
// another URL of its host is indexed under the canonical, or skipped if a
// page is already indexed there.
func (b *Builder) AddPage(pg Page) error {
	pageURL := pg.URL
	if b.done {
		return errors.New("barrel: Add after Commit")
	}
	if err := b.firstErr(); err != nil {
		return err
	}
	base, err := url.Parse(pageURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fmt.Errorf("not an absolute http(s) URL: %q", clip(pageURL))
	}
	if len(pageURL) > math.MaxUint16 {
		return fmt.Errorf("URL longer than 65535 bytes")
	}
	base.Fragment, base.RawFragment = "", ""
	if b.jobs == nil {
		b.startWorkers()
	}
	p := &prepared{url: base.String(), done: make(chan struct{})}
	b.queue <- p
	b.jobs <- job{p, base, pg}
	return nil
}

// apply stores a prepared page: docID, repository, docinfo, lexicon,
// forward barrels, pending anchors.
func (b *Builder) apply(p *prepared) error {
	if p.guessed {
		b.Stats.Guessed++
	}
	if p.noindex {
		b.Stats.NoIndex++
		return b.withdraw(p.url)
	}
	if p.folded {
		// Indexed under its canonical URL, unless a page is there already.
		b.Stats.Folded++
		if d, ok, err := b.lookupDoc(p.url); err != nil {
			return err
		} else if ok && b.inBatch.has(d) {
			return nil
		} else if ok {
			e, err := b.entry(d)
			if err != nil {
				return err
			}
			if e.Status == StatusFetched && e.RepoOff != NoOffset {
				return nil
			}
		}
	}
	doc, _, err := b.docOf(p.url, StatusFetched)
	if err != nil {
		return err
	}
	b.inBatch = b.inBatch.grow(b.nDocs)
	if b.inBatch.has(doc) {
		b.Stats.Duplicate++
		return nil
	}
	e := b.changed[doc]
	if e == nil {
		old, err := b.entry(doc)
		if err != nil {
			return err
		}
		e = &old
		b.changed[doc] = e
	}
	if e.Status == StatusFetched && e.Checksum == p.sum && e.RepoOff != NoOffset {
		b.Stats.Unchanged++
		return nil
	}
	if e.Status == StatusFetched && e.RepoOff != NoOffset {
		b.Stats.Reindexed++
		b.oldRepo[doc] = e.RepoOff
	} else {
		b.Stats.Added++
		b.fetched++
	}
	b.inBatch.set(doc)
	repoOff := uint64(b.repo.off)
	b.recbuf = appendRepoRecord(b.recbuf[:0], doc, p.url, p.z)
	if _, err := b.repo.Write(b.recbuf); err != nil {
		return err
	}
	textRef := uint64(b.text.off) + 1
	if _, err := b.text.Write(p.text); err != nil {
		return err
	}
	infoOff := uint64(b.info.off)
	b.recbuf = appendDocInfo(b.recbuf[:0], p.url, p.title, textRef)
	if _, err := b.info.Write(b.recbuf); err != nil {
		return err
	}
	*e = DocEntry{Status: StatusFetched, Flags: p.flags, Checksum: p.sum, RepoOff: repoOff, InfoOff: infoOff,
		TitleWords: uint16(min(p.titleWords, math.MaxUint16)), Words: uint32(p.words), Rank: e.Rank}
	if err := b.indexHits(doc, p); err != nil {
		return err
	}
	for _, l := range p.links {
		if err := b.pending.add(doc, repoOff, l.URL, l.Text); err != nil {
			return err
		}
	}
	return nil
}

// withdraw takes out of the index a page indexed before that now says
// noindex: it becomes a link target only, as if never fetched. Its old
// version's words and anchors die as a re-indexed page's do.
func (b *Builder) withdraw(u string) error {
	d, ok, err := b.lookupDoc(u)
	if err != nil || !ok {
		return err
	}
	b.inBatch = b.inBatch.grow(b.nDocs)
	if b.inBatch.has(d) {
		return nil // indexed earlier in this batch: the first version stands
	}
	e := b.changed[d]
	if e == nil {
		old, err := b.entry(d)
		if err != nil {
			return err
		}
		e = &old
		b.changed[d] = e
	}
	if e.Status != StatusFetched || e.RepoOff == NoOffset {
		return nil
	}
	b.oldRepo[d] = e.RepoOff
	b.inBatch.set(d)
	infoOff := uint64(b.info.off)
	b.recbuf = appendDocInfo(b.recbuf[:0], u, "", 0)
	if _, err := b.info.Write(b.recbuf); err != nil {
		return err
	}
	*e = DocEntry{Status: StatusLinked, RepoOff: NoOffset, InfoOff: infoOff, Rank: e.Rank}
	b.withdrawn++
	b.Stats.Withdrawn++
	return nil
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// indexHits writes a page's own hits (text, title, meta, URL) to the
// forward barrels.
func (b *Builder) indexHits(doc uint32, p *prepared) error {
	// keys: wordID<<32 | distinct key index, grouped by barrel
	b.keys = b.keys[:0]
	start := uint32(0)
	for k, end := range p.ends {
		id, isNew, err := b.lex.Add(p.keys[start:end])
		if err != nil {
			return err
		}
		if isNew {
			b.newWords++
		}
		b.keys = append(b.keys, uint64(id)<<32|uint64(k))
		start = end
	}
	if len(b.keys) == 0 {
		return nil
	}
	b.grouped = byBarrel(b.keys, b.grouped)
	b.words = b.words[:0]
	for _, key := range b.grouped {
		k := uint32(key)
		b.words = append(b.words, wordHits{id: uint32(key >> 32), hits: p.hits[p.starts[k]:p.starts[k+1]]})
	}
	return b.fwd.add(doc, b.words)
}

func (b *Builder) addHit(key []byte, h hit.Hit) error {
	id, isNew, err := b.lex.Add(key)
	if err != nil {
		return err
	}
	if isNew {
		b.newWords++
	}
	b.keys = append(b.keys, uint64(id)<<32|uint64(len(b.hits)))
	b.hits = append(b.hits, h)
	return nil
}

// flushHits groups the collected hits by wordID and writes them.
func (b *Builder) flushHits(doc uint32) error {
	if len(b.keys) == 0 {
		return nil
	}
	slices.Sort(b.keys)
	b.words = b.words[:0]
	b.sorted = slices.Grow(b.sorted[:0], len(b.keys))[:len(b.keys)]
	sorted := b.sorted
	for i, k := range b.keys {
		sorted[i] = b.hits[uint32(k)]
	}
	for i := 0; i < len(b.keys); {
		id := uint32(b.keys[i] >> 32)
		j := i
		for j < len(b.keys) && uint32(b.keys[j]>>32) == id {
			j++
		}
		b.words = append(b.words, wordHits{id: id, hits: sorted[i:j]})
		i = j
	}
	return b.fwd.add(doc, b.words)
}

// anchor records: from docID, to docID, repository offset of the version
// of the page the anchor sits in (anchors of replaced versions are dead),
// text length, CRC-32C, text.
const anchorHeader = 4 + 4 + 8 + 2 + 4

func appendAnchor[T string | []byte](b []byte, from, to uint32, fromOff uint64, text T) []byte {
	if len(text) > math.MaxUint16 {
		text = text[:math.MaxUint16]
	}
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, from)
	b = binary.LittleEndian.AppendUint32(b, to)
	b = binary.LittleEndian.AppendUint64(b, fromOff)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
	b = append(b, 0, 0, 0, 0)
	b = append(b, text...)
	binary.LittleEndian.PutUint32(b[start+18:], crc32Update(crc(b[start:start+18]), b[start+anchorHeader:]))
	return b
}

// eachAnchor calls fn for each record of the anchors file.
func eachAnchor(data []byte, fn func(from, to uint32, fromOff uint64, text []byte) error) error {
	for off := 0; off < len(data); {
		from, to, fromOff, text, err := parseAnchor(data[off:])
		if err != nil {
			return corrupt("anchors: %v at %d", err, off)
		}
		if err := fn(from, to, fromOff, text); err != nil {
			return err
		}
		off += anchorHeader + len(text)
	}
	return nil
}

// parseAnchor reads the anchors-file record at the start of h.
func parseAnchor(h []byte) (from, to uint32, fromOff uint64, text []byte, err error) {
	if len(h) < anchorHeader {
		return 0, 0, 0, nil, errors.New("truncated record")
	}
	n := int(binary.LittleEndian.Uint16(h[16:]))
	if anchorHeader+n > len(h) {
		return 0, 0, 0, nil, errors.New("truncated record")
	}
	text = h[anchorHeader : anchorHeader+n]
	if crc32Update(crc(h[:18]), text) != binary.LittleEndian.Uint32(h[18:]) {
		return 0, 0, 0, nil, errors.New("checksum mismatch")
	}
	return binary.LittleEndian.Uint32(h), binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint64(h[8:]), text, nil
}

// resolveAnchors is the URL resolver: it turns the batch's link targets
// into docIDs (new URLs get new docIDs, sorted by checksum and merged into
// the URL file in one pass) and appends the anchors file.
func (b *Builder) resolveAnchors() error {
	type target struct {
		sum uint64
		url string
		i   int32 // its place in the order first met
	}
	// The targets in the order first met, and each anchor's target: the
	// second pass over the anchors needs no lookup by URL.
	seen := map[string]int32{}
	var targets []target
	of := make([]int32, 0, b.pending.n)
	if err := b.pending.each(func(_ uint32, _ uint64, u, _ []byte) error {
		t, ok := seen[string(u)]
		if !ok {
			s := string(u)
			t = int32(len(targets))
			seen[s] = t
			targets = append(targets, target{urlSum(s), s, t})
		}
		of = append(of, t)
		return nil
	}); err != nil {
		return err
	}
	seen = nil
	slices.SortFunc(targets, func(x, y target) int {
		if x.sum != y.sum {
			if x.sum < y.sum {
				return -1
			}
			return 1
		}
		return strings.Compare(x.url, y.url)
	})
	ids := make([]uint32, len(targets))
	for _, t := range targets {
		d, _, err := b.docOf(t.url, StatusLinked)
		if err != nil {
			return err
		}
		ids[t.i] = d
	}
	b.newAnc = slices.Grow(b.newAnc, b.pending.n) // one record an anchor
	k := 0
	if err := b.pending.each(func(from uint32, fromOff uint64, _, text []byte) error {
		to := ids[of[k]]
		k++
		b.newAnc = append(b.newAnc, [2]uint64{uint64(to)<<32 | uint64(from), uint64(b.anchorsF.off)})
		b.recbuf = appendAnchor(b.recbuf[:0], from, to, fromOff, text)
		_, err := b.anchorsF.Write(b.recbuf)
		return err
	}); err != nil {
		return err
	}
	slices.SortFunc(b.newAnc, cmpRec)
	b.Stats.Anchors = b.pending.n
	b.pending.close()
	return b.anchorsF.w.Flush()
}

// Commit resolves the batch's anchors, re-indexes the documents whose
// anchor text changed, sorts the forward barrels into the inverted ones,
// ranks the documents and commits the new generation.
func (b *Builder) Commit() error {
	if b.done {
		return errors.New("barrel: Commit twice")
	}
	b.done = true
	t0 := time.Now()
	if err := b.wait(); err != nil {
		return err
	}
	b.Stats.WaitTime = time.Since(t0)
	t0 = time.Now()
	defer func() { b.Stats.AnchorTime = time.Since(t0) - b.Stats.SortTime - b.Stats.FinishTime }()
	if err := b.resolveAnchors(); err != nil {
		return err
	}
	n := b.nDocs
	b.inBatch = b.inBatch.grow(n)

	// Dirty documents: those of the batch, the targets of its anchors and
	// of the dead anchors of the pages it replaced (found by parsing the
	// replaced versions). Their postings are rebuilt whole.
	dirty := newBitset(n)
	copy(dirty, b.inBatch)
	var waiting []uint32
	for i := 0; i < len(b.newAnc); {
		to := uint32(b.newAnc[i][0] >> 32)
		j := i + 1
		for j < len(b.newAnc) && uint32(b.newAnc[j][0]>>32) == to {
			j++
		}
		wait, err := b.anchorsCanWait(to, j-i)
		if err != nil {
			return err
		}
		if wait {
			waiting = append(waiting, to)
		} else {
			dirty.set(to)
		}
		i = j
	}
	repoR, err := openLogView(b.dir, repoName, b.m.RepoSpace, b.m)
	if err != nil {
		return err
	}
	defer repoR.close()
	if err := b.repo.w.Flush(); err != nil {
		return err
	}
	olds := make([]uint32, 0, len(b.oldRepo))
	for d := range b.oldRepo {
		olds = append(olds, d)
	}
	slices.Sort(olds)
	for _, d := range olds {
		if err := b.oldWords(repoR, d, b.oldRepo[d], dirty); err != nil {
			return err
		}
	}
	for _, d := range waiting {
		if !dirty.has(d) { // not made dirty by an anchor that died
			b.Stats.Waiting++
		}
	}
	// Anchor text as hits of the page it points to: the anchors of each
	// dirty target, from the anchor runs and this batch, read from here on
	// by a goroutine of their own (readAnchors), while the stale targets'
	// pages are re-parsed and indexed; the reader touches nothing that
	// re-indexing writes.
	asp := b.m.AnchorSpace
	size := asp.physical(b.anchorsF.off)
	anchors, err := openAnchorReader(filepath.Join(b.dir, asp.name(anchorsName)), size,
		mapAnchors(b.anchorsF.off-b.m.Anchors, size))
	if err != nil {
		return err
	}
	defer anchors.close()
	if anchors.lay, err = openLayout(b.dir, asp, b.m); err != nil {
		return err
	}
	stop := make(chan struct{})
	chunks := b.readAnchors(dirty.all(n), anchors, stop)
	defer func() {
		// The reader must be gone before anchors is closed (deferred
		// before): it closes chunks when it stops, and stops on stop.
		close(stop)
		for range chunks {
		}
	}()
	// Own hits of dirty pages outside the batch come from the repository;
	// they are also the words those pages leave in their old segments.
	// Their records are asked for all at once before they are read, as
	// the anchors are (anchorReader.prefetch).
	var stale [][2]uint64 // docID, repository offset
	for d := range dirty.all(n) {
		if b.inBatch.has(d) {
			continue
		}
		e, err := b.entry(d)
		if err != nil {
			return err
		}
		if e.Status == StatusFetched {
			stale = append(stale, [2]uint64{uint64(d), e.RepoOff})
		}
	}
	fd := int(repoR.f.Fd())
	for _, st := range stale {
		if off, err := repoR.phys(int64(st[1])); err == nil {
			unix.Fadvise(fd, off, repoPrefetchBytes, unix.FADV_WILLNEED)
		}
	}
	if err := b.reindexStale(repoR, stale); err != nil {
		return err
	}
	if err := b.indexAnchors(chunks); err != nil {
		return err
	}
	if err := b.fwd.flush(); err != nil {
		return err
	}
	return b.commitFiles(dirty)
}

func crc32Update(h uint32, p []byte) uint32 { return crc32.Update(h, castagnoli, p) }

// eachAnchorFile streams the first n bytes of an anchors file through
// eachAnchor, a buffer at a time, so that reading every link does not hold
// the file in memory.
func eachAnchorFile(path string, n int64, fn func(from, to uint32, fromOff uint64, text []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return corrupt("%s: %v", filepath.Base(path), err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, n), 1<<20)
	rec := make([]byte, 0, 1024)
	var off int64
	for off < n {
		rec = rec[:anchorHeader]
		if _, err := io.ReadFull(r, rec); err != nil {
			return corrupt("anchors: truncated record at %d", off)
		}
		k := int(binary.LittleEndian.Uint16(rec[16:]))
		rec = slices.Grow(rec, k)[:anchorHeader+k]
		if _, err := io.ReadFull(r, rec[anchorHeader:]); err != nil {
			return corrupt("anchors: truncated record at %d", off)
		}
		if err := eachAnchor(rec, fn); err != nil {
			return fmt.Errorf("at %d: %w", off, err)
		}
		off += int64(len(rec))
	}
	return nil
}

// anchorsCanWait reports whether document to, outside the batch, can wait
// for the batch's n anchors to it. Re-indexing a document for its anchor
// text means re-parsing its page and reading every anchor to it: at a year
// of a synthetic crawl the batch's 14,000 links reached 5,500 documents of
// 28 anchors each, most of a batch's indexing. So a document is re-indexed
// for new anchors when its count of anchor records (live or dead, in the
// runs and the batch) passes a power of 1+AnchorGrowth (1.25 by default:
// at 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 19, 23, ... anchors): a page with
// few anchors gets each new one at once, one with many a quarter more at a
// time, and until then its newest anchor text is not searchable. The rule
// depends on the counts alone, so any index, however built, re-indexes at
// the rate of a crawl that always ran with it: about 1/(A ln 1.25) times
// per new anchor to a page of A anchors, 4.5 anchors read per new anchor
// where re-indexing at once read A. A document whose entry does not say
// what it holds (DocEntry.Anchors 0: no anchors then, or an index before
// format 6) is re-indexed at once.
func (b *Builder) anchorsCanWait(to uint32, n int) (bool, error) {
	growth := b.opts.AnchorGrowth
	if growth == 0 {
		growth = DefaultAnchorGrowth
	}
	if growth < 0 || to >= b.oldN || b.inBatch.has(to) {
		return false, nil
	}
	e, err := b.entry(to)
	if err != nil || e.Anchors == 0 {
		return false, err
	}
	before := 0
	if err := b.anc.each(uint64(to)<<32, uint64(to+1)<<32, func(uint64, uint64) error { before++; return nil }); err != nil {
		return false, err
	}
	return anchorLevel(before, growth) == anchorLevel(before+n, growth), nil
}

// anchorLevel is the largest k with (1+growth)^k <= n, -1 for n = 0.
func anchorLevel(n int, growth float64) int {
	if n <= 0 {
		return -1
	}
	return int(math.Floor(math.Log(float64(n))/math.Log1p(growth) + 1e-9))
}

// liveBefore reports whether an anchor was live before the batch: it sits
// in the version of its page that was current then.
func (b *Builder) liveBefore(from uint32, fromOff uint64) bool {
	if from >= b.oldN {
		return false
	}
	if off, ok := b.oldRepo[from]; ok {
		return off == fromOff
	}
	if b.inBatch.has(from) { // fetched for the first time in this batch
		return false
	}
	cur, err := b.repoOf(from)
	return err == nil && cur == fromOff
}

// repoOf is the repository offset of the current version of page d.
func (b *Builder) repoOf(d uint32) (uint64, error) {
	if off, ok := b.repoCache[d]; ok {
		return off, nil
	}
	e, err := b.entry(d)
	if err != nil {
		return 0, err
	}
	if b.repoCache == nil {
		b.repoCache = map[uint32]uint64{}
	}
	b.repoCache[d] = e.RepoOff
	return e.RepoOff, nil
}

// anchorReader reads single records of the anchors file. A batch added to
// a large index reads the anchors of a few thousand targets from all over
// the file, so each is read alone (pread): a mapping would fault in, and
// keep resident, the pages read ahead around each record, about the whole
// file for a large index (2.5 GB of resident pages for a year's 2.4 GB
// file, where the build's own memory was 55 MB). A batch that wrote most
// of the file (a first build) reads about all of it, and a mapping then
// saves a system call a record.
type anchorReader struct {
	f    *os.File
	size uint64 // bytes on disk
	buf  []byte
	data []byte   // the mapped file, or nil
	lay  *logView // the file's layout (reclaim.go), or nil

	// The records prefetch found in the page cache, read then: offset to
	// their span in ahead.
	early map[uint64][2]int
	ahead []byte
}

// mapAnchors says whether a batch that wrote batch bytes of an anchors
// file of size bytes reads it mapped: when it wrote half of it or more.
var mapAnchors = func(batch, size int64) bool { return 2*batch >= size }

func openAnchorReader(path string, size int64, mapped bool) (*anchorReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, corrupt("%s: %v", filepath.Base(path), err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() != size {
		err = corrupt("%s: %d bytes, manifest says %d (truncated?)", filepath.Base(path), st.Size(), size)
	}
	r := &anchorReader{f: f, size: uint64(size), buf: make([]byte, 256)}
	if err == nil && mapped && size > 0 {
		r.data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// errDropped is at's answer for an anchor record a reclaim dropped: dead
// since then.
var errDropped = errors.New("anchor record dropped")

// onDisk maps the logical offset of a record to the file's; ok is false
// for a record a reclaim dropped.
func (r *anchorReader) onDisk(off uint64) (uint64, bool, error) {
	if r.lay == nil || len(r.lay.maps) == 0 && r.lay.base == 0 {
		return off, true, nil
	}
	p, ok, err := r.lay.locate(int64(off))
	return uint64(p), ok, err
}

// at reads the record at logical offset off, which must point to doc to;
// text is valid until the next call. A record a reclaim dropped is
// errDropped.
func (r *anchorReader) at(off uint64, to uint32) (from uint32, fromOff uint64, text []byte, err error) {
	logical := off
	off, ok, err := r.onDisk(off)
	if err != nil {
		return 0, 0, nil, err
	}
	if !ok {
		return 0, 0, nil, errDropped
	}
	if off+anchorHeader > r.size {
		return 0, 0, nil, corrupt("anchor runs: offset %d past the anchors file", off)
	}
	if sp, ok := r.early[off]; ok {
		return anchorAt(r.ahead[sp[0]:sp[1]], logical, to)
	}
	if r.data != nil {
		need := uint64(anchorHeader) + uint64(binary.LittleEndian.Uint16(r.data[off+16:]))
		if off+need > r.size {
			return 0, 0, nil, corrupt("anchors: truncated record at %d", off)
		}
		return anchorAt(r.data[off:off+need], logical, to)
	}
	n := min(uint64(len(r.buf)), r.size-off)
	if _, err := r.f.ReadAt(r.buf[:n], int64(off)); err != nil {
		return 0, 0, nil, err
	}
	need := uint64(anchorHeader) + uint64(binary.LittleEndian.Uint16(r.buf[16:]))
	if need > n {
		if off+need > r.size {
			return 0, 0, nil, corrupt("anchors: truncated record at %d", off)
		}
		if uint64(len(r.buf)) < need {
			r.buf = append(r.buf[:n], make([]byte, need-n)...)
		}
		if _, err := r.f.ReadAt(r.buf[n:need], int64(off+n)); err != nil {
			return 0, 0, nil, err
		}
	}
	return anchorAt(r.buf[:need], logical, to)
}

// prefetch readies the records at offs, which at is about to read: each
// one the page cache holds whole is read now (preadv2 RWF_NOWAIT, which
// returns what is cached without waiting for the disk) and kept for at;
// the kernel is asked to read the others ahead, all at once (posix_fadvise
// WILLNEED, a typical record's bytes each), so that their reads find them
// in the page cache instead of waiting for the disk one record at a time.
// A record costs one system call when cached, where asking for every one
// cost two: at a year of a synthetic crawl, 150,000 records a batch, the
// advice alone took 0.4 s of a warm 1.6 s index step. A mapped file is
// left alone.
func (r *anchorReader) prefetch(offs []uint64) {
	clear(r.early)
	r.ahead = r.ahead[:0]
	if r.data != nil {
		return
	}
	if r.early == nil {
		r.early = map[uint64][2]int{}
	}
	fd := int(r.f.Fd())
	nowait := true
	for _, off := range offs {
		off, ok, err := r.onDisk(off)
		if err != nil || !ok {
			continue
		}
		if nowait && off+anchorHeader <= r.size {
			start := len(r.ahead)
			r.ahead = slices.Grow(r.ahead, prefetchBytes)
			buf := r.ahead[start : start+int(min(prefetchBytes, r.size-off))]
			n, err := unix.Preadv2(fd, [][]byte{buf}, int64(off), unix.RWF_NOWAIT)
			if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
				nowait = false // a kernel or file system without it: advice only
			}
			if err == nil && n >= anchorHeader {
				if need := anchorHeader + int(binary.LittleEndian.Uint16(buf[16:])); need <= n {
					r.early[off] = [2]int{start, start + need}
					r.ahead = r.ahead[:start+need]
					continue
				}
			}
			r.ahead = r.ahead[:start]
		}
		unix.Fadvise(fd, int64(off), prefetchBytes, unix.FADV_WILLNEED)
	}
}

// prefetchBytes is how much of a record prefetch asks for: a header and a
// long anchor text.
const prefetchBytes = 512

// repoPrefetchBytes is how much of a repository record is asked for ahead
// of a re-index: a compressed page of the common sizes (a longer one's
// rest is read when needed).
const repoPrefetchBytes = 16 << 10

func (r *anchorReader) close() {
	r.lay.close()
	if r.data != nil {
		syscall.Munmap(r.data)
	}
	r.f.Close()
}

// anchorAt parses rec, the anchors-file record at off, which must point
// to doc to.
func anchorAt(rec []byte, off uint64, to uint32) (from uint32, fromOff uint64, text []byte, err error) {
	from, t, fromOff, text, err := parseAnchor(rec)
	if err != nil {
		return 0, 0, nil, corrupt("anchors: %v at %d", err, off)
	}
	if t != to {
		return 0, 0, nil, corrupt("anchor runs: record at %d points to doc %d, not %d", off, t, to)
	}
	return from, fromOff, text, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// oldWords adds to b.dead the own words of the version of page d at
// repository offset off, which the batch replaces, and marks the targets
// of its links (anchors that die with it) dirty.
func (b *Builder) oldWords(repoR *logView, d uint32, off uint64, dirty bitset) error {
	p, err := b.reparse(repoR, d, off)
	if err != nil {
		return err
	}
	b.keys = b.keys[:0]
	start := uint32(0)
	for _, end := range p.ends {
		id, _, err := b.lex.Add(p.keys[start:end])
		if err != nil {
			return err
		}
		b.keys = append(b.keys, uint64(id)<<32)
		start = end
	}
	b.dead.add(d, b.keys)
	b.deadAnchors += int64(len(p.links))
	for _, l := range p.links {
		to, ok, err := lookupURL(b.urls, l.URL, b.docURL)
		if err != nil {
			return err
		}
		if !ok {
			to, ok = b.batchURLs[l.URL]
		}
		if ok && to < b.oldN {
			dirty.set(to)
		}
	}
	return nil
}

// liveBitsAfter is how many documents a build looks up in the old
// segments before it reads their live documents (liveWindow), so that a
// build asking for a few does not pay for the reading. At 1,000 turns of
// the synthetic crawl (500,000 documents, 13 segments) the reading took
// about 23 ms of a batch's CPU and the searches it spared about 100 ms.
var liveBitsAfter = 1024

// reindexStale re-indexes the documents of stale (docID, repository
// offset), in order: workers, one a core, re-parse them from the
// repository, at most 16 a core ahead, while this goroutine adds their
// hits in order.
// Re-parsing is most of the work (about 65 us a page, 5,500 pages a batch
// at a year of a synthetic crawl, several times the batch's own pages)
// and needs nothing the indexing writes, so every core takes a share.
func (b *Builder) reindexStale(repoR *logView, stale [][2]uint64) error {
	type parsed struct {
		p    *prepared
		err  error
		done chan struct{}
	}
	slots := make([]parsed, len(stale))
	for i := range slots {
		slots[i].done = make(chan struct{})
	}
	n := max(1, runtime.GOMAXPROCS(0))
	// A worker takes a token before it claims the next page and this
	// goroutine returns one per page it has added, so at most ahead pages
	// wait parsed. Pages are claimed in order, so the one waited for is
	// always claimed by a worker holding a token: no deadlock.
	ahead := make(chan struct{}, 16*n)
	stop := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			doc := htmldoc.Doc{Analyzer: analysis.New(b.opts.Analysis)}
			var g hitGrouper
			for {
				select {
				case <-stop:
					return
				default:
				}
				select {
				case ahead <- struct{}{}:
				case <-stop:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(stale) {
					return
				}
				s := &slots[i]
				s.p, s.err = b.reparseWith(repoR, uint32(stale[i][0]), stale[i][1], &doc, &g)
				close(s.done)
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for i, st := range stale {
		s := &slots[i]
		<-s.done
		<-ahead
		if s.err != nil {
			return s.err
		}
		d := uint32(st[0])
		if err := b.indexHits(d, s.p); err != nil {
			return err
		}
		s.p = nil // its hits are in the batch now
		b.Stats.Targets++
		b.dead.add(d, b.keys)
	}
	return nil
}

// reparse parses again the version of document d stored at repository
// offset off (stored decoded, so as UTF-8).
func (b *Builder) reparse(repoR *logView, d uint32, off uint64) (*prepared, error) {
	return b.reparseWith(repoR, d, off, &b.page, &b.group)
}

// reparseWith is reparse with a parser and grouper of the caller's; it
// reads only what no one writes during a commit (the repository up to the
// batch, the manifest's codec).
func (b *Builder) reparseWith(repoR *logView, d uint32, off uint64, doc *htmldoc.Doc, g *hitGrouper) (*prepared, error) {
	rec, err := readRepoAt(repoR, int64(off), b.repo.off)
	if err != nil {
		return nil, err
	}
	if rec.Doc != d {
		return nil, corrupt("repository record at %d is doc %d, docindex says %d", rec.Offset, rec.Doc, d)
	}
	body, err := inflate(b.m.RepoCodec, rec.Page)
	if err != nil {
		return nil, err
	}
	base, _ := url.Parse(rec.URL)
	p := &prepared{url: rec.URL}
	prepare(p, base, &Page{URL: rec.URL, Body: body, Charset: "utf-8"}, nil, doc, g, nil)
	return p, nil
}
