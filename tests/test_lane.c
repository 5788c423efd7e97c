/*
 * test_lane.c — suite "lane": the group branches (§6.0 RELEASE,
 * UNCLAIMED, OFFER, WAKE) of complete, retry, promote and reap, and the flow
 * link (LINK, fan-in, outbox entries, RECURSE-SQ) of complete and retry.
 * States no Tier 1 verb builds (a `group` field, gactive, glimit, a lane
 * pause, a parent link) are written raw through storage/store.h.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "tengine.h"
#include "store.h"

emq_store *emq_db_store(emq_db *db);

#define Q "mail"
#define K(sfx) "emq:{" Q "}:" sfx
#define J(id) "emq:{" Q "}:job:" id
#define A "JOB00000000001"
#define B "JOB00000000002"
#define P "JOB00000000009"
#define GP "JOB00000000010"
#define G "PRT0KHTOWnGLuC"
#define H "PRT0NgWEfAEJfs"
#define LANE(g) "emq:{" Q "}:g:" g ":pending"

static tclock clk;
static emq_db *db;

static void setup(void) { db = topen(&clk); }
static void teardown(void) { emq_close(db); db = NULL; }

static void str_is(char *got, const char *want)
{
    if (want == NULL) {
        ck_assert_msg(got == NULL, "got %s, want nothing", got);
    } else {
        ck_assert_msg(got != NULL, "got nothing, want %s", want);
        ck_assert_str_eq(got, want);
    }
    free(got);
}

static int in_set(const char *key, const char *m)
{
    double s;
    return tk_zscore(db, key, m, &s);
}

/* A grouped job claimed the way a lane claim leaves it: row active with
 * `group`, member of B.active, gactive[g] incremented. */
static void grouped_active(const char *id, const char *g)
{
    emq_job j;
    char key[64];
    snprintf(key, sizeof key, J("%s"), id);
    ck_assert_int_eq(emq_enqueue(db, Q, id, "x", 1), EMQ_ENQUEUED);
    tk_hset(db, key, "group", g);
    ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    emq_store *st = emq_db_store(db);
    int64_t a;
    ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
    ck_assert_int_eq(emq_hash_incrby(st, K("gactive"), strlen(K("gactive")),
                                     g, strlen(g), 1, &a), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
}

/* A grouped job waiting in its lane (as lane enqueue leaves it). */
static void grouped_pending(const char *id, const char *g, const char *lane)
{
    char key[64];
    snprintf(key, sizeof key, J("%s"), id);
    tk_hset(db, key, "state", "pending");
    tk_hset(db, key, "attempts", "0");
    tk_hset(db, key, "payload", "x");
    tk_hset(db, key, "group", g);
    tk_zadd(db, lane, id, 0);
}

/* ------------------------------------------------------------ groups */

START_TEST(complete_of_an_active_grouped_job_releases_and_offers)
{
    grouped_active(A, G);
    grouped_pending(B, G, LANE(G));
    str_is(tk_hget(db, K("gactive"), G), "1");
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);
    ck_assert(!tk_exists(db, K("gactive")));       /* 0: field deleted */
    str_is(tk_list(db, K("ring")), G);
    str_is(tk_list(db, K("wake")), "1");
    ck_assert(!tk_exists(db, J(A)));
}
END_TEST

START_TEST(release_does_not_offer_a_group_on_the_ring_paused_or_at_its_limit)
{
    grouped_active(A, G);
    grouped_pending(B, G, LANE(G));
    tk_del(db, K("ring"));
    tk_hset(db, K("gactive"), G, "3");
    tk_hset(db, K("glimit"), G, "2");
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);   /* act 2, lim 2 */
    str_is(tk_hget(db, K("gactive"), G), "2");
    ck_assert(!tk_exists(db, K("ring")));
    ck_assert(!tk_exists(db, K("wake")));

    grouped_active("JOB00000000003", H);
    grouped_pending("JOB00000000004", H, LANE(H));
    tk_sadd(db, K("paused"), H);
    ck_assert_int_eq(emq_complete(db, Q, "JOB00000000003", 1), EMQ_OK);
    ck_assert(!tk_exists(db, K("ring")));

    tk_hset(db, K("glimit"), G, "3");       /* now act 2 < 3: offered once */
    grouped_active("JOB00000000005", G);   /* gactive 3 */
    tk_hset(db, K("gactive"), G, "3");
    tk_hset(db, K("glimit"), G, "3");
    ck_assert_int_eq(emq_complete(db, Q, "JOB00000000005", 1), EMQ_OK);
    str_is(tk_list(db, K("ring")), G);
    grouped_active("JOB00000000006", G);
    ck_assert_int_eq(emq_complete(db, Q, "JOB00000000006", 1), EMQ_OK);
    str_is(tk_list(db, K("ring")), G);     /* already on the ring */
    str_is(tk_list(db, K("wake")), "1");
}
END_TEST

