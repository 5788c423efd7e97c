/*
 * relwork.c — producer, worker and reaper loops for the concurrency and
 * crash tests (see relwork.h).
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "relwork.h"

int64_t rel_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t rel_rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Count a call of `verb` that started at t0 (mono_us) and returned rc. */
static int tally(rel_work *w, const char *verb, int write, int rc, int64_t t0)
{
    volatile rel_tally *t = w->tally;
    int64_t took;
    if (t == NULL) return rc;
    took = mono_us() - t0;
    if (took > t->max_call_us) {
        t->max_call_us = took;
        t->max_call = verb;
    }
    if (rc == EMQ_EBUSY) {
        t->busy++;
        if (took > t->max_busy_us) t->max_busy_us = took;
    }
    else if (write && rc >= 0) t->ops++;
    return rc;
}

/* One call of VERB, EXPR, counted (a local int64_t t0 holds its start). */
#define TALLY(w, verb, write, expr) \
    (t0 = mono_us(), tally((w), (verb), (write), (expr), t0))

static int late(const rel_work *w)
{
    return w->deadline_ms && rel_wall_ms() > w->deadline_ms;
}

static emq_db *open_h(rel_work *w)
{
    emq_options o;
    emq_db *db = NULL;
    char err[512];
    int64_t t0;
    int rc;
    emq_options_init(&o);
    o.synchronous = w->sync ? w->sync : EMQ_SYNC_NORMAL;
    o.busy_timeout_ms = w->busy_ms;
    o.checkpoint_frames = w->ckpt_frames;
    /* Opening takes the write lock for the fence: busy is retried. */
    while ((rc = TALLY(w, "open", 0,
                       emq_open_ex(w->path, &o, &db, err, sizeof err))) ==
           EMQ_EBUSY) {
        w->busy++;
        if (late(w)) break;
    }
    if (rc != EMQ_OK) {
        fprintf(stderr, "relwork: open %s: %s\n", w->path, err);
        w->errors++;
        return NULL;
    }
    return db;
}

static void unexpected(rel_work *w, emq_db *db, const char *verb, int rc)
{
    w->errors++;
    fprintf(stderr, "relwork: %s: %d %s: %s\n", verb, rc, emq_strerror(rc),
            emq_errmsg(db));
}

/* completed + dead so far, or -1 (busy or failure). */
static int64_t retired(rel_work *w, emq_db *db)
{
    emq_stats st;
    int64_t t0;
    int rc = TALLY(w, "stats", 0, emq_stats_get(db, w->queue, &st));
    if (rc == EMQ_EBUSY) {
        w->busy++;
        return -1;
    }
    if (rc != EMQ_OK) {
        unexpected(w, db, "stats", rc);
        return -1;
    }
    return st.completed + st.failed;
}

int rel_producer(rel_work *w)
{
    emq_db *db = open_h(w);
    long i;
    int64_t t0;
    if (db == NULL) return -1;
    for (i = 0; w->produce < 0 || i < w->produce; i++) {
        char id[EMQ_ID_SIZE];
        int rc;
        if (late(w)) break;
        if ((rc = emq_mint(db, "JOB", id)) != EMQ_OK) {
            unexpected(w, db, "mint", rc);
            break;
        }
        if (w->intents) rel_ledger_put(&w->ledger, L_INTENT, id, 0, 0);
        while ((rc = TALLY(w, "enqueue", 1,
                           emq_enqueue(db, w->queue, id, "payload", 7))) ==
               EMQ_EBUSY) {
            w->busy++;
            if (late(w)) break;
        }
        if (rc == EMQ_ENQUEUED) {
            rel_ledger_put(&w->ledger, L_ENQ, id, 0, 0);
            w->done++;
        } else if (rc != EMQ_EBUSY) {
            /* EMQ_DUPLICATE would mean an earlier busy attempt applied */
            unexpected(w, db, "enqueue", rc);
        }
        if (w->pause_us) usleep((useconds_t)w->pause_us);
    }
    emq_close(db);
    return w->errors ? -1 : 0;
}

