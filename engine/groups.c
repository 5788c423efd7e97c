/*
 * groups.c — PROTOCOL.md §6.0 group definitions over the store: lane(g),
 * GACT, WAKE, OFFER, RELEASE, UNCLAIMED, DERING.
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

int emq_g_wake(emq_store *st, const char *q)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, EMQ_KT_WAKE);
    int64_t len;
    int rc = emq_list_push(st, k, kl, 0, "1", 1, &len);
    if (rc < 0) return rc;
    return emq_list_trim(st, k, kl, 0, WAKE_CAP - 1);
}

/* Lua's tonumber() over a stored limit: a whole numeric string (the
 * protocol writes decimal integers; a value that is not a number would make
 * the reference script raise, which we report as EMQ_EPROTO). */
static int limit_value(const emq_buf *v, double *out)
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

int emq_g_offer(emq_store *st, const char *q, const void *g, size_t glen,
                int64_t act)
{
    char kl_[EMQ_KEY_MAX], kr[EMQ_KEY_MAX];
    size_t kll = emq_key(kl_, q, EMQ_KT_GLIMIT);
    size_t krl = emq_key(kr, q, EMQ_KT_RING);
    emq_buf v = {0};
    double lim;
    int64_t pos, len;
    int rc = emq_hash_get(st, kl_, kll, g, glen, &v);
    if (rc < 0) goto done;
    if (rc == EMQ_OK) {
        if (!limit_value(&v, &lim)) { rc = EMQ_EPROTO; goto done; }
        if (!((double)act < lim)) { rc = EMQ_OK; goto done; }
    }
    rc = emq_list_pos(st, kr, krl, g, glen, &pos);
    if (rc < 0) goto done;
    if (rc == EMQ_OK) goto done;            /* already on the ring */
    if ((rc = emq_list_push(st, kr, krl, 1, g, glen, &len)) < 0) goto done;
    rc = emq_g_wake(st, q);
done:
    emq_buf_free(&v);
    return rc < 0 ? rc : EMQ_OK;
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
    int64_t act, depth;
    int paused;
    int rc = emq_g_charge(st, q, g, glen, -1, &act);
    if (rc < 0) return rc;
    if ((rc = emq_g_paused(st, q, g, glen, &paused)) < 0) return rc;
    if (paused) return EMQ_OK;
    if ((rc = emq_g_depth(st, q, g, glen, &depth)) < 0) return rc;
    if (depth > 0) return emq_g_offer(st, q, g, glen, act);
    return EMQ_OK;
}

static int dering_all(emq_store *st, const char *q, const void *g, size_t glen)
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
    int64_t depth;
    int rc = emq_key_buf(&lk, q, EMQ_KT_LANE, g, glen);
    if (rc < 0) goto done;
    int removed;
    if ((rc = emq_zset_rem(st, lk.p, lk.len, id, idlen, &removed)) < 0)
        goto done;
    if ((rc = emq_zset_card(st, lk.p, lk.len, &depth)) < 0) goto done;
    rc = depth == 0 ? dering_all(st, q, g, glen) : EMQ_OK;
done:
    emq_buf_free(&lk);
    return rc;
}

int emq_g_dering(emq_store *st, const char *q, const void *g, size_t glen,
                 int64_t act)
{
    char kl_[EMQ_KEY_MAX];
    size_t kll = emq_key(kl_, q, EMQ_KT_GLIMIT);
    emq_buf v = {0};
    double lim;
    int64_t depth;
    int rc = emq_hash_get(st, kl_, kll, g, glen, &v);
    if (rc < 0) goto done;
    if (rc == EMQ_OK) {
        if (!limit_value(&v, &lim)) { rc = EMQ_EPROTO; goto done; }
        if ((double)act >= lim) { rc = dering_all(st, q, g, glen); goto done; }
    }
    if ((rc = emq_g_depth(st, q, g, glen, &depth)) < 0) goto done;
    rc = depth == 0 ? dering_all(st, q, g, glen) : EMQ_OK;
done:
    emq_buf_free(&v);
    return rc;
}
