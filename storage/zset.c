/*
 * zset.c — the sorted-set type.
 *
 * Rows (kid, score, member) are the table's primary key, so the table itself
 * is in zset order: score ascending, then member in memcmp order (SQLite
 * compares BLOBs so, a proper prefix first). Scores are IEEE doubles, as
 * Valkey keeps them. A member is found by its score: a member at score 0 —
 * every member of pending, dead and the lanes — is probed at (kid, 0, m)
 * in the table itself; any other member by the set's shape (below): in a
 * small set by walking its few rows at such scores, in a big one through
 * the partial unique index zset_member(kid, member) WHERE ix = 1. So a
 * score-0 member, and a lease in a small active set, cost one b-tree
 * entry, not two, and the hottest sets write one page fewer.
 *
 * Rules: a member appears at most once (an insert finds the member at its
 * own kind of score — by its own conflict at 0 or in a big set, by the walk
 * in a small one — then at the other kind, unless the set is known to hold
 * none of it); a set with no member is absent (kv.c keeps its
 * registration).
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

/* Bind (kid, m) and run statement `id`: *row = 1 and *score = column 0
 * when it gave a row. */
static int probe(emq_store *st, int id, int64_t kid, const void *m,
                 size_t mlen, int *row, double *score)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    int rc;
    *row = 0;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, m, mlen);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *row = 1;
        if (score)
            *score = sqlite3_column_double(s, 0);
    }
    emq_stmt_done(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? EMQ_OK
                                                 : emq_store_fail(st, rc);
}

/* Insert (S_Z_INSERT, S_Z_INSERT_NX: `ix` 1 puts the row in the member
 * index) or delete (S_Z_DEL, and the S_Z_DEL_* forms, whose score is
 * unused) the row (kid, score, m). */
static int row_op(emq_store *st, int id, int64_t kid, const void *m,
                  size_t mlen, double score, int ix)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, m, mlen);
    sqlite3_bind_double(s, 3, score);
    if (id == S_Z_INSERT || id == S_Z_INSERT_NX) {
        if (ix)
            sqlite3_bind_int(s, 4, 1);
        else
            sqlite3_bind_null(s, 4);
    }
    int rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

/*
 * The set's shape: how its members at scores other than 0 are found.
 *   *nz >= 0      a small set: exactly that many such members, none in the
 *                 member index (found by a walk of the key's two ranges,
 *                 score > 0 and score < 0, at most EMQ_Z_SMALL rows);
 *   EMQ_NZ_BIG    every such member is in the member index (ix = 1).
 * A set is big when a row of it is in the index; it becomes big when an
 * add would give it more than EMQ_Z_SMALL such members (its rows join the
 * index, as Valkey turns a listpack into a skiplist) and small again when
 * its last such member goes. Asked once per registration (one seek of the
 * index, then a count of at most EMQ_Z_SMALL + 1 rows) and kept with it
 * (emq_kc_nz): this handle's writes keep it exact; another connection's
 * commit, a rollback, the key's drop or expiry forget it.
 */
static int shape(emq_store *st, int64_t kid, int64_t *nz)
{
    int rc, big;
    if ((*nz = emq_kc_nz(st, kid)) != EMQ_NZ_UNKNOWN)
        return EMQ_OK;
    if ((rc = probe(st, S_Z_ANY_IX, kid, "", 0, &big, NULL)) != EMQ_OK)
        return rc;
    if (big)
        *nz = EMQ_NZ_BIG;
    else if ((rc = emq_kid_count(st, S_Z_COUNT_NZ, kid, nz)) != EMQ_OK)
        return rc;
    emq_kc_set_nz(st, kid, *nz);
    return EMQ_OK;
}

/* 1 when zset `kid` has no member at a score other than 0 (it is flat:
 * pending, dead and the lanes only ever hold 0), 0 when it has, an error
 * code (< 0) when it could not be asked. */
static int flat(emq_store *st, int64_t kid)
{
    int64_t nz;
    int rc = shape(st, kid, &nz);
    return rc != EMQ_OK ? rc : nz == 0;
}

/* 1 when zset `kid` is known to have no member at the score 0 (active,
 * schedule), 0 when it may have, an error code (< 0): asked once (a seek of
 * the key) and kept with the registration as the shape is (emq_kc_zero). */
static int zero_free(emq_store *st, int64_t kid)
{
    int rc, any, known = emq_kc_zero(st, kid);
    if (known)
        return known > 0;
    if ((rc = probe(st, S_Z_ANY_ZERO, kid, "", 0, &any, NULL)) != EMQ_OK)
        return rc;
    emq_kc_set_zero(st, kid, any ? -1 : 1);
    return !any;
}

/* The score of m among the members at scores other than 0 of a set of
 * shape nz: EMQ_OK with *score, or EMQ_NOTFOUND. */
