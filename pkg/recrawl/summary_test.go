package recrawl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Splitting the pages into shards by host, summarising each and reducing
// gives the lambda_0 of the whole.
func TestSummaryReduce(t *testing.T) {
	for _, obj := range []Objective{Freshness, Harmonic} {
		p := randomProblem(rand.New(rand.NewPCG(11, 12)), 20000, 300, obj)
		whole, err := Solve(p, SolveOptions{SkipRates: true, SkipHosts: true})
		if err != nil {
			t.Fatal(err)
		}
		const shards = 4
		var sums []Summary
		for s := 0; s < shards; s++ {
			ps := &Pages{HostRateOf: func(h string) float64 { return 0 }}
			for j := range p.W {
				if int(p.Host[j])%shards != s {
					continue
				}
				h := ps.HostIndex(fmt.Sprintf("h%d.example", p.Host[j]))
				ps.HostRate[h] = p.HostRate[p.Host[j]]
				ps.Add(PageInput{Host: ps.HostNames[h], W: p.W[j], Delta: p.Delta[j], Tau: 1})
			}
			// Each shard centres its curve on its own estimate for a
			// quarter of the global rate.
			local, err := Solve(ps.Problem(obj, p.Rate/shards), SolveOptions{SkipRates: true, SkipHosts: true})
			if err != nil {
				t.Fatal(err)
			}
			sums = append(sums, Summarize(ps, obj, local.Lambda0))
		}
		got, err := ReduceLambda0(sums, p.Rate)
		if err != nil {
			t.Fatal(err)
		}
		if rel := math.Abs(got-whole.Lambda0) / whole.Lambda0; rel > 0.01 {
			t.Errorf("%v: reduced lambda_0 %v, whole %v (%.2f%% off)", obj, got, whole.Lambda0, 100*rel)
		}
	}
	if _, err := ReduceLambda0(nil, 5); err == nil {
		t.Error("no summaries accepted")
	}
}

// A global budget above what the shards' hosts allow is not an error: every
// page is worth its crawl, lambda_0 = 0.
func TestReduceBudgetAboveDemand(t *testing.T) {
	ps := &Pages{HostRateOf: func(h string) float64 { return 2 }}
	for i := 0; i < 50; i++ {
		ps.Add(PageInput{Host: fmt.Sprintf("h%d.example", i%5), W: 1, Delta: 0.5, Tau: 1})
	}
	s := Summarize(ps, Freshness, 0.1)
	got, err := ReduceLambda0([]Summary{s, s}, 3000) // the hosts allow 20 a day
	if err != nil || got != 0 {
		t.Fatalf("budget 3000 over limits of 20: lambda_0 %v, %v; want 0, nil", got, err)
	}
	if got, err := ReduceLambda0([]Summary{s, s}, 10); err != nil || !(got > 0) {
		t.Fatalf("budget 10 under limits of 20: lambda_0 %v, %v; want > 0", got, err)
	}
}
