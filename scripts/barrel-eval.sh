#!/bin/sh
# barrel-eval.sh: barrel judged by human relevance. Serves the Python
# documentation of Debian's python3.11-doc with nginx on loopback, crawls
# it with wget into a WARC file (without the genindex pages: their links
# are the judgments, and as anchor text they would hand them to the
# ranking), builds a barrel index from the WARC, and prints MRR@10, nDCG@10
# and Recall@10 of barrel, of a plain BM25 and of bleve (its default tf-idf
# scoring and its BM25 model) on the held-out half of the
# queries made from the documentation's index of terms, then the same on
# generated Russian pages with and without stemming. Then it learns a
# ranking model on the tuning half (barrel train, seed 1) and prints
# barrel eval with it: titles, short queries, and the judged held-out
# half for the learnt model, the hand weights and the plain BM25.
#   scripts/barrel-eval.sh [DOCROOT]
# HALF=tuning|held-out|both picks the half reported; KEEP=DIR keeps the
# WARC file and the learnt model.txt there (for tuning runs of
# internal/cmd/barreleval).
# Usage: scripts/barrel-eval.sh [DOCROOT]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
ROOT=${1:-/usr/share/doc/python3.11/html}
PORT=${PORT:-18737}
T=$(mktemp -d)
cleanup() {
	scripts/serve-site.sh stop "$T/nginx" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

go build -o "$T/barrel" ./cmd/barrel
go build -o "$T/barreleval" ./internal/cmd/barreleval
scripts/serve-site.sh start "$ROOT" "$PORT" "$T/nginx"

echo "crawling $ROOT over http://127.0.0.1:$PORT/ with wget --warc-file ..." >&2
start=$(date +%s)
wget -q -r -l inf --no-parent -nH -P "$T/mirror" --delete-after \
	--reject-regex '/genindex' --reject '*.js,*.css,*.png,*.svg,*.txt,*.zip,*.bz2,*.ico,*.woff,*.woff2,*.inv' \
	--warc-file="$T/python" --no-warc-keep-log \
	"http://127.0.0.1:$PORT/index.html" || true # wget exits 8 on a 404 link
echo "crawled in $(( $(date +%s) - start ))s: $(ls -l "$T/python.warc.gz" | awk '{print $5}') bytes of WARC" >&2

if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$T/python.warc.gz" "$KEEP/"; fi
"$T/barrel" build --index "$T/idx" --warc "$T/python.warc.gz"
"$T/barreleval" -index "$T/idx" -docroot "$ROOT" -half "${HALF:-held-out}"
# bleve on the same pages and queries (a module of its own: the toolkit does
# not require bleve)
(cd pkg/barrel/blevebench && go run ./cmd/bleveeval -index "$T/idx" -docroot "$ROOT" -half "${HALF:-held-out}")
"$T/barreleval" -russian | tail -n +3
"$T/barrel" train --index "$T/idx" --genindex "$ROOT" --seed 1 --out "$T/model.txt"
if [ -n "${KEEP:-}" ]; then cp "$T/model.txt" "$KEEP/"; fi
"$T/barrel" eval --index "$T/idx" --genindex "$ROOT" --model "$T/model.txt"
