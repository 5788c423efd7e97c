/*
 * model_t1.c — the model's Tier 1 (PROTOCOL.md §6.1) and the §6.0
 * definitions the later tiers share (WAKE, OFFER, RELEASE, UNCLAIMED,
 * DERING, GACT, JOBDEL/OBDEL, LINK), each written from its block's numbered
 * steps over the toy keyspace of tests/model.c.
 *
 * Rule: a body reads NOW from c->now only, answers the wire reply in c->r,
 * and returns >= 0, or an error's class code after mc_err.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "model_int.h"

#define Q(c) ((c)->a[0].s)
#define ARG(c, i) (&(c)->a[i])

/* -------------------------------------------------- §6.0 shared defs */

int64_t g_act(emq_model *m, const char *q, const void *g, size_t gn)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    int64_t a = 0;
    qk(k, q, "gactive");
    if (mh_get(m, k, g, gn, &v, &vl)) m_parse(v, vl, &a);
    return a;
}

int g_paused(emq_model *m, const char *q, const void *g, size_t gn)
{
    char k[KMAX];
    qk(k, q, "paused");
    return mset_has(m, k, g, gn);
}

int64_t g_depth(emq_model *m, const char *q, const void *g, size_t gn)
{
    char k[KMAX];
    lk(k, q, g, gn);
    return mz_card(m, k);
}

void g_wake(emq_model *m, const char *q)
{
    char k[KMAX];
    qk(k, q, "wake");
    ml_push(m, k, 0, "1", 1);
    ml_trim(m, k, 0, 63);
}

/* The group's ceiling: 1 with *lim when glimit[g] is present. */
static int g_limit(emq_model *m, const char *q, const void *g, size_t gn,
                   double *lim)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    int ok;
    qk(k, q, "glimit");
    if (!mh_get(m, k, g, gn, &v, &vl)) return 0;
    *lim = m_num(v, vl, &ok);
    return 1;
}

void g_offer(emq_model *m, const char *q, const void *g, size_t gn,
             int64_t act)
{
    char k[KMAX];
    double lim;
    if (g_limit(m, q, g, gn, &lim) && !((double)act < lim)) return;
    qk(k, q, "ring");
    if (ml_has(m, k, g, gn)) return;
    ml_push(m, k, 1, g, gn);
    g_wake(m, q);
}

int64_t g_charge(emq_model *m, const char *q, const void *g, size_t gn,
                 int64_t by)
{
    char k[KMAX];
    int64_t a = 0;
    qk(k, q, "gactive");
    mh_incrby(m, k, g, gn, by, &a);
    if (a <= 0) mh_del(m, k, g, gn);
    return a;
}

void g_unring(emq_model *m, const char *q, const void *g, size_t gn)
{
    char k[KMAX];
    qk(k, q, "ring");
    ml_rem_all(m, k, g, gn);
}

void g_dering(emq_model *m, const char *q, const void *g, size_t gn,
              int64_t act)
{
    double lim;
    if (g_limit(m, q, g, gn, &lim) && (double)act >= lim)
        g_unring(m, q, g, gn);
    else if (g_depth(m, q, g, gn) == 0)
        g_unring(m, q, g, gn);
}

static void g_release(emq_model *m, const char *q, const mbs *g)
{
    int64_t act = g_charge(m, q, g->p, g->n, -1);
    if (!g_paused(m, q, g->p, g->n) && g_depth(m, q, g->p, g->n) > 0)
        g_offer(m, q, g->p, g->n, act);
}

static void g_unclaimed(emq_model *m, const char *q, const mbs *g,
                        const char *id, size_t idn)
{
    char k[KMAX];
    lk(k, q, g->p, g->n);
    mz_rem(m, k, id, idn);
    if (g_depth(m, q, g->p, g->n) == 0) g_unring(m, q, g->p, g->n);
}

