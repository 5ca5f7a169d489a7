package fetch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/sekitei/crawlkit/pkg/warc"
)

// warcioLine is what testdata/warcio-read.mjs prints per record.
type warcioLine struct {
	File           string `json:"file"`
	Offset         int64  `json:"offset"`
	Type           string `json:"type"`
	URI            string `json:"uri"`
	PayloadDigest  string `json:"payloadDigest"`
	ComputedDigest string `json:"computedDigest"`
	Status         int    `json:"status"`
	Length         int    `json:"length"`
	Profile        string `json:"profile"`
	RefersToURI    string `json:"refersToURI"`
	RefersToDate   string `json:"refersToDate"`
	ConcurrentTo   string `json:"concurrentTo"`
	RefersTo       string `json:"refersTo"`
	ID             string `json:"id"`
	ContentType    string `json:"contentType"`
}

// An independent reader, warcio from the npm registry (installed into
// .deps/warcio by scripts/deps.sh), reads back every record fetch wrote:
// the same records at the same offsets as our reader, every payload digest
// right. Missing node or warcio fails the test: it must not pass silently.
func TestWARCReadByWarcio(t *testing.T) {
	h := newHost(t, "127.0.0.70", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		case "/gz":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, "<title>zipped</title>")
			zw.Close()
		case "/chunked":
			w.Header().Set("Content-Type", "text/plain")
			for i := 0; i < 50; i++ {
				fmt.Fprintf(w, "chunk %d %s\n", i, strings.Repeat("c", 1000))
				w.(http.Flusher).Flush()
			}
		case "/huge":
			w.Write(bytes.Repeat([]byte("h"), 300<<10))
		case "/moved":
			http.Redirect(w, r, "/gz", http.StatusMovedPermanently)
		case "/same":
			w.Header().Set("ETag", `"e"`)
			if r.Header.Get("If-None-Match") == `"e"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			io.WriteString(w, "same")
		default:
			http.NotFound(w, r)
		}
	}))
	dir := t.TempDir()
	w, err := warc.Create(warc.Options{Dir: dir, MaxSize: 8 << 10, Prefix: "it"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.WARC = w
	cfg.MaxSize = 100 << 10
	inputs := []string{h.url("/gz"), h.url("/chunked"), h.url("/huge"), h.url("/moved"), h.url("/missing"),
		h.url("/private/x"), fmt.Sprintf(`{"url":%q,"etag":"\"e\""}`, h.url("/same"))}
	for i := 0; i < 30; i++ {
		inputs = append(inputs, h.url(fmt.Sprintf("/page%d", i)))
	}
	out := runFetch(t, cfg, inputs...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) < 2 {
		t.Fatalf("want several files (rotation), got %v", files)
	}

	theirs := warcioRead(t, files)

	// Our reader's view of the same files.
	type key struct {
		file   string
		offset int64
	}
	ours := map[key]*warc.Record{}
	for _, name := range files {
		f, _ := os.Open(name)
		rd, _ := warc.NewReader(f)
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			ours[key{filepath.Base(name), rec.Offset}] = rec
		}
		f.Close()
	}
	if len(theirs) != len(ours) {
		t.Fatalf("warcio read %d records, we wrote %d", len(theirs), len(ours))
	}
	responses := map[key]warcioLine{}
	for _, l := range theirs {
		rec, ok := ours[key{l.File, l.Offset}]
		if !ok || rec.Type() != l.Type || (l.URI != "" || rec.TargetURI() != "") && rec.TargetURI() != l.URI {
			t.Errorf("warcio saw %+v; we have no such record", l)
			continue
		}
		if l.Type == warc.TypeRevisit {
			responses[key{l.File, l.Offset}] = l
		}
		if l.Type == warc.TypeResponse {
			responses[key{l.File, l.Offset}] = l
			if l.PayloadDigest != l.ComputedDigest {
				t.Errorf("%s: WARC-Payload-Digest %s, warcio's payload hashes to %s", l.URI, l.PayloadDigest, l.ComputedDigest)
			}
		}
	}
	// Each output record points at a response warcio read, with its status.
	for u, e := range out {
		r := e.rec
		if errCode(r) == CodeRobots {
			continue
		}
		l, ok := responses[key{filepath.Base(str(r, "warc_file")), int64(num(r, "warc_offset"))}]
		if !ok || l.URI != str(r, "final_url") || l.Status != num(r, "status") {
			t.Errorf("%s: record %s, warcio %+v", u, r.AppendJSON(nil), l)
		}
	}
	if r := out[h.url("/huge")].rec; str(r, "truncated") != "length" {
		t.Errorf("huge: %s", r.AppendJSON(nil))
	}
	if r := out[fmt.Sprintf(`{"url":%q,"etag":"\"e\""}`, h.url("/same"))]; r.rec != nil {
		t.Error("record keyed by line")
	}
	if r := out[h.url("/same")].rec; num(r, "status") != 304 {
		t.Errorf("same: %s", r.AppendJSON(nil))
	}
}

// warcioRead runs testdata/warcio-read.mjs on files: warcio's view of
// every record. Missing node or warcio fails the test.
func warcioRead(t *testing.T, files []string) []warcioLine {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for the warcio integration test; run scripts/deps.sh: ", err)
	}
	warcioDir, _ := filepath.Abs("../../.deps/warcio")
	if _, err := os.Stat(filepath.Join(warcioDir, "node_modules/warcio/package.json")); err != nil {
		t.Fatal("warcio is not installed in .deps/warcio; run scripts/deps.sh: ", err)
	}
	cmd := exec.Command(node, append([]string{"testdata/warcio-read.mjs", warcioDir}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio: %v\n%s", err, stderr.String())
	}
	var theirs []warcioLine
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var l warcioLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		theirs = append(theirs, l)
	}
	return theirs
}
