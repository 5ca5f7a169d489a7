// Package urlnorm gives every URL one spelling, so that one page has one key
// in every tool of the toolkit: the fetcher's queue and its links, the
// feature extractor, page importance, the segmenter and the index.
//
// Normalize applies the RFC 3986 section 6.2.2 normalisations (scheme and
// host case, percent-encoding case, unreserved characters decoded, dot
// segments removed), the section 6.2.3 scheme-based ones (default port
// dropped, empty path as "/", an empty query dropped), writes an
// internationalised host name in its ASCII (punycode) form with
// golang.org/x/net/idna (UTS #46 lookup rules), drops the fragment, sorts
// the query parameters by name (stable, so repeated names keep their order)
// and removes session-id and tracking parameters named in a configurable
// list.
//
// Why not github.com/PuerkitoBio/purell: it decodes the whole path before
// re-encoding it, so an encoded slash "a%2Fb" becomes the separator "a/b" (a
// different resource), it passes host:port to IDNA as one label
// ("xn--:8080-..."), and its query sort re-encodes values; the tests below
// hold this package to the cases purell gets wrong.
package urlnorm

import (
	"errors"
	"net/url"
	"sort"
	"strings"

	"github.com/sekitei/crawlkit/pkg/urlx"
)

// DefaultStripParams are the query parameters removed by default: session
// ids of the common web frameworks and the usual click-tracking tags. A name
// ending in "*" is a prefix. Names compare case-insensitively.
var DefaultStripParams = []string{
	"phpsessid", "jsessionid", "aspsessionid*", "asp.net_sessionid", "sid", "sessionid", "session_id",
	"cfid", "cftoken", "utm_*", "gclid", "fbclid", "yclid", "_openstat",
}

// Options choose the normalisations beyond RFC 3986.
type Options struct {
	// StripParams names the query parameters to remove (see
	// DefaultStripParams); nil means DefaultStripParams, an empty non-nil
	// slice none.
	StripParams []string
	// KeepQueryOrder leaves the parameters in their written order.
	KeepQueryOrder bool
}

// A Normalizer normalises URLs with fixed Options; safe for concurrent use.
type Normalizer struct {
	exact    map[string]bool
	prefixes []string
	sortQ    bool
}

// New returns a Normalizer for opt.
func New(opt Options) *Normalizer {
	n := &Normalizer{exact: map[string]bool{}, sortQ: !opt.KeepQueryOrder}
	list := opt.StripParams
	if list == nil {
		list = DefaultStripParams
	}
	for _, p := range list {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "" || p == "*":
		case strings.HasSuffix(p, "*"):
			n.prefixes = append(n.prefixes, strings.TrimSuffix(p, "*"))
		default:
			n.exact[p] = true
		}
	}
	return n
}

var def = New(Options{})

// Normalize normalises raw with the default options.
func Normalize(raw string) (string, error) { return def.Normalize(raw) }

// Errors of Normalize besides those of urlx.Split.
var ErrHost = errors.New("bad host")

// Normalize returns the normal form of an absolute http(s) URL.
func (n *Normalizer) Normalize(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	p, err := urlx.Split(raw)
	if err != nil {
		return "", err
	}
	host := p.Host
	if strings.IndexByte(host, '%') >= 0 {
		// A percent-encoded (UTF-8) host name: decode it for IDNA.
		h, err := url.PathUnescape(host)
		if err != nil {
			return "", ErrHost
		}
		host = h
	}
	host = urlx.NormalizeHost(p.Scheme, host)
	if host == "" || strings.ContainsAny(host, " %/\\@") {
		return "", ErrHost
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		if port := host[i+1:]; port == "" {
			host = host[:i]
		} else if strings.Trim(port, "0123456789") != "" {
			return "", ErrHost
		}
	}
	var b strings.Builder
	b.Grow(len(raw) + 8)
	b.WriteString(p.Scheme)
	b.WriteString("://")
	b.WriteString(host)
	path := removeDotSegments(escapes(n.pathParams(p.Path), false))
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if q := n.query(p.RawQuery); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String(), nil
}

// pathParams removes a ";jsessionid=..." path parameter (Java servlets put
// the session there) when jsessionid is stripped.
func (n *Normalizer) pathParams(path string) string {
	if !n.strip("jsessionid") {
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
func (n *Normalizer) query(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(escapes(raw, true), "&")
	kept := parts[:0]
	for _, kv := range parts {
		if kv == "" {
			continue
		}
		name := kv
		if i := strings.IndexByte(kv, '='); i >= 0 {
			name = kv[:i]
		}
		if n.strip(name) {
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

func (n *Normalizer) strip(name string) bool {
	if len(n.exact) == 0 && len(n.prefixes) == 0 {
		return false
	}
	if u, err := url.QueryUnescape(name); err == nil {
		name = u
	}
	name = strings.ToLower(name)
	if n.exact[name] {
		return true
	}
	for _, p := range n.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
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

// removeDotSegments is RFC 3986 section 5.2.4 on an absolute path.
func removeDotSegments(path string) string {
	if !strings.Contains(path, ".") {
		return path
	}
	in := path
	var out []string // output segments, each with its leading '/'
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "/..":
			in = "/"
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "." || in == "..":
			in = ""
		default:
			start := 0
			if in[0] == '/' {
				start = 1
			}
			end := strings.IndexByte(in[start:], '/')
			if end < 0 {
				end = len(in)
			} else {
				end += start
			}
			out = append(out, in[:end])
			in = in[end:]
		}
	}
	return strings.Join(out, "")
}
