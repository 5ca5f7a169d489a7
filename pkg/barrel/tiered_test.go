package barrel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPickMerge(t *testing.T) {
	p := mergePolicy{factor: 4, maxDocs: 1000, deletesPct: 20, floor: 10}
	// Ten segments under the cap, where 8 are allowed for 179 live
	// documents from a floor of 10: merges of even sizes bring them to 8.
	segs := []SegmentInfo{{ID: 1, Docs: 100}, {ID: 2, Docs: 9}, {ID: 3, Docs: 8}, {ID: 4, Docs: 6, Deleted: 1},
		{ID: 5, Docs: 7}, {ID: 6, Docs: 30}, {ID: 7, Docs: 5}, {ID: 8, Docs: 5}, {ID: 9, Docs: 4}, {ID: 10, Docs: 3}}
	if n := p.allowedSegments(179, 3); n != 8 {
		t.Errorf("allowedSegments(179) = %d, want 8 (4 of 10, then 139/40 rounded up)", n)
	}
	got := pickMerges(segs, p)
	if len(got) == 0 {
		t.Fatalf("no merge of 10 segments where %d are allowed", p.allowedSegments(179, 3))
	}
	for _, ids := range got {
		if slices.Contains(ids, 1) {
			t.Errorf("the largest segment (100, ten times the others) merged with small ones: %v", got)
		}
		if len(ids) < 2 || len(ids) > 4 {
			t.Errorf("merge of %d segments: %v", len(ids), got)
		}
	}
	if merged := len(segs) - countAfter(segs, got); len(segs)-merged > 8 {
		t.Errorf("%d segments left after %v, 8 allowed", len(segs)-merged, got)
	}
	// Few segments, no deletions: nothing to do.
	if got := pickMerges(segs[:4], p); got != nil {
		t.Errorf("pickMerges of 4 = %v", got)
	}
	// A merged segment stays under the cap: no merge makes more than 20
	// live documents, nor reads more than 20.
	capped := mergePolicy{factor: 4, maxDocs: 20, deletesPct: 20, floor: 1}
	for _, ids := range pickMerges(segs, capped) {
		live, docs := 0, 0
		for _, s := range segs {
			if slices.Contains(ids, s.ID) {
				live += s.Live()
				docs += s.Docs
			}
		}
		if live > 20 || docs > 20 {
			t.Errorf("merge %v of %d live documents, %d read, cap 20", ids, live, docs)
		}
	}
	// Deletions past 20% of the index: merges reclaim them, the segment
	// within the build's budget, until the share is under 20% again.
	heavy := []SegmentInfo{{ID: 1, Docs: 600, Deleted: 150}, {ID: 2, Docs: 300, Deleted: 150}, {ID: 3, Docs: 200, Deleted: 39}, {ID: 4, Docs: 50, Deleted: 10}}
	got = pickMerges(heavy, p)
	if len(got) == 0 {
		t.Errorf("no merge at 30%% deleted")
	}
	if d, n := deletedAfter(heavy, got); d*100 > 20*n {
		t.Errorf("after %v, %d of %d documents deleted", got, d, n)
	}
	if docs := readBy(heavy, got); docs > 1000 {
		t.Errorf("%v reads %d documents, budget 1000", got, docs)
	}
	// Under the allowed share, no merge for deletions alone.
	light := []SegmentInfo{{ID: 1, Docs: 600, Deleted: 100}, {ID: 2, Docs: 300, Deleted: 30}}
	if got := pickMerges(light, p); got != nil {
		t.Errorf("pickMerges at 14%% deleted = %v", got)
	}
	// A segment larger than the budget (made by one big batch) is
	// expunged alone, when nothing else is merged in that build.
	big := []SegmentInfo{{ID: 1, Docs: 5000, Deleted: 4990}, {ID: 2, Docs: 300, Deleted: 100}}
	if got := pickMerges(big, p); !slices.EqualFunc(got, [][]int{{2}}, slices.Equal) {
		t.Errorf("pickMerges with a too-large deleted-heavy segment = %v, want the one that fits first", got)
	}
	if got := pickMerges(big[:1], p); !slices.EqualFunc(got, [][]int{{1}}, slices.Equal) {
		t.Errorf("pickMerges of the too-large segment alone = %v", got)
	}
}

func countAfter(segs []SegmentInfo, picks [][]int) int {
	n := len(segs)
	for _, ids := range picks {
		n -= len(ids) - 1
	}
	return n
}

func readBy(segs []SegmentInfo, picks [][]int) int {
	n := 0
	for _, ids := range picks {
		for _, s := range segs {
			if slices.Contains(ids, s.ID) {
				n += s.Docs
			}
		}
	}
	return n
}

func deletedAfter(segs []SegmentInfo, picks [][]int) (deleted, docs int) {
	for _, s := range segs {
		docs += s.Docs
		deleted += s.Deleted
		for _, ids := range picks {
			if slices.Contains(ids, s.ID) {
				docs -= s.Deleted
				deleted -= s.Deleted
			}
		}
	}
	return deleted, docs
}

