#!/bin/sh
# redis_cluster.sh — a private local Valkey/Redis Cluster of N primaries
# (default 3) on loopback ports, for the tests that move files into and out
# of a real cluster. Each node is a redis_harness.sh server started with
# --cluster-enabled yes; the slots are split evenly by
# `redis-cli --cluster create`, and the harness waits for cluster_state:ok
# on every node.
#
#   redis_cluster.sh run [-n N] CMD ...   start the cluster, run CMD with
#                                         EMQ_CLUSTER_PORTS ("p1 p2 p3"),
#                                         EMQ_CLUSTER_SEED (127.0.0.1:p1)
#                                         and EMQ_REDIS_CLI exported, stop it
#                                         and exit with CMD's status
#   redis_cluster.sh start DIR [-n N]     start it in DIR (prints the ports)
#   redis_cluster.sh stop DIR             stop the cluster started in DIR
#
# Without a server binary `run` exits 77 (SKIP).
set -u
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/redis_harness.sh
cli=${REDIS_CLI:-$(command -v valkey-cli 2>/dev/null || command -v redis-cli 2>/dev/null || true)}

start_cluster() { # DIR N
    dir=$1 n=$2 ports= i=1
    mkdir -p "$dir" || return 1
    while [ "$i" -le "$n" ]; do
        p=$(sh "$harness" start "$dir/node$i" --cluster-enabled yes \
            --cluster-config-file "$dir/node$i/nodes.conf" \
            --cluster-node-timeout 2000) || return 1
        ports="$ports $p"
        i=$((i + 1))
    done
    ports=${ports# }
    echo "$ports" >"$dir/ports"
    addrs=
    for p in $ports; do addrs="$addrs 127.0.0.1:$p"; done
    # shellcheck disable=SC2086
    "$cli" --cluster create $addrs --cluster-replicas 0 --cluster-yes \
        >"$dir/create.log" 2>&1 || { cat "$dir/create.log" >&2; return 1; }
    tries=0
    while [ $tries -lt 100 ]; do
        ok=1
        for p in $ports; do
            "$cli" -p "$p" cluster info 2>/dev/null |
                grep -q 'cluster_state:ok' || ok=0
        done
        [ $ok -eq 1 ] && { echo "$ports"; return 0; }
        tries=$((tries + 1))
        sleep 0.1
    done
    echo "redis_cluster: the cluster did not reach cluster_state:ok" >&2
    return 1
}

stop_cluster() { # DIR
    for d in "$1"/node*; do
        [ -d "$d" ] && sh "$harness" stop "$d"
    done
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
start)
    dir=$1
    shift
    n=3
    [ "${1:-}" = "-n" ] && n=$2
    start_cluster "$dir" "$n" ;;
stop)
    stop_cluster "$1" ;;
run)
    n=3
    if [ "${1:-}" = "-n" ]; then n=$2; shift 2; fi
    if [ -z "$cli" ] || ! command -v "${REDIS_SERVER:-redis-server}" >/dev/null 2>&1 &&
       ! command -v valkey-server >/dev/null 2>&1; then
        echo "SKIP: redis-server and redis-cli are not installed"
        exit 77
    fi
    dir=$(mktemp -d "${TMPDIR:-/tmp}/emq-cluster.XXXXXX") || exit 99
    trap 'stop_cluster "$dir"; rm -rf "$dir"; exit 99' INT TERM HUP
    ports=$(start_cluster "$dir" "$n") || { stop_cluster "$dir"; rm -rf "$dir"; exit 99; }
    seed=127.0.0.1:${ports%% *}
    EMQ_CLUSTER_PORTS=$ports EMQ_CLUSTER_SEED=$seed EMQ_REDIS_CLI=$cli \
        EMQ_CLUSTER_DIR=$dir "$@"
    rc=$?
    stop_cluster "$dir"
    rm -rf "$dir"
    exit $rc ;;
*)
    echo "usage: $0 run [-n N] CMD ... | start DIR [-n N] | stop DIR" >&2
    exit 2 ;;
esac
