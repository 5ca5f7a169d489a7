package fetch

import (
	"net/http"
	"sync"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// WARC 1.1 revisit profiles (section 6.7).
const (
	profileIdentical   = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
	profileNotModified = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
)

// A capture is an archived response a revisit can refer to.
type capture struct {
	digest string // WARC-Payload-Digest
	uri    string // WARC-Target-URI
	date   string // WARC-Date
}

// previousCapture reads the archived capture an input record describes:
// the fields of the page's last fetch record (digest, fetched_at,
// final_url, warc_file), or, when that fetch was itself a revisit, the
// capture it referred to (warc_refers_to, warc_refers_to_date). Without a
// warc_file the earlier fetch was not archived and nothing can refer to it.
func previousCapture(rec *record.Record) *capture {
	d, _ := rec.String("digest")
	file, _ := rec.String("warc_file")
	if d == "" || file == "" {
		return nil
	}
	c := &capture{digest: d}
	if u, ok := rec.String("warc_refers_to"); ok && u != "" {
		c.uri = u
		if t, ok, err := rec.Time("warc_refers_to_date"); ok && err == nil {
			c.date = warc.FormatDate(t)
		}
	} else {
		c.uri, _ = rec.String("final_url")
		if t, ok, err := rec.Time("fetched_at"); ok && err == nil {
			c.date = warc.FormatDate(t)
		}
	}
	if c.uri == "" || c.date == "" {
		return nil
	}
	return c
}

// maxPayloads bounds the payloads a run remembers for revisits: at about
// 150 bytes an entry, 100,000 take some 15 MB.
const maxPayloads = 100000

// payloadIndex remembers the payloads archived in full during a run, by
// digest, the oldest forgotten first once it holds maxPayloads.
type payloadIndex struct {
	mu    sync.Mutex
	m     map[string]capture
	order []string // ring of the digests in m, oldest at next
	next  int
}

func (p *payloadIndex) get(digest string) (capture, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[digest]
	return c, ok
}

func (p *payloadIndex) add(c capture) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[string]capture)
	}
	if _, ok := p.m[c.digest]; ok {
		return
	}
	if len(p.order) < maxPayloads {
		p.order = append(p.order, c.digest)
	} else {
		delete(p.m, p.order[p.next])
		p.order[p.next] = c.digest
		p.next = (p.next + 1) % maxPayloads
	}
	p.m[c.digest] = c
}

// revisitable tells whether an exchange's payload may be stored as a
// revisit of an identical one: a whole, non-empty 2xx payload. Empty and
// error bodies are left whole: they are small, and a replay of a 404 should
// not borrow a 200's payload.
func revisitable(x *exchange) bool {
	return x.status >= 200 && x.status < 300 && len(x.body) > 0 && x.truncated == "" && !x.refused
}

// revisitOf decides how an exchange is archived: the capture its revisit
// refers to and the profile, or ok false for a full response.
func (f *Fetcher) revisitOf(x *exchange, prev *capture) (c capture, profile string, ok bool) {
	if f.cfg.NoRevisits {
		return capture{}, "", false
	}
	if x.status == http.StatusNotModified {
		if prev != nil {
			c = *prev
		}
		return c, profileNotModified, true
	}
	if !revisitable(x) {
		return capture{}, "", false
	}
	if prev != nil && prev.digest == x.digest() {
		return *prev, profileIdentical, true
	}
	if c, ok := f.payloads.get(x.digest()); ok {
		return c, profileIdentical, true
	}
	return capture{}, "", false
}

// outlinksBody is a metadata record's block listing a page's links, as
// Heritrix writes them: one "outlink: URL" line each.
func outlinksBody(links ...[]string) []byte {
	var b []byte
	for _, ls := range links {
		for _, l := range ls {
			b = append(b, "outlink: "...)
			for i := 0; i < len(l); i++ {
				if c := l[i]; c != '\r' && c != '\n' {
					b = append(b, c)
				}
			}
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// writeOutlinks archives a page's links as a metadata record concurrent
// to its response.
func (f *Fetcher) writeOutlinks(target, respID string, at time.Time, rec *record.Record) error {
	var ls, nf []string
	rec.Decode("links", &ls)
	rec.Decode("nofollow_links", &nf)
	if f.cfg.WARC == nil || f.cfg.NoOutlinks || respID == "" || len(ls)+len(nf) == 0 {
		return nil
	}
	md := &warc.Record{Header: warc.Header{
		{Name: warc.FieldType, Value: warc.TypeMetadata},
		{Name: warc.FieldDate, Value: warc.FormatDate(at)},
		{Name: warc.FieldTargetURI, Value: target},
		{Name: warc.FieldConcurrentTo, Value: respID},
		{Name: warc.FieldContentType, Value: "application/warc-fields"},
	}, Body: bytesReader(outlinksBody(ls, nf))}
	_, err := f.cfg.WARC.Write(md)
	return err
}
