package htmldoc

import (
	"github.com/sekitei/crawlkit/internal/urltestdata"
	"github.com/sekitei/crawlkit/pkg/barrel/analysis"

	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	page := `<html><head><title> The  Title </title><base href="http://b.test/dir/">
<meta name="description" content="meta words"><style>.x{}</style><script>var hidden=1</script></head>
<body><h1>Big Heading</h1><p>plain <b>bold</b> <small>tiny</small> <font size="+2">larger</font>
<a href="page.html#frag">Link <img alt="Picture"> text</a> <a href="mailto:x@y">mail</a>
<a href="//other.test/x">unclosed <p>Ünïcode wörds, 3.11 e-mail</body></html>`
	base, _ := url.Parse("http://a.test/start")
	var d Doc
	d.Parse([]byte(page), base)
	if d.Title != "The Title" {
		t.Errorf("title %q", d.Title)
	}
	if strings.TrimSpace(d.Meta) != "meta words" {
		t.Errorf("meta %q", d.Meta)
	}
	type wf struct {
		w    string
		font uint8
		cap  bool
	}
	var got []wf
	for i := range d.Words {
		got = append(got, wf{string(d.Key(&d.Words[i])), d.Words[i].Font, d.Words[i].Capital})
	}
	want := []wf{{"big", 6, true}, {"heading", 6, true}, {"plain", 1, false}, {"bold", 2, false}, {"tiny", 0, false},
		{"larger", 3, false}, {"link", 1, true}, {"text", 1, false}, {"mail", 1, false}, {"unclosed", 1, false},
		{"ünïcode", 1, true}, {"wörds", 1, false}, {"3", 1, false}, {"11", 1, false}, {"e", 1, false}, {"mail", 1, false}}
	if !slices.Equal(got, want) {
		t.Errorf("words\n got %v\nwant %v", got, want)
	}
	w := d.Words[0]
	if string(d.Text[w.Start:w.End]) != "Big" {
		t.Errorf("word offsets point at %q", d.Text[w.Start:w.End])
	}
	wantLinks := []Link{{"http://b.test/dir/page.html", "Link Picture text"}, {"http://other.test/x", "unclosed Ünïcode wörds, 3.11 e-mail"}}
	if !slices.Equal(d.Links, wantLinks) {
		t.Errorf("links\n got %q\nwant %q", d.Links, wantLinks)
	}
}

func TestParseGarbage(t *testing.T) {
	var d Doc
	for _, p := range []string{"", "<<<>>>", strings.Repeat("<div>", 100000) + "deep", "\x00\xff\xfe plain", "<title>never closed"} {
		d.Parse([]byte(p), nil)
	}
	d.Parse([]byte("plain text here "+strings.Repeat("<b>", 5000)+"x"), nil)
	if len(d.Words) != 4 || d.Words[3].Font != FontBold {
		t.Errorf("deep nesting: %+v", d.Words)
	}
}

// Font sizes are relative to the rest of the document (the 1998 paper's
// definition): the size most words are in is normal.
func TestRelativeFonts(t *testing.T) {
	var d Doc
	fonts := func(page string) []uint8 {
		d.Parse([]byte(page), nil)
		var out []uint8
		for _, w := range d.Words {
			out = append(out, w.Font)
		}
		return out
	}
	if got := fonts(`<font size=4>all of it large <h1>head</h1> <small>fine</small></font>`); !slices.Equal(got, []uint8{1, 1, 1, 1, 5, 0}) {
		t.Errorf("a page in <font size=4>: %v", got)
	}
	if got := fonts(`<b>only bold text</b>`); !slices.Equal(got, []uint8{1, 1, 1}) {
		t.Errorf("a page all in bold: %v", got)
	}
	if got := fonts(`plain text <b>bold</b> <h2>big</h2>`); !slices.Equal(got, []uint8{1, 1, 2, 5}) {
		t.Errorf("a plain page: %v", got)
	}
}

func TestAnalyzer(t *testing.T) {
	d := Doc{Analyzer: analysis.New(analysis.Options{})}
	d.Parse([]byte(`<p>Call PyObject_Size in Москве</p>`), nil)
	var keys, wholes []string
	for i := range d.Words {
		keys = append(keys, string(d.Key(&d.Words[i])))
		wholes = append(wholes, string(d.Whole(&d.Words[i])))
	}
	if want := []string{"call", "pyobject", "size", "in", "москв"}; !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	if want := []string{"", "pyobject_size", "", "", ""}; !slices.Equal(wholes, want) {
		t.Errorf("wholes %q, want %q", wholes, want)
	}
}

