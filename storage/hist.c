/*
 * hist.c — the history log and the kept records (hist.h): appends and
 * replacements inside the caller's write transaction, reads in seq order,
 * pruning by count and age with bounded work per call.
 *
 * Rules: seq is the rowid and is never given explicitly; pruning removes
 * the oldest rows of one subject or one scope only. Every statement comes
 * from emq_stmt (prepared once per handle).
 */
#include <string.h>
#include "store_int.h"
#include "hist.h"

static void bind_b(sqlite3_stmt *s, int i, const emq_bytes *b)
{
    emq_bind_blob(s, i, b->n ? b->p : "", b->n);
}

static void col_b(sqlite3_stmt *s, int i, emq_bytes *b)
{
    b->p = sqlite3_column_blob(s, i);
    b->n = (size_t)sqlite3_column_bytes(s, i);
    if (!b->p)
        b->p = "";
}

static int fail(emq_store *st)
{
    return emq_store_fail(st, sqlite3_errcode(st->db));
}

/* Run a statement that returns no row. */
static int done(emq_store *st, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

/* The seq of the subject's row `off` places below its newest in the
 * scope: *seq = 0 when there are not that many. */
static int nth(emq_store *st, const emq_bytes *scope, const emq_bytes *key,
               int64_t off, int64_t *seq)
{
    sqlite3_stmt *s = emq_stmt(st, S_H_NTH_SUBJ);
    int rc;
    *seq = 0;
    if (!s)
        return fail(st);
    bind_b(s, 1, key);
    sqlite3_bind_int64(s, 2, off);
    bind_b(s, 3, scope);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *seq = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? EMQ_OK
                                                 : emq_store_fail(st, rc);
}

int emq_hist_append(emq_store *st, const emq_bytes *scope,
                    const emq_bytes *subject, int kind,
                    const emq_bytes *detail, int64_t per_subject,
                    int64_t *seq, int64_t *dropped)
{
    sqlite3_stmt *s = emq_stmt(st, S_H_INSERT);
    int64_t cut;
    int rc;
    if (dropped)
        *dropped = 0;
    if (!s)
        return fail(st);
    sqlite3_bind_int64(s, 1, st->now);
    bind_b(s, 2, scope);
    bind_b(s, 3, subject);
    sqlite3_bind_int(s, 4, kind);
    bind_b(s, 5, detail);
    if ((rc = done(st, s)) != EMQ_OK)
        return rc;
    if (seq)
        *seq = sqlite3_last_insert_rowid(st->db);
    if (per_subject <= 0)
        return EMQ_OK;
    /* The subject's row `per_subject` below its newest, and every older
     * one, go. */
    if ((rc = nth(st, scope, subject, per_subject, &cut)) != EMQ_OK ||
        cut == 0)
        return rc;
    if (!(s = emq_stmt(st, S_H_DROP_SUBJ)))
        return fail(st);
    bind_b(s, 1, subject);
    sqlite3_bind_int64(s, 2, cut);
    bind_b(s, 3, scope);
    if ((rc = done(st, s)) == EMQ_OK && dropped)
        *dropped = sqlite3_changes(st->db);
    return rc;
}

int emq_hist_prune(emq_store *st, const emq_bytes *scope, int64_t keep,
                   int64_t min_at, int64_t budget, int64_t *count,
                   int64_t *upto, int64_t *dropped)
{
    sqlite3_stmt *s;
    int64_t n, k = 0, cut = 0;
    int rc;
    if (dropped)
        *dropped = 0;
    /* The count: the rows appended since *upto (all of them when the
     * count is unknown). */
    if (!(s = emq_stmt(st, S_H_COUNT_SINCE)))
        return fail(st);
    bind_b(s, 1, scope);
    sqlite3_bind_int64(s, 2, *upto);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *count += sqlite3_column_int64(s, 0);
        *upto = sqlite3_column_int64(s, 1);
    }
    emq_stmt_done(s);
    if (rc != SQLITE_ROW)
        return emq_store_fail(st, rc);
    if (budget <= 0)
        return EMQ_OK;
    /* The oldest rows of the scope, in seq order, at most `budget`: each
     * goes while it is older than min_at or the scope holds more than
     * keep. The last one that goes is the cut: one range delete. */
    n = *count - keep;
    if (!(s = emq_stmt(st, S_H_HEAD_SCOPE)))
        return fail(st);
    bind_b(s, 1, scope);
    sqlite3_bind_int64(s, 2, budget);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!(k < n || sqlite3_column_int64(s, 1) < min_at)) {
            rc = SQLITE_DONE;
            break;
        }
        cut = sqlite3_column_int64(s, 0);
        k++;
    }
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    if (k > 0) {
        if (!(s = emq_stmt(st, S_H_DROP_TO)))
            return fail(st);
        bind_b(s, 1, scope);
        sqlite3_bind_int64(s, 2, cut);
        if ((rc = done(st, s)) != EMQ_OK)
            return rc;
    }
    *count -= k;
    if (*count < 0)
        *count = 0;
    if (dropped)
        *dropped = k;
    return EMQ_OK;
}

