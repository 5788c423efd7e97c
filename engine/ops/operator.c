/*
 * operator.c — the operator's writes of the read plane (PROTOCOL.md §6.2):
 * T2.2 drain, T2.3 obliterate, T2.12 remove_job, T2.13 reprocess_job, and
 * beyond the wire the dead-letter requeue (a loop of T2.13 in batches).
 *
 * Rules: every refusal comes before the first write (policy before
 * existence before write), so a refused call changes nothing. Members are
 * whatever bytes the sets hold: keys derived from them are built with
 * emq_key_buf (any length), never re-validated.
 */
#include <stdio.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "groups.h"
#include "dead.h"

#define MSG_NOT_PAUSED "EMQSTATE not paused"
#define MSG_ACTIVE "EMQSTATE active jobs present"
#define MSG_LOCKED "EMQLOCK job is locked"
#define MSG_NOT_DEAD "EMQSTATE not dead"

#define BUDGET_DEFAULT 1000   /* obliterate, Appendix C */
#define REQUEUE_BATCH 100     /* requeue_dead, per transaction */

/* ---------------------------------------------------------- JOBDEL, OBDEL */

/* Delete J(id), J(id).logs and, with `lock`, J(id).lock (JOBDEL / OBDEL). */
static int job_del(emq_store *st, const char *q, const void *id, size_t n,
                   int lock)
{
    emq_buf k = {0};
    int d, rc = emq_key_buf(&k, q, EMQ_KT_JOB, id, n);
    if (rc == EMQ_OK) rc = emq_key_del(st, k.p, k.len, &d);
    if (rc == EMQ_OK) rc = emq_key_buf(&k, q, EMQ_KT_JOB_LOGS, id, n);
    if (rc == EMQ_OK) rc = emq_key_del(st, k.p, k.len, &d);
    if (rc == EMQ_OK && lock) rc = emq_key_buf(&k, q, EMQ_KT_JOB_LOCK, id, n);
    if (rc == EMQ_OK && lock) rc = emq_key_del(st, k.p, k.len, &d);
    emq_buf_free(&k);
    return rc;
}

/* A walk over set members that deletes each one's job keys, optionally
 * removing it from the set it was read from (obliterate), and counts. */
typedef struct del_walk {
    emq_store *st;
    const char *q;
    int lock;                 /* OBDEL rather than JOBDEL              */
    const void *set;          /* remove each member from this zset...  */
    size_t setlen;            /* ...when setlen > 0                    */
    int64_t n;
} del_walk;

static int del_cb(void *ctx, const unsigned char *m, size_t mlen,
                  double score)
{
    del_walk *w = ctx;
    int removed, rc;
    (void)score;
    rc = job_del(w->st, w->q, m, mlen, w->lock);
    if (rc == EMQ_OK && w->setlen)
        rc = emq_zset_rem(w->st, w->set, w->setlen, m, mlen, &removed);
    if (rc == EMQ_OK) w->n++;
    return rc;
}

/* -------------------------------------------------------------- T2.2 drain */

/* JOBDEL every member of the set `kt`, then delete the set; adds to *n. */
static int drain_set(emq_store *st, const char *q, int kt, int64_t *n)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, kt);
    del_walk w = {st, q, 0, NULL, 0, 0};
    int d, rc = emq_zset_range(st, k, kl, 0, -1, del_cb, &w);
    if (rc == EMQ_OK) rc = emq_key_del(st, k, kl, &d);
    *n += w.n;
    return rc;
}

/*
 * T2.2 drain(q, include_schedule = false)
 * Keys: B(q), B.pending [, B.schedule]; derived J(id), J(id).logs of each
 * member. Untouched: B.active, B.dead, lanes, repeats, dedup and lock keys.
 * Reply: n, the members walked (an id in both sets counts twice, a
 * row-less id counts). Clock: none.
 */
