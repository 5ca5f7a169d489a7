// Package queue is recrawl's crawl state and its one crawl queue: per-page
// change statistics folded in batch by batch, and the pages to fetch next,
// new and old competing by one crawl value.
//
// The value is that of "Crawling the internet: data science within a large
// engineering system" (Bill Richoux, 2018): a page of weight w and change
// rate delta last fetched tau days ago is worth V(tau) = (w/delta)(1 -
// e^(-delta tau)) - w tau e^(-delta tau); a page never fetched has tau =
// infinity, V = w/delta, and its change rate is a prior until observed. A
// page is taken when V reaches lambda_0 and its host's limit lets it in.
//
// # Go API
//
//	q, err := queue.Open("crawl.recrawl", queue.Options{Shard: shard})
//	st, err := q.Apply("000042-20261123T100000Z", queue.Batch{Fetches: fs, Weights: ws})
//	cands, info, err := q.Next(queue.NextOptions{N: 700, Slot: 1.0 / 24, Now: now})
//	err = q.Close()
//
// # The store
//
// A bbolt file (one writer, transactions, so kill -9 or a full disk leaves
// the last committed batch), opened and read through pkg/boltstate: the
// file is checked before it is mapped, and every value carries a CRC-32C
// of its key and bytes, checked when it is read, so a damaged file is
// reported with its path and the record, and the batch is not applied.
// Buckets:
//
//	meta     format version, shard I/N, the last batch applied, weight sums
//	pages    url -> the page: host, weight, change statistics, last fetch,
//	         last digest and SimHash, retry and deferral times
//	due      cell | order | url -> host, w, delta: the pages that may be
//	         offered, by cell (weight bin, change-rate bin; 1/4 octave each)
//	         and in each cell never-fetched pages first by w/delta
//	         decreasing, then fetched ones by last fetch increasing
//	blocked  until | url: pages waiting for a retry or a deferral to expire
//	cells    cell -> number of pages: the aggregate lambda_0 is solved on
//	hosts    host -> last fetch, for limits below one crawl per slot
//
// # Why cells
//
// The time at which a page's value reaches the threshold depends on the
// threshold, which moves; an index keyed by it would need re-keying of
// every page when lambda_0 moves. Within one cell all pages have about the
// same w and delta, so their values are ordered by age alone, for any
// threshold: Next visits the cells in decreasing order of their best
// possible value and in each cell reads pages oldest first, stopping at the
// first whose cell-wide upper bound falls below the cut (lambda_0, or the
// N-th best value found so far). It touches the pages at or near the cut
// and a few thousand cell heads, never the whole state. A page is re-keyed
// only when it changes (a fetch, a weight, a deferral).
//
// # Why lambda_0 from aggregates
//
// lambda_0 solves sum_j rho_j(lambda_0) = k_0 (rho_j the optimal rate of
// page j at a threshold), a sum that depends on the pages only through
// their (w, delta) cells: kept as counts per cell, updated as pages move,
// it is solved in a few hundred evaluations per turn whatever the state's
// size, and it follows changes in the page population at once, where a
// controller nudging lambda_0 turn by turn would lag and would need the
// budget of the previous turn kept in the state. The equation counts every
// host as unconstrained (the article's "lambda_0 from the unconstrained
// hosts" would need per-host aggregates); host limits cut in Next, as rank
// does. A budget above what the pages can use (more than 20,000 crawls per
// expected change of every page) gives lambda_0 = 0.
//
// bbolt is used for the store because it is already in the module graph,
// is a single file with ACID transactions and ordered keys, and needs no
// server; no library provides the cell index, which is a key layout.
package queue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

// FormatVersion is the version of the state's layout: 2 added a checksum
// to every value.
const FormatVersion = 2

const formatName = "crawlkit recrawl queue"

var (
	bMeta    = []byte("meta")
	bPages   = []byte("pages")
	bDue     = []byte("due")
	bBlocked = []byte("blocked")
	bCells   = []byte("cells")
	bHosts   = []byte("hosts")

	kFormat  = []byte("format")
	kVersion = []byte("version")
	kShard   = []byte("shard")
	kBatch   = []byte("batch")
	kWSum    = []byte("weight_sum")
	kWCount  = []byte("weight_count")
	kPages   = []byte("pages")
)

