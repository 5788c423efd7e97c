/*
 * test_queue.c — suite "queue": the Tier 1 conformance scenarios of
 * PROTOCOL.md §7 and every "consequence to preserve" of §6.1, through the
 * public API with an injected clock (no sleeps), checking replies, error
 * strings and the keyspace through storage/store.h.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "tengine.h"

#define Q "mail"
#define K(sfx) "emq:{" Q "}:" sfx
#define J(id) "emq:{" Q "}:job:" id
#define A "JOB00000000001"
#define B "JOB00000000002"
#define C "JOB00000000003"
#define ORD "ORD0KHTOWnGLuC"

static tclock clk;
static emq_db *db;

static void setup(void) { db = topen(&clk); }
static void teardown(void) { emq_close(db); db = NULL; }

static void fld_is(const char *key, const char *f, const char *want)
{
    char *v = tk_hget(db, key, f);
    if (want == NULL) {
        ck_assert_msg(v == NULL, "%s.%s = %s, want absent", key, f, v);
    } else {
        ck_assert_msg(v != NULL, "%s.%s absent, want %s", key, f, want);
        ck_assert_str_eq(v, want);
    }
    free(v);
}

static double score_of(const char *key, const char *m)
{
    double s = NAN;
    ck_assert_msg(tk_zscore(db, key, m, &s), "%s not in %s", m, key);
    return s;
}

static int in_set(const char *key, const char *m)
{
    double s;
    return tk_zscore(db, key, m, &s);
}

static void claim_ok(const char *want_id, int64_t want_att, int64_t lease)
{
    emq_job j;
    ck_assert_int_eq(emq_claim(db, Q, lease, &j), EMQ_OK);
    ck_assert_str_eq(j.id, want_id);
    ck_assert_int_eq(j.attempts, want_att);
    emq_job_clear(&j);
}

/* ------------------------------------------------------------ §7 scenarios */

START_TEST(fence_stamps_the_wire_identity)
{
    char *v = tk_str(db, "{emq}:version");
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(v, "echomq:4.0.0");
    free(v);
}
END_TEST

START_TEST(mint_enqueue_writes_exactly_three_fields)
{
    char id[EMQ_ID_SIZE];
    char key[64];
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, Q, id, "cargo", 5), EMQ_ENQUEUED);
    snprintf(key, sizeof key, J("%s"), id);
    ck_assert_int_eq(tk_hlen(db, key), 3);
    fld_is(key, "state", "pending");
    fld_is(key, "attempts", "0");
    fld_is(key, "payload", "cargo");
    ck_assert(score_of(K("pending"), id) == 0);
    ck_assert_int_eq(tk_zcard(db, K("pending")), 1);
}
END_TEST

START_TEST(duplicate_keeps_the_first_payload_through_every_admission)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "first", 5), EMQ_ENQUEUED);
    char *before = tk_dump(db);
    ck_assert_int_eq(emq_enqueue(db, Q, A, "second", 6), EMQ_DUPLICATE);
    ck_assert_int_eq(emq_enqueue_at(db, Q, A, "third", 5, T0 - 1000),
                     EMQ_DUPLICATE);
    ck_assert_int_eq(emq_enqueue_in(db, Q, A, "fourth", 6, 0), EMQ_DUPLICATE);
    char *after = tk_dump(db);
    ck_assert_str_eq(before, after);
    fld_is(J(A), "payload", "first");
    free(before);
    free(after);
}
END_TEST

START_TEST(duplicate_counts_any_key_at_the_row_name)
{
    tk_set(db, J(A), "not a hash");
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_DUPLICATE);
    ck_assert_int_eq(tk_type(db, J(A)), EMQ_T_STRING);
    ck_assert(!tk_exists(db, K("pending")));
}
END_TEST

START_TEST(kind_refuses_a_wellformed_ORD_id_and_writes_nothing)
{
    ck_assert_int_eq(emq_enqueue(db, Q, ORD, "x", 1), EMQ_EKIND);
    ck_assert_str_eq(emq_errmsg(db), "EMQKIND job id must be JOB-namespaced");
    ck_assert_int_eq(emq_enqueue_at(db, Q, ORD, "x", 1, T0), EMQ_EKIND);
    ck_assert_str_eq(emq_errmsg(db), "EMQKIND job id must be JOB-namespaced");
    ck_assert_int_eq(emq_enqueue_in(db, Q, ORD, "x", 1, 600000), EMQ_EKIND);
    ck_assert(!tk_exists(db, J(ORD)));
    /* The other verbs do not check the kind. */
    ck_assert_int_eq(emq_complete(db, Q, ORD, 0), EMQ_GONE);
    ck_assert_int_eq(emq_retry(db, Q, ORD, 0, 600000, 3, "e", 1), EMQ_ESTALE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE job gone");
    ck_assert_int_eq(emq_lock_extend(db, Q, ORD, 0, 600000), EMQ_GONE);
    char *d = tk_dump(db);
    ck_assert_str_eq(d, "");
    free(d);
}
END_TEST

START_TEST(order_browse_walks_newest_first_and_claim_takes_the_oldest)
{
    char id[3][EMQ_ID_SIZE], got[5][EMQ_ID_SIZE];
    size_t n;
    int i;
    for (i = 0; i < 3; i++) ck_assert_int_eq(emq_mint(db, "JOB", id[i]), 0);
    /* Enqueued out of mint order: the order is the id's, not the call's. */
    ck_assert_int_eq(emq_enqueue(db, Q, id[1], "b", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, id[2], "c", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, id[0], "a", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_browse(db, Q, 5, got, &n), EMQ_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(got[0], id[2]);
    ck_assert_str_eq(got[1], id[1]);
    ck_assert_str_eq(got[2], id[0]);
    ck_assert_int_eq(emq_browse(db, Q, 2, got, &n), EMQ_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(got[1], id[1]);
    claim_ok(id[0], 1, 1000);
}
END_TEST

START_TEST(claim_returns_token_1_and_moves_row_to_active)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "hello", 5), EMQ_ENQUEUED);
    clk.now = T0 + 7;
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, A);
    ck_assert_int_eq(j.attempts, 1);
    ck_assert_uint_eq(j.payload_len, 5);
    ck_assert_mem_eq(j.payload, "hello", 5);
    ck_assert_int_eq(j.payload[5], 0);
    emq_job_clear(&j);
    ck_assert_ptr_null(j.payload);
    fld_is(J(A), "state", "active");
    fld_is(J(A), "attempts", "1");
    ck_assert(score_of(K("active"), A) == (double)(T0 + 7 + 30000));
    ck_assert(!tk_exists(db, K("pending")));
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_EMPTY);
}
END_TEST

