/*
 * model_t2.c — the model's Tier 2 (PROTOCOL.md §6.2): the pause flag, drain
 * and obliterate, the read plane, row edits, logs, remove and reprocess,
 * batch claims, delay and the rate reads, each from its block's steps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "model_int.h"

#define Q(c) ((c)->a[0].s)
#define ARG(c, i) (&(c)->a[i])

/* The job row key of argument 1 (an id). */
static void row(char *j, mcall *c)
{
    jk(j, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, NULL);
}

/* T2.1 pause(q) */
int mv_set_paused(mcall *c)
{
    char k[KMAX];
    qk(k, Q(c), "meta");
    mh_sets(c->m, k, "paused", "1", 1);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T2.1 resume(q) */
int mv_clear_paused(mcall *c)
{
    char k[KMAX];
    qk(k, Q(c), "meta");
    mh_del(c->m, k, "paused", 6);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* JOBDEL every member of B.<set>, then delete it: the member count. */
static int64_t drain_set(emq_model *m, const char *q, const char *set)
{
    char k[KMAX];
    mbs *ids;
    size_t n, i;
    qk(k, q, set);
    n = mz_head(m, k, -1, 0, 0, &ids);
    for (i = 0; i < n; i++) t1_jobdel(m, q, ids[i].p, ids[i].n, 0);
    mk_del(m, k);
    mb_free_list(ids, n);
    return (int64_t)n;
}

/* T2.2 drain(q, include_schedule = false) */
int mv_drain(mcall *c)
{
    int64_t n = drain_set(c->m, Q(c), "pending");
    if (ARG(c, 1)->present && ARG(c, 1)->i)
        n += drain_set(c->m, Q(c), "schedule");
    mr_int(c->r, n);
    return EMQ_OK;
}

/* OBDEL the first `*budget` members of zset `k` and remove them; returns
 * how many. */
static int64_t obdel_head(emq_model *m, const char *q, const char *k,
                          int64_t budget)
{
    mbs *ids;
    size_t n, i;
    n = mz_head(m, k, budget, 0, 0, &ids);
    for (i = 0; i < n; i++) {
        t1_jobdel(m, q, ids[i].p, ids[i].n, 1);
        mz_rem(m, k, ids[i].p, ids[i].n);
    }
    mb_free_list(ids, n);
    return (int64_t)n;
}

/* Append a copy of `g` to the list unless it holds it already. */
static void add_group(mbs **v, size_t *n, const mbs *g)
{
    size_t j;
    for (j = 0; j < *n; j++)
        if (mb_eq(&(*v)[j], g->p, g->n)) return;
    *v = realloc(*v, (*n + 1) * sizeof **v);
    if (*v == NULL) abort();
    (*v)[(*n)++] = mb_dup(g->p, g->n);
}

/* T2.3 obliterate(q, force = false, budget = 1000) */
int mv_obliterate(mcall *c)
{
    static const char *const flat[3] = {"pending", "schedule", "dead"};
    static const char *const gone[12] = {
        "metrics:completed", "metrics:completed:data", "metrics:failed",
        "metrics:failed:data", "gactive", "glimit", "ring", "wake", "paused",
        "repeat", "limiter", "meta"};
    const char *q = Q(c);
    int force = ARG(c, 1)->present && ARG(c, 1)->i;
    int64_t budget = ARG(c, 2)->present ? ARG(c, 2)->i : 1000, n;
    char k[KMAX];
    const unsigned char *v;
    size_t vl, i, ng = 0;
    mbs *groups = NULL, *members;
    mkey *key;
    int rc = EMQ_OK;

    qk(k, q, "meta");
    if (!mh_get(c->m, k, "paused", 6, &v, &vl))
        return mc_err(c, EMQ_ENOTPAUSED, "EMQSTATE not paused");
    qk(k, q, "active");
    if (mz_card(c->m, k) > 0 && !force)
        return mc_err(c, EMQ_EACTIVE, "EMQSTATE active jobs present");
    if ((n = obdel_head(c->m, q, k, budget)) > 0) {
        budget -= n;
        if (budget <= 0) goto more;
    }
    for (i = 0; i < 3; i++) {
        qk(k, q, flat[i]);
        budget -= obdel_head(c->m, q, k, budget);
        if (budget <= 0) goto more;
    }
    /* the groups: ring order, then paused groups off the ring (memcmp) */
    qk(k, q, "ring");
    if (mk_get(c->m, k, EMQ_T_LIST, 0, &key) == 1)
        for (i = 0; i < key->ln; i++) add_group(&groups, &ng, &key->l[i]);
    qk(k, q, "paused");
    if (mk_get(c->m, k, EMQ_T_SET, 0, &key) == 1)
        for (i = 0; i < key->sn; i++) add_group(&groups, &ng, &key->s[i]);
    for (i = 0; i < ng; i++) {
        lk(k, q, groups[i].p, groups[i].n);
        budget -= obdel_head(c->m, q, k, budget);
        if (mz_card(c->m, k) > 0 || budget <= 0) goto more;
    }
    qk(k, q, "repeat");
    n = (int64_t)mz_head(c->m, k, -1, 0, 0, &members);
    for (i = 0; i < (size_t)n; i++) {
        char rk[KMAX];
        snprintf(rk, sizeof rk, "emq:{%s}:repeat:%.*s", q,
                 (int)members[i].n, (const char *)members[i].p);
        mk_del(c->m, rk);
    }
    mb_free_list(members, (size_t)n);
    for (i = 0; i < 12; i++) {
        qk(k, q, gone[i]);
        mk_del(c->m, k);
    }
    mr_int(c->r, 0);
    goto done;
more:
    mr_int(c->r, 1);
done:
    mb_free_list(groups, ng);
    return rc;
}

static int64_t metric(emq_model *m, const char *q, const char *name)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    int64_t n = 0;
    snprintf(k, sizeof k, "emq:{%s}:metrics:%s", q, name);
    if (mh_get(m, k, "count", 5, &v, &vl)) m_parse(v, vl, &n);
    return n;
}

/* T2.4 counts(q, names) */
int mv_counts(mcall *c)
{
    static const char *const sets[4] = {"pending", "active", "schedule",
                                        "dead"};
    size_t i, j;
    for (i = c->nfixed; i < c->argc; i++) {
        const marg *a = &c->a[i];
        int ok = 0;
        for (j = 0; j < 4; j++) ok |= a->n == strlen(sets[j]) &&
                                      memcmp(a->s, sets[j], a->n) == 0;
        ok |= (a->n == 9 && memcmp(a->s, "completed", 9) == 0) ||
              (a->n == 6 && memcmp(a->s, "failed", 6) == 0);
        if (!ok) {
            char msg[300];
            snprintf(msg, sizeof msg, "unknown_state(%.*s)", (int)a->n,
                     a->s);
            return mc_refuse(c, msg);
        }
    }
    mr_array(c->r, EMQ_REPLY_MAP);
    for (i = c->nfixed; i < c->argc; i++) {
        const marg *a = &c->a[i];
        char k[KMAX];
        int dup = 0;
        for (j = c->nfixed; j < i; j++)
            dup |= c->a[j].n == a->n && memcmp(c->a[j].s, a->s, a->n) == 0;
        if (dup) continue;
        mr_push_bulk(c->r, a->s, a->n);
        if ((a->n == 9 && memcmp(a->s, "completed", 9) == 0) ||
            (a->n == 6 && memcmp(a->s, "failed", 6) == 0)) {
            char name[16];
            snprintf(name, sizeof name, "%.*s", (int)a->n, a->s);
            mr_push_int(c->r, metric(c->m, Q(c), name));
        } else {
            char set[16];
            snprintf(set, sizeof set, "%.*s", (int)a->n, a->s);
            qk(k, Q(c), set);
            mr_push_int(c->r, mz_card(c->m, k));
        }
    }
    return EMQ_OK;
}

/* T2.5 get_job(q, id): the row as a map, nil when absent */
int mv_get_job(mcall *c)
{
    char j[KMAX];
    mkey *h;
    size_t i;
    row(j, c);
    if ((h = mh_all(c->m, j)) == NULL) return EMQ_OK;
    mr_array(c->r, EMQ_REPLY_MAP);
    for (i = 0; i < h->hn; i++) {
        mr_push_bulk(c->r, h->h[i].f.p, h->h[i].f.n);
        mr_push_bulk(c->r, h->h[i].v.p, h->h[i].v.n);
    }
    return EMQ_OK;
}

/* T2.5 get_job_state(q, id) */
int mv_get_job_state(mcall *c)
{
    static const char *const sets[4] = {"pending", "active", "schedule",
                                        "dead"};
    static const char *const names[4] = {"pending", "active", "scheduled",
                                         "dead"};
    const marg *id = ARG(c, 1);
    char k[KMAX];
    const unsigned char *v;
    size_t vl, i;
    for (i = 0; i < 4; i++) {
        qk(k, Q(c), sets[i]);
        if (mz_has(c->m, k, id->s, id->n)) {
            mr_bulk(c->r, names[i], strlen(names[i]));
            return EMQ_OK;
        }
    }
    row(k, c);
    if (mh_get(c->m, k, "state", 5, &v, &vl) && vl == 17 &&
        memcmp(v, "awaiting_children", 17) == 0)
        mr_bulk(c->r, "awaiting_children", 17);
    else if (mk_exists(c->m, k))
        mr_bulk(c->r, "unknown", 7);
    else
        mr_bulk(c->r, "absent", 6);
    return EMQ_OK;
}

/* T2.6 get_metrics(q, which) */
int mv_get_metrics(mcall *c)
{
    const char *which = ARG(c, 1)->i == 0 ? "completed" : "failed";
    char k[KMAX];
    mr_array(c->r, EMQ_REPLY_MAP);
    mr_push_bulk(c->r, "count", 5);
    mr_push_int(c->r, metric(c->m, Q(c), which));
    snprintf(k, sizeof k, "emq:{%s}:metrics:%s:data", Q(c), which);
    mr_push_bulk(c->r, "data_points", 11);
    mr_push_int(c->r, ml_len(c->m, k));
    return EMQ_OK;
}

/* T2.7 get_deduplication_job_id(q, did) */
int mv_get_dedup(mcall *c)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    snprintf(k, sizeof k, "emq:{%s}:de:%.*s", Q(c), (int)ARG(c, 1)->n,
             ARG(c, 1)->s);
    if (ms_get(c->m, k, &v, &vl)) mr_bulk(c->r, v, vl);
    return EMQ_OK;
}

