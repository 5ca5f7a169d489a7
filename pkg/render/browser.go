package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Response is what a SubFetcher answers for one request of the browser.
type Response struct {
	Status int
	Header http.Header // without Content-Encoding: Body is decoded
	Body   []byte
}

// SubFetcher makes a request on the browser's behalf; an error refuses it
// (robots.txt, a private address, the network) and the browser sees the
// request fail.
type SubFetcher func(ctx context.Context, url string) (Response, error)

// Page is the fetched page to render: its URL, and its response, which the
// browser is served instead of asking again.
type Page struct {
	URL      string
	Response Response
}

// Result is what a rendering saw.
type Result struct {
	HTML        string // the DOM serialised once the page settled
	Subrequests int    // requests made for it (not the page's own)
	Blocked     int    // requests refused: robots.txt, address, errors, over the cap
}

// Options configure a Browser.
type Options struct {
	Path           string        // chromium's executable; "" looks up chromium, chromium-browser, google-chrome
	Tabs           int           // pages rendered at once (default 2)
	Budget         time.Duration // time for one page, load to settled DOM (default 10s)
	Settle         time.Duration // quiet time with no request in flight that ends a rendering (default 300ms)
	MaxSubrequests int           // requests a page may make (default 50)
}

// Browser is one headless Chromium with a bounded pool of tabs. It is
// restarted when it crashes or stops answering.
type Browser struct {
	opt  Options
	tabs chan struct{}

	mu       sync.Mutex
	cancel   context.CancelFunc // of the browser
	ctx      context.Context    // the browser's chromedp context; nil until started
	closed   bool
	restarts atomic.Int64
}

// LookPath finds a Chromium executable.
func LookPath() (string, error) {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH (Debian: apt-get install chromium)")
}

// Start starts the browser.
func Start(opt Options) (*Browser, error) {
	b, err := New(opt)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.startLocked(); err != nil {
		return nil, err
	}
	return b, nil
}

// New returns a Browser that starts chromium when it renders its first
// page, so that a crawl that renders nothing pays nothing; it only checks
// that the executable exists.
func New(opt Options) (*Browser, error) {
	if opt.Path == "" {
		p, err := LookPath()
		if err != nil {
			return nil, err
		}
		opt.Path = p
	}
	if opt.Tabs <= 0 {
		opt.Tabs = 2
	}
	if opt.Budget <= 0 {
		opt.Budget = 10 * time.Second
	}
	if opt.Settle <= 0 {
		opt.Settle = 300 * time.Millisecond
	}
	if opt.MaxSubrequests <= 0 {
		opt.MaxSubrequests = 50
	}
	return &Browser{opt: opt, tabs: make(chan struct{}, opt.Tabs)}, nil
}

func (b *Browser) startLocked() error {
	// One directory holds the browser's profile and its temp dir (its
	// singleton socket among them): removed when the browser stops, where
	// a browser stopped by its context leaves its socket's directory in
	// /tmp, one a run of a cron job. A run killed with kill -9 cannot
	// remove its own: the next start does (sweepOrphans).
	base := browserTempBase(os.TempDir())
	sweepOrphans(base)
	dir, err := os.MkdirTemp(base, "chromium-*")
	if err != nil {
		return fmt.Errorf("starting chromium: %w", err)
	}
	os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0], chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts, chromedp.ExecPath(b.opt.Path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(filepath.Join(dir, "profile")), chromedp.Env("TMPDIR="+dir),
		chromedp.Flag("disable-component-update", true),
		// No cache: every request of every page is seen, checked and counted.
		chromedp.Flag("disk-cache-size", "1"), chromedp.Flag("media-cache-size", "1"))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	stop := func() {
		bcancel()
		acancel() // waits for the browser's processes to end
		os.RemoveAll(dir)
	}
	if err := chromedp.Do(bctx); err != nil {
		stop()
		return fmt.Errorf("starting chromium: %w", err)
	}
	b.ctx = bctx
	b.cancel = stop
	return nil
}

