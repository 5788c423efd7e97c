#!/bin/sh
# cli_ops_test.sh — the operator's commands of the emqlite tool
# (cli/cli_ops.c), end to end: list, job, requeue, remove, drain,
# obliterate, counts, metrics, progress, logs, update, delay, claim-batch
# and events, their JSON documents and their documented exit statuses.
#
# Run by `make check` from the build directory, or by hand:
# EMQLITE=/path/to/emqlite sh cli_ops_test.sh. Time is pinned with
# EMQLITE_NOW_MS; nothing sleeps (the live events test waits for a
# follower that stops by itself after N events or a bounded timeout).
# Prints "N passed, N failed" last.

. "$(dirname "$0")/cli_harness.sh"
cli_setup cli_ops_test ops ops.db


T0=1767225600000            # 2026-01-01T00:00:00.000Z
J1=JOB00000000001
J2=JOB00000000002
J3=JOB00000000003
J4=JOB00000000004

# ------------------------------------------------------------------- help

helps list job requeue remove drain obliterate counts progress logs update \
      delay claim-batch events metrics
run "$EMQLITE" --help
out_has "--help lists the operator's commands" '^  claim-batch +QUEUE N'

# ------------------------------------------------------------------ a queue

for j in $J1 $J2 $J3; do at $T0 enqueue q x --id $j; done
at $T0 enqueue q later --id $J4 --at $((T0 + 60000))
at $T0 claim q --lease 30000            # J1, token 1, deadline T0 + 30 s

# -------------------------------------------------------------------- list

at $T0 list q --state pending
rc_is "list pending" 0
out_has "pending lists J2 with its last transition" "^$J2  1767225600000  2026-01-01T00:00:00\.000Z  enqueued  attempts 0  error -  payload \"x\"$"
check "pending lists two" "$(wc -l <"$tmp/out")" -eq 2
at $T0 list q --state active
out_is "active shows the claim and the lease deadline" "$J1  1767225600000  2026-01-01T00:00:00.000Z  claimed  attempts 1  deadline 2026-01-01T00:00:30.000Z  error -  payload \"x\""
at $T0 list q --state scheduled
out_is "scheduled shows the run-at" "$J4  1767225600000  2026-01-01T00:00:00.000Z  scheduled  attempts 0  run_at 2026-01-01T00:01:00.000Z  error -  payload \"later\""
at $T0 list q --state pending --limit 1 --offset 1
out_has "offset 1 limit 1: the second (same time: the higher id first)" "^$J2 "
at $T0 list q --state pending --tail --limit 1
out_has "--tail: the oldest transition first" "^$J2 "
at $T0 --json list q --state active
json "list --json"
out_is "list --json shape" "{\"queue\":\"q\",\"state\":\"active\",\"total\":1,\"jobs\":[{\"id\":\"$J1\",\"last\":{\"ms\":1767225600000,\"utc\":\"2026-01-01T00:00:00.000Z\"},\"last_event\":\"claimed\",\"attempts\":1,\"deadline\":{\"ms\":1767225630000,\"utc\":\"2026-01-01T00:00:30.000Z\"},\"last_error\":null,\"payload_len\":1,\"payload_preview\":\"x\"}],\"next\":null}"
e list q --state waiting
rc_is "an unknown --state is a usage error" 1
e list q
rc_is "--state is required" 1
e list q --state dead --limit 0
rc_is "--limit 0 is refused" 1
e list q --lane PRT0KHTOWnGLuC
rc_is "an empty lane lists nothing" 0
out_is "an empty lane" ""

# --------------------------------------------------------------------- job

at $T0 job q $J1
rc_is "job" 0
out_has "job keeps the row lines" '^state +active$'
out_has "job shows the set" '^set +active$'
out_has "job shows the deadline" '^deadline +1767225630000  2026-01-01T00:00:30\.000Z$'
out_has "job shows the log count" '^logs +0$'
out_has "job shows the lock" '^locked +no$'
at $T0 job q $J4 --json
json "job --json"
out_has "job --json keeps fields first" "^\\{\"queue\":\"q\",\"id\":\"$J4\",\"fields\":\\{.*\"state\":\"scheduled\".*\\},\"kept\":null,\"history\":\\[\\{\"seq\":4,.*\"event\":\"scheduled\".*\\}\\]\\}\$"
out_has "job --json info" '"info":\{"set":"scheduled","deadline":null,"run_at":\{"ms":1767225660000,"utc":"2026-01-01T00:01:00\.000Z"\},"logs":0,"locked":false\}'
e job q JOB0000000000Z
rc_is "job of a missing row exits 6" 6

# ------------------------------------------------ progress, logs, update

