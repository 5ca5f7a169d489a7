package recrawl

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Cho and Garcia-Molina, "Effective page refresh policies for web crawlers"
// (2003), Table/Example: five equal-weight pages changing 1..5 times a day,
// five crawls a day in total.
func TestSolveChoGarciaMolina(t *testing.T) {
	p := &Problem{
		W:        []float64{1, 1, 1, 1, 1},
		Delta:    []float64{1, 2, 3, 4, 5},
		Host:     []int32{0, 1, 2, 3, 4},
		HostRate: []float64{inf, inf, inf, inf, inf},
		Rate:     5,
	}
	s, err := Solve(p, SolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.15, 1.36, 1.35, 1.14, 0}
	sum := 0.0
	for j, r := range s.Rate {
		if math.Abs(r-want[j]) > 0.005 {
			t.Errorf("page %d: rate %.4f, want %.2f", j, r, want[j])
		}
		sum += r
	}
	if math.Abs(sum-5) > 1e-6 {
		t.Errorf("rates sum to %v, want 5", sum)
	}
	if s.Never != 1 {
		t.Errorf("never = %d, want 1 (the page changing 5 times a day)", s.Never)
	}
	// The fifth page is never worth it: w/delta = 0.2 is below lambda_0.
	if !(s.Lambda0 > 0.2) {
		t.Errorf("lambda0 = %v, want above w/delta = 0.2 of the fastest page", s.Lambda0)
	}
}

var inf = math.Inf(1)

