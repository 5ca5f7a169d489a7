// Package directives reads the indexing directives webmasters give robots,
// as Google documents them ("Robots meta tag, data-nosnippet, and
// X-Robots-Tag specifications"): <meta name="robots" content="...">, the
// same meta named after one crawler (<meta name="crawlkit" ...>), and the
// X-Robots-Tag response header, whose values may be for every robot
// ("noindex, nofollow") or for one ("crawlkit: noindex"). Directives for
// other robots are ignored; those that apply are combined, the most
// restrictive winning, and "none" means noindex and nofollow.
//
// The fetcher writes the result as the record field "robots"; an indexer
// skips a page whose list has "noindex", and a crawl loop does not follow
// the links of one with "nofollow".
package directives

import (
	"sort"
	"strings"
)

// The directives this package reports.
const (
	NoIndex      = "noindex"
	NoFollow     = "nofollow"
	NoArchive    = "noarchive"
	NoSnippet    = "nosnippet"
	NoImageIndex = "noimageindex"
	NoTranslate  = "notranslate"
)

// known are the directive names of the specification; a value whose first
// word before ':' is one of them is a directive, not a robot's name.
var known = map[string]bool{
	"all": true, "none": true, NoIndex: true, NoFollow: true, NoArchive: true, NoSnippet: true,
	NoImageIndex: true, NoTranslate: true, "indexifembedded": true, "nocache": true,
	"unavailable_after": true, "max-snippet": true, "max-image-preview": true, "max-video-preview": true,
	"index": true, "follow": true, "noodp": true, "noydir": true,
}

// reported are the directives kept in a Set's List.
var reported = map[string]bool{NoIndex: true, NoFollow: true, NoArchive: true, NoSnippet: true,
	NoImageIndex: true, NoTranslate: true}

// A Set collects the directives that apply to one robot. The zero value is
// not usable: make one with For.
type Set struct {
	agent string
	on    map[string]bool
}

// For returns an empty Set for the robot whose product token is agent
// ("crawlkit"); names compare case-insensitively.
func For(agent string) *Set {
	return &Set{agent: strings.ToLower(strings.TrimSpace(agent)), on: map[string]bool{}}
}

// Meta adds a <meta name content> pair; metas of other names are ignored.
func (s *Set) Meta(name, content string) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name != "robots" && (s.agent == "" || name != s.agent) {
		return
	}
	s.add(content)
}

// Header adds the values of X-Robots-Tag response header fields.
func (s *Set) Header(values []string) {
	for _, v := range values {
		v = strings.TrimSpace(v)
		if i := strings.IndexByte(v, ':'); i > 0 {
			who := strings.ToLower(strings.TrimSpace(v[:i]))
			if !known[who] && !strings.ContainsAny(who, ", ") {
				if who != s.agent {
					continue // for another robot
				}
				v = v[i+1:]
			}
		}
		s.add(v)
	}
}

func (s *Set) add(list string) {
	for _, d := range strings.Split(list, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		if i := strings.IndexByte(d, ':'); i >= 0 {
			d = strings.TrimSpace(d[:i]) // max-snippet: 0, unavailable_after: date
		}
		switch {
		case d == "none":
			s.on[NoIndex], s.on[NoFollow] = true, true
		case reported[d]:
			s.on[d] = true
		}
	}
}

// Has reports whether directive d applies.
func (s *Set) Has(d string) bool { return s.on[d] }

// List returns the directives that apply, sorted; nil if none.
func (s *Set) List() []string {
	if len(s.on) == 0 {
		return nil
	}
	l := make([]string, 0, len(s.on))
	for d := range s.on {
		l = append(l, d)
	}
	sort.Strings(l)
	return l
}

// ParseRefresh reads the content of <meta http-equiv="refresh"> ("5;
// url=/next", "0;URL='x'", "3") as the HTML standard does: the delay in
// seconds and the target as written ("" when the page refreshes itself).
// ok is false when the content is not a refresh.
func ParseRefresh(content string) (delay int, target string, ok bool) {
	s := strings.TrimLeft(content, " \t\n\f\r")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 && (len(s) == 0 || s[0] != '.') {
		return 0, "", false
	}
	for _, c := range s[:i] {
		if delay < 1<<20 {
			delay = delay*10 + int(c-'0')
		}
	}
	s = strings.TrimLeft(s[i:], "0123456789.")
	s = strings.TrimLeft(s, " \t\n\f\r")
	if s == "" {
		return delay, "", true
	}
	if s[0] != ';' && s[0] != ',' {
		return 0, "", false
	}
	s = strings.TrimLeft(s[1:], " \t\n\f\r")
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		rest := strings.TrimLeft(s[3:], " \t\n\f\r")
		if strings.HasPrefix(rest, "=") {
			s = strings.TrimLeft(rest[1:], " \t\n\f\r")
		}
	}
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		s = s[1:]
		if j := strings.IndexByte(s, q); j >= 0 {
			s = s[:j]
		}
	}
	return delay, strings.TrimSpace(s), true
}
