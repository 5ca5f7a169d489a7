// Package weburl parses, resolves and serialises http(s) URLs as the WHATWG
// URL Standard does, so that the toolkit requests what a browser would
// request for the same seed, link, redirect or sitemap entry: a backslash is
// a slash, tabs and newlines inside an href are dropped, "///host/x" names
// host, IPv4 numbers in any form ("0x7f.1", "256") become dotted quads,
// "%" that starts no escape stays, ports lose leading zeros and the
// scheme's default, and internationalised hosts go through UTS #46 as the
// Standard configures it (nontransitional: "ẞ.com" is "xn--zca.com").
//
// The parser is github.com/nlnwa/whatwg-url, written by the National
// Library of Norway for its own crawler and checked against the Standard's
// test data; this package adds what the Standard says and the library does
// not do: "^" in the path percent-encode set, punycode labels the
// Standard passes through (IgnoreInvalidPunycode), and the document's
// encoding for the query of a relative reference (the library's encoding
// option also re-encodes host names, which the Standard never does).
// TestURLStandard runs the Standard's urltestdata.json over it.
//
// A URL here is the request form: what goes on the wire and what robots.txt
// is matched against. Identity (the de-duplication key, with the query
// sorted and tracking parameters removed) is package urlnorm's.
package weburl

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	wurl "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
)

// A URL is an absolute http or https URL as the URL Standard serialises
// it, without its fragment.
type URL struct {
	Scheme   string // "http" or "https"
	Userinfo string // "user:password" as serialised, "" if none
	Host     string // host[:port], the port only when not the scheme's default
	Hostname string // the host without port; an IPv6 address in brackets
	Port     string // "" for the scheme's default
	Path     string // the serialised path, starting with "/"
	RawQuery string // the serialised query without "?"
	HasQuery bool   // a "?" was present (the query may be empty)

	// parsed is the parser's form of the URL, for resolving references
	// the fast path does not take without parsing the base again; set
	// when the URL is made (by the parser, or by Prepared), never later,
	// so that a URL may be shared between goroutines.
	parsed *wurl.Url
}

// Errors of Parse and Resolve.
var (
	// ErrScheme: a valid URL, but not http or https (mailto:, ftp:,
	// javascript:...): a crawler skips it quietly.
	ErrScheme = errors.New("not an http(s) URL")
	// ErrInvalid wraps the reason the Standard's parser failed.
	ErrInvalid = errors.New("invalid URL")
)

// pathSet is the Standard's path percent-encode set, which gained "^"
// after the library's release.
var pathSet = wurl.PathPercentEncodeSet.Set('^')

// sharpS maps U+1E9E to U+00DF before IDNA, as UTS #46 does since Unicode
// 15.1 (golang.org/x/net/idna's tables map it to "ss", a different name).
func sharpS(_ *wurl.Url, host string) string {
	return strings.ReplaceAll(host, "\u1E9E", "\u00DF")
}

var parser = wurl.NewParser(wurl.WithPathPercentEncodeSet(pathSet), wurl.WithPreParseHostFunc(sharpS))

// Parse parses an absolute http(s) URL.
func Parse(raw string) (*URL, error) {
	if u, ok := fastParse(raw); ok {
		return u, nil
	}
	return slowParse(raw)
}

func slowParse(raw string) (*URL, error) {
	u, err := parser.Parse(raw)
	if err != nil {
		if u2, ok := passPunycode(raw, nil); ok {
			return fromLib(u2)
		}
		return nil, invalid(err)
	}
	return fromLib(u)
}

// Resolve resolves ref against u, as an href on a UTF-8 page at u.
func (u *URL) Resolve(ref string) (*URL, error) { return u.ResolveIn(ref, nil) }

// ResolveIn resolves ref against u as an href on a page in encoding enc
// (nil for UTF-8): the Standard encodes the query of a relative reference
// in the document's encoding, while the path is always UTF-8.
func (u *URL) ResolveIn(ref string, enc encoding.Encoding) (*URL, error) {
	if r, ok := u.fastResolve(ref); ok {
		return r, nil // plain: no non-ASCII query to encode
	}
	return u.slowResolve(ref, enc)
}

func (u *URL) slowResolve(ref string, enc encoding.Encoding) (*URL, error) {
	base := u.String()
	var r *wurl.Url
	var err error
	if u.parsed != nil {
		r, err = parser.BasicParser(ref, u.parsed, nil, wurl.NoState)
	} else {
		r, err = parser.ParseRef(base, ref)
	}
	if err != nil {
		var ok bool
		if r, ok = passPunycode(ref, &base); !ok {
			return nil, invalid(err)
		}
	}
	out, err := fromLib(r)
	if err != nil {
		return nil, err
	}
	if enc != nil && enc != unicode.UTF8 {
		if q, ok := refQuery(ref); ok && hasNonASCII(q) {
			out.RawQuery = encodeQuery(q, enc)
		}
	}
	return out, nil
}

func invalid(err error) error {
	msg := err.Error()
	// The library's messages repeat the URL; keep the reason.
	if i := strings.Index(msg, ". Url: "); i > 0 {
		msg = msg[:i]
	}
	msg = strings.TrimPrefix(msg, "Error: ")
	return errors.Join(ErrInvalid, errors.New(msg))
}

func fromLib(u *wurl.Url) (*URL, error) {
	scheme := u.Scheme()
	if scheme != "http" && scheme != "https" {
		return nil, ErrScheme
	}
	out := &URL{
		parsed:   u,
		Scheme:   scheme,
		Host:     u.Host(),
		Hostname: u.Hostname(),
		Port:     u.Port(),
		Path:     u.Pathname(),
	}
	if u.Username() != "" || u.Password() != "" {
		out.Userinfo = u.Username()
		if u.Password() != "" {
			out.Userinfo += ":" + u.Password()
		}
	}
	if s := u.Search(); s != "" {
		out.RawQuery, out.HasQuery = s[1:], true
	} else {
		// Search() is "" for both "no query" and "empty query"; the
		// serialisation tells them apart.
		out.HasQuery = strings.HasSuffix(u.Href(true), "?")
	}
	if out.Path == "" {
		out.Path = "/"
	}
	return out, nil
}

