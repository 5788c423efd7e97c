/*
 * kv.c — the key table: one row per live key (name, type, element id,
 * expiry, and the value of strings and hashes), the generic key commands
 * (TYPE, DEL, PEXPIREAT, PTTL, the ordered scan) and the string type.
 * What differs by type (its name, where an aggregate's elements live) is
 * its row in types.c.
 *
 * Rules: a key holds one type; aggregates keep their elements in the zset,
 * list and sset tables under a `kid` that is never reused; an expired key is
 * absent to every read and is deleted by the first write transaction that
 * looks at it.
 *
 * An aggregate's key row is a registration (name -> type, kid) that may
 * outlive its last element: a queue's pending set empties and refills all
 * day, and re-creating its row each time would cost a kid allocation and two
 * dirty pages per transition. Existence is therefore judged by elements: an
 * aggregate registration with no element is absent to every command (TYPE,
 * DEL, EXISTS, the scan, a write of another type, which replaces it).
 */
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include "store_int.h"
#include "types.h"
#include "stream.h"

const char *emq_type_name(int type)
{
    const emq_typedef *t = emq_typedef_of(type);
    return t ? t->name : "none";
}

static int expired(const emq_store *st, int64_t expire)
{
    return expire >= 0 && st->now > expire;
}

/* ------------------------------------------------------------ key rows */

/* Aggregates keep their elements in a table of their own (types.h). */
static int is_aggregate(int type)
{
    const emq_typedef *t = emq_typedef_of(type);
    return t && t->s_any >= 0;
}

/* 1 when aggregate `kid` of `type` has no element (or on error: *rc). */
static int agg_empty(emq_store *st, int type, int64_t kid, int *rc)
{
    sqlite3_stmt *s = emq_stmt(st, emq_typedef_of(type)->s_any);
    *rc = EMQ_OK;
    if (!s) {
        *rc = emq_store_fail(st, sqlite3_errcode(st->db));
        return 0;
    }
    sqlite3_bind_int64(s, 1, kid);
    int r = sqlite3_step(s);
    emq_stmt_done(s);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        *rc = emq_store_fail(st, r);
    return r == SQLITE_DONE;
}

/* ------------------------------------------------- registration cache */

void emq_kc_clear(emq_store *st)
{
    for (int i = 0; i < EMQ_KCACHE; i++)
        st->kc[i].type = EMQ_T_NONE;
}

/* The cached registration of zset `kid` (a kid names one key), or NULL. */
static emq_kc_entry *kc_zset(emq_store *st, int64_t kid)
{
    for (int i = 0; i < EMQ_KCACHE; i++)
        if (st->kc[i].type == EMQ_T_ZSET && st->kc[i].kid == kid)
            return &st->kc[i];
    return NULL;
}

int64_t emq_kc_nz(emq_store *st, int64_t kid)
{
    const emq_kc_entry *e = kc_zset(st, kid);
    return e ? e->nz : EMQ_NZ_UNKNOWN;
}

void emq_kc_set_nz(emq_store *st, int64_t kid, int64_t nz)
{
    emq_kc_entry *e = kc_zset(st, kid);
    if (e)
        e->nz = nz;
}

int emq_kc_zero(emq_store *st, int64_t kid)
{
    const emq_kc_entry *e = kc_zset(st, kid);
    return e ? e->zero : 0;
}

void emq_kc_set_zero(emq_store *st, int64_t kid, int zero)
{
    emq_kc_entry *e = kc_zset(st, kid);
    if (e)
        e->zero = zero;
}

static emq_kc_entry *kc_find(emq_store *st, const void *key, size_t klen)
{
    for (int i = 0; i < EMQ_KCACHE; i++) {
        emq_kc_entry *e = &st->kc[i];
        if (e->type != EMQ_T_NONE && e->name.len == klen &&
            memcmp(e->name.p, key, klen) == 0)
            return e;
    }
    return NULL;
}

static void kc_put(emq_store *st, const void *key, size_t klen, int type,
                   int64_t kid)
{
    if (!st->tx_write)
        return; /* only write transactions see the newest snapshot */
    emq_kc_entry *e = kc_find(st, key, klen);
    int same = e && e->type == type && e->kid == kid;
    if (!e) {
        e = &st->kc[st->kc_next];
        st->kc_next = (st->kc_next + 1) % EMQ_KCACHE;
        if (emq_buf_set(&e->name, key, klen) != EMQ_OK) {
            e->type = EMQ_T_NONE;
            return;
        }
    }
    if (!same) { /* what was known of another registration */
        e->nz = EMQ_NZ_UNKNOWN;
        e->zero = 0;
    }
    e->type = type;
    e->kid = kid;
}

