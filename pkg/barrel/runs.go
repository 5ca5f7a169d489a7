package barrel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
)

// A table is an immutable file of fixed-width records sorted by a 64-bit
// key (the first 8 bytes of a record, little-endian), in blocks. Its
// trailer holds each block's first key and CRC-32C, so that an open reads
// only the trailer, a lookup reads the one block its key falls in, and
// each block's checksum is checked the first time it is read: opening and
// querying an index read what a query needs, not whole files of the
// index's size.
//
//	records  count × size bytes
//	trailer  per block: first key (8), CRC-32C (4)
//	footer   count (8), record size (4), blocks (4), block size (4),
//	         CRC-32C of trailer and footer so far (4), magic (8)
//
// The blocks are of tableBlockSmall bytes where the trailer stays small
// (tableSmallTrailer), of tableBlock bytes in a larger table: a query
// bounds and scores pages spread over a segment's documents table, and
// each lookup checks the block it falls in, so the smaller the block the
// fewer bytes checked for it (4 KiB blocks were a third of the bytes one
// query on an index opened for it checked); but an open checks the
// trailer whole. A table of index format 11 and before (tableMagic3) has
// no block size in its footer: its blocks are of tableBlock bytes.
const (
	tableMagic        = "BTAB4\n\x00\x00"
	tableMagic3       = "BTAB3\n\x00\x00"
	tableFooter       = 8 + 4 + 4 + 4 + 4 + 8
	tableFooter3      = 8 + 4 + 4 + 4 + 8
	tableBlock        = 4096
	tableBlockSmall   = 1024
	tableSmallTrailer = 64 << 10
)

// smallTableBlocks makes new tables of tableBlockSmall bytes where small
// (off only in the tests that write an index of format 11).
var smallTableBlocks = true

type table struct {
	name    string
	data    []byte // the mapped file
	size    int    // record size
	count   int
	perBlk  int
	trailer []byte // per block: first key, CRC-32C (read in place)
	blocks  int
	mu      sync.Mutex
	checked []uint64 // bitset of blocks checked
	err     error
	inPlace bool // data is a part of a compound file, released with it
	keyless bool // records without a key (docstats.go): no order to check
}

