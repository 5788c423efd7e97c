#!/bin/sh
# Run the crash test (tests/crash_test.c): producers, workers and a reaper
# SIGKILLed at random instants, the file checked after every round.
#   tests/crash_test.sh [KILLS]      e.g. tests/crash_test.sh 100000
# make check runs it with the default (500 kills; 50 under EMQ_TEST_QUICK).
# Under the valgrind run (EMQ_VALGRIND set) the program runs in memcheck.
prog=./tests/crash_test
if [ -n "${1:-}" ]; then
    EMQ_CRASH_KILLS=$1
    export EMQ_CRASH_KILLS
fi
if [ -n "${EMQ_VALGRIND:-}" ]; then
    lt=
    if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" != '177ELF' ]; then
        lt="./libtool --mode=execute"
    fi
    exec $lt valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible \
        "$prog"
fi
exec "$prog"
