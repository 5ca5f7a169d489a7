// Command loopbench compares two versions of the crawl loop on the generated
// web: the loop of this checkout and the loop of an older revision, each with
// its own tools, over the same number of turns of the same budget on the same
// evolving web (internal/sitegen re-rendered a day later every DayEvery
// turns, with the turn's clock, NOW, moving six hours a turn). It prints a
// Markdown table per turn group: distinct pages fetched, recrawls, URLs
// tried, and wall time per turn.
//
//	go run ./internal/cmd/loopbench [-old REV] [-turns 12] [-port 18100]
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
	"strings"
	"time"

	"github.com/sekitei/crawlkit/internal/sitegen"
	"github.com/sekitei/crawlkit/pkg/record"
)

func main() {
	old := flag.String("old", "7b4c22c", "the older revision to compare with (its scripts/crawl-cycle.sh and tools)")
	turns := flag.Int("turns", 12, "turns of each loop")
	dayEvery := flag.Int("day-every", 4, "turns per day of the generated web")
	port := flag.Int("port", 18100, "first port to try for the web server")
	flag.Parse()
	if err := run(*old, *turns, *dayEvery, *port); err != nil {
		fmt.Fprintln(os.Stderr, "loopbench:", err)
		os.Exit(1)
	}
}

type loop struct {
	name, root, bin, crawl string
	perTurn                []time.Duration
	fetched, distinct      []int // per turn: records, new pages with status 2xx
	recrawls               []int // per turn: URLs fetched in an earlier turn too
}

func run(oldRev string, turns, dayEvery, port int) error {
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
	for _, l := range loops {
		os.MkdirAll(l.crawl, 0o755)
		for _, f := range []string{"seeds.txt", "good.txt"} {
			data, err := os.ReadFile(filepath.Join(site, f))
			if err != nil {
				return err
			}
			os.WriteFile(filepath.Join(l.crawl, f), data, 0o644)
		}
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
	for _, l := range loops {
		if err := l.count(); err != nil {
			return err
		}
	}
	fmt.Printf("loopbench: %s, %d turns of 700 URLs over the generated web (%d hosts), NOW +6 h a turn, the web a day older every %d turns\n\n",
		time.Now().UTC().Format(time.RFC3339), turns, len(cfg.Hosts), dayEvery)
	fmt.Println("| loop | pages fetched (distinct, 2xx) | recrawls | URLs tried | mean time a turn | last turn |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, l := range loops {
		var d, r, f int
		var total time.Duration
		for i := range l.fetched {
			d += l.distinct[i]
			r += l.recrawls[i]
			f += l.fetched[i]
			total += l.perTurn[i]
		}
		fmt.Printf("| %s | %d | %d | %d | %.2f s | %.2f s |\n", l.name, d, r, f,
			total.Seconds()/float64(len(l.perTurn)), l.perTurn[len(l.perTurn)-1].Seconds())
	}
	return nil
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
