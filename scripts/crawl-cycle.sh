#!/usr/bin/env bash
# One turn of the crawl loop over a crawl directory, made for cron:
#
#   select   the best pages of the one crawl queue: new pages and pages due
#            again, ranked together by crawl value (recrawl next)
#   filter   the candidates whose sekitei segment has quota left (sekitei
#            admit); the others are deferred in the queue
#   fetch    fetch them (WARC into DIR/warc), one fetcher a shard, each host
#            paced by its crawl-rate estimate, learnt from its answers and
#            kept in DIR/state/host-rates.json (fetch --host-rates)
#   sitemaps the sitemaps robots.txt names, for each site on its first
#            visit (recrawl new-sites | fetch sitemaps): their URLs enter
#            the queue with their lastmod and changefreq
#   opic     fold the batch into the OPIC importance (opic update)
#   order    with ORDER set, the crawl order's priorities of the batch's
#            links (sekitei order, its state in DIR/state/order.NAME.ndjson)
#   recrawl  fold it into the queue: change-rate statistics, new pages,
#            sitemap URLs, weights from opic, or from ORDER when it is set
#            (recrawl update); a fetched URL whose canonical is another URL
#            is not offered again
#   sekitei  fold it into the segments and their quota use (sekitei update)
#   index    add it to the barrel index as a new segment (barrel build)
#   archive  keep the batch in DIR/state/history (gzip): nobody reads it
#
# Usage: scripts/crawl-cycle.sh DIR              one turn
#        scripts/crawl-cycle.sh inject DIR FILE...  add the URLs of FILE (- stdin) to DIR/seeds.txt
#
# The tools are taken from CRAWLKIT_BIN, else from PATH, else from bin/ of
# this checkout; the loop never builds them (install them once: go install
# ./cmd/... or scripts/install.sh PREFIX).
#
# DIR holds seeds.txt (read every turn: a line not queued before is queued
# once, and state/seeds.done keeps those queued), optionally good.txt (URLs
# users visit, for sekitei's quotas) and crawl.conf (shell variables that
# override the defaults below). Every tool keeps its own state in DIR/state
# and updates it from the turn's batch alone, so a turn costs the same in the
# first week and after a year. Each update names the turn (--batch): a tool
# applies a batch once, so a turn killed at any point (kill -9, a full disk)
# resumes where it stopped when run again, and a fetched URL is not fetched
# again. A lock keeps turns from overlapping. Each step logs what it did to
# stderr and DIR/logs/cycle.log, and a failing step logs why.
#
# Exit status: 0 the turn completed and fetched pages; 1 a step failed (a
# tool's error, a full disk: the log names the step, the failing command's
# exit status and its message) and the next run resumes the turn; 2 a set-up
# the loop cannot use, found before anything changed (no seeds, tools not
# found, another SHARDS, an ORDER or QUOTA_RULE the tools refuse, RUNNER or
# MACHINES unusable); 3 the turn completed but made no progress (nothing to
# fetch, or nothing could be fetched: the log says why); 75 another turn
# holds the lock (the message names its processes, PID and command); 128+N
# killed by signal N. A turn killed whole (kill -9 of its process group)
# leaves nothing running: a watchdog ends what it started, here and on the
# machines (docs/scaleout.md, Faults).
#
# With SHARDS=N the per-host work runs as N host shards (--shard I/N, a hash
# of the host, so no host is split), each with its own states: recrawl's
# queue (its best pages merged with recrawl merge, lambda_0 reduced from the
# shards' summaries), the fetch, and opic (each shard applies the batch to
# its own pages, then takes in the cash the other shards' links sent it). A
# sharded crawl chooses and fetches what an unsharded one would. SHARDS must
# stay the same over a crawl's life.
#
# RUNNER says where the shards' steps run: local (background jobs here),
# ssh (shard I on line I mod M of MACHINES, by GNU parallel over ssh; the
# shard's states and WARC files stay in REMOTE_DIR on its machine, and only
# the small files a step reads and writes travel) or slurm (an array job,
# sbatch --array=0-N-1, over a DIR on the cluster's shared file system).
# docs/scaleout.md says how, and what travels.
#
# crawl-cycle.sh --shard-step F I ID DIR is how a remote runner runs step F
# of shard I of turn ID on a machine, in its crawl directory DIR.
#
# Host rates: fetch keeps each host's highest tolerated crawl rate (a shard's
# hosts in state/host-rates[.I].json); select gives them to recrawl as each
# host's limit k_i (fetch host-rates | recrawl next --host-rates), so a host
# that can take little gets its pages spread by value. HOST_PINS names a file
# of rates set by hand (host<TAB>30/h; 0: do not crawl); HOST_RATES, a file
# of limits in crawls a day, replaces the estimates for recrawl.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -Eeuo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mode=turn
# --end-turn TOKEN [GRACE] ends, on this machine, every process marked with
# a turn's TOKEN (CRAWLKIT_TURN in its environment: all a turn starts, and
# its shard steps on the machines) that is still running after GRACE
# seconds (a tool stopped by a signal finishes its requests in flight) with
# SIGTERM, then SIGKILL, and prints each one it ended: PID and command.
if [[ "${1:-}" == --end-turn ]]; then
  token=${2:?usage: crawl-cycle.sh --end-turn TOKEN [GRACE]} grace=${3:-0}
  marked() {
    grep -lzxF "CRAWLKIT_TURN=$token" /proc/[0-9]*/environ 2> /dev/null | sed 's|^/proc/||; s|/environ$||' || true
  }
  until [[ -z "$(marked)" ]] || ((SECONDS >= grace)); do sleep 0.2; done
  ended=" "
  for sig in TERM TERM KILL KILL; do
    pids=$(marked)
    [[ -z "$pids" ]] && break
    for pid in $pids; do
      if [[ $ended != *" $pid "* ]]; then
        echo "PID $pid ($(tr '\0' ' ' 2> /dev/null < "/proc/$pid/cmdline" | cut -c1-160))"
        ended+="$pid "
      fi
      kill -s "$sig" "$pid" 2> /dev/null || true
    done
    sleep 1
  done
  exit 0
