// Package robots parses robots.txt files and answers whether a crawler may
// fetch a URL, following RFC 9309 (the Robots Exclusion Protocol):
//
//   - rules are grouped under one or more user-agent lines; all groups naming
//     the crawler's product token (case-insensitively) are merged, and the "*"
//     groups are used only when none names it; rules before the first
//     user-agent line belong to no group and are ignored;
//   - the most specific (longest) matching rule wins, and allow wins a tie;
//     "*" matches any run of characters and a final "$" anchors the end;
//   - percent-encoded octets of unreserved characters are decoded, hex digits
//     are compared case-insensitively and characters that must be encoded
//     (non-ASCII, spaces) are encoded before comparing, so /%7Ea, /~a and
//     /%7ea are one path;
//   - /robots.txt itself is always allowed;
//   - at least MaxSize bytes are parsed, lines end in LF, CR or CRLF, and
//     common misspellings of the keys are accepted, as major crawlers do; a
//     UTF-8 byte-order mark, whole or cut short, is skipped.
//
// Google's robots.txt test suite is kept as data in google_test.go; the
// cases where this package answers otherwise on purpose (RFC 9309
// percent-encoding, Google's own extensions) are listed there with reasons.
//
// FromStatus maps the outcome of fetching robots.txt: success parses the
// body, 4xx (except 429) allows everything, 5xx, 429 and unreachable servers
// disallow everything. The fetcher follows up to MaxRedirects redirects and
// treats more as 4xx.
//
// Crawl-delay, a common extension outside the RFC, is kept per group.
//
// Why our own code: the Go ports of Google's matcher (jimsmart/grobotstxt)
// and temoto/robotstxt are not available from the module proxy this project
// builds with; the RFC's algorithm is short.
package robots

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// MaxSize is how much of a robots.txt is parsed (RFC 9309 asks for at least
// 500 KiB); the rest is ignored.
const MaxSize = 512 << 10

// MaxRedirects is how many redirects a fetcher follows for robots.txt
// before treating the file as unavailable (RFC 9309, section 2.3.1.2).
const MaxRedirects = 5

// Robots is a parsed robots.txt.
type Robots struct {
	groups   []group
	sitemaps []string
	all      *bool // allow-all or disallow-all without a file
}

type group struct {
	agents     []string // lower-case product tokens, "*" for any
	rules      []rule
	delay      time.Duration
	hasDelay   bool
	agentsOpen bool // still reading this group's user-agent lines
}

type rule struct {
	allow   bool
	pattern string // normalised
	plain   bool   // no '*' and no final '$': a prefix test
}

// AllowAll returns robots that allow every URL (no robots.txt, 4xx).
func AllowAll() *Robots { t := true; return &Robots{all: &t} }

// DisallowAll returns robots that forbid every URL (5xx, unreachable).
func DisallowAll() *Robots { f := false; return &Robots{all: &f} }

// FromStatus returns the robots for a robots.txt fetch that ended with
// HTTP status code (after redirects); body is used only for 2xx. Status 0
// means the server was unreachable.
func FromStatus(status int, body []byte) *Robots {
	switch {
	case status >= 200 && status < 300:
		return Parse(body)
	case status == 429, status >= 500, status == 0:
		return DisallowAll()
	case status >= 400:
		return AllowAll()
	default: // 1xx, or a 3xx that was not followed: unavailable
		return AllowAll()
	}
}

