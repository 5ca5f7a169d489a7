package fetchcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// A resumption is a run that appends to the record file of an interrupted
// run of the same batch: the URLs recorded there are not fetched again.
type resumption struct {
	file *os.File
	done map[string]bool
}

// openResume repairs what an interrupted run may have left torn (the last
// line of the record file, the last record of its WARC files), reads the
// URLs already recorded, and opens the record file for appending.
func openResume(path, warcDir, warcPrefix string, stderr io.Writer) (*resumption, error) {
	if cut, err := record.CutTornLine(path); err != nil {
		return nil, err
	} else if cut > 0 {
		fmt.Fprintf(stderr, "fetch: %s: cut a torn last line (%d bytes) left by an interrupted run\n", path, cut)
	}
	if warcDir != "" {
		files, _ := filepath.Glob(filepath.Join(warcDir, warcPrefix+"-*.warc.gz"))
		for _, f := range files {
			cut, err := warc.CutTornTail(f)
			if err != nil {
				return nil, err
			}
			if cut > 0 {
				fmt.Fprintf(stderr, "fetch: %s: cut a torn last record (%d bytes) left by an interrupted run\n", f, cut)
			}
		}
	}
	r := &resumption{done: map[string]bool{}}
	if prev, err := os.Open(path); err == nil {
		in := &record.Input{Tool: "fetch", Stderr: stderr}
		err := in.Each(context.Background(), []string{path}, func(rec *record.Record) error {
			r.done[strings.TrimSpace(rec.URL())] = true
			return nil
		})
		prev.Close()
		if err != nil {
			return nil, err
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	r.file = f
	return r, nil
}

// close syncs the record file, so a completed run's records are on disk.
func (r *resumption) close() error {
	err := r.file.Sync()
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	return err
}
