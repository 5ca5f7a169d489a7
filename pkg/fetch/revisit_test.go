package fetch

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sekitei/crawlkit/pkg/warc"
	"github.com/sekitei/crawlkit/pkg/warc/cdxj"
)

// revisitSite serves a small site: three static pages (a home page linking
// to the others, two pages of 20 KB), two URLs with the same body, a page
// that changes with every run and one that answers 304 to its ETag.
func revisitSite(run *atomic.Int64) http.Handler {
	rnd := rand.New(rand.NewSource(7))
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			fmt.Fprintf(&b, "word%d ", rnd.Intn(100000))
		}
		return b.String()
	}
	pageA, pageB, dup := text(20<<10), text(20<<10), text(20<<10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html := func(title, body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<html><head><title>%s</title></head><body>%s</body></html>", title, body)
		}
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			html("Home", `<a href="/a">a</a> <a href="/b">b</a> <a href="/copy1">c1</a> <a href="/copy2" rel="nofollow">c2</a>`)
		case "/a":
			html("A", pageA)
		case "/b":
			html("B", pageB)
		case "/copy1", "/copy2":
			html("Copy", dup)
		case "/news":
			html("News", fmt.Sprintf("edition %d", run.Load()))
		case "/tagged":
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			html("Tagged", "stable")
		default:
			http.NotFound(w, r)
		}
	})
}

// warcRecords reads every record of files with our reader.
func warcRecords(t *testing.T, files []string) []*warc.Record {
	t.Helper()
	var out []*warc.Record
	for _, name := range files {
		out = append(out, readAll(t, name)...)
	}
	return out
}

func readAll(t *testing.T, path string) []*warc.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := warc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []*warc.Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, err := io.ReadAll(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		rec.Body = strings.NewReader(string(body))
		out = append(out, rec)
	}
}

