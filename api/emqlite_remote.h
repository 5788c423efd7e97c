/*
 * emqlite_remote.h — live transfers between an emqlite file and a Valkey or
 * Redis server: push (the file's export streamed into the server), pull
 * (the server's EchoMQ keys imported into the file) and verify (the logical
 * digest of both sides, key by key). doc/EXPORT.md §7 describes what each
 * does on the wire.
 *
 * The calls speak to the server through a transport: two functions, "send
 * one command" and "read the next reply" (in command order, so commands may
 * be pipelined). emq_remote_connect() gives a hiredis transport when the
 * library was built with hiredis (emq_remote_available()); any other
 * transport — a test double, a TLS client, an in-process server — is
 * wrapped with emq_remote_open().
 *
 * A Valkey or Redis Cluster is reached through any of its nodes (the seed):
 * emq_remote_connect detects one (or is told to expect one), reads the slot
 * map and opens one connection per primary; emq_remote_cluster does the same
 * for a remote opened on another transport, with a dial function for the
 * other nodes. Every command is then sent to the node that owns its key's
 * slot (PROTOCOL.md §2.3: each queue on one slot, {emq}:version on slot
 * 9051), MOVED and ASK are followed, and the reports say what each node
 * did. doc/EXPORT.md §6 is the cluster recipe.
 *
 *     emq_remote *r;
 *     char err[256];
 *     if (emq_remote_connect("127.0.0.1:6379", NULL, &r, err, sizeof err))
 *         ... err ...
 *     emq_push_options po;
 *     emq_push_report rep;
 *     emq_push_options_init(&po);
 *     int rc = emq_push(db, r, &po, &rep);   // EMQ_OK; rep.match: counts agree
 *     emq_push_report_free(&rep);
 *     emq_remote_close(r);
 *
 * Results are the EMQ_* codes of emqlite.h; the message of a failure is on
 * the emq_db handle (emq_errmsg). Besides the file's own failures:
 * EMQ_EIO (the connection failed: "<server>: <what>: <reason>"),
 * EMQ_EREMOTE (the server answered an error), EMQ_EWIRE (the server's
 * {emq}:version is another wire), EMQ_EEXIST (the target already holds
 * keys of the transferred queues; nothing was written), EMQ_ENOTSUP (the
 * server holds a key of a type emqlite files do not hold, or no transport
 * was built). A remote, like a handle, is used by one thread at a time.
 */
#ifndef EMQLITE_REMOTE_H
#define EMQLITE_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------- the transport */

/** Reply types (the RESP2 types). */
enum emq_rreply_type {
    EMQ_RREPLY_STRING = 1, /**< a bulk string: str, len                    */
    EMQ_RREPLY_ARRAY,      /**< elements, element[0 .. elements-1]        */
    EMQ_RREPLY_INTEGER,    /**< integer                                    */
    EMQ_RREPLY_NIL,        /**< a null bulk or array                       */
    EMQ_RREPLY_STATUS,     /**< a simple string: str, len                  */
    EMQ_RREPLY_ERROR       /**< an error reply: str, len ("ERR ...")       */
};

/** One reply, owned by the transport until it is released. */
typedef struct emq_rreply {
    int type;                       /**< enum emq_rreply_type               */
    long long integer;
    const char *str;                /**< not NUL-terminated in general    */
    size_t len;
    size_t elements;
    const struct emq_rreply *element;
} emq_rreply;

/**
 * A connection to one server. `send` queues one command of `argc` binary
 * arguments (it may write at once or when a reply is read) and returns 0,
 * or -1 when the connection failed. `recv` returns, in command order, the
 * reply of the oldest command not yet answered (sending what is queued
 * first): 0 and *reply set, or -1 when the connection failed. Each reply is
 * handed back with `release`; several may be held at once. `error` describes
 * the last failure ("Connection refused"). `close` ends the connection
 * (emq_remote_close calls it). `flush`, which may be NULL, writes what is
 * queued without waiting for a reply (0, or -1 when the connection failed):
 * before reading from one node of a cluster the others are flushed, so that
 * every node works on its commands at once.
 */
