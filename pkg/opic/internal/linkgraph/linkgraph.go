// Package linkgraph extracts the link graph of a static site kept as files
// (the Python documentation, say) with golang.org/x/net/html: one edge per
// <a href> from an HTML page to another HTML page of the same tree, URLs
// relative to the tree's root, fragments and queries dropped.
package linkgraph

import (
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// Edge is a link between two pages named by their path in the tree.
type Edge struct{ Src, Dst string }

// Walk returns the sorted edges between the .html files under root.
// Repeated links and self-links are kept: they are the graph as written.
func Walk(root string) ([]Edge, error) {
	var pages []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".html") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(pages))
	for _, p := range pages {
		known[p] = true
	}
	var edges []Edge
	for _, p := range pages {
		f, err := os.Open(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		hrefs, err := Hrefs(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, h := range hrefs {
			if dst, ok := resolve(p, h); ok && known[dst] {
				edges = append(edges, Edge{p, dst})
			}
		}
	}
	slices.SortFunc(edges, func(a, b Edge) int {
		if c := strings.Compare(a.Src, b.Src); c != 0 {
			return c
		}
		return strings.Compare(a.Dst, b.Dst)
	})
	return edges, nil
}

// Hrefs returns the href of every <a> element of an HTML document, in order.
func Hrefs(r io.Reader) ([]string, error) {
	z := html.NewTokenizer(r)
	var hrefs []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return hrefs, nil
			}
			return hrefs, z.Err()
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "a" || !hasAttr {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if string(k) == "href" {
					hrefs = append(hrefs, string(v))
				}
				if !more {
					break
				}
			}
		}
	}
}

// resolve turns href, found in page p, into the path of a page of the
// tree; ok is false for links that leave it.
func resolve(p, href string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" {
		return "", false // absolute, broken, or a fragment of p itself
	}
	dst := path.Clean(path.Join(path.Dir(p), u.Path))
	if strings.HasPrefix(dst, "../") || dst == ".." {
		return "", false
	}
	if strings.HasSuffix(u.Path, "/") {
		dst += "/index.html"
	}
	return dst, true
}
