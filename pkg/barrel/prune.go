package barrel

import (
	"math"
	"sync/atomic"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
)

// Dynamic pruning of the first ranking stage. Once the scan holds as many
// candidates as it keeps, a match is fully scored (every hit of every
// word decoded) only if an upper bound of its score could beat the worst
// kept candidate, as MaxScore and WAND skip documents that cannot enter
// the top k ("Query evaluation: strategies and optimizations", Turtle and
// Flood, 1995; "Efficient query evaluation using a two-level retrieval
// process", Broder et al., 2003). The bound reads what costs little: the
// hit counts of the postings' headers, the page's length, title length
// and prior (cached), and the short posting of each word (its title and
// anchor hits, a few bytes): the title features, which dominate the score
// of a common word, come out nearly exact, and the weighted count of the
// other hits is bounded by the largest type-weight. A skipped match is
// one that could not enter: the results are the exhaustive scan's.

// pruner computes score bounds for one query.
type pruner struct {
	w        *Weights
	m        *Model
	maxAll   float64 // the largest type-weight
	maxOther float64 // the largest weight of a hit kept only in the full lists
	qw       float64 // the idf of the scoring words (score's qw)
	leadMax  int
	fields   bool
	pos      []int // the features of positive weight, in order

	// Per-query constants of bound.
	k1p1        float64 // w.K1 + 1
	oneMinusB   float64 // 1 - w.B
	titleExtra  float64 // what a title hit weighs above maxOther (at least 0)
	anchorExtra float64 // what an anchor hit weighs above maxOther (at least 0)

	noTitle float64      // the bound of every match without title hits
	sc      []shortCount // scratch of bound

	sched   boundSchedule
	skipped int64 // matches skipped in the scan
}

// boundSchedule decides which matches a scan computes the bound of. The
// bound costs about a quarter of a full score: where it seldom skips (the
// candidates' scores are close, as on a query of common words, whose
// every match is scored), it is left off for a while, each time twice as
// long as the last, up to boundOffMost matches, and tried again on
// boundWindow; a window where it skips a quarter or more puts it back on
// every match. With a fixed pause of 256 matches a query whose bound never
// skipped still paid it on a fifth of its matches (the p99 of 100,000
// synthetic pages in one segment fell from 10.8 to 8.8 ms of CPU with
// the doubling pauses, docs/benchmarks.md).
type boundSchedule struct {
	tries, skips int // in the current window
	off          int // matches left to pass without a bound
	pause        int // the last pause, 0 while the bound pays
}

const (
	boundWindow   = 64
	boundOffFirst = 256
	boundOffMost  = 4096
)

// try reports whether to compute the bound of the next match.
func (b *boundSchedule) try() bool {
	if b.off > 0 {
		b.off--
		return false
	}
	return true
}

// record counts a bound computed, and whether it skipped the match.
func (b *boundSchedule) record(skipped bool) {
	b.tries++
	if skipped {
		b.skips++
	}
	if b.tries < boundWindow {
		return
	}
	if b.skips*4 < b.tries {
		b.pause = min(max(2*b.pause, boundOffFirst), boundOffMost)
		b.off = b.pause
	} else {
		b.pause = 0
	}
	b.tries, b.skips = 0, 0
}

// skippedMatches counts the matches the bounds skipped, over all searches
// (for the tests).
var skippedMatches atomic.Int64

// skip reports whether the current match of c, of coordination matched,
// cannot score above thr.
func (p *pruner) skip(idx *Index, c *segCursor, q *parsedQuery, matched int, thr float64) bool {
	if !p.sched.try() {
		return false
	}
	out := p.bound(idx, c, q, matched, thr, 0) <= thr
	p.sched.record(out)
	if out {
		p.skipped++
	}
	return out
}

// newPruner returns the bounds of q's first-stage scores under w and m,
// or nil when the weights are outside the range the bound holds for
// (negative type-weights or saturation, a prior that can lower a score).
func newPruner(q *parsedQuery, w *Weights, m *Model) *pruner {
	if !(w.K1 > 0) || !(w.B >= 0 && w.B <= 1) || !(m.Prior >= 0) || math.IsInf(m.Prior, 0) {
		return nil
	}
	p := &pruner{w: w, m: m, leadMax: len(q.seq) + 1, fields: q.fields, sc: make([]shortCount, len(q.ids)),
		k1p1: w.K1 + 1, oneMinusB: 1 - w.B}
	for t, x := range w.Type {
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil
		}
		p.maxAll = max(p.maxAll, x)
		if t != TypeTitle && t != TypeAnchor {
			p.maxOther = max(p.maxOther, x)
		}
	}
	for k, x := range m.W {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		if x > 0 {
			p.pos = append(p.pos, k)
		}
	}
	for _, x := range m.D {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	p.titleExtra = max(0, w.Type[TypeTitle]-p.maxOther)
	p.anchorExtra = max(0, w.Type[TypeAnchor]-p.maxOther)
	var f [NumFeatures]float64
	for i := range q.ids {
		if !q.neg[i] {
			idf := q.idf[i]
			p.qw += idf
			f[FeatText] += idf * (w.K1 + 1) // each word's saturated count is below 1
			for _, k := range []int{FeatAnchor, FeatHeading, FeatBody, FeatURL, FeatCapital, FeatDef, FeatEmph, FeatDfn} {
				f[k] += idf * (fieldK1 + 1)
			}
		}
	}
	f[FeatCoord] = 1
	p.noTitle = p.sum(&f, 1) // the prior is below 1
	return p
}

