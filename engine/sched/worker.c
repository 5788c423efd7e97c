/*
 * worker.c — the worker pool: T5.13's consumer loop in the library.
 *
 * Threads: `workers` worker threads, each with its own handle on the file,
 * each looping: emq_claim_wait (reap, promote, claim, or sleep on the wake
 * file), the handler, then complete (EMQ_WORK_DONE), a retry under the
 * stored policy (EMQ_WORK_FAILED), or nothing (EMQ_WORK_ABANDONED: the
 * lease lapses and a later reap returns the job). One more thread, the
 * beat, with a handle of its own: every extend interval it extends the
 * leases of the jobs in hand in one transaction (T1.12, or T5.12's beat
 * with the lock markers), and every pump beat it runs the sweep (T5.9)
 * — only in the one process that holds the queue's pump lease (a timed
 * lease in the wake file, renewed at each beat: it moves to another
 * process when its holder exits, dies, or is stopped past three beats).
 *
 * A job claimed more times than its policy's max_attempts (its leases
 * lapsed: a handler that crashed its process, a command killed by a
 * signal) is dead-lettered at that claim with last_error "abandoned",
 * without running again.
 *
 * Stopping: emq_pool_stop sets a flag and interrupts every waiting claim
 * and the beat with atomics and platform.h wake-ups only, so a signal handler
 * may call it; each worker finishes the job in hand and exits; the beat
 * keeps extending until the last worker is gone.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "abi.h"
#include "verb.h"
#include "jobs.h"
#include "notify.h"
#include "platform.h"

#define PUMP_BATCH 100

typedef struct emq_pool emq_pool_t;

typedef struct wslot {
    emq_pool_t *pool;
    emq_db *db;
    pthread_t th;
    int started;
    int busy;                 /* under pool.mu: a job in hand           */
    char id[EMQ_ID_SIZE];
    int64_t token;
} wslot;

struct emq_pool {
    emq_worker_options w;
    char *queue;
    int n;
    wslot *slots;
    emq_db *beat_db;
    pthread_t beat;
    int beat_started;
    pthread_mutex_t mu;       /* slots' busy/id/token, stats, error     */
    atomic_int stop;
    atomic_int live;          /* workers still running                  */
    _Atomic uint32_t bell;    /* the beat's wait word                   */
    _Atomic uint32_t beats_asked, beats_done; /* emq_pool_beat          */
    atomic_llong reserved;    /* jobs claimed or being claimed          */
    emq_pool_stats st;
    int error;
};

void emq_worker_options_init_size(emq_worker_options *o, size_t size)
{
    emq_worker_options d;
    memset(&d, 0, sizeof d);
    d.workers = 1;
    d.lease_ms = 30000;
    d.extend_ms = 0;
    d.retry.max_attempts = 3;
    d.retry.backoff.kind = EMQ_BACKOFF_FIXED;
    d.retry.backoff.delay_ms = 1000;
    d.pump_ms = 1000;
    d.track_locks = 0;
    d.max_jobs = 0;
    d.idle_ms = -1;
    emq_struct_out(o, size, &d, sizeof d);
}

static void ring(emq_pool *p)
{
    atomic_fetch_add(&p->bell, 1);
    emq_plat_wake(&p->bell, 0);
}

void emq_pool_stop(emq_pool *p)
{
    int i;
    if (p == NULL) return;
    atomic_store(&p->stop, 1);
    for (i = 0; i < p->n; i++)
        if (p->slots[i].db) emq_claim_wait_interrupt(p->slots[i].db);
    ring(p);
}

static void fail(emq_pool *p, int rc)
{
    pthread_mutex_lock(&p->mu);
    p->st.errors++;
    if (p->error == 0) p->error = rc;
    pthread_mutex_unlock(&p->mu);
    emq_pool_stop(p);
}

/* The attempts cap that applies to job `id`: its stored policy's, else
 * the pool's. */
static int64_t cap_of(emq_pool *p, emq_db *db, const char *id)
{
    emq_retry_policy pol;
    if (emq_policy_get(db, p->queue, id, &pol) == EMQ_OK)
        return pol.max_attempts;
    return p->w.retry.max_attempts;
}

/* The handler's failure: a retry under the policy, or at the handler's
 * own delay with the policy's cap. */
static int retry_failed(emq_pool *p, emq_db *db, const emq_job *job,
                        emq_outcome *out)
{
    if (out->error == NULL) {
        out->error = "handler failed";
        out->error_len = 14;
    }
    if (out->delay_ms >= 0)
        return emq_retry(db, p->queue, job->id, job->attempts, out->delay_ms,
                         cap_of(p, db, job->id), out->error, out->error_len);
    return emq_policy_retry(db, p->queue, job->id, job->attempts,
                            out->error, out->error_len, &p->w.retry);
}

