package barrel

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestTableSearch: lookups find every record of a key, also when its
// records straddle blocks, and a damaged block is reported when read.
func TestTableSearch(t *testing.T) {
	var recs [][]byte
	want := map[uint64]int{}
	for k := uint64(0); k < 40; k++ {
		n := 1 + int(k%7)*60 // keys repeated past a block (64 records)
		for i := range n {
			r := make([]byte, runRec)
			binary.LittleEndian.PutUint64(r, 3*k)
			binary.LittleEndian.PutUint64(r[8:], uint64(i))
			recs = append(recs, r)
		}
		want[3*k] = n
	}
	data := encodeTable(runRec, recs)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.tab"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := openTable(dir, "t.tab", FileSum{Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.close()
	if tab.count != len(recs) || tab.blocks < 10 || tab.perBlk*tab.size != tableBlockSmall {
		t.Fatalf("%d records in %d blocks", tab.count, tab.blocks)
	}
	for k := uint64(0); k < 121; k++ {
		n := 0
		if err := tab.each(k, k+1, func(r []byte) error {
			if binary.LittleEndian.Uint64(r) != k || binary.LittleEndian.Uint64(r[8:]) != uint64(n) {
				t.Fatalf("key %d: record %d out of order", k, n)
			}
			n++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != want[k] {
			t.Errorf("key %d: %d records, want %d", k, n, want[k])
		}
	}
	// search gives the first record at or past a key whatever the order
	// of the keys asked (a search starts at the block of the last one).
	first := func(k uint64) int {
		for i, r := range recs {
			if binary.LittleEndian.Uint64(r) >= k {
				return i
			}
		}
		return len(recs)
	}
	rng := rand.New(rand.NewPCG(3, 9))
	for n := range 2000 {
		k := uint64(rng.IntN(125))
		if n%3 == 0 {
			k = uint64(124 - n/3%125) // descending runs
		}
		if i, err := tab.search(k); err != nil || i != first(k) {
			t.Fatalf("search %d: %d, %v; want %d", k, i, err, first(k))
		}
	}
	if err := tab.verify(); err != nil {
		t.Fatal(err)
	}
	// A flipped byte in a block is found when the block is read.
	bad := append([]byte(nil), data...)
	bad[5*tab.perBlk*tab.size+100] ^= 1
	if err := os.WriteFile(filepath.Join(dir, "bad.tab"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	bt, err := openTable(dir, "bad.tab", FileSum{Size: int64(len(bad))})
	if err != nil {
		t.Fatal(err)
	}
	defer bt.close()
	if _, err := bt.block(5); err == nil {
		t.Error("damaged block read without error")
	}
	if err := bt.verify(); err == nil {
		t.Error("damaged table verified")
	}
}

// TestTableBlockSizes: a table is written in blocks of 1 KiB while its
// trailer stays within 64 KiB, in blocks of 4 KiB past that and for
// records of more than 256 bytes, and says which in its footer; either
// is read back whole, and so is a table of the format 11 footer.
func TestTableBlockSizes(t *testing.T) {
	dir := t.TempDir()
	small := tableSmallTrailer / 12 * (tableBlockSmall / 16) // 16-byte records at the trailer's limit
	for _, c := range []struct {
		size, n, block int
		old            bool
	}{
		{16, 0, tableBlockSmall, false},
		{16, 1, tableBlockSmall, false},
		{40, 3000, tableBlockSmall, false},
		{16, small - 200, tableBlockSmall, false},
		{16, small + 200, tableBlock, false},
		{400, 500, tableBlock, false},
		{40, 3000, tableBlock, true},
	} {
		smallTableBlocks = !c.old
		var recs [][]byte
		for i := range c.n {
			r := make([]byte, c.size)
			binary.LittleEndian.PutUint64(r, uint64(2*i))
			binary.LittleEndian.PutUint32(r[8:], uint32(i))
			recs = append(recs, r)
		}
		data := encodeTable(c.size, recs)
		smallTableBlocks = true
		name := fmt.Sprintf("t%d-%d-%v.tab", c.size, c.n, c.old)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := openTable(dir, name, FileSum{Size: int64(len(data))})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := tab.perBlk * c.size; got > c.block || got <= c.block-c.size {
			t.Errorf("%s: blocks of %d bytes, want %d", name, got, c.block)
		}
		if magic := string(data[len(data)-8:]); c.old != (magic == tableMagic3) {
			t.Errorf("%s: magic %q", name, magic)
		}
		for _, i := range []int{0, c.n / 3, c.n - 1} {
			if i < 0 {
				continue
			}
			if j, err := tab.search(uint64(2 * i)); err != nil || j != i {
				t.Errorf("%s: key %d at %d, %v; want %d", name, 2*i, j, err, i)
			}
		}
		if err := tab.verify(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		tab.close()
	}
}
