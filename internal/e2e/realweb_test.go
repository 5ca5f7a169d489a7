package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The loop on a site's first visit reads the sitemaps its robots.txt names,
// so a page listed only there is crawled; and a URL whose canonical is
// another URL is fetched once, its canonical from then on.
func TestCrawlCycleSitemapsAndCanonical(t *testing.T) {
	w, base := loopbackSite(t, siteWithSitemap)
	for day := 1; day <= 5; day++ {
		w.dailyTurn(t, day, "")
	}
	turns := w.fetchedURLs(t)
	if len(turns) != 5 {
		t.Fatalf("%d turns recorded, want 5", len(turns))
	}
	fetched := func(i int, path string) bool { return slices.Contains(turns[i], base+path) }
	if !fetched(1, "/hidden-gem.html") {
		t.Errorf("turn 2 did not fetch the page listed only in the sitemap: %q", turns[1])
	}
	if !fetched(1, "/shoes?ref=mail") {
		t.Errorf("turn 2 did not fetch the linked variant: %q", turns[1])
	}
	for i := 2; i < 5; i++ {
		if fetched(i, "/shoes?ref=mail") {
			t.Errorf("turn %d fetched /shoes?ref=mail again, whose canonical /shoes is known: %q", i+1, turns[i])
		}
		if !fetched(i, "/shoes") || !fetched(i, "/") {
			t.Errorf("turn %d did not fetch the canonical /shoes and the home page: %q", i+1, turns[i])
		}
	}
	sitemaps, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "new-sites.ndjson"))
	var sites []string
	for _, f := range sitemaps {
		data, _ := os.ReadFile(f)
		if s := strings.TrimSpace(string(data)); s != "" {
			sites = append(sites, s)
		}
	}
	if len(sites) != 1 || !strings.Contains(sites[0], base+"/") {
		t.Errorf("sites read for sitemaps over five turns: %q, want the one site once", sites)
	}
}

// siteWithSitemap is a site whose robots.txt names a sitemap listing a
// page no link reaches, and whose home page links a variant of a page that
// names its canonical.
func siteWithSitemap(base string, mux *http.ServeMux) {
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nAllow: /\n\nSitemap: %s/sitemap.xml\n", base)
	})
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%s/hidden-gem.html</loc><lastmod>2026-11-01</lastmod><changefreq>weekly</changefreq></url>
</urlset>`, base)
	})
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/", page(`<title>Home</title><a href="/shoes?ref=mail">shoes</a>`))
	mux.HandleFunc("/shoes", page(`<link rel="canonical" href="/shoes"><title>Shoes</title><p>Red shoes.</p>`))
	mux.HandleFunc("/hidden-gem.html", page(`<title>Only in the sitemap</title>`))
}
