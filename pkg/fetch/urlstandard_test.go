package fetch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/urltestdata"
	"github.com/sekitei/crawlkit/pkg/urlnorm"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

type standardLink = urltestdata.Case

func loadStandardLinks(t *testing.T) (byBase map[string][]standardLink, bases []string) {
	t.Helper()
	cases, err := urltestdata.Load()
	if err != nil {
		t.Fatal(err)
	}
	byBase = map[string][]standardLink{}
	for _, c := range cases {
		if c.Base == nil || !(strings.HasPrefix(*c.Base, "http:") || strings.HasPrefix(*c.Base, "https:")) {
			continue
		}
		if !c.Failure && !(strings.HasPrefix(c.Href, "http:") || strings.HasPrefix(c.Href, "https:")) {
			continue // a valid link, but not one a crawler follows (mailto:, data:...)
		}
		// A NUL cannot reach an href: HTML's tokenizer turns it into
		// U+FFFD, a different URL.
		if strings.ContainsRune(c.Input, 0) {
			continue
		}
		if _, ok := byBase[*c.Base]; !ok {
			bases = append(bases, *c.Base)
		}
		byBase[*c.Base] = append(byBase[*c.Base], c)
	}
	return byBase, bases
}

// attrEscape writes s as a double-quoted attribute value.
func attrEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;").Replace(s)
}

// The URL Standard's test data through the whole link path of a fetch: a
// page served on loopback holds <base href=BASE> and one <a href=INPUT> per
// case of that base; its links are the Standard's results in document
// order (failures give none), each spelling kept as the Standard
// serialises it, a repeat of a key dropped.
func TestLinksFollowURLStandard(t *testing.T) {
	byBase, bases := loadStandardLinks(t)
	pages := map[string]string{}
	want := map[string][]string{}
	cases := 0
	for i, base := range bases {
		var page strings.Builder
		fmt.Fprintf(&page, "<!doctype html><meta charset=utf-8><title>case %d</title><base href=\"%s\">\n", i, attrEscape(base))
		seen := map[string]bool{}
		for _, c := range byBase[base] {
			cases++
			fmt.Fprintf(&page, "<a href=\"%s\">x</a>\n", attrEscape(c.Input))
			if c.Failure {
				continue
			}
			href := strings.TrimSuffix(c.Href, c.Hash)
			href = strings.TrimSuffix(href, "#")
			key, err := urlnorm.Normalize(href)
			if err != nil {
				key = href
			}
			if !seen[key] {
				seen[key] = true
				want[fmt.Sprintf("/page/%d", i)] = append(want[fmt.Sprintf("/page/%d", i)], href)
			}
		}
		pages[fmt.Sprintf("/page/%d", i)] = page.String()
	}
	h := newHost(t, "127.0.0.71", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(p))
	}))
	var inputs []string
	for i := range bases {
		inputs = append(inputs, h.url(fmt.Sprintf("/page/%d", i)))
	}
	out := runFetch(t, testConfig(), inputs...)
	pass, total := 0, 0
	for i := range bases {
		path := fmt.Sprintf("/page/%d", i)
		rec := out[h.url(path)].rec
		var got []string
		rec.Decode("links", &got)
		var nf []string
		rec.Decode("nofollow_links", &nf)
		got = append(got, nf...)
		exp := want[path]
		total += len(exp)
		gotSet := map[string]bool{}
		for _, g := range got {
			gotSet[g] = true
		}
		for _, e := range exp {
			if gotSet[e] {
				pass++
			} else {
				t.Errorf("base %s: link %q missing", bases[i], e)
			}
		}
		expSet := map[string]bool{}
		for _, e := range exp {
			expSet[e] = true
		}
		for _, g := range got {
			if !expSet[g] {
				t.Errorf("base %s: link %q, which the Standard does not give", bases[i], g)
			}
		}
		if len(got) == len(exp) {
			for j := range got {
				if got[j] != exp[j] {
					t.Errorf("base %s: link %d is %q, want %q (document order)", bases[i], j, got[j], exp[j])
					break
				}
			}
		}
	}
	t.Logf("%d hrefs of the URL Standard's test data on %d pages: %d of %d expected links found", cases, len(bases), pass, total)
}