static int nz_score(emq_store *st, int64_t kid, int64_t nz, const void *m,
                    size_t mlen, double *score)
{
    int rc, row = 0;
    if (nz == 0)
        return EMQ_NOTFOUND;
    rc = probe(st, nz == EMQ_NZ_BIG ? S_Z_SCORE_NZ : S_Z_SCORE_SMALL, kid, m,
               mlen, &row, score);
    return rc != EMQ_OK ? rc : row ? EMQ_OK : EMQ_NOTFOUND;
}

/* The current score of member m of zset kid: EMQ_OK with *score, or
 * EMQ_NOTFOUND. One statement: (kid, 0, m) in the table, then where the
 * set's shape says its other members are. */
static int member_score(emq_store *st, int64_t kid, const void *m,
                        size_t mlen, double *score)
{
    int64_t nz;
    int rc, row;
    if ((rc = shape(st, kid, &nz)) != EMQ_OK)
        return rc;
    rc = probe(st, nz == EMQ_NZ_BIG ? S_Z_PROBE0 : S_Z_PROBE0_SMALL, kid, m,
               mlen, &row, score);
    return rc != EMQ_OK ? rc : row ? EMQ_OK : EMQ_NOTFOUND;
}

/* Delete m from among the members at scores other than 0 of a set of
 * shape nz (kept exact): *gone = 1 when it was there. */
static int nz_delete(emq_store *st, int64_t kid, int64_t nz, const void *m,
                     size_t mlen, int *gone)
{
    int rc;
    *gone = 0;
    if (nz == 0)
        return EMQ_OK;
    if (nz == EMQ_NZ_BIG) {
        if ((rc = row_op(st, S_Z_DEL_NZ, kid, m, mlen, 0, 0)) != EMQ_OK)
            return rc;
        *gone = sqlite3_changes(st->db) > 0;
        return EMQ_OK;
    }
    /* A small set: its ranges walked (a lease deadline, a run-at: > 0). */
    if ((rc = row_op(st, S_Z_DEL_POS, kid, m, mlen, 0, 0)) != EMQ_OK)
        return rc;
    if (sqlite3_changes(st->db) == 0 &&
        (rc = row_op(st, S_Z_DEL_NEG, kid, m, mlen, 0, 0)) != EMQ_OK)
        return rc;
    if (sqlite3_changes(st->db) > 0) {
        *gone = 1;
        emq_kc_set_nz(st, kid, nz - 1);
    }
    return EMQ_OK;
}

/*
 * ZADD of a score-0 member to an existing set (pending, dead, the lanes):
 * INSERT ... ON CONFLICT DO NOTHING finds a member already at 0 by itself;
 * the same member at another score (then moved: that row deleted) is
 * looked for only when the set has such scores (its shape): a pending add
 * is one statement.
 */
static int add0(emq_store *st, int64_t kid, const void *m, size_t mlen,
                double score, int *added)
{
    int64_t nz;
    int rc, gone;
    emq_kc_set_zero(st, kid, -1); /* before the row: never believed */
    if ((rc = row_op(st, S_Z_INSERT_NX, kid, m, mlen, score, 0)) != EMQ_OK)
        return rc;
    if (sqlite3_changes(st->db) == 0) { /* already there at score 0 */
        *added = 0;
        return EMQ_OK;
    }
    if ((rc = shape(st, kid, &nz)) != EMQ_OK)
        return rc;
    rc = nz_delete(st, kid, nz, m, mlen, &gone);
    *added = !gone;
    return rc;
}

/* A small set about to hold more than EMQ_Z_SMALL members at scores other
 * than 0: those rows join the member index, and the set is big. */
static int grow(emq_store *st, int64_t kid)
{
    int rc;
    emq_kc_set_nz(st, kid, EMQ_NZ_UNKNOWN); /* before the rows */
    if ((rc = emq_kid_run(st, S_Z_INDEX_POS, kid)) != EMQ_OK ||
        (rc = emq_kid_run(st, S_Z_INDEX_NEG, kid)) != EMQ_OK)
        return rc;
    emq_kc_set_nz(st, kid, EMQ_NZ_BIG);
    return EMQ_OK;
}

/*
 * ZADD of a member at a score other than 0 to an existing set (active,
 * schedule). In a big set INSERT ... ON CONFLICT DO NOTHING finds the
 * member at another score other than 0 by the unique member index, or at
 * this very score by the key; a small set's few such members are walked
 * first (none in an empty one: a lease is one statement). The same member
 * at 0 (then moved: that row deleted) is looked for only when the set may
 * hold that score.
 */
