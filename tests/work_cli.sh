#!/bin/sh
# work_cli.sh — the tool's scheduling commands end to end: repeat
# add|list|cancel, sweep, stalled, policy, and work (a command per job,
# complete on exit 0, retry otherwise, a command killed by SIGKILL leaving
# its job to the lease, which lapses and is reaped and done once; Ctrl-C
# finishing the job in hand; a second Ctrl-C stopping the command).
#
# Time is pinned with EMQLITE_NOW_MS; commands synchronise with the test
# through FIFOs; nothing sleeps. Run by `make check` from the build
# directory, or: EMQLITE=/path/to/emqlite sh work_cli.sh
# Prints "N passed, N failed" last.

. "$(dirname "$0")/cli_harness.sh"
cli_setup work_cli work w.db

file_is() { if [ "$(cat "$2")" = "$3" ]; then pass; else rc=-; fail "$1 ($2: '$(cat "$2")' != '$3')"; fi; }

T=1767225600000

# ------------------------------------------------------------- repeat

at $T repeat add mail report --every 10s daily
rc_is "repeat add" 0
out_is "repeat add prints registered" "registered"
at $T repeat add mail report --every 1s other
rc_is "repeat add of an existing name exits 3" 3
err_has "it says exists" "exists"
at $T repeat add mail later --every 1m --first-in 1h tpl
at $T repeat list mail
rc_is "repeat list" 0
out_has "list: report every 10s from now" '^report every 10s next 2026-01-01T00:00:00.000Z daily$'
out_has "list: later an hour out" '^later every 1m next 2026-01-01T01:00:00.000Z tpl$'
at $T --json repeat list mail
out_has "list --json" '^\[\{"name":"report","every_ms":10000,"next_ms":1767225600000,"template":"daily"\},'
at $T repeat add mail bad
rc_is "repeat add without --every" 1
at $T repeat add mail 'a:b' --every 1s x
rc_is "a name with ':' is refused" 1

# ------------------------------------------------------------- sweep

at $T sweep mail
rc_is "sweep" 0
out_is "the sweep fires the due registration" "promoted 0 fired 1 delivered 0"
at $T sweep mail
out_is "not again before its period" "promoted 0 fired 0 delivered 0"
at $((T + 35000)) --json sweep mail
out_is "missed periods collapse into one" '{"queue":"mail","promoted":0,"fired":1,"delivered":0}'
at $T stats mail
out_has "two occurrences pending" '^mail +2 +0 +0 +0 +0 +0 +0 +0$'
at $T repeat cancel mail report
out_is "repeat cancel" "cancelled"
at $T repeat cancel mail report
rc_is "cancel again exits 6" 6
at $T repeat cancel mail later

# -------------------------------------------- work: exit 0, exit N, stdin

at $T work mail --once -- sh -c 'test "$(cat)" = daily && test "$EMQLITE_QUEUE" = mail && test "$EMQLITE_JOB_ATTEMPTS" = 1'
rc_is "work --once" 0
out_has "the job ran with its payload and environment" '^JOB[0-9A-Za-z]{11} 1 done$'
at $T work mail --once --max-attempts 2 --backoff fixed:500 -- sh -c 'exit 3'
out_has "a failing command retries the job" '^JOB[0-9A-Za-z]{11} 1 scheduled \(exit 3\)$'
at $T stats mail
out_has "scheduled with the backoff" '^mail +0 +0 +1 +0 +1 +0 +0 +0$'
at $((T + 500)) work mail --once --max-attempts 2 -- sh -c 'exit 4'
out_has "promoted when due, dead at the cap" '^JOB[0-9A-Za-z]{11} 2 dead \(exit 4\)$'
id=$(awk '{print $1}' "$tmp/out")
at $T job mail "$id"
out_has "last_error is the exit status" '^last_error +exit 4$'
at $T work mail --timeout 0 -- true
rc_is "nothing to do: exit 2" 2
at $T --json work mail --timeout 0 -- true
out_is "work --json" '{"queue":"mail","claimed":0,"completed":0,"retried":0,"dead":0,"abandoned":0,"stale":0,"errors":0}'
# A real timeout on a pinned clock ends (issue 27 item 10: the real time
# left went negative when a wait overshot, and work hung). `timeout` only
# bounds a failure; the unit test sched/wake pins the cause.
for i in 1 2 3; do
    run timeout 30 env EMQLITE_NOW_MS=$T "$EMQLITE" --db "$db" work mail \
        --timeout 100ms -- true
    rc_is "work --timeout 100ms on a pinned clock ends ($i)" 2
done
at $T work mail
rc_is "work needs a command" 1

# ---------------------------------------------------------- policy

