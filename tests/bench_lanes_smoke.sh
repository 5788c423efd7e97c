#!/bin/sh
# bench_lanes_smoke.sh — `emqlite-lanes --smoke` (bench/lanes_bench.c) runs every
# fairness drain and cost loop briefly: every claim's group, token and
# payload is checked by the program, every drain must empty the queue. No
# figure is asserted (speed is measured in bench/, never tested).
bin=${EMQLITE_LANES:-$(pwd)/bench/emqlite-lanes}
[ -x "$bin" ] || { echo "bench_lanes_smoke: $bin not found" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-lanes.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$bin" --smoke --dir "$tmp" >"$tmp/out" 2>"$tmp/err" || {
    cat "$tmp/out" "$tmp/err"
    exit 1
}
for want in 'lane_claim' 'wclaim' 'bclaim' 'plain queue' '^\| 100 \|'; do
    grep -Eq -- "$want" "$tmp/out" || { echo "bench_lanes_smoke: no '$want'" >&2; cat "$tmp/out"; exit 1; }
done
[ -z "$(ls "$tmp" | grep -v '^out$\|^err$')" ] || { echo "bench_lanes_smoke: files left behind" >&2; ls "$tmp"; exit 1; }
echo "bench_lanes_smoke: ok"
