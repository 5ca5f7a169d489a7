package report

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/hostrate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
)

// ReadCrawl reads a crawl directory of scripts/crawl-cycle.sh: every
// shard's recrawl state (DIR/state/recrawl.db, or recrawl.I.db with
// SHARDS=N), their host-rate estimates (host-rates[.I].json, when fetch
// keeps them), DIR/good.txt when present (unless opt.Good is set), the
// kept turns' directories (DIR/batches/ID: fetched.ndjson or
// fetch-stats.tsv, candidates.ndjson, deferred.ndjson) and the cycle log
// (DIR/logs/cycle.log: each step's time). What cannot be read is a
// problem of the report, naming its path; the rest is reported. Only a
// directory that does not exist is an error. pins, when not nil, are host
// rates set by hand (fetch --pins).
func ReadCrawl(dir string, opt Options, pins map[string]float64) (*Report, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	r := New(opt)
	r.Dir = dir
	stateDir := filepath.Join(dir, "state")
	n, err := shardCount(stateDir)
	if err != nil {
		r.problem("%v", err)
	}
	var states []State
	opt.Hosts = nil
	for i := 0; i < n; i++ {
		path := filepath.Join(stateDir, "recrawl.db")
		rates := filepath.Join(stateDir, "host-rates.json")
		var shard record.Shard
		if n > 1 {
			path = filepath.Join(stateDir, fmt.Sprintf("recrawl.%d.db", i))
			rates = filepath.Join(stateDir, fmt.Sprintf("host-rates.%d.json", i))
			shard = record.Shard{I: i, N: n}
		}
		if _, err := os.Stat(rates); err == nil {
			e, err := hostrate.Load(rates, hostrate.Config{Clock: At(r.Now)})
			if err != nil {
				r.problem("%v", err)
			} else {
				if pins != nil {
					e.SetPins(pins)
				}
				opt.Hosts = append(opt.Hosts, e)
			}
		}
		if _, err := os.Stat(path); err != nil {
			r.problem("state %v", err)
			continue
		}
		q, err := queue.Open(path, queue.Options{Shard: shard, ReadOnly: true})
		if err != nil {
			r.problem("%s", stateErr(path, err))
			continue
		}
		defer q.Close()
		states = append(states, State{Path: path, Queue: q})
	}
	if opt.Good == nil {
		good := filepath.Join(dir, "good.txt")
		if g, err := ReadGood(good); err == nil {
			opt.Good = g
		} else if !errors.Is(err, fs.ErrNotExist) {
			r.problem("%v", err)
		}
	}
	if err := r.AddStates(states, opt); err != nil {
		return nil, err
	}
	r.addBatches(filepath.Join(dir, "batches"))
	r.addLog(filepath.Join(dir, "logs", "cycle.log"))
	r.hostTotals()
	return r, nil
}

// shardCount is the crawl's SHARDS: DIR/state/shards, else the states
// found.
func shardCount(stateDir string) (int, error) {
	path := filepath.Join(stateDir, "shards")
	data, err := os.ReadFile(path)
	if err == nil {
		n, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || n < 1 {
			return 1, fmt.Errorf("%s: %q is not a number of shards", path, strings.TrimSpace(string(data)))
		}
		return n, nil
	}
	if _, err := os.Stat(filepath.Join(stateDir, "recrawl.db")); err == nil {
		return 1, nil
	}
	if m, _ := filepath.Glob(filepath.Join(stateDir, "recrawl.*.db")); len(m) > 0 {
		return len(m), nil
	}
	return 0, fmt.Errorf("%s: no recrawl state and no shards file: not a crawl directory of scripts/crawl-cycle.sh, or no turn has run", stateDir)
}

// batchID is a turn's directory name: 000012-20261123T110000Z.
var batchID = regexp.MustCompile(`^[0-9]+-([0-9]{8}T[0-9]{6}Z)$`)

