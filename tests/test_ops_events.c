/*
 * test_ops_events.c — suite "ops_events": lifecycle events (engine/ops/events.c,
 * storage/evlog.c): which transitions publish, the exact message bytes
 * (T2.9's JSON-S, T2.17's escaping), delivery on the publishing handle,
 * queue filters, cursors and retention, and delivery to handles on the
 * same file in other processes (fork) in commit order without loss.
 * Waits are bounded waits on a condition (emq_sub_wait, a pipe read),
 * never sleeps.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "suites.h"
#include "tengine.h"

#define Q "ev"
#define ID1 "JOB00000000001"
#define ID2 "JOB00000000002"

/* What a callback collected: each event as "name|job|message|queue". */
typedef struct got {
    char *line[512];
    int64_t seq[512];
    int n;
} got;

static void on_ev(void *ctx, const emq_event *e)
{
    got *g = ctx;
    char *s;
    size_t n = e->name_len + e->job_len + e->message_len + e->queue_len + 4;
    if (g->n >= 512) return;
    s = malloc(n);
    ck_assert_ptr_nonnull(s);
    snprintf(s, n, "%.*s|%.*s|%.*s|%.*s", (int)e->name_len, e->name,
             (int)e->job_len, e->job, (int)e->message_len, e->message,
             (int)e->queue_len, e->queue);
    /* the channel is the queue's events channel */
    ck_assert_uint_eq(e->channel_len, e->queue_len + 13);
    ck_assert(memcmp(e->channel, "emq:{", 5) == 0);
    ck_assert(memcmp(e->channel + 5 + e->queue_len, "}:events", 8) == 0);
    g->seq[g->n] = e->seq;
    g->line[g->n++] = s;
}

static void got_free(got *g)
{
    for (int i = 0; i < g->n; i++) free(g->line[i]);
    g->n = 0;
}

static void claimed(emq_db *db, const char *q, const char *id)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, q, id, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, q, 30000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, id);
    emq_job_clear(&j);
}

/* ------------------------------------------------ on the publishing handle */

START_TEST(complete_retry_dead_delay_and_progress_publish_their_events)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_sub *s;
    got g = {{0}, {0}, 0};
    emq_job j;
    ck_assert_int_eq(emq_subscribe(db, Q, EMQ_SUB_NOW, on_ev, &g, &s),
                     EMQ_OK);
    claimed(db, Q, ID1);
    ck_assert_int_eq(g.n, 0); /* enqueue and claim publish nothing */
    ck_assert_int_eq(emq_job_update_progress(db, Q, ID1, "50", 2), EMQ_OK);
    ck_assert_int_eq(emq_complete(db, Q, ID1, 1), EMQ_OK);
    ck_assert_int_eq(g.n, 2); /* delivered before each call returned */
    ck_assert_str_eq(g.line[0], "progress|" ID1 "|{\"event\":\"progress\","
                     "\"job\":\"" ID1 "\",\"progress\":\"50\"}|" Q);
    ck_assert_str_eq(g.line[1], "completed|" ID1 "|{\"event\":\"completed\","
                     "\"job\":\"" ID1 "\"}|" Q);
    /* a second completion answers gone and publishes nothing */
    ck_assert_int_eq(emq_complete(db, Q, ID1, 1), EMQ_GONE);
    ck_assert_int_eq(g.n, 2);
    /* retry: scheduled publishes nothing, dead publishes failed */
    claimed(db, Q, ID2);
    ck_assert_int_eq(emq_retry(db, Q, ID2, 1, 0, 5, "x", 1), EMQ_SCHEDULED);
    ck_assert_int_eq(g.n, 2);
    ck_assert_int_eq(emq_delay(db, Q, ID2, 1, 1000, EMQ_DELAY_AT), EMQ_OK);
    ck_assert_str_eq(g.line[2], "delayed|" ID2 "|{\"event\":\"delayed\","
                     "\"job\":\"" ID2 "\",\"run_at\":\"1000\"}|" Q);
    ck_assert_int_eq(emq_delay(db, Q, ID2, 1, 5, EMQ_DELAY_IN), EMQ_OK);
    ck_assert_str_eq(g.line[3], "delayed|" ID2 "|{\"event\":\"delayed\","
                     "\"job\":\"" ID2 "\",\"run_at\":\"1767225600005\"}|" Q);
    c.now += 10;
    ck_assert_int_eq(emq_promote(db, Q, 10, NULL), EMQ_OK);
    ck_assert_int_eq(emq_claim(db, Q, 30000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_retry(db, Q, ID2, 2, 0, 2, "bad \"x\" \\ y",
                               strlen("bad \"x\" \\ y")), EMQ_DEAD);
    ck_assert_str_eq(g.line[4], "failed|" ID2 "|{\"event\":\"failed\","
                     "\"job\":\"" ID2 "\",\"error\":\"bad \\\"x\\\" \\\\ y\"}|"
                     Q);
    /* stale and gone answers publish nothing */
    ck_assert_int_eq(emq_delay(db, Q, ID1, 1, 5, EMQ_DELAY_IN), EMQ_GONE);
    ck_assert_int_eq(emq_job_update_progress(db, Q, ID1, "9", 1), EMQ_GONE);
    ck_assert_int_eq(g.n, 5);
    for (int i = 1; i < g.n; i++) ck_assert_int_eq(g.seq[i], g.seq[i - 1] + 1);
    emq_unsubscribe(s);
    got_free(&g);
    emq_close(db);
}
END_TEST

