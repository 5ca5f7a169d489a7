#!/usr/bin/env bash
# Measures the record layer as whole processes beside cat and jq on the same
# files, and beside the library benchmarks of the same work:
#   recordcat     fetch records (~1 KB, 20 links) copied through the record
#                 layer unchanged (internal/cmd/recordcat)
#   urlfeat       plain URLs (the bundled sekitei URLs, repeated), and fetch
#                 records (their "host" and "features" added)
#   recrawl rank  page records (scripts/recrawl-genpages.sh), and 10,000,000
#                 of them (ten relabelled copies of a million; --full: generated)
#   recrawl estimate  300,000 fetch records (~1.5 KB, 20 links) of 200,000
#                 URLs, two fetches for half of them: its peak memory (RSS)
# Rates are per CPU second (user + system), so they read as per-core figures
# on a shared machine; each process is run RUNS times (default 3), for it and
# for its peers alike, and the table gives the median and, as the spread,
# the lowest and highest rate of the runs. "vs cat"
# and "vs jq" divide the tool's MB/s by theirs on the same file; "vs library"
# divides the tool's records/s by its library benchmark's on the same file,
# a benchmark doing the same work in memory, without the process and its
# reads and writes (record: BenchmarkPassThroughReuse, as recordcat reads;
# urlfeat: BenchmarkAnnotate, each line parsed, its features extracted and
# the record formatted; recrawl: BenchmarkRankRecords, each line parsed,
# the pages ranked, the selected records formatted).
# The commit and the machine's load average (before and after) head the
# output; peak RSS is the median of the tool's runs.
# Usage: scripts/records-bench.sh [--full]   (RUNS=5 for more runs)
#   default: 50,000 fetch records, 1,000,000 URLs, 1,000,000 pages and the
#            10,000,000-page row (a few minutes)
#   --full:  500,000 fetch records, 10,000,000 URLs, 10,000,000 pages
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
[ "${1:-}" = --full ] && full=1
if [ $full = 1 ]; then nf=500000 nu=10000000 np=10000000; else nf=50000 nu=1000000 np=1000000; fi
nbig=10000000
runs=${RUNS:-3}
[ "$runs" -ge 3 ] || { echo "RUNS must be at least 3" >&2; exit 2; }
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- pkg cmd internal 2>/dev/null || echo '+changes'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"

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
# History for estimate: record k is a fetch of URL k mod 200,000, the
# second round three days after the first, the digest changed on 2 URLs of 3.
awk -v n=300000 -v u=200000 'BEGIN {
  for (k = 0; k < n; k++) {
    i = k % u; round = int(k / u); s = i % 97; links = ""
    for (j = 0; j < 20; j++)
      links = links (j ? "," : "") sprintf("\"https://site%d.example/section/%d/article-%d.html\"", (s + j) % 97, j, i * 31 + j)
    printf "{\"url\":\"https://site%d.example/section/%d/article-%d.html\",\"host\":\"site%d.example\",\"status\":200,", s, i % 13, i, s
    printf "\"fetched_at\":\"2026-11-%02dT%02d:%02d:%02dZ\",\"content_type\":\"text/html; charset=utf-8\",\"length\":%d,", 10 + round * 3, i % 24, i % 60, i % 60, 20000 + i % 5000
    printf "\"digest\":\"sha256:%016x%016x%016x%016x\",\"title\":\"Article %d \\u2014 the \\\"news\\\" of the day\",", i, i * 7, (i % 3 ? round : 0), i * 17, i
    printf "\"links\":[%s],\"warc_file\":\"crawl-00001.warc.gz\",\"warc_offset\":%d,\"elapsed_ms\":%d}\n", links, i * 17000, 20 + i % 300
  } }' > "$tmp/history.ndjson"
scripts/recrawl-genpages.sh "$np" > "$tmp/pages.ndjson"
if [ "$np" = "$nbig" ]; then
  ln -s pages.ndjson "$tmp/pages-big.ndjson"
else # copies with their own URLs: /p/N becomes /pC-N
  for c in $(seq 0 $((nbig / np - 1))); do sed "s|/p/|/p$c-|" "$tmp/pages.ndjson"; done > "$tmp/pages-big.ndjson"
fi

# cpu RUNS FILE CMD...: RUNS runs of CMD reading FILE on stdin; prints the
# median CPU seconds (user + system), the least and the most, the median wall
# seconds and the median peak RSS in KB.
cpu() {
  local runs=$1 file=$2; shift 2
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%U %S %e %M' -o "$tmp/time" "$@" < "$file" > /dev/null
    cat "$tmp/time"
  done | awk '{ s = $1 + $2; if (s < 0.01) s = 0.01; c[NR] = s; w[NR] = $3; m[NR] = $4 }
    function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
    END { lo = hi = c[1]; for (i = 2; i <= NR; i++) { if (c[i] < lo) lo = c[i]; if (c[i] > hi) hi = c[i] }
      print med(c, NR), lo, hi, med(w, NR), med(m, NR) }'
}

