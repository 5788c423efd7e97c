#!/bin/sh
# Replay the golden traces (tests/fixtures/tierN.jsonl, recorded from the
# reference on Valkey) against emqlite: every case of every tier listed
# below must pass, step by step, reply by reply, keyspace by keyspace.
# make check runs this from the build directory with $srcdir exported.
# Under the valgrind run (EMQ_VALGRIND set) the replayer runs in memcheck.
# A tier joins the list when its verbs are built.
srcdir=${srcdir:-.}
prog=./tests/golden_replay
tiers="tier1"
# Tier 5's stream cases (issue 16), by name, until all of tier 5 is built.
tier5_stream="stream_verbs stream_append stream_group stream_retention
 stream_archived stream_time_travel stream_append_batch stream_add_errors
 stream_trim_edges stream_group_edges stream_consumer_loop"
traces=
for t in $tiers; do
    trace=$srcdir/tests/fixtures/$t.jsonl
    if [ ! -r "$trace" ]; then
        echo "golden_tiers: $trace not found" >&2
        exit 1
    fi
    traces="$traces $trace"
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
$run "$prog" --quiet $traces || exit $?
for c in $tier5_stream; do
    out=$($run "$prog" --quiet --case "$c" "$srcdir/tests/fixtures/tier5.jsonl")
    rc=$?
    case "$out" in
    "1 passed, 0 failed") ;;
    *) echo "tier5 $c: $out"; exit 1 ;;
    esac
    [ $rc -eq 0 ] || exit $rc
done
echo "tier5 stream cases: $(echo $tier5_stream | wc -w) passed"
