package clikit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/record"
)

// echoApp copies its input records to stdout and marks each with "seen".
func echoApp() *cli.App {
	app := New("echo", "copies records", "echo [FILE...]")
	app.Flags = append(InputFlags(), TSVFlag)
	app.Action = func(c *cli.Context) error {
		in, err := Input(c)
		if err != nil {
			return err
		}
		out := Output(c)
		return in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
			if strings.Contains(r.URL(), "reject") {
				return r.Errorf("rejected")
			}
			r.SetBool("seen", true)
			return out.Write(r)
		})
	}
	shared := &cli.StringFlag{Name: "state", Required: true}
	app.Commands = []*cli.Command{
		{Name: "fail", Action: func(*cli.Context) error { return errors.New("boom") }},
		{Name: "need", Usage: "needs --state", Flags: []cli.Flag{shared},
			Action: func(c *cli.Context) error { _, err := c.App.Writer.Write([]byte(c.String("state") + "\n")); return err }},
		{Name: "also", Flags: []cli.Flag{shared}, Action: func(*cli.Context) error { return nil }},
	}
	return app
}

func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(echoApp(), append([]string{"echo"}, args...), Env{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr})
	return code, stdout.String(), stderr.String()
}

func TestExitCodes(t *testing.T) {
	if code, out, _ := run(t, "http://a/\n"); code != 0 || out != "{\"url\":\"http://a/\",\"seen\":true}\n" {
		t.Errorf("ok run: %d %q", code, out)
	}
	if code, out, errs := run(t, "http://a/reject\nhttp://b/\n"); code != 0 || !strings.Contains(out, "http://b/") || !strings.Contains(errs, "echo: line 1: rejected") {
		t.Errorf("bad line without --strict: %d %q %q", code, out, errs)
	}
	if code, out, errs := run(t, "http://b/\nhttp://a/reject\nhttp://c/\n", "--strict"); code != ExitFailure || strings.Contains(out, "http://c/") || !strings.Contains(errs, "line 2") {
		t.Errorf("--strict: %d %q %q", code, out, errs)
	}
	if code, _, errs := run(t, "", "--nope"); code != ExitUsage || !strings.Contains(errs, "--help") {
		t.Errorf("unknown flag: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", "--shard", "5/2"); code != ExitUsage || !strings.Contains(errs, "shard") {
		t.Errorf("bad shard: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", filepath.Join(t.TempDir(), "missing")); code != ExitFailure || !strings.Contains(errs, "missing") {
		t.Errorf("missing file: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", "fail"); code != ExitFailure || errs != "echo: boom\n" {
		t.Errorf("failing command: %d %q", code, errs)
	}
	if code, out, _ := run(t, "", "--version"); code != 0 || !strings.Contains(out, Version) {
		t.Errorf("--version: %d %q", code, out)
	}
}

// Every subcommand answers --version; a missing required flag is one line
// on stderr (never stdout, where it would flow into the next tool) naming
// the flag and the command's help, and exits 2, also for a flag shared by
// two commands.
func TestSubcommandVersionAndRequiredFlags(t *testing.T) {
	for _, sub := range []string{"fail", "need", "also"} {
		if code, out, errs := run(t, "", sub, "--version"); code != 0 || out != "echo version "+Version+"\n" || errs != "" {
			t.Errorf("%s --version: %d %q %q", sub, code, out, errs)
		}
	}
	for _, sub := range []string{"need", "also"} {
		code, out, errs := run(t, "", sub)
		want := "echo " + sub + `: Required flag "state" not set; see 'echo ` + sub + " --help'\n"
		if code != ExitUsage || out != "" || errs != want {
			t.Errorf("%s without --state: %d stdout %q stderr %q", sub, code, out, errs)
		}
	}
	if code, out, errs := run(t, "", "need", "--state", "s.db"); code != 0 || out != "s.db\n" {
		t.Errorf("need --state: %d %q %q", code, out, errs)
	}
}

// A signal that arrives after the input is read, while the tool finishes its
// work, still ends the run with status 143 (128 + SIGTERM).
func TestSignalAfterInputExits143(t *testing.T) {
	app := New("late", "", "")
	app.Action = func(c *cli.Context) error {
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			return err
		}
		select { // the work after the input: it ends normally
		case <-c.Context.Done():
		case <-time.After(5 * time.Second):
			return errors.New("no cancellation after SIGTERM")
		}
		return nil
	}
	var stdout, stderr bytes.Buffer
	code := Run(app, []string{"late"}, Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	if code != ExitTerminated || !strings.Contains(stderr.String(), "late: interrupted") {
		t.Errorf("exit %d, stderr %q; want %d and interrupted", code, stderr.String(), ExitTerminated)
	}
}

// A closed pipe on stdout is normal use (`tool | head`): exit 0, no message.
func TestBrokenPipeIsQuiet(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	var stderr bytes.Buffer
	big := strings.Repeat("http://example.com/a/b/c\n", 20000)
	code := Run(echoApp(), []string{"echo"}, Env{Stdin: strings.NewReader(big), Stdout: w, Stderr: &stderr})
	w.Close()
	if code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestInputSize(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("123"), 0o644)
	os.WriteFile(b, []byte("45"), 0o644)
	if got := InputSize([]string{a, b}); got != 5 {
		t.Errorf("InputSize = %d", got)
	}
	if got := InputSize(nil); got != -1 {
		t.Errorf("InputSize(stdin) = %d", got)
	}
}

func TestLateFlagsAreRead(t *testing.T) {
	app := echoApp()
	app.Commands = append(app.Commands, &cli.Command{Name: "count", Flags: []cli.Flag{
		&cli.IntFlag{Name: "n"}, &cli.BoolFlag{Name: "header"}}})
	for _, tc := range []struct{ in, want string }{
		{"echo a.txt --strict", "echo --strict a.txt"},
		{"echo --strict a.txt", "echo --strict a.txt"},
		{"echo a.txt --shard 1/2 b.txt", "echo --shard 1/2 a.txt b.txt"},
		{"echo a.txt --shard=1/2", "echo --shard=1/2 a.txt"},
		{"echo --strict count x.txt --n 5 --header y.txt", "echo --strict count --n 5 --header x.txt y.txt"},
		{"echo count x.txt -- --n 5", "echo count x.txt -- --n 5"},
		{"echo a.txt - --tsv", "echo --tsv a.txt -"},
		{"echo --header --strict count x.txt", "echo --strict count --header x.txt"},
		{"echo --n 5 count", "echo count --n 5"},
	} {
		if got := strings.Join(permute(app, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("permute(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// End to end: a file named before --strict still runs strictly.
	dir := t.TempDir()
	f := filepath.Join(dir, "in.txt")
	os.WriteFile(f, []byte("http://a/reject\nhttp://b/\n"), 0o644)
	if code, out, _ := run(t, "", f, "--strict"); code != ExitFailure || out != "" {
		t.Errorf("late --strict ignored: exit %d, out %q", code, out)
	}
}

func TestProfilesFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	cpu, heap := filepath.Join(dir, "cpu.out"), filepath.Join(dir, "heap.out")
	t.Setenv("CRAWLKIT_CPUPROFILE", cpu)
	t.Setenv("CRAWLKIT_MEMPROFILE", heap)
	if code, _, stderr := run(t, `{"url":"http://a.test/"}`+"\n"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{cpu, heap} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// pprof's format is gzipped protobuf
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not a pprof profile (%d bytes)", p, len(b))
		}
	}
	t.Setenv("CRAWLKIT_CPUPROFILE", filepath.Join(dir, "%n.cpu"))
	if code, _, stderr := run(t, `{"url":"http://a.test/"}`+"\n"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("echo.%d.cpu", os.Getpid()))); err != nil {
		t.Errorf("%%n is not the tool and its process: %v", err)
	}
	t.Setenv("CRAWLKIT_CPUPROFILE", filepath.Join(dir, "missing", "cpu.out"))
	t.Setenv("CRAWLKIT_MEMPROFILE", "")
	code, _, stderr := run(t, `{"url":"http://a.test/"}`+"\n")
	if code != 0 || !strings.Contains(stderr, "CRAWLKIT_CPUPROFILE:") {
		t.Errorf("an unwritable profile: exit %d, stderr %q; want the run to go on with a warning", code, stderr)
	}
}

func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"html", []string{"html"}},
		{"html, pdf,", []string{"html", "pdf"}},
		{" , ,bfs ,  shark", []string{"bfs", "shark"}},
	} {
		if got := SplitList(c.in); !slices.Equal(got, c.want) {
			t.Errorf("SplitList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// ReportCompaction: a line when a state was compacted, a warning when it
// was not or its reopening failed, nothing when it was not sparse.
func TestReportCompaction(t *testing.T) {
	done := boltstate.Compaction{Done: true, Before: 3 << 30, Free: 1 << 30, After: 2 << 30, Took: 1500 * time.Millisecond}
	for _, tc := range []struct {
		c    boltstate.Compaction
		err  error
		want string
	}{
		{boltstate.Compaction{}, nil, ""},
		{done, nil, "recrawl update: compacted S: 3072 MB (1024 MB of it free pages) to 2048 MB in 1.5 s\n"},
		{boltstate.Compaction{}, errors.New("no space left on device"), "recrawl update: warning: S not compacted (the batch is applied, the state as it was): no space left on device\n"},
		{done, errors.New("locked"), "recrawl update: warning: compacted S: 3072 MB (1024 MB of it free pages) to 2048 MB in 1.5 s, but: locked (the batch is applied)\n"},
	} {
		var b strings.Builder
		ReportCompaction(&b, "recrawl update", "S", tc.c, tc.err)
		if b.String() != tc.want {
			t.Errorf("%+v, %v: %q, want %q", tc.c, tc.err, b.String(), tc.want)
		}
	}
}

// A word near a command's name that is no file is a mistyped command; a
// file of that name is read.
func TestDidYouMean(t *testing.T) {
	code, out, errs := run(t, "", "nede", "--state", "x")
	if code != ExitUsage || out != "" || errs != "echo: unknown command \"nede\"; did you mean \"need\"?; see 'echo --help'\n" {
		t.Errorf("nede: %d %q %q", code, out, errs)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("nede", []byte("http://a/\n"), 0o644)
	if code, out, errs := run(t, "", "nede"); code != 0 || !strings.Contains(out, "http://a/") {
		t.Errorf("a file named like a command: %d %q %q", code, out, errs)
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"segmnts", "segments", 1}, {"serach", "search", 1}, {"", "abc", 3}, {"abc", "abc", 0}, {"fetch", "sitemaps", 7}} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

// An http(s) URL argument is a URL record, not a file name.
func TestURLArgument(t *testing.T) {
	code, out, errs := run(t, "", "http://a.test/p.html", "HTTPS://b.test/")
	if code != 0 || out != "{\"url\":\"http://a.test/p.html\",\"seen\":true}\n{\"url\":\"HTTPS://b.test/\",\"seen\":true}\n" {
		t.Errorf("URL arguments: %d %q %q", code, out, errs)
	}
}

// The completion scripts and the manual page are made from the app.
func TestDocCommands(t *testing.T) {
	for shell, want := range map[string]string{"bash": "complete -o bashdefault -o default -F _echo_complete echo", "zsh": "compdef _echo echo"} {
		if code, out, errs := run(t, "", "completion", shell); code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: %d %q %q", shell, code, out, errs)
		}
	}
	if code, _, errs := run(t, "", "completion", "fish"); code != ExitUsage || !strings.Contains(errs, "bash or zsh") {
		t.Errorf("completion fish: %d %q", code, errs)
	}
	code, out, errs := run(t, "", "man")
	if code != 0 || !strings.Contains(out, ".TH echo 1\n") || !strings.Contains(out, "need") {
		t.Errorf("man: %d %q %q", code, out, errs)
	}
}

// A flag before a command that does not take it is refused; one it takes
// is moved to it.
func TestStrayFlags(t *testing.T) {
	code, _, errs := run(t, "", "--tsv", "need", "--state", "x")
	if code != ExitUsage || errs != "echo need: --tsv is a flag of 'echo', not of 'echo need'; see 'echo need --help'\n" {
		t.Errorf("--tsv need: %d %q", code, errs)
	}
	if code, out, errs := run(t, "", "--state", "s.db", "need"); code != 0 || out != "s.db\n" {
		t.Errorf("--state s.db need: %d %q %q", code, out, errs)
	}
}

// The ballast is allocated at the first collection after it is armed.
func TestBallastAtFirstCollection(t *testing.T) {
	ballast.Store(nil)
	armed.Store(false)
	armBallast()
	for i := 0; i < 100 && ballast.Load() == nil; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if b := ballast.Load(); b == nil || len(*b) != gcBallast {
		t.Fatalf("no ballast of %d bytes after collections", gcBallast)
	}
}
