/*
 * flowproc.c — the flow procedures of PROTOCOL.md §6.4: flow_add (T4.1 with
 * its policies; T4.4 cross-queue and T4.5 nested, [multi-tx]), add_bulk
 * (T4.6), flow_recover (finishing what a crash cut), and the typed call
 * that adds a flow described as a tree of emq_flow_node.
 *
 * A flow travels as a flat pre-order list of nodes, the registry's
 * repeated tail (level, id, payload, queue, policy): a root (the parent) at
 * level 1, each child one level below the node before it that is one level
 * up; `queue` is the node's own queue (resolved: its parent's unless it
 * names another); `policy` is the node's parent_policy (ignored on a root).
 *
 * The plan. A flow is nested (T4.5) when any node sits at level 3 or
 * deeper, cross-queue (T4.4) when not nested and a child's queue differs
 * from the root's, flat (T4.1) otherwise. A flat flow is one step (T4.1 and
 * every child's parent_policy). A cross or nested flow is one step per node
 * in pre-order: a node with children is held (T4.2, and below the root its
 * link: parent, parent_queue when the queues differ, parent_policy), a leaf
 * is admitted (T4.3 with parent_queue when its queue differs from its
 * parent's, and its parent_policy). Each step is one transaction: the
 * reference's separate policy and link writes are folded into the step that
 * creates the row, so no cut leaves a node unlinked. Host validation of a
 * nested tree (level > 8: flow_too_deep(8); an id seen before:
 * flow_cycle(id)) and KIND are pure functions of the ids, so the plan knows
 * before any write where a flow stops: a refused flat flow writes nothing,
 * a cross or nested one lands the nodes before the first non-JOB id (its
 * held ancestors stay held: fail-closed) and answers EMQKIND.
 *
 * Crash safety. A plan of more than one step is journaled (storage/
 * journal.h): its first transaction writes the journal row (the nodes and
 * next = 1) with the first step, each later step checks and advances
 * `next` in its own transaction, the last one deletes the row. A process
 * killed between two steps leaves the row, and flow_recover (any handle,
 * any time) lands the remaining steps exactly as the interrupted call
 * would have; a step never runs twice because its transaction re-reads
 * `next` (a recovery racing a live add only takes steps off its hands).
 * doc/FLOWS.md lists the cut points.
 */
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "flow.h"
#include "journal.h"

/* -------------------------------------------------------------- hook */

static emq_proc_hook_fn hook_fn;
static void *hook_ctx;

void emq_proc_set_hook(emq_proc_hook_fn fn, void *ctx)
{
    hook_fn = fn;
    hook_ctx = ctx;
}

void emq_proc_hook(const char *proc, int64_t step)
{
    if (hook_fn) hook_fn(hook_ctx, proc, step);
}

/* ------------------------------------------------------------- nodes */

#define MAX_LEVEL 8          /* PROTOCOL.md Appendix C: root = 1 */
#define GROUP 5              /* the tail: level, id, payload, queue, policy */
#define BODY_VERSION 1

typedef struct fnode {
    int64_t level;
    const char *id;          /* 14 bytes + NUL, inside the body           */
    const char *q;           /* NUL-terminated, inside the body           */
    const void *payload;
    size_t plen;
    int policy;              /* 0 fp, 1 id                                */
    size_t parent;           /* index of the parent node (roots: itself)  */
    size_t nkids;
} fnode;

enum { ST_FLAT, ST_HOLD, ST_CHILD };

typedef struct fstep {
    int kind;
    size_t node;             /* FLAT: the root; its children follow it    */
    size_t end;              /* FLAT: one past the flow's last node       */
} fstep;

typedef struct fflow {
    size_t root, end;        /* nodes [root, end)                         */
    int nested;
    int rc;                  /* EMQ_OK, EMQ_EKIND or EMQ_EREFUSED         */
    char msg[40];            /* the refusal's text                        */
} fflow;

typedef struct fplan {
    emq_buf body;            /* the encoded nodes (the journal's body)    */
    fnode *n;
    size_t nn;
    fflow *f;
    size_t nf;
    fstep *s;
    size_t ns;
} fplan;

