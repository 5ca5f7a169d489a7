// Package urlnorm gives every URL one key, so that one page has one key in
// every tool of the toolkit: the fetcher's de-duplication, the feature
// extractor, page importance, the segmenter and the index.
//
// The key is not what is requested: a fetcher sends the URL as the WHATWG
// URL Standard serialises it (package weburl), query order and all, since
// a server (and robots.txt) may read "?title=A&action=edit" otherwise than
// "?action=edit&title=A". Normalize starts from that serialisation (scheme
// and host case, IDN to punycode, IPv4 forms, default port, dot segments,
// the fragment dropped) and applies the key rules on top: percent-encodings
// in upper case and those of RFC 3986 unreserved characters decoded, other
// bytes a URI may not hold percent-encoded, a trailing dot of the host and
// the userinfo dropped, an empty query dropped, the query sorted by
// parameter name (stable, so repeated names keep their order), and
// parameters that never name content (session ids, click-tracking tags)
// removed, by default and per site.
//
// Why not github.com/PuerkitoBio/purell: it decodes the whole path before
// re-encoding it, so an encoded slash "a%2Fb" becomes the separator "a/b" (a
// different resource), it passes host:port to IDNA as one label
// ("xn--:8080-..."), and its query sort re-encodes values; the tests below
// hold this package to the cases purell gets wrong.
package urlnorm

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/sekitei/crawlkit/pkg/urlx"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

// DefaultStripParams are the query parameters removed by default: names
// that never name content. Session ids whose names no application uses for
// anything else, and click-tracking tags. Not "sid" (the story id of
// PHP-Nuke and Slashcode sites), not "sessionid" or "session_id" (a
// conference programme's talk, a course's class), not "id" or "p": a name
// some site uses for content belongs in its site list (Options.SiteParams).
// A name ending in "*" is a prefix. Names compare case-insensitively.
var DefaultStripParams = []string{
	"phpsessid", "jsessionid", "aspsessionid*", "asp.net_sessionid", "cfid", "cftoken",
	"utm_*", "gclid", "dclid", "fbclid", "msclkid", "yclid", "igshid", "mc_eid", "_openstat",
}

// Options choose the normalisations beyond the URL Standard's.
type Options struct {
	// StripParams names the query parameters to remove (see
	// DefaultStripParams); nil means DefaultStripParams, an empty non-nil
	// slice none.
	StripParams []string
	// SiteParams names more parameters to remove on one site: the key is
	// a host name, and holds for its subdomains too ("example.com" for
	// "www.example.com"); names as in StripParams.
	SiteParams map[string][]string
	// KeepQueryOrder leaves the parameters in their written order.
	KeepQueryOrder bool
}

// A paramSet matches parameter names: exact names and prefixes.
type paramSet struct {
	exact    map[string]bool
	prefixes []string
}

func newParamSet(list []string) paramSet {
	s := paramSet{exact: map[string]bool{}}
	for _, p := range list {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "" || p == "*":
		case strings.HasSuffix(p, "*"):
			s.prefixes = append(s.prefixes, strings.TrimSuffix(p, "*"))
		default:
			s.exact[p] = true
		}
	}
	return s
}

func (s paramSet) empty() bool { return len(s.exact) == 0 && len(s.prefixes) == 0 }

