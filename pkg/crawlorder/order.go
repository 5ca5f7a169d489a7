package crawlorder

import (
	"fmt"
	"math"
	"strconv"
)

// A Link is an outgoing link of a page: its URL, its anchor text and the
// text around the anchor (for shark search).
type Link struct {
	URL     string
	Anchor  string
	Context string
}

// A Page is a fetched page as the orders see it.
type Page struct {
	URL   string
	Terms []string // its words (title and text), as Terms cuts them
	Links []Link
}

// A Score is the priority an order gives a URL. Higher is crawled first;
// a Dead URL (a fish out of depth) is not crawled at all.
type Score struct {
	URL      string
	Priority float64
	Depth    int    // fish and shark: the depth budget the URL carries
	Dead     bool   // fish and shark: budget spent, do not crawl
	Why      string // which rule gave the priority, for explain
	From     string // the page whose link gave the score (along links), for explain
}

// An Order gives the URLs of the crawl queue their priorities.
type Order interface {
	// Name is the order's name on the command line.
	Name() string
	// Seed returns the score of a start URL.
	Seed(url string) Score
	// Visit takes a fetched page and returns the scores it changes: of its
	// links, or of every known URL when the order rebalances.
	Visit(p *Page) []Score
}

// Prior lets an order resume from the scores it gave before (the crawl
// loop keeps them between turns).
type Prior interface {
	Restore(s Score)
}

// best keeps, per URL, the highest score given so far: a URL linked from
// several pages takes the best of them.
type best map[string]Score

// offer records s if it beats the URL's score and reports whether it did.
func (b best) offer(s Score) bool {
	if math.IsNaN(s.Priority) || math.IsInf(s.Priority, 0) {
		s.Priority = 0
	}
	old, ok := b[s.URL]
	if ok && !better(s, old) {
		return false
	}
	b[s.URL] = s
	return true
}

func better(a, b Score) bool {
	if a.Dead != b.Dead {
		return !a.Dead
	}
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.Depth > b.Depth
}

func (b best) Restore(s Score) { b.offer(s) }