static int add_nz(emq_store *st, int64_t kid, const void *m, size_t mlen,
                  double score, int *added)
{
    int64_t nz;
    double old = 0;
    int rc, there;
    if ((rc = shape(st, kid, &nz)) != EMQ_OK)
        return rc;
    if (nz != EMQ_NZ_BIG) {
        rc = nz_score(st, kid, nz, m, mlen, &old);
        if (rc < 0 && rc != EMQ_NOTFOUND)
            return rc;
        there = rc == EMQ_OK;
    } else {
        if ((rc = row_op(st, S_Z_INSERT_NX, kid, m, mlen, score, 1)) !=
            EMQ_OK)
            return rc;
        there = sqlite3_changes(st->db) == 0;
        if (there) { /* at a score other than 0: which one */
            if ((rc = nz_score(st, kid, nz, m, mlen, &old)) == EMQ_NOTFOUND)
                return emq_store_err(st, EMQ_ECORRUPT, "a sorted set's "
                                     "member index lacks a member its rows "
                                     "hold");
            if (rc != EMQ_OK)
                return rc;
        }
    }
    if (there) { /* moved within the scores other than 0 */
        *added = 0;
        if (old == score)
            return EMQ_OK;
        if ((rc = row_op(st, S_Z_DEL, kid, m, mlen, old, 0)) != EMQ_OK)
            return rc;
        return row_op(st, S_Z_INSERT, kid, m, mlen, score,
                      nz == EMQ_NZ_BIG);
    }
    if (nz != EMQ_NZ_BIG) {
        if (nz >= EMQ_Z_SMALL && (rc = grow(st, kid)) != EMQ_OK)
            return rc;
        int big = nz >= EMQ_Z_SMALL;
        emq_kc_set_nz(st, kid, EMQ_NZ_UNKNOWN); /* before the row */
        if ((rc = row_op(st, S_Z_INSERT, kid, m, mlen, score, big)) != EMQ_OK)
            return rc;
        emq_kc_set_nz(st, kid, big ? EMQ_NZ_BIG : nz + 1);
    }
    *added = 1;
    if ((rc = zero_free(st, kid)) != 0)
        return rc < 0 ? rc : EMQ_OK; /* no member at 0: m is new */
    if ((rc = row_op(st, S_Z_DEL, kid, m, mlen, 0, 0)) != EMQ_OK)
        return rc;
    *added = sqlite3_changes(st->db) == 0;
    return EMQ_OK;
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
        /* A new set: its registration's first member, a small set. */
        if ((rc = emq_key_create(st, key, klen, EMQ_T_ZSET, &kid)) != EMQ_OK)
            return rc;
        rc = row_op(st, S_Z_INSERT, kid, m, mlen, score, 0);
        if (rc == EMQ_OK) {
            emq_kc_set_nz(st, kid, score == 0 ? 0 : 1);
            emq_kc_set_zero(st, kid, score == 0 ? -1 : 1);
        }
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
    int64_t kid, nz;
    int rc = find(st, key, klen, &kid), gone = 0;
    if (removed)
        *removed = 0;
    if (rc != EMQ_OK || !kid)
        return rc;
    /* No probe first: where the set's shape says its members at other
     * scores are, the member is deleted by the statement that finds it;
     * only when that found nothing is it looked for at 0. */
    if ((rc = shape(st, kid, &nz)) != EMQ_OK ||
        (rc = nz_delete(st, kid, nz, m, mlen, &gone)) != EMQ_OK)
        return rc;
    if (!gone) {
        if ((rc = zero_free(st, kid)) != 0)
            return rc < 0 ? rc : EMQ_OK;
        if ((rc = row_op(st, S_Z_DEL, kid, m, mlen, 0, 0)) != EMQ_OK)
            return rc;
        gone = sqlite3_changes(st->db) > 0;
    }
    if (removed)
        *removed = gone;
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
    if ((rc = row_op(st, S_Z_DEL, kid, member->p, member->len, sc, 0)) !=
        EMQ_OK)
        return rc;
    int64_t nz = emq_kc_nz(st, kid);
    if (sc != 0 && nz > 0) /* a small set's count stays exact */
        emq_kc_set_nz(st, kid, nz - 1);
    return EMQ_OK;
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

int emq_zset_after(emq_store *st, const void *key, size_t klen, int rev,
                   double score, const void *m, size_t mlen, int64_t limit,
                   emq_member_cb cb, void *ctx)
{
    int64_t kid;
    if (m == NULL)
        return emq_zset_range(st, key, klen, rev, limit, cb, ctx);
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid || limit == 0)
        return rc;
    sqlite3_stmt *s = emq_stmt(st, rev ? S_Z_AFTER_DESC : S_Z_AFTER_ASC);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    sqlite3_bind_double(s, 2, score);
    emq_bind_blob(s, 3, mlen ? m : "", mlen);
    sqlite3_bind_int64(s, 4, limit);
    return walk(st, s, cb, ctx);
}
