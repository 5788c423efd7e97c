/*
 * sweep.c — the time-driven moves of PROTOCOL.md §6.1: T1.7 promote (due
 * scheduled jobs to pending) and T1.8 reap (lapsed leases back to pending).
 *
 * Rule: the due members are read first (in zset order, bounded), then moved
 * one by one; a grouped row goes to its lane and is offered, an ungrouped
 * one to B.pending; the row's state is set last and recreates a one-field
 * row for a ghost id. Neither consults the queue-wide pause.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "verb.h"
#include "groups.h"

#define REAP_CAP 100

typedef struct members {
    emq_buf *v;
    size_t n, cap;
} members;

static int collect(void *ctx, const unsigned char *m, size_t mlen, double s)
{
    members *ms = ctx;
    (void)s;
    if (ms->n == ms->cap) {
        size_t cap = ms->cap ? ms->cap * 2 : 16;
        emq_buf *v = emq_mem_realloc(ms->v, cap * sizeof *v);
        if (v == NULL) return EMQ_ENOMEM;
        memset(v + ms->cap, 0, (cap - ms->cap) * sizeof *v);
        ms->v = v;
        ms->cap = cap;
    }
    return emq_buf_set(&ms->v[ms->n++], m, mlen);
}

static void members_free(members *ms)
{
    size_t i;
    for (i = 0; i < ms->cap; i++) emq_buf_free(&ms->v[i]);
    emq_mem_free(ms->v);
}

enum { MOVE_PROMOTE, MOVE_REAP };

/* Move one member out of its set (already removed by the caller) to its
 * lane or to B.pending, and set its row's state to pending. */
static int to_pending(emq_store *st, const char *q, const emq_buf *m, int how)
{
    char pk[EMQ_KEY_MAX];
    size_t pkl;
    emq_buf jk = {0}, g = {0}, lk = {0};
    emq_bytes fv[2];
    int64_t act = 0;
    int paused, added, rc;

    if ((rc = emq_key_buf(&jk, q, EMQ_KT_JOB, m->p, m->len)) < 0) goto done;
    rc = emq_hash_get(st, jk.p, jk.len, "group", 5, &g);
    if (rc < 0) goto done;
    if (rc == EMQ_OK) {
        if (how == MOVE_REAP &&
            (rc = emq_g_charge(st, q, g.p, g.len, -1, &act)) < 0)
            goto done;
        if ((rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g.p, g.len)) < 0) goto done;
        if ((rc = emq_zset_add(st, lk.p, lk.len, m->p, m->len, 0, &added)) < 0)
            goto done;
        if ((rc = emq_g_paused(st, q, g.p, g.len, &paused)) < 0) goto done;
        if (!paused) {
            if (how == MOVE_PROMOTE &&
                (rc = emq_g_gact(st, q, g.p, g.len, &act)) < 0)
                goto done;
            if ((rc = emq_g_offer(st, q, g.p, g.len, act)) < 0) goto done;
        }
    } else {
        pkl = emq_key(pk, q, EMQ_KT_PENDING);
        if ((rc = emq_zset_add(st, pk, pkl, m->p, m->len, 0, &added)) < 0)
            goto done;
    }
    fv[0].p = "state";
    fv[0].n = 5;
    fv[1].p = "pending";
    fv[1].n = 7;
    rc = emq_hash_set(st, jk.p, jk.len, fv, 1, &added);
done:
    emq_buf_free(&jk);
    emq_buf_free(&g);
    emq_buf_free(&lk);
    return rc < 0 ? rc : EMQ_OK;
}

/* Move up to `limit` members of key type `from` with score <= NOW; the count is
 * the reply. */
static int sweep(emq_vctx *c, int from, int how, int64_t limit)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, from), i;
    members ms = {0};
    int removed, rc;

    rc = emq_zset_range_score(st, k, kl, -INFINITY, (double)c->now, limit,
                              collect, &ms);
    if (rc < 0) goto done;
    for (i = 0; i < ms.n; i++) {
        rc = emq_zset_rem(st, k, kl, ms.v[i].p, ms.v[i].len, &removed);
        if (rc < 0) goto done;
        if ((rc = to_pending(st, q, &ms.v[i], how)) < 0) goto done;
    }
    emq_reply_int(c->r, (int64_t)ms.n);
    rc = EMQ_OK;
done:
    members_free(&ms);
    return rc;
}

/*
 * T1.7 promote(q, batch > 0)
 * Keys: B.schedule, B.pending, J(*), lane family.
 * Reply: the number moved. Clock: NOW (due = score <= NOW).
 */
int emq_v_promote(emq_vctx *c)
{
    return sweep(c, EMQ_KT_SCHEDULE, MOVE_PROMOTE, c->a[1].i);
}

/*
 * T1.8 reap(q) — at most 100 lapsed leases per call.
 * Keys: B.active, B.pending, J(*), lane family.
 * Reply: the number reaped. Clock: NOW (lapsed = score <= NOW).
 */
int emq_v_reap(emq_vctx *c)
{
    return sweep(c, EMQ_KT_ACTIVE, MOVE_REAP, REAP_CAP);
}

/* A typed call whose reply is a count. */
static int count_call(emq_db *db, int verb, emq_varg *a, size_t argc,
                      int64_t *count)
{
    emq_reply r = {0};
    int rc;
    if (count) *count = 0;
    rc = emq_verb_exec(db, verb, a, argc, &r, NULL);
    if (rc == EMQ_OK && count) *count = r.integer;
    return rc;
}

int emq_promote(emq_db *db, const char *q, int64_t batch, int64_t *count)
{
    char num[24];
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(batch, num)};
    return count_call(db, EMQ_V_PROMOTE, a, 2, count);
}

int emq_reap(emq_db *db, const char *q, int64_t *count)
{
    emq_varg a[1] = {emq_varg_str(q)};
    return count_call(db, EMQ_V_REAP, a, 1, count);
}
