package barrelcli_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrelcli"
	"github.com/sekitei/crawlkit/pkg/clikit"
)

// The test binary is barrel itself when BARRELCLI_TEST_MAIN is set, so a
// test runs the command as a real process and signals it.
func TestMain(m *testing.M) {
	if os.Getenv("BARRELCLI_TEST_MAIN") == "1" {
		os.Exit(barrelcli.Main(append([]string{"barrel"}, os.Args[1:]...), clikit.StdEnv()))
	}
	os.Exit(m.Run())
}

func smallIndex(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := barrel.NewBuilder(dir, barrel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for u, html := range map[string]string{
		"http://docs.test/roses.html": "<html><head><title>Growing roses</title></head><body><p>Roses in gravel.</p></body></html>",
		"http://docs.test/moss.html":  "<html><head><title>Moss</title></head><body><p>Moss between stones.</p></body></html>",
	} {
		if err := b.Add(u, []byte(html)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	return dir
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %s", u, resp.StatusCode, b)
	}
	return string(b)
}

// barrel serve answers on the address it prints, and SIGTERM (or SIGINT)
// stops it cleanly: the process exits 128 plus the signal's number (143,
// 130) and says it was interrupted.
func TestServeStopsOnSignal(t *testing.T) {
	idx := smallIndex(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "serve", "--index", idx, "--addr", "127.0.0.1:0")
			cmd.Env = append(os.Environ(), "BARRELCLI_TEST_MAIN=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(stderr)
			if !lines.Scan() {
				t.Fatal("barrel serve printed nothing")
			}
			m := regexp.MustCompile(`^barrel: serving .* \(2 pages\) on (http://127\.0\.0\.1:[0-9]+/)$`).FindStringSubmatch(lines.Text())
			if m == nil {
				t.Fatalf("first line %q", lines.Text())
			}
			if body := httpGet(t, m[1]+"healthz"); !strings.Contains(body, `"status":"ok"`) {
				t.Errorf("healthz: %s", body)
			}
			if body := httpGet(t, m[1]+"search?q=gravel"); !strings.Contains(body, `"url":"http://docs.test/roses.html"`) {
				t.Errorf("search: %s", body)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var rest strings.Builder
			for lines.Scan() {
				rest.WriteString(lines.Text() + "\n")
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			want := clikit.ExitInterrupted
			if sig == syscall.SIGTERM {
				want = clikit.ExitTerminated
			}
			if !errors.As(err, &ee) || ee.ExitCode() != want || rest.String() != "barrel: interrupted\n" {
				t.Errorf("exit %v, stderr %q; want status %d and one line barrel: interrupted", err, rest.String(), want)
			}
		})
	}
}

func TestServeUsage(t *testing.T) {
	idx := smallIndex(t)
	for _, args := range [][]string{{"--max-n", "0"}, {"extra"}} {
		cmd := exec.Command(os.Args[0], append([]string{"serve", "--index", idx, "--addr", "127.0.0.1:0"}, args...)...)
		cmd.Env = append(os.Environ(), "BARRELCLI_TEST_MAIN=1")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != clikit.ExitUsage {
			t.Errorf("%v: %v: %s", args, err, out)
		}
	}
}
