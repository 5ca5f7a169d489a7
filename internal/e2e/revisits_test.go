package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/warc"
)

// warcRec is what a test needs of one WARC record.
type warcRec struct {
	file                     string
	offset                   int64
	typ, uri, date, digest   string
	profile, refURI, refDate string
}

// readWARCs reads every record of files with pkg/warc's reader; a damaged
// record fails the test.
func readWARCs(t *testing.T, files []string) []warcRec {
	t.Helper()
	var out []warcRec
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := warc.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			h := rec.Header
			out = append(out, warcRec{file: filepath.Base(name), offset: rec.Offset, typ: rec.Type(), uri: rec.TargetURI(),
				date: h.Get(warc.FieldDate), digest: h.Get(warc.FieldPayloadDigest), profile: h.Get(warc.FieldProfile),
				refURI: h.Get(warc.FieldRefersToTargetURI), refDate: h.Get(warc.FieldRefersToDate)})
		}
		f.Close()
	}
	return out
}

// warcioRecords runs pkg/fetch's warcio reader (node and warcio from npm,
// in .deps/warcio) over files: one line per record. Missing node or warcio
// fails the test.
func warcioRecords(t *testing.T, root string, files []string) []map[string]any {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required to read the WARC files with warcio; run scripts/deps.sh: ", err)
	}
	dir := filepath.Join(root, ".deps", "warcio")
	if _, err := os.Stat(filepath.Join(dir, "node_modules/warcio/package.json")); err != nil {
		t.Fatal("warcio is not installed in .deps/warcio; run scripts/deps.sh: ", err)
	}
	cmd := exec.Command(node, append([]string{filepath.Join(root, "pkg/fetch/testdata/warcio-read.mjs"), dir}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio: %v\n%s", err, stderr.String())
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("warcio: %v: %s", err, sc.Text())
		}
		out = append(out, l)
	}
	return out
}

