/*
 * opverbs.c — the operator's verbs beyond the wire (tier 0, issue 34 item
 * 5): run scheduled jobs now (by id, or every job due before an instant),
 * requeue the dead jobs minted before an instant (a batch with a cursor),
 * and requeue a dead or scheduled job with its payload replaced.
 *
 * Each is one write transaction built from the wire's own moves, so the
 * keyspace stays what the wire could have made (`emqlite check` clean):
 *   - a scheduled job leaves B.schedule exactly as T1.7 promote moves it
 *     (its lane and an OFFER when the row has a group, else B.pending;
 *     state pending; a ghost member gets a one-field row, as T1.7);
 *   - a dead job returns exactly as T2.13 reprocess_job returns it
 *     (last_error deleted, state pending, the flat B.pending).
 * Refusals come before the first write, so a refused call changes nothing.
 */
#include <math.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "groups.h"
#include "jobs.h"
#include "dead.h"

#define MSG_NOT_RETRYABLE "EMQSTATE not dead or scheduled"
#define RUN_DUE_BATCH 100
#define REQUEUE_BATCH 100

/* T1.7 step 2 on one member `id` already removed from B.schedule: to its
 * lane (and OFFER unless paused) or to B.pending; state pending. */
static int promote_one(emq_store *st, const char *q, const void *id,
                       size_t n)
{
    char pk[EMQ_KEY_MAX];
    size_t pkl;
    emq_buf jk = {0}, g = {0};
    emq_bytes fv[2] = {{"state", 5}, {"pending", 7}};
    int added, rc = emq_key_buf(&jk, q, EMQ_KT_JOB, id, n);
    if (rc < 0) goto done;
    if ((rc = emq_hash_get(st, jk.p, jk.len, "group", 5, &g)) < 0) goto done;
    if (rc == EMQ_OK) {
        rc = emq_g_requeue(st, q, g.p, g.len, id, n, 0);
    } else {
        pkl = emq_key(pk, q, EMQ_KT_PENDING);
        rc = emq_zset_add(st, pk, pkl, id, n, 0, &added);
    }
    if (rc >= 0) rc = emq_hash_set(st, jk.p, jk.len, fv, 1, &added);
    if (rc >= 0) rc = EMQ_OK;
done:
    emq_buf_free(&jk);
    emq_buf_free(&g);
    return rc;
}

/* Remove `id` from B.schedule and promote it: 1 moved, 0 not scheduled. */
static int run_one(emq_store *st, const char *q, const void *id, size_t n,
                   int *moved)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_SCHEDULE);
    int removed, rc = emq_zset_rem(st, k, kl, id, n, &removed);
    *moved = 0;
    if (rc < 0 || !removed) return rc < 0 ? rc : EMQ_OK;
    *moved = 1;
    return promote_one(st, q, id, n);
}

/*
 * run_now(q, ids...) — beyond the wire: each id that is a member of
 * B.schedule moves now, as T1.7 promote would move it when due (its run-at
 * is ignored). Keys: B.schedule, B.pending, J(id...), lane family.
 * Reply: one integer per id, in order: 1 moved, 0 not scheduled (pending,
 * active, dead, absent, or an id repeated after it moved). Clock: none.
 */
int emq_v_run_now(emq_vctx *c)
{
    size_t i, n = c->argc - 1;
    int64_t total = 0;
    int rc, moved;
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, n)) < 0) return rc;
    for (i = 0; i < n; i++) {
        const emq_varg *id = &c->a[1 + i];
        if ((rc = run_one(c->st, c->a[0].s, id->s, id->n, &moved)) < 0)
            return rc;
        if ((rc = emq_reply_push_int(c->r, moved)) < 0) return rc;
        total += moved;
    }
    if (c->out) *(int64_t *)c->out = total;
    return EMQ_OK;
}

