/*
 * model_t5.c — the model's Tier 5 without streams (PROTOCOL.md §6.5): the
 * repeat registry (T5.8) and the pump sweep (T5.9), backoff (T5.10), the
 * stalled sweep (T5.11) and the lock plane's store writes (T5.12), each as
 * its parts (the steps the reference's host issues) and as its whole verb.
 * HOST-NOW is the call's clock (D-11).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "model_int.h"

#define Q(c) ((c)->a[0].s)
#define ARG(c, i) (&(c)->a[i])

/* B.repeat:<name> */
static void rk(char *b, const char *q, const marg *name)
{
    snprintf(b, KMAX, "emq:{%s}:repeat:%.*s", q, (int)name->n, name->s);
}

/* T5.8 register(q, name, every_ms, template, first_in_ms) */
int mv_repeat_register(mcall *c)
{
    char k[KMAX], b[32];
    rk(k, Q(c), ARG(c, 1));
    if (mk_exists(c->m, k)) {
        mr_int(c->r, 0);
        return EMQ_OK;
    }
    mh_sets(c->m, k, "every_ms", b, m_fmt(b, ARG(c, 2)->i));
    mh_sets(c->m, k, "template", ARG(c, 3)->s, ARG(c, 3)->n);
    qk(k, Q(c), "repeat");
    mz_add(c->m, k, ARG(c, 1)->s, ARG(c, 1)->n,
           (double)c->now +
               (double)(ARG(c, 4)->present ? ARG(c, 4)->i : 0));
    mr_int(c->r, 1);
    return EMQ_OK;
}

static int cancel(emq_model *m, const char *q, const void *name, size_t n)
{
    char k[KMAX];
    int r;
    qk(k, q, "repeat");
    r = mz_rem(m, k, name, n);
    snprintf(k, sizeof k, "emq:{%s}:repeat:%.*s", q, (int)n,
             (const char *)name);
    mk_del(m, k);
    return r;
}

/* T5.8 cancel(q, name) */
int mv_repeat_cancel(mcall *c)
{
    mr_int(c->r, cancel(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n));
    return EMQ_OK;
}

static int advance(emq_model *m, const char *q, const void *name, size_t n,
                   int64_t now, int64_t every)
{
    char h[KMAX], z[KMAX];
    snprintf(h, sizeof h, "emq:{%s}:repeat:%.*s", q, (int)n,
             (const char *)name);
    qk(z, q, "repeat");
    if (!mk_exists(m, h)) {
        mz_rem(m, z, name, n);
        return 0;
    }
    mz_add(m, z, name, n, (double)now + (double)every);
    return 1;
}

/* T5.8 advance(q, name, every_ms) */
int mv_repeat_advance(mcall *c)
{
    mr_int(c->r, advance(c->m, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, c->now,
                         ARG(c, 2)->i));
    return EMQ_OK;
}

/* The due registrations: [[name, every_ms | nil, template | nil]...] */
static void due(emq_model *m, const char *q, int64_t now, int64_t limit,
                emq_reply *r)
{
    char k[KMAX];
    mbs *names;
    size_t n, i;
    qk(k, q, "repeat");
    n = mz_head(m, k, limit, 1, (double)now, &names);
    mr_array(r, EMQ_REPLY_ARRAY);
    for (i = 0; i < n; i++) {
        emq_reply *t = mr_push(r);
        const unsigned char *v;
        size_t vl;
        char h[KMAX];
        snprintf(h, sizeof h, "emq:{%s}:repeat:%.*s", q, (int)names[i].n,
                 (const char *)names[i].p);
        mr_array(t, EMQ_REPLY_ARRAY);
        mr_push_bulk(t, names[i].p, names[i].n);
        if (mh_get(m, h, "every_ms", 8, &v, &vl)) mr_push_bulk(t, v, vl);
        else mr_nil(mr_push(t));
        if (mh_get(m, h, "template", 8, &v, &vl)) mr_push_bulk(t, v, vl);
        else mr_nil(mr_push(t));
    }
    mb_free_list(names, n);
}

