#!/bin/sh
# redis_golden.sh — the Lua bundle (tests/lua/) against the golden traces on
# a private redis-server started by tests/redis_harness.sh:
#   1. every case of tests/fixtures/tier1.jsonl … tier5.jsonl replayed step
#      by step (every verb: scripted transitions through the bundle,
#      host-side verbs as the plain store commands the reference issues);
#   2. every step of the five files replayed alone from the keyspace the
#      trace recorded before it (--isolated).
# Each run must reach every case (step) of its file, not merely fail none.
# With EMQ_TEST_QUICK set, step 2 covers tier3 to tier5 only; with
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
# The bundle's verb table and tests/lua/verbs.txt (read by the registry
# coverage test) must agree.
if ! ./tests/golden_redis --list-verbs | diff - "$lua/verbs.txt" \
        --ignore-matching-lines='^#' >verbs.diff 2>&1; then
    echo "FAIL: tests/lua/verbs.txt differs from golden_redis --list-verbs:"
    cat verbs.diff
    exit 1
fi
rm -f verbs.diff
# tier: cases steps
want() {
    case $1 in
    1) echo "54 1755" ;;
    2) echo "49 992" ;;
    3) echo "42 1179" ;;
    4) echo "26 985" ;;
    5) echo "30 876" ;;
    esac
}
for t in 1 2 3 4 5; do
    set -- $(want $t)
    out=$($vg tests/golden_redis --quiet --lua "$lua" "$fx/tier$t.jsonl")
    rc=$?
    printf 'tier%s replay: %s\n' "$t" "$out"
    [ $rc -eq 0 ] || exit 1
    printf '%s\n' "$out" | grep -qx "$1 passed, 0 failed" || {
        echo "expected $1 passed, 0 failed"; exit 1; }
done
iso="1 2 3 4 5"
[ -n "${EMQ_TEST_QUICK:-}" ] && iso="3 4 5"
for t in $iso; do
    set -- $(want $t)
    out=$($vg tests/golden_redis --isolated --quiet --lua "$lua" \
        "$fx/tier$t.jsonl")
    rc=$?
    printf 'tier%s %s\n' "$t" "$out"
    [ $rc -eq 0 ] || exit 1
    printf '%s\n' "$out" | grep -qx "isolated: $2 steps passed, 0 failed" || {
        echo "expected isolated: $2 steps passed, 0 failed"; exit 1; }
done
exit 0
