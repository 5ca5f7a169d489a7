package queue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
	"github.com/sekitei/crawlkit/pkg/urlnorm"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// A Fetch is what the state needs of one fetch record.
type Fetch struct {
	URL, Host string
	At        time.Time
	Status    int
	Error     string // non-empty for a failed fetch
	Digest    string
	Simhash   uint64
	HasSim    bool
	Links     []string
	// Canonical is the page's rel=canonical when it names another URL of
	// its host ("" otherwise).
	Canonical string
	// ETag and LastModified are the response's validators (fetch's etag
	// and last_modified); Redirected is a fetch whose final URL is not
	// its URL, whose validators are not the URL's.
	ETag, LastModified string
	Redirected         bool
	// Archived is where fetch archived the response (File "": not
	// archived): digest, the record's fetched_at (kept apart from At,
	// which --fetch-time batch moves), final_url, warc_file, warc_offset.
	Archived Capture
	// Revisit is a response archived as a revisit record (warc_type
	// revisit), of the capture RefersTo at RefersToDate (unix seconds;
	// "" and 0 when fetch named none).
	Revisit      bool
	RefersTo     string
	RefersToDate int64
	// Truncated is a body cut short: its digest is no payload's.
	Truncated bool
}

// A Discovery is a URL known without a fetch: a seed, or a sitemap entry
// with its lastmod (zero: none) and changefreq ("": none).
type Discovery struct {
	URL, Host  string
	Lastmod    time.Time
	Changefreq string
}

// A Weight is one page's importance from opic (0: none).
type Weight struct {
	URL, Host  string
	Importance float64
}

// A Batch is what one crawl turn brings.
type Batch struct {
	// Now is the batch's time: deferrals count from it and retry and
	// deferral times before it have expired.
	Now      time.Time
	Fetches  []Fetch
	Weights  []Weight
	Deferred []string // URLs of candidates not fetched this turn
	// Discovered are pages to know without a fetch (seeds, sitemap
	// entries): each unknown one becomes a page never crawled. A
	// changefreq is the prior change rate of a page never observed; a
	// lastmod of a page fetched before is an observation: changed since
	// the last fetch (or the last such observation) or not.
	Discovered []Discovery
}

// ApplyStats count what a batch did.
type ApplyStats struct {
	Applied                                                    bool   // false: this batch was applied before
	Last                                                       string // the last batch applied before this one
	Fetches, Observations, Unchanged, Changed, Failures, Stale int
	NewPages, Weights, Deferred                                int
	// Unweighted counts the pages written with the default weight, and
	// ZeroWeights the importances of 0 treated as none.
	Unweighted, ZeroWeights int
	DefaultWeight           float64
	// Canonicalised counts fetched pages retired for a canonical of
	// another URL; Lastmods the sitemap lastmods taken as observations,
	// Changefreqs the changefreqs taken as priors.
	Canonicalised, Lastmods, Changefreqs int
	Pages                                int // pages in the state after the batch
	// Freshness is the estimated weighted freshness after the batch, at its
	// time, over the pages of weight KnownWeight fetched at least once and
	// not retired;
	// Observed the weighted share of its recrawls found unchanged (of
	// weight RecrawledWeight; -1 when none). See HistoryEntry.
	Freshness, KnownWeight    float64
	Observed, RecrawledWeight float64
	observedFresh             float64
}