// The KKT conditions hold: each positive rate sits where V(1/rho) equals its
// host's threshold, constrained hosts use exactly k_i and the total is k_0.
func TestSolveKKT(t *testing.T) {
	for _, obj := range []Objective{Freshness, Harmonic} {
		p := randomProblem(rand.New(rand.NewPCG(1, 2)), 3000, 40, obj)
		s, err := Solve(p, SolveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		host := make([]float64, len(p.HostRate))
		total := 0.0
		for j, r := range s.Rate {
			host[p.Host[j]] += r
			total += r
			th := s.Threshold(p.Host[j])
			if r == 0 {
				if obj == Harmonic || p.W[j]/p.Delta[j] > th*(1+1e-9) {
					t.Fatalf("%v: page %d has rate 0 but w/delta %v > threshold %v", obj, j, p.W[j]/p.Delta[j], th)
				}
				continue
			}
			if v := obj.Value(p.W[j], p.Delta[j], 1/r); math.Abs(v-th) > 1e-7*th {
				t.Fatalf("%v: page %d: V(1/rho) = %v, threshold %v", obj, j, v, th)
			}
		}
		constrained := 0
		for i, k := range p.HostRate {
			if host[i] > k*(1+1e-7) {
				t.Errorf("%v: host %d crawled %v > limit %v", obj, i, host[i], k)
			}
			if s.HostLambda[i] > 0 {
				constrained++
				if math.Abs(host[i]-k) > 1e-7*k {
					t.Errorf("%v: constrained host %d uses %v of %v", obj, i, host[i], k)
				}
			}
		}
		if constrained == 0 || constrained == len(p.HostRate) {
			t.Errorf("%v: %d of %d hosts constrained; the test wants a mix", obj, constrained, len(p.HostRate))
		}
		if math.Abs(total-p.Rate) > 1e-7*p.Rate {
			t.Errorf("%v: total rate %v, want %v", obj, total, p.Rate)
		}
		// Optimality: moving rate between two pages of unconstrained hosts
		// can not improve the objective.
		if obj == Freshness {
			base := objective(p, s.Rate)
			for trial := 0; trial < 50; trial++ {
				a, b := trial*37%len(s.Rate), trial*91%len(s.Rate)
				if s.Rate[a] == 0 || s.HostLambda[p.Host[a]] > 0 || s.HostLambda[p.Host[b]] > 0 || a == b {
					continue
				}
				r := append([]float64(nil), s.Rate...)
				eps := s.Rate[a] * 0.01
				r[a] -= eps
				r[b] += eps
				if objective(p, r) > base+1e-12 {
					t.Fatalf("moving rate from page %d to %d improves the objective", a, b)
				}
			}
		}
	}
}

func objective(p *Problem, rate []float64) float64 {
	sum := 0.0
	for j, r := range rate {
		if r > 0 {
			sum += p.W[j] * p.Objective.Score(p.Delta[j], 1/r)
		}
	}
	return sum
}

func randomProblem(rng *rand.Rand, n, hosts int, obj Objective) *Problem {
	p := &Problem{Objective: obj, HostRate: make([]float64, hosts)}
	for j := 0; j < n; j++ {
		p.W = append(p.W, math.Exp(rng.NormFloat64()))
		p.Delta = append(p.Delta, math.Exp(rng.Float64()*math.Log(100))*0.05)
		p.Host = append(p.Host, int32(rng.IntN(hosts)))
	}
	for i := range p.HostRate {
		if i%3 == 0 {
			p.HostRate[i] = inf
		} else {
			p.HostRate[i] = float64(n) / float64(hosts) * (0.05 + rng.Float64())
		}
	}
	p.Rate = float64(n) * 0.4
	return p
}

func TestSolveHostLimitsOnly(t *testing.T) {
	p := &Problem{W: []float64{1, 1, 2}, Delta: []float64{1, 2, 1}, Host: []int32{0, 0, 1}, HostRate: []float64{3, 1}}
	s, err := Solve(p, SolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lambda0 != 0 {
		t.Errorf("lambda0 = %v without a global limit", s.Lambda0)
	}
	if got := s.Rate[0] + s.Rate[1]; math.Abs(got-3) > 1e-6 {
		t.Errorf("host 0 rate %v, want 3", got)
	}
	if math.Abs(s.Rate[2]-1) > 1e-6 {
		t.Errorf("host 1 rate %v, want 1", s.Rate[2])
	}
	p.HostRate[1] = inf
	if _, err := Solve(p, SolveOptions{}); err != ErrUnbounded {
		t.Errorf("unlimited host without a global rate: err %v, want ErrUnbounded", err)
	}
}

func TestValueInverse(t *testing.T) {
	for _, obj := range []Objective{Freshness, Harmonic} {
		for _, x := range []float64{1e-6, 1e-3, 0.009, 0.011, 0.1, 1, 3, 10, 20} {
			y := obj.unit(x)
			got := obj.unitInverse(y, 0)
			if math.Abs(got-x) > 1e-8*x {
				t.Errorf("%v: inverse(unit(%v)) = %v", obj, x, got)
			}
			if got := obj.unitInverse(y, x*3); math.Abs(got-x) > 1e-8*x {
				t.Errorf("%v: warm inverse(unit(%v)) = %v", obj, x, got)
			}
		}
	}
	// V(0) = 0, V grows to w/delta.
	if v := Freshness.Value(2, 4, 0); v != 0 {
		t.Errorf("V(0) = %v", v)
	}
	if v := Freshness.Value(2, 4, 100); math.Abs(v-0.5) > 1e-12 {
		t.Errorf("V(100) = %v, want w/delta = 0.5", v)
	}
	// The closed form matches the article's formula.
	w, d, tau := 3.0, 0.7, 2.5
	want := w/d*(1-math.Exp(-d*tau)) - w*tau*math.Exp(-d*tau)
	if got := Freshness.Value(w, d, tau); math.Abs(got-want) > 1e-12 {
		t.Errorf("V = %v, want %v", got, want)
	}
	if !math.IsInf(Freshness.Interval(1, 1, 1), 1) {
		t.Errorf("interval above w/delta should be infinite")
	}
}

func TestEin(t *testing.T) {
	// Ein(x) = E[H(N)], N ~ Poisson(x): check by summing the series.
	for _, x := range []float64{0.1, 1, 1.99, 2.01, 5, 20} {
		want, p, h := 0.0, math.Exp(-x), 0.0
		for n := 0; n < 400; n++ {
			if n > 0 {
				p *= x / float64(n)
				h += 1 / float64(n)
			}
			want += p * h
		}
		if got := Ein(x); math.Abs(got-want) > 1e-10*math.Max(1, want) {
			t.Errorf("Ein(%v) = %v, want %v", x, got, want)
		}
	}
	// IntegralEin is the antiderivative.
	for _, x := range []float64{0.005, 0.5, 3, 12} {
		h := 1e-5
		d := (IntegralEin(x+h) - IntegralEin(x-h)) / (2 * h)
		if math.Abs(d-Ein(x)) > 1e-6 {
			t.Errorf("d/dx IntegralEin(%v) = %v, Ein = %v", x, d, Ein(x))
		}
	}
}

// The rough passes that start the search for lambda_0 (one Halley step a
// page) leave no trace in the result: on half a million pages (enough for
// the sampled start), lambda_0 meets the global budget to the solver's
// tolerance in exact arithmetic, agrees with a search made of exact passes
// only to that tolerance, and the slot's selection is the same page for
// page.
func TestSolveRoughPassesExactResult(t *testing.T) {
	n := 500_000
	rng := rand.New(rand.NewPCG(3, 4))
	p := randomProblem(rng, n, 5000, Freshness)
	ps := &Pages{W: p.W, Delta: p.Delta, Host: p.Host, HostRate: p.HostRate,
		HostNames: make([]string, len(p.HostRate)), Tau: make([]float64, n)}
	for j := range ps.Tau {
		ps.Tau[j] = rng.Float64() * 10
	}
	opt := RankOptions{Rate: p.Rate, Slot: 1.0 / 24}
	solveBoth := func() (rough, exact *RankResult) {
		t.Helper()
		defer func() { exactOnly = false }()
		var err error
		for _, only := range []bool{false, true} {
			exactOnly = only
			res, e := Rank(ps, opt)
			if e != nil {
				err = e
			}
			if only {
				exact = res
			} else {
				rough = res
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		return rough, exact
	}
	rough, exact := solveBoth()
	if d := math.Abs(rough.Lambda0/exact.Lambda0 - 1); d > 1e-7 {
		t.Errorf("lambda_0 %v with rough passes, %v with exact ones only", rough.Lambda0, exact.Lambda0)
	}
	// The budget at lambda_0, each page's rate solved afresh.
	use := make([]float64, len(p.HostRate))
	for j := range p.W {
		use[p.Host[j]] += Freshness.Rate(p.W[j], p.Delta[j], rough.Lambda0)
	}
	f := 0.0
	for i, u := range use {
		f += math.Min(u, p.HostRate[i])
	}
	if r := f/p.Rate - 1; r > 1e-9 || r < -2e-8 {
		t.Errorf("sum of min(k_i, U_i(lambda_0)) = %v, budget %v (relative %v)", f, p.Rate, r)
	}
	if !slices.Equal(rough.Selected, exact.Selected) || len(rough.Selected) == 0 {
		t.Errorf("selections differ: %d and %d pages", len(rough.Selected), len(exact.Selected))
	}
}
