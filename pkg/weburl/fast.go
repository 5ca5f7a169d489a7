package weburl

import "strings"

// The Standard's parser (nlnwa/whatwg-url) costs about 13 µs a reference
// (6 µs with the base parsed once, Prepared), and a documentation page has
// hundreds of links; the fast path costs 0.3-0.5 µs (go test -bench
// Resolve ./pkg/weburl, hrefs of the Python documentation). Most
// hrefs are plain: lower-case ASCII host names, paths and queries of
// characters that no percent-encode set holds, perhaps a "../". For those
// the result is the RFC 3986 merge and dot-segment removal, which the fast
// path below computes; anything else (a backslash, a "%" in a path, a tab,
// an upper-case scheme, an IP address, an IDN, a scheme other than http(s)...) goes
// to the full parser. TestFastPathAgrees and FuzzFastPath hold the two to
// the same answers.

// fastParse parses an absolute URL whose parts are all plain.
func fastParse(raw string) (*URL, bool) {
	var scheme, rest string
	switch {
	case strings.HasPrefix(raw, "http://"):
		scheme, rest = "http", raw[len("http://"):]
	case strings.HasPrefix(raw, "https://"):
		scheme, rest = "https", raw[len("https://"):]
	default:
		return nil, false
	}
	end := len(rest)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
	}
	host, port, ok := fastHost(rest[:end], scheme)
	if !ok {
		return nil, false
	}
	path, query, hasQuery, ok := fastPathQuery(rest[end:])
	if !ok {
		return nil, false
	}
	if path == "" {
		path = "/"
	} else if path, ok = fastDots(path); !ok {
		return nil, false
	}
	u := &URL{Scheme: scheme, Hostname: host, Host: host, Port: port, Path: path, RawQuery: query, HasQuery: hasQuery}
	if port != "" {
		u.Host = host + ":" + port
	}
	return u, true
}

// fastResolve resolves a plain reference against u.
func (u *URL) fastResolve(ref string) (*URL, bool) {
	if ref == "" || ref[0] == '#' {
		c := *u
		return &c, true // the same URL: its parsed form holds
	}
	switch {
	case strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://"):
		return fastParse(ref)
	case strings.HasPrefix(ref, "//"):
		return nil, false
	}
	// A scheme ("mailto:", "javascript:", "HTTP:") is the full parser's.
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if c == ':' {
			return nil, false
		}
		if c == '/' || c == '?' || c == '#' {
			break
		}
	}
	path, query, hasQuery, ok := fastPathQuery(ref)
	if !ok {
		return nil, false
	}
	out := *u
	out.parsed = nil // the base's, not this URL's
	out.RawQuery, out.HasQuery = query, hasQuery
	switch {
	case path == "" && hasQuery:
		// "?q": the base's path with a new query.
		return &out, true
	case path == "":
		// "" and "#x" are handled above; a path-less ref left here is
		// impossible, but the full parser decides if it were.
		return nil, false
	case path[0] == '/':
	default:
		path = u.Path[:strings.LastIndexByte(u.Path, '/')+1] + path
	}
	if out.Path, ok = fastDots(path); !ok {
		return nil, false
	}
	return &out, true
}

// fastHost accepts an ASCII LDH host name that is not an IPv4 number
// in any form and holds no punycode label, and a port of digits.
func fastHost(h, scheme string) (host, port string, ok bool) {
	if i := strings.IndexByte(h, ':'); i >= 0 {
		host, port = h[:i], h[i+1:]
		if port == "" || len(port) > 5 {
			return "", "", false
		}
		for j := 0; j < len(port); j++ {
			if port[j] < '0' || port[j] > '9' {
				return "", "", false
			}
		}
		port = strings.TrimLeft(port, "0")
		if port == "" {
			port = "0"
		}
		if len(port) == 5 && port > "65535" {
			return "", "", false
		}
		if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
			port = ""
		}
	} else {
		host = h
	}
	if host == "" || host[0] == '.' || host[len(host)-1] == '.' || host[0] == '-' {
		return "", "", false
	}
	// An ASCII name in upper case is the same name in lower case (UTS #46
	// maps A-Z to a-z and nothing else here).
	for i := 0; i < len(host); i++ {
		if c := host[i]; c >= 'A' && c <= 'Z' {
			host = strings.ToLower(host)
			break
		}
	}
	labelStart := 0
	for i := 0; i <= len(host); i++ {
		if i < len(host) && host[i] != '.' {
			c := host[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", "", false
			}
			continue
		}
		if i == labelStart {
			return "", "", false // an empty label
		}
		if strings.HasPrefix(host[labelStart:i], "xn--") {
			return "", "", false
		}
		labelStart = i + 1
	}
	// A last label that starts with a digit may make the host an IPv4
	// number ("1.2.3.4", "0x7f"): the full parser decides.
	if last := host[strings.LastIndexByte(host, '.')+1:]; last[0] >= '0' && last[0] <= '9' {
		return "", "", false
	}
	return host, port, true
}

// fastPathQuery splits "path?query#fragment" whose path and query hold
// only characters no percent-encode set of a special URL holds (and no "%",
// which a path may use to spell a dot segment).
func fastPathQuery(s string) (path, query string, hasQuery, ok bool) {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	path = s
	if i := strings.IndexByte(s, '?'); i >= 0 {
		path, query, hasQuery = s[:i], s[i+1:], true
	}
	for i := 0; i < len(path); i++ {
		if !plainPath[path[i]] {
			return "", "", false, false
		}
	}
	for i := 0; i < len(query); i++ {
		if c := query[i]; !plainPath[c] && c != '?' && c != '%' {
			return "", "", false, false
		}
	}
	return path, query, hasQuery, true
}

// plainPath: ASCII letters, digits and "-._~!$&()*+,;=:@/".
var plainPath = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~!$&()*+,;=:@/" {
		t[c] = true
	}
	return t
}()

// fastDots removes dot segments from an absolute path (RFC 3986 5.2.4,
// which is what the Standard's path state does for a path without
// percent-encoded dots).
func fastDots(path string) (string, bool) {
	if path == "" || path[0] != '/' {
		return "", false
	}
	if !strings.Contains(path, "/.") {
		return path, true
	}
	segs := strings.Split(path[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/"), true
}
