#!/bin/sh
# cli_top_test.sh — `emqlite top` for real: the view runs in a detached
# tmux pane (its own server socket) on a file that a background producer and
# worker are changing; the test polls capture-pane, with a deadline, until
# the figures it expects are on the screen: the dead jobs the worker made,
# the pending and active counts, the lanes, the paused flag, the lease that
# lapses within the minute, the order each sort key gives, the job view's
# dead jobs with their errors, and that q ends the view with status 0. Then
# the pipe form: one JSON line per refresh, --count of them.
#
# Only counts the producer and worker make deterministic are asserted (the
# view's refresh is real time; rates and ages are not). Skipped (77)
# without tmux. Run by `make check` from the build directory, or by hand:
# EMQLITE=/path/to/emqlite sh cli_top_test.sh

LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_BUSY_TIMEOUT

top=$(pwd)
EMQLITE=${EMQLITE:-$top/emqlite}
if ! command -v tmux >/dev/null 2>&1; then
    echo "cli_top_test: tmux is not installed: skipped"
    exit 77
fi
if [ ! -x "$EMQLITE" ]; then
    echo "cli_top_test: $EMQLITE not found (run from the build directory)" >&2
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-top.XXXXXX") || exit 1
sock=$tmp/tmux.sock
pids=
T() { tmux -S "$sock" "$@"; }
cleanup() {
    T kill-server 2>/dev/null
    for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
db=$tmp/t.db
passed=0
failed=0
E() { "$EMQLITE" --db "$db" "$@"; }

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    echo "--- the screen:"
    cat "$tmp/screen" 2>/dev/null
    echo "---"
}

# screen: the pane as text into $tmp/screen.
screen() { T capture-pane -p -t top >"$tmp/screen" 2>/dev/null; }
# first_row: the first queue row under the header.
first_row() { awk '/QUEUE +PENDING/ { getline; print; exit }' "$tmp/screen"; }
# await NAME ERE: poll the pane (deadline 30 s) until a line matches.
await() {
    end=$(($(date +%s) + 30))
    while :; do
        screen
        if grep -Eq -- "$2" "$tmp/screen"; then pass; return 0; fi
        if [ "$(date +%s)" -ge "$end" ]; then fail "$1 (no line ~ $2)"; return 1; fi
        sleep 0.1
    done
}
# await_first NAME QUEUE: poll until QUEUE is the first row.
await_first() {
    end=$(($(date +%s) + 30))
    while :; do
        screen
        if first_row | grep -Eq "^. $2 "; then pass; return 0; fi
        if [ "$(date +%s)" -ge "$end" ]; then fail "$1 (first row not $2)"; return 1; fi
        sleep 0.1
    done
}

G1=PRT0SWkOLCBtp2
G2=PRT0SWkOLCBtp3

# The file exists before the view opens it (top opens read-only).
E enqueue alpha a0 >/dev/null || { echo "cli_top_test: enqueue failed"; exit 1; }

export TERM=${TERM:-xterm}
[ "$TERM" = dumb ] && TERM=xterm
T new-session -d -s top -x 150 -y 40 \
    "'$EMQLITE' --db '$db' top --interval 200ms; echo \$? >'$tmp/top.rc'" ||
    { echo "cli_top_test: tmux new-session failed"; exit 1; }
await "the view draws its header" 'QUEUE +PENDING +ACTIVE'

# The producer: alpha gets 3 pending, 2 lanes, and is paused; mid gets 5;
# zulu gets 7 for the worker.
(
    E enqueue alpha a1 && E enqueue alpha a2 &&
    E lane enqueue alpha $G1 l1 && E lane enqueue alpha $G2 l2 &&
    E pause alpha &&
    for i in 1 2 3 4 5; do E enqueue mid "m$i" || exit 1; done &&
    for i in 1 2 3 4 5 6 7; do E enqueue zulu "z$i" || exit 1; done
) >/dev/null 2>"$tmp/producer.err" &
pids="$pids $!"
# The worker: every zulu job fails past its one attempt (dead, with its
# error); three mid jobs are claimed and held, one on a 30 s lease.
(
    n=0
    end=$(($(date +%s) + 60))
    while [ $n -lt 7 ] && [ "$(date +%s)" -lt "$end" ]; do
        if line=$(E claim zulu --lease 10m | head -n 1) && [ -n "$line" ]; then
            set -- $line
            E retry zulu "$1" "$2" --max 1 --error "boom $n" >/dev/null && n=$((n + 1))
        fi
    done
    k=0
    while [ $k -lt 3 ] && [ "$(date +%s)" -lt "$end" ]; do
        if [ $k -eq 0 ]; then lease=30s; else lease=10m; fi
        E claim mid --lease $lease >/dev/null && k=$((k + 1))
    done
) 2>"$tmp/worker.err" &
pids="$pids $!"

