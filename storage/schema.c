/*
 * schema.c — the schema ladder (schema.def) and the judge of a file's schema
 * objects.
 *
 * A file of schema N opened by a build of schema M > N climbs steps N+1..M
 * inside the open's write transaction, then its user_version is stamped M:
 * the upgrade is atomic. A fresh file climbs from 0. A read-only handle
 * never climbs (store.c refuses the file untouched instead).
 *
 * Rules: a step's SQL is fixed text; a step must keep the columns the open's
 * first look reads (kv.name, kv.type, kv.val: store.c, `judge_key`). The
 * schema a version must have is not written down a second time: it is what
 * the ladder builds. A file is judged by climbing the ladder to the file's
 * version in a private in-memory database (once per process and version)
 * and comparing sqlite_schema row by row (type, name, table, SQL text):
 * every object of the file must be one
 * of emqlite's, byte for byte, and every one of emqlite's must be there. The
 * only others tolerated are the statistics tables ANALYZE creates
 * (sqlite_stat1..4). A foreign trigger, view, index or table, or an altered
 * one, is a finding.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store_int.h"
#include "hashcodec.h"
#include "evlog.h"
#include "journal.h"
#include "stream.h"

/* ------------------------------------------------------------ the steps */

/* Version 1: the key table, the element tables, the meta table. */
static const char *const schema_1_sql =
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

static int schema_1_tables(emq_store *st)
{
    return emq_store_exec(st, schema_1_sql);
}

/* Version 2: a checksum column in the key table (rowsum.c), NULL until the
 * file's checksums are turned on (meta `checksums` = 1). Adding a column
 * rewrites no row. */
static int schema_2_row_checksums(emq_store *st)
{
    return emq_store_exec(st, "ALTER TABLE kv ADD COLUMN sum INTEGER;"
                              "INSERT INTO emq_meta VALUES('checksums', 0);");
}

/* Version 3: the lifecycle event log (evlog.c, Tier 2) and the procedure
 * journal (journal.c, Tier 4's multi-transaction adds), both beside the
 * keyspace: never keys, never exported. */
static int schema_3_events_and_journal(emq_store *st)
{
    int rc = emq_store_exec(st, EMQ_EVLOG_DDL);
    return rc != EMQ_OK ? rc : emq_store_exec(st, JOURNAL_DDL ";");
}

/* Version 4: the stream type (stream.c, Tier 5): metadata, entries,
 * groups, consumers and pending entries under the key's kid. */
static int schema_4_streams(emq_store *st)
{
    return emq_store_exec(st, EMQ_XS_DDL);
}

/* Version 5: host-side configuration beside the keyspace (hostconf.c:
 * the retry policies of issue 17), never a key, never exported. */
static int schema_5_hostconf(emq_store *st)
{
    return emq_store_exec(st, EMQ_HOSTCONF_DDL);
}

/* emq_hc_v6(val): a schema-5 hash blob in schema 6's form. A blob that
 * does not parse is kept as it is: the upgrade does not make a damaged row
 * worse, and emq_check reports it as it did. */
static void fn_hash_v6(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    emq_buf out = {0};
    int rc;
    (void)argc;
    if (sqlite3_value_type(v[0]) != SQLITE_BLOB) {
        sqlite3_result_value(cx, v[0]);
        return;
    }
    rc = emq_hc_upgrade_v5(sqlite3_user_data(cx), sqlite3_value_blob(v[0]),
                           (size_t)sqlite3_value_bytes(v[0]), &out);
    if (rc == EMQ_OK)
        sqlite3_result_blob64(cx, out.p, out.len, SQLITE_TRANSIENT);
    else if (rc == EMQ_ENOMEM)
        sqlite3_result_error_nomem(cx);
    else
        sqlite3_result_value(cx, v[0]);
    emq_buf_free(&out);
}

/* *any = 1 when some hash row carries a checksum. */
static int hash_sums(emq_store *st, int *any)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "SELECT 1 FROM kv WHERE type = 2 "
                                "AND sum IS NOT NULL LIMIT 1", -1, &s, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    sqlite3_finalize(s);
    *any = rc == SQLITE_ROW;
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? EMQ_OK
                                                 : emq_store_fail(st, rc);
}

/* Version 6: hash blobs spell the opener's dictionary words (the engine's:
 * the job row's field names and state strings) as one-byte tokens
 * (hashcodec.h), ~30 bytes less per job row. Every hash
 * row is re-encoded, and its checksum recomputed where it has one (the
 * sum covers val). */
