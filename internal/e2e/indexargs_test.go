package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrawlCycleIndexArgs: INDEX_ARGS reaches barrel build (with
// --pagerank-every 1 each turn's batch is ranked, where barrel's default
// ranks every 24th), and flags barrel build refuses stop the turn with
// exit 2 before it changes anything.
func TestCrawlCycleIndexArgs(t *testing.T) {
	w := setup(t)
	for _, c := range []struct{ conf, want string }{
		{"INDEX_ARGS=\"--deletes-pct 500\"\n", "--deletes-pct 500: want 1 to 100"},
		{"INDEX_ARGS=\"--merge-factr 8\"\n", "flag provided but not defined: -merge-factr"},
	} {
		w.refusedAtSetUp(t, c.conf, c.want)
	}
	w.writeConf(t, "TURN_N=40\nINDEX_ARGS=\"--pagerank-every 1 --deletes-pct 10\"\n")
	w.turn(t, "turn 1")
	w.turn(t, "turn 2")
	log, err := os.ReadFile(filepath.Join(w.crawl, "logs", "cycle.log"))
	if err != nil {
		t.Fatal(err)
	}
	var second string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "barrel: batch 2:") {
			second = l
		}
	}
	if !strings.Contains(second, ", ranked") {
		t.Errorf("turn 2's index step, with INDEX_ARGS --pagerank-every 1: %q, want its batch ranked\n%s", second, log)
	}
}
