/*
 * test_history.c — job history and retention (issue 34 items 1, 2 and 8;
 * doc/HISTORY.md): every transition a job goes through is recorded at the
 * handle's clock, host-side, bounded and pruned; completed and dead jobs
 * are kept for a window; an export is the same with history on and off.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite.h"
#include "tengine.h"

static tclock clk;
static emq_db *db;

static void setup(void)
{
    db = topen(&clk);
}

static void teardown(void)
{
    emq_close(db);
    db = NULL;
}

/* The history of a job as one line: "kind@+ms[:detail] ...", times
 * relative to T0. */
typedef struct line {
    char s[4096];
    int n;
    int64_t last_seq;
} line;

static int collect(void *ctx, const emq_history_entry *e)
{
    line *l = ctx;
    size_t o = strlen(l->s);
    o += (size_t)snprintf(l->s + o, sizeof l->s - o, "%s%s@+%lld",
                          l->n ? " " : "", emq_history_kind_name(e->kind),
                          (long long)(e->at_ms - T0));
    if (e->attempts >= 0)
        o += (size_t)snprintf(l->s + o, sizeof l->s - o, ":a%lld",
                              (long long)e->attempts);
    if (e->delay_ms >= 0)
        o += (size_t)snprintf(l->s + o, sizeof l->s - o, ":d%lld",
                              (long long)e->delay_ms);
    if (e->run_at_ms >= 0)
        o += (size_t)snprintf(l->s + o, sizeof l->s - o, ":r+%lld",
                              (long long)(e->run_at_ms - T0));
    if (e->error)
        o += (size_t)snprintf(l->s + o, sizeof l->s - o, ":e=%.*s",
                              (int)e->error_len, (const char *)e->error);
    if (e->worker)
        o += (size_t)snprintf(l->s + o, sizeof l->s - o, ":w=%s", e->worker);
    l->n++;
    l->last_seq = e->seq;
    return 0;
}

static const char *hist(const char *q, const char *id)
{
    static line l;
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_job_history(db, q, id, collect, &l), EMQ_OK);
    return l.s;
}

static void mint(char id[EMQ_ID_SIZE])
{
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
}