static int schema_6_hash_tokens(emq_store *st)
{
    const int f = SQLITE_UTF8 | SQLITE_DIRECTONLY | SQLITE_DETERMINISTIC;
    int rc = sqlite3_create_function_v2(st->db, "emq_hc_v6", 1, f,
                                        (void *)st->opts.dict, fn_hash_v6,
                                        NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return emq_store_fail(st, rc);
    rc = emq_store_exec(st, "UPDATE kv SET val = emq_hc_v6(val) "
                            "WHERE type = 2;");
    int sums = 0;
    if (rc == EMQ_OK && (rc = hash_sums(st, &sums)) == EMQ_OK && sums)
        rc = emq_store_exec(st, "UPDATE kv SET sum = emq_sum_of(name, type, "
                                "kid, expire, val) WHERE type = 2 AND sum IS "
                                "NOT NULL;");
    sqlite3_create_function_v2(st->db, "emq_hc_v6", 1, f, NULL, NULL, NULL,
                               NULL, NULL);
    return rc;
}

/* Version 7: small sorted sets keep no member index (zset.c, shape). A
 * column `ix` (1: the row is in the index, NULL: it is not) and the index
 * holds only the rows with ix = 1, UNIQUE (a member is in a set once), so
 * a ZADD into a big set at a score other than 0 is one INSERT ... ON
 * CONFLICT DO NOTHING. Every row at a score other than 0 of the file being
 * upgraded gets ix = 1: its sets start big, and turn small when their last
 * such member goes. A file holding the same member twice at scores other
 * than 0 cannot climb this step: its open fails with the constraint. */
static int schema_7_small_sets(emq_store *st)
{
    return emq_store_exec(st, "ALTER TABLE zset ADD COLUMN ix INTEGER;"
                              "UPDATE zset SET ix = 1 WHERE score <> 0;"
                              "DROP INDEX zset_member;"
                              "CREATE UNIQUE INDEX zset_member ON"
                              " zset(kid, member) WHERE ix = 1;");
}

static const struct step {
    int version;
    int (*run)(emq_store *st);
} ladder[] = {
#define STEP(v, fn) { v, fn },
#include "schema.def"
#undef STEP
};

_Static_assert(sizeof ladder / sizeof ladder[0] == EMQ_SCHEMA_VERSION,
               "EMQ_SCHEMA_VERSION counts the rows of schema.def");

int emq_schema_climb(emq_store *st, int from, int to, int stamp_app)
{
    char q[96];
    int rc = EMQ_OK;
    if (from < 0 || to > EMQ_SCHEMA_VERSION || from > to)
        return emq_store_err(st, EMQ_EINTERNAL, "no schema step from %d to "
                             "%d", from, to);
    for (int i = from; i < to && rc == EMQ_OK; i++)
        rc = ladder[i].version == i + 1 ? ladder[i].run(st)
                                        : emq_store_err(st, EMQ_EINTERNAL,
                                                        "schema.def is out "
                                                        "of order");
    if (rc != EMQ_OK)
        return rc;
    if (stamp_app) {
        snprintf(q, sizeof q, "PRAGMA application_id = %d;",
                 EMQ_APPLICATION_ID);
        if ((rc = emq_store_exec(st, q)) != EMQ_OK)
            return rc;
    }
    snprintf(q, sizeof q, "PRAGMA user_version = %d;", to);
    return emq_store_exec(st, q);
}

/* ------------------------------------------------------------- judging */

/* sqlite_schema in name order, without ANALYZE's tables. */
static const char q_objects[] =
    "SELECT type, name, tbl_name, sql FROM sqlite_schema"
    " WHERE NOT (type = 'table' AND name GLOB 'sqlite_stat[1-4]')"
    " ORDER BY name";

/* Printable rendering of a schema name for a message. */
static void show(char *out, size_t cap, const unsigned char *p)
{
    size_t o = 0;
    for (; p && *p && o + 5 < cap; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '"')
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
    }
    out[o] = 0;
}

static const unsigned char *col(sqlite3_stmt *s, int i)
{
    return sqlite3_column_text(s, i);
}

/* Two nullable texts equal. */
static int same(const unsigned char *a, const unsigned char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp((const char *)a, (const char *)b) == 0;
}

static int step_rc(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY: case SQLITE_LOCKED: return EMQ_EBUSY;
    case SQLITE_IOERR: return EMQ_EIO;
    case SQLITE_NOMEM: return EMQ_ENOMEM;
    case SQLITE_CORRUPT: case SQLITE_NOTADB: return EMQ_ECORRUPT;
    default: return EMQ_EINTERNAL;
    }
}