func TestTokenizeLongWord(t *testing.T) {
	long := strings.Repeat("a", 500)
	ws := Words(long + " B")
	if len(ws) != 2 || len(ws[0]) != MaxWordLen || ws[1] != "b" {
		t.Errorf("got %q", ws)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`<title>x</title><a href="/y">z</a><font size=9>q</font>`))
	f.Add([]byte("<h1>\xff\xfe</h1>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Doc
		base, _ := url.Parse("http://f.test/")
		d.Parse(b, base)
		for i := range d.Words {
			w := &d.Words[i]
			if w.Start < 0 || w.End > int32(len(d.Text)) || w.Start >= w.End || len(d.Key(w)) == 0 || w.Font > 6 {
				t.Fatalf("bad word %+v", w)
			}
		}
	})
}

// Defs holds each <dt>'s leading text (up to a signature's parameters or
// a value), or its id when that holds the text and more, both when
// neither holds the other, and a qualified name by its last part;
// an unclosed <dt> ends at its <dd>, headings and other text are not
// definitions, and a <dt> linking to another page is not one either.
func TestDefs(t *testing.T) {
	page := `<h1>Reference</h1><p>Text with <span id="a-target">a target</span>.</p><dl>
<dt id="term-abstract-base-class">abstract base class<a href="#x">¶</a></dt><dd>A class.</dd>
<dt class="sig" id="tarfile.TarInfo.isblk"><em>method</em> TarInfo.<b>isblk</b>()</dt><dd>Block device.</dd>
<dt id="os.umask">os.umask(mask, /)<dd>Set the mask.
<dt>VERSION = 3</dt>
<dt id="cmdoption-v">-v, --verbose</dt><dd><dl><dt>nested: term</dt></dl></dd>
<dt></dt></dl>`
	var d Doc
	d.Parse([]byte(page), nil)
	want := "term-abstract-base-class\nmethod isblk\numask\nVERSION\n-v, --verbose cmdoption-v\nnested\n"
	if d.Defs != want {
		t.Errorf("defs\n got %q\nwant %q", d.Defs, want)
	}
	// A <dt> whose leading text links to another page names that page;
	// a permalink to the page's own place, or a link after the leading
	// text (a parameter's type), leaves the entry as it is.
	base, _ := url.Parse("http://d.test/lib/shlex.html#top")
	d.Parse([]byte(`<dl><dt>Module <a href="configparser.html#module-configparser">configparser</a></dt><dd>See also.</dd>
<dt id="shlex.get_token">get_token(<em>x</em>: <a href="typing.html#Any">Any</a>)<a href="#shlex.get_token">¶</a></dt>
<dt id="term-token"><a href="shlex.html#term-token">token</a></dt></dl>`), base)
	if want := "get_token\nterm-token\n"; d.Defs != want {
		t.Errorf("defs with links\n got %q\nwant %q", d.Defs, want)
	}
	d.Parse([]byte("<dl><dt>"+strings.Repeat("word ", 100)), nil)
	if n := len(strings.Fields(d.Defs)); n != maxDefText/len("word ") {
		t.Errorf("a long <dt> keeps %d words: %q", n, d.Defs)
	}
	d.Parse([]byte("<dl><dt>xx"+strings.Repeat("word ", 100)), nil) // the cut falls inside a word: it is left out
	if n := len(strings.Fields(d.Defs)); n != maxDefText/len("word ")-1 || strings.HasSuffix(d.Defs, "wor\n") {
		t.Errorf("a long <dt> keeps %d words: %q", n, d.Defs)
	}
}