// seedExceptions are the valid seeds fetch refuses, with the reason
// (docs/fetch.md lists them).
var seedExceptions = map[string]string{
	"http://!\"$&'()*+,-.;=_`{}~/": "a host name of characters no DNS name holds: Go's HTTP client refuses it, and no resolver would answer it",
}

// The URL Standard's absolute http(s) inputs as seeds: each valid one is
// requested exactly as the Standard serialises it (a loopback proxy logs
// the request line: no request leaves the machine), each invalid one is
// refused with error "url" and never requested.
func TestSeedsFollowURLStandard(t *testing.T) {
	cases, err := urltestdata.Load()
	if err != nil {
		t.Fatal(err)
	}
	// The proxy reads request lines itself: net/http's server answers 400
	// to a target the Standard allows ("/foo%").
	var mu sync.Mutex
	requested := map[string]int{}
	ln, err := net.Listen("tcp", "127.0.0.73:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				for {
					h, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if h == "\r\n" {
						break
					}
				}
				method, rest, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
				target, _, _ := strings.Cut(rest, " ")
				mu.Lock()
				requested[target]++
				mu.Unlock()
				if method == http.MethodConnect {
					io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			}()
		}
	}()
	var inputs []string
	want := map[string]string{} // input -> request line target, "" for a failure
	for _, c := range cases {
		in := strings.ToLower(strings.TrimLeft(c.Input, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
		if c.Base != nil || !(strings.HasPrefix(in, "http:") || strings.HasPrefix(in, "https:")) {
			continue
		}
		if !c.Failure && !strings.HasPrefix(c.Href, "http://") && !strings.HasPrefix(c.Href, "https://") {
			continue
		}
		// A record is a JSON line, so a seed may hold any character; one
		// whose trimmed form repeats another's is run once.
		if _, dup := want[c.Input]; dup || strings.TrimSpace(c.Input) != c.Input {
			continue
		}
		target := ""
		if !c.Failure {
			u, err := weburl.Parse(c.Href)
			if err != nil {
				t.Fatalf("%q: the Standard's own href %q does not parse: %v", c.Input, c.Href, err)
			}
			u.Userinfo = "" // sent as Authorization, not in the request line
			target = u.String()
		}
		want[c.Input] = target
		line, _ := json.Marshal(map[string]string{"url": c.Input})
		inputs = append(inputs, string(line))
	}
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.Proxy = "http://" + ln.Addr().String()
	cfg.Retries = NoRetries
	cfg.LookupIP = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.74")}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := fetchAll(ctx, cfg, inputs)
	if err != nil {
		t.Fatal(err)
	}
	valid, invalid := 0, 0
	for in, target := range want {
		rec := out[in].rec
		if rec == nil {
			t.Errorf("%q: no record", in)
			continue
		}
		if target == "" {
			invalid++
			if errCode(rec) != CodeURL {
				t.Errorf("%q: the Standard refuses it, fetch gives %s", in, rec.AppendJSON(nil))
			}
			continue
		}
		valid++
		if reason, ok := seedExceptions[in]; ok {
			if errCode(rec) != CodeURL {
				t.Errorf("%q: listed as refused (%s), but fetch now takes it: update the list and docs/fetch.md", in, reason)
			}
			continue
		}
		if errCode(rec) == CodeURL {
			t.Errorf("%q: valid (%s), refused: %s", in, target, str(rec, "error"))
			continue
		}
		if strings.HasPrefix(target, "http://") && requested[target] == 0 {
			t.Errorf("%q: %q not requested (the proxy saw %d requests): %s", in, target, len(requested), rec.AppendJSON(nil))
		}
	}
	t.Logf("%d valid and %d invalid absolute inputs of the URL Standard's test data as seeds", valid, invalid)
	if valid < 100 || invalid < 50 {
		t.Errorf("too few cases: %d valid, %d invalid", valid, invalid)
	}
}