START_TEST(complete_of_an_unclaimed_grouped_job_leaves_the_lane_and_ring)
{
    grouped_pending(A, G, LANE(G));
    tk_zadd(db, K("pending"), A, 0);        /* also flat: left alone */
    tk_hset(db, K("glimit"), H, "1");
    emq_store *st = emq_db_store(db);
    int64_t len;
    ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("ring"), strlen(K("ring")), 1, G, 14,
                                   &len), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("ring"), strlen(K("ring")), 1, H, 14,
                                   &len), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("ring"), strlen(K("ring")), 1, G, 14,
                                   &len), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_OK);
    ck_assert(!tk_exists(db, LANE(G)));
    str_is(tk_list(db, K("ring")), H);
    ck_assert(in_set(K("pending"), A));
}
END_TEST

START_TEST(unclaimed_keeps_the_ring_while_the_lane_has_work)
{
    grouped_pending(A, G, LANE(G));
    grouped_pending(B, G, LANE(G));
    tk_del(db, K("ring"));
    emq_store *st = emq_db_store(db);
    int64_t len;
    ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("ring"), strlen(K("ring")), 1, G, 14,
                                   &len), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 10, 5, "e", 1), EMQ_SCHEDULED);
    str_is(tk_list(db, K("ring")), G);
    ck_assert(!in_set(LANE(G), A));
    ck_assert(in_set(K("schedule"), A));    /* flat schedule, not the lane */
}
END_TEST

