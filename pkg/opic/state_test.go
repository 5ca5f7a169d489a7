package opic

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fetchedAt(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func sampleState(t *testing.T) *State {
	t.Helper()
	s := New(0.85)
	s.Window = 720 * time.Hour
	applyBatch(s, Item{Kind: PageItem, URL: "http://a/"})
	applyBatch(s, Item{Kind: RecordItem, URL: "http://a/", Links: []string{"http://a/x", "http://b/", "http://a/"}, HasLinks: true,
		FetchedAt: fetchedAt("2026-11-01T00:00:00Z")})
	applyBatch(s, Item{Kind: RecordItem, URL: "http://b/", Links: []string{"http://a/", "http://c/"}, HasLinks: true,
		FetchedAt: fetchedAt("2026-11-02T00:00:00Z")})
	applyBatch(s, Item{Kind: EdgeItem, URL: "http://c/", Links: []string{"http://a/x"}})
	s.ShardI, s.ShardN = 1, 4
	return s
}

func TestStateRoundTrip(t *testing.T) {
	s := sampleState(t)
	if s.Len() != 4 || s.Edges() != 5 {
		t.Fatalf("sample state: %d pages, %d links, want 4 and 5", s.Len(), s.Edges())
	}
	data, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var u State
	if err := u.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if u.Len() != s.Len() || u.Edges() != s.Edges() || u.Damping != s.Damping || u.Window != s.Window ||
		u.ShardI != 1 || u.ShardN != 4 || u.Now != s.Now || u.Steps() != s.Steps() {
		t.Fatalf("decoded state differs: %+v", u)
	}
	for id := range uint32(s.Len()) {
		if s.Name(id) != u.Name(id) || s.Page(id) != u.Page(id) || !equalLinks(s.Links(id), u.Links(id)) {
			t.Errorf("page %d: %q %+v %v, want %q %+v %v", id, u.Name(id), u.Page(id), u.Links(id),
				s.Name(id), s.Page(id), s.Links(id))
		}
	}
	again, _ := u.MarshalBinary()
	if !bytes.Equal(again, data) {
		t.Error("re-encoding the decoded state gives other bytes")
	}
}

func equalLinks(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Every truncation, a flipped byte, another version and a foreign file are
// refused with a message saying which, never a panic or a partial state.
func TestStateDecodeErrors(t *testing.T) {
	data, _ := sampleState(t).MarshalBinary()
	for n := range len(data) {
		var u State
		err := u.UnmarshalBinary(data[:n])
		if err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
		if n >= len(stateMagic) && !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	for i := headerLen; i < len(data); i++ {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		var u State
		if err := u.UnmarshalBinary(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	v3 := bytes.Clone(data)
	v3[8] = 3
	var u State
	if err := u.UnmarshalBinary(v3); err == nil || !strings.Contains(err.Error(), "version 3") {
		t.Errorf("version 3: %v", err)
	}
	if err := u.UnmarshalBinary([]byte("url\tcash\nhttp://a/\t0.5\n")); !errors.Is(err, ErrNotState) {
		t.Errorf("a TSV file: %v", err)
	}
	if err := u.UnmarshalBinary(append(bytes.Clone(data), 0)); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Errorf("trailing byte: %v", err)
	}
}

func TestSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "crawl.opic")
	s := sampleState(t)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path)
	loaded, err := Load(path)
	if err != nil || loaded.Len() != s.Len() {
		t.Fatalf("Load: %v", err)
	}
	// A save that fails midway (the disk fails the fsync of the new
	// file) leaves the old state and no temporary file behind.
	s.AddPage([]byte("http://new/"))
	syncFile = func(f *os.File) error {
		if fi, err := f.Stat(); err != nil || fi.Size() == 0 {
			t.Errorf("the new state was not written before the sync: %v", err)
		}
		return errors.New("injected I/O error")
	}
	defer func() { syncFile = (*os.File).Sync }()
	if err := s.Save(path); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("Save with a failing sync: %v", err)
	}
	now, _ := os.ReadFile(path)
	if !bytes.Equal(now, old) {
		t.Error("a failed save changed the state file")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestLoadMissingAndForeign(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(dir, "x.json")
	os.WriteFile(p, []byte(`{"url":"http://a/"}`), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "x.json: not an opic state file") {
		t.Errorf("foreign file: %v", err)
	}
}

// Adaptive OPIC's interpolation, checked by hand on one page.
func TestWindowInterpolation(t *testing.T) {
	s := New(0.5)
	s.Window = 10 * time.Hour
	a := s.AddPage([]byte("a"))
	b := s.AddPage([]byte("b"))
	s.SetLinks(a, []uint32{b})
	s.SetLinks(b, []uint32{a})
	s.Settle() // each page has cash 1/2
	t0 := int64(1_000_000)
	s.Visit(a, t0) // unknown discovery: H = C
	if h := s.Page(a).History; !close(h, 0.5) {
		t.Fatalf("first visit: H %g, want 0.5", h)
	}
	// a gave 1/4 to b and 1/4 to the virtual page, which gave 1/8 to each.
	if c := s.Page(a).Cash; !close(c, 0.125) {
		t.Fatalf("cash after visit %g, want 0.125", c)
	}
	s.Visit(a, t0+4*3600) // S = 4h < T = 10h: H <- H(1 - S/T) + C
	if h, want := s.Page(a).History, 0.5*(1-0.4)+0.125; !close(h, want) {
		t.Errorf("S < T: H %g, want %g", h, want)
	}
	c := s.Page(a).Cash
	s.Visit(a, t0+4*3600+20*3600) // S = 20h >= T: H <- C*T/S
	if h, want := s.Page(a).History, c*10/20; !close(h, want) {
		t.Errorf("S >= T: H %g, want %g", h, want)
	}
	// Out of order: a time before the last visit counts as S = 0.
	h0, c0 := s.Page(a).History, s.Page(a).Cash
	s.Visit(a, t0)
	if h := s.Page(a).History; !close(h, h0+c0) {
		t.Errorf("S < 0: H %g, want %g", h, h0+c0)
	}
	// The total cash stays 1.
	if sum := s.Page(a).Cash + s.Page(b).Cash; !close(sum, 1) {
		t.Errorf("total cash %g, want 1", sum)
	}
}

func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.opic")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); err == nil || !strings.Contains(err.Error(), "being updated by another process") {
		t.Errorf("second lock: %v", err)
	}
	unlock()
	again, err := Lock(path)
	if err != nil {
		t.Errorf("lock after unlock: %v", err)
	} else {
		again()
	}
}

