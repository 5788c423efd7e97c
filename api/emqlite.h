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

/* ------------------------------------------- Scheduling and the worker */

/*
 * PROTOCOL.md §6.5 T5.8-T5.13: the repeat registry and the pump sweep that
 * fires it, backoff, the stalled sweep, the lock plane, and the consumer
 * loop — here a waiting claim (emq_claim_wait) and a worker pool
 * (emq_pool_start). Every call that touches the store is a registry verb
 * (emq_call names: repeat_register, repeat_cancel, repeat_advance,
 * repeat_due, repeat_count, sweep, backoff, stalled_check, job_stalled,
 * lock_key_set, lock_field_set, lock_key_del, lock_field_del,
 * lock_key_refresh, lock_track, lock_untrack, lock_beat); doc/SCHEDULING.md
 * tells the whole story.
 */

/** A source of 64 random bits (jitter). `ctx` is the pointer given with
 *  it. */
typedef uint64_t (*emq_random_fn)(void *ctx);

/**
 * The host clock (HOST-NOW of PROTOCOL.md §0): the clock the repeat
 * registry scores with (D-11). NULL (the default) makes it the handle's
 * clock (emq_set_clock); install a separate one to drive registrations
 * and transitions independently in tests.
 */
void emq_set_host_clock(emq_db *db, emq_clock_fn clock, void *ctx);

/** The random source of jitter (the `backoff` verb, the worker's
 *  retries). NULL (the default) restores the handle's own generator. */
void emq_set_random(emq_db *db, emq_random_fn fn, void *ctx);

/* T5.8 the repeat registry. Names are 1-255 bytes without NUL or ':'
 * (EMQ_EINVAL otherwise); scores are HOST-NOW based. */

/**
 * T5.8 register: a registration `name` firing `tpl` (`len` bytes) as a
 * fresh job every `every_ms` (> 0) ms, first at HOST-NOW + `first_in_ms`
 * (>= 0). Returns EMQ_OK (registered) or EMQ_EXISTS (a record of that
 * name exists; nothing changes).
 */
int emq_repeat_register(emq_db *db, const char *q, const char *name,
                        int64_t every_ms, const void *tpl, size_t len,
                        int64_t first_in_ms);
/** T5.8 cancel: remove the registration and its record. EMQ_OK
 *  (cancelled) or EMQ_ABSENT (it was not registered). */
int emq_repeat_cancel(emq_db *db, const char *q, const char *name);
/** T5.8 advance: next run at HOST-NOW + `every_ms` (> 0). EMQ_OK
 *  (advanced) or EMQ_ABSENT (no record: the name left the registry). */
int emq_repeat_advance(emq_db *db, const char *q, const char *name,
                       int64_t every_ms);

/** One registration, as emq_repeat_due and emq_repeat_list return it. */
typedef struct emq_repeat {
    char *name;             /**< NUL-terminated                           */
    size_t name_len;
    int64_t every_ms;       /**< -1 when the record lacks a valid one     */
    unsigned char *tpl;     /**< the template (NUL-terminated), NULL when
                                 the record lacks it                      */
    size_t tpl_len;
    int64_t next_ms;        /**< the next run (the registry's score);
                                 emq_repeat_list only, 0 from due         */
} emq_repeat;

/**
 * T5.8 due: up to `limit` (> 0) registrations whose next run is at or
 * before HOST-NOW, in registry order. `*out` receives an array of `*n`
 * (free with emq_repeats_free).
 */
int emq_repeat_due(emq_db *db, const char *q, int64_t limit,
                   emq_repeat **out, size_t *n);
/** Every registration of `q` in registry order (a read of the same keys;
 *  not a protocol verb). */
int emq_repeat_list(emq_db *db, const char *q, emq_repeat **out, size_t *n);
void emq_repeats_free(emq_repeat *r, size_t n);
/** T5.8 count: the number of registrations, into `*n`. */
int emq_repeat_count(emq_db *db, const char *q, int64_t *n);

/** What one sweep did. */
typedef struct emq_sweep_counts {
    int64_t promoted;   /**< scheduled jobs moved to pending (T1.7)       */
    int64_t fired;      /**< repeat occurrences enqueued                  */
    int64_t delivered;  /**< flow outbox entries delivered (T4.10)        */
} emq_sweep_counts;

