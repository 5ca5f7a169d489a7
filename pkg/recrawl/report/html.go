package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// WriteHTML writes the report as one HTML page for a person: a summary,
// then full-width plots drawn as inline SVG, each a figure with an id
// (plot-freshness, plot-pages, plot-outcomes, plot-bytes, plot-queue,
// plot-steps, plot-changes, plot-busiest, plot-failing, plot-limits) and a
// table of the same numbers under it. The page loads nothing and runs no
// script.
func (r *Report) WriteHTML(w io.Writer) error {
	return page.Execute(w, map[string]any{"R": r, "Figures": r.figures(), "Summary": r.summary()})
}

// WriteHTMLFile writes the page beside path and renames it into place, so
// that a reader never sees half a page.
func (r *Report) WriteHTMLFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := r.WriteHTML(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

type figure struct {
	ID, Title, Note string
	SVG             template.HTML
	Head            []string
	Rows            [][]string
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>crawl report {{.R.Now.Format "2006-01-02 15:04Z"}}</title>
<style>
body{font-family:sans-serif;margin:1em 2em;color:#222}
h1{margin-bottom:.2em}
table{border-collapse:collapse;font-size:.9em;margin:.3em 0 1em}
td,th{padding:.15em .6em;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left}
#summary th{text-align:left;font-weight:normal;color:#555}
#summary td{text-align:left;white-space:normal}
figure{margin:2em 0 1em;width:100%}
figcaption{font-weight:bold;font-size:1.15em;margin-bottom:.2em}
figure svg{display:block;width:100%;height:auto}
.note{color:#555;font-size:.9em;margin:.2em 0}
.numbers{max-height:22em;overflow:auto;display:inline-block;max-width:100%}
.problems{color:#a00}
</style></head>
<body><h1>Crawl report</h1>
<table id="summary">{{range .Summary}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>
{{if .R.Problems}}<div class="problems" id="problems"><b>Problems</b> (the report leaves out what they hold):<ul>{{range .R.Problems}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{range .Figures}}<figure id="{{.ID}}"><figcaption>{{.Title}}</figcaption>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}{{.SVG}}
</figure>
{{if .Rows}}<div class="numbers"><table><thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{end}}
{{end}}</body></html>
`))

// summary is the page's first table.
func (r *Report) summary() [][2]string {
	var out [][2]string
	add := func(k, format string, args ...any) { out = append(out, [2]string{k, fmt.Sprintf(format, args...)}) }
	add("at", "%s", r.Now.Format(time.RFC3339))
	if r.Dir != "" {
		turns := r.turnList()
		add("crawl", "%s: %d turns over %s", r.Dir, len(turns), duration(r.Age()))
	}
	for _, s := range r.Shards {
		name := "state"
		if s.Shard != "" {
			name = "shard " + s.Shard
		}
		add(name, "%s: %d pages", s.Path, s.Pages)
	}
	add("pages", "%d known, %d fetched (%.1f%%), %d never fetched, %d failing", r.Pages, r.Fetched, 100*share(r.Fetched, r.Pages), r.Pages-r.Fetched, r.Failing)
	add("freshness", "%.3f estimated now (over weight %.6g of fetched pages)", r.Freshness, r.KnownWeight)
	if r.GoodGiven {
		add("QLinks", "%d good URLs: %d known (%.1f%%), %d fetched (%.1f%%)", r.Good, r.GoodKnown, 100*share(r.GoodKnown, r.Good), r.GoodFetched, 100*share(r.GoodFetched, r.Good))
	}
	add("budget", "k_0 %.6g crawls a day, lambda_0 %.6g", r.Rate, r.Lambda0)
	if t := r.lastBatch(); t != nil {
		b := t.Files
		add("last turn", "%s: %d tried, %d fetched (%s), %d failed; %d candidates (%d new, %d due), %d deferred", t.HistoryEntry.Batch,
			b.Records, b.Outcomes.Fetched(), bytesText(b.Bytes), b.Records-b.Outcomes.Fetched(), b.Candidates, b.New, b.Due, b.Deferred)
	}
	return out
}

// timeAxis places the turns on a time axis in the unit the crawl's age
// warrants, from its first turn.
func timeAxis(turns []Turn) (xAxisT, []float64) {
	if len(turns) == 0 {
		return xAxisT{label: "minutes since the first turn", lo: -0.35, hi: 1, width: 0.7}, nil
	}
	first, last := turns[0].Time, turns[0].Time
	for _, t := range turns {
		if t.Time.Before(first) {
			first = t.Time
		}
		if t.Time.After(last) {
			last = t.Time
		}
	}
	age := last.Sub(first)
	unit, name := time.Minute, "minutes"
	switch {
	case age < 2*time.Minute:
		unit, name = time.Second, "seconds"
	case age < 3*time.Hour:
	case age < 72*time.Hour:
		unit, name = time.Hour, "hours"
	default:
		unit, name = 24*time.Hour, "days"
	}
	xs := make([]float64, len(turns))
	gap := math.Inf(1)
	for i, t := range turns {
		xs[i] = float64(t.Time.Sub(first)) / float64(unit)
		if i > 0 && xs[i] > xs[i-1] {
			gap = math.Min(gap, xs[i]-xs[i-1])
		}
	}
	if math.IsInf(gap, 1) {
		gap = 1
	}
	// Bars at least 6 px of 1000 wide: turns close together may overlap.
	w := math.Max(0.7*gap, (xs[len(xs)-1]-xs[0])/150)
	hi := xs[len(xs)-1] + w/2
	for _, x := range xs {
		hi = math.Max(hi, x+w/2)
	}
	return xAxisT{label: name + " since the first turn", lo: -w / 2, hi: hi, width: w}, xs
}

// figures builds every plot and its table.
func (r *Report) figures() []figure {
	turns := r.turnList()
	xa, xs := timeAxis(turns)
	var figs []figure
	nan := math.NaN()

	// Freshness over turns.
	est, obs := make([]float64, len(turns)), make([]float64, len(turns))
	var rows [][]string
	for i, t := range turns {
		est[i], obs[i] = nan, nan
		if t.Known > 0 && t.Recorded {
			est[i] = t.Estimated
		}
		if t.Observed >= 0 {
			obs[i] = t.Observed
		}
		rows = append(rows, []string{t.HistoryEntry.Batch, f3(est[i]), f3(obs[i])})
	}
	ss := []series{{"estimated", palette[0], est}, {"observed (recrawls unchanged)", palette[1], obs}}
	figs = append(figs, figure{ID: "plot-freshness", Title: "Weighted freshness over turns",
		SVG:  template.HTML(lineChart("plot-freshness", "Weighted freshness over turns", xa, xs, ss, "weighted freshness", &[2]float64{0, 1}, num)),
		Head: []string{"batch", "estimated", "observed"}, Rows: rows})

	// Pages over turns.
	known, fetched, failing := make([]float64, len(turns)), make([]float64, len(turns)), make([]float64, len(turns))
	rows = nil
	total := 0
	for i, t := range turns {
		if !t.Recorded {
			known[i], fetched[i], failing[i] = nan, nan, nan
			rows = append(rows, []string{t.HistoryEntry.Batch, "-", "-", "-", "-"})
			continue
		}
		total += t.Fetches - t.Failures
		known[i], fetched[i], failing[i] = float64(t.Pages), float64(total), float64(t.Failures)
		rows = append(rows, []string{t.HistoryEntry.Batch, itoa(t.Pages), itoa(total), itoa(t.Fetches), itoa(t.Failures)})
	}
	ss = []series{{"known", palette[0], known}, {"fetches that brought a page, in all", palette[2], fetched}, {"failed this turn", palette[3], failing}}
	figs = append(figs, figure{ID: "plot-pages", Title: "Pages known, fetched and failing over turns",
		SVG:  template.HTML(lineChart("plot-pages", "Pages over turns", xa, xs, ss, "pages", nil, num)),
		Head: []string{"batch", "known", "fetched in all", "fetches", "failed"}, Rows: rows})

	// The turns whose directories are kept: outcomes, bytes, candidates.
	var kx []float64
	var kept []Turn
	for i, t := range turns {
		if t.Files != nil {
			kx = append(kx, xs[i])
			kept = append(kept, t)
		}
	}
	keptNote := fmt.Sprintf("The %d turns whose directories are kept (DIR/batches).", len(kept))
	if r.Dir == "" {
		keptNote = "Only a crawl directory has the turns' fetch records: give DIR."
	}
	outs := make([]series, len(kinds))
	for k := range kinds {
		outs[k] = series{Name: kinds[k], Color: outcomeColors[k], Y: make([]float64, len(kept))}
	}
	bytesS := series{"bytes fetched", palette[0], make([]float64, len(kept))}
	newS, dueS := series{"new", palette[2], make([]float64, len(kept))}, series{"due again", palette[0], make([]float64, len(kept))}
	var orows, brows, qrows [][]string
	for i, t := range kept {
		row := []string{t.HistoryEntry.Batch}
		for k, c := range t.Files.Outcomes.counts() {
			outs[k].Y[i] = float64(c)
			row = append(row, itoa(c))
		}
		orows = append(orows, append(row, itoa(t.Files.Records)))
		bytesS.Y[i] = float64(t.Files.Bytes)
		brows = append(brows, []string{t.HistoryEntry.Batch, itoa(t.Files.Outcomes.Fetched()), bytesText(t.Files.Bytes)})
		newS.Y[i], dueS.Y[i] = float64(t.Files.New), float64(t.Files.Due)
		known := itoa(t.Pages)
		if !t.Recorded {
			known = "-"
		}
		qrows = append(qrows, []string{t.HistoryEntry.Batch, known, itoa(t.Files.Candidates), itoa(t.Files.New), itoa(t.Files.Due), itoa(t.Files.Deferred)})
	}
	figs = append(figs, figure{ID: "plot-outcomes", Title: "Fetch outcomes by kind per turn", Note: keptNote + " robots: refused by robots.txt; resting: a resting or pinned host's URL, not tried.",
		SVG:  template.HTML(stackedBars("plot-outcomes", "Fetch outcomes by kind per turn", xa, kx, outs, "fetches", num)),
		Head: append(append([]string{"batch"}, kinds...), "all"), Rows: orows})
	figs = append(figs, figure{ID: "plot-bytes", Title: "Bytes fetched per turn", Note: keptNote,
		SVG:  template.HTML(stackedBars("plot-bytes", "Bytes fetched per turn", xa, kx, []series{bytesS}, "bytes", bytesNum)),
		Head: []string{"batch", "pages fetched", "bytes"}, Rows: brows})
	figs = append(figs, figure{ID: "plot-queue", Title: "The queue's candidates per turn: new pages and pages due again",
		Note: keptNote + " Deferred: candidates whose segment had no quota left.",
		SVG:  template.HTML(stackedBars("plot-queue", "Candidates per turn", xa, kx, []series{newS, dueS}, "candidates", num)),
		Head: []string{"batch", "pages known", "candidates", "new", "due", "deferred"}, Rows: qrows})

	// Each step's time per turn (the cycle log).
	names := r.stepNames()
	var sx []float64
	var timed []Turn
	for i, t := range turns {
		if len(t.Steps) > 0 {
			sx = append(sx, xs[i])
			timed = append(timed, t)
		}
	}
	steps := make([]series, len(names))
	for k, n := range names {
		steps[k] = series{Name: n, Color: palette[k%len(palette)], Y: make([]float64, len(timed))}
	}
	var srows [][]string
	for i, t := range timed {
		row := []string{t.HistoryEntry.Batch}
		for k, n := range names {
			for _, s := range t.Steps {
				if s.Name == n {
					steps[k].Y[i] = s.Seconds
				}
			}
			row = append(row, stepText(t.Steps, n))
		}
		whole := "-"
		if t.Seconds > 0 {
			whole = strconv.FormatFloat(t.Seconds, 'f', 0, 64)
		}
		srows = append(srows, append(row, whole))
	}
	stepNote := "From the cycle log (DIR/logs/cycle.log)."
	if r.Dir == "" {
		stepNote = "Only a crawl directory has the cycle log: give DIR."
	}
	figs = append(figs, figure{ID: "plot-steps", Title: "Each step's time per turn", Note: stepNote,
		SVG:  template.HTML(stackedBars("plot-steps", "Each step's time per turn", xa, sx, steps, "seconds", num)),
		Head: append(append([]string{"batch"}, names...), "turn"), Rows: srows})

	// Change rates.
	estd, prior := make([]float64, len(r.Histogram)), make([]float64, len(r.Histogram))
	var hrows [][]string
	for i, b := range r.Histogram {
		estd[i], prior[i] = float64(b.Pages-b.Prior), float64(b.Prior)
		hrows = append(hrows, []string{rateText(b.Lo) + " to " + rateText(b.Hi), itoa(b.Pages), itoa(b.Prior)})
	}
	figs = append(figs, figure{ID: "plot-changes", Title: "Change rates of the pages",
		Note: "Octave bins of each page's estimated changes a day; a page with too few fetches still has the prior's rate.",
		SVG:  template.HTML(histogram("plot-changes", "Change rates", r.Histogram, []series{{"estimated from fetches", palette[0], estd}, {"at the prior", palette[8], prior}}, "changes a day")),
		Head: []string{"changes a day", "pages", "at the prior"}, Rows: hrows})

	// Hosts.
	hostNote := fmt.Sprintf("Over the %d turns kept.", len(kept))
	busy := r.TopHosts(20, func(h Host) int { return h.Tries })
	by := "fetches tried"
	if len(busy) == 0 {
		busy, by, hostNote = r.TopHosts(20, func(h Host) int { return h.Fetched }), "pages fetched", "Pages fetched, from the states."
	}
	figs = append(figs, r.hostFigure("plot-busiest", "The busiest hosts", hostNote, busy, by))
	failNote := fmt.Sprintf("Failed fetches over the %d turns kept, and the pages whose last fetch failed.", len(kept))
	fail := r.TopHosts(20, func(h Host) int { return h.Failures + h.Failing })
	figs = append(figs, r.hostFigure("plot-failing", "The hosts that fail most", failNote, fail, "fetches tried"))

	var limited []Host
	for _, h := range r.Hosts {
		if h.Known {
			limited = append(limited, h)
		}
	}
	sort.SliceStable(limited, func(i, j int) bool { return limited[i].LimitPerDay < limited[j].LimitPerDay })
	limited = limited[:min(30, len(limited))]
	lim := series{"k_i, crawls a day", palette[0], make([]float64, len(limited))}
	var lnames []string
	var lrows [][]string
	for i, h := range limited {
		lim.Y[i] = h.LimitPerDay
		lnames = append(lnames, h.Host)
		lrows = append(lrows, []string{h.Host, fmt.Sprintf("%.4g", h.RatePerSecond), fmt.Sprintf("%.6g", h.LimitPerDay), fmt.Sprintf("%.4g", h.Lambda), hostNoteText(h)})
	}
	limNote := "The hosts of lowest limit k_i (fetch's host-rate estimates, as recrawl takes them), at most 30; lambda_i > 0 where the limit binds."
	if !r.Estimated {
		limNote = "No host-rate estimates were read."
	}
	figs = append(figs, figure{ID: "plot-limits", Title: "Per-host crawl-rate limits k_i", Note: limNote,
		SVG:  template.HTML(hbars("plot-limits", "Per-host crawl-rate limits", lnames, []series{lim}, "crawls a day (log scale)", true, num)),
		Head: []string{"host", "rate/s", "k_i/day", "lambda_i", ""}, Rows: lrows})
	return figs
}

var outcomeColors = []string{"#009E73", "#56B4E9", "#0072B2", "#E69F00", "#D55E00", "#CC79A7", "#999999", "#F0E442", "#000000"}

func (r *Report) hostFigure(id, title, note string, hosts []Host, by string) figure {
	tries := series{by, palette[0], make([]float64, len(hosts))}
	failed := series{"failed fetches", palette[3], make([]float64, len(hosts))}
	failing := series{"pages failing now", palette[1], make([]float64, len(hosts))}
	var names []string
	var rows [][]string
	hi, lo := 0.0, math.Inf(1)
	for i, h := range hosts {
		names = append(names, h.Host)
		tries.Y[i] = float64(h.Tries)
		if by == "pages fetched" {
			tries.Y[i] = float64(h.Fetched)
		}
		failed.Y[i], failing.Y[i] = float64(h.Failures), float64(h.Failing)
		for _, v := range []float64{tries.Y[i], failed.Y[i], failing.Y[i]} {
			if v > 0 {
				hi, lo = math.Max(hi, v), math.Min(lo, v)
			}
		}
		rows = append(rows, []string{h.Host, shardText(h.Shard), itoa(h.Pages), itoa(h.Fetched), itoa(h.Failing), itoa(h.Tries), itoa(h.Failures), bytesText(h.Bytes)})
	}
	logScale := hi > 100*lo
	label := "fetches"
	if logScale {
		label += " (log scale)"
	}
	return figure{ID: id, Title: title, Note: note,
		SVG:  template.HTML(hbars(id, title, names, []series{tries, failed, failing}, label, logScale, num)),
		Head: []string{"host", "shard", "pages", "fetched", "failing", "tries", "failed", "bytes"}, Rows: rows}
}

func hostNoteText(h Host) string {
	switch {
	case h.Pinned && h.LimitPerDay == 0:
		return "pinned: not crawled"
	case h.Pinned:
		return "pinned"
	case h.Resting:
		return "resting"
	}
	return ""
}

func shardText(i int) string {
	if i < 0 {
		return "-"
	}
	return strconv.Itoa(i)
}

func itoa(n int) string { return strconv.Itoa(n) }

func f3(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