START_TEST(stale_token_is_refused_and_changes_nothing)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 30000);
    char *before = tk_dump(db);
    ck_assert_int_eq(emq_complete(db, Q, A, 2), EMQ_ESTALE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE complete token mismatch");
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_ESTALE);
    ck_assert_int_eq(emq_complete(db, Q, A, -1), EMQ_ESTALE);
    char *after = tk_dump(db);
    ck_assert_str_eq(before, after);
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);
    ck_assert_str_eq(emq_errmsg(db), "");
    free(before);
    free(after);
}
END_TEST

START_TEST(complete_deletes_the_row_and_counts_it)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 30000);
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);
    ck_assert(!tk_exists(db, J(A)));
    ck_assert(!tk_exists(db, K("active")));
    fld_is(K("metrics:completed"), "count", "1");
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_GONE);
    fld_is(K("metrics:completed"), "count", "1");
}
END_TEST

START_TEST(retry_parks_scheduled_then_promote_releases_and_claim_mints_2)
{
    int64_t n;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 30000);
    clk.now = T0 + 10;
    ck_assert_int_eq(emq_retry(db, Q, A, 1, 50, 3, "boom", 4), EMQ_SCHEDULED);
    fld_is(J(A), "state", "scheduled");
    fld_is(J(A), "last_error", "boom");
    fld_is(J(A), "attempts", "1");
    ck_assert(score_of(K("schedule"), A) == (double)(T0 + 60));
    ck_assert(!tk_exists(db, K("active")));
    clk.now = T0 + 59;
    ck_assert_int_eq(emq_promote(db, Q, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    clk.now = T0 + 60;
    ck_assert_int_eq(emq_promote(db, Q, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    fld_is(J(A), "state", "pending");
    ck_assert(!tk_exists(db, K("schedule")));
    claim_ok(A, 2, 30000);
}
END_TEST

START_TEST(dead_retry_at_the_cap_dead_letters)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 30000);
    ck_assert_int_eq(emq_retry(db, Q, A, 1, 0, 1, "fatal", 5), EMQ_DEAD);
    fld_is(J(A), "state", "dead");
    fld_is(J(A), "last_error", "fatal");
    fld_is(J(A), "attempts", "1");
    ck_assert(score_of(K("dead"), A) == 0);
    ck_assert(!tk_exists(db, K("active")));
    ck_assert(!tk_exists(db, K("schedule")));
    fld_is(K("metrics:failed"), "count", "1");
}
END_TEST

START_TEST(reap_returns_a_lapsed_lease_and_the_old_token_goes_stale)
{
    int64_t n;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 30);
    clk.now = T0 + 29;
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    clk.now = T0 + 30;              /* deadline <= NOW is lapsed */
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    fld_is(J(A), "state", "pending");
    fld_is(J(A), "attempts", "1");
    ck_assert(score_of(K("pending"), A) == 0);
    claim_ok(A, 2, 30000);
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_ESTALE);
    ck_assert_int_eq(emq_complete(db, Q, A, 2), EMQ_OK);
}
END_TEST

START_TEST(schedule_enqueue_in_is_unclaimable_until_promoted)
{
    int64_t n;
    emq_job j;
    ck_assert_int_eq(emq_enqueue_in(db, Q, A, "later", 5, 30), EMQ_SCHEDULED);
    fld_is(J(A), "state", "scheduled");
    ck_assert(score_of(K("schedule"), A) == (double)(T0 + 30));
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_EMPTY);
    clk.now = T0 + 50;
    ck_assert_int_eq(emq_promote(db, Q, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    claim_ok(A, 1, 30000);
}
END_TEST

/* T5.10 exponential(base, cap) at attempts: min(base * 2^(a-1), cap). */
static int64_t expo(int64_t base, int64_t cap, int64_t a)
{
    int64_t d = base;
    while (--a > 0 && d < cap) d *= 2;
    return d < cap ? d : cap;
}

START_TEST(backoff_caller_side_exponential_dead_letters_on_the_third_try)
{
    int64_t n, a;
    char err[32];
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(expo(100, 10000, 3), 400);
    ck_assert_int_eq(expo(100, 10000, 20), 10000);
    for (a = 1; a <= 3; a++) {
        emq_job j;
        ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_OK);
        ck_assert_int_eq(j.attempts, a);
        emq_job_clear(&j);
        int64_t d = expo(1, 10, a);
        snprintf(err, sizeof err, "boom %lld", (long long)a);
        int rc = emq_retry(db, Q, A, a, d, 3, err, strlen(err));
        if (a < 3) {
            ck_assert_int_eq(rc, EMQ_SCHEDULED);
            ck_assert(score_of(K("schedule"), A) == (double)(clk.now + d));
            clk.now += d;
            ck_assert_int_eq(emq_promote(db, Q, 100, &n), EMQ_OK);
            ck_assert_int_eq(n, 1);
        } else {
            ck_assert_int_eq(rc, EMQ_DEAD);
        }
    }
    fld_is(J(A), "last_error", "boom 3");
    fld_is(J(A), "state", "dead");
}
END_TEST

