#!/bin/sh
# Replay tests/fixtures/tier5.jsonl, every case, part by part and whole
# (--whole: each multi-part verb run once, compared with its seq.reply and
# the keyspace of its last part). Until the stream verbs (T5.1-T5.7, issue
# 16) are in emqlite's registry, their steps are borrowed from the trace
# (golden_replay --borrow-streams: the trace's reply, its stream keys in the
# dump); every other step and key must be emqlite's own, byte for byte.
# Once they are registered nothing is borrowed. Every case must pass in
# both modes.
# Under the valgrind run (EMQ_VALGRIND set) the replayer runs in memcheck.
srcdir=${srcdir:-.}
prog=./tests/golden_replay
trace=$srcdir/tests/fixtures/tier5.jsonl
lt=
vg=
if [ ! -r "$trace" ]; then
    echo "golden_tier5: $trace not found" >&2
    exit 1
fi
if [ -n "${EMQ_VALGRIND:-}" ]; then
    if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" != '177ELF' ]; then
        lt="./libtool --mode=execute"
    fi
    vg="valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible"
fi
fail=0
for mode in parts whole; do
    flag=
    [ "$mode" = whole ] && flag=--whole
    out=$($lt $vg "$prog" --borrow-streams --quiet $flag "$trace")
    rc=$?
    printf '%s\n' "$out" | grep '^FAIL '
    echo "golden_tier5 ($mode):" \
         "$(printf '%s\n' "$out" | grep ' passed, ')," \
         "$(printf '%s\n' "$out" | grep 'borrowed stream steps')"
    [ "$rc" -eq 0 ] || fail=1
done
exit $fail
