/*
 * store.c — the store's file: open with ownership checks, pragmas, schema,
 * the prepared-statement cache, transactions and checkpoints.
 *
 * Rules: a file that is not emqlite's is refused before a single byte of it
 * is written (we look at it read-only first); `synchronous` is always set
 * explicitly; WAL auto-checkpoints are off and checkpoints run only while
 * holding the writer gate exclusive (gate.c), so a checkpoint never races a
 * commit that resets the WAL (see doc/RELIABILITY.md).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "store_int.h"
#include "stream.h"

/* ------------------------------------------------------------------ SQL */

static const char *const schema_sql =
    "CREATE TABLE kv("
    " name BLOB PRIMARY KEY,"        /* the key, byte-exact              */
    " type INTEGER NOT NULL,"        /* enum emq_type                    */
    " kid INTEGER NOT NULL,"         /* element id of an aggregate, or 0  */
    " expire INTEGER,"               /* absolute ms, NULL for none       */
    " val BLOB"                      /* string value or encoded hash     */
    ") WITHOUT ROWID;"
    /* Sorted sets are stored in rank order; only members with a score
     * other than 0 need the member index (zset.c explains). */
    "CREATE TABLE zset(kid INTEGER NOT NULL, score REAL NOT NULL,"
    " member BLOB NOT NULL, PRIMARY KEY(kid, score, member)) WITHOUT ROWID;"
    "CREATE INDEX zset_member ON zset(kid, member) WHERE score <> 0;"
    "CREATE TABLE list(kid INTEGER NOT NULL, pos INTEGER NOT NULL,"
    " val BLOB NOT NULL, PRIMARY KEY(kid, pos)) WITHOUT ROWID;"
    "CREATE TABLE sset(kid INTEGER NOT NULL, member BLOB NOT NULL,"
    " PRIMARY KEY(kid, member)) WITHOUT ROWID;"
    "CREATE TABLE emq_meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
    "INSERT INTO emq_meta VALUES('next_kid', 1);";

