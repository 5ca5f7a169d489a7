// Package serve answers searches of a barrel index over HTTP: a JSON API
// (GET /search?q=...&n=10&start=0), a health check (GET /healthz), and a search
// page (GET /?q=...) rendered on the server with html/template, so it
// works without JavaScript. One open index serves every request (Handler),
// or the newest generation of an index that builds keep adding batches to
// (LiveHandler, over a Live); an Index is safe for concurrent use (its
// lazily mapped barrels and tables are guarded inside package barrel), so
// requests search it in parallel without a lock here.
//
// Queries are checked by package userquery as the batch mode checks its
// lines: a bad query (empty, punctuation only, invalid UTF-8, too long) is
// answered, clipped or empty, with its problems listed, never refused.
package serve

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/userquery"
)

// DefaultN is the number of results when a request does not say.
const DefaultN = 10

// DefaultMaxN bounds the n of a request.
const DefaultMaxN = 100

// Options tune a Handler.
type Options struct {
	MaxN     int           // the largest n a request gets (default DefaultMaxN)
	ErrorLog io.Writer     // where failed searches are reported; nil: nowhere
	Model    *barrel.Model // a learnt ranking; nil: the hand-set weights
}

// MaxStart bounds the start of a request: results past the searcher's
// scan limit do not exist.
const MaxStart = barrel.MaxMatches

// Handler returns the HTTP handler of idx, which stays as it was opened.
func Handler(idx *barrel.Index, opt Options) http.Handler {
	return newHandler(func() (*barrel.Index, func()) { return idx, func() {} }, opt)
}

// LiveHandler returns the HTTP handler of the newest generation of l's
// index, for a server that runs while builds add batches.
func LiveHandler(l *Live, opt Options) http.Handler {
	return newHandler(l.Acquire, opt)
}

func newHandler(acquire func() (*barrel.Index, func()), opt Options) http.Handler {
	if opt.MaxN <= 0 {
		opt.MaxN = DefaultMaxN
	}
	s := &server{acquire: acquire, opt: opt}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.health)
	mux.HandleFunc("GET /search", s.searchJSON)
	mux.HandleFunc("GET /{$}", s.page)
	return mux
}

type server struct {
	acquire func() (*barrel.Index, func()) // the index to search and its release
	opt     Options
}

// Hit is one result of the JSON API.
type Hit struct {
	Position int     `json:"position"`
	DocID    uint32  `json:"doc_id"`
	URL      string  `json:"url"`
	Title    string  `json:"title"`
	Score    float64 `json:"score"`
	Snippet  string  `json:"snippet"`
}

// Answer is the JSON API's reply to a search.
type Answer struct {
	Query     string   `json:"query"`              // as searched (checked, maybe clipped)
	N         int      `json:"n"`                  // results asked for
	Start     int      `json:"start"`              // results skipped before these
	Problems  []string `json:"problems,omitempty"` // what was wrong with the query as given
	Unknown   []string `json:"unknown,omitempty"`  // query words in no page
	Matches   int      `json:"matches"`            // documents matching in the barrels scanned
	Results   []Hit    `json:"results"`
	ElapsedMS float64  `json:"elapsed_ms"`
}

// badRequest is a request the server cannot answer (a malformed n).
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

// search answers the query of r.
func (s *server) search(r *http.Request) (*Answer, error) {
	start0 := time.Now()
	n := DefaultN
	if v := r.URL.Query().Get("n"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return nil, &badRequest{fmt.Sprintf("n=%q: want a whole number of at least 1", v)}
		}
	}
	start := 0
	if v := r.URL.Query().Get("start"); v != "" {
		var err error
		if start, err = strconv.Atoi(v); err != nil || start < 0 || start > MaxStart {
			return nil, &badRequest{fmt.Sprintf("start=%q: want a whole number from 0 to %d", v, MaxStart)}
		}
	}
	q := userquery.Check(r.URL.Query().Get("q"))
	a := &Answer{Query: q.Text, N: min(n, s.opt.MaxN), Start: start, Problems: q.Problems, Results: []Hit{}}
	if n > s.opt.MaxN {
		a.Problems = append(a.Problems, fmt.Sprintf("n=%d, clipped to %d", n, s.opt.MaxN))
	}
	if q.Terms > 0 {
		idx, release := s.acquire()
		defer release() // results may point into the generation's files
		resp, err := idx.Search(q.Text, barrel.SearchOptions{N: a.N, Offset: start, Model: s.opt.Model})
		var qe *barrel.QueryError
		if errors.As(err, &qe) { // answered, with what is wrong, as other bad queries are
			a.Problems = append(a.Problems, qe.Error())
			a.ElapsedMS = math.Round(float64(time.Since(start0).Microseconds())) / 1000
			return a, nil
		}
		if err != nil {
			return nil, err
		}
		a.Unknown, a.Matches = resp.Unknown, resp.Matches
		if resp.Barrels == "" && len(resp.Unknown) == 0 {
			a.Problems = append(a.Problems, "no word of the query is searchable")
		}
		for i, res := range resp.Results {
			a.Results = append(a.Results, Hit{Position: start + i + 1, DocID: res.Doc, URL: res.URL, Title: res.Title,
				Score: math.Round(res.Score*1e4) / 1e4, Snippet: res.Snippet})
		}
	}
	a.ElapsedMS = math.Round(float64(time.Since(start0).Microseconds())) / 1000
	return a, nil
}

