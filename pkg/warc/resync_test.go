package warc

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// seen is what a pass over a damaged file read: the ids of the records
// whose blocks read whole and match their digest, and the skips reported.
type seen struct {
	ids   []string
	skips []*SkipError
}

func readDamaged(t *testing.T, src io.Reader) seen {
	t.Helper()
	r, err := NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	var s seen
	for i := 0; i < 10000; i++ {
		rec, err := r.Next()
		if err == io.EOF {
			return s
		}
		var se *SkipError
		if errors.As(err, &se) {
			s.skips = append(s.skips, se)
			continue
		}
		if err != nil {
			t.Fatalf("not a skip: %v", err)
		}
		b, err := io.ReadAll(rec.Body)
		if err == nil && Digest(b) == rec.Header.Get(FieldBlockDigest) {
			s.ids = append(s.ids, rec.ID())
		}
	}
	t.Fatal("no end")
	return s
}

// damagedFixture writes 40 records (the warcinfo, then resources of
// incompressible bodies of 1 to 6 KB) with the Writer and returns the
// file's bytes, each record's id and offset.
func damagedFixture(t *testing.T) ([]byte, []string, []int64) {
	t.Helper()
	w, err := Create(Options{Dir: t.TempDir(), Now: func() time.Time { return time.Unix(1e9, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 39; i++ {
		body := make([]byte, 1000+rnd.Intn(5000))
		rnd.Read(body)
		rec := &Record{Header: Header{{FieldType, TypeResource}, {FieldTargetURI, "http://a.test/" + string(rune('a'+i%26))}}, Body: bytes.NewReader(body)}
		if _, err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	path := w.Files()[0]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var offs []int64
	for _, rec := range readAll(t, path) {
		ids = append(ids, rec.ID())
		offs = append(offs, rec.Offset)
	}
	if len(ids) != 40 {
		t.Fatalf("%d records", len(ids))
	}
	return data, ids, offs
}

// plain returns the uncompressed form of a per-record gzip file and the
// offsets of its records in it.
func plain(t *testing.T, gz []byte) ([]byte, []int64) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plain.warc")
	os.WriteFile(path, text, 0o644)
	var offs []int64
	for _, rec := range readAll(t, path) {
		offs = append(offs, rec.Offset)
	}
	return text, offs
}

func cut(b []byte, from, n int) []byte {
	return append(append([]byte(nil), b[:from]...), b[from+n:]...)
}

// longer puts a 9 before the Content-Length of the record at off.
func longer(b []byte, off int64) []byte {
	i := int(off) + bytes.Index(b[off:], []byte("Content-Length: ")) + len("Content-Length: ")
	return append(append(append([]byte(nil), b[:i]...), '9'), b[i:]...)
}

func smash(b []byte, from, n int) []byte {
	out := append([]byte(nil), b...)
	for i := from; i < from+n; i++ {
		out[i] ^= 0x5a
	}
	return out
}

// A damaged record in the middle of a file costs that record only: every
// record after it is read, and the skip is reported at its offset.
func TestResyncAfterDamage(t *testing.T) {
	gz, ids, offs := damagedFixture(t)
	text, toffs := plain(t, gz)
	const k = 20 // the damaged record
	mid := func(offs []int64, size int) int { return int(offs[k] + (offs[k+1]-offs[k])/2) }
	cases := []struct {
		name   string
		data   []byte
		offset int64 // the reported damage; the next record must follow
		// seekOnly: a stream that cannot go back loses what the damaged
		// record's length swallowed (here, the rest of the file).
		seekOnly bool
	}{
		{"gzip: bytes cut from a member", cut(gz, mid(offs, len(gz)), 300), offs[k], false},
		{"gzip: bytes corrupted in a member", smash(gz, mid(offs, len(gz)), 40), offs[k], false},
		{"gzip: member header corrupted", smash(gz, int(offs[k]), 4), offs[k], false},
		{"warc: bytes cut from a block", cut(text, mid(toffs, len(text)), 300), -1, false},
		{"warc: version line corrupted", smash(text, int(toffs[k])+1, 3), toffs[k], false},
		{"warc: Content-Length made longer", longer(text, toffs[k]), toffs[k], true},
	}
	for _, c := range cases {
		for _, seek := range []bool{true, false} {
			if c.seekOnly && !seek {
				continue
			}
			var src io.Reader = bytes.NewReader(c.data)
			if !seek {
				src = struct{ io.Reader }{src} // a pipe, say: no rescanning
			}
			s := readDamaged(t, src)
			if len(s.skips) == 0 {
				t.Errorf("%s (seek %v): no skip reported", c.name, seek)
				continue
			}
			if c.offset >= 0 && s.skips[0].Offset != c.offset {
				t.Errorf("%s (seek %v): first skip %v, want at offset %d", c.name, seek, s.skips[0], c.offset)
			}
			// Before the damage: all read; after it: all read with a
			// seekable source, all but the one after the damaged one
			// (whose start may be in the damaged stretch) without.
			after := k + 1
			if !seek {
				after = k + 2
			}
			got := map[string]bool{}
			for _, id := range s.ids {
				got[id] = true
			}
			for i, id := range ids {
				if (i < k || i >= after) && !got[id] {
					t.Errorf("%s (seek %v): record %d of 40 lost (skips %v)", c.name, seek, i, s.skips)
					break
				}
			}
			if got[ids[k]] && c.name != "warc: bytes cut from a block" {
				t.Errorf("%s (seek %v): the damaged record read as good", c.name, seek)
			}
		}
	}
}

// The damage at the very end (a torn tail) is one skip and then io.EOF.
func TestResyncTornTail(t *testing.T) {
	gz, ids, offs := damagedFixture(t)
	s := readDamaged(t, bytes.NewReader(gz[:len(gz)-100]))
	if len(s.ids) != len(ids)-1 || len(s.skips) != 1 || s.skips[0].Offset != offs[len(offs)-1] || s.skips[0].Next != -1 {
		t.Errorf("read %d of %d, skips %v", len(s.ids), len(ids), s.skips)
	}
}
