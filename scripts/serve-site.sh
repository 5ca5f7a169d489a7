#!/usr/bin/env bash
# Serves a static site directory over HTTP on loopback with nginx (Debian
# package), for the demo and the end-to-end tests. The server runs as the
# current user with all its files under STATEDIR.
# Usage:
#   scripts/serve-site.sh start ROOT PORT STATEDIR   # 127.0.0.1:PORT, returns when ready
#   scripts/serve-site.sh stop STATEDIR
#
# A path /a/b/ is served from ROOT/a/b/index.html and a query ?k=v from the
# file "index.html?k=v" (or "name?k=v"), the layout internal/sitegen writes.
# Each subdirectory of ROOT whose name holds a dot (chronicle.test) is also
# served as a virtual host of that name; other names get ROOT itself.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail

cmd=${1:-}
case "$cmd" in
start)
  root=$(cd "$2" && pwd); port=$3; state=$4
  mkdir -p "$state"; state=$(cd "$state" && pwd)
  nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
  server() { # NAME ROOT [default]
    cat <<SERVER
  server {
    listen 127.0.0.1:$port ${3:-};
    server_name $1;
    root $2;
    location = /robots.txt { default_type text/plain; }
    location / {
      try_files "\${uri}index.html?\$args" "\${uri}?\$args" \$uri "\${uri}index.html" =404;
    }
  }
SERVER
  }
  servers=$(server _ "$root" default_server)
  for d in "$root"/*.*/; do
    [[ -d "$d" ]] || continue
    servers+=$'\n'$(server "$(basename "$d")" "${d%/}")
  done
  # Started as root, nginx would run its workers as nobody, who may not
  # read ROOT (a private temporary directory, say): keep the caller's user.
  user_line=""
  [[ $(id -u) -eq 0 ]] && user_line="user $(id -un) $(id -gn);"
  cat > "$state/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid $state/nginx.pid;
error_log $state/error.log warn;
events { worker_connections 1024; }
http {
  access_log $state/access.log;
  client_body_temp_path $state/tmp;
  proxy_temp_path $state/tmp;
  fastcgi_temp_path $state/tmp;
  uwsgi_temp_path $state/tmp;
  scgi_temp_path $state/tmp;
  types { text/html html; text/plain txt; text/css css; image/png png; }
  default_type text/html;
  charset utf-8;
  sendfile on;
  keepalive_requests 100000;
$servers
}
CONF
  mkdir -p "$state/tmp"
  "$nginx_bin" -c "$state/nginx.conf" -g 'daemon off;' -e "$state/error.log" > "$state/nginx.out" 2>&1 &
  echo $! > "$state/server.pid"
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then exit 0; fi
    sleep 0.05
  done
  echo "serve-site: nginx did not start on 127.0.0.1:$port; see $state/error.log" >&2
  cat "$state/nginx.out" "$state/error.log" >&2 || true
  exit 1
  ;;
stop)
  state=$2
  if [[ -f "$state/server.pid" ]]; then
    kill "$(cat "$state/server.pid")" 2>/dev/null || true
    rm -f "$state/server.pid"
  fi
  ;;
*)
  echo "usage: serve-site.sh start ROOT PORT STATEDIR | stop STATEDIR" >&2
  exit 2
  ;;
esac
