#!/bin/sh
# targets.sh — every performance target of issues 33 and 34 measured in one
# run on one machine, and judged (`make bench-targets`): the single-client
# tables in both locking modes, the instructions the job history costs, many
# processes on one file (NORMAL and FULL), the stream verbs, and the lanes'
# instructions against their number. Each part is the project's own
# benchmark program run as its section of BENCHMARKS.md describes; this
# script only runs them back to back and reads their tables, so a verdict
# is computed from the figures of this run, never written by hand.
#
#   targets.sh BENCHDIR OUTDIR SRCDIR
#       BENCHDIR: the build's bench/ (emqlite-bench, emqlite-procs,
#       emqlite-bench-streams, emqlite-lanes); SRCDIR: the sources' bench/.
#   TARGETS_ROUNDS   rounds of emqlite-procs (default 3) and repeats of
#                    emqlite-bench and the streams (default 3)
#   TARGETS_SMOKE=1  tiny sizes, for tests/bench_targets_smoke.sh: the
#                    parts run and the table is built; the figures mean
#                    nothing
#
# Writes OUTDIR/targets.md (and prints it), with the parts' own outputs
# beside it: single/ (report.md, exclusive/report.md), history.md,
# procs.md, procs-full.md, streams.md, lanes-instr.md. A part whose tool is
# missing (redis-server for the peers, valgrind for the instruction
# counts) is judged "not measured", with the reason.
set -eu
bd=$1 out=$2 src=$3
rounds=${TARGETS_ROUNDS:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd) # absolute: the parts run servers in their own dirs
log="$out/targets.log"
: >"$log"

if [ -n "${TARGETS_SMOKE:-}" ]; then
    single_args="--smoke"
    procs_k=1,2 procs_args="--jobs 300 --mixed-jobs 100 --mixed-rate 4000 --rounds 1"
    full_args="--jobs 100 --mixed-jobs 50 --mixed-rate 4000 --rounds 1"
    streams_args="--n 200 --repeat 1"
    instr_n=20 lanes_n=5 lanes=10,100
    sizes="smoke sizes: the figures mean nothing"
else
    single_args="--repeat $rounds --depths 10000"
    procs_k=1,2,4,8,16 procs_args="--rounds $rounds"
    full_args="--jobs 10000 --mixed-jobs 1000 --rounds $rounds"
    streams_args="--n 10000 --repeat $rounds"
    instr_n=2000 lanes_n=200 lanes=10,100,1000,10000
    sizes="$rounds rounds of emqlite-procs, best of $rounds for the others"
fi
have_peer=1
command -v redis-server >/dev/null 2>&1 || command -v valkey-server >/dev/null 2>&1 ||
    have_peer=
have_vg=1 novg_why="valgrind is not installed"
if ! command -v valgrind >/dev/null 2>&1; then
    have_vg=
elif ! valgrind --tool=none -q "$bd/emqlite-bench" --instr emq-enqueue-nohist \
        -n 1 --dir "$out" >"$out/probe.txt" 2>&1; then
    have_vg= novg_why="valgrind cannot run this build: a sanitizer build?"
elif ! grep -q 'callgrind-macros=yes' "$out/probe.txt"; then
    have_vg= novg_why="emqlite-bench was built without <valgrind/callgrind.h>"
fi
rm -f "$out/probe.txt"

say() { echo "targets.sh: $*" >&2; }

# --------------------------------------------------------------- the parts
say "single client, shared and exclusive locking ($single_args)"
mkdir -p "$out/single/exclusive"
"$bd/emqlite-bench" --out "$out/single" $single_args >>"$log" 2>&1
"$bd/emqlite-bench" --out "$out/single/exclusive" --exclusive $single_args \
    >>"$log" 2>&1

