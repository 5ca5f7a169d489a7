package report_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/browsercheck"
	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/recrawl/report"
)

var epoch = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// crawl builds a state of three hosts over 12 hourly turns: a.test's pages
// change every turn, b.test's never, c.test fails from turn 6 on.
func crawl(t *testing.T, path string) (pages []string) {
	t.Helper()
	q, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var seeds []queue.Weight
	for _, h := range []string{"a.test", "b.test", "c.test"} {
		for i := 0; i < 10; i++ {
			u := fmt.Sprintf("http://%s/p%d", h, i)
			pages = append(pages, u)
			seeds = append(seeds, queue.Weight{URL: u, Host: h, Importance: 1})
		}
	}
	// One extra page known from a seed only, never fetched.
	seeds = append(seeds, queue.Weight{URL: "http://d.test/", Host: "d.test", Importance: 1})
	var found []queue.Discovery
	for _, w := range seeds {
		found = append(found, queue.Discovery{URL: w.URL, Host: w.Host})
	}
	if _, err := q.Apply("000000-seeds", queue.Batch{Now: epoch, Discovered: found, Weights: seeds}); err != nil {
		t.Fatal(err)
	}
	for turn := 1; turn <= 12; turn++ {
		now := epoch.Add(time.Duration(turn) * time.Hour)
		var fs []queue.Fetch
		for _, s := range seeds[:30] {
			f := queue.Fetch{URL: s.URL, Host: s.Host, At: now, Status: 200, Digest: "same"}
			switch {
			case s.Host == "a.test":
				f.Digest = fmt.Sprint("v", turn)
			case s.Host == "c.test" && turn >= 6:
				f.Status, f.Digest, f.Error = 503, "", "status: 503"
			}
			fs = append(fs, f)
		}
		if _, err := q.Apply(fmt.Sprintf("%06d-%s", turn, now.Format("20060102T150405Z")), queue.Batch{Now: now, Fetches: fs}); err != nil {
			t.Fatal(err)
		}
	}
	return pages
}

