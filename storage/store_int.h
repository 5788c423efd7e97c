/*
 * store_int.h — what the files of storage/ share and nobody else sees: the
 * store struct, the prepared-statement cache, the key-row lookup and the
 * SQLite → EMQ error mapping.
 *
 * Rule: every statement comes from emq_stmt() (prepared once per handle,
 * reset by the caller with emq_stmt_done()); no SQL text is ever built from
 * bytes a caller supplied.
 */
#ifndef EMQ_STORE_INT_H
#define EMQ_STORE_INT_H

#include "store.h"
#include "hashcodec.h"

/* Statement ids; the SQL lives in store.c. */
enum {
    S_KEY_GET, S_KEY_INSERT, S_KEY_DELETE, S_KEY_PUT_VAL, S_KEY_SET_EXPIRE,
    S_KEY_UPSERT, S_KEY_CREATE_NX, S_KID_NEXT,
    S_Z_PROBE0, S_Z_INSERT, S_Z_DEL, S_Z_CARD, S_Z_ANY,
    S_Z_RANGE_SCORE, S_Z_RANGE_ASC, S_Z_RANGE_DESC, S_Z_LEX_ASC, S_Z_LEX_DESC,
    S_Z_DROP,
    S_L_MINMAX, S_L_INSERT, S_L_ASC, S_L_DESC, S_L_DEL, S_L_COUNT, S_L_DROP,
    S_L_ANY,
    S_L_POP_LEFT, S_L_POP_RIGHT, S_L_FIND, S_L_RANK, S_L_HAS,
    S_L_DEL_VAL, S_L_FIND_IX, S_L_HAS_IX, S_L_DEL_VAL_IX, S_L_ROTATE,
    S_S_ADD, S_S_REM, S_S_IS, S_S_ALL, S_S_CARD, S_S_ANY, S_S_DROP,
    S_BEGIN_W, S_BEGIN_R, S_COMMIT, S_ROLLBACK,
    S_META_SUMS, S_PAGE_COUNT,
    /* paged rank ranges (zset.c) and the event log (evlog.c) */
    S_Z_PAGE_ASC, S_Z_PAGE_DESC,
    S_EV_INSERT, S_EV_LAST, S_EV_READ, S_EV_HEAD, S_EV_DROP_TO,
    S_EV_EXISTS,
    /* the procedure journal (journal.c) */
    S_J_CREATE, S_J_EXISTS, S_J_INSERT, S_J_NEXT, S_J_SET, S_J_DEL, S_J_HW,
    S_J_SCAN,
    S_Z_INSERT_NX, S_Z_SCORE_NZ, S_Z_ANY_IX,
    /* a batch of score-0 members (zset.c, emq_zset_add0_many) */
    S_Z_INSERT0_RUN,
    /* a batch of new hashes (hash.c, emq_hash_create_many) */
    S_KEY_CREATE_RUN,
    /* ZREM of a member at a score other than 0, through the member index */
    S_Z_DEL_NZ,
    /* whether a zset has a member at 0 (zset.c, emq_zset_add) */
    S_Z_ANY_ZERO,
    /* small sets (zset.c, shape): their members at scores other than 0 */
    S_Z_COUNT_NZ, S_Z_SCORE_SMALL, S_Z_PROBE0_SMALL, S_Z_DEL_POS, S_Z_DEL_NEG,
    S_Z_INDEX_POS, S_Z_INDEX_NEG,
    /* hash steps as one statement (hash.c, emq_hash_apply) */
    S_KEY_STEPS,
    /* the history log and the kept records (hist.c, schema 9) */
    S_H_INSERT, S_H_NTH_SUBJ, S_H_DROP_SUBJ, S_H_COUNT_SINCE, S_H_HEAD_SCOPE,
    S_H_DROP_TO, S_H_READ_ALL, S_H_READ_SUBJ, S_H_READ_SCOPE, S_H_LAST,
    S_K_PUT, S_K_FIND, S_K_FIND_ANY, S_K_LIST, S_K_LIST_AFTER, S_K_COUNT,
    S_K_AGED, S_K_NTH, S_K_DROP_TO,
    /* keyset pages after a (score, member) cursor (zset.c,
     * emq_zset_after: the web dashboard's paging) */
    S_Z_AFTER_ASC, S_Z_AFTER_DESC,
    S_COUNT
};

/* The aggregate registrations (name -> type, kid) used lately, kept across
 * this handle's own transactions and dropped whenever another connection
 * committed (the pager's data version moved), a transaction rolled back, or
 * the key was dropped or given an expiry (kv.c). */
#define EMQ_KCACHE 8

/* Members S_Z_INSERT0_RUN inserts in one statement: 32 rows cost about half
 * the instructions of 32 one-row inserts (the statement's own cost is paid
 * once). */
