/*
 * test_opverbs.c — suite "opverbs": the operator's verbs beyond the wire of
 * issue 34 item 5 (engine/ops/opverbs.c) through their typed calls: run
 * scheduled jobs now (by id, and every job due before an instant), requeue
 * the dead jobs minted before an instant (a count, a cursor), and requeue a
 * dead or scheduled job with its payload replaced. Each test asserts the
 * sets and rows after the call and that the invariant checker finds no
 * violation; a refused call changes nothing (the keyspace dump is equal).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "tengine.h"
#include "emqlite_protocol.h"

#define Q "ov"
#define K(s) "emq:{" Q "}:" s
#define G "PRT0KHTOWnGLuC"

static const char *id(unsigned i)
{
    static char b[8][EMQ_ID_SIZE];
    static int at;
    char *p = b[at++ & 7];
    snprintf(p, EMQ_ID_SIZE, "JOB%011u", i);
    return p;
}

/* A JOB id minted at Unix ms `ms` (PROTOCOL.md §4: ts << 22 | node | seq). */
static const char *minted_at(int64_t ms, unsigned seq)
{
    static char b[8][EMQ_ID_SIZE];
    static int at;
    char *p = b[at++ & 7];
    uint64_t snow = ((uint64_t)(ms - EMQ_EPOCH_MS) << 22) | seq;
    ck_assert_int_eq(emq_id_encode("JOB", snow, p), EMQ_OK);
    return p;
}

static int in(emq_db *db, const char *key, const char *m)
{
    double sc;
    return tk_zscore(db, key, m, &sc);
}

static void clean(emq_db *db)
{
    size_t nv = 99;
    ck_assert_int_eq(emq_check(db, NULL, NULL, &nv), EMQ_OK);
    ck_assert_uint_eq(nv, 0);
}

/* Enqueue `i` and dead-letter it (claim, retry at the cap). */
static void dead(emq_db *db, const char *jid, const char *err)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, Q, jid, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, jid);
    ck_assert_int_eq(emq_retry(db, Q, j.id, j.attempts, 0, 1, err,
                               strlen(err)), EMQ_DEAD);
    emq_job_clear(&j);
}

START_TEST(run_now_moves_the_scheduled_ids_and_leaves_the_others)
{
    tclock c;
    emq_db *db = topen(&c);
    const char *ids[5];
    int v[5] = {-1, -1, -1, -1, -1};
    int64_t moved = -1;
    char *s;
    ck_assert_int_eq(emq_enqueue_in(db, Q, id(1), "a", 1, 3600000),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue_at(db, Q, id(2), "b", 1, T0 + 86400000),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue_in(db, Q, id(3), "c", 1, 60000),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue(db, Q, id(4), "d", 1), EMQ_ENQUEUED);
    ids[0] = id(2);
    ids[1] = id(4);     /* pending: left */
    ids[2] = id(9);     /* absent */
    ids[3] = id(1);
    ids[4] = id(1);     /* repeated: moved once */
    ck_assert_int_eq(emq_job_run_now(db, Q, 5, ids, v, &moved), EMQ_OK);
    ck_assert_int_eq(moved, 2);
    ck_assert(v[0] == 1 && v[1] == 0 && v[2] == 0 && v[3] == 1 && v[4] == 0);
    ck_assert_int_eq(tk_zcard(db, K("schedule")), 1); /* id(3) stays */
    ck_assert_int_eq(tk_zcard(db, K("pending")), 3);
    s = tk_hget(db, K("job:JOB00000000002"), "state");
    ck_assert_str_eq(s, "pending");
    free(s);
    clean(db);
    /* the claim order is the id order (pending scores are all 0) */
    {
        emq_job j;
        ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_OK);
        ck_assert_str_eq(j.id, id(1));
        emq_job_clear(&j);
    }
    /* an invalid id is refused by its gate, naming the argument */
    ids[0] = "nope";
    ck_assert_int_eq(emq_job_run_now(db, Q, 1, ids, NULL, NULL), EMQ_EID);
    ck_assert_int_eq(emq_job_run_now(db, Q, 0, ids, NULL, NULL) < 0, 1);
    emq_close(db);
}
END_TEST

