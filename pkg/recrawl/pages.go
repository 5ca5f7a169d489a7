package recrawl

import (
	"math"
	"slices"
	"strings"
	"unsafe"
)

// Pages holds many pages column by column (about 36 bytes a page), so that
// ten million fit in memory and the solver scans them sequentially.
type Pages struct {
	W, Delta, Tau []float64
	Host          []int32
	HostNames     []string
	// HostRate is k_i per host (+Inf when the host has no limit).
	HostRate []float64
	hosts    hostTable
	// fromRecord marks hosts whose limit came from a host_rate field.
	fromRecord []bool
	// HostRateOf gives a host's limit from outside the records (the
	// --host-rate default and the per-host file); nil or 0 means none.
	HostRateOf func(host string) float64
}

// Grow makes room for n more pages, so that adding a known number of pages
// does not copy the columns as they grow.
func (ps *Pages) Grow(n int) {
	ps.W = grow(ps.W, n)
	ps.Delta = grow(ps.Delta, n)
	ps.Tau = grow(ps.Tau, n)
	ps.Host = grow(ps.Host, n)
}

func grow[T any](s []T, n int) []T {
	if cap(s) == 0 {
		return make([]T, 0, n) // fresh memory, not cleared twice
	}
	return slices.Grow(s, n)
}

// Len returns the number of pages.
func (ps *Pages) Len() int { return len(ps.W) }

// HostIndex returns the index of a host, adding it if new.
func (ps *Pages) HostIndex(host string) int32 {
	if i := ps.hosts.find(host); i >= 0 {
		return i
	}
	i := int32(len(ps.HostNames))
	host = strings.Clone(host) // it may be a view of the input (ParsePage)
	ps.hosts.add(host, i)
	ps.HostNames = append(ps.HostNames, host)
	k := math.Inf(1)
	if ps.HostRateOf != nil {
		if r := ps.HostRateOf(host); r > 0 {
			k = r
		}
	}
	ps.HostRate = append(ps.HostRate, k)
	return i
}

// touch finds host, which Add then finds again without a lookup (see
// hostTable.find), and starts loading, without waiting for them, its
// limit and whether a record set it.
func (ps *Pages) touch(host string) {
	i := int(ps.hosts.find(host))
	if i >= 0 && i < len(ps.HostRate) {
		prefetch(unsafe.Pointer(&ps.HostRate[i]))
	}
	if i >= 0 && i < len(ps.fromRecord) {
		prefetch(unsafe.Pointer(&ps.fromRecord[i]))
	}
}

// LookupHost returns a host's index.
func (ps *Pages) LookupHost(host string) (int32, bool) {
	i := ps.hosts.find(host)
	return i, i >= 0
}

// Add appends a page and returns its index. A host_rate in the record
// overrides the outside limits; if a host's records disagree, the lowest
// wins, so that no host is ever crawled faster than any record allows.
func (ps *Pages) Add(p PageInput) int {
	h := ps.HostIndex(p.Host)
	if p.HostRate > 0 && (p.HostRate < ps.HostRate[h] || !ps.recordRate(h)) {
		ps.HostRate[h] = p.HostRate
		ps.markRecordRate(h)
	}
	ps.W = append(ps.W, p.W)
	ps.Delta = append(ps.Delta, p.Delta)
	ps.Tau = append(ps.Tau, p.Tau)
	ps.Host = append(ps.Host, h)
	return len(ps.W) - 1
}

func (ps *Pages) recordRate(h int32) bool {
	return int(h) < len(ps.fromRecord) && ps.fromRecord[h]
}

func (ps *Pages) markRecordRate(h int32) {
	for len(ps.fromRecord) <= int(h) {
		ps.fromRecord = append(ps.fromRecord, false)
	}
	ps.fromRecord[h] = true
}

// Problem returns the static problem of these pages.
func (ps *Pages) Problem(obj Objective, rate float64) *Problem {
	if rate <= 0 {
		rate = math.Inf(1)
	}
	return &Problem{Objective: obj, W: ps.W, Delta: ps.Delta, Host: ps.Host, HostRate: ps.HostRate, Rate: rate}
}