/**
 * T5.9 the pump sweep [multi-tx]: promote up to `batch` (> 0) due jobs;
 * fire each due registration (a freshly minted JOB id enqueued with the
 * template, then advanced; a registration whose record is incomplete is
 * cancelled); deliver up to `batch` flow completions. Each step is its own
 * transition: a crash between two leaves what committed, and the next
 * sweep carries on (doc/SCHEDULING.md). A registration the store refuses
 * (a template above max_payload) is skipped and stays due. Returns EMQ_OK
 * with `*out` (may be NULL), or the first failure of the store.
 */
int emq_sweep(emq_db *db, const char *q, int64_t batch,
              emq_sweep_counts *out);

/* T5.10 backoff (host, pure). */
#define EMQ_BACKOFF_FIXED       1 /**< `delay_ms` every time               */
#define EMQ_BACKOFF_EXPONENTIAL 2 /**< min(base_ms * 2^(attempts-1), cap_ms) */

/** A backoff policy: fixed(delay_ms >= 0) or exponential(base_ms >= 1,
 *  cap_ms >= 1), wrapped in `jitter` layers of jitter (each a uniform
 *  integer in [0, inner], 0 when inner <= 0). */
typedef struct emq_backoff {
    int kind;           /**< EMQ_BACKOFF_FIXED or EMQ_BACKOFF_EXPONENTIAL */
    int64_t delay_ms;   /**< fixed                                        */
    int64_t base_ms;    /**< exponential                                  */
    int64_t cap_ms;     /**< exponential                                  */
    int jitter;         /**< 0: none; n: jitter applied n times (<= 8)    */
} emq_backoff;

/**
 * The delay after the failed attempt `attempts` (>= 1, the token of the
 * attempt that failed) into `*delay_ms`; `rnd` (NULL: a built-in
 * generator, per thread) draws jitter. Returns EMQ_OK or EMQ_EINVAL (bad
 * policy or attempts).
 */
int emq_backoff_delay(const emq_backoff *p, int64_t attempts,
                      emq_random_fn rnd, void *ctx, int64_t *delay_ms);
/**
 * Parse a policy written as the `backoff` verb's words joined by ':':
 * "fixed:MS", "exponential:BASE:CAP", "jitter:POLICY". EMQ_OK or
 * EMQ_EINVAL. emq_backoff_format writes the same form into `buf` (`n`
 * bytes) and returns its length (0 when it does not fit).
 */
int emq_backoff_parse(const char *spec, emq_backoff *out);
size_t emq_backoff_format(const emq_backoff *p, char *buf, size_t n);

/** T5.11 what one stalled sweep found (free with emq_stalled_clear). */
typedef struct emq_stalled {
    char (*recovered)[EMQ_ID_SIZE]; /**< back in pending (or their lane)  */
    size_t nrecovered;
    char (*dead)[EMQ_ID_SIZE];      /**< dead-lettered ("stalled")        */
    size_t ndead;
} emq_stalled;

/**
 * T5.11 stalled sweep: each of up to `limit` (> 0) lapsed leases counts a
 * stall on its row; at `max_stalled` stalls it is dead-lettered with
 * last_error "stalled", otherwise returned to pending (a grouped job to its
 * lane, offered unless the lane is paused). Grouped jobs free their
 * in-flight slot either way. `*out` may be NULL.
 */
int emq_stalled_check(emq_db *db, const char *q, int64_t max_stalled,
                      int64_t limit, emq_stalled *out);
void emq_stalled_clear(emq_stalled *s);
/** T5.11 job_stalled?: `*stalled` = 1 when the row counts a stall. */
int emq_job_stalled(emq_db *db, const char *q, const char *id, int *stalled);

/* T5.12 the lock plane: markers that make remove_job refuse EMQLOCK while
 * a holder works, and that self-expire after a crashed holder's lease. */

/** The lock plane's timings for a lease (Appendix B vectors). */
typedef struct emq_lock_timing {
    int64_t extend_ms;      /**< round(lease * ratio) in [1, lease - 1]    */
    int64_t marker_ttl_ms;  /**< max(1, round(lease * multiple))           */
} emq_lock_timing;
/** Timings for `lease_ms` (> 0) with `ratio` and `multiple` (<= 0: the
 *  defaults 0.5 and 2). */
