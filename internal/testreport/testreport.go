// Package testreport lets a test state a figure the CI log must show: the
// line goes to the test's log and, when CRAWLKIT_TEST_REPORT names a file,
// is appended to it, so scripts/test.sh prints it although go test shows
// only failing tests' logs.
package testreport

import (
	"fmt"
	"os"
	"testing"
)

// Env names the file the lines are appended to.
const Env = "CRAWLKIT_TEST_REPORT"

// Logf logs the line and appends it, with the test's name, to the report
// file. One write per line: lines of tests running at once do not mix.
func Logf(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	path := os.Getenv(Env)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Errorf("%s: %v", Env, err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(t.Name() + ": " + line + "\n"); err != nil {
		t.Errorf("%s: %v", Env, err)
	}
}
