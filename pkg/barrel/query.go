package barrel

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// QueryError is a query whose syntax cannot be searched: an unbalanced
// quote, an OR with nothing on one side, a query of only exclusions.
type QueryError struct{ Msg string }

func (e *QueryError) Error() string { return "query: " + e.Msg }

// QuerySyntaxHelp is the one-line summary of the query syntax, for help
// texts and the search page.
const QuerySyntaxHelp = `"exact phrase", -word to exclude, site:host, a OR b`

// syntax is a query's parts: the text whose words are searched and
// scored, and what filters the matches.
type syntax struct {
	text    string     // the words to search, the phrases' included
	phrases []string   // each must appear as written (word after word)
	minus   []string   // a page holding one of these is left out
	sites   []string   // a page must be on one of these hosts (or under)
	or      [][]string // groups of words any one of which satisfies the group
}

// parseSyntax splits a query into its parts. Words are separated by
// spaces; a '"' opens and closes a phrase; a word or phrase led by '-' is
// excluded; "site:" leads a host; an upper-case OR between two words
// makes them alternatives. Anything else is a word, as before.
func parseSyntax(q string) (*syntax, error) {
	s := &syntax{}
	var words []string
	type tok struct {
		text   string
		phrase bool
		minus  bool
	}
	var toks []tok
	rest := q
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		minus := false
		if len(rest) > 1 && rest[0] == '-' && !unicode.IsSpace(rune(rest[1])) && rest[1] != '-' {
			minus, rest = true, rest[1:]
		}
		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, &QueryError{fmt.Sprintf("unbalanced quote: %s has no closing \"", rest)}
			}
			p := strings.TrimSpace(rest[1 : 1+end])
			if !hasWord(p) {
				return nil, &QueryError{"an empty phrase (\"\")"}
			}
			toks = append(toks, tok{p, true, minus})
			rest = rest[2+end:]
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			end = len(rest)
		}
		w := rest[:end]
		rest = rest[end:]
		if host, ok := strings.CutPrefix(w, "site:"); ok && !minus {
			h := siteHost(host)
			if h == "" {
				return nil, &QueryError{"site: needs a host (site:docs.python.org)"}
			}
			s.sites = append(s.sites, h)
			continue
		}
		toks = append(toks, tok{w, false, minus})
	}
	// OR joins the words on each side of it into one group.
	var group []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.text == "OR" && !t.phrase && !t.minus {
			if len(group) == 0 && (i == 0 || toks[i-1].phrase || toks[i-1].minus || !hasWord(toks[i-1].text)) {
				return nil, &QueryError{"OR needs a word before it"}
			}
			if i+1 >= len(toks) || toks[i+1].text == "OR" || toks[i+1].phrase || toks[i+1].minus || !hasWord(toks[i+1].text) {
				return nil, &QueryError{"OR needs a word after it"}
			}
			if len(group) == 0 {
				group = append(group, toks[i-1].text)
			}
			group = append(group, toks[i+1].text)
			words = append(words, toks[i+1].text)
			i++
			continue
		}
		if len(group) > 0 {
			s.or = append(s.or, group)
			group = nil
		}
		switch {
		case t.minus:
			s.minus = append(s.minus, t.text)
		case t.phrase:
			s.phrases = append(s.phrases, t.text)
			words = append(words, t.text)
		default:
			words = append(words, t.text)
		}
	}
	if len(group) > 0 {
		s.or = append(s.or, group)
	}
	s.text = strings.Join(words, " ")
	if !hasWord(s.text) {
		switch {
		case len(s.minus) > 0:
			return nil, &QueryError{"only excluded words: say what to search for besides -" + s.minus[0]}
		case len(s.sites) > 0:
			return nil, &QueryError{"only site:" + s.sites[0] + ": say what to search for on it"}
		}
	}
	return s, nil
}

func hasWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// siteHost is the host of a site: operand, lower-cased, with a scheme or
// path the user pasted dropped.
func siteHost(s string) string {
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			s = u.Host
		}
	}
	s, _, _ = strings.Cut(s, "/")
	return strings.TrimSuffix(strings.ToLower(s), ".")
}

// onSite reports whether rawURL's host is host or under it; a host given
// with a port must match it.
func onSite(rawURL string, hosts []string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	for _, h := range hosts {
		got := strings.ToLower(u.Hostname())
		if strings.Contains(h, ":") {
			got = strings.ToLower(u.Host)
		}
		if got == h || strings.HasSuffix(got, "."+h) {
			return true
		}
	}
	return false
}