// Parse parses the first MaxSize bytes of a robots.txt. It never fails: lines
// it does not understand are skipped, as the RFC asks.
func Parse(body []byte) *Robots {
	if len(body) > MaxSize {
		body = body[:MaxSize]
		// Drop a line cut in the middle.
		if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
			body = body[:i]
		}
	}
	r := &Robots{}
	var cur *group
	scan(body, func(_ int, k key, value string) {
		switch k {
		case keyUserAgent:
			if cur == nil || !cur.agentsOpen {
				r.groups = append(r.groups, group{agentsOpen: true})
				cur = &r.groups[len(r.groups)-1]
			}
			cur.agents = append(cur.agents, agentToken(value))
		case keyAllow, keyDisallow:
			if cur == nil {
				return // before any user-agent line: belongs to no group
			}
			cur.agentsOpen = false
			if value == "" {
				return // "Disallow:" with no path allows everything: no rule
			}
			p := normalize(value)
			cur.rules = append(cur.rules, rule{
				allow:   k == keyAllow,
				pattern: p,
				plain:   !strings.ContainsAny(p, "*$"),
			})
		case keyCrawlDelay:
			if cur == nil {
				return
			}
			cur.agentsOpen = false
			if d, err := strconv.ParseFloat(value, 64); err == nil && d >= 0 && d < 1e6 {
				cur.delay = time.Duration(d * float64(time.Second))
				cur.hasDelay = true
			}
		case keySitemap:
			r.sitemaps = append(r.sitemaps, value)
		default:
			// Unknown keys (Host, Clean-param, ...) neither open nor close a group.
		}
	})
	return r
}

// utf8BOM is the UTF-8 byte-order mark.
const utf8BOM = "\xEF\xBB\xBF"

// scan calls fn for each line of body (numbered from 1) that has a key and a
// value, keyUnknown for a key it does not know. A UTF-8 byte-order mark at
// the start is skipped, and so is a cut one ("\xEF\xBB", "\xEF"), as
// Google's parser does, so an editor's stray bytes do not cost the first
// line.
func scan(body []byte, fn func(line int, k key, value string)) {
	for i := 0; i < len(utf8BOM) && len(body) > 0 && body[0] == utf8BOM[i]; i++ {
		body = body[1:]
	}
	for n := 1; len(body) > 0; n++ {
		var line []byte
		i := bytes.IndexAny(body, "\r\n")
		switch {
		case i < 0:
			line, body = body, nil
		case body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n':
			line, body = body[:i], body[i+2:] // CRLF is one line end
		default:
			line, body = body[:i], body[i+1:]
		}
		if k, v, ok := splitLine(line); ok {
			fn(n, k, v)
		}
	}
}

type key int

const (
	keyUnknown key = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keyCrawlDelay
	keySitemap
)

// splitLine returns a line's key and value with the comment removed, and
// false for a line with neither (blank, a comment, one word). Like Google's
// parser it accepts "key value" without a colon when the line has exactly two
// words.
func splitLine(line []byte) (key, string, bool) {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return keyUnknown, "", false
	}
	var k, v []byte
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		k, v = line[:i], line[i+1:]
	} else {
		f := bytes.Fields(line)
		if len(f) != 2 {
			return keyUnknown, "", false
		}
		k, v = f[0], f[1]
	}
	k = bytes.TrimSpace(k)
	return keyOf(strings.ToLower(string(k))), string(bytes.TrimSpace(v)), true
}

func keyOf(k string) key {
	switch k {
	case "user-agent", "useragent", "user agent", "user_agent":
		return keyUserAgent
	case "allow":
		return keyAllow
	case "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw":
		return keyDisallow
	case "crawl-delay", "crawldelay", "crawl delay", "crawl_delay":
		return keyCrawlDelay
	case "sitemap", "site-map":
		return keySitemap
	}
	return keyUnknown
}

// agentToken returns the product token of a user-agent value, lower case:
// the leading run of letters, '-' and '_' ("Googlebot/2.1" is "googlebot").
// "*" stands for every crawler.
func agentToken(v string) string {
	if strings.HasPrefix(v, "*") {
		return "*"
	}
	i := 0
	for i < len(v) {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			break
		}
		i++
	}
	return strings.ToLower(v[:i])
}

// ProductToken returns the token a crawler's User-Agent header is matched
// by: "crawlkit/0.1 (+https://x)" gives "crawlkit".
func ProductToken(userAgent string) string { return agentToken(strings.TrimSpace(userAgent)) }