// hostRates saves an estimator state: a.test pinned at 2/s, b.test
// learnt, c.test backed off by 503s.
func hostRates(t *testing.T, path string) {
	t.Helper()
	e := hostrate.New(hostrate.Config{Initial: 1})
	now := time.Now()
	for i := 0; i < 20; i++ {
		e.Observe(hostrate.Observation{Host: "b.test", Start: now, Latency: 20 * time.Millisecond, Status: 200})
		e.Observe(hostrate.Observation{Host: "c.test", Start: now, Latency: 20 * time.Millisecond, Status: 503, RetryAfter: "1"})
	}
	e.Pin("a.test", 2)
	if err := e.Save(path); err != nil {
		t.Fatal(err)
	}
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	pages := crawl(t, filepath.Join(dir, "crawl.recrawl"))
	hostRates(t, filepath.Join(dir, "host-rates.json"))
	est, err := hostrate.Load(filepath.Join(dir, "host-rates.json"), hostrate.Config{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.Open(filepath.Join(dir, "crawl.recrawl"), queue.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	// Good URLs: 4 of a.test's pages, d.test's (known, never fetched) and
	// one the crawl does not know.
	good := append(append([]string{}, pages[:4]...), "http://d.test/", "http://e.test/")
	now := epoch.Add(13 * time.Hour)
	r, err := report.Build(q, report.Options{Now: now, Hosts: []*hostrate.Estimator{est}, Good: good, Turns: 5,
		Rate: 200}) // tight enough that a.test's pin (2/s) does not bind, and the others too
	if err != nil {
		t.Fatal(err)
	}
	if r.Pages != 31 || r.Fetched != 30 || r.Failing != 10 {
		t.Errorf("pages %d fetched %d failing %d, want 31 30 10", r.Pages, r.Fetched, r.Failing)
	}
	if r.Good != 6 || r.GoodKnown != 5 || r.GoodFetched != 4 {
		t.Errorf("good %d known %d fetched %d, want 6 5 4", r.Good, r.GoodKnown, r.GoodFetched)
	}
	if len(r.History) != 13 || r.History[12].Fetches != 30 || r.History[12].Failures != 10 {
		t.Errorf("history: %d turns, last %+v", len(r.History), r.History[len(r.History)-1])
	}
	// a.test changed at every fetch: its observed freshness is 0 and b's 1,
	// so a turn's observed freshness is 1/2 (c.test's fetches fail).
	if o := r.History[12].Observed; o < 0.49 || o > 0.51 {
		t.Errorf("observed freshness %.3f, want 0.5", o)
	}
	if !(r.Freshness > 0 && r.Freshness < 1) {
		t.Errorf("freshness %v", r.Freshness)
	}
	hosts := map[string]report.Host{}
	for _, h := range r.Hosts {
		hosts[h.Host] = h
	}
	if a := hosts["a.test"]; !a.Known || !a.Pinned || a.LimitPerDay != 2*86400 {
		t.Errorf("a.test %+v: want pinned at 2/s", a)
	}
	if b, c := hosts["b.test"], hosts["c.test"]; !(c.LimitPerDay < b.LimitPerDay) {
		t.Errorf("c.test answered 503s but its limit %.4g is not below b.test's %.4g", c.LimitPerDay, b.LimitPerDay)
	}
	if hosts["d.test"].Known {
		t.Errorf("d.test has no estimate")
	}

	// A host limit that binds gets lambda_i > 0, one that does not 0.
	e2 := hostrate.New(hostrate.Config{})
	e2.Pin("a.test", 1.0/86400) // one crawl a day
	r2, err := report.Build(q, report.Options{Now: now, Hosts: []*hostrate.Estimator{e2}, Rate: 1e4})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range r2.Hosts {
		if (h.Host == "a.test") != (h.Lambda > 0) {
			t.Errorf("%s: lambda_i %v with limit %v a day", h.Host, h.Lambda, h.LimitPerDay)
		}
	}

	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"31 known, 30 fetched", "10 failing", "6 good URLs: 5 known", "a.test", "pinned", "change rates", "000012-"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	// Five turns listed.
	if n := strings.Count(text.String(), "\n0000"); n != 5 {
		t.Errorf("%d turns listed, want 5:\n%s", n, text.String())
	}

	t.Log(text.String())
	html := filepath.Join(dir, "report.html")
	if err := r.WriteHTMLFile(html); err != nil {
		t.Fatal(err)
	}
	checkInBrowser(t, html, false)
}

// checkInBrowser renders the page in headless chromium: it loads without
// errors, and every plot is there, full width, its data inside its axes.
func checkInBrowser(t *testing.T, html string, withBatches bool) (text string) {
	t.Helper()
	page := browsercheck.Load(t, html, 1280)
	for _, e := range page.Errors {
		t.Errorf("the page raised: %s", e)
	}
	ids := []string{"plot-freshness", "plot-pages", "plot-outcomes", "plot-bytes", "plot-queue", "plot-steps", "plot-changes",
		"plot-busiest", "plot-failing", "plot-limits"}
	figs := map[string]browsercheck.Figure{}
	for _, f := range page.Figures {
		figs[f.ID] = f
	}
	for _, id := range ids {
		f, ok := figs[id]
		if !ok {
			t.Errorf("the rendered page has no figure %s", id)
			continue
		}
		if f.Width < 900 {
			t.Errorf("%s is %.0f px wide, want at least 900 in a 1280 px window", id, f.Width)
		}
		batchOnly := id == "plot-outcomes" || id == "plot-bytes" || id == "plot-queue" || id == "plot-steps"
		if f.Marks == 0 && (withBatches || !batchOnly) {
			t.Errorf("%s draws no data", id)
		}
		if f.DataLeft < f.AxisLeft-0.5 {
			t.Errorf("%s: data drawn from x=%.1f, before its axis at %.1f", id, f.DataLeft, f.AxisLeft)
		}
	}
	for _, want := range []string{"Weighted freshness over turns", "estimated", "observed", "a.test", "c.test"} {
		if !strings.Contains(page.Text, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	return page.Text
}
