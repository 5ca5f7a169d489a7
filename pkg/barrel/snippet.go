package barrel

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
)

// SnippetWords is the length of a snippet in words.
const SnippetWords = 30

// A snippet is the first window of SnippetWords words, starting four
// words before a query word, that holds the most distinct query words of
// the page's body; it stops at a window holding all of them. It is found
// from the positions of the query words' plain hits, which the search has
// read already, and cut from the page's stored text (textstore.go). When
// a hit's position is past what a plain hit can say (hit.MaxPlainPos) and
// the window is not settled before it, the stored words past it say where
// the query words are. Only a page indexed before text was stored (an
// index of format 3) is parsed again. The words past maxTextWords of a
// page are not shown.

// snippetWord is a word of a snippet with the text before it, spaces
// collapsed.
type snippetWord struct{ gap, word []byte }

// keyAt is a query word (its index among the keys) at a word position.
type keyAt struct{ pos, key int32 }

// Snippet returns a passage of doc's text around the query words (their
// terms), with the words marked <b>like this</b>.
func (idx *Index) Snippet(doc uint32, keys []string) (string, error) {
	return idx.snippetParsed(doc, keys, len(keys))
}

// snippet is Snippet for a search result: lists are the keys' hit lists in
// doc, textRef its docinfo's reference to its stored text.
func (idx *Index) snippet(doc uint32, keys []string, lists [][]byte, textRef uint64) (string, error) {
	most := bodyKeys(lists)
	if textRef == 0 || idx.m.Text == 0 || !storedSnippets {
		return idx.snippetParsed(doc, keys, most)
	}
	if err := idx.views(); err != nil {
		return "", err
	}
	var at []keyAt
	clamped := false
	for k, l := range lists {
		for j := range len(l) / 2 {
			h := hit.At(l, j)
			if h.IsFancy() {
				continue
			}
			if p := h.Pos(); p < hit.MaxPlainPos {
				at = append(at, keyAt{int32(p), int32(k)})
			} else {
				clamped = true
			}
		}
	}
	slices.SortFunc(at, func(a, b keyAt) int { return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.key, b.key)) })
	start, held := snippetWindow(at, most)
	t, err := readTextAt(idx.text, int64(textRef-1), idx.m.Text)
	if err != nil {
		return "", err
	}
	// With a hit past hit.MaxPlainPos, the first window holding every
	// word may lie past it, unless one is found before: the stored words
	// there say where the query words are.
	if clamped && (held < most || start+SnippetWords > hit.MaxPlainPos) {
		tail, err := t.tailKeys(keys)
		if err != nil {
			return "", err
		}
		at = append(at, tail...)
		start, held = snippetWindow(at, most)
	}
	if held < 0 {
		start = 0
	}
	end := min(t.stored, start+SnippetWords)
	if start >= end {
		return "", nil
	}
	words, err := t.span(start, end)
	if err != nil {
		return "", err
	}
	return renderSnippet(words, start, at, end < t.words), nil
}

// storedSnippets cuts snippets from the stored text (off only in the
// tests that compare it with parsing the page).
var storedSnippets = true

