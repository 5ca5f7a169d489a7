// Package boltstate is what the stores of recrawl, opic and sekitei share
// about their bbolt files: opening one safely, running transactions in
// which a damaged page is an error and not a crash, and values that carry
// a checksum.
//
// It exists because a state file lives for months beside a crawl and can
// be cut short, overwritten in part or copied over by another file, and
// bbolt checks only its own two meta pages: a flipped byte in a data page
// is read back as a value. The rule of the tools is that a damaged state
// is reported with its path and what is wrong, and that the turn stops
// without writing; this package is the single place that enforces it.
//
// Why bbolt: each store needs ordered keys, reads and writes by record
// (a turn touches a few thousand of millions of records) and crash
// safety. bbolt gives all three in one file without a server: its
// copy-on-write transactions commit with one fsync'd meta page, so kill
// -9 or a full disk at any moment leaves the last committed state.
//
// What is checked, and where:
//
//   - Open reads the two meta pages before bbolt maps the file (a read past
//     the end of a mapped file is a SIGBUS, not an error): a foreign file,
//     an empty one, one shorter than its meta page says, or one whose size
//     is not a whole number of pages (bytes appended) is refused with its
//     path. It reads nothing else, so opening costs the same for any size.
//   - Every value written through a Bucket carries a CRC-32C (Castagnoli)
//     of its key and its bytes, checked on every read: a flipped byte in a
//     leaf page, or a value moved under another key, is the error
//     "PATH: corrupt record KEY in BUCKET (checksum mismatch)". Only what
//     is read is checked, so an update stays O(batch).
//   - The keys in bbolt's branch pages are not checksummed: they are
//     covered by bbolt's page structure (each page names its own id and
//     type, checked as it is read) and by View and Update, which turn
//     bbolt's panics and memory faults on a damaged page into an error
//     naming the path. A damaged branch key that still sorts in place can
//     send a lookup to a neighbouring leaf, where the key reads as absent.
//
// A failed check leaves the file as it was: a read-only transaction
// writes nothing, and a write transaction that meets a bad record is
// rolled back (the error sticks to the transaction even if the caller
// drops it).
package boltstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// An Error is a state file that cannot be used. Its message names the
// path and says what is wrong.
type Error struct {
	Path string
	What string
}

func (e *Error) Error() string { return e.Path + ": " + e.What }

// ErrLocked is wrapped by Open's error when another process holds the
// file past the timeout.
var ErrLocked = errors.New("locked by another process")

// Options say how to open a state.
type Options struct {
	// Kind names the store in messages ("recrawl state").
	Kind string
	// ReadOnly opens with a shared lock and writes nothing.
	ReadOnly bool
	// NoSync skips fsync on commit (only for test and benchmark states).
	NoSync bool
	// Timeout is how long to wait for another process's lock (0: 30s;
	// negative: for as long as it takes).
	Timeout time.Duration
	// Buckets are the store's top-level buckets. A file that has any
	// top-level bucket must have exactly these: bucket names live in the
	// root page, which no value checksum covers, so a damaged name would
	// otherwise make a bucket vanish and be created again, empty.
	Buckets []string
}

// A DB is an open state file.
type DB struct {
	bolt *bolt.DB
	path string
	opts Options // as opened, with the timeout filled in
}

// openSame opens path with bbolt, and opens it again if the file at path
// was replaced while this process waited for its lock: a compaction
// (CompactIfSparse) renames a new file over the path, and a process that
// had opened the old one would otherwise read and write a file no longer
// there.
func openSame(path string, o Options) (*bolt.DB, error) {
	for {
		before, _ := os.Stat(path)
		b, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: o.Timeout, ReadOnly: o.ReadOnly, NoSync: o.NoSync,
			FreelistType: bolt.FreelistMapType})
		if err != nil || before == nil {
			return b, err
		}
		if after, err := os.Stat(path); err == nil && os.SameFile(before, after) {
			return b, nil
		}
		b.Close()
	}
}

