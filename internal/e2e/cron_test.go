package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallSite serves a home page linking five pages, each linking three, and
// two pages nothing links to (/orphan1, /orphan2): a crawl reaches those
// only as seeds.
func smallSite(base string, mux *http.ServeMux) {
	mux.HandleFunc("/robots.txt", http.NotFound)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var links []string
		switch {
		case r.URL.Path == "/":
			for i := 1; i <= 5; i++ {
				links = append(links, fmt.Sprintf("/p%d", i))
			}
		case strings.HasPrefix(r.URL.Path, "/orphan"):
		case strings.Count(r.URL.Path, "/") == 1 && strings.HasPrefix(r.URL.Path, "/p"):
			for i := 1; i <= 3; i++ {
				links = append(links, fmt.Sprintf("%s/q%d", r.URL.Path, i))
			}
		case strings.Count(r.URL.Path, "/") == 2:
		default:
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>page %s</p>", r.URL.Path, r.URL.Path)
		for _, l := range links {
			fmt.Fprintf(w, `<a href="%s">%s</a> `, l, l)
		}
		fmt.Fprint(w, "</body></html>")
	})
}

// readmeCron returns the README's cron steps (the sh block that runs
// scripts/install.sh) and its crontab line.
func readmeCron(t *testing.T, root string) (steps, cron string) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(readme), "```")[1:] {
		if strings.HasPrefix(block, "sh\n") && strings.Contains(block, "scripts/install.sh") && strings.Contains(block, "crawl-cycle.sh") {
			steps = strings.TrimPrefix(block, "sh\n")
		}
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, "*/30 * * * * ") {
				cron = strings.TrimPrefix(line, "*/30 * * * * ")
			}
		}
	}
	if steps == "" || cron == "" {
		t.Fatalf("the README has no cron steps (%q) or no crontab line (%q)", steps, cron)
	}
	return steps, cron
}

// TestCronStepsOfTheREADME runs the README's cron section as a user would:
// its steps pasted into a shell with nothing but /usr/bin:/bin and Go on
// PATH, then its crontab line with cron's environment alone, on a site
// served on loopback (the seed and crawl.conf lines are changed to reach
// it; the rest runs as printed). The turns complete.
func TestCronStepsOfTheREADME(t *testing.T) {
	root, _ := filepath.Abs("../..")
	_, base := loopbackSite(t, smallSite)
	steps, cron := readmeCron(t, root)
	home := t.TempDir()
	if err := os.Symlink(root, filepath.Join(home, "crawlkit")); err != nil {
		t.Fatal(err)
	}
	local := strings.NewReplacer("https://www.example.org/", base+"/", `FETCH_ARGS="--delay 1"`, `FETCH_ARGS="--allow-private --delay 0"`).Replace(steps)
	if strings.Count(local, base) != 1 || !strings.Contains(local, "--allow-private") {
		t.Fatalf("the steps changed: no seed line or crawl.conf line to point at the test site:\n%s", steps)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin"}
	// The Go build cache and module cache of this machine (a user's own).
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOFLAGS"} {
		out, _ := exec.Command("go", "env", v).Output()
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	sh := exec.Command("/bin/sh", "-c", local)
	sh.Env = append(env, "GOPROXY=off")
	out, err := sh.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "exit 0\n") || !strings.Contains(string(out), ": complete in ") {
		t.Fatalf("the README's steps: %v\n%s", err, out)
	}
	for _, tool := range []string{"urlfeat", "sekitei", "opic", "recrawl", "fetch", "barrel"} {
		if _, err := os.Stat(filepath.Join(home, ".local", "bin", tool)); err != nil {
			t.Errorf("scripts/install.sh did not install %s: %v", tool, err)
		}
	}
	crawl := filepath.Join(home, "crawl")
	for turn := 2; turn <= 3; turn++ {
		c := exec.Command("/bin/sh", "-c", cron)
		c.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "SHELL=/bin/sh", "LOGNAME=crawler"}
		if out, err := c.CombinedOutput(); err != nil {
			log, _ := os.ReadFile(filepath.Join(crawl, "cron.log"))
			t.Fatalf("turn %d, the crontab line under cron's environment: %v\n%s\ncron.log:\n%s", turn, err, out, log)
		}
	}
	log, _ := os.ReadFile(filepath.Join(crawl, "cron.log"))
	if n := strings.Count(string(log), ": complete in "); n != 2 {
		t.Errorf("cron.log: %d turns complete, want 2:\n%s", n, log)
	}
	fetched := 0
	for _, urls := range (&world{crawl: crawl}).fetchedURLs(t) {
		fetched += len(urls)
	}
	if fetched != 21 {
		t.Errorf("%d pages fetched in three turns; the site has 21 reachable", fetched)
	}
}

