package queue

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func open(t testing.TB, path string, opt Options) *Queue {
	t.Helper()
	q, err := Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func batchID(i int, at time.Time) string {
	return fmt.Sprintf("%06d-%s", i, at.UTC().Format("20060102T150405Z"))
}

// world is a seeded crawl: hosts, pages with change rates, digests that
// change as a Poisson process.
type world struct {
	rng     *rand.Rand
	pages   []string
	rate    []float64
	version []int
	changed []time.Time
}

func newWorld(seed uint64, n, hosts int) *world {
	w := &world{rng: rand.New(rand.NewPCG(seed, seed+1))}
	for i := 0; i < n; i++ {
		w.pages = append(w.pages, fmt.Sprintf("http://h%d.example/p%d", i%hosts, i))
		w.rate = append(w.rate, math.Exp(w.rng.Float64()*4-3))
		w.version = append(w.version, 0)
		w.changed = append(w.changed, t0)
	}
	return w
}

// fetch returns page i's fetch record at time at, advancing its version.
func (w *world) fetch(i int, at time.Time) Fetch {
	for {
		gap := w.rng.ExpFloat64() / w.rate[i] * float64(24*time.Hour)
		next := w.changed[i].Add(time.Duration(gap))
		if next.After(at) {
			break
		}
		w.changed[i] = next
		w.version[i]++
	}
	u := w.pages[i]
	return Fetch{URL: u, Host: u[7 : strings.IndexByte(u[7:], '/')+7], At: at, Status: 200,
		Digest: fmt.Sprintf("sha1:%d-%d", i, w.version[i])}
}

// Applying a fetch history batch by batch gives the change rate Estimate
// gives from the whole history at once.
func TestApplyMatchesEstimate(t *testing.T) {
	w := newWorld(1, 40, 4)
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{})
	hist := make([][]Fetch, len(w.pages))
	at := t0
	for turn := 0; turn < 120; turn++ {
		at = at.Add(time.Duration(1+w.rng.IntN(20)) * time.Hour)
		var b Batch
		b.Now = at
		for i := range w.pages {
			if w.rng.IntN(3) == 0 {
				f := w.fetch(i, at.Add(time.Duration(i)*time.Second))
				b.Fetches = append(b.Fetches, f)
				hist[i] = append(hist[i], f)
			}
		}
		if _, err := q.Apply(batchID(turn, at), b); err != nil {
			t.Fatal(err)
		}
	}
	var urls []string
	urls = append(urls, w.pages...)
	xs, err := q.Explain(urls, NextOptions{Now: at, N: 1})
	if err != nil {
		t.Fatal(err)
	}
	prior := recrawl.Prior{Rate: 0.2, Days: 7, MinHistory: 5}
	for i, x := range xs {
		var o recrawl.Observations
		for j := 1; j < len(hist[i]); j++ {
			o.Gaps = append(o.Gaps, hist[i][j].At.Sub(hist[i][j-1].At).Hours()/24)
			o.Changed = append(o.Changed, hist[i][j].Digest != hist[i][j-1].Digest)
		}
		want, method := recrawl.Estimate(o, prior)
		if math.Abs(x.Delta-want) > 1e-3*want || x.Prior != (method == recrawl.MethodPrior) || x.Fetches != len(hist[i]) {
			t.Errorf("%s: state rate %v (prior %v, %d fetches), history %v (%s, %d fetches)", x.URL, x.Delta, x.Prior, x.Fetches, want, method, len(hist[i]))
		}
	}
}

