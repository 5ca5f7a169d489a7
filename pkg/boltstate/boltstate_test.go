package boltstate_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/internal/boltdamage"
	"github.com/sekitei/crawlkit/pkg/boltstate"
)

var buckets = []string{"meta", "pages"}

// state writes a small state: its buckets are inline (kept in the root
// page), the case where bbolt may hand out copies of values.
func state(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *boltstate.Tx) error {
		for _, name := range buckets {
			b, err := tx.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				if err := b.Put([]byte(fmt.Sprintf("key%03d", i)), []byte(fmt.Sprintf("value %d", i))); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func get(path, bucket, key string) error {
	db, err := boltstate.Open(path, boltstate.Options{Kind: "test state", Buckets: buckets, ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *boltstate.Tx) error {
		_, err := tx.Bucket([]byte(bucket)).Get([]byte(key))
		return err
	})
}

// A damaged record of an inline bucket is found whichever key is read,
// in small states (inline buckets) and large ones (leaf pages).
func TestDamagedRecordsAreFound(t *testing.T) {
	for _, n := range []int{5, 400} {
		path := state(t, n)
		if err := get(path, "pages", "key001"); err != nil {
			t.Fatalf("%d records, undamaged: %v", n, err)
		}
		boltdamage.FlipOne("pages", "key003").Do(t, path)
		before, _ := os.ReadFile(path)
		err := get(path, "pages", "key004")
		var se *boltstate.Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Errorf("%d records: reading next to a damaged record: %v", n, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("%d records: the damaged file changed", n)
		}
	}
}

// A damaged bucket name (the root page has no value checksums) is found
// at Open, instead of the bucket vanishing and being made again, empty.
func TestDamagedBucketNameIsFound(t *testing.T) {
	path := state(t, 5)
	data, _ := os.ReadFile(path)
	// Every copy (a free page may hold an older root page).
	if bytes.Count(data, []byte("pages")) == 0 {
		t.Fatal("no bucket name in the file")
	}
	data = bytes.ReplaceAll(data, []byte("pages"), []byte("Pages"))
	os.WriteFile(path, data, 0o644)
	err := get(path, "pages", "key001")
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "bucket") {
		t.Fatalf("a damaged bucket name: %v", err)
	}
}
