#!/bin/sh
# run.sh — the full benchmark run behind BENCHMARKS.md (`make bench-run`):
# emqlite-bench with the default scale, once in the default (shared) locking
# mode and once with --exclusive (emqlite and raw SQL in locking_mode
# EXCLUSIVE; the peer measured again in the same run), then the callgrind
# instruction counts (when valgrind is installed), then the system calls and
# WAL frames per transition in both locking modes (when strace is
# installed), then the plot.
#
#   run.sh BIN OUTDIR BENCHSRCDIR [emqlite-bench options...]
#
# Writes OUTDIR/report.md (the tables and targets), OUTDIR/depth.tsv,
# OUTDIR/exclusive/{report.md,depth.tsv}, OUTDIR/instructions.md,
# OUTDIR/syscalls.md and OUTDIR/bench.png.
set -eu
bin=$1 out=$2 src=$3
shift 3
mkdir -p "$out"
"$bin" --out "$out" "$@" | tee "$out/stdout.txt"
if [ -z "${BENCH_NO_EXCLUSIVE:-}" ]; then
    mkdir -p "$out/exclusive"
    "$bin" --out "$out/exclusive" --exclusive "$@" | tee "$out/exclusive/stdout.txt"
fi
if command -v valgrind >/dev/null 2>&1; then
    sh "$src/instructions.sh" "$bin" "$out"
else
    echo "run.sh: valgrind not installed: no instruction counts" >&2
fi
if command -v strace >/dev/null 2>&1; then
    sh "$src/syscalls.sh" "$bin" "$out"
else
    echo "run.sh: strace not installed: no system-call counts" >&2
fi
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "tsv='$out/depth.tsv'; png='$out/bench.png'" "$src/plot.gp"
    echo "run.sh: wrote $out/bench.png"
else
    echo "run.sh: gnuplot not installed: no plot" >&2
fi