// matchedOf is the coordination tier of a match: the idf-weighted share
// of the query's units its driving lists hold (as score weighs them).
func matchedOf(lists [][]byte, q *parsedQuery) int {
	var units uint64
	for i, l := range lists {
		if len(l) > 0 && !q.neg[i] && q.driver[i] {
			units |= 1 << (q.group[i] & 63)
		}
	}
	return q.coordTier(units)
}

// bound is an upper bound of the first-stage score (no proximity) of
// the current match of c, matched its coordination; thr is the score to
// beat: a match without title hits is bounded first by noTitle. With
// prox, a bound of the proximity feature, it bounds the score with
// proximity.
func (p *pruner) bound(idx *Index, c *segCursor, q *parsedQuery, matched int, thr, prox float64) float64 {
	// The short postings first: how many title and anchor hits each word
	// has, and whether a title hit leads.
	sc := p.sc[:len(c.lists)]
	titled := false
	for i, l := range c.lists {
		var x shortCount
		if s := &c.sc[i]; len(l) > 0 && !q.neg[i] && s.ok {
			var sh []byte
			if t := &c.tc[i]; t.ok && t.it.doc == c.doc {
				sh = t.it.hits // nextTitled stands on it
			} else if s.it.doc < c.doc {
				s.ok = s.it.seek(c.doc)
			}
			if sh == nil && s.ok && s.it.doc == c.doc {
				sh = s.it.hits
			}
			if sh != nil {
				for j := range len(sh) / 2 {
					h := hit.At(sh, j)
					switch h.Type() {
					case hit.Title:
						x.titles++
						x.leads = x.leads || h.Pos() < p.leadMax
					case hit.Anchor:
						x.anchors++
					}
				}
				titled = titled || x.titles > 0
			}
		}
		sc[i] = x
	}
	if !titled && p.noTitle <= thr && prox == 0 {
		return p.noTitle
	}
	w := p.w
	st := idx.docStats(c.sg, c.doc)
	norm := w.K1 * (p.oneMinusB + w.B*float64(st.words)/q.avgLen)
	if !(norm > 0) {
		return math.Inf(1)
	}
	bodyNorm := 1.0 // read by the field features only
	if p.fields {
		if bodyNorm = 0.25 + 0.75*float64(st.words)/q.avgLen; !(bodyNorm > 0) {
			return math.Inf(1)
		}
	}
	var f [NumFeatures]float64
	f[FeatProximity] = prox
	tw, lead := 0.0, 0.0
	inTitle := 0
	for i, l := range c.lists {
		if len(l) == 0 || q.neg[i] {
			continue
		}
		n := len(l) / 2
		titles, anchors := sc[i].titles, sc[i].anchors
		// The full posting's hits: at most titles title hits and anchors
		// anchor hits (the short posting holds them all), the rest of
		// types weighing at most maxOther.
		tf := min(p.maxAll*float64(n),
			p.maxOther*float64(n)+p.titleExtra*float64(titles)+p.anchorExtra*float64(anchors))
		idf := q.idf[i]
		f[FeatText] += idf * tf * p.k1p1 / (tf + norm)
		if titles > 0 {
			tw += idf
			inTitle += min(int(titles), q.count[i])
			if sc[i].leads {
				lead += idf
			}
		}
		f[FeatDef] += idf // whether the page defines the word (its definition hits are in the full posting); the score counts it only if the page defines them all, so this bounds it
		if p.fields {
			f[FeatTitle] += bm(idf, min(int(titles), n), 1)
			f[FeatAnchor] += bm(idf, min(int(anchors), n), 1)
			b1 := bm(idf, n, 1)
			f[FeatHeading] += b1
			f[FeatBody] += bm(idf, n, bodyNorm)
			f[FeatURL] += b1
			if q.capital[i] {
				f[FeatCapital] += b1
			}
			f[FeatEmph] += idf // as the definition feature's bound
			f[FeatDfn] += idf
		}
	}
	if inTitle > 0 && p.qw > 0 {
		words := max(int(st.titleWords), inTitle)
		f[FeatTitleMatch] = tw / p.qw * float64(inTitle) / float64(words)
	}
	if p.qw > 0 {
		f[FeatTitleLead] = lead / p.qw
	}
	if q.of > 0 {
		f[FeatCoord] = float64(matched) / coordQ
	}
	return p.sum(&f, float64(st.prior))
}

// shortCount is what a word's short posting tells of a page.
type shortCount struct {
	titles, anchors int32
	leads           bool
}

// bm is a field's BM25 as score computes it.
func bm(idf float64, c int, nrm float64) float64 {
	return idf * float64(c) * (fieldK1 + 1) / (float64(c) + fieldK1*nrm)
}

// sum combines feature bounds f under the model, with the prior p: the
// features of negative weight count 0 (no feature is below 0).
func (p *pruner) sum(f *[NumFeatures]float64, prior float64) float64 {
	s := 0.0
	for _, k := range p.pos {
		s += p.m.W[k] * f[k]
	}
	if p.m.derives() { // each is non-decreasing in the features: bounded by their bounds
		d := Derived(f)
		for i, w := range p.m.D {
			s += max(0, w) * d[i]
		}
	}
	// A margin for rounding: the bound's sums run in another order.
	return s * (1 + p.m.Prior*prior) * (1 + 1e-9)
}
