#!/bin/sh
# cli_hist_test.sh — job history and retention through the emqlite tool
# (cli/cli_hist.c, issue 34 items 1, 2, 4 and 8): job ID without its
# queue, with its kept record and history; list of every state, sorted by
# the last transition, paged; stats and counts of lane jobs and flow
# parents; events --history; the history and retention settings; and an
# export that is the same with history on and off.
#
# Run by `make check` from the build directory, or by hand:
# EMQLITE=/path/to/emqlite sh cli_hist_test.sh. Time is pinned with
# EMQLITE_NOW_MS; nothing sleeps. Prints "N passed, N failed" last.

. "$(dirname "$0")/cli_harness.sh"
cli_setup cli_hist_test hist hist.db


T0=1767225600000            # 2026-01-01T00:00:00.000Z
J1=JOB00000000001
J2=JOB00000000002
J3=JOB00000000003
J4=JOB00000000004
G=PRT0KHTOWnGLuC

helps history retention

# ------------------------------------------------- a job that dies: job ID

at $T0 enqueue mail '{"to":"a@b"}' --id $J1
run env EMQLITE_NOW_MS=$((T0 + 1000)) EMQLITE_WORKER=mailer-1 "$EMQLITE" --db "$db" claim mail
at $((T0 + 2000)) retry mail $J1 1 --delay 5s --max 2 --error 'smtp 421 try later'
at $((T0 + 8000)) promote mail
run env EMQLITE_NOW_MS=$((T0 + 9000)) EMQLITE_WORKER=mailer-2 "$EMQLITE" --db "$db" claim mail
at $((T0 + 12000)) retry mail $J1 2 --max 2 --error 'card declined'
rc_is "the second failure dead-letters" 0
e job $J1
rc_is "job ID without its queue" 0
out_has "it names the queue" '^queue +mail$'
out_has "it is dead" '^set +dead$'
out_has "kept: dead" '^-- kept \(dead\)$'
out_has "kept: its payload" '^payload +\{"to":"a@b"\}$'
out_has "kept: its error" '^last_error +card declined$'
out_has "history: enqueued" '^2026-01-01T00:00:00\.000Z  enqueued$'
out_has "history: claimed by mailer-1" '^2026-01-01T00:00:01\.000Z  claimed  attempt 1  by .* pid [0-9]+ worker mailer-1$'
out_has "history: retried with who, delay and error" '^2026-01-01T00:00:02\.000Z  retried  attempt 1  by [^ ]+ pid [0-9]+  delay 5000ms  run_at 2026-01-01T00:00:07\.000Z  error "smtp 421 try later"$'
out_has "history: promoted" '^2026-01-01T00:00:08\.000Z  promoted$'
out_has "history: claimed by mailer-2" 'claimed  attempt 2  by .* worker mailer-2$'
out_has "history: dead, and who failed it" '^2026-01-01T00:00:12\.000Z  dead  attempt 2  by [^ ]+ pid [0-9]+  error "card declined"$'
cp "$tmp/out" "$tmp/job.txt"
e --json job $J1
json "job --json"
out_has "job --json: history and kept" '"kept":\{"state":"dead",.*"last_error":"card declined".*"history":\[\{"seq":1,.*"event":"enqueued"'
out_has "job --json: a claim's host, pid and worker" '"event":"claimed","attempts":1,"host":".*","pid":[0-9]+,"worker":"mailer-1"\}'
out_has "job --json: a retry's details, run_at an instant" '"event":"retried","attempts":1,"delay_ms":5000,"run_at":\{"ms":1767225607000,"utc":"2026-01-01T00:00:07\.000Z"\},"error":"smtp 421 try later"'
e job JOB0000000000Z
rc_is "a job found nowhere exits 6" 6

# ------------------------------------------- completed jobs, kept: list

for i in 2 3 4; do
    at $((T0 + 20000 + i)) enqueue mail "payload $i" --id JOB0000000000$i
    at $((T0 + 20000 + i)) claim mail
    at $((T0 + 21000 + i * 100)) complete mail JOB0000000000$i 1
done
e list mail --state completed
rc_is "list --state completed" 0
out_has "completed, newest first" "^$J4  1767225621400  2026-01-01T00:00:21\.400Z  completed  attempts 1  error -  payload \"payload 4\"$"
check "three completed" "$(wc -l <"$tmp/out")" -eq 3
check "newest first" "$(head -1 "$tmp/out" | cut -c1-14)" = "$J4"
cp "$tmp/out" "$tmp/completed.txt"
e list mail --state completed --limit 1 --after $J4
out_has "--after pages on" "^$J3 "
check "one a page" "$(wc -l <"$tmp/out")" -eq 1
e --json list mail --state completed --limit 2
json "list completed --json"
out_has "--json names the next page" '"next":"JOB00000000003"'
e job $J3
rc_is "a completed job is found" 0
out_has "its set is completed" '^set +completed$'
out_has "its history ends completed" 'completed  attempt 1$'
e list mail --state dead
out_has "dead: the time it died, its error and payload" "^$J1  1767225612000  2026-01-01T00:00:12\.000Z  dead  attempts 2  error \"card declined\"  payload \"\{\"to\":\"a@b\"\}\"$"

# ------------------------------------- lanes and flow parents: list, stats