emq_lock_timing emq_lock_timing_of(int64_t lease_ms, double ratio,
                                   double multiple);

/**
 * T5.12 track: the lock key J(id).lock = token with a key TTL and the row's
 * `lock` field = token with the same field TTL (`marker_ttl_ms` > 0), in
 * one transaction. A job without a row gets a lock-only row. EMQ_OK.
 */
int emq_lock_track(emq_db *db, const char *q, const char *id, int64_t token,
                   int64_t marker_ttl_ms);
/** T5.12 untrack: delete the lock key and the lock field. EMQ_OK. */
int emq_lock_untrack(emq_db *db, const char *q, const char *id);
/**
 * T5.12 beat: extend every (ids[i], tokens[i]) to NOW + `lease_ms` (T1.12)
 * and reset both markers of each extended one to `marker_ttl_ms`, in one
 * transaction. `dropped[i]` = 1 for each pair not extended (may be NULL
 * when n is 0); `*ndropped` (may be NULL) their count.
 */
int emq_lock_beat(emq_db *db, const char *q, size_t n,
                  const char *const *ids, const int64_t *tokens,
                  int64_t lease_ms, int64_t marker_ttl_ms, int *dropped,
                  size_t *ndropped);

/**
 * T5.13 a waiting claim. Returns lapsed leases (T1.8 reap) and due jobs
 * (T1.7 promote) to pending, claims one job — from the flat pending set or
 * from the fair lanes — and when there is none waits without polling until
 * a commit by any handle on the file (in this process or another) adds to
 * the queue's pending set, offers a lane (WAKE), or resumes the queue;
 * until a scheduled job or a lease falls due; or until `timeout_ms` passed
 * (0: no wait; < 0: no limit). The timeout runs on the handle's clock and,
 * for clocks that do not move on their own, on real time as well, which
 * ever is first. A job enqueued between the look and the wait is claimed
 * at once. Returns EMQ_OK with `*job` (release with emq_job_clear),
 * EMQ_EMPTY (timed out, or interrupted), or a failure; EMQ_ECANTOPEN /
 * EMQ_EREADONLY when the wake file beside the database (<path>-emqwake)
 * cannot be opened, EMQ_ECORRUPT when another file holds its name.
 */
int emq_claim_wait(emq_db *db, const char *q, int64_t lease_ms,
                   int64_t timeout_ms, emq_job *job);
/** Make the handle's current (or next) emq_claim_wait return EMQ_EMPTY
 *  promptly. Safe from any thread and from a signal handler. */
void emq_claim_wait_interrupt(emq_db *db);

/* Retry policies: host-side configuration (L4), kept in the file beside the
 * keyspace (table `hostconf`), never exported: an export to Valkey carries
 * the same keys with or without them (doc/SCHEDULING.md). */

/** A retry policy: the attempts cap and the backoff between attempts. */
typedef struct emq_retry_policy {
    int64_t max_attempts;   /**< > 0: dead-letter when attempts reach it  */
    emq_backoff backoff;
} emq_retry_policy;

/**
 * Store the retry policy of queue `q` (id NULL) or of one job of it, or
 * remove it (`p` NULL). EMQ_OK; EMQ_EINVAL for a bad policy.
 */
int emq_policy_set(emq_db *db, const char *q, const char *id,
                   const emq_retry_policy *p);
/**
 * The policy that applies to job `id` of `q` (id NULL: the queue's): the
 * job's own, else the queue's. EMQ_OK with `*p`, or EMQ_ABSENT (none set).
 */
int emq_policy_get(emq_db *db, const char *q, const char *id,
                   emq_retry_policy *p);
/**
 * T1.6 retry under the stored policy: the delay is the policy's backoff at
 * attempts = `token`, the cap its max_attempts; without a stored policy,
 * `fallback` (NULL: Appendix C's 3 attempts, fixed 1000 ms). Returns what
 * emq_retry returns (EMQ_SCHEDULED, EMQ_DEAD, EMQ_ESTALE...).
 */
