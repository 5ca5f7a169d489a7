package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/recrawl/report"
)

const longHost = "the-science-department-of-a-long-named-university.example.test:18080"

// crawlDir builds a crawl directory as scripts/crawl-cycle.sh leaves it
// with SHARDS=2: two shard states over 12 hourly turns (the hosts of
// crawl, and a host of a long name), their host rates, good.txt, the
// turns' directories with fetch records, candidates and deferred pages, a
// 13th turn under way, and the cycle log.
func crawlDir(t *testing.T) (dir string, pages []string) {
	t.Helper()
	dir = t.TempDir()
	st := filepath.Join(dir, "state")
	os.MkdirAll(st, 0o755)
	write(t, filepath.Join(st, "shards"), "2\n")
	var seeds []queue.Weight
	for _, h := range []string{"a.test", "b.test", "c.test", longHost} {
		for i := 0; i < 10; i++ {
			u := fmt.Sprintf("http://%s/p%d", h, i)
			pages = append(pages, u)
			seeds = append(seeds, queue.Weight{URL: u, Host: h, Importance: 1})
		}
	}
	seeds = append(seeds, queue.Weight{URL: "http://d.test/", Host: "d.test", Importance: 1})
	var found []queue.Discovery
	for _, w := range seeds {
		found = append(found, queue.Discovery{URL: w.URL, Host: w.Host})
	}
	id := func(turn int) string {
		return fmt.Sprintf("%06d-%s", turn, epoch.Add(time.Duration(turn)*time.Hour).Format("20060102T150405Z"))
	}
	var log strings.Builder
	for shard := 0; shard < 2; shard++ {
		q, err := queue.Open(filepath.Join(st, fmt.Sprintf("recrawl.%d.db", shard)), queue.Options{NoSync: true, Shard: record.Shard{I: shard, N: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Apply("000000-seeds", queue.Batch{Now: epoch, Discovered: found, Weights: seeds}); err != nil {
			t.Fatal(err)
		}
		for turn := 1; turn <= 12; turn++ {
			now := epoch.Add(time.Duration(turn) * time.Hour)
			if _, err := q.Apply(id(turn), queue.Batch{Now: now, Fetches: fetches(seeds[:40], turn, now)}); err != nil {
				t.Fatal(err)
			}
		}
		q.Close()
		hostRates(t, filepath.Join(st, fmt.Sprintf("host-rates.%d.json", shard)))
	}
	for turn := 1; turn <= 13; turn++ {
		b := filepath.Join(dir, "batches", id(turn))
		os.MkdirAll(b, 0o755)
		now := epoch.Add(time.Duration(turn) * time.Hour)
		var cands, fetched strings.Builder
		for i, s := range seeds[:40] {
			if turn == 1 {
				fmt.Fprintf(&cands, "{\"url\":%q,\"host\":%q}\n", s.URL, s.Host)
			} else {
				fmt.Fprintf(&cands, "{\"url\":%q,\"host\":%q,\"last_fetch\":%q}\n", s.URL, s.Host, now.Add(-time.Hour).Format(time.RFC3339))
			}
			f := fetches(seeds[i:i+1], turn, now)[0]
			switch {
			case f.Error != "":
				fmt.Fprintf(&fetched, "{\"url\":%q,\"host\":%q,\"status\":%d,\"error\":%q}\n", f.URL, f.Host, f.Status, f.Error)
			case f.Status == 404:
				fmt.Fprintf(&fetched, "{\"url\":%q,\"host\":%q,\"status\":404,\"length\":120}\n", f.URL, f.Host)
			default:
				fmt.Fprintf(&fetched, "{\"url\":%q,\"host\":%q,\"status\":200,\"length\":%d}\n", f.URL, f.Host, 1000+i)
			}
		}
		write(t, filepath.Join(b, "candidates.ndjson"), cands.String())
		fmt.Fprintf(&log, "%s turn %s: start\n", now.Format(time.RFC3339), id(turn))
		if turn == 13 {
			break // under way: selected, not fetched
		}
		write(t, filepath.Join(b, "fetched.ndjson"), fetched.String())
		write(t, filepath.Join(b, "deferred.ndjson"), fmt.Sprintf("{\"url\":%q}\n", seeds[40].URL))
		write(t, filepath.Join(b, "DONE"), "")
		for _, step := range []string{"select", "filter", "fetch", "sitemaps", "opic", "recrawl", "sekitei", "index", "archive"} {
			secs := 0.1
			if step == "fetch" {
				secs = 2 + float64(turn)/10
			}
			fmt.Fprintf(&log, "%s %s: took %.2f s\n", now.Format(time.RFC3339), step, secs)
		}
		fmt.Fprintf(&log, "%s fetch: 40 URLs tried\n", now.Format(time.RFC3339))
		fmt.Fprintf(&log, "%s turn %s: complete in 3 s\n", now.Format(time.RFC3339), id(turn))
	}
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	write(t, filepath.Join(dir, "logs", "cycle.log"), log.String())
	good := append(append([]string{}, pages[:4]...), "http://d.test/", "http://e.test/")
	write(t, filepath.Join(dir, "good.txt"), strings.Join(good, "\n")+"\n")
	return dir, pages
}

// fetches are a turn's fetch of the pages: a.test's change every turn,
// b.test's never, c.test answers 503 from turn 6 on, and the long-named
// host answers one 404, one robots refusal and one timeout a turn.
func fetches(pages []queue.Weight, turn int, now time.Time) []queue.Fetch {
	var fs []queue.Fetch
	for _, s := range pages {
		f := queue.Fetch{URL: s.URL, Host: s.Host, At: now, Status: 200, Digest: "same"}
		switch {
		case s.Host == "a.test":
			f.Digest = fmt.Sprint("v", turn)
		case s.Host == "c.test" && turn >= 6:
			f.Status, f.Digest, f.Error = 503, "", "status: 503"
		case strings.HasSuffix(s.URL, "/p7") && s.Host == longHost:
			f.Status, f.Digest = 404, ""
		case strings.HasSuffix(s.URL, "/p8") && s.Host == longHost:
			f.Status, f.Digest, f.Error = 0, "", "robots: disallowed by robots.txt"
		case strings.HasSuffix(s.URL, "/p9") && s.Host == longHost:
			f.Status, f.Digest, f.Error = 0, "", "timeout: no answer in 30s"
		}
		fs = append(fs, f)
	}
	return fs
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCrawlDirectory(t *testing.T) {
	dir, _ := crawlDir(t)
	now := epoch.Add(13 * time.Hour)
	r, err := report.ReadCrawl(dir, report.Options{Now: now, Rate: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) > 0 {
		t.Errorf("problems: %q", r.Problems)
	}
	if len(r.Shards) != 2 || r.Shards[0].Shard != "0/2" || r.Shards[1].Shard != "1/2" || r.Shards[0].Pages+r.Shards[1].Pages != 41 {
		t.Errorf("shards %+v", r.Shards)
	}
	if r.Pages != 41 || r.Fetched != 37 {
		t.Errorf("pages %d fetched %d, want 41 37", r.Pages, r.Fetched)
	}
	// good.txt of the whole crawl, against the whole crawl.
	if r.Good != 6 || r.GoodKnown != 5 || r.GoodFetched != 4 {
		t.Errorf("good %d known %d fetched %d, want 6 5 4", r.Good, r.GoodKnown, r.GoodFetched)
	}
	// seeds, 12 turns, and the 13th under way.
	if len(r.History) != 14 || r.History[13].Recorded || r.History[13].Files == nil || r.History[13].Files.Candidates != 40 {
		t.Fatalf("turns: %d, last %+v", len(r.History), r.History[len(r.History)-1])
	}
	last := r.History[12]
	if last.Fetches != 40 || last.Failures != 13 || last.Files == nil || len(last.Steps) != 9 || last.Seconds != 3 {
		t.Errorf("turn 12: %+v", last)
	}
	o := last.Files.Outcomes
	if o.OK != 27 || o.Client != 1 || o.Server != 10 || o.Robots != 1 || o.Timeout != 1 || last.Files.Due != 40 || last.Files.Deferred != 1 {
		t.Errorf("turn 12's outcomes %+v, files %+v", o, last.Files)
	}
	hosts := map[string]report.Host{}
	for _, h := range r.Hosts {
		hosts[h.Host] = h
	}
	if h := hosts["c.test"]; h.Tries != 120 || h.Failures != 70 || !h.Known {
		t.Errorf("c.test %+v", h)
	}

	var text, j1, j2, h1, h2 bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shard 0/2", "41 known, 37 fetched", "6 good URLs: 5 known", "fetch outcomes by turn", "seconds a step",
		"most failing hosts", "last turn: 000012-", "c.test ", longHost, "under way"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q", want)
		}
	}
	t.Log(text.String())

	// The same input, the same output.
	r2, err := report.ReadCrawl(dir, report.Options{Now: now, Rate: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		r *report.Report
		j *bytes.Buffer
		h *bytes.Buffer
	}{{r, &j1, &h1}, {r2, &j2, &h2}} {
		if err := x.r.WriteJSON(x.j); err != nil {
			t.Fatal(err)
		}
		if err := x.r.WriteHTML(x.h); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(j1.Bytes(), j2.Bytes()) || !bytes.Equal(h1.Bytes(), h2.Bytes()) {
		t.Error("two reports of the same crawl differ")
		a, b := strings.Split(j1.String()+h1.String(), "\n"), strings.Split(j2.String()+h2.String(), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Errorf("line %d:\n%s\n%s", i, a[i], b[i])
				break
			}
		}
	}
	var doc struct {
		Pages     int     `json:"pages"`
		Freshness float64 `json:"freshness"`
		Problems  []string
		Shards    []struct{ Path, Shard string }
		Turns     []struct {
			Batch    string `json:"batch"`
			Recorded bool   `json:"recorded"`
			Files    *struct {
				Outcomes map[string]int `json:"outcomes"`
				Bytes    int64          `json:"bytes"`
			} `json:"files"`
			Steps []struct {
				Name    string
				Seconds float64
			}
		} `json:"turns"`
		Hosts []struct {
			Host     string `json:"host"`
			Failures int    `json:"failures"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal(j1.Bytes(), &doc); err != nil {
		t.Fatalf("--json does not parse: %v\n%.500s", err, j1.String())
	}
	if doc.Pages != 41 || len(doc.Turns) != 14 || doc.Problems == nil || len(doc.Problems) != 0 || len(doc.Shards) != 2 ||
		doc.Turns[12].Files == nil || doc.Turns[12].Files.Outcomes["5xx"] != 10 || doc.Turns[12].Files.Bytes == 0 || len(doc.Turns[12].Steps) != 9 {
		t.Errorf("JSON: %+v", doc)
	}

	html := filepath.Join(t.TempDir(), "report.html")
	if err := r.WriteHTMLFile(html); err != nil {
		t.Fatal(err)
	}
	page := checkInBrowser(t, html, true)
	if !strings.Contains(page, longHost) {
		t.Errorf("the page does not name %s whole", longHost)
	}
}

// A missing shard state and a damaged one are problems named by path; the
// other shard is still reported.
func TestCrawlDirectoryDamaged(t *testing.T) {
	dir, _ := crawlDir(t)
	st := filepath.Join(dir, "state")
	write(t, filepath.Join(st, "recrawl.1.db"), strings.Repeat("not a state ", 2000))
	r, err := report.ReadCrawl(dir, report.Options{Now: epoch.Add(13 * time.Hour)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], filepath.Join(st, "recrawl.1.db")) {
		t.Errorf("problems %q: want the damaged state named", r.Problems)
	}
	if len(r.Shards) != 1 || r.Shards[0].Shard != "0/2" || r.Pages == 0 || len(r.History) != 14 {
		t.Errorf("shard 0 not reported: %+v, %d pages, %d turns", r.Shards, r.Pages, len(r.History))
	}
	os.Remove(filepath.Join(st, "recrawl.1.db"))
	os.Remove(filepath.Join(dir, "good.txt"))
	r, err = report.ReadCrawl(dir, report.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], filepath.Join(st, "recrawl.1.db")) || r.GoodGiven {
		t.Errorf("problems %q, good given %v", r.Problems, r.GoodGiven)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if !strings.Contains(text.String(), "problems") || strings.Contains(text.String(), "QLinks") {
		t.Errorf("text:\n%s", text.String())
	}
}
