package barrel

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// segmentFiles returns the names of dir's files of segment id, but its
// deletion list.
func segmentFiles(t *testing.T, dir string, id int) []string {
	t.Helper()
	var names []string
	for _, ext := range segFiles {
		if _, err := os.Stat(filepath.Join(dir, segName(id, ext))); err == nil {
			names = append(names, ext)
		}
	}
	return names
}

// A format 10 index (four files a segment) opens as it is; its next batch
// makes it format 11, writing its new segment as one compound file while
// the older segments keep their four files, and answers as the same
// batches built at format 11; a merge rewrites every segment as a
// compound file and removes the four files.
func TestFormat10Index(t *testing.T) {
	dir := t.TempDir()
	fourFiles(t)
	build(t, dir, Options{}, sumsPages(0, 200))
	build(t, dir, Options{}, sumsPages(200, 100))
	compoundSegments = true
	asFormat(t, dir, formatBlockSums)
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := m.Segments
	for _, si := range old {
		if got := segmentFiles(t, dir, si.ID); !slices.Equal(got, []string{"inv", "ptrs", "docs", "sums"}) {
			t.Fatalf("format 10 segment %d: files %v", si.ID, got)
		}
	}
	idx := open(t, dir)
	before := resultURLs(t, idx, "uniq250x filler3", 10)
	if len(before) == 0 || idx.Manifest().Format != formatBlockSums {
		t.Fatalf("format %d, results %v", idx.Manifest().Format, before)
	}
	idx.Close()

	build(t, dir, Options{}, sumsPages(300, 10))
	m, err = readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Format != formatNumber {
		t.Errorf("after a batch: format %d, want %d", m.Format, formatNumber)
	}
	for _, si := range m.Segments {
		want := []string{"seg"}
		if slices.ContainsFunc(old, func(o SegmentInfo) bool { return o.ID == si.ID }) {
			want = []string{"inv", "ptrs", "docs", "sums"}
		}
		if got := segmentFiles(t, dir, si.ID); !slices.Equal(got, want) {
			t.Errorf("segment %d: files %v, want %v", si.ID, got, want)
		}
	}
	fresh := t.TempDir()
	build(t, fresh, Options{}, sumsPages(0, 200))
	build(t, fresh, Options{}, sumsPages(200, 100))
	build(t, fresh, Options{}, sumsPages(300, 10))
	idx = open(t, dir)
	want := open(t, fresh)
	for _, q := range []string{"uniq250x filler3", "uniq305x", "filler7 word3", "page"} {
		if got, w := resultURLs(t, idx, q, 10), resultURLs(t, want, q, 10); !slices.Equal(got, w) || len(got) == 0 {
			t.Errorf("%q: mixed segments answer %q, compound ones %q", q, got, w)
		}
	}
	if err := idx.Verify(); err != nil {
		t.Error(err)
	}
	if a, b := idx.DocIndexBytes(), want.DocIndexBytes(); a != b || a == 0 {
		t.Errorf("document index: %d bytes in four files, %d in compound files", a, b)
	}
	idx.Close()
	want.Close()

	if _, err := ForceMerge(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	m, err = readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Segments) != 1 || !slices.Equal(segmentFiles(t, dir, m.Segments[0].ID), []string{"seg"}) {
		t.Fatalf("after the merge: %+v", m.Segments)
	}
	for _, si := range old {
		if got := segmentFiles(t, dir, si.ID); len(got) > 0 {
			t.Errorf("segment %d merged away, its files %v left", si.ID, got)
		}
	}
	idx = open(t, dir)
	defer idx.Close()
	if after := resultURLs(t, idx, "uniq250x filler3", 10); !slices.Equal(after, before) {
		t.Errorf("after the merge %q, before %q", after, before)
	}
	if err := idx.Verify(); err != nil {
		t.Error(err)
	}
}

// A compound file's footer is checked: damaged, cut, or with its parts
// out of order, the open fails naming the file.
func TestCompoundFooter(t *testing.T) {
	p := compoundParts{ptrs: 100, docs: 150, sums: 300, end: 340}
	file := append(make([]byte, p.end), encodeCompoundFooter(p)...)
	if got, err := parseCompound(file, "seg-000001.seg"); err != nil || got != p {
		t.Fatalf("parts %+v, %v; want %+v", got, err, p)
	}
	flipped := slices.Clone(file)
	flipped[len(flipped)-compoundFooter+9] ^= 1
	swapped := append(make([]byte, p.end), encodeCompoundFooter(compoundParts{ptrs: 150, docs: 100, sums: 300, end: 340})...)
	short := append(make([]byte, p.end), encodeCompoundFooter(compoundParts{ptrs: 100, docs: 150, sums: 300, end: 339})...)
	for _, c := range []struct {
		what string
		b    []byte
		msg  string
	}{
		{"a bit flipped in the offsets", flipped, "footer checksum mismatch"},
		{"cut", file[:len(file)-1], "bad footer"},
		{"empty", nil, "bad footer"},
		{"parts out of order", swapped, "parts out of order"},
		{"parts short of the footer", short, "parts out of order"},
		{"bytes after the footer", append(slices.Clone(file), 0), "bad footer"},
	} {
		_, err := parseCompound(c.b, "seg-000001.seg")
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "seg-000001.seg: "+c.msg) {
			t.Errorf("%s: %v", c.what, err)
		}
	}
}

