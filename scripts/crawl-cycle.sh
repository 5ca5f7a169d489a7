#!/usr/bin/env bash
# One turn of the crawl loop over a crawl directory, made for cron:
#
#   select   the best pages of the one crawl queue: new pages and pages due
#            again, ranked together by crawl value (recrawl next)
#   filter   the candidates whose sekitei segment has quota left (sekitei
#            admit); the others are deferred in the queue
#   fetch    fetch them (WARC into DIR/warc), one fetcher a shard
#   sitemaps the sitemaps robots.txt names, for each site on its first
#            visit (recrawl new-sites | fetch sitemaps): their URLs enter
#            the queue with their lastmod and changefreq
#   opic     fold the batch into the OPIC importance (opic update)
#   recrawl  fold it into the queue: change-rate statistics, new pages,
#            sitemap URLs, weights from opic (recrawl update); a fetched
#            URL whose canonical is another URL is not offered again
#   sekitei  fold it into the segments and their quota use (sekitei update)
#   index    add it to the barrel index as a new segment (barrel build)
#   archive  keep the batch in DIR/state/history (gzip): nobody reads it
#
# Usage: scripts/crawl-cycle.sh DIR
#
# DIR holds seeds.txt (read on the first turn), optionally good.txt (URLs
# users visit, for sekitei's quotas) and crawl.conf (shell variables that
# override the defaults below). Every tool keeps its own state in DIR/state
# and updates it from the turn's batch alone, so a turn costs the same in the
# first week and after a year. Each update names the turn (--batch): a tool
# applies a batch once, so a turn killed at any point (kill -9, a full disk)
# resumes where it stopped when run again, and a fetched URL is not fetched
# again. A lock keeps turns from overlapping. Each step logs what it did to
# stderr and DIR/logs/cycle.log, and a failing step logs why.
#
# Exit status: 0 the turn completed and fetched pages; 3 it completed but made
# no progress (nothing to fetch, or nothing could be fetched: the log says
# why); 75 another turn holds the lock; anything else, a step failed (the log
# names it) and the next run resumes it.
#
# With SHARDS=N the per-host work runs as N host shards (--shard I/N, a hash
# of the host, so no host is split), each with its own states: recrawl's
# queue (its best pages merged with recrawl merge, lambda_0 reduced from the
# shards' summaries), the fetch, and opic (each shard applies the batch to
# its own pages, then takes in the cash the other shards' links sent it). A
# sharded crawl chooses and fetches what an unsharded one would. SHARDS must
# stay the same over a crawl's life.
set -Eeuo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: crawl-cycle.sh DIR}
if [[ ! -d "$dir" ]]; then
  echo "crawl-cycle: $dir: no such directory (make it and put seeds.txt in it)" >&2
  exit 2
fi
dir=$(cd "$dir" && pwd)

# Settings (override in DIR/crawl.conf).
TURN_N=""         # pages fetched per turn (default FRONTIER_N + RECRAWL_N)
FRONTIER_N=500    # (older settings, kept: their sum is TURN_N)
RECRAWL_N=200
RATE=0            # global crawls per day over SLOT-long turns (0: TURN_N alone limits)
SLOT=1h           # the time between turns, for RATE and host rates
HOST_RATES=""     # a file of per-host crawl limits for recrawl (see recrawl --host-rates)
SITE_QUOTA=0      # sekitei: pages per host for the whole crawl (0: no quota filter)
MIN_QUOTA=20      # sekitei: the least quota of a segment
ROBOTS_BLOCK=5    # a segment tried this often and refused by robots.txt every time gets no more candidates (0: never)
SHARDS=1          # per-host steps run as this many shards
KEEP_BATCHES=48   # turn directories kept (older ones are removed: their fetch records are in state/history)
NOW=""            # the turn's time for recrawl and opic (RFC 3339; default: now)
FETCH_ARGS=""     # e.g. --delay 1s --workers 64; a local site: --allow-private --hosts-file FILE
SITEMAPS=1        # read a site's robots.txt sitemaps on its first visit (0: never); fetch sitemaps gets FETCH_ARGS
OPIC_ARGS="--window 720h"
RECRAWL_ARGS="--default-change-rate 0.2"   # flags of recrawl update (the prior change rate, --recrawl-canonicalised, ...)
NEXT_ARGS=""      # flags of recrawl next (e.g. --host-rate 240)
[[ -f "$dir/crawl.conf" ]] && source "$dir/crawl.conf"
TURN_N=${TURN_N:-$((FRONTIER_N + RECRAWL_N))}

