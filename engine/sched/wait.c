/*
 * wait.c — T5.13's park as a waiting claim (PROTOCOL.md §6.5):
 * emq_claim_wait returns lapsed leases and due jobs to pending, claims one
 * job, and otherwise sleeps on the queue's bucket of the wake file
 * (storage/notify.h) until a commit could have made a job claimable, or
 * until the next scheduled run-at or lease deadline, or its timeout.
 *
 * The order that loses no wake-up: read the bucket's sequence, then look
 * (a read transaction), then claim, then sleep only while the sequence is
 * still the one read. Every commit that adds to B.pending, pushes a WAKE
 * token (every OFFER: a lane enqueue, a lane release, a promote or reap
 * into a lane) or deletes a B.meta field (resume) signals the bucket after
 * it committed (the store's watch rules, emq_wake_rules below). A commit
 * that signalled before the sequence was read is visible to the look; one
 * that signals after it moves the sequence, and the sleep returns at once.
 *
 * it committed (the store's watch rules, emq_wake_rules below), and so does
 * every commit that schedules a job (B.schedule), because the sleep's
 * bound is the earliest run-at the look saw and a new one may come first.
 *
 * Many waiters, one job: a commit wakes every waiter of its bucket, and
 * before, each one's claim (a write transaction, taken in the writers'
 * turn) ran, all but the first finding nothing. Now a waiter whose look
 * saw N claimable jobs claims only while fewer than N waiters are
 * claiming (emq_notify_claim: a count in the bucket's slot); the others
 * nap 1 ms (or until the next signal) and look again. Bounded twice: a
 * waiter naps for 10 ms in a row at most, then claims, and a count left by
 * claimers that died or stopped expires 100 ms after its last change.
 *
 * Time: what is due is judged on the handle's clock, inside the look's
 * transaction; the sleep is bounded by the earliest of the timeout, the
 * earliest scheduled run-at and the earliest lease deadline (so a
 * scheduled job is promoted and a lapsed lease reaped when it falls due,
 * without polling). The timeout runs on the handle's clock and on real
 * time, whichever ends first, so a pinned clock still times out: once the
 * real time spent reaches the timeout the claim returns, however far it
 * overshot. Tests install emq_set_wait_hook (emqlite.h) to advance their
 * clock instead of sleeping; then only the handle's clock times out.
 */
#include <math.h>
#include <string.h>
#include <time.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "jobs.h"
#include "notify.h"

const emq_watch_rule emq_wake_rules[] = {
    {EMQ_WATCH_ZADD, ":pending"}, /* B.pending: admissions, promote, reap,
                                     reprocess, stalled, released parents */
    {EMQ_WATCH_PUSH, ":wake"},    /* B.wake: WAKE, i.e. every OFFER, T3.8 */
    {EMQ_WATCH_HDEL, ":meta"},    /* B.meta: resume (T2.1)                 */
    {EMQ_WATCH_ZADD, ":schedule"}, /* B.schedule: enqueue_in / enqueue_at,
                                     a retry with a delay: a waiter's sleep
                                     may have to end sooner (its next run-at
                                     is recomputed by the look)          */
    {0, NULL},
};

void emq_sched_set_wait_hook(emq_db *db, emq_wait_hook fn, void *ctx)
{
    db->sched.wait = fn;
    db->sched.wait_ctx = fn ? ctx : NULL;
}

/* A waiter leaves the jobs it saw to the claimers before it for this long
 * in a row at most (emq_claim_wait). */
#define WAIT_YIELD_US 10000

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* What the look saw. */
typedef struct look {
    const char *q;
    int64_t now;
    int paused;
    int64_t pending, ring;
    double next_run, next_lapse;   /* INFINITY when none */
} look;

static int first_score(void *ctx, const unsigned char *m, size_t mlen,
                       double s)
{
    (void)m;
    (void)mlen;
    *(double *)ctx = s;
    return 1;
}

static int look_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    look *l = ctx;
    char k[EMQ_KEY_MAX];
    size_t kl;
    int rc;
    (void)db;
    l->now = now;
    l->next_run = l->next_lapse = INFINITY;
    kl = emq_key(k, l->q, EMQ_KT_META);
    if ((rc = emq_hash_exists(st, k, kl, "paused", 6, &l->paused)) < 0)
        return rc;
    kl = emq_key(k, l->q, EMQ_KT_PENDING);
    if ((rc = emq_zset_card(st, k, kl, &l->pending)) < 0) return rc;
    kl = emq_key(k, l->q, EMQ_KT_RING);
    if ((rc = emq_list_len(st, k, kl, &l->ring)) < 0) return rc;
    kl = emq_key(k, l->q, EMQ_KT_SCHEDULE);
    if ((rc = emq_zset_range(st, k, kl, 0, 1, first_score, &l->next_run)) < 0)
        return rc;
    kl = emq_key(k, l->q, EMQ_KT_ACTIVE);
    rc = emq_zset_range(st, k, kl, 0, 1, first_score, &l->next_lapse);
    return rc < 0 ? rc : EMQ_OK;
}

