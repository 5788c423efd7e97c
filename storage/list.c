/*
 * list.c — the list type: rows (kid, pos, val) where pos orders the list
 * head to tail. Push-right takes max(pos)+1, push-left min(pos)-1, so both
 * ends are O(log n); positions are not indices: index arithmetic (LRANGE,
 * LTRIM, LPOS) goes through rank order.
 *
 * Values of at most EMQ_LIST_IX_MAX bytes are also in the index list_val
 * (kid, val) (schema 8): LPOS and LREM of such a value (a group id on a
 * queue's ring) descend it; a longer value walks the list's rows in SQLite.
 *
 * Rule: a list with no element is absent (kv.c keeps its registration).
 */
#include <string.h>
#include "store_int.h"

static int find(emq_store *st, const void *key, size_t klen, int64_t *kid)
{
    emq_keyrow kr;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_LIST, &kr, 0);
    *kid = rc == EMQ_OK && kr.type == EMQ_T_LIST ? kr.kid : 0;
    return rc;
}

/* min(pos) and max(pos) of list kid, and its length when `n` is not NULL
 * (the ends are two b-tree descents; the length walks the list). */
static int bounds(emq_store *st, int64_t kid, int64_t *lo, int64_t *hi,
                  int64_t *n)
{
    sqlite3_stmt *s = emq_stmt(st, S_L_MINMAX);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *lo = sqlite3_column_int64(s, 0);
        *hi = sqlite3_column_int64(s, 1);
    }
    emq_stmt_done(s);
    if (rc != SQLITE_ROW)
        return emq_store_fail(st, rc);
    return n ? emq_kid_count(st, S_L_COUNT, kid, n) : EMQ_OK;
}

int emq_list_len(emq_store *st, const void *key, size_t klen, int64_t *n)
{
    int64_t kid, lo, hi;
    int rc = find(st, key, klen, &kid);
    *n = 0;
    if (rc != EMQ_OK || !kid)
        return rc;
    return bounds(st, kid, &lo, &hi, n);
}

int emq_list_push(emq_store *st, const void *key, size_t klen, int right,
                  const void *v, size_t vlen, int64_t *len)
{
    int64_t kid, lo = 0, hi = 0, n = 0, pos = 0;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK)
        return rc;
    if (!kid) {
        if ((rc = emq_key_create(st, key, klen, EMQ_T_LIST, &kid)) != EMQ_OK)
            return rc;
    } else {
        if ((rc = bounds(st, kid, &lo, &hi, len ? &n : NULL)) != EMQ_OK)
            return rc;
        pos = right ? hi + 1 : lo - 1;
    }
    sqlite3_stmt *s = emq_stmt(st, S_L_INSERT);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    sqlite3_bind_int64(s, 2, pos);
    emq_bind_blob(s, 3, v, vlen);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    if (len)
        *len = n + 1;
    emq_store_watch(st, EMQ_WATCH_PUSH, key, klen);
    return EMQ_OK;
}

/* Normalise Redis start/stop against length n into [a, b]; 0 when empty. */
static int clamp(int64_t n, int64_t start, int64_t stop, int64_t *a,
                 int64_t *b)
{
    if (start < 0)
        start += n;
    if (stop < 0)
        stop += n;
    if (start < 0)
        start = 0;
    if (start > stop || start >= n)
        return 0;
    if (stop >= n)
        stop = n - 1;
    *a = start;
    *b = stop;
    return 1;
}

/* Collect (pos, val) of rows [offset, offset+limit) in direction `desc`;
 * rows are copied so callbacks may use the store. */
typedef int (*row_cb)(void *ctx, int64_t pos, const unsigned char *v,
                      size_t n);

