#!/bin/sh
# redis_export.sh — an export replayed into a private redis-server with
# `redis-cli --pipe` must load with zero errors and leave exactly the file's
# keyspace (key by key, and the same logical digest recomputed from the
# server). Runs the plain export and the by-slot export (MULTI/EXEC blocks).
# With EMQ_VALGRIND set (the CI's valgrind run) the programs run under
# memcheck. SKIP (77) without hiredis or without redis-server/redis-cli.
srcdir=${srcdir:-.}
if [ ! -x tests/redis_export ]; then
    echo "SKIP: tests/redis_export was not built (configure found no hiredis)"
    exit 77
fi
if [ -z "${EMQ_REDIS_PORT:-}" ]; then
    exec "$srcdir/tests/redis_harness.sh" run "$0" "$@"
fi
set -e
vg=
if [ -n "${EMQ_VALGRIND:-}" ]; then
    vg="valgrind -q --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite,indirect,possible \
        --errors-for-leak-kinds=definite,indirect,possible"
fi
work=$EMQ_REDIS_DIR
cli="$EMQ_REDIS_CLI -p $EMQ_REDIS_PORT"
for mode in plain by-slot; do
    flag=
    [ $mode = by-slot ] && flag=--by-slot
    $cli flushall >/dev/null
    $vg tests/redis_export make "$work/x.db" "$work/x.resp" $flag
    out=$($cli --pipe <"$work/x.resp" 2>&1)
    printf '%s: %s\n' "$mode" "$(printf '%s\n' "$out" | tail -n 1)"
    printf '%s\n' "$out" | grep -q 'errors: 0, replies:' || {
        echo "$mode: redis-cli --pipe reported errors"; printf '%s\n' "$out"; exit 1; }
    $vg tests/redis_export verify "$work/x.db" "$EMQ_REDIS_PORT"
done
