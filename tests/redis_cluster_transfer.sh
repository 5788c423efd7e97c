#!/bin/sh
# redis_cluster_transfer.sh — push, pull and verify against a private
# 3-primary Redis/Valkey Cluster on loopback (tests/redis_cluster.sh, started
# once for the whole script):
#   (a) a fixture whose queues spread over the three primaries: push (each
#       queue's keys on its slot's node, {emq}:version on slot 9051's, the
#       figures per node), verify, pull back into a new file byte-identical,
#       --json, the refusal without --replace, --replace --by-slot, another
#       node as the seed, --cluster; push --resume after one primary
#       lost its keys and a row changed on another;
#   (b) the Lua bundle continues the pushed queues on the nodes owning them
#       (claim.lua, complete.lua through EVALSHA) while emqlite does the same
#       on a copy of the file: verify equal; the continued cluster pulled
#       into a new file passes check;
#   (c) a push during a live resharding of one queue's slot, plain and by
#       slot: ASK and MOVED followed (TRYAGAIN waited out), the counts,
#       verify, a pull back byte-identical.
# Prints "N passed, N failed" last. SKIP (77) without hiredis or without
# redis-server/redis-cli.
srcdir=${srcdir:-.}
if [ ! -x tests/redis_cluster_transfer ]; then
    echo "SKIP: tests/redis_cluster_transfer was not built (configure found no hiredis)"
    exit 77
fi
if [ -z "${EMQ_CLUSTER_SEED:-}" ]; then
    exec "$srcdir/tests/redis_cluster.sh" run "$0" "$@"
fi
LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_PROGRESS

E=${EMQLITE:-./emqlite}
T=tests/redis_cluster_transfer
lua=$srcdir/tests/lua
w=$EMQ_CLUSTER_DIR/work
mkdir -p "$w"
seed=$EMQ_CLUSTER_SEED
ports=$EMQ_CLUSTER_PORTS
cli=$EMQ_REDIS_CLI
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2"; }

rc_is() { # rc_is NAME WANT CMD...: CMD exits WANT (output kept in out/err)
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

count_is() { # count_is NAME FILE REGEX N: N lines match
    n=$(grep -Ec -- "$3" "$2")
    if [ "$n" -eq "$4" ]; then pass "$1"; else fail "$1 ($n lines /$3/, want $4)" "$2"; fi
}

# A helper mode of tests/redis_cluster_transfer: pass when it exits 0.
helper() { # helper NAME ARGS...
    name=$1
    shift
    $T "$@" >"$w/helper" 2>&1
    rc=$?
    sed 's/^/    /' "$w/helper"
    if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$w/helper"; then
        pass "$name ($(grep -c '^ok:' "$w/helper") checks)"
    else
        fail "$name (exit $rc)"
    fi
}

# Keep every hash in listpack encoding (HGETALL in insertion order), so that
# a pulled file stores fields in the original order and exports the same
# bytes.
for p in $ports; do
    $cli -p "$p" config set hash-max-listpack-value 1024 >/dev/null
done

# --------------------------------------------------------- (a) transfers

T0=$($T fixture "$w/f.db") || { echo "FAIL: fixture"; echo "0 passed, 1 failed"; exit 1; }
$E --db "$w/f.db" export --out "$w/f.resp" 2>"$w/err.export"
digest=$(sed -n 's/.*digest \([0-9a-f]*\)$/\1/p' "$w/err.export")
rc_is "push to the cluster through $seed" 0 $E --db "$w/f.db" push --to "$seed"
count_is "push prints a line for each of the 3 primaries" "$w/out" '^node 127\.0\.0\.1:[0-9]+: [1-9][0-9]* keys, [0-9]+ commands' 3
has "push checks the queue on the first primary" "$w/out" '^mail: pending 2 active 1 scheduled 2 dead 1 rows 6: match$'
has "push checks the paused queue on the third" "$w/out" '^other: pending 2 active 1 scheduled 2 dead 1 rows 6: match$'
for p in $ports; do
    n=$($cli -p "$p" dbsize)
    if [ "$n" -gt 0 ]; then pass "127.0.0.1:$p holds $n keys"; else fail "127.0.0.1:$p holds no key"; fi
done
# each queue on the node owning its slot; the fence on slot 9051's
for q in mail b c q1 other d '{emq}:version'; do
    case $q in '{'*) key=$q ;; *) key="emq:{$q}:pending" ;; esac
    slot=$($E slot "$key")
    holders=
    for p in $ports; do
        [ "$($cli -p "$p" cluster countkeysinslot "$slot")" -gt 0 ] && holders="$holders $p"
    done
    owner=
    for p in $ports; do # the owner answers; the others say MOVED
        $cli -p "$p" exists "$key" | grep -Eq '^[0-9]+$' && owner=$p
    done
    if [ "$holders" = " $owner" ]; then pass "$key (slot $slot) lives on its owner 127.0.0.1:$owner only"
    else fail "$key (slot $slot): held by [$holders], owner $owner"; fi