int t1_settle(emq_model *m, const char *q, const char *id, size_t idn)
{
    char j[KMAX], k[KMAX];
    mbs g;
    int was;
    jk(j, q, id, idn, NULL);
    g = mh_dup(m, j, "group");
    qk(k, q, "active");
    was = mz_rem(m, k, id, idn);
    if (g.p) {
        if (was) g_release(m, q, &g);
        else g_unclaimed(m, q, &g, id, idn);
    } else if (!was) {
        qk(k, q, "pending");
        mz_rem(m, k, id, idn);
    }
    free(g.p);
    return was;
}

void t1_jobdel(emq_model *m, const char *q, const void *id, size_t n,
               int lock_too)
{
    char k[KMAX];
    jk(k, q, id, n, NULL);
    mk_del(m, k);
    jk(k, q, id, n, "logs");
    mk_del(m, k);
    if (lock_too) {
        jk(k, q, id, n, "lock");
        mk_del(m, k);
    }
}

/* ---------------------------------------------------------- admissions */

int t1_admit(emq_model *m, const char *q, const void *id, size_t idn,
             const void *p, size_t pn, const char *set, double score)
{
    char j[KMAX], s[KMAX];
    int pend = strcmp(set, "pending") == 0;
    if (!m_is_job(id, idn)) return EMQ_EKIND;
    jk(j, q, id, idn, NULL);
    if (mk_exists(m, j)) return 0;
    mh_sets(m, j, "state", pend ? "pending" : "scheduled", pend ? 7 : 9);
    mh_sets(m, j, "attempts", "0", 1);
    mh_sets(m, j, "payload", p, pn);
    qk(s, q, set);
    mz_add(m, s, id, idn, score);
    return 1;
}

static int admit_reply(mcall *c, int rc)
{
    if (rc == EMQ_EKIND) return mc_err(c, EMQ_EKIND, MSG_KIND);
    mr_int(c->r, rc);
    return EMQ_OK;
}

/* T1.1 enqueue(q, id, payload) */
int mv_enqueue(mcall *c)
{
    return admit_reply(c, t1_admit(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n,
                                   ARG(c, 2)->s, ARG(c, 2)->n, "pending",
                                   0));
}

/* T1.2 enqueue_many(q, [(id, payload)...]): one verdict per item, in
 * order; a kind refusal is that item's error element. */
int mv_enqueue_many(mcall *c)
{
    size_t i;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    for (i = c->nfixed; i + 1 < c->argc; i += 2) {
        int rc = t1_admit(c->m, Q(c), c->a[i].s, c->a[i].n, c->a[i + 1].s,
                          c->a[i + 1].n, "pending", 0);
        emq_reply *e = mr_push(c->r);
        if (rc == EMQ_EKIND) {
            e->type = EMQ_REPLY_ERROR;
            e->str = malloc(sizeof MSG_KIND);
            if (e->str == NULL) abort();
            memcpy(e->str, MSG_KIND, sizeof MSG_KIND);
            e->len = sizeof MSG_KIND - 1;
        } else {
            mr_int(e, rc);
        }
    }
    return EMQ_OK;
}

/* T1.3 enqueue_at(q, id, payload, run_at_ms) */
int mv_enqueue_at(mcall *c)
{
    return admit_reply(c, t1_admit(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n,
                                   ARG(c, 2)->s, ARG(c, 2)->n, "schedule",
                                   (double)ARG(c, 3)->i));
}

/* T1.3 enqueue_in(q, id, payload, delay_ms) */
int mv_enqueue_in(mcall *c)
{
    return admit_reply(c, t1_admit(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n,
                                   ARG(c, 2)->s, ARG(c, 2)->n, "schedule",
                                   (double)c->now + (double)ARG(c, 3)->i));
}

/* -------------------------------------------------------------- claims */

void t1_lease(emq_model *m, const char *q, const mbs *id, int64_t deadline,
              int64_t *att)
{
    char j[KMAX], k[KMAX];
    jk(j, q, id->p, id->n, NULL);
    *att = 0;
    mh_incrby(m, j, "attempts", 8, 1, att);
    mh_sets(m, j, "state", "active", 6);
    qk(k, q, "active");
    mz_add(m, k, id->p, id->n, (double)deadline);
}

