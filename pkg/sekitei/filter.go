package sekitei

import "math"

// Score histogram: log-odds clamped to [-scoreSpan, scoreSpan] in bins of
// 1/binsPerUnit, fine enough that ties come from equal scores only.
const (
	scoreSpan   = 16
	binsPerUnit = 64
	numBins     = 2 * scoreSpan * binsPerUnit
)

// A Filter makes the online fetch decisions of a model: for each URL, in
// stream order and seeing no later URL, fetch or not, until the quota is
// used. It paces the quota over the stream: with q fetches left and l URLs
// still expected, it fetches the URLs whose score is in the top q/l of the
// score distribution of the stream (the model's out-of-fold prior, updated
// with every URL seen). Good URLs score high, so they are fetched wherever
// they come; the quota is spent evenly on the best of the rest, and is
// neither used up early nor left over. Ties on the threshold are broken by
// an error-diffusion accumulator, so decisions are deterministic.
//
// A Filter is not safe for concurrent use.
type Filter struct {
	m       *Model
	ev      Evidence
	quota   int
	stream  int
	seen    int
	fetched int
	hist    fenwick
	carry   float64
	taken   map[uint64]struct{} // hashes of the URLs fetched
}

// NewFilter returns a filter for m with the given quota and expected stream
// length; 0 takes the model's. A stream of 0 is taken as twice the quota.
func NewFilter(m *Model, quota, stream int) *Filter {
	if quota <= 0 {
		quota = m.Quota
	}
	if stream <= 0 {
		stream = m.Stream
	}
	if stream <= 0 {
		stream = 2 * quota
	}
	f := &Filter{m: m, quota: quota, stream: stream, taken: map[uint64]struct{}{}}
	f.hist = newFenwick(numBins)
	for _, s := range m.PriorScores {
		f.hist.add(bin(s), 1)
	}
	return f
}

func bin(score float64) int {
	b := int(math.Floor((score + scoreSpan) * binsPerUnit))
	return min(max(b, 0), numBins-1)
}

// Decision is the filter's answer for one URL.
type Decision struct {
	Fetch     bool
	Score     float64 // the model's log-odds that the URL is good
	Duplicate bool    // the URL was fetched before in this stream
}

// Decide returns the decision for the next URL of the stream. A URL that is
// not an absolute http(s) URL gives an error and counts as not offered. A
// URL already fetched is not fetched again (Duplicate is set) and costs no
// quota.
func (f *Filter) Decide(rawURL string) (Decision, error) {
	hs, err := f.ev.Hashes(rawURL)
	if err != nil {
		return Decision{}, err
	}
	return f.DecideHashes(rawURL, hs), nil
}

// DecideHashes is Decide for a URL whose evidence hashes (Evidence.Hashes)
// were computed already, perhaps on another goroutine.
func (f *Filter) DecideHashes(rawURL string, hs []uint64) Decision {
	s := f.m.ScoreHashes(hs)
	key := hashString(rawURL)
	if _, dup := f.taken[key]; dup {
		return Decision{Score: s, Duplicate: true}
	}
	f.seen++
	b := bin(s)
	f.hist.add(b, 1)
	d := Decision{Score: s}
	left := f.quota - f.fetched
	if left <= 0 {
		return d
	}
	rem := f.stream - f.seen + 1 // URLs still expected, this one included
	if rem <= left {
		d.Fetch = true
	} else {
		d.Fetch = f.pass(b, float64(left)/float64(rem))
	}
	if d.Fetch {
		f.fetched++
		f.taken[key] = struct{}{}
	}
	return d
}

// pass reports whether a URL in bin b is in the top share of the histogram.
func (f *Filter) pass(b int, share float64) bool {
	total := f.hist.sum(numBins - 1)
	want := share * total // mass to accept
	// t is the lowest bin whose mass at or above it reaches want.
	t := f.hist.search(total - want)
	above := total - f.hist.sum(t)
	switch {
	case b > t:
		return true
	case b < t:
		return false
	}
	in := f.hist.sum(t) - f.hist.sum(t-1)
	if in <= 0 {
		return false
	}
	f.carry += (want - above) / in
	if f.carry >= 1 {
		f.carry--
		return true
	}
	return false
}

// Used returns the number of URLs fetched so far.
func (f *Filter) Used() int { return f.fetched }

// Seen returns the number of URLs decided so far.
func (f *Filter) Seen() int { return f.seen }

// Quota returns the filter's quota.
func (f *Filter) Quota() int { return f.quota }

// Host returns the normalised host of the last URL Decide saw.
func (f *Filter) Host() string { return f.ev.Host() }

// Extract exposes the filter's evidence of a URL, for explaining decisions.
func (f *Filter) Extract(rawURL string) ([]string, error) {
	feats, _, err := f.ev.Extract(rawURL)
	return feats, err
}

// fenwick is a binary indexed tree of float64 masses over bins.
type fenwick struct{ t []float64 }

func newFenwick(n int) fenwick { return fenwick{t: make([]float64, n+1)} }

func (fw fenwick) add(i int, v float64) {
	for i++; i < len(fw.t); i += i & -i {
		fw.t[i] += v
	}
}

// sum returns the mass of bins 0..i (0 for i < 0).
func (fw fenwick) sum(i int) float64 {
	s := 0.0
	for i++; i > 0; i -= i & -i {
		s += fw.t[i]
	}
	return s
}

// search returns the lowest bin i with sum(i) > target, or the last bin.
func (fw fenwick) search(target float64) int {
	pos := 0
	step := 1
	for step*2 < len(fw.t) {
		step *= 2
	}
	for ; step > 0; step /= 2 {
		if next := pos + step; next < len(fw.t) && fw.t[next] <= target {
			pos = next
			target -= fw.t[next]
		}
	}
	if pos >= len(fw.t)-1 {
		return len(fw.t) - 2
	}
	return pos // bins are 0-based: fenwick index pos+1 is bin pos
}
