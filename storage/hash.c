/*
 * hash.c — the hash type. A hash lives in its kv row as one blob
 * (hashcodec.h): a read decodes it, a write re-encodes it in one UPDATE.
 *
 * Rules: a hash whose last field is removed (or has expired) ceases to exist;
 * field expiry is per field and lazy; values are copied out of SQLite before
 * the statement is reset.
 *
 * The last hash read or written stays decoded (st->hkey, hraw, hf) for the
 * rest of the transaction, so the several reads a transition makes of one
 * job row cost one SELECT. A mutator clears the cache before it changes hf
 * and store_back() re-arms it with what it wrote; emq_stmt() clears it on
 * any other kv write.
 */
#include <string.h>
#include "store_int.h"

/* Load `key` as a hash into st->hf (views into st->hraw). *exists = 0 when
 * absent (or every field expired). */
static int cache_hit(const emq_store *st, const void *key, size_t klen)
{
    return st->hvalid && st->hkey.len == klen &&
           memcmp(st->hkey.p, key, klen) == 0;
}

int emq_hash_cached(const emq_store *st, const void *key, size_t klen,
                    int *exists)
{
    if (!cache_hit(st, key, klen))
        return 0;
    *exists = st->hexists;
    return 1;
}

/* Remember hf/hraw as the content of `key` (exists or not). */
static void cache_arm(emq_store *st, const void *key, size_t klen, int exists)
{
    st->hvalid = emq_buf_set(&st->hkey, key, klen) == EMQ_OK;
    st->hexists = exists;
}

static int load(emq_store *st, const void *key, size_t klen, int *exists)
{
    emq_keyrow kr;
    if (cache_hit(st, key, klen)) {
        *exists = st->hexists;
        return EMQ_OK;
    }
    int rc = emq_key_lookup(st, key, klen, EMQ_T_HASH, &kr, 1);
    *exists = 0;
    st->hf.n = 0;
    if (rc != EMQ_OK)
        return rc;
    if (kr.type == EMQ_T_NONE) {
        cache_arm(st, key, klen, 0);
        return EMQ_OK;
    }
    rc = emq_buf_set(&st->hraw, kr.val, kr.vlen);
    emq_stmt_done(emq_stmt(st, S_KEY_GET));
    if (rc != EMQ_OK)
        return emq_store_err(st, rc, "out of memory");
    rc = emq_hc_decode(st->hraw.p, st->hraw.len, st->now, &st->hf);
    if (rc != EMQ_OK)
        return emq_store_err(st, rc, "damaged hash value");
    if (st->hf.n == 0) /* every field expired: the hash is gone */
        return st->tx_write ? emq_key_drop(st, key, klen, EMQ_T_HASH, 0)
                            : EMQ_OK;
    *exists = 1;
    cache_arm(st, key, klen, 1);
    return EMQ_OK;
}

/* Write st->hf back to `key`: delete the key when no field is left. */
static int store_back(emq_store *st, const void *key, size_t klen, int existed)
{
    sqlite3_stmt *s;
    int rc;
    st->hvalid = 0;
    if (st->hf.n == 0) {
        rc = existed ? emq_key_drop(st, key, klen, EMQ_T_HASH, 0) : EMQ_OK;
        if (rc == EMQ_OK)
            cache_arm(st, key, klen, 0);
        return rc;
    }
    if (emq_hc_encode(&st->hf, &st->henc) != EMQ_OK)
        return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    s = emq_stmt(st, existed ? S_KEY_PUT_VAL : S_KEY_INSERT);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_bind_blob(s, 1, key, klen);
    if (existed) {
        emq_bind_blob(s, 2, st->henc.p, st->henc.len);
    } else {
        sqlite3_bind_int(s, 2, EMQ_T_HASH);
        sqlite3_bind_int64(s, 3, 0);
        sqlite3_bind_null(s, 4);
        emq_bind_blob(s, 5, st->henc.p, st->henc.len);
    }
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    /* What was written becomes the cached row: swap it in and decode. */
    emq_buf t = st->hraw;
    st->hraw = st->henc;
    st->henc = t;
    if (emq_hc_decode(st->hraw.p, st->hraw.len, st->now, &st->hf) == EMQ_OK)
        cache_arm(st, key, klen, 1);
    return EMQ_OK;
}