at $T0 lane enqueue tenants $G one --id JOB0000000000A
at $T0 lane enqueue tenants $G two --id JOB0000000000B
e list tenants --lane $G
rc_is "list --lane" 0
check "two in the lane" "$(wc -l <"$tmp/out")" -eq 2
out_has "a lane job shows its group" "group $G"
e job JOB0000000000A
out_has "job of a lane job says lane" '^set +lane$'
printf '{"parent":{"id":"JOB0000000000P","payload":"p"},"children":[{"payload":"c1"},{"payload":"c2"}]}\n' >"$tmp/tree"
run "$EMQLITE" --db "$db" flow add build <"$tmp/tree"
rc_is "a flow" 0
e list build --state awaiting_children
rc_is "list --state awaiting_children" 0
out_has "the parent is listed" '^JOB0000000000P '
e stats tenants build
out_has "stats: lane jobs" '^tenants +0 +0 +0 +0 +0 +0 +2 +0$'
out_has "stats: the awaiting parent" '^build +2 +0 +0 +0 +0 +0 +0 +1$'
e counts tenants
out_has "counts: lane" '^lane +2$'
e --json counts build
out_has "counts --json: awaiting_children" '"awaiting_children":1'

# ----------------------------------------------------- events --history

e events --history --after 0 --count 3 --timeout 5s
rc_is "events --history" 0
out_has "the first entry" "^\{\"seq\":1,\"at\":1767225600000,\"at_utc\":\"2026-01-01T00:00:00\.000Z\",\"queue\":\"mail\",\"event\":\"enqueued\",\"job\":\"$J1\"\}$"
out_has "a claim with host, pid, worker" '"event":"claimed","job":"JOB00000000001","attempts":1,"host":".*","pid":[0-9]+,"worker":"mailer-1"'
out_has "a retry with delay, run-at and error" '"event":"retried",.*"delay_ms":5000,"run_at":1767225607000,"error":"smtp 421 try later"'
e events --history --timeout 10ms
rc_is "nothing new: the timeout ends it" 0
out_is "nothing new" ""

# ------------------------------------------------------- the settings

e history
out_has "history is on by default" '^history +on$'
out_has "64 per job" '^per_job +64$'
e history --off --per-job 10
e --json history
out_is "history --off --per-job 10" '{"enabled":false,"level":"off","per_job":10,"per_queue":100000,"max_age_ms":604800000}'
e history --per-queue 0
rc_is "a bound of 0 is refused" 1
err_is "it names the bound" "emqlite: invalid_argument: bad argument: per_queue must be >= 1 (got 0)"
at $T0 enqueue mail quiet --id JOB0000000000Q
e job JOB0000000000Q
out_has "off: nothing recorded" '^-- history$'
out_has "off: it says why" "^\(none: the history is off, see 'emqlite history'\)$"
check "off: no entry" "$(sed -n '/^-- history$/,$p' "$tmp/out" | wc -l)" -eq 2
e history --on --failures
rc_is "two levels at once are refused" 1
e history --failures
out_has "the failures level" '^history +failures$'
e --json history
out_has "--json names the level" '"enabled":true,"level":"failures"'
at $T0 enqueue mail routine --id JOB0000000000R
e job JOB0000000000R
out_has "failures: a routine enqueue is not recorded" '^-- history$'
out_has "failures: it says why" "^\(none: the history records failures only, see 'emqlite history'\)$"
check "failures: no entry" "$(sed -n '/^-- history$/,$p' "$tmp/out" | wc -l)" -eq 2
e history --on
out_has "back on" '^history +on$'
e retention
out_has "1000 completed by default" '^completed +1000$'
out_has "30 days of dead" '^dead_age +2592000000ms$'
at $((T0 + 30000)) retention mail --completed 1 --prune
rc_is "retention mail --completed 1 --prune" 0
out_has "two completed pruned" '^pruned +2$'
e list mail --state completed
out_has "the newest is kept" "^$J4 "
check "one completed kept" "$(wc -l <"$tmp/out")" -eq 1
e retention mail --reset
out_has "reset: the default again" '^completed +1000$'

# ----------------------------- an export is the same with history on and off

for mode in on off; do
    hdb=$tmp/$mode.db
    run "$EMQLITE" --db "$hdb" history --$mode
    for j in $J1 $J2; do
        run env EMQLITE_NOW_MS=$T0 "$EMQLITE" --db "$hdb" enqueue q x --id $j
    done
    run env EMQLITE_NOW_MS=$T0 "$EMQLITE" --db "$hdb" claim q
    run env EMQLITE_NOW_MS=$T0 "$EMQLITE" --db "$hdb" complete q $J1 1
    run env EMQLITE_NOW_MS=$T0 "$EMQLITE" --db "$hdb" claim q
    run env EMQLITE_NOW_MS=$T0 "$EMQLITE" --db "$hdb" retry q $J2 1 --max 1 --error e
    run "$EMQLITE" --db "$hdb" export --out "$tmp/$mode.resp"
    rc_is "export with history $mode" 0
done
check "the export is byte-identical with history on and off" \
    "$(cmp "$tmp/on.resp" "$tmp/off.resp" >/dev/null 2>&1; echo $?)" -eq 0
run "$EMQLITE" --db "$tmp/on.db" job $J1
out_has "history on: the completed job is kept" '^set +completed$'

# ------------------------------- work names its claims (EMQLITE_WORKER)

run "$EMQLITE" --db "$tmp/w.db" enqueue w hello --id $J1
run env EMQLITE_WORKER=sender-7 "$EMQLITE" --db "$tmp/w.db" work w --once -- true
rc_is "work --once" 0
run "$EMQLITE" --db "$tmp/w.db" job $J1
out_has "work's claim is recorded with EMQLITE_WORKER" 'claimed  attempt 1  by .* pid [0-9]+ worker sender-7$'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
