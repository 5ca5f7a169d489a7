package recrawlcli_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
)

// rank reads its pages without a record per line (recrawl.PageReader)
// unless it must join weights or keep a shard; the record way is still
// what it does with --weights. On generated pages with bad lines of every
// kind among them, both ways write the same bytes: the selected records,
// every record with --all, the reports of the bad lines and --verbose's
// lambda_0 and hosts.
func TestRankSameWithAndWithoutRecords(t *testing.T) {
	dir := t.TempDir()
	pages, weights := filepath.Join(dir, "pages.ndjson"), filepath.Join(dir, "weights.ndjson")
	rng := rand.New(rand.NewPCG(5, 6))
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	bad := []string{
		`{"url":"https://bad.example/1","change_rate":0}`, `{"url":"https://bad.example/2","change_rate":1,`,
		`{"url":"https://bad.example/3","change_rate":"x"}`, `{"url":1,"change_rate":1}`,
		`{"\u0075rl":"https://esc.example/4","change_rate":2,"weight":3}`, "{\"url\":\"https://bad\xff.example/5\",\"change_rate\":1}",
		`https://plain.example/6`, `{"url":"https://bad.example/7","change_rate":1,"last_fetch":"2027-01-01T00:00:00Z"}`,
		`{"url":"https://Dup.example/8","change_rate":1,"change_rate":-1,"host":"DUP.example"}`, `   `,
	}
	for i := 0; i < 30_000; i++ {
		h := rng.IntN(500)
		fmt.Fprintf(&b, `{"url":"https://h%d.example/p/%d","weight":%.4f,"change_rate":%.4f,"last_fetch":"%s"`,
			h, i, math.Exp(rng.NormFloat64()*0.7), 0.05*math.Exp(rng.Float64()*math.Log(100)),
			now.Add(-time.Duration(rng.IntN(10*86400))*time.Second).Format(time.RFC3339))
		if h%3 != 0 {
			fmt.Fprintf(&b, `,"host_rate":%d`, 50+h%200)
		}
		b.WriteString("}\n")
		if i%1000 == 0 {
			b.WriteString(bad[i/1000%len(bad)] + "\n")
		}
	}
	os.WriteFile(pages, b.Bytes(), 0o644)
	os.WriteFile(weights, []byte(`{"url":"https://elsewhere.example/","weight":2}`+"\n"), 0o644)
	run := func(args ...string) (string, string) {
		t.Helper()
		var out, errs bytes.Buffer
		args = append([]string{"recrawl", "rank", "--now", "2026-11-21T00:00:00Z", "--rate", "12000", "--slot", "1h"}, args...)
		code := recrawlcli.Main(append(args, pages), clikit.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs})
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs.String())
		}
		return out.String(), errs.String()
	}
	for _, extra := range [][]string{nil, {"--all"}, {"--verbose"}} {
		out, errs := run(extra...)
		rout, rerrs := run(append([]string{"--weights", weights}, extra...)...)
		if out != rout || errs != rerrs {
			t.Errorf("rank %v: %d and %d bytes out, stderr\n%s\nand\n%s", extra, len(out), len(rout), errs, rerrs)
		}
		if lines := strings.Count(out, "\n"); lines < 400 {
			t.Errorf("rank %v wrote %d lines", extra, lines)
		}
		// Five kinds of bad record, three times each: a zero rate, a line
		// cut short, a rate "x", a number for url, a fetch in the future.
		if n := strings.Count(errs, "line "); n != 15 {
			t.Errorf("rank %v reported %d bad lines, want 15:\n%s", extra, n, errs)
		}
	}
}
