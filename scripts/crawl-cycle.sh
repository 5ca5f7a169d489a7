#!/usr/bin/env bash
# One turn of the crawl loop (see ../shared/DESIGN.md) over a crawl directory,
# made for cron:
#
#   select   the pages due again (recrawl rank, weighted by opic importance,
#            lambda_0 reduced from per-shard summaries) plus the crawl
#            frontier (opic next): candidates.ndjson
#   filter   per host, sekitei segments of every URL known so far, with the
#            lecture's quotas (good URLs from good.txt), and the candidates
#            whose segment has quota left: todo.ndjson
#   fetch    fetch them (WARC into DIR/warc), SHARDS fetchers at once under
#            GNU parallel, each with the hosts of its shard: fetched.ndjson
#   opic     update the OPIC state with the batch
#   estimate change rates from the fetch history (recrawl estimate)
#   index    add the batch to the barrel index
#
# Usage: scripts/crawl-cycle.sh DIR
#
# DIR holds seeds.txt (first turn), optionally good.txt (URLs users visit)
# and crawl.conf (shell variables overriding the defaults below). Each turn
# works in DIR/batches/<number>-<time>/; a step writes its output beside and renames it
# in, then leaves a STEP.done mark, so a turn killed at any point resumes
# where it stopped when run again, and a fetched URL is never fetched twice.
# A lock stops two turns overlapping (exit 75, "try later"). Each step logs
# what it did with counts to stderr and DIR/logs/cycle.log. Exit status 0
# means the turn completed.
#
# With SHARDS=N the per-host work runs as N shards (--shard I/N, a hash of
# the host, so no host is split): recrawl's summaries and rankings, the
# fetch, and opic, which keeps one state a shard (state/opic.I.state): each
# shard applies the batch to its own pages and writes the cash its links owe
# other shards' pages to an outbox, then every shard takes in all outboxes
# (opic exchange). The shards' states hold, bit for bit, what one state
# would. What must be decided over all pages stays one step (the frontier
# by cash and the ranking by importance over all shards' states, the merge
# of the rankings), so a sharded turn chooses and fetches what an unsharded
# one would. SHARDS must stay the same over a crawl's life.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: crawl-cycle.sh DIR}
dir=$(cd "$dir" && pwd)

# Settings (override in DIR/crawl.conf).
BIN=${CRAWLKIT_BIN:-$here/bin}
FRONTIER_N=500    # new or due pages taken from opic's frontier per turn
RECRAWL_N=200     # pages taken from recrawl's ranking per turn
MIN_AGE=24h       # opic next: a fetched page is due again after this
SITE_QUOTA=0      # sekitei: pages per host for the whole crawl (0: no filter)
SHARDS=1          # per-host steps run as this many shards (GNU parallel)
RATE=0            # recrawl: global crawls per day (0: RECRAWL_N alone limits)
NOW=""            # the turn's time for recrawl and opic (RFC 3339; default: now)
MIN_QUOTA=20      # sekitei: the least quota of a segment
ROBOTS_BLOCK=5    # filter: skip a segment once this many of its tries, all, were refused by robots.txt (0: never)
FETCH_ARGS=""     # e.g. --delay 1s --workers 64
OPIC_ARGS="--window 720h"
RECRAWL_ARGS="--default-change-rate 0.2"   # page flags of recrawl summary and rank
[[ -f "$dir/crawl.conf" ]] && source "$dir/crawl.conf"

state=$dir/state
mkdir -p "$state/history" "$dir/batches" "$dir/logs" "$dir/warc"
log=$dir/logs/cycle.log
say() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" | tee -a "$log" >&2; }
count() { if [[ -f "$1" ]]; then grep -c . "$1" || true; else echo 0; fi; }

for tool in fetch opic recrawl sekitei barrel; do
  if [[ ! -x "$BIN/$tool" ]]; then
    (cd "$here" && go build -o "$BIN/$tool" "./cmd/$tool")
  fi
done

exec 9>"$dir/lock"
if ! flock -n 9; then
  say "another turn is running on $dir"
  exit 75
fi

# shards lists the shard numbers 0 to SHARDS-1, one a line, for parallel.
shards() { seq 0 $((SHARDS - 1)); }

