package recrawlcli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
)

// shardStates writes the two shard states of a crawl of eight hosts, each
// of one fetched page, and its good.txt (every page); it returns how many
// hosts shard 0 holds.
func shardStates(t *testing.T, dir string) (inShard0 int) {
	t.Helper()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var good []string
	var fs []queue.Fetch
	for i := 0; i < 8; i++ {
		h := fmt.Sprintf("h%d.test", i)
		u := "http://" + h + "/"
		good = append(good, u)
		fs = append(fs, queue.Fetch{URL: u, Host: h, At: now, Status: 200, Digest: "d"})
		if record.ShardOf(h, 2) == 0 {
			inShard0++
		}
	}
	for i := 0; i < 2; i++ {
		q, err := queue.Open(filepath.Join(dir, fmt.Sprintf("recrawl.%d.db", i)), queue.Options{NoSync: true, Shard: record.Shard{I: i, N: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Apply("000001-20261101T000000Z", queue.Batch{Now: now, Fetches: fs}); err != nil {
			t.Fatal(err)
		}
		q.Close()
	}
	os.WriteFile(filepath.Join(dir, "good.txt"), []byte(strings.Join(good, "\n")+"\n"), 0o644)
	return inShard0
}

func runRecrawl(args ...string) (code int, stdout, stderr string) {
	var out, errs bytes.Buffer
	code = recrawlcli.Main(append([]string{"recrawl"}, args...), clikit.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs})
	return code, out.String(), errs.String()
}

// A shard's state is read as the shard it holds, its good URLs those of
// its hosts; every shard's, the whole crawl; a state given twice, or with
// a crawl directory, is refused; a missing one is a problem named by path,
// with the others reported.
func TestReportStates(t *testing.T) {
	dir := t.TempDir()
	n0 := shardStates(t, dir)
	s0, s1, good := filepath.Join(dir, "recrawl.0.db"), filepath.Join(dir, "recrawl.1.db"), filepath.Join(dir, "good.txt")
	now := "--now=2026-11-02T00:00:00Z"

	code, out, errs := runRecrawl("report", now, "--state", s0, "--good", good)
	want := fmt.Sprintf("QLinks:    %d good URLs: %d known (100.0%%), %d fetched", n0, n0, n0)
	if code != 0 || !strings.Contains(out, "shard 0/2") || !strings.Contains(out, want) {
		t.Errorf("one shard: exit %d, want %q:\n%s%s", code, want, out, errs)
	}
	code, out, errs = runRecrawl("report", now, "--state", s0, "--state", s1, "--good", good)
	if code != 0 || !strings.Contains(out, "QLinks:    8 good URLs: 8 known (100.0%), 8 fetched") || !strings.Contains(out, "8 known, 8 fetched") {
		t.Errorf("both shards: exit %d:\n%s%s", code, out, errs)
	}
	if code, _, errs = runRecrawl("report", now, "--state", s0, "--state", s0); code != 2 || !strings.Contains(errs, "given twice") {
		t.Errorf("a state twice: exit %d: %s", code, errs)
	}
	if code, _, errs = runRecrawl("report", now, "--state", s0, dir); code != 2 {
		t.Errorf("DIR and --state: exit %d: %s", code, errs)
	}
	if code, _, errs = runRecrawl("report", now, "--state", s0, "--shard", "1/2"); code != 2 || !strings.Contains(errs, "holds shard 0/2") {
		t.Errorf("--shard of another shard: exit %d: %s", code, errs)
	}
	missing := filepath.Join(dir, "recrawl.9.db")
	code, out, errs = runRecrawl("report", now, "--state", missing, "--state", s1, "--json")
	if code != 1 || !strings.Contains(errs, missing) || !strings.Contains(out, `"problems": [`) || !strings.Contains(out, `"shard": "1/2"`) {
		t.Errorf("a missing state: exit %d:\n%s%s", code, out, errs)
	}
}
