package fetchcli

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sekitei/crawlkit/pkg/clikit"
)

// floodSite is a hostile site: its robots.txt names a sitemap index of
// `sitemaps` sitemaps, each listing `per` URLs. It counts the files served.
type floodSite struct {
	sitemaps, per int
	mu            sync.Mutex
	files         int
	base          string
}

func (s *floodSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.files++
	s.mu.Unlock()
	switch {
	case r.URL.Path == "/robots.txt":
		fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/index.xml\n", s.base)
	case r.URL.Path == "/index.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := 0; i < s.sitemaps; i++ {
			fmt.Fprintf(w, "<sitemap><loc>%s/s/%d.xml</loc></sitemap>\n", s.base, i)
		}
		fmt.Fprint(w, `</sitemapindex>`)
	case strings.HasPrefix(r.URL.Path, "/s/"):
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := 0; i < s.per; i++ {
			fmt.Fprintf(w, "<url><loc>%s/p%s-%d</loc></url>\n", s.base, strings.TrimSuffix(r.URL.Path[3:], ".xml"), i)
		}
		fmt.Fprint(w, `</urlset>`)
	default:
		http.NotFound(w, r)
	}
}

func serveFlood(t *testing.T, ip string, sitemaps, per int) *floodSite {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	s := &floodSite{sitemaps: sitemaps, per: per, base: "http://" + ln.Addr().String()}
	hs := &http.Server{Handler: s}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return s
}

func runSitemaps(t *testing.T, input string, args ...string) (stdout, stderr string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "sites.txt")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	argv := append(append([]string{"fetch", "sitemaps", "--allow-private", "--delay", "0"}, args...), in)
	if rc := Main(argv, clikit.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}); rc != 0 {
		t.Fatalf("fetch sitemaps exit %d: %s", rc, errb.String())
	}
	return out.String(), errb.String()
}

func countHost(out, host string) int {
	return strings.Count(out, `"host":"`+host+`:`)
}

// TestSitemapsCappedPerSiteAndInAll: three hostile sites each name an index
// of 1000 sitemaps of 50 URLs. With 120 URLs a site and 200 in all, the
// first site gives 120 URLs from 3 sitemaps, the second the 80 left, the
// third is not read; stderr names each cut, and no sitemap past a cap is
// fetched.
func TestSitemapsCappedPerSiteAndInAll(t *testing.T) {
	a := serveFlood(t, "127.0.32.1", 1000, 50)
	b := serveFlood(t, "127.0.32.2", 1000, 50)
	c := serveFlood(t, "127.0.32.3", 1000, 50)
	out, stderr := runSitemaps(t, a.base+"/\n"+b.base+"/\n"+c.base+"/\n", "--max-urls-per-site", "120", "--max-urls", "200")
	if n := countHost(out, "127.0.32.1"); n != 120 {
		t.Errorf("site a: %d URLs, want 120", n)
	}
	if n := countHost(out, "127.0.32.2"); n != 80 {
		t.Errorf("site b: %d URLs, want 80", n)
	}
	if n := strings.Count(out, "\n"); n != 200 {
		t.Errorf("%d records, want 200", n)
	}
	// robots.txt, the index and the 3 sitemaps that held the first 120 (2 for b's 80).
	if a.files != 5 || b.files != 4 || c.files != 0 {
		t.Errorf("files served: a %d, b %d, c %d; want 5, 4, 0", a.files, b.files, c.files)
	}
	for _, want := range []string{
		"fetch: sitemaps: 127.0.32.1: --max-urls-per-site 120 reached: the rest of its sitemaps not read\n",
		"fetch: sitemaps: 127.0.32.2: --max-urls 200 reached: the rest of its sitemaps not read\n",
		"fetch: sitemaps: --max-urls 200 reached: 1 sites or sitemaps after it not read\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestSitemapsDefaultsBoundAFlood: an index of 50,000 sitemaps of 2000
// URLs is read up to the default 50,000 URLs of the site (25 sitemaps);
// --max-sitemaps bounds the files of a site whose sitemaps are empty.
func TestSitemapsDefaultsBoundAFlood(t *testing.T) {
	a := serveFlood(t, "127.0.32.4", 50000, 2000)
	out, stderr := runSitemaps(t, a.base+"/\n")
	if n := strings.Count(out, "\n"); n != 50000 {
		t.Errorf("%d URLs, want the default cap of 50000", n)
	}
	if a.files != 2+25 {
		t.Errorf("%d files served, want robots.txt, the index and 25 sitemaps", a.files)
	}
	if !strings.Contains(stderr, "--max-urls-per-site 50000 reached") {
		t.Errorf("stderr: %s", stderr)
	}

	empty := serveFlood(t, "127.0.32.5", 50000, 0)
	out, stderr = runSitemaps(t, empty.base+"/\n", "--max-sitemaps", "7")
	if out != "" || empty.files != 1+7 {
		t.Errorf("empty sitemaps: %d files served (want robots.txt and 7), output %q", empty.files, out)
	}
	if !strings.Contains(stderr, "more than 7 sitemaps for one site: not read") {
		t.Errorf("stderr: %s", stderr)
	}
}

// TestSitemapsSkipsAHugeInputLine: a 3 MB line among the sites is reported
// by its number and skipped; the lines around it are read (the sitemap
// named directly lists nothing under its own directory).
func TestSitemapsSkipsAHugeInputLine(t *testing.T) {
	a := serveFlood(t, "127.0.32.6", 1, 3)
	in := a.base + "/\n" + a.base + "/" + strings.Repeat("x", 3<<20) + "\n" + a.base + "/s/0.xml\n"
	out, stderr := runSitemaps(t, in)
	if n := strings.Count(out, "\n"); n != 3 || !strings.Contains(stderr, "fetch: sitemaps: 2 sites or sitemaps read, 3 URLs listed") {
		t.Errorf("%d records, want the site's 3, and both other lines read:\n%s\n%s", n, out, stderr)
	}
	if !strings.Contains(stderr, "line 2: a line of 3145752 bytes, longer than a record may be (1048576 bytes") {
		t.Errorf("stderr: %s", stderr)
	}
}
