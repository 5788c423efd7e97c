/*
 * test_lane_verbs.c — suite "lane_verbs": the typed calls of the fair lanes
 * (emqlite.h "fair lanes", engine/lane/lanes.c, engine/lane/laneops.c, T3.11 in
 * engine/queue/promote_reap.c): what each returns and fills, the result codes of
 * reassign, the gates (refused before any write), a malformed ring, and
 * fairness across a skewed backlog. The wire replies and keyspaces of
 * every verb are the golden traces' (tests/fixtures/tier3.jsonl).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "suites.h"
#include "tengine.h"
#include "store.h"

emq_store *emq_db_store(emq_db *db);

#define Q "mail"
#define K(sfx) "emq:{" Q "}:" sfx
#define G "PRT0KHTOWnGLuC"
#define H "PRT0NgWEfAEJfs"
#define U "PRT00000000009"
#define LANE(g) "emq:{" Q "}:g:" g ":pending"

static tclock clk;
static emq_db *db;

static void setup(void) { db = topen(&clk); }
static void teardown(void) { emq_close(db); db = NULL; }

/* Job id number n (1..61) as a JOB id. */
static const char *jid(int n)
{
    static char buf[8][EMQ_ID_SIZE];
    static int at;
    char *b = buf[at++ % 8];
    ck_assert_int_eq(emq_id_encode("JOB", (uint64_t)n, b), EMQ_OK);
    return b;
}

static void put(const char *g, int from, int count)
{
    for (int i = from; i < from + count; i++)
        ck_assert_int_eq(emq_lane_enqueue(db, Q, g, jid(i), "p", 1),
                         EMQ_ENQUEUED);
}

