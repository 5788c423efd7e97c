/*
 * store.h — the typed keyspace over one SQLite file (the L3 store).
 *
 * Owns: the file (open, pragmas, schema, application_id), transactions, and
 * Redis-typed keys: strings, hashes, sorted sets, lists, sets (and streams,
 * stream.h) with the
 * semantics Valkey gives them (one type per key, implicit creation, an
 * aggregate that becomes empty ceases to exist, lazy expiry, WRONGTYPE).
 * Knows nothing of jobs or queues: keys, fields, members and values are
 * arbitrary byte strings.
 *
 * Rules: every call except emq_store_open/close/begin runs inside a
 * transaction opened with emq_store_begin(); reads see the transaction's own
 * writes. Expiry is judged against the transaction's clock (emq_store_begin's
 * `now_ms`). Results are the EMQ_* codes of emqlite.h; a key that is absent is
 * reported as EMQ_NOTFOUND (a positive, non-error code).
 */
#ifndef EMQ_STORE_H
#define EMQ_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "emqlite.h"

/** Positive "absent" result of store reads (not an error). */
#define EMQ_NOTFOUND 100

/** Key types, with the names TYPE answers. */
enum emq_type {
    EMQ_T_NONE = 0,
    EMQ_T_STRING = 1,
    EMQ_T_HASH = 2,
    EMQ_T_LIST = 3,
    EMQ_T_SET = 4,
    EMQ_T_ZSET = 5,
    EMQ_T_STREAM = 6   /* stream.h */
};
const char *emq_type_name(int type);

/** The WRONGTYPE error reply, verbatim (PROTOCOL.md §2.7). */
#define EMQ_WRONGTYPE_MSG \
    "WRONGTYPE Operation against a key holding the wrong kind of value"

/** The application_id stamped in emqlite files ("EMQL"). */
#define EMQ_APPLICATION_ID 0x454D514C
/** The schema version this build writes (PRAGMA user_version): the number
 *  of steps of the schema ladder, storage/schema.def. */
enum {
    EMQ_SCHEMA_VERSION = 0
#define STEP(version, fn) + 1
#include "schema.def"
#undef STEP
};

/*
 * emqlite's own heap (alloc.c): every allocation in storage/ and engine/
 * goes through these, to the allocator of emq_set_allocator(). A size of 0
 * is served as 1, so NULL always means out of memory. emq_mem_hold/release
 * count open stores and handles (the allocator cannot change while one is
 * open).
 */
void *emq_mem_malloc(size_t n);
void *emq_mem_calloc(size_t count, size_t size);
void *emq_mem_realloc(void *p, size_t n);
void emq_mem_free(void *p);
void emq_mem_hold(void);
void emq_mem_release(void);

/** A growable byte buffer (emq_mem), always NUL-terminated. */
typedef struct emq_buf {
    unsigned char *p;
    size_t len, cap;
} emq_buf;
void emq_buf_free(emq_buf *b);
int emq_buf_set(emq_buf *b, const void *p, size_t n);
int emq_buf_append(emq_buf *b, const void *p, size_t n);
/** Room for `extra` more bytes (and the NUL) without another allocation. */
int emq_buf_reserve(emq_buf *b, size_t extra);

/** A (pointer, length) view of bytes owned by someone else. */
typedef struct emq_bytes {
    const void *p;
    size_t n;
} emq_bytes;

typedef struct emq_store emq_store;

/**
 * The open's judge of one string key, called before anything is written:
 * `type` is EMQ_T_STRING with the stored bytes, another type, or
 * EMQ_T_NONE when the key is absent or the file is new. Returns EMQ_OK to
 * go on or a refusal code, with its message in err.
 */
typedef int (*emq_judge_fn)(void *ctx, int type, const void *val, size_t len,
                            char *err, size_t errlen);
/* Watch rules (notify.c): a write of kind `event` to a key whose bytes
 * after its hash tag ("{...}") equal `rest` marks the tag's bucket of the
 * wake file, signalled when the transaction commits. A table ends with a
 * NULL `rest`. The store knows nothing of what the keys mean: the engine
 * hands it the rules. */
enum { EMQ_WATCH_ZADD = 1, /* a member added to a sorted set (not a score
                              update)                                  */
       EMQ_WATCH_PUSH,     /* a list push                              */
       EMQ_WATCH_HDEL };   /* a hash field deleted                     */