START_TEST(retry_of_a_grouped_job_goes_flat_and_promote_routes_it_back)
{
    int64_t n;
    grouped_active(A, G);
    ck_assert_int_eq(emq_retry(db, Q, A, 1, 5, 3, "e", 1), EMQ_SCHEDULED);
    ck_assert(!tk_exists(db, K("gactive")));
    ck_assert(!tk_exists(db, K("ring")));   /* the lane is empty: no offer */
    ck_assert(in_set(K("schedule"), A));
    clk.now = T0 + 5;
    ck_assert_int_eq(emq_promote(db, Q, 10, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert(in_set(LANE(G), A));
    ck_assert(!tk_exists(db, K("pending")));
    str_is(tk_list(db, K("ring")), G);
    str_is(tk_list(db, K("wake")), "1");
    str_is(tk_hget(db, J(A), "state"), "pending");
}
END_TEST

START_TEST(promote_respects_the_limit_and_the_lane_pause)
{
    int64_t n;
    ck_assert_int_eq(emq_enqueue_at(db, Q, A, "a", 1, T0), 3);
    tk_hset(db, J(A), "group", G);
    tk_hset(db, K("gactive"), G, "2");
    tk_hset(db, K("glimit"), G, "2");
    ck_assert_int_eq(emq_promote(db, Q, 10, &n), EMQ_OK);
    ck_assert(in_set(LANE(G), A));
    ck_assert(!tk_exists(db, K("ring")));
    ck_assert_int_eq(emq_enqueue_at(db, Q, B, "b", 1, T0), 3);
    tk_hset(db, J(B), "group", H);
    tk_sadd(db, K("paused"), H);
    ck_assert_int_eq(emq_promote(db, Q, 10, &n), EMQ_OK);
    ck_assert(in_set(LANE(H), B));
    ck_assert(!tk_exists(db, K("ring")));
    ck_assert(!tk_exists(db, K("wake")));
}
END_TEST

START_TEST(reap_of_a_grouped_lease_recovers_it_into_its_lane)
{
    int64_t n;
    grouped_active(A, G);
    grouped_active(B, H);
    tk_hset(db, K("gactive"), H, "2");
    tk_sadd(db, K("paused"), H);
    clk.now = T0 + 1000;
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 2);
    ck_assert(in_set(LANE(G), A));
    ck_assert(in_set(LANE(H), B));
    ck_assert(!tk_exists(db, K("pending")));
    str_is(tk_hget(db, K("gactive"), G), NULL);
    str_is(tk_hget(db, K("gactive"), H), "1");
    str_is(tk_list(db, K("ring")), G);           /* H is paused */
    str_is(tk_hget(db, J(A), "attempts"), "1");
    str_is(tk_hget(db, J(A), "state"), "pending");
}
END_TEST

START_TEST(wake_is_capped_at_64_tokens)
{
    char id[EMQ_ID_SIZE];
    char key[64];
    int64_t n;
    int i;
    for (i = 0; i < 70; i++) {
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        ck_assert_int_eq(emq_enqueue_at(db, Q, id, "x", 1, T0), 3);
        snprintf(key, sizeof key, J("%s"), id);
        tk_hset(db, key, "group", G);
        ck_assert_int_eq(emq_promote(db, Q, 10, &n), EMQ_OK);
        tk_del(db, K("ring"));
    }
    emq_store *st = emq_db_store(db);
    ck_assert_int_eq(emq_store_begin(st, 0, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_len(st, K("wake"), strlen(K("wake")), &n), 0);
    emq_store_rollback(st);
    ck_assert_int_eq(n, 64);
}
END_TEST

/* -------------------------------------------------------------- flow link */

static void parent_held(const char *p, const char *deps)
{
    char key[64];
    snprintf(key, sizeof key, J("%s"), p);
    tk_hset(db, key, "state", "awaiting_children");
    tk_hset(db, key, "attempts", "0");
    tk_hset(db, key, "payload", "parent");
    snprintf(key, sizeof key, J("%s") ":dependencies", p);
    tk_set(db, key, deps);
}

static void child_of(const char *c, const char *p, const char *pq,
                     const char *policy)
{
    char key[64];
    ck_assert_int_eq(emq_enqueue(db, Q, c, "child", 5), EMQ_ENQUEUED);
    snprintf(key, sizeof key, J("%s"), c);
    tk_hset(db, key, "parent", p);
    if (pq) tk_hset(db, key, "parent_queue", pq);
    if (policy) tk_hset(db, key, "parent_policy", policy);
}

START_TEST(same_queue_fan_in_happens_once_and_only_for_active_children)
{
    emq_job j;
    parent_held(P, "2");
    child_of(A, P, NULL, NULL);
    child_of(B, P, Q, "fp");               /* parent_queue = q is same */
    ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_OK);   /* A */
    emq_job_clear(&j);
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);
    str_is(tk_str(db, J(P) ":dependencies"), "1");
    str_is(tk_hget(db, J(P) ":processed", A), A);
    ck_assert(!in_set(K("pending"), P));
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_GONE);
    str_is(tk_str(db, J(P) ":dependencies"), "1");
    /* B completed from pending (token 0): no fan-in. */
    ck_assert_int_eq(emq_complete(db, Q, B, 0), EMQ_OK);
    str_is(tk_str(db, J(P) ":dependencies"), "1");
    str_is(tk_hget(db, J(P) ":processed", B), NULL);
}
END_TEST

START_TEST(the_last_child_releases_the_parent)
{
    emq_job j;
    parent_held(P, "1");
    child_of(A, P, NULL, "id");
    ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);
    str_is(tk_str(db, J(P) ":dependencies"), "0");
    ck_assert(in_set(K("pending"), P));
    str_is(tk_hget(db, J(P), "state"), "pending");
}
END_TEST

START_TEST(cross_queue_children_emit_outbox_entries)
{
    emq_job j;
    static const char want_c[] = "other\0" P "\0" A "\0" A;
    static const char want_f[] = "\0fail\0other\0" P "\0" B "\0id\0bad";
    child_of(A, P, "other", NULL);
    child_of(B, P, "other", "id");
    ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, Q, B, 0, 0, 0, "bad", 3), EMQ_DEAD);
    ck_assert(!tk_exists(db, "emq:{other}:job:" P ":dependencies"));
    emq_store *st = emq_db_store(db);
    emq_buf e = {0};
    ck_assert_int_eq(emq_store_begin(st, 0, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_pop(st, K("flow:outbox"),
                                  strlen(K("flow:outbox")), 0, &e), EMQ_OK);
    ck_assert_uint_eq(e.len, sizeof want_c - 1);
    ck_assert_mem_eq(e.p, want_c, e.len);
    ck_assert_int_eq(emq_list_pop(st, K("flow:outbox"),
                                  strlen(K("flow:outbox")), 0, &e), EMQ_OK);
    ck_assert_uint_eq(e.len, sizeof want_f - 1);
    ck_assert_mem_eq(e.p, want_f, e.len);
    emq_store_rollback(st);
    emq_buf_free(&e);
}
END_TEST

