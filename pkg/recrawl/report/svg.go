package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The plots are SVG drawn here: a viewBox 1000 units wide that the page
// scales to its full width, the legend above the plot area (never over
// the data), the axes as lines of class axis-x and axis-y and every mark
// of the data (a line, a bar) of class data, inside the plot area.

const (
	svgW     = 1000.0
	fontSize = 13.0
	charW    = 7.4 // a generous average width of a character at fontSize
)

// palette is Okabe and Ito's, told apart by people with colour-blindness.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000", "#999999"}

// series is one named set of values.
type series struct {
	Name  string
	Color string
	Y     []float64
}

// scale maps values to a span of pixels; log scales are base 10.
type scale struct {
	lo, hi float64
	log    bool
	a, b   float64 // pixels of lo and hi
}

func (s scale) px(v float64) float64 {
	if s.log {
		v, lo, hi := math.Log10(math.Max(v, s.lo)), math.Log10(s.lo), math.Log10(s.hi)
		return s.a + (v-lo)/(hi-lo)*(s.b-s.a)
	}
	return s.a + (v-s.lo)/(s.hi-s.lo)*(s.b-s.a)
}

// ticks returns the tick values of the scale.
func (s scale) ticks(n int) []float64 {
	var out []float64
	if s.log {
		// Decades, and 2 and 5 times them when there are few.
		lo, hi := math.Floor(math.Log10(s.lo)), math.Log10(s.hi)
		for e := lo; e <= hi+1e-9; e++ {
			for _, m := range []float64{1, 2, 5} {
				v := m * math.Pow(10, e)
				if (m == 1 || hi-lo <= 2) && v >= s.lo*(1-1e-9) && v <= s.hi*(1+1e-9) {
					out = append(out, v)
				}
			}
		}
		return out
	}
	step := niceStep((s.hi - s.lo) / float64(n))
	if math.IsInf(s.hi, 0) || math.IsNaN(s.hi) || math.IsInf(s.lo, 0) || math.IsNaN(s.lo) {
		return nil
	}
	for v := math.Ceil(math.Max(s.lo, 0)/step-1e-9) * step; v <= s.hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// niceStep is 1, 2 or 5 times a power of ten, at least x.
func niceStep(x float64) float64 {
	if !(x > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// linearTo is a linear scale from 0 to a round number at least max.
func linearTo(max float64, a, b float64) scale {
	if !(max > 0) || math.IsInf(max, 0) {
		max = 1
	}
	step := niceStep(max / 5)
	return scale{lo: 0, hi: math.Ceil(max/step-1e-9) * step, a: a, b: b}
}

// logFor is a base-10 scale over whole decades around the positive values.
func logFor(lo, hi float64, a, b float64) scale {
	if !(lo > 0) || math.IsInf(lo, 0) {
		lo = 1 // no positive value
	}
	if !(hi >= lo) || math.IsInf(hi, 0) {
		hi = lo
	}
	l, h := math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if h <= l {
		h = l * 10
	}
	return scale{lo: l, hi: h, log: true, a: a, b: b}
}

// num writes a value as people read it: 1,234, 12.5k, 3M, 0.25.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimNum(v/1e9) + "G"
	case a >= 1e6:
		return trimNum(v/1e6) + "M"
	case a >= 1e4:
		return trimNum(v/1e3) + "k"
	}
	return trimNum(v)
}

func trimNum(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000+0, 'f', -1, 64)
}

// bytesNum writes bytes in B, kB, MB, GB.
func bytesNum(v float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return trimNum(v) + " " + units[i]
}

// canvas is one plot being drawn.
type canvas struct {
	b                        strings.Builder
	h                        float64
	left, right, top, bottom float64 // the plot area
}

func newCanvas(h, left, top, bottom float64) *canvas {
	c := &canvas{h: h, left: left, right: svgW - 20, top: top, bottom: h - bottom}
	return c
}