// Options configure a queue.
type Options struct {
	// Shard is the shard the state holds (zero: all hosts); a state made
	// for another shard or shard count is refused.
	Shard record.Shard
	// AnyShard, with ReadOnly, takes the state of whatever shard it was
	// made for (Shard is then ignored; (*Queue).Shard tells which).
	AnyShard bool
	// ReadOnly opens for Next, Explain and Summary; a missing state is
	// then an empty queue.
	ReadOnly bool
	// NoSync skips fsync on commit: only for building test and benchmark
	// states, since a crash may then lose committed batches.
	NoSync bool
	// Update configures Apply.
	Update UpdateOptions
}

// UpdateOptions say how a batch changes the pages.
type UpdateOptions struct {
	// Prior is the change-rate estimator's prior; Prior.Rate is also the
	// change rate of a page never fetched (--default-change-rate).
	Prior recrawl.Prior
	// SimhashThreshold: two fetches that both carry text_simhash are a
	// change when their Hamming distance exceeds it (default 3).
	SimhashThreshold int
	// DefaultWeight is the weight of a page without importance; 0 means
	// the mean importance of the pages that have one (1 while none has).
	DefaultWeight float64
	// RecrawlCanonicalised keeps offering a page whose canonical is
	// another URL of its host (by default it is retired: the canonical is
	// crawled instead).
	RecrawlCanonicalised bool
	// DeferFor is how long a deferred candidate is not offered (default
	// 24h); a page deferred again waits twice as long, up to DeferCap
	// (default 8 times DeferFor).
	DeferFor, DeferCap time.Duration
}

func (o *UpdateOptions) fill() {
	if o.Prior.Rate <= 0 {
		o.Prior.Rate = 0.2
	}
	if o.Prior.Days == 0 {
		o.Prior.Days = 7
	}
	if o.Prior.MinHistory <= 0 {
		o.Prior.MinHistory = 5
	}
	if o.SimhashThreshold <= 0 {
		o.SimhashThreshold = 3
	}
	if o.DeferFor <= 0 {
		o.DeferFor = 24 * time.Hour
	}
	if o.DeferCap <= 0 {
		o.DeferCap = 8 * o.DeferFor
	}
}

// A Queue is an open crawl state.
type Queue struct {
	db    *boltstate.DB // nil for a missing state opened read-only
	path  string
	opt   Options
	shard record.Shard // the shard the state holds
}

// Shard is the shard the state holds (zero: all hosts).
func (q *Queue) Shard() record.Shard { return q.shard }

// A StateError is a state that cannot be used: corrupt, truncated, of
// another version or shard. It names the path.
type StateError struct {
	Path string
	What string
}

func (e *StateError) Error() string { return fmt.Sprintf("state %s: %s", e.Path, e.What) }

// Open opens or creates the state at path. A state is only created by a
// writer; its format, version and shard are checked before anything is
// written.
func Open(path string, opt Options) (*Queue, error) {
	opt.Update.fill()
	q := &Queue{path: path, opt: opt, shard: opt.Shard}
	if opt.AnyShard {
		q.shard = record.Shard{}
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if opt.ReadOnly {
			return q, nil
		}
		st = nil
	case err != nil:
		return nil, err
	}
	q.db, err = boltstate.Open(path, boltstate.Options{Kind: "recrawl state", ReadOnly: opt.ReadOnly, NoSync: opt.NoSync,
		Buckets: bucketNames(bPages, bDue, bBlocked, bCells, bHosts, bMeta)})
	if err != nil {
		var be *boltstate.Error
		switch {
		case errors.As(err, &be):
			return nil, &StateError{be.Path, be.What}
		case errors.Is(err, boltstate.ErrLocked):
			return nil, &StateError{path, "locked by another process"}
		}
		return nil, err
	}
	if err := q.check(st); err != nil {
		q.db.Close()
		return nil, err
	}
	return q, nil
}

