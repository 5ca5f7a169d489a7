package barrel

import (
	"cmp"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A segment's .inv file is checked a block at a time: seg-N.sums holds
// the CRC-32C of each block, and a walk of a list checks each block as it
// reaches it (lookupInv, below), once per open index. The sections'
// checksums of the ptrs file cost a query that reads a few lists of a
// barrel the whole barrel's bytes: on an index opened for one query, half
// the CPU of the query. Merges and Verify, which read the sections whole,
// check all their blocks.
//
// The blocks are of invBlockSmall bytes where the sums stay small
// (invSmallBlocks of them at most), of invBlock bytes in a larger
// segment: a query's first read of a short list checks the block it lies
// in, so the smaller the block the fewer bytes checked for it (one query
// on an index opened for it checks several megabytes of blocks); but an
// open checks the sums whole, so a segment of hundreds of megabytes keeps
// the larger blocks. The size is written in the sums, so a reader takes
// either.
//
// seg-N.sums: magic, the block size (uint32, a power of two), the
// CRC-32C of each block of the .inv file in order (the last may be
// short), and the CRC-32C of all that precedes it. The file is written
// with the segment; an index of format 9 has none, and its next commit
// writes them, reading each .inv file once against its checksum in the
// manifest.
const (
	invSumsMagic   = "BSUM1\n\x00\x00"
	invBlock       = 16 << 10
	invBlockSmall  = 4 << 10
	invSmallBlocks = 16 << 10 // 64 KiB of sums, for 64 MiB of lists
)

// blockSummer passes what a segWriter writes to the .inv file on,
// summing each block of both sizes (the size is chosen at the end, when
// the file's size is known).
type blockSummer struct {
	out          sectionOut
	large, small blockSums
}

// blockSums is the running sums of blocks of one size.
type blockSums struct {
	sums []uint32
	cur  uint32
	fill int
}

func (s *blockSums) add(p []byte, block int) {
	for len(p) > 0 {
		k := min(len(p), block-s.fill)
		s.cur = crc32.Update(s.cur, castagnoli, p[:k])
		s.fill += k
		p = p[k:]
		if s.fill == block {
			s.sums = append(s.sums, s.cur)
			s.cur, s.fill = 0, 0
		}
	}
}

// all returns the sums, the last block's included.
func (s *blockSums) all() []uint32 {
	if s.fill > 0 {
		return append(s.sums[:len(s.sums):len(s.sums)], s.cur)
	}
	return s.sums
}

func (b *blockSummer) Write(p []byte) (int, error) {
	n, err := b.out.Write(p)
	b.large.add(p, invBlock)
	if len(b.small.sums) <= invSmallBlocks { // past it the large blocks are taken
		b.small.add(p, invBlockSmall)
	}
	return n, err
}

func (b *blockSummer) size() int64 { return b.out.size() }

// file returns the sums file of the bytes written.
func (b *blockSummer) file() []byte {
	if small := b.small.all(); len(small) <= invSmallBlocks {
		return encodeInvSums(small, invBlockSmall)
	}
	return encodeInvSums(b.large.all(), invBlock)
}

func encodeInvSums(sums []uint32, block int) []byte {
	b := make([]byte, 0, len(invSumsMagic)+4+4*len(sums)+4)
	b = append(b, invSumsMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(block))
	for _, s := range sums {
		b = binary.LittleEndian.AppendUint32(b, s)
	}
	return binary.LittleEndian.AppendUint32(b, crc(b))
}

// invSums is a segment's block checksums, and which blocks a query has
// checked.
type invSums struct {
	shift uint     // log2 of the block size
	sums  u32le    // in the mapped sums file
	ok    []uint64 // a bit per block checked, set atomically
}

// decodeInvSums decodes sums file name of an .inv file of invSize bytes.
func decodeInvSums(b []byte, name string, invSize int64) (*invSums, error) {
	h := len(invSumsMagic) + 4
	if len(b) < h+4 || string(b[:len(invSumsMagic)]) != invSumsMagic || (len(b)-h)%4 != 0 {
		return nil, corrupt("%s: bad header or size", name)
	}
	if crc(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, corrupt("%s: checksum mismatch", name)
	}
	block := binary.LittleEndian.Uint32(b[len(invSumsMagic):])
	if block < 1<<10 || block > 1<<24 || block&(block-1) != 0 {
		return nil, corrupt("%s: block size %d", name, block)
	}
	s := &invSums{shift: uint(bits.TrailingZeros32(block)), sums: u32le(b[h : len(b)-4])}
	if want := (invSize + int64(block) - 1) / int64(block); int64(s.sums.len()) != want {
		return nil, corrupt("%s: %d blocks, the .inv file has %d", name, s.sums.len(), want)
	}
	s.ok = make([]uint64, (s.sums.len()+63)/64)
	return s, nil
}

// sumsOfFile reads the .inv file at path, of size bytes and whole-file
// CRC-32C want, and returns its sums file: an older segment's, written
// once (the file checked whole as it is read, so that the sums vouch
// for no damage).
func sumsOfFile(path string, size int64, want uint32) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, whole := &blockSummer{out: &countOut{}}, crc32.New(castagnoli)
	if _, err := io.Copy(io.MultiWriter(w, whole), f); err != nil {
		return nil, err
	}
	if w.size() != size || whole.Sum32() != want {
		return nil, corrupt("%s: %d bytes, checksum %08x; the manifest says %d, %08x", filepath.Base(path), w.size(), whole.Sum32(), size, want)
	}
	return w.file(), nil
}