static void kc_forget(emq_store *st, const void *key, size_t klen)
{
    emq_kc_entry *e = kc_find(st, key, klen);
    if (e)
        e->type = EMQ_T_NONE;
}

/* ------------------------------------------------------------ lookups */

int emq_key_lookup(emq_store *st, const void *key, size_t klen, int want,
                   emq_keyrow *kr, int keep_val)
{
    sqlite3_stmt *s;
    int rc;
    memset(kr, 0, sizeof *kr);
    kr->expire = -1;
    if (st->tx_write && want != EMQ_T_NONE) {
        /* A registration of the wanted type without expiry: no SELECT. */
        emq_kc_entry *e = kc_find(st, key, klen);
        if (e && e->type == want) {
            kr->type = e->type;
            kr->kid = e->kid;
            return EMQ_OK;
        }
    }
    s = emq_stmt(st, S_KEY_GET);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_bind_blob(s, 1, key, klen);
    rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        emq_stmt_done(s);
        return EMQ_OK;
    }
    if (rc != SQLITE_ROW) {
        emq_stmt_done(s);
        return emq_store_fail(st, rc);
    }
    int type = sqlite3_column_int(s, 0);
    int64_t kid = sqlite3_column_int64(s, 1);
    int64_t expire = sqlite3_column_type(s, 2) == SQLITE_NULL
                         ? -1 : sqlite3_column_int64(s, 2);
    if (expired(st, expire)) {
        emq_stmt_done(s);
        return st->tx_write ? emq_key_drop(st, key, klen, type, kid) : EMQ_OK;
    }
    rc = EMQ_OK;
    if (is_aggregate(type)) {
        emq_stmt_done(s);
        /* An empty registration counts only where its type is wanted. */
        if (want != type && agg_empty(st, type, kid, &rc)) {
            if (rc == EMQ_OK && st->tx_write)
                rc = emq_key_drop(st, key, klen, type, kid);
            return rc;
        }
        if (rc != EMQ_OK)
            return rc;
        keep_val = 0;
    }
    if (want != EMQ_T_NONE && type != want) {
        if (!is_aggregate(type))
            emq_stmt_done(s);
        return emq_store_err(st, EMQ_EWRONGTYPE, EMQ_WRONGTYPE_MSG);
    }
    kr->type = type;
    kr->kid = kid;
    kr->expire = expire;
    if (is_aggregate(type) && expire < 0)
        kc_put(st, key, klen, type, kid);
    if (keep_val) {
        kr->val = sqlite3_column_blob(s, 3);
        kr->vlen = (size_t)sqlite3_column_bytes(s, 3);
    } else if (!is_aggregate(type)) {
        emq_stmt_done(s);
    }
    return EMQ_OK;
}

int emq_key_create(emq_store *st, const void *key, size_t klen, int type,
                   int64_t *kid)
{
    sqlite3_stmt *s = emq_stmt(st, S_KID_NEXT);
    int rc;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        emq_stmt_done(s);
        return emq_store_fail(st, rc);
    }
    *kid = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);

    s = emq_stmt_kv(st, S_KEY_INSERT, key, klen);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_bind_blob(s, 1, key, klen);
    sqlite3_bind_int(s, 2, type);
    sqlite3_bind_int64(s, 3, *kid);
    sqlite3_bind_null(s, 4);
    sqlite3_bind_null(s, 5);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    kc_put(st, key, klen, type, *kid);
    return EMQ_OK;
}