# per_op WHAT: instructions per iteration of `emqlite-bench --instr WHAT`
# (collection toggled around the loop: instructions.sh).
per_op() {
    f="$out/callgrind.$1.out"
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$f" \
        "$bd/emqlite-bench" --instr "$1" -n "$instr_n" --dir "$out" \
        >"$out/instr.$1.txt" 2>>"$log" || { say "--instr $1 failed"; exit 1; }
    grep -q 'callgrind-macros=yes' "$out/instr.$1.txt" ||
        { say "emqlite-bench built without <valgrind/callgrind.h>"; exit 1; }
    awk -v n="$instr_n" '/^(totals|summary):/ { printf "%d\n", $2 / n; exit }' "$f"
}
: >"$out/history.md"
if [ -n "$have_vg" ]; then
    say "the job history's instructions (callgrind, N = $instr_n)"
    for w in enqueue cycle; do
        off=$(per_op "emq-$w-nohist")
        on=$(per_op "emq-$w")
        fail=$(per_op "emq-$w-histfail")
        echo "$w $off $on $fail" >>"$out/history.md"
    done
fi

say "many processes, synchronous NORMAL (K = $procs_k)"
"$bd/emqlite-procs" --k "$procs_k" $procs_args --dir "$out" >"$out/procs.md" 2>>"$log"
say "many processes, synchronous FULL (K = $procs_k)"
"$bd/emqlite-procs" --full --k "$procs_k" $full_args --dir "$out" \
    >"$out/procs-full.md" 2>>"$log"

say "streams, synchronous NORMAL ($streams_args)"
"$bd/emqlite-bench-streams" $streams_args --sync normal >"$out/streams.md" 2>>"$log"

if [ -n "$have_vg" ]; then
    say "lanes: instructions against the number of lanes ($lanes)"
    BENCH_LANES_N=$lanes_n BENCH_LANES=$lanes \
        sh "$src/lanes.sh" --instr-only "$bd/emqlite-lanes" "$out/lanes" >>"$log" 2>&1
    cp "$out/lanes/lanes-instr.md" "$out/lanes-instr.md"
else
    : >"$out/lanes-instr.md"
fi

# ------------------------------------------------------------ the judging
# rows TABLE-HEADING FILE: the data rows of the table under that heading
# ("K emqlite peer-unix peer-tcp r-unix r-tcp", medians and ratios only).
rows() {
    awk -v h="$1" '
        index($0, "#### ") == 1 { on = (index($0, h) == 1); next }
        on && /^\| [0-9]+ \|/ {
            n = split($0, f, "|")
            line = ""
            for (i = 2; i < n; i++) {
                v = f[i]; sub(/^ +/, "", v); sub(/ .*/, "", v); sub(/×$/, "", v)
                line = line (i > 2 ? " " : "") v
            }
            print line
        }' "$2"
}

# judge WHAT MIN ROWS-FILE COLUMN: "measured|verdict" for the ratios in
# COLUMN of every row (all at least MIN: met).
judge() {
    awk -v min="$2" -v col="$4" -v what="$1" '
        { k[NR] = $1; r[NR] = $col; if ($col + 0 < min + 0) bad = 1; n = NR }
        END {
            if (n == 0) { print "no figure|**not measured**"; exit }
            s = ""
            for (i = 1; i <= n; i++) s = s (i > 1 ? ", " : "") r[i] "× (K = " k[i] ")"
            print s "|" (bad ? "**not met**" : "**met**")
        }' "$3"
}

row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "${3%%|*}" "${3#*|}"; }

noserver="no figure (no redis-server or valkey-server: the peer was not run)|**not measured**"
novg="no figure ($novg_why)|**not measured**"

