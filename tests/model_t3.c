/*
 * model_t3.c — the model's Tier 3 (PROTOCOL.md §6.3): fair lanes. A lane is
 * the per-group pending zset; the ring holds the groups that may be served;
 * every grouped claim rotates the ring one step first. The §6.0 helpers
 * (OFFER, DERING, GACT, ...) are in tests/model_t1.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "model_int.h"

#define Q(c) ((c)->a[0].s)
#define ARG(c, i) (&(c)->a[i])

/* T3.1 lane_enqueue(q, g, id, payload) */
int mv_lane_enqueue(mcall *c)
{
    const char *q = Q(c);
    const marg *g = ARG(c, 1), *id = ARG(c, 2), *p = ARG(c, 3);
    char j[KMAX], k[KMAX];
    if (!m_is_job(id->s, id->n)) return mc_err(c, EMQ_EKIND, MSG_KIND);
    jk(j, q, id->s, id->n, NULL);
    if (mk_exists(c->m, j)) {
        mr_int(c->r, 0);
        return EMQ_OK;
    }
    mh_sets(c->m, j, "state", "pending", 7);
    mh_sets(c->m, j, "attempts", "0", 1);
    mh_sets(c->m, j, "payload", p->s, p->n);
    mh_sets(c->m, j, "group", g->s, g->n);
    lk(k, q, g->s, g->n);
    mz_add(c->m, k, id->s, id->n, 0);
    if (!g_paused(c->m, q, g->s, g->n))
        g_offer(c->m, q, g->s, g->n, g_act(c->m, q, g->s, g->n));
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* act = increment B.gactive[g] by `by` (a claim's charge: no deletion). */
static int64_t g_incr(emq_model *m, const char *q, const mbs *g, int64_t by)
{
    char k[KMAX];
    int64_t act = 0;
    qk(k, q, "gactive");
    mh_incrby(m, k, g->p, g->n, by, &act);
    return act;
}

/* The rotation every grouped claim starts with: the paused check, then the
 * ring's head moved to its tail. .p NULL: answer empty. */
static mbs rotate(mcall *c)
{
    char k[KMAX];
    mbs none = {NULL, 0};
    if (t1_queue_paused(c->m, Q(c))) return none;
    qk(k, Q(c), "ring");
    return ml_rotate(c->m, k);
}

/* T3.2 lane_claim(q, lease_ms) — one rotation, one job */
int mv_lane_claim(mcall *c)
{
    const char *q = Q(c);
    char k[KMAX];
    mbs g, id;
    int64_t att, act;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    if ((g = rotate(c)).p == NULL) return EMQ_OK;
    lk(k, q, g.p, g.n);
    id = t1_pop_first(c->m, k);
    if (id.p == NULL) {
        g_unring(c->m, q, g.p, g.n);
        free(g.p);
        return EMQ_OK;
    }
    t1_lease(c->m, q, &id, c->now + ARG(c, 1)->i, &att);
    act = g_incr(c->m, q, &g, 1);
    g_dering(c->m, q, g.p, g.n, act);
    t1_fill_claimed(c->m, c->r, q, &id, att, &g);
    free(id.p);
    free(g.p);
    return EMQ_OK;
}

/* T3.3 / T3.4: serve k jobs of the rotated lane (weighted: k = min(weight,
 * depth); batch: k = depth), within the group's ceiling. */
static int claim_k(mcall *c, int weighted)
{
    const char *q = Q(c);
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    mbs g;
    int64_t depth, want, i, att, act;
    double lim;
    int ok;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    if ((g = rotate(c)).p == NULL) return EMQ_OK;
    depth = g_depth(c->m, q, g.p, g.n);
    if (depth == 0) {
        g_unring(c->m, q, g.p, g.n);
        free(g.p);
        return EMQ_OK;
    }
    want = depth;
    if (weighted) {
        int64_t w = 1;
        qk(k, q, "gweight");
        if (mh_get(c->m, k, g.p, g.n, &v, &vl) && (!m_parse(v, vl, &w) ||
                                                   w < 1))
            w = 1;
        want = w < depth ? w : depth;
    }
    qk(k, q, "glimit");
    if (mh_get(c->m, k, g.p, g.n, &v, &vl)) {
        lim = m_num(v, vl, &ok);
        if ((double)want > lim - (double)g_act(c->m, q, g.p, g.n))
            want = (int64_t)(lim - (double)g_act(c->m, q, g.p, g.n));
    }
    if (want <= 0) {
        g_unring(c->m, q, g.p, g.n);
        free(g.p);
        return EMQ_OK;
    }
    lk(k, q, g.p, g.n);
    for (i = 0; i < want; i++) {
        mbs id = t1_pop_first(c->m, k);
        if (id.p == NULL) break;
        t1_lease(c->m, q, &id, c->now + ARG(c, 1)->i, &att);
        t1_fill_claimed(c->m, mr_push(c->r), q, &id, att, &g);
        free(id.p);
    }
    act = g_incr(c->m, q, &g, want);
    g_dering(c->m, q, g.p, g.n, act);
    free(g.p);
    return EMQ_OK;
}

/* T3.3 wclaim(q, lease_ms) */
int mv_wclaim(mcall *c)
{
    return claim_k(c, 1);
}

/* T3.4 bclaim(q, lease_ms) */
int mv_bclaim(mcall *c)
{
    return claim_k(c, 0);
}

/* T3.5 weight(q, g, w) */
int mv_weight(mcall *c)
{
    char k[KMAX], b[32];
    qk(k, Q(c), "gweight");
    mh_set(c->m, k, ARG(c, 1)->s, ARG(c, 1)->n, b, m_fmt(b, ARG(c, 2)->i));
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T3.6 lane_pause(q, g) */
int mv_lane_pause(mcall *c)
{
    char k[KMAX];
    qk(k, Q(c), "paused");
    mset_add(c->m, k, ARG(c, 1)->s, ARG(c, 1)->n);
    g_unring(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T3.7 lane_resume(q, g) */
int mv_lane_resume(mcall *c)
{
    const char *q = Q(c);
    const marg *g = ARG(c, 1);
    char k[KMAX];
    qk(k, q, "paused");
    mset_rem(c->m, k, g->s, g->n);
    if (g_depth(c->m, q, g->s, g->n) > 0)
        g_offer(c->m, q, g->s, g->n, g_act(c->m, q, g->s, g->n));
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T3.8 limit(q, g, n) */
int mv_limit(mcall *c)
{
    const char *q = Q(c);
    const marg *g = ARG(c, 1);
    char k[KMAX], b[32];
    qk(k, q, "glimit");
    mh_set(c->m, k, g->s, g->n, b, m_fmt(b, ARG(c, 2)->i));
    qk(k, q, "ring");
    if (g_act(c->m, q, g->s, g->n) >= ARG(c, 2)->i) {
        g_unring(c->m, q, g->s, g->n);
    } else if (!g_paused(c->m, q, g->s, g->n) &&
               g_depth(c->m, q, g->s, g->n) > 0 &&
               !ml_has(c->m, k, g->s, g->n)) {
        ml_push(c->m, k, 1, g->s, g->n);
        g_wake(c->m, q);
    }
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T3.9 reassign(q, id, dst) */
int mv_reassign(mcall *c)
{
    const char *q = Q(c);
    const marg *id = ARG(c, 1), *dst = ARG(c, 2);
    char j[KMAX], k[KMAX];
    mbs src;
    jk(j, q, id->s, id->n, NULL);
    src = mh_dup(c->m, j, "group");
    if (src.p == NULL) {
        mr_int(c->r, -1);
        return EMQ_OK;
    }
    if (mb_eq(&src, dst->s, dst->n)) {
        mr_int(c->r, 0);
    } else {
        lk(k, q, src.p, src.n);
        if (!mz_rem(c->m, k, id->s, id->n)) {
            mr_int(c->r, -2);
        } else {
            lk(k, q, dst->s, dst->n);
            mz_add(c->m, k, id->s, id->n, 0);
            mh_sets(c->m, j, "group", dst->s, dst->n);
            if (!g_paused(c->m, q, dst->s, dst->n))
                g_offer(c->m, q, dst->s, dst->n,
                        g_act(c->m, q, dst->s, dst->n));
            if (g_depth(c->m, q, src.p, src.n) == 0)
                g_unring(c->m, q, src.p, src.n);
            mr_int(c->r, 1);
        }
    }
    free(src.p);
    return EMQ_OK;
}

/* T3.10 lane_drain(q, g) */
int mv_lane_drain(mcall *c)
{
    const char *q = Q(c);
    const marg *g = ARG(c, 1);
    char k[KMAX];
    mbs *ids;
    size_t n, i;
    lk(k, q, g->s, g->n);
    n = mz_head(c->m, k, -1, 0, 0, &ids);
    for (i = 0; i < n; i++) t1_jobdel(c->m, q, ids[i].p, ids[i].n, 0);
    mk_del(c->m, k);
    g_unring(c->m, q, g->s, g->n);
    mb_free_list(ids, n);
    mr_int(c->r, (int64_t)n);
    return EMQ_OK;
}

/* T3.11 reap_group(q, g, limit = 100) */
int mv_reap_group(mcall *c)
{
    const char *q = Q(c);
    const marg *g = ARG(c, 1);
    int64_t limit = ARG(c, 2)->present ? ARG(c, 2)->i : 100, n = 0;
    char k[KMAX], j[KMAX], lane[KMAX];
    mbs *ids;
    size_t ne, i;
    qk(k, q, "active");
    lk(lane, q, g->s, g->n);
    ne = mz_head(c->m, k, limit, 1, (double)c->now, &ids);
    for (i = 0; i < ne; i++) {
        const unsigned char *v;
        size_t vl;
        int64_t act;
        jk(j, q, ids[i].p, ids[i].n, NULL);
        if (!mh_get(c->m, j, "group", 5, &v, &vl) || vl != g->n ||
            memcmp(v, g->s, vl) != 0)
            continue;
        mz_rem(c->m, k, ids[i].p, ids[i].n);
        act = g_charge(c->m, q, g->s, g->n, -1);
        mz_add(c->m, lane, ids[i].p, ids[i].n, 0);
        if (!g_paused(c->m, q, g->s, g->n))
            g_offer(c->m, q, g->s, g->n, act);
        mh_sets(c->m, j, "state", "pending", 7);
        n++;
    }
    mb_free_list(ids, ne);
    mr_int(c->r, n);
    return EMQ_OK;
}

/* T3.12 depth(q, g) */
int mv_depth(mcall *c)
{
    mr_int(c->r, g_depth(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n));
    return EMQ_OK;
}

/* T3.12 lane_depths(q, [g...]) */
int mv_lane_depths(mcall *c)
{
    size_t i, j;
    mr_array(c->r, EMQ_REPLY_MAP);
    for (i = c->nfixed; i < c->argc; i++) {
        int dup = 0;
        for (j = c->nfixed; j < i; j++)
            dup |= c->a[j].n == c->a[i].n &&
                   memcmp(c->a[j].s, c->a[i].s, c->a[i].n) == 0;
        if (dup) continue;
        mr_push_bulk(c->r, c->a[i].s, c->a[i].n);
        mr_push_int(c->r, g_depth(c->m, Q(c), c->a[i].s, c->a[i].n));
    }
    return EMQ_OK;
}
