#!/bin/sh
# redis_harness.sh — a private redis-server (or valkey-server) on a loopback
# port for the tests that talk to a real server (the Lua bundle's golden
# replay, export piping).
#
#   redis_harness.sh start DIR [OPTION...]
#                                 start a server whose files live in DIR
#                                 (OPTIONs are passed on after the defaults,
#                                 which they override: --appendonly yes);
#                                 prints the port, writes DIR/port, DIR/pid
#   redis_harness.sh stop DIR     stop the server started in DIR (by its pid)
#   redis_harness.sh run CMD ...  start a server in a fresh temporary DIR,
#                                 run CMD with EMQ_REDIS_PORT, EMQ_REDIS_CLI
#                                 and EMQ_REDIS_DIR exported, stop the
#                                 server, exit with CMD's status
#
# Without a server binary `run` prints why and exits 77, which automake's
# test driver reports as SKIP. REDIS_SERVER / REDIS_CLI override the binaries.
# By default the server keeps nothing on disk (no RDB, no AOF); it listens
# on 127.0.0.1 only; a port already taken is skipped and another one tried.
set -u

server=${REDIS_SERVER:-}
if [ -z "$server" ]; then
    server=$(command -v valkey-server 2>/dev/null || command -v redis-server 2>/dev/null || true)
fi
cli=${REDIS_CLI:-}
if [ -z "$cli" ]; then
    cli=$(command -v valkey-cli 2>/dev/null || command -v redis-cli 2>/dev/null || true)
fi

start() {
    dir=$1
    shift
    mkdir -p "$dir" || return 1
    tries=0
    while [ $tries -lt 20 ]; do
        tries=$((tries + 1))
        # A pseudo-random port in 20000..59999 from our pid and the clock.
        port=$(( (($$ * 7919) + $(date +%N | sed 's/^0*//;s/^$/0/') / 1000 + tries * 104729) % 40000 + 20000 ))
        "$server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --dir "$dir" --logfile "$dir/server.log" --daemonize no \
            --protected-mode yes "$@" >/dev/null 2>&1 &
        pid=$!
        n=0
        while [ $n -lt 50 ]; do
            if ! kill -0 "$pid" 2>/dev/null; then
                break            # exited: most likely the port was taken
            fi
            if "$cli" -p "$port" ping 2>/dev/null | grep -q PONG; then
                echo "$port" >"$dir/port"
                echo "$pid" >"$dir/pid"
                echo "$port"
                return 0
            fi
            n=$((n + 1))
            sleep 0.1
        done
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    echo "redis_harness: could not start $server (see $dir/server.log)" >&2
    return 1
}

stop() {
    dir=$1
    [ -f "$dir/pid" ] || return 0
    pid=$(cat "$dir/pid")
    kill "$pid" 2>/dev/null
    n=0
    while kill -0 "$pid" 2>/dev/null && [ $n -lt 50 ]; do
        n=$((n + 1))
        sleep 0.1
    done
    rm -f "$dir/pid" "$dir/port"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
start)
    [ -n "$server" ] && [ -n "$cli" ] || { echo "redis_harness: no redis-server/redis-cli" >&2; exit 77; }
    start "$@" ;;
stop)
    stop "$1" ;;
run)
    if [ -z "$server" ] || [ -z "$cli" ]; then
        echo "SKIP: redis-server and redis-cli are not installed (Debian: redis-server redis-tools)"
        exit 77
    fi
    dir=$(mktemp -d "${TMPDIR:-/tmp}/emq-redis.XXXXXX") || exit 99
    port=$(start "$dir") || { rm -rf "$dir"; exit 99; }
    trap 'stop "$dir"; rm -rf "$dir"; exit 99' INT TERM HUP
    EMQ_REDIS_PORT=$port EMQ_REDIS_CLI=$cli EMQ_REDIS_DIR=$dir "$@"
    rc=$?
    stop "$dir"
    rm -rf "$dir"
    exit $rc ;;
*)
    echo "usage: $0 start DIR [OPTION...] | stop DIR | run CMD [ARG...]" >&2
    exit 2 ;;
esac
