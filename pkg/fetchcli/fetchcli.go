// Package fetchcli is the command line of fetch: fetch URL records politely
// into records and WARC files, and check URLs against a robots.txt offline.
package fetchcli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/fetch"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/robots"
	"github.com/sekitei/crawlkit/pkg/sitemap"
	"github.com/sekitei/crawlkit/pkg/urlnorm"
	"github.com/sekitei/crawlkit/pkg/urlx"
	"github.com/sekitei/crawlkit/pkg/warc"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

// Main runs fetch with args (args[0] is the program name) and returns the
// exit status.
func Main(args []string, env clikit.Env) int {
	return clikit.Run(App(), args, env)
}

// App returns the fetch application.
func App() *cli.App {
	app := clikit.New("fetch", "fetch URLs politely into records and WARC files",
		"fetch [--warc DIR] [--delay 1s] [--workers 32] [options] [FILE...]\n"+
			"   fetch robots --robots FILE [--agent NAME] [URL...]\n"+
			"   fetch sitemaps [options] [FILE...]")
	app.Description = `Reads URL records (plain URL lines or NDJSON objects with "url") from the
files named or from stdin, fetches each over HTTP(S) and writes one record per
URL on stdout with status, final_url, fetched_at, content_type, length,
digest (sha1:BASE32 of the payload, as WARC-Payload-Digest), charset and
charset_source (header, bom, meta or sniffed), title, links (absolute,
as requested, de-duplicated by key), nofollow_links, canonical, refresh and refresh_delay (a meta
refresh target and its delay in seconds: a redirect given as a link), robots (the meta robots and X-Robots-Tag directives for
our agent, e.g. ["nofollow","noindex"]), text_simhash (16 hex digits: the
SimHash of the main text, which clocks, counters and banners do not move),
redirects, error ("code: message"; codes: url trap budget robots dns
blocked connect tls timeout network http too_large decode redirect
redirect_loop too_many_redirects duplicate type warc interrupted; with
--host-rates also resting and pinned: not fetched, for a later turn), warc_file,
warc_offset, elapsed_ms, etag and last_modified. Other fields pass through.
Records come out in completion order.

URLs are requested as the WHATWG URL Standard parses and serialises them
(host case and IDN to punycode, default port, dot segments; the query as
written, in its order), and links, canonical, refresh and final_url are
written in that form. A URL's key is its normal form (escapes, sorted query,
session ids and utm_* removed: --strip-params, --strip-params-for); a second
input URL with a key already taken in gets error "duplicate" and no request. --types chooses the media types
fetched (HTML by default): a link to photo.jpg is not requested, a response
served as application/zip is not read.

Politeness: robots.txt (RFC 9309) per host, cached; a delay between requests
to one server (--delay, or the robots Crawl-delay up to --max-crawl-delay),
where a server is an IP address (--queue-by ip, the default: six host names
on one shared host get one request per delay between them), a registered
domain (--queue-by domain) or a host (--queue-by host); --per-host
connections per server; --workers requests at once in all.
Records with etag / last_modified fields are fetched conditionally (304).
Private, loopback, link-local and multicast addresses are refused unless
--allow-private. SIGINT/SIGTERM stop cleanly: WARC files stay valid and
every URL not fetched is written with error "interrupted".

Host crawl rates: --host-rates STATE paces each host by an estimate of the
highest rate it tolerates instead of one --delay (a new host starts at one
request per --delay), learnt from every answer (halved on a 429, 5xx,
timeout or refused connection, slowed on answers much slower than the
host's baseline, raised slowly while healthy) and kept in STATE from run to
run; Retry-After is obeyed up to 10 minutes (a past date, a huge number or
garbage is clamped), a host failing 5 times in a row rests and its URLs are
written at once with error "resting", and --pins FILE sets rates by hand
(host<TAB>30/h; 0: do not crawl, error "pinned"). A robots.txt Crawl-delay
always caps the rate. --write-host-rates FILE (or fetch host-rates) writes
each host's limit in crawls a day for recrawl next --host-rates.

Example:
   $ echo https://example.com/ | fetch --warc crawl/
   {"url":"https://example.com/","host":"example.com","status":200,
    "final_url":"https://example.com/","fetched_at":"2026-11-21T05:40:00.123Z",
    "content_type":"text/html","length":1256,"digest":"sha1:...","title":"Example Domain",
    "links":["https://www.iana.org/domains/example"],
    "warc_file":"crawl/fetch-20261121054000-00000.warc.gz","warc_offset":412,"elapsed_ms":140}
   $ fetch --delay 0 --per-host 4 --workers 256 --warc out/ urls.txt > fetched.ndjson
   $ printf 'http://Example.COM:80/a/./b/../%%7euser/?b=2&a=1&utm_source=x\n' | fetch --quiet | jq -r .final_url
   http://example.com/a/%7euser/?b=2&a=1&utm_source=x
   $ fetch --queue-by domain --types html,pdf --ca-file national-root.pem \
       --proxy http://proxy.local:3128 urls.txt > fetched.ndjson
   $ jq -r 'select(.error) | .error' fetched.ndjson | cut -d: -f1 | sort | uniq -c
   $ fetch --terms 500 urls.txt | sekitei order --order best-first --topic "rock garden"
   # "terms": the page's first 500 words (title first, barrel's tokenizer), for the topic orders
   $ fetch --host-rates state/host-rates.json --pins pins.txt --max-host-wait 2m \
       --write-host-rates limits.tsv --warc crawl/ urls.txt > fetched.ndjson
   $ recrawl next --state state/recrawl.db --n 700 --host-rates limits.tsv`
	app.Flags = append(append(append(clikit.InputFlags(), fetchFlags()...), hostRateFlags()...), renderFlags()...)
	app.Action = run
	app.Commands = []*cli.Command{robotsCommand(), sitemapsCommand(), statsCommand(), hostRatesCommand(), cdxCommand()}
	return app
}

func fetchFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "warc", Usage: "write the exchanges as WARC/1.1 files into `DIR`"},
		&cli.StringFlag{Name: "warc-prefix", Value: "fetch", Usage: "WARC file names start with `PREFIX`"},
		&cli.StringFlag{Name: "warc-size", Value: "1GiB", Usage: "start a new WARC file at `SIZE`"},
		&cli.BoolFlag{Name: "warc-revisits", Value: true, Usage: "write a payload already archived (in this run, or by the fetch the input record describes) as a revisit record, and a 304 as one; --warc-revisits=false archives every payload whole"},
		&cli.BoolFlag{Name: "warc-outlinks", Value: true, Usage: "follow an HTML page's response with a metadata record of its links (outlink: URL lines); --warc-outlinks=false leaves it out"},
		&cli.StringFlag{Name: "agent", Value: fetch.DefaultUserAgent, Usage: "User-Agent `STRING`; its first word is the robots.txt product token"},
		&cli.IntFlag{Name: "workers", Value: 32, Usage: "requests in flight at once, over all hosts"},
		&cli.IntFlag{Name: "per-host", Value: 1, Usage: "connections at once to one politeness queue (see --queue-by)"},
		&cli.StringFlag{Name: "queue-by", Value: fetch.QueueByIP, Usage: "what politeness counts as one server: ip (hosts on one address share the delay), domain (registered domain) or host"},
		&cli.DurationFlag{Name: "delay", Value: time.Second, Usage: "pause between requests to one host"},
		&cli.DurationFlag{Name: "max-crawl-delay", Value: 30 * time.Second, Usage: "cap on a robots.txt Crawl-delay"},
		&cli.BoolFlag{Name: "ignore-robots", Usage: "do not fetch or obey robots.txt (only for your own sites)"},
		&cli.DurationFlag{Name: "robots-ttl", Value: 24 * time.Hour, Usage: "how long a robots.txt is cached"},
		&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "limit on a URL's whole time: its requests, retries and redirect hops, and the backoff between retries"},
		&cli.DurationFlag{Name: "connect-timeout", Value: 10 * time.Second, Usage: "limit on DNS, connect and TLS"},
		&cli.DurationFlag{Name: "read-timeout", Value: 15 * time.Second, Usage: "limit on waiting for headers or more body bytes"},
		&cli.StringFlag{Name: "max-size", Value: "10MiB", Usage: "keep at most `SIZE` of a body; the rest is cut off and marked"},
		&cli.StringFlag{Name: "max-decoded", Value: "", Usage: "cap on a decoded (gunzipped) body, against compression bombs (default 8 x max-size, at least 32MiB)"},
		&cli.IntFlag{Name: "large-decodes", Value: 2, Usage: "bodies decoded past 1 MiB at once (the others wait): bounds memory against gzip bombs"},
		&cli.IntFlag{Name: "max-redirects", Value: 10, Usage: "redirects followed (0: none)"},
		&cli.BoolFlag{Name: "backoff", Value: true, Usage: "slow a host down on 429, 5xx, timeouts and Retry-After by a crawl-rate estimate kept in memory for the run, never faster than --delay (--backoff=false: the fixed delay alone; --host-rates keeps the estimate from run to run)"},
		&cli.IntFlag{Name: "retries", Value: 2, Usage: "retries on 429, 503 and network errors (0: none)"},
		&cli.DurationFlag{Name: "retry-backoff", Value: 2 * time.Second, Usage: "first retry wait, doubled each time (Retry-After wins)"},
		&cli.DurationFlag{Name: "max-retry-wait", Value: 60 * time.Second, Usage: "longest Retry-After honoured"},
		&cli.DurationFlag{Name: "dns-ttl", Value: 5 * time.Minute, Usage: "DNS cache lifetime"},
		&cli.BoolFlag{Name: "allow-private", Usage: "allow private, loopback, link-local and multicast addresses"},
		&cli.StringFlag{Name: "ca-file", Usage: "trust the root certificates in PEM `FILE` besides the system's"},
		&cli.BoolFlag{Name: "insecure", Usage: "do not verify TLS certificates (a test rig only)"},
		&cli.StringFlag{Name: "proxy", Usage: "send every request through the HTTP proxy `URL` (default: HTTP_PROXY, HTTPS_PROXY, NO_PROXY; \"none\": direct)"},
		&cli.StringFlag{Name: "types", Value: "html", Usage: "media types fetched, comma-separated: html, xml, pdf, text, image, image/*, application/zip, all"},
		&cli.StringFlag{Name: "strip-params", Value: strings.Join(urlnorm.DefaultStripParams, ","), Usage: "query parameters left out of a URL's key (comma-separated; NAME* a prefix; \"\" none); never out of the request"},
		&cli.StringSliceFlag{Name: "strip-params-for", Usage: "more parameters left out of the keys of one site's URLs: `HOST=name,name` (repeatable; HOST covers its subdomains)"},
		&cli.BoolFlag{Name: "keep-query-order", Usage: "do not sort query parameters in a URL's key"},
		&cli.StringSliceFlag{Name: "resolve", Usage: "resolve `HOST:IP` without DNS (repeatable), as curl --resolve"},
		&cli.StringFlag{Name: "hosts-file", Usage: "resolve the names in `FILE` (/etc/hosts format) without DNS"},
		&cli.IntFlag{Name: "max-depth", Value: 32, Usage: "bot trap: most path segments in a URL"},
		&cli.IntFlag{Name: "max-repeat", Value: 3, Usage: "bot trap: most times one path segment may repeat"},
		&cli.IntFlag{Name: "host-budget", Usage: "most URLs fetched per host (0: no limit)"},
		&cli.IntFlag{Name: "max-links", Value: 10000, Usage: "links kept per page"},
		&cli.IntFlag{Name: "terms", Usage: "record up to `N` words of each HTML page's title and text in \"terms\", for sekitei order's topic orders (0: none)"},
		&cli.BoolFlag{Name: "ignore-nofollow", Usage: "put rel=nofollow links in links (default: in nofollow_links)"},
		&cli.StringFlag{Name: "queue-memory", Value: "64MiB", Usage: "queued records kept in memory; more spill to a temporary file"},
		&cli.StringFlag{Name: "spill-dir", Usage: "`DIR` of the spill file (default: the system temp dir)"},
		&cli.DurationFlag{Name: "journal-sync", Value: time.Second, Usage: "with --resume, fsync the WARC file and then the record file at most this often (group commit; 0: as soon as records are written; negative: never, records still reach the file one by one)"},
		&cli.StringFlag{Name: "resume", Usage: "append the records to `FILE` instead of stdout, and fetch none of the URLs an interrupted run already recorded there, one record written at a time (a torn last line, and a torn last record of the --warc-prefix WARC files, are cut first; WARC responses with no record get one rebuilt from the WARC; URLs recorded \"interrupted\" or \"warc\" are fetched again)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no summary on stderr at the end"},
		&cli.StringFlag{Name: "cpuprofile", Hidden: true, Usage: "write a CPU profile to `FILE`"},
		&cli.StringFlag{Name: "memprofile", Hidden: true, Usage: "write a heap profile to `FILE` at the end"},
	}
}

