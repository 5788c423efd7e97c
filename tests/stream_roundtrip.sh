#!/bin/sh
# stream_roundtrip.sh — a file with streams (groups, consumers, pending
# entries) exported, replayed into a private redis-server with
# `redis-cli --pipe`, rewritten by the server's own AOF rewrite, and that
# AOF imported into a new file: the same digest and the same export bytes
# (tests/stream_roundtrip.c). Then the tool's transfers: push the file,
# verify it against the server, pull it into a third file and compare
# (SKIP of that half without hiredis). SKIP (77) without a server.
srcdir=${srcdir:-.}
harness=$srcdir/tests/redis_harness.sh
server=$(command -v valkey-server 2>/dev/null || command -v redis-server 2>/dev/null)
cli=$(command -v valkey-cli 2>/dev/null || command -v redis-cli 2>/dev/null)
if [ -z "$server" ] || [ -z "$cli" ]; then
    echo "SKIP: redis-server and redis-cli are not installed"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/emq-xrt.XXXXXX") || exit 99
trap '"$harness" stop "$work/srv"; rm -rf "$work"' EXIT INT TERM HUP
port=$("$harness" start "$work/srv" --appendonly yes \
       --aof-use-rdb-preamble no) || exit 99
c="$cli -p $port"
set -e
tests/stream_roundtrip make "$work/a.db" "$work/a.resp"
out=$($c --pipe <"$work/a.resp" 2>&1)
printf 'pipe: %s\n' "$(printf '%s\n' "$out" | tail -n 1)"
printf '%s\n' "$out" | grep -q 'errors: 0, replies:' || {
    echo "redis-cli --pipe reported errors"; printf '%s\n' "$out"; exit 1; }
$c bgrewriteaof >/dev/null
n=0
while $c info persistence | grep -q 'aof_rewrite_in_progress:1' ||
      $c info persistence | grep -q 'aof_rewrite_scheduled:1'; do
    n=$((n + 1))
    [ $n -lt 100 ] || { echo "the AOF rewrite did not finish"; exit 1; }
    sleep 0.1
done
aof=$(ls "$work"/srv/appendonlydir/*.base.aof 2>/dev/null | tail -n 1)
[ -n "$aof" ] || aof="$work/srv/appendonly.aof"   # servers before 7.0
echo "server AOF: $(basename "$aof"), $(wc -c <"$aof") bytes"
tests/stream_roundtrip back "$work/a.db" "$aof" "$work/b.db"
if [ ! -x tests/stream_diff ]; then   # built only with hiredis
    echo "push/pull/verify: SKIP (built without hiredis)"
    exit 0
fi
$c flushall >/dev/null
./emqlite --db "$work/a.db" push --to "127.0.0.1:$port"
./emqlite --db "$work/a.db" verify --against "127.0.0.1:$port"
./emqlite --db "$work/c.db" pull --from "127.0.0.1:$port"
tests/stream_roundtrip same "$work/a.db" "$work/c.db"
# A change on the server is seen by verify (exit 11).
$c xadd 'emq:{rt}:stream:raw' 99-0 late entry >/dev/null
if ./emqlite --db "$work/a.db" verify --against "127.0.0.1:$port" \
       >/dev/null 2>&1; then
    echo "verify missed a changed stream"
    exit 1
fi
echo "verify: a changed stream differs"
