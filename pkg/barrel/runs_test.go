package barrel

import (
	"encoding/binary"
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
		n := 1 + int(k%7)*60 // keys repeated past a block (256 records)
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
	if tab.count != len(recs) || tab.blocks < 10 {
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
	bad[5*tableBlock+100] ^= 1
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
