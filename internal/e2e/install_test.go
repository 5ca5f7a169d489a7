package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInstall runs the README's install line, scripts/install.sh PREFIX,
// and uses what it installs as a user would: each tool's manual page in
// man names every command of the tool, bash completes each tool's
// commands and a command's flags, and zsh (a real interactive zsh on a
// terminal, completion loaded from fpath as a packaged completion is)
// completes a command on the first Tab.
func TestInstall(t *testing.T) {
	root, _ := filepath.Abs("../..")
	prefix := t.TempDir()
	install := exec.Command("sh", "scripts/install.sh", prefix)
	install.Dir = root
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("scripts/install.sh: %v\n%s", err, out)
	}
	share := filepath.Join(prefix, "share")
	for _, c := range allCommands() {
		if len(c.path) != 1 {
			continue
		}
		tool := c.path[0]
		var visible []string
		for _, s := range c.subs {
			if !s.Hidden {
				visible = append(visible, s.Name)
			}
		}
		t.Run(tool, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(prefix, "bin", tool)); err != nil {
				t.Fatal(err)
			}
			man := exec.Command("man", "-P", "cat", "-l", filepath.Join(share, "man/man1", tool+".1"))
			man.Env = append(os.Environ(), "MANWIDTH=120")
			page, err := man.Output()
			if err != nil || !strings.Contains(string(page), tool) {
				t.Fatalf("man -l %s.1: %v\n%s", tool, err, page)
			}
			for _, name := range visible {
				if !strings.Contains(string(page), name) {
					t.Errorf("%s.1 does not name the command %s", tool, name)
				}
			}
			words := bashComplete(t, prefix, tool, "")
			for _, name := range visible {
				if !contains(words, name) {
					t.Errorf("bash: %s <Tab> offers %q, not %s", tool, words, name)
				}
			}
			if len(visible) > 0 {
				sub := c.subs[0]
				for _, s := range c.subs {
					if !s.Hidden && len(s.Flags) > 0 {
						sub = s
						break
					}
				}
				if len(sub.Flags) > 0 {
					flag := "--" + sub.Flags[0].Names()[0]
					got := bashComplete(t, prefix, tool+" "+sub.Name, flag[:3])
					if !contains(got, flag) {
						t.Errorf("bash: %s %s %s<Tab> offers %q, not %s", tool, sub.Name, flag[:3], got, flag)
					}
				}
			}
		})
	}

	if _, err := exec.LookPath("zsh"); err != nil {
		t.Fatalf("zsh is not installed (scripts/deps.sh installs it): %v", err)
	}
	t.Setenv("PATH", filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	o := startOnTerminal(t, "/usr/bin", "zsh", "-f", "-i")
	fmt.Fprintf(o.user, "fpath=(%s $fpath); autoload -U compinit; compinit -u; echo loaded-$((6*7))\n", filepath.Join(share, "zsh/site-functions"))
	if !o.waitFor("loaded-42", 10*time.Second) {
		t.Fatalf("zsh did not start compinit: %q", o.screen())
	}
	fmt.Fprint(o.user, "fetch sta\t")
	if !o.waitFor("fetch stats", 10*time.Second) {
		t.Errorf("zsh: fetch sta<Tab> did not complete to 'fetch stats': %q", o.screen())
	}
	fmt.Fprint(o.user, "\x15exit\n")
	o.ended(5 * time.Second)
}

// bashComplete asks the installed bash completion of a tool what may follow
// line (the words typed so far) when the word under the cursor is cur.
func bashComplete(t *testing.T, prefix, line, cur string) []string {
	t.Helper()
	words := strings.Fields(line)
	script := fmt.Sprintf(`source %q
COMP_WORDS=(%s %q); COMP_CWORD=%d
_%s_complete
printf '%%s\n' "${COMPREPLY[@]}"`,
		filepath.Join(prefix, "share/bash-completion/completions", words[0]),
		strings.Join(words, " "), cur, len(words), words[0])
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash completion of %q: %v", line, err)
	}
	return strings.Fields(string(out))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// waitFor waits up to d for the terminal to show s.
func (o *onTerminal) waitFor(s string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if strings.Contains(o.screen(), s) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return strings.Contains(o.screen(), s)
}
