package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// rawHost is a hostile HTTP server written on a bare listener: for every
// request it reads, it calls answer with the connection, and it counts the
// requests and when the first came and the last connection closed.
type rawHost struct {
	addr     string
	mu       sync.Mutex
	requests int
	first    time.Time
	lastEnd  time.Time
}

func newRawHost(t *testing.T, ip string, answer func(c net.Conn, path string)) *rawHost {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	h := &rawHost{addr: ln.Addr().String()}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-done; c.Close() }()
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				for { // the request's header
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				path := strings.Fields(line + " x x")[1]
				if path == "/robots.txt" {
					c.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
					return
				}
				h.mu.Lock()
				h.requests++
				if h.first.IsZero() {
					h.first = time.Now()
				}
				h.mu.Unlock()
				answer(c, path)
				h.mu.Lock()
				h.lastEnd = time.Now()
				h.mu.Unlock()
			}()
		}
	}()
	return h
}

func (h *rawHost) counts() (int, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests, h.lastEnd.Sub(h.first)
}

// TestTimeoutBoundsRetries: a server that sends one header line every
// 100 ms and never ends its header. Each request is cut by --read-timeout
// (the header's wait), and the URL's retries by --timeout: the server sees
// two requests, not three, and the URL is held (by the server's clock,
// first request to last close) within --timeout, not retries times over.
func TestTimeoutBoundsRetries(t *testing.T) {
	h := newRawHost(t, "127.0.32.10", func(c net.Conn, _ string) {
		c.Write([]byte("HTTP/1.1 200 OK\r\n"))
		for i := 0; ; i++ {
			if _, err := c.Write([]byte("X-Slow: " + strings.Repeat("a", i%50) + "\r\n")); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	cfg := testConfig()
	cfg.Timeout = 4 * time.Second
	cfg.ReadTimeout = 3 * time.Second
	cfg.Retries = 2
	cfg.RetryBackoff = 100 * time.Millisecond
	out := runFetch(t, cfg, "http://"+h.addr+"/slow")
	r := out["http://"+h.addr+"/slow"].rec
	n, held := h.counts()
	t.Logf("requests %d, held %v, error %q, elapsed_ms %d", n, held, str(r, "error"), num(r, "elapsed_ms"))
	if errCode(r) != CodeTimeout {
		t.Errorf("error %q, want a timeout", str(r, "error"))
	}
	if n != 2 {
		t.Errorf("%d requests, want 2: the first cut at --read-timeout 3s, the retry by what is left of --timeout 4s", n)
	}
	// An upper bound only: the deadline is a context's, which a loaded
	// machine cannot stretch by seconds.
	if held > cfg.Timeout+2*time.Second {
		t.Errorf("the server held the URL %v, over --timeout %v", held, cfg.Timeout)
	}
	if !strings.Contains(str(r, "error"), "--timeout 4s spent over 2 requests") {
		t.Errorf("error %q does not say the budget was spent", str(r, "error"))
	}
}

// TestProtocolErrorsNotRetried: a header line past the size limit, a bad
// Content-Length, two different Content-Lengths, and a malformed status
// line are the server's breach of HTTP: one request each, error "http",
// while a connection reset before the answer is retried.
func TestProtocolErrorsNotRetried(t *testing.T) {
	answers := map[string]func(c net.Conn){
		"huge-header": func(c net.Conn) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nX-Big: "))
			chunk := []byte(strings.Repeat("b", 64<<10))
			for i := 0; i < 1600; i++ { // up to 100 MB, until the client hangs up
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		},
		"bad-length": func(c net.Conn) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 12abc\r\n\r\n<title>x</title>"))
		},
		"two-lengths": func(c net.Conn) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello!!"))
		},
		"bad-status": func(c net.Conn) {
			c.Write([]byte("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"))
		},
		"reset": func(c net.Conn) {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
		},
	}
	cfg := testConfig()
	cfg.Retries = 2
	cfg.RetryBackoff = 10 * time.Millisecond
	ips := map[string]string{"huge-header": "127.0.32.11", "bad-length": "127.0.32.12", "two-lengths": "127.0.32.13", "bad-status": "127.0.32.14", "reset": "127.0.32.15"}
	hosts := map[string]*rawHost{}
	var urls []string
	for name, ans := range answers {
		ans := ans
		hosts[name] = newRawHost(t, ips[name], func(c net.Conn, _ string) { ans(c) })
		urls = append(urls, "http://"+hosts[name].addr+"/"+name)
	}
	out := runFetch(t, cfg, urls...)
	for name, h := range hosts {
		r := out["http://"+h.addr+"/"+name].rec
		n, _ := h.counts()
		t.Logf("%s: %d requests, error %q", name, n, str(r, "error"))
		want, wantN := CodeHTTP, 1
		if name == "reset" {
			want, wantN = CodeNetwork, 3
		}
		if errCode(r) != want || n != wantN {
			t.Errorf("%s: error %q after %d requests, want %s after %d", name, str(r, "error"), n, want, wantN)
		}
	}
}

// TestInvalidUTF8Title: a page served as UTF-8 whose title holds bytes
// that are not UTF-8 gets U+FFFD for them, as the HTML standard decodes a
// declared encoding, not a windows-1252 reading ("Caf\xe9" is not "Café").
func TestInvalidUTF8Title(t *testing.T) {
	h := newHost(t, "127.0.32.16", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<title>Caf\xe9 \xc3\xa9t\xe9</title><p>Men\xfc du jour</p>"))
	}))
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.Terms = 10
	out := runFetch(t, cfg, h.url("/"))
	r := out[h.url("/")].rec
	if str(r, "title") != "Caf\uFFFD ét\uFFFD" || str(r, "charset") != "utf-8" || str(r, "charset_source") != "header" {
		t.Errorf("%s", r.AppendJSON(nil))
	}
}