typedef struct emq_watch_rule {
    int event;
    const char *rest;
} emq_watch_rule;

/* The default checkpoint interval, in WAL frames after a commit (measured:
 * BENCHMARKS.md, "Checkpoint interval"). */
#define EMQ_CHECKPOINT_FRAMES 4000

/**
 * A dictionary of hash field names and values stored as one-byte tokens
 * (hashcodec.h), supplied by the opener: storage knows no names of its own
 * (the engine passes its job row's, engine/core/jobrow.c). Append only: a
 * token is a word's index, and it is on disk, so a file must be opened with
 * the dictionary that wrote it or one that extends it. A blob holding a
 * token the dictionary does not have reads as EMQ_ECORRUPT.
 */
typedef struct emq_hash_word {
    const char *s;
    size_t n;
} emq_hash_word;
typedef struct emq_hash_dict {
    const emq_hash_word *field, *value;
    size_t nfield, nvalue;
} emq_hash_dict;

typedef struct emq_store_opts {
    int synchronous;       /* EMQ_SYNC_NORMAL / EMQ_SYNC_FULL */
    int busy_timeout_ms;
    int exclusive;
    int readonly;
    int checkpoint_frames; /* 0: never checkpoint automatically */
    int page_size;         /* a new file's page size; 0: SQLite's default */
    const char *judge_key; /* NULL: no judge */
    emq_judge_fn judge;
    void *judge_ctx;
    const emq_hash_dict *dict; /* hash words stored as tokens; NULL: none */
} emq_store_opts;

/**
 * Open or create the store at `path` (":memory:" or "" for memory).
 *
 * The path is resolved first (symlinks followed; side files are named after
 * the result, emq_store_path). Refused with EMQ_ECANTOPEN and the path in
 * the message: a directory or any other file that is not a regular file, a
 * dangling symlink, a file with more than one hard link (SQLite would keep a
 * WAL per name), a missing file or directory for a read-only open.
 *
 * Before a single byte is written the file is judged through a private
 * read-only connection (immutable when no WAL is beside it, so no side file
 * is created): not SQLite, another application's stamp or tables without
 * ours → EMQ_ENOTEMQ; a newer schema, or an older one through a read-only
 * handle → EMQ_ESCHEMA; schema objects that are not exactly those of its
 * version (a foreign trigger, view, index or table; a missing or altered
 * one) → EMQ_ENOTEMQ; then o->judge on o->judge_key. A refused file is left
 * byte for byte as it was. A writable open then switches the file to WAL
 * and climbs the schema ladder (schema.def) in one write transaction.
 * On failure *out is NULL and `err` (if given) receives the message.
 */
int emq_store_open(const char *path, const emq_store_opts *o, emq_store **out,
                   char *err, size_t errlen);
void emq_store_close(emq_store *st);

/** The resolved path of the file (NULL for an in-memory store). */
const char *emq_store_path(const emq_store *st);

/* The side files beside a database, by suffix: emqlite's own (side.c) ... */
#define EMQ_SIDE_GATE "-emqlock" /* the writer gate (gate.c)              */
#define EMQ_SIDE_NODE "-emqnode" /* node-id leases (engine/core/nodeid.c) */
/* ... and the wake file's, EMQ_NOTIFY_SUFFIX (notify.h). Every suffix a
 * file may have beside it, SQLite's (-wal, -shm, -journal) and emqlite's,
 * NULL-terminated: what emq_remove_files removes. */
extern const char *const emq_store_side_suffixes[];

/**
 * Open the side file <emq_store_path> + `suffix` (side.c) read-write into
 * *fd:
 * never through a symlink, refused unless a regular file with one link
 * owned by the database file's owner or this process's user; with `create`
 * made (the database file's permissions) when absent. EMQ_OK,
 * EMQ_NOTFOUND (absent, !create), EMQ_ECANTOPEN (refused), EMQ_EREADONLY,
 * EMQ_EIO; the message goes to err.
 */
int emq_store_side_open(emq_store *st, const char *suffix, int create,
                        int *fd, char *err, size_t errlen);

/** Judge an existing <path> + `suffix` that SQLite opens itself (-wal,
 *  -shm) by the same rules without opening it: EMQ_OK (absent or
 *  acceptable) or EMQ_ECANTOPEN with the reason in err. */