START_TEST(every_step_of_a_failing_job_is_recorded_at_its_time)
{
    char id[EMQ_ID_SIZE];
    emq_job j;
    mint(id);
    ck_assert_int_eq(emq_history_worker(db, "mailer-1"), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "mail", id, "hi", 2), EMQ_ENQUEUED);
    clk.now += 10;
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
    emq_job_clear(&j);
    clk.now += 5;
    ck_assert_int_eq(emq_retry(db, "mail", id, 1, 1000, 2, "smtp 421", 8),
                     EMQ_SCHEDULED);
    clk.now += 1000;
    int64_t n = 0;
    ck_assert_int_eq(emq_promote(db, "mail", 10, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    clk.now += 1;
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
    emq_job_clear(&j);
    clk.now += 2;
    ck_assert_int_eq(emq_retry(db, "mail", id, 2, 0, 2, "card declined",
                               13), EMQ_DEAD);
    ck_assert_str_eq(hist("mail", id),
                     "enqueued@+0 claimed@+10:a1:w=mailer-1 "
                     "retried@+15:a1:d1000:r+1015:e=smtp 421:w=mailer-1 "
                     "promoted@+1015 claimed@+1016:a2:w=mailer-1 "
                     "dead@+1018:a2:e=card declined:w=mailer-1");
    /* Without its queue, the same. */
    ck_assert_str_eq(hist(NULL, id), hist("mail", id));
    /* Another queue has none of it. */
    ck_assert_str_eq(hist("other", id), "");
}
END_TEST

static int who(void *ctx, const emq_history_entry *e)
{
    int *ok = ctx;
    if (e->kind == EMQ_HIST_CLAIMED)
        *ok = e->host != NULL && e->pid > 0 && e->worker == NULL &&
              strcmp(e->queue, "q") == 0;
    return 0;
}

START_TEST(a_claim_names_its_host_and_pid)
{
    char id[EMQ_ID_SIZE];
    emq_job j;
    int ok = 0;
    mint(id);
    ck_assert_int_eq(emq_enqueue(db, "q", id, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_job_history(db, "q", id, who, &ok), EMQ_OK);
    ck_assert(ok);
}
END_TEST

START_TEST(reaped_stalled_removed_requeued_delayed_and_scheduled)
{
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE], c[EMQ_ID_SIZE], d[EMQ_ID_SIZE];
    emq_job j;
    int64_t n;
    mint(a);
    mint(b);
    mint(c);
    mint(d);
    ck_assert_int_eq(emq_enqueue(db, "q", a, "a", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "q", 100, &j), EMQ_OK);
    emq_job_clear(&j);
    clk.now += 100;
    ck_assert_int_eq(emq_reap(db, "q", &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(hist("q", a), "enqueued@+0 claimed@+0:a1 reaped@+100");
    /* stalled: the lapsed lease counts a stall, back to pending */
    ck_assert_int_eq(emq_claim(db, "q", 100, &j), EMQ_OK);
    emq_job_clear(&j);
    clk.now += 100;
    ck_assert_int_eq(emq_stalled_check(db, "q", 2, 100, NULL), EMQ_OK);
    ck_assert_str_eq(hist("q", a), "enqueued@+0 claimed@+0:a1 reaped@+100 "
                                   "claimed@+100:a2 stalled@+200");
    /* removed */
    ck_assert_int_eq(emq_job_remove(db, "q", a, NULL), EMQ_OK);
    ck_assert_str_eq(strrchr(hist("q", a), ' ') + 1, "removed@+200");
    /* scheduled, and delayed by its worker */
    ck_assert_int_eq(emq_enqueue_in(db, "q", b, "b", 1, 50), EMQ_SCHEDULED);
    ck_assert_str_eq(hist("q", b), "scheduled@+200:r+250");
    ck_assert_int_eq(emq_enqueue(db, "q", c, "c", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, c);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_delay(db, "q", c, 1, 70, EMQ_DELAY_IN), EMQ_OK);
    ck_assert_str_eq(hist("q", c), "enqueued@+200 claimed@+200:a1 "
                                   "delayed@+200:r+270");
    /* dead, then requeued by an operator */
    ck_assert_int_eq(emq_enqueue(db, "r", d, "d", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "r", 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_retry(db, "r", d, 1, 0, 1, "boom", 4), EMQ_DEAD);
    ck_assert_int_eq(emq_job_reprocess(db, "r", d), EMQ_OK);
    ck_assert_str_eq(hist("r", d), "enqueued@+200 claimed@+200:a1 "
                                   "dead@+200:a1:e=boom requeued@+200");
}
END_TEST

/* The operator's verbs (main's run_now, run_due, the requeues of dead
 * jobs, requeue_edited): each job they move gets its entry. */
static void kill_job(const char *q, const char *id)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, q, id, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, q, 1000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, id);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_retry(db, q, id, 1, 0, 1, "boom", 4), EMQ_DEAD);
}

START_TEST(the_operators_run_now_and_requeues_are_recorded)
{
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE], c[EMQ_ID_SIZE], d[EMQ_ID_SIZE];
    char e[EMQ_ID_SIZE], f[EMQ_ID_SIZE];
    const char *ids[2];
    int verdicts[2];
    int64_t n, sk;
    mint(a);
    mint(b);
    mint(c);
    mint(d);
    mint(e);
    mint(f);
    /* run_now: a runs now; b is pending, so it is not moved */
    ck_assert_int_eq(emq_enqueue_in(db, "q", a, "a", 1, 5000), EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue(db, "q", b, "b", 1), EMQ_ENQUEUED);
    ids[0] = a;
    ids[1] = b;
    ck_assert_int_eq(emq_job_run_now(db, "q", 2, ids, verdicts, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(hist("q", a), "scheduled@+0:r+5000 promoted@+0");
    ck_assert_str_eq(hist("q", b), "enqueued@+0");
    /* run_due: c is due before the instant, d is not */
    ck_assert_int_eq(emq_enqueue_in(db, "q", c, "c", 1, 100), EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue_in(db, "q", d, "d", 1, 9000), EMQ_SCHEDULED);
    ck_assert_int_eq(emq_schedule_run_due(db, "q", T0 + 200, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(hist("q", c), "scheduled@+0:r+100 promoted@+0");
    ck_assert_str_eq(hist("q", d), "scheduled@+0:r+9000");
    /* requeue_edited of a dead job */
    kill_job("r", e);
    ck_assert_int_eq(emq_job_requeue_edited(db, "r", e, "fixed", 5), EMQ_OK);
    ck_assert_str_eq(hist("r", e), "enqueued@+0 claimed@+0:a1 "
                                   "dead@+0:a1:e=boom requeued@+0");
    /* requeue_dead_before (minted before now: e's second death, f) and
     * requeue all */
    kill_job("s", f);
    ck_assert_int_eq(emq_dead_requeue_before(db, "s", T0 + 1, 10, &n, &sk),
                     EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(strrchr(hist("s", f), ' ') + 1, "requeued@+0");
    clk.now += 10;
    {
        emq_job j;
        ck_assert_int_eq(emq_claim(db, "s", 1000, &j), EMQ_OK);
        ck_assert_str_eq(j.id, f);
        emq_job_clear(&j);
    }
    ck_assert_int_eq(emq_retry(db, "s", f, 2, 0, 1, "again", 5), EMQ_DEAD);
    ck_assert_int_eq(emq_dead_requeue(db, "s", 100, &n, &sk), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(strrchr(hist("s", f), ' ') + 1, "requeued@+10");
}
END_TEST

START_TEST(completed_and_dead_jobs_are_kept_with_payload_error_result)
{
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE];
    emq_job j;
    emq_kept_job k;
    mint(a);
    mint(b);
    ck_assert_int_eq(emq_enqueue(db, "q", a, "pay-a", 5), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "q", b, "pay-b", 5), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    clk.now += 7;
    ck_assert_int_eq(emq_complete_result(db, "q", a, 1, "42", 2), EMQ_OK);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    clk.now += 3;
    ck_assert_int_eq(emq_retry(db, "q", b, 1, 0, 1, "card declined", 13),
                     EMQ_DEAD);
    /* The completed job is gone from the keyspace and kept beside it. */
    ck_assert(!tk_exists(db, "emq:{q}:job:"));
    ck_assert_int_eq(emq_kept_get(db, NULL, a, &k), EMQ_OK);
    ck_assert_str_eq(k.queue, "q");
    ck_assert_int_eq(k.state, EMQ_KEPT_COMPLETED);
    ck_assert_int_eq(k.at_ms, T0 + 7);
    ck_assert_int_eq(k.attempts, 1);
    ck_assert_str_eq((char *)k.payload, "pay-a");
    ck_assert_str_eq((char *)k.result, "42");
    ck_assert_ptr_null(k.error);
    emq_kept_clear(&k);
    ck_assert_int_eq(emq_kept_get(db, "q", b, &k), EMQ_OK);
    ck_assert_int_eq(k.state, EMQ_KEPT_DEAD);
    ck_assert_int_eq(k.at_ms, T0 + 10);
    ck_assert_str_eq((char *)k.payload, "pay-b");
    ck_assert_str_eq((char *)k.error, "card declined");
    ck_assert_ptr_null(k.result);
    emq_kept_clear(&k);
    ck_assert_int_eq(emq_kept_get(db, "other", a, &k), EMQ_ABSENT);
    int64_t n;
    ck_assert_int_eq(emq_kept_count(db, "q", EMQ_KEPT_COMPLETED, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_kept_count(db, "q", EMQ_KEPT_DEAD, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
}
END_TEST

typedef struct ids {
    char s[1024];
} ids;

static int list_ids(void *ctx, const emq_kept_job *j)
{
    ids *x = ctx;
    strcat(x->s, x->s[0] ? " " : "");
    strncat(x->s, (const char *)j->payload, j->payload_len);
    return 0;
}

/* Complete a job with payload `p` at the current time. */
static void done_job(const char *q, const char *p, char id[EMQ_ID_SIZE])
{
    emq_job j;
    mint(id);
    ck_assert_int_eq(emq_enqueue(db, q, id, p, strlen(p)), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, q, 1000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, id);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_complete(db, q, id, 1), EMQ_OK);
}

START_TEST(kept_jobs_list_newest_first_page_and_prune_by_count_and_age)
{
    char id[6][EMQ_ID_SIZE];
    ids x;
    emq_retention r;
    int64_t dropped, n;
    for (int i = 0; i < 6; i++) {
        char p[16];
        snprintf(p, sizeof p, "j%d", i);
        done_job("q", p, id[i]);
        clk.now += 1000;
    }
    memset(&x, 0, sizeof x);
    ck_assert_int_eq(emq_kept_list(db, "q", EMQ_KEPT_COMPLETED, NULL, 3,
                                   list_ids, &x), EMQ_OK);
    ck_assert_str_eq(x.s, "j5 j4 j3");
    memset(&x, 0, sizeof x);
    ck_assert_int_eq(emq_kept_list(db, "q", EMQ_KEPT_COMPLETED, id[3], 0,
                                   list_ids, &x), EMQ_OK);
    ck_assert_str_eq(x.s, "j2 j1 j0");
    /* Built-in defaults, then a queue's own window. */
    ck_assert_int_eq(emq_retention_get(db, "q", &r), EMQ_OK);
    ck_assert_int_eq(r.completed_keep, 1000);
    ck_assert_int_eq(r.completed_age_ms, 86400000);
    r.completed_keep = 4;
    r.completed_age_ms = 3500;  /* now is T0 + 6000: j0..j2 are older */
    ck_assert_int_eq(emq_retention_set(db, "q", &r), EMQ_OK);
    ck_assert_int_eq(emq_history_prune(db, "q", &dropped), EMQ_OK);
    ck_assert_int_eq(emq_kept_count(db, "q", EMQ_KEPT_COMPLETED, &n), EMQ_OK);
    ck_assert_int_eq(n, 3);
    memset(&x, 0, sizeof x);
    ck_assert_int_eq(emq_kept_list(db, "q", EMQ_KEPT_COMPLETED, NULL, 0,
                                   list_ids, &x), EMQ_OK);
    ck_assert_str_eq(x.s, "j5 j4 j3");
    r.completed_keep = 1;
    ck_assert_int_eq(emq_retention_set(db, "q", &r), EMQ_OK);
    ck_assert_int_eq(emq_history_prune(db, NULL, &dropped), EMQ_OK);
    ck_assert_int_eq(emq_kept_count(db, "q", EMQ_KEPT_COMPLETED, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    /* A bad number is refused by name. */
    r.dead_keep = -1;
    ck_assert_int_eq(emq_retention_set(db, "q", &r), EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "dead_keep"));
}
END_TEST

START_TEST(history_is_bounded_per_job_and_per_queue_and_by_age)
{
    emq_history_config c;
    char id[EMQ_ID_SIZE];
    emq_job j;
    line l;
    int64_t dropped;
    ck_assert_int_eq(emq_history_config_get(db, &c), EMQ_OK);
    ck_assert_int_eq(c.enabled, 1);
    ck_assert_int_eq(c.per_job, 64);
    c.per_job = 3;
    c.per_queue = 5;
    ck_assert_int_eq(emq_history_config_set(db, &c), EMQ_OK);
    mint(id);
    ck_assert_int_eq(emq_enqueue(db, "q", id, "x", 1), EMQ_ENQUEUED);
    for (int i = 1; i <= 4; i++) {
        ck_assert_int_eq(emq_claim(db, "q", 10, &j), EMQ_OK);
        emq_job_clear(&j);
        clk.now += 10;
        int64_t n;
        ck_assert_int_eq(emq_reap(db, "q", &n), EMQ_OK);
    }
    /* 9 steps, the last 3 kept */
    ck_assert_str_eq(hist("q", id), "reaped@+30 claimed@+30:a4 reaped@+40");
    for (int i = 0; i < 4; i++) {
        char x[EMQ_ID_SIZE];
        mint(x);
        ck_assert_int_eq(emq_enqueue(db, "q", x, "x", 1), EMQ_ENQUEUED);
    }
    ck_assert_int_eq(emq_history_prune(db, "q", &dropped), EMQ_OK);
    ck_assert_int_eq(dropped, 2);
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_history_read(db, "q", 0, 0, collect, &l, NULL),
                     EMQ_OK);
    ck_assert_int_eq(l.n, 5);
    /* Age: a week later everything goes. */
    clk.now += INT64_C(7) * 86400000 + 1;
    ck_assert_int_eq(emq_history_prune(db, NULL, &dropped), EMQ_OK);
    ck_assert_int_eq(dropped, 5);
    /* Bad settings are refused by name. */
    c.per_queue = 0;
    ck_assert_int_eq(emq_history_config_set(db, &c), EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "per_queue"));
}
END_TEST

START_TEST(appends_prune_their_queue_as_they_go)
{
    emq_history_config c;
    line l;
    ck_assert_int_eq(emq_history_config_get(db, &c), EMQ_OK);
    c.per_queue = 10;
    ck_assert_int_eq(emq_history_config_set(db, &c), EMQ_OK);
    for (int i = 0; i < 600; i++) {
        char x[EMQ_ID_SIZE];
        mint(x);
        ck_assert_int_eq(emq_enqueue(db, "q", x, "x", 1), EMQ_ENQUEUED);
    }
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_history_read(db, "q", 0, 0, collect, &l, NULL),
                     EMQ_OK);
    /* pruned at seq 512 (every 512th append prunes its queue) to 10, then
     * 88 more */
    ck_assert_int_eq(l.n, 98);
}
END_TEST

/* A transaction that appends many (enqueue_many) and crosses a multiple of
 * the prune interval prunes its queue too (the first cut pruned only when
 * the transaction's last seq was a multiple: batches of 100 never were
 * before seq 3200). */
START_TEST(a_batch_that_crosses_the_prune_interval_prunes)
{
    emq_history_config c;
    emq_item it[100];
    char ids[100][EMQ_ID_SIZE];
    int v[100];
    line l;
    ck_assert_int_eq(emq_history_config_get(db, &c), EMQ_OK);
    c.per_queue = 10;
    ck_assert_int_eq(emq_history_config_set(db, &c), EMQ_OK);
    for (int b = 0; b < 20; b++) {
        for (int i = 0; i < 100; i++) {
            mint(ids[i]);
            it[i].id = ids[i];
            it[i].payload = "x";
            it[i].len = 1;
        }
        ck_assert_int_eq(emq_enqueue_many(db, "q", it, 100, v), EMQ_OK);
    }
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_history_read(db, "q", 0, 0, collect, &l, NULL),
                     EMQ_OK);
    /* the last prune crossed 1536 (in the batch 1501..1600): 10 kept,
     * then 1601..2000 */
    ck_assert_int_eq(l.n, 410);
}
END_TEST

/* Kept jobs come back to their bound at each prune however many finished
 * since the last one (the first cut removed at most 64 a prune: a queue
 * finishing more than that per 1024 appends grew without bound). */
START_TEST(kept_jobs_come_back_to_their_bound_at_each_prune)
{
    emq_retention r = {5, INT64_C(86400000), 5, INT64_C(86400000)};
    emq_item it[100];
    char ids[100][EMQ_ID_SIZE];
    int v[100];
    int64_t n = 0;
    ck_assert_int_eq(emq_retention_set(db, "q", &r), EMQ_OK);
    /* 1700 entries of jobs that wait, then 200 jobs that complete (3
     * entries each): the kept prune at seq 2048 finds about 116 kept */
    for (int b = 0; b < 17; b++) {
        for (int i = 0; i < 100; i++) {
            mint(ids[i]);
            it[i].id = ids[i];
            it[i].payload = "x";
            it[i].len = 1;
        }
        ck_assert_int_eq(emq_enqueue_many(db, "w", it, 100, v), EMQ_OK);
    }
    for (int i = 0; i < 200; i++) {
        char x[EMQ_ID_SIZE];
        done_job("q", "p", x);
    }
    ck_assert_int_eq(emq_kept_count(db, "q", EMQ_KEPT_COMPLETED, &n),
                     EMQ_OK);
    /* 5 kept at the prune, then the jobs completed after it (seq 2049 ..
     * 2300: 84) */
    ck_assert_int_le(n, 5 + 84);
    ck_assert_int_ge(n, 5 + 83);
}
END_TEST

/* At the failures level a dead job may have one entry only (its death),
 * so up to one kept record per entry arrives between two kept prunes: the
 * prune at seq 2048 must still bring them back to their bound. */
START_TEST(failures_kept_dead_come_back_to_their_bound_at_each_prune)
{
    emq_retention r = {5, INT64_C(86400000), 5, INT64_C(86400000)};
    emq_history_config c;
    int64_t n = 0;
    ck_assert_int_eq(emq_history_config_get(db, &c), EMQ_OK);
    c.enabled = EMQ_HISTORY_FAILURES;
    ck_assert_int_eq(emq_history_config_set(db, &c), EMQ_OK);
    ck_assert_int_eq(emq_retention_set(db, "q", &r), EMQ_OK);
    for (int i = 0; i < 2100; i++) {
        char x[EMQ_ID_SIZE];
        mint(x);
        kill_job("q", x);
    }
    ck_assert_int_eq(emq_kept_count(db, "q", EMQ_KEPT_DEAD, &n), EMQ_OK);
    /* 5 kept at the prune, then the 52 that died after it (seq 2049 ..
     * 2100) */
    ck_assert_int_eq(n, 5 + 52);
}
END_TEST

/* Export sink: the bytes into a growing buffer. */
typedef struct sink {
    char *p;
    size_t n;
} sink;

static int sink_write(void *ctx, const void *p, size_t n)
{
    sink *s = ctx;
    s->p = realloc(s->p, s->n + n);
    memcpy(s->p + s->n, p, n);
    s->n += n;
    return 0;
}

/* The same run of transitions on a fresh handle, history on or off; the
 * export's bytes. Ids are fixed so both runs write the same keys. */
static sink run_and_export(int on)
{
    static const char *const id[3] = {"JOB0000000001A", "JOB0000000002A",
                                      "JOB0000000003A"};
    emq_history_config c;
    emq_job j;
    sink s = {NULL, 0};
    emq_db *h = topen(&clk);
    emq_db *keep = db;
    db = h;
    ck_assert_int_eq(emq_history_config_get(h, &c), EMQ_OK);
    c.enabled = on;
    ck_assert_int_eq(emq_history_config_set(h, &c), EMQ_OK);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(emq_enqueue(h, "q", id[i], "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(h, "q", 100, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_complete(h, "q", id[0], 1), EMQ_OK);
    ck_assert_int_eq(emq_claim(h, "q", 100, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_retry(h, "q", id[1], 1, 0, 1, "e", 1), EMQ_DEAD);
    ck_assert_int_eq(emq_export(h, NULL, sink_write, &s, NULL), EMQ_OK);
    line l;
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_history_read(h, NULL, 0, 0, collect, &l, NULL),
                     EMQ_OK);
    ck_assert_int_eq(l.n, on ? 7 : 0);
    emq_kept_job k;
    ck_assert_int_eq(emq_kept_get(h, NULL, id[0], &k),
                     on ? EMQ_OK : EMQ_ABSENT);
    emq_kept_clear(&k);
    db = keep;
    emq_close(h);
    return s;
}

START_TEST(an_export_is_byte_identical_with_history_on_and_off)
{
    sink on = run_and_export(1), off = run_and_export(0);
    ck_assert_uint_gt(on.n, 0);
    ck_assert_uint_eq(on.n, off.n);
    ck_assert(memcmp(on.p, off.p, on.n) == 0);
    free(on.p);
    free(off.p);
}
END_TEST

START_TEST(history_off_records_nothing_and_the_switch_persists)
{
    char path[512], dir[256], id[EMQ_ID_SIZE];
    emq_history_config c;
    emq_db *h = NULL;
    emq_options o;
    line l;
    tdir_make(dir, sizeof dir, "hist", path, sizeof path);
    emq_options_init(&o);
    o.clock = tclock_fn;
    o.clock_ctx = &clk;
    ck_assert_int_eq(emq_open(path, &o, &h), EMQ_OK);
    ck_assert_int_eq(emq_history_config_get(h, &c), EMQ_OK);
    c.enabled = 0;
    ck_assert_int_eq(emq_history_config_set(h, &c), EMQ_OK);
    emq_close(h);
    ck_assert_int_eq(emq_open(path, &o, &h), EMQ_OK);
    ck_assert_int_eq(emq_mint(h, "JOB", id), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(h, "q", id, "x", 1), EMQ_ENQUEUED);
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_job_history(h, NULL, id, collect, &l), EMQ_OK);
    ck_assert_int_eq(l.n, 0);
    ck_assert_int_eq(emq_history_config_get(h, &c), EMQ_OK);
    ck_assert_int_eq(c.enabled, 0);
    emq_close(h);
    tdir_remove(dir);
}
END_TEST

/* The failures level: a job that completes leaves nothing; one that fails
 * leaves its failures (with who failed it) and its kept record; a lost
 * lease and an operator's removal are recorded; completed jobs are not
 * kept. The level persists and an unknown one is refused by name. */
START_TEST(the_failures_level_records_what_went_wrong_and_nothing_else)
{
    char ok[EMQ_ID_SIZE], bad[EMQ_ID_SIZE], lost[EMQ_ID_SIZE];
    char gone[EMQ_ID_SIZE];
    emq_history_config c;
    emq_kept_job k;
    emq_job j;
    int64_t n = 0, last = 0;
    line l;
    ck_assert_int_eq(emq_history_config_get(db, &c), EMQ_OK);
    ck_assert_int_eq(c.enabled, EMQ_HISTORY_ALL);
    c.enabled = EMQ_HISTORY_FAILURES;
    ck_assert_int_eq(emq_history_config_set(db, &c), EMQ_OK);
    ck_assert_int_eq(emq_history_worker(db, "w1"), EMQ_OK);
    mint(ok);
    mint(bad);
    mint(lost);
    mint(gone);
    ck_assert_int_eq(emq_enqueue(db, "q", ok, "a", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "q", bad, "b", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "q", lost, "c", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "q", gone, "d", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, ok);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_complete(db, "q", ok, 1), EMQ_OK);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, bad);
    emq_job_clear(&j);
    clk.now += 4;
    ck_assert_int_eq(emq_retry(db, "q", bad, 1, 500, 2, "timeout", 7),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, lost);
    emq_job_clear(&j);
    clk.now += 1000;
    ck_assert_int_eq(emq_promote(db, "q", 10, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_reap(db, "q", &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_job_remove(db, "q", gone, NULL), EMQ_OK);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_retry(db, "q", bad, 2, 0, 2, "timeout again", 13),
                     EMQ_DEAD);
    ck_assert_str_eq(hist("q", ok), "");
    ck_assert_str_eq(hist("q", bad),
                     "retried@+4:a1:d500:r+504:e=timeout:w=w1 "
                     "dead@+1004:a2:e=timeout again:w=w1");
    ck_assert_str_eq(hist("q", lost), "reaped@+1004");
    ck_assert_str_eq(hist("q", gone), "removed@+1004");
    /* The tail holds those four entries. */
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_history_read(db, NULL, 0, 0, collect, &l, &last),
                     EMQ_OK);
    ck_assert_int_eq(l.n, 4);
    /* Dead jobs are kept; completed ones are not. */
    ck_assert_int_eq(emq_kept_get(db, "q", bad, &k), EMQ_OK);
    ck_assert_int_eq(k.state, EMQ_KEPT_DEAD);
    ck_assert_str_eq((char *)k.error, "timeout again");
    emq_kept_clear(&k);
    ck_assert_int_eq(emq_kept_get(db, "q", ok, &k), EMQ_ABSENT);
    /* Persisted; 3 is no level. */
    ck_assert_int_eq(emq_history_config_get(db, &c), EMQ_OK);
    ck_assert_int_eq(c.enabled, EMQ_HISTORY_FAILURES);
    c.enabled = 3;
    ck_assert_int_eq(emq_history_config_set(db, &c), EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "enabled must be"));
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "(got 3)"));
    ck_assert_int_eq(emq_history_config_get(db, &c), EMQ_OK);
    ck_assert_int_eq(c.enabled, EMQ_HISTORY_FAILURES);
}
END_TEST

START_TEST(the_read_cursor_pages_every_queue_in_commit_order)
{
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE];
    line l;
    int64_t last = 0;
    mint(a);
    mint(b);
    ck_assert_int_eq(emq_enqueue(db, "q1", a, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "q2", b, "x", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_job_remove(db, "q1", a, NULL), EMQ_OK);
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_history_read(db, NULL, 0, 2, collect, &l, &last),
                     EMQ_OK);
    ck_assert_str_eq(l.s, "enqueued@+0 enqueued@+0");
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_history_read(db, NULL, last, 0, collect, &l, &last),
                     EMQ_OK);
    ck_assert_str_eq(l.s, "removed@+0");
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(emq_history_read(db, "q2", 0, 0, collect, &l, NULL),
                     EMQ_OK);
    ck_assert_int_eq(l.n, 1);
    ck_assert_int_eq(emq_history_kind_of("dead"), EMQ_HIST_DEAD);
    ck_assert_int_eq(emq_history_kind_of("nope"), 0);
}
END_TEST

