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
 * (emq_remote_close calls it).
 */
typedef struct emq_transport {
    int (*send)(void *ctx, size_t argc, const char *const *argv,
                const size_t *lens);
    int (*recv)(void *ctx, const emq_rreply **reply);
    void (*release)(void *ctx, const emq_rreply *reply);
    const char *(*error)(void *ctx);
    void (*close)(void *ctx);
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

/** Options of emq_remote_connect; initialise with emq_remote_options_init. */
typedef struct emq_remote_options {
    const char *password;   /**< AUTH with it when not NULL or ""        */
    int connect_timeout_ms; /**< default 10000                           */
    int io_timeout_ms;      /**< default 600000 (a large read or write)  */
} emq_remote_options;

void emq_remote_options_init(emq_remote_options *o);

/** 1 when the library was built with a network transport (hiredis). */
int emq_remote_available(void);

/**
 * Connect to `spec` — "HOST:PORT", "[V6ADDR]:PORT", "HOST" (port 6379) or
 * a unix socket path starting with '/' — through hiredis. EMQ_EINVAL for a
 * spec of another form, EMQ_EIO when the connection failed, EMQ_EREMOTE
 * when AUTH or the probe was refused, EMQ_ENOTSUP without hiredis.
 */
int emq_remote_connect(const char *spec, const emq_remote_options *o,
                       emq_remote **out, char *err, size_t errlen);

/** Close the connection and free the remote (NULL is ignored). */
void emq_remote_close(emq_remote *r);
/** The name given at open (the spec for emq_remote_connect). */
const char *emq_remote_name(const emq_remote *r);

/** Progress of a long transfer: `done` of `total` (0: unknown) `unit`s
 *  ("commands", "keys") in phase `what` ("push", "pull", ...). */
typedef void (*emq_progress_fn)(void *ctx, const char *what, uint64_t done,
                                uint64_t total, const char *unit);

/* --------------------------------------------------------------- push */

typedef struct emq_push_options {
    const char *const *queues; /**< push these queues (NULL: every queue of
                                    the file), plus {emq}:version      */
    size_t n_queues;
    int replace;               /**< delete the target's keys of the pushed
                                    queues first (else EMQ_EEXIST)    */
    int by_slot;               /**< each queue in MULTI/EXEC (atomic)   */
    emq_progress_fn progress;  /**< may be NULL                         */
    void *progress_ctx;
} emq_push_options;

void emq_push_options_init(emq_push_options *o);

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
} emq_push_report;

/**
 * Push the file's queues into the server: the server's {emq}:version must
 * be absent (it is then claimed with SET NX) or this wire (else EMQ_EWIRE,
 * nothing written); a target holding keys of a pushed queue is refused
 * with EMQ_EEXIST (nothing written) unless `replace`; the export (one read
 * transaction) is streamed with at most two batches of 1000 commands
 * unanswered; the first error reply stops it with EMQ_EREMOTE (the target
 * then holds a partial copy). Then each queue's figures are read back.
 * `rep` is always filled (free it with emq_push_report_free).
 */
int emq_push(emq_db *db, emq_remote *to, const emq_push_options *o,
             emq_push_report *rep);
void emq_push_report_free(emq_push_report *rep);

/* --------------------------------------------------------------- pull */

typedef struct emq_pull_options {
    const char *const *queues; /**< pull these queues (NULL: every EchoMQ
                                    key of the server)                  */
    size_t n_queues;
    int unchecked;             /**< import without emq_check's rules     */
    emq_progress_fn progress;
    void *progress_ctx;
} emq_pull_options;

void emq_pull_options_init(emq_pull_options *o);

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
} emq_pull_report;

/**
 * Pull the server's EchoMQ keys (SCAN, then per key TYPE, PEXPIRETIME and
 * its value, 512 keys a round) into the file through a streaming import
 * (one write transaction, checked unless `unchecked`). The server's
 * {emq}:version must be absent or this wire (EMQ_EWIRE); the file must hold
 * no key of a pulled queue (EMQ_EEXIST, rep->conflict); a stream or other
 * key type is EMQ_ENOTSUP. `rep` is always filled.
 */
int emq_pull(emq_db *db, emq_remote *from, const emq_pull_options *o,
             emq_pull_report *rep);
void emq_pull_report_free(emq_pull_report *rep);

/* ------------------------------------------------------------- verify */

typedef struct emq_verify_options {
    const char *const *queues; /**< compare these queues (NULL: all)     */
    size_t n_queues;
    emq_progress_fn progress;
    void *progress_ctx;
} emq_verify_options;

void emq_verify_options_init(emq_verify_options *o);

typedef struct emq_verify_report {
    int equal;
    uint64_t file_keys, file_digest;
    uint64_t server_keys, server_digest;
    char *first;               /**< the first differing key in name order
                                    (NUL-terminated; bytes may be any)   */
    size_t first_len;
    char reason[200];          /**< "only in the file", "the contents
                                    differ", ...                         */
} emq_verify_report;

/**
 * Compare the file's keyspace (one read transaction) with the server's, key
 * by key in name order, by their digest records (doc/EXPORT.md §3). EMQ_OK
 * whether or not they are equal (see rep->equal); `rep` is always filled.
 */
int emq_verify(emq_db *db, emq_remote *against, const emq_verify_options *o,
               emq_verify_report *rep);
void emq_verify_report_free(emq_verify_report *rep);

#ifdef __cplusplus
}
#endif
#endif /* EMQLITE_REMOTE_H */
