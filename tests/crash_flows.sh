#!/bin/sh
# Run the flow crash test (tests/crash_flows.c): SIGKILL at every step
# boundary of the flow procedures, then at random instants of a
# multi-process flow workload.
#   tests/crash_flows.sh [boundaries|random|both] [KILLS]
# make check runs both with the defaults (200 random kills; 40 under
# EMQ_TEST_QUICK). Under the valgrind run (EMQ_VALGRIND set) only the
# boundaries run, in memcheck.
prog=./tests/crash_flows
mode=${1:-both}
if [ -n "${2:-}" ]; then
    EMQ_CRASH_KILLS=$2
    export EMQ_CRASH_KILLS
fi
if [ -n "${EMQ_VALGRIND:-}" ]; then
    lt=
    if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" != '177ELF' ]; then
        lt="./libtool --mode=execute"
    fi
    exec $lt valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible \
        "$prog" boundaries
fi
exec "$prog" "$mode"