// check verifies the meta bucket: format, version and shard.
func (q *Queue) check(st fs.FileInfo) error {
	return q.db.View(func(tx *boltstate.Tx) error {
		meta := tx.Bucket(bMeta)
		if meta == nil {
			if tx.Bucket(bPages) == nil && (st == nil || tx.Size() <= 4*int64(os.Getpagesize())) {
				return nil // created just now, or empty by an earlier run that then failed
			}
			return &StateError{q.path, "not a recrawl state (no meta bucket)"}
		}
		// Version 1 stored its values bare: tell it by its version value.
		if v, n := binary.Uvarint(meta.Raw(kVersion)); n > 0 && n == len(meta.Raw(kVersion)) && v < FormatVersion {
			return &StateError{q.path, fmt.Sprintf("format version %d, this recrawl reads version %d", v, FormatVersion)}
		}
		f, err := meta.Get(kFormat)
		if err != nil {
			return err
		}
		if string(f) != formatName {
			return &StateError{q.path, fmt.Sprintf("not a recrawl state (format %q)", f)}
		}
		ver, err := meta.Get(kVersion)
		if err != nil {
			return err
		}
		v, n := binary.Uvarint(ver)
		if n <= 0 || v != FormatVersion {
			return &StateError{q.path, fmt.Sprintf("format version %d, this recrawl reads version %d", v, FormatVersion)}
		}
		sh, err := meta.Get(kShard)
		if err != nil {
			return err
		}
		want := shardString(q.opt.Shard)
		if q.opt.AnyShard && q.opt.ReadOnly && string(sh) != "" {
			if q.shard, err = record.ParseShard(string(sh)); err != nil {
				return &StateError{q.path, fmt.Sprintf("corrupt shard %q", sh)}
			}
			return nil
		}
		if got := string(sh); got != want {
			return &StateError{q.path, fmt.Sprintf("state of shard %s, asked for shard %s", orAll(got), orAll(want))}
		}
		return nil
	})
}

func shardString(s record.Shard) string {
	if s.N <= 1 {
		return ""
	}
	return s.String()
}

func orAll(s string) string {
	if s == "" {
		return "(all hosts, no --shard)"
	}
	return s
}

// Close closes the state.
func (q *Queue) Close() error {
	if q.db == nil {
		return nil
	}
	return q.db.Close()
}

// Path returns the state's path.
func (q *Queue) Path() string { return q.path }

// Compact rewrites the state without its free pages if they have grown to
// a quarter of it (boltstate.CompactIfSparse); the writers call it after a
// batch. A failure leaves the state as it was.
func (q *Queue) Compact() (boltstate.Compaction, error) {
	if q.db == nil {
		return boltstate.Compaction{}, nil
	}
	return q.db.CompactIfSparse()
}

// LastBatch returns the ID of the last batch applied ("" for none).
func (q *Queue) LastBatch() (string, error) {
	var id string
	err := q.view(func(tx *boltstate.Tx) error {
		v, err := tx.Bucket(bMeta).Get(kBatch)
		id = string(v)
		return err
	})
	return id, err
}

// view runs fn in a read transaction; a missing state runs nothing.
func (q *Queue) view(fn func(tx *boltstate.Tx) error) error {
	if q.db == nil {
		return nil
	}
	return q.db.View(func(tx *boltstate.Tx) error {
		if tx.Bucket(bMeta) == nil {
			return nil
		}
		return fn(tx)
	})
}

