package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSitemapsLeftForLaterTurns: a site whose sitemap lists 30 pages is
// crawled with SITEMAP_ARGS capping a site at 20 URLs a turn. The turns
// take 20 and 10 of them, each once, from where the last turn's cap
// cut (state/sitemaps.todo), and the third turn reads no sitemap.
func TestSitemapsLeftForLaterTurns(t *testing.T) {
	w, _ := loopbackSite(t, func(base string, mux *http.ServeMux) {
		mux.HandleFunc("/robots.txt", func(rw http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(rw, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", base)
		})
		mux.HandleFunc("/sitemap.xml", func(rw http.ResponseWriter, r *http.Request) {
			fmt.Fprint(rw, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for i := 0; i < 30; i++ {
				fmt.Fprintf(rw, "<url><loc>%s/p%d.html</loc></url>", base, i)
			}
			fmt.Fprint(rw, `</urlset>`)
		})
		mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
			fmt.Fprint(rw, "<html><head><title>page</title></head><body>a page</body></html>")
		})
	})
	seen := map[string]int{}
	var perTurn []int
	for day := 1; day <= 3; day++ {
		w.dailyTurn(t, day, `SITEMAP_ARGS="--max-urls-per-site 20"`+"\nHOST_ESTIMATES=0\n")
		files, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "sitemaps.ndjson"))
		if len(files) != day {
			t.Fatalf("turn %d: %d batches with sitemaps.ndjson", day, len(files))
		}
		urls := urlsOf(t, files[day-1])
		perTurn = append(perTurn, len(urls))
		for _, u := range urls {
			seen[u]++
		}
	}
	if fmt.Sprint(perTurn) != "[20 10 0]" {
		t.Errorf("sitemap URLs per turn %v, want [20 10 0]", perTurn)
	}
	if len(seen) != 30 {
		t.Errorf("%d distinct sitemap URLs over the turns, want 30", len(seen))
	}
	for u, n := range seen {
		if n != 1 || !strings.Contains(u, "/p") {
			t.Errorf("%s listed %d times", u, n)
		}
	}
	if data, err := os.ReadFile(filepath.Join(w.crawl, "state", "sitemaps.todo")); err != nil || len(data) != 0 {
		t.Errorf("state/sitemaps.todo after all is read: %q %v", data, err)
	}
}
