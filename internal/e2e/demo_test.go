package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDemoSaysWhatIsMissing runs scripts/demo.sh on a machine without Go
// (PATH=/usr/bin:/bin, where this machine has no go): it installs nothing
// and asks for nothing, says in one line what is missing and that the demo
// needs only Go and nginx, exits 2, and makes no output directory.
func TestDemoSaysWhatIsMissing(t *testing.T) {
	root, _ := filepath.Abs("../..")
	for _, dir := range []string{"/usr/bin", "/bin"} {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			t.Fatalf("%s/go exists: this test needs a PATH without Go", dir)
		}
	}
	out := filepath.Join(t.TempDir(), "demo")
	cmd := exec.Command("bash", filepath.Join(root, "scripts/demo.sh"), out)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	got, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("demo.sh without Go: %v, want exit status 2\n%s", err, got)
	}
	want := "demo: missing: Go (https://go.dev/dl/; the version in go.mod)\n" +
		"demo: the demo needs only Go and nginx; install the above and run it again\n"
	if string(got) != want {
		t.Errorf("demo.sh without Go said\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("demo.sh made %s before saying what is missing: %v", out, err)
	}
}
