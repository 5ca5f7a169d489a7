package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every tool that keeps a state (opic, recrawl, sekitei, barrel's index)
// makes a new one whole or not at all: each update is killed with kill -9
// at seeded random moments of its run on a fresh directory, many times,
// and after each kill the state is either absent or opens and reads
// (the tool's own reader of it), and the update run again completes.
func TestKilledStatesOpen(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := tools(t, root)
	batch, warcs := fetchedBatch(t, bin, 150)
	type tool struct {
		name, state string   // state: the file (or index's MANIFEST) made
		update      []string // run with the batch on stdin
		check       []string // must exit 0 on a good state
	}
	list := []tool{
		{"opic", "o.db", []string{"opic", "update", "--state", "o.db"}, []string{"opic", "show", "--state", "o.db", "--top", "3"}},
		{"recrawl", "r.db", []string{"recrawl", "update", "--state", "r.db", "--batch", "b1"}, []string{"recrawl", "report", "--state", "r.db", "--now", "2026-11-21T00:00:00Z"}},
		{"sekitei", "s.db", []string{"sekitei", "update", "--state", "s.db", "--batch", "b1"}, []string{"sekitei", "state", "--state", "s.db"}},
		{"barrel", "idx/MANIFEST", []string{"barrel", "build", "--index", "idx", "--warc-dir", warcs}, []string{"barrel", "stats", "--index", "idx", "--verify"}},
	}
	const kills = 16
	rng := rand.New(rand.NewPCG(32, 1))
	for _, tl := range list {
		t.Run(tl.name, func(t *testing.T) {
			run := func(dir string, args []string) *exec.Cmd {
				cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
				cmd.Dir = dir
				if args[0] == tl.update[0] && args[1] == tl.update[1] {
					in, err := os.Open(batch)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { in.Close() })
					cmd.Stdin = in
				}
				return cmd
			}
			t0 := time.Now()
			if out, err := run(t.TempDir(), tl.update).CombinedOutput(); err != nil {
				t.Fatalf("%s uninterrupted: %v\n%s", tl.update, err, out)
			}
			took := time.Since(t0)
			landed, absent := 0, 0
			for k := range kills {
				dir := t.TempDir()
				// Half the kills in the first tenth of a run, where the
				// state is created; the rest anywhere in it.
				span := took * 5 / 4
				if k%2 == 0 {
					span = took / 10
				}
				cmd := run(dir, tl.update)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(rng.Int64N(int64(span))))
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					landed++
				}
				if _, err := os.Stat(filepath.Join(dir, tl.state)); errors.Is(err, os.ErrNotExist) {
					absent++
				} else if out, err := run(dir, tl.check).CombinedOutput(); err != nil {
					t.Fatalf("kill %d: the state left does not read: %s: %v\n%s", k, tl.check, err, out)
				}
				if out, err := run(dir, tl.update).CombinedOutput(); err != nil {
					t.Fatalf("kill %d: the update run again: %v\n%s", k, err, out)
				}
				if out, err := run(dir, tl.check).CombinedOutput(); err != nil {
					t.Fatalf("kill %d: after the update run again: %s: %v\n%s", k, tl.check, err, out)
				}
			}
			t.Logf("%s: run of %v; %d kills, %d landed, %d left no state, none a bad one", tl.name, took.Round(time.Millisecond), kills, landed, absent)
			if landed < kills/4 {
				t.Errorf("%d of %d kills landed: the test did not test", landed, kills)
			}
		})
	}
}

// fetchedBatch fetches a loopback site of n linked pages with fetch into
// WARC files and returns the batch of fetch records and the WARC directory.
func fetchedBatch(t *testing.T, bin string, n int) (batch, warcs string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/p/", func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscanf(r.URL.Path, "/p/%d", &i)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>Page %d about rivers</title></head><body><p>Page %d tells of rivers, bridges and boats number %d.</p>", i, i, i*7)
		for j := 1; j <= 8; j++ {
			fmt.Fprintf(w, `<a href="/p/%d">river %d</a> `, (i*5+j)%(2*n), j)
		}
		fmt.Fprint(w, "</body></html>")
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	var urls strings.Builder
	for i := range n {
		fmt.Fprintf(&urls, "%s/p/%d\n", base, i)
	}
	warcs = filepath.Join(dir, "warc")
	batch = filepath.Join(dir, "batch.ndjson")
	out, err := os.Create(batch)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(filepath.Join(bin, "fetch"), "--allow-private", "--delay", "0", "--warc", warcs)
	cmd.Stdin = strings.NewReader(urls.String())
	cmd.Stdout = out
	var msg strings.Builder
	cmd.Stderr = &msg
	if err := cmd.Run(); err != nil {
		t.Fatalf("fetch: %v\n%s", err, msg.String())
	}
	return batch, warcs
}
