#!/bin/sh
# cli_stream.sh — the tool's stream commands end to end (cli/cli_stream.c):
# stream add | range | len | trim and group create | read | ack | pending |
# claim, their replies, their JSON documents and their exit statuses.
# Time is pinned with EMQLITE_NOW_MS; nothing sleeps (the one blocking read
# waits 1 ms). Prints "N passed, N failed" last.
LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS
top=$(pwd)
EMQLITE=${EMQLITE:-$top/emqlite}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-xcli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export EMQLITE_DB=$tmp/s.db EMQLITE_NOW_MS=1767225600000
passed=0
failed=0

run() {
    "$EMQLITE" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
ok() { passed=$((passed + 1)); }
bad() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    sed 's/^/  out: /' "$tmp/out"
    sed 's/^/  err: /' "$tmp/err"
}
# expect RC TEXT NAME: the last run's exit status, and stdout holding TEXT.
expect() {
    if [ "$rc" -eq "$1" ] && grep -qF -- "$2" "$tmp/out"; then ok
    else bad "$3 (exit $rc, wanted $1 and '$2')"; fi
}
expect_err() {
    if [ "$rc" -eq "$1" ] && grep -qF -- "$2" "$tmp/err"; then ok
    else bad "$3 (exit $rc, wanted $1 and '$2' on stderr)"; fi
}

run stream add q ev --id EVT0JZGkP8smrw job e1
expect 0 "EVT0JZGkP8smrw" "add with --id prints the id"
run stream add q ev --id EVT0JZGkP8smrw job again
expect_err 12 "equal or smaller than the target stream top item" \
    "an id at the top is nonmonotonic"
run stream add q ev --id ORD0KHTOWnGLuC job x
expect_err 1 "kind" "an ORD id is refused kind"
run stream add q ev --id nope job x
expect_err 1 "malformed" "a bad id is refused malformed"
run stream add q ev job e2
expect 0 "EVT" "add mints an EVT id"
run --json stream add q ev --xid 4102444800000-0 job far
expect 0 '"reply":"4102444800000-0"' "add --xid answers the entry id"
run stream add q bad:name job x
expect_err 1 "name" "a name with ':' is refused"
run stream add q ev job
expect_err 1 "pairs" "a field without a value"
run stream len q ev
expect 0 "3" "len counts the entries"
run stream len q none
expect 0 "0" "len of an absent stream"
run --json stream range q ev
expect 0 '["EVT0JZGkP8smrw",{"job":"e1"}]' "range reads records"
run --json stream range q ev --raw --count 1
expect 0 '[["1767225600000-4096",["id","EVT0JZGkP8smrw","job","e1"]]]' \
    "range --raw reads entries"
run --json stream range q ev "(1767225600000-4096" 1767225600000
expect 0 '"reply":[' "an exclusive bound"
run group create q ev g --start head
expect 0 "OK" "group create"
run group create q ev g
expect_err 9 "BUSYGROUP Consumer Group name already exists" "BUSYGROUP"
run group create q nostream g
expect_err 9 "requires the key to exist" "create needs the stream"
run group create q mk g --mkstream
expect 0 "OK" "create --mkstream"
run --json group read q ev g c1 --count 2
expect 0 '"reply":[["1767225600000-4096",["id","EVT0JZGkP8smrw","job","e1"]]' \
    "read delivers new entries"
run group read q ev nog c1
expect_err 9 "NOGROUP No such key 'emq:{q}:stream:ev' or consumer group 'nog'" \
    "an unknown group"
run group read q mk g c1 --block 1
expect 2 "(nil)" "nothing new after the wait: exit 2"
run --json group pending q ev g
expect 0 '["1767225600000-4096","c1",0,1]' "pending lists the deliveries"
run --json group read q ev g c1 --id 0
expect 0 '"reply":[["1767225600000-4096"' "read --id replays the PEL"
run --json group claim q ev g c2 --min-idle 0 --count 1
expect 0 '"reply":["' "claim answers the cursor first"
run group ack q ev g 1767225600000-4096
expect 0 "1" "ack"
run stream trim q ev --maxlen 1
expect 0 "2" "trim --maxlen"
run stream trim q ev --minid 9999999999999 --approx
expect 0 "0" "an approximate trim of one entry removes nothing"
run stream trim q ev
expect_err 1 "--maxlen" "trim needs a window"
run stream frob q ev
expect_err 1 "unknown subcommand" "an unknown subcommand"
run stream --help
expect 0 "add Q NAME [--id EVTID" "stream --help"
run group --help
expect 0 "claim Q NAME GROUP CONSUMER" "group --help"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