static const char *const sql[S_COUNT] = {
    [S_KEY_GET] = "SELECT type, kid, expire, val FROM kv WHERE name = ?1",
    [S_KEY_INSERT] = "INSERT INTO kv(name, type, kid, expire, val)"
                     " VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_KEY_DELETE] = "DELETE FROM kv WHERE name = ?1",
    [S_KEY_PUT_VAL] = "UPDATE kv SET val = ?2 WHERE name = ?1",
    [S_KEY_SET_EXPIRE] = "UPDATE kv SET expire = ?2 WHERE name = ?1",
    [S_KEY_UPSERT] = "INSERT OR REPLACE INTO kv(name, type, kid, expire, val)"
                     " VALUES(?1, ?2, 0, ?3, ?4)",
    [S_KEY_CREATE_NX] = "INSERT INTO kv(name, type, kid, expire, val)"
                        " VALUES(?1, ?2, 0, NULL, ?3) ON CONFLICT DO NOTHING",
    [S_KID_NEXT] = "UPDATE emq_meta SET v = v + 1 WHERE k = 'next_kid'"
                   " RETURNING v - 1",
    [S_Z_PROBE0] = "SELECT 0.0 FROM zset WHERE kid = ?1 AND score = 0"
                   " AND member = ?2 UNION ALL"
                   " SELECT score FROM zset WHERE kid = ?1 AND member = ?2"
                   " AND score <> 0 LIMIT 1",
    [S_Z_INSERT] = "INSERT INTO zset(kid, score, member) VALUES(?1, ?3, ?2)",
    [S_Z_DEL] = "DELETE FROM zset WHERE kid = ?1 AND score = ?3"
                " AND member = ?2",
    [S_Z_CARD] = "SELECT count(*) FROM zset WHERE kid = ?1",
    [S_Z_ANY] = "SELECT 1 FROM zset WHERE kid = ?1 LIMIT 1",
    [S_Z_RANGE_SCORE] = "SELECT member, score FROM zset WHERE kid = ?1"
                        " AND score >= ?2 AND score <= ?3"
                        " ORDER BY score, member LIMIT ?4",
    [S_Z_RANGE_ASC] = "SELECT member, score FROM zset WHERE kid = ?1"
                      " ORDER BY score, member LIMIT ?2",
    [S_Z_RANGE_DESC] = "SELECT member, score FROM zset WHERE kid = ?1"
                       " ORDER BY score DESC, member DESC LIMIT ?2",
    /* Lexical ranges walk rank order (Valkey's rule: lexical ranges are
     * meant for sets whose members share one score). */
    [S_Z_LEX_ASC] = "SELECT member, score FROM zset WHERE kid = ?1"
                    " AND (?2 IS NULL OR member >= ?2)"
                    " AND (?3 IS NULL OR member <= ?3)"
                    " ORDER BY score, member LIMIT ?4",
    [S_Z_LEX_DESC] = "SELECT member, score FROM zset WHERE kid = ?1"
                     " AND (?2 IS NULL OR member >= ?2)"
                     " AND (?3 IS NULL OR member <= ?3)"
                     " ORDER BY score DESC, member DESC LIMIT ?4",
    [S_Z_DROP] = "DELETE FROM zset WHERE kid = ?1",
    [S_L_MINMAX] = "SELECT min(pos), max(pos), count(*) FROM list"
                   " WHERE kid = ?1",
    [S_L_INSERT] = "INSERT INTO list(kid, pos, val) VALUES(?1, ?2, ?3)",
    [S_L_ASC] = "SELECT pos, val FROM list WHERE kid = ?1 ORDER BY pos"
                " LIMIT ?2 OFFSET ?3",
    [S_L_DESC] = "SELECT pos, val FROM list WHERE kid = ?1"
                 " ORDER BY pos DESC LIMIT ?2 OFFSET ?3",
    [S_L_DEL] = "DELETE FROM list WHERE kid = ?1 AND pos = ?2",
    [S_L_COUNT] = "SELECT count(*) FROM list WHERE kid = ?1",
    [S_L_DROP] = "DELETE FROM list WHERE kid = ?1",
    [S_L_ANY] = "SELECT 1 FROM list WHERE kid = ?1 LIMIT 1",
    [S_L_POP_LEFT] = "DELETE FROM list WHERE kid = ?1 AND pos ="
                     " (SELECT min(pos) FROM list WHERE kid = ?1)"
                     " RETURNING val",
    [S_L_POP_RIGHT] = "DELETE FROM list WHERE kid = ?1 AND pos ="
                      " (SELECT max(pos) FROM list WHERE kid = ?1)"
                      " RETURNING val",
    [S_S_ADD] = "INSERT INTO sset(kid, member) VALUES(?1, ?2)"
                " ON CONFLICT DO NOTHING",
    [S_S_REM] = "DELETE FROM sset WHERE kid = ?1 AND member = ?2",
    [S_S_IS] = "SELECT 1 FROM sset WHERE kid = ?1 AND member = ?2",
    [S_S_ALL] = "SELECT member FROM sset WHERE kid = ?1 ORDER BY member",
    [S_S_CARD] = "SELECT count(*) FROM sset WHERE kid = ?1",
    [S_S_ANY] = "SELECT 1 FROM sset WHERE kid = ?1 LIMIT 1",
    [S_S_DROP] = "DELETE FROM sset WHERE kid = ?1",
    [S_BEGIN_W] = "BEGIN IMMEDIATE",
    [S_BEGIN_R] = "BEGIN DEFERRED",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_DATA_VERSION] = "PRAGMA data_version",
};

/* ------------------------------------------------------------- errors */

int emq_store_err(emq_store *st, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->errmsg, sizeof st->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

static int map_rc(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return EMQ_EBUSY;
    case SQLITE_IOERR: return EMQ_EIO;
    case SQLITE_FULL: return EMQ_EFULL;
    case SQLITE_NOMEM: return EMQ_ENOMEM;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return EMQ_ECORRUPT;
    case SQLITE_READONLY:
    case SQLITE_PERM: return EMQ_EREADONLY;
    case SQLITE_CANTOPEN: return EMQ_ECANTOPEN;
    case SQLITE_TOOBIG: return EMQ_ETOOBIG;
    default: return EMQ_EINTERNAL;
    }
}

