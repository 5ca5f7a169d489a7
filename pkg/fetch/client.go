package fetch

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sekitei/crawlkit/pkg/warc"
)

// exchange is one HTTP request and what came back.
type exchange struct {
	url       *url.URL
	reqHeader http.Header
	status    int
	proto     string
	header    http.Header
	body      []byte // payload as received: transfer coding removed, content coding kept
	truncated string // WARC-Truncated reason: "length", "time", "disconnect" or ""
	ip        string
	start     time.Time
	elapsed   time.Duration
	err       *codedError // nil if a response arrived in full
	bufp      *[]byte     // pooled buffer behind body
	sum       string      // payload digest, once computed
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

func newTransport(cfg *Config, res *resolver) *http.Transport {
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
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
	return &http.Transport{
		Proxy:                  nil, // a crawler connects where DNS says: no proxy from the environment
		DialContext:            dial,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
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
		ForceAttemptHTTP2:      true,
	}
}

func mustPort(p string) uint16 {
	n, _ := strconv.ParseUint(p, 10, 16)
	return uint16(n)
}

// do performs one GET of u with extra request headers. The body is read up
// to limit bytes. do never returns nil.
func (f *Fetcher) do(ctx context.Context, u *url.URL, extra http.Header, limit int64) *exchange {
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		x.err = errorf(CodeURL, "%v", err)
		return x
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	for k, v := range extra {
		req.Header[k] = v
	}
	x.reqHeader = req.Header

	resp, err := f.transport.RoundTrip(req)
	if err != nil {
		x.err = classify(err, false, f.stopping.Load())
		return x
	}
	defer resp.Body.Close()
	x.status, x.proto, x.header = resp.StatusCode, resp.Proto, resp.Header

	// The body: bounded in size, and in time between reads.
	timer := time.AfterFunc(f.cfg.ReadTimeout, func() { idle.Store(true); cancel() })
	defer timer.Stop()
	bp := bodyPool.Get().(*[]byte)
	x.bufp = bp
	b := (*bp)[:0]
	if resp.ContentLength > 0 && resp.ContentLength <= limit && int64(cap(b)) < resp.ContentLength {
		b = make([]byte, 0, resp.ContentLength+1)
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
