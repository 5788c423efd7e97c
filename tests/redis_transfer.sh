#!/bin/sh
# redis_transfer.sh — the transfer commands against a private redis-server
# (tests/redis_harness.sh):
#   (a) round trip: fixture file -> emqlite export -> redis-cli --pipe ->
#       emqlite pull into a new file -> a byte-identical export; verify
#       finds the keyspaces equal, then names a key changed on the server;
#       push (refusal without --replace, --replace, --by-slot, --queue),
#       the version fence on push and pull;
#   (b) AOF: the export as the appendonly.aof of a fresh server, both the
#       legacy single file (migrated by Redis 7 into its appenddirname) and
#       a base file named by a hand-written manifest; verify: equal;
#   (c) differential conformance: a scripted and 5 randomized sequences of
#       300 Tier 1 verbs on emqlite and through the Lua bundle, same NOW;
#   (a3) push --resume after a push cut half way (maxmemory), and after
#       changes on the server: keys sent/skipped, verify equal;
#   (d) continuation: after a push the bundle continues the replayed
#       queues; after a pull emqlite continues jobs the server created.
# Prints "N passed, N failed" last. SKIP (77) without hiredis or without
# redis-server/redis-cli. Redis 7.0 has no HPEXPIREAT, so field expiries
# are covered by the unit tests only (the fixture carries none).
srcdir=${srcdir:-.}
if [ ! -x tests/redis_transfer ]; then
    echo "SKIP: tests/redis_transfer was not built (configure found no hiredis)"
    exit 77
fi
if [ -z "${EMQ_REDIS_PORT:-}" ]; then
    exec "$srcdir/tests/redis_harness.sh" run "$0" "$@"
fi
LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_PROGRESS

vg=
seeds=5 steps=300
if [ -n "${EMQ_VALGRIND:-}" ]; then
    vg="valgrind -q --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite,indirect,possible \
        --errors-for-leak-kinds=definite,indirect,possible"
fi
[ -n "${EMQ_TEST_QUICK:-}" ] && seeds=2 steps=100
E="$vg ${EMQLITE:-./emqlite}"
T="$vg tests/redis_transfer"
lua=$srcdir/tests/lua
w=$EMQ_REDIS_DIR
port=$EMQ_REDIS_PORT
to=127.0.0.1:$port
cli="$EMQ_REDIS_CLI -p $port"
harness=$srcdir/tests/redis_harness.sh
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2"; }

# check NAME CMD...: pass when CMD succeeds.
check() {
    name=$1
    shift
    if "$@" >"$w/out" 2>"$w/err"; then pass "$name"; else fail "$name" "$w/err"; fi
}

# rc_is NAME WANT CMD...: pass when CMD exits WANT (output kept in out/err).
rc_is() {
    name=$1 want=$2
    shift 2
    "$@" >"$w/out" 2>"$w/err"
    rc=$?
    if [ "$rc" -eq "$want" ]; then pass "$name (exit $rc)"; else
        fail "$name: exit $rc, want $want"; cat "$w/out" "$w/err" | sed 's/^/    /'; fi
}

has() { # has NAME FILE REGEX
    if grep -Eq -- "$3" "$2"; then pass "$1"; else fail "$1 (no /$3/)" "$2"; fi
}

cleanup() { # the AOF servers of (b), if still running
    for d in "$w/aof1" "$w/aof2" "$w/aof3" "$w/aof4"; do "$harness" stop "$d"; done
}
trap cleanup EXIT

# ----------------------------------------------------------- (a) round trip

