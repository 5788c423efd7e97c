#!/bin/sh
# Test wrapper for the valgrind CI run: ELF test programs run under memcheck
# (any error or leak fails the test); scripts run as they are, with
# EMQ_VALGRIND set so they can wrap the programs they start.
f=$1
if [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then
    exec valgrind -q --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
        --track-fds=no "$@"
fi
EMQ_VALGRIND=1 exec "$@"
