/*
 * groups.c — PROTOCOL.md §6.0 group definitions over the store: lane(g),
 * GACT, WAKE, OFFER, RELEASE, UNCLAIMED, DERING, the reads of a group's
 * limit and weight, and the return of a job to its lane (T1.7, T1.8, T3.11).
 *
 * Every helper runs inside the caller's transaction and returns an EMQ_*
 * code; none reads the clock. Rule: ring membership is tested with a
 * position-of read and cleared with remove-all, exactly as the definitions
 * say (the ring may legitimately hold a group once only, but a corrupted
 * keyspace may hold it twice and remove-all must clear every copy).
 */
#include <stdlib.h>
#include <string.h>
#include "groups.h"
#include "db.h"

#define WAKE_CAP 64

int emq_g_gact(emq_store *st, const char *q, const void *g, size_t glen,
               int64_t *act)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_GACTIVE);
    emq_buf v = {0};
    int rc = emq_hash_get(st, k, kl, g, glen, &v);
    *act = 0;
    if (rc == EMQ_OK && emq_parse_i64(v.p, v.len, act) != 0)
        rc = EMQ_EPROTO;
    else if (rc == EMQ_NOTFOUND)
        rc = EMQ_OK;
    emq_buf_free(&v);
    return rc;
}

int emq_g_paused(emq_store *st, const char *q, const void *g, size_t glen,
                 int *is)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_PAUSED);
    return emq_sset_ismember(st, k, kl, g, glen, is);
}

int emq_g_depth(emq_store *st, const char *q, const void *g, size_t glen,
                int64_t *n)
{
    emq_buf lk = {0};
    int rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g, glen);
    if (rc == EMQ_OK) rc = emq_zset_card(st, lk.p, lk.len, n);
    emq_buf_free(&lk);
    return rc;
}

/* card(lane) > 0, by the key's existence (an emptied zset ceases to exist),
 * so the test does not count the lane. A key of another type answers what
 * the count would: WRONGTYPE. */
static int lane_busy(emq_store *st, const void *lk, size_t lkl, int *busy)
{
    int64_t n;
    int type, rc = emq_key_type(st, lk, lkl, &type);
    *busy = type == EMQ_T_ZSET;
    if (rc < 0 || type == EMQ_T_ZSET || type == EMQ_T_NONE) return rc;
    return emq_zset_card(st, lk, lkl, &n);
}

int emq_g_busy(emq_store *st, const char *q, const void *g, size_t glen,
               int *busy)
{
    emq_buf lk = {0};
    int rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g, glen);
    *busy = 0;
    if (rc == EMQ_OK) rc = lane_busy(st, lk.p, lk.len, busy);
    emq_buf_free(&lk);
    return rc;
}

int emq_g_wake(emq_store *st, const char *q)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_WAKE);
    int rc = emq_list_push(st, k, kl, 0, "1", 1, NULL);
    if (rc < 0) return rc;
    return emq_list_trim(st, k, kl, 0, WAKE_CAP - 1);
}

/* Lua's tonumber() over a stored limit or weight: a whole numeric string
 * (the protocol writes decimal integers; a limit that is not a number would
 * make the reference script raise, which we report as EMQ_EPROTO). */
static int number_value(const emq_buf *v, double *out)
{
    char tmp[64];
    char *end;
    if (v->len == 0 || v->len >= sizeof tmp) return 0;
    memcpy(tmp, v->p, v->len);
    tmp[v->len] = 0;
    *out = strtod(tmp, &end);
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    return *end == 0 && end != tmp;
}

