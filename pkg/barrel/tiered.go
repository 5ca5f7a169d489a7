package barrel

import (
	"math"
	"slices"
)

// DefaultMergeFactor is how many segments one merge takes at most, and how
// many segments of about one size a tier holds before they are merged.
const DefaultMergeFactor = 4

// DefaultMaxMergeDocs bounds the documents one build reads in merges, and
// the live documents of a segment a merge makes (see pickMerges).
const DefaultMaxMergeDocs = 1 << 18

// DefaultDeletesPct is the share (percent) of the index's documents that
// may be deleted before merges start reclaiming them.
const DefaultDeletesPct = 20

// DefaultFloorDocs is the size below which segments count as that size in
// the merge policy: tiny batches are merged as if they were this large.
const DefaultFloorDocs = 1000

// sizeClass is the logarithmic size class of count records (the runs'
// merge policy, pickRunMerge).
func sizeClass(count, factor int) int {
	c := 0
	for n := max(1, count); n >= factor; n /= factor {
		c++
	}
	return c
}

// mergePolicy is the tiered merge policy's settings.
type mergePolicy struct {
	factor     int // segments merged at once, and segments per tier
	maxDocs    int // documents read in merges per build; live documents of a merged segment
	deletesPct int // deleted share of the index allowed, percent
	floor      int // segments smaller than this count as this size
}

func (b *Builder) policy() mergePolicy {
	return newPolicy(b.opts)
}

func newPolicy(o Options) mergePolicy {
	p := mergePolicy{o.MergeFactor, o.MaxMergeDocs, o.DeletesPct, o.FloorDocs}
	if p.factor < 2 {
		p.factor = DefaultMergeFactor
	}
	if p.maxDocs <= 0 {
		p.maxDocs = DefaultMaxMergeDocs
	}
	if p.deletesPct <= 0 || p.deletesPct > 100 {
		p.deletesPct = DefaultDeletesPct
	}
	if p.floor <= 0 {
		p.floor = DefaultFloorDocs
	}
	p.floor = min(p.floor, max(1, p.maxDocs/2))
	return p
}

// full reports whether s is at the size cap: more than half of a merged
// segment's largest live documents, or more documents than one build may
// read. Such a segment is merged only to reclaim its deleted documents.
func (p mergePolicy) full(s SegmentInfo) bool {
	return 2*s.Live() > p.maxDocs || s.Docs > p.maxDocs
}

// allowedSegments is how many segments an index of live documents may
// hold below the cap (TieredMergePolicy's allowed segment count): factor
// segments of the floor size (or of the smallest segment), factor of
// factor times that, and so on up to the cap, whose segments count as
// many as they are.
func (p mergePolicy) allowedSegments(live, smallest int) int {
	level := float64(max(smallest, p.floor))
	left := float64(live)
	allowed := 0.0
	for {
		n := left / level
		if n < float64(p.factor) || level >= float64(p.maxDocs) {
			allowed += math.Ceil(n)
			break
		}
		allowed += float64(p.factor)
		left -= float64(p.factor) * level
		level = min(float64(p.maxDocs), level*float64(p.factor))
	}
	return max(int(allowed), p.factor)
}