e progress q $J1
rc_is "no progress yet exits 6" 6
e progress q $J1 40%
rc_is "progress set" 0
e progress q $J1
out_is "progress read back" "40%"
e --json progress q $J1
out_is "progress --json" "{\"queue\":\"q\",\"id\":\"$J1\",\"progress\":\"40%\"}"
e progress q JOB0000000000Z 1
rc_is "progress of a missing job exits 6" 6
e logs q $J1 --add one
out_is "logs --add answers the count" 1
e logs q $J1 --add two
e logs q $J1 --add three --keep 2
out_is "logs --keep answers keep" 2
e logs q $J1
out_is "logs keeps the last two" "two
three"
e --json logs q $J1
out_is "logs --json" "{\"queue\":\"q\",\"id\":\"$J1\",\"lines\":[\"two\",\"three\"]}"
e logs q JOB0000000000Z
rc_is "logs of a missing job exits 6" 6
e logs q $J1 --keep 2
rc_is "--keep without --add is a usage error" 1
e update q $J2 "new payload"
rc_is "update" 0
printf 'from\nstdin' | "$EMQLITE" --db "$db" update q $J3 - >/dev/null
e job q $J3
out_has "update - reads stdin" '^payload +from\\nstdin$'
e update q JOB0000000000Z x
rc_is "update of a missing job exits 6" 6
at $T0 job q $J1
out_has "job counts the log lines" '^logs +2$'

# ------------------------------------------------------ counts, metrics

e counts q
out_has "counts pending" '^pending +2$'
out_has "counts schedule" '^scheduled +1$'
e --json counts q
json "counts --json"
out_is "counts --json shape" '{"queue":"q","counts":{"pending":2,"active":1,"scheduled":1,"dead":0,"completed":0,"failed":0,"lane":0,"awaiting_children":0}}'

# ------------------------------------------------------------------- delay

at $T0 delay q $J1 7 --in 5000
rc_is "delay with a wrong token exits 5" 5
err_is "the stale text" "emqlite: EMQSTALE delay token mismatch"
at $T0 delay q $J1 1 --in 5000
rc_is "delay --in" 0
out_is "delay says until when" "delayed until 1767225605000  2026-01-01T00:00:05.000Z"
at $T0 list q --state scheduled
out_has "the delayed job is scheduled at now + 5 s" "^$J1  1767225600000 .* delayed .* run_at 2026-01-01T00:00:05.000Z "
at $T0 delay q $J1 1 --at 2026-01-01T00:00:02.500Z
out_has "delay --at an ISO time" "1767225602500"
at $T0 delay q $J1 1 --at $((T0 + 7000))
out_has "delay --at Unix ms" "1767225607000"
e delay q $J1 1 --in 5 --at 5
rc_is "--in and --at together are a usage error" 1
e delay q $J1 1 --at 2026-13-01T00:00:00Z
rc_is "a bad --at is a usage error" 1
e delay q JOB0000000000Z 1 --in 5
rc_is "delay of a missing job exits 6" 6
e delay q ORD00000000001 1 --in 5
rc_is "delay of an ORD id exits 4" 4

# -------------------------------------------------------------- claim-batch

at $T0 claim-batch q 5 --lease 1000
rc_is "claim-batch" 0
out_is "claim-batch takes the pending jobs in order" "$J2 1 new payload
$J3 1 from\\nstdin"
at $T0 claim-batch q 5
rc_is "claim-batch of an empty queue exits 2" 2
e --json claim-batch q 5
out_is "claim-batch --json empty" '{"queue":"q","result":"empty"}'

# ---------------------------------------------------- requeue, remove

at $T0 retry q $J2 1 --max 1 --error boom
at $T0 retry q $J3 1 --max 1 --error boom
at $T0 list q --state dead
out_has "dead lists J2 with its error" "^$J2  1767225600000  2026-01-01T00:00:00\.000Z  dead  attempts 1  error \"boom\"  payload "
e requeue q $J2
rc_is "requeue of a dead job" 0
e job q $J2
out_has "requeued: pending, last_error gone" '^set +pending$'
e requeue q $J2
rc_is "requeue of a job that is not dead exits 12" 12
err_is "the not-dead text" "emqlite: EMQSTATE not dead"
e requeue q JOB0000000000Z
rc_is "requeue of a missing job exits 6" 6
at $T0 claim q
at $T0 retry q $J2 2 --max 1 --error again
e --json requeue q --dead --all --batch 1
out_is "requeue --dead --all" '{"queue":"q","requeued":2,"skipped":0}'
e requeue q --dead
rc_is "--dead without --all is a usage error" 1
e remove q $J3
rc_is "remove" 0
e job q $J3
rc_is "a removed dead job is still kept" 0
out_has "its row is gone" '^set +gone$'
out_has "its kept record says dead" '^-- kept \(dead\)$'
out_has "its history ends removed" 'removed$'
at $T0 enqueue q y --id JOB00000000009 >/dev/null
e remove q JOB00000000009
e job q JOB00000000009
rc_is "a removed job that never finished is gone" 6
e remove q $J3
rc_is "remove of a missing job exits 6" 6