// Open checks the file at path with Sniff (unless it does not exist) and
// opens it with bbolt, creating it if it is missing and not ReadOnly.
func Open(path string, o Options) (db *DB, err error) {
	// bbolt reads the freelist page on opening for writing; a damaged one
	// panics. (Its file stays open and locked until the process ends.)
	defer Guard(path, &err)()
	if err := Sniff(path, o.Kind); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if !o.ReadOnly {
		// A new state is made beside the path and linked into place
		// whole (create.go): a kill never leaves a half-made one.
		if err := Create(path, o, nil); err != nil {
			return nil, err
		}
	}
	switch {
	case o.Timeout == 0:
		o.Timeout = 30 * time.Second
	case o.Timeout < 0:
		o.Timeout = 0 // bbolt's 0 waits
	}
	b, err := openSame(path, o)
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("%s: %w", path, ErrLocked)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, &Error{path, "not a readable " + o.Kind + ": " + err.Error()}
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &DB{bolt: b, path: path, opts: o}
	if len(o.Buckets) > 0 {
		if err := d.checkBuckets(o.Buckets); err != nil {
			b.Close()
			return nil, err
		}
	}
	if !o.ReadOnly {
		removeStaleNew(path) // a creator killed after its link
	}
	if !o.ReadOnly && removeStaleCompaction(path) {
		// A compaction was killed before its rename: its copy is gone,
		// and the state, as sparse as it was, is compacted now rather
		// than after the next batch.
		if c, err := d.CompactIfSparse(); err != nil && c.Done {
			return nil, err // compacted, but not reopened
		}
	}
	return d, nil
}

// checkBuckets checks that the file's top-level buckets are none (a state
// not written yet) or exactly want.
func (d *DB) checkBuckets(want []string) (err error) {
	defer Guard(d.path, &err)()
	return d.bolt.View(func(tx *bolt.Tx) error {
		have := map[string]bool{}
		err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			if !slices.Contains(want, string(name)) {
				return &Error{d.path, fmt.Sprintf("corrupt: an unknown top-level bucket %q (a damaged root page?)", clipName(name))}
			}
			have[string(name)] = true
			return nil
		})
		if err != nil || len(have) == 0 {
			return err
		}
		for _, w := range want {
			if !have[w] {
				return &Error{d.path, fmt.Sprintf("corrupt: the bucket %q is missing (a damaged root page?)", w)}
			}
		}
		return nil
	})
}

func clipName(b []byte) string {
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

// Path returns the file's path.
func (d *DB) Path() string { return d.path }

// Close closes the file.
func (d *DB) Close() error { return d.bolt.Close() }

// View runs fn in a read transaction; see Update.
func (d *DB) View(fn func(*Tx) error) error { return d.run(false, fn) }

// Update runs fn in a write transaction and commits it if fn returns nil
// and no record read in it failed its check. A panic or memory fault of
// bbolt on a damaged page is returned as an *Error naming the path, and
// the transaction is rolled back.
func (d *DB) Update(fn func(*Tx) error) error { return d.run(true, fn) }

func (d *DB) run(write bool, fn func(*Tx) error) (err error) {
	defer Guard(d.path, &err)()
	body := func(btx *bolt.Tx) error {
		tx := d.newTx(btx)
		if err := fn(tx); err != nil {
			return err
		}
		return tx.err
	}
	if write {
		return d.bolt.Update(body)
	}
	return d.bolt.View(body)
}

// Begin starts a transaction the caller ends with Commit or Rollback; the
// caller guards its own calls (Guard).
func (d *DB) Begin(write bool) (tx *Tx, err error) {
	defer Guard(d.path, &err)()
	btx, err := d.bolt.Begin(write)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.path, err)
	}
	return d.newTx(btx), nil
}

func (d *DB) newTx(btx *bolt.Tx) *Tx {
	info := d.bolt.Info()
	return &Tx{tx: btx, path: d.path, base: info.Data, size: uintptr(btx.Size()),
		pageSize: uintptr(info.PageSize), leaves: map[uintptr]bool{}, inline: map[*bolt.Bucket]bool{}}
}

