/*
 * zset.c — the sorted-set type.
 *
 * Rows (kid, score, member) are the table's primary key, so the table itself
 * is in zset order: score ascending, then member in memcmp order (SQLite
 * compares BLOBs so, a proper prefix first). Scores are IEEE doubles, as
 * Valkey keeps them. A member is found by its score: a member at score 0 —
 * every member of pending, dead and the lanes — is probed at (kid, 0, m)
 * in the table itself; any other member through the partial unique index
 * zset_member(kid, member) WHERE score <> 0. So a score-0 member costs one
 * b-tree entry, not two, and the hottest sets write one page fewer.
 *
 * Rules: a member appears at most once (every insert looks for it both
 * ways: an insert finds the member at its own kind of score by its own
 * conflict — the key at 0, the unique index elsewhere — then at the other
 * kind, unless the set is known to hold none of it); a set with no member
 * is absent (kv.c keeps its registration).
 */
#include <string.h>
#include "store_int.h"

/* Find the zset `key`: *kid = 0 when absent. */
static int find(emq_store *st, const void *key, size_t klen, int64_t *kid)
{
    emq_keyrow kr;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_ZSET, &kr, 0);
    *kid = rc == EMQ_OK && kr.type == EMQ_T_ZSET ? kr.kid : 0;
    return rc;
}

/* The current score of member m of zset kid: EMQ_OK with *score, or
 * EMQ_NOTFOUND. */
static int member_score(emq_store *st, int64_t kid, const void *m,
                        size_t mlen, double *score)
{
    /* One statement, two probes: (kid, 0, m) in the table, then the
     * member index for the other scores. */
    sqlite3_stmt *s = emq_stmt(st, S_Z_PROBE0);
    int rc;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, m, mlen);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *score = sqlite3_column_double(s, 0);
    emq_stmt_done(s);
    if (rc == SQLITE_ROW)
        return EMQ_OK;
    return rc == SQLITE_DONE ? EMQ_NOTFOUND : emq_store_fail(st, rc);
}

/* Insert (id = S_Z_INSERT) or delete (S_Z_DEL) the row (kid, score, m);
 * S_Z_DEL_NZ deletes m at any score other than 0 (score unused). */
static int row_op(emq_store *st, int id, int64_t kid, const void *m,
                  size_t mlen, double score)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, m, mlen);
    sqlite3_bind_double(s, 3, score);
    int rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

/*
 * What is known of zset `kid`'s scores: none_at(.., 0) is 1 when no member
 * has a score other than 0 (the set is flat: pending, dead and the lanes
 * only ever hold 0), none_at(.., 1) is 1 when no member has the score 0
 * (active, schedule); 0 when some may have, an error code (< 0) when it
 * could not be asked. The answers are kept with the set's registration
 * (emq_kc_flat, emq_kc_zero): asked once — one seek of the partial member
 * index, or of the key — and then believed until the registration is
 * dropped (another connection committed, a rollback, the key dropped or
 * expired) or this handle puts a member at such a score (emq_zset_add,
 * which says so before it writes the row).
 */
