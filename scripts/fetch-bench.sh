#!/usr/bin/env bash
# Benchmarks fetch against nginx on loopback (see docs/fetch.md):
#   1. a generated site of 10 KB pages on 8 virtual hosts: pages/s with
#      links extracted and WARC written (target >= 5,000 pages/s);
#   2. the Python 3.11 documentation (python3.11-doc) on 4 hosts: fetch vs
#      wget --warc-file on the same URL list (target >= 3x), vs fetch built
#      at BASE (default 7b4c22c; target >= its pages/s), wget2 without WARC
#      as the ceiling; RUNS (default 3) alternated runs, median and range of
#      pages/s and of user CPU per page, peak memory, the commit and the
#      load average; fetch's CPU per page by kind of work from a profile;
#   journal: the site of part 1 with --resume (records written one by one):
#      pages/s to stdout, and with --journal-sync -1 (no fsync), 1s
#      (the default group commit) and 0 (fsync as soon as records are written);
#   3. memory: MEM_URLS URLs (default 1,000,000) over MEM_HOSTS hosts
#      (default 10,000) of tiny pages, peak RSS (target < 500 MB).
# Usage: scripts/fetch-bench.sh [site|journal|docs|memory ...]   (default: all)
# Environment: PAGES (generated pages, default 20000), WORKERS, PER_HOST,
# RUNS, BASE, DOCS_FLAGS (fetch's extra flags in the docs part, default
# --backoff=false: the base has no backoff).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."

