/*
 * tengine.c — fixtures of tengine.h. Every read runs in its own read
 * transaction through storage/store.h; every raw write in its own write
 * transaction, as a producer or operator outside the protocol would write.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "tengine.h"
#include "relutil.h"
#include "ksdump.h"

emq_store *emq_db_store(emq_db *db);

int64_t tclock_fn(void *ctx)
{
    tclock *c = ctx;
    c->reads++;
    return c->now;
}

emq_db *topen(tclock *c)
{
    emq_options o;
    emq_db *db = NULL;
    c->now = T0;
    c->reads = 0;
    emq_options_init(&o);
    o.clock = tclock_fn;
    o.clock_ctx = c;
    ck_assert_int_eq(emq_open(":memory:", &o, &db), EMQ_OK);
    c->reads = 0;
    return db;
}

static emq_store *rd(emq_db *db)
{
    emq_store *st = emq_db_store(db);
    ck_assert_int_eq(emq_store_begin(st, 0, emq_now(db)), EMQ_OK);
    return st;
}

static emq_store *wr(emq_db *db)
{
    emq_store *st = emq_db_store(db);
    ck_assert_int_eq(emq_store_begin(st, 1, emq_now(db)), EMQ_OK);
    return st;
}

int tk_type(emq_db *db, const char *key)
{
    emq_store *st = rd(db);
    int t = -1;
    ck_assert_int_eq(emq_key_type(st, key, strlen(key), &t), EMQ_OK);
    emq_store_rollback(st);
    return t;
}

int tk_exists(emq_db *db, const char *key)
{
    return tk_type(db, key) != EMQ_T_NONE;
}

char *tk_hget(emq_db *db, const char *key, const char *f)
{
    emq_store *st = rd(db);
    emq_buf v = {0};
    char *s = NULL;
    int rc = emq_hash_get(st, key, strlen(key), f, strlen(f), &v);
    emq_store_rollback(st);
    ck_assert(rc == EMQ_OK || rc == EMQ_NOTFOUND);
    if (rc == EMQ_OK) {
        s = malloc(v.len + 1);
        memcpy(s, v.p, v.len);
        s[v.len] = 0;
    }
    emq_buf_free(&v);
    return s;
}

int64_t tk_hlen(emq_db *db, const char *key)
{
    emq_store *st = rd(db);
    int64_t n = -1;
    int rc = emq_hash_len(st, key, strlen(key), &n);
    emq_store_rollback(st);
    ck_assert(rc >= 0);
    return n;
}

int64_t tk_zcard(emq_db *db, const char *key)
{
    emq_store *st = rd(db);
    int64_t n = -1;
    int rc = emq_zset_card(st, key, strlen(key), &n);
    emq_store_rollback(st);
    ck_assert(rc >= 0);
    return n;
}

int tk_zscore(emq_db *db, const char *key, const char *m, double *s)
{
    emq_store *st = rd(db);
    int rc = emq_zset_score(st, key, strlen(key), m, strlen(m), s);
    emq_store_rollback(st);
    ck_assert(rc == EMQ_OK || rc == EMQ_NOTFOUND);
    return rc == EMQ_OK;
}

static int join_cb(void *ctx, const unsigned char *v, size_t n)
{
    emq_buf *b = ctx;
    if (b->len) emq_buf_append(b, ",", 1);
    emq_buf_append(b, v, n);
    return 0;
}

char *tk_list(emq_db *db, const char *key)
{
    emq_store *st = rd(db);
    emq_buf b = {0};
    char *s;
    int rc;
    emq_buf_append(&b, "", 0);
    rc = emq_list_range(st, key, strlen(key), 0, -1, join_cb, &b);
    emq_store_rollback(st);
    ck_assert(rc >= 0);
    s = strdup(b.p ? (char *)b.p : "");
    emq_buf_free(&b);
    return s;
}

char *tk_str(emq_db *db, const char *key)
{
    emq_store *st = rd(db);
    emq_buf v = {0};
    char *s = NULL;
    int rc = emq_str_get(st, key, strlen(key), &v);
    emq_store_rollback(st);
    ck_assert(rc == EMQ_OK || rc == EMQ_NOTFOUND);
    if (rc == EMQ_OK) {
        s = malloc(v.len + 1);
        memcpy(s, v.p, v.len);
        s[v.len] = 0;
    }
    emq_buf_free(&v);
    return s;
}

void tk_hset(emq_db *db, const char *key, const char *f, const char *v)
{
    emq_store *st = wr(db);
    emq_bytes fv[2] = {{f, strlen(f)}, {v, strlen(v)}};
    ck_assert_int_eq(emq_hash_set(st, key, strlen(key), fv, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
}

void tk_zadd(emq_db *db, const char *key, const char *m, double s)
{
    emq_store *st = wr(db);
    int added;
    ck_assert_int_eq(emq_zset_add(st, key, strlen(key), m, strlen(m), s,
                                  &added), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
}

void tk_sadd(emq_db *db, const char *key, const char *m)
{
    emq_store *st = wr(db);
    int added;
    ck_assert_int_eq(emq_sset_add(st, key, strlen(key), m, strlen(m), &added),
                     EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
}

void tk_del(emq_db *db, const char *key)
{
    emq_store *st = wr(db);
    ck_assert(emq_key_del(st, key, strlen(key), NULL) >= 0);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
}

void tk_set(emq_db *db, const char *key, const char *v)
{
    emq_store *st = wr(db);
    ck_assert_int_eq(emq_str_set(st, key, strlen(key), v, strlen(v), -1, 0,
                                 NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
}

char *tk_dump(emq_db *db)
{
    emq_buf b = {0};
    char *s;
    ck_assert_int_eq(kd_store(emq_db_store(db), emq_now(db), &b), EMQ_OK);
    s = strdup((char *)b.p);
    emq_buf_free(&b);
    return s;
}

void tdir_make(char *dir, size_t dlen, const char *prefix, char *path,
               size_t plen)
{
    ck_assert_int_eq(rel_mkdtemp(dir, dlen, prefix), 0);
    rel_path(path, plen, dir, "q.db");
}

void tdir_remove(const char *dir) { rel_rmrf(dir); }
