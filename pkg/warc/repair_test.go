package warc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeExchanges writes n request/response pairs and returns the file and
// the offset of each record.
func writeExchanges(t *testing.T, n int) (string, []int64) {
	t.Helper()
	w, err := Create(Options{Dir: t.TempDir(), Prefix: "t", Now: func() time.Time { return time.Unix(1e9, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for i := 0; i < n; i++ {
		locs, err := w.Write(exchange("http://a.test/"+strings.Repeat("x", i), strings.Repeat("body ", 50*i+1))...)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			offs = append(offs, l.Offset)
		}
	}
	files := w.Files()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return files[0], offs
}

func TestCutTornTail(t *testing.T) {
	path, offs := writeExchanges(t, 4)
	full, _ := os.ReadFile(path)
	whole := len(readAll(t, path))
	// Cut the file at every byte of its last two records: the repair keeps
	// exactly the records that were whole.
	for cut := int(offs[len(offs)-2]) + 1; cut < len(full); cut += 7 {
		torn := filepath.Join(t.TempDir(), "torn.warc.gz")
		os.WriteFile(torn, full[:cut], 0o644)
		n, err := CutTornTail(torn)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		st, _ := os.Stat(torn)
		// A cut inside the last record leaves the records before it; a cut
		// exactly at its start leaves a whole file (the record lengths, and
		// so whether a cut falls there, change with the random record IDs).
		wantSize := offs[len(offs)-1]
		if int64(cut) < offs[len(offs)-1] {
			wantSize = offs[len(offs)-2]
		}
		if st.Size() != wantSize || n != int64(cut)-wantSize {
			t.Fatalf("cut at %d: size %d after cutting %d bytes, want %d", cut, st.Size(), n, wantSize)
		}
		if got := len(readAll(t, torn)); got >= whole {
			t.Fatalf("cut at %d: %d records of %d", cut, got, whole)
		}
	}
	// A whole file is left as it is.
	if n, err := CutTornTail(path); n != 0 || err != nil {
		t.Fatalf("whole file: cut %d, %v", n, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(full) {
		t.Fatal("a whole file was changed")
	}
}

func TestCutTornTailLeavesDamageInside(t *testing.T) {
	path, offs := writeExchanges(t, 4)
	data, _ := os.ReadFile(path)
	// Damage the second record's compressed data: good records follow.
	data[offs[1]+20] ^= 0xff
	data[offs[1]+21] ^= 0xff
	os.WriteFile(path, data, 0o644)
	if _, err := CutTornTail(path); err == nil || !strings.Contains(err.Error(), "not a torn tail") {
		t.Fatalf("damage inside: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Fatal("a file damaged inside was changed")
	}
}