static void plan_free(fplan *p)
{
    emq_buf_free(&p->body);
    emq_mem_free(p->n);
    emq_mem_free(p->f);
    emq_mem_free(p->s);
    memset(p, 0, sizeof *p);
}

static int put_u32(emq_buf *b, uint64_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                          (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    return emq_buf_append(b, x, 4);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/*
 * The body: a version byte, the node count, then per node its level,
 * policy byte, 14-byte id and NUL, queue length, queue and NUL, payload
 * length and payload (integers 4 bytes little-endian).
 */
static int encode(emq_buf *b, const emq_varg *a, size_t nnodes)
{
    size_t i;
    int rc = emq_buf_append(b, (unsigned char[]){BODY_VERSION}, 1);
    if (rc >= 0) rc = put_u32(b, nnodes);
    for (i = 0; rc >= 0 && i < nnodes; i++) {
        const emq_varg *g = &a[GROUP * i];
        unsigned char pol = (unsigned char)g[4].i;
        if ((rc = put_u32(b, (uint64_t)g[0].i)) < 0 ||
            (rc = emq_buf_append(b, &pol, 1)) < 0 ||
            (rc = emq_buf_append(b, g[1].s, EMQ_ID_LEN + 1)) < 0 ||
            (rc = put_u32(b, g[3].n)) < 0 ||
            (rc = emq_buf_append(b, g[3].s, g[3].n + 1)) < 0 ||
            (rc = put_u32(b, g[2].n)) < 0)
            break;
        rc = emq_buf_append(b, g[2].n ? g[2].s : "", g[2].n);
    }
    return rc;
}

/* Decode p->body into p->n (views into the body). EMQ_ECORRUPT when it is
 * not a body this file wrote. */
static int decode(fplan *p)
{
    const unsigned char *b = p->body.p, *end = b + p->body.len;
    size_t i, ql, pl;
    if (p->body.len < 5 || b[0] != BODY_VERSION) return EMQ_ECORRUPT;
    p->nn = get_u32(b + 1);
    b += 5;
    if (p->nn > p->body.len) return EMQ_ECORRUPT;
    if ((p->n = emq_mem_calloc(p->nn + 1, sizeof *p->n)) == NULL)
        return EMQ_ENOMEM;
    for (i = 0; i < p->nn; i++) {
        fnode *x = &p->n[i];
        if (end - b < 4 + 1 + EMQ_ID_SIZE + 4) return EMQ_ECORRUPT;
        x->level = get_u32(b);
        x->policy = b[4] != 0;
        x->id = (const char *)b + 5;
        b += 5 + EMQ_ID_SIZE;
        ql = get_u32(b);
        b += 4;
        if ((size_t)(end - b) < ql + 1 + 4 || b[ql] != 0 ||
            x->id[EMQ_ID_LEN] != 0 || !emq_id_valid(x->id) ||
            !emq_queue_valid((const char *)b))
            return EMQ_ECORRUPT;
        x->q = (const char *)b;
        b += ql + 1;
        pl = get_u32(b);
        b += 4;
        if ((size_t)(end - b) < pl) return EMQ_ECORRUPT;
        x->payload = b;
        x->plen = pl;
        b += pl;
    }
    return b == end ? EMQ_OK : EMQ_ECORRUPT;
}

/* ---------------------------------------------------------------- plan */

static int is_job(const fnode *x)
{
    return emq_is_job_kind(x->id, EMQ_ID_LEN);
}

/* The parents and child counts, and the flows. */
static int shape(fplan *p)
{
    size_t i, *path;
    if ((path = emq_mem_calloc(p->nn + 1, sizeof *path)) == NULL ||
        (p->f = emq_mem_calloc(p->nn + 1, sizeof *p->f)) == NULL) {
        emq_mem_free(path);
        return EMQ_ENOMEM;
    }
    for (i = 0; i < p->nn; i++) {
        fnode *x = &p->n[i];
        if (x->level < 1 || x->level > (i ? p->n[i - 1].level + 1 : 1)) {
            emq_mem_free(path); /* not a pre-order list: not our body */
            return EMQ_ECORRUPT;
        }
        if (x->level == 1) {
            if (p->nf) p->f[p->nf - 1].end = i;
            p->f[p->nf++].root = i;
            x->parent = i;
        } else {
            x->parent = path[x->level - 2];
            p->n[x->parent].nkids++;
        }
        path[x->level - 1] = i;
    }
    if (p->nf) p->f[p->nf - 1].end = p->nn;
    emq_mem_free(path);
    return EMQ_OK;
}

/* Steps never outnumber nodes: p->s has room for p->nn. */
static void add_step(fplan *p, int kind, size_t node, size_t end)
{
    p->s[p->ns].kind = kind;
    p->s[p->ns].node = node;
    p->s[p->ns].end = end;
    p->ns++;
}

/* T4.5's host validation of a nested flow, depth first in spec order. */
static void validate(const fplan *p, fflow *f)
{
    size_t i, j;
    for (i = f->root; i < f->end; i++) {
        if (p->n[i].level > MAX_LEVEL) {
            f->rc = EMQ_EREFUSED;
            memcpy(f->msg, "flow_too_deep(8)", 17);
            return;
        }
        for (j = f->root; j < i; j++)
            if (memcmp(p->n[j].id, p->n[i].id, EMQ_ID_LEN) == 0) {
                f->rc = EMQ_EREFUSED;
                memcpy(f->msg, "flow_cycle(", 11);
                memcpy(f->msg + 11, p->n[i].id, EMQ_ID_LEN);
                memcpy(f->msg + 11 + EMQ_ID_LEN, ")", 2);
                return;
            }
    }
}

/* The steps of flow f (see the file comment). */
static void plan_flow(fplan *p, fflow *f)
{
    size_t i;
    int cross = 0;
    for (i = f->root + 1; i < f->end; i++) {
        if (p->n[i].level >= 3) f->nested = 1;
        if (strcmp(p->n[i].q, p->n[f->root].q) != 0) cross = 1;
    }
    if (f->nested) validate(p, f);
    if (f->rc != EMQ_OK) return;
    if (!f->nested && !cross) {
        for (i = f->root; i < f->end; i++)
            if (!is_job(&p->n[i])) {
                f->rc = EMQ_EKIND;
                return;
            }
        add_step(p, ST_FLAT, f->root, f->end);
        return;
    }
    for (i = f->root; i < f->end; i++) {
        if (!is_job(&p->n[i])) {
            f->rc = EMQ_EKIND;
            break;
        }
        add_step(p, p->n[i].nkids ? ST_HOLD : ST_CHILD, i, 0);
    }
}

static int plan_make(fplan *p)
{
    size_t i;
    int rc;
    if ((rc = decode(p)) < 0 || (rc = shape(p)) < 0) return rc;
    if ((p->s = emq_mem_calloc(p->nn + 1, sizeof *p->s)) == NULL)
        return EMQ_ENOMEM;
    for (i = 0; i < p->nf; i++) plan_flow(p, &p->f[i]);
    return EMQ_OK;
}

/* The gated arguments (after the fixed `q`) as nodes: the levels must
 * describe a pre-order list of trees, every root in q (`one`: a single
 * tree). */
static int plan_args(emq_db *db, const emq_varg *a, size_t n, const char *q,
                     int one, fplan *p)
{
    size_t i, nn = n / GROUP;
    int64_t prev = 0;
    int rc;
    memset(p, 0, sizeof *p);
    for (i = 0; i < nn; i++) {
        const emq_varg *g = &a[GROUP * i];
        if (g[0].i > prev + 1 || (i == 0 && g[0].i != 1))
            return emq_db_wire(db, EMQ_EINVAL, "bad argument: flow.level "
                               "must start at 1 and grow by at most 1 from "
                               "one node to the next (a pre-order list)");
        if (g[0].i == 1 && strcmp(g[3].s, q) != 0)
            return emq_db_wire(db, EMQ_EINVAL, "bad argument: flow.queue of "
                               "a root (level 1) must be the queue q");
        if (g[0].i == 1 && one && i > 0)
            return emq_db_wire(db, EMQ_EINVAL, "bad argument: flow.level: a "
                               "flow has one root (add_bulk adds several)");
        prev = g[0].i;
    }
    if ((rc = encode(&p->body, a, nn)) < 0 || (rc = plan_make(p)) < 0) {
        plan_free(p);
        return emq_db_fail(db, rc, NULL);
    }
    return EMQ_OK;
}

/* --------------------------------------------------------------- steps */

/* One step of a plan in its own transaction. */
typedef struct step_ctx {
    const fplan *p;
    const char *proc;
    size_t k;                /* the step                                  */
    int64_t jid;             /* the journal row (journaled plans)         */
    size_t ran;              /* out: steps this call took (not skipped)   */
} step_ctx;

static int write_policy(emq_store *st, const fnode *x)
{
    emq_bytes fv[2] = {{"parent_policy", 13}, {emq_fl_policy(x->policy), 2}};
    int added;
    return emq_fl_fields(st, x->q, x->id, fv, 1, &added);
}

static int run_flat(emq_store *st, const fplan *p, const fstep *s)
{
    const fnode *r = &p->n[s->node];
    size_t i;
    int rc = EMQ_OK;
    for (i = s->node + 1; rc >= 0 && i < s->end; i++)
        rc = emq_fl_child(st, r->q, p->n[i].id, p->n[i].payload,
                          p->n[i].plen, r->id, NULL);
    if (rc >= 0)
        rc = emq_fl_hold(st, r->q, r->id, r->payload, r->plen,
                         (int64_t)(s->end - s->node - 1));
    for (i = s->node + 1; rc >= 0 && i < s->end; i++)
        rc = write_policy(st, &p->n[i]);
    return rc;
}

static int run_node(emq_store *st, const fplan *p, const fstep *s)
{
    const fnode *x = &p->n[s->node], *up = &p->n[x->parent];
    const char *pq = strcmp(x->q, up->q) != 0 ? up->q : NULL;
    emq_bytes fv[6];
    size_t n = 0;
    int added, rc;
    if (s->kind == ST_CHILD) {
        rc = emq_fl_child(st, x->q, x->id, x->payload, x->plen, up->id, pq);
        return rc < 0 ? rc : write_policy(st, x);
    }
    rc = emq_fl_hold(st, x->q, x->id, x->payload, x->plen,
                     (int64_t)x->nkids);
    if (rc < 0 || x->level == 1) return rc;
    fv[n].p = "parent";
    fv[n++].n = 6;
    fv[n].p = up->id;
    fv[n++].n = EMQ_ID_LEN;
    if (pq) {
        fv[n].p = "parent_queue";
        fv[n++].n = 12;
        fv[n].p = pq;
        fv[n++].n = strlen(pq);
    }
    fv[n].p = "parent_policy";
    fv[n++].n = 13;
    fv[n].p = emq_fl_policy(x->policy);
    fv[n++].n = 2;
    return emq_fl_fields(st, x->q, x->id, fv, n / 2, &added);
}

static int step_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    step_ctx *c = ctx;
    const fstep *s = &c->p->s[c->k];
    int64_t next;
    int journaled = c->p->ns > 1, rc;
    (void)db;
    (void)now;
    if (journaled && c->k > 0) {
        rc = emq_journal_next(st, c->jid, &next);
        if (rc < 0) return rc;
        if (rc == EMQ_NOTFOUND || next != (int64_t)c->k)
            return EMQ_OK; /* another handle took this step */
    }
    rc = s->kind == ST_FLAT ? run_flat(st, c->p, s) : run_node(st, c->p, s);
    if (rc < 0) return rc;
    c->ran++;
    if (!journaled) return rc;
    if (c->k == 0)
        return emq_journal_add(st, c->proc, c->p->body.p, c->p->body.len, 1,
                               &c->jid);
    if (c->k + 1 == c->p->ns) return emq_journal_end(st, c->jid);
    return emq_journal_set(st, c->jid, (int64_t)c->k + 1);
}

/* Run the steps of p from `from` (journal row jid when from > 0).
 * Returns the number of steps this call took itself, or a failure. */
static int run_plan(emq_db *db, const fplan *p, const char *proc,
                    size_t from, int64_t jid)
{
    step_ctx c = {p, proc, from, jid, 0};
    int rc;
    for (; c.k < p->ns; c.k++) {
        if ((rc = emq_db_run(db, 1, step_tx, &c)) < 0) return rc;
        emq_proc_hook(proc, (int64_t)c.k + 1);
    }
    return c.ran > INT32_MAX ? INT32_MAX : (int)c.ran;
}

/* ------------------------------------------------------------- replies */

static int push_id(emq_reply *r, const fnode *x)
{
    return emq_reply_push_bulk(r, x->id, EMQ_ID_LEN);
}

/* A nested flow's result into e: [id, [child result, ...]] for node i. */
static int reply_nested(emq_reply *e, const fplan *p, size_t i, size_t end)
{
    emq_reply *kids;
    size_t j;
    int rc;
    if ((rc = emq_reply_array(e, EMQ_REPLY_ARRAY, 2)) < 0 ||
        (rc = push_id(e, &p->n[i])) < 0)
        return rc;
    if ((kids = emq_reply_push(e)) == NULL) return EMQ_ENOMEM;
    if ((rc = emq_reply_array(kids, EMQ_REPLY_ARRAY, 0)) < 0) return rc;
    for (j = i + 1; j < end && p->n[j].level > p->n[i].level; j++) {
        emq_reply *k;
        if (p->n[j].parent != i) continue;
        if ((k = emq_reply_push(kids)) == NULL) return EMQ_ENOMEM;
        if ((rc = reply_nested(k, p, j, end)) < 0) return rc;
    }
    return EMQ_OK;
}

/* Flow f's result into e: [parent, [child, ...]] for a flat or cross-queue
 * flow, the nested form for a tree. */
static int reply_flow(emq_reply *e, const fplan *p, const fflow *f)
{
    emq_reply *kids;
    size_t j;
    int rc;
    if (f->nested) return reply_nested(e, p, f->root, f->end);
    if ((rc = emq_reply_array(e, EMQ_REPLY_ARRAY, 2)) < 0 ||
        (rc = push_id(e, &p->n[f->root])) < 0)
        return rc;
    if ((kids = emq_reply_push(e)) == NULL) return EMQ_ENOMEM;
    if ((rc = emq_reply_array(kids, EMQ_REPLY_ARRAY, f->end - f->root)) < 0)
        return rc;
    for (j = f->root + 1; j < f->end; j++)
        if ((rc = push_id(kids, &p->n[j])) < 0) return rc;
    return EMQ_OK;
}

/* --------------------------------------------------------- procedures */

/*
 * flow_add(q, [(level, id, payload, queue, policy)...]) — T4.1 / T4.4 /
 * T4.5: add one flow (a root at level 1 in q and its tree, pre-order).
 * Keys: the rows, dependencies and pending sets of every node's queue
 * (T4.2, T4.3), and the procedure journal for a plan of several steps.
 * Transactions: one for a flat flow (T4.1 with its policies); one per node
 * for a cross-queue or nested one (see the file comment).
 * Replies: [parent, [child, ...]] (flat, cross-queue) or the nested
 * [id, [[child, [...]], ...]] (a tree) (EMQ_OK) · "EMQKIND job id must be
 * JOB-namespaced" (EMQ_EKIND: a flat flow wrote nothing; a cross or nested
 * one landed the nodes before the refused one) · flow_too_deep(8) /
 * flow_cycle(<id>) (EMQ_EREFUSED, nothing written) · a failure after the
 * first transaction leaves the add journaled for flow_recover. Clock: none.
 */
int emq_v_flow_add(emq_vctx *c)
{
    fplan p;
    const fflow *f;
    int rc = plan_args(c->db, c->a + 1, c->argc - 1, c->a[0].s, 1, &p);
    if (rc < 0) return rc;
    /* The reply is known from the plan: built first, so that running out
     * of memory for it writes nothing. */
    f = &p.f[0];
    if (f->rc == EMQ_OK && (rc = reply_flow(c->r, &p, f)) < 0)
        rc = emq_db_fail(c->db, rc, NULL);
    else if ((rc = run_plan(c->db, &p, "flow_add", 0, 0)) >= 0)
        rc = f->rc == EMQ_OK ? EMQ_OK
             : emq_db_wire(c->db, f->rc, f->rc == EMQ_EKIND ? EMQ_MSG_KIND
                                                            : f->msg);
    plan_free(&p);
    return rc;
}

/*
 * add_bulk(q, [(level, id, payload, queue, policy)...]) — T4.6: every id of
 * every flow is gated before any write (by the registry); then each flow
 * (a root at level 1, in q) is added as flow_add adds it, in input order; a
 * refused flow is left out of the reply and does not stop the rest.
 * Keys, transactions and crash safety: flow_add's, one journal row for the
 * whole bulk when it takes several steps. Reply: the results of the flows
 * that landed, in input order (EMQ_OK); a typed caller's c->out (int[])
 * receives each flow's verdict (EMQ_OK, EMQ_EKIND, EMQ_EREFUSED).
 * Clock: none.
 */
int emq_v_add_bulk(emq_vctx *c)
{
    fplan p;
    size_t i;
    int *verdicts = c->out;
    int rc = plan_args(c->db, c->a + 1, c->argc - 1, c->a[0].s, 0, &p);
    if (rc < 0) return rc;
    /* The reply first (see flow_add), then the steps. */
    rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, p.nf);
    for (i = 0; rc >= 0 && i < p.nf; i++) {
        emq_reply *e;
        if (p.f[i].rc != EMQ_OK) continue;
        rc = (e = emq_reply_push(c->r)) ? reply_flow(e, &p, &p.f[i])
                                        : EMQ_ENOMEM;
    }
    if (rc < 0) rc = emq_db_fail(c->db, rc, NULL);
    else rc = run_plan(c->db, &p, "add_bulk", 0, 0);
    for (i = 0; rc >= 0 && verdicts && i < p.nf; i++)
        verdicts[i] = p.f[i].rc;
    plan_free(&p);
    return rc < 0 ? rc : EMQ_OK;
}

