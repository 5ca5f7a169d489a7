package fetch

import (
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sekitei/crawlkit/pkg/record"
)

// With the default policy (HTML) an image link is not requested and a
// response served as a zip is not read; --types widens the policy.
func TestContentTypePolicy(t *testing.T) {
	h := newHost(t, "127.0.0.71", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/download":
			w.Header().Set("Content-Type", "application/zip")
			w.Write(make([]byte, 1<<20))
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<title>page</title>")
		}
	}))
	cfg := testConfig()
	cfg.Types = nil
	out := runFetch(t, cfg, h.url("/photo.jpg"), h.url("/download"), h.url("/page"))
	if errCode(out[h.url("/photo.jpg")].rec) != CodeType || h.requested("/photo.jpg") != 0 {
		t.Errorf("photo: %s, %d requests", out[h.url("/photo.jpg")].rec.AppendJSON(nil), h.requested("/photo.jpg"))
	}
	dl := out[h.url("/download")].rec
	if errCode(dl) != CodeType || str(dl, "content_type") != "application/zip" || num(dl, "status") != 200 {
		t.Errorf("download: %s", dl.AppendJSON(nil))
	}
	if _, has := dl.Raw("length"); has {
		t.Errorf("download: a length for a body not read: %s", dl.AppendJSON(nil))
	}
	if str(out[h.url("/page")].rec, "title") != "page" {
		t.Errorf("page: %s", out[h.url("/page")].rec.AppendJSON(nil))
	}
	cfg.Types = []string{"html", "image/*", "application/zip"}
	out = runFetch(t, cfg, h.url("/photo.jpg"), h.url("/download"))
	for _, u := range []string{h.url("/photo.jpg"), h.url("/download")} {
		if errCode(out[u].rec) != "" {
			t.Errorf("widened policy: %s", out[u].rec.AppendJSON(nil))
		}
	}
}

// A self-signed certificate fails; trusted with CAFile, or with Insecure,
// the page is fetched.
func TestTLSOptions(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>secure</title>")
	}))
	ln, err := net.Listen("tcp", "127.0.0.72:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.StartTLS()
	defer srv.Close()
	// httptest's certificate is for example.com and 127.0.0.1; the name
	// example.com is mapped to the server's address.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	u := "https://example.com:" + port + "/"
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	cert := srv.TLS.Certificates[0].Certificate[0]
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert}), 0o644); err != nil {
		t.Fatal(err)
	}
	base := testConfig()
	base.IgnoreRobots = true
	base.Retries = NoRetries
	base.LookupIP = lookupMap(map[string]string{"example.com": "127.0.0.72"})

	out := runFetch(t, base, u)
	if errCode(out[u].rec) != CodeTLS {
		t.Errorf("self-signed, no option: %s", out[u].rec.AppendJSON(nil))
	}
	withCA := base
	withCA.CAFile = caFile
	out = runFetch(t, withCA, u)
	if str(out[u].rec, "title") != "secure" {
		t.Errorf("--ca-file: %s", out[u].rec.AppendJSON(nil))
	}
	insecure := base
	insecure.Insecure = true
	out = runFetch(t, insecure, u)
	if str(out[u].rec, "title") != "secure" {
		t.Errorf("--insecure: %s", out[u].rec.AppendJSON(nil))
	}
	emit := func(*record.Record) error { return nil }
	if _, err := New(Config{CAFile: filepath.Join(t.TempDir(), "none.pem"), Emit: emit}); err == nil {
		t.Error("a missing CA file was accepted")
	}
	if _, err := New(Config{CAFile: caFile + ".notpem", Emit: emit}); err == nil {
		t.Error("a CA file that is not there was accepted")
	}
}

// proxyServer is a forward HTTP proxy on a loopback address that answers
// itself, logging the absolute URLs it is asked for.
func proxyServer(t *testing.T, ip string) (*testHost, func() []string) {
	var mu sync.Mutex
	var asked []string
	p := newHost(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.RequestURI)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<title>via proxy %s</title>", r.URL.Host)
	}))
	return p, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), asked...) }
}

func TestProxy(t *testing.T) {
	p, asked := proxyServer(t, "127.0.0.73")
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.AllowPrivate = false // the proxy itself is on loopback and allowed
	cfg.Proxy = "http://" + p.addr
	cfg.LookupIP = lookupMap(map[string]string{"site.test": "93.184.216.34", "inside.test": "10.0.0.5"})
	out := runFetch(t, cfg, "http://site.test/a", "http://inside.test/secret")
	if str(out["http://site.test/a"].rec, "title") != "via proxy site.test" {
		t.Errorf("--proxy: %s", out["http://site.test/a"].rec.AppendJSON(nil))
	}
	if errCode(out["http://inside.test/secret"].rec) != CodeBlocked {
		t.Errorf("a private address through the proxy: %s", out["http://inside.test/secret"].rec.AppendJSON(nil))
	}
	if got := strings.Join(asked(), " "); got != "http://site.test/a" {
		t.Errorf("the proxy was asked %q", got)
	}

	// The standard environment variables, when no proxy is given.
	p2, asked2 := proxyServer(t, "127.0.0.74")
	t.Setenv("HTTP_PROXY", "http://"+p2.addr)
	t.Setenv("NO_PROXY", "direct.test")
	env := testConfig()
	env.IgnoreRobots = true
	env.LookupIP = lookupMap(map[string]string{"site.test": "127.0.0.75"})
	out = runFetch(t, env, "http://site.test/b")
	if str(out["http://site.test/b"].rec, "title") != "via proxy site.test" || len(asked2()) != 1 {
		t.Errorf("HTTP_PROXY: %s, proxy asked %q", out["http://site.test/b"].rec.AppendJSON(nil), asked2())
	}
	none := env
	none.Proxy = "none"
	out = runFetch(t, none, "http://site.test/c")
	if errCode(out["http://site.test/c"].rec) != CodeConnect || len(asked2()) != 1 {
		t.Errorf("--proxy none: %s, proxy asked %q", out["http://site.test/c"].rec.AppendJSON(nil), asked2())
	}
}