int emq_job_run_now(emq_db *db, const char *q, size_t n,
                    const char *const *ids, int *verdicts, int64_t *moved)
{
    emq_varg a[1 + 64], *v = a;
    emq_reply r = {0};
    int64_t total = 0;
    size_t i;
    int rc;
    if (moved) *moved = 0;
    if (db == NULL || (n > 0 && ids == NULL)) return EMQ_EINVAL;
    if (n + 1 > sizeof a / sizeof a[0] &&
        (v = emq_mem_calloc(n + 1, sizeof *v)) == NULL)
        return EMQ_ENOMEM;
    v[0] = emq_varg_str(q);
    for (i = 0; i < n; i++) v[1 + i] = emq_varg_str(ids[i]);
    rc = emq_verb_exec(db, EMQ_V_RUN_NOW, v, n + 1, &r, &total);
    if (rc == EMQ_OK && verdicts)
        for (i = 0; i < n && i < r.n; i++)
            verdicts[i] = (int)r.elem[i].integer;
    if (rc == EMQ_OK && moved) *moved = total;
    emq_reply_clear(&r);
    if (v != a) emq_mem_free(v);
    return rc;
}

/*
 * run_due(q, until_ms, batch = 100 > 0) — beyond the wire: T1.7 promote
 * with `until_ms` in place of NOW: up to `batch` members of B.schedule with
 * score <= until_ms, in zset order, move as T1.7 moves them. Keys:
 * B.schedule, B.pending, J(id...), lane family. Reply: the number moved
 * (less than batch: none left due before until_ms). Clock: none.
 */
int emq_v_run_due(emq_vctx *c)
{
    const char *q = c->a[0].s;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_SCHEDULE), i;
    int64_t batch = c->a[2].present ? c->a[2].i : RUN_DUE_BATCH;
    emq_idlist ms = {0};
    int64_t moved = 0;
    int m, rc;
    rc = emq_zset_range_score(c->st, k, kl, -INFINITY, (double)c->a[1].i,
                              batch, emq_idlist_cb, &ms);
    for (i = 0; rc >= 0 && i < ms.n; i++) {
        rc = run_one(c->st, q, ms.v[i].p, ms.v[i].len, &m);
        moved += m;
    }
    emq_idlist_free(&ms);
    if (rc < 0) return rc;
    if (c->out) *(int64_t *)c->out = moved;
    emq_reply_int(c->r, moved);
    return EMQ_OK;
}

int emq_schedule_run_due(emq_db *db, const char *q, int64_t until_ms,
                         int64_t batch, int64_t *moved)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_int(until_ms),
                     emq_varg_int(batch)};
    int64_t n = 0;
    int rc = emq_verb_exec(db, EMQ_V_RUN_DUE, a, 3, NULL, &n);
    if (moved) *moved = rc == EMQ_OK ? n : 0;
    return rc;
}

/* ------------------------------------------------- dead, by mint time */

/* The smallest JOB id minted at or after `ms` (PROTOCOL.md §4 min_for):
 * every JOB id minted before `ms` sorts below it. */
static void job_bound(int64_t ms, char out[EMQ_ID_SIZE])
{
    uint64_t snow = 0;
    int64_t top = (int64_t)(((uint64_t)1 << 41) - 1);
    if (ms > EMQ_EPOCH_MS) {
        int64_t t = ms - EMQ_EPOCH_MS;
        snow = t > top ? (uint64_t)INT64_MAX : (uint64_t)t << 22;
    }
    emq_id_encode("JOB", snow, out);
}

/*
 * requeue_dead_before(q, before_ms, batch = 100 > 0, after = none) —
 * beyond the wire: T2.13 on each of the first `batch` members of B.dead
 * (byte order, after the member `after`) that sort below the smallest JOB
 * id minted at `before_ms`: the JOB ids minted before that instant (ids
 * carry their mint time, PROTOCOL.md §4; the keyspace keeps no time of
 * death). One transaction. Keys: B.dead, B.pending, J(id...).
 * Reply: [requeued, skipped (no row: left dead), the last member looked
 * at, or nil when fewer than `batch` qualified]. Clock: none.
 */
