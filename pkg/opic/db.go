package opic

// The adaptive state on disk (format 4): a bbolt file, updated in place,
// one transaction a batch. It is opened and read through pkg/boltstate:
// the file is checked before it is mapped, and every value carries a
// CRC-32C of its key and bytes (format 4; 3 had none), checked as it is
// read, so a damaged file is reported with its path and the record and
// the batch is not applied.
//
// Why bbolt: a turn changes a few thousand of millions of pages, so the
// state must be read and written by page, and a crash at any moment must
// leave the last good state. bbolt (already in the module graph) gives
// both: a B+tree of pages in one file, read through mmap, with
// copy-on-write transactions whose commit is one fsync'd meta page, so
// kill -9 or a full disk leaves the last committed state and never a temp
// file. A log-structured file with an index would have to reimplement the
// same index, compaction and recovery. Reads of the pages a batch touches
// cost O(log n) each, and a commit writes only the B+tree pages they sit
// in: the cost of a batch follows the batch, not the state.
//
// Buckets:
//
//	meta  "version" (uint32 LE, 4), "state" (the state's fields),
//	      "changes" (the last step's change records, NDJSON), "outbox"
//	      (a sharded batch's outbox until its exchange), "touched" (the ids
//	      of the pages that batch changed)
//	id    page name -> page id (uint32 big-endian)
//	page  page id -> flags, cash, share mark, history, last visit,
//	      visits, name
//	link  page id -> the page's sorted links as varint deltas
//
// The virtual page's even share is lazy: the state keeps share, the even
// share every page has received since the state began, in quanta (a
// uint64 that may wrap: only differences are read), and each page keeps
// the value of share when its cash was last written. A page's cash is its
// stored cash plus (share now - share then) quanta, so that the share
// costs O(1) a batch and stays exact. Pages of other shards (link targets
// only) hold no cash and take no share.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
)

// dbVersion is the bbolt state's format: 4 added a checksum to every value.
const dbVersion = 4

var (
	bucketMeta = []byte("meta")
	bucketID   = []byte("id")
	bucketPage = []byte("page")
	bucketLink = []byte("link")

	keyVersion = []byte("version")
	keyState   = []byte("state")
	keyChanges = []byte("changes")
	keyOutbox  = []byte("outbox")
	keyTouched = []byte("touched")
)

// ErrBatchApplied is returned by DB.Begin and DB.Exchange for a batch ID
// already applied: applying it again would be a no-op.
var ErrBatchApplied = errors.New("batch already applied")

// dbMeta is the state's fields, all but the pages.
type dbMeta struct {
	Damping            float64
	Window             time.Duration
	ShardI, ShardN     int
	Now                int64
	VirtCash, VirtHist float64
	TotalHist          float64 // |H|, the virtual page's included
	PageHist           float64 // the sum of the histories of this state's own pages
	OtherHist          float64 // the other shards' PageHist, as of the last exchange
	Share              uint64  // the even share given to every page so far, in quanta
	Steps, Batches     uint64
	Pages              uint64 // page ids given out, pages of other shards included
	Owned              uint64 // pages of this state's shard
	Awaiting           bool   // a sharded batch awaits its exchange
	LastBatch          string // the ID of the last batch applied
	AwaitBatch         string // the ID of the batch awaiting its exchange
}

