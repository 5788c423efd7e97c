#!/bin/sh
# Replay the Tier 1 golden trace (tests/fixtures/tier1.jsonl, recorded from
# the reference on Valkey) against emqlite: every case must pass.
# make check runs this from the build directory with $srcdir exported.
# Under the valgrind run (EMQ_VALGRIND set) the replayer runs in memcheck.
srcdir=${srcdir:-.}
prog=./tests/golden_replay
trace=$srcdir/tests/fixtures/tier1.jsonl
if [ ! -r "$trace" ]; then
    echo "golden_tier1: $trace not found" >&2
    exit 1
fi
if [ -n "${EMQ_VALGRIND:-}" ]; then
    lt=
    if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" != '177ELF' ]; then
        lt="./libtool --mode=execute"
    fi
    exec $lt valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible \
        "$prog" --quiet "$trace"
fi
exec "$prog" --quiet "$trace"
