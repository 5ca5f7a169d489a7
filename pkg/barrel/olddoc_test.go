package barrel

import (
	"math"
	"testing"

	"github.com/sekitei/crawlkit/internal/crawlsim"
)

// TestOldDocFindsTheNewest checks that oldDoc, asking the largest segments
// first, finds for every document the entry and segment the newest segment
// holding it has, on an index of many segments whose documents were
// re-indexed (changed pages, new anchors) batch after batch: by its
// segments' live bitsets, and by searches, largest segment first.
func TestOldDocFindsTheNewest(t *testing.T) {
	defer func(n int) { liveBitsAfter = n }(liveBitsAfter)
	dir := t.TempDir()
	cfg := crawlsim.Default()
	cfg.Hosts, cfg.NewPerTurn, cfg.RecrawlPerTurn, cfg.Links = 20, 40, 30, 8
	var segs int
	for turn := range 30 {
		b, err := NewBuilder(dir, Options{MergeFactor: 64, DeletesPct: 100, AnchorGrowth: -1})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range cfg.Turn(turn) {
			if err := b.Add(f.URL, f.Body()); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		segs = b.Stats.Segments
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, after := range []int{0, math.MaxInt} {
		liveBitsAfter = after
		checkOldDoc(t, dir, segs)
	}
}

func checkOldDoc(t *testing.T, dir string, segs int) {
	b, err := NewBuilder(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if segs < 10 || len(b.old.segs) != segs {
		t.Fatalf("%d segments (the last batch says %d), want 10 or more", len(b.old.segs), segs)
	}
	largest := 0
	for i, s := range b.old.segs {
		if s.dt.count > b.old.segs[largest].dt.count {
			largest = i
		}
	}
	notLargest, deletedSkipped := 0, 0
	for d := range b.old.m.Docs {
		var want DocEntry
		wantSeg := -1
		for i := len(b.old.segs) - 1; i >= 0 && wantSeg < 0; i-- {
			e, ok, err := b.old.segs[i].entry(d)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				want, wantSeg = e, i
				if want.Rank, err = b.old.rank(d); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, seg, ok, err := b.oldDoc(d)
		if err != nil || !ok || seg != wantSeg || got != want {
			t.Fatalf("doc %d: oldDoc gives segment %d %+v (%v, %v), the newest holding it is %d %+v", d, seg, got, ok, err, wantSeg, want)
		}
		if seg != largest {
			notLargest++
		}
		if b.old.segs[largest].del.has(d) {
			deletedSkipped++
		}
	}
	// The order and the deletions were both exercised.
	if notLargest == 0 || deletedSkipped == 0 {
		t.Fatalf("of %d documents, %d not in the largest segment and %d deleted from it: want some of each", b.old.m.Docs, notLargest, deletedSkipped)
	}
	t.Logf("live bitsets after %d: %d documents in %d segments: %d not in the largest, %d deleted from it", liveBitsAfter, b.old.m.Docs, len(b.old.segs), notLargest, deletedSkipped)
}
