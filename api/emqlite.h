/*
 * emqlite.h — the public C API of emqlite, the EchoMQ job-queue protocol
 * (wire "echomq:4.0.0") as an in-process engine over one SQLite file.
 *
 * Every verb below is one atomic transition: it runs inside one SQLite write
 * transaction (BEGIN IMMEDIATE ... COMMIT), reads the clock at most once, and
 * either applies fully or not at all. The keys, fields, replies and error
 * strings it produces are byte-identical to the EchoMQ Valkey wire, so an
 * export of the file replays into Valkey and any EchoMQ runtime continues
 * from it.
 *
 * A short example:
 *
 *     emq_db *db;
 *     emq_options o;
 *     emq_options_init(&o);
 *     if (emq_open("jobs.db", &o, &db) != EMQ_OK) { ... emq_strerror(rc) ... }
 *     char id[EMQ_ID_SIZE];
 *     emq_mint(db, "JOB", id);
 *     emq_enqueue(db, "mail", id, "hello", 5);        // EMQ_ENQUEUED
 *     emq_job job;
 *     if (emq_claim(db, "mail", 30000, &job) == EMQ_OK) {
 *         ... work on job.payload, job.payload_len ...
 *         emq_complete(db, "mail", job.id, job.attempts);   // EMQ_OK
 *         emq_job_clear(&job);
 *     }
 *     emq_close(db);
 *
 * Return codes. Every call returns an int: 0 (EMQ_OK) or a positive verdict
 * for a successful transition, a negative EMQ_E* code for a failure. Wire
 * error replies (EMQKIND, EMQSTALE, WRONGTYPE) are negative codes too; after
 * any negative return emq_errmsg() holds the message, which for wire errors is
 * the exact wire string ("EMQSTALE complete token mismatch"). A NULL handle
 * makes every call return EMQ_EINVAL (and emq_close ignore it).
 *
 * Identifiers. Queue names are NUL-terminated C strings (the protocol's queue
 * alphabet excludes NUL). Job ids are branded ids: exactly 14 bytes, passed as
 * NUL-terminated strings of length 14; EMQ_ID_SIZE (15) bytes hold one with
 * its terminator. Payloads and error texts are (pointer, length) pairs and are
 * binary-safe.
 *
 * Threads and processes. A handle is not thread-safe: use one handle per
 * thread. Any number of handles, in one process or in many, may open the same
 * file; they serialise on SQLite's write lock (waiting up to the busy timeout,
 * then returning EMQ_EBUSY) and never mint the same id (see emq_open).
 */
#ifndef EMQLITE_H
#define EMQLITE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ version */

#define EMQLITE_VERSION "0.1.0"
/** The wire identity this library speaks, stored at "{emq}:version". */
#define EMQ_WIRE "echomq:4.0.0"

/** The library version string (EMQLITE_VERSION of the built library). */
const char *emq_version(void);
/** The version of the SQLite library linked at run time. */
const char *emq_sqlite_version(void);

/* ------------------------------------------------------------ result codes */

/* Successful verdicts (>= 0). */
#define EMQ_OK         0  /**< done (complete: ok; extend: ok)              */
#define EMQ_ENQUEUED   1  /**< enqueue: the job was admitted                */
#define EMQ_DUPLICATE  2  /**< enqueue: a row with that id exists; unchanged */
#define EMQ_SCHEDULED  3  /**< enqueue_at/in admitted; retry rescheduled     */
#define EMQ_DEAD       4  /**< retry: the job reached its cap, dead-lettered */
#define EMQ_EMPTY      5  /**< claim: nothing to claim (or queue paused)     */
#define EMQ_GONE       6  /**< the job row (or the record) does not exist   */
#define EMQ_MORE       7  /**< obliterate: the budget ran out, call again    */
#define EMQ_NOOP       8  /**< reassign: the job is already in that lane     */
#define EMQ_NOTPENDING 9  /**< reassign: the job is not waiting in its lane  */
#define EMQ_EXISTS    10  /**< repeat register: the registration exists      */
#define EMQ_ABSENT    11  /**< cancel / advance / a cache read: nothing there */

/* Failures (< 0), one reserved range. */
#define EMQ_EKIND      (-30001) /**< wire EMQKIND: id is not JOB-namespaced       */
#define EMQ_ESTALE     (-30002) /**< wire EMQSTALE: token mismatch or job gone    */
#define EMQ_EWRONGTYPE (-30003) /**< wire WRONGTYPE: a key holds another type     */
#define EMQ_EWIRE      (-30004) /**< version fence refused: another wire identity */
#define EMQ_EQUEUE     (-30005) /**< host gate: invalid queue name                */
#define EMQ_EID        (-30006) /**< host gate: not a valid branded id            */
#define EMQ_EINVAL     (-30007) /**< host gate: bad argument (NULL, lease <= 0...) */
#define EMQ_EBUSY      (-30008) /**< the file stayed locked past the busy timeout */
#define EMQ_EIO        (-30009) /**< an I/O error; nothing is visible — but if it
                                     hit the commit's own sync, the transition
                                     may resurface after a power loss (see
                                     doc/RELIABILITY.md)                     */
