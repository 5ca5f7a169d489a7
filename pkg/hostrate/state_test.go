package hostrate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// busy builds an estimator whose hosts have every kind of state.
func busy(t *testing.T, clk *fakeClock) *Estimator {
	e := New(Config{Initial: 4, DeadAfter: 2, Rest: time.Minute, Clock: clk})
	obs := func(h string, status int, kind ErrKind) {
		e.Observe(Observation{Host: h, Start: clk.t, Latency: 20 * time.Millisecond, Status: status, Err: kind})
		clk.t = clk.t.Add(time.Second)
	}
	obs("a.test", 200, ErrNone)
	obs("b.test", 503, ErrNone)
	obs("dead.test", 0, ErrTimeout)
	obs("dead.test", 0, ErrRefused)
	e.Pin("pinned.test", 2.5)
	e.Pin("off.test", 0)
	e.SetCrawlDelay("slow.test:8080", 3*time.Second)
	return e
}

func TestStateRoundTrip(t *testing.T) {
	clk := &fakeClock{t: t0}
	e := busy(t, clk)
	path := filepath.Join(t.TempDir(), "hosts.state")
	if err := e.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, Config{Initial: 4, DeadAfter: 2, Rest: time.Minute, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	a, b := e.Hosts(), got.Hosts()
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("round trip changed the hosts:\n%v\n%v", a, b)
	}
	// The state is live, not just printed: the rest, the pin to 0 and the
	// Crawl-delay act after loading.
	var he *HostError
	if _, err := got.Reserve("dead.test"); !errors.As(err, &he) || he.Code != CodeResting {
		t.Errorf("dead.test after load: %v", err)
	}
	if _, err := got.Reserve("off.test"); !errors.As(err, &he) || he.Code != CodePinned {
		t.Errorf("off.test after load: %v", err)
	}
	if r := got.Rate("slow.test:8080"); r != 1.0/3 {
		t.Errorf("slow.test:8080 rate %v after load, want 1/3", r)
	}
	if r := got.Rate("b.test"); r != 2 {
		t.Errorf("b.test rate %v after load, want 2", r)
	}
	// No temporary file is left beside it.
	if m, _ := filepath.Glob(path + ".tmp*"); len(m) != 0 {
		t.Errorf("left %v", m)
	}
	// A missing file is a fresh start.
	if e, err := Load(filepath.Join(t.TempDir(), "none"), Config{}); err != nil || len(e.Hosts()) != 0 {
		t.Errorf("missing file: %v, %d hosts", err, len(e.Hosts()))
	}
}

