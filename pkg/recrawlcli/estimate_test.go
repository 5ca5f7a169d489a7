package recrawlcli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
)

// recrawl estimate writes one record per URL in order of first appearance:
// the latest fetch record as it was read (unknown fields, their order and
// escapes untouched) with the estimate added, whatever the order of the
// fetches; a counts record comes out with its own estimate; bad lines are
// reported by number and the rest goes on.
func TestEstimateKeepsTheLatestRecordOfEachURL(t *testing.T) {
	in := strings.Join([]string{
		`{"url":"https://b.example/","fetched_at":"2026-11-03T00:00:00Z","digest":"B2","x":{"deep":[1,2]},"title":"Caf\u00e9 \"b\""}`,
		`{"url":"https://a.example/","fetched_at":"2026-11-01T00:00:00Z","digest":"A1","old":true}`,
		`{"url":"https://b.example/","fetched_at":"2026-11-01T00:00:00Z","digest":"B1","stale":1}`,
		`not json {`,
		`{"url":"https://c.example/","fetches":5,"changes":2,"interval":86400,"keep":"me"}`,
		`{"url":"https://a.example/","fetched_at":"2026-11-02T00:00:00Z","digest":"A1","newest":"yes"}`,
		`{"url":"https://b.example/","fetched_at":"2026-11-02T00:00:00Z","digest":"B2"}`,
		`{"url":"https://d.example/","fetched_at":"2026-11-02T00:00:00Z","error":"timeout"}`,
	}, "\n") + "\n"
	var out, errs bytes.Buffer
	code := recrawlcli.Main([]string{"recrawl", "estimate"}, clikit.Env{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errs})
	if code != 0 && code != 1 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(errs.String(), "line 4:") {
		t.Errorf("the bad line is not reported by number: %q", errs.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{
		`{"url":"https://b.example/","fetched_at":"2026-11-03T00:00:00Z","digest":"B2","x":{"deep":[1,2]},"title":"Caf\u00e9 \"b\"","last_fetch":"2026-11-03T00:00:00.000Z","change_rate":`,
		`{"url":"https://a.example/","fetched_at":"2026-11-02T00:00:00Z","digest":"A1","newest":"yes","last_fetch":"2026-11-02T00:00:00.000Z","change_rate":`,
		`{"url":"https://c.example/","fetches":5,"changes":2,"interval":86400,"keep":"me","change_rate":0.`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d records, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("record %d:\n got %s\nwant %s...", i+1, lines[i], w)
		}
	}
	// b: fetched three times, changed once (B1 -> B2, then B2 again).
	if !strings.HasSuffix(lines[0], `,"fetches":3,"changes":1}`) {
		t.Errorf("b's counts: %s", lines[0])
	}
	if !strings.HasSuffix(lines[1], `,"fetches":2,"changes":0}`) {
		t.Errorf("a's counts: %s", lines[1])
	}
	if strings.Count(lines[2], `"fetches"`) != 1 || strings.Contains(lines[2], "last_fetch") {
		t.Errorf("c's counts are not kept in place: %s", lines[2])
	}
}
