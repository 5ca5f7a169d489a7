package barrel

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

func resultURLs(t *testing.T, idx *Index, q string, n int) []string {
	t.Helper()
	r, err := idx.Search(q, SearchOptions{N: n, NoSnippets: true})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var out []string
	for _, x := range r.Results {
		out = append(out, x.URL)
	}
	return out
}

// The first results do not depend on how many are asked for.
func TestResultsIndependentOfN(t *testing.T) {
	dir := t.TempDir()
	site := synth.New(400, 300, 7)
	buildSynth(t, dir, site, 400)
	idx := open(t, dir)
	checked := 0
	for _, q := range site.Queries(40) {
		five, fifty := resultURLs(t, idx, q, 5), resultURLs(t, idx, q, 50)
		if len(fifty) > 5 {
			checked++
		}
		if !slices.Equal(five, fifty[:min(5, len(fifty))]) {
			t.Errorf("%q: --n 5 gives %q, --n 50 begins %q", q, five, fifty[:min(5, len(fifty))])
		}
	}
	if checked < 20 {
		t.Errorf("only %d queries had more than 5 results", checked)
	}
	// Walking the pages holding every word first answers as walking every
	// page holding one of them.
	var queries []string
	for _, q := range site.Queries(60) {
		queries = append(queries, q, q+" "+strings.Fields(q)[0]+"x") // and with an unknown word
	}
	opt := SearchOptions{N: 10, NoSnippets: true}
	// (the match counts differ: the walks meet different pages)
	noCounts := regexp.MustCompile(`\(\d+ matches`)
	fast := noCounts.ReplaceAllString(byURL(t, idx, queries, opt), "(")
	intersectFirst = false
	defer func() { intersectFirst = true }()
	if slow := noCounts.ReplaceAllString(byURL(t, idx, queries, opt), "("); fast != slow {
		t.Errorf("intersection first:\n%s\nunion:\n%s", fast, slow)
	}
}

