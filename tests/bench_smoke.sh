#!/bin/sh
# bench_smoke.sh — emqlite-bench --smoke: a few hundred operations of every
# workload on emqlite, the raw-SQL baseline and (when redis-server is
# installed and hiredis was built) the Lua-bundle peer. The program checks
# every verdict, the FIFO order of claims and the pending counts itself and
# exits non-zero on any mismatch; this script also checks that the report
# carries a number for every emqlite and raw figure. No timing is asserted.
# With EMQ_VALGRIND set (the CI's memcheck pass) the program runs under
# memcheck, forked phase processes included.
set -u
bin=${BENCH_BIN:-./bench/emqlite-bench}
vg=
if [ -n "${EMQ_VALGRIND:-}" ] && command -v valgrind >/dev/null 2>&1; then
    vg="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible --track-fds=no"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-smoke.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
fail=0

if ! $vg "$bin" --smoke --dir "$tmp" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"; then
    echo "FAIL: emqlite-bench --smoke exited non-zero"
    fail=1
fi
# Every throughput row: the emqlite and raw columns ($3, $4 when split on
# '|') must be numbers, in both the NORMAL and the FULL table.
for row in "enqueue, ops/s" "enqueue_many, jobs/s" "full cycle, cycles/s" \
           "claim latency p50" "bytes on disk per job"; do
    n=$(grep -F "| $row" "$tmp/out/report.md" 2>/dev/null |
        awk -F'|' '$3 ~ /^ *[0-9.]+ *$/ && $4 ~ /^ *[0-9.]+ *$/' | wc -l)
    if [ "$n" -ne 2 ]; then
        echo "FAIL: report row '$row': $n of 2 tables carry emqlite and raw figures"
        fail=1
    fi
done
# The peer ran too, unless the program said why it skipped it (no
# redis-server, or built without hiredis).
if ! grep -q "peer skipped" "$tmp/stderr"; then
    n=$(grep -F "| full cycle, cycles/s" "$tmp/out/report.md" 2>/dev/null |
        awk -F'|' '$5 ~ /^ *[0-9.]+ *$/ && $6 ~ /^ *[0-9.]+ *$/ && $7 ~ /^ *[0-9.]+ *$/' | wc -l)
    if [ "$n" -ne 2 ]; then
        echo "FAIL: the peer's cycle figures (TCP 1 and 2 CPUs, Unix socket) are missing ($n of 2 tables)"
        fail=1
    fi
fi
# The depth sweep ran at both smoke depths for emqlite.
for d in 1000 2000; do
    if ! grep -q "^| emqlite | NORMAL | $d |" "$tmp/out/report.md" 2>/dev/null; then
        echo "FAIL: no emqlite depth row at $d pending"
        fail=1
    fi
done
# --no-history: emqlite alone, its job history off, said in the report.
if ! $vg "$bin" --smoke --systems emqlite --no-history --dir "$tmp" \
        --out "$tmp/nohist" >>"$tmp/stdout" 2>>"$tmp/stderr"; then
    echo "FAIL: emqlite-bench --smoke --no-history exited non-zero"
    fail=1
fi
if ! grep -q "job history off" "$tmp/nohist/report.md" 2>/dev/null; then
    echo "FAIL: the --no-history report does not say the history was off"
    fail=1
fi
n=$(grep -F "| full cycle, cycles/s" "$tmp/nohist/report.md" 2>/dev/null |
    awk -F'|' '$3 ~ /^ *[0-9.]+ *$/' | wc -l)
if [ "$n" -ne 2 ]; then
    echo "FAIL: the --no-history report's emqlite cycle figures are missing ($n of 2 tables)"
    fail=1
fi
if [ -s "$tmp/stderr" ]; then sed 's/^/  /' "$tmp/stderr"; fi
if [ "$fail" -ne 0 ]; then
    sed 's/^/  /' "$tmp/stdout"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "1 passed, 0 failed"
exit 0
