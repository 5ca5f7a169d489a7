package recrawlcli_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// rank parses again only the lines it writes, found by their offsets in
// the inputs; --all reads every line again. Over two files and standard
// input, with a byte order mark, CRLF line ends, blank lines, spaces
// around records and bad lines, the records rank writes are exactly the
// ones --all marks due, byte for byte.
func TestRankWritesTheLinesItRead(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	gen := func(first int, bom, crlf bool) string {
		var b strings.Builder
		if bom {
			b.WriteString("\xEF\xBB\xBF")
		}
		end := "\n"
		if crlf {
			end = "\r\n"
		}
		for i := first; i < first+3000; i++ {
			fmt.Fprintf(&b, `{"url":"https://h%d.example/p/%d","weight":%.3f,"change_rate":%.3f,"last_fetch":"2026-11-%02dT%02d:00:00Z"}`,
				rng.IntN(50), i, 0.5+rng.Float64(), 0.1+rng.Float64(), 10+rng.IntN(10), rng.IntN(24))
			b.WriteString(end)
			switch i % 500 {
			case 7:
				b.WriteString(end) // blank
			case 11:
				b.WriteString(`  {"url":"https://spaced.example/` + fmt.Sprint(i) + `","change_rate":3}  ` + end)
			case 13:
				b.WriteString(`{"url":"https://bad.example/","change_rate":` + end)
			}
		}
		return b.String()
	}
	a, c := filepath.Join(dir, "a.ndjson"), filepath.Join(dir, "c.ndjson")
	os.WriteFile(a, []byte(gen(0, true, true)), 0o644)
	stdin := gen(3000, true, false)
	os.WriteFile(c, []byte(gen(6000, false, true)), 0o644)
	run := func(args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		args = append([]string{"recrawl", "rank", "--now", "2026-11-21T00:00:00Z", "--n", "700", "--slot", "1h"}, args...)
		code := recrawlcli.Main(append(args, a, "-", c), clikit.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errs})
		if code != 0 || strings.Count(errs.String(), "line ") != 18 {
			t.Fatalf("%v: exit %d: %s", args, code, errs.String())
		}
		return out.String()
	}
	var due []string
	for _, line := range strings.Split(run("--all"), "\n") {
		if strings.Contains(line, `"due":true`) {
			due = append(due, line)
		}
	}
	got := strings.Split(strings.TrimSuffix(run(), "\n"), "\n")
	slices.Sort(due)
	slices.Sort(got)
	if len(got) != 700 || !slices.Equal(got, due) {
		t.Errorf("rank wrote %d records, --all marks %d due; first: %q, %q", len(got), len(due), got[0], due[0])
	}
}
