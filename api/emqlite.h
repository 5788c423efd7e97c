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
#define EMQ_GONE       6  /**< complete / extend: the job row does not exist */

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
#define EMQ_ESCHEMA    (-30013) /**< a newer schema, or an older one through a
                                     read-only handle (untouched)           */
#define EMQ_ECORRUPT   (-30014) /**< the file is damaged                          */
#define EMQ_ETOOBIG    (-30015) /**< a payload exceeds the configured maximum     */
#define EMQ_EREADONLY  (-30016) /**< the file or its directory is read-only       */
#define EMQ_ECANTOPEN  (-30017) /**< the file cannot be opened                    */
#define EMQ_EPROTO     (-30018) /**< malformed input (an import stream, a number)  */
#define EMQ_EINTERNAL  (-30019) /**< an unexpected SQLite error; see emq_errmsg   */
#define EMQ_EEMPTY     (-30020) /**< host gate: empty batch (empty_pipeline)      */
#define EMQ_ENOTSUP    (-30021) /**< the feature was not built in                 */
#define EMQ_EEXHAUSTED (-30022) /**< no branded id is left to mint: the snowflake
                                     clock reached its 41-bit horizon
                                     (2093-09-06T15:47:35.551Z), or the node-id
                                     sidecar reserves the node up to it      */

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
    int checksums;        /**< 1: keep a checksum of every key row (job rows,
                               payloads, counters) and verify it on every
                               read and in emq_check, so damage the disk did
                               is reported (EMQ_ECORRUPT) instead of served.
                               Turned on for good, for every handle of the
                               file, by the file's only open handle (else
                               EMQ_EBUSY; a read-only handle: EMQ_EREADONLY);
                               0 (default) keeps what the file has. Costs
                               and coverage: doc/RELIABILITY.md         */
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
 *
 * Every refusal is judged before anything is written, and names the path:
 * EMQ_ECANTOPEN for a directory, a device, FIFO or socket, a dangling
 * symlink, a file with more than one hard link (one file must have one
 * name: SQLite keeps one WAL per name), a missing file through a read-only
 * handle (which never creates the file or its side files), or a side file
 * (`<file>-emqlock`, `<file>-emqnode`, named after the resolved file) that
 * is a symlink, not a regular file, or owned by someone else; EMQ_ENOTEMQ
 * also for a file whose schema objects are not exactly emqlite's (a foreign
 * trigger, view, index or table); EMQ_ESCHEMA also for an older schema
 * through a read-only handle (a read-write open upgrades it atomically);
 * EMQ_EEXHAUSTED when the node-id sidecar reserves the node up to the id
 * horizon; EMQ_EBUSY when `checksums` must be turned on while other
 * handles are open.
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
 * EMQ_EID (bad namespace), EMQ_EEXHAUSTED once the clock has passed the
 * id horizon (2093), or EMQ_EIO / EMQ_EFULL when that reservation cannot be
 * written (no id is returned; each failure sets emq_errmsg).
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
                              "schema", "checksum",
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
 * PRAGMA integrity_check and the file's stamp; schema objects that are not
 * exactly emqlite's (a foreign trigger, view, index or table); key rows whose
 * checksum does not match (files with emq_options.checksums); the version
 * fence; every key
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