static int rows(emq_store *st, int64_t kid, int desc, int64_t offset,
                int64_t limit, row_cb cb, void *ctx)
{
    sqlite3_stmt *s = emq_stmt(st, desc ? S_L_DESC : S_L_ASC);
    emq_buf buf = {0};
    int rc, out = EMQ_OK;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    sqlite3_bind_int64(s, 2, limit);
    sqlite3_bind_int64(s, 3, offset);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t pos = sqlite3_column_int64(s, 0);
        uint64_t n = (uint64_t)sqlite3_column_bytes(s, 1);
        if (emq_buf_append(&buf, &pos, sizeof pos) ||
            emq_buf_append(&buf, &n, sizeof n) ||
            emq_buf_append(&buf, sqlite3_column_blob(s, 1), (size_t)n)) {
            out = emq_store_err(st, EMQ_ENOMEM, "out of memory");
            break;
        }
    }
    emq_stmt_done(s);
    if (out == EMQ_OK && rc != SQLITE_DONE)
        out = emq_store_fail(st, rc);
    for (size_t at = 0; out == EMQ_OK && at < buf.len;) {
        int64_t pos;
        uint64_t n;
        memcpy(&pos, buf.p + at, sizeof pos);
        memcpy(&n, buf.p + at + sizeof pos, sizeof n);
        at += sizeof pos + sizeof n;
        out = cb(ctx, pos, buf.p + at, (size_t)n);
        at += (size_t)n;
    }
    emq_buf_free(&buf);
    return out;
}

struct range_ctx {
    emq_value_cb cb;
    void *ctx;
};

static int range_row(void *ctx, int64_t pos, const unsigned char *v, size_t n)
{
    struct range_ctx *r = ctx;
    (void)pos;
    return r->cb(r->ctx, v, n);
}

int emq_list_range(emq_store *st, const void *key, size_t klen, int64_t start,
                   int64_t stop, emq_value_cb cb, void *ctx)
{
    int64_t kid, lo, hi, n, a, b;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid)
        return rc;
    if ((rc = bounds(st, kid, &lo, &hi, &n)) != EMQ_OK)
        return rc;
    if (!clamp(n, start, stop, &a, &b))
        return EMQ_OK;
    struct range_ctx r = {cb, ctx};
    return rows(st, kid, 0, a, b - a + 1, range_row, &r);
}

struct del_ctx {
    emq_store *st;
    int64_t kid;
    const void *v;   /* NULL: delete every row visited */
    size_t vlen;
    int64_t left;    /* rows still to delete (< 0: no limit) */
    int64_t removed;
};

static int del_row(void *ctx, int64_t pos, const unsigned char *v, size_t n)
{
    struct del_ctx *d = ctx;
    if (d->left == 0)
        return 1;
    if (d->v && (n != d->vlen || memcmp(v, d->v, n) != 0))
        return 0;
    sqlite3_stmt *s = emq_stmt(d->st, S_L_DEL);
    if (!s)
        return emq_store_fail(d->st, sqlite3_errcode(d->st->db));
    sqlite3_bind_int64(s, 1, d->kid);
    sqlite3_bind_int64(s, 2, pos);
    int rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(d->st, rc);
    d->removed++;
    if (d->left > 0)
        d->left--;
    return 0;
}

int emq_list_trim(emq_store *st, const void *key, size_t klen, int64_t start,
                  int64_t stop)
{
    int64_t kid, lo, hi, n, a, b;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid)
        return rc;
    if ((rc = bounds(st, kid, &lo, &hi, &n)) != EMQ_OK)
        return rc;
    if (!clamp(n, start, stop, &a, &b))
        return emq_key_drop(st, key, klen, EMQ_T_LIST, kid);
    struct del_ctx d = {st, kid, NULL, 0, -1, 0};
    /* Drop the head rows before a, then the tail rows after b. */
    if (a > 0 && (rc = rows(st, kid, 0, 0, a, del_row, &d)) < 0)
        return rc;
    if (b < n - 1 && (rc = rows(st, kid, 1, 0, n - 1 - b, del_row, &d)) < 0)
        return rc;
    return EMQ_OK;
}

