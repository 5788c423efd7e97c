#!/bin/sh
# transfer_faults.sh — issue 27 item 11: transfers to a server that fails.
#   (a) the library: emq_push to a fake server (a unix socket) that closes
#       the connection after the probe (the push then writes to a closed
#       socket) and at the push's first command (8 MiB file):
#       the process survives with EMQ_EIO naming the server, SIGPIPE at
#       SIG_DFL and neither blocked nor pending afterwards
#       (tests/transfer_faults lib);
#   (b) the CLI: `emqlite push --json` to a fake server that closes after
#       the probe and the cluster question (the next write meets a closed
#       socket) exits 9 with a
#       JSON error naming the server, never 141 (SIGPIPE);
#   (c) --timeout: push, pull and verify against a private redis-server
#       stopped by SIGSTOP end within a few seconds with exit 9 and a
#       message naming the server and the timeout (--timeout 300ms); a bad
#       --timeout is a usage error. Needs redis-server (else (c) is skipped
#       with a message).
# SKIP (77) without hiredis.
srcdir=${srcdir:-.}
if [ ! -x tests/transfer_faults ]; then
    echo "SKIP: tests/transfer_faults was not built"
    exit 77
fi
LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_PROGRESS
work=$(mktemp -d "${TMPDIR:-/tmp}/emq-tf.XXXXXX") || exit 99
srv=
cleanup() {
    if [ -n "$srv" ] && [ -f "$srv/pid" ]; then
        kill -CONT "$(cat "$srv/pid")" 2>/dev/null
        "$srcdir/tests/redis_harness.sh" stop "$srv"
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 99' INT TERM HUP
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ms() { date +%s%3N; }

# (a) the library
tests/transfer_faults lib "$work"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || bad "(a) the library case exited $rc"

# (b) the CLI against the fake server, on the 8 MiB file (a)'s push left
# as it was
sock=$work/cli.sock
rm -f "$sock"
tests/transfer_faults serve "$sock" >"$work/serve.out" &
fpid=$!
n=0
while [ ! -S "$sock" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
./emqlite --db "$work/a/f.db" --json push --to "$sock" >"$work/out" 2>"$work/err"
rc=$?
wait $fpid
echo "(b) emqlite push --json to a server that closed: exit $rc"
cat "$work/out"
[ $rc -eq 9 ] || bad "(b) exit $rc, want 9 (141 is death by SIGPIPE)"
grep -q '"error"' "$work/out" || bad "(b) no JSON error on stdout"
grep -q "cli.sock" "$work/out" || bad "(b) the JSON error does not name the server"

# (c) --timeout against a stopped server
./emqlite --db "$work/a/f.db" push --to 127.0.0.1:1 --timeout 5parsecs \
    >/dev/null 2>"$work/err"
rc=$?
[ $rc -eq 1 ] || bad "(c) a bad --timeout: exit $rc, want 1"
grep -q -- "--timeout" "$work/err" || bad "(c) the usage error names --timeout"
if ! command -v redis-server >/dev/null 2>&1 &&
   ! command -v valkey-server >/dev/null 2>&1; then
    echo "(c) skipped: no redis-server/valkey-server to stop"
    exit $fail
fi
srv=$work/srv
port=$("$srcdir/tests/redis_harness.sh" start "$srv") || { bad "(c) no server"; exit 1; }
kill -STOP "$(cat "$srv/pid")"
./emqlite --db "$work/p.db" enqueue q hello >/dev/null ||
    bad "(c) cannot make a file"
for cmd in "push --to" "pull --from" "verify --against"; do
    db=$work/p.db
    [ "$cmd" = "pull --from" ] && db=$work/new.db
    t0=$(ms)
    ./emqlite --db "$db" $cmd "127.0.0.1:$port" --timeout 300ms \
        >"$work/out" 2>"$work/err"
    rc=$?
    took=$(( $(ms) - t0 ))
    echo "(c) ${cmd%% *} --timeout 300ms to a stopped server: exit $rc after $took ms: $(cat "$work/err")"
    [ $rc -eq 9 ] || bad "(c) ${cmd%% *}: exit $rc, want 9"
    [ $took -lt 5000 ] || bad "(c) ${cmd%% *}: took $took ms"
    grep -q "127.0.0.1:$port" "$work/err" || bad "(c) ${cmd%% *}: the server is not named"
    grep -q "timeout (300 ms)" "$work/err" || bad "(c) ${cmd%% *}: the timeout is not named"
done
exit $fail