void t1_fill_claimed(emq_model *m, emq_reply *t, const char *q,
                     const mbs *id, int64_t att, const mbs *g)
{
    char j[KMAX];
    const unsigned char *v;
    size_t vl;
    mr_array(t, EMQ_REPLY_ARRAY);
    mr_push_bulk(t, id->p, id->n);
    jk(j, q, id->p, id->n, NULL);
    if (mh_get(m, j, "payload", 7, &v, &vl)) mr_push_bulk(t, v, vl);
    else mr_nil(mr_push(t));
    mr_push_int(t, att);
    if (g) mr_push_bulk(t, g->p, g->n);
}

int t1_queue_paused(emq_model *m, const char *q)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    qk(k, q, "meta");
    return mh_get(m, k, "paused", 6, &v, &vl);
}

mbs t1_pop_first(emq_model *m, const char *k)
{
    mbs *v, out = {NULL, 0};
    if (mz_head(m, k, 1, 0, 0, &v) == 1) {
        out = v[0];
        free(v);
        mz_rem(m, k, out.p, out.n);
    }
    return out;
}

/* T1.4 claim(q, lease_ms) */
int mv_claim(mcall *c)
{
    char k[KMAX];
    mbs id;
    int64_t att;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    if (t1_queue_paused(c->m, Q(c))) return EMQ_OK;
    qk(k, Q(c), "pending");
    id = t1_pop_first(c->m, k);
    if (id.p == NULL) return EMQ_OK;
    t1_lease(c->m, Q(c), &id, c->now + ARG(c, 1)->i, &att);
    t1_fill_claimed(c->m, c->r, Q(c), &id, att, NULL);
    free(id.p);
    return EMQ_OK;
}

/* ---------------------------------------------------------------- LINK */

typedef struct mlink {
    int kind;           /* 0 none, 1 same, 2 cross                       */
    mbs parent, pq;
    int pid;            /* policy id (else fp)                           */
} mlink;

static int link_read(emq_model *m, const char *q, const char *id, size_t n,
                     mlink *l)
{
    char j[KMAX];
    mbs pol;
    memset(l, 0, sizeof *l);
    jk(j, q, id, n, NULL);
    l->parent = mh_dup(m, j, "parent");
    if (l->parent.p == NULL) return EMQ_OK;
    pol = mh_dup(m, j, "parent_policy");
    l->pid = pol.p && mb_eq(&pol, "id", 2);
    free(pol.p);
    l->pq = mh_dup(m, j, "parent_queue");
    if (l->pq.p && !mb_eq(&l->pq, q, strlen(q))) {
        l->kind = 2;
        return EMQ_OK;
    }
    l->kind = 1;
    return m_id_valid(l->parent.p, l->parent.n) ? EMQ_OK : EMQ_EID;
}

static void link_free(mlink *l)
{
    free(l->parent.p);
    free(l->pq.p);
}

static void cat(emq_buf *b, const void *p, size_t n, int nul)
{
    emq_buf_append(b, p, n);
    if (nul) emq_buf_append(b, "", 1);
}

static void set_state(emq_model *m, const char *q, const void *id, size_t n,
                      const char *s)
{
    char j[KMAX];
    jk(j, q, id, n, NULL);
    mh_sets(m, j, "state", s, strlen(s));
}

static void push_fail(emq_model *m, const char *q, const mbs *pq,
                      const mbs *parent, const void *node, size_t nn,
                      int pid, const void *err, size_t en)
{
    char k[KMAX];
    emq_buf e = {0};
    cat(&e, "", 0, 1);
    cat(&e, "fail", 4, 1);
    cat(&e, pq->p, pq->n, 1);
    cat(&e, parent->p, parent->n, 1);
    cat(&e, node, nn, 1);
    cat(&e, pid ? "id" : "fp", 2, 1);
    cat(&e, err, en, 0);
    qk(k, q, "flow:outbox");
    ml_push(m, k, 1, e.p, e.len);
    emq_buf_free(&e);
}