done
if [ "$($cli -c -p "${seed##*:}" get '{emq}:version')" = echomq:4.0.0 ]; then
    pass "push claimed the fence"; else fail "the fence is not echomq:4.0.0"; fi
rc_is "verify the cluster" 0 $E --db "$w/f.db" verify --against "$seed"
has "verify says equal with the export's digest" "$w/out" "^equal: [0-9]+ keys, digest $digest$"
count_is "verify read every primary" "$w/out" '^node 127\.0\.0\.1:[0-9]+: [1-9][0-9]* keys' 3
rc_is "verify --json" 0 $E --db "$w/f.db" --json verify --against "$seed"
has "verify --json names the nodes" "$w/out" '^\{"against":"127\.0\.0\.1:[0-9]+","equal":true,.*"cluster":\{"nodes":\[\{"node":"127\.0\.0\.1:[0-9]+","keys":[1-9][0-9]*,.*\},\{.*\},\{.*\}\]\}\}$'
rc_is "pull the cluster into a new file" 0 $E --db "$w/p.db" pull --from "$seed"
has "pull reports the cluster's digest" "$w/out" "digest $digest$"
$E --db "$w/p.db" export --out "$w/p.resp" 2>/dev/null
if cmp -s "$w/f.resp" "$w/p.resp"; then pass "round trip through the cluster: the exports are byte-identical"
else fail "round trip through the cluster: the exports differ"; cmp "$w/f.resp" "$w/p.resp"; fi
rc_is "push again refuses to overwrite" 3 $E --db "$w/f.db" push --to "$seed"
has "the refusal says why" "$w/err" 'target_not_empty: .*--replace'
rc_is "push --replace --by-slot (each queue a MULTI/EXEC on its node)" 0 $E --db "$w/f.db" push --to "$seed" --replace --by-slot
rc_is "verify after --by-slot" 0 $E --db "$w/f.db" verify --against "$seed"
other=127.0.0.1:$(echo "$ports" | cut -d' ' -f3)
rc_is "push --cluster --replace --json through another node ($other)" 0 $E --db "$w/f.db" --json push --to "$other" --cluster --replace
has "push --json: per node figures" "$w/out" '"match":true,"queues":\[.*\],"cluster":\{"nodes":\[\{"node":"127\.0\.0\.1:[0-9]+","keys":[1-9][0-9]*,"commands":[0-9]+,"bytes_out":[0-9]+,"bytes_in":[0-9]+,"seconds":[0-9.]+,"moved":0,"ask":0,"tryagain":0\}'
rc_is "pull --queue mail --cluster --json" 0 $E --db "$w/m.db" --json pull --from "$other" --queue mail --cluster
has "pull --json: the cluster member" "$w/out" '"queues":\["mail"\].*"cluster":\{"nodes":\['

# push --resume on the cluster (issue 28 item 5): one primary lost every
# key (a push cut before reaching it), a row on another was changed; only
# those keys are sent, each to its slot's node, the rest skipped.
keys=$(sed -n 's/^exported \([0-9]*\) keys.*/\1/p' "$w/err.export")
p1=$(echo "$ports" | cut -d' ' -f1)
p3=$(echo "$ports" | cut -d' ' -f3)
n3=$($cli -p "$p3" dbsize)
$cli -p "$p3" flushall >/dev/null
row=$($cli -p "$p1" --scan --pattern 'emq:*:job:*' | grep -E ':job:[^:]{14}$' | sort | head -n 1)
$cli -p "$p1" hset "$row" state weird >/dev/null
rc_is "push --resume to the cluster" 0 $E --db "$w/f.db" push --to "$seed" --resume
has "... sends the lost keys and the changed row, skips the rest" "$w/out" "^resumed: $((n3 + 1)) keys sent, $((keys - n3 - 1)) already equal \(skipped\), 1 deleted first"
count_is "... each primary's line" "$w/out" '^node 127\.0\.0\.1:[0-9]+: ' 3
rc_is "verify after push --resume" 0 $E --db "$w/f.db" verify --against "$seed"
has "... equal, with the export's digest" "$w/out" "^equal: $keys keys, digest $digest$"

# The deployed runtime's identity (issue 28) on the cluster: a stamp of
# echomq:3.0.0 (on slot 9051's node) is kept and spoken.
for p in $ports; do $cli -p "$p" flushall >/dev/null; done
$cli -c -p "${seed##*:}" set '{emq}:version' echomq:3.0.0 >/dev/null
rc_is "push into a cluster stamped echomq:3.0.0" 0 $E --db "$w/f.db" push --to "$seed"
has "push speaks the cluster's identity" "$w/out" '^wire: echomq:3\.0\.0$'
rc_is "verify the echomq:3.0.0 cluster" 0 $E --db "$w/f.db" verify --against "$seed"
rc_is "pull it back into a new file" 0 $E --db "$w/r3.db" pull --from "$seed"
rc_is "the pulled file's identity" 0 $E --db "$w/r3.db" wire
has "the pulled file keeps echomq:3.0.0" "$w/out" ': echomq:3\.0\.0$'
rc_is "push the pulled file again" 0 $E --db "$w/r3.db" push --to "$seed" --replace
rc_is "verify after the second push" 0 $E --db "$w/r3.db" verify --against "$seed"
if [ "$($cli -c -p "${seed##*:}" get '{emq}:version')" = echomq:3.0.0 ]; then
    pass "the cluster keeps its stamp"; else fail "the cluster's stamp changed"; fi
for p in $ports; do $cli -p "$p" flushall >/dev/null; done
rc_is "push the fixture back for (b)" 0 $E --db "$w/f.db" push --to "$seed"

# ---------------------------------------------------- (b) the Lua bundle

cp "$w/f.db" "$w/c.db"
helper "the bundle continues each queue on its node, as emqlite does on the file" lua "$seed" "$lua" "$w/c.db" "$T0"
rc_is "the continued file verifies equal to the cluster" 0 $E --db "$w/c.db" verify --against "$seed"
rc_is "pull the continued cluster into a new file" 0 $E --db "$w/s.db" pull --from "$seed"
rc_is "the pulled file passes check" 0 $E --db "$w/s.db" check

# ------------------------------------------------------ (c) resharding

helper "push during a live resharding of q0's slot" reshard "$seed" "$w/f.db" q0 plain
helper "push --by-slot during a live resharding of q2's slot" reshard "$seed" "$w/f.db" q2 by-slot

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
