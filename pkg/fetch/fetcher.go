// Package fetch is a polite, robust and fast HTTP fetcher for crawling: the
// crawler of the 1998 Google architecture (a URL queue feeding hundreds of
// concurrent connections, a DNS cache) with today's manners.
//
// A Fetcher reads URL records, keeps one queue per host, and runs a fixed
// number of workers over a heap of hosts ordered by when each may next be
// asked, so hosts interleave and a slow host holds only its own queue.
// Per host it honours robots.txt (RFC 9309, cached for RobotsTTL), a delay
// between requests (the larger of Delay and the robots Crawl-delay, capped)
// and PerHost connections. Every hop of a redirect chain is a request of its
// own, scheduled, checked against robots.txt and politeness like any other.
// 429 and 503 answers and network errors are retried with exponential
// backoff, honouring Retry-After. Addresses are checked after DNS on every
// connection, so no redirect can reach a private network (SSRF) unless
// AllowPrivate. Queued records beyond QueueMemory go to a spill file, so
// memory stays bounded for any number of input URLs.
//
// Each input record comes out once, with the fetch's fields set (see
// docs/design.md): status, final_url, fetched_at, content_type, length, digest,
// title, links, canonical, redirects, error, warc_file, warc_offset,
// elapsed_ms, etag, last_modified, truncated. Fields it does not own pass
// through.
package fetch

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"errors"
	"hash/fnv"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sekitei/crawlkit/pkg/fetch/ctype"
	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/robots"
	"github.com/sekitei/crawlkit/pkg/urlnorm"
	"github.com/sekitei/crawlkit/pkg/urlx"
	"github.com/sekitei/crawlkit/pkg/weburl"
	"golang.org/x/net/publicsuffix"
	"golang.org/x/sys/unix"
)

// Stats count what a run did; read them with Fetcher.Stats.
type Stats struct {
	Input       int64 // records taken in
	Done        int64 // records written out
	OK          int64 // records with a 2xx or 304 final status and no error
	Errors      int64 // records with an error
	Requests    int64 // HTTP requests made, robots.txt included
	Bytes       int64 // body bytes received
	Retries     int64
	Interrupted int64 // records not fetched because the run stopped
	LinksCut    int64 // links left out of records by Config.MaxLinks
	ErrorCodes  map[string]int64
	Render      RenderStats // pages rendered and the browser's requests
}

// A Fetcher fetches a stream of URL records. Make one with New and call Run
// once.
type Fetcher struct {
	cfg   Config
	agent string // robots product token
	norm  *urlnorm.Normalizer
	types *ctype.Policy
	// largeDecodes holds the buffers for bodies that decode past smallDecode.
	largeDecodes chan *[]byte
	proxy        func(*url.URL) (*url.URL, error) // nil: direct
	transport    *http.Transport
	res          *resolver
	// backoffOnly: HostRates is Config.Backoff's estimator, which only
	// slows hosts down; the delay and Crawl-delay pace them as without it.
	backoffOnly bool

	mu       sync.Mutex
	hosts    map[string]*hostQ
	slots    map[string]*slot
	getNext  map[string]time.Time // when Get may next ask each host
	ready    readyHeap
	seq      uint64
	wake     chan struct{} // closed and replaced when the queues change
	pending  int           // items queued or in flight
	memUsed  int64
	spill    spillFile
	seen     map[uint64]int // hashes of the normalised input URLs, to their lines
	inputEnd bool
	fatal    error
	payloads payloadIndex // the payloads archived whole, for revisits

	emitMu    sync.Mutex
	rendering renderState
	stopping  atomic.Bool

	stats struct {
		input, done, ok, errors, requests, bytes, retries, interrupted, linksCut atomic.Int64
		mu                                                                       sync.Mutex
		codes                                                                    map[string]int64
	}
}