int emq_v_requeue_dead_before(emq_vctx *c)
{
    char k[EMQ_KEY_MAX], bound[EMQ_ID_SIZE];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_DEAD);
    int64_t batch = c->a[2].present ? c->a[2].i : REQUEUE_BATCH;
    emq_dead_walk w = {c, &c->a[3], bound, batch, 0, 0, 0, {0}};
    emq_bytes min, max;
    emq_reply *e;
    int rc;
    job_bound(c->a[1].i, bound);
    min.p = c->a[3].s;
    min.n = c->a[3].n;
    max.p = bound;
    max.n = EMQ_ID_LEN;
    /* [min, max] is inclusive: the bound itself (minted at before_ms)
     * stops the walk in emq_dead_walk_cb. */
    rc = emq_zset_range_lex(c->st, k, kl, c->a[3].present ? &min : NULL,
                            &max, 0, -1, emq_dead_walk_cb, &w);
    if (rc == 1) rc = EMQ_OK;
    if (rc == EMQ_OK) rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 3);
    if (rc == EMQ_OK) rc = emq_reply_push_int(c->r, w.requeued);
    if (rc == EMQ_OK) rc = emq_reply_push_int(c->r, w.skipped);
    if (rc == EMQ_OK && (e = emq_reply_push(c->r)) == NULL) rc = EMQ_ENOMEM;
    if (rc == EMQ_OK && w.seen >= batch)
        rc = emq_reply_bulk(e, w.last.p, w.last.len);
    if (rc == EMQ_OK && c->out) {
        ((int64_t *)c->out)[0] = w.requeued;
        ((int64_t *)c->out)[1] = w.skipped;
    }
    emq_buf_free(&w.last);
    return rc;
}

int emq_dead_requeue_before(emq_db *db, const char *q, int64_t before_ms,
                            int64_t count, int64_t *requeued,
                            int64_t *skipped)
{
    int64_t out[2] = {0, 0};
    emq_varg a[4] = {emq_varg_str(q), emq_varg_int(before_ms),
                     emq_varg_int(count), emq_varg_str(NULL)};
    int rc = emq_verb_exec(db, EMQ_V_REQUEUE_DEAD_BEFORE, a, 4, NULL, out);
    if (requeued) *requeued = rc == EMQ_OK ? out[0] : 0;
    if (skipped) *skipped = rc == EMQ_OK ? out[1] : 0;
    return rc;
}

/* ------------------------------------- requeue with the payload replaced */

/*
 * requeue_edited(q, id, payload) — beyond the wire: replace the payload of
 * a dead or scheduled (failed, waiting for its retry) job and run it again
 * now: a dead job as T2.13 returns it (last_error deleted, B.pending), a
 * scheduled one as T1.7 promotes it (its lane, or B.pending); attempts are
 * kept. Keys: J(id), B.dead, B.schedule, B.pending, lane family.
 * Replies: 1 requeued (EMQ_OK) · -1 gone (EMQ_GONE: no row) ·
 * "EMQSTATE not dead or scheduled" (EMQ_ENOTDEAD: pending, active or in
 * no set; nothing changes). Clock: none.
 */
int emq_v_requeue_edited(emq_vctx *c)
{
    const char *q = c->a[0].s, *id = c->a[1].s;
    char jk[EMQ_KEY_MAX], k[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN), kl;
    emq_bytes fv[2];
    double score;
    int type, dead, sched, added, rc;

    if ((rc = emq_key_type(c->st, jk, jkl, &type)) < 0) return rc;
    if (type == EMQ_T_NONE) {
        emq_reply_int(c->r, -1);
        return EMQ_GONE;
    }
    kl = emq_key(k, q, EMQ_KT_DEAD);
    if ((rc = emq_zset_score(c->st, k, kl, id, EMQ_ID_LEN, &score)) < 0 &&
        rc != EMQ_NOTFOUND)
        return rc;
    dead = rc == EMQ_OK;
    kl = emq_key(k, q, EMQ_KT_SCHEDULE);
    if ((rc = emq_zset_score(c->st, k, kl, id, EMQ_ID_LEN, &score)) < 0 &&
        rc != EMQ_NOTFOUND)
        return rc;
    sched = rc == EMQ_OK;
    if (!dead && !sched)
        return emq_db_wire(c->db, EMQ_ENOTDEAD, MSG_NOT_RETRYABLE);
    fv[0] = (emq_bytes){"payload", 7};
    fv[1] = (emq_bytes){c->a[2].s, c->a[2].n};
    if ((rc = emq_hash_set(c->st, jk, jkl, fv, 1, &added)) < 0) return rc;
    if (dead) rc = emq_dead_reprocess(c->st, q, id, EMQ_ID_LEN);
    else rc = run_one(c->st, q, id, EMQ_ID_LEN, &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

int emq_job_requeue_edited(emq_db *db, const char *q, const char *id,
                           const void *payload, size_t len)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_bytes(payload, len)};
    if (payload == NULL && len > 0) return EMQ_EINVAL;
    if (payload == NULL) a[2] = emq_varg_bytes("", 0);
    return emq_verb_exec(db, EMQ_V_REQUEUE_EDITED, a, 3, NULL, NULL);
}
