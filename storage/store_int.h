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
    S_L_POP_LEFT, S_L_POP_RIGHT,
    S_S_ADD, S_S_REM, S_S_IS, S_S_ALL, S_S_CARD, S_S_ANY, S_S_DROP,
    S_BEGIN_W, S_BEGIN_R, S_COMMIT, S_ROLLBACK, S_DATA_VERSION,
    S_COUNT
};

/* The aggregate registrations (name -> type, kid) used lately, kept across
 * this handle's own transactions and dropped whenever another connection
 * committed (PRAGMA data_version), a transaction rolled back, or the key was
 * dropped or given an expiry (kv.c). */
#define EMQ_KCACHE 8
typedef struct emq_kc_entry {
    emq_buf name;
    int type;        /* EMQ_T_NONE: the slot is free */
    int64_t kid;
} emq_kc_entry;

struct emq_store {
    sqlite3 *db;
    sqlite3_stmt *stmt[S_COUNT];
    emq_store_opts opts;
    int in_tx, tx_write;
    int64_t now;         /* the transaction's clock, for expiry            */
    int wal_frames;      /* frames in the WAL after the last commit         */
    int memory;
    int gate_fd;         /* the writer gate (gate.c), or -1               */
    emq_buf hraw, henc;  /* scratch for hash reads and writes              */
    emq_hfields hf;      /* decoded view of hraw                           */
    /* The last hash read or written in this transaction (hash.c): hkey's
     * row is hraw/hf while hvalid. Any kv write through emq_stmt() and
     * every transaction boundary clear hvalid. */
    emq_buf hkey;
    int hvalid, hexists;
    emq_kc_entry kc[EMQ_KCACHE];
    int kc_next;
    int64_t kc_version;
    struct emq_xs *xs;   /* the stream type's statements (stream.c)      */
    char errmsg[256];
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

/** The writer gate (gate.c): open beside `path`, close, enter shared for a
 *  write transaction, leave, and try to take it exclusive (1 = taken; leave
 *  releases it) for a checkpoint. */
int emq_wgate_open(emq_store *st, const char *path);
void emq_wgate_close(emq_store *st);
int emq_wgate_enter(emq_store *st);
void emq_wgate_leave(emq_store *st);
int emq_wgate_try_exclusive(emq_store *st);

/** Release the stream type's statements (stream.c; store close). */
void emq_xs_close(emq_store *st);

/** Forget every cached registration (kv.c). */
void emq_kc_clear(emq_store *st);

/** Run count statement `id` (one parameter: the kid) into *n. */
int emq_kid_count(emq_store *st, int id, int64_t kid, int64_t *n);

/** Bind helpers. */
int emq_bind_blob(sqlite3_stmt *s, int i, const void *p, size_t n);


#endif /* EMQ_STORE_INT_H */