func TestCorruptState(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"empty":      "",
		"garbage":    "\x00\x01not json",
		"truncated":  `{"version":1,"hosts":{"a.test":{"rate":2`,
		"version":    `{"version":2,"hosts":{}}`,
		"no version": `{"hosts":{}}`,
		"negative":   `{"version":1,"hosts":{"a.test":{"rate":-1}}}`,
		"zero rate":  `{"version":1,"hosts":{"a.test":{"rate":0}}}`,
		"pin":        `{"version":1,"hosts":{"a.test":{"rate":1,"pinned":-2}}}`,
		"unknown":    `{"version":1,"hosts":{"a.test":{"rate":1,"rte":2}}}`,
		"trailing":   `{"version":1,"hosts":{}} {}`,
		"null host":  `{"version":1,"hosts":{"a.test":null}}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".state")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, Config{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Load gave %v, want an error naming %s", name, err, path)
		}
	}
}

// A failure between writing the new file and renaming it leaves the old
// file whole and no temporary file.
func TestSaveFailureKeepsOldFile(t *testing.T) {
	clk := &fakeClock{t: t0}
	path := filepath.Join(t.TempDir(), "hosts.state")
	old := New(Config{Clock: clk})
	old.Pin("old.test", 1)
	if err := old.Save(path); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	beforeRename = func() error { return errors.New("disk gone") }
	defer func() { beforeRename = func() error { return nil } }()
	if err := busy(t, clk).Save(path); err == nil {
		t.Fatal("Save succeeded through a failure")
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("the old file changed")
	}
	if m, _ := filepath.Glob(path + ".tmp*"); len(m) != 0 {
		t.Errorf("left %v", m)
	}
}

// A process killed (SIGKILL) while saving, again and again, leaves a file
// that loads, holding one complete state.
func TestKillDuringSave(t *testing.T) {
	if path := os.Getenv("HOSTRATE_SAVE_LOOP"); path != "" {
		saveLoop(path)
		return
	}
	path := filepath.Join(t.TempDir(), "hosts.state")
	replaced := false // some kill came after a save had replaced an older one
	for round := range 6 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringSave$")
		cmd.Env = append(os.Environ(), "HOSTRATE_SAVE_LOOP="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it at a different moment each round, once it has replaced
		// the file at least once since it started (so kills land among
		// renames, whatever the machine's speed).
		first, _ := os.ReadFile(path)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(path); err == nil && len(b) > 0 && !bytes.Equal(b, first) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(time.Duration(7*round) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		e, err := Load(path, Config{})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// Every save holds 2000 hosts with the same rate: a mix would show.
		hosts := e.Hosts()
		if len(hosts) != 2000 {
			t.Fatalf("round %d: %d hosts, want 2000", round, len(hosts))
		}
		for _, h := range hosts {
			if h.Rate != hosts[0].Rate {
				t.Fatalf("round %d: rates %v and %v in one file", round, hosts[0].Rate, h.Rate)
			}
		}
		t.Logf("round %d: a complete state with rate %v", round, hosts[0].Rate)
		replaced = replaced || hosts[0].Rate > 1 // the loop restarts at 1 each round
	}
	if !replaced {
		t.Fatal("every kill came before a second save: the test did not kill a process replacing a file")
	}
}

// saveLoop saves states of 2000 hosts, a new rate each time, until killed.
func saveLoop(path string) {
	for i := 1; ; i++ {
		e := New(Config{Ceiling: 1e9})
		for h := range 2000 {
			e.Pin(fmt.Sprintf("host-%04d.test", h), float64(i))
		}
		if err := e.Save(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func TestReadPins(t *testing.T) {
	pins, err := ReadPins(strings.NewReader("# host rate\n\nBig.example\t5\nsmall.example 30/h\nday.example  8640/d\nmin.example 6/m\noff.example\t0\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"big.example": 5, "small.example": 30.0 / 3600, "day.example": 0.1, "min.example": 0.1, "off.example": 0}
	if fmt.Sprint(pins) != fmt.Sprint(want) {
		t.Fatalf("pins %v, want %v", pins, want)
	}
	for _, bad := range []string{"a.test", "a.test 1 2", "a.test -1", "a.test 1/w", "a.test NaN", "a.test Inf", "a.test x"} {
		if _, err := ReadPins(strings.NewReader("# ok\n" + bad + "\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: %v, want an error on line 2", bad, err)
		}
	}
	path := filepath.Join(t.TempDir(), "pins.tsv")
	os.WriteFile(path, []byte("a.test\tfast\n"), 0o644)
	if _, err := ReadPinsFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadPinsFile: %v, want the path in the error", err)
	}
}

// WriteHostRates writes what recrawl --host-rates reads (that recrawl
// accepts the file is checked in pkg/recrawlcli, which imports this
// package).
func TestHostRatesForRecrawl(t *testing.T) {
	clk := &fakeClock{t: t0}
	e := busy(t, clk)
	var buf bytes.Buffer
	if err := e.WriteHostRates(&buf); err != nil {
		t.Fatal(err)
	}
	// Limits per day: a.test kept 4/s with no limit known, planned at the
	// next slow-start step, 6/s; b.test was halved to 2/s a few seconds
	// ago (its known limit 4), so its average is still near 4, planned 5%
	// beyond; dead.test rests: its average alone; the pin and the
	// Crawl-delay are exact.
	got := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "# off.test\t0 do not crawl" {
			got["off.test"] = 0
			continue
		}
		var h string
		var r float64
		if _, err := fmt.Sscanf(line, "%s\t%g", &h, &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[h] = r
	}
	for h, want := range map[string][2]float64{"a.test": {518400, 518400}, "b.test": {1.05 * 172800, 1.05 * 345600}, "dead.test": {172800, 345600},
		"pinned.test": {216000, 216000}, "slow.test:8080": {28800, 28800}, "off.test": {0, 0}} {
		if r, ok := got[h]; !ok || r < want[0]*0.9999 || r > want[1]*1.0001 {
			t.Errorf("%s: %v crawls a day, want %v..%v\n%s", h, r, want[0], want[1], buf.String())
		}
	}
	dir := t.TempDir()
	rates := filepath.Join(dir, "rates.tsv")
	if err := e.WriteHostRatesFile(rates); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(rates); !bytes.Equal(b, buf.Bytes()) {
		t.Fatalf("WriteHostRatesFile wrote\n%s\nwant\n%s", b, buf.Bytes())
	}
}