// ownerFile names, in a browser's directory, the process that made it.
const ownerFile = "crawlkit-render.pid"

// sweepOrphans removes the browsers' directories in base whose process
// ended without removing its own (killed with kill -9; its chromium died
// with it, by the allocator's Pdeathsig). A directory without an owner
// file (another program's, or one being made), or whose owner runs (or
// cannot be asked), is left.
func sweepOrphans(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "chromium-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if ended(pid) {
			os.RemoveAll(d)
		}
	}
}

// ended reports whether process pid has ended: it is gone, or a zombie
// (killed, and not yet reaped by its parent).
func ended(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return errors.Is(err, syscall.ESRCH)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command, in parentheses that may hold any byte.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// socketTail is what chromium adds to its TMPDIR for its singleton
// socket, below the browser's directory (chromium-*): a Unix socket's path
// must fit 104 bytes (108 on Linux).
const socketTail = len("/chromium-1234567890/org.chromium.Chromium.XXXXXX/SingletonSocket")

// browserTempBase is where the browser's directory is made: the temp dir,
// or /tmp where the temp dir's path is too long for the socket below it
// (chromium would not start).
func browserTempBase(tmp string) string {
	if len(tmp)+socketTail > 104 {
		return "/tmp"
	}
	return tmp
}

// PID is the browser process's id (for tests that kill it).
func (b *Browser) PID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx == nil {
		return 0
	}
	if p := chromedp.FromContext(b.ctx).Browser.Process(); p != nil {
		return p.Pid
	}
	return 0
}

// Restarts is how many times the browser was restarted.
func (b *Browser) Restarts() int64 { return b.restarts.Load() }

// Close stops the browser.
func (b *Browser) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.cancel != nil {
		b.cancel()
		b.cancel = nil
	}
}

// healthy asks the browser for its targets, within a few seconds.
func (b *Browser) healthy(bctx context.Context) bool {
	ctx, cancel := context.WithTimeout(bctx, 3*time.Second)
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, target.GetTargets, target.GetTargetsParams{})
	return err == nil
}

// restart replaces the browser whose context was bctx, unless another
// caller did already.
func (b *Browser) restart(bctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx != bctx || b.cancel == nil {
		return nil
	}
	b.cancel()
	b.ctx, b.cancel = nil, nil // a failed start is tried again by the next page
	b.restarts.Add(1)
	return b.startLocked()
}

// Render loads page in a tab of the pool, serves the page its own response,
// passes every other request to sub (at most Options.MaxSubrequests), and
// returns the DOM once no request has been in flight for Options.Settle,
// or when Options.Budget is spent. A browser that crashed or hangs is
// restarted, and the error says rendering failed.
func (b *Browser) Render(ctx context.Context, page Page, sub SubFetcher) (Result, error) {
	select {
	case b.tabs <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-b.tabs }()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return Result{}, errors.New("rendering failed: the browser is closed")
	}
	if b.ctx == nil {
		if err := b.startLocked(); err != nil {
			b.mu.Unlock()
			return Result{}, fmt.Errorf("rendering failed: %v", err)
		}
	}
	bctx := b.ctx
	b.mu.Unlock()
	res, err := b.render(ctx, bctx, page, sub)
	if err != nil {
		if !b.healthy(bctx) {
			if rerr := b.restart(bctx); rerr != nil {
				return res, fmt.Errorf("rendering failed: %v; restarting the browser: %v", err, rerr)
			}
			return res, fmt.Errorf("rendering failed: the browser crashed or hung (restarted): %v", err)
		}
		return res, fmt.Errorf("rendering failed: %v", err)
	}
	return res, nil
}

