package fetch

import (
	"compress/gzip"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/urlx"
	"golang.org/x/text/encoding/charmap"
)

func cp1251(s string) string {
	b, _ := charmap.Windows1251.NewEncoder().Bytes([]byte(s))
	return string(b)
}

func koi8(s string) string {
	b, _ := charmap.KOI8R.NewEncoder().Bytes([]byte(s))
	return string(b)
}

const russianBody = `<p>Правительство обсудило бюджет на следующий год. Эксперты считают, что рост цен
замедлится, а курс рубля останется стабильным. Подробности в нашем материале.</p>`

// russianSite serves pages built like those of Russian and English news
// sites: legacy charsets, webmasters' directives, clocks and counters.
func russianSite(clock *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := func(ct, body string) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.Write([]byte(body))
		}
		switch r.URL.Path {
		case "/meta1251":
			page("text/html", cp1251(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251">
<title>Новости дня</title></head><body>`+russianBody+`<a href="/статья?тема=бюджет">статья</a></body></html>`))
		case "/nodecl":
			page("text/html", cp1251(`<html><head><title>Главная страница</title></head><body>`+russianBody+`<a href="/раздел/новости">новости</a></body></html>`))
		case "/koi":
			page("text/html", koi8(`<html><head><title>Кинопоиск: фильмы</title></head><body>`+russianBody+`</body></html>`))
		case "/lies":
			page("text/html; charset=utf-8", cp1251(`<html><head><meta charset="utf-8"><title>За рулём</title></head><body>`+russianBody+`</body></html>`))
		case "/noindex":
			page("text/html", `<meta name="robots" content="noindex"><title>n</title><a href="/a">a</a>`)
		case "/xrt":
			w.Header().Set("X-Robots-Tag", "noindex, nofollow")
			page("text/html", `<title>x</title><a href="/a">a</a><a href="/b">b</a>`)
		case "/xrt-other":
			w.Header().Set("X-Robots-Tag", "googlebot: noindex")
			page("text/html", `<title>x</title><a href="/a">a</a>`)
		case "/xrt-ours":
			w.Header().Add("X-Robots-Tag", "otherbot: noarchive")
			w.Header().Add("X-Robots-Tag", "crawlkit: none")
			page("text/html", `<title>x</title><a href="/a">a</a>`)
		case "/xrt-pdf":
			w.Header().Set("X-Robots-Tag", "noindex")
			page("application/pdf", "%PDF-1.4 ...")
		case "/canon":
			page("text/html", `<link rel="canonical" href="/Canon/./page?b=2&a=1&utm_source=feed"><title>c</title>`)
		case "/refresh":
			page("text/html", `<meta http-equiv="refresh" content="0; url='/%7Etarget/'"><title>r</title>`)
		case "/clock":
			n := clock.Add(1)
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			page("text/html", fmt.Sprintf(`<html><head><title>Часы</title><script>var t=%d</script></head><body>
<header><a href="/">Главная</a></header><div>Сейчас %02d:%02d, 21 ноября 2026</div>
<aside><a href="/promo">Баннер номер %d</a></aside><article>%s</article>
<footer>Посетителей: %d</footer></body></html>`, n, n%24, n%60, n, russianBody, 1000+n))
		case "/gz":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.ModTime = time.Unix(1_700_000_000+clock.Add(1)*3600, 0) // a new header time each answer
			zw.Write([]byte(`<title>gz</title>` + russianBody))
			zw.Close()
		default:
			page("text/html", "<title>"+r.URL.Path+"</title>")
		}
	})
}

func strs(t *testing.T, out map[string]emitted, u, field string) []string {
	t.Helper()
	var l []string
	if r, ok := out[u]; ok {
		r.rec.Decode(field, &l)
	}
	return l
}

func TestRealWebCharsets(t *testing.T) {
	var clock atomic.Int64
	h := newHost(t, "127.0.0.61", russianSite(&clock))
	cfg := testConfig()
	cfg.IgnoreRobots = true
	out := runFetch(t, cfg, h.url("/meta1251"), h.url("/nodecl"), h.url("/koi"), h.url("/lies"))
	for _, c := range []struct{ path, title, charset, source, link string }{
		{"/meta1251", "Новости дня", "windows-1251", "meta", "/%D1%81%D1%82%D0%B0%D1%82%D1%8C%D1%8F?%F2%E5%EC%E0=%E1%FE%E4%E6%E5%F2"}, // the query in the page's windows-1251, the path in UTF-8
		{"/nodecl", "Главная страница", "windows-1251", "sniffed", "/%D1%80%D0%B0%D0%B7%D0%B4%D0%B5%D0%BB/%D0%BD%D0%BE%D0%B2%D0%BE%D1%81%D1%82%D0%B8"},
		{"/koi", "Кинопоиск: фильмы", "koi8-r", "sniffed", ""},
		{"/lies", "За рулём", "windows-1251", "sniffed", ""},
	} {
		r := out[h.url(c.path)].rec
		if str(r, "title") != c.title || str(r, "charset") != c.charset || str(r, "charset_source") != c.source {
			t.Errorf("%s: %s", c.path, r.AppendJSON(nil))
		}
		if ls := strs(t, out, h.url(c.path), "links"); c.link != "" && (len(ls) != 1 || ls[0] != h.url(c.link)) {
			t.Errorf("%s: links %q, want %q", c.path, ls, h.url(c.link))
		}
	}
}

func TestRealWebDirectives(t *testing.T) {
	var clock atomic.Int64
	h := newHost(t, "127.0.0.62", russianSite(&clock))
	cfg := testConfig()
	cfg.IgnoreRobots = true
	paths := []string{"/noindex", "/xrt", "/xrt-other", "/xrt-ours", "/xrt-pdf", "/canon", "/refresh"}
	var in []string
	for _, p := range paths {
		in = append(in, h.url(p))
	}
	out := runFetch(t, cfg, in...)
	for _, c := range []struct {
		path             string
		robots, links    []string
		nofollow         []string
		canonical, fresh string
	}{
		{"/noindex", []string{"noindex"}, []string{"/a"}, nil, "", ""},
		{"/xrt", []string{"nofollow", "noindex"}, []string{}, []string{"/a", "/b"}, "", ""},
		{"/xrt-other", nil, []string{"/a"}, nil, "", ""},
		{"/xrt-ours", []string{"nofollow", "noindex"}, []string{}, []string{"/a"}, "", ""},
		{"/xrt-pdf", []string{"noindex"}, nil, nil, "", ""}, // testConfig fetches every type
		// Written as they would be requested: dot segments resolved, the
		// query and its escapes as the page wrote them.
		{"/canon", nil, []string{}, nil, "/Canon/page?b=2&a=1&utm_source=feed", ""},
		{"/refresh", nil, []string{"/%7Etarget/"}, nil, "", "/%7Etarget/"},
	} {
		u := h.url(c.path)
		r := out[u].rec
		abs := func(ps []string) []string {
			if ps == nil {
				return nil
			}
			l := []string{}
			for _, p := range ps {
				l = append(l, h.url(p))
			}
			return l
		}
		if got := strs(t, out, u, "robots"); !reflect.DeepEqual(got, c.robots) {
			t.Errorf("%s: robots %q, want %q", c.path, got, c.robots)
		}
		_, hasNoindex := r.Raw("noindex")
		if hasNoindex != (len(c.robots) > 0 && strings.Contains(strings.Join(c.robots, ","), "noindex")) {
			t.Errorf("%s: noindex field %v", c.path, hasNoindex)
		}
		if got := strs(t, out, u, "links"); !reflect.DeepEqual(got, abs(c.links)) {
			t.Errorf("%s: links %q, want %q", c.path, got, abs(c.links))
		}
		if got := strs(t, out, u, "nofollow_links"); !reflect.DeepEqual(got, abs(c.nofollow)) {
			t.Errorf("%s: nofollow_links %q, want %q", c.path, got, abs(c.nofollow))
		}
		if c.canonical != "" && str(r, "canonical") != h.url(c.canonical) {
			t.Errorf("%s: canonical %q", c.path, str(r, "canonical"))
		}
		if c.fresh != "" && str(r, "refresh") != h.url(c.fresh) {
			t.Errorf("%s: refresh %q", c.path, str(r, "refresh"))
		}
	}
}

// A page whose clock, counter and banner change keeps its text_simhash; a
// 304 keeps it too; gzip with a new header time changes the digest only.
func TestRealWebMeaningfulChange(t *testing.T) {
	var clock atomic.Int64
	h := newHost(t, "127.0.0.63", russianSite(&clock))
	cfg := testConfig()
	cfg.IgnoreRobots = true
	first := runFetch(t, cfg, h.url("/clock"), h.url("/gz"))
	second := runFetch(t, cfg, h.url("/clock"), h.url("/gz"))
	for _, p := range []string{"/clock", "/gz"} {
		a, b := first[h.url(p)].rec, second[h.url(p)].rec
		if str(a, "digest") == str(b, "digest") {
			t.Errorf("%s: the bytes did not change; the test needs them to", p)
		}
		if sa := str(a, "text_simhash"); len(sa) != 16 || sa != str(b, "text_simhash") {
			t.Errorf("%s: text_simhash %q then %q", p, sa, str(b, "text_simhash"))
		}
	}
	// The record of the first fetch, sent back, gets a 304 that keeps what
	// says the page is unchanged.
	line := first[h.url("/clock")].rec.AppendJSON(nil)
	third := runFetch(t, cfg, string(line))
	r := third[h.url("/clock")].rec
	if num(r, "status") != 304 || str(r, "text_simhash") != str(first[h.url("/clock")].rec, "text_simhash") ||
		str(r, "digest") == "" || str(r, "charset") != "utf-8" {
		t.Errorf("304: %s", r.AppendJSON(nil))
	}
}

// Fifteen spellings of six pages make six requests, each of the first
// spelling as written (in the URL Standard's serialisation); the others
// are reported as duplicates of the line that was fetched.
func TestRealWebNormalisation(t *testing.T) {
	var clock atomic.Int64
	h := newHost(t, "127.0.0.64", russianSite(&clock))
	cfg := testConfig()
	cfg.IgnoreRobots = true
	host := h.addr
	in := []string{
		"http://" + host + "/p1?a=1&b=2", "http://" + host + "/p1?b=2&a=1", "http://" + host + "/p1?a=1&b=2&PHPSESSID=77",
		"http://" + host + "/~u/", "http://" + host + "/%7Eu/", "http://" + host + "/%7eu/#x",
		"http://" + host + "/%d0%b0", "http://" + host + "/%D0%B0", "http://" + host + "/а?",
		"http://" + host + "/x/./y/../z", "http://" + host + "/x/z",
		"HTTP://" + host + "/q", "http://" + host + "/q?",
		"http://" + host + "/r?utm_source=a", "http://" + host + "/r;jsessionid=AB12",
	}
	out := runFetch(t, cfg, in...)
	dups := 0
	for _, u := range in {
		if errCode(out[u].rec) == CodeDuplicate {
			dups++
		}
	}
	if n := len(h.log()); n != 6 || dups != 9 {
		t.Errorf("%d requests and %d duplicates, want 6 and 9: %v", n, dups, h.log())
	}
	var sent []string
	for _, hit := range h.log() {
		sent = append(sent, hit.path)
	}
	sort.Strings(sent)
	want := []string{"/%d0%b0", "/p1?a=1&b=2", "/q", "/r?utm_source=a", "/x/z", "/~u/"}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("requested %q, want %q", sent, want)
	}
}

// An IDN site (пример.рф) has one host key, in punycode, in every field
// fetch writes and for every tool that keys hosts (urlx.Host, as urlfeat,
// opic and sekitei do), whether a link spells the host in Unicode or
// percent-encoded, and after a redirect whose Location is in Unicode.
func TestRealWebIDN(t *testing.T) {
	const puny = "xn--e1afmkfd.xn--p1ai"
	var hosts sync.Map // Host headers the server saw
	h := newHost(t, "127.0.0.77", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts.Store(r.Host, true)
		_, port, _ := net.SplitHostPort(r.Host)
		uni := "http://пример.рф:" + port
		switch r.URL.Path {
		case "/старая":
			w.Header().Set("Location", uni+"/путь")
			w.WriteHeader(http.StatusMovedPermanently)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<title>Пример</title><a href="%s/другая">a</a>
<a href="http://%%D0%%BF%%D1%%80%%D0%%B8%%D0%%BC%%D0%%B5%%D1%%80.%%D1%%80%%D1%%84:%s/x">b</a>
<a href="http://ПРИМЕР.РФ:%s/y">c</a><a href="/z">d</a>`, uni, port, port)
		}
	}))
	_, port, _ := net.SplitHostPort(h.addr)
	base := "http://" + puny + ":" + port
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.LookupIP = lookupMap(map[string]string{puny: "127.0.0.77"})
	in := []string{"http://пример.рф:" + port + "/путь", "http://пример.рф:" + port + "/старая"}
	out := runFetch(t, cfg, in...)
	wantLinks := []string{base + "/%D0%B4%D1%80%D1%83%D0%B3%D0%B0%D1%8F", base + "/x", base + "/y", base + "/z"}
	for _, u := range in {
		r := out[u].rec
		if num(r, "status") != 200 || str(r, "host") != puny+":"+port {
			t.Errorf("%s: %s", u, r.AppendJSON(nil))
		}
		if got := strs(t, out, u, "links"); !reflect.DeepEqual(got, wantLinks) {
			t.Errorf("%s: links %q, want %q", u, got, wantLinks)
		}
		for _, l := range append(strs(t, out, u, "links"), str(r, "final_url")) {
			if hk, err := urlx.Host(l); err != nil || hk != puny+":"+port {
				t.Errorf("%s: host key of %s is %q (%v)", u, l, hk, err)
			}
		}
	}
	if fu := str(out[in[1]].rec, "final_url"); fu != base+"/%D0%BF%D1%83%D1%82%D1%8C" {
		t.Errorf("redirected: final_url %q", fu)
	}
	hosts.Range(func(k, _ any) bool {
		if k.(string) != puny+":"+port {
			t.Errorf("the server was sent Host %q", k)
		}
		return true
	})
}