#define EMQ_EFULL      (-30010) /**< disk or quota full; nothing was applied      */
#define EMQ_ENOMEM     (-30011) /**< out of memory; nothing was applied           */
#define EMQ_ENOTEMQ    (-30012) /**< the file is not an emqlite file (untouched)  */
#define EMQ_ESCHEMA    (-30013) /**< the file has a newer schema (untouched)      */
#define EMQ_ECORRUPT   (-30014) /**< the file is damaged                          */
#define EMQ_ETOOBIG    (-30015) /**< a payload exceeds the configured maximum     */
#define EMQ_EREADONLY  (-30016) /**< the file or its directory is read-only       */
#define EMQ_ECANTOPEN  (-30017) /**< the file cannot be opened                    */
#define EMQ_EPROTO     (-30018) /**< malformed input (an import stream, a number)  */
#define EMQ_EINTERNAL  (-30019) /**< an unexpected SQLite error; see emq_errmsg   */
#define EMQ_EEMPTY     (-30020) /**< host gate: empty batch (empty_pipeline)      */
#define EMQ_ENOTSUP    (-30021) /**< the feature was not built in                 */
#define EMQ_ELOCKED    (-30022) /**< wire EMQLOCK: the job is locked              */
#define EMQ_ENOTPAUSED (-30023) /**< wire EMQSTATE not paused (obliterate)        */
#define EMQ_EACTIVE    (-30024) /**< wire EMQSTATE active jobs present            */
#define EMQ_ENOTDEAD   (-30025) /**< wire EMQSTATE not dead (reprocess)           */
#define EMQ_ERATE      (-30026) /**< wire EMQRATE: at the concurrency ceiling     */
#define EMQ_EREFUSED   (-30027) /**< a host refusal of PROTOCOL.md Appendix A.3
                                     (unknown_state(name), flow_too_deep(8),
                                     flow_cycle(id), ...): emq_errmsg() holds
                                     its exact text; nothing was touched    */
#define EMQ_ENONMONO   (-30028) /**< stream append: the id is not above the top */
#define EMQ_EENGINE    (-30029) /**< another engine error reply (ERR ...,
                                     BUSYGROUP, NOGROUP), verbatim          */

/** A static English description of a result code. Never NULL. */
const char *emq_strerror(int rc);

/* ------------------------------------------------------------- branded ids */

#define EMQ_ID_LEN  14   /**< bytes in a branded id                 */
#define EMQ_ID_SIZE 15   /**< bytes to hold an id and its NUL        */
/** Unix ms of snowflake 0 (2024-01-01T00:00:00Z). */
#define EMQ_EPOCH_MS INT64_C(1704067200000)

/**
 * Encode a branded id: namespace `ns` (3 bytes, A-Z) and snowflake `snow`
 * (0 .. 2^63-1) into `out` (EMQ_ID_SIZE bytes, NUL-terminated).
 * Returns EMQ_OK or EMQ_EID.
 */
int emq_id_encode(const char *ns, uint64_t snow, char out[EMQ_ID_SIZE]);

/**
 * Parse `len` bytes as a branded id. On success stores the namespace (3 bytes
 * and a NUL) in `ns` and the snowflake in `snow` (either may be NULL) and
 * returns EMQ_OK; otherwise EMQ_EID. Checks, in order: length, namespace,
 * charset, range. Nothing is normalised.
 */
int emq_id_parse(const char *id, size_t len, char ns[4], uint64_t *snow);

/** 1 when the NUL-terminated `id` is a valid branded id, else 0. */
int emq_id_valid(const char *id);

/* -------------------------------------------------------------- key grammar */

/** The cluster slot of a key: CRC16-XMODEM of its hash tag, mod 16384. */
unsigned emq_slot(const void *key, size_t len);

/** 1 when `q` is a valid queue name ([A-Za-z0-9._-]{1,128}, not "emq"). */
int emq_queue_valid(const char *q);

/* ------------------------------------------------------------------ memory */

/**
 * The allocator emqlite's own heap memory comes from: handles, buffers, and
 * every result handed to the caller (job payloads, fields, queue names).
 * `ctx` is passed to each function. `realloc_fn(ctx, NULL, n)` must behave
 * as `malloc_fn(ctx, n)`. A function returning NULL makes the call that
 * needed the memory fail with EMQ_ENOMEM, with nothing applied. Sizes
 * asked for are never 0. SQLite's allocations are not routed here; give
 * SQLite its own with sqlite3_config(SQLITE_CONFIG_MALLOC).
 */
typedef struct emq_allocator {
    void *(*malloc_fn)(void *ctx, size_t n);
    void *(*realloc_fn)(void *ctx, void *p, size_t n);
    void (*free_fn)(void *ctx, void *p);
    void *ctx;
} emq_allocator;

/**
 * Install allocator `a` (copied) for the whole process; NULL restores
 * libc's malloc, realloc and free. Call it while no handle is open and no
 * other thread is inside emqlite, and after freeing every result the
 * previous allocator made. Returns EMQ_OK, or EMQ_EINVAL when a function
 * pointer is NULL or a handle is open (the allocator is then unchanged).
 */
int emq_set_allocator(const emq_allocator *a);

/* ------------------------------------------------------------------ handle */

typedef struct emq_db emq_db;

/**
 * A clock: returns the current time in Unix milliseconds. `ctx` is the
 * pointer given with it. Install your own to drive leases, schedules and
 * reaps deterministically in tests (no sleeps): every transition reads it
 * exactly once, inside its transaction.
 */
typedef int64_t (*emq_clock_fn)(void *ctx);

#define EMQ_SYNC_NORMAL 1 /**< WAL + synchronous=NORMAL (default)           */
#define EMQ_SYNC_FULL   2 /**< WAL + synchronous=FULL: every commit is synced */

/** Open options; initialise with emq_options_init() and change fields. */
typedef struct emq_options {
    int synchronous;      /**< EMQ_SYNC_NORMAL (default) or EMQ_SYNC_FULL   */
    int busy_timeout_ms;  /**< wait this long for the write lock (5000)      */
    int node_id;          /**< 0..1023, or -1 (default) to lease one from the
                               file: distinct live handles never share one   */
    emq_clock_fn clock;   /**< NULL (default): the real wall clock           */
    void *clock_ctx;      /**< passed to `clock`                             */
    int exclusive;        /**< 1: locking_mode=EXCLUSIVE, one process only   */
    int readonly;         /**< 1: open read-only (no fence claim, no writes) */
    uint64_t max_payload; /**< largest payload accepted (512 MiB)           */
    int checkpoint_frames;/**< run a RESTART checkpoint once the WAL holds this
                               many frames after a commit (1000; 0 = never,
                               call emq_checkpoint yourself)                */
} emq_options;

