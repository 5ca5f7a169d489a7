// Package links extracts from an HTML page what a crawler needs: its title,
// its outgoing links (a, area, link, frame and iframe, resolved against
// <base href> or the page URL, fragment-free, http and https only, without
// duplicates), the rel=canonical URL, and the nofollow signals (rel=nofollow
// on a link, <meta name=robots content=nofollow> for the whole page).
//
// It runs the golang.org/x/net/html tokenizer rather than building a tree:
// a crawler looks at every page it fetches and needs only a few tags.
package links

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page is what Extract finds.
type Page struct {
	Title     string
	Links     []string // followable links, in document order
	Nofollow  []string // links marked rel=nofollow (all links when the page is nofollow)
	Canonical string   // absolute rel=canonical URL, "" if none
	// NoFollowPage and NoIndex come from <meta name="robots">.
	NoFollowPage, NoIndex bool
}

// Options bound the work on one page.
type Options struct {
	MaxLinks int // keep at most this many links (0: 10000)
	MaxTitle int // title length in bytes (0: 1000)
}

// Extract parses the UTF-8 HTML body of the page at pageURL.
func Extract(body []byte, pageURL string, opt Options) Page {
	if opt.MaxLinks <= 0 {
		opt.MaxLinks = 10000
	}
	if opt.MaxTitle <= 0 {
		opt.MaxTitle = 1000
	}
	var p Page
	base, err := url.Parse(pageURL)
	if err != nil {
		return p
	}
	baseSet := false
	seen := make(map[string]struct{})
	resolved := make(map[string]string) // pages repeat their links
	var title []byte
	inTitle, titleDone := false, false

	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			p.Title = cleanTitle(title, opt.MaxTitle)
			if p.NoFollowPage {
				p.Nofollow = append(p.Links, p.Nofollow...)
				p.Links = nil
			}
			return p
		case html.TextToken:
			if inTitle && len(title) < 4*opt.MaxTitle {
				title = append(title, z.Text()...)
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if atom.Lookup(name) == atom.Title && inTitle {
				inTitle, titleDone = false, true
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Title && !titleDone && tt == html.StartTagToken {
				inTitle = true
				continue
			}
			var key string
			switch a {
			case atom.A, atom.Area, atom.Link, atom.Base:
				key = "href"
			case atom.Frame, atom.Iframe:
				key = "src"
			case atom.Meta:
				key = "content"
			default:
				continue
			}
			if !hasAttr {
				continue
			}
			var ref, rel, metaName string
			for {
				k, v, more := z.TagAttr()
				switch string(k) {
				case key:
					ref = string(v)
				case "rel":
					rel = strings.ToLower(string(v))
				case "name":
					metaName = strings.ToLower(string(v))
				}
				if !more {
					break
				}
			}
			switch a {
			case atom.Meta:
				if metaName == "robots" {
					c := strings.ToLower(ref)
					p.NoFollowPage = p.NoFollowPage || strings.Contains(c, "nofollow") || strings.Contains(c, "none")
					p.NoIndex = p.NoIndex || strings.Contains(c, "noindex") || strings.Contains(c, "none")
				}
				continue
			case atom.Base:
				// Only the first <base href> counts.
				if !baseSet && ref != "" {
					if b, err := base.Parse(strings.TrimSpace(ref)); err == nil {
						base, baseSet = b, true
						clear(resolved)
					}
				}
				continue
			}
			abs, done := resolved[ref]
			if !done {
				abs = resolve(base, ref)
				resolved[ref] = abs
			}
			if abs == "" {
				continue
			}
			if a == atom.Link && hasWord(rel, "canonical") {
				if p.Canonical == "" {
					p.Canonical = abs
				}
				continue
			}
			if _, dup := seen[abs]; dup {
				continue
			}
			if len(p.Links)+len(p.Nofollow) >= opt.MaxLinks {
				continue
			}
			seen[abs] = struct{}{}
			if hasWord(rel, "nofollow") {
				p.Nofollow = append(p.Nofollow, abs)
			} else {
				p.Links = append(p.Links, abs)
			}
		}
	}
}

// resolve makes ref absolute against base and drops its fragment; it
// returns "" for anything that is not an http or https URL.
func resolve(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || ref[0] == '#' {
		return ""
	}
	// Cheap rejections before parsing.
	if i := strings.IndexByte(ref, ':'); i > 0 && i < 12 {
		s := strings.ToLower(ref[:i])
		if s != "http" && s != "https" && !strings.ContainsAny(s, "/?#") {
			return "" // mailto:, javascript:, data:, ftp: ...
		}
	}
	u, err := base.Parse(ref)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
}

func cleanTitle(t []byte, max int) string {
	s := strings.Join(strings.Fields(string(t)), " ") // Text() already unescaped it
	if len(s) > max {
		s = s[:max]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1] // do not cut a UTF-8 sequence
		}
		if len(s) > 0 && s[len(s)-1] >= 0xC0 {
			s = s[:len(s)-1]
		}
	}
	return s
}