static int none_at(emq_store *st, int64_t kid, int zero)
{
    sqlite3_stmt *s;
    int rc, known = zero ? emq_kc_zero(st, kid) : emq_kc_flat(st, kid);
    if (known)
        return known > 0;
    if (!(s = emq_stmt(st, zero ? S_Z_ANY_ZERO : S_Z_ANY_NZ)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    if (zero)
        emq_kc_set_zero(st, kid, rc == SQLITE_DONE ? 1 : -1);
    else
        emq_kc_set_flat(st, kid, rc == SQLITE_DONE ? 1 : -1);
    return rc == SQLITE_DONE;
}

static int flat(emq_store *st, int64_t kid)
{
    return none_at(st, kid, 0);
}

/*
 * ZADD of a score-0 member to an existing set (pending, dead, the lanes):
 * INSERT ... ON CONFLICT DO NOTHING finds a member already at 0 by itself;
 * the same member at another score (then moved: that row deleted) is
 * looked up in the member index only when the set may hold such scores
 * (flat above): a pending add is one statement.
 */
static int add0(emq_store *st, int64_t kid, const void *m, size_t mlen,
                double score, int *added)
{
    sqlite3_stmt *s = emq_stmt(st, S_Z_INSERT_NX);
    double old = 0;
    int rc, had = 0;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_kc_set_zero(st, kid, -1); /* before the row: never believed */
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, m, mlen);
    sqlite3_bind_double(s, 3, score);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    if (sqlite3_changes(st->db) == 0) { /* already there at score 0 */
        *added = 0;
        return EMQ_OK;
    }
    *added = 1;
    if ((rc = flat(st, kid)) != 0)
        return rc < 0 ? rc : EMQ_OK; /* no member elsewhere: m is new */
    if (!(s = emq_stmt(st, S_Z_SCORE_NZ)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, m, mlen);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        old = sqlite3_column_double(s, 0);
        had = 1;
    }
    emq_stmt_done(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    *added = !had;
    return had ? row_op(st, S_Z_DEL, kid, m, mlen, old) : EMQ_OK;
}

/*
 * ZADD of a member at a score other than 0 to an existing set (active,
 * schedule): INSERT ... ON CONFLICT DO NOTHING finds the member at another
 * score other than 0 by the unique member index, or at this very score by
 * the key; the same member at 0 (then moved: that row deleted) is looked
 * for only when the set may hold that score (none_at): a lease is one
 * statement.
 */
static int add_nz(emq_store *st, int64_t kid, const void *m, size_t mlen,
                  double score, int *added)
{
    sqlite3_stmt *s;
    double old = 0;
    int rc;
    emq_kc_set_flat(st, kid, -1); /* before the row: never believed */
    if ((rc = row_op(st, S_Z_INSERT_NX, kid, m, mlen, score)) != EMQ_OK)
        return rc;
    if (sqlite3_changes(st->db) > 0) {
        *added = 1;
        if ((rc = none_at(st, kid, 1)) != 0)
            return rc < 0 ? rc : EMQ_OK; /* no member at 0: m is new */
        if ((rc = row_op(st, S_Z_DEL, kid, m, mlen, 0)) != EMQ_OK)
            return rc;
        *added = sqlite3_changes(st->db) == 0;
        return EMQ_OK;
    }
    *added = 0; /* m is in the set at a score other than 0 */
    if (!(s = emq_stmt(st, S_Z_SCORE_NZ)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, m, mlen);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        old = sqlite3_column_double(s, 0);
    emq_stmt_done(s);
    if (rc == SQLITE_DONE)
        return emq_store_err(st, EMQ_ECORRUPT, "a sorted set's member "
                             "index lacks a member its rows hold");
    if (rc != SQLITE_ROW)
        return emq_store_fail(st, rc);
    if (old == score)
        return EMQ_OK;
    if ((rc = row_op(st, S_Z_DEL, kid, m, mlen, old)) != EMQ_OK)
        return rc;
    return row_op(st, S_Z_INSERT, kid, m, mlen, score);
}

int emq_zset_add(emq_store *st, const void *key, size_t klen,
                 const void *m, size_t mlen, double score, int *added)
{
    int64_t kid;
    int dummy, *a = added ? added : &dummy;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK)
        return rc;
    if (kid) {
        rc = score == 0 ? add0(st, kid, m, mlen, score, a)
                        : add_nz(st, kid, m, mlen, score, a);
    } else {
        /* A new set: its registration's first member. */
        if ((rc = emq_key_create(st, key, klen, EMQ_T_ZSET, &kid)) != EMQ_OK)
            return rc;
        emq_kc_set_flat(st, kid, score == 0 ? 1 : -1);
        emq_kc_set_zero(st, kid, score == 0 ? -1 : 1);
        rc = row_op(st, S_Z_INSERT, kid, m, mlen, score);
        *a = 1;
    }
    if (rc == EMQ_OK && *a) /* a new member: a waiting claim may wake */
        emq_store_watch(st, EMQ_WATCH_ZADD, key, klen);
    return rc;
}

/* EMQ_Z_RUN members m[0..) at score 0 into flat zset kid, one statement;
 * *made = the number that were not there. */
static int insert0_run(emq_store *st, int64_t kid, const emq_bytes *m,
                       int64_t *made)
{
    sqlite3_stmt *s = emq_stmt(st, S_Z_INSERT0_RUN);
    int rc;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_kc_set_zero(st, kid, -1); /* before the rows: never believed */
    sqlite3_bind_int64(s, 1, kid);
    for (int j = 0; j < EMQ_Z_RUN; j++)
        emq_bind_blob(s, 2 + j, m[j].p, m[j].n);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    *made = sqlite3_changes(st->db);
    return EMQ_OK;
}

/*
 * ZADD key 0 m[0] 0 m[1] ...: each member at score 0, *added (may be NULL)
 * the number that were new. A set known flat (flat above) takes the members
 * EMQ_Z_RUN to a statement, the last few one by one; any other set (absent,
 * or holding other scores, whose members may have to move) goes member by
 * member through emq_zset_add. Either way the result is that of n ZADDs in
 * order.
 */
int emq_zset_add0_many(emq_store *st, const void *key, size_t klen,
                       const emq_bytes *m, size_t n, int64_t *added)
{
    int64_t kid, count = 0;
    size_t i = 0;
    int rc = find(st, key, klen, &kid), one = 0;
    if (rc == EMQ_OK && kid && (rc = flat(st, kid)) == 1) {
        rc = EMQ_OK;
        for (; rc == EMQ_OK && n - i >= EMQ_Z_RUN; i += EMQ_Z_RUN) {
            int64_t made = 0;
            rc = insert0_run(st, kid, m + i, &made);
            count += made;
        }
        for (; rc == EMQ_OK && i < n; i++)
            if ((rc = add0(st, kid, m[i].p, m[i].n, 0, &one)) == EMQ_OK)
                count += one;
        if (rc == EMQ_OK && count > 0)
            emq_store_watch(st, EMQ_WATCH_ZADD, key, klen);
    } else if (rc >= 0) {
        for (rc = EMQ_OK; rc == EMQ_OK && i < n; i++)
            if ((rc = emq_zset_add(st, key, klen, m[i].p, m[i].n, 0,
                                   &one)) == EMQ_OK)
                count += one;
    }
    if (rc == EMQ_OK && added)
        *added = count;
    return rc;
}

int emq_zset_rem(emq_store *st, const void *key, size_t klen,
                 const void *m, size_t mlen, int *removed)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (removed)
        *removed = 0;
    if (rc != EMQ_OK || !kid)
        return rc;
    /* No probe first: the member index deletes a member at a score other
     * than 0 by itself (a set known flat has none); only when it found
     * nothing is the member looked for at 0. */
    if ((rc = flat(st, kid)) < 0)
        return rc;
    if (rc == 0) {
        if ((rc = row_op(st, S_Z_DEL_NZ, kid, m, mlen, 0)) != EMQ_OK)
            return rc;
        if (sqlite3_changes(st->db) > 0)
            goto gone;
    }
    if ((rc = row_op(st, S_Z_DEL, kid, m, mlen, 0)) != EMQ_OK)
        return rc;
    if (sqlite3_changes(st->db) == 0)
        return EMQ_OK;
gone:
    if (removed)
        *removed = 1;
    return EMQ_OK;
}

int emq_zset_score(emq_store *st, const void *key, size_t klen,
                   const void *m, size_t mlen, double *score)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid)
        return rc == EMQ_OK ? EMQ_NOTFOUND : rc;
    return member_score(st, kid, m, mlen, score);
}

