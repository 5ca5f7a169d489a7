package hostrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// StateVersion is the version of the state file format Save writes.
const StateVersion = 1

// stateFile is the state file: {"version":1,"hosts":{"a.test":{...}}}.
type stateFile struct {
	Version int                   `json:"version"`
	Hosts   map[string]*hostState `json:"hosts"`
}

// Load returns an Estimator with the state saved at path; a missing file
// gives an empty one. A file that is not a valid state file is an error
// naming the path (nothing is guessed from it).
func Load(path string, cfg Config) (*Estimator, error) {
	e := New(cfg)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return nil, err
	}
	var sf stateFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sf); err != nil {
		return nil, fmt.Errorf("hostrate: %s: corrupt state file: %v", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("hostrate: %s: corrupt state file: data after the end", path)
	}
	if sf.Version != StateVersion {
		return nil, fmt.Errorf("hostrate: %s: state file version %d, want %d", path, sf.Version, StateVersion)
	}
	for name, h := range sf.Hosts {
		if h == nil || key(name) == "" || !finite(h.Rate) || h.Rate <= 0 || !finite(h.Limit) || h.Limit < 0 ||
			!finite(h.BaselineMS) || h.BaselineMS < 0 || h.Failures < 0 || h.Rests < 0 ||
			!finite(h.CrawlDelayS) || h.CrawlDelayS < 0 || !finite(h.Smooth) || h.Smooth < 0 || (h.Pinned != nil && (!finite(*h.Pinned) || *h.Pinned < 0)) {
			return nil, fmt.Errorf("hostrate: %s: corrupt state file: host %q has an impossible value", path, name)
		}
		h.Rate = e.clamp(h, h.Rate)
		e.hosts[key(name)] = h
	}
	return e, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Save writes the state to path atomically: to a temporary file beside it,
// fsynced, renamed over path, and the directory fsynced, so that a crash at
// any point leaves either the old file or the new one.
func (e *Estimator) Save(path string) error {
	e.mu.Lock()
	data, err := json.MarshalIndent(stateFile{Version: StateVersion, Hosts: e.hosts}, "", " ")
	e.mu.Unlock()
	if err != nil {
		return err
	}
	return writeAtomic(path, append(data, '\n'))
}

// beforeRename is a test hook: a failure between the write and the rename.
var beforeRename = func() error { return nil }

func writeAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := beforeRename(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename itself durable; some file systems refuse, which is not an error here
		d.Close()
	}
	return nil
}

// ReadPins reads a pins file: one host and rate per line, separated by a tab
// or spaces; blank lines and lines starting with # are skipped. The rate is
// requests per second, or a number with a unit: "/s", "/m", "/h", "/d" (per
// second, minute, hour, day); 0 means do not crawl the host. Errors name the
// line.
//
//	# host        rate
//	big.example   5
//	small.example 30/h
//	private.example 0
func ReadPins(r io.Reader) (map[string]float64, error) {
	pins := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want host<TAB>rate, got %s", n, short(line))
		}
		rate, err := parseRate(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		pins[key(f[0])] = rate
	}
	return pins, sc.Err()
}

// ReadPinsFile is ReadPins on a named file; errors carry the name.
func ReadPinsFile(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pins, err := ReadPins(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return pins, nil
}

func parseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(s, "/")
	per := 1.0
	switch unit {
	case "", "s":
	case "m":
		per = 60
	case "h":
		per = 3600
	case "d":
		per = 86400
	default:
		return 0, fmt.Errorf("rate %s: unit must be /s, /m, /h or /d", short(s))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !finite(v) || v < 0 {
		return 0, fmt.Errorf("rate %s: want a number >= 0", short(s))
	}
	return v / per, nil
}

// WriteHostRates writes Limits in the format recrawl --host-rates reads
// (pkg/recrawlcli readHostRates): host<TAB>crawls per day, one host a line,
// sorted. recrawl refuses a rate of 0, so hosts that must not be crawled are
// written as comment lines ("# host<TAB>0 do not crawl"), which it skips;
// the loop must drop those hosts' pages itself.
func (e *Estimator) WriteHostRates(w io.Writer) error {
	rates := e.Limits()
	hosts := make([]string, 0, len(rates))
	for h := range rates {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	bw := bufio.NewWriter(w)
	for _, h := range hosts {
		if r := rates[h]; r > 0 {
			fmt.Fprintf(bw, "%s\t%s\n", h, strconv.FormatFloat(r, 'g', 6, 64))
		} else {
			fmt.Fprintf(bw, "# %s\t0 do not crawl\n", h)
		}
	}
	return bw.Flush()
}

// WriteHostRatesFile writes WriteHostRates's lines to path atomically (as
// Save), for recrawl --host-rates path.
func (e *Estimator) WriteHostRatesFile(path string) error {
	var b bytes.Buffer
	if err := e.WriteHostRates(&b); err != nil {
		return err
	}
	return writeAtomic(path, b.Bytes())
}
