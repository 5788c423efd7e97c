/*
 * lanes.c — the fair-lane admissions and claims of PROTOCOL.md §6.3: T3.1
 * lane enqueue, T3.2 lane claim (one rotation, one job), T3.3 weighted
 * claim, T3.4 grouped batch claim, and their typed calls.
 *
 * Rules: every grouped claim rotates B.ring exactly one step first (so
 * fairness is constructed by the ring's order, not by hashing), serves only
 * the group it rotated onto, charges that group's in-flight count once for
 * everything it served and then DERINGs it. A rotation onto an emptied lane
 * (or one with no headroom) drops the group from the ring and answers empty
 * even when other lanes hold work: the next call rotates on. One NOW per
 * call: every job of a batch gets the same deadline.
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "groups.h"
#include "jobs.h"

/*
 * T3.1 lane_enqueue(q, g, id, payload)
 * Keys: J(id), lane(g), B.ring, B.paused, B.glimit, B.gactive, B.wake.
 * Replies: 1 enqueued (EMQ_ENQUEUED) · 0 duplicate (EMQ_DUPLICATE: a row of
 * any kind, flat or grouped, exists; nothing changes) · "EMQKIND job id must
 * be JOB-namespaced" (EMQ_EKIND). Clock: none.
 */
int emq_v_lane_enqueue(emq_vctx *c)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s, *g = c->a[1].s, *id = c->a[2].s;
    char jk[EMQ_KEY_MAX], lk[EMQ_KEY_MAX];
    size_t jkl, lkl;
    emq_bytes fv[8] = {
        {"state", 5}, {"pending", 7}, {"attempts", 8}, {"0", 1},
        {"payload", 7}, {c->a[3].n ? c->a[3].s : "", c->a[3].n},
        {"group", 5}, {g, EMQ_ID_LEN},
    };
    int64_t act;
    int created, added, paused, rc;

    if (!emq_is_job_kind(id, EMQ_ID_LEN))
        return emq_db_wire(c->db, EMQ_EKIND, EMQ_MSG_KIND);
    jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    if ((rc = emq_hash_create(st, jk, jkl, fv, 4, &created)) < 0) return rc;
    if (!created) {
        emq_reply_int(c->r, 0);
        return EMQ_DUPLICATE;
    }
    lkl = emq_key_of(lk, q, EMQ_KT_LANE, g, EMQ_ID_LEN);
    if ((rc = emq_zset_add(st, lk, lkl, id, EMQ_ID_LEN, 0, &added)) < 0)
        return rc;
    if ((rc = emq_g_paused(st, q, g, EMQ_ID_LEN, &paused)) < 0) return rc;
    if (!paused) {
        if ((rc = emq_g_gact(st, q, g, EMQ_ID_LEN, &act)) < 0) return rc;
        if ((rc = emq_g_offer(st, q, g, EMQ_ID_LEN, act)) < 0) return rc;
    }
    emq_reply_int(c->r, 1);
    return EMQ_ENQUEUED;
}

/* ------------------------------------------------------------- the claims */

enum { CLAIM_ONE, CLAIM_WEIGHTED, CLAIM_BATCH };

static int count_cb(void *ctx, const unsigned char *m, size_t mlen, double s)
{
    (void)m;
    (void)mlen;
    (void)s;
    ++*(int64_t *)ctx;
    return 0;
}

/* How many jobs a weighted or batch claim serves from lane(g) (key `lk`):
 * k = min(weight (weighted) or depth, depth, limit - GACT(g)), 0 for an
 * empty lane or no headroom. Only the members it will serve are counted:
 * an empty lane is seen by its key's absence, and the weight and the
 * limit bound the count before the lane is read. */
static int share(emq_store *st, const char *q, const emq_buf *g,
                 const emq_buf *lk, int how, int64_t *k)
{
    double lim, room;
    int64_t act, cap = -1;
    int has, busy, rc;
    *k = 0;
    if ((rc = emq_g_busy(st, q, g->p, g->len, &busy)) < 0 || !busy)
        return rc;
    if (how == CLAIM_WEIGHTED &&
        (rc = emq_g_weight(st, q, g->p, g->len, &cap)) < 0)
        return rc;
    if ((rc = emq_g_limit(st, q, g->p, g->len, &has, &lim)) < 0) return rc;
    if (has) {
        if ((rc = emq_g_gact(st, q, g->p, g->len, &act)) < 0) return rc;
        room = lim - (double)act;     /* truncated below: whole jobs */
        if (room < 1) return EMQ_OK;
        if (cap < 0 || room < (double)cap)
            cap = room >= 9007199254740992.0 ? INT64_C(9007199254740992)
                                             : (int64_t)room;
    }
    rc = emq_zset_range(st, lk->p, lk->len, 0, cap, count_cb, k);
    return rc < 0 ? rc : EMQ_OK;
}