/* T2.8 update_data(q, id, payload) */
int mv_update_data(mcall *c)
{
    char j[KMAX];
    row(j, c);
    if (!mk_exists(c->m, j)) {
        mr_int(c->r, -1);
        return EMQ_OK;
    }
    mh_sets(c->m, j, "payload", ARG(c, 2)->s, ARG(c, 2)->n);
    mr_int(c->r, 1);
    return EMQ_OK;
}

static void buf_puts(emq_buf *b, const char *s)
{
    emq_buf_append(b, s, strlen(s));
}

/* JSON-S of §6.0 */
static void json_s(emq_buf *b, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t i;
    for (i = 0; i < n; i++) {
        char t[8];
        switch (s[i]) {
        case '"': emq_buf_append(b, "\\\"", 2); break;
        case '\\': emq_buf_append(b, "\\\\", 2); break;
        case '/': emq_buf_append(b, "\\/", 2); break;
        case 0x08: emq_buf_append(b, "\\b", 2); break;
        case 0x09: emq_buf_append(b, "\\t", 2); break;
        case 0x0A: emq_buf_append(b, "\\n", 2); break;
        case 0x0C: emq_buf_append(b, "\\f", 2); break;
        case 0x0D: emq_buf_append(b, "\\r", 2); break;
        default:
            if (s[i] < 0x20 || s[i] == 0x7F) {
                snprintf(t, sizeof t, "\\u%04x", s[i]);
                emq_buf_append(b, t, 6);
            } else {
                emq_buf_append(b, &s[i], 1);
            }
        }
    }
}

