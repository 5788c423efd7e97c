/*
 * backoff.c — T5.10 backoff (PROTOCOL.md §6.5): the delay a caller puts on
 * a retry after a failed attempt, as a pure host function, its `backoff`
 * verb, the policy's text form, and the handle's random source.
 *
 * Policies: fixed(ms >= 0) -> ms; exponential(base >= 1, cap >= 1) ->
 * min(base * 2^(attempts - 1), cap), computed exactly (no overflow: a
 * product past the cap is the cap); jitter(inner) -> a uniform integer in
 * [0, inner(attempts)], 0 when the inner bound is <= 0. The verb takes the
 * policy as its words in prefix order ("jitter", "exponential", "5", "40"),
 * the text form joins the same words with ':'.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "verb.h"

#define JITTER_MAX 8

/* splitmix64: the handle's generator and the process-wide fallback. */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t seed_of(const void *p)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
           (uint64_t)(uintptr_t)p;
}

static _Thread_local uint64_t fallback_state;

static uint64_t fallback_random(void *ctx)
{
    (void)ctx;
    if (fallback_state == 0) fallback_state = seed_of(&fallback_state) | 1;
    return splitmix(&fallback_state);
}

uint64_t emq_sched_random(emq_db *db)
{
    if (db->sched.random) return db->sched.random(db->sched.random_ctx);
    if (db->sched.rng == 0) db->sched.rng = seed_of(db) | 1;
    return splitmix(&db->sched.rng);
}

uint64_t emq_sched_random_cb(void *db)
{
    return emq_sched_random(db);
}

void emq_set_random(emq_db *db, emq_random_fn fn, void *ctx)
{
    if (db == NULL) return;
    db->sched.random = fn;
    db->sched.random_ctx = fn ? ctx : NULL;
}

/* A uniform integer in [0, bound] (bound >= 1), without modulo bias. */
static int64_t uniform(uint64_t bound, emq_random_fn rnd, void *ctx)
{
    uint64_t span = bound + 1, limit, r;
    if (span == 0) return (int64_t)rnd(ctx); /* bound = 2^64 - 1: never */
    limit = UINT64_MAX - UINT64_MAX % span;
    do
        r = rnd(ctx);
    while (r >= limit);
    return (int64_t)(r % span);
}

static int policy_ok(const emq_backoff *p)
{
    if (p->jitter < 0 || p->jitter > JITTER_MAX) return 0;
    if (p->kind == EMQ_BACKOFF_FIXED) return p->delay_ms >= 0;
    if (p->kind == EMQ_BACKOFF_EXPONENTIAL)
        return p->base_ms >= 1 && p->cap_ms >= 1;
    return 0;
}

int emq_backoff_delay(const emq_backoff *p, int64_t attempts,
                      emq_random_fn rnd, void *ctx, int64_t *delay_ms)
{
    int64_t d;
    int j;
    if (delay_ms) *delay_ms = 0;
    if (p == NULL || delay_ms == NULL || attempts < 1 || !policy_ok(p))
        return EMQ_EINVAL;
    if (p->kind == EMQ_BACKOFF_FIXED) {
        d = p->delay_ms;
    } else {
        /* base * 2^(attempts-1), saturating at the cap. */
        int64_t shift = attempts - 1;
        d = p->base_ms;
        while (shift-- > 0 && d < p->cap_ms)
            d = d > INT64_MAX / 2 ? INT64_MAX : d * 2;
        if (d > p->cap_ms) d = p->cap_ms;
    }
    if (rnd == NULL) {
        rnd = fallback_random;
        ctx = NULL;
    }
    for (j = 0; j < p->jitter; j++)
        d = d <= 0 ? 0 : uniform((uint64_t)d, rnd, ctx);
    *delay_ms = d;
    return EMQ_OK;
}

/* ----------------------------------------------------------- word form */

