/*
 * cli_demo.c — `emqlite demo`: a short, realistic story told through the
 * public API on the user's file, then a summary of what happened.
 *
 * The story: a web shop enqueues a few thousand jobs over three queues (mail,
 * thumbnails, billing) with enqueue_many; one worker claims and completes
 * them; some fail transiently and come back after an exponential backoff
 * (computed here, caller side, as the protocol says); one card keeps being
 * declined until the job dead-letters; a monthly report is scheduled a
 * minute ahead and promoted; a second worker crashes holding a lease, the
 * reaper returns its job, and its late completion is refused as stale.
 *
 * Rules: time is a virtual clock installed with emq_set_clock, starting at the
 * real time and advanced by the story, so nothing sleeps and every run tells
 * the same story (ids and wall-clock figures aside). Ids are minted under the
 * wall clock so that a second run, which starts at a real time earlier than
 * the first run's virtual end, still mints fresh ids.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"

#define NQ 3
#define BATCH 500          /* items per enqueue_many transaction  */
#define LEASE_MS 30000     /* the worker's lease                  */
#define CRASH_LEASE_MS 5000
#define PUMP_MS 1000       /* promote + reap beat                 */
#define BACKOFF_BASE 1000  /* exponential(1000, 30000)            */
#define BACKOFF_CAP 30000
#define TRANSIENT_MAX 5    /* attempts cap of ordinary jobs       */
#define DOOMED_MAX 4       /* attempts cap of the declined charge */
#define REPORT_IN_MS 60000
#define TAIL_JOBS 25       /* mail left pending for the reader    */
#define MAX_EVENTS 32

/* One queue of the story and this run's figures for it. */
typedef struct dq {
    const char *name;
    int n;                      /* jobs enqueued by the first wave      */
    int cost_ms;                /* virtual time one job takes           */
    char (*ids)[EMQ_ID_SIZE];   /* this run's wave, in mint order       */
    unsigned char *fails;       /* planned failures left, per job       */
    unsigned char *done;        /* 1 once completed or dead             */
    long enqueued, duplicate, processed, retried, dead, promoted, reaped;
    long planned;               /* transient failures planned           */
} dq;

typedef struct vclock {
    int64_t now;
} vclock;

