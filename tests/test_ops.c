/*
 * test_ops.c — suite "ops": the typed calls of the Tier 2 read
 * plane (engine/ops/operator.c, jobread.c, jobdata.c, logs.c, batch.c,
 * gatereads.c) and the reads beyond the wire (listing, job_info, the
 * batched dead-letter requeue). The wire replies themselves are the golden
 * replay's (tests/fixtures/tier2.jsonl); here each typed result, each
 * verdict code and each refusal's message.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "tengine.h"
#include "db.h"

#define Q "op"
#define K(s) "emq:{" Q "}:" s

static const char *id(unsigned i)
{
    static char b[8][EMQ_ID_SIZE];
    static int at;
    char *p = b[at++ & 7];
    snprintf(p, EMQ_ID_SIZE, "JOB%011u", i);
    return p;
}

static void put(emq_db *db, unsigned from, unsigned to)
{
    for (unsigned i = from; i <= to; i++)
        ck_assert_int_eq(emq_enqueue(db, Q, id(i), "p", 1), EMQ_ENQUEUED);
}

/* Claim the oldest and dead-letter it. */
static void kill_oldest(emq_db *db)
{
    emq_job j;
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, Q, j.id, j.attempts, 0, 1, "e", 1),
                     EMQ_DEAD);
    emq_job_clear(&j);
}