typedef struct emq_transport {
    int (*send)(void *ctx, size_t argc, const char *const *argv,
                const size_t *lens);
    int (*recv)(void *ctx, const emq_rreply **reply);
    void (*release)(void *ctx, const emq_rreply *reply);
    const char *(*error)(void *ctx);
    void (*close)(void *ctx);
    int (*flush)(void *ctx);
} emq_transport;

typedef struct emq_remote emq_remote;

/**
 * Wrap a transport (copied; `ctx` is passed to its functions) as a remote
 * named `name` (a server's HOST:PORT, used in messages), and ask the server
 * which commands it has (COMMAND INFO: PEXPIRETIME, HPEXPIRETIME,
 * HPEXPIREAT, UNLINK). On success *out owns the transport; on failure the
 * transport is closed, *out is NULL, and `err` (errlen bytes, may be NULL)
 * says why. EMQ_OK, EMQ_EIO, EMQ_EREMOTE, EMQ_EINVAL, EMQ_ENOMEM.
 */
int emq_remote_open(const emq_transport *t, void *ctx, const char *name,
                    emq_remote **out, char *err, size_t errlen);

/** How a remote treats a cluster (emq_remote_options.cluster and
 *  emq_remote_cluster's `mode`). */
enum emq_cluster_mode {
    EMQ_CLUSTER_AUTO = 0, /**< a cluster when the server says it is one
                               (CLUSTER SHARDS answers), else one server */
    EMQ_CLUSTER_ON,       /**< the server must be a cluster node         */
    EMQ_CLUSTER_OFF       /**< this one server only, never asked (a
                               cluster node then answers MOVED for the
                               slots of other nodes: EMQ_EREMOTE)       */
};

/** Options of emq_remote_connect; initialise with emq_remote_options_init. */
typedef struct emq_remote_options {
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
    const char *password;   /**< AUTH with it when not NULL or "" (on
                                 every node of a cluster)                */
    int connect_timeout_ms; /**< default 10000                           */
    int io_timeout_ms;      /**< default 600000: the longest one read or
                                 write on the socket may make no
                                 progress (a stopped server); past it the
                                 transfer fails with EMQ_EIO naming the
                                 node and what was being sent           */
    int cluster;            /**< enum emq_cluster_mode, default AUTO     */
} emq_remote_options;

void emq_remote_options_init_size(emq_remote_options *o, size_t size);
#define emq_remote_options_init(o) \
    emq_remote_options_init_size((o), sizeof *(o))

/** 1 when the library was built with a network transport (hiredis). */
int emq_remote_available(void);

/**
 * Connect to `spec` — "HOST:PORT", "[V6ADDR]:PORT", "HOST" (port 6379) or
 * a unix socket path starting with '/' — through hiredis; then, unless
 * o->cluster is EMQ_CLUSTER_OFF, ask whether it is a cluster node and if so
 * connect to every primary (emq_remote_cluster, the other nodes dialled
 * with the same options). EMQ_EINVAL for a spec of another form or, with
 * EMQ_CLUSTER_ON, a server that is no cluster node; EMQ_EIO when a
 * connection failed, EMQ_EREMOTE when AUTH, the probe or the slot map was
 * refused, EMQ_ENOTSUP without hiredis.
 *
 * No call on such a remote raises SIGPIPE: a write to a server that went
 * away (a node killed mid-push) is EMQ_EIO naming the node and what was
 * being sent, whatever the process's SIGPIPE disposition (the signal is
 * blocked in the calling thread around each write and the one a failed
 * write raised is consumed; the disposition and mask are left as found).
 */
int emq_remote_connect(const char *spec, const emq_remote_options *o,
                       emq_remote **out, char *err, size_t errlen);

/** Close the connection (every node's, for a cluster) and free the remote
 *  (NULL is ignored). */
void emq_remote_close(emq_remote *r);
/** The name given at open (the spec for emq_remote_connect; the seed's for
 *  a cluster). */