START_TEST(fp_death_kills_the_parent_and_reemits_one_level_up)
{
    static const char want[] = "\0fail\0" Q "\0" GP "\0" P "\0fp\0boom";
    parent_held(GP, "1");
    parent_held(P, "2");
    tk_hset(db, J(P), "parent", GP);
    tk_zadd(db, K("pending"), P, 0);        /* D-14: dead must remove it */
    child_of(A, P, NULL, NULL);
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 0, 0, "boom", 4), EMQ_DEAD);
    str_is(tk_hget(db, J(P) ":failed", A), "boom");
    str_is(tk_hget(db, J(P), "state"), "dead");
    ck_assert(in_set(K("dead"), P));
    ck_assert(!in_set(K("pending"), P));
    str_is(tk_str(db, J(P) ":dependencies"), "2");
    emq_store *st = emq_db_store(db);
    emq_buf e = {0};
    int64_t n;
    ck_assert_int_eq(emq_store_begin(st, 0, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_len(st, K("flow:outbox"),
                                  strlen(K("flow:outbox")), &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_list_pop(st, K("flow:outbox"),
                                  strlen(K("flow:outbox")), 0, &e), EMQ_OK);
    emq_store_rollback(st);
    ck_assert_uint_eq(e.len, sizeof want - 1);
    ck_assert_mem_eq(e.p, want, e.len);
    emq_buf_free(&e);
}
END_TEST

START_TEST(id_death_counts_as_satisfied_and_releases_the_parent)
{
    parent_held(P, "1");
    child_of(A, P, NULL, "id");
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 0, 0, "meh", 3), EMQ_DEAD);
    str_is(tk_hget(db, J(P) ":unsuccessful", A), "meh");
    str_is(tk_str(db, J(P) ":dependencies"), "0");
    str_is(tk_hget(db, J(P), "state"), "pending");
    ck_assert(in_set(K("pending"), P));
    ck_assert(!tk_exists(db, K("flow:outbox")));
    ck_assert(!tk_exists(db, J(P) ":failed"));
}
END_TEST

START_TEST(a_retry_that_only_schedules_leaves_the_parent_alone)
{
    parent_held(P, "1");
    child_of(A, P, NULL, NULL);
    char *before = tk_str(db, J(P) ":dependencies");
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 10, 3, "e", 1), EMQ_SCHEDULED);
    str_is(tk_str(db, J(P) ":dependencies"), before);
    free(before);
    str_is(tk_hget(db, J(P), "state"), "awaiting_children");
}
END_TEST

START_TEST(an_ill_formed_same_queue_parent_is_refused_before_any_write)
{
    child_of(A, "not-an-id", NULL, NULL);
    char *before = tk_dump(db);
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_EID);
    ck_assert_str_eq(emq_errmsg(db), "job_key requires a valid branded id");
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 0, 0, "e", 1), EMQ_EID);
    char *after = tk_dump(db);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
}
END_TEST

Suite *suite_lane(void)
{
    Suite *s = suite_create("lane");
    TCase *t = tcase_create("groups");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, complete_of_an_active_grouped_job_releases_and_offers);
    tcase_add_test(t, release_does_not_offer_a_group_on_the_ring_paused_or_at_its_limit);
    tcase_add_test(t, complete_of_an_unclaimed_grouped_job_leaves_the_lane_and_ring);
    tcase_add_test(t, unclaimed_keeps_the_ring_while_the_lane_has_work);
    tcase_add_test(t, retry_of_a_grouped_job_goes_flat_and_promote_routes_it_back);
    tcase_add_test(t, promote_respects_the_limit_and_the_lane_pause);
    tcase_add_test(t, reap_of_a_grouped_lease_recovers_it_into_its_lane);
    tcase_add_test(t, wake_is_capped_at_64_tokens);
    suite_add_tcase(s, t);
    t = tcase_create("links");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, same_queue_fan_in_happens_once_and_only_for_active_children);
    tcase_add_test(t, the_last_child_releases_the_parent);
    tcase_add_test(t, cross_queue_children_emit_outbox_entries);
    tcase_add_test(t, fp_death_kills_the_parent_and_reemits_one_level_up);
    tcase_add_test(t, id_death_counts_as_satisfied_and_releases_the_parent);
    tcase_add_test(t, a_retry_that_only_schedules_leaves_the_parent_alone);
    tcase_add_test(t, an_ill_formed_same_queue_parent_is_refused_before_any_write);
    suite_add_tcase(s, t);
    return s;
}
