/*
 * laneops.c — the operator verbs of the fair lanes (PROTOCOL.md §6.3): T3.5
 * weight, T3.6/T3.7 lane pause and resume, T3.8 limit, T3.9 reassign, T3.10
 * lane drain and the T3.12 depth reads, with their typed calls. (T3.11
 * reap_group is a sweep: sweep.c; the admissions and claims: lanes.c.)
 *
 * Rule: B.ring holds exactly the groups that may be served now — lane
 * non-empty, not paused, below the ceiling — so every verb that changes one
 * of those three for a group either OFFERs it (which pushes a wake token) or
 * takes every copy of it off the ring. Backlog and in-flight work are never
 * touched by a pause, a limit or a weight.
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "groups.h"
#include "jobs.h"

/*
 * T3.5 weight(q, g, w >= 1): set B.gweight[g] = w. No ring change.
 * Keys: B.gweight. Reply: 1 ok (EMQ_OK). Clock: none.
 */
int emq_v_weight(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_GWEIGHT);
    char num[24];
    emq_bytes fv[2] = {{c->a[1].s, c->a[1].n}, emq_varg_text(&c->a[2], num)};
    int added, rc = emq_hash_set(c->st, k, kl, fv, 1, &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T3.6 lane_pause(q, g): add g to B.paused and take it off the ring. Its
 * lane and in-flight work are left as they are.
 * Keys: B.paused, B.ring. Reply: 1 ok (EMQ_OK). Clock: none.
 */
int emq_v_lane_pause(emq_vctx *c)
{
    const char *q = c->a[0].s, *g = c->a[1].s;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_PAUSED);
    int added, rc = emq_sset_add(c->st, k, kl, g, EMQ_ID_LEN, &added);
    if (rc < 0) return rc;
    if ((rc = emq_g_unring(c->st, q, g, EMQ_ID_LEN)) < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T3.7 lane_resume(q, g): remove g from B.paused; OFFER(g, GACT(g)) when
 * its lane holds work.
 * Keys: B.paused, B.ring, B.glimit, B.gactive, B.wake, lane(g).
 * Reply: 1 ok (EMQ_OK). Clock: none.
 */
int emq_v_lane_resume(emq_vctx *c)
{
    const char *q = c->a[0].s, *g = c->a[1].s;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_PAUSED);
    int64_t act;
    int busy, removed, rc = emq_sset_rem(c->st, k, kl, g, EMQ_ID_LEN,
                                         &removed);
    if (rc < 0) return rc;
    if ((rc = emq_g_busy(c->st, q, g, EMQ_ID_LEN, &busy)) < 0) return rc;
    if (busy) {
        if ((rc = emq_g_gact(c->st, q, g, EMQ_ID_LEN, &act)) < 0) return rc;
        if ((rc = emq_g_offer(c->st, q, g, EMQ_ID_LEN, act)) < 0) return rc;
    }
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T3.8 limit(q, g, n > 0): set B.glimit[g] = n; at or above the ceiling
 * (GACT(g) >= n) g leaves the ring; below it, an unpaused g with work that
 * is not on the ring is pushed onto it with a wake token (OFFER under the
 * new limit).
 * Keys: B.glimit, B.gactive, B.ring, B.paused, B.wake, lane(g).
 * Reply: 1 ok (EMQ_OK). Clock: none.
 */
int emq_v_limit(emq_vctx *c)
{
    const char *q = c->a[0].s, *g = c->a[1].s;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_GLIMIT);
    char num[24];
    emq_bytes fv[2] = {{g, EMQ_ID_LEN}, emq_varg_text(&c->a[2], num)};
    int64_t act;
    int added, paused, busy, rc = emq_hash_set(c->st, k, kl, fv, 1, &added);
    if (rc < 0) return rc;
    if ((rc = emq_g_gact(c->st, q, g, EMQ_ID_LEN, &act)) < 0) return rc;
    if (act >= c->a[2].i) {
        rc = emq_g_unring(c->st, q, g, EMQ_ID_LEN);
    } else {
        if ((rc = emq_g_paused(c->st, q, g, EMQ_ID_LEN, &paused)) < 0)
            return rc;
        if (!paused &&
            (rc = emq_g_busy(c->st, q, g, EMQ_ID_LEN, &busy)) >= 0 && busy)
            rc = emq_g_offer(c->st, q, g, EMQ_ID_LEN, act);
    }
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T3.9 reassign(q, id, dst): move a job waiting in its lane to lane(dst)
 * at score 0 and rewrite its row's group; OFFER(dst, GACT(dst)) unless dst
 * is paused; an emptied source lane leaves the ring.
 * Keys: J(id), lane(dst), B.ring, B.paused, B.glimit, B.gactive, B.wake,
 * lane(src).
 * Replies: 1 reassigned (EMQ_OK) · 0 noop (EMQ_NOOP: src = dst, whatever
 * the job's state) · -1 not_found (EMQ_GONE: no row, or a row without a
 * group) · -2 not_pending (EMQ_NOTPENDING: not a member of its lane —
 * claimed, scheduled, dead). Clock: none.
 */
int emq_v_reassign(emq_vctx *c)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s, *id = c->a[1].s, *dst = c->a[2].s;
    char jk[EMQ_KEY_MAX], lk[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    size_t lkl = emq_key_of(lk, q, EMQ_KT_LANE, dst, EMQ_ID_LEN);
    emq_buf src = {0}, sk = {0};
    emq_bytes fv[2] = {{"group", 5}, {dst, EMQ_ID_LEN}};
    int64_t v = 1, act;
    int removed, added, paused, busy, rc;

    if ((rc = emq_hash_get(st, jk, jkl, "group", 5, &src)) < 0) goto done;
    if (rc == EMQ_NOTFOUND) { v = -1; goto reply; }
    if (src.len == EMQ_ID_LEN && memcmp(src.p, dst, EMQ_ID_LEN) == 0) {
        v = 0;
        goto reply;
    }
    if ((rc = emq_key_buf(&sk, q, EMQ_KT_LANE, src.p, src.len)) < 0)
        goto done;
    if ((rc = emq_zset_rem(st, sk.p, sk.len, id, EMQ_ID_LEN, &removed)) < 0)
        goto done;
    if (!removed) { v = -2; goto reply; }
    if ((rc = emq_zset_add(st, lk, lkl, id, EMQ_ID_LEN, 0, &added)) < 0 ||
        (rc = emq_hash_set(st, jk, jkl, fv, 1, &added)) < 0 ||
        (rc = emq_g_paused(st, q, dst, EMQ_ID_LEN, &paused)) < 0)
        goto done;
    if (!paused &&
        ((rc = emq_g_gact(st, q, dst, EMQ_ID_LEN, &act)) < 0 ||
         (rc = emq_g_offer(st, q, dst, EMQ_ID_LEN, act)) < 0))
        goto done;
    if ((rc = emq_g_busy(st, q, src.p, src.len, &busy)) < 0) goto done;
    if (!busy && (rc = emq_g_unring(st, q, src.p, src.len)) < 0)
        goto done;
reply:
    emq_reply_int(c->r, v);
    rc = v == 1 ? EMQ_OK : v == 0 ? EMQ_NOOP : v == -1 ? EMQ_GONE
                                             : EMQ_NOTPENDING;
done:
    emq_buf_free(&src);
    emq_buf_free(&sk);
    return rc;
}

/*
 * T3.10 lane_drain(q, g): JOBDEL every member of lane(g) (its row and its
 * logs; a lock key stays), delete the lane, take g off the ring. Active
 * jobs of g, B.gactive, B.paused, B.glimit, B.gweight and other lanes are
 * untouched.
 * Keys: lane(g), J(*), J(*).logs, B.ring. Reply: the member count.
 * Clock: none.
 */
int emq_v_lane_drain(emq_vctx *c)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s, *g = c->a[1].s;
    char lk[EMQ_KEY_MAX];
    size_t lkl = emq_key_of(lk, q, EMQ_KT_LANE, g, EMQ_ID_LEN), i;
    emq_idlist ms = {0};
    emq_buf k = {0};
    int deleted, rc;

    rc = emq_zset_range(st, lk, lkl, 0, -1, emq_idlist_cb, &ms);
    for (i = 0; rc >= 0 && i < ms.n; i++) {
        if ((rc = emq_key_buf(&k, q, EMQ_KT_JOB, ms.v[i].p, ms.v[i].len)) < 0
            || (rc = emq_key_del(st, k.p, k.len, &deleted)) < 0)
            break;
        if ((rc = emq_key_buf(&k, q, EMQ_KT_JOB_LOGS, ms.v[i].p,
                              ms.v[i].len)) >= 0)
            rc = emq_key_del(st, k.p, k.len, &deleted);
    }
    if (rc >= 0 && (rc = emq_key_del(st, lk, lkl, &deleted)) >= 0)
        rc = emq_g_unring(st, q, g, EMQ_ID_LEN);
    if (rc >= 0) {
        emq_reply_int(c->r, (int64_t)ms.n);
        rc = EMQ_OK;
    }
    emq_idlist_free(&ms);
    emq_buf_free(&k);
    return rc;
}

/*
 * T3.12 depth(q, g): card(lane(g)), 0 for a lane never filled.
 * Keys: lane(g). Reply: the depth. Clock: none (read transaction).
 */
int emq_v_depth(emq_vctx *c)
{
    int64_t n;
    int rc = emq_g_depth(c->st, c->a[0].s, c->a[1].s, EMQ_ID_LEN, &n);
    if (rc < 0) return rc;
    emq_reply_int(c->r, n);
    return EMQ_OK;
}

/*
 * T3.12 lane_depths(q, groups...): a map group -> card(lane(group)), one
 * entry per distinct group in the order first given (an empty list: an
 * empty map).
 * Keys: lane(g1), lane(g2), ... Reply: the map. Clock: none (read
 * transaction).
 */
int emq_v_lane_depths(emq_vctx *c)
{
    size_t i, j;
    int64_t n;
    int rc = emq_reply_array(c->r, EMQ_REPLY_MAP, 2 * (c->argc - 1));
    for (i = 1; rc >= 0 && i < c->argc; i++) {
        const char *g = c->a[i].s;
        for (j = 1; j < i && strcmp(c->a[j].s, g) != 0; j++)
            ;
        if (j < i) continue;            /* a repeat: one entry per group */
        if ((rc = emq_g_depth(c->st, c->a[0].s, g, EMQ_ID_LEN, &n)) >= 0 &&
            (rc = emq_reply_push_bulk(c->r, g, EMQ_ID_LEN)) >= 0)
            rc = emq_reply_push_int(c->r, n);
    }
    return rc < 0 ? rc : EMQ_OK;
}

/* ------------------------------------------------------- the typed calls */

/* A verb of (q, g[, n]) whose reply is 1. */
static int group_call(emq_db *db, int verb, const char *q, const char *g,
                      const int64_t *n)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(g), {0}};
    if (n) a[2] = emq_varg_int(*n);
    return emq_verb_exec(db, verb, a, n ? 3 : 2, NULL, NULL);
}

