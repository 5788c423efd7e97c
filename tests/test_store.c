/*
 * test_store.c — the typed keyspace (storage/): every operation, Redis
 * semantics (WRONGTYPE, implicit creation and deletion, zset order, expiry),
 * binary safety, transactions, persistence and foreign-file refusals.
 */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "store.h"
#include "store_int.h" /* EMQ_HCARRY_MAX */
#include "suites.h"

static emq_store *st;
static char tmpdir[64];

static emq_store_opts opts(void)
{
    emq_store_opts o = {.synchronous = EMQ_SYNC_NORMAL, .busy_timeout_ms = 1000};
    return o;
}

static void setup(void)
{
    emq_store_opts o = opts();
    ck_assert_int_eq(emq_store_open(":memory:", &o, &st, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 1000), EMQ_OK);
}

static void teardown(void)
{
    emq_store_close(st);
    st = NULL;
}

#define K(s) (s), (sizeof(s) - 1)

static int type_of(const char *k, size_t n)
{
    int t = -1;
    ck_assert_int_eq(emq_key_type(st, k, n, &t), EMQ_OK);
    return t;
}

/* ------------------------------------------------------------- strings */

START_TEST(string_set_get_nx_and_delete)
{
    emq_buf b = {0};
    int done = 0;
    ck_assert_int_eq(emq_str_get(st, K("s"), &b), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_str_set(st, K("s"), "v1", 2, -1, 0, &done), EMQ_OK);
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(emq_str_set(st, K("s"), "v2", 2, -1, EMQ_SET_NX, &done),
                     EMQ_OK);
    ck_assert_int_eq(done, 0);
    ck_assert_int_eq(emq_str_get(st, K("s"), &b), EMQ_OK);
    ck_assert_mem_eq(b.p, "v1", 2);
    ck_assert_int_eq(type_of(K("s")), EMQ_T_STRING);
    int del = 0;
    ck_assert_int_eq(emq_key_del(st, K("s"), &del), EMQ_OK);
    ck_assert_int_eq(del, 1);
    ck_assert_int_eq(emq_key_del(st, K("s"), &del), EMQ_OK);
    ck_assert_int_eq(del, 0);
    ck_assert_int_eq(type_of(K("s")), EMQ_T_NONE);
    emq_buf_free(&b);
}
END_TEST

