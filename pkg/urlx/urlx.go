// Package urlx splits absolute http(s) URLs into their parts quickly and
// normalises host names, the two URL chores every tool of the toolkit shares.
//
// net/url is correct but allocates a *URL and decodes eagerly; the feature
// extractor and the segment filter look at millions of URLs a second and need
// only the raw parts, so Split does a single pass with no allocation and
// leaves decoding to the caller.
package urlx

import (
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Parts are the raw (still percent-encoded) components of an absolute URL.
type Parts struct {
	Scheme   string // lower case: "http" or "https"
	Host     string // authority without userinfo, as written (may hold a port)
	Path     string // from the first '/' up to '?' or '#'; "" if none
	RawQuery string // after '?' up to '#', without them
	HasQuery bool   // a '?' was present, even with an empty query
}

// Errors returned by Split.
var (
	ErrEmpty    = errors.New("empty URL")
	ErrRelative = errors.New("relative URL (no scheme)")
	ErrScheme   = errors.New("unsupported scheme (only http and https)")
	ErrNoHost   = errors.New("URL has no host")
	ErrControl  = errors.New("URL contains a control character")
)

// Split splits an absolute http or https URL. It accepts what browsers
// accept in the path and query (spaces included) but refuses control
// characters, which no URL can carry.
func Split(raw string) (Parts, error) {
	return split(raw, true)
}

// SplitPrintable is Split for a URL its caller has found to be printable
// ASCII (every byte in 0x20..0x7e): the same parts and errors, without
// Split's search for a control character, which such a URL cannot hold.
func SplitPrintable(raw string) (Parts, error) {
	return split(raw, false)
}

func split(raw string, checkControl bool) (Parts, error) {
	var p Parts
	if raw == "" {
		return p, ErrEmpty
	}
	colon := -1
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == ':' {
			colon = i
			break
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			break
		}
	}
	if colon <= 0 {
		return p, ErrRelative
	}
	switch {
	case strings.EqualFold(raw[:colon], "http"):
		p.Scheme = "http"
	case strings.EqualFold(raw[:colon], "https"):
		p.Scheme = "https"
	default:
		return p, ErrScheme
	}
	rest := raw[colon+1:]
	if !strings.HasPrefix(rest, "//") {
		return p, ErrNoHost
	}
	rest = rest[2:]
	end := len(rest)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
	}
	host := rest[:end]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	if host == "" || host[0] == ':' {
		return p, ErrNoHost
	}
	p.Host = host
	rest = rest[end:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		p.Path, p.RawQuery, p.HasQuery = rest[:i], rest[i+1:], true
	} else {
		p.Path = rest
	}
	if checkControl && HasControl(raw) {
		return p, ErrControl
	}
	return p, nil
}

// HasControl reports whether s holds a control character (below 0x20, or
// 0x7f), which Split refuses. It tests eight bytes at a time: byte by
// byte, this check of the whole URL was half of Split's time.
func HasControl(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := word(s[i : i+8])
		// A byte below n sets its high bit in (w - n*ones) &^ w, and
		// only such a byte can (the borrow starts at one); a byte equal
		// to 0x7f is a zero byte in w ^ 0x7f*ones.
		del := w ^ 0x7f*ones
		if ((w-0x20*ones)&^w|(del-ones)&^del)&highs != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// word reads the 8 bytes of s as a little-endian number; the compiler
// makes this one load.
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// NormalizeHost returns host[:port] in lower case, with an internationalised
// name (as Unicode or percent-encoded UTF-8) in its ASCII (punycode) form and the scheme's default port dropped.
// A name IDNA refuses is returned lower-cased as it is.
func NormalizeHost(scheme, host string) string {
	if isPlainHost(host) {
		return host // nearly every host: nothing to change
	}
	name, port := host, ""
	if strings.HasPrefix(host, "[") { // IPv6 literal
		if i := strings.IndexByte(host, ']'); i >= 0 {
			name, port = host[:i+1], strings.TrimPrefix(host[i+1:], ":")
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		name, port = host[:i], host[i+1:]
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	name = strings.TrimSuffix(name, ".")
	if strings.IndexByte(name, '%') >= 0 {
		// A percent-encoded UTF-8 name (what url.URL.String makes of an IDN
		// host) is the same host as its Unicode and punycode forms.
		if d, err := url.PathUnescape(name); err == nil && utf8.ValidString(d) {
			name = d
		}
	}
	if !isASCIILower(name) {
		if a, err := idna.Lookup.ToASCII(name); err == nil {
			name = a
		} else {
			name = strings.ToLower(name)
		}
	}
	if port != "" {
		return name + ":" + port
	}
	return name
}

// isPlainHost reports whether host is a name NormalizeHost returns as it
// is: lower-case ASCII letters, digits, dots and dashes, without a port or a
// final dot.
func isPlainHost(host string) bool {
	for i := 0; i < len(host); i++ {
		if c := host[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return host != "" && host[len(host)-1] != '.'
}

func isASCIILower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c >= 'A' && c <= 'Z' || c == '%' {
			return false
		}
	}
	return true
}

// Host returns the normalised host[:port] of an absolute http(s) URL.
func Host(raw string) (string, error) {
	p, err := Split(raw)
	if err != nil {
		return "", err
	}
	return NormalizeHost(p.Scheme, p.Host), nil
}
