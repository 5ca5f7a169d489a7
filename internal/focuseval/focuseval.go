// Package focuseval is the lecture's evaluation of focused crawling:
// collect an index of fixed size and count the QLinks in it, for every
// crawl order and quota rule, against the baselines "greedy index by site
// quota", "only QLinks" and "all URLs". It runs on a generated web
// (internal/focusweb), where pages have text and links, and on the course
// sites' URL lists, where only URLs are known.
package focuseval

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/sekitei/crawlkit/internal/focusweb"
	"github.com/sekitei/crawlkit/pkg/crawlorder"
	"github.com/sekitei/crawlkit/pkg/sekitei"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// Options of an evaluation.
type Options struct {
	IndexSize int     // pages in the index (default: a fifth of the URLs)
	MinQuota  float64 // MIN_QUOTA; 0: the one at which the quotas add up to IndexSize
	Topic     string  // topic of fish, shark and best-first (default: the web's first topic)
	Depth     int     // fish and shark depth budget
	Coef      float64 // qlink-links coefficient
	Sample    int     // URLs per site the segments are built from (default 1000)
	Seed      uint64
	// Orders and Quotas choose the rows after the comparison and the
	// baselines: every order of Orders under every rule of Quotas (nil:
	// all that the web allows).
	Orders, Quotas []string
}

// pick returns the names of want that all allows, or all when want is
// empty; a name all does not hold is an error naming what is allowed.
func pick(what string, want, all []string) ([]string, error) {
	if len(want) == 0 {
		return all, nil
	}
	for _, w := range want {
		ok := false
		for _, a := range all {
			ok = ok || w == a
		}
		if !ok {
			return nil, fmt.Errorf("%s %q: want one of %s here", what, w, strings.Join(all, ", "))
		}
	}
	return want, nil
}

// A Row is one line of the table.
type Row struct {
	Method    string // what collected the index
	Order     string
	Quota     string
	MinQuota  float64
	Index     int // pages in the index
	QLinks    int // QLinks in the index
	AllQLinks int
	Relevant  int // pages on the topic in the index (-1: not known)
	AllRel    int
}

// Share is the share of all QLinks the index reached.
func (r Row) Share() float64 { return ratio(r.QLinks, r.AllQLinks) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// segmentation is the segments of every site, built from a sample of its
// URLs and the known QLinks, with what the quota rules weigh.
type segmentation struct {
	sites map[string]*sekitei.Site
	cache map[string]string
}

func (s *segmentation) key(u string) (string, string) {
	if k, ok := s.cache[u]; ok {
		return k, k
	}
	h, _ := urlx.Host(u)
	k := h + " .*"
	if site := s.sites[h]; site != nil {
		if seg, _ := site.Assign(u); seg != nil {
			k = h + " " + seg.Regex
		}
	}
	s.cache[u] = k
	return k, k
}

func host(u string) string { h, _ := urlx.Host(u); return h }

// segment builds the segments of each site from up to sample of its known
// URLs (drawn with seed) and the visit log.
func segment(byHost map[string][]string, visits map[string]float64, sample int, seed uint64) (*segmentation, []string, error) {
	s := &segmentation{sites: map[string]*sekitei.Site{}, cache: map[string]string{}}
	var known []string
	r := rand.New(rand.NewPCG(seed, 0x5a4b))
	for _, h := range sortedKeys(byHost) {
		us := append([]string(nil), byHost[h]...)
		r.Shuffle(len(us), func(i, j int) { us[i], us[j] = us[j], us[i] })
		if len(us) > sample {
			us = us[:sample]
		}
		ex := make([]sekitei.Example, 0, len(us))
		in := map[string]bool{}
		for _, u := range us {
			ex = append(ex, sekitei.Example{URL: u, Good: visits[u] > 0})
			in[u] = true
		}
		for _, u := range sortedKeys(visits) {
			if !in[u] && host(u) == h {
				ex = append(ex, sekitei.Example{URL: u, Good: true})
			}
		}
		site, err := sekitei.Build(h, ex, sekitei.Options{Seed: seed})
		if err != nil {
			continue // a site without usable URLs has no segments: it is one
		}
		s.sites[h] = site
		for _, e := range ex {
			known = append(known, e.URL)
		}
	}
	return s, known, nil
}

// units returns the sites or segments of the rule with their known QLinks
// and visits, and the key of a URL.
func (s *segmentation) units(rule string, urls []string, visits map[string]float64) ([]crawlorder.Unit, func(string) string) {
	keyOf := host
	if crawlorder.PerSegmentRule(rule) {
		keyOf = func(u string) string { k, _ := s.key(u); return k }
	}
	by := map[string]*crawlorder.Unit{}
	for _, u := range urls {
		k := keyOf(u)
		if by[k] == nil {
			by[k] = &crawlorder.Unit{Key: k}
		}
		if v := visits[u]; v > 0 {
			by[k].QLinks++
			by[k].Visits += v
		}
	}
	var us []crawlorder.Unit
	for _, k := range sortedKeys(by) {
		us = append(us, *by[k])
	}
	return us, keyOf
}

func sortedKeys[T any](m map[string]T) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sortStrings(ks)
	return ks
}

