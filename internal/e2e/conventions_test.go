package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/pkg/barrelcli"
	"github.com/sekitei/crawlkit/pkg/fetchcli"
	"github.com/sekitei/crawlkit/pkg/opiccli"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
	"github.com/sekitei/crawlkit/pkg/sekiteicli"
	"github.com/sekitei/crawlkit/pkg/urlfeatcli"
)

// command is one command of a tool, as a user types it.
type command struct {
	path     []string // "urlfeat", "sample"
	flags    []cli.Flag
	required []string
	subs     []*cli.Command
	input    bool // reads records: it has --strict
}

func (c command) String() string { return strings.Join(c.path, " ") }

// allCommands lists every tool and every command of each, from the apps'
// own definitions.
func allCommands() []command {
	var out []command
	var walk func(path []string, flags []cli.Flag, subs []*cli.Command)
	walk = func(path []string, flags []cli.Flag, subs []*cli.Command) {
		c := command{path: path, flags: flags, subs: subs}
		for _, f := range flags {
			if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
				c.required = append(c.required, f.Names()[0])
			}
			if f.Names()[0] == "strict" {
				c.input = true
			}
		}
		out = append(out, c)
		for _, s := range subs {
			walk(append(append([]string(nil), path...), s.Name), s.Flags, s.Subcommands)
		}
	}
	for _, app := range []*cli.App{urlfeatcli.App(), sekiteicli.App(), opiccli.App(), recrawlcli.App(), fetchcli.App(), barrelcli.App()} {
		walk([]string{app.Name}, app.Flags, app.Commands)
	}
	return out
}

