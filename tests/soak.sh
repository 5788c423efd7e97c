#!/bin/sh
# Run the contention soak (tests/crash_test.c --soak): producers, workers and
# a reaper on one file, one of them SIGKILLed and restarted every few tens of
# milliseconds, the accounting done over all the ledgers at the end.
#   tests/soak.sh [SECONDS [PRODUCERS [WORKERS]]]   e.g. tests/soak.sh 60 4 8
# make check runs the short form (3 s, 2 producers, 3 workers; 2 s under
# EMQ_TEST_QUICK). EMQ_SOAK_KILL_MS sets the mean pause between kills.
[ -n "${1:-}" ] && { EMQ_SOAK_SECONDS=$1; export EMQ_SOAK_SECONDS; }
[ -n "${2:-}" ] && { EMQ_SOAK_PRODUCERS=$2; export EMQ_SOAK_PRODUCERS; }
[ -n "${3:-}" ] && { EMQ_SOAK_WORKERS=$3; export EMQ_SOAK_WORKERS; }
exec ./tests/crash_test --soak