START_TEST(progress_escapes_every_byte_as_json_s)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_sub *s;
    got g = {{0}, {0}, 0};
    unsigned char all[256];
    char want[2048];
    size_t w = 0;
    for (int i = 0; i < 256; i++) all[i] = (unsigned char)i;
    w += (size_t)snprintf(want, sizeof want, "progress|" ID1 "|{\"event\":"
                          "\"progress\",\"job\":\"" ID1 "\",\"progress\":\"");
    for (int i = 1; i < 256; i++) { /* NUL ends the collected C string */
        const char *e = NULL;
        char u[8];
        switch (i) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '/': e = "\\/"; break;
        case 8: e = "\\b"; break;
        case 9: e = "\\t"; break;
        case 10: e = "\\n"; break;
        case 12: e = "\\f"; break;
        case 13: e = "\\r"; break;
        default:
            if (i < 0x20 || i == 0x7f) {
                snprintf(u, sizeof u, "\\u%04x", i);
                e = u;
            }
        }
        if (e) w += (size_t)snprintf(want + w, sizeof want - w, "%s", e);
        else want[w++] = (char)i;
    }
    w += (size_t)snprintf(want + w, sizeof want - w, "\"}|" Q);
    ck_assert_int_eq(emq_enqueue(db, Q, ID1, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_subscribe(db, NULL, EMQ_SUB_NOW, on_ev, &g, &s),
                     EMQ_OK);
    ck_assert_int_eq(emq_job_update_progress(db, Q, ID1, all + 1, 255), EMQ_OK);
    ck_assert_int_eq(g.n, 1);
    ck_assert_str_eq(g.line[0], want);
    got_free(&g);
    /* the NUL byte itself */
    ck_assert_int_eq(emq_job_update_progress(db, Q, ID1, all, 1), EMQ_OK);
    ck_assert_str_eq(g.line[0], "progress|" ID1 "|{\"event\":\"progress\","
                     "\"job\":\"" ID1 "\",\"progress\":\"\\u0000\"}|" Q);
    emq_unsubscribe(s);
    got_free(&g);
    emq_close(db);
}
END_TEST

