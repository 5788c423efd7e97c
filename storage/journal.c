/*
 * journal.c — the procedure journal (journal.h) over the emq_journal table.
 */
#include <string.h>
#include "store_int.h"
#include "journal.h"

/* The table, for a file whose schema predates it (IF NOT EXISTS: a no-op
 * once it is there). */
static int ensure(emq_store *st)
{
    sqlite3_stmt *s = emq_stmt(st, S_J_CREATE);
    int rc;
    if (s == NULL) return emq_store_fail(st, sqlite3_errcode(st->db));
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

/* 1 when the table exists (a read handle never creates it). */
static int present(emq_store *st, int *yes)
{
    sqlite3_stmt *s = emq_stmt(st, S_J_EXISTS);
    int rc;
    *yes = 0;
    if (s == NULL) return emq_store_fail(st, sqlite3_errcode(st->db));
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *yes = sqlite3_column_int(s, 0) > 0;
    emq_stmt_done(s);
    return rc == SQLITE_ROW ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_journal_add(emq_store *st, const char *kind, const void *body,
                    size_t n, int64_t next, int64_t *jid)
{
    sqlite3_stmt *s;
    int rc;
    if ((rc = ensure(st)) != EMQ_OK) return rc;
    if ((s = emq_stmt(st, S_J_INSERT)) == NULL)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, next);
    sqlite3_bind_blob(s, 3, n ? body : "", (int)n, SQLITE_STATIC);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *jid = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    return rc == SQLITE_ROW ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_journal_next(emq_store *st, int64_t jid, int64_t *next)
{
    sqlite3_stmt *s;
    int rc, yes;
    if ((rc = present(st, &yes)) != EMQ_OK) return rc;
    if (!yes) return EMQ_NOTFOUND;
    if ((s = emq_stmt(st, S_J_NEXT)) == NULL)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, jid);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *next = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    if (rc == SQLITE_DONE) return EMQ_NOTFOUND;
    return rc == SQLITE_ROW ? EMQ_OK : emq_store_fail(st, rc);
}

/* UPDATE or DELETE one row by jid. */
static int by_jid(emq_store *st, int id, int64_t jid, int64_t next)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    int rc;
    if (s == NULL) return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, jid);
    if (id == S_J_SET) sqlite3_bind_int64(s, 2, next);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_journal_set(emq_store *st, int64_t jid, int64_t next)
{
    return by_jid(st, S_J_SET, jid, next);
}

/* The row goes and its jid becomes the high-water mark (emq_meta
 * `journal_hw`) that emq_journal_add mints above: SQLite alone would hand
 * the largest rowid out again once its row is deleted, and a live add still
 * holding that jid would then step the next add's row (issue 27 item 1). */
int emq_journal_end(emq_store *st, int64_t jid)
{
    int rc = by_jid(st, S_J_DEL, jid, 0);
    return rc != EMQ_OK ? rc : by_jid(st, S_J_HW, jid, 0);
}

int emq_journal_scan(emq_store *st, emq_journal_cb cb, void *ctx)
{
    sqlite3_stmt *s;
    int rc, yes, stop = 0;
    if ((rc = present(st, &yes)) != EMQ_OK || !yes) return rc;
    if ((s = emq_stmt(st, S_J_SCAN)) == NULL)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const unsigned char *b = sqlite3_column_blob(s, 3);
        size_t n = (size_t)sqlite3_column_bytes(s, 3);
        const unsigned char *k = sqlite3_column_text(s, 1);
        if (b == NULL) b = (const unsigned char *)"";
        stop = cb(ctx, sqlite3_column_int64(s, 0), k ? (const char *)k : "",
                  sqlite3_column_int64(s, 2), b, n);
        if (stop) break;
    }
    emq_stmt_done(s);
    if (stop) return stop;
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}
