// Command changebench compares two change detectors of the crawl queue on
// a loopback site whose true article-change rates are known: the byte
// digest of the payload, and the main-text signature (text_simhash) that
// fetch records. Every page carries a clock, a visitor counter and a
// rotating banner that differ on every request; some pages never change
// their article, the others change it as a Poisson process of a known rate.
// Each turn fetches every page with pkg/fetch (the fetcher's own digest
// and signature) and folds the records into two recrawl queues
// (pkg/recrawl/queue): one sees the records as they are, the other without
// text_simhash, so it decides by digest. At the end it prints, per class of
// pages, the true rate and both queues' estimated rates as a Markdown
// table.
//
//	go run ./internal/cmd/changebench [-days 30] [-every 3h] [-pages 10] [-seed 1]
//
// Time is virtual: turn k happens at k times -every after the start, the
// server renders each page as it is at that moment, and the queues are
// told that time, so the run takes seconds, not months.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sekitei/crawlkit/pkg/fetch"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
)

// class is a kind of page: how often its article changes.
type class struct {
	name string
	rate float64 // true article changes per day
}

var classes = []class{
	{"clock only (article never changes)", 0},
	{"article changes 0.25/day", 0.25},
	{"article changes 1/day", 1},
	{"article changes 4/day", 4},
}

// page is one page of the site: its class and the times its article
// changed, drawn in advance from the seed.
type page struct {
	path    string
	class   int
	changes []time.Time
}

func (p *page) version(at time.Time) int {
	return sort.Search(len(p.changes), func(i int) bool { return p.changes[i].After(at) })
}

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	days := flag.Float64("days", 30, "days of virtual time crawled")
	every := flag.Duration("every", 3*time.Hour, "virtual time between two fetches of every page")
	perClass := flag.Int("pages", 10, "pages of each class")
	seed := flag.Uint64("seed", 1, "seed of the article changes")
	flag.Parse()
	res, err := measure(*days, *every, *perClass, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "changebench:", err)
		os.Exit(1)
	}
	res.print()
}

// row is one class of pages: its mean true rate and the two estimates.
type row struct {
	class              class
	truth, digest, sig float64
	within, pages      int // pages whose signature estimate is within 25% of their true rate
}

type result struct {
	pages, perClass, turns int
	requests               int64
	every                  time.Duration
	days                   float64
	seed                   uint64
	rows                   []row
}

func measure(days float64, every time.Duration, perClass int, seed uint64) (*result, error) {
	if days <= 0 || every <= 0 || perClass <= 0 {
		return nil, fmt.Errorf("want -days > 0, -every > 0, -pages > 0")
	}
	end := start.Add(time.Duration(days * float64(24*time.Hour)))
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var pages []*page
	for c, cl := range classes {
		for i := 0; i < perClass; i++ {
			p := &page{path: fmt.Sprintf("/c%d/p%d.html", c, i), class: c}
			for t := start; cl.rate > 0; {
				t = t.Add(time.Duration(rng.ExpFloat64() / cl.rate * float64(24*time.Hour)))
				if t.After(end) {
					break
				}
				p.changes = append(p.changes, t)
			}
			pages = append(pages, p)
		}
	}

	// The site renders each page at the turn's virtual time.
	var now atomic.Int64
	var requests atomic.Int64
	byPath := map[string]*page{}
	for _, p := range pages {
		byPath[p.path] = p
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := byPath[r.URL.Path]
		if p == nil {
			http.NotFound(w, r)
			return
		}
		at := time.Unix(0, now.Load()).UTC()
		n := requests.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, render(p, at, n))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	tmp, err := os.MkdirTemp("", "changebench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	opts := queue.Options{NoSync: true}
	bySig, err := queue.Open(filepath.Join(tmp, "signature.db"), opts)
	if err != nil {
		return nil, err
	}
	defer bySig.Close()
	byDigest, err := queue.Open(filepath.Join(tmp, "digest.db"), opts)
	if err != nil {
		return nil, err
	}
	defer byDigest.Close()

	turns := 0
	for at := start; !at.After(end); at = at.Add(every) {
		now.Store(at.UnixNano())
		recs, err := fetchAll(base, pages)
		if err != nil {
			return nil, err
		}
		var sig, dig queue.Batch
		sig.Now, dig.Now = at, at
		for _, r := range recs {
			f, err := queue.ParseFetch(r)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", r.URL(), err)
			}
			if f.Failed() || !f.HasSim {
				return nil, fmt.Errorf("%s: fetch failed or no text_simhash: %s", r.URL(), r.AppendJSON(nil))
			}
			f.At = at
			sig.Fetches = append(sig.Fetches, f)
			f.HasSim = false
			dig.Fetches = append(dig.Fetches, f)
		}
		id := fmt.Sprintf("%06d-%s", turns, at.Format("20060102T150405Z"))
		if _, err := bySig.Apply(id, sig); err != nil {
			return nil, err
		}
		if _, err := byDigest.Apply(id, dig); err != nil {
			return nil, err
		}
		turns++
	}

	urls := make([]string, len(pages))
	for i, p := range pages {
		urls[i] = base + p.path
	}
	sigX, err := bySig.Explain(urls, queue.NextOptions{Now: end, N: 1})
	if err != nil {
		return nil, err
	}
	digX, err := byDigest.Explain(urls, queue.NextOptions{Now: end, N: 1})
	if err != nil {
		return nil, err
	}
	res := &result{pages: len(pages), perClass: perClass, turns: turns, requests: requests.Load(), every: every, days: days, seed: seed}
	for c, cl := range classes {
		rw := row{class: cl}
		for i, p := range pages {
			if p.class != c {
				continue
			}
			// The page's realised rate: its changes over the crawl.
			rate := float64(len(p.changes)) / days
			rw.truth += rate
			rw.sig += sigX[i].Delta
			rw.digest += digX[i].Delta
			if rate > 0 && math.Abs(sigX[i].Delta-rate) <= 0.25*rate {
				rw.within++
			}
			rw.pages++
		}
		n := float64(rw.pages)
		rw.truth, rw.sig, rw.digest = rw.truth/n, rw.sig/n, rw.digest/n
		res.rows = append(res.rows, rw)
	}
	return res, nil
}