/* The journal rows of flow procedures, copied out of the read. */
typedef struct jrow {
    int64_t jid, next;
    char proc[16];
    emq_buf body;
} jrow;

typedef struct jrows {
    jrow *v;
    size_t n, cap;
} jrows;

static int jrow_cb(void *ctx, int64_t jid, const char *kind, int64_t next,
                   const unsigned char *body, size_t n)
{
    jrows *j = ctx;
    if (strcmp(kind, "flow_add") != 0 && strcmp(kind, "add_bulk") != 0)
        return 0; /* another procedure's row */
    if (j->n == j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 8;
        jrow *v = emq_mem_realloc(j->v, cap * sizeof *v);
        if (v == NULL) return EMQ_ENOMEM;
        memset(v + j->cap, 0, (cap - j->cap) * sizeof *v);
        j->v = v;
        j->cap = cap;
    }
    j->v[j->n].jid = jid;
    j->v[j->n].next = next;
    memcpy(j->v[j->n].proc, kind, strlen(kind) + 1);
    return emq_buf_set(&j->v[j->n++].body, body, n);
}

static int jscan_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    (void)db;
    (void)now;
    return emq_journal_scan(st, jrow_cb, ctx);
}

/*
 * flow_recover() — finish every flow add (flow_add, add_bulk) that a crash
 * (or a failure after its first transaction) left journaled: each lands its
 * remaining steps from the journal's `next`, exactly as the interrupted
 * call would have, in its own transactions. Keys: those of the steps.
 * Reply: the number of adds finished (EMQ_OK). A row that is not a body
 * this version wrote is EMQ_ECORRUPT. Safe to run at any time and from any
 * number of handles: a step already taken is skipped. Clock: none.
 */
