package ireval

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestJudge(t *testing.T) {
	l2 := func(i int) float64 { return 1 / math.Log2(float64(i+1)) } // gain of rank i
	for _, tc := range []struct {
		name             string
		ranked, relevant []string
		k                int
		rr, ndcg, recall float64
	}{
		{"first", []string{"a", "b", "c"}, []string{"a"}, 10, 1, 1, 1},
		{"third", []string{"x", "y", "a"}, []string{"a"}, 10, 1.0 / 3, l2(3), 1},
		{"beyond k", []string{"x", "y", "a"}, []string{"a"}, 2, 0, 0, 0},
		{"two of three", []string{"a", "x", "b"}, []string{"a", "b", "c"}, 10, 1, (l2(1) + l2(3)) / (l2(1) + l2(2) + l2(3)), 2.0 / 3},
		{"none", []string{"x"}, []string{"a"}, 10, 0, 0, 0},
		{"empty ranking", nil, []string{"a"}, 10, 0, 0, 0},
		{"repeated key counts once", []string{"a", "a"}, []string{"a", "b"}, 10, 1, l2(1) / (l2(1) + l2(2)), 0.5},
		{"more relevant than k", []string{"a", "b"}, []string{"a", "b", "c"}, 2, 1, 1, 2.0 / 3},
	} {
		rr, nd, rc := Judge(tc.ranked, tc.relevant, tc.k)
		if !near(rr, tc.rr) || !near(nd, tc.ndcg) || !near(rc, tc.recall) {
			t.Errorf("%s: rr %v ndcg %v recall %v, want %v %v %v", tc.name, rr, nd, rc, tc.rr, tc.ndcg, tc.recall)
		}
	}
}

func TestEvaluate(t *testing.T) {
	qs := []Query{{"q1", []string{"a"}}, {"q2", []string{"b"}}}
	m, err := Evaluate(qs, 10, func(q string) ([]string, error) {
		if q == "q1" {
			return []string{"a"}, nil
		}
		return []string{"x", "b"}, nil
	})
	if err != nil || m.Queries != 2 || !near(m.MRR, 0.75) || !near(m.Recall, 1) {
		t.Errorf("%+v %v", m, err)
	}
}

func TestSplitAndSample(t *testing.T) {
	var qs []Query
	for i := range 1000 {
		qs = append(qs, Query{Text: fmt.Sprint("query ", i)})
	}
	tune, held := Split(qs)
	if len(tune)+len(held) != 1000 || len(tune) < 400 || len(held) < 400 {
		t.Fatalf("halves of %d and %d", len(tune), len(held))
	}
	for _, q := range tune {
		if slices.ContainsFunc(held, func(h Query) bool { return h.Text == q.Text }) {
			t.Fatalf("%q in both halves", q.Text)
		}
	}
	// The same query lands in the same half whatever the set.
	t2, _ := Split(qs[:100])
	for _, q := range t2 {
		if !slices.ContainsFunc(tune, func(h Query) bool { return h.Text == q.Text }) {
			t.Fatalf("%q changed halves", q.Text)
		}
	}
	s1, s2 := Sample(qs, 100), Sample(reversed(qs), 100)
	if len(s1) != 100 || !slices.EqualFunc(s1, s2, func(a, b Query) bool { return a.Text == b.Text }) {
		t.Error("the sample depends on the order of the set")
	}
}

func reversed(qs []Query) []Query {
	out := slices.Clone(qs)
	slices.Reverse(out)
	return out
}