int emq_store_fail(emq_store *st, int rc)
{
    const char *m = st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
    return emq_store_err(st, map_rc(rc), "sqlite: %s", m);
}

const char *emq_store_errmsg(const emq_store *st)
{
    return st ? st->errmsg : "";
}

sqlite3 *emq_store_sqlite(emq_store *st)
{
    return st->db;
}

/* --------------------------------------------------------- statements */

sqlite3_stmt *emq_stmt(emq_store *st, int id)
{
    switch (id) { /* statements that write kv rows end the hash cache */
    case S_KEY_INSERT: case S_KEY_DELETE: case S_KEY_PUT_VAL:
    case S_KEY_SET_EXPIRE: case S_KEY_UPSERT: case S_KEY_CREATE_NX:
        st->hvalid = 0;
        break;
    default:
        break;
    }
    if (!st->stmt[id] &&
        sqlite3_prepare_v3(st->db, sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                           &st->stmt[id], NULL) != SQLITE_OK) {
        emq_store_fail(st, sqlite3_errcode(st->db));
        return NULL;
    }
    return st->stmt[id];
}

/* Reset a statement after use. Bindings are kept: every caller binds every
 * parameter of its statement on each use (NULLs included), and the blobs
 * are bound SQLITE_STATIC only for the duration of the call. */
void emq_stmt_done(sqlite3_stmt *s)
{
    if (s)
        sqlite3_reset(s);
}

int emq_bind_blob(sqlite3_stmt *s, int i, const void *p, size_t n)
{
    /* A zero-length blob must still bind as a blob, never as NULL. */
    static const char empty[1];
    return sqlite3_bind_blob64(s, i, n ? p : empty, n, SQLITE_STATIC);
}

/* Run a statement with no bindings to completion. */
static int exec_stmt(emq_store *st, int id)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    return EMQ_OK;
}

/* ------------------------------------------------------------- open */

static int is_memory(const char *path)
{
    return path == NULL || path[0] == '\0' || strcmp(path, ":memory:") == 0;
}

static int wal_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
    (void)db;
    (void)name;
    ((emq_store *)ctx)->wal_frames = frames;
    return SQLITE_OK;
}

static int pragma_int(sqlite3 *db, const char *q, int64_t *out)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, q, -1, &s, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(s, 0);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            *out = 0;
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(s);
    return rc;
}

/* A signed big-endian 32-bit header field. */
static int32_t be32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                     (uint32_t)p[2] << 8 | p[3]);
}

/*
 * Look at an existing file read-only and decide whether it is ours. Returns
 * EMQ_OK (ours, or empty and free to initialise), EMQ_ENOTEMQ, EMQ_ESCHEMA,
 * or an open error. Never writes to the file.
 */
