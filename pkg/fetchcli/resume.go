package fetchcli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/fetch"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// A resumption is a run that appends to the record file of an interrupted
// run of the same batch: the URLs recorded there are not fetched again.
type resumption struct {
	file     *os.File
	done     map[string]bool
	archived map[warcLoc]bool // the WARC records the record file points at
	// the WARC responses no record points at, by URL (recover), and how
	// many of them were recorded
	pending   map[string]*pendingPage
	recovered int
}

type warcLoc struct {
	file   string
	offset int64
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
	r := &resumption{done: map[string]bool{}, archived: map[warcLoc]bool{}}
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
			if msg, _ := rec.String("error"); notDone(msg) {
				dropped++
				return nil
			}
			r.done[strings.TrimSpace(rec.URL())] = true
			if wf, ok := rec.String("warc_file"); ok {
				if off, ok, _ := rec.Float("warc_offset"); ok {
					r.archived[warcLoc{filepath.Clean(wf), int64(off)}] = true
				}
			}
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
			fmt.Fprintf(stderr, "fetch: %s: %d URLs the interrupted run did not fetch or archive are fetched now\n", path, dropped)
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	r.file = f
	if warcDir != "" {
		if err := r.recover(warcDir, warcPrefix, stderr); err != nil {
			f.Close()
			return nil, err
		}
	}
	return r, nil
}

// recover reconciles the record file with the WARC files: a response (or
// revisit) record that no record points at was archived by a run killed
// before its record reached the file. The response is kept (pending) until
// the run reads the page's input record: then fetch makes the page's record
// from the input record and the archived response, as the interrupted run
// would have (title, links, signature ...: fetch.Recovered), with
// "recovered": true, and does not fetch the page again (recoverFrom).
// Redirect responses are left out: their URL is fetched again.
func (r *resumption) recover(warcDir, warcPrefix string, stderr io.Writer) error {
	files, _ := filepath.Glob(filepath.Join(warcDir, warcPrefix+"-*.warc.gz"))
	for _, path := range files {
		fh, err := os.Open(path)
		if err != nil {
			return err
		}
		rd, err := warc.NewReader(fh)
		if err != nil {
			fh.Close()
			return fmt.Errorf("fetch: %s: %w", path, err)
		}
		for {
			wr, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fh.Close()
				return fmt.Errorf("fetch: %s: %w", path, err)
			}
			typ := wr.Type()
			if typ != warc.TypeResponse && typ != warc.TypeRevisit {
				continue
			}
			if r.archived[warcLoc{filepath.Clean(path), wr.Offset}] {
				continue
			}
			u := wr.TargetURI()
			if r.done[u] || isRobots(u) {
				continue
			}
			resp, err := wr.HTTPResponse()
			if err != nil {
				continue // not an HTTP response: nothing to rebuild
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				continue
			}
			if resp.StatusCode >= 300 && resp.StatusCode < 400 && typ == warc.TypeResponse {
				continue
			}
			p := &pendingPage{file: path, offset: wr.Offset, revisit: typ == warc.TypeRevisit,
				status: resp.StatusCode, header: resp.Header, at: wr.Date()}
			if !p.revisit {
				p.body = body
			}
			if r.pending == nil {
				r.pending = map[string]*pendingPage{}
			}
			r.pending[u] = p
		}
		fh.Close()
	}
	return nil
}

// pendingPage is a WARC response with no record, to be recorded.
type pendingPage struct {
	file    string
	offset  int64
	revisit bool
	status  int
	header  http.Header
	body    []byte // nil for a revisit
	at      time.Time
}

// recoverFrom emits the record of the page of rec if an interrupted run
// archived its response (recover) and tells whether it did: then the page
// is not fetched again.
func (r *resumption) recoverFrom(f *fetch.Fetcher, rec *record.Record) (bool, error) {
	u := strings.TrimSpace(rec.URL())
	p := r.pending[u]
	if p == nil {
		return false, nil
	}
	delete(r.pending, u)
	r.done[u] = true
	r.recovered++
	return true, f.Recovered(rec, p.status, p.header, p.body, p.at, func(rec *record.Record) {
		rec.SetString("warc_file", p.file)
		rec.SetInt("warc_offset", p.offset)
		if p.revisit {
			rec.SetString("warc_type", warc.TypeRevisit)
		}
		rec.SetBool("recovered", true)
	})
}

// recoverRest records the pending responses of pages the input did not
// name again, from their URL alone, so that every archived response has its
// record.
func (r *resumption) recoverRest(f *fetch.Fetcher) error {
	urls := make([]string, 0, len(r.pending))
	for u := range r.pending {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	for _, u := range urls {
		if _, err := r.recoverFrom(f, record.New(u)); err != nil {
			return err
		}
	}
	return nil
}

// notDone tells the records a resumed run fetches again: the URLs a run
// stopped by a signal did not fetch ("interrupted"), and the responses whose
// WARC record could not be written ("warc": a full disk), which left
// nothing in the archive.
func notDone(msg string) bool {
	for _, code := range []string{fetch.CodeInterrupted, fetch.CodeWARC} {
		if msg == code || strings.HasPrefix(msg, code+":") {
			return true
		}
	}
	return false
}

// isRobots tells a robots.txt URL: fetch archives the robots.txt it reads,
// and no record points at it.
func isRobots(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Path == "/robots.txt"
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

// syncEvery wraps cfg's emitters so that a goroutine commits the WARC file
// and then the record file to stable storage after records are written, at
// most once every interval (0: as soon as it can; a group commit, since the
// records written during one fsync are committed by the next). A negative
// interval syncs nothing until the run ends. The returned function stops it
// and reports the first error.
func (r *resumption) syncEvery(interval time.Duration, w *warc.Writer, cfg *fetch.Config) func() error {
	if interval < 0 {
		return func() error { return nil }
	}
	dirty := make(chan struct{}, 1)
	stop := make(chan struct{})
	done := make(chan error, 1)
	mark := func() {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	emit, emitRaw := cfg.Emit, cfg.EmitRaw
	cfg.Emit = func(rec *record.Record) error {
		err := emit(rec)
		mark()
		return err
	}
	if emitRaw != nil {
		cfg.EmitRaw = func(line []byte) error {
			err := emitRaw(line)
			mark()
			return err
		}
	}
	go func() {
		var first error
		for {
			select {
			case <-stop:
				done <- first
				return
			case <-dirty:
			}
			if w != nil {
				if err := w.Sync(); err != nil && first == nil {
					first = err
				}
			}
			if err := r.file.Sync(); err != nil && first == nil {
				first = err
			}
			if interval > 0 {
				select {
				case <-stop:
					done <- first
					return
				case <-time.After(interval):
				}
			}
		}
	}()
	return func() error {
		close(stop)
		return <-done
	}
}
