#!/bin/sh
# The soaks of lanes, flows, streams, events and repeats (tests/soak_tiers.c):
# several processes on one file, SIGKILLed or SIGSTOPped at random, the
# accounting over their ledgers and emqlite check at the end.
#   tests/soak_tiers.sh [SECONDS [MODE...]]   e.g. tests/soak_tiers.sh 60
# make check runs each mode for 3 s (2 s under EMQ_TEST_QUICK).
secs=${1:-}
[ $# -gt 0 ] && shift
modes=${*:-lanes flows streams events repeats}
rc=0
for m in $modes; do
    ./tests/soak_tiers "$m" $secs || rc=1
done
exit $rc
