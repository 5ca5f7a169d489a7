package e2e

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/barrelcli"
	"github.com/sekitei/crawlkit/pkg/fetchcli"
	"github.com/sekitei/crawlkit/pkg/opiccli"
	"github.com/sekitei/crawlkit/pkg/recrawlcli"
	"github.com/sekitei/crawlkit/pkg/sekiteicli"
	"github.com/sekitei/crawlkit/pkg/urlfeatcli"
)

// TestEveryCommandHasAnExample holds the README's promise: the help of
// every tool and of every command carries a worked example.
func TestEveryCommandHasAnExample(t *testing.T) {
	apps := []*cli.App{urlfeatcli.App(), sekiteicli.App(), opiccli.App(), recrawlcli.App(), fetchcli.App(), barrelcli.App()}
	n := 0
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			n++
			if !strings.Contains(c.Description+c.UsageText, "Example") {
				t.Errorf("%s %s: no worked example in its help", path, c.Name)
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	for _, app := range apps {
		if !strings.Contains(app.Description+app.UsageText, "Example") {
			t.Errorf("%s: no worked example in its help", app.Name)
		}
		walk(app.Name, app.Commands)
	}
	if n < 20 {
		t.Fatalf("only %d commands found: the apps lost their commands?", n)
	}
}
