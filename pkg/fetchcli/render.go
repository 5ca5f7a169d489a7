package fetchcli

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/fetch"
	"github.com/sekitei/crawlkit/pkg/render"
)

func renderFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "render", Value: "never", Usage: "render HTML pages in headless Chromium: never, auto (pages that look like application shells) or always"},
		&cli.IntFlag{Name: "render-tabs", Value: 2, Usage: "browser tabs rendering at once"},
		&cli.DurationFlag{Name: "render-budget", Value: 10 * time.Second, Usage: "time for rendering one page, load to settled DOM"},
		&cli.IntFlag{Name: "render-max-subrequests", Value: 50, Usage: "requests the browser may make for one page; more are refused"},
		&cli.BoolFlag{Name: "render-archive", Usage: "also archive the responses the browser got for a rendered page (scripts, XHR) in --warc"},
		&cli.StringFlag{Name: "chromium", Usage: "the browser's executable `PATH` (default: chromium on PATH)"},
	}
}

// startRender makes the browser when --render asks for one (chromium
// starts with the first page to render); the func stops it.
func startRender(c *cli.Context, cfg *fetch.Config) (func(), error) {
	mode, err := render.ParseMode(c.String("render"))
	if err != nil {
		return nil, clikit.Usagef("--render: %v", err)
	}
	cfg.Render = mode
	cfg.RenderArchive = c.Bool("render-archive")
	if mode == render.Never {
		return func() {}, nil
	}
	b, err := render.New(render.Options{
		Path: c.String("chromium"), Tabs: c.Int("render-tabs"), Budget: c.Duration("render-budget"),
		MaxSubrequests: c.Int("render-max-subrequests"),
	})
	if err != nil {
		return nil, fmt.Errorf("--render %s: %v", mode, err)
	}
	cfg.Renderer = b
	return b.Close, nil
}

// renderSummary is the rendering part of the summary line.
func renderSummary(s fetch.RenderStats) string {
	if s.Pages+s.Failed+s.Subrequests+s.Blocked == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; rendered %d pages (%d failed), %d browser requests, %d refused", s.Pages, s.Failed, s.Subrequests, s.Blocked)
	return b.String()
}