# --------------------------------------------------------- drain, metrics

e drain q
out_is "drain removes the pending jobs" 1
e drain q --schedule
out_is "drain --schedule removes the scheduled" 2
at $T0 enqueue q m --id JOB0000000000A
at $T0 claim q
at $T0 complete q JOB0000000000A 1
e metrics q
out_has "metrics completed" '^completed +1 +\(data points 0\)$'
e --json metrics q
out_is "metrics --json" '{"queue":"q","completed":{"count":1,"data_points":0},"failed":{"count":3,"data_points":0}}'

# --------------------------------------------------------------- obliterate

at $T0 enqueue q a --id JOB0000000000B
at $T0 claim q
e obliterate q --yes
rc_is "obliterate of an unpaused queue exits 12" 12
err_is "the not-paused text" "emqlite: EMQSTATE not paused"
e pause q
e obliterate q </dev/null
rc_is "obliterate with active jobs exits 12" 12
err_is "the active text" "emqlite: EMQSTATE active jobs present"
if command -v script >/dev/null 2>&1; then
    printf 'n\n' | script -qec "'$EMQLITE' --db '$db' obliterate q --force" \
        /dev/null >"$tmp/out" 2>&1
    rc=$?
    rc_is "obliterate on a terminal, answered no, exits 1" 1
    out_has "it asked" "obliterate queue 'q' and every job in it\\? \\[y/N\\]"
    e counts q
    out_has "nothing was deleted" '^active +1$'
fi
e --json obliterate q --force --budget 1 </dev/null
rc_is "obliterate --force" 0
out_has "obliterate in budget-sized calls" '^\{"queue":"q","result":"ok","calls":[2-9]\}$'
e counts q
out_has "the queue is gone" '^completed +0$'

# ------------------------------------------------------------------ events

e events --after 0 --count 4
rc_is "events replays the retained ones" 0
check "four lines" "$(wc -l <"$tmp/out")" -eq 4
out_has "the first: progress, as JSON" "^\\{\"seq\":1,\"at\":[0-9]+,\"at_utc\":\"[0-9T:.Z-]+\",\"queue\":\"q\",\"event\":\"progress\",\"job\":\"$J1\",\"message\":\"\\{\\\\\"event\\\\\":\\\\\"progress\\\\\",\\\\\"job\\\\\":\\\\\"$J1\\\\\",\\\\\"progress\\\\\":\\\\\"40%\\\\\"\\}\"\\}\$"
out_has "a delayed event" "\"event\":\"delayed\",\"job\":\"$J1\""
e events q --after 0 --timeout 0
rc_is "a timeout without --count exits 0" 0
e events q --count 1 --timeout 50
rc_is "nothing new before the timeout exits 2" 2
out_is "and prints nothing" ""
e events --after -1
rc_is "a negative --after is a usage error" 1
# Live: a follower of queue live, stopping after 2 events (or 20 s).
"$EMQLITE" --db "$db" events live --after 0 --count 2 --timeout 20000 \
    >"$tmp/ev" 2>&1 &
follower=$!
at $T0 enqueue live a --id JOB0000000000C
at $T0 claim live
at $T0 enqueue other b --id JOB0000000000D
at $T0 claim other
at $T0 complete other JOB0000000000D 1
at $T0 complete live JOB0000000000C 1
at $T0 enqueue live c --id JOB0000000000E
at $T0 claim live
at $T0 retry live JOB0000000000E 1 --max 1 --error "bad \"x\""
wait $follower
rc=$?
rc_is "the follower stopped after two events" 0
check "two lines" "$(wc -l <"$tmp/ev")" -eq 2
grep -q '"event":"completed","job":"JOB0000000000C"' "$tmp/ev" && pass ||
    fail "the follower saw live's completion"
grep -q '"event":"failed","job":"JOB0000000000E","message":"{\\"event\\":\\"failed\\",\\"job\\":\\"JOB0000000000E\\",\\"error\\":\\"bad \\\\\\"x\\\\\\"\\"}"' "$tmp/ev" && pass ||
    fail "the follower saw live's dead letter with its error"
grep -q 'JOB0000000000D' "$tmp/ev" && fail "another queue's event" || pass

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
