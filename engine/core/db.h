/*
 * db.h — the emq_db handle and the transition runner (internal to the engine).
 *
 * Owns: the handle struct (store, clock, node id, options, last message, node
 * lease), the one way a transition runs — `emq_db_run`: read NOW once, open
 * one store transaction, run the body, commit on success and roll back on any
 * negative result so the handle stays usable — and the small helpers every
 * transition shares (decimal rendering, token comparison, host-gate
 * messages, the queue keys of one call).
 *
 * Rules: a transition body never begins, commits or rolls back itself; it
 * returns a verdict (>= 0) or an EMQ_E* code, and sets a wire message with
 * emq_db_wire() when the code is a wire error. Host gates run before
 * emq_db_run (they touch nothing).
 */
#ifndef EMQ_DB_H
#define EMQ_DB_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"
#include "store.h"
#include "keys.h"
#include "plane.h"

#define EMQ_ERRMSG_MAX 512

struct emq_db {
    emq_store *st;           /* the typed keyspace                        */
    emq_clock_fn clock;      /* never NULL (the wall clock by default)    */
    void *clock_ctx;
    int node_id;             /* 0..1023                                   */
    emq_options opt;         /* as opened (clock fields mirror the above) */
    struct emq_plock *lease; /* the <path>-emqnode sidecar's open, or NULL */
    uint64_t reserved;       /* the node's persisted reservation (cell)   */
    uint64_t minted;         /* one past the highest cell this handle
                                minted, 0 before its first mint          */
    char errmsg[EMQ_ERRMSG_MAX];
    /* lifecycle events (events.c) */
    struct emq_sub *subs;    /* this handle's subscriptions              */
    int ev_dirty;            /* a publish ran since the last delivery    */
    int ev_depth;            /* > 0 while callbacks run                  */
    int64_t ev_keep;         /* retention (0: the defaults)              */
    int64_t ev_max_age;
    emq_sched sched;         /* the scheduling plane's state (plane.h)    */
    struct emq_hist *hist;   /* job history settings (ops/history.c), or
                                NULL until first used                   */
};

/** The store under a handle (tests, the golden replayer, tools). */
emq_store *emq_db_store(emq_db *db);

/** The job row's words, stored as tokens in every hash (jobrow.c); every
 *  store the engine opens, and any tool reading its hashes, passes it. */
extern const emq_hash_dict emq_jobrow_dict;

/** The wall clock (Unix ms), the default emq_clock_fn. */
int64_t emq_wall_clock(void *ctx);

/**
 * A transition body: runs inside the open transaction with the NOW read for
 * it. Returns a verdict (>= 0) or an EMQ_E* code (< 0).
 */
typedef int (*emq_tx_fn)(emq_db *db, emq_store *st, int64_t now, void *ctx);

/**
 * Run `fn` as one transition: read the clock once (NOW, also the store's
 * expiry clock), begin a write (write = 1) or read (write = 0) transaction,
 * run the body, then commit when it returned >= 0 or roll back when it
 * returned < 0. Sets the handle's message for every failure (a body that
 * set a wire message keeps it). Returns the body's result or the failure.
 */
int emq_db_run(emq_db *db, int write, emq_tx_fn fn, void *ctx);
/** emq_db_run in two halves, for a transaction that spans calls (the
 *  streaming import): begin reads NOW into *now; end commits when `rc` >= 0
 *  or rolls back, and returns `rc` or the commit's failure. */
int emq_db_tx_begin(emq_db *db, int write, int64_t *now);
int emq_db_tx_end(emq_db *db, int rc);

/** Clear the handle's message (start of every verb). */
void emq_db_clear(emq_db *db);
/** The start of every public call on a handle: EMQ_EINVAL for a NULL
 *  handle (no message can be set), otherwise the message cleared. */
int emq_db_enter(emq_db *db);
/** Set the message to `msg` verbatim and return `rc` (wire errors, gates). */
int emq_db_wire(emq_db *db, int rc, const char *msg);
/** Set the message to a sentence naming `rc`'s class plus `detail` (may be
 *  NULL or ""), and return `rc`. */
