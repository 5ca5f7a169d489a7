// Package recrawl decides when to recrawl web pages so that a search index
// stays as fresh as the crawl budget allows.
//
// It follows "Crawling the internet: data science within a large engineering
// system" (Bill Richoux, 2018): page j of host i has a value w, a Poisson rate
// of meaningful change delta and was last crawled tau ago; host i allows k_i
// crawls a day and the crawler k_0. Maximising the weighted time-averaged
// freshness under those limits gives, by the KKT conditions, a crawl value
//
//	V(tau) = (w/delta)(1 - e^(-delta tau)) - w tau e^(-delta tau)
//
// that grows from 0 towards w/delta; a page is due when V reaches
// lambda_i + lambda_0, the multipliers of its host's and the global limit.
// The package provides the crawl value (Objective), the exact static optimum
// (Solve), the slot-by-slot ranking the article recommends (Rank), change-rate
// estimation from fetch histories (Estimate...) and the per-page record
// parsing shared by the recrawl tool.
//
// A second objective, Harmonic, replaces binary freshness by the harmonic
// staleness of Kolobov et al. (NeurIPS 2019): a page that changed n times
// since it was crawled costs H(n) = 1 + 1/2 + ... + 1/n. Its crawl value is
// unbounded, so every changing page is crawled now and then.
//
// Rates are per day and times in days inside the package; the CLI converts
// from the toolkit's seconds and RFC 3339 times. gonum is not used: the hot
// loops (one inverse per page per solver iteration, ten million pages) need
// allocation-free scalar code with warm starts, and gonum has no scalar root
// finder or exponential integral to offer here.
package recrawl

import (
	"fmt"
	"math"
)

// An Objective is what the crawl schedule maximises.
type Objective int

const (
	// Freshness is the weighted time-averaged probability that the indexed
	// copy matches the page (the article's objective).
	Freshness Objective = iota
	// Harmonic is the weighted time-averaged harmonic staleness of Kolobov
	// et al. 2019, to be minimised; every changing page gets crawled.
	Harmonic
)

// ParseObjective parses "freshness" or "harmonic".
func ParseObjective(s string) (Objective, error) {
	switch s {
	case "freshness", "binary", "":
		return Freshness, nil
	case "harmonic":
		return Harmonic, nil
	}
	return 0, fmt.Errorf("objective %q: want freshness or harmonic", s)
}

func (o Objective) String() string {
	if o == Harmonic {
		return "harmonic"
	}
	return "freshness"
}

// Value is the crawl value V(tau) of a page of weight w and change rate delta
// (per day) last crawled tau days ago. tau may be +Inf (never crawled).
func (o Objective) Value(w, delta, tau float64) float64 {
	if tau <= 0 {
		return 0
	}
	if math.IsInf(tau, 1) {
		return o.MaxValue(w, delta)
	}
	return w / delta * o.unit(delta*tau)
}

// MaxValue is the supremum of V: w/delta for freshness, +Inf for harmonic.
func (o Objective) MaxValue(w, delta float64) float64 {
	if o == Harmonic {
		return math.Inf(1)
	}
	return w / delta
}

// unit is V for w = delta = 1 as a function of x = delta*tau.
func (o Objective) unit(x float64) float64 {
	if o == Harmonic {
		return harmonicUnit(x)
	}
	return freshUnit(x)
}

// freshUnit is g(x) = 1 - (1+x)e^(-x), by its series near 0 where the
// closed form cancels.
func freshUnit(x float64) float64 {
	if x < 0.01 {
		x2 := x * x
		return x2 * (0.5 - x/3 + x2/8 - x2*x/30)
	}
	return -math.Expm1(-x) - x*math.Exp(-x)
}

// harmonicUnit is h(x) = x - 1 + e^(-x).
func harmonicUnit(x float64) float64 {
	if x < 0.01 {
		x2 := x * x
		return x2 * (0.5 - x/6 + x2/24 - x2*x/120)
	}
	return x + math.Expm1(-x)
}

// Interval returns the tau (days) at which V(tau) reaches mu: the optimal
// recrawl interval of a page whose threshold is mu. It is +Inf when V never
// reaches mu (freshness with mu >= w/delta) and 0 for mu <= 0.
func (o Objective) Interval(w, delta, mu float64) float64 {
	x := o.unitInverse(mu*delta/w, 0)
	return x / delta
}

// Rate is 1/Interval: the optimal crawl rate (per day) at threshold mu, 0 for
// a page never worth crawling.
func (o Objective) Rate(w, delta, mu float64) float64 {
	x := o.unitInverse(mu*delta/w, 0)
	if math.IsInf(x, 1) {
		return 0
	}
	return delta / x
}

// unitInverse solves unit(x) = y for x, starting from hint when hint > 0
// (the solver's warm start). It returns 0 for y <= 0 and +Inf when unit never
// reaches y.
func (o Objective) unitInverse(y, hint float64) float64 {
	if !(y > 0) {
		return 0
	}
	if o == Harmonic {
		return harmonicInverse(y, hint)
	}
	if y >= 1 {
		return math.Inf(1)
	}
	return freshInverse(y, hint)
}

