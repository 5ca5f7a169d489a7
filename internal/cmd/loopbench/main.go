// Command loopbench compares two versions of the crawl loop on the generated
// web: the loop of this checkout and the loop of an older revision, each with
// its own tools, over the same number of turns of the same budget on the same
// evolving web (internal/sitegen re-rendered a day later every DayEvery
// turns, with the turn's clock, NOW, moving six hours a turn), -runs times
// from the start. It prints, under the commit and the machine's load
// average, a Markdown table: per loop the median and range over the runs
// of distinct pages fetched, recrawls and URLs tried, and the wall time of
// a turn over every turn of every run: median, 95th percentile and worst.
//
//	go run ./internal/cmd/loopbench [-old REV] [-turns 12] [-runs 3] [-port 18100]
//
// The older revision is checked out into a temporary git worktree; the
// script's crawl.conf sets both the older settings (FRONTIER_N, RECRAWL_N)
// and TURN_N to the same budget.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/internal/benchenv"
	"github.com/sekitei/crawlkit/internal/sitegen"
	"github.com/sekitei/crawlkit/pkg/record"
)

func main() {
	old := flag.String("old", "7b4c22c", "the older revision to compare with (its scripts/crawl-cycle.sh and tools)")
	turns := flag.Int("turns", 12, "turns of each loop")
	dayEvery := flag.Int("day-every", 4, "turns per day of the generated web")
	port := flag.Int("port", 18100, "first port to try for the web server")
	runs := flag.Int("runs", 3, "runs of both loops from the start (at least 3)")
	flag.Parse()
	if *runs < 3 {
		fmt.Fprintln(os.Stderr, "loopbench: -runs must be at least 3")
		os.Exit(2)
	}
	if err := run(*old, *turns, *dayEvery, *port, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "loopbench:", err)
		os.Exit(1)
	}
}

type loop struct {
	name, root, bin, crawl string
	perTurn                []time.Duration
	fetched, distinct      []int // per turn: records, new pages with status 2xx
	recrawls               []int // per turn: URLs fetched in an earlier turn too
	// over the runs: each run's sums of the above, every turn's time
	runFetched, runDistinct, runRecrawls []float64
	turnSecs                             []float64
}

func run(oldRev string, turns, dayEvery, port, runs int) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "loopbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for !free(port) {
		port++
	}
	oldRoot := filepath.Join(tmp, "old-src")
	if out, err := exec.Command("git", "worktree", "add", "--detach", oldRoot, oldRev).CombinedOutput(); err != nil {
		return fmt.Errorf("git worktree add %s: %v\n%s", oldRev, err, out)
	}
	defer exec.Command("git", "worktree", "remove", "--force", oldRoot).Run()
	loops := []*loop{
		{name: "before (" + oldRev + ")", root: oldRoot, bin: filepath.Join(tmp, "old-bin"), crawl: filepath.Join(tmp, "old-crawl")},
		{name: "now", root: root, bin: filepath.Join(tmp, "new-bin"), crawl: filepath.Join(tmp, "new-crawl")},
	}
	for _, l := range loops {
		build := exec.Command("go", "build", "-o", l.bin+"/", "./cmd/...")
		build.Dir = l.root
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", l.name, err, out)
		}
	}
	site := filepath.Join(tmp, "site")
	cfg := sitegen.DefaultConfig()
	cfg.Port = port
	serve := func(day int) error {
		cfg.Day = day
		os.RemoveAll(site)
		if err := sitegen.Generate(cfg).Write(site); err != nil {
			return err
		}
		return nil
	}
	if err := serve(0); err != nil {
		return err
	}
	nginx := filepath.Join(tmp, "nginx")
	if out, err := exec.Command(filepath.Join(root, "scripts/serve-site.sh"), "start", site, fmt.Sprint(port), nginx).CombinedOutput(); err != nil {
		return fmt.Errorf("nginx: %v\n%s", err, out)
	}
	defer exec.Command(filepath.Join(root, "scripts/serve-site.sh"), "stop", nginx).Run()
	start := time.Now().UTC().Truncate(time.Hour)
	for r := 0; r < runs; r++ {
		if r > 0 {
			if err := serve(0); err != nil {
				return err
			}
		}
		if err := crawlRun(loops, site, start, turns, dayEvery, serve); err != nil {
			return err
		}
		for _, l := range loops {
			if err := l.count(); err != nil {
				return err
			}
			l.endRun()
			fmt.Fprintf(os.Stderr, "loopbench: run %d, %s: %.0f pages, mean turn %.2f s\n", r+1, l.name, l.runDistinct[r], mean(l.turnSecs[len(l.turnSecs)-turns:]))
		}
	}
	fmt.Printf("loopbench: commit %s, load average %s (1, 5, 15 min), %d runs of %d turns of 700 URLs over the generated web (%d hosts), NOW +6 h a turn, the web a day older every %d turns\n\n",
		benchenv.Commit(), benchenv.LoadAverage(), runs, turns, len(cfg.Hosts), dayEvery)
	fmt.Println("| loop | pages fetched (distinct, 2xx), median (range) | recrawls | URLs tried | time a turn: median / 95th percentile / worst |")
	fmt.Println("|---|---|---|---|---|")
	for _, l := range loops {
		fmt.Printf("| %s | %s | %s | %s | %.2f / %.2f / %.2f s |\n", l.name, spread(l.runDistinct), spread(l.runRecrawls), spread(l.runFetched),
			benchenv.Percentile(l.turnSecs, 0.5), benchenv.Percentile(l.turnSecs, 0.95), slices.Max(l.turnSecs))
	}
	return nil
}

