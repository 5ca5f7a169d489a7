package crawlorder

import "container/heap"

// A Web is what a simulated crawl fetches from: the page at a URL, or
// false for a URL that does not exist.
type Web interface {
	Fetch(url string) (*Page, bool)
}

// CrawlOptions bound a simulated crawl.
type CrawlOptions struct {
	// IndexSize stops the crawl when this many pages are fetched.
	IndexSize int
	// Quota, when not nil, bounds the pages fetched per key (QuotaKey of
	// the URL: its site or segment); a URL over its quota is skipped.
	Quota    map[string]int
	QuotaKey func(url string) string
	// Trace, when not nil, is called with every URL fetched, in order.
	Trace func(s Score)
}

// A CrawlResult is the index a crawl built.
type CrawlResult struct {
	Index   []string // fetched pages, in crawl order
	Skipped int      // URLs passed over because their quota was used up
	Missing int      // URLs that did not exist
}

type entry struct {
	prio float64
	seq  int
	url  string
}

type queue []entry

func (q queue) Len() int { return len(q) }
func (q queue) Less(a, b int) bool {
	if q[a].prio != q[b].prio {
		return q[a].prio > q[b].prio
	}
	return q[a].seq < q[b].seq
}
func (q queue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *queue) Push(x any)   { *q = append(*q, x.(entry)) }
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// Crawl runs order over web from seeds: it fetches the URL of highest
// priority (first found first among equals), tells the order, and takes
// the scores it returns into the queue, until IndexSize pages are fetched
// or the queue is empty. Dead URLs are never fetched. Deterministic.
func Crawl(web Web, seeds []string, o Order, opt CrawlOptions) CrawlResult {
	var q queue
	cur := map[string]Score{}
	seq := map[string]int{}
	done := map[string]bool{}
	used := map[string]int{}
	push := func(s Score) {
		if done[s.URL] {
			return
		}
		if _, ok := seq[s.URL]; !ok {
			seq[s.URL] = len(seq)
		}
		cur[s.URL] = s
		if !s.Dead {
			heap.Push(&q, entry{s.Priority, seq[s.URL], s.URL})
		}
	}
	for _, s := range seeds {
		push(o.Seed(s))
	}
	var res CrawlResult
	for q.Len() > 0 && len(res.Index) < opt.IndexSize {
		e := heap.Pop(&q).(entry)
		s := cur[e.url]
		if done[e.url] || s.Dead || s.Priority != e.prio {
			continue // stale: the URL was rescored since
		}
		done[e.url] = true
		if opt.Quota != nil {
			k := opt.QuotaKey(e.url)
			if used[k] >= opt.Quota[k] {
				res.Skipped++
				continue
			}
			used[k]++
		}
		p, ok := web.Fetch(e.url)
		if !ok {
			res.Missing++
			continue
		}
		res.Index = append(res.Index, e.url)
		if opt.Trace != nil {
			opt.Trace(s)
		}
		for _, s := range o.Visit(p) {
			push(s)
		}
	}
	return res
}

// Replay tells o the fetched pages in order, as the crawl loop's weights
// are set ('sekitei order'): a page with no score yet (neither scored
// before, as scored reports, nor by this replay) is first a seed; then its
// links are scored. It returns the scores set or changed, the last (best)
// per URL, and their URLs in the order first scored. scored may be nil.
func Replay(o Order, pages []*Page, scored func(url string) bool) (map[string]Score, []string) {
	changed := map[string]Score{}
	var seq []string
	note := func(s Score) {
		if _, ok := changed[s.URL]; !ok {
			seq = append(seq, s.URL)
		}
		changed[s.URL] = s
	}
	for _, p := range pages {
		if scored == nil || !scored(p.URL) {
			if _, ok := changed[p.URL]; !ok {
				note(o.Seed(p.URL))
			}
		}
		for _, s := range o.Visit(p) {
			note(s)
		}
	}
	return changed, seq
}
