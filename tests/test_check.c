/*
 * test_check.c — the invariant checker (engine/check/check.c): a clean file and a
 * disciplined workload pass with no finding; each tolerated state is a note
 * and not a violation; a file broken in many ways at once reports every
 * violation with its code; a damaged page is caught by the integrity check.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "db.h"
#include "keys.h"
#include "store.h"
#include "relutil.h"
#include "suites.h"

#define Q "orders"

static emq_db *db;
static rel_clock clk;
static char dir[256];

/* Findings collected by the callback. */
typedef struct seen {
    size_t viol, notes;
    char codes[64][24];
    int sev[64];
    size_t n;
} seen;

static void seen_cb(void *ctx, const emq_finding *f)
{
    seen *s = ctx;
    if (getenv("EMQ_TEST_VERBOSE"))
        fprintf(stderr, "%d %s %s: %s\n", f->severity, f->code, f->key,
                f->message);
    if (f->severity == EMQ_CHECK_VIOLATION) s->viol++;
    else s->notes++;
    if (s->n < 64) {
        snprintf(s->codes[s->n], sizeof s->codes[0], "%s", f->code);
        s->sev[s->n++] = f->severity;
    }
}

static int has(const seen *s, int sev, const char *code)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->sev[i] == sev && strcmp(s->codes[i], code) == 0) return 1;
    return 0;
}

static size_t count(const seen *s, int sev, const char *code)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->sev[i] == sev && strcmp(s->codes[i], code) == 0;
    return n;
}

static void open_db(const char *path)
{
    emq_options o;
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
}

static void setup(void)
{
    clk.now = 1750000000000;
    ck_assert_int_eq(rel_mkdtemp(dir, sizeof dir, "check"), 0);
    char p[300];
    rel_path(p, sizeof p, dir, "c.emq");
    open_db(p);
}

static void teardown(void)
{
    emq_close(db);
    db = NULL;
    rel_rmrf(dir);
}

static void mint(char *id)
{
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
}

static seen run_check(int want_rc)
{
    seen s;
    size_t n = 99;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(emq_check(db, seen_cb, &s, &n), want_rc);
    ck_assert_uint_eq(n, s.viol);
    return s;
}

/* Raw keyspace writes for building broken files, in one transaction. */
static emq_store *wbegin(void)
{
    emq_store *st = emq_db_store(db);
    ck_assert_int_eq(emq_store_begin(st, 1, clk.now), EMQ_OK);
    return st;
}

static void wcommit(emq_store *st)
{
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
}

static void hset(emq_store *st, const char *key, const char *f, const char *v)
{
    emq_bytes fv[2] = {{f, strlen(f)}, {v, strlen(v)}};
    ck_assert_int_ge(emq_hash_set(st, key, strlen(key), fv, 1, NULL), 0);
}

static void zadd(emq_store *st, const char *key, const char *m, double s)
{
    ck_assert_int_ge(emq_zset_add(st, key, strlen(key), m, strlen(m), s, NULL),
                     0);
}

/* ------------------------------------------------------------------ tests */

START_TEST(fresh_file_has_no_finding)
{
    seen s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
    ck_assert_uint_eq(s.notes, 0);
    /* callback and count are optional */
    ck_assert_int_eq(emq_check(db, NULL, NULL, NULL), EMQ_OK);
    ck_assert_int_eq(emq_check(NULL, NULL, NULL, NULL), EMQ_EINVAL);
}
END_TEST

