package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/internal/browsercheck"
)

// TestReportOfAShardedCrawl runs the README's report commands on a crawl
// made as the demo makes its own: SHARDS=2, host-rate estimates on,
// good.txt, several turns of the loop on a generated web. The text covers
// the whole crawl (both shards, QLinks against the whole good.txt), --json
// parses, and the --html page passes in headless chromium: no errors,
// every plot at least 900 px wide in a 1280 px window, no data drawn
// before its axis.
func TestReportOfAShardedCrawl(t *testing.T) {
	w := setupWeb(t, []string{"a.test", "b.test", "c.test", "d.test"})
	w.writeConf(t, "SHARDS=2\nHOST_ESTIMATES=1\nTURN_N=40\n")
	for i := 0; i < 4; i++ {
		w.turn(t, "turn")
	}
	cmds := readmeReportCommands(t, w.root)
	work := t.TempDir()
	outputs := map[string]string{}
	for _, c := range cmds {
		line := strings.NewReplacer("out/demo/crawl", w.crawl, "bin/", w.bin+"/").Replace(c)
		sh := exec.Command("/bin/sh", "-c", line)
		sh.Dir = work
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		outputs[c] = string(out)
	}
	var text string
	for c, out := range outputs {
		if strings.Contains(c, "recrawl report") && !strings.Contains(c, "--json") && !strings.Contains(c, "--html") {
			text = out
		}
	}
	// The search finds pages of the crawl, and the CDXJ index lists the
	// WARC files' responses.
	for c, out := range outputs {
		switch {
		case strings.Contains(c, "barrel search"):
			if n := strings.Count(out, `{"doc_id":`); n == 0 {
				t.Errorf("%s: no hit:\n%s", c, out)
			}
		case strings.Contains(c, "fetch cdx"):
			cdx, err := os.ReadFile(filepath.Join(work, "index.cdxj"))
			if err != nil || !strings.Contains(string(cdx), `"status":"200"`) {
				t.Errorf("%s: index.cdxj %v:\n%.400s", c, err, cdx)
			}
		}
	}
	for _, want := range []string{"shard 0/2", "shard 1/2", "QLinks:", "fetch outcomes by turn", "seconds a step", "000004-", "k_i/day"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	// QLinks over the whole good.txt: every good URL counted once.
	good, err := os.ReadFile(filepath.Join(w.crawl, "good.txt"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(work, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Pages    int      `json:"pages"`
		Good     int      `json:"good"`
		Problems []string `json:"problems"`
		Shards   []struct {
			Shard string `json:"shard"`
			Pages int    `json:"pages"`
		} `json:"shards"`
		Turns []struct {
			Batch string          `json:"batch"`
			Files json.RawMessage `json:"files"`
			Steps []struct{ Name string }
		} `json:"turns"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("--json does not parse: %v\n%.400s", err, data)
	}
	if n := strings.Count(strings.TrimSpace(string(good)), "\n") + 1; doc.Good != n {
		t.Errorf("%d good URLs reported, good.txt has %d", doc.Good, n)
	}
	if len(doc.Shards) != 2 || doc.Shards[0].Pages+doc.Shards[1].Pages != doc.Pages || len(doc.Problems) != 0 {
		t.Errorf("shards %+v, pages %d, problems %q", doc.Shards, doc.Pages, doc.Problems)
	}
	if len(doc.Turns) < 4 || doc.Turns[len(doc.Turns)-1].Files == nil || len(doc.Turns[len(doc.Turns)-1].Steps) == 0 {
		t.Errorf("turns: %+v", doc.Turns)
	}

	page := browsercheck.Load(t, filepath.Join(work, "report.html"), 1280)
	for _, e := range page.Errors {
		t.Errorf("the page raised: %s", e)
	}
	seen := map[string]bool{}
	for _, f := range page.Figures {
		seen[f.ID] = true
		if f.Width < 900 {
			t.Errorf("%s is %.0f px wide, want at least 900", f.ID, f.Width)
		}
		if f.Marks == 0 {
			t.Errorf("%s draws no data", f.ID)
		}
		if f.DataLeft < f.AxisLeft-0.5 {
			t.Errorf("%s: data drawn from x=%.1f, before its axis at %.1f", f.ID, f.DataLeft, f.AxisLeft)
		}
	}
	for _, id := range []string{"plot-freshness", "plot-pages", "plot-outcomes", "plot-bytes", "plot-queue", "plot-steps",
		"plot-changes", "plot-busiest", "plot-failing", "plot-limits"} {
		if !seen[id] {
			t.Errorf("the page has no %s", id)
		}
	}
}

// readmeReportCommands are the commands of the README's "Read the results"
// section: the report's, the search's and the WARC index's.
func readmeReportCommands(t *testing.T, root string) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(string(readme)))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") {
			in = strings.HasPrefix(strings.TrimLeft(l, "# "), "Read the results")
			continue
		}
		if in && strings.HasPrefix(l, "$ bin/") {
			c := strings.TrimPrefix(l, "$ ")
			if i := strings.Index(c, "  #"); i >= 0 {
				c = c[:i]
			}
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	if n := strings.Count(strings.Join(cmds, "\n"), "bin/recrawl report"); n < 3 {
		t.Fatalf("the README's \"Read the results\" section has %d report commands, want the text, --json and --html ones: %q", n, cmds)
	}
	return cmds
}