{
echo "## Targets of issues 33 and 34, judged from one run"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPU(s); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end;"
echo "\`bench/targets.sh\` (\`make bench-targets\`), $sizes."
echo "Ratios are emqlite / peer; \"peer-unix\" is the peer over its Unix socket."
echo
echo "| issue · item | target | measured | verdict |"
echo "|---|---|---|---|"

# Issue 33 item 1: many processes, NORMAL.
p="$out/procs.md"
rows "#### K producers" "$p" >"$out/.prod"
rows "#### K workers" "$p" >"$out/.work"
if [ -n "$have_peer" ]; then
    row "33 · 1" "K producers ≥ 1.2× the peer over its Unix socket, every K" \
        "$(judge prod 1.2 "$out/.prod" 5)"
    row "33 · 1" "K producers ≥ 1.2× the peer over TCP, every K" \
        "$(judge prod 1.2 "$out/.prod" 6)"
    row "33 · 1" "K workers ≥ 1.2× the peer over its Unix socket, every K" \
        "$(judge work 1.2 "$out/.work" 5)"
    row "33 · 1" "K workers ≥ 1.2× the peer over TCP, every K" \
        "$(judge work 1.2 "$out/.work" 6)"
else
    row "33 · 1" "K producers and workers ≥ 1.2× the peer, every K" "$noserver"
fi
fails=$(sed -n 's/^Failed calls: \([0-9]*\) (EMQ_EBUSY: \([0-9]*\)).*/\1 \2/p' "$p" | head -1)
set -- ${fails:-x x}
if [ "$1" = x ]; then
    row "33 · 1" "no call fails with EMQ_EBUSY at default options" "no count printed|**not measured**"
else
    row "33 · 1" "no call fails with EMQ_EBUSY at default options" \
        "$1 failed calls, $2 with EMQ_EBUSY|$([ "$2" -eq 0 ] && [ "$1" -eq 0 ] && echo '**met**' || echo '**not met**')"
fi
kmax=$(tail -n 1 "$out/.prod" | cut -d' ' -f1)
p99=$(rows "#### One enqueue call under K producers: p99" "$p" | awk -v k="$kmax" '$1 == k { print $2 }')
mx=$(rows "#### One enqueue call under K producers: max" "$p" | awk -v k="$kmax" '$1 == k { print $2 }')
row "33 · 1" "the longest writer wait at K = $kmax ≤ 50 ms (p99 and max)" \
    "$(awk -v a="${p99:-}" -v b="${mx:-}" 'BEGIN {
        if (b == "") { print "no figure|**not measured**"; exit }
        printf "p99 %s ms, max %s ms|%s\n", a, b, (b + 0 <= 50 ? "**met**" : "**not met**") }')"

# Issue 33 item 2: FULL.
p="$out/procs-full.md"
rows "#### K producers" "$p" >"$out/.fprod"
if [ -n "$have_peer" ]; then
    awk '$1 == 8' "$out/.fprod" >"$out/.fprod8"
    t="FULL enqueue with K = 8 ≥ 1.5× the peer with appendfsync always (Unix socket)"
    if [ -s "$out/.fprod8" ]; then row "33 · 2" "$t" "$(judge fprod 1.5 "$out/.fprod8" 5)"
    else row "33 · 2" "$t" "no K = 8 in this run: $(judge fprod 1.5 "$out/.fprod" 5 | cut -d'|' -f1)|**not measured**"
    fi
else
    row "33 · 2" "FULL enqueue with K = 8 ≥ 1.5× the peer with appendfsync always" "$noserver"
fi
row "33 · 2" "an acknowledged FULL transition survives power loss" \
    "tests/test_faults.c group_commit_keeps_every_acknowledged_write_at_power_loss (make check)|proven by the test, not by this run"