int emq_v_drain(emq_vctx *c)
{
    int64_t n = 0;
    int rc = drain_set(c->st, c->a[0].s, EMQ_KT_PENDING, &n);
    if (rc == EMQ_OK && c->a[1].present && c->a[1].i)
        rc = drain_set(c->st, c->a[0].s, EMQ_KT_SCHEDULE, &n);
    if (rc < 0) return rc;
    if (c->out) *(int64_t *)c->out = n;
    emq_reply_int(c->r, n);
    return EMQ_OK;
}

int emq_drain(emq_db *db, const char *q, int include_schedule,
              int64_t *removed)
{
    emq_varg a[2] = {emq_varg_str(q),
                     emq_varg_str(include_schedule ? "1" : "0")};
    int64_t n = 0;
    int rc = emq_verb_exec(db, EMQ_V_DRAIN, a, 2, NULL, &n);
    if (removed) *removed = rc == EMQ_OK ? n : 0;
    return rc;
}

/* --------------------------------------------------------- T2.3 obliterate */

/* OBDEL the first `*budget` members of zset `k` and remove them; charge
 * the budget. */
static int ob_set(emq_store *st, const char *q, const void *k, size_t kl,
                  int64_t *budget)
{
    del_walk w = {st, q, 1, k, kl, 0};
    int rc = emq_zset_range(st, k, kl, 0, *budget, del_cb, &w);
    *budget -= w.n;
    return rc;
}

/* The groups of step 6: ring order, then paused groups not on the ring
 * in memcmp order (D-22), each once. */
typedef struct glist {
    emq_buf b;                /* packed: u32 length, bytes            */
    size_t n;
} glist;

static int glist_has(const glist *l, const unsigned char *g, size_t n)
{
    size_t at = 0;
    while (at < l->b.len) {
        uint32_t len;
        memcpy(&len, l->b.p + at, sizeof len);
        at += sizeof len;
        if (len == n && memcmp(l->b.p + at, g, n) == 0) return 1;
        at += len;
    }
    return 0;
}

static int glist_add(void *ctx, const unsigned char *g, size_t n)
{
    glist *l = ctx;
    uint32_t len = (uint32_t)n;
    int rc;
    if (glist_has(l, g, n)) return 0;
    rc = emq_buf_append(&l->b, &len, sizeof len);
    if (rc == EMQ_OK) rc = emq_buf_append(&l->b, g, n);
    if (rc == EMQ_OK) l->n++;
    return rc;
}

/* Step 6: returns EMQ_MORE when a lane was cut by the budget or the budget
 * ran out, EMQ_OK when every lane of the groups was cleared. */
static int ob_lanes(emq_store *st, const char *q, int64_t *budget)
{
    char k[EMQ_KEY_MAX];
    size_t kl, at = 0;
    glist l = {{0}, 0};
    emq_buf lk = {0};
    int64_t left;
    int rc;
    kl = emq_key(k, q, EMQ_KT_RING);
    rc = emq_list_range(st, k, kl, 0, -1, glist_add, &l);
    kl = emq_key(k, q, EMQ_KT_PAUSED);
    if (rc == EMQ_OK) rc = emq_sset_members(st, k, kl, glist_add, &l);
    while (rc == EMQ_OK && at < l.b.len) {
        uint32_t len;
        const unsigned char *g;
        memcpy(&len, l.b.p + at, sizeof len);
        g = l.b.p + at + sizeof len;
        at += sizeof len + len;
        if ((rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g, len)) < 0) break;
        if ((rc = ob_set(st, q, lk.p, lk.len, budget)) < 0) break;
        if ((rc = emq_zset_card(st, lk.p, lk.len, &left)) < 0) break;
        if (left > 0 || *budget <= 0) rc = EMQ_MORE;
    }
    emq_buf_free(&l.b);
    emq_buf_free(&lk);
    return rc;
}