// ParseFetch reads a fetch record: url, host, fetched_at, status, error,
// digest, text_simhash, links, canonical, final_url, etag, last_modified,
// truncated and where the response is archived (warc_file, warc_offset,
// warc_type, warc_refers_to, warc_refers_to_date).
func ParseFetch(r *record.Record) (Fetch, error) {
	f := Fetch{URL: r.URL(), Host: record.RecordHost(r)}
	if f.URL == "" {
		return f, errors.New(`no "url"`)
	}
	if f.Host == "" {
		return f, fmt.Errorf("no host in url %q", clip(f.URL))
	}
	at, ok, err := r.Time("fetched_at")
	if err != nil {
		return f, err
	}
	if !ok && !r.Has("error") {
		return f, errors.New(`no "fetched_at"`)
	}
	// A URL refused before any request (by its type, say) has an error
	// and no fetched_at: it failed at the batch's time (At zero here).
	if ok {
		f.At = at.UTC()
	}
	if s, ok, err := r.Float("status"); err != nil {
		return f, err
	} else if ok {
		f.Status = int(s)
	}
	if e, ok := r.String("error"); ok {
		f.Error = e
	} else if !r.IsNull("error") {
		return f, errors.New(`field "error": not a string`)
	}
	f.Digest, _ = r.String("digest")
	if s, ok := r.String("text_simhash"); ok && s != "" {
		v, err := strconv.ParseUint(s, 16, 64)
		if err != nil || len(s) > 16 {
			return f, fmt.Errorf(`field "text_simhash": want 16 hex digits, got %q`, clip(s))
		}
		f.Simhash, f.HasSim = v, true
	}
	if _, err := r.Decode("links", &f.Links); err != nil {
		return f, err
	}
	final, _ := r.String("final_url")
	f.Redirected = redirected(r, f.URL, final)
	f.ETag, _ = r.String("etag")
	f.LastModified, _ = r.String("last_modified")
	f.Truncated = r.Has("truncated") && !r.IsNull("truncated")
	if file, _ := r.String("warc_file"); file != "" && ok {
		f.Archived = Capture{Digest: f.Digest, Date: at.Unix(), URI: final, File: file}
		if f.Archived.URI == "" {
			f.Archived.URI = f.URL
		}
		// A bad offset loses the capture, not the fetch.
		if off, ok, err := r.Float("warc_offset"); err == nil && ok && off >= 0 && off == math.Trunc(off) && off < 1<<53 {
			f.Archived.Offset = int64(off)
		} else {
			f.Archived.File = ""
		}
		if t, _ := r.String("warc_type"); t == "revisit" {
			f.Revisit = true
			f.RefersTo, _ = r.String("warc_refers_to")
			if t, ok, err := r.Time("warc_refers_to_date"); ok && err == nil {
				f.RefersToDate = t.Unix()
			}
		}
	}
	if c, ok := r.String("canonical"); ok && c != "" && c != f.URL {
		ch, err := urlx.Host(c)
		if c != final && err == nil && ch == f.Host {
			f.Canonical = c
		}
	}
	return f, nil
}

// redirected reports whether a fetch reached its page through redirects:
// fetch lists them in "redirects"; without that field, a final URL with
// another normal form than the URL's. The spelling alone does not count:
// fetch writes the URL it requested as the URL Standard serialises it
// ("HTTP://A.test" is requested as "http://a.test/").
func redirected(r *record.Record, url, final string) bool {
	if raw, ok := r.Raw("redirects"); ok && len(raw) > 2 {
		return true
	}
	if final == "" || final == url {
		return false
	}
	a, err1 := urlnorm.Normalize(url)
	b, err2 := urlnorm.Normalize(final)
	return err1 != nil || err2 != nil || a != b
}

// Failed reports whether the fetch failed (an error, or a 4xx or 5xx).
func (f *Fetch) Failed() bool { return f.Error != "" || f.Status >= 400 }

