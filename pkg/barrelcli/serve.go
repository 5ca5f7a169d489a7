package barrelcli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/barrel/serve"
	"github.com/sekitei/crawlkit/pkg/clikit"
)

// shutdownGrace is how long requests in flight get to finish after
// SIGINT or SIGTERM; it is shorter than clikit's grace before it exits.
const shutdownGrace = 2 * time.Second

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "answer searches over HTTP: a JSON API and a search page",
		UsageText: "barrel serve --index DIR [--addr 127.0.0.1:8080] [--max-n 100] [--model FILE]",
		Description: `Opens the index once and answers HTTP requests, searching it concurrently:

   GET /search?q=QUERY&n=10&start=0
                              the results as JSON: query (as searched),
                              n, start, problems, unknown, matches, results
                              (position, doc_id, url, title, score,
                              snippet), elapsed_ms; start skips that many
   GET /?q=QUERY&start=0      a search page (an HTML form, a line of query
                              syntax help, the results with their snippets
                              and links to the previous and next pages,
                              rendered on the server)
   GET /healthz               {"status":"ok","pages":...,"doc_ids":...}

Queries take the syntax of barrel search ("phrase", -word, site:host, OR).
A bad query is answered, empty or clipped, with its problems listed (as
batch search notes them; a malformed query's syntax error among them); an n
that is not a whole number of at least 1, or a start that is not one of 0
to 40000, is a 400; a larger n than --max-n is clipped. --model ranks with
a learnt model. Prints the address it listens on to stderr. On SIGINT or
SIGTERM it stops accepting connections, lets the requests in flight finish
(2 seconds at most) and exits 130, as every tool of the toolkit does on a
signal. It follows builds: each request checks the index's MANIFEST and,
when a build has committed a new batch, searches the new generation
(requests already running finish on the old one).

Example:
   $ barrel serve --index idx --addr 127.0.0.1:8080 --max-n 50 &
   barrel: serving idx (530 pages) on http://127.0.0.1:8080/
   $ curl -s 'http://127.0.0.1:8080/search?q=json+encoder&n=1'
   {"query":"json encoder","n":1,"matches":19,"results":[{"position":1,"doc_id":307,
    "url":"http://docs.test/library/json.html","title":"json — JSON encoder and decoder — ...",...}],"elapsed_ms":1.2}
   $ curl -s http://127.0.0.1:8080/healthz
   {"batches":1,"doc_ids":4707,"pages":530,"status":"ok"}
   $ chromium 'http://127.0.0.1:8080/?q=json+encoder'   # the search page`,
		Flags: []cli.Flag{indexFlag,
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "listen on `HOST:PORT` (port 0: any free port)"},
			&cli.IntFlag{Name: "max-n", Value: serve.DefaultMaxN, Usage: "the most results one request gets"},
			modelFlag,
		},
		Action: serveIndex,
	}
}

func serveIndex(c *cli.Context) error {
	if c.NArg() > 0 {
		return clikit.Usagef("serve takes no arguments (got %q)", c.Args().First())
	}
	if c.Int("max-n") < 1 {
		return clikit.Usagef("--max-n %d: want at least 1", c.Int("max-n"))
	}
	model, err := readModel(c)
	if err != nil {
		return err
	}
	env := clikit.EnvOf(c)
	live, err := serve.OpenLive(c.String("index"), env.Stderr)
	if err != nil {
		return err
	}
	defer live.Close()
	idx, release := live.Acquire()
	pages := idx.Manifest().Fetched
	release()
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           serve.LiveHandler(live, serve.Options{MaxN: c.Int("max-n"), ErrorLog: env.Stderr, Model: model}),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	fmt.Fprintf(env.Stderr, "barrel: serving %s (%d pages) on http://%s/\n", c.String("index"), pages, ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-c.Context.Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return c.Context.Err()
}