int emq_zset_card(emq_store *st, const void *key, size_t klen, int64_t *n)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    *n = 0;
    if (rc != EMQ_OK || !kid)
        return rc;
    return emq_kid_count(st, S_Z_CARD, kid, n);
}

int emq_zset_popmin(emq_store *st, const void *key, size_t klen,
                    emq_buf *member, double *score)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid)
        return rc == EMQ_OK ? EMQ_NOTFOUND : rc;
    /* The first member in (score, member) order, then its removal: two
     * plain statements cost less than one DELETE ... RETURNING, which
     * SQLite runs through an ephemeral table. */
    sqlite3_stmt *s = emq_stmt(st, S_Z_RANGE_ASC);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    sqlite3_bind_int64(s, 2, 1);
    rc = sqlite3_step(s);
    double sc = 0;
    if (rc == SQLITE_ROW) {
        sc = sqlite3_column_double(s, 1);
        if (score)
            *score = sc;
        if (emq_buf_set(member, sqlite3_column_blob(s, 0),
                        (size_t)sqlite3_column_bytes(s, 0)) != EMQ_OK) {
            emq_stmt_done(s);
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
        }
    }
    emq_stmt_done(s);
    if (rc == SQLITE_DONE)
        return EMQ_NOTFOUND;
    if (rc != SQLITE_ROW)
        return emq_store_fail(st, rc);
    return row_op(st, S_Z_DEL, kid, member->p, member->len, sc);
}