$cli flushall >/dev/null
# Keep every hash in listpack encoding, whose HGETALL order is insertion
# order: the pulled file then stores fields in the original order and its
# export is byte-identical (the fixture has a 300-byte payload).
$cli config set hash-max-listpack-value 1024 >/dev/null
T0=$($T fixture "$w/f.db") || { echo "FAIL: fixture"; echo "0 passed, 1 failed"; exit 1; }
rc_is "export the fixture" 0 $E --db "$w/f.db" export --out "$w/f.resp"
has "export summary on stderr" "$w/err" '^exported [0-9]+ keys, [0-9]+ commands, [0-9]+ bytes, digest [0-9a-f]{16}$'
digest=$(sed -n 's/.*digest \([0-9a-f]*\)$/\1/p' "$w/err")
$cli --pipe <"$w/f.resp" >"$w/pipe" 2>&1
has "redis-cli --pipe loads the export with no error" "$w/pipe" 'errors: 0, replies:'
rc_is "pull into a new file" 0 $E --db "$w/p.db" pull --from "$to"
has "pull reports the server's digest" "$w/out" "digest $digest"
rc_is "export the pulled file" 0 $E --db "$w/p.db" export --out "$w/p.resp"
if cmp -s "$w/f.resp" "$w/p.resp"; then pass "round trip: the exports are byte-identical"
else fail "round trip: the exports differ"; cmp "$w/f.resp" "$w/p.resp"; fi
rc_is "verify the loaded server" 0 $E --db "$w/f.db" verify --against "$to"
has "verify says equal" "$w/out" "^equal: [0-9]+ keys, digest $digest$"
rc_is "verify --json" 0 $E --db "$w/f.db" --json verify --against "$to"
has "verify --json shape" "$w/out" '^\{"against":"127\.0\.0\.1:[0-9]+","equal":true,"file":\{"keys":[0-9]+,"digest":"[0-9a-f]{16}"\},"server":\{"keys":[0-9]+,"digest":"[0-9a-f]{16}"\},"wire":"echomq:4\.0\.0","unheld":\[\],"other_queues":\[\]\}$'
rc_is "pull into a file that holds the queues" 3 $E --db "$w/p.db" pull --from "$to"
has "the refusal names the queue" "$w/err" "already holds keys of queue 'mail'"
row=$($cli --scan --pattern 'emq:{mail}:job:*' | grep -E ':job:[^:]{14}$' | sort | tail -n 1)
$cli hset "$row" state weird >/dev/null
rc_is "verify after a change on the server" 11 $E --db "$w/f.db" verify --against "$to"
has "verify names the first differing key" "$w/out" "^differ: first differing key $(printf '%s' "$row" | sed 's/[{}]/\\&/g'): the contents differ$"
$cli del "emq:{other}:pending" >/dev/null
rc_is "verify --queue other" 11 $E --db "$w/f.db" verify --against "$to" --queue other
has "a key only in the file" "$w/out" '^differ: first differing key emq:\{other\}:pending: only in the file$'

# push
$cli flushall >/dev/null
rc_is "push to an empty server" 0 $E --db "$w/f.db" push --to "$to"
has "push checks the mail queue" "$w/out" '^mail: pending 4 active 2 scheduled 2 dead 1 rows 9: match$'
has "push checks the other queue" "$w/out" '^other: pending 1 active 0 scheduled 0 dead 0 rows 1: match$'
check "push claimed the fence" sh -c "$cli get '{emq}:version' | grep -qx echomq:4.0.0"
rc_is "verify after push" 0 $E --db "$w/f.db" verify --against "$to"
rc_is "push again refuses to overwrite" 3 $E --db "$w/f.db" push --to "$to"
has "the refusal says why" "$w/err" 'target_not_empty: .*--replace'
$cli rpush "$row:logs" extra >/dev/null
rc_is "push --replace" 0 $E --db "$w/f.db" push --to "$to" --replace
has "push --replace deleted first" "$w/out" '^replaced: [0-9]+ keys deleted first$'
rc_is "verify after push --replace" 0 $E --db "$w/f.db" verify --against "$to"
rc_is "push --by-slot --replace --queue mail" 0 $E --db "$w/f.db" push --to "$to" --by-slot --replace --queue mail
rc_is "verify --queue mail" 0 $E --db "$w/f.db" verify --against "$to" --queue mail
EMQLITE_PROGRESS=1 $E --db "$w/f.db" push --to "$to" --replace --json >"$w/out" 2>"$w/err"
has "push --json" "$w/out" '^\{"to":"127\.0\.0\.1:[0-9]+","keys":[0-9]+,.*"match":true,"queues":\[\{"queue":"mail",'
has "a progress line when asked" "$w/err" 'push: [0-9]+ commands'
$cli set '{emq}:version' echomq:2.0.0 >/dev/null
rc_is "push to a server of another wire" 7 $E --db "$w/f.db" push --to "$to" --replace
has "the fence names both wires" "$w/err" "'echomq:2\.0\.0'.*echomq:4\.0\.0"
rc_is "pull from a server of another wire" 7 $E --db "$w/q.db" pull --from "$to"
check "the refused pull left no file behind" test ! -e "$w/q.db" -o -e "$w/q.db-wal"
check "... nor its side files" sh -c "! ls '$w'/q.db* 2>/dev/null | grep -q ."

