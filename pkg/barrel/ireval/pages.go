package ireval

import (
	"net/url"
	"strings"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
)

// PathKey is the key the judged sets name a page by: its URL's path
// without the leading "/".
func PathKey(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return strings.TrimPrefix(p.Path, "/")
}

// EachPage calls fn with the URL, title and body text of every fetched
// page of idx, so that every engine judged indexes the same pages the
// same way.
func EachPage(idx *barrel.Index, fn func(u, title string, text []byte) error) error {
	var d htmldoc.Doc
	for doc := range uint32(idx.Docs()) {
		e, ok := idx.Doc(doc)
		if !ok || e.Status != barrel.StatusFetched {
			continue
		}
		u, body, err := idx.Page(doc)
		if err != nil {
			return err
		}
		base, _ := url.Parse(u)
		d.Parse(body, base)
		if err := fn(u, d.Title, d.Text); err != nil {
			return err
		}
	}
	return nil
}