START_TEST(queue_pause_makes_claim_empty_and_resume_serves)
{
    emq_job j;
    int64_t n;
    emq_stats s;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_queue_pause(db, Q), EMQ_OK);
    fld_is(K("meta"), "paused", "1");
    ck_assert_int_eq(emq_queue_pause(db, Q), EMQ_OK);
    ck_assert_int_eq(emq_stats_get(db, Q, &s), EMQ_OK);
    ck_assert_int_eq(s.paused, 1);
    char *before = tk_dump(db);
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_EMPTY);
    char *after = tk_dump(db);
    ck_assert_str_eq(before, after);
    ck_assert_int_eq(emq_pending_size(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_queue_resume(db, Q), EMQ_OK);
    ck_assert(!tk_exists(db, K("meta")));
    ck_assert_int_eq(emq_queue_resume(db, Q), EMQ_OK);
    claim_ok(A, 1, 30000);
    free(before);
    free(after);
}
END_TEST

START_TEST(lock_extend_survives_a_reap_and_fences_tokens)
{
    int64_t n;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 50);
    clk.now = T0 + 10;
    ck_assert_int_eq(emq_lock_extend(db, Q, A, 1, 60000), EMQ_OK);
    ck_assert(score_of(K("active"), A) == (double)(T0 + 10 + 60000));
    clk.now = T0 + 120;
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    fld_is(J(A), "state", "active");
    ck_assert_int_eq(emq_lock_extend(db, Q, A, 2, 60000), EMQ_ESTALE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE extend token mismatch");
    ck_assert_int_eq(emq_lock_extend(db, Q, B, 1, 60000), EMQ_GONE);
}
END_TEST

START_TEST(extend_locks_batch_reports_the_wrong_token_and_the_missing)
{
    const char *ids[3] = {A, B, C};
    int64_t tok[3] = {1, 7, 1};
    int failed[3] = {9, 9, 9};
    size_t nf = 99;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "a", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, B, "b", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 100);
    claim_ok(B, 1, 100);
    clk.now = T0 + 5;
    ck_assert_int_eq(emq_lock_extend_many(db, Q, 3, ids, tok, 60000, failed, &nf),
                     EMQ_OK);
    ck_assert_uint_eq(nf, 2);
    ck_assert_int_eq(failed[0], 0);
    ck_assert_int_eq(failed[1], 1);
    ck_assert_int_eq(failed[2], 1);
    ck_assert(score_of(K("active"), A) == (double)(T0 + 5 + 60000));
    ck_assert(score_of(K("active"), B) == (double)(T0 + 100));
    ck_assert(!tk_exists(db, J(C)));
    ck_assert_int_eq(emq_lock_extend_many(db, Q, 0, NULL, NULL, 1, NULL, &nf),
                     EMQ_OK);
    ck_assert_uint_eq(nf, 0);
}
END_TEST

/* ------------------------------------------------ §6.1 consequences (T1.x) */