func filesSize(t *testing.T, files []string) int64 {
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

// A site crawled twice, the second run given the first run's records as
// the loop does: in run 2 the unchanged pages are revisits of run 1's
// responses, the changed page a response, the 304 a server-not-modified
// revisit; in run 1 the second of two identical payloads is a revisit of
// the first. warcio and our reader read the same records.
func TestRevisits(t *testing.T) {
	var run atomic.Int64
	h := newHost(t, "127.0.0.71", revisitSite(&run))
	pages := []string{"/", "/a", "/b", "/copy1", "/copy2", "/news", "/tagged"}
	dir := t.TempDir()
	crawl := func(inputs []string, prefix string) (map[string]emitted, []string) {
		w, err := warc.Create(warc.Options{Dir: dir, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig()
		cfg.WARC = w
		cfg.Workers = 1 // copy1 is archived before copy2 is fetched
		out := runFetch(t, cfg, inputs...)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return out, w.Files()
	}

	run.Store(1)
	var in1 []string
	for _, p := range pages {
		in1 = append(in1, h.url(p))
	}
	out1, files1 := crawl(in1, "one")
	run.Store(2)
	var in2 []string
	for _, p := range pages {
		in2 = append(in2, string(out1[h.url(p)].rec.AppendJSON(nil)))
	}
	out2, files2 := crawl(in2, "two")

	recs1, recs2 := warcRecords(t, files1), warcRecords(t, files2)
	at := func(recs []*warc.Record, file string, off int64) *warc.Record {
		for _, r := range recs {
			if r.Offset == off {
				return r
			}
		}
		t.Fatalf("no record at %s:%d", file, off)
		return nil
	}
	// responses1 finds run 1's response by URI and date, as a replay tool
	// resolves a revisit.
	responses1 := map[string]*warc.Record{}
	for _, r := range recs1 {
		if r.Type() == warc.TypeResponse {
			responses1[r.TargetURI()+" "+r.Header.Get(warc.FieldDate)] = r
		}
	}
	checkRevisit := func(run int, page string, e emitted, recs []*warc.Record, refersTo string) {
		t.Helper()
		r := at(recs, str(e.rec, "warc_file"), int64(num(e.rec, "warc_offset")))
		if r.Type() != warc.TypeRevisit || str(e.rec, "warc_type") != "revisit" ||
			r.Header.Get(warc.FieldProfile) != profileIdentical || r.Header.Get(warc.FieldContentType) != warc.ContentTypeHTTPResponse {
			t.Errorf("run %d %s: %v, record %s", run, page, r.Header, e.rec.AppendJSON(nil))
			return
		}
		orig := responses1[r.Header.Get(warc.FieldRefersToTargetURI)+" "+r.Header.Get(warc.FieldRefersToDate)]
		if orig == nil || orig.TargetURI() != refersTo || orig.Header.Get(warc.FieldPayloadDigest) != r.Header.Get(warc.FieldPayloadDigest) ||
			str(e.rec, "warc_refers_to") != refersTo || r.Header.Get(warc.FieldPayloadDigest) != str(e.rec, "digest") {
			t.Errorf("run %d %s: refers to %v, want the response of %s in run 1", run, page, r.Header, refersTo)
			return
		}
		// The block is the HTTP response header alone.
		resp, err := r.HTTPResponse()
		if err != nil {
			t.Fatal(err)
		}
		if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || len(body) != 0 {
			t.Errorf("run %d %s: revisit block holds status %d and %d payload bytes", run, page, resp.StatusCode, len(body))
		}
	}
	isResponse := func(run int, page string, e emitted, recs []*warc.Record) *warc.Record {
		t.Helper()
		r := at(recs, str(e.rec, "warc_file"), int64(num(e.rec, "warc_offset")))
		if r.Type() != warc.TypeResponse || e.rec.Has("warc_type") {
			t.Errorf("run %d %s: %s record, %s", run, page, r.Type(), e.rec.AppendJSON(nil))
		}
		return r
	}

	// Run 1: one response per payload; copy2 revisits copy1.
	for _, p := range []string{"/", "/a", "/b", "/copy1", "/news", "/tagged"} {
		isResponse(1, p, out1[h.url(p)], recs1)
	}
	checkRevisit(1, "/copy2", out1[h.url("/copy2")], recs1, h.url("/copy1"))

	// Run 2: every unchanged page a revisit of its run-1 capture (copy2's
	// of copy1's, the capture its input names); /news a response.
	for _, p := range []string{"/", "/a", "/b", "/copy1"} {
		checkRevisit(2, p, out2[h.url(p)], recs2, h.url(p))
	}
	checkRevisit(2, "/copy2", out2[h.url("/copy2")], recs2, h.url("/copy1"))
	isResponse(2, "/news", out2[h.url("/news")], recs2)
	e := out2[h.url("/tagged")]
	r := at(recs2, str(e.rec, "warc_file"), int64(num(e.rec, "warc_offset")))
	if num(e.rec, "status") != 304 || r.Type() != warc.TypeRevisit || r.Header.Get(warc.FieldProfile) != profileNotModified ||
		r.Header.Get(warc.FieldRefersToTargetURI) != h.url("/tagged") || responses1[h.url("/tagged")+" "+r.Header.Get(warc.FieldRefersToDate)] == nil {
		t.Errorf("304: %v, %s", r.Header, e.rec.AppendJSON(nil))
	}
	responses2 := 0
	for _, r := range recs2 {
		if r.Type() == warc.TypeResponse && r.TargetURI() != h.url("/robots.txt") {
			responses2++
		}
	}
	if responses2 != 1 {
		t.Errorf("run 2 wrote %d page responses, want 1 (/news)", responses2)
	}

	// Outlinks: the home page's metadata record, concurrent to its
	// response, lists its links (the nofollow one too); none in run 2,
	// where the home page is a revisit.
	home := isResponse(1, "/", out1[h.url("/")], recs1)
	var md []*warc.Record
	for _, rs := range [][]*warc.Record{recs1, recs2} {
		for _, r := range rs {
			if r.Type() == warc.TypeMetadata {
				md = append(md, r)
			}
		}
	}
	if len(md) != 1 || md[0].Header.Get(warc.FieldConcurrentTo) != home.ID() ||
		md[0].Header.Get(warc.FieldContentType) != "application/warc-fields" || md[0].TargetURI() != h.url("/") {
		t.Fatalf("metadata records %d, want 1 concurrent to %s", len(md), home.ID())
	}
	block, _ := io.ReadAll(md[0].Body)
	want := fmt.Sprintf("outlink: %s\r\noutlink: %s\r\noutlink: %s\r\noutlink: %s\r\n", h.url("/a"), h.url("/b"), h.url("/copy1"), h.url("/copy2"))
	if string(block) != want {
		t.Errorf("outlinks block %q, want %q", block, want)
	}

	// warcio reads the same records, revisit fields included.
	all := append(append([]string(nil), files1...), files2...)
	theirs := warcioRead(t, all)
	ours := append(append([]*warc.Record(nil), recs1...), recs2...)
	if len(theirs) != len(ours) {
		t.Fatalf("warcio read %d records, we %d", len(theirs), len(ours))
	}
	byID := map[string]*warc.Record{}
	for _, r := range ours {
		byID[r.ID()] = r
	}
	revisits := 0
	for _, l := range theirs {
		r := byID[l.ID]
		if r == nil || r.Type() != l.Type || r.Header.Get(warc.FieldProfile) != l.Profile ||
			r.Header.Get(warc.FieldRefersToTargetURI) != l.RefersToURI || r.Header.Get(warc.FieldRefersToDate) != l.RefersToDate {
			t.Errorf("warcio %+v, ours %v", l, r)
		}
		if l.Type == warc.TypeRevisit {
			revisits++
		}
	}
	if revisits != 7 {
		t.Errorf("warcio read %d revisits, want 7 (1 in run 1, 6 in run 2)", revisits)
	}

	// The CDXJ index is the one warcio's cdx-index makes of the same
	// files, line for line once both are sorted.
	var es []cdxj.Entry
	for _, f := range all {
		e, err := cdxj.IndexFile(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e...)
	}
	var ourIndex bytes.Buffer
	if err := cdxj.Write(&ourIndex, es); err != nil {
		t.Fatal(err)
	}
	node, _ := exec.LookPath("node")
	cli, _ := filepath.Abs("../../.deps/warcio/node_modules/warcio/dist/cli.js")
	theirIndex, err := exec.Command(node, append([]string{cli, "cdx-index"}, all...)...).Output()
	if err != nil {
		t.Fatalf("warcio cdx-index: %v", err)
	}
	theirLines := strings.Split(strings.TrimSuffix(string(theirIndex), "\n"), "\n")
	slices.Sort(theirLines) // warcio writes file order; pywb's indexer sorts
	ourLines := strings.Split(strings.TrimSuffix(ourIndex.String(), "\n"), "\n")
	if len(ourLines) != len(theirLines) {
		t.Fatalf("%d index lines, warcio %d", len(ourLines), len(theirLines))
	}
	kinds := map[bool]int{}
	for i := range ourLines {
		if ourLines[i] != theirLines[i] {
			t.Errorf("index line %d:\n ours   %s\n warcio %s", i, ourLines[i], theirLines[i])
		}
		kinds[strings.Contains(ourLines[i], `"mime":"warc/revisit"`)]++
	}
	if kinds[true] != 7 || kinds[false] != 9 {
		t.Errorf("index: %d revisit lines, %d others; want 7 and 9 (7 page responses and 2 robots.txt)", kinds[true], kinds[false])
	}
	t.Logf("CDXJ: %d lines identical to warcio cdx-index's", len(ourLines))
	t.Logf("archive bytes: run 1 %d (%s), run 2 %d", filesSize(t, files1), filepath.Base(files1[0]), filesSize(t, files2))
}
