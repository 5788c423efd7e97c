#!/bin/sh
# plot.sh — depth and throughput over time, from the JSON lines that
# `emqlite top` writes when its stdout is not a terminal:
#
#   emqlite --db app.db top --interval 1s > top.jsonl     (Ctrl-C to stop)
#   bench/plot.sh top.jsonl top.png
#
# Two panels, one line per queue: above, the jobs waiting (pending +
# scheduled, solid) and the dead jobs (dashed); below, completed/s (solid)
# and failed/s (dashed) over each interval. Needs gnuplot (gnuplot-nox) and
# awk only. Exit: 0 written, 1 bad usage or no snapshot in the input, 2 no
# gnuplot.
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = --help ]; then
    echo "usage: plot.sh TOP.jsonl [OUT.png]   (OUT.png: TOP.png by default)" >&2
    exit 1
fi
in=$1
out=${2:-${in%.*}.png}
if [ ! -r "$in" ]; then
    echo "plot.sh: cannot read $in" >&2
    exit 1
fi
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plot.sh: gnuplot is not installed (apt-get install gnuplot-nox)" >&2
    exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-plot.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# One data file per queue: seconds since the first snapshot, waiting,
# dead, completed/s, failed/s (a rate is null on a queue's first line: 0).
awk -v dir="$tmp" '
function num(seg, name,   r) {
    if (match(seg, "\"" name "\":[-0-9.e]+")) {
        r = substr(seg, RSTART, RLENGTH); sub(/^[^:]*:/, "", r); return r + 0
    }
    return 0
}
/^\{"at":/ {
    at = num($0, "at")
    if (t0 == "") t0 = at
    n = split($0, seg, /\{"queue":/)
    for (i = 2; i <= n; i++) {
        q = seg[i]; sub(/^"/, "", q); sub(/".*/, "", q)
        gsub(/[^A-Za-z0-9._-]/, "_", q)
        f = dir "/" q ".dat"
        if (!(q in seen)) { seen[q] = 1; print q > (dir "/queues") }
        printf "%.3f %d %d %.3f %.3f\n", (at - t0) / 1000.0,
            num(seg[i], "pending") + num(seg[i], "scheduled"),
            num(seg[i], "dead"), num(seg[i], "completed_per_s"),
            num(seg[i], "failed_per_s") > f
        lines++
    }
}
END { if (!lines) exit 1 }' "$in" || {
    echo "plot.sh: no snapshot of emqlite top in $in" >&2
    exit 1
}

queues=$(tr '\n' ' ' <"$tmp/queues")
gnuplot <<EOF || exit 1
set terminal pngcairo size 1200,800 font ",11" noenhanced
set output '$out'
Q = "$queues"
F(i) = '$tmp/'.word(Q, i).'.dat'
set grid
set key outside right top
set multiplot layout 2,1 title "emqlite top: $(basename "$in")"
set title "depth: waiting (pending + scheduled, solid) and dead (dashed)"
set ylabel "jobs"
set xlabel "seconds"
plot for [i=1:words(Q)] F(i) u 1:2 w l lw 2 lc i t word(Q, i), \
     for [i=1:words(Q)] F(i) u 1:3 w l lw 1 dt 2 lc i t word(Q, i).' dead'
set title "throughput over each interval: completed/s (solid), failed/s (dashed)"
set ylabel "jobs/s"
plot for [i=1:words(Q)] F(i) u 1:4 w l lw 2 lc i t word(Q, i), \
     for [i=1:words(Q)] F(i) u 1:5 w l lw 1 dt 2 lc i t word(Q, i).' failed'
unset multiplot
EOF
echo "plot.sh: wrote $out ($(wc -l <"$tmp/queues") queues)"