# opic_states lists the opic state files, one a shard.
opic_states() {
  if [[ "$SHARDS" -le 1 ]]; then
    echo "$state/opic.state"
  else
    for i in $(shards); do echo "$state/opic.$i.state"; done
  fi
}
# state_args are the --state flags naming them all: the whole crawl.
mapfile -t state_args < <(opic_states | sed 's/^/--state=/')
have_opic() { [[ -f "$(opic_states | sed -n 1p)" ]]; }
sharded=$(find "$state" -maxdepth 1 -name 'opic.*.state' | wc -l)
if [[ ("$SHARDS" -le 1 && "$sharded" -gt 0) || ("$SHARDS" -gt 1 && (-f "$state/opic.state" || ("$sharded" -gt 0 && "$sharded" -ne "$SHARDS"))) ]]; then
  say "SHARDS=$SHARDS, but $state holds the opic state of another number of shards; SHARDS must stay the same over a crawl"
  exit 1
fi

# Resume the newest unfinished turn, or start one.
batch=""
for b in "$dir"/batches/*/; do
  [[ -d "$b" && ! -f "$b/DONE" ]] && batch=${b%/}
done
if [[ -z "$batch" ]]; then
  turns=$(find "$dir/batches" -mindepth 1 -maxdepth 1 -type d | wc -l)
  batch=$dir/batches/$(printf '%06d' $((turns + 1)))-$(date -u +%Y%m%dT%H%M%SZ)
  mkdir -p "$batch"
  say "turn $(basename "$batch"): start"
else
  say "turn $(basename "$batch"): resume"
fi

step() {
  local name=$1
  shift
  if [[ -f "$batch/$name.done" ]]; then
    say "$name: done before"
    return
  fi
  local t0
  t0=$(date +%s%N)
  "$@"
  touch "$batch/$name.done"
  say "$name: took $(awk -v d=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.2f", d / 1e9 }') s"
}

# by_value sorts records by crawl_value, highest first, then by url.
by_value() {
  awk 'match($0, /"crawl_value":[-0-9.eE+]+/) { v = substr($0, RSTART + 14, RLENGTH - 14) } { print v "\t" $0 }' |
    LC_ALL=C sort -t "$(printf '\t')" -k1,1gr -k2,2 | cut -f2-
}

# URL_KEY is an awk function giving a record's "url" member as written (a
# record's first field is its url: every tool writes it first).
URL_KEY='function urlkey(s) { return match(s, /"url":"([^"\\]|\\.)*"/) ? substr(s, RSTART, RLENGTH) : s }'

# unique_urls keeps the first record of each url.
unique_urls() { awk "$URL_KEY"' !seen[urlkey($0)]++'; }

select_pages() {
  if have_opic; then
    local now=()
    [[ -n "$NOW" ]] && now=(--now "$NOW")
    "$BIN/opic" next "${state_args[@]}" --n "$FRONTIER_N" --min-age "$MIN_AGE" "${now[@]}" > "$batch/frontier.tmp"
  else
    cp "$dir/seeds.txt" "$batch/frontier.tmp"
  fi
  : > "$batch/due.tmp"
  if [[ -s "$state/pages.ndjson" ]]; then
    "$BIN/opic" show "${state_args[@]}" > "$batch/importance.tmp"
    local args="$RECRAWL_ARGS --weight-field importance --weights $batch/importance.tmp"
    [[ -n "$NOW" ]] && args+=" --now $NOW"
    [[ "$RATE" != 0 ]] && args+=" --rate $RATE"
    local l0=""
    if [[ "$RATE" != 0 ]]; then
      # lambda_0 by map and reduce: each shard's summary, then the sum.
      # shellcheck disable=SC2086
      shards | parallel -j "$SHARDS" --halt now,fail=1 \
        "$BIN/recrawl" summary --shard {}/"$SHARDS" $args "$state/pages.ndjson" '>' "$batch/summary.{}.json"
      l0=$("$BIN/recrawl" lambda0 --rate "$RATE" "$batch"/summary.*.json | sed 's/.*"lambda0":\([^,}]*\).*/\1/')
      rm -f "$batch"/summary.*.json
      args+=" --lambda0 $l0"
    fi
    # Each shard's best RECRAWL_N, then the best RECRAWL_N of those: the
    # same pages as one ranking of everything.
    # shellcheck disable=SC2086
    shards | parallel -j "$SHARDS" --halt now,fail=1 \
      "$BIN/recrawl" rank --shard {}/"$SHARDS" --n "$RECRAWL_N" --state "$state/recrawl.{}.state" $args \
      "$state/pages.ndjson" '>' "$batch/due.{}.tmp"
    cat "$batch"/due.*.tmp | by_value | sed -n "1,${RECRAWL_N}p" > "$batch/due.tmp"
    rm -f "$batch"/due.*.tmp "$batch/importance.tmp"
    [[ -n "$l0" ]] && say "select: lambda_0 $l0 from $SHARDS shard summaries"
  fi
  cat "$batch/due.tmp" "$batch/frontier.tmp" | unique_urls > "$batch/candidates.tmp"
  mv "$batch/due.tmp" "$batch/due.ndjson"
  mv "$batch/frontier.tmp" "$batch/frontier.ndjson"
  mv "$batch/candidates.tmp" "$batch/candidates.ndjson"
  say "select: $(count "$batch/due.ndjson") due (recrawl), $(count "$batch/frontier.ndjson") from the frontier (opic), $(count "$batch/candidates.ndjson") candidates"
}