/** Fill `o` with the defaults documented on each field. */
void emq_options_init(emq_options *o);

/**
 * Open (creating if absent) the emqlite file at `path` ("" or ":memory:" for
 * a private in-memory database) and pass the version fence: a fresh file is
 * stamped "echomq:4.0.0"; a file stamped with anything else is refused with
 * EMQ_EWIRE and left untouched. A file that is not emqlite's returns
 * EMQ_ENOTEMQ, a newer schema EMQ_ESCHEMA; neither is modified.
 * `opt` may be NULL for the defaults. On success `*out` is a new handle, to be
 * released with emq_close(). On failure `*out` is NULL; when `errbuf` is not
 * NULL the message (naming both wire values for EMQ_EWIRE) is copied there.
 */
int emq_open_ex(const char *path, const emq_options *opt, emq_db **out,
                char *errbuf, size_t errlen);
/** emq_open_ex() without an error buffer. */
int emq_open(const char *path, const emq_options *opt, emq_db **out);

/** Close a handle (NULL is ignored). Releases its node id lease. */
void emq_close(emq_db *db);

/**
 * The message of the last failure on this handle: for wire errors the exact
 * wire string, otherwise a sentence naming the class. Owned by the handle,
 * valid until the next call on it. Never NULL ("" when none).
 */
const char *emq_errmsg(const emq_db *db);

/** The node id (0..1023) this handle mints with. */
int emq_node_id(const emq_db *db);

/** Replace the clock (NULL restores the wall clock). */
void emq_set_clock(emq_db *db, emq_clock_fn clock, void *ctx);

/** Read the handle's clock once (Unix ms). */
int64_t emq_now(emq_db *db);

/**
 * Mint a fresh branded id in namespace `ns` ("JOB" for jobs) into `out`.
 * Ids minted by one handle strictly increase, through clock regressions and
 * bursts beyond 4096 per millisecond; handles with distinct node ids never
 * collide. On a file they also stay above every id minted earlier with the
 * same node id, by a handle that closed or a process that died (a
 * reservation kept in the node-id sidecar, doc/IDS.md). Returns EMQ_OK,
 * EMQ_EID (bad namespace), or EMQ_EIO / EMQ_EFULL when that reservation
 * cannot be written (no id is returned).
 */
int emq_mint(emq_db *db, const char *ns, char out[EMQ_ID_SIZE]);

/**
 * Run a WAL checkpoint in RESTART mode (it takes the write lock, so it never
 * races a commit). Returns EMQ_OK, EMQ_EBUSY or an I/O code.
 */
int emq_checkpoint(emq_db *db);

/* ------------------------------------------------------------ the core queue */

/** A claimed job. Owned by the caller; release with emq_job_clear(). */
typedef struct emq_job {
    char id[EMQ_ID_SIZE];   /**< the branded id                              */
    int64_t attempts;       /**< the fencing token: present it to complete,
                                 retry and extend                           */
    unsigned char *payload; /**< the payload bytes, NUL-terminated for
                                 convenience (not counted in payload_len);
                                 NULL when the row had no payload            */
    size_t payload_len;
} emq_job;

/** Free the payload of `job` and zero it. */
void emq_job_clear(emq_job *job);

/**
 * T1.1 enqueue: admit job `id` with `payload` into queue `q`'s pending set.
 * Returns EMQ_ENQUEUED; EMQ_DUPLICATE when a row `id` exists (nothing
 * changes, the first payload stands); EMQ_EKIND when `id` is well-formed but
 * not JOB-namespaced. Host gates: EMQ_EQUEUE, EMQ_EID, EMQ_ETOOBIG.
 */
int emq_enqueue(emq_db *db, const char *q, const char *id,
                const void *payload, size_t len);

/** One item of emq_enqueue_many(). */
typedef struct emq_item {
    const char *id;
    const void *payload;
    size_t len;
} emq_item;

/**
 * T1.2 enqueue_many: enqueue `n` items in input order in one transaction.
 * Every id is gated before any item runs; n == 0 is EMQ_EEMPTY. On EMQ_OK
 * `verdicts[i]` holds EMQ_ENQUEUED, EMQ_DUPLICATE or EMQ_EKIND per item.
 */
int emq_enqueue_many(emq_db *db, const char *q, const emq_item *items,
                     size_t n, int *verdicts);

/**
 * T1.3 enqueue_at: admit `id` scheduled at absolute Unix ms `run_at_ms`.
 * Returns EMQ_SCHEDULED, EMQ_DUPLICATE or EMQ_EKIND.
 */
int emq_enqueue_at(emq_db *db, const char *q, const char *id,
                   const void *payload, size_t len, int64_t run_at_ms);

/** T1.3 enqueue_in: as emq_enqueue_at at NOW + `delay_ms` (>= 0). */
int emq_enqueue_in(emq_db *db, const char *q, const char *id,
                   const void *payload, size_t len, int64_t delay_ms);

/**
 * T1.4 claim: pop the oldest pending job, increment its attempts (the new
 * token), mark it active and lease it until NOW + `lease_ms` (> 0).
 * Returns EMQ_OK with `*job` filled (release with emq_job_clear), or
 * EMQ_EMPTY when nothing is pending or the queue is paused.
 */
int emq_claim(emq_db *db, const char *q, int64_t lease_ms, emq_job *job);

/**
 * T1.5 complete: with the current token, delete the row, count the
 * completion and release the job from active (or pending). Returns EMQ_OK,
 * EMQ_GONE (no row) or EMQ_ESTALE ("EMQSTALE complete token mismatch").
 */
int emq_complete(emq_db *db, const char *q, const char *id, int64_t token);

