/*
 * claim.c — T1.4 claim (PROTOCOL.md §6.1): pop the oldest pending id, bump
 * its attempts (the new fencing token), mark it active, lease it.
 *
 * Rule: the popped member is not re-validated (a ghost or non-JOB member is
 * claimed and grows a partial row); the only thing checked is that it fits
 * emq_job.id (14 bytes), which a keyspace written through the gates always
 * satisfies.
 */
#include <stdlib.h>
#include <string.h>
#include "db.h"

typedef struct claim_ctx {
    const char *q;
    int64_t lease;
    emq_job *job;
} claim_ctx;

static int claim_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    claim_ctx *c = ctx;
    char mk[EMQ_KEY_MAX], pk[EMQ_KEY_MAX], ak[EMQ_KEY_MAX];
    size_t mkl = emq_key_q(mk, c->q, "meta");
    size_t pkl = emq_key_q(pk, c->q, "pending");
    size_t akl = emq_key_q(ak, c->q, "active");
    emq_buf m = {0}, jk = {0}, pay = {0};
    double s;
    int64_t att;
    int paused, rc;

    if ((rc = emq_hash_exists(st, mk, mkl, "paused", 6, &paused)) < 0)
        goto done;
    if (paused) { rc = EMQ_EMPTY; goto done; }
    rc = emq_zset_popmin(st, pk, pkl, &m, &s);
    if (rc < 0) goto done;
    if (rc == EMQ_NOTFOUND) { rc = EMQ_EMPTY; goto done; }
    if (m.len != EMQ_ID_LEN) {
        rc = emq_db_fail(db, EMQ_ECORRUPT, "the pending set holds a member "
                         "that is not a 14-byte id");
        goto done;
    }
    if ((rc = emq_jkey(&jk, c->q, m.p, m.len)) < 0) goto done;
    /* Steps 3 and 4 and the payload read of step 6, as one row access:
     * HINCRBY attempts 1, HSET state active, HGET payload. */
    emq_hop ops[3] = {
        {.op = EMQ_HOP_INCR, .f = {"attempts", 8}, .by = 1},
        {.op = EMQ_HOP_SET, .f = {"state", 5}, .v = {"active", 6}},
        {.op = EMQ_HOP_GET, .f = {"payload", 7}, .out = &pay},
    };
    if ((rc = emq_hash_apply(st, jk.p, jk.len, ops, 3, NULL)) < 0) goto done;
    att = ops[0].result;
    rc = emq_zset_add(st, ak, akl, m.p, m.len, emq_score_add(now, c->lease),
                      NULL);
    if (rc < 0) goto done;
    rc = ops[2].found ? EMQ_OK : EMQ_NOTFOUND;

    memset(c->job, 0, sizeof *c->job);
    memcpy(c->job->id, m.p, EMQ_ID_LEN);
    c->job->id[EMQ_ID_LEN] = 0;
    c->job->attempts = att;
    if (rc == EMQ_OK) {
        if (pay.p == NULL && (pay.p = emq_mem_calloc(1, 1)) == NULL) {
            rc = EMQ_ENOMEM;
            goto done;
        }
        c->job->payload = pay.p;
        c->job->payload_len = pay.len;
        pay.p = NULL;
    }
    rc = EMQ_OK;
done:
    emq_buf_free(&m);
    emq_buf_free(&jk);
    emq_buf_free(&pay);
    return rc;
}

/*
 * T1.4 claim(q, lease_ms > 0)
 * Keys: B.meta (paused gate), B.pending, B.active, J(popped).
 * Replies: [id, payload (nil if absent), attempts] → EMQ_OK with *job filled
 * (payload NULL for nil) · empty array → EMQ_EMPTY (nothing pending, or
 * B.meta has field `paused`, any value). Clock: NOW (lease = NOW + lease_ms).
 */
int emq_claim(emq_db *db, const char *q, int64_t lease_ms, emq_job *job)
{
    claim_ctx c = {q, lease_ms, job};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (job == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL job");
    memset(job, 0, sizeof *job);
    if (lease_ms <= 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: lease_ms <= 0");
    rc = emq_db_run(db, 1, claim_body, &c);
    if (rc != EMQ_OK) emq_job_clear(job);
    return rc;
}