/* One claim by verb `id` (claim or lane_claim) into `job`. */
static int claim_by(emq_db *db, int id, const char *q, int64_t lease_ms,
                    emq_job *job)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(lease_ms)};
    emq_reply r = {0};
    int rc = emq_verb_exec(db, id, a, 2, &r, NULL);
    if (rc == EMQ_OK && r.n == 0) rc = EMQ_EMPTY;
    if (rc == EMQ_OK && (rc = emq_job_from_reply(job, &r)) < 0)
        emq_db_fail(db, rc, "a claimed member is not a 14-byte id");
    emq_reply_clear(&r);
    return rc;
}

/*
 * One look and what it calls for: reap when a lease lapsed, promote when a
 * run-at passed (T5.13: reap, then promote(100)), then a claim from the
 * flat set and from the lanes (T3.2, when the build has it), taking turns
 * at going first so neither starves the other. EMQ_OK with `*job`,
 * EMQ_EMPTY with `*again` = 1 when something moved (look again at once),
 * else with `*until` the earliest due instant (INFINITY: none).
 * `*yield` on entry: whether this waiter may leave the jobs it saw to the
 * other waiters already claiming them (emq_notify_claim); on return,
 * whether it did (it naps, then looks again).
 */
static int attempt(emq_db *db, const char *q, int64_t lease_ms, emq_job *job,
                   int *again, double *until, emq_notify *nf, uint32_t b,
                   int *yield)
{
    const emq_verb_info *lane = NULL;
    look l;
    emq_varg a[2];
    emq_reply r = {0};
    int64_t n, tries;
    int rc, turn;

    int may = *yield;
    *again = 0;
    *yield = 0;
    memset(&l, 0, sizeof l);
    l.q = q;
    if ((rc = emq_db_run(db, 0, look_tx, &l)) < 0) return rc;
    *until = l.next_run < l.next_lapse ? l.next_run : l.next_lapse;
    a[0] = emq_varg_str(q);
    if (l.next_lapse <= (double)l.now) {
        if ((rc = emq_verb_exec(db, EMQ_V_REAP, a, 1, &r, NULL)) < 0)
            return rc;
        n = r.integer;
        emq_reply_clear(&r);
        *again |= n > 0;
    }
    if (l.next_run <= (double)l.now) {
        a[1] = emq_varg_int(100);
        if ((rc = emq_verb_exec(db, EMQ_V_PROMOTE, a, 2, &r, NULL)) < 0)
            return rc;
        n = r.integer;
        emq_reply_clear(&r);
        *again |= n > 0;
    }
    if (l.paused) return EMQ_EMPTY; /* resume signals */
    if (l.ring > 0 || *again) lane = emq_verb_find("lane_claim");
    turn = db->sched.lane_turn++ & 1;
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) == (turn == 0)) {
            if ((l.pending > 0 || *again) && !db->sched.lanes_only) {
                /* One commit wakes every waiter of the bucket; as many
                 * claim as the look saw jobs, the others nap */
                int counted = 1;
                if (may && !*again && l.ring == 0 &&
                    (counted = emq_notify_claim(nf, b, l.pending,
                                                mono_us() / 1000)) == 0) {
                    *yield = 1;
                    return EMQ_EMPTY;
                }
                rc = claim_by(db, EMQ_V_CLAIM, q, lease_ms, job);
                if (counted == 2) emq_notify_unclaim(nf, b);
                if (rc != EMQ_EMPTY) return rc;
            }
        } else if (lane) {
            /* A lane claim that lands on an emptied lane answers empty and
             * takes the group off the ring: try each ring entry once. */
            for (tries = 0; tries <= l.ring; tries++) {
                rc = claim_by(db, lane->id, q, lease_ms, job);
                if (rc != EMQ_EMPTY) return rc;
            }
        }
    }
    return EMQ_EMPTY;
}

/* The real time in microseconds (plane.h: a test may stand in for it).
 * Finer than the timeout's milliseconds: from whole-millisecond readings
 * a wait begun late in one millisecond and read early in another counts
 * up to 1 ms too much, and the timeout ended that much early. */
static int64_t real_us(emq_db *db)
{
    return db->sched.mono ? db->sched.mono(db->sched.mono_ctx) : mono_us();
}

