package record

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/sekitei/crawlkit/pkg/urlx"
)

// A Shard selects the records of one of N shards by a hash of their host, so
// that a host is never split across shards. The zero Shard keeps everything.
type Shard struct {
	I, N int
}

// ParseShard parses "I/N" with 0 <= I < N.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want I/N with 0 <= I < N", s)
	}
	return Shard{I: i, N: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// ShardOf returns the shard number of a host among n.
func ShardOf(host string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(host))
	return int(h.Sum32() % uint32(n))
}

// Keeps reports whether the record belongs to the shard. The host is the
// record's "host" field if it has one, else the host of its url; a record
// with no usable host goes to shard 0, so that its error is reported once.
func (s Shard) Keeps(r *Record) bool {
	if s.N <= 1 {
		return true
	}
	return ShardOf(RecordHost(r), s.N) == s.I
}

// RecordHost returns the normalised host of a record: its "host" field, or
// the host of its url, or "" if neither gives one.
func RecordHost(r *Record) string {
	if h, ok := r.String("host"); ok && h != "" {
		return strings.ToLower(h)
	}
	h, err := urlx.Host(r.URL())
	if err != nil {
		return ""
	}
	return h
}
