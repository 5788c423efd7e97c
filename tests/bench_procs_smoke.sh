#!/bin/sh
# bench_procs_smoke.sh — `emqlite-procs` (bench/procs.c) briefly: two and
# four processes on one file, each phase checked by the program (every
# job claimed exactly once, every payload, no failed call), and the peer
# over its Unix socket and TCP when a server is installed. No figure is
# asserted (speed is measured in bench/, never tested).
bin=${EMQLITE_PROCS:-$(pwd)/bench/emqlite-procs}
[ -x "$bin" ] || { echo "bench_procs_smoke: $bin not found" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-procs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$bin" --k 2,4 --jobs 400 --mixed-jobs 200 --mixed-rate 4000 --rounds 1 \
    --dir "$tmp" >"$tmp/out" 2>"$tmp/err" || {
    cat "$tmp/out" "$tmp/err"
    echo "0 passed, 1 failed"
    exit 1
}
n=0
for want in '^\| 2 \| [0-9]' '^\| 4 \| [0-9]' 'Failed calls: 0 \(EMQ_EBUSY: 0\)' \
    'enqueue call to claim, p99'; do
    grep -Eq -- "$want" "$tmp/out" || {
        echo "bench_procs_smoke: no '$want'" >&2
        cat "$tmp/out"
        echo "$n passed, 1 failed"
        exit 1
    }
    n=$((n + 1))
done
# --history failures: emqlite alone, the level applied and said.
"$bin" --k 2 --jobs 200 --mixed-jobs 100 --mixed-rate 4000 --rounds 1 \
    --only emqlite --history failures --dir "$tmp" >"$tmp/out" 2>"$tmp/err" &&
    grep -q "job history at its failures level" "$tmp/out" || {
    cat "$tmp/out" "$tmp/err"
    echo "bench_procs_smoke: --history failures" >&2
    echo "$n passed, 1 failed"
    exit 1
}
n=$((n + 1))
# A relative --dir: the peer's server runs in its own directory, and still
# finds its log there (it could not start before: "Can't open the log file").
if command -v redis-server >/dev/null 2>&1 || command -v valkey-server >/dev/null 2>&1; then
    (cd "$tmp" && mkdir rel && "$bin" --k 1 --jobs 100 --mixed-jobs 20 \
        --mixed-rate 4000 --rounds 1 --only peer-unix --dir rel \
        >"$tmp/out" 2>"$tmp/err" && rmdir rel) || {
        cat "$tmp/out" "$tmp/err"
        echo "bench_procs_smoke: a relative --dir" >&2
        echo "$n passed, 1 failed"
        exit 1
    }
    n=$((n + 1))
fi
left=$(ls "$tmp" | grep -v '^out$\|^err$')
[ -z "$left" ] || { echo "bench_procs_smoke: files left behind: $left" >&2; echo "$n passed, 1 failed"; exit 1; }
echo "bench_procs_smoke: $((n + 1)) passed, 0 failed"
echo "$((n + 1)) passed, 0 failed"
