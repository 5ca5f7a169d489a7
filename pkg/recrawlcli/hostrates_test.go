package recrawlcli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
)

// recrawl reads the host limits fetch writes (hostrate.WriteHostRates): a
// learnt rate, a pin, a Crawl-delay and a host pinned to 0 (a comment
// line), and limits the hosts by them.
func TestRecrawlReadsFetchHostRates(t *testing.T) {
	e := hostrate.New(hostrate.Config{Initial: 4})
	e.Observe(hostrate.Observation{Host: "a.test", Start: time.Now(), Latency: 10 * time.Millisecond, Status: 200})
	e.Pin("b.test", 1.0/86400) // one crawl a day
	e.SetCrawlDelay("c.test", time.Hour)
	e.Pin("off.test", 0)
	dir := t.TempDir()
	rates, pages := filepath.Join(dir, "rates.tsv"), filepath.Join(dir, "pages.ndjson")
	if err := e.WriteHostRatesFile(rates); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, h := range []string{"a.test", "b.test", "c.test"} {
		for _, p := range []string{"1", "2", "3"} {
			lines = append(lines, `{"url":"http://`+h+`/`+p+`","change_rate":1,"host":"`+h+`"}`)
		}
	}
	os.WriteFile(pages, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	var out, errs bytes.Buffer
	code := recrawlcli.Main([]string{"recrawl", "rank", "--now", "2026-03-01T00:00:00Z", "--rate", "1000", "--slot", "24h",
		"--host-rates", rates, pages}, clikit.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs})
	if code != 0 {
		t.Fatalf("recrawl rank --host-rates: exit %d: %s", code, errs.String())
	}
	per := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		for _, h := range []string{"a.test", "b.test", "c.test"} {
			if strings.Contains(l, `"url":"http://`+h+`/`) && strings.Contains(l, `"due":true`) {
				per[h]++
			}
		}
	}
	// a.test (4/s) is unconstrained; b.test (1 a day) and c.test (24 a
	// day by its Crawl-delay, 24 a slot) differ: b.test takes one page.
	if per["a.test"] != 3 || per["b.test"] != 1 || per["c.test"] != 3 {
		t.Errorf("due pages per host %v, want a 3, b 1, c 3\n%s\n%s", per, out.String(), errs.String())
	}
}
