#!/bin/sh
# Replay tests/fixtures/tier5.jsonl part by part and whole (--whole: each
# multi-part verb run once, compared with its seq.reply and the keyspace of
# its last part). Until every tier is in the build, a case may fail only
# because one of its verbs is not in emqlite's registry (a verb another
# tier builds); any other failure fails this test. Once nothing is missing,
# every case must pass in both modes.
srcdir=${srcdir:-.}
prog=./tests/golden_replay
trace=$srcdir/tests/fixtures/tier5.jsonl
if [ ! -r "$trace" ]; then
    echo "golden_tier5: $trace not found" >&2
    exit 1
fi
tmp=${TMPDIR:-/tmp}/emq-golden5.$$
trap 'rm -f "$tmp".*' EXIT
fail=0
for mode in parts whole; do
    flag=
    [ "$mode" = whole ] && flag=--whole
    "$prog" $flag "$trace" >"$tmp.out" 2>&1
    rc=$?
    if [ "$rc" -ge 2 ]; then
        cat "$tmp.out"
        exit 1
    fi
    pass=$(grep -c '^PASS ' "$tmp.out")
    missing=$(grep '^FAIL ' "$tmp.out" | grep -c "is not in emqlite's registry")
    other=$(grep '^FAIL ' "$tmp.out" | grep -v "is not in emqlite's registry")
    verbs=$(grep '^FAIL ' "$tmp.out" | grep "is not in emqlite's registry" |
            sed 's/.*verb "\([a-z_]*\)".*/\1/' | sort -u | tr '\n' ' ')
    echo "golden_tier5 ($mode): $pass passed, $missing waiting for a verb" \
         "of another tier${verbs:+ ($verbs)}"
    if [ -n "$other" ]; then
        printf '%s\n' "$other"
        fail=1
    fi
done
exit $fail