// Guard turns a panic or a memory fault (debug.SetPanicOnFault) in the
// calling goroutine into an *Error naming path, stored in *err. Use as
// defer Guard(path, &err)() around reads of a mapped file.
func Guard(path string, err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			*err = &Error{path, fmt.Sprintf("corrupt page: %v", r)}
		}
	}
}

// A Tx is a transaction on a state file.
type Tx struct {
	tx   *bolt.Tx
	path string
	err  error // the first record that failed its check

	// The file's map, to tell which page a record sits in, and the leaf
	// pages checked whole in this transaction.
	base, size, pageSize uintptr
	leaves               map[uintptr]bool
	inline               map[*bolt.Bucket]bool // inline buckets checked whole
}

// pageOf returns the page of the file a stored key or value sits in;
// false for one held in memory (written in this transaction).
func (t *Tx) pageOf(b []byte) (uintptr, bool) {
	if len(b) == 0 {
		return 0, false
	}
	a := uintptr(unsafe.Pointer(&b[0]))
	if a < t.base || a >= t.base+t.size {
		return 0, false
	}
	return (a - t.base) / t.pageSize, true
}

// Err returns the first record of the transaction that failed its check.
func (t *Tx) Err() error { return t.err }

// Size is the size of the database the transaction sees, in bytes.
func (t *Tx) Size() int64 { return t.tx.Size() }

// Bucket returns the named bucket, or nil.
func (t *Tx) Bucket(name []byte) *Bucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return &Bucket{b: b, tx: t, name: string(name)}
}

// CreateBucketIfNotExists returns the named bucket, creating it.
func (t *Tx) CreateBucketIfNotExists(name []byte) (*Bucket, error) {
	b, err := t.tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return &Bucket{b: b, tx: t, name: string(name)}, nil
}

// Commit commits a write transaction begun with Begin; it rolls back
// instead if a record read in it failed its check.
func (t *Tx) Commit() (err error) {
	if t.err != nil {
		t.tx.Rollback()
		return t.err
	}
	defer Guard(t.path, &err)()
	return t.tx.Commit()
}

// Rollback ends the transaction without writing.
func (t *Tx) Rollback() error { return t.tx.Rollback() }

// A Bucket is a bucket whose values carry checksums.
type Bucket struct {
	b    *bolt.Bucket
	tx   *Tx
	name string
}

// SetFillPercent sets how full bbolt fills pages on a split (1 for keys
// appended in order).
func (b *Bucket) SetFillPercent(f float64) { b.b.FillPercent = f }

// sumSize is the length of the checksum after each value.
const sumSize = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func sum(k, v []byte) uint32 {
	return crc32.Update(crc32.Update(0, castagnoli, k), castagnoli, v)
}

// Seal returns v followed by the checksum of k and v, as Put stores it.
func Seal(k, v []byte) []byte {
	out := make([]byte, len(v), len(v)+sumSize)
	copy(out, v)
	return binary.LittleEndian.AppendUint32(out, sum(k, v))
}

// unseal checks a stored value and returns it without its checksum.
func unseal(k, s []byte) ([]byte, bool) {
	if len(s) < sumSize {
		return nil, false
	}
	v := s[:len(s)-sumSize]
	return v, binary.LittleEndian.Uint32(s[len(v):]) == sum(k, v)
}

// corrupt records and returns the error for a record failing its check.
func (b *Bucket) corrupt(k []byte) error {
	err := &Error{b.tx.path, fmt.Sprintf("corrupt record %s in %s (checksum mismatch)", quoteKey(k), b.name)}
	if b.tx.err == nil {
		b.tx.err = err
	}
	return err
}

func quoteKey(k []byte) string {
	if len(k) > 100 {
		return strconv.Quote(string(k[:100])) + "..."
	}
	return strconv.Quote(string(k))
}