# libbench TEST BENCH ENVVAR FILE RUNS: the median cpu-records/s of a
# library benchmark run RUNS times over FILE (one pass each).
libbench() {
  local test=$1 bench=$2 var=$3 file=$4 runs=$5
  for _ in $(seq "$runs"); do
    env "$var=$file" "$test" -test.run '^$' -test.bench "^$bench\$" -test.benchtime 1x -test.cpu 1
  done | awk -v b="$bench" '$1 == b { for (i = 1; i < NF; i++) if ($(i+1) == "cpu-records/s") v[++n] = $i }
    END { for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
      print n % 2 ? v[(n+1)/2] : (v[n/2] + v[n/2+1]) / 2 }'
}

echo "== library benchmarks (one core, in memory, the same files)"
go test ./pkg/record -run '^$' -bench 'PassThroughReuse' -cpu 1 -benchtime 2s | tee "$tmp/lib.record" | grep '^Bench'
lib_record=$(awk '/^BenchmarkPassThroughReuse/ { for (i = 1; i < NF; i++) if ($(i+1) == "cpu-records/s") print $i }' "$tmp/lib.record")
go test -c -o "$tmp/urlfeat.test" ./pkg/urlfeat
go test -c -o "$tmp/recrawl.test" ./pkg/recrawl
lib_urls=$(libbench "$tmp/urlfeat.test" BenchmarkAnnotate CRAWLKIT_BENCH_INPUT "$tmp/urls.txt" "$runs")
lib_fetch=$(libbench "$tmp/urlfeat.test" BenchmarkAnnotate CRAWLKIT_BENCH_INPUT "$tmp/fetch.ndjson" "$runs")
lib_rank=$(libbench "$tmp/recrawl.test" BenchmarkRankRecords CRAWLKIT_BENCH_PAGES "$tmp/pages.ndjson" "$runs")
lib_big=$(libbench "$tmp/recrawl.test" BenchmarkRankRecords CRAWLKIT_BENCH_PAGES "$tmp/pages-big.ndjson" "$runs")
echo "BenchmarkAnnotate: $lib_urls plain URLs, $lib_fetch fetch records per CPU second"
echo "BenchmarkRankRecords: $lib_rank pages per CPU second ($np pages), $lib_big ($nbig pages)"

echo "== processes"
printf '%-30s %7s %10s %21s %7s %6s %7s %7s %7s\n' tool MB/s records/s "(spread of runs)" "vs cat" "vs jq" "vs lib" "RSS MB" "wall s"
row() { # NAME FILE RECORDS LIBRATE JQPROGRAM CMD... (JQPROGRAM "": jq not run)
  local name=$1 file=$2 n=$3 lib=$4 jqp=$5; shift 5
  local bytes jc=""; bytes=$(stat -L -c %s "$file")
  read -r c lo hi w m < <(cpu "$runs" "$file" "$@")
  read -r cc _ < <(cpu "$runs" "$file" cat)
  [ -n "$jqp" ] && read -r jc _ < <(cpu "$runs" "$file" jq -c $jqp)
  awk -v name="$name" -v b="$bytes" -v n="$n" -v c="$c" -v lo="$lo" -v hi="$hi" -v cc="$cc" -v jc="$jc" -v lib="$lib" -v w="$w" -v m="$m" 'BEGIN {
    vl = lib == "" ? "-" : sprintf("%.2f", n / c / lib)
    vj = jc == "" ? "-" : sprintf("%.2f", jc / c)
    printf "%-30s %7.0f %10.0f %21s %7.3f %6s %7s %7.1f %7.2f\n", name, b / c / 1e6, n / c,
      sprintf("(%.0f-%.0f)", n / hi, n / lo), cc / c, vj, vl, m / 1024, w }'
}
row "recordcat (fetch records)" "$tmp/fetch.ndjson" "$nf" "$lib_record" . "$tmp/recordcat"
row "urlfeat (plain URLs)" "$tmp/urls.txt" "$nu" "$lib_urls" "-R {url:.}" "$tmp/urlfeat"
row "urlfeat (fetch records)" "$tmp/fetch.ndjson" "$nf" "$lib_fetch" . "$tmp/urlfeat"
row "recrawl rank ($np pages)" "$tmp/pages.ndjson" "$np" "$lib_rank" . \
  "$tmp/recrawl" rank --now 2026-11-21T00:00:00Z --rate "$((np * 4 / 10))" --slot 1h
row "recrawl rank ($nbig pages)" "$tmp/pages-big.ndjson" "$nbig" "$lib_big" "" \
  "$tmp/recrawl" rank --now 2026-11-21T00:00:00Z --rate "$((nbig * 4 / 10))" --slot 1h
row "recrawl estimate (300k/200k)" "$tmp/history.ndjson" 300000 "" . "$tmp/recrawl" estimate
echo "(rates per CPU second: the median of $runs runs, in brackets the slowest and fastest run;"
echo " vs cat, vs jq: their median CPU time over the tool's on the same file; jq runs 'jq -c .',"
echo " on plain URLs 'jq -cR {url:.}', and not on the $nbig pages; vs lib: the tool's rate over"
echo " its library benchmark's; RSS MB: the tool's median peak resident memory; wall s: its"
echo " median elapsed seconds on a shared machine)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
