/*
 * model_t0.c — the model's reads and loops beyond the wire (tier 0 of the
 * registry): paged listings of a job set or a lane, a job's whole story
 * (job_info), and the dead-letter requeue, batch by batch and whole. Each is
 * written from its documented contract in terms of the model's own §6.2
 * verbs (T2.5 state lookup, T2.13 reprocess), never from engine code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "model_int.h"

#define Q(c) ((c)->a[0].s)
#define ARG(c, i) (&(c)->a[i])
#define LIST_DEFAULT 100
#define REQUEUE_DEFAULT 100

int mv_get_job(mcall *c);
int mv_get_job_state(mcall *c);
int mv_reprocess_job(mcall *c);

static int64_t score_int(double s)
{
    if (s >= 9.2e18) return INT64_MAX;
    if (s <= -9.2e18) return INT64_MIN;
    return (int64_t)s;
}

/* A page of zset `k`: the args from index o are offset, count, from. */
static int page(mcall *c, const char *k, size_t o)
{
    int64_t offset = ARG(c, o)->present ? ARG(c, o)->i : 0;
    int64_t count = ARG(c, o + 1)->present ? ARG(c, o + 1)->i : LIST_DEFAULT;
    int tail = ARG(c, o + 2)->present && ARG(c, o + 2)->i == 1;
    mkey *key;
    int64_t i, n;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    if (mk_get(c->m, k, EMQ_T_ZSET, 0, &key) != 1) return EMQ_OK;
    n = (int64_t)key->zn;
    for (i = offset; i < n && i - offset < count; i++) {
        const mzm *z = &key->z[tail ? n - 1 - i : i];
        emq_reply *e = mr_push(c->r);
        mr_array(e, EMQ_REPLY_ARRAY);
        mr_push_bulk(e, z->m.p, z->m.n);
        mr_push_int(e, score_int(z->s));
    }
    return EMQ_OK;
}

/* list_set(q, set, offset = 0, count = 100, from = head|tail) */
int mv_list_set(mcall *c)
{
    static const char *const sets[4] = {"pending", "active", "schedule",
                                        "dead"};
    char k[KMAX];
    qk(k, Q(c), sets[ARG(c, 1)->i]);
    return page(c, k, 2);
}

/* list_lane(q, g, offset = 0, count = 100, from = head|tail) */
int mv_list_lane(mcall *c)
{
    char k[KMAX];
    lk(k, Q(c), ARG(c, 1)->s, ARG(c, 1)->n);
    return page(c, k, 2);
}

static emq_reply *map_key(emq_reply *r, const char *k)
{
    mr_push_bulk(r, k, strlen(k));
    return mr_push(r);
}

/* The score of `id` in B.<set> as an integer, or nil. */
static void score_of(mcall *c, const char *set, emq_reply *e)
{
    char k[KMAX];
    mkey *key;
    size_t i;
    qk(k, Q(c), set);
    if (mk_get(c->m, k, EMQ_T_ZSET, 0, &key) != 1) return;
    for (i = 0; i < key->zn; i++)
        if (mb_eq(&key->z[i].m, ARG(c, 1)->s, ARG(c, 1)->n)) {
            mr_int(e, score_int(key->z[i].s));
            return;
        }
}

/* job_info(q, id): {state, row, deadline, run_at, logs, locked} */
int mv_job_info(mcall *c)
{
    char k[KMAX];
    mcall sub = *c;
    emq_reply *e;
    const unsigned char *v;
    size_t vl;
    int gone;
    mr_array(c->r, EMQ_REPLY_MAP);
    sub.r = map_key(c->r, "state");
    mv_get_job_state(&sub);
    sub.r = map_key(c->r, "row");
    mv_get_job(&sub);
    gone = sub.r->type == EMQ_REPLY_NIL;
    score_of(c, "active", map_key(c->r, "deadline"));
    score_of(c, "schedule", map_key(c->r, "run_at"));
    jk(k, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, "logs");
    mr_int(map_key(c->r, "logs"), ml_len(c->m, k));
    e = map_key(c->r, "locked");
    jk(k, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, "lock");
    if (mk_exists(c->m, k)) {
        mr_int(e, 1);
    } else {
        jk(k, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, NULL);
        mr_int(e, mh_get(c->m, k, "lock", 4, &v, &vl) ? 1 : 0);
    }
    return gone ? EMQ_GONE : EMQ_OK;
}

