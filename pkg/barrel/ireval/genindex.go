package ireval

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// LoadGenIndex builds a judged query set from the index of terms of a
// Sphinx site (the genindex-all.html of the Python documentation, in
// root): each entry's term, normalised (the "()" of a callable and a
// trailing "(in module os)" dropped), is a query, and the pages its links
// point to (paths relative to root, fragments dropped) are its relevant
// pages. A sub-entry in parentheses ("(struct.Struct method)") adds its
// links to its entry's; another sub-entry is the query "entry sub-entry".
// Entries whose term is the title of one of their pages (the whole title
// or a part of it between " — ") are dropped: a title match would make
// them trivial. Queries are sorted by text.
func LoadGenIndex(root string) ([]Query, error) {
	name := filepath.Join(root, "genindex-all.html")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rel := map[string][]string{} // query -> relevant paths
	var tables []*html.Node
	walk(doc, func(n *html.Node) bool {
		if n.DataAtom == atom.Table && hasClass(n, "indextable") {
			tables = append(tables, n)
			return false
		}
		return true
	})
	if len(tables) == 0 {
		return nil, fmt.Errorf("%s: no index table (class indextable)", name)
	}
	for _, t := range tables {
		walk(t, func(n *html.Node) bool {
			if n.DataAtom != atom.Li || n.Parent == nil || n.Parent.DataAtom != atom.Ul || inLi(n.Parent) {
				return true
			}
			term, links := entryOf(n)
			q := normalise(term)
			if q == "" {
				return false
			}
			rel[q] = append(rel[q], links...)
			for _, sub := range subEntries(n) {
				st, sl := entryOf(sub)
				st = strings.TrimSpace(st)
				if strings.HasPrefix(st, "(") {
					rel[q] = append(rel[q], sl...)
					continue
				}
				if sq := normalise(q + " " + st); sq != q {
					rel[sq] = append(rel[sq], sl...)
				}
			}
			return false
		})
	}
	titles := map[string]string{}
	var out []Query
	for q, pages := range rel {
		slices.Sort(pages)
		pages = slices.Compact(pages)
		if len(pages) == 0 {
			continue
		}
		trivial := false
		for _, p := range pages {
			t, ok := titles[p]
			if !ok {
				t = pageTitle(filepath.Join(root, filepath.FromSlash(p)))
				titles[p] = t
			}
			if titleIs(t, q) {
				trivial = true
				break
			}
		}
		if !trivial {
			out = append(out, Query{Text: q, Relevant: pages})
		}
	}
	slices.SortFunc(out, func(a, b Query) int { return strings.Compare(a.Text, b.Text) })
	return out, nil
}

// entryOf returns the text of an index entry (without its sub-entries)
// and the pages its links point to.
func entryOf(li *html.Node) (string, []string) {
	var text strings.Builder
	var links []string
	for c := li.FirstChild; c != nil; c = c.NextSibling {
		if c.DataAtom == atom.Ul {
			continue
		}
		walk(c, func(n *html.Node) bool {
			switch {
			case n.Type == html.TextNode:
				if !strings.HasPrefix(strings.TrimSpace(n.Data), "[") { // "[1]", "[2]": more links
					text.WriteString(n.Data)
				}
			case n.DataAtom == atom.A:
				if p := pageOf(attrOf(n, "href")); p != "" {
					links = append(links, p)
				}
			}
			return true
		})
	}
	t := strings.Join(strings.Fields(text.String()), " ")
	t = strings.TrimSuffix(strings.TrimSpace(t), ",")
	// The links' texts are joined by ", ": the term is before the first.
	return t, links
}

func subEntries(li *html.Node) []*html.Node {
	var out []*html.Node
	for c := li.FirstChild; c != nil; c = c.NextSibling {
		if c.DataAtom != atom.Ul {
			continue
		}
		for s := c.FirstChild; s != nil; s = s.NextSibling {
			if s.DataAtom == atom.Li {
				out = append(out, s)
			}
		}
	}
	return out
}

func inLi(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.DataAtom == atom.Li {
			return true
		}
	}
	return false
}

// pageOf is the path of a link within the site, without its fragment;
// "" for links out of it.
func pageOf(href string) string {
	if href == "" || strings.Contains(href, "://") || strings.HasPrefix(href, "/") || strings.HasPrefix(href, "#") {
		return ""
	}
	if i := strings.IndexAny(href, "#?"); i >= 0 {
		href = href[:i]
	}
	return path.Clean(href)
}

// normalise turns an index term into a query: the trailing qualifier in
// parentheses and a callable's "()" dropped, spaces collapsed, and "" for
// a term without a letter or digit.
func normalise(t string) string {
	t = strings.TrimSpace(t)
	if strings.HasSuffix(t, ")") {
		if i := strings.LastIndex(t, " ("); i > 0 {
			t = t[:i]
		}
	}
	t = strings.ReplaceAll(t, "()", "")
	var words []string
	for _, w := range strings.Fields(t) {
		if w = strings.TrimRight(w, ","); w != "" {
			words = append(words, w)
		}
	}
	t = strings.Join(words, " ")
	if !strings.ContainsFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return ""
	}
	return t
}

// titleIs reports whether q is the title t, or a part of it between " — ".
func titleIs(t, q string) bool {
	q = strings.ToLower(q)
	if strings.ToLower(t) == q {
		return true
	}
	for _, part := range strings.Split(t, " — ") {
		if strings.ToLower(strings.TrimSpace(part)) == q {
			return true
		}
	}
	return false
}

// pageTitle reads the <title> of an HTML file ("" if none or unreadable).
func pageTitle(name string) string {
	data, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	z := html.NewTokenizer(bytes.NewReader(data))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			if n, _ := z.TagName(); string(n) == "title" {
				if z.Next() == html.TextToken {
					return strings.Join(strings.Fields(string(z.Text())), " ")
				}
				return ""
			}
		}
	}
}

func walk(n *html.Node, fn func(*html.Node) bool) {
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attrOf(n, "class")), class)
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