// Prepared returns u ready to resolve many references: a base whose
// references may need the full parser (a page's links) is parsed by it
// once, not once a reference.
func (u *URL) Prepared() *URL {
	if u.parsed != nil {
		return u
	}
	c := *u
	if p, err := parser.Parse(u.String()); err == nil {
		c.parsed = p
	} else if p, ok := passPunycode(u.String(), nil); ok {
		c.parsed = p
	}
	return &c
}

// String is the URL's serialisation (its href without fragment).
func (u *URL) String() string {
	var b strings.Builder
	b.Grow(len(u.Scheme) + len(u.Userinfo) + len(u.Host) + len(u.Path) + len(u.RawQuery) + 5)
	b.WriteString(u.Scheme)
	b.WriteString("://")
	if u.Userinfo != "" {
		b.WriteString(u.Userinfo)
		b.WriteByte('@')
	}
	b.WriteString(u.Host)
	b.WriteString(u.RequestURI())
	return b.String()
}

// RequestURI is the request target: the path and the query, as they go
// on the wire and as robots.txt rules are matched against them.
func (u *URL) RequestURI() string {
	if !u.HasQuery {
		return u.Path
	}
	return u.Path + "?" + u.RawQuery
}

// NetURL returns the URL for net/http with the path in Opaque, so that the
// request line carries it exactly as serialised: net/url would re-escape
// characters the Standard leaves alone ("|", "[", a "%" that starts no
// escape) or refuse the URL.
func (u *URL) NetURL() *url.URL {
	n := &url.URL{Scheme: u.Scheme, Host: u.Host, Opaque: u.Path, RawQuery: u.RawQuery, ForceQuery: u.HasQuery && u.RawQuery == ""}
	if u.Userinfo != "" {
		name, pw, hasPW := strings.Cut(u.Userinfo, ":")
		name, _ = url.PathUnescape(name)
		pw, _ = url.PathUnescape(pw)
		if hasPW {
			n.User = url.UserPassword(name, pw)
		} else {
			n.User = url.User(name)
		}
	}
	return n
}

// FromNetURL converts a URL net/url parsed (or one NetURL made) by
// parsing its serialisation.
func FromNetURL(n *url.URL) (*URL, error) {
	if n.Opaque != "" && strings.HasPrefix(n.Opaque, "/") && !strings.HasPrefix(n.Opaque, "//") {
		c := *n
		s := c.Scheme + "://"
		if c.User != nil {
			s += c.User.String() + "@"
		}
		s += c.Host + c.Opaque
		if c.RawQuery != "" || c.ForceQuery {
			s += "?" + c.RawQuery
		}
		return Parse(s)
	}
	return Parse(n.String())
}

// passPunycode applies the Standard's IgnoreInvalidPunycode for an ASCII
// host whose xn-- label the library's IDNA refuses: the Standard keeps
// such a label as written (lower-cased).
func passPunycode(raw string, base *string) (*wurl.Url, bool) {
	lower := strings.ToLower(raw)
	if !strings.Contains(lower, "xn--") {
		return nil, false
	}
	lax := wurl.NewParser(wurl.WithPathPercentEncodeSet(pathSet), wurl.WithPreParseHostFunc(sharpS), wurl.WithLaxHostParsing())
	var u *wurl.Url
	var err error
	if base == nil {
		u, err = lax.Parse(raw)
	} else {
		u, err = lax.ParseRef(*base, raw)
	}
	if err != nil {
		return nil, false
	}
	h := u.Hostname()
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return nil, false
		}
	}
	for _, label := range strings.Split(h, ".") {
		if strings.HasPrefix(label, "xn--") {
			return u, true
		}
	}
	return nil, false
}

// refQuery returns the query a reference writes (after its first "?",
// before "#"), with tabs and newlines removed as the parser removes them.
func refQuery(ref string) (string, bool) {
	ref = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, strings.Trim(ref, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		ref = ref[:i]
	}
	i := strings.IndexByte(ref, '?')
	if i < 0 {
		return "", false
	}
	return ref[i+1:], true
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// encodeQuery is the Standard's "percent-encode after encoding" of a
// query in enc: a character enc cannot encode becomes "%26%23N%3B" (its
// decimal code point as an HTML reference, percent-encoded), then bytes in
// the special-query percent-encode set and every non-ASCII byte are
// percent-encoded.
func encodeQuery(q string, enc encoding.Encoding) string {
	const hex = "0123456789ABCDEF"
	e := enc.NewEncoder()
	var out strings.Builder
	out.Grow(len(q) * 2)
	var buf [8]byte
	for _, r := range q {
		var b []byte
		if r < 0x80 {
			buf[0] = byte(r)
			b = buf[:1]
		} else if s, err := e.String(string(r)); err == nil && s != "" {
			b = []byte(s)
		} else {
			out.WriteString("%26%23")
			out.WriteString(strconv.Itoa(int(r)))
			out.WriteString("%3B")
			continue
		}
		for _, c := range b {
			if c < 0x21 || c > 0x7e || c == '"' || c == '#' || c == '<' || c == '>' || c == '\'' {
				out.WriteByte('%')
				out.WriteByte(hex[c>>4])
				out.WriteByte(hex[c&15])
				continue
			}
			out.WriteByte(c)
		}
	}
	return out.String()
}
