package sekitei

// A SegmentFilter is the lecture's quota by segments ("квота по камням")
// as an online filter: each segment of the site has its quota (SetQuotas:
// a minimum, the rest in proportion to its good URLs), and URLs of a segment
// are fetched at the rate that spreads its quota over the segment's expected
// share of the stream (the share of the general training URLs it holds).
// It is the baseline the model-based Filter is measured against.
type SegmentFilter struct {
	site    *Site
	quota   int
	fetched int
	rate    []float64 // fetch probability per segment
	carry   []float64 // error diffusion per segment, for deterministic rates
	taken   map[uint64]struct{}
	runes   []rune
}

// NewSegmentFilter returns a segment-quota filter over site's segments,
// whose quotas must be set, for a stream of about stream URLs; general is
// the number of general (unlabelled) URLs among those the segments were
// counted on.
func NewSegmentFilter(site *Site, quota, stream int) *SegmentFilter {
	f := &SegmentFilter{site: site, quota: quota, taken: map[uint64]struct{}{}}
	general := 0
	for _, s := range site.Segments {
		general += s.URLs - s.Good
	}
	for _, s := range site.Segments {
		r := 1.0
		if exp := float64(stream) * float64(s.URLs-s.Good) / float64(max(general, 1)); exp > 0 {
			r = min(1, float64(s.Quota)/exp)
		}
		f.rate = append(f.rate, r)
	}
	f.carry = make([]float64, len(site.Segments))
	return f
}

// Decide returns whether to fetch the next URL of the stream.
func (f *SegmentFilter) Decide(rawURL string) (bool, error) {
	p, err := splitURL(rawURL)
	if err != nil {
		return false, err
	}
	key := hashString(rawURL)
	if _, dup := f.taken[key]; dup || f.fetched >= f.quota {
		return false, nil
	}
	i := f.site.matchRunes(p.subject, f.runes)
	if i >= len(f.rate) {
		return false, nil
	}
	f.carry[i] += f.rate[i]
	if f.carry[i] < 1 {
		return false, nil
	}
	f.carry[i]--
	f.fetched++
	f.taken[key] = struct{}{}
	return true, nil
}