int emq_kid_count(emq_store *st, int id, int64_t kid, int64_t *n)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *n = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    return rc == SQLITE_ROW ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_kid_run(emq_store *st, int id, int64_t kid)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, kid);
    int rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_key_drop(emq_store *st, const void *key, size_t klen, int type,
                 int64_t kid)
{
    int rc = EMQ_OK;
    const emq_typedef *t = emq_typedef_of(type);
    kc_forget(st, key, klen);
    if (t && t->s_drop >= 0)
        rc = emq_kid_run(st, t->s_drop, kid);
    else if (type == EMQ_T_STREAM)
        rc = emq_xs_drop(st, kid); /* its rows in stream.c's tables */
    if (rc != EMQ_OK)
        return rc;
    sqlite3_stmt *s = emq_stmt_kv(st, S_KEY_DELETE, key, klen);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_bind_blob(s, 1, key, klen);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

/* -------------------------------------------------------- key commands */

/* 1 when an encoded hash still has a live field at `now`. */
static int hash_alive(const emq_store *st, const void *p, size_t n)
{
    emq_hfields h = {.dict = st->opts.dict};
    int alive = emq_hc_decode(p, n, st->now, &h) != EMQ_OK || h.n > 0;
    emq_hc_free(&h);
    return alive;
}

/* emq_key_lookup, and a hash whose every field expired counts as absent. */
static int live_lookup(emq_store *st, const void *key, size_t klen,
                       emq_keyrow *kr)
{
    int rc = emq_key_lookup(st, key, klen, EMQ_T_NONE, kr, 1);
    if (rc != EMQ_OK || kr->type == EMQ_T_NONE)
        return rc;
    int dead = kr->type == EMQ_T_HASH && !hash_alive(st, kr->val, kr->vlen);
    emq_stmt_done(emq_stmt(st, S_KEY_GET));
    kr->val = NULL;
    if (dead) {
        kr->type = EMQ_T_NONE;
        if (st->tx_write)
            return emq_key_drop(st, key, klen, EMQ_T_HASH, 0);
    }
    return EMQ_OK;
}

int emq_key_type(emq_store *st, const void *key, size_t klen, int *type)
{
    emq_keyrow kr;
    int rc = live_lookup(st, key, klen, &kr);
    *type = rc == EMQ_OK ? kr.type : EMQ_T_NONE;
    return rc;
}

int emq_key_del(emq_store *st, const void *key, size_t klen, int *deleted)
{
    emq_keyrow kr;
    int live, rc;
    if (deleted)
        *deleted = 0;
    /* A hash this transaction already decoded (a job row read, then
     * deleted): its row is known, no second SELECT. */
    if (st->tx_write && emq_hash_cached(st, key, klen, &live)) {
        kr.type = live ? EMQ_T_HASH : EMQ_T_NONE;
        kr.kid = 0;
        rc = EMQ_OK;
    } else {
        rc = live_lookup(st, key, klen, &kr);
    }
    if (rc != EMQ_OK || kr.type == EMQ_T_NONE)
        return rc;
    rc = emq_key_drop(st, key, klen, kr.type, kr.kid);
    if (rc == EMQ_OK && deleted)
        *deleted = 1;
    return rc;
}

int emq_key_expire_at(emq_store *st, const void *key, size_t klen, int64_t at)
{
    emq_keyrow kr;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_NONE, &kr, 0);
    if (rc != EMQ_OK)
        return rc;
    if (kr.type == EMQ_T_NONE)
        return EMQ_NOTFOUND;
    if (at >= 0 && st->now > at) /* an instant in the past deletes it */
        return emq_key_drop(st, key, klen, kr.type, kr.kid);
    kc_forget(st, key, klen); /* cached registrations carry no expiry */
    sqlite3_stmt *s = emq_stmt(st, S_KEY_SET_EXPIRE);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_bind_blob(s, 1, key, klen);
    if (at < 0)
        sqlite3_bind_null(s, 2);
    else
        sqlite3_bind_int64(s, 2, at);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_key_expiry(emq_store *st, const void *key, size_t klen, int64_t *at)
{
    emq_keyrow kr;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_NONE, &kr, 0);
    if (rc != EMQ_OK)
        return rc;
    if (kr.type == EMQ_T_NONE)
        return EMQ_NOTFOUND;
    *at = kr.expire;
    return EMQ_OK;
}

int emq_key_pttl(emq_store *st, const void *key, size_t klen, int64_t *ttl)
{
    int64_t at;
    int rc = emq_key_expiry(st, key, klen, &at);
    if (rc == EMQ_NOTFOUND) {
        *ttl = -2;
        return EMQ_OK;
    }
    if (rc != EMQ_OK)
        return rc;
    *ttl = at < 0 ? -1 : (at - st->now < 0 ? 0 : at - st->now);
    return EMQ_OK;
}

int emq_key_scan(emq_store *st, const void *prefix, size_t plen,
                 emq_key_cb cb, void *ctx)
{
    return emq_key_scan_from(st, prefix, plen, prefix, plen, cb, ctx);
}