// snippetParsed makes the snippet by parsing doc's stored page; most is
// the number of keys its body holds (a window holding them all ends the
// search).
func (idx *Index) snippetParsed(doc uint32, keys []string, most int) (string, error) {
	u, body, err := idx.Page(doc)
	if err == ErrNotFetched {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	d := htmldoc.Doc{Analyzer: idx.analyzers.Get().(*analysis.Analyzer)}
	defer idx.analyzers.Put(d.Analyzer)
	base, _ := url.Parse(u)
	// The first window holding every query word of the body is most
	// often near the start: look there first, and parse the whole page
	// only when it is not, or when the window runs past what was parsed.
	// The answer is the same.
	d.MaxWords = snippetPrefixWords
	d.Parse(body, base)
	at := parsedKeys(&d, keys)
	start, held := snippetWindow(at, most)
	found := held >= most && start+SnippetWords <= len(d.Words) || most == 0
	// A window ending at the last word parsed needs the rest to say
	// whether the page goes on.
	if d.Truncated && (!found || start+SnippetWords >= len(d.Words)) {
		d.MaxWords = 0
		d.Parse(body, base)
		at = parsedKeys(&d, keys)
		start, held = snippetWindow(at, most)
	}
	if held < 0 {
		start = 0
	}
	end := min(len(d.Words), start+SnippetWords)
	if start >= end {
		return "", nil
	}
	words := make([]snippetWord, 0, end-start)
	for j := start; j < end; j++ {
		w := &d.Words[j]
		var gap []byte
		if j > 0 {
			gap = appendCollapsed(nil, d.Text[d.Words[j-1].End:w.Start])
		}
		words = append(words, snippetWord{gap, d.Text[w.Start:w.End]})
	}
	return renderSnippet(words, start, at, end < len(d.Words) || d.Truncated), nil
}

// snippetPrefixWords is how much of a page a parsed snippet looks at first
// (0: all of it).
var snippetPrefixWords = 2000

// parsedKeys lists the query words of a parsed page in word order: a word
// is key k if its term is, or if it begins an identifier whose whole is
// (as the index's hits say).
func parsedKeys(d *htmldoc.Doc, keys []string) []keyAt {
	var at []keyAt
	for j := range d.Words {
		w := &d.Words[j]
		key, whole := d.Key(w), d.Whole(w)
		for k, q := range keys {
			if string(key) == q || whole != nil && string(whole) == q {
				at = append(at, keyAt{int32(j), int32(k)})
			}
		}
	}
	return at
}

// snippetWindow finds, over the query words at their positions (in
// order), the first window of SnippetWords words starting four words
// before one of them with the most distinct query words, stopping at one
// holding most: its start and that number (-1 if there is no query word).
func snippetWindow(at []keyAt, most int) (start, held int) {
	held = -1
	var seen []int32
	for i := 0; i < len(at); i++ {
		if i > 0 && at[i].pos == at[i-1].pos {
			continue
		}
		s := max(0, at[i].pos-4)
		seen = seen[:0]
		for j := i; j < len(at) && at[j].pos < s+SnippetWords; j++ {
			if !slices.Contains(seen, at[j].key) {
				seen = append(seen, at[j].key)
			}
		}
		// Words of the window before at[i]: within 4 words of it.
		for j := i - 1; j >= 0 && at[j].pos >= s; j-- {
			if !slices.Contains(seen, at[j].key) {
				seen = append(seen, at[j].key)
			}
		}
		if len(seen) > held {
			start, held = int(s), len(seen)
		}
		if held >= most {
			break
		}
	}
	return start, held
}

// renderSnippet writes words (the first at position start) with the query
// words (at, in order) in <b>, "..." where the page goes on before or
// after.
func renderSnippet(words []snippetWord, start int, at []keyAt, more bool) string {
	marked := func(j int) bool {
		_, ok := slices.BinarySearchFunc(at, int32(j), func(a keyAt, p int32) int { return cmp.Compare(a.pos, p) })
		return ok
	}
	var sb strings.Builder
	if start > 0 {
		sb.WriteString("... ")
	}
	for i, w := range words {
		if i > 0 {
			sb.Write(w.gap)
		}
		if marked(start + i) {
			sb.WriteString("<b>")
			sb.Write(w.word)
			sb.WriteString("</b>")
		} else {
			sb.Write(w.word)
		}
	}
	if more {
		sb.WriteString(" ...")
	}
	return strings.ToValidUTF8(sb.String(), "")
}

// bodyKeys counts the query words whose hit lists hold a plain hit: the
// words of the page's body text.
func bodyKeys(lists [][]byte) int {
	n := 0
	for _, l := range lists {
		for j := range len(l) / 2 {
			if !hit.At(l, j).IsFancy() {
				n++
				break
			}
		}
	}
	return n
}

// appendCollapsed appends b to dst with each run of white space made one
// space.
func appendCollapsed(dst, b []byte) []byte {
	inSpace := false
	for _, c := range b {
		if isSpace(c) {
			if !inSpace {
				dst = append(dst, ' ')
			}
			inSpace = true
			continue
		}
		dst = append(dst, c)
		inSpace = false
	}
	return dst
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}
