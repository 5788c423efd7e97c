/*
 * remote.h — what the files of remote/ share: the remote (a transport and
 * what its server can do), failures as handle messages, the version fence
 * on a server, key names from SCAN, and the pipelined reading of keys into
 * elements (storage/types.h).
 *
 * Rules: remote/ sits beside api/: it reaches the file through the public
 * calls and engine/transfer/export.h, the keyspace's shapes through storage/types.h
 * and storage/transfer.h, and the server only through its transport, one
 * command and one reply at a time. Every failure sets the handle's message
 * and returns its code. Every keyed command is routed by its key's slot
 * (rm_route): on one server that is the remote itself, on a cluster the
 * node remote owning the slot (cluster.c). Commands whose replies are read
 * later are sent through a batch (batch.c) or the push's window
 * (window.c), which keep a copy to send again where a node redirects.
 */
#ifndef EMQ_REMOTE_INT_H
#define EMQ_REMOTE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"
#include "abi.h"
#include "emqlite_remote.h"
#include "db.h"
#include "types.h"

#define RM_VKEY EMQ_VERSION_KEY
#define RM_VKEY_LEN (sizeof RM_VKEY - 1)
#define RM_KEYBATCH 512 /* keys read per pipelined round */
#define RM_SLOTS 16384
#define RM_NOSLOT 0xFFFFFFFFu /* a command for one node, not routed     */
#define RM_MAX_REDIRECTS 16   /* MOVED/ASK in a row for one command     */
#define RM_TRYAGAIN_WAITS 60  /* TRYAGAIN waits (10 ms doubling to 1 s) */

/* What a node did in the current transfer (emq_node_report's figures). */
typedef struct rm_tally {
    uint64_t keys, commands, bytes_out, bytes_in;
    uint64_t moved, asked, tryagain;
    double first, last;    /* monotonic seconds; first 0: nothing sent  */
} rm_tally;

typedef struct rm_cluster rm_cluster;

struct emq_remote {
    emq_transport t;
    void *ctx;
    char name[256];
    char addr[256];   /* HOST:PORT as a cluster names this node ("")      */
    int pexpiretime;  /* PEXPIRETIME (Redis 7.0, Valkey 7.2)               */
    int hpexpiretime; /* HPEXPIRETIME (Redis 7.4, Valkey 9.0)              */
    int hpexpireat;
    int unlink_ok;
    rm_tally tally;
    int block;        /* a MULTI is open on this connection (window.c)    */
    uint64_t pending; /* commands sent whose replies are not read yet     */
    rm_cluster *cl;   /* the cluster r is the entry of; NULL: one server  */
    void *dial_own;   /* the dial context emq_remote_connect allocated    */
};

/* ------------------------------------------------------------ failures */

/** The connection failed: EMQ_EIO, "<name>: <what>: <transport's error>". */
int rm_io(emq_db *db, emq_remote *r, const char *what);
/** The server answered an error: EMQ_EREMOTE, "<name> refused: <err>
 *  (key K)"; key may be NULL. */
int rm_refused(emq_db *db, emq_remote *r, const char *err, size_t elen,
               const void *key, size_t klen);
/** The first error inside a reply (EXEC answers an array), or NULL. */
const emq_rreply *rm_error_in(const emq_rreply *r);

/* ------------------------------------------------------------ commands */

/** Send one command on this connection (its tally counts it). */
int rm_send(emq_remote *r, size_t argc, const char *const *argv,
            const size_t *lens);
/** Send NUL-terminated arguments. */
int rm_sendz(emq_remote *r, size_t argc, const char *const *argv);
int rm_recv(emq_remote *r, const emq_rreply **out);
void rm_release(emq_remote *r, const emq_rreply *rep);
/** Write what is queued on every connection of r (the transports'
 *  flush): NULL, or the connection that failed. */
emq_remote *rm_flush(emq_remote *r);
/** The key argument of a command (argv[1]; XGROUP's argv[2]), or NULL
 *  when it has none. */