// corrupt reports a value that does not decode.
func (q *Queue) corrupt(bucket []byte, key []byte, err error) error {
	var newer *newerPageError
	if errors.As(err, &newer) {
		return &StateError{q.path, fmt.Sprintf("%s entry %q: %v", bucket, clip(string(key)), err)}
	}
	return &StateError{q.path, fmt.Sprintf("corrupt %s entry %q: %v", bucket, clip(string(key)), err)}
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// A page is one URL's state.
type page struct {
	Host      string
	W         float64 // weight used: importance, or the default when none
	HasWeight bool    // W is an importance (not the default)
	Delta     float64 // change rate per day (the estimate, or the prior)
	Prior     bool    // Delta is the prior (too little history)
	Stats     recrawl.ChangeStats
	LastFetch int64 // unix seconds of the last successful fetch; 0: never
	Digest    uint64
	Simhash   uint64
	Flags     uint8 // flagDigest, flagSimhash, flagCanonical, flagBaselineStale
	RetryAt   int64 // unix seconds: not before, after a failure; 0: none
	Failures  uint8 // consecutive failed fetches
	DeferTo   int64 // unix seconds: not before, after a deferral; 0: none
	Defers    uint8 // deferrals since the last fetch
	// LastObs is the unix time up to which sitemap evidence was observed
	// (0: none): the next fetch's interval starts at the later of it and
	// LastFetch.
	LastObs int64
	// PriorRate is the page's own prior change rate per day, from a
	// sitemap changefreq (0: the state's --default-change-rate).
	PriorRate float64
	// ETag and LastModified are the validators of the last successful
	// fetch ("": none), sent back by next so that fetch asks
	// conditionally.
	ETag, LastModified string
	// Capture is the archived response holding the page's last payload
	// (File "": none known), sent back by next so that fetch stores an
	// unchanged payload as a revisit of it.
	Capture Capture
}

// A Capture is an archived response: its payload digest, WARC-Date
// (unix seconds, the WARC-Date's precision), WARC-Target-URI and where it
// is (the WARC file as fetch named it, the record's offset).
type Capture struct {
	Digest string
	Date   int64
	URI    string
	File   string
	Offset int64
}

// Bounds of a capture kept: a digest is some 40 bytes (sha1:BASE32); a
// longer one, or a path or URI past these, is no capture fetch wrote.
const (
	maxCaptureDigest = 64
	maxCaptureFile   = 4096
	maxCaptureURI    = 8192
)

// valid reports a complete capture within the bounds.
func (c *Capture) valid() bool {
	return c.Digest != "" && len(c.Digest) <= maxCaptureDigest && c.Date > 0 && c.URI != "" && len(c.URI) <= maxCaptureURI &&
		c.File != "" && len(c.File) <= maxCaptureFile && c.Offset >= 0 &&
		!strings.ContainsAny(c.Digest+c.URI+c.File, "\r\n\x00")
}

// pageEncoding is the version of the page encoding: 1 without LastObs
// and PriorRate, 2 without ETag and LastModified, 3 without Capture.
// Older ones are read; a page written by a newer recrawl is refused.
const pageEncoding = 4

// maxValidator is the longest ETag or Last-Modified kept; a longer one
// is not a validator any server sends, and is dropped.
const maxValidator = 1024

// A newerPageError is a page written in an encoding this recrawl does not
// know, by a newer recrawl.
type newerPageError struct{ version byte }

func (e *newerPageError) Error() string {
	return fmt.Sprintf("page encoding %d, written by a newer recrawl (this recrawl reads encodings 1 to %d)", e.version, pageEncoding)
}

const (
	flagDigest = 1 << iota
	flagSimhash
	flagWeight
	flagPrior
	// flagCanonical: the page named another URL of its host as its
	// canonical; it is not offered again (the canonical is).
	flagCanonical
	// flagBaselineStale: a sitemap lastmod showed a change after the last
	// fetch, already counted; the next fetch's digest comparison would
	// count it again, so it only resets the baseline.
	flagBaselineStale
)

// retired is the blocked-until time of a page never offered again.
const retired = math.MaxInt64 >> 1

func (p *page) blockedUntil() int64 {
	if p.Flags&flagCanonical != 0 {
		return retired
	}
	return max(p.RetryAt, p.DeferTo)
}

func (p *page) encode(b []byte) []byte {
	b = append(b, pageEncoding)
	b = binary.AppendUvarint(b, uint64(len(p.Host)))
	b = append(b, p.Host...)
	flags := p.Flags &^ (flagWeight | flagPrior)
	if p.HasWeight {
		flags |= flagWeight
	}
	if p.Prior {
		flags |= flagPrior
	}
	b = append(b, flags)
	b = appendFloat(b, p.W)
	b = appendFloat(b, p.Delta)
	b = binary.AppendVarint(b, p.LastFetch)
	b = binary.LittleEndian.AppendUint64(b, p.Digest)
	b = binary.LittleEndian.AppendUint64(b, p.Simhash)
	b = binary.AppendVarint(b, p.RetryAt)
	b = append(b, p.Failures)
	b = binary.AppendVarint(b, p.DeferTo)
	b = append(b, p.Defers)
	s := &p.Stats
	b = binary.AppendUvarint(b, uint64(s.N))
	b = binary.AppendUvarint(b, uint64(s.X))
	if s.N > 0 {
		b = appendFloat(b, s.SumGap)
		b = appendFloat(b, s.SumUnchanged)
		b = appendFloat(b, s.MinGap)
		b = appendFloat(b, s.MaxGap)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Changed)))
	for _, g := range s.Changed {
		b = binary.AppendVarint(b, int64(g.Bin))
		b = binary.AppendUvarint(b, uint64(g.Count))
		b = appendFloat(b, g.Sum)
	}
	b = binary.AppendVarint(b, p.LastObs)
	b = appendFloat(b, p.PriorRate)
	b = binary.AppendUvarint(b, uint64(len(p.ETag)))
	b = append(b, p.ETag...)
	b = binary.AppendUvarint(b, uint64(len(p.LastModified)))
	b = append(b, p.LastModified...)
	c := &p.Capture
	if !c.valid() {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Digest)))
	b = append(b, c.Digest...)
	b = binary.AppendVarint(b, c.Date)
	b = binary.AppendUvarint(b, uint64(len(c.URI)))
	b = append(b, c.URI...)
	b = binary.AppendUvarint(b, uint64(len(c.File)))
	b = append(b, c.File...)
	return binary.AppendVarint(b, c.Offset)
}