// bruteNext is Next by reading every page: the same selection rules.
func bruteNext(t *testing.T, q *Queue, opt NextOptions) []Candidate {
	t.Helper()
	l0, err := q.Lambda0(opt)
	if err != nil {
		t.Fatal(err)
	}
	var all []Candidate
	db := q.db
	err = db.View(func(tx *boltTx) error {
		return tx.Bucket(bPages).ForEach(func(k, v []byte) error {
			p, err := decodePage(v)
			if err != nil {
				return err
			}
			if p.blockedUntil() > opt.Now.Unix() {
				return nil
			}
			c := p.candidate(string(k), opt.Now.Unix())
			if c.Value > 0 && c.Value >= l0 {
				all = append(all, c)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(all, func(a, b Candidate) int { return better(&a, &b) })
	taken := map[string]int{}
	var out []Candidate
	for _, c := range all {
		if len(out) == opt.N {
			break
		}
		if k := opt.HostRate(c.Host); k > 0 && taken[c.Host] >= int(math.Floor(k*opt.Slot+1e-9)) {
			continue
		}
		taken[c.Host]++
		out = append(out, c)
	}
	return out
}

// Next, which reads only the cells near the cut, takes exactly the pages a
// full scan would, and reads far fewer entries than there are pages.
func TestNextEqualsFullScan(t *testing.T) {
	w := newWorld(2, 3000, 30)
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{NoSync: true})
	at := t0
	rng := rand.New(rand.NewPCG(9, 9))
	for turn := 0; turn < 40; turn++ {
		at = at.Add(time.Hour)
		b := Batch{Now: at}
		for k := 0; k < 100; k++ {
			i := rng.IntN(len(w.pages))
			f := w.fetch(i, at)
			f.Links = []string{fmt.Sprintf("http://h%d.example/new%d", rng.IntN(40), rng.IntN(5000))}
			b.Fetches = append(b.Fetches, f)
			b.Weights = append(b.Weights, Weight{URL: w.pages[i], Host: f.Host, Importance: math.Exp(rng.NormFloat64())})
		}
		if _, err := q.Apply(batchID(turn, at), b); err != nil {
			t.Fatal(err)
		}
	}
	limits := func(h string) float64 {
		if strings.HasPrefix(h, "h1") {
			return 48
		}
		return 0
	}
	for _, n := range []int{1, 10, 100, 700} {
		for _, rate := range []float64{0, 200, 20000} {
			opt := NextOptions{Now: at.Add(3 * time.Hour), N: n, Rate: rate, Slot: 1.0 / 24, HostRate: limits}
			got, info, err := q.Next(opt)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteNext(t, q, opt)
			if len(got) != len(want) {
				t.Fatalf("n %d rate %v: %d pages, full scan %d", n, rate, len(got), len(want))
			}
			for i := range got {
				if got[i].URL != want[i].URL || got[i].Value != want[i].Value {
					t.Fatalf("n %d rate %v: #%d %s %v, full scan %s %v", n, rate, i, got[i].URL, got[i].Value, want[i].URL, want[i].Value)
				}
			}
			if n <= 100 && info.Touched > 3000 {
				t.Errorf("n %d: touched %d entries of about 8000 pages", n, info.Touched)
			}
		}
	}
}

// A page never fetched and a page fetched long ago compete by value: the
// new page's w/delta against the old page's V(tau).
func TestNewAndOldCompeteByValue(t *testing.T) {
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{Update: UpdateOptions{Prior: recrawl.Prior{Rate: 1}}})
	old := "http://a.example/old"
	var fs []Fetch
	for d := 0; d < 10; d++ {
		fs = append(fs, Fetch{URL: old, Host: "a.example", At: t0.Add(time.Duration(d) * 24 * time.Hour), Status: 200, Digest: fmt.Sprint("d", d)})
	}
	fs[len(fs)-1].Links = []string{"http://b.example/new"}
	if _, err := q.Apply(batchID(1, t0), Batch{Now: t0, Fetches: fs,
		Weights: []Weight{{URL: old, Host: "a.example", Importance: 4}, {URL: "http://b.example/new", Host: "b.example", Importance: 1}}}); err != nil {
		t.Fatal(err)
	}
	last := t0.Add(9 * 24 * time.Hour)
	// The old page changes every fetch: its rate is the prior's posterior,
	// and its value grows with time since its last fetch.
	xs, _ := q.Explain([]string{old, "http://b.example/new"}, NextOptions{Now: last, N: 1})
	oldMax, newValue := xs[0].MaxValue, xs[1].Value
	if xs[1].Delta != 1 || !xs[1].Prior || !math.IsInf(xs[1].Tau, 1) || newValue != 1 {
		t.Fatalf("new page: %+v", xs[1])
	}
	if !(oldMax > newValue) {
		t.Fatalf("old page's w/delta %v should exceed the new page's %v", oldMax, newValue)
	}
	first := func(at time.Time) string {
		c, _, err := q.Next(NextOptions{Now: at, N: 1, FixLambda0: true})
		if err != nil || len(c) != 1 {
			t.Fatal(c, err)
		}
		return c[0].URL
	}
	if got := first(last.Add(time.Minute)); got != "http://b.example/new" {
		t.Errorf("just after its fetch the old page won: %s", got)
	}
	if got := first(last.Add(60 * 24 * time.Hour)); got != old {
		t.Errorf("two months after its fetch the old page lost: %s", got)
	}
}

// A host's limit caps its pages per slot; the rest go to other hosts.
func TestHostLimit(t *testing.T) {
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{})
	var ws []Weight
	for i := 0; i < 10; i++ {
		ws = append(ws, Weight{URL: fmt.Sprintf("http://big.example/%d", i), Host: "big.example", Importance: 10})
		ws = append(ws, Weight{URL: fmt.Sprintf("http://small.example/%d", i), Host: "small.example", Importance: 1})
	}
	if _, err := q.Apply("1", Batch{Now: t0, Weights: ws}); err != nil {
		t.Fatal(err)
	}
	got, info, err := q.Next(NextOptions{Now: t0, N: 6, Slot: 1.0 / 24, HostRate: func(h string) float64 {
		if h == "big.example" {
			return 48 // two a slot
		}
		return 0
	}})
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	for _, c := range got {
		hosts[c.Host]++
	}
	if len(got) != 6 || hosts["big.example"] != 2 || !info.HostFull["big.example"] {
		t.Fatalf("taken %v (%d pages), info %+v", hosts, len(got), info)
	}
	if got[0].Host != "big.example" || got[2].Host != "small.example" {
		t.Errorf("order %v", got)
	}
}

// A budget above what the pages can use gives lambda_0 = 0, every page
// with a positive value is taken, and nothing fails.
func TestBudgetAboveDemand(t *testing.T) {
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{})
	if _, err := q.Apply("1", Batch{Now: t0, Weights: []Weight{{URL: "http://a.example/", Host: "a.example", Importance: 1}}}); err != nil {
		t.Fatal(err)
	}
	for _, rate := range []float64{1e9, 3000} {
		got, info, err := q.Next(NextOptions{Now: t0, N: 5, Rate: rate, Slot: 1.0 / 24})
		if err != nil || len(got) != 1 {
			t.Fatal(got, err)
		}
		if rate == 1e9 && info.Lambda0 != 0 {
			t.Errorf("rate %v: lambda_0 %v, want 0", rate, info.Lambda0)
		}
	}
	empty := open(t, filepath.Join(t.TempDir(), "missing"), Options{ReadOnly: true})
	if got, info, err := empty.Next(NextOptions{Now: t0, N: 5, Rate: 3000, Slot: 1}); err != nil || len(got) != 0 || info.Lambda0 != 0 {
		t.Fatal(got, info, err)
	}
}

// Zero importances and pages without one get the default weight, counted
// (the CLI warns once) rather than reported page by page.
func TestZeroWeights(t *testing.T) {
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{Update: UpdateOptions{DefaultWeight: 0.5}})
	ws := []Weight{{URL: "http://a.example/1", Host: "a.example"}, {URL: "http://a.example/2", Host: "a.example"}}
	st, err := q.Apply("1", Batch{Now: t0, Weights: ws})
	if err != nil || st.ZeroWeights != 2 || st.Unweighted != 2 || st.NewPages != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	got, _, err := q.Next(NextOptions{Now: t0, N: 5, FixLambda0: true})
	if err != nil || len(got) != 2 || got[0].W != 0.5 {
		t.Fatal(got, err)
	}
}

