package sekitei

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/sekitei/crawlkit/pkg/urlfeat"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// RestRegex is the regex of the rest segment, the URLs in no cluster.
const RestRegex = ".*"

// An Example is one URL of a site and whether users visited it (a QLink).
type Example struct {
	URL  string
	Good bool
	// Features are the URL's sekitei features when the caller has them
	// already (urlfeat's "features" field); nil means compute them.
	Features []string
}

// Options tune segment building. The zero value of a field means its
// default.
type Options struct {
	// Alpha keeps the features seen in at least Alpha*N of the N sampled
	// URLs (default 0.1, the lecture's).
	Alpha float64
	// MaxDistance is the largest Jaccard distance at which a URL's kept
	// features join a cluster (default 0.3).
	MaxDistance float64
	// MinShare is the smallest cluster, as a share of the sample, that gets a
	// segment of its own (default 0.01: the lecture's P_{1000,10}(0.01)
	// argument: below 1% a topic is not found reliably in 1000 URLs).
	MinShare float64
	// Sample caps the URLs used to build the clusters (default 2000, half
	// good and half other when there are enough, the lecture's 1:1). Every
	// URL is still assigned exactly.
	Sample int
	// Seed makes the sample deterministic.
	Seed uint64
	// SiteQuota and MinQuota set the segments' quotas (see Quotas);
	// SiteQuota 0 leaves them 0.
	SiteQuota, MinQuota int
}

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 {
		o.Alpha = 0.1
	}
	if o.MaxDistance <= 0 {
		o.MaxDistance = 0.3
	}
	if o.MinShare <= 0 {
		o.MinShare = 0.01
	}
	if o.Sample <= 0 {
		o.Sample = 2000
	}
	return o
}

// A Segment is one cluster of a site's URLs, described by an anchored PCRE
// over Subject. Counts are over the URLs the segments were assigned.
type Segment struct {
	Host      string   `json:"host"`
	ID        int      `json:"segment"`
	Regex     string   `json:"regex"`
	URLs      int      `json:"urls"`
	Good      int      `json:"good"`
	GoodShare float64  `json:"good_share"`
	Quota     int      `json:"quota"`
	Features  []string `json:"features,omitempty"` // kept features all members share

	m *matcher
}

// A Site is the ordered segments of one host: a URL belongs to the first
// segment whose regex matches its Subject; the last is the rest segment.
type Site struct {
	Host     string
	Segments []Segment
}

// ErrNoURLs is returned by Build for a host without usable URLs.
var ErrNoURLs = errors.New("no usable URLs")

// matchTimeout bounds one regex match; the regexes built here are linear,
// but a segments file may come from elsewhere.
const matchTimeout = 2 * time.Second

func compile(expr string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = matchTimeout
	return re, nil
}

// Build cuts a site's URLs into segments: the sekitei features of a sample,
// the features kept by frequency, clusters by Jaccard distance on the kept
// features, a regex per cluster, and every URL assigned to the first
// matching segment. URLs that urlfeat refuses are skipped (they cannot be
// matched either). Build is deterministic for the same URLs and options.
func Build(host string, urls []Example, opt Options) (*Site, error) {
	opt = opt.withDefaults()
	members, counter := featurize(drawSample(urls, opt.Sample, opt.Seed))
	if len(members) == 0 {
		return nil, ErrNoURLs
	}
	n := len(members)
	minCount := max(int64(math.Ceil(opt.Alpha*float64(n))), 2)
	kept := map[string]int32{}
	for i, c := range counter.Top(minCount) {
		kept[c.Feature] = int32(i)
	}
	minSize := max(int(math.Ceil(opt.MinShare*float64(n))), 2)
	cands := candidates(members, jaccardClusters(members, kept, opt.MaxDistance), minSize)

	site := &Site{Host: host}
	for _, c := range cands {
		m, err := newMatcher(c.regex)
		if err != nil {
			return nil, fmt.Errorf("built an invalid regex %q: %v", c.regex, err) // a bug
		}
		shared := sharedFeatures(c.members, func(i int) []string { return members[i].feats }, kept)
		site.Segments = append(site.Segments, Segment{Host: host, Regex: c.regex, Features: shared, m: m})
	}
	// A segment wholly shadowed by earlier ones on the sample goes.
	counts := make([]int, len(site.Segments)+1)
	for _, m := range members {
		counts[site.match(m.subject)]++
	}
	live := site.Segments[:0]
	for i, s := range site.Segments {
		if counts[i] > 0 {
			live = append(live, s)
		}
	}
	site.Segments = live
	rest, _ := newMatcher(RestRegex)
	site.Segments = append(site.Segments, Segment{Host: host, Regex: RestRegex, m: rest})
	for i := range site.Segments {
		site.Segments[i].ID = i
	}
	site.Count(urls)
	site.SetQuotas(opt.SiteQuota, opt.MinQuota)
	return site, nil
}