fi
# --watchdog PID TOKEN LOG SSH [LOGIN...]: started for a turn in a session
# of its own, so that a kill of the turn's process group does not reach it.
# It waits for the turn's shell PID to end, then ends what the turn left
# running (--end-turn): here (GNU parallel gives each job, an ssh client,
# an rsync, a process group of its own, which the kill does not reach), on
# each machine of RUNNER=ssh over SSH (a shard step outlives its ssh client
# when the connection is shared, ControlMaster), and the turn's Slurm jobs
# (named for the token). What it ended goes to LOG.
if [[ "${1:-}" == --watchdog ]]; then
  turn_pid=${2:?} token=${3:?} wlog=${4:?} wssh=${5:-ssh}
  shift 5 || shift $#
  tail --pid="$turn_pid" -s 0.1 -f /dev/null 2> /dev/null || true
  # The turn's Slurm jobs first: Slurm ends their steps on every node.
  slurm_jobs=""
  if command -v squeue > /dev/null && command -v scancel > /dev/null; then
    jobs=$(squeue -h -o '%i %j' 2> /dev/null | awk -v t="-$token" 'substr($2, length($2) - length(t) + 1) == t { print $1 }') || true
    if [[ -n "$jobs" ]]; then
      # shellcheck disable=SC2086
      scancel $jobs 2> /dev/null || true
      slurm_jobs="Slurm jobs $(echo $jobs)"
    fi
  fi
  ended=$("$0" --end-turn "$token" 5 | paste -sd ';' - | sed 's/;/; /g')
  [[ -n "$slurm_jobs" ]] && ended="$slurm_jobs${ended:+; }$ended"
  for login in "$@"; do
    # A connection of its own: a shared one (ControlMaster) may be gone
    # with the turn, and a new master would hold the output open.
    # shellcheck disable=SC2086
    remote=$(timeout 30 $wssh -o ControlMaster=no -o ControlPath=none "$login" -- "$0" --end-turn "$token" < /dev/null 2> /dev/null | paste -sd ';' - | sed 's/;/; /g') || true
    [[ -n "$remote" ]] && ended+="${ended:+; }on $login: $remote"
  done
  if [[ -n "$ended" ]]; then
    printf '%s watchdog: turn process %s ended, leaving running: %s: ended them\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$turn_pid" "$ended" >> "$wlog"
  fi
  exit 0