START_TEST(disciplined_workload_has_no_finding)
{
    char id[8][EMQ_ID_SIZE];
    emq_job j;
    int64_t n;
    for (int i = 0; i < 8; i++) {
        mint(id[i]);
        if (i < 6)
            ck_assert_int_eq(emq_enqueue(db, Q, id[i], "p", 1), EMQ_ENQUEUED);
        else
            ck_assert_int_eq(emq_enqueue_in(db, Q, id[i], "p", 1, 1000),
                             EMQ_SCHEDULED);
    }
    ck_assert_int_eq(emq_claim(db, Q, 100, &j), EMQ_OK);
    ck_assert_int_eq(emq_complete(db, Q, j.id, j.attempts), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_claim(db, Q, 100, &j), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, Q, j.id, j.attempts, 10, 5, "e", 1),
                     EMQ_SCHEDULED);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_claim(db, Q, 100, &j), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, Q, j.id, j.attempts, 10, 1, "e", 1),
                     EMQ_DEAD);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_claim(db, Q, 100, &j), EMQ_OK); /* lease lapses */
    emq_job_clear(&j);
    ck_assert_int_eq(emq_claim(db, Q, 100000, &j), EMQ_OK); /* stays active */
    emq_job_clear(&j);
    clk.now += 5000;
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_promote(db, Q, 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(emq_queue_pause(db, Q), EMQ_OK);
    seen s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
    ck_assert_uint_eq(s.notes, 0);
}
END_TEST

START_TEST(completed_scheduled_job_is_a_ghost_note)
{
    char id[EMQ_ID_SIZE];
    mint(id);
    ck_assert_int_eq(emq_enqueue_in(db, Q, id, "p", 1, 1000), EMQ_SCHEDULED);
    /* token 0 completes a never-claimed job; the id stays in schedule */
    ck_assert_int_eq(emq_complete(db, Q, id, 0), EMQ_OK);
    seen s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
    ck_assert_uint_eq(s.notes, 1);
    ck_assert(has(&s, EMQ_CHECK_NOTE, "ghost"));
    /* promote recreates a one-field row for the ghost (D-12): partial */
    clk.now += 2000;
    ck_assert_int_eq(emq_promote(db, Q, 10, NULL), EMQ_OK);
    s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
    ck_assert(has(&s, EMQ_CHECK_NOTE, "partial"));
}
END_TEST

/* Writes that keep a row's state and reach any row that exists (T2.8,
 * T2.9) also reach a row a stateless write made (T4.5's link, T5.12's lock
 * on an id without a row): the result is still the protocol's own state. A
 * field no such write puts there makes it a violation. */
START_TEST(stateless_rows_from_writes_on_any_row_are_partial_notes)
{
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE], p[EMQ_ID_SIZE], k[EMQ_KEY_MAX];
    mint(a);
    mint(b);
    mint(p);
    ck_assert_int_eq(emq_flow_set_link(db, Q, a, p, "other", EMQ_FLOW_FP),
                     EMQ_OK);
    ck_assert_int_eq(emq_job_update_data(db, Q, a, "d", 1), EMQ_OK);
    ck_assert_int_eq(emq_job_update_progress(db, Q, a, "50", 2), EMQ_OK);
    ck_assert_int_eq(emq_lock_track(db, Q, b, 1, 100), EMQ_OK);
    ck_assert_int_eq(emq_job_update_data(db, Q, b, "d", 1), EMQ_OK);
    seen s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
    ck_assert_uint_eq(count(&s, EMQ_CHECK_NOTE, "partial"), 2);
    /* the lock field expires: a row holding only a payload */
    clk.now += 200;
    s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
    ck_assert_uint_eq(count(&s, EMQ_CHECK_NOTE, "partial"), 2);
    emq_store *st = wbegin();
    emq_key_of(k, Q, EMQ_KT_JOB, a, EMQ_ID_LEN);
    hset(st, k, "attempts", "1");
    wcommit(st);
    s = run_check(EMQ_ECORRUPT);
    ck_assert_uint_eq(s.viol, 1);
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "row"));
}
END_TEST

START_TEST(scores_beyond_two_to_the_53_are_not_violations)
{
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE];
    mint(a);
    mint(b);
    /* run-ats and leases the protocol accepts but a double rounds */
    ck_assert_int_eq(emq_enqueue_in(db, Q, a, "p", 1, INT64_MAX - clk.now),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue_at(db, Q, b, "p", 1, INT64_C(9007199254740993)),
                     EMQ_SCHEDULED);
    seen s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
}
END_TEST