// A member is one sampled URL: its regex subject and its sekitei features.
type member struct {
	subject string
	feats   []string
	good    bool
}

// featurize computes the features of the sample, skipping URLs urlfeat
// refuses, and counts them.
func featurize(sample []Example) ([]member, *urlfeat.Counter) {
	var ex urlfeat.Extractor
	counter := urlfeat.NewCounter()
	members := make([]member, 0, len(sample))
	for _, e := range sample {
		p, err := urlx.Split(e.URL)
		if err != nil {
			continue // Extract refuses exactly what Split does
		}
		if e.Features != nil {
			members = append(members, member{subjectOf(p), e.Features, e.Good})
			counter.AddStrings(e.Features)
			continue
		}
		f, _ := ex.Extract(e.URL)
		members = append(members, member{subjectOf(p), f.Strings(), e.Good})
		counter.Add(f)
	}
	return members, counter
}

// jaccardClusters groups members by Jaccard distance on their kept
// features. Members with the same kept features form a signature; the
// signatures, most frequent first, join the nearest leader within maxDist
// or lead a cluster themselves; then every signature goes to its nearest
// leader. It returns the member indexes of each cluster.
func jaccardClusters(members []member, kept map[string]int32, maxDist float64) [][]int {
	type group struct {
		sig     []int32
		members []int
	}
	byKey := map[string]*group{}
	var groups []*group
	for i, m := range members {
		var sig []int32
		for _, f := range m.feats {
			if k, ok := kept[f]; ok {
				sig = append(sig, k)
			}
		}
		sort.Slice(sig, func(a, b int) bool { return sig[a] < sig[b] })
		key := fmt.Sprint(sig)
		g := byKey[key]
		if g == nil {
			g = &group{sig: sig}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	sort.SliceStable(groups, func(a, b int) bool { return len(groups[a].members) > len(groups[b].members) })
	sigs := make([][]int32, len(groups))
	for gi, g := range groups {
		sigs[gi] = g.sig
	}
	var leaders []int
	for gi, g := range groups {
		if best, d := nearest(g.sig, sigs, leaders); best < 0 || d > maxDist {
			leaders = append(leaders, gi)
		}
	}
	clusters := make([][]int, len(leaders))
	for _, g := range groups {
		best, _ := nearest(g.sig, sigs, leaders) // a leader is at distance 0 of itself
		clusters[best] = append(clusters[best], g.members...)
	}
	return clusters
}

// A candidate is a segment regex and the sampled members it was built from.
type candidate struct {
	regex   string
	score   int // specificity
	members []int
}

// candidates refines the clusters of at least minSize members into parts,
// writes a regex per part (merging parts with the same regex), and orders
// them most specific first, then largest first.
func candidates(members []member, clusters [][]int, minSize int) []candidate {
	var cands []candidate
	seen := map[string]int{}
	for _, ms := range clusters {
		if len(ms) < minSize {
			continue
		}
		for _, part := range refine(ms, func(i int) string { return members[i].subject }, func(i int) bool { return members[i].good }, minSize) {
			subjects := make([]string, len(part))
			for i, m := range part {
				subjects[i] = members[m].subject
			}
			re, score := buildRegex(subjects)
			if j, ok := seen[re]; ok {
				cands[j].members = append(cands[j].members, part...)
				continue
			}
			seen[re] = len(cands)
			cands = append(cands, candidate{re, score, part})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		if len(cands[a].members) != len(cands[b].members) {
			return len(cands[a].members) > len(cands[b].members)
		}
		return cands[a].regex < cands[b].regex
	})
	return cands
}

// sharedFeatures returns the kept features every member has, in the order
// of their frequency.
func sharedFeatures(ms []int, feats func(int) []string, kept map[string]int32) []string {
	count := map[string]int{}
	for _, m := range ms {
		for _, f := range feats(m) {
			if _, ok := kept[f]; ok {
				count[f]++
			}
		}
	}
	var out []string
	for f, c := range count {
		if c == len(ms) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(a, b int) bool { return kept[out[a]] < kept[out[b]] })
	return out
}

// nearest returns the index into leaders of the leader whose signature
// (sigs[leader]) is nearest to sig by Jaccard distance, and the distance; -1
// when there are no leaders.
func nearest(sig []int32, sigs [][]int32, leaders []int) (int, float64) {
	best, bestD := -1, 2.0
	for li, gi := range leaders {
		if d := jaccardDistance(sig, sigs[gi]); d < bestD {
			best, bestD = li, d
		}
	}
	return best, bestD
}

// jaccardDistance is 1 - |A∩B|/|A∪B| of two sorted sets; two empty sets
// are at distance 0.
func jaccardDistance(a, b []int32) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - inter
	return 1 - float64(inter)/float64(union)
}

// drawSample returns up to n URLs, half of them good when there are enough,
// drawn with a fixed seed; all of them when there are n or fewer.
func drawSample(urls []Example, n int, seed uint64) []Example {
	if len(urls) <= n {
		return urls
	}
	rng := rand.New(rand.NewPCG(seed, 0x5e6e17))
	var good, other []int
	for i, e := range urls {
		if e.Good {
			good = append(good, i)
		} else {
			other = append(other, i)
		}
	}
	take := func(idx []int, k int) []int {
		if k >= len(idx) {
			return idx
		}
		for i := 0; i < k; i++ { // partial Fisher-Yates
			j := i + rng.IntN(len(idx)-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		return idx[:k]
	}
	g := take(good, n/2)
	o := take(other, n-len(g))
	if len(o) < n-len(g) { // few others: more good ones
		g = take(good, n-len(o))
	}
	picked := append(append([]int(nil), g...), o...)
	sort.Ints(picked)
	out := make([]Example, len(picked))
	for i, k := range picked {
		out[i] = urls[k]
	}
	return out
}

// match returns the index of the first segment whose regex matches the
// subject; len(Segments) when none does (a site without rest segment).
func (s *Site) match(subject string) int {
	var buf [256]rune
	return s.matchRunes(subject, buf[:0])
}

// matchRunes is match with a caller's buffer for the subject's runes.
func (s *Site) matchRunes(subject string, buf []rune) int {
	subject = validSubject(subject)
	runes := buf[:0]
	for _, r := range subject {
		runes = append(runes, r)
	}
	for i := range s.Segments {
		if s.Segments[i].m.match(subject, runes) {
			return i
		}
	}
	return len(s.Segments)
}

// Assign returns the segment of a URL, or nil for a URL that is not an
// absolute http(s) URL or matches no segment.
func (s *Site) Assign(rawURL string) (*Segment, error) {
	subj, err := Subject(rawURL)
	if err != nil {
		return nil, err
	}
	if i := s.match(subj); i < len(s.Segments) {
		return &s.Segments[i], nil
	}
	return nil, nil
}

// Count sets every segment's URLs, Good and GoodShare from urls, each
// counted in its first matching segment. It matches on all cores.
func (s *Site) Count(urls []Example) {
	for i := range s.Segments {
		s.Segments[i].URLs, s.Segments[i].Good, s.Segments[i].GoodShare = 0, 0, 0
	}
	workers := runtime.GOMAXPROCS(0)
	type tally struct{ urls, good []int }
	tallies := make([]tally, workers)
	var wg sync.WaitGroup
	chunk := (len(urls) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(urls))
		t := &tallies[w]
		t.urls = make([]int, len(s.Segments)+1)
		t.good = make([]int, len(s.Segments)+1)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, e := range urls[lo:hi] {
				p, err := urlx.Split(e.URL)
				if err != nil {
					continue
				}
				i := s.match(subjectOf(p))
				t.urls[i]++
				if e.Good {
					t.good[i]++
				}
			}
		}()
	}
	wg.Wait()
	for _, t := range tallies {
		for i := range s.Segments {
			s.Segments[i].URLs += t.urls[i]
			s.Segments[i].Good += t.good[i]
		}
	}
	for i := range s.Segments {
		if u := s.Segments[i].URLs; u > 0 {
			s.Segments[i].GoodShare = math.Round(float64(s.Segments[i].Good)/float64(u)*1e4) / 1e4
		}
	}
}

// Purity is the 2014 homework's measure of a segmentation on labelled URLs:
// the sum over segments of max(good, other) hits divided by all hits. 1
// means every segment is all good or all other.
func (s *Site) Purity() float64 {
	var num, all int
	for _, seg := range s.Segments {
		num += max(seg.Good, seg.URLs-seg.Good)
		all += seg.URLs
	}
	if all == 0 {
		return 0
	}
	return float64(num) / float64(all)
}

// SetQuotas shares a site quota between the segments by the lecture's rule:
// every segment gets a minimum quota, and the rest is shared in proportion
// to its pages with QLinks (good URLs); with no good URL at all, in
// proportion to size. The quotas add up to siteQuota (largest remainders). minQuota above
// siteQuota/len(segments) is lowered to it.
func (s *Site) SetQuotas(siteQuota, minQuota int) {
	k := len(s.Segments)
	for i := range s.Segments {
		s.Segments[i].Quota = 0
	}
	if siteQuota <= 0 || k == 0 {
		return
	}
	if minQuota < 0 {
		minQuota = 0
	}
	if minQuota*k > siteQuota {
		minQuota = siteQuota / k
	}
	weight := func(seg Segment) float64 { return float64(seg.Good) }
	total := 0.0
	for _, seg := range s.Segments {
		total += weight(seg)
	}
	if total == 0 {
		weight = func(seg Segment) float64 { return float64(seg.URLs) }
		for _, seg := range s.Segments {
			total += weight(seg)
		}
	}
	left := siteQuota - minQuota*k
	type rem struct {
		i    int
		frac float64
	}
	var rems []rem
	given := 0
	for i := range s.Segments {
		share := 0.0
		if total > 0 {
			share = float64(left) * weight(s.Segments[i]) / total
		} else {
			share = float64(left) / float64(k)
		}
		q := int(math.Floor(share))
		s.Segments[i].Quota = minQuota + q
		given += minQuota + q
		rems = append(rems, rem{i, share - float64(q)})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].frac > rems[b].frac })
	for j := 0; given < siteQuota; j = (j + 1) % k {
		s.Segments[rems[j].i].Quota++
		given++
	}
}