static void str_is(char *got, const char *want)
{
    ck_assert_msg(got != NULL, "got nothing, want %s", want);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(lane_claim_fills_the_job_and_its_group)
{
    emq_job j;
    char g[EMQ_ID_SIZE];
    put(G, 1, 2);
    ck_assert_int_eq(emq_lane_claim(db, Q, 30000, &j, g), EMQ_OK);
    ck_assert_str_eq(j.id, jid(1));
    ck_assert_str_eq(g, G);
    ck_assert_int_eq(j.attempts, 1);
    ck_assert_uint_eq(j.payload_len, 1);
    ck_assert_int_eq(j.payload[0], 'p');
    str_is(tk_hget(db, K("gactive"), G), "1");
    ck_assert_int_eq(emq_complete(db, Q, j.id, j.attempts), EMQ_OK);
    ck_assert(!tk_exists(db, K("gactive")));
    emq_job_clear(&j);
}
END_TEST

START_TEST(an_empty_ring_or_a_paused_queue_claims_nothing)
{
    emq_job j;
    emq_lane_batch b;
    char g[EMQ_ID_SIZE];
    ck_assert_int_eq(emq_lane_claim(db, Q, 1000, &j, g), EMQ_EMPTY);
    ck_assert_ptr_null(j.payload);
    put(G, 1, 1);
    ck_assert_int_eq(emq_queue_pause(db, Q), EMQ_OK);
    ck_assert_int_eq(emq_lane_claim(db, Q, 1000, &j, g), EMQ_EMPTY);
    ck_assert_int_eq(emq_lane_wclaim(db, Q, 1000, &b), EMQ_EMPTY);
    ck_assert_uint_eq(b.n, 0);
    ck_assert_int_eq(emq_lane_bclaim(db, Q, 1000, &b), EMQ_EMPTY);
    ck_assert_ptr_null(b.jobs);
    ck_assert_int_eq(tk_zcard(db, LANE(G)), 1);
    str_is(tk_list(db, K("ring")), G);
}
END_TEST

START_TEST(wclaim_serves_the_weight_on_one_deadline)
{
    emq_lane_batch b;
    double s0, s1;
    put(G, 1, 3);
    put(H, 10, 1);
    ck_assert_int_eq(emq_lane_weight(db, Q, G, 2), EMQ_OK);
    clk.now = T0 + 7;
    ck_assert_int_eq(emq_lane_wclaim(db, Q, 5000, &b), EMQ_OK);
    ck_assert_uint_eq(b.n, 2);
    ck_assert_str_eq(b.group, G);
    ck_assert_str_eq(b.jobs[0].id, jid(1));
    ck_assert_str_eq(b.jobs[1].id, jid(2));
    ck_assert(tk_zscore(db, K("active"), jid(1), &s0));
    ck_assert(tk_zscore(db, K("active"), jid(2), &s1));
    ck_assert(s0 == (double)(T0 + 7 + 5000) && s1 == s0);
    str_is(tk_hget(db, K("gactive"), G), "2");
    emq_lane_batch_clear(&b);
    ck_assert_ptr_null(b.jobs);
    ck_assert_uint_eq(b.n, 0);
    /* the rotation moved on: H next, one job (weight 1) */
    ck_assert_int_eq(emq_lane_wclaim(db, Q, 5000, &b), EMQ_OK);
    ck_assert_uint_eq(b.n, 1);
    ck_assert_str_eq(b.group, H);
    emq_lane_batch_clear(&b);
    emq_lane_batch_clear(NULL);
}
END_TEST

START_TEST(bclaim_serves_the_lane_up_to_its_limit)
{
    emq_lane_batch b;
    put(G, 1, 5);
    ck_assert_int_eq(emq_lane_limit(db, Q, G, 3), EMQ_OK);
    ck_assert_int_eq(emq_lane_bclaim(db, Q, 5000, &b), EMQ_OK);
    ck_assert_uint_eq(b.n, 3);
    emq_lane_batch_clear(&b);
    ck_assert(!tk_exists(db, K("ring")));         /* at its ceiling */
    ck_assert_int_eq(emq_lane_bclaim(db, Q, 5000, &b), EMQ_EMPTY);
    ck_assert_int_eq(emq_lane_limit(db, Q, G, 10), EMQ_OK);
    ck_assert_int_eq(emq_lane_bclaim(db, Q, 5000, &b), EMQ_OK);
    ck_assert_uint_eq(b.n, 2);                    /* the rest of the lane */
    emq_lane_batch_clear(&b);
}
END_TEST

START_TEST(reassign_answers_each_outcome)
{
    emq_job j;
    char g[EMQ_ID_SIZE];
    put(G, 1, 2);
    ck_assert_int_eq(emq_enqueue(db, Q, jid(5), "flat", 4), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_reassign(db, Q, jid(2), H), EMQ_OK);
    ck_assert_int_eq(emq_reassign(db, Q, jid(2), H), EMQ_NOOP);
    ck_assert_int_eq(emq_reassign(db, Q, jid(5), H), EMQ_GONE); /* no group */
    ck_assert_int_eq(emq_reassign(db, Q, jid(9), H), EMQ_GONE); /* no row */
    ck_assert_int_eq(emq_lane_claim(db, Q, 1000, &j, g), EMQ_OK);
    ck_assert_str_eq(j.id, jid(1));
    emq_job_clear(&j);
    ck_assert_int_eq(emq_reassign(db, Q, jid(1), H), EMQ_NOTPENDING);
    str_is(tk_hget(db, "emq:{" Q "}:job:JOB00000000002", "group"), H);
}
END_TEST

START_TEST(drain_reap_group_and_the_depth_reads_count)
{
    int64_t n = -1, d[4] = {-1, -1, -1, -1};
    const char *gs[4] = {H, G, U, G};
    emq_job j;
    char g[EMQ_ID_SIZE];
    put(G, 1, 3);
    put(H, 10, 2);
    ck_assert_int_eq(emq_lane_depth(db, Q, G, &n), EMQ_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(emq_lane_depths(db, Q, 4, gs, d), EMQ_OK);
    ck_assert(d[0] == 2 && d[1] == 3 && d[2] == 0 && d[3] == 3);
    ck_assert_int_eq(emq_lane_depths(db, Q, 0, NULL, NULL), EMQ_OK);
    ck_assert_int_eq(emq_lane_claim(db, Q, 10, &j, g), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_lane_drain(db, Q, G, &n), EMQ_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(emq_lane_drain(db, Q, U, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    clk.now = T0 + 11;
    ck_assert_int_eq(emq_lane_reap(db, Q, H, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);                       /* G's lease, not H's */
    ck_assert_int_eq(emq_lane_reap(db, Q, G, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_lane_depth(db, Q, G, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(lane_depths_answers_one_map_entry_per_group)
{
    const char *argv[4] = {Q, G, U, G};
    emq_reply r = {0};
    put(G, 1, 2);
    ck_assert_int_eq(emq_call(db, "lane_depths", 4, argv, NULL, &r), EMQ_OK);
    ck_assert_int_eq(r.type, EMQ_REPLY_MAP);
    ck_assert_uint_eq(r.n, 4);
    ck_assert_str_eq(r.elem[0].str, G);
    ck_assert_int_eq(r.elem[1].integer, 2);
    ck_assert_str_eq(r.elem[2].str, U);
    ck_assert_int_eq(r.elem[3].integer, 0);
    emq_reply_clear(&r);
}
END_TEST

/* Host gates refuse before any write, naming the argument. */
START_TEST(the_gates_refuse_before_any_write)
{
    char *before, *after;
    int64_t n;
    put(G, 1, 1);
    before = tk_dump(db);
    ck_assert_int_eq(emq_lane_enqueue(db, Q, "PRT", jid(2), "p", 1), EMQ_EID);
    ck_assert_str_eq(emq_errmsg(db), "a lane is named by a valid branded id");
    ck_assert_int_eq(emq_lane_enqueue(db, Q, G, "JOB", "p", 1), EMQ_EID);
    ck_assert_str_eq(emq_errmsg(db), "job_key requires a valid branded id");
    ck_assert_int_eq(emq_lane_enqueue(db, "e{q}", G, jid(2), "p", 1),
                     EMQ_EQUEUE);
    ck_assert_int_eq(emq_lane_weight(db, Q, G, 0), EMQ_EINVAL);
    ck_assert(strstr(emq_errmsg(db), "w") != NULL);
    ck_assert_int_eq(emq_lane_limit(db, Q, G, 0), EMQ_EINVAL);
    ck_assert_int_eq(emq_lane_reap(db, Q, G, 0, &n), EMQ_EINVAL);
    ck_assert_int_eq(emq_reassign(db, Q, jid(1), "nope"), EMQ_EID);
    ck_assert_int_eq(emq_lane_pause(db, Q, NULL), EMQ_EID);
    ck_assert_int_eq(emq_lane_claim(db, Q, 0, NULL, NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_lane_wclaim(db, Q, 1000, NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_lane_depths(db, Q, 1, NULL, NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_lane_enqueue(db, Q, G, "ORD0KHTOWnGLuC", "p", 1),
                     EMQ_EKIND);
    ck_assert_str_eq(emq_errmsg(db), "EMQKIND job id must be JOB-namespaced");
    after = tk_dump(db);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
}
END_TEST

/* A ring member that is not a group id (a damaged file): the claim is
 * refused and rolled back whole (the rotation included). */
START_TEST(a_malformed_ring_member_is_refused_and_nothing_changes)
{
    emq_job j;
    char g[EMQ_ID_SIZE], *before, *after;
    put(G, 1, 1);
    tk_del(db, K("ring"));
    emq_store *st = emq_db_store(db);
    int64_t len;
    ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("ring"), strlen(K("ring")), 1,
                                   "short", 5, &len), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("ring"), strlen(K("ring")), 1, G, 14,
                                   &len), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    before = tk_dump(db);
    ck_assert_int_eq(emq_lane_claim(db, Q, 1000, &j, g), EMQ_ECORRUPT);
    after = tk_dump(db);
    ck_assert_str_eq(before, after);
    free(after);
    free(before);
    tk_del(db, K("ring"));
    ck_assert_int_eq(emq_lane_resume(db, Q, G), EMQ_OK);   /* offers G */
    ck_assert_int_eq(emq_lane_claim(db, Q, 1000, &j, g), EMQ_OK);
    emq_job_clear(&j);
}
END_TEST

/* The ring serves lanes in turn: a light lane behind a heavy one is served
 * on the second claim, and the shares stay equal while both have work. */
START_TEST(a_heavy_lane_does_not_starve_a_light_one)
{
    int served[2] = {0, 0};
    emq_job j;
    char g[EMQ_ID_SIZE];
    put(G, 1, 40);
    put(H, 50, 4);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(emq_lane_claim(db, Q, 60000, &j, g), EMQ_OK);
        served[strcmp(g, H) == 0]++;
        ck_assert_int_eq(emq_complete(db, Q, j.id, j.attempts), EMQ_OK);
        emq_job_clear(&j);
    }
    ck_assert_int_eq(served[0], 4);
    ck_assert_int_eq(served[1], 4);
    ck_assert_int_eq(emq_lane_claim(db, Q, 60000, &j, g), EMQ_OK);
    ck_assert_str_eq(g, G);                       /* H drained: G alone */
    emq_job_clear(&j);
    str_is(tk_list(db, K("ring")), G);
}
END_TEST

START_TEST(pause_and_resume_take_a_group_off_and_back_on_the_ring)
{
    emq_job j;
    char g[EMQ_ID_SIZE];
    put(G, 1, 1);
    put(H, 10, 1);
    ck_assert_int_eq(emq_lane_pause(db, Q, G), EMQ_OK);
    str_is(tk_list(db, K("ring")), H);
    ck_assert_int_eq(emq_lane_claim(db, Q, 1000, &j, g), EMQ_OK);
    ck_assert_str_eq(g, H);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_lane_claim(db, Q, 1000, &j, g), EMQ_EMPTY);
    ck_assert_int_eq(emq_lane_resume(db, Q, G), EMQ_OK);
    ck_assert_int_eq(emq_lane_claim(db, Q, 1000, &j, g), EMQ_OK);
    ck_assert_str_eq(g, G);
    emq_job_clear(&j);
}
END_TEST

Suite *suite_lane_verbs(void)
{
    Suite *s = suite_create("lane_verbs");
    TCase *t = tcase_create("typed");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, lane_claim_fills_the_job_and_its_group);
    tcase_add_test(t, an_empty_ring_or_a_paused_queue_claims_nothing);
    tcase_add_test(t, wclaim_serves_the_weight_on_one_deadline);
    tcase_add_test(t, bclaim_serves_the_lane_up_to_its_limit);
    tcase_add_test(t, reassign_answers_each_outcome);
    tcase_add_test(t, drain_reap_group_and_the_depth_reads_count);
    tcase_add_test(t, lane_depths_answers_one_map_entry_per_group);
    tcase_add_test(t, the_gates_refuse_before_any_write);
    tcase_add_test(t, a_malformed_ring_member_is_refused_and_nothing_changes);
    tcase_add_test(t, a_heavy_lane_does_not_starve_a_light_one);
    tcase_add_test(t, pause_and_resume_take_a_group_off_and_back_on_the_ring);
    suite_add_tcase(s, t);
    return s;
}
