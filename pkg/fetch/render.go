package fetch

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sekitei/crawlkit/pkg/fetch/content"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/render"
	"github.com/sekitei/crawlkit/pkg/robots"
	"github.com/sekitei/crawlkit/pkg/warc"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

// CodeRender is the error code of a page whose rendering failed: its record
// holds the raw fetch's fields.
const CodeRender = "render"

// Renderer renders a fetched page in a browser (render.Browser does);
// every request the browser makes goes through sub.
type Renderer interface {
	Render(ctx context.Context, page render.Page, sub render.SubFetcher) (render.Result, error)
}

// RenderStats count what rendering did (see Stats.Render).
type RenderStats struct {
	Pages       int64 // pages rendered
	Failed      int64 // renderings that failed (the raw page was used)
	Subrequests int64 // requests of the browser answered through fetch
	Blocked     int64 // requests of the browser refused: robots.txt, address, cap, errors
}

// fieldRefersTo names the record a conversion record was made from.
const fieldRefersTo = "WARC-Refers-To"

// renderState is the Fetcher's rendering state.
type renderState struct {
	stats  struct{ pages, failed, subs, blocked atomic.Int64 }
	mu     sync.Mutex
	robots map[string]*robots.Group // scheme://host of subrequests to hosts not in the queues
	next   map[string]time.Time     // when a host may next get a subrequest (without HostRates)
}

func (f *Fetcher) renderStats() RenderStats {
	r := &f.rendering
	return RenderStats{Pages: r.stats.pages.Load(), Failed: r.stats.failed.Load(),
		Subrequests: r.stats.subs.Load(), Blocked: r.stats.blocked.Load()}
}

// maybeRender renders an HTML page when Config.Render asks for it and
// returns the HTML whose links, text, title and directives the record
// takes: the rendered DOM, or text when the page is not rendered or its
// rendering failed (then with an error). body is the page as received,
// content coding removed.
func (f *Fetcher) maybeRender(rec *record.Record, it *item, x *exchange, body, text []byte) ([]byte, *codedError) {
	if f.cfg.Renderer == nil || f.cfg.Render == render.Never || x.status < 200 || x.status >= 300 || x.truncated != "" {
		return text, nil
	}
	why := ""
	if f.cfg.Render == render.Auto {
		shell, reason := render.Shell(text)
		if !shell {
			return text, nil
		}
		why = reason
	}
	h := x.header.Clone()
	h.Del("Content-Encoding")
	page := render.Page{URL: it.u.String(), Response: render.Response{Status: x.status, Header: h, Body: body}}
	ctx := context.Background()
	res, err := f.cfg.Renderer.Render(ctx, page, f.subfetch)
	r := &f.rendering
	if err != nil {
		r.stats.failed.Add(1)
		return text, errorf(CodeRender, "%v", err)
	}
	r.stats.pages.Add(1)
	rec.SetBool("rendered", true)
	if why != "" {
		rec.SetString("render_reason", why) // why --render auto judged it a shell
	}
	rec.SetInt("render_subrequests", int64(res.Subrequests))
	rec.SetInt("render_blocked", int64(res.Blocked))
	if f.cfg.WARC != nil && x.warcID != "" {
		conv := &warc.Record{Header: warc.Header{
			{Name: warc.FieldType, Value: warc.TypeConversion},
			{Name: warc.FieldRecordID, Value: warc.NewRecordID()},
			{Name: warc.FieldDate, Value: warc.FormatDate(x.start)},
			{Name: warc.FieldTargetURI, Value: page.URL},
			{Name: fieldRefersTo, Value: x.warcID},
			{Name: warc.FieldContentType, Value: "text/html; charset=utf-8"},
		}, Body: bytesReader([]byte(res.HTML))}
		locs, werr := f.cfg.WARC.Write(conv)
		if werr != nil {
			f.setFatal(werr)
			return []byte(res.HTML), errorf(CodeWARC, "the rendered DOM was not written: %v", werr)
		}
		rec.SetInt("render_warc_offset", locs[0].Offset)
		if locs[0].File != x.warcFile {
			rec.SetString("render_warc_file", locs[0].File)
		}
	}
	return []byte(res.HTML), nil
}