static int inspect(emq_store *st, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_size == 0)
        return EMQ_OK; /* new file: nothing to protect */

    FILE *f = fopen(path, "rb");
    if (!f)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot read %s", path);
    unsigned char hdr[100];
    size_t got = fread(hdr, 1, sizeof hdr, f);
    fclose(f);
    if (got < sizeof hdr || memcmp(hdr, "SQLite format 3", 16) != 0)
        return emq_store_err(st, EMQ_ENOTEMQ,
                             "%s is not an emqlite file (not SQLite)", path);

    /* The stamps live in the header: user_version at byte 60,
     * application_id at 68, both big-endian. A file stamped ours (or
     * another application's) is judged from them alone, without opening
     * it: other processes may be writing and checkpointing it right now. */
    int64_t appid = be32(hdr + 68), uver = be32(hdr + 60);
    int64_t ntab = 0;
    int rc = SQLITE_OK;
    if (appid == 0) {
        /* Unstamped header: an empty database, a foreign one, or one of
         * ours whose first transaction still sits in its WAL. With a WAL
         * beside it, open it as a reader among the others (the WAL is part
         * of the content); without one, nobody has it open in WAL mode and
         * an immutable read creates no side file. */
        char wal[4200];
        snprintf(wal, sizeof wal, "%s-wal", path);
        int has_wal = stat(wal, &sb) == 0;
        char uri[4200];
        size_t u = (size_t)snprintf(uri, sizeof uri, "file:");
        for (const unsigned char *c = (const unsigned char *)path;
             *c && u + 4 < sizeof uri; c++) {
            if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 ||
                *c >= 0x7f)
                u += (size_t)snprintf(uri + u, sizeof uri - u, "%%%02X", *c);
            else
                uri[u++] = (char)*c;
        }
        snprintf(uri + u, sizeof uri - u, "%s",
                 has_wal ? "?mode=ro" : "?immutable=1");
        sqlite3 *db = NULL;
        rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                             NULL);
        if (rc == SQLITE_OK)
            rc = pragma_int(db, "PRAGMA application_id", &appid);
        if (rc == SQLITE_OK)
            rc = pragma_int(db, "PRAGMA user_version", &uver);
        if (rc == SQLITE_OK)
            rc = pragma_int(db, "SELECT count(*) FROM sqlite_schema", &ntab);
        sqlite3_close(db);
    }
    if (rc != SQLITE_OK) {
        int code = map_rc(rc);
        if (code == EMQ_ECORRUPT || code == EMQ_EINTERNAL)
            return emq_store_err(st, EMQ_ENOTEMQ,
                                 "%s is not an emqlite file (%s)", path,
                                 sqlite3_errstr(rc));
        return emq_store_err(st, code, "cannot inspect %s: %s", path,
                             sqlite3_errstr(rc));
    }
    if (appid == 0 && uver == 0 && ntab == 0)
        return EMQ_OK; /* an empty SQLite database: adopt it */
    if (appid != EMQ_APPLICATION_ID)
        return emq_store_err(st, EMQ_ENOTEMQ,
                             "%s is an SQLite file of another application "
                             "(application_id %lld)", path, (long long)appid);
    if (uver > EMQ_SCHEMA_VERSION)
        return emq_store_err(st, EMQ_ESCHEMA,
                             "%s has schema version %lld; this emqlite reads "
                             "up to %d", path, (long long)uver,
                             EMQ_SCHEMA_VERSION);
    return EMQ_OK;
}

