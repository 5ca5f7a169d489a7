package sekitei

import (
	"sort"
	"strings"

	"github.com/sekitei/crawlkit/pkg/urlx"
)

// Subject returns the text a segment regex is matched against: the URL's
// path as written (percent-escapes kept, "/" when empty) followed by "?" and
// the raw query when the URL has one. Host, scheme and fragment are left out:
// segments are cut within one site. Lines of Subject output are what the
// grep -P test feeds to PCRE.
func Subject(rawURL string) (string, error) {
	p, err := urlx.Split(rawURL)
	if err != nil {
		return "", err
	}
	return subjectOf(p), nil
}

func subjectOf(p urlx.Parts) string {
	path := p.Path
	if path == "" {
		path = "/"
	}
	if p.HasQuery {
		return path + "?" + p.RawQuery
	}
	return path
}

// shapeOf is a subject cut into what the regex builder generalises over.
type shapeOf struct {
	segs     []string // non-empty path segments, as written
	trail    bool     // path ends with "/" (the root "/" included)
	hasQuery bool
	query    string
}

func parseSubject(s string) shapeOf {
	var sh shapeOf
	path := s
	if i := strings.IndexByte(s, '?'); i >= 0 {
		path, sh.query, sh.hasQuery = s[:i], s[i+1:], true
	}
	sh.trail = strings.HasSuffix(path, "/")
	for _, seg := range strings.Split(path, "/") {
		if seg != "" {
			sh.segs = append(sh.segs, seg)
		}
	}
	return sh
}

// buildRegex returns an anchored PCRE over the subjects of a cluster's
// members, built from what they share, the way the lecture writes segments:
// a path position all members agree on is a literal, one where they are all
// digits is [0-9]+, a shared namespace prefix ("File:") or extension (".jpg")
// is kept around [^/?]+, and the query is kept as parameter names when every
// member has the same ones. It also returns a specificity score (literal
// bytes and constrained positions), which orders the segments: the more
// specific regex is tried first.
func buildRegex(subjects []string) (string, int) {
	shapes := make([]shapeOf, len(subjects))
	minN, maxN := -1, 0
	trails, queries := 0, 0
	for i, s := range subjects {
		shapes[i] = parseSubject(s)
		n := len(shapes[i].segs)
		if minN < 0 || n < minN {
			minN = n
		}
		if n > maxN {
			maxN = n
		}
		if shapes[i].trail {
			trails++
		}
		if shapes[i].hasQuery {
			queries++
		}
	}
	var b strings.Builder
	score := 0
	b.WriteString("^")
	vals := make([]string, len(shapes))
	for pos := 0; pos < minN; pos++ {
		for i := range shapes {
			vals[i] = shapes[i].segs[pos]
		}
		b.WriteByte('/')
		score += 1 + generalise(&b, vals, "[^/?]")
	}
	if maxN > minN {
		b.WriteString("(?:/[^/?]+)*")
	}
	switch {
	case trails == len(shapes):
		b.WriteByte('/')
		score++
	case trails > 0:
		b.WriteString("/?")
	}
	switch {
	case queries == len(shapes):
		b.WriteString(`\?`)
		score += 1 + queryRegex(&b, shapes)
	case queries > 0:
		b.WriteString(`(?:\?.*)?`)
	default:
		score++ // no query allowed: a constraint too
	}
	b.WriteString("$")
	return b.String(), score
}

// queryRegex writes the regex of the members' queries: name=value pairs in
// order when all members have the same parameter names, else ".*".
func queryRegex(b *strings.Builder, shapes []shapeOf) int {
	split := make([][]string, len(shapes))
	for i, sh := range shapes {
		split[i] = strings.Split(sh.query, "&")
	}
	same := len(split[0]) <= 8
	for _, ps := range split[1:] {
		if !same || len(ps) != len(split[0]) {
			same = false
			break
		}
		for j := range ps {
			if paramName(ps[j]) != paramName(split[0][j]) || strings.Contains(ps[j], "=") != strings.Contains(split[0][j], "=") {
				same = false
				break
			}
		}
	}
	if !same {
		return unorderedQueryRegex(b, split)
	}
	score := 0
	vals := make([]string, len(shapes))
	for j, p := range split[0] {
		if j > 0 {
			b.WriteByte('&')
		}
		name := paramName(p)
		b.WriteString(quoteMeta(name))
		score += len(name)
		if !strings.Contains(p, "=") {
			continue
		}
		b.WriteByte('=')
		for i := range split {
			vals[i] = split[i][j][len(name)+1:]
		}
		score += generalise(b, vals, "[^&]")
	}
	return score
}

