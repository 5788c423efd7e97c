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
 * and store_back() re-arms it with what it wrote. The rows it held before
 * are carried (st->hc, encoded), within a write transaction and past this
 * handle's own commits, so that a claim's job row read again by the
 * complete, or the metrics and meta hashes every transition looks at, are
 * read once. Exactness: a key is in at most one of the two; every kv
 * write forgets the key it writes (emq_stmt_kv) or every row (emq_stmt,
 * for the statements that write rows the caller does not name); a key
 * with an expiry is not carried; a rollback, a read transaction (which
 * does not look at the carry), and another connection's commit (the
 * pager's data version, as for the registrations in kv.c) drop them.
 */
#include <string.h>
#include "store_int.h"

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

/* ------------------------------------------------------------- carry */

static emq_hcarry *carried(emq_store *st, const void *key, size_t klen)
{
    for (int i = 0; i < EMQ_HCARRY; i++) {
        emq_hcarry *c = &st->hc[i];
        if (c->used && c->key.len == klen && memcmp(c->key.p, key, klen) == 0)
            return c;
    }
    return NULL;
}

static void swap_buf(emq_buf *a, emq_buf *b)
{
    emq_buf t = *a;
    *a = *b;
    *b = t;
}

/* Move the decoded row (when valid, without key expiry, at most
 * EMQ_HCARRY_MAX bytes) into the carry: a free slot, else the oldest. The
 * buffers swap, so nothing is copied. */
static void carry_put(emq_store *st)
{
    emq_hcarry *c = NULL;
    if (!st->hvalid || st->hkexp ||
        (st->hexists && st->hraw.len > EMQ_HCARRY_MAX)) {
        st->hvalid = 0;
        return;
    }
    st->hvalid = 0;
    for (int i = 0; i < EMQ_HCARRY && !c; i++)
        if (!st->hc[i].used)
            c = &st->hc[i];
    if (!c) {
        c = &st->hc[st->hc_next];
        st->hc_next = (st->hc_next + 1) % EMQ_HCARRY;
    }
    swap_buf(&c->key, &st->hkey);
    swap_buf(&c->raw, &st->hraw);
    c->exists = st->hexists;
    c->used = 1;
}

/* Make the carried row of `key` the decoded one: 1 when it was there. A
 * row whose every field has expired since is left to the SELECT path,
 * which drops it. */
static int carry_take(emq_store *st, const void *key, size_t klen)
{
    emq_hcarry *c = carried(st, key, klen);
    if (!c)
        return 0;
    c->used = 0;
    swap_buf(&c->key, &st->hkey);
    swap_buf(&c->raw, &st->hraw);
    st->hf.n = 0;
    if (c->exists &&
        (emq_hc_decode(st->hraw.p, st->hraw.len, st->now, &st->hf) !=
             EMQ_OK ||
         st->hf.n == 0))
        return 0;
    st->hexists = c->exists;
    st->hkexp = 0;
    st->hvalid = 1;
    return 1;
}

void emq_hcache_forget(emq_store *st, const void *key, size_t klen)
{
    emq_hcarry *c = carried(st, key, klen);
    if (c)
        c->used = 0;
    if (cache_hit(st, key, klen))
        st->hvalid = 0;
}

void emq_hcache_clear(emq_store *st)
{
    st->hvalid = 0;
    for (int i = 0; i < EMQ_HCARRY; i++)
        st->hc[i].used = 0;
}

void emq_hcache_commit(emq_store *st)
{
    carry_put(st);
}

void emq_hcache_free(emq_store *st)
{
    for (int i = 0; i < EMQ_HCARRY; i++) {
        emq_buf_free(&st->hc[i].key);
        emq_buf_free(&st->hc[i].raw);
        st->hc[i].used = 0;
    }
}

/* ------------------------------------------------------------- rows */

/* The row just written (encoded in st->henc) becomes the cached one of
 * `key`: swapped into hraw and decoded. */