// RetryAfter is how long a page waits after its n-th consecutive failure:
// the first wait doubles with each failure, up to a cap.
//
//	robots.txt refused        1 day, up to 30 days (robots.txt changes rarely)
//	refused by fetch's policy 30 days, up to 180 days (type: a content type
//	(type, duplicate)         not fetched; duplicate: another spelling of a
//	                          URL fetched)
//	410 Gone                  30 days, up to 180 days
//	404 Not Found             7 days, up to 90 days (often a temporary mistake)
//	other 4xx                 3 days, up to 60 days
//	5xx, 429, timeouts, other 1 hour, up to 7 days (the server is struggling)
//	resting (deferred by       1 hour, not doubled: the host rested after
//	fetch --host-rates)       failures in a row or asked for a long wait; its
//	                          own rest doubles, the page did nothing wrong
//	pinned (host pinned to 0) 1 day, not doubled (until the pin is lifted)
func RetryAfter(f *Fetch, n int) time.Duration {
	first, limit := time.Hour, 7*24*time.Hour
	switch {
	case strings.HasPrefix(f.Error, "resting:"):
		return time.Hour
	case strings.HasPrefix(f.Error, "pinned:"):
		return 24 * time.Hour
	case strings.HasPrefix(f.Error, "robots:"):
		first, limit = 24*time.Hour, 30*24*time.Hour
	case strings.HasPrefix(f.Error, "type:"), strings.HasPrefix(f.Error, "duplicate:"):
		first, limit = 30*24*time.Hour, 180*24*time.Hour
	case f.Status == 410:
		first, limit = 30*24*time.Hour, 180*24*time.Hour
	case f.Status == 404:
		first, limit = 7*24*time.Hour, 90*24*time.Hour
	case f.Status >= 400 && f.Status < 500 && f.Status != 429:
		first, limit = 3*24*time.Hour, 60*24*time.Hour
	}
	return doubled(first, n, limit)
}

// deferred reports a fetch that fetch did not make because of its host's
// state (fetch --host-rates: the host rests, or is pinned to rate 0).
func deferred(f *Fetch) bool {
	return strings.HasPrefix(f.Error, "resting:") || strings.HasPrefix(f.Error, "pinned:")
}

func doubled(first time.Duration, n int, limit time.Duration) time.Duration {
	d := first
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// BatchTime reads the time of a batch ID such as 000042-20261123T100000Z
// (the part after the last '-'); ok is false for IDs without one.
func BatchTime(id string) (time.Time, bool) {
	i := strings.LastIndexByte(id, '-')
	t, err := time.Parse("20060102T150405Z", id[i+1:])
	return t, err == nil
}

// touched is a page read (or created) by Apply, with where it was indexed.
type touched struct {
	p       *page
	oldKey  []byte // its due or blocked key before the batch; nil if new
	oldDue  bool
	oldCell cell
	fetched bool
	old     freshTerm // the page's term in the freshness sums before the batch
	hadOld  bool
}

type applier struct {
	q     *Queue
	tx    *boltstate.Tx
	pages *boltstate.Bucket
	seen  map[string]*touched
	now   int64
	st    ApplyStats
	// captures are the batch's responses archived in full, by URI and
	// WARC-Date: a revisit of another page's capture of the same run
	// finds its file here.
	captures map[captureKey]Capture
}

type captureKey struct {
	uri  string
	date int64
}

// get returns the page of url, reading it from the store or creating a
// page never fetched.
func (a *applier) get(url, host string, create bool) (*touched, error) {
	if t, ok := a.seen[url]; ok {
		return t, nil
	}
	v, err := a.pages.Get([]byte(url))
	if err != nil {
		return nil, err
	}
	if v == nil {
		if !create {
			return nil, nil
		}
		t := &touched{p: &page{Host: host, Delta: a.q.opt.Update.Prior.Rate, Prior: true}}
		a.seen[url] = t
		a.st.NewPages++
		return t, nil
	}
	p, err := decodePage(v)
	if err != nil {
		return nil, a.q.corrupt(bPages, []byte(url), err)
	}
	t := &touched{p: p, oldCell: p.cell(), old: termOf(p), hadOld: true}
	if u := p.blockedUntil(); u > 0 {
		t.oldKey = blockedKey(u, url)
	} else {
		t.oldKey, t.oldDue = p.dueKey(url), true
	}
	a.seen[url] = t
	return t, nil
}

func (a *applier) keeps(host string) bool {
	s := a.q.opt.Shard
	return s.N <= 1 || record.ShardOf(host, s.N) == s.I
}

// Apply folds one batch into the state in one transaction. A batch whose ID
// is not after the last one applied changes nothing (Applied false).
func (q *Queue) Apply(batchID string, b Batch) (ApplyStats, error) {
	if q.db == nil || q.opt.ReadOnly {
		return ApplyStats{}, &StateError{q.path, "opened read-only"}
	}
	if batchID == "" {
		return ApplyStats{}, errors.New("a batch needs an ID")
	}
	var st ApplyStats
	err := q.db.Update(func(tx *boltstate.Tx) error {
		meta, err := q.init(tx)
		if err != nil {
			return err
		}
		v, err := meta.Get(kBatch)
		if err != nil {
			return err
		}
		last := string(v)
		st.Last = last
		if last != "" && batchID <= last {
			return nil
		}
		a := &applier{q: q, tx: tx, pages: tx.Bucket(bPages), seen: map[string]*touched{}, now: b.Now.Unix()}
		if built, err := freshBuilt(meta); err != nil {
			return err
		} else if !built {
			if err := buildFresh(meta, a.pages, q); err != nil {
				return err
			}
		}
		if err := a.apply(meta, b); err != nil {
			return err
		}
		if a.st.Freshness, a.st.KnownWeight, err = freshnessAt(meta, a.now); err != nil {
			return err
		}
		a.st.Observed = -1
		if a.st.RecrawledWeight > 0 {
			a.st.Observed = a.st.observedFresh / a.st.RecrawledWeight
		}
		if err := recordHistory(meta, HistoryEntry{Batch: batchID, Time: b.Now.UTC(), Pages: a.st.Pages, Fetches: a.st.Fetches,
			Failures: a.st.Failures, Estimated: a.st.Freshness, Known: a.st.KnownWeight, Observed: a.st.Observed, Recrawled: a.st.RecrawledWeight}); err != nil {
			return err
		}
		a.st.Applied, a.st.Last = true, last
		st = a.st
		return meta.Put(kBatch, []byte(batchID))
	})
	return st, err
}

// init creates the buckets and meta of a new state.
func (q *Queue) init(tx *boltstate.Tx) (*boltstate.Bucket, error) {
	if m := tx.Bucket(bMeta); m != nil {
		return m, nil
	}
	for _, name := range [][]byte{bPages, bDue, bBlocked, bCells, bHosts} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return nil, err
		}
	}
	m, err := tx.CreateBucketIfNotExists(bMeta)
	if err != nil {
		return nil, err
	}
	err = errors.Join(m.Put(kFormat, []byte(formatName)),
		m.Put(kVersion, binary.AppendUvarint(nil, FormatVersion)),
		m.Put(kShard, []byte(shardString(q.opt.Shard))))
	return m, err
}

