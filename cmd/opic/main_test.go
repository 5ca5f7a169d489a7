package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sekitei/crawlkit/internal/scripttest"
	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/opiccli"
)

func TestMain(m *testing.M) {
	if os.Getenv("OPIC_TEST_RUN") == "1" { // a real opic process for TestKill
		os.Exit(opiccli.Main(append([]string{"opic"}, os.Args[1:]...), clikit.StdEnv()))
	}
	testscript.Main(m, map[string]func(){
		"opic": func() { os.Exit(opiccli.Main(os.Args, clikit.StdEnv())) },
	})
}

// TestScripts runs the txtar scripts in testdata/script.
func TestScripts(t *testing.T) { scripttest.Run(t, nil) }

// opicCmd runs opic as its own process (this test binary).
func opicCmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "OPIC_TEST_RUN=1")
	return cmd
}

func show(t *testing.T, state string) string {
	out, err := opicCmd(t, "show", "--state", state, "--tsv").Output()
	if err != nil {
		t.Fatalf("opic show %s: %v", state, err)
	}
	return string(out)
}

// kill -9 of a real opic update at random moments leaves the state before
// or after the batch, and the rerun of the batch then reaches the after.
func TestKillLeavesBeforeOrAfter(t *testing.T) {
	dir := t.TempDir()
	var seeds, batch strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&seeds, "http://h%d.test/%d\n", i%50, i)
		fmt.Fprintf(&batch, `{"url":"http://h%d.test/%d","fetched_at":"2026-11-01T00:00:00Z","links":[`, i%50, i)
		for k := range 20 {
			if k > 0 {
				batch.WriteByte(',')
			}
			fmt.Fprintf(&batch, `"http://h%d.test/%d"`, (i+k)%50, (i*7+k*13)%9000)
		}
		batch.WriteString("]}\n")
	}
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	seedsFile, batchFile := write("seeds.txt", seeds.String()), write("batch.ndjson", batch.String())
	base := filepath.Join(dir, "base.opic")
	if out, err := opicCmd(t, "update", "--state", base, "--batch", "1", seedsFile).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	baseData, _ := os.ReadFile(base)
	before := show(t, base)
	full := filepath.Join(dir, "full.opic")
	write("full.opic", string(baseData))
	start := time.Now()
	if out, err := opicCmd(t, "update", "--state", full, "--batch", "2", batchFile).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Kill moments are drawn over the length of one update and a bit more.
	span := time.Since(start) * 5 / 4
	after := show(t, full)
	if before == after {
		t.Fatal("the batch changed nothing")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]int{}
	for round := range 12 {
		work := write("work.opic", string(baseData))
		cmd := opicCmd(t, "update", "--state", work, "--batch", "2", batchFile)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(span))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		switch show(t, work) {
		case before:
			seen["before"]++
		case after:
			seen["after"]++
		default:
			t.Fatalf("round %d: the state is neither the one before the batch nor the one after", round)
		}
		if out, err := opicCmd(t, "update", "--state", work, "--batch", "2", batchFile).CombinedOutput(); err != nil {
			t.Fatalf("rerun: %v: %s", err, out)
		}
		if show(t, work) != after {
			t.Fatalf("round %d: the rerun did not reach the state after the batch", round)
		}
		if ents, _ := filepath.Glob(filepath.Join(dir, ".work.opic*")); len(ents) != 0 {
			t.Fatalf("temporary files left: %v", ents)
		}
	}
	t.Logf("states after kill -9: %v", seen)
}