/* Settle one claimed job: complete, retry, or abandon it to the reaper. */
static void settle(rel_work *w, emq_db *db, const emq_job *j, uint64_t *rs)
{
    unsigned r = (unsigned)(rel_rnd(rs) % 100);
    int64_t t0;
    int rc;
    if (r < (unsigned)w->pct_abandon) return;
    if (r < (unsigned)(w->pct_abandon + w->pct_retry)) {
        if (w->intents)
            rel_ledger_put(&w->ledger, L_RETRY_INTENT, j->id, j->attempts, 0);
        while ((rc = TALLY(w, "retry", 1,
                           emq_retry(db, w->queue, j->id, j->attempts, 0,
                                     w->max_attempts, "worker said no",
                                     14))) ==
               EMQ_EBUSY && !late(w))
            w->busy++;
        if (rc == EMQ_EBUSY) return; /* out of time */
        if (rc == EMQ_SCHEDULED)
            rel_ledger_put(&w->ledger, L_RETRY, j->id, j->attempts, 0);
        else if (rc == EMQ_DEAD)
            rel_ledger_put(&w->ledger, L_DEAD, j->id, j->attempts, 0);
        else if (rc == EMQ_ESTALE)
            w->stale++;
        else
            unexpected(w, db, "retry", rc);
        return;
    }
    if (w->intents)
        rel_ledger_put(&w->ledger, L_COMPLETE_INTENT, j->id, j->attempts, 0);
    while ((rc = TALLY(w, "complete", 1,
                       emq_complete(db, w->queue, j->id, j->attempts))) ==
               EMQ_EBUSY && !late(w))
        w->busy++;
    if (rc == EMQ_EBUSY) return; /* out of time */
    if (rc == EMQ_OK)
        rel_ledger_put(&w->ledger, L_DONE, j->id, j->attempts, 0);
    else if (rc == EMQ_ESTALE || rc == EMQ_GONE)
        w->stale++;
    else
        unexpected(w, db, "complete", rc);
}

int rel_worker(rel_work *w)
{
    emq_db *db = open_h(w);
    uint64_t rs = w->seed | 1;
    int64_t t0;
    if (db == NULL) return -1;
    while (!late(w)) {
        emq_job j;
        int rc = TALLY(w, "claim", 1, emq_claim(db, w->queue, w->lease_ms, &j));
        if (rc == EMQ_OK) {
            rel_ledger_put(&w->ledger, L_CLAIM, j.id, j.attempts, 0);
            w->done++;
            settle(w, db, &j, &rs);
            emq_job_clear(&j);
            continue;
        }
        if (rc == EMQ_EBUSY) {
            w->busy++;
            continue;
        }
        if (rc != EMQ_EMPTY) {
            unexpected(w, db, "claim", rc);
            break;
        }
        if (w->total > 0 && retired(w, db) >= w->total) break;
        usleep(500);
    }
    emq_close(db);
    return w->errors ? -1 : 0;
}

int rel_reaper(rel_work *w)
{
    emq_db *db = open_h(w);
    int64_t t0;
    if (db == NULL) return -1;
    while (!late(w)) {
        int64_t n = 0, m = 0;
        int rc = TALLY(w, "reap", 1, emq_reap(db, w->queue, &n));
        if (rc == EMQ_EBUSY) w->busy++;
        else if (rc != EMQ_OK) unexpected(w, db, "reap", rc);
        rc = TALLY(w, "promote", 1, emq_promote(db, w->queue, 100, &m));
        if (rc == EMQ_EBUSY) w->busy++;
        else if (rc != EMQ_OK) unexpected(w, db, "promote", rc);
        w->done += n + m;
        if (w->errors) break;
        if (w->total > 0 && retired(w, db) >= w->total) break;
        usleep(2000);
    }
    emq_close(db);
    return w->errors ? -1 : 0;
}

int rel_run(rel_work *w, int role)
{
    switch (role) {
    case REL_PRODUCER: return rel_producer(w);
    case REL_WORKER: return rel_worker(w);
    default: return rel_reaper(w);
    }
}
