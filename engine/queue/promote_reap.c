/*
 * promote_reap.c — the time-driven moves of PROTOCOL.md §6.1 and §6.3: T1.7
 * promote (due scheduled jobs to pending), T1.8 reap (lapsed leases back to
 * pending) and T3.11 reap_group (one group's lapsed leases back to its lane);
 * and the member lists (jobs.h) the bounded moves collect first.
 *
 * Rule: the due members are read first (in zset order, bounded), then moved
 * one by one; a grouped row goes to its lane and is offered, an ungrouped
 * one to B.pending; the row's state is set last and recreates a one-field
 * row for a ghost id. Neither consults the queue-wide pause.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "groups.h"
#include "jobs.h"

#define REAP_CAP 100

int emq_idlist_cb(void *ctx, const unsigned char *m, size_t mlen, double s)
{
    emq_idlist *ms = ctx;
    (void)s;
    if (ms->n == ms->cap) {
        size_t cap = ms->cap ? ms->cap * 2 : 16;
        emq_buf *v = emq_mem_realloc(ms->v, cap * sizeof *v);
        if (v == NULL) return EMQ_ENOMEM;
        memset(v + ms->cap, 0, (cap - ms->cap) * sizeof *v);
        ms->v = v;
        ms->cap = cap;
    }
    return emq_buf_set(&ms->v[ms->n++], m, mlen);
}

void emq_idlist_free(emq_idlist *ms)
{
    size_t i;
    for (i = 0; i < ms->cap; i++) emq_buf_free(&ms->v[i]);
    emq_mem_free(ms->v);
    memset(ms, 0, sizeof *ms);
}

enum { MOVE_PROMOTE, MOVE_REAP };

/* Move one member out of its set (already removed by the caller) to its
 * lane (g: the row's group, or NULL) or to B.pending, and set its row's
 * state to pending (jk: the row's key). */
static int to_pending(emq_store *st, const char *q, const emq_buf *m,
                      const emq_buf *jk, const emq_buf *g, int how)
{
    char pk[EMQ_KEY_MAX];
    size_t pkl;
    emq_bytes fv[2] = {{"state", 5}, {"pending", 7}};
    int added, rc;

    if (g) {
        rc = emq_g_requeue(st, q, g->p, g->len, m->p, m->len,
                           how == MOVE_REAP);
    } else {
        pkl = emq_key(pk, q, EMQ_KT_PENDING);
        rc = emq_zset_add(st, pk, pkl, m->p, m->len, 0, &added);
    }
    if (rc >= 0) rc = emq_hash_set(st, jk->p, jk->len, fv, 1, &added);
    return rc < 0 ? rc : EMQ_OK;
}

/* Move up to `limit` members of key type `from` with score <= NOW; the
 * count moved is the reply. With `only` (T3.11) just the members whose
 * row's group is those bytes move; the others stay where they are. */
static int sweep(emq_vctx *c, int from, int how, int64_t limit,
                 const emq_varg *only)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, from), i;
    emq_idlist ms = {0};
    emq_buf jk = {0}, g = {0};
    int64_t moved = 0;
    int removed, has_g, rc;

    rc = emq_zset_range_score(st, k, kl, -INFINITY, (double)c->now, limit,
                              emq_idlist_cb, &ms);
    if (rc < 0) goto done;
    for (i = 0; i < ms.n; i++) {
        rc = emq_key_buf(&jk, q, EMQ_KT_JOB, ms.v[i].p, ms.v[i].len);
        if (rc < 0) goto done;
        if ((rc = emq_hash_get(st, jk.p, jk.len, "group", 5, &g)) < 0)
            goto done;
        has_g = rc == EMQ_OK;
        if (only && !(has_g && g.len == only->n &&
                      memcmp(g.p, only->s, g.len) == 0))
            continue;
        rc = emq_zset_rem(st, k, kl, ms.v[i].p, ms.v[i].len, &removed);
        if (rc < 0) goto done;
        rc = to_pending(st, q, &ms.v[i], &jk, has_g ? &g : NULL, how);
        if (rc < 0) goto done;
        moved++;
    }
    emq_reply_int(c->r, moved);
    rc = EMQ_OK;
done:
    emq_idlist_free(&ms);
    emq_buf_free(&jk);
    emq_buf_free(&g);
    return rc;
}

/*
 * T1.7 promote(q, batch > 0)
 * Keys: B.schedule, B.pending, J(*), lane family.
 * Reply: the number moved. Clock: NOW (due = score <= NOW).
 */
int emq_v_promote(emq_vctx *c)
{
    return sweep(c, EMQ_KT_SCHEDULE, MOVE_PROMOTE, c->a[1].i, NULL);
}

/*
 * T1.8 reap(q) — at most 100 lapsed leases per call.
 * Keys: B.active, B.pending, J(*), lane family.
 * Reply: the number reaped. Clock: NOW (lapsed = score <= NOW).
 */
int emq_v_reap(emq_vctx *c)
{
    return sweep(c, EMQ_KT_ACTIVE, MOVE_REAP, REAP_CAP, NULL);
}

/*
 * T3.11 reap_group(q, g, limit = 100 > 0) — of the first `limit` lapsed
 * leases (every group's count against the limit), those of group g return
 * to lane(g): gactive[g] - 1 (field deleted at <= 0), OFFER unless g is
 * paused, state pending. Other groups' and ungrouped leases stay in
 * B.active. The row's `group` is only read.
 * Keys: B.active, J(*), lane(g), B.gactive, B.glimit, B.paused, B.ring,
 * B.wake. Reply: the number recovered. Clock: NOW.
 */
int emq_v_reap_group(emq_vctx *c)
{
    return sweep(c, EMQ_KT_ACTIVE, MOVE_REAP,
                 c->a[2].present ? c->a[2].i : REAP_CAP, &c->a[1]);
}

/* A typed call whose reply is a count. */
static int count_call(emq_db *db, int verb, emq_varg *a, size_t argc,
                      int64_t *count)
{
    emq_reply r = {0};
    int rc;
    if (count) *count = 0;
    rc = emq_verb_exec(db, verb, a, argc, &r, NULL);
    if (rc == EMQ_OK && count) *count = r.integer;
    return rc;
}

int emq_promote(emq_db *db, const char *q, int64_t batch, int64_t *count)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(batch)};
    return count_call(db, EMQ_V_PROMOTE, a, 2, count);
}

int emq_reap(emq_db *db, const char *q, int64_t *count)
{
    emq_varg a[1] = {emq_varg_str(q)};
    return count_call(db, EMQ_V_REAP, a, 1, count);
}

int emq_lane_reap(emq_db *db, const char *q, const char *g, int64_t limit,
                  int64_t *count)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(g),
                     emq_varg_int(limit)};
    return count_call(db, EMQ_V_REAP_GROUP, a, 3, count);
}