func f4(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// BFS is breadth first: priority 1/(1+depth), so the queue takes the URLs
// in the order of their distance from the seeds (first found first among
// equals). The lecture's baseline: no priority.
type BFS struct{ best }

// NewBFS returns the breadth-first order.
func NewBFS() *BFS { return &BFS{best{}} }

func (*BFS) Name() string { return "bfs" }

func (o *BFS) Seed(url string) Score {
	s := Score{URL: url, Priority: 1, Why: "seed, depth 0"}
	o.offer(s)
	return s
}

func (o *BFS) Visit(p *Page) []Score {
	d := o.best[p.URL].Depth
	var out []Score
	for _, l := range p.Links {
		if _, known := o.best[l.URL]; known {
			continue
		}
		s := Score{URL: l.URL, Priority: 1 / float64(d+2), Depth: d + 1, Why: fmt.Sprintf("depth %d from the seeds", d+1)}
		o.offer(s)
		out = append(out, s)
	}
	return out
}

// Fish is fish search (De Bra and Post, 1994) as the lecture gives it:
// every seed carries a depth budget D; a link from a relevant page (one
// whose closeness to the topic is above Threshold) keeps its parent's
// budget, a link from an irrelevant one gets the budget minus 1, and at 0
// the fish dies. Children of relevant pages come first (priority 1 +
// d/D), then the others (d/D): the head and the tail of the original list.
type Fish struct {
	best
	Topic     *Topic
	D         int
	Threshold float64
}

// NewFish returns fish search with depth budget d (at least 1).
func NewFish(t *Topic, d int) *Fish { return &Fish{best: best{}, Topic: t, D: max(d, 1)} }

func (*Fish) Name() string { return "fish" }

func (o *Fish) Seed(url string) Score {
	s := Score{URL: url, Priority: 2, Depth: o.D, Why: fmt.Sprintf("seed, depth budget %d", o.D)}
	o.offer(s)
	return s
}

func (o *Fish) Visit(p *Page) []Score {
	parent, ok := o.best[p.URL]
	d := parent.Depth
	if !ok {
		d = o.D // a page nobody scored is a new start
	}
	o.Topic.Observe(p.Terms)
	sim := o.Topic.Similarity(p.Terms)
	rel := sim > o.Threshold
	var out []Score
	for _, l := range p.Links {
		s := Score{URL: l.URL, Depth: d}
		if rel {
			s.Priority = 1 + float64(d)/float64(o.D)
			s.Why = fmt.Sprintf("parent relevant (closeness %s): budget stays %d", f4(sim), d)
		} else {
			s.Depth = d - 1
			s.Priority = float64(s.Depth) / float64(o.D)
			s.Why = fmt.Sprintf("parent irrelevant (closeness %s): budget %d-1", f4(sim), d)
		}
		if s.Depth <= 0 {
			s.Depth, s.Priority, s.Dead = 0, 0, true
			s.Why += ": the fish dies"
		}
		if o.offer(s) {
			out = append(out, o.best[l.URL])
		}
	}
	return out
}

// Shark is shark search (Hersovici et al., 1998): fuzzy relevance instead
// of fish search's yes or no. A child's inherited score is Delta times its
// parent's closeness to the topic when that is above 0, else Delta times
// the parent's own inherited score; its neighbourhood score is
// Beta*anchor + (1-Beta)*context, where anchor is the closeness of the
// anchor text and context is 1 when the anchor is relevant, else the
// closeness of the text around it; the priority is
// Gamma*inherited + (1-Gamma)*neighbourhood. The depth budget is fish
// search's.
type Shark struct {
	best
	Topic              *Topic
	D                  int
	Delta, Beta, Gamma float64
	inherited          map[string]float64
}

// NewShark returns shark search with the paper's constants (decay 0.5,
// anchor weight 0.8, inherited weight 0.5) and depth budget d.
func NewShark(t *Topic, d int) *Shark {
	return &Shark{best: best{}, Topic: t, D: max(d, 1), Delta: 0.5, Beta: 0.8, Gamma: 0.5, inherited: map[string]float64{}}
}

func (*Shark) Name() string { return "shark" }

func (o *Shark) Seed(url string) Score {
	s := Score{URL: url, Priority: 1, Depth: o.D, Why: fmt.Sprintf("seed, depth budget %d", o.D)}
	o.offer(s)
	return s
}

func (o *Shark) Visit(p *Page) []Score {
	parent, ok := o.best[p.URL]
	d := parent.Depth
	if !ok {
		d = o.D
	}
	o.Topic.Observe(p.Terms)
	sim := o.Topic.Similarity(p.Terms)
	inh := o.Delta * sim
	if sim == 0 {
		inh = o.Delta * o.inherited[p.URL]
	}
	var out []Score
	for _, l := range p.Links {
		anchor := o.Topic.Similarity(Terms(l.Anchor))
		ctx := 1.0
		if anchor == 0 {
			ctx = o.Topic.Similarity(Terms(l.Context))
		}
		nb := o.Beta*anchor + (1-o.Beta)*ctx
		s := Score{URL: l.URL, Depth: d, Priority: o.Gamma*inh + (1-o.Gamma)*nb}
		if sim == 0 {
			s.Depth = d - 1
		}
		s.Why = fmt.Sprintf("inherited %s (parent closeness %s), anchor %s, context %s", f4(inh), f4(sim), f4(anchor), f4(ctx))
		if s.Depth <= 0 {
			s.Depth, s.Priority, s.Dead = 0, 0, true
			s.Why += ": depth budget spent"
		}
		if o.offer(s) {
			if inh > o.inherited[l.URL] {
				o.inherited[l.URL] = inh
			}
			out = append(out, o.best[l.URL])
		}
	}
	return out
}

// BestFirst is naive best-first: a link A -> B says A and B share a topic,
// so B's priority is the TF-IDF cosine closeness of A's text to the topic
// (the best over B's parents).
type BestFirst struct {
	best
	Topic *Topic
}

// NewBestFirst returns naive best-first towards t.
func NewBestFirst(t *Topic) *BestFirst { return &BestFirst{best: best{}, Topic: t} }

func (*BestFirst) Name() string { return "best-first" }

func (o *BestFirst) Seed(url string) Score {
	s := Score{URL: url, Priority: 1, Why: "seed"}
	o.offer(s)
	return s
}

func (o *BestFirst) Visit(p *Page) []Score {
	o.Topic.Observe(p.Terms)
	sim := o.Topic.Similarity(p.Terms)
	var out []Score
	for _, l := range p.Links {
		s := Score{URL: l.URL, Priority: sim, Why: fmt.Sprintf("parent %s: TF-IDF closeness %s", p.URL, f4(sim))}
		if o.offer(s) {
			out = append(out, s)
		}
	}
	return out
}
