#!/bin/sh
# The test driver: automake's own (build-aux/test-driver), with every test
# run under a time limit, so that a test that hangs fails with its name and
# its log instead of holding `make check` (and CI) for ever. The limit is
# EMQ_TEST_LIMIT seconds (900 unless set; CI's valgrind run sets more); the
# test is sent SIGTERM at the limit and SIGKILL 30 s later, with everything
# it started (timeout(1) runs it in a process group of its own). The log
# ends with the test's wall time, read by tests/durations.sh.
here=$(dirname "$0")
limit=${EMQ_TEST_LIMIT:-900}
log=
seen=0
prev=
for a do
    shift
    if [ "$prev" = --log-file ]; then log=$a; fi
    prev=$a
    if [ $seen = 0 ] && [ "$a" = -- ]; then
        set -- "$@" -- timeout -k 30 "$limit"
        seen=1
    else
        set -- "$@" "$a"
    fi
done
start=$(date +%s)
${SHELL:-/bin/sh} "$here/../build-aux/test-driver" "$@"
rc=$?
end=$(date +%s)
if [ -n "$log" ] && [ -f "$log" ]; then
    if [ $((end - start)) -ge "$limit" ]; then
        echo "driver: stopped at the limit of $limit s (EMQ_TEST_LIMIT)" >>"$log"
    fi
    echo "driver: wall $((end - start)) s" >>"$log"
fi
exit $rc