// Sitemaps returns the Sitemap URLs the file lists.
func (r *Robots) Sitemaps() []string { return r.sitemaps }

// Group returns the rules that apply to the crawler whose User-Agent or
// product token is agent: the merged groups naming it, else the merged "*"
// groups, else no rules.
func (r *Robots) Group(agent string) *Group {
	g := &Group{all: r.all}
	if r.all != nil {
		return g
	}
	token := ProductToken(agent)
	pick := func(want string) bool {
		found := false
		for i := range r.groups {
			gr := &r.groups[i]
			for _, a := range gr.agents {
				if a == want {
					found = true
					g.rules = append(g.rules, gr.rules...)
					if gr.hasDelay && (!g.hasDelay || gr.delay > g.delay) {
						g.delay, g.hasDelay = gr.delay, true
					}
					break
				}
			}
		}
		return found
	}
	if token == "" || token == "*" || !pick(token) {
		pick("*")
	}
	return g
}

// Allowed reports whether agent may fetch the URL whose path and query are
// pathQuery ("/a/b?c=d"; "" means "/"). A convenience for Group(agent).Allowed.
func (r *Robots) Allowed(agent, pathQuery string) bool {
	return r.Group(agent).Allowed(pathQuery)
}

// A Group is the set of rules that applies to one crawler.
type Group struct {
	rules    []rule
	delay    time.Duration
	hasDelay bool
	all      *bool
}

// CrawlDelay returns the Crawl-delay of the group, if it sets one.
func (g *Group) CrawlDelay() (time.Duration, bool) { return g.delay, g.hasDelay }

// Allowed reports whether the path and query (as in the request line,
// percent-encoded as the URL has it) may be fetched.
func (g *Group) Allowed(pathQuery string) bool {
	if pathQuery == "" {
		pathQuery = "/"
	}
	if pathQuery == "/robots.txt" {
		return true
	}
	if g.all != nil {
		return *g.all
	}
	if len(g.rules) == 0 {
		return true
	}
	p := normalize(pathQuery)
	best, allowed := -1, true
	for i := range g.rules {
		ru := &g.rules[i]
		if len(ru.pattern) < best || len(ru.pattern) == best && !ru.allow {
			continue // cannot beat the current winner
		}
		var ok bool
		if ru.plain {
			ok = strings.HasPrefix(p, ru.pattern)
		} else {
			ok = match(p, ru.pattern)
		}
		if ok {
			if len(ru.pattern) > best || ru.allow {
				best, allowed = len(ru.pattern), ru.allow
			}
		}
	}
	return allowed
}

// match reports whether pattern, with '*' for any run of bytes and a final
// '$' for the end, matches a prefix of path. It tracks the set of path
// offsets reachable so far, so it runs in O(len(path)*len(pattern)) with no
// backtracking blow-up.
func match(path, pattern string) bool {
	var buf [64]int
	pos := append(buf[:0], 0)
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '$' && i == len(pattern)-1:
			return pos[len(pos)-1] == len(path)
		case c == '*':
			lo := pos[0]
			pos = pos[:0]
			for p := lo; p <= len(path); p++ {
				pos = append(pos, p)
			}
		default:
			n := 0
			for _, p := range pos {
				if p < len(path) && path[p] == c {
					pos[n] = p + 1
					n++
				}
			}
			if n == 0 {
				return false
			}
			pos = pos[:n]
		}
	}
	return true
}

// normalize brings a path pattern or a path to the RFC 9309 comparison form:
// %XX of an unreserved character is decoded, other %XX get upper-case hex,
// and bytes that cannot appear raw in a URL (non-ASCII, controls, space) are
// percent-encoded. '*' and '$' are left alone.
func normalize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || c <= ' ' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	const hexdig = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b = append(b, v)
			} else {
				b = append(b, '%', upper(s[i+1]), upper(s[i+2]))
			}
			i += 2
		case c <= ' ' || c >= 0x7f:
			b = append(b, '%', hexdig[c>>4], hexdig[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
