/*
 * emqlite.h — the public C API of emqlite, the EchoMQ job-queue protocol
 * (wire "echomq:4.0.0") as an in-process engine over one SQLite file.
 *
 * Every transition of the protocol is atomic: it runs inside one SQLite
 * write transaction (BEGIN IMMEDIATE ... COMMIT), reads the clock at most
 * once, and either applies fully or not at all. Reads (emq_job_get,
 * emq_stats_get, emq_counts, emq_export, emq_check, ...) run inside one
 * read transaction, so each sees one consistent state. A few procedures are
 * marked [multi-tx]: they run several transactions in order (a flow add
 * across queues, the pump sweep, a repeat firing); doc/FLOWS.md and
 * doc/PROTOCOL.md §6 say where a crash may cut each one and how the next
 * run completes it. The keys, fields, replies and error strings the library
 * produces are byte-identical to the EchoMQ Valkey wire, so an export of
 * the file replays into Valkey and any EchoMQ runtime continues from it.
 *
 * Contents (each entry is a banner "---- N. title" below):
 *    1. version
 *    2. result codes (EMQ_RESULT_MAP)
 *    3. branded ids and the key grammar
 *    4. memory
 *    5. open and options
 *    6. Tier 1: the core queue
 *    7. Tier 1: reads
 *    8. the operator plane (Tier 2)
 *    9. the operator plane: beyond the wire
 *   10. the operator plane: lifecycle events
 *   11. lanes
 *   12. flows
 *   13. streams
 *   14. scheduling and workers
 *   15. transfer: export and import
 *   16. check: the invariant checker
 *   17. deprecated names
 * The protocol's single steps (the flow steps a procedure is made of) and
 * the generic registry surface (emq_call, emq_reply, emq_verb_info) are for
 * bindings and tools: they are declared in emqlite_protocol.h, which
 * includes this header. Applications need only this one.
 *
 * Naming. Every call is emq_<noun>_<verb>, the noun first and never after
 * the verb: emq_job_get, emq_job_remove, emq_lane_wclaim, emq_lock_extend,
 * emq_queue_pause, emq_stream_append. A call on the queue named by its
 * second argument, or on the handle or file itself, leaves the noun implied
 * and keeps the protocol's verb name, with a modifier where there are
 * variants (emq_enqueue, emq_enqueue_at, emq_claim, emq_claim_wait,
 * emq_complete, emq_drain, emq_open, emq_export, emq_check); handle
 * settings are emq_set_<thing> (emq_set_clock). Names renamed to this rule
 * remain one release as macros (section 17).
 *
 * Releasing memory, one rule for every type: emq_X_clear(&x) empties a
 * struct the caller owns (its storage stays the caller's, e.g. an emq_job on
 * the stack, which may then be reused); emq_X_free releases memory the
 * library allocated and handed out (an array, e.g. emq_fields_free, or an
 * object, e.g. emq_pool_free; emq_free for a plain buffer).
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
 *
 * Structs and the ABI (the rule every struct in the public headers keeps):
 *  - A struct the caller allocates and the library reads (every
 *    emq_*_options) begins with `size_t size`, which its init writes: each
 *    emq_X_options_init(o) is a macro over emq_X_options_init_size(o,
 *    sizeof *o), so the size is the one the caller was compiled with. A
 *    later release only appends fields; it reads the first `size` bytes and
 *    gives every field beyond them its default, so a binary built against
 *    an older header keeps working. A binary built against a newer header
 *    and run on an older library works while it leaves the newer fields at
 *    their zero default, and is refused with EMQ_EINVAL (naming the init)
 *    once it sets one. A struct not passed through its init (`size` 0) is
 *    refused the same way. Bindings call the _init_size function with the
 *    struct's size.
 *  - A struct the library fills (emq_job, emq_stats, emq_job_info, reports
 *    and summaries), an element of an array the caller passes (emq_item,
 *    emq_field, ...) and a small value struct kept inside others
 *    (emq_backoff, emq_retry_policy) is frozen: within a major version its
 *    size and layout never change; new facts come through new calls.
 *  - Handles (emq_db, emq_sub, emq_importer, ...) are opaque.
 */
#ifndef EMQLITE_H
#define EMQLITE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------- 1. version */

#define EMQLITE_VERSION "0.1.0"
/** The default wire identity, stored at "{emq}:version" of a new file. */
#define EMQ_WIRE "echomq:4.0.0"

/**
 * The wire identities this library implements exactly (PROTOCOL.md §5;
 * doc/DECISIONS.md, "Wire identities"): entry `i` (0: EMQ_WIRE; 1:
 * "echomq:3.0.0", the deployed EchoMQ runtime's), NULL past the last. They differ in nothing
 * but the stamp. A file keeps the identity it was created (emq_options
 * .wire), imported or pulled with; emq_set_wire changes it.
 */
const char *emq_wire_table(size_t i);
/** The table's entry equal to the `n` bytes at `p` (a static string), or
 *  NULL when they are no identity of the table. */
const char *emq_wire_known(const void *p, size_t n);

/** The library version string (EMQLITE_VERSION of the built library). */
const char *emq_version(void);
/** The version of the SQLite library linked at run time. */
const char *emq_sqlite_version(void);

/* -------------------------------------------------- 2. result codes */

/*
 * Every call returns one of these codes: 0 (EMQ_OK) or a positive verdict
 * for a transition that ran, a negative failure (one reserved range, -30001
 * and below) otherwise. They are declared once, in EMQ_RESULT_MAP (as
 * libuv's UV_ERRNO_MAP), one row per code:
 *
 *   X(NAME, CODE, WIRE, CLASS, EXIT, EXCEPTION, KIND, TEXT)
 *
 * NAME       the constant is EMQ_<NAME>
 * CODE       its value: append new codes, never renumber
 * WIRE       the wire class when the failure is a wire error reply (its
 *            first word: "EMQKIND", "EMQSTALE", ...; emq_errmsg() holds the
 *            exact text), "" for verdicts and host-side failures
 * CLASS      the class name tools print and match ("invalid_queue",
 *            "busy", ...): the wire class for a wire error
 * EXIT       the emqlite tool's exit status for it (emqlite(1))
 * EXCEPTION  the exception bindings raise for a failure ("StaleToken"),
 *            "" for a verdict
 * KIND       what else the failure is, for bindings that have such
 *            classes: "value" (a refused argument or input), "os" (the
 *            file or the system), "memory", or ""
 * TEXT       emq_strerror()'s sentence
 *
 * emq_strerror(), emq_result_info(), the tool's classes and exits and the
 * bindings' exception classes are all made from this table;
 * tests/test_handle.c fails when a code lacks any column.
 */
#define EMQ_RESULT_MAP(X)                                                    \
    /* successful verdicts (>= 0) */                                         \
    X(OK, 0, "", "ok", 0, "", "", "ok")                                      \
    X(ENQUEUED, 1, "", "enqueued", 0, "", "",                                \
      "enqueued: the job was admitted")                                      \
    X(DUPLICATE, 2, "", "duplicate", 3, "", "",                              \
      "duplicate: a row with that id exists")               \
    X(SCHEDULED, 3, "", "scheduled", 0, "", "",                              \
      "scheduled: the job waits for its run-at")                             \
    X(DEAD, 4, "", "dead", 0, "", "",                                        \
      "dead: the job reached its attempts cap")        \
    X(EMPTY, 5, "", "empty", 2, "", "",                                      \
      "empty: nothing to claim, or the queue is paused")                     \
    X(GONE, 6, "", "gone", 6, "", "",                                        \
      "gone: the job row does not exist")                    \
    X(MORE, 7, "", "more", 0, "", "",                                        \
      "more: the budget ran out before the work was done; call again")       \
    X(NOOP, 8, "", "noop", 0, "", "",                                        \
      "no-op: the job is already in that lane")                              \
    X(NOTPENDING, 9, "", "not_pending", 0, "", "",                           \
      "not pending: the job is not waiting in its lane")                     \
    X(EXISTS, 10, "", "registered", 3, "", "",                               \
      "exists: the registration is already there")                           \
    X(ABSENT, 11, "", "absent", 6, "", "",                                   \
      "absent: there was nothing there")                                     \
    /* failures (< 0) */                                                     \
    X(EKIND, -30001, "EMQKIND", "EMQKIND", 4, "WrongKind", "value",          \
      "kind error: the job id is not JOB-namespaced")                        \
    X(ESTALE, -30002, "EMQSTALE", "EMQSTALE", 5, "StaleToken", "",           \
      "stale: the token does not match the job's attempts, or the job "      \
      "is gone")                                                             \
    X(EWRONGTYPE, -30003, "WRONGTYPE", "WRONGTYPE", 9, "WrongType", "",      \
      "wrong type: a key holds another kind of value")                       \
    X(EWIRE, -30004, "", "version_fence", 7, "VersionFence", "",             \
      "version fence: the file speaks another wire")      \
    X(EQUEUE, -30005, "", "invalid_queue", 1, "InvalidQueue", "value",       \
      "invalid queue name")                                                  \
    X(EID, -30006, "", "invalid_id", 1, "InvalidId", "value",                \
      "not a valid branded id")                                              \
    X(EINVAL, -30007, "", "invalid_argument", 1, "InvalidArgument", "value", \
      "invalid argument")                                                    \
    X(EBUSY, -30008, "", "busy", 8, "Busy", "",                              \
      "busy: the file stayed locked past the busy timeout")                  \
    /* EIO: nothing is visible — but if the error hit the commit's own      \
     * sync, the transition may resurface after a power loss              \
     * (doc/RELIABILITY.md) */                                               \
    X(EIO, -30009, "", "io", 9, "EmqIOError", "os",                          \
      "I/O error; nothing was applied")                                      \
    X(EFULL, -30010, "", "full", 9, "DiskFull", "os",                        \
      "disk or quota full; nothing was applied")                             \
    X(ENOMEM, -30011, "", "nomem", 9, "OutOfMemory", "memory",               \
      "out of memory; nothing was applied")                                  \
    X(ENOTEMQ, -30012, "", "not_emqlite", 7, "NotEmqlite", "",               \
      "not an emqlite file (left untouched)")                                \
    X(ESCHEMA, -30013, "", "schema", 7, "SchemaTooNew", "",                  \
      "the file has a newer schema, or an older one a read-only handle "     \
      "cannot upgrade (left untouched)")                                     \
    X(ECORRUPT, -30014, "", "corrupt", 9, "Corrupt", "",                     \
      "the file is damaged")                                                 \
    X(ETOOBIG, -30015, "", "too_big", 1, "TooBig", "value",                  \
      "payload exceeds the configured maximum")                              \
    X(EREADONLY, -30016, "", "readonly", 9, "ReadOnly", "",                  \
      "read-only: the file, its directory or the handle does not allow "     \
      "writes")                                                              \
    X(ECANTOPEN, -30017, "", "cantopen", 9, "CantOpen", "os",                \
      "the file cannot be opened")                                           \
    X(EPROTO, -30018, "", "malformed", 1, "Malformed", "value",              \
      "malformed input")                        \
    X(EINTERNAL, -30019, "", "internal", 9, "Internal", "",                  \
      "internal error: an unexpected SQLite error")         \
    X(EEMPTY, -30020, "", "empty_pipeline", 1, "EmptyBatch", "value",        \
      "empty batch (empty_pipeline)")                                        \
    X(ENOTSUP, -30021, "", "not_supported", 10, "NotSupported", "",          \
      "the feature was not built in")                                        \
    X(ELOCKED, -30022, "EMQLOCK", "EMQLOCK", 12, "Locked", "",               \
      "locked: the job is locked by another holder")                         \
    X(ENOTPAUSED, -30023, "EMQSTATE", "EMQSTATE", 12, "NotPaused", "",       \
      "state: the queue is not paused")                                      \
    X(EACTIVE, -30024, "EMQSTATE", "EMQSTATE", 12, "ActiveJobs", "",         \
      "state: active jobs are present")                                      \
    X(ENOTDEAD, -30025, "EMQSTATE", "EMQSTATE", 12, "NotDead", "",           \
      "state: the job is not dead")                                          \
    X(ERATE, -30026, "EMQRATE", "EMQRATE", 12, "RateLimited", "",            \
      "rate: the concurrency ceiling is reached")                            \
    /* EREFUSED: a host refusal of PROTOCOL.md Appendix A.3                 \
     * (unknown_state(name), flow_too_deep(8), flow_cycle(id), ...):        \
     * emq_errmsg() holds its exact text; nothing was touched */             \
    X(EREFUSED, -30027, "", "refused", 1, "Refused", "value",                \
      "refused by a host rule; nothing was touched")                         \
    X(ENONMONO, -30028, "ERR", "ERR", 12, "NonMonotonic", "",                \
      "stream append: the id is not above the stream's top")                 \
    /* EENGINE: another engine error reply (ERR ..., BUSYGROUP, NOGROUP),   \
     * verbatim in emq_errmsg() */                                           \
    X(EENGINE, -30029, "ERR", "engine", 9, "EngineError", "",                \
      "an engine error reply (ERR, BUSYGROUP, NOGROUP ...)")                 \
    X(EEXIST, -30030, "", "exists", 3, "TargetExists", "",                   \
      "the target already holds those keys")                                 \
    X(EREMOTE, -30031, "", "server", 9, "RemoteError", "",                   \
      "the server refused a command")                                        \
    /* EEXHAUSTED: the snowflake clock reached its 41-bit horizon           \
     * (2093-09-06T15:47:35.551Z), or the node-id sidecar reserves the      \
     * node up to it */                                                      \
    X(EEXHAUSTED, -30032, "", "exhausted", 9, "Exhausted", "",               \
      "no branded id is left to mint: the id clock reached its 2093 "        \
      "horizon")

