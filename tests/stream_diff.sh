#!/bin/sh
# stream_diff.sh — the stream type's differential test: random sequences of
# stream commands on emqlite and on a private redis-server, every reply and
# the final state compared (tests/stream_diff.c says what is normalised).
# STREAM_DIFF_SEQUENCES / STREAM_DIFF_COMMANDS / STREAM_DIFF_SEED override
# the defaults. SKIP (77) without hiredis or without redis-server.
srcdir=${srcdir:-.}
if [ ! -x tests/stream_diff ]; then
    echo "SKIP: tests/stream_diff was not built (configure found no hiredis)"
    exit 77
fi
if [ -z "${EMQ_REDIS_PORT:-}" ]; then
    exec "$srcdir/tests/redis_harness.sh" run "$0" "$@"
fi
vg=
# The sanitizer and valgrind runs (EMQ_TEST_QUICK) take a sample.
if [ -n "${EMQ_TEST_QUICK:-}" ] && [ "${EMQ_TEST_QUICK}" != 0 ]; then
    : "${STREAM_DIFF_SEQUENCES:=40}"
fi
if [ -n "${EMQ_VALGRIND:-}" ]; then
    vg="valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible"
    : "${STREAM_DIFF_SEQUENCES:=10}"
fi
exec $vg tests/stream_diff "$EMQ_REDIS_PORT" "${STREAM_DIFF_SEQUENCES:-200}" \
    "${STREAM_DIFF_COMMANDS:-250}" "${STREAM_DIFF_SEED:-20260116}"
