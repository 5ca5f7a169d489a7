// Package render decides which fetched pages need a browser and renders
// them in headless Chromium: Shell is the rule of --render auto, Browser a
// bounded pool of tabs whose every subrequest goes through the caller's
// SubFetcher (robots.txt, address policy, politeness, archiving), so the
// browser never touches the network itself.
package render

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Mode is when fetch renders a page.
type Mode int

const (
	Never  Mode = iota // never render
	Auto               // render the pages Shell judges application shells
	Always             // render every HTML page
)

// ParseMode reads never, auto or always.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "never":
		return Never, nil
	case "auto":
		return Auto, nil
	case "always":
		return Always, nil
	}
	return Never, fmt.Errorf("bad render mode %q (want never, auto or always)", s)
}

func (m Mode) String() string {
	return [...]string{"never", "auto", "always"}[m]
}

// Signs are what Shell measures of an HTML page.
type Signs struct {
	Words       int  // words of visible text (outside script, style, template, noscript)
	Links       int  // <a href> elements
	Scripts     int  // <script> elements
	ScriptBytes int  // bytes of inline script
	NoScriptJS  bool // a <noscript> whose text asks for JavaScript
	MountPoint  bool // an empty element with id app, root, __next, ___gatsby or svelte
}

// Thresholds of the rule; see Shell.
const (
	FewWords = 50 // under this many words of visible text, a page is nearly empty
	FewLinks = 2  // at most this many links
	// ManyLinks static links or more and a page is not a shell, whatever
	// else it holds: the crawl goes on through its links without a
	// browser, and what a script adds there is a widget (search results
	// that need a query, a version switcher), not the page.
	ManyLinks = 10
)

// Measure reads the signs of an HTML page with a tokenizer (no tree built).
func Measure(page []byte) Signs { return measure(page, false) }

// measure reads the signs; with decided, it stops as soon as they decide
// the rule (ManyLinks links, or 4×FewWords words: no shell whatever
// follows), so a static page costs the tokenizer only its first part.
func measure(page []byte, decided bool) Signs {
	var s Signs
	z := html.NewTokenizer(bytes.NewReader(page))
	skip := 0 // depth inside script/style/template
	noscript := false
	var mountOpen atom.Atom // the tag of a mount point just opened
	mountName := ""
	for {
		if decided && (s.Links >= ManyLinks || s.Words >= 4*FewWords) {
			return s
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return s
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			var id, href string
			hasHref := false
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "id":
					id = string(v)
				case "href":
					href, hasHref = string(v), true
				}
			}
			mountOpen = 0
			switch a {
			case atom.Script:
				s.Scripts++
				if tt == html.StartTagToken {
					skip++
				}
			case atom.Style, atom.Template:
				if tt == html.StartTagToken {
					skip++
				}
			case atom.Noscript:
				noscript = true
			case atom.A:
				if hasHref && !strings.HasPrefix(strings.TrimSpace(strings.ToLower(href)), "javascript:") {
					s.Links++
				}
			}
			switch id {
			case "app", "root", "__next", "___gatsby", "svelte":
				if tt == html.StartTagToken {
					mountOpen, mountName = a, string(name)
				} else {
					s.MountPoint = true
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if mountOpen != 0 && string(name) == mountName {
				s.MountPoint = true // closed with nothing inside
			}
			mountOpen = 0
			switch a {
			case atom.Script, atom.Style, atom.Template:
				if skip > 0 {
					skip--
				}
			case atom.Noscript:
				noscript = false
			}
		case html.TextToken:
			t := z.Text()
			if skip > 0 {
				s.ScriptBytes += len(bytes.TrimSpace(t))
				continue
			}
			if noscript {
				if bytes.Contains(bytes.ToLower(t), []byte("javascript")) {
					s.NoScriptJS = true
				}
				continue
			}
			if len(bytes.TrimSpace(t)) > 0 {
				mountOpen = 0
			}
			s.Words += len(bytes.Fields(t))
		}
	}
}

// Shell reports whether an HTML page looks like an application shell whose
// content JavaScript builds, and why. The rule: a page with scripts and
// fewer than ManyLinks links is a shell when
//   - a <noscript> asks for JavaScript and the page has fewer than
//     4×FewWords words of text, or
//   - it has an empty mount point (id app, root, __next, ___gatsby, svelte)
//     and fewer than FewWords words, or
//   - it has at most FewLinks links and fewer than FewWords words.
//
// A page without scripts is never a shell: a browser would show it as it
// is. Nor is a page with ManyLinks links or more: the Python
// documentation's search.html asks for JavaScript in a <noscript> and has
// 104 words, but its 16 links are the site's and its script only lists
// results for a query the crawler does not have.
func Shell(page []byte) (bool, string) {
	s := measure(page, true)
	if s.Links >= ManyLinks || s.Words >= 4*FewWords {
		return false, fmt.Sprintf("at least %d links or %d words", ManyLinks, 4*FewWords)
	}
	return s.Shell()
}

// Shell applies the rule of the package's Shell to measured signs.
func (s Signs) Shell() (bool, string) {
	switch {
	case s.Scripts == 0:
		return false, "no scripts"
	case s.Links >= ManyLinks:
		return false, fmt.Sprintf("%d links (at least %d)", s.Links, ManyLinks)
	case s.NoScriptJS && s.Words < 4*FewWords:
		return true, fmt.Sprintf("noscript asks for JavaScript, %d words", s.Words)
	case s.MountPoint && s.Words < FewWords:
		return true, fmt.Sprintf("empty mount point, %d words", s.Words)
	case s.Links <= FewLinks && s.Words < FewWords:
		return true, fmt.Sprintf("%d links, %d words, %d scripts", s.Links, s.Words, s.Scripts)
	}
	return false, fmt.Sprintf("%d links, %d words", s.Links, s.Words)
}