/**
 * T1.5 complete with an explicit `result` (`len` bytes, binary-safe; may be
 * empty): as emq_complete, but the value recorded for a flow parent — the
 * child's field of the parent's `processed` hash (same queue) or the result
 * of the COMPLETE outbox entry (cross queue) — is `result` instead of the
 * job's own id. `result` NULL with `len` 0 is emq_complete. Returns EMQ_OK,
 * EMQ_GONE or EMQ_ESTALE ("EMQSTALE complete token mismatch"); host gates:
 * EMQ_EQUEUE, EMQ_EID, EMQ_EINVAL (NULL with len > 0), EMQ_ETOOBIG.
 */
int emq_complete_result(emq_db *db, const char *q, const char *id,
                        int64_t token, const void *result, size_t len);

/**
 * T1.6 retry: with the current token, record `error` as last_error and either
 * reschedule the job at NOW + `delay_ms` (EMQ_SCHEDULED) or, when attempts
 * >= `max_attempts`, dead-letter it (EMQ_DEAD). EMQ_ESTALE for a token
 * mismatch ("EMQSTALE retry token mismatch") or a missing row
 * ("EMQSTALE job gone").
 */
int emq_retry(emq_db *db, const char *q, const char *id, int64_t token,
              int64_t delay_ms, int64_t max_attempts,
              const void *error, size_t error_len);

/**
 * T1.7 promote: move up to `batch` (> 0) due scheduled jobs (run-at <= NOW)
 * to pending. Stores the number moved in `*count` (may be NULL).
 */
int emq_promote(emq_db *db, const char *q, int64_t batch, int64_t *count);

/**
 * T1.8 reap: return up to 100 jobs whose lease lapsed (deadline <= NOW) to
 * pending. Stores the number reaped in `*count` (may be NULL).
 */
int emq_reap(emq_db *db, const char *q, int64_t *count);

/**
 * T1.9 browse: the newest `n` (> 0) pending ids, newest first, into `ids`
 * (room for n ids); the number written goes to `*count`.
 */
int emq_browse(emq_db *db, const char *q, size_t n, char (*ids)[EMQ_ID_SIZE],
               size_t *count);

/** T1.10 pending_size: the number of pending jobs, into `*size`. */
int emq_pending_size(emq_db *db, const char *q, int64_t *size);

/**
 * T1.11 extend_lock: with the current token, set the job's lease to
 * NOW + `lease_ms` (inserting it into active if absent). Returns EMQ_OK,
 * EMQ_GONE or EMQ_ESTALE ("EMQSTALE extend token mismatch").
 */
int emq_extend_lock(emq_db *db, const char *q, const char *id, int64_t token,
                    int64_t lease_ms);

/**
 * T1.12 extend_locks: extend every (ids[i], tokens[i]) whose token matches,
 * all to one deadline NOW + `lease_ms`. `failed[i]` is set to 1 for each pair
 * not extended (missing row or token mismatch), else 0; `*nfailed` (may be
 * NULL) gets their count. n may be 0.
 */
int emq_extend_locks(emq_db *db, const char *q, size_t n,
                     const char *const *ids, const int64_t *tokens,
                     int64_t lease_ms, int *failed, size_t *nfailed);

/** T2.1 pause: set field `paused` of the queue's meta hash; claims answer
 *  EMQ_EMPTY while it is present. */
int emq_pause(emq_db *db, const char *q);
/** T2.1 resume: delete the `paused` field. */
int emq_resume(emq_db *db, const char *q);

/* ------------------------------------------------------------------- reads */

/** One field of a job row, as returned by emq_job_get(). */
typedef struct emq_field {
    char *name;  size_t name_len;   /**< NUL-terminated */
    char *value; size_t value_len;  /**< NUL-terminated */
} emq_field;

/**
 * Read job `id`'s row: `*fields` receives an array of `*n` fields in
 * stored order (free with emq_fields_free). Returns EMQ_OK, or EMQ_GONE when
 * no row exists.
 */
int emq_job_get(emq_db *db, const char *q, const char *id,
                emq_field **fields, size_t *n);
void emq_fields_free(emq_field *fields, size_t n);

/** Per-queue figures (emq_stats). */
typedef struct emq_stats {
    int64_t pending, active, scheduled, dead; /**< set cardinalities     */
    int64_t completed, failed;                /**< metrics counters      */
    int paused;                               /**< meta.paused present   */
} emq_stats;

/** Read the figures of queue `q` in one read transaction. */
int emq_stats_get(emq_db *db, const char *q, emq_stats *st);

/**
 * List the queues that have keys in the file, in byte order. `*queues`
 * receives an array of `*n` names; free with
 * emq_queues_free.
 */
int emq_queues(emq_db *db, char ***queues, size_t *n);
void emq_queues_free(char **queues, size_t n);

/** Free memory the library returned (not a job: see emq_job_clear). */
void emq_free(void *p);

/* ----------------------------------------------------------------- streams */

/*
 * Tier 5 streams (PROTOCOL.md §6.5, T5.1-T5.7): the stream of queue `q`
 * named `name` is the key "emq:{q}:stream:<name>" (a Valkey stream). A
 * stream name is 1..255 bytes without NUL or ':' (D-17); group and consumer
 * names and entry ids are C strings. A field list is `nfv` byte strings,
 * alternating name and value: fv[i] of fvlen[i] bytes (fvlen may be NULL
 * for NUL-terminated strings); nfv must be even. Records are appended under
 * entry ids derived from EVT branded ids: "<unix ms>-<low 22 bits>", the
 * record's first field being `id` with the branded id as its value.
 *
 * Results: the engine's error replies pass through verbatim in emq_errmsg:
 * EMQ_ENONMONO for "ERR The ID specified in XADD is equal or smaller than
 * the target stream top item", EMQ_EWRONGTYPE for WRONGTYPE, EMQ_EENGINE
 * for every other one (BUSYGROUP, NOGROUP, ERR ...). Host refusals (kind,
 * malformed, inverted window) are EMQ_EREFUSED with emq_errmsg holding the
 * refusal's name, and touch nothing. Outputs are owned by the caller.
 */

