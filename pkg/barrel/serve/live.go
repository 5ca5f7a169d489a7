package serve

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel"
)

// Live keeps the newest committed generation of an index open for a
// server that runs across builds: a build commits by renaming in a new
// MANIFEST and then deletes the files of the generation it replaced, so
// an index opened before the build must not be searched after it. Each
// Acquire checks the MANIFEST (one stat) and, when it changed, opens the
// new generation; the old one is closed when its last search returns.
type Live struct {
	dir string
	log io.Writer

	mu    sync.Mutex
	cur   *generation
	stamp manifestStamp
}

type generation struct {
	idx  *barrel.Index
	refs atomic.Int64 // searches in flight, plus one while current
}

func (g *generation) release() {
	if g.refs.Add(-1) == 0 {
		g.idx.Close()
	}
}

// manifestStamp tells MANIFEST files apart: a commit renames a new file
// in, so its inode changes even when its size and time do not.
type manifestStamp struct {
	ino  uint64
	size int64
	mod  time.Time
}

func stampOf(dir string) (manifestStamp, error) {
	st, err := os.Stat(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		return manifestStamp{}, err
	}
	s := manifestStamp{size: st.Size(), mod: st.ModTime()}
	if sys, ok := st.Sys().(interface{ Ino() uint64 }); ok {
		s.ino = sys.Ino()
	}
	return s, nil
}

// OpenLive opens the index in dir. Failures to open a later generation are
// reported on log (nil: nowhere) and the open one keeps answering.
func OpenLive(dir string, log io.Writer) (*Live, error) {
	stamp, err := stampOf(dir)
	if err != nil {
		return nil, fmt.Errorf("no index at %s: %w", dir, err)
	}
	idx, err := barrel.Open(dir)
	if err != nil {
		return nil, err
	}
	l := &Live{dir: dir, log: log, cur: &generation{idx: idx}, stamp: stamp}
	l.cur.refs.Store(1)
	return l, nil
}

// Acquire returns the newest generation's index and the function to call
// when the search is done with it.
func (l *Live) Acquire() (*barrel.Index, func()) {
	stamp, serr := stampOf(l.dir)
	l.mu.Lock()
	defer l.mu.Unlock()
	if serr == nil && stamp != l.stamp {
		if idx, err := barrel.Open(l.dir); err != nil {
			if l.log != nil {
				fmt.Fprintf(l.log, "barrel: %s: keeping the open generation: %v\n", l.dir, err)
			}
		} else {
			old := l.cur
			l.cur, l.stamp = &generation{idx: idx}, stamp
			l.cur.refs.Store(1)
			old.release()
		}
	}
	g := l.cur
	g.refs.Add(1)
	return g.idx, g.release
}

// Close closes the current generation once its searches are done.
func (l *Live) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != nil {
		l.cur.release()
		l.cur = nil
	}
}
