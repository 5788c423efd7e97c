/*
 * gatereads.c — the rate and concurrency gate reads (PROTOCOL.md T2.16):
 * is_maxed, get_rate_limit_ttl and get_global_rate_limit.
 *
 * Rule: advisory reads only — no claim enforces what they answer, and none
 * writes (B.meta's `concurrency` and `max` are operator-written, B.limiter
 * is never written by a transition). A value that is not a decimal
 * integer reads as 0.
 */
#include <string.h>
#include "verb.h"

#define MSG_RATE "EMQRATE at concurrency ceiling"

/* The integer of B.meta[f], 0 when absent or not an integer. */
static int meta_int(emq_vctx *c, const char *f, int64_t *v)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_META);
    emq_buf b = {0};
    int rc = emq_hash_get(c->st, k, kl, f, strlen(f), &b);
    *v = 0;
    if (rc == EMQ_OK && emq_parse_i64(b.p, b.len, v) != 0) *v = 0;
    emq_buf_free(&b);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * T2.16 is_maxed(q)
 * Keys: B.meta, B.active. Replies: 0 ok (EMQ_OK) · "EMQRATE at concurrency
 * ceiling" (EMQ_ERATE: meta.concurrency > 0 and card(B.active) >= it).
 * The queue-wide pause is not consulted. Clock: none.
 */
int emq_v_is_maxed(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_ACTIVE);
    int64_t cap, n;
    int rc = meta_int(c, "concurrency", &cap);
    if (rc < 0) return rc;
    if (cap > 0) {
        if ((rc = emq_zset_card(c->st, k, kl, &n)) < 0) return rc;
        if (n >= cap) return emq_db_wire(c->db, EMQ_ERATE, MSG_RATE);
    }
    emq_reply_int(c->r, 0);
    return EMQ_OK;
}

int emq_queue_is_maxed(emq_db *db, const char *q)
{
    emq_varg a[1] = {emq_varg_str(q)};
    return emq_verb_exec(db, EMQ_V_IS_MAXED, a, 1, NULL, NULL);
}

/*
 * T2.16 get_rate_limit_ttl(q, max_jobs = 0 >= 0)
 * Keys: B.limiter, B.meta. m = max_jobs, or meta.max when max_jobs = 0; if
 * m > 0 and m <= the limiter's integer (0 if absent) and the limiter's
 * remaining TTL p > 0: reply p; otherwise 0. Reply: an integer (ms).
 * Clock: none (the remaining TTL is judged at the read's clock).
 */
int emq_v_get_rate_limit_ttl(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_LIMITER);
    emq_buf b = {0};
    int64_t m = c->a[1].present ? c->a[1].i : 0, used = 0, p = 0;
    int rc = EMQ_OK;
    if (m == 0) rc = meta_int(c, "max", &m);
    if (rc == EMQ_OK && m > 0) {
        rc = emq_str_get(c->st, k, kl, &b);
        if (rc == EMQ_OK && emq_parse_i64(b.p, b.len, &used) != 0) used = 0;
        if (rc == EMQ_NOTFOUND) rc = EMQ_OK;
        if (rc == EMQ_OK && m <= used) rc = emq_key_pttl(c->st, k, kl, &p);
    }
    emq_buf_free(&b);
    if (rc < 0) return rc;
    emq_reply_int(c->r, p > 0 ? p : 0);
    if (c->out) *(int64_t *)c->out = p > 0 ? p : 0;
    return EMQ_OK;
}

int emq_rate_limit_ttl_get(emq_db *db, const char *q, int64_t max_jobs,
                           int64_t *ttl_ms)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(max_jobs)};
    int64_t v = 0;
    int rc = emq_verb_exec(db, EMQ_V_GET_RATE_LIMIT_TTL, a, 2, NULL, &v);
    if (ttl_ms) *ttl_ms = v;
    return rc;
}

/*
 * T2.16 get_global_rate_limit(q)
 * Keys: B.meta. Reply: the integer of meta.max, 0 when absent. Clock: none.
 */
int emq_v_get_global_rate_limit(emq_vctx *c)
{
    int64_t v;
    int rc = meta_int(c, "max", &v);
    if (rc < 0) return rc;
    if (c->out) *(int64_t *)c->out = v;
    emq_reply_int(c->r, v);
    return EMQ_OK;
}

int emq_rate_limit_get(emq_db *db, const char *q, int64_t *max)
{
    emq_varg a[1] = {emq_varg_str(q)};
    int64_t v = 0;
    int rc = emq_verb_exec(db, EMQ_V_GET_GLOBAL_RATE_LIMIT, a, 1, NULL, &v);
    if (max) *max = v;
    return rc;
}