START_TEST(run_now_returns_a_grouped_job_to_its_lane_and_the_ring)
{
    tclock c;
    emq_db *db = topen(&c);
    const char *ids[1];
    char g[EMQ_ID_SIZE];
    emq_job j;
    int64_t moved = 0;
    ck_assert_int_eq(emq_lane_enqueue(db, Q, G, id(1), "x", 1),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_lane_claim(db, Q, 30000, &j, g), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, Q, j.id, j.attempts, 600000, 5, "e", 1),
                     EMQ_SCHEDULED);
    emq_job_clear(&j);
    ck_assert_int_eq(tk_zcard(db, K("g:" G ":pending")), 0);
    ids[0] = id(1);
    ck_assert_int_eq(emq_job_run_now(db, Q, 1, ids, NULL, &moved), EMQ_OK);
    ck_assert_int_eq(moved, 1);
    ck_assert_int_eq(tk_zcard(db, K("g:" G ":pending")), 1);
    ck_assert_int_eq(tk_zcard(db, K("pending")), 0);
    clean(db);
    ck_assert_int_eq(emq_lane_claim(db, Q, 30000, &j, g), EMQ_OK);
    ck_assert_str_eq(j.id, id(1));
    ck_assert_int_eq(j.attempts, 2);
    emq_job_clear(&j);
    emq_close(db);
}
END_TEST

START_TEST(run_due_moves_what_is_due_before_the_instant_batch_by_batch)
{
    tclock c;
    emq_db *db = topen(&c);
    int64_t moved = -1;
    for (unsigned i = 1; i <= 5; i++)
        ck_assert_int_eq(emq_enqueue_at(db, Q, id(i), "s", 1,
                                        T0 + 1000 * (int64_t)i),
                         EMQ_SCHEDULED);
    /* nothing is due now */
    ck_assert_int_eq(emq_promote(db, Q, 100, &moved), EMQ_OK);
    ck_assert_int_eq(moved, 0);
    ck_assert_int_eq(emq_schedule_run_due(db, Q, T0 + 3000, 2, &moved),
                     EMQ_OK);
    ck_assert_int_eq(moved, 2);
    ck_assert_int_eq(emq_schedule_run_due(db, Q, T0 + 3000, 2, &moved),
                     EMQ_OK);
    ck_assert_int_eq(moved, 1); /* fewer than the batch: none left due */
    ck_assert_int_eq(tk_zcard(db, K("pending")), 3);
    ck_assert_int_eq(tk_zcard(db, K("schedule")), 2);
    clean(db);
    ck_assert_int_eq(emq_schedule_run_due(db, Q, INT64_MAX, 100, &moved),
                     EMQ_OK);
    ck_assert_int_eq(moved, 2);
    ck_assert_int_eq(tk_zcard(db, K("schedule")), 0);
    clean(db);
    ck_assert_int_eq(emq_schedule_run_due(db, Q, T0, 0, &moved),
                     EMQ_EINVAL);
    emq_close(db);
}
END_TEST