/* Report one finding: "<what> <type> \"<name>\"[ on table \"t\"]". */
static void finding(emq_schema_cb cb, void *ctx, const char *what,
                    const unsigned char *type, const unsigned char *rawname,
                    const unsigned char *rawtbl, int version)
{
    char msg[400], name[120], tbl[120];
    if (cb == NULL)
        return;
    show(name, sizeof name, rawname);
    show(tbl, sizeof tbl, rawtbl);
    if (strcmp(what, "differs") == 0)
        snprintf(msg, sizeof msg, "%s \"%s\" differs from emqlite's schema "
                 "%d", type ? (const char *)type : "object", name, version);
    else
        snprintf(msg, sizeof msg, "%s %s \"%s\"%s%s%s", what,
                 type ? (const char *)type : "object", name,
                 strcmp(name, tbl) ? " on table \"" : "",
                 strcmp(name, tbl) ? tbl : "", strcmp(name, tbl) ? "\"" : "");
    cb(ctx, msg);
}

/*
 * The objects a version must have, as the ladder builds them: the rows of
 * q_objects, read once per process from a private in-memory database that
 * climbed the ladder, and kept (they never change; no heap is held).
 */
#define REF_TEXT 8192
#define REF_ROWS 32
typedef struct ref {
    int ready, n;
    const unsigned char *row[REF_ROWS][4]; /* into text; NULL for NULL */
    unsigned char text[REF_TEXT];
} ref;
static ref refs[EMQ_SCHEMA_VERSION];
static pthread_mutex_t refs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Copy the rows of `s` into r. EMQ_OK, or EMQ_EINTERNAL when they do not
 * fit (a larger REF_TEXT/REF_ROWS is then needed). */
static int ref_fill(ref *r, sqlite3_stmt *s)
{
    size_t used = 0;
    int rc;
    r->n = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (r->n == REF_ROWS)
            return EMQ_EINTERNAL;
        for (int c = 0; c < 4; c++) {
            const unsigned char *t = sqlite3_column_text(s, c);
            size_t n = t ? strlen((const char *)t) + 1 : 0;
            if (t == NULL && sqlite3_column_type(s, c) != SQLITE_NULL)
                return EMQ_ENOMEM;
            if (used + n > REF_TEXT)
                return EMQ_EINTERNAL;
            r->row[r->n][c] = t ? memcpy(r->text + used, t, n) : NULL;
            used += n;
        }
        r->n++;
    }
    return rc == SQLITE_DONE ? EMQ_OK : step_rc(rc);
}

/* The reference of `version` (1..EMQ_SCHEMA_VERSION), built on first use. */
static int ref_get(int version, const ref **out)
{
    ref *r = &refs[version - 1];
    emq_store *scratch = NULL;
    sqlite3_stmt *s = NULL;
    int rc = EMQ_OK;
    pthread_mutex_lock(&refs_lock);
    if (r->ready)
        goto done;
    scratch = emq_mem_calloc(1, sizeof *scratch);
    if (scratch == NULL) {
        rc = EMQ_ENOMEM;
        goto done;
    }
    rc = sqlite3_open_v2(":memory:", &scratch->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    rc = rc == SQLITE_OK ? EMQ_OK : step_rc(rc);
    for (int i = 0; i < version && rc == EMQ_OK; i++)
        rc = ladder[i].run(scratch);
    if (rc == EMQ_OK &&
        (rc = sqlite3_prepare_v2(scratch->db, q_objects, -1, &s, NULL)) !=
            SQLITE_OK)
        rc = step_rc(rc);
    if (rc == EMQ_OK && (rc = ref_fill(r, s)) == EMQ_OK)
        r->ready = 1;
done:
    pthread_mutex_unlock(&refs_lock);
    sqlite3_finalize(s);
    if (scratch)
        sqlite3_close(scratch->db);
    emq_mem_free(scratch);
    *out = r;
    return rc;
}

/* Compare the objects of `file` (positioned before its first row) with the
 * reference. Returns the number of findings or a negative code. */
static int compare(sqlite3_stmt *file, const ref *want, int version,
                   emq_schema_cb cb, void *ctx)
{
    int n = 0, w = 0, rf = sqlite3_step(file);
    while (rf == SQLITE_ROW || w < want->n) {
        const unsigned char *const *wr = w < want->n ? want->row[w] : NULL;
        int c;
        if (rf != SQLITE_ROW)
            c = 1;
        else if (wr == NULL)
            c = -1;
        else
            c = strcmp((const char *)col(file, 1), (const char *)wr[1]);
        if (c < 0) {
            finding(cb, ctx, "foreign", col(file, 0), col(file, 1),
                    col(file, 2), version);
            n++;
            rf = sqlite3_step(file);
        } else if (c > 0) {
            finding(cb, ctx, "missing", wr[0], wr[1], wr[2], version);
            n++;
            w++;
        } else {
            if (!same(col(file, 0), wr[0]) || !same(col(file, 2), wr[2]) ||
                !same(col(file, 3), wr[3])) {
                finding(cb, ctx, "differs", col(file, 0), col(file, 1),
                        col(file, 2), version);
                n++;
            }
            rf = sqlite3_step(file);
            w++;
        }
    }
    return rf == SQLITE_DONE ? n : step_rc(rf);
}

int emq_schema_judge(sqlite3 *db, int version, emq_schema_cb cb, void *ctx)
{
    const ref *want;
    sqlite3_stmt *file = NULL;
    int rc;
    if (version < 1 || version > EMQ_SCHEMA_VERSION)
        return EMQ_EINTERNAL;
    if ((rc = ref_get(version, &want)) != EMQ_OK)
        return rc;
    if ((rc = sqlite3_prepare_v2(db, q_objects, -1, &file, NULL)) !=
        SQLITE_OK)
        rc = step_rc(rc);
    else
        rc = compare(file, want, version, cb, ctx);
    sqlite3_finalize(file);
    return rc;
}

/* The findings of emq_store_check_schema go to the caller's callback. */
/* ------------------------------------------------ the file's own checks */

/* A failed PRAGMA that is not damage: the check cannot go on. */
static int pragma_failed(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return EMQ_EBUSY;
    case SQLITE_IOERR: return EMQ_EIO;
    case SQLITE_NOMEM: return EMQ_ENOMEM;
    default: return EMQ_EINTERNAL;
    }
}

