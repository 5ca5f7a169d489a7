#!/bin/sh
# Peak RSS of fetch against gzip bombs: N hosts on one loopback address each
# serve a page of 1 GiB of zeros gzipped to about 1 MiB, fetched by the
# fetch of this tree and by the fetch of a base commit (BASE, default
# main) in the same run, so the two figures are comparable.
#
#   scripts/fetch-bomb-bench.sh            # N = 1, 3, 6
#   BASE=7b4c22c scripts/fetch-bomb-bench.sh 6
# Each fetch runs RUNS times (default 3, at least 3): the median peak RSS
# and its range.
# Usage: [BASE=REV] [RUNS=N] scripts/fetch-bomb-bench.sh [N...]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
base=${BASE:-main}
runs=${RUNS:-3}
[ "$runs" -ge 3 ] || { echo "RUNS must be at least 3" >&2; exit 2; }
# median_range prints the median of the numbers on stdin, one a line, and their range.
median_range() {
	sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%g (%g-%g)", m, v[1], v[NR]}'
}
counts=${*:-1 3 6}
tmp=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/fetch-new" ./cmd/fetch
mkdir "$tmp/old"
git archive "$base" | tar -x -C "$tmp/old"
(cd "$tmp/old" && go build -o "$tmp/fetch-old" ./cmd/fetch)

python3 - "$tmp/bomb.gz" <<'PY'
import gzip, sys
with gzip.open(sys.argv[1], "wb", compresslevel=9) as f:
    zero = b"\0" * (1 << 20)
    for _ in range(1024):
        f.write(zero)
PY
cat > "$tmp/server.py" <<'PY'
import http.server, sys
body = open(sys.argv[1], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/robots.txt":
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.111", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$tmp/server.py" "$tmp/bomb.gz" > "$tmp/port" &
server=$!
while [ ! -s "$tmp/port" ]; do sleep 0.1; done
port=$(cat "$tmp/port")
echo "commit $(git rev-parse --short HEAD), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
echo "bomb: $(stat -c %s "$tmp/bomb.gz") bytes gzipped, 1 GiB decoded; base $base ($(git rev-parse --short "$base"))"
for n in $counts; do
	: > "$tmp/urls"
	resolve=""
	for i in $(seq 1 "$n"); do
		echo "http://bomb$i.test:$port/" >> "$tmp/urls"
		resolve="$resolve --resolve bomb$i.test:127.0.0.111"
	done
	for v in old new; do
		# --queue-by host where the flag exists: each bomb on its own queue, all at once.
		extra=""
		[ $v = new ] && extra="--queue-by host"
		: > "$tmp/rss-$v"
		for _ in $(seq "$runs"); do
			/usr/bin/time -f %M -o "$tmp/rss" "$tmp/fetch-$v" --allow-private --delay 0 --quiet $extra $resolve "$tmp/urls" > "$tmp/out-$v"
			echo $(($(cat "$tmp/rss") / 1024)) >> "$tmp/rss-$v"
		done
		eval "rss_$v=\$(median_range < "$tmp/rss-$v")"
		eval "med_$v=\$(median_range < "$tmp/rss-$v" | cut -d' ' -f1)"
	done
	echo "$n bombs: peak RSS MB, median (range) of $runs runs: base $rss_old, this tree $rss_new ($(awk "BEGIN{printf \"%.2f\", $med_new/$med_old}")x); errors: $(grep -o '"error":"[a-z_]*' "$tmp/out-new" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
