#!/bin/sh
# The test driver (automake's custom test driver protocol: --test-name,
# --log-file, --trs-file, then -- and the test's command). Every test runs
# under a time limit, so that a test that hangs fails with its name and its
# log instead of holding `make check` (and CI) for ever: EMQ_TEST_LIMIT
# seconds (900 unless set), SIGTERM at the limit and SIGKILL 30 s later, to
# everything the test started (timeout(1) gives it a process group of its
# own). Exit 0 passes, 77 skips, 99 is a hard error, anything else fails
# (124: the limit; ten seconds before it the stacks of the test's processes
# are written to the log, when gdb is there). The log ends with the result and the wall time. The
# test's standard input is /dev/null: a runner that keeps a pipe open on
# make's input must not hold a test that reads it. Before the wall time the
# log gives the test's CPU time ("driver: cpu N s").
name= log= trs= expect=no hard=yes color=no
while [ $# -gt 0 ]; do
    case $1 in
    --test-name) name=$2; shift ;;
    --log-file) log=$2; shift ;;
    --trs-file) trs=$2; shift ;;
    --expect-failure) expect=$2; shift ;;
    --enable-hard-errors) hard=$2; shift ;;
    --color-tests) color=$2; shift ;;
    --collect-skipped-logs) shift ;;
    --) shift; break ;;
    *) echo "tests/driver.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$name" ] || [ -z "$log" ] || [ -z "$trs" ] || [ $# -eq 0 ]; then
    echo "tests/driver.sh: needs --test-name, --log-file, --trs-file and -- COMMAND" >&2
    exit 2
fi
limit=${EMQ_TEST_LIMIT:-900}
# Stopped itself (make interrupted, CI's stage limit), the driver stops its
# test too: timeout(1) passes the signal on to the test's process group.
pid=
stop() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    [ -n "${watch:-}" ] && { pkill -P "$watch"; kill "$watch"; } 2>/dev/null
    rm -f "$log" "$trs"
    exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM
start=$(date +%s)
: >"$log"
timeout -k 30 "$limit" "$@" </dev/null >>"$log" 2>&1 &
pid=$!
# Ten seconds before the limit, the stacks of every process of the test
# (timeout's process group) go to the log, so a hang says where it waits.
if command -v gdb >/dev/null 2>&1 && [ "$limit" -gt 20 ]; then
    (
        sleep $((limit - 10)) && for p in $(pgrep -g "$pid"); do
            [ "$p" = "$pid" ] && continue
            echo "driver: the stacks of process $p ($(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | cut -c1-120)):"
            gdb -p "$p" -batch -nx -ex 'thread apply all bt' 2>&1 | grep -E '^(#|Thread)'
        done >>"$log" 2>&1
    ) </dev/null >/dev/null 2>&1 &
    watch=$!
fi
wait $pid
rc=$?
# Its sleep first: once the subshell is gone the sleep has another parent.
[ -n "${watch:-}" ] && { pkill -P $watch 2>/dev/null; kill $watch 2>/dev/null; }
wall=$(( $(date +%s) - start ))
[ $rc -eq 99 ] && [ "$hard" = no ] && rc=1
case $rc:$expect in
0:yes) res=XPASS ;;
0:*) res=PASS ;;
77:*) res=SKIP ;;
99:*) res=ERROR ;;
*:yes) res=XFAIL ;;
*) res=FAIL ;;
esac
[ $rc -eq 124 ] && echo "driver: stopped at the limit of $limit s (EMQ_TEST_LIMIT)" >>"$log"
echo "$res $name (exit status: $rc)" >>"$log"
# The CPU time (user + sys) of the test and the processes it waited for,
# which, unlike the wall time, does not grow with the machine's load.
# (`times` runs in this shell, not in a command substitution's subshell.)
times >"$trs.times" 2>/dev/null
cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) {
    split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
    printf "%.1f", t }' "$trs.times" 2>/dev/null)
rm -f "$trs.times"
echo "driver: cpu ${cpu:-?} s" >>"$log"
echo "driver: wall $wall s" >>"$log"
if [ "$color" = yes ]; then
    case $res in
    PASS) c='\033[0;32m' ;; SKIP) c='\033[1;34m' ;; *) c='\033[0;31m' ;;
    esac
    printf "$c%s\033[m: %s\n" "$res" "$name"
else
    echo "$res: $name"
fi
case $res in PASS | XFAIL | SKIP) recheck=no ;; *) recheck=yes ;; esac
case $res in PASS) copy=no ;; *) copy=yes ;; esac
{
    echo ":test-result: $res"
    echo ":global-test-result: $res"
    echo ":recheck: $recheck"
    echo ":copy-in-global-log: $copy"
} >"$trs"
