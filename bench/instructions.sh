#!/bin/sh
# instructions.sh — instructions per transition under callgrind
# (`make bench-instructions`). Each loop of `emqlite-bench --instr WHAT` runs
# N times with collection toggled on around the loop only
# (CALLGRIND_TOGGLE_COLLECT with --collect-atstart=no), so the total over N is
# the loop alone. When the program was built without <valgrind/callgrind.h>
# it counts a run of N and one of 2N and takes the difference.
#
#   instructions.sh BIN OUTDIR        (N from $BENCH_INSTR_N, default 5000)
#
# Writes OUTDIR/instructions.md and OUTDIR/callgrind.WHAT.out (open with
# callgrind_annotate); prints the table.
set -eu
bin=$1 out=$2
n=${BENCH_INSTR_N:-5000}
mkdir -p "$out"
command -v valgrind >/dev/null 2>&1 || { echo "instructions.sh: valgrind is not installed" >&2; exit 1; }

# total_ir FILE: the event total of a callgrind output file.
total_ir() {
    awk '/^(totals|summary):/ { print $2; exit }' "$1"
}

# count WHAT N ATSTART: instructions of one run.
count() {
    f="$out/callgrind.$1.$2.out"
    valgrind --tool=callgrind --collect-atstart="$3" --callgrind-out-file="$f" \
        "$bin" --instr "$1" -n "$2" >"$out/instr.$1.txt" 2>"$out/instr.$1.err" ||
        { cat "$out/instr.$1.err" >&2; exit 1; }
    total_ir "$f"
}

per_op() {
    what=$1
    if "$bin" --instr "$what" -n 1 | grep -q 'callgrind-macros=yes'; then
        t=$(count "$what" "$n" no)
        mv "$out/callgrind.$what.$n.out" "$out/callgrind.$what.out"
        echo $((t / n))
    else
        t1=$(count "$what" "$n" yes)
        t2=$(count "$what" $((2 * n)) yes)
        rm -f "$out/callgrind.$what.$n.out"
        mv "$out/callgrind.$what.$((2 * n)).out" "$out/callgrind.$what.out"
        echo $(((t2 - t1) / n))
    fi
}

ee=$(per_op emq-enqueue)
re=$(per_op raw-enqueue)
ec=$(per_op emq-cycle)
rc=$(per_op raw-cycle)
em=$(per_op emq-enqueue-many)
rm_=$(per_op raw-enqueue-many)
st=$(per_op store-hset3-zadd)
es=$(per_op emq-enqueue-sums)
cs=$(per_op emq-cycle-sums)
{
    echo "### Instructions per transition (callgrind, N = $n, 10,000 pending, synchronous NORMAL)"
    echo
    echo "| loop | emqlite | raw SQL | emqlite/raw | target |"
    echo "|---|---:|---:|---:|---|"
    awk -v a="$ee" -v b="$re" 'BEGIN { r = a / b; printf "| enqueue (1 transaction) | %d | %d | %.2f× | ≤ 1.15×: %s |\n", a, b, r, (r <= 1.15 ? "**met**" : "**not met**") }'
    awk -v a="$ec" -v b="$rc" 'BEGIN { r = a / b; printf "| cycle: enqueue + claim + complete (3 transactions) | %d | %d | %.2f× | ≤ 1.2×: %s |\n", a, b, r, (r <= 1.2 ? "**met**" : "**not met**") }'
    awk -v a="$em" -v b="$rm_" 'BEGIN { printf "| enqueue_many, per job (batches of 1,000) | %d | %d | %.2f× | — |\n", a, b, a / b }'
    awk -v a="$st" -v b="$re" 'BEGIN { printf "| store API: HSET of 3 fields + ZADD, 1 transaction | %d | %d | %.2f× | (for the storage issue) |\n", a, b, a / b }'
    echo
    echo "### Row checksums (emq_options.checksums): instructions per transition"
    echo
    echo "| loop | checksums off | checksums on | cost |"
    echo "|---|---:|---:|---:|"
    awk -v a="$ee" -v b="$es" 'BEGIN { printf "| enqueue | %d | %d | +%.1f%% |\n", a, b, 100 * (b - a) / a }'
    awk -v a="$ec" -v b="$cs" 'BEGIN { printf "| cycle: enqueue + claim + complete | %d | %d | +%.1f%% |\n", a, b, 100 * (b - a) / a }'
} | tee "$out/instructions.md"
