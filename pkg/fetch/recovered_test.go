package fetch

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
)

// TestRecovered: a page rebuilt from an archived response keeps its input
// record's fields and gets those of a fetch of the page: status, type,
// length, digest, title, links (absolute), signature; a fetch field the
// input carried from an older fetch is replaced.
func TestRecovered(t *testing.T) {
	var got []*record.Record
	f, err := New(Config{Emit: func(r *record.Record) error { got = append(got, r); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	in := record.New("http://a.test/p/1")
	in.SetString("source", "queue")
	in.SetString("title", "an old title")
	body := []byte(`<html><head><title>Roses</title></head><body><p>red roses</p><a href="/p/2">two</a></body></html>`)
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Etag": {`"x1"`}}
	at := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	if err := f.Recovered(in, 200, h, body, at, func(r *record.Record) { r.SetBool("recovered", true) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d records emitted", len(got))
	}
	r := got[0]
	str := func(k string) string { v, _ := r.String(k); return v }
	if src := str("source"); src != "queue" {
		t.Errorf("source %q: the input record's field is lost", src)
	}
	if str("title") != "Roses" || str("content_type") != "text/html" || str("etag") != `"x1"` || str("text_simhash") == "" || str("digest") == "" || str("host") == "" {
		t.Errorf("the fetch fields: %s", r.AppendJSON(nil))
	}
	var links []string
	if _, err := r.Decode("links", &links); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(links, []string{"http://a.test/p/2"}) {
		t.Errorf("links %v", links)
	}
	if ok, _, _ := r.Bool("recovered"); !ok {
		t.Error("the caller's fields are not set")
	}
	if s := f.Stats(); s.Done != 1 || s.Errors != 0 {
		t.Errorf("stats: %d done, %d errors", s.Done, s.Errors)
	}
}
