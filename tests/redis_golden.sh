#!/bin/sh
# redis_golden.sh — replay every case of tests/fixtures/tier1.jsonl through
# the Lua bundle (tests/lua/) on a private redis-server started by
# tests/redis_harness.sh. SKIP (77) without hiredis or without a server.
srcdir=${srcdir:-.}
if [ ! -x tests/golden_redis ]; then
    echo "SKIP: tests/golden_redis was not built (configure found no hiredis)"
    exit 77
fi
out=$("$srcdir/tests/redis_harness.sh" run tests/golden_redis --quiet \
      --lua "$srcdir/tests/lua" "$srcdir/tests/fixtures/tier1.jsonl")
rc=$?
printf '%s\n' "$out"
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || exit 1
# Every case must have run, not merely none failed.
printf '%s\n' "$out" | grep -qx '54 passed, 0 failed' || {
    echo "expected 54 passed, 0 failed"; exit 1; }
exit 0
