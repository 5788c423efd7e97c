/*
 * complete.c — T1.5 complete (PROTOCOL.md §6.1) and the release steps 3-5 it
 * shares with T1.6 retry.
 *
 * Rule: policy before existence before write — LINK's gate, the missing row
 * and the token are all judged before the first write. A matching token
 * completes a job in any state; fan-in and outbox emission happen only when
 * the job was active.
 */
#include <string.h>
#include "jobs.h"
#include "verb.h"
#include "events.h"
#include "groups.h"
#include "link.h"

int emq_job_release(emq_store *st, const char *q, const char *id, int *was)
{
    char jk[EMQ_KEY_MAX], k[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN), kl;
    emq_buf g = {0};
    int has_g, removed, rc;

    rc = emq_hash_get(st, jk, jkl, "group", 5, &g);
    if (rc < 0) goto done;
    has_g = rc == EMQ_OK;
    kl = emq_key(k, q, EMQ_KT_ACTIVE);
    if ((rc = emq_zset_rem(st, k, kl, id, EMQ_ID_LEN, was)) < 0) goto done;
    if (has_g) {
        rc = *was ? emq_g_release(st, q, g.p, g.len)
                  : emq_g_unclaimed(st, q, g.p, g.len, id, EMQ_ID_LEN);
    } else if (!*was) {
        kl = emq_key(k, q, EMQ_KT_PENDING);
        rc = emq_zset_rem(st, k, kl, id, EMQ_ID_LEN, &removed);
    }
done:
    emq_buf_free(&g);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_job_link(emq_db *db, emq_store *st, const char *q, const char *id,
                 emq_link *l)
{
    int rc = emq_link_read(st, q, id, EMQ_ID_LEN, l);
    if (rc == EMQ_EID) /* GATE-ID(parent) of a same-queue link */
        return emq_db_wire(db, rc, "job_key requires a valid branded id");
    return rc;
}

typedef struct cmp_ctx {
    const char *q, *id;
    int64_t token;
    const void *r;
    size_t rlen;
} cmp_ctx;

/* Step 7, same-queue fan-in: dependencies -1, processed[id] = r, and the
 * parent released to pending at <= 0. */
static int fan_in(emq_store *st, const char *q, const emq_link *l,
                  const char *id, const void *r, size_t rlen)
{
    char pid[EMQ_ID_SIZE], k[EMQ_KEY_MAX];
    size_t kl;
    emq_bytes fv[2];
    int64_t left;
    int added, rc;

    memcpy(pid, l->parent.p, EMQ_ID_LEN);   /* LINK gated it: 14 bytes */
    pid[EMQ_ID_LEN] = 0;
    kl = emq_key_of(k, q, EMQ_KT_JOB_DEPENDENCIES, pid, EMQ_ID_LEN);
    if ((rc = emq_str_incrby(st, k, kl, -1, &left)) < 0) return rc;
    kl = emq_key_of(k, q, EMQ_KT_JOB_PROCESSED, pid, EMQ_ID_LEN);
    fv[0].p = id;
    fv[0].n = EMQ_ID_LEN;
    fv[1].p = rlen ? r : "";
    fv[1].n = rlen;
    if ((rc = emq_hash_set(st, k, kl, fv, 1, &added)) < 0) return rc;
    if (left > 0) return EMQ_OK;
    kl = emq_key(k, q, EMQ_KT_PENDING);
    if ((rc = emq_zset_add(st, k, kl, pid, EMQ_ID_LEN, 0, &added)) < 0)
        return rc;
    kl = emq_key_of(k, q, EMQ_KT_JOB, pid, EMQ_ID_LEN);
    fv[0].p = "state";
    fv[0].n = 5;
    fv[1].p = "pending";
    fv[1].n = 7;
    return emq_hash_set(st, k, kl, fv, 1, &added);
}

/*
 * T1.5 complete(q, id, token, result = none) — result absent: the job's
 * own id.
 * Keys: B.active, J(id), lane family (group rows), B.pending,
 * B.metrics:completed; with a flow link: J(p).dependencies, J(p).processed,
 * J(p), or B.flow:outbox (cross-queue parent).
 * Replies: 1 ok (EMQ_OK) · 0 gone (EMQ_GONE: no row, or no attempts field) ·
 * "EMQSTALE complete token mismatch" (EMQ_ESTALE). Clock: none.
 */
int emq_v_complete(emq_vctx *c)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s, *id = c->a[1].s;
    const void *r = c->a[3].present ? c->a[3].s : id;
    size_t rlen = c->a[3].present ? c->a[3].n : EMQ_ID_LEN;
    char jk[EMQ_KEY_MAX], k[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN), kl;
    emq_link l;
    emq_buf att = {0}, e = {0};
    int64_t n;
    int was, deleted, rc;

    memset(&l, 0, sizeof l);
    if ((rc = emq_job_link(c->db, st, q, id, &l)) < 0) goto done;
    rc = emq_hash_get(st, jk, jkl, "attempts", 8, &att);
    if (rc < 0) goto done;
    if (rc == EMQ_NOTFOUND) {
        emq_reply_int(c->r, 0);
        rc = EMQ_GONE;
        goto done;
    }
    if (!emq_token_eq(&att, c->a[2].i)) {
        rc = emq_db_wire(c->db, EMQ_ESTALE, EMQ_MSG_STALE_CMP);
        goto done;
    }
    if ((rc = emq_job_release(st, q, id, &was)) < 0) goto done;
    if (l.kind == EMQ_LINK_CROSS && was) {
        rc = emq_outbox_complete(&e, l.pqueue.p, l.pqueue.len, l.parent.p,
                                 l.parent.len, id, EMQ_ID_LEN, r, rlen);
        if (rc < 0) goto done;
        kl = emq_key(k, q, EMQ_KT_OUTBOX);
        if ((rc = emq_list_push(st, k, kl, 1, e.p, e.len, &n)) < 0) goto done;
    } else if (l.kind == EMQ_LINK_SAME && was) {
        if ((rc = fan_in(st, q, &l, id, r, rlen)) < 0) goto done;
    }
    if ((rc = emq_key_del(st, jk, jkl, &deleted)) < 0) goto done;
    kl = emq_key(k, q, EMQ_KT_METRICS_COMPLETED);
    if ((rc = emq_hash_incrby(st, k, kl, "count", 5, 1, &n)) < 0) goto done;
    emq_reply_int(c->r, 1);
    rc = emq_ev_completed(c); /* T2.17, after the reply */
done:
    emq_link_free(&l);
    emq_buf_free(&att);
    emq_buf_free(&e);
    return rc;
}

int emq_complete_r(emq_db *db, const char *q, const char *id, int64_t token,
                   const void *r, size_t rlen)
{
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_int(token), emq_varg_bytes(r, rlen)};
    return emq_verb_exec(db, EMQ_V_COMPLETE, a, 4, NULL, NULL);
}

int emq_complete(emq_db *db, const char *q, const char *id, int64_t token)
{
    return emq_complete_r(db, q, id, token, NULL, 0);
}

int emq_complete_result(emq_db *db, const char *q, const char *id,
                        int64_t token, const void *result, size_t len)
{
    return emq_complete_r(db, q, id, token, result, len);
}