// turn returns the report's turn of a batch, adding one (at the time its
// name says) for a batch no state has recorded (a turn under way).
func (r *Report) turn(id string) *Turn {
	i := sort.Search(len(r.History), func(i int) bool { return r.History[i].Batch >= id })
	if i < len(r.History) && r.History[i].Batch == id {
		return &r.History[i]
	}
	t := Turn{HistoryEntry: queue.HistoryEntry{Batch: id, Observed: -1}}
	if m := batchID.FindStringSubmatch(id); m != nil {
		t.Time, _ = time.Parse("20060102T150405Z", m[1])
	}
	r.History = append(r.History, Turn{})
	copy(r.History[i+1:], r.History[i:])
	r.History[i] = t
	return &r.History[i]
}

// addBatches reads the kept turns' directories.
func (r *Report) addBatches(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem("%v", err)
		}
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !batchID.MatchString(e.Name()) {
			continue
		}
		b := filepath.Join(dir, e.Name())
		s := &BatchStats{}
		_, err := os.Stat(filepath.Join(b, "DONE"))
		s.Done = err == nil
		read := false
		if ok, err := r.readFetched(filepath.Join(b, "fetched.ndjson"), s); err != nil {
			r.problem("%v", err)
		} else if ok {
			read = true
		} else if ok, err := readFetchStats(filepath.Join(b, "fetch-stats.tsv"), s); err != nil {
			r.problem("%v", err)
		} else if ok {
			read = true
		}
		for _, f := range []struct {
			name string
			fn   func(*record.Record)
		}{
			{"candidates.ndjson", func(rec *record.Record) {
				s.Candidates++
				if rec.Has("last_fetch") {
					s.Due++
				} else {
					s.New++
				}
			}},
			{"deferred.ndjson", func(*record.Record) { s.Deferred++ }},
		} {
			ok, err := eachRecord(filepath.Join(b, f.name), f.fn)
			if err != nil {
				r.problem("%v", err)
			}
			read = read || ok
		}
		if read {
			r.turn(e.Name()).Files = s
		}
	}
}

// eachRecord calls fn for each record of an NDJSON file; false: no file.
func eachRecord(path string, fn func(*record.Record)) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	lr := record.NewLineReader(f)
	rec := &record.Record{}
	bad := 0
	var first error
	for {
		line, n, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return true, fmt.Errorf("%s: %v", path, err)
		}
		if len(line) == 0 {
			continue
		}
		if err := record.ParseInto(rec, line); err != nil {
			if bad++; first == nil {
				first = fmt.Errorf("%s: line %d: %v", path, n, err)
			}
			continue
		}
		fn(rec)
	}
	if bad > 1 {
		return true, fmt.Errorf("%v (and %d more bad lines)", first, bad-1)
	}
	return true, first
}

// readFetched counts a turn's fetch records by outcome and host.
func (r *Report) readFetched(path string, s *BatchStats) (bool, error) {
	hosts := r.hostMap()
	return eachRecord(path, func(rec *record.Record) {
		s.Records++
		ok, bytes := classify(rec, &s.Outcomes)
		s.Bytes += bytes
		host, _ := rec.String("host")
		if host == "" {
			host = hostOfURL(rec.URL())
		}
		h := hosts[host]
		if h == nil {
			r.Hosts = append(r.Hosts, Host{Host: host, Shard: -1})
			hosts = r.hostMap()
			h = hosts[host]
		}
		h.Tries++
		h.Bytes += bytes
		if !ok {
			h.Failures++
		}
	})
}

func (r *Report) hostMap() map[string]*Host {
	m := make(map[string]*Host, len(r.Hosts))
	for i := range r.Hosts {
		m[r.Hosts[i].Host] = &r.Hosts[i]
	}
	return m
}

// hostTotals puts the hosts back in name order.
func (r *Report) hostTotals() {
	sort.Slice(r.Hosts, func(i, j int) bool { return r.Hosts[i].Host < r.Hosts[j].Host })
}

func hostOfURL(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.ToLower(rest)
}