static int walk(emq_store *st, sqlite3_stmt *s, emq_hist_cb cb, void *ctx)
{
    emq_hist_row r;
    int rc, out = EMQ_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        r.seq = sqlite3_column_int64(s, 0);
        r.at = sqlite3_column_int64(s, 1);
        col_b(s, 2, &r.scope);
        col_b(s, 3, &r.subject);
        r.kind = sqlite3_column_int(s, 4);
        col_b(s, 5, &r.detail);
        if ((out = cb(ctx, &r)) != 0)
            break;
    }
    emq_stmt_done(s);
    if (out == EMQ_OK && rc != SQLITE_DONE)
        out = emq_store_fail(st, rc);
    return out;
}

/* One row of a subject's read that is in another scope is skipped. */
typedef struct scoped {
    const emq_bytes *scope;
    emq_hist_cb cb;
    void *ctx;
} scoped;

static int only_scope(void *ctx, const emq_hist_row *r)
{
    scoped *f = ctx;
    if (r->scope.n != f->scope->n ||
        (r->scope.n && memcmp(r->scope.p, f->scope->p, r->scope.n) != 0))
        return 0;
    return f->cb(f->ctx, r);
}

int emq_hist_read(emq_store *st, const emq_bytes *scope,
                  const emq_bytes *subject, int64_t after, int64_t limit,
                  emq_hist_cb cb, void *ctx)
{
    sqlite3_stmt *s;
    int i = 1;
    scoped f;
    if (limit <= 0)
        limit = INT64_MAX;
    if (subject) {
        if (!(s = emq_stmt(st, S_H_READ_SUBJ)))
            return fail(st);
        bind_b(s, i++, subject);
        if (scope) {
            f.scope = scope;
            f.cb = cb;
            f.ctx = ctx;
            cb = only_scope;
            ctx = &f;
        }
    } else if (scope) {
        if (!(s = emq_stmt(st, S_H_READ_SCOPE)))
            return fail(st);
        bind_b(s, i++, scope);
    } else if (!(s = emq_stmt(st, S_H_READ_ALL))) {
        return fail(st);
    }
    sqlite3_bind_int64(s, i++, after);
    sqlite3_bind_int64(s, i, limit);
    return walk(st, s, cb, ctx);
}

int emq_hist_last(emq_store *st, int64_t *last)
{
    sqlite3_stmt *s = emq_stmt(st, S_H_LAST);
    int rc;
    *last = 0;
    if (!s)
        return fail(st);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *last = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    return rc == SQLITE_ROW ? EMQ_OK : emq_store_fail(st, rc);
}

/* ----------------------------------------------------------- kept rows */

int emq_hist_keep_put(emq_store *st, const emq_bytes *scope,
                 const emq_bytes *subject, int kind, int64_t at,
                 const emq_bytes *body)
{
    sqlite3_stmt *s = emq_stmt(st, S_K_PUT);
    if (!s)
        return fail(st);
    bind_b(s, 1, scope);
    bind_b(s, 2, subject);
    sqlite3_bind_int(s, 3, kind);
    sqlite3_bind_int64(s, 4, at);
    bind_b(s, 5, body);
    return done(st, s);
}

static int kwalk(emq_store *st, sqlite3_stmt *s, emq_hist_keep_cb cb, void *ctx)
{
    emq_hist_keep_row r;
    int rc, out = EMQ_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        col_b(s, 0, &r.scope);
        col_b(s, 1, &r.subject);
        r.kind = sqlite3_column_int(s, 2);
        r.at = sqlite3_column_int64(s, 3);
        col_b(s, 4, &r.body);
        if ((out = cb(ctx, &r)) != 0)
            break;
    }
    emq_stmt_done(s);
    if (out == EMQ_OK && rc != SQLITE_DONE)
        out = emq_store_fail(st, rc);
    return out;
}

