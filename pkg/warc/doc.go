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
// Damage: a record that does not read (a cut or corrupted block, a bad
// header, a broken gzip member) costs that record only. Next returns a
// *SkipError with its offset and the offset where reading resumes (the next
// "WARC/1." line, or the next gzip member that opens a record), then goes on.
// A file is rescanned from just after the damaged record's start, so a record
// whose start a wrong Content-Length or a broken member swallowed is found.
//
// Why our own code rather than github.com/nlnwa/gowarc/v3 (v3.1.0, from the
// module proxy): its WarcFileWriter reports a record's file and offset but
// not its compressed length, which a CDXJ index and barrel's reads need, and
// spreads writes over a pool of files where a crawler wants a response and
// its request side by side with their locations known at once; its reader,
// after damage, only skips forward byte by byte to the next magic, so a
// record whose start lies inside the damaged one's declared length is lost,
// where this reader rescans from the damage. It would also bring a URL
// parser and a UUID package for what this package does in a few lines.
// Compression is github.com/klauspost/compress/gzip, as in gowarc.
package warc
