package fetchcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sekitei/crawlkit/pkg/fetch"
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
		// A run stopped by a signal wrote the URLs it did not fetch with
		// error "interrupted": those are fetched now, and their records
		// dropped, so that the batch holds one record a URL.
		var kept []byte
		dropped := 0
		in := &record.Input{Tool: "fetch", Stderr: stderr}
		err := in.EachLine(context.Background(), []string{path}, func(_ string, line []byte, _ int) error {
			rec, err := record.Parse(line)
			if err != nil {
				kept = append(append(kept, line...), '\n') // not this run's to judge: kept
				return nil
			}
			if msg, _ := rec.String("error"); strings.HasPrefix(msg, fetch.CodeInterrupted+":") || msg == fetch.CodeInterrupted {
				dropped++
				return nil
			}
			r.done[strings.TrimSpace(rec.URL())] = true
			kept = append(append(kept, line...), '\n')
			return nil
		})
		prev.Close()
		if err != nil {
			return nil, err
		}
		if dropped > 0 {
			if err := replaceFile(path, kept); err != nil {
				return nil, err
			}
			fmt.Fprintf(stderr, "fetch: %s: %d URLs the interrupted run did not fetch are fetched now\n", path, dropped)
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

// replaceFile writes data to a file beside path, syncs it and renames it
// over path: a kill leaves the old file or the new one.
func replaceFile(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
