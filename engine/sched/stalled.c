/*
 * stalled.c — T5.11 the stalled sweep (PROTOCOL.md §6.5): lapsed leases
 * count a stall on their row and are recovered or, at the threshold,
 * dead-lettered; and the job_stalled? read.
 *
 * Rule: group-aware like reap — the row's group loses its in-flight slot
 * either way; a recovered grouped job goes back to its lane and is offered
 * (unless the lane is paused), a dead one is not offered, so a lane whose
 * slot it frees waits off the ring. Attempts are untouched and flow links
 * are not consulted (a stalled child does not notify its parent).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "groups.h"

#define STALLED_LIMIT 100
#define STALLED_MAX 1

typedef struct lapsed {
    emq_buf *v;
    size_t n, cap;
} lapsed;

static int collect(void *ctx, const unsigned char *m, size_t mlen, double s)
{
    lapsed *l = ctx;
    (void)s;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        emq_buf *v = emq_mem_realloc(l->v, cap * sizeof *v);
        if (v == NULL) return EMQ_ENOMEM;
        memset(v + l->cap, 0, (cap - l->cap) * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    return emq_buf_set(&l->v[l->n++], m, mlen) == EMQ_OK ? 0 : EMQ_ENOMEM;
}

/* Step 2 for one lapsed id (already removed from B.active): *dead = 1 when
 * it reached the threshold. */
static int judge(emq_store *st, const char *q, const emq_buf *id,
                 int64_t max_stalled, int *dead)
{
    char k[EMQ_KEY_MAX];
    size_t kl;
    emq_buf jk = {0}, g = {0}, lk = {0};
    emq_hop ops[2];
    int64_t act, one;
    int has_g, paused, added, rc;

    *dead = 0;
    if ((rc = emq_key_buf(&jk, q, EMQ_KT_JOB, id->p, id->len)) < 0) goto done;
    /* 2.1: g = group; st = HINCRBY stalled 1 (creates a ghost's row). */
    memset(ops, 0, sizeof ops);
    ops[0].op = EMQ_HOP_GET;
    ops[0].f.p = "group";
    ops[0].f.n = 5;
    ops[0].out = &g;
    ops[1].op = EMQ_HOP_INCR;
    ops[1].f.p = "stalled";
    ops[1].f.n = 7;
    ops[1].by = 1;
    if ((rc = emq_hash_apply(st, jk.p, jk.len, ops, 2, NULL)) < 0) goto done;
    has_g = ops[0].found;
    /* 2.2: the group's in-flight slot. */
    if (has_g && (rc = emq_g_charge(st, q, g.p, g.len, -1, &act)) < 0)
        goto done;
    if (ops[1].result >= max_stalled) {
        /* 2.3: dead-letter. */
        emq_bytes fv[4] = {{"state", 5}, {"dead", 4}, {"last_error", 10},
                           {"stalled", 7}};
        *dead = 1;
        if ((rc = emq_hash_set(st, jk.p, jk.len, fv, 2, &added)) < 0)
            goto done;
        kl = emq_key(k, q, EMQ_KT_DEAD);
        if ((rc = emq_zset_add(st, k, kl, id->p, id->len, 0, &added)) < 0)
            goto done;
        kl = emq_key(k, q, EMQ_KT_METRICS_FAILED);
        rc = emq_hash_incrby(st, k, kl, "count", 5, 1, &one);
        goto done;
    }
    /* 2.4: recover into the lane (offered unless paused) or pending. */
    if (has_g) {
        if ((rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g.p, g.len)) < 0 ||
            (rc = emq_zset_add(st, lk.p, lk.len, id->p, id->len, 0,
                               &added)) < 0 ||
            (rc = emq_g_paused(st, q, g.p, g.len, &paused)) < 0)
            goto done;
        if (!paused && ((rc = emq_g_gact(st, q, g.p, g.len, &act)) < 0 ||
                        (rc = emq_g_offer(st, q, g.p, g.len, act)) < 0))
            goto done;
    } else {
        kl = emq_key(k, q, EMQ_KT_PENDING);
        if ((rc = emq_zset_add(st, k, kl, id->p, id->len, 0, &added)) < 0)
            goto done;
    }
    {
        emq_bytes fv[2] = {{"state", 5}, {"pending", 7}};
        rc = emq_hash_set(st, jk.p, jk.len, fv, 1, &added);
    }
done:
    emq_buf_free(&jk);
    emq_buf_free(&g);
    emq_buf_free(&lk);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * T5.11 stalled_check(q, max_stalled = 1 > 0, limit = 100 > 0)
 * Keys: B.active, B.pending, B.dead; derived J(*), the lane family,
 * B.metrics:failed. Reply: [recovered ids, dead ids] (c->out, when given:
 * an emq_stalled filled alike). Clock: NOW (lapsed = score <= NOW).
 */
