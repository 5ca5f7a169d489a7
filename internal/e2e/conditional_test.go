package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
)

// The loop asks conditionally: recrawl's state keeps the validators of a
// page's last fetch, recrawl next hands them to sekitei admit and fetch with
// the candidate, fetch sends If-None-Match or If-Modified-Since, and the
// server's 304 is an observation "unchanged" (fetches counted, no change).
// A page whose content changes answers the conditional request with a 200
// and a new ETag, which the state takes and the next turn sends.
func TestCrawlCycleConditional(t *testing.T) {
	modified := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	editions := []string{"<p>The river is calm and the market opens as usual this morning.</p>",
		"<p>A storm broke the old bridge overnight; schools are closed and the town council meets at noon.</p>"}
	var mu sync.Mutex
	turn := 0
	news := 1           // the version of /news.html, moved by the test
	asked := []string{} // "turn path If-None-Match|If-Modified-Since", for every request
	site := func(_ string, mux *http.ServeMux) {
		mux.HandleFunc("/robots.txt", http.NotFound)
		serve := func(etag string, mod time.Time, body string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				asked = append(asked, fmt.Sprintf("%d %s %s|%s", turn, r.URL.Path, r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")))
				e, b := etag, body
				if r.URL.Path == "/news.html" {
					// Words, not numbers: a change of numbers alone is
					// no change of the main text.
					e, b = fmt.Sprintf(`"news-%d"`, news), body+editions[news-1]
				}
				mu.Unlock()
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				if e != "" {
					w.Header().Set("ETag", e)
				}
				// ServeContent answers If-None-Match and If-Modified-Since
				// as RFC 9110 says (If-None-Match first).
				http.ServeContent(w, r, "", mod, strings.NewReader(b))
			}
		}
		mux.HandleFunc("/{$}", serve("", time.Time{}, `<title>Home</title><a href="/etag.html">e</a> <a href="/date.html">d</a> <a href="/news.html">n</a>`))
		mux.HandleFunc("/etag.html", serve(`"stable-1"`, time.Time{}, `<title>Tagged</title><p>The same words every day.</p>`))
		mux.HandleFunc("/date.html", serve("", modified, `<title>Dated</title><p>Written once, long ago.</p>`))
		mux.HandleFunc("/news.html", serve("", time.Time{}, `<title>News</title>`))
	}
	w, base := loopbackSite(t, site)
	const turns = 4
	for day := 1; day <= turns; day++ {
		mu.Lock()
		turn = day
		if day == 3 {
			news = 2 // the news page changes between turns 2 and 3
		}
		mu.Unlock()
		// A site quota, so sekitei admit filters (and passes) the
		// candidates from turn 2 on.
		w.dailyTurn(t, day, "SITE_QUOTA=100\nMIN_QUOTA=10\n")
	}

	// Every turn's fetched records, by turn and path.
	files, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "fetched.ndjson"))
	if len(files) != turns {
		t.Fatalf("%d turns recorded, want %d", len(files), turns)
	}
	recs := make([]map[string]*record.Record, turns)
	for i, f := range files {
		recs[i] = recordsByPath(t, f, base)
	}
	todo, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "todo.ndjson"))
	if len(todo) != turns {
		t.Fatalf("%d todo files, want %d", len(todo), turns)
	}
	mu.Lock()
	log := slices.Clone(asked)
	mu.Unlock()
	saw := func(turn int, path, header string) bool {
		for _, l := range log {
			if strings.HasPrefix(l, fmt.Sprintf("%d %s ", turn, path)) && strings.Contains(l, header) {
				return true
			}
		}
		return false
	}
	str := func(r *record.Record, k string) string { s, _ := r.String(k); return s }
	status := func(i int, path string) int {
		t.Helper()
		r := recs[i][path]
		if r == nil {
			t.Fatalf("turn %d did not fetch %s: %v", i+1, path, keys(recs[i]))
		}
		s, _, _ := r.Float("status")
		return int(s)
	}

	// Turn 2 fetches the linked pages for the first time: no validators
	// to send, so no conditional request, and a 200 each.
	for _, p := range []string{"/etag.html", "/date.html", "/news.html"} {
		if got := status(1, p); got != 200 {
			t.Errorf("turn 2: %s got %d, want 200 (first fetch)", p, got)
		}
		if saw(2, p, `"`) || saw(2, p, "GMT") {
			t.Errorf("turn 2: %s was asked conditionally on its first fetch: %q", p, log)
		}
	}
	// Turns 3 and 4: the unchanged pages are asked conditionally with the
	// validators of turn 2 and answer 304; the record says so.
	for i := 2; i < turns; i++ {
		if got := status(i, "/etag.html"); got != 304 || str(recs[i]["/etag.html"], "etag") != `"stable-1"` {
			t.Errorf("turn %d: /etag.html %s, want status 304 with its etag", i+1, recs[i]["/etag.html"].AppendJSON(nil))
		}
		if !saw(i+1, "/etag.html", `"stable-1"|`) {
			t.Errorf("turn %d: /etag.html not asked with If-None-Match \"stable-1\": %q", i+1, log)
		}
		lm := modified.Format(http.TimeFormat)
		if got := status(i, "/date.html"); got != 304 || str(recs[i]["/date.html"], "last_modified") != lm {
			t.Errorf("turn %d: /date.html %s, want status 304 with its last_modified", i+1, recs[i]["/date.html"].AppendJSON(nil))
		}
		if !saw(i+1, "/date.html", "|"+lm) {
			t.Errorf("turn %d: /date.html not asked with If-Modified-Since %s: %q", i+1, lm, log)
		}
		// The home page sends no validators: asked plainly every turn.
		if got := status(i, "/"); got != 200 || saw(i+1, "/", `"`) || saw(i+1, "/", "GMT") {
			t.Errorf("turn %d: the home page (no validators) got %d or was asked conditionally: %q", i+1, got, log)
		}
	}
	// The validators went from recrawl next through sekitei admit to fetch
	// in the candidate records, with no glue.
	if !strings.Contains(readFile(t, todo[2]), `"etag":"\"stable-1\""`) {
		t.Errorf("turn 3's todo.ndjson carries no etag for /etag.html:\n%s", readFile(t, todo[2]))
	}
	// The news page changed before turn 3: asked with turn 2's ETag, it
	// answers 200 and a new ETag, which turn 4 sends and gets a 304 for.
	if got := status(2, "/news.html"); got != 200 || !saw(3, "/news.html", `"news-1"|`) || str(recs[2]["/news.html"], "etag") != `"news-2"` {
		t.Errorf("turn 3: /news.html %s, want a 200 with etag \"news-2\" to If-None-Match \"news-1\": %q", recs[2]["/news.html"].AppendJSON(nil), log)
	}
	if got := status(3, "/news.html"); got != 304 || !saw(4, "/news.html", `"news-2"|`) {
		t.Errorf("turn 4: /news.html got %d, want a 304 to If-None-Match \"news-2\": %q", got, log)
	}

	// The state counts each 304 as an observation "unchanged": fetched on
	// turns 2, 3 and 4, no change; the news page changed once.
	state := filepath.Join(w.crawl, "state", "recrawl.db")
	explain := func(path string) string {
		out, err := exec.Command(filepath.Join(w.bin, "recrawl"), "explain", "--state", state, "--n", "20",
			"--now", "2026-11-15T00:00:00Z", base+path).CombinedOutput()
		if err != nil {
			t.Fatalf("recrawl explain %s: %v\n%s", path, err, out)
		}
		return string(out)
	}
	for path, want := range map[string]string{
		"/etag.html": `(3 fetches, 0 changes`, "/date.html": `(3 fetches, 0 changes`, "/news.html": `(3 fetches, 1 changes`,
	} {
		x := explain(path)
		if !regexp.MustCompile(`(?m)^change rate: .*` + regexp.QuoteMeta(want)).MatchString(x) {
			t.Errorf("explain %s: want %q:\n%s", path, want, x)
		}
	}
	if x := explain("/news.html"); !strings.Contains(x, `validators:   ETag "news-2"`) {
		t.Errorf("explain /news.html: want the validators of its last fetch:\n%s", x)
	}
}

// recordsByPath reads the records of an NDJSON file by their URL's path
// under base.
func recordsByPath(t *testing.T, path, base string) map[string]*record.Record {
	t.Helper()
	out := map[string]*record.Record{}
	for _, r := range records(t, path) {
		out[strings.TrimPrefix(r.URL(), base)] = r
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keys(m map[string]*record.Record) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