filter_pages() {
  if [[ "$SITE_QUOTA" -le 0 ]] || ! have_opic; then
    cp "$batch/candidates.ndjson" "$batch/todo.tmp"
    mv "$batch/todo.tmp" "$batch/todo.ndjson"
    say "filter: off (SITE_QUOTA=0 or first turn), $(count "$batch/todo.ndjson") to fetch"
    return
  fi
  # Segments of every URL known so far, good ones marked, with quotas.
  local good=/dev/null
  [[ -f "$dir/good.txt" ]] && good=$dir/good.txt
  "$BIN/opic" show "${state_args[@]}" |
    awk -v goodfile="$good" "$URL_KEY"' BEGIN { while ((getline g < goodfile) > 0) good["\"url\":\"" g "\""] = 1 }
      { u = urlkey($0); print "{" u (u in good ? ",\"good\":true" : "") "}" }' \
    > "$batch/known.tmp"
  "$BIN/sekitei" segments --site-quota "$SITE_QUOTA" --min-quota "$MIN_QUOTA" "$batch/known.tmp" > "$batch/segments.tmp"
  if [[ ! -s "$batch/segments.tmp" ]]; then
    rm -f "$batch/known.tmp" "$batch/segments.tmp"
    cp "$batch/candidates.ndjson" "$batch/todo.tmp"
    mv "$batch/todo.tmp" "$batch/todo.ndjson"
    say "filter: no URLs known yet, $(count "$batch/todo.ndjson") to fetch"
    return
  fi
  mv "$batch/segments.tmp" "$state/segments.ndjson"
  # Pages fetched so far per segment use up its quota; candidates fill what is left.
  cat "$state"/history/*.ndjson 2>/dev/null | "$BIN/sekitei" assign --segments "$state/segments.ndjson" > "$batch/used.tmp" || true
  "$BIN/sekitei" assign --segments "$state/segments.ndjson" "$batch/candidates.ndjson" > "$batch/assigned.tmp"
  # A segment tried ROBOTS_BLOCK times or more and refused by robots.txt
  # every time (print and search pages, say) gets no more candidates: they
  # would only take the places of pages that can be fetched.
  awk -v segfile="$state/segments.ndjson" -v usedfile="$batch/used.tmp" -v block="$ROBOTS_BLOCK" \
    -v blockedfile="$batch/blocked.tmp" '
    function field(s, name,   re) {
      re = "\"" name "\":(\"([^\"\\\\]|\\\\.)*\"|[0-9]+)"
      if (!match(s, re)) return ""
      return substr(s, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
    }
    BEGIN {
      while ((getline s < segfile) > 0) quota[field(s, "host") " " field(s, "segment")] = field(s, "quota") + 0
      while ((getline s < usedfile) > 0) {
        k = field(s, "host") " " field(s, "segment")
        used[k]++
        if (field(s, "error") ~ /^"robots:/) refused[k]++
      }
    }
    {
      k = field($0, "host") " " field($0, "segment")
      if (block > 0 && used[k] >= block && refused[k] == used[k]) { blocked++; next }
      if (!(k in quota) || used[k] < quota[k]) { used[k]++; print }
    }
    END { print blocked + 0 > blockedfile }' "$batch/assigned.tmp" > "$batch/todo.tmp"
  local blocked
  blocked=$(cat "$batch/blocked.tmp")
  rm -f "$batch/known.tmp" "$batch/used.tmp" "$batch/assigned.tmp" "$batch/blocked.tmp"
  mv "$batch/todo.tmp" "$batch/todo.ndjson"
  say "filter: $(grep -c . "$state/segments.ndjson") segments, $(count "$batch/todo.ndjson") of $(count "$batch/candidates.ndjson") candidates within quota ($blocked in segments robots.txt refused)"
}

fetch_pages() {
  # URLs already in a partial output were fetched by an interrupted run.
  local i
  for i in $(shards); do
    touch "$batch/fetched.$i.partial"
    unique_urls < "$batch/fetched.$i.partial" > "$batch/fetched.dedup" && mv "$batch/fetched.dedup" "$batch/fetched.$i.partial"
  done
  cat "$batch"/fetched.*.partial > "$batch/done.tmp"
  awk "$URL_KEY"' FILENAME == ARGV[1] { done[urlkey($0)] = 1; next } !(urlkey($0) in done)' \
    "$batch/done.tmp" "$batch/todo.ndjson" > "$batch/todo.left"
  rm -f "$batch/done.tmp"
  local before
  before=$(cat "$batch"/fetched.*.partial | grep -c . || true)
  # One fetcher per shard, each polite to the hosts of its shard.
  # shellcheck disable=SC2086
  shards | parallel -j "$SHARDS" --halt now,fail=1 \
    "$BIN/fetch" $FETCH_ARGS --shard {}/"$SHARDS" --warc "$dir/warc" --warc-prefix "$(basename "$batch")-{}" \
    "$batch/todo.left" '>>' "$batch/fetched.{}.partial"
  rm -f "$batch/todo.left"
  # In URL order, so that opic sees the same batch however it was fetched.
  LC_ALL=C sort "$batch"/fetched.*.partial > "$batch/fetched.tmp"
  mv "$batch/fetched.tmp" "$batch/fetched.ndjson"
  rm -f "$batch"/fetched.*.partial
  local ok
  ok=$(grep -c '"status":[23]' "$batch/fetched.ndjson" || true)
  say "fetch: $(count "$batch/fetched.ndjson") records ($before from an interrupted run) by $SHARDS fetcher(s), $ok with status 2xx/3xx"
}

# opic_batch applies one batch (a file of records) to the work copies of
# the opic states: one update, or one a shard and then the exchange of
# their outboxes.
opic_batch() {
  # shellcheck disable=SC2086
  if [[ "$SHARDS" -le 1 ]]; then
    "$BIN/opic" update --state "$batch/opic.0.work" $OPIC_ARGS "$1"
    return
  fi
  # shellcheck disable=SC2086
  shards | parallel -j "$SHARDS" --halt now,fail=1 \
    "$BIN/opic" update --state "$batch/opic.{}.work" --shard {}/"$SHARDS" $OPIC_ARGS \
    --outbox "$batch/opic-out.{}.ndjson" "$1"
  shards | parallel -j "$SHARDS" --halt now,fail=1 \
    "$BIN/opic" exchange --state "$batch/opic.{}.work" "$batch"/opic-out.*.ndjson
  rm -f "$batch"/opic-out.*.ndjson
}

update_opic() {
  local states k
  mapfile -t states < <(opic_states)
  if [[ ! -f "$batch/opic.applied" ]]; then
    # The states before this batch are kept until all are replaced, so a
    # rerun applies the batch once.
    for k in "${!states[@]}"; do
      [[ -f "$batch/opic.$k.before" || ! -f "${states[$k]}" ]] || cp "${states[$k]}" "$batch/opic.$k.before"
      if [[ -f "$batch/opic.$k.before" ]]; then
        cp "$batch/opic.$k.before" "$batch/opic.$k.work"
      else
        rm -f "$batch/opic.$k.work"
      fi
    done
    if [[ ! -f "$batch/opic.0.before" ]]; then
      # The first batch: the seeds share the cash, for the fetched seeds
      # to hand on.
      opic_batch "$dir/seeds.txt"
    fi
    opic_batch "$batch/fetched.ndjson"
    for k in "${!states[@]}"; do
      mv "$batch/opic.$k.work" "${states[$k]}"
    done
    touch "$batch/opic.applied"
  fi
  rm -f "$batch"/opic.*.before "$batch"/opic.*.work.lock
  say "opic: ${#states[@]} state(s) updated with $(count "$batch/fetched.ndjson") records"
}

estimate_rates() {
  cp "$batch/fetched.ndjson" "$state/history/$(basename "$batch").tmp"
  mv "$state/history/$(basename "$batch").tmp" "$state/history/$(basename "$batch").ndjson"
  "$BIN/recrawl" estimate "$state"/history/*.ndjson > "$state/pages.tmp" 2> "$batch/estimate.err" || { cat "$batch/estimate.err" >&2; return 1; }
  mv "$state/pages.tmp" "$state/pages.ndjson"
  say "estimate: change rates of $(count "$state/pages.ndjson") pages from $(ls "$state"/history/*.ndjson | wc -l) batches ($(count "$batch/estimate.err") records without a usable fetch)"
}

index_pages() {
  "$BIN/barrel" build --index "$dir/index" "$batch/fetched.ndjson"
  say "index: batch added to $dir/index"
}

start=$(date +%s)
step select select_pages
step filter filter_pages
step fetch fetch_pages
step opic update_opic
step estimate estimate_rates
step index index_pages
touch "$batch/DONE"
say "turn $(basename "$batch"): complete in $(($(date +%s) - start)) s"
