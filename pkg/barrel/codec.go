package barrel

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zlib"
)

// The repository compresses each page on its own, so that one page is read
// back without its neighbours (section 4.2.2). The paper chose zlib for its
// speed over bzip's better ratio; the same trade made today picks S2 (the
// Snappy-compatible format of klauspost/compress) in its "better" mode. On
// the Python docs' 530 pages it keeps a ratio of 5.23 against zlib level
// 1's 5.58 and compresses 1.7 times as fast (673 against 399 MB/s); on
// the synthetic pages of the indexing benchmark (random words, little to
// compress) it gives 1.57 against 2.04 at 3.1 times the speed, and zlib
// was a fifth of the parsing workers' time there (BenchmarkCodecs).
// zstd's fastest level compresses the Python docs better than zlib (6.35)
// but only 1.3 times as fast.
//
// The codec is recorded in the manifest (repository_codec). Indexes of
// formats 3 and 4 have zlib repositories and keep zlib when batches are
// added to them; Options.Codec chooses for a new index, zlib giving the
// paper's format exactly.
const (
	CodecS2   = "s2"
	CodecZlib = "zlib"
)

// checkCodec reports whether a repository codec is one this barrel reads.
func checkCodec(c string) error {
	if c != CodecS2 && c != CodecZlib {
		return fmt.Errorf("repository codec %q, this barrel reads %s and %s", c, CodecS2, CodecZlib)
	}
	return nil
}

// pageCompressor is a parsing worker's compressor of pages.
type pageCompressor struct {
	codec string
	zw    *zlib.Writer
	zbuf  bytes.Buffer
}

func newPageCompressor(codec string, zlibLevel int) *pageCompressor {
	c := &pageCompressor{codec: codec}
	if codec == CodecZlib {
		c.zw, _ = zlib.NewWriterLevel(&c.zbuf, zlibLevel)
	}
	return c
}

// compress returns the compressed page in a new slice.
func (c *pageCompressor) compress(page []byte) ([]byte, error) {
	if c.codec == CodecS2 {
		return s2.EncodeBetter(nil, page), nil
	}
	c.zbuf.Reset()
	c.zw.Reset(&c.zbuf)
	c.zw.Write(page)
	if err := c.zw.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(c.zbuf.Bytes()), nil
}

// inflate decompresses a repository page of the given codec; a page that
// would decode to more than maxRepoDoc bytes is refused as corrupt.
func inflate(codec string, z []byte) ([]byte, error) {
	if codec == CodecS2 {
		n, err := s2.DecodedLen(z)
		if err != nil {
			return nil, corrupt("repository: %v", err)
		}
		if n > maxRepoDoc {
			return nil, corrupt("repository: a page of %d bytes, more than the %d a page may have", n, maxRepoDoc)
		}
		body, err := s2.Decode(make([]byte, n), z)
		if err != nil {
			return nil, corrupt("repository: %v", err)
		}
		return body, nil
	}
	r, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, corrupt("repository: %v", err)
	}
	body, err := io.ReadAll(io.LimitReader(r, maxRepoDoc))
	if err != nil {
		return nil, corrupt("repository: %v", err)
	}
	return body, nil
}