/* Parse the words w[0..n) (prefix order) into `out`. */
static int from_words(const char *const *w, const size_t *len, size_t n,
                      emq_backoff *out)
{
    size_t i = 0;
    memset(out, 0, sizeof *out);
#define IS(s) (len[i] == strlen(s) && memcmp(w[i], s, len[i]) == 0)
    while (i < n && IS("jitter")) {
        if (++out->jitter > JITTER_MAX) return EMQ_EINVAL;
        i++;
    }
    if (i >= n) return EMQ_EINVAL;
    if (IS("fixed")) {
        out->kind = EMQ_BACKOFF_FIXED;
        if (n - i != 2 ||
            emq_parse_i64(w[i + 1], len[i + 1], &out->delay_ms) != 0)
            return EMQ_EINVAL;
    } else if (IS("exponential")) {
        out->kind = EMQ_BACKOFF_EXPONENTIAL;
        if (n - i != 3 ||
            emq_parse_i64(w[i + 1], len[i + 1], &out->base_ms) != 0 ||
            emq_parse_i64(w[i + 2], len[i + 2], &out->cap_ms) != 0)
            return EMQ_EINVAL;
    } else {
        return EMQ_EINVAL;
    }
#undef IS
    return policy_ok(out) ? EMQ_OK : EMQ_EINVAL;
}

int emq_backoff_parse(const char *spec, emq_backoff *out)
{
    const char *w[JITTER_MAX + 4];
    size_t len[JITTER_MAX + 4], n = 0;
    const char *s = spec, *e;
    emq_backoff tmp;
    if (out == NULL) out = &tmp;
    memset(out, 0, sizeof *out);
    if (spec == NULL) return EMQ_EINVAL;
    for (;;) {
        if (n == sizeof w / sizeof *w) return EMQ_EINVAL;
        e = strchr(s, ':');
        w[n] = s;
        len[n] = e ? (size_t)(e - s) : strlen(s);
        n++;
        if (!e) break;
        s = e + 1;
    }
    return from_words(w, len, n, out);
}

size_t emq_backoff_format(const emq_backoff *p, char *buf, size_t n)
{
    char tmp[256];
    size_t at = 0;
    int j, k;
    if (p == NULL || !policy_ok(p)) return 0;
    for (j = 0; j < p->jitter; j++) {
        memcpy(tmp + at, "jitter:", 7);
        at += 7;
    }
    if (p->kind == EMQ_BACKOFF_FIXED)
        k = snprintf(tmp + at, sizeof tmp - at, "fixed:%lld",
                     (long long)p->delay_ms);
    else
        k = snprintf(tmp + at, sizeof tmp - at, "exponential:%lld:%lld",
                     (long long)p->base_ms, (long long)p->cap_ms);
    at += (size_t)k;
    if (buf == NULL || at >= n) return 0;
    memcpy(buf, tmp, at + 1);
    return at;
}

/*
 * T5.10 backoff(policy, attempts >= 1) — host, no store access.
 * Args: attempts, then the policy's words. Reply: the delay in ms (EMQ_OK).
 * Refusal: a malformed policy (EMQ_EINVAL naming the argument). Jitter
 * draws from the handle's random source (emq_set_random).
 */
int emq_v_backoff(emq_vctx *c)
{
    const char *w[JITTER_MAX + 4];
    size_t len[JITTER_MAX + 4], n = c->argc - 1, i;
    emq_backoff p;
    int64_t d;
    if (n > sizeof w / sizeof *w)
        return emq_db_wire(c->db, EMQ_EINVAL, "bad argument: policy has too "
                                              "many words");
    for (i = 0; i < n; i++) {
        w[i] = c->a[1 + i].s;
        len[i] = c->a[1 + i].n;
    }
    if (from_words(w, len, n, &p) != EMQ_OK)
        return emq_db_wire(c->db, EMQ_EINVAL, "bad argument: policy must be "
                           "fixed MS, exponential BASE CAP or jitter "
                           "POLICY (MS >= 0, BASE and CAP >= 1)");
    if (emq_backoff_delay(&p, c->a[0].i, emq_sched_random_cb, c->db, &d) < 0)
        return emq_db_wire(c->db, EMQ_EINVAL, "bad argument: attempts");
    emq_reply_int(c->r, d);
    return EMQ_OK;
}