func (res *result) print() {
	fmt.Printf("%d pages (%d a class), fetched every %s for %g days (%d turns, %d requests), seed %d\n\n",
		res.pages, res.perClass, res.every, res.days, res.turns, res.requests, res.seed)
	fmt.Println("| pages | true rate /day | byte digest: estimated /day | ratio | main-text signature: estimated /day | ratio | signature within 25% |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, rw := range res.rows {
		ratio := func(v float64) string {
			if rw.truth == 0 {
				return "—"
			}
			return fmt.Sprintf("%.2f", v/rw.truth)
		}
		share := "—"
		if rw.class.rate > 0 {
			share = fmt.Sprintf("%d of %d", rw.within, rw.pages)
		}
		fmt.Printf("| %s | %.3f | %.3f | %s | %.3f | %s | %s |\n", rw.class.name, rw.truth, rw.digest, ratio(rw.digest), rw.sig, ratio(rw.sig), share)
	}
}

// fetchAll fetches every page once with pkg/fetch and returns the records.
func fetchAll(base string, pages []*page) ([]*record.Record, error) {
	var mu sync.Mutex
	var out []*record.Record
	cfg := fetch.Config{
		Types: []string{"html"}, AllowPrivate: true, IgnoreRobots: true, Delay: fetch.NoDelay,
		Workers: 8, PerHost: 8, Timeout: 10 * time.Second, ConnectTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
		Emit: func(r *record.Record) error {
			mu.Lock()
			out = append(out, r)
			mu.Unlock()
			return nil
		},
	}
	f, err := fetch.New(cfg)
	if err != nil {
		return nil, err
	}
	err = f.Run(context.Background(), func(add func(*record.Record) error) error {
		for i, p := range pages {
			r := record.New(base + p.path)
			r.Line = i + 1
			if err := add(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && len(out) != len(pages) {
		err = fmt.Errorf("%d records for %d pages", len(out), len(pages))
	}
	return out, err
}

// words is the vocabulary of the articles.
var words = strings.Fields(`river market council station harbour winter garden museum railway
bridge theatre library forest mountain village festival orchestra harvest engine factory
school hospital airport island valley castle tower lantern meadow canyon glacier desert
parliament minister budget reform election treaty summit border customs tariff export
import currency inflation pension salary contract strike union court judge verdict appeal
police witness inquiry report scandal museum painting sculpture novel poet concert premiere
season league match striker keeper coach transfer trophy record stadium crowd referee`)

// render writes page p as served at time at, for the n-th request: a
// header menu, a rotating banner, a clock and a counter around the article
// of the page's current version.
func render(p *page, at time.Time, n int64) string {
	v := p.version(at)
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>Page %s</title></head><body>\n", p.path)
	b.WriteString(`<header><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav></header>` + "\n")
	fmt.Fprintf(&b, `<aside><a href="/promo/%d">Offer %d: everything must go</a></aside>`+"\n", n%7, n%7)
	fmt.Fprintf(&b, "<main><p>Updated %s, %s visitors today</p>\n<article>\n",
		at.Format("2 January 2006 15:04:05"), strconv.FormatInt(1000+n*37%9000, 10))
	h := fnvMix(p.path, v)
	rng := rand.New(rand.NewPCG(h, h^0xa11ce))
	for para := 0; para < 3; para++ {
		b.WriteString("<p>")
		for i := 0; i < 40; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		b.WriteString(".</p>\n")
	}
	fmt.Fprintf(&b, "</article></main>\n<footer>Served at %s</footer></body></html>\n", at.Format(time.RFC3339))
	return b.String()
}

func fnvMix(s string, v int) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return (h ^ uint64(v)) * 1099511628211
}
