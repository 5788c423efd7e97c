#!/bin/sh
# Replay the golden traces (tests/fixtures/tierN.jsonl, recorded from the
# reference on Valkey) against emqlite: every case of every tier listed
# below must pass, step by step, reply by reply, keyspace by keyspace.
# make check runs this from the build directory with $srcdir exported.
# Under the valgrind run (EMQ_VALGRIND set) the replayer runs in memcheck.
# A tier joins the list when its verbs are built.
srcdir=${srcdir:-.}
prog=./tests/golden_replay
tiers="tier1 tier2"
traces=
for t in $tiers; do
    trace=$srcdir/tests/fixtures/$t.jsonl
    if [ ! -r "$trace" ]; then
        echo "golden_tiers: $trace not found" >&2
        exit 1
    fi
    traces="$traces $trace"
done
# The Tier 2 verbs are also replayed step by step, each alone from the
# recorded keyspace before it, over the traces of the later tiers (their
# lane, flow and repeat paths).
later=
for t in tier3 tier4 tier5; do
    [ -r "$srcdir/tests/fixtures/$t.jsonl" ] &&
        later="$later $srcdir/tests/fixtures/$t.jsonl"
done
run=
if [ -n "${EMQ_VALGRIND:-}" ]; then
    lt=
    if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" != '177ELF' ]; then
        lt="./libtool --mode=execute"
    fi
    run="$lt valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible"
fi
$run "$prog" --quiet $traces || exit 1
[ -z "$later" ] || $run "$prog" --isolated --tier 2 --quiet $later