int emq_g_limit(emq_store *st, const char *q, const void *g, size_t glen,
                int *has, double *lim)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_GLIMIT);
    emq_buf v = {0};
    int rc = emq_hash_get(st, k, kl, g, glen, &v);
    *has = rc == EMQ_OK;
    if (rc == EMQ_OK && !number_value(&v, lim))
        rc = EMQ_EPROTO;
    emq_buf_free(&v);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_g_weight(emq_store *st, const char *q, const void *g, size_t glen,
                 int64_t *w)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_GWEIGHT);
    emq_buf v = {0};
    double d;
    int rc = emq_hash_get(st, k, kl, g, glen, &v);
    *w = 1;
    /* Absent, not a number, or < 1: 1. A huge weight is only bounded by
     * the lane's depth, so clamp it before the conversion (which truncates:
     * the integer part). */
    if (rc == EMQ_OK && number_value(&v, &d) && d >= 1)
        *w = d >= 9007199254740992.0 ? INT64_C(9007199254740992)
                                     : (int64_t)d;
    emq_buf_free(&v);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_g_offer(emq_store *st, const char *q, const void *g, size_t glen,
                int64_t act)
{
    char kr[EMQ_KEY_MAX];
    size_t krl = emq_key(kr, q, EMQ_KT_RING);
    double lim;
    int has, rc = emq_g_limit(st, q, g, glen, &has, &lim);
    if (rc < 0) return rc;
    if (has && !((double)act < lim)) return EMQ_OK;
    rc = emq_list_pos(st, kr, krl, g, glen, NULL);
    if (rc < 0) return rc;
    if (rc == EMQ_OK) return EMQ_OK;        /* already on the ring */
    if ((rc = emq_list_push(st, kr, krl, 1, g, glen, NULL)) < 0) return rc;
    return emq_g_wake(st, q);
}

int emq_g_charge(emq_store *st, const char *q, const void *g, size_t glen,
                 int64_t by, int64_t *act)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_GACTIVE);
    int64_t a;
    int gone;
    int rc = emq_hash_incrby(st, k, kl, g, glen, by, &a);
    if (rc < 0) return rc;
    if (a <= 0 && (rc = emq_hash_del(st, k, kl, g, glen, &gone)) < 0)
        return rc;
    if (act) *act = a;
    return EMQ_OK;
}

int emq_g_release(emq_store *st, const char *q, const void *g, size_t glen)
{
    int64_t act;
    int paused, busy;
    int rc = emq_g_charge(st, q, g, glen, -1, &act);
    if (rc < 0) return rc;
    if ((rc = emq_g_paused(st, q, g, glen, &paused)) < 0) return rc;
    if (paused) return EMQ_OK;
    if ((rc = emq_g_busy(st, q, g, glen, &busy)) < 0) return rc;
    if (busy) return emq_g_offer(st, q, g, glen, act);
    return EMQ_OK;
}

int emq_g_unring(emq_store *st, const char *q, const void *g, size_t glen)
{
    char kr[EMQ_KEY_MAX];
    size_t krl = emq_key(kr, q, EMQ_KT_RING);
    int64_t removed;
    int rc = emq_list_rem(st, kr, krl, 0, g, glen, &removed);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_g_unclaimed(emq_store *st, const char *q, const void *g, size_t glen,
                    const void *id, size_t idlen)
{
    emq_buf lk = {0};
    int removed, busy;
    int rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g, glen);
    if (rc < 0) goto done;
    if ((rc = emq_zset_rem(st, lk.p, lk.len, id, idlen, &removed)) < 0)
        goto done;
    if ((rc = lane_busy(st, lk.p, lk.len, &busy)) < 0) goto done;
    rc = busy ? EMQ_OK : emq_g_unring(st, q, g, glen);
done:
    emq_buf_free(&lk);
    return rc;
}

int emq_g_dering(emq_store *st, const char *q, const void *g, size_t glen,
                 int64_t act)
{
    double lim;
    int has, busy, rc = emq_g_limit(st, q, g, glen, &has, &lim);
    if (rc < 0) return rc;
    if (has && (double)act >= lim) return emq_g_unring(st, q, g, glen);
    if ((rc = emq_g_busy(st, q, g, glen, &busy)) < 0) return rc;
    return busy ? EMQ_OK : emq_g_unring(st, q, g, glen);
}

int emq_g_requeue(emq_store *st, const char *q, const void *g, size_t glen,
                  const void *id, size_t idlen, int lapsed)
{
    emq_buf lk = {0};
    int64_t act = 0;
    int added, paused, rc = EMQ_OK;
    if (lapsed && (rc = emq_g_charge(st, q, g, glen, -1, &act)) < 0)
        goto done;
    if ((rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g, glen)) < 0) goto done;
    if ((rc = emq_zset_add(st, lk.p, lk.len, id, idlen, 0, &added)) < 0)
        goto done;
    if ((rc = emq_g_paused(st, q, g, glen, &paused)) < 0 || paused)
        goto done;
    if (!lapsed && (rc = emq_g_gact(st, q, g, glen, &act)) < 0) goto done;
    rc = emq_g_offer(st, q, g, glen, act);
done:
    emq_buf_free(&lk);
    return rc < 0 ? rc : EMQ_OK;
}