func (c *canvas) printf(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

func (c *canvas) text(x, y float64, anchor, s string, extra string) {
	c.printf(`<text x="%.1f" y="%.1f" text-anchor="%s"%s>%s</text>`+"\n", x, y, anchor, extra, html.EscapeString(s))
}

// legend writes the series' names in a row (rows) above the plot area.
func (c *canvas) legend(ss []series, y float64) {
	x := c.left
	for _, s := range ss {
		w := 22 + charW*float64(len(s.Name)) + 18
		if x+w > c.right && x > c.left {
			x = c.left
			y += 18
		}
		c.printf(`<rect class="legend" x="%.1f" y="%.1f" width="14" height="10" fill="%s"/>`+"\n", x, y-9, s.Color)
		c.text(x+20, y, "start", s.Name, "")
		x += w
	}
}

// legendRows is how many rows legend needs.
func legendRows(ss []series, left float64) int {
	x, rows := left, 1
	for _, s := range ss {
		w := 22 + charW*float64(len(s.Name)) + 18
		if x+w > svgW-20 && x > left {
			x = left
			rows++
		}
		x += w
	}
	return rows
}

// yAxis draws the vertical axis, its ticks, grid and label.
func (c *canvas) yAxis(s scale, label string, format func(float64) string) {
	for _, v := range s.ticks(5) {
		y := s.px(v)
		c.printf(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/>`+"\n", c.left, c.right, y, y)
		c.text(c.left-6, y+4, "end", format(v), "")
	}
	c.printf(`<line class="axis-y" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", c.left, c.left, c.top, c.bottom)
	c.text(14, (c.top+c.bottom)/2, "middle", label, fmt.Sprintf(` transform="rotate(-90 14 %.1f)"`, (c.top+c.bottom)/2))
}

// xAxis draws the horizontal axis, its ticks and label.
func (c *canvas) xAxis(s scale, label string, format func(float64) string) {
	for _, v := range s.ticks(8) {
		x := s.px(v)
		c.printf(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x, x, c.bottom, c.bottom+5)
		c.text(x, c.bottom+19, "middle", format(v), "")
	}
	c.printf(`<line class="axis-x" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", c.left, c.right, c.bottom, c.bottom)
	c.text((c.left+c.right)/2, c.bottom+38, "middle", label, "")
}

func (c *canvas) svg(id, title string) string {
	return fmt.Sprintf(`<svg id="%s-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s" font-family="sans-serif" font-size="%.0f">`+"\n%s</svg>",
		id, svgW, c.h, html.EscapeString(title), fontSize, c.b.String())
}

// xAxisT is a time axis over the turns: x values in unit since the first
// turn, with the domain's ends.
type xAxisT struct {
	label  string
	lo, hi float64
	width  float64 // a bar's width, in x units
}

// lineChart draws series of y over xs, y from 0 (or the given scale).
func lineChart(id, title string, xa xAxisT, xs []float64, ss []series, ylabel string, yfixed *[2]float64, yformat func(float64) string) string {
	rows := legendRows(ss, 70)
	c := newCanvas(320+18*float64(rows-1), 70, 34+18*float64(rows-1), 50)
	xsc := scale{lo: xa.lo, hi: xa.hi, a: c.left, b: c.right}
	most := 0.0
	for _, s := range ss {
		for _, v := range s.Y {
			if !math.IsNaN(v) {
				most = math.Max(most, v)
			}
		}
	}
	ysc := linearTo(most, c.bottom, c.top)
	if yfixed != nil {
		ysc = scale{lo: yfixed[0], hi: yfixed[1], a: c.bottom, b: c.top}
	}
	c.yAxis(ysc, ylabel, yformat)
	c.xAxis(xsc, xa.label, num)
	c.legend(ss, 16)
	for _, s := range ss {
		var d strings.Builder
		n := 0
		for i, v := range s.Y {
			if math.IsNaN(v) {
				continue
			}
			cmd := "L"
			if n == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, xsc.px(xs[i]), ysc.px(v))
			n++
		}
		if n == 0 {
			continue
		}
		c.printf(`<path class="data" d="%s" fill="none" stroke="%s" stroke-width="2"><title>%s</title></path>`+"\n", strings.TrimSpace(d.String()), s.Color, html.EscapeString(s.Name))
		if n <= 80 {
			for i, v := range s.Y {
				if !math.IsNaN(v) {
					c.printf(`<circle class="data" cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", xsc.px(xs[i]), ysc.px(v), s.Color)
				}
			}
		}
	}
	return c.svg(id, title)
}

// stackedBars draws, at each x, the series' values stacked.
func stackedBars(id, title string, xa xAxisT, xs []float64, ss []series, ylabel string, yformat func(float64) string) string {
	rows := legendRows(ss, 70)
	c := newCanvas(320+18*float64(rows-1), 70, 34+18*float64(rows-1), 50)
	xsc := scale{lo: xa.lo, hi: xa.hi, a: c.left, b: c.right}
	most := 0.0
	for i := range xs {
		t := 0.0
		for _, s := range ss {
			t += s.Y[i]
		}
		most = math.Max(most, t)
	}
	ysc := linearTo(most, c.bottom, c.top)
	c.yAxis(ysc, ylabel, yformat)
	c.xAxis(xsc, xa.label, num)
	c.legend(ss, 16)
	w := math.Max(1, xsc.px(xa.width)-xsc.px(0))
	for i, x := range xs {
		base := 0.0
		for _, s := range ss {
			v := s.Y[i]
			if !(v > 0) {
				continue
			}
			y0, y1 := ysc.px(base), ysc.px(base+v)
			c.printf(`<rect class="data" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`+"\n",
				xsc.px(x)-w/2, y1, w, y0-y1, s.Color, html.EscapeString(s.Name), yformat(v))
			base += v
		}
	}
	return c.svg(id, title)
}

