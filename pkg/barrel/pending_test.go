package barrel

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// Pending anchors come back in the order added, byte for byte, with text
// cut at 65,535 bytes as the anchors file cuts it; close drops the file.
func TestPendingAnchors(t *testing.T) {
	p := pendingAnchors{path: filepath.Join(t.TempDir(), "anchors.pending")}
	type anchor struct {
		from      uint32
		off       uint64
		url, text string
	}
	var want []anchor
	for i := range 5000 {
		a := anchor{uint32(i), uint64(i) << 33, fmt.Sprintf("http://h%d.test/p?q=%d", i%7, i), strings.Repeat("\xffé", i%5)}
		if i == 4321 {
			a.text = strings.Repeat("x", math.MaxUint16+10)
		}
		if err := p.add(a.from, a.off, a.url, a.text); err != nil {
			t.Fatal(err)
		}
		if len(a.text) > math.MaxUint16 {
			a.text = a.text[:math.MaxUint16]
		}
		want = append(want, a)
	}
	for pass := range 2 { // read twice, as resolveAnchors does
		i := 0
		if err := p.each(func(from uint32, off uint64, u, text []byte) error {
			if got := (anchor{from, off, string(u), string(text)}); got != want[i] {
				return fmt.Errorf("pass %d, anchor %d: %+v, want %+v", pass, i, got, want[i])
			}
			i++
			return nil
		}); err != nil || i != len(want) {
			t.Fatalf("%v (%d of %d anchors)", err, i, len(want))
		}
	}
	p.close()
	if err := p.each(func(uint32, uint64, []byte, []byte) error { return fmt.Errorf("an anchor after close") }); err != nil {
		t.Fatal(err)
	}
}

// The anchor reader, by pread or mapped, reads a record at its offset,
// whatever its length, and a damaged or cut record is reported at its
// offset in the anchors file.
func TestAnchorReader(t *testing.T) {
	for _, mapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("mapped=%v", mapped), func(t *testing.T) { testAnchorReader(t, mapped, false) })
	}
	t.Run("prefetched", func(t *testing.T) { testAnchorReader(t, false, true) })
}

// testAnchorReader reads records whole, long, damaged and cut short; with
// prefetched, after prefetch has read the short ones from the page cache
// (the file was just written) and advised the kernel of the others.
func testAnchorReader(t *testing.T, mapped, prefetched bool) {
	path := filepath.Join(t.TempDir(), "anchors")
	long := strings.Repeat("y", 1000) // longer than the first read
	rec := appendAnchor(nil, 1, 7, 11, "first")
	second := uint64(len(rec))
	rec = appendAnchor(rec, 2, 8, 22, long)
	third := uint64(len(rec))
	rec = appendAnchor(rec, 3, 9, 33, "damaged")
	rec[len(rec)-1] ^= 1
	fourth := uint64(len(rec))
	rec = appendAnchor(rec, 4, 10, 44, "cut short")
	rec = rec[:len(rec)-3]
	if err := os.WriteFile(path, rec, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := openAnchorReader(path, int64(len(rec)), mapped)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if mapped != (r.data != nil) {
		t.Fatalf("mapped %v, but the reader's mapping is %d bytes", mapped, len(r.data))
	}
	if prefetched {
		r.prefetch([]uint64{0, second, third, fourth})
		// The long record and the one cut short are not whole in a
		// typical record's bytes: they are read when asked for.
		if _, ok := r.early[0]; !ok || len(r.early) != 2 {
			t.Fatalf("prefetch read records %v, want those at 0 and %d", r.early, third)
		}
		if _, ok := r.early[third]; !ok {
			t.Fatalf("prefetch read records %v, want those at 0 and %d", r.early, third)
		}
	}
	if _, _, _, err := r.at(fourth, 10); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("truncated record at %d", fourth)) {
		t.Errorf("a record cut short: %v, want its offset %d named", err, fourth)
	}
	if from, off, text, err := r.at(second, 8); err != nil || from != 2 || off != 22 || string(text) != long {
		t.Errorf("second record: %d %d %d bytes, %v", from, off, len(text), err)
	}
	if from, _, text, err := r.at(0, 7); err != nil || from != 1 || string(text) != "first" {
		t.Errorf("first record: %d %q, %v", from, text, err)
	}
	if _, _, _, err := r.at(0, 8); err == nil || !strings.Contains(err.Error(), "points to doc 7") {
		t.Errorf("a record of another target: %v", err)
	}
	if _, _, _, err := r.at(third, 9); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("checksum mismatch at %d", third)) {
		t.Errorf("a damaged record: %v, want its offset %d named", err, third)
	}
}