// has reports whether s holds name (lower case, decoded).
func (s paramSet) has(name string) bool {
	if s.exact[name] {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// A Normalizer normalises URLs with fixed Options; safe for concurrent use.
type Normalizer struct {
	params paramSet
	sites  map[string]paramSet
	sortQ  bool
}

// New returns a Normalizer for opt.
func New(opt Options) *Normalizer {
	list := opt.StripParams
	if list == nil {
		list = DefaultStripParams
	}
	n := &Normalizer{params: newParamSet(list), sortQ: !opt.KeepQueryOrder}
	for host, names := range opt.SiteParams {
		host = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
		if host == "" {
			continue
		}
		if n.sites == nil {
			n.sites = map[string]paramSet{}
		}
		s := newParamSet(names)
		if old, ok := n.sites[host]; ok {
			for k := range old.exact {
				s.exact[k] = true
			}
			s.prefixes = append(s.prefixes, old.prefixes...)
		}
		n.sites[host] = s
	}
	return n
}

// ParseSiteParams reads "HOST=name,name" (the --strip-params-for flag) into
// m, adding to what it holds.
func ParseSiteParams(m map[string][]string, spec string) error {
	host, names, ok := strings.Cut(spec, "=")
	host = strings.TrimSpace(host)
	if !ok || host == "" || strings.ContainsAny(host, "/:?#@ ") {
		return fmt.Errorf("%q: want HOST=name,name", spec)
	}
	for _, p := range strings.Split(names, ",") {
		if p = strings.TrimSpace(p); p != "" {
			m[strings.ToLower(host)] = append(m[strings.ToLower(host)], p)
		}
	}
	return nil
}

var def = New(Options{})

// Normalize normalises raw with the default options.
func Normalize(raw string) (string, error) { return def.Normalize(raw) }

// ErrHost is kept for callers that test for it; Normalize's errors wrap
// weburl.ErrInvalid or urlx.ErrScheme.
var ErrHost = errors.New("bad host")

// Normalize returns the key of an absolute http(s) URL.
func (n *Normalizer) Normalize(raw string) (string, error) {
	u, err := weburl.Parse(strings.TrimSpace(raw))
	if err != nil {
		if errors.Is(err, weburl.ErrScheme) {
			return "", urlx.ErrScheme
		}
		return "", err
	}
	return n.Key(u), nil
}

// Key returns the key of a parsed URL.
func (n *Normalizer) Key(u *weburl.URL) string {
	host := TrimRootDot(u.Hostname)
	var b strings.Builder
	b.Grow(len(u.Scheme) + len(u.Host) + len(u.Path) + len(u.RawQuery) + 8)
	b.WriteString(u.Scheme)
	b.WriteString("://")
	b.WriteString(host)
	if u.Port != "" {
		b.WriteByte(':')
		b.WriteString(u.Port)
	}
	b.WriteString(escapes(n.pathParams(u.Path), false))
	if q := n.query(u.RawQuery, n.site(host)); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String()
}

// TrimRootDot drops the final dot of a fully qualified host name
// ("example.com." is example.com), unless what is left would not be the
// same host to the URL Standard: empty ("."), ending in another dot, or
// ending in a label that makes it an IPv4 number ("foo.09.").
func TrimRootDot(host string) string {
	h, ok := strings.CutSuffix(host, ".")
	if !ok || h == "" || strings.HasSuffix(h, ".") {
		return host
	}
	if last := h[strings.LastIndexByte(h, '.')+1:]; last[0] >= '0' && last[0] <= '9' {
		return host
	}
	return h
}

// site returns the site list for host: its own or its nearest parent's.
func (n *Normalizer) site(host string) paramSet {
	for h := host; n.sites != nil && h != ""; {
		if s, ok := n.sites[h]; ok {
			return s
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			break
		}
		h = h[i+1:]
	}
	return paramSet{}
}

// pathParams removes a ";jsessionid=..." path parameter (Java servlets put
// the session there) when jsessionid is stripped.
func (n *Normalizer) pathParams(path string) string {
	if !n.params.has("jsessionid") {
		return path
	}
	i := strings.Index(strings.ToLower(path), ";jsessionid=")
	if i < 0 {
		return path
	}
	end := strings.IndexAny(path[i+1:], ";/")
	if end < 0 {
		return path[:i]
	}
	return path[:i] + path[i+1+end:]
}

// query drops stripped and empty parameters and sorts the rest by name.
func (n *Normalizer) query(raw string, site paramSet) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(escapes(raw, true), "&")
	kept := parts[:0]
	for _, kv := range parts {
		if kv == "" {
			continue
		}
		if n.strip(paramName(kv), site) {
			continue
		}
		kept = append(kept, kv)
	}
	if n.sortQ {
		sort.SliceStable(kept, func(i, j int) bool { return paramName(kept[i]) < paramName(kept[j]) })
	}
	return strings.Join(kept, "&")
}

func paramName(kv string) string {
	if i := strings.IndexByte(kv, '='); i >= 0 {
		return kv[:i]
	}
	return kv
}

func (n *Normalizer) strip(name string, site paramSet) bool {
	if n.params.empty() && site.empty() {
		return false
	}
	if u, err := url.QueryUnescape(name); err == nil {
		name = u
	}
	name = strings.ToLower(name)
	return n.params.has(name) || site.has(name)
}

// escapes rewrites percent-encodings in upper case, decodes those of
// unreserved characters (RFC 3986 2.3), and percent-encodes bytes that may
// not appear in a URL (spaces, non-ASCII, quotes...). An invalid "%" is
// encoded as "%25". In a query, "+" and the delimiters stay as written.
func escapes(s string, query bool) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				d := unhex(s[i+1])<<4 | unhex(s[i+2])
				if b == nil {
					b = append(make([]byte, 0, len(s)+8), s[:i]...)
				}
				if unreserved(d) {
					b = append(b, d)
				} else {
					b = append(b, '%', upperHex[d>>4], upperHex[d&15])
				}
				i += 2
				continue
			}
			if b == nil {
				b = append(make([]byte, 0, len(s)+8), s[:i]...)
			}
			b = append(b, '%', '2', '5')
			continue
		}
		if allowed(c, query) {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(s)+8), s[:i]...)
		}
		b = append(b, '%', upperHex[c>>4], upperHex[c&15])
	}
	if b == nil {
		return s
	}
	return string(b)
}

const upperHex = "0123456789ABCDEF"

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// allowed reports whether c may stand unencoded in a path (or query):
// unreserved, sub-delims, ':' and '@', '/' (and '?' in a query).
func allowed(c byte, query bool) bool {
	if unreserved(c) {
		return true
	}
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@', '/':
		return true
	case '?':
		return query
	}
	return false
}