func (s *server) fail(r *http.Request, err error) int {
	if _, ok := err.(*badRequest); ok {
		return http.StatusBadRequest
	}
	if s.opt.ErrorLog != nil {
		fmt.Fprintf(s.opt.ErrorLog, "barrel: %s: %v\n", r.URL.RequestURI(), err)
	}
	return http.StatusInternalServerError
}

func (s *server) searchJSON(w http.ResponseWriter, r *http.Request) {
	a, err := s.search(r)
	if err != nil {
		writeJSON(w, s.fail(r, err), map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *server) health(w http.ResponseWriter, r *http.Request) {
	idx, release := s.acquire()
	m := idx.Manifest()
	release()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "pages": m.Fetched, "doc_ids": m.Docs, "batches": m.Batches})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	// Snippets' <b> marks stay readable: the JSON is not embedded in HTML.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"encoding the answer failed"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

//go:embed page.html
var pageFS embed.FS

var pageTmpl = template.Must(template.New("page.html").Funcs(template.FuncMap{"snippet": snippetHTML, "add": func(a, b int) int { return a + b }}).ParseFS(pageFS, "page.html"))

// pageData is what the search page shows.
type pageData struct {
	Asked      bool // a query was given
	Answer     *Answer
	Error      string
	Help       string
	First      int    // position of the first result shown
	Prev, Next string // links to the pages of results before and after, if any
}

// pageLinks sets the previous and next links of d, for the request's
// query and n.
func (d *pageData) pageLinks(r *http.Request) {
	a := d.Answer
	if a == nil || len(a.Results) == 0 {
		return
	}
	d.First = a.Start + 1
	link := func(start int) string {
		v := url.Values{"q": {r.URL.Query().Get("q")}}
		if r.URL.Query().Has("n") {
			v.Set("n", strconv.Itoa(a.N))
		}
		if start > 0 {
			v.Set("start", strconv.Itoa(start))
		}
		return "/?" + v.Encode()
	}
	if a.Start > 0 {
		d.Prev = link(max(0, a.Start-a.N))
	}
	if end := a.Start + len(a.Results); len(a.Results) == a.N && end < a.Matches && end < MaxStart {
		d.Next = link(end)
	}
}

func (s *server) page(w http.ResponseWriter, r *http.Request) {
	d := pageData{Asked: r.URL.Query().Has("q"), Help: barrel.QuerySyntaxHelp}
	status := http.StatusOK
	if d.Asked {
		a, err := s.search(r)
		if err != nil {
			status, d.Error = s.fail(r, err), err.Error()
		}
		d.Answer = a
		d.pageLinks(r)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := pageTmpl.Execute(w, d); err != nil && s.opt.ErrorLog != nil {
		fmt.Fprintf(s.opt.ErrorLog, "barrel: rendering %s: %v\n", r.URL.RequestURI(), err)
	}
}

// snippetHTML escapes a snippet's text and keeps only the <b></b> marks
// the searcher put around query words: the page text itself may hold
// anything.
func snippetHTML(s string) template.HTML {
	var sb strings.Builder
	for s != "" {
		i := strings.Index(s, "<b>")
		if i < 0 {
			sb.WriteString(template.HTMLEscapeString(s))
			break
		}
		sb.WriteString(template.HTMLEscapeString(s[:i]))
		s = s[i+3:]
		j := strings.Index(s, "</b>")
		if j < 0 {
			j = len(s)
		}
		sb.WriteString("<b>" + template.HTMLEscapeString(s[:j]) + "</b>")
		s = strings.TrimPrefix(s[j:], "</b>")
	}
	return template.HTML(sb.String())
}
