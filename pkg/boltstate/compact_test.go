package boltstate_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/internal/boltdamage"
	"github.com/sekitei/crawlkit/pkg/boltstate"
)

func key(i int) []byte   { return []byte(fmt.Sprintf("key%05d", i)) }
func value(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 1000+i%500) }

// sparseState writes n records of about a kilobyte to a state in dir, then
// deletes all but every keep-th in a second batch, which leaves most of
// the file free pages. It returns the state, open.
func sparseState(t *testing.T, dir string, n, keep int) *boltstate.DB {
	t.Helper()
	db, err := boltstate.Open(filepath.Join(dir, "s.db"), boltstate.Options{Kind: "test state", Buckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	put := func(tx *boltstate.Tx) error {
		for _, name := range buckets {
			b, err := tx.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return err
			}
			for i := range n {
				if err := b.Put(key(i), value(i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	drop := func(tx *boltstate.Tx) error {
		for _, name := range buckets {
			b := tx.Bucket([]byte(name))
			for i := range n {
				if i%keep != 0 {
					if err := b.Delete(key(i)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := db.Update(put); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(drop); err != nil {
		t.Fatal(err)
	}
	return db
}

// read returns the value of key in bucket of the state at path.
func read(path, bucket string, key []byte) (v []byte, err error) {
	db, err := boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	err = db.View(func(tx *boltstate.Tx) error {
		s, err := tx.Bucket([]byte(bucket)).Get(key)
		v = bytes.Clone(s)
		return err
	})
	return v, err
}

// checkRecords reads every record of the state at path and compares it
// with what sparseState left.
func checkRecords(t *testing.T, db *boltstate.DB, n, keep int) {
	t.Helper()
	err := db.View(func(tx *boltstate.Tx) error {
		for _, name := range buckets {
			b := tx.Bucket([]byte(name))
			count := 0
			err := b.ForEach(func(k, v []byte) error {
				var i int
				fmt.Sscanf(string(k), "key%05d", &i)
				if !bytes.Equal(k, key(i)) || !bytes.Equal(v, value(i)) || i%keep != 0 {
					return fmt.Errorf("%s: record %q is not what was written", name, k)
				}
				count++
				return nil
			})
			if err != nil {
				return err
			}
			if want := (n + keep - 1) / keep; count != want {
				return fmt.Errorf("%s: %d records, want %d", name, count, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A state that is mostly free pages is rewritten smaller, with every
// record as it was, and stays usable by the process that compacted it
// and by the next one; one that is not is left alone.
func TestCompactIfSparse(t *testing.T) {
	defer boltstate.SetSparseMin(1 << 20)()
	dir := t.TempDir()
	db := sparseState(t, dir, 4000, 10)
	path := db.Path()
	before, _ := os.Stat(path)
	c, err := db.CompactIfSparse()
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !c.Done || c.Before != before.Size() || c.After != after.Size() || c.After*2 > c.Before || c.Free*4 < c.Before {
		t.Fatalf("compaction %+v of a state of %d bytes, now %d", c, before.Size(), after.Size())
	}
	if os.SameFile(before, after) {
		t.Fatal("the state is the same file after compacting")
	}
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the compaction's copy is left: %v", err)
	}
	checkRecords(t, db, 4000, 10)
	// The same DB writes to the new file, and a later process reads it.
	err = db.Update(func(tx *boltstate.Tx) error { return tx.Bucket([]byte("pages")).Put(key(1), value(1)) })
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if v, err := read(path, "pages", key(1)); err != nil || !bytes.Equal(v, value(1)) {
		t.Fatalf("after compacting and a write: %q, %v", v, err)
	}
	// Compacted, it is not sparse: a second call leaves it alone.
	db2, err := boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	st, _ := os.Stat(path)
	if c, err := db2.CompactIfSparse(); err != nil || c.Done {
		t.Fatalf("a compacted state compacted again: %+v, %v", c, err)
	}
	if st2, _ := os.Stat(path); !os.SameFile(st, st2) || st2.Size() != st.Size() {
		t.Fatal("a state not sparse was rewritten")
	}
}

// A damaged record stops the compaction with the path and the record, and
// the file is left byte for byte as it was, without a copy beside it.
func TestCompactDamagedLeavesTheFile(t *testing.T) {
	defer boltstate.SetSparseMin(1 << 20)()
	dir := t.TempDir()
	db := sparseState(t, dir, 4000, 10)
	path := db.Path()
	db.Close()
	boltdamage.FlipOne("pages", string(key(1230))).Do(t, path)
	was, _ := os.ReadFile(path)
	db, err := boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.CompactIfSparse()
	var se *boltstate.Error
	if !errors.As(err, &se) || c.Done || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "key01230") {
		t.Fatalf("compacting a damaged state: %+v, %v", c, err)
	}
	db.Close()
	if now, _ := os.ReadFile(path); !bytes.Equal(was, now) {
		t.Fatal("the damaged state changed")
	}
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the compaction's copy is left: %v", err)
	}
}

// A full disk during the compaction fails it with ENOSPC and leaves the
// state as it was, without a copy beside it.
func TestCompactOnFullDisk(t *testing.T) {
	defer boltstate.SetSparseMin(1 << 20)()
	src := sparseState(t, t.TempDir(), 4000, 3)
	src.Close()
	data, err := os.ReadFile(src.Path())
	if err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=%d", 2*len(data))); err != nil {
		t.Fatalf("mount tmpfs (the tests run as root): %v", err)
	}
	defer unix.Unmount(mnt, unix.MNT_DETACH)
	path := filepath.Join(mnt, "s.db")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The disk fills up a megabyte into the copy (of about 3 MB).
	var fs unix.Statfs_t
	if err := unix.Statfs(mnt, &fs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, int64(fs.Bavail)*fs.Bsize-1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.CompactIfSparse()
	if !errors.Is(err, syscall.ENOSPC) || c.Done {
		t.Fatalf("compacting on a full disk: %+v, %v", c, err)
	}
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the compaction's copy is left: %v", err)
	}
	checkRecords(t, db, 4000, 3)
	db.Close()
	if now, _ := os.ReadFile(path); !bytes.Equal(data, now) {
		t.Fatal("the state changed")
	}
}

// A process that opened the state and waits for its lock while another
// compacts it opens the new file once it has the lock, not the old one,
// which is no longer at the path.
func TestOpenWaitingForACompaction(t *testing.T) {
	defer boltstate.SetSparseMin(1 << 20)()
	db := sparseState(t, t.TempDir(), 4000, 10)
	path := db.Path()
	type opened struct {
		db  *boltstate.DB
		err error
	}
	got := make(chan opened)
	go func() {
		// flock locks are per open file: a second Open in this process
		// waits as another process would.
		d, err := boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets, Timeout: 10 * time.Second})
		got <- opened{d, err}
	}()
	time.Sleep(200 * time.Millisecond) // let it open the old file and wait
	if c, err := db.CompactIfSparse(); err != nil || !c.Done {
		t.Fatalf("compacting: %+v, %v", c, err)
	}
	select {
	case o := <-got:
		t.Fatalf("the second Open did not wait for the lock: %v", o.err)
	default:
	}
	db.Close()
	o := <-got
	if o.err != nil {
		t.Fatal(o.err)
	}
	defer o.db.Close()
	err := o.db.Update(func(tx *boltstate.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("after"), []byte("x")) })
	if err != nil {
		t.Fatal(err)
	}
	o.db.Close()
	if v, err := read(path, "meta", []byte("after")); err != nil || string(v) != "x" {
		t.Fatalf("the write of the process that waited is not in the state: %q, %v", v, err)
	}
}
