/*
 * flow.c — the flow admissions of PROTOCOL.md §6.4, each one transaction:
 * T4.1 steps 1-5 enqueue_flow, T4.2 hold_parent, T4.3 flow_child, and the
 * link writes the reference issues as plain host commands (set_policy after
 * T4.1/T4.3, set_link below the root of a tree), with the store writes the
 * procedures reuse (flow.h).
 *
 * Rules: KIND of every id first, before any write (an EMQKIND writes
 * nothing); no existence check — a flow overwrites an existing row field by
 * field and leaves its other fields and set memberships (D-14).
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "flow.h"

/* ------------------------------------------------------------- helpers */

const char *emq_fl_policy(int id_policy)
{
    return id_policy ? "id" : "fp";
}

static void fv_set(emq_bytes *fv, const void *p, size_t n)
{
    fv->p = n ? p : "";
    fv->n = n;
}

int emq_fl_fields(emq_store *st, const char *q, const char *id,
                  const emq_bytes *fv, size_t n, int *added)
{
    char jk[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    return emq_hash_set(st, jk, jkl, fv, n, added);
}

/* The three core fields of an admitted row (state, attempts 0, payload)
 * into fv[0..6). */
static void core_row(emq_bytes *fv, const char *state, const void *payload,
                     size_t plen)
{
    fv_set(&fv[0], "state", 5);
    fv_set(&fv[1], state, strlen(state));
    fv_set(&fv[2], "attempts", 8);
    fv_set(&fv[3], "0", 1);
    fv_set(&fv[4], "payload", 7);
    fv_set(&fv[5], payload, plen);
}

int emq_fl_hold(emq_store *st, const char *q, const char *parent,
                const void *payload, size_t plen, int64_t n)
{
    char k[EMQ_KEY_MAX], num[24];
    size_t kl;
    emq_bytes fv[6];
    int added, rc;
    core_row(fv, "awaiting_children", payload, plen);
    if ((rc = emq_fl_fields(st, q, parent, fv, 3, &added)) < 0) return rc;
    kl = emq_key_of(k, q, EMQ_KT_JOB_DEPENDENCIES, parent, EMQ_ID_LEN);
    return emq_str_set(st, k, kl, num, emq_fmt_i64(num, n), -1, 0, NULL);
}

int emq_fl_child(emq_store *st, const char *cq, const char *child,
                 const void *payload, size_t plen, const char *parent,
                 const char *pq)
{
    char k[EMQ_KEY_MAX];
    size_t kl;
    emq_bytes fv[10];
    int added, rc;
    core_row(fv, "pending", payload, plen);
    fv_set(&fv[6], "parent", 6);
    fv_set(&fv[7], parent, EMQ_ID_LEN);
    fv_set(&fv[8], "parent_queue", 12);
    fv_set(&fv[9], pq, pq ? strlen(pq) : 0);
    if ((rc = emq_fl_fields(st, cq, child, fv, pq ? 5 : 4, &added)) < 0)
        return rc;
    kl = emq_key(k, cq, EMQ_KT_PENDING);
    return emq_zset_add(st, k, kl, child, EMQ_ID_LEN, 0, &added);
}

static int kind(emq_vctx *c, const char *id)
{
    if (emq_is_job_kind(id, strlen(id))) return EMQ_OK;
    return emq_db_wire(c->db, EMQ_EKIND, EMQ_MSG_KIND);
}

/* ---------------------------------------------------------------- verbs */

/*
 * T4.1 steps 1-5 enqueue_flow(q, parent, payload, [(child, payload)...])
 * Keys: J(p), J(p).dependencies, B.pending, J(c1), ... (all in q).
 * KIND(parent), then KIND(child) in order, before any write; each child
 * row gets state pending, attempts 0, its payload and `parent`, and joins
 * B.pending; the parent is held (awaiting_children) with dependencies N.
 * Replies: N (EMQ_OK; N = 0 holds the parent with dependencies 0) ·
 * "EMQKIND job id must be JOB-namespaced" (EMQ_EKIND). Clock: none. The
 * children's parent_policy is set_policy's (the procedure flow_add folds
 * both into one transaction).
 */
int emq_v_enqueue_flow(emq_vctx *c)
{
    const char *q = c->a[0].s, *parent = c->a[1].s;
    size_t i, n = (c->argc - 3) / 2;
    int rc;
    if ((rc = kind(c, parent)) < 0) return rc;
    for (i = 0; i < n; i++)
        if ((rc = kind(c, c->a[3 + 2 * i].s)) < 0) return rc;
    for (i = 0; i < n; i++) {
        const emq_varg *id = &c->a[3 + 2 * i], *p = id + 1;
        if ((rc = emq_fl_child(c->st, q, id->s, p->s, p->n, parent, NULL)) < 0)
            return rc;
    }
    rc = emq_fl_hold(c->st, q, parent, c->a[2].s, c->a[2].n, (int64_t)n);
    if (rc < 0) return rc;
    emq_reply_int(c->r, (int64_t)n);
    return EMQ_OK;
}

/*
 * T4.2 hold_parent(q, parent, payload, n >= 0)
 * Keys: J(p), J(p).dependencies. Hold the parent (state awaiting_children,
 * attempts 0, payload; no existence check) with dependencies n.
 * Replies: 1 (EMQ_OK) · EMQKIND (EMQ_EKIND). Clock: none.
 */
int emq_v_hold_parent(emq_vctx *c)
{
    int rc = kind(c, c->a[1].s);
    if (rc < 0) return rc;
    rc = emq_fl_hold(c->st, c->a[0].s, c->a[1].s, c->a[2].s, c->a[2].n,
                     c->a[3].i);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T4.3 flow_child(cq, child, payload, parent, pq) — on the child's queue.
 * Keys: J_cq(child), emq:{cq}:pending. `pq` empty (or absent): the parent
 * shares cq and no parent_queue is written; otherwise parent_queue = pq.
 * Replies: 1 (EMQ_OK) · EMQKIND (EMQ_EKIND). Clock: none. The child's
 * parent_policy is a separate write (set_policy).
 */
int emq_v_flow_child(emq_vctx *c)
{
    int rc = kind(c, c->a[1].s);
    if (rc < 0) return rc;
    rc = emq_fl_child(c->st, c->a[0].s, c->a[1].s, c->a[2].s, c->a[2].n,
                      c->a[3].s, c->a[4].present ? c->a[4].s : NULL);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * set_policy(q, id, policy fp|id) — the host write of T4.1 step 6 and after
 * T4.3: J(id).parent_policy = policy.
 * Keys: J(id). Reply: the number of fields created (0 or 1). Clock: none.
 */
int emq_v_set_policy(emq_vctx *c)
{
    emq_bytes fv[2];
    int added, rc;
    fv_set(&fv[0], "parent_policy", 13);
    fv_set(&fv[1], emq_fl_policy((int)c->a[2].i), 2);
    rc = emq_fl_fields(c->st, c->a[0].s, c->a[1].s, fv, 1, &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, added);
    return EMQ_OK;
}

/*
 * set_link(q, id, parent, parent_queue, policy fp|id) — the host write of
 * T4.5 that links a held node below the root: J(id).parent = parent,
 * parent_queue (only when given: the parent lives in another queue),
 * parent_policy = policy.
 * Keys: J(id). Reply: the number of fields created. Clock: none.
 */
int emq_v_set_link(emq_vctx *c)
{
    emq_bytes fv[6];
    size_t n = 0;
    int added, rc;
    fv_set(&fv[n++], "parent", 6);
    fv_set(&fv[n++], c->a[2].s, EMQ_ID_LEN);
    if (c->a[3].present) {
        fv_set(&fv[n++], "parent_queue", 12);
        fv_set(&fv[n++], c->a[3].s, c->a[3].n);
    }
    fv_set(&fv[n++], "parent_policy", 13);
    fv_set(&fv[n++], emq_fl_policy((int)c->a[4].i), 2);
    rc = emq_fl_fields(c->st, c->a[0].s, c->a[1].s, fv, n / 2, &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, added);
    return EMQ_OK;
}

/* ----------------------------------------------------------- typed calls */

int emq_flow_enqueue(emq_db *db, const char *q, const char *parent,
                     const void *payload, size_t len,
                     const emq_item *children, size_t n)
{
    emq_varg *a;
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n > 0 && children == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL children");
    }
    if (n > (SIZE_MAX / sizeof *a - 3) / 2 ||
        (a = emq_mem_calloc(3 + 2 * n, sizeof *a)) == NULL)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    a[0] = emq_varg_str(q);
    a[1] = emq_varg_str(parent);
    a[2] = emq_varg_bytes(payload, len);
    for (i = 0; i < n; i++) {
        a[3 + 2 * i] = emq_varg_str(children[i].id);
        a[4 + 2 * i] = emq_varg_bytes(children[i].payload, children[i].len);
    }
    rc = emq_verb_exec(db, EMQ_V_ENQUEUE_FLOW, a, 3 + 2 * n, NULL, NULL);
    emq_mem_free(a);
    return rc;
}

int emq_flow_hold(emq_db *db, const char *q, const char *parent,
                  const void *payload, size_t len, int64_t n)
{
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(parent),
                     emq_varg_bytes(payload, len), emq_varg_int(n)};
    return emq_verb_exec(db, EMQ_V_HOLD_PARENT, a, 4, NULL, NULL);
}

int emq_flow_child(emq_db *db, const char *cq, const char *child,
                   const void *payload, size_t len, const char *parent,
                   const char *pq)
{
    emq_varg a[5] = {emq_varg_str(cq), emq_varg_str(child),
                     emq_varg_bytes(payload, len), emq_varg_str(parent),
                     emq_varg_str(pq)};
    return emq_verb_exec(db, EMQ_V_FLOW_CHILD, a, 5, NULL, NULL);
}

int emq_flow_set_policy(emq_db *db, const char *q, const char *id,
                        int policy)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_str(policy == EMQ_FLOW_ID ? "id"
                                  : policy == EMQ_FLOW_FP ? "fp" : "?")};
    return emq_verb_exec(db, EMQ_V_SET_POLICY, a, 3, NULL, NULL);
}

int emq_flow_set_link(emq_db *db, const char *q, const char *id,
                      const char *parent, const char *parent_queue,
                      int policy)
{
    emq_varg a[5] = {emq_varg_str(q), emq_varg_str(id), emq_varg_str(parent),
                     emq_varg_str(parent_queue),
                     emq_varg_str(policy == EMQ_FLOW_ID ? "id"
                                  : policy == EMQ_FLOW_FP ? "fp" : "?")};
    return emq_verb_exec(db, EMQ_V_SET_LINK, a, 5, NULL, NULL);
}