int emq_store_side_check(const emq_store *st, const char *suffix, char *err,
                         size_t errlen);

/** One finding of the schema judge (a sentence). */
typedef void (*emq_schema_cb)(void *ctx, const char *finding);
/** Inside a read transaction: report every schema object that differs from
 *  those of the file's version (schema.c). EMQ_OK or the failure. */
int emq_store_check_schema(emq_store *st, emq_schema_cb cb, void *ctx);

/** One finding of the file judge: `rule` "integrity" (SQLite's own check)
 *  or "stamp" (application_id, user_version), and a sentence. */
typedef void (*emq_file_cb)(void *ctx, const char *rule,
                            const char *finding);
/** Inside a read transaction: PRAGMA integrity_check (each row other than
 *  "ok"; a run SQLite ends as corrupt or not a database; no row at all),
 *  then the stamps: application_id EMQ_APPLICATION_ID and user_version
 *  EMQ_SCHEMA_VERSION (schema.c). Damage is a finding; a read that failed
 *  for another reason (a lock, I/O, memory — a page integrity_check could
 *  not read for one of those included) is EMQ_EBUSY, EMQ_EIO, EMQ_ENOMEM
 *  (else EMQ_EINTERNAL), returned before any further finding. Returns
 *  EMQ_OK, or 1 when SQLite ended the check as corrupt or not a database
 *  (that finding made; the file cannot be read further). */
int emq_store_check_file(emq_store *st, emq_file_cb cb, void *ctx);

/** Row checksums (rowsum.c). 1 when the file's checksums are on (as this
 *  handle last saw). */
int emq_store_checksums(const emq_store *st);
/** Turn the file's checksums on, for good: every key row gets its sum, in
 *  one write transaction. EMQ_OK (also when already on) or the failure. */
int emq_store_enable_checksums(emq_store *st);
/** One damaged key row: its name and a sentence. */
typedef void (*emq_row_cb)(void *ctx, const void *key, size_t klen,
                           const char *why);
/** Inside a read transaction: report every key row whose checksum does not
 *  match, or is missing while the file's checksums are on. */
int emq_store_check_rows(emq_store *st, emq_row_cb cb, void *ctx);

/** The last error message of the store ("" if none). */
const char *emq_store_errmsg(const emq_store *st);
/** The underlying SQLite connection (tests, checker). */
sqlite3 *emq_store_sqlite(emq_store *st);

/**
 * Begin a transaction: write = 1 takes the write lock (BEGIN IMMEDIATE,
 * waiting up to the busy timeout, then EMQ_EBUSY), write = 0 a read snapshot.
 * `now_ms` is the clock all expiry checks of this transaction use.
 */
int emq_store_begin(emq_store *st, int write, int64_t now_ms);
/** Set the clock of the open transaction (read once the lock is held). */
void emq_store_set_now(emq_store *st, int64_t now_ms);
/**
 * Say whether the next transactions may spend the room the file keeps in
 * reserve on a full disk (store.c, "room"): the caller's transitions that
 * retire work (claim, complete, retry, a flow delivery...) may; those that
 * add work may not, so the first keep room for the second.
 */
void emq_store_set_spend(emq_store *st, int spend);
/** The clock of the open transaction. */
int64_t emq_store_now(const emq_store *st);
/** Commit; on failure the transaction is rolled back and the code returned. */
int emq_store_commit(emq_store *st);
/** Roll back (a no-op outside a transaction). */
void emq_store_rollback(emq_store *st);
/** RESTART checkpoint (takes the write lock; never races a commit). */
int emq_store_checkpoint(emq_store *st);

/* ------------------------------------------------ host configuration */
/* hostconf.c: byte values under (namespace, key) outside the keyspace —
 * never exported, digested or checked. Inside a transaction; put needs a
 * write one and deletes with v NULL. get: EMQ_OK or EMQ_NOTFOUND. */
int emq_hostconf_get(emq_store *st, const char *ns, const void *k,
                     size_t klen, emq_buf *out);
int emq_hostconf_put(emq_store *st, const char *ns, const void *k,
                     size_t klen, const void *v, size_t vlen);
/* Every (k, v) of namespace `ns` in byte order of k; a nonzero return
 * of `cb` stops the walk and is returned. */
typedef int (*emq_hostconf_cb)(void *ctx, const unsigned char *k,
                               size_t klen, const unsigned char *v,
                               size_t vlen);