int emq_lane_weight(emq_db *db, const char *q, const char *g, int64_t w)
{
    return group_call(db, EMQ_V_WEIGHT, q, g, &w);
}

int emq_lane_pause(emq_db *db, const char *q, const char *g)
{
    return group_call(db, EMQ_V_LANE_PAUSE, q, g, NULL);
}

int emq_lane_resume(emq_db *db, const char *q, const char *g)
{
    return group_call(db, EMQ_V_LANE_RESUME, q, g, NULL);
}

int emq_lane_limit(emq_db *db, const char *q, const char *g, int64_t n)
{
    return group_call(db, EMQ_V_LIMIT, q, g, &n);
}

int emq_reassign(emq_db *db, const char *q, const char *id, const char *dst)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(id), emq_varg_str(dst)};
    return emq_verb_exec(db, EMQ_V_REASSIGN, a, 3, NULL, NULL);
}

/* A verb of (q, g) whose reply is a count. */
static int count_call(emq_db *db, int verb, const char *q, const char *g,
                      int64_t *n)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(g)};
    emq_reply r = {0};
    int rc;
    if (n) *n = 0;
    rc = emq_verb_exec(db, verb, a, 2, &r, NULL);
    if (rc == EMQ_OK && n) *n = r.integer;
    return rc;
}