int emq_retry_by_policy(emq_db *db, const char *q, const char *id,
                        int64_t token, const void *error, size_t error_len,
                        const emq_retry_policy *fallback);

/* The worker pool: N threads, each with its own handle on one file, each
 * looping emq_claim_wait -> handler -> complete or retry, while one more
 * thread extends the leases of the jobs in hand and runs the pump. */

#define EMQ_WORK_DONE      0 /**< complete the job (with `result`, if any) */
#define EMQ_WORK_FAILED    1 /**< retry under the policy (`error`: reason) */
#define EMQ_WORK_ABANDONED 2 /**< neither: stop extending, let the lease
                                  lapse (reap returns it to pending)       */

/** What a handler reports for one job. Filled with EMQ_WORK_DONE and
 *  nothing else before the handler runs; the pointers must stay valid
 *  until the handler's thread calls it again. */
typedef struct emq_outcome {
    int verdict;              /**< EMQ_WORK_*                              */
    const void *result;       /**< DONE: the result for a flow parent     */
    size_t result_len;
    const void *error;        /**< FAILED: last_error ("handler failed")  */
    size_t error_len;
    int64_t delay_ms;         /**< FAILED: >= 0 overrides the backoff     */
} emq_outcome;

/** Run one job. Called on a worker thread; `job` is valid during the
 *  call only. */
typedef void (*emq_handler_fn)(void *ctx, const char *q, const emq_job *job,
                               emq_outcome *out);

/** After each job (`verdict` EMQ_WORK_*; `rc` the result of the complete
 *  or retry: EMQ_OK, EMQ_SCHEDULED, EMQ_DEAD, EMQ_ESTALE...). Called on
 *  the worker thread. */
typedef void (*emq_work_event_fn)(void *ctx, const char *q,
                                  const emq_job *job, int verdict, int rc);

typedef struct emq_worker_options {
    const char *queue;           /**< required                            */
    emq_handler_fn handler;      /**< required                            */
    void *handler_ctx;
    int workers;                 /**< threads (1)                         */
    int64_t lease_ms;            /**< 30000                               */
    int64_t extend_ms;           /**< beat; 0: the lock plane's (lease/2) */
    emq_retry_policy retry;      /**< without a stored policy: 3, fixed
                                      1000 (Appendix C)                  */
    int64_t pump_ms;             /**< sweep beat (1000); < 0: no pump     */
    int track_locks;             /**< 1: lock markers while a job runs    */
    int64_t max_jobs;            /**< stop after this many (0: never)     */
    int64_t idle_ms;             /**< stop after idling this long (< 0:
                                      never)                             */
    emq_work_event_fn on_event;  /**< may be NULL                         */
    void *event_ctx;
} emq_worker_options;

/** Fill `w` with the defaults documented on each field. */
void emq_worker_options_init(emq_worker_options *w);

typedef struct emq_pool emq_pool;

/** What a pool did. */
typedef struct emq_pool_stats {
    int64_t claimed, completed, retried, dead, abandoned, stale, errors;
} emq_pool_stats;

/**
 * Start a pool on the file at `path` (not ":memory:": every thread opens
 * its own handle) with open options `o` (may be NULL). Returns EMQ_OK with
 * `*out`, EMQ_EINVAL, or the failure of opening a handle (nothing runs).
 */
int emq_pool_start(const char *path, const emq_options *o,
                   const emq_worker_options *w, emq_pool **out);
/** Ask every worker to finish its current job and stop. Safe from any
 *  thread and from a signal handler. */
void emq_pool_stop(emq_pool *p);
/** Extend the lease of every job in hand now (what the beat does every
 *  extend interval) and return once that transaction ended. EMQ_OK. */
int emq_pool_beat(emq_pool *p);
/** Wait for every thread and report what the pool did. Returns EMQ_OK, or
 *  the first failure that stopped a worker. The pool stays valid (a late
 *  emq_pool_stop is harmless) until emq_pool_free. */
int emq_pool_join(emq_pool *p, emq_pool_stats *stats);
/** Close the pool's handles and release it (after emq_pool_join; NULL is
 *  ignored). */
void emq_pool_free(emq_pool *p);

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