/** The result codes, EMQ_<NAME>, one per row of EMQ_RESULT_MAP. */
enum emq_result {
#define EMQ_RESULT_ENUM_(name, code, wire, cls, exit, exc, kind, text)      \
    EMQ_##name = (code),
    EMQ_RESULT_MAP(EMQ_RESULT_ENUM_)
#undef EMQ_RESULT_ENUM_
};

/** One row of EMQ_RESULT_MAP (library-owned, static). */
typedef struct emq_result_row {
    int code;
    const char *name;      /**< "EMQ_ESTALE"                                */
    const char *wire;      /**< the wire class, or "" (host-side, verdict)  */
    const char *cls;       /**< the tool's class name                       */
    int exit;              /**< the emqlite tool's exit status              */
    const char *exception; /**< the bindings' exception name, "" for verdicts */
    const char *kind;      /**< "value", "os", "memory" or ""               */
    const char *text;      /**< emq_strerror()'s sentence                   */
} emq_result_row;

/** The row of code `rc`, or NULL for a code that is not in the table. */
const emq_result_row *emq_result_info(int rc);
/** Row `i` of the table in declaration order (0 .. ), NULL past the end. */
const emq_result_row *emq_result_at(size_t i);

/** A static English description of a result code. Never NULL. */
const char *emq_strerror(int rc);

/* ------------------------------- 3. branded ids and the key grammar */

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

/** The cluster slot of a key: CRC16-XMODEM of its hash tag, mod 16384. */
unsigned emq_slot(const void *key, size_t len);

/** 1 when `q` is a valid queue name ([A-Za-z0-9._-]{1,128}, not "emq"). */
int emq_queue_valid(const char *q);

/* -------------------------------------------------------- 4. memory */

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

/* ---------------------------------------------- 5. open and options */

typedef struct emq_db emq_db;

/**
 * A clock: returns the current time in Unix milliseconds. `ctx` is the
 * pointer given with it. Install your own to drive leases, schedules and
 * reaps deterministically in tests (no sleeps): every transition reads it
 * exactly once, inside its transaction.
 */
typedef int64_t (*emq_clock_fn)(void *ctx);
/** What a clock returns when it cannot tell the time (a binding's callback
 *  that raised): the transition then fails with EMQ_EINVAL ("the clock
 *  callback failed") before touching anything. */
#define EMQ_CLOCK_FAILED INT64_MIN

#define EMQ_SYNC_NORMAL 1 /**< WAL + synchronous=NORMAL (default)           */
/** Every commit synced before its call returns; shared handles share the
 *  syncs (group commit, doc/RELIABILITY.md). */
#define EMQ_SYNC_FULL   2

/** Open options; initialise with emq_options_init() and change fields. */
typedef struct emq_options {
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
    int synchronous;      /**< EMQ_SYNC_NORMAL (default) or EMQ_SYNC_FULL   */
    int busy_timeout_ms;  /**< wait this long for the write lock (5000)      */
    int node_id;          /**< 0..1023, or -1 (default) to lease one from the
                               file: distinct live handles never share one   */
    emq_clock_fn clock;   /**< NULL (default): the real wall clock           */
    void *clock_ctx;      /**< passed to `clock`                             */
    int exclusive;        /**< 1: locking_mode=EXCLUSIVE, one handle owns
                               the file until emq_close (others: EMQ_EBUSY);
                               0 (default) shared. doc/RELIABILITY.md,
                               "Locking modes"                           */
    int readonly;         /**< 1: open read-only (no fence claim, no writes) */
    uint64_t max_payload; /**< largest payload accepted (512 MiB)           */
    int checkpoint_frames;/**< run a RESTART checkpoint once the WAL holds this
                               many frames after a commit (4000; 0 = never,
                               call emq_checkpoint yourself)                */
    int checksums;        /**< 1: checksum every key row and verify it on
                               read (EMQ_ECORRUPT); set for good by the
                               file's only handle; 0 (default) keeps what
                               the file has. doc/RELIABILITY.md          */
    int page_size;        /**< page size of a file this open creates: 1024
                               (default), 0 for SQLite's 4096, or a power
                               of two 512..65536. BENCHMARKS.md          */
    const char *wire;     /**< the identity a file this open creates is
                               stamped with: NULL (default) EMQ_WIRE, or
                               an entry of emq_wire_table (else
                               EMQ_EINVAL); an existing file keeps its
                               own                                        */
} emq_options;

/** Fill `o` with the defaults documented on each field. */
void emq_options_init_size(emq_options *o, size_t size);
#define emq_options_init(o) \
    emq_options_init_size((o), sizeof *(o))

/**
 * Open (creating if absent) the emqlite file at `path` ("" or ":memory:" for
 * a private in-memory database) and pass the version fence: a fresh file is
 * stamped with `opt->wire` ("echomq:4.0.0" by default); a file stamped with
 * anything but an identity of emq_wire_table is refused with EMQ_EWIRE and
 * left untouched. A file that is not emqlite's returns
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
 * Remove the file at `path` and every file beside it that SQLite or
 * emqlite makes (`-wal`, `-shm`, `-journal`, `-emqlock`, `-emqnode`,
 * `-emqwake`): what a test or a tool does to start again from nothing.
 * Only for a file no handle has open, in any process (a handle keeps its
 * locks on files that are gone, and its next write makes some again). A
 * file that is absent is not an error; each is attempted even when one
 * fails. EMQ_OK; EMQ_EIO when a file could not be removed (`errno` is the
 * first failure's: a directory in a side file's place gives EISDIR; a path
 * longer than any file's, ENAMETOOLONG); EMQ_EINVAL for a NULL or empty
 * path or ":memory:". Allocates nothing.
 */
int emq_remove_files(const char *path);

/**
 * The identity the file speaks (its {emq}:version, read now): `*out` is
 * the table's entry (a static string). EMQ_OK, or EMQ_EWIRE when another
 * writer removed or changed the stamp since the open.
 */
int emq_wire(emq_db *db, const char **out);
/**
 * Restamp the file with `wire`, an identity of emq_wire_table (else
 * EMQ_EINVAL, nothing changed), in one write transaction; `*was` (may be
 * NULL) receives the identity it had. Only the stamp changes: the
 * identities share every key, field and script. A read-only handle gets
 * EMQ_EREADONLY.
 */
int emq_set_wire(emq_db *db, const char *wire, const char **was);

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

/* ---------------------------------------- 6. Tier 1: the core queue */

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
int emq_lock_extend(emq_db *db, const char *q, const char *id, int64_t token,
                    int64_t lease_ms);

/**
 * T1.12 extend_locks: extend every (ids[i], tokens[i]) whose token matches,
 * all to one deadline NOW + `lease_ms`. `failed[i]` is set to 1 for each pair
 * not extended (missing row or token mismatch), else 0; `*nfailed` (may be
 * NULL) gets their count. n may be 0.
 */
int emq_lock_extend_many(emq_db *db, const char *q, size_t n,
                     const char *const *ids, const int64_t *tokens,
                     int64_t lease_ms, int *failed, size_t *nfailed);