int emq_hostconf_each(emq_store *st, const char *ns, emq_hostconf_cb cb,
                      void *ctx);

/** Install the watch rules (a table that outlives the store; NULL: no
 *  write signals anything, the default). */
void emq_store_set_watch(emq_store *st, const emq_watch_rule *rules);

/** The store's wake file (notify.h), opened on first use beside the
 *  database (a private region for a memory store). EMQ_OK with `*out`
 *  (owned by the store), or the open failure with the store's message. */
struct emq_notify;
int emq_store_notifier(emq_store *st, struct emq_notify **out);

/* ---------------------------------------------------------------- keys */

/** Type of `key` (EMQ_T_NONE when absent or expired) into *type. */
int emq_key_type(emq_store *st, const void *key, size_t klen, int *type);
/** Delete `key` of any type; *deleted (may be NULL) = 1 if it existed. */
int emq_key_del(emq_store *st, const void *key, size_t klen, int *deleted);
/** Absolute expiry: set (ms) or clear (-1) on an existing key; EMQ_NOTFOUND
 *  when absent. */
int emq_key_expire_at(emq_store *st, const void *key, size_t klen, int64_t at);
/** Remaining TTL in ms: > 0, -1 (no expiry), -2 (absent). */
int emq_key_pttl(emq_store *st, const void *key, size_t klen, int64_t *ttl);
/** Absolute expiry (ms) of a key, or -1 for none; EMQ_NOTFOUND if absent. */
int emq_key_expiry(emq_store *st, const void *key, size_t klen, int64_t *at);

/**
 * Iterate live keys whose name starts with `prefix` (plen may be 0), in
 * memcmp order of names. The callback gets each name and type; returning
 * nonzero stops the walk and that value is returned.
 */
typedef int (*emq_key_cb)(void *ctx, const unsigned char *key, size_t klen,
                          int type);
int emq_key_scan(emq_store *st, const void *prefix, size_t plen,
                 emq_key_cb cb, void *ctx);
/** As emq_key_scan, starting at the first name >= `from` (one seek; `from`
 *  should start with the prefix): a caller skips a run of keys by
 *  calling again from past it (the dashboard's list of queues). */
int emq_key_scan_from(emq_store *st, const void *prefix, size_t plen,
                      const void *from, size_t flen, emq_key_cb cb, void *ctx);

/** Parse a whole byte string as a signed 64-bit decimal integer with the
 *  rules Valkey applies to counters (no sign '+', spaces or leading zeros).
 *  Returns 0 and stores the value, or -1. */
int emq_parse_i64(const void *p, size_t n, int64_t *out);
/** Write the shortest decimal form of v into buf (>= 21 bytes); returns
 *  the length. */
size_t emq_fmt_i64(char *buf, int64_t v);

/* ------------------------------------------------------------- strings */

#define EMQ_SET_NX 1 /* only if absent */
int emq_str_get(emq_store *st, const void *key, size_t klen, emq_buf *out);
/** SET: overwrites any type (as Redis SET does); expire_at = -1 for none.
 *  With EMQ_SET_NX, *done (may be NULL) = 0 when the key existed. */
int emq_str_set(emq_store *st, const void *key, size_t klen, const void *v,
                size_t vlen, int64_t expire_at, int flags, int *done);
/** INCRBY on a string counter (absent = 0). */
int emq_str_incrby(emq_store *st, const void *key, size_t klen, int64_t by,
                   int64_t *result);

/* -------------------------------------------------------------- hashes */

/** HGET: EMQ_NOTFOUND when the key or field is absent. */
int emq_hash_get(emq_store *st, const void *key, size_t klen,
                 const void *f, size_t flen, emq_buf *out);
/** HSET of n field/value pairs; *added (may be NULL) = fields created. */
int emq_hash_set(emq_store *st, const void *key, size_t klen,
                 const emq_bytes *fv, size_t n, int *added);
/** Create the hash `key` with n field/value pairs only if the key is absent
 *  (of any type); *created = 0 when it existed (nothing changes). */
int emq_hash_create(emq_store *st, const void *key, size_t klen,
                    const emq_bytes *fv, size_t n, int *created);
/** emq_hash_create of n hashes in order: keys[i] with the nf pairs at
 *  fv[2 * nf * i]; created[i] as emq_hash_create's *created. */