int emq_key_scan_from(emq_store *st, const void *prefix, size_t plen,
                      const void *from, size_t flen, emq_key_cb cb, void *ctx)
{
    /* The scan statement is prepared per call: a callback may itself read
     * keys (export does), which must not reset this cursor. */
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db,
                                "SELECT name, type, expire,"
                                " CASE type WHEN 2 THEN val END, kid FROM kv"
                                " WHERE name >= ?1 ORDER BY name", -1, &s,
                                NULL);
    if (rc != SQLITE_OK)
        return emq_store_fail(st, rc);
    emq_bind_blob(s, 1, from, flen);
    int out = EMQ_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const unsigned char *k = sqlite3_column_blob(s, 0);
        size_t kl = (size_t)sqlite3_column_bytes(s, 0);
        if (kl < plen || (plen && memcmp(k, prefix, plen) != 0))
            break;
        int64_t ex = sqlite3_column_type(s, 2) == SQLITE_NULL
                         ? -1 : sqlite3_column_int64(s, 2);
        if (expired(st, ex))
            continue;
        int type = sqlite3_column_int(s, 1);
        if (type == EMQ_T_HASH &&
            !hash_alive(st, sqlite3_column_blob(s, 3),
                        (size_t)sqlite3_column_bytes(s, 3)))
            continue;
        if (is_aggregate(type)) {
            int erc;
            int empty = agg_empty(st, type, sqlite3_column_int64(s, 4), &erc);
            if (erc != EMQ_OK) {
                out = erc;
                break;
            }
            if (empty)
                continue;
        }
        if ((out = cb(ctx, k ? k : (const unsigned char *)"", kl, type)) != 0)
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        out = emq_store_fail(st, rc);
    sqlite3_finalize(s);
    return out;
}

/* ------------------------------------------------------------- strings */

int emq_str_get(emq_store *st, const void *key, size_t klen, emq_buf *out)
{
    emq_keyrow kr;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_STRING, &kr, 1);
    if (rc != EMQ_OK || kr.type == EMQ_T_NONE)
        return rc == EMQ_OK ? EMQ_NOTFOUND : rc;
    rc = emq_buf_set(out, kr.val, kr.vlen);
    emq_stmt_done(emq_stmt(st, S_KEY_GET));
    return rc;
}

int emq_str_set(emq_store *st, const void *key, size_t klen, const void *v,
                size_t vlen, int64_t expire_at, int flags, int *done)
{
    emq_keyrow kr;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_NONE, &kr, 0);
    if (done)
        *done = 0;
    if (rc != EMQ_OK)
        return rc;
    if (kr.type != EMQ_T_NONE) {
        if (flags & EMQ_SET_NX)
            return EMQ_OK;
        /* SET replaces a key of any type. */
        if (kr.type != EMQ_T_STRING && kr.type != EMQ_T_HASH &&
            (rc = emq_key_drop(st, key, klen, kr.type, kr.kid)) != EMQ_OK)
            return rc;
    }
    sqlite3_stmt *s = emq_stmt(st, S_KEY_UPSERT);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    emq_bind_blob(s, 1, key, klen);
    sqlite3_bind_int(s, 2, EMQ_T_STRING);
    if (expire_at < 0)
        sqlite3_bind_null(s, 3);
    else
        sqlite3_bind_int64(s, 3, expire_at);
    emq_bind_blob(s, 4, v, vlen);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    if (done)
        *done = 1;
    return EMQ_OK;
}

/* Parse a whole byte string as a signed 64-bit decimal (Redis rules: no
 * spaces, no '+', no leading zeros except "0"). */
int emq_parse_i64(const void *bytes, size_t n, int64_t *out)
{
    const unsigned char *p = bytes;
    if (n == 0 || n > 20)
        return -1;
    size_t i = p[0] == '-' ? 1 : 0;
    if (i == n || (p[i] == '0' && n > i + 1) || (i && p[i] == '0'))
        return -1;
    /* Accumulate the magnitude as unsigned: it may reach 2^63 (INT64_MIN)
     * and must not pass it. */
    uint64_t limit = i ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (size_t j = i; j < n; j++) {
        unsigned d = (unsigned)p[j] - '0';
        if (d > 9 || v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = i ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v)
             : (int64_t)v;
    return 0;
}

int emq_str_incrby(emq_store *st, const void *key, size_t klen, int64_t by,
                   int64_t *result)
{
    emq_keyrow kr;
    int64_t cur = 0;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_STRING, &kr, 1);
    if (rc != EMQ_OK)
        return rc;
    int64_t expire = kr.expire;
    if (kr.type != EMQ_T_NONE) {
        int bad = emq_parse_i64(kr.val, kr.vlen, &cur);
        emq_stmt_done(emq_stmt(st, S_KEY_GET));
        if (bad)
            return emq_store_err(st, EMQ_EPROTO,
                                 "ERR value is not an integer or out of range");
    }
    if ((by > 0 && cur > INT64_MAX - by) || (by < 0 && cur < INT64_MIN - by))
        return emq_store_err(st, EMQ_EPROTO,
                             "ERR increment or decrement would overflow");
    cur += by;
    char num[24];
    size_t n = emq_fmt_i64(num, cur);
    rc = emq_str_set(st, key, klen, num, n, expire, 0, NULL);
    if (rc == EMQ_OK && result)
        *result = cur;
    return rc;
}

size_t emq_fmt_i64(char *buf, int64_t v)
{
    char tmp[21];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t len = 0;
    if (v < 0)
        buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}