func freshInverse(y, x float64) float64 {
	x, _ = freshInverseD(y, x, 1e-8)
	return x
}

// freshInverseD solves g(x) = y by Halley's method (one exp per step) and
// also returns e^(-x), which the solver needs for the derivative. It stops
// after a step smaller than acc*x: Halley's error then is about acc^3.
func freshInverseD(y, x, acc float64) (float64, float64) {
	hinted := x > 0 && !math.IsInf(x, 0)
	if !hinted {
		x = freshGuess(y)
	}
	return freshHalley(y, x, acc, hinted, 0)
}

// freshAt returns g(x) = 1 - (1+x)e^-x and e^-x; below 0.01, g by its
// series (freshUnit), where 1 - (1+x)e^-x loses its digits.
func freshAt(x float64) (g, e float64) {
	e = math.Exp(-x)
	if x < 0.01 {
		return freshUnit(x), e
	}
	return 1 - (1+x)*e, e
}

// expStep returns e^-(x+dx) from e = e^-x: for a short step by e^-dx's
// series (its error under dx^6/720, 1.4e-15 at dx = 0.01), so that the
// solver's warm starts carry their e^-x from pass to pass without an exp;
// for a longer one by exp.
func expStep(e, dx, nx float64) float64 {
	if math.Abs(dx) <= 0.01 {
		return expSeries(e, dx)
	}
	return math.Exp(-nx)
}

// expSeries is expStep's series, small enough to be inlined: in pairs
// (Estrin's scheme), a shorter chain of dependent steps.
func expSeries(e, dx float64) float64 {
	p := dx * dx
	return e * ((1 - dx) + p*((0.5-dx*(1.0/6))+p*(1.0/24-dx*(1.0/120))))
}

// freshHalley is freshInverseD's iteration from step i on.
func freshHalley(y, x, acc float64, hinted bool, i int) (float64, float64) {
	for ; i < 50; i++ {
		g, e := freshAt(x)
		if hinted && i == 0 && (g > 2*y || g < y/2 || 1-g > 2*(1-y) || 1-g < (1-y)/2) {
			// A warm start far from the root would crawl along the flat
			// tail of g; start afresh.
			x = freshGuess(y)
			continue
		}
		f := g - y
		d1 := x * e
		d2 := (1 - x) * e
		nx, ok := halley(x, f, d1, d2)
		if !ok {
			return x, e
		}
		if dx := nx - x; math.Abs(dx) <= acc*x {
			// Halley converges cubically: the error left is ~acc^3.
			return nx, expStep(e, dx, nx)
		}
		x = nx
	}
	return x, math.Exp(-x)
}

// halley is one Halley step from x > 0 for a function at f above its
// target, with first and second derivatives d1 and d2 there; it falls back
// to Newton where Halley's denominator is not positive, keeps the step
// positive, and reports false when neither step can be taken.
func halley(x, f, d1, d2 float64) (float64, bool) {
	var nx float64
	if den := 2*d1*d1 - f*d2; den > 0 {
		nx = x - 2*f*d1/den
	} else if d1 > 0 {
		nx = x - f/d1
	} else {
		return x, false
	}
	if nx <= 0 {
		nx = x / 2
	}
	return nx, true
}

// freshGuess starts the inverse of g from tables accurate to about 1e-6, so
// that one Halley step gives full precision. Below y = 0.3 it tabulates
// x/s against s = sqrt(2y) (g ~ x^2/2 near 0); above, x - t against
// t = -ln(1-y) (x ~ t + ln(1+x) in the tail); both are smooth.
func freshGuess(y float64) float64 {
	if !(y > 0) {
		return 0
	}
	if !(y < 1) {
		return math.Inf(1)
	}
	if y < guessSplit {
		s := math.Sqrt(2 * y)
		return s * interp(&lowTable, s/lowStep)
	}
	t := -math.Log(1 - y)
	if t >= highMax {
		x := t
		for i := 0; i < 3; i++ {
			x = t + math.Log1p(x)
		}
		return x
	}
	return t + interp(&highTable, (t-highMin)/highStep)
}

const (
	guessSplit = 0.3
	tableSize  = 512
	highMax    = 40.0
)

var (
	lowStep, highMin, highStep float64
	lowTable, highTable        [tableSize + 1]float64
)

func interp(t *[tableSize + 1]float64, pos float64) float64 {
	if !(pos >= 0) {
		return t[0]
	}
	i := int(pos)
	if i >= tableSize {
		return t[tableSize]
	}
	f := pos - float64(i)
	return t[i] + f*(t[i+1]-t[i])
}

