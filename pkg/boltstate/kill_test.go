package boltstate_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
)

// The test binary run as a child process: BOLTSTATE_CHILD says what it
// does to the state at BOLTSTATE_PATH, and the test kills it with kill -9.
func TestMain(m *testing.M) {
	switch os.Getenv("BOLTSTATE_CHILD") {
	case "compact":
		boltstate.SetSparseMin(1 << 20)
		db, err := boltstate.Open(os.Getenv("BOLTSTATE_PATH"), boltstate.Options{Kind: "test state", Buckets: buckets})
		if err == nil {
			os.Stdout.WriteString("open\n")
			_, err = db.CompactIfSparse()
		}
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	case "create":
		err := boltstate.Create(os.Getenv("BOLTSTATE_PATH"), boltstate.Options{Kind: "test state"}, func(tx *boltstate.Tx) error {
			for _, name := range buckets {
				b, err := tx.CreateBucketIfNotExists([]byte(name))
				if err != nil {
					return err
				}
				for i := range 2000 {
					if err := b.Put(key(i), value(i)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child starts the test binary as a child doing what, on path.
func child(t *testing.T, what, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "BOLTSTATE_CHILD="+what, "BOLTSTATE_PATH="+path)
	cmd.Stderr = os.Stderr
	return cmd
}

// killAt runs cmd and kills it with kill -9 after d; it reports whether
// the kill landed (the process had not ended by itself).
func killAt(t *testing.T, cmd *exec.Cmd, d time.Duration) bool {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// A compaction killed with kill -9 at any moment leaves the state as it
// was or compacted, every record intact; the copy it was writing
// (PATH.compact) is removed by the next Open for writing, which compacts
// the state then instead of after the next batch.
func TestKilledCompactionRecoversAtOpen(t *testing.T) {
	defer boltstate.SetSparseMin(1 << 20)()
	const n, keep, kills = 4000, 10, 12
	rng := rand.New(rand.NewPCG(32, 2))
	// The time of a compaction, uninterrupted, from the child's start.
	dir := t.TempDir()
	db := sparseState(t, dir, n, keep)
	db.Close()
	t0 := time.Now()
	if out, err := child(t, "compact", db.Path()).Output(); err != nil || string(out) != "open\n" {
		t.Fatalf("compacting child: %v %q", err, out)
	}
	took := time.Since(t0)
	landed, leftCopy := 0, 0
	for k := range kills {
		dir := t.TempDir()
		db := sparseState(t, dir, n, keep)
		path := db.Path()
		db.Close()
		before, _ := os.Stat(path)
		cmd := child(t, "compact", path)
		if killAt(t, cmd, time.Duration(rng.Int64N(int64(took)*3/4))) {
			landed++
		}
		_, err := os.Stat(path + ".compact")
		copyLeft := err == nil
		if copyLeft {
			leftCopy++
		}
		db, err = boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets})
		if err != nil {
			t.Fatalf("kill %d: the state does not open: %v", k, err)
		}
		if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("kill %d: the compaction's copy is still there after Open: %v", k, err)
		}
		after, _ := os.Stat(path)
		// A kill before the copy began leaves the state as it was, for the
		// next batch to compact; a copy left behind is compacted at Open.
		if copyLeft && after.Size()*2 > before.Size() {
			t.Errorf("kill %d: the state is %d bytes after Open, %d before: not compacted", k, after.Size(), before.Size())
		}
		checkRecords(t, db, n, keep)
		db.Close()
	}
	t.Logf("%d kills of a compaction of %v, %d landed, %d left a .compact copy", kills, took.Round(time.Millisecond), landed, leftCopy)
	if landed < kills/4 || leftCopy == 0 {
		t.Errorf("%d of %d kills landed, %d during the copy: the test did not test", landed, kills, leftCopy)
	}
}

// Create killed with kill -9 at any moment leaves no state at the path or
// a complete one, never a file Open refuses; the next Create makes it,
// and it or the next Open for writing removes what the killed one left
// beside it.
func TestKilledCreateLeavesNoneOrWhole(t *testing.T) {
	const kills = 20
	rng := rand.New(rand.NewPCG(32, 3))
	dir := t.TempDir()
	t0 := time.Now()
	if err := child(t, "create", filepath.Join(dir, "s.db")).Run(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	landed, absent := 0, 0
	for k := range kills {
		dir := t.TempDir()
		path := filepath.Join(dir, "s.db")
		if killAt(t, child(t, "create", path), time.Duration(rng.Int64N(int64(took)*3/4))) {
			landed++
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			absent++
			if err := child(t, "create", path).Run(); err != nil {
				t.Fatalf("kill %d: creating again: %v", k, err)
			}
		}
		db, err := boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets})
		if err != nil {
			t.Fatalf("kill %d: the state does not open: %v", k, err)
		}
		checkRecords(t, db, 2000, 1)
		db.Close()
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			names := ""
			for _, e := range ents {
				names += " " + e.Name()
			}
			t.Errorf("kill %d: left beside the state:%s", k, names)
		}
	}
	t.Logf("%d kills of a creation of %v, %d landed, %d left no state", kills, took.Round(time.Millisecond), landed, absent)
	if landed < kills/4 || absent == 0 {
		t.Errorf("%d of %d kills landed, %d before the state was in place: the test did not test", landed, kills, absent)
	}
}