// checkLeaf checks every record of the leaf page where a lookup of k
// lands, once a transaction: a record whose key was damaged no longer
// sorts where it belongs, so its own lookup would miss it and read it as
// absent. The cost is one page's checksums per leaf read.
func (b *Bucket) checkLeaf(k []byte) error {
	c := b.b.Cursor()
	k1, v1 := c.Seek(k)
	if k1 == nil {
		k1, v1 = c.Last()
	}
	if b.b.Root() == 0 {
		// An inline bucket (a small one, kept in its parent's page) may be
		// a copy in memory: check all of it, once a transaction.
		if b.tx.inline[b.b] {
			return nil
		}
		b.tx.inline[b.b] = true
		for kk, vv := c.First(); kk != nil; kk, vv = c.Next() {
			if vv == nil {
				continue // a nested bucket
			}
			if _, ok := unseal(kk, vv); !ok {
				return b.corrupt(kk)
			}
		}
		return nil
	}
	pg, ok := b.tx.pageOf(k1)
	if !ok || b.tx.leaves[pg] {
		return nil
	}
	b.tx.leaves[pg] = true
	for kk, vv := k1, v1; kk != nil; kk, vv = c.Next() {
		if p, ok := b.tx.pageOf(kk); !ok || p != pg {
			break
		}
		if _, ok := unseal(kk, vv); !ok {
			return b.corrupt(kk)
		}
	}
	c.Seek(k1)
	for kk, vv := c.Prev(); kk != nil; kk, vv = c.Prev() {
		if p, ok := b.tx.pageOf(kk); !ok || p != pg {
			break
		}
		if _, ok := unseal(kk, vv); !ok {
			return b.corrupt(kk)
		}
	}
	return nil
}

// Get returns the value of k (nil, nil if there is none), checked with
// the rest of its leaf page. The value is valid for the life of the
// transaction and must not be changed.
func (b *Bucket) Get(k []byte) ([]byte, error) {
	if err := b.checkLeaf(k); err != nil {
		return nil, err
	}
	s := b.b.Get(k)
	if s == nil {
		return nil, nil
	}
	v, ok := unseal(k, s)
	if !ok {
		return nil, b.corrupt(k)
	}
	return v, nil
}

// Raw returns the stored bytes of k without checking them: only for
// telling a file of an older format, whose values carry no checksum.
func (b *Bucket) Raw(k []byte) []byte { return b.b.Get(k) }

// Put sets the value of k, with its checksum. The leaf it goes into is
// checked first: bbolt copies the rest of it into the new version.
func (b *Bucket) Put(k, v []byte) error {
	if err := b.checkLeaf(k); err != nil {
		return err
	}
	return b.b.Put(k, Seal(k, v))
}

// Delete removes k, having checked its leaf (see Put).
func (b *Bucket) Delete(k []byte) error {
	if err := b.checkLeaf(k); err != nil {
		return err
	}
	return b.b.Delete(k)
}

// ForEach calls fn for each key and checked value in key order; a record
// failing its check stops it with the error.
func (b *Bucket) ForEach(fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return c.Err()
}

// Cursor returns a cursor over the bucket.
func (b *Bucket) Cursor() *Cursor { return &Cursor{c: b.b.Cursor(), b: b} }

// A Cursor walks a bucket in key order. A record that fails its check
// ends the walk (a nil key) and is reported by Err, and by the
// transaction.
type Cursor struct {
	c   *bolt.Cursor
	b   *Bucket
	err error
}

func (c *Cursor) check(k, s []byte) ([]byte, []byte) {
	if k == nil || c.err != nil {
		return nil, nil
	}
	v, ok := unseal(k, s)
	if !ok {
		c.err = c.b.corrupt(k)
		return nil, nil
	}
	return k, v
}

// First moves to the first record.
func (c *Cursor) First() ([]byte, []byte) { return c.check(c.c.First()) }

// Last moves to the last record.
func (c *Cursor) Last() ([]byte, []byte) { return c.check(c.c.Last()) }

// Next moves to the next record.
func (c *Cursor) Next() ([]byte, []byte) { return c.check(c.c.Next()) }

// Prev moves to the previous record.
func (c *Cursor) Prev() ([]byte, []byte) { return c.check(c.c.Prev()) }