START_TEST(drain_counts_and_obliterate_takes_its_budget_then_finishes)
{
    tclock c;
    emq_db *db = topen(&c);
    int64_t n = -1;
    emq_job j;
    put(db, 1, 5);
    ck_assert_int_eq(emq_enqueue_in(db, Q, id(9), "s", 1, 60000),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_drain(db, Q, 0, &n), EMQ_OK);
    ck_assert_int_eq(n, 5);
    ck_assert_int_eq(tk_zcard(db, K("schedule")), 1);
    ck_assert_int_eq(emq_drain(db, Q, 1, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    put(db, 10, 15);
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_obliterate(db, Q, 1, 2), EMQ_ENOTPAUSED);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTATE not paused");
    ck_assert_int_eq(emq_queue_pause(db, Q), EMQ_OK);
    ck_assert_int_eq(emq_obliterate(db, Q, 0, 2), EMQ_EACTIVE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTATE active jobs present");
    ck_assert_int_eq(tk_zcard(db, K("pending")), 5); /* nothing changed */
    ck_assert_int_eq(emq_obliterate(db, Q, 1, 2), EMQ_MORE);
    ck_assert_int_eq(emq_obliterate(db, Q, 1, 2), EMQ_MORE);
    ck_assert_int_eq(emq_obliterate(db, Q, 1, 2), EMQ_MORE); /* exactly 0 left */
    ck_assert_int_eq(emq_obliterate(db, Q, 1, 2), EMQ_OK);
    ck_assert(!tk_exists(db, K("meta")));
    ck_assert(!tk_exists(db, K("metrics:completed")));
    ck_assert_int_eq(emq_obliterate(db, Q, 0, 0), EMQ_EINVAL); /* budget */
    emq_close(db);
}
END_TEST

START_TEST(counts_reads_by_name_and_refuses_an_unknown_one)
{
    tclock c;
    emq_db *db = topen(&c);
    const char *names[4] = {"pending", "dead", "failed", "completed"};
    const char *bad[3] = {"pending", "scheduled", "wait"};
    int64_t v[4] = {-1, -1, -1, -1};
    put(db, 1, 3);
    kill_oldest(db);
    ck_assert_int_eq(emq_counts(db, Q, 4, names, v), EMQ_OK);
    ck_assert(v[0] == 2 && v[1] == 1 && v[2] == 1 && v[3] == 0);
    ck_assert_int_eq(emq_counts(db, Q, 3, bad, v), EMQ_EREFUSED);
    ck_assert_str_eq(emq_errmsg(db), "unknown_state(scheduled)");
    ck_assert_int_eq(emq_counts(db, Q, 0, NULL, NULL), EMQ_OK);
    emq_close(db);
}
END_TEST

START_TEST(the_state_lookup_and_the_row_reads)
{
    tclock c;
    emq_db *db = topen(&c);
    int st = 0;
    int64_t cnt = -1, pts = -1;
    char *v = NULL;
    size_t vl = 0;
    put(db, 1, 2);
    kill_oldest(db);
    ck_assert_int_eq(emq_job_state(db, Q, id(1), &st), EMQ_OK);
    ck_assert_int_eq(st, EMQ_STATE_DEAD);
    ck_assert_str_eq(emq_state_name(st), "dead");
    ck_assert_int_eq(emq_job_state(db, Q, id(2), &st), EMQ_OK);
    ck_assert_int_eq(st, EMQ_STATE_PENDING);
    ck_assert_int_eq(emq_job_state(db, Q, id(7), &st), EMQ_OK);
    ck_assert_int_eq(st, EMQ_STATE_ABSENT);
    tk_hset(db, K("job:JOB00000000008"), "state", "awaiting_children");
    ck_assert_int_eq(emq_job_state(db, Q, id(8), &st), EMQ_OK);
    ck_assert_int_eq(st, EMQ_STATE_AWAITING);
    tk_hset(db, K("job:JOB00000000009"), "state", "active");
    ck_assert_int_eq(emq_job_state(db, Q, id(9), &st), EMQ_OK);
    ck_assert_int_eq(st, EMQ_STATE_UNKNOWN);
    ck_assert_ptr_null(emq_state_name(0));
    ck_assert_int_eq(emq_metrics_get(db, Q, "failed", &cnt, &pts), EMQ_OK);
    ck_assert(cnt == 1 && pts == 0);
    ck_assert_int_eq(emq_metrics_get(db, Q, "waiting", &cnt, &pts),
                     EMQ_EINVAL);
    ck_assert_int_eq(emq_dedup_get(db, Q, "k", &v, &vl), EMQ_ABSENT);
    ck_assert_ptr_null(v);
    tk_set(db, K("de:k"), id(2));
    ck_assert_int_eq(emq_dedup_get(db, Q, "k", &v, &vl), EMQ_OK);
    ck_assert_str_eq(v, id(2));
    ck_assert_uint_eq(vl, EMQ_ID_LEN);
    emq_free(v);
    ck_assert_int_eq(emq_dedup_get(db, Q, "bad key", &v, &vl), EMQ_EINVAL);
    emq_close(db);
}
END_TEST

START_TEST(data_progress_and_logs_need_a_row)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_line *l = NULL;
    size_t n = 9;
    int64_t cnt = -1;
    char *p;
    put(db, 1, 1);
    ck_assert_int_eq(emq_job_update_data(db, Q, id(1), "a\0b", 3), EMQ_OK);
    p = tk_hget(db, K("job:JOB00000000001"), "payload");
    ck_assert(p && p[0] == 'a' && p[1] == 0);
    free(p);
    ck_assert_int_eq(emq_job_update_data(db, Q, id(2), "x", 1), EMQ_GONE);
    ck_assert_int_eq(emq_job_update_progress(db, Q, id(1), "75", 2), EMQ_OK);
    p = tk_hget(db, K("job:JOB00000000001"), "progress");
    ck_assert_str_eq(p, "75");
    free(p);
    ck_assert_int_eq(emq_job_update_progress(db, Q, id(2), "1", 1), EMQ_GONE);
    ck_assert_int_eq(emq_job_logs(db, Q, id(1), &l, &n), EMQ_OK);
    ck_assert_uint_eq(n, 0);
    emq_lines_free(l, n);
    for (int i = 0; i < 4; i++) {
        char line[16];
        snprintf(line, sizeof line, "l%d", i);
        ck_assert_int_eq(emq_job_add_log(db, Q, id(1), line, 2, 0, &cnt), EMQ_OK);
        ck_assert_int_eq(cnt, i + 1);
    }
    ck_assert_int_eq(emq_job_add_log(db, Q, id(1), "l4", 2, 2, &cnt), EMQ_OK);
    ck_assert_int_eq(cnt, 2);
    ck_assert_int_eq(emq_job_add_log(db, Q, id(1), "l5", 2, 9, &cnt), EMQ_OK);
    ck_assert_int_eq(cnt, 3); /* keep >= length: the length */
    ck_assert_int_eq(emq_job_logs(db, Q, id(1), &l, &n), EMQ_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert(strcmp(l[0].p, "l3") == 0 && strcmp(l[2].p, "l5") == 0);
    emq_lines_free(l, n);
    ck_assert_int_eq(emq_job_add_log(db, Q, id(2), "x", 1, 0, &cnt), EMQ_GONE);
    ck_assert_int_eq(emq_job_add_log(db, Q, id(1), "x", 1, -1, &cnt), EMQ_EINVAL);
    /* the row decides: completed, its lines linger but read as gone */
    ck_assert_int_eq(emq_complete(db, Q, id(1), 0), EMQ_OK);
    ck_assert_int_eq(emq_job_logs(db, Q, id(1), &l, &n), EMQ_GONE);
    ck_assert_ptr_null(l);
    ck_assert(tk_exists(db, K("job:JOB00000000001:logs")));
    emq_close(db);
}
END_TEST

START_TEST(remove_refuses_a_lock_key_or_field_and_releases_its_dedup_key)
{
    tclock c;
    emq_db *db = topen(&c);
    put(db, 1, 2);
    tk_set(db, K("job:JOB00000000001:lock"), "1");
    ck_assert_int_eq(emq_job_remove(db, Q, id(1), NULL), EMQ_ELOCKED);
    ck_assert_str_eq(emq_errmsg(db), "EMQLOCK job is locked");
    tk_del(db, K("job:JOB00000000001:lock"));
    tk_hset(db, K("job:JOB00000000001"), "lock", "1");
    ck_assert_int_eq(emq_job_remove(db, Q, id(1), NULL), EMQ_ELOCKED);
    ck_assert_int_eq(tk_zcard(db, K("pending")), 2);
    {   /* a lock field that expired no longer locks */
        emq_store *st = emq_db_store(db);
        int done = 0;
        ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
        ck_assert_int_eq(emq_hash_expire_at(st, K("job:JOB00000000001"),
                                            strlen(K("job:JOB00000000001")),
                                            "lock", 4, T0 + 100, &done),
                         EMQ_OK);
        ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
        ck_assert_int_eq(done, 1);
        ck_assert_int_eq(emq_job_remove(db, Q, id(1), NULL), EMQ_ELOCKED);
        c.now = T0 + 101;
        ck_assert_int_eq(emq_job_remove(db, Q, id(1), NULL), EMQ_OK);
        c.now = T0;
    }
    tk_set(db, K("de:mine"), id(2));
    tk_set(db, K("de:other"), id(3));
    ck_assert_int_eq(emq_job_remove(db, Q, id(2), "other"), EMQ_OK);
    ck_assert(tk_exists(db, K("de:other"))); /* points elsewhere: stays */
    put(db, 2, 2);
    ck_assert_int_eq(emq_job_remove(db, Q, id(2), "mine"), EMQ_OK);
    ck_assert(!tk_exists(db, K("de:mine")));
    ck_assert_int_eq(emq_job_remove(db, Q, id(2), ""), EMQ_GONE);
    emq_close(db);
}
END_TEST

START_TEST(reprocess_only_takes_a_dead_job)
{
    tclock c;
    emq_db *db = topen(&c);
    char *a;
    put(db, 1, 2);
    kill_oldest(db);
    ck_assert_int_eq(emq_job_reprocess(db, Q, id(2)), EMQ_ENOTDEAD);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTATE not dead");
    ck_assert_int_eq(emq_job_reprocess(db, Q, id(1)), EMQ_OK);
    a = tk_hget(db, K("job:JOB00000000001"), "attempts");
    ck_assert_str_eq(a, "1"); /* kept */
    free(a);
    ck_assert_ptr_null(tk_hget(db, K("job:JOB00000000001"), "last_error"));
    ck_assert_int_eq(emq_job_reprocess(db, Q, id(5)), EMQ_GONE);
    emq_close(db);
}
END_TEST

START_TEST(claim_batch_shares_one_deadline_and_delay_parks_with_the_token)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_job j[4];
    size_t n = 9;
    double s1, s2;
    put(db, 1, 3);
    ck_assert_int_eq(emq_claim_batch(db, Q, 4, 1000, j, &n), EMQ_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert(strcmp(j[0].id, id(1)) == 0 && strcmp(j[2].id, id(3)) == 0);
    ck_assert(j[0].attempts == 1 && j[0].payload_len == 1);
    ck_assert(tk_zscore(db, K("active"), id(1), &s1));
    ck_assert(tk_zscore(db, K("active"), id(3), &s2));
    ck_assert(s1 == s2 && s1 == (double)(T0 + 1000));
    for (size_t i = 0; i < n; i++) emq_job_clear(&j[i]);
    ck_assert_int_eq(emq_claim_batch(db, Q, 4, 1000, j, &n), EMQ_EMPTY);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(emq_delay(db, Q, id(1), 2, 50, EMQ_DELAY_IN),
                     EMQ_ESTALE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE delay token mismatch");
    ck_assert_int_eq(emq_delay(db, Q, id(1), 1, 50, EMQ_DELAY_IN), EMQ_OK);
    ck_assert(tk_zscore(db, K("schedule"), id(1), &s1));
    ck_assert(s1 == (double)(T0 + 50));
    ck_assert_int_eq(emq_delay(db, Q, id(2), 1, 7, EMQ_DELAY_AT), EMQ_OK);
    ck_assert(tk_zscore(db, K("schedule"), id(2), &s1) && s1 == 7);
    ck_assert_int_eq(emq_delay(db, Q, id(9), 1, 7, EMQ_DELAY_AT), EMQ_GONE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE job gone");
    ck_assert_int_eq(emq_delay(db, Q, "ORD00000000001", 1, 7, EMQ_DELAY_AT),
                     EMQ_EKIND);
    ck_assert_int_eq(emq_delay(db, Q, id(3), 1, 7, 5), EMQ_EINVAL);
    ck_assert_int_eq(tk_zcard(db, K("active")), 1);
    emq_queue_pause(db, Q);
    put(db, 5, 5);
    ck_assert_int_eq(emq_claim_batch(db, Q, 4, 1000, j, &n), EMQ_EMPTY);
    emq_close(db);
}
END_TEST

START_TEST(the_gate_reads)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_job j;
    int64_t v = -1;
    put(db, 1, 2);
    ck_assert_int_eq(emq_queue_is_maxed(db, Q), EMQ_OK);
    tk_hset(db, K("meta"), "concurrency", "1");
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_queue_is_maxed(db, Q), EMQ_ERATE);
    ck_assert_str_eq(emq_errmsg(db), "EMQRATE at concurrency ceiling");
    ck_assert_int_eq(emq_rate_limit_get(db, Q, &v), EMQ_OK);
    ck_assert_int_eq(v, 0);
    tk_hset(db, K("meta"), "max", "2");
    ck_assert_int_eq(emq_rate_limit_get(db, Q, &v), EMQ_OK);
    ck_assert_int_eq(v, 2);
    ck_assert_int_eq(emq_rate_limit_ttl_get(db, Q, 0, &v), EMQ_OK);
    ck_assert_int_eq(v, 0);
    {   /* a spent limiter with a TTL */
        emq_store *st = emq_db_store(db);
        ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
        ck_assert_int_eq(emq_str_set(st, K("limiter"), strlen(K("limiter")),
                                     "2", 1, T0 + 900, 0, NULL), EMQ_OK);
        ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    }
    ck_assert_int_eq(emq_rate_limit_ttl_get(db, Q, 0, &v), EMQ_OK);
    ck_assert_int_eq(v, 900);
    ck_assert_int_eq(emq_rate_limit_ttl_get(db, Q, 3, &v), EMQ_OK);
    ck_assert_int_eq(v, 0); /* a limit of 3 is not spent by 2 */
    emq_close(db);
}
END_TEST

START_TEST(list_pages_from_either_end_and_a_lane)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_member *m = NULL;
    size_t n = 0;
    emq_job j;
    put(db, 1, 6);
    ck_assert_int_eq(emq_list(db, Q, "pending", NULL, 1, 2, 0, &m, &n),
                     EMQ_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert(strcmp(m[0].member, id(2)) == 0 && strcmp(m[1].member, id(3))
              == 0 && m[0].score == 0 && m[0].len == EMQ_ID_LEN);
    emq_members_free(m, n);
    ck_assert_int_eq(emq_list(db, Q, "pending", NULL, 0, 2, 1, &m, &n),
                     EMQ_OK);
    ck_assert(n == 2 && strcmp(m[0].member, id(6)) == 0);
    emq_members_free(m, n);
    ck_assert_int_eq(emq_list(db, Q, "pending", NULL, 10, 2, 0, &m, &n),
                     EMQ_OK);
    ck_assert_uint_eq(n, 0);
    emq_members_free(m, n);
    ck_assert_int_eq(emq_claim(db, Q, 5000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_list(db, Q, "active", NULL, 0, 10, 0, &m, &n),
                     EMQ_OK);
    ck_assert(n == 1 && m[0].score == T0 + 5000);
    emq_members_free(m, n);
    tk_zadd(db, K("g:PRT0KHTOWnGLuC:pending"), id(8), 0);
    ck_assert_int_eq(emq_list(db, Q, NULL, "PRT0KHTOWnGLuC", 0, 10, 0, &m,
                              &n), EMQ_OK);
    ck_assert(n == 1 && strcmp(m[0].member, id(8)) == 0);
    emq_members_free(m, n);
    ck_assert_int_eq(emq_list(db, Q, "waiting", NULL, 0, 10, 0, &m, &n),
                     EMQ_EINVAL);
    ck_assert_int_eq(emq_list(db, Q, "pending", NULL, -1, 10, 0, &m, &n),
                     EMQ_EINVAL);
    ck_assert_int_eq(emq_list(db, Q, "pending", NULL, 0, 0, 0, &m, &n),
                     EMQ_EINVAL);
    emq_close(db);
}
END_TEST

START_TEST(job_inspect_reads_the_row_and_the_set_scores)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_job_info ji;
    emq_job j;
    put(db, 1, 1);
    ck_assert_int_eq(emq_claim(db, Q, 7000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_job_add_log(db, Q, id(1), "x", 1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_job_inspect(db, Q, id(1), &ji), EMQ_OK);
    ck_assert_int_eq(ji.state, EMQ_STATE_ACTIVE);
    ck_assert(ji.has_deadline && ji.deadline_ms == T0 + 7000);
    ck_assert(!ji.has_run_at && ji.logs == 1 && !ji.locked);
    ck_assert_uint_eq(ji.nfields, 3);
    ck_assert_str_eq(ji.fields[0].name, "state");
    emq_job_info_clear(&ji);
    ck_assert_int_eq(emq_delay(db, Q, id(1), 1, 99, EMQ_DELAY_AT), EMQ_OK);
    tk_set(db, K("job:JOB00000000001:lock"), "1");
    ck_assert_int_eq(emq_job_inspect(db, Q, id(1), &ji), EMQ_OK);
    ck_assert(ji.state == EMQ_STATE_SCHEDULED && ji.has_run_at &&
              ji.run_at_ms == 99 && !ji.has_deadline && ji.locked);
    emq_job_info_clear(&ji);
    /* a ghost: in pending with no row */
    tk_zadd(db, K("pending"), id(4), 0);
    ck_assert_int_eq(emq_job_inspect(db, Q, id(4), &ji), EMQ_GONE);
    ck_assert_int_eq(ji.state, EMQ_STATE_PENDING);
    ck_assert_uint_eq(ji.nfields, 0);
    emq_job_info_clear(&ji);
    emq_close(db);
}
END_TEST

START_TEST(requeue_dead_walks_every_batch_and_skips_ids_without_a_row)
{
    tclock c;
    emq_db *db = topen(&c);
    int64_t rq = -1, sk = -1;
    put(db, 1, 7);
    for (int i = 0; i < 7; i++) kill_oldest(db);
    tk_del(db, K("job:JOB00000000001"));  /* row-less dead ids: first... */
    tk_del(db, K("job:JOB00000000004"));  /* ...and in the middle */
    ck_assert_int_eq(emq_dead_requeue(db, Q, 2, &rq, &sk), EMQ_OK);
    ck_assert(rq == 5 && sk == 2);
    ck_assert_int_eq(tk_zcard(db, K("pending")), 5);
    ck_assert_int_eq(tk_zcard(db, K("dead")), 2);
    ck_assert_int_eq(emq_dead_requeue(db, Q, 100, &rq, &sk), EMQ_OK);
    ck_assert(rq == 0 && sk == 2);
    ck_assert_int_eq(emq_dead_requeue(db, Q, 0, &rq, &sk), EMQ_EINVAL);
    emq_close(db);
}
END_TEST

Suite *suite_ops(void)
{
    Suite *s = suite_create("ops");
    TCase *t = tcase_create("typed");
    tcase_add_test(t, drain_counts_and_obliterate_takes_its_budget_then_finishes);
    tcase_add_test(t, counts_reads_by_name_and_refuses_an_unknown_one);
    tcase_add_test(t, the_state_lookup_and_the_row_reads);
    tcase_add_test(t, data_progress_and_logs_need_a_row);
    tcase_add_test(t, remove_refuses_a_lock_key_or_field_and_releases_its_dedup_key);
    tcase_add_test(t, reprocess_only_takes_a_dead_job);
    tcase_add_test(t, claim_batch_shares_one_deadline_and_delay_parks_with_the_token);
    tcase_add_test(t, the_gate_reads);
    tcase_add_test(t, list_pages_from_either_end_and_a_lane);
    tcase_add_test(t, job_inspect_reads_the_row_and_the_set_scores);
    tcase_add_test(t, requeue_dead_walks_every_batch_and_skips_ids_without_a_row);
    suite_add_tcase(s, t);
    return s;
}