int emq_v_flow_recover(emq_vctx *c)
{
    jrows j = {NULL, 0, 0};
    int64_t done = 0;
    size_t i;
    int rc = emq_db_run(c->db, 0, jscan_tx, &j);
    for (i = 0; rc >= 0 && i < j.n; i++) {
        fplan p;
        memset(&p, 0, sizeof p);
        p.body = j.v[i].body;
        memset(&j.v[i].body, 0, sizeof j.v[i].body);
        rc = plan_make(&p);
        if (rc >= 0 && (j.v[i].next < 1 || (size_t)j.v[i].next >= p.ns))
            rc = EMQ_ECORRUPT;
        if (rc < 0) {
            rc = emq_db_fail(c->db, rc, "a flow journal row does not hold "
                             "a plan this version wrote");
        } else if ((rc = run_plan(c->db, &p, j.v[i].proc,
                                  (size_t)j.v[i].next, j.v[i].jid)) > 0) {
            done++; /* not counted when another handle took every step */
        }
        plan_free(&p);
    }
    for (i = 0; i < j.cap; i++) emq_buf_free(&j.v[i].body);
    emq_mem_free(j.v);
    if (rc < 0) return rc;
    emq_reply_int(c->r, done);
    return EMQ_OK;
}

/* ----------------------------------------------------------- typed calls */

