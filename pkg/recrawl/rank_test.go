package recrawl

import (
	"math"
	"slices"
	"testing"
)

func TestRankLimits(t *testing.T) {
	ps := &Pages{HostRateOf: func(h string) float64 {
		if h == "slow.example" {
			return 24 // one crawl an hour
		}
		return 0
	}}
	// Ten pages on a slow host (older, so more valuable) and ten on a free one.
	for i := 0; i < 10; i++ {
		ps.Add(PageInput{Host: "slow.example", W: float64(1 + i), Delta: 1, Tau: 3})
		ps.Add(PageInput{Host: "free.example", W: float64(1 + i), Delta: 1, Tau: 2})
	}
	res, err := Rank(ps, RankOptions{Slot: 1.0 / 24, N: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Selected) != 5 {
		t.Fatalf("selected %d, want 5", len(res.Selected))
	}
	perHost := map[int32]int{}
	for i, j := range res.Selected {
		perHost[ps.Host[j]]++
		if i > 0 && res.Value[j] > res.Value[res.Selected[i-1]] {
			t.Errorf("not in decreasing value at %d", i)
		}
		if res.Value[j] < res.Lambda0 {
			t.Errorf("page %d below lambda0", j)
		}
	}
	slow, _ := ps.LookupHost("slow.example")
	if perHost[slow] != 1 || res.HostCap[slow] != 1 {
		t.Errorf("slow host: %d selected, cap %d; want 1 and 1", perHost[slow], res.HostCap[slow])
	}
	if res.SlotLambda[slow] <= 0 {
		t.Errorf("slow host's limit bound, its slot lambda should be positive")
	}
	// The slow host's best page is its heaviest one.
	for _, j := range res.Selected {
		if ps.Host[j] == slow && ps.W[j] != 10 {
			t.Errorf("slow host crawls weight %v, want its best page (10)", ps.W[j])
		}
	}
}

func TestRankCarry(t *testing.T) {
	ps := &Pages{HostRateOf: func(string) float64 { return 6 }} // 0.25 an hour
	for i := 0; i < 4; i++ {
		ps.Add(PageInput{Host: "h", W: 1, Delta: 1, Tau: 3})
	}
	var carry []float64
	crawled := 0
	for slot := 0; slot < 8; slot++ {
		res, err := Rank(ps, RankOptions{Slot: 1.0 / 24, HostCarry: carry, FixLambda0: true})
		if err != nil {
			t.Fatal(err)
		}
		crawled += len(res.Selected)
		carry = res.HostCarry
	}
	if crawled != 2 {
		t.Errorf("8 hourly slots at 6 a day crawled %d pages, want 2", crawled)
	}
}

func TestRankNextFetch(t *testing.T) {
	ps := &Pages{}
	ps.Add(PageInput{Host: "a", W: 1, Delta: 1, Tau: 0.1})
	ps.Add(PageInput{Host: "a", W: 1, Delta: 10, Tau: 0.1}) // w/delta = 0.1 < lambda0
	res, err := Rank(ps, RankOptions{Slot: 1, Lambda0: 0.2, FixLambda0: true, Static: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Selected) != 0 {
		t.Fatalf("selected %v, want none", res.Selected)
	}
	nf := res.NextFetch(ps, Freshness, 0)
	if v := Freshness.Value(1, 1, 0.1+nf); math.Abs(v-0.2) > 1e-9 {
		t.Errorf("at next fetch V = %v, want the threshold 0.2", v)
	}
	if !math.IsInf(res.NextFetch(ps, Freshness, 1), 1) {
		t.Errorf("a page with w/delta below the threshold is never due")
	}
}

// CandidateValues skips the values that cannot reach lambda_0: the plan
// must be the one with every value computed, for both objectives, with
// pages on both sides of the bound, some just at it, tiny and never
// crawled ones among them.
func TestRankCandidateValues(t *testing.T) {
	for _, obj := range []Objective{Freshness, Harmonic} {
		ps := &Pages{HostRateOf: func(h string) float64 { return 400 }}
		for j := 0; j < 20000; j++ {
			f := float64(j)
			tau := 0.001 + math.Mod(f*0.618034, 10)
			switch j % 97 {
			case 0:
				tau = math.Inf(1)
			case 1:
				tau = 1e-9
			}
			ps.Add(PageInput{Host: string(rune('a'+j%26)) + ".example", W: 0.1 + math.Mod(f*0.414214, 3),
				Delta: 0.05 + math.Mod(f*0.732051, 5), Tau: tau})
		}
		opt := RankOptions{Objective: obj, Rate: 4000, Slot: 1.0 / 24}
		all, err := Rank(ps, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.CandidateValues = true
		some, err := Rank(ps, opt)
		if err != nil {
			t.Fatal(err)
		}
		if some.Lambda0 != all.Lambda0 || !slices.Equal(some.Selected, all.Selected) ||
			!slices.Equal(some.HostCandidates, all.HostCandidates) || !slices.Equal(some.SlotLambda, all.SlotLambda) {
			t.Fatalf("%v: the plan differs with CandidateValues", obj)
		}
		skipped, near := 0, 0
		for j, v := range some.Value {
			switch {
			case v == all.Value[j]:
			case v == 0 && all.Value[j] < all.Lambda0:
				skipped++
				if all.Value[j] > all.Lambda0/2 {
					near++
				}
			default:
				t.Fatalf("%v: page %d: value %v, want %v", obj, j, v, all.Value[j])
			}
		}
		if skipped < 1000 || near == 0 {
			t.Errorf("%v: %d values skipped, %d of them over lambda_0/2: the test misses the bound", obj, skipped, near)
		}
		if testing.Verbose() {
			t.Logf("%v: lambda_0 %v, %d values skipped, %d over lambda_0/2", obj, all.Lambda0, skipped, near)
		}
	}
}