func hasFlagNamed(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// runTool runs a built tool with stdin and returns its exit status and
// output.
func runTool(t *testing.T, bin string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// TestConventions runs every command of every tool, built as a user builds
// them, through the conventions the README promises.
func TestConventions(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := tools(t, root)
	cmds := allCommands()
	if len(cmds) < 40 {
		t.Fatalf("only %d commands: the apps lost their commands?", len(cmds))
	}
	for _, c := range cmds {
		t.Run(strings.Join(c.path, "_"), func(t *testing.T) {
			name := c.String()
			args := c.path
			if code, out, errs := runTool(t, bin, "", append(args, "--version")...); code != 0 || !strings.HasPrefix(out, c.path[0]+" version ") || errs != "" {
				t.Errorf("%s --version: exit %d, %q %q", name, code, out, errs)
			}
			if code, out, _ := runTool(t, bin, "", append(args, "--help")...); code != 0 || !strings.Contains(out, "USAGE:") {
				t.Errorf("%s --help: exit %d, %q", name, code, out)
			}
			// -v is --verbose where a command has it, never the version.
			if code, out, _ := runTool(t, bin, "", append(args, "-v")...); strings.Contains(out, " version ") {
				t.Errorf("%s -v printed the version (exit %d)", name, code)
			}
			// A bad flag: one line naming it and the command's help.
			want := fmt.Sprintf("see '%s --help'\n", name)
			code, out, errs := runTool(t, bin, "", append(args, "--no-such-flag")...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "no-such-flag") || !strings.HasSuffix(errs, want) {
				t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q; want 2 and one line ending %q", name, code, out, errs, want)
			}
			// The same flag before the command name.
			if len(c.path) > 1 {
				code, _, errs := runTool(t, bin, "", append([]string{c.path[0], "--no-such-flag"}, c.path[1:]...)...)
				if code != 2 || strings.Count(errs, "\n") != 1 {
					t.Errorf("%s with --no-such-flag before the command: exit %d, %q", name, code, errs)
				}
			}
			// A parent's flag before a command that does not take it is
			// refused, not set where the command never reads it.
			if len(c.path) == 2 {
				for _, p := range cmds {
					if len(p.path) != 1 || p.path[0] != c.path[0] {
						continue
					}
					for _, f := range p.flags {
						n := f.Names()[0]
						if n == "help" || n == "version" || hasFlagNamed(c.flags, n) {
							continue
						}
						code, out, errs := runTool(t, bin, "", c.path[0], "--"+n+"=1", c.path[1])
						if code != 2 || out != "" || !strings.Contains(errs, "--"+n+" is a flag of '"+c.path[0]+"', not of '"+name+"'") {
							t.Errorf("%s --%s=1 %s: exit %d, %q %q; want it refused", c.path[0], n, c.path[1], code, out, errs)
						}
						break
					}
				}
			}
			// A missing required flag: one line naming it and the help.
			if len(c.required) > 0 {
				code, out, errs := runTool(t, bin, "", append(args, "--version=false")...)
				if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `"`+c.required[0]) || !strings.HasSuffix(errs, want) {
					t.Errorf("%s without %v: exit %d, stdout %q, stderr %q", name, c.required, code, out, errs)
				}
			}
			if hasFlagNamed(c.flags, "tsv") && !hasFlagNamed(c.flags, "header") {
				t.Errorf("%s has --tsv but no --header", name)
			}
			// A mistyped command: "did you mean", not a file or a flag error.
			for _, s := range c.subs {
				if len(s.Name) < 4 {
					continue
				}
				typo := s.Name[:1] + s.Name[2:3] + s.Name[1:2] + s.Name[3:]
				if typo == s.Name {
					typo = s.Name[:1] + s.Name[2:]
				}
				code, _, errs := runTool(t, bin, "", append(args, typo, "x")...)
				wantMsg := fmt.Sprintf("unknown command %q; did you mean %q?", typo, s.Name)
				if code != 2 || !strings.Contains(errs, wantMsg) || strings.Count(errs, "\n") != 1 {
					t.Errorf("%s %s x: exit %d, %q; want %s", name, typo, code, errs, wantMsg)
				}
			}
		})
	}
	for _, tool := range []string{"urlfeat", "sekitei", "opic", "recrawl", "fetch", "barrel"} {
		t.Run(tool+"_completion_man", func(t *testing.T) {
			for shell, want := range map[string]string{"bash": "complete -o bashdefault -o default -F _" + tool + "_complete " + tool, "zsh": "compdef _" + tool + " " + tool} {
				if code, out, errs := runTool(t, bin, "", tool, "completion", shell); code != 0 || !strings.Contains(out, want) {
					t.Errorf("%s completion %s: exit %d %q %q", tool, shell, code, out, errs)
				}
			}
			code, out, errs := runTool(t, bin, "", tool, "man")
			if code != 0 || !strings.Contains(out, ".TH "+tool+" 1\n") || !strings.Contains(out, "Example") {
				t.Errorf("%s man: exit %d, %d bytes, %q", tool, code, len(out), errs)
			}
			// The README's way: source the script, complete "TOOL s".
			bash := exec.Command("bash", "-c", `source <(`+tool+` completion bash) && COMP_WORDS=(`+tool+` s) COMP_CWORD=1 && _`+tool+`_complete && echo "${COMPREPLY[*]}"`)
			bash.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
			words, err := bash.CombinedOutput()
			for _, c := range cmds {
				if len(c.path) == 2 && c.path[0] == tool && strings.HasPrefix(c.path[1], "s") && !strings.Contains(string(words), c.path[1]) {
					t.Errorf("bash completion of %q: %q (%v), no %s", tool+" s", words, err, c.path[1])
				}
			}
			// What the completion scripts ask: the commands, then a command's flags.
			code, out, _ = runTool(t, bin, "", tool, "--generate-bash-completion")
			for _, c := range cmds {
				if len(c.path) == 2 && c.path[0] == tool && !strings.Contains(out, c.path[1]+"\n") {
					t.Errorf("%s --generate-bash-completion: no %s in %q (exit %d)", tool, c.path[1], out, code)
				}
			}
		})
	}
}

// TestScriptsAnswerHelp: every script under scripts/ prints its usage for
// --help and does nothing else. A script without the check is not run:
// it would do its work.
func TestScriptsAnswerHelp(t *testing.T) {
	root, _ := filepath.Abs("../..")
	scripts, _ := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	if len(scripts) < 10 {
		t.Fatalf("%d scripts", len(scripts))
	}
	for _, s := range scripts {
		src, _ := os.ReadFile(s)
		if !strings.Contains(string(src), "-h | --help)") {
			t.Errorf("%s: no --help", filepath.Base(s))
			continue
		}
		dir := t.TempDir()
		cmd := exec.Command(s, "--help")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Usage:") {
			t.Errorf("%s --help: %v\n%s", filepath.Base(s), err, out)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%s --help made files", filepath.Base(s))
		}
	}
}