// String describes a site's segments for diagnostics.
func (s *Site) String() string {
	var b strings.Builder
	for _, seg := range s.Segments {
		fmt.Fprintf(&b, "%d\t%s\t%d\t%d\n", seg.ID, seg.Regex, seg.URLs, seg.Good)
	}
	return b.String()
}

// refine cuts one Jaccard cluster into the parts its regexes describe. The
// kept features are frequent ones only, so a cluster can hold several URL
// layouts ("/news/2013/09/30/x/" and "/russia/2004/06/18/y/"); a single
// regex over all of them would generalise every position to [^/?]+. So the
// members are first split by layout (number of path segments, trailing
// slash, query or not), and a layout is split further, greedily, on the path
// literal, namespace prefix or extension that the most of its members share
// (a "rock" of at least minSize URLs), at most three levels deep. Parts
// smaller than minSize go back to the cluster's leftover part, whose regex
// then generalises over them; a leftover smaller than minSize is left to the
// other segments and the rest.
func refine(ms []int, subject func(int) string, good func(int) bool, minSize int) [][]int {
	byLayout := map[string][]int{}
	var order []string
	shapes := map[int]shapeOf{}
	for _, m := range ms {
		sh := parseSubject(subject(m))
		shapes[m] = sh
		key := fmt.Sprint(len(sh.segs), sh.trail, sh.hasQuery)
		if _, ok := byLayout[key]; !ok {
			order = append(order, key)
		}
		byLayout[key] = append(byLayout[key], m)
	}
	var parts [][]int
	var leftover []int
	for _, key := range order {
		g := byLayout[key]
		if len(g) < minSize {
			leftover = append(leftover, g...)
			continue
		}
		parts = append(parts, splitOnRocks(g, shapes, good, minSize, 3, &leftover)...)
	}
	if len(leftover) >= minSize {
		parts = append(parts, leftover)
	}
	return parts
}

