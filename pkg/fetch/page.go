package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
	"github.com/sekitei/crawlkit/pkg/charset"
	"github.com/sekitei/crawlkit/pkg/directives"
	"github.com/sekitei/crawlkit/pkg/fetch/content"
	"github.com/sekitei/crawlkit/pkg/fetch/links"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/robots"
	"github.com/sekitei/crawlkit/pkg/textsig"
	"github.com/sekitei/crawlkit/pkg/warc"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

// fetchRobots fetches and parses robots.txt for a job's host and scheme,
// following up to robots.MaxRedirects redirects.
func (f *Fetcher) fetchRobots(ctx context.Context, j job) {
	si := j.robots - 1
	scheme := "http"
	if si == 1 {
		scheme = "https"
	}
	var group *robots.Group
	var fail *codedError
	u, err := weburl.Parse(scheme + "://" + j.host.key + "/robots.txt")
	if err != nil { // cannot happen: the host key came from a parsed URL
		fail = errorf(CodeURL, "robots.txt of %s: %v", j.host.key, err)
		group = robots.DisallowAll().Group(f.agent)
	}
	for hops := 0; u != nil; hops++ {
		if hops > 0 && f.cfg.HostRates != nil {
			// A robots.txt redirect is a request too, to its own host.
			if err := f.hostWait(ctx, hostKey(u)); err != nil {
				fail = errorf(CodeResting, "fetching robots.txt: %v", err)
				group = robots.DisallowAll().Group(f.agent)
				break
			}
		}
		start := f.cfg.Clock.Now()
		x := f.do(ctx, u, nil, robots.MaxSize, nil)
		f.observe(hostKey(u), start, x)
		f.stats.requests.Add(1)
		f.stats.bytes.Add(int64(len(x.body)))
		if x.status != 0 {
			if _, err := f.writeWARC(x, nil); err != nil {
				f.setFatal(err)
			}
		}
		if x.err != nil && x.status == 0 {
			fail = errorf(x.err.code, "fetching robots.txt: %s", x.err.msg)
			group = robots.DisallowAll().Group(f.agent)
			x.release()
			break
		}
		if x.status >= 300 && x.status < 400 && hops < robots.MaxRedirects {
			if next, err := u.Resolve(x.header.Get("Location")); err == nil {
				u = next
				x.release()
				continue
			}
		}
		body := x.body
		if x.status >= 200 && x.status < 300 {
			if dec, err := content.Decode(body, x.header.Get("Content-Encoding"), robots.MaxSize); err == nil || errors.Is(err, content.ErrTooLarge) {
				body = dec
			}
		}
		r := robots.FromStatus(x.status, body)
		if x.status >= 300 && x.status < 400 {
			r = robots.AllowAll() // more than five redirects: unavailable
		}
		group = r.Group(f.agent)
		if x.status == 429 || x.status >= 500 {
			fail = errorf(CodeRobots, "robots.txt answered %d: the host is treated as disallowing everything", x.status)
		}
		x.release()
		break
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	h := j.host
	ttl := f.cfg.RobotsTTL
	if fail != nil && ttl > 10*time.Minute {
		ttl = 10 * time.Minute // try a failed host again sooner
	}
	h.robots[si] = &robotsState{group: group, fail: fail, expires: time.Now().Add(ttl)}
	if f.cfg.HostRates != nil && !f.backoffOnly {
		d, _ := group.CrawlDelay()
		f.cfg.HostRates.SetCrawlDelay(h.key, d) // never exceeded, not capped
		return
	}
	h.delay = f.cfg.Delay
	if d, ok := group.CrawlDelay(); ok {
		h.delay = max(f.cfg.Delay, min(d, f.cfg.MaxCrawlDelay))
	}
}

// hostWait waits for a request to host by Config.HostRates (for requests
// outside the queues: robots.txt redirects, Get).
func (f *Fetcher) hostWait(ctx context.Context, host string) error {
	d, err := f.cfg.HostRates.Reserve(host)
	if err != nil {
		return err
	}
	if d > f.cfg.MaxHostWait {
		return fmt.Errorf("host %s may be asked again only in %v, over --max-host-wait", host, d.Round(time.Second))
	}
	t := time.NewTimer(f.cfg.Clock.Real(d))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fetchPage makes one request of an item and decides what follows: a retry,
// the next hop of a redirect, or the record.
func (f *Fetcher) fetchPage(ctx context.Context, j job) error {
	it := j.it
	var extra http.Header
	if len(it.chain) == 0 {
		extra = conditional(it.rec)
	}
	prev := previousCapture(it.rec) // read before the item is queued again
	// --timeout bounds the URL's whole time: its requests (every retry and
	// redirect hop) and the backoff waits between retries.
	left := f.cfg.Timeout - it.elapsed - it.waited
	if left <= 0 {
		f.done(j, nil, "", 0, 0)
		defer f.itemDone()
		return f.finish(it.rec, it, f.spentError(it, it.attempt+len(it.chain)))
	}
	rctx, rcancel := context.WithTimeout(ctx, left)
	defer rcancel()
	start := f.cfg.Clock.Now()
	x := f.do(rctx, it.u, extra, f.cfg.MaxSize, f.acceptType)
	defer x.release()
	f.observe(j.host.key, start, x)
	f.stats.requests.Add(1)
	f.stats.bytes.Add(int64(len(x.body)))
	it.elapsed += x.elapsed
	if x.err != nil && x.err.code == CodeTimeout && errors.Is(rctx.Err(), context.DeadlineExceeded) && left < f.cfg.Timeout {
		x.err = f.spentError(it, it.attempt+len(it.chain)+1) // the budget ran out on a retry or a later hop
	}

	stopping := f.stopping.Load()

	// The host is free as soon as the exchange is over: archiving and
	// parsing below do not hold up its next request.
	archive := func() (archived, bool, error) {
		if x.status == 0 || f.cfg.WARC == nil || x.refused {
			return archived{}, false, nil
		}
		a, err := f.writeWARC(x, prev)
		return a, err == nil, err
	}

	// Retries: network errors before a response, 429 and 503.
	if it.attempt < f.cfg.Retries && !stopping {
		wait := time.Duration(-1)
		switch {
		case x.err != nil && x.status == 0 && retryable(x.err.code):
			wait = f.backoff(it.attempt)
		case x.status == http.StatusTooManyRequests || x.status == http.StatusServiceUnavailable:
			wait = f.backoff(it.attempt)
			if ra, ok := retryAfter(x.header.Get("Retry-After"), time.Now()); ok {
				wait = ra
			}
			if wait > f.cfg.MaxRetryWait {
				wait = -1 // too long to wait: the answer stands
			}
		}
		if wait >= 0 && it.elapsed+it.waited+wait >= f.cfg.Timeout {
			wait = -1 // no time left in --timeout for another try: the answer stands
		}
		if wait >= 0 {
			it.waited += wait
			it.attempt++
			f.stats.retries.Add(1)
			f.done(j, it, j.host.key, f.cfg.Clock.Real(wait), 0)
			_, _, err := archive()
			return err
		}
	}

	// Redirects: the next hop is queued like any URL, behind robots.txt
	// and politeness for its host.
	var cerr *codedError
	if x.status >= 300 && x.status < 400 && x.status != http.StatusNotModified && x.err == nil && f.cfg.MaxRedirects > 0 {
		var next *weburl.URL
		next, cerr = f.redirectTarget(it, x)
		if cerr == nil {
			it.chain = append(it.chain, hop{URL: it.u.String(), Status: x.status})
			it.u = next
			it.attempt = 0
			f.done(j, it, hostKey(next), 0, 0)
			_, _, err := archive()
			return err
		}
	}
	f.done(j, nil, "", 0, 0)
	defer f.itemDone()
	loc, haveLoc, err := archive()
	if err != nil {
		// The response came but its WARC record could not be written (a
		// full disk, say): its fetch record still goes out, saying so,
		// before the error stops the run.
		werr := errorf(CodeWARC, "the WARC record was not written: %v", err)
		if eerr := f.finishResponse(it, x, archived{}, false, werr); eerr != nil {
			return eerr
		}
		return err
	}
	if x.status == 0 {
		if x.err.code == CodeInterrupted {
			return f.writeInterrupted(it.rec)
		}
		return f.finish(it.rec, it, x.err)
	}
	if cerr == nil {
		cerr = x.err
	}
	return f.finishResponse(it, x, loc, haveLoc, cerr)
}

// spentError is the error of a URL whose --timeout ran out over n
// requests.
func (f *Fetcher) spentError(it *item, n int) *codedError {
	return errorf(CodeTimeout, "--timeout %v spent over %d requests and %v of backoff", f.cfg.Timeout, n, it.waited.Round(time.Millisecond))
}

func (f *Fetcher) backoff(attempt int) time.Duration {
	d := f.cfg.RetryBackoff << attempt
	if d > f.cfg.MaxRetryWait {
		d = f.cfg.MaxRetryWait
	}
	return d
}

// retryAfter parses a Retry-After value: seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > 1<<31 {
			n = 1 << 31
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// acceptType applies the content-type policy to a response header.
func (f *Fetcher) acceptType(h http.Header) *codedError {
	if mt, ok := f.types.AcceptsHeader(h.Get("Content-Type")); !ok {
		return errorf(CodeType, "%s: body not read (--types)", mt)
	}
	return nil
}

// redirectTarget checks the Location of a 3xx answer, resolved against
// the request's URL as the URL Standard resolves it; the next hop requests
// it as serialised (a server that redirects to another order of the query
// gets that order).
func (f *Fetcher) redirectTarget(it *item, x *exchange) (*weburl.URL, *codedError) {
	loc := x.header.Get("Location")
	if loc == "" {
		return nil, errorf(CodeRedirect, "%d answer without a Location", x.status)
	}
	next, err := it.u.Resolve(loc)
	if errors.Is(err, weburl.ErrScheme) {
		return nil, errorf(CodeRedirect, "Location %q is not an http(s) URL", clip(loc, 100))
	}
	if err != nil {
		return nil, errorf(CodeRedirect, "bad Location %q: %v", clip(loc, 100), err)
	}
	ns := next.String()
	if ns == it.u.String() {
		return nil, errorf(CodeLoop, "redirects to itself")
	}
	for _, h := range it.chain {
		if h.URL == ns {
			return nil, errorf(CodeLoop, "redirect loop back to %s", clip(ns, 100))
		}
	}
	if len(it.chain) >= f.cfg.MaxRedirects {
		return nil, errorf(CodeRedirects, "more than %d redirects (--max-redirects)", f.cfg.MaxRedirects)
	}
	if cerr := f.trap(next); cerr != nil {
		return nil, cerr
	}
	return next, nil
}

// conditional returns If-None-Match / If-Modified-Since from the record's
// etag and last_modified fields.
func conditional(rec *record.Record) http.Header {
	var h http.Header
	if v, ok := rec.String("etag"); ok && v != "" && !strings.ContainsAny(v, "\r\n") {
		h = http.Header{"If-None-Match": {v}}
	}
	if v, ok := rec.String("last_modified"); ok && v != "" && !strings.ContainsAny(v, "\r\n") {
		if h == nil {
			h = http.Header{}
		}
		h["If-Modified-Since"] = []string{v}
	}
	return h
}

// finishResponse writes the record of an item whose last hop got a
// response.
func (f *Fetcher) finishResponse(it *item, x *exchange, arc archived, haveLoc bool, cerr *codedError) error {
	rec := it.rec
	notModified := x.status == http.StatusNotModified
	for _, k := range ownedFields {
		if !(notModified && keptOn304[k]) {
			rec.Delete(k)
		}
	}
	rec.SetString("host", hostKey(it.u))
	rec.SetInt("status", int64(x.status))
	rec.SetString("final_url", it.u.String())
	rec.SetTime("fetched_at", x.start)
	if len(it.chain) > 0 {
		rec.Set("redirects", it.chain)
	}
	if !notModified {
		ct := x.header.Get("Content-Type")
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != "" {
			rec.SetString("content_type", mt)
		}
		if !x.refused {
			rec.SetInt("length", int64(len(x.body)))
			rec.SetString("digest", x.digest())
			if x.truncated != "" {
				rec.SetString("truncated", x.truncated)
			}
			if haveLoc && !arc.revisit {
				x.warcID, x.warcFile = arc.id, arc.loc.File
			}
			if perr := f.parsePage(rec, it, x, mt, ct); perr != nil && cerr == nil {
				cerr = perr
			}
		}
	}
	if haveLoc {
		rec.SetString("warc_file", arc.loc.File)
		rec.SetInt("warc_offset", arc.loc.Offset)
		if arc.revisit {
			rec.SetString("warc_type", warc.TypeRevisit)
			if arc.refers.uri != "" {
				rec.SetString("warc_refers_to", arc.refers.uri)
				if t, err := time.Parse(time.RFC3339, arc.refers.date); err == nil {
					rec.SetTime("warc_refers_to_date", t)
				}
			}
		} else if !notModified && !x.refused {
			// A revisit's links are in the metadata of the capture it
			// refers to: the payload is the same.
			if err := f.writeOutlinks(x.url.String(), arc.id, x.start, rec); err != nil {
				werr := errorf(CodeWARC, "the outlinks metadata record was not written: %v", err)
				rec.SetString("error", werr.Error())
				f.setFatal(err)
				return f.emit(rec, werr.code, false)
			}
		}
	}
	rec.SetInt("elapsed_ms", it.elapsed.Milliseconds())
	if v := x.header.Get("ETag"); v != "" {
		rec.SetString("etag", v)
	}
	if v := x.header.Get("Last-Modified"); v != "" {
		rec.SetString("last_modified", v)
	}
	code := ""
	if cerr != nil {
		rec.SetString("error", cerr.Error())
		code = cerr.code
	}
	return f.emit(rec, code, code == "" && (x.status >= 200 && x.status < 300 || notModified))
}

// parsePage decodes an HTML body and records its charset, title, links,
// directives, canonical URL, refresh target and main-text signature.
func (f *Fetcher) parsePage(rec *record.Record, it *item, x *exchange, mt, ct string) *codedError {
	robotsSet := directives.For(f.agent)
	robotsSet.Header(x.header.Values("X-Robots-Tag"))
	defer func() {
		if l := robotsSet.List(); l != nil {
			rec.SetStrings("robots", l)
		}
		if robotsSet.Has(directives.NoIndex) {
			rec.SetBool("noindex", true)
		}
	}()
	if len(x.body) == 0 {
		return nil
	}
	body, release, err := f.decode(x)
	defer release()
	var cerr *codedError
	switch {
	case errors.Is(err, content.ErrTooLarge):
		cerr = errorf(CodeTooLarge, "decoded body over %d bytes: compression bomb stopped", f.cfg.MaxDecoded)
	case errors.Is(err, content.ErrUnknownEncoding):
		return errorf(CodeDecode, "%v", err)
	case err != nil && x.truncated == "":
		cerr = errorf(CodeDecode, "%v", err)
	}
	if mt == "" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	if mt != "text/html" && mt != "application/xhtml+xml" {
		return cerr
	}
	text, cs := charset.Decode(body, ct)
	text, rerr := f.maybeRender(rec, it, x, body, text)
	if rerr != nil && cerr == nil {
		cerr = rerr
	}
	rec.SetString("charset", cs.Name)
	rec.SetString("charset_source", cs.Source)
	p := links.Extract(text, it.u.String(), links.Options{MaxLinks: f.cfg.MaxLinks, Agent: f.agent, Encoding: cs.Encoding(), Signature: true})
	for _, d := range p.Robots {
		robotsSet.Meta("robots", d)
	}
	if p.Title != "" {
		rec.SetString("title", p.Title)
	}
	ls, nf := f.normalizeAll(p.Links, p.LinkURLs), f.normalizeAll(p.Nofollow, p.NofollowURLs)
	if robotsSet.Has(directives.NoFollow) {
		ls, nf = nil, append(ls, nf...)
	}
	if f.cfg.IgnoreNofollow {
		ls, nf = append(ls, nf...), nil
	}
	if len(nf) > 0 {
		rec.SetStrings("nofollow_links", nf)
	}
	rec.SetStrings("links", nonNil(ls))
	if p.Canonical != "" {
		rec.SetString("canonical", f.normalize(p.Canonical))
	}
	if p.Refresh != "" {
		rec.SetString("refresh", f.normalize(p.Refresh))
		rec.SetInt("refresh_delay", int64(p.RefreshDelay))
	}
	if p.Cut > 0 {
		rec.SetInt("links_cut", int64(p.Cut))
		f.stats.linksCut.Add(int64(p.Cut))
	}
	rec.SetString("text_simhash", textsig.Hex(p.TextSig))
	if f.cfg.Terms > 0 {
		base, _ := url.Parse(it.u.String())
		rec.SetStrings("terms", pageTerms(text, base, f.cfg.Terms))
	}
	return cerr
}

// pageTerms returns at most n words of an HTML page, its title first, with
// barrel's tokenizer, so the topic orders see the words the index sees.
func pageTerms(page []byte, base *url.URL, n int) []string {
	var d htmldoc.Doc
	d.Parse(page, base)
	terms := htmldoc.Words(d.Title)
	if len(terms) > n {
		terms = terms[:n]
	}
	for i := range d.Words {
		if len(terms) >= n {
			break
		}
		terms = append(terms, string(d.Key(&d.Words[i])))
	}
	return nonNil(terms)
}

// smallDecode is what every worker may decode at once; a body that decodes
// to more waits for one of Config.LargeDecodes buffers, which are reused
// from body to body, so that decoding memory stays bounded by Workers x
// smallDecode + LargeDecodes x MaxDecoded whatever the servers send (gzip
// bombs included) and makes no garbage for the collector to fall behind on.
const smallDecode = 1 << 20

// decode undoes the content coding of x's body within the memory bound;
// release gives back the buffer the result lives in.
func (f *Fetcher) decode(x *exchange) (body []byte, release func(), err error) {
	enc := x.header.Get("Content-Encoding")
	if enc == "" || strings.EqualFold(enc, "identity") {
		return x.body, func() {}, nil
	}
	small := min(int64(smallDecode), f.cfg.MaxDecoded)
	body, err = content.Decode(x.body, enc, small)
	if !errors.Is(err, content.ErrTooLarge) || small == f.cfg.MaxDecoded {
		return body, func() {}, err
	}
	buf := <-f.largeDecodes
	if cap(*buf) == 0 {
		// Made once at its full size: growing by doubling would leave
		// garbage as large as the buffer.
		*buf = make([]byte, 0, f.cfg.MaxDecoded+1)
	}
	body, err = content.DecodeInto(*buf, x.body, enc, f.cfg.MaxDecoded)
	if cap(body) > cap(*buf) {
		*buf = body[:0]
	}
	return body, func() { f.largeDecodes <- buf }, err
}

// normalize returns an absolute URL as it would be requested (the URL
// Standard's serialisation), or the URL as it is when the Standard rejects
// it.
func (f *Fetcher) normalize(u string) string {
	if w, err := weburl.Parse(u); err == nil {
		return w.String()
	}
	return u
}

// normalizeAll writes links as they would be requested and drops those of
// a key already listed (urlnorm's: another order of the query, a tracking
// tag), keeping the first spelling; what the Standard rejects (or is no
// http(s) URL) is dropped.
//
// us, when not nil, are ls parsed (the link extractor's), spared a parse.
func (f *Fetcher) normalizeAll(ls []string, us []*weburl.URL) []string {
	if len(ls) == 0 {
		return ls
	}
	seen := make(map[string]struct{}, len(ls))
	out := ls[:0]
	for i, l := range ls {
		var w *weburl.URL
		if us != nil && us[i] != nil {
			w = us[i]
		} else {
			var err error
			if w, err = weburl.Parse(l); err != nil {
				continue
			}
		}
		k := f.norm.Key(w)
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, w.String())
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// archived is where an exchange was archived and how.
type archived struct {
	loc     warc.Location // of the response or revisit record
	id      string        // its WARC-Record-ID
	revisit bool
	refers  capture // what the revisit refers to (empty when unknown)
}

// writeWARC archives an exchange as a response record, or as a revisit
// when its payload is already archived (see revisitOf), and its request.
// prev is the page's capture from an earlier run, if the input names one.
func (f *Fetcher) writeWARC(x *exchange, prev *capture) (archived, error) {
	if f.cfg.WARC == nil {
		return archived{}, nil
	}
	respID, reqID := warc.NewRecordID(), warc.NewRecordID()
	date := warc.FormatDate(x.start)
	target := x.url.String()

	// The response as received; HTTP/2 is written in HTTP/1.1 form, which is
	// what WARC readers expect, with an empty reason phrase (HTTP/2 has
	// none), and every record of the exchange names the protocol used in
	// WARC-Protocol fields, as the IIPC's WARC extensions for HTTP/2 say.
	proto, h2 := x.proto, !strings.HasPrefix(x.proto, "HTTP/1.")
	if h2 {
		proto = "HTTP/1.1"
	}
	head := make([]byte, 0, 1024)
	head = append(head, proto...)
	head = append(head, ' ')
	head = strconv.AppendInt(head, int64(x.status), 10)
	head = append(head, ' ')
	if !h2 {
		head = append(head, http.StatusText(x.status)...)
	}
	head = append(head, "\r\n"...)
	head = appendHeaders(head, x.header)
	ref, profile, revisit := f.revisitOf(x, prev)
	var resp *warc.Record
	if revisit {
		// The HTTP response header only: the payload is in the capture
		// referred to.
		resp = &warc.Record{Header: warc.Header{
			{Name: warc.FieldType, Value: warc.TypeRevisit},
			{Name: warc.FieldRecordID, Value: respID},
			{Name: warc.FieldDate, Value: date},
			{Name: warc.FieldTargetURI, Value: target},
			{Name: warc.FieldProfile, Value: profile},
			{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPResponse},
		}, Body: bytesReader(head)}
		if ref.uri != "" {
			resp.Header.Add(warc.FieldRefersToTargetURI, ref.uri)
			resp.Header.Add(warc.FieldRefersToDate, ref.date)
		}
		if profile == profileIdentical {
			resp.Header.Add(warc.FieldPayloadDigest, x.digest())
		}
	} else {
		resp = &warc.Record{Header: warc.Header{
			{Name: warc.FieldType, Value: warc.TypeResponse},
			{Name: warc.FieldRecordID, Value: respID},
			{Name: warc.FieldDate, Value: date},
			{Name: warc.FieldTargetURI, Value: target},
			{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPResponse},
			{Name: warc.FieldPayloadDigest, Value: x.digest()},
		}, Body: io.MultiReader(bytesReader(head), bytesReader(x.body))}
		if x.truncated != "" {
			resp.Header.Add(warc.FieldTruncated, x.truncated)
		}
	}
	protocols := x.protocols()
	for _, p := range protocols {
		resp.Header.Add(fieldProtocol, p)
	}
	if x.ip != "" {
		resp.Header.Add(warc.FieldIPAddress, x.ip)
	}

	reqHead := make([]byte, 0, 512)
	reqHead = append(reqHead, "GET "...)
	reqHead = append(reqHead, x.url.RequestURI()...)
	reqHead = append(reqHead, " HTTP/1.1\r\nHost: "...)
	reqHead = append(reqHead, x.url.Host...)
	reqHead = append(reqHead, "\r\n"...)
	reqHead = appendHeaders(reqHead, x.reqHeader)
	req := &warc.Record{Header: warc.Header{
		{Name: warc.FieldType, Value: warc.TypeRequest},
		{Name: warc.FieldRecordID, Value: reqID},
		{Name: warc.FieldDate, Value: date},
		{Name: warc.FieldTargetURI, Value: target},
		{Name: warc.FieldConcurrentTo, Value: respID},
		{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPRequest},
	}, Body: bytesReader(reqHead)}
	for _, p := range protocols {
		req.Header.Add(fieldProtocol, p)
	}
	if x.ip != "" {
		req.Header.Add(warc.FieldIPAddress, x.ip)
	}
	locs, err := f.cfg.WARC.Write(resp, req)
	if err != nil {
		return archived{}, err
	}
	if !revisit && revisitable(x) {
		f.payloads.add(capture{digest: x.digest(), uri: target, date: date})
	}
	return archived{loc: locs[0], id: respID, revisit: revisit, refers: ref}, nil
}

// fieldProtocol is the WARC-Protocol field (IIPC warc-specifications
// issue 42 and "WARC Extensions for HTTP/2"): one field per protocol of the
// exchange, by its ALPN name: "h2" or "http/1.1", then "tls/1.3" or the
// like when the connection was encrypted.
const fieldProtocol = "WARC-Protocol"

// protocols returns the WARC-Protocol values of an exchange.
func (x *exchange) protocols() []string {
	var ps []string
	switch {
	case strings.HasPrefix(x.proto, "HTTP/2"):
		if x.tls != 0 {
			ps = append(ps, "h2")
		} else {
			ps = append(ps, "h2c")
		}
	case x.proto == "HTTP/1.0":
		ps = append(ps, "http/1.0")
	default:
		ps = append(ps, "http/1.1")
	}
	switch x.tls {
	case 0:
	case tls.VersionTLS10:
		ps = append(ps, "tls/1.0")
	case tls.VersionTLS11:
		ps = append(ps, "tls/1.1")
	case tls.VersionTLS12:
		ps = append(ps, "tls/1.2")
	case tls.VersionTLS13:
		ps = append(ps, "tls/1.3")
	}
	return ps
}

// appendHeaders writes header fields sorted by name (Go does not keep the
// order of the wire) and ends the block with an empty line.
func appendHeaders(b []byte, h http.Header) []byte {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			for i := 0; i < len(v); i++ {
				if c := v[i]; c != '\r' && c != '\n' {
					b = append(b, c)
				}
			}
			b = append(b, "\r\n"...)
		}
	}
	return append(b, "\r\n"...)
}

type byteReader struct {
	b []byte
}

func bytesReader(b []byte) *byteReader { return &byteReader{b} }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