state=$dir/state
mkdir -p "$state/history" "$dir/batches" "$dir/logs" "$dir/warc"
log=$dir/logs/cycle.log
# say logs a line to stderr and the log (a full disk must not stop it).
say() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" | { tee -a "$log" >&2 || true; }; }
lines() { if [[ -f "$1" ]]; then grep -c . "$1" || true; else echo 0; fi; }

# The tools: CRAWLKIT_BIN, or bin/ of this checkout (built when missing).
if [[ -n "${CRAWLKIT_BIN:-}" ]]; then
  BIN=$CRAWLKIT_BIN
  for tool in fetch opic recrawl sekitei barrel; do
    if [[ ! -x "$BIN/$tool" ]]; then
      say "CRAWLKIT_BIN=$BIN has no $tool: build the tools there (go build -o $BIN/ ./cmd/...) or unset CRAWLKIT_BIN"
      exit 2
    fi
  done
else
  BIN=$here/bin
  for tool in fetch opic recrawl sekitei barrel; do
    if [[ ! -x "$BIN/$tool" ]]; then
      say "building $tool into $BIN"
      (cd "$here" && go build -o "$BIN/$tool" "./cmd/$tool")
    fi
  done
fi

exec 9>"$dir/lock"
if ! flock -n 9; then
  say "another turn is running on $dir"
  exit 75
fi

# The number of shards is fixed for a crawl's life: a state holds its
# shard's hosts only.
if [[ -f "$state/shards" ]]; then
  read -r made < "$state/shards"
  if [[ "$made" != "$SHARDS" ]]; then
    say "SHARDS=$SHARDS, but the crawl in $dir was made with SHARDS=$made ($state/shards); SHARDS must stay the same over a crawl's life"
    exit 2
  fi
elif [[ -n "$(ls -A "$state" | grep -v '^history$' || true)" ]]; then
  say "$state holds states but no shards file: not a crawl directory of this version of crawl-cycle.sh"
  exit 2
else
  echo "$SHARDS" > "$state/shards"
fi

