package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/pkg/warc"
)

func pageHandler(robotsTxt string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if robotsTxt == "" {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, robotsTxt)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>Page %s</title></head><body><a href="/next%s#x">n</a> <a href="http://other.test/">o</a></body></html>`, r.URL.Path, r.URL.Path)
	})
}

// Per-host gaps seen by the servers are never shorter than the delay, or
// than a host's Crawl-delay; disallowed URLs are never requested; hosts are
// fetched in parallel.
func TestPoliteness(t *testing.T) {
	const delay = 150 * time.Millisecond
	plain := []*testHost{
		newHost(t, "127.0.0.2", pageHandler("")),
		newHost(t, "127.0.0.3", pageHandler("User-agent: *\nDisallow: /private\n")),
		newHost(t, "127.0.0.4", pageHandler("User-agent: crawlkit\nDisallow: /secret\nAllow: /secret/open\n\nUser-agent: *\nDisallow: /\n")),
	}
	slow := newHost(t, "127.0.0.5", pageHandler("User-agent: *\nCrawl-delay: 0.4\n"))
	var inputs []string
	for i := 0; i < 5; i++ {
		for _, h := range plain {
			inputs = append(inputs, h.url(fmt.Sprintf("/p%d", i)))
		}
		inputs = append(inputs, slow.url(fmt.Sprintf("/p%d", i)))
	}
	inputs = append(inputs, plain[1].url("/private/x"), plain[1].url("/private"), plain[2].url("/secret/a"), plain[2].url("/secret/open/b"))
	cfg := testConfig()
	cfg.Delay = delay
	start := time.Now()
	out := runFetch(t, cfg, inputs...)
	took := time.Since(start)

	for _, h := range plain {
		if g := h.minGap(); g < delay {
			t.Errorf("%s: requests %v apart, delay is %v", h.addr, g, delay)
		}
		if n := len(h.log()); n != 6 && h != plain[2] {
			t.Errorf("%s: %d requests, want robots.txt + 5 pages: %v", h.addr, n, h.log())
		}
	}
	if g := slow.minGap(); g < 400*time.Millisecond {
		t.Errorf("Crawl-delay 0.4 host: requests %v apart", g)
	}
	for _, p := range []string{"/private/x", "/private", "/secret/a"} {
		for _, h := range plain {
			if h.requested(p) > 0 {
				t.Errorf("%s%s was requested despite robots.txt", h.addr, p)
			}
		}
	}
	for _, u := range []string{plain[1].url("/private/x"), plain[1].url("/private"), plain[2].url("/secret/a")} {
		if r := out[u].rec; errCode(r) != CodeRobots || r.Has("status") {
			t.Errorf("%s: %s", u, r.AppendJSON(nil))
		}
	}
	if r := out[plain[2].url("/secret/open/b")].rec; num(r, "status") != 200 {
		t.Errorf("allowed by the agent's own group: %s", r.AppendJSON(nil))
	}
	// The Crawl-delay host needs ~5 x 0.4 s; the others run beside it.
	if took > 4*time.Second {
		t.Errorf("took %v: hosts not interleaved?", took)
	}
	r := out[plain[0].url("/p1")].rec
	if num(r, "status") != 200 || str(r, "title") != "Page /p1" || str(r, "content_type") != "text/html" ||
		!strings.HasPrefix(str(r, "digest"), "sha1:") || str(r, "final_url") != plain[0].url("/p1") {
		t.Errorf("page record: %s", r.AppendJSON(nil))
	}
	var ls []string
	r.Decode("links", &ls)
	if len(ls) != 2 || ls[0] != plain[0].url("/next/p1") || ls[1] != "http://other.test/" {
		t.Errorf("links %q", ls)
	}
}

// PerHost > 1 lets several requests to one host run at once, their starts
// spaced by the delay.
func TestPerHost(t *testing.T) {
	var inFlight, most atomic.Int32
	h := newHost(t, "127.0.0.6", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
		inFlight.Add(-1)
		io.WriteString(w, "ok")
	}))
	var inputs []string
	for i := 0; i < 12; i++ {
		inputs = append(inputs, h.url("/"+strconv.Itoa(i)))
	}
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.PerHost = 3
	cfg.Delay = 20 * time.Millisecond
	runFetch(t, cfg, inputs...)
	if m := most.Load(); m != 3 {
		t.Errorf("at most %d requests at once, want 3", m)
	}
	// With several connections the delay spaces the starts on our side; the
	// server sees each start up to the scheduling jitter late, which on a
	// loaded machine can take one gap to nothing: every third start is
	// still two delays (less that jitter) after the first, where without
	// the delay three start together.
	if g := h.minSpan(2); g < cfg.Delay {
		t.Errorf("three starts within %v", g)
	}
}

// Misbehaving servers each get the right record, and none holds up the
// well-behaved host.
func TestBadServers(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hang := newHost(t, "127.0.0.10", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	stall := newHost(t, "127.0.0.11", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", "100000")
		w.Write(bytes.Repeat([]byte("x"), 1000))
		w.(http.Flusher).Flush()
		select { // then nothing: a read timeout mid-body
		case <-release:
		case <-r.Context().Done():
		}
	}))
	reset := newHost(t, "127.0.0.12", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	}))
	var redirectN atomic.Int32
	redir := newHost(t, "127.0.0.13", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.URL.Path == "/loop-a":
			http.Redirect(w, r, "/loop-b", http.StatusFound)
		case r.URL.Path == "/loop-b":
			http.Redirect(w, r, "/loop-a", http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, "/chain/"):
			http.Redirect(w, r, fmt.Sprintf("/chain/%d", redirectN.Add(1)), http.StatusFound)
		case r.URL.Path == "/ftp":
			http.Redirect(w, r, "ftp://x.test/", http.StatusFound)
		}
	}))
	bomb := gzipBomb(t, 64<<20)
	big := newHost(t, "127.0.0.14", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/huge":
			w.Header().Set("Content-Type", "text/html")
			for i := 0; i < 500; i++ { // 5 MB
				if _, err := w.Write(bytes.Repeat([]byte("<p>big</p>"), 1000)); err != nil {
					return
				}
			}
		case "/bomb":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		}
	}))
	var tries429 atomic.Int32
	busy := newHost(t, "127.0.0.15", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/429":
			if tries429.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, "fine now")
		case "/503":
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	good := newHost(t, "127.0.0.16", pageHandler(""))

	cfg := testConfig()
	cfg.ReadTimeout = 400 * time.Millisecond
	cfg.Timeout = 3 * time.Second
	cfg.MaxSize = 100 << 10
	cfg.MaxDecoded = 1 << 20
	cfg.MaxRedirects = 5
	cfg.Retries = 2
	inputs := []string{hang.url("/"), stall.url("/"), reset.url("/"), redir.url("/loop-a"), redir.url("/chain/0"),
		redir.url("/ftp"), big.url("/huge"), big.url("/bomb"), busy.url("/429"), busy.url("/503")}
	var goodURLs []string
	for i := 0; i < 10; i++ {
		goodURLs = append(goodURLs, good.url(fmt.Sprintf("/g%d", i)))
	}
	inputs = append(inputs, goodURLs...)
	start := time.Now()
	out := runFetch(t, cfg, inputs...)

	expect := func(u, code string, status int) {
		t.Helper()
		r := out[u].rec
		if errCode(r) != code || num(r, "status") != status {
			t.Errorf("%s: want error %q status %d, got %s", u, code, status, r.AppendJSON(nil))
		}
	}
	expect(hang.url("/"), CodeTimeout, 0)
	expect(stall.url("/"), CodeTimeout, 200)
	if r := out[stall.url("/")].rec; str(r, "truncated") != "time" || num(r, "length") != 1000 {
		t.Errorf("stalled body: %s", r.AppendJSON(nil))
	}
	expect(reset.url("/"), CodeNetwork, 0)
	// 1 + 2 retries, and net/http itself retries once when a reused
	// keep-alive connection dies before answering.
	if n := reset.requested("/"); n < 3 || n > 4 {
		t.Errorf("resetting server asked %d times, want 1 + 2 retries", n)
	}
	expect(redir.url("/loop-a"), CodeLoop, 301)
	expect(redir.url("/chain/0"), CodeRedirects, 302)
	expect(redir.url("/ftp"), CodeRedirect, 302)
	expect(big.url("/huge"), CodeTooLarge, 200)
	if r := out[big.url("/huge")].rec; num(r, "length") != 100<<10 || str(r, "truncated") != "length" {
		t.Errorf("huge: %s", r.AppendJSON(nil))
	}
	expect(big.url("/bomb"), CodeTooLarge, 200)
	if r := out[big.url("/bomb")].rec; num(r, "length") != len(bomb) || !strings.Contains(str(r, "error"), "bomb") {
		t.Errorf("bomb: %s", r.AppendJSON(nil))
	}
	expect(busy.url("/429"), "", 200)
	expect(busy.url("/503"), "", 503)
	if n := busy.requested("/503"); n != 3 {
		t.Errorf("503 asked %d times, want 3", n)
	}
	// Retry-After: 1 was honoured.
	var first, second time.Time
	for _, h := range busy.log() {
		if h.path == "/429" {
			if first.IsZero() {
				first = h.at
			} else {
				second = h.at
			}
		}
	}
	if second.Sub(first) < time.Second {
		t.Errorf("retried after %v despite Retry-After: 1", second.Sub(first))
	}
	var chain []hop
	out[redir.url("/loop-a")].rec.Decode("redirects", &chain)
	if len(chain) != 1 || chain[0].URL != redir.url("/loop-a") || chain[0].Status != 302 ||
		str(out[redir.url("/loop-a")].rec, "final_url") != redir.url("/loop-b") {
		t.Errorf("chain %+v", chain)
	}
	// The good host finished long before the hanging ones gave up.
	for _, u := range goodURLs {
		e := out[u]
		if num(e.rec, "status") != 200 {
			t.Errorf("%s: %s", u, e.rec.AppendJSON(nil))
		}
		if d := e.at.Sub(start); d > 1500*time.Millisecond {
			t.Errorf("%s done after %v: held up by bad hosts", u, d)
		}
	}
}

func gzipBomb(t *testing.T, n int) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write([]byte("<html><title>bomb</title>"))
	zero := make([]byte, 1<<20)
	for i := 0; i < n>>20; i++ {
		zw.Write(zero)
	}
	zw.Close()
	return b.Bytes()
}

// Redirects are scheduled hops: robots.txt of the target host applies, and
// the chain is recorded.
func TestRedirectAcrossHosts(t *testing.T) {
	target := newHost(t, "127.0.0.21", pageHandler("User-agent: *\nDisallow: /no\n"))
	src := newHost(t, "127.0.0.20", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/to-ok":
			http.Redirect(w, r, target.url("/ok#frag"), http.StatusMovedPermanently)
		case "/to-no":
			http.Redirect(w, r, target.url("/no"), http.StatusFound)
		}
	}))
	cfg := testConfig()
	out := runFetch(t, cfg, src.url("/to-ok"), src.url("/to-no"))
	r := out[src.url("/to-ok")].rec
	if num(r, "status") != 200 || str(r, "final_url") != target.url("/ok") || str(r, "title") != "Page /ok" {
		t.Errorf("to-ok: %s", r.AppendJSON(nil))
	}
	r = out[src.url("/to-no")].rec
	if errCode(r) != CodeRobots || str(r, "final_url") != target.url("/no") {
		t.Errorf("to-no: %s", r.AppendJSON(nil))
	}
	if target.requested("/no") != 0 {
		t.Error("redirect target disallowed by robots.txt was requested")
	}
}

// SSRF: private and loopback addresses are refused after DNS, on the first
// request and on every redirect.
func TestSSRF(t *testing.T) {
	inner := newHost(t, "127.0.0.31", pageHandler(""))
	outer := newHost(t, "127.0.0.30", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/ok":
			io.WriteString(w, "public")
		default:
			http.Redirect(w, r, "http://inner.test:"+strings.Split(inner.addr, ":")[1]+"/secret", http.StatusFound)
		}
	}))
	// 127.0.0.30 plays a public address; everything else is as in real life.
	publicAddr = func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.30") || isPublic(a) }
	defer func() { publicAddr = isPublic }()
	cfg := testConfig()
	cfg.AllowPrivate = false
	cfg.LookupIP = lookupMap(map[string]string{"outer.test": "127.0.0.30", "inner.test": "127.0.0.31", "meta.test": "169.254.169.254"})
	port := strings.Split(outer.addr, ":")[1]
	out := runFetch(t, cfg, "http://outer.test:"+port+"/ok", "http://outer.test:"+port+"/jump",
		inner.url("/direct"), "http://meta.test/latest/meta-data/", "http://[::1]:"+port+"/", "http://0.0.0.0:"+port+"/")
	if r := out["http://outer.test:"+port+"/ok"].rec; num(r, "status") != 200 {
		t.Errorf("public host: %s", r.AppendJSON(nil))
	}
	for _, u := range []string{"http://outer.test:" + port + "/jump", inner.url("/direct"), "http://meta.test/latest/meta-data/",
		"http://[::1]:" + port + "/", "http://0.0.0.0:" + port + "/"} {
		if r := out[u].rec; errCode(r) != CodeBlocked {
			t.Errorf("%s: %s", u, r.AppendJSON(nil))
		}
	}
	if n := len(inner.log()); n != 0 {
		t.Errorf("the private server got %d requests", n)
	}
	for _, c := range []struct {
		a    string
		want bool
	}{{"8.8.8.8", true}, {"2001:4860:4860::8888", true}, {"10.1.2.3", false}, {"172.16.0.1", false},
		{"192.168.1.1", false}, {"127.0.0.1", false}, {"169.254.169.254", false}, {"224.0.0.1", false},
		{"::1", false}, {"fe80::1", false}, {"fc00::1", false}, {"::ffff:10.0.0.1", false}, {"100.64.0.1", false},
		{"0.0.0.0", false}, {"255.255.255.255", false}, {"ff02::1", false}} {
		if got := isPublic(netip.MustParseAddr(c.a)); got != c.want {
			t.Errorf("isPublic(%s) = %v", c.a, got)
		}
	}
}

// Conditional GET from the record's etag / last_modified: a 304 keeps the
// page fields of the input record.
func TestConditionalGet(t *testing.T) {
	h := newHost(t, "127.0.0.40", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.Header.Get("If-None-Match") == `"v1"`, r.Header.Get("If-Modified-Since") == "Sat, 01 Nov 2026 00:00:00 GMT":
			w.WriteHeader(http.StatusNotModified)
		default:
			w.Header().Set("ETag", `"v2"`)
			w.Header().Set("Last-Modified", "Sun, 02 Nov 2026 00:00:00 GMT")
			io.WriteString(w, "<title>new</title>")
		}
	}))
	in1 := fmt.Sprintf(`{"url":%q,"etag":"\"v1\"","digest":"sha1:OLD","title":"old","error":"timeout: earlier","weight":3}`, h.url("/a"))
	in2 := fmt.Sprintf(`{"url":%q,"last_modified":"Sat, 01 Nov 2026 00:00:00 GMT"}`, h.url("/b"))
	in3 := fmt.Sprintf(`{"url":%q,"etag":"\"v0\""}`, h.url("/c"))
	cfg := testConfig()
	out := runFetch(t, cfg, in1, in2, in3)
	r := out[h.url("/a")].rec
	if num(r, "status") != 304 || str(r, "digest") != "sha1:OLD" || str(r, "title") != "old" || r.Has("error") || num(r, "weight") != 3 {
		t.Errorf("304: %s", r.AppendJSON(nil))
	}
	if r := out[h.url("/b")].rec; num(r, "status") != 304 {
		t.Errorf("304 by date: %s", r.AppendJSON(nil))
	}
	r = out[h.url("/c")].rec
	if num(r, "status") != 200 || str(r, "etag") != `"v2"` || str(r, "last_modified") != "Sun, 02 Nov 2026 00:00:00 GMT" || str(r, "title") != "new" {
		t.Errorf("changed: %s", r.AppendJSON(nil))
	}
}

// Bot-trap limits, bad URLs and the per-host budget are answered without a
// request.
func TestTrapsAndBudget(t *testing.T) {
	h := newHost(t, "127.0.0.41", pageHandler(""))
	cfg := testConfig()
	cfg.MaxPathDepth = 5
	cfg.MaxRepeat = 2
	cfg.HostBudget = 3
	deep := h.url("/a/b/c/d/e/f")
	rep := h.url("/x/y/x/y/x/z")
	inputs := []string{deep, rep, "ftp://h.test/x", "not a url", h.url("/1"), h.url("/2"), h.url("/3"), h.url("/4")}
	out := runFetch(t, cfg, inputs...)
	for u, code := range map[string]string{deep: CodeTrap, rep: CodeTrap, "ftp://h.test/x": CodeURL, "not a url": CodeURL, h.url("/4"): CodeBudget} {
		if r := out[u].rec; errCode(r) != code {
			t.Errorf("%s: want %s, got %s", u, code, r.AppendJSON(nil))
		}
	}
	for _, p := range []string{"/a/b/c/d/e/f", "/x/y/x/y/x/z", "/4"} {
		if h.requested(p) > 0 {
			t.Errorf("%s requested", p)
		}
	}
}

// robots.txt outcomes: 5xx disallows all, 4xx allows all, up to five
// redirects are followed, a dead host fails its URLs with its own code.
func TestRobotsStatus(t *testing.T) {
	down := newHost(t, "127.0.0.50", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "oops", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "page")
	}))
	forbidden := newHost(t, "127.0.0.51", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		io.WriteString(w, "page")
	}))
	moved := newHost(t, "127.0.0.52", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/r1", http.StatusMovedPermanently)
		case "/r1":
			http.Redirect(w, r, "/real-robots", http.StatusFound)
		case "/real-robots":
			io.WriteString(w, "User-agent: *\nDisallow: /x\n")
		default:
			io.WriteString(w, "page")
		}
	}))
	ln, _ := net.Listen("tcp", "127.0.0.53:0")
	deadAddr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	cfg := testConfig()
	cfg.Retries = NoRetries
	out := runFetch(t, cfg, down.url("/a"), forbidden.url("/a"), moved.url("/x"), moved.url("/y"), "http://"+deadAddr+"/a")
	if r := out[down.url("/a")].rec; errCode(r) != CodeRobots || down.requested("/a") != 0 {
		t.Errorf("robots 500: %s", r.AppendJSON(nil))
	}
	if r := out[forbidden.url("/a")].rec; num(r, "status") != 200 {
		t.Errorf("robots 403: %s", r.AppendJSON(nil))
	}
	if r := out[moved.url("/x")].rec; errCode(r) != CodeRobots {
		t.Errorf("redirected robots: %s", r.AppendJSON(nil))
	}
	if r := out[moved.url("/y")].rec; num(r, "status") != 200 {
		t.Errorf("redirected robots: %s", r.AppendJSON(nil))
	}
	if r := out["http://"+deadAddr+"/a"].rec; errCode(r) != CodeConnect {
		t.Errorf("dead host: %s", r.AppendJSON(nil))
	}
}

// Charset: a windows-1251 page's title and links come out in UTF-8.
func TestCharset(t *testing.T) {
	h := newHost(t, "127.0.0.42", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=windows-1251")
		w.Write([]byte("<title>\xcf\xf0\xe8\xe2\xe5\xf2</title><a href=\"/\xe4\xe0\">x</a>"))
	}))
	cfg := testConfig()
	cfg.IgnoreRobots = true
	out := runFetch(t, cfg, h.url("/"))
	r := out[h.url("/")].rec
	var ls []string
	r.Decode("links", &ls)
	if str(r, "title") != "Привет" || len(ls) != 1 || ls[0] != h.url("/%D0%B4%D0%B0") {
		t.Errorf("%s", r.AppendJSON(nil))
	}
}

// Every record's warc_offset opens its response, whose payload digest is the
// record's digest; the files hold request and response for every exchange.
func TestWARC(t *testing.T) {
	gz := newHost(t, "127.0.0.43", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		fmt.Fprintf(zw, "<title>gz %s</title>", r.URL.Path)
		zw.Close()
	}))
	plain := newHost(t, "127.0.0.44", pageHandler(""))
	dir := t.TempDir()
	w, err := warc.Create(warc.Options{Dir: dir, MaxSize: 4000})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.WARC = w
	var inputs []string
	for i := 0; i < 20; i++ {
		inputs = append(inputs, gz.url(fmt.Sprintf("/%d", i)), plain.url(fmt.Sprintf("/%d", i)))
	}
	out := runFetch(t, cfg, inputs...)
	w.Close()
	if len(w.Files()) < 2 {
		t.Errorf("no rotation: %v", w.Files())
	}
	for u, e := range out {
		r := e.rec
		rec, err := warc.ReadAt(str(r, "warc_file"), int64(num(r, "warc_offset")))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if rec.Type() != warc.TypeResponse || rec.TargetURI() != u || rec.Header.Get(warc.FieldPayloadDigest) != str(r, "digest") ||
			rec.Header.Get(warc.FieldIPAddress) != strings.Split(strings.TrimPrefix(u, "http://"), ":")[0] {
			t.Errorf("%s: WARC record %v", u, rec.Header)
		}
		resp, err := rec.HTTPResponse()
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := io.ReadAll(resp.Body)
		if warc.Digest(payload) != str(r, "digest") || !strings.Contains(str(r, "title"), strings.TrimPrefix(u[strings.LastIndex(u, "/"):], "/")) {
			t.Errorf("%s: payload digest or title wrong: %s", u, r.AppendJSON(nil))
		}
	}
	// Whole files: warcinfo, then response+request pairs, robots.txt included.
	types := map[string]int{}
	for _, name := range w.Files() {
		f, _ := os.Open(name)
		rd, _ := warc.NewReader(f)
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			types[rec.Type()]++
		}
		f.Close()
	}
	if types[warc.TypeResponse] != 42 || types[warc.TypeRequest] != 42 || types[warc.TypeWarcinfo] != len(w.Files()) {
		t.Errorf("record types %v", types)
	}
}

// A cancelled run stops within the grace, writes every record once
// (fetched or "interrupted") and leaves valid WARC files.
func TestInterrupt(t *testing.T) {
	h := newHost(t, "127.0.0.45", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		io.WriteString(w, "<title>slow</title>")
	}))
	hang := newHost(t, "127.0.0.46", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	dir := t.TempDir()
	w, _ := warc.Create(warc.Options{Dir: dir})
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.WARC = w
	cfg.Timeout = time.Minute
	cfg.ReadTimeout = time.Minute
	cfg.QueueMemory = 20 << 10 // most of the queue is spilled to disk
	var inputs []string
	for i := 0; i < 500; i++ {
		// As recrawl next writes a page with a last capture.
		inputs = append(inputs, fmt.Sprintf(`{"url":%q,"digest":"sha1:AAAA","fetched_at":"2026-11-01T00:00:00Z","final_url":%q,"warc_file":"old.warc.gz","warc_offset":7}`,
			h.url(fmt.Sprintf("/%d", i)), h.url(fmt.Sprintf("/%d", i))))
	}
	inputs = append(inputs, hang.url("/"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	start := time.Now()
	out, err := fetchAll(ctx, cfg, inputs)
	if err != context.Canceled {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 700*time.Millisecond+stopGrace+time.Second {
		t.Errorf("stopped after %v", d)
	}
	w.Close()
	if len(out) != len(inputs) {
		t.Fatalf("%d records for %d inputs", len(out), len(inputs))
	}
	fetched, interrupted := 0, 0
	for _, e := range out {
		switch {
		case num(e.rec, "status") == 200:
			fetched++
		case errCode(e.rec) == CodeInterrupted:
			interrupted++
			// No request was made: nothing of the last capture stays.
			for _, k := range []string{"digest", "fetched_at", "final_url", "warc_file", "warc_offset"} {
				if e.rec.Has(k) {
					t.Errorf("interrupted record keeps %q: %s", k, e.rec.AppendJSON(nil))
					break
				}
			}
		default:
			t.Errorf("unexpected %s", e.rec.AppendJSON(nil))
		}
	}
	if fetched < 3 || interrupted < 400 {
		t.Errorf("%d fetched, %d interrupted", fetched, interrupted)
	}
	n := 0
	for _, name := range w.Files() {
		f, _ := os.Open(name)
		rd, _ := warc.NewReader(f)
		for {
			_, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("WARC after interrupt: %v", err)
			}
			n++
		}
		f.Close()
	}
	if n != 1+2*fetched {
		t.Errorf("%d WARC records for %d fetched pages", n, fetched)
	}
}

// With a tiny queue memory most records spill to disk; all come back once,
// with their extra fields.
func TestSpill(t *testing.T) {
	var hosts []*testHost
	for i := 0; i < 4; i++ {
		hosts = append(hosts, newHost(t, fmt.Sprintf("127.0.0.%d", 60+i), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "x")
		})))
	}
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.QueueMemory = 8 << 10
	var inputs []string
	for i := 0; i < 2000; i++ {
		inputs = append(inputs, fmt.Sprintf(`{"url":%q,"n":%d,"extra":{"a":[1,2]}}`, hosts[i%4].url(fmt.Sprintf("/%d", i)), i))
	}
	out := runFetch(t, cfg, inputs...)
	for i := 0; i < 2000; i++ {
		r := out[hosts[i%4].url(fmt.Sprintf("/%d", i))].rec
		if num(r, "status") != 200 || num(r, "n") != i || r.Line != 0 && r.Line != i+1 {
			t.Fatalf("record %d: %s", i, r.AppendJSON(nil))
		}
	}
}

func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{"3": 3 * time.Second, "0": 0, "Sun, 01 Nov 2026 00:00:10 GMT": 10 * time.Second,
		"Sat, 31 Oct 2026 00:00:00 GMT": 0} {
		if got, ok := retryAfter(v, now); !ok || got != want {
			t.Errorf("%q: %v %v", v, got, ok)
		}
	}
	for _, v := range []string{"", "-1", "soon"} {
		if _, ok := retryAfter(v, now); ok {
			t.Errorf("%q accepted", v)
		}
	}
}

// robots.txt is cached for RobotsTTL and fetched again after it; a huge
// Crawl-delay is capped by MaxCrawlDelay.
func TestRobotsTTLAndDelayCap(t *testing.T) {
	h := newHost(t, "127.0.0.47", pageHandler("User-agent: *\nCrawl-delay: 30\n"))
	cfg := testConfig()
	cfg.RobotsTTL = 250 * time.Millisecond
	cfg.MaxCrawlDelay = 150 * time.Millisecond
	var inputs []string
	for i := 0; i < 6; i++ {
		inputs = append(inputs, h.url(fmt.Sprintf("/%d", i)))
	}
	start := time.Now()
	out := runFetch(t, cfg, inputs...)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v: Crawl-delay 30 not capped", d)
	}
	if g := h.minGap(); g < 150*time.Millisecond {
		t.Errorf("gap %v under the capped delay", g)
	}
	if n := h.requested("/robots.txt"); n < 2 {
		t.Errorf("robots.txt fetched %d times in a run longer than its TTL", n)
	}
	for u, e := range out {
		if num(e.rec, "status") != 200 {
			t.Errorf("%s: %s", u, e.rec.AppendJSON(nil))
		}
	}
}

// A WARC write that fails (a full disk) stops the run, and still every
// input the run took gets its record: fetched, failed with "warc", or
// "interrupted" (an input the feed had not handed over when the run
// stopped is refused by add, and stays for the next run, as the command's
// unread input does; on a loaded machine the disk could fill before the
// feed had handed over all 100). The stop raced the drain of the queue
// once (a worker's fatal error could end the run before the stop was
// seen), so the run is repeated.
func TestWARCFailureWritesEveryRecord(t *testing.T) {
	h := newHost(t, "127.0.0.45", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		// About 16 KB that gzip cannot shrink, so the WARC fills the disk.
		sum := sha256.Sum256([]byte(r.URL.Path))
		w.Header().Set("Content-Type", "text/html")
		for range 256 {
			sum = sha256.Sum256(sum[:])
			fmt.Fprintf(w, "%x\n", sum)
		}
	}))
	const n = 100
	var inputs []string
	for i := range n {
		inputs = append(inputs, h.url(fmt.Sprintf("/p%d", i)))
	}
	for run := range 10 {
		mnt := t.TempDir()
		if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=128k"); err != nil {
			t.Fatalf("mount tmpfs (the tests run as root): %v", err)
		}
		w, err := warc.Create(warc.Options{Dir: mnt})
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig()
		cfg.WARC = w
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, taken, err := fetchTaken(ctx, cfg, inputs)
		cancel()
		w.Close()
		unix.Unmount(mnt, unix.MNT_DETACH)
		if err == nil {
			t.Fatalf("run %d: no error from a full disk", run)
		}
		codes := map[string]int{}
		for _, e := range out {
			msg, _ := e.rec.String("error")
			code, _, _ := strings.Cut(msg, ":")
			codes[code]++
		}
		if len(out) != taken || taken == 0 || codes[CodeWARC] == 0 {
			t.Fatalf("run %d: %d records for the %d of %d URLs taken, error codes %v (%v)", run, len(out), taken, n, codes, err)
		}
	}
}

// The spill file has no name in its directory at any moment (O_TMPFILE,
// where the file system has unnamed files), so that no kill leaves it.
func TestSpillFileUnnamed(t *testing.T) {
	dir := t.TempDir()
	sf, err := openSpill(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	if _, err := sf.WriteString("queued records"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := sf.ReadAt(buf, 0); err != nil || string(buf) != "queued" {
		t.Fatalf("read back %q, %v", buf, err)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("%d files in the spill dir, first %s", len(left), left[0].Name())
	}
	probe, err := unix.Open(dir, unix.O_RDWR|unix.O_TMPFILE, 0o600)
	if err != nil {
		return // no unnamed files here: the named file was unlinked at once
	}
	unix.Close(probe)
	link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", sf.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(link, "fetch-spill-") {
		t.Errorf("the spill file was made with a name (%s), though the file system has unnamed files", link)
	}
}