// run is one crawl: an order under a quota rule.
type run struct {
	web    crawlorder.Web
	seeds  []string
	urls   []string // every URL, for the quota units
	visits map[string]float64
	seg    *segmentation
	stats  *crawlorder.QLinkStats
	opt    Options
	topic  string
}

func (e *run) crawl(order, rule string) (crawlorder.CrawlResult, float64, error) {
	cfg := crawlorder.Config{Stats: e.stats, Depth: e.opt.Depth, Coef: e.opt.Coef, Rebalance: max(e.opt.IndexSize/10, 1)}
	if crawlorder.NeedsTopic(order) {
		t, err := crawlorder.NewTopic(e.topic)
		if err != nil {
			return crawlorder.CrawlResult{}, 0, err
		}
		cfg.Topic = t
	}
	o, err := crawlorder.New(order, cfg)
	if err != nil {
		return crawlorder.CrawlResult{}, 0, err
	}
	co := crawlorder.CrawlOptions{IndexSize: e.opt.IndexSize}
	mq := 0.0
	if rule != crawlorder.QuotaNone {
		// Quotas are known from what the crawler knows: the sampled URLs and the log.
		units, keyOf := e.seg.units(rule, e.urls, e.visits)
		mq = e.opt.MinQuota
		if mq == 0 {
			if mq, err = crawlorder.MinQuotaFor(rule, units, e.opt.IndexSize); err != nil {
				return crawlorder.CrawlResult{}, 0, err
			}
		}
		if co.Quota, err = crawlorder.Quotas(rule, units, mq); err != nil {
			return crawlorder.CrawlResult{}, 0, err
		}
		co.QuotaKey = keyOf
	}
	return crawlorder.Crawl(e.web, e.seeds, o, co), mq, nil
}

// Web evaluates every order under every quota rule on a generated web.
func Web(w *focusweb.Web, opt Options) ([]Row, error) {
	orders, err := pick("order", opt.Orders, crawlorder.Names)
	if err != nil {
		return nil, err
	}
	rules, err := pick("quota rule", opt.Quotas, crawlorder.QuotaRules)
	if err != nil {
		return nil, err
	}
	if opt.IndexSize <= 0 {
		opt.IndexSize = len(w.URLs) / 5
	}
	if opt.Sample <= 0 {
		opt.Sample = 1000
	}
	visits := w.Visits()
	if len(visits) == 0 {
		return nil, crawlorder.ErrNoQLinks
	}
	topic := opt.Topic
	if topic == "" {
		topic = strings.Join(focusweb.Topics[0], " ")
	}
	tp, err := crawlorder.NewTopic(topic)
	if err != nil {
		return nil, err
	}
	byHost := map[string][]string{}
	for _, u := range w.URLs {
		byHost[w.Pages[u].Host] = append(byHost[w.Pages[u].Host], u)
	}
	seg, known, err := segment(byHost, visits, opt.Sample, opt.Seed)
	if err != nil {
		return nil, err
	}
	stats, err := crawlorder.NewQLinkStats(known, visits, seg.key)
	if err != nil {
		return nil, err
	}
	// A page is on the topic when its words are mostly the topic's.
	topicWords := map[string]bool{}
	for _, t := range tp.Words() {
		topicWords[t] = true
	}
	onTopic := func(p *focusweb.Page) bool {
		n := 0
		for _, t := range p.Terms {
			if topicWords[t] {
				n++
			}
		}
		return len(p.Terms) > 0 && 4*n >= len(p.Terms)
	}
	allQ, allRel := 0, 0
	for _, p := range w.Pages {
		if p.Visits > 0 {
			allQ++
		}
		if onTopic(p) {
			allRel++
		}
	}
	count := func(index []string) (q, rel int) {
		for _, u := range index {
			p := w.Pages[u]
			if p.Visits > 0 {
				q++
			}
			if onTopic(p) {
				rel++
			}
		}
		return
	}
	e := &run{web: w, seeds: w.Seeds, urls: known, visits: visits, seg: seg, stats: stats, opt: opt, topic: topic}
	var rows []Row
	add := func(method, order, rule string) error {
		res, mq, err := e.crawl(order, rule)
		if err != nil {
			return err
		}
		q, rel := count(res.Index)
		rows = append(rows, Row{Method: method, Order: order, Quota: rule, MinQuota: mq, Index: len(res.Index),
			QLinks: q, AllQLinks: allQ, Relevant: rel, AllRel: allRel})
		return nil
	}
	// The lecture's comparison.
	if err := add("Sekitei: quota by segments", "bfs", crawlorder.QuotaSegments); err != nil {
		return nil, err
	}
	if err := add("greedy index, site quota by visits", "bfs", crawlorder.QuotaGreedy); err != nil {
		return nil, err
	}
	knownRel := 0
	for u := range visits {
		if onTopic(w.Pages[u]) {
			knownRel++
		}
	}
	rows = append(rows,
		Row{Method: "only QLinks (the visit log)", Order: "-", Quota: "-", Index: len(visits), QLinks: len(visits), AllQLinks: allQ, Relevant: knownRel, AllRel: allRel},
		Row{Method: "all URLs", Order: "-", Quota: "-", Index: len(w.URLs), QLinks: allQ, AllQLinks: allQ, Relevant: allRel, AllRel: allRel})
	// Every order under every rule (those chosen).
	for _, order := range orders {
		for _, rule := range rules {
			if err := add("", order, rule); err != nil {
				return nil, err
			}
		}
	}
	return rows, nil
}

