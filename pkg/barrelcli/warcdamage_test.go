package barrelcli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrelcli"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// pageRecord is a WARC response record of an HTML page.
func pageRecord(u, words string) *warc.Record {
	body := fmt.Sprintf("<html><head><title>%s</title></head><body><p>%s, and more %s.</p></body></html>", words, words, words)
	http := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return &warc.Record{Header: warc.Header{
		{Name: warc.FieldType, Value: warc.TypeResponse},
		{Name: warc.FieldTargetURI, Value: u},
		{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPResponse},
	}, Body: strings.NewReader(http)}
}

// writeCrawl writes the pages (and, last, a revisit of the first) into one
// WARC file and returns its path and the records' locations.
func writeCrawl(t *testing.T, dir string, urls []string) (string, []warc.Location) {
	t.Helper()
	w, err := warc.Create(warc.Options{Dir: dir, Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var locs []warc.Location
	for i, u := range urls {
		l, err := w.Write(pageRecord(u, fmt.Sprintf("zebra%c", 'a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, l[0])
	}
	rv := &warc.Record{Header: warc.Header{
		{Name: warc.FieldType, Value: warc.TypeRevisit},
		{Name: warc.FieldTargetURI, Value: "http://docs.test/copy.html"},
		{Name: warc.FieldProfile, Value: "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"},
		{Name: warc.FieldRefersToTargetURI, Value: urls[0]},
		{Name: warc.FieldRefersToDate, Value: "2026-11-01T00:00:00Z"},
		{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPResponse},
	}, Body: strings.NewReader("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")}
	l, err := w.Write(rv)
	if err != nil {
		t.Fatal(err)
	}
	locs = append(locs, l[0])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return locs[0].File, locs
}

func build(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := barrelcli.Main(append([]string{"barrel", "build"}, args...), clikit.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return code, errb.String()
}

func indexed(t *testing.T, dir string, urls ...string) map[string]bool {
	t.Helper()
	idx, err := barrel.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	got := map[string]bool{}
	for _, u := range urls {
		_, ok, err := idx.Lookup(u)
		if err != nil {
			t.Fatal(err)
		}
		got[u] = ok
	}
	return got
}

// A WARC file damaged in the middle of a record (bytes cut out of its gzip
// member): barrel build warns naming the file and the record's offset, and
// indexes the records before and after it. The revisit record at the end
// indexes no page of its own.
func TestBuildSkipsDamagedWARCRecord(t *testing.T) {
	urls := []string{"http://docs.test/a.html", "http://docs.test/b.html", "http://docs.test/c.html", "http://docs.test/d.html"}
	file, locs := writeCrawl(t, t.TempDir(), urls)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mid := locs[1].Offset + locs[1].Length/2
	damaged := append(append([]byte(nil), data[:mid]...), data[mid+16:]...)
	if err := os.WriteFile(file, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	idx := t.TempDir()
	code, stderr := build(t, "--index", idx, "--warc", file)
	if code != 0 {
		t.Fatalf("barrel build: exit %d\n%s", code, stderr)
	}
	if want := fmt.Sprintf("barrel: %s: offset %d: skipped: ", file, locs[1].Offset); !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}
	got := indexed(t, idx, append(urls, "http://docs.test/copy.html")...)
	want := map[string]bool{urls[0]: true, urls[1]: false, urls[2]: true, urls[3]: true, "http://docs.test/copy.html": false}
	for u, w := range want {
		if got[u] != w {
			t.Errorf("%s indexed %v, want %v (stderr:\n%s)", u, got[u], w, stderr)
		}
	}
}

// From fetch records: a revisit record (warc_type revisit) is skipped, not
// an error and not an empty page, and so is a record with no status (a URL
// not fetched, which keeps the capture fields recrawl next gave it).
func TestBuildRecordsSkipsRevisits(t *testing.T) {
	dir := t.TempDir()
	urls := []string{"http://docs.test/a.html", "http://docs.test/b.html"}
	file, locs := writeCrawl(t, dir, urls)
	name := filepath.Base(file)
	recs := fmt.Sprintf(`{"url":%q,"status":200,"content_type":"text/html","warc_file":%q,"warc_offset":%d}
{"url":"http://docs.test/copy.html","status":200,"content_type":"text/html","warc_file":%q,"warc_offset":%d,"warc_type":"revisit","warc_refers_to":%q,"warc_refers_to_date":"2026-11-01T00:00:00Z"}
{"url":%q,"digest":"sha1:AAAA","fetched_at":"2026-11-01T00:00:00Z","final_url":%q,"warc_file":%q,"warc_offset":%d,"error":"interrupted: not fetched: the run was stopped"}
`, urls[0], name, locs[0].Offset, name, locs[2].Offset, urls[0], urls[1], urls[1], name, locs[1].Offset)
	rf := filepath.Join(dir, "fetched.ndjson")
	if err := os.WriteFile(rf, []byte(recs), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := t.TempDir()
	code, stderr := build(t, "--index", idx, rf)
	if code != 0 || strings.Contains(stderr, "revisit") {
		t.Fatalf("barrel build: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "1 added") || !strings.Contains(stderr, "2 skipped") {
		t.Errorf("want 1 page added and 2 records skipped:\n%s", stderr)
	}
	got := indexed(t, idx, urls[0], urls[1], "http://docs.test/copy.html")
	if !got[urls[0]] || got[urls[1]] || got["http://docs.test/copy.html"] {
		t.Errorf("indexed %v, want only %s", got, urls[0])
	}
}
