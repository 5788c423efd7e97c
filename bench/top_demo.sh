#!/bin/sh
# top_demo.sh — the workload behind doc/top.png: for SECONDS (default 40)
# a producer feeds three queues in bursts (mail steady, thumbnails in
# waves, billing a trickle), workers drain them with the emqlite tool
# (claim-batch, complete, retry: every 20th billing job fails for good),
# while `emqlite top` writes its JSON lines; then bench/plot.sh draws them.
#
#   bench/top_demo.sh [EMQLITE] [OUT.png] [SECONDS]
#
# Real time, real processes: the figures differ from run to run.
here=$(cd "$(dirname "$0")" && pwd)
EMQLITE=${1:-emqlite}
out=${2:-top.png}
secs=${3:-40}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-topdemo.XXXXXX") || exit 1
db=$tmp/demo.db
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
E() { "$EMQLITE" --db "$db" "$@"; }
burst() { # QUEUE N
    i=0
    while [ $i -lt "$2" ]; do echo "job $i"; i=$((i + 1)); done |
        E enqueue-many "$1" >/dev/null
}
E enqueue mail first >/dev/null || exit 1
end=$(($(date +%s) + secs))

E top --interval 1s >"$tmp/top.jsonl" &
pids="$pids $!"
(   # producer
    t=0
    while [ "$(date +%s)" -lt "$end" ]; do
        burst mail 8
        [ $((t % 10)) -lt 3 ] && burst thumbnails 60
        burst billing 3
        t=$((t + 1))
        sleep 1
    done
) &
pids="$pids $!"
worker() { # QUEUE BATCH
    n=0
    while [ "$(date +%s)" -lt "$end" ]; do
        E claim-batch "$1" "$2" --lease 30s 2>/dev/null >"$tmp/$1.claimed" ||
            { sleep 0.2; continue; }
        while read -r id token _; do
            n=$((n + 1))
            if [ "$1" = billing ] && [ $((n % 20)) -eq 0 ]; then
                E retry "$1" "$id" "$token" --max 1 --error "card declined" >/dev/null
            else
                E complete "$1" "$id" "$token" >/dev/null
            fi
        done <"$tmp/$1.claimed"
    done
}
worker mail 10 & pids="$pids $!"
worker thumbnails 8 & pids="$pids $!"
worker billing 2 & pids="$pids $!"
while [ "$(date +%s)" -lt "$end" ]; do sleep 1; done
sleep 2
for p in $pids; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
pids=
sh "$here/plot.sh" "$tmp/top.jsonl" "$out"