/** T2.1 pause: set field `paused` of the queue's meta hash; claims answer
 *  EMQ_EMPTY while it is present. */
int emq_queue_pause(emq_db *db, const char *q);
/** T2.1 resume: delete the `paused` field. */
int emq_queue_resume(emq_db *db, const char *q);

/* ------------------------------------------------- 7. Tier 1: reads */

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

/* ----------------------------------- 8. the operator plane (Tier 2) */

/*
 * PROTOCOL.md §6.2. Each call is one transition (one transaction) over the
 * registry row of the same wire name (emq_call("drain", ...) answers the
 * wire reply). Host gates as everywhere: EMQ_EQUEUE, EMQ_EID, EMQ_EINVAL
 * (naming the argument), EMQ_ETOOBIG. Pause and resume are emq_queue_pause and
 * emq_queue_resume above.
 */

/**
 * T2.2 drain: delete every job of the pending set (row and logs), and of
 * the schedule too when `include_schedule`; the sets go. Active and dead
 * jobs, lanes, dedup and lock keys stay. `*removed` (may be NULL) gets the
 * number of members walked (an id in both sets counts twice). EMQ_OK.
 */
int emq_drain(emq_db *db, const char *q, int include_schedule,
              int64_t *removed);

/**
 * T2.3 obliterate: on a paused queue, delete at most `budget` (>= 1; the
 * wire's default is 1000) jobs — active ones first (only with `force`),
 * then pending, scheduled, dead and the lanes of ringed or paused groups,
 * each with its row, logs and lock key — and, once none is left, the
 * queue's structure keys (meta, metrics, ring, wake, limiter, repeats...).
 * Returns EMQ_OK (done), EMQ_MORE (the budget ran out: call again),
 * EMQ_ENOTPAUSED ("EMQSTATE not paused") or EMQ_EACTIVE ("EMQSTATE active
 * jobs present": active jobs without `force`); a refusal changes nothing.
 * Left by design: dedup keys, the flow outbox, streams, rows in no set.
 */
int emq_obliterate(emq_db *db, const char *q, int force, int64_t budget);

/**
 * T2.4 counts: for each of the `n` names ("pending", "active", "schedule",
 * "dead": the set's size; "completed", "failed": the metric counter) the
 * value into `values[i]`. Returns EMQ_OK, or EMQ_EREFUSED when a name is
 * none of those: emq_errmsg() is "unknown_state(<the first such name>)"
 * and nothing was read. n may be 0.
 */
int emq_counts(emq_db *db, const char *q, size_t n, const char *const *names,
               int64_t *values);

/** T2.5 job states, as the state lookup answers them. */
enum emq_state {
    EMQ_STATE_PENDING = 1,  /**< in the pending set                       */
    EMQ_STATE_ACTIVE,       /**< in the active set                        */
    EMQ_STATE_SCHEDULED,    /**< in the schedule                          */
    EMQ_STATE_DEAD,         /**< in the dead set                          */
    EMQ_STATE_AWAITING,     /**< a held flow parent ("awaiting_children") */
    EMQ_STATE_UNKNOWN,      /**< a row in no flat set (a lane job, too)   */
    EMQ_STATE_ABSENT        /**< no row and no set                        */
};
/** The wire string of an EMQ_STATE_* ("pending" ... "absent"), or NULL. */
const char *emq_state_name(int state);

/**
 * T2.5 get_job_state: the first of pending, active, schedule, dead that
 * holds `id`, else awaiting_children from the row, else unknown (a row)
 * or absent, into `*state` (EMQ_STATE_*). EMQ_OK.
 * (T2.5 get_job, the row itself, is emq_job_get.)
 */
int emq_job_state(emq_db *db, const char *q, const char *id, int *state);

/**
 * T2.6 get_metrics: `which` is "completed" or "failed"; `*count` gets the
 * counter (0 when absent), `*data_points` the length of the reserved data
 * list (either may be NULL). EMQ_OK.
 */
int emq_metrics_get(emq_db *db, const char *q, const char *which,
                    int64_t *count, int64_t *data_points);

/**
 * T2.7 the dedup read: the value parked under dedup id `did`
 * ([A-Za-z0-9._-]{1,255}). Returns EMQ_OK with `*value` (free with
 * emq_free; NUL-terminated, `*len` bytes, len may be NULL) or EMQ_ABSENT.
 */
int emq_dedup_get(emq_db *db, const char *q, const char *did, char **value,
                  size_t *len);

/** T2.8 update_data: replace the payload in any state. EMQ_OK, EMQ_GONE. */
int emq_job_update_data(emq_db *db, const char *q, const char *id,
                    const void *payload, size_t len);

/**
 * T2.9 update_progress: set the row's `progress` field (bytes) and publish
 * the event {"event":"progress","job":"<id>","progress":"<progress>"}
 * (JSON-S escaped) on emq:{q}:events (see emq_subscribe). EMQ_OK, or
 * EMQ_GONE (no row: nothing written, nothing published).
 */
int emq_job_update_progress(emq_db *db, const char *q, const char *id,
                        const void *progress, size_t len);

/**
 * T2.10 add_log: append `line` to the job's log list; with `keep` > 0 keep
 * only the last `keep` lines. `*count` (may be NULL) gets the wire's
 * answer: the new length, or `keep` when the trim cut the list. EMQ_OK, or
 * EMQ_GONE when the job has no row.
 */
int emq_job_add_log(emq_db *db, const char *q, const char *id, const void *line,
                size_t len, int64_t keep, int64_t *count);

/** A log line (emq_job_logs): `len` bytes at `p`, NUL-terminated. */
typedef struct emq_line {
    char *p;
    size_t len;
} emq_line;
void emq_lines_free(emq_line *lines, size_t n);

/**
 * T2.11 get_job_logs: every log line of the job, in order, into `*lines`
 * (`*n` of them; free with emq_lines_free). EMQ_OK (n may be 0), or
 * EMQ_GONE when the job has no row (even if lines linger).
 */
int emq_job_logs(emq_db *db, const char *q, const char *id,
                 emq_line **lines, size_t *n);

/**
 * T2.12 remove_job: remove the job from the four sets and delete its row
 * and logs; with `did` (NULL or "" for none), also the dedup key of `did`
 * when it holds this id. Returns EMQ_OK, EMQ_GONE (no row), or EMQ_ELOCKED
 * ("EMQLOCK job is locked": its lock key or an unexpired `lock` field; the
 * job stays). A grouped job's lane entry is left (D-9).
 */
int emq_job_remove(emq_db *db, const char *q, const char *id,
                   const char *did);

/**
 * T2.13 reprocess_job: a dead job back to pending (last_error cleared,
 * attempts kept; the pause is not consulted). EMQ_OK, EMQ_GONE (no row),
 * EMQ_ENOTDEAD ("EMQSTATE not dead").
 */
int emq_job_reprocess(emq_db *db, const char *q, const char *id);

/**
 * T2.14 claim_batch: claim up to `size` (> 0) pending jobs, oldest first,
 * all leased until one deadline NOW + `lease_ms`. `jobs` has room for
 * `size`; `*n` gets the number claimed (release each with emq_job_clear).
 * EMQ_OK, or EMQ_EMPTY (nothing pending, or the queue is paused).
 */
int emq_claim_batch(emq_db *db, const char *q, size_t size, int64_t lease_ms,
                    emq_job *jobs, size_t *n);

#define EMQ_DELAY_IN 0 /**< emq_delay: `ms` from now                         */
#define EMQ_DELAY_AT 1 /**< emq_delay: at absolute Unix ms `ms`              */
/**
 * T2.15 delay: with the current token, move the job from active to the
 * schedule at NOW + `ms` (EMQ_DELAY_IN) or at `ms` (EMQ_DELAY_AT); its
 * attempts stay (the next claim mints the next token). Returns EMQ_OK,
 * EMQ_GONE ("EMQSTALE job gone": no row), EMQ_ESTALE ("EMQSTALE delay
 * token mismatch") or EMQ_EKIND. Publishes `delayed` (see emq_subscribe).
 */
int emq_delay(emq_db *db, const char *q, const char *id, int64_t token,
              int64_t ms, int mode);

/**
 * T2.16 is_maxed: EMQ_OK while below the queue's concurrency ceiling
 * (meta field `concurrency`; none or 0 = no ceiling), EMQ_ERATE ("EMQRATE
 * at concurrency ceiling") at or above it. Advisory: no claim enforces it.
 */
int emq_queue_is_maxed(emq_db *db, const char *q);

/**
 * T2.16 get_rate_limit_ttl: with the limit `max_jobs` (0: the queue's
 * meta field `max`) positive and spent by the limiter key, `*ttl_ms` gets
 * the limiter's remaining TTL; otherwise 0. EMQ_OK.
 */
int emq_rate_limit_ttl_get(emq_db *db, const char *q, int64_t max_jobs,
                           int64_t *ttl_ms);

/** T2.16 get_global_rate_limit: the meta field `max` (0 when unset). */
int emq_rate_limit_get(emq_db *db, const char *q, int64_t *max);

/* --------------------------- 9. the operator plane: beyond the wire */

/** A member of a job set or lane with its score (emq_list). */
typedef struct emq_member {
    char *member;     /**< the bytes (a 14-byte id), NUL-terminated      */
    size_t len;
    int64_t score;    /**< 0 in pending, dead and lanes; the lease
                           deadline (active) or run-at (schedule), ms    */
} emq_member;
void emq_members_free(emq_member *m, size_t n);

/**
 * A page of a job set: `set` is "pending", "active", "schedule" or "dead"
 * (`g` NULL), or a lane (`g` the group id; `set` ignored). Skips `offset`
 * (>= 0) members from the head (lowest score, then bytes) or, with
 * `from_tail`, from the tail, and returns at most `count` (> 0) into
 * `*out` (`*n`; free with emq_members_free). One read transaction; the
 * cost grows with offset + count, not with the set. EMQ_OK.
 */
int emq_list(emq_db *db, const char *q, const char *set, const char *g,
             int64_t offset, int64_t count, int from_tail, emq_member **out,
             size_t *n);

/** One lane of a queue (emq_lanes). */
typedef struct emq_lane_info {
    char group[EMQ_ID_SIZE]; /**< the group id, NUL-terminated            */
    int64_t depth;           /**< jobs waiting in its lane                */
    int paused;              /**< the group is in the queue's paused set  */
} emq_lane_info;

