/*
 * model_t4.c — the model's Tier 4 (PROTOCOL.md §6.4): flows. The parts the
 * reference's host runs as separate steps (hold_parent, flow_child, the
 * policy and link writes, the outbox read and trim, the re-emit, the two
 * deliveries, the flow reads) are verbs of their own, and so are the whole
 * host sequences (flow_add for T4.1/T4.4/T4.5, add_bulk, the sweep pass
 * deliver_flow_completions). A flow arrives as its trace JSON text
 * ({"parent": {"id", "payload"}, "children": [...]}, byte strings as JSON
 * strings or {"b64": ...}).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "model_int.h"
#include "json.h"

#define Q(c) ((c)->a[0].s)
#define ARG(c, i) (&(c)->a[i])

/* ------------------------------------------------------- the part verbs */

static void row_link(emq_model *m, const char *q, const void *id, size_t n,
                     const void *parent, size_t pn)
{
    char j[KMAX];
    jk(j, q, id, n, NULL);
    mh_sets(m, j, "parent", parent, pn);
}

/* T4.2 hold_parent on queue q; EMQ_EKIND or 1 */
static int hold(emq_model *m, const char *q, const void *p, size_t pn,
                const void *pay, size_t payn, int64_t n)
{
    char j[KMAX], b[32];
    if (!m_is_job(p, pn)) return EMQ_EKIND;
    jk(j, q, p, pn, NULL);
    mh_sets(m, j, "state", "awaiting_children", 17);
    mh_sets(m, j, "attempts", "0", 1);
    mh_sets(m, j, "payload", pay, payn);
    jk(j, q, p, pn, "dependencies");
    ms_set(m, j, b, m_fmt(b, n), -1);
    return 1;
}

/* T4.3 flow_child on the child's queue cq; EMQ_EKIND or 1 */
static int child(emq_model *m, const char *cq, const void *id, size_t n,
                 const void *pay, size_t payn, const void *p, size_t pn,
                 const void *pq, size_t pqn)
{
    char j[KMAX], k[KMAX];
    if (!m_is_job(id, n)) return EMQ_EKIND;
    jk(j, cq, id, n, NULL);
    mh_sets(m, j, "state", "pending", 7);
    mh_sets(m, j, "attempts", "0", 1);
    mh_sets(m, j, "payload", pay, payn);
    mh_sets(m, j, "parent", p, pn);
    if (pqn > 0) mh_sets(m, j, "parent_queue", pq, pqn);
    qk(k, cq, "pending");
    mz_add(m, k, id, n, 0);
    return 1;
}

static int policy_write(emq_model *m, const char *q, const void *id,
                        size_t n, const void *pol, size_t pl)
{
    char j[KMAX];
    jk(j, q, id, n, NULL);
    return mh_sets(m, j, "parent_policy", pol, pl);
}

/* T4.1 steps 1-5 enqueue_flow(q, parent, payload, [(child, payload)...]) */
int mv_enqueue_flow(mcall *c)
{
    const char *q = Q(c);
    const marg *p = ARG(c, 1), *pay = ARG(c, 2);
    size_t i, n = (c->argc - c->nfixed) / 2;
    char k[KMAX];
    if (!m_is_job(p->s, p->n)) return mc_err(c, EMQ_EKIND, MSG_KIND);
    for (i = c->nfixed; i + 1 < c->argc; i += 2)
        if (!m_is_job(c->a[i].s, c->a[i].n))
            return mc_err(c, EMQ_EKIND, MSG_KIND);
    for (i = c->nfixed; i + 1 < c->argc; i += 2) {
        char j[KMAX];
        jk(j, q, c->a[i].s, c->a[i].n, NULL);
        mh_sets(c->m, j, "state", "pending", 7);
        mh_sets(c->m, j, "attempts", "0", 1);
        mh_sets(c->m, j, "payload", c->a[i + 1].s, c->a[i + 1].n);
        row_link(c->m, q, c->a[i].s, c->a[i].n, p->s, p->n);
        qk(k, q, "pending");
        mz_add(c->m, k, c->a[i].s, c->a[i].n, 0);
    }
    hold(c->m, q, p->s, p->n, pay->s, pay->n, (int64_t)n);
    mr_int(c->r, (int64_t)n);
    return EMQ_OK;
}

