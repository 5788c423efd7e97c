/*
 * set.c — the set type: rows (kid, member), members unique, listed in
 * memcmp order. A set with no member is absent (kv.c keeps its
 * registration).
 */
#include <string.h>
#include "store_int.h"

static int find(emq_store *st, const void *key, size_t klen, int64_t *kid)
{
    emq_keyrow kr;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_SET, &kr, 0);
    *kid = rc == EMQ_OK && kr.type == EMQ_T_SET ? kr.kid : 0;
    return rc;
}

static int member_op(emq_store *st, int id, int64_t kid, const void *m,
                     size_t mlen, int *changed)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, m, mlen);
    int rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc == SQLITE_ROW) { /* S_S_IS */
        *changed = 1;
        return EMQ_OK;
    }
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    *changed = id == S_S_IS ? 0 : sqlite3_changes(st->db) > 0;
    return EMQ_OK;
}

int emq_sset_add(emq_store *st, const void *key, size_t klen, const void *m,
                size_t mlen, int *added)
{
    int64_t kid;
    int ch = 0;
    int rc = find(st, key, klen, &kid);
    if (rc == EMQ_OK && !kid)
        rc = emq_key_create(st, key, klen, EMQ_T_SET, &kid);
    if (rc == EMQ_OK)
        rc = member_op(st, S_S_ADD, kid, m, mlen, &ch);
    if (added)
        *added = ch;
    return rc;
}

int emq_sset_rem(emq_store *st, const void *key, size_t klen, const void *m,
                size_t mlen, int *removed)
{
    int64_t kid;
    int ch = 0;
    int rc = find(st, key, klen, &kid);
    if (rc == EMQ_OK && kid) {
        rc = member_op(st, S_S_REM, kid, m, mlen, &ch);
    }
    if (removed)
        *removed = ch;
    return rc;
}

int emq_sset_ismember(emq_store *st, const void *key, size_t klen,
                     const void *m, size_t mlen, int *is)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    *is = 0;
    if (rc == EMQ_OK && kid)
        rc = member_op(st, S_S_IS, kid, m, mlen, is);
    return rc;
}

int emq_sset_card(emq_store *st, const void *key, size_t klen, int64_t *n)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    *n = 0;
    if (rc != EMQ_OK || !kid)
        return rc;
    return emq_kid_count(st, S_S_CARD, kid, n);
}

int emq_sset_members(emq_store *st, const void *key, size_t klen,
                    emq_value_cb cb, void *ctx)
{
    int64_t kid;
    int rc = find(st, key, klen, &kid);
    if (rc != EMQ_OK || !kid)
        return rc;
    sqlite3_stmt *s = emq_stmt(st, S_S_ALL);
    emq_buf buf = {0};
    int out = EMQ_OK;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        uint64_t n = (uint64_t)sqlite3_column_bytes(s, 0);
        if (emq_buf_append(&buf, &n, sizeof n) ||
            emq_buf_append(&buf, sqlite3_column_blob(s, 0), (size_t)n)) {
            out = emq_store_err(st, EMQ_ENOMEM, "out of memory");
            break;
        }
    }
    emq_stmt_done(s);
    if (out == EMQ_OK && rc != SQLITE_DONE)
        out = emq_store_fail(st, rc);
    for (size_t at = 0; out == EMQ_OK && at < buf.len;) {
        uint64_t n;
        memcpy(&n, buf.p + at, sizeof n);
        at += sizeof n;
        out = cb(ctx, buf.p + at, (size_t)n);
        at += (size_t)n;
    }
    emq_buf_free(&buf);
    return out;
}
