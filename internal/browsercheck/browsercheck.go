// Package browsercheck loads an HTML page in headless chromium, as a
// person's browser would, and reports what the page did there: the errors
// it raised (scripts, resources that failed to load, console messages) and
// the size and placement of each plot, so that tests check the page as it
// is seen, not as it is written.
package browsercheck

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Figure is one <figure id="plot-..."> as laid out.
type Figure struct {
	ID string
	// Width is the rendered width of its SVG in CSS pixels.
	Width float64
	// Marks is how many marks of data (elements of class data) it holds.
	Marks int
	// AxisLeft is where its horizontal axis (class axis-x) starts, and
	// DataLeft the leftmost edge of its data marks, in page pixels; NaN
	// without an axis or marks.
	AxisLeft, DataLeft float64
	// Text is its rendered text.
	Text string
}

// Page is what the page did.
type Page struct {
	Errors  []string
	Figures []Figure
	// Title and Text are the document's title and text once loaded.
	Title, Text string
}

// Flags are the ones chromium runs with: headless, no network of its own.
var Flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run"}

// probe runs in the page: the head part records errors from the start,
// the body part measures once the page has loaded and writes its findings
// into the document as lines of tab-separated fields.
const probeHead = `<script>window.__errs=[];window.addEventListener('error',function(e){__errs.push(e.message||('failed to load '+((e.target&&(e.target.src||e.target.href))||'a resource')))},true);
window.addEventListener('unhandledrejection',function(e){__errs.push('unhandled rejection: '+e.reason)});
['error','warn'].forEach(function(k){var f=console[k];console[k]=function(){__errs.push('console.'+k+': '+Array.from(arguments).join(' '));f.apply(console,arguments)}});</script>`

const probeBody = `<script>window.addEventListener('load',function(){
var out=[];
document.querySelectorAll('figure[id^="plot-"]').forEach(function(f){
 var svg=f.querySelector('svg'); var w=svg?svg.getBoundingClientRect().width:0;
 var ax=svg&&svg.querySelector('.axis-x'); var axl=ax?ax.getBoundingClientRect().left:NaN;
 var marks=svg?svg.querySelectorAll('.data'):[]; var dl=Infinity;
 marks.forEach(function(m){var r=m.getBoundingClientRect(); if(r.width>0||r.height>0){dl=Math.min(dl,r.left)}});
 if(!isFinite(dl))dl=NaN;
 out.push(['figure',f.id,w,marks.length,axl,dl,(f.innerText||'').replace(/\s+/g,' ')].join('\t'));
});
__errs.forEach(function(e){out.push('error\t'+String(e).replace(/\s+/g,' '))});
out.push('title\t'+document.title);
out.push('text\t'+document.body.innerText.replace(/\s+/g,' '));
var p=document.createElement('pre');p.id='browsercheck-result';p.textContent='\n'+out.join('\n')+'\n';document.body.appendChild(p);
});</script>`

var result = regexp.MustCompile(`(?s)<pre id="browsercheck-result">(.*?)</pre>`)

// Load loads the page at path in chromium with a window width pixels wide
// and returns what it did. A missing chromium fails the test: the page's
// test is not to be skipped.
func Load(t testing.TB, path string, width int) Page {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is needed (scripts/deps.sh installs it):", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	head, body := strings.Index(s, "<head>"), strings.LastIndex(s, "</body>")
	if head < 0 || body < 0 {
		t.Fatalf("%s: no <head> or </body>", path)
	}
	s = s[:head+len("<head>")] + probeHead + s[head+len("<head>"):body] + probeBody + s[body:]
	dir := t.TempDir()
	probed := filepath.Join(dir, "page.html")
	if err := os.WriteFile(probed, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{}, Flags...), "--user-data-dir="+home, fmt.Sprintf("--window-size=%d,2000", width),
		"--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+probed)
	cmd := exec.CommandContext(ctx, chromium, args...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	m := result.FindSubmatch(out)
	if m == nil {
		t.Fatalf("chromium ran no probe on the page (did it load?):\n%.2000s\n%s", out, stderr.String())
	}
	var p Page
	for _, line := range strings.Split(html.UnescapeString(string(m[1])), "\n") {
		f := strings.Split(line, "\t")
		switch f[0] {
		case "figure":
			if len(f) < 7 {
				t.Fatalf("probe line %q", line)
			}
			p.Figures = append(p.Figures, Figure{ID: f[1], Width: number(f[2]), Marks: int(number(f[3])), AxisLeft: number(f[4]),
				DataLeft: number(f[5]), Text: f[6]})
		case "error":
			p.Errors = append(p.Errors, strings.Join(f[1:], " "))
		case "title":
			p.Title = strings.Join(f[1:], " ")
		case "text":
			p.Text = strings.Join(f[1:], " ")
		}
	}
	// Console messages chromium logged, the probe's own aside.
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			p.Errors = append(p.Errors, "console: "+l)
		}
	}
	return p
}

func number(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nan()
	}
	return v
}

func nan() float64 { v, _ := strconv.ParseFloat("NaN", 64); return v }
