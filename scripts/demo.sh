#!/usr/bin/env bash
# The main job on the bundled data, on a fresh machine with no internet:
#  1. urlfeat's homework job on the bundled sites (lenta.ru, ru.wikipedia.org),
#     compared with the course's gold files;
#  2. a crawl of a generated web of six sites (internal/sitegen, seeded)
#     served by nginx on loopback: several turns of scripts/crawl-cycle.sh
#     (select, sekitei filter, fetch, opic, recrawl estimate, barrel index),
#     then the pages fetched, the most important pages, the segments found,
#     the recrawl schedule and the answer to a search query.
# Usage: scripts/demo.sh [OUTDIR]   (default: out/demo; TURNS=5, PORT=18080)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/demo}
turns=${TURNS:-5}
port=${PORT:-18080}
mkdir -p "$out" bin
out=$(cd "$out" && pwd)

scripts/deps.sh >/dev/null
echo "== building the tools into bin/"
for tool in cmd/*/; do
  go build -o "bin/$(basename "$tool")" "./$tool"
done
ls bin

echo
echo "===== 1. urlfeat: the sekitei homework on the bundled sites"
for site in lenta wikipedia; do
  good=testdata/sekitei/urls.$site.examined
  general=testdata/sekitei/urls.$site.general
  gold=testdata/sekitei/$site.fea
  echo
  echo "== $site: urlfeat sample (1000 good + 1000 general URLs, features seen > 0.1*N times)"
  bin/urlfeat sample --good "$good" --general "$general" > "$out/$site.fea"
  head -n 8 "$out/$site.fea"
  total=$(wc -l < "$out/$site.fea")
  [[ $total -gt 8 ]] && echo "... ($total lines in $out/$site.fea)"
  present=$(cut -f1 "$gold" | grep -c -x -F -f <(cut -f1 "$out/$site.fea") || true)
  echo "gold features present: $present of $(wc -l < "$gold"); lines: $total (gold $(wc -l < "$gold"))"
done

echo
echo "===== 2. a crawl of a generated web of six sites on loopback"
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
rm -rf "$out/site" "$out/crawl" "$out/nginx"
go run ./internal/cmd/sitegen -out "$out/site" -port "$port"
scripts/serve-site.sh start "$out/site" "$port" "$out/nginx"
trap 'scripts/serve-site.sh stop "$out/nginx"' EXIT
mkdir -p "$out/crawl"
cp "$out/site/seeds.txt" "$out/site/good.txt" "$out/crawl/"
cat > "$out/crawl/crawl.conf" <<CONF
FETCH_ARGS="--allow-private --hosts-file $out/site/hosts --delay 0 --per-host 4 --workers 32"
FRONTIER_N=1500
RECRAWL_N=200
RECRAWL_ARGS="--default-change-rate 0.2"
RATE=3000
SITE_QUOTA=600
SHARDS=2
CONF
echo "seed: $(cat "$out/crawl/seeds.txt"); $(grep -c . "$out/site/hosts") hosts; crawl directory $out/crawl"
for i in $(seq "$turns"); do
  echo
  echo "== turn $i"
  scripts/crawl-cycle.sh "$out/crawl" 2>&1 | grep -v '^fetch: ' | sed 's/^[0-9TZ:-]* //'
done

crawl=$out/crawl
echo
echo "== pages fetched"
cat "$crawl"/batches/*/fetched.ndjson > "$out/fetched.ndjson"
awk 'match($0, /"status":[0-9]+/) { s[substr($0, RSTART + 9, RLENGTH - 9)]++; next }
     match($0, /"error":"[a-z_]+/) { e[substr($0, RSTART + 9, RLENGTH - 9)]++ }
     END { for (k in s) printf "  status %s: %d\n", k, s[k]; for (k in e) printf "  error %s: %d\n", k, e[k] }' \
  "$out/fetched.ndjson" | sort
echo "  distinct hosts: $(grep -o '"host":"[^"]*"' "$out/fetched.ndjson" | sort -u | wc -l), WARC: $(du -sh "$crawl/warc" | cut -f1)"

echo
echo "== the most important pages (opic)"
# One opic state a shard; show ranks the pages of all of them together.
opic_states=()
for f in "$crawl"/state/opic*.state; do opic_states+=(--state "$f"); done
bin/opic show "${opic_states[@]}" --top 10 --tsv --header | cut -f1,4

echo
echo "== segments found (sekitei): the largest of two hosts, with their good URLs and quotas"
printf 'host\tsegment\tregex\turls\tgood\tgood_share\tquota\n'
for h in chronicle.test wiki.test; do
  bin/sekitei quota --tsv --site-quota 600 <(grep "\"host\":\"$h:$port\"" "$crawl/state/segments.ndjson") |
    sort -t$'\t' -k4,4nr | sed -n 1,4p | cut -f1-7
done
echo "  ($(grep -c . "$crawl/state/segments.ndjson") segments over $(grep -c . "$out/site/hosts") hosts in $crawl/state/segments.ndjson)"

echo
echo "== the recrawl schedule (recrawl rank --all at 3,000 crawls a day, soonest first)"
bin/opic show "${opic_states[@]}" > "$out/importance.ndjson"
bin/recrawl rank --all --default-change-rate 0.2 --rate 3000 --weight-field importance --weights "$out/importance.ndjson" \
  "$crawl/state/pages.ndjson" 2>/dev/null |
  awk 'match($0, /"url":"[^"]*"/) { u = substr($0, RSTART + 7, RLENGTH - 8) }
       match($0, /"change_rate":[0-9.e-]+/) { r = substr($0, RSTART + 14, RLENGTH - 14) }
       match($0, /"next_fetch":"[^"]*"/) { n = substr($0, RSTART + 14, RLENGTH - 15); printf "%s\t%.3f/day\t%s\n", n, r, u }' |
  sort | sed -n 1,8p
echo "  ($(grep -c . "$crawl/state/pages.ndjson") pages with change-rate estimates)"

# The query: the title of the most important article fetched.
title=""
for u in $(bin/opic show "${opic_states[@]}" --top 200 --tsv | cut -f1 | grep -E '/(news|articles)/[0-9]' || true); do
  title=$(grep -F "\"url\":\"$u\"" "$out/fetched.ndjson" | grep -o '"title":"[^"]*"' | head -1 | cut -d'"' -f4 || true)
  [[ -n "$title" ]] && break
done
title=${title:-metro station}
echo
echo "== search (barrel): $title"
bin/barrel search --index "$crawl/index" --n 3 --no-snippets "$title"
bin/barrel search --index "$crawl/index" --n 1 "$title" | grep -o '"snippet":"[^"]*"' || true

echo
echo "Outputs are in $out/; the crawl directory is $crawl (logs in $crawl/logs/cycle.log)."
