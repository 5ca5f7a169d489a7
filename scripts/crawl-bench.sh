#!/usr/bin/env bash
# End-to-end benchmark of the crawl loop: crawls the generated web
# (internal/sitegen, six hosts, served by nginx on loopback) with
# scripts/crawl-cycle.sh until the frontier is spent, once with SHARDS=1 and
# once with SHARDS=2, and prints per stage its time summed over the turns and
# the peak memory of the tool that ran it, the pages fetched per second, and
# the sharded speed-up. Every tool runs under /usr/bin/time through a wrapper.
# Usage: scripts/crawl-bench.sh [TURNS]   (default 6; PORT=18090)
set -euo pipefail
cd "$(dirname "$0")/.."
turns=${1:-6}
port=${PORT:-18090}
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
tmp=$(mktemp -d)
trap 'scripts/serve-site.sh stop "$tmp/nginx"; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/real" "$tmp/bin"
go build -o "$tmp/real/" ./cmd/...
for tool in fetch opic recrawl sekitei barrel; do
  cat > "$tmp/bin/$tool" <<WRAP
#!/bin/sh
exec /usr/bin/time -a -o "\$MEMLOG" -f "$tool %M" "$tmp/real/$tool" "\$@"
WRAP
  chmod +x "$tmp/bin/$tool"
done
go run ./internal/cmd/sitegen -out "$tmp/site" -port "$port" 2>/dev/null
scripts/serve-site.sh start "$tmp/site" "$port" "$tmp/nginx"
echo "crawl-bench: $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), $turns turns over $(grep -c . "$tmp/site/hosts") hosts"

for shards in 1 2; do
  crawl=$tmp/crawl-$shards
  mkdir -p "$crawl"
  cp "$tmp/site/seeds.txt" "$tmp/site/good.txt" "$crawl/"
  cat > "$crawl/crawl.conf" <<CONF
FETCH_ARGS="--allow-private --hosts-file $tmp/site/hosts --delay 0 --per-host 2 --workers 32"
FRONTIER_N=1500
RECRAWL_N=200
RATE=3000
SITE_QUOTA=600
SHARDS=$shards
CONF
  export MEMLOG=$crawl/mem.log
  start=$(date +%s%N)
  for i in $(seq "$turns"); do
    CRAWLKIT_BIN=$tmp/bin scripts/crawl-cycle.sh "$crawl" 2>/dev/null
  done
  wall=$(awk -v d=$(($(date +%s%N) - start)) 'BEGIN { printf "%.2f", d / 1e9 }')
  ok=$(cat "$crawl"/batches/*/fetched.ndjson | grep -c '"status":200' || true)
  all=$(cat "$crawl"/batches/*/fetched.ndjson | grep -c . || true)
  echo
  echo "SHARDS=$shards: $turns turns in $wall s; $all URLs tried, $ok pages fetched (status 200)"
  awk '/: took / { sub(":", "", $2); t[$2] += $4 } END { for (s in t) printf "  %-9s %7.2f s\n", s, t[s] }' "$crawl/logs/cycle.log" | sort -k2 -nr
  awk '{ if ($2 > m[$1]) m[$1] = $2 } END { for (k in m) printf "  peak RSS %-8s %6.1f MB\n", k, m[k] / 1024 }' "$MEMLOG" | sort
  fetch_s=$(awk '/ fetch: took / { t += $4 } END { print t }' "$crawl/logs/cycle.log")
  awk -v n="$all" -v t="$fetch_s" -v w="$wall" -v ok="$ok" 'BEGIN { printf "  fetch stage: %.0f URLs/s; whole loop: %.0f pages/s\n", n / t, ok / w }'
  echo "$wall $fetch_s" > "$tmp/wall-$shards"
done
read -r w1 f1 < "$tmp/wall-1"
read -r w2 f2 < "$tmp/wall-2"
echo
awk -v w1="$w1" -v w2="$w2" -v f1="$f1" -v f2="$f2" 'BEGIN { printf "sharded speed-up (2 shards vs 1): whole loop %.2fx, fetch stage %.2fx\n", w1 / w2, f1 / f2 }'