// The anchor pass reads targets ahead of the committer in chunks; whatever
// the chunk size, two batches (the second re-indexing older targets and
// changing a page) write the same files.
func TestAnchorChunks(t *testing.T) {
	site := synth.New(1200, 5000, 1)
	build := func(chunk int) map[string]FileSum {
		defer func(n int) { targetsPerChunk = n }(targetsPerChunk)
		targetsPerChunk = chunk
		dir := t.TempDir()
		for k := range 2 {
			bl, err := NewBuilder(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := k * 600; i < (k+1)*600; i++ {
				if err := bl.Add(site.URL(i), site.Page(i)); err != nil {
					t.Fatal(err)
				}
			}
			if k == 1 {
				bl.Add(site.URL(5), append(site.Page(5), "<p>changed</p>"...))
			}
			if err := bl.Commit(); err != nil {
				t.Fatal(err)
			}
			if k == 1 && (bl.Stats.Targets == 0 || bl.Stats.AnchorsRead == 0) {
				t.Fatalf("batch 2 re-indexed %d targets, read %d anchors", bl.Stats.Targets, bl.Stats.AnchorsRead)
			}
			bl.Close()
		}
		return open(t, dir).Manifest().Files
	}
	want := build(256)
	for _, chunk := range []int{1, 7} {
		got := build(chunk)
		for name, sum := range want {
			if got[name] != sum {
				t.Errorf("chunks of %d targets: %s differs: %+v vs %+v", chunk, name, got[name], sum)
			}
		}
	}
}

// The anchor pass's reader sends each target's anchors in file order, a
// chunk of targets at a time, with their tokens; a damaged record ends it
// with the error, and closing stop ends it early: either way it closes its
// channel.
func TestReadAnchors(t *testing.T) {
	defer func(n int) { targetsPerChunk = n }(targetsPerChunk)
	targetsPerChunk = 2
	path := filepath.Join(t.TempDir(), "anchors")
	var file []byte
	b := &Builder{}
	add := func(from, to uint32, text string) {
		b.newAnc = append(b.newAnc, [2]uint64{uint64(to)<<32 | uint64(from), uint64(len(file))})
		file = appendAnchor(file, from, to, 100+uint64(from), text)
	}
	add(7, 1, "Blue Whales")
	add(8, 2, "krill")
	add(9, 1, "ocean")
	add(7, 3, "deep sea")
	damaged := len(file) - 1
	slices.SortFunc(b.newAnc, cmpRec)
	targets := slices.Values([]uint32{1, 2, 3})
	read := func(stop chan struct{}) []*anchorChunk {
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := openAnchorReader(path, int64(len(file)), false)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
		var got []*anchorChunk
		for c := range b.readAnchors(targets, r, stop) {
			got = append(got, c)
		}
		return got
	}

	got := read(make(chan struct{}))
	if len(got) != 2 || len(got[0].targets) != 2 || len(got[1].targets) != 1 || got[1].err != nil {
		t.Fatalf("chunks: %+v", got)
	}
	c := got[0]
	var texts []string
	a, k := 0, 0
	for _, ct := range c.targets {
		for _, ra := range c.anchors[a:ct.end] {
			var words []string
			for _, tok := range c.toks[k:ra.end] {
				words = append(words, string(c.term(tok)))
			}
			k = ra.end
			texts = append(texts, fmt.Sprintf("%d<-%d@%d %v", ct.to, ra.from, ra.fromOff, words))
		}
		a = ct.end
	}
	want := []string{"1<-7@107 [blue whale]", "1<-9@109 [ocean]", "2<-8@108 [krill]"}
	if !slices.Equal(texts, want) {
		t.Errorf("first chunk: %q, want %q", texts, want)
	}

	file[damaged] ^= 1
	got = read(make(chan struct{}))
	if last := got[len(got)-1]; last.err == nil || !strings.Contains(last.err.Error(), "checksum") {
		t.Errorf("a damaged record: chunks %+v, want the last to carry its error", got)
	}

	stop := make(chan struct{})
	close(stop)
	if got := read(stop); len(got) != 0 {
		t.Errorf("stopped before reading: %d chunks", len(got))
	}
}