# Resume the newest unfinished turn, or start one numbered after the newest.
newest=$(find "$dir/batches" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' -printf '%f\n' | LC_ALL=C sort | tail -n 1)
if [[ -n "$newest" && ! -f "$dir/batches/$newest/DONE" ]]; then
  batch=$dir/batches/$newest
  say "turn $newest: resume"
else
  number=${newest%%-*}
  batch=$dir/batches/$(printf '%06d' $((10#${number:-0} + 1)))-$(date -u +%Y%m%dT%H%M%SZ)
  mkdir -p "$batch"
  say "turn $(basename "$batch"): start"
fi
id=$(basename "$batch")

# A failing command stops the turn; the log says which step and why.
current=""
failed() {
  local rc=$1
  if [[ -n "$current" ]]; then
    say "$current: failed (exit $rc):"
    if [[ -s "$batch/$current.err" ]]; then
      tail -n 20 "$batch/$current.err" | sed 's/^/    /' >> "$log" || true
    fi
  else
    say "turn $id: failed (exit $rc) at line $2 of $0"
  fi
  exit "$rc"
}
trap 'failed $? $LINENO' ERR

# step NAME FUNCTION runs a step once, in a subshell: its stderr goes to
# the turn's stderr and to NAME.err (for the log, should it fail); a
# NAME.done mark records it done.
step() {
  local name=$1
  shift
  if [[ -f "$batch/$name.done" ]]; then
    say "$name: done before"
    return
  fi
  local t0
  t0=$(date +%s%N)
  current=$name
  { (
    trap - ERR
    "$@"
  ) 2>&1 1>&3 3>&- | { tee "$batch/$name.err" >&2 || true; }; } 3>&1
  current=""
  touch "$batch/$name.done"
  say "$name: took $(awk -v d=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.2f", d / 1e9 }') s"
}

# each_shard F runs F I for every shard I at once and fails if any fails.
# The jobs stay in the turn's process group, so killing the turn kills them.
each_shard() {
  local fn=$1 i rc=0
  local pids=()
  for ((i = 0; i < SHARDS; i++)); do
    (
      trap - ERR
      "$fn" "$i"
    ) &
    pids+=($!)
  done
  for i in "${pids[@]}"; do
    wait "$i" || rc=$?
  done
  return "$rc"
}

# shard_state TOOL I names the state of TOOL for shard I.
shard_state() {
  if ((SHARDS <= 1)); then echo "$state/$1.db"; else echo "$state/$1.$2.db"; fi
}
shard_flag() { if ((SHARDS > 1)); then echo "--shard=$1/$SHARDS"; fi; }
# outbox_flag NAME I names shard I's opic outbox, when there are shards.
outbox_flag() { if ((SHARDS > 1)); then echo "--outbox=$batch/$1.$2.ndjson"; fi; }

now_args=()
[[ -n "$NOW" ]] && now_args=(--now "$NOW")
read -r -a recrawl_args <<< "$RECRAWL_ARGS"
read -r -a next_args <<< "$NEXT_ARGS"
read -r -a opic_args <<< "$OPIC_ARGS"
read -r -a fetch_args <<< "$FETCH_ARGS"

# The first turn puts the seeds into opic (they share the first cash) and
# into the queue, as batch 000000-seeds.
seed_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/opic" update --state "$(shard_state opic "$i")" --batch 000000-seeds $(shard_flag "$i") $(outbox_flag seed-out "$i") \
    --changes "$batch/seed-weights.$i.u.ndjson" "${opic_args[@]}" "$dir/seeds.txt"
}
seed_exchange() {
  local i=$1
  "$BIN/opic" exchange --state "$(shard_state opic "$i")" --batch 000000-seeds \
    --changes "$batch/seed-weights.$i.x.ndjson" "$batch"/seed-out.*.ndjson
}
seed_queue() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" update --state "$(shard_state recrawl "$i")" --batch 000000-seeds $(shard_flag "$i") \
    --weights "$batch/seed-weights.ndjson" --weight-field importance "${recrawl_args[@]}" "${now_args[@]}" "$dir/seeds.txt"
}
seed() {
  if [[ ! -s "$dir/seeds.txt" ]]; then
    echo "no seeds: put the first URLs, one a line, in $dir/seeds.txt" >&2
    return 1
  fi
  each_shard seed_shard
  if ((SHARDS > 1)); then each_shard seed_exchange; fi
  cat "$batch"/seed-weights.*.ndjson > "$batch/seed-weights.ndjson"
  each_shard seed_queue
  rm -f "$batch"/seed-out.*.ndjson "$batch"/seed-weights.*
  touch "$state/seeded"
  echo "seed: $(lines "$dir/seeds.txt") seed URLs in the queue" >&2
}

# slot_days prints SLOT (a duration: 90s, 30m, 1h, 1d) in days.
slot_days() {
  local n=${SLOT%[smhd]} unit=${SLOT##*[0-9.]}
  case "$unit" in
  s | "") awk -v n="$n" 'BEGIN { print n / 86400 }' ;;
  m) awk -v n="$n" 'BEGIN { print n / 1440 }' ;;
  h) awk -v n="$n" 'BEGIN { print n / 24 }' ;;
  d) echo "$n" ;;
  esac
}