// Emph marks the words of a run of <em>, <i>, <dfn>, <strong> or <b>
// (Sphinx's <em class="dfn"> among them) of at most MaxEmphWords words,
// and Dfn those of a <dfn> or <em class="dfn">;
// not a signature's parameters or properties, not a run inside a link to
// another page (a glossary reference), not a longer run, not a run left
// open by the page's end, and not the words around a run.
func TestEmph(t *testing.T) {
	base, _ := url.Parse("http://d.test/reference/lexical.html")
	page := `<p>such strings are called <em class="dfn">raw strings</em> and treat
backslashes as <i>literal</i> characters; <strong>Note</strong> <b>bold</b> <dfn>term</dfn>
<em>nested <em>inner</em> outer</em>.
<dt><em class="property">class</em> Widget(<em class="sig-param">sizex</em>)</dt>
Return an <a href="../glossary.html#term-iterator"><em class="xref std std-term">iterator</em></a>,
<em>see <a href="other.html">elsewhere</a></em>, <a href="#here"><em>anchored</em></a>
<em>one two three four five six seven</em> plain <i>unclosed and then the page goes on for long`
	var d Doc
	d.Parse([]byte(page), base)
	var got, dfn []string
	for i := range d.Words {
		if w := string(d.Text[d.Words[i].Start:d.Words[i].End]); d.Words[i].Emph {
			got = append(got, w)
			if d.Words[i].Dfn {
				dfn = append(dfn, w)
			}
		} else if d.Words[i].Dfn {
			t.Errorf("%s: a definition's markup, not emphasised", w)
		}
	}
	want := []string{"raw", "strings", "literal", "Note", "bold", "term", "nested", "inner", "outer", "anchored"}
	if !slices.Equal(got, want) {
		t.Errorf("emphasised words\n got %q\nwant %q", got, want)
	}
	if want := []string{"raw", "strings", "term"}; !slices.Equal(dfn, want) {
		t.Errorf("words of a definition's markup\n got %q\nwant %q", dfn, want)
	}
	// Six words are a run, seven are not.
	d.Parse([]byte("<p><em>one two three four five six</em> seven"), nil)
	n := 0
	for _, w := range d.Words {
		if w.Emph {
			n++
		}
	}
	if n != MaxEmphWords || MaxEmphWords != 6 {
		t.Errorf("a run of %d words: %d emphasised", MaxEmphWords, n)
	}
}

// TestResolveAsNetURL checks resolve's shortcut for absolute references
// against net/url's ResolveReference on the URL Standard's inputs and
// bases, and on absolute references with dot segments.
func TestResolveAsNetURL(t *testing.T) {
	cases, err := urltestdata.Load()
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{"http://h.test/a/./b", "http://h.test/a/../b", "https://h.test/a/..", "http://h.test/.", "http://h.test//a//b/", "http://h.test", "http://h.test?q", "HTTP://H.test/A%2e%2E/b", "http:opaque/../x"}
	var bases []*url.URL
	for _, c := range cases {
		inputs = append(inputs, c.Input)
		if c.Base != nil {
			if b, err := url.Parse(*c.Base); err == nil {
				bases = append(bases, b)
			}
		}
	}
	bases = slices.CompactFunc(bases, func(a, b *url.URL) bool { return a.String() == b.String() })
	shortcuts, checked := 0, 0
	for _, base := range bases[:min(len(bases), 40)] {
		for _, in := range inputs {
			ref, err := url.Parse(in)
			got, gerr := resolve(base, in)
			if (err != nil) != (gerr != nil) {
				t.Fatalf("resolve(%q, %q): error %v, url.Parse's %v", base, in, gerr, err)
			}
			if err != nil {
				continue
			}
			checked++
			if ref.Scheme != "" && !hasDotSegment(ref.EscapedPath()) {
				shortcuts++
			}
			if want := base.ResolveReference(ref).String(); got.String() != want {
				t.Errorf("resolve(%q, %q) = %q, ResolveReference %q", base, in, got, want)
			}
		}
	}
	if shortcuts < checked/10 {
		t.Fatalf("only %d of %d references took the shortcut", shortcuts, checked)
	}
	t.Logf("%d references, %d absolute without dot segments", checked, shortcuts)
}

// collapse gives what joining the fields does, whatever the spaces.
func TestCollapse(t *testing.T) {
	for _, s := range []string{"", " ", "a", " a ", "a  b\tc\n", "\u00a0x\u2003y\u3000", "\xff \xfe\x85z", "  lead and trail  ", "one"} {
		if got, want := collapse(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("collapse(%q) = %q, want %q", s, got, want)
		}
	}
}
