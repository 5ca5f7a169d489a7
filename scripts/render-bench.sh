#!/usr/bin/env bash
# Benchmarks fetch --render (see docs/fetch.md, "Rendering"): pages per
# second and peak memory (fetch and its chromium, summed over the process
# tree, sampled every 0.1 s) of --render never and --render auto (and
# --render always on the js site), RUNS times each (default 3),
# median and spread, on two sites behind nginx on loopback:
#   docs  the Python 3.11 documentation (python3.11-doc): static pages,
#         none an application shell, so auto must cost (almost) nothing;
#   js    a generated application-shell site (testdata/jssite's app.js):
#         JS_PAGES pages (default 200) whose text and links a script builds
#         from an XHR to a JSON endpoint.
# Usage: scripts/render-bench.sh [docs|js ...]   (default: both)
# Environment: RUNS, JS_PAGES, WORKERS (default 32), TABS (default 2).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
JS_PAGES=${JS_PAGES:-200}
WORKERS=${WORKERS:-32}
TABS=${TABS:-2}
PORT=${PORT:-18490}
DOCS=/usr/share/doc/python3.11/html
parts=("$@")
((${#parts[@]})) || parts=(docs js)

for cmd in nginx chromium python3; do
  command -v "$cmd" >/dev/null || { echo "render-bench: $cmd is missing (scripts/deps.sh installs it)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/render-bench.XXXXXX)
chmod a+rx "$tmp"
nginx_pid=""
cleanup() {
  [[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  [[ -n "${KEEP:-}" ]] && echo "render-bench: kept $tmp" >&2 || rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/fetch" ./cmd/fetch

# The JS site: shells like testdata/jssite's, each linking three others
# through its JSON.
python3 - "$tmp/js" "$JS_PAGES" testdata/jssite <<'PY'
import json, os, random, shutil, sys
root, n, src = sys.argv[1], int(sys.argv[2]), sys.argv[3]
random.seed(1)
os.makedirs(root + "/api", exist_ok=True)
os.makedirs(root + "/private", exist_ok=True)
for f in ("app.js", "robots.txt", "private/tracker.js"):
    shutil.copy(os.path.join(src, f), os.path.join(root, f))
shell = open(os.path.join(src, "a.html")).read()
for i in range(n):
    open("%s/p%d.html" % (root, i), "w").write(shell.replace('data-page="a"', 'data-page="p%d"' % i))
    d = {"title": "Page %d" % i, "text": "Rendered text of page %d." % i,
         "links": ["/p%d.html" % j for j in random.sample(range(n), min(3, n))]}
    open("%s/api/p%d.json" % (root, i), "w").write(json.dumps(d))
PY

{
  echo "worker_processes 2; daemon off; pid $tmp/nginx.pid; error_log $tmp/nginx-error.log warn;"
  echo "events { worker_connections 4096; }"
  echo "http {"
  echo "  access_log off; sendfile on; tcp_nodelay on; keepalive_requests 1000000;"
  echo "  client_body_temp_path $tmp/nx-body; proxy_temp_path $tmp/nx-proxy; fastcgi_temp_path $tmp/nx-fcgi;"
  echo "  uwsgi_temp_path $tmp/nx-uwsgi; scgi_temp_path $tmp/nx-scgi;"
  echo "  types { text/html html; text/css css; application/javascript js; application/json json; text/plain txt; } default_type application/octet-stream;"
  for h in 127.0.0.141 127.0.0.142 127.0.0.143 127.0.0.144; do echo "  server { listen $h:$PORT; root $DOCS; }"; done
  echo "  server { listen 127.0.0.145:$PORT; root $tmp/js; }"
  echo "}"
} > "$tmp/nginx.conf"
nginx -c "$tmp/nginx.conf" &
nginx_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.145:$PORT/robots.txt" 2>/dev/null && break; sleep 0.1; done

(cd "$DOCS" && find . -name '*.html' -type f | sed 's|^\./||' | sort) > "$tmp/docs-paths.txt"
for h in 127.0.0.141 127.0.0.142 127.0.0.143 127.0.0.144; do sed "s|^|http://$h:$PORT/|" "$tmp/docs-paths.txt"; done > "$tmp/docs-urls.txt"
for i in $(seq 0 $((JS_PAGES - 1))); do echo "http://127.0.0.145:$PORT/p$i.html"; done > "$tmp/js-urls.txt"

# treerss PID: the resident memory of PID and its descendants, in MiB.
treerss() {
  ps -eo pid=,ppid=,rss= | awk -v root="$1" '
    { parent[$1] = $2; rss[$1] = $3 }
    END { for (p in rss) { q = p; while (q != "" && q != 0 && q != root) q = parent[q]; if (q == root) s += rss[p] } printf "%.0f", s / 1024 }'
}

# run NAME MODE URLS: one fetch; prints "seconds peak_MiB rendered cpu_s
# fetch_maxrss_MiB": cpu_s the user+system CPU of fetch and its children
# (chromium, once it exits), fetch_maxrss the largest peak RSS of one
# process, fetch or one of the chromium processes it waited for
# (/usr/bin/time %M: ru_maxrss of a process and its waited children).
run() {
  local name=$1 mode=$2 urls=$3 start end peak=0 r pid
  start=$(date +%s.%N)
  /usr/bin/time -f '%U %S %M' -o "$tmp/$name.time" "$tmp/fetch" --allow-private --delay 0 --workers "$WORKERS" --render "$mode" --render-tabs "$TABS" \
    --warc "$tmp/warc-$name" "$urls" > "$tmp/$name.ndjson" 2> "$tmp/$name.err" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    r=$(treerss "$pid"); ((r > peak)) && peak=$r
    sleep 0.1
  done
  wait "$pid" || echo "render-bench: $name exited with status $?" >&2
  end=$(date +%s.%N)
  rm -rf "$tmp/warc-$name"
  echo "$(echo "$end - $start" | bc -l) $peak $(grep -c '"rendered":true' "$tmp/$name.ndjson" || true)" \
    "$(awk '{printf "%.2f %.0f", $1 + $2, $3 / 1024}' "$tmp/$name.time")"
}

# stats: median and min-max of stdin's numbers.
stats() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "median %.1f (%.1f-%.1f)", m, a[1], a[NR]}'; }

echo "render-bench: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $RUNS runs, --workers $WORKERS --render-tabs $TABS"
for part in "${parts[@]}"; do
  case "$part" in
  docs) urls=$tmp/docs-urls.txt modes="never auto" ;;
  js) urls=$tmp/js-urls.txt modes="never auto always" ;;
  *) echo "render-bench: unknown part $part (docs, js)" >&2; exit 2 ;;
  esac
  n=$(wc -l < "$urls")
  for mode in $modes; do : > "$tmp/$part-$mode.res"; done
  for i in $(seq "$RUNS"); do
    for mode in $modes; do # interleaved, so a load change hits both
      run "$part-$mode-$i" "$mode" "$urls" >> "$tmp/$part-$mode.res"
    done
  done
  for mode in $modes; do
    f=$tmp/$part-$mode.res
    printf '%-4s --render %-6s %d pages: pages/s %s; CPU ms/page %s; peak MiB (tree) %s; largest process max RSS MiB %s; rendered %s\n' "$part" "$mode" "$n" \
      "$(awk -v n="$n" '{print n/$1}' "$f" | stats)" "$(awk -v n="$n" '{print 1000*$4/n}' "$f" | stats)" \
      "$(awk '{print $2}' "$f" | stats)" "$(awk '{print $5}' "$f" | stats)" "$(awk '{print $3}' "$f" | sort -u | tr '\n' ' ')"
  done
done
echo "render-bench: load average after $(cut -d' ' -f1-3 /proc/loadavg)"