/* Step 7: delete B.repeat:<n> for every member n of B.repeat. */
static int repeat_cb(void *ctx, const unsigned char *m, size_t mlen,
                     double score)
{
    emq_vctx *c = ctx;
    emq_buf k = {0};
    int d, rc = emq_key_buf(&k, c->a[0].s, EMQ_KT_REPEAT_RECORD, m, mlen);
    (void)score;
    if (rc == EMQ_OK) rc = emq_key_del(c->st, k.p, k.len, &d);
    emq_buf_free(&k);
    return rc;
}

/* Steps 7 and 8: the repeat records and the queue's structure keys. */
static int ob_finish(emq_vctx *c)
{
    static const int kts[] = {
        EMQ_KT_METRICS_COMPLETED, EMQ_KT_METRICS_COMPLETED_DATA,
        EMQ_KT_METRICS_FAILED, EMQ_KT_METRICS_FAILED_DATA, EMQ_KT_GACTIVE,
        EMQ_KT_GLIMIT, EMQ_KT_RING, EMQ_KT_WAKE, EMQ_KT_PAUSED,
        EMQ_KT_REPEAT, EMQ_KT_LIMITER, EMQ_KT_META,
    };
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_REPEAT), i;
    int d, rc = emq_zset_range(c->st, k, kl, 0, -1, repeat_cb, c);
    for (i = 0; rc == EMQ_OK && i < sizeof kts / sizeof kts[0]; i++) {
        kl = emq_key(k, c->a[0].s, kts[i]);
        rc = emq_key_del(c->st, k, kl, &d);
    }
    return rc;
}

static int ob_body(emq_vctx *c)
{
    static const int flat[3] = {EMQ_KT_PENDING, EMQ_KT_SCHEDULE,
                                EMQ_KT_DEAD};
    emq_store *st = c->st;
    const char *q = c->a[0].s;
    int force = c->a[1].present && c->a[1].i;
    int64_t budget = c->a[2].present ? c->a[2].i : BUDGET_DEFAULT;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_META);
    int64_t act;
    int paused, i, rc;

    if ((rc = emq_hash_exists(st, k, kl, "paused", 6, &paused)) < 0)
        return rc;
    if (!paused) return emq_db_wire(c->db, EMQ_ENOTPAUSED, MSG_NOT_PAUSED);
    kl = emq_key(k, q, EMQ_KT_ACTIVE);
    if ((rc = emq_zset_card(st, k, kl, &act)) < 0) return rc;
    if (act > 0 && !force)
        return emq_db_wire(c->db, EMQ_EACTIVE, MSG_ACTIVE);
    if (act > 0) {
        if ((rc = ob_set(st, q, k, kl, &budget)) < 0) return rc;
        if (budget <= 0) return EMQ_MORE;
    }
    for (i = 0; i < 3; i++) {
        kl = emq_key(k, q, flat[i]);
        if ((rc = ob_set(st, q, k, kl, &budget)) < 0) return rc;
        if (budget <= 0) return EMQ_MORE;
    }
    if ((rc = ob_lanes(st, q, &budget)) != EMQ_OK) return rc;
    if ((rc = ob_finish(c)) < 0) return rc;
    return EMQ_OK;
}

/*
 * T2.3 obliterate(q, force = false, budget = 1000 >= 1)
 * Keys: B.meta, B(q); derived: B.active, B.pending, B.schedule, B.dead,
 * J(id) / .logs / .lock of every member taken, B.ring, B.paused and the
 * lanes of their groups, B.repeat and B.repeat:<name>, B.metrics:*,
 * B.gactive, B.glimit, B.wake, B.limiter. Left by design (D-8): B.gweight,
 * B.de:*, B.flow:outbox, streams, flow subkeys, lanes of groups neither on
 * the ring nor paused, rows in no set.
 * Replies: 0 done (EMQ_OK) · 1 more (EMQ_MORE: the budget ran out, call
 * again) · "EMQSTATE not paused" (EMQ_ENOTPAUSED) · "EMQSTATE active jobs
 * present" (EMQ_EACTIVE: active jobs and no force). Clock: none.
 */