const char *rm_cmd_key(size_t argc, const char *const *argv,
                       const size_t *lens, size_t *klen);

/* ------------------------------------------------------------- routing */

/** The connection owning `slot`: r for one server, the slot's primary on a
 *  cluster, or NULL when no node serves it (rm_noslot says so). */
emq_remote *rm_route(emq_remote *r, unsigned slot);
int rm_noslot(emq_db *db, emq_remote *r, unsigned slot);
/** The primaries (r alone for one server): rm_nodes_n of them. */
size_t rm_nodes_n(const emq_remote *r);
emq_remote *rm_node_at(emq_remote *r, size_t i);

enum { RM_REDIR_NONE, RM_REDIR_MOVED, RM_REDIR_ASK, RM_REDIR_TRYAGAIN };

/** A redirection in an error reply: the kind, and for MOVED/ASK the slot
 *  and the node's address (HOST:PORT, cap bytes). */
typedef struct rm_redir {
    int kind;
    unsigned slot;
    char addr[256];
} rm_redir;

/** The redirection `rep` is (RM_REDIR_NONE for any other reply). A
 *  MOVED/ASK naming no host ("MOVED 7 :7001") takes the host of `from`. */
int rm_redirect(const emq_rreply *rep, const emq_remote *from, rm_redir *out);

/**
 * Where to send again a command of `slot` that `from` redirected: for
 * MOVED the map is read again (unless *refreshed, which is then set: the
 * caller clears it per round) and the node named is taken (dialled when
 * new); for ASK the node named; for TRYAGAIN the slot's owner, after
 * waiting (wait(wctx, ms), NULL: a sleep) 10 ms doubling to 1 s. `tries`
 * counts from 1: MOVED/ASK in a row past RM_MAX_REDIRECTS, TRYAGAIN past
 * RM_TRYAGAIN_WAITS, are EMQ_EREMOTE. The redirection is counted in from's
 * tally. On one server any redirection is refused (EMQ_EREMOTE: the server
 * is a cluster node, to be connected to as one).
 */
int rm_redirect_to(emq_db *db, emq_remote *r, emq_remote *from,
                   const rm_redir *rd, unsigned slot, unsigned tries,
                   int *refreshed, void (*wait)(void *, unsigned), void *wctx,
                   emq_remote **to);
/** Read the map again if a MOVED left it stale and no connection could be
 *  asked then (call where nothing is in flight). */
int rm_refresh_stale(emq_db *db, emq_remote *r);
/** Free the cluster behind a seed (emq_remote_close). */
void rm_cluster_close(emq_remote *r);

/** Zero every node's tally (a transfer starts). */
void rm_tally_reset(emq_remote *r);
/** The nodes' tallies as reports (*out: emq_mem array of *n, names
 *  copied); EMQ_OK or EMQ_ENOMEM. */
int rm_tally_report(emq_remote *r, emq_node_report **out, size_t *n);
void rm_node_reports_free(emq_node_report *v, size_t n);
double rm_mono(void);

/* --------------------------------------------------------------- batch */

/**
 * Commands sent together and answered in order, each to its slot's node (or
 * to one named node); redirections are followed before the replies are
 * handed out, each redirected command sent again in the order added. The
 * commands are kept (RESP) until the batch is cleared.
 */
typedef struct rm_batch_cmd {
    size_t off, len;        /* its copy in `cmds` (clusters only)         */
    unsigned slot;          /* RM_NOSLOT: for `to` only                   */
    emq_remote *to;         /* where it was sent (last)                   */
    const emq_rreply *rep;  /* its reply, once read                       */
    int asking, again;      /* sent after ASKING; sent again, unread      */
    unsigned unread;        /* replies to come (ASKING's included)        */
    unsigned hops, waits;   /* redirections in a row; TRYAGAIN waits      */
} rm_batch_cmd;

