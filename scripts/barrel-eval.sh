#!/bin/sh
# barrel-eval.sh: barrel judged by human relevance. Serves the Python
# documentation of Debian's python3.11-doc with nginx on loopback, crawls
# it with wget into a WARC file (without the genindex pages: their links
# are the judgments, and as anchor text they would hand them to the
# ranking), builds a barrel index from the WARC, and prints MRR@10, nDCG@10
# and Recall@10 of barrel, of a plain BM25 and of bleve (its default tf-idf
# scoring and its BM25 model) on the held-out half of the
# queries made from the documentation's index of terms, then the same on
# generated Russian pages with and without stemming.
#   scripts/barrel-eval.sh [DOCROOT]
# HALF=tuning|held-out|both picks the half reported; KEEP=DIR keeps the
# WARC file there (for tuning runs of internal/cmd/barreleval).
set -eu
cd "$(dirname "$0")/.."
ROOT=${1:-/usr/share/doc/python3.11/html}
PORT=${PORT:-18737}
T=$(mktemp -d)
NGINX_PID=
cleanup() {
	if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

go build -o "$T/barrel" ./cmd/barrel
go build -o "$T/barreleval" ./internal/cmd/barreleval

mkdir -p "$T/nginx"
cat > "$T/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
events { worker_connections 64; }
http {
	include /etc/nginx/mime.types;
	access_log off;
	client_body_temp_path $T/nginx/body;
	proxy_temp_path $T/nginx/proxy;
	fastcgi_temp_path $T/nginx/fastcgi;
	uwsgi_temp_path $T/nginx/uwsgi;
	scgi_temp_path $T/nginx/scgi;
	server {
		listen 127.0.0.1:$PORT;
		root $ROOT;
	}
}
CONF
nginx -c "$T/nginx.conf" -p "$T/nginx" &
NGINX_PID=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
	curl -sf -o /dev/null "http://127.0.0.1:$PORT/index.html" 2>/dev/null && break
	wget -q -O /dev/null "http://127.0.0.1:$PORT/index.html" 2>/dev/null && break
	sleep 0.3
done

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