const char *emq_remote_name(const emq_remote *r);

/* ------------------------------------------------------------ clusters */

/**
 * Open a remote on another node of a cluster: `addr` is "HOST:PORT" as the
 * cluster names the node. Returns EMQ_OK with *out set, or a code with
 * `err` (errlen bytes) filled, as emq_remote_open does.
 */
typedef int (*emq_dial_fn)(void *ctx, const char *addr, emq_remote **out,
                           char *err, size_t errlen);

/**
 * Make `r` the entry of a cluster. The slot map is read from r's server
 * (CLUSTER SHARDS; CLUSTER SLOTS where SHARDS is unknown), a remote is
 * opened on each primary through `dial` (r itself serves the node it is
 * connected to), and from then on push, pull and verify send each command
 * to the primary owning its key's slot, pipelined per node; a MOVED reply
 * re-reads the map and sends the command again to the new owner, an ASK
 * sends it again to the node named after ASKING (a MULTI/EXEC block is
 * sent again whole), TRYAGAIN waits and sends it again; nodes first met in
 * a redirection are dialled then. `dial` and `ctx` are kept as long as r.
 *
 * `mode` EMQ_CLUSTER_AUTO: a server with cluster support disabled leaves r
 * as one server (EMQ_OK; emq_remote_nodes answers 0). EMQ_CLUSTER_ON: such
 * a server is EMQ_EINVAL. EMQ_CLUSTER_OFF: nothing is done. Other results:
 * EMQ_EREMOTE (the map was refused or has no primary), EMQ_EIO (a node
 * could not be reached), EMQ_ENOMEM, or dial's code; `r` is then unchanged
 * and still usable as one server.
 */
int emq_remote_cluster(emq_remote *r, int mode, emq_dial_fn dial, void *ctx,
                       char *err, size_t errlen);

/** The primaries r routes to (as of the last map read), 0 for one server. */
size_t emq_remote_nodes(const emq_remote *r);

/**
 * What one node did in a transfer (push, pull, verify): `node` is its
 * HOST:PORT; `keys` the keys it stored (push: whose first command it
 * applied) or served (pull, verify: whose TYPE it answered); `commands`
 * sent to it and RESP `bytes_out` / `bytes_in` sent and read (repeats after
 * a redirection and ASKING included); the redirections it answered; and
 * `seconds` from the first command sent to it to the last reply read.
 */
typedef struct emq_node_report {
    char *node;
    uint64_t keys, commands, bytes_out, bytes_in;
    uint64_t moved, asked, tryagain;
    double seconds;
} emq_node_report;

/** Progress of a long transfer: `done` of `total` (0: unknown) `unit`s
 *  ("commands", "keys") in phase `what` ("push", "pull", ...). */
typedef void (*emq_progress_fn)(void *ctx, const char *what, uint64_t done,
                                uint64_t total, const char *unit);

/* emq_transfer_note, EMQ_NOTE_*: api/emqlite.h (export reports them too). */

/* --------------------------------------------------------------- push */