func appendFloat(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// decoder reads what encode wrote; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("short value")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) u64() uint64 {
	if len(d.b) < 8 {
		d.fail("short value")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) float() float64 {
	v := math.Float64frombits(d.u64())
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.fail("non-finite number")
	}
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if uint64(len(d.b)) < n {
		d.fail("short value")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// validator reads a length-prefixed ETag or Last-Modified.
func (d *decoder) validator() []byte { return d.string(maxValidator, "validator") }

// string reads a length-prefixed string of at most max bytes.
func (d *decoder) string(max uint64, what string) []byte {
	n := d.uvarint()
	if n > max {
		d.fail(what + " too long")
		return nil
	}
	return d.bytes(n)
}

// capture reads a page's capture: a digest, empty for none, then the rest.
func (d *decoder) capture() Capture {
	var c Capture
	c.Digest = string(d.string(maxCaptureDigest, "capture digest"))
	if c.Digest == "" || d.err != nil {
		return Capture{}
	}
	c.Date = d.varint()
	c.URI = string(d.string(maxCaptureURI, "capture URI"))
	c.File = string(d.string(maxCaptureFile, "capture file"))
	c.Offset = d.varint()
	if d.err == nil && !c.valid() {
		d.fail("inconsistent capture")
	}
	return c
}

func decodePage(b []byte) (*page, error) {
	d := &decoder{b: b}
	version := d.byte()
	switch {
	case d.err != nil:
	case version > pageEncoding:
		return nil, &newerPageError{version}
	case version < 1:
		return nil, fmt.Errorf("page encoding %d", version)
	}
	p := &page{}
	p.Host = string(d.bytes(d.uvarint()))
	p.Flags = d.byte()
	p.HasWeight, p.Prior = p.Flags&flagWeight != 0, p.Flags&flagPrior != 0
	p.W = d.float()
	p.Delta = d.float()
	p.LastFetch = d.varint()
	p.Digest = d.u64()
	p.Simhash = d.u64()
	p.RetryAt = d.varint()
	p.Failures = d.byte()
	p.DeferTo = d.varint()
	p.Defers = d.byte()
	s := &p.Stats
	s.N = int(d.uvarint())
	s.X = int(d.uvarint())
	if s.N > 0 {
		s.SumGap, s.SumUnchanged, s.MinGap, s.MaxGap = d.float(), d.float(), d.float(), d.float()
	}
	nb := d.uvarint()
	if nb > 1<<16 {
		d.fail("too many bins")
	}
	for i := uint64(0); i < nb && d.err == nil; i++ {
		s.Changed = append(s.Changed, recrawl.GapBin{Bin: int16(d.varint()), Count: uint32(d.uvarint()), Sum: d.float()})
	}
	if version >= 2 {
		p.LastObs = d.varint()
		p.PriorRate = d.float()
	}
	if version >= 3 {
		p.ETag = string(d.validator())
		p.LastModified = string(d.validator())
	}
	if version >= 4 {
		p.Capture = d.capture()
	}
	if d.err == nil && (len(d.b) != 0 || p.Host == "" || !(p.W > 0) || !(p.Delta > 0) || s.X > s.N || p.PriorRate < 0) {
		d.fail("inconsistent page")
	}
	return p, d.err
}

// Cells: 1/4 octave of weight and of change rate.
const cellsPerOctave = 4

func binOf(v float64) int16 {
	b := math.Floor(cellsPerOctave * math.Log2(v))
	return int16(math.Max(-30000, math.Min(30000, b)))
}

func binLow(b int16) float64 { return math.Exp2(float64(b) / cellsPerOctave) }

type cell struct{ wb, db int16 }

func (c cell) key() []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, uint16(c.wb)^0x8000), uint16(c.db)^0x8000)
}

