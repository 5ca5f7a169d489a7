// Package ireval measures ranking against human relevance judgments: a
// judged query set (queries, each with the pages judged relevant), the
// metrics MRR@k, nDCG@k with binary gains and Recall@k, and a plain BM25
// ranker to compare with. The judged sets are built from sources that do
// not depend on page titles: a Sphinx site's own index of terms
// (LoadGenIndex) and generated Russian pages with the morphological forms
// of their words (RussianSet).
//
// Everything here is importable so that other rankers (a separate bench
// module measuring bleve) are judged on the same queries by the same code.
package ireval

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// Query is a judged query: its text and the keys (page paths or URLs) of
// the pages judged relevant.
type Query struct {
	Text     string
	Relevant []string
}

// Metrics are means over a query set.
type Metrics struct {
	Queries int
	MRR     float64 // mean reciprocal rank of the first relevant result in the top K
	NDCG    float64 // mean nDCG@K, binary gains
	Recall  float64 // mean share of the relevant pages in the top K
}

// Judge scores one ranked list of keys against the relevant ones, at
// cut-off k: reciprocal rank, nDCG with binary gains, and recall.
func Judge(ranked []string, relevant []string, k int) (rr, ndcg, recall float64) {
	if len(relevant) == 0 {
		return 0, 0, 0
	}
	dcg, found := 0.0, 0
	seen := map[string]bool{}
	for i, key := range ranked[:min(k, len(ranked))] {
		if seen[key] || !slices.Contains(relevant, key) {
			continue
		}
		seen[key] = true
		if rr == 0 {
			rr = 1 / float64(i+1)
		}
		dcg += 1 / math.Log2(float64(i+2))
		found++
	}
	idcg := 0.0
	for i := range min(k, len(relevant)) {
		idcg += 1 / math.Log2(float64(i+2))
	}
	return rr, dcg / idcg, float64(found) / float64(len(relevant))
}

// Evaluate runs every query through search (which returns the keys of its
// ranked results) and returns the mean metrics at cut-off k.
func Evaluate(queries []Query, k int, search func(q string) ([]string, error)) (Metrics, error) {
	m := Metrics{Queries: len(queries)}
	for _, q := range queries {
		ranked, err := search(q.Text)
		if err != nil {
			return m, err
		}
		rr, nd, rc := Judge(ranked, q.Relevant, k)
		m.MRR += rr
		m.NDCG += nd
		m.Recall += rc
	}
	if n := float64(len(queries)); n > 0 {
		m.MRR /= n
		m.NDCG /= n
		m.Recall /= n
	}
	return m, nil
}

// Split divides queries deterministically into a tuning half and a
// held-out half by a hash of their text, so a query lands in the same
// half whatever else the set holds.
func Split(queries []Query) (tuning, heldOut []Query) {
	for _, q := range queries {
		if hashOf(q.Text)&1 == 0 {
			tuning = append(tuning, q)
		} else {
			heldOut = append(heldOut, q)
		}
	}
	return tuning, heldOut
}

// Sample keeps n queries, chosen by a hash of their text (so the same set
// gives the same sample), in the order of that hash.
func Sample(queries []Query, n int) []Query {
	out := slices.Clone(queries)
	slices.SortFunc(out, func(a, b Query) int {
		ha, hb := hashOf("sample:"+a.Text), hashOf("sample:"+b.Text)
		switch {
		case ha < hb:
			return -1
		case ha > hb:
			return 1
		}
		return strings.Compare(a.Text, b.Text)
	})
	return out[:min(n, len(out))]
}

// hashOf is a well-mixed hash of s (FNV alone keeps strings that differ
// in their last bytes close together).
func hashOf(s string) uint64 {
	sum := sha256.Sum256([]byte("crawlkit-ireval:" + s))
	return binary.BigEndian.Uint64(sum[:8])
}

// LoadJudgments reads a judged query set from a text file: one query a
// line, its text then the keys of its relevant pages (URL paths without
// the leading "/", or whole URLs), separated by tabs; blank lines and
// lines led by '#' are skipped.
func LoadJudgments(name string) ([]Query, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []Query
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 2 || strings.TrimSpace(f[0]) == "" {
			return nil, fmt.Errorf("%s: line %d: want a query and its relevant pages, separated by tabs", name, n+1)
		}
		q := Query{Text: strings.TrimSpace(f[0])}
		for _, k := range f[1:] {
			if k = strings.TrimSpace(k); k != "" {
				q.Relevant = append(q.Relevant, strings.TrimPrefix(PathKey(k), "/"))
			}
		}
		out = append(out, q)
	}
	return out, nil
}
