/*
 * retry.c — T1.6 retry (PROTOCOL.md §6.1): record the error and either
 * reschedule the job or dead-letter it at its attempts cap, with the
 * same-queue flow arm and RECURSE-SQ (T4.14) folded into the transaction
 * (no cut between a parent's death and its re-emit); retry_tx is the
 * transition alone, as a trace replays it part by part.
 *
 * Rule: `attempts` is never changed here (the next claim increments it); the
 * cap compares the token — which equals the stored attempts byte-for-byte,
 * hence numerically — with max_attempts.
 */
#include <string.h>
#include "jobs.h"
#include "link.h"
#include "verb.h"
#include "events.h"

typedef struct retry_ctx {
    const char *q, *id;
    int64_t token, delay, max;
    const void *err;
    size_t elen;
    int recurse;        /* fold RECURSE-SQ (T4.14) into the transaction */
} retry_ctx;

static int set_state(emq_store *st, const char *k, size_t kl, const char *s)
{
    emq_bytes fv[2];
    int added;
    fv[0].p = "state";
    fv[0].n = 5;
    fv[1].p = s;
    fv[1].n = strlen(s);
    return emq_hash_set(st, k, kl, fv, 1, &added);
}

static int set_field(emq_store *st, const char *k, size_t kl, const void *f,
                     size_t fl, const void *v, size_t vl)
{
    emq_bytes fv[2];
    int added;
    fv[0].p = f;
    fv[0].n = fl;
    fv[1].p = vl ? v : "";
    fv[1].n = vl;
    return emq_hash_set(st, k, kl, fv, 1, &added);
}

/* Step 5.2 flow arm for a same-queue parent, then RECURSE-SQ. */
static int same_arm(emq_store *st, const retry_ctx *c, const emq_link *l)
{
    char pid[EMQ_ID_SIZE], k[EMQ_KEY_MAX];
    size_t kl;
    emq_buf state = {0};
    int64_t left;
    int added, removed, rc;

    memcpy(pid, l->parent.p, EMQ_ID_LEN);   /* LINK gated it: 14 bytes */
    pid[EMQ_ID_LEN] = 0;
    if (!l->policy_id) {
        kl = emq_key_of(k, c->q, EMQ_KT_JOB_FAILED, pid, EMQ_ID_LEN);
        rc = set_field(st, k, kl, c->id, EMQ_ID_LEN, c->err, c->elen);
        if (rc < 0) goto done;
        kl = emq_key_of(k, c->q, EMQ_KT_JOB, pid, EMQ_ID_LEN);
        if ((rc = set_state(st, k, kl, "dead")) < 0) goto done;
        kl = emq_key(k, c->q, EMQ_KT_DEAD);
        rc = emq_zset_add(st, k, kl, pid, EMQ_ID_LEN, 0, &added);
        if (rc < 0) goto done;
        kl = emq_key(k, c->q, EMQ_KT_PENDING);
        rc = emq_zset_rem(st, k, kl, pid, EMQ_ID_LEN, &removed);
        if (rc < 0) goto done;
    } else {
        kl = emq_key_of(k, c->q, EMQ_KT_JOB_UNSUCCESSFUL, pid, EMQ_ID_LEN);
        rc = set_field(st, k, kl, c->id, EMQ_ID_LEN, c->err, c->elen);
        if (rc < 0) goto done;
        kl = emq_key_of(k, c->q, EMQ_KT_JOB_DEPENDENCIES, pid, EMQ_ID_LEN);
        if ((rc = emq_str_incrby(st, k, kl, -1, &left)) < 0) goto done;
        if (left <= 0) {
            kl = emq_key(k, c->q, EMQ_KT_PENDING);
            rc = emq_zset_add(st, k, kl, pid, EMQ_ID_LEN, 0, &added);
            if (rc < 0) goto done;
            kl = emq_key_of(k, c->q, EMQ_KT_JOB, pid, EMQ_ID_LEN);
            if ((rc = set_state(st, k, kl, "pending")) < 0) goto done;
        }
    }
    /* RECURSE-SQ: a parent now dead passes the death one level up. */
    if (!c->recurse) goto done;
    kl = emq_key_of(k, c->q, EMQ_KT_JOB, pid, EMQ_ID_LEN);
    rc = emq_hash_get(st, k, kl, "state", 5, &state);
    if (rc < 0) goto done;
    if (rc == EMQ_OK && state.len == 4 && memcmp(state.p, "dead", 4) == 0)
        rc = emq_outbox_reemit(st, c->q, pid, EMQ_ID_LEN, c->err, c->elen,
                               NULL);
    else
        rc = EMQ_OK;
done:
    emq_buf_free(&state);
    return rc;
}

