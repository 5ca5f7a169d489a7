package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTerms(t *testing.T) {
	a := New(Options{})
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"Москва", "москв"},
		{"Москве", "москв"},
		{"в Москву", "в москв"},
		{"ёлка Ёлка елка", "елк елк елк"},
		{"Straße STRASSE", "strass strass"},
		{"running runs", "run run"},
		{"PyObject_Size()", "pyobject_size pyobject size"},
		{"os.path.join(a, b)", "os.path.join os path join a b"},
		{"__init__", "__init__ init"},
		{"end. Next", "end next"},
		{"Python 3.11", "python 3.11 3 11"},
		{"Naïve CAFÉ", "naïve café"}, // not ASCII: folded, not stemmed
		{"日本語", "日本語"},
		{"Latinкириллица", "latinкириллица"},
		{"___ ... _", ""},
		// A clitic stays with its word: no "s" or "t" of its own.
		{"What’s New", "what new"},
		{"Python's os.path's join", "python os.path os path join"},
		{"don't DON’T", "don't don't"},
		{"the 's' code, b's' and '%s'", "the s code b s and s"}, // quoted: words of their own
		{"l'homme rock'n'roll", "l homm rock n roll"},
	} {
		got := strings.Join(a.Terms(tc.in), " ")
		if got != tc.want {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A defined word's exact form is its own term, apart from the stem it
// shares with other words.
func TestDefForm(t *testing.T) {
	a := New(Options{})
	for _, tc := range []struct{ word, form string }{
		{"getcapabilities", "=getcapabilities"},
		{"getcaps", "=getcaps"},
		{"Iter", "=iter"},
		{"What’s", "=what's"},
		{"Москва", ""}, // another stemmer's script: no form
		{"3", ""},
	} {
		form, ok := a.DefForm([]byte(tc.word))
		if form != tc.form || ok != (tc.form != "") {
			t.Errorf("DefForm(%q) = %q, %v; want %q", tc.word, form, ok, tc.form)
		}
	}
	if a.Terms("getcapabilities")[0] != a.Terms("getcaps")[0] {
		t.Error("getcapabilities and getcaps no longer stem alike: the test shows nothing")
	}
	if form, ok := New(Options{NoStem: true}).DefForm([]byte("getcaps")); ok {
		t.Errorf("NoStem: DefForm = %q, want none (the term is the form)", form)
	}
}

func TestNoStem(t *testing.T) {
	a := New(Options{NoStem: true})
	if got := strings.Join(a.Terms("Москве Running ёлка"), " "); got != "москве running елка" {
		t.Errorf("NoStem: %q", got)
	}
	if ID(Options{}) == ID(Options{NoStem: true}) {
		t.Error("the IDs of the two analyses are the same")
	}
}

func TestTokens(t *testing.T) {
	a := New(Options{})
	text := "Call PyObject_Size in the loop"
	var got []Token
	var terms []string
	a.Tokens([]byte(text), func(tk Token) {
		terms = append(terms, string(tk.Term))
		tk.Term = nil
		got = append(got, tk)
	})
	want := []Token{
		{Start: 0, End: 4, Capital: true},
		{Start: 5, End: 18, Capital: true, Whole: true},
		{Start: 5, End: 13, Capital: true},
		{Start: 14, End: 18, Capital: true},
		{Start: 19, End: 21, Stop: true},
		{Start: 22, End: 25, Stop: true},
		{Start: 26, End: 30},
	}
	if !slices.EqualFunc(got, want, func(x, y Token) bool {
		return x.Start == y.Start && x.End == y.End && x.Capital == y.Capital && x.Stop == y.Stop && x.Whole == y.Whole
	}) {
		t.Errorf("tokens:\n got %+v\nwant %+v\n(terms %q)", got, want, terms)
	}
	ru := New(Options{})
	var stops []string
	ru.Tokens([]byte("и в Москве"), func(tk Token) {
		if tk.Stop {
			stops = append(stops, string(tk.Term))
		}
	})
	if !slices.Equal(stops, []string{"и", "в"}) {
		t.Errorf("Russian stop words: %q", stops)
	}
}

// The cache must give what a fresh analysis gives.
func TestCache(t *testing.T) {
	a := New(Options{})
	first := a.Terms("Москве Москве Running RUNNING")
	second := a.Terms("Москве Москве Running RUNNING")
	if !slices.Equal(first, second) || first[0] != first[1] || first[2] != first[3] {
		t.Errorf("%q then %q", first, second)
	}
}

func FuzzTokens(f *testing.F) {
	f.Add("os.path.join PyObject_Size ёлка")
	f.Add("\xff\xfe_._.")
	f.Fuzz(func(t *testing.T, s string) {
		a := New(Options{})
		a.Tokens([]byte(s), func(tk Token) {
			if tk.Start < 0 || tk.End > len(s) || tk.Start >= tk.End || len(tk.Term) > MaxTermLen {
				t.Fatalf("bad token %+v of %q", tk, s)
			}
		})
	})
}

// The word cache gives what analysing each word afresh gives, through its
// growth, its clears when full, words too long to sit inline, and a word
// whose folded term is longer than the word ("ΐ" folds to 6 bytes).
func TestCacheAgainstFresh(t *testing.T) {
	var words []string
	for i := range cacheSlots + cacheSlots/2 {
		switch i % 5 {
		case 0:
			words = append(words, fmt.Sprintf("Running%d", i))
		case 1:
			words = append(words, fmt.Sprintf("москвой%d", i))
		case 2:
			words = append(words, fmt.Sprintf("w%dxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", i)) // longer than a slot holds
		case 3:
			words = append(words, strings.Repeat("ΐ", 1+i%14)) // 2..28 bytes, a term three times as long
		default:
			words = append(words, "the")
		}
	}
	a, fresh := New(Options{}), New(Options{})
	if w := strings.Repeat("ΐ", 14); len(w) > inlineMax || len(fresh.analyse([]byte(w)).term) <= inlineMax {
		t.Fatalf("%q does not test a short word with a long term", w)
	}
	for pass := range 2 {
		for i, w := range words {
			var got []string
			a.word([]byte(w), 0, len(w), func(tk Token) { got = append(got, string(tk.Term)+fmt.Sprint(tk.Stop)) })
			want := fresh.analyse([]byte(w))
			if len(got) != 1 || got[0] != want.term+fmt.Sprint(want.stop) {
				t.Fatalf("pass %d, word %d %q: %q, want %q %v", pass, i, w, got, want.term, want.stop)
			}
		}
	}
	if len(a.cache.slots) != cacheSlots {
		t.Errorf("the table has %d slots after %d words, want it grown to %d", len(a.cache.slots), len(words), cacheSlots)
	}
}

// A number is its own term without a lookup in the word cache: the terms
// are those of analysing each word afresh, and the cache holds only the
// words with letters.
func TestNumbersUncached(t *testing.T) {
	words := []string{"0", "382", "000123", "12a", "a12", "7.5", "٣٤", strings.Repeat("9", inlineMax), strings.Repeat("8", inlineMax+1), strings.Repeat("7", MaxTermLen+5), "Running", "the"}
	a, fresh := New(Options{}), New(Options{})
	for _, w := range words {
		var got []string
		a.Tokens([]byte(w), func(tk Token) { got = append(got, string(tk.Term)+fmt.Sprint(tk.Stop)) })
		var want []string
		fresh.Tokens([]byte(w), func(tk Token) {
			en := fresh.analyse([]byte(w[tk.Start:tk.End]))
			if !tk.Whole {
				want = append(want, en.term+fmt.Sprint(en.stop))
			} else {
				want = append(want, string(tk.Term)+fmt.Sprint(tk.Stop))
			}
		})
		if !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", w, got, want)
		}
	}
	// Cached: 12a, a12, ٣٤ (not ASCII), the longer-than-a-slot numbers,
	// Running, the.
	if n := a.cache.used + len(a.cache.long); n != 7 {
		t.Errorf("the cache holds %d words, want 7", n)
	}
}

// capitalAt's ASCII shortcut agrees with the Unicode tables.
func TestCapitalASCII(t *testing.T) {
	for c := range utf8.RuneSelf {
		if got, want := capitalAt([]byte{byte(c)}, 0), unicode.IsUpper(rune(c)) || unicode.IsTitle(rune(c)); got != want {
			t.Errorf("capitalAt(%q) = %v, want %v", rune(c), got, want)
		}
	}
}

// The table of ASCII word characters holds the letters and digits, and no
// other byte.
func TestASCIIWord(t *testing.T) {
	n := 0
	for c := range 256 {
		if isASCIIWord(byte(c)) {
			n++
			if !unicode.IsLetter(rune(c)) && !unicode.IsDigit(rune(c)) || c >= utf8.RuneSelf {
				t.Errorf("%q is a word character", rune(c))
			}
		}
	}
	if n != 62 {
		t.Errorf("%d word characters, want 62", n)
	}
}