int64_t t4_reemit(emq_model *m, const char *q, const void *node, size_t nn,
                  const void *err, size_t en)
{
    char j[KMAX], k[KMAX];
    mbs parent, pq, pol;
    int pid;
    jk(j, q, node, nn, NULL);
    parent = mh_dup(m, j, "parent");
    if (parent.p == NULL) return 0;
    pol = mh_dup(m, j, "parent_policy");
    pid = pol.p && mb_eq(&pol, "id", 2);
    pq = mh_dup(m, j, "parent_queue");
    if (pq.p == NULL || mb_eq(&pq, q, strlen(q))) {
        free(pq.p);
        pq = mb_dup(q, strlen(q));
    }
    push_fail(m, q, &pq, &parent, node, nn, pid, err, en);
    free(parent.p);
    free(pq.p);
    free(pol.p);
    qk(k, q, "flow:outbox");
    return ml_len(m, k);
}

void t1_dep_done(emq_model *m, const char *q, const void *p, size_t pn)
{
    char k[KMAX];
    int64_t left = 0;
    jk(k, q, p, pn, "dependencies");
    ms_incrby(m, k, -1, &left);
    if (left <= 0) {
        qk(k, q, "pending");
        mz_add(m, k, p, pn, 0);
        set_state(m, q, p, pn, "pending");
    }
}

int mc_card(mcall *c, const char *sfx)
{
    char k[KMAX];
    qk(k, c->a[0].s, sfx);
    mr_int(c->r, mz_card(c->m, k));
    return EMQ_OK;
}

/* ---------------------------------------------------------- completion */

/* T1.5 complete(q, id, token, result = none) */
int mv_complete(mcall *c)
{
    const char *q = Q(c), *id = ARG(c, 1)->s;
    size_t idn = ARG(c, 1)->n;
    const marg *res = ARG(c, 3);
    const void *r = res->present ? (const void *)res->s : (const void *)id;
    size_t rn = res->present ? res->n : idn;
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl;
    mlink l;
    int64_t n;
    int was, rc = link_read(c->m, q, id, idn, &l);
    if (rc) goto done;
    jk(j, q, id, idn, NULL);
    if (!mh_get(c->m, j, "attempts", 8, &v, &vl)) {
        mr_int(c->r, 0);
        goto done;
    }
    if (!m_token_eq(v, vl, ARG(c, 2)->i)) {
        rc = mc_err(c, EMQ_ESTALE, "EMQSTALE complete token mismatch");
        goto done;
    }
    was = t1_settle(c->m, q, id, idn);
    if (l.kind == 2 && was) {
        emq_buf e = {0};
        cat(&e, l.pq.p, l.pq.n, 1);
        cat(&e, l.parent.p, l.parent.n, 1);
        cat(&e, id, idn, 1);
        cat(&e, r, rn, 0);
        qk(k, q, "flow:outbox");
        ml_push(c->m, k, 1, e.p, e.len);
        emq_buf_free(&e);
    } else if (l.kind == 1 && was) {
        t1_dep_done(c->m, q, l.parent.p, l.parent.n);
        jk(k, q, l.parent.p, l.parent.n, "processed");
        mh_set(c->m, k, id, idn, r, rn);
    }
    mk_del(c->m, j);
    qk(k, q, "metrics:completed");
    mh_incrby(c->m, k, "count", 5, 1, &n);
    mr_int(c->r, 1);
done:
    link_free(&l);
    return rc;
}

/* T1.6 retry(q, id, token, delay_ms, max_attempts, error), with the
 * RECURSE-SQ of T4.14 after a same-queue death (a second transition in
 * the engine; here the same call). */