int emq_hist_keep_find(emq_store *st, const emq_bytes *scope,
                  const emq_bytes *subject, emq_hist_keep_cb cb, void *ctx)
{
    sqlite3_stmt *s = emq_stmt(st, scope ? S_K_FIND : S_K_FIND_ANY);
    int i = 1;
    if (!s)
        return fail(st);
    if (scope)
        bind_b(s, i++, scope);
    bind_b(s, i, subject);
    return kwalk(st, s, cb, ctx);
}

int emq_hist_keep_list(emq_store *st, const emq_bytes *scope, int kind,
                  int64_t before_at, const emq_bytes *before_subject,
                  int64_t limit, emq_hist_keep_cb cb, void *ctx)
{
    sqlite3_stmt *s = emq_stmt(st, before_subject ? S_K_LIST_AFTER
                                                  : S_K_LIST);
    if (!s)
        return fail(st);
    if (limit <= 0)
        limit = INT64_MAX;
    bind_b(s, 1, scope);
    sqlite3_bind_int(s, 2, kind);
    if (before_subject) {
        sqlite3_bind_int64(s, 3, before_at);
        bind_b(s, 4, before_subject);
        sqlite3_bind_int64(s, 5, limit);
    } else {
        sqlite3_bind_int64(s, 3, limit);
    }
    return kwalk(st, s, cb, ctx);
}

int emq_hist_keep_count(emq_store *st, const emq_bytes *scope, int kind,
                   int64_t *n)
{
    sqlite3_stmt *s = emq_stmt(st, S_K_COUNT);
    int rc;
    *n = 0;
    if (!s)
        return fail(st);
    bind_b(s, 1, scope);
    sqlite3_bind_int(s, 2, kind);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *n = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    return rc == SQLITE_ROW ? EMQ_OK : emq_store_fail(st, rc);
}

/* A count over the scope and kind (S_K_COUNT, S_K_AGED). */
static int kcount(emq_store *st, int id, const emq_bytes *scope, int kind,
                  int64_t at, int64_t *n)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    int rc;
    *n = 0;
    if (!s)
        return fail(st);
    bind_b(s, 1, scope);
    sqlite3_bind_int(s, 2, kind);
    if (id == S_K_AGED)
        sqlite3_bind_int64(s, 3, at);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *n = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    return rc == SQLITE_ROW ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_hist_keep_prune(emq_store *st, const emq_bytes *scope, int kind,
                   int64_t keep, int64_t min_at, int64_t budget,
                   int64_t *dropped)
{
    sqlite3_stmt *s;
    emq_buf cut = {0};
    int64_t n, aged, k, at = 0;
    int rc;
    if (dropped)
        *dropped = 0;
    if (budget <= 0)
        return EMQ_OK;
    /* The records that go are the k oldest (in key order: at, then id):
     * those beyond keep, or older than min_at, at most budget. */
    if ((rc = kcount(st, S_K_COUNT, scope, kind, 0, &n)) != EMQ_OK ||
        (rc = kcount(st, S_K_AGED, scope, kind, min_at, &aged)) != EMQ_OK)
        return rc;
    k = n > keep ? n - keep : 0;
    if (aged > k)
        k = aged;
    if (k > budget)
        k = budget;
    if (k == 0)
        return EMQ_OK;
    /* The k-th oldest is the cut: every record up to it goes in one range
     * delete of the key. */
    if (!(s = emq_stmt(st, S_K_NTH)))
        return fail(st);
    bind_b(s, 1, scope);
    sqlite3_bind_int(s, 2, kind);
    sqlite3_bind_int64(s, 3, k - 1);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        at = sqlite3_column_int64(s, 0);
        if (emq_buf_set(&cut, sqlite3_column_blob(s, 1),
                        (size_t)sqlite3_column_bytes(s, 1)) != EMQ_OK)
            rc = SQLITE_NOMEM;
    }
    emq_stmt_done(s);
    if (rc == SQLITE_NOMEM) {
        emq_buf_free(&cut);
        return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    }
    if (rc != SQLITE_ROW) {
        emq_buf_free(&cut);
        return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
    }
    if (!(s = emq_stmt(st, S_K_DROP_TO))) {
        emq_buf_free(&cut);
        return fail(st);
    }
    {
        emq_bytes c = {cut.p, cut.len};
        bind_b(s, 1, scope);
        sqlite3_bind_int(s, 2, kind);
        sqlite3_bind_int64(s, 3, at);
        bind_b(s, 4, &c);
    }
    rc = done(st, s);
    emq_buf_free(&cut);
    if (rc == EMQ_OK && dropped)
        *dropped = sqlite3_changes(st->db);
    return rc;
}