START_TEST(promoted_jobs_sort_by_id_not_by_run_at)
{
    int64_t n;
    char got[3][EMQ_ID_SIZE];
    size_t c;
    ck_assert_int_eq(emq_enqueue_at(db, Q, C, "c", 1, T0 - 3000), 3);
    ck_assert_int_eq(emq_enqueue_at(db, Q, A, "a", 1, T0 - 1000), 3);
    ck_assert_int_eq(emq_enqueue_at(db, Q, B, "b", 1, T0 - 2000), 3);
    ck_assert_int_eq(emq_promote(db, Q, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(emq_browse(db, Q, 3, got, &c), EMQ_OK);
    ck_assert_str_eq(got[0], C);
    ck_assert_str_eq(got[2], A);
    claim_ok(A, 1, 1000);
}
END_TEST

START_TEST(promote_takes_at_most_batch_in_score_order)
{
    int64_t n;
    ck_assert_int_eq(emq_enqueue_at(db, Q, A, "a", 1, T0 - 1), 3);
    ck_assert_int_eq(emq_enqueue_at(db, Q, B, "b", 1, T0 - 2), 3);
    ck_assert_int_eq(emq_enqueue_at(db, Q, C, "c", 1, T0 + 1), 3);
    ck_assert_int_eq(emq_promote(db, Q, 1, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert(in_set(K("pending"), B));
    ck_assert(in_set(K("schedule"), A));
    ck_assert_int_eq(emq_promote(db, Q, 5, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert(in_set(K("schedule"), C));
    ck_assert_int_eq(emq_promote(db, Q, 0, &n), EMQ_EINVAL);
}
END_TEST

START_TEST(enqueue_at_scores_are_doubles_beyond_2_pow_53)
{
    int64_t n;
    ck_assert_int_eq(emq_enqueue_at(db, Q, A, "a", 1,
                                    INT64_C(9007199254740993)), 3);
    ck_assert_int_eq(emq_enqueue_at(db, Q, B, "b", 1,
                                    -INT64_C(9007199254740993)), 3);
    ck_assert_int_eq(emq_enqueue_at(db, Q, C, "c", 1, -1), 3);
    ck_assert(score_of(K("schedule"), A) == 9007199254740992.0);
    ck_assert(score_of(K("schedule"), B) == -9007199254740992.0);
    ck_assert_int_eq(emq_promote(db, Q, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 2);
    ck_assert(in_set(K("schedule"), A));
}
END_TEST

START_TEST(claim_reads_any_value_of_meta_paused_as_paused)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "a", 1), EMQ_ENQUEUED);
    tk_hset(db, K("meta"), "paused", "0");
    ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_EMPTY);
    ck_assert(in_set(K("pending"), A));
    ck_assert_int_eq(emq_queue_resume(db, Q), EMQ_OK);
    claim_ok(A, 1, 1000);
}
END_TEST

START_TEST(pause_is_ignored_by_admissions_promote_and_reap)
{
    int64_t n;
    ck_assert_int_eq(emq_queue_pause(db, Q), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, Q, A, "a", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue_in(db, Q, B, "b", 1, 0), EMQ_SCHEDULED);
    ck_assert_int_eq(emq_promote(db, Q, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_lock_extend(db, Q, A, 0, 1), EMQ_OK);
    clk.now = T0 + 1;
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(claim_over_a_missing_row_recreates_a_partial_row_with_nil_payload)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    tk_del(db, J(A));
    ck_assert_int_eq(emq_claim(db, Q, 600000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, A);
    ck_assert_int_eq(j.attempts, 1);
    ck_assert_ptr_null(j.payload);
    ck_assert_uint_eq(j.payload_len, 0);
    emq_job_clear(&j);
    ck_assert_int_eq(tk_hlen(db, J(A)), 2);
    fld_is(J(A), "attempts", "1");
    fld_is(J(A), "state", "active");
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);
    ck_assert(!tk_exists(db, J(A)));
}
END_TEST

START_TEST(claim_does_not_revalidate_the_popped_id)
{
    emq_job j;
    tk_zadd(db, K("pending"), ORD, 0);
    ck_assert_int_eq(emq_claim(db, Q, 600000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, ORD);
    ck_assert_ptr_null(j.payload);
    emq_job_clear(&j);
    fld_is(J(ORD), "attempts", "1");
    ck_assert_int_eq(emq_complete(db, Q, ORD, 1), EMQ_OK);
    fld_is(K("metrics:completed"), "count", "1");
}
END_TEST

START_TEST(claim_with_an_empty_payload_returns_an_empty_buffer)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, Q, A, NULL, 0), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, Q, 600000, &j), EMQ_OK);
    ck_assert_ptr_nonnull(j.payload);
    ck_assert_uint_eq(j.payload_len, 0);
    emq_job_clear(&j);
}
END_TEST

START_TEST(binary_payloads_and_errors_round_trip)
{
    static const unsigned char p[] = {0, 'a', 0xff, 0xfe, 0, '\n'};
    static const unsigned char e[] = {'e', 0, 0x80};
    emq_job j;
    emq_field *f;
    size_t n, i;
    int seen = 0;
    ck_assert_int_eq(emq_enqueue(db, Q, A, p, sizeof p), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_OK);
    ck_assert_uint_eq(j.payload_len, sizeof p);
    ck_assert_mem_eq(j.payload, p, sizeof p);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_retry(db, Q, A, 1, 0, 3, e, sizeof e), EMQ_SCHEDULED);
    ck_assert_int_eq(emq_job_get(db, Q, A, &f, &n), EMQ_OK);
    for (i = 0; i < n; i++) {
        if (strcmp(f[i].name, "last_error") == 0) {
            ck_assert_uint_eq(f[i].value_len, sizeof e);
            ck_assert_mem_eq(f[i].value, e, sizeof e);
            seen++;
        }
        if (strcmp(f[i].name, "payload") == 0) {
            ck_assert_uint_eq(f[i].value_len, sizeof p);
            ck_assert_mem_eq(f[i].value, p, sizeof p);
            seen++;
        }
    }
    ck_assert_int_eq(seen, 2);
    emq_fields_free(f, n);
}
END_TEST

START_TEST(token_0_completes_a_never_claimed_pending_job)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_OK);
    ck_assert(!tk_exists(db, J(A)));
    ck_assert(!tk_exists(db, K("pending")));
    fld_is(K("metrics:completed"), "count", "1");
}
END_TEST

START_TEST(completing_a_scheduled_job_leaves_its_id_in_schedule)
{
    int64_t n;
    ck_assert_int_eq(emq_enqueue_at(db, Q, A, "x", 1, T0 + 100), 3);
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_OK);
    ck_assert(!tk_exists(db, J(A)));
    ck_assert(in_set(K("schedule"), A));
    clk.now = T0 + 100;
    ck_assert_int_eq(emq_promote(db, Q, 10, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    /* Promote recreates a one-field row. */
    ck_assert_int_eq(tk_hlen(db, J(A)), 1);
    fld_is(J(A), "state", "pending");
    ck_assert(in_set(K("pending"), A));
}
END_TEST

START_TEST(completing_a_dead_job_leaves_its_id_in_dead)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 0, 0, "e", 1), EMQ_DEAD);
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_OK);
    ck_assert(!tk_exists(db, J(A)));
    ck_assert(in_set(K("dead"), A));
}
END_TEST

