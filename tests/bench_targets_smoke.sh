#!/bin/sh
# bench_targets_smoke.sh — bench/targets.sh (`make bench-targets`) at smoke
# sizes: every part runs (each program checks its own replies), and the
# targets table has a judged row for every target of issues 33 and 34,
# read from the parts' own tables. No figure is asserted (speed is measured
# in bench/, never tested); a part may say "not measured" only for the
# reason the script gives (no server, no valgrind, a sanitizer build).
src=${srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-targets.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
TARGETS_SMOKE=1 sh "$src/bench/targets.sh" bench "$tmp/out" "$src/bench" \
    >"$tmp/stdout" 2>"$tmp/stderr" || {
    cat "$tmp/stdout" "$tmp/stderr" "$tmp/out/targets.log" 2>/dev/null | tail -40
    echo "bench_targets_smoke: targets.sh failed"
    echo "0 passed, 1 failed"
    exit 1
}
t="$tmp/out/targets.md"
n=0
fail() {
    echo "bench_targets_smoke: $1" >&2
    cat "$t" >&2
    echo "$n passed, 1 failed"
    exit 1
}
# Every target has its row, and every row a verdict.
for item in "33 · 1" "33 · 2" "33 · 3" "33 · 4" "33 · 5" "34 · 1"; do
    grep -q "^| $item | " "$t" || fail "no row for $item"
    n=$((n + 1))
done
rows=$(grep -c '^| 3[34] · ' "$t")
judged=$(grep -Ec '^\| 3[34] · .*\| (\*\*met\*\*|\*\*not met\*\*|\*\*not measured\*\*|proven by the test, not by this run) \|$' "$t")
[ "$rows" -ge 20 ] && [ "$rows" -eq "$judged" ] || fail "$rows rows, $judged judged"
n=$((n + 1))
# A verdict agrees with its figure: each ratio row's worst ratio against
# its bound, recomputed here from the measured column.
bad=$(awk -F'|' '/^\| 3[34] · / && $3 ~ /≥ [0-9.]+×/ && $4 ~ /[0-9.]+×/ {
        t = $3; sub(/.*≥ /, "", t); min = t + 0
        worst = 1e9; s = $4
        while (match(s, /[0-9.]+×/)) {
            v = substr(s, RSTART, RLENGTH) + 0; if (v < worst) worst = v
            s = substr(s, RSTART + RLENGTH)
        }
        want = (worst >= min) ? "**met**" : "**not met**"
        if ($5 !~ /not measured/ && index($5, want) == 0) print
    }' "$t")
[ -z "$bad" ] || fail "a verdict disagrees with its figures: $bad"
n=$((n + 1))
# "not measured" only for a stated reason, and the peer's rows measured
# when a server is installed.
grep '\*\*not measured\*\*' "$t" | grep -v 'no redis-server\|valgrind\|no K = 8' &&
    fail "a row not measured without a reason"
if command -v redis-server >/dev/null 2>&1; then
    grep -q 'no redis-server' "$t" && fail "a server is installed, yet the peer was not run"
fi
n=$((n + 1))
# The parts leave no database or side file behind (emqlite-bench --instr
# left its -emqlock files before emq_remove_files).
left=$(ls "$tmp/out" | grep -E '\.db(-[a-z]+)?$')
[ -z "$left" ] || fail "files left behind: $left"
n=$((n + 1))
echo "bench_targets_smoke: $n passed, 0 failed"
echo "$n passed, 0 failed"