static int retry_body(emq_db *db, emq_store *st, int64_t now,
                      const retry_ctx *c)
{
    char jk[EMQ_KEY_MAX], k[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, c->q, EMQ_KT_JOB, c->id, EMQ_ID_LEN), kl;
    emq_link l;
    emq_buf att = {0}, e = {0};
    int64_t n;
    int was, added, rc;

    memset(&l, 0, sizeof l);
    if ((rc = emq_job_link(db, st, c->q, c->id, &l)) < 0) goto done;
    rc = emq_hash_get(st, jk, jkl, "attempts", 8, &att);
    if (rc < 0) goto done;
    if (rc == EMQ_NOTFOUND) {
        rc = emq_db_wire(db, EMQ_ESTALE, EMQ_MSG_STALE_GONE);
        goto done;
    }
    if (!emq_token_eq(&att, c->token)) {
        rc = emq_db_wire(db, EMQ_ESTALE, EMQ_MSG_STALE_RTY);
        goto done;
    }
    if ((rc = emq_job_release(st, c->q, c->id, &was)) < 0) goto done;
    rc = set_field(st, jk, jkl, "last_error", 10, c->err, c->elen);
    if (rc < 0) goto done;

    if (c->token >= c->max) {
        if ((rc = set_state(st, jk, jkl, "dead")) < 0) goto done;
        kl = emq_key(k, c->q, EMQ_KT_DEAD);
        rc = emq_zset_add(st, k, kl, c->id, EMQ_ID_LEN, 0, &added);
        if (rc < 0) goto done;
        kl = emq_key(k, c->q, EMQ_KT_METRICS_FAILED);
        if ((rc = emq_hash_incrby(st, k, kl, "count", 5, 1, &n)) < 0)
            goto done;
        if (l.kind == EMQ_LINK_SAME) {
            if ((rc = same_arm(st, c, &l)) < 0) goto done;
        } else if (l.kind == EMQ_LINK_CROSS) {
            rc = emq_outbox_fail(&e, l.pqueue.p, l.pqueue.len, l.parent.p,
                                 l.parent.len, c->id, EMQ_ID_LEN, l.policy_id,
                                 c->err, c->elen);
            if (rc < 0) goto done;
            kl = emq_key(k, c->q, EMQ_KT_OUTBOX);
            rc = emq_list_push(st, k, kl, 1, e.p, e.len, &n);
            if (rc < 0) goto done;
        }
        rc = EMQ_DEAD;
        goto done;
    }
    if ((rc = set_state(st, jk, jkl, "scheduled")) < 0) goto done;
    kl = emq_key(k, c->q, EMQ_KT_SCHEDULE);
    rc = emq_zset_add(st, k, kl, c->id, EMQ_ID_LEN,
                      emq_score_add(now, c->delay), &added);
    if (rc < 0) goto done;
    rc = EMQ_SCHEDULED;
done:
    emq_link_free(&l);
    emq_buf_free(&att);
    emq_buf_free(&e);
    return rc;
}

/*
 * T1.6 retry(q, id, token, delay_ms >= 0, max_attempts, error)
 * Keys: B.active, B.schedule, B.dead, J(id), lane family, B.pending,
 * B.metrics:failed; with a flow link: J(p), J(p).failed / .unsuccessful /
 * .dependencies, B.dead, B.pending (same queue; then RECURSE-SQ may push
 * onto B.flow:outbox), or B.flow:outbox (cross-queue parent).
 * Replies: "scheduled" (EMQ_SCHEDULED) · "dead" (EMQ_DEAD) ·
 * "EMQSTALE job gone" / "EMQSTALE retry token mismatch" (EMQ_ESTALE).
 * Clock: NOW (the schedule arm's run-at = NOW + delay_ms).
 */
static int retry_verb(emq_vctx *c, int recurse)
{
    retry_ctx x = {c->a[0].s, c->a[1].s, c->a[2].i, c->a[3].i, c->a[4].i,
                   c->a[5].s, c->a[5].n, recurse};
    int rc = retry_body(c->db, c->st, c->now, &x);
    if (rc == EMQ_SCHEDULED) rc = emq_reply_bulk(c->r, "scheduled", 9) < 0
                                      ? EMQ_ENOMEM : rc;
    else if (rc == EMQ_DEAD) rc = emq_reply_bulk(c->r, "dead", 4) < 0
                                      ? EMQ_ENOMEM : rc;
    return rc;
}

int emq_v_retry(emq_vctx *c)
{
    int rc = retry_verb(c, 1);
    if (rc == EMQ_DEAD) { /* T2.17, after the reply: failed, its error */
        int e = emq_ev_failed(c, c->a[5].s, c->a[5].n);
        if (e < 0) return e;
    }
    return rc;
}

/*
 * retry_tx(q, id, token, delay_ms >= 0, max_attempts, error) — T1.6's own
 * transaction, without the RECURSE-SQ that emqlite folds into retry: the
 * first part of a retry that a trace records as `retry` + `reemit` (the
 * reference runs RECURSE-SQ as a separate host step). Keys, replies and
 * clock: retry's. Not for applications: a death it leaves unpropagated
 * needs the reemit step after it.
 */
int emq_v_retry_tx(emq_vctx *c)
{
    return retry_verb(c, 0);
}

int emq_retry(emq_db *db, const char *q, const char *id, int64_t token,
              int64_t delay_ms, int64_t max_attempts, const void *error,
              size_t error_len)
{
    emq_varg a[6] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_int(token), emq_varg_int(delay_ms),
                     emq_varg_int(max_attempts),
                     emq_varg_bytes(error, error_len)};
    return emq_verb_exec(db, EMQ_V_RETRY, a, 6, NULL, NULL);
}