START_TEST(completing_a_pending_and_extended_job_leaves_its_id_in_pending)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_lock_extend(db, Q, A, 0, 1000), EMQ_OK);
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_OK);
    ck_assert(!tk_exists(db, J(A)));
    ck_assert(!tk_exists(db, K("active")));
    ck_assert(in_set(K("pending"), A));
}
END_TEST

START_TEST(complete_answers_gone_for_a_row_without_attempts)
{
    tk_hset(db, J(A), "state", "pending");
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_GONE);
    ck_assert_int_eq(emq_lock_extend(db, Q, A, 0, 10), EMQ_GONE);
    ck_assert(tk_exists(db, J(A)));
}
END_TEST

START_TEST(retry_keeps_attempts_and_a_missing_row_is_stale_gone)
{
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 0, 3, "e", 1), EMQ_ESTALE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE job gone");
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_retry(db, Q, A, 1, 0, 3, "e", 1), EMQ_ESTALE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE retry token mismatch");
    /* Token 0 reschedules a never-claimed pending job, out of pending. */
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 600000, 3, "never ran", 9),
                     EMQ_SCHEDULED);
    fld_is(J(A), "attempts", "0");
    ck_assert(!tk_exists(db, K("pending")));
    ck_assert(score_of(K("schedule"), A) == (double)(T0 + 600000));
}
END_TEST

START_TEST(retry_of_a_dead_row_repeats_the_dead_arm)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 1000);
    ck_assert_int_eq(emq_retry(db, Q, A, 1, 0, 1, "one", 3), EMQ_DEAD);
    ck_assert_int_eq(emq_retry(db, Q, A, 1, 0, 1, "two", 3), EMQ_DEAD);
    fld_is(K("metrics:failed"), "count", "2");
    fld_is(J(A), "last_error", "two");
    /* Below the cap it reschedules while the id stays in dead. */
    ck_assert_int_eq(emq_retry(db, Q, A, 1, 5, 9, "three", 5), EMQ_SCHEDULED);
    ck_assert(in_set(K("dead"), A));
    ck_assert(in_set(K("schedule"), A));
    fld_is(J(A), "state", "scheduled");
}
END_TEST

START_TEST(max_attempts_0_dead_letters_at_token_0)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_retry(db, Q, A, 0, 0, 0, "max zero", 8), EMQ_DEAD);
    ck_assert(!tk_exists(db, K("pending")));
    ck_assert(in_set(K("dead"), A));
}
END_TEST

START_TEST(reap_caps_at_100_per_call)
{
    char id[EMQ_ID_SIZE];
    int64_t n;
    int i;
    for (i = 0; i < 150; i++) {
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        ck_assert_int_eq(emq_enqueue(db, Q, id, "x", 1), EMQ_ENQUEUED);
        ck_assert_int_eq(emq_lock_extend(db, Q, id, 0, 1 + i), EMQ_OK);
    }
    clk.now = T0 + 1000;
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 100);
    ck_assert_int_eq(tk_zcard(db, K("active")), 50);
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 50);
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(reap_over_a_missing_row_recreates_a_one_field_row)
{
    int64_t n;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 1);
    tk_del(db, J(A));
    clk.now = T0 + 100;
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(tk_hlen(db, J(A)), 1);
    fld_is(J(A), "state", "pending");
    claim_ok(A, 1, 1000);   /* attempts absent starts at 0 */
}
END_TEST

START_TEST(extend_lock_inserts_a_job_that_is_not_active)
{
    ck_assert_int_eq(emq_enqueue(db, Q, A, "a", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue_at(db, Q, B, "b", 1, T0 + 5000), 3);
    ck_assert_int_eq(emq_enqueue(db, Q, C, "c", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_retry(db, Q, C, 0, 0, 0, "e", 1), EMQ_DEAD);
    ck_assert_int_eq(emq_lock_extend(db, Q, A, 0, 100), EMQ_OK);
    ck_assert_int_eq(emq_lock_extend(db, Q, B, 0, 100), EMQ_OK);
    ck_assert_int_eq(emq_lock_extend(db, Q, C, 0, 100), EMQ_OK);
    ck_assert_int_eq(tk_zcard(db, K("active")), 3);
    ck_assert(in_set(K("pending"), A));
    ck_assert(in_set(K("schedule"), B));
    ck_assert(in_set(K("dead"), C));
    fld_is(J(A), "state", "pending");
}
END_TEST

START_TEST(extend_locks_shares_one_deadline_and_accepts_duplicates_and_ORD)
{
    const char *ids[5] = {A, A, A, B, ORD};
    int64_t tok[5] = {1, 1, 2, 0, 0};
    int failed[5];
    size_t nf;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "a", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, B, "b", 1), EMQ_ENQUEUED);
    claim_ok(A, 1, 600000);
    clk.reads = 0;
    ck_assert_int_eq(emq_lock_extend_many(db, Q, 5, ids, tok, 900000, failed, &nf),
                     EMQ_OK);
    ck_assert_int_eq(clk.reads, 1);
    ck_assert_uint_eq(nf, 2);
    ck_assert_int_eq(failed[0] + failed[1] + failed[3], 0);
    ck_assert_int_eq(failed[2], 1);
    ck_assert_int_eq(failed[4], 1);
    ck_assert(score_of(K("active"), A) == (double)(T0 + 900000));
    ck_assert(score_of(K("active"), B) == (double)(T0 + 900000));
}
END_TEST