func (a *applier) apply(meta *boltstate.Bucket, b Batch) error {
	opt := &a.q.opt.Update
	// Fetches in time order, so that intervals are folded as they happened.
	fs := slices.Clone(b.Fetches)
	for i := range fs {
		if fs[i].At.IsZero() {
			fs[i].At = b.Now
		}
	}
	slices.SortStableFunc(fs, func(x, y Fetch) int {
		if c := x.At.Compare(y.At); c != 0 {
			return c
		}
		return strings.Compare(x.URL, y.URL)
	})
	a.captures = map[captureKey]Capture{}
	for i := range fs {
		if c := fs[i].Archived; fullCapture(&fs[i]) {
			a.captures[captureKey{c.URI, c.Date}] = c
		}
	}
	hosts := tx(a).Bucket(bHosts)
	hostLast := map[string]int64{}
	for i := range fs {
		f := &fs[i]
		if a.keeps(f.Host) {
			a.st.Fetches++
			t, err := a.get(f.URL, f.Host, true)
			if err != nil {
				return err
			}
			t.fetched = true
			a.fetch(t.p, f, opt)
			if err := a.canonical(t.p, f, opt); err != nil {
				return err
			}
			if at := f.At.Unix(); at > hostLast[f.Host] {
				hostLast[f.Host] = at
			}
		}
		// Links to this shard's hosts count from every shard's fetches.
		for _, l := range f.Links {
			h, err := urlx.Host(l)
			if err != nil || h == "" || !a.keeps(h) {
				continue
			}
			if _, err := a.get(l, h, true); err != nil {
				return err
			}
		}
	}
	for h, at := range hostLast {
		v, err := hosts.Get([]byte(h))
		if err != nil {
			return err
		}
		if old, n := binary.Varint(v); n > 0 && old >= at {
			continue
		}
		if err := hosts.Put([]byte(h), binary.AppendVarint(nil, at)); err != nil {
			return err
		}
	}
	for i := range b.Discovered {
		d := &b.Discovered[i]
		if !a.keeps(d.Host) {
			continue
		}
		t, err := a.get(d.URL, d.Host, true)
		if err != nil {
			return err
		}
		a.discover(t.p, d, opt)
	}
	wsum, wcount := getFloat(meta, kWSum), getFloat(meta, kWCount)
	for _, w := range b.Weights {
		if !a.keeps(w.Host) {
			continue
		}
		t, err := a.get(w.URL, w.Host, true)
		if err != nil {
			return err
		}
		a.st.Weights++
		if !(w.Importance > 0) || math.IsInf(w.Importance, 0) {
			a.st.ZeroWeights++
			continue
		}
		if t.p.HasWeight {
			wsum -= t.p.W
			wcount--
		}
		t.p.W, t.p.HasWeight = w.Importance, true
		wsum += w.Importance
		wcount++
	}
	def := opt.DefaultWeight
	if !(def > 0) {
		def = 1
		if wcount > 0 && wsum > 0 {
			def = wsum / wcount
		}
	}
	a.st.DefaultWeight = def
	for _, u := range b.Deferred {
		h, err := urlx.Host(u)
		if err != nil || h == "" || !a.keeps(h) {
			continue
		}
		t, err := a.get(u, h, true)
		if err != nil {
			return err
		}
		if t.fetched {
			continue // fetched after all
		}
		a.st.Deferred++
		p := t.p
		if p.Defers < 60 {
			p.Defers++
		}
		p.DeferTo = a.now + int64(doubled(opt.DeferFor, int(p.Defers), opt.DeferCap)/time.Second)
	}
	// Pages whose retry or deferral expired since the last batch go back
	// to the due index.
	c := tx(a).Bucket(bBlocked).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) < 8 {
			return a.q.corrupt(bBlocked, k, errors.New("short key"))
		}
		until, url := blockedOf(k)
		if until > a.now {
			break
		}
		if _, err := a.get(url, "", false); err != nil {
			return err
		}
	}
	if err := c.Err(); err != nil {
		return err
	}
	return a.commit(meta, def, wsum, wcount)
}

