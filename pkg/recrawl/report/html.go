package report

import (
	"bytes"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WriteHTML writes the report as one HTML page: the text's tables and
// three plots (freshness over turns, pages over turns, per-host rates),
// each an inline SVG with an id (plot-freshness, plot-pages, plot-hosts).
func (r *Report) WriteHTML(w io.Writer) error {
	fresh, err := r.freshnessPlot()
	if err != nil {
		return err
	}
	pages, err := r.pagesPlot()
	if err != nil {
		return err
	}
	hosts, err := r.hostsPlot()
	if err != nil {
		return err
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		return err
	}
	return page.Execute(w, map[string]any{"R": r, "Text": text.String(), "Plots": []plotSVG{
		{"plot-freshness", "Weighted freshness over turns", fresh},
		{"plot-pages", "Pages over turns", pages},
		{"plot-hosts", "Per-host crawl-rate limits k_i", hosts},
	}})
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

type plotSVG struct {
	ID, Title string
	SVG       template.HTML
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>crawl report {{.R.Now.Format "2006-01-02 15:04Z"}}</title>
<style>body{font-family:sans-serif;margin:2em;max-width:72em}pre{background:#f6f6f6;padding:1em;overflow-x:auto}
figure{display:inline-block;margin:0 2em 1em 0}svg{overflow:visible}figcaption{font-weight:bold}</style></head>
<body><h1>Crawl report</h1>
<p id="summary">{{.R.Pages}} pages known, {{.R.Fetched}} fetched, {{.R.Failing}} failing; weighted freshness {{printf "%.3f" .R.Freshness}}.</p>
{{range .Plots}}<figure id="{{.ID}}"><figcaption>{{.Title}}</figcaption>{{.SVG}}</figure>
{{end}}<h2>Details</h2><pre>{{.Text}}</pre></body></html>
`))

const plotW, plotH = 6 * vg.Inch, 3.5 * vg.Inch

func svgOf(p *plot.Plot) (template.HTML, error) {
	wt, err := p.WriterTo(plotW, plotH, "svg")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return "", err
	}
	// Drop the XML declaration: the SVG is inline in HTML.
	s := b.String()
	if i := bytes.Index(b.Bytes(), []byte("<svg")); i > 0 {
		s = s[i:]
	}
	return template.HTML(s), nil
}

// turnTime is the x of a turn: hours since the first.
func (r *Report) turnHours(t time.Time) float64 {
	return t.Sub(r.History[0].Time).Hours()
}

func (r *Report) freshnessPlot() (template.HTML, error) {
	p := plot.New()
	p.Legend.Top, p.Legend.Left = false, true
	p.X.Label.Text = "hours since the first turn"
	p.Y.Label.Text = "freshness"
	p.Y.Min, p.Y.Max = 0, 1
	var est, obs plotter.XYs
	for _, e := range r.History {
		if e.Known > 0 {
			est = append(est, plotter.XY{X: r.turnHours(e.Time), Y: e.Estimated})
		}
		if e.Observed >= 0 {
			obs = append(obs, plotter.XY{X: r.turnHours(e.Time), Y: e.Observed})
		}
	}
	var lines []any
	if len(est) > 0 {
		lines = append(lines, "estimated", est)
	}
	if len(obs) > 0 {
		lines = append(lines, "observed (recrawls unchanged)", obs)
	}
	if len(lines) > 0 {
		if err := plotutil.AddLinePoints(p, lines...); err != nil {
			return "", err
		}
	}
	return svgOf(p)
}

func (r *Report) pagesPlot() (template.HTML, error) {
	p := plot.New()
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Label.Text = "hours since the first turn"
	p.Y.Label.Text = "pages"
	var known, fetched, failed plotter.XYs
	total := 0
	for _, e := range r.History {
		x := r.turnHours(e.Time)
		total += e.Fetches - e.Failures
		known = append(known, plotter.XY{X: x, Y: float64(e.Pages)})
		fetched = append(fetched, plotter.XY{X: x, Y: float64(total)})
		failed = append(failed, plotter.XY{X: x, Y: float64(e.Failures)})
	}
	if len(known) > 0 {
		if err := plotutil.AddLinePoints(p, "known", known, "fetches (cumulative)", fetched, "failed this turn", failed); err != nil {
			return "", err
		}
	}
	return svgOf(p)
}

func (r *Report) hostsPlot() (template.HTML, error) {
	p := plot.New()
	p.Y.Label.Text = "crawls a day (log10)"
	var vals plotter.Values
	var names []string
	for _, h := range r.Hosts {
		if !h.Known {
			continue
		}
		vals = append(vals, math.Log10(math.Max(h.LimitPerDay, 1)))
		names = append(names, h.Host)
	}
	if len(vals) == 0 {
		p.Title.Text = "no host-rate estimates"
		return svgOf(p)
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(max(4, 300/float64(len(vals)))))
	if err != nil {
		return "", err
	}
	bars.Color = plotutil.Color(2)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, -0.5
	if len(names) > 20 {
		p.X.Tick.Label.Font.Size = vg.Points(6)
	}
	return svgOf(p)
}