// hbars draws one row a name, one bar a series in each row, from the
// left axis; the names are written whole at the left.
func hbars(id, title string, names []string, ss []series, xlabel string, logScale bool, format func(float64) string) string {
	longest := 0
	for _, n := range names {
		longest = max(longest, len(n))
	}
	left := math.Min(20+charW*float64(longest), 560)
	rows := legendRows(ss, left)
	rowH := 8 + 12*float64(len(ss))
	top := 34 + 18*float64(rows-1)
	c := newCanvas(top+rowH*float64(max(len(names), 1))+50, left, top, 50)
	lo, hi := math.Inf(1), 0.0
	for _, s := range ss {
		for _, v := range s.Y {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	var xsc scale
	if logScale {
		xsc = logFor(lo, hi, c.left, c.right)
	} else {
		xsc = linearTo(hi, c.left, c.right)
	}
	for _, v := range xsc.ticks(6) {
		x := xsc.px(v)
		c.printf(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/>`+"\n", x, x, c.top, c.bottom)
	}
	c.xAxis(xsc, xlabel, format)
	c.printf(`<line class="axis-y" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", c.left, c.left, c.top, c.bottom)
	c.legend(ss, 16)
	for i, n := range names {
		y := c.top + rowH*float64(i) + 4
		c.text(c.left-8, y+rowH/2+1, "end", n, ` class="name"`)
		for j, s := range ss {
			v := s.Y[i]
			if !(v > 0) {
				continue
			}
			w := xsc.px(v) - c.left
			c.printf(`<rect class="data" x="%.1f" y="%.1f" width="%.1f" height="10" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
				c.left, y+12*float64(j), math.Max(w, 1), s.Color, html.EscapeString(n), html.EscapeString(s.Name), format(v))
		}
	}
	return c.svg(id, title)
}

// histogram draws stacked bars over octave bins [2^k, 2^(k+1)), on a log2
// axis labelled at the bins' edges.
func histogram(id, title string, bins []Bin, ss []series, xlabel string) string {
	rows := legendRows(ss, 70)
	c := newCanvas(320+18*float64(rows-1), 70, 34+18*float64(rows-1), 50)
	if len(bins) == 0 {
		c.xAxis(scale{lo: 0, hi: 1, a: c.left, b: c.right}, xlabel, num)
		c.yAxis(linearTo(1, c.bottom, c.top), "pages", num)
		return c.svg(id, title)
	}
	lo, hi := math.Log2(bins[0].Lo), math.Log2(bins[len(bins)-1].Hi)
	xsc := scale{lo: lo, hi: hi, a: c.left, b: c.right}
	most := 0.0
	for i := range bins {
		t := 0.0
		for _, s := range ss {
			t += s.Y[i]
		}
		most = math.Max(most, t)
	}
	ysc := linearTo(most, c.bottom, c.top)
	c.yAxis(ysc, "pages", num)
	every := int(math.Ceil((hi - lo + 1) / 16))
	for e := lo; e <= hi+1e-9; e++ {
		x := xsc.px(e)
		c.printf(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x, x, c.bottom, c.bottom+5)
		if int(e-lo)%every == 0 {
			c.text(x, c.bottom+19, "middle", rateText(math.Exp2(e)), "")
		}
	}
	c.printf(`<line class="axis-x" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", c.left, c.right, c.bottom, c.bottom)
	c.text((c.left+c.right)/2, c.bottom+38, "middle", xlabel, "")
	c.legend(ss, 16)
	for i, b := range bins {
		x0, x1 := xsc.px(math.Log2(b.Lo))+1, xsc.px(math.Log2(b.Hi))-1
		base := 0.0
		for _, s := range ss {
			v := s.Y[i]
			if !(v > 0) {
				continue
			}
			y0, y1 := ysc.px(base), ysc.px(base+v)
			c.printf(`<rect class="data" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s to %s a day, %s: %s</title></rect>`+"\n",
				x0, y1, math.Max(x1-x0, 1), y0-y1, s.Color, rateText(b.Lo), rateText(b.Hi), html.EscapeString(s.Name), num(v))
			base += v
		}
	}
	return c.svg(id, title)
}

// rateText writes a power of two as 1/8, 1/2, 1, 4.
func rateText(v float64) string {
	if v < 1 {
		return "1/" + num(math.Round(1/v))
	}
	return num(v)
}