int emq_list_rem(emq_store *st, const void *key, size_t klen, int64_t count,
                 const void *v, size_t vlen, int64_t *removed)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (removed)
        *removed = 0;
    if (rc != EMQ_OK || !kid)
        return rc;
    if (count == 0) {
        /* Every occurrence: one statement, no walk in C. */
        sqlite3_stmt *s = emq_stmt(st, vlen <= EMQ_LIST_IX_MAX
                                            ? S_L_DEL_VAL_IX : S_L_DEL_VAL);
        if (!s)
            return emq_store_fail(st, sqlite3_errcode(st->db));
        sqlite3_bind_int64(s, 1, kid);
        emq_bind_blob(s, 2, v, vlen);
        rc = sqlite3_step(s);
        emq_stmt_done(s);
        if (rc != SQLITE_DONE)
            return emq_store_fail(st, rc);
        if (removed)
            *removed = sqlite3_changes(st->db);
        return EMQ_OK;
    }
    int64_t limit = count < 0 ? -count : count;
    struct del_ctx d = {st, kid, v, vlen, limit, 0};
    rc = rows(st, kid, count < 0, 0, -1, del_row, &d);
    if (rc < 0)
        return rc;
    if (removed)
        *removed = d.removed;
    return EMQ_OK;
}

/* The first position holding `v` (a short value through list_val, a
 * longer one by SQLite walking the list; nothing is copied out), then its
 * index: the rows before it. Membership of a longer value walks from the
 * tail, where a value pushed or rotated lately sits. */
int emq_list_pos(emq_store *st, const void *key, size_t klen, const void *v,
                 size_t vlen, int64_t *pos)
{
    int64_t kid, at = 0;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid)
        return rc == EMQ_OK ? EMQ_NOTFOUND : rc;
    int ix = vlen <= EMQ_LIST_IX_MAX;
    sqlite3_stmt *s = emq_stmt(st, pos ? (ix ? S_L_FIND_IX : S_L_FIND)
                                       : (ix ? S_L_HAS_IX : S_L_HAS));
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, v, vlen);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        at = sqlite3_column_int64(s, 0);  /* S_L_HAS: 1, unused */
    emq_stmt_done(s);
    if (rc == SQLITE_DONE)
        return EMQ_NOTFOUND;
    if (rc != SQLITE_ROW)
        return emq_store_fail(st, rc);
    if (!pos)
        return EMQ_OK;
    if (!(s = emq_stmt(st, S_L_RANK)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    sqlite3_bind_int64(s, 2, at);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *pos = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    return rc == SQLITE_ROW ? EMQ_OK : emq_store_fail(st, rc);
}

/* Run statement `id`, which takes a list's kid and answers at most one
 * value (a pop or a rotation, RETURNING the value moved), into `out`:
 * EMQ_OK, or EMQ_NOTFOUND for an absent or empty list. */
static int one_value(emq_store *st, const void *key, size_t klen, int id,
                     emq_buf *out)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid)
        return rc == EMQ_OK ? EMQ_NOTFOUND : rc;
    sqlite3_stmt *s = emq_stmt(st, id);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    rc = sqlite3_step(s);
    int got = rc == SQLITE_ROW;
    if (got) {
        if (emq_buf_set(out, sqlite3_column_blob(s, 0),
                        (size_t)sqlite3_column_bytes(s, 0)) != EMQ_OK) {
            emq_stmt_done(s);
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
        }
        rc = sqlite3_step(s);
    }
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    return got ? EMQ_OK : EMQ_NOTFOUND;
}

int emq_list_pop(emq_store *st, const void *key, size_t klen, int right,
                 emq_buf *out)
{
    return one_value(st, key, klen, right ? S_L_POP_RIGHT : S_L_POP_LEFT,
                     out);
}

int emq_list_rotate(emq_store *st, const void *key, size_t klen, emq_buf *out)
{
    /* One statement: the head row moves to the tail (what a pop-left and a
     * push-right of its value would leave, without the list going empty
     * between them). */
    int rc = one_value(st, key, klen, S_L_ROTATE, out);
    if (rc == EMQ_OK)
        emq_store_watch(st, EMQ_WATCH_PUSH, key, klen);
    return rc;
}