// New returns a Fetcher for cfg.
func New(cfg Config) (*Fetcher, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	f := &Fetcher{
		cfg:   cfg,
		agent: robots.ProductToken(cfg.UserAgent),
		norm:  cfg.Normalizer,
		hosts: make(map[string]*hostQ),
		seen:  make(map[uint64]int),
		slots: make(map[string]*slot),
		wake:  make(chan struct{}),
	}
	if f.norm == nil {
		f.norm = urlnorm.New(urlnorm.Options{})
	}
	if f.cfg.HostRates == nil && f.cfg.Backoff {
		rate := math.Inf(1) // no delay: no pace until a host shows distress
		if f.cfg.Delay > 0 {
			rate = 1 / f.cfg.Delay.Seconds()
		}
		f.cfg.HostRates = hostrate.New(hostrate.Config{Initial: rate, Ceiling: rate, DecreaseFromUse: true})
		f.backoffOnly = true
	}
	f.types = ctype.New(cfg.Types)
	f.largeDecodes = make(chan *[]byte, f.cfg.LargeDecodes)
	for i := 0; i < f.cfg.LargeDecodes; i++ {
		f.largeDecodes <- new([]byte)
	}
	proxy, proxies, err := proxyFunc(&f.cfg)
	if err != nil {
		return nil, err
	}
	tc, err := tlsConfig(&f.cfg)
	if err != nil {
		return nil, err
	}
	f.proxy = proxy
	f.res = newResolver(cfg.LookupIP, cfg.DNSTTL)
	f.transport = newTransport(&f.cfg, f.res, proxy, proxies, tc)
	f.stats.codes = make(map[string]int64)
	return f, nil
}

// Stats returns the counts so far; safe to call while Run runs.
func (f *Fetcher) Stats() Stats {
	s := Stats{
		Input: f.stats.input.Load(), Done: f.stats.done.Load(), OK: f.stats.ok.Load(),
		Errors: f.stats.errors.Load(), Requests: f.stats.requests.Load(), Bytes: f.stats.bytes.Load(),
		Retries: f.stats.retries.Load(), Interrupted: f.stats.interrupted.Load(), LinksCut: f.stats.linksCut.Load(),
		ErrorCodes: map[string]int64{},
	}
	f.stats.mu.Lock()
	for k, v := range f.stats.codes {
		s.ErrorCodes[k] = v
	}
	f.stats.mu.Unlock()
	s.Render = f.renderStats()
	return s
}

// openSpill opens the run's spill file in dir (empty: the system's temp
// directory) without a name: the open file serves the run, and a run
// killed (kill -9, a crash) at any moment leaves nothing behind
// (O_TMPFILE). Where the file system has no unnamed files, a named one is
// unlinked as soon as it is made; a kill between the two leaves it.
func openSpill(dir string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if sf, err := os.OpenFile(dir, os.O_RDWR|unix.O_TMPFILE, 0o600); err == nil {
		return sf, nil
	}
	sf, err := os.CreateTemp(dir, "fetch-spill-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(sf.Name()); err != nil {
		sf.Close()
		return nil, err
	}
	return sf, nil
}

// stopGrace is how long requests in flight may run on after ctx is
// cancelled before they are cut off.
var stopGrace = 1500 * time.Millisecond

