#!/bin/sh
# recrawl-genpages.sh N > pages.ndjson: N seeded page records for recrawl's
# CLI benchmarks (docs/recrawl.md): 10,000 hosts, log-normal weights, change
# rates log-uniform in 0.05..5 a day, last fetches up to 10 days before
# 2026-11-21T00:00:00Z, a host_rate on two hosts of three.
# Usage: scripts/recrawl-genpages.sh N > pages.ndjson
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
exec python3 - "${1:-1000000}" <<'PY'
import datetime, math, random, sys
random.seed(1)
now = datetime.datetime(2026, 11, 21, tzinfo=datetime.timezone.utc)
out = sys.stdout
for i in range(int(sys.argv[1])):
    h = random.randrange(10000)
    w = math.exp(random.gauss(0, 0.7))
    d = 0.05 * math.exp(random.random() * math.log(100))
    t = now - datetime.timedelta(seconds=int(random.random() * 10 * 86400))
    extra = ',"host_rate":%d' % (50 + h % 200) if h % 3 else ''
    out.write('{"url":"https://h%d.example/p/%d","weight":%.4f,"change_rate":%.4f,"last_fetch":"%s"%s}\n'
              % (h, i, w, d, t.strftime('%Y-%m-%dT%H:%M:%SZ'), extra))
PY