START_TEST(string_expiry_is_absolute_and_lazy)
{
    emq_buf b = {0};
    int64_t ttl;
    ck_assert_int_eq(emq_str_set(st, K("e"), "x", 1, 1500, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_key_pttl(st, K("e"), &ttl), EMQ_OK);
    ck_assert_int_eq(ttl, 500);
    ck_assert_int_eq(emq_key_pttl(st, K("nope"), &ttl), EMQ_OK);
    ck_assert_int_eq(ttl, -2);
    ck_assert_int_eq(emq_str_set(st, K("p"), "x", 1, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_key_pttl(st, K("p"), &ttl), EMQ_OK);
    ck_assert_int_eq(ttl, -1);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    /* At the instant itself the key still lives; one ms later it is gone. */
    ck_assert_int_eq(emq_store_begin(st, 1, 1500), EMQ_OK);
    ck_assert_int_eq(emq_str_get(st, K("e"), &b), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 1501), EMQ_OK);
    ck_assert_int_eq(emq_str_get(st, K("e"), &b), EMQ_NOTFOUND);
    ck_assert_int_eq(type_of(K("e")), EMQ_T_NONE);
    /* SET NX succeeds over an expired key. */
    int done = 0;
    ck_assert_int_eq(emq_str_set(st, K("e"), "y", 1, -1, EMQ_SET_NX, &done),
                     EMQ_OK);
    ck_assert_int_eq(done, 1);
    /* PEXPIREAT sets, reads back, and clears. */
    int64_t at;
    ck_assert_int_eq(emq_key_expire_at(st, K("e"), 9000), EMQ_OK);
    ck_assert_int_eq(emq_key_expiry(st, K("e"), &at), EMQ_OK);
    ck_assert_int_eq(at, 9000);
    ck_assert_int_eq(emq_key_expire_at(st, K("e"), -1), EMQ_OK);
    ck_assert_int_eq(emq_key_expiry(st, K("e"), &at), EMQ_OK);
    ck_assert_int_eq(at, -1);
    ck_assert_int_eq(emq_key_expire_at(st, K("missing"), 9000), EMQ_NOTFOUND);
    emq_buf_free(&b);
}
END_TEST

START_TEST(string_incrby_counts_from_zero_and_refuses_text)
{
    int64_t r;
    emq_buf b = {0};
    ck_assert_int_eq(emq_str_incrby(st, K("c"), -1, &r), EMQ_OK);
    ck_assert_int_eq(r, -1);
    ck_assert_int_eq(emq_str_incrby(st, K("c"), 18, &r), EMQ_OK);
    ck_assert_int_eq(r, 17);
    ck_assert_int_eq(emq_str_get(st, K("c"), &b), EMQ_OK);
    ck_assert_str_eq((char *)b.p, "17");
    ck_assert_int_eq(emq_str_set(st, K("t"), "abc", 3, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_str_incrby(st, K("t"), 1, &r), EMQ_EPROTO);
    ck_assert_str_eq(emq_store_errmsg(st),
                     "ERR value is not an integer or out of range");
    emq_buf_free(&b);
}
END_TEST

START_TEST(integers_use_shortest_decimal)
{
    char buf[24];
    int64_t v;
    ck_assert_int_eq(emq_fmt_i64(buf, 0), 1);
    ck_assert_str_eq(buf, "0");
    emq_fmt_i64(buf, INT64_MIN);
    ck_assert_str_eq(buf, "-9223372036854775808");
    ck_assert_int_eq(emq_parse_i64("-9223372036854775808", 20, &v), 0);
    ck_assert(v == INT64_MIN);
    ck_assert_int_eq(emq_parse_i64("9223372036854775808", 19, &v), -1);
    ck_assert_int_eq(emq_parse_i64("007", 3, &v), -1);
    ck_assert_int_eq(emq_parse_i64("+7", 2, &v), -1);
    ck_assert_int_eq(emq_parse_i64("-0", 2, &v), -1);
    ck_assert_int_eq(emq_parse_i64("", 0, &v), -1);
    ck_assert_int_eq(emq_parse_i64("1 ", 2, &v), -1);
}
END_TEST

/* -------------------------------------------------------------- hashes */

struct fields {
    int n;
    char names[16][32];
    char vals[16][32];
    int64_t exp[16];
};

static int collect_field(void *ctx, const unsigned char *f, size_t fl,
                         const unsigned char *v, size_t vl, int64_t ex)
{
    struct fields *c = ctx;
    memcpy(c->names[c->n], f, fl);
    c->names[c->n][fl] = 0;
    memcpy(c->vals[c->n], v, vl);
    c->vals[c->n][vl] = 0;
    c->exp[c->n] = ex;
    c->n++;
    return 0;
}

START_TEST(hash_set_get_multi_and_getall_in_order)
{
    emq_bytes fv[] = {{"state", 5}, {"pending", 7}, {"attempts", 8}, {"0", 1},
                      {"payload", 7}, {"x", 1}};
    int added = 0;
    emq_buf b = {0};
    ck_assert_int_eq(emq_hash_set(st, K("h"), fv, 3, &added), EMQ_OK);
    ck_assert_int_eq(added, 3);
    emq_bytes upd[] = {{"state", 5}, {"active", 6}, {"extra", 5}, {"1", 1}};
    ck_assert_int_eq(emq_hash_set(st, K("h"), upd, 2, &added), EMQ_OK);
    ck_assert_int_eq(added, 1);
    ck_assert_int_eq(emq_hash_get(st, K("h"), K("state"), &b), EMQ_OK);
    ck_assert_str_eq((char *)b.p, "active");
    ck_assert_int_eq(emq_hash_get(st, K("h"), K("nope"), &b), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_hash_get(st, K("nokey"), K("state"), &b),
                     EMQ_NOTFOUND);
    struct fields c = {0};
    ck_assert_int_eq(emq_hash_getall(st, K("h"), collect_field, &c), EMQ_OK);
    ck_assert_int_eq(c.n, 4);
    ck_assert_str_eq(c.names[0], "state");
    ck_assert_str_eq(c.names[3], "extra");
    int64_t n;
    ck_assert_int_eq(emq_hash_len(st, K("h"), &n), EMQ_OK);
    ck_assert_int_eq(n, 4);
    int ex;
    ck_assert_int_eq(emq_hash_exists(st, K("h"), K("payload"), &ex), EMQ_OK);
    ck_assert_int_eq(ex, 1);
    ck_assert_int_eq(emq_hash_exists(st, K("h"), K("zzz"), &ex), EMQ_OK);
    ck_assert_int_eq(ex, 0);
    emq_buf_free(&b);
}
END_TEST

START_TEST(hash_incrby_creates_and_refuses_text)
{
    int64_t r;
    ck_assert_int_eq(emq_hash_incrby(st, K("m"), K("count"), 1, &r), EMQ_OK);
    ck_assert_int_eq(r, 1);
    ck_assert_int_eq(emq_hash_incrby(st, K("d"), K("n"), -1, &r), EMQ_OK);
    ck_assert_int_eq(r, -1);
    emq_bytes fv[] = {{"f", 1}, {"x1", 2}};
    ck_assert_int_eq(emq_hash_set(st, K("m"), fv, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_incrby(st, K("m"), K("f"), 1, &r), EMQ_EPROTO);
    ck_assert_str_eq(emq_store_errmsg(st), "ERR hash value is not an integer");
}
END_TEST

START_TEST(hash_last_field_removed_deletes_key)
{
    emq_bytes fv[] = {{"a", 1}, {"1", 1}, {"b", 1}, {"2", 1}};
    int rm;
    ck_assert_int_eq(emq_hash_set(st, K("h"), fv, 2, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_del(st, K("h"), K("a"), &rm), EMQ_OK);
    ck_assert_int_eq(rm, 1);
    ck_assert_int_eq(emq_hash_del(st, K("h"), K("a"), &rm), EMQ_OK);
    ck_assert_int_eq(rm, 0);
    ck_assert_int_eq(type_of(K("h")), EMQ_T_HASH);
    ck_assert_int_eq(emq_hash_del(st, K("h"), K("b"), &rm), EMQ_OK);
    ck_assert_int_eq(type_of(K("h")), EMQ_T_NONE);
}
END_TEST

START_TEST(hash_create_only_when_absent)
{
    emq_bytes a[] = {{"payload", 7}, {"first", 5}};
    emq_bytes b[] = {{"payload", 7}, {"second", 6}};
    int created;
    emq_buf v = {0};
    ck_assert_int_eq(emq_hash_create(st, K("j"), a, 1, &created), EMQ_OK);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(emq_hash_create(st, K("j"), b, 1, &created), EMQ_OK);
    ck_assert_int_eq(created, 0);
    ck_assert_int_eq(emq_hash_get(st, K("j"), K("payload"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "first");
    /* Any type blocks creation. */
    ck_assert_int_eq(emq_zset_add(st, K("z"), "m", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_create(st, K("z"), b, 1, &created), EMQ_OK);
    ck_assert_int_eq(created, 0);
    emq_buf_free(&v);
}
END_TEST

/* emq_hash_create_many answers what as many emq_hash_create would: a run
 * of new names goes in whole; a run meeting a live key of any type, or its
 * own duplicate, is redone one by one (so an expired key is replaced). */
START_TEST(hash_create_many_is_so_many_creates)
{
    char names[100][16];
    emq_bytes keys[100], fv[200];
    int made[100];
    emq_buf v = {0};
    emq_bytes h[] = {{"payload", 7}, {"old", 3}};
    for (int i = 0; i < 100; i++) {
        snprintf(names[i], sizeof names[i], "n%02d", i);
        keys[i] = (emq_bytes){names[i], 3};
        fv[2 * i] = (emq_bytes){"payload", 7};
        fv[2 * i + 1] = (emq_bytes){names[i], 3};
    }
    memcpy(names[70], "n66", 3); /* run 3: its own duplicate */
    memcpy(names[97], "n05", 3); /* the last few: a name run 1 made */
    ck_assert_int_eq(emq_str_set(st, K("n40"), "s", 1, 2000, 0, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_hash_set(st, K("n45"), h, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 5000), EMQ_OK); /* n40 expired */
    ck_assert_int_eq(emq_hash_create_many(st, keys, fv, 1, 100, made),
                     EMQ_OK);
    for (int i = 0; i < 100; i++)
        ck_assert_msg(made[i] == !(i == 45 || i == 70 || i == 97),
                      "item %d: made %d", i, made[i]);
    ck_assert_int_eq(emq_hash_get(st, K("n00"), K("payload"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "n00");
    ck_assert_int_eq(emq_hash_get(st, K("n40"), K("payload"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "n40");
    ck_assert_int_eq(emq_hash_get(st, K("n45"), K("payload"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "old");
    ck_assert_int_eq(emq_hash_get(st, K("n66"), K("payload"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "n66");
    emq_buf_free(&v);
}
END_TEST

START_TEST(hash_field_expiry_hides_only_that_field)
{
    emq_bytes fv[] = {{"state", 5}, {"active", 6}, {"lock", 4}, {"3", 1}};
    int done;
    int64_t at;
    emq_buf v = {0};
    ck_assert_int_eq(emq_hash_set(st, K("r"), fv, 2, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_expire_at(st, K("r"), K("lock"), 1200, &done),
                     EMQ_OK);
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(emq_hash_field_expiry(st, K("r"), K("lock"), &at), EMQ_OK);
    ck_assert_int_eq(at, 1200);
    ck_assert_int_eq(emq_hash_field_expiry(st, K("r"), K("state"), &at),
                     EMQ_OK);
    ck_assert_int_eq(at, -1);
    ck_assert_int_eq(emq_hash_field_expiry(st, K("r"), K("zz"), &at), EMQ_OK);
    ck_assert_int_eq(at, -2);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 1201), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(st, K("r"), K("lock"), &v), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_hash_get(st, K("r"), K("state"), &v), EMQ_OK);
    /* A hash whose only field expires is gone. */
    emq_bytes one[] = {{"lock", 4}, {"1", 1}};
    ck_assert_int_eq(emq_hash_set(st, K("o"), one, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_expire_at(st, K("o"), K("lock"), 1300, &done),
                     EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 1301), EMQ_OK);
    ck_assert_int_eq(type_of(K("o")), EMQ_T_NONE);
    emq_buf_free(&v);
}
END_TEST

/* An enqueue (HSETNX-like create) over a row whose only field (a lock
 * field with its TTL) has expired creates the row: the hash is gone, as
 * Valkey drops a hash whose last field expires. */
START_TEST(hash_create_over_a_hash_whose_fields_all_expired)
{
    emq_bytes lock[] = {{"lock", 4}, {"2", 1}};
    emq_bytes row[] = {{"state", 5}, {"pending", 7}};
    emq_buf v = {0};
    int done, created;
    ck_assert_int_eq(emq_hash_set(st, K("j"), lock, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_expire_at(st, K("j"), K("lock"), 1100, &done),
                     EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 1100), EMQ_OK);
    ck_assert_int_eq(emq_hash_create(st, K("j"), row, 1, &created), EMQ_OK);
    ck_assert_int_eq(created, 0); /* still there */
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 1101), EMQ_OK);
    ck_assert_int_eq(emq_hash_create(st, K("j"), row, 1, &created), EMQ_OK);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(emq_hash_get(st, K("j"), K("state"), &v), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(st, K("j"), K("lock"), &v), EMQ_NOTFOUND);
    emq_buf_free(&v);
}
END_TEST

START_TEST(hash_apply_runs_steps_in_order_with_one_write)
{
    emq_buf pay = {0}, st0 = {0};
    int existed;
    emq_hop ops[4] = {
        {.op = EMQ_HOP_INCR, .f = {"attempts", 8}, .by = 1},
        {.op = EMQ_HOP_GET, .f = {"state", 5}, .out = &st0},
        {.op = EMQ_HOP_SET, .f = {"state", 5}, .v = {"active", 6}},
        {.op = EMQ_HOP_GET, .f = {"payload", 7}, .out = &pay},
    };
    /* On an absent row: a partial row appears, the payload is absent. */
    ck_assert_int_eq(emq_hash_apply(st, K("j"), ops, 4, &existed), EMQ_OK);
    ck_assert_int_eq(existed, 0);
    ck_assert_int_eq(ops[0].result, 1);
    ck_assert_int_eq(ops[1].found, 0);
    ck_assert_int_eq(ops[3].found, 0);
    emq_bytes fv[] = {{"payload", 7}, {"p\0q", 3}, {"state", 5}, {"pending", 7}};
    ck_assert_int_eq(emq_hash_set(st, K("j"), fv, 2, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_apply(st, K("j"), ops, 4, &existed), EMQ_OK);
    ck_assert_int_eq(existed, 1);
    ck_assert_int_eq(ops[0].result, 2);
    ck_assert_int_eq(ops[1].found, 1);
    ck_assert_str_eq((char *)st0.p, "pending");
    ck_assert_int_eq(pay.len, 3);
    ck_assert_mem_eq(pay.p, "p\0q", 3);
    emq_buf v = {0};
    ck_assert_int_eq(emq_hash_get(st, K("j"), K("state"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "active");
    ck_assert_int_eq(emq_hash_get(st, K("j"), K("attempts"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "2");
    /* Deleting every field deletes the key; a bad INCR writes nothing. */
    emq_hop del[3] = {{.op = EMQ_HOP_DEL, .f = {"attempts", 8}},
                      {.op = EMQ_HOP_DEL, .f = {"state", 5}},
                      {.op = EMQ_HOP_DEL, .f = {"payload", 7}}};
    ck_assert_int_eq(emq_hash_apply(st, K("j"), del, 3, NULL), EMQ_OK);
    ck_assert_int_eq(type_of(K("j")), EMQ_T_NONE);
    emq_bytes txt[] = {{"n", 1}, {"x", 1}};
    ck_assert_int_eq(emq_hash_set(st, K("t"), txt, 1, NULL), EMQ_OK);
    emq_hop bad[2] = {{.op = EMQ_HOP_SET, .f = {"m", 1}, .v = {"1", 1}},
                      {.op = EMQ_HOP_INCR, .f = {"n", 1}, .by = 1}};
    ck_assert_int_eq(emq_hash_apply(st, K("t"), bad, 2, NULL), EMQ_EPROTO);
    int64_t n;
    ck_assert_int_eq(emq_hash_len(st, K("t"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    emq_buf_free(&pay);
    emq_buf_free(&st0);
    emq_buf_free(&v);
}
END_TEST

/* --------------------------------------------------------- sorted sets */

struct members {
    int n;
    char m[64][16];
    size_t len[64];
    double score[64];
};

static int collect_member(void *ctx, const unsigned char *m, size_t n,
                          double score)
{
    struct members *c = ctx;
    memcpy(c->m[c->n], m, n);
    c->len[c->n] = n;
    c->score[c->n] = score;
    c->n++;
    return 0;
}

START_TEST(zset_orders_by_score_then_member_bytes)
{
    /* Negative and fractional scores, ties broken by memcmp with a proper
     * prefix first, NUL inside a member. */
    ck_assert_int_eq(emq_zset_add(st, K("z"), "b", 1, 1.5, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "a", 1, -2, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "ab", 2, 1.5, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "a\0", 2, 1.5, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "\xff", 1, 1.5, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "c", 1, 0.25, NULL), EMQ_OK);
    struct members c = {0};
    ck_assert_int_eq(emq_zset_range(st, K("z"), 0, -1, collect_member, &c),
                     EMQ_OK);
    ck_assert_int_eq(c.n, 6);
    ck_assert_mem_eq(c.m[0], "a", 1);
    ck_assert_mem_eq(c.m[1], "c", 1);
    ck_assert_int_eq(c.len[2], 2);
    ck_assert_mem_eq(c.m[2], "a\0", 2);
    ck_assert_mem_eq(c.m[3], "ab", 2);
    ck_assert_mem_eq(c.m[4], "b", 1);
    ck_assert_mem_eq(c.m[5], "\xff", 1);
    struct members r = {0};
    ck_assert_int_eq(emq_zset_range(st, K("z"), 1, 2, collect_member, &r),
                     EMQ_OK);
    ck_assert_int_eq(r.n, 2);
    ck_assert_mem_eq(r.m[0], "\xff", 1);
    ck_assert_mem_eq(r.m[1], "b", 1);
}
END_TEST

START_TEST(zset_add_updates_score_and_reports_new)
{
    int added;
    double s;
    ck_assert_int_eq(emq_zset_add(st, K("z"), "m", 1, 5, &added), EMQ_OK);
    ck_assert_int_eq(added, 1);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "m", 1, 7, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    ck_assert_int_eq(emq_zset_score(st, K("z"), "m", 1, &s), EMQ_OK);
    ck_assert(s == 7);
    ck_assert_int_eq(emq_zset_score(st, K("z"), "x", 1, &s), EMQ_NOTFOUND);
    int64_t n;
    ck_assert_int_eq(emq_zset_card(st, K("z"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_zset_card(st, K("none"), &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(zset_range_by_score_is_inclusive_with_limit)
{
    for (int i = 0; i < 10; i++) {
        char m[2] = {(char)('a' + i), 0};
        ck_assert_int_eq(emq_zset_add(st, K("z"), m, 1, i * 10, NULL), EMQ_OK);
    }
    struct members c = {0};
    ck_assert_int_eq(emq_zset_range_score(st, K("z"), -1e300, 30, -1,
                                          collect_member, &c), EMQ_OK);
    ck_assert_int_eq(c.n, 4); /* 0, 10, 20, 30 */
    struct members d = {0};
    ck_assert_int_eq(emq_zset_range_score(st, K("z"), 10, 90, 3,
                                          collect_member, &d), EMQ_OK);
    ck_assert_int_eq(d.n, 3);
    ck_assert_mem_eq(d.m[0], "b", 1);
}
END_TEST

START_TEST(zset_lex_ranges_both_directions)
{
    const char *ms[] = {"JOB1", "JOB2", "JOB3", "JOB4"};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(emq_zset_add(st, K("p"), ms[i], 4, 0, NULL), EMQ_OK);
    struct members c = {0};
    ck_assert_int_eq(emq_zset_range_lex(st, K("p"), NULL, NULL, 1, 3,
                                        collect_member, &c), EMQ_OK);
    ck_assert_int_eq(c.n, 3);
    ck_assert_mem_eq(c.m[0], "JOB4", 4);
    ck_assert_mem_eq(c.m[2], "JOB2", 4);
    emq_bytes lo = {"JOB2", 4}, hi = {"JOB3", 4};
    struct members d = {0};
    ck_assert_int_eq(emq_zset_range_lex(st, K("p"), &lo, &hi, 0, -1,
                                        collect_member, &d), EMQ_OK);
    ck_assert_int_eq(d.n, 2);
    ck_assert_mem_eq(d.m[0], "JOB2", 4);
}
END_TEST

START_TEST(zset_popmin_and_rem_vanish_when_empty)
{
    emq_buf m = {0};
    double s;
    int rm;
    ck_assert_int_eq(emq_zset_add(st, K("z"), "y", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "x", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_popmin(st, K("z"), &m, &s), EMQ_OK);
    ck_assert_str_eq((char *)m.p, "x");
    ck_assert_int_eq(emq_zset_rem(st, K("z"), "q", 1, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 0);
    ck_assert_int_eq(emq_zset_rem(st, K("z"), "y", 1, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 1);
    ck_assert_int_eq(type_of(K("z")), EMQ_T_NONE);
    ck_assert_int_eq(emq_zset_popmin(st, K("z"), &m, &s), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "w", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_popmin(st, K("z"), &m, &s), EMQ_OK);
    ck_assert_int_eq(type_of(K("z")), EMQ_T_NONE);
    emq_buf_free(&m);
}
END_TEST

START_TEST(zset_scores_are_doubles)
{
    double s;
    /* 2^53 + 1 is not a double: it rounds as Valkey's scores do. */
    ck_assert_int_eq(emq_zset_add(st, K("z"), "m", 1, (double)9007199254740993LL,
                                  NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_score(st, K("z"), "m", 1, &s), EMQ_OK);
    ck_assert(s == 9007199254740992.0);
}
END_TEST

/* --------------------------------------------------------------- lists */

struct vals {
    int n;
    char v[64][16];
};

static int collect_val(void *ctx, const unsigned char *v, size_t n)
{
    struct vals *c = ctx;
    memcpy(c->v[c->n], v, n);
    c->v[c->n][n] = 0;
    c->n++;
    return 0;
}

static struct vals list_all(const char *k, size_t n)
{
    struct vals c = {0};
    ck_assert_int_eq(emq_list_range(st, k, n, 0, -1, collect_val, &c), EMQ_OK);
    return c;
}

START_TEST(list_push_both_ends_and_range)
{
    int64_t len;
    ck_assert_int_eq(emq_list_push(st, K("l"), 1, "b", 1, &len), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 1, "c", 1, &len), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 0, "a", 1, &len), EMQ_OK);
    ck_assert_int_eq(len, 3);
    struct vals c = list_all(K("l"));
    ck_assert_int_eq(c.n, 3);
    ck_assert_str_eq(c.v[0], "a");
    ck_assert_str_eq(c.v[2], "c");
    struct vals d = {0};
    ck_assert_int_eq(emq_list_range(st, K("l"), -2, -1, collect_val, &d),
                     EMQ_OK);
    ck_assert_int_eq(d.n, 2);
    ck_assert_str_eq(d.v[0], "b");
    struct vals e = {0};
    ck_assert_int_eq(emq_list_range(st, K("l"), 5, 9, collect_val, &e), EMQ_OK);
    ck_assert_int_eq(e.n, 0);
    ck_assert_int_eq(emq_list_len(st, K("l"), &len), EMQ_OK);
    ck_assert_int_eq(len, 3);
}
END_TEST

START_TEST(list_trim_keeps_first_64_and_empties)
{
    for (int i = 0; i < 70; i++)
        ck_assert_int_eq(emq_list_push(st, K("w"), 0, "1", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_trim(st, K("w"), 0, 63), EMQ_OK);
    int64_t len;
    ck_assert_int_eq(emq_list_len(st, K("w"), &len), EMQ_OK);
    ck_assert_int_eq(len, 64);
    for (int i = 0; i < 5; i++) {
        char v[2] = {(char)('a' + i), 0};
        ck_assert_int_eq(emq_list_push(st, K("t"), 1, v, 1, NULL), EMQ_OK);
    }
    ck_assert_int_eq(emq_list_trim(st, K("t"), 1, -2), EMQ_OK);
    struct vals c = list_all(K("t"));
    ck_assert_int_eq(c.n, 3);
    ck_assert_str_eq(c.v[0], "b");
    ck_assert_str_eq(c.v[2], "d");
    ck_assert_int_eq(emq_list_trim(st, K("t"), 5, 10), EMQ_OK);
    ck_assert_int_eq(type_of(K("t")), EMQ_T_NONE);
}
END_TEST

START_TEST(list_rem_pos_pop_rotate)
{
    const char *vs[] = {"x", "g", "x", "h", "x"};
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(emq_list_push(st, K("r"), 1, vs[i], 1, NULL), EMQ_OK);
    int64_t pos, rm;
    ck_assert_int_eq(emq_list_pos(st, K("r"), "h", 1, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 3);
    ck_assert_int_eq(emq_list_pos(st, K("r"), "q", 1, &pos), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_list_rem(st, K("r"), -1, "x", 1, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 1);
    struct vals c = list_all(K("r"));
    ck_assert_int_eq(c.n, 4);
    ck_assert_str_eq(c.v[3], "h");
    ck_assert_int_eq(emq_list_rem(st, K("r"), 0, "x", 1, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 2);
    emq_buf out = {0};
    ck_assert_int_eq(emq_list_rotate(st, K("r"), &out), EMQ_OK);
    ck_assert_str_eq((char *)out.p, "g");
    c = list_all(K("r"));
    ck_assert_str_eq(c.v[0], "h");
    ck_assert_str_eq(c.v[1], "g");
    ck_assert_int_eq(emq_list_pop(st, K("r"), 1, &out), EMQ_OK);
    ck_assert_str_eq((char *)out.p, "g");
    ck_assert_int_eq(emq_list_pop(st, K("r"), 0, &out), EMQ_OK);
    ck_assert_int_eq(type_of(K("r")), EMQ_T_NONE);
    ck_assert_int_eq(emq_list_rotate(st, K("r"), &out), EMQ_NOTFOUND);
    emq_buf_free(&out);
}
END_TEST

/* LPOS and LREM-all answer by list order across both ends (positions
 * below 0 after left pushes), membership without the index, an empty
 * value, and the push length only when asked. */
START_TEST(list_pos_and_rem_all_across_both_ends)
{
    int64_t pos, rm, len = -1;
    ck_assert_int_eq(emq_list_push(st, K("b"), 1, "m", 1, &len), EMQ_OK);
    ck_assert_int_eq(len, 1);
    ck_assert_int_eq(emq_list_push(st, K("b"), 1, "", 0, &len), EMQ_OK);
    ck_assert_int_eq(len, 2);
    ck_assert_int_eq(emq_list_push(st, K("b"), 0, "k", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("b"), 0, "m", 1, NULL), EMQ_OK);
    /* m k m "" */
    ck_assert_int_eq(emq_list_pos(st, K("b"), "m", 1, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 0);
    ck_assert_int_eq(emq_list_pos(st, K("b"), "", 0, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 3);
    ck_assert_int_eq(emq_list_pos(st, K("b"), "k", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_pos(st, K("b"), "z", 1, NULL), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_list_rem(st, K("b"), 0, "m", 1, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 2);
    struct vals c = list_all(K("b"));
    ck_assert_int_eq(c.n, 2);
    ck_assert_str_eq(c.v[0], "k");
    ck_assert_int_eq(emq_list_pos(st, K("b"), "", 0, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 1);
    ck_assert_int_eq(emq_list_rem(st, K("b"), 0, "q", 1, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 0);
    ck_assert_int_eq(emq_list_rem(st, K("b"), 0, "k", 1, &rm), EMQ_OK);
    ck_assert_int_eq(emq_list_rem(st, K("b"), 0, "", 0, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 1);
    ck_assert_int_eq(type_of(K("b")), EMQ_T_NONE);
    ck_assert_int_eq(emq_list_pos(st, K("b"), "k", 1, NULL), EMQ_NOTFOUND);
}
END_TEST

/* Values of up to 32 bytes are found through the index list_val (schema
 * 8), longer ones by a walk: both answer by list order, binary-safe, at the
 * boundary (a 33-byte value whose first 32 bytes are a 32-byte value of
 * the list is another value), and only within their own list. */
START_TEST(list_pos_and_rem_short_and_long_values_alike)
{
    unsigned char v32[32], v33[33], v40[40];
    int64_t pos, rm;
    memset(v32, 'a', sizeof v32);
    v32[5] = 0;                            /* binary: a NUL inside */
    memcpy(v33, v32, sizeof v32);
    v33[32] = 'z';
    memset(v40, 'b', sizeof v40);
    /* another list holding the same values must not answer for this one */
    ck_assert_int_eq(emq_list_push(st, K("o"), 1, v32, 32, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("o"), 1, v33, 33, NULL), EMQ_OK);
    /* v40 v33 v32 g v32 v33 (left pushes below position 0) */
    ck_assert_int_eq(emq_list_push(st, K("l"), 1, "g", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 1, v32, 32, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 1, v33, 33, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 0, v32, 32, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 0, v33, 33, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 0, v40, 40, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v32, 32, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 2);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v33, 33, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 1);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v40, 40, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 0);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v32, 31, NULL), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v40, 39, NULL), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v33, 33, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_rem(st, K("l"), 0, v32, 32, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 2);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v32, 32, NULL), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v33, 33, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 1);
    ck_assert_int_eq(emq_list_rem(st, K("l"), 0, v33, 33, &rm), EMQ_OK);
    ck_assert_int_eq(rm, 2);
    ck_assert_int_eq(emq_list_pos(st, K("l"), "g", 1, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 1);
    /* the other list kept its rows */
    ck_assert_int_eq(emq_list_pos(st, K("o"), v32, 32, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 0);
    ck_assert_int_eq(emq_list_pos(st, K("o"), v33, 33, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 1);
    /* a rotation moves a short value and the index follows it */
    emq_buf out = {0};
    ck_assert_int_eq(emq_list_rotate(st, K("l"), &out), EMQ_OK);
    ck_assert_int_eq(emq_list_pos(st, K("l"), v40, 40, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 1);
    ck_assert_int_eq(emq_list_rotate(st, K("l"), &out), EMQ_OK);
    ck_assert_int_eq(emq_list_pos(st, K("l"), "g", 1, &pos), EMQ_OK);
    ck_assert_int_eq(pos, 1);
    emq_buf_free(&out);
}
END_TEST

/* ---------------------------------------------------------------- sets */

START_TEST(set_add_rem_members_in_byte_order)
{
    int ch, is;
    ck_assert_int_eq(emq_sset_add(st, K("s"), "b", 1, &ch), EMQ_OK);
    ck_assert_int_eq(ch, 1);
    ck_assert_int_eq(emq_sset_add(st, K("s"), "b", 1, &ch), EMQ_OK);
    ck_assert_int_eq(ch, 0);
    ck_assert_int_eq(emq_sset_add(st, K("s"), "a", 1, &ch), EMQ_OK);
    ck_assert_int_eq(emq_sset_ismember(st, K("s"), "a", 1, &is), EMQ_OK);
    ck_assert_int_eq(is, 1);
    ck_assert_int_eq(emq_sset_ismember(st, K("s"), "z", 1, &is), EMQ_OK);
    ck_assert_int_eq(is, 0);
    struct vals c = {0};
    ck_assert_int_eq(emq_sset_members(st, K("s"), collect_val, &c), EMQ_OK);
    ck_assert_int_eq(c.n, 2);
    ck_assert_str_eq(c.v[0], "a");
    int64_t n;
    ck_assert_int_eq(emq_sset_card(st, K("s"), &n), EMQ_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(emq_sset_rem(st, K("s"), "a", 1, &ch), EMQ_OK);
    ck_assert_int_eq(emq_sset_rem(st, K("s"), "b", 1, &ch), EMQ_OK);
    ck_assert_int_eq(type_of(K("s")), EMQ_T_NONE);
}
END_TEST

struct keys {
    int n;
    char k[16][32];
    int t[16];
};

static int collect_key(void *ctx, const unsigned char *k, size_t n, int t)
{
    struct keys *c = ctx;
    memcpy(c->k[c->n], k, n);
    c->k[c->n][n] = 0;
    c->t[c->n++] = t;
    return 0;
}

START_TEST(emptied_aggregates_are_absent_to_every_command)
{
    int rm, done, created, del;
    emq_buf b = {0};
    /* zset, list and set emptied by their own removals */
    ck_assert_int_eq(emq_zset_add(st, K("z"), "m", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_rem(st, K("z"), "m", 1, &rm), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 1, "v", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_pop(st, K("l"), 0, &b), EMQ_OK);
    ck_assert_int_eq(emq_list_pop(st, K("l"), 0, &b), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_sset_add(st, K("s"), "v", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_sset_rem(st, K("s"), "v", 1, &rm), EMQ_OK);
    ck_assert_int_eq(type_of(K("z")), EMQ_T_NONE);
    ck_assert_int_eq(type_of(K("l")), EMQ_T_NONE);
    ck_assert_int_eq(type_of(K("s")), EMQ_T_NONE);
    struct keys c = {0};
    ck_assert_int_eq(emq_key_scan(st, "", 0, collect_key, &c), EMQ_OK);
    ck_assert_int_eq(c.n, 0);
    /* DEL says nothing was there; other types may take the names. */
    ck_assert_int_eq(emq_key_del(st, K("z"), &del), EMQ_OK);
    ck_assert_int_eq(del, 0);
    ck_assert_int_eq(emq_str_set(st, K("l"), "x", 1, -1, EMQ_SET_NX, &done),
                     EMQ_OK);
    ck_assert_int_eq(done, 1);
    emq_bytes fv[] = {{"f", 1}, {"v", 1}};
    ck_assert_int_eq(emq_hash_create(st, K("s"), fv, 1, &created), EMQ_OK);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(type_of(K("s")), EMQ_T_HASH);
    int64_t n;
    ck_assert_int_eq(emq_sset_card(st, K("s"), &n), EMQ_EWRONGTYPE);
    /* Refilling an emptied set works and shows the new members only. */
    ck_assert_int_eq(emq_zset_add(st, K("z2"), "a", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_popmin(st, K("z2"), &b, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("z2"), "b", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_card(st, K("z2"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(type_of(K("z2")), EMQ_T_ZSET);
    emq_buf_free(&b);
}
END_TEST

/* ----------------------------------------------------------- semantics */

START_TEST(wrongtype_on_every_family)
{
    emq_buf b = {0};
    int64_t n;
    ck_assert_int_eq(emq_zset_add(st, K("z"), "m", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(st, K("z"), K("f"), &b), EMQ_EWRONGTYPE);
    ck_assert_str_eq(emq_store_errmsg(st),
                     "WRONGTYPE Operation against a key holding the wrong "
                     "kind of value");
    ck_assert_int_eq(emq_list_push(st, K("z"), 1, "v", 1, NULL),
                     EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_sset_add(st, K("z"), "v", 1, NULL), EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_str_get(st, K("z"), &b), EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_str_incrby(st, K("z"), 1, &n), EMQ_EWRONGTYPE);
    emq_bytes fv[] = {{"f", 1}, {"v", 1}};
    ck_assert_int_eq(emq_str_set(st, K("s"), "v", 1, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_set(st, K("s"), fv, 1, NULL), EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_zset_add(st, K("s"), "m", 1, 0, NULL),
                     EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_zset_card(st, K("s"), &n), EMQ_EWRONGTYPE);
    /* SET overwrites any type, as Valkey's SET does. */
    ck_assert_int_eq(emq_str_set(st, K("z"), "v", 1, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(type_of(K("z")), EMQ_T_STRING);
    emq_buf_free(&b);
}
END_TEST

START_TEST(binary_safe_keys_fields_members_values)
{
    const char key[] = "k\0ey\xff";
    const char fld[] = "f\0\x01";
    const char val[] = "\0\0v\0";
    emq_bytes fv[] = {{fld, 3}, {val, 4}};
    emq_buf b = {0};
    ck_assert_int_eq(emq_hash_set(st, key, 5, fv, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(st, key, 5, fld, 3, &b), EMQ_OK);
    ck_assert_int_eq(b.len, 4);
    ck_assert_mem_eq(b.p, val, 4);
    /* The key with and without the trailing byte are different keys. */
    ck_assert_int_eq(type_of(key, 4), EMQ_T_NONE);
    ck_assert_int_eq(emq_str_set(st, "s\0", 2, "", 0, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_str_get(st, "s\0", 2, &b), EMQ_OK);
    ck_assert_int_eq(b.len, 0);
    ck_assert_int_eq(type_of("s", 1), EMQ_T_NONE);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "", 0, 0, NULL), EMQ_OK);
    double s;
    ck_assert_int_eq(emq_zset_score(st, K("z"), "", 0, &s), EMQ_OK);
    emq_buf_free(&b);
}
END_TEST

START_TEST(key_scan_by_prefix_in_byte_order)
{
    ck_assert_int_eq(emq_str_set(st, K("emq:{b}:x"), "1", 1, -1, 0, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("emq:{a}:pending"), "m", 1, 0, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_str_set(st, K("{emq}:version"), "v", 1, -1, 0, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_str_set(st, K("emq:{a}:gone"), "1", 1, 10, 0, NULL),
                     EMQ_OK); /* expired at now = 1000 */
    struct keys c = {0};
    ck_assert_int_eq(emq_key_scan(st, K("emq:"), collect_key, &c), EMQ_OK);
    ck_assert_int_eq(c.n, 2);
    ck_assert_str_eq(c.k[0], "emq:{a}:pending");
    ck_assert_int_eq(c.t[0], EMQ_T_ZSET);
    ck_assert_str_eq(c.k[1], "emq:{b}:x");
    struct keys all = {0};
    ck_assert_int_eq(emq_key_scan(st, "", 0, collect_key, &all), EMQ_OK);
    ck_assert_int_eq(all.n, 3);
    ck_assert_str_eq(all.k[2], "{emq}:version");
}
END_TEST

START_TEST(rollback_leaves_nothing_behind)
{
    ck_assert_int_eq(emq_zset_add(st, K("keep"), "m", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 1000), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("z"), "m", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("l"), 1, "v", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_rem(st, K("keep"), "m", 1, NULL), EMQ_OK);
    /* Reads inside the transaction see its own writes. */
    ck_assert_int_eq(type_of(K("z")), EMQ_T_ZSET);
    ck_assert_int_eq(type_of(K("keep")), EMQ_T_NONE);
    emq_store_rollback(st);
    ck_assert_int_eq(emq_store_begin(st, 1, 1000), EMQ_OK);
    ck_assert_int_eq(type_of(K("z")), EMQ_T_NONE);
    ck_assert_int_eq(type_of(K("l")), EMQ_T_NONE);
    ck_assert_int_eq(type_of(K("keep")), EMQ_T_ZSET);
}
END_TEST

/* A transaction SQLite still holds when the store thinks none is open (a
 * ROLLBACK that failed) is ended by the next begin, writes and all. */
START_TEST(begin_ends_a_transaction_a_failed_rollback_left_open)
{
    sqlite3 *db = emq_store_sqlite(st);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(sqlite3_exec(db, "BEGIN; INSERT INTO kv (name, type, "
                                  "kid) VALUES (x'6c656674', 1, 424242)",
                                  NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_get_autocommit(db), 0);
    ck_assert_int_eq(emq_store_begin(st, 1, 1000), EMQ_OK);
    ck_assert_int_eq(type_of(K("left")), EMQ_T_NONE);
    ck_assert_int_eq(emq_str_set(st, K("k"), "v", 1, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(sqlite3_get_autocommit(db), 1);
    ck_assert_int_eq(emq_store_begin(st, 0, 1000), EMQ_OK);
    ck_assert_int_eq(type_of(K("k")), EMQ_T_STRING);
}
END_TEST

/* ------------------------------------------------------------- files */

static void tmp_setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/emqstoreXXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static char *path_in(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)len + 1);
    ck_assert_int_eq(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return p;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void assert_refused_untouched(const char *path, int want)
{
    size_t n0, n1;
    unsigned char *before = slurp(path, &n0);
    const char *sides[] = {"-wal", "-shm", "-emqlock"};
    int existed[3];
    for (int i = 0; i < 3; i++) {
        char side[160];
        snprintf(side, sizeof side, "%s%s", path, sides[i]);
        existed[i] = access(side, F_OK) == 0;
    }
    emq_store_opts o = opts();
    emq_store *s = NULL;
    char err[256] = "";
    ck_assert_int_eq(emq_store_open(path, &o, &s, err, sizeof err), want);
    ck_assert_ptr_null(s);
    ck_assert(err[0] != '\0');
    unsigned char *after = slurp(path, &n1);
    ck_assert_int_eq(n0, n1);
    ck_assert(memcmp(before, after, n0) == 0);
    for (int i = 0; i < 3; i++) {
        char side[160];
        snprintf(side, sizeof side, "%s%s", path, sides[i]);
        ck_assert_msg(existed[i] || access(side, F_OK) != 0,
                      "%s was created", side);
    }
    free(before);
    free(after);
}

/* The opener's dictionary (store.h): its words are stored as one-byte
 * tokens; a file read without the dictionary that wrote it answers
 * EMQ_ECORRUPT for the hash (and the handle stays usable); a dictionary
 * that extends it reads it as written. */
START_TEST(hash_dictionary_words_are_tokens_and_need_their_dictionary)
{
    static const emq_hash_word f1[] = {{"alpha", 5}, {"beta", 4}},
                               v1[] = {{"omega", 5}};
    const emq_hash_dict small = {f1, v1, 1, 1}, longer = {f1, v1, 2, 1};
    emq_store_opts o = opts();
    emq_store *s;
    const char *p = path_in("dict.db");
    o.dict = &small;
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(s, 1, 0), EMQ_OK);
    emq_bytes fv[] = {{"alpha", 5}, {"omega", 5}, {"x", 1}, {"omega", 5}};
    ck_assert_int_eq(emq_hash_set(s, K("h"), fv, 2, NULL), EMQ_OK);
    ck_assert_int_eq(emq_str_set(s, K("s"), "v", 1, -1, 0, NULL), EMQ_OK);
    /* a hash of tokened words whose every field expired is absent */
    int done = 0, type = -1;
    ck_assert_int_eq(emq_hash_set(s, K("e"), fv, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_expire_at(s, K("e"), K("alpha"), 10, &done),
                     EMQ_OK);
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(emq_store_commit(s), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(s, 0, 20), EMQ_OK);
    ck_assert_int_eq(emq_key_type(s, K("e"), &type), EMQ_OK);
    ck_assert_int_eq(type, EMQ_T_NONE);
    emq_store_rollback(s);
    emq_store_close(s);

    /* Two tokened sides take a varint each: 1+1, then 1+1 ("x")+1. */
    sqlite3 *raw;
    sqlite3_stmt *q;
    ck_assert_int_eq(sqlite3_open_v2(p, &raw, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(raw, "SELECT max(length(val)) FROM kv "
                                        "WHERE type = 2", -1, &q, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    ck_assert_int_eq(sqlite3_column_int(q, 0), 5);
    sqlite3_finalize(q);
    sqlite3_close(raw);

    emq_buf b = {0};
    o.dict = NULL;
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(s, 0, 0), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(s, K("h"), K("x"), &b), EMQ_ECORRUPT);
    ck_assert_int_eq(emq_str_get(s, K("s"), &b), EMQ_OK);
    ck_assert_mem_eq(b.p, "v", 1);
    emq_store_rollback(s);
    emq_store_close(s);

    o.dict = &longer;
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(s, 0, 0), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(s, K("h"), K("alpha"), &b), EMQ_OK);
    ck_assert_int_eq(b.len, 5);
    ck_assert_mem_eq(b.p, "omega", 5);
    ck_assert_int_eq(emq_hash_get(s, K("h"), K("x"), &b), EMQ_OK);
    ck_assert_mem_eq(b.p, "omega", 5);
    emq_store_rollback(s);
    emq_store_close(s);
    emq_buf_free(&b);
}
END_TEST

START_TEST(persistence_across_close_and_reopen)
{
    emq_store_opts o = opts();
    emq_store *s;
    const char *p = path_in("p.db");
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(s, 1, 0), EMQ_OK);
    emq_bytes fv[] = {{"payload", 7}, {"a\0b", 3}};
    ck_assert_int_eq(emq_hash_set(s, K("h"), fv, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(s, K("z"), "m", 1, -3, NULL), EMQ_OK);
    ck_assert_int_eq(emq_list_push(s, K("l"), 1, "v", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_sset_add(s, K("s"), "v", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(s), EMQ_OK);
    emq_store_close(s);

    o.synchronous = EMQ_SYNC_FULL;
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(s, 0, 0), EMQ_OK);
    emq_buf b = {0};
    ck_assert_int_eq(emq_hash_get(s, K("h"), K("payload"), &b), EMQ_OK);
    ck_assert_int_eq(b.len, 3);
    ck_assert_mem_eq(b.p, "a\0b", 3);
    double sc;
    ck_assert_int_eq(emq_zset_score(s, K("z"), "m", 1, &sc), EMQ_OK);
    ck_assert(sc == -3);
    int64_t n;
    ck_assert_int_eq(emq_list_len(s, K("l"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_sset_card(s, K("s"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    /* The pragmas we promise are in force. */
    sqlite3_stmt *q;
    ck_assert_int_eq(sqlite3_prepare_v2(emq_store_sqlite(s),
                                        "PRAGMA journal_mode", -1, &q, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    ck_assert_int_eq(sqlite3_prepare_v2(emq_store_sqlite(s),
                                        "PRAGMA synchronous", -1, &q, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    /* FULL on a shared handle is group commit (storage/gsync.c): SQLite
     * runs at NORMAL and the store syncs the -wal after each commit. */
    ck_assert(emq_gsync_on(s));
    ck_assert_int_eq(sqlite3_column_int(q, 0), 1); /* NORMAL */
    sqlite3_finalize(q);
    emq_store_rollback(s);
    emq_store_close(s);
    /* An exclusive handle keeps SQLite's own FULL. */
    o.exclusive = 1;
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    ck_assert(!emq_gsync_on(s));
    ck_assert_int_eq(sqlite3_prepare_v2(emq_store_sqlite(s),
                                        "PRAGMA synchronous", -1, &q, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    ck_assert_int_eq(sqlite3_column_int(q, 0), 2); /* FULL */
    sqlite3_finalize(q);
    emq_store_close(s);
    emq_buf_free(&b);
}
END_TEST

START_TEST(registration_cache_follows_other_connections_and_rollback)
{
    const char *p = path_in("two.db");
    emq_store_opts o = opts();
    emq_store *a, *b;
    int64_t n;
    int del;
    ck_assert_int_eq(emq_store_open(p, &o, &a, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_open(p, &o, &b, NULL, 0), EMQ_OK);
    /* a caches z's registration */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "a1", 2, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* b deletes z and makes a new z (a new kid) */
    ck_assert_int_eq(emq_store_begin(b, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_key_del(b, K("z"), &del), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(b, K("z"), "b1", 2, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);
    /* a must write into b's z, not its remembered one */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "a2", 2, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(b, 0, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_card(b, K("z"), &n), EMQ_OK);
    ck_assert_int_eq(n, 2); /* b1 and a2 */
    emq_store_rollback(b);
    /* a registration created in a rolled-back transaction is forgotten */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("y"), "m", 1, 0, NULL), EMQ_OK);
    emq_store_rollback(a);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("y"), "m", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_card(a, K("y"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(b, 0, 0), EMQ_OK);
    int t;
    ck_assert_int_eq(emq_key_type(b, K("y"), &t), EMQ_OK);
    ck_assert_int_eq(t, EMQ_T_ZSET);
    emq_store_rollback(b);
    emq_store_close(a);
    emq_store_close(b);
}
END_TEST

/* card and the score of `m` in zset `key` of handle h (its own read). */
static void zset_is(emq_store *h, const char *key, const char *m,
                    int64_t card, double score)
{
    int64_t n;
    double sc = -1;
    ck_assert_int_eq(emq_zset_card(h, key, strlen(key), &n), EMQ_OK);
    ck_assert_int_eq(n, card);
    ck_assert_int_eq(emq_zset_score(h, key, strlen(key), m, strlen(m), &sc),
                     EMQ_OK);
    ck_assert(sc == score);
}

/*
 * A score-0 add skips the member-index probe while the handle knows the
 * set holds no other score (zset.c, flat). The knowledge must go when a
 * member gets another score — by this handle in the same or a later
 * transaction, by another connection, or back through a rollback — and a
 * score-0 add of such a member must still move it, as ZADD does.
 */
START_TEST(a_score_0_add_moves_a_member_whatever_the_handle_believed)
{
    const char *p = path_in("flat.db");
    emq_store_opts o = opts();
    emq_store *a, *b;
    int added, rem;
    ck_assert_int_eq(emq_store_open(p, &o, &a, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_open(p, &o, &b, NULL, 0), EMQ_OK);
    /* a learns z is flat, then puts x at 5 and moves it back, one tx */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m0", 2, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m1", 2, 0, &added), EMQ_OK);
    ck_assert_int_eq(added, 1);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "x", 1, 5, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "x", 1, 0, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    zset_is(a, "z", "x", 3, 0);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* the next transaction of a: flat again (asked anew), then y at 7 */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m2", 2, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "y", 1, 7, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "y", 1, 0, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    zset_is(a, "z", "y", 5, 0);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* a believes z flat; b puts w at 3; a's score-0 add of w moves it */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m3", 2, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(b, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(b, K("z"), "w", 1, 3, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "w", 1, 0, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    zset_is(a, "z", "w", 7, 0);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* b puts v at 9; a removes it, learns z flat, rolls back: v is back */
    ck_assert_int_eq(emq_store_begin(b, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(b, K("z"), "v", 1, 9, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_rem(a, K("z"), "v", 1, &rem), EMQ_OK);
    ck_assert_int_eq(rem, 1);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m4", 2, 0, NULL), EMQ_OK);
    emq_store_rollback(a);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "v", 1, 0, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    zset_is(a, "z", "v", 8, 0);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(b, 0, 0), EMQ_OK);
    zset_is(b, "z", "v", 8, 0);
    emq_store_rollback(b);
    emq_store_close(a);
    emq_store_close(b);
}
END_TEST

/* The times the handle ran its prepared statement whose SQL holds `what`
 * (0 when it never prepared one). */
static int runs_of(emq_store *h, const char *what)
{
    sqlite3 *db = emq_store_sqlite(h);
    for (sqlite3_stmt *s = sqlite3_next_stmt(db, NULL); s;
         s = sqlite3_next_stmt(db, s))
        if (strstr(sqlite3_sql(s), what))
            return sqlite3_stmt_status(s, SQLITE_STMTSTATUS_RUN, 0);
    return 0;
}

/*
 * The mirror of the flat rule: a ZADD at a score other than 0 skips looking
 * for the member at 0 while the handle knows the set holds no such score
 * (zset.c, none_at). The knowledge must go when a member gets the score 0
 * — by this handle in the same or a later transaction, by another
 * connection, or back through a rollback — and the add must still move it.
 */
START_TEST(a_nonzero_add_moves_a_member_whatever_the_handle_believed)
{
    const char *p = path_in("nozero.db");
    emq_store_opts o = opts();
    emq_store *a, *b;
    int added, rem;
    ck_assert_int_eq(emq_store_open(p, &o, &a, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_open(p, &o, &b, NULL, 0), EMQ_OK);
    /* a learns z holds no 0, then puts x at 0 and moves it to 4, one tx */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m0", 2, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m1", 2, 2, &added), EMQ_OK);
    ck_assert_int_eq(added, 1);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "x", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "x", 1, 4, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    zset_is(a, "z", "x", 3, 4);
    /* the same member at another score other than 0, and at its own */
    ck_assert_int_eq(emq_zset_add(a, K("z"), "x", 1, 6, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "x", 1, 6, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    zset_is(a, "z", "x", 3, 6);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* b puts w at 0; a (which believed z had no 0) adds w at 3: moved */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m2", 2, 5, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(b, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(b, K("z"), "w", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "w", 1, 3, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    zset_is(a, "z", "w", 5, 3);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* b puts v at 0; a removes it, relearns, rolls back: v is back at 0 */
    ck_assert_int_eq(emq_store_begin(b, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(b, K("z"), "v", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_rem(a, K("z"), "v", 1, &rem), EMQ_OK);
    ck_assert_int_eq(rem, 1);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "m3", 2, 8, NULL), EMQ_OK);
    emq_store_rollback(a);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "v", 1, 2, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    zset_is(a, "z", "v", 6, 2);
    /* a removal finds a member at either kind of score */
    ck_assert_int_eq(emq_zset_add(a, K("z"), "u", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_zset_rem(a, K("z"), "u", 1, &rem), EMQ_OK);
    ck_assert_int_eq(rem, 1);
    ck_assert_int_eq(emq_zset_rem(a, K("z"), "v", 1, &rem), EMQ_OK);
    ck_assert_int_eq(rem, 1);
    ck_assert_int_eq(emq_zset_rem(a, K("z"), "v", 1, &rem), EMQ_OK);
    ck_assert_int_eq(rem, 0);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(b, 0, 0), EMQ_OK);
    zset_is(b, "z", "w", 5, 3);
    emq_store_rollback(b);
    emq_store_close(a);
    emq_store_close(b);
}
END_TEST

/*
 * A sorted set keeps its members at scores other than 0 out of the member
 * index while it has at most EMQ_Z_SMALL of them (zset.c, shape), then
 * their rows join it, and the set turns small again when the last of them
 * goes. Every ZADD, ZSCORE and ZREM answers the same in either shape, also
 * from a handle whose knowledge of the shape another connection outdated.
 */
START_TEST(small_sets_grow_into_the_member_index_and_back)
{
    const char *p = path_in("small.db");
    emq_store_opts o = opts();
    emq_store *a, *b;
    char m[16];
    int added, rem, i;
    int64_t n;
    double sc;
    ck_assert_int_eq(emq_store_open(p, &o, &a, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_open(p, &o, &b, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(a, K("z"), "zero", 4, 0, NULL), EMQ_OK);
    int idx = runs_of(a, "ix = 1 WHERE kid = ?1 AND score > 0");
    for (i = 0; i < 40; i++) { /* small up to EMQ_Z_SMALL, then big */
        snprintf(m, sizeof m, "m%02d", i);
        ck_assert_int_eq(emq_zset_add(a, m, 3, m, 3, i % 2 ? i : -i - 1,
                                      NULL), EMQ_OK);
        ck_assert_int_eq(emq_zset_add(a, K("z"), m, 3, i + 1, &added),
                         EMQ_OK);
        ck_assert_int_eq(added, 1);
        /* a move within the other scores, and one to 0 and back */
        ck_assert_int_eq(emq_zset_add(a, K("z"), m, 3, -(i + 1), &added),
                         EMQ_OK);
        ck_assert_int_eq(added, 0);
        ck_assert_int_eq(emq_zset_add(a, K("z"), m, 3, 0, &added), EMQ_OK);
        ck_assert_int_eq(added, 0);
        ck_assert_int_eq(emq_zset_add(a, K("z"), m, 3, i + 1, &added),
                         EMQ_OK);
        ck_assert_int_eq(added, 0);
        ck_assert_int_eq(emq_zset_card(a, K("z"), &n), EMQ_OK);
        ck_assert_int_eq(n, i + 2);
    }
    /* it turned big once, at the member past EMQ_Z_SMALL */
    ck_assert_int_eq(runs_of(a, "ix = 1 WHERE kid = ?1 AND score > 0"),
                     idx + 1);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* b (no knowledge) reads and removes through the index */
    ck_assert_int_eq(emq_store_begin(b, 1, 0), EMQ_OK);
    for (i = 0; i < 40; i++) {
        snprintf(m, sizeof m, "m%02d", i);
        ck_assert_int_eq(emq_zset_score(b, K("z"), m, 3, &sc), EMQ_OK);
        ck_assert(sc == i + 1);
    }
    ck_assert_int_eq(emq_zset_rem(b, K("z"), "m05", 3, &rem), EMQ_OK);
    ck_assert_int_eq(rem, 1);
    ck_assert_int_eq(emq_zset_rem(b, K("z"), "m05", 3, &rem), EMQ_OK);
    ck_assert_int_eq(rem, 0);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);
    /* a (its knowledge outdated by b) removes the rest of the other
     * scores: the set is small again, and its zero member stays */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    for (i = 0; i < 40; i++) {
        snprintf(m, sizeof m, "m%02d", i);
        ck_assert_int_eq(emq_zset_rem(a, K("z"), m, 3, &rem), EMQ_OK);
        ck_assert_int_eq(rem, i != 5);
    }
    zset_is(a, "z", "zero", 1, 0);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(b, 1, 0), EMQ_OK);
    int small = runs_of(b, "score > 0 AND member = ?2");
    ck_assert_int_eq(emq_zset_add(b, K("z"), "x", 1, 7, &added), EMQ_OK);
    ck_assert_int_eq(added, 1);
    ck_assert_int_eq(emq_zset_add(b, K("z"), "x", 1, 8, &added), EMQ_OK);
    ck_assert_int_eq(added, 0);
    ck_assert_int_gt(runs_of(b, "score > 0 AND member = ?2"), small);
    zset_is(b, "z", "x", 2, 8);
    ck_assert_int_eq(emq_zset_rem(b, K("z"), "x", 1, &rem), EMQ_OK);
    ck_assert_int_eq(rem, 1);
    zset_is(b, "z", "zero", 1, 0);
    /* the sets named after the members hold one each */
    ck_assert_int_eq(emq_zset_card(b, K("m07"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);
    emq_store_close(a);
    emq_store_close(b);
}
END_TEST

/*
 * Hash rows carried past a commit (hash.c) are what the file holds: another
 * connection's write, a rolled-back one, a key's expiry and a field's
 * expiry all show in the next transaction of the handle that carried them.
 */
START_TEST(carried_hash_rows_follow_other_connections_rollback_and_expiry)
{
    const char *p = path_in("carry.db");
    emq_store_opts o = opts();
    emq_store *a, *b;
    emq_buf v = {0};
    int64_t n;
    int is;
    ck_assert_int_eq(emq_store_open(p, &o, &a, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_open(p, &o, &b, NULL, 0), EMQ_OK);
    /* a knows m absent and counts c to 1; b writes both */
    ck_assert_int_eq(emq_store_begin(a, 1, 100), EMQ_OK);
    ck_assert_int_eq(emq_hash_exists(a, K("m"), K("paused"), &is), EMQ_OK);
    ck_assert_int_eq(is, 0);
    ck_assert_int_eq(emq_hash_incrby(a, K("c"), K("n"), 1, &n), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(b, 1, 100), EMQ_OK);
    emq_bytes fv[] = {{"paused", 6}, {"1", 1}};
    ck_assert_int_eq(emq_hash_set(b, K("m"), fv, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_incrby(b, K("c"), K("n"), 10, &n), EMQ_OK);
    ck_assert_int_eq(n, 11);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 100), EMQ_OK);
    ck_assert_int_eq(emq_hash_exists(a, K("m"), K("paused"), &is), EMQ_OK);
    ck_assert_int_eq(is, 1);
    ck_assert_int_eq(emq_hash_incrby(a, K("c"), K("n"), 1, &n), EMQ_OK);
    ck_assert_int_eq(n, 12);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* rows a wrote in a rolled-back transaction are not believed after */
    ck_assert_int_eq(emq_store_begin(a, 1, 100), EMQ_OK);
    ck_assert_int_eq(emq_hash_incrby(a, K("c"), K("n"), 5, &n), EMQ_OK);
    ck_assert_int_eq(emq_hash_del(a, K("m"), K("paused"), &is), EMQ_OK);
    emq_store_rollback(a);
    ck_assert_int_eq(emq_store_begin(a, 1, 100), EMQ_OK);
    ck_assert_int_eq(emq_hash_incrby(a, K("c"), K("n"), 0, &n), EMQ_OK);
    ck_assert_int_eq(n, 12);
    ck_assert_int_eq(emq_hash_exists(a, K("m"), K("paused"), &is), EMQ_OK);
    ck_assert_int_eq(is, 1);
    /* a key that expires, and a field that does, read before and after */
    emq_bytes kf[] = {{"f", 1}, {"v", 1}, {"g", 1}, {"w", 1}};
    ck_assert_int_eq(emq_hash_set(a, K("k"), kf, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_key_expire_at(a, K("k"), 200), EMQ_OK);
    ck_assert_int_eq(emq_hash_set(a, K("h"), kf, 2, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_expire_at(a, K("h"), K("f"), 200, &is), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 150), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(a, K("k"), K("f"), &v), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(a, K("h"), K("f"), &v), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 250), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(a, K("k"), K("f"), &v), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_hash_get(a, K("h"), K("f"), &v), EMQ_NOTFOUND);
    ck_assert_int_eq(emq_hash_len(a, K("h"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* a small row is read once across transactions, a big one again */
    static char big[EMQ_HCARRY_MAX + 1];
    memset(big, 'x', sizeof big);
    emq_bytes bf[] = {{"f", 1}, {big, sizeof big}};
    ck_assert_int_eq(emq_store_begin(a, 1, 300), EMQ_OK);
    ck_assert_int_eq(emq_hash_set(a, K("big"), bf, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_set(a, K("small"), kf, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(a, K("big"), K("f"), &v), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    int gets = runs_of(a, "SELECT type, kid, expire, val FROM kv");
    ck_assert_int_eq(emq_store_begin(a, 1, 300), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(a, K("small"), K("f"), &v), EMQ_OK);
    ck_assert_int_eq(runs_of(a, "SELECT type, kid, expire, val FROM kv"),
                     gets);
    ck_assert_int_eq(emq_hash_get(a, K("big"), K("f"), &v), EMQ_OK);
    ck_assert_int_eq(v.len, sizeof big);
    ck_assert_int_eq(runs_of(a, "SELECT type, kid, expire, val FROM kv"),
                     gets + 1);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    emq_buf_free(&v);
    emq_store_close(a);
    emq_store_close(b);
}
END_TEST

/*
 * emq_hash_apply on a row the handle has not cached runs as one statement
 * (hash.c, S_KEY_STEPS) and must answer as the two-statement path: the new
 * values, a failed step with nothing written, and the rows that statement
 * leaves to the long way (an absent key, another type, a key with an
 * expiry, a hash whose fields all expired).
 */
START_TEST(hash_steps_as_one_statement_answer_as_the_long_way)
{
    const char *p = path_in("steps.db");
    emq_store_opts o = opts();
    emq_store *a, *b;
    emq_buf pay = {0}, v = {0};
    int64_t n;
    int existed, one, is;
    ck_assert_int_eq(emq_store_open(p, &o, &a, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_open(p, &o, &b, NULL, 0), EMQ_OK);
    /* b writes the rows (a caches none of them) */
    ck_assert_int_eq(emq_store_begin(b, 1, 100), EMQ_OK);
    emq_bytes job[] = {{"state", 5}, {"pending", 7}, {"payload", 7},
                       {"p\0q", 3}};
    ck_assert_int_eq(emq_hash_set(b, K("j"), job, 2, NULL), EMQ_OK);
    emq_bytes txt[] = {{"n", 1}, {"x", 1}};
    ck_assert_int_eq(emq_hash_set(b, K("t"), txt, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_set(b, K("e"), txt, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_key_expire_at(b, K("e"), 1000), EMQ_OK);
    ck_assert_int_eq(emq_hash_set(b, K("g"), txt, 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_hash_expire_at(b, K("g"), K("n"), 150, &is), EMQ_OK);
    ck_assert_int_eq(emq_str_set(b, K("s"), "1", 1, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(b), EMQ_OK);

    ck_assert_int_eq(emq_store_begin(a, 1, 200), EMQ_OK);
    one = runs_of(a, "emq_hash_steps");
    emq_hop ops[3] = {
        {.op = EMQ_HOP_INCR, .f = {"attempts", 8}, .by = 1},
        {.op = EMQ_HOP_SET, .f = {"state", 5}, .v = {"active", 6}},
        {.op = EMQ_HOP_GET, .f = {"payload", 7}, .out = &pay},
    };
    ck_assert_int_eq(emq_hash_apply(a, K("j"), ops, 3, &existed), EMQ_OK);
    ck_assert_int_eq(runs_of(a, "emq_hash_steps"), one + 1);
    ck_assert_int_eq(existed, 1);
    ck_assert_int_eq(ops[0].result, 1);
    ck_assert_int_eq(ops[1].found, 1);
    ck_assert_int_eq(pay.len, 3);
    ck_assert_mem_eq(pay.p, "p\0q", 3);
    /* the row written is the one cached: read back without a SELECT */
    ck_assert_int_eq(emq_hash_get(a, K("j"), K("state"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "active");
    /* a failed step: its error, nothing written, the handle usable */
    emq_hop bad[2] = {{.op = EMQ_HOP_SET, .f = {"m", 1}, .v = {"1", 1}},
                      {.op = EMQ_HOP_INCR, .f = {"n", 1}, .by = 1}};
    ck_assert_int_eq(emq_hash_apply(a, K("t"), bad, 2, NULL), EMQ_EPROTO);
    ck_assert_str_eq(emq_store_errmsg(a), "ERR hash value is not an integer");
    ck_assert_int_eq(emq_hash_len(a, K("t"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    /* the long way: a key with an expiry, another type, an absent key, a
     * hash whose only field expired (absent: the steps make a new row) */
    emq_hop inc = {.op = EMQ_HOP_INCR, .f = {"c", 1}, .by = 2};
    ck_assert_int_eq(emq_hash_apply(a, K("e"), &inc, 1, &existed), EMQ_OK);
    ck_assert_int_eq(existed, 1);
    ck_assert_int_eq(inc.result, 2);
    ck_assert_int_eq(emq_hash_apply(a, K("s"), &inc, 1, NULL),
                     EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_hash_apply(a, K("none"), &inc, 1, &existed), EMQ_OK);
    ck_assert_int_eq(existed, 0);
    ck_assert_int_eq(emq_hash_apply(a, K("g"), &inc, 1, &existed), EMQ_OK);
    ck_assert_int_eq(existed, 0);
    ck_assert_int_eq(emq_hash_len(a, K("g"), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    /* what a wrote is what b reads */
    ck_assert_int_eq(emq_store_begin(b, 0, 200), EMQ_OK);
    ck_assert_int_eq(emq_hash_get(b, K("j"), K("attempts"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "1");
    ck_assert_int_eq(emq_hash_get(b, K("e"), K("c"), &v), EMQ_OK);
    ck_assert_str_eq((char *)v.p, "2");
    ck_assert_int_eq(emq_hash_get(b, K("t"), K("m"), &v), EMQ_NOTFOUND);
    emq_store_rollback(b);
    emq_buf_free(&pay);
    emq_buf_free(&v);
    emq_store_close(a);
    emq_store_close(b);
}
END_TEST

/* emq_zset_add0_many counts and places what as many ZADDs would: on a set
 * known flat (runs of EMQ_Z_RUN, then one by one), on one holding another
 * score (that member moves to 0), on an absent one; duplicates inside a run
 * and members already at 0 are not counted. */
START_TEST(a_run_of_score_0_adds_is_so_many_zadds)
{
    static const char *keys[3] = {"flat", "mixed", "absent"};
    char mem[75][16], key[32], one[32];
    emq_bytes m[75];
    int64_t added;
    for (int i = 0; i < 75; i++) {
        snprintf(mem[i], sizeof mem[i], "n%02d", i < 60 ? i : i - 55);
        if (i >= 70) snprintf(mem[i], sizeof mem[i], "m%02d", i - 70);
        m[i] = (emq_bytes){mem[i], strlen(mem[i])};
    }
    memcpy(mem[3], "x", 2);
    m[3].n = 1;
    for (int k = 0; k < 3; k++) {
        int want = 0, a;
        snprintf(key, sizeof key, "%s", keys[k]);
        snprintf(one, sizeof one, "%s.one", keys[k]);
        for (int i = 0; k < 2 && i < 10; i++) {
            char e[16];
            snprintf(e, sizeof e, "m%02d", i);
            ck_assert_int_eq(emq_zset_add(st, key, strlen(key), e, 3, 0,
                                          NULL), EMQ_OK);
            ck_assert_int_eq(emq_zset_add(st, one, strlen(one), e, 3, 0,
                                          NULL), EMQ_OK);
        }
        if (k == 1) {
            ck_assert_int_eq(emq_zset_add(st, key, strlen(key), "x", 1, 4,
                                          NULL), EMQ_OK);
            ck_assert_int_eq(emq_zset_add(st, one, strlen(one), "x", 1, 4,
                                          NULL), EMQ_OK);
        }
        ck_assert_int_eq(emq_zset_add0_many(st, key, strlen(key), m, 75,
                                            &added), EMQ_OK);
        for (int i = 0; i < 75; i++) {
            ck_assert_int_eq(emq_zset_add(st, one, strlen(one), m[i].p,
                                          m[i].n, 0, &a), EMQ_OK);
            want += a;
        }
        /* 59 n-names and x are new (x moves in "mixed"), 10 are repeats,
         * the 5 m-names exist but in "absent" */
        ck_assert_int_eq(added, want);
        ck_assert_int_eq(added, k == 0 ? 60 : k == 1 ? 59 : 65);
        zset_is(st, key, "x", k < 2 ? 70 : 65, 0);
        zset_is(st, one, "x", k < 2 ? 70 : 65, 0);
    }
}
END_TEST

START_TEST(checkpoint_never_runs_while_a_write_is_in_flight)
{
    const char *p = path_in("gate.db");
    emq_store_opts o = opts();
    emq_store *a, *b;
    ck_assert_int_eq(emq_store_open(p, &o, &a, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_open(p, &o, &b, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_str_set(a, K("k"), "v", 1, -1, 0, NULL), EMQ_OK);
    /* a holds the writer gate: b's checkpoint is deferred, not run */
    ck_assert_int_eq(emq_store_checkpoint(b), EMQ_EBUSY);
    ck_assert_int_eq(emq_store_commit(a), EMQ_OK);
    ck_assert_int_eq(emq_store_checkpoint(b), EMQ_OK);
    /* and a checkpoint inside one's own transaction is refused */
    ck_assert_int_eq(emq_store_begin(a, 1, 0), EMQ_OK);
    ck_assert_int_lt(emq_store_checkpoint(a), 0);
    emq_store_rollback(a);
    ck_assert_int_eq(emq_store_checkpoint(a), EMQ_OK);
    emq_store_close(a);
    emq_store_close(b);
}
END_TEST

START_TEST(foreign_sqlite_file_is_refused_untouched)
{
    const char *p = path_in("foreign.db");
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t "
                                  "VALUES(1);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_refused_untouched(p, EMQ_ENOTEMQ);
}
END_TEST

START_TEST(foreign_wal_file_is_refused_without_side_files)
{
    const char *p = path_in("foreign-wal.db");
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE "
                                  "t(x); INSERT INTO t VALUES(1);", NULL,
                                  NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_refused_untouched(p, EMQ_ENOTEMQ);
}
END_TEST

START_TEST(newer_schema_is_refused_untouched)
{
    const char *p = path_in("newer.db");
    emq_store_opts o = opts();
    emq_store *s;
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    emq_store_close(s);
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "PRAGMA journal_mode=DELETE;"
                                  "PRAGMA user_version = 99;", NULL, NULL,
                                  NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_refused_untouched(p, EMQ_ESCHEMA);
}
END_TEST

START_TEST(garbage_and_truncated_files_are_refused_untouched)
{
    const char *g = path_in("garbage.db");
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 131 + 7);
    write_file(g, junk, sizeof junk);
    assert_refused_untouched(g, EMQ_ENOTEMQ);

    const char *t = path_in("trunc.db");
    write_file(t, "SQLite format 3", 16); /* a header cut short */
    assert_refused_untouched(t, EMQ_ENOTEMQ);
}
END_TEST

START_TEST(readonly_open_refuses_writes_and_keeps_bytes)
{
    const char *p = path_in("ro.db");
    emq_store_opts o = opts();
    emq_store *s;
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(s, 1, 0), EMQ_OK);
    ck_assert_int_eq(emq_str_set(s, K("k"), "v", 1, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(s), EMQ_OK);
    ck_assert_int_eq(emq_store_checkpoint(s), EMQ_OK);
    emq_store_close(s);
    size_t n0, n1;
    unsigned char *before = slurp(p, &n0);
    o.readonly = 1;
    ck_assert_int_eq(emq_store_open(p, &o, &s, NULL, 0), EMQ_OK);
    emq_buf b = {0};
    ck_assert_int_eq(emq_store_begin(s, 0, 0), EMQ_OK);
    ck_assert_int_eq(emq_str_get(s, K("k"), &b), EMQ_OK);
    emq_store_rollback(s);
    int rc = emq_store_begin(s, 1, 0);
    if (rc == EMQ_OK)
        rc = emq_str_set(s, K("k"), "w", 1, -1, 0, NULL);
    if (rc == EMQ_OK)
        rc = emq_store_commit(s);
    ck_assert_int_eq(rc, EMQ_EREADONLY);
    emq_store_rollback(s);
    emq_store_close(s);
    unsigned char *after = slurp(p, &n1);
    ck_assert_int_eq(n0, n1);
    ck_assert(memcmp(before, after, n0) == 0);
    free(before);
    free(after);
    emq_buf_free(&b);
}
END_TEST

Suite *suite_store(void)
{
    Suite *s = suite_create("store");
    TCase *t = tcase_create("keyspace");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, string_set_get_nx_and_delete);
    tcase_add_test(t, string_expiry_is_absolute_and_lazy);
    tcase_add_test(t, string_incrby_counts_from_zero_and_refuses_text);
    tcase_add_test(t, integers_use_shortest_decimal);
    tcase_add_test(t, hash_set_get_multi_and_getall_in_order);
    tcase_add_test(t, hash_incrby_creates_and_refuses_text);
    tcase_add_test(t, hash_last_field_removed_deletes_key);
    tcase_add_test(t, hash_create_only_when_absent);
    tcase_add_test(t, hash_create_many_is_so_many_creates);
    tcase_add_test(t, hash_field_expiry_hides_only_that_field);
    tcase_add_test(t, hash_create_over_a_hash_whose_fields_all_expired);
    tcase_add_test(t, hash_apply_runs_steps_in_order_with_one_write);
    tcase_add_test(t, zset_orders_by_score_then_member_bytes);
    tcase_add_test(t, zset_add_updates_score_and_reports_new);
    tcase_add_test(t, zset_range_by_score_is_inclusive_with_limit);
    tcase_add_test(t, zset_lex_ranges_both_directions);
    tcase_add_test(t, zset_popmin_and_rem_vanish_when_empty);
    tcase_add_test(t, zset_scores_are_doubles);
    tcase_add_test(t, a_run_of_score_0_adds_is_so_many_zadds);
    tcase_add_test(t, list_push_both_ends_and_range);
    tcase_add_test(t, list_trim_keeps_first_64_and_empties);
    tcase_add_test(t, list_rem_pos_pop_rotate);
    tcase_add_test(t, list_pos_and_rem_all_across_both_ends);
    tcase_add_test(t, list_pos_and_rem_short_and_long_values_alike);
    tcase_add_test(t, set_add_rem_members_in_byte_order);
    tcase_add_test(t, emptied_aggregates_are_absent_to_every_command);
    tcase_add_test(t, wrongtype_on_every_family);
    tcase_add_test(t, binary_safe_keys_fields_members_values);
    tcase_add_test(t, key_scan_by_prefix_in_byte_order);
    tcase_add_test(t, rollback_leaves_nothing_behind);
    tcase_add_test(t, begin_ends_a_transaction_a_failed_rollback_left_open);
    suite_add_tcase(s, t);

    TCase *f = tcase_create("files");
    tcase_add_checked_fixture(f, tmp_setup, tmp_teardown);
    tcase_add_test(f, persistence_across_close_and_reopen);
    tcase_add_test(f, registration_cache_follows_other_connections_and_rollback);
    tcase_add_test(f, a_score_0_add_moves_a_member_whatever_the_handle_believed);
    tcase_add_test(f, a_nonzero_add_moves_a_member_whatever_the_handle_believed);
    tcase_add_test(f, small_sets_grow_into_the_member_index_and_back);
    tcase_add_test(f, carried_hash_rows_follow_other_connections_rollback_and_expiry);
    tcase_add_test(f, hash_steps_as_one_statement_answer_as_the_long_way);
    tcase_add_test(f, checkpoint_never_runs_while_a_write_is_in_flight);
    tcase_add_test(f, foreign_sqlite_file_is_refused_untouched);
    tcase_add_test(f, foreign_wal_file_is_refused_without_side_files);
    tcase_add_test(f, newer_schema_is_refused_untouched);
    tcase_add_test(f, garbage_and_truncated_files_are_refused_untouched);
    tcase_add_test(f, readonly_open_refuses_writes_and_keeps_bytes);
    tcase_add_test(f, hash_dictionary_words_are_tokens_and_need_their_dictionary);
    suite_add_tcase(s, f);
    return s;
}
