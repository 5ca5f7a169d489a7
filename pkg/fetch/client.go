package fetch

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sekitei/crawlkit/pkg/warc"
	"github.com/sekitei/crawlkit/pkg/weburl"
	"golang.org/x/net/http/httpproxy"
)

// exchange is one HTTP request and what came back.
type exchange struct {
	url       *weburl.URL // as requested
	reqHeader http.Header
	status    int
	proto     string
	tls       uint16 // the TLS version of the connection, 0 without TLS
	header    http.Header
	body      []byte // payload as received: transfer coding removed, content coding kept
	truncated string // WARC-Truncated reason: "length", "time", "disconnect" or ""
	ip        string
	start     time.Time
	elapsed   time.Duration
	err       *codedError // nil if a response arrived in full
	bufp      *[]byte     // pooled buffer behind body
	warcID    string      // its response record's WARC-Record-ID and file, once archived (for the rendered DOM)
	warcFile  string
	sum       string // payload digest, once computed
	refused   bool   // the content-type policy refused the body: not read, not archived
}

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// digest returns the WARC digest of the payload, computed once.
func (x *exchange) digest() string {
	if x.sum == "" {
		s := sha1.Sum(x.body)
		x.sum = warc.DigestString(s[:])
	}
	return x.sum
}

func (x *exchange) release() {
	if x.bufp != nil {
		if cap(*x.bufp) <= 4<<20 {
			*x.bufp = (*x.bufp)[:0]
			bodyPool.Put(x.bufp)
		}
		x.bufp, x.body = nil, nil
	}
}

// proxyFunc returns the proxy choice of cfg and the host:port of the
// proxies it may name (the dialer lets those through the address check:
// a proxy on the local network is the usual case).
func proxyFunc(cfg *Config) (func(*url.URL) (*url.URL, error), map[string]bool, error) {
	hostport := func(u *url.URL) string {
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		return net.JoinHostPort(u.Hostname(), port)
	}
	switch cfg.Proxy {
	case "none":
		return nil, nil, nil
	case "":
		env := httpproxy.FromEnvironment()
		allowed := map[string]bool{}
		for _, p := range []string{env.HTTPProxy, env.HTTPSProxy} {
			if p == "" {
				continue
			}
			if !strings.Contains(p, "://") {
				p = "http://" + p
			}
			if u, err := url.Parse(p); err == nil {
				allowed[hostport(u)] = true
			}
		}
		if len(allowed) == 0 {
			return nil, nil, nil
		}
		return env.ProxyFunc(), allowed, nil
	}
	u, err := url.Parse(cfg.Proxy)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, nil, fmt.Errorf("fetch: proxy %q: want http://host:port", cfg.Proxy)
	}
	return func(*url.URL) (*url.URL, error) { return u, nil }, map[string]bool{hostport(u): true}, nil
}

// tlsConfig trusts the system roots plus those of cfg.CAFile.
func tlsConfig(cfg *Config) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.Insecure}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("fetch: CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("fetch: CA file %s: no PEM certificate in it", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

func newTransport(cfg *Config, res *resolver, proxy func(*url.URL) (*url.URL, error), proxies map[string]bool, tc *tls.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if proxies[addr] {
			return dialer.DialContext(ctx, network, addr)
		}
		addrs, err := res.resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		var firstErr error
		tried := 0
		for _, a := range addrs {
			if !cfg.AllowPrivate && !publicAddr(a) {
				if firstErr == nil {
					firstErr = &blockedError{host: host, addr: a}
				}
				continue
			}
			tried++
			c, err := dialer.DialContext(ctx, network, netip.AddrPortFrom(a, mustPort(port)).String())
			if err == nil {
				return c, nil
			}
			if firstErr == nil || tried == 1 {
				firstErr = err
			}
			if ctx.Err() != nil || tried >= 3 {
				break
			}
		}
		return nil, firstErr
	}
	var proxyReq func(*http.Request) (*url.URL, error)
	if proxy != nil {
		proxyReq = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
	}
	return &http.Transport{
		Proxy:                  proxyReq,
		DialContext:            dial,
		TLSClientConfig:        tc,
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		ResponseHeaderTimeout:  cfg.ReadTimeout,
		DisableCompression:     true, // we ask for and decode codings ourselves, keeping raw bytes for WARC
		MaxIdleConns:           cfg.Workers * 2,
		MaxIdleConnsPerHost:    cfg.PerHost,
		MaxConnsPerHost:        cfg.PerHost + 1, // + a robots.txt fetch
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 256 << 10,
		ReadBufferSize:         32 << 10, // a small page in one read
		WriteBufferSize:        8 << 10,
		ForceAttemptHTTP2:      true, // custom DialContext and TLSClientConfig turn HTTP/2 off otherwise
	}
}

