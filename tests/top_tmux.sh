#!/bin/sh
# top_tmux.sh — `emqlite top` fits any terminal (issue 34 item 6): on a
# file of 100 queues (every seventh with a 62-character name), three dead
# jobs with their errors and two scheduled ones, the view runs in detached
# tmux sessions (their own server socket) at 80x24 and 200x60, and the
# panes are read with capture-pane. Asserted: the header on the first line
# and the column titles on the third, on every page; the 100 queues all
# reached by paging (PgDn sent with send-keys) with the selection in view;
# no line wider than the window; long names cut in the middle with the
# ellipsis at 80 columns and whole at 200; a resize (resize-window) lays
# the view out again at the new size; the job view shows a dead job's
# error and history; retry and run-now change the file (checked with the
# emqlite CLI afterwards) only after 'y' (an 'n' changes nothing), and so
# do remove and requeue-all-dead; pause from the list; q leaves the job view, then quits with status 0.
#
# Every wait polls the pane with a deadline (no fixed sleeps). Skipped (77)
# without tmux. TOP_CAPTURE=FILE keeps the first 80x24 screen (the
# captures in doc/top-80x24.txt and doc/top-80x24-jobs.txt come from
# there). From the build
# directory: make check TESTS=tests/top_tmux.sh, or by hand:
# EMQLITE=/path/to/emqlite sh top_tmux.sh

LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_BUSY_TIMEOUT

EMQLITE=${EMQLITE:-$(pwd)/emqlite}
if ! command -v tmux >/dev/null 2>&1; then
    echo "top_tmux: tmux is not installed: skipped"
    exit 77
fi
if [ ! -x "$EMQLITE" ]; then
    echo "top_tmux: $EMQLITE not found (run from the build directory)" >&2
    exit 1
fi
# The view draws the ellipsis as U+2026 in a UTF-8 locale.
utf8=$(locale -a 2>/dev/null | grep -Eix 'c\.utf-?8' | head -n 1)
if [ -z "$utf8" ]; then
    echo "top_tmux: no C.UTF-8 locale: skipped"
    exit 77
fi
ELL=$(printf '\342\200\246')

tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-toptmux.XXXXXX") || exit 1
# Each session has its own tmux server (start sets sock): a new session
# never meets the previous server while it is still exiting.
sock=$tmp/none.sock
T() { LC_ALL=$utf8 tmux -S "$sock" "$@"; }
cleanup() {
    for s in "$tmp"/*.sock; do
        [ -S "$s" ] && LC_ALL=$utf8 tmux -S "$s" kill-server 2>/dev/null
    done
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
check() { if eval "$2"; then pass; else fail "$1"; fi; }

# ------------------------------------------------------------- the file

long=notifications-email-eu-west-1-transactional-high-priority
i=0
{
    while [ $i -lt 100 ]; do
        n=$(printf 'q%03d' $i)
        case $i in
        1) n=$n-billing ;;
        2) n=$n-reports ;;
        *) [ $((i % 7)) -eq 0 ] && n=$n-$long ;;
        esac
        echo "$n"
        i=$((i + 1))
    done
} >"$tmp/names"
while read -r n; do
    E enqueue "$n" "{\"to\":\"$n\"}" >/dev/null || { echo "top_tmux: enqueue $n failed"; exit 1; }
done <"$tmp/names"
# q001-billing: its first job stays pending; three die with their errors.
for k in 1 2 3; do
    E enqueue q001-billing "{\"amount\":$k}" >/dev/null || exit 1
done
E claim q001-billing >/dev/null   # the first job: held (active)
for k in 1 2 3; do
    set -- $(E claim q001-billing | head -n 1)
    E retry q001-billing "$1" "$2" --max 1 --error "card declined $k" >/dev/null ||
        { echo "top_tmux: retry failed"; exit 1; }
done
# q002-reports: two jobs scheduled an hour out.
E enqueue q002-reports '{"report":"daily"}' --in 1h >/dev/null || exit 1
E enqueue q002-reports '{"report":"weekly"}' --in 1h >/dev/null || exit 1
[ "$(E stats | grep -c '^q[0-9]')" -eq 100 ] || { echo "top_tmux: not 100 queues"; E stats; exit 1; }

# --once: one plain table for scripts, every queue, names whole.
E top --once >"$tmp/once" 2>"$tmp/once.err"
once_rc=$?
check "--once: exit 0, a header, the titles and 100 rows" \
    '[ $once_rc -eq 0 ] && [ "$(wc -l <"$tmp/once")" -eq 102 ] && sed -n 2p "$tmp/once" | grep -Eq "^QUEUE +PENDING .*RETRY/s +DEAD/s +OLDEST +LAPSE1m +PAUSED$"'
check "--once: long names whole" "grep -q '^q007-$long  *1 ' \"\$tmp/once\" && ! grep -q '$ELL' \"\$tmp/once\""
check "--once --json: one JSON line of 100 queues" \
    '[ "$(E top --once --json | grep -o "\"queue\":" | wc -l)" -eq 100 ] && [ "$(E top --once --json | wc -l)" -eq 1 ]'

# -------------------------------------------------------------- helpers

# screen S: the pane of session S into $tmp/screen.
screen() { T capture-pane -p -t "$1" >"$tmp/screen" 2>/dev/null; }
# await S NAME ERE: poll (deadline 30 s) until a line matches.
await() {
    end=$(($(date +%s) + 30))
    while :; do
        screen "$1"
        if grep -Eq -- "$3" "$tmp/screen"; then pass; return 0; fi
        if [ "$(date +%s)" -ge "$end" ]; then fail "$2 (no line ~ $3)"; return 1; fi
        sleep 0.05
    done
}
# await_rows SESSION WHAT N: until the screen shows N queue rows (a screen
# taken while top draws holds only the rows drawn so far).
await_rows() {
    end=$(($(date +%s) + 30))
    while :; do
        screen "$1"
        n=$(grep -Ec "^[ >] q[0-9]{3}" "$tmp/screen")
        if [ "$n" -eq "$3" ]; then pass; return 0; fi
        if [ "$(date +%s)" -ge "$end" ]; then fail "$2 ($n rows)"; return 1; fi
        sleep 0.05
    done
}
# settle S: capture until two captures 50 ms apart agree (deadline 30 s),
# so the checks that follow read a whole frame, not one half drawn.
settle() {
    end=$(($(date +%s) + 30))
    screen "$1"
    while :; do
        cp "$tmp/screen" "$tmp/screen.prev"
        sleep 0.05
        screen "$1"
        cmp -s "$tmp/screen" "$tmp/screen.prev" && return 0
        [ "$(date +%s)" -ge "$end" ] && return 0
    done
}
# cnt Q NAME: one figure of `emqlite counts Q` (schedule: the set's name).
cnt() { E counts "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
# widest: the widest line of the screen in columns (the ellipsis is one).
widest() { sed "s/$ELL/./g" "$tmp/screen" | awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }'; }
# status: the selection's status line (the second to last of the window).
status() { grep -E '^queue [0-9]+/[0-9]+' "$tmp/screen" | head -n 1; }
pinned() {  # the header on line 1, the column titles on line 3
    sed -n 1p "$tmp/screen" | grep -q '^emqlite top ' &&
        sed -n 3p "$tmp/screen" | grep -Eq '^ +QUEUE +PENDING +ACTIVE'
}

export TERM=${TERM:-xterm}
[ "$TERM" = dumb ] && TERM=xterm
start() {  # start SESSION WIDTH HEIGHT
    sock=$tmp/$1.sock
    T new-session -d -s "$1" -x "$2" -y "$3" \
        "LC_ALL=$utf8 '$EMQLITE' --db '$db' top --interval 200ms; echo \$? >'$tmp/$1.rc'" ||
        { echo "top_tmux: tmux new-session failed"; exit 1; }
}
quit() {  # quit SESSION: q until the session is gone (deadline 30 s)
    T send-keys -t "$1" q
    end=$(($(date +%s) + 30))
    while T has-session -t "$1" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
        sleep 0.05
    done
    if T has-session -t "$1" 2>/dev/null; then fail "q quits ($1)"; else pass; fi
    rcf=$tmp/$1.rc
    check "top exits 0 after q ($1)" '[ "$(cat "$rcf" 2>/dev/null)" = 0 ]'
}

# ------------------------------------------------------------- 80 x 24

start s80 80 24
await s80 "the view draws" 'q006 '
await s80 "the key line, the last, is drawn" '^q quit '
settle s80
check "80x24: header and column titles pinned" pinned
check "80x24: no line wider than 80 (widest $(widest))" '[ "$(widest)" -le 80 ]'
check "80x24: 24 lines" '[ "$(wc -l <"$tmp/screen")" -le 24 ]'
check "80x24: the key line, wider than 80, ends in the ellipsis" \
    "sed -n 24p \"\$tmp/screen\" | grep -q '^q quit .*$ELL\$'"
check "80x24: a long name cut in the middle, the ellipsis shown" \
    "grep -Eq '^[ >] q007-notif[a-z-]*$ELL[a-z-]*priority ' \"\$tmp/screen\""
check "80x24: narrow: LAPSE1m and LANES dropped, PAUSED kept" \
    "sed -n 3p \"\$tmp/screen\" | grep -v -e LAPSE1m -e LANES | grep -q PAUSED"
check "80x24: retries and dead-letters counted apart" \
    "sed -n 3p \"\$tmp/screen\" | grep -q 'RETRY/s.*DEAD/s'"
check "80x24: q001-billing: 0 pending, 1 active, 0 scheduled, 3 dead" \
    "grep -Eq '^[ >] q001-billing +0 +1 +0 +3 ' \"\$tmp/screen\""
await s80 "the second refresh has rates: done, retried, dead per second" \
    '^  q003 +1 +0 +0 +0 +0\.0 +0\.0 +0\.0 +no$'
[ -n "$TOP_CAPTURE" ] && cp "$tmp/screen" "$TOP_CAPTURE"

# Page down to the end, gathering the queues seen on each page.
grep -Eo '^[ >] q[0-9]{3}' "$tmp/screen" | grep -Eo 'q[0-9]{3}' >"$tmp/seen"
prev=$(status)
pages=0
while [ $pages -lt 20 ] && ! status | grep -q '^queue 100/100'; do
    T send-keys -t s80 NPage
    end=$(($(date +%s) + 30))
    while screen s80; [ "$(status)" = "$prev" ] && [ "$(date +%s)" -lt "$end" ]; do
        sleep 0.05
    done
    settle s80
    prev=$(status)
    pinned || { fail "page $pages: the header or titles moved"; break; }
    grep -q '^> q[0-9]' "$tmp/screen" || { fail "page $pages: the selection is not in view"; break; }
    [ "$(widest)" -le 80 ] || { fail "page $pages: a line wider than 80"; break; }
    grep -Eo '^[ >] q[0-9]{3}' "$tmp/screen" | grep -Eo 'q[0-9]{3}' >>"$tmp/seen"
    pages=$((pages + 1))
done
check "80x24: all 100 queues reached in $pages pages (saw $(sort -u "$tmp/seen" | wc -l))" \
    '[ "$(sort -u "$tmp/seen" | wc -l)" -eq 100 ] && [ $pages -ge 5 ]'
check "80x24: the last page ends with q099 selected" "grep -q '^> q099' \"\$tmp/screen\""

# The job view of q001-billing (second by name): its dead jobs, newest first.
T send-keys -t s80 g
await s80 "g goes back to the first queue" '^queue 1/100'
T send-keys -t s80 j Enter
await s80 "Enter opens the job view" '^emqlite top  jobs of q001-billing'
await s80 "it opens on the dead tab" '\[4 dead 3\]'
await s80 "the newest dead job first, with its error" \
    '^> JOB[0-9A-Za-z]{11} +1 +dead .* error: card declined 3$'
await s80 "the selected job's payload" '^payload   \{"amount":3\}$'
await s80 "its history: enqueued, claimed, dead with the error" \
    'dead +attempt 1 +error: card declined 3'
check "the history has its claim" "grep -Eq 'claimed +attempt 1 +by ' \"\$tmp/screen\""
check "job view: no line wider than 80" '[ "$(widest)" -le 80 ]'
[ -n "$TOP_CAPTURE" ] && cp "$tmp/screen" "${TOP_CAPTURE%.txt}-jobs.txt"
jid=$(grep -Eo '^> JOB[0-9A-Za-z]{11}' "$tmp/screen" | cut -c3-)

# Retry it: 'n' first (nothing happens), then 'y'.
T send-keys -t s80 r
await s80 "r asks first" "^Retry dead job $jid of q001-billing\\? y/n"
T send-keys -t s80 n
await s80 "n cancels" '^cancelled'
check "cancelled: still 3 dead" '[ "$(cnt q001-billing dead)" = 3 ]'
T send-keys -t s80 r
await s80 "r asks again" '\? y/n'
T send-keys -t s80 y
await s80 "y retries" "^done: Retry dead job $jid"
check "the file: 2 dead, 1 pending" \
    '[ "$(cnt q001-billing dead) $(cnt q001-billing pending)" = "2 1" ]'
check "the retried job is pending" "E list q001-billing --state pending | grep -q '^$jid'"
await s80 "the view follows: 2 dead" '\[4 dead 2\]'

# Remove the newest of the two left (x), then requeue the last one (R).
await s80 "a dead job selected" '^> JOB[0-9A-Za-z]{11} +1 +dead .* error: card declined 2$'
jid2=$(grep -Eo '^> JOB[0-9A-Za-z]{11}' "$tmp/screen" | cut -c3-)
T send-keys -t s80 x
await s80 "x asks first" "^Remove job $jid2 of q001-billing\\? y/n"
T send-keys -t s80 y
await s80 "y removes it" "^done: Remove job $jid2"
check "the file: 1 dead, and not $jid2" \
    '[ "$(cnt q001-billing dead)" = 1 ] && ! E list q001-billing --state dead | grep -q "^$jid2"'
check "the file: $jid2 gone from the sets, its history ends removed" \
    "E job q001-billing $jid2 | grep -q 'Z  removed$' && E job q001-billing $jid2 | grep -q '^set  *gone$'"
T send-keys -t s80 R
await s80 "R asks first" '^Requeue every dead job of q001-billing\? y/n'
T send-keys -t s80 y
await s80 "y requeues them" '^requeued 1 dead jobs \(skipped 0\)'
check "the file: no dead job, 2 pending" \
    '[ "$(cnt q001-billing dead) $(cnt q001-billing pending)" = "0 2" ]'

# Back to the list, then q002-reports' scheduled tab: run one now.
T send-keys -t s80 q
await s80 "q leaves the job view" '^queue 2/100'
T send-keys -t s80 j Enter
await s80 "the job view of q002-reports" '^emqlite top  jobs of q002-reports'
T send-keys -t s80 3
await s80 "the scheduled tab" '\[3 scheduled 2\]'
await s80 "a scheduled job with its payload" '^> JOB[0-9A-Za-z]{11} +[-0-9]+ +scheduled .*\{"report":"daily"\}$'
T send-keys -t s80 n
await s80 "n asks first" '^Run scheduled job JOB[0-9A-Za-z]{11} of q002-reports now\? y/n'
T send-keys -t s80 y
await s80 "y runs it now" '^done: Run scheduled job'
check "the file: 1 scheduled, 2 pending" \
    '[ "$(cnt q002-reports pending) $(cnt q002-reports schedule)$(cnt q002-reports scheduled)" = "2 1" ]'

# Pause q002-reports from the list.
T send-keys -t s80 q
await s80 "back to the list" '^queue 3/100'
T send-keys -t s80 P
await s80 "P asks first" '^Pause queue q002-reports\? y/n'
T send-keys -t s80 y
await s80 "the list shows it paused" '^queue 3/100 paused'
check "the file: q002-reports paused" "E stats q002-reports | grep -q '(paused)'"
quit s80

# ------------------------------------------------------------ 200 x 60

start s200 200 60
await s200 "the view draws at 200x60" "q007-$long"
await_rows s200 "200x60: 55 queue rows shown" 55
check "200x60: header and titles pinned" pinned
check "200x60: every column" \
    "sed -n 3p \"\$tmp/screen\" | grep -Eq 'LANES .*OLDEST +LAPSE1m +PAUSED'"
check "200x60: long names whole, no ellipsis" "! grep -q '$ELL' \"\$tmp/screen\""
check "200x60: no line wider than 200 (widest $(widest))" '[ "$(widest)" -le 200 ]'

T resize-window -t s200 -x 80 -y 24
await s200 "the resize to 80x24 lays the view out again" "^[ >] q007-notif[a-z-]*$ELL"
await_rows s200 "resized: 19 queue rows" 19
check "resized: no line wider than 80 (widest $(widest))" '[ "$(widest)" -le 80 ]'
check "resized: titles pinned, LAPSE1m dropped" "pinned && ! sed -n 3p \"\$tmp/screen\" | grep -q LAPSE1m"

T resize-window -t s200 -x 120 -y 40
await s200 "the resize to 120x40" '^[ >] q034 '
await_rows s200 "120x40: 35 queue rows" 35
check "120x40: no line wider than 120 (widest $(widest))" '[ "$(widest)" -le 120 ]'
quit s200

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
