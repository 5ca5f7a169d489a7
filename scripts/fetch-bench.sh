#!/usr/bin/env bash
# Benchmarks fetch against nginx on loopback (see docs/fetch.md):
#   1. a generated site of 10 KB pages on 8 virtual hosts: pages/s with
#      links extracted and WARC written (target >= 5,000 pages/s);
#   2. the Python 3.11 documentation (python3.11-doc) on 4 hosts: fetch vs
#      wget --warc-file on the same URL list (target >= 3x), wget2 without
#      WARC as the ceiling; peak memory of each; every WARC read back;
#   journal: the site of part 1 with --resume (records written one by one):
#      pages/s to stdout, and with --journal-sync -1 (no fsync), 1s
#      (the default group commit) and 0 (fsync as soon as records are written);
#   3. memory: MEM_URLS URLs (default 1,000,000) over MEM_HOSTS hosts
#      (default 10,000) of tiny pages, peak RSS (target < 500 MB).
# Usage: scripts/fetch-bench.sh [site|journal|docs|memory ...]   (default: all)
# Environment: PAGES (generated pages, default 20000), WORKERS, PER_HOST.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."

PAGES=${PAGES:-20000}
MEM_URLS=${MEM_URLS:-1000000}
MEM_HOSTS=${MEM_HOSTS:-10000}
WORKERS=${WORKERS:-64}
PER_HOST=${PER_HOST:-1}
PORT=${PORT:-18480}
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
  timed docs-fetch "$FETCH" --allow-private --delay 0 --per-host "$PER_HOST" --workers "$WORKERS" \
    --warc "$tmp/warc-docs" --quiet "$tmp/docs-urls.txt" > "$tmp/docs.ndjson"
  fw=$WALL fr=$RSS fc=$CPU
  fok=$(grep -c '"status":200' "$tmp/docs.ndjson" || true)
  mkdir -p "$tmp/wget"
  (cd "$tmp/wget" && timed docs-wget wget -q -e robots=off --warc-file=wget -O /dev/null -i "$tmp/docs-urls.txt")
  readtime docs-wget
  ww=$WALL wr=$RSS wc=$CPU
  mkdir -p "$tmp/wget2"
  (cd "$tmp/wget2" && timed docs-wget2 wget2 -q --robots=off --max-threads=8 --delete-after -i "$tmp/docs-urls.txt")
  readtime docs-wget2
  w2w=$WALL w2r=$RSS w2c=$CPU
  mkdir -p "$tmp/warc-wget" && mv "$tmp/wget/wget.warc.gz" "$tmp/warc-wget/"
  printf 'docs: %d pages, %d MB of HTML on %d hosts\n' "$n" "$mb" "${#docs_hosts[@]}"
  printf '  fetch --per-host %s --workers %s --delay 0, links + WARC: %.2f s (%.0f pages/s), CPU %.2f s, peak RSS %d MB, %d status 200, WARC responses: %s\n' \
    "$PER_HOST" "$WORKERS" "$fw" "$(echo "$n / $fw" | bc -l)" "$fc" "$fr" "$fok" "$(warc_responses "$tmp/warc-docs")"
  printf '  wget --warc-file (1 connection):               %.2f s (%.0f pages/s), CPU %.2f s, peak RSS %d MB, WARC responses: %s\n' \
    "$ww" "$(echo "$n / $ww" | bc -l)" "$wc" "$wr" "$(warc_responses "$tmp/warc-wget")"
  printf '  wget2 --max-threads=8, no WARC (ceiling):      %.2f s (%.0f pages/s), CPU %.2f s, peak RSS %d MB\n' \
    "$w2w" "$(echo "$n / $w2w" | bc -l)" "$w2c" "$w2r"
  printf '  fetch / wget throughput: %.1fx; fetch / wget2: %.2fx\n' "$(echo "$ww / $fw" | bc -l)" "$(echo "$w2w / $fw" | bc -l)"
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