int emq_v_stalled_check(emq_vctx *c)
{
    const char *q = c->a[0].s;
    int64_t max_stalled = c->a[1].present ? c->a[1].i : STALLED_MAX;
    int64_t limit = c->a[2].present ? c->a[2].i : STALLED_LIMIT;
    char ak[EMQ_KEY_MAX];
    size_t akl = emq_key(ak, q, EMQ_KT_ACTIVE), i;
    lapsed l = {0};
    emq_reply *rec, *dead;
    int removed, is_dead, rc;

    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 2)) < 0) goto done;
    if ((rec = emq_reply_push(c->r)) == NULL ||
        (rc = emq_reply_array(rec, EMQ_REPLY_ARRAY, 0)) < 0 ||
        (dead = emq_reply_push(c->r)) == NULL ||
        (rc = emq_reply_array(dead, EMQ_REPLY_ARRAY, 0)) < 0) {
        rc = EMQ_ENOMEM;
        goto done;
    }
    rc = emq_zset_range_score(c->st, ak, akl, -INFINITY, (double)c->now,
                              limit, collect, &l);
    if (rc > 0) rc = EMQ_ENOMEM;
    if (rc < 0) goto done;
    for (i = 0; i < l.n; i++) {
        rc = emq_zset_rem(c->st, ak, akl, l.v[i].p, l.v[i].len, &removed);
        if (rc < 0) goto done;
        if ((rc = judge(c->st, q, &l.v[i], max_stalled, &is_dead)) < 0)
            goto done;
        rc = emq_reply_push_bulk(&c->r->elem[is_dead], l.v[i].p,
                                 l.v[i].len);
        if (rc < 0) goto done;
    }
    rc = EMQ_OK;
done:
    for (i = 0; i < l.cap; i++) emq_buf_free(&l.v[i]);
    emq_mem_free(l.v);
    return rc;
}

/*
 * T5.11 job_stalled?(q, id) — a host read.
 * Keys: J(id). Reply: true when field `stalled` is present and its integer
 * > 0, else false. Clock: none.
 */
int emq_v_job_stalled(emq_vctx *c)
{
    char jk[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, c->a[0].s, EMQ_KT_JOB, c->a[1].s, c->a[1].n);
    emq_buf v = {0};
    int64_t n = 0;
    int rc = emq_hash_get(c->st, jk, jkl, "stalled", 7, &v);
    if (rc == EMQ_OK && emq_parse_i64(v.p, v.len, &n) != 0) n = 0;
    emq_buf_free(&v);
    if (rc < 0) return rc;
    emq_reply_bool(c->r, n > 0);
    return EMQ_OK;
}

/* ------------------------------------------------------------ typed calls */

void emq_stalled_clear(emq_stalled *s)
{
    if (s == NULL) return;
    emq_mem_free(s->recovered);
    emq_mem_free(s->dead);
    memset(s, 0, sizeof *s);
}

/* Copy the ids of reply array `a` into a new array of ids. */
static int ids_of(const emq_reply *a, char (**out)[EMQ_ID_SIZE], size_t *n)
{
    size_t i;
    *out = emq_mem_calloc(a->n ? a->n : 1, EMQ_ID_SIZE);
    if (*out == NULL) return EMQ_ENOMEM;
    for (i = 0; i < a->n; i++) {
        if (a->elem[i].len != EMQ_ID_LEN) return EMQ_ECORRUPT;
        memcpy((*out)[i], a->elem[i].str, EMQ_ID_LEN);
    }
    *n = a->n;
    return EMQ_OK;
}

int emq_stalled_check(emq_db *db, const char *q, int64_t max_stalled,
                      int64_t limit, emq_stalled *out)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_int(max_stalled),
                     emq_varg_int(limit)};
    emq_reply r = {0};
    int rc;
    if (out) memset(out, 0, sizeof *out);
    rc = emq_verb_exec(db, EMQ_V_STALLED_CHECK, a, 3, &r, NULL);
    if (rc == EMQ_OK && out) {
        if ((rc = ids_of(&r.elem[0], &out->recovered, &out->nrecovered)) < 0 ||
            (rc = ids_of(&r.elem[1], &out->dead, &out->ndead)) < 0) {
            emq_stalled_clear(out);
            emq_db_fail(db, rc, rc == EMQ_ECORRUPT ? "the active set holds "
                        "a member that is not a 14-byte id" : NULL);
        }
    }
    emq_reply_clear(&r);
    return rc;
}

int emq_job_stalled(emq_db *db, const char *q, const char *id, int *stalled)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(id)};
    emq_reply r = {0};
    int rc;
    if (stalled) *stalled = 0;
    rc = emq_verb_exec(db, EMQ_V_JOB_STALLED, a, 2, &r, NULL);
    if (rc == EMQ_OK && stalled) *stalled = (int)r.integer;
    emq_reply_clear(&r);
    return rc;
}