# Issue 33 item 3: streams against the pinned peer, over TCP and over its
# Unix socket (the ratio columns found by their titles).
s="$out/streams.md"
for w in "append" "read+ack, cycles" "read+ack by 100"; do
    for via in "1 CPU" unix; do
        r=$(awk -v w="$w" -v h="emqlite/peer $via" '
            index($0, "| | emqlite |") == 1 {
                n = split($0, f, "|")
                for (i = 1; i <= n; i++) { v = f[i]; gsub(/^ +| +$/, "", v); if (v == h) col = i }
            }
            col && index($0, "| " w) == 1 {
                split($0, f, "|"); v = f[col]; gsub(/[ ×]/, "", v); print v; exit }' "$s")
        case $w in
            append) t="stream append ≥ 1.2× the pinned peer's XADD (NORMAL)" ;;
            "read+ack, cycles") t="group read+ack ≥ 1.2× the pinned peer's XREADGROUP+XACK" ;;
            *) t="group read+ack by 100 ≥ 1.2× the pinned peer's" ;;
        esac
        [ "$via" = unix ] && t="$t, over its Unix socket"
        if [ -z "$have_peer" ]; then row "33 · 3" "$t" "$noserver"
        elif [ -z "$r" ] || [ "$r" = "—" ]; then row "33 · 3" "$t" "no figure|**not measured**"
        else row "33 · 3" "$t" "$r×|$(awk -v r="$r" 'BEGIN { print (r + 0 >= 1.2 ? "**met**" : "**not met**") }')"
        fi
    done
done

# Issue 33 item 4: lanes.
l=$(sed -n 's/^From \([0-9]*\) to \([0-9]*\) lanes: lane_claim ×\([0-9.]*\), complete ×\([0-9.]*\), lane_enqueue ×\([0-9.]*\)$/\1 \2 \3 \5/p' "$out/lanes-instr.md")
if [ -z "$have_vg" ]; then
    row "33 · 4" "lane enqueue and lane claim ≤ 1.2× from 10 to 10,000 lanes" "$novg"
elif [ -z "$l" ]; then
    row "33 · 4" "lane enqueue and lane claim ≤ 1.2× from 10 to 10,000 lanes" "no figure|**not measured**"
else
    set -- $l
    row "33 · 4" "lane enqueue and lane claim ≤ 1.2× from 10 to 10,000 lanes (instructions)" \
        "from $1 to $2 lanes: claim ×$3, enqueue ×$4|$(awk -v a="$3" -v b="$4" 'BEGIN { print (a + 0 <= 1.2 && b + 0 <= 1.2 ? "**met**" : "**not met**") }')"
fi

# Issue 33 item 5: single client against the pinned peer over its Unix
# socket (emqlite-bench judges these rows itself).
for f in "$out/single/report.md" "$out/single/exclusive/report.md"; do
    grep -E '^\| (shared|exclusive): (enqueue|full cycle) ≥ [0-9.]+× the pinned peer over its Unix socket \|' "$f" |
        while IFS='|' read -r _ t m v _; do
            t=${t# }; t=${t% }; m=${m# }; m=${m% }; v=${v# }; v=${v% }
            row "33 · 5" "$t" "$m|$v"
        done
done

# Issue 34 item 1: what the history costs.
h="$out/history.md"
if [ -z "$have_vg" ]; then
    row "34 · 1" "the job history costs ≤ 10% instructions" "$novg"
else
    # cost OFF WITH: "OFF → WITH: +P%|verdict" against the 10% target
    cost() {
        awk -v a="$1" -v b="$2" 'BEGIN { c = 100 * (b - a) / a
            printf "%d → %d: %+.1f%%|%s\n", a, b, c, (c <= 10 ? "**met**" : "**not met**") }'
    }
    while read -r w off on fail; do
        case $w in enqueue) w="an enqueue" ;; *) w="a cycle (enqueue + claim + complete)" ;; esac
        row "34 · 1" "history of every transition (the default) costs ≤ 10% of $w" \
            "$(cost "$off" "$on")"
        row "34 · 1" "history at its failures level costs ≤ 10% of $w" \
            "$(cost "$off" "$fail")"
    done <"$h"
fi
} >"$out/targets.md"
rm -f "$out/.prod" "$out/.work" "$out/.fprod" "$out/.fprod8"
cat "$out/targets.md"