START_TEST(pending_size_and_browse_read_only_the_flat_set)
{
    int64_t n;
    size_t c;
    char got[1][EMQ_ID_SIZE];
    ck_assert_int_eq(emq_pending_size(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(emq_browse(db, Q, 1, got, &c), EMQ_OK);
    ck_assert_uint_eq(c, 0);
    tk_zadd(db, "emq:{" Q "}:g:PRT0KHTOWnGLuC:pending", A, 0);
    ck_assert_int_eq(emq_pending_size(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(emq_browse(db, Q, 0, got, &c), EMQ_EINVAL);
}
END_TEST

START_TEST(enqueue_many_runs_each_item_in_order_and_reports_verdicts)
{
    emq_item it[4] = {{A, "a", 1}, {ORD, "o", 1}, {A, "dup", 3}, {B, "b", 1}};
    int v[4] = {0};
    ck_assert_int_eq(emq_enqueue_many(db, Q, it, 4, v), EMQ_OK);
    ck_assert_int_eq(v[0], EMQ_ENQUEUED);
    ck_assert_int_eq(v[1], EMQ_EKIND);
    ck_assert_int_eq(v[2], EMQ_DUPLICATE);
    ck_assert_int_eq(v[3], EMQ_ENQUEUED);
    fld_is(J(A), "payload", "a");
    ck_assert_int_eq(tk_zcard(db, K("pending")), 2);
    ck_assert_int_eq(emq_enqueue_many(db, Q, it, 0, v), EMQ_EEMPTY);
    ck_assert_str_eq(emq_errmsg(db), "empty_pipeline");
}
END_TEST

START_TEST(enqueue_many_gates_every_id_before_any_item_runs)
{
    emq_item it[2] = {{A, "a", 1}, {"JOB0000000000", "short", 5}};
    int v[2];
    ck_assert_int_eq(emq_enqueue_many(db, Q, it, 2, v), EMQ_EID);
    ck_assert(!tk_exists(db, J(A)));
}
END_TEST

/* The same state on two handles: seeded jobs, a ghost member (in pending
 * without a row), and in the second queue a pending member at another score
 * (a raw write) that the batch must move to 0. */
static void many_seed(emq_db *h)
{
    tk_zadd(h, "emq:{" Q "}:pending", "JOB0000000000G", 0);
    tk_zadd(h, "emq:{other}:pending", "JOB0000000000M", 7);
    for (int i = 0; i < 5; i++) {
        char id[32];
        snprintf(id, sizeof id, "JOB00000000%03d", (900 + i) % 1000);
        ck_assert_int_eq(emq_enqueue(h, Q, id, "old", 3), EMQ_ENQUEUED);
    }
}

/* T1.2 is T1.1 per item: a batch of 107 (runs of EMQ_Z_RUN new members and
 * a remainder, duplicates inside a run, rows that exist, the ghost, ORD ids)
 * on one handle, the same items one enqueue at a time on another: the same
 * verdicts and the same keyspace, on a set known flat, on one holding
 * another score, and on a queue whose pending set does not exist yet. */
START_TEST(a_big_batch_equals_its_items_enqueued_one_by_one)
{
    static const char *qs[3] = {Q, "other", "fresh"};
    static char ids[107][32];
    emq_item it[107];
    int v[107];
    tclock c2 = clk;
    emq_db *one = topen(&c2);
    many_seed(db);
    many_seed(one);
    for (int i = 0; i < 107; i++) {
        int k = i < 80 ? i : i < 90 ? i - 75 : i - 90;
        if (i >= 90 && i < 95) k = 900 + i - 90;
        snprintf(ids[i], sizeof ids[i], "%s%011d", i == 50 || i == 99
                 ? "ORD" : "JOB", k);
        it[i] = (emq_item){ids[i], ids[i], (size_t)(i % 7)};
    }
    memcpy(ids[95], "JOB0000000000G", EMQ_ID_SIZE);
    memcpy(ids[96], "JOB0000000000M", EMQ_ID_SIZE);
    for (int q = 0; q < 3; q++) {
        ck_assert_int_eq(emq_enqueue_many(db, qs[q], it, 107, v), EMQ_OK);
        for (int i = 0; i < 107; i++)
            ck_assert_int_eq(v[i], emq_enqueue(one, qs[q], it[i].id,
                                               it[i].payload, it[i].len));
    }
    /* 5 seeded, the ghost, 79 new ids of the first 80 (one is ORD), M */
    ck_assert_int_eq(tk_zcard(db, "emq:{" Q "}:pending"), 5 + 1 + 79 + 1);
    ck_assert_double_eq(score_of("emq:{other}:pending", "JOB0000000000M"), 0);
    char *a = tk_dump(db), *b = tk_dump(one);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    emq_close(one);
}
END_TEST

/* ------------------------------------------------- host gates, errors, clock */

START_TEST(host_gates_refuse_before_any_store_access)
{
    emq_job j;
    int64_t n;
    char big[8];
    ck_assert_int_eq(emq_enqueue(db, "", A, "x", 1), EMQ_EQUEUE);
    ck_assert_int_eq(emq_enqueue(db, "emq", A, "x", 1), EMQ_EQUEUE);
    ck_assert_int_eq(emq_enqueue(db, "a{b}", A, "x", 1), EMQ_EQUEUE);
    ck_assert_int_eq(emq_enqueue(db, NULL, A, "x", 1), EMQ_EQUEUE);
    ck_assert_int_eq(emq_claim(db, "bad queue", 10, &j), EMQ_EQUEUE);
    ck_assert_int_eq(emq_enqueue(db, Q, "JOB0000000000", "x", 1), EMQ_EID);
    ck_assert_str_eq(emq_errmsg(db), "job_key requires a valid branded id");
    ck_assert_int_eq(emq_enqueue(db, Q, "JOBzzzzzzzzzzz", "x", 1), EMQ_EID);
    ck_assert_int_eq(emq_enqueue(db, Q, "job00000000001", "x", 1), EMQ_EID);
    ck_assert_int_eq(emq_complete(db, Q, NULL, 0), EMQ_EID);
    ck_assert_int_eq(emq_claim(db, Q, 0, &j), EMQ_EINVAL);
    ck_assert_int_eq(emq_claim(db, Q, -5, &j), EMQ_EINVAL);
    ck_assert_int_eq(emq_claim(db, Q, 5, NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_enqueue_in(db, Q, A, "x", 1, -1), EMQ_EINVAL);
    ck_assert_int_eq(emq_retry(db, Q, A, 0, -1, 3, "e", 1), EMQ_EINVAL);
    ck_assert_int_eq(emq_lock_extend(db, Q, A, 0, 0), EMQ_EINVAL);
    ck_assert_int_eq(emq_enqueue(db, Q, A, NULL, 3), EMQ_EINVAL);
    ck_assert_int_eq(emq_promote(db, Q, -1, &n), EMQ_EINVAL);
    ck_assert_int_eq(clk.reads, 0);
    char *d = tk_dump(db);
    ck_assert_str_eq(d, "");
    free(d);
    (void)big;
}
END_TEST

START_TEST(payload_over_max_payload_is_too_big)
{
    emq_options o;
    emq_db *small;
    emq_options_init(&o);
    o.max_payload = 4;
    ck_assert_int_eq(emq_open(":memory:", &o, &small), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(small, Q, A, "12345", 5), EMQ_ETOOBIG);
    ck_assert_int_eq(emq_enqueue(small, Q, A, "1234", 4), EMQ_ENQUEUED);
    emq_close(small);
}
END_TEST

START_TEST(every_transition_reads_the_clock_exactly_once)
{
    emq_job j;
    int64_t n;
    size_t c;
    char got[2][EMQ_ID_SIZE];
    emq_stats s;
#define ONCE(call) do { clk.reads = 0; call; ck_assert_int_eq(clk.reads, 1); \
    } while (0)
    ONCE(ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED));
    ONCE(ck_assert_int_eq(emq_enqueue_in(db, Q, B, "x", 1, 0), 3));
    ONCE(ck_assert_int_eq(emq_promote(db, Q, 1, &n), EMQ_OK));
    ONCE(ck_assert_int_eq(emq_claim(db, Q, 10, &j), EMQ_OK));
    emq_job_clear(&j);
    ONCE(ck_assert_int_eq(emq_lock_extend(db, Q, A, 1, 10), EMQ_OK));
    ONCE(ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK));
    ONCE(ck_assert_int_eq(emq_retry(db, Q, A, 1, 0, 5, "e", 1), 3));
    ONCE(ck_assert_int_eq(emq_complete(db, Q, B, 0), EMQ_OK));
    ONCE(ck_assert_int_eq(emq_browse(db, Q, 2, got, &c), EMQ_OK));
    ONCE(ck_assert_int_eq(emq_pending_size(db, Q, &n), EMQ_OK));
    ONCE(ck_assert_int_eq(emq_queue_pause(db, Q), EMQ_OK));
    ONCE(ck_assert_int_eq(emq_stats_get(db, Q, &s), EMQ_OK));
#undef ONCE
}
END_TEST

START_TEST(wrongtype_rolls_back_and_leaves_the_handle_usable)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "x", 1), EMQ_ENQUEUED);
    tk_del(db, J(A));
    tk_set(db, J(A), "a string");
    char *before = tk_dump(db);
    ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_EWRONGTYPE);
    ck_assert_str_eq(emq_errmsg(db),
        "WRONGTYPE Operation against a key holding the wrong kind of value");
    char *after = tk_dump(db);
    ck_assert_str_eq(before, after);     /* the pop was rolled back */
    ck_assert_int_eq(emq_complete(db, Q, A, 0), EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_enqueue(db, Q, B, "y", 1), EMQ_ENQUEUED);
    ck_assert_str_eq(emq_errmsg(db), "");
    free(before);
    free(after);
}
END_TEST

