package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// BenchmarkFetch fetches b.N 10 KB pages from 4 loopback hosts with links
// extracted and WARC written, delay 0: the per-page cost of the whole tool.
func BenchmarkFetch(b *testing.B) {
	var page strings.Builder
	page.WriteString("<html><head><title>bench</title></head><body>")
	for i := 0; page.Len() < 10000; i++ {
		fmt.Fprintf(&page, `<p>Some words of a page and <a href="/p/%d.html">a link</a> to more words.</p>`, i)
	}
	body := page.String()
	var hosts []string
	for i := 0; i < 4; i++ {
		h := newHost(&testing.T{}, fmt.Sprintf("127.0.0.%d", 80+i), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, body)
		}))
		defer h.srv.Close()
		hosts = append(hosts, h.url(""))
	}
	w, err := warc.Create(warc.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	cfg := testConfig()
	cfg.IgnoreRobots = true
	cfg.WARC = w
	cfg.Workers = 32
	cfg.PerHost = 2
	n := 0
	cfg.Emit = func(r *record.Record) error {
		if v, _, _ := r.Float("status"); v != 200 {
			return fmt.Errorf("%s", r.AppendJSON(nil))
		}
		n++
		return nil
	}
	f, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	start := time.Now()
	err = f.Run(context.Background(), func(add func(*record.Record) error) error {
		for i := 0; i < b.N; i++ {
			if err := add(record.New(fmt.Sprintf("%s/p/%d.html", hosts[i%4], i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n != b.N {
		b.Fatalf("%v, %d of %d", err, n, b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pages/s")
}
