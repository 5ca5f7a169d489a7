// Command simindex indexes the synthetic crawl of internal/crawlsim with
// barrel's Go API, to measure one build apart from the crawl loop (run it
// under /usr/bin/time for its peak memory):
//
//	simindex -turns N DIR   the last version of every page of turns 0 to N-1, as one batch (as lifebench builds each age's index)
//	simindex -add T DIR     the pages of turn T, as the next batch of the index in DIR (as the loop's index step adds a turn)
//
// CRAWLKIT_CPUPROFILE and CRAWLKIT_MEMPROFILE profile it as they do the
// tools (pkg/clikit). PageRank, which the loop runs every 24th batch, is
// left out: it reads every link, and lifebench times it apart.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/sekitei/crawlkit/internal/crawlsim"
	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/clikit"
)

func main() {
	turns := flag.Int("turns", 0, "build the index of the crawl aged `N` turns, as one batch")
	add := flag.Int("add", -1, "add the pages of turn `T` as the next batch")
	flag.Parse()
	if flag.NArg() != 1 || (*turns > 0) == (*add >= 0) {
		fmt.Fprintln(os.Stderr, "usage: simindex (-turns N | -add T) DIR")
		os.Exit(2)
	}
	stop := clikit.StartProfiles("simindex", os.Stderr)
	err := run(flag.Arg(0), *turns, *add)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "simindex:", err)
		os.Exit(1)
	}
}

func run(dir string, turns, add int) error {
	cfg := crawlsim.Default()
	batch := fmt.Sprintf("%06d-simindex", max(turns, add+1))
	t0 := time.Now()
	b, err := barrel.NewBuilder(dir, barrel.Options{Batch: batch, PageRankEvery: math.MaxInt32})
	if err != nil {
		return err
	}
	each := func(f crawlsim.Fetch) error { return b.Add(f.URL, f.Body()) }
	if turns > 0 {
		err = cfg.LastVersions(turns, each)
	} else {
		for _, f := range cfg.Turn(add) {
			if err = each(f); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = b.Commit()
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	st := b.Stats
	fmt.Printf("simindex: batch %s: %d added, %d re-indexed, %d anchors, %d targets re-indexed for their anchors (%d waiting), %d anchors read, in %.2f s (anchor pass %.2f s)\n",
		batch, st.Added, st.Reindexed, st.Anchors, st.Targets, st.Waiting, st.AnchorsRead, time.Since(t0).Seconds(), st.AnchorTime.Seconds())
	return nil
}