// countingSite serves n pages, each after delay, and counts the requests
// for pages (robots.txt aside).
func countingSite(t *testing.T, delay time.Duration) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		n.Add(1)
		time.Sleep(delay)
		fmt.Fprintf(w, "<html><body><a href=\"/next%s\">next</a></body></html>", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// An http(s) URL argument is a URL record in every tool that reads
// records; any other argument is a file.
func TestURLArguments(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := tools(t, root)
	srv, _ := countingSite(t, 0)
	code, out, errs := runTool(t, bin, "", "fetch", "--allow-private", "--delay", "0", srv.URL+"/p.html")
	if code != 0 || !strings.Contains(out, `"url":"`+srv.URL+`/p.html"`) || !strings.Contains(out, `"status":200`) {
		t.Errorf("fetch URL: exit %d %q %q", code, out, errs)
	}
	code, out, errs = runTool(t, bin, "", "urlfeat", "http://a.test/news/1.html")
	if code != 0 || !strings.Contains(out, `"segment_name_0:news"`) {
		t.Errorf("urlfeat URL: exit %d %q %q", code, out, errs)
	}
	code, out, errs = runTool(t, bin, "", "opic", "--tsv", "http://a.test/")
	if code != 0 || !strings.Contains(out, "http://a.test/") {
		t.Errorf("opic URL: exit %d %q %q", code, out, errs)
	}
	code, _, errs = runTool(t, bin, "", "urlfeat", "no-such-file.txt")
	if code != 1 || !strings.Contains(errs, "no-such-file.txt: no such file") {
		t.Errorf("urlfeat FILE: exit %d %q", code, errs)
	}
}

// A flag before a subcommand means what it means after it:
// `fetch --allow-private sitemaps` reaches a loopback site.
func TestFlagsBeforeTheSubcommand(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := tools(t, root)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", srv.URL)
		case "/sitemap.xml":
			fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/a.html</loc></url></urlset>`, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	after, _, errs := run2(t, bin, "fetch", "sitemaps", "--allow-private", "--delay", "0", srv.URL+"/")
	before, _, errs2 := run2(t, bin, "fetch", "--allow-private", "--delay", "0", "sitemaps", srv.URL+"/")
	if !strings.Contains(after, srv.URL+"/a.html") || before != after {
		t.Errorf("fetch sitemaps --allow-private: %q (%s)\nfetch --allow-private sitemaps: %q (%s)", after, errs, before, errs2)
	}
}

func run2(t *testing.T, bin string, args ...string) (string, int, string) {
	code, out, errs := runTool(t, bin, "", args...)
	return out, code, errs
}

// `fetch urls.txt | head -1`: once the reader is gone no request is made,
// and the fetch ends quietly with status 0. Every record-writing tool ends
// that way.
func TestClosedStdoutStopsTheWork(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := tools(t, root)
	srv, served := countingSite(t, 20*time.Millisecond)
	var urls strings.Builder
	for i := range 200 {
		fmt.Fprintf(&urls, "%s/p%d.html\n", srv.URL, i)
	}
	dir := t.TempDir()
	list := filepath.Join(dir, "urls.txt")
	os.WriteFile(list, []byte(urls.String()), 0o644)
	cmd := exec.Command(filepath.Join(bin, "fetch"), "--allow-private", "--delay", "0", "--per-host", "2", list)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, srv.URL) {
		t.Fatalf("first record: %q %v", line, err)
	}
	stdout.Close() // head -1 exits
	closed := time.Now()
	atClose := served.Load()
	err = cmd.Wait()
	took := time.Since(closed)
	time.Sleep(300 * time.Millisecond)
	after := served.Load() - atClose
	t.Logf("fetch | head -1: %d requests before the reader closed, %d after; fetch ended %v after", atClose, after, took.Round(time.Millisecond))
	// fetch's summary stays (the records it did not fetch); no error.
	if err != nil || strings.Contains(stderr.String(), "broken pipe") || strings.Contains(stderr.String(), "fetch: interrupted") {
		t.Errorf("fetch after its reader closed: %v, stderr %q; want exit 0, no error", err, stderr.String())
	}
	if after > 2 || took > time.Second {
		t.Errorf("%d requests made after the reader closed (2 at most were in flight), fetch took %v to stop", after, took)
	}

	big := strings.Repeat("http://a.test/some/path.html\n", 50000)
	for _, args := range [][]string{{"urlfeat"}, {"urlfeat", "--tsv"}, {"sekitei", "assign", "--segments", "/dev/null"}, {"opic"}, {"recrawl", "estimate"}, {"fetch", "stats"}} {
		cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
		cmd.Stdin = strings.NewReader(big)
		r, w, _ := os.Pipe()
		r.Close()
		cmd.Stdout = w
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		w.Close()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("%v into a closed pipe: %v, stderr %q; want exit 0, quiet", args, err, stderr.String())
		}
	}
}

// pty opens a pseudo-terminal: the tool's side and the user's.
func pty(t *testing.T) (tty, user *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return s, m
}

// onTerminal starts a tool with a terminal for stdin, stdout and stderr,
// and returns what the terminal shows, as it comes.
type onTerminal struct {
	cmd  *exec.Cmd
	user *os.File
	mu   sync.Mutex
	seen bytes.Buffer
	done chan struct{}
	code int
}

func startOnTerminal(t *testing.T, bin string, args ...string) *onTerminal {
	t.Helper()
	tty, user := pty(t)
	cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
	cmd.Dir = t.TempDir()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o := &onTerminal{cmd: cmd, user: user, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := user.Read(buf)
			o.mu.Lock()
			o.seen.Write(buf[:n])
			o.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		o.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			o.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				o.code = 128 + int(ws.Signal())
			}
		}
		close(o.done)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-o.done })
	return o
}

func (o *onTerminal) screen() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen.String()
}

// ended waits up to d for the tool to exit.
func (o *onTerminal) ended(d time.Duration) bool {
	select {
	case <-o.done:
		return true
	default:
	}
	select {
	case <-o.done:
		return true
	case <-time.After(d):
		return false
	}
}

// On a terminal: a bare command prints its help instead of waiting; a
// command reading the terminal stops within 0.2 s of Ctrl-C; fetch's
// records appear as they are fetched.
func TestOnATerminal(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := tools(t, root)
	waited := 0
	var slowest time.Duration
	for _, c := range allCommands() {
		t.Run(strings.Join(c.path, "_"), func(t *testing.T) {
			o := startOnTerminal(t, bin, c.path...)
			if !o.ended(3*time.Second) && !c.input {
				t.Logf("%s reads no input and works without it: it runs", c)
				return
			}
			if !o.ended(0) {
				t.Fatalf("%s, bare on a terminal, still runs after 3 s; screen %q", c, o.screen())
			}
			// The terminal's last bytes may still be on their way to us.
			if c.input && (o.code != 2 || !o.waitFor("USAGE:", 2*time.Second)) {
				t.Errorf("%s, bare on a terminal: exit %d, screen %q; want its help and 2", c, o.code, o.screen())
			}
			if !c.input {
				return
			}
			// Reading the terminal explicitly (-): Ctrl-C ends it at once.
			args := append([]string(nil), c.path...)
			dir := t.TempDir()
			for _, r := range c.required {
				args = append(args, "--"+r, filepath.Join(dir, r))
			}
			// The bound is wall-clock time, which a stalled host stretches:
			// a tool is slow only if it is slow on each of three tries (one
			// that waits for anything but the signal is slow every time).
			var tries []time.Duration
			for len(tries) < 3 {
				o = startOnTerminal(t, bin, append(args, "-")...)
				if o.ended(500 * time.Millisecond) {
					return // it stopped before reading (its flags' files are not usable)
				}
				o.user.Write([]byte{3}) // Ctrl-C
				start := time.Now()
				if !o.ended(time.Second) {
					t.Fatalf("%s -: still runs 1 s after Ctrl-C", c)
				}
				took := time.Since(start)
				if o.code != 130 {
					t.Fatalf("%s -: exit %d at Ctrl-C; want 130", c, o.code)
				}
				tries = append(tries, took)
				if took <= 200*time.Millisecond {
					break
				}
			}
			waited++
			took := slices.Min(tries)
			slowest = max(slowest, took)
			if took > 200*time.Millisecond {
				t.Errorf("%s -: Ctrl-C took %v on each of %d tries; want at most 0.2 s", c, tries, len(tries))
			}
		})
	}
	t.Logf("%d commands waited on the terminal and stopped at Ctrl-C, the slowest in %v", waited, slowest.Round(time.Millisecond))
	if waited < 10 {
		t.Errorf("only %d commands waited on the terminal for Ctrl-C to stop", waited)
	}

	// fetch on a terminal: each record as it is made, not at the end.
	// The second page is held until the test ends, so the first record can
	// only be on the screen if fetch wrote it as it was made. Both sites
	// are on 127.0.0.1, one politeness queue (--queue-by ip): --per-host 2
	// lets the first page be fetched while the second is held, whichever
	// of them the queue takes first.
	srv, served := countingSite(t, 0)
	slow := heldSite(t)
	o := startOnTerminal(t, bin, "fetch", "--allow-private", "--delay", "0", "--per-host", "2", srv.URL+"/a.html", slow.URL+"/b.html")
	if !o.waitFor(srv.URL+"/a.html", 15*time.Second) || served.Load() != 1 {
		t.Errorf("fetch on a terminal: the first record is not shown while the second is fetched: %q", o.screen())
	}
	if o.ended(0) {
		t.Errorf("fetch ended before the slow page was served")
	}
}

// heldSite serves robots.txt as absent and holds every other request
// until the test ends.
func heldSite(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

// Through a pipe, a slow producer's records come within a quarter of a
// second: the first record comes through while the second page is held,
// so it was flushed by the timer, not by the end of the run.
func TestSlowProducerFlushes(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := tools(t, root)
	fast, _ := countingSite(t, 0)
	slow := heldSite(t)
	// Both sites are on 127.0.0.1, one politeness queue (--queue-by ip):
	// --per-host 2 lets the fast page go whichever page the queue takes first.
	cmd := exec.Command(filepath.Join(bin, "fetch"), "--allow-private", "--delay", "0", "--per-host", "2", fast.URL+"/a.html", slow.URL+"/b.html")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	start := time.Now()
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, fast.URL) {
			t.Errorf("first record %q", line)
		}
		t.Logf("the first record came through the pipe after %v, with the slow page still held", time.Since(start).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatal("no record through the pipe in 15 s while the slow page is held")
	}
	cmd.Process.Kill()
	io.Copy(io.Discard, stdout)
	cmd.Wait()
}

// A short command does not run the collector: the ballast that raises its
// floor for tools streaming records is allocated at the first collection,
// not at start (where its 16 MB set one off in every command). Each tool's
// --version, urlfeat on a few URLs and a search of a missing index end
// without a collection (GODEBUG=gctrace=1 prints one line per collection);
// with GOGC=1 each collects, so that the trace is read.
func TestShortCommandsDoNotCollect(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := tools(t, root)
	urls, err := os.ReadFile(filepath.Join(root, "testdata/sekitei/urls.lenta.examined"))
	if err != nil {
		t.Fatal(err)
	}
	urls = urls[:bytes.LastIndexByte(urls[:min(len(urls), 4000)], '\n')+1]
	type run struct {
		args  []string
		stdin []byte
	}
	runs := []run{
		{[]string{"urlfeat"}, urls},
		{[]string{"barrel", "search", "--index", filepath.Join(t.TempDir(), "missing"), "python"}, nil},
	}
	for _, tool := range []string{"urlfeat", "sekitei", "opic", "recrawl", "fetch", "barrel"} {
		runs = append(runs, run{[]string{tool, "--version"}, nil})
	}
	collections := func(r run, gogc string) int {
		cmd := exec.Command(filepath.Join(bin, r.args[0]), r.args[1:]...)
		cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1", "GOGC="+gogc)
		cmd.Stdin = bytes.NewReader(r.stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Run() // the missing index exits 1
		n := 0
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(line, "gc ") {
				n++
			}
		}
		return n
	}
	for _, r := range runs {
		if n := collections(r, "100"); n != 0 {
			t.Errorf("%s: %d collections", strings.Join(r.args, " "), n)
		}
		if n := collections(r, "1"); n == 0 {
			t.Errorf("%s with GOGC=1: no collection traced", strings.Join(r.args, " "))
		}
	}
}