void emq_set_wait_hook(emq_db *db, emq_wait_fn fn, void *ctx)
{
    if (db == NULL) return;
    emq_sched_set_wait_hook(db, fn, ctx);
}

void emq_sched_set_mono(emq_db *db, emq_clock_fn fn, void *ctx)
{
    db->sched.mono = fn;
    db->sched.mono_ctx = fn ? ctx : NULL;
}

int emq_claim_wait(emq_db *db, const char *q, int64_t lease_ms,
                   int64_t timeout_ms, emq_job *job)
{
    emq_notify *nf;
    uint32_t b, seen;
    int64_t start, deadline, real0, now, w, left;
    double until = INFINITY;
    int again, rc, real_bound, yield;
    int64_t yield_since = -1; /* real µs of the first of a run of naps */

    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (job == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL job");
    memset(job, 0, sizeof *job);
    if (lease_ms <= 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: lease_ms must be "
                                           "> 0");
    if ((rc = emq_store_notifier(db->st, &nf)) < 0)
        return emq_db_fail(db, rc, emq_store_errmsg(db->st));
    b = emq_notify_bucket(q, strlen(q));
    if (atomic_exchange(&db->sched.interrupt, 0)) return EMQ_EMPTY;
    start = db->clock(db->clock_ctx);
    deadline = timeout_ms < 0 || start > INT64_MAX - timeout_ms
                   ? INT64_MAX : start + timeout_ms;
    real0 = real_us(db);
    /* Real time bounds the timeout too (a pinned clock), unless a test
     * hook drives time. */
    real_bound = timeout_ms >= 0 && db->sched.wait == NULL;
    atomic_store(&db->sched.wait_notify, nf);
    for (;;) {
        seen = emq_notify_seq(nf, b);
        /* A waiter leaves jobs to the claimers before it for at most
         * WAIT_YIELD_US in a row (a queue sharing the bucket may keep
         * its count up), and never under a test's wait hook. */
        yield = db->sched.wait == NULL &&
                (yield_since < 0 ||
                 mono_us() - yield_since < WAIT_YIELD_US);
        rc = attempt(db, q, lease_ms, job, &again, &until, nf, b, &yield);
        if (rc != EMQ_EMPTY) break;
        if (!yield) yield_since = -1;
        else if (yield_since < 0) yield_since = mono_us();
        if (again) continue;
        /* Publish the bucket before reading the interrupt counter, so an
         * interrupt either is seen here or signals the bucket. */
        atomic_store(&db->sched.wait_bucket, b + 1);
        now = db->clock(db->clock_ctx);
        /* The real time left, in microseconds; at or below 0 (a wait
         * that overshot, a loaded machine, valgrind) the timeout has
         * passed. */
        left = real_bound ? (timeout_ms > INT64_MAX / 1000
                                 ? INT64_MAX
                                 : timeout_ms * 1000 - (real_us(db) - real0))
                          : -1;
        if (atomic_exchange(&db->sched.interrupt, 0) || timeout_ms == 0 ||
            now >= deadline || (real_bound && left <= 0))
            break;
        /* The sleep: to the deadline, the next run-at or lease deadline,
         * or the real time left, whichever is first. */
        w = deadline == INT64_MAX ? -1 : deadline - now;
        if (until < INFINITY) {
            double d = until - (double)now;
            int64_t dw = d <= 0 ? 0 : d >= 9.2e18 ? INT64_MAX
                                                 : (int64_t)d;
            if ((double)dw < d) dw++; /* scores are integers: exact */
            if (w < 0 || dw < w) w = dw;
        }
        if (real_bound) {
            int64_t lw = left / 1000 + (left % 1000 != 0); /* round up */
            if (w < 0 || lw < w) w = lw;
        }
        if (yield && (w < 0 || w > 1))
            w = 1; /* a nap: the claimers before it end in microseconds */
        if (db->sched.wait) {
            int h = db->sched.wait(db->sched.wait_ctx, db, w);
            if (h < 0) break;
            if (h > 0) continue;
        }
        emq_notify_wait(nf, b, seen, w);
    }
    atomic_store(&db->sched.wait_bucket, 0);
    return rc;
}

void emq_claim_wait_interrupt(emq_db *db)
{
    emq_notify *nf;
    unsigned wb;
    if (db == NULL) return;
    atomic_store(&db->sched.interrupt, 1);
    wb = atomic_load(&db->sched.wait_bucket);
    nf = atomic_load(&db->sched.wait_notify);
    if (wb != 0 && nf != NULL) emq_notify_signal(nf, wb - 1);
}