/* The registry arguments of a tree: q, then per node in pre-order the
 * five of the tail (levels rendered into `nums`). Nodes below level 9 are
 * left out: the level-9 node above them already refuses the tree. */
typedef struct targs {
    emq_varg *a;
    char (*nums)[24];
    size_t n, cap;
} targs;

static int targ_node(targs *t, const emq_flow_node *x, int64_t level,
                     const char *q)
{
    size_t i;
    emq_varg *g;
    const char *nq = x->queue ? x->queue : q;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        emq_varg *a = emq_mem_realloc(t->a, (1 + GROUP * cap) * sizeof *a);
        char (*nums)[24];
        if (a == NULL) return EMQ_ENOMEM;
        t->a = a;
        if ((nums = emq_mem_realloc(t->nums, cap * sizeof *nums)) == NULL)
            return EMQ_ENOMEM;
        t->nums = nums;
        t->cap = cap;
    }
    g = &t->a[1 + GROUP * t->n];
    g[0].i = level; /* rendered once the arrays stop moving */
    g[1] = emq_varg_str(x->id);
    g[2] = emq_varg_bytes(x->payload, x->len);
    g[3] = emq_varg_str(nq);
    g[4] = emq_varg_str(x->policy == EMQ_FLOW_ID ? "id"
                        : x->policy == EMQ_FLOW_FP ? "fp" : "?");
    t->n++;
    if (level > MAX_LEVEL) return EMQ_OK;
    if (x->n_children > 0 && x->children == NULL) return EMQ_EINVAL;
    for (i = 0; i < x->n_children; i++) {
        int rc = targ_node(t, &x->children[i], level + 1, nq);
        if (rc < 0) return rc;
    }
    return EMQ_OK;
}