/* T2.13 on dead member `id`: 1 requeued, 0 skipped (no row, or not dead). */
static int requeue_one(mcall *c, const mbs *id)
{
    marg a[2];
    emq_reply r = {0};
    mcall sub = *c;
    int rc, ok;
    a[0] = c->a[0];
    a[1].s = (const char *)id->p;
    a[1].n = id->n;
    a[1].i = 0;
    a[1].present = 1;
    sub.a = a;
    sub.argc = 2;
    sub.r = &r;
    rc = mv_reprocess_job(&sub);
    ok = rc == EMQ_OK && r.type == EMQ_REPLY_INT && r.integer == 1;
    model_reply_free(&r);
    return ok;
}

/* One batch from after `after` (exclusive, byte order): adds to the counts
 * requeued and skipped; returns the last member looked at when the batch
 * was full (caller frees), else an empty mbs. */
static mbs requeue_batch(mcall *c, int64_t batch, const marg *after,
                         int64_t *requeued, int64_t *skipped)
{
    char k[KMAX];
    mbs *all = NULL, last = {0};
    size_t n, i;
    int64_t seen = 0;
    qk(k, Q(c), "dead");
    n = mz_head(c->m, k, -1, 0, 0, &all);      /* a copy: we change it */
    for (i = 0; i < n && seen < batch; i++) {
        if (after && after->present &&
            mb_cmp(all[i].p, all[i].n, after->s, after->n) <= 0)
            continue;
        seen++;
        free(last.p);
        last = mb_dup(all[i].p, all[i].n);
        if (requeue_one(c, &all[i])) (*requeued)++;
        else (*skipped)++;
    }
    mb_free_list(all, n);
    if (seen < batch) {
        free(last.p);
        last.p = NULL;
        last.n = 0;
    }
    return last;
}

/* requeue_dead_batch(q, batch = 100, after = none):
 * [requeued, skipped, cursor or nil] */
int mv_requeue_dead_batch(mcall *c)
{
    int64_t batch = ARG(c, 1)->present ? ARG(c, 1)->i : REQUEUE_DEFAULT;
    int64_t rq = 0, sk = 0;
    mbs last = requeue_batch(c, batch, ARG(c, 2), &rq, &sk);
    mr_array(c->r, EMQ_REPLY_ARRAY);
    mr_push_int(c->r, rq);
    mr_push_int(c->r, sk);
    if (last.p) mr_push_bulk(c->r, last.p, last.n);
    else mr_push(c->r);
    free(last.p);
    return EMQ_OK;
}

/* requeue_dead(q, batch = 100): [requeued, skipped] over every batch */
int mv_requeue_dead(mcall *c)
{
    int64_t batch = ARG(c, 1)->present ? ARG(c, 1)->i : REQUEUE_DEFAULT;
    int64_t rq = 0, sk = 0;
    marg cur = {NULL, 0, 0, 0};
    mbs last;
    while ((last = requeue_batch(c, batch, &cur, &rq, &sk)).p != NULL) {
        free((void *)cur.s);
        cur.s = (const char *)last.p;
        cur.n = last.n;
        cur.present = 1;
    }
    free((void *)cur.s);
    mr_array(c->r, EMQ_REPLY_ARRAY);
    mr_push_int(c->r, rq);
    mr_push_int(c->r, sk);
    return EMQ_OK;
}