/**
 * The lanes of queue `q` (the groups with a lane key), in byte order of
 * their ids, with depth and paused flag, in one read transaction: at most
 * `max` into `out[]` (`*n` of them); `*total` (may be NULL) gets the number
 * of lanes, counted past `max` too. Returns EMQ_OK, EMQ_EQUEUE, EMQ_EINVAL
 * (NULL n, or NULL out with max > 0), EMQ_EWRONGTYPE (a lane key or the
 * paused set of another type). The registry's tier-0 verb `lanes` (q,
 * count): [total, [[group, depth, paused], ...]].
 */
int emq_lanes(emq_db *db, const char *q, emq_lane_info *out, size_t max,
              size_t *n, size_t *total);

/** Everything about one job (emq_job_inspect). */
typedef struct emq_job_info {
    int state;             /**< EMQ_STATE_* (the T2.5 lookup)            */
    emq_field *fields;     /**< the row (NULL, nfields 0 when none)       */
    size_t nfields;
    int has_deadline;      /**< in the active set: ...                    */
    int64_t deadline_ms;   /**< ... its lease deadline                     */
    int has_run_at;        /**< in the schedule: ...                      */
    int64_t run_at_ms;     /**< ... its run-at                             */
    int64_t logs;          /**< log lines                                 */
    int locked;            /**< a lock key or an unexpired lock field     */
} emq_job_info;
void emq_job_info_clear(emq_job_info *info);

/**
 * Read a job's row, state, lease deadline or run-at (from the set scores),
 * log count and lock in one read transaction into `*info` (release with
 * emq_job_info_clear). EMQ_OK, or EMQ_GONE when it has no row (`*info` is
 * still filled: state, sets, logs).
 */
int emq_job_inspect(emq_db *db, const char *q, const char *id,
                    emq_job_info *info);

/**
 * Requeue every dead job of `q` (T2.13 on each), `batch` (> 0; e.g. 100)
 * per transaction, so the write lock is never held for more than one
 * batch. `*requeued` gets the jobs moved to pending, `*skipped` the dead
 * ids without a row (T2.13 answers gone and leaves them). Several
 * transactions: on a failure the batches before it stay applied; calling
 * again finishes the work. EMQ_OK.
 */
int emq_dead_requeue(emq_db *db, const char *q, int64_t batch,
                     int64_t *requeued, int64_t *skipped);

/* The operator's run-now and requeues (issue 34; doc/OPERATOR.md). Each is
 * one transaction made of the wire's own moves: T1.7's for a scheduled
 * job (its lane, or pending), T2.13's for a dead one. */

/**
 * Run scheduled jobs now (registry: run_now): each of the `n` (> 0) ids
 * that is in the schedule moves as T1.7 promote moves a due job; the
 * others are left. `verdicts` (may be NULL; room for n) gets 1 moved or 0
 * not scheduled per id, `*moved` (may be NULL) the number moved. EMQ_OK,
 * EMQ_EQUEUE, EMQ_EID (names the argument), EMQ_EINVAL.
 */
int emq_job_run_now(emq_db *db, const char *q, size_t n,
                    const char *const *ids, int *verdicts, int64_t *moved);

/**
 * Run the scheduled jobs due at or before `until_ms` now (registry:
 * run_due): T1.7 promote with until_ms in place of NOW, up to `batch`
 * (> 0) jobs in run-at order, in one transaction. `*moved` gets the count;
 * fewer than `batch` means none is left due before until_ms (call again
 * while it equals batch: each call is its own transaction). EMQ_OK.
 */
int emq_schedule_run_due(emq_db *db, const char *q, int64_t until_ms,
                         int64_t batch, int64_t *moved);

/**
 * Requeue (T2.13) up to `count` (> 0) dead jobs minted before `before_ms`
 * (Unix ms; ids carry their mint time, the keyspace keeps no time of
 * death), oldest first, in one transaction (registry: requeue_dead_before,
 * whose cursor argument pages on). `*requeued` and `*skipped` (dead ids
 * without a row, left dead) may be NULL. For the first `count` dead jobs
 * of any age use the registry's requeue_dead_batch. EMQ_OK.
 */
int emq_dead_requeue_before(emq_db *db, const char *q, int64_t before_ms,
                            int64_t count, int64_t *requeued,
                            int64_t *skipped);

/**
 * Replace the payload of a dead or scheduled (failed, waiting for its
 * retry) job with `len` bytes at `payload` and requeue it now, in one
 * transaction (registry: requeue_edited): a dead job as T2.13 (last_error
 * deleted, pending), a scheduled one as T1.7 (its lane, or pending);
 * attempts are kept. EMQ_OK, EMQ_GONE (no row), EMQ_ENOTDEAD ("EMQSTATE
 * not dead or scheduled": nothing changed), EMQ_ETOOBIG.
 */
int emq_job_requeue_edited(emq_db *db, const char *q, const char *id,
                           const void *payload, size_t len);

/* ------------------------- 10. the operator plane: lifecycle events */

/*
 * Events (PROTOCOL.md T2.9, T2.17; doc/EVENTS.md). A transition that
 * publishes writes its message into the file's event log inside its own
 * transaction, so an event exists exactly when its transition committed,
 * and the log's order is commit order across every handle and process on
 * the file. Published: `progress` by update_progress, and after the reply
 * `completed` (complete answering ok), `failed` (retry answering dead,
 * member "error"), `delayed` (delay answering ok, member "run_at"); the
 * message bytes are the wire's (T2.9's JSON-S form, T2.17's form).
 *
 * A subscription reads the log from its cursor. Its callback runs for the
 * events of its queue (or every queue) in commit order: on the handle that
 * committed them, before that call returns; on any other handle (another
 * thread's, another process's), at its next emq_sub_poll / emq_sub_wait.
 * Nothing is lost while the subscriber keeps up with the retention (10000
 * events, one day, by default: emq_events_retention); events pruned
 * before it read them are counted by emq_sub_lost. A subscriber that was
 * not running gets, from EMQ_SUB_NOW, only what is committed after it
 * subscribed, or, from a cursor it saved, every event still retained
 * after it. Events are not keys: no export, import or digest sees them.
 */

/** One event, as a callback sees it (every pointer valid during the
 *  callback only; strings are NUL-terminated after their length). */
typedef struct emq_event {
    int64_t seq;             /**< its place in the file's commit order    */
    int64_t at_ms;           /**< NOW of the transition that published it */
    const char *channel;     /**< "emq:{q}:events"                         */
    size_t channel_len;
    const char *queue;       /**< q (inside `channel`, not terminated)     */
    size_t queue_len;
    const char *name;        /**< "completed", "failed", "delayed",
                                  "progress", or an emq_publish name       */
    size_t name_len;
    const char *job;         /**< the job id                               */
    size_t job_len;
    const char *message;     /**< the published bytes, exactly             */
    size_t message_len;
} emq_event;

/** A subscription's callback. It may call emqlite on the same handle (the
 *  events that call publishes are delivered after this callback returns),
 *  but not emq_unsubscribe nor emq_close: end subscriptions once delivery
 *  has returned. */
typedef void (*emq_event_fn)(void *ctx, const emq_event *ev);

typedef struct emq_sub emq_sub;

/** emq_subscribe's `after`: only events committed after the call. */
#define EMQ_SUB_NOW (-1)

/**
 * Subscribe on `db` to the events of queue `q` (NULL: every queue),
 * starting after sequence number `after` (0: every retained event;
 * EMQ_SUB_NOW: from now on; or a cursor saved from emq_sub_cursor).
 * `fn(ctx, ev)` receives them. `*out` is released with emq_unsubscribe
 * (emq_close releases what is left). A subscription belongs to its handle
 * and its thread. Returns EMQ_OK, EMQ_EQUEUE, EMQ_EINVAL, EMQ_ENOMEM.
 */
int emq_subscribe(emq_db *db, const char *q, int64_t after, emq_event_fn fn,
                  void *ctx, emq_sub **out);

/**
 * Deliver every committed event after the cursor, up to `max` (0: no
 * limit), in order; `*delivered` (may be NULL) gets how many. EMQ_OK, or a
 * read failure (EMQ_EBUSY, EMQ_EIO, EMQ_ENOMEM: the cursor stays where
 * delivery stopped).
 */
int emq_sub_poll(emq_sub *sub, size_t max, size_t *delivered);

/**
 * As emq_sub_poll, but when nothing is there yet, wait for another
 * handle's commit for up to `timeout_ms` of real time (it polls, with
 * naps from 1 to 32 ms). EMQ_OK (something delivered) or EMQ_EMPTY.
 */
int emq_sub_wait(emq_sub *sub, int64_t timeout_ms, size_t *delivered);

/** The last sequence number the subscription looked at (save it to resume
 *  with emq_subscribe(..., after = it, ...)). */
int64_t emq_sub_cursor(const emq_sub *sub);
/** Events of any queue pruned from the log before this subscription read
 *  them. */
int64_t emq_sub_lost(const emq_sub *sub);
/** End a subscription (NULL is ignored). */
void emq_unsubscribe(emq_sub *sub);

/**
 * T2.17 publish on emq:{q}:events, in a transaction of its own, the
 * message {"event":"<event>","job":"<id>"[,"<keys[i]>":"<values[i]>"]...}
 * (values escaped: \ as \\, then " as \"). `event` and the keys match
 * [A-Za-z0-9_.-]{1,64}; `id` passes GATE-ID. EMQ_OK.
 */
int emq_publish(emq_db *db, const char *q, const char *event,
                const char *id, size_t n, const char *const *keys,
                const void *const *values, const size_t *value_lens);

/**
 * Retention of the event log, applied by this handle's publishes: at most
 * `keep` events and none older than `max_age_ms` (0 for either: the
 * default, 10000 events and 86400000 ms). EMQ_OK, EMQ_EINVAL.
 */
int emq_events_retention(emq_db *db, int64_t keep, int64_t max_age_ms);

/* -------------------------------------------------------- 11. lanes */