static void run_job(emq_pool *p, wslot *s, emq_job *job)
{
    const char *q = p->queue;
    emq_db *db = s->db;
    emq_lock_timing lt = emq_lock_timing_compute(p->w.lease_ms, 0, 0);
    emq_outcome out;
    int verdict, rc;

    if (job->attempts > cap_of(p, db, job->id)) {
        /* Claimed past the cap: every earlier lease lapsed. */
        rc = emq_retry(db, q, job->id, job->attempts, 0, job->attempts,
                       "abandoned", 9);
        verdict = EMQ_WORK_FAILED;
        goto report;
    }
    pthread_mutex_lock(&p->mu);
    memcpy(s->id, job->id, EMQ_ID_SIZE);
    s->token = job->attempts;
    s->busy = 1;
    pthread_mutex_unlock(&p->mu);
    ring(p);
    if (p->w.track_locks)
        (void)emq_lock_track(db, q, job->id, job->attempts, lt.marker_ttl_ms);
    memset(&out, 0, sizeof out);
    out.verdict = EMQ_WORK_DONE;
    out.delay_ms = -1;
    p->w.handler(p->w.handler_ctx, q, job, &out);
    pthread_mutex_lock(&p->mu);
    s->busy = 0;
    pthread_mutex_unlock(&p->mu);
    if (p->w.track_locks) (void)emq_lock_untrack(db, q, job->id);
    verdict = out.verdict;
    if (verdict == EMQ_WORK_DONE) {
        rc = emq_complete_result(db, q, job->id, job->attempts, out.result,
                                 out.result ? out.result_len : 0);
        /* The row is gone: so is the job's own policy. */
        if (rc == EMQ_OK) (void)emq_policy_set(db, q, job->id, NULL);
    } else if (verdict == EMQ_WORK_FAILED) {
        rc = retry_failed(p, db, job, &out);
    } else {
        verdict = EMQ_WORK_ABANDONED;
        rc = EMQ_OK;
    }
report:
    pthread_mutex_lock(&p->mu);
    if (verdict == EMQ_WORK_ABANDONED) p->st.abandoned++;
    else if (rc == EMQ_OK) p->st.completed++;
    else if (rc == EMQ_SCHEDULED) p->st.retried++;
    else if (rc == EMQ_DEAD) p->st.dead++;
    else if (rc == EMQ_ESTALE || rc == EMQ_GONE) p->st.stale++;
    else p->st.errors++;
    pthread_mutex_unlock(&p->mu);
    if (p->w.on_event) p->w.on_event(p->w.event_ctx, q, job, verdict, rc);
}