/** Bytes to hold an entry id "<ms>-<seq>" and its NUL. */
#define EMQ_XID_SIZE 42

/** One stream entry as a read returns it. */
typedef struct emq_stream_entry {
    char xid[EMQ_XID_SIZE];  /**< the entry id                              */
    char id[EMQ_ID_SIZE];    /**< read / read_window / read_since: the
                                  record's branded id (the entry's first `id`
                                  field), "" when the entry has none      */
    emq_field *fields;       /**< the raw forms (range, group reads, claims):
                                  every field in order; the read forms: the
                                  fields other than `id`, each name once with
                                  its first value                          */
    size_t nfields;
    int gone;                /**< a pending entry whose stream entry was
                                  trimmed or deleted (no fields)          */
} emq_stream_entry;

/** Free `n` entries returned by a stream call (NULL is ignored). */
void emq_stream_entries_free(emq_stream_entry *e, size_t n);

/**
 * T5.2 append: mint an EVT id from the handle's clock (HOST-NOW) and append
 * the record [id, <id>, fields...] under entry_id(id). `id_out` (may be
 * NULL) receives the id. Returns EMQ_OK, EMQ_ENONMONO (a record at or
 * above it exists; nothing written), EMQ_EWRONGTYPE, or a host gate.
 */
int emq_stream_append(emq_db *db, const char *q, const char *name,
                      const void *const *fv, const size_t *fvlen, size_t nfv,
                      char id_out[EMQ_ID_SIZE]);

/**
 * T5.2 append_id: append the record under the given branded `id`. Returns
 * as emq_stream_append, and EMQ_EREFUSED "malformed" (not a branded id) or
 * "kind" (not EVT) before any store access.
 */
int emq_stream_append_id(emq_db *db, const char *q, const char *name,
                         const char *id, const void *const *fv,
                         const size_t *fvlen, size_t nfv);

/**
 * T5.2 / D-15 append_batch: mint one id per record (in order) and append
 * each as append_id does, one transition each (not atomic as a set).
 * Record i has nfv[i] byte strings, taken in turn from fv/fvlen. `ids`
 * (room for nrec) receives every minted id, even for records the engine
 * refused; `outcomes` (may be NULL, room for nrec) each append's result.
 * Returns EMQ_OK once every record was tried, EMQ_EEMPTY for nrec == 0, or
 * the failure (I/O, memory) that ended the batch.
 */
int emq_stream_append_batch(emq_db *db, const char *q, const char *name,
                            size_t nrec, const size_t *nfv,
                            const void *const *fv, const size_t *fvlen,
                            char (*ids)[EMQ_ID_SIZE], int *outcomes);

/**
 * STREAM-ADD, the engine primitive: XADD under the explicit entry id `xid`
 * ("<ms>-<seq>", "<ms>-*" or "*" for one from NOW). `xid_out` (may be
 * NULL) receives the entry id. Returns EMQ_OK, EMQ_ENONMONO, EMQ_EENGINE
 * ("ERR The ID specified in XADD must be greater than 0-0", ...),
 * EMQ_EWRONGTYPE.
 */
int emq_stream_add(emq_db *db, const char *q, const char *name,
                   const char *xid, const void *const *fv,
                   const size_t *fvlen, size_t nfv,
                   char xid_out[EMQ_XID_SIZE]);

/**
 * The raw range read (XRANGE from..to, "-"/"+" the open ends, "(" an
 * exclusive bound), at most `count` entries (< 0: no limit): `*e` receives
 * `*n` entries with xid and fields. EMQ_OK (n may be 0).
 */
int emq_stream_range(emq_db *db, const char *q, const char *name,
                     const char *from, const char *to, int64_t count,
                     emq_stream_entry **e, size_t *n);

/** The number of entries of the stream (0 when it does not exist). */
int emq_stream_len(emq_db *db, const char *q, const char *name,
                   int64_t *len);

/** T5.3 read: as emq_stream_range (from/to NULL: "-"/"+"), each entry
 *  with its record id in `id` and its other fields. */
int emq_stream_read(emq_db *db, const char *q, const char *name,
                    const char *from, const char *to, int64_t count,
                    emq_stream_entry **e, size_t *n);

/** T5.3 read_window: the records minted in [t0_ms, t1_ms] (Unix ms, ms
 *  precision). EMQ_EREFUSED "inverted window" when t1_ms < t0_ms. */
int emq_stream_read_window(emq_db *db, const char *q, const char *name,
                           int64_t t0_ms, int64_t t1_ms, int64_t count,
                           emq_stream_entry **e, size_t *n);

/** T5.3 read_since: the records minted at or after t0_ms. */
int emq_stream_read_since(emq_db *db, const char *q, const char *name,
                          int64_t t0_ms, int64_t count, emq_stream_entry **e,
                          size_t *n);

#define EMQ_TRIM_MAXLEN 0 /**< keep at most `value` entries               */
#define EMQ_TRIM_MINID  1 /**< remove the entries minted before `value` ms */

/**
 * T5.4 trim: EMQ_TRIM_MAXLEN keeps the newest `value` (>= 0) entries,
 * EMQ_TRIM_MINID removes the entries below "<value>-0". Not `exact`: only
 * whole leading blocks of 100 entries the exact trim would remove (D-16).
 * `*removed` (may be NULL) receives the count. The stream's last id,
 * max-deleted id and key stay.
 */
int emq_stream_trim(emq_db *db, const char *q, const char *name, int kind,
                    int64_t value, int exact, int64_t *removed);

/** T5.5 the archive watermark cache "emq:{q}:stream:<name>:archived":
 *  put (EMQ_OK), get (EMQ_OK with *w, *wlen to free with emq_free; or
 *  EMQ_ABSENT), clear (EMQ_OK when it existed, else EMQ_ABSENT). */
int emq_stream_put_archived(emq_db *db, const char *q, const char *name,
                            const void *w, size_t wlen);
int emq_stream_get_archived(emq_db *db, const char *q, const char *name,
                            char **w, size_t *wlen);