// A batch applied twice changes the state once.
func TestBatchIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	q := open(t, path, Options{})
	b := Batch{Now: t0, Fetches: []Fetch{{URL: "http://a.example/", Host: "a.example", At: t0, Status: 200, Digest: "x"}}}
	if st, err := q.Apply("000001-20261101T000000Z", b); err != nil || !st.Applied {
		t.Fatal(st, err)
	}
	b.Fetches[0].At, b.Fetches[0].Digest = t0.Add(time.Hour), "y"
	if st, err := q.Apply("000002-20261101T010000Z", b); err != nil || !st.Applied || st.Changed != 1 {
		t.Fatal(st, err)
	}
	b.Fetches[0].At, b.Fetches[0].Digest = t0.Add(2*time.Hour), "z"
	for _, id := range []string{"000002-20261101T010000Z", "000001-20261101T000000Z"} {
		if st, err := q.Apply(id, b); err != nil || st.Applied || st.Last != "000002-20261101T010000Z" {
			t.Fatal(id, st, err)
		}
	}
	xs, _ := q.Explain([]string{"http://a.example/"}, NextOptions{Now: t0.Add(3 * time.Hour), N: 1})
	if xs[0].Fetches != 2 || xs[0].Changes != 1 {
		t.Errorf("after a repeated batch: %d fetches, %d changes; want 2, 1", xs[0].Fetches, xs[0].Changes)
	}
}