// unorderedQueryRegex writes the query regex of members whose queries have
// the same parameter names in different orders (the lecture: the order of
// the pairs does not matter on a normal site): one look-ahead per name,
// names sorted, then exactly that many pairs. Other queries give ".*".
func unorderedQueryRegex(b *strings.Builder, split [][]string) int {
	byName := make([]map[string]string, len(split))
	var names []string
	for i, ps := range split {
		byName[i] = map[string]string{}
		for _, p := range ps {
			name := paramName(p)
			if _, dup := byName[i][name]; dup || !strings.Contains(p, "=") || name == "" {
				b.WriteString(".*")
				return 0
			}
			byName[i][name] = p[len(name)+1:]
		}
		if i == 0 {
			for n := range byName[0] {
				names = append(names, n)
			}
			sort.Strings(names)
		}
		if len(byName[i]) != len(names) || len(names) > 8 {
			b.WriteString(".*")
			return 0
		}
		for _, n := range names {
			if _, ok := byName[i][n]; !ok {
				b.WriteString(".*")
				return 0
			}
		}
	}
	score := 0
	vals := make([]string, len(split))
	for _, n := range names {
		b.WriteString("(?=(?:[^&]*&)*")
		b.WriteString(quoteMeta(n))
		b.WriteByte('=')
		for i := range split {
			vals[i] = byName[i][n]
		}
		score += len(n) + generalise(b, vals, "[^&]")
		b.WriteString("(?:&|$))")
	}
	b.WriteString(strings.Repeat("[^&]*&", len(names)-1))
	b.WriteString("[^&]*")
	return score
}

func paramName(p string) string {
	if i := strings.IndexByte(p, '='); i >= 0 {
		return p[:i]
	}
	return p
}

// generalise writes one regex token that matches every value in vals, with
// class the character class of "any character of this position" (without
// its quantifier). It returns the number of literal bytes kept.
func generalise(b *strings.Builder, vals []string, class string) int {
	first := vals[0]
	same := true
	for _, v := range vals[1:] {
		if v != first {
			same = false
			break
		}
	}
	if same {
		b.WriteString(quoteMeta(first))
		return len(first)
	}
	prefix := wordBeforeNumber(vals)
	if prefix == "" {
		prefix = cutPrefix(commonPrefix(vals))
	}
	rest := make([]string, len(vals))
	for i, v := range vals {
		rest[i] = v[len(prefix):]
	}
	suffix := cutSuffix(commonSuffix(rest))
	digits, empty := true, false
	for i := range rest {
		mid := rest[i][:len(rest[i])-len(suffix)]
		if mid == "" {
			empty = true
		}
		if !allDigits(mid) {
			digits = false
		}
	}
	b.WriteString(quoteMeta(prefix))
	switch {
	case digits && !empty:
		b.WriteString("[0-9]+")
	case empty:
		b.WriteString(class + "*")
	default:
		b.WriteString(class + "+")
	}
	b.WriteString(quoteMeta(suffix))
	n := len(prefix) + len(suffix)
	if digits && !empty {
		n++
	}
	return n
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func commonPrefix(vals []string) string {
	p := vals[0]
	for _, v := range vals[1:] {
		n := 0
		for n < len(p) && n < len(v) && p[n] == v[n] {
			n++
		}
		p = p[:n]
	}
	return p
}

func commonSuffix(vals []string) string {
	s := vals[0]
	for _, v := range vals[1:] {
		n := 0
		for n < len(s) && n < len(v) && s[len(s)-1-n] == v[len(v)-1-n] {
			n++
		}
		s = s[len(s)-n:]
	}
	return s
}

// A shared prefix is kept only up to and including its last separator, so
// that "File:" survives from "File:A.jpg" and "File:B.jpg" but "Ab" does not
// from "Abc" and "Abd": a namespace, not a coincidence of spelling.
func cutPrefix(p string) string {
	i := strings.LastIndexAny(p, ":_-~,;=+")
	if i < 1 {
		return ""
	}
	return p[:i+1]
}

// wordBeforeNumber returns the shared text before a number that all values
// end with ("krapiv" of "krapiv7" and "krapiv12"), or "".
func wordBeforeNumber(vals []string) string {
	p := strings.TrimRight(commonPrefix(vals), "0123456789")
	if p == "" {
		return ""
	}
	for _, v := range vals {
		if !allDigits(v[len(p):]) {
			return ""
		}
	}
	return p
}

// A shared suffix is kept from its first separator on (".jpg", "_print.htm").
func cutSuffix(s string) string {
	i := strings.IndexAny(s, "._-~")
	if i < 0 || i == len(s)-1 {
		return ""
	}
	return s[i:]
}

// quoteMeta escapes the characters that are special in PCRE (and in
// regexp2, which follows Perl); the result means the same in both.
func quoteMeta(s string) string {
	const special = `\.+*?()|[]{}^$`
	if !strings.ContainsAny(s, special) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(special, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

type splitParts struct {
	host, subject string
}

// splitURL returns a URL's normalised host and its Subject.
func splitURL(rawURL string) (splitParts, error) {
	p, err := urlx.Split(rawURL)
	if err != nil {
		return splitParts{}, err
	}
	return splitParts{urlx.NormalizeHost(p.Scheme, p.Host), subjectOf(p)}, nil
}