/* T4.1 step 6 / after T4.3: set_policy(q, id, policy) */
int mv_set_policy(mcall *c)
{
    mr_int(c->r, policy_write(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n,
                              ARG(c, 2)->s, ARG(c, 2)->n));
    return EMQ_OK;
}

/* T4.2 hold_parent(q, parent, payload, n) */
int mv_hold_parent(mcall *c)
{
    if (hold(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, ARG(c, 2)->s,
             ARG(c, 2)->n, ARG(c, 3)->i) == EMQ_EKIND)
        return mc_err(c, EMQ_EKIND, MSG_KIND);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T4.3 flow_child(cq, child, payload, parent, pq) */
int mv_flow_child(mcall *c)
{
    if (child(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, ARG(c, 2)->s,
              ARG(c, 2)->n, ARG(c, 3)->s, ARG(c, 3)->n, ARG(c, 4)->s,
              ARG(c, 4)->n) == EMQ_EKIND)
        return mc_err(c, EMQ_EKIND, MSG_KIND);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T4.5 set_link(q, id, parent, parent_queue | none, policy): the number
 * of fields the write created */
static int link_write(emq_model *m, const char *q, const void *id, size_t n,
                      const void *p, size_t pn, const void *pq, size_t pqn,
                      const void *pol, size_t pl)
{
    char j[KMAX];
    int created;
    jk(j, q, id, n, NULL);
    created = mh_sets(m, j, "parent", p, pn);
    if (pq) created += mh_sets(m, j, "parent_queue", pq, pqn);
    return created + mh_sets(m, j, "parent_policy", pol, pl);
}

int mv_set_link(mcall *c)
{
    const marg *pq = ARG(c, 3);
    mr_int(c->r, link_write(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n,
                            ARG(c, 2)->s, ARG(c, 2)->n,
                            pq->present ? pq->s : NULL, pq->n, ARG(c, 4)->s,
                            ARG(c, 4)->n));
    return EMQ_OK;
}

static int hash_map(mcall *c, const char *sub)
{
    char k[KMAX];
    mkey *h;
    size_t i;
    jk(k, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, sub);
    mr_array(c->r, EMQ_REPLY_MAP);
    if ((h = mh_all(c->m, k)) != NULL)
        for (i = 0; i < h->hn; i++) {
            mr_push_bulk(c->r, h->h[i].f.p, h->h[i].f.n);
            mr_push_bulk(c->r, h->h[i].v.p, h->h[i].v.n);
        }
    return EMQ_OK;
}

/* T4.8 children_values(q, parent) */
int mv_children_values(mcall *c)
{
    return hash_map(c, "processed");
}

/* T4.8 ignored_failures(q, parent) */
int mv_ignored_failures(mcall *c)
{
    return hash_map(c, "unsuccessful");
}

/* T4.8 dependencies(q, parent): 0 when absent */
int mv_dependencies(mcall *c)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    int64_t n = 0;
    jk(k, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, "dependencies");
    if (ms_get(c->m, k, &v, &vl) && !m_parse(v, vl, &n)) n = 0;
    mr_int(c->r, n);
    return EMQ_OK;
}

/* T4.10 step 1 outbox_read(q, batch) */
int mv_outbox_read(mcall *c)
{
    char k[KMAX];
    mkey *l;
    size_t i;
    qk(k, Q(c), "flow:outbox");
    mr_array(c->r, EMQ_REPLY_ARRAY);
    if (mk_get(c->m, k, EMQ_T_LIST, 0, &l) == 1)
        for (i = 0; i < l->ln && (int64_t)i < ARG(c, 1)->i; i++)
            mr_push_bulk(c->r, l->l[i].p, l->l[i].n);
    return EMQ_OK;
}

/* T4.11 on the parent's queue */
static void deliver(emq_model *m, const char *pq, const void *p, size_t pn,
                    const void *ch, size_t chn, const void *res, size_t rn)
{
    char k[KMAX];
    jk(k, pq, p, pn, "processed");
    if (mh_setnx(m, k, ch, chn, res, rn)) t1_dep_done(m, pq, p, pn);
}

/* T4.12 on the parent's queue */
static void fail_deliver(emq_model *m, const char *pq, const void *p,
                         size_t pn, const void *ch, size_t chn,
                         const void *err, size_t en, const void *pol,
                         size_t pl)
{
    char k[KMAX];
    if (pl == 2 && memcmp(pol, "fp", 2) == 0) {
        jk(k, pq, p, pn, "failed");
        if (!mh_setnx(m, k, ch, chn, err, en)) return;
        jk(k, pq, p, pn, NULL);
        mh_sets(m, k, "state", "dead", 4);
        qk(k, pq, "dead");
        mz_add(m, k, p, pn, 0);
        qk(k, pq, "pending");
        mz_rem(m, k, p, pn);
        return;
    }
    jk(k, pq, p, pn, "unsuccessful");
    if (mh_setnx(m, k, ch, chn, err, en)) t1_dep_done(m, pq, p, pn);
}

/* T4.11 flow_deliver(q, parent, child, result) */
int mv_flow_deliver(mcall *c)
{
    deliver(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, ARG(c, 2)->s,
            ARG(c, 2)->n, ARG(c, 3)->s, ARG(c, 3)->n);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T4.12 flow_fail_deliver(q, parent, child, error, policy) */
int mv_flow_fail_deliver(mcall *c)
{
    fail_deliver(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, ARG(c, 2)->s,
                 ARG(c, 2)->n, ARG(c, 3)->s, ARG(c, 3)->n, ARG(c, 4)->s,
                 ARG(c, 4)->n);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T4.14 reemit(q, id, error): the outbox length, nil without a parent */
int mv_reemit(mcall *c)
{
    int64_t n = t4_reemit(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n,
                          ARG(c, 2)->s, ARG(c, 2)->n);
    if (n > 0) mr_int(c->r, n);
    return EMQ_OK;
}

/* T4.10 step 3 outbox_trim(q, n) */
int mv_outbox_trim(mcall *c)
{
    char k[KMAX];
    qk(k, Q(c), "flow:outbox");
    ml_trim(c->m, k, ARG(c, 1)->i, -1);
    mr_status(c->r, "OK");
    return EMQ_OK;
}

/* --------------------------------------------------------- the sweep */

/* Cut `want` NUL-terminated fields off p[0..n): their starts/lengths, and
 * the remainder; 0 when there are fewer separators. */
static int cut(const unsigned char *p, size_t n, int want,
               const unsigned char **f, size_t *fl,
               const unsigned char **rest, size_t *rl)
{
    int i;
    for (i = 0; i < want; i++) {
        const unsigned char *z = memchr(p, 0, n);
        if (z == NULL) return 0;
        f[i] = p;
        fl[i] = (size_t)(z - p);
        n -= fl[i] + 1;
        p = z + 1;
    }
    *rest = p;
    *rl = n;
    return 1;
}

/* DELIVER(entry) of T4.10: 1 delivered, 0 not (the pass stops). */
static int deliver_entry(emq_model *m, const mbs *e)
{
    const unsigned char *f[5], *rest;
    size_t fl[5], rl;
    char pq[KMAX], j[KMAX];
    const unsigned char *v;
    size_t vl;
    int fail = e->n > 0 && e->p[0] == 0, was_dead, dead;
    if (fail) {
        if (!cut(e->p + 1, e->n - 1, 5, f, fl, &rest, &rl) || fl[0] != 4 ||
            memcmp(f[0], "fail", 4) != 0)
            return 0;
        f[0] = f[1], fl[0] = fl[1];   /* parent_queue, parent, child, pol */
        f[1] = f[2], fl[1] = fl[2];
        f[2] = f[3], fl[2] = fl[3];
        f[3] = f[4], fl[3] = fl[4];
    } else if (!cut(e->p, e->n, 3, f, fl, &rest, &rl)) {
        return 0;
    }
    if (!m_id_valid(f[1], fl[1]) || !m_queue_valid(f[0], fl[0])) return 0;
    snprintf(pq, sizeof pq, "%.*s", (int)fl[0], (const char *)f[0]);
    if (!fail) {
        deliver(m, pq, f[1], fl[1], f[2], fl[2], rest, rl);
        return 1;
    }
    jk(j, pq, f[1], fl[1], NULL);
    was_dead = mh_get(m, j, "state", 5, &v, &vl) && vl == 4 &&
               memcmp(v, "dead", 4) == 0;
    fail_deliver(m, pq, f[1], fl[1], f[2], fl[2], rest, rl, f[3], fl[3]);
    dead = mh_get(m, j, "state", 5, &v, &vl) && vl == 4 &&
           memcmp(v, "dead", 4) == 0;
    if (!was_dead && dead) t4_reemit(m, pq, f[1], fl[1], rest, rl);
    return 1;
}

int64_t t4_deliver_all(emq_model *m, const char *q, int64_t batch)
{
    char k[KMAX];
    mkey *l;
    mbs *es = NULL;
    size_t n = 0, i;
    int64_t d = 0;
    qk(k, q, "flow:outbox");
    if (mk_get(m, k, EMQ_T_LIST, 0, &l) == 1) {
        n = l->ln < (size_t)batch ? l->ln : (size_t)batch;
        es = calloc(n ? n : 1, sizeof *es);
        if (es == NULL) abort();
        for (i = 0; i < n; i++) es[i] = mb_dup(l->l[i].p, l->l[i].n);
    }
    for (i = 0; i < n && deliver_entry(m, &es[i]); i++) d++;
    if (d > 0) ml_trim(m, k, d, -1);
    mb_free_list(es, n);
    return d;
}

/* T4.10 deliver_flow_completions(C, batch) */
int mv_deliver_flow_completions(mcall *c)
{
    mr_int(c->r, t4_deliver_all(c->m, Q(c), ARG(c, 1)->i));
    return EMQ_OK;
}

/* ------------------------------------------------------------ flow_add */

typedef struct fnode {
    mbs id, payload;
    char queue[160];
    int pid;                 /* ignore_dependency_on_failure              */
    struct fnode *kids;
    size_t nk;
} fnode;

static void fnode_free(fnode *n)
{
    size_t i;
    for (i = 0; i < n->nk; i++) fnode_free(&n->kids[i]);
    free(n->kids);
    free(n->id.p);
    free(n->payload.p);
}

/* The host gates over every node (GATE-Q of its queue, GATE-ID). */
static int gate_ids(const fnode *n)
{
    size_t i;
    int rc;
    if (!m_queue_valid(n->queue, strlen(n->queue))) return EMQ_EQUEUE;
    if (!m_id_valid(n->id.p, n->id.n)) return EMQ_EID;
    for (i = 0; i < n->nk; i++)
        if ((rc = gate_ids(&n->kids[i])) != 0) return rc;
    return 0;
}

typedef struct seen {
    const mbs **v;
    size_t n;
} seen;

/* T4.5's validation, depth first in spec order: the level, a repeated id,
 * the id gate. 0, or a refusal written to `msg`, or a gate code. */
static int validate(const fnode *n, int level, seen *s, char *msg,
                    size_t cap)
{
    size_t i;
    int rc;
    if (level > 8) {
        snprintf(msg, cap, "flow_too_deep(8)");
        return EMQ_EREFUSED;
    }
    for (i = 0; i < s->n; i++)
        if (mb_eq(s->v[i], n->id.p, n->id.n)) {
            snprintf(msg, cap, "flow_cycle(%.*s)", (int)n->id.n,
                     (const char *)n->id.p);
            return EMQ_EREFUSED;
        }
    s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
    if (s->v == NULL) abort();
    s->v[s->n++] = &n->id;
    if (!m_queue_valid(n->queue, strlen(n->queue))) return EMQ_EQUEUE;
    if (!m_id_valid(n->id.p, n->id.n)) return EMQ_EID;
    for (i = 0; i < n->nk; i++)
        if ((rc = validate(&n->kids[i], level + 1, s, msg, cap)) != 0)
            return rc;
    return 0;
}

static const char *pol_of(const fnode *n)
{
    return n->pid ? "id" : "fp";
}

/* A leaf: T4.3 on its queue (pq empty when it is its parent's), then its
 * policy. EMQ_EKIND or 1. */
static int land_leaf(emq_model *m, const fnode *n, const fnode *parent)
{
    const char *pq = strcmp(parent->queue, n->queue) ? parent->queue : "";
    if (child(m, n->queue, n->id.p, n->id.n, n->payload.p, n->payload.n,
              parent->id.p, parent->id.n, pq, strlen(pq)) == EMQ_EKIND)
        return EMQ_EKIND;
    policy_write(m, n->queue, n->id.p, n->id.n, pol_of(n), 2);
    return 1;
}

/* Make `r` the result [id, []] of node `n`; the inner array. */
static emq_reply *result_of(emq_reply *r, const fnode *n)
{
    emq_reply *kids;
    mr_array(r, EMQ_REPLY_ARRAY);
    mr_push_bulk(r, n->id.p, n->id.n);
    kids = mr_push(r);
    mr_array(kids, EMQ_REPLY_ARRAY);
    return kids;
}

/* Land a nested tree (T4.5) parent first; the result [id, [kids...]] in
 * `r`. EMQ_EKIND stops it. */
static int land_tree(emq_model *m, const fnode *n, const fnode *parent,
                     emq_reply *r)
{
    emq_reply *kids;
    size_t i;
    int rc;
    const char *pq = parent && strcmp(parent->queue, n->queue) != 0
                         ? parent->queue : "";
    if (n->nk > 0) {
        if (hold(m, n->queue, n->id.p, n->id.n, n->payload.p, n->payload.n,
                 (int64_t)n->nk) == EMQ_EKIND)
            return EMQ_EKIND;
        if (parent)
            link_write(m, n->queue, n->id.p, n->id.n, parent->id.p,
                       parent->id.n, pq[0] ? pq : NULL, strlen(pq),
                       pol_of(n), 2);
    } else if (land_leaf(m, n, parent) == EMQ_EKIND) {
        return EMQ_EKIND;
    }
    kids = result_of(r, n);
    for (i = 0; i < n->nk; i++)
        if ((rc = land_tree(m, &n->kids[i], n, mr_push(kids))) != 0)
            return rc;
    return 0;
}

/* One flow: T4.1 (flat, one queue), T4.4 (flat, a child elsewhere) or
 * T4.5 (nested). The result in `r` (an error or a refusal on failure). */
static int add_flow(mcall *c, const fnode *root, emq_reply *r)
{
    emq_model *m = c->m;
    const char *q = root->queue;
    char msg[200];
    size_t i;
    int nested = 0, cross = 0, rc;
    emq_reply *kids;
    for (i = 0; i < root->nk; i++) {
        nested |= root->kids[i].nk > 0;
        cross |= strcmp(root->kids[i].queue, q) != 0;
    }
    if (nested) {
        seen s = {NULL, 0};
        rc = validate(root, 1, &s, msg, sizeof msg);
        free(s.v);
        if (rc == EMQ_EREFUSED) {
            mcall t = *c;
            t.r = r;
            return mc_refuse(&t, msg);
        }
        if (rc) return rc;
        if ((rc = land_tree(m, root, NULL, r)) == EMQ_EKIND) goto kind;
        return EMQ_OK;
    }
    if ((rc = gate_ids(root)) != 0) return rc;
    if (!cross) {
        if (!m_is_job(root->id.p, root->id.n)) goto kind;
        for (i = 0; i < root->nk; i++)
            if (!m_is_job(root->kids[i].id.p, root->kids[i].id.n)) goto kind;
        for (i = 0; i < root->nk; i++) {
            const fnode *k = &root->kids[i];
            char j[KMAX], pk[KMAX];
            jk(j, q, k->id.p, k->id.n, NULL);
            mh_sets(m, j, "state", "pending", 7);
            mh_sets(m, j, "attempts", "0", 1);
            mh_sets(m, j, "payload", k->payload.p, k->payload.n);
            mh_sets(m, j, "parent", root->id.p, root->id.n);
            qk(pk, q, "pending");
            mz_add(m, pk, k->id.p, k->id.n, 0);
        }
        hold(m, q, root->id.p, root->id.n, root->payload.p, root->payload.n,
             (int64_t)root->nk);
        for (i = 0; i < root->nk; i++)
            policy_write(m, q, root->kids[i].id.p, root->kids[i].id.n,
                         pol_of(&root->kids[i]), 2);
    } else {
        if (hold(m, q, root->id.p, root->id.n, root->payload.p,
                 root->payload.n, (int64_t)root->nk) == EMQ_EKIND)
            goto kind;
        for (i = 0; i < root->nk; i++)
            if (land_leaf(m, &root->kids[i], root) == EMQ_EKIND) goto kind;
    }
    kids = result_of(r, root);
    for (i = 0; i < root->nk; i++)
        mr_push_bulk(kids, root->kids[i].id.p, root->kids[i].id.n);
    return EMQ_OK;
kind: {
        mcall t = *c;
        t.r = r;
        return mc_err(&t, EMQ_EKIND, MSG_KIND);
    }
}

/* The flow tail (level, id, payload, queue, policy per node, pre-order;
 * the model's own reading of the registry's flat form) as trees: levels
 * start at 1 and grow by at most 1, a root (level 1) sits in q, `one`
 * allows a single root. EMQ_EINVAL for a tail that is not such a list. */
static int parse_tail(mcall *c, int one, fnode **roots, size_t *nroots)
{
    size_t n = (c->argc - c->nfixed) / 5, i, nr = 0;
    fnode *path[10];
    int64_t prev = 0;
    *roots = calloc(n ? n : 1, sizeof **roots);
    if (*roots == NULL) abort();
    for (i = 0; i < n; i++) {
        const marg *g = &c->a[c->nfixed + 5 * i];
        int64_t lv = g[0].i;
        fnode *x, *parent;
        if (lv > prev + 1 || (i == 0 && lv != 1) ||
            (lv == 1 && (strcmp(g[3].s, Q(c)) != 0 || (one && i > 0))))
            goto bad;
        prev = lv;
        if (lv > 9) continue;  /* below level 9: the tree is refused anyway */
        if (lv == 1) {
            x = &(*roots)[nr++];
        } else {
            parent = path[lv - 2];
            parent->kids = realloc(parent->kids,
                                   (parent->nk + 1) * sizeof *parent->kids);
            if (parent->kids == NULL) abort();
            x = &parent->kids[parent->nk++];
        }
        memset(x, 0, sizeof *x);
        x->id = mb_dup(g[1].s, g[1].n);
        x->payload = mb_dup(g[2].s, g[2].n);
        snprintf(x->queue, sizeof x->queue, "%s", g[3].s);
        x->pid = g[4].i == 1;
        /* the current branch: a kids array grows only when a sibling is
         * added, which replaces the entry that pointed into it */
        path[lv - 1] = x;
    }
    *nroots = nr;
    return EMQ_OK;
bad:
    *nroots = nr;
    return EMQ_EINVAL;   /* a host refusal: no reply */
}

/* T4.1 / T4.4 / T4.5 flow_add(q, flow as the tail) */
int mv_flow_add(mcall *c)
{
    fnode *roots;
    size_t n, i;
    int rc = parse_tail(c, 1, &roots, &n);
    if (rc == EMQ_OK) rc = add_flow(c, &roots[0], c->r);
    for (i = 0; i < n; i++) fnode_free(&roots[i]);
    free(roots);
    return rc;
}

/* T4.6 add_bulk(q, flows as the tail): every id gated first; the flows
 * that land */
int mv_add_bulk(mcall *c)
{
    fnode *roots;
    size_t n, i;
    int rc = parse_tail(c, 0, &roots, &n);
    for (i = 0; rc == EMQ_OK && i < n; i++) rc = gate_ids(&roots[i]);
    if (rc == EMQ_OK) {
        mr_array(c->r, EMQ_REPLY_ARRAY);
        for (i = 0; i < n; i++) {
            emq_reply one = {0};
            if (add_flow(c, &roots[i], &one) >= 0) *mr_push(c->r) = one;
            else model_reply_free(&one);
        }
    }
    for (i = 0; i < n; i++) fnode_free(&roots[i]);
    free(roots);
    return rc;
}
