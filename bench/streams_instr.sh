#!/bin/sh
# streams_instr.sh — instructions per stream entry under callgrind (`make
# bench-streams-instr`): `emqlite-bench-streams --instr WHAT` runs WHAT's
# loop over N entries with collection on around the loop only, emqlite on a
# fresh file, synchronous NORMAL:
#   append   N appends, one transition each
#   cycle    N cycles of READ-GROUP `>` COUNT 1 + ACK of that entry
#   batch    N/100 cycles of READ-GROUP COUNT 100 + one ACK of the 100
#
#   streams_instr.sh BIN OUTDIR       (N from $BENCH_STREAMS_N, default 2000)
#
# Writes OUTDIR/streams-instr.md and OUTDIR/callgrind.streams.WHAT.out
# (open with callgrind_annotate); prints the table.
set -eu
bin=$1 out=$2
n=${BENCH_STREAMS_N:-2000}
mkdir -p "$out"
command -v valgrind >/dev/null 2>&1 || { echo "streams_instr.sh: valgrind is not installed" >&2; exit 1; }
per() {
    f="$out/callgrind.streams.$1.out"
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$f" \
        "$bin" --instr "$1" --n "$n" >"$out/streams.$1.txt" \
        2>"$out/streams.$1.err" || { cat "$out/streams.$1.err" >&2; exit 1; }
    grep -q 'callgrind-macros=yes' "$out/streams.$1.txt" ||
        { echo "streams_instr.sh: built without <valgrind/callgrind.h>" >&2; exit 1; }
    awk -v n="$n" '/^(totals|summary):/ { printf "%d", $2 / n; exit }' "$f"
}
a=$(per append)
c=$(per cycle)
b=$(per batch)
{
    echo "#### Streams: instructions per entry (callgrind, N = $n, synchronous NORMAL)"
    echo
    echo "| loop | instructions per entry |"
    echo "|---|---:|"
    echo "| append (1 transition each) | $a |"
    echo "| read+ack (READ-GROUP COUNT 1 + ACK 1: 2 transitions) | $c |"
    echo "| read+ack by 100 (READ-GROUP COUNT 100 + ACK 100), per entry | $b |"
} | tee "$out/streams-instr.md"