static void arm_written(emq_store *st, const void *key, size_t klen)
{
    swap_buf(&st->hraw, &st->henc);
    if (emq_hc_decode(st->hraw.p, st->hraw.len, st->now, &st->hf) == EMQ_OK)
        cache_arm(st, key, klen, 1);
}

/* Load `key` as a hash into st->hf (views into st->hraw). *exists = 0 when
 * absent (or every field expired). */
static int load(emq_store *st, const void *key, size_t klen, int *exists)
{
    emq_keyrow kr;
    if (cache_hit(st, key, klen)) {
        *exists = st->hexists;
        return EMQ_OK;
    }
    if (st->tx_write) {
        carry_put(st);
        if (carry_take(st, key, klen)) {
            *exists = st->hexists;
            return EMQ_OK;
        }
    }
    st->hvalid = 0;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_HASH, &kr, 1);
    *exists = 0;
    st->hf.n = 0;
    st->hkexp = 0;
    if (rc != EMQ_OK)
        return rc;
    if (kr.type == EMQ_T_NONE) {
        cache_arm(st, key, klen, 0);
        return EMQ_OK;
    }
    st->hkexp = kr.expire >= 0;
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
    s = emq_stmt_kv(st, existed ? S_KEY_PUT_VAL : S_KEY_INSERT, key, klen);
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
    if (!existed)
        st->hkexp = 0; /* a new row has no expiry */
    arm_written(st, key, klen);
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
    if (st->tx_write)
        carry_put(st); /* hf is about to hold the new row */
    st->hvalid = 0;
    st->hf.n = 0;
    for (size_t i = 0; i + 1 < 2 * n; i += 2)
        if (emq_hc_put(&st->hf, fv[i].p, fv[i].n, fv[i + 1].p, fv[i + 1].n,
                       -1) != EMQ_OK)
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    if (emq_hc_encode(&st->hf, &st->henc) != EMQ_OK)
        return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    /* One statement in the common case: insert unless the name exists. */
    s = emq_stmt_kv(st, S_KEY_CREATE_NX, key, klen);
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
    for (i = 0; i < EMQ_H_RUN; i++)
        emq_hcache_forget(st, keys[i].p, keys[i].n);
    if (!(s = emq_stmt_kv(st, S_KEY_CREATE_RUN, NULL, 0)))
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
    if (st->tx_write)
        carry_put(st); /* hf is about to hold the new rows */
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
    emq_hfields h = {.dict = st->opts.dict};
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

/* The steps on st->hf, in order. *wrote / *deleted: some step changed a
 * field / removed one. A failed step returns its code with the message
 * set; hf is then half done and must not be written. */
static int run_ops(emq_store *st, emq_hop *ops, size_t n, int *wrote,
                   int *deleted)
{
    *wrote = *deleted = 0;
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
            *wrote = 1;
            break;
        case EMQ_HOP_DEL:
            if (i >= 0) {
                emq_hc_remove(&st->hf, (size_t)i);
                *wrote = *deleted = 1;
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
            *wrote = 1;
            break;
        }
        default:
            return emq_store_err(st, EMQ_EINTERNAL, "bad hash step");
        }
    }
    return EMQ_OK;
}

/*
 * The row as one statement: UPDATE kv SET val = emq_hash_steps(val) WHERE
 * the name is a hash without expiry (S_KEY_STEPS). The function runs the
 * steps (st->steps) on the stored value and returns the new encoding; the
 * read the two-statement path makes (SELECT, then UPDATE) is the UPDATE's
 * own seek. Whatever that path must decide — the key absent, of another
 * type or with an expiry (no row matches), every field expired or none
 * left (the key must go), a step that fails — makes the function raise an
 * error, so that nothing is written, and the caller takes the two-statement
 * path or returns the step's error.
 */
typedef struct emq_steps {
    emq_hop *ops;
    size_t n;
    int rc;          /* a step's error (its message set), or EMQ_OK      */
    int deleted;     /* a step removed a field                           */
    int ran;         /* the function ran and produced the new value      */
} emq_steps;