static void *worker_main(void *arg)
{
    wslot *s = arg;
    emq_pool *p = s->pool;
    emq_job job;
    long long r;
    int rc;
    while (!atomic_load(&p->stop)) {
        /* max_jobs: a claim is reserved before it is made, so the pool
         * never claims more; a worker without a reservation is done (the
         * ones holding one finish theirs). */
        if (p->w.max_jobs > 0 &&
            (r = atomic_fetch_add(&p->reserved, 1)) >= p->w.max_jobs) {
            atomic_fetch_sub(&p->reserved, 1);
            break;
        }
        rc = emq_claim_wait(s->db, p->queue, p->w.lease_ms, p->w.idle_ms,
                            &job);
        if (rc == EMQ_OK) {
            pthread_mutex_lock(&p->mu);
            p->st.claimed++;
            pthread_mutex_unlock(&p->mu);
            run_job(p, s, &job);
            emq_job_clear(&job);
            continue;
        }
        if (p->w.max_jobs > 0) atomic_fetch_sub(&p->reserved, 1);
        if (rc == EMQ_EMPTY) {
            if (!atomic_load(&p->stop) && p->w.idle_ms >= 0)
                emq_pool_stop(p); /* idle for idle_ms */
        } else if (rc != EMQ_EBUSY) {
            fail(p, rc);
        }
    }
    atomic_fetch_sub(&p->live, 1);
    ring(p);
    return NULL;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Extend every job in hand, in one transaction. */
static void extend(emq_pool *p, emq_lock_timing lt)
{
    const char **ids = emq_mem_calloc((size_t)p->n, sizeof *ids);
    int64_t *tok = emq_mem_calloc((size_t)p->n, sizeof *tok);
    char (*idv)[EMQ_ID_SIZE] = emq_mem_calloc((size_t)p->n, EMQ_ID_SIZE);
    int *failed = emq_mem_calloc((size_t)p->n, sizeof *failed);
    size_t k = 0;
    int i;
    if (ids && tok && idv && failed) {
        pthread_mutex_lock(&p->mu);
        for (i = 0; i < p->n; i++)
            if (p->slots[i].busy) {
                memcpy(idv[k], p->slots[i].id, EMQ_ID_SIZE);
                ids[k] = idv[k];
                tok[k] = p->slots[i].token;
                k++;
            }
        pthread_mutex_unlock(&p->mu);
        /* A lease that could not be extended is the handler's to lose: its
         * complete or retry then answers stale. */
        if (k > 0 && p->w.track_locks)
            (void)emq_lock_beat(p->beat_db, p->queue, k, ids, tok,
                                p->w.lease_ms, lt.marker_ttl_ms, failed,
                                NULL);
        else if (k > 0)
            (void)emq_lock_extend_many(p->beat_db, p->queue, k, ids, tok,
                                   p->w.lease_ms, failed, NULL);
    }
    emq_mem_free(ids);
    emq_mem_free(tok);
    emq_mem_free(idv);
    emq_mem_free(failed);
}

int emq_pool_beat(emq_pool *p)
{
    uint32_t want, done;
    if (p == NULL) return EMQ_EINVAL;
    want = atomic_fetch_add(&p->beats_asked, 1) + 1;
    ring(p);
    while ((int32_t)((done = atomic_load(&p->beats_done)) - want) < 0 &&
           atomic_load(&p->live) > 0)
        emq_plat_wait(&p->beats_done, done, -1, 0);
    return EMQ_OK;
}

static int any_busy(emq_pool *p)
{
    int i, b = 0;
    pthread_mutex_lock(&p->mu);
    for (i = 0; i < p->n && !b; i++) b = p->slots[i].busy;
    pthread_mutex_unlock(&p->mu);
    return b;
}

int64_t emq_pump_beat(emq_db *db, const char *q, int64_t now,
                      int64_t pump_ms, emq_sweep_counts *counts, int *rc)
{
    int64_t in_ms = -1, next = now + (pump_ms > 0 ? pump_ms : 1000);
    emq_sweep_counts k;
    memset(&k, 0, sizeof k);
    *rc = emq_sweep(db, q, PUMP_BATCH, &k);
    if (counts) *counts = k;
    /* A repeat due before the next beat: beat then (a period below
     * pump_ms is not rounded up to it; issue 27 item 16). One due again
     * already (its period passed while the sweep ran) is swept again at
     * once if this sweep fired anything; one still due after a sweep that
     * fired nothing (skipped by the sweep) waits for the usual beat, so it
     * cannot spin the beat. */
    if (*rc >= 0 && emq_repeat_next_in(db, q, &in_ms) >= 0 &&
        (in_ms > 0 || (in_ms == 0 && k.fired > 0)) && now + in_ms < next)
        next = now + in_ms;
    return next;
}

/* The beat: lease extensions while jobs are in hand, the pump while the
 * pool runs; until the last worker exited. */
static void *beat_main(void *arg)
{
    emq_pool *p = arg;
    emq_lock_timing lt = emq_lock_timing_compute(p->w.lease_ms, 0, 0);
    int64_t every = p->w.extend_ms > 0 ? p->w.extend_ms : lt.extend_ms;
    int64_t now = mono_ms(), next_extend = 0, next_pump = now, wait;
    uint32_t bucket = emq_notify_bucket(p->queue, strlen(p->queue));
    emq_notify *nf = NULL;
    int pumping = 0, busy;
    /* The pump's lease: three beats, so a live pump renews it twice
     * before it could lapse, and a stopped one is replaced within it. */
    int64_t pump_lease = 3 * (p->w.pump_ms > 0 ? p->w.pump_ms : 1000);
    if (p->w.pump_ms >= 0 && emq_store_notifier(p->beat_db->st, &nf) < 0)
        nf = NULL;
    while (atomic_load(&p->live) > 0) {
        uint32_t seen = atomic_load(&p->bell);
        uint32_t asked = atomic_load(&p->beats_asked);
        now = mono_ms();
        if (asked != atomic_load(&p->beats_done)) {
            /* emq_pool_beat: one extension now, then tell the callers. */
            extend(p, lt);
            atomic_store(&p->beats_done, asked);
            emq_plat_wake(&p->beats_done, 0);
        }
        busy = any_busy(p);
        if (!busy) next_extend = 0;
        else if (next_extend == 0) next_extend = now + every;
        else if (now >= next_extend) {
            extend(p, lt);
            next_extend = now + every;
        }
        if (p->w.pump_ms >= 0 && !atomic_load(&p->stop) && now >= next_pump) {
            /* Taken or renewed before every sweep: a pump stopped past
             * its lease finds another holder and stops sweeping. */
            if (nf) pumping = emq_notify_lease(nf, bucket, pump_lease,
                                               now) == 1;
            next_pump = now + (p->w.pump_ms > 0 ? p->w.pump_ms : 1000);
            if (pumping || nf == NULL) {
                int rc;
                next_pump = emq_pump_beat(p->beat_db, p->queue, now,
                                          p->w.pump_ms, NULL, &rc);
                if (rc < 0 && rc != EMQ_EBUSY) fail(p, rc);
            }
        }
        wait = -1;
        if (busy) wait = next_extend - now;
        if (p->w.pump_ms >= 0 && !atomic_load(&p->stop) &&
            (wait < 0 || next_pump - now < wait))
            wait = next_pump - now;
        if (wait < 0 && atomic_load(&p->live) > 0) wait = -1;
        if (wait == 0) wait = 1;
        if (atomic_load(&p->bell) == seen && atomic_load(&p->live) > 0)
            emq_plat_wait(&p->bell, seen, wait, 0);
    }
    if (pumping && nf) emq_notify_unlease(nf, bucket);
    atomic_store(&p->beats_done, atomic_load(&p->beats_asked));
    emq_plat_wake(&p->beats_done, 0);
    return NULL;
}

void emq_pool_free(emq_pool *p)
{
    int i;
    if (p == NULL) return;
    for (i = 0; p->slots && i < p->n; i++) emq_close(p->slots[i].db);
    emq_close(p->beat_db);
    pthread_mutex_destroy(&p->mu);
    emq_mem_free(p->slots);
    emq_mem_free(p->queue);
    emq_mem_free(p);
}

/* A memory store is private to its handle: the workers could not share it. */
static int path_is_memory(const char *path)
{
    return path[0] == '\0' || strcmp(path, ":memory:") == 0;
}

int emq_pool_start(const char *path, const emq_options *o,
                   const emq_worker_options *wopt, emq_pool **out)
{
    emq_worker_options wo, *w = &wo;
    emq_pool *p;
    int i, rc;
    if (out) *out = NULL;
    emq_worker_options_init(&wo);
    if (wopt == NULL || emq_struct_in(&wo, sizeof wo, wopt) != EMQ_OK)
        return EMQ_EINVAL;
    if (out == NULL || path == NULL || w == NULL || w->handler == NULL ||
        !emq_queue_valid(w->queue ? w->queue : "") || w->workers < 1 ||
        w->workers > 1024 || w->lease_ms <= 0 || w->extend_ms < 0 ||
        w->retry.max_attempts <= 0 || path_is_memory(path))
        return EMQ_EINVAL;
    {
        int64_t d;
        if (emq_backoff_delay(&w->retry.backoff, 1, NULL, NULL, &d) < 0)
            return EMQ_EINVAL;
    }
    if ((p = emq_mem_calloc(1, sizeof *p)) == NULL) return EMQ_ENOMEM;
    pthread_mutex_init(&p->mu, NULL);
    p->w = *w;
    p->n = w->workers;
    p->queue = emq_mem_malloc(strlen(w->queue) + 1);
    if (p->queue) memcpy(p->queue, w->queue, strlen(w->queue) + 1);
    p->slots = emq_mem_calloc((size_t)p->n, sizeof *p->slots);
    if (p->queue == NULL || p->slots == NULL) {
        emq_pool_free(p);
        return EMQ_ENOMEM;
    }
    p->w.queue = p->queue;
    for (i = 0; i < p->n; i++) {
        p->slots[i].pool = p;
        if ((rc = emq_open(path, o, &p->slots[i].db)) < 0) {
            emq_pool_free(p);
            return rc;
        }
        p->slots[i].db->sched.lanes_only = w->lanes != 0;
        if (w->worker_name &&
            (rc = emq_history_worker(p->slots[i].db, w->worker_name)) < 0) {
            emq_pool_free(p);
            return rc;
        }
    }
    if ((rc = emq_open(path, o, &p->beat_db)) < 0) {
        emq_pool_free(p);
        return rc;
    }
    atomic_store(&p->live, p->n);
    *out = p; /* before any handler can ask for it */
    for (i = 0; i < p->n; i++) {
        if (pthread_create(&p->slots[i].th, NULL, worker_main,
                           &p->slots[i]) != 0) {
            atomic_fetch_sub(&p->live, p->n - i);
            emq_pool_stop(p);
            break;
        }
        p->slots[i].started = 1;
    }
    if (pthread_create(&p->beat, NULL, beat_main, p) == 0)
        p->beat_started = 1;
    else
        emq_pool_stop(p);
    return EMQ_OK;
}

int emq_pool_join(emq_pool *p, emq_pool_stats *stats)
{
    int i;
    if (p == NULL) return EMQ_EINVAL;
    for (i = 0; i < p->n; i++)
        if (p->slots[i].started) pthread_join(p->slots[i].th, NULL);
    ring(p);
    if (p->beat_started) pthread_join(p->beat, NULL);
    p->beat_started = 0;
    for (i = 0; i < p->n; i++) p->slots[i].started = 0;
    if (stats) *stats = p->st;
    return p->error;
}