int emq_hash_get(emq_store *st, const void *key, size_t klen,
                 const void *f, size_t flen, emq_buf *out)
{
    int exists;
    int rc = load(st, key, klen, &exists);
    if (rc != EMQ_OK || !exists)
        return rc == EMQ_OK ? EMQ_NOTFOUND : rc;
    long i = emq_hc_find(&st->hf, f, flen);
    if (i < 0)
        return EMQ_NOTFOUND;
    if (emq_buf_set(out, st->hf.e[i].v, st->hf.e[i].vlen) != EMQ_OK)
        return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    return EMQ_OK;
}

int emq_hash_set(emq_store *st, const void *key, size_t klen,
                 const emq_bytes *fv, size_t n, int *added)
{
    int exists, count = 0;
    int rc = load(st, key, klen, &exists);
    st->hvalid = 0; /* hf is about to change */
    if (rc != EMQ_OK)
        return rc;
    for (size_t i = 0; i + 1 < 2 * n; i += 2) {
        long at = emq_hc_find(&st->hf, fv[i].p, fv[i].n);
        if (at < 0)
            count++;
        /* HSET clears a field's own expiry, as Valkey does. */
        if (emq_hc_put(&st->hf, fv[i].p, fv[i].n, fv[i + 1].p, fv[i + 1].n,
                       -1) != EMQ_OK)
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    }
    rc = store_back(st, key, klen, exists);
    if (rc == EMQ_OK && added)
        *added = count;
    return rc;
}

int emq_hash_create(emq_store *st, const void *key, size_t klen,
                    const emq_bytes *fv, size_t n, int *created)
{
    sqlite3_stmt *s;
    int rc;
    *created = 0;
    st->hvalid = 0;
    st->hf.n = 0;
    for (size_t i = 0; i + 1 < 2 * n; i += 2)
        if (emq_hc_put(&st->hf, fv[i].p, fv[i].n, fv[i + 1].p, fv[i + 1].n,
                       -1) != EMQ_OK)
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    if (emq_hc_encode(&st->hf, &st->henc) != EMQ_OK)
        return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    /* One statement in the common case: insert unless the name exists. */
    s = emq_stmt(st, S_KEY_CREATE_NX);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_bind_blob(s, 1, key, klen);
    sqlite3_bind_int(s, 2, EMQ_T_HASH);
    emq_bind_blob(s, 3, st->henc.p, st->henc.len);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    if (sqlite3_changes(st->db) == 1) {
        *created = 1;
        return EMQ_OK;
    }
    /* The name exists: it still counts as absent if it has expired, or if
     * it is a hash whose every field has expired (emq_key_type drops
     * either). */
    int type;
    if ((rc = emq_key_type(st, key, klen, &type)) != EMQ_OK)
        return rc;
    if (type != EMQ_T_NONE)
        return EMQ_OK;
    return emq_hash_create(st, key, klen, fv, n, created);
}

/* One run: keys[0..EMQ_H_RUN) with their values, in one statement. 1 when
 * every row went in, 0 when a name was taken (the statement aborted and
 * SQLite undid its rows), or an error code. */