#define EMQ_Z_RUN 32
/* New hash rows S_KEY_CREATE_RUN inserts in one statement (the same). */
#define EMQ_H_RUN 32
/* A zset keeps at most this many members at scores other than 0 out of
 * the member index (zset.c, shape): they are found by walking the set's
 * rows, and a lease or a run-at written or removed costs one b-tree entry
 * and one page, not two. Past it the set's rows join the index. */
#define EMQ_Z_SMALL 32
#define EMQ_NZ_BIG (-1)
/* List values of at most this many bytes are in the index list_val
 * (schema 8): a position-of or remove-all of such a value is a b-tree
 * descent; a longer one walks the list (list.c). The condition is SQL text
 * fixed by the schema step, so the number is spelled in it too. */
#define EMQ_LIST_IX_MAX 32
#define EMQ_LIST_IX_COND "length(val) <= 32"
#define EMQ_NZ_UNKNOWN (-2)
/* Hash rows kept decoded-ready past the transaction that read them (the
 * queue's meta and metrics hashes, the job row a claim wrote and the
 * complete reads): encoded bytes, or known absent. */
#define EMQ_HCARRY 4
/* ... each of at most this many encoded bytes (a bigger row is read again:
 * the carry is for the small rows every transition touches, not a cache of
 * payloads). */
#define EMQ_HCARRY_MAX 4096
typedef struct emq_hcarry {
    emq_buf key, raw;
    int used, exists;
} emq_hcarry;

typedef struct emq_kc_entry {
    emq_buf name;
    int type;        /* EMQ_T_NONE: the slot is free */
    int64_t kid;
    int64_t nz;      /* a zset's shape (zset.c): its members at scores
                        other than 0 number exactly nz >= 0 and are not
                        in the member index (small), or EMQ_NZ_BIG (all
                        in it), or EMQ_NZ_UNKNOWN */
    int zero;        /* a zset: 1 no member has the score 0, -1 some may
                        have, 0 not known (zset.c) */
} emq_kc_entry;

/* The longest resolved path of a database file. */
#define EMQ_PATH_MAX 4096

/* SQLite's busy handler (store.c): gives up `ms` after its first look at
 * a busy lock (`since`, µs on CLOCK_MONOTONIC). */
typedef struct emq_busy {
    int ms;
    int64_t since;
} emq_busy;

struct emq_store {
    sqlite3 *db;
    sqlite3_stmt *stmt[S_COUNT];
    emq_store_opts opts;
    int in_tx, tx_write;
    int64_t now;         /* the transaction's clock, for expiry            */
    int wal_frames;      /* frames in the WAL after the last commit         */
    int memory;
    struct emq_plock *gate; /* the writer gate (gate.c), or NULL          */
    int turn_held;       /* this handle holds the writers' turn (turn.c)  */
    uint32_t turn_ticket;
    uint32_t turn_pid;   /* getpid() at the first turn (no fork crossing) */
    int turn_linger;     /* it lingers on the turn after its last write  */
    int turn_burst;      /* writes in a row on one turn                  */
    emq_busy busy;       /* SQLite's busy handler's bound (store.c)       */
    /* The database file as opened: its resolved name (symlinks followed,
     * side files are named after it) and what stat said of it. */
    char path[EMQ_PATH_MAX];
    unsigned long file_dev, file_ino;
    unsigned file_uid, file_gid, file_mode;
    int current;         /* the file has this build's schema             */
    /* Room on the disk (store.c): every committed page owns its blocks in
     * the file, so a checkpoint never needs new space. */
    int room;            /* writable file: commits make sure of it      */
    int room_low;        /* the disk could not give the headroom         */
    int room_tick;       /* commits since the last look                  */
    int room_foreign;    /* another connection committed since this
                            handle's last commit or look                  */
    int room_spend;      /* this transaction may use the reserve         */
    int64_t room_last;   /* bytes in use at the last look that passed    */
    int64_t page_size;
    int64_t tx_changes;  /* sqlite3_total_changes64 when the tx began    */
    int sums;            /* the file's row checksums are on (rowsum.c)     */
    emq_buf hraw, henc;  /* scratch for hash reads and writes              */
    emq_hfields hf;      /* decoded view of hraw                           */
    /* The last hash read or written in this transaction (hash.c): hkey's
     * row is hraw/hf while hvalid (hkexp: the key has an expiry). Every
     * kv write clears it (emq_stmt; emq_stmt_kv only when it is the key
     * written), and so does every transaction boundary. */
    emq_buf hkey;
    int hvalid, hexists, hkexp;
    /* Hash rows carried past it (hash.c): the rows this handle read or
     * wrote last, as encoded, within a write transaction and across its
     * own commits; dropped as the registration cache is. */
    emq_hcarry hc[EMQ_HCARRY];
    int hc_next;
    /* The hash steps emq_hash_steps() runs inside S_KEY_STEPS (hash.c). */
    struct emq_steps *steps;
    emq_kc_entry kc[EMQ_KCACHE];
    int kc_next;
    int64_t kc_version;
    int ev_table;        /* evlog.c: 1 once emq_events is known to exist */
    struct emq_xs *xs;   /* the stream type's statements (stream.c)      */
    char errmsg[512];
    /* The wake file (notify.c), opened on first use, and the buckets the
     * open transaction marked (signalled at commit). */
    const emq_watch_rule *watch; /* emq_store_set_watch()               */
    struct emq_notify *notify;
    int notify_failed;   /* opening failed: commits skip this many more
                            before they try again                      */
    int wdirty_any;
    uint64_t wdirty[1024 / 64]; /* one bit per bucket (notify.h)        */
    /* Group commit (gsync.c): the last commit's number, whether it still
     * waits for its sync, and whether this handle saw a sync fail. */
    uint32_t gs_seq;
    int gs_pending, gs_failed;
};

