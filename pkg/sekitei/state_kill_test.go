package sekitei

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sekitei/crawlkit/pkg/boltstate"
)

// TestHelperApplyForever is the process TestKill9KeepsLastBatch kills: it
// applies batches to the state named by SEKITEI_KILL_STATE until it dies,
// printing each batch ID after its commit.
func TestHelperApplyForever(t *testing.T) {
	path := os.Getenv("SEKITEI_KILL_STATE")
	if path == "" {
		return // only as the killed process
	}
	st, err := OpenState(path, StateOptions{SiteQuota: 100})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	g := &turnGen{sites: siteGen{rng: rand.New(rand.NewPCG(21, 22)), hosts: 50}}
	for i := 2; ; i++ {
		id := fmt.Sprintf("%06d", i)
		if _, err := st.Apply(id, g.turn(t, 300, 100, 20), nil); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("committed", id)
	}
}

// TestKill9KeepsLastBatch kills a process in the middle of its updates
// (after a few commits, wherever it then is) and checks that the state
// opens with a batch the process committed, and takes the next batch.
func TestKill9KeepsLastBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	st := openTestState(t, path, StateOptions{SiteQuota: 100})
	if _, err := st.Apply("000001", (&siteGen{rng: rand.New(rand.NewPCG(1, 1)), hosts: 5}).batch(t, 50, 5), nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperApplyForever$")
		cmd.Env = append(os.Environ(), "SEKITEI_KILL_STATE="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		committed := map[string]bool{}
		sc := bufio.NewScanner(out)
		for n := 0; n < 3+round && sc.Scan(); {
			if id, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
				committed[id] = true
				n++
			} else if strings.HasPrefix(sc.Text(), "error") {
				t.Fatal(sc.Text())
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
				committed[id] = true
			}
		}
		cmd.Wait()
		if len(committed) == 0 {
			t.Fatal("the helper committed nothing")
		}
		st, err := OpenState(path, StateOptions{SiteQuota: 100})
		if err != nil {
			t.Fatalf("after kill -9: %v", err)
		}
		last, err := st.LastBatch()
		// The batch being committed when the kill came may have made it.
		if err != nil || !committed[last] && last <= maxKey(committed) {
			t.Errorf("after kill -9: last batch %q (%v), committed %v", last, err, committed)
		}
		if _, err := st.Apply("999999", nil, nil); err != nil {
			t.Errorf("after kill -9, the next batch: %v", err)
		}
		// Back to a state the helper can apply its IDs to again.
		st.db.Update(func(tx *boltstate.Tx) error { return tx.Bucket(bucketMeta).Put(keyBatch, []byte("000001")) })
		st.Close()
	}
}

func maxKey(m map[string]bool) string {
	best := ""
	for k := range m {
		best = max(best, k)
	}
	return best
}
