#!/bin/sh
# redis_golden.sh — the Lua bundle (tests/lua/) against the golden traces on
# a private redis-server started by tests/redis_harness.sh:
#   1. every case of tests/fixtures/tier1.jsonl replayed step by step;
#   2. every step of tier1..tier4 whose verb the bundle runs, replayed alone
#      from the keyspace the trace recorded before it (--isolated), which
#      covers the group paths (tier3) and the flow LINK arms (tier4).
# With EMQ_TEST_QUICK set, step 2 covers tier3 and tier4 only; with
# EMQ_VALGRIND set (the CI's valgrind run) the program runs under memcheck.
# SKIP (77) without hiredis or without a server.
srcdir=${srcdir:-.}
if [ ! -x tests/golden_redis ]; then
    echo "SKIP: tests/golden_redis was not built (configure found no hiredis)"
    exit 77
fi
if [ -z "${EMQ_REDIS_PORT:-}" ]; then
    exec "$srcdir/tests/redis_harness.sh" run "$0" "$@"
fi
lua="$srcdir/tests/lua"
fx="$srcdir/tests/fixtures"
vg=
if [ -n "${EMQ_VALGRIND:-}" ]; then
    vg="valgrind -q --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite,indirect,possible \
        --errors-for-leak-kinds=definite,indirect,possible"
fi
tiers="1 2 3 4"
[ -n "${EMQ_TEST_QUICK:-}" ] && tiers="3 4"
out=$($vg tests/golden_redis --quiet --lua "$lua" "$fx/tier1.jsonl")
rc=$?
printf 'tier1 replay: %s\n' "$out"
[ $rc -eq 0 ] || exit 1
# Every case must have run, not merely none failed.
printf '%s\n' "$out" | grep -qx '54 passed, 0 failed' || {
    echo "expected 54 passed, 0 failed"; exit 1; }
for t in $tiers; do
    f="$fx/tier$t.jsonl"
    [ -f "$f" ] || continue
    out=$($vg tests/golden_redis --isolated --quiet --lua "$lua" "$f")
    rc=$?
    printf 'tier%s isolated: %s\n' "$t" "$out"
    [ $rc -eq 0 ] || exit 1
    printf '%s\n' "$out" | grep -q ' steps passed, 0 failed,' || exit 1
done
exit 0
