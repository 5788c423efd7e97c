#!/bin/sh
# Replay the golden traces (tests/fixtures/tierN.jsonl, recorded from the
# reference on Valkey) against emqlite: every case of every tier listed in
# `tiers` must pass, step by step, reply by reply, keyspace by keyspace —
# part by part, and with each multi-part verb run whole (--whole). Tiers
# whose verbs are not all built yet are replayed in isolation for the verbs
# that are: each step of the tiers in `later` whose verb belongs to a built
# tier runs alone from the keyspace the trace recorded before it.
# make check runs this from the build directory with $srcdir exported.
# Under the valgrind run (EMQ_VALGRIND set) the replayer runs in memcheck.
srcdir=${srcdir:-.}
prog=./tests/golden_replay
tiers="tier1 tier2 tier3 tier4"
later="tier5"
built_tiers="2 3 5"
# Tier 5's stream verbs are built: its steps running them replay isolated
# with the other built tiers (built_tiers), and its 11 stream cases
# (issue 16) also replay whole by name, every step of them a built verb.
tier5_stream="stream_verbs stream_append stream_group stream_retention
 stream_archived stream_time_travel stream_append_batch stream_add_errors
 stream_trim_edges stream_group_edges stream_consumer_loop"
lt=
vg=
if [ -n "${EMQ_VALGRIND:-}" ]; then
    if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" != '177ELF' ]; then
        lt="./libtool --mode=execute"
    fi
    vg="valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible"
fi
traces_of() {
    out=
    for t in "$@"; do
        trace=$srcdir/tests/fixtures/$t.jsonl
        if [ ! -r "$trace" ]; then
            echo "golden_tiers: $trace not found" >&2
            exit 1
        fi
        out="$out $trace"
    done
    echo "$out"
}
full=$(traces_of $tiers) || exit 1
for mode in "" --whole; do
    $lt $vg "$prog" --quiet $mode $full || exit 1
done
if [ -n "$later" ]; then
    rest=$(traces_of $later) || exit 1
    for t in $built_tiers; do
        $lt $vg "$prog" --isolated --tier "$t" --quiet $rest || exit 1
    done
fi
for c in $tier5_stream; do
    out=$($lt $vg "$prog" --quiet --case "$c" "$srcdir/tests/fixtures/tier5.jsonl")
    rc=$?
    case "$out" in
    "1 passed, 0 failed") ;;
    *) echo "tier5 $c: $out"; exit 1 ;;
    esac
    [ $rc -eq 0 ] || exit $rc
done
echo "tier5 stream cases: $(echo $tier5_stream | wc -w) passed"