static void fn_steps(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    emq_store *st = sqlite3_user_data(cx);
    emq_steps *a = st->steps;
    int wrote;
    (void)argc;
    if (!a || sqlite3_value_type(v[0]) != SQLITE_BLOB) {
        sqlite3_result_error(cx, "emq_hash_steps: not inside a hash step", -1);
        return;
    }
    if (emq_buf_set(&st->hraw, sqlite3_value_blob(v[0]),
                    (size_t)sqlite3_value_bytes(v[0])) != EMQ_OK ||
        emq_hc_decode(st->hraw.p, st->hraw.len, st->now, &st->hf) != EMQ_OK ||
        st->hf.n == 0)
        goto fallback; /* out of memory, damaged, or every field expired */
    if ((a->rc = run_ops(st, a->ops, a->n, &wrote, &a->deleted)) != EMQ_OK)
        goto fallback;
    if (!wrote || st->hf.n == 0 || emq_hc_encode(&st->hf, &st->henc) != EMQ_OK)
        goto fallback;
    a->ran = 1;
    sqlite3_result_blob64(cx, st->henc.p, st->henc.len, SQLITE_TRANSIENT);
    return;
fallback:
    sqlite3_result_error(cx, "emq_hash_steps: taken the long way", -1);
}

int emq_hash_register(emq_store *st)
{
    const int f = SQLITE_UTF8 | SQLITE_DIRECTONLY;
    int rc = sqlite3_create_function_v2(st->db, "emq_hash_steps", 1, f, st,
                                        fn_steps, NULL, NULL, NULL);
    return rc == SQLITE_OK ? EMQ_OK : emq_store_fail(st, rc);
}

/* 1 when the steps ran as one statement, 0 when the two-statement path
 * must run them, or an error code. */
static int apply_one(emq_store *st, const void *key, size_t klen,
                     emq_hop *ops, size_t n, int *deleted)
{
    emq_steps a = {ops, n, EMQ_OK, 0, 0};
    sqlite3_stmt *s = emq_stmt_kv(st, S_KEY_STEPS, key, klen);
    int rc;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_bind_blob(s, 1, key, klen);
    st->steps = &a;
    rc = sqlite3_step(s);
    st->steps = NULL;
    emq_stmt_done(s);
    if (a.rc != EMQ_OK)
        return a.rc; /* a failed step: its error, nothing written */
    if (rc == SQLITE_DONE && a.ran) {
        st->hkexp = 0; /* S_KEY_STEPS matches only a row without expiry */
        arm_written(st, key, klen);
        *deleted = a.deleted;
        return 1;
    }
    if (rc == SQLITE_DONE || (rc & 0xff) == SQLITE_ERROR)
        return 0; /* no such row, or the function declined */
    return emq_store_fail(st, rc);
}

int emq_hash_apply(emq_store *st, const void *key, size_t klen, emq_hop *ops,
                   size_t n, int *existed)
{
    int exists, wrote = 0, deleted = 0, rc;
    if (st->tx_write && !st->sums && !cache_hit(st, key, klen) &&
        !carried(st, key, klen)) {
        int writes = 0;
        for (size_t k = 0; k < n; k++)
            writes |= ops[k].op != EMQ_HOP_GET;
        if (writes)
            carry_put(st); /* apply_one decodes into hraw/hf */
        if (writes && (rc = apply_one(st, key, klen, ops, n, &deleted))) {
            if (rc < 0)
                return rc;
            if (existed)
                *existed = 1;
            if (deleted)
                emq_store_watch(st, EMQ_WATCH_HDEL, key, klen);
            return EMQ_OK;
        }
    }
    rc = load(st, key, klen, &exists);
    if (existed)
        *existed = rc == EMQ_OK && exists;
    st->hvalid = 0; /* hf may change below */
    if (rc != EMQ_OK)
        return rc;
    if ((rc = run_ops(st, ops, n, &wrote, &deleted)) != EMQ_OK)
        return rc;
    if (wrote && (rc = store_back(st, key, klen, exists)) != EMQ_OK)
        return rc;
    if (deleted)
        emq_store_watch(st, EMQ_WATCH_HDEL, key, klen);
    return EMQ_OK;
}