func tx(a *applier) *boltstate.Tx { return a.tx }

// fetch folds one fetch into a page.
func (a *applier) fetch(p *page, f *Fetch, opt *UpdateOptions) {
	at := f.At.Unix()
	if f.Failed() {
		a.st.Failures++
		if deferred(f) { // not the page's failure: no count towards its backoff
			p.RetryAt = max(p.RetryAt, at+int64(RetryAfter(f, 1)/time.Second))
			return
		}
		if p.Failures < 60 {
			p.Failures++
		}
		p.RetryAt = max(p.RetryAt, at+int64(RetryAfter(f, int(p.Failures))/time.Second))
		return
	}
	if p.LastFetch != 0 && at <= p.LastFetch {
		a.st.Stale++ // an older fetch, or the same one again
		return
	}
	var hash uint64
	hasDigest := f.Digest != ""
	if hasDigest {
		h := fnv.New64a()
		h.Write([]byte(f.Digest))
		hash = h.Sum64()
	}
	if p.Flags&flagBaselineStale != 0 {
		// The change since the last fetch was counted from the sitemap.
		p.Flags &^= flagBaselineStale
	} else if from := max(p.LastFetch, p.LastObs); p.LastFetch != 0 && at > from {
		gap := float64(at-from) / 86400
		changed, known := false, true
		switch {
		case f.Status == 304:
		case f.HasSim && p.Flags&flagSimhash != 0:
			changed = bits.OnesCount64(f.Simhash^p.Simhash) > opt.SimhashThreshold
		case hasDigest && p.Flags&flagDigest != 0:
			changed = hash != p.Digest
		default:
			known = false
		}
		if known {
			a.st.Observations++
			if changed {
				a.st.Changed++
			} else {
				a.st.Unchanged++
			}
			p.Stats.Add(gap, changed)
			w := p.W
			if !(w > 0) {
				w = 1
			}
			a.st.RecrawledWeight += w
			if !changed {
				a.st.observedFresh += w
			}
		}
	}
	if f.Status != 304 {
		p.Flags &^= flagDigest | flagSimhash
		if hasDigest {
			p.Digest = hash
			p.Flags |= flagDigest
		}
		if f.HasSim {
			p.Simhash = f.Simhash
			p.Flags |= flagSimhash
		}
	}
	p.validators(f)
	p.capture(f, a.captures)
	p.LastFetch = at
	p.Failures, p.RetryAt, p.Defers, p.DeferTo = 0, 0, 0, 0
	p.estimate(opt)
}