/* T5.8 due(q, limit) */
int mv_repeat_due(mcall *c)
{
    due(c->m, Q(c), c->now, ARG(c, 1)->i, c->r);
    return EMQ_OK;
}

/* T5.8 count(q) */
int mv_repeat_count(mcall *c)
{
    return mc_card(c, "repeat");
}

/* T5.9 sweep(q, batch = 100): promote, fire the due registrations, the
 * flow sweep; {promoted, fired, delivered} */
int mv_sweep(mcall *c)
{
    const char *q = Q(c);
    int64_t batch = ARG(c, 1)->present ? ARG(c, 1)->i : 100, promoted;
    int64_t fired = 0, delivered;
    emq_reply d = {0};
    size_t i;
    promoted = t1_promote(c->m, q, c->now, batch);
    due(c->m, q, c->now, batch, &d);
    for (i = 0; i < d.n; i++) {
        const emq_reply *name = &d.elem[i].elem[0];
        const emq_reply *every = &d.elem[i].elem[1];
        const emq_reply *tpl = &d.elem[i].elem[2];
        int64_t ms;
        char id[15];
        if (every->type != EMQ_REPLY_BULK || tpl->type != EMQ_REPLY_BULK) {
            cancel(c->m, q, name->str, name->len);
            continue;
        }
        if (!m_parse(every->str, every->len, &ms)) continue;
        m_mint(c->m, c->now, id);
        if (t1_admit(c->m, q, id, 14, tpl->str, tpl->len, "pending", 0) < 0)
            continue;
        advance(c->m, q, name->str, name->len, c->now, ms);
        fired++;
    }
    model_reply_free(&d);
    delivered = t4_deliver_all(c->m, q, batch);
    mr_array(c->r, EMQ_REPLY_MAP);
    mr_push_bulk(c->r, "promoted", 8);
    mr_push_int(c->r, promoted);
    mr_push_bulk(c->r, "fired", 5);
    mr_push_int(c->r, fired);
    mr_push_bulk(c->r, "delivered", 9);
    mr_push_int(c->r, delivered);
    return EMQ_OK;
}

/* ------------------------------------------------------------- backoff */

/* A word of the policy's tail equal to `w`. */
static int word_is(const marg *a, const char *w)
{
    return a->n == strlen(w) && memcmp(a->s, w, a->n) == 0;
}

/* The delay of the policy whose words (prefix order, as the trace's nested
 * array flattens: ["jitter", ["fixed", 0]] is jitter fixed 0) are
 * a[0..n) at `attempts`: 0 with *out, or -1 (a malformed policy, or a
 * jitter over a positive bound, which is random). */
static int backoff(const marg *a, size_t n, int64_t attempts, int64_t *out)
{
    int64_t x, y;
    if (n == 0) return -1;
    if (word_is(&a[0], "fixed")) {
        if (n != 2 || !m_parse(a[1].s, a[1].n, &x) || x < 0) return -1;
        *out = x;
        return 0;
    }
    if (word_is(&a[0], "exponential")) {
        int64_t k;
        if (n != 3 || !m_parse(a[1].s, a[1].n, &x) ||
            !m_parse(a[2].s, a[2].n, &y) || x < 1 || y < 1)
            return -1;
        /* min(base x 2^(attempts-1), cap), doubling no further than cap */
        for (k = 1; k < attempts && x < y; k++) x = x > y / 2 ? y : x * 2;
        *out = x < y ? x : y;
        return 0;
    }
    if (word_is(&a[0], "jitter")) {
        if (backoff(a + 1, n - 1, attempts, &x) != 0 || x > 0) return -1;
        *out = 0; /* a uniform integer in [0, bound], bound <= 0 */
        return 0;
    }
    return -1;
}

/* T5.10 backoff(attempts, policy...): host, pure */
int mv_backoff(mcall *c)
{
    int64_t d;
    if (backoff(&c->a[c->nfixed], c->argc - c->nfixed, ARG(c, 0)->i, &d))
        return EMQ_EINVAL;
    mr_int(c->r, d);
    return EMQ_OK;
}

