// Command batchbench times the index batches of the life of a crawl on a
// kept index: it copies the index of scripts/life-bench.sh -keep DIR at an
// age, adds the synthetic crawl's next turns to the copy one batch a turn
// as the loop does (internal/crawlsim, the default merge policy, PageRank
// every 24 batches), and prints one line: the median, 95th percentile and
// worst CPU and wall seconds of the batches, their segments and the pages
// re-indexed for new anchors. scripts/batch-bench.sh runs it built at two
// commits, alternated: it is built into BASE's tree too, so it uses
// barrel's API and crawlsim alone and repeats lifebench's batch (indexBatch)
// instead of sharing a package BASE may not have.
//
//	batchbench -index DIR/age-1000/index -from 1000 -batches 24
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/internal/crawlsim"
	"github.com/sekitei/crawlkit/pkg/barrel"
)

func main() {
	index := flag.String("index", "", "the kept index to copy (left untouched)")
	scratch := flag.String("scratch", "", "where the copy goes (default: a temporary directory)")
	from := flag.Int("from", 1000, "the first turn to add: the kept index's age")
	batches := flag.Int("batches", 24, "batches to add, one a turn")
	flag.Parse()
	if *index == "" {
		fmt.Fprintln(os.Stderr, "batchbench: -index is required")
		os.Exit(2)
	}
	if err := run(*index, *scratch, *from, *batches); err != nil {
		fmt.Fprintln(os.Stderr, "batchbench:", err)
		os.Exit(1)
	}
}

func run(index, scratch string, from, batches int) error {
	if scratch == "" {
		tmp, err := os.MkdirTemp("", "batchbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		scratch = tmp + "/index"
	}
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", index, scratch).CombinedOutput(); err != nil {
		return fmt.Errorf("copying %s: %v: %s", index, err, out)
	}
	defer os.RemoveAll(scratch)
	cfg := crawlsim.Default()
	var cpu, wall []float64
	segs, targets := 0, 0
	for t := from; t < from+batches; t++ {
		c0, t0 := cpuSeconds(), time.Now()
		// Named as lifebench names its batches: by the turns done.
		id := fmt.Sprintf("%06d-%s", t+1, cfg.Start.Add(time.Duration(t+1)*cfg.Every).Format("20060102T150405Z"))
		b, err := barrel.NewBuilder(scratch, barrel.Options{Batch: id, PageRankEvery: 24})
		if err != nil {
			return err
		}
		for _, f := range cfg.Turn(t) {
			if err = b.Add(f.URL, f.Body()); err != nil {
				break
			}
		}
		if err == nil {
			err = b.Commit()
		}
		if cerr := b.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("turn %d: %w", t, err)
		}
		cpu, wall = append(cpu, cpuSeconds()-c0), append(wall, time.Since(t0).Seconds())
		segs, targets = max(segs, b.Stats.Segments), targets+b.Stats.Targets
	}
	fmt.Printf("CPU s %s, wall s %s; segments at most %d; %d pages re-indexed for new anchors a batch\n",
		summary(cpu), summary(wall), segs, targets/batches)
	return nil
}

// summary is "median / p95 / worst" (nearest rank).
func summary(xs []float64) string {
	s := slices.Sorted(slices.Values(xs))
	p95 := s[min(len(s)-1, (len(s)*95+99)/100-1)]
	return fmt.Sprintf("%.3f / %.3f / %.3f", s[len(s)/2], p95, s[len(s)-1])
}

// cpuSeconds is the CPU time, user and system, this process has used.
func cpuSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