static int retry(mcall *c, int recurse)
{
    const char *q = Q(c), *id = ARG(c, 1)->s;
    size_t idn = ARG(c, 1)->n;
    const void *err = ARG(c, 5)->s;
    size_t elen = ARG(c, 5)->n;
    int64_t token = ARG(c, 2)->i, n, att;
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl;
    mlink l;
    int rc = link_read(c->m, q, id, idn, &l);
    if (rc) goto done;
    jk(j, q, id, idn, NULL);
    if (!mh_get(c->m, j, "attempts", 8, &v, &vl)) {
        rc = mc_err(c, EMQ_ESTALE, MSG_GONE);
        goto done;
    }
    if (!m_token_eq(v, vl, token)) {
        rc = mc_err(c, EMQ_ESTALE, "EMQSTALE retry token mismatch");
        goto done;
    }
    if (!m_parse(v, vl, &att)) att = 0;
    t1_settle(c->m, q, id, idn);
    mh_sets(c->m, j, "last_error", err, elen);
    if (att >= ARG(c, 4)->i) {
        int parent_dead = 0;
        mh_sets(c->m, j, "state", "dead", 4);
        qk(k, q, "dead");
        mz_add(c->m, k, id, idn, 0);
        qk(k, q, "metrics:failed");
        mh_incrby(c->m, k, "count", 5, 1, &n);
        if (l.kind == 1) {
            const mbs *p = &l.parent;
            if (!l.pid) {
                jk(k, q, p->p, p->n, "failed");
                mh_set(c->m, k, id, idn, err, elen);
                set_state(c->m, q, p->p, p->n, "dead");
                qk(k, q, "dead");
                mz_add(c->m, k, p->p, p->n, 0);
                qk(k, q, "pending");
                mz_rem(c->m, k, p->p, p->n);
            } else {
                jk(k, q, p->p, p->n, "unsuccessful");
                mh_set(c->m, k, id, idn, err, elen);
                t1_dep_done(c->m, q, p->p, p->n);
            }
            jk(k, q, p->p, p->n, NULL);
            parent_dead = mh_get(c->m, k, "state", 5, &v, &vl) && vl == 4 &&
                          memcmp(v, "dead", 4) == 0;
        } else if (l.kind == 2) {
            push_fail(c->m, q, &l.pq, &l.parent, id, idn, l.pid, err, elen);
        }
        mr_bulk(c->r, "dead", 4);
        /* [multi-tx] RECURSE-SQ: the parent is dead -> REEMIT(q, p) */
        if (parent_dead && recurse)
            t4_reemit(c->m, q, l.parent.p, l.parent.n, err, elen);
        goto done;
    }
    mh_sets(c->m, j, "state", "scheduled", 9);
    qk(k, q, "schedule");
    mz_add(c->m, k, id, idn, (double)c->now + (double)ARG(c, 3)->i);
    mr_bulk(c->r, "scheduled", 9);
done:
    link_free(&l);
    return rc;
}

int mv_retry(mcall *c)
{
    return retry(c, 1);
}

/* retry_tx: T1.6's transition alone, without RECURSE-SQ (the first part of
 * a retry the traces record as retry, then reemit). */
int mv_retry_tx(mcall *c)
{
    return retry(c, 0);
}

/* ------------------------------------------------------ promote / reap */

/* Back to pending (or the row's lane): T1.7 step 2.3-2.4 and T1.8 step 2. */
static void to_pending(emq_model *m, const char *q, const mbs *id, int reap)
{
    char j[KMAX], k[KMAX];
    mbs g;
    jk(j, q, id->p, id->n, NULL);
    g = mh_dup(m, j, "group");
    if (g.p) {
        int64_t act = reap ? g_charge(m, q, g.p, g.n, -1) : 0;
        lk(k, q, g.p, g.n);
        mz_add(m, k, id->p, id->n, 0);
        if (!g_paused(m, q, g.p, g.n))
            g_offer(m, q, g.p, g.n, reap ? act : g_act(m, q, g.p, g.n));
        free(g.p);
    } else {
        qk(k, q, "pending");
        mz_add(m, k, id->p, id->n, 0);
    }
    mh_sets(m, j, "state", "pending", 7);
}