// Every page holding the words is scored by its body text, even when more
// than enough pages have them in titles and anchors; pages holding fewer
// of the query's words rank below those holding all (coordination), and a
// natural question with stop words and unknown words still finds pages.
func TestEveryMatchScored(t *testing.T) {
	pages := map[string]string{}
	for i := range 15 {
		u := fmt.Sprintf("http://w.test/%d.html", i)
		pages[u] = fmt.Sprintf(`<html><head><title>Widget news %d</title></head><body><p>More news.</p></body></html>`, i)
	}
	pages["http://w.test/define.html"] = `<html><head><title>Glossary</title></head><body>
<p>A widget is a small gadget. Every widget has a frame; a widget frame holds the widget.</p></body></html>`
	pages["http://w.test/frame.html"] = `<html><head><title>Frames</title></head><body><p>A frame alone.</p></body></html>`
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	got := resultURLs(t, idx, "widget", 20)
	if len(got) != 16 || !slices.Contains(got, "http://w.test/define.html") {
		t.Errorf("widget: %d results %q", len(got), got)
	}
	got = resultURLs(t, idx, "widget frame", 20)
	if len(got) != 17 || got[0] != "http://w.test/define.html" {
		t.Fatalf("widget frame: %q", got)
	}
	got = resultURLs(t, idx, "what is a widget frame in the gadget shop", 20)
	if len(got) == 0 || got[0] != "http://w.test/define.html" {
		t.Errorf("natural question: %q", got)
	}
	r, err := idx.Search("what is a widget frame in the gadget shop", SearchOptions{N: 20, Explain: true, NoSnippets: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(r.Results); i++ {
		if r.Results[i].Explain.Matched > r.Results[i-1].Explain.Matched {
			t.Errorf("result %d holds %d words, after one holding %d", i, r.Results[i].Explain.Matched, r.Results[i-1].Explain.Matched)
		}
	}
	if ex := r.Results[0].Explain; ex.Matched != 3 || ex.Of != 4 {
		t.Errorf("define.html holds %d of %d counted words, want 3 of 4 (widget, frame, gadget; shop unknown)", ex.Matched, ex.Of)
	}
	if !slices.Equal(r.Unknown, []string{"what", "in", "shop"}) {
		t.Errorf("unknown %q", r.Unknown)
	}
}

// Coordination weighs the words a page holds by their idf: for "command
// line option openssl" the one page holding openssl (and option) ranks
// before pages holding more of the words, all common; counting words, as
// coordination did, would put the three-word pages first.
func TestCoordinationByIdf(t *testing.T) {
	pages := map[string]string{}
	for i := range 20 {
		u := fmt.Sprintf("http://c.test/%d.html", i)
		pages[u] = fmt.Sprintf(`<html><head><title>Tool %d</title></head><body><p>The command line of tool %d takes an option.</p></body></html>`, i, i)
	}
	for i := range 20 {
		u := fmt.Sprintf("http://c.test/other%d.html", i)
		pages[u] = fmt.Sprintf(`<html><head><title>Page %d</title></head><body><p>Nothing here %d.</p></body></html>`, i, i)
	}
	pages["http://c.test/configure.html"] = `<html><head><title>Configure</title></head><body>
<p>The openssl option names the OpenSSL directory.</p></body></html>`
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	r, err := idx.Search("command line option openssl", SearchOptions{N: 5, Explain: true, NoSnippets: true})
	if err != nil || len(r.Results) != 5 {
		t.Fatalf("%+v %v", r, err)
	}
	if r.Results[0].URL != "http://c.test/configure.html" {
		t.Errorf("first %s, want configure.html", r.Results[0].URL)
	}
	// Counted by words, every other result holds more of them.
	if first := r.Results[0].Explain.Matched; first != 2 {
		t.Errorf("%s holds %d words, want configure.html holding 2 (option, openssl)", r.Results[0].URL, first)
	}
	for _, x := range r.Results[1:] {
		if x.Explain.Matched != 3 {
			t.Errorf("%s holds %d words, want 3 (command, line, option)", x.URL, x.Explain.Matched)
		}
	}
}

// Proximity looks at all the query's words: the page where the three
// stand together beats the one where two are a phrase and the third far.
func TestProximityOfAllWords(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	pages := map[string]string{
		"http://p.test/together.html": `<html><body><p>alpha one beta two gamma ` + filler + `</p></body></html>`,
		"http://p.test/apart.html":    `<html><body><p>alpha beta ` + filler + ` gamma two</p></body></html>`,
	}
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	r, err := idx.Search("alpha beta gamma", SearchOptions{N: 2, Explain: true, NoSnippets: true})
	if err != nil || len(r.Results) != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	if r.Results[0].URL != "http://p.test/together.html" || r.Results[0].Explain.Window != 5 || r.Results[1].Explain.Window != 203 {
		t.Errorf("first %s (window %d), then window %d", r.Results[0].URL, r.Results[0].Explain.Window, r.Results[1].Explain.Window)
	}
}

func TestWindow(t *testing.T) {
	list := func(pos ...int) []byte {
		var b []byte
		for _, p := range pos {
			h := uint16(1<<12 | p) // plain, font 1
			b = append(b, byte(h>>8), byte(h))
		}
		return b
	}
	for _, tc := range []struct {
		lists      [][]byte
		span, held int
	}{
		{[][]byte{list(1, 50), list(52), list(10, 55)}, 6, 3},
		{[][]byte{list(1), nil, list(3)}, 3, 2},
		{[][]byte{list(7), nil, nil}, 0, 1},
		{[][]byte{list(4), list(4)}, 1, 2},
	} {
		span, held := window(tc.lists, []int{0, 1, 2}[:len(tc.lists)])
		if span != tc.span || held != tc.held {
			t.Errorf("window %v: %d of %d, want %d of %d", tc.lists, span, held, tc.span, tc.held)
		}
	}
}

// window against a brute force over random pages of up to 20 words
// (runs merged two at a time), some runs out of order (sorted),
// some words with more hits than it reads or only fancy hits.
func TestWindowAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for round := range 3000 {
		nw := 1 + rng.IntN(20)
		lists := make([][]byte, nw)
		words := make([]int, nw)
		var plain [][]int // each word's positions window reads
		for w := range nw {
			words[w] = w
			var b []byte
			var got []int
			n := rng.IntN(80)
			pos := rng.IntN(50)
			for range n {
				if rng.IntN(10) == 0 { // a fancy hit (a title hit) in between
					h := hit.Fancy(false, hit.Title, rng.IntN(20))
					b = append(b, byte(h>>8), byte(h))
					continue
				}
				p := pos
				if round%7 == 0 && rng.IntN(8) == 0 {
					p = rng.IntN(4096) // out of order
				}
				h := hit.Plain(rng.IntN(2) == 0, rng.IntN(7), p)
				b = append(b, byte(h>>8), byte(h))
				if len(got) < proxHits {
					got = append(got, min(p, hit.MaxPlainPos))
				}
				pos += rng.IntN(300)
			}
			lists[w] = b
			plain = append(plain, got)
		}
		wantHeld, wantSpan := 0, 1<<30
		for _, ps := range plain {
			if len(ps) > 0 {
				wantHeld++
			}
		}
		// the smallest span from each hit to the nearest hit of every
		// other word at or after it
		for _, ps := range plain {
			for _, a := range ps {
				hi, ok := a, true
				for _, qs := range plain {
					if len(qs) == 0 {
						continue
					}
					best := -1
					for _, b := range qs {
						if b >= a && (best < 0 || b < best) {
							best = b
						}
					}
					if best < 0 {
						ok = false
						break
					}
					hi = max(hi, best)
				}
				if ok {
					wantSpan = min(wantSpan, hi-a+1)
				}
			}
		}
		if wantHeld < 2 {
			wantSpan = 0
		}
		span, held := window(lists, words)
		if span != wantSpan || held != wantHeld {
			t.Fatalf("round %d, %d words: window %d of %d, want %d of %d", round, nw, span, held, wantSpan, wantHeld)
		}
	}
}

// A page that defines a term (a <dt> entry, as a glossary or an API
// reference sets it off) ranks first for it over a page that only
// mentions it, though the mention is in a heading and the running text
// and the mentioning page is the better linked; a qualified name (the
// <dt>'s id "term.setraw") defines its last part, and an identifier that
// holds the term as one of its parts ("SET_RAW_MODE") does not define it.
func TestDefiningPageRanksFirst(t *testing.T) {
	pages := map[string]string{
		"http://d.test/term.html": `<html><head><title>Terminal control</title></head><body>
<p>Functions for the terminal.</p><dl>
<dt id="term.setraw">setraw(fd, when=TCSAFLUSH)</dt><dd><p>Change the mode of the file descriptor fd to raw.</p></dd>
<dt id="term.setcbreak">setcbreak(fd)</dt><dd><p>Change the mode to cbreak.</p></dd></dl></body></html>`,
		"http://d.test/notes.html": `<html><head><title>Porting notes</title></head><body>
<h2>Terminal modes and setraw</h2><p>Calling setraw twice is harmless; setraw returns the old mode,
and code that calls setraw should restore it. The constant below names the mode.</p>
<dl><dt id="SET_RAW_MODE">SET_RAW_MODE</dt><dd><p>The flag.</p></dd></dl></body></html>`,
	}
	for i := range 12 { // pages linking to the notes only
		pages[fmt.Sprintf("http://d.test/l%d.html", i)] = fmt.Sprintf(`<html><head><title>Link %d</title></head>
<body><p>See the <a href="notes.html">porting notes</a>.</p></body></html>`, i)
	}
	definitionOrders(t, searchTwo(t, pages), "setraw", "http://d.test/term.html", "http://d.test/notes.html")
}

// A page defines a query's word only if it defines that very word, not
// another that stems alike: "getcaps" and "getcapabilities" both stem to
// getcap, and the page defining getcaps (better linked, mentioning it
// more) is no definition of "getcapabilities", and the other way round.
func TestDefinitionOfTheWordAsWritten(t *testing.T) {
	pages := map[string]string{
		"http://w.test/nntp.html": `<html><head><title>News protocol</title></head><body>
<p>Ask the server what it can do.</p><dl>
<dt id="nntp.getcapabilities">getcapabilities()</dt><dd><p>Returns the server's capabilities.</p></dd></dl></body></html>`,
		"http://w.test/mailcap.html": `<html><head><title>Mailcap files</title></head><body>
<h2>Reading getcaps</h2><p>Call getcaps once; getcaps reads every file.</p><dl>
<dt id="mailcap.getcaps">getcaps()</dt><dd><p>Returns the capabilities.</p></dd></dl></body></html>`,
	}
	for i := range 12 { // pages linking to the mailcap page only
		pages[fmt.Sprintf("http://w.test/l%d.html", i)] = fmt.Sprintf(`<html><head><title>Link %d</title></head>
<body><p>See the <a href="mailcap.html">mailcap files</a>.</p></body></html>`, i)
	}
	search := searchTwo(t, pages)
	definitionOrders(t, search, "getcapabilities", "http://w.test/nntp.html", "http://w.test/mailcap.html")
	for _, q := range []struct{ query, definer string }{
		{"getcapabilities", "http://w.test/nntp.html"},
		{"getcaps", "http://w.test/mailcap.html"},
	} {
		for _, res := range search(q.query, nil).Results {
			n, want := res.Explain.Counts["getcap"]["definition"], 0
			if res.URL == q.definer {
				want = 1
			}
			if n != want {
				t.Errorf("%s: %s: %d definition hits in --explain, want %d", q.query, res.URL, n, want)
			}
		}
	}
}

// "What’s New" holds no word "s": the query "S" (re.S) does not find it.
func TestCliticIsNoWord(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, map[string]string{
		"http://clitic.test/whatsnew.html": `<html><head><title>What’s New In Python</title></head><body>
<h1>What’s New In Python</h1><p>What's changed: it's faster, and the parser's errors are better.</p></body></html>`,
		"http://clitic.test/re.html": `<html><head><title>Regular expressions</title></head><body>
<dl><dt id="re.S">re.S</dt><dd><p>Make the dot match a newline.</p></dd></dl></body></html>`,
	})
	idx := open(t, dir)
	r, err := idx.Search("S", SearchOptions{N: 5, NoSnippets: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 || r.Results[0].URL != "http://clitic.test/re.html" {
		var got []string
		for _, res := range r.Results {
			got = append(got, res.URL)
		}
		t.Errorf("S: %q, want the page defining re.S alone", got)
	}
}

// A query of one identifier is defined by a page that defines the
// identifier: the index keeps an identifier's whole in a definition and
// leaves its parts out, so the query's parts ("return", "value" of
// RETURN_VALUE) need no definition of their own. A word of the query
// that is not such a part still does: the same page does not define
// "RETURN_VALUE mode".
func TestIdentifierDefinition(t *testing.T) {
	pages := map[string]string{
		"http://i.test/dis.html": `<html><head><title>Opcodes</title></head><body>
<p>The opcodes of the interpreter.</p><dl>
<dt id="opcode-RETURN_VALUE">RETURN_VALUE</dt><dd><p>Returns with the top of the stack to the caller.</p></dd>
<dt id="opcode-POP_TOP">POP_TOP</dt><dd><p>Removes the top of the stack.</p></dd></dl></body></html>`,
		"http://i.test/mock.html": `<html><head><title>Mock objects</title></head><body>
<h4>Setting RETURN_VALUE</h4><p>Set RETURN_VALUE on a mock to choose what it returns; a mock's
RETURN_VALUE is another mock unless set, and RETURN_VALUE mode is the default.</p></body></html>`,
	}
	for i := range 3 { // pages linking to the mentioning page only
		pages[fmt.Sprintf("http://i.test/l%d.html", i)] = fmt.Sprintf(`<html><head><title>Link %d</title></head>
<body><p>See the <a href="mock.html">mock objects</a>.</p></body></html>`, i)
	}
	search := searchTwo(t, pages)
	definitionOrders(t, search, "RETURN_VALUE", "http://i.test/dis.html", "http://i.test/mock.html")
	for _, res := range search("RETURN_VALUE mode", nil).Results {
		if def := res.Explain.Features["definition"]; def != 0 {
			t.Errorf("RETURN_VALUE mode: %s: definition feature %g, want 0 (no page defines mode)", res.URL, def)
		}
	}
}

// A page defines a query of several words only when one defined name
// holds them all: a glossary that defines "iterator" and "object" in two
// entries, side by side, is no answer to "iterator objects", and the page
// whose <dt> names "iterator object" is, though the glossary is the
// better linked and mentions the words more. With the definition weight
// 0 the glossary comes first, so the definition term (and which page it
// counts) is what orders them.
func TestDefinitionInOneEntry(t *testing.T) {
	pages := map[string]string{
		"http://e.test/glossary.html": `<html><head><title>Glossary</title></head><body>
<h2>Iterator and object terms</h2><dl>
<dt>iterator</dt><dd><p>An object representing a stream of data; an iterator object is returned by iter().</p></dd>
<dt>object</dt><dd><p>Any data with state; every iterator is an object.</p></dd>
</dl></body></html>`,
		"http://e.test/api.html": `<html><head><title>Stream API</title></head><body>
<p>The stream functions.</p><dl>
<dt id="iterator-object">iterator object</dt><dd><p>What stream() returns.</p></dd>
</dl></body></html>`,
	}
	for i := range 12 { // pages linking to the glossary only
		pages[fmt.Sprintf("http://e.test/l%d.html", i)] = fmt.Sprintf(`<html><head><title>Link %d</title></head>
<body><p>See the <a href="glossary.html">glossary</a>.</p></body></html>`, i)
	}
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	search := func(w *Weights) *Response {
		r, err := idx.Search("iterator objects", SearchOptions{N: 5, NoSnippets: true, Explain: true, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) != 2 {
			t.Fatalf("iterator objects: %d results, want 2", len(r.Results))
		}
		return r
	}
	r := search(nil)
	if r.Results[0].URL != "http://e.test/api.html" {
		t.Errorf("iterator objects: first %s, want the page whose one entry names both words", r.Results[0].URL)
	}
	for _, res := range r.Results {
		ex := res.Explain
		oneEntry := res.URL == "http://e.test/api.html"
		if def := ex.Features["definition"]; oneEntry != (def > 0) {
			t.Errorf("%s: definition feature %g", res.URL, def)
		}
		if ex.DefinedApart == oneEntry {
			t.Errorf("%s: defined_apart %v", res.URL, ex.DefinedApart)
		}
	}
	// One word defined in one entry is a definition as before.
	r1, err := idx.Search("iterator", SearchOptions{N: 5, NoSnippets: true, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range r1.Results {
		if def := res.Explain.Features["definition"]; def <= 0 || res.Explain.DefinedApart {
			t.Errorf("iterator: %s: definition feature %g, defined_apart %v", res.URL, def, res.Explain.DefinedApart)
		}
	}
	noDef := DefaultWeights
	noDef.Def = 0
	if r := search(&noDef); r.Results[0].URL != "http://e.test/glossary.html" {
		t.Errorf("iterator objects without the definition term: first %s, want the glossary (else the test shows nothing)", r.Results[0].URL)
	}
}

// A <dt> that links to another page ("See also: Module numbers") names
// that page and defines nothing on its own: the page defining the term
// comes first, though the referring page is the better linked and
// mentions the word more. With the definition weight 0 the referring page
// comes first.
func TestReferenceIsNoDefinition(t *testing.T) {
	pages := map[string]string{
		"http://r.test/fractions.html": `<html><head><title>Rational arithmetic</title></head><body>
<h2>Fractions of numbers</h2><p>Fractions are numbers; the numbers here are rational numbers.</p><dl>
<dt>Module <a href="numbers.html">numbers</a></dt><dd><p>The abstract classes.</p></dd></dl></body></html>`,
		"http://r.test/numbers.html": `<html><head><title>Abstract base classes</title></head><body>
<p>The hierarchy.</p><dl><dt id="numbers.Number">class Numbers</dt><dd><p>The root of the hierarchy.</p></dd></dl></body></html>`,
	}
	for i := range 12 { // pages linking to the referring page only
		pages[fmt.Sprintf("http://r.test/l%d.html", i)] = fmt.Sprintf(`<html><head><title>Link %d</title></head>
<body><p>See <a href="fractions.html">rational numbers</a>.</p></body></html>`, i)
	}
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	search := func(w *Weights) *Response {
		r, err := idx.Search("numbers", SearchOptions{N: 20, NoSnippets: true, Explain: true, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		// The two pages, in their order (the linking pages hold the
		// word in their links' text).
		r.Results = slices.DeleteFunc(r.Results, func(res Result) bool { return !strings.Contains(res.URL, "s.html") })
		if len(r.Results) != 2 {
			t.Fatalf("numbers: %d of the two pages", len(r.Results))
		}
		return r
	}
	r := search(nil)
	if r.Results[0].URL != "http://r.test/numbers.html" {
		t.Errorf("numbers: first %s, want the page defining it", r.Results[0].URL)
	}
	for _, res := range r.Results {
		def := res.Explain.Features["definition"]
		if defines := res.URL == "http://r.test/numbers.html"; defines != (def > 0) {
			t.Errorf("%s: definition feature %g", res.URL, def)
		}
	}
	noDef := DefaultWeights
	noDef.Def = 0
	if r := search(&noDef); r.Results[0].URL != "http://r.test/fractions.html" {
		t.Errorf("numbers without the definition term: first %s, want the referring page (else the test shows nothing)", r.Results[0].URL)
	}
}

// A word the query writes with a capital is defined by a name written so:
// for "Text" the page defining the class Text comes first, before a
// better linked page that defines the parameter text; for "text" both
// define it. With the definition weight 0 the better linked page comes
// first.
func TestCapitalDefinition(t *testing.T) {
	pages := map[string]string{
		"http://c.test/typing.html": `<html><head><title>Type hints</title></head><body>
<p>Aliases.</p><dl><dt id="typing.Text">class typing.Text</dt><dd><p>An alias for str.</p></dd></dl></body></html>`,
		"http://c.test/widgets.html": `<html><head><title>Widgets</title></head><body>
<h2>Labels with text</h2><p>A label shows text; the text is set once.</p><dl>
<dt id="widgets.text">text</dt><dd><p>The label's text.</p></dd></dl></body></html>`,
	}
	for i := range 12 { // pages linking to the widgets only
		pages[fmt.Sprintf("http://c.test/l%d.html", i)] = fmt.Sprintf(`<html><head><title>Link %d</title></head>
<body><p>See the <a href="widgets.html">widgets</a>.</p></body></html>`, i)
	}
	search := searchTwo(t, pages)
	r := search("Text", nil)
	if r.Results[0].URL != "http://c.test/typing.html" {
		t.Errorf("Text: first %s, want the page defining the class Text", r.Results[0].URL)
	}
	for _, res := range r.Results {
		capital := res.URL == "http://c.test/typing.html"
		if def := res.Explain.Features["definition"]; capital != (def > 0) {
			t.Errorf("Text: %s: definition feature %g", res.URL, def)
		}
		if n := res.Explain.Counts["text"]["definition"]; capital != (n > 0) {
			t.Errorf("Text: %s: %d definition hits in --explain", res.URL, n)
		}
	}
	for _, res := range search("text", nil).Results {
		if def := res.Explain.Features["definition"]; def <= 0 {
			t.Errorf("text: %s: definition feature %g, want both pages defining it", res.URL, def)
		}
	}
	noDef := DefaultWeights
	noDef.Def = 0
	if r := search("Text", &noDef); r.Results[0].URL != "http://c.test/widgets.html" {
		t.Errorf("Text without the definition term: first %s, want the better linked page (else the test shows nothing)", r.Results[0].URL)
	}
}

// An index of format 6 (before definition hits) opens as it is and its
// next batch makes it the current format, the definition hits of its new
// pages counting.
func TestFormat6Index(t *testing.T) {
	fourFiles(t)
	dir := t.TempDir()
	build(t, dir, Options{}, map[string]string{"http://f.test/a.html": `<html><body><p>An old page on setraw.</p></body></html>`})
	p := filepath.Join(dir, manifestName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(data), fmt.Sprintf(`"format": %d,`, formatNumber), fmt.Sprintf(`"format": %d,`, formatNoReclaim), 1)
	if old == string(data) || formatNoReclaim != 6 || formatNumber != 14 {
		t.Fatal("no format field in the manifest, or the formats moved on")
	}
	asFormat(t, dir, formatNoReclaim)
	idx := open(t, dir)
	if m := idx.Manifest(); m.Format != formatNoReclaim {
		t.Fatalf("opened as format %d", m.Format)
	}
	idx.Close()
	build(t, dir, Options{}, map[string]string{"http://f.test/b.html": `<html><body><dl><dt id="m.setraw">setraw(fd)</dt><dd>Raw mode.</dd></dl></body></html>`})
	idx = open(t, dir)
	if m := idx.Manifest(); m.Format != formatNumber {
		t.Errorf("after a batch: format %d, want %d", m.Format, formatNumber)
	}
	if got := resultURLs(t, idx, "setraw", 5); len(got) != 2 || got[0] != "http://f.test/b.html" {
		t.Errorf("setraw: %q, want the page defining it first", got)
	}
}

// The definition feature counts a page only when it defines every word of
// the query: a page that defines one word of another page's title
// ("cookie", of "http cookie") gets nothing from it, and a page that
// defines both words (in one entry: TestDefinitionInOneEntry has two)
// gets their idf.
func TestDefinitionNeedsEveryWord(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, map[string]string{
		"http://c.test/jar.html": `<html><head><title>Cookie jars</title></head><body>
<p>Jars keep what a server sets over http.</p><dl><dt id="jar.Cookie">Cookie(name, value)</dt><dd><p>One cookie.</p></dd></dl></body></html>`,
		"http://c.test/cookie.html": `<html><head><title>Http cookie state</title></head><body>
<p>State management over http with a cookie header.</p></body></html>`,
		"http://c.test/both.html": `<html><head><title>Reference</title></head><body>
<p>Terms.</p><dl><dt id="ref.http">http</dt><dd><p>The protocol.</p></dd><dt id="ref.http-cookie">http cookie</dt><dd><p>A cookie.</p></dd></dl></body></html>`,
	})
	idx := open(t, dir)
	def := func(q string) map[string]float64 {
		r, err := idx.Search(q, SearchOptions{N: 10, NoSnippets: true, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, res := range r.Results {
			m[strings.TrimPrefix(res.URL, "http://c.test/")] = res.Explain.Features["definition"]
		}
		return m
	}
	one := def("cookie")
	if one["jar.html"] <= 0 || one["both.html"] <= 0 || one["cookie.html"] != 0 {
		t.Errorf("cookie: definition features %v, want jar and both > 0, cookie 0", one)
	}
	two := def("http cookie")
	if len(two) != 3 || two["jar.html"] != 0 || two["cookie.html"] != 0 || two["both.html"] <= one["both.html"] {
		t.Errorf("http cookie: definition features %v, want jar and cookie 0, both above its %g for cookie alone", two, one["both.html"])
	}
}

// A word on every page still counts (IDFPlus): for "class object", where
// "object" is on every page, the page with both words in its heading
// comes before one with "class" set off more often but "object" only in
// its text. With IDFPlus 0, BM25's idf gives "object" next to nothing and
// the other page comes first: IDFPlus is what orders them.
func TestCommonWordCounts(t *testing.T) {
	pages := map[string]string{
		"http://c.test/objects.html": `<html><head><title>Reference</title></head><body>
<h2>Class objects</h2><p>They support two kinds of operations.</p></body></html>`,
		"http://c.test/tutorial.html": `<html><head><title>Tutorial</title></head><body>
<h2>A first look at class</h2><p>Each <b>class</b> has a name; a <b>class</b> statement makes one.
Every value is an object.</p></body></html>`,
	}
	for i := range 12 {
		pages[fmt.Sprintf("http://c.test/p%d.html", i)] = fmt.Sprintf(`<html><head><title>Page %d</title></head>
<body><p>Page %d is about one object.</p></body></html>`, i, i)
	}
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	first := func(w *Weights) string {
		r, err := idx.Search("class object", SearchOptions{N: 5, NoSnippets: true, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) < 2 {
			t.Fatalf("class object: %d results", len(r.Results))
		}
		return r.Results[0].URL
	}
	if got := first(nil); got != "http://c.test/objects.html" {
		t.Errorf("class object: first %s, want the page with both words in its heading", got)
	}
	plain := DefaultWeights
	plain.IDFPlus = 0
	if got := first(&plain); got != "http://c.test/tutorial.html" {
		t.Errorf("class object with IDFPlus 0: first %s, want the page setting off class more (else the test shows nothing)", got)
	}
}

// searchTwo indexes pages and returns a search, with the features
// explained, of a query that two of them answer.
func searchTwo(t *testing.T, pages map[string]string) func(q string, w *Weights) *Response {
	t.Helper()
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	return func(q string, w *Weights) *Response {
		t.Helper()
		r, err := idx.Search(q, SearchOptions{N: 5, NoSnippets: true, Explain: true, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) != 2 {
			t.Fatalf("%s: %d results, want 2", q, len(r.Results))
		}
		return r
	}
}

// definitionOrders checks that the page defining q comes first, that the
// definition feature counts for it alone, and that without the feature
// the page only mentioning q wins (else the test would show nothing).
func definitionOrders(t *testing.T, search func(string, *Weights) *Response, q, definer, mentioner string) {
	t.Helper()
	r := search(q, nil)
	if r.Results[0].URL != definer {
		t.Errorf("%s: first %s, want the page defining it", q, r.Results[0].URL)
	}
	for _, res := range r.Results {
		def := res.Explain.Features["definition"]
		if defines := res.URL == definer; defines != (def > 0) {
			t.Errorf("%s: %s: definition feature %g", q, res.URL, def)
		}
	}
	noDef := DefaultWeights
	noDef.Def = 0
	if r := search(q, &noDef); r.Results[0].URL != mentioner {
		t.Errorf("%s without the definition feature: first %s, want the mentioning page", q, r.Results[0].URL)
	}
}

// A page introducing a term in running text, set off in <em class="dfn">
// (Sphinx's :dfn:) or <dfn>, ranks before a better linked page that
// mentions the words more often, with a model weighing the dfn feature;
// the emphasis hits are indexed for the runs' words only, the emphasis
// feature counts any run (<em> too), the dfn feature a definition's
// markup only, and both only the words of one run ("raw strings", not
// "raw" set off in one place and "strings" in another). Without the
// feature the mentioning page comes first (else the test shows nothing).
func TestEmphasisRanksTheIntroducingPage(t *testing.T) {
	const definer, mentioner, apart, italics = "http://e.test/lexical.html", "http://e.test/howto.html", "http://e.test/apart.html", "http://e.test/italics.html"
	pages := map[string]string{
		definer: `<html><title>Lexical analysis</title><body><p>Both string and bytes literals may be prefixed with a letter;
such strings are called <em class="dfn">raw strings</em> and treat backslashes as literal characters.
A <dfn>docstring</dfn> is the first statement.</p></body></html>`,
		mentioner: `<html><title>Howto</title><body><p>Raw strings help with regular expressions. Use raw strings
for patterns: raw strings keep backslashes. More on raw strings and docstring below: a docstring documents, the docstring of a module.</p></body></html>`,
		apart:   `<html><title>Apart</title><body><p>A <em>raw</em> file, and <i>strings</i> elsewhere, raw strings, a docstring.</p></body></html>`,
		italics: `<html><title>Italics</title><body><p>Say <em>raw strings</em>, or <i>docstring</i>.</p></body></html>`,
	}
	for i := range 6 { // pages linking to the mentioning page only
		pages[fmt.Sprintf("http://e.test/hub%d.html", i)] = `<html><body><a href="howto.html">howto</a></body></html>`
	}
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	dfn := HandModel(&DefaultWeights)
	dfn.W[FeatDfn] = 1
	search := func(q string, m *Model) []Result {
		t.Helper()
		r, err := idx.Search(q, SearchOptions{N: 5, NoSnippets: true, Explain: true, Model: m})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) < 4 {
			t.Fatalf("%s: %d results", q, len(r.Results))
		}
		return r.Results
	}
	for _, q := range []string{"raw strings", "docstring"} {
		rs := search(q, &dfn)
		if rs[0].URL != definer {
			t.Errorf("%s: first %s, want the page introducing it", q, rs[0].URL)
		}
		for _, r := range rs {
			f := r.Explain.Features
			if got, want := f["emphasis"] > 0, r.URL == definer || r.URL == italics; got != want {
				t.Errorf("%s: %s: emphasis feature %g", q, r.URL, f["emphasis"])
			}
			if got, want := f["dfn"] > 0, r.URL == definer; got != want {
				t.Errorf("%s: %s: dfn feature %g", q, r.URL, f["dfn"])
			}
		}
		if rs := search(q, nil); rs[0].URL != mentioner {
			t.Errorf("%s without the dfn feature: first %s, want the mentioning page", q, rs[0].URL)
		}
	}
	// The hits: one emphasis hit of each word of the run, none on the
	// mentioning page.
	for _, r := range search("raw strings", &dfn) {
		c := r.Explain.Counts
		switch r.URL {
		case definer:
			if c["raw"]["emphasis"] != 1 || c["string"]["emphasis"] != 1 || c["raw"]["plain"] != 1 {
				t.Errorf("the introducing page's hits: %v", c)
			}
		case mentioner:
			if c["raw"]["emphasis"] != 0 || c["string"]["emphasis"] != 0 {
				t.Errorf("the mentioning page's hits: %v", c)
			}
		case apart:
			if c["raw"]["emphasis"] != 1 || c["string"]["emphasis"] != 1 {
				t.Errorf("the page setting the words off apart: %v", c)
			}
		}
	}
}

// An index of format 8 (before emphasis hits) opens as it is and its next
// batch makes it the current format, the emphasis hits of its new pages counting;
// a format newer than this barrel's is refused, naming both.
func TestFormat8Index(t *testing.T) {
	fourFiles(t)
	dir := t.TempDir()
	build(t, dir, Options{}, map[string]string{"http://f.test/a.html": `<html><body><p>An old page on <em>docstrings</em>.</p></body></html>`})
	p := filepath.Join(dir, manifestName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cur := fmt.Sprintf(`"format": %d,`, formatNumber)
	old := strings.Replace(string(data), cur, fmt.Sprintf(`"format": %d,`, formatNoEmph), 1)
	if old == string(data) || formatNoEmph != 8 || formatNumber != 14 {
		t.Fatal("no format field in the manifest, or the formats moved on")
	}
	newer := strings.Replace(string(data), cur, `"format": 15,`, 1)
	if err := os.WriteFile(p, []byte(newer), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "index format 15, this barrel reads 14") {
		t.Errorf("a format 15 index: %v", err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	asFormat(t, dir, formatNoEmph)
	idx := open(t, dir)
	if m := idx.Manifest(); m.Format != formatNoEmph {
		t.Fatalf("opened as format %d", m.Format)
	}
	idx.Close()
	build(t, dir, Options{}, map[string]string{"http://f.test/b.html": `<html><body><p>A <dfn>docstring</dfn> is a string.</p></body></html>`})
	idx = open(t, dir)
	if m := idx.Manifest(); m.Format != formatNumber {
		t.Errorf("after a batch: format %d, want %d", m.Format, formatNumber)
	}
	r, err := idx.Search("docstring", SearchOptions{N: 5, NoSnippets: true, Explain: true})
	if err != nil || len(r.Results) != 2 {
		t.Fatalf("docstring: %v, %v", r, err)
	}
	for _, res := range r.Results {
		if len(res.Explain.Counts) != 1 {
			t.Errorf("%s: counts %v", res.URL, res.Explain.Counts)
		}
		for w, c := range res.Explain.Counts {
			if c["emphasis"] != 1 {
				t.Errorf("%s: %s: %d emphasis hits, want 1", res.URL, w, c["emphasis"])
			}
		}
	}
}

// A query that spells an acronym out beside it ("Python Enhancement
// Proposals PEP 3102", as the Python docs' index files its PEP entries)
// counts the acronym and the rest: the page naming PEP 3102 in a heading
// comes before the page that holds the spelt-out words and mentions 3102
// once in passing. Counting the spelt-out words, the second page holds
// more of the query's idf and comes first whatever its score.
func TestSpelledOutAcronym(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 20)
	pages := map[string]string{
		"http://a.test/new.html": `<html><head><title>What is new</title></head><body><h2>PEP 3102: keyword-only arguments</h2><p>` + filler + `</p></body></html>`,
		"http://a.test/old.html": `<html><head><title>What was new</title></head><body><p>The Python Enhancement Proposals list PEP 8. ` + filler + ` Issue 3102 was fixed.</p></body></html>`,
	}
	for i := range 20 {
		pages[fmt.Sprintf("http://a.test/%d.html", i)] = fmt.Sprintf(`<html><head><title>Page %d</title></head><body><p>Python and PEP %d.</p></body></html>`, i, i)
	}
	dir := t.TempDir()
	build(t, dir, Options{}, pages)
	idx := open(t, dir)
	for _, c := range []struct {
		query, first string
		of           int
	}{
		{"Python Enhancement Proposals PEP 3102", "http://a.test/new.html", 2},
		{"PEP 3102", "http://a.test/new.html", 2},
		// Without the acronym the words are the query: the page holding them comes first.
		{"Python Enhancement Proposals 3102", "http://a.test/old.html", 4},
		// An acronym is written in capitals.
		{"Python Enhancement Proposals pep 3102", "http://a.test/old.html", 5},
	} {
		r, err := idx.Search(c.query, SearchOptions{N: 2, Explain: true, NoSnippets: true})
		if err != nil || len(r.Results) == 0 {
			t.Fatalf("%q: %+v %v", c.query, r, err)
		}
		if ex := r.Results[0].Explain; r.Results[0].URL != c.first || ex.Of != c.of {
			t.Errorf("%q: first %s counting %d words, want %s counting %d", c.query, r.Results[0].URL, ex.Of, c.first, c.of)
		}
	}
}