int emq_v_obliterate(emq_vctx *c)
{
    int rc = ob_body(c);
    if (rc >= 0) emq_reply_int(c->r, rc == EMQ_MORE ? 1 : 0);
    return rc;
}

int emq_obliterate(emq_db *db, const char *q, int force, int64_t budget)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(force ? "1" : "0"),
                     emq_varg_int(budget)};
    return emq_verb_exec(db, EMQ_V_OBLITERATE, a, 3, NULL, NULL);
}

/* --------------------------------------------------------- T2.12 remove_job */

/* 1 when a row exists at J(id) (any fields). */
static int row_exists(emq_store *st, const void *jk, size_t jkl, int *is)
{
    int type, rc = emq_key_type(st, jk, jkl, &type);
    *is = rc == EMQ_OK && type != EMQ_T_NONE;
    return rc;
}

/*
 * T2.12 remove_job(q, id, did = none)
 * Keys: J(id), B.pending, B.active, B.schedule, B.dead, B.de:<did>;
 * derived J(id).lock, J(id).logs. Lanes and B.gactive are not touched
 * (D-9). Replies: 1 ok (EMQ_OK) · -1 gone (EMQ_GONE: no row, judged before
 * the lock) · "EMQLOCK job is locked" (EMQ_ELOCKED: the lock key exists or
 * the row has an unexpired `lock` field). Clock: none (the store's clock
 * judges expiry).
 */
int emq_v_remove_job(emq_vctx *c)
{
    static const int sets[4] = {EMQ_KT_PENDING, EMQ_KT_ACTIVE,
                                EMQ_KT_SCHEDULE, EMQ_KT_DEAD};
    emq_store *st = c->st;
    const char *q = c->a[0].s, *id = c->a[1].s;
    const emq_varg *did = &c->a[2];
    char jk[EMQ_KEY_MAX], k[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN), kl;
    emq_buf v = {0};
    int is, type, field, removed, d, i, rc;

    if ((rc = row_exists(st, jk, jkl, &is)) < 0) return rc;
    if (!is) {
        emq_reply_int(c->r, -1);
        return EMQ_GONE;
    }
    kl = emq_key_of(k, q, EMQ_KT_JOB_LOCK, id, EMQ_ID_LEN);
    if ((rc = emq_key_type(st, k, kl, &type)) < 0) return rc;
    if ((rc = emq_hash_exists(st, jk, jkl, "lock", 4, &field)) < 0)
        return rc;
    if (type != EMQ_T_NONE || field)
        return emq_db_wire(c->db, EMQ_ELOCKED, MSG_LOCKED);
    for (i = 0; i < 4; i++) {
        kl = emq_key(k, q, sets[i]);
        if ((rc = emq_zset_rem(st, k, kl, id, EMQ_ID_LEN, &removed)) < 0)
            return rc;
    }
    if (did->present && did->n > 0) {
        kl = emq_key_of(k, q, EMQ_KT_DEDUP, did->s, did->n);
        rc = emq_str_get(st, k, kl, &v);
        if (rc == EMQ_OK && v.len == EMQ_ID_LEN &&
            memcmp(v.p, id, EMQ_ID_LEN) == 0)
            rc = emq_key_del(st, k, kl, &d);
        emq_buf_free(&v);
        if (rc < 0) return rc;
    }
    if ((rc = job_del(st, q, id, EMQ_ID_LEN, 0)) < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

int emq_job_remove(emq_db *db, const char *q, const char *id,
                   const char *did)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_str(did && did[0] ? did : NULL)};
    return emq_verb_exec(db, EMQ_V_REMOVE_JOB, a, 3, NULL, NULL);
}

/* ------------------------------------------------------ T2.13 reprocess_job */