#                   pending active sched dead lanes ... lapse paused
await "zulu: 7 dead, nothing else" '^. zulu +0 +0 +0 +7 +0 .* +0  +no$'
await "alpha: 3 pending, 2 lanes, paused" '^. alpha +3 +0 +0 +0 +2 .* yes$'
await "mid: 2 pending, 3 active, 1 lease lapsing within 1m" \
    '^. mid +2 +3 +0 +0 +0 .* +1  +no$'

await_first "sorted by name: alpha first" alpha
T send-keys -t top d
await_first "d sorts by dead: zulu first" zulu
await "the header names the sort" 'sort: dead'
T send-keys -t top a
await_first "a sorts by active: mid first" mid
T send-keys -t top p
await_first "p sorts by pending: alpha first" alpha
T send-keys -t top r
await_first "r reverses: zulu (0 pending, last by name) first" zulu

# The job view follows the selection: select zulu (the first row now).
T send-keys -t top k k k
await "the status line names zulu" '^queue 1/3  zulu$'
T send-keys -t top Enter
await "Enter opens zulu's jobs" '^emqlite top  jobs of zulu'
await "on its 7 dead jobs" '\[4 dead 7\]'
await "the newest dead job first, with its error" \
    '^> JOB[0-9A-Za-z]{11} +1 +dead .* error: boom 6$'
await "its history ends with the death and its error" \
    'dead +attempt 1 +error: boom 6( |$)'
T send-keys -t top q
await "q leaves the job view" '^queue 1/3  zulu$'
T send-keys -t top j
await "j selects the next queue" '^queue 2/3  mid$'
T send-keys -t top k
screen
echo "--- the screen (sorted by pending, reversed; zulu selected):"
cat "$tmp/screen"
echo "---"

T send-keys -t top q
end=$(($(date +%s) + 30))
while T has-session -t top 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
    sleep 0.1
done
if T has-session -t top 2>/dev/null; then
    fail "q quits the view"
else
    pass
fi
if [ "$(cat "$tmp/top.rc" 2>/dev/null)" = 0 ]; then pass; else
    fail "top exits 0 after q (got '$(cat "$tmp/top.rc" 2>/dev/null)')"
fi
for p in $pids; do wait "$p"; done
pids=

# ------------------------------------------------------------ the pipe form

E top --count 2 --interval 100ms >"$tmp/json" 2>"$tmp/json.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$tmp/json")" -eq 2 ]; then pass; else
    failed=$((failed + 1)); echo "FAIL: top --count 2 | (exit $rc): $(cat "$tmp/json.err")"
fi
z='"queue":"zulu","pending":0,"active":0,"scheduled":0,"dead":7,"lanes":0,"completed":0,"failed":7'
if [ "$(grep -c "$z" "$tmp/json")" -eq 2 ]; then pass; else
    failed=$((failed + 1)); echo "FAIL: each JSON line has zulu's figures"; cat "$tmp/json"
fi
if grep -q '"queue":"alpha","pending":3,"active":0,"scheduled":0,"dead":0,"lanes":2,.*"paused":true' "$tmp/json" &&
   grep -q '"queue":"mid","pending":2,"active":3,.*"lapsing_60s":1,"paused":false' "$tmp/json"; then
    pass
else
    failed=$((failed + 1)); echo "FAIL: alpha and mid in the JSON lines"; cat "$tmp/json"
fi
# The first snapshot has no interval behind it (rates null), the second has.
if head -n 1 "$tmp/json" | grep -q '"completed_per_s":null' &&
   tail -n 1 "$tmp/json" | grep -q '"completed_per_s":0.000,"failed_per_s":0.000' &&
   head -n 1 "$tmp/json" | grep -Eq '^\{"at":[0-9]+,"at_utc":"20[0-9-]{8}T[0-9:.]{12}Z","interval_ms":100,"queues_total":3,'; then
    pass
else
    failed=$((failed + 1)); echo "FAIL: the snapshot's head and rates"; cat "$tmp/json"
fi
E top zulu --count 1 >"$tmp/json"
if [ "$(grep -o '"queue":' "$tmp/json" | wc -l)" -eq 1 ] && grep -q '"queue":"zulu"' "$tmp/json"; then
    pass
else
    failed=$((failed + 1)); echo "FAIL: top QUEUE shows that queue only"; cat "$tmp/json"
fi
E top --count 1 --interval 10 >/dev/null 2>"$tmp/err"
if [ $? -eq 1 ] && grep -q "^emqlite: top: --interval must be a duration of at least 100ms" "$tmp/err"; then
    pass
else
    failed=$((failed + 1)); echo "FAIL: --interval 10 (ms) is refused"; cat "$tmp/err"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