at $T policy mail
rc_is "no policy yet" 6
at $T policy mail --max-attempts 5 --backoff exponential:100:10000
out_is "policy set" "set"
at $T policy mail
out_is "policy get" "max-attempts 5 backoff exponential:100:10000"
at $T enqueue mail boom
at $T work mail --once --max-attempts 1 -- false
out_has "the stored policy wins over --max-attempts" '^JOB[0-9A-Za-z]{11} 1 scheduled \(exit 1\)$'
at $T policy mail --clear
out_is "policy clear" "cleared"
at $((T + 100)) work mail --once --max-attempts 2 -- false
out_has "then the flags apply" '^JOB[0-9A-Za-z]{11} 2 dead \(exit 1\)$'

# -------------------------------- work: a command killed by SIGKILL

# The command records each run, then kills itself with SIGKILL: the
# worker survives, leaves the job to its 5 s lease, and exits. Past the
# lease the next worker's claim reaps it and runs it again: done once.
cat >"$tmp/flaky.sh" <<'EOF'
echo "run $EMQLITE_JOB_ATTEMPTS: $(cat)" >>"$1"
[ "$EMQLITE_JOB_ATTEMPTS" -gt 1 ] || kill -9 $$
EOF
at $T enqueue billing invoice-42
job=$out
echo "work_cli: the SIGKILL demonstration:"
at $T work billing --lease 5s --once -- sh "$tmp/flaky.sh" "$tmp/runs"
rc_is "the worker survives its command's SIGKILL" 0
out_is "the job is left to its lease" "$job 1 abandoned (signal 9: left to its lease)"
echo "  t+0s:  $out"
at $T stats billing
out_has "still active, leased" '^billing +0 +1 +0 +0 +0 +0 +0 +0$'
at $((T + 4999)) work billing --once --timeout 0 -- sh "$tmp/flaky.sh" "$tmp/runs"
rc_is "before the lease lapses nothing is claimed" 2
at $((T + 5000)) work billing --lease 5s --once -- sh "$tmp/flaky.sh" "$tmp/runs"
rc_is "the lapsed lease is reaped and claimed" 0
out_is "and done on its second attempt" "$job 2 done"
echo "  t+5s:  $out"
at $((T + 5000)) work billing --once --timeout 0 -- sh "$tmp/flaky.sh" "$tmp/runs"
rc_is "and only once: nothing is left" 2
file_is "the command ran twice, the job completed once" "$tmp/runs" \
"run 1: invoice-42
run 2: invoice-42"
at $T stats billing
out_has "completed 1, nothing pending or active" '^billing +0 +0 +0 +0 +1 +0 +0 +0$'
echo "  runs:  $(tr '\n' ';' <"$tmp/runs")"
echo "  stats: $out"

# ----------------------------------------------------------- Ctrl-C

# The command tells the test it started (FIFO a), the test sends SIGINT
# to the worker, then lets the command finish (FIFO b): the job is done,
# the worker exits 0 and claims nothing more.
mkfifo "$tmp/a" "$tmp/b"
at $T enqueue ctl one
first=$out
at $T enqueue ctl two
env EMQLITE_NOW_MS=$T "$EMQLITE" --db "$db" work ctl -- \
    sh -c 'echo started >"$0"; read x <"$1"; cat >/dev/null' "$tmp/a" "$tmp/b" \
    >"$tmp/wout" 2>"$tmp/werr" &
wpid=$!
read started <"$tmp/a"
kill -INT $wpid
echo go >"$tmp/b"
wait $wpid
rc=$?
cp "$tmp/wout" "$tmp/out"
out=$(cat "$tmp/out")
rc_is "Ctrl-C: the worker exits 0" 0
out_is "after finishing the job in hand" "$first 1 done"
at $T stats ctl
out_has "the other job is still pending" '^ctl +1 +0 +0 +0 +1 +0 +0 +0$'

# A second one (SIGTERM here: two SIGINTs could merge into one delivery)
# stops the command with SIGTERM: the job is left to its lease.
env EMQLITE_NOW_MS=$T "$EMQLITE" --db "$db" work ctl -- \
    sh -c 'echo started >"$0"; read x <"$1"' "$tmp/a" "$tmp/b" \
    >"$tmp/wout" 2>"$tmp/werr" &
wpid=$!
read started <"$tmp/a"
kill -INT $wpid
kill -TERM $wpid
wait $wpid
rc=$?
cp "$tmp/wout" "$tmp/out"
out=$(cat "$tmp/out")
rc_is "a second Ctrl-C: the worker exits 0" 0
out_has "the command was stopped" ' 1 abandoned \(signal 15: left to its lease\)$'

# ---------------------------------------------------------- stalled

at $T enqueue st a
at $T claim st --lease 100
at $((T + 100)) stalled st --max 2
rc_is "stalled" 0
out_has "a lapsed lease is recovered" '^recovered JOB'
out_has "counts" '^recovered 1 dead 0$'
at $((T + 100)) claim st --lease 100
at $((T + 200)) --json stalled st --max 2
out_has "the second stall dead-letters" '^\{"queue":"st","recovered":\[\],"dead":\["JOB[0-9A-Za-z]{11}"\]\}$'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
