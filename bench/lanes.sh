#!/bin/sh
# lanes.sh — the fair-lane benchmark (`make bench-lanes`): the fairness
# tables and the timed cost table of `emqlite-lanes`, then, under callgrind,
# instructions per transition against the number of lanes. Each
# `emqlite-lanes --instr` run collects one transition at a time (collection
# toggled around it, --collect-atstart=no) and dumps after each, so
# OUT/callgrind.lanes.L.out.1, .2, .3 hold claim, complete and enqueue.
#
#   lanes.sh BIN OUTDIR     (N from $BENCH_LANES_N, default 200; the lane
#                            counts from $BENCH_LANES, default 10,100,1000,10000)
#
# Writes OUTDIR/lanes.md and prints it.
set -eu
bin=$1 out=$2
n=${BENCH_LANES_N:-200}
lanes=${BENCH_LANES:-10,100,1000,10000}
mkdir -p "$out"
"$bin" --dir "$out" --lanes "$lanes" >"$out/lanes.md"
if ! command -v valgrind >/dev/null 2>&1; then
    echo "lanes.sh: valgrind is not installed: no instruction counts" >&2
    cat "$out/lanes.md"
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
} >>"$out/lanes.md"
for l in $(echo "$lanes" | tr ',' ' '); do
    set -- $(ir "$l")
    awk -v l="$l" -v c="$1" -v m="$2" -v e="$3" -v pc="$pc" -v pm="$pm" \
        -v pe="$pe" 'BEGIN { printf "| %d | %d | %.2f | %d | %.2f | %d | %.2f |\n", l, c, c / pc, m, m / pm, e, e / pe }' \
        >>"$out/lanes.md"
done
cat "$out/lanes.md"