PAGES=${PAGES:-20000}
MEM_URLS=${MEM_URLS:-1000000}
MEM_HOSTS=${MEM_HOSTS:-10000}
WORKERS=${WORKERS:-64}
PER_HOST=${PER_HOST:-1}
PORT=${PORT:-18480}
RUNS=${RUNS:-3}
BASE=${BASE:-7b4c22c}
# The base has no backoff: fetch is paced as it is (--delay alone), for
# on a loaded machine the CPU's queueing reads as a slow host to --backoff.
DOCS_FLAGS=${DOCS_FLAGS---backoff=false}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
DOCS=/usr/share/doc/python3.11/html
parts=("$@")
((${#parts[@]})) || parts=(site docs memory)

for cmd in nginx wget wget2 /usr/bin/time python3; do
  command -v "$cmd" >/dev/null || { echo "fetch-bench: $cmd is missing (scripts/deps.sh installs it)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/fetch-bench.XXXXXX)
chmod a+rx "$tmp" # nginx workers run as another user
nginx_pid=""
cleanup() {
  [[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  [[ -n "${KEEP:-}" ]] && echo "fetch-bench: kept $tmp" >&2 || rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/fetch" ./cmd/fetch
COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- pkg cmd || echo +changes)" # what was built
FETCH="$tmp/fetch"

# A generated site: pages of about 10 KB, each linking to 20 others (only
# for the site part), and tiny pages for the memory part.
gen=0; [[ " ${parts[*]} " == *" site "* || " ${parts[*]} " == *" journal "* ]] && gen=$PAGES
python3 - "$tmp/site" "$gen" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
words = "crawl fetch index barrel lexicon hit anchor rank page link host queue robot delay archive record".split()
os.makedirs(root + "/p", exist_ok=True)
open(root + "/robots.txt", "w").write("User-agent: *\nDisallow: /private/\n")
for i in range(n):
    links = "".join('<li><a href="/p/%d.html">page %d</a></li>\n' % (j, j) for j in random.sample(range(n), min(20, n)))
    body = []
    size = 0
    while size < 8800:
        para = "<p>" + " ".join(random.choice(words) for _ in range(60)) + "</p>\n"
        body.append(para)
        size += len(para)
    html = ("<!doctype html><html><head><meta charset=utf-8><title>Page %d</title></head><body>\n"
            "<h1>Page %d</h1><ul>\n%s</ul>\n%s</body></html>\n") % (i, i, links, "".join(body))
    open("%s/p/%d.html" % (root, i), "w").write(html)
# Tiny pages for the memory run.
os.makedirs(root + "/t", exist_ok=True)
for i in range(100):
    open("%s/t/%d.html" % (root, i), "w").write('<title>t%d</title><a href="/t/%d.html">next</a>\n' % (i, (i + 1) % 100))
PY

# nginx: one config, several loopback addresses as virtual hosts, no daemon.
site_hosts=(); for i in $(seq 101 108); do site_hosts+=("127.0.0.$i"); done
docs_hosts=(); for i in $(seq 121 124); do docs_hosts+=("127.0.0.$i"); done
{
  echo "worker_processes 2; worker_rlimit_nofile 16384; daemon off; pid $tmp/nginx.pid; error_log $tmp/nginx-error.log warn;"
  echo "events { worker_connections 8192; }"
  echo "http {"
  echo "  access_log off; sendfile on; tcp_nopush on; tcp_nodelay on;"
  echo "  keepalive_requests 1000000; keepalive_timeout 120s; open_file_cache max=8000 inactive=60s;"
  echo "  client_body_temp_path $tmp/nx-body; proxy_temp_path $tmp/nx-proxy; fastcgi_temp_path $tmp/nx-fcgi;"
  echo "  uwsgi_temp_path $tmp/nx-uwsgi; scgi_temp_path $tmp/nx-scgi;"
  echo "  types { text/html html; text/css css; application/javascript js; text/plain txt; } default_type application/octet-stream;"
  for h in "${site_hosts[@]}"; do echo "  server { listen $h:$PORT; root $tmp/site; }"; done
  for h in "${docs_hosts[@]}"; do echo "  server { listen $h:$PORT; root $DOCS; }"; done
  echo "}"
} > "$tmp/nginx.conf"
nginx -c "$tmp/nginx.conf" -p "$tmp" &
nginx_pid=$!
for _ in $(seq 50); do
  wget -q -O /dev/null "http://127.0.0.101:$PORT/robots.txt" 2>/dev/null && break
  sleep 0.1
done

# timed NAME CMD...: runs CMD under /usr/bin/time -v; then readtime NAME sets
# WALL (s), CPU (user + system s) and RSS (peak, MB).
timed() {
  local name=$1; shift
  /usr/bin/time -v -o "$tmp/$name.time" "$@" || echo "fetch-bench: $name: $1 exited with status $?" >&2
  readtime "$name"
  kill -0 "$nginx_pid" 2>/dev/null || { echo "fetch-bench: nginx died during $name" >&2; exit 1; }
}
readtime() {
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tmp/$1.time")
  CPU=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$tmp/$1.time")
  USER_CPU=$(awk -F': ' '/User time/ {print $2}' "$tmp/$1.time")
  RSS=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$tmp/$1.time")
}

# warc_responses DIR: response records in the WARC files, read by our
# reader (fetch's tests) and, when installed, by warcio.
warc_responses() {
  local n
  if [[ -x .deps/warcio/node_modules/.bin/warcio ]]; then
    n=$(node .deps/warcio/node_modules/.bin/warcio cdx-index "$1"/*.warc.gz | wc -l)
    echo "$n (read back by warcio)"
  else
    echo "? (warcio not installed: run scripts/deps.sh)"
  fi
}

echo "fetch-bench: $(date -u +%FT%TZ), $(nproc) cores, $(go version | cut -d' ' -f3), nginx $(nginx -v 2>&1 | cut -d/ -f2)"

for part in "${parts[@]}"; do
case $part in
site)
  : > "$tmp/site-urls.txt"
  for ((i = 0; i < PAGES; i++)); do
    echo "http://${site_hosts[i % ${#site_hosts[@]}]}:$PORT/p/$i.html"
  done > "$tmp/site-urls.txt"
  timed site "$FETCH" --allow-private --delay 0 --per-host "$PER_HOST" --workers "$WORKERS" \
    --warc "$tmp/warc-site" --quiet "$tmp/site-urls.txt" > "$tmp/site.ndjson"
  ok=$(grep -c '"status":200' "$tmp/site.ndjson" || true)
  links=$(grep -c '"links":\["http' "$tmp/site.ndjson" || true)
  printf 'site: %d pages (10 KB) on %d hosts, --per-host %s --workers %s --delay 0, links + WARC: %.2f s, %.0f pages/s, CPU %.2f s (%.0f us/page), peak RSS %d MB; %d status 200, %d with links; WARC responses: %s\n' \
    "$PAGES" "${#site_hosts[@]}" "$PER_HOST" "$WORKERS" "$WALL" "$(echo "$PAGES / $WALL" | bc -l)" "$CPU" "$(echo "$CPU * 1000000 / $PAGES" | bc -l)" "$RSS" "$ok" "$links" "$(warc_responses "$tmp/warc-site")"
  ;;
journal)
  for ((i = 0; i < PAGES; i++)); do
    echo "http://${site_hosts[i % ${#site_hosts[@]}]}:$PORT/p/$i.html"
  done > "$tmp/site-urls.txt"
  for mode in stdout -1 1s 0; do
    rm -rf "$tmp/warc-j" "$tmp/j.ndjson"; mkdir -p "$tmp/warc-j"
    if [[ $mode == stdout ]]; then
      timed journal "$FETCH" --allow-private --delay 0 --per-host "$PER_HOST" --workers "$WORKERS" \
        --warc "$tmp/warc-j" --quiet "$tmp/site-urls.txt" > "$tmp/j.ndjson"
      what="to stdout (buffered)"
    else
      timed journal "$FETCH" --allow-private --delay 0 --per-host "$PER_HOST" --workers "$WORKERS" \
        --warc "$tmp/warc-j" --quiet --resume "$tmp/j.ndjson" --journal-sync="$mode" "$tmp/site-urls.txt"
      what="--resume --journal-sync=$mode"
    fi
    printf 'journal: %d pages, %s: %.2f s, %.0f pages/s, CPU %.2f s; %d records\n' \
      "$PAGES" "$what" "$WALL" "$(echo "$PAGES / $WALL" | bc -l)" "$CPU" "$(wc -l < "$tmp/j.ndjson")"
  done
  ;;
docs)
  (cd "$DOCS" && find . -name '*.html' -type f | sed 's|^\./||' | sort) > "$tmp/docs-paths.txt"
  for h in "${docs_hosts[@]}"; do sed "s|^|http://$h:$PORT/|" "$tmp/docs-paths.txt"; done > "$tmp/docs-urls.txt"
  n=$(wc -l < "$tmp/docs-urls.txt")
  mb=$(( $(cd "$DOCS" && find . -name '*.html' -type f -print0 | du -cb --files0-from=- | tail -1 | cut -f1) * ${#docs_hosts[@]} / 1000000 ))
  # fetch as it was at BASE, built from its tree.
  mkdir -p "$tmp/base-src"
  git archive "$BASE" | tar -x -C "$tmp/base-src"
  (cd "$tmp/base-src" && go build -o "$tmp/fetch-base" ./cmd/fetch)
  : > "$tmp/docs-runs.txt"
  for ((r = 1; r <= RUNS; r++)); do
    # Alternated, so that the load of the machine falls on all alike.
    rm -rf "$tmp/warc-docs" "$tmp/warc-base" "$tmp/wget" "$tmp/wget2"; mkdir -p "$tmp/wget" "$tmp/wget2"
    timed docs-fetch "$FETCH" --allow-private --delay 0 --per-host "$PER_HOST" --workers "$WORKERS" $DOCS_FLAGS \
      --warc "$tmp/warc-docs" --quiet "$tmp/docs-urls.txt" > "$tmp/docs.ndjson"
    echo "fetch $WALL $USER_CPU $CPU $RSS" >> "$tmp/docs-runs.txt"
    timed docs-base "$tmp/fetch-base" --allow-private --delay 0 --per-host "$PER_HOST" --workers "$WORKERS" \
      --warc "$tmp/warc-base" --quiet "$tmp/docs-urls.txt" > "$tmp/docs-base.ndjson"
    echo "base $WALL $USER_CPU $CPU $RSS" >> "$tmp/docs-runs.txt"
    (cd "$tmp/wget" && timed docs-wget wget -q -e robots=off --warc-file=wget -O /dev/null -i "$tmp/docs-urls.txt")
    readtime docs-wget
    echo "wget $WALL $USER_CPU $CPU $RSS" >> "$tmp/docs-runs.txt"
    (cd "$tmp/wget2" && timed docs-wget2 wget2 -q --robots=off --max-threads=8 --delete-after -i "$tmp/docs-urls.txt")
    readtime docs-wget2
    echo "wget2 $WALL $USER_CPU $CPU $RSS" >> "$tmp/docs-runs.txt"
  done
  fok=$(grep -c '"status":200' "$tmp/docs.ndjson" || true)
  fsig=$(grep -c '"text_simhash"' "$tmp/docs.ndjson" || true)
  mkdir -p "$tmp/warc-wget" && mv "$tmp/wget/wget.warc.gz" "$tmp/warc-wget/"
  # One more run of fetch with a CPU profile (not timed): CPU per page by
  # kind of work.
  rm -rf "$tmp/warc-docs"
  "$FETCH" --allow-private --delay 0 --per-host "$PER_HOST" --workers "$WORKERS" $DOCS_FLAGS --warc "$tmp/warc-docs" --quiet \
    --cpuprofile "$tmp/docs.prof" "$tmp/docs-urls.txt" > /dev/null
  go tool pprof -traces "$FETCH" "$tmp/docs.prof" > "$tmp/docs.traces" 2>/dev/null
  printf 'docs: %d pages, %d MB of HTML on %d hosts; fetch at %s, base %s; %d runs alternated; load average before: %s, after: %s\n' \
    "$n" "$mb" "${#docs_hosts[@]}" "$COMMIT" \
    "$(git rev-parse --short "$BASE")" "$RUNS" "$LOAD0" "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '  fetch %s --per-host %s --workers %s --delay 0, links + signature + WARC: %d status 200, %d with text_simhash; WARC responses: %s\n' \
    "$DOCS_FLAGS" "$PER_HOST" "$WORKERS" "$fok" "$fsig" "$(warc_responses "$tmp/warc-docs")"
  python3 - "$tmp/docs-runs.txt" "$n" "$tmp/docs.traces" "$PER_HOST" "$WORKERS" <<'PY'
import statistics, sys
runs, n, traces, per_host, workers = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
by = {}
for line in open(runs):
    name, wall, user, cpu, rss = line.split()
    by.setdefault(name, []).append((float(wall), float(user), float(cpu), int(rss)))
label = {"fetch": "fetch (this tree)", "base": "fetch at base", "wget": "wget --warc-file (1 conn.)",
         "wget2": "wget2 -8 threads, no WARC"}
def med(xs): return statistics.median(xs)
print("  %-27s %22s %24s %10s %8s" % ("", "pages/s median (range)", "user CPU us/page (range)", "CPU s", "RSS MB"))
pps = {}
for name in ("fetch", "base", "wget", "wget2"):
    rs = by.get(name, [])
    if not rs:
        continue
    p = [n / w for w, _, _, _ in rs]
    u = [1e6 * x / n for _, x, _, _ in rs]
    pps[name] = med(p)
    print("  %-27s %8.0f (%5.0f-%5.0f) %10.0f (%5.0f-%5.0f) %10.2f %8d" % (label[name], med(p), min(p), max(p),
          med(u), min(u), max(u), med([c for _, _, c, _ in rs]), max(r for _, _, _, r in rs)))
if "wget" in pps and "base" in pps:
    print("  fetch / wget --warc-file: %.1fx (target >= 3x); fetch / base: %.2fx (target >= 1); fetch / wget2: %.2fx"
          % (pps["fetch"] / pps["wget"], pps["fetch"] / pps["base"], pps["fetch"] / pps["wget2"]))
# CPU by kind of work, from the profile's stacks: a sample counts for the
# first kind in this list that a frame of its stack names.
kinds = [("main-text signature", ("pkg/textsig",)),
         ("URL resolution, normalisation", ("pkg/weburl", "pkg/urlnorm")),
         ("charset", ("pkg/charset",)), ("content decoding", ("pkg/fetch/content",)),
         ("records (JSON)", ("pkg/record",)), ("WARC writing (gzip)", ("pkg/warc",)),
         ("links scan (tags, attributes)", ("pkg/fetch/links",)),
         ("HTTP client, network", ("net/http", "net.", "crypto/")),
         ("garbage collection", ("runtime.gcBgMarkWorker",))]
tot, acc, stack, val = 0.0, {}, [], None
def unit(v):
    for suf, m in (("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9), ("s", 1.0)):
        if v.endswith(suf):
            return float(v[:-len(suf)]) * m
    return float(v)
def flush():
    global tot
    if val is None:
        return
    tot += val
    kind = next((k for k, pats in kinds if any(p in fn for fn in stack for p in pats)),
                "other (scheduler, queues, output)")
    acc[kind] = acc.get(kind, 0) + val
for line in open(traces):
    if line.startswith("-----"):
        flush(); stack, val = [], None
        continue
    parts = line.split()
    if not parts or line.startswith(("File:", "Type:", "Time:", "Duration:", "Build")):
        continue
    if not line.startswith(" " * 12) and len(parts) >= 2:
        val = unit(parts[0]); stack.append(parts[1])
    elif parts:
        stack.append(parts[0])
flush()
if tot > 0:
    print("  fetch CPU per page by kind of work (one profiled run, %.2f s sampled):" % tot)
    for k, v in sorted(acc.items(), key=lambda kv: -kv[1]):
        print("    %-36s %6.0f us/page %5.1f%%" % (k, 1e6 * v / n, 100 * v / tot))
PY
  ;;
memory)
  python3 - "$tmp" "$MEM_URLS" "$MEM_HOSTS" "$PORT" <<'PY'
import sys
tmp, n, hosts, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with open(tmp + "/mem-hosts", "w") as f:
    for h in range(hosts):
        f.write("127.0.0.101 h%05d.bench.test\n" % h)
per = (n + hosts - 1) // hosts
with open(tmp + "/mem-urls.txt", "w") as f:
    k = 0
    for p in range(per):
        for h in range(hosts):
            if k == n:
                break
            f.write("http://h%05d.bench.test:%s/t/%d.html?u=%d\n" % (h, port, p % 100, p))
            k += 1
PY
  timed memory "$FETCH" --allow-private --delay 0 --workers 256 --hosts-file "$tmp/mem-hosts" --quiet \
    "$tmp/mem-urls.txt" > "$tmp/mem.ndjson"
  ok=$(grep -c '"status":200' "$tmp/mem.ndjson" || true)
  printf 'memory: %d URLs over %d hosts (tiny pages, links, no WARC), --workers 256 --delay 0: %.1f s (%.0f pages/s), CPU %.1f s, peak RSS %d MB, %d status 200\n' \
    "$MEM_URLS" "$MEM_HOSTS" "$WALL" "$(echo "$MEM_URLS / $WALL" | bc -l)" "$CPU" "$RSS" "$ok"
  ;;
*) echo "fetch-bench: unknown part $part (site, docs, memory)" >&2; exit 2 ;;
esac
done
