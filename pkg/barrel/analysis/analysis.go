// Package analysis turns text into the terms barrel indexes and searches:
// words are case-folded (Unicode full case folding, so "Straße" and
// "STRASSE" meet), ё is folded to е, and each word is stemmed by its
// script with the Snowball stemmers of github.com/kljensen/snowball
// (Cyrillic words with the Russian one, Latin words with the English one;
// words of other or mixed scripts are kept as folded). Identifiers joined
// by '_' or '.' ("PyObject_Size", "os.path.join") give their parts, each
// analysed as a word, and the whole, folded but not stemmed, at the
// position of the first part, so a query for the whole or for a part
// finds them. An English clitic after an apostrophe (' or ’) stays with its
// word: "What’s" is the term "what" (the stemmer drops a possessive or
// "is" 's), "don't" the term "don't", and neither leaves a word "s" or "t"
// (which would otherwise match the query "S", re.S, on every page that
// says "What’s New").
//
// Stop words are terms like any other (phrases need them); Token.Stop marks
// them so that a query can make them optional.
//
// The indexer and the searcher must analyse alike: an index records the
// analysis that built it (ID), and an index built with another is refused.
// Change Version whenever a term the analysis produces may change.
package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/russian"
	"golang.org/x/text/cases"
)

// Name and Version identify the analysis recorded in an index.
const (
	Name = "fold-yo-snowball-ru-en-ident"
	// 2: clitics after an apostrophe stay with their word; the index adds
	// the exact forms of defined words (DefForm)
	Version = 2
)

// FormPrefix leads the term of a word's exact form (DefForm); no term of
// the analysis starts with it.
const FormPrefix = "="

// MaxTermLen is the longest term kept, in bytes; longer words are cut.
const MaxTermLen = 48

// Options change the analysis.
type Options struct {
	// NoStem skips stemming (for measuring what stemming brings; an index
	// built so records a different ID).
	NoStem bool
}