/* Serve one job popped from lane(g): the claim triple and g, into the
 * reply itself (CLAIM_ONE) or as its next element. *popped = 0 when the
 * lane was empty (nothing written). */
static int serve(emq_vctx *c, const emq_buf *lk, const emq_buf *g, int how,
                 double deadline, int *popped)
{
    emq_buf m = {0};
    emq_reply *one = c->r;
    double s;
    int rc = emq_zset_popmin(c->st, lk->p, lk->len, &m, &s);
    *popped = rc == EMQ_OK;
    if (rc != EMQ_OK) goto done;
    if (how != CLAIM_ONE) {
        if ((one = emq_reply_push(c->r)) == NULL) {
            rc = EMQ_ENOMEM;
            goto done;
        }
        if ((rc = emq_reply_array(one, EMQ_REPLY_ARRAY, 4)) < 0) goto done;
    }
    rc = emq_job_take(c->db, c->st, c->a[0].s, &m, deadline, one);
    if (rc >= 0) rc = emq_reply_push_bulk(one, g->p, g->len);
done:
    emq_buf_free(&m);
    return rc < 0 ? rc : EMQ_OK;
}

/* T3.2-T3.4: the pause gate, one rotation, the share, the claims, the
 * charge, DERING. The reply is [id, payload, attempts, g] (CLAIM_ONE) or
 * an array of those; [] when nothing was served. */
static int lane_claim(emq_vctx *c, int how)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s;
    char mk[EMQ_KEY_MAX], rk[EMQ_KEY_MAX];
    size_t mkl = emq_key(mk, q, EMQ_KT_META);
    size_t rkl = emq_key(rk, q, EMQ_KT_RING);
    double deadline = emq_score_add(c->now, c->a[1].i);
    emq_buf g = {0}, lk = {0};
    int64_t k = 1, i, act;
    int paused, popped = 0, rc;

    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0)) < 0) goto done;
    if ((rc = emq_hash_exists(st, mk, mkl, "paused", 6, &paused)) < 0)
        goto done;
    if (paused) { rc = EMQ_EMPTY; goto done; }
    if ((rc = emq_list_rotate(st, rk, rkl, &g)) < 0) goto done;
    if (rc == EMQ_NOTFOUND) { rc = EMQ_EMPTY; goto done; }
    if (g.len != EMQ_ID_LEN) {
        rc = emq_db_fail(c->db, EMQ_ECORRUPT, "the ring holds a member that "
                         "is not a 14-byte group id");
        goto done;
    }
    if ((rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g.p, g.len)) < 0) goto done;
    if (how != CLAIM_ONE) {
        if ((rc = share(st, q, &g, &lk, how, &k)) < 0) goto done;
        if (k <= 0) {
            rc = emq_g_unring(st, q, g.p, g.len);
            if (rc >= 0) rc = EMQ_EMPTY;
            goto done;
        }
    }
    /* k <= depth: only CLAIM_ONE (which did not count) can find it empty */
    for (i = 0; i < k; i++) {
        if ((rc = serve(c, &lk, &g, how, deadline, &popped)) < 0) goto done;
        if (!popped) break;
    }
    if (i == 0) {
        rc = emq_g_unring(st, q, g.p, g.len);
        if (rc >= 0) rc = EMQ_EMPTY;
        goto done;
    }
    if ((rc = emq_g_charge(st, q, g.p, g.len, i, &act)) < 0) goto done;
    rc = emq_g_dering(st, q, g.p, g.len, act);
done:
    emq_buf_free(&g);
    emq_buf_free(&lk);
    return rc;
}

/*
 * T3.2 lane_claim(q, lease_ms > 0) — one rotation, one job.
 * Keys: B.meta (pause gate), B.ring, B.active, lane(g), J(popped),
 * B.gactive, B.glimit.
 * Replies: [id, payload (nil if absent), attempts, g] (EMQ_OK) · []
 * (EMQ_EMPTY: the queue is paused, the ring is empty, or the rotated lane
 * is empty — the group then leaves the ring). Clock: NOW.
 */
