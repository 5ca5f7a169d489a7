// Package crashtest holds the kill campaign (killcampaign_test.go): a crawl
// by scripts/crawl-cycle.sh killed with kill -9 and run on a full disk,
// checked against a crawl never interrupted. It is a package of its own so
// that go test runs it beside internal/e2e.
package crashtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// world is the tools and a crawl directory.
type world struct {
	root, bin, crawl string
	env              []string // extra environment of the loop
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// tools builds the tools once for all the tests of the package.
func tools(t *testing.T, root string) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawlkit-crashtest-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = dir
		build := exec.Command("go", "build", "-o", dir+"/", "./cmd/...")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(builtBin)
	}
	os.Exit(code)
}

func (w *world) cycle() *exec.Cmd {
	cmd := exec.Command(filepath.Join(w.root, "scripts/crawl-cycle.sh"), w.crawl)
	cmd.Env = append(append(os.Environ(), "CRAWLKIT_BIN="+w.bin), w.env...)
	return cmd
}

func (w *world) log(t *testing.T) string {
	data, _ := os.ReadFile(filepath.Join(w.crawl, "logs", "cycle.log"))
	return string(data)
}

// fetchedURLs returns the URLs each turn fetched, by turn.
func (w *world) fetchedURLs(t *testing.T) [][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "fetched.ndjson"))
	var turns [][]string
	for _, f := range files {
		turns = append(turns, urlsOf(t, f))
	}
	return turns
}

// urlsOf returns the urls of the records of a file, in order; every line
// must be a record.
func urlsOf(t *testing.T, path string) []string {
	t.Helper()
	var urls []string
	for i, line := range strings.Split(strings.TrimSuffix(readFile(t, path), "\n"), "\n") {
		if line == "" {
			continue
		}
		r, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatalf("%s: line %d: %v", path, i+1, err)
		}
		urls = append(urls, r.URL())
	}
	return urls
}

// checkCrawlFiles checks what a crash must never leave behind: every WARC
// file reads to its end, and every record file of every turn is whole lines
// of valid records.
func (w *world) checkCrawlFiles(t *testing.T) {
	t.Helper()
	warcs, _ := filepath.Glob(filepath.Join(w.crawl, "warc", "*.warc.gz"))
	if len(warcs) == 0 {
		t.Fatal("no WARC files")
	}
	for _, f := range warcs {
		eachWARCRecord(t, f, func(*warc.Record) {})
	}
	ndjson, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "*.ndjson"))
	for _, f := range ndjson {
		data, _ := os.ReadFile(f)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Errorf("%s ends in a torn line", f)
		}
		urlsOf(t, f)
	}
}

func exitOf(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err == nil {
		return 0, string(out)
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("%v\n%s", err, out)
	}
	return ee.ExitCode(), string(out)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	noErr(t, err)
	return string(b)
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// firstMissing lists up to 5 lines of a that b lacks.
func firstMissing(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] && len(out) < 5 {
			out = append(out, x)
		}
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lastLine returns the last line of text holding s.
func lastLine(text, s string) string {
	last := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			last = l
		}
	}
	return last
}

// eachWARCRecord reads every record of a WARC file to its end, bodies
// included, and calls fn with each; a torn or damaged record is an error.
func eachWARCRecord(t *testing.T, f string, fn func(*warc.Record)) {
	t.Helper()
	fh, err := os.Open(f)
	noErr(t, err)
	defer fh.Close()
	r, err := warc.NewReader(fh)
	noErr(t, err)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err == nil {
			_, err = io.Copy(io.Discard, rec.Body)
		}
		if err != nil {
			t.Errorf("%s: torn or damaged: %v", f, err)
			return
		}
		fn(rec)
	}
}
