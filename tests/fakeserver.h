/*
 * fakeserver.h — an in-memory server behind the transport interface of
 * api/emqlite_remote.h, for testing push, pull and verify without a
 * network: the commands the transfer module sends (COMMAND INFO, SCAN,
 * TYPE, PEXPIRETIME, PTTL, GET, HGETALL, LRANGE, SMEMBERS, ZRANGE
 * WITHSCORES, HPEXPIRETIME, ZCARD, UNLINK, DEL, SET [NX], MULTI, EXEC and
 * the data commands of an export) run against a private emqlite store.
 *
 * It differs from a real server where that tests the module: SCAN pages
 * two keys at a time, SMEMBERS answers in reverse byte order, and faults
 * can be injected (an error reply for one command name, a connection that
 * fails after N commands, a key reported as a stream).
 *
 * A fake cluster is N such nodes, each with its own store, and one slot
 * map the test changes at will — between calls, or from a hook that runs
 * before every command any node receives, so that a slot moves in the
 * middle of a pipelined push. The nodes answer as a Redis 7 cluster does:
 * CLUSTER SHARDS / SLOTS from the map; MOVED for a slot the node does not
 * own; during a move, ASK from the owner for a key it does not hold, and
 * service by the importing node after ASKING (TRYAGAIN for a MULTI block
 * of several keys it does not all hold); MULTI queues its commands, and a
 * redirected one aborts the EXEC (EXECABORT), nothing applied.
 */
#ifndef EMQ_TEST_FAKESERVER_H
#define EMQ_TEST_FAKESERVER_H

#include "emqlite_remote.h"
#include "store.h"

#define FAKE_NODES 8
#define FAKE_SLOTS 16384

typedef struct fake_cluster fake_cluster;

typedef struct fake {
    emq_store *st;             /* the store (a node's, shared by its
                                  connections)                          */
    int64_t now;               /* the server's clock (expiries)          */
    int has[4];                /* PEXPIRETIME HPEXPIRETIME HPEXPIREAT UNLINK */
    const char *error_on;      /* answer this command with an error      */
    long fail_after;           /* commands until the connection fails (-1);
                                  a node's: every connection to it fails */
    const char *stream_key;    /* a key reported as a stream (NULL)      */
    long commands;             /* commands received (a node's: by all of
                                  its connections)                      */
    /* the connection */
    int multi, multi_bad, asking;
    emq_buf queued;            /* the commands of the open MULTI (RESP)   */
    size_t nqueued;
    emq_rreply **q;            /* replies not yet read                   */
    size_t head, n, cap;
    /* a node of a cluster (cl NULL: a server of its own) */
    fake_cluster *cl;
    int node;
    struct fake *home;         /* the node a connection belongs to       */
} fake;

struct fake_cluster {
    size_t n;
    fake node[FAKE_NODES];     /* node i; also its first connection      */
    char addr[FAKE_NODES][32]; /* "fake:700i"                            */
    int owner[FAKE_SLOTS];     /* slot -> node, -1: none                 */
    int moving[FAKE_SLOTS];    /* slot -> node importing it, -1: none    */
    int no_shards;             /* CLUSTER SHARDS unknown (a Redis 6)     */
    int blank_host;            /* the map and MOVED/ASK name no host     */
    /* called before every command any node receives, with their number
     * so far (the command about to run not counted) */
    void (*hook)(fake_cluster *fc, void *ctx, long total);
    void *hook_ctx;
    long total;
    long dials;                /* connections fake_cluster_dial opened    */
};

/** A fake holding nothing, every command known, at `now`. */
void fake_init(fake *f, int64_t now);
/** Free what is left (after emq_remote_close, which calls close). */
void fake_free(fake *f);
/** The transport to hand to emq_remote_open with the fake as ctx. */
extern const emq_transport fake_transport;
/** Run one command as if sent (its reply is dropped): test setup. */
void fake_cmd(fake *f, size_t argc, const char *const *argv);

/** A cluster of n nodes ("fake:7000" …), the slots split in n ranges in
 *  order as `redis-cli --cluster create` splits them. */
void fake_cluster_init(fake_cluster *fc, size_t n, int64_t now);
void fake_cluster_free(fake_cluster *fc);
/** An emq_dial_fn (ctx: the cluster): a new connection to the node at
 *  addr, opened with emq_remote_open. */
int fake_cluster_dial(void *ctx, const char *addr, emq_remote **out,
                      char *err, size_t errlen);
/** The node owning a key's slot. */
int fake_cluster_node_of(const fake_cluster *fc, const char *key);
/** Resharding one slot, in the steps of CLUSTER SETSLOT and MIGRATE: start
 *  moving it to node `to` (IMPORTING/MIGRATING), move the keys the owner
 *  holds (MIGRATE), make `to` its owner (SETSLOT NODE). */
void fake_slot_begin_move(fake_cluster *fc, unsigned slot, int to);
void fake_slot_move_keys(fake_cluster *fc, unsigned slot);
void fake_slot_end_move(fake_cluster *fc, unsigned slot);
/** Keys of node i, and of those the ones of `slot`. */
long fake_node_keys(fake *node, unsigned slot, long *in_slot);

#endif /* EMQ_TEST_FAKESERVER_H */
