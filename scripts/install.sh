#!/bin/sh
# Installs the six tools (urlfeat, sekitei, opic, recrawl, fetch, barrel)
# into PREFIX/bin, built from this checkout with Go (go.mod says which),
# with their manual pages (PREFIX/share/man/man1) and bash and zsh
# completions (PREFIX/share/bash-completion/completions,
# PREFIX/share/zsh/site-functions), each made by the tool itself.
# The crawl loop (scripts/crawl-cycle.sh) finds them there through PATH or
# CRAWLKIT_BIN=PREFIX/bin, and never builds anything itself.
# Usage: scripts/install.sh PREFIX      (e.g. $HOME/.local or /usr/local)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -eu
prefix=${1:?usage: scripts/install.sh PREFIX}
if ! command -v go > /dev/null; then
  echo "install.sh: go not found: install Go (https://go.dev/dl/; version in go.mod) and run again" >&2
  exit 2
fi
mkdir -p "$prefix/bin"
bin=$(cd "$prefix/bin" && pwd)
cd "$(dirname "$0")/.."
go build -o "$bin/" ./cmd/...
tools="urlfeat sekitei opic recrawl fetch barrel"
share=$(cd "$bin/.." && pwd)/share
mkdir -p "$share/man/man1" "$share/bash-completion/completions" "$share/zsh/site-functions"
for tool in $tools; do
  "$bin/$tool" man > "$share/man/man1/$tool.1"
  "$bin/$tool" completion bash > "$share/bash-completion/completions/$tool"
  "$bin/$tool" completion zsh > "$share/zsh/site-functions/_$tool"
done
echo "installed $tools in $bin, their manual pages in $share/man/man1 and completions in $share" >&2
case ":$PATH:" in
*":$bin:"*) ;;
*) echo "add it to PATH: export PATH=\"$bin:\$PATH\"" >&2 ;;
esac
