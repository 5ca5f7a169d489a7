#!/bin/sh
# barrel-quality.sh: the issue's quality measure on a real site crawled over
# HTTP. Serves the Python documentation of Debian's python3.11-doc with
# nginx on loopback, crawls it with wget into a WARC file, builds a barrel
# index from the WARC, and reports how often a page's title, as a query,
# returns that page first, and how often the short queries (the leading
# words of a title or first heading) return it first and in the top 3.
#   scripts/barrel-quality.sh [DOCROOT]
# Usage: scripts/barrel-quality.sh [DOCROOT]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
ROOT=${1:-/usr/share/doc/python3.11/html}
PORT=${PORT:-18736}
T=$(mktemp -d)
NGINX_PID=
cleanup() {
	if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

go build -o "$T/barrel" ./cmd/barrel

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
	--reject '*.js,*.css,*.png,*.svg,*.txt,*.zip,*.bz2,*.ico,*.woff,*.woff2,*.inv' \
	--warc-file="$T/python" --no-warc-keep-log \
	"http://127.0.0.1:$PORT/index.html" || true # wget exits 8 on a 404 link
echo "crawled in $(( $(date +%s) - start ))s: $(ls -l "$T/python.warc.gz" | awk '{print $5}') bytes of WARC" >&2

"$T/barrel" build --index "$T/idx" --warc "$T/python.warc.gz"
"$T/barrel" stats --index "$T/idx"
"$T/barrel" eval --index "$T/idx"
