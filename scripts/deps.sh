#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine (the test lab):
# the Debian packages listed in scripts/debian-packages.txt (only those
# missing), the Go modules of go.mod and warcio (npm). scripts/test.sh runs
# it; the demo does not (it needs Go and nginx only, and says so). With
# package names, installs only those of them that are missing, and nothing
# else (a benchmark's own needs). Safe to run again.
# Usage: scripts/deps.sh [PACKAGE...]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."

wanted=("$@")
if ((${#wanted[@]} == 0)); then
  while read -r pkg _; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    wanted+=("$pkg")
  done < scripts/debian-packages.txt
fi
missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "deps: installing Debian packages: ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null || true
  if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    $SUDO apt-get -y -qq --fix-broken install >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

go mod download
(($# == 0)) || exit 0

# warcio, the Webrecorder WARC reader from the npm registry, reads fetch's
# WARC files back in pkg/fetch's integration test (.deps/ is gitignored).
if ! command -v npm >/dev/null 2>&1; then
  echo "deps: npm is missing; installing the Debian npm package" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null || true
  if ! $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null; then
    $SUDO apt-get -y -qq --fix-broken install >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
  fi
fi
if [[ ! -f .deps/warcio/node_modules/warcio/package.json ]]; then
  mkdir -p .deps/warcio
  npm install --silent --no-audit --no-fund --prefix .deps/warcio warcio@2.4.11
fi