// Seek moves to the first record at or after k, having checked the leaf
// page it lands in (see Get).
func (c *Cursor) Seek(k []byte) ([]byte, []byte) {
	if c.err == nil {
		c.err = c.b.checkLeaf(k)
	}
	return c.check(c.c.Seek(k))
}

// Delete removes the record under the cursor.
func (c *Cursor) Delete() error { return c.c.Delete() }

// Err returns the record that ended the walk by failing its check.
func (c *Cursor) Err() error { return c.err }

// bbolt's meta page: after a 16-byte page header, magic (0), version (4),
// page size (8), flags (12), root bucket (16), freelist (32), high-water
// page id (40), txid (48) and an FNV-64a checksum of the bytes before it
// (56).
const (
	boltMagic   = 0xED0CDAED
	metaHeader  = 16
	metaLen     = 64
	minPageSize = 512
	maxPageSize = 1 << 20
)

type meta struct {
	pageSize, highWater, txid uint64
}

func readMeta(b []byte) (meta, bool) {
	if len(b) < metaHeader+metaLen {
		return meta{}, false
	}
	m := b[metaHeader:]
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(m[:56])
	if le.Uint32(m) != boltMagic || h.Sum64() != le.Uint64(m[56:]) {
		return meta{}, false
	}
	return meta{uint64(le.Uint32(m[8:])), le.Uint64(m[40:]), le.Uint64(m[48:])}, true
}

// IsBolt reports whether the file at path starts as a bbolt file does.
func IsBolt(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, metaHeader+4)
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(head[metaHeader:]) == boltMagic
}

// Sniff checks the file at path before bbolt maps it, from its two meta
// pages only: it returns an *Error for a foreign file ("not a KIND"), an
// empty one, one whose meta pages are both damaged, one shorter than the
// meta page bbolt would use says, and one whose size is not a whole number
// of pages. A missing file is an error wrapping os.ErrNotExist.
func Sniff(path, kind string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	switch {
	case !st.Mode().IsRegular():
		return &Error{path, "not a regular file"}
	case size == 0:
		return &Error{path, "truncated " + kind + ": 0 bytes (an empty file)"}
	}
	head := make([]byte, metaHeader+metaLen)
	n, _ := io.ReadFull(f, head)
	if n < metaHeader+4 || binary.LittleEndian.Uint32(head[metaHeader:]) != boltMagic {
		return &Error{path, "not a " + kind + " (not a bbolt file)"}
	}
	// bbolt uses the valid meta page of the higher txid; the second one
	// sits one page in (the system's page size if the first is damaged).
	best, ok := readMeta(head[:n])
	second := int64(os.Getpagesize())
	if ok && best.pageSize >= minPageSize && best.pageSize <= maxPageSize {
		second = int64(best.pageSize)
	}
	buf := make([]byte, metaHeader+metaLen)
	if k, _ := f.ReadAt(buf, second); k == len(buf) {
		if m, ok2 := readMeta(buf); ok2 && (!ok || m.txid > best.txid) {
			best, ok = m, true
		}
	}
	switch {
	case !ok:
		if size < 2*second {
			return &Error{path, fmt.Sprintf("truncated %s: %d bytes, shorter than its two header pages", kind, size)}
		}
		return &Error{path, "corrupt " + kind + ": both bbolt meta pages are damaged"}
	case best.pageSize < minPageSize || best.pageSize > maxPageSize:
		return &Error{path, fmt.Sprintf("corrupt %s: page size %d", kind, best.pageSize)}
	case uint64(size) < best.highWater*best.pageSize:
		return &Error{path, fmt.Sprintf("truncated %s: %d bytes, want %d", kind, size, best.highWater*best.pageSize)}
	case uint64(size)%best.pageSize != 0:
		// bbolt grows its file by whole pages (ftruncate before writing).
		return &Error{path, fmt.Sprintf("corrupt %s: %d bytes, not a whole number of %d-byte pages (cut short or appended to)", kind, size, best.pageSize)}
	}
	return nil
}
