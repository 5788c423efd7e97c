#!/bin/sh
# Replay the golden traces (tests/fixtures/tierN.jsonl, recorded from the
# reference on Valkey) against emqlite: every case of every tier listed
# below must pass, step by step, reply by reply, keyspace by keyspace.
# make check runs this from the build directory with $srcdir exported.
# Under the valgrind run (EMQ_VALGRIND set) the replayer runs in memcheck.
# A tier joins the list when its verbs are built. Every tier replays twice:
# part by part, and with each multi-part verb run whole (--whole).
# `partial` tiers use verbs of a tier built elsewhere (tier4 reads rows
# with Tier 2's get_job and get_job_state): until those are registered,
# their steps are skipped (the keyspace after them is still compared); once
# they are, they run like every other step.
srcdir=${srcdir:-.}
prog=./tests/golden_replay
tiers="tier1"
partial="tier4"
missing="get_job,get_job_state"
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
part=$(traces_of $partial) || exit 1
for mode in "" --whole; do
    $lt $vg "$prog" --quiet $mode $full || exit 1
    $lt $vg "$prog" --quiet $mode --allow-missing "$missing" $part || exit 1
done