// A state written by the first format (sequential visits, cash not in
// quanta; made by the opic of commit 7a1b7b2 from the docs' example) still loads,
// takes a batch, and keeps a total cash of 1.
func TestVersion1StateTakesABatch(t *testing.T) {
	s, err := Load(filepath.Join("..", "..", "testdata", "opic", "v1.opic"))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := s.Lookup("http://x.test/a")
	if !ok || s.Len() != 5 || s.Page(a).Cash != 0.30386666666666673 {
		t.Fatalf("v1 state: %d pages, page a %+v", s.Len(), s.Page(a))
	}
	applyBatch(s, Item{Kind: RecordItem, URL: "http://x.test/a", HasLinks: true, Links: []string{"http://x.test/b"},
		FetchedAt: fetchedAt("2026-11-02T00:00:00Z")})
	total := s.virtCash
	for id := range uint32(s.Len()) {
		total += s.Page(id).Cash
	}
	if math.Abs(total-1) > 1e-12 {
		t.Errorf("total cash %v after a batch, want 1", total)
	}
	if p := s.Page(a); p.Visits != 1 || !close(p.History, 0.30386666666666673) {
		t.Errorf("page a after its visit: %+v", p)
	}
	data, _ := s.MarshalBinary()
	var u State
	if err := u.UnmarshalBinary(data); err != nil || binary.LittleEndian.Uint32(data[8:]) != stateVersion {
		t.Errorf("saved again: %v, version %d", err, binary.LittleEndian.Uint32(data[8:]))
	}
}