/* T2.9 update_progress(q, id, progress): the event after the write */
int mv_update_progress(mcall *c)
{
    const marg *id = ARG(c, 1), *pr = ARG(c, 2);
    char j[KMAX], ch[KMAX];
    emq_buf e = {0};
    row(j, c);
    if (!mk_exists(c->m, j)) {
        mr_int(c->r, -1);
        return EMQ_OK;
    }
    mh_sets(c->m, j, "progress", pr->s, pr->n);
    buf_puts(&e, "{\"event\":\"progress\",\"job\":\"");
    json_s(&e, id->s, id->n);
    buf_puts(&e, "\",\"progress\":\"");
    json_s(&e, pr->s, pr->n);
    buf_puts(&e, "\"}");
    qk(ch, Q(c), "events");
    free(c->m->pub_ch.p);
    free(c->m->pub_msg.p);
    c->m->pub_ch = mb_dup(ch, strlen(ch));
    c->m->pub_msg = mb_dup(e.p, e.len);
    c->m->published = 1;
    emq_buf_free(&e);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T2.10 add_log(q, id, line, keep = 0) */
int mv_add_log(mcall *c)
{
    char j[KMAX], k[KMAX];
    int64_t keep = ARG(c, 3)->present ? ARG(c, 3)->i : 0, count;
    row(j, c);
    if (!mk_exists(c->m, j)) {
        mr_int(c->r, -1);
        return EMQ_OK;
    }
    jk(k, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, "logs");
    count = ml_push(c->m, k, 1, ARG(c, 2)->s, ARG(c, 2)->n);
    if (keep > 0) {
        ml_trim(c->m, k, -keep, -1);
        if (keep < count) {
            mr_int(c->r, keep);
            return EMQ_OK;
        }
    }
    mr_int(c->r, count);
    return EMQ_OK;
}

/* T2.11 get_job_logs(q, id): nil when the row is gone */
int mv_get_job_logs(mcall *c)
{
    char j[KMAX], k[KMAX];
    mkey *l;
    size_t i;
    row(j, c);
    if (!mk_exists(c->m, j)) return EMQ_OK;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    jk(k, Q(c), ARG(c, 1)->s, ARG(c, 1)->n, "logs");
    if (mk_get(c->m, k, EMQ_T_LIST, 0, &l) == 1)
        for (i = 0; i < l->ln; i++) mr_push_bulk(c->r, l->l[i].p, l->l[i].n);
    return EMQ_OK;
}

/* T2.12 remove_job(q, id, did = none) */
int mv_remove_job(mcall *c)
{
    static const char *const sets[4] = {"pending", "active", "schedule",
                                        "dead"};
    const marg *id = ARG(c, 1), *did = ARG(c, 2);
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl, i;
    row(j, c);
    if (!mk_exists(c->m, j)) {
        mr_int(c->r, -1);
        return EMQ_OK;
    }
    jk(k, Q(c), id->s, id->n, "lock");
    if (mk_exists(c->m, k) || mh_get(c->m, j, "lock", 4, &v, &vl))
        return mc_err(c, EMQ_ELOCKED, "EMQLOCK job is locked");
    for (i = 0; i < 4; i++) {
        qk(k, Q(c), sets[i]);
        mz_rem(c->m, k, id->s, id->n);
    }
    if (did->present && did->n > 0) {
        snprintf(k, sizeof k, "emq:{%s}:de:%.*s", Q(c), (int)did->n, did->s);
        if (ms_get(c->m, k, &v, &vl) && vl == id->n &&
            memcmp(v, id->s, vl) == 0)
            mk_del(c->m, k);
    }
    t1_jobdel(c->m, Q(c), id->s, id->n, 0);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T2.13 reprocess_job(q, id) */
int mv_reprocess_job(mcall *c)
{
    const marg *id = ARG(c, 1);
    char j[KMAX], k[KMAX];
    row(j, c);
    if (!mk_exists(c->m, j)) {
        mr_int(c->r, -1);
        return EMQ_OK;
    }
    qk(k, Q(c), "dead");
    if (!mz_rem(c->m, k, id->s, id->n))
        return mc_err(c, EMQ_ENOTDEAD, "EMQSTATE not dead");
    mh_del(c->m, j, "last_error", 10);
    mh_sets(c->m, j, "state", "pending", 7);
    qk(k, Q(c), "pending");
    mz_add(c->m, k, id->s, id->n, 0);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* T2.14 claim_batch(q, size, lease_ms) */
int mv_claim_batch(mcall *c)
{
    char k[KMAX];
    int64_t depth, want, i, att;
    mr_array(c->r, EMQ_REPLY_ARRAY);
    if (t1_queue_paused(c->m, Q(c))) return EMQ_OK;
    qk(k, Q(c), "pending");
    depth = mz_card(c->m, k);
    want = ARG(c, 1)->i < depth ? ARG(c, 1)->i : depth;
    for (i = 0; i < want; i++) {
        mbs id = t1_pop_first(c->m, k);
        if (id.p == NULL) break;
        t1_lease(c->m, Q(c), &id, c->now + ARG(c, 2)->i, &att);
        t1_fill_claimed(c->m, mr_push(c->r), Q(c), &id, att, NULL);
        free(id.p);
    }
    return EMQ_OK;
}

/* T2.15 delay(q, id, token, ms, mode = in) */
int mv_delay(mcall *c)
{
    const marg *id = ARG(c, 1);
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl;
    int at = ARG(c, 4)->present && ARG(c, 4)->i == 1;
    if (!m_is_job(id->s, id->n)) return mc_err(c, EMQ_EKIND, MSG_KIND);
    row(j, c);
    if (!mh_get(c->m, j, "attempts", 8, &v, &vl))
        return mc_err(c, EMQ_ESTALE, MSG_GONE);
    if (!m_token_eq(v, vl, ARG(c, 2)->i))
        return mc_err(c, EMQ_ESTALE, "EMQSTALE delay token mismatch");
    qk(k, Q(c), "active");
    mz_rem(c->m, k, id->s, id->n);
    mh_sets(c->m, j, "state", "scheduled", 9);
    qk(k, Q(c), "schedule");
    mz_add(c->m, k, id->s, id->n,
           at ? (double)ARG(c, 3)->i
              : (double)c->now + (double)ARG(c, 3)->i);
    mr_int(c->r, 1);
    return EMQ_OK;
}

/* The integer a hash field holds (0 when absent or not a number). */
static int64_t hint(emq_model *m, const char *k, const char *f)
{
    const unsigned char *v;
    size_t vl;
    int64_t n = 0;
    if (mh_get(m, k, f, strlen(f), &v, &vl) && !m_parse(v, vl, &n)) n = 0;
    return n;
}

/* T2.16 is_maxed(q) */
int mv_is_maxed(mcall *c)
{
    char k[KMAX];
    int64_t cap;
    qk(k, Q(c), "meta");
    cap = hint(c->m, k, "concurrency");
    qk(k, Q(c), "active");
    if (cap > 0 && mz_card(c->m, k) >= cap)
        return mc_err(c, EMQ_ERATE, "EMQRATE at concurrency ceiling");
    mr_int(c->r, 0);
    return EMQ_OK;
}

/* T2.16 get_rate_limit_ttl(q, max_jobs) */
int mv_rate_limit_ttl(mcall *c)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    int64_t mx = ARG(c, 1)->present ? ARG(c, 1)->i : 0, used = 0, p;
    if (mx == 0) {
        qk(k, Q(c), "meta");
        mx = hint(c->m, k, "max");
    }
    qk(k, Q(c), "limiter");
    if (ms_get(c->m, k, &v, &vl) && !m_parse(v, vl, &used)) used = 0;
    if (mx > 0 && mx <= used && (p = ms_pttl(c->m, k)) > 0) {
        mr_int(c->r, p);
        return EMQ_OK;
    }
    mr_int(c->r, 0);
    return EMQ_OK;
}

/* T2.16 get_global_rate_limit(q) */
int mv_global_rate_limit(mcall *c)
{
    char k[KMAX];
    qk(k, Q(c), "meta");
    mr_int(c->r, hint(c->m, k, "max"));
    return EMQ_OK;
}