int emq_hash_create_many(emq_store *st, const emq_bytes *keys,
                         const emq_bytes *fv, size_t nf, size_t n,
                         int *created);
/** HDEL of one field; *removed = 1 if it existed. */
int emq_hash_del(emq_store *st, const void *key, size_t klen,
                 const void *f, size_t flen, int *removed);
/** HINCRBY (absent key/field = 0); EMQ_EPROTO with "ERR hash value is not an
 *  integer" for a non-integer value. */
int emq_hash_incrby(emq_store *st, const void *key, size_t klen,
                    const void *f, size_t flen, int64_t by, int64_t *result);
/** HEXISTS into *exists. */
int emq_hash_exists(emq_store *st, const void *key, size_t klen,
                    const void *f, size_t flen, int *exists);
/** HLEN into *n. */
int emq_hash_len(emq_store *st, const void *key, size_t klen, int64_t *n);
/** Field expiry: absolute ms, -1 to clear; *done = 0 when field absent. */
int emq_hash_expire_at(emq_store *st, const void *key, size_t klen,
                       const void *f, size_t flen, int64_t at, int *done);
/** Field expiry: absolute ms into *at, -1 none, -2 absent field. */
int emq_hash_field_expiry(emq_store *st, const void *key, size_t klen,
                          const void *f, size_t flen, int64_t *at);

/** One step of emq_hash_apply(). */
enum { EMQ_HOP_GET, EMQ_HOP_SET, EMQ_HOP_INCR, EMQ_HOP_DEL };
typedef struct emq_hop {
    int op;          /* EMQ_HOP_*                                        */
    emq_bytes f;     /* the field                                        */
    emq_bytes v;     /* SET: the value                                   */
    int64_t by;      /* INCR: the increment                              */
    int found;       /* out: the field existed when this step ran        */
    emq_buf *out;    /* GET (may be NULL): the value, copied              */
    int64_t result;  /* out, INCR: the new value                         */
    char num[24];    /* private: INCR's decimal text                     */
} emq_hop;
/**
 * Run `n` hash steps on `key` in order with one read and at most one write
 * of the row: HGET, HSET, HINCRBY and HDEL as Valkey would run them one after
 * another (an absent key is an empty hash; a hash left empty is deleted).
 * *existed (may be NULL) = the key existed before. A failed step (a
 * non-integer INCR) fails the call with nothing written.
 */
int emq_hash_apply(emq_store *st, const void *key, size_t klen, emq_hop *ops,
                   size_t n, int *existed);

/** HGETALL: the callback sees each live field in stored order. */
typedef int (*emq_field_cb)(void *ctx, const unsigned char *f, size_t flen,
                            const unsigned char *v, size_t vlen,
                            int64_t expire_at);
int emq_hash_getall(emq_store *st, const void *key, size_t klen,
                    emq_field_cb cb, void *ctx);

/* --------------------------------------------------------- sorted sets */

/** ZADD one member (adds or updates the score); *added = 1 if new. */
int emq_zset_add(emq_store *st, const void *key, size_t klen,
                 const void *m, size_t mlen, double score, int *added);
/** ZADD of n members, each at score 0, in order; *added (may be NULL) the
 *  number that were new. */
int emq_zset_add0_many(emq_store *st, const void *key, size_t klen,
                       const emq_bytes *m, size_t n, int64_t *added);
/** ZREM one member; *removed = 1 if it was there. */
int emq_zset_rem(emq_store *st, const void *key, size_t klen,
                 const void *m, size_t mlen, int *removed);
/** ZSCORE: EMQ_NOTFOUND when absent. */
int emq_zset_score(emq_store *st, const void *key, size_t klen,
                   const void *m, size_t mlen, double *score);
/** ZCARD into *n (0 when absent). */
int emq_zset_card(emq_store *st, const void *key, size_t klen, int64_t *n);
/** ZPOPMIN of one member into `member` and `score`; EMQ_NOTFOUND when empty. */
int emq_zset_popmin(emq_store *st, const void *key, size_t klen,
                    emq_buf *member, double *score);

typedef int (*emq_member_cb)(void *ctx, const unsigned char *m, size_t mlen,
                             double score);
