package crawlorder

import (
	"errors"
	"fmt"

	"github.com/sekitei/crawlkit/pkg/urlx"
)

// Extrapolations of the QLinks to URLs nobody visited yet, the lecture's
// three: for the whole site, along links, for a segment of the site.
const (
	PerSite    = "site"
	AlongLinks = "links"
	PerSegment = "segment"
)

// ErrNoQLinks is returned when a QLink order is asked for without QLinks.
var ErrNoQLinks = errors.New("no QLinks given: the QLink orders extrapolate visited URLs, and there are none")

// A Segmenter names the segment of a URL: a key unique over hosts and a
// description for explain (its regex). Package sekitei's sites are one.
type Segmenter func(url string) (key, desc string)

type tally struct{ urls, good int }

// QLinkStats are the known URLs and QLinks the extrapolations start from:
// per site and per segment, how many known URLs there are and how many of
// them users visited. Rates are smoothed towards the level above (segment
// towards its site, site towards all sites, m = 2 pseudo-URLs), so a
// segment of one URL or a site without QLinks gets a finite rate between
// 0 and 1, never a division by zero.
type QLinkStats struct {
	Visits map[string]float64 // known QLinks: URL -> visits
	segOf  Segmenter
	all    tally
	hosts  map[string]*tally
	segs   map[string]*tally
	desc   map[string]string
}

const priorWeight = 2

// NewQLinkStats counts known (URLs known to the crawler, e.g. a sample of
// each site) against visits (the QLinks and their visit counts). QLinks
// not in known are counted too. segOf may be nil when no order per segment
// is wanted.
func NewQLinkStats(known []string, visits map[string]float64, segOf Segmenter) (*QLinkStats, error) {
	st := &QLinkStats{Visits: visits, segOf: segOf, hosts: map[string]*tally{}, segs: map[string]*tally{}, desc: map[string]string{}}
	good := 0
	seen := map[string]bool{}
	add := func(u string) {
		if seen[u] {
			return
		}
		seen[u] = true
		h, err := urlx.Host(u)
		if err != nil {
			return
		}
		g := 0
		if visits[u] > 0 {
			g = 1
		}
		st.all.urls++
		st.all.good += g
		good += g
		t := st.hosts[h]
		if t == nil {
			t = &tally{}
			st.hosts[h] = t
		}
		t.urls++
		t.good += g
		if segOf != nil {
			k, d := segOf(u)
			s := st.segs[k]
			if s == nil {
				s = &tally{}
				st.segs[k] = s
				st.desc[k] = d
			}
			s.urls++
			s.good += g
		}
	}
	for _, u := range known {
		add(u)
	}
	for u := range visits {
		add(u)
	}
	if good == 0 {
		return nil, ErrNoQLinks
	}
	return st, nil
}

func smooth(t tally, prior float64) float64 { return Rate(t.good, t.urls, prior) }

// Rate is the smoothed QLink rate of qlinks among urls known URLs: the
// share, pulled towards prior by two pseudo-URLs; finite for any counts.
func Rate(qlinks, urls int, prior float64) float64 {
	return (float64(qlinks) + priorWeight*prior) / (float64(urls) + priorWeight)
}

func (st *QLinkStats) globalRate() float64 { return smooth(st.all, 0.5) }

// SiteRate is the share of the site's known URLs that are QLinks.
func (st *QLinkStats) SiteRate(u string) (float64, string) {
	h, _ := urlx.Host(u)
	t := st.hosts[h]
	if t == nil {
		t = &tally{}
	}
	r := smooth(*t, st.globalRate())
	return r, fmt.Sprintf("site %s: %d QLinks of %d known URLs, rate %s", h, t.good, t.urls, f4(r))
}

// SegmentRate is the share of the segment's known URLs that are QLinks.
func (st *QLinkStats) SegmentRate(u string) (float64, string) {
	site, _ := st.SiteRate(u)
	if st.segOf == nil {
		return site, "no segments"
	}
	k, d := st.segOf(u)
	t := st.segs[k]
	if t == nil {
		t = &tally{}
		st.desc[k] = d
	}
	r := smooth(*t, site)
	return r, fmt.Sprintf("segment %s: %d QLinks of %d known URLs, rate %s", st.desc[k], t.good, t.urls, f4(r))
}