# The deployed runtime's identity (issue 28): a server it claimed is
# pushed into, verified, pulled back and pushed again with no hand step.
$cli flushall >/dev/null
$cli set '{emq}:version' echomq:3.0.0 >/dev/null
rc_is "push into a server stamped echomq:3.0.0" 0 $E --db "$w/f.db" push --to "$to"
has "push speaks the target's identity" "$w/out" '^wire: echomq:3\.0\.0$'
check "the target keeps its stamp" sh -c "$cli get '{emq}:version' | grep -qx echomq:3.0.0"
rc_is "verify the echomq:3.0.0 server" 0 $E --db "$w/f.db" verify --against "$to"
has "verify: equal, compared as echomq:3.0.0" "$w/out" '^wire: echomq:3\.0\.0$'
rc_is "pull it back into a new file" 0 $E --db "$w/r3.db" pull --from "$to"
rc_is "the pulled file's identity" 0 $E --db "$w/r3.db" wire
has "the pulled file keeps echomq:3.0.0" "$w/out" ': echomq:3\.0\.0$'
rc_is "the pulled file exports as echomq:3.0.0" 0 $E --db "$w/r3.db" export --out "$w/r3.resp"
check "... its fence says so" sh -c "head -c 52 '$w/r3.resp' | grep -q 'echomq:3.0.0'"
rc_is "push the pulled file again" 0 $E --db "$w/r3.db" push --to "$to" --replace
rc_is "verify after the second push" 0 $E --db "$w/r3.db" verify --against "$to"
check "the stamp is still echomq:3.0.0" sh -c "$cli get '{emq}:version' | grep -qx echomq:3.0.0"
rc_is "pull into a file of another identity holding keys" 7 $E --db "$w/f.db" pull --from "$to" --queue nosuch
$cli flushall >/dev/null
rc_is "push --wire echomq:3.0.0 into an empty server" 0 $E --db "$w/f.db" push --to "$to" --wire echomq:3.0.0
check "the empty server was stamped echomq:3.0.0" sh -c "$cli get '{emq}:version' | grep -qx echomq:3.0.0"
rc_is "push --wire outside the table" 1 $E --db "$w/f.db" push --to "$to" --wire echomq:2.0.0
$cli flushall >/dev/null
rc_is "push the echomq:3.0.0 file into an empty server" 0 $E --db "$w/r3.db" push --to "$to"
check "it stamps the file's identity" sh -c "$cli get '{emq}:version' | grep -qx echomq:3.0.0"
rc_is "push to a closed port" 9 $E --db "$w/f.db" push --to 127.0.0.1:1
rc_is "push --to without a port number" 1 $E --db "$w/f.db" push --to 127.0.0.1:x

# --------------------------------------------------------------- (b) AOF

# aof_verify DIR NAME SHORT: a fresh server (tests/redis_harness.sh) loading
# DIR's AOF must hold the file's keyspace: verify says equal, same digest.
aof_verify() {
    if aof_port=$("$harness" start "$1" --appendonly yes 2>/dev/null); then
        rc_is "$2: verify" 0 $E --db "$w/f.db" verify --against "127.0.0.1:$aof_port"
        has "$3: same digest" "$w/out" "digest $digest"
        "$harness" stop "$1"
    else
        fail "$3: the server did not start" "$1/server.log"
    fi
}

# Legacy: appendonly.aof in --dir; Redis 7 migrates it into appendonlydir.
mkdir -p "$w/aof1"
cp "$w/f.resp" "$w/aof1/appendonly.aof"
aof_verify "$w/aof1" "AOF (legacy file)" "AOF (legacy file)"
# Manifest: appendonlydir/appendonly.aof.1.base.aof named as the base.
mkdir -p "$w/aof2/appendonlydir"
$E --db "$w/f.db" export --by-slot --out "$w/aof2/appendonlydir/appendonly.aof.1.base.aof" 2>/dev/null
printf 'file appendonly.aof.1.base.aof seq 1 type b\n' >"$w/aof2/appendonlydir/appendonly.aof.manifest"
aof_verify "$w/aof2" "AOF (manifest, by-slot export)" "AOF (manifest)"