START_TEST(extended_pending_job_is_a_multi_note)
{
    char id[EMQ_ID_SIZE];
    emq_job j;
    int64_t n;
    mint(id);
    ck_assert_int_eq(emq_enqueue(db, Q, id, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, Q, 10, &j), EMQ_OK);
    clk.now += 100;
    ck_assert_int_eq(emq_reap(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    /* the old holder's token still matches: extend re-inserts into active */
    ck_assert_int_eq(emq_lock_extend(db, Q, id, j.attempts, 1000), EMQ_OK);
    seen s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
    ck_assert_uint_eq(s.notes, 1);
    ck_assert(has(&s, EMQ_CHECK_NOTE, "multi"));
    /* completing it leaves the id in pending without a row */
    ck_assert_int_eq(emq_complete(db, Q, id, j.attempts), EMQ_OK);
    s = run_check(EMQ_OK);
    ck_assert_uint_eq(s.viol, 0);
    ck_assert(has(&s, EMQ_CHECK_NOTE, "ghost"));
    emq_job_clear(&j);
}
END_TEST

START_TEST(every_violation_is_reported_not_just_the_first)
{
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE], c[EMQ_ID_SIZE], d[EMQ_ID_SIZE],
        e[EMQ_ID_SIZE];
    char k[EMQ_KEY_MAX];
    mint(a);
    mint(b);
    mint(c);
    mint(d);
    mint(e);
    ck_assert_int_eq(emq_enqueue(db, Q, a, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, b, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, c, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, d, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue_in(db, Q, e, "p", 1, 10), EMQ_SCHEDULED);
    emq_store *st = wbegin();
    /* 1 state-set: the row says active, the id sits in pending only */
    emq_key_of(k, Q, EMQ_KT_JOB, a, EMQ_ID_LEN);
    hset(st, k, "state", "active");
    /* 2 counter: attempts with a leading zero */
    emq_key_of(k, Q, EMQ_KT_JOB, b, EMQ_ID_LEN);
    hset(st, k, "attempts", "01");
    /* 3 state: an unknown state string */
    emq_key_of(k, Q, EMQ_KT_JOB, c, EMQ_ID_LEN);
    hset(st, k, "state", "finished");
    /* 4 row: a row without state (the id is in pending) */
    emq_key_of(k, Q, EMQ_KT_JOB, d, EMQ_ID_LEN);
    ck_assert_int_ge(emq_hash_del(st, k, strlen(k), "state", 5, NULL), 0);
    /* 5 score: a schedule score that is not an integer */
    emq_key(k, Q, EMQ_KT_SCHEDULE);
    zadd(st, k, e, 12.5);
    /* 6 member: a pending member that is not a branded id */
    emq_key(k, Q, EMQ_KT_PENDING);
    zadd(st, k, "garbage", 0);
    /* 7 score: a pending score other than 0 */
    zadd(st, k, a, 7);
    /* 8 key: a suffix outside the grammar; 9 key: a foreign key */
    snprintf(k, sizeof k, "emq:{%s}:bogus", Q);
    ck_assert_int_ge(emq_str_set(st, k, strlen(k), "x", 1, -1, 0, NULL), 0);
    ck_assert_int_ge(emq_str_set(st, "foreign", 7, "x", 1, -1, 0, NULL), 0);
    /* 10 type: meta written as a string */
    emq_key(k, "other", EMQ_KT_META);
    ck_assert_int_ge(emq_str_set(st, k, strlen(k), "x", 1, -1, 0, NULL), 0);
    /* 11 counter: a metrics count that is not decimal */
    emq_key(k, Q, EMQ_KT_METRICS_COMPLETED);
    hset(st, k, "count", "many");
    /* 12 wake: 65 tokens */
    emq_key(k, Q, EMQ_KT_WAKE);
    for (int i = 0; i < 65; i++)
        ck_assert_int_ge(emq_list_push(st, k, strlen(k), 0, "1", 1, NULL), 0);
    /* 13 ring: a group twice */
    emq_key(k, Q, EMQ_KT_RING);
    ck_assert_int_ge(emq_list_push(st, k, strlen(k), 1, "PRT0000000000A",
                                   14, NULL), 0);
    ck_assert_int_ge(emq_list_push(st, k, strlen(k), 1, "PRT0000000000A",
                                   14, NULL), 0);
    /* 14 member: an in-flight count keyed by something not a group id */
    emq_key(k, Q, EMQ_KT_GACTIVE);
    hset(st, k, "nogroup", "1");
    /* 15 fence: another wire */
    ck_assert_int_ge(emq_str_set(st, EMQ_VERSION_KEY,
                                 sizeof EMQ_VERSION_KEY - 1, "echomq:2.0.0",
                                 12, -1, 0, NULL), 0);
    wcommit(st);
    seen s = run_check(EMQ_ECORRUPT);
    ck_assert_uint_eq(s.viol, 15);
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "state-set"));
    ck_assert_uint_eq(count(&s, EMQ_CHECK_VIOLATION, "counter"), 2);
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "state"));
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "row"));
    ck_assert_uint_eq(count(&s, EMQ_CHECK_VIOLATION, "score"), 2);
    ck_assert_uint_eq(count(&s, EMQ_CHECK_VIOLATION, "member"), 2);
    ck_assert_uint_eq(count(&s, EMQ_CHECK_VIOLATION, "key"), 2);
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "type"));
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "wake"));
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "ring"));
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "fence"));
    ck_assert_str_ne(emq_errmsg(db), "");
}
END_TEST