static int64_t vclock_read(void *ctx)
{
    return ((vclock *)ctx)->now;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t real_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The story's state. */
typedef struct demo {
    emq_cli *c;
    emq_db *db;
    vclock vc;
    int64_t t0;                 /* virtual start                        */
    dq q[NQ];
    char crash_id[EMQ_ID_SIZE]; /* the job w2 held when it crashed      */
    int crash_state;            /* 0 none, 1 held, 2 reaped, 3 done     */
    char report_id[EMQ_ID_SIZE];/* the delayed monthly report           */
    int report_done;
    char dead_id[EMQ_ID_SIZE];  /* the declined charge                  */
    int extended;               /* the lease extension was shown        */
    int paused;                 /* 0 never, 1 paused, 2 resumed         */
    long outstanding;           /* this run's jobs not yet done         */
    long cycles, txns, enq_jobs;
    double enq_secs, work_secs;
    char *events[MAX_EVENTS];
    int nevents;
} demo;

/* Record (and in text mode print) one line of the story. */
static void event(demo *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void event(demo *d, const char *fmt, ...)
{
    char line[300], stamp[32];
    int64_t t = d->vc.now - d->t0;
    snprintf(stamp, sizeof stamp, "+%lld.%03llds", (long long)(t / 1000),
             (long long)(t % 1000));
    int n = snprintf(line, sizeof line, "%-9s ", stamp);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (!d->c->json)
        printf("  %s\n", line);
    if (d->nevents < MAX_EVENTS)
        d->events[d->nevents++] = strdup(line);
}

static int fail(demo *d, int rc)
{
    return emq_cli_fail(d->c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
}

static int64_t backoff(int64_t attempts)
{
    int64_t d = BACKOFF_BASE;
    for (int64_t i = 1; i < attempts && d < BACKOFF_CAP; i++)
        d *= 2;
    return d < BACKOFF_CAP ? d : BACKOFF_CAP;
}

/* The index of `id` in this run's wave of queue `q`, or -1 (a job from an
 * earlier run, or one somebody else enqueued). */
static long find(const dq *q, const char *id)
{
    long lo = 0, hi = q->n - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        int cmp = strcmp(q->ids[mid], id);
        if (cmp == 0)
            return mid;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Write job i's payload for queue k into buf. */
static size_t payload(int k, int i, char *buf, size_t size)
{
    static const char *tmpl[] = { "welcome", "receipt", "password-reset",
                                  "weekly-digest" };
    int n;
    if (k == 0)
        n = snprintf(buf, size, "{\"to\":\"user%05d@example.com\","
                     "\"template\":\"%s\"}", 17 + i * 7, tmpl[i % 4]);
    else if (k == 1)
        n = snprintf(buf, size, "{\"image\":\"uploads/2024/%06d.jpg\","
                     "\"sizes\":[64,256,1024]}", 100000 + i * 3);
    else
        n = snprintf(buf, size, "{\"invoice\":\"INV-%06d\",\"customer\":"
                     "\"cus_%05d\",\"amount_cents\":%d}", 41000 + i,
                     300 + i * 11 % 9000, 500 + i * 37 % 20000);
    return (size_t)n;
}

/* Mint `n` ids under the wall clock (see the file comment). */
static int mint_ids(demo *d, char (*ids)[EMQ_ID_SIZE], int n)
{
    int rc = EMQ_OK;
    emq_set_clock(d->db, NULL, NULL);
    for (int i = 0; i < n && rc == EMQ_OK; i++)
        rc = emq_mint(d->db, "JOB", ids[i]);
    emq_set_clock(d->db, vclock_read, &d->vc);
    return rc;
}

/* ----------------------------------------------------------- enqueueing */

static int enqueue_wave(demo *d)
{
    static char pay[BATCH][160];
    emq_item items[BATCH];
    int verdicts[BATCH];
    double t = wall_now();

    for (int k = 0; k < NQ; k++) {
        dq *q = &d->q[k];
        int rc = mint_ids(d, q->ids, q->n);
        if (rc != EMQ_OK)
            return fail(d, rc);
        for (int base = 0; base < q->n; base += BATCH) {
            int m = q->n - base < BATCH ? q->n - base : BATCH;
            for (int j = 0; j < m; j++) {
                items[j].id = q->ids[base + j];
                items[j].payload = pay[j];
                items[j].len = payload(k, base + j, pay[j], sizeof pay[j]);
            }
            rc = emq_enqueue_many(d->db, q->name, items, (size_t)m, verdicts);
            if (rc != EMQ_OK)
                return fail(d, rc);
            d->txns++;
            for (int j = 0; j < m; j++) {
                if (verdicts[j] == EMQ_ENQUEUED) {
                    q->enqueued++;
                    d->outstanding++;
                } else {
                    q->duplicate++;
                    q->done[base + j] = 1;
                }
            }
        }
        d->enq_jobs += q->n;
    }
    d->enq_secs += wall_now() - t;
    event(d, "enqueued %ld mail, %ld thumbnails, %ld billing jobs "
          "(enqueue_many, %ld transactions)", d->q[0].enqueued,
          d->q[1].enqueued, d->q[2].enqueued, d->txns);
    return 0;
}

static int schedule_report(demo *d)
{
    const char *p = "{\"report\":\"monthly-revenue\",\"format\":\"pdf\"}";
    int rc = mint_ids(d, &d->report_id, 1);
    if (rc != EMQ_OK)
        return fail(d, rc);
    rc = emq_enqueue_in(d->db, "billing", d->report_id, p, strlen(p),
                        REPORT_IN_MS);
    if (rc != EMQ_SCHEDULED)
        return fail(d, rc);
    d->txns++;
    d->enq_jobs++;
    d->q[2].enqueued++;
    event(d, "scheduled the monthly report %s on billing to run in %ds "
          "(enqueue_in)", d->report_id, REPORT_IN_MS / 1000);
    return 0;
}

/* Worker w2 claims the oldest mail job with a short lease and dies. */
static int crash_worker(demo *d)
{
    emq_job job;
    memset(&job, 0, sizeof job);
    int rc = emq_claim(d->db, "mail", CRASH_LEASE_MS, &job);
    if (rc == EMQ_EMPTY)
        return 0;
    if (rc != EMQ_OK)
        return fail(d, rc);
    memcpy(d->crash_id, job.id, EMQ_ID_SIZE);
    d->crash_state = 1;
    d->cycles++;
    event(d, "worker w2 claimed mail %s (token %lld, lease %ds) and crashed",
          job.id, (long long)job.attempts, CRASH_LEASE_MS / 1000);
    emq_job_clear(&job);
    return 0;
}

/* ------------------------------------------------------------ the worker */

/* promote + reap every queue: the pump's beat. */
static int pump(demo *d)
{
    for (int k = 0; k < NQ; k++) {
        dq *q = &d->q[k];
        int64_t promoted = 0, reaped = 0;
        int rc = emq_promote(d->db, q->name, 100, &promoted);
        if (rc < 0)
            return fail(d, rc);
        if ((rc = emq_reap(d->db, q->name, &reaped)) < 0)
            return fail(d, rc);
        q->promoted += promoted;
        q->reaped += reaped;
        if (reaped > 0 && k == 0 && d->crash_state == 1) {
            emq_field *f = NULL;
            size_t nf = 0;
            if (emq_job_get(d->db, "mail", d->crash_id, &f, &nf) == EMQ_OK) {
                for (size_t i = 0; i < nf; i++)
                    if (strcmp(f[i].name, "state") == 0 &&
                        strcmp(f[i].value, "pending") == 0)
                        d->crash_state = 2;
                emq_fields_free(f, nf);
            }
            if (d->crash_state == 2)
                event(d, "reaper: w2's lease on %s lapsed; back to pending "
                      "(reap)", d->crash_id);
        }
    }
    /* operations pause thumbnails for a deploy, then resume them */
    int64_t t = d->vc.now - d->t0;
    if (d->paused == 0 && t >= 3000) {
        int rc = emq_queue_pause(d->db, "thumbnails");
        if (rc < 0)
            return fail(d, rc);
        d->paused = 1;
        event(d, "ops paused thumbnails for a deploy (claims answer empty)");
    } else if (d->paused == 1 && t >= 5000) {
        int rc = emq_queue_resume(d->db, "thumbnails");
        if (rc < 0)
            return fail(d, rc);
        d->paused = 2;
        event(d, "ops resumed thumbnails");
    }
    return 0;
}

/* Mark job `idx` of queue `q` (or the special jobs) resolved. */
static void resolved(demo *d, dq *q, long idx, const char *id)
{
    if (idx >= 0 && !q->done[idx]) {
        q->done[idx] = 1;
        d->outstanding--;
    }
    if (strcmp(id, d->report_id) == 0 && !d->report_done) {
        d->report_done = 1;
        d->outstanding--;
    }
}

/* One claim cycle on queue k: claim, "work", complete or retry. Sets *got. */
static int cycle(demo *d, int k, int *got)
{
    dq *q = &d->q[k];
    emq_job job;
    int rc;

    *got = 0;
    memset(&job, 0, sizeof job);
    rc = emq_claim(d->db, q->name, LEASE_MS, &job);
    if (rc == EMQ_EMPTY)
        return 0;
    if (rc != EMQ_OK)
        return fail(d, rc);
    *got = 1;
    d->cycles++;
    d->vc.now += q->cost_ms;

    long idx = find(q, job.id);
    int is_crash = d->crash_state && strcmp(job.id, d->crash_id) == 0;
    if (is_crash) {
        /* w2 comes back from the dead and presents its old token */
        rc = emq_complete(d->db, q->name, job.id, job.attempts - 1);
        if (rc == EMQ_ESTALE)
            event(d, "w2 woke up and completed %s with token %lld: %s",
                  job.id, (long long)job.attempts - 1, emq_errmsg(d->db));
    }
    if (k == 2 && !d->extended && idx >= 0) {
        /* a slow invoice: the worker heartbeats its lease once */
        rc = emq_lock_extend(d->db, q->name, job.id, job.attempts, 60000);
        if (rc != EMQ_OK) {
            emq_job_clear(&job);
            return fail(d, rc);
        }
        d->extended = 1;
        event(d, "billing %s is slow: lease extended by 60s (extend)",
              job.id);
    }

    if (idx >= 0 && q->fails[idx] > 0) {
        int doomed = q->fails[idx] == 255;
        const char *why = k == 0 ? "421 4.7.0 try again later"
                        : k == 1 ? "decoder timeout"
                        : "card_declined: insufficient funds";
        int64_t delay = backoff(job.attempts);
        if (!doomed)
            q->fails[idx]--;
        rc = emq_retry(d->db, q->name, job.id, job.attempts, delay,
                       doomed ? DOOMED_MAX : TRANSIENT_MAX, why, strlen(why));
        if (rc == EMQ_SCHEDULED) {
            q->retried++;
            if (!doomed && q->retried == 1)
                event(d, "%s %s failed (%s): retry in %llds, the first of "
                      "%ld transient failures on %s", q->name, job.id, why,
                      (long long)delay / 1000, q->planned, q->name);
            if (doomed)
                event(d, "billing %s failed (%s), attempt %lld: retry in "
                      "%llds", job.id, why, (long long)job.attempts,
                      (long long)delay / 1000);
        } else if (rc == EMQ_DEAD) {
            q->dead++;
            memcpy(d->dead_id, job.id, EMQ_ID_SIZE);
            resolved(d, q, idx, job.id);
            event(d, "billing %s failed attempt %lld: dead-lettered (retry "
                  "answered dead)", job.id, (long long)job.attempts);
        } else {
            emq_job_clear(&job);
            return fail(d, rc);
        }
    } else {
        rc = emq_complete(d->db, q->name, job.id, job.attempts);
        if (rc != EMQ_OK) {
            emq_job_clear(&job);
            return fail(d, rc);
        }
        q->processed++;
        resolved(d, q, idx, job.id);
        if (is_crash) {
            d->crash_state = 3;
            event(d, "w1 completed %s with token %lld", job.id,
                  (long long)job.attempts);
        }
        if (strcmp(job.id, d->report_id) == 0)
            event(d, "the monthly report %s was promoted, claimed and "
                  "completed", job.id);
    }
    emq_job_clear(&job);
    return 0;
}

static int work(demo *d)
{
    double t = wall_now();
    int64_t next_pump = d->vc.now + PUMP_MS;
    long guard = 0;

    event(d, "worker w1 started: claim (%ds lease), work, complete; a failure "
          "is retried after min(1s x 2^(attempts-1), 30s)", LEASE_MS / 1000);

    while (d->outstanding > 0 || d->crash_state == 1 || d->crash_state == 2) {
        int any = 0, got, ex;
        for (int k = 0; k < NQ; k++) {
            if ((ex = cycle(d, k, &got)))
                return ex;
            any |= got;
        }
        if (!any && d->vc.now < next_pump)
            d->vc.now = next_pump; /* idle: jump to the next beat */
        if (d->vc.now >= next_pump) {
            if ((ex = pump(d)))
                return ex;
            next_pump += PUMP_MS;
        }
        if (++guard > 1000000 || d->vc.now - d->t0 > 3600000) {
            event(d, "stopping: jobs outside this story keep the queues busy");
            break;
        }
    }
    d->work_secs += wall_now() - t;
    return 0;
}

/* The tail: the evening's mail, left pending for the reader to claim. */
static int tail(demo *d)
{
    char ids[TAIL_JOBS][EMQ_ID_SIZE], pay[TAIL_JOBS][160];
    emq_item items[TAIL_JOBS];
    int verdicts[TAIL_JOBS];
    double t = wall_now();
    int rc = mint_ids(d, ids, TAIL_JOBS);
    if (rc != EMQ_OK)
        return fail(d, rc);
    for (int j = 0; j < TAIL_JOBS; j++) {
        items[j].id = ids[j];
        items[j].payload = pay[j];
        items[j].len = payload(0, 5000 + j, pay[j], sizeof pay[j]);
    }
    rc = emq_enqueue_many(d->db, "mail", items, TAIL_JOBS, verdicts);
    if (rc != EMQ_OK)
        return fail(d, rc);
    d->enq_secs += wall_now() - t;
    d->txns++;
    d->enq_jobs += TAIL_JOBS;
    d->q[0].enqueued += TAIL_JOBS;
    event(d, "%d more mail jobs arrived after the worker stopped: left "
          "pending", TAIL_JOBS);
    return 0;
}

/* -------------------------------------------------------------- summary */

static void fmt_rate(char *buf, size_t n, double count, double secs)
{
    if (secs <= 0)
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.0f", count / secs);
}

static int summary(demo *d)
{
    char **names = NULL;
    size_t nq = 0;
    emq_stats *st = NULL;
    char er[32], wr[32];
    int rc = emq_queues(d->db, &names, &nq);
    if (rc < 0)
        return fail(d, rc);
    st = calloc(nq ? nq : 1, sizeof *st);
    for (size_t i = 0; st && i < nq; i++)
        if ((rc = emq_stats_get(d->db, names[i], &st[i])) < 0)
            break;
    if (!st || rc < 0) {
        free(st);
        emq_queues_free(names, nq);
        return fail(d, st ? rc : EMQ_ENOMEM);
    }
    fmt_rate(er, sizeof er, (double)d->enq_jobs, d->enq_secs);
    fmt_rate(wr, sizeof wr, (double)d->cycles, d->work_secs);
    int64_t vt = d->vc.now - d->t0;

    if (d->c->json) {
        fputs("{\"db\":", stdout);
        emq_cli_json_str(stdout, d->c->db_path);
        fputs(",\"run\":{\"queues\":[", stdout);
        for (int k = 0; k < NQ; k++) {
            dq *q = &d->q[k];
            printf("%s{\"queue\":\"%s\",\"enqueued\":%ld,\"duplicate\":%ld,"
                   "\"completed\":%ld,\"retried\":%ld,\"dead\":%ld,"
                   "\"promoted\":%ld,\"reaped\":%ld}", k ? "," : "", q->name,
                   q->enqueued, q->duplicate, q->processed, q->retried,
                   q->dead, q->promoted, q->reaped);
        }
        printf("],\"enqueue\":{\"jobs\":%ld,\"transactions\":%ld,"
               "\"seconds\":%.3f,\"per_second\":%s},"
               "\"worker\":{\"cycles\":%ld,\"seconds\":%.3f,"
               "\"per_second\":%s},\"virtual_ms\":%lld,",
               d->enq_jobs, d->txns, d->enq_secs,
               d->enq_secs > 0 ? er : "null", d->cycles, d->work_secs,
               d->work_secs > 0 ? wr : "null", (long long)vt);
        fputs("\"dead_letter\":", stdout);
        emq_cli_json_str(stdout, d->dead_id);
        fputs(",\"events\":[", stdout);
        for (int i = 0; i < d->nevents; i++) {
            if (i)
                fputc(',', stdout);
            emq_cli_json_str(stdout, d->events[i]);
        }
        fputs("]},\"totals\":{\"queues\":[", stdout);
        emq_cli_json_stats(names, st, NULL, nq);
        puts("]}}");
    } else {
        const char *db = d->c->db_path;
        int dflt = strcmp(db, "./emqlite.db") == 0 || strcmp(db, "emqlite.db") == 0;
        char dbopt[600] = "";
        if (!dflt)
            snprintf(dbopt, sizeof dbopt, "--db %s ", db);

        printf("\nThis run\n  %-11s %8s %9s %7s %4s %8s %6s\n", "queue",
               "enqueued", "completed", "retried", "dead", "promoted",
               "reaped");
        for (int k = 0; k < NQ; k++) {
            dq *q = &d->q[k];
            printf("  %-11s %8ld %9ld %7ld %4ld %8ld %6ld\n", q->name,
                   q->enqueued, q->processed, q->retried, q->dead,
                   q->promoted, q->reaped);
        }
        printf("  enqueue  %ld jobs in %ld transactions, %.3f s wall "
               "(%s jobs/s)\n", d->enq_jobs, d->txns, d->enq_secs, er);
        printf("  worker   %ld claim cycles (claim + complete or retry), "
               "%.3f s wall (%s cycles/s)\n", d->cycles, d->work_secs, wr);
        printf("  clock    %lld.%03lld s of virtual time, nothing slept\n",
               (long long)(vt / 1000), (long long)(vt % 1000));
        printf("\nFile totals: %s\n", db);
        emq_cli_stats_table(stdout, names, st, NULL, nq);
        char cmd[6][700];
        const char *why[6];
        int nc = 0, w = 0;
        snprintf(cmd[nc], sizeof cmd[nc], "emqlite %sstats", dbopt);
        why[nc++] = "the table above, any time";
        snprintf(cmd[nc], sizeof cmd[nc], "emqlite %sclaim mail", dbopt);
        why[nc++] = "take one of the pending mail jobs";
        if (d->dead_id[0]) {
            snprintf(cmd[nc], sizeof cmd[nc], "emqlite %sjob billing %s",
                     dbopt, d->dead_id);
            why[nc++] = "the dead letter and its last_error";
        }
        snprintf(cmd[nc], sizeof cmd[nc], "emqlite %sstats --json", dbopt);
        why[nc++] = "the same figures as JSON";
        snprintf(cmd[nc], sizeof cmd[nc], "emqlite %sexport > emqlite.resp",
                 dbopt);
        why[nc++] = "the file as Valkey commands (RESP)";
        snprintf(cmd[nc], sizeof cmd[nc], "redis-cli --pipe < emqlite.resp");
        why[nc++] = "replay it into Valkey";
        for (int i = 0; i < nc; i++)
            if ((int)strlen(cmd[i]) > w)
                w = (int)strlen(cmd[i]);
        printf("\nTry next\n");
        for (int i = 0; i < nc; i++)
            printf("  %-*s  # %s\n", w, cmd[i], why[i]);
    }
    free(st);
    emq_queues_free(names, nq);
    return 0;
}

/* -------------------------------------------------------------- the demo */

int emq_cli_demo(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    static const char *qname[NQ] = { "mail", "thumbnails", "billing" };
    static const int qn[NQ] = { 2000, 1200, 400 };
    static const int qcost[NQ] = { 2, 4, 3 };
    demo d;
    int npos, ex;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 0, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)))
        return ex;
    for (int k = 0; k < NQ; k++) {
        emq_stats st;
        int rc = emq_stats_get(c->db, qname[k], &st);
        if (rc < 0)
            return emq_cli_fail(c, rc, NULL);
        if (st.paused)
            return emq_cli_usage(c, "queue '%s' is paused; 'emqlite resume "
                                 "%s' first", qname[k], qname[k]);
    }
    memset(&d, 0, sizeof d);
    d.c = c;
    d.db = c->db;
    d.vc.now = d.t0 = real_ms();
    emq_set_clock(d.db, vclock_read, &d.vc);

    for (int k = 0; k < NQ; k++) {
        dq *q = &d.q[k];
        q->name = qname[k];
        q->n = qn[k];
        q->cost_ms = qcost[k];
        q->ids = calloc((size_t)q->n, sizeof *q->ids);
        q->fails = calloc((size_t)q->n, 1);
        q->done = calloc((size_t)q->n, 1);
        if (!q->ids || !q->fails || !q->done) {
            ex = emq_cli_fail(c, EMQ_ENOMEM, NULL);
            goto done;
        }
        for (int i = 0; i < q->n; i++) {
            if (k == 0 && i % 250 == 99)
                q->fails[i] = 1;        /* the mail relay pushes back */
            if (k == 1 && i % 40 == 17)
                q->fails[i] = 1;        /* a flaky image decoder      */
            q->planned += q->fails[i];
        }
    }
    d.q[2].fails[7] = 255;              /* a card that stays declined */

    if (!c->json)
        printf("emqlite demo on %s (emqlite %s, wire %s, SQLite %s, node "
               "%d)\n\n", c->db_path, emq_version(), EMQ_WIRE,
               emq_sqlite_version(), emq_node_id(d.db));
    if ((ex = enqueue_wave(&d)) || (ex = schedule_report(&d)) ||
        (ex = crash_worker(&d)))
        goto done;
    d.outstanding++;                    /* the monthly report */
    if ((ex = work(&d)) || (ex = tail(&d)) || (ex = summary(&d)))
        goto done;
    ex = EMQ_EXIT_OK;
done:
    emq_set_clock(d.db, NULL, NULL);
    if (d.paused == 1)
        emq_queue_resume(d.db, "thumbnails");
    for (int k = 0; k < NQ; k++) {
        free(d.q[k].ids);
        free(d.q[k].fails);
        free(d.q[k].done);
    }
    for (int i = 0; i < d.nevents; i++)
        free(d.events[i]);
    return ex;
}