summary_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" summary --state "$(shard_state recrawl "$i")" $(shard_flag "$i") --rate "$rate" \
    ${host_args[@]+"${host_args[@]}"} "${now_args[@]}" > "$batch/summary.$i.json"
}
next_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" next --state "$(shard_state recrawl "$i")" $(shard_flag "$i") --n "$TURN_N" --slot "$SLOT" \
    --lambda0-from "$batch/lambda0.json" ${host_args[@]+"${host_args[@]}"} ${next_args[@]+"${next_args[@]}"} \
    "${now_args[@]}" > "$batch/candidates.$i.tmp"
}
select_pages() {
  # lambda_0, the threshold a page's crawl value must reach, by map and
  # reduce over the shards' queues: RATE crawls a day, or TURN_N a turn.
  rate=$RATE
  [[ "$rate" == 0 ]] && rate=$(awk -v n="$TURN_N" -v d="$(slot_days)" 'BEGIN { print n / d }')
  host_args=()
  [[ -n "$HOST_RATES" ]] && host_args=(--host-rates "$HOST_RATES")
  each_shard summary_shard
  "$BIN/recrawl" lambda0 --rate "$rate" "$batch"/summary.*.json > "$batch/lambda0.json"
  each_shard next_shard
  if ((SHARDS > 1)); then
    "$BIN/recrawl" merge --n "$TURN_N" "$batch"/candidates.*.tmp > "$batch/candidates.tmp"
    rm -f "$batch"/candidates.*.tmp
  else
    mv "$batch/candidates.0.tmp" "$batch/candidates.tmp"
  fi
  rm -f "$batch"/summary.*.json
  mv "$batch/candidates.tmp" "$batch/candidates.ndjson"
  echo "select: $(lines "$batch/candidates.ndjson") candidates from the crawl queue (lambda_0 $(cat "$batch/lambda0.json"))" >&2
}

filter_pages() {
  if ((SITE_QUOTA > 0)) && [[ -e "$state/sekitei.db" ]]; then
    "$BIN/sekitei" admit --state "$state/sekitei.db" --robots-block "$ROBOTS_BLOCK" \
      --rejected "$batch/deferred.tmp" "$batch/candidates.ndjson" > "$batch/todo.tmp"
    mv "$batch/deferred.tmp" "$batch/deferred.ndjson"
  else
    cp "$batch/candidates.ndjson" "$batch/todo.tmp"
    : > "$batch/deferred.ndjson"
    echo "filter: off (SITE_QUOTA=0 or no segments yet): $(lines "$batch/todo.tmp") to fetch" >&2
  fi
  mv "$batch/todo.tmp" "$batch/todo.ndjson"
}

fetch_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/fetch" "${fetch_args[@]}" $(shard_flag "$i") --warc "$dir/warc" --warc-prefix "$id-$i" \
    --resume "$batch/fetched.$i.partial" "$batch/todo.ndjson"
}
fetch_pages() {
  if [[ ! -f "$batch/fetched.ndjson" ]]; then
    each_shard fetch_shard
    # In line order, so that the batch is the same however it was fetched.
    LC_ALL=C sort "$batch"/fetched.*.partial > "$batch/fetched.tmp"
    sync "$batch/fetched.tmp"
    mv "$batch/fetched.tmp" "$batch/fetched.ndjson"
  fi
  rm -f "$batch"/fetched.*.partial
  "$BIN/fetch" stats "$batch/fetched.ndjson" > "$batch/fetch-stats.tsv"
}

new_sites_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" new-sites --state "$(shard_state recrawl "$i")" $(shard_flag "$i") "$batch/fetched.ndjson" > "$batch/new-sites.$i.tmp"
}
read_sitemaps() {
  if ((SITEMAPS)); then
    each_shard new_sites_shard
    cat "$batch"/new-sites.*.tmp > "$batch/new-sites.tmp"
    rm -f "$batch"/new-sites.*.tmp
    mv "$batch/new-sites.tmp" "$batch/new-sites.ndjson"
    "$BIN/fetch" sitemaps "${fetch_args[@]}" "$batch/new-sites.ndjson" > "$batch/sitemaps.tmp"
  else
    : > "$batch/new-sites.ndjson"
    : > "$batch/sitemaps.tmp"
  fi
  mv "$batch/sitemaps.tmp" "$batch/sitemaps.ndjson"
  echo "sitemaps: $(lines "$batch/new-sites.ndjson") sites on their first visit, $(lines "$batch/sitemaps.ndjson") sitemap URLs" >&2
}