static int tree_call(emq_db *db, int verb, const char *q,
                     const emq_flow_node *roots, size_t n, int *verdicts)
{
    targs t = {NULL, NULL, 0, 0};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n > 0 && roots == NULL) rc = EMQ_EINVAL;
    for (i = 0; rc >= 0 && i < n; i++) rc = targ_node(&t, &roots[i], 1, q);
    if (rc >= 0 && t.a == NULL && (t.a = emq_mem_calloc(1, sizeof *t.a)) ==
                                      NULL)
        rc = EMQ_ENOMEM;
    if (rc == EMQ_EINVAL) {
        if ((rc = emq_gate_q(db, q)) >= 0)
            rc = emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL flow node "
                             "or children");
    } else if (rc < 0) {
        rc = emq_db_fail(db, rc, NULL);
    } else {
        t.a[0] = emq_varg_str(q);
        for (i = 0; i < t.n; i++)
            t.a[1 + GROUP * i] = emq_varg_int(t.a[1 + GROUP * i].i);
        rc = emq_verb_exec(db, verb, t.a, 1 + GROUP * t.n, NULL, verdicts);
    }
    emq_mem_free(t.a);
    emq_mem_free(t.nums);
    return rc;
}

int emq_flow_add(emq_db *db, const char *q, const emq_flow_node *root)
{
    return tree_call(db, EMQ_V_FLOW_ADD, q, root, 1, NULL);
}

int emq_flow_add_bulk(emq_db *db, const char *q, const emq_flow_node *roots,
                      size_t n, int *verdicts)
{
    return tree_call(db, EMQ_V_ADD_BULK, q, roots, n, verdicts);
}

int emq_flow_recover(emq_db *db, int64_t *finished)
{
    emq_reply r = {0};
    int rc = emq_verb_exec(db, EMQ_V_FLOW_RECOVER, NULL, 0, &r, NULL);
    if (finished) *finished = rc == EMQ_OK ? r.integer : 0;
    emq_reply_clear(&r);
    return rc;
}
