package warc_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sekitei/crawlkit/pkg/warc"
)

// Write an exchange, then read the file back record by record and open the
// response alone at its offset.
func Example() {
	dir, _ := os.MkdirTemp("", "warc-example")
	defer os.RemoveAll(dir)

	w, _ := warc.Create(warc.Options{Dir: dir, Info: warc.Header{{Name: "software", Value: "example"}}})
	payload := "<title>hi</title>"
	resp := &warc.Record{Header: warc.Header{
		{Name: warc.FieldType, Value: warc.TypeResponse},
		{Name: warc.FieldTargetURI, Value: "http://example.test/"},
		{Name: warc.FieldContentType, Value: warc.ContentTypeHTTPResponse},
		{Name: warc.FieldPayloadDigest, Value: warc.Digest([]byte(payload))},
	}, Body: strings.NewReader("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + payload)}
	locs, _ := w.Write(resp)
	w.Close()

	f, _ := os.Open(locs[0].File)
	defer f.Close()
	r, _ := warc.NewReader(f)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		fmt.Println(strings.TrimSpace(rec.Type() + " " + rec.TargetURI()))
	}

	rec, _ := warc.ReadAt(locs[0].File, locs[0].Offset)
	hr, _ := rec.HTTPResponse()
	body, _ := io.ReadAll(hr.Body)
	fmt.Println(hr.StatusCode, string(body))
	// Output:
	// warcinfo
	// response http://example.test/
	// 200 <title>hi</title>
}
