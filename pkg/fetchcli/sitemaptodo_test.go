package fetchcli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/clikit"
)

// TestSitemapsContinueWhereTheCapCut: two sites of 7 sitemaps of 30 URLs
// (210 each) and a third named only in the first run. With 100 URLs a site
// and 150 a run, run after run with --continue lists every URL of every
// site exactly once, never more than the caps in one run, and leaves the
// file empty when all is read; a damaged file is an error naming its line.
func TestSitemapsContinueWhereTheCapCut(t *testing.T) {
	a := serveFlood(t, "127.0.32.11", 7, 30)
	b := serveFlood(t, "127.0.32.12", 7, 30)
	c := serveFlood(t, "127.0.32.13", 7, 30)
	todo := filepath.Join(t.TempDir(), "sitemaps.todo")
	seen := map[string]int{}
	input := a.base + "/\n" + b.base + "/\n" + c.base + "/\n"
	loc := regexp.MustCompile(`"url":"([^"]+)"`)
	runs := 0
	for ; runs < 20; runs++ {
		out, stderr := runSitemaps(t, input, "--max-urls-per-site", "100", "--max-urls", "150", "--continue", todo)
		input = "" // the sites are asked for once; what is left comes from the file
		n := 0
		for _, m := range loc.FindAllStringSubmatch(out, -1) {
			seen[m[1]]++
			n++
		}
		if n > 150 {
			t.Errorf("run %d listed %d URLs, over --max-urls 150", runs, n)
		}
		left, err := os.ReadFile(todo)
		if err != nil {
			t.Fatalf("run %d: %v (%s)", runs, err, stderr)
		}
		if len(left) == 0 {
			break
		}
	}
	if runs < 4 { // 630 URLs at most 150 a run
		t.Errorf("all listed after %d runs: the caps did not hold", runs+1)
	}
	if len(seen) != 3*210 {
		t.Errorf("%d distinct URLs listed, want 630", len(seen))
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", u, n)
		}
	}
	t.Logf("630 URLs of three sites listed once each over %d runs", runs+1)

	if err := os.WriteFile(todo, []byte(a.base+"/\t12\n"+b.base+"/ twelve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	rc := Main([]string{"fetch", "sitemaps", "--allow-private", "--continue", todo, "-"}, clikit.Env{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &errb})
	if rc == 0 || !strings.Contains(errb.String(), todo+": line 2: want URL<TAB>count") {
		t.Errorf("damaged file: exit %d, %q", rc, errb.String())
	}
}
