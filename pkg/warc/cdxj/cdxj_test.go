package cdxj

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/warc"
)

// warcioDir is warcio from the npm registry, installed by scripts/deps.sh.
func warcioDir(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required; run scripts/deps.sh: ", err)
	}
	dir, _ = filepath.Abs("../../../.deps/warcio/node_modules/warcio")
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		t.Fatal("warcio is not installed in .deps/warcio; run scripts/deps.sh: ", err)
	}
	return node, dir
}

// Our SURT keys are warcio's (getSurt, what its cdx-index writes) for the
// URL shapes a crawl archives.
func TestSURTAgainstWarcio(t *testing.T) {
	urls := []string{
		"http://example.com/",
		"http://example.com",
		"https://www.example.com/a/b?z=1&a=2&m",
		"http://WWW2.Example.COM:80/Path/X.html?B=2&a=1#frag",
		"https://example.com:443/",
		"https://example.com:8443/x",
		"http://127.0.0.1:8080/robots.txt",
		"http://www.example.co.uk/%7Euser/?",
		"http://sub.www.example.com/a%20b",
		"http://wwwexample.com/",
		"http://[::1]:8080/x",
		"http://example.com/a?b=&c=d&b=a",
		"ftp://example.com/file",
		"dns:example.com",
	}
	node, dir := warcioDir(t)
	script := `import(process.argv[1]).then(m => { for (const u of JSON.parse(process.argv[2])) console.log(m.getSurt(u)); });`
	in, _ := json.Marshal(urls)
	out, err := exec.Command(node, "-e", script, "file://"+filepath.Join(dir, "dist/utils.js"), string(in)).Output()
	if err != nil {
		t.Fatal(err)
	}
	theirs := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(theirs) != len(urls) {
		t.Fatalf("warcio gave %d keys for %d URLs", len(theirs), len(urls))
	}
	for i, u := range urls {
		if got := SURT(u); got != theirs[i] {
			t.Errorf("SURT(%q) = %q, warcio %q", u, got, theirs[i])
		}
	}
}

func TestAppendLineEscapes(t *testing.T) {
	e := Entry{URLKey: "com,x)/", Timestamp: "20260101000000", URL: "http://x.com/\"q\"\\<>&é\x01", Mime: "text/html", Length: 5, Offset: 0, Filename: "a.warc.gz"}
	got := string(e.AppendLine(nil))
	want := `com,x)/ 20260101000000 {"url":"http://x.com/\"q\"\\<>&é\u0001","mime":"text/html","length":"5","offset":"0","filename":"a.warc.gz"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(got[strings.Index(got, "{"):]), &m); err != nil || m["url"] != e.URL {
		t.Errorf("not JSON: %v %q", err, m["url"])
	}
}

// A damaged record is reported and left out; the records around it are
// indexed with their lengths.
func TestIndexDamagedFile(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(warc.Options{Dir: dir, Now: func() time.Time { return time.Unix(1.7e9, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	var locs []warc.Location
	for i := 0; i < 5; i++ {
		body := strings.Repeat(string(rune('a'+i)), 3000)
		l, err := w.Write(&warc.Record{Header: warc.Header{
			{Name: warc.FieldType, Value: warc.TypeResponse},
			{Name: warc.FieldTargetURI, Value: "http://x.test/" + string(rune('a'+i))},
			{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPResponse},
			{Name: warc.FieldPayloadDigest, Value: warc.Digest([]byte(body))},
		}, Body: strings.NewReader("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body)})
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, l...)
	}
	w.Close()
	path := w.Files()[0]
	data, _ := os.ReadFile(path)
	bad := locs[2]
	mid := bad.Offset + bad.Length/2
	data = append(data[:mid:mid], data[mid+20:]...) // 20 bytes cut from record 2
	os.WriteFile(path, data, 0o644)

	var skips []*warc.SkipError
	es, err := IndexFile(path, func(s *warc.SkipError) { skips = append(skips, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) != 1 || skips[0].Offset != bad.Offset || skips[0].Next != locs[3].Offset-20 {
		t.Errorf("skips %v", skips)
	}
	var buf bytes.Buffer
	Write(&buf, es)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, j := range []int{0, 1, 3, 4} {
		l := locs[j]
		off := l.Offset
		if j > 2 {
			off -= 20
		}
		want := Entry{URLKey: "test,x)/" + string(rune('a'+j)), Timestamp: "20231114221320", URL: "http://x.test/" + string(rune('a'+j)),
			Mime: "text/plain", Status: "200", Digest: strings.TrimPrefix(warc.Digest([]byte(strings.Repeat(string(rune('a'+j)), 3000))), "sha1:"),
			Length: l.Length, Offset: off, Filename: filepath.Base(path)}
		if lines[i] != string(want.AppendLine(nil)) {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want.AppendLine(nil))
		}
	}
	if _, err := IndexFile(filepath.Join(dir, "none.warc.gz"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