int emq_v_lane_claim(emq_vctx *c)
{
    return lane_claim(c, CLAIM_ONE);
}

/*
 * T3.3 wclaim(q, lease_ms > 0) — one rotation, k = min(weight, depth,
 * limit - GACT) jobs of the rotated group (weight absent or < 1: 1).
 * Keys: B.meta, B.ring, B.active, lane(g), J(*), B.gactive, B.glimit,
 * B.gweight.
 * Replies: [[id, payload, attempts, g], ...] (EMQ_OK) · [] (EMQ_EMPTY: as
 * lane_claim, or no headroom under the limit — the group leaves the ring).
 * Clock: NOW (one deadline for the batch).
 */
int emq_v_wclaim(emq_vctx *c)
{
    return lane_claim(c, CLAIM_WEIGHTED);
}

/*
 * T3.4 bclaim(q, lease_ms > 0) — as wclaim with k = min(depth, limit -
 * GACT): the whole rotated lane when it has no limit.
 * Keys, replies, clock: as wclaim (B.gweight is not read).
 */
int emq_v_bclaim(emq_vctx *c)
{
    return lane_claim(c, CLAIM_BATCH);
}

/* ------------------------------------------------------- the typed calls */

int emq_lane_enqueue(emq_db *db, const char *q, const char *g, const char *id,
                     const void *payload, size_t len)
{
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(g), emq_varg_str(id),
                     emq_varg_bytes(payload, len)};
    return emq_verb_exec(db, EMQ_V_LANE_ENQUEUE, a, 4, NULL, NULL);
}

/* Fill `job` and `group` from one [id, payload, attempts, g] reply. */
static int lane_job(emq_job *job, char group[EMQ_ID_SIZE], emq_reply *t)
{
    int rc = emq_job_from_reply(job, t);
    if (rc == EMQ_OK && (t->n < 4 || t->elem[3].len != EMQ_ID_LEN)) {
        emq_job_clear(job);
        rc = EMQ_ECORRUPT;
    }
    if (rc == EMQ_OK) {
        memcpy(group, t->elem[3].str, EMQ_ID_LEN);
        group[EMQ_ID_LEN] = 0;
    }
    return rc;
}

int emq_lane_claim(emq_db *db, const char *q, int64_t lease_ms, emq_job *job,
                   char group[EMQ_ID_SIZE])
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(lease_ms)};
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (job == NULL || group == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL job or group");
    }
    memset(job, 0, sizeof *job);
    group[0] = 0;
    rc = emq_verb_exec(db, EMQ_V_LANE_CLAIM, a, 2, &r, NULL);
    if (rc == EMQ_OK && (rc = lane_job(job, group, &r)) < 0)
        rc = emq_db_fail(db, rc, "a lane claim answered a malformed job");
    emq_reply_clear(&r);
    return rc;
}

void emq_lane_batch_clear(emq_lane_batch *b)
{
    size_t i;
    if (b == NULL) return;
    for (i = 0; i < b->n; i++) emq_job_clear(&b->jobs[i]);
    emq_mem_free(b->jobs);
    memset(b, 0, sizeof *b);
}

static int batch_call(emq_db *db, int verb, const char *q, int64_t lease_ms,
                      emq_lane_batch *b)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(lease_ms)};
    emq_reply r = {0};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (b == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL batch");
    }
    memset(b, 0, sizeof *b);
    rc = emq_verb_exec(db, verb, a, 2, &r, NULL);
    if (rc == EMQ_OK &&
        (b->jobs = emq_mem_calloc(r.n, sizeof *b->jobs)) == NULL)
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
    for (i = 0; rc == EMQ_OK && i < r.n; i++) {
        if ((rc = lane_job(&b->jobs[i], b->group, &r.elem[i])) < 0)
            rc = emq_db_fail(db, rc, "a lane claim answered a malformed "
                             "job");
        else
            b->n++;
    }
    if (rc < 0) emq_lane_batch_clear(b);
    emq_reply_clear(&r);
    return rc;
}

int emq_lane_wclaim(emq_db *db, const char *q, int64_t lease_ms,
               emq_lane_batch *b)
{
    return batch_call(db, EMQ_V_WCLAIM, q, lease_ms, b);
}

int emq_lane_bclaim(emq_db *db, const char *q, int64_t lease_ms,
               emq_lane_batch *b)
{
    return batch_call(db, EMQ_V_BCLAIM, q, lease_ms, b);
}
