package sitemap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/sekitei/crawlkit/pkg/robots"
	"github.com/sekitei/crawlkit/pkg/urlnorm"
)

// A Getter fetches a URL, following redirects, and returns the final
// status and the body (content coding undone, at most MaxBytes of it).
type Getter interface {
	Get(ctx context.Context, rawURL string) (status int, body []byte, err error)
}

// Found is a URL a sitemap lists.
type Found struct {
	Entry
	Sitemap string // the sitemap that listed it
}

// Options bound a discovery.
type Options struct {
	Limits Limits
	// MaxSitemaps is the most sitemap files read from one site, indexes
	// included: 1000 when 0.
	MaxSitemaps int
	// Warn receives what went wrong with a sitemap ("URL: what"); the
	// discovery goes on with the next one.
	Warn func(string)
}

// Discover reads the robots.txt of the site of siteURL for its Sitemap:
// lines and calls fn for every URL those sitemaps list (and the sitemaps
// of an index they are), within the protocol's limits.
func Discover(ctx context.Context, g Getter, siteURL string, opt Options, fn func(Found) error) error {
	u, err := url.Parse(siteURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("site %q: not an absolute URL", siteURL)
	}
	robotsURL := u.Scheme + "://" + u.Host + "/robots.txt"
	status, body, err := g.Get(ctx, robotsURL)
	if err != nil {
		return fmt.Errorf("%s: %v", robotsURL, err)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("%s: status %d", robotsURL, status)
	}
	r := &reader{g: g, opt: opt, fn: fn, seen: map[string]bool{}}
	for _, sm := range robots.Parse(body).Sitemaps() {
		if err := r.read(ctx, sm, robotsURL, 0); err != nil {
			return err
		}
	}
	return nil
}

// Read reads the sitemap at sitemapURL (named directly, so its URLs must
// lie under its directory) and calls fn for every URL it lists.
func Read(ctx context.Context, g Getter, sitemapURL string, opt Options, fn func(Found) error) error {
	r := &reader{g: g, opt: opt, fn: fn, seen: map[string]bool{}}
	return r.read(ctx, sitemapURL, "", 0)
}

type reader struct {
	g     Getter
	opt   Options
	fn    func(Found) error
	seen  map[string]bool
	files int
}

// errStop is an error of fn: the discovery ends with it.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

func (r *reader) warn(format string, args ...any) {
	if r.opt.Warn != nil {
		r.opt.Warn(fmt.Sprintf(format, args...))
	}
}

// read reads the sitemap sm; robotsURL is the robots.txt that vouches for
// it (named it, or named the index that lists it), "" if none.
func (r *reader) read(ctx context.Context, sm, robotsURL string, depth int) error {
	key, err := urlnorm.Normalize(sm)
	if err != nil {
		r.warn("%s: %v", sm, err)
		return nil
	}
	if r.seen[key] {
		r.warn("%s: listed again (a loop?): read once", sm)
		return nil
	}
	r.seen[key] = true
	max := r.opt.MaxSitemaps
	if max <= 0 {
		max = 1000
	}
	if r.files >= max {
		r.warn("%s: more than %d sitemaps for one site: not read", sm, max)
		return nil
	}
	r.files++
	status, body, err := r.g.Get(ctx, sm)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.warn("%s: %v", sm, err)
		return nil
	}
	if status < 200 || status > 299 {
		r.warn("%s: status %d", sm, status)
		return nil
	}
	var children []string
	base, _ := url.Parse(sm)
	kind, perr := Parse(bytes.NewReader(body), r.opt.Limits, func(kind string, e Entry) error {
		if IsFeed(kind) {
			// A feed's links may be relative to the feed (Atom, RFC 4287 4.2.7.1).
			if u, err := url.Parse(e.Loc); err == nil && base != nil {
				e.Loc = base.ResolveReference(u).String()
			}
		}
		if !Allowed(sm, e.Loc, robotsURL) {
			r.warn("%s: lists %s of another site or directory: refused", sm, e.Loc)
			return nil
		}
		if kind == KindIndex {
			children = append(children, e.Loc)
			return nil
		}
		if err := r.fn(Found{Entry: e, Sitemap: sm}); err != nil {
			return errStop{err}
		}
		return nil
	}, func(s string) { r.warn("%s: %s", sm, s) })
	var stop errStop
	if errors.As(perr, &stop) {
		return stop.err
	}
	if perr != nil {
		r.warn("%s: %v", sm, perr)
	}
	if kind == KindIndex {
		if depth > 0 {
			r.warn("%s: an index inside an index: not read (nested depth 1)", sm)
			return nil
		}
		for _, c := range children {
			if err := r.read(ctx, c, robotsURL, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