/* Walk the rows of a prepared range statement into the callback. The
 * statement is stepped to the end before any callback runs so that a
 * callback may use the store (rows are buffered). */
static int walk(emq_store *st, sqlite3_stmt *s, emq_member_cb cb, void *ctx)
{
    emq_buf rows = {0};
    int rc, out = EMQ_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        uint64_t n = (uint64_t)sqlite3_column_bytes(s, 0);
        double sc = sqlite3_column_double(s, 1);
        if (emq_buf_append(&rows, &n, sizeof n) ||
            emq_buf_append(&rows, &sc, sizeof sc) ||
            emq_buf_append(&rows, sqlite3_column_blob(s, 0), (size_t)n)) {
            out = emq_store_err(st, EMQ_ENOMEM, "out of memory");
            break;
        }
    }
    emq_stmt_done(s);
    if (out == EMQ_OK && rc != SQLITE_DONE)
        out = emq_store_fail(st, rc);
    for (size_t at = 0; out == EMQ_OK && at < rows.len;) {
        uint64_t n;
        double sc;
        memcpy(&n, rows.p + at, sizeof n);
        memcpy(&sc, rows.p + at + sizeof n, sizeof sc);
        at += sizeof n + sizeof sc;
        out = cb(ctx, rows.p + at, (size_t)n, sc);
        at += (size_t)n;
    }
    emq_buf_free(&rows);
    return out;
}

int emq_zset_range_score(emq_store *st, const void *key, size_t klen,
                         double min, double max, int64_t limit,
                         emq_member_cb cb, void *ctx)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid || limit == 0)
        return rc;
    sqlite3_stmt *s = emq_stmt(st, S_Z_RANGE_SCORE);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    sqlite3_bind_double(s, 2, min);
    sqlite3_bind_double(s, 3, max);
    sqlite3_bind_int64(s, 4, limit);
    return walk(st, s, cb, ctx);
}

int emq_zset_range(emq_store *st, const void *key, size_t klen, int rev,
                   int64_t limit, emq_member_cb cb, void *ctx)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid || limit == 0)
        return rc;
    sqlite3_stmt *s = emq_stmt(st, rev ? S_Z_RANGE_DESC : S_Z_RANGE_ASC);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    sqlite3_bind_int64(s, 2, limit);
    return walk(st, s, cb, ctx);
}

int emq_zset_range_lex(emq_store *st, const void *key, size_t klen,
                       const emq_bytes *min, const emq_bytes *max, int rev,
                       int64_t limit, emq_member_cb cb, void *ctx)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid || limit == 0)
        return rc;
    sqlite3_stmt *s = emq_stmt(st, rev ? S_Z_LEX_DESC : S_Z_LEX_ASC);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    if (min)
        emq_bind_blob(s, 2, min->p, min->n);
    else
        sqlite3_bind_null(s, 2);
    if (max)
        emq_bind_blob(s, 3, max->p, max->n);
    else
        sqlite3_bind_null(s, 3);
    sqlite3_bind_int64(s, 4, limit);
    return walk(st, s, cb, ctx);
}

int emq_zset_page(emq_store *st, const void *key, size_t klen, int rev,
                  int64_t offset, int64_t limit, emq_member_cb cb, void *ctx)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid || limit == 0)
        return rc;
    sqlite3_stmt *s = emq_stmt(st, rev ? S_Z_PAGE_DESC : S_Z_PAGE_ASC);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    sqlite3_bind_int64(s, 2, limit);
    sqlite3_bind_int64(s, 3, offset < 0 ? 0 : offset);
    return walk(st, s, cb, ctx);
}