/*
 * Fair lanes (PROTOCOL.md §6.3): tenants sharing one queue each get a lane,
 * the per-group pending set "emq:{q}:g:<group>:pending", and grouped claims
 * serve the lanes in turn. The ring "emq:{q}:ring" holds exactly the groups
 * that may be served now (lane non-empty, group not paused, in-flight count
 * below its limit); every grouped claim rotates it one step first, so one
 * heavy tenant cannot starve the others. A group is named by any valid
 * branded id (EMQ_EID "a lane is named by a valid branded id" otherwise;
 * "PRT" by convention). Lane jobs are completed, retried and extended with
 * the Tier 1 calls (their group's in-flight count is released there);
 * retried jobs wait in the flat schedule and promote returns them to their
 * lane. The flat claim, browse and pending_size never see lane jobs.
 *
 *     emq_lane_enqueue(db, "mail", tenant, id, "hi", 2);  // EMQ_ENQUEUED
 *     emq_job job;
 *     char group[EMQ_ID_SIZE];
 *     if (emq_lane_claim(db, "mail", 30000, &job, group) == EMQ_OK) {
 *         ... work ...
 *         emq_complete(db, "mail", job.id, job.attempts);
 *         emq_job_clear(&job);
 *     }
 */

/**
 * T3.1 lane enqueue: admit job `id` with `payload` into group `g`'s lane
 * and offer the group to the ring (with a wake token) unless it is paused,
 * at its limit or already there. Returns EMQ_ENQUEUED; EMQ_DUPLICATE when
 * a row `id` exists (flat or grouped; nothing changes); EMQ_EKIND for a
 * non-JOB id. Host gates: EMQ_EQUEUE, EMQ_EID (id or group), EMQ_ETOOBIG.
 */
int emq_lane_enqueue(emq_db *db, const char *q, const char *g, const char *id,
                     const void *payload, size_t len);

/**
 * T3.2 lane claim: rotate the ring one step and claim the oldest job of the
 * group rotated onto, leased to NOW + `lease_ms` (> 0). On EMQ_OK `*job`
 * holds it (release with emq_job_clear) and `group` (EMQ_ID_SIZE bytes)
 * its group. EMQ_EMPTY when the queue is paused (T2.1), the ring is empty,
 * or the rotated lane was empty — that group then leaves the ring and the
 * next call rotates on, even if other lanes hold work. EMQ_ECORRUPT for a
 * ring or lane member that is not a 14-byte id (nothing changes);
 * EMQ_EINVAL for a NULL `job` or `group`.
 */
int emq_lane_claim(emq_db *db, const char *q, int64_t lease_ms, emq_job *job,
                   char group[EMQ_ID_SIZE]);

/** The jobs of one weighted or batch claim, all of one group. Zero it
 *  before use; release with emq_lane_batch_clear(). */
typedef struct emq_lane_batch {
    emq_job *jobs;               /**< n claimed jobs, oldest first          */
    size_t n;
    char group[EMQ_ID_SIZE];     /**< their group                           */
} emq_lane_batch;

/** Free the jobs of `b` and zero it (NULL is ignored). */
void emq_lane_batch_clear(emq_lane_batch *b);

/**
 * T3.3 weighted claim: rotate once and claim k = min(weight, depth, limit -
 * in-flight) jobs of that group (weight: emq_lane_weight, 1 by default),
 * all on one deadline NOW + `lease_ms`. On EMQ_OK `b` holds them (n >= 1;
 * the jobs and their payloads are the caller's: emq_lane_batch_clear).
 * EMQ_EMPTY as emq_lane_claim, or when the group has no headroom left
 * under its limit (it leaves the ring); `b` is then empty. A NULL `b` is
 * EMQ_EINVAL.
 */
int emq_lane_wclaim(emq_db *db, const char *q, int64_t lease_ms,
               emq_lane_batch *b);

/**
 * T3.4 grouped batch claim: as emq_lane_wclaim with k = min(depth, limit -
 * in-flight) — the whole rotated lane when the group has no limit.
 */
int emq_lane_bclaim(emq_db *db, const char *q, int64_t lease_ms,
               emq_lane_batch *b);

/** T3.5 weight: set group `g`'s weight (`w` >= 1, else EMQ_EINVAL) for
 *  weighted claims. Returns EMQ_OK; the ring is not changed. */
int emq_lane_weight(emq_db *db, const char *q, const char *g, int64_t w);

/** T3.6 lane pause: group `g` leaves the ring and is not offered again
 *  until resumed; its lane and in-flight jobs stay. Returns EMQ_OK. */
int emq_lane_pause(emq_db *db, const char *q, const char *g);
/** T3.7 lane resume: unpause `g` and offer it when its lane holds work.
 *  Returns EMQ_OK. */
int emq_lane_resume(emq_db *db, const char *q, const char *g);

/**
 * T3.8 limit: set group `g`'s concurrency ceiling to `n` (> 0). A group at
 * or above it leaves the ring; below it an unpaused group with work is put
 * back on the ring with a wake token. Returns EMQ_OK.
 */
int emq_lane_limit(emq_db *db, const char *q, const char *g, int64_t n);

/**
 * T3.9 reassign: move job `id`, waiting in its lane, to group `dst`'s lane
 * (its row's group rewritten; dst offered unless paused; an emptied source
 * lane leaves the ring). Returns EMQ_OK; EMQ_NOOP when it is already in
 * `dst` (whatever its state); EMQ_GONE when there is no row or the row has
 * no group; EMQ_NOTPENDING when it is not waiting in its lane (claimed,
 * scheduled, dead). There is no numeric priority: "more urgent" is a lane.
 */
int emq_reassign(emq_db *db, const char *q, const char *id, const char *dst);

/**
 * T3.10 lane drain: delete every job waiting in group `g`'s lane (rows and
 * logs), the lane itself, and take `g` off the ring. `*count` (may be NULL)
 * receives the number deleted. The group's active jobs, in-flight count,
 * pause, limit and weight stay. Returns EMQ_OK.
 */
int emq_lane_drain(emq_db *db, const char *q, const char *g, int64_t *count);

/**
 * T3.11 reap_group: of the first `limit` (> 0; the protocol's default is
 * 100) lapsed leases of the queue, return those of group `g` to its lane
 * (in-flight count released, offered unless paused); leases of other
 * groups and ungrouped ones are left for emq_reap. `*count` (may be NULL)
 * receives the number recovered. Returns EMQ_OK.
 */
int emq_lane_reap(emq_db *db, const char *q, const char *g, int64_t limit,
                  int64_t *count);

/** T3.12 depth: the number of jobs waiting in group `g`'s lane into
 *  `*depth` (0 for a lane never filled). Returns EMQ_OK. */
int emq_lane_depth(emq_db *db, const char *q, const char *g, int64_t *depth);

/**
 * T3.12 lane_depths: the depth of each of the `n` groups into `depths[i]`,
 * in one read transaction (a repeated group reads the same depth). n may
 * be 0. Returns EMQ_OK.
 */
int emq_lane_depths(emq_db *db, const char *q, size_t n,
                    const char *const *groups, int64_t *depths);

/* Tenant names for lane groups (issue 34; doc/OPERATOR.md "Tenant names"):
 * a stable, file-wide mapping from a readable name to a PRT group id, kept
 * beside the keyspace (host configuration), never in it. */

#define EMQ_TENANT_NAME_MAX 128 /**< bytes in a tenant name                */

/**
 * The group id of tenant `name` (1..EMQ_TENANT_NAME_MAX bytes of A-Z a-z
 * 0-9 . _ : @ -, not beginning with 3 capitals as a branded id does) into
 * `group`. With `create`
 * the first use mints a PRT id and keeps it, in one transaction; the name
 * keeps that id for the file's life. EMQ_OK, EMQ_GONE (no such name and
 * no create), EMQ_EINVAL (the name's rule, in emq_errmsg).
 */
int emq_tenant_group(emq_db *db, const char *name, int create,
                     char group[EMQ_ID_SIZE]);
/** The name of group id `group` into `name` (room for `size` bytes with
 *  the NUL). EMQ_OK, EMQ_GONE (no name), EMQ_EID, EMQ_EINVAL. */
int emq_tenant_name(emq_db *db, const char *group, char *name, size_t size);
/** Called once per tenant; nonzero stops the walk. */
typedef int (*emq_tenant_fn)(void *ctx, const char *name, const char *group);
/** Every tenant name and its group id, in byte order of the names, in one
 *  read transaction. EMQ_OK. */
int emq_tenant_list(emq_db *db, emq_tenant_fn fn, void *ctx);

/* -------------------------------------------------------- 12. flows */

/*
 * Flows (PROTOCOL.md §6.4): a parent job held in `awaiting_children` until
 * its children finish, children in the parent's queue or in others, and
 * trees of them. Same-queue fan-in happens inside the child's complete or
 * retry; a child in another queue leaves an entry in its queue's outbox,
 * which emq_flow_sweep() on that queue delivers to the parent.
 * doc/FLOWS.md describes the procedures, their transactions and recovery.
 */

#define EMQ_FLOW_FP 0 /**< parent_policy `fp`: the child's death fails the
                           parent (the default)                          */
#define EMQ_FLOW_ID 1 /**< parent_policy `id`: the child's death is ignored:
                           the dependency counts as satisfied            */

/** A node of a flow tree: the root is the parent. The library only reads
 *  it during the call. */
typedef struct emq_flow_node {
    const char *id;            /**< a branded JOB id (GATE-ID; KIND)      */
    const void *payload;       /**< its payload, `len` bytes              */
    size_t len;
    const char *queue;         /**< its queue; NULL: its parent's (for the
                                    root: the `q` of the call)           */
    int policy;                /**< EMQ_FLOW_FP or EMQ_FLOW_ID (ignored on
                                    the root)                            */
    const struct emq_flow_node *children; /**< n_children nodes          */
    size_t n_children;
} emq_flow_node;

/**
 * Add the flow `root` (its queue is `q`) with one call: T4.1 when every
 * child is in q and none has children (one transaction: the parent held
 * with dependencies = N, each child pending with its parent_policy); T4.4
 * when a child lives in another queue and T4.5 for a deeper tree (one
 * transaction per node, parent first, depth first, in spec order: a node
 * with children is held with its link, a leaf admitted with its link).
 * Existing rows are overwritten field by field (D-14); a root without
 * children is held forever with dependencies 0.
 * Returns EMQ_OK; EMQ_EKIND when an id is not JOB-namespaced (a flat flow
 * then wrote nothing; a cross-queue or nested one keeps the nodes landed
 * before it, their parents held: fail-closed); EMQ_EREFUSED for a tree
 * deeper than 8 levels ("flow_too_deep(8)") or with an id twice
 * ("flow_cycle(<id>)"), nothing written. Host gates: EMQ_EQUEUE, EMQ_EID,
 * EMQ_ETOOBIG, EMQ_EINVAL (NULL node or children). A failure (EMQ_EBUSY,
 * EMQ_EIO, ...) after the first transaction of a multi-step add leaves it
 * journaled: emq_flow_recover() finishes it — do not add it again.
 */