// crawlRun runs both loops from an empty crawl directory for turns turns,
// each turn one after the other on the same web.
func crawlRun(loops []*loop, site string, start time.Time, turns, dayEvery int, serve func(day int) error) error {
	for _, l := range loops {
		os.RemoveAll(l.crawl)
		os.MkdirAll(l.crawl, 0o755)
		for _, f := range []string{"seeds.txt", "good.txt"} {
			data, err := os.ReadFile(filepath.Join(site, f))
			if err != nil {
				return err
			}
			os.WriteFile(filepath.Join(l.crawl, f), data, 0o644)
		}
		l.perTurn, l.fetched, l.distinct, l.recrawls = nil, nil, nil, nil
	}
	for turn := 0; turn < turns; turn++ {
		if turn > 0 && turn%dayEvery == 0 {
			if err := serve(turn / dayEvery); err != nil {
				return err
			}
		}
		now := start.Add(time.Duration(turn) * 6 * time.Hour).Format(time.RFC3339)
		for _, l := range loops {
			conf := fmt.Sprintf(`FETCH_ARGS="--allow-private --hosts-file %s/hosts --delay 0 --per-host 2 --workers 32"
FRONTIER_N=500
RECRAWL_N=200
TURN_N=700
SITE_QUOTA=600
NOW=%s
`, site, now)
			os.WriteFile(filepath.Join(l.crawl, "crawl.conf"), []byte(conf), 0o644)
			cmd := exec.Command(filepath.Join(l.root, "scripts/crawl-cycle.sh"), l.crawl)
			cmd.Env = append(os.Environ(), "CRAWLKIT_BIN="+l.bin)
			t0 := time.Now()
			out, err := cmd.CombinedOutput()
			l.perTurn = append(l.perTurn, time.Since(t0))
			if err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
					return fmt.Errorf("%s, turn %d: %v\n%s", l.name, turn+1, err, out)
				}
			}
		}
	}
	return nil
}

// endRun adds a run's counts and turn times to the loop's runs.
func (l *loop) endRun() {
	var d, r, f float64
	for i := range l.fetched {
		d += float64(l.distinct[i])
		r += float64(l.recrawls[i])
		f += float64(l.fetched[i])
	}
	l.runDistinct, l.runRecrawls, l.runFetched = append(l.runDistinct, d), append(l.runRecrawls, r), append(l.runFetched, f)
	for _, t := range l.perTurn {
		l.turnSecs = append(l.turnSecs, t.Seconds())
	}
}

func mean(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// percentile is the value at fraction p of v sorted (the upper median for
// an even count at p = 0.5).
// spread is the median of v and its range.
func spread(v []float64) string {
	return fmt.Sprintf("%.0f (%.0f-%.0f)", benchenv.Percentile(v, 0.5), slices.Min(v), slices.Max(v))
}

func free(port int) bool {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// count reads the fetch records of every turn.
func (l *loop) count() error {
	files, _ := filepath.Glob(filepath.Join(l.crawl, "batches", "*", "fetched.ndjson"))
	seen := map[string]bool{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		n, distinct, again := 0, 0, 0
		inTurn := map[string]bool{}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			r, err := record.Parse(sc.Bytes())
			if err != nil {
				fh.Close()
				return fmt.Errorf("%s: %v", f, err)
			}
			n++
			u := strings.TrimSpace(r.URL())
			if seen[u] {
				again++
			}
			inTurn[u] = true
			if st, ok, _ := r.Float("status"); ok && st >= 200 && st < 300 && !seen[u] {
				distinct++
			}
		}
		fh.Close()
		for u := range inTurn {
			seen[u] = true
		}
		l.fetched = append(l.fetched, n)
		l.distinct = append(l.distinct, distinct)
		l.recrawls = append(l.recrawls, again)
	}
	for len(l.fetched) < len(l.perTurn) {
		l.fetched, l.distinct, l.recrawls = append(l.fetched, 0), append(l.distinct, 0), append(l.recrawls, 0)
	}
	return nil
}