// classify counts a fetch record's outcome: whether it brought a page,
// and its bytes. A 4xx or 5xx status counts as such, error or not.
func classify(rec *record.Record, o *Outcomes) (bool, int64) {
	st, _, _ := rec.Float("status")
	switch {
	case st >= 400 && st < 500:
		o.Client++
		return false, 0
	case st >= 500 && st < 600:
		o.Server++
		return false, 0
	}
	if msg, _ := rec.String("error"); msg != "" {
		code, _, _ := strings.Cut(msg, ":")
		switch strings.TrimSpace(code) {
		case "robots":
			o.Robots++
		case "resting", "pinned":
			o.Resting++
		case "timeout":
			o.Timeout++
		default:
			o.Other++
		}
		return false, 0
	}
	n, _, _ := rec.Float("length")
	switch {
	case st == 304:
		o.NotModified++
	case st >= 200 && st < 300:
		o.OK++
	case st >= 300 && st < 400:
		o.Redirect++
	default:
		o.Other++
		return false, 0
	}
	return true, int64(n)
}

// readFetchStats reads fetch stats' counts when the batch's records are
// gone: the pages fetched count as 2xx (the counts do not tell 3xx).
func readFetchStats(path string, s *BatchStats) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	o := &s.Outcomes
	for n := 1; sc.Scan(); n++ {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		c, err := strconv.Atoi(v)
		if !ok || err != nil {
			return true, fmt.Errorf("%s: line %d: want NAME<TAB>COUNT", path, n)
		}
		switch {
		case k == "records":
			s.Records = c
		case k == "fetched":
			o.OK = c
		case k == "failed":
		case k == "error:robots":
			o.Robots += c
		case k == "error:resting" || k == "error:pinned":
			o.Resting += c
		case k == "error:timeout":
			o.Timeout += c
		case strings.HasPrefix(k, "status:4"):
			o.Client += c
		case strings.HasPrefix(k, "status:5"):
			o.Server += c
		default:
			o.Other += c
		}
	}
	return true, sc.Err()
}

var (
	logTurn = regexp.MustCompile(`^\S+ turn (\S+): (start|resume|complete in ([0-9]+) s)$`)
	logStep = regexp.MustCompile(`^\S+ ([a-z][a-z0-9_-]*): took ([0-9.]+) s$`)
)

// addLog reads each step's time from the cycle log.
func (r *Report) addLog(path string) {
	f, err := os.Open(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem("%v", err)
		}
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var cur string
	steps := map[string]map[string]float64{}
	var order = map[string][]string{}
	total := map[string]float64{}
	for sc.Scan() {
		line := sc.Text()
		if m := logTurn.FindStringSubmatch(line); m != nil {
			cur = m[1]
			if m[3] != "" {
				s, _ := strconv.ParseFloat(m[3], 64)
				total[cur] += s
				cur = ""
			}
			continue
		}
		if m := logStep.FindStringSubmatch(line); m != nil && cur != "" {
			s, _ := strconv.ParseFloat(m[2], 64)
			if steps[cur] == nil {
				steps[cur] = map[string]float64{}
			}
			if _, ok := steps[cur][m[1]]; !ok {
				order[cur] = append(order[cur], m[1])
			}
			steps[cur][m[1]] += s
		}
	}
	if err := sc.Err(); err != nil {
		r.problem("%s: %v", path, err)
	}
	ids := make([]string, 0, len(order))
	for id := range order {
		ids = append(ids, id)
	}
	for id := range total {
		if _, ok := order[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !batchID.MatchString(id) {
			continue
		}
		t := r.turn(id)
		t.Steps = t.Steps[:0]
		for _, name := range order[id] {
			t.Steps = append(t.Steps, Step{Name: name, Seconds: steps[id][name]})
		}
		t.Seconds = total[id]
	}
}

// At is a clock stopped at the report's time, for the host-rate
// estimates: a report of the same files at the same time is the same.
type At time.Time

// Now is the time the clock stopped at.
func (a At) Now() time.Time { return time.Time(a) }

// Sleep returns at once: nothing waits on a report's clock.
func (At) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