int emq_flow_add(emq_db *db, const char *q, const emq_flow_node *root);

/**
 * T4.6 add_bulk: add `n` flows (roots in q) in order, as emq_flow_add adds
 * each; every id of every flow is gated before anything is written (one bad
 * id refuses the whole bulk). `verdicts[i]` (may be NULL) receives flow i's
 * result (EMQ_OK, EMQ_EKIND, EMQ_EREFUSED); a refused flow does not stop
 * the rest. Returns EMQ_OK, a host gate's code, or a failure (as for
 * emq_flow_add, a multi-step bulk is journaled for emq_flow_recover()).
 */
int emq_flow_add_bulk(emq_db *db, const char *q, const emq_flow_node *roots,
                      size_t n, int *verdicts);

/**
 * T4.10 deliver_flow_completions: one sweep pass over the outbox of the
 * children's queue `q`, in one transaction: deliver the first `batch`
 * (> 0) entries in order to their parents (T4.11 for a completion, T4.12
 * for a death, re-emitting the parent's death one level up when the
 * delivery killed it), stopping at the first malformed entry or one whose
 * parent id or queue fails its gate, then drop the delivered entries.
 * Re-delivering an entry changes nothing. `*delivered` (may be NULL)
 * receives the count. Returns EMQ_OK.
 */
int emq_flow_sweep(emq_db *db, const char *q, int64_t batch,
                   int64_t *delivered);

/**
 * Finish every multi-transaction flow add (emq_flow_add, emq_flow_add_bulk)
 * that a crash or a failure cut between two of its transactions: each lands
 * its remaining nodes as the interrupted call would have. Safe at any time
 * and from any handle (a step already taken is never taken again); call it
 * at start-up, or after a flow add returned a failure. `*finished` (may be
 * NULL) receives the number of adds finished. Returns EMQ_OK, EMQ_ECORRUPT
 * (a journal row this version cannot read) or a failure (call it again).
 */
int emq_flow_recover(emq_db *db, int64_t *finished);

/**
 * T4.8 children_values: the fields of the parent's `processed` hash (child
 * id -> the child's result; its own id when it completed without one), in
 * byte order of child ids. `*fields` receives `*n` pairs (free with
 * emq_fields_free; NULL and 0 when none). Returns EMQ_OK.
 */
int emq_flow_children_values(emq_db *db, const char *q, const char *parent,
                             emq_field **fields, size_t *n);
/** T4.8 ignored_failures: as emq_flow_children_values over `unsuccessful`
 *  (child id -> error of an EMQ_FLOW_ID child's death). */
int emq_flow_ignored_failures(emq_db *db, const char *q, const char *parent,
                              emq_field **fields, size_t *n);
/** T4.8 dependencies: the parent's outstanding children into `*n` (0 when
 *  the counter is absent; it can go below 0, D-14). Returns EMQ_OK. */
int emq_flow_dependencies(emq_db *db, const char *q, const char *parent,
                          int64_t *n);

/** One node of emq_flow_tree(). Strings are NUL-terminated copies. */
typedef struct emq_flow_info {
    int level;             /**< 1: the parent asked about; its children 2 */
    char *id;              /**< the node's id (a child recorded by a raw
                                write may not be 14 bytes: see id_len)    */
    size_t id_len;
    char *queue;           /**< its queue; NULL when its row is gone and
                                nothing names it                          */
    char *state;           /**< its row's state, "completed" (processed,
                                row gone), or NULL (no row)                */
    int has_dependencies;  /**< 1 when it has a dependencies counter      */
    int64_t dependencies;
    char *outcome;         /**< "processed", "failed", "ignored",
                                "in_outbox" (not yet delivered), or NULL */
    char *value;           /**< the recorded result or error, or NULL     */
    size_t value_len;
} emq_flow_info;

/**
 * The flow below `parent` in q, in one read transaction: the parent, then
 * depth first each child in id order (found by its row's link, by its
 * field in the parent's processed / failed / unsuccessful hash, or by an
 * undelivered outbox entry) followed by its own children. Scans every job
 * row of the file: an operator's read. `*nodes` receives `*n` nodes (free
 * with emq_flow_tree_free). Returns EMQ_OK (a parent without a row is one
 * node with a NULL state).
 */
int emq_flow_tree(emq_db *db, const char *q, const char *parent,
                  emq_flow_info **nodes, size_t *n);
void emq_flow_tree_free(emq_flow_info *nodes, size_t n);

/* The flow protocol steps (emq_flow_enqueue, _hold, _child, _set_policy,
 * _set_link, _deliver, _fail_deliver, _outbox_read, _outbox_trim, _reemit)
 * are declared in emqlite_protocol.h. */

/* ------------------------------------------------------ 13. streams */

/*
 * Tier 5 streams (PROTOCOL.md §6.5, T5.1-T5.7): the stream of queue `q`
 * named `name` is the key "emq:{q}:stream:<name>" (a Valkey stream). A
 * stream name is 1..255 bytes without NUL or ':' (D-17); group and consumer
 * names and entry ids are C strings. A field list is `nfv` byte strings,
 * alternating name and value: fv[i] of fvlen[i] bytes (fvlen may be NULL
 * for NUL-terminated strings); nfv must be even (XADD refuses an odd
 * list: EMQ_EENGINE, "ERR wrong number of arguments for 'xadd' command",
 * nothing written). Records are appended under
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
                                  every field but the first `id`, each name
                                  once with its first value                */
    size_t nfields;
    int gone;                /**< a pending entry whose stream entry was
                                  trimmed or deleted (no fields)          */
} emq_stream_entry;

/** Free `n` entries returned by a stream call (NULL is ignored). */
void emq_stream_entries_free(emq_stream_entry *e, size_t n);

/**
 * T5.2 append: mint an EVT id from the handle's clock (HOST-NOW) and append
 * the record [id, <id>, fields...] under entry_id(id). The id is minted
 * inside the append's write transaction, so appends from any number of
 * handles and processes land in order (one whose fresh id would sort below
 * a top at most 1 s ahead is minted again above it). `id_out` (may be
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
 * T5.2 / D-15 append_batch: append each record in order as
 * emq_stream_append does (its id minted inside its own transition), one
 * transition each (not atomic as a set).
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
 *  many were pending. n = 0 is XACK's own error: EMQ_EENGINE, "ERR wrong
 *  number of arguments for 'xack' command". */
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
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
    int64_t min_idle_ms;   /**< autoclaim threshold (30000)                */
    int64_t beat_ms;       /**< the blocking read's wait (1000)            */
    int64_t count;         /**< entries per read and autoclaim (100)       */
    int64_t rounds;        /**< autoclaim + read rounds to run (0: until
                                *stop is set)                             */
    volatile int *stop;    /**< NULL, or a flag ending the loop when set   */
} emq_consumer_options;
void emq_consumer_options_init_size(emq_consumer_options *o,
                                    size_t size);
#define emq_consumer_options_init(o) \
    emq_consumer_options_init_size((o), sizeof *(o))

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

