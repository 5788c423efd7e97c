#!/bin/sh
# lanes.sh — the fair-lane benchmark (`make bench-lanes`): the fairness
# tables and the timed cost table of `emqlite-lanes`, then, under callgrind,
# instructions per transition against the number of lanes. Each
# `emqlite-lanes --instr` run collects one transition at a time (collection
# toggled around it, --collect-atstart=no) and dumps after each, so
# OUT/callgrind.lanes.L.out.1, .2, .3 hold claim, complete and enqueue.
#
#   lanes.sh [--instr-only] BIN OUTDIR
#                           (N from $BENCH_LANES_N, default 200; the lane
#                            counts from $BENCH_LANES, default 10,100,1000,10000)
#
# Writes OUTDIR/lanes.md and prints it. --instr-only (`make
# bench-lanes-instr`) skips the fairness and timed tables and writes only the
# instruction table, with the growth from the fewest to the most lanes, to
# OUTDIR/lanes-instr.md.
set -eu
only=
if [ "${1:-}" = --instr-only ]; then only=1; shift; fi
bin=$1 out=$2
n=${BENCH_LANES_N:-200}
lanes=${BENCH_LANES:-10,100,1000,10000}
mkdir -p "$out"
md="$out/lanes.md"
if [ -n "$only" ]; then
    md="$out/lanes-instr.md"
    : >"$md"
else
    "$bin" --dir "$out" --lanes "$lanes" >"$md"
fi
if ! command -v valgrind >/dev/null 2>&1; then
    [ -z "$only" ] || { echo "lanes.sh: valgrind is not installed" >&2; exit 1; }
    echo "lanes.sh: valgrind is not installed: no instruction counts" >&2
    cat "$md"
    exit 0
fi

# ir L: "claim complete enqueue" instructions per transition at L lanes
# (0: the plain queue).
ir() {
    f="$out/callgrind.lanes.$1.out"
    rm -f "$f" "$f".*
    if [ "$1" -eq 0 ]; then set -- --plain; else set -- --lanes "$1"; fi
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$f" \
        "$bin" --instr "$@" -n "$n" --dir "$out" >"$out/lanes.instr.txt" \
        2>"$out/lanes.instr.err" || { cat "$out/lanes.instr.err" >&2; exit 1; }
    grep -q 'callgrind-macros=yes' "$out/lanes.instr.txt" ||
        { echo "lanes.sh: built without <valgrind/callgrind.h>" >&2; exit 1; }
    for part in 1 2 3; do
        awk -v n="$n" '/^totals:/ { printf "%d ", $2 / n; exit }' "$f.$part"
    done
}

set -- $(ir 0)
pc=$1 pm=$2 pe=$3
{
    echo
    echo "#### Instructions per transition (callgrind, N = $n per transition, 20000 jobs waiting)"
    echo
    echo "| lanes | lane_claim | ×claim | complete (grouped) | ×complete | lane_enqueue (random lane) | ×enqueue |"
    echo "|---:|---:|---:|---:|---:|---:|---:|"
    echo "| plain queue | $pc | 1.00 | $pm | 1.00 | $pe | 1.00 |"
} >>"$md"
first= last=
for l in $(echo "$lanes" | tr ',' ' '); do
    set -- $(ir "$l")
    awk -v l="$l" -v c="$1" -v m="$2" -v e="$3" -v pc="$pc" -v pm="$pm" \
        -v pe="$pe" 'BEGIN { printf "| %d | %d | %.2f | %d | %.2f | %d | %.2f |\n", l, c, c / pc, m, m / pm, e, e / pe }' \
        >>"$md"
    [ -n "$first" ] || first="$l $1 $2 $3"
    last="$l $1 $2 $3"
done
# The growth from the fewest lanes to the most (the flatness target of
# issue 33: at most 1.2x from 10 to 10,000 lanes).
set -- $first $last
awk -v l0="$1" -v c0="$2" -v m0="$3" -v e0="$4" -v l1="$5" -v c1="$6" \
    -v m1="$7" -v e1="$8" 'BEGIN {
    printf "\nFrom %d to %d lanes: lane_claim ×%.2f, complete ×%.2f, lane_enqueue ×%.2f\n", l0, l1, c1 / c0, m1 / m0, e1 / e0 }' >>"$md"
cat "$md"