/* lanes(q, count = all): [total, [[group, depth, paused], ...]] — every
 * key named emq:{q}:g:<14 bytes>:pending that is live, in byte order of
 * the group ids; a lane key or the paused set of another type answers
 * WRONGTYPE (a listed lane's reads are ZCARD and SISMEMBER). */
static int group_cmp(const void *a, const void *b)
{
    const mkey *x = *(mkey *const *)a, *y = *(mkey *const *)b;
    return memcmp(x->name.p, y->name.p, x->name.n < y->name.n ? x->name.n
                                                               : y->name.n);
}

int mv_lanes(mcall *c)
{
    char pre[KMAX], pk[KMAX];
    size_t plen, i, n = 0, max;
    mkey **lanes, *key, *paused = NULL;
    emq_reply *list;
    int rc = EMQ_OK;
    lk(pre, Q(c), "", 0);
    plen = strlen(pre) - strlen(":pending");
    max = ARG(c, 1)->present ? (size_t)ARG(c, 1)->i : (size_t)-1;
    lanes = calloc(c->m->n + 1, sizeof *lanes);
    if (lanes == NULL) abort();
    for (i = 0; i < c->m->n; i++) {
        const mbs *nm = &c->m->k[i]->name;
        if (nm->n != plen + 14 + 8 || memcmp(nm->p, pre, plen) != 0 ||
            memcmp(nm->p + plen + 14, ":pending", 8) != 0)
            continue;
        lanes[n++] = c->m->k[i];
    }
    qsort(lanes, n, sizeof *lanes, group_cmp);
    mr_array(c->r, EMQ_REPLY_ARRAY);
    (void)mr_push(c->r);
    (void)mr_push(c->r);       /* [total, list]: both in place first */
    list = &c->r->elem[1];
    mr_array(list, EMQ_REPLY_ARRAY);
    qk(pk, Q(c), "paused");
    int64_t live = 0;
    for (i = 0; i < n; i++) {
        char k[KMAX];
        snprintf(k, sizeof k, "%.*s", (int)lanes[i]->name.n,
                 (const char *)lanes[i]->name.p);
        if ((rc = mk_get(c->m, k, EMQ_T_ZSET, 0, &key)) < 0) break;
        if (rc == 0) { rc = EMQ_OK; continue; }       /* expired, empty */
        if ((size_t)live++ >= max) { rc = EMQ_OK; continue; }
        emq_reply *e = mr_push(list);
        mr_array(e, EMQ_REPLY_ARRAY);
        mr_push_bulk(e, key->name.p + plen, 14);
        mr_push_int(e, (int64_t)key->zn);
        if ((rc = mk_get(c->m, pk, EMQ_T_SET, 0, &paused)) < 0) break;
        int member = 0;
        for (size_t j = 0; rc == 1 && j < paused->sn; j++)
            if (mb_eq(&paused->s[j], key->name.p + plen, 14)) member = 1;
        mr_push_int(e, member);
        rc = EMQ_OK;
    }
    free(lanes);
    if (rc < 0) return rc;
    mr_int(&c->r->elem[0], live);
    return EMQ_OK;
}

/* ------------------------------- the operator's run-now and requeues */

/* Out of B.schedule and T1.7's move: 1, or 0 when not scheduled. */
static int run_one(mcall *c, const void *id, size_t n)
{
    char k[KMAX];
    mbs b;
    qk(k, Q(c), "schedule");
    if (!mz_rem(c->m, k, id, n)) return 0;
    b = mb_dup(id, n);
    t1_promote_one(c->m, Q(c), &b);
    free(b.p);
    return 1;
}

/* run_now(q, ids...): one verdict per id, 1 moved, 0 not scheduled */
int mv_run_now(mcall *c)
{
    size_t i;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    for (i = 1; i < c->argc; i++)
        mr_push_int(c->r, run_one(c, ARG(c, i)->s, ARG(c, i)->n));
    return EMQ_OK;
}