// splitOnRocks splits a group of one layout on its most shared literal;
// members left in a part smaller than minSize go to leftover. A literal that
// is a value rather than a name (all digits, as a year, month or id; or a
// query parameter's value) splits only where users treat the two sides
// differently (their QLink shares differ, see splitsQLinks): the lecture
// warns that splitting too finely disperses the QLinks, and a person writes
// one ^/news/2026/[0-9]+/[0-9]+\.html$ rather than a segment a month.
func splitOnRocks(g []int, shapes map[int]shapeOf, good func(int) bool, minSize, depth int, leftover *[]int) [][]int {
	if depth == 0 || len(g) < 2*minSize {
		return [][]int{g}
	}
	type rock struct {
		pos  int
		kind byte // 'v' whole value, 'p' prefix, 's' suffix, 'q' query name=value
		text string
	}
	count := map[rock]int{}
	goods := map[rock]int{}
	allGood := 0
	n := len(shapes[g[0]].segs)
	keysOf := func(sh shapeOf, pos int) []rock {
		if pos < 0 {
			var ks []rock
			if sh.hasQuery {
				for _, p := range strings.Split(sh.query, "&") {
					if strings.Contains(p, "=") {
						ks = append(ks, rock{-1, 'q', p})
					}
				}
			}
			return ks
		}
		v := sh.segs[pos]
		return []rock{{pos, 'v', v}, {pos, 'p', cutPrefix(v)}, {pos, 's', cutSuffix(v)}}
	}
	for _, m := range g {
		sh := shapes[m]
		gm := good(m)
		if gm {
			allGood++
		}
		for pos := -1; pos < n; pos++ {
			for _, k := range keysOf(sh, pos) {
				if k.text != "" {
					count[k]++
					if gm {
						goods[k]++
					}
				}
			}
		}
	}
	var best rock
	bestN := 0
	for k, c := range count {
		if c < minSize || c == len(g) {
			continue
		}
		if (k.kind == 'q' || k.kind == 'v' && allDigits(k.text)) && !splitsQLinks(goods[k], c, allGood-goods[k], len(g)-c) {
			continue
		}
		if c > bestN || c == bestN && (k.pos < best.pos || k.pos == best.pos && (k.kind < best.kind || k.kind == best.kind && k.text < best.text)) {
			best, bestN = k, c
		}
	}
	if bestN == 0 {
		return [][]int{g}
	}
	var in, out []int
	for _, m := range g {
		hit := false
		for _, k := range keysOf(shapes[m], best.pos) {
			if k == best {
				hit = true
			}
		}
		if hit {
			in = append(in, m)
		} else {
			out = append(out, m)
		}
	}
	parts := splitOnRocks(in, shapes, good, minSize, depth-1, leftover)
	if len(out) < minSize {
		*leftover = append(*leftover, out...)
		return parts
	}
	return append(parts, splitOnRocks(out, shapes, good, minSize, depth, leftover)...)
}

// splitsQLinks reports whether g1 QLinks of n1 URLs and g2 of n2 are shares
// users clearly treat differently: a two-proportion z-test at z >= 3, so
// chance differences of a few URLs never split. Without QLinks on either
// side (or all QLinks) there is nothing to tell them apart.
func splitsQLinks(g1, n1, g2, n2 int) bool {
	if n1 == 0 || n2 == 0 {
		return false
	}
	p := float64(g1+g2) / float64(n1+n2)
	if p == 0 || p == 1 {
		return false
	}
	d := float64(g1)/float64(n1) - float64(g2)/float64(n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	return math.Abs(d) >= 3*se
}