START_TEST(job_get_stats_and_queues_read_the_keyspace)
{
    emq_field *f;
    size_t n, i;
    emq_stats s;
    char **qs;
    ck_assert_int_eq(emq_enqueue(db, Q, A, "a", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, B, "b", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "a.b", C, "c", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "a", C, "c", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_job_get(db, Q, A, &f, &n), EMQ_OK);
    ck_assert_uint_eq(n, 3);
    for (i = 0; i < n; i++)
        if (strcmp(f[i].name, "state") == 0)
            ck_assert_str_eq(f[i].value, "pending");
    emq_fields_free(f, n);
    ck_assert_int_eq(emq_job_get(db, Q, C, &f, &n), EMQ_GONE);
    ck_assert_ptr_null(f);
    claim_ok(A, 1, 10);
    ck_assert_int_eq(emq_complete(db, Q, A, 1), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, Q, B, 0, 0, 0, "e", 1), EMQ_DEAD);
    ck_assert_int_eq(emq_stats_get(db, Q, &s), EMQ_OK);
    ck_assert_int_eq(s.pending, 0);
    ck_assert_int_eq(s.dead, 1);
    ck_assert_int_eq(s.completed, 1);
    ck_assert_int_eq(s.failed, 1);
    ck_assert_int_eq(s.paused, 0);
    ck_assert_int_eq(emq_queues(db, &qs, &n), EMQ_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(qs[0], "a");
    ck_assert_str_eq(qs[1], "a.b");
    ck_assert_str_eq(qs[2], Q);
    emq_queues_free(qs, n);
}
END_TEST

Suite *suite_queue(void)
{
    Suite *s = suite_create("queue");
    TCase *t = tcase_create("tier1");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, fence_stamps_the_wire_identity);
    tcase_add_test(t, mint_enqueue_writes_exactly_three_fields);
    tcase_add_test(t, duplicate_keeps_the_first_payload_through_every_admission);
    tcase_add_test(t, duplicate_counts_any_key_at_the_row_name);
    tcase_add_test(t, kind_refuses_a_wellformed_ORD_id_and_writes_nothing);
    tcase_add_test(t, order_browse_walks_newest_first_and_claim_takes_the_oldest);
    tcase_add_test(t, claim_returns_token_1_and_moves_row_to_active);
    tcase_add_test(t, stale_token_is_refused_and_changes_nothing);
    tcase_add_test(t, complete_deletes_the_row_and_counts_it);
    tcase_add_test(t, retry_parks_scheduled_then_promote_releases_and_claim_mints_2);
    tcase_add_test(t, dead_retry_at_the_cap_dead_letters);
    tcase_add_test(t, reap_returns_a_lapsed_lease_and_the_old_token_goes_stale);
    tcase_add_test(t, schedule_enqueue_in_is_unclaimable_until_promoted);
    tcase_add_test(t, backoff_caller_side_exponential_dead_letters_on_the_third_try);
    tcase_add_test(t, queue_pause_makes_claim_empty_and_resume_serves);
    tcase_add_test(t, lock_extend_survives_a_reap_and_fences_tokens);
    tcase_add_test(t, extend_locks_batch_reports_the_wrong_token_and_the_missing);
    tcase_add_test(t, promoted_jobs_sort_by_id_not_by_run_at);
    tcase_add_test(t, promote_takes_at_most_batch_in_score_order);
    tcase_add_test(t, enqueue_at_scores_are_doubles_beyond_2_pow_53);
    tcase_add_test(t, claim_reads_any_value_of_meta_paused_as_paused);
    tcase_add_test(t, pause_is_ignored_by_admissions_promote_and_reap);
    tcase_add_test(t, claim_over_a_missing_row_recreates_a_partial_row_with_nil_payload);
    tcase_add_test(t, claim_does_not_revalidate_the_popped_id);
    tcase_add_test(t, claim_with_an_empty_payload_returns_an_empty_buffer);
    tcase_add_test(t, binary_payloads_and_errors_round_trip);
    tcase_add_test(t, token_0_completes_a_never_claimed_pending_job);
    tcase_add_test(t, completing_a_scheduled_job_leaves_its_id_in_schedule);
    tcase_add_test(t, completing_a_dead_job_leaves_its_id_in_dead);
    tcase_add_test(t, completing_a_pending_and_extended_job_leaves_its_id_in_pending);
    tcase_add_test(t, complete_answers_gone_for_a_row_without_attempts);
    tcase_add_test(t, retry_keeps_attempts_and_a_missing_row_is_stale_gone);
    tcase_add_test(t, retry_of_a_dead_row_repeats_the_dead_arm);
    tcase_add_test(t, max_attempts_0_dead_letters_at_token_0);
    tcase_add_test(t, reap_caps_at_100_per_call);
    tcase_add_test(t, reap_over_a_missing_row_recreates_a_one_field_row);
    tcase_add_test(t, extend_lock_inserts_a_job_that_is_not_active);
    tcase_add_test(t, extend_locks_shares_one_deadline_and_accepts_duplicates_and_ORD);
    tcase_add_test(t, pending_size_and_browse_read_only_the_flat_set);
    tcase_add_test(t, enqueue_many_runs_each_item_in_order_and_reports_verdicts);
    tcase_add_test(t, enqueue_many_gates_every_id_before_any_item_runs);
    tcase_add_test(t, a_big_batch_equals_its_items_enqueued_one_by_one);
    tcase_add_test(t, host_gates_refuse_before_any_store_access);
    tcase_add_test(t, payload_over_max_payload_is_too_big);
    tcase_add_test(t, every_transition_reads_the_clock_exactly_once);
    tcase_add_test(t, wrongtype_rolls_back_and_leaves_the_handle_usable);
    tcase_add_test(t, job_get_stats_and_queues_read_the_keyspace);
    suite_add_tcase(s, t);
    return s;
}
