#!/bin/sh
# cli_lane_test.sh — `emqlite lane ...`, end to end: every subcommand's text
# output, its exact JSON document, its --help, and every exit status it
# documents (doc/emqlite.1, "Fair lanes"). Ids are given and the clock is
# pinned (EMQLITE_NOW_MS), so the documents are compared byte for byte.
#
# Run by `make check` from the build directory (./emqlite), or by hand:
# EMQLITE=/path/to/emqlite sh cli_lane_test.sh. Prints "N passed, N failed".

. "$(dirname "$0")/cli_harness.sh"
cli_setup cli_lane_test lane l.db

# l MS ARGS...: `emqlite lane ARGS` on the test file at Unix ms MS; stdout
# in $out, stderr in $err, the exit status in $rc.
l() {
    ms=$1
    shift
    env EMQLITE_NOW_MS="$ms" "$EMQLITE" --db "$db" "$@" >"$tmp/out" \
        2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
}
pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    echo "  exit $rc; stdout: $(head -c 400 "$tmp/out")"
    echo "  stderr: $(head -c 400 "$tmp/err")"
}
# expect NAME RC [STDOUT]: the exit status, and stdout exactly when given
expect() {
    if [ "$rc" -ne "$2" ]; then
        fail "$1 (exit $rc, want $2)"
    elif [ $# -ge 3 ] && [ "$out" != "$3" ]; then
        fail "$1 (stdout != '$3')"
    else
        pass
    fi
}
# err_has NAME ERE
err_has() {
    if grep -Eq -- "$2" "$tmp/err"; then pass; else fail "$1 (stderr !~ $2)"; fi
}

Q=mail
G=PRT0KHTOWnGLuC
H=PRT0NgWEfAEJfs
J1=JOB00000000001
J2=JOB00000000002
J3=JOB00000000003
J4=JOB00000000004
J5=JOB00000000005
T=1767225600000
NL='
'

# ------------------------------------------------------------------- help

l 0 lane --help
expect "lane --help" 0
cp "$tmp/out" "$tmp/help"
for s in enqueue claim pause resume limit weight reassign drain depth reap; do
    if grep -q "^lane $s " "$tmp/help"; then pass; else fail "lane --help lists $s"; fi
    l 0 lane "$s" --help
    if [ "$rc" -eq 0 ] && grep -q "^usage: emqlite .*lane $s " "$tmp/out"; then
        pass
    else
        fail "lane $s --help"
    fi
done
if [ ! -e "$db" ]; then pass; else fail "--help does not create the file"; fi
l 0 lane
expect "lane without a subcommand" 1
err_has "says what is missing" 'missing subcommand'
l 0 lane frob $Q
expect "an unknown subcommand" 1
err_has "names it" "unknown subcommand 'frob'"

# ---------------------------------------------------------------- enqueue

l $T lane enqueue $Q $G one --id $J1
expect "enqueue prints the id" 0 "$J1"
l $T --json lane enqueue $Q $G two --id $J2
expect "enqueue --json" 0 \
    "{\"queue\":\"$Q\",\"group\":\"$G\",\"id\":\"$J2\",\"result\":\"enqueued\"}"
l $T lane enqueue $Q $H three --id $J3
expect "enqueue into a second lane" 0 "$J3"
l $T lane enqueue $Q $H again --id $J1
expect "a duplicate exits 3" 3 "$J1"
err_has "a duplicate says so" 'duplicate'
l $T --json lane enqueue $Q $H again --id $J1
expect "duplicate --json" 3 \
    "{\"queue\":\"$Q\",\"group\":\"$H\",\"id\":\"$J1\",\"result\":\"duplicate\"}"
l $T lane enqueue $Q $G x --id ORD0KHTOWnGLuC
expect "EMQKIND exits 4" 4
err_has "EMQKIND verbatim" '^emqlite: EMQKIND job id must be JOB-namespaced$'
l $T lane enqueue $Q PRT x --id $J4
expect "an ill-formed group exits 1" 1
err_has "the group gate's words" "^emqlite: lane enqueue: GROUP 'PRT' is not a lane id \(a branded id\): "
l $T lane enqueue $Q $G
expect "a missing payload is a usage error" 1
l $T lane enqueue $Q $H minted
if [ "$rc" -eq 0 ] && echo "$out" | grep -Eq '^JOB[0-9A-Za-z]{11}$'; then
    pass
else
    fail "enqueue mints an id"
fi
minted=$out

# ------------------------------------------------------------------ depth

l $T lane depth $Q $G
expect "depth of one lane" 0 2
l $T lane depth $Q $G $H PRT00000000009
expect "depth of several" 0 "$G 2$NL$H 2${NL}PRT00000000009 0"
l $T --json lane depth $Q $H $G $H
expect "depth --json, a repeat once" 0 \
    "{\"queue\":\"$Q\",\"depths\":{\"$H\":2,\"$G\":2}}"

# ------------------------------------------------------------------ claim

l $T lane claim $Q --lease 1000
expect "claim serves the first lane" 0 "$J1 1 $G${NL}one"
l $T --json lane claim $Q --lease 1000
expect "claim --json rotates to the next lane" 0 \
    "{\"queue\":\"$Q\",\"group\":\"$H\",\"jobs\":[{\"id\":\"$J3\",\"attempts\":1,\"payload\":\"three\"}]}"
l $T lane claim $Q --weighted --batch
expect "--weighted and --batch exclude each other" 1
l $T lane claim $Q --lease 0
expect "a lease of 0 is refused" 1
l $T lane weight $Q $H 0
expect "a weight of 0 is refused" 1
l $T --json lane weight $Q $H 5
expect "weight --json" 0 \
    "{\"queue\":\"$Q\",\"group\":\"$H\",\"result\":\"ok\"}"
l $T lane enqueue $Q $H four --id $J4
l $T lane claim $Q --lease 1000 --weighted
expect "a weighted claim takes one job of G (weight 1)" 0 "$J2 1 $G${NL}two"
l $T --json lane claim $Q --weighted
expect "a weighted claim takes min(weight, depth) of H" 0 \
    "{\"queue\":\"$Q\",\"group\":\"$H\",\"jobs\":[{\"id\":\"$J4\",\"attempts\":1,\"payload\":\"four\"},{\"id\":\"$minted\",\"attempts\":1,\"payload\":\"minted\"}]}"
l $T lane claim $Q
expect "every lane drained: empty" 2 ""
err_has "empty says why" 'nothing to claim'
l $T --json lane claim $Q
expect "empty --json" 2 "{\"queue\":\"$Q\",\"result\":\"empty\"}"

# ----------------------------------------------- pause, resume, limit, batch

l $T lane enqueue $Q $G five --id $J5
l $T lane pause $Q $G
expect "pause" 0 ok
l $T lane claim $Q
expect "a paused lane is not served" 2
l $T --json lane resume $Q $G
expect "resume --json" 0 \
    "{\"queue\":\"$Q\",\"group\":\"$G\",\"result\":\"ok\"}"
l $T lane limit $Q $G 2
expect "limit at the in-flight count" 0 ok
l $T lane claim $Q
expect "a group at its limit is not served" 2
l $T lane limit $Q $G 0
expect "a limit of 0 is refused" 1
l $T lane limit $Q $G 5
expect "raising the limit" 0 ok
l $T lane claim $Q --batch
expect "a batch claim serves the lane" 0 "$J5 1 $G${NL}five"
l $T lane depth $Q $G
expect "the lane is empty" 0 0
"$EMQLITE" --db "$db" pause $Q >/dev/null
l $T lane enqueue $Q $G six --id JOB00000000006
l $T lane claim $Q
expect "a paused queue serves no lane" 2
"$EMQLITE" --db "$db" resume $Q >/dev/null

# --------------------------------------------------------------- reassign

l $T lane reassign $Q JOB00000000006 $H
expect "reassign" 0 reassigned
l $T --json lane reassign $Q JOB00000000006 $H
expect "reassign to its own lane: noop" 0 \
    "{\"queue\":\"$Q\",\"group\":\"$H\",\"id\":\"JOB00000000006\",\"result\":\"noop\"}"
l $T lane reassign $Q $J1 $H
expect "reassign of a claimed job exits 12" 12 not_pending
err_has "not_pending says why" 'not waiting in its lane'
l $T lane reassign $Q JOB00000000009 $H
expect "reassign of no job exits 6" 6 not_found
l $T lane reassign $Q JOB00000000009 bad
expect "reassign to an ill-formed group exits 1" 1

# ------------------------------------------------------------ drain, reap

l $T lane drain $Q $H
expect "drain counts the lane" 0 1
l $T --json lane drain $Q $H
expect "drain --json of an empty lane" 0 \
    "{\"queue\":\"$Q\",\"group\":\"$H\",\"drained\":0}"
# J1, J2 (G) and J3 (H) were leased for 1000 ms at T.
l $((T + 2000)) lane reap $Q $H
expect "reap returns H's lapsed lease only" 0 1
l $((T + 2000)) lane reap $Q $H
expect "a second reap finds none of H's" 0 0
l $((T + 2000)) --json lane reap $Q $G --limit 100
expect "reap --json returns G's two" 0 \
    "{\"queue\":\"$Q\",\"group\":\"$G\",\"reaped\":2}"
l $((T + 2000)) lane reap $Q $G --limit 0
expect "reap --limit 0 is refused" 1
l $((T + 2000)) lane depth $Q $G $H
expect "the reaped jobs wait in their lanes" 0 "$G 2$NL$H 1"
l $((T + 2000)) lane claim $Q
expect "a reaped job is claimed again with the next token" 0 \
    "$J3 2 $H${NL}three"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