// simIndex is an index's segment list as batches and merges change it.
type simIndex struct {
	segs             []SegmentInfo
	next             int
	indexed, read    int // documents written by batches, and read by merges
	maxSegs, maxRead int
	maxDeletedPct    float64
}

// batch adds a segment of n documents, of which re-indexed documents
// delete their older copies, picked at random among the live ones.
func (x *simIndex) batch(rng *rand.Rand, n, reindexed int) {
	live := 0
	for _, s := range x.segs {
		live += s.Live()
	}
	reindexed = min(reindexed, live)
	for range reindexed {
		k := rng.IntN(live)
		for i := range x.segs {
			if k < x.segs[i].Live() {
				x.segs[i].Deleted++
				live--
				break
			}
			k -= x.segs[i].Live()
		}
	}
	x.segs = slices.DeleteFunc(x.segs, func(s SegmentInfo) bool { return s.Live() == 0 })
	x.next++
	x.segs = append(x.segs, SegmentInfo{ID: x.next, Docs: n, Batches: 1})
	x.indexed += n
}

// merge applies the policy's merges as Builder.merge does.
func (x *simIndex) merge(t *testing.T, p mergePolicy, turn int) {
	picks := pickMerges(x.segs, p)
	read := readBy(x.segs, picks)
	oversize := len(picks) == 1 && len(picks[0]) == 1 && read > p.maxDocs
	if read > p.maxDocs && !oversize {
		t.Fatalf("turn %d: merges %v read %d documents, budget %d", turn, picks, read, p.maxDocs)
	}
	x.read += read
	x.maxRead = max(x.maxRead, read)
	for _, ids := range picks {
		live, batches, pos := 0, 0, -1
		for i, s := range x.segs {
			if slices.Contains(ids, s.ID) {
				live += s.Live()
				batches += s.Batches
				pos = i
			}
		}
		if len(ids) > 1 && live > p.maxDocs {
			t.Fatalf("turn %d: merge %v makes a segment of %d live documents, cap %d", turn, ids, live, p.maxDocs)
		}
		x.next++
		x.segs[pos] = SegmentInfo{ID: x.next, Docs: live, Batches: batches}
		x.segs = slices.DeleteFunc(x.segs, func(s SegmentInfo) bool { return s.ID != x.next && slices.Contains(ids, s.ID) })
	}
	x.maxSegs = max(x.maxSegs, len(x.segs))
	docs, deleted := 0, 0
	for _, s := range x.segs {
		docs += s.Docs
		deleted += s.Deleted
	}
	x.maxDeletedPct = max(x.maxDeletedPct, 100*float64(deleted)/float64(max(1, docs)))
}

// TestTieredYear runs the merge policy over a simulated year of hourly
// batches (8,760), each a segment of 600 to 1,400 documents of which half
// or more re-index live documents (their old copies deleted, anywhere in
// the index): the segments stay few (allowed per tier, plus those at the
// cap), no build reads more than the budget in merges, the deleted share
// stays under the allowed one after every build, and each document is
// rewritten by merges a bounded number of times (write amplification).
func TestTieredYear(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    mergePolicy
	}{
		{"default", newPolicy(Options{})},
		{"cap20000", newPolicy(Options{MaxMergeDocs: 20000})},
		{"factor10", newPolicy(Options{MergeFactor: 10, DeletesPct: 33})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			rng := rand.New(rand.NewPCG(28, 2))
			x := &simIndex{}
			for turn := range 8760 {
				n := 600 + rng.IntN(800)
				x.batch(rng, n, n/2+rng.IntN(n/2))
				x.merge(t, p, turn)
				live, full := 0, 0
				for _, s := range x.segs {
					live += s.Live()
					if p.full(s) {
						full++
					}
				}
				// Tiers from the floor to the cap, factor segments each
				// (and one more per tier in flight), plus the segments
				// at the cap.
				tiers := int(math.Ceil(math.Log(float64(p.maxDocs)/float64(p.floor))/math.Log(float64(p.factor)))) + 1
				if bound := full + (p.factor+1)*tiers; len(x.segs) > bound {
					t.Fatalf("turn %d: %d segments (%d at the cap), bound %d: %+v", turn, len(x.segs), full, bound, x.segs)
				}
				if full > 2*live/p.maxDocs+1 {
					t.Fatalf("turn %d: %d segments at the cap for %d live documents", turn, full, live)
				}
			}
			if x.maxDeletedPct > float64(p.deletesPct) {
				t.Errorf("deleted share reached %.1f%%, allowed %d%%", x.maxDeletedPct, p.deletesPct)
			}
			wa := float64(x.indexed+x.read) / float64(x.indexed)
			live := 0
			for _, s := range x.segs {
				live += s.Live()
			}
			t.Logf("%s: %d segments at the end (%d live documents), at most %d; merges read %d documents at most in a build; write amplification %.2f; deleted share at most %.1f%%",
				tc.name, len(x.segs), live, x.maxSegs, x.maxRead, wa, x.maxDeletedPct)
			if wa > 8 {
				t.Errorf("write amplification %.2f", wa)
			}
		})
	}
}