/* ----------------------------------------------------- stalled sweep */

/* T5.11 stalled_check(q, max_stalled = 1, limit = 100) */
int mv_stalled_check(mcall *c)
{
    const char *q = Q(c);
    int64_t maxs = ARG(c, 1)->present ? ARG(c, 1)->i : 1;
    int64_t limit = ARG(c, 2)->present ? ARG(c, 2)->i : 100, st, n;
    char k[KMAX], j[KMAX];
    mbs *ids;
    size_t ne, i;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    mr_array(mr_push(c->r), EMQ_REPLY_ARRAY);   /* recovered */
    mr_array(mr_push(c->r), EMQ_REPLY_ARRAY);   /* dead      */
    qk(k, q, "active");
    ne = mz_head(c->m, k, limit, 1, (double)c->now, &ids);
    for (i = 0; i < ne; i++) {
        mbs g;
        mz_rem(c->m, k, ids[i].p, ids[i].n);
        jk(j, q, ids[i].p, ids[i].n, NULL);
        g = mh_dup(c->m, j, "group");
        mh_incrby(c->m, j, "stalled", 7, 1, &st);
        if (g.p) g_charge(c->m, q, g.p, g.n, -1);
        if (st >= maxs) {
            char d[KMAX];
            mh_sets(c->m, j, "state", "dead", 4);
            mh_sets(c->m, j, "last_error", "stalled", 7);
            qk(d, q, "dead");
            mz_add(c->m, d, ids[i].p, ids[i].n, 0);
            qk(d, q, "metrics:failed");
            mh_incrby(c->m, d, "count", 5, 1, &n);
            mr_push_bulk(&c->r->elem[1], ids[i].p, ids[i].n);
        } else {
            char d[KMAX];
            if (g.p) {
                lk(d, q, g.p, g.n);
                mz_add(c->m, d, ids[i].p, ids[i].n, 0);
                if (!g_paused(c->m, q, g.p, g.n))
                    g_offer(c->m, q, g.p, g.n, g_act(c->m, q, g.p, g.n));
            } else {
                qk(d, q, "pending");
                mz_add(c->m, d, ids[i].p, ids[i].n, 0);
            }
            mh_sets(c->m, j, "state", "pending", 7);
            mr_push_bulk(&c->r->elem[0], ids[i].p, ids[i].n);
        }
        free(g.p);
    }
    mb_free_list(ids, ne);
    return EMQ_OK;
}

/* T5.11 job_stalled?(q, id) */
int mv_job_stalled(mcall *c)
{
    char j[KMAX];
    const unsigned char *v;
    size_t vl;
    int64_t n = 0;
    jk(j, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, NULL);
    mr_bool(c->r, mh_get(c->m, j, "stalled", 7, &v, &vl) &&
                      m_parse(v, vl, &n) && n > 0);
    return EMQ_OK;
}

/* --------------------------------------------------------- lock plane */

static void lock_key(char *b, mcall *c)
{
    jk(b, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, "lock");
}

static void row_key(char *b, mcall *c)
{
    jk(b, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, NULL);
}

/* T5.12 track, part 1: lock_key_set(q, id, token, ttl_ms) -> OK */
int mv_lock_key_set(mcall *c)
{
    char k[KMAX], b[32];
    lock_key(k, c);
    ms_set(c->m, k, b, m_fmt(b, ARG(c, 2)->i), c->now + ARG(c, 3)->i);
    mr_status(c->r, "OK");
    return EMQ_OK;
}

/* T5.12 track, part 2: lock_field_set(q, id, token) -> fields created */
int mv_lock_field_set(mcall *c)
{
    char k[KMAX], b[32];
    row_key(k, c);
    mr_int(c->r, mh_sets(c->m, k, "lock", b, m_fmt(b, ARG(c, 2)->i)));
    return EMQ_OK;
}