START_TEST(missing_fence_is_a_violation)
{
    emq_store *st = wbegin();
    ck_assert_int_ge(emq_key_del(st, EMQ_VERSION_KEY,
                                 sizeof EMQ_VERSION_KEY - 1, NULL), 0);
    wcommit(st);
    seen s = run_check(EMQ_ECORRUPT);
    ck_assert_uint_eq(s.viol, 1);
    ck_assert(has(&s, EMQ_CHECK_VIOLATION, "fence"));
}
END_TEST

/* Overwrite the root page of the zset_member index with zeros. */
START_TEST(damaged_page_fails_the_integrity_check)
{
    char path[300], id[EMQ_ID_SIZE];
    sqlite3_stmt *s;
    int64_t root = 0, psz = 0;
    for (int i = 0; i < 50; i++) {
        mint(id);
        ck_assert_int_eq(emq_enqueue(db, Q, id, "payload", 7), EMQ_ENQUEUED);
    }
    sqlite3 *sq = emq_store_sqlite(emq_db_store(db));
    ck_assert_int_eq(sqlite3_prepare_v2(sq, "SELECT rootpage FROM "
                                        "sqlite_schema WHERE name = "
                                        "'zset_member'", -1, &s, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
    root = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    ck_assert_int_eq(sqlite3_prepare_v2(sq, "PRAGMA page_size", -1, &s, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
    psz = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    emq_close(db);
    db = NULL;

    rel_path(path, sizeof path, dir, "c.emq");
    int fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    char *zero = calloc(1, (size_t)psz);
    ck_assert_int_eq(pwrite(fd, zero, (size_t)psz, (root - 1) * psz), psz);
    free(zero);
    close(fd);

    open_db(path);
    seen r = run_check(EMQ_ECORRUPT);
    ck_assert_uint_ge(r.viol, 1);
    ck_assert(has(&r, EMQ_CHECK_VIOLATION, "integrity") ||
              has(&r, EMQ_CHECK_VIOLATION, "read"));
}
END_TEST

Suite *suite_check(void)
{
    Suite *s = suite_create("check");
    TCase *t = tcase_create("checker");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, fresh_file_has_no_finding);
    tcase_add_test(t, disciplined_workload_has_no_finding);
    tcase_add_test(t, completed_scheduled_job_is_a_ghost_note);
    tcase_add_test(t, stateless_rows_from_writes_on_any_row_are_partial_notes);
    tcase_add_test(t, scores_beyond_two_to_the_53_are_not_violations);
    tcase_add_test(t, extended_pending_job_is_a_multi_note);
    tcase_add_test(t, every_violation_is_reported_not_just_the_first);
    tcase_add_test(t, missing_fence_is_a_violation);
    tcase_add_test(t, damaged_page_fails_the_integrity_check);
    suite_add_tcase(s, t);
    return s;
}