// pickMerges is the merge policy, tiered as Lucene's TieredMergePolicy
// (Michael McCandless, 2010):
//
//   - the segments below the cap (see full), by live documents, largest
//     first, may number allowedSegments: about factor per tier, the tiers
//     growing by powers of factor from the floor size, so their number is
//     O(factor × log(n / floor)). While there are more, merges are chosen
//     among runs of up to factor segments of neighbouring sizes, the one
//     of the best score first: the most even sizes (the largest segment's
//     share of the merge, sizes below the floor counted as the floor), the
//     smallest result, and the most deleted documents reclaimed (the
//     share kept, squared), so a merge of segments with many deletions is
//     preferred, and old deletions are reclaimed on the way;
//   - while more than deletesPct percent of the index's documents are
//     deleted, merges reclaiming deletions are chosen by the same score,
//     a segment at the cap merged alone, so that deletions are reclaimed a
//     little at a time as they accrue, never by one rewrite of the index;
//   - one build reads at most maxDocs documents in merges (deleted ones
//     included), and no merge makes a segment of more than maxDocs live
//     documents: a turn's merge work is bounded, and what does not fit
//     waits for a later build. Above the cap segments are not merged with
//     others, so their number grows as n / maxDocs;
//   - a segment of more than maxDocs documents (one batch of more pages
//     and link targets than that makes one) cannot fit a build's merges:
//     once the index is past deletesPct and the segment itself too, it is
//     merged alone, as the only merge of a build that has no other.
//
// It returns the merges as lists of segment IDs.
func pickMerges(segs []SegmentInfo, p mergePolicy) [][]int {
	budget := p.maxDocs
	var docs, deleted int
	var elig []SegmentInfo
	live, smallest := 0, math.MaxInt
	for _, s := range segs {
		docs += s.Docs
		deleted += s.Deleted
		if s.Docs > p.maxDocs {
			continue // cannot be read in one build's merges
		}
		elig = append(elig, s)
		if !p.full(s) {
			live += s.Live()
			smallest = min(smallest, s.Live())
		}
	}
	// Largest first; of one size, the oldest first.
	slices.SortStableFunc(elig, func(a, b SegmentInfo) int { return b.Live() - a.Live() })
	count := 0
	for _, s := range elig {
		if !p.full(s) {
			count++
		}
	}
	allowed := p.allowedSegments(live, smallest)
	tooDeleted := func() bool { return deleted*100 > p.deletesPct*docs }
	var out [][]int
	for count > allowed || tooDeleted() {
		var best []int
		bestScore, bestDocs, bestDel, bestBelow, bestAfter := math.Inf(1), 0, 0, 0, 0
		for i := range elig {
			var ids []int
			n, after, largest, floored, del, below := 0, 0, 0, 0, 0, 0
			hitMax := false
			for j := i; j < len(elig) && len(ids) < p.factor; j++ {
				s := elig[j]
				if n+s.Docs > budget || after+s.Live() > p.maxDocs || (len(ids) > 0 && p.full(s)) {
					hitMax = true
					continue
				}
				if len(ids) == 0 && p.full(s) {
					ids = append(ids, s.ID) // at the cap: merged alone, for its deletions
					n, after, del, hitMax = s.Docs, s.Live(), s.Deleted, true
					break
				}
				ids = append(ids, s.ID)
				n += s.Docs
				after += s.Live()
				del += s.Deleted
				f := max(p.floor, s.Live())
				floored += f
				largest = max(largest, f)
				below++
			}
			if len(ids) == 0 || len(ids) == 1 && del == 0 {
				continue // a merge of one segment without deletions does nothing
			}
			if count <= allowed && del == 0 {
				continue // only deletions are due
			}
			if len(ids) == 1 && !tooDeleted() {
				continue // only the count is due: a merge must take several
			}
			skew := 1 / float64(p.factor) // a merge at the cap counts as even
			if !hitMax && floored > 0 {
				skew = float64(largest) / float64(floored)
			}
			keep := float64(after) / float64(max(1, n))
			score := skew * math.Pow(float64(max(1, after)), 0.05) * keep * keep
			if score < bestScore {
				best, bestScore, bestDocs, bestDel, bestBelow, bestAfter = ids, score, n, del, below, after
			}
		}
		if best == nil {
			break
		}
		out = append(out, best)
		budget -= bestDocs
		deleted -= bestDel
		docs -= bestDel
		if count -= bestBelow; bestBelow > 0 && 2*bestAfter <= p.maxDocs {
			count++ // the merged segment, below the cap
		}
		elig = slices.DeleteFunc(elig, func(s SegmentInfo) bool { return slices.Contains(best, s.ID) })
	}
	if len(out) == 0 && tooDeleted() {
		// A segment too large for a build's merges, expunged alone.
		var heavy *SegmentInfo
		for i, s := range segs {
			if s.Docs > p.maxDocs && s.Deleted*100 >= p.deletesPct*s.Docs &&
				(heavy == nil || s.Deleted*heavy.Docs > heavy.Deleted*s.Docs) {
				heavy = &segs[i]
			}
		}
		if heavy != nil {
			out = append(out, []int{heavy.ID})
		}
	}
	return out
}