/* run_due(q, until_ms, batch = 100): T1.7 with until_ms for NOW */
int mv_run_due(mcall *c)
{
    char k[KMAX];
    mbs *due;
    size_t n, i;
    int64_t batch = ARG(c, 2)->present ? ARG(c, 2)->i : REQUEUE_DEFAULT;
    int64_t moved = 0;
    qk(k, Q(c), "schedule");
    n = mz_head(c->m, k, batch, 1, (double)ARG(c, 1)->i, &due);
    for (i = 0; i < n; i++) moved += run_one(c, due[i].p, due[i].n);
    mb_free_list(due, n);
    mr_int(c->r, moved);
    return EMQ_OK;
}

/* requeue_dead_before(q, before_ms, batch = 100, after = none): the dead
 * members after `after` and below the smallest JOB id minted at before_ms
 * (PROTOCOL.md §4: (before_ms - epoch) << 22, encoded), a batch of them
 * requeued: [requeued, skipped, cursor or nil] */
int mv_requeue_dead_before(mcall *c)
{
    char k[KMAX], bound[EMQ_ID_SIZE];
    int64_t batch = ARG(c, 2)->present ? ARG(c, 2)->i : REQUEUE_DEFAULT;
    int64_t ms = ARG(c, 1)->i, rq = 0, sk = 0, seen = 0;
    const marg *after = ARG(c, 3);
    uint64_t snow = 0;
    mbs *all, last = {0};
    size_t n, i;
    if (ms > EMQ_EPOCH_MS)
        snow = ms - EMQ_EPOCH_MS >= ((int64_t)1 << 41)
                   ? (uint64_t)INT64_MAX
                   : (uint64_t)(ms - EMQ_EPOCH_MS) << 22;
    emq_id_encode("JOB", snow, bound);
    qk(k, Q(c), "dead");
    n = mz_head(c->m, k, -1, 0, 0, &all);
    for (i = 0; i < n && seen < batch; i++) {
        if (after->present &&
            mb_cmp(all[i].p, all[i].n, after->s, after->n) <= 0)
            continue;
        if (mb_cmp(all[i].p, all[i].n, bound, EMQ_ID_LEN) >= 0) break;
        seen++;
        free(last.p);
        last = mb_dup(all[i].p, all[i].n);
        if (requeue_one(c, &all[i])) rq++;
        else sk++;
    }
    mb_free_list(all, n);
    mr_array(c->r, EMQ_REPLY_ARRAY);
    mr_push_int(c->r, rq);
    mr_push_int(c->r, sk);
    if (seen == batch && last.p) mr_push_bulk(c->r, last.p, last.n);
    else mr_push(c->r);
    free(last.p);
    return EMQ_OK;
}

/* requeue_edited(q, id, payload): -1 gone; refused unless dead or
 * scheduled; else the payload replaced, then T2.13 (dead) or T1.7's move
 * (scheduled): 1 */
int mv_requeue_edited(mcall *c)
{
    char j[KMAX], kd[KMAX], ks[KMAX];
    const marg *id = ARG(c, 1), *p = ARG(c, 2);
    int dead, sched;
    jk(j, Q(c), id->s, id->n, NULL);
    if (!mk_exists(c->m, j)) {
        mr_int(c->r, -1);
        return EMQ_OK;
    }
    qk(kd, Q(c), "dead");
    qk(ks, Q(c), "schedule");
    dead = mz_has(c->m, kd, id->s, id->n);
    sched = mz_has(c->m, ks, id->s, id->n);
    if (!dead && !sched)
        return mc_err(c, EMQ_ENOTDEAD, "EMQSTATE not dead or scheduled");
    mh_sets(c->m, j, "payload", p->s, p->n);
    if (dead) {
        emq_reply r = {0};
        mcall sub = *c;
        sub.r = &r;
        sub.argc = 2;
        mv_reprocess_job(&sub);
        model_reply_free(&r);
    } else {
        run_one(c, id->s, id->n);
    }
    mr_int(c->r, 1);
    return EMQ_OK;
}