/* A key row as stored in kv. */
typedef struct emq_keyrow {
    int type;            /* EMQ_T_NONE when absent/expired */
    int64_t kid;
    int64_t expire;      /* -1 none */
    const unsigned char *val;  /* valid until the statement is reset */
    size_t vlen;
} emq_keyrow;

sqlite3_stmt *emq_stmt(emq_store *st, int id);
/** emq_stmt for a kv-row write of `key` alone: only what the hash caches
 *  hold of that key is forgotten (emq_stmt forgets every row on a kv
 *  write). key NULL: the caller forgot its keys itself. */
sqlite3_stmt *emq_stmt_kv(emq_store *st, int id, const void *key,
                          size_t klen);
void emq_stmt_done(sqlite3_stmt *s);
/** Map an SQLite result to an EMQ code and remember the message. */
int emq_store_fail(emq_store *st, int sqlite_rc);
/** Set a message for an EMQ code (printf style) and return the code. */
int emq_store_err(emq_store *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * Look up `key`. Returns EMQ_OK with kr->type set (EMQ_T_NONE when absent; an
 * expired key is deleted, in a write transaction, and reported absent). When
 * `want` is not EMQ_T_NONE and the key holds another type, EMQ_EWRONGTYPE.
 * With `keep_val` the statement stays open so kr->val stays valid: the caller
 * then calls emq_stmt_done(emq_stmt(st, S_KEY_GET)).
 */
int emq_key_lookup(emq_store *st, const void *key, size_t klen, int want,
                   emq_keyrow *kr, int keep_val);
/** Create an aggregate key row of `type` with a fresh kid (into *kid). */
int emq_key_create(emq_store *st, const void *key, size_t klen, int type,
                   int64_t *kid);
/** Delete the key row and, for aggregates, its elements. */
int emq_key_drop(emq_store *st, const void *key, size_t klen, int type,
                 int64_t kid);

/** hash.c: 1 when the transaction's hash cache holds `key` (then *exists
 *  says whether it is a live hash), 0 when the cache cannot tell. */
int emq_hash_cached(const emq_store *st, const void *key, size_t klen,
                    int *exists);

/** The writer gate (gate.c): open beside the file, close, enter shared for a
 *  write transaction (waiting at most the busy timeout, then EMQ_EBUSY;
 *  *waited_ms receives the time waited), leave, and try to take it
 *  exclusive (1 = taken; leave releases it) for a checkpoint. */
int emq_wgate_open(emq_store *st);
void emq_wgate_close(emq_store *st);
int emq_wgate_enter(emq_store *st, int budget_ms, int *waited_ms);
/* CLOCK_MONOTONIC in ms; whether process `pid` (not 0) no longer exists
 * (turn.c, also for gsync.c's syncer). */
int64_t emq_mono_ms(void);
int emq_pid_gone(uint32_t pid);
/* The writers' turn (turn.c): first come, first served across handles and
 * processes; waits at most `budget_ms` (EMQ_EBUSY). */
int emq_wturn_enter(emq_store *st, int budget_ms, int *waited_ms);
void emq_wturn_leave(emq_store *st);
/** Hand a turn this handle lingers on to the next writer (closing). */
void emq_wturn_release(emq_store *st);
void emq_wgate_leave(emq_store *st);
int emq_wgate_try_exclusive(emq_store *st);

/** Group commit for synchronous FULL (gsync.c): on for this handle (it
 *  then runs SQLite at NORMAL); number a commit (inside the writers' turn,
 *  after COMMIT); wait until a sync covers it (after the turn: EMQ_OK, or
 *  EMQ_EIO when the sync failed: the commit is made, its durability
 *  unknown). */
int emq_gsync_on(const emq_store *st);
void emq_gsync_mark(emq_store *st);
int emq_gsync_wait(emq_store *st);
/** Before a write transaction of a group-commit handle: EMQ_OK, or after
 *  a failed sync (this handle's or any on the file) a checkpoint first,
 *  and EMQ_EIO when it cannot complete (nothing is applied). */
int emq_gsync_ready(emq_store *st);

/** The WAL write coalescer (walbuf.c): the name of the shim VFS over
 *  SQLite's current default VFS (registered on first use), or NULL when
 *  that VFS cannot be wrapped (the handle then opens on the default).
 *  emq_walbuf_stats: the writes SQLite made to the connection's -wal and
 *  the writes that reached the underlying VFS (0, 0 when not wrapped). */
const char *emq_walbuf_vfs(void);
void emq_walbuf_stats(sqlite3 *db, long *writes, long *flushes);
/** The database's size in pages as the last commit written through the
 *  connection's -wal gave it, or 0 when none was (or it is not wrapped). */
int64_t emq_walbuf_pages(sqlite3 *db);

/** The host configuration table (hostconf.c), schema step 5. */
#define EMQ_HOSTCONF_DDL                                                  \
    "CREATE TABLE hostconf(ns TEXT NOT NULL, k BLOB NOT NULL,"            \
    " v BLOB NOT NULL, PRIMARY KEY(ns, k)) WITHOUT ROWID;"

/** Run fixed SQL text (one or more statements); EMQ_OK or the failure with
 *  its message. */
int emq_store_exec(emq_store *st, const char *sql);

/** The schema ladder (schema.c): climb a file from version `from` to `to`
 *  (EMQ_SCHEMA_VERSION but in tests) inside the open write transaction,
 *  then stamp user_version (and application_id when `stamp_app`). */
int emq_schema_climb(emq_store *st, int from, int to, int stamp_app);
/** Compare the schema objects of connection `db` with those schema
 *  `version` has; `cb` (may be NULL) receives each difference. Returns
 *  their number, or a negative code when the comparison could not run. */
int emq_schema_judge(sqlite3 *db, int version, emq_schema_cb cb, void *ctx);

/** Row checksums (rowsum.c): register the SQL functions on the handle's
 *  connection; read the file's mode into st->sums. */
int emq_rowsum_register(emq_store *st);
int emq_rowsum_load(emq_store *st);
/** Set st->sums; the key-row statements switch between the forms that
 *  compute and verify checksums and those that do not (store.c). Call it
 *  only between statements. */
void emq_store_set_sums(emq_store *st, int on);
/** Watch rules (notify.c): mark the bucket of a write that matches one;
 *  at the end of a transaction signal the marks (committed) or drop them. */
void emq_store_watch(emq_store *st, int event, const void *key, size_t klen);
void emq_store_watch_end(emq_store *st, int committed);
/** Release the stream type's statements (stream.c; store close). */
void emq_xs_close(emq_store *st);

/** Forget every cached registration (kv.c). */
void emq_kc_clear(emq_store *st);
/** The hash caches (hash.c): forget `key`; forget every row; at the commit
 *  of a write transaction, carry the last row into the next one. */
void emq_hcache_forget(emq_store *st, const void *key, size_t klen);
void emq_hcache_clear(emq_store *st);
void emq_hcache_commit(emq_store *st);
/** Free the caches' buffers (store close). */
void emq_hcache_free(emq_store *st);
/** Register the hash type's SQL function (hash.c) on the connection. */
int emq_hash_register(emq_store *st);
/** What the registration cache knows of zset `kid`'s scores: its shape
 *  (the `nz` of its entry, EMQ_NZ_UNKNOWN without one) and whether it has
 *  members at 0 (`zero`, 0 without one), and set them. Kept and dropped
 *  with the registration: another connection's commit, a rollback, the
 *  key's drop or expiry forget them. */
int64_t emq_kc_nz(emq_store *st, int64_t kid);
void emq_kc_set_nz(emq_store *st, int64_t kid, int64_t nz);
int emq_kc_zero(emq_store *st, int64_t kid);
void emq_kc_set_zero(emq_store *st, int64_t kid, int zero);

/** Run count statement `id` (one parameter: the kid) into *n. */
int emq_kid_count(emq_store *st, int id, int64_t kid, int64_t *n);
/** Run write statement `id` (one parameter: the kid) to its end. */
int emq_kid_run(emq_store *st, int id, int64_t kid);

/** Bind helpers. */
int emq_bind_blob(sqlite3_stmt *s, int i, const void *p, size_t n);


#endif /* EMQ_STORE_INT_H */