// openTable maps a table (or reads it, if small: mapFile) and checks its
// trailer against the size the manifest gives. A missing file is damage,
// as mapFile reports it.
func openTable(dir, name string, want FileSum) (*table, error) {
	data, err := mapFile(filepath.Join(dir, name), want.Size)
	if err != nil {
		return nil, err
	}
	t := &table{name: name, data: data}
	if err := t.parse(); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

func (t *table) parse() error {
	b := t.data
	footer, block := tableFooter, 0
	switch {
	case len(b) >= tableFooter && string(b[len(b)-8:]) == tableMagic:
		block = int(binary.LittleEndian.Uint32(b[len(b)-tableFooter+16:]))
	case len(b) >= tableFooter3 && string(b[len(b)-8:]) == tableMagic3:
		footer, block = tableFooter3, tableBlock
	default:
		return corrupt("%s: bad footer", t.name)
	}
	f := b[len(b)-footer:]
	count, size, nb := binary.LittleEndian.Uint64(f), int(binary.LittleEndian.Uint32(f[8:])), int(binary.LittleEndian.Uint32(f[12:]))
	if block < 64 || block > 1<<20 || block&(block-1) != 0 || size < 4 || size > block || count > uint64(len(b))/uint64(size) {
		return corrupt("%s: bad footer", t.name)
	}
	t.size, t.count, t.perBlk = size, int(count), block/size
	if nb != (t.count+t.perBlk-1)/t.perBlk || t.count*size+12*nb+footer != len(b) {
		return corrupt("%s: %d bytes do not hold %d records", t.name, len(b), count)
	}
	tr := b[t.count*size : len(b)-8]
	if crc(tr[:len(tr)-4]) != binary.LittleEndian.Uint32(tr[len(tr)-4:]) {
		return corrupt("%s: trailer checksum mismatch", t.name)
	}
	t.trailer, t.blocks = tr[:12*nb], nb
	t.checked = make([]uint64, (nb+63)/64)
	return nil
}

func (t *table) close() {
	if t != nil && len(t.data) > 0 {
		if !t.inPlace {
			unmap(t.data)
		}
		t.data = nil
	}
}

// fence is block i's first key; sum its CRC-32C.
func (t *table) fence(i int) uint64 { return binary.LittleEndian.Uint64(t.trailer[12*i:]) }
func (t *table) sum(i int) uint32   { return binary.LittleEndian.Uint32(t.trailer[12*i+8:]) }

// block returns block i's records, checked.
func (t *table) block(i int) ([]byte, error) {
	lo := i * t.perBlk * t.size
	hi := min(t.count*t.size, lo+t.perBlk*t.size)
	if atomic.LoadUint64(&t.checked[i/64])&(1<<(i%64)) != 0 { // checked before
		return t.data[lo:hi], nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return nil, t.err
	}
	b := t.data[lo:hi]
	if crc(b) != t.sum(i) || t.size >= 8 && binary.LittleEndian.Uint64(b) != t.fence(i) {
		t.err = corrupt("%s: block %d checksum mismatch", t.name, i)
		return nil, t.err
	}
	atomic.OrUint64(&t.checked[i/64], 1<<(i%64))
	return b, nil
}

// rec returns record i.
func (t *table) rec(i int) ([]byte, error) {
	b, err := t.block(i / t.perBlk)
	if err != nil {
		return nil, err
	}
	k := i % t.perBlk * t.size
	return b[k : k+t.size], nil
}

// search returns the index of the first record with key >= key.
func (t *table) search(key uint64) (int, error) {
	// The first block starting at or past key: the blocks before the one
	// before it hold only smaller keys (a key may repeat across blocks), so
	// the answer is in that one, or is the first record of block j.
	j := sort.Search(t.blocks, func(i int) bool { return t.fence(i) >= key })
	if j == 0 {
		return 0, nil
	}
	b, err := t.block(j - 1)
	if err != nil {
		return 0, err
	}
	n := len(b) / t.size
	k := sort.Search(n, func(i int) bool { return binary.LittleEndian.Uint64(b[i*t.size:]) >= key })
	return (j-1)*t.perBlk + k, nil
}

// each calls fn for the records with key in [lo, hi).
func (t *table) each(lo, hi uint64, fn func(rec []byte) error) error {
	i, err := t.search(lo)
	if err != nil {
		return err
	}
	for ; i < t.count; i++ {
		r, err := t.rec(i)
		if err != nil {
			return err
		}
		if binary.LittleEndian.Uint64(r) >= hi {
			return nil
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// verify checks every block and that the keys are in order.
func (t *table) verify() error {
	prev := uint64(0)
	for i := range t.blocks {
		b, err := t.block(i)
		if err != nil {
			return err
		}
		if t.size < 8 || t.keyless {
			continue
		}
		for p := 0; p < len(b); p += t.size {
			k := binary.LittleEndian.Uint64(b[p:])
			if (i > 0 || p > 0) && k < prev {
				return corrupt("%s: keys out of order", t.name)
			}
			prev = k
		}
	}
	return nil
}

// tableWriter streams records into a new table file, its trailer kept
// for blocks of both sizes until the end, when the table's size decides.
type tableWriter struct {
	g            io.Writer
	size         int
	n            int
	large, small tableTrailer
}

// tableTrailer is a table's trailer for blocks of per records.
type tableTrailer struct {
	per     int
	blk     uint32
	trailer []byte
}

func (t *tableTrailer) add(rec []byte, n, size int) {
	if n%t.per == 0 {
		if n > 0 {
			t.trailer = binary.LittleEndian.AppendUint32(t.trailer, t.blk)
		}
		var k uint64
		if size >= 8 {
			k = binary.LittleEndian.Uint64(rec)
		}
		t.trailer = binary.LittleEndian.AppendUint64(t.trailer, k)
		t.blk = 0
	}
	t.blk = crc32.Update(t.blk, castagnoli, rec)
}

func newTableWriter(g io.Writer, size int) *tableWriter {
	w := &tableWriter{g: g, size: size, large: tableTrailer{per: tableBlock / size}}
	if smallTableBlocks && size <= tableBlockSmall/4 {
		w.small.per = tableBlockSmall / size
	}
	return w
}

func (w *tableWriter) add(rec []byte) {
	if len(rec) != w.size {
		panic(fmt.Sprintf("table record of %d bytes, want %d", len(rec), w.size))
	}
	w.large.add(rec, w.n, w.size)
	if w.small.per > 0 && len(w.small.trailer) <= tableSmallTrailer { // past it the large blocks are taken
		w.small.add(rec, w.n, w.size)
	}
	w.g.Write(rec)
	w.n++
}

// finish writes the trailer and footer and, for a file, closes it.
func (w *tableWriter) finish() (FileSum, error) {
	w.end()
	if g, ok := w.g.(*genWriter); ok {
		return g.finish()
	}
	return FileSum{}, nil
}

func (w *tableWriter) end() {
	tt, block := &w.large, tableBlock
	if w.small.per > 0 && len(w.small.trailer) <= tableSmallTrailer {
		tt, block = &w.small, tableBlockSmall
	}
	if w.n > 0 {
		tt.trailer = binary.LittleEndian.AppendUint32(tt.trailer, tt.blk)
	}
	nb := (w.n + tt.per - 1) / tt.per
	t := tt.trailer
	t = binary.LittleEndian.AppendUint64(t, uint64(w.n))
	t = binary.LittleEndian.AppendUint32(t, uint32(w.size))
	t = binary.LittleEndian.AppendUint32(t, uint32(nb))
	magic := tableMagic3
	if smallTableBlocks {
		t = binary.LittleEndian.AppendUint32(t, uint32(block))
		magic = tableMagic
	}
	t = binary.LittleEndian.AppendUint32(t, crc(t))
	t = append(t, magic...)
	w.g.Write(t)
}

// encodeTable returns a table of the records in memory.
func encodeTable(size int, recs [][]byte) []byte {
	var buf bytes.Buffer
	w := newTableWriter(&buf, size)
	for _, r := range recs {
		w.add(r)
	}
	w.end()
	return buf.Bytes()
}

// RunInfo is a sorted run's entry in the manifest.
type RunInfo struct {
	ID    int `json:"id"`
	Count int `json:"count"`
}

func runName(kind string, id int) string { return fmt.Sprintf("%s-%06d.tab", kind, id) }

// A runSet is a log-structured map (as a log-structured merge tree keeps
// one): tables of 16-byte (key, value) records, each sorted, one written
// per batch, merged by the same logarithmic policy as segments, so that a
// batch writes about its own size, amortised O(log n) per record, and a
// lookup is a binary search per run.
type runSet struct {
	tabs []*table
}

const runRec = 16

func openRuns(dir, kind string, runs []RunInfo, m *Manifest) (*runSet, error) {
	rs := &runSet{}
	for _, r := range runs {
		name := runName(kind, r.ID)
		sum, ok := m.Files[name]
		if !ok {
			rs.close()
			return nil, corrupt("%s missing from %s", name, manifestName)
		}
		t, err := openTable(dir, name, sum)
		if err != nil {
			rs.close()
			return nil, err
		}
		rs.tabs = append(rs.tabs, t)
		if t.size != runRec || t.count != r.Count {
			rs.close()
			return nil, corrupt("%s: %d records of %d bytes, manifest says %d", name, t.count, t.size, r.Count)
		}
	}
	return rs, nil
}

func (rs *runSet) close() {
	if rs == nil {
		return
	}
	for _, t := range rs.tabs {
		t.close()
	}
}

// each calls fn for the records with key in [lo, hi), run by run.
func (rs *runSet) each(lo, hi uint64, fn func(key, val uint64) error) error {
	if rs == nil {
		return nil
	}
	for _, t := range rs.tabs {
		if err := t.each(lo, hi, func(r []byte) error {
			return fn(binary.LittleEndian.Uint64(r), binary.LittleEndian.Uint64(r[8:]))
		}); err != nil {
			return err
		}
	}
	return nil
}

func cmpRec(a, b [2]uint64) int {
	switch {
	case a[0] != b[0]:
		if a[0] < b[0] {
			return -1
		}
		return 1
	case a[1] < b[1]:
		return -1
	case a[1] > b[1]:
		return 1
	}
	return 0
}

// writeRun writes sorted records as a table.
func writeRun(g *genWriter, recs [][2]uint64) (FileSum, error) {
	w := newTableWriter(g, runRec)
	var buf [runRec]byte
	for _, r := range recs {
		binary.LittleEndian.PutUint64(buf[:], r[0])
		binary.LittleEndian.PutUint64(buf[8:], r[1])
		w.add(buf[:])
	}
	return w.finish()
}

// mergeRuns writes the records of tabs in order, duplicates once; with sum,
// the values of one key are added (document frequency changes) and keys
// whose sum is 0 dropped.
func mergeRuns(g *genWriter, tabs []*table, sum bool) (FileSum, int, error) {
	w := newTableWriter(g, runRec)
	pos := make([]int, len(tabs))
	cur := make([][2]uint64, len(tabs))
	load := func(i int) (bool, error) {
		if pos[i] >= tabs[i].count {
			return false, nil
		}
		r, err := tabs[i].rec(pos[i])
		if err != nil {
			return false, err
		}
		cur[i] = [2]uint64{binary.LittleEndian.Uint64(r), binary.LittleEndian.Uint64(r[8:])}
		return true, nil
	}
	ok := make([]bool, len(tabs))
	for i := range tabs {
		var err error
		if ok[i], err = load(i); err != nil {
			return FileSum{}, 0, err
		}
	}
	var last [2]uint64
	n := 0
	var buf [runRec]byte
	pending, have := [2]uint64{}, false
	flush := func() {
		if have && pending[1] != 0 {
			binary.LittleEndian.PutUint64(buf[:], pending[0])
			binary.LittleEndian.PutUint64(buf[8:], pending[1])
			w.add(buf[:])
			n++
		}
		have = false
	}
	for {
		best := -1
		for i := range tabs {
			if ok[i] && (best < 0 || cmpRec(cur[i], cur[best]) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		if sum {
			if have && pending[0] != cur[best][0] {
				flush()
			}
			if !have {
				pending, have = [2]uint64{cur[best][0], 0}, true
			}
			pending[1] += cur[best][1]
		} else if n == 0 || cur[best] != last {
			binary.LittleEndian.PutUint64(buf[:], cur[best][0])
			binary.LittleEndian.PutUint64(buf[8:], cur[best][1])
			w.add(buf[:])
			last = cur[best]
			n++
		}
		pos[best]++
		var err error
		if ok[best], err = load(best); err != nil {
			return FileSum{}, 0, err
		}
	}
	flush()
	fs, err := w.finish()
	return fs, n, err
}

// pickRunMerge chooses the runs to merge: factor runs of one size class
// (records, by powers of factor), the smallest class first, none past
// maxRecs records merged.
func pickRunMerge(runs []RunInfo, factor, maxRecs int) []int {
	classes := map[int][]int{}
	var order []int
	for _, r := range runs {
		if r.Count > maxRecs/2 {
			continue
		}
		c := sizeClass(r.Count, factor)
		if classes[c] == nil {
			order = append(order, c)
		}
		classes[c] = append(classes[c], r.ID)
	}
	sort.Ints(order)
	for _, c := range order {
		if len(classes[c]) >= factor {
			return classes[c][:factor]
		}
	}
	return nil
}