static int64_t sweep_set(emq_model *m, const char *q, const char *from,
                         int64_t now, int64_t limit, int reap)
{
    char k[KMAX];
    mbs *ids;
    size_t n, i;
    qk(k, q, from);
    n = mz_head(m, k, limit, 1, (double)now, &ids);
    for (i = 0; i < n; i++) {
        mz_rem(m, k, ids[i].p, ids[i].n);
        to_pending(m, q, &ids[i], reap);
    }
    mb_free_list(ids, n);
    return (int64_t)n;
}

/* T1.7 step 2 on one member already out of B.schedule (the operator's
 * run_now, run_due and requeue_edited of model_t0.c) */
void t1_promote_one(emq_model *m, const char *q, const mbs *id)
{
    to_pending(m, q, id, 0);
}

int64_t t1_promote(emq_model *m, const char *q, int64_t now, int64_t batch)
{
    return sweep_set(m, q, "schedule", now, batch, 0);
}

/* T1.7 promote(q, batch) */
int mv_promote(mcall *c)
{
    mr_int(c->r, t1_promote(c->m, Q(c), c->now, ARG(c, 1)->i));
    return EMQ_OK;
}

/* T1.8 reap(q) */
int mv_reap(mcall *c)
{
    mr_int(c->r, sweep_set(c->m, Q(c), "active", c->now, 100, 1));
    return EMQ_OK;
}

/* ---------------------------------------------------------------- reads */

/* T1.9 browse(q, n): the first n of pending, memcmp-descending */
int mv_browse(mcall *c)
{
    char k[KMAX];
    mbs *ids;
    size_t n, i;
    int64_t want = ARG(c, 1)->i;
    qk(k, Q(c), "pending");
    n = mz_head(c->m, k, -1, 0, 0, &ids);
    mr_array(c->r, EMQ_REPLY_ARRAY);
    for (i = n; i > 0 && (int64_t)(n - i) < want; i--)
        mr_push_bulk(c->r, ids[i - 1].p, ids[i - 1].n);
    mb_free_list(ids, n);
    return EMQ_OK;
}

/* T1.10 pending_size(q) */
int mv_pending_size(mcall *c)
{
    return mc_card(c, "pending");
}

/* ------------------------------------------------------------ extension */

/* 1 when J(id).attempts equals token, 0 stale, -1 gone */
static int judge(emq_model *m, const char *q, const void *id, size_t n,
                 int64_t token)
{
    char j[KMAX];
    const unsigned char *v;
    size_t vl;
    jk(j, q, id, n, NULL);
    if (!mh_get(m, j, "attempts", 8, &v, &vl)) return -1;
    return m_token_eq(v, vl, token);
}

/* T1.11 extend_lock(q, id, token, lease_ms) */
int mv_extend_lock(mcall *c)
{
    char k[KMAX];
    int j = judge(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, ARG(c, 2)->i);
    if (j < 0) {
        mr_int(c->r, -1);
        return EMQ_OK;
    }
    if (j == 0)
        return mc_err(c, EMQ_ESTALE, "EMQSTALE extend token mismatch");
    qk(k, Q(c), "active");
    mz_add(c->m, k, ARG(c, 1)->s, ARG(c, 1)->n,
           (double)c->now + (double)ARG(c, 3)->i);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T1.12 extend_locks(q, [(id, token)...], lease_ms) */
int mv_extend_locks(mcall *c)
{
    char k[KMAX];
    size_t i;
    qk(k, Q(c), "active");
    mr_array(c->r, EMQ_REPLY_ARRAY);
    for (i = c->nfixed; i + 1 < c->argc; i += 2) {
        if (judge(c->m, Q(c), c->a[i].s, c->a[i].n, c->a[i + 1].i) == 1)
            mz_add(c->m, k, c->a[i].s, c->a[i].n,
                   (double)c->now + (double)ARG(c, 1)->i);
        else
            mr_push_bulk(c->r, c->a[i].s, c->a[i].n);
    }
    return EMQ_OK;
}
