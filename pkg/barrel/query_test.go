package barrel

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

func TestParseSyntax(t *testing.T) {
	for _, c := range []struct {
		q    string
		want syntax
	}{
		{"json encoder", syntax{text: "json encoder"}},
		{`"json encoder" -pickle site:Docs.Python.org.`, syntax{text: "json encoder", phrases: []string{"json encoder"}, minus: []string{"pickle"}, sites: []string{"docs.python.org"}}},
		{`a OR b c`, syntax{text: "a b c", or: [][]string{{"a", "b"}}}},
		{`a OR b OR c d OR e`, syntax{text: "a b c d e", or: [][]string{{"a", "b", "c"}, {"d", "e"}}}},
		{`built-in - functions`, syntax{text: "built-in - functions"}}, // a dash inside a word or alone is text
		{`-"rock garden" moss site:https://a.test/x`, syntax{text: "moss", minus: []string{"rock garden"}, sites: []string{"a.test"}}},
		{`or and`, syntax{text: "or and"}}, // only upper-case OR is the operator
	} {
		got, err := parseSyntax(c.q)
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.q, *got, c.want)
		}
	}
	for q, want := range map[string]string{
		`"json encoder`:     "unbalanced quote",
		`json ""`:           "empty phrase",
		`-json -pickle`:     "only excluded words",
		`site:a.test`:       "only site:a.test",
		`OR json`:           "OR needs a word before it",
		`json OR`:           "OR needs a word after it",
		`json OR OR pickle`: "OR needs a word after it",
		`json OR -pickle`:   "OR needs a word after it",
		`site: json`:        "site: needs a host",
	} {
		_, err := parseSyntax(q)
		if _, ok := err.(*QueryError); !ok || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a QueryError saying %q", q, err, want)
		}
	}
}

// The hand-set weights as a model rank as the weights do; a model file
// reads back as written; the prior never adds more than its weight
// times the text score.
func TestModel(t *testing.T) {
	dir := t.TempDir()
	site := synth.New(400, 300, 7)
	buildSynth(t, dir, site, 400)
	idx := open(t, dir)
	hand := HandModel(&DefaultWeights)
	for _, q := range site.Queries(30) {
		a, err := idx.Search(q, SearchOptions{N: 10, NoSnippets: true, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := idx.Search(q, SearchOptions{N: 10, NoSnippets: true, Model: &hand})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Results) != len(b.Results) {
			t.Fatalf("%q: %d and %d results", q, len(a.Results), len(b.Results))
		}
		for i := range a.Results {
			if a.Results[i].Doc != b.Results[i].Doc || a.Results[i].Score != b.Results[i].Score {
				t.Errorf("%q result %d: %+v with the weights, %+v with their model", q, i, a.Results[i], b.Results[i])
			}
			ex := a.Results[i].Explain
			if ex.RankPart > DefaultWeights.Rank*ex.IR+1e-9 || ex.Prior < 0 || ex.Prior >= 1 {
				t.Errorf("%q result %d: rank part %g over %g · ir %g (prior %g)", q, i, ex.RankPart, DefaultWeights.Rank, ex.IR, ex.Prior)
			}
		}
	}
	m := Model{Prior: 0.3, Note: "a test\nof two lines"}
	for i := range m.W {
		m.W[i] = float64(i) / 7
	}
	for i := range m.D {
		m.D[i] = float64(i+1) / 3
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "model.txt")
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadModel(name)
	if err != nil {
		t.Fatal(err)
	}
	if got.W != m.W || got.D != m.D || got.Prior != m.Prior {
		t.Fatalf("read back %+v, wrote %+v", got, m)
	}
	for text, want := range map[string]string{"text 1\nprior 2\n": "prior 2: want 0 to 1", "text x\n": "want \"name weight\"", "text 1\ntext 2\n": "text given twice", "# nothing\n": "no weights"} {
		os.WriteFile(name, []byte(text), 0o644)
		if _, err := ReadModel(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func TestSpelledOut(t *testing.T) {
	for _, c := range []struct {
		query string
		stop  []string // the words spelledOut makes stop words
	}{
		{"Python Enhancement Proposals PEP 617", []string{"Python", "Enhancement", "Proposals"}},
		{"PEP 8 Python Enhancement Proposals", []string{"Python", "Enhancement", "Proposals"}},
		{"PEP Python Enhancement Proposals", nil}, // no other word: pages holding only the spelt-out words stay matches
		{"New York NY", nil},
		{"portable document format PDF files", []string{"portable", "document", "format"}},
		{"python enhancement proposals pep", nil},                  // no acronym in capitals
		{"Python Enhancement PEP", nil},                            // too few words
		{"Python PEP Enhancement Proposals", nil},                  // the words are not consecutive
		{"Hypertext Markup HTTP", nil},                             // other letters
		{"Java Script JS and the DOM", []string{"Java", "Script"}}, // a stop word is not a word of the acronym
	} {
		an := analysis.New(analysis.Options{})
		terms := queryTerms(an, c.query)
		before := map[string]bool{}
		for _, t := range terms {
			before[t.word] = t.stop
		}
		spelledOut(terms)
		var got []string
		for _, t := range terms {
			if t.stop && !before[t.word] {
				got = append(got, t.word)
			}
		}
		if !slices.Equal(got, c.stop) {
			t.Errorf("%q: spelt out %q, want %q", c.query, got, c.stop)
		}
	}
}