int emq_db_fail(emq_db *db, int rc, const char *detail);

/* ------------------------------------------------------- open-time pieces */

/**
 * The version fence (§5) in one transaction of its own; an absent stamp is
 * set to `wire` (NULL: EMQ_WIRE; an identity of the table). EMQ_OK, EMQ_EWIRE
 * (message names the found and the expected value; rolled back) or a store
 * failure; the message goes to err.
 */
int emq_fence_pass(emq_store *st, int readonly, const char *wire,
                   int64_t now, char *err, size_t errlen);
/** The wire table as one line for messages ("echomq:4.0.0 or ..."). */
void emq_wire_list(char *out, size_t cap);
/**
 * The fence as the store's open-time judge (emq_store_opts.judge, `ctx`
 * points to an int: the handle is read-only): EMQ_OK or EMQ_EWIRE.
 */
int emq_fence_judge(void *ctx, int type, const void *val, size_t len,
                    char *err, size_t errlen);
/**
 * Lease a node id for a handle on the store's file: `want` 0..1023 is
 * leased as given (EMQ_EBUSY when another live handle holds it), -1 leases
 * the first free one (see nodeid.c). *lease receives the sidecar's open
 * holding the lease (a byte lock of platform.h), or NULL; release it with
 * emq_node_release. A read-only handle never creates the sidecar.
 */
int emq_node_lease(emq_store *st, int want, int readonly, int *node,
                   struct emq_plock **lease, char *err, size_t errlen);
/** 1 when no handle but the one holding `lease` has a lease on the file. */
int emq_node_alone(struct emq_plock *lease);
void emq_node_release(struct emq_plock *lease);
/**
 * The mint reservation of `node` in the sidecar `fd` (8 bytes LE at
 * node * 8; absent = 0): every id minted under the node's lease has a cell
 * (ts << 12 | seq) below it. Read at lease time, written ahead of the cell
 * by emq_mint. EMQ_OK, EMQ_EIO or (write) EMQ_EFULL.
 */
int emq_node_reserve_read(int fd, int node, uint64_t *cell);
int emq_node_reserve_write(int fd, int node, uint64_t cell);

/* ------------------------------------------------------------ wire strings */

#define EMQ_MSG_KIND      "EMQKIND job id must be JOB-namespaced"
#define EMQ_MSG_STALE_CMP "EMQSTALE complete token mismatch"
#define EMQ_MSG_STALE_RTY "EMQSTALE retry token mismatch"
#define EMQ_MSG_STALE_GONE "EMQSTALE job gone"
#define EMQ_MSG_STALE_EXT "EMQSTALE extend token mismatch"

/* ------------------------------------------------------------- host gates */

/** GATE-Q: EMQ_OK, or EMQ_EQUEUE with the message set. */
int emq_gate_q(emq_db *db, const char *q);
/** GATE-ID: EMQ_OK, or EMQ_EID ("job_key requires a valid branded id"). */
int emq_gate_id(emq_db *db, const char *id);
/** GATE-G: EMQ_OK, or EMQ_EID ("a lane is named by a valid branded id"). */
int emq_gate_g(emq_db *db, const char *g);
/** Bytes gate: NULL with len > 0 is EMQ_EINVAL; len > max_payload is
 *  EMQ_ETOOBIG. */
int emq_gate_bytes(emq_db *db, const void *p, size_t len);

/* ---------------------------------------------------------------- helpers */
/* (Decimal rendering and parsing are the store's emq_fmt_i64 and
 * emq_parse_i64, so counters read and written agree byte-for-byte.) */

/** 1 when the stored bytes equal the decimal rendering of `token`. */
int emq_token_eq(const emq_buf *att, int64_t token);
/** A NOW-derived score: (double)a + (double)b, as the reference's Lua
 *  arithmetic computes it (no int64 overflow). */
double emq_score_add(int64_t a, int64_t b);
/** KIND(id): 1 when the first three bytes are "JOB". */
int emq_is_job_kind(const void *id, size_t len);

#endif /* EMQ_DB_H */
