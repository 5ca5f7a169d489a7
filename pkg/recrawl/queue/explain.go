package queue

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

// An Explanation is why a page is or is not taken now.
type Explanation struct {
	URL, Host string
	Known     bool
	W         float64
	HasWeight bool // W is an importance, not the default
	Delta     float64
	Prior     bool    // Delta is the prior
	Fetches   int     // successful fetches observed (intervals + 1)
	Changes   int     // intervals that showed a change
	Tau       float64 // days since the last fetch; +Inf: never fetched
	LastFetch time.Time
	Value     float64 // V(tau)
	MaxValue  float64 // w/delta
	Lambda0   float64
	// LambdaI is how far the host's cap pushed its threshold above
	// lambda_0 this slot (0 when the cap did not bind); HostCap -1: none.
	LambdaI      float64
	HostCap      int
	BlockedUntil time.Time // a retry or deferral (zero: none)
	Failures     int
	Defers       int
	Taken        bool
	Rank         int // 1-based position in the selection when taken
	Reason       string
	// ETag and LastModified are the validators next sends with the page
	// ("": none).
	ETag, LastModified string
	// Capture is the archived response next names with the page (File
	// "": none).
	Capture Capture
}

// Explain tells, for each URL, the state's view of the page and whether and
// why Next with these options takes it.
func (q *Queue) Explain(urls []string, opt NextOptions) ([]Explanation, error) {
	sel, info, err := q.Next(opt)
	if err != nil {
		return nil, err
	}
	rank := map[string]int{}
	low := map[string]float64{} // lowest value taken per host
	for i, c := range sel {
		rank[c.URL] = i + 1
		low[c.Host] = c.Value
	}
	now := opt.Now.Unix()
	var out []Explanation
	err = q.view(func(tx *boltstate.Tx) error {
		s := &selector{q: q, tx: tx, opt: opt, now: now, info: info}
		for _, u := range urls {
			x := Explanation{URL: u, Lambda0: info.Lambda0, Tau: math.Inf(1), HostCap: -1}
			v, err := tx.Bucket(bPages).Get([]byte(u))
			if err != nil {
				return err
			}
			if v == nil {
				x.Reason = "not in the state (never linked, weighted or fetched in this shard)"
				out = append(out, x)
				continue
			}
			p, err := decodePage(v)
			if err != nil {
				return q.corrupt(bPages, []byte(u), err)
			}
			x.Known, x.Host, x.W, x.HasWeight, x.Delta, x.Prior = true, p.Host, p.W, p.HasWeight, p.Delta, p.Prior
			x.Fetches, x.Changes, x.Failures, x.Defers = p.Stats.N, p.Stats.X, int(p.Failures), int(p.Defers)
			x.ETag, x.LastModified, x.Capture = p.ETag, p.LastModified, p.Capture
			if p.LastFetch != 0 {
				x.Fetches++
				x.LastFetch = time.Unix(p.LastFetch, 0).UTC()
				x.Tau = float64(now-p.LastFetch) / 86400
			}
			x.Value = value(p.W, p.Delta, p.LastFetch, now)
			x.MaxValue = p.W / p.Delta
			x.HostCap = s.hostCap(p.Host)
			if info.HostFull[p.Host] {
				x.LambdaI = math.Max(0, low[p.Host]-info.Lambda0)
			}
			if b := p.blockedUntil(); b > now && b != retired {
				x.BlockedUntil = time.Unix(b, 0).UTC()
			}
			x.Rank = rank[u]
			x.Taken = x.Rank > 0
			x.Reason = reason(&x, info, p, now)
			out = append(out, x)
		}
		return nil
	})
	return out, err
}