int emq_stream_clear_archived(emq_db *db, const char *q, const char *name);

/**
 * T5.6 GROUP-CREATE: create `group` with its last-delivered id at `start`
 * ("$": the stream's last id, "0": the head); `mkstream` creates an absent
 * stream empty. EMQ_OK, or EMQ_EENGINE ("BUSYGROUP Consumer Group name
 * already exists", "ERR The XGROUP subcommand requires the key to exist.
 * ...").
 */
int emq_stream_group_create(emq_db *db, const char *q, const char *name,
                            const char *group, const char *start,
                            int mkstream);

/**
 * T5.6 READ-GROUP as `consumer` (created if new): id ">" delivers up to
 * `count` (<= 0: all) new entries, recording each as pending; any other id
 * replays the consumer's own pending entries above it (`gone` set for those
 * whose entry was trimmed). `block_ms` >= 0 waits that long (0: without a
 * bound) for new entries when ">" finds none; < 0 does not wait. Returns
 * EMQ_OK with `*n` entries, EMQ_EMPTY (">" found nothing), or EMQ_EENGINE
 * ("NOGROUP No such key ...").
 */
int emq_stream_group_read(emq_db *db, const char *q, const char *name,
                          const char *group, const char *consumer,
                          const char *id, int64_t count, int64_t block_ms,
                          emq_stream_entry **e, size_t *n);

/** T5.6 ACK of `n` (>= 1) entry ids: `*acked` (may be NULL) receives how
 *  many were pending. */
int emq_stream_ack(emq_db *db, const char *q, const char *name,
                   const char *group, const char *const *xids, size_t n,
                   int64_t *acked);

/**
 * T5.6 AUTOCLAIM for `consumer` (created if new): the pending entries idle
 * for at least `min_idle_ms`, scanned from `start`, at most `count` (> 0;
 * <= 0: 100). `next` (may be NULL) receives the cursor ("0-0" at the end),
 * `*e`/`*n` the claimed entries, `*deleted`/`*ndeleted` (may be NULL) the
 * pending entries dropped because their stream entry was gone (xid only).
 */
int emq_stream_autoclaim(emq_db *db, const char *q, const char *name,
                         const char *group, const char *consumer,
                         int64_t min_idle_ms, const char *start,
                         int64_t count, char next[EMQ_XID_SIZE],
                         emq_stream_entry **e, size_t *n,
                         emq_stream_entry **deleted, size_t *ndeleted);

/** One pending entry of emq_stream_pending_range(). */
typedef struct emq_stream_pending {
    char xid[EMQ_XID_SIZE];
    char *consumer;         /**< NUL-terminated */
    size_t consumer_len;
    int64_t idle_ms;        /**< NOW - its delivery time */
    int64_t deliveries;     /**< its delivery count      */
} emq_stream_pending;
void emq_stream_pending_free(emq_stream_pending *p, size_t n);

/** T5.6 PENDING-RANGE: the group's pending entries start..end, at most
 *  `count`. */
int emq_stream_pending_range(emq_db *db, const char *q, const char *name,
                             const char *group, const char *start,
                             const char *end, int64_t count,
                             emq_stream_pending **p, size_t *n);

/**
 * A T5.7 handler: settle entry `e` on its `attempts`-th delivery. Return 0
 * for success (the entry is acked), nonzero for failure (it stays pending
 * and is delivered again later). Handlers must be idempotent.
 */
typedef int (*emq_stream_handler)(void *ctx, const emq_stream_entry *e,
                                  int64_t attempts);

/** Options of emq_stream_consume(); emq_consumer_options_init() fills
 *  the defaults of PROTOCOL.md Appendix C. */
typedef struct emq_consumer_options {
    int64_t min_idle_ms;   /**< autoclaim threshold (30000)                */
    int64_t beat_ms;       /**< the blocking read's wait (1000)            */
    int64_t count;         /**< entries per read and autoclaim (100)       */
    int64_t rounds;        /**< autoclaim + read rounds to run (0: until
                                *stop is set)                             */
    volatile int *stop;    /**< NULL, or a flag ending the loop when set   */
} emq_consumer_options;
void emq_consumer_options_init(emq_consumer_options *o);

/**
 * T5.7 the stream consumer: `start` "new" (group at "$") or "head" (at
 * "0"); GROUP-CREATE with mkstream, tolerating only BUSYGROUP; drain the
 * consumer's own pending entries (READ-GROUP from "0", then on from the
 * last one returned, until a read returns nothing), settling each; then
 * per round: AUTOCLAIM (min_idle_ms, from "0", count) and settle what it
 * returns, READ-GROUP ">" (count, blocking up to beat_ms) and settle.
 * Settling: attempts = the entry's delivery count (PENDING-RANGE of it; 1
 * when it is no longer pending), the handler, and ACK on success. Every
 * step is its own transition; a crash between a handler and its ACK
 * delivers the entry again (at-least-once). Returns EMQ_OK when the rounds
 * are done or *stop was set, or the first failure (NOGROUP, I/O, ...).
 */
int emq_stream_consume(emq_db *db, const char *q, const char *name,
                       const char *group, const char *consumer,
                       const char *start, const emq_consumer_options *o,
                       emq_stream_handler handler, void *ctx);

/* ------------------------------------------------------- the verb registry */

/*
 * Every transition and read of the protocol is one row of emqlite's verb
 * registry, callable by its wire name with byte-string arguments through
 * emq_call(), which answers the wire-shaped reply the EchoMQ scripts answer
 * inside Valkey. The typed calls of this header are thin wrappers over the
 * same rows. Tools (the CLI's `emqlite call`, bindings, test harnesses)
 * iterate the registry with emq_verb_count() / emq_verb_at().
 */