typedef struct rm_batch {
    emq_remote *r;
    emq_buf cmds;
    rm_batch_cmd *c;
    size_t n, cap;
    void (*wait)(void *, unsigned); /* TRYAGAIN's pause (NULL: sleep)    */
    void *wctx;
    int fail;               /* the first failure while adding             */
    unsigned fail_slot;
    emq_remote *fail_node;
} rm_batch;

void rm_batch_init(rm_batch *b, emq_remote *r);
/** Add and send a command for the node of `slot` (RM_NOSLOT with `to`:
 *  that node). A failure is reported by rm_batch_run. */
void rm_batch_add(rm_batch *b, unsigned slot, emq_remote *to, size_t argc,
                  const char *const *argv, const size_t *lens);
/** A command of NUL-terminated arguments (at most 8), routed by its key
 *  (rm_cmd_key; none: to r). */
void rm_batch_addz(rm_batch *b, size_t argc, const char *const *argv);
/** Send what was added, read every reply, follow the redirections. The
 *  failure is reported (`what` names the step in an EMQ_EIO message). */
int rm_batch_run(emq_db *db, rm_batch *b, const char *what);
/** The reply of command i (after a successful run) and the node that gave
 *  it. */
const emq_rreply *rm_batch_reply(const rm_batch *b, size_t i);
emq_remote *rm_batch_node(const rm_batch *b, size_t i);
/** Release the replies (reading and dropping those still to come) and
 *  forget the commands (the memory is kept). */
void rm_batch_clear(rm_batch *b);
void rm_batch_free(rm_batch *b);

/** The server's {emq}:version (on a cluster, at the node owning its
 *  slot): *present 0 (absent) or 1 (an identity of the wire table, then
 *  in *wire; may be NULL); another value is EMQ_EWIRE. */
int rm_version(emq_db *db, emq_remote *r, int *present, const char **wire);
/** Claim an absent fence (PROTOCOL.md §5) with `wire`: SET NX, then read
 *  it back (*got: the identity the server then holds). */
int rm_version_claim(emq_db *db, emq_remote *r, const char *wire,
                     const char **got);

/* -------------------------------------------------------------- window */

/** The push's window (window.c): the stream's commands, many unanswered,
 *  each unit (one command, or one MULTI … EXEC block) sent again whole
 *  where a node redirects it. */
typedef struct rm_window rm_window;

/** A window on r; `wait` pauses before a TRYAGAIN is sent again (NULL: a
 *  sleep). EMQ_OK or EMQ_ENOMEM (*out is then NULL or still closable). */
int rm_win_open(emq_db *db, emq_remote *r, void (*wait)(void *, unsigned),
                void *wctx, rm_window **out);
void rm_win_close(rm_window *w);
/** Send one command of `slot` (inside an open block: to the block's
 *  connection); `newkey` marks the first command of a key (the node that
 *  applies it counts the key). */
int rm_win_cmd(rm_window *w, unsigned slot, size_t argc,
               const char *const *argv, const size_t *lens, int newkey);
/** Open a block at slot's node (MULTI) / close it (EXEC). */
int rm_win_multi(rm_window *w, unsigned slot);
int rm_win_exec(rm_window *w);
/** Read replies until at most `keep` commands are unanswered (0: every
 *  one, redirections settled). The first failure is kept and returned by
 *  every later call. */
int rm_win_drain(rm_window *w, uint64_t keep);
uint64_t rm_win_inflight(const rm_window *w);

/* --------------------------------------------------------------- names */

/** Names (byte strings), sorted and unique after rm_names_sort. */
typedef struct rm_names {
    emq_buf data;
    size_t *off;  /* pairs: offset, length */
    size_t n, cap;
    emq_bytes *v; /* after rm_names_sort */
    size_t nv;
} rm_names;

void rm_names_free(rm_names *l);
/** Add one name (rm_names_sort makes `v` again: the data may move).
 *  EMQ_OK or EMQ_ENOMEM. */
