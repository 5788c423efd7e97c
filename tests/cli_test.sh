#!/bin/sh
# cli_test.sh — the emqlite command-line tool, end to end: every command's
# happy path, the JSON documents (checked with grep and a small awk JSON
# validator; no python, no jq), and every documented exit status.
#
# Run by `make check` from the build directory (./emqlite, tests/cli_helper),
# or by hand: EMQLITE=/path/to/emqlite CLI_HELPER=/path/to/cli_helper sh cli_test.sh
# Uses a temporary directory and --db; time is pinned with EMQLITE_NOW_MS
# where it matters; nothing sleeps. Prints "N passed, N failed" last.

LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_BUSY_TIMEOUT

top=$(pwd)
EMQLITE=${EMQLITE:-$top/emqlite}
HELPER=${CLI_HELPER:-$top/tests/cli_helper}
if [ ! -x "$EMQLITE" ]; then
    echo "cli_test: $EMQLITE not found (run from the build directory)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-cli.XXXXXX") || exit 1
helper_pid=
cleanup() {
    exec 3>&- 2>/dev/null
    [ -n "$helper_pid" ] && wait "$helper_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
db=$tmp/t.db
passed=0
failed=0

# ------------------------------------------------------------------ harness

. "$(dirname "$0")/cli_harness.sh"

ID='JOB[0-9A-Za-z]{11}'

# The validator itself must refuse what is not JSON.
printf '{"a":[1,2,{"b":null}],"c":"x\\"y"}\n' >"$tmp/out"; rc=0
json "validator accepts a document"
for bad_doc in '{"a":1' '{"a":1}{"b":2}' '{a:1}' '"x' '[1,]' '{"a":01}'; do
    printf '%s\n' "$bad_doc" >"$tmp/out"
    if awk "$json_awk" "$tmp/out"; then
        rc=0; fail "validator refuses $bad_doc"
    else
        pass
    fi
done

# ------------------------------------------------------------ help, version

run "$EMQLITE" --help
rc_is "--help exits 0" 0
out_has "--help lists the commands" '^  enqueue-many '
out_has "--help lists bench" '^  bench '
out_has "--help lists the transfer commands" '^  push +--to HOST:PORT'

helps enqueue enqueue-many claim complete retry extend promote reap \
      browse stats job slot version pause resume demo export bench
check "--help does not create the file" ! -e "$db"

run "$EMQLITE" help claim
rc_is "help claim" 0
out_has "help claim shows the lease option" '--lease DURATION'

e version
rc_is "version" 0
out_has "version: library" '^emqlite [0-9]+\.[0-9]+\.[0-9]+$'
out_has "version: wire" '^wire +echomq:4\.0\.0 \(new files\); also echomq:3\.0\.0$'
out_has "version: sqlite" '^sqlite +3\.[0-9]+'
e version --json
json "version --json"
out_has "version --json shape" '^\{"emqlite":"[0-9.]+","wire":"echomq:4\.0\.0","wires":\["echomq:4\.0\.0","echomq:3\.0\.0"\],"sqlite":"3\.[0-9.]+"\}$'
check "version does not create the file" ! -e "$db"

# ------------------------------------------------------------------- slot

e slot 123456789
out_is "slot of the reference vector" 12739
e slot 'emq:{orders}:pending'
out_is "slot of a queue key" 105
e slot 'emq:{orders}:job:JOB0KHTOWnGLuC'
out_is "slot of a job key" 105
e slot '{emq}:version'
out_is "slot of the version key" 9051
e --json slot 'emq:{q1}:pending'
json "slot --json"
out_is "slot --json shape" '{"key":"emq:{q1}:pending","slot":7450}'

# ---------------------------------------------------------------- enqueue

e enqueue mail hello
rc_is "enqueue" 0
out_has "enqueue prints a minted JOB id" "^$ID\$"
id1=$out
check "enqueue created the file" -f "$db"

printf 'from stdin\n' >"$tmp/in"
run "$EMQLITE" --db "$db" enqueue mail <"$tmp/in"
rc_is "enqueue from stdin" 0
id2=$out
run "$EMQLITE" --db "$db" enqueue mail - <"$tmp/in"
rc_is "enqueue from stdin with -" 0
id3=$out
check "minted ids increase" "$id1" \< "$id2"
check "minted ids increase again" "$id2" \< "$id3"

e enqueue mail --json 'with "quotes"'
rc_is "enqueue --json" 0
json "enqueue --json"
out_has "enqueue --json shape" "^\\{\"queue\":\"mail\",\"id\":\"$ID\",\"result\":\"enqueued\"\\}\$"
idq=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/out")

e enqueue ids --id JOB0KHTOWnGLuC first
rc_is "enqueue --id" 0
out_is "enqueue --id prints the given id" JOB0KHTOWnGLuC

e enqueue ids --id JOB0KHTOWnGLuC second
rc_is "enqueue duplicate exits 3" 3
out_is "enqueue duplicate prints the id" JOB0KHTOWnGLuC
err_has "enqueue duplicate says so" '^emqlite: duplicate: '
e enqueue ids --id JOB0KHTOWnGLuC third --json
rc_is "enqueue duplicate --json exits 3" 3
json "enqueue duplicate --json"
out_is "enqueue duplicate --json shape" '{"queue":"ids","id":"JOB0KHTOWnGLuC","result":"duplicate"}'
e claim ids
check "the first payload stands" "$(tail -n +2 "$tmp/out")" = first

e enqueue mail --id USR0KHTOWnGLuC x
rc_is "enqueue of a USR id exits 4 (EMQKIND)" 4
err_is "EMQKIND wire string" 'emqlite: EMQKIND job id must be JOB-namespaced'
e --json enqueue mail --id USR0KHTOWnGLuC x
json "EMQKIND --json"
out_has "EMQKIND --json error shape" '^\{"error":\{"class":"EMQKIND","message":"EMQKIND job id must be JOB-namespaced","code":-[0-9]+\},"exit":4\}$'

e enqueue mail --id nope x
rc_is "enqueue of an invalid id exits 1" 1
err_has "invalid id message" "^emqlite: enqueue: --id 'nope' is not a branded id: "
e enqueue 'bad queue' x
rc_is "enqueue into an invalid queue exits 1" 1
err_has "invalid queue message" "^emqlite: enqueue: QUEUE 'bad queue' is not a queue name: "
e enqueue emq x
rc_is "enqueue into the reserved queue name exits 1" 1

# -------------------------------------------------------- claim, complete

e claim mail
rc_is "claim" 0
check "claim: first line is ID TOKEN" "$(head -n 1 "$tmp/out")" = "$id1 1"
check "claim: then the payload" "$(tail -n +2 "$tmp/out")" = "hello"

e complete mail "$id1" 1
rc_is "complete" 0
out_is "complete prints ok" ok
e complete mail "$id1" 1
rc_is "complete again exits 6 (gone)" 6
err_has "gone message" '^emqlite: gone: '
e complete mail "$id1" 1 --json
json "complete gone --json"
out_is "complete gone --json shape" "{\"queue\":\"mail\",\"id\":\"$id1\",\"result\":\"gone\"}"

e claim mail --json
rc_is "claim --json" 0
json "claim --json"
out_is "claim --json shape (the stdin payload keeps its newline)" \
    "{\"queue\":\"mail\",\"id\":\"$id2\",\"attempts\":1,\"payload\":\"from stdin\\n\"}"

e complete mail "$id2" 7
rc_is "complete with a wrong token exits 5" 5
err_is "EMQSTALE complete wire string" 'emqlite: EMQSTALE complete token mismatch'
e complete mail "$id2" 7 --json
json "EMQSTALE --json"
out_has "EMQSTALE --json error shape" '^\{"error":\{"class":"EMQSTALE","message":"EMQSTALE complete token mismatch","code":-[0-9]+\},"exit":5\}$'
e complete mail "$id2" 1 --json
json "complete --json"
out_is "complete --json shape" "{\"queue\":\"mail\",\"id\":\"$id2\",\"result\":\"ok\"}"

# ------------------------------------------------------ retry and extend

e claim mail
id=$(head -n 1 "$tmp/out" | cut -d' ' -f1)
check "third claim is the third job" "$id" = "$id3"
e extend mail "$id3" 1 --lease 60000
rc_is "extend" 0
out_is "extend prints ok" ok
e extend mail "$id3" 2
rc_is "extend with a wrong token exits 5" 5
err_is "EMQSTALE extend wire string" 'emqlite: EMQSTALE extend token mismatch'
e extend mail JOB00000000000 1 --json
rc_is "extend of a missing job exits 6" 6
json "extend gone --json"
out_is "extend gone --json shape" '{"queue":"mail","id":"JOB00000000000","result":"gone"}'
e extend mail "$id3" 1 --lease 0
rc_is "extend --lease 0 exits 1" 1

e retry mail "$id3" 1 --delay 0 --max 3 --error 'smtp 421'
rc_is "retry" 0
out_is "retry prints scheduled" scheduled
e retry mail "$id3" 5
rc_is "retry with a wrong token exits 5" 5
err_is "EMQSTALE retry wire string" 'emqlite: EMQSTALE retry token mismatch'
e retry mail JOB00000000000 1
rc_is "retry of a missing job exits 5" 5
err_is "EMQSTALE job gone wire string" 'emqlite: EMQSTALE job gone'
e job mail "$id3"
rc_is "job" 0
out_has "job shows the state" '^state +scheduled$'
out_has "job shows the attempts" '^attempts +1$'
out_has "job shows the last error" '^last_error +smtp 421$'
out_has "job shows the payload, escaped" '^payload +from stdin\\n$'
e job mail "$id3" --json
json "job --json"
out_has "job --json shape" "^\\{\"queue\":\"mail\",\"id\":\"$id3\",\"fields\":\\{.*\"state\":\"scheduled\".*\\},\"kept\":null,\"history\":\\[.*\\]\\}\$"
out_has "job --json payload" '"payload":"from stdin\\n"'
e job mail JOB00000000000
rc_is "job of a missing row exits 6" 6

# ------------------------------------------------- promote, reap (pinned)

e promote mail
rc_is "promote" 0
out_is "promote moves the due retry" 1
e claim mail --json
out_has "the promoted job is claimed with token 2" "\"id\":\"$id3\",\"attempts\":2"
e retry mail "$id3" 2 --max 2 --error 'gave up' --json
rc_is "retry at the cap" 0
json "retry --json"
out_is "retry --json dead shape" "{\"queue\":\"mail\",\"id\":\"$id3\",\"result\":\"dead\"}"
e job mail "$id3"
out_has "the dead job's state" '^state +dead$'

at 1000000 enqueue later --in 5000 soon
rc_is "enqueue --in" 0
idl=$out
at 1000000 enqueue later --at 2000000 much-later --json
json "enqueue --at --json"
out_has "enqueue --at --json says scheduled" '"result":"scheduled"\}$'
at 1004999 promote later
out_is "promote before the run-at moves nothing" 0
at 1005000 promote later --batch 10 --json
json "promote --json"
out_is "promote at the run-at moves it" '{"queue":"later","promoted":1}'
at 1000000 claim later --lease 500
check "claim under the pinned clock" "$(head -n 1 "$tmp/out")" = "$idl 1"
at 1000499 reap later
out_is "reap before the deadline returns nothing" 0
at 1000500 reap later --json
json "reap --json"
out_is "reap at the deadline returns it" '{"queue":"later","reaped":1}'
at 1000500 claim later
check "the reaped job is claimed again with token 2" "$(head -n 1 "$tmp/out")" = "$idl 2"
at 1000500 complete later "$idl" 1
rc_is "the first worker's token is now stale" 5
at 1000500 complete later "$idl" 2
rc_is "complete with the new token" 0
at abc stats
rc_is "a bad EMQLITE_NOW_MS exits 1" 1
e promote later --batch 0
rc_is "promote --batch 0 exits 1" 1

# ------------------------------------------------------------ enqueue-many

printf 'one\ntwo\n\nfour' >"$tmp/in"
run "$EMQLITE" --db "$db" enqueue-many bulk <"$tmp/in"
rc_is "enqueue-many" 0
out_is "enqueue-many counts" 'enqueued 4 duplicate 0 kind 0'
printf 'a\nb\nc\n' >"$tmp/lines"
e enqueue-many bulk "$tmp/lines" --json
rc_is "enqueue-many FILE --json" 0
json "enqueue-many --json"
out_has "enqueue-many --json shape" "^\\{\"queue\":\"bulk\",\"enqueued\":3,\"duplicate\":0,\"kind\":0,\"items\":\\[\\{\"id\":\"$ID\",\"result\":\"enqueued\"\\},\\{\"id\":\"$ID\",\"result\":\"enqueued\"\\},\\{\"id\":\"$ID\",\"result\":\"enqueued\"\\}\\]\\}\$"
last=$(sed 's/.*"id":"\([^"]*\)","result":"enqueued"}]}$/\1/' "$tmp/out")

e browse bulk -n 2
rc_is "browse" 0
check "browse shows the newest first" "$(head -n 1 "$tmp/out")" = "$last"
check "browse -n 2 shows two" "$(wc -l <"$tmp/out")" -eq 2
e browse bulk --json
json "browse --json"
out_has "browse --json shape" "^\\{\"queue\":\"bulk\",\"ids\":\\[\"$last\"(,\"$ID\"){6}\\]\\}\$"
e browse bulk -n 0
rc_is "browse -n 0 exits 1" 1

cat >"$tmp/nd" <<'EOF'
"plain string"

{"id":"JOB0KHTOWnGLuD","payload":"tab\there"}
{"payload":{"b64":"/wB4"},"note":[1,{"x":null}]}
{"id":"JOB0KHTOWnGLuD","payload":"again"}
{"id":"USR0KHTOWnGLuD","payload":"wrong kind"}
"caf\u00e9 \ud83d\ude00"
EOF
e enqueue-many nd "$tmp/nd" --ndjson
rc_is "enqueue-many --ndjson" 0
out_is "enqueue-many --ndjson counts" 'enqueued 4 duplicate 1 kind 1'
e claim nd --json
out_has "ndjson object with an id (oldest id first)" '"id":"JOB0KHTOWnGLuD","attempts":1,"payload":"tab\\there"\}$'
e claim nd --json
out_has "ndjson string payload" '"payload":"plain string"\}$'
e claim nd --json
json "claim of a binary payload --json"
out_has "binary payload comes back as b64" '"payload":\{"b64":"/wB4"\}\}$'
e claim nd --json
out_has "ndjson unicode escapes decode to UTF-8" "\"payload\":\"caf$(printf '\303\251') $(printf '\360\237\230\200')\"\\}\$"
e claim nd
rc_is "the ndjson batch is drained (kind and duplicate not admitted)" 2

printf '{"payload":1}\n' >"$tmp/in"
run "$EMQLITE" --db "$db" enqueue-many nd --ndjson <"$tmp/in"
rc_is "enqueue-many malformed ndjson exits 1" 1
err_has "malformed ndjson names the line" 'line 1: '
printf '"ok"\n{"id":"short","payload":"x"}\n' >"$tmp/in"
run "$EMQLITE" --db "$db" enqueue-many nd --ndjson <"$tmp/in"
rc_is "enqueue-many with an invalid id exits 1" 1
: >"$tmp/in"
run "$EMQLITE" --db "$db" enqueue-many nd <"$tmp/in"
rc_is "enqueue-many of nothing exits 1 (empty batch)" 1
err_has "empty batch message" 'empty_pipeline'
e enqueue-many nd "$tmp/does-not-exist"
rc_is "enqueue-many of a missing file exits 9" 9
e stats nd --json
out_has "failed batches applied nothing" '"pending":0,'

# ------------------------------------------------------------ binary, JSON

printf 'a\000b\tc"\\\001\177' >"$tmp/bin"
run "$EMQLITE" --db "$db" enqueue esc <"$tmp/bin"
run "$EMQLITE" --db "$db" enqueue esc <"$tmp/bin"
e claim esc --json
json "control bytes --json"
out_has "control bytes are escaped" '"payload":"a\\u0000b\\tc\\"\\\\\\u0001\\u007f"\}$'
idb=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/out")
e claim esc
check "text mode writes the payload raw" "$(tail -n +2 "$tmp/out" | od -An -tx1 | tr -d ' \n')" = 6100620963225c017f0a
e retry esc "$idb" 1 --error "$(printf 'bad\001')" --delay 0
e job esc "$idb" --json
json "job --json with control bytes"
out_has "job --json last_error escaped" '"last_error":"bad\\u0001"'
e job esc "$idb"
out_has "job text mode escapes bytes" '^payload +a\\x00b\\tc"\\\\\\x01\\x7f$'

# -------------------------------------------------------- pause and stats

e pause mail
rc_is "pause" 0
out_is "pause prints ok" ok
e enqueue mail while-paused
e claim mail
rc_is "claim of a paused queue exits 2" 2
e stats mail
out_has "stats marks a paused queue" '^mail .*\(paused\)$'
e resume mail --json
json "resume --json"
out_is "resume --json shape" '{"queue":"mail","paused":false}'
e pause mail --json
out_is "pause --json shape" '{"queue":"mail","paused":true}'
e resume mail
e claim mail
rc_is "claim after resume" 0
check "claim after resume takes the oldest" "$(head -n 1 "$tmp/out")" = "$idq 1"
e claim mail
out_has "the job enqueued while paused is claimed last" '^while-paused$'
e claim mail --json
rc_is "claim of an empty queue exits 2" 2
json "claim empty --json"
out_is "claim empty --json shape" '{"queue":"mail","result":"empty"}'
e claim empty-queue
rc_is "claim of a never-used queue exits 2" 2
err_has "empty message" '^emqlite: empty: '

e stats
rc_is "stats" 0
out_has "stats header" '^QUEUE +PENDING +ACTIVE +SCHEDULED +DEAD +COMPLETED +FAILED +LANE +AWAITING$'
out_has "stats lists mail" '^mail +0 +2 +0 +1 +2 +1 +0 +0$'
out_has "stats lists later" '^later +0 +0 +1 +0 +1 +0 +0 +0$'
out_has "stats lists bulk" '^bulk +7 +0 +0 +0 +0 +0 +0 +0$'
hdr=$(head -n 1 "$tmp/out")
row=$(grep '^later ' "$tmp/out")
check "stats columns are aligned" "${#hdr}" -eq "${#row}"
e stats later bulk --json
json "stats --json"
out_is "stats --json shape" '{"wire":"echomq:4.0.0","queues":[{"queue":"later","pending":0,"active":0,"scheduled":1,"dead":0,"completed":1,"failed":0,"lane":0,"awaiting_children":0,"paused":false},{"queue":"bulk","pending":7,"active":0,"scheduled":0,"dead":0,"completed":0,"failed":0,"lane":0,"awaiting_children":0,"paused":false}]}'
e stats 'bad queue'
rc_is "stats of an invalid queue exits 1" 1

run env EMQLITE_DB="$db" "$EMQLITE" stats bulk
out_has "EMQLITE_DB selects the file" '^bulk +7 '
(cd "$tmp" && "$EMQLITE" enqueue here x >/dev/null 2>&1)
check "the default file is ./emqlite.db" -f "$tmp/emqlite.db"

# ------------------------------------------------------------------ usage

e frobnicate
rc_is "an unknown command exits 1" 1
e claim mail --bogus
rc_is "an unknown option exits 1" 1
e complete mail
rc_is "missing arguments exit 1" 1
e claim mail --lease soon
rc_is "a bad number exits 1" 1
e claim mail --lease 0
rc_is "a lease of 0 exits 1" 1
e enqueue mail x --at 1 --in 1
rc_is "--at with --in exits 1" 1
e --json frobnicate
rc_is "--json unknown command exits 1" 1
json "usage error --json"
out_has "usage error --json shape" '^\{"error":\{"class":"usage","message":".*"\},"exit":1\}$'
run "$EMQLITE"
rc_is "no command exits 1" 1

# ------------------------------------------------------- reserved commands

# bench runs the benchmark program: $EMQLITE_BENCH first, with every
# argument after 'bench' passed through; a missing program exits 10.
cat >"$tmp/fakebench" <<'FAKE'
#!/bin/sh
echo "fake-bench:$*"
exit 3
FAKE
chmod +x "$tmp/fakebench"
run env EMQLITE_BENCH="$tmp/fakebench" "$EMQLITE" bench --smoke --scale 0.5
rc_is "bench runs EMQLITE_BENCH and returns its exit" 3
out_has "bench passes its arguments through" '^fake-bench:--smoke --scale 0.5$'
run env EMQLITE_BENCH="$tmp/fakebench" "$EMQLITE" bench -- --help
out_has "bench -- passes --help to the benchmark" '^fake-bench:--help$'
run env EMQLITE_BENCH="$tmp/nope" "$EMQLITE" bench
rc_is "bench without the program exits 10" 10
err_has "bench says how to build it" "make bench"
run env EMQLITE_BENCH="$tmp/nope" "$EMQLITE" --json bench
json "bench not built --json"
out_has "bench not built --json shape" '^\{"error":\{"class":"not_built",.*"exit":10\}$'
for cmd in export import push pull verify check; do
    run "$EMQLITE" "$cmd" --help
    if [ "$rc" -eq 0 ] && grep -q "^Exit: 0" "$tmp/out"; then
        pass
    else
        fail "$cmd is built and documents its exits"
    fi
done

# ----------------------------------------------- fence, foreign, I/O, busy

if [ -x "$HELPER" ]; then
    fdb=$tmp/fence.db
    run "$EMQLITE" --db "$fdb" enqueue q x
    run "$HELPER" stamp "$fdb" echomq:2.0.0
    rc_is "stamping a 3.x wire" 0
    run "$EMQLITE" --db "$fdb" stats
    rc_is "a file of another wire exits 7" 7
    err_has "the fence names the found wire" 'echomq:3\.0\.0'
    run "$EMQLITE" --db "$fdb" --json claim q
    json "fence --json"
    out_has "fence --json class" '"class":"version_fence"'

    run "$HELPER" foreign "$tmp/foreign.db"
    run "$EMQLITE" --db "$tmp/foreign.db" stats
    rc_is "a foreign SQLite file exits 7" 7

    # busy: a helper holds the write lock until we close its stdin
    run "$EMQLITE" --db "$tmp/busy.db" enqueue q x
    mkfifo "$tmp/lock.in" "$tmp/lock.out"
    "$HELPER" lock "$tmp/busy.db" <"$tmp/lock.in" >"$tmp/lock.out" &
    helper_pid=$!
    exec 3>"$tmp/lock.in"
    read -r line <"$tmp/lock.out"
    check "the helper holds the lock" "$line" = locked
    run env EMQLITE_BUSY_TIMEOUT=0 "$EMQLITE" --db "$tmp/busy.db" enqueue q y
    rc_is "a locked file exits 8" 8
    err_has "busy message" '^emqlite: busy'
    exec 3>&-
    wait "$helper_pid"
    helper_pid=
    run "$EMQLITE" --db "$tmp/busy.db" enqueue q y
    rc_is "the lock released, enqueue works" 0
else
    rc=1
    fail "tests/cli_helper not built: fence, foreign and busy untested"
fi

printf 'garbage, not a database at all %0200d' 0 >"$tmp/garbage.db"
run "$EMQLITE" --db "$tmp/garbage.db" stats
check "a garbage file is refused (exit 7 or 9)" "$rc" -eq 7 -o "$rc" -eq 9
run "$EMQLITE" --db "$tmp/no/such/dir/x.db" stats
rc_is "a file that cannot be opened exits 9" 9
err_has "I/O message names the path" 'no/such/dir/x\.db'

# -------------------------------------------------------------------- demo

ddb=$tmp/demo.db
run "$EMQLITE" --db "$ddb" demo
rc_is "demo" 0
out_has "demo tells the stale completion" 'EMQSTALE complete token mismatch'
out_has "demo dead-letters one job" 'dead-lettered'
out_has "demo promotes the report" 'promoted, claimed and completed'
out_has "demo reaps the crashed lease" 'reaper: .*lapsed'
out_has "demo prints throughput" 'jobs/s'
out_has "demo prints cycles per second" 'cycles/s'
out_has "demo prints the totals table" '^QUEUE +PENDING +ACTIVE +SCHEDULED +DEAD +COMPLETED +FAILED$'
out_has "demo suggests export" 'export > emqlite\.resp'
out_has "demo suggests redis-cli --pipe" 'redis-cli --pipe'
run "$EMQLITE" --db "$ddb" stats
out_has "after the demo: billing" '^billing +0 +0 +0 +1 +400 +1 +0 +0$'
out_has "after the demo: mail" '^mail +25 +0 +0 +0 +2000 +0 +0 +0$'
out_has "after the demo: thumbnails" '^thumbnails +0 +0 +0 +0 +1200 +0 +0 +0$'
run "$EMQLITE" --db "$ddb" --json demo
rc_is "demo again" 0
json "demo --json"
out_has "demo --json run figures" '"run":\{"queues":\[\{"queue":"mail","enqueued":2025,"duplicate":0,"completed":2025,'
out_has "demo --json totals" '"totals":\{"queues":\[\{"queue":"billing","pending":0,"active":0,"scheduled":0,"dead":2,"completed":800,"failed":2,'
dead=$(sed 's/.*"dead_letter":"\([^"]*\)".*/\1/' "$tmp/out")
run "$EMQLITE" --db "$ddb" pause billing
run "$EMQLITE" --db "$ddb" demo
rc_is "demo refuses a paused story queue" 1
err_has "demo says which queue is paused" "'billing' is paused"
run "$EMQLITE" --db "$ddb" resume billing
run "$EMQLITE" --db "$ddb" job billing "$dead"
out_has "the dead letter's last error" '^last_error +card_declined'

# ------------------------------------------------------ the message table
# Every refusal the tool prints, exactly: a command line (after
# "emqlite --db FILE"; @TMP@ is the scratch directory), its exit status,
# then its whole stderr up to a blank line. FILE holds one claimed job,
# JOB0SWkOLCBtp2 (token 1); @TMP@/junk.db is not SQLite.
mdb=$tmp/messages.db
run "$EMQLITE" --db "$mdb" enqueue mail x --id JOB0SWkOLCBtp2
run "$EMQLITE" --db "$mdb" claim mail
echo junk >"$tmp/junk.db"
cat >"$tmp/messages" <<'TABLE'
$ job mail notanid
exit 1
emqlite: job: ID 'notanid' is not a branded id: 14 characters: a namespace of 3 capitals, then 11 of 0-9 A-Z a-z, e.g. JOB0SWkOLCBtp2
usage: emqlite job [QUEUE] ID (see 'emqlite job --help')

$ stats no/such
exit 1
emqlite: stats: QUEUE 'no/such' is not a queue name: 1 to 128 characters of A-Z a-z 0-9 . _ - (and not 'emq')
usage: emqlite stats [QUEUE...] (see 'emqlite stats --help')

$ stats mail 'bad queue'
exit 1
emqlite: stats: QUEUE 'bad queue' is not a queue name: 1 to 128 characters of A-Z a-z 0-9 . _ - (and not 'emq')
usage: emqlite stats [QUEUE...] (see 'emqlite stats --help')

$ counts emq
exit 1
emqlite: counts: QUEUE 'emq' is not a queue name: 1 to 128 characters of A-Z a-z 0-9 . _ - (and not 'emq')
usage: emqlite counts QUEUE (see 'emqlite counts --help')

$ claim mail --lease -5
exit 1
emqlite: claim: --lease must be a duration of more than 0 (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '-5'
usage: emqlite claim QUEUE [--lease DURATION] (see 'emqlite claim --help')

$ claim mail --lease 0
exit 1
emqlite: claim: --lease must be a duration of more than 0 (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '0'
usage: emqlite claim QUEUE [--lease DURATION] (see 'emqlite claim --help')

$ claim mail --lease 5x
exit 1
emqlite: claim: --lease must be a duration of more than 0 (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '5x'
usage: emqlite claim QUEUE [--lease DURATION] (see 'emqlite claim --help')

$ --db /nonexistent/x.db enqueue mail x
exit 9
emqlite: cantopen: cannot open /nonexistent/x.db: the directory /nonexistent: No such file or directory

$ --db /nonexistent/x.db stats
exit 9
emqlite: cantopen: cannot open /nonexistent/x.db: no such file (a read-only open never creates one)

$ --db @TMP@ stats
exit 9
emqlite: cantopen: cannot open @TMP@: it is a directory

$ --db @TMP@/junk.db stats
exit 7
emqlite: not_emqlite: @TMP@/junk.db is not an emqlite file (not SQLite)

$ --db '' stats
exit 1
emqlite: stats: --db is empty: give the path of a file (is a variable unset?)
usage: emqlite stats [QUEUE...] (see 'emqlite stats --help')

$ --db :memory: stats
exit 1
emqlite: stats: --db :memory: would be a private in-memory database, gone when this command ends: give the path of a file
usage: emqlite stats [QUEUE...] (see 'emqlite stats --help')

$ frob
exit 1
emqlite: unknown command 'frob' (see 'emqlite --help')

$ stats --frob
exit 1
emqlite: stats: unknown option '--frob'
usage: emqlite stats [QUEUE...] (see 'emqlite stats --help')

$ claim
exit 1
emqlite: claim: missing QUEUE
usage: emqlite claim QUEUE [--lease DURATION] (see 'emqlite claim --help')

$ claim mail --lease
exit 1
emqlite: claim: option '--lease' needs a value
usage: emqlite claim QUEUE [--lease DURATION] (see 'emqlite claim --help')

$ job mail JOB0SWkOLCBtp2 extra
exit 1
emqlite: job: unexpected argument 'extra'
usage: emqlite job [QUEUE] ID (see 'emqlite job --help')

$ job mail
exit 1
emqlite: job: missing ID
usage: emqlite job [QUEUE] ID (see 'emqlite job --help')

$ enqueue mail x --id bad
exit 1
emqlite: enqueue: --id 'bad' is not a branded id: 14 characters: a namespace of 3 capitals, then 11 of 0-9 A-Z a-z, e.g. JOB0SWkOLCBtp2
usage: emqlite enqueue QUEUE [PAYLOAD|-] [--id ID] [--at TIME | --in DURATION] (see 'emqlite enqueue --help')

$ enqueue mail x --id ORD0KHTOWnGLuC
exit 4
emqlite: EMQKIND job id must be JOB-namespaced

$ enqueue mail x --id JOB0SWkOLCBtp2
exit 3
emqlite: duplicate: job JOB0SWkOLCBtp2 exists; nothing changed (the first payload stands)

$ enqueue mail x --in 5x
exit 1
emqlite: enqueue: --in must be a duration (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '5x'
usage: emqlite enqueue QUEUE [PAYLOAD|-] [--id ID] [--at TIME | --in DURATION] (see 'emqlite enqueue --help')

$ enqueue mail x --in -5s
exit 1
emqlite: enqueue: --in must be a duration (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '-5s'
usage: emqlite enqueue QUEUE [PAYLOAD|-] [--id ID] [--at TIME | --in DURATION] (see 'emqlite enqueue --help')

$ enqueue mail x --at tomorrow
exit 1
emqlite: enqueue: --at must be an instant (2026-12-01T10:00:00Z, Unix ms, now or now+5m), not 'tomorrow'
usage: emqlite enqueue QUEUE [PAYLOAD|-] [--id ID] [--at TIME | --in DURATION] (see 'emqlite enqueue --help')

$ enqueue mail x --at 2026-12-01T10:00:00
exit 1
emqlite: enqueue: --at must be an instant (2026-12-01T10:00:00Z, Unix ms, now or now+5m), not '2026-12-01T10:00:00'
usage: emqlite enqueue QUEUE [PAYLOAD|-] [--id ID] [--at TIME | --in DURATION] (see 'emqlite enqueue --help')

$ enqueue mail x --at 2026-13-01T10:00:00Z
exit 1
emqlite: enqueue: --at must be an instant (2026-12-01T10:00:00Z, Unix ms, now or now+5m), not '2026-13-01T10:00:00Z'
usage: emqlite enqueue QUEUE [PAYLOAD|-] [--id ID] [--at TIME | --in DURATION] (see 'emqlite enqueue --help')

$ enqueue mail x --at 1 --in 1
exit 1
emqlite: enqueue: --at and --in exclude each other
usage: emqlite enqueue QUEUE [PAYLOAD|-] [--id ID] [--at TIME | --in DURATION] (see 'emqlite enqueue --help')

$ retry mail JOB0SWkOLCBtp2 1 --delay -1s
exit 1
emqlite: retry: --delay must be a duration (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '-1s'
usage: emqlite retry QUEUE ID TOKEN [--delay DURATION] [--max N] [--error TEXT] (see 'emqlite retry --help')

$ retry mail JOB0SWkOLCBtp2 x
exit 1
emqlite: retry: TOKEN must be a decimal integer, not 'x'
usage: emqlite retry QUEUE ID TOKEN [--delay DURATION] [--max N] [--error TEXT] (see 'emqlite retry --help')

$ retry mail JOB0SWkOLCBtp2 1 --max x
exit 1
emqlite: retry: --max must be a decimal integer, not 'x'
usage: emqlite retry QUEUE ID TOKEN [--delay DURATION] [--max N] [--error TEXT] (see 'emqlite retry --help')

$ retry mail JOB0SWkOLCBtp2 9
exit 5
emqlite: EMQSTALE retry token mismatch

$ complete mail JOB0SWkOLCBtp2 7
exit 5
emqlite: EMQSTALE complete token mismatch

$ complete mail JOB0SWkOLCBtp3 1
exit 6
emqlite: gone: no such job (already completed or never enqueued)

$ extend mail JOB0SWkOLCBtp2 1 --lease 0
exit 1
emqlite: extend: --lease must be a duration of more than 0 (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '0'
usage: emqlite extend QUEUE ID TOKEN [--lease DURATION] (see 'emqlite extend --help')

$ extend mail JOB0SWkOLCBtp3 1
exit 6
emqlite: gone: no such job

$ requeue mail JOB0SWkOLCBtp2
exit 12
emqlite: EMQSTATE not dead

$ remove mail JOB0SWkOLCBtp3
exit 6
emqlite: gone: no such job

$ delay mail JOB0SWkOLCBtp2 1
exit 1
emqlite: delay: give exactly one of --in and --at
usage: emqlite delay QUEUE ID TOKEN --in DURATION | --at TIME (see 'emqlite delay --help')

$ delay mail JOB0SWkOLCBtp2 1 --in soon
exit 1
emqlite: delay: --in must be a duration (250ms, 5s, 10m, 2h, 1d, or milliseconds), not 'soon'
usage: emqlite delay QUEUE ID TOKEN --in DURATION | --at TIME (see 'emqlite delay --help')

$ list mail --state nope
exit 1
emqlite: list: --state must be pending, active, scheduled, dead, completed or awaiting_children, not 'nope'
usage: emqlite list QUEUE --state S [--limit N] [--after ID] [--offset K] [--tail] [--lane G] (see 'emqlite list --help')

$ list mail --state dead --limit x
exit 1
emqlite: list: --limit must be a decimal integer, not 'x'
usage: emqlite list QUEUE --state S [--limit N] [--after ID] [--offset K] [--tail] [--lane G] (see 'emqlite list --help')

$ claim-batch mail 2 --lease 0
exit 1
emqlite: claim-batch: --lease must be a duration of more than 0 (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '0'
usage: emqlite claim-batch QUEUE N [--lease DURATION] (see 'emqlite claim-batch --help')

$ events --timeout 1x
exit 1
emqlite: events: --timeout must be a duration (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '1x'
usage: emqlite events [QUEUE] [--history] [--after SEQ] [--count N] [--timeout DURATION] (see 'emqlite events --help')

$ lane enqueue mail PRT x
exit 1
emqlite: lane enqueue: GROUP 'PRT' is not a lane id (a branded id): 14 characters: a namespace of 3 capitals, then 11 of 0-9 A-Z a-z, e.g. JOB0SWkOLCBtp2 (a tenant name never begins with 3 capitals)
usage: emqlite lane enqueue QUEUE TENANT PAYLOAD [--id ID] (see 'emqlite lane enqueue --help')

$ lane depth mail
exit 1
emqlite: lane depth: missing GROUP
usage: emqlite lane depth QUEUE GROUP... (see 'emqlite lane depth --help')

$ lane claim mail --lease 0
exit 1
emqlite: lane claim: --lease must be a duration of more than 0 (250ms, 5s, 10m, 2h, 1d, or milliseconds), not '0'
usage: emqlite lane claim QUEUE [--lease DURATION] [--weighted | --batch] (see 'emqlite lane claim --help')

$ lane bogus
exit 1
emqlite: lane: unknown subcommand 'bogus'
usage: emqlite lane enqueue|enqueue-many|claim|pause|resume|limit|weight|reassign|drain|depth|reap ... (see 'emqlite lane --help')

$ list mail --lane bad
exit 1
emqlite: list: --lane 'bad' is not a lane id (a branded id): 14 characters: a namespace of 3 capitals, then 11 of 0-9 A-Z a-z, e.g. JOB0SWkOLCBtp2
usage: emqlite list QUEUE --state S [--limit N] [--after ID] [--offset K] [--tail] [--lane G] (see 'emqlite list --help')

$ flow show mail NOPE
exit 1
emqlite: flow show: PARENT 'NOPE' is not a branded id: 14 characters: a namespace of 3 capitals, then 11 of 0-9 A-Z a-z, e.g. JOB0SWkOLCBtp2
usage: emqlite flow show QUEUE PARENT (see 'emqlite flow show --help')

$ flow show mail
exit 1
emqlite: flow show: missing PARENT
usage: emqlite flow show QUEUE PARENT (see 'emqlite flow show --help')

$ top --interval 10
exit 1
emqlite: top: --interval must be a duration of at least 100ms (500ms, 2s, 1m; a bare number is milliseconds), not '10'
usage: emqlite top [QUEUE...] [--interval DURATION] [--count N] [--sort KEY] [--once] (see 'emqlite top --help')

$ top --interval 1x
exit 1
emqlite: top: --interval must be a duration of at least 100ms (500ms, 2s, 1m; a bare number is milliseconds), not '1x'
usage: emqlite top [QUEUE...] [--interval DURATION] [--count N] [--sort KEY] [--once] (see 'emqlite top --help')

$ top --count 0
exit 1
emqlite: top: --count must be at least 1, not '0'
usage: emqlite top [QUEUE...] [--interval DURATION] [--count N] [--sort KEY] [--once] (see 'emqlite top --help')

$ top --sort z
exit 1
emqlite: top: --sort must be one of the sort keys n p a s d l c f t o e, not 'z'
usage: emqlite top [QUEUE...] [--interval DURATION] [--count N] [--sort KEY] [--once] (see 'emqlite top --help')

$ top no/such
exit 1
emqlite: top: QUEUE 'no/such' is not a queue name: 1 to 128 characters of A-Z a-z 0-9 . _ - (and not 'emq')
usage: emqlite top [QUEUE...] [--interval DURATION] [--count N] [--sort KEY] [--once] (see 'emqlite top --help')

$ enqueue-many mail @TMP@/none.txt
exit 9
emqlite: cantopen: @TMP@/none.txt: No such file or directory

$ import @TMP@/none.resp
exit 9
emqlite: cantopen: @TMP@/none.resp: No such file or directory

$ export --out @TMP@/no/dir/x.resp
exit 9
emqlite: cantopen: @TMP@/no/dir/x.resp: No such file or directory

$ call nope
exit 1
emqlite: call: unknown verb 'nope' (emqlite verbs lists them)
usage: emqlite call VERB [ARG...] (see 'emqlite call --help')

$ slot
exit 1
emqlite: slot: missing KEY
usage: emqlite slot KEY (see 'emqlite slot --help')
TABLE
mcheck() {
    l=$(printf '%s' "$mline" | sed "s|@TMP@|$tmp|g")
    eval "set -- $l"
    "$EMQLITE" --db "$mdb" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    sed "s|$tmp|@TMP@|g" "$tmp/err" >"$tmp/err.got"
    printf '%s' "$mwant" >"$tmp/err.want"
    if [ "$rc" -eq "$mexit" ] && cmp -s "$tmp/err.got" "$tmp/err.want"; then
        pass
    else
        failed=$((failed + 1))
        echo "FAIL: message of 'emqlite $mline' (exit $rc, want $mexit):"
        diff "$tmp/err.want" "$tmp/err.got" | sed 's/^/  /'
    fi
}
mline=
nmsg=0
while IFS= read -r line; do
    case $line in
    '$ '*) mline=${line#\$ }; mexit=; mwant= ;;
    'exit '*) mexit=${line#exit } ;;
    '') [ -n "$mline" ] && { mcheck; nmsg=$((nmsg + 1)); }; mline= ;;
    *) mwant="$mwant$line
" ;;
    esac
done <"$tmp/messages"
[ -n "$mline" ] && { mcheck; nmsg=$((nmsg + 1)); }
check "the message table has its rows" "$nmsg" -ge 61
# Human times in, ISO-8601 beside ms out; "now" is the pinned clock,
# 1796140800000 = 2026-12-01T16:00:00Z.
tdb=$tmp/times.db
run env EMQLITE_NOW_MS=1796140800000 "$EMQLITE" --db "$tdb" enqueue t a --at now+5m --id JOB0SWkOLCBtp5
rc_is "--at now+5m" 0
run env EMQLITE_NOW_MS=1796140800000 "$EMQLITE" --db "$tdb" enqueue t b --in 1h30m --id JOB0SWkOLCBtp6
run "$EMQLITE" --db "$tdb" enqueue t c --at 2026-12-01T10:00:00.250+01:00 --id JOB0SWkOLCBtp7
run "$EMQLITE" --db "$tdb" list t --state scheduled
out_has "scheduled by an offset instant" "^JOB0SWkOLCBtp7  .*  scheduled  attempts 0  run_at 2026-12-01T09:00:00.250Z "
out_has "scheduled by --at now+5m" "^JOB0SWkOLCBtp5  1796140800000  2026-12-01T16:00:00.000Z  scheduled  attempts 0  run_at 2026-12-01T16:05:00.000Z "
out_has "scheduled by --in 1h30m" "^JOB0SWkOLCBtp6  1796140800000  2026-12-01T16:00:00.000Z  scheduled  attempts 0  run_at 2026-12-01T17:30:00.000Z "
run "$EMQLITE" --db "$tdb" enqueue t d --id JOB0SWkOLCBtp8
run env EMQLITE_NOW_MS=1796140800000 "$EMQLITE" --db "$tdb" claim-batch t 1 --lease 2m
rc_is "claim-batch --lease 2m" 0
run env EMQLITE_NOW_MS=1796140800000 "$EMQLITE" --db "$tdb" --json list t --state active
out_has "a 2m lease, ms and UTC under --json" '"deadline":\{"ms":1796140920000,"utc":"2026-12-01T16:02:00.000Z"\}'

# Values read from stdin are named too.
echo '{"parent":{"id":"bad","payload":"x"},"children":[]}' >"$tmp/tree"
run "$EMQLITE" --db "$mdb" flow add mail <"$tmp/tree"
rc_is "a tree with a bad id exits 1" 1
err_is "the tree's bad id is named" "emqlite: malformed: the flow on stdin: an \"id\" 'bad' is not a branded id: 14 characters: a namespace of 3 capitals, then 11 of 0-9 A-Z a-z, e.g. JOB0SWkOLCBtp2 (at byte 21)"
echo '{"parent":{"payload":"x"},"children":[{"queue":"a/b","payload":"y"}]}' >"$tmp/tree"
run "$EMQLITE" --db "$mdb" flow add mail <"$tmp/tree"
err_is "the tree's bad queue is named" "emqlite: malformed: the flow on stdin: a \"queue\" 'a/b' is not a queue name: 1 to 128 characters of A-Z a-z 0-9 . _ - (and not 'emq') (at byte 52)"
# `call` answers the wire's refusal text verbatim (PROTOCOL.md A.3).
run "$EMQLITE" --db "$mdb" call get_job mail bad
err_is "call keeps the gate's wire text" "emqlite: invalid_id: job_key requires a valid branded id"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