/** ZRANGEBYSCORE min..max inclusive, LIMIT 0 limit (limit < 0: all). */
int emq_zset_range_score(emq_store *st, const void *key, size_t klen,
                         double min, double max, int64_t limit,
                         emq_member_cb cb, void *ctx);
/** ZRANGE by rank from the start (rev = 0, ascending) or the end (rev = 1,
 *  descending by (score, member)), at most `limit` members (< 0: all). For a
 *  score-0 zset this is ZRANGEBYLEX - + / ZREVRANGEBYLEX + - with LIMIT. */
int emq_zset_range(emq_store *st, const void *key, size_t klen, int rev,
                   int64_t limit, emq_member_cb cb, void *ctx);
/** ZRANGE by rank with an offset: skip `offset` members from the start
 *  (rev = 0) or the end (rev = 1), then at most `limit` (< 0: all). */
int emq_zset_page(emq_store *st, const void *key, size_t klen, int rev,
                  int64_t offset, int64_t limit, emq_member_cb cb, void *ctx);
/** ZRANGEBYLEX/ZREVRANGEBYLEX over [min, max] (NULL bound = open end,
 *  inclusive bounds), at most `limit` (< 0: all). */
int emq_zset_range_lex(emq_store *st, const void *key, size_t klen,
                       const emq_bytes *min, const emq_bytes *max, int rev,
                       int64_t limit, emq_member_cb cb, void *ctx);

/** A keyset page: at most `limit` (> 0) members strictly after the cursor
 *  (score, m) in (score, member) order (rev = 1: strictly before it,
 *  descending). m NULL starts at the head (or the tail). The cost is the
 *  page's, not the cursor's depth. */
int emq_zset_after(emq_store *st, const void *key, size_t klen, int rev,
                   double score, const void *m, size_t mlen, int64_t limit,
                   emq_member_cb cb, void *ctx);

/* --------------------------------------------------------------- lists */

/** RPUSH (right = 1) or LPUSH (right = 0) one value; *len = new length. */
int emq_list_push(emq_store *st, const void *key, size_t klen, int right,
                  const void *v, size_t vlen, int64_t *len);
typedef int (*emq_value_cb)(void *ctx, const unsigned char *v, size_t vlen);
/** LRANGE start..stop with Redis index rules (negative from the tail). */
int emq_list_range(emq_store *st, const void *key, size_t klen, int64_t start,
                   int64_t stop, emq_value_cb cb, void *ctx);
/** LTRIM start..stop (negative from the tail); empty → key deleted. */
int emq_list_trim(emq_store *st, const void *key, size_t klen, int64_t start,
                  int64_t stop);
/** LREM count value (0 = all, > 0 from head, < 0 from tail); *removed. */
int emq_list_rem(emq_store *st, const void *key, size_t klen, int64_t count,
                 const void *v, size_t vlen, int64_t *removed);
/** LPOS: first index of value into *pos, or EMQ_NOTFOUND. With pos NULL
 *  only membership is answered (EMQ_OK / EMQ_NOTFOUND), without the walk
 *  that counts the index. */
int emq_list_pos(emq_store *st, const void *key, size_t klen, const void *v,
                 size_t vlen, int64_t *pos);
/** LLEN into *n. */
int emq_list_len(emq_store *st, const void *key, size_t klen, int64_t *n);
/** LPOP (right = 0) or RPOP (right = 1) one value; EMQ_NOTFOUND if empty. */
int emq_list_pop(emq_store *st, const void *key, size_t klen, int right,
                 emq_buf *out);
/** LMOVE key key LEFT RIGHT (rotate): the moved value, EMQ_NOTFOUND empty. */
int emq_list_rotate(emq_store *st, const void *key, size_t klen, emq_buf *out);

/* ---------------------------------------------------------------- sets */

int emq_sset_add(emq_store *st, const void *key, size_t klen, const void *m,
                size_t mlen, int *added);
int emq_sset_rem(emq_store *st, const void *key, size_t klen, const void *m,
                size_t mlen, int *removed);
int emq_sset_ismember(emq_store *st, const void *key, size_t klen,
                     const void *m, size_t mlen, int *is);
/** SMEMBERS in memcmp order. */
int emq_sset_members(emq_store *st, const void *key, size_t klen,
                    emq_value_cb cb, void *ctx);
int emq_sset_card(emq_store *st, const void *key, size_t klen, int64_t *n);

#endif /* EMQ_STORE_H */
