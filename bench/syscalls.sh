#!/bin/sh
# syscalls.sh — system calls and WAL frames per transition, in both locking
# modes (`make bench-syscalls`; part of `make bench-run`). The kernel's share
# of a transition: each loop of `emqlite-bench --instr WHAT` runs under
# `strace -f -c` for N and for 2N iterations and the difference is divided by
# N, so the setup (10,000 jobs prefilled, 1,000 warm-up iterations, open and
# close) cancels out. Frames are the pages the loop wrote to the WAL
# (SQLITE_DBSTATUS_CACHE_WRITE), printed by the program itself.
#
#   syscalls.sh BIN OUTDIR        (N from $BENCH_SYSCALL_N, default 2000)
#
# Modes: shared (the default: SQLite's WAL locks on the -shm, plus emqlite's
# writer gate) and exclusive (emq_options.exclusive / locking_mode =
# EXCLUSIVE, one process per file). Writes OUTDIR/syscalls.md; prints it.
set -eu
bin=$1 out=$2
n=${BENCH_SYSCALL_N:-2000}
mkdir -p "$out"
command -v strace >/dev/null 2>&1 || { echo "syscalls.sh: strace is not installed" >&2; exit 1; }

# trace WHAT N FLAGS: "name calls" lines of one run, plus "frames F".
trace() {
    f="$out/strace.$1.$2$3.txt"
    # shellcheck disable=SC2086
    strace -f -c -o "$f" "$bin" --instr "$1" -n "$2" $3 >"$out/sys.$1.txt" 2>"$out/sys.$1.err" ||
        { cat "$out/sys.$1.err" >&2; exit 1; }
    awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { print $NF, $4 }' "$f"
    sed -n 's/.* frames=\([0-9-]*\).*/frames \1/p' "$out/sys.$1.txt"
    rm -f "$f"
}

# per_op WHAT FLAGS: "name per-op" lines (N and 2N differenced).
per_op() {
    trace "$1" "$n" "$2" >"$out/sys.a"
    trace "$1" $((2 * n)) "$2" >"$out/sys.b"
    awk -v n="$n" 'FNR == NR { a[$1] = $2; next }
                   { d = ($2 - a[$1]) / n; if ($1 == "frames") d = $2 / (2 * n);
                     if (d > 0.005 || $1 == "frames") printf "%s %.2f\n", $1, d }' \
        "$out/sys.a" "$out/sys.b"
    rm -f "$out/sys.a" "$out/sys.b" "$out/sys.$1.txt" "$out/sys.$1.err"
}

# row LABEL FILE: one table row from per_op's output.
row() {
    awk -v label="$1" '
        { v[$1] = $2; if ($1 != "frames") total += $2 }
        END {
            other = total - v["fcntl"] - v["pwrite64"] - v["pread64"] - v["fdatasync"] - v["fsync"]
            printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", label, total,
                v["fcntl"], v["pwrite64"], v["pread64"], v["fdatasync"] + v["fsync"], other, v["frames"]
        }' "$2"
}

{
    echo "### System calls per loop iteration (strace -c, N = $n, 10,000 pending, synchronous NORMAL)"
    echo
    echo "An enqueue is 1 transaction; a cycle (enqueue + claim + complete) is 3."
    echo
    echo "| loop, mode | syscalls | fcntl | pwrite64 | pread64 | fsync/fdatasync | other | WAL frames |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    for mode in shared exclusive; do
        flags=
        [ "$mode" = exclusive ] && flags=--exclusive
        for what in emq-enqueue raw-enqueue emq-cycle raw-cycle; do
            per_op "$what" "$flags" >"$out/sys.$what.$mode"
            row "$what, $mode" "$out/sys.$what.$mode"
        done
    done
    echo
    echo "Every call with at least 0.01 per iteration (shared mode):"
    echo
    for what in emq-enqueue emq-cycle; do
        printf '* %s:' "$what"
        awk '$1 != "frames" { printf " %s %s,", $1, $2 }' "$out/sys.$what.shared" | sed 's/,$//'
        echo
    done
    rm -f "$out"/sys.*.shared "$out"/sys.*.exclusive
} | tee "$out/syscalls.md"