// QLinks is the QLink-driven order: a known QLink has priority 1, every
// other URL the QLink rate extrapolated to it: of its site (PerSite), of
// its segment (PerSegment), or along links (AlongLinks): ql(B) = Coef *
// ql(A) for a link A -> B, where ql(A) is 1 for a QLink and A's own score
// otherwise, the best over B's parents.
type QLinks struct {
	best
	Stats *QLinkStats
	Mode  string
	Coef  float64
}

// NewQLinks returns the QLink order of an extrapolation mode.
func NewQLinks(st *QLinkStats, mode string, coef float64) (*QLinks, error) {
	switch mode {
	case PerSite, AlongLinks, PerSegment:
	default:
		return nil, fmt.Errorf("extrapolation %q: want site, links or segment", mode)
	}
	if mode == AlongLinks && !(coef > 0 && coef < 1) {
		return nil, fmt.Errorf("coefficient %v: want a number in (0, 1)", coef)
	}
	return &QLinks{best: best{}, Stats: st, Mode: mode, Coef: coef}, nil
}

func (o *QLinks) Name() string { return "qlink-" + o.Mode }

// Score returns a URL's score without a parent (a seed, or a URL ranked
// from the URL alone).
func (o *QLinks) Score(u string) Score {
	if v := o.Stats.Visits[u]; v > 0 {
		return Score{URL: u, Priority: 1, Why: fmt.Sprintf("a QLink: %g visits", v)}
	}
	switch o.Mode {
	case PerSite:
		r, why := o.Stats.SiteRate(u)
		return Score{URL: u, Priority: r, Why: "per site: " + why}
	case PerSegment:
		r, why := o.Stats.SegmentRate(u)
		return Score{URL: u, Priority: r, Why: "per segment: " + why}
	}
	return Score{URL: u, Priority: 1, Why: "along links: a seed"}
}

func (o *QLinks) Seed(url string) Score {
	s := o.Score(url)
	o.offer(s)
	return o.best[url]
}

func (o *QLinks) Visit(p *Page) []Score {
	var out []Score
	for _, l := range p.Links {
		var s Score
		if o.Mode == AlongLinks && o.Stats.Visits[l.URL] <= 0 {
			qa, why := 1.0, "a QLink"
			if o.Stats.Visits[p.URL] <= 0 {
				qa, why = o.best[p.URL].Priority, "its score "+f4(o.best[p.URL].Priority)
			}
			s = Score{URL: l.URL, Priority: o.Coef * qa, From: p.URL,
				Why: fmt.Sprintf("along links: ql = %s * ql(%s) (%s)", f4(o.Coef), p.URL, why)}
		} else {
			if _, known := o.best[l.URL]; known {
				continue
			}
			s = o.Score(l.URL)
		}
		if o.offer(s) {
			out = append(out, s)
		}
	}
	return out
}

// Known lists the URLs the pages make known: each page's and its links',
// the URLs the QLink rates are counted over.
func Known(pages []*Page) []string {
	var known []string
	for _, p := range pages {
		known = append(known, p.URL)
		for _, l := range p.Links {
			known = append(known, l.URL)
		}
	}
	return known
}

// AlongLinksScores are the scores the along-links extrapolation gives the
// URLs of pages (fetch records in the order read) from the QLinks of
// visits, as 'sekitei order --order qlink-links' gives them on one run: a
// page not scored yet is a seed, then its links are scored (Replay). A URL
// of neither a page nor a link has no score.
func AlongLinksScores(pages []*Page, visits map[string]float64, coef float64) (map[string]Score, error) {
	st, err := NewQLinkStats(Known(pages), visits, nil)
	if err != nil {
		return nil, err
	}
	o, err := NewQLinks(st, AlongLinks, coef)
	if err != nil {
		return nil, err
	}
	scores, _ := Replay(o, pages, nil)
	return scores, nil
}

// An Extrapolation is the QLink score one extrapolation gives a URL.
type Extrapolation struct {
	Mode  string // PerSite, AlongLinks or PerSegment
	Score float64
}

// Highest returns the extrapolation of the highest score, the one that
// gives the URL its score; among equal scores the first. ok is false when
// xs is empty.
func Highest(xs ...Extrapolation) (x Extrapolation, ok bool) {
	for i, e := range xs {
		if i == 0 || e.Score > x.Score {
			x = e
		}
	}
	return x, len(xs) > 0
}
