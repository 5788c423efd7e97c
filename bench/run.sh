#!/bin/sh
# run.sh — the full benchmark run behind BENCHMARKS.md (`make bench-run`):
# emqlite-bench with the default scale, then the callgrind instruction counts
# (when valgrind is installed), then the plot.
#
#   run.sh BIN OUTDIR BENCHSRCDIR [emqlite-bench options...]
#
# Writes OUTDIR/report.md (the tables and targets), OUTDIR/depth.tsv,
# OUTDIR/instructions.md and OUTDIR/bench.png.
set -eu
bin=$1 out=$2 src=$3
shift 3
mkdir -p "$out"
"$bin" --out "$out" "$@" | tee "$out/stdout.txt"
if command -v valgrind >/dev/null 2>&1; then
    sh "$src/instructions.sh" "$bin" "$out"
else
    echo "run.sh: valgrind not installed: no instruction counts" >&2
fi
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "tsv='$out/depth.tsv'; png='$out/bench.png'" "$src/plot.gp"
    echo "run.sh: wrote $out/bench.png"
else
    echo "run.sh: gnuplot not installed: no plot" >&2
fi