// ParseSize parses a byte count: 1000, 10K, 10KB, 10KiB, 1.5M, 1G.
// K, M and G are powers of 1024, as in wget and curl.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult, t = 1<<10, t[:n-1]
		case 'M':
			mult, t = 1<<20, t[:n-1]
		case 'G':
			mult, t = 1<<30, t[:n-1]
		case 'T':
			mult, t = 1<<40, t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("bad size %q (want e.g. 500000, 10K, 10MiB, 1G)", s)
	}
	return int64(v * float64(mult)), nil
}

func sizeFlag(c *cli.Context, name string) (int64, error) {
	if c.String(name) == "" {
		return 0, nil
	}
	n, err := ParseSize(c.String(name))
	if err != nil {
		return 0, clikit.Usagef("--%s: %v", name, err)
	}
	return n, nil
}

// config reads the flags shared by fetch and fetch sitemaps.
func config(c *cli.Context) (fetch.Config, error) {
	cfg := fetch.Config{
		UserAgent:      c.String("agent"),
		Workers:        c.Int("workers"),
		PerHost:        c.Int("per-host"),
		Delay:          c.Duration("delay"),
		MaxCrawlDelay:  c.Duration("max-crawl-delay"),
		IgnoreRobots:   c.Bool("ignore-robots"),
		RobotsTTL:      c.Duration("robots-ttl"),
		Timeout:        c.Duration("timeout"),
		ConnectTimeout: c.Duration("connect-timeout"),
		ReadTimeout:    c.Duration("read-timeout"),
		MaxRedirects:   c.Int("max-redirects"),
		Retries:        c.Int("retries"),
		RetryBackoff:   c.Duration("retry-backoff"),
		MaxRetryWait:   c.Duration("max-retry-wait"),
		DNSTTL:         c.Duration("dns-ttl"),
		AllowPrivate:   c.Bool("allow-private"),
		MaxPathDepth:   c.Int("max-depth"),
		MaxRepeat:      c.Int("max-repeat"),
		HostBudget:     c.Int("host-budget"),
		MaxLinks:       c.Int("max-links"),
		Terms:          c.Int("terms"),
		IgnoreNofollow: c.Bool("ignore-nofollow"),
		NoRevisits:     !c.Bool("warc-revisits"),
		NoOutlinks:     !c.Bool("warc-outlinks"),
		SpillDir:       c.String("spill-dir"),
		QueueBy:        c.String("queue-by"),
		LargeDecodes:   c.Int("large-decodes"),
		CAFile:         c.String("ca-file"),
		Insecure:       c.Bool("insecure"),
		Proxy:          c.String("proxy"),
		Backoff:        c.Bool("backoff"),
		MaxHostWait:    c.Duration("max-host-wait"),
		Types:          clikit.SplitList(c.String("types")),
	}
	sites := map[string][]string{}
	for _, spec := range c.StringSlice("strip-params-for") {
		if err := urlnorm.ParseSiteParams(sites, spec); err != nil {
			return cfg, clikit.Usagef("--strip-params-for %v", err)
		}
	}
	cfg.Normalizer = urlnorm.New(urlnorm.Options{
		StripParams:    append([]string{}, clikit.SplitList(c.String("strip-params"))...),
		SiteParams:     sites,
		KeepQueryOrder: c.Bool("keep-query-order"),
	})
	switch cfg.QueueBy {
	case fetch.QueueByIP, fetch.QueueByDomain, fetch.QueueByHost:
	default:
		return cfg, clikit.Usagef("--queue-by %q: want ip, domain or host", cfg.QueueBy)
	}
	for _, d := range []string{"delay", "max-crawl-delay", "robots-ttl", "timeout", "connect-timeout", "read-timeout", "retry-backoff", "max-retry-wait", "dns-ttl"} {
		if c.Duration(d) < 0 {
			return cfg, clikit.Usagef("--%s %v: want a positive duration", d, c.Duration(d))
		}
	}
	for _, n := range []string{"workers", "per-host", "large-decodes", "max-redirects", "retries", "max-depth", "max-repeat", "host-budget", "max-links", "terms"} {
		if c.Int(n) < 0 {
			return cfg, clikit.Usagef("--%s %d: want a number >= 0", n, c.Int(n))
		}
	}
	if c.Int("workers") == 0 || c.Int("per-host") == 0 {
		return cfg, clikit.Usagef("--workers and --per-host must be at least 1")
	}
	if cfg.Delay == 0 {
		cfg.Delay = fetch.NoDelay
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = fetch.NoRedirects
	}
	if cfg.Retries == 0 {
		cfg.Retries = fetch.NoRetries
	}
	if strings.TrimSpace(cfg.UserAgent) == "" || robots.ProductToken(cfg.UserAgent) == "" {
		return cfg, clikit.Usagef("--agent %q: want a name starting with letters, like \"mybot/1.0 (+https://example.com/bot)\"", cfg.UserAgent)
	}
	static, err := staticHosts(c.StringSlice("resolve"), c.String("hosts-file"))
	if err != nil {
		return cfg, err
	}
	if len(static) > 0 {
		cfg.LookupIP = func(ctx context.Context, host string) ([]netip.Addr, error) {
			if a, ok := static[strings.ToLower(host)]; ok {
				return a, nil
			}
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.MaxSize, err = sizeFlag(c, "max-size"); err != nil {
		return cfg, err
	}
	if cfg.MaxDecoded, err = sizeFlag(c, "max-decoded"); err != nil {
		return cfg, err
	}
	if cfg.QueueMemory, err = sizeFlag(c, "queue-memory"); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func run(c *cli.Context) error {
	if err := clikit.NoInput(c); err != nil {
		return err
	}
	env := clikit.EnvOf(c)
	defer routeNetLog(env.Stderr)()
	cfg, err := config(c)
	if err != nil {
		return err
	}
	warcSize, err := sizeFlag(c, "warc-size")
	if err != nil {
		return err
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	var res *resumption
	if p := c.String("resume"); p != "" {
		if res, err = openResume(p, c.String("warc"), c.String("warc-prefix"), env.Stderr); err != nil {
			return err
		}
		defer res.file.Close()
	}
	if dir := c.String("warc"); dir != "" {
		robotsPolicy := "obey"
		if cfg.IgnoreRobots {
			robotsPolicy = "ignore"
		}
		w, err := warc.Create(warc.Options{
			Dir: dir, Prefix: c.String("warc-prefix"), MaxSize: warcSize,
			Info: warc.Header{
				{Name: "software", Value: "crawlkit fetch " + clikit.Version},
				{Name: "format", Value: "WARC File Format 1.1"},
				{Name: "conformsTo", Value: "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
				{Name: "robots", Value: robotsPolicy},
				{Name: "http-header-user-agent", Value: cfg.UserAgent},
			},
		})
		if err != nil {
			return err
		}
		defer w.Close()
		cfg.WARC = w
	}
	out := clikit.Output(c)
	if res != nil {
		out = clikit.OutputTo(c, res.file)
	}
	cfg.Emit = out.Write
	cfg.EmitRaw = out.WriteLine
	stopSync := func() error { return nil }
	if res != nil {
		// Each record reaches the record file as soon as it is made, after
		// its WARC records: a kill loses none, and a resumed run rebuilds
		// from the WARC files the records a kill caught between the two.
		out.LineBuffered = true
		stopSync = res.syncEvery(c.Duration("journal-sync"), cfg.WARC, &cfg)
	}
	saveRates, err := openHostRates(c, &cfg)
	if err != nil {
		return err
	}
	stopBrowser, err := startRender(c, &cfg)
	if err != nil {
		return err
	}
	defer stopBrowser()
	f, err := fetch.New(cfg)
	if err != nil {
		return err
	}

	if p := c.String("cpuprofile"); p != "" {
		pf, err := os.Create(p)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	files := c.Args().Slice()
	bar := clikit.Progress(c, -1, "fetch", false)
	bar.ChangeMax64(1) // a bar, not a spinner: the total is set as URLs are read
	stopBar := make(chan struct{})
	var barDone sync.WaitGroup
	if clikit.ShowProgress(c) {
		barDone.Add(1)
		go func() {
			defer barDone.Done()
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stopBar:
					return
				case <-t.C:
					s := f.Stats()
					secs := time.Since(start).Seconds()
					bar.Describe(fmt.Sprintf("fetch: %.0f pages/s, %d errors, %s",
						float64(s.Done)/secs, s.Errors, humanBytes(s.Bytes)))
					// The total is the URLs read so far: percent and ETA,
					// exact once the input is all read.
					if s.Input > 0 {
						bar.ChangeMax64(s.Input)
					}
					bar.Set64(s.Done)
				}
			}
		}()
	}
	skipped := 0
	runErr := f.Run(c.Context, func(add func(*record.Record) error) error {
		return in.Each(c.Context, files, func(r *record.Record) error {
			if res != nil && res.done[strings.TrimSpace(r.URL())] {
				skipped++
				return nil
			}
			if res != nil {
				if ok, err := res.recoverFrom(f, r); ok || err != nil {
					return err
				}
			}
			return add(r)
		})
	})
	if res != nil && runErr == nil {
		runErr = res.recoverRest(f)
	}
	close(stopBar)
	barDone.Wait()
	bar.Finish()
	if err := stopSync(); err != nil && runErr == nil {
		runErr = err
	}
	if cfg.WARC != nil {
		if err := cfg.WARC.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	if err := saveRates(); err != nil && runErr == nil {
		runErr = err
	}
	if p := c.String("memprofile"); p != "" {
		if pf, err := os.Create(p); err == nil {
			pprof.Lookup("heap").WriteTo(pf, 0)
			pf.Close()
		}
	}
	if res != nil {
		if err := out.Flush(); err != nil && runErr == nil {
			runErr = err
		}
		if err := res.close(); err != nil && runErr == nil {
			runErr = err
		}
		if skipped > 0 {
			fmt.Fprintf(env.Stderr, "fetch: resumed: %d URLs already recorded in %s, not fetched again\n", skipped, c.String("resume"))
		}
		if res.recovered > 0 {
			fmt.Fprintf(env.Stderr, "fetch: %s: %d records rebuilt from WARC responses an interrupted run archived but did not record\n", c.String("resume"), res.recovered)
		}
	}
	s := f.Stats()
	if !c.Bool("quiet") || c.Context.Err() != nil {
		fmt.Fprintln(env.Stderr, summary(s, time.Since(start)))
		if s.Interrupted > 0 {
			fmt.Fprintf(env.Stderr, "fetch: stopped: %d URLs not fetched, written with error \"interrupted\"\n", s.Interrupted)
		}
	}
	return runErr
}

// staticHosts reads --resolve HOST:IP pairs and a hosts file.
func staticHosts(pairs []string, file string) (map[string][]netip.Addr, error) {
	m := map[string][]netip.Addr{}
	for _, p := range pairs {
		i := strings.LastIndex(p, ":")
		if i <= 0 {
			return nil, clikit.Usagef("--resolve %q: want HOST:IP", p)
		}
		a, err := netip.ParseAddr(strings.Trim(p[i+1:], "[]"))
		if err != nil {
			// HOST:IPv6 has more colons: split at the first instead.
			j := strings.Index(p, ":")
			if a, err = netip.ParseAddr(strings.Trim(p[j+1:], "[]")); err != nil {
				return nil, clikit.Usagef("--resolve %q: want HOST:IP", p)
			}
			i = j
		}
		host := strings.ToLower(p[:i])
		m[host] = append(m[host], a)
	}
	if file == "" {
		return m, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	for n, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil || len(f) < 2 {
			return nil, fmt.Errorf("%s: line %d: want \"IP NAME...\"", file, n+1)
		}
		for _, name := range f[1:] {
			m[strings.ToLower(name)] = append(m[strings.ToLower(name)], a)
		}
	}
	return m, nil
}

func summary(s fetch.Stats, d time.Duration) string {
	var b strings.Builder
	secs := d.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	fmt.Fprintf(&b, "fetch: %d URLs in %.1fs (%.0f/s): %d ok, %d with errors", s.Done, d.Seconds(), float64(s.Done)/secs, s.OK, s.Errors)
	if len(s.ErrorCodes) > 0 {
		codes := make([]string, 0, len(s.ErrorCodes))
		for k := range s.ErrorCodes {
			codes = append(codes, k)
		}
		sort.Strings(codes)
		b.WriteString(" (")
		for i, k := range codes {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", k, s.ErrorCodes[k])
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; %d requests, %d retries, %s", s.Requests, s.Retries, humanBytes(s.Bytes))
	if s.LinksCut > 0 {
		fmt.Fprintf(&b, "; %d links over --max-links left out", s.LinksCut)
	}
	b.WriteString(renderSummary(s.Render))
	return b.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func robotsCommand() *cli.Command {
	return &cli.Command{
		Name:      "robots",
		Usage:     "check URLs against a robots.txt file, offline",
		UsageText: "fetch robots --robots FILE [--agent NAME] [--tsv] [URL...]",
		Description: `Answers, for each URL named (or each URL record read from stdin), whether the
crawler called NAME may fetch it under the robots.txt in FILE, by RFC 9309:
the record gains "robots": "allowed" or "disallowed", and "crawl_delay" (in
seconds) when the file sets one for NAME. The host of the URL is not checked:
FILE is taken to be that host's robots.txt. Exit status 0 even when URLs are
disallowed.

Example:
   $ printf 'User-agent: *\nDisallow: /private\nAllow: /private/ok\n' > robots.txt
   $ fetch robots --robots robots.txt --agent mybot --tsv \
       http://x.test/private/a http://x.test/private/ok http://x.test/
   http://x.test/private/a	disallowed
   http://x.test/private/ok	allowed
   http://x.test/	allowed`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "robots", Required: true, Usage: "the robots.txt `FILE`"},
			&cli.StringFlag{Name: "agent", Value: robots.ProductToken(fetch.DefaultUserAgent), Usage: "crawler `NAME` or User-Agent string"},
			clikit.TSVFlag, clikit.HeaderFlag, clikit.StrictFlag,
		},
		Action: checkRobots,
	}
}

func checkRobots(c *cli.Context) error {
	data, err := os.ReadFile(c.String("robots"))
	if err != nil {
		return err
	}
	group := robots.Parse(data).Group(c.String("agent"))
	delay, hasDelay := group.CrawlDelay()
	out := clikit.Output(c)
	tsv := c.Bool("tsv")
	if tsv && c.Bool("header") {
		out.WriteLine([]byte("url\trobots"))
	}
	check := func(r *record.Record) error {
		u := strings.TrimSpace(r.URL())
		w, err := weburl.Parse(u)
		if errors.Is(err, weburl.ErrScheme) {
			err = urlx.ErrScheme
		}
		if err != nil {
			return r.Errorf("%v: %q", err, clip(u))
		}
		// Matched as fetch would request it.
		verdict := "disallowed"
		if group.Allowed(w.RequestURI()) {
			verdict = "allowed"
		}
		if tsv {
			return out.WriteLine([]byte(strings.NewReplacer("\t", " ", "\n", " ").Replace(u) + "\t" + verdict))
		}
		r.SetString("robots", verdict)
		if hasDelay {
			r.SetFloat("crawl_delay", delay.Seconds())
		}
		return out.Write(r)
	}
	if c.Args().Len() > 0 {
		for i, u := range c.Args().Slice() {
			r := record.New(u)
			r.Line = i + 1
			if err := check(r); err != nil {
				fmt.Fprintf(clikit.EnvOf(c).Stderr, "fetch: argument %d: %v\n", i+1, unwrapLine(err))
				if c.Bool("strict") {
					return record.ErrStrict
				}
			}
		}
		return nil
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	return in.Each(c.Context, nil, check)
}

func unwrapLine(err error) error {
	if de, ok := err.(*record.DataError); ok {
		return de.Err
	}
	return err
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

func sitemapsCommand() *cli.Command {
	return &cli.Command{
		Name:      "sitemaps",
		Usage:     "list the URLs of sites' sitemaps, with lastmod, changefreq and priority",
		UsageText: "fetch sitemaps [--delay 1s] [--allow-private] [fetch options] [FILE...]",
		Description: `Reads URL records from the files named or stdin. For the URL of a site
(path "/" or "/robots.txt") it reads the site's robots.txt, the sitemaps its
Sitemap: lines name, and the sitemaps of a sitemap index; any other URL is
read as a sitemap itself. Sitemaps may be XML (urlset or sitemapindex, by
the sitemaps.org protocol 0.9; image, video and news extension elements are
skipped), RSS 2.0, RSS 1.0 or Atom 1.0 feeds (an item's link, pubDate,
dc:date or updated as lastmod), gzipped, or plain text of one URL a line.
One record is written per URL listed: "url", "host", "sitemap" (the file
that listed it), and when given "lastmod" (RFC 3339, UTC), "changefreq" and
"priority".

The protocol's limits hold: 50,000 URLs and 50 MB (uncompressed) per file,
an index inside an index is not read, and a sitemap may list URLs of its own host under its own directory, and any URL
of the site whose robots.txt named it (or the index that lists it), on
whatever host the sitemap lies. What breaks these rules, malformed entries
(no URL, a bad date), sitemaps that are not sitemaps, gzip bombs and loops
are reported on stderr as "fetch: sitemaps: URL: what is wrong"; the rest
goes on.

One run is bounded whatever the sites list: at most --max-sitemaps files
(1000) and --max-urls-per-site URLs (50,000) per site, and --max-urls URLs
(1,000,000) in all; 0 lifts a cap. A site that reaches its cap is left
there ("fetch: sitemaps: HOST: --max-urls-per-site 50000 reached: the rest
of its sitemaps not read"), and once --max-urls is reached the sites still
to come are counted, not read. An input line longer than 1 MiB is reported
and skipped. With --continue FILE, what a cap leaves is not lost: FILE
(tab-separated: the site or sitemap URL and how many of its URLs earlier runs
listed) is read first, each of its URLs read again past those listed, and
FILE is rewritten with what this run's caps leave; the crawl loop keeps it
in state/sitemaps.todo, so a large site's sitemaps enter a turn at a time.
Requests go through
fetch's transport (address check, --ca-file, --proxy, --resolve) with --delay
between two requests to one host.

Example:
   $ echo https://example.com/ | fetch sitemaps --delay 0.5s
   {"url":"https://example.com/news/1","host":"example.com","sitemap":"https://example.com/sitemap-news.xml.gz",
    "lastmod":"2026-11-20T07:30:00Z","changefreq":"hourly","priority":0.9}
   $ fetch sitemaps sites.txt | fetch --warc crawl/ > fetched.ndjson`,
		Flags: append(append(append(clikit.InputFlags(), fetchFlags()...), renderFlags()...),
			&cli.IntFlag{Name: "max-urls-per-site", Value: 50000, Usage: "most URLs listed for one site (host) in a run; 0: no cap"},
			&cli.IntFlag{Name: "max-urls", Value: 1000000, Usage: "most URLs listed in a run; 0: no cap"},
			&cli.IntFlag{Name: "max-sitemaps", Value: 1000, Usage: "most sitemap files (indexes included) read for one site in a run; 0: no cap"},
			&cli.StringFlag{Name: "continue", Usage: "`FILE` of what a cap left unread: read first, then rewritten with what this run's caps leave (for later runs)"},
		),
		Action: sitemaps,
	}
}

func sitemaps(c *cli.Context) error {
	env := clikit.EnvOf(c)
	defer routeNetLog(env.Stderr)()
	cfg, err := config(c)
	if err != nil {
		return err
	}
	cfg.Emit = func(*record.Record) error { return nil } // Get writes no records
	f, err := fetch.New(cfg)
	if err != nil {
		return err
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	if !c.IsSet("max-line") { // a site per line: a line of a MiB is no site
		in.MaxLine = maxSitesLine
	}
	out := clikit.Output(c)
	warn := func(s string) { fmt.Fprintf(env.Stderr, "fetch: sitemaps: %s\n", s) }
	for _, n := range []string{"max-urls-per-site", "max-urls", "max-sitemaps"} {
		if c.Int(n) < 0 {
			return clikit.Usagef("--%s %d: want a number >= 0", n, c.Int(n))
		}
	}
	perSite, total := c.Int("max-urls-per-site"), c.Int("max-urls")
	opt := sitemap.Options{Warn: warn, MaxSitemaps: c.Int("max-sitemaps")}
	if opt.MaxSitemaps == 0 {
		opt.MaxSitemaps = math.MaxInt
	}
	g := getter{f}
	todo, err := readSitemapTodo(c.String("continue"))
	if err != nil {
		return err
	}
	var left []sitemapTodo // what this run's caps leave, for --continue
	skip, fromURL := 0, 0  // of the URL being read: listed by earlier runs, and by this one
	listed := 0
	site := ""                 // the host of the site being read
	bySite := map[string]int{} // URLs listed per site in this run
	emit := func(fd sitemap.Found) error {
		if skip > 0 { // an earlier run listed it
			skip--
			fromURL++
			return nil
		}
		rec := record.New(fd.Loc)
		if h, err := urlx.Host(fd.Loc); err == nil {
			rec.SetString("host", h)
		}
		rec.SetString("sitemap", fd.Sitemap)
		if fd.LastMod != "" {
			rec.SetString("lastmod", fd.LastMod)
		}
		if fd.ChangeFreq != "" {
			rec.SetString("changefreq", fd.ChangeFreq)
		}
		if fd.Priority >= 0 {
			rec.SetFloat("priority", fd.Priority)
		}
		listed++
		fromURL++
		bySite[site]++
		if err := out.Write(rec); err != nil {
			return outputError{err}
		}
		// Stopped at the cap itself, so that no sitemap is fetched for
		// nothing after it.
		if total > 0 && listed >= total {
			return errTotalCap
		}
		if perSite > 0 && bySite[site] >= perSite {
			return errSiteCap
		}
		return nil
	}
	sites, unread := 0, 0
	queued := map[string]bool{} // the URLs --continue's file holds
	for _, t := range todo {
		queued[t.url] = true
	}
	read := func(u string, already int) error {
		p, err := weburl.Parse(u)
		if err != nil {
			warn(fmt.Sprintf("%s: %v", u, err))
			return nil
		}
		if total > 0 && listed >= total {
			unread++
			left = append(left, sitemapTodo{u, already})
			return nil
		}
		site = p.Hostname
		if perSite > 0 && bySite[site] >= perSite {
			warn(fmt.Sprintf("%s: --max-urls-per-site %d reached: %s not read", site, perSite, u))
			left = append(left, sitemapTodo{u, already})
			return nil
		}
		sites++
		skip, fromURL = already, 0
		var derr error
		if p.Path == "/" || p.Path == "/robots.txt" {
			derr = sitemap.Discover(c.Context, g, u, opt, emit)
		} else {
			derr = sitemap.Read(c.Context, g, u, opt, emit)
		}
		switch {
		case errors.Is(derr, errSiteCap):
			warn(fmt.Sprintf("%s: --max-urls-per-site %d reached: the rest of its sitemaps not read", site, perSite))
			left = append(left, sitemapTodo{u, fromURL})
			return nil
		case errors.Is(derr, errTotalCap):
			warn(fmt.Sprintf("%s: --max-urls %d reached: the rest of its sitemaps not read", site, total))
			left = append(left, sitemapTodo{u, fromURL})
			return nil
		}
		var oe outputError
		if derr != nil && c.Context.Err() == nil && !errors.As(derr, &oe) {
			warn(derr.Error())
			return nil
		}
		if errors.As(derr, &oe) {
			return oe.err
		}
		return derr
	}
	for _, t := range todo {
		if err := read(t.url, t.listed); err != nil {
			return err
		}
	}
	err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		u := strings.TrimSpace(r.URL())
		if queued[u] { // read above, from where earlier runs stopped
			return nil
		}
		return read(u, 0)
	})
	if err == nil && c.IsSet("continue") {
		err = writeSitemapTodo(c.String("continue"), left)
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(env.Stderr, "fetch: sitemaps: %d sites or sitemaps read, %d URLs listed\n", sites, listed)
	}
	if unread > 0 {
		warn(fmt.Sprintf("--max-urls %d reached: %d sites or sitemaps after it not read", total, unread))
	}
	return err
}

// maxSitesLine is the longest input line fetch sitemaps reads: a site's
// record is a URL and a few fields.
const maxSitesLine = 1 << 20

// errSiteCap and errTotalCap stop the reading of a site at
// --max-urls-per-site and --max-urls.
var (
	errSiteCap  = errors.New("--max-urls-per-site reached")
	errTotalCap = errors.New("--max-urls reached")
)

// outputError is a failure to write a record: it ends the command.
type outputError struct{ err error }

func (e outputError) Error() string { return e.err.Error() }

// getter adapts the fetcher to sitemap.Getter.
type getter struct{ f *fetch.Fetcher }

func (g getter) Get(ctx context.Context, u string) (int, []byte, error) {
	return g.f.Get(ctx, u, sitemap.MaxBytes)
}