func (m *dbMeta) encode() []byte {
	var b []byte
	b = appendFloat(b, m.Damping)
	b = binary.AppendVarint(b, int64(m.Window))
	b = binary.AppendUvarint(b, uint64(m.ShardI))
	b = binary.AppendUvarint(b, uint64(m.ShardN))
	b = binary.AppendVarint(b, m.Now)
	for _, f := range []float64{m.VirtCash, m.VirtHist, m.TotalHist, m.PageHist, m.OtherHist} {
		b = appendFloat(b, f)
	}
	b = binary.LittleEndian.AppendUint64(b, m.Share)
	for _, u := range []uint64{m.Steps, m.Batches, m.Pages, m.Owned} {
		b = binary.AppendUvarint(b, u)
	}
	aw := uint64(0)
	if m.Awaiting {
		aw = 1
	}
	b = binary.AppendUvarint(b, aw)
	for _, s := range []string{m.LastBatch, m.AwaitBatch} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func (m *dbMeta) decode(p []byte) error {
	d := &decoder{b: p}
	m.Damping = d.float()
	m.Window = time.Duration(d.varint())
	m.ShardI, m.ShardN = int(d.uvarint()), int(d.uvarint())
	m.Now = d.varint()
	m.VirtCash, m.VirtHist, m.TotalHist, m.PageHist, m.OtherHist = d.float(), d.float(), d.float(), d.float(), d.float()
	if share := d.bytes(8); share != nil {
		m.Share = binary.LittleEndian.Uint64(share)
	}
	m.Steps, m.Batches, m.Pages, m.Owned = d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint()
	aw := d.uvarint()
	m.LastBatch = string(d.bytes(d.uvarint()))
	m.AwaitBatch = string(d.bytes(d.uvarint()))
	if d.err != nil {
		return d.err
	}
	if aw > 1 || len(d.b) != 0 || m.Damping < 0 || m.Damping > 1 || m.Window < 0 || m.ShardN > 1<<20 ||
		m.ShardI > m.ShardN || m.Owned > m.Pages || m.Pages > math.MaxUint32 {
		return errors.New("corrupt opic state: fields out of range")
	}
	m.Awaiting = aw == 1
	return nil
}

func (m *dbMeta) owns(name string) bool {
	s := State{ShardI: m.ShardI, ShardN: m.ShardN}
	return s.Owns(name)
}

// A dbPage is a page read from or to be written to the state.
type dbPage struct {
	id     uint32
	name   string
	owned  bool
	cash   float64 // as of share mark
	mark   uint64  // the state's share when cash was taken
	hist   float64
	last   int64
	visits uint32
}

const pageFixed = 1 + 8 + 8 + 8 + 8 + 4

func (p *dbPage) encode(b []byte) []byte {
	flags := byte(0)
	if p.owned {
		flags = 1
	}
	b = append(b, flags)
	b = binary.LittleEndian.AppendUint64(b, uint64(p.cash/quantum))
	b = binary.LittleEndian.AppendUint64(b, p.mark)
	b = appendFloat(b, p.hist)
	b = binary.LittleEndian.AppendUint64(b, uint64(p.last))
	b = binary.LittleEndian.AppendUint32(b, p.visits)
	return append(b, p.name...)
}

func decodePage(id uint32, v []byte) (*dbPage, error) {
	if len(v) < pageFixed || v[0] > 1 {
		return nil, fmt.Errorf("corrupt opic state: page %d: a record of %d bytes", id, len(v))
	}
	le := binary.LittleEndian
	p := &dbPage{id: id, owned: v[0] == 1,
		cash: float64(le.Uint64(v[1:])) * quantum, mark: le.Uint64(v[9:]),
		hist: math.Float64frombits(le.Uint64(v[17:])), last: int64(le.Uint64(v[25:])),
		visits: le.Uint32(v[33:]), name: string(v[pageFixed:])}
	if p.cash > 1 || math.IsNaN(p.hist) || math.IsInf(p.hist, 0) || (!p.owned && p.cash != 0) {
		return nil, fmt.Errorf("corrupt opic state: page %d: values out of range", id)
	}
	return p, nil
}

// cashAt is the page's cash when the state's share is share.
func (p *dbPage) cashAt(share uint64) float64 {
	if !p.owned {
		return 0
	}
	return p.cash + float64(share-p.mark)*quantum
}

func idKey(id uint32) []byte { return binary.BigEndian.AppendUint32(nil, id) }

func encodeLinks(links []uint32) []byte {
	b := binary.AppendUvarint(nil, uint64(len(links)))
	prev := uint32(0)
	for k, l := range links {
		if k == 0 {
			b = binary.AppendUvarint(b, uint64(l))
		} else {
			b = binary.AppendUvarint(b, uint64(l-prev-1))
		}
		prev = l
	}
	return b
}

func decodeLinks(id uint32, v []byte, pages uint64) ([]uint32, error) {
	d := &decoder{b: v}
	n := d.uvarint()
	if d.err != nil || n > uint64(len(v)) {
		return nil, fmt.Errorf("corrupt opic state: links of page %d", id)
	}
	links := make([]uint32, 0, n)
	next := uint64(0)
	for k := range n {
		l := d.uvarint()
		if k > 0 {
			l += next
		}
		if d.err != nil || l >= pages || l == uint64(id) {
			return nil, fmt.Errorf("corrupt opic state: links of page %d", id)
		}
		links = append(links, uint32(l))
		next = l + 1
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("corrupt opic state: links of page %d", id)
	}
	return links, nil
}

// A DB is an adaptive OPIC state on disk; see Open.
type DB struct {
	path string
	bolt *boltstate.DB
	meta dbMeta

	// pageReads and pageWrites count page records read and written, for
	// the tests that show a batch touches only its pages.
	pageReads, pageWrites int
}

// DBOptions are the settings of a new state, and how to open one.
type DBOptions struct {
	Damping        float64
	Window         time.Duration
	ShardI, ShardN int
	// ReadOnly opens an existing state for reading (it waits while an
	// update holds it); a format 2 file is then read without migrating.
	ReadOnly bool
}

// Open opens the state at path, creating an empty one with the options'
// settings if there is none (unless ReadOnly). A format 2 file (one
// binary file, an older opic's) is migrated in place first: written to a
// temporary file beside it, synced and renamed over it. A foreign,
// truncated or corrupt file is refused with an error that names path
// and says what is wrong, and nothing is written.
//
// Open takes no lock against a second writer: see Lock.
func Open(path string, o DBOptions) (*DB, error) {
	removeStaleTemps(path)
	kind, err := sniff(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && !o.ReadOnly:
		return create(path, o)
	case err != nil:
		return nil, err
	case kind == kindV2:
		if o.ReadOnly {
			return nil, fmt.Errorf("%s: a format 2 opic state: read it with LoadState", path)
		}
		s, err := Load(path)
		if err != nil {
			return nil, err
		}
		if err := migrate(path, s); err != nil {
			return nil, fmt.Errorf("%s: migrating the format 2 state: %w", path, err)
		}
	}
	return openBolt(path, o.ReadOnly)
}

// create makes the state at path with its buckets and settings in one
// file linked into place whole (boltstate.Create): a kill at any moment
// leaves no state or a complete one, never a file opic refuses.
func create(path string, o DBOptions) (*DB, error) {
	d := &DB{path: path, meta: dbMeta{Damping: o.Damping, Window: o.Window, ShardI: o.ShardI, ShardN: o.ShardN, VirtCash: 1}}
	if err := boltstate.Create(path, boltstate.Options{Kind: "opic state"}, d.initBuckets); err != nil {
		return nil, err
	}
	return openBolt(path, false)
}

func (d *DB) initBuckets(tx *boltstate.Tx) error {
	for _, b := range [][]byte{bucketMeta, bucketID, bucketPage, bucketLink} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	m := tx.Bucket(bucketMeta)
	if err := m.Put(keyVersion, binary.LittleEndian.AppendUint32(nil, dbVersion)); err != nil {
		return err
	}
	return m.Put(keyState, d.meta.encode())
}

func openBoltFile(path string, readOnly bool) (*DB, error) {
	// Wait for a writer as long as it takes: opic's own Lock says who writes.
	b, err := boltstate.Open(path, boltstate.Options{Kind: "opic state", ReadOnly: readOnly, Timeout: -1,
		Buckets: []string{string(bucketMeta), string(bucketID), string(bucketPage), string(bucketLink)}})
	if err != nil {
		return nil, err
	}
	return &DB{path: path, bolt: b}, nil
}

func openBolt(path string, readOnly bool) (d *DB, err error) {
	d, err = openBoltFile(path, readOnly)
	if err != nil {
		return nil, err
	}
	err = d.view(func(tx *boltstate.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil || tx.Bucket(bucketID) == nil || tx.Bucket(bucketPage) == nil || tx.Bucket(bucketLink) == nil {
			return ErrNotState
		}
		// Format 3 stored its values bare: tell it by its version value.
		if raw := m.Raw(keyVersion); len(raw) == 4 && binary.LittleEndian.Uint32(raw) < dbVersion {
			return fmt.Errorf("opic state format version %d, this opic reads version %d (and migrates version 2)", binary.LittleEndian.Uint32(raw), dbVersion)
		}
		v, err := m.Get(keyVersion)
		if err != nil {
			return err
		}
		if len(v) != 4 {
			return errors.New("corrupt opic state: no format version")
		}
		if ver := binary.LittleEndian.Uint32(v); ver != dbVersion {
			return fmt.Errorf("opic state format version %d, this opic reads version %d (and migrates version 2)", ver, dbVersion)
		}
		st, err := m.Get(keyState)
		if err != nil {
			return err
		}
		return d.meta.decode(st)
	})
	if err != nil {
		d.bolt.Close()
		return nil, withPath(path, err)
	}
	return d, nil
}

// withPath prefixes err with path unless it names it already.
func withPath(path string, err error) error {
	var be *boltstate.Error
	if errors.As(err, &be) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// view runs fn in a read transaction; a panic of bbolt on a corrupt page
// becomes an error (boltstate).
func (d *DB) view(fn func(*boltstate.Tx) error) error { return d.bolt.View(fn) }

// Close closes the state.
func (d *DB) Close() error { return d.bolt.Close() }

// Compact rewrites the state without its free pages if they have grown to
// a quarter of it (boltstate.CompactIfSparse); the writers call it after a
// batch. A failure leaves the state as it was.
func (d *DB) Compact() (boltstate.Compaction, error) { return d.bolt.CompactIfSparse() }

// Path returns the state's path.
func (d *DB) Path() string { return d.path }

// Settings returns the state's damping, window and shard.
func (d *DB) Settings() DBOptions {
	return DBOptions{Damping: d.meta.Damping, Window: d.meta.Window, ShardI: d.meta.ShardI, ShardN: d.meta.ShardN}
}

// LastBatch returns the ID of the last batch applied, and that of a
// sharded batch awaiting its exchange ("" if none).
func (d *DB) LastBatch() (applied, awaiting string) { return d.meta.LastBatch, d.meta.AwaitBatch }

// Awaiting reports whether a sharded batch awaits its exchange.
func (d *DB) Awaiting() bool { return d.meta.Awaiting }

// Len returns the number of pages, those of other shards included.
func (d *DB) Len() int { return int(d.meta.Pages) }

// LastChanges returns the change records of the last step applied (what
// its --changes file holds), and the outbox of a sharded batch awaiting
// its exchange: what a rerun of an applied step writes again.
func (d *DB) LastChanges() (changes, outbox []byte, err error) {
	err = d.view(func(tx *boltstate.Tx) error {
		m := tx.Bucket(bucketMeta)
		c, err1 := m.Get(keyChanges)
		o, err2 := m.Get(keyOutbox)
		changes, outbox = append([]byte(nil), c...), append([]byte(nil), o...)
		return errors.Join(err1, err2)
	})
	return changes, outbox, err
}

// State reads the whole state into memory (O(pages)): what opic next and
// show rank.
func (d *DB) State() (*State, error) {
	m := &d.meta
	s := &State{Damping: m.Damping, Window: m.Window, ShardI: m.ShardI, ShardN: m.ShardN, Now: m.Now,
		virtCash: m.VirtCash, virtHist: m.VirtHist, totalHist: m.TotalHist, steps: m.Steps,
		batches: m.Batches, awaiting: m.Awaiting}
	n := int(m.Pages)
	s.cash = make([]float64, 0, n)
	s.hist = make([]float64, 0, n)
	s.last = make([]int64, 0, n)
	s.visits = make([]uint32, 0, n)
	s.g.off = make([]uint64, 1, n+1)
	err := d.view(func(tx *boltstate.Tx) error {
		lc := tx.Bucket(bucketLink).Cursor()
		lk, lv := lc.First()
		c := tx.Bucket(bucketPage).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			id := uint32(len(s.cash))
			if len(k) != 4 || binary.BigEndian.Uint32(k) != id {
				return fmt.Errorf("corrupt opic state: page ids not dense at %d", id)
			}
			p, err := decodePage(id, v)
			if err != nil {
				return err
			}
			if _, added := s.names.Intern([]byte(p.name)); !added {
				return fmt.Errorf("corrupt opic state: page %q twice", p.name)
			}
			s.cash = append(s.cash, p.cashAt(m.Share))
			s.hist = append(s.hist, p.hist)
			s.last = append(s.last, p.last)
			s.visits = append(s.visits, p.visits)
			for lk != nil && binary.BigEndian.Uint32(lk) < id {
				lk, lv = lc.Next()
			}
			if lk != nil && binary.BigEndian.Uint32(lk) == id {
				links, err := decodeLinks(id, lv, m.Pages)
				if err != nil {
					return err
				}
				s.g.dst = append(s.g.dst, links...)
			}
			s.g.off = append(s.g.off, uint64(len(s.g.dst)))
		}
		if err := errors.Join(c.Err(), lc.Err()); err != nil {
			return err
		}
		if len(s.cash) != n {
			return fmt.Errorf("corrupt opic state: %d pages, the state says %d", len(s.cash), n)
		}
		return nil
	})
	if err != nil {
		return nil, withPath(d.path, err)
	}
	s.g.n = n
	if s.awaiting {
		s.sealed = n
	}
	return s, nil
}

// LoadState reads the state at path into memory, whichever its format (3,
// or an older opic's 2 or 1): what opic next and show read.
func LoadState(path string) (*State, error) {
	kind, err := sniff(path)
	if err != nil {
		return nil, err
	}
	if kind == kindV2 {
		return Load(path)
	}
	d, err := openBolt(path, true)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.State()
}

type fileKind int

const (
	kindV2 fileKind = iota
	kindBolt
)

// sniff tells a format 2 file from a bbolt one, and refuses a foreign,
// empty or truncated file before bbolt maps it (boltstate.Sniff).
func sniff(path string) (fileKind, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	head := make([]byte, len(stateMagic))
	n, _ := f.Read(head)
	f.Close()
	if n == len(stateMagic) && string(head) == stateMagic {
		return kindV2, nil
	}
	if n > 0 && !boltstate.IsBolt(path) {
		return 0, fmt.Errorf("%s: %w", path, ErrNotState)
	}
	if err := boltstate.Sniff(path, "opic state"); err != nil {
		return 0, err
	}
	return kindBolt, nil
}

// removeStaleTemps removes the temporary files a killed run left beside
// path: an older opic's (.NAME.tmp*) and a migration's (.NAME.migrate*).
// The caller holds the state's lock, or reads only.
func removeStaleTemps(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "."+base+".tmp") || strings.HasPrefix(n, "."+base+".migrate") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

func sortByName(ids []uint32, name func(uint32) string) {
	slices.SortFunc(ids, func(a, b uint32) int { return strings.Compare(name(a), name(b)) })
}

// migrate writes the format 2 state s as a format 3 state over path,
// crash-safely (beside it, synced, renamed).
func migrate(path string, s *State) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp := filepath.Join(dir, "."+base+".migrate")
	os.Remove(tmp)
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	d, err := openBoltFile(tmp, false)
	if err != nil {
		return err
	}
	defer func() {
		if d != nil {
			d.bolt.Close()
		}
	}()
	// As Begin does: the static offset folded in, cash in quanta, the dust
	// to the virtual page.
	s.g.Compact()
	s.fold()
	var dust float64
	for i, c := range s.cash {
		q := quantize(c)
		dust += c - q
		s.cash[i] = q
	}
	if dust != 0 {
		s.virtCash = quantize(s.virtCash + dust)
	}
	d.meta = dbMeta{Damping: s.Damping, Window: s.Window, ShardI: s.ShardI, ShardN: s.ShardN, Now: s.Now,
		VirtCash: s.virtCash, VirtHist: s.virtHist, TotalHist: s.totalHist, Steps: s.steps,
		Batches: s.batches, Awaiting: s.awaiting, Pages: uint64(s.Len())}
	err = d.bolt.Update(func(tx *boltstate.Tx) error {
		if err := d.initBuckets(tx); err != nil {
			return err
		}
		ids, pages, links := tx.Bucket(bucketID), tx.Bucket(bucketPage), tx.Bucket(bucketLink)
		for _, b := range []*boltstate.Bucket{ids, pages, links} {
			b.SetFillPercent(1) // appended in key order
		}
		for id := range uint32(s.Len()) {
			p := dbPage{id: id, name: s.Name(id), owned: s.Owns(s.Name(id)), cash: s.cash[id],
				hist: s.hist[id], last: s.last[id], visits: s.visits[id]}
			if !p.owned && p.cash != 0 {
				return fmt.Errorf("page %s of another shard holds cash: apply one batch with the older opic first", p.name)
			}
			if p.owned {
				d.meta.Owned++
				d.meta.PageHist += p.hist
			}
			if err := pages.Put(idKey(id), p.encode(nil)); err != nil {
				return err
			}
			if l := s.g.Out(id); len(l) > 0 {
				if err := links.Put(idKey(id), encodeLinks(l)); err != nil {
					return err
				}
			}
		}
		// Names in key order: the B+tree fills its pages.
		keys := make([]uint32, s.Len())
		for i := range keys {
			keys[i] = uint32(i)
		}
		sortByName(keys, s.Name)
		for _, id := range keys {
			if err := ids.Put([]byte(s.Name(id)), idKey(id)); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keyState, d.meta.encode())
	})
	if err != nil {
		return err
	}
	err = d.bolt.Close()
	d = nil
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	boltstate.SyncDir(dir)
	return nil
}