opic_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/opic" update --state "$(shard_state opic "$i")" --batch "$id" $(shard_flag "$i") $(outbox_flag opic-out "$i") \
    --changes "$batch/weights.$i.u.ndjson" "${opic_args[@]}" "$batch/fetched.ndjson"
}
opic_exchange() {
  local i=$1
  "$BIN/opic" exchange --state "$(shard_state opic "$i")" --batch "$id" \
    --changes "$batch/weights.$i.x.ndjson" "$batch"/opic-out.*.ndjson
}
update_opic() {
  each_shard opic_shard
  if ((SHARDS > 1)); then each_shard opic_exchange; fi
  # An exchange's values come after the update's: the last one counts.
  if ((SHARDS > 1)); then
    cat "$batch"/weights.*.u.ndjson "$batch"/weights.*.x.ndjson > "$batch/weights.tmp"
  else
    cat "$batch"/weights.*.u.ndjson > "$batch/weights.tmp"
  fi
  mv "$batch/weights.tmp" "$batch/weights.ndjson"
  rm -f "$batch"/weights.*.?.ndjson "$batch"/opic-out.*.ndjson
}

recrawl_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" update --state "$(shard_state recrawl "$i")" --batch "$id" $(shard_flag "$i") \
    --weights "$batch/weights.ndjson" --weight-field importance --deferred "$batch/deferred.ndjson" --fetch-time batch \
    "${recrawl_args[@]}" "${now_args[@]}" "$batch/fetched.ndjson" "$batch/sitemaps.ndjson"
}
update_recrawl() { each_shard recrawl_shard; }

update_sekitei() {
  local good=()
  [[ -f "$dir/good.txt" ]] && good=(--good "$dir/good.txt")
  "$BIN/sekitei" update --state "$state/sekitei.db" --batch "$id" "${good[@]}" \
    --site-quota "$SITE_QUOTA" --min-quota "$MIN_QUOTA" "$batch/fetched.ndjson"
}

index_pages() {
  "$BIN/barrel" build --index "$dir/index" --batch "$id" "$batch/fetched.ndjson"
}

archive_batch() {
  gzip -c "$batch/fetched.ndjson" > "$state/history/$id.ndjson.gz.tmp"
  sync "$state/history/$id.ndjson.gz.tmp"
  mv "$state/history/$id.ndjson.gz.tmp" "$state/history/$id.ndjson.gz"
}

start=$(date +%s)
[[ -f "$state/seeded" ]] || step seed seed
step select select_pages
step filter filter_pages
step fetch fetch_pages
step sitemaps read_sitemaps
step opic update_opic
step recrawl update_recrawl
((SITE_QUOTA > 0)) && step sekitei update_sekitei
step index index_pages
step archive archive_batch
touch "$batch/DONE"
# Old turn directories go: what they hold is in the states and the history.
find "$dir/batches" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' -printf '%f\n' | LC_ALL=C sort |
  head -n -"$KEEP_BATCHES" | while read -r old; do rm -rf "${dir:?}/batches/$old"; done

# Progress: pages fetched, or why none were.
stat() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$batch/fetch-stats.tsv"; }
candidates=$(lines "$batch/candidates.ndjson")
fetched=$(stat fetched)
say "fetch: $(stat records) URLs tried, $fetched fetched, $(stat failed) failed$(awk -F'\t' 'NR > 3 { printf "%s %s %s", (NR == 4 ? ":" : ","), $1, $2 }' "$batch/fetch-stats.tsv")"
if ((candidates == 0)); then
  say "turn $id: no progress: the crawl queue offered no page (every known page is fetched and none is due again yet)"
  exit 3
fi
if ((fetched == 0)); then
  say "turn $id: no progress: none of the $(stat records) URLs tried could be fetched (see the reasons above; for a site on this machine or a private network, FETCH_ARGS needs --allow-private)"
  exit 3
fi
say "turn $id: complete in $(($(date +%s) - start)) s"
