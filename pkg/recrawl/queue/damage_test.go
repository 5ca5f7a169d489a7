package queue

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/boltdamage"
)

// damagedWorld writes a state of two turns and returns its path, the page
// the next turn fetches and a second page.
func damagedWorld(t *testing.T) (path, u, u2 string, at time.Time) {
	path = filepath.Join(t.TempDir(), "recrawl.state")
	q := open(t, path, Options{})
	w := newWorld(7, 400, 8)
	at = t0
	for turn := 1; turn <= 2; turn++ {
		at = at.Add(24 * time.Hour)
		var b Batch
		for i := range w.pages {
			b.Fetches = append(b.Fetches, w.fetch(i, at))
			b.Weights = append(b.Weights, Weight{URL: w.pages[i], Host: b.Fetches[i].Host, Importance: float64(i%7 + 1)})
		}
		b.Now = at
		if _, err := q.Apply(batchID(turn, at), b); err != nil {
			t.Fatal(err)
		}
	}
	q.Close()
	return path, w.pages[200], w.pages[201], at
}

// A damaged state fails the next update and the read-only commands with
// its path, and stays as it was.
func TestDamagedState(t *testing.T) {
	good, u, u2, at := damagedWorld(t)
	q := open(t, good, Options{ReadOnly: true})
	var dueKey string
	err := q.view(func(tx *boltTx) error {
		v, err := tx.Bucket(bPages).Get([]byte(u))
		if err != nil {
			return err
		}
		p, err := decodePage(v)
		dueKey = string(p.dueKey(u))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	damages := []boltdamage.Damage{
		boltdamage.Flip("pages", u, 256),
		boltdamage.Flip("due", dueKey, 256),
		boltdamage.Flip("meta", "batch", 256),
		boltdamage.FlipOne("pages", u),
		boltdamage.FlipOne("due", dueKey),
		boltdamage.ZeroPage("pages", u),
		boltdamage.ZeroPage("due", dueKey),
		boltdamage.Truncate(0.5),
		boltdamage.Append(100),
		boltdamage.Swap("pages", u, u2),
	}
	want := map[string]string{
		damages[3].Name: "corrupt record \"" + u + "\" in pages (checksum mismatch)",
		damages[7].Name: "truncated recrawl state",
		damages[8].Name: "not a whole number of",
		damages[9].Name: "corrupt record \"" + u + "\" in pages (checksum mismatch)",
	}
	at = at.Add(24 * time.Hour)
	ops := map[string]func(string) error{
		"update": func(path string) error {
			q, err := Open(path, Options{})
			if err != nil {
				return err
			}
			defer q.Close()
			f := Fetch{URL: u, Host: "h0.example", At: at, Status: 200, Digest: "x"}
			_, err = q.Apply(batchID(3, at), Batch{Now: at, Fetches: []Fetch{f}})
			return err
		},
		"explain": func(path string) error {
			q, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer q.Close()
			_, err = q.Explain([]string{u}, NextOptions{N: 1000, Slot: 1, Now: at})
			return err
		},
	}
	boltdamage.Check(t, good, damages, want, ops)
}
