#!/usr/bin/env bash
# The main job on the bundled data, on a fresh machine with no internet:
# builds the tools and runs urlfeat's homework job on the bundled sites
# (lenta.ru and ru.wikipedia.org), comparing each with the course's gold file.
# Usage: scripts/demo.sh [OUTDIR]   (default: out/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/demo}
mkdir -p "$out" bin

scripts/deps.sh >/dev/null
echo "== building the tools into bin/"
for tool in cmd/*/; do
  name=$(basename "$tool")
  [[ -f "$tool/main.go" ]] && go build -o "bin/$name" "./$tool"
done
ls bin

for site in lenta wikipedia; do
  good=testdata/sekitei/urls.$site.examined
  general=testdata/sekitei/urls.$site.general
  gold=testdata/sekitei/$site.fea
  echo
  echo "== $site: urlfeat sample (1000 good + 1000 general URLs, features seen > 0.1*N times)"
  bin/urlfeat sample --good "$good" --general "$general" > "$out/$site.fea"
  head -n 12 "$out/$site.fea"
  total=$(wc -l < "$out/$site.fea")
  [[ $total -gt 12 ]] && echo "... ($total lines in $out/$site.fea)"
  present=$(cut -f1 "$gold" | grep -c -x -F -f <(cut -f1 "$out/$site.fea") || true)
  echo "gold features present: $present of $(wc -l < "$gold"); lines: $total (gold $(wc -l < "$gold"))"
done

echo
echo "== per-URL features of one URL (NDJSON; --tsv for rows)"
head -n 1 testdata/sekitei/urls.lenta.examined | bin/urlfeat
echo
echo "Outputs are in $out/."
