/*
 * claim.c — T1.4 claim (PROTOCOL.md §6.1): pop the oldest pending id, bump
 * its attempts (the new fencing token), mark it active, lease it; and that
 * claim of one popped member, which the lane claims (lanes.c) share.
 *
 * Rule: the popped member is not re-validated (a ghost or non-JOB member is
 * claimed and grows a partial row); the only thing checked is that it fits
 * emq_job.id (14 bytes), which a keyspace written through the gates always
 * satisfies.
 */
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "jobs.h"

int emq_job_take(emq_db *db, emq_store *st, const char *q, const emq_buf *m,
                 double deadline, emq_reply *arr)
{
    char ak[EMQ_KEY_MAX];
    size_t akl = emq_key(ak, q, EMQ_KT_ACTIVE);
    emq_buf jk = {0}, pay = {0};
    emq_reply *e;
    int rc;

    if (m->len != EMQ_ID_LEN)
        return emq_db_fail(db, EMQ_ECORRUPT, "a job set holds a member "
                           "that is not a 14-byte id");
    if ((rc = emq_key_buf(&jk, q, EMQ_KT_JOB, m->p, m->len)) < 0) goto done;
    /* Steps 3 and 4 and the payload read of step 6, as one row access:
     * HINCRBY attempts 1, HSET state active, HGET payload. */
    emq_hop ops[3] = {
        {.op = EMQ_HOP_INCR, .f = {"attempts", 8}, .by = 1},
        {.op = EMQ_HOP_SET, .f = {"state", 5}, .v = {"active", 6}},
        {.op = EMQ_HOP_GET, .f = {"payload", 7}, .out = &pay},
    };
    if ((rc = emq_hash_apply(st, jk.p, jk.len, ops, 3, NULL)) < 0) goto done;
    rc = emq_zset_add(st, ak, akl, m->p, m->len, deadline, NULL);
    if (rc < 0) goto done;
    if ((rc = emq_reply_push_bulk(arr, m->p, m->len)) < 0) goto done;
    if ((e = emq_reply_push(arr)) == NULL) { rc = EMQ_ENOMEM; goto done; }
    if (ops[2].found && (rc = emq_reply_bulk(e, pay.p, pay.len)) < 0)
        goto done;
    rc = emq_reply_push_int(arr, ops[0].result);
done:
    emq_buf_free(&jk);
    emq_buf_free(&pay);
    return rc;
}

/*
 * T1.4 claim(q, lease_ms > 0)
 * Keys: B.meta (paused gate), B.pending, B.active, J(popped).
 * Replies: [id, payload (nil if absent), attempts] (EMQ_OK) · [] (EMQ_EMPTY:
 * nothing pending, or B.meta has field `paused`, any value).
 * Clock: NOW (lease = NOW + lease_ms).
 */
int emq_v_claim(emq_vctx *c)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s;
    char mk[EMQ_KEY_MAX], pk[EMQ_KEY_MAX];
    size_t mkl = emq_key(mk, q, EMQ_KT_META);
    size_t pkl = emq_key(pk, q, EMQ_KT_PENDING);
    emq_buf m = {0};
    double s;
    int paused, rc;

    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0)) < 0) goto done;
    if ((rc = emq_hash_exists(st, mk, mkl, "paused", 6, &paused)) < 0)
        goto done;
    if (paused) { rc = EMQ_EMPTY; goto done; }
    rc = emq_zset_popmin(st, pk, pkl, &m, &s);
    if (rc < 0) goto done;
    if (rc == EMQ_NOTFOUND) { rc = EMQ_EMPTY; goto done; }
    rc = emq_job_take(c->db, st, q, &m, emq_score_add(c->now, c->a[1].i),
                      c->r);
done:
    emq_buf_free(&m);
    return rc;
}

int emq_job_from_reply(emq_job *job, emq_reply *t)
{
    memset(job, 0, sizeof *job);
    if (t->type != EMQ_REPLY_ARRAY || t->n < 3 ||
        t->elem[0].len != EMQ_ID_LEN)
        return EMQ_ECORRUPT;
    memcpy(job->id, t->elem[0].str, EMQ_ID_LEN);
    job->id[EMQ_ID_LEN] = 0;
    job->attempts = t->elem[2].integer;
    if (t->elem[1].type == EMQ_REPLY_BULK) {
        /* The reply's string moves into the job (both are emq_mem). */
        job->payload = (unsigned char *)t->elem[1].str;
        job->payload_len = t->elem[1].len;
        t->elem[1].str = NULL;
        t->elem[1].type = EMQ_REPLY_NIL;
    }
    return EMQ_OK;
}

int emq_claim(emq_db *db, const char *q, int64_t lease_ms, emq_job *job)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(lease_ms)};
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (job == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL job");
    }
    memset(job, 0, sizeof *job);
    rc = emq_verb_exec(db, EMQ_V_CLAIM, a, 2, &r, NULL);
    if (rc == EMQ_OK) rc = emq_job_from_reply(job, &r);
    emq_reply_clear(&r);
    return rc;
}