// words is n words of made-up text from seed: pages that do not compress
// to nothing.
func words(seed int64, n int) string {
	r := rand.New(rand.NewSource(seed))
	var b strings.Builder
	for i := 0; i < n; i++ {
		l := 3 + r.Intn(7)
		for j := 0; j < l; j++ {
			b.WriteByte(byte('a' + r.Intn(26)))
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// The loop archives an unchanged page once: recrawl's state keeps the
// page's last capture, recrawl next hands it to fetch with the candidate,
// and fetch stores the same payload as a revisit of it (a 200 as an
// identical-payload-digest revisit, a 304 as a server-not-modified one).
// Turns 2 and 3 re-fetch every page of an unchanged site: every response
// record of a page fetched before is a revisit naming turn 1's capture
// (not turn 2's revisit), and warcio reads the files. The archive bytes of
// each turn are logged.
func TestCrawlCycleRevisits(t *testing.T) {
	const pages = 8
	tagged := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	site := func(_ string, mux *http.ServeMux) {
		mux.HandleFunc("/robots.txt", http.NotFound)
		for i := 0; i < pages; i++ {
			body := fmt.Sprintf("<html><head><title>Page %d</title></head><body><p>%s</p></body></html>", i, words(int64(i), 4000))
			mux.HandleFunc(fmt.Sprintf("/p%d.html", i), func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, body)
			})
		}
		// One page with a Last-Modified: the loop asks it conditionally
		// and it answers 304.
		tbody := "<html><head><title>Tagged</title></head><body><p>" + words(99, 4000) + "</p></body></html>"
		mux.HandleFunc("/tagged.html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			http.ServeContent(w, r, "", tagged, strings.NewReader(tbody))
		})
	}
	w, base := loopbackSite(t, site)
	urls := []string{base + "/tagged.html"}
	for i := 0; i < pages; i++ {
		urls = append(urls, fmt.Sprintf("%s/p%d.html", base, i))
	}
	if err := os.WriteFile(filepath.Join(w.crawl, "seeds.txt"), []byte(strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const turns = 3
	for day := 1; day <= turns; day++ {
		w.dailyTurn(t, day, "")
	}
	batches, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "[0-9]*"))
	slices.Sort(batches)
	if len(batches) != turns {
		t.Fatalf("%d turns recorded, want %d", len(batches), turns)
	}
	isPage := map[string]bool{}
	for _, u := range urls {
		isPage[u] = true
	}
	// Every turn fetched every page, with a 200 or (tagged.html, from
	// turn 2) a 304.
	for i, b := range batches {
		recs := recordsByPath(t, filepath.Join(b, "fetched.ndjson"), base)
		for _, u := range urls {
			r := recs[strings.TrimPrefix(u, base)]
			if r == nil {
				t.Fatalf("turn %d did not fetch %s: %v", i+1, u, keys(recs))
			}
			want := 200.0
			if i > 0 && strings.HasSuffix(u, "/tagged.html") {
				want = 304
			}
			if s, _, _ := r.Float("status"); s != want {
				t.Errorf("turn %d: %s: status %v, want %v", i+1, u, s, want)
			}
		}
	}
	// Turn 2's candidates name the capture in fetch's fields.
	todo := readFile(t, filepath.Join(batches[1], "todo.ndjson"))
	for _, u := range urls {
		if !strings.Contains(todo, fmt.Sprintf(`"url":%q`, u)) || strings.Count(todo, `"warc_file":`) < len(urls) {
			t.Fatalf("turn 2's candidates do not carry the capture of every page:\n%s", todo)
		}
	}

	warcsOf := func(b string) []string {
		fs, _ := filepath.Glob(filepath.Join(w.crawl, "warc", filepath.Base(b)+"-*.warc.gz"))
		if len(fs) == 0 {
			t.Fatalf("no WARC files for %s", filepath.Base(b))
		}
		return fs
	}
	size := func(files []string) int64 {
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
	// Turn 1 archives each page in full: its captures, by URI.
	first := map[string]warcRec{}
	for _, r := range readWARCs(t, warcsOf(batches[0])) {
		if r.typ == warc.TypeResponse && isPage[r.uri] {
			first[r.uri] = r
		}
	}
	if len(first) != len(urls) {
		t.Fatalf("turn 1 archived %d pages in full, want %d", len(first), len(urls))
	}
	sizes := []int64{size(warcsOf(batches[0]))}
	for i := 1; i < turns; i++ {
		files := warcsOf(batches[i])
		sizes = append(sizes, size(files))
		ours := readWARCs(t, files)
		seen := map[string]bool{}
		for _, r := range ours {
			if !isPage[r.uri] || (r.typ != warc.TypeResponse && r.typ != warc.TypeRevisit) {
				continue
			}
			seen[r.uri] = true
			orig := first[r.uri]
			if r.typ != warc.TypeRevisit {
				t.Errorf("turn %d: %s archived whole again (%s@%d), want a revisit of %s@%d", i+1, r.uri, r.file, r.offset, orig.file, orig.offset)
				continue
			}
			wantProfile := "identical-payload-digest"
			if strings.HasSuffix(r.uri, "/tagged.html") {
				wantProfile = "server-not-modified"
			}
			if r.refURI != orig.uri || r.refDate != orig.date || !strings.HasSuffix(r.profile, wantProfile) {
				t.Errorf("turn %d: %s: revisit (%s) refers to %s at %s; want %s of turn 1's capture %s at %s",
					i+1, r.uri, r.profile, r.refURI, r.refDate, wantProfile, orig.uri, orig.date)
			}
			if wantProfile == "identical-payload-digest" && r.digest != orig.digest {
				t.Errorf("turn %d: %s: revisit digest %s, the capture's %s", i+1, r.uri, r.digest, orig.digest)
			}
		}
		if len(seen) != len(urls) {
			t.Errorf("turn %d archived %d of the %d pages", i+1, len(seen), len(urls))
		}
		// warcio reads the same records: types and URIs in order, the
		// revisits' references too.
		theirs := warcioRecords(t, w.root, files)
		if len(theirs) != len(ours) {
			t.Fatalf("turn %d: warcio reads %d records, pkg/warc %d", i+1, len(theirs), len(ours))
		}
		str := func(v any) string { s, _ := v.(string); return s }
		for j, l := range theirs {
			o := ours[j]
			if str(l["type"]) != o.typ || str(l["uri"]) != o.uri || str(l["refersToURI"]) != o.refURI || str(l["refersToDate"]) != o.refDate {
				t.Errorf("turn %d: record %d: warcio %v, pkg/warc %+v", i+1, j, l, o)
			}
		}
	}
	t.Logf("WARC bytes per turn (%d pages of about 30 KB): %v; turn 2 is %.1f%% of turn 1", len(urls), sizes,
		100*float64(sizes[1])/float64(sizes[0]))
	if sizes[1]*4 > sizes[0] {
		t.Errorf("turn 2 archived %d bytes, turn 1 %d: revisits should take a small part", sizes[1], sizes[0])
	}
}