func reason(x *Explanation, info *NextInfo, p *page, now int64) string {
	switch {
	case x.Taken:
		return fmt.Sprintf("taken: rank %d of %d, V %.6g >= lambda_0 %.6g", x.Rank, info.GlobalCap, x.Value, x.Lambda0)
	case p.Flags&flagCanonical != 0:
		return "retired: its last fetch named another URL of its host as canonical, which is crawled instead (--recrawl-canonicalised keeps it)"
	case !x.BlockedUntil.IsZero() && p.DeferTo > now && p.DeferTo >= p.RetryAt:
		return fmt.Sprintf("deferred until %s (deferred %d times since its last fetch)", x.BlockedUntil.Format(time.RFC3339), p.Defers)
	case !x.BlockedUntil.IsZero():
		return fmt.Sprintf("waiting until %s to retry after %d failed fetches", x.BlockedUntil.Format(time.RFC3339), p.Failures)
	case x.MaxValue <= x.Lambda0:
		return fmt.Sprintf("never worth crawling at this lambda_0: w/delta %.6g <= %.6g", x.MaxValue, x.Lambda0)
	case x.Value < x.Lambda0:
		iv := recrawl.Freshness.Interval(p.W, p.Delta, x.Lambda0)
		at := time.Unix(p.LastFetch, 0).Add(time.Duration(iv * float64(recrawl.Day))).UTC()
		return fmt.Sprintf("not due: V %.6g < lambda_0 %.6g; due about %s", x.Value, x.Lambda0, at.Format(time.RFC3339))
	case x.HostCap >= 0 && info.HostFull[p.Host] && info.HostTaken[p.Host] >= x.HostCap:
		return fmt.Sprintf("waiting: V %.6g >= lambda_0, but the host's limit (%d this slot) took better pages", x.Value, x.HostCap)
	default:
		return fmt.Sprintf("waiting: V %.6g >= lambda_0, but %d better pages filled the slot (cut %.6g)", x.Value, info.GlobalCap, info.Cut)
	}
}

// Summary is the state's part of lambda_0's equation for the shard reduce
// (recrawl lambda0): the aggregates' demand at 49 thresholds around center.
func (q *Queue) Summary(center float64) (recrawl.Summary, error) {
	s := recrawl.Summary{Objective: recrawl.Freshness.String(), Shard: shardString(q.opt.Shard)}
	if !(center > 0) || math.IsInf(center, 0) {
		center = 1
	}
	var cs []cellCount
	err := q.view(func(tx *boltstate.Tx) error {
		var err error
		cs, err = readCells(tx, q)
		return err
	})
	if err != nil {
		return s, err
	}
	for _, c := range cs {
		s.Pages += int(c.n)
		s.Cells = append(s.Cells, [3]int64{int64(c.c.wb), int64(c.c.db), c.n})
	}
	const points, step = 49, 0.125
	for g := 0; g < points; g++ {
		mu := center * math.Pow(10, step*float64(g-points/2))
		s.Points = append(s.Points, [2]float64{mu, demand(cs, mu)})
	}
	return s, nil
}

// ReduceCells solves lambda_0 for rate from shards' summaries that carry
// their cells (Summary of a crawl state): the counts are added, and the
// equation solved as Next solves it for one state holding every page, to
// the last bit. ok is false if a summary has no cells (made from page
// records): reduce its curves instead (recrawl.ReduceLambda0).
func ReduceCells(sums []recrawl.Summary, rate float64) (l0 float64, ok bool) {
	counts := map[cell]int64{}
	for _, s := range sums {
		if len(s.Cells) == 0 && s.Pages > 0 {
			return 0, false
		}
		for _, c := range s.Cells {
			counts[cell{int16(c[0]), int16(c[1])}] += c[2]
		}
	}
	cs := make([]cellCount, 0, len(counts))
	for c, n := range counts {
		cs = append(cs, cellCount{c, n})
	}
	// In key order, as readCells reads them, so the sums are the same.
	slices.SortFunc(cs, func(a, b cellCount) int { return bytes.Compare(a.c.key(), b.c.key()) })
	return solveLambda0(cs, rate), true
}
