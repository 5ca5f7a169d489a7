package e2e

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/sekitei"
)

// TestCrawlCycleOrder runs the loop with ORDER=bfs and QUOTA_RULE=segments:
// the queue's weights are the breadth-first priorities sekitei order gives
// the same fetched records in one run (the order's state carried them over
// the turns), the candidates of the last turn are the shallowest pages the
// crawl knows, and sekitei's state has its quotas by the segments rule.
func TestCrawlCycleOrder(t *testing.T) {
	w := setup(t)
	w.writeConf(t, "TURN_N=40\nORDER=bfs\nQUOTA_RULE=segments\nMIN_QUOTA=10\n")
	for i := 1; i <= 3; i++ {
		out := w.turn(t, fmt.Sprintf("turn %d", i))
		if !strings.Contains(out, "order: bfs: ") {
			t.Fatalf("turn %d ran no order step:\n%s", i, out)
		}
	}
	if _, err := os.Stat(filepath.Join(w.crawl, "state", "order.bfs.ndjson")); err != nil {
		t.Fatalf("the order keeps no state: %v", err)
	}
	// The order alone over the seeds and the three turns' fetches.
	batches, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "0000[0-9]*"))
	args := []string{"order", "--order", "bfs", filepath.Join(w.crawl, "seeds.txt")}
	var fetched []string
	for _, b := range batches[:2] {
		f := filepath.Join(b, "fetched.ndjson")
		args = append(args, f)
		fetched = append(fetched, urlsOf(t, f)...)
	}
	cmd := exec.Command(filepath.Join(w.bin, "sekitei"), args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sekitei order: %v", err)
	}
	prio := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		r, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		prio[r.URL()], _, _ = r.Float("priority")
	}
	done := map[string]bool{}
	for _, u := range fetched {
		done[u] = true
	}
	// Turn 3 chose from what turns 1 and 2 fetched: its candidates carry
	// the order's priorities as their weights, and no new page it left in
	// the queue is shallower than one it took.
	cands := records(t, filepath.Join(batches[2], "candidates.ndjson"))
	checked, least := 0, 2.0
	for _, c := range cands {
		p, ok := prio[c.URL()]
		if !ok {
			continue // a sitemap URL: no link led to it yet
		}
		wt, _, _ := c.Float("weight")
		if math.Abs(wt-p) > 1e-5*p { // recrawl next writes 6 digits
			t.Errorf("candidate %s: weight %v, the order's priority %v", c.URL(), wt, p)
		}
		checked++
		if !done[c.URL()] {
			least = min(least, p)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d of %d candidates have an order priority", checked, len(cands))
	}
	taken := map[string]bool{}
	for _, c := range cands {
		taken[c.URL()] = true
	}
	depths := map[float64]int{}
	for u, p := range prio {
		depths[p]++
		if !done[u] && !taken[u] && p > least {
			t.Errorf("%s (priority %v) left in the queue, a deeper page (priority %v) taken", u, p, least)
		}
	}
	if len(depths) < 3 {
		t.Errorf("the crawl reached %d depths: the test checks little", len(depths))
	}

	// QUOTA_RULE=segments went through: the state records it, and every
	// segment's quota is its good URLs times MIN_QUOTA, at least MIN_QUOTA.
	path := filepath.Join(w.crawl, "state", "sekitei.db")
	if _, err := sekitei.OpenState(path, sekitei.StateOptions{ReadOnly: true, QuotaRule: "share"}); err == nil {
		t.Error("the state's quotas are by rule share")
	}
	st, err := sekitei.OpenState(path, sekitei.StateOptions{ReadOnly: true, QuotaRule: "segments"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hosts, err := st.Hosts()
	if err != nil {
		t.Fatal(err)
	}
	good, n := 0, 0
	for _, h := range hosts {
		segs, _, err := st.HostSegments(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, sg := range segs {
			if sg.Quota != 10*max(sg.Good, 1) {
				t.Errorf("%s segment %s: %d good URLs, quota %d", h, sg.Regex, sg.Good, sg.Quota)
			}
			good += sg.Good
			n++
		}
	}
	if n < 2 || good == 0 {
		t.Errorf("%d segments, %d good URLs in them: the rule was not tried", n, good)
	}
}

// TestCrawlCycleOrderRefused: an unknown ORDER, a topic order without a
// topic and an unknown QUOTA_RULE stop the turn with exit 2 before it
// changes anything.
func TestCrawlCycleOrderRefused(t *testing.T) {
	w := setup(t)
	for _, c := range []struct{ conf, want string }{
		{"ORDER=depth-first\n", `order "depth-first": want one of bfs`},
		{"ORDER=best-first\n", "order best-first: the topic has no words"},
		{"ORDER=best-first\nORDER_ARGS=\"--topic '  '\"\n", "order best-first: the topic has no words"},
		{"QUOTA_RULE=by-size\n", `quota rule "by-size": want one of share`},
		{"QUOTA_RULE=visits\nMIN_QUOTA=0\n", "MIN_QUOTA 0"},
	} {
		w.refusedAtSetUp(t, c.conf, c.want)
	}
	// The same with a topic runs.
	w.writeConf(t, "TURN_N=20\nORDER=best-first\nORDER_ARGS=\"--topic 'news of the day'\"\n")
	w.turn(t, "best-first with a topic")
	if m, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "order-weights.ndjson")); len(m) != 1 {
		t.Errorf("order weights: %v", m)
	}
}

// TestCrawlCycleOrderResumes fails the order step of turn 2 after sekitei
// order has written its new state beside the old one, and runs the turn
// again: the rerun starts from the old state, so the batch is applied to
// the order once and its weights are those the failed run computed (a
// second application of the batch would find every link known and give
// breadth first no priorities).
func TestCrawlCycleOrderResumes(t *testing.T) {
	w := setup(t)
	w.writeConf(t, "TURN_N=30\nORDER=bfs\n")
	w.turn(t, "turn 1")
	real := w.bin
	first := filepath.Join(w.crawl, "first-order.ndjson")
	w.bin = wrapTool(t, real, "sekitei", fmt.Sprintf(`#!/bin/sh
if [ "$1" = order ] && [ "$2" != --check ] && [ -e %[1]s.arm ]; then
  rm -f %[1]s.arm
  %[2]s "$@" > %[1]s || exit 1
  echo "sekitei: injected failure" >&2
  exit 1
fi
exec %[2]s "$@"
`, first, filepath.Join(real, "sekitei")))
	os.WriteFile(first+".arm", nil, 0o644)
	out, err := w.cycle().CombinedOutput()
	if err == nil || !strings.Contains(string(out), "injected failure") {
		t.Fatalf("the failing turn: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(w.crawl, "state", "order.bfs.ndjson.next")); err != nil {
		t.Fatalf("the failed order step left no new state beside the old one: %v", err)
	}
	out2 := w.turn(t, "the turn again")
	if !strings.Contains(out2, ": resume") {
		t.Fatalf("no resume:\n%s", out2)
	}
	want, _ := os.ReadFile(first)
	m, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "000002-*", "order-weights.ndjson"))
	if len(m) != 1 {
		t.Fatalf("turn 2's order weights: %v", m)
	}
	got, _ := os.ReadFile(m[0])
	if len(want) < 100 || string(got) != string(want) {
		t.Errorf("turn 2's weights after the rerun (%d bytes) are not the failed run's (%d bytes)", len(got), len(want))
	}
	if _, err := os.Stat(filepath.Join(w.crawl, "state", "order.bfs.ndjson.next")); !os.IsNotExist(err) {
		t.Errorf("the new state was not renamed in: %v", err)
	}
}

// refusedAtSetUp runs a turn with crawl.conf's extra lines conf and checks
// that it stops with exit 2 and want in its output before it makes the
// crawl's state, batches, WARC files or index.
func (w *world) refusedAtSetUp(t *testing.T, conf, want string) {
	t.Helper()
	w.writeConf(t, conf)
	out, err := w.cycle().CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), want) {
		t.Errorf("%s: %v, want exit 2 and %q:\n%s", conf, err, want, out)
	}
	for _, p := range []string{"state", "batches", "warc", "index"} {
		if _, err := os.Stat(filepath.Join(w.crawl, p)); err == nil {
			t.Errorf("%s: %s made", conf, p)
		}
	}
}
