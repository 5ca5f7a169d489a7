package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sekitei/crawlkit/internal/benchenv"
)

// The year's index build, window by window: a year's 8,760 batches are
// too many to read one by one and its last 24 hide how the cost moved,
// so the build's log is summed up over windows of consecutive batches.
// A PageRank turn (every 24th batch: the turns divisible by 24, the first
// batch included) is reported apart, as the targets exclude it.

// pageRankEvery is the builder's PageRankEvery in indexBatch.
const pageRankEvery = 24

// windowBatches is the batches a window of the year's table sums up.
const windowBatches = 240

// batchWindow sums up consecutive batches of the index build.
type batchWindow struct {
	first, last      int     // turns
	median, p95, max float64 // CPU seconds of the batches that are not a PageRank turn
	rankMax          float64 // CPU seconds of the worst PageRank turn (0: none in the window)
	segsMin, segsMax int
	merged, batches  int // batches that merged, of batches
	mdocs            int // documents read by the merges
	mergeMax         float64
	bytes, bytesMax  int64 // the index's bytes after the last batch, and at most
}

// isPageRankTurn reports whether the batch of turn recomputed PageRank.
func isPageRankTurn(turn int) bool { return turn%pageRankEvery == 0 }

// windows sums up cs in windows of n batches, from the first; a last
// window shorter than n is dropped unless it is the only one.
func windows(cs []indexCommit, n int) []batchWindow {
	var out []batchWindow
	for at := 0; at < len(cs); at += n {
		w := cs[at:min(len(cs), at+n)]
		if len(w) < n && len(out) > 0 {
			break
		}
		out = append(out, sumWindow(w))
	}
	return out
}

func sumWindow(cs []indexCommit) batchWindow {
	w := batchWindow{first: cs[0].turn, last: cs[len(cs)-1].turn, segsMin: cs[0].segments, batches: len(cs)}
	var cpu []float64
	for _, c := range cs {
		if isPageRankTurn(c.turn) {
			w.rankMax = max(w.rankMax, c.cpu)
		} else {
			cpu = append(cpu, c.cpu)
		}
		w.segsMin, w.segsMax = min(w.segsMin, c.segments), max(w.segsMax, c.segments)
		if c.merged > 0 {
			w.merged++
		}
		w.mdocs += c.mdocs
		w.mergeMax = max(w.mergeMax, c.mergeSecs)
		w.bytesMax = max(w.bytesMax, c.bytes)
	}
	w.bytes = cs[len(cs)-1].bytes
	if len(cpu) > 0 {
		w.median, w.p95, w.max = percentiles(cpu)
	}
	return w
}

// percentiles returns the median, 95th percentile and largest of v (not
// empty).
func percentiles(v []float64) (median, p95, worst float64) {
	return benchenv.Percentile(v, 0.5), benchenv.Percentile(v, 0.95), slices.Max(v)
}

// printWindows writes the windows as a Markdown table.
func printWindows(out io.Writer, ws []batchWindow) {
	fmt.Fprintln(out, "| batches | batch CPU s (median / p95 / worst) | PageRank turn, worst | segments | batches merged | documents read by merges | merge wall, worst | index on disk |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|")
	for _, w := range ws {
		rank := "none"
		if w.rankMax > 0 {
			rank = fmt.Sprintf("%.2f s", w.rankMax)
		}
		disk := fmt.Sprintf("%s MB", thousands(w.bytes/1e6))
		if w.bytesMax > w.bytes*11/10 {
			disk += fmt.Sprintf(" (%s MB in the window)", thousands(w.bytesMax/1e6))
		}
		fmt.Fprintf(out, "| %s–%s | %.2f / %.2f / %.2f | %s | %d–%d | %d of %d | %s | %.2f s | %s |\n",
			thousands(int64(w.first)), thousands(int64(w.last)), w.median, w.p95, w.max, rank,
			w.segsMin, w.segsMax, w.merged, w.batches, thousands(int64(w.mdocs)), w.mergeMax, disk)
	}
}

// thousands writes n with commas between its groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