// TestWARCProtocolHTTP1: the records of a plain HTTP/1.1 exchange say
// WARC-Protocol http/1.1 and nothing more, and keep the reason phrase.
func TestWARCProtocolHTTP1(t *testing.T) {
	h := newHost(t, "127.0.32.17", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<title>one</title>"))
	}))
	w, err := warc.Create(warc.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.WARC = w
	runFetch(t, cfg, h.url("/"))
	w.Close()
	n := 0
	for _, r := range warcRecords(t, w.Files()) {
		if r.Type() != warc.TypeResponse && r.Type() != warc.TypeRequest {
			continue
		}
		n++
		if got := protocolsOf(r); len(got) != 1 || got[0] != "http/1.1" {
			t.Errorf("%s: WARC-Protocol %q, want http/1.1", r.Type(), got)
		}
		if r.Type() == warc.TypeResponse && firstLine(t, r) != "HTTP/1.1 200 OK" {
			t.Errorf("status line %q", firstLine(t, r))
		}
	}
	if n != 2 {
		t.Errorf("%d exchange records, want a request and a response", n)
	}
}

// TestGetTimeoutBoundsRedirects: Get (the sitemap reader's fetch) follows
// a chain of five redirects whose every answer takes a second; with
// --timeout 2.5s the chain is cut as a timeout before its end, where each
// hop with a timeout of its own would have reached the page.
func TestGetTimeoutBoundsRedirects(t *testing.T) {
	h := newHost(t, "127.0.32.18", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		var n int
		fmt.Sscanf(r.URL.Path, "/r%d", &n)
		if n < 5 {
			http.Redirect(w, r, fmt.Sprintf("/r%d", n+1), http.StatusFound)
			return
		}
		w.Write([]byte("end"))
	}))
	cfg := testConfig()
	cfg.Timeout = 2500 * time.Millisecond
	cfg.ReadTimeout = 2 * time.Second
	cfg.Emit = func(*record.Record) error { return nil }
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	status, body, err := f.Get(context.Background(), h.url("/r0"), 1<<20)
	var ce *codedError
	if !errors.As(err, &ce) || ce.code != CodeTimeout || status != 0 || body != nil {
		t.Errorf("Get: %d %q %v, want a timeout", status, body, err)
	}
	if n := len(h.log()); n >= 6 {
		t.Errorf("%d requests: the chain was followed to its end", n)
	}
}

// TestTimeoutBoundsRedirectHops: a page's redirect hops share --timeout:
// five hops of a second each with --timeout 2.5s end in a timeout naming
// the requests made, before the chain's end.
func TestTimeoutBoundsRedirectHops(t *testing.T) {
	h := newHost(t, "127.0.32.19", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		var n int
		fmt.Sscanf(r.URL.Path, "/r%d", &n)
		if n < 5 {
			http.Redirect(w, r, fmt.Sprintf("/r%d", n+1), http.StatusFound)
			return
		}
		w.Write([]byte("end"))
	}))
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.Timeout = 2500 * time.Millisecond
	cfg.ReadTimeout = 2 * time.Second
	out := runFetch(t, cfg, h.url("/r0"))
	r := out[h.url("/r0")].rec
	n := len(h.log())
	if errCode(r) != CodeTimeout || n >= 6 || !strings.Contains(str(r, "error"), fmt.Sprintf("spent over %d requests", n)) {
		t.Errorf("after %d requests: %s", n, r.AppendJSON(nil))
	}
}