func (b *Browser) render(ctx context.Context, bctx context.Context, page Page, sub SubFetcher) (Result, error) {
	tctx, tcancel := chromedp.NewContext(bctx)
	defer tcancel() // closes the tab
	budget, bcancel := context.WithTimeout(tctx, b.opt.Budget)
	defer bcancel()
	stopWatch := context.AfterFunc(ctx, bcancel)
	defer stopWatch()

	var (
		inflight  atomic.Int64
		last      atomic.Int64 // unix nanos of the last request's end
		subs      atomic.Int64
		blocked   atomic.Int64
		served    atomic.Bool
		handlers  sync.WaitGroup
		documents = page.URL
	)
	last.Store(time.Now().UnixNano())
	paused := chromedp.Events(budget, fetch.RequestPaused)
	if _, err := chromedp.Call(budget, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return Result{}, err
	}
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		for ev, err := range paused {
			if err != nil {
				return
			}
			inflight.Add(1)
			handlers.Add(1)
			go func(ev fetch.EventRequestPaused) {
				defer handlers.Done()
				defer func() { last.Store(time.Now().UnixNano()); inflight.Add(-1) }()
				var r Response
				var err error
				switch {
				case ev.Request.URL == documents && !served.Load():
					served.Store(true)
					r = page.Response
				case skipped(ev):
					// Not needed to build the DOM: not asked, not counted.
					_, _ = chromedp.Call(budget, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
					return
				case ev.Request.Method != http.MethodGet && ev.Request.Method != http.MethodHead:
					err = fmt.Errorf("%s request not made", ev.Request.Method)
				case subs.Add(1) > int64(b.opt.MaxSubrequests):
					subs.Add(-1)
					err = errors.New("over the cap of subrequests")
				default:
					if r, err = sub(budget, ev.Request.URL); err != nil {
						subs.Add(-1)
					}
				}
				if err != nil {
					blocked.Add(1)
					_, _ = chromedp.Call(budget, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
					return
				}
				hs := make([]*fetch.HeaderEntry, 0, len(r.Header))
				for k, vs := range r.Header {
					switch http.CanonicalHeaderKey(k) {
					case "Content-Encoding", "Content-Length", "Transfer-Encoding", "Set-Cookie":
						continue
					}
					for _, v := range vs {
						hs = append(hs, &fetch.HeaderEntry{Name: k, Value: v})
					}
				}
				_, _ = chromedp.Call(budget, fetch.FulfillRequest, fetch.FulfillRequestParams{
					RequestID: ev.RequestID, ResponseCode: int64(r.Status), ResponseHeaders: hs, Body: r.Body})
			}(ev)
		}
	}()
	// On return: no more events, then no handler left (a handler waiting
	// on a subrequest ends with the budget's context).
	defer func() {
		bcancel()
		<-loopDone
		handlers.Wait()
	}()

	if err := chromedp.Do(budget, chromedp.Navigate(page.URL)); err != nil {
		return Result{}, err
	}
	// Settle: no request in flight for Settle.
	tick := time.NewTicker(b.opt.Settle / 4)
	defer tick.Stop()
	for inflight.Load() > 0 || time.Since(time.Unix(0, last.Load())) < b.opt.Settle {
		select {
		case <-tick.C:
		case <-budget.Done():
			if ctx.Err() != nil {
				return Result{}, ctx.Err()
			}
			goto read // the budget is spent: the DOM as it is
		}
	}
read:
	rctx, rcancel := context.WithTimeout(tctx, 5*time.Second)
	defer rcancel()
	s, err := chromedp.Run(rctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	res := Result{HTML: s, Subrequests: int(subs.Load()), Blocked: int(blocked.Load())}
	if err != nil {
		return res, err
	}
	res.HTML = "<!DOCTYPE html>\n" + s
	return res, nil
}

// skipped reports a request the DOM does not need: images, media, fonts,
// pings and the favicon are refused without a request.
func skipped(ev fetch.EventRequestPaused) bool {
	switch ev.ResourceType {
	case network.ResourceTypeImage, network.ResourceTypeMedia, network.ResourceTypeFont,
		network.ResourceTypePing, network.ResourceTypeCSPViolationReport:
		return true
	}
	return strings.HasSuffix(ev.Request.URL, "/favicon.ico")
}