typedef struct emq_push_options {
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
    const char *const *queues; /**< push these queues (NULL: every queue of
                                    the file), plus {emq}:version      */
    size_t n_queues;
    int replace;               /**< delete the target's keys of the pushed
                                    queues first (else EMQ_EEXIST)    */
    int by_slot;               /**< each queue in MULTI/EXEC (atomic)   */
    emq_progress_fn progress;  /**< may be NULL                         */
    void *progress_ctx;
    /** When > 0: each time `checkpoint_every` more commands of the stream
     *  were sent, wait until every one is answered (redirections settled),
     *  then call `checkpoint` (when not NULL) with the number sent so far.
     *  A quiet point for throttling or a smaller window, or for a test to
     *  reshard a cluster mid-push. An open MULTI block stays open across
     *  it. */
    uint64_t checkpoint_every;
    void (*checkpoint)(void *ctx, uint64_t commands);
    void *checkpoint_ctx;
    /** How the push waits `ms` before sending again what a cluster node
     *  answered TRYAGAIN (a MULTI block of several new keys into a slot
     *  being migrated); NULL: it sleeps. */
    void (*wait)(void *ctx, unsigned ms);
    void *wait_ctx;
    /** The identity an empty target is stamped with (an entry of
     *  emq_wire_table, else EMQ_EINVAL); NULL (default): the file's. A
     *  stamped target keeps its own, which the push then speaks. */
    const char *wire;
    emq_note_fn note;          /**< may be NULL (EMQ_NOTE_WIRE, _UNHELD) */
    void *note_ctx;
    /** Continue a push that stopped half way (doc/EXPORT.md §7,
     *  "Resuming a push"): read the target's keys of the pushed queues
     *  first, compare each with the
     *  file's by the XXH3-64 of its digest record, leave out of the stream
     *  the keys already equal, and delete first the target's keys that
     *  differ or that the file does not hold (sent again whole). The
     *  result is what a push with `replace` leaves. Excludes `replace`.
     *  `note` then hears EMQ_NOTE_SKIPPED; the report's `replaced` counts
     *  the keys deleted first. */
    int resume;
} emq_push_options;

void emq_push_options_init_size(emq_push_options *o, size_t size);
#define emq_push_options_init(o) \
    emq_push_options_init_size((o), sizeof *(o))

/** Per queue: the four sets' sizes and the number of job rows. */
typedef struct emq_queue_figures {
    int64_t pending, active, scheduled, dead, rows;
} emq_queue_figures;

typedef struct emq_push_queue {
    char *queue;
    emq_queue_figures sent;    /**< what the stream carried            */
    emq_queue_figures found;   /**< what the server holds afterwards   */
} emq_push_queue;

typedef struct emq_push_report {
    uint64_t keys, digest;     /**< the export's keys and digest          */
    uint64_t commands, bytes;  /**< sent                                  */
    uint64_t replaced;         /**< keys deleted first (replace)          */
    uint64_t dropped;          /**< HPEXPIREAT left out: the server has none
                                    (Valkey < 9.0, Redis < 7.4)          */
    double seconds;            /**< streaming time                        */
    emq_push_queue *queues;    /**< in name order                         */
    size_t n_queues;
    int match;                 /**< 1: every queue's figures agree        */
    uint64_t existing;         /**< EMQ_EEXIST: keys the target holds     */
    char *first_existing;      /**< ... the first of them (NUL-terminated,
                                    may hold any byte before the NUL)    */
    size_t first_len;
    int cluster;               /**< the target is a cluster               */
    emq_node_report *nodes;    /**< per node, during the stream (one for
                                    one server), in the map's order       */
    size_t n_nodes;
    uint64_t moved, asked, tryagain; /**< redirections followed           */
} emq_push_report;

/**
 * Push the file's queues into the server: the server's {emq}:version must
 * be absent (it is then claimed with SET NX) or this wire (else EMQ_EWIRE,
 * nothing written); a target holding keys of a pushed queue is refused
 * with EMQ_EEXIST (nothing written) unless `replace`; the export (one read
 * transaction) is streamed with at most two batches of 1000 commands per
 * node unanswered; the first error reply stops it with EMQ_EREMOTE (the
 * target then holds a partial copy). Then each queue's figures are read
 * back. On a cluster, the fence is read and claimed on the node owning
 * {emq}:version's slot, every other command goes to its key's slot's
 * primary, and redirections are followed (emq_remote_cluster); a command
 * redirected more than 16 times in a row, or answered TRYAGAIN for about a
 * minute, is EMQ_EREMOTE. With `by_slot` each queue's MULTI/EXEC block is
 * kept by the push until its EXEC is answered, to send it again whole.
 * With `resume` the target may hold keys of the pushed queues: only the
 * keys it does not hold equal are sent (a stopped push is continued).
 * `rep` is always filled (free it with emq_push_report_free).
 */