/* T2.13 on `id` (any bytes) inside the open transaction: EMQ_OK,
 * EMQ_GONE (no row) or EMQ_ENOTDEAD (not a member of B.dead). */
int emq_dead_reprocess(emq_store *st, const char *q, const void *id,
                       size_t n)
{
    char k[EMQ_KEY_MAX];
    size_t kl;
    emq_buf jk = {0};
    int is, removed, added, rc = emq_key_buf(&jk, q, EMQ_KT_JOB, id, n);
    if (rc < 0) goto done;
    if ((rc = row_exists(st, jk.p, jk.len, &is)) < 0) goto done;
    if (!is) { rc = EMQ_GONE; goto done; }
    kl = emq_key(k, q, EMQ_KT_DEAD);
    if ((rc = emq_zset_rem(st, k, kl, id, n, &removed)) < 0) goto done;
    if (!removed) { rc = EMQ_ENOTDEAD; goto done; }
    {
        emq_hop ops[2] = {
            {.op = EMQ_HOP_DEL, .f = {"last_error", 10}},
            {.op = EMQ_HOP_SET, .f = {"state", 5}, .v = {"pending", 7}},
        };
        if ((rc = emq_hash_apply(st, jk.p, jk.len, ops, 2, NULL)) < 0)
            goto done;
    }
    kl = emq_key(k, q, EMQ_KT_PENDING);
    rc = emq_zset_add(st, k, kl, id, n, 0, &added);
done:
    emq_buf_free(&jk);
    return rc;
}

/*
 * T2.13 reprocess_job(q, id)
 * Keys: J(id), B.dead, B.pending. The queue-wide pause is not consulted;
 * attempts are kept; a grouped job re-enters the flat B.pending.
 * Replies: 1 ok (EMQ_OK) · -1 gone (EMQ_GONE) · "EMQSTATE not dead"
 * (EMQ_ENOTDEAD). Clock: none.
 */
int emq_v_reprocess_job(emq_vctx *c)
{
    int rc = emq_dead_reprocess(c->st, c->a[0].s, c->a[1].s, EMQ_ID_LEN);
    if (rc == EMQ_ENOTDEAD) return emq_db_wire(c->db, rc, MSG_NOT_DEAD);
    if (rc < 0) return rc;
    emq_reply_int(c->r, rc == EMQ_GONE ? -1 : 1);
    return rc;
}

int emq_job_reprocess(emq_db *db, const char *q, const char *id)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(id)};
    return emq_verb_exec(db, EMQ_V_REPROCESS_JOB, a, 2, NULL, NULL);
}

/* ------------------------------------------------- requeue every dead job */


int emq_dead_walk_cb(void *ctx, const unsigned char *m, size_t mlen,
                     double score)
{
    emq_dead_walk *w = ctx;
    int rc;
    (void)score;
    if (w->after->present && mlen == w->after->n &&
        memcmp(m, w->after->s, mlen) == 0)
        return 0;
    if (w->bound && mlen == EMQ_ID_LEN && memcmp(m, w->bound, mlen) == 0)
        return 1; /* the bound: stop */
    if (w->seen == w->batch) return 1; /* the batch is full: stop */
    w->seen++;
    if ((rc = emq_buf_set(&w->last, m, mlen)) < 0) return rc;
    rc = emq_dead_reprocess(w->c->st, w->c->a[0].s, m, mlen);
    if (rc == EMQ_OK) w->requeued++;
    else if (rc == EMQ_GONE || rc == EMQ_ENOTDEAD) w->skipped++;
    else return rc;
    return 0;
}

/*
 * requeue_dead_batch(q, batch = 100, after = none) — beyond the wire: T2.13
 * for each of the first `batch` members of B.dead after the member `after`
 * (byte order; dead members all score 0), in one transaction.
 * Keys: B.dead, B.pending, J(id) of each. Reply: [requeued, skipped (no
 * row: T2.13 answered -1 and left it dead), the last member looked at, or
 * nil when fewer than `batch` were left]. Clock: none.
 */