/** Reply types (RESP-shaped; a map is RESP3's: key, value, key, value). */
enum emq_reply_type {
    EMQ_REPLY_NIL = 0,  /**< nil (an absent value)                         */
    EMQ_REPLY_INT,      /**< `integer`                                     */
    EMQ_REPLY_BULK,     /**< `str`, `len` (binary-safe, NUL-terminated)    */
    EMQ_REPLY_STATUS,   /**< `str` (a simple string such as "OK")          */
    EMQ_REPLY_ARRAY,    /**< `elem[0 .. n)`                                */
    EMQ_REPLY_MAP,      /**< `elem[0 .. n)`, n even: key, value, ...       */
    EMQ_REPLY_BOOL,     /**< `integer` 0 or 1                              */
    EMQ_REPLY_ERROR,    /**< `str`: the exact wire error string            */
    EMQ_REPLY_REFUSED   /**< `str`: a host refusal (Appendix A.3), exact   */
};

/** A reply. Initialise to all zeroes ({0}); release with
 *  emq_reply_clear(). Everything it points to is owned by it. */
typedef struct emq_reply {
    int type;                /**< enum emq_reply_type                      */
    int64_t integer;
    char *str;
    size_t len;
    struct emq_reply *elem;
    size_t n;
    size_t cap;              /**< private: room in elem                    */
} emq_reply;

/** Free what `r` holds and zero it (safe on a zeroed reply). */
void emq_reply_clear(emq_reply *r);

/** Argument kinds: the gate each argument passes before any store access. */
enum emq_arg_kind {
    EMQ_ARG_QUEUE = 1, /**< a queue name (GATE-Q)                            */
    EMQ_ARG_ID,        /**< a branded id (GATE-ID)                           */
    EMQ_ARG_GROUP,     /**< a lane's group id (GATE-G)                       */
    EMQ_ARG_BYTES,     /**< any bytes up to the handle's max_payload         */
    EMQ_ARG_INT,       /**< a decimal int64                                  */
    EMQ_ARG_POS,       /**< a decimal int64 > 0                              */
    EMQ_ARG_NNEG,      /**< a decimal int64 >= 0                             */
    EMQ_ARG_BOOL,      /**< 1, 0, true or false                              */
    EMQ_ARG_WORD,      /**< one of the words in `words` ("in|at")            */
    EMQ_ARG_DID,       /**< a dedup id, [A-Za-z0-9._-]{1,255}                */
    EMQ_ARG_NAME       /**< a stream or repeat name: 1..255 bytes, no NUL
                            and no ':'                                     */
};
#define EMQ_ARGF_OPT  1 /**< may be absent (a NULL argument)                 */
#define EMQ_ARGF_REST 2 /**< this and the later specs repeat to the end      */
#define EMQ_ARGF_MIN1 4 /**< the repeated tail holds at least one group
                             (else EMQ_EEMPTY, empty_pipeline)              */

/** One argument of a verb. */
typedef struct emq_arg_info {
    const char *name;   /**< as PROTOCOL.md §6 names it ("lease_ms")       */
    int kind;           /**< enum emq_arg_kind                             */
    int flags;          /**< EMQ_ARGF_*                                    */
    const char *words;  /**< EMQ_ARG_WORD: the allowed words, '|'-separated */
} emq_arg_info;

/** How a verb runs. */
enum emq_verb_kind {
    EMQ_VERB_WRITE = 1, /**< one write transaction                          */
    EMQ_VERB_READ,      /**< one read transaction                           */
    EMQ_VERB_PROC,      /**< a procedure of several transactions ([multi-tx]) */
    EMQ_VERB_HOST       /**< host-side only, no store access                */
};

/** A row of the registry, as tools see it. The library owns it; new
 *  members are only ever appended, so read the ones your header has. */
typedef struct emq_verb_info {
    int id;                    /**< stable number (append-only)            */
    const char *name;          /**< the wire name ("enqueue")              */
    int tier;                  /**< PROTOCOL.md tier 1..5; 0 beyond the wire */
    int kind;                  /**< enum emq_verb_kind                     */
    const emq_arg_info *args;  /**< nargs specs                            */
    size_t nargs;
    int reply;                 /**< enum emq_reply_type of a success reply */
    const char *keys;          /**< the declared keys, in order (§6.6)     */
    const char *summary;       /**< one line                               */
} emq_verb_info;

/** The number of registered verbs. */
size_t emq_verb_count(void);
/** Row `i` (0 .. count-1) in registry order, or NULL. */
const emq_verb_info *emq_verb_at(size_t i);
/** The row named `name`, or NULL. */
const emq_verb_info *emq_verb_find(const char *name);

/**
 * Run the verb named `verb` with `argc` byte-string arguments
 * (`argv[i]`, `argvlen[i]` bytes; `argvlen` may be NULL for NUL-terminated
 * strings; a NULL `argv[i]` is an absent optional argument). Arguments are
 * gated by the row's specs (EMQ_EQUEUE, EMQ_EID, EMQ_EINVAL, EMQ_ETOOBIG
 * with a message naming the argument; an unknown verb is EMQ_EINVAL).
 * `reply` (may be NULL) receives the wire reply: on success the value the
 * verb answers, on a wire error an EMQ_REPLY_ERROR with the exact text, on
 * a host refusal an EMQ_REPLY_REFUSED; clear it with emq_reply_clear().
 * Returns the same result code the typed call returns.
 */
int emq_call(emq_db *db, const char *verb, size_t argc,
             const char *const *argv, const size_t *argvlen,
             emq_reply *reply);

/* ------------------------------------------------------ export and import */

/**
 * A sink for export bytes: write `n` bytes from `p`; return 0 on success,
 * nonzero to abort the export (which then returns EMQ_EIO).
 */
typedef int (*emq_write_fn)(void *ctx, const void *p, size_t n);

/** Export options; initialise with emq_export_options_init(). */
typedef struct emq_export_options {
    const char *const *queues; /**< export only these queues' keys (plus
                                    "{emq}:version"); NULL: every key     */
    size_t n_queues;           /**< entries in `queues`                   */
    int by_slot;               /**< 1: order keys by (cluster slot, name)
                                    and wrap each slot's keys in MULTI ..
                                    EXEC; 0 (default): plain byte order  */
} emq_export_options;