int emq_lane_drain(emq_db *db, const char *q, const char *g, int64_t *count)
{
    return count_call(db, EMQ_V_LANE_DRAIN, q, g, count);
}

int emq_lane_depth(emq_db *db, const char *q, const char *g, int64_t *depth)
{
    return count_call(db, EMQ_V_DEPTH, q, g, depth);
}

int emq_lane_depths(emq_db *db, const char *q, size_t n,
                    const char *const *groups, int64_t *depths)
{
    emq_varg *a;
    emq_reply r = {0};
    size_t i, k;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n > 0 && (groups == NULL || depths == NULL)) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL groups or "
                                           "depths");
    }
    if ((a = emq_mem_calloc(n + 1, sizeof *a)) == NULL)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    a[0] = emq_varg_str(q);
    for (i = 0; i < n; i++) a[1 + i] = emq_varg_str(groups[i]);
    rc = emq_verb_exec(db, EMQ_V_LANE_DEPTHS, a, n + 1, &r, NULL);
    /* The map holds each distinct group once: look every input up. */
    for (i = 0; rc == EMQ_OK && i < n; i++) {
        depths[i] = 0;
        for (k = 0; k + 1 < r.n; k += 2)
            if (strcmp(r.elem[k].str, groups[i]) == 0) {
                depths[i] = r.elem[k + 1].integer;
                break;
            }
    }
    emq_reply_clear(&r);
    emq_mem_free(a);
    return rc;
}