// ID is the analysis's name and version as recorded in an index.
func ID(opt Options) string {
	id := Name
	if opt.NoStem {
		id += "-nostem"
	}
	return id + "/" + itoa(Version)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// Token is one term of a text.
type Token struct {
	Start, End int    // its bytes in the text
	Term       []byte // the term; valid only during the callback
	Capital    bool   // the word starts with a capital letter
	Stop       bool   // a stop word
	// Whole marks an identifier's whole ("os.path.join"): it sits at the
	// position of the part that follows it and does not take one itself.
	Whole bool
}

type entry struct {
	term string
	stop bool
}

// Analyzer analyses text. It caches the terms of the words it has seen
// (stemming is the costly part), so it is not safe for concurrent use:
// give each goroutine its own.
type Analyzer struct {
	opt    Options
	cache  *wordCache
	lower  [inlineMax]byte
	folder cases.Caser
	buf    []byte
}

// New returns an analyzer.
func New(opt Options) *Analyzer {
	return &Analyzer{opt: opt, cache: newWordCache(), folder: cases.Fold()}
}

// ID is the ID of a's analysis.
func (a *Analyzer) ID() string { return ID(a.opt) }

// Terms returns the terms of s in order (identifier wholes before their
// first part).
func (a *Analyzer) Terms(s string) []string {
	var out []string
	a.Tokens([]byte(s), func(t Token) { out = append(out, string(t.Term)) })
	return out
}

// Tokens calls fn for each term of text in order. Words are runs of
// letters, digits and marks; runs joined by '_' or by '.' between word
// characters form an identifier.
func (a *Analyzer) Tokens(text []byte, fn func(Token)) {
	i := 0
	for i < len(text) {
		n := wordAt(text, i)
		if n == 0 {
			if c := text[i]; c == '_' {
				if e := identEnd(text, i, 0); e > i+1 {
					a.ident(text, i, e, fn)
					i = e
					continue
				}
			}
			_, sz := utf8.DecodeRune(text[i:])
			i += sz
			continue
		}
		if e := identEnd(text, i, n); e > i+n {
			a.ident(text, i, e, fn)
			i = cliticEnd(text, e) // an identifier's "'s" says nothing more
			continue
		}
		e := cliticEnd(text, i+n)
		a.word(text, i, e, fn)
		i = e
	}
}

// clitics are the English clitics written after an apostrophe: "it's",
// "don't", "they're", "we've", "you'll", "I'd", "I'm".
var clitics = []string{"s", "t", "re", "ve", "ll", "d", "m"}

// cliticEnd is the end of the clitic after the word ending at e ("’s" of
// "What’s"), or e when none follows: an apostrophe (' or U+2019) after an
// ASCII letter, then a clitic, in either case, that no other word
// character or apostrophe follows (b's' is a quoted string).
func cliticEnd(text []byte, e int) int {
	if e == 0 || !isASCIILetter(text[e-1]) {
		return e
	}
	j := e
	switch {
	case j < len(text) && text[j] == '\'':
		j++
	case j+2 < len(text) && text[j] == 0xe2 && text[j+1] == 0x80 && text[j+2] == 0x99: // ’
		j += 3
	default:
		return e
	}
	n := wordAt(text, j)
	if n == 0 || n > 2 {
		return e
	}
	var low [2]byte
	for k := range n {
		c := text[j+k]
		if !isASCIILetter(c) {
			return e
		}
		low[k] = c | 0x20
	}
	if k := j + n; k < len(text) && (text[k] == '\'' || k+2 < len(text) && text[k] == 0xe2 && text[k+1] == 0x80 && text[k+2] == 0x99) {
		return e // a quoted string: b's', f't'
	}
	for _, c := range clitics {
		if c == string(low[:n]) {
			return j + n
		}
	}
	return e
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// wordAt is the length of the run of word characters at text[i:].
func wordAt(text []byte, i int) int {
	j := i
	for j < len(text) {
		c := text[j]
		if c < utf8.RuneSelf {
			if !isASCIIWord(c) {
				break
			}
			j++
			continue
		}
		r, n := utf8.DecodeRune(text[j:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !(j > i && unicode.Is(unicode.Mn, r)) {
			break
		}
		j += n
	}
	return j - i
}

// identEnd is the end of the identifier starting at i: word runs and
// underscores, and dots between word runs. It is i plus the first word's
// length when there is no joint. n is that length, wordAt(text, i), which
// the caller knows: each word of a text is scanned once, not twice.
func identEnd(text []byte, i, n int) int {
	j := i + n
	for j < len(text) {
		if n := wordAt(text, j); n > 0 {
			j += n
			continue
		}
		switch text[j] {
		case '_':
			j++
			continue
		case '.':
			if j > i && j+1 < len(text) && wordAt(text, j+1) > 0 && text[j-1] != '.' {
				j++
				continue
			}
		}
		break
	}
	return j
}

// ident emits the whole identifier text[i:e] and then its parts.
func (a *Analyzer) ident(text []byte, i, e int, fn func(Token)) {
	var parts [][2]int
	for j := i; j < e; {
		if n := wordAt(text, j); n > 0 {
			parts = append(parts, [2]int{j, j + n})
			j += n
			continue
		}
		j++
	}
	if len(parts) == 0 {
		return
	}
	// The whole, folded, unless it is its only part.
	if len(parts) > 1 || parts[0] != [2]int{i, e} {
		whole := a.fold(text[i:e])
		fn(Token{Start: i, End: e, Term: clip(whole), Capital: capitalAt(text, parts[0][0]), Whole: true})
	}
	for _, p := range parts {
		a.word(text, p[0], p[1], fn)
	}
}

// word emits the term of the word text[i:e].
func (a *Analyzer) word(text []byte, i, e int, fn func(Token)) {
	// An ASCII word is looked up lower-cased: its case variants share an
	// entry (analyse folds first), so the cache holds fewer and clears
	// less often.
	key := text[i:e]
	digits := false
	if len(key) <= len(a.lower) {
		ascii := true
		digits = true
		for j, c := range key {
			if c >= utf8.RuneSelf {
				ascii, digits = false, false
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			digits = digits && '0' <= c && c <= '9'
			a.lower[j] = c
		}
		if ascii {
			key = a.lower[:len(key)]
		}
	}
	var term []byte
	var stop bool
	if digits {
		// A number is its own term (analyse keeps a word without
		// letters as it is) and is not cached: numbers are many and most
		// are seen once (a site's page numbers), and would push the words
		// worth keeping out of the cache.
		term = key
	} else {
		term, stop = a.cache.lookup(key, a.analyse)
	}
	a.buf = append(a.buf[:0], term...)
	fn(Token{Start: i, End: e, Term: a.buf, Capital: capitalAt(text, i), Stop: stop})
}

// DefForm is the term of a word's exact form: folded (and ’ as '), not
// stemmed, led by FormPrefix. The index adds it beside the term of each
// word a page defines, so that a query's word counts as defined only
// where the page defines that very word: "getcapabilities" and "getcaps"
// stem alike (getcap), as do "iter" and "iterator", but are different
// names. ok is false for a word the analysis does not stem (of another
// script, or with NoStem), whose term is already its exact form.
func (a *Analyzer) DefForm(word []byte) (string, bool) {
	if a.opt.NoStem {
		return "", false
	}
	w := string(clip(a.fold(word)))
	if scriptOf(w) != latin {
		return "", false
	}
	return FormPrefix + strings.ReplaceAll(w, "’", "'"), true
}

// analyse folds and stems one word.
func (a *Analyzer) analyse(raw []byte) entry {
	w := string(clip(a.fold(raw)))
	var stop bool
	switch scriptOf(w) {
	case latin:
		base := w
		if i := strings.IndexAny(w, "'’"); i > 0 { // a word and its clitic (cliticEnd)
			_, n := utf8.DecodeRuneInString(w[i:])
			w, base = w[:i]+"'"+w[i+n:], w[:i]
		}
		stop = english.IsStopWord(base)
		if !a.opt.NoStem {
			w = english.Stem(w, false)
		}
	case cyrillic:
		stop = russian.IsStopWord(w)
		if !a.opt.NoStem {
			w = russian.Stem(w, false)
		}
	}
	return entry{term: w, stop: stop}
}

// fold case-folds b and folds ё to е.
func (a *Analyzer) fold(b []byte) []byte {
	ascii := true
	for _, c := range b {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	out := make([]byte, 0, len(b))
	if ascii {
		for _, c := range b {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			out = append(out, c)
		}
		return out
	}
	out = a.folder.Bytes(b)
	for j := 0; j+1 < len(out); j++ {
		if out[j] == 0xd1 && out[j+1] == 0x91 { // ё (U+0451) to е (U+0435)
			out[j], out[j+1] = 0xd0, 0xb5
		}
	}
	return out
}

type script int

const (
	other script = iota
	latin
	cyrillic
)

// scriptOf is the script of a folded word's letters: latin when they are
// all ASCII letters, cyrillic when they are all Cyrillic, other otherwise
// (digits do not count).
func scriptOf(w string) script {
	s := other
	for _, r := range w {
		var rs script
		switch {
		case 'a' <= r && r <= 'z':
			rs = latin
		case unicode.Is(unicode.Cyrillic, r):
			rs = cyrillic
		case '0' <= r && r <= '9', r == '\'' || r == '’': // digits, a clitic's apostrophe
			continue
		default:
			return other
		}
		if s != other && s != rs {
			return other
		}
		s = rs
	}
	return s
}

func capitalAt(text []byte, i int) bool {
	if c := text[i]; c < utf8.RuneSelf { // most words: no rune to decode
		return 'A' <= c && c <= 'Z'
	}
	r, _ := utf8.DecodeRune(text[i:])
	return unicode.IsUpper(r) || unicode.IsTitle(r)
}

func isASCIIWord(c byte) bool { return asciiWord[c] }

// asciiWord marks the ASCII letters and digits: one load per byte of text,
// where three comparisons cost more in the tokenizer's loop.
var asciiWord = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// clip cuts b to MaxTermLen bytes at a rune boundary.
func clip(b []byte) []byte {
	if len(b) <= MaxTermLen {
		return b
	}
	n := MaxTermLen
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}
