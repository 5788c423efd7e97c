#!/bin/sh
# plot_smoke.sh — bench/plot.sh draws emqlite top's JSON lines: three
# snapshots of a real file (top --count 3 through a pipe) make a PNG with
# one data file per queue; input without a snapshot is refused (exit 1).
# Skipped (77) without gnuplot.
LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_BUSY_TIMEOUT
top=$(pwd)
EMQLITE=${EMQLITE:-$top/emqlite}
src=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plot_smoke: gnuplot is not installed: skipped"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-plot.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
no() { failed=$((failed + 1)); echo "FAIL: $1"; }
db=$tmp/p.db
for q in mail billing; do
    "$EMQLITE" --db "$db" enqueue $q x >/dev/null || no "enqueue $q"
done
"$EMQLITE" --db "$db" top --count 3 --interval 100ms >"$tmp/top.jsonl"
[ "$(wc -l <"$tmp/top.jsonl")" -eq 3 ] && ok || no "three JSON lines"
sh "$src/bench/plot.sh" "$tmp/top.jsonl" "$tmp/top.png" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || no "plot.sh exits 0 (got $rc: $(cat "$tmp/out"))"
grep -q "^plot.sh: wrote $tmp/top.png (2 queues)$" "$tmp/out" && ok ||
    no "plot.sh names the PNG and 2 queues: $(cat "$tmp/out")"
# A PNG starts with \211PNG.
[ "$(od -An -c -N4 "$tmp/top.png" 2>/dev/null | tr -d ' ')" = '211PNG' ] && ok ||
    no "the output is a PNG"
echo '{"not":"top"}' >"$tmp/bad.jsonl"
sh "$src/bench/plot.sh" "$tmp/bad.jsonl" "$tmp/bad.png" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] && [ ! -e "$tmp/bad.png" ] && ok || no "no snapshot: exit 1, no PNG (got $rc)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