static int create_run(emq_store *st, const emq_bytes *keys,
                      const emq_bytes *fv, size_t nf, emq_buf *vals)
{
    size_t at[EMQ_H_RUN + 1], i, j;
    sqlite3_stmt *s;
    int rc;
    vals->len = 0;
    for (i = 0; i < EMQ_H_RUN; i++) {
        st->hf.n = 0;
        for (j = 0; j < 2 * nf; j += 2)
            if (emq_hc_put(&st->hf, fv[i * 2 * nf + j].p,
                           fv[i * 2 * nf + j].n, fv[i * 2 * nf + j + 1].p,
                           fv[i * 2 * nf + j + 1].n, -1) != EMQ_OK)
                return emq_store_err(st, EMQ_ENOMEM, "out of memory");
        at[i] = vals->len;
        if (emq_hc_encode(&st->hf, &st->henc) != EMQ_OK ||
            emq_buf_append(vals, st->henc.p, st->henc.len) != EMQ_OK)
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    }
    at[EMQ_H_RUN] = vals->len;
    if (!(s = emq_stmt(st, S_KEY_CREATE_RUN)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    for (i = 0; i < EMQ_H_RUN; i++) {
        emq_bind_blob(s, (int)(2 * i + 1), keys[i].p, keys[i].n);
        emq_bind_blob(s, (int)(2 * i + 2), vals->p + at[i],
                      at[i + 1] - at[i]);
    }
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc == SQLITE_DONE) return 1;
    if ((rc & 0xff) == SQLITE_CONSTRAINT) return 0;
    return emq_store_fail(st, rc);
}

int emq_hash_create_many(emq_store *st, const emq_bytes *keys,
                         const emq_bytes *fv, size_t nf, size_t n,
                         int *created)
{
    emq_buf vals = {0};
    size_t i = 0, k;
    int rc = EMQ_OK, all;
    st->hvalid = 0;
    while (rc == EMQ_OK && i < n) {
        all = n - i >= EMQ_H_RUN ? create_run(st, keys + i, fv + i * 2 * nf,
                                              nf, &vals)
                                 : 0;
        if (all < 0) {
            rc = all;
        } else if (all) {
            for (k = 0; k < EMQ_H_RUN; k++) created[i + k] = 1;
            i += EMQ_H_RUN;
        } else { /* the last few, or a run with a taken name: one by one */
            size_t end = n - i >= EMQ_H_RUN ? i + EMQ_H_RUN : n;
            for (; rc == EMQ_OK && i < end; i++)
                rc = emq_hash_create(st, keys[i].p, keys[i].n,
                                     fv + i * 2 * nf, nf, &created[i]);
        }
    }
    emq_buf_free(&vals);
    return rc;
}

int emq_hash_del(emq_store *st, const void *key, size_t klen,
                 const void *f, size_t flen, int *removed)
{
    int exists;
    int rc = load(st, key, klen, &exists);
    st->hvalid = 0; /* hf is about to change */
    if (removed)
        *removed = 0;
    if (rc != EMQ_OK || !exists)
        return rc;
    long i = emq_hc_find(&st->hf, f, flen);
    if (i < 0)
        return EMQ_OK;
    emq_hc_remove(&st->hf, (size_t)i);
    rc = store_back(st, key, klen, 1);
    if (rc == EMQ_OK && removed)
        *removed = 1;
    if (rc == EMQ_OK)
        emq_store_watch(st, EMQ_WATCH_HDEL, key, klen);
    return rc;
}

int emq_hash_incrby(emq_store *st, const void *key, size_t klen,
                    const void *f, size_t flen, int64_t by, int64_t *result)
{
    int exists;
    int64_t cur = 0;
    int64_t expire = -1;
    int rc = load(st, key, klen, &exists);
    st->hvalid = 0; /* hf is about to change */
    if (rc != EMQ_OK)
        return rc;
    long i = emq_hc_find(&st->hf, f, flen);
    if (i >= 0) {
        if (emq_parse_i64(st->hf.e[i].v, st->hf.e[i].vlen, &cur))
            return emq_store_err(st, EMQ_EPROTO,
                                 "ERR hash value is not an integer");
        expire = st->hf.e[i].expire;
    }
    if ((by > 0 && cur > INT64_MAX - by) || (by < 0 && cur < INT64_MIN - by))
        return emq_store_err(st, EMQ_EPROTO,
                             "ERR increment or decrement would overflow");
    cur += by;
    char num[24];
    size_t n = emq_fmt_i64(num, cur);
    if (emq_hc_put(&st->hf, f, flen, num, n, expire) != EMQ_OK)
        return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    rc = store_back(st, key, klen, exists);
    if (rc == EMQ_OK && result)
        *result = cur;
    return rc;
}

int emq_hash_exists(emq_store *st, const void *key, size_t klen,
                    const void *f, size_t flen, int *is)
{
    int exists;
    int rc = load(st, key, klen, &exists);
    *is = rc == EMQ_OK && exists && emq_hc_find(&st->hf, f, flen) >= 0;
    return rc;
}

int emq_hash_len(emq_store *st, const void *key, size_t klen, int64_t *n)
{
    int exists;
    int rc = load(st, key, klen, &exists);
    *n = rc == EMQ_OK ? (int64_t)st->hf.n : 0;
    return rc;
}

int emq_hash_expire_at(emq_store *st, const void *key, size_t klen,
                       const void *f, size_t flen, int64_t at, int *done)
{
    int exists;
    int rc = load(st, key, klen, &exists);
    st->hvalid = 0; /* hf is about to change */
    *done = 0;
    if (rc != EMQ_OK || !exists)
        return rc;
    long i = emq_hc_find(&st->hf, f, flen);
    if (i < 0)
        return EMQ_OK;
    if (at >= 0 && st->now > at)
        emq_hc_remove(&st->hf, (size_t)i); /* a past instant deletes it */
    else
        st->hf.e[i].expire = at;
    rc = store_back(st, key, klen, 1);
    *done = rc == EMQ_OK;
    return rc;
}

int emq_hash_field_expiry(emq_store *st, const void *key, size_t klen,
                          const void *f, size_t flen, int64_t *at)
{
    int exists;
    int rc = load(st, key, klen, &exists);
    *at = -2;
    if (rc != EMQ_OK || !exists)
        return rc;
    long i = emq_hc_find(&st->hf, f, flen);
    if (i >= 0)
        *at = st->hf.e[i].expire;
    return EMQ_OK;
}

int emq_hash_getall(emq_store *st, const void *key, size_t klen,
                    emq_field_cb cb, void *ctx)
{
    int exists;
    int rc = load(st, key, klen, &exists);
    if (rc != EMQ_OK || !exists)
        return rc;
    /* Copy the views: the callback may call back into the store. */
    emq_buf raw = {0};
    emq_hfields h = {0};
    if (emq_buf_set(&raw, st->hraw.p, st->hraw.len) != EMQ_OK ||
        emq_hc_decode(raw.p, raw.len, st->now, &h) != EMQ_OK) {
        rc = emq_store_err(st, EMQ_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < h.n; i++)
        if ((rc = cb(ctx, h.e[i].f, h.e[i].flen, h.e[i].v, h.e[i].vlen,
                     h.e[i].expire)) != 0)
            break;
done:
    emq_hc_free(&h);
    emq_buf_free(&raw);
    return rc;
}

int emq_hash_apply(emq_store *st, const void *key, size_t klen, emq_hop *ops,
                   size_t n, int *existed)
{
    int exists, wrote = 0, deleted = 0;
    int rc = load(st, key, klen, &exists);
    if (existed)
        *existed = rc == EMQ_OK && exists;
    st->hvalid = 0; /* hf may change below */
    if (rc != EMQ_OK)
        return rc;
    for (size_t k = 0; k < n; k++) {
        emq_hop *o = &ops[k];
        long i = emq_hc_find(&st->hf, o->f.p, o->f.n);
        o->found = i >= 0;
        switch (o->op) {
        case EMQ_HOP_GET:
            if (i >= 0 && o->out &&
                emq_buf_set(o->out, st->hf.e[i].v, st->hf.e[i].vlen) != EMQ_OK)
                return emq_store_err(st, EMQ_ENOMEM, "out of memory");
            break;
        case EMQ_HOP_SET:
            if (emq_hc_put(&st->hf, o->f.p, o->f.n, o->v.p, o->v.n, -1))
                return emq_store_err(st, EMQ_ENOMEM, "out of memory");
            wrote = 1;
            break;
        case EMQ_HOP_DEL:
            if (i >= 0) {
                emq_hc_remove(&st->hf, (size_t)i);
                wrote = deleted = 1;
            }
            break;
        case EMQ_HOP_INCR: {
            int64_t cur = 0, expire = -1;
            if (i >= 0) {
                if (emq_parse_i64(st->hf.e[i].v, st->hf.e[i].vlen, &cur))
                    return emq_store_err(st, EMQ_EPROTO,
                                         "ERR hash value is not an integer");
                expire = st->hf.e[i].expire;
            }
            if ((o->by > 0 && cur > INT64_MAX - o->by) ||
                (o->by < 0 && cur < INT64_MIN - o->by))
                return emq_store_err(st, EMQ_EPROTO, "ERR increment or "
                                     "decrement would overflow");
            o->result = cur + o->by;
            size_t len = emq_fmt_i64(o->num, o->result);
            if (emq_hc_put(&st->hf, o->f.p, o->f.n, o->num, len, expire))
                return emq_store_err(st, EMQ_ENOMEM, "out of memory");
            wrote = 1;
            break;
        }
        default:
            return emq_store_err(st, EMQ_EINTERNAL, "bad hash step");
        }
    }
    if (wrote && (rc = store_back(st, key, klen, exists)) != EMQ_OK)
        return rc;
    if (deleted)
        emq_store_watch(st, EMQ_WATCH_HDEL, key, klen);
    return EMQ_OK;
}