START_TEST(publish_escapes_backslash_then_quote_and_gates_its_names)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_sub *s;
    got g = {{0}, {0}, 0};
    const char *k[2] = {"reason", "n"};
    const void *v[2] = {"a\\\"b/\n", "7"};
    const size_t vn[2] = {6, 1};
    ck_assert_int_eq(emq_subscribe(db, Q, EMQ_SUB_NOW, on_ev, &g, &s),
                     EMQ_OK);
    ck_assert_int_eq(emq_publish(db, Q, "custom", ID1, 2, k, v, vn), EMQ_OK);
    ck_assert_str_eq(g.line[0], "custom|" ID1 "|{\"event\":\"custom\",\"job\":"
                     "\"" ID1 "\",\"reason\":\"a\\\\\\\"b/\n\",\"n\":\"7\"}|"
                     Q);
    ck_assert_int_eq(emq_publish(db, Q, "bad name", ID1, 0, NULL, NULL, NULL),
                     EMQ_EINVAL);
    ck_assert_int_eq(emq_publish(db, Q, "x", "JOB0", 0, NULL, NULL, NULL),
                     EMQ_EID);
    ck_assert_int_eq(emq_publish(db, "a}b", "x", ID1, 0, NULL, NULL, NULL),
                     EMQ_EQUEUE);
    ck_assert_int_eq(g.n, 1);
    emq_unsubscribe(s);
    got_free(&g);
    emq_close(db);
}
END_TEST