/* --------------------------------------- 14. scheduling and workers */

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
 * (a template above max_payload) is skipped and stays due. An outbox
 * entry the delivery cannot take (malformed, or a parent id or queue failing
 * its gate), which would stop every pass at it, is moved behind the others
 * and the delivery goes on (doc/FLOWS.md); the sweep then still answers
 * EMQ_OK, and emq_errmsg() names the entries set aside. Returns EMQ_OK
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
 * stall on its row; at `max_stalled` (> 0) stalls it is dead-lettered with
 * last_error "stalled", otherwise returned to pending (a grouped job to its
 * lane, offered unless the lane is paused). Grouped jobs free their
 * in-flight slot either way. `*out` may be NULL. EMQ_EINVAL when
 * max_stalled or limit is not positive.
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
emq_lock_timing emq_lock_timing_compute(int64_t lease_ms, double ratio,
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

/**
 * Deterministic waiting, the other half of the test clock (emq_clock_fn):
 * a waiting claim under a test clock never has to sleep. `fn` is called
 * before each blocking wait of emq_claim_wait on this handle with the wait
 * it is about to make, in the handle's clock's milliseconds: up to the
 * timeout, the earliest scheduled run-at or the earliest lease deadline,
 * whichever is first (-1: none of them, no bound). Typically it advances
 * the test clock by `wait_ms` and returns 1; it may also write through
 * another handle. It returns
 *   1    skip the wait and look again (at the clock's new time),
 *   0    make the real wait (a write made inside the hook, or by anyone
 *        after the look, ends it at once; it is bounded by `wait_ms` of
 *        real time, or not at all when -1),
 *   < 0  give up: emq_claim_wait returns EMQ_EMPTY.
 * While a hook is installed the timeout runs on the handle's clock only
 * (real time no longer bounds it: the hook is the time). Without one, the
 * timeout also runs on real time, so a pinned clock still returns once the
 * real time spent reaches `timeout_ms`. NULL removes the hook.
 */
typedef int (*emq_wait_fn)(void *ctx, emq_db *db, int64_t wait_ms);
void emq_set_wait_hook(emq_db *db, emq_wait_fn fn, void *ctx);

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
int emq_policy_retry(emq_db *db, const char *q, const char *id,
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
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
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
    int lanes;                   /**< 1: claim from the queue's lanes only
                                      (the ring's turn, fair across
                                      groups), never its flat pending set;
                                      0 (default): both, taking turns    */
    const char *worker_name;     /**< the name the job history records
                                      with this pool's claims (at most 64
                                      bytes; NULL: none, as
                                      emq_history_worker)               */
} emq_worker_options;

/** Fill `w` with the defaults documented on each field. */
void emq_worker_options_init_size(emq_worker_options *o, size_t size);
#define emq_worker_options_init(o) \
    emq_worker_options_init_size((o), sizeof *(o))

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

/* ---------------------------------- 15. transfer: export and import */

/**
 * A sink for export bytes: write `n` bytes from `p`; return 0 on success,
 * nonzero to abort the export (which then returns EMQ_EIO).
 */
typedef int (*emq_write_fn)(void *ctx, const void *p, size_t n);

/** Export options; initialise with emq_export_options_init(). */
/** What a transfer says beside its report, one fact a call (the reports
 *  keep their layout: new facts come through here). */
enum {
    EMQ_NOTE_WIRE = 1,    /**< the identity spoken: `text` (export, push: the
                               target's, or the one it was stamped with;
                               pull: the one the file keeps; verify: the
                               one the file was compared as)            */
    EMQ_NOTE_UNHELD = 2,  /**< pending entries of trimmed stream entries
                               in stream `key`, group `group`: `count`
                               records the other side cannot hold (push:
                               Valkey has no command to create them;
                               verify: the file holds them, the server
                               not, or the reverse) — the one known
                               difference of a transfer               */
    EMQ_NOTE_OTHER_QUEUE = 3, /**< verify: an EchoMQ queue `text` on the
                               server that the file does not hold (not
                               compared; `count`: its keys)             */
    EMQ_NOTE_SKIPPED = 4  /**< push with `resume`: `count` keys of the
                               export the target already held equal,
                               left out of the stream (the report's
                               `keys` less these were sent)             */
};

typedef struct emq_transfer_note {
    int kind;              /**< EMQ_NOTE_*                               */
    const char *text;      /**< NUL-terminated                           */
    const void *key;       /**< EMQ_NOTE_UNHELD: the stream key          */
    size_t klen;
    const void *group;     /**< EMQ_NOTE_UNHELD: the group name          */
    size_t glen;
    uint64_t count;
} emq_transfer_note;

typedef void (*emq_note_fn)(void *ctx, const emq_transfer_note *n);

typedef struct emq_export_options {
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
    const char *const *queues; /**< export only these queues' keys (plus
                                    "{emq}:version"); NULL: every key     */
    size_t n_queues;           /**< entries in `queues`                   */
    int by_slot;               /**< 1: order keys by (cluster slot, name)
                                    and wrap each slot's keys in MULTI ..
                                    EXEC; 0 (default): plain byte order  */
    const char *wire;          /**< the identity the stream's fence states
                                    (and the digest's version record): an
                                    entry of emq_wire_table (else
                                    EMQ_EINVAL); NULL (default): the
                                    file's own                           */
    emq_note_fn note;          /**< may be NULL: EMQ_NOTE_UNHELD for each
                                    stream and group whose pending records
                                    of trimmed entries the stream leaves
                                    out (Valkey cannot hold them)        */
    void *note_ctx;
} emq_export_options;

/** Fill `o` with the defaults: every key, byte order. */
void emq_export_options_init_size(emq_export_options *o, size_t size);
#define emq_export_options_init(o) \
    emq_export_options_init_size((o), sizeof *(o))

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

/** Import options; initialise with emq_import_options_init(). */
typedef struct emq_import_options {
    size_t size;  /**< the caller's sizeof, set by the init (the ABI rule) */
    int unchecked;  /**< 1: skip emq_check's rules on the result (forensic
                         copies); syntax, key grammar, types and the
                         version fence are always enforced             */
    int aof;        /**< 1: the stream is an AOF Valkey wrote (a rewrite,
                         an incremental file, the parts of a multi-part
                         AOF fed in the manifest's order): besides an
                         export's commands it may hold HMSET, DEL, UNLINK,
                         PEXPIRE, PERSIST, HSETNX, HDEL, HINCRBY,
                         INCR[BY], DECR[BY], LPUSH, LREM, LPOP, RPOP,
                         LTRIM, LMOVE, ZREM, ZPOPMIN and SREM, applied as
                         Valkey applies them (doc/EXPORT.md §2); the
                         result is judged as every import's. 0
                         (default): an export's commands only          */
    int format;     /**< what the stream is: EMQ_IMPORT_EXPORT (the
                         default: an emq_export, which must end with its
                         end record) or EMQ_IMPORT_RAW (a bare command
                         stream, e.g. hand-written: nothing marks its end,
                         so a cut at a command boundary goes unseen; an end
                         record, when present, is still verified). An AOF
                         (`aof` 1) needs no end record either.          */
} emq_import_options;

/** emq_import_options.format (doc/EXPORT.md §2). */
enum {
    EMQ_IMPORT_EXPORT = 0, /**< an emq_export: its end record is required */
    EMQ_IMPORT_RAW = 1     /**< a bare command stream: no end record needed */
};

/** Fill `o` with the defaults: checked, format EMQ_IMPORT_EXPORT. */
void emq_import_options_init_size(emq_import_options *o, size_t size);
#define emq_import_options_init(o) \
    emq_import_options_init_size((o), sizeof *(o))

/**
 * Import an emq_export's RESP command stream into the file in one write
 * transaction, checked. The stream must end with the export's end record
 * (ECHO "emqlite-export-end 1 commands=C bytes=B xxh3=H": the commands,
 * bytes and XXH3-64 of everything before it) and hold nothing after it: a
 * stream cut anywhere, or whose record does not match what came before, is
 * refused with EMQ_EPROTO naming the byte where it ends. A bare command
 * stream imports through emq_import_begin with format EMQ_IMPORT_RAW, an
 * AOF Valkey wrote with `aof` set. Accepted: SET
 * key value [PXAT ms], HSET, ZADD (bare score/member pairs), RPUSH, SADD,
 * PEXPIREAT, HPEXPIREAT key ms FIELDS n f..., and SELECT, MULTI and EXEC,
 * which are ignored. Commands apply as Valkey applies them, on top of what
 * the file holds. The stream must set "{emq}:version" to exactly
 * "echomq:4.0.0": otherwise (or without such a SET) EMQ_EWIRE. Malformed or
 * truncated RESP, an unknown command, bad arguments, or a key outside the
 * EchoMQ grammar (or of the wrong type for its name) give EMQ_EPROTO with a
 * message naming the byte offset of the refused frame.
 * Then every queue the stream wrote is judged, before the commit, by the
 * rules emq_check applies (the job sets' members and scores, counters,
 * rows' states against the sets, expiries, ...): a violation refuses the
 * import with EMQ_EPROTO, naming the rule, the key and the offset of the
 * last command that wrote that key. On any failure nothing is applied.
 * `sum` (may be NULL) receives the counts and the digest of the file after
 * the import. Equivalent to emq_import_begin (default options), one
 * emq_import_feed and emq_import_finish.
 */
int emq_import(emq_db *db, const void *bytes, size_t len,
               emq_transfer_summary *sum);

/** A streaming import: emq_import fed in pieces. */
typedef struct emq_importer emq_importer;

/**
 * Start an import on `db` with options `opt` (NULL: the defaults): opens the
 * write transaction (waiting up to the busy timeout, then EMQ_EBUSY) and
 * reads the clock once. Until emq_import_finish or emq_import_abort every
 * other call on `db` fails (the transaction is the import's), and other
 * writers of the file wait. On success *out is the importer; on failure
 * *out is NULL and nothing is held.
 */
int emq_import_begin(emq_db *db, const emq_import_options *opt,
                     emq_importer **out);
/**
 * Feed the next `len` bytes of the stream, split anywhere: every complete
 * frame is checked and applied; a partial one waits for the next bytes.
 * Returns EMQ_OK, or the refusal emq_import would give (message on the
 * handle), after which the import is rolled back and every later feed or
 * finish returns the same code.
 */
int emq_import_feed(emq_importer *im, const void *bytes, size_t len);
/**
 * End of the stream: a partial last frame is refused as truncated, the fence
 * must have been seen, the written queues are judged (unless unchecked),
 * and the transaction commits. `sum` (may be NULL) as for emq_import. Frees
 * the importer whatever the result.
 */
int emq_import_finish(emq_importer *im, emq_transfer_summary *sum);
/** Roll back and free the importer (NULL is ignored). */
void emq_import_abort(emq_importer *im);

/**
 * The logical digest of the file's live keyspace (doc/EXPORT.md), filtered
 * like an export with `opt` (NULL: every key), in one read transaction;
 * `sum->commands` and `sum->bytes` are 0.
 */
int emq_digest(emq_db *db, const emq_export_options *opt,
               emq_transfer_summary *sum);

/* --------------------------------- 16. check: the invariant checker */

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
                              "score", "counter", "expiry", "ring", "wake",
                              "row", "state", "state-set", "outbox",
                              "repeat", "read"
                              (violations);
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
 * are decimal integers (attempts and counts in [0, 2^63-1)); expiries only
 * on lock, de: and limiter keys and a row's lock field; every job row's
 * `state` is one of the five and the set it names holds the id. These are
 * the rules emq_import judges the queues it writes by (engine/check/rules.c).
 * The tolerated states are reported as notes; doc/RELIABILITY.md lists
 * each with the transition that produces it.
 * Never writes. `*nviolations` (may be NULL) receives the number of
 * violations (notes are not counted).
 * Returns EMQ_OK (no violation), EMQ_ECORRUPT (at least one), or EMQ_EBUSY,
 * EMQ_EIO, EMQ_ENOMEM when the check could not run to its end (a page that
 * could not be read for one of those reasons is not reported as damage).
 */
int emq_check(emq_db *db, emq_check_fn cb, void *ctx, size_t *nviolations);

/* ----------------------------- 16b. job history and retention (host) */
/*
 * Host-side, beside the keyspace and never in it (doc/HISTORY.md): no key
 * holds them, so an export to Valkey, a digest and emq_check are the same
 * with history on or off. Every write transition records what it did to
 * each job it touched, at the transition's NOW (the handle's clock), in
 * the transition's own transaction. Completed and dead jobs are kept
 * (payload, attempts, last error, result) for a window per queue.
 */

/** The kinds of history entries: X(NAME, value, "name"). */
#define EMQ_HISTORY_KINDS(X)                                               \
    X(ENQUEUED, 1, "enqueued")   /* admitted to pending (or its lane)   */ \
    X(SCHEDULED, 2, "scheduled") /* admitted with a run-at              */ \
    X(CLAIMED, 3, "claimed")     /* leased: attempts, host, pid, worker */ \
    X(COMPLETED, 4, "completed") /* completed: attempts                 */ \
    X(RETRIED, 5, "retried")     /* failed, scheduled again: error, delay,
                                    run-at, attempts                    */ \
    X(DEAD, 6, "dead")           /* dead-lettered: error, attempts      */ \
    X(REAPED, 7, "reaped")       /* lease lapsed, back to pending       */ \
    X(STALLED, 8, "stalled")     /* counted a stall, back to pending    */ \
    X(PROMOTED, 9, "promoted")   /* due, scheduled -> pending           */ \
    X(REMOVED, 10, "removed")    /* removed by an operator              */ \
    X(REQUEUED, 11, "requeued")  /* dead -> pending by an operator      */ \
    X(DELAYED, 12, "delayed")    /* parked by its worker: run-at        */ \
    X(AWAITING, 13, "awaiting_children") /* a flow parent held          */

/* Spelled out (not generated from the table above: the bindings parse
 * this header); emq_history_kind_name agrees with the table. */
enum emq_history_kind {
    EMQ_HIST_ENQUEUED = 1, EMQ_HIST_SCHEDULED = 2, EMQ_HIST_CLAIMED = 3,
    EMQ_HIST_COMPLETED = 4, EMQ_HIST_RETRIED = 5, EMQ_HIST_DEAD = 6,
    EMQ_HIST_REAPED = 7, EMQ_HIST_STALLED = 8, EMQ_HIST_PROMOTED = 9,
    EMQ_HIST_REMOVED = 10, EMQ_HIST_REQUEUED = 11, EMQ_HIST_DELAYED = 12,
    EMQ_HIST_AWAITING = 13,
    EMQ_HIST_KIND_MAX = 13
};

/** The name of a kind ("claimed"), or NULL. */
const char *emq_history_kind_name(int kind);
/** The kind of a name, or 0. */
int emq_history_kind_of(const char *name);

/** One history entry (valid during the callback only). Fields a kind
 *  does not carry are -1 (numbers) or NULL with length 0. */
typedef struct emq_history_entry {
    int64_t seq;          /**< grows in commit order, file-wide           */
    int64_t at_ms;        /**< the transition's NOW                       */
    int kind;             /**< enum emq_history_kind                      */
    const char *queue;    /**< NUL-terminated                             */
    const char *id;       /**< the job's id, NUL-terminated               */
    int64_t attempts;     /**< claimed, completed, retried, dead          */
    int64_t delay_ms;     /**< retried                                    */
    int64_t run_at_ms;    /**< scheduled, retried, delayed                */
    const void *error;    /**< retried, dead: the error bytes             */
    size_t error_len;
    const char *host;     /**< claimed, and retried or dead by a retry:
                               the host of the handle (NUL-terminated)   */
    int64_t pid;          /**< ... its process id                         */
    const char *worker;   /**< ... the handle's worker name, or NULL      */
} emq_history_entry;

/** Called per entry; a nonzero return stops the walk and is returned. The
 *  callback runs inside a read transaction: it must not use `db`. */
typedef int (*emq_history_fn)(void *ctx, const emq_history_entry *e);

/**
 * The history of job `id`, oldest first: of queue `q`, or of any queue
 * when `q` is NULL. EMQ_OK (also when there is none), or a gate's error.
 */
int emq_job_history(emq_db *db, const char *q, const char *id,
                    emq_history_fn fn, void *ctx);

/**
 * Every entry with seq > `after` (0: from the oldest kept), of queue `q`
 * (NULL: every queue), oldest first, at most `max` (0: all); *last (may
 * be NULL) receives the seq of the last entry handed over (or `after`):
 * the cursor of the next call. What a dashboard or `emqlite events` tails.
 */
int emq_history_read(emq_db *db, const char *q, int64_t after, size_t max,
                     emq_history_fn fn, void *ctx, int64_t *last);

/** The seq of the newest history entry (0 when there is none): the
 *  cursor of a reader that wants only what comes next. */
int emq_history_last(emq_db *db, int64_t *seq);

/** What the history records (emq_history_config.enabled). */
#define EMQ_HISTORY_OFF 0      /**< nothing, and no job is kept           */
#define EMQ_HISTORY_ALL 1      /**< every transition (the default)        */
#define EMQ_HISTORY_FAILURES 2 /**< what went wrong: retried, dead,
                                    reaped, stalled, removed, requeued;
                                    dead jobs kept, completed ones not    */

/** The name of a level: "on" (EMQ_HISTORY_ALL), "failures" or "off";
 *  NULL for another value. */
const char *emq_history_level_name(int level);

/** The file's history settings (host configuration, one for the file). */
typedef struct emq_history_config {
    int enabled;          /**< EMQ_HISTORY_ALL (default), _FAILURES, _OFF */
    int64_t per_job;      /**< entries kept per job (64)                  */
    int64_t per_queue;    /**< entries kept per queue (100000)            */
    int64_t max_age_ms;   /**< entries older than this go (7 days)        */
} emq_history_config;

/** The settings in force for `db` (the defaults when none were set). */
int emq_history_config_get(emq_db *db, emq_history_config *cfg);
/**
 * Store settings for the file (`cfg` NULL: back to the defaults). `enabled`
 * is one of EMQ_HISTORY_*; every number must be >= 1 (EMQ_EINVAL names
 * it). This handle follows them at
 * once, other handles at their next open.
 */
int emq_history_config_set(emq_db *db, const emq_history_config *cfg);

/** The worker name this handle records with its claims (NULL or "":
 *  none); at most 64 bytes (EMQ_EINVAL). The host and the pid are always
 *  recorded. */
int emq_history_worker(emq_db *db, const char *name);

/** Retention of finished jobs, per queue. */
typedef struct emq_retention {
    int64_t completed_keep;   /**< completed jobs kept (1000)              */
    int64_t completed_age_ms; /**< ... none older than this (1 day)        */
    int64_t dead_keep;        /**< dead jobs kept (10000)                  */
    int64_t dead_age_ms;      /**< ... none older than this (30 days)      */
} emq_retention;

/** The retention of queue `q` (NULL: the file's default): what was set,
 *  else the file's default, else the built-in defaults. */
int emq_retention_get(emq_db *db, const char *q, emq_retention *r);
/** Set the retention of queue `q` (NULL: the file's default for every
 *  queue without its own); `r` NULL removes it. Numbers >= 0 (0 keeps
 *  nothing). */
int emq_retention_set(emq_db *db, const char *q, const emq_retention *r);

/** A kept (finished) job: emq_kept_get / emq_kept_list. */
#define EMQ_KEPT_COMPLETED 1
#define EMQ_KEPT_DEAD 2
typedef struct emq_kept_job {
    char queue[129]; /**< NUL-terminated                 */
    char id[EMQ_ID_SIZE];
    int state;                 /**< EMQ_KEPT_COMPLETED or EMQ_KEPT_DEAD     */
    int64_t at_ms;             /**< when it completed or died               */
    int64_t attempts;          /**< -1 when the row had none                */
    unsigned char *payload;    /**< NULL when none; NUL-terminated          */
    size_t payload_len;
    unsigned char *error;      /**< last_error, NULL when none              */
    size_t error_len;
    unsigned char *result;     /**< completed with a result: it; else NULL */
    size_t result_len;
} emq_kept_job;

/** The kept record of job `id` in queue `q` (NULL: any queue; the newest
 *  when several). EMQ_OK, or EMQ_ABSENT (nothing kept). Free with
 *  emq_kept_clear. */
int emq_kept_get(emq_db *db, const char *q, const char *id,
                 emq_kept_job *out);
void emq_kept_clear(emq_kept_job *j);
/** Called per kept job (valid during the call; the callback must not use
 *  `db`); nonzero stops. */
typedef int (*emq_kept_fn)(void *ctx, const emq_kept_job *j);
/**
 * The kept jobs of queue `q` in `state`, newest first; after the job
 * `after_id` (NULL: from the newest) when paging; at most `max` (0: all).
 */
int emq_kept_list(emq_db *db, const char *q, int state,
                  const char *after_id, size_t max, emq_kept_fn fn,
                  void *ctx);
/** The number of kept jobs of `q` in `state`. */
int emq_kept_count(emq_db *db, const char *q, int state, int64_t *n);

/** Prune history and kept jobs of queue `q` (NULL: every queue with
 *  any) by their settings now (appends also prune, a little at a time);
 *  *dropped (may be NULL) counts the rows removed. */
int emq_history_prune(emq_db *db, const char *q, int64_t *dropped);

/**
 * The queue of job `id` without naming it (`emqlite job ID`): from its
 * newest history entry, else its kept record, else a walk of the keys for
 * a row `emq:{q}:job:<id>` (the cost grows with the keys). `q` receives
 * the name (NUL-terminated). EMQ_OK, or EMQ_ABSENT (found nowhere).
 */
int emq_job_locate(emq_db *db, const char *id, char q[129]);

/**
 * The flow parents of queue `q` held in awaiting_children (no set holds
 * them: a walk of the queue's job rows, in id order). `*ids` (free with
 * emq_free; NULL when none) receives `*n` ids. EMQ_OK.
 */
int emq_list_awaiting(emq_db *db, const char *q, char (**ids)[EMQ_ID_SIZE],
                      size_t *n);

/* ------------------------------------------------------ 17. deprecated names */

/*
 * The names before the naming rule (emq_<noun>_<verb>), kept for one
 * release so existing callers still compile; they will be removed in the
 * next. Only the new names are exported by the library.
 */
#define emq_remove_job emq_job_remove                 /* -> emq_job_remove */
#define emq_reprocess_job emq_job_reprocess           /* -> emq_job_reprocess */
#define emq_update_data emq_job_update_data           /* -> emq_job_update_data */
#define emq_update_progress emq_job_update_progress   /* -> emq_job_update_progress */
#define emq_add_log emq_job_add_log                   /* -> emq_job_add_log */
#define emq_wclaim emq_lane_wclaim                    /* -> emq_lane_wclaim */
#define emq_bclaim emq_lane_bclaim                    /* -> emq_lane_bclaim */
#define emq_pause emq_queue_pause                     /* -> emq_queue_pause */
#define emq_resume emq_queue_resume                   /* -> emq_queue_resume */
#define emq_extend_lock emq_lock_extend               /* -> emq_lock_extend */
#define emq_extend_locks emq_lock_extend_many         /* -> emq_lock_extend_many */
#define emq_reap_group emq_lane_reap                  /* -> emq_lane_reap */
#define emq_requeue_dead emq_dead_requeue             /* -> emq_dead_requeue */
#define emq_global_rate_limit emq_rate_limit_get      /* -> emq_rate_limit_get */
#define emq_rate_limit_ttl emq_rate_limit_ttl_get     /* -> emq_rate_limit_ttl_get */
#define emq_is_maxed emq_queue_is_maxed               /* -> emq_queue_is_maxed */
#define emq_lock_timing_of emq_lock_timing_compute    /* -> emq_lock_timing_compute */
#define emq_retry_by_policy emq_policy_retry          /* -> emq_policy_retry */

#ifdef __cplusplus
}
#endif
#endif /* EMQLITE_H */
