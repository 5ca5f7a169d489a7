package fetch

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sekitei/crawlkit/pkg/robots"
)

// mediawikiRobots is what MediaWiki sites write: the edit form is
// disallowed only when title comes before action, a sorted list only
// when page comes before sort.
const mediawikiRobots = "User-agent: *\nDisallow: /index.php?title=*&action=edit\nDisallow: /*?page=*&sort=\n"

// mediawikiLinks are the hrefs of the two seed pages, as written (HTML
// escapes included), and allowed says whether robots.txt allows each as
// written. Other links the alternative spellings (another order of the
// query) of Main's disallowed links.
var mediawikiLinks = map[string][]struct {
	href    string
	allowed bool
}{
	"/wiki/Main_Page": {
		{"/index.php?title=Foo&amp;action=edit", false},
		{"/index.php?title=Foo&action=history", true},
		{"/list?page=2&amp;sort=asc", false},
		{"/list?page=2", true},
		{"/wiki/Caf%c3%a9?useskin=vector&oldid=7", true},
		{"/wiki/Foo", true},
	},
	"/wiki/Other": {
		{"/index.php?action=edit&amp;title=Foo", true},
		{"/list?sort=asc&page=2", true},
		{"/index.php?title=Bar&action=edit", false},
		{"/index.php?title=Foo&action=history&utm_source=feed", true}, // Main's history page by its key
	},
}

// TestMediaWikiRequestsAsWritten crawls a MediaWiki-style site two hops
// deep (the seeds, then their links as the next input, as the crawl loop
// does) and checks the server's log of request lines: no URL robots.txt
// disallows as the page writes it is requested, and every allowed one is
// requested exactly as written, its query in the written order, once.
func TestMediaWikiRequestsAsWritten(t *testing.T) {
	var mu sync.Mutex
	var got []string // RequestURI as received, in order
	ln, err := net.Listen("tcp", "127.0.0.78:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.RequestURI)
		mu.Unlock()
		if r.RequestURI == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, mediawikiRobots)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<title>%s</title>", strings.ReplaceAll(r.URL.Path, "<", ""))
		for _, l := range mediawikiLinks[r.URL.Path] {
			fmt.Fprintf(w, "<a href=\"%s\">x</a>\n", l.href)
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	// The test's own verdicts must be the rules'.
	g := robots.Parse([]byte(mediawikiRobots)).Group(robots.ProductToken(DefaultUserAgent))
	for _, ls := range mediawikiLinks {
		for _, l := range ls {
			if w := strings.ReplaceAll(l.href, "&amp;", "&"); g.Allowed(w) != l.allowed {
				t.Fatalf("%s: the test says allowed=%v, robots.txt says otherwise", w, l.allowed)
			}
		}
	}

	cfg := testConfig()
	cfg.Types = nil // HTML
	seeds := []string{base + "/wiki/Main_Page", base + "/wiki/Other"}
	hop1 := runFetch(t, cfg, seeds...)
	var next []string
	for _, s := range seeds { // in seed order, so the run is deterministic
		r := hop1[s].rec
		if str(r, "error") != "" {
			t.Fatalf("%s: %s", s, str(r, "error"))
		}
		next = append(next, strs(t, hop1, s, "links")...)
	}
	// Main's history link and Other's with a tracking tag share a key: the
	// second is a duplicate and not requested.
	hop2 := runFetch(t, cfg, next...)

	mu.Lock()
	log := append([]string(nil), got...)
	mu.Unlock()
	count := map[string]int{}
	for _, l := range log {
		count[l]++
	}
	for page, ls := range mediawikiLinks {
		for _, l := range ls {
			w := strings.ReplaceAll(l.href, "&amp;", "&")
			switch {
			case !l.allowed && count[w] > 0:
				t.Errorf("%s (on %s): disallowed, requested %d times", w, page, count[w])
			case !l.allowed:
				if r, ok := hop2[base+w]; !ok || errCode(r.rec) != CodeRobots {
					t.Errorf("%s: want a robots error record", w)
				}
			case strings.Contains(w, "utm_source"):
				if count[w] != 0 || errCode(hop2[base+w].rec) != CodeDuplicate {
					t.Errorf("%s: requested %d times, error %q; want a duplicate, not requested", w, count[w], str(hop2[base+w].rec, "error"))
				}
			case count[w] != 1:
				t.Errorf("%s (on %s): requested %d times as written, want once; the server saw %q", w, page, count[w], log)
			default:
				if r := hop2[base+w].rec; str(r, "final_url") != base+w || num(r, "status") != 200 {
					t.Errorf("%s: final_url %q, status %d", w, str(r, "final_url"), num(r, "status"))
				}
			}
		}
	}
	// Nothing else was asked but robots.txt and the seeds: no re-ordered,
	// re-encoded or stripped spelling.
	for l, n := range count {
		known := l == "/robots.txt" || l == "/wiki/Main_Page" || l == "/wiki/Other"
		for _, ls := range mediawikiLinks {
			for _, x := range ls {
				known = known || strings.ReplaceAll(x.href, "&amp;", "&") == l
			}
		}
		if !known || (l == "/robots.txt" && n != 2) {
			t.Errorf("the server saw %q %d times", l, n)
		}
	}
}