START_TEST(a_queue_subscription_sees_only_its_queue_and_events_are_not_keys)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_sub *sa, *sall;
    got a = {{0}, {0}, 0}, all = {{0}, {0}, 0};
    emq_transfer_summary before, after;
    ck_assert_int_eq(emq_subscribe(db, "qa", EMQ_SUB_NOW, on_ev, &a, &sa),
                     EMQ_OK);
    ck_assert_int_eq(emq_subscribe(db, NULL, EMQ_SUB_NOW, on_ev, &all,
                                   &sall), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "qa", ID1, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "qb", ID2, "p", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_digest(db, NULL, &before), EMQ_OK);
    ck_assert_int_eq(emq_publish(db, "qb", "x", ID2, 0, NULL, NULL, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_publish(db, "qa", "y", ID1, 0, NULL, NULL, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_digest(db, NULL, &after), EMQ_OK);
    ck_assert_uint_eq(before.digest, after.digest); /* not in the keyspace */
    ck_assert_uint_eq(before.keys, after.keys);
    ck_assert_int_eq(a.n, 1);
    ck_assert(strncmp(a.line[0], "y|", 2) == 0);
    ck_assert_int_eq(all.n, 2);
    ck_assert(strncmp(all.line[0], "x|", 2) == 0);
    /* the queue subscription's cursor moved past the other queue's event */
    ck_assert_int_eq(emq_sub_cursor(sa), emq_sub_cursor(sall));
    emq_unsubscribe(sa);
    emq_unsubscribe(sall);
    got_free(&a);
    got_free(&all);
    emq_close(db);
}
END_TEST

/* A callback that publishes again on its own handle. */
typedef struct echo {
    emq_db *db;
    got g;
} echo;

static void on_echo(void *ctx, const emq_event *e)
{
    echo *x = ctx;
    on_ev(&x->g, e);
    if (e->name_len == 4 && memcmp(e->name, "ping", 4) == 0)
        ck_assert_int_eq(emq_publish(x->db, Q, "pong", ID1, 0, NULL, NULL,
                                     NULL), EMQ_OK);
}

START_TEST(a_callback_may_call_the_handle_and_its_events_follow_in_order)
{
    tclock c;
    echo x;
    emq_sub *s;
    memset(&x, 0, sizeof x);
    x.db = topen(&c);
    ck_assert_int_eq(emq_subscribe(x.db, Q, EMQ_SUB_NOW, on_echo, &x, &s),
                     EMQ_OK);
    ck_assert_int_eq(emq_publish(x.db, Q, "ping", ID1, 0, NULL, NULL, NULL),
                     EMQ_OK);
    ck_assert_int_eq(x.g.n, 2);
    ck_assert(strncmp(x.g.line[1], "pong|", 5) == 0);
    ck_assert_int_eq(x.g.seq[1], x.g.seq[0] + 1);
    emq_unsubscribe(s);
    got_free(&x.g);
    emq_close(x.db);
}
END_TEST

/* -------------------------------------------------- cursors and retention */

static char dir[256], path[300];

static void fsetup(void)
{
    tdir_make(dir, sizeof dir, "emqev", path, sizeof path);
}

static void fteardown(void)
{
    tdir_remove(dir);
}

static emq_db *fopen_db(tclock *c)
{
    emq_options o;
    emq_db *db = NULL;
    emq_options_init(&o);
    c->now = T0;
    c->reads = 0;
    o.clock = tclock_fn;
    o.clock_ctx = c;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    return db;
}

START_TEST(a_saved_cursor_resumes_and_pruned_events_are_counted_lost)
{
    tclock c;
    emq_db *db = fopen_db(&c);
    emq_sub *s;
    got g = {{0}, {0}, 0};
    int64_t cursor;
    size_t n;
    ck_assert_int_eq(emq_subscribe(db, Q, EMQ_SUB_NOW, on_ev, &g, &s),
                     EMQ_OK);
    ck_assert_int_eq(emq_publish(db, Q, "a", ID1, 0, NULL, NULL, NULL),
                     EMQ_OK);
    cursor = emq_sub_cursor(s);
    ck_assert_int_eq(cursor, g.seq[0]);
    emq_unsubscribe(s); /* the subscriber stops... */
    got_free(&g);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(emq_publish(db, Q, "b", ID1, 0, NULL, NULL, NULL),
                         EMQ_OK);
    /* ...and resumes from its cursor: the three, nothing lost */
    ck_assert_int_eq(emq_subscribe(db, Q, cursor, on_ev, &g, &s), EMQ_OK);
    ck_assert_int_eq(emq_sub_poll(s, 0, &n), EMQ_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(emq_sub_lost(s), 0);
    ck_assert_int_eq(g.seq[0], cursor + 1);
    emq_unsubscribe(s);
    got_free(&g);
    /* keep 10: 200 more, then a subscriber from 0 finds the gap */
    ck_assert_int_eq(emq_events_retention(db, 10, 0), EMQ_OK);
    for (int i = 0; i < 200; i++)
        ck_assert_int_eq(emq_publish(db, Q, "c", ID1, 0, NULL, NULL, NULL),
                         EMQ_OK);
    ck_assert_int_eq(emq_subscribe(db, Q, 0, on_ev, &g, &s), EMQ_OK);
    ck_assert_int_eq(emq_sub_poll(s, 0, &n), EMQ_OK);
    ck_assert_uint_eq(n, (size_t)g.n);
    ck_assert_int_ge(g.n, 10);       /* at least `keep` retained ... */
    ck_assert_int_lt(g.n, 10 + 64);  /* ... pruned every 64 appends */
    ck_assert_int_eq(emq_sub_lost(s) + g.n, 204);
    ck_assert_int_eq(g.seq[g.n - 1], 204);
    for (int i = 1; i < g.n; i++) ck_assert_int_eq(g.seq[i], g.seq[i - 1] + 1);
    /* max of a poll */
    emq_unsubscribe(s);
    got_free(&g);
    ck_assert_int_eq(emq_subscribe(db, Q, 200, on_ev, &g, &s), EMQ_OK);
    ck_assert_int_eq(emq_sub_poll(s, 3, &n), EMQ_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(emq_sub_cursor(s), 203);
    emq_unsubscribe(s);
    got_free(&g);
    emq_close(db);
}
END_TEST

START_TEST(events_older_than_the_age_limit_are_pruned)
{
    tclock c;
    emq_db *db = fopen_db(&c);
    emq_sub *s;
    got g = {{0}, {0}, 0};
    size_t n;
    ck_assert_int_eq(emq_events_retention(db, 0, 1000), EMQ_OK);
    for (int i = 0; i < 63; i++)
        ck_assert_int_eq(emq_publish(db, Q, "old", ID1, 0, NULL, NULL, NULL),
                         EMQ_OK);
    c.now += 5000;
    ck_assert_int_eq(emq_publish(db, Q, "new", ID1, 0, NULL, NULL, NULL),
                     EMQ_OK); /* the 64th: its prune drops the 63 old */
    ck_assert_int_eq(emq_subscribe(db, Q, 0, on_ev, &g, &s), EMQ_OK);
    ck_assert_int_eq(emq_sub_poll(s, 0, &n), EMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert(strncmp(g.line[0], "new|", 4) == 0);
    ck_assert_int_eq(emq_sub_lost(s), 63);
    emq_unsubscribe(s);
    got_free(&g);
    emq_close(db);
}
END_TEST

/* ------------------------------------------------------- across processes */

#define NJOBS 40

/* The child's side: once the parent subscribed (a byte on `go`), its own
 * handle on the file, NJOBS completions and a progress update. Exits 0 on
 * success. (Each process opens the file after the fork: SQLite handles
 * must not cross one.) */
static void child_writes(int go)
{
    tclock c;
    emq_db *db;
    char id[EMQ_ID_SIZE], b;
    int ok = read(go, &b, 1) == 1;
    db = fopen_db(&c);
    for (int i = 0; i < NJOBS && ok; i++) {
        emq_job j;
        snprintf(id, sizeof id, "JOB%011u", (unsigned)i + 1);
        ok = emq_enqueue(db, Q, id, "p", 1) == EMQ_ENQUEUED &&
             emq_claim(db, Q, 30000, &j) == EMQ_OK &&
             emq_complete(db, Q, j.id, j.attempts) == EMQ_OK;
        if (ok) emq_job_clear(&j);
    }
    ok = ok && emq_enqueue(db, Q, "JOB99999999999", "p", 1) == EMQ_ENQUEUED &&
         emq_job_update_progress(db, Q, "JOB99999999999", "done", 4) == EMQ_OK;
    emq_close(db);
    _exit(ok ? 0 : 1);
}

/* Wait for `want` events on `s`, bounded by `ms` of real time. */
static void wait_for(emq_sub *s, got *g, int want, int64_t ms)
{
    int64_t spent = 0;
    while (g->n < want && spent < ms) {
        size_t n;
        int rc = emq_sub_wait(s, 100, &n);
        ck_assert(rc == EMQ_OK || rc == EMQ_EMPTY);
        spent += rc == EMQ_EMPTY ? 100 : 0;
    }
}

START_TEST(another_process_commits_reach_a_subscriber_in_order)
{
    tclock c;
    emq_db *db;
    emq_sub *s;
    got g = {{0}, {0}, 0};
    int status, go[2];
    pid_t pid;
    ck_assert_int_eq(pipe(go), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(go[1]);
        child_writes(go[0]);
    }
    close(go[0]);
    db = fopen_db(&c);
    ck_assert_int_eq(emq_subscribe(db, Q, EMQ_SUB_NOW, on_ev, &g, &s),
                     EMQ_OK);
    ck_assert_int_eq(write(go[1], "g", 1), 1);
    close(go[1]);
    wait_for(s, &g, NJOBS + 1, 20000);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(g.n, NJOBS + 1);
    for (int i = 0; i < NJOBS; i++) {
        char want[128];
        snprintf(want, sizeof want, "completed|JOB%011d|{\"event\":"
                 "\"completed\",\"job\":\"JOB%011d\"}|" Q, i + 1, i + 1);
        ck_assert_str_eq(g.line[i], want);
        if (i > 0) ck_assert_int_eq(g.seq[i], g.seq[i - 1] + 1);
    }
    ck_assert_str_eq(g.line[NJOBS], "progress|JOB99999999999|{\"event\":"
                     "\"progress\",\"job\":\"JOB99999999999\",\"progress\":"
                     "\"done\"}|" Q);
    ck_assert_int_eq(emq_sub_lost(s), 0);
    emq_unsubscribe(s);
    got_free(&g);
    emq_close(db);
}
END_TEST

START_TEST(a_subscriber_in_another_process_receives_this_processes_events)
{
    int ready[2], status;
    char b;
    pid_t pid;
    ck_assert_int_eq(pipe(ready), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        tclock c;
        emq_db *db = fopen_db(&c);
        emq_sub *s;
        got g = {{0}, {0}, 0};
        int ok = emq_subscribe(db, Q, EMQ_SUB_NOW, on_ev, &g, &s) == EMQ_OK;
        close(ready[0]);
        ok = ok && write(ready[1], "r", 1) == 1; /* subscribed */
        close(ready[1]);
        for (int spent = 0; ok && g.n < 3 && spent < 20000;) {
            size_t n;
            if (emq_sub_wait(s, 100, &n) == EMQ_EMPTY) spent += 100;
        }
        ok = ok && g.n == 3 && strncmp(g.line[0], "one|", 4) == 0 &&
             strncmp(g.line[1], "two|", 4) == 0 &&
             strncmp(g.line[2], "three|", 6) == 0 && emq_sub_lost(s) == 0;
        emq_unsubscribe(s);
        got_free(&g);
        emq_close(db);
        _exit(ok ? 0 : 1);
    }
    close(ready[1]);
    ck_assert_int_eq(read(ready[0], &b, 1), 1); /* wait: it subscribed */
    close(ready[0]);
    {
        tclock c;
        emq_db *db = fopen_db(&c);
        ck_assert_int_eq(emq_publish(db, Q, "one", ID1, 0, NULL, NULL, NULL),
                         EMQ_OK);
        ck_assert_int_eq(emq_publish(db, "other", "x", ID1, 0, NULL, NULL,
                                     NULL), EMQ_OK);
        ck_assert_int_eq(emq_publish(db, Q, "two", ID1, 0, NULL, NULL, NULL),
                         EMQ_OK);
        ck_assert_int_eq(emq_publish(db, Q, "three", ID1, 0, NULL, NULL,
                                     NULL), EMQ_OK);
        emq_close(db);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

START_TEST(subscribe_gates_its_arguments)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_sub *s = (emq_sub *)1;
    got g = {{0}, {0}, 0};
    size_t n = 9;
    ck_assert_int_eq(emq_subscribe(db, "", EMQ_SUB_NOW, on_ev, &g, &s),
                     EMQ_EQUEUE);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(emq_subscribe(db, Q, EMQ_SUB_NOW, NULL, &g, &s),
                     EMQ_EINVAL);
    ck_assert_int_eq(emq_subscribe(db, Q, -2, on_ev, &g, &s), EMQ_EINVAL);
    ck_assert_int_eq(emq_subscribe(NULL, Q, 0, on_ev, &g, &s), EMQ_EINVAL);
    ck_assert_int_eq(emq_sub_poll(NULL, 0, &n), EMQ_EINVAL);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(emq_events_retention(db, -1, 0), EMQ_EINVAL);
    /* an empty log: nothing to wait for */
    ck_assert_int_eq(emq_subscribe(db, Q, 0, on_ev, &g, &s), EMQ_OK);
    ck_assert_int_eq(emq_sub_wait(s, 0, &n), EMQ_EMPTY);
    ck_assert_int_eq(emq_sub_cursor(s), 0);
    emq_unsubscribe(NULL);
    emq_close(db); /* releases the subscription still open */
}
END_TEST

Suite *suite_ops_events(void)
{
    Suite *s = suite_create("ops_events");
    TCase *t = tcase_create("handle");
    TCase *f = tcase_create("file");
    tcase_add_test(t, complete_retry_dead_delay_and_progress_publish_their_events);
    tcase_add_test(t, progress_escapes_every_byte_as_json_s);
    tcase_add_test(t, publish_escapes_backslash_then_quote_and_gates_its_names);
    tcase_add_test(t, a_queue_subscription_sees_only_its_queue_and_events_are_not_keys);
    tcase_add_test(t, a_callback_may_call_the_handle_and_its_events_follow_in_order);
    tcase_add_test(t, subscribe_gates_its_arguments);
    suite_add_tcase(s, t);
    tcase_add_checked_fixture(f, fsetup, fteardown);
    tcase_set_timeout(f, 60);
    tcase_add_test(f, a_saved_cursor_resumes_and_pruned_events_are_counted_lost);
    tcase_add_test(f, events_older_than_the_age_limit_are_pruned);
    tcase_add_test(f, another_process_commits_reach_a_subscriber_in_order);
    tcase_add_test(f, a_subscriber_in_another_process_receives_this_processes_events);
    suite_add_tcase(s, f);
    return s;
}
