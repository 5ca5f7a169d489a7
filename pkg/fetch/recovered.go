package fetch

import (
	"mime"
	"net/http"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/weburl"
)

// Recovered makes the record of a page whose response an interrupted run
// archived but did not record, and emits it as a fetched page: rec is the
// page's input record, status, header and body (the payload as received,
// content coding kept) are read back from the WARC response, at is when it
// was fetched. The record gets the fields a fetch gives a page (status,
// host, content type, length, digest, and the parsed page: title, links,
// canonical, main-text signature ...), so that the steps after the fetch
// see the page as a run never interrupted would have recorded it; set adds
// the caller's fields (the WARC location) before it is emitted. A body of
// nil (a revisit record) keeps the input record's page fields.
func (f *Fetcher) Recovered(rec *record.Record, status int, header http.Header, body []byte, at time.Time, set func(*record.Record)) error {
	u, err := weburl.Parse(rec.URL())
	if err != nil {
		clearOwned(rec)
		rec.SetInt("status", int64(status))
		rec.SetTime("fetched_at", at)
		set(rec)
		return f.emit(rec, "", true)
	}
	it := &item{rec: rec, u: u}
	x := &exchange{url: u, status: status, header: header, body: body, start: at}
	if body == nil {
		for _, k := range ownedFields {
			if !keptOn304[k] {
				rec.Delete(k)
			}
		}
	} else {
		clearOwned(rec)
	}
	rec.SetString("host", hostKey(u))
	rec.SetInt("status", int64(status))
	rec.SetString("final_url", u.String())
	rec.SetTime("fetched_at", at)
	if body != nil {
		ct := header.Get("Content-Type")
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != "" {
			rec.SetString("content_type", mt)
		}
		rec.SetInt("length", int64(len(body)))
		rec.SetString("digest", x.digest())
		if perr := f.parsePage(rec, it, x, mt, ct); perr != nil {
			rec.SetString("error", perr.Error())
			set(rec)
			return f.emit(rec, perr.code, false)
		}
	}
	if v := header.Get("ETag"); v != "" {
		rec.SetString("etag", v)
	}
	if v := header.Get("Last-Modified"); v != "" {
		rec.SetString("last_modified", v)
	}
	set(rec)
	return f.emit(rec, "", true)
}