// urlList is a web of URLs only: no page links anywhere, so a crawl
// takes its seeds, all the URLs, in the order's priority.
type urlList map[string]bool

func (l urlList) Fetch(u string) (*crawlorder.Page, bool) {
	if !l[u] {
		return nil, false
	}
	return &crawlorder.Page{URL: u}, true
}

// URLs evaluates on a site known only by its URLs (the course's lists):
// the first half of the good URLs is the visit log, the index is chosen
// among all URLs. Orders that need text or links are left out.
func URLs(good, general []string, opt Options) ([]Row, error) {
	// The orders that need no text or links; by default without a quota
	// and with Sekitei's.
	orders, err := pick("order", opt.Orders, []string{"bfs", "qlink-site", "qlink-segment"})
	if err != nil {
		return nil, err
	}
	rules := []string{crawlorder.QuotaNone, crawlorder.QuotaSegments}
	if len(opt.Quotas) > 0 {
		if rules, err = pick("quota rule", opt.Quotas, crawlorder.QuotaRules); err != nil {
			return nil, err
		}
	}
	if len(good) < 2 {
		return nil, fmt.Errorf("%d good URLs: want at least 2, half of them for the visit log", len(good))
	}
	all := append(append([]string(nil), good...), general...)
	r := rand.New(rand.NewPCG(opt.Seed, 0x0415))
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	isGood := map[string]bool{}
	for _, u := range good {
		isGood[u] = true
	}
	visits := map[string]float64{}
	for _, u := range good[:len(good)/2] {
		visits[u] = 1
	}
	if opt.IndexSize <= 0 {
		opt.IndexSize = len(all) / 5
	}
	if opt.Sample <= 0 {
		opt.Sample = 1000
	}
	byHost := map[string][]string{}
	list := urlList{}
	var urls []string
	for _, u := range all {
		if list[u] {
			continue
		}
		list[u] = true
		urls = append(urls, u)
		byHost[host(u)] = append(byHost[host(u)], u)
	}
	seg, known, err := segment(byHost, visits, opt.Sample, opt.Seed)
	if err != nil {
		return nil, err
	}
	stats, err := crawlorder.NewQLinkStats(known, visits, seg.key)
	if err != nil {
		return nil, err
	}
	e := &run{web: list, seeds: urls, urls: known, visits: visits, seg: seg, stats: stats, opt: opt}
	allQ := 0
	for u := range list {
		if isGood[u] {
			allQ++
		}
	}
	var rows []Row
	add := func(method, order, rule string) error {
		res, mq, err := e.crawl(order, rule)
		if err != nil {
			return err
		}
		q := 0
		for _, u := range res.Index {
			if isGood[u] {
				q++
			}
		}
		rows = append(rows, Row{Method: method, Order: order, Quota: rule, MinQuota: mq, Index: len(res.Index), QLinks: q, AllQLinks: allQ, Relevant: -1})
		return nil
	}
	if err := add("Sekitei: quota by segments", "bfs", crawlorder.QuotaSegments); err != nil {
		return nil, err
	}
	if err := add("greedy index, site quota by visits", "bfs", crawlorder.QuotaGreedy); err != nil {
		return nil, err
	}
	rows = append(rows,
		Row{Method: "only QLinks (the visit log)", Order: "-", Quota: "-", Index: len(visits), QLinks: len(visits), AllQLinks: allQ, Relevant: -1},
		Row{Method: "all URLs", Order: "-", Quota: "-", Index: len(list), QLinks: allQ, AllQLinks: allQ, Relevant: -1})
	for _, order := range orders {
		for _, rule := range rules {
			if err := add("", order, rule); err != nil {
				return nil, err
			}
		}
	}
	return rows, nil
}

// WriteTable prints rows as a Markdown table.
func WriteTable(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| method | order | quota | MIN_QUOTA | index size | QLinks in index | share of QLinks | pages on the topic |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		method := r.Method
		if method == "" {
			method = r.Order + ", " + r.Quota
		}
		mq := "-"
		if r.MinQuota > 0 {
			mq = fmt.Sprintf("%.1f", r.MinQuota)
		}
		rel := "-"
		if r.Relevant >= 0 && r.AllRel > 0 {
			rel = fmt.Sprintf("%d (%.3f)", r.Relevant, ratio(r.Relevant, r.AllRel))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %.3f | %s |\n", method, r.Order, r.Quota, mq, r.Index, r.QLinks, r.Share(), rel)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