func init() {
	lowStep = math.Sqrt(2*guessSplit) / tableSize
	for i := range lowTable {
		s := float64(i) * lowStep
		if i == 0 {
			lowTable[i] = 1
			continue
		}
		lowTable[i] = slowFreshInverse(s*s/2) / s
	}
	highMin = -math.Log(1 - guessSplit)
	highStep = (highMax - highMin) / tableSize
	for i := range highTable {
		t := highMin + float64(i)*highStep
		highTable[i] = slowFreshInverse(-math.Expm1(-t)) - t
	}
}

// slowFreshInverse solves g(x) = y by bisection; it builds the tables.
func slowFreshInverse(y float64) float64 {
	lo, hi := 0.0, 1.0
	for freshUnit(hi) < y {
		hi *= 2
	}
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		mid := (lo + hi) / 2
		if freshUnit(mid) < y {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func harmonicInverse(y, x float64) float64 {
	x, _ = harmonicInverseD(y, x)
	return x
}

// harmonicInverseD solves h(x) = x - 1 + e^(-x) = y by Halley's method and
// also returns e^(-x).
func harmonicInverseD(y, x float64) (float64, float64) {
	hinted := x > 0 && !math.IsInf(x, 0)
	if !hinted {
		x = harmonicGuess(y)
	}
	for i := 0; i < 60; i++ {
		e := math.Exp(-x)
		var h float64
		if x < 0.01 {
			h = harmonicUnit(x)
		} else {
			h = x - 1 + e
		}
		if hinted && i == 0 && (h > 2*y || h < y/2) {
			x = harmonicGuess(y)
			continue
		}
		f := h - y
		d1 := 1 - e
		if x < 1e-8 {
			d1 = x
		}
		d2 := e
		nx, ok := halley(x, f, d1, d2)
		if !ok {
			return x, e
		}
		if dx := nx - x; math.Abs(dx) <= 1e-8*x {
			// Halley converges cubically: the error left is ~1e-24.
			return nx, e * (1 - dx)
		}
		x = nx
	}
	return x, math.Exp(-x)
}

func harmonicGuess(y float64) float64 {
	if y < 0.5 {
		s := math.Sqrt(2 * y)
		return s * (1 + s/6)
	}
	return y + 1 - math.Exp(-(y + 1))
}

// Score is the page's time-averaged objective when it is crawled every
// interval days: the probability of being fresh for Freshness (0 for an
// infinite interval), the expected harmonic staleness for Harmonic (+Inf
// for an infinite interval).
func (o Objective) Score(delta, interval float64) float64 {
	x := delta * interval
	if o == Harmonic {
		if math.IsInf(x, 1) {
			return math.Inf(1)
		}
		if x == 0 {
			return 0
		}
		return IntegralEin(x) / x
	}
	if math.IsInf(x, 1) {
		return 0
	}
	if x < 1e-9 {
		return 1
	}
	return -math.Expm1(-x) / x
}

// Staleness returns the integral over an age range [a, b] (days since the
// last crawl) of the expected loss: the probability of being stale for
// Freshness, the expected harmonic number of changes for Harmonic. The
// simulator accounts a crawl gap with it.
func (o Objective) Staleness(delta, a, b float64) float64 {
	if o == Harmonic {
		return (IntegralEin(delta*b) - IntegralEin(delta*a)) / delta
	}
	// integral of 1 - e^(-delta t) from a to b.
	return (b - a) - (math.Exp(-delta*a)-math.Exp(-delta*b))/delta
}

// Ein is the entire exponential integral, Ein(x) = integral_0^x (1-e^-t)/t dt,
// which is also E[H(N)] for N ~ Poisson(x): the expected harmonic staleness of
// a page that had x expected changes since its last crawl.
func Ein(x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x < 2 {
		// Alternating series sum (-1)^(k+1) x^k / (k k!).
		sum, term := 0.0, 1.0
		for k := 1; k < 60; k++ {
			term *= x / float64(k)
			t := term / float64(k)
			if k%2 == 0 {
				sum -= t
			} else {
				sum += t
			}
			if t < 1e-17*sum {
				break
			}
		}
		return sum
	}
	return eulerGamma + math.Log(x) + e1(x)
}

const eulerGamma = 0.57721566490153286061

// e1 is the exponential integral E1(x) for x >= 2, by its continued fraction
// (modified Lentz).
func e1(x float64) float64 {
	const tiny = 1e-300
	b := x + 1
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 200; i++ {
		an := -float64(i * i)
		b += 2
		d = 1 / (an*d + b)
		c = b + an/c
		del := c * d
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return h * math.Exp(-x)
}

// IntegralEin is integral_0^x Ein(u) du = x Ein(x) - x + 1 - e^(-x).
func IntegralEin(x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x < 0.01 {
		// Ein(u) ~ u - u^2/4 + u^3/18: integral x^2/2 - x^3/12 + x^4/72.
		return x * x * (0.5 - x/12 + x*x/72)
	}
	return x*Ein(x) - x - math.Expm1(-x)
}