static int exec_sql(emq_store *st, const char *q)
{
    char *msg = NULL;
    int rc = sqlite3_exec(st->db, q, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        int code = map_rc(rc);
        emq_store_err(st, code, "sqlite: %s", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return code;
    }
    return EMQ_OK;
}

/* Create the schema in a fresh file, or check the stamp of an old one. */
static int init_schema(emq_store *st)
{
    int64_t appid = 0, uver = 0, ntab = 0;
    int rc = emq_store_begin(st, 1, 0);
    if (rc != EMQ_OK)
        return rc;
    if (pragma_int(st->db, "PRAGMA application_id", &appid) != SQLITE_OK ||
        pragma_int(st->db, "PRAGMA user_version", &uver) != SQLITE_OK ||
        pragma_int(st->db, "SELECT count(*) FROM sqlite_schema", &ntab)) {
        rc = emq_store_fail(st, sqlite3_errcode(st->db));
        goto fail;
    }
    if (appid == 0 && uver == 0 && ntab > 0) {
        rc = emq_store_err(st, EMQ_ENOTEMQ, "not an emqlite file");
        goto fail;
    }
    if (appid == 0 && uver == 0) {
        char stamp[96];
        snprintf(stamp, sizeof stamp,
                 "PRAGMA application_id = %d; PRAGMA user_version = %d;",
                 EMQ_APPLICATION_ID, EMQ_SCHEMA_VERSION);
        /* The stream type's tables (stream.c) come with the fresh schema
         * of version 1: files made before them lack them (see SCHEMA.md). */
        if ((rc = exec_sql(st, schema_sql)) != EMQ_OK ||
            (rc = exec_sql(st, emq_xs_schema)) != EMQ_OK ||
            (rc = exec_sql(st, stamp)) != EMQ_OK)
            goto fail;
    } else if (appid != EMQ_APPLICATION_ID) {
        rc = emq_store_err(st, EMQ_ENOTEMQ, "not an emqlite file");
        goto fail;
    } else if (uver > EMQ_SCHEMA_VERSION) {
        rc = emq_store_err(st, EMQ_ESCHEMA, "newer schema version %lld",
                           (long long)uver);
        goto fail;
    }
    return emq_store_commit(st);
fail:
    emq_store_rollback(st);
    return rc;
}

static int set_pragmas(emq_store *st)
{
    char q[160];
    int rc;
    sqlite3_busy_timeout(st->db, st->opts.busy_timeout_ms);
    if (st->opts.exclusive &&
        (rc = exec_sql(st, "PRAGMA locking_mode = EXCLUSIVE")) != EMQ_OK)
        return rc;
    if (!st->memory && !st->opts.readonly) {
        if ((rc = exec_sql(st, "PRAGMA journal_mode = WAL")) != EMQ_OK)
            return rc;
    }
    snprintf(q, sizeof q,
             "PRAGMA synchronous = %s; PRAGMA wal_autocheckpoint = 0;"
             " PRAGMA foreign_keys = OFF; PRAGMA trusted_schema = OFF;",
             st->opts.synchronous == EMQ_SYNC_FULL ? "FULL" : "NORMAL");
    return exec_sql(st, q);
}

int emq_store_open(const char *path, const emq_store_opts *o, emq_store **out,
                   char *err, size_t errlen)
{
    int rc;
    emq_store *st = emq_mem_calloc(1, sizeof *st);
    *out = NULL;
    if (!st) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return EMQ_ENOMEM;
    }
    emq_mem_hold();
    st->opts = *o;
    st->gate_fd = -1;
    if (st->opts.busy_timeout_ms < 0)
        st->opts.busy_timeout_ms = 0;
    st->memory = is_memory(path);
    if (!st->memory && (rc = inspect(st, path)) != EMQ_OK)
        goto fail;

    int flags = st->opts.readonly ? SQLITE_OPEN_READONLY
                                  : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    rc = sqlite3_open_v2(st->memory ? ":memory:" : path, &st->db,
                         flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = emq_store_fail(st, rc);
        goto fail;
    }
    sqlite3_extended_result_codes(st->db, 1);
    if ((rc = emq_wgate_open(st, path)) != EMQ_OK ||
        (rc = set_pragmas(st)) != EMQ_OK)
        goto fail;
    /* The transaction statements, prepared now: ending a transaction must
     * never need memory, and here a failure can still refuse the open. */
    for (int i = S_BEGIN_W; i <= S_ROLLBACK; i++)
        if (!emq_stmt(st, i)) {
            rc = emq_store_fail(st, sqlite3_errcode(st->db));
            goto fail;
        }
    if (!st->opts.readonly && (rc = init_schema(st)) != EMQ_OK)
        goto fail;
    sqlite3_wal_hook(st->db, wal_hook, st);
    *out = st;
    return EMQ_OK;
fail:
    if (err && errlen)
        snprintf(err, errlen, "%s", st->errmsg);
    emq_store_close(st);
    return rc;
}

void emq_store_close(emq_store *st)
{
    if (!st)
        return;
    if (st->in_tx)
        emq_store_rollback(st);
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(st->stmt[i]);
    emq_xs_close(st);
    sqlite3_close(st->db);
    emq_wgate_close(st);
    emq_buf_free(&st->hraw);
    emq_buf_free(&st->hkey);
    for (int i = 0; i < EMQ_KCACHE; i++)
        emq_buf_free(&st->kc[i].name);
    emq_buf_free(&st->henc);
    emq_hc_free(&st->hf);
    emq_mem_free(st);
    emq_mem_release();
}

/* ------------------------------------------------------- transactions */