// States of N shards fed the same batches select, merged, what one state
// selects, when the shards use the whole's lambda_0.
func TestShardsEqualWhole(t *testing.T) {
	dir := t.TempDir()
	const shards = 3
	whole := open(t, filepath.Join(dir, "whole"), Options{NoSync: true})
	var parts []*Queue
	for i := 0; i < shards; i++ {
		parts = append(parts, open(t, filepath.Join(dir, fmt.Sprint(i)), Options{NoSync: true, Shard: record.Shard{I: i, N: shards}}))
	}
	w := newWorld(3, 600, 25)
	at := t0
	rng := rand.New(rand.NewPCG(4, 4))
	for turn := 0; turn < 10; turn++ {
		at = at.Add(time.Hour)
		b := Batch{Now: at}
		for k := 0; k < 80; k++ {
			i := rng.IntN(len(w.pages))
			f := w.fetch(i, at)
			f.Links = []string{fmt.Sprintf("http://h%d.example/x%d", rng.IntN(30), rng.IntN(900))}
			b.Fetches = append(b.Fetches, f)
		}
		id := batchID(turn, at)
		for _, q := range append([]*Queue{whole}, parts...) {
			if _, err := q.Apply(id, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	opt := NextOptions{Now: at.Add(time.Hour), N: 50, Rate: 400, Slot: 1.0 / 24, HostRate: func(string) float64 { return 24 }}
	want, info, err := whole.Next(opt)
	if err != nil {
		t.Fatal(err)
	}
	// lambda_0 by map and reduce agrees with the whole's.
	var sums []recrawl.Summary
	for _, q := range parts {
		s, err := q.Summary(info.Lambda0)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
	}
	l0, exact := ReduceCells(sums, opt.Rate)
	if !exact || l0 != info.Lambda0 {
		t.Fatalf("lambda_0 reduced from the shards' cells %v (exact %v), the whole state's %v: want the same to the bit", l0, exact, info.Lambda0)
	}
	// The curves of the summaries give it approximately, as for page
	// records (which carry no cells).
	for i := range sums {
		sums[i].Cells = nil
	}
	if _, exact := ReduceCells(sums, opt.Rate); exact {
		t.Fatal("summaries without cells reduced as exact")
	}
	l0, err = recrawl.ReduceLambda0(sums, opt.Rate)
	if err != nil || math.Abs(l0-info.Lambda0) > 1e-3*info.Lambda0 {
		t.Fatalf("reduced lambda_0 %v (%v), whole %v", l0, err, info.Lambda0)
	}
	opt.Lambda0, opt.FixLambda0 = info.Lambda0, true
	var merged []Candidate
	for _, q := range parts {
		got, _, err := q.Next(opt)
		if err != nil {
			t.Fatal(err)
		}
		merged = append(merged, got...)
	}
	slices.SortFunc(merged, func(a, b Candidate) int { return better(&a, &b) })
	merged = merged[:min(len(merged), opt.N)]
	if len(merged) != len(want) {
		t.Fatalf("merged %d, whole %d", len(merged), len(want))
	}
	for i := range want {
		if merged[i].URL != want[i].URL {
			t.Fatalf("#%d: merged %s, whole %s", i, merged[i].URL, want[i].URL)
		}
	}
}

// A deferred candidate is not offered for the deferral time, doubled when
// deferred again, and its change statistics are untouched.
func TestDeferred(t *testing.T) {
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{Update: UpdateOptions{DeferFor: 24 * time.Hour}})
	u := "http://a.example/top"
	ws := []Weight{{URL: u, Host: "a.example", Importance: 100}, {URL: "http://a.example/low", Host: "a.example", Importance: 1}}
	if _, err := q.Apply("1", Batch{Now: t0, Weights: ws}); err != nil {
		t.Fatal(err)
	}
	top := func(at time.Time) string {
		c, _, err := q.Next(NextOptions{Now: at, N: 1, FixLambda0: true})
		if err != nil || len(c) == 0 {
			t.Fatal(c, err)
		}
		return c[0].URL
	}
	if top(t0) != u {
		t.Fatal("the heavy page is not first")
	}
	if _, err := q.Apply("2", Batch{Now: t0, Deferred: []string{u}}); err != nil {
		t.Fatal(err)
	}
	if got := top(t0.Add(23 * time.Hour)); got == u {
		t.Error("offered again within a day")
	}
	if got := top(t0.Add(25 * time.Hour)); got != u {
		t.Errorf("not offered after a day (Next sees the expired deferral): %s", got)
	}
	at := t0.Add(25 * time.Hour)
	if _, err := q.Apply("3", Batch{Now: at, Deferred: []string{u}}); err != nil {
		t.Fatal(err)
	}
	if got := top(at.Add(47 * time.Hour)); got == u {
		t.Error("a second deferral did not double")
	}
	xs, _ := q.Explain([]string{u}, NextOptions{Now: at, N: 1})
	if xs[0].Fetches != 0 || xs[0].Defers != 2 || !strings.Contains(xs[0].Reason, "deferred until") {
		t.Errorf("%+v", xs[0])
	}
	if _, err := q.Apply("4", Batch{Now: at.Add(49 * time.Hour)}); err != nil { // moves it back
		t.Fatal(err)
	}
	if got := top(at.Add(49 * time.Hour)); got != u {
		t.Errorf("not back after two days: %s", got)
	}
}

// A failed fetch sets a retry time and leaves the change statistics alone.
func TestFailureBackoff(t *testing.T) {
	q := open(t, filepath.Join(t.TempDir(), "s"), Options{})
	u := "http://a.example/gone"
	ok := Fetch{URL: u, Host: "a.example", At: t0, Status: 200, Digest: "a"}
	bad := Fetch{URL: u, Host: "a.example", At: t0.Add(time.Hour), Status: 404}
	if _, err := q.Apply("1", Batch{Now: t0.Add(time.Hour), Fetches: []Fetch{ok, bad}}); err != nil {
		t.Fatal(err)
	}
	xs, _ := q.Explain([]string{u}, NextOptions{Now: t0.Add(2 * time.Hour), N: 1})
	x := xs[0]
	if x.Fetches != 1 || x.Failures != 1 || !x.BlockedUntil.Equal(t0.Add(time.Hour+7*24*time.Hour)) || !strings.Contains(x.Reason, "retry") {
		t.Fatalf("%+v", x)
	}
	if RetryAfter(&Fetch{Error: "resting: host a.test rests"}, 5) != time.Hour || RetryAfter(&Fetch{Error: "pinned: host a.test is pinned"}, 5) != 24*time.Hour {
		t.Errorf("deferred hosts: resting %v, pinned %v", RetryAfter(&Fetch{Error: "resting: x"}, 5), RetryAfter(&Fetch{Error: "pinned: x"}, 5))
	}
	if RetryAfter(&Fetch{Error: "robots: disallowed"}, 3) != 4*24*time.Hour || RetryAfter(&Fetch{Status: 503}, 20) != 7*24*time.Hour {
		t.Error("backoff table")
	}
}

// A corrupt or truncated state is reported with its path, and nothing is
// written to it; a state of another shard count is refused.
func TestBadState(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	os.WriteFile(garbage, []byte(strings.Repeat("not a database\n", 1000)), 0o644)
	_, err := Open(garbage, Options{})
	var se *StateError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), garbage) {
		t.Fatalf("garbage: %v", err)
	}
	good := filepath.Join(dir, "good")
	q := open(t, good, Options{Shard: record.Shard{I: 0, N: 2}})
	if _, err := q.Apply("1", Batch{Now: t0, Weights: []Weight{{URL: "http://a.example/", Host: "a.example", Importance: 1}}}); err != nil {
		t.Fatal(err)
	}
	q.Close()
	if _, err := Open(good, Options{Shard: record.Shard{I: 0, N: 4}}); err == nil || !strings.Contains(err.Error(), "shard 0/2") {
		t.Fatalf("other shard count: %v", err)
	}
	b, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc")
	os.WriteFile(trunc, b[:len(b)/2], 0o644)
	if _, err := Open(trunc, Options{Shard: record.Shard{I: 0, N: 2}}); err == nil || !strings.Contains(err.Error(), trunc) {
		t.Fatalf("truncated: %v", err)
	}
	after, _ := os.ReadFile(trunc)
	if len(after) != len(b)/2 {
		t.Error("the truncated state was written to")
	}
}