int rm_names_add(rm_names *l, const void *p, size_t n);
int rm_names_sort(rm_names *l);
/** SCAN with `match` on the one connection r, adding every name. */
int rm_scan(emq_db *db, emq_remote *r, const char *match, rm_names *out);
/** SCAN with `match` on every primary (r alone for one server). */
int rm_scan_all(emq_db *db, emq_remote *r, const char *match, rm_names *out);
/** The EchoMQ keys of the selection on every primary, sorted: every emq:…
 *  and {emq}:… key, or the version key and the keys of the listed (valid)
 *  queues. */
int rm_selection(emq_db *db, emq_remote *r, const char *const *q, size_t nq,
                 rm_names *out);

/* --------------------------------------------------------- reading keys */

/** Receives each key read: its row, absolute expiry (-1: none) and its
 *  elements (views into the replies, valid during the call). Returns
 *  EMQ_OK or a failure (with the message set). */
typedef int (*rm_visit_fn)(void *ctx, const emq_bytes *key,
                           const emq_typedef *t, int64_t expire,
                           emq_elem *e, size_t n);

/**
 * Read the named keys, RM_KEYBATCH at a time, in three pipelined rounds
 * (batches, each key at its slot's node): TYPE and PEXPIRETIME (PTTL added
 * to the wall clock on servers without it), the value by its row's read
 * command (a stream: XINFO STREAM key FULL COUNT 0, handed on as its one
 * opaque element, rm_xstream), and HPEXPIRETIME for the fields of types
 * whose elements expire where the server has it. Keys that vanish in between are skipped; a type
 * without a row is EMQ_ENOTSUP. Each key counts in the tally of the node
 * that answered its TYPE.
 */
int rm_read(emq_db *db, emq_remote *r, const emq_bytes *names, size_t n,
            rm_visit_fn fn, void *ctx, emq_progress_fn pg, void *pgctx,
            const char *what);

/**
 * A stream read from a server (xstream.c): from `v`, the reply to XINFO
 * STREAM <key> FULL COUNT 0, append to `cmds` the commands an export writes
 * for it (RESP; *ncmd their number) and to `body` the body of its digest
 * record. 0, -1 (a reply of another shape) or -2 (no memory).
 */
int rm_xstream(const emq_rreply *v, const void *key, size_t klen,
               emq_buf *cmds, emq_buf *body, uint64_t *ncmd);

/* -------------------------------------------------------------- resume */

/** What a resumed push (resume.c) found on the target: the file's keys by
 *  name with their record hashes, those the target holds equal, and the
 *  target's keys to delete before the stream (differing, or of a pushed
 *  queue and not in the file). */
typedef struct rm_resume {
    emq_buf names;            /* the file's names, concatenated            */
    struct rm_rkey { size_t off, len; uint64_t hash; int equal; } *k;
    size_t nk, cap;           /* in name order                             */
    rm_names del;             /* sorted after rm_resume_plan               */
    uint64_t equal, differ, extra; /* keys equal / differing / not in the
                                      file, on the target                 */
} rm_resume;

/**
 * Compare the file's keys of the export `eo` (its queues, its wire) with
 * the target's, key by key through their records' XXH3-64 (doc/EXPORT.md
 * §3): the file's from one digest walk, the target's built from the reads
 * of rm_read as verify builds them. `target` holds the target's keys of
 * the pushed queues (sorted); the file's other names are read too. Fills
 * `rs` (rm_resume_free it, also on failure).
 */
int rm_resume_plan(emq_db *db, emq_remote *r, const emq_export_options *eo,
                   const rm_names *target, rm_resume *rs, emq_progress_fn pg,
                   void *pgctx);
/** 1 when the target already holds key `key` equal to the file's. */
int rm_resume_equal(const rm_resume *rs, const void *key, size_t klen);
void rm_resume_free(rm_resume *rs);

/** Copy `n` bytes as a NUL-terminated string (emq_mem; NULL: no memory). */
char *rm_strndup(const void *p, size_t n);
/** The queue of an `emq:{q}:` key: 1 and q/qlen, or 0. */
int rm_key_queue(const void *key, size_t klen, const char **q, size_t *qlen);

#endif /* EMQ_REMOTE_INT_H */
