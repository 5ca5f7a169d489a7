package crawlorder

import (
	"fmt"
	"math"
)

// graph is the known link graph: fetched pages with their links and the
// URLs found so far, numbered in the order they became known.
type graph struct {
	id   map[string]int
	urls []string
	out  [][]int
	seen []bool // fetched
}

func newGraph() *graph { return &graph{id: map[string]int{}} }

func (g *graph) node(u string) int {
	if i, ok := g.id[u]; ok {
		return i
	}
	g.id[u] = len(g.urls)
	g.urls = append(g.urls, u)
	g.out = append(g.out, nil)
	g.seen = append(g.seen, false)
	return len(g.urls) - 1
}

func (g *graph) add(p *Page) {
	i := g.node(p.URL)
	g.seen[i] = true
	dup := map[int]bool{}
	g.out[i] = g.out[i][:0]
	for _, l := range p.Links {
		j := g.node(l.URL)
		if j != i && !dup[j] {
			dup[j] = true
			g.out[i] = append(g.out[i], j)
		}
	}
}

// linkRank is the common part of PageRank and HITS: the graph, and a full
// recomputation every Rebalance fetched pages (the lecture's rebalancing
// of the queue); between them a new URL gets the smallest score known.
type linkRank struct {
	g         *graph
	Rebalance int
	visits    int
	score     []float64
	floor     float64
}

func (r *linkRank) visit(p *Page, compute func() []float64, why func(i int) string) []Score {
	r.g.add(p)
	r.visits++
	if r.visits%max(r.Rebalance, 1) == 0 {
		r.score = compute()
		r.floor = math.Inf(1)
		for _, v := range r.score {
			r.floor = math.Min(r.floor, v)
		}
		out := make([]Score, len(r.score))
		for i, v := range r.score {
			out[i] = Score{URL: r.g.urls[i], Priority: finite(v), Why: why(i)}
		}
		return out
	}
	var out []Score
	for _, l := range p.Links {
		if j := r.g.id[l.URL]; j >= len(r.score) {
			out = append(out, Score{URL: l.URL, Priority: finite(r.floor), Why: "new URL: the least score until the next rebalance"})
		}
	}
	return out
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// PageRank (Brin and Page, 1998) over the known graph: damping 0.85, the
// rank of pages without known out-links spread evenly, power iteration to
// 1e-9 or 100 rounds. Unfetched URLs are nodes without out-links, so a URL
// cited by many important pages comes first.
type PageRank struct {
	linkRank
	Damping float64
}

// NewPageRank recomputes every rebalance fetched pages.
func NewPageRank(rebalance int) *PageRank {
	return &PageRank{linkRank: linkRank{g: newGraph(), Rebalance: rebalance}, Damping: 0.85}
}

func (*PageRank) Name() string { return "pagerank" }

func (o *PageRank) Seed(url string) Score {
	o.g.node(url)
	return Score{URL: url, Priority: 1, Why: "seed"}
}

func (o *PageRank) Visit(p *Page) []Score {
	return o.visit(p, o.compute, func(i int) string {
		return fmt.Sprintf("PageRank over %d known URLs", len(o.g.urls))
	})
}

func (o *PageRank) compute() []float64 {
	n := len(o.g.urls)
	pr := make([]float64, n)
	next := make([]float64, n)
	for i := range pr {
		pr[i] = 1 / float64(n)
	}
	for round := 0; round < 100; round++ {
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i, outs := range o.g.out {
			if len(outs) == 0 {
				dangling += pr[i]
				continue
			}
			share := pr[i] / float64(len(outs))
			for _, j := range outs {
				next[j] += share
			}
		}
		diff := 0.0
		for i := range next {
			v := (1-o.Damping)/float64(n) + o.Damping*(next[i]+dangling/float64(n))
			diff += math.Abs(v - pr[i])
			next[i] = v
		}
		pr, next = next, pr
		if diff < 1e-9 {
			break
		}
	}
	return pr
}

// HITS (Kleinberg, 1999) over the known graph: hub and authority scores by
// mutual reinforcement, 50 rounds, each normalised to length 1; a URL's
// priority is its authority, the citations of good hubs.
type HITS struct{ linkRank }

// NewHITS recomputes every rebalance fetched pages.
func NewHITS(rebalance int) *HITS { return &HITS{linkRank{g: newGraph(), Rebalance: rebalance}} }

func (*HITS) Name() string { return "hits" }

func (o *HITS) Seed(url string) Score {
	o.g.node(url)
	return Score{URL: url, Priority: 1, Why: "seed"}
}

func (o *HITS) Visit(p *Page) []Score {
	return o.visit(p, o.compute, func(i int) string {
		return fmt.Sprintf("HITS authority over %d known URLs", len(o.g.urls))
	})
}

func (o *HITS) compute() []float64 {
	n := len(o.g.urls)
	hub := make([]float64, n)
	auth := make([]float64, n)
	for i := range hub {
		hub[i] = 1
	}
	for round := 0; round < 50; round++ {
		for i := range auth {
			auth[i] = 0
		}
		for i, outs := range o.g.out {
			for _, j := range outs {
				auth[j] += hub[i]
			}
		}
		normalise(auth)
		for i, outs := range o.g.out {
			hub[i] = 0
			for _, j := range outs {
				hub[i] += auth[j]
			}
		}
		normalise(hub)
	}
	return auth
}

func normalise(v []float64) {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	if s == 0 {
		return
	}
	s = math.Sqrt(s)
	for i := range v {
		v[i] /= s
	}
}