START_TEST(requeue_dead_before_takes_the_ids_minted_before_the_instant)
{
    tclock c;
    emq_db *db = topen(&c);
    int64_t rq = -1, sk = -1, day = 86400000;
    const char *old1 = minted_at(T0 - 3 * day, 1),
               *old2 = minted_at(T0 - 2 * day, 1),
               *old3 = minted_at(T0 - 2 * day, 2),
               *young = minted_at(T0 - 1000, 1);
    char o1[EMQ_ID_SIZE], o2[EMQ_ID_SIZE], o3[EMQ_ID_SIZE], y[EMQ_ID_SIZE];
    emq_reply r = {0};
    strcpy(o1, old1);
    strcpy(o2, old2);
    strcpy(o3, old3);
    strcpy(y, young);
    dead(db, o1, "boom");
    dead(db, o2, "boom");
    dead(db, o3, "boom");
    dead(db, y, "boom");
    /* by count: the oldest one */
    ck_assert_int_eq(emq_dead_requeue_before(db, Q, T0 - day, 1, &rq, &sk),
                     EMQ_OK);
    ck_assert(rq == 1 && sk == 0);
    ck_assert(in(db, K("pending"), o1));
    clean(db);
    /* the instant is exclusive: minted exactly at it stays */
    ck_assert_int_eq(emq_dead_requeue_before(db, Q, T0 - 2 * day, 10, &rq,
                                             &sk), EMQ_OK);
    ck_assert(rq == 0 && sk == 0);
    /* the rest minted before a day ago; the young one stays dead */
    ck_assert_int_eq(emq_dead_requeue_before(db, Q, T0 - day, 10, &rq, &sk),
                     EMQ_OK);
    ck_assert(rq == 2 && sk == 0);
    ck_assert_int_eq(tk_zcard(db, K("dead")), 1);
    ck_assert(in(db, K("dead"), y));
    {
        char key[64], *e;
        snprintf(key, sizeof key, K("job:%s"), o2);
        ck_assert_ptr_null((e = tk_hget(db, key, "last_error")));
        snprintf(key, sizeof key, K("job:%s"), y);
        e = tk_hget(db, key, "last_error");
        ck_assert_str_eq(e, "boom");
        free(e);
    }
    clean(db);
    /* the cursor through the registry: a row-less id is skipped and the
     * next batch goes on after it */
    ck_assert_int_eq(emq_drain(db, Q, 0, &rq), EMQ_OK);
    strcpy(o1, minted_at(T0 - 3 * day, 7));
    dead(db, o1, "again");
    {
        char key[64];
        const char *av[4] = {Q, NULL, "1", NULL};
        char t[24];
        snprintf(t, sizeof t, "%lld", (long long)(T0 - day));
        av[1] = t;
        snprintf(key, sizeof key, K("job:%s"), o1);
        tk_del(db, key);
        ck_assert_int_eq(emq_call(db, "requeue_dead_before", 4, av, NULL,
                                  &r), EMQ_OK);
        ck_assert_uint_eq(r.n, 3);
        ck_assert(r.elem[0].integer == 0 && r.elem[1].integer == 1);
        ck_assert_int_eq(r.elem[2].type, EMQ_REPLY_BULK);
        ck_assert_str_eq(r.elem[2].str, o1);
        av[3] = o1;
        emq_reply_clear(&r);
        ck_assert_int_eq(emq_call(db, "requeue_dead_before", 4, av, NULL,
                                  &r), EMQ_OK);
        ck_assert(r.elem[0].integer == 0 && r.elem[1].integer == 0);
        ck_assert_int_eq(r.elem[2].type, EMQ_REPLY_NIL);
        emq_reply_clear(&r);
    }
    emq_close(db);
}
END_TEST

START_TEST(requeue_edited_replaces_the_payload_of_a_dead_or_scheduled_job)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_job j;
    char *s, *before, *after;
    dead(db, id(1), "card declined");
    ck_assert_int_eq(emq_job_requeue_edited(db, Q, id(1), "fixed\0x", 7),
                     EMQ_OK);
    ck_assert(in(db, K("pending"), id(1)));
    ck_assert_int_eq(tk_zcard(db, K("dead")), 0);
    ck_assert_ptr_null(tk_hget(db, K("job:JOB00000000001"), "last_error"));
    clean(db);
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_OK);
    ck_assert_uint_eq(j.payload_len, 7);
    ck_assert_int_eq(memcmp(j.payload, "fixed\0x", 7), 0);
    ck_assert_int_eq(j.attempts, 2); /* attempts kept */
    /* failed, waiting for its retry: replaced and run now */
    ck_assert_int_eq(emq_retry(db, Q, j.id, j.attempts, 3600000, 9, "e", 1),
                     EMQ_SCHEDULED);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_job_requeue_edited(db, Q, id(1), "v3", 2), EMQ_OK);
    ck_assert_int_eq(tk_zcard(db, K("schedule")), 0);
    s = tk_hget(db, K("job:JOB00000000001"), "payload");
    ck_assert_str_eq(s, "v3");
    free(s);
    clean(db);
    /* pending: refused, nothing changes */
    before = tk_dump(db);
    ck_assert_int_eq(emq_job_requeue_edited(db, Q, id(1), "v4", 2),
                     EMQ_ENOTDEAD);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTATE not dead or scheduled");
    ck_assert_int_eq(emq_job_requeue_edited(db, Q, id(7), "v4", 2),
                     EMQ_GONE);
    after = tk_dump(db);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    emq_close(db);
}
END_TEST