// countOut is a sectionOut that counts the bytes and keeps none.
type countOut struct{ n int64 }

func (c *countOut) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }
func (c *countOut) size() int64                 { return c.n }

// check checks the blocks of inv (the mapped .inv file named name)
// holding bytes lo to hi, those not checked before.
func (s *invSums) check(inv []byte, name string, lo, hi int64) error {
	return s.checkAt(inv, 0, name, lo, hi)
}

// checkAt is check where b holds the file's bytes from offset base (a
// block's) on, as a read of the file gives them (listRead): the blocks it
// checks are marked checked for the mapping too, whose bytes they are.
func (s *invSums) checkAt(b []byte, base int64, name string, lo, hi int64) error {
	if lo >= hi {
		return nil
	}
	for k := lo >> s.shift; k <= (hi-1)>>s.shift; k++ {
		w, bit := &s.ok[k/64], uint64(1)<<(k%64)
		if atomic.LoadUint64(w)&bit != 0 {
			continue
		}
		start := k << s.shift
		end := min(start+1<<s.shift, base+int64(len(b)))
		if crc(b[start-base:end-base]) != s.sums.at(int(k)) {
			return corrupt("%s: bytes %d to %d: checksum mismatch", name, start, end)
		}
		atomic.OrUint64(w, bit)
	}
	return nil
}

// A walk of an inverted list checks the blocks of the list as it reaches
// them: the list is found among the mapped .inv files with block sums by
// its address (lookupInv), so that every walk checks what it reads
// however it came by the list, and none reads an unchecked byte. A query
// of common words stops at its MaxMatches-th match, in the first
// hundredth of lists of tens of megabytes: checking them whole was most
// of the CPU of one query on an index opened for it.
type mappedInv struct {
	lo, hi uintptr // the mapping's addresses
	inv    []byte
	sums   *invSums
	name   string
}

// invMaps is every mapped .inv file with block sums, sorted by address;
// replaced whole when one is mapped or unmapped, read without a lock.
var (
	invMaps  atomic.Pointer[[]*mappedInv]
	invMapMu sync.Mutex
)

func registerInv(inv []byte, sums *invSums, name string) {
	if len(inv) == 0 {
		return
	}
	invMapMu.Lock()
	defer invMapMu.Unlock()
	var old []*mappedInv
	if p := invMaps.Load(); p != nil {
		old = *p
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(inv)))
	m := &mappedInv{lo: lo, hi: lo + uintptr(len(inv)), inv: inv, sums: sums, name: name}
	i, _ := slices.BinarySearchFunc(old, lo, func(x *mappedInv, lo uintptr) int { return cmp.Compare(x.lo, lo) })
	ms := slices.Insert(slices.Clone(old), i, m)
	invMaps.Store(&ms)
}

func unregisterInv(inv []byte) {
	if len(inv) == 0 {
		return
	}
	invMapMu.Lock()
	defer invMapMu.Unlock()
	p := invMaps.Load()
	if p == nil {
		return
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(inv)))
	ms := slices.DeleteFunc(slices.Clone(*p), func(x *mappedInv) bool { return x.lo == lo })
	invMaps.Store(&ms)
}

// lookupInv returns the mapped .inv file holding list and the file
// offset of its first byte; nil when list lies in none (a list in memory,
// or in a segment checked by whole sections).
func lookupInv(list []byte) (*mappedInv, int64) {
	p := invMaps.Load()
	if p == nil || len(list) == 0 {
		return nil, 0
	}
	a := uintptr(unsafe.Pointer(unsafe.SliceData(list)))
	ms := *p
	i, found := slices.BinarySearchFunc(ms, a, func(x *mappedInv, a uintptr) int { return cmp.Compare(x.lo, a) })
	if !found {
		i--
	}
	if i < 0 || a >= ms[i].hi {
		return nil, 0
	}
	return ms[i], int64(a - ms[i].lo)
}

// check checks the blocks holding bytes lo to hi of the file.
func (m *mappedInv) check(lo, hi int64) error { return m.sums.check(m.inv, m.name, lo, hi) }
