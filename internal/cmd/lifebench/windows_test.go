package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestWindows sums a build's log up by windows: the PageRank turns apart
// from the other batches' percentiles, the merges and segments of each
// window, and a short last window dropped.
func TestWindows(t *testing.T) {
	var cs []indexCommit
	for turn := range 2*windowBatches + 10 {
		c := indexCommit{turn: turn, cpu: 1 + float64(turn%100)/100, segments: 3 + turn/windowBatches, bytes: int64(turn+1) * 1e6}
		if isPageRankTurn(turn) {
			c.cpu = 50 + float64(turn)/1000
		}
		if turn%10 == 3 {
			c.merged, c.mdocs, c.mergeSecs = 2, 1000, float64(turn)/1000
		}
		if turn == 300 {
			c.bytes = 900e6 // a reclaim's copy under way
		}
		cs = append(cs, c)
	}
	ws := windows(cs, windowBatches)
	if len(ws) != 2 {
		t.Fatalf("%d windows, want 2 (the last 10 batches dropped)", len(ws))
	}
	w := ws[1]
	if w.first != windowBatches || w.last != 2*windowBatches-1 || w.batches != windowBatches {
		t.Errorf("window %d-%d of %d batches", w.first, w.last, w.batches)
	}
	// 230 batches that are not a PageRank turn, CPU 1.00-1.99 by the
	// turn's last two digits: the 115th and 218th of them sorted.
	if w.median != 1.53 || w.p95 != 1.94 || w.max != 1.99 {
		t.Errorf("CPU median %.2f, p95 %.2f, worst %.2f; want 1.53, 1.94, 1.99 (the PageRank turns apart)", w.median, w.p95, w.max)
	}
	if w.rankMax != 50+456.0/1000 {
		t.Errorf("worst PageRank turn %.3f, want 50.456 (turn 456)", w.rankMax)
	}
	if w.segsMin != 4 || w.segsMax != 4 || w.merged != 24 || w.mdocs != 24000 || w.mergeMax != 0.473 {
		t.Errorf("segments %d-%d, %d merged, %d documents, worst merge %.3f s", w.segsMin, w.segsMax, w.merged, w.mdocs, w.mergeMax)
	}
	if w.bytes != 480e6 || w.bytesMax != 900e6 {
		t.Errorf("index %d bytes, at most %d", w.bytes, w.bytesMax)
	}
	var out bytes.Buffer
	printWindows(&out, ws)
	if want := "| 240–479 | 1.53 / 1.94 / 1.99 | 50.46 s | 4–4 | 24 of 240 | 24,000 | 0.47 s | 480 MB (900 MB in the window) |"; !strings.Contains(out.String(), want) {
		t.Errorf("table:\n%s\nwant the row\n%s", out.String(), want)
	}
	if got := windows(cs[:5], windowBatches); len(got) != 1 || got[0].batches != 5 {
		t.Errorf("a build shorter than a window: %+v, want one window of its 5 batches", got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 4432203: "4,432,203", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