static int count_cb(void *ctx, const char *name, const char *group)
{
    (void)name;
    ck_assert(emq_id_valid(group));
    (*(int *)ctx)++;
    return 0;
}

START_TEST(tenant_names_map_to_stable_group_ids_beside_the_keyspace)
{
    tclock c;
    emq_db *db = topen(&c);
    char g1[EMQ_ID_SIZE], g2[EMQ_ID_SIZE], g3[EMQ_ID_SIZE], name[16];
    char *before, *after;
    int n = 0;
    before = tk_dump(db);
    ck_assert_int_eq(emq_tenant_group(db, "acme", 0, g1), EMQ_GONE);
    ck_assert_int_eq(emq_tenant_group(db, "acme", 1, g1), EMQ_OK);
    ck_assert_int_eq(strncmp(g1, "PRT", 3), 0);
    ck_assert(emq_id_valid(g1));
    ck_assert_int_eq(emq_tenant_group(db, "acme", 1, g2), EMQ_OK);
    ck_assert_str_eq(g1, g2); /* stable */
    ck_assert_int_eq(emq_tenant_group(db, "globex", 1, g3), EMQ_OK);
    ck_assert_str_ne(g1, g3);
    ck_assert_int_eq(emq_tenant_name(db, g3, name, sizeof name), EMQ_OK);
    ck_assert_str_eq(name, "globex");
    ck_assert_int_eq(emq_tenant_name(db, g3, name, 4), EMQ_EINVAL);
    ck_assert_int_eq(emq_tenant_name(db, G, name, sizeof name), EMQ_GONE);
    ck_assert_int_eq(emq_tenant_list(db, count_cb, &n), EMQ_OK);
    ck_assert_int_eq(n, 2);
    /* host configuration: the keyspace did not change */
    after = tk_dump(db);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    /* the rule: no space, not a branded id, not empty, not too long */
    ck_assert_int_eq(emq_tenant_group(db, "a b", 1, g1), EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "'a b'"));
    ck_assert_int_eq(emq_tenant_group(db, G, 1, g1), EMQ_EINVAL);
    ck_assert_int_eq(emq_tenant_group(db, "", 1, g1), EMQ_EINVAL);
    {
        char big[EMQ_TENANT_NAME_MAX + 2];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = 0;
        ck_assert_int_eq(emq_tenant_group(db, big, 1, g1), EMQ_EINVAL);
        big[EMQ_TENANT_NAME_MAX] = 0;
        ck_assert_int_eq(emq_tenant_group(db, big, 1, g1), EMQ_OK);
    }
    /* a lane named by it works as any group */
    ck_assert_int_eq(emq_tenant_group(db, "acme", 0, g1), EMQ_OK);
    ck_assert_int_eq(emq_lane_enqueue(db, Q, g1, id(1), "x", 1),
                     EMQ_ENQUEUED);
    clean(db);
    emq_close(db);
}
END_TEST

Suite *suite_opverbs(void)
{
    Suite *s = suite_create("opverbs");
    TCase *t = tcase_create("typed");
    tcase_add_test(t, run_now_moves_the_scheduled_ids_and_leaves_the_others);
    tcase_add_test(t, run_now_returns_a_grouped_job_to_its_lane_and_the_ring);
    tcase_add_test(t,
                   run_due_moves_what_is_due_before_the_instant_batch_by_batch);
    tcase_add_test(t,
                   requeue_dead_before_takes_the_ids_minted_before_the_instant);
    tcase_add_test(t,
                   requeue_edited_replaces_the_payload_of_a_dead_or_scheduled_job);
    tcase_add_test(t, tenant_names_map_to_stable_group_ids_beside_the_keyspace);
    suite_add_tcase(s, t);
    return s;
}