/*
 * integrity_check reports a page it could not read as a row ("... error
 * code=N"). A read that failed for I/O, memory or a lock is not damage:
 * answer that code's failure instead of a finding. 0 when `t` is not such
 * a row.
 */
static int unreadable(const char *t)
{
    const char *p = t ? strstr(t, "error code=") : NULL;
    long code;
    if (p == NULL) return 0;
    code = strtol(p + sizeof "error code=" - 1, NULL, 10);
    switch (code & 0xff) {
    case SQLITE_BUSY: case SQLITE_LOCKED: case SQLITE_IOERR:
    case SQLITE_NOMEM: return pragma_failed((int)code);
    default: return 0;
    }
}

int emq_store_check_file(emq_store *st, emq_file_cb cb, void *ctx)
{
    static const struct { const char *sql, *what; long want; } stamp[] = {
        { "PRAGMA application_id", "application_id", EMQ_APPLICATION_ID },
        { "PRAGMA user_version", "user_version", EMQ_SCHEMA_VERSION },
    };
    char msg[600];
    sqlite3_stmt *s = NULL;
    int rc, n = 0;

    rc = sqlite3_prepare_v2(st->db, "PRAGMA integrity_check", -1, &s, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        int failed = unreadable(t);
        if (failed) {
            sqlite3_finalize(s);
            return failed;
        }
        n++;
        if (t == NULL || strcmp(t, "ok") != 0) {
            snprintf(msg, sizeof msg, "PRAGMA integrity_check: %s",
                     t ? t : "(null)");
            cb(ctx, "integrity", msg);
        }
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) {
            snprintf(msg, sizeof msg, "PRAGMA integrity_check failed: %s",
                     sqlite3_errstr(rc));
            cb(ctx, "integrity", msg);
            return 1;
        }
        return pragma_failed(rc);
    }
    if (n == 0)
        cb(ctx, "integrity", "PRAGMA integrity_check returned nothing");
    for (size_t i = 0; i < 2; i++) {
        long v = 0;
        rc = sqlite3_prepare_v2(st->db, stamp[i].sql, -1, &s, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
            v = (long)sqlite3_column_int64(s, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(s);
        if (rc != SQLITE_OK) return pragma_failed(rc);
        if (v != stamp[i].want) {
            snprintf(msg, sizeof msg, "%s is %ld, expected %ld",
                     stamp[i].what, v, stamp[i].want);
            cb(ctx, "stamp", msg);
        }
    }
    return EMQ_OK;
}

int emq_store_check_schema(emq_store *st, emq_schema_cb cb, void *ctx)
{
    sqlite3_stmt *s = NULL;
    int rc, version = 0;
    if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) !=
        SQLITE_OK)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        version = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW)
        return emq_store_fail(st, rc);
    if (version < 1 || version > EMQ_SCHEMA_VERSION)
        return EMQ_OK; /* the stamp check reports it */
    rc = emq_schema_judge(st->db, version, cb, ctx);
    if (rc < 0)
        return emq_store_err(st, rc, "the schema could not be compared with "
                             "emqlite's (%s)", rc == EMQ_ENOMEM
                                 ? "out of memory" : "a failed read");
    return EMQ_OK;
}