// proxyCheck applies the address check to a URL that goes through a
// proxy: the proxy resolves the name, so the check is made here first.
func (f *Fetcher) proxyCheck(ctx context.Context, u *url.URL) *codedError {
	if f.cfg.AllowPrivate || !f.viaProxy(u) {
		return nil
	}
	addrs, err := f.res.resolve(ctx, u.Hostname())
	if err != nil {
		return classify(err, false, false)
	}
	for _, a := range addrs {
		if !publicAddr(a) {
			return classify(&blockedError{host: u.Hostname(), addr: a}, false, false)
		}
	}
	return nil
}

// viaProxy reports whether a request for u goes through a proxy.
func (f *Fetcher) viaProxy(u *url.URL) bool {
	if f.proxy == nil {
		return false
	}
	p, err := f.proxy(u)
	return err == nil && p != nil
}

func mustPort(p string) uint16 {
	n, _ := strconv.ParseUint(p, 10, 16)
	return uint16(n)
}

// do performs one GET of u with extra request headers. The body is read up
// to limit bytes. do never returns nil.
//
// accept, if not nil, sees the header of a 2xx response first; when it
// refuses, the body is not read and x.refused is set.
func (f *Fetcher) do(ctx context.Context, u *weburl.URL, extra http.Header, limit int64, accept func(http.Header) *codedError) *exchange {
	x := &exchange{url: u, start: time.Now()}
	defer func() { x.elapsed = time.Since(x.start) }()

	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	var idle atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if ap, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String()); err == nil {
				x.ip = ap.Addr().Unmap().String()
			}
		},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.Scheme+"://"+u.Host+"/", nil)
	if err != nil {
		x.err = errorf(CodeURL, "%v", err)
		return x
	}
	// The request line carries the path and query exactly as the URL
	// Standard serialised them (net/url would re-escape or re-order
	// nothing, but would escape what the Standard leaves alone).
	nu := u.NetURL()
	if nu.Scheme == "http" && f.viaProxy(nu) {
		nu.Opaque = "//" + u.Host + u.Path // absolute form for the proxy
	}
	req.URL = nu
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	for k, v := range extra {
		req.Header[k] = v
	}
	x.reqHeader = req.Header

	if cerr := f.proxyCheck(ctx, nu); cerr != nil {
		x.err = cerr
		return x
	}
	resp, err := f.transport.RoundTrip(req)
	if err != nil {
		x.err = classify(err, false, f.stopping.Load())
		return x
	}
	defer resp.Body.Close()
	x.status, x.proto, x.header = resp.StatusCode, resp.Proto, resp.Header
	if resp.TLS != nil {
		x.tls = resp.TLS.Version
	}
	if accept != nil && x.status >= 200 && x.status < 300 {
		if cerr := accept(x.header); cerr != nil {
			x.err, x.refused = cerr, true
			return x
		}
	}

	// The body: bounded in size, and in time between reads.
	timer := time.AfterFunc(f.cfg.ReadTimeout, func() { idle.Store(true); cancel() })
	defer timer.Stop()
	bp := bodyPool.Get().(*[]byte)
	x.bufp = bp
	b := (*bp)[:0]
	if resp.ContentLength > 0 && resp.ContentLength <= limit && int64(cap(b)) < resp.ContentLength {
		b = make([]byte, 0, resp.ContentLength+1)
	} else if resp.ContentLength > limit && int64(cap(b)) <= limit {
		// A body announced over the limit is cut at it: one buffer of the
		// limit, not a quarter more and the garbage of growing to it.
		b = make([]byte, 0, limit+1)
	}
	for {
		if int64(len(b)) > limit {
			b = b[:limit]
			x.truncated = "length"
			x.err = errorf(CodeTooLarge, "body truncated at %d bytes (--max-size)", limit)
			break
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		room := cap(b)
		if int64(room) > limit+1 {
			room = int(limit + 1)
		}
		n, rerr := resp.Body.Read(b[len(b):room])
		b = b[:len(b)+n]
		if n > 0 {
			timer.Reset(f.cfg.ReadTimeout)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			stopped := f.stopping.Load() && !idle.Load() && !errors.Is(ctx.Err(), context.DeadlineExceeded)
			x.err = classify(rerr, idle.Load() || errors.Is(ctx.Err(), context.DeadlineExceeded), stopped)
			if x.err.code == CodeTimeout {
				x.truncated = "time"
			} else {
				x.truncated = "disconnect"
			}
			break
		}
	}
	*bp = b
	x.body = b
	return x
}