fi
# inject DIR FILE...: the URLs of FILE that seeds.txt lacks are appended to
# it (by a rename, so a turn reading it sees the old file or the new one);
# the next turn queues them.
if [[ "${1:-}" == inject ]]; then
  if (($# < 2)); then
    echo "usage: crawl-cycle.sh inject DIR FILE... (- or none: stdin)" >&2
    exit 2
  fi
  idir=$2
  shift 2
  if [[ ! -d "$idir" ]]; then
    echo "crawl-cycle inject: $idir: no such directory" >&2
    exit 2
  fi
  (($# > 0)) || set -- -
  seeds=$idir/seeds.txt
  touch "$seeds"
  sed 's/^[[:space:]]*//; s/[[:space:]]*$//' -- "$@" | grep -v '^$' > "$seeds.in.$$" || true
  bad=$(grep -ivc '^https\?://' "$seeds.in.$$" || true)
  grep -i '^https\?://' "$seeds.in.$$" | awk -v seeds="$seeds" '
    BEGIN { while ((getline l < seeds) > 0) { gsub(/^[ \t]+|[ \t\r]+$/, "", l); have[l] = 1 } }
    !($0 in have) { have[$0] = 1; print }' > "$seeds.new.$$" || true
  n=$(grep -c . "$seeds.new.$$" || true)
  awk 1 "$seeds" "$seeds.new.$$" > "$seeds.tmp.$$" # awk 1: a last line without its newline gets one
  rm -f "$seeds.new.$$" "$seeds.in.$$"
  mv "$seeds.tmp.$$" "$seeds"
  ((bad == 0)) || echo "crawl-cycle inject: $bad lines are not http(s) URLs: skipped" >&2
  echo "crawl-cycle inject: $n new URLs in $seeds; the next turn queues them" >&2
  exit 0
fi
if [[ "${1:-}" == --shard-step ]]; then
  mode=shard shard_fn=${2:?} shard=${3:?} id=${4:?}
  shift 4
  mkdir -p "${1:?usage: crawl-cycle.sh --shard-step F I ID DIR}"
fi
if (($# != 1)); then
  echo "usage: crawl-cycle.sh DIR, or crawl-cycle.sh inject DIR FILE... (--help: the whole usage)" >&2
  exit 2
fi
dir=$1
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
HOST_RATES=""     # a file of per-host crawl limits for recrawl, instead of the estimates (see recrawl --host-rates)
HOST_ESTIMATES=1  # 1: fetch paces hosts by their learnt crawl rates and recrawl limits them by it; 0: a fixed --delay
HOST_PINS=""      # a file of host rates set by hand for fetch (fetch --pins: host<TAB>30/h; 0: do not crawl)
SITE_QUOTA=""     # sekitei: pages per host for the whole crawl (0: no quota filter; default 10000 with DIR/good.txt, else 0)
MIN_QUOTA=20      # sekitei: the least quota of a segment (QUOTA_RULE share), the lecture's MIN_QUOTA (the others)
QUOTA_RULE=share  # sekitei: share (SITE_QUOTA shared between a host's segments), equal, greedy, visits, segments or none
ORDER=""          # the queue's weight: empty for OPIC importance, else a crawl order of sekitei order (bfs, fish, shark, best-first, ...)
ORDER_ARGS=""     # flags of sekitei order, shell words (e.g. "--topic 'roses garden'"; --good FILE for the qlink orders)
ROBOTS_BLOCK=5    # a segment tried this often and refused by robots.txt every time gets no more candidates (0: never)
SHARDS=1          # per-host steps run as this many shards
KEEP_BATCHES=48   # turn directories kept (older ones are removed: their fetch records are in state/history)
NOW=""            # the turn's time for recrawl and opic (RFC 3339; default: now)
FETCH_ARGS=""     # e.g. --delay 1s --workers 64; a local site: --allow-private --hosts-file FILE
SITEMAPS=1        # read a site's robots.txt sitemaps on its first visit (0: never); fetch sitemaps gets FETCH_ARGS; what its caps leave (state/sitemaps.todo) is read in the next turns
SITEMAP_ARGS=""   # fetch sitemaps' own caps, e.g. "--max-urls-per-site 10000 --max-urls 200000" (defaults 50,000 and 1,000,000)
OPIC_ARGS="--window 720h"
RECRAWL_ARGS="--default-change-rate 0.2"   # flags of recrawl update (the prior change rate, --recrawl-canonicalised, ...)
NEXT_ARGS=""      # flags of recrawl next (e.g. --host-rate 240)
INDEX_ARGS=""     # flags of barrel build: its merge policy and PageRank schedule (e.g. "--deletes-pct 10 --pagerank-every 48"; docs/barrel.md)
RUNNER=local      # where shard steps run: local, ssh or slurm
MACHINES=""       # ssh: a file of sshlogins (user@host, one a line); shard I runs on line I mod lines
REMOTE_DIR=""     # ssh: the crawl directory on every machine, on its own disk (default: DIR)
SSH="ssh"         # ssh: the ssh command (e.g. "ssh -F FILE")
MIN_FREE_MB=64    # ssh: a turn starts only if every machine has this much free in REMOTE_DIR
SBATCH_ARGS=""    # slurm: more sbatch flags (e.g. --partition crawl --time 30)
[[ -f "$dir/crawl.conf" ]] && source "$dir/crawl.conf"
TURN_N=${TURN_N:-$((FRONTIER_N + RECRAWL_N))}
# Good URLs given: the lecture's site quota is on unless crawl.conf says otherwise.
if [[ -z "$SITE_QUOTA" ]]; then
  if [[ -f "$dir/good.txt" ]]; then SITE_QUOTA=10000; else SITE_QUOTA=0; fi
fi

state=$dir/state
mkdir -p "$dir/logs"
# The machine a message comes from: its ssh address, else its name.
machine=$(hostname)
[[ -n "${SSH_CONNECTION:-}" ]] && machine=$(echo "$SSH_CONNECTION" | cut -d' ' -f3)
log=$dir/logs/cycle.log
# say logs a line to stderr and the log (a full disk must not stop it).
say() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" | { tee -a "$log" >&2 || true; }; }
lines() { if [[ -f "$1" ]]; then grep -c . "$1" || true; else echo 0; fi; }

# The tools: CRAWLKIT_BIN, else the directory on PATH that holds sekitei
# (all five must be there: another program may be called fetch), else bin/
# of this checkout. Nothing is built here: cron has no go on its PATH.
tools="fetch opic recrawl sekitei barrel"
has_tools() {
  local t
  for t in $tools; do [[ -x "$1/$t" ]] || return 1; done
}
if [[ -n "${CRAWLKIT_BIN:-}" ]]; then
  BIN=$CRAWLKIT_BIN
  for tool in $tools; do
    if [[ ! -x "$BIN/$tool" ]]; then
      say "CRAWLKIT_BIN=$BIN has no $tool: install the tools there (scripts/install.sh PREFIX puts them in PREFIX/bin) or unset CRAWLKIT_BIN"
      exit 2
    fi
  done
elif onpath=$(command -v sekitei) && has_tools "$(dirname "$onpath")"; then
  BIN=$(dirname "$onpath")
elif has_tools "$here/bin"; then
  BIN=$here/bin
else
  say "the tools ($tools) are not on PATH ($PATH) nor in $here/bin: install them once, from the checkout, with scripts/install.sh PREFIX (then PATH=PREFIX/bin:\$PATH or CRAWLKIT_BIN=PREFIX/bin), or go install ./cmd/... (into \$(go env GOPATH)/bin)"
  exit 2
fi

# ORDER, QUOTA_RULE and INDEX_ARGS are checked by the tools before anything
# changes: a wrong name or a missing flag stops the turn with exit 2.
# ORDER_ARGS holds shell words (quotes group them), as crawl.conf does.
eval "order_args=($ORDER_ARGS)"
read -r -a index_args <<< "$INDEX_ARGS"
if [[ $mode == turn ]]; then
  if [[ -n "$ORDER" ]] && ! "$BIN/sekitei" order --check --order "$ORDER" ${order_args[@]+"${order_args[@]}"} 2> "$dir/logs/check.err"; then
    say "ORDER=$ORDER ORDER_ARGS=$ORDER_ARGS: not a usable crawl order: $(head -n 1 "$dir/logs/check.err")"
    exit 2
  fi
  if ((SITE_QUOTA > 0)) && ! "$BIN/sekitei" update --check --state "$state/sekitei.db" --batch check --quota-rule "$QUOTA_RULE" \
    --site-quota "$SITE_QUOTA" --min-quota "$MIN_QUOTA" 2> "$dir/logs/check.err"; then
    say "QUOTA_RULE=$QUOTA_RULE MIN_QUOTA=$MIN_QUOTA: $(head -n 1 "$dir/logs/check.err")"
    exit 2
  fi
  if [[ -n "$INDEX_ARGS" ]] && ! "$BIN/barrel" build --check "${index_args[@]}" --index "$dir/index" 2> "$dir/logs/check.err"; then
    say "INDEX_ARGS=$INDEX_ARGS: not flags barrel build takes: $(grep -v '^\s*$' "$dir/logs/check.err" | head -n 1)"
    exit 2
  fi
  rm -f "$dir/logs/check.err"
fi
case "$RUNNER" in
local | ssh | slurm) ;;
*)
  say "RUNNER=$RUNNER: not local, ssh or slurm"
  exit 2
  ;;
esac
# seed_lines FILE: its URLs, trimmed, one a line, without blanks and comments.
seed_lines() { if [[ -f "$1" ]]; then sed 's/^[[:space:]]*//; s/[[:space:]]*$//' "$1" | grep -v '^\(#\|$\)' || true; fi; }
if [[ $mode == turn && ! -f "$state/seeded" && -z "$(seed_lines "$dir/seeds.txt" | head -n 1)" ]]; then
  say "no seeds: put the first URLs, one a line, in $dir/seeds.txt (or scripts/crawl-cycle.sh inject $dir FILE)"
  exit 2
fi
mkdir -p "$state/history" "$dir/batches" "$dir/warc"

# lock_holders names the processes that hold DIR/lock: PID and command.
lock_holders() {
  local p fd held="" lock
  lock=$(readlink -f "$dir/lock")
  for p in /proc/[0-9]*; do
    for fd in "$p"/fd/*; do
      if [[ "$(readlink "$fd" 2> /dev/null)" == "$lock" ]]; then
        held+="PID ${p#/proc/} ($(tr '\0' ' ' 2> /dev/null < "$p/cmdline" | cut -c1-160)); "
        break
      fi
    done
  done
  echo "${held:-its holder is gone}" | sed 's/; $//'
}

# begin_turn takes the lock and starts or resumes a turn.
begin_turn() {
  exec 9>"$dir/lock"
  if ! flock -n 9; then
    say "another turn is running on $dir: $(lock_holders)"
    exit 75
  fi
  # Everything the turn starts carries its token (start_watchdog).
  CRAWLKIT_TURN="$$-$(date +%s%N)"
  export CRAWLKIT_TURN

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
}

# begin_shard_step checks the machine's state for shard I of the turn: one
# made with another SHARDS value is refused before anything changes.
begin_shard_step() {
  if [[ -f "$state/shards" ]]; then
    read -r made < "$state/shards"
    if [[ "$made" != "$SHARDS" ]]; then
      echo "shard $shard on $machine: the state in $state was made with SHARDS=$made, the crawl has SHARDS=$SHARDS" >&2
      exit 2
    fi
  else
    echo "$SHARDS" > "$state/shards"
  fi
  batch=$dir/batches/$id
  mkdir -p "$batch"
}
if [[ $mode == turn ]]; then begin_turn; else begin_shard_step; fi

# A failing command stops the turn with exit status 1 (128+N for a signal);
# the log says which step, the command's own status and why.
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
  ((rc > 128)) || rc=1
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
  # What the step said (its counts, the tools' summaries) goes to the log too.
  if [[ -s "$batch/$name.err" ]]; then
    sed "s/^/$(date -u +%Y-%m-%dT%H:%M:%SZ) /" "$batch/$name.err" >> "$log" || true
  fi
  say "$name: took $(awk -v d=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.2f", d / 1e9 }') s"
  # For tests only: CRAWLKIT_TEST_STEP_HOOK names a program run with the
  # step's name once the step is done (the kill campaign of internal/crashtest,
  # TestKillCampaign, holds the turn there to kill it at the boundary).
  if [[ -n "${CRAWLKIT_TEST_STEP_HOOK:-}" ]]; then "$CRAWLKIT_TEST_STEP_HOOK" "$name"; fi
}

# each_shard F [IN [OUT]] runs F I for every shard I at once, by RUNNER,
# and fails if any fails. IN and OUT name the files besides the shard's
# state that F reads and writes (paths under DIR, globs; {} stands for the
# shard): the ssh runner sends IN to the machines and brings OUT back.
each_shard() {
  case "$RUNNER" in
  local) local_shards "$1" ;;
  ssh) ssh_shards "$@" ;;
  slurm) slurm_shards "$1" ;;
  *)
    echo "RUNNER=$RUNNER: not local, ssh or slurm" >&2
    return 1
    ;;
  esac
}

# local_shards F: background jobs that stay in the turn's process group,
# so that killing the turn kills them. A background job of a script ignores
# SIGINT: the job takes it back, so that Ctrl-C stops the shards too.
local_shards() {
  local fn=$1 i rc=0
  local pids=()
  for ((i = 0; i < SHARDS; i++)); do
    (
      trap - ERR INT QUIT
      "$fn" "$i"
    ) &
    pids+=($!)
  done
  for i in "${pids[@]}"; do
    wait "$i" || rc=$?
  done
  return "$rc"
}

# ssh_shards F IN OUT runs shard I on machine I mod M of MACHINES with GNU
# parallel: one hostgroup a machine pins each shard to its machine, IN goes
# to every machine once (--basefile, by rsync), OUT comes back (--return).
# The command is this script, at the same path on every machine.
# rsync compares checksums (-c): its quick check by size and mtime skips a
# crawl.conf edited in the second its last copy was sent (parallel's rsync
# does not keep mtimes), and a shard would run the turn with the old one.
ssh_shards() {
  local fn=$1 ins=${2:-} outs=${3:-} i f rc=0
  local args=(--will-cite --hostgroups --ssh "$SSH" --workdir "$REMOTE_DIR" --joblog "$batch/$fn.joblog"
    --rsync-opts "-rlDzRc" --tagstring "shard {}" --basefile "crawl.conf")
  local per=$(((SHARDS + ${#hosts[@]} - 1) / ${#hosts[@]}))
  for i in "${!hosts[@]}"; do args+=(-S "@m$i/$per/${hosts[i]}"); done
  # Paths under DIR: the same under REMOTE_DIR on the machines.
  cd "$dir"
  local sent=0 got=0 size
  for f in $ins; do
    args+=(--basefile "$f")
    size=$(($(stat -c %s "$f") * ${#hosts[@]}))
    sent=$((sent + size))
    echo "$fn $f $size 0" >> "$batch/moved"
  done
  for f in $outs; do args+=(--return "$f"); done
  local jobs=()
  for ((i = 0; i < SHARDS; i++)); do jobs+=("$i@m$((i % ${#hosts[@]}))"); done
  parallel "${args[@]}" "CRAWLKIT_TURN=$CRAWLKIT_TURN CRAWLKIT_BIN=$BIN $here/scripts/crawl-cycle.sh --shard-step $fn {} $id $REMOTE_DIR" ::: "${jobs[@]}" || rc=$?
  if ((rc != 0)); then
    # The joblog's lines are in shard order: Seq Host ... Exitval Signal.
    awk -F'\t' -v fn="$fn" 'NR > 1 && ($7 != 0 || $8 != 0) {
      why = $7 == 255 ? "unreachable or lost (ssh exit 255)" : $8 != 0 ? "killed by signal " $8 : "exit " $7
      printf "%s: shard %d on %s failed: %s\n", fn, $1 - 1, $2, why }' "$batch/$fn.joblog" >&2
    return 1
  fi
  for f in $outs; do
    for ((i = 0; i < SHARDS; i++)); do
      size=$(stat -c %s "${f//\{\}/$i}")
      got=$((got + size))
      echo "$fn ${f//\{\}/$i} 0 $size" >> "$batch/moved"
    done
  done
  echo "$fn: $sent bytes to the machines, $got back" >&2
}

# slurm_shards F runs the shards as an array job on the cluster's shared
# file system and waits for it; each task's output is kept in the turn.
slurm_shards() {
  local fn=$1 rc=0 out i
  mkdir -p "$batch/slurm"
  read -r -a sbatch_args <<< "$SBATCH_ARGS"
  sbatch --wait --quiet --array="0-$((SHARDS - 1))" --job-name "crawl-$fn-$CRAWLKIT_TURN" --output "$batch/slurm/$fn.%a.out" \
    ${sbatch_args[@]+"${sbatch_args[@]}"} \
    --wrap "CRAWLKIT_BIN=$BIN exec $here/scripts/crawl-cycle.sh --shard-step $fn \$SLURM_ARRAY_TASK_ID $id $dir" || rc=$?
  for ((i = 0; i < SHARDS; i++)); do
    out=$batch/slurm/$fn.$i.out
    if [[ -s "$out" ]]; then sed "s/^/$fn: shard $i: /" "$out" >&2; fi
  done
  return "$rc"
}

# shard_state TOOL I names the state of TOOL for shard I.
shard_state() {
  if ((SHARDS <= 1)); then echo "$state/$1.db"; else echo "$state/$1.$2.db"; fi
}
# host_state I names shard I's host-rate state (fetch --host-rates).
host_state() {
  if ((SHARDS <= 1)); then echo "$state/host-rates.json"; else echo "$state/host-rates.$1.json"; fi
}
pins_args=()
[[ -n "$HOST_PINS" ]] && pins_args=(--pins "$HOST_PINS")
# limit_args I: the host limits recrawl takes for shard I: HOST_RATES, else
# the shard's estimates written by host_limits, else none.
limit_args() {
  if [[ -n "$HOST_RATES" ]]; then
    echo "--host-rates=$HOST_RATES"
  elif [[ -s "$batch/host-rates.$1.tsv" ]]; then
    echo "--host-rates=$batch/host-rates.$1.tsv"
  fi
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
read -r -a sitemap_args <<< "$SITEMAP_ARGS"
# b: the turn's directory under DIR, for the files each_shard moves.
b=batches/$id
hosts=()
if [[ $RUNNER == ssh && $mode == turn ]]; then
  if [[ ! -s "$MACHINES" ]]; then
    say "RUNNER=ssh needs MACHINES, a file of sshlogins (user@host, one a line): MACHINES=$MACHINES"
    exit 2
  fi
  mapfile -t hosts < <(grep -v '^[[:space:]]*#' "$MACHINES" | grep .)
  REMOTE_DIR=${REMOTE_DIR:-$dir}
fi
# The watchdog ends what the turn leaves running once the turn's shell is
# gone, kill -9 of its process group included (--watchdog above).
# A turn that ends by itself (exit, a step's failure, a signal bash sees)
# ends the watchdog instead: its tools have ended or are ending.
if [[ $mode == turn ]]; then
  env -u CRAWLKIT_TURN setsid "$here/scripts/crawl-cycle.sh" --watchdog "$$" "$CRAWLKIT_TURN" "$log" "$SSH" \
    ${hosts[@]+"${hosts[@]}"} < /dev/null > /dev/null 2>> "$log" 9>&- &
  watchdog=$!
  trap 'kill "$watchdog" 2> /dev/null || true' EXIT
fi

# Every turn puts the lines of seeds.txt not queued before (the turn's
# seeds.new, kept for a resumed turn) into opic (they share cash) and into
# the queue: the first turn as batch 000000-seeds, a later one as batch
# NNNNNN-0seeds, which sorts between the last turn's batch and this one's.
seed_batch=000000-seeds
seed_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/opic" update --state "$(shard_state opic "$i")" --batch "$seed_batch" $(shard_flag "$i") $(outbox_flag seed-out "$i") \
    --changes "$batch/seed-weights.$i.u.ndjson" "${opic_args[@]}" "$batch/seeds.new"
}
seed_exchange() {
  local i=$1
  "$BIN/opic" exchange --state "$(shard_state opic "$i")" --batch "$seed_batch" \
    --changes "$batch/seed-weights.$i.x.ndjson" "$batch"/seed-out.*.ndjson
}
seed_queue() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" update --state "$(shard_state recrawl "$i")" --batch "$seed_batch" $(shard_flag "$i") \
    --weights "$batch/seed-$weights_name" --weight-field "$weight_field" "${recrawl_args[@]}" "${now_args[@]}" "$batch/seeds.new"
}
seed() {
  # A crawl seeded before seeds.done existed queued all of seeds.txt then.
  if [[ -f "$state/seeded" && ! -f "$state/seeds.done" ]]; then
    seed_lines "$dir/seeds.txt" | LC_ALL=C sort -u > "$state/seeds.done"
  fi
  if [[ ! -f "$batch/seeds.new" ]]; then
    touch "$state/seeds.done"
    if [[ -f "$state/seeded" ]]; then echo "${id%%-*}-0seeds"; else echo 000000-seeds; fi > "$batch/seeds.batch"
    seed_lines "$dir/seeds.txt" | LC_ALL=C sort -u | LC_ALL=C comm -23 - "$state/seeds.done" > "$batch/seeds.tmp"
    mv "$batch/seeds.tmp" "$batch/seeds.new"
  fi
  if [[ ! -s "$batch/seeds.new" ]]; then
    echo "seed: no new line in seeds.txt" >&2
    return
  fi
  read -r seed_batch < "$batch/seeds.batch"
  if ((SHARDS > 1)); then
    each_shard seed_shard "$b/seeds.new" "$b/seed-out.{}.ndjson $b/seed-weights.{}.u.ndjson"
    each_shard seed_exchange "$b/seed-out.*.ndjson" "$b/seed-weights.{}.x.ndjson"
  else
    each_shard seed_shard "$b/seeds.new" "$b/seed-weights.{}.u.ndjson"
  fi
  cat "$batch"/seed-weights.*.ndjson > "$batch/seed-weights.ndjson"
  # With ORDER the seeds' weights are the order's (its seeds' scores).
  [[ -n "$ORDER" ]] && order_weights seed-order-weights.ndjson "$batch/seeds.new"
  each_shard seed_queue "$b/seeds.new $b/seed-$weights_name"
  rm -f "$batch"/seed-out.*.ndjson "$batch"/seed-weights.* "$batch"/seed-order-weights.*
  LC_ALL=C sort -u "$state/seeds.done" "$batch/seeds.new" > "$state/seeds.done.tmp"
  mv "$state/seeds.done.tmp" "$state/seeds.done"
  touch "$state/seeded"
  echo "seed: $(lines "$batch/seeds.new") new seed URLs in the queue" >&2
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

host_limits() {
  local i=$1
  # always a file (empty without estimates): a remote runner brings it back
  : > "$batch/host-rates.$i.tmp"
  if [[ "$HOST_ESTIMATES" == 1 && -z "$HOST_RATES" && -f "$(host_state "$i")" ]]; then
    "$BIN/fetch" host-rates --host-rates "$(host_state "$i")" ${pins_args[@]+"${pins_args[@]}"} > "$batch/host-rates.$i.tmp"
  fi
  mv "$batch/host-rates.$i.tmp" "$batch/host-rates.$i.tsv"
}
summary_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" summary --state "$(shard_state recrawl "$i")" $(shard_flag "$i") --rate "$rate" \
    $(limit_args "$i") "${now_args[@]}" > "$batch/summary.$i.json"
}
next_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" next --state "$(shard_state recrawl "$i")" $(shard_flag "$i") --n "$TURN_N" --slot "$SLOT" \
    --lambda0-from "$batch/lambda0.json" $(limit_args "$i") ${next_args[@]+"${next_args[@]}"} \
    "${now_args[@]}" > "$batch/candidates.$i.tmp"
}
# lambda_0, the threshold a page's crawl value must reach, by map and
# reduce over the shards' queues: RATE crawls a day, or TURN_N a turn.
rate=$RATE
[[ "$rate" == 0 ]] && rate=$(awk -v n="$TURN_N" -v d="$(slot_days)" 'BEGIN { print n / d }')
select_pages() {
  each_shard host_limits "" "$b/host-rates.{}.tsv"
  each_shard summary_shard "" "$b/summary.{}.json"
  "$BIN/recrawl" lambda0 --rate "$rate" "$batch"/summary.*.json > "$batch/lambda0.json"
  each_shard next_shard "$b/lambda0.json" "$b/candidates.{}.tmp"
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
    # The state's own rule: after QUOTA_RULE changed, this turn's update sets the quotas anew.
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
  local rates=()
  [[ "$HOST_ESTIMATES" == 1 ]] && rates=(--host-rates "$(host_state "$i")" ${pins_args[@]+"${pins_args[@]}"})
  "$BIN/fetch" "${fetch_args[@]}" $(shard_flag "$i") ${rates[@]+"${rates[@]}"} --warc "$dir/warc" --warc-prefix "$id-$i" \
    --resume "$batch/fetched.$i.partial" "$batch/todo.ndjson"
}
fetch_pages() {
  if [[ ! -f "$batch/fetched.ndjson" ]]; then
    each_shard fetch_shard "$b/todo.ndjson" "$b/fetched.{}.partial"
    # In line order, so that the batch is the same however it was fetched.
    LC_ALL=C sort "$batch"/fetched.*.partial > "$batch/fetched.tmp"
    sync "$batch/fetched.tmp"
    mv "$batch/fetched.tmp" "$batch/fetched.ndjson"
  fi
  rm -f "$batch"/fetched.*.partial
  "$BIN/fetch" stats "$batch/fetched.ndjson" > "$batch/fetch-stats.tsv"
  "$BIN/fetch" stats --failed "$batch/fetched.ndjson" > "$batch/failed.tsv"
}

new_sites_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" new-sites --state "$(shard_state recrawl "$i")" $(shard_flag "$i") "$batch/fetched.ndjson" > "$batch/new-sites.$i.tmp"
}
read_sitemaps() {
  if ((SITEMAPS)); then
    each_shard new_sites_shard "$b/fetched.ndjson" "$b/new-sites.{}.tmp"
    cat "$batch"/new-sites.*.tmp > "$batch/new-sites.tmp"
    rm -f "$batch"/new-sites.*.tmp
    mv "$batch/new-sites.tmp" "$batch/new-sites.ndjson"
    # What the caps of earlier turns left unread (state/sitemaps.todo) is
    # read first; the turn starts from its own copy, so a step run again
    # after a kill lists the same URLs.
    [[ -f "$batch/sitemaps.todo.in" ]] || { cat "$state/sitemaps.todo" 2>/dev/null || true; } > "$batch/sitemaps.todo.in"
    cp "$batch/sitemaps.todo.in" "$batch/sitemaps.todo"
    "$BIN/fetch" sitemaps "${fetch_args[@]}" ${sitemap_args[@]+"${sitemap_args[@]}"} --continue "$batch/sitemaps.todo" "$batch/new-sites.ndjson" > "$batch/sitemaps.tmp"
  else
    : > "$batch/new-sites.ndjson"
    : > "$batch/sitemaps.tmp"
  fi
  mv "$batch/sitemaps.tmp" "$batch/sitemaps.ndjson"
  if [[ -f "$batch/sitemaps.todo" ]]; then
    mv "$batch/sitemaps.todo" "$state/sitemaps.todo"
  fi
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
  if ((SHARDS > 1)); then
    each_shard opic_shard "$b/fetched.ndjson" "$b/opic-out.{}.ndjson $b/weights.{}.u.ndjson"
    each_shard opic_exchange "$b/opic-out.*.ndjson" "$b/weights.{}.x.ndjson"
  else
    each_shard opic_shard "$b/fetched.ndjson" "$b/weights.{}.u.ndjson"
  fi
  # An exchange's values come after the update's: the last one counts.
  if ((SHARDS > 1)); then
    cat "$batch"/weights.*.u.ndjson "$batch"/weights.*.x.ndjson > "$batch/weights.tmp"
  else
    cat "$batch"/weights.*.u.ndjson > "$batch/weights.tmp"
  fi
  mv "$batch/weights.tmp" "$batch/weights.ndjson"
  rm -f "$batch"/weights.*.?.ndjson "$batch"/opic-out.*.ndjson
}

# The queue's weights: opic's importance, or the priorities of ORDER. The
# order runs here, on the whole batch, whatever SHARDS: each recrawl shard
# keeps its hosts' weights, so a sharded crawl weighs as an unsharded one.
weights_name=weights.ndjson weight_field=importance
if [[ -n "$ORDER" ]]; then weights_name=order-weights.ndjson weight_field=priority; fi
order_state=$state/order.$ORDER.ndjson
# order_weights FILE INPUT...: the order's priorities of INPUT's records in
# the turn's FILE. The order's state is copied beside its place, updated
# there (sekitei order writes it whole and renames it in) and renamed into
# place only once FILE is made: a turn killed before resumes from the old
# state, one killed after finds FILE and only moves the state, so the order
# takes each batch once. pagerank and hits rank the whole graph: they read
# the fetch history and keep no state.
order_weights() {
  local out=$1 next=$order_state.next
  shift
  if [[ ! -f "$batch/$out" ]]; then
    local keep=(--state "$next") input=("$@")
    rm -f "$next"
    case "$ORDER" in
    pagerank | hits)
      keep=()
      input=("$batch/order-input.tmp")
      find "$state/history" -name '*.ndjson.gz' -print0 | LC_ALL=C sort -z | xargs -0 -r gzip -dc > "$batch/order-input.tmp"
      cat "$@" >> "$batch/order-input.tmp"
      ;;
    *) [[ -f "$order_state" ]] && cp "$order_state" "$next" ;;
    esac
    "$BIN/sekitei" order --order "$ORDER" ${order_args[@]+"${order_args[@]}"} --floor 1e-6 ${keep[@]+"${keep[@]}"} \
      "${input[@]}" > "$batch/$out.tmp"
    rm -f "$batch/order-input.tmp"
    mv "$batch/$out.tmp" "$batch/$out"
  fi
  if [[ -f "$next" ]]; then mv "$next" "$order_state"; fi
  echo "order: $ORDER: $(lines "$batch/$out") priorities" >&2
}
order_pages() { order_weights order-weights.ndjson "$batch/fetched.ndjson"; }

recrawl_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/recrawl" update --state "$(shard_state recrawl "$i")" --batch "$id" $(shard_flag "$i") \
    --weights "$batch/$weights_name" --weight-field "$weight_field" --deferred "$batch/deferred.ndjson" --fetch-time batch \
    "${recrawl_args[@]}" "${now_args[@]}" "$batch/fetched.ndjson" "$batch/sitemaps.ndjson"
}
update_recrawl() { each_shard recrawl_shard "$b/fetched.ndjson $b/sitemaps.ndjson $b/$weights_name $b/deferred.ndjson"; }

update_sekitei() {
  local good=()
  [[ -f "$dir/good.txt" ]] && good=(--good "$dir/good.txt")
  "$BIN/sekitei" update --state "$state/sekitei.db" --batch "$id" "${good[@]}" \
    --quota-rule "$QUOTA_RULE" --site-quota "$SITE_QUOTA" --min-quota "$MIN_QUOTA" "$batch/fetched.ndjson"
}

# With RUNNER=ssh the WARC files stay on the machines: each indexes its
# own shard's pages (DIR/index.I on its disk) and drops its old turns.
index_pages() {
  if [[ $RUNNER == ssh ]]; then
    each_shard index_shard "$b/fetched.ndjson"
  else
    "$BIN/barrel" build ${index_args[@]+"${index_args[@]}"} --index "$dir/index" --batch "$id" --warc-dir "$dir/warc" "$batch/fetched.ndjson"
  fi
}
index_shard() {
  local i=$1
  # shellcheck disable=SC2046
  "$BIN/barrel" build ${index_args[@]+"${index_args[@]}"} --index "$dir/index.$i" --batch "$id" $(shard_flag "$i") --warc-dir "$dir/warc" "$batch/fetched.ndjson"
  prune_batches
}
# prune_batches drops old turn directories: what they hold is in the
# states and the history.
prune_batches() {
  find "$dir/batches" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' -printf '%f\n' | LC_ALL=C sort |
    head -n -"$KEEP_BATCHES" | while read -r old; do rm -rf "${dir:?}/batches/$old"; done
}

# check_shard I: before a remote turn changes anything, every machine must
# answer, hold its shard's state of this SHARDS value (begin_shard_step
# checked it) and have MIN_FREE_MB free.
check_shard() {
  local free
  free=$(df -Pk "$dir" | awk 'NR == 2 { print int($4 / 1024) }')
  if ((free < MIN_FREE_MB)); then
    echo "shard $1 on $machine: $free MB free in $dir, less than MIN_FREE_MB=$MIN_FREE_MB" >&2
    return 1
  fi
}

if [[ $mode == shard ]]; then
  trap 'echo "shard $shard on $machine: $shard_fn failed (exit $?)" >&2' ERR
  "$shard_fn" "$shard"
  exit 0
fi

archive_batch() {
  gzip -c "$batch/fetched.ndjson" > "$state/history/$id.ndjson.gz.tmp"
  sync "$state/history/$id.ndjson.gz.tmp"
  mv "$state/history/$id.ndjson.gz.tmp" "$state/history/$id.ndjson.gz"
}

start=$(date +%s)
if [[ $RUNNER == ssh ]]; then
  # Every turn, resumed or not: a dead or full machine stops it here,
  # before any shard's state changes.
  if ! each_shard check_shard 2> "$batch/check.err"; then
    cat "$batch/check.err" >&2
    current=check
    failed 1
  fi
fi
step seed seed
step select select_pages
step filter filter_pages
step fetch fetch_pages
step sitemaps read_sitemaps
step opic update_opic
[[ -n "$ORDER" ]] && step order order_pages
step recrawl update_recrawl
((SITE_QUOTA > 0)) && step sekitei update_sekitei
step index index_pages
step archive archive_batch
touch "$batch/DONE"
prune_batches

# Progress: pages fetched, or why none were.
stat() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$batch/fetch-stats.tsv"; }
candidates=$(lines "$batch/candidates.ndjson")
fetched=$(stat fetched)
say "fetch: $(stat records) URLs tried, $fetched fetched, $(stat failed) failed$(awk -F'\t' 'NR > 3 { printf "%s %s %s", (NR == 4 ? ":" : ","), $1, $2 }' "$batch/fetch-stats.tsv")"
# Why a URL failed, one line each: the seeds of the turn that failed, or
# when nothing was fetched the first ten failures.
if [[ -f "$batch/failed.tsv" ]]; then
  if ((fetched == 0)); then
    head -n 10 "$batch/failed.tsv"
  elif [[ -s "$batch/seeds.new" ]]; then
    awk -F'\t' 'NR == FNR { seed[$0] = 1; next } $1 in seed' "$batch/seeds.new" "$batch/failed.tsv" | head -n 10
  fi | while IFS=$'\t' read -r url _ why; do say "fetch: $url failed: $why"; done
fi
if ((fetched > 0)); then touch "$state/fetched-some"; fi
if ((candidates == 0)); then
  if [[ -f "$state/fetched-some" ]]; then
    say "turn $id: no progress: nothing fetched: the crawl queue offered no page (every known page is fetched and none is due again yet)"
  else
    say "turn $id: no progress: nothing fetched: no page of this crawl has been fetched yet, every URL tried failed (the reasons are in the log's earlier fetch lines) and none is due again yet; add URLs to $dir/seeds.txt"
  fi
  exit 3
fi
if ((fetched == 0)); then
  hint=""
  if grep -q '^error:blocked' "$batch/fetch-stats.tsv"; then
    hint="; a site on this machine or a private network needs --allow-private in FETCH_ARGS"
  fi
  say "turn $id: no progress: nothing fetched: none of the $(stat records) URLs tried could be fetched$hint"
  exit 3
fi
if [[ -f "$batch/moved" ]]; then
  say "ssh: $(awk '{ s += $3; g += $4 } END { printf "%d bytes to the machines, %d back", s, g }' "$batch/moved") this turn"
fi
say "turn $id: complete in $(($(date +%s) - start)) s"