int emq_push(emq_db *db, emq_remote *to, const emq_push_options *o,
             emq_push_report *rep);
void emq_push_report_free(emq_push_report *rep);

/* --------------------------------------------------------------- pull */

typedef struct emq_pull_options {
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
    const char *const *queues; /**< pull these queues (NULL: every EchoMQ
                                    key of the server)                  */
    size_t n_queues;
    int unchecked;             /**< import without emq_check's rules     */
    emq_progress_fn progress;
    void *progress_ctx;
    emq_note_fn note;          /**< may be NULL (EMQ_NOTE_WIRE)           */
    void *note_ctx;
} emq_pull_options;

void emq_pull_options_init_size(emq_pull_options *o, size_t size);
#define emq_pull_options_init(o) \
    emq_pull_options_init_size((o), sizeof *(o))

typedef struct emq_pull_report {
    int version_present;       /**< the server held {emq}:version         */
    uint64_t keys, digest;     /**< the records read (the pulled queues'
                                    keys and the version) and their digest */
    uint64_t commands, bytes;  /**< of the stream imported                */
    char **queues;             /**< the queues pulled, in name order      */
    size_t n_queues;
    emq_transfer_summary file; /**< the file after the import             */
    uint64_t file_digest;      /**< the file's digest of the pulled queues */
    int match;                 /**< file_digest == digest                 */
    char *conflict;            /**< EMQ_EEXIST: a queue the file holds    */
    int cluster;               /**< the source is a cluster               */
    emq_node_report *nodes;    /**< per node (one for one server)         */
    size_t n_nodes;
} emq_pull_report;

/**
 * Pull the server's EchoMQ keys (SCAN, then per key TYPE, PEXPIRETIME and
 * its value, 512 keys a round) into the file through a streaming import
 * (one write transaction, checked unless `unchecked`). The server's
 * {emq}:version must be absent or this wire (EMQ_EWIRE); the file must hold
 * no key of a pulled queue (EMQ_EEXIST, rep->conflict); a stream or other
 * key type is EMQ_ENOTSUP. On a cluster every primary is scanned and each
 * key read from its slot's node. `rep` is always filled.
 */
int emq_pull(emq_db *db, emq_remote *from, const emq_pull_options *o,
             emq_pull_report *rep);
void emq_pull_report_free(emq_pull_report *rep);

/* ------------------------------------------------------------- verify */

typedef struct emq_verify_options {
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
    const char *const *queues; /**< compare these queues (NULL: all)     */
    size_t n_queues;
    emq_progress_fn progress;
    void *progress_ctx;
    emq_note_fn note;          /**< may be NULL (EMQ_NOTE_WIRE, _UNHELD,
                                    _OTHER_QUEUE)                        */
    void *note_ctx;
} emq_verify_options;

void emq_verify_options_init_size(emq_verify_options *o, size_t size);
#define emq_verify_options_init(o) \
    emq_verify_options_init_size((o), sizeof *(o))

typedef struct emq_verify_report {
    int equal;
    uint64_t file_keys, file_digest;
    uint64_t server_keys, server_digest;
    char *first;               /**< the first differing key in name order
                                    (NUL-terminated; bytes may be any)   */
    size_t first_len;
    char reason[200];          /**< "only in the file", "the contents
                                    differ", ...                         */
    int cluster;               /**< the server is a cluster               */
    emq_node_report *nodes;    /**< per node (one for one server)         */
    size_t n_nodes;
} emq_verify_report;

/**
 * Compare the file's keyspace (one read transaction) with the server's, key
 * by key in name order, by their digest records (doc/EXPORT.md §3); on a
 * cluster, with the keys of every primary. EMQ_OK whether or not they are
 * equal (see rep->equal); `rep` is always filled.
 */
int emq_verify(emq_db *db, emq_remote *against, const emq_verify_options *o,
               emq_verify_report *rep);
void emq_verify_report_free(emq_verify_report *rep);

#ifdef __cplusplus
}
#endif
#endif /* EMQLITE_REMOTE_H */