/** Fill `o` with the defaults: every key, byte order. */
void emq_export_options_init(emq_export_options *o);

/** What an export wrote, or what an import left in the file. */
typedef struct emq_transfer_summary {
    uint64_t keys;     /**< keys (export: written; import: live after it)  */
    uint64_t commands; /**< RESP commands written / read                   */
    uint64_t bytes;    /**< bytes written / read                           */
    uint64_t digest;   /**< XXH3-64 of the logical keyspace (doc/EXPORT.md):
                            export: of the keys written; import: of the
                            whole file after the import                  */
} emq_transfer_summary;

/**
 * Export the file's L1 image (PROTOCOL.md §8) as a RESP command stream that
 * `redis-cli --pipe` (or any RESP client) replays into Valkey. Taken inside
 * one read transaction, so the cut falls between transitions. The stream is
 * `SET {emq}:version echomq:4.0.0` and then every live key in byte order of
 * names (see `opt->by_slot`): strings by SET, hashes by HSET (stored field
 * order), sorted sets by ZADD (decimal integer scores), lists by RPUSH (head
 * to tail), sets by SADD — at most 64 elements per command — followed by
 * PEXPIREAT for a key expiry and HPEXPIREAT .. FIELDS 1 f for a field expiry
 * (both absolute ms; the latter needs Valkey >= 9.0). The bytes depend only
 * on the keyspace and the options. `write` receives them in chunks; `sum`
 * (may be NULL) receives the counts and the logical digest.
 * Returns EMQ_OK, EMQ_EIO (the sink failed), EMQ_EINVAL (bad queue name),
 * EMQ_ENOMEM, or a store failure.
 */
int emq_export(emq_db *db, const emq_export_options *opt, emq_write_fn write,
               void *ctx, emq_transfer_summary *sum);

/**
 * Import a RESP command stream (an emq_export, or an AOF of the same
 * commands) into the file in one write transaction. Accepted: SET key value
 * [PXAT ms], HSET, ZADD (bare score/member pairs), RPUSH, SADD, PEXPIREAT,
 * HPEXPIREAT key ms FIELDS n f..., and SELECT, MULTI and EXEC, which are
 * ignored. Commands apply as Valkey applies them, on top of what the file
 * holds. The stream must set "{emq}:version" to exactly "echomq:4.0.0":
 * otherwise (or without such a SET) EMQ_EWIRE. Malformed or truncated RESP,
 * an unknown command, bad arguments, a key outside the EchoMQ grammar (or
 * of the wrong type for its name), a member of a job set (pending, active,
 * schedule, dead, a lane) that is not 14 bytes, or an `attempts` field of a
 * job row or `count` of a metrics hash that is not a decimal integer below
 * 2^63-1 (states a claim or complete could only refuse, for good) give
 * EMQ_EPROTO with a message naming the byte offset of the refused frame. On
 * any failure nothing is applied.
 * `sum` (may be NULL) receives the counts and the digest of the file after
 * the import.
 */
int emq_import(emq_db *db, const void *bytes, size_t len,
               emq_transfer_summary *sum);

/**
 * The logical digest of the file's live keyspace (doc/EXPORT.md), filtered
 * like an export with `opt` (NULL: every key), in one read transaction;
 * `sum->commands` and `sum->bytes` are 0.
 */
int emq_digest(emq_db *db, const emq_export_options *opt,
               emq_transfer_summary *sum);

/* ------------------------------------------------------ Invariant checker */

#define EMQ_CHECK_VIOLATION 1 /**< an invariant is broken: no sequence of
                                   transitions produces this state        */
#define EMQ_CHECK_NOTE      2 /**< a state the protocol itself produces but a
                                   disciplined workload never does (an id in
                                   two sets, a set entry without a row, a
                                   partial row); not counted as a violation */

/** One finding of emq_check(). Every pointer is valid during the callback
 *  only. */
typedef struct emq_finding {
    int severity;        /**< EMQ_CHECK_VIOLATION or EMQ_CHECK_NOTE        */
    const char *code;    /**< a stable short name: "integrity", "stamp",
                              "fence", "key", "type", "member",
                              "score", "counter", "ring", "wake", "row",
                              "state", "state-set", "read" (violations);
                              "ghost", "multi", "partial", "reserve" (notes) */
    const char *key;     /**< the key concerned, printable (bytes outside
                              ASCII as \xNN), or "" for the file        */
    const char *message; /**< one sentence naming the broken rule         */
} emq_finding;

/** Receives each finding of emq_check(). */
typedef void (*emq_check_fn)(void *ctx, const emq_finding *f);

/**
 * Check the invariants of the whole file in one read transaction, reporting
 * every finding (not just the first) to `cb` (may be NULL): SQLite's
 * PRAGMA integrity_check and the file's stamp; the version fence; every key
 * belongs to the EchoMQ grammar with the type the grammar gives it; job sets
 * and lanes hold JOB ids with their score rules (0 in pending, dead and
 * lanes; integer ms in active and schedule); counters
 * are decimal integers; every job row's `state` is one of the five and the
 * set it names holds the id. The tolerated states are reported as notes;
 * doc/RELIABILITY.md lists each with the transition that produces it.
 * Never writes. `*nviolations` (may be NULL) receives the number of
 * violations (notes are not counted).
 * Returns EMQ_OK (no violation), EMQ_ECORRUPT (at least one), or EMQ_EBUSY,
 * EMQ_EIO, EMQ_ENOMEM when the check could not run to its end (a page that
 * could not be read for one of those reasons is not reported as damage).
 */
int emq_check(emq_db *db, emq_check_fn cb, void *ctx, size_t *nviolations);

#ifdef __cplusplus
}
#endif
#endif /* EMQLITE_H */