# ------------------------- (a2) pending records of trimmed entries (issue 28)

# A consumer's pending entries whose stream entries were trimmed: the pull
# carries them (XACK answers 1 in the file as on the server), push and
# export say how many Valkey cannot hold, verify names them.
$cli flushall >/dev/null
$cli set '{emq}:version' echomq:3.0.0 >/dev/null
sk='emq:{ev}:stream:orders'
for i in 1 2 3 4; do $cli xadd "$sk" "$i-1" f "v$i" >/dev/null; done
$cli xgroup create "$sk" g 0 >/dev/null
$cli xreadgroup group g c1 count 3 streams "$sk" '>' >/dev/null
$cli xtrim "$sk" maxlen 2 >/dev/null
check "the server lists 3 pending records, 2 of trimmed entries" sh -c "$cli xpending '$sk' g | head -n 1 | grep -qx 3"
rc_is "pull the stream" 0 $E --db "$w/pel.db" pull --from "$to"
rc_is "the file's pending records" 0 $E --db "$w/pel.db" group pending ev orders g
has "a trimmed entry's record survived the pull" "$w/out" '^    1-1$'
has "... both of them" "$w/out" '^    2-1$'
rc_is "verify after the pull" 0 $E --db "$w/pel.db" verify --against "$to"
has "verify names them, held on both sides" "$w/out" '^unheld: emq:\{ev\}:stream:orders group g: 2 pending entries of trimmed stream entries \(the known difference: the file holds 2, the server 2'
rc_is "XACK of a trimmed entry in the file" 0 $E --db "$w/pel.db" group ack ev orders g 1-1
has "... answers 1, as the server's does" "$w/out" '^1$'
check "the server's XACK answers 1 too" sh -c "$cli xack '$sk' g 1-1 | grep -qx 1"
$cli flushall >/dev/null
rc_is "push the file" 0 $E --db "$w/pel.db" push --to "$to"
has "push says what the target cannot hold" "$w/out" '^unheld: emq:\{ev\}:stream:orders group g: 1 pending entry of trimmed stream entries \(left out'
rc_is "verify after the push: equal" 0 $E --db "$w/pel.db" verify --against "$to"
has "... but for the known difference" "$w/out" 'the file holds 1, the server 0'
# verify on a shared server: the file's queues are compared, the others
# listed apart (issue 28 item 4)
$cli hset 'emq:{zz}:meta' a 1 >/dev/null
$cli rpush 'emq:{zz}:wake' 1 >/dev/null
rc_is "verify with another queue on the server" 0 $E --db "$w/pel.db" verify --against "$to"
has "... listed apart, not compared" "$w/out" '^other queue on the server \(not compared\): zz, 2 keys$'
rc_is "verify --json lists it" 0 $E --db "$w/pel.db" --json verify --against "$to"
has "... as other_queues" "$w/out" '"other_queues":\[\{"queue":"zz","keys":2\}\]'
rc_is "verify --queue zz" 11 $E --db "$w/pel.db" verify --against "$to" --queue zz
has "... narrows to it" "$w/out" '^differ: first differing key emq:\{zz\}:meta: only on the server$'
rc_is "export --json" 0 $E --db "$w/pel.db" --json export --out "$w/pel.resp"
has "export --json counts them" "$w/out" '"unheld":\[\{"stream":"emq:\{ev\}:stream:orders","group":"g","count":1,'

# --------------------------------------- (a3) push --resume (issue 28)

