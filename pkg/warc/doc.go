// Package warc reads and writes WARC/1.1 files (ISO 28500:2017), the archive
// format of web crawlers: a sequence of records, each a version line, named
// header fields, an empty line, a content block of Content-Length bytes and
// two CRLFs.
//
// Writing: Create a Writer on a directory; Write puts one or more records
// (a request and its response, say) contiguously into the current file, each
// record its own gzip member so that any record can be read alone from its
// offset, and returns where each landed. Files rotate when they reach
// Options.MaxSize; each file opens with a warcinfo record. Writer is safe for
// concurrent use and compresses outside its lock.
//
// Reading: NewReader iterates the records of a .warc or .warc.gz stream
// (gzip per record, or one gzip stream for the whole file), WARC/1.0 or 1.1,
// including wget's --warc-file output. ReadAt opens the single record that
// starts at a given offset of a file, the offset a Writer returned or a
// crawler's warc_offset field.
//
//	r, err := warc.NewReader(f)
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil { ... }
//		if rec.Type() == "response" {
//			resp, err := rec.HTTPResponse() // status, headers, payload
//			...
//		}
//	}
//
// Why our own code: the Go WARC libraries (nlnwa/gowarc, slyrz/warc,
// CorentinB/warc and others) are not available from the module proxy this
// project builds with, and what a crawler needs is small: a writer that
// compresses per record and reports offsets, and a streaming reader that
// tracks member offsets. Compression is github.com/klauspost/compress/gzip.
package warc
