#!/bin/sh
# Replay the golden traces through the in-memory model (tests/golden_model):
# every case of tier1-4 must pass part by part and again with every
# multi-part verb the model has run whole (--whole), none skipped; every
# case of tier5 must pass in both modes with its stream steps borrowed from
# the trace (--borrow-streams: the model has no streams; every other reply
# and key is still the model's). make check runs this from the build
# directory with $srcdir exported.
srcdir=${srcdir:-.}
prog=./tests/golden_model
fx=$srcdir/tests/fixtures
status=0
# run LABEL ARGS...: replay, print the summary and any failure
run() {
    label=$1
    shift
    out=$("$prog" --quiet "$@") || status=1
    printf '%s: %s (%s)\n' "$label" \
        "$(printf '%s\n' "$out" | grep ' passed, ')" \
        "$(printf '%s\n' "$out" | grep 'run whole')"
    printf '%s\n' "$out" | grep -E '^(FAIL|ERROR)' | head -20
    case $(printf '%s\n' "$out" | grep ' passed, ') in
    *skipped*) echo "golden_model: $label: a case was skipped"; status=1 ;;
    esac
}
for mode in "" --whole; do
    run "tier1-4 ${mode:-parts}" $mode "$fx/tier1.jsonl" "$fx/tier2.jsonl" \
        "$fx/tier3.jsonl" "$fx/tier4.jsonl"
    run "tier5 ${mode:-parts}" $mode --borrow-streams "$fx/tier5.jsonl"
done
exit $status