# A push stopped half way (the server ran out of memory: every write
# refused from then on), then continued with --resume: only the keys the
# server does not hold equal are sent (per-key XXH3 of the digest record),
# and the result is what a whole push leaves (verify: equal).
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "job %05d %0200d\n", i, i }' >"$w/big.txt"
$E --db "$w/big.db" enqueue-many big "$w/big.txt" >/dev/null
EMQLITE_NOW_MS=5000 $E --db "$w/big.db" claim big --lease 60000 >/dev/null
$E --db "$w/big.db" export --out "$w/big.resp" 2>"$w/err"
bigkeys=$(sed -n 's/^exported \([0-9]*\) keys.*/\1/p' "$w/err")
bigdigest=$(sed -n 's/.*digest \([0-9a-f]*\)$/\1/p' "$w/err")
$cli flushall >/dev/null
used=$($cli info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p' | tr -d '\r')
$cli config set maxmemory $((used + 400000)) >/dev/null
$cli config set maxmemory-policy noeviction >/dev/null
rc_is "a push cut half way (maxmemory)" 9 $E --db "$w/big.db" push --to "$to"
has "... by the server's refusal" "$w/err" 'OOM'
$cli config set maxmemory 0 >/dev/null
held=$($cli dbsize)
if [ "$held" -gt 1 ] && [ "$held" -lt "$bigkeys" ]; then pass "the server holds part of the file ($held of $bigkeys keys)"
else fail "the server holds part of the file ($held of $bigkeys keys)"; fi
rc_is "push --resume" 0 $E --db "$w/big.db" push --to "$to" --resume
has "push --resume says what it sent and skipped" "$w/out" '^resumed: [0-9]+ keys sent, [0-9]+ already equal \(skipped\), [0-9]+ deleted first \(differing or not in the file\)$'
set -- $(sed -n 's/^resumed: \([0-9]*\) keys sent, \([0-9]*\) already equal (skipped), \([0-9]*\) deleted.*/\1 \2 \3/p' "$w/out")
echo "resume after the cut: $1 keys sent, $2 skipped, $3 deleted first (of $bigkeys; $held held)"
if [ "${2:-0}" -gt 0 ] && [ "${1:-0}" -gt 0 ] && [ $(($1 + $2)) -eq "$bigkeys" ] && [ "$2" -le "$held" ]; then
    pass "the held keys were skipped, the rest sent ($1 + $2 = $bigkeys)"
else fail "the held keys were skipped, the rest sent (sent ${1:-?}, skipped ${2:-?}, keys $bigkeys, held $held)" "$w/out"; fi
has "the figures match" "$w/out" '^big: pending 2999 active 1 scheduled 0 dead 0 rows 3000: match$'
rc_is "verify after the resumed push" 0 $E --db "$w/big.db" verify --against "$to"
has "... equal, with the whole file's digest" "$w/out" "^equal: $bigkeys keys, digest $bigdigest$"
rc_is "push --resume onto an equal server" 0 $E --db "$w/big.db" push --to "$to" --resume
has "... sends nothing" "$w/out" "^resumed: 0 keys sent, $bigkeys already equal \(skipped\), 0 deleted first"
has "... and no command" "$w/out" '^pushed [0-9]+ keys \(0 commands, 0 bytes\)'
# Changed since: one row edited, one deleted, a stray key of the queue,
# another queue's key (left alone, as a whole push leaves it).
row=$($cli --scan --pattern 'emq:{big}:job:*' | grep -E ':job:[^:]{14}$' | sort | head -n 1)
row2=$($cli --scan --pattern 'emq:{big}:job:*' | grep -E ':job:[^:]{14}$' | sort | tail -n 1)
$cli hset "$row" state weird >/dev/null
$cli del "$row2" >/dev/null
$cli set 'emq:{big}:stray' 1 >/dev/null
$cli hset 'emq:{zz}:meta' a 1 >/dev/null
# a key cut half way: the pending set without its first 100 members
$cli zpopmin 'emq:{big}:pending' 100 >/dev/null
rc_is "push --resume after changes on the server" 0 $E --db "$w/big.db" push --to "$to" --resume --json
has "--json: 3 keys sent, the rest skipped, 3 deleted first" "$w/out" '"sent_keys":3,"skipped":'"$((bigkeys - 3))"',"replaced":3,'
rc_is "verify after it" 0 $E --db "$w/big.db" verify --against "$to"
has "... equal" "$w/out" "^equal: $bigkeys keys, digest $bigdigest$"
check "the other queue's key was left alone" sh -c "$cli hget 'emq:{zz}:meta' a | grep -qx 1"
$cli hset "$row" state weird >/dev/null
rc_is "push --resume --by-slot" 0 $E --db "$w/big.db" push --to "$to" --resume --by-slot
has "... sends the one changed key" "$w/out" '^resumed: 1 keys sent'
rc_is "verify after --resume --by-slot" 0 $E --db "$w/big.db" verify --against "$to"
rc_is "--resume with --replace" 1 $E --db "$w/big.db" push --to "$to" --resume --replace
has "... is refused, naming both" "$w/err" '--resume and --replace exclude each other'
$cli flushall >/dev/null
rc_is "push --resume into an empty server: a whole push" 0 $E --db "$w/big.db" push --to "$to" --resume
has "... every key sent" "$w/out" "^resumed: $bigkeys keys sent, 0 already equal"
rc_is "verify it" 0 $E --db "$w/big.db" verify --against "$to"

# ------------------------------------------ (b2) Valkey's own AOF (issue 28)

# aof_wait CLI: until the server's AOF rewrite is over.
aof_wait() {
    n=0
    while [ $n -lt 100 ]; do
        $1 info persistence | grep -q '^aof_rewrite_in_progress:0' &&
            $1 info persistence | grep -q '^aof_rewrite_scheduled:0' && return 0
        n=$((n + 1))
        sleep 0.1
    done
    return 1
}

mkdir -p "$w/aof3"
if aof_port=$("$harness" start "$w/aof3" --appendonly yes --aof-use-rdb-preamble no 2>/dev/null); then
    acli="$EMQ_REDIS_CLI -p $aof_port"
    ato=127.0.0.1:$aof_port
    # The bundle's scripts (MULTI/EXEC blocks of their effects: ZPOPMIN,
    # ZREM, LREM, LTRIM, HINCRBY, DEL, ...), then the runtime's stamp, a
    # stream whose group delivered, acknowledged and lost a trimmed entry,
    # and the deletes and overwrites of an incremental AOF.
    $T diff "$aof_port" "$lua" 1 200 >"$w/aofdiff" 2>&1 || fail "the bundle on the AOF server" "$w/aofdiff"
    $acli set '{emq}:version' echomq:3.0.0 >/dev/null
    sk='emq:{ev}:stream:orders'
    for i in 1 2 3 4 5; do $acli xadd "$sk" "$i-1" f "v$i" >/dev/null; done
    $acli xgroup create "$sk" g 0 >/dev/null
    $acli xreadgroup group g c1 count 3 streams "$sk" '>' >/dev/null
    $acli xack "$sk" g 1-1 >/dev/null
    $acli xdel "$sk" 5-1 >/dev/null
    $acli hset 'emq:{aof}:meta' a 1 b 2 c 3 >/dev/null
    $acli hdel 'emq:{aof}:meta' b >/dev/null
    $acli hset 'emq:{aof}:meta' a 9 >/dev/null
    $acli rpush 'emq:{aof}:wake' 2 1 1 1 >/dev/null
    $acli lpop 'emq:{aof}:wake' >/dev/null
    $acli rpush 'emq:{aof}:ring' 1 >/dev/null
    $acli unlink 'emq:{aof}:ring' >/dev/null
    $acli set 'emq:{aof}:limiter' 41 >/dev/null
    $acli incrby 'emq:{aof}:limiter' 1 >/dev/null
    $acli pexpire 'emq:{aof}:limiter' 86400000 >/dev/null
    has "the incremental AOF holds the bundle's MULTI/EXEC blocks" "$w/aof3/appendonlydir/appendonly.aof.1.incr.aof" '^MULTI'
    has "... and its deletes" "$w/aof3/appendonlydir/appendonly.aof.1.incr.aof" '^(ZREM|LREM|DEL|HDEL)'
    rc_is "import the incremental AOF (its directory, by the manifest)" 0 $E --db "$w/aofi.db" import "$w/aof3/appendonlydir"
    # Equal to what Valkey itself loads from the same AOF (a second server
    # started on a copy): the live server differs from both in one thing
    # its incremental AOF does not carry, the group's entries-read after
    # XREADGROUP (propagated as XCLAIM ... LASTID).
    mkdir -p "$w/aof4"
    cp -r "$w/aof3/appendonlydir" "$w/aof4/"
    if re_port=$("$harness" start "$w/aof4" --appendonly yes --aof-use-rdb-preamble no 2>/dev/null); then
        rc_is "the imported file equals a server loading the same AOF" 0 $E --db "$w/aofi.db" verify --against "127.0.0.1:$re_port"
        has "... compared as echomq:3.0.0" "$w/out" '^wire: echomq:3\.0\.0$'
        "$harness" stop "$w/aof4"
    else
        fail "the reloading server did not start" "$w/aof4/server.log"
    fi
    rc_is "the imported file and the live server: one stream differs" 11 $E --db "$w/aofi.db" verify --against "$ato"
    has "... only the stream (entries-read)" "$w/out" '^differ: first differing key emq:\{ev\}:stream:orders: the contents differ$'
    rc_is "the imported file's identity" 0 $E --db "$w/aofi.db" wire
    has "the AOF's identity is kept" "$w/out" ': echomq:3\.0\.0$'
    rc_is "the imported file passes check" 0 $E --db "$w/aofi.db" check
    # The rewrite: Valkey's own forms (HMSET, batched RPUSH/ZADD, XADD,
    # XSETID, XGROUP, XCLAIM, PEXPIREAT) in the new base.
    $acli bgrewriteaof >/dev/null
    if aof_wait "$acli"; then
        base=$(ls "$w/aof3/appendonlydir"/*.base.aof | tail -n 1)
        has "the rewritten base holds HMSET" "$base" '^HMSET'
        has "... and XCLAIM" "$base" '^XCLAIM'
        rc_is "import the AOF rewrite (its manifest)" 0 $E --db "$w/aofr.db" import "$w/aof3/appendonlydir/appendonly.aof.manifest"
        rc_is "the rewrite's file equals the server" 0 $E --db "$w/aofr.db" verify --against "$ato"
        rc_is "import the base alone (--aof)" 0 $E --db "$w/aofb.db" import --aof "$base"
        rc_is "... equal too" 0 $E --db "$w/aofb.db" verify --against "$ato"
        rc_is "without --aof the rewrite's HMSET is refused" 1 $E --db "$w/aofn.db" import "$base"
        has "... naming the byte offset, the command and --aof" "$w/err" "import refused at byte [0-9]+: unknown command 'HMSET'.*--aof"
    else
        fail "the AOF rewrite did not finish" "$w/aof3/server.log"
    fi
    # An RDB preamble is refused, saying how to move it.
    $acli config set aof-use-rdb-preamble yes >/dev/null
    $acli bgrewriteaof >/dev/null
    aof_wait "$acli"
    rc_is "an AOF with an RDB preamble is refused" 1 $E --db "$w/aofp.db" import "$w/aof3/appendonlydir"
    has "... at byte 0, telling how to move it" "$w/err" "at byte 0: 'REDIS\.\.\.' is an RDB file.*emqlite pull"
    "$harness" stop "$w/aof3"
else
    fail "the AOF server did not start" "$w/aof3/server.log"
fi

# ------------------------------------------------------ (c) differential

$T diff "$port" "$lua" $seeds $steps >"$w/diff" 2>&1
rc=$?
sed -n '/^reached:/p;/^differential:/p' "$w/diff"
if [ $rc -eq 0 ] && grep -q "^differential: $((seeds * steps)) random steps, 0 failures\$" "$w/diff" \
    && grep -q '^scripted: replies and keyspace identical$' "$w/diff"; then
    pass "differential: scripted + $seeds seeds x $steps steps identical"
else
    fail "differential" "$w/diff"
fi

# ------------------------------------------------------ (d) continuation

$cli flushall >/dev/null
rc_is "push the fixture for the bundle" 0 $E --db "$w/f.db" push --to "$to"
if $T cont-server "$port" "$lua" "$T0" >"$w/cont" 2>&1; then
    pass "after push: the bundle continues the replayed queues ($(grep -c '^ok:' "$w/cont") checks)"
else
    fail "after push: the bundle continues the replayed queues" "$w/cont"
fi
if T1=$($T seed-server "$port" "$lua" 2>"$w/err" | tail -n 1) && [ -n "$T1" ]; then
    rc_is "pull the server-made jobs" 0 $E --db "$w/s.db" pull --from "$to"
    if $T cont-file "$w/s.db" "$T1" >"$w/cont" 2>&1; then
        pass "after pull: emqlite continues the server's jobs ($(grep -c '^ok:' "$w/cont") checks)"
    else
        fail "after pull: emqlite continues the server's jobs" "$w/cont"
    fi
else
    fail "seed the server through the bundle" "$w/err"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