// subfetch makes a request of the browser's: a GET under the crawler's
// rules (robots.txt, the address policy, the host's pace), counted in the
// stats and archived with --render-archive.
func (f *Fetcher) subfetch(ctx context.Context, raw string) (render.Response, error) {
	r := &f.rendering
	fail := func(cerr *codedError) (render.Response, error) {
		r.stats.blocked.Add(1)
		return render.Response{}, cerr
	}
	u, err := weburl.Parse(raw)
	if err != nil {
		return fail(errorf(CodeURL, "%v", err))
	}
	if cerr := f.subAllowed(ctx, u); cerr != nil {
		return fail(cerr)
	}
	if err := f.subWait(ctx, u); err != nil {
		return fail(errorf(CodeResting, "%v", err))
	}
	// Not observed by the crawl-rate estimate: a browser's burst of
	// requests for one page is not the host's answer to the crawl's pace.
	x := f.do(ctx, u, nil, f.cfg.MaxSize, nil)
	defer x.release()
	f.stats.requests.Add(1)
	f.stats.bytes.Add(int64(len(x.body)))
	if x.status == 0 {
		return fail(x.err)
	}
	if f.cfg.RenderArchive && f.cfg.WARC != nil && !x.refused {
		if _, err := f.writeWARC(x, nil); err != nil {
			f.setFatal(err)
		}
	}
	body, err := content.Decode(x.body, x.header.Get("Content-Encoding"), f.cfg.MaxDecoded)
	if err != nil {
		return fail(errorf(CodeDecode, "%v", err))
	}
	h := x.header.Clone()
	h.Del("Content-Encoding")
	r.stats.subs.Add(1) // answered; a refused or failed one counts in blocked, as in the record
	return render.Response{Status: x.status, Header: h, Body: append([]byte(nil), body...)}, nil
}

// subAllowed checks a subrequest against robots.txt: the host's rules as
// the queues hold them, or fetched once for a host the crawl has not asked.
func (f *Fetcher) subAllowed(ctx context.Context, u *weburl.URL) *codedError {
	if f.cfg.IgnoreRobots {
		return nil
	}
	key := hostKey(u)
	si := schemeIndex(u.Scheme)
	var g *robots.Group
	f.mu.Lock()
	if h := f.hosts[key]; h != nil {
		if rs := h.robots[si]; rs != nil && !rs.fetching && rs.group != nil {
			if rs.fail != nil {
				f.mu.Unlock()
				return rs.fail
			}
			g = rs.group
		}
	}
	f.mu.Unlock()
	if g == nil {
		g = f.subRobots(ctx, u.Scheme+"://"+key)
	}
	if !g.Allowed(u.RequestURI()) {
		return errorf(CodeRobots, "disallowed by %s://%s/robots.txt", u.Scheme, key)
	}
	return nil
}

// subRobots fetches robots.txt of origin once per run.
func (f *Fetcher) subRobots(ctx context.Context, origin string) *robots.Group {
	r := &f.rendering
	r.mu.Lock()
	defer r.mu.Unlock() // one robots.txt at a time: rare, and never twice
	if g := r.robots[origin]; g != nil {
		return g
	}
	if r.robots == nil {
		r.robots = map[string]*robots.Group{}
	}
	g := robots.DisallowAll().Group(f.agent)
	if u, err := weburl.Parse(origin + "/robots.txt"); err == nil {
		x := f.do(ctx, u, nil, robots.MaxSize, nil)
		f.stats.requests.Add(1)
		f.stats.bytes.Add(int64(len(x.body)))
		if x.status != 0 {
			b := x.body
			if dec, err := content.Decode(b, x.header.Get("Content-Encoding"), robots.MaxSize); err == nil {
				b = dec
			}
			if x.status >= 300 && x.status < 400 {
				g = robots.AllowAll().Group(f.agent)
			} else {
				g = robots.FromStatus(x.status, b).Group(f.agent)
			}
		}
		x.release()
	}
	r.robots[origin] = g
	return g
}

// subWait paces subrequests: by Config.HostRates when set (not --backoff's
// estimate alone), else by the host's delay. A host the crawl fetches pages
// from has one schedule for both: a subrequest takes the host's (and its
// slot's) next start and moves it on by the delay, so pages and the
// browser's requests together keep the host's pace.
func (f *Fetcher) subWait(ctx context.Context, u *weburl.URL) error {
	key := hostKey(u)
	if f.cfg.HostRates != nil && !f.backoffOnly {
		return f.hostWait(ctx, key)
	}
	if f.cfg.Delay <= 0 {
		return nil
	}
	at, crawled := f.reserveCrawledHost(key)
	if !crawled {
		r := &f.rendering
		r.mu.Lock()
		if r.next == nil {
			r.next = map[string]time.Time{}
		}
		at = r.next[key]
		if now := time.Now(); at.Before(now) {
			at = now
		}
		r.next[key] = at.Add(f.cfg.Delay)
		r.mu.Unlock()
	}
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reserveCrawledHost takes the next start of a host the crawl has queued:
// the later of its own and its slot's next start, or now; both then wait
// the host's delay (Crawl-delay included) after it.
func (f *Fetcher) reserveCrawledHost(key string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[key]
	if h == nil {
		return time.Time{}, false
	}
	at := time.Now()
	if h.next.After(at) {
		at = h.next
	}
	if sl := h.slot; sl != nil && sl.next.After(at) {
		at = sl.next
	}
	next := at.Add(max(h.delay, f.cfg.Delay))
	h.next = next
	if h.heapIdx >= 0 {
		heap.Fix(&f.ready, h.heapIdx)
	}
	if sl := h.slot; sl != nil && next.After(sl.next) {
		sl.next = next
	}
	return at, true
}
