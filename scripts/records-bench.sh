#!/usr/bin/env bash
# Measures the record layer as whole processes beside cat and jq on the same
# files, and beside the library benchmarks of the same work:
#   recordcat     fetch records (~1 KB, 20 links) copied through the record
#                 layer unchanged (internal/cmd/recordcat)
#   urlfeat       plain URLs (the bundled sekitei URLs, repeated), and fetch
#                 records (their "host" and "features" added)
#   recrawl rank  page records (scripts/recrawl-genpages.sh)
# Rates are per CPU second (user + system), so they read as per-core figures
# on a shared machine. "vs cat" and "vs jq" divide the tool's MB/s by theirs
# on the same file; "vs library" divides the tool's records/s by its library
# benchmark's (record: BenchmarkPassThroughReuse, as recordcat reads; urlfeat: BenchmarkExtract, the
# features alone; recrawl: BenchmarkRank10M, the ranking alone, --full only).
# Usage: scripts/records-bench.sh [--full]
#   default: 50,000 fetch records, 1,000,000 URLs, 300,000 pages (about a minute)
#   --full:  500,000 fetch records, 10,000,000 URLs, 10,000,000 pages
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
[ "${1:-}" = --full ] && full=1
if [ $full = 1 ]; then nf=500000 nu=10000000 np=10000000; else nf=50000 nu=1000000 np=300000; fi

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for t in urlfeat recrawl; do go build -o "$tmp/$t" "./cmd/$t"; done
go build -o "$tmp/recordcat" ./internal/cmd/recordcat

# Fetch records as fetch writes them: 20 links, a title with escapes.
awk -v n="$nf" 'BEGIN {
  for (i = 0; i < n; i++) {
    s = i % 97; links = ""
    for (j = 0; j < 20; j++)
      links = links (j ? "," : "") sprintf("\"https://site%d.example/section/%d/article-%d.html\"", (s + j) % 97, j, i * 31 + j)
    printf "{\"url\":\"https://site%d.example/section/%d/article-%d.html\",\"host\":\"site%d.example\",\"status\":200,", s, i % 13, i, s
    printf "\"fetched_at\":\"2026-11-20T10:%02d:%02dZ\",\"content_type\":\"text/html; charset=utf-8\",\"length\":%d,", i % 60, i % 60, 20000 + i % 5000
    printf "\"digest\":\"sha256:%016x%016x%016x%016x\",\"title\":\"Article %d \\u2014 the \\\"news\\\" of the day\",", i, i * 7, i * 13, i * 17, i
    printf "\"links\":[%s],\"warc_file\":\"crawl-00001.warc.gz\",\"warc_offset\":%d,\"elapsed_ms\":%d}\n", links, i * 17000, 20 + i % 300
  } }' > "$tmp/fetch.ndjson"
awk -v n="$nu" '{ u[NR] = $0 } END { for (i = 0; i < n; i++) print u[i % NR + 1] }' \
  testdata/sekitei/urls.lenta.general testdata/sekitei/urls.wikipedia.general > "$tmp/urls.txt"
scripts/recrawl-genpages.sh "$np" > "$tmp/pages.ndjson"

# run NAME FILE CMD...: CPU seconds of CMD reading FILE on stdin.
cpu() {
  local file=$1; shift
  /usr/bin/time -f '%U %S %e' -o "$tmp/time" "$@" < "$file" > /dev/null
  awk '{ s = $1 + $2; if (s < 0.01) s = 0.01; print s, $3 }' "$tmp/time"
}

echo "== library benchmarks (one core)"
go test ./pkg/record -run '^$' -bench 'PassThroughReuse' -cpu 1 -benchtime 2s | tee "$tmp/lib.record" | grep '^Bench'
lib_record=$(awk '/^BenchmarkPassThroughReuse/ { for (i = 1; i < NF; i++) if ($(i+1) == "cpu-records/s") print $i }' "$tmp/lib.record")
# BenchmarkExtract reports wall time; its CPU rate is the CPU time of a run
# of 2,000,000 extractions less that of a run of one (the setup).
go test -c -o "$tmp/urlfeat.test" ./pkg/urlfeat
(cd pkg/urlfeat && for n in 1 2000000; do
  /usr/bin/time -f '%U %S' -o "$tmp/time.$n" "$tmp/urlfeat.test" -test.run '^$' -test.bench '^BenchmarkExtract$' \
    -test.benchtime "${n}x" -test.cpu 1 > /dev/null
done)
lib_urlfeat=$(awk 'NR == FNR { a = $1 + $2; next } { print 1999999 / ($1 + $2 - a) }' "$tmp/time.1" "$tmp/time.2000000")
echo "BenchmarkExtract: $lib_urlfeat URLs per CPU second"
lib_rank=""
if [ $full = 1 ]; then
  go test ./pkg/recrawl -run '^$' -bench 'Rank10M' -cpu 1 -benchtime 1x | tee "$tmp/lib.recrawl" | grep '^Bench'
  lib_rank=$(awk '/^BenchmarkRank10M/ { for (i = 1; i < NF; i++) if ($(i+1) == "cpu-s/op") print 10000000 / $i }' "$tmp/lib.recrawl")
fi

echo "== processes"
printf '%-34s %9s %12s %8s %8s %10s %8s\n' tool MB/s records/s "vs cat" "vs jq" "vs library" "wall s"
row() { # NAME FILE RECORDS LIBRATE JQPROGRAM CMD...
  local name=$1 file=$2 n=$3 lib=$4 jqp=$5; shift 5
  local bytes; bytes=$(stat -c %s "$file")
  read -r c w < <(cpu "$file" "$@")
  read -r cc _ < <(cpu "$file" cat)
  read -r jc _ < <(cpu "$file" jq -c $jqp)
  awk -v name="$name" -v b="$bytes" -v n="$n" -v c="$c" -v cc="$cc" -v jc="$jc" -v lib="$lib" -v w="$w" 'BEGIN {
    vl = lib == "" ? "-" : sprintf("%.2f", n / c / lib)
    printf "%-34s %9.0f %12.0f %8.3f %8.2f %10s %8.2f\n", name, b / c / 1e6, n / c, cc / c, jc / c, vl, w }'
}
row "recordcat (fetch records)" "$tmp/fetch.ndjson" "$nf" "$lib_record" . "$tmp/recordcat"
row "urlfeat (plain URLs)" "$tmp/urls.txt" "$nu" "$lib_urlfeat" "-R {url:.}" "$tmp/urlfeat"
row "urlfeat (fetch records)" "$tmp/fetch.ndjson" "$nf" "$lib_urlfeat" . "$tmp/urlfeat"
row "recrawl rank ($np pages)" "$tmp/pages.ndjson" "$np" "$lib_rank" . \
  "$tmp/recrawl" rank --now 2026-11-21T00:00:00Z --rate "$((np * 4 / 10))" --slot 1h
echo "(rates per CPU second; vs cat, vs jq: their CPU time over the tool's on the same file;"
echo " jq runs 'jq -c .', on plain URLs 'jq -cR {url:.}')"