// validators keeps the validators of a successful fetch, for the next
// one's conditional request. A 304 keeps the page's validators, replacing
// those it carries (RFC 9110 15.4.5: it sends those a 200 would have;
// RFC 9111 4.3.4: they update the stored response); another answer
// replaces them all, so a page that stopped sending one stops being asked
// with it. A redirected fetch keeps none: its validators are the final
// URL's, and fetch sends them to the first. A validator with a CR or LF,
// or longer than 1 KiB, is not kept.
func (p *page) validators(f *Fetch) {
	ok := func(v string) bool { return len(v) <= maxValidator && !strings.ContainsAny(v, "\r\n") }
	etag, lm := f.ETag, f.LastModified
	if !ok(etag) {
		etag = ""
	}
	if !ok(lm) {
		lm = ""
	}
	switch {
	case f.Redirected:
		p.ETag, p.LastModified = "", ""
	case f.Status == 304:
		if etag != "" {
			p.ETag = etag
		}
		if lm != "" {
			p.LastModified = lm
		}
	default:
		p.ETag, p.LastModified = etag, lm
	}
}

// fullCapture reports a successful fetch whose payload fetch archived in
// full: a 2xx response record, whole.
func fullCapture(f *Fetch) bool {
	return f.Archived.File != "" && !f.Revisit && f.Status >= 200 && f.Status < 300 && !f.Truncated && f.Error == "" &&
		f.Archived.valid()
}

// capture keeps the archived response holding the page's last payload,
// for next to hand to fetch (which then stores the same payload as a
// revisit of it). A full response is the new capture. A revisit names the
// capture it refers to: the page keeps that one, with its file (the
// page's own, or another page's of this batch), never the revisit's own
// record, so a chain of revisits all point at the one full response; a
// revisit whose original cannot be found leaves no capture, and the next
// fetch archives the payload in full again. A 304 not archived, or a
// response not archived whose digest is the capture's, keeps it: the
// payload is still the one archived. Anything else drops it.
func (p *page) capture(f *Fetch, batch map[captureKey]Capture) {
	old := p.Capture
	p.Capture = Capture{}
	switch {
	case fullCapture(f):
		p.Capture = f.Archived
	case f.Revisit:
		if f.RefersTo == "" || f.RefersToDate == 0 {
			return
		}
		k := captureKey{f.RefersTo, f.RefersToDate}
		if old.URI == k.uri && old.Date == k.date {
			p.Capture = old
		} else if c, ok := batch[k]; ok {
			p.Capture = c
		}
		// A 304's digest is the one fetch was given: the capture's.
		if f.Digest != "" && f.Digest != p.Capture.Digest {
			p.Capture = Capture{}
		}
	case f.Archived.File != "":
		// Archived, but not as a payload a revisit may refer to (a 304
		// stored whole, a truncated body).
		if f.Status == 304 {
			p.Capture = old
		}
	case f.Status == 304 || f.Digest != "" && f.Digest == old.Digest:
		p.Capture = old
	}
}

// estimate sets the page's change rate from its statistics and its prior:
// its own (a sitemap changefreq) or the state's.
func (p *page) estimate(opt *UpdateOptions) {
	prior := opt.Prior
	if p.PriorRate > 0 {
		prior.Rate = p.PriorRate
	}
	rate, method := recrawl.EstimateStats(&p.Stats, prior)
	p.Delta, p.Prior = rate, method == recrawl.MethodPrior
}