/* T5.12 untrack: lock_key_del / lock_field_del(q, id) -> deleted */
int mv_lock_key_del(mcall *c)
{
    char k[KMAX];
    lock_key(k, c);
    mr_int(c->r, mk_del(c->m, k));
    return EMQ_OK;
}

int mv_lock_field_del(mcall *c)
{
    char k[KMAX];
    row_key(k, c);
    mr_int(c->r, mh_del(c->m, k, "lock", 4));
    return EMQ_OK;
}

/* T5.12 beat, per extended id: lock_key_refresh(q, id, ttl_ms) -> 1 / 0 */
int mv_lock_key_refresh(mcall *c)
{
    char k[KMAX];
    lock_key(k, c);
    mr_int(c->r, ms_pexpire(c->m, k, ARG(c, 2)->i));
    return EMQ_OK;
}

/* T5.12 defaults: marker TTL = max(1, round(lease x 2)) of the 30000 ms
 * lease */
#define MARKER_TTL 60000

/* T5.12 track(q, id, token, marker_ttl_ms): the lock key and the lock
 * field, both with the marker TTL; nil */
int mv_lock_track(mcall *c)
{
    char k[KMAX], b[32];
    int64_t ttl = ARG(c, 3)->present ? ARG(c, 3)->i : MARKER_TTL;
    size_t n = m_fmt(b, ARG(c, 2)->i);
    lock_key(k, c);
    ms_set(c->m, k, b, n, c->now + ttl);
    row_key(k, c);
    mh_sets(c->m, k, "lock", b, n);
    mh_expire_field(c->m, k, "lock", c->now + ttl);
    return EMQ_OK;
}

/* T5.12 untrack(q, id): nil */
int mv_lock_untrack(mcall *c)
{
    char k[KMAX];
    lock_key(k, c);
    mk_del(c->m, k);
    row_key(k, c);
    mh_del(c->m, k, "lock", 4);
    return EMQ_OK;
}

/* T5.12 beat(q, [(id, token)...], lease_ms, marker_ttl_ms): T1.12 over the
 * pairs, then the markers of every extended id refreshed;
 * {dropped: [ids], extended: n} */
int mv_lock_beat(mcall *c)
{
    const char *q = Q(c);
    int64_t ttl = ARG(c, 2)->present ? ARG(c, 2)->i : MARKER_TTL, ext = 0;
    char k[KMAX];
    size_t i;
    mr_array(c->r, EMQ_REPLY_MAP);
    mr_push_bulk(c->r, "dropped", 7);
    mr_array(mr_push(c->r), EMQ_REPLY_ARRAY);
    for (i = c->nfixed; i + 1 < c->argc; i += 2) {
        const marg *id = &c->a[i];
        const unsigned char *v;
        size_t vl;
        jk(k, q, id->s, id->n, NULL);
        if (!mh_get(c->m, k, "attempts", 8, &v, &vl) ||
            !m_token_eq(v, vl, c->a[i + 1].i)) {
            mr_push_bulk(&c->r->elem[1], id->s, id->n);
            continue;
        }
        if (mh_get(c->m, k, "lock", 4, &v, &vl))
            mh_expire_field(c->m, k, "lock", c->now + ttl);
        qk(k, q, "active");
        mz_add(c->m, k, id->s, id->n, (double)c->now + (double)ARG(c, 1)->i);
        ext++;
    }
    /* the refreshes follow the extension (two steps in the reference) */
    for (i = c->nfixed; i + 1 < c->argc; i += 2) {
        const emq_reply *d = &c->r->elem[1];
        size_t j;
        int was_dropped = 0;
        for (j = 0; j < d->n; j++)
            was_dropped |= d->elem[j].len == c->a[i].n &&
                           memcmp(d->elem[j].str, c->a[i].s, c->a[i].n) == 0;
        if (was_dropped) continue;
        jk(k, q, c->a[i].s, c->a[i].n, "lock");
        ms_pexpire(c->m, k, ttl);
    }
    mr_push_bulk(c->r, "extended", 8);
    mr_push_int(c->r, ext);
    return EMQ_OK;
}
