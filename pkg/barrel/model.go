package barrel

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// The features of a page for a query, the inputs of a learnt ranking.
const (
	FeatText       = iota // the hand-weighted BM25F over every hit type (IR1)
	FeatProximity         // proximity bin weight times the words' idf (IR2 before ProxScale)
	FeatTitleMatch        // title match before TitleMatch
	FeatTitleLead         // query words among the title's first words, idf share
	FeatTitle             // BM25 of the title hits alone
	FeatAnchor            // BM25 of the anchor hits alone
	FeatHeading           // BM25 of the heading and bold hits alone
	FeatBody              // BM25 of the plain text hits, length-normalised
	FeatURL               // BM25 of the URL hits alone
	FeatCoord             // share of the query's words the page holds
	FeatCapital           // BM25 of the capitalised hits of the words the query capitalises
	FeatDef               // idf of the query's words if the page defines them all (its definition hits)
	FeatEmph              // idf of the query's words if the page sets them all off in one run of <em>, <i>, <dfn>, <strong> or <b> (its emphasis hits)
	FeatDfn               // the same for a run of a definition's markup (<dfn>, <em class="dfn">)
	NumFeatures
)

// FeatureNames name the features in model files and --explain.
var FeatureNames = [NumFeatures]string{"text", "proximity", "title_match", "title_lead", "title", "anchor", "heading", "body", "url", "coordination", "capital", "definition", "emphasis", "dfn"}

// The derived features of a learnt model: transforms and products of
// the features above, so that a linear model can weigh a feature less as
// it grows or one feature by another. Each is non-decreasing in every
// feature (all are 0 or above), so the search's score bounds, computed
// from bounds of the features, still bound them.
const (
	DerivLogText    = iota // ln(1 + text): more hits of the words count less and less
	DerivSqrtBody          // √body
	DerivTitleSq           // title_match²: a title that is the query weighs far more than one holding it
	DerivDefTitle          // definition · title_match: the page titled with the words defines them too
	DerivTitleCoord        // title_match · coordination: a title counts more when the page holds the whole query
	NumDerived
)

// DerivedNames name the derived features in model files.
var DerivedNames = [NumDerived]string{"log_text", "sqrt_body", "title_match_sq", "definition_x_title", "title_x_coordination"}

// Derived computes the derived features of f.
func Derived(f *[NumFeatures]float64) [NumDerived]float64 {
	return [NumDerived]float64{
		DerivLogText:    math.Log1p(f[FeatText]),
		DerivSqrtBody:   math.Sqrt(f[FeatBody]),
		DerivTitleSq:    f[FeatTitleMatch] * f[FeatTitleMatch],
		DerivDefTitle:   f[FeatDef] * f[FeatTitleMatch],
		DerivTitleCoord: f[FeatTitleMatch] * f[FeatCoord],
	}
}

// Model is a learnt ranking: the text score is the weighted sum of the
// features, multiplied by 1 + Prior·p as with Weights.Rank (the prior
// stays bounded in a learnt model too).
type Model struct {
	W     [NumFeatures]float64
	D     [NumDerived]float64 // the derived features' weights
	Prior float64
	Note  string // a comment saying how the model was made
}

// HandModel is the model the hand-set weights w amount to.
func HandModel(w *Weights) Model {
	var m Model
	m.W[FeatText] = 1
	m.W[FeatProximity] = w.ProxScale
	m.W[FeatTitleMatch] = w.TitleMatch
	m.W[FeatTitleLead] = w.TitleLead
	m.W[FeatDef] = w.Def
	m.Prior = w.Rank
	return m
}

// fields reports whether the model reads the per-field features, which
// cost a little more to compute (the definition feature is computed
// always).
func (m *Model) fields() bool {
	if m.derives() {
		return true
	}
	for f := FeatTitle; f < NumFeatures; f++ {
		if f != FeatDef && m.W[f] != 0 {
			return true
		}
	}
	return false
}

// derives reports whether a derived feature weighs.
func (m *Model) derives() bool {
	for _, w := range m.D {
		if w != 0 {
			return true
		}
	}
	return false
}

// Score combines a page's features and prior p (in [0, 1)).
func (m *Model) Score(f *[NumFeatures]float64, p float64) float64 {
	s := 0.0
	for i, w := range m.W {
		s += w * f[i]
	}
	if m.derives() {
		d := Derived(f)
		for i, w := range m.D {
			s += w * d[i]
		}
	}
	return s * (1 + m.Prior*p)
}

// WriteTo writes m as text: a comment, then one "name weight" line per
// feature and the prior, in a fixed order.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	b.WriteString("# barrel ranking model: score = (sum of weight·feature) · (1 + prior·p)\n")
	if m.Note != "" {
		for _, l := range strings.Split(m.Note, "\n") {
			b.WriteString("# " + l + "\n")
		}
	}
	for i, name := range FeatureNames {
		fmt.Fprintf(&b, "%s %s\n", name, strconv.FormatFloat(m.W[i], 'g', -1, 64))
	}
	for i, name := range DerivedNames {
		if m.D[i] != 0 { // a model without them reads as before
			fmt.Fprintf(&b, "%s %s\n", name, strconv.FormatFloat(m.D[i], 'g', -1, 64))
		}
	}
	fmt.Fprintf(&b, "prior %s\n", strconv.FormatFloat(m.Prior, 'g', -1, 64))
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// ReadModel reads a model file written by WriteTo: "name weight" lines,
// comments led by '#'. A feature not named weighs 0.
func ReadModel(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &Model{}
	sc := bufio.NewScanner(f)
	seen := map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if !ok || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: line %d: want \"name weight\", got %q", path, n, line)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: line %d: %s given twice", path, n, name)
		}
		seen[name] = true
		if name == "prior" {
			if v < 0 || v > 1 {
				return nil, fmt.Errorf("%s: line %d: prior %g: want 0 to 1 (the prior lifts a score by at most that share)", path, n, v)
			}
			m.Prior = v
			continue
		}
		if d := derivedIndex(name); d >= 0 {
			m.D[d] = v
			continue
		}
		i := featureIndex(name)
		if i < 0 {
			return nil, fmt.Errorf("%s: line %d: unknown feature %q (known: %s, prior)", path, n, name, strings.Join(append(FeatureNames[:], DerivedNames[:]...), ", "))
		}
		m.W[i] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("%s: no weights", path)
	}
	return m, nil
}

func derivedIndex(name string) int {
	for i, n := range DerivedNames {
		if n == name {
			return i
		}
	}
	return -1
}

func featureIndex(name string) int {
	for i, n := range FeatureNames {
		if n == name {
			return i
		}
	}
	return -1
}

// priorOf maps log2(1 + PageRank·N) into [0, 1).
func priorOf(rankLog float64) float64 {
	return rankLog / (1 + rankLog)
}
