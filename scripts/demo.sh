#!/usr/bin/env bash
# The main job on the bundled data, on a fresh machine with no internet:
#  1. urlfeat's homework job on the bundled sites (lenta.ru, ru.wikipedia.org),
#     compared with the course's gold files;
#  2. a crawl of a generated web of six sites (internal/sitegen, seeded)
#     served by nginx on loopback: several turns of scripts/crawl-cycle.sh
#     (select from the crawl queue, sekitei admit, fetch, opic, recrawl,
#     sekitei and barrel updates), then the pages fetched, the most important
#     pages, the segments found, the next pages of the crawl queue and the
#     answer to a search query.
# Needs Go (go.mod says which version) and nginx (Debian package nginx),
# nothing else: it installs nothing, and says what is missing.
# Usage: scripts/demo.sh [OUTDIR]   (default: out/demo; TURNS=5, PORT=18080)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/demo}
turns=${TURNS:-5}
port=${PORT:-18080}
missing=()
command -v go >/dev/null || missing+=("Go (https://go.dev/dl/; the version in go.mod)")
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=("nginx (Debian: sudo apt-get install nginx)")
if ((${#missing[@]})); then
  for m in "${missing[@]}"; do echo "demo: missing: $m" >&2; done
  echo "demo: the demo needs only Go and nginx; install the above and run it again" >&2
  exit 2
fi
mkdir -p "$out" bin
out=$(cd "$out" && pwd)

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
# The generated sites all answer on 127.0.0.1: fetch keeps its politeness
# per host name (--queue-by host), as if each site had a server of its own,
# instead of pacing all six as one server (its default, --queue-by ip).
cat > "$out/crawl/crawl.conf" <<CONF
FETCH_ARGS="--allow-private --hosts-file $out/site/hosts --delay 0 --per-host 4 --workers 32 --queue-by host"
TURN_N=1700
RATE=3000
SITE_QUOTA=600
SHARDS=2
CONF
echo "seed: $(cat "$out/crawl/seeds.txt"); $(grep -c . "$out/site/hosts") hosts; crawl directory $out/crawl"
for i in $(seq "$turns"); do
  echo
  echo "== turn $i"
  # The turn's log lines, without the time stamps and fetch's own summary.
  scripts/crawl-cycle.sh "$out/crawl" 2>&1 | grep -v '^fetch: [0-9]* URLs in' | sed 's/^[0-9TZ:-]* //'
done

crawl=$out/crawl
echo
echo "== pages fetched (fetch stats over the turns kept)"
cat "$crawl"/batches/*/fetched.ndjson > "$out/fetched.ndjson"
bin/fetch stats "$out/fetched.ndjson" | sed 's/^/  /'
echo "  WARC: $(du -sh "$crawl/warc" | cut -f1)"

echo
echo "== the most important pages (opic, over both shards' states)"
opic_states=()
for f in "$crawl"/state/opic.*.db; do opic_states+=(--state "$f"); done
bin/opic show "${opic_states[@]}" --top 10 --tsv --header | cut -f1,4

echo
echo "== segments found (sekitei): the first segments of two hosts, with their good URLs, quotas and use"
for h in chronicle.test wiki.test; do
  bin/sekitei state --state "$crawl/state/sekitei.db" "$h:$port" | sed -n 1,4p
done

echo
echo "== the crawl queue now: the next pages it would take, new and due again in one ranking"
for i in 0 1; do
  bin/recrawl next --state "$crawl/state/recrawl.$i.db" --shard "$i/2" --n 6 --rate 3000 > "$out/next.$i.ndjson"
done
bin/recrawl merge --n 6 "$out"/next.*.ndjson
first=$(bin/opic show "${opic_states[@]}" --top 1 --tsv | cut -f1)
for i in 0 1; do
  bin/recrawl explain --state "$crawl/state/recrawl.$i.db" --shard "$i/2" --n 1700 --rate 3000 "$first" 2>/dev/null || true
done

# The query: the title of the most important article fetched, as stored.
title=""
for u in $(bin/opic show "${opic_states[@]}" --top 200 --tsv | cut -f1 | grep -E '/(news|articles)/[0-9]' || true); do
  title=$(bin/barrel get --index "$crawl/index" "$u" 2>/dev/null | grep -o '<title>[^<]*' | head -1 | sed 's/<title>//' || true)
  [[ -n "$title" ]] && break
done
title=${title:-metro station}
echo
echo "== search (barrel): $title"
bin/barrel search --index "$crawl/index" --n 3 --no-snippets "$title"
bin/barrel search --index "$crawl/index" --n 1 "$title"

echo
echo "Outputs are in $out/; the crawl directory is $crawl (logs in $crawl/logs/cycle.log)."
