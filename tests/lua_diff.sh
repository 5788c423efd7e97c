#!/bin/sh
# lua_diff.sh — the Lua differential (tests/lua_diff.c) on a private
# redis-server started by tests/redis_harness.sh: the kept cases of
# tests/lua_diff.jsonl, then fixed seeds of random registry-verb sequences,
# on emqlite and through the bundle, every reply and every keyspace
# identical. The seeds, steps and keyspace interval come from
# EMQ_DIFF_SEEDS, EMQ_DIFF_STEPS and EMQ_DIFF_EVERY; EMQ_DIFF_LONG=1 is the
# long run (64 seeds of 2000 steps). With EMQ_TEST_QUICK set a sequence is
# 500 steps; with EMQ_VALGRIND set the program runs under memcheck (on 2
# seeds of 100 steps unless they are given).
# SKIP (77) without hiredis or without a server.
srcdir=${srcdir:-.}
if [ ! -x tests/lua_diff ]; then
    echo "SKIP: tests/lua_diff was not built (configure found no hiredis)"
    exit 77
fi
if [ -z "${EMQ_REDIS_PORT:-}" ]; then
    exec "$srcdir/tests/redis_harness.sh" run "$0" "$@"
fi
vg=
# the CI's quick runs (sanitizers, valgrind): shorter sequences
if [ -n "${EMQ_TEST_QUICK:-}" ] && [ -z "${EMQ_DIFF_STEPS:-}" ]; then
    EMQ_DIFF_STEPS=500
    export EMQ_DIFF_STEPS
fi
if [ -n "${EMQ_VALGRIND:-}" ]; then
    vg="valgrind -q --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite,indirect,possible \
        --errors-for-leak-kinds=definite,indirect,possible"
    : "${EMQ_DIFF_SEEDS:=2}" "${EMQ_DIFF_STEPS:=100}"
    export EMQ_DIFF_SEEDS EMQ_DIFF_STEPS
fi
# the shrunk sequences of differences found before, kept as cases
out=$($vg tests/lua_diff --lua "$srcdir/tests/lua" \
    --replay "$srcdir/tests/lua_diff.jsonl")
rc=$?
printf '%s\n' "$out" | grep -v '^excluded\|^skipped'
[ $rc -eq 0 ] || exit 1
printf '%s\n' "$out" | grep -q '^replay: [1-9][0-9]* cases, 0 differ\(, [0-9]* skipped\)\{0,1\}$' || {
    echo "FAIL: no clean replay line"; exit 1; }
# the random sequences
out=$($vg tests/lua_diff --lua "$srcdir/tests/lua")
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || exit 1
# every step of every seed ran, and none differed
printf '%s\n' "$out" | grep -q '^differential: [0-9]* steps, 0 failures$' || {
    echo "FAIL: no clean differential line"; exit 1; }
exit 0
