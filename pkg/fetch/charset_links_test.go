package fetch

import (
	"net/http"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// A windows-1251 page whose meta charset comes after a 2 KB comment is read
// in windows-1251 (title and link queries), served by a real HTTP server
// without a charset in its Content-Type.
func TestLateMetaCharset(t *testing.T) {
	page := `<!DOCTYPE html><html><head><!-- ` + strings.Repeat("служебный комментарий ", 100) + ` -->
<script>var s = '<meta charset="koi8-r">';</script>
<meta charset="windows-1251"><title>Новости дня</title></head><body>
<a href="before.html">b</a><base href="/dir/">
<a href="/search?q=привет">поиск</a><a href="/p?a=1&not=2">p</a>
<noscript><a href="/ns.html">без скриптов</a></noscript>
</body></html>`
	body, err := charmap.Windows1251.NewEncoder().Bytes([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(page, `<meta charset="windows-1251">`); i < 2048 {
		t.Fatalf("the meta is at %d", i)
	}
	h := newHost(t, "127.0.0.78", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(body)
	}))
	cfg := testConfig()
	cfg.IgnoreRobots = true
	out := runFetch(t, cfg, h.url("/"))
	r := out[h.url("/")].rec
	if str(r, "title") != "Новости дня" || str(r, "charset") != "windows-1251" || str(r, "charset_source") != "meta" {
		t.Fatalf("%s", r.AppendJSON(nil))
	}
	ls := strs(t, out, h.url("/"), "links")
	want := []string{
		h.url("/dir/before.html"),
		h.url("/search?q=%EF%F0%E8%E2%E5%F2"), // the query in windows-1251
		h.url("/p?a=1&not=2"),                 // &not= is no character reference
		h.url("/ns.html"),
	}
	if strings.Join(ls, " ") != strings.Join(want, " ") {
		t.Errorf("links\n got %q\nwant %q", ls, want)
	}
}