// Run fetches every record that feed passes to add, and returns when all
// are written out, or when ctx is cancelled: then the requests in flight
// get a short grace, and every record not fetched is written with error
// "interrupted". feed runs in its own goroutine; add returns an error
// once the run is stopping, which feed should return.
func (f *Fetcher) Run(ctx context.Context, feed func(add func(*record.Record) error) error) error {
	sf, err := openSpill(f.cfg.SpillDir)
	if err != nil {
		return err
	}
	f.spill.f = sf
	defer f.spill.close()
	defer f.transport.CloseIdleConnections()

	// Requests get their own context, cut off stopGrace after ctx ends.
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	go func() {
		<-runCtx.Done()
		f.stopping.Store(true)
		f.signal()
		select {
		case <-time.After(stopGrace):
			cancelReqs()
		case <-reqCtx.Done():
		}
	}()

	feedErr := make(chan error, 1)
	go func() {
		err := feed(func(rec *record.Record) error {
			if runCtx.Err() != nil {
				return runCtx.Err()
			}
			return f.add(rec)
		})
		f.mu.Lock()
		f.inputEnd = true
		f.mu.Unlock()
		f.signal()
		feedErr <- err
	}()

	var wg sync.WaitGroup
	for i := 0; i < f.cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.worker(runCtx, reqCtx, cancelRun)
		}()
	}
	wg.Wait()
	var ferr error
	if ctx.Err() != nil || f.stopping.Load() {
		// Let the feed see the stop before draining what it queued.
		select {
		case ferr = <-feedErr:
		case <-time.After(stopGrace):
		}
		f.drainInterrupted()
	} else {
		ferr = <-feedErr
	}
	f.mu.Lock()
	fatal := f.fatal
	f.mu.Unlock()
	if fatal != nil {
		return fatal
	}
	if ferr != nil && !errors.Is(ferr, context.Canceled) {
		return ferr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

func (f *Fetcher) signal() {
	f.mu.Lock()
	close(f.wake)
	f.wake = make(chan struct{})
	f.mu.Unlock()
}

// signalLocked is signal for callers holding f.mu.
func (f *Fetcher) signalLocked() {
	close(f.wake)
	f.wake = make(chan struct{})
}

func (f *Fetcher) setFatal(err error) {
	f.mu.Lock()
	if f.fatal == nil {
		f.fatal = err
	}
	f.mu.Unlock()
}

// add checks a record and queues it; a record that cannot be fetched is
// written out at once.
func (f *Fetcher) add(rec *record.Record) error {
	f.stats.input.Add(1)
	it, host, cerr := f.check(rec)
	if cerr != nil {
		return f.finish(rec, nil, cerr)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.host(host)
	if f.cfg.HostBudget > 0 && h.accepted >= f.cfg.HostBudget {
		f.mu.Unlock()
		err := f.finish(rec, nil, errorf(CodeBudget, "more than %d URLs for host %s (--host-budget)", f.cfg.HostBudget, host))
		f.mu.Lock()
		return err
	}
	h.accepted++
	f.pending++
	if len(h.spilled) > 0 || f.memUsed+it.size > f.cfg.QueueMemory {
		ref, err := f.spill.write(rec)
		if err != nil {
			f.pending--
			return err
		}
		h.spilled = append(h.spilled, ref)
	} else {
		f.memUsed += it.size
		h.items = append(h.items, it)
	}
	f.maybeReady(h)
	f.signalLocked()
	return nil
}

func (f *Fetcher) host(key string) *hostQ {
	h := f.hosts[key]
	if h == nil {
		h = &hostQ{key: key, heapIdx: -1, delay: f.cfg.Delay}
		if f.cfg.HostRates != nil && !f.backoffOnly {
			h.delay = 0 // the estimator paces the host
		}
		switch f.cfg.QueueBy {
		case QueueByHost:
			h.slot = f.slotFor("host:" + key)
		case QueueByDomain:
			h.slot = f.slotFor("domain:" + registeredDomain(key))
		}
		f.hosts[key] = h
	}
	return h
}

func (f *Fetcher) slotFor(key string) *slot {
	s := f.slots[key]
	if s == nil {
		s = &slot{key: key}
		f.slots[key] = s
	}
	return s
}

// registeredDomain is the public suffix plus one label of a host[:port]
// (golang.org/x/net/publicsuffix); an IP address or a bare suffix is its
// own domain.
func registeredDomain(hostport string) string {
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	if _, err := netip.ParseAddr(name); err == nil {
		return name
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(name); err == nil {
		return d
	}
	return name
}

// resolveSlot finds the address of a host queued by IP and gives it the
// slot of that address; a name that does not resolve gets a slot of its
// own, and its requests fail with the DNS error as usual.
func (f *Fetcher) resolveSlot(ctx context.Context, h *hostQ) {
	name := h.key
	if hn, _, err := net.SplitHostPort(h.key); err == nil {
		name = hn
	}
	key := "host:" + h.key
	if addrs, err := f.res.resolve(ctx, strings.Trim(name, "[]")); err == nil && len(addrs) > 0 {
		key = "ip:" + addrs[0].Unmap().String()
	}
	f.mu.Lock()
	h.slot = f.slotFor(key)
	h.resolving = false
	f.mu.Unlock()
}

// check validates a record's URL and the bot-trap limits.
func (f *Fetcher) check(rec *record.Record) (*item, string, *codedError) {
	raw := strings.TrimSpace(rec.URL())
	if raw == "" {
		return nil, "", errorf(CodeURL, "empty URL")
	}
	if len(raw) > 8192 {
		return nil, "", errorf(CodeURL, "URL longer than 8192 bytes")
	}
	// What goes on the wire is the URL as the URL Standard parses and
	// serialises it, as a browser would request it: never a re-ordered
	// query or a stripped parameter (the key, urlnorm's, is only for
	// de-duplication).
	u, err := weburl.Parse(raw)
	if errors.Is(err, weburl.ErrScheme) {
		return nil, "", errorf(CodeURL, "%v", urlx.ErrScheme)
	}
	if err != nil {
		return nil, "", errorf(CodeURL, "%v", err)
	}
	if n := len(u.String()); n > 8192 {
		return nil, "", errorf(CodeURL, "URL longer than 8192 bytes")
	}
	if cerr := f.trap(u); cerr != nil {
		return nil, "", cerr
	}
	if mt, ok := f.types.AcceptsPath(u.Path); !ok {
		return nil, "", errorf(CodeType, "%s by its extension: not requested (--types)", mt)
	}
	return &item{rec: rec, u: u, size: itemSize(rec)}, hostKey(u), nil
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// hostKey is the host[:port] a URL's queue, robots.txt and pace belong to:
// the Standard's host (lower case, punycode, no default port) without a
// final dot.
func hostKey(u *weburl.URL) string {
	name := urlnorm.TrimRootDot(u.Hostname)
	if u.Port == "" {
		return name
	}
	return name + ":" + u.Port
}

// itemSize estimates the heap bytes of a queued item: the item, its parsed
// URL and the record with its field table (measured: about 800 bytes plus
// twice the record's text).
func itemSize(rec *record.Record) int64 {
	n := int64(800)
	for _, k := range rec.Keys() {
		raw, _ := rec.Raw(k)
		n += int64(2 * (len(k) + len(raw)))
	}
	return n
}

// trap applies the bot-trap limits to a URL's path.
func (f *Fetcher) trap(u *weburl.URL) *codedError {
	path := u.Path
	depth := 0
	var counts map[string]int
	for _, seg := range strings.Split(path, "/") {
		if seg == "" {
			continue
		}
		depth++
		if depth > f.cfg.MaxPathDepth {
			return errorf(CodeTrap, "path deeper than %d segments (--max-depth)", f.cfg.MaxPathDepth)
		}
		if counts == nil {
			counts = make(map[string]int)
		}
		counts[seg]++
		if counts[seg] > f.cfg.MaxRepeat {
			return errorf(CodeTrap, "path segment %q repeats more than %d times (--max-repeat)", clip(seg, 40), f.cfg.MaxRepeat)
		}
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// A job is what a worker does next.
type job struct {
	host    *hostQ
	it      *item       // a page request, or an item to write out (with skip)
	skip    *codedError // write it out with this error, no request
	robots  int         // schemeIndex+1 of a robots.txt fetch, 0 if none
	resolve bool        // find the host's address for its politeness slot
}

// take returns the next job, waiting for a host to be ready. It returns
// false when all is done or the run stops.
func (f *Fetcher) take(ctx context.Context) (job, bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		f.mu.Lock()
		if ctx.Err() != nil || f.fatal != nil {
			f.mu.Unlock()
			return job{}, false
		}
		now := time.Now()
		if len(f.ready) > 0 && !f.ready[0].next.After(now) {
			h := heap.Pop(&f.ready).(*hostQ)
			j, ok := f.nextJob(h, now)
			f.mu.Unlock()
			if ok {
				return j, true
			}
			continue
		}
		if f.inputEnd && f.pending == 0 {
			f.mu.Unlock()
			return job{}, false
		}
		wake := f.wake
		var tc <-chan time.Time
		if len(f.ready) > 0 {
			d := f.ready[0].next.Sub(now)
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			tc = timer.C
		}
		f.mu.Unlock()
		select {
		case <-wake:
		case <-tc:
		case <-ctx.Done():
			return job{}, false
		}
	}
}

// nextJob makes the job for host h, just popped from the ready heap.
func (f *Fetcher) nextJob(h *hostQ, now time.Time) (job, bool) {
	if len(h.items) == 0 && len(h.spilled) > 0 {
		f.unspill(h)
	}
	if len(h.items) == 0 {
		return job{}, false
	}
	it := h.items[0]
	if h.slot == nil {
		if h.resolving || h.active > 0 {
			return job{}, false
		}
		h.resolving = true
		h.active++
		return job{host: h, resolve: true}, true
	}
	sl := h.slot
	if sl.active >= f.cfg.PerHost {
		sl.waiting = append(sl.waiting, h) // done() re-readies it
		return job{}, false
	}
	if sl.next.After(now) {
		f.readyAt(h, sl.next)
		return job{}, false
	}
	if !f.cfg.IgnoreRobots {
		si := schemeIndex(it.u.Scheme)
		rs := h.robots[si]
		if rs == nil || !rs.fetching && now.After(rs.expires) {
			if h.active > 0 {
				return job{}, false // fetch robots.txt once the host is quiet; done() re-readies it
			}
			if ok, skip := f.paced(h, now); !ok {
				if skip == nil {
					return job{}, false
				}
				f.popItem(h)
				h.active++
				return job{host: h, it: it, skip: skip}, true
			}
			h.robots[si] = &robotsState{fetching: true}
			h.active++
			sl.active++
			f.paceSlot(h, sl, now)
			return job{host: h, robots: si + 1}, true
		}
		if rs.fetching {
			return job{}, false
		}
		var skip *codedError
		switch {
		case rs.fail != nil:
			skip = rs.fail
		case !rs.group.Allowed(it.u.RequestURI()): // RFC 9309: the path and query as requested
			skip = errorf(CodeRobots, "disallowed by %s://%s/robots.txt", it.u.Scheme, h.key)
		default:
			skip = f.duplicate(it)
		}
		if skip != nil {
			f.popItem(h)
			h.active++ // released by done, like a request, but with no delay
			return job{host: h, it: it, skip: skip}, true
		}
	}
	if f.cfg.IgnoreRobots {
		if skip := f.duplicate(it); skip != nil {
			f.popItem(h)
			h.active++
			return job{host: h, it: it, skip: skip}, true
		}
	}
	if ok, skip := f.paced(h, now); !ok {
		if skip == nil {
			return job{}, false
		}
		f.popItem(h)
		h.active++
		return job{host: h, it: it, skip: skip}, true
	}
	f.popItem(h)
	h.active++
	sl.active++
	h.next = now.Add(h.delay)
	if h.next.After(sl.next) {
		sl.next = h.next
	}
	f.paceSlot(h, sl, now)
	f.maybeReady(h)
	return job{host: h, it: it}, true
}

// duplicate takes the key of an item about to be requested, or returns the
// error of a second input URL with the key of one already requested: one
// request per page. The key (urlnorm's) decides; the URL requested is the
// one the input wrote. It is taken when the request is about to be made,
// after robots.txt: a spelling robots.txt disallows ("?title=A&action=edit")
// does not shut out one it allows ("?action=edit&title=A"). The key holds
// the host, so both are in one queue, in input order. Redirect hops were
// checked as the input URL. Called with f.mu held. 64-bit hashes keep the
// set small.
func (f *Fetcher) duplicate(it *item) *codedError {
	if it.keyTaken {
		return nil
	}
	k := f.norm.Key(it.u)
	key := hashString(k)
	if first, dup := f.seen[key]; dup {
		return errorf(CodeDuplicate, "same URL as input line %d after normalisation: %s", first, clip(k, 200))
	}
	f.seen[key] = it.rec.Line
	it.keyTaken = true
	return nil
}

// paceSlot holds the politeness queue of host h, whose request starts now,
// for h's pacing interval by Config.HostRates: the estimate spaces the
// requests of all the hosts of an IP address or domain, as the delay does
// without HostRates. (Queued by host, the estimator paces the host alone.)
func (f *Fetcher) paceSlot(h *hostQ, sl *slot, now time.Time) {
	if f.cfg.HostRates == nil || f.cfg.QueueBy == QueueByHost {
		return
	}
	if t := now.Add(f.cfg.Clock.Real(f.cfg.HostRates.Interval(h.key))); t.After(sl.next) {
		sl.next = t
	}
}

// paced asks Config.HostRates whether host h may be asked now. If not, it
// either puts h back in the ready heap for when it may (skip nil), or
// returns the error its next URL is written out with: the host rests, is
// pinned to 0, or would wait longer than MaxHostWait. Those URLs go out
// one job at a time, each asking again, so a host whose rest ends (or
// whose wait shortens) mid-run is crawled again. Without HostRates it
// always says yes.
func (f *Fetcher) paced(h *hostQ, now time.Time) (bool, *codedError) {
	if f.cfg.HostRates == nil {
		return true, nil
	}
	wait, err := f.cfg.HostRates.TryStart(h.key)
	var he *hostrate.HostError
	switch {
	case errors.As(err, &he) && he.Code == hostrate.CodePinned:
		return false, errorf(CodePinned, "host %s is pinned to rate 0: not crawled (--pins)", h.key)
	case err != nil:
		return false, errorf(CodeResting, "not fetched: %v", err)
	case wait > f.cfg.MaxHostWait:
		return false, errorf(CodeResting, "not fetched: host %s may be asked again only in %v (Retry-After or Crawl-delay), over --max-host-wait %v", h.key, wait.Round(time.Second), f.cfg.MaxHostWait)
	case wait > 0:
		f.readyAt(h, now.Add(f.cfg.Clock.Real(wait)))
		return false, nil
	}
	return true, nil
}

// observe tells Config.HostRates how one request to host went: start on
// its Clock, and the exchange. Failures that are not the host's (a stop,
// a blocked address, a refused content type) teach it nothing.
func (f *Fetcher) observe(host string, start time.Time, x *exchange) {
	if f.cfg.HostRates == nil {
		return
	}
	o := hostrate.Observation{Host: host, Start: start, Latency: f.cfg.Clock.Now().Sub(start), Status: x.status}
	if x.status > 0 {
		o.RetryAfter = x.header.Get("Retry-After")
	} else if x.err != nil {
		switch x.err.code {
		case CodeTimeout:
			o.Err = hostrate.ErrTimeout
		case CodeConnect:
			o.Err = hostrate.ErrRefused
		case CodeNetwork:
			o.Err = hostrate.ErrReset
		case CodeDNS, CodeTLS, CodeHTTP:
			o.Err = hostrate.ErrOther
		default:
			return
		}
	}
	f.cfg.HostRates.Observe(o)
}

func (f *Fetcher) popItem(h *hostQ) {
	f.memUsed -= h.items[0].size
	h.items[0] = nil
	h.items = h.items[1:]
	if len(h.items) == 0 {
		h.items = nil // let the backing array go
	}
}

// unspill loads the next spilled records of h back into memory.
func (f *Fetcher) unspill(h *hostQ) {
	// A few at a time, and only one when memory is spent: with thousands
	// of hosts, batches per host would add up to the whole queue.
	n := 0
	for n < len(h.spilled) && n < 64 && (n == 0 || f.memUsed < f.cfg.QueueMemory) {
		rec, err := f.spill.read(h.spilled[n])
		n++
		if err != nil {
			f.fatal = err
			break
		}
		it, _, cerr := f.check(rec)
		if cerr != nil { // cannot happen: it passed check before
			continue
		}
		f.memUsed += it.size
		h.items = append(h.items, it)
	}
	h.spilled = h.spilled[n:]
	if len(h.spilled) == 0 {
		h.spilled = nil
	}
}

// done records the end of a job on its host and re-readies the host.
func (f *Fetcher) done(j job, requeue *item, requeueHost string, wait time.Duration, finished int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := j.host
	h.active--
	now := time.Now()
	if j.skip == nil && !j.resolve {
		// One connection per host by default: the delay runs from the end
		// of the exchange, so the server sees gaps of at least the delay.
		if f.cfg.PerHost == 1 {
			if t := now.Add(h.delay); t.After(h.next) {
				h.next = t
			}
		}
		if wait > 0 {
			if t := now.Add(wait); t.After(h.next) {
				h.next = t
			}
		}
		// The host's slot (its IP or domain) waits as long.
		if sl := h.slot; sl != nil {
			sl.active--
			if h.next.After(sl.next) {
				sl.next = h.next
			}
			for _, w := range sl.waiting {
				f.maybeReady(w)
			}
			sl.waiting = sl.waiting[:0]
		}
	}
	if requeue != nil {
		th := h
		if requeueHost != h.key {
			th = f.host(requeueHost)
			th.accepted++
		}
		f.memUsed += requeue.size
		th.items = append([]*item{requeue}, th.items...)
		f.maybeReady(th)
	}
	f.pending -= finished
	f.maybeReady(h)
	f.signalLocked()
}

// itemDone counts an item as written out.
func (f *Fetcher) itemDone() {
	f.mu.Lock()
	f.pending--
	if f.pending == 0 {
		f.signalLocked()
	}
	f.mu.Unlock()
}

// worker runs jobs until the run ends.
func (f *Fetcher) worker(ctx, reqCtx context.Context, stop context.CancelFunc) {
	for {
		j, ok := f.take(ctx)
		if !ok {
			return
		}
		var err error
		switch {
		case j.resolve:
			f.resolveSlot(reqCtx, j.host)
			f.done(j, nil, "", 0, 0)
		case j.robots > 0:
			f.fetchRobots(reqCtx, j)
			f.done(j, nil, "", 0, 0)
		case j.skip != nil:
			err = f.finish(j.it.rec, j.it, j.skip)
			f.done(j, nil, "", 0, 1)
		default:
			err = f.fetchPage(reqCtx, j)
		}
		if err != nil {
			f.setFatal(err)
			// Stopping before the cancel: Run drains the queue when it
			// sees it, and the goroutine that sets it on the cancel may
			// run after the workers have returned.
			f.stopping.Store(true)
			stop()
			return
		}
	}
}

// drainInterrupted writes out every queued record with error
// "interrupted", quickly: spilled records are read in one sequential pass
// and, when Config.EmitRaw is set and they carry no "error" yet, copied out
// without parsing, so a stop with millions queued fits in the grace period.
func (f *Fetcher) drainInterrupted() {
	f.mu.Lock()
	var left []*item
	var refs []spillRef
	for _, h := range f.hosts {
		left = append(left, h.items...)
		refs = append(refs, h.spilled...)
		h.items, h.spilled = nil, nil
	}
	f.memUsed = 0
	f.mu.Unlock()
	for _, it := range left {
		if f.writeInterrupted(it.rec) != nil {
			return
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].off < refs[j].off })
	br := bufio.NewReaderSize(io.NewSectionReader(f.spill.f, 0, f.spill.size), 1<<20)
	var pos int64
	line := make([]byte, 0, 4096)
	for _, ref := range refs {
		if _, err := br.Discard(int(ref.off - pos)); err != nil {
			return
		}
		if cap(line) < int(ref.n)+256 {
			line = make([]byte, 0, int(ref.n)+256)
		}
		line = line[:ref.n]
		if _, err := io.ReadFull(br, line); err != nil {
			return
		}
		pos = ref.off + int64(ref.n)
		var err error
		if f.cfg.EmitRaw != nil && !mayHoldOwned(line) && bytes.HasSuffix(line, []byte("}")) {
			f.stats.interrupted.Add(1)
			f.count(CodeInterrupted, false)
			line = append(line[:len(line)-1], `,"error":`...)
			line = record.AppendString(line, interruptedMsg)
			line = append(line, '}')
			f.emitMu.Lock()
			err = f.cfg.EmitRaw(line)
			f.emitMu.Unlock()
		} else {
			rec, perr := record.Parse(line)
			if perr != nil {
				continue
			}
			rec.Line = int(ref.line)
			err = f.writeInterrupted(rec)
		}
		if err != nil {
			return
		}
	}
}

var interruptedMsg = errorf(CodeInterrupted, "not fetched: the run was stopped").Error()

// writeInterrupted writes rec unchanged but for its "error".
func (f *Fetcher) writeInterrupted(rec *record.Record) error {
	f.stats.interrupted.Add(1)
	// The input may carry the page's last capture (recrawl next writes
	// it): none of it describes this run, which made no request.
	clearOwned(rec)
	rec.SetString("error", interruptedMsg)
	return f.emit(rec, CodeInterrupted, false)
}

// finish writes a record out with an error and no response. A URL that was
// tried gets fetched_at, when fetch gave up on it, so that a crawl loop
// counts the attempt (an opic visit, say, after a robots refusal) and does
// not offer it again at once; a URL that is no URL at all gets none.
func (f *Fetcher) finish(rec *record.Record, it *item, cerr *codedError) error {
	clearOwned(rec)
	if it != nil && len(it.chain) > 0 {
		rec.Set("redirects", it.chain)
		rec.SetString("final_url", it.u.String())
	}
	if it != nil && it.elapsed > 0 {
		rec.SetInt("elapsed_ms", it.elapsed.Milliseconds())
	}
	if it != nil {
		if host := hostKey(it.u); host != "" {
			rec.SetString("host", host)
		}
		rec.SetTime("fetched_at", time.Now())
	}
	rec.SetString("error", cerr.Error())
	return f.emit(rec, cerr.code, false)
}

func (f *Fetcher) emit(rec *record.Record, code string, ok bool) error {
	f.count(code, ok)
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	return f.cfg.Emit(rec)
}

func (f *Fetcher) count(code string, ok bool) {
	f.stats.done.Add(1)
	if code != "" {
		f.stats.errors.Add(1)
		f.stats.mu.Lock()
		f.stats.codes[code]++
		f.stats.mu.Unlock()
	} else if ok {
		f.stats.ok.Add(1)
	}
}

// ownedFields are the fields fetch writes; a new fetch replaces them all.
var ownedFields = []string{"host", "status", "final_url", "fetched_at", "content_type", "length", "digest",
	"charset", "charset_source", "title", "links", "links_cut", "nofollow_links", "canonical", "refresh", "refresh_delay", "robots", "noindex",
	"text_simhash", "terms", "redirects", "error", "truncated", "warc_file", "warc_offset", "warc_type", "warc_refers_to",
	"warc_refers_to_date", "elapsed_ms", "etag", "last_modified"}

// keptOn304 are the fields that still describe the page after a 304.
var keptOn304 = map[string]bool{"content_type": true, "length": true, "digest": true, "title": true,
	"links": true, "links_cut": true, "nofollow_links": true, "canonical": true, "noindex": true, "etag": true, "last_modified": true,
	"charset": true, "charset_source": true, "refresh": true, "refresh_delay": true, "robots": true, "text_simhash": true}

// ownedKeys are ownedFields quoted, as they appear in a JSON line.
var ownedKeys = func() [][]byte {
	k := make([][]byte, len(ownedFields))
	for i, f := range ownedFields {
		k[i] = []byte(`"` + f + `"`)
	}
	return k
}()

// mayHoldOwned reports whether a JSON line may hold a field fetch writes
// (a false alarm only costs parsing the line).
func mayHoldOwned(line []byte) bool {
	for _, k := range ownedKeys {
		if bytes.Contains(line, k) {
			return true
		}
	}
	return false
}

func clearOwned(rec *record.Record) {
	for _, k := range ownedFields {
		rec.Delete(k)
	}
}