int emq_store_begin(emq_store *st, int write, int64_t now_ms)
{
    if (st->in_tx)
        return emq_store_err(st, EMQ_EINTERNAL, "transaction already open");
    st->errmsg[0] = '\0'; /* no message survives into a new transaction */
    /* A ROLLBACK that failed (it should not) left SQLite's transaction
     * open: end it before starting ours. */
    if (!sqlite3_get_autocommit(st->db))
        exec_stmt(st, S_ROLLBACK);
    int rc = write ? emq_wgate_enter(st) : EMQ_OK;
    if (rc != EMQ_OK)
        return rc;
    if ((rc = exec_stmt(st, write ? S_BEGIN_W : S_BEGIN_R)) != EMQ_OK) {
        if (write)
            emq_wgate_leave(st);
        return rc;
    }
    st->in_tx = 1;
    st->tx_write = write;
    st->now = now_ms;
    st->hvalid = 0;
    if (write) {
        /* Another connection's commit invalidates the registration cache;
         * our own commits leave data_version unchanged. */
        sqlite3_stmt *s = emq_stmt(st, S_DATA_VERSION);
        int64_t v = -1;
        if (s && sqlite3_step(s) == SQLITE_ROW)
            v = sqlite3_column_int64(s, 0);
        emq_stmt_done(s);
        if (v < 0 || v != st->kc_version)
            emq_kc_clear(st);
        st->kc_version = v;
    }
    return EMQ_OK;
}

void emq_store_set_now(emq_store *st, int64_t now_ms)
{
    st->now = now_ms;
    st->hvalid = 0;
}

int64_t emq_store_now(const emq_store *st)
{
    return st->now;
}

int emq_store_commit(emq_store *st)
{
    if (!st->in_tx)
        return emq_store_err(st, EMQ_EINTERNAL, "no transaction open");
    st->hvalid = 0;
    int rc = exec_stmt(st, S_COMMIT);
    if (rc != EMQ_OK) {
        emq_store_rollback(st);
        return rc;
    }
    st->in_tx = 0;
    if (st->tx_write)
        emq_wgate_leave(st);
    if (st->tx_write && st->opts.checkpoint_frames > 0 &&
        st->wal_frames >= st->opts.checkpoint_frames)
        emq_store_checkpoint(st); /* best effort: a busy reader defers it */
    return EMQ_OK;
}

void emq_store_rollback(emq_store *st)
{
    st->hvalid = 0;
    emq_kc_clear(st);
    if (!st->in_tx)
        return;
    /* Statements left mid-step (an error path) must be reset first. */
    for (int i = 0; i < S_COUNT; i++)
        if (st->stmt[i])
            sqlite3_reset(st->stmt[i]);
    if (!sqlite3_get_autocommit(st->db))
        exec_stmt(st, S_ROLLBACK);
    st->in_tx = 0;
    if (st->tx_write)
        emq_wgate_leave(st);
}

int emq_store_checkpoint(emq_store *st)
{
    if (st->memory)
        return EMQ_OK;
    if (st->in_tx)
        return emq_store_err(st, EMQ_EINTERNAL, "checkpoint inside a "
                             "transaction");
    /* Only with the writer gate held exclusive: no emqlite commit can run
     * meanwhile, even if SQLite falls back from RESTART to PASSIVE. A writer
     * in flight defers the checkpoint to a later commit. */
    if (!emq_wgate_try_exclusive(st))
        return emq_store_err(st, EMQ_EBUSY, "a write transaction is in "
                             "flight; checkpoint deferred");
    /* Do not wait for readers on old snapshots either: what they pin is
     * checkpointed by a later call. */
    sqlite3_busy_timeout(st->db, 0);
    int logf = 0, ckpt = 0;
    int rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_RESTART,
                                       &logf, &ckpt);
    sqlite3_busy_timeout(st->db, st->opts.busy_timeout_ms);
    emq_wgate_leave(st);
    if (rc == SQLITE_OK) {
        st->wal_frames = 0;
        return EMQ_OK;
    }
    return emq_store_fail(st, rc);
}