int emq_v_requeue_dead_batch(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_DEAD);
    int64_t batch = c->a[1].present ? c->a[1].i : REQUEUE_BATCH;
    emq_dead_walk w = {c, &c->a[2], NULL, batch, 0, 0, 0, {0}};
    emq_bytes min;
    emq_reply *e;
    int rc;
    min.p = c->a[2].s;
    min.n = c->a[2].n;
    /* `after` itself may still be there (a skipped row-less id): one
     * more than the batch, and skip it. */
    rc = emq_zset_range_lex(c->st, k, kl, c->a[2].present ? &min : NULL,
                            NULL, 0, batch + (c->a[2].present &&
                                              batch < INT64_MAX ? 1 : 0),
                            emq_dead_walk_cb, &w);
    if (rc == 1) rc = EMQ_OK;
    if (rc == EMQ_OK) rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 3);
    if (rc == EMQ_OK) rc = emq_reply_push_int(c->r, w.requeued);
    if (rc == EMQ_OK) rc = emq_reply_push_int(c->r, w.skipped);
    if (rc == EMQ_OK && (e = emq_reply_push(c->r)) == NULL) rc = EMQ_ENOMEM;
    if (rc == EMQ_OK && w.seen >= batch)
        rc = emq_reply_bulk(e, w.last.p, w.last.len);
    emq_buf_free(&w.last);
    return rc;
}

/*
 * requeue_dead(q, batch = 100) — beyond the wire, a procedure: every dead
 * job of q back to pending, as requeue_dead_batch transactions of `batch`
 * members each, so the write lock is never held for more than one batch.
 * Reply: [requeued, skipped]. A crash between two batches leaves the
 * committed ones requeued and the rest dead; running it again finishes
 * (the requeued ones are no longer in B.dead). Jobs that die meanwhile
 * with ids above the cursor are requeued too; below it, they stay dead.
 */
int emq_v_requeue_dead(emq_vctx *c)
{
    emq_varg a[3];
    emq_reply r = {0};
    emq_buf cur = {0};
    int64_t requeued = 0, skipped = 0;
    int rc, more = 1;
    a[0] = c->a[0];
    a[1] = emq_varg_int(c->a[1].present ? c->a[1].i : REQUEUE_BATCH);
    a[2] = emq_varg_str(NULL);
    /* The reply's room first: once a batch committed, nothing may fail. */
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 2)) < 0) return rc;
    while (more) {
        rc = emq_verb_exec(c->db, EMQ_V_REQUEUE_DEAD_BATCH, a, 3, &r, NULL);
        if (rc < 0) goto done;
        requeued += r.elem[0].integer;
        skipped += r.elem[1].integer;
        more = r.elem[2].type == EMQ_REPLY_BULK;
        if (more) {
            /* the cursor: an emq_varg over our own copy, NUL-terminated */
            if ((rc = emq_buf_set(&cur, r.elem[2].str, r.elem[2].len)) < 0)
                goto done;
            a[2] = emq_varg_bytes(cur.p, cur.len);
        }
        emq_reply_clear(&r);
    }
    if (c->out) {
        ((int64_t *)c->out)[0] = requeued;
        ((int64_t *)c->out)[1] = skipped;
    }
    emq_reply_push_int(c->r, requeued);   /* within the room: no failure */
    emq_reply_push_int(c->r, skipped);
done:
    emq_reply_clear(&r);
    emq_buf_free(&cur);
    return rc;
}

int emq_dead_requeue(emq_db *db, const char *q, int64_t batch,
                     int64_t *requeued, int64_t *skipped)
{
    int64_t out[2] = {0, 0};
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(batch)};
    int rc = emq_verb_exec(db, EMQ_V_REQUEUE_DEAD, a, 2, NULL, out);
    if (requeued) *requeued = out[0];
    if (skipped) *skipped = out[1];
    return rc;
}