// A new segment is one file besides its deletion list: the commit and the
// merges write no other.
func TestCompoundSegmentsOnly(t *testing.T) {
	dir := t.TempDir()
	for k := range 4 {
		build(t, dir, Options{}, sumsPages(50*k, 50))
	}
	if _, err := ForceMerge(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	changed := sumsPages(10, 20) // pages changed: deletions in the merged segment
	for u, p := range changed {
		changed[u] = strings.Replace(p, "</p>", " changed</p>", 1)
	}
	build(t, dir, Options{}, changed)
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Segments) != 2 || m.Segments[0].Del == "" {
		t.Fatalf("segments %+v: want the merged one with deletions and the batch's", m.Segments)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), segPrefix) {
			segs = append(segs, e.Name())
		}
	}
	want := []string{segName(m.Segments[0].ID, "seg"), diskName(m.Segments[0].Del, m.Generation), segName(m.Segments[1].ID, "seg")}
	slices.Sort(want)
	if !slices.Equal(segs, want) {
		t.Errorf("segment files %q, want %q", segs, want)
	}
}

// A reader open across a merge that deletes its segments' files still
// answers from format 11 segments, each mapped whole when the index
// opened; a format 10 segment's lists, mapped for the first query that
// reads them, are reported missing, naming the file.
func TestReaderAcrossMerge(t *testing.T) {
	t.Cleanup(func() { compoundSegments = true })
	for _, four := range []bool{false, true} {
		dir := t.TempDir()
		compoundSegments = !four
		build(t, dir, Options{}, sumsPages(0, 100))
		build(t, dir, Options{}, sumsPages(100, 100))
		compoundSegments = true
		idx := open(t, dir)
		if _, err := ForceMerge(dir, Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(idx.segs[0].path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the merged-away segment's file is still there: %v", err)
		}
		r, err := idx.Search("uniq150x", SearchOptions{N: 5, NoSnippets: true})
		switch {
		case four && (err == nil || !strings.Contains(err.Error(), ".inv")):
			t.Errorf("four files: %v, %v", r, err)
		case !four && (err != nil || len(r.Results) != 1 || r.Results[0].URL != "http://s.test/p150.html"):
			t.Errorf("compound: %v, %v", r, err)
		}
		idx.Close()
	}
}

// tableMagics counts dir's .tab files by the magic that ends them.
func tableMagics(t *testing.T, dir string) map[string]int {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.tab"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		got[strings.TrimRight(string(b[len(b)-8:]), "\n\x00")]++
	}
	return got
}

// A format 11 index (every table in blocks of 4 KiB, no block size in
// their footers) opens as it is; its next batch makes it the current
// format, writing its new tables with their block size while the older
// ones are read as they are, and answers as the same batches built at the
// current format.
func TestFormat11Index(t *testing.T) {
	dir := t.TempDir()
	smallTableBlocks = false
	t.Cleanup(func() { smallTableBlocks = true })
	build(t, dir, Options{}, sumsPages(0, 200))
	build(t, dir, Options{}, sumsPages(200, 100))
	smallTableBlocks = true
	asFormat(t, dir, formatBigTableBlock)
	if got := tableMagics(t, dir); got["BTAB3"] == 0 || got["BTAB4"] != 0 {
		t.Fatalf("format 11 tables: %v", got)
	}
	idx := open(t, dir)
	before := resultURLs(t, idx, "uniq250x filler3", 10)
	if len(before) == 0 || idx.Manifest().Format != formatBigTableBlock {
		t.Fatalf("format %d, results %v", idx.Manifest().Format, before)
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	idx.Close()

	build(t, dir, Options{}, sumsPages(300, 10))
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Format != formatNumber {
		t.Errorf("after a batch: format %d, want %d", m.Format, formatNumber)
	}
	if got := tableMagics(t, dir); got["BTAB3"] == 0 || got["BTAB4"] == 0 {
		t.Errorf("after a batch, old and new tables: %v", got)
	}
	fresh := t.TempDir()
	build(t, fresh, Options{}, sumsPages(0, 200))
	build(t, fresh, Options{}, sumsPages(200, 100))
	build(t, fresh, Options{}, sumsPages(300, 10))
	idx = open(t, dir)
	defer idx.Close()
	want := open(t, fresh)
	defer want.Close()
	for _, q := range []string{"uniq250x filler3", "uniq305x", "filler7 word3", "page"} {
		if got, w := resultURLs(t, idx, q, 10), resultURLs(t, want, q, 10); !slices.Equal(got, w) || len(got) == 0 {
			t.Errorf("%q: mixed tables answer %q, new ones %q", q, got, w)
		}
	}
	for _, x := range []*Index{idx, want} {
		if err := x.Verify(); err != nil {
			t.Error(err)
		}
	}
}
