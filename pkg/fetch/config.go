package fetch

import (
	"context"
	"errors"
	"fmt"
	"github.com/sekitei/crawlkit/pkg/render"
	"net/netip"
	"time"

	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/urlnorm"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// DefaultUserAgent identifies the fetcher; its product token "crawlkit" is
// what robots.txt groups are matched against.
const DefaultUserAgent = "crawlkit/0.1 (+https://github.com/sekitei/crawlkit)"

// Config is the fetcher's behaviour. The zero value of a field means its
// default, given in its comment.
type Config struct {
	UserAgent string // DefaultUserAgent

	Workers int // requests in flight at once over all hosts: 32
	// QueueBy chooses what politeness counts as one server: QueueByIP (the
	// default, as Nutch and Heritrix do), QueueByDomain (registered domain,
	// by the public suffix list) or QueueByHost. PerHost and the delay hold
	// per queue; robots.txt stays per host.
	QueueBy string
	PerHost int           // requests in flight at once to one host: 1
	Delay   time.Duration // pause between requests to one host: 1s; NoDelay for none
	// MaxCrawlDelay caps a robots.txt Crawl-delay: 30s.
	MaxCrawlDelay time.Duration

	IgnoreRobots bool
	RobotsTTL    time.Duration // how long a robots.txt is cached: 24h

	Timeout        time.Duration // a URL's whole time, every request (retries, hops) and backoff: 30s
	ConnectTimeout time.Duration // DNS, TCP and TLS: 10s
	ReadTimeout    time.Duration // waiting for headers or the next body bytes: 15s

	MaxSize    int64 // body bytes kept; more is truncated and marked: 10 MiB
	MaxDecoded int64 // decoded (gunzipped...) bytes for parsing: 8 x MaxSize, at least 32 MiB
	// LargeDecodes is how many bodies may be decoded past 1 MiB at once
	// (the others wait): 2. Decoding memory is bounded by Workers x 1 MiB
	// + LargeDecodes x 1.5 x MaxDecoded.
	LargeDecodes int
	MaxRedirects int // redirects followed: 10; NoRedirects for none

	Retries      int           // retries on 429, 503 and network errors: 2; NoRetries for none
	RetryBackoff time.Duration // first backoff, doubled each retry: 2s
	MaxRetryWait time.Duration // longest Retry-After honoured: 60s; beyond it the answer stands

	// CAFile names a PEM file of root certificates trusted besides the
	// system's (a national root CA, a test rig's own); Insecure skips
	// certificate verification altogether (a test rig only).
	CAFile   string
	Insecure bool
	// Proxy is the URL of an HTTP proxy for every request; "" takes
	// HTTP_PROXY, HTTPS_PROXY and NO_PROXY from the environment, "none"
	// connects directly.
	Proxy string
	// Types are the media types fetched (package ctype patterns: "html",
	// "image/*", "application/pdf", "all"): ctype.DefaultTypes (HTML) when
	// empty. A URL whose extension names another type is not requested; a
	// response whose Content-Type is another is not read.
	Types []string

	DNSTTL       time.Duration // DNS cache lifetime: 5m
	AllowPrivate bool          // allow loopback, private, link-local, multicast addresses

	// Render is when an HTML page is rendered by Renderer (render.Never
	// without one); RenderArchive archives the responses the browser got.
	Render        render.Mode
	Renderer      Renderer
	RenderArchive bool
	// LookupIP resolves host names; default the system resolver. Tests map
	// names to loopback addresses with it.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)

	MaxPathDepth int // path segments allowed (bot trap): 32
	MaxRepeat    int // times one path segment may repeat (bot trap): 3
	HostBudget   int // URLs accepted per host, 0: unlimited

	// Normalizer gives each URL its normal form before it is fetched, and
	// each link, canonical and refresh target written: urlnorm defaults.
	Normalizer *urlnorm.Normalizer

	MaxLinks int // links kept per page: 10000
	// Terms is the most words of an HTML page's title and text recorded
	// in "terms" (lower-cased, in page order, repeats kept) for the topic
	// crawl orders; 0 records none.
	Terms          int
	IgnoreNofollow bool // put rel=nofollow links in "links" too

	QueueMemory int64  // bytes of queued records kept in memory before spilling to disk: 64 MiB
	SpillDir    string // where the spill file goes: os.TempDir()

	// HostRates, when set, paces every request to a host (robots.txt and
	// redirect hops included) by the host's crawl-rate estimate instead of
	// Delay and the robots Crawl-delay (which it is told and never exceeds),
	// and learns from every answer (package hostrate). A host it refuses
	// (resting after failures in a row, pinned to rate 0), or whose pace
	// would keep a URL waiting longer than MaxHostWait, has its remaining
	// URLs written out at once with error code "resting" or "pinned", for a
	// later turn. Delay becomes the pace of a host the estimator has not
	// seen (its initial rate); PerHost still bounds connections. Queued by
	// IP or domain, each request holds its politeness queue for the
	// interval of the host asked, so the hosts of one server share a pace.
	HostRates *hostrate.Estimator
	// Backoff, without HostRates, paces each host also by an estimator
	// kept in memory for the run (package hostrate, DecreaseFromUse) that
	// starts at the delay (no pace with no delay) and never goes faster:
	// 429s, 5xx answers, timeouts and Retry-After slow the host down, and
	// healthy answers bring it back. Delay, Crawl-delay and MaxCrawlDelay
	// hold as without it; a host that stops answering rests, as with
	// HostRates.
	Backoff bool
	// MaxHostWait is the longest wait for a host's pace (Retry-After
	// included) before its URLs are deferred: 2m. Only with HostRates or
	// Backoff.
	MaxHostWait time.Duration
	// Clock is HostRates' time: pacing waits and the latencies observed are
	// read on it (real time by default; tests pass a faster virtual clock,
	// as internal/changeweb's).
	Clock Clock

	// WARC receives every exchange when non-nil (robots.txt included).
	WARC *warc.Writer
	// NoRevisits archives every payload whole. By default a 2xx payload
	// already archived (earlier in the run, or by the fetch the input
	// record describes) is written as a revisit record, and a 304 as a
	// server-not-modified revisit.
	NoRevisits bool
	// NoOutlinks leaves out the metadata record listing an HTML page's
	// links that follows its response by default.
	NoOutlinks bool

	// Emit receives one record per input URL, from one goroutine at a time.
	Emit func(*record.Record) error
	// EmitRaw, if set, receives records as JSON lines (no newline) where
	// that saves parsing: the "interrupted" records of a stopped run.
	EmitRaw func(line []byte) error
}

// Clock is the time of Config.HostRates: Now reads it, Real converts one
// of its durations to real time (for timers).
type Clock interface {
	Now() time.Time
	Real(d time.Duration) time.Duration
}

type realClock struct{}

func (realClock) Now() time.Time                     { return time.Now() }
func (realClock) Real(d time.Duration) time.Duration { return d }

// Values of Config.QueueBy.
const (
	QueueByIP     = "ip"
	QueueByDomain = "domain"
	QueueByHost   = "host"
)

// Sentinels for fields whose zero value means a default.
const (
	NoDelay     = time.Duration(-1)
	NoRedirects = -1
	NoRetries   = -1
)

func (c *Config) setDefaults() error {
	if c.Emit == nil {
		return errors.New("fetch: Config.Emit is nil")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.PerHost <= 0 {
		c.PerHost = 1
	}
	switch c.QueueBy {
	case "":
		c.QueueBy = QueueByIP
	case QueueByIP, QueueByDomain, QueueByHost:
	default:
		return fmt.Errorf("fetch: queue by %q: want ip, domain or host", c.QueueBy)
	}
	def(&c.Delay, time.Second)
	if c.Delay < 0 {
		c.Delay = 0
	}
	def(&c.MaxCrawlDelay, 30*time.Second)
	def(&c.RobotsTTL, 24*time.Hour)
	def(&c.Timeout, 30*time.Second)
	def(&c.ConnectTimeout, 10*time.Second)
	def(&c.ReadTimeout, 15*time.Second)
	if c.MaxSize <= 0 {
		c.MaxSize = 10 << 20
	}
	if c.MaxDecoded <= 0 {
		c.MaxDecoded = max(8*c.MaxSize, 32<<20)
	}
	if c.LargeDecodes <= 0 {
		c.LargeDecodes = 2
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = 10
	} else if c.MaxRedirects < 0 {
		c.MaxRedirects = 0
	}
	if c.Retries == 0 {
		c.Retries = 2
	} else if c.Retries < 0 {
		c.Retries = 0
	}
	def(&c.RetryBackoff, 2*time.Second)
	def(&c.MaxRetryWait, 60*time.Second)
	def(&c.DNSTTL, 5*time.Minute)
	if c.MaxPathDepth <= 0 {
		c.MaxPathDepth = 32
	}
	if c.MaxRepeat <= 0 {
		c.MaxRepeat = 3
	}
	if c.MaxLinks <= 0 {
		c.MaxLinks = 10000
	}
	def(&c.MaxHostWait, 2*time.Minute)
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.QueueMemory <= 0 {
		c.QueueMemory = 64 << 20
	}
	return nil
}