// copyScript puts crawl-cycle.sh alone in a checkout of its own, so that
// no bin/ beside it holds tools.
func copyScript(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "checkout")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	data, err := os.ReadFile(filepath.Join(root, "scripts", "crawl-cycle.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "scripts", "crawl-cycle.sh")
	if err := os.WriteFile(script, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestCrawlCycleExitCodes: each exit status the script's header and the
// README document, from what causes it (0, 3 and 75 have tests of their own
// too: TestCrawlCycle, TestCrawlCycleSaysWhyNoProgress, TestCrawlCycleLock;
// a full disk's 1 is in TestCrawlCycleDiskFull).
func TestCrawlCycleExitCodes(t *testing.T) {
	w, _ := loopbackSite(t, smallSite)
	alone := copyScript(t, w.root)
	failing := wrapTool(t, w.bin, "opic", "#!/bin/sh\necho 'opic: flag provided but not defined: -windw' >&2\nexit 2\n")
	for _, c := range []struct {
		name   string
		args   func(dir string) []string
		script string
		conf   string
		env    []string
		noDir  bool
		seeds  string
		code   int
		says   string
	}{
		{name: "help", args: func(string) []string { return []string{"--help"} }, code: 0, says: "Exit status: 0 the turn completed"},
		{name: "no argument", args: func(string) []string { return nil }, code: 2, says: "usage: crawl-cycle.sh DIR"},
		{name: "no directory", noDir: true, code: 2, says: "no such directory"},
		{name: "empty directory", seeds: "", code: 2, says: "no seeds: put the first URLs"},
		{name: "blank seeds", seeds: "\n  \n# later\n", code: 2, says: "no seeds"},
		{name: "tools not found", script: alone, env: []string{"PATH=/usr/bin:/bin", "CRAWLKIT_BIN="}, code: 2, says: "scripts/install.sh PREFIX"},
		{name: "CRAWLKIT_BIN without the tools", env: []string{"CRAWLKIT_BIN=/nonexistent"}, code: 2, says: "CRAWLKIT_BIN=/nonexistent has no fetch"},
		{name: "unknown RUNNER", conf: "RUNNER=nfs\n", code: 2, says: "RUNNER=nfs: not local, ssh or slurm"},
		{name: "unknown ORDER", conf: "ORDER=dfs\n", code: 2, says: "ORDER=dfs"},
		{name: "a step fails", env: []string{"CRAWLKIT_BIN=" + failing}, code: 1, says: "seed: failed (exit 2)"},
		{name: "a turn", code: 0, says: ": complete in "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "crawl")
			if !c.noDir {
				os.MkdirAll(dir, 0o755)
				seeds := c.seeds
				if c.name != "empty directory" && c.name != "blank seeds" {
					seeds, _ = readFileOK(filepath.Join(w.crawl, "seeds.txt"))
				}
				if c.name != "empty directory" {
					os.WriteFile(filepath.Join(dir, "seeds.txt"), []byte(seeds), 0o644)
				}
				os.WriteFile(filepath.Join(dir, "crawl.conf"), []byte("FETCH_ARGS=\"--allow-private --delay 0\"\n"+c.conf), 0o644)
			}
			script := filepath.Join(w.root, "scripts", "crawl-cycle.sh")
			if c.script != "" {
				script = c.script
			}
			args := []string{dir}
			if c.args != nil {
				args = c.args(dir)
			}
			cmd := exec.Command(script, args...)
			cmd.Env = append(append(slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "CRAWLKIT_BIN=") }),
				"CRAWLKIT_BIN="+w.bin), c.env...)
			code, out := exitOf(t, cmd)
			if code != c.code || !strings.Contains(out, c.says) {
				t.Errorf("exit %d; want %d and %q:\n%s", code, c.code, c.says, out)
			}
			if c.code == 2 && !c.noDir {
				if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
					t.Errorf("a set-up refused with 2 made %s/state", dir)
				}
			}
			if c.code == 1 {
				log, _ := readFileOK(filepath.Join(dir, "logs", "cycle.log"))
				if !strings.Contains(log, "seed: failed (exit 2):") || !strings.Contains(log, "flag provided but not defined: -windw") {
					t.Errorf("cycle.log does not say which step failed and why:\n%s", log)
				}
			}
		})
	}
}