// canonical retires a page whose fetch named another URL of its host as
// its canonical, unless asked not to, and makes the canonical a known page;
// a fetch naming no other canonical brings the page back.
func (a *applier) canonical(p *page, f *Fetch, opt *UpdateOptions) error {
	if f.Failed() {
		return nil
	}
	if f.Canonical == "" || opt.RecrawlCanonicalised {
		p.Flags &^= flagCanonical
		if f.Canonical == "" {
			return nil
		}
	} else {
		p.Flags |= flagCanonical
		a.st.Canonicalised++
	}
	_, err := a.get(f.Canonical, f.Host, true)
	return err
}

// discover takes a sitemap entry's changefreq as the prior of its page and
// its lastmod as an observation from the later of the last fetch and the
// last observation to the batch's time: changed when lastmod is after it.
func (a *applier) discover(p *page, d *Discovery, opt *UpdateOptions) {
	if r, ok := recrawl.ChangefreqRate(d.Changefreq); ok {
		p.PriorRate = r
		a.st.Changefreqs++
	}
	if from := max(p.LastFetch, p.LastObs); !d.Lastmod.IsZero() && p.LastFetch != 0 && a.now > from {
		changed := min(d.Lastmod.Unix(), a.now) > from
		p.Stats.Add(float64(a.now-from)/86400, changed)
		p.LastObs = a.now
		if changed {
			p.Flags |= flagBaselineStale
		}
		a.st.Lastmods++
	}
	p.estimate(opt)
}

// commit writes the touched pages and moves their index entries.
func (a *applier) commit(meta *boltstate.Bucket, def, wsum, wcount float64) error {
	due, blocked, cells := a.tx.Bucket(bDue), a.tx.Bucket(bBlocked), a.tx.Bucket(bCells)
	urls := make([]string, 0, len(a.seen))
	for u := range a.seen {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	count := map[cell]int64{}
	pages := int64(getFloat(meta, kPages))
	fresh := &freshSums{b: meta, bins: map[int16]*freshBin{}}
	for _, u := range urls {
		t := a.seen[u]
		p := t.p
		if !p.HasWeight {
			p.W = def
			a.st.Unweighted++
		}
		if p.RetryAt <= a.now {
			p.RetryAt = 0
		}
		if p.DeferTo <= a.now {
			p.DeferTo = 0
		}
		if t.oldKey != nil {
			bucket := blocked
			if t.oldDue {
				bucket = due
				count[t.oldCell]--
			}
			if err := bucket.Delete(t.oldKey); err != nil {
				return err
			}
		} else {
			pages++
		}
		if err := fresh.move(t.old, termOf(p), t.hadOld); err != nil {
			return err
		}
		// bbolt keeps the slices until the commit: a buffer each.
		if err := a.pages.Put([]byte(u), p.encode(nil)); err != nil {
			return err
		}
		var err error
		if until := p.blockedUntil(); until > 0 {
			err = blocked.Put(blockedKey(until, u), nil)
		} else {
			count[p.cell()]++
			err = due.Put(p.dueKey(u), p.dueValue())
		}
		if err != nil {
			return err
		}
	}
	for c, d := range count {
		if d == 0 {
			continue
		}
		k := c.key()
		v, err := cells.Get(k)
		if err != nil {
			return err
		}
		n, _ := binary.Varint(v)
		n += d
		if n <= 0 {
			err = cells.Delete(k)
		} else {
			err = cells.Put(k, binary.AppendVarint(nil, n))
		}
		if err != nil {
			return err
		}
	}
	a.st.Pages = int(pages)
	if err := fresh.write(); err != nil {
		return err
	}
	return errors.Join(putFloat(meta, kWSum, wsum), putFloat(meta, kWCount, wcount), putFloat(meta, kPages, float64(pages)))
}

// getFloat reads a float of meta; a record failing its check reads as 0
// and fails the transaction (boltstate.Tx.Err).
func getFloat(b *boltstate.Bucket, k []byte) float64 {
	v, _ := b.Get(k)
	if len(v) != 8 {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(v))
}

func putFloat(b *boltstate.Bucket, k []byte, v float64) error {
	return b.Put(k, binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)))
}