Suite *suite_history(void)
{
    Suite *s = suite_create("history");
    TCase *t = tcase_create("history");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, every_step_of_a_failing_job_is_recorded_at_its_time);
    tcase_add_test(t, a_claim_names_its_host_and_pid);
    tcase_add_test(t, reaped_stalled_removed_requeued_delayed_and_scheduled);
    tcase_add_test(t, the_operators_run_now_and_requeues_are_recorded);
    tcase_add_test(t, completed_and_dead_jobs_are_kept_with_payload_error_result);
    tcase_add_test(t, kept_jobs_list_newest_first_page_and_prune_by_count_and_age);
    tcase_add_test(t, history_is_bounded_per_job_and_per_queue_and_by_age);
    tcase_add_test(t, appends_prune_their_queue_as_they_go);
    tcase_add_test(t, a_batch_that_crosses_the_prune_interval_prunes);
    tcase_add_test(t, kept_jobs_come_back_to_their_bound_at_each_prune);
    tcase_add_test(t, failures_kept_dead_come_back_to_their_bound_at_each_prune);
    tcase_add_test(t, an_export_is_byte_identical_with_history_on_and_off);
    tcase_add_test(t, history_off_records_nothing_and_the_switch_persists);
    tcase_add_test(t, the_read_cursor_pages_every_queue_in_commit_order);
    tcase_add_test(t, the_failures_level_records_what_went_wrong_and_nothing_else);
    suite_add_tcase(s, t);
    return s;
}