func cellOf(key []byte) cell {
	return cell{int16(binary.BigEndian.Uint16(key) ^ 0x8000), int16(binary.BigEndian.Uint16(key[2:]) ^ 0x8000)}
}

func (p *page) cell() cell { return cell{binOf(p.W), binOf(p.Delta)} }

// dueKey places a page in its cell: never-fetched pages first (order byte
// 0) by w/delta decreasing, then fetched ones (1) by last fetch.
func (p *page) dueKey(url string) []byte {
	k := p.cell().key()
	if p.LastFetch == 0 {
		k = append(k, 0)
		k = binary.BigEndian.AppendUint64(k, ^math.Float64bits(p.W/p.Delta))
	} else {
		k = append(k, 1)
		k = binary.BigEndian.AppendUint64(k, uint64(p.LastFetch)^(1<<63))
	}
	return append(k, url...)
}

func (p *page) dueValue() []byte {
	b := binary.AppendUvarint(nil, uint64(len(p.Host)))
	b = append(b, p.Host...)
	b = appendFloat(b, p.W)
	return appendFloat(b, p.Delta)
}

// dueEntry is what the due index holds of a page.
type dueEntry struct {
	url       string
	host      string
	w, delta  float64
	lastFetch int64 // 0: never
}

func decodeDue(k, v []byte) (dueEntry, error) {
	if len(k) < 4+1+8 {
		return dueEntry{}, errors.New("short key")
	}
	e := dueEntry{url: string(k[13:])}
	if k[4] == 1 {
		e.lastFetch = int64(binary.BigEndian.Uint64(k[5:13]) ^ (1 << 63))
	}
	d := &decoder{b: v}
	e.host = string(d.bytes(d.uvarint()))
	e.w, e.delta = d.float(), d.float()
	if d.err == nil && (len(d.b) != 0 || !(e.w > 0) || !(e.delta > 0)) {
		d.fail("inconsistent entry")
	}
	return e, d.err
}

func blockedKey(until int64, url string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(until)^(1<<63)), url...)
}

func blockedOf(k []byte) (int64, string) {
	return int64(binary.BigEndian.Uint64(k) ^ (1 << 63)), string(k[8:])
}

func hasPrefix(k, prefix []byte) bool { return bytes.HasPrefix(k, prefix) }

// IsState reports whether the file at path is a bbolt file (a queue state,
// as opposed to the JSON state file of recrawl rank).
func IsState(path string) bool { return boltstate.IsBolt(path) }

func bucketNames(bs ...[]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// NewHosts returns those of hosts that no batch has fetched from yet (a
// missing state knows none), in the order given.
func (q *Queue) NewHosts(hosts []string) ([]string, error) {
	known := map[string]bool{}
	err := q.view(func(tx *boltstate.Tx) error {
		b := tx.Bucket(bHosts)
		for _, h := range hosts {
			v, err := b.Get([]byte(h))
			if err != nil {
				return err
			}
			known[h] = v != nil
		}
		return nil
	})
	var out []string
	for _, h := range hosts {
		if !known[h] {
			out = append(out, h)
		}
	}
	return out, err
}