func readFileOK(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// TestSeedsEveryTurnAndInject: a line added to seeds.txt after the first
// turn is queued at the next turn, once; inject adds the URLs of a file;
// every step's summary reaches cycle.log; a seed that fails is told in a
// line of its own.
func TestSeedsEveryTurnAndInject(t *testing.T) {
	w, base := loopbackSite(t, smallSite)
	w.dailyTurn(t, 1, "")
	seeds := filepath.Join(w.crawl, "seeds.txt")
	f, _ := os.OpenFile(seeds, os.O_APPEND|os.O_WRONLY, 0o644)
	fmt.Fprintf(f, "%s/orphan1\n%s/gone\n", base, base)
	f.Close()
	w.dailyTurn(t, 2, "")
	turns := w.fetchedURLs(t)
	if !slices.Contains(turns[1], base+"/orphan1") || !slices.Contains(turns[1], base+"/gone") {
		t.Fatalf("turn 2 did not fetch the seeds added after turn 1: %v", turns[1])
	}
	log := w.log(t)
	if !strings.Contains(log, "seed: 2 new seed URLs in the queue") {
		t.Errorf("turn 2's seed step is not in cycle.log:\n%s", log)
	}
	if !strings.Contains(log, "fetch: "+base+"/gone failed: HTTP status 404") {
		t.Errorf("the failing seed is not told in a line of its own:\n%s", log)
	}
	for _, summary := range []string{"select: ", "filter: ", "sitemaps: ", "fetch: 1 URLs in", "seed: took", "index: took"} {
		if !strings.Contains(log, summary) {
			t.Errorf("no %q line in cycle.log", summary)
		}
	}
	w.dailyTurn(t, 3, "")
	if log := w.log(t); !strings.Contains(log, "seed: no new line in seeds.txt") {
		t.Errorf("turn 3 queued seeds again:\n%s", log)
	}
	if done, _ := readFileOK(filepath.Join(w.crawl, "state", "seeds.done")); strings.Count(done, "\n") != 3 {
		t.Errorf("state/seeds.done: %q; want the 3 seeds", done)
	}

	list := filepath.Join(t.TempDir(), "more.txt")
	os.WriteFile(list, []byte(base+"/orphan2\n"+base+"/orphan1\nnot a URL\n"), 0o644)
	code, out := exitOf(t, exec.Command(filepath.Join(w.root, "scripts", "crawl-cycle.sh"), "inject", w.crawl, list))
	if code != 0 || !strings.Contains(out, "1 new URLs") || !strings.Contains(out, "1 lines are not http(s) URLs") {
		t.Errorf("inject: exit %d\n%s", code, out)
	}
	w.dailyTurn(t, 4, "")
	turns = w.fetchedURLs(t)
	if !slices.Contains(turns[3], base+"/orphan2") {
		t.Errorf("turn 4 did not fetch the injected URL: %v", turns[3])
	}
	for i, urls := range turns {
		if i != 1 && slices.Contains(urls, base+"/orphan1") && i != 3 {
			t.Errorf("turn %d fetched orphan1 again", i+1)
		}
	}
}

// TestCrawlCycleInterrupted: a turn stopped by Ctrl-C (SIGINT to its
// process group, as a terminal sends it) ends with 128+2 and the next run
// resumes it.
func TestCrawlCycleInterrupted(t *testing.T) {
	w, _ := loopbackSite(t, func(base string, mux *http.ServeMux) {
		inner := http.NewServeMux()
		smallSite(base, inner)
		mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second) // slow pages: the turn is caught fetching
			inner.ServeHTTP(rw, r)
		})
	})
	os.WriteFile(filepath.Join(w.crawl, "crawl.conf"), []byte("FETCH_ARGS=\"--allow-private --delay 0\"\nHOST_ESTIMATES=0\n"), 0o644)
	cmd := w.cycle()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		todo, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "todo.ndjson"))
		if len(todo) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	if code != 130 {
		t.Errorf("a turn stopped by SIGINT: exit %d (%v); want 130, 128+2", code, err)
	}
	// The shards' tools stop too (they hold the lock until they have):
	// a fetch finishes its requests in flight.
	lock, err := os.OpenFile(filepath.Join(w.crawl, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	stopped := time.Now()
	for syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Since(stopped) > 5*time.Second {
			t.Fatal("the turn's tools still run 5 s after Ctrl-C")
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	t.Logf("the turn's tools stopped %v after the turn exited", time.Since(stopped).Round(10*time.Millisecond))
	out := w.turn(t, "the turn resumed")
	if !strings.Contains(out, ": resume") || !strings.Contains(out, ": complete in ") {
		t.Errorf("the next run did not resume the turn:\n%s", out)
	}
}
