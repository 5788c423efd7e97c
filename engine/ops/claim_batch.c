/*
 * claim_batch.c — T2.14 claim_batch (PROTOCOL.md §6.2): many claims on one
 * lease deadline, the batch side of a worker's plane.
 *
 * Rules: claim_batch reads NOW once and gives every member the same lease
 * deadline; popped members are not re-validated (a ghost id grows a
 * partial row, as T1.4's does).
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "jobs.h"

/* One claim of step 4 onto the reply: pop, attempts + 1, active, lease.
 * EMQ_OK, EMQ_EMPTY (nothing left), or a failure. */
static int claim_one(emq_vctx *c, const char *pk, size_t pkl, const char *ak,
                     size_t akl, double deadline)
{
    emq_buf m = {0}, jk = {0}, pay = {0};
    emq_reply *t, *e;
    double s;
    int rc = emq_zset_popmin(c->st, pk, pkl, &m, &s);
    if (rc == EMQ_NOTFOUND) { rc = EMQ_EMPTY; goto done; }
    if (rc < 0) goto done;
    if ((rc = emq_key_buf(&jk, c->a[0].s, EMQ_KT_JOB, m.p, m.len)) < 0)
        goto done;
    {
        emq_hop ops[3] = {
            {.op = EMQ_HOP_INCR, .f = {"attempts", 8}, .by = 1},
            {.op = EMQ_HOP_SET, .f = {"state", 5}, .v = {"active", 6}},
            {.op = EMQ_HOP_GET, .f = {"payload", 7}, .out = &pay},
        };
        if ((rc = emq_hash_apply(c->st, jk.p, jk.len, ops, 3, NULL)) < 0)
            goto done;
        rc = emq_zset_add(c->st, ak, akl, m.p, m.len, deadline, NULL);
        if (rc < 0) goto done;
        if ((t = emq_reply_push(c->r)) == NULL) { rc = EMQ_ENOMEM; goto done; }
        if ((rc = emq_reply_array(t, EMQ_REPLY_ARRAY, 3)) < 0) goto done;
        if ((rc = emq_reply_push_bulk(t, m.p, m.len)) < 0) goto done;
        if ((e = emq_reply_push(t)) == NULL) { rc = EMQ_ENOMEM; goto done; }
        if (ops[2].found && (rc = emq_reply_bulk(e, pay.p, pay.len)) < 0)
            goto done;
        rc = emq_reply_push_int(t, ops[0].result);
    }
done:
    emq_buf_free(&m);
    emq_buf_free(&jk);
    emq_buf_free(&pay);
    return rc;
}

/*
 * T2.14 claim_batch(q, size > 0, lease_ms > 0)
 * Keys: B.meta (paused gate), B.pending, B.active, J(popped).
 * Replies: [[id, payload (nil if absent), attempts], ...] in pop (mint)
 * order (EMQ_OK) · [] (EMQ_EMPTY: paused, or nothing pending).
 * Clock: NOW once: every member leased until NOW + lease_ms.
 */
int emq_v_claim_batch(emq_vctx *c)
{
    const char *q = c->a[0].s;
    char mk[EMQ_KEY_MAX], pk[EMQ_KEY_MAX], ak[EMQ_KEY_MAX];
    size_t mkl = emq_key(mk, q, EMQ_KT_META);
    size_t pkl = emq_key(pk, q, EMQ_KT_PENDING);
    size_t akl = emq_key(ak, q, EMQ_KT_ACTIVE);
    double deadline = emq_score_add(c->now, c->a[2].i);
    int64_t k, depth;
    int paused, rc;

    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0)) < 0) return rc;
    if ((rc = emq_hash_exists(c->st, mk, mkl, "paused", 6, &paused)) < 0)
        return rc;
    if (paused) return EMQ_EMPTY;
    if ((rc = emq_zset_card(c->st, pk, pkl, &depth)) < 0) return rc;
    if (depth == 0) return EMQ_EMPTY;
    k = c->a[1].i < depth ? c->a[1].i : depth;
    while (k-- > 0) {
        rc = claim_one(c, pk, pkl, ak, akl, deadline);
        if (rc == EMQ_EMPTY) break;
        if (rc < 0) return rc;
    }
    return c->r->n > 0 ? EMQ_OK : EMQ_EMPTY;
}

int emq_claim_batch(emq_db *db, const char *q, size_t size, int64_t lease_ms,
                    emq_job *jobs, size_t *n)
{
    int64_t sz = size > (size_t)INT64_MAX ? INT64_MAX : (int64_t)size;
    emq_varg a[3] = {emq_varg_str(q), emq_varg_int(sz),
                     emq_varg_int(lease_ms)};
    emq_reply r = {0};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n) *n = 0;
    if (jobs == NULL || n == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL jobs or n");
    }
    rc = emq_verb_exec(db, EMQ_V_CLAIM_BATCH, a, 3, &r, NULL);
    for (i = 0; rc == EMQ_OK && i < r.n; i++)
        if ((rc = emq_job_from_reply(&jobs[i], &r.elem[i])) < 0) {
            while (i > 0) emq_job_clear(&jobs[--i]);
            rc = emq_db_fail(db, rc, "the pending set held a member that "
                             "is not a 14-byte id (it was claimed)");
        }
    if (rc == EMQ_OK) *n = r.n;
    emq_reply_clear(&r);
    return rc;
}
