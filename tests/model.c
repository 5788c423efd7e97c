/*
 * model.c — the in-memory model of PROTOCOL.md §6.1 (see model.h).
 *
 * Part 1 is a toy Redis keyspace over arrays; part 2 the transitions, each
 * following the numbered steps of its block in PROTOCOL.md. Rule: nothing
 * here calls storage/ (only the emq_buf type and the dump format are
 * shared), so the model is an independent oracle for store and engine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "ksdump.h"

/* ============================================================ keyspace */

typedef struct bs {
    unsigned char *p;
    size_t n;
} bs;

typedef struct zm {
    bs m;
    double s;
} zm;

typedef struct fvp {
    bs f, v;
} fvp;

typedef struct mkey {
    bs name;
    int type;
    bs str;
    fvp *h;
    size_t hn;
    zm *z;
    size_t zn;
    bs *l;
    size_t ln;
    bs *s;
    size_t sn;
} mkey;

struct emq_model {
    mkey **k;
    size_t n;
};

static bs bdup(const void *p, size_t n)
{
    bs b;
    b.p = malloc(n + 1);
    if (n) memcpy(b.p, p, n);
    b.p[n] = 0;
    b.n = n;
    return b;
}

static int bcmp_(const void *a, size_t an, const void *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

static int beq(const bs *b, const void *p, size_t n)
{
    return b->n == n && (n == 0 || memcmp(b->p, p, n) == 0);
}

emq_model *model_new(void)
{
    return calloc(1, sizeof(emq_model));
}

static void key_free(mkey *k)
{
    size_t i;
    free(k->name.p);
    free(k->str.p);
    for (i = 0; i < k->hn; i++) { free(k->h[i].f.p); free(k->h[i].v.p); }
    for (i = 0; i < k->zn; i++) free(k->z[i].m.p);
    for (i = 0; i < k->ln; i++) free(k->l[i].p);
    for (i = 0; i < k->sn; i++) free(k->s[i].p);
    free(k->h);
    free(k->z);
    free(k->l);
    free(k->s);
    free(k);
}

void model_free(emq_model *m)
{
    size_t i;
    if (!m) return;
    for (i = 0; i < m->n; i++) key_free(m->k[i]);
    free(m->k);
    free(m);
}

static long kfind(emq_model *m, const void *k, size_t kl)
{
    size_t i;
    for (i = 0; i < m->n; i++)
        if (beq(&m->k[i]->name, k, kl)) return (long)i;
    return -1;
}

/* The key of `type`: EMQ_OK with *out (NULL when absent and !create), or
 * EMQ_EWRONGTYPE. */
static int kget(emq_model *m, const void *k, size_t kl, int type, int create,
                mkey **out)
{
    long i = kfind(m, k, kl);
    *out = NULL;
    if (i >= 0) {
        if (m->k[i]->type != type) return EMQ_EWRONGTYPE;
        *out = m->k[i];
        return EMQ_OK;
    }
    if (!create) return EMQ_OK;
    m->k = realloc(m->k, (m->n + 1) * sizeof *m->k);
    m->k[m->n] = calloc(1, sizeof(mkey));
    m->k[m->n]->name = bdup(k, kl);
    m->k[m->n]->type = type;
    *out = m->k[m->n++];
    return EMQ_OK;
}

int model_del(emq_model *m, const void *k, size_t kl)
{
    long i = kfind(m, k, kl);
    if (i < 0) return 0;
    key_free(m->k[i]);
    m->k[i] = m->k[--m->n];
    return 1;
}

static void drop_empty(emq_model *m, mkey *k)
{
    if (k && k->hn == 0 && k->zn == 0 && k->ln == 0 && k->sn == 0 &&
        k->type != EMQ_T_STRING)
        model_del(m, k->name.p, k->name.n);
}

static int exists(emq_model *m, const void *k, size_t kl)
{
    return kfind(m, k, kl) >= 0;
}

/* Counters are written and read as shortest decimal strings. */
static size_t fmt(char *b, int64_t v)
{
    return (size_t)sprintf(b, "%lld", (long long)v);
}

static int parse(const unsigned char *p, size_t n, int64_t *out)
{
    char t[32];
    char *end;
    if (n == 0 || n >= sizeof t) return 0;
    memcpy(t, p, n);
    t[n] = 0;
    if (t[0] == '+' || t[0] == ' ') return 0;
    *out = strtoll(t, &end, 10);
    return *end == 0;
}

/* ---- strings */

int model_set(emq_model *m, const void *k, size_t kl, const void *v,
              size_t vl)
{
    mkey *key;
    model_del(m, k, kl);
    kget(m, k, kl, EMQ_T_STRING, 1, &key);
    key->str = bdup(v, vl);
    return EMQ_OK;
}

static int sincrby(emq_model *m, const char *k, int64_t by, int64_t *out)
{
    mkey *key;
    int64_t v = 0;
    char b[32];
    int rc = kget(m, k, strlen(k), EMQ_T_STRING, 0, &key);
    if (rc) return rc;
    if (key && !parse(key->str.p, key->str.n, &v)) return EMQ_EPROTO;
    v += by;
    if (!key) kget(m, k, strlen(k), EMQ_T_STRING, 1, &key);
    free(key->str.p);
    key->str = bdup(b, fmt(b, v));
    *out = v;
    return EMQ_OK;
}

/* ---- hashes */

static long hfind(mkey *k, const void *f, size_t fl)
{
    size_t i;
    for (i = 0; k && i < k->hn; i++)
        if (beq(&k->h[i].f, f, fl)) return (long)i;
    return -1;
}

int model_hget(emq_model *m, const void *k, size_t kl, const void *f,
               size_t fl, const unsigned char **v, size_t *vl)
{
    mkey *key;
    long i;
    int rc = kget(m, k, kl, EMQ_T_HASH, 0, &key);
    if (rc) return rc;
    if ((i = hfind(key, f, fl)) < 0) return EMQ_NOTFOUND;
    *v = key->h[i].v.p;
    *vl = key->h[i].v.n;
    return EMQ_OK;
}

int model_hset(emq_model *m, const void *k, size_t kl, const void *f,
               size_t fl, const void *v, size_t vl)
{
    mkey *key;
    long i;
    int rc = kget(m, k, kl, EMQ_T_HASH, 1, &key);
    if (rc) return rc;
    if ((i = hfind(key, f, fl)) >= 0) {
        free(key->h[i].v.p);
        key->h[i].v = bdup(v, vl);
        return EMQ_OK;
    }
    key->h = realloc(key->h, (key->hn + 1) * sizeof *key->h);
    key->h[key->hn].f = bdup(f, fl);
    key->h[key->hn].v = bdup(v, vl);
    key->hn++;
    return EMQ_OK;
}

static int hsets(emq_model *m, const char *k, const char *f, const void *v,
                 size_t vl)
{
    return model_hset(m, k, strlen(k), f, strlen(f), v, vl);
}

static int hdel(emq_model *m, const char *k, const void *f, size_t fl)
{
    mkey *key;
    long i;
    int rc = kget(m, k, strlen(k), EMQ_T_HASH, 0, &key);
    if (rc) return rc;
    if ((i = hfind(key, f, fl)) < 0) return EMQ_OK;
    free(key->h[i].f.p);
    free(key->h[i].v.p);
    memmove(&key->h[i], &key->h[i + 1], (key->hn - (size_t)i - 1) *
            sizeof *key->h);
    key->hn--;
    drop_empty(m, key);
    return EMQ_OK;
}

int model_hincrby(emq_model *m, const void *k, size_t kl, const void *f,
                  size_t fl, int64_t by, int64_t *out)
{
    const unsigned char *v;
    size_t vl;
    int64_t cur = 0;
    char b[32];
    int rc = model_hget(m, k, kl, f, fl, &v, &vl);
    if (rc < 0) return rc;
    if (rc == EMQ_OK && !parse(v, vl, &cur)) return EMQ_EPROTO;
    cur += by;
    *out = cur;
    return model_hset(m, k, kl, f, fl, b, fmt(b, cur));
}

/* ---- zsets */

static int zcmp(const zm *a, double s, const void *m, size_t ml)
{
    if (a->s < s) return -1;
    if (a->s > s) return 1;
    return bcmp_(a->m.p, a->m.n, m, ml);
}

static long zfind(mkey *k, const void *mm, size_t ml)
{
    size_t i;
    for (i = 0; k && i < k->zn; i++)
        if (beq(&k->z[i].m, mm, ml)) return (long)i;
    return -1;
}

static int zrem(emq_model *m, const char *k, const void *mm, size_t ml,
                int *was)
{
    mkey *key;
    long i;
    int rc = kget(m, k, strlen(k), EMQ_T_ZSET, 0, &key);
    *was = 0;
    if (rc) return rc;
    if ((i = zfind(key, mm, ml)) < 0) return EMQ_OK;
    free(key->z[i].m.p);
    memmove(&key->z[i], &key->z[i + 1], (key->zn - (size_t)i - 1) *
            sizeof *key->z);
    key->zn--;
    *was = 1;
    drop_empty(m, key);
    return EMQ_OK;
}

int model_zadd(emq_model *m, const void *k, size_t kl, const void *mm,
               size_t ml, double s)
{
    mkey *key;
    size_t at;
    long i;
    int rc = kget(m, k, kl, EMQ_T_ZSET, 1, &key);
    if (rc) return rc;
    if ((i = zfind(key, mm, ml)) >= 0) {
        free(key->z[i].m.p);
        memmove(&key->z[i], &key->z[i + 1], (key->zn - (size_t)i - 1) *
                sizeof *key->z);
        key->zn--;
    }
    for (at = 0; at < key->zn && zcmp(&key->z[at], s, mm, ml) < 0; at++) {}
    key->z = realloc(key->z, (key->zn + 1) * sizeof *key->z);
    memmove(&key->z[at + 1], &key->z[at], (key->zn - at) * sizeof *key->z);
    key->z[at].m = bdup(mm, ml);
    key->z[at].s = s;
    key->zn++;
    return EMQ_OK;
}

static int zadds(emq_model *m, const char *k, const void *mm, size_t ml,
                 double s)
{
    return model_zadd(m, k, strlen(k), mm, ml, s);
}

static int zcard(emq_model *m, const char *k, int64_t *n)
{
    mkey *key;
    int rc = kget(m, k, strlen(k), EMQ_T_ZSET, 0, &key);
    *n = key ? (int64_t)key->zn : 0;
    return rc;
}

/* ---- lists */

static int lpush(emq_model *m, const char *k, int right, const void *v,
                 size_t vl)
{
    mkey *key;
    int rc = kget(m, k, strlen(k), EMQ_T_LIST, 1, &key);
    if (rc) return rc;
    key->l = realloc(key->l, (key->ln + 1) * sizeof *key->l);
    if (right) {
        key->l[key->ln] = bdup(v, vl);
    } else {
        memmove(&key->l[1], &key->l[0], key->ln * sizeof *key->l);
        key->l[0] = bdup(v, vl);
    }
    key->ln++;
    return EMQ_OK;
}

/* LTRIM 0 stop with stop >= 0 (the only form the protocol uses). */
static int ltrim_head(emq_model *m, const char *k, size_t keep)
{
    mkey *key;
    int rc = kget(m, k, strlen(k), EMQ_T_LIST, 0, &key);
    if (rc || !key) return rc;
    while (key->ln > keep) free(key->l[--key->ln].p);
    drop_empty(m, key);
    return EMQ_OK;
}

static int lrem_all(emq_model *m, const char *k, const void *v, size_t vl)
{
    mkey *key;
    size_t i, o = 0;
    int rc = kget(m, k, strlen(k), EMQ_T_LIST, 0, &key);
    if (rc || !key) return rc;
    for (i = 0; i < key->ln; i++) {
        if (beq(&key->l[i], v, vl)) free(key->l[i].p);
        else key->l[o++] = key->l[i];
    }
    key->ln = o;
    drop_empty(m, key);
    return EMQ_OK;
}

static int lcontains(emq_model *m, const char *k, const void *v, size_t vl,
                     int *is)
{
    mkey *key;
    size_t i;
    int rc = kget(m, k, strlen(k), EMQ_T_LIST, 0, &key);
    *is = 0;
    for (i = 0; key && i < key->ln; i++)
        if (beq(&key->l[i], v, vl)) *is = 1;
    return rc;
}

/* ---- sets */

int model_sadd(emq_model *m, const void *k, size_t kl, const void *v,
               size_t vl)
{
    mkey *key;
    size_t at, i;
    int rc = kget(m, k, kl, EMQ_T_SET, 1, &key);
    if (rc) return rc;
    for (i = 0; i < key->sn; i++)
        if (beq(&key->s[i], v, vl)) return EMQ_OK;
    for (at = 0; at < key->sn &&
                 bcmp_(key->s[at].p, key->s[at].n, v, vl) < 0; at++) {}
    key->s = realloc(key->s, (key->sn + 1) * sizeof *key->s);
    memmove(&key->s[at + 1], &key->s[at], (key->sn - at) * sizeof *key->s);
    key->s[at] = bdup(v, vl);
    key->sn++;
    return EMQ_OK;
}

int model_srem(emq_model *m, const void *k, size_t kl, const void *v,
               size_t vl)
{
    mkey *key;
    size_t i;
    int rc = kget(m, k, kl, EMQ_T_SET, 0, &key);
    if (rc || !key) return rc;
    for (i = 0; i < key->sn; i++) {
        if (beq(&key->s[i], v, vl)) {
            free(key->s[i].p);
            memmove(&key->s[i], &key->s[i + 1], (key->sn - i - 1) *
                    sizeof *key->s);
            key->sn--;
            break;
        }
    }
    drop_empty(m, key);
    return EMQ_OK;
}

static int sismember(emq_model *m, const char *k, const void *v, size_t vl,
                     int *is)
{
    mkey *key;
    size_t i;
    int rc = kget(m, k, strlen(k), EMQ_T_SET, 0, &key);
    *is = 0;
    for (i = 0; key && i < key->sn; i++)
        if (beq(&key->s[i], v, vl)) *is = 1;
    return rc;
}

/* ---- dump */

static int cmp_keyp(const void *a, const void *b)
{
    const mkey *x = *(mkey *const *)a, *y = *(mkey *const *)b;
    return bcmp_(x->name.p, x->name.n, y->name.p, y->name.n);
}

void model_dump(emq_model *m, emq_buf *out)
{
    size_t i, j;
    out->len = 0;
    emq_buf_append(out, "", 0);
    if (m->n > 1) qsort(m->k, m->n, sizeof *m->k, cmp_keyp);
    for (i = 0; i < m->n; i++) {
        mkey *k = m->k[i];
        kd_key(out, k->name.p, k->name.n, k->type, -1);
        switch (k->type) {
        case EMQ_T_STRING:
            kd_string(out, k->str.p, k->str.n);
            break;
        case EMQ_T_HASH: {
            kd_pair *p = malloc((k->hn + 1) * sizeof *p);
            for (j = 0; j < k->hn; j++) {
                p[j].a = k->h[j].f.p;
                p[j].an = k->h[j].f.n;
                p[j].b = k->h[j].v.p;
                p[j].bn = k->h[j].v.n;
            }
            kd_hash(out, p, k->hn);
            free(p);
            break;
        }
        case EMQ_T_ZSET:
            for (j = 0; j < k->zn; j++)
                kd_zmember(out, k->z[j].m.p, k->z[j].m.n, k->z[j].s);
            break;
        case EMQ_T_LIST:
            for (j = 0; j < k->ln; j++) kd_elem(out, k->l[j].p, k->l[j].n);
            break;
        case EMQ_T_SET:
            for (j = 0; j < k->sn; j++) kd_elem(out, k->s[j].p, k->s[j].n);
            break;
        }
    }
}

/* ========================================================= transitions */

#define KMAX 600

static void qk(char *b, const char *q, const char *sfx)
{
    snprintf(b, KMAX, "emq:{%s}:%s", q, sfx);
}

/* J(member) / J(member).sub: members are ids of 14 bytes (no NUL). */
static void jk(char *b, const char *q, const void *id, size_t n,
               const char *sub)
{
    snprintf(b, KMAX, "emq:{%s}:job:%.*s%s%s", q, (int)n, (const char *)id,
             sub ? ":" : "", sub ? sub : "");
}

static int is_job(const char *id) { return memcmp(id, "JOB", 3) == 0; }

static int token_eq(const unsigned char *att, size_t n, int64_t token)
{
    char b[32];
    size_t l = fmt(b, token);
    return n == l && memcmp(att, b, l) == 0;
}

static int admit(emq_model *m, const char *q, const char *id, const void *p,
                 size_t len, const char *set, double score)
{
    char j[KMAX], s[KMAX];
    if (!is_job(id)) return EMQ_EKIND;
    jk(j, q, id, 14, NULL);
    if (exists(m, j, strlen(j))) return EMQ_DUPLICATE;
    hsets(m, j, "state", strcmp(set, "pending") ? "scheduled" : "pending",
          strcmp(set, "pending") ? 9 : 7);
    hsets(m, j, "attempts", "0", 1);
    hsets(m, j, "payload", p, len);
    qk(s, q, set);
    zadds(m, s, id, 14, score);
    return strcmp(set, "pending") ? EMQ_SCHEDULED : EMQ_ENQUEUED;
}

int model_enqueue(emq_model *m, const char *q, const char *id, const void *p,
                  size_t len)
{
    return admit(m, q, id, p, len, "pending", 0);
}

int model_enqueue_at(emq_model *m, const char *q, const char *id,
                     const void *p, size_t len, int64_t run_at)
{
    return admit(m, q, id, p, len, "schedule", (double)run_at);
}

int model_enqueue_in(emq_model *m, const char *q, const char *id,
                     const void *p, size_t len, int64_t now, int64_t delay)
{
    return admit(m, q, id, p, len, "schedule", (double)now + (double)delay);
}

int model_claim(emq_model *m, const char *q, int64_t now, int64_t lease,
                char id[EMQ_ID_SIZE], int64_t *att, unsigned char **payload,
                size_t *plen)
{
    char k[KMAX], j[KMAX];
    const unsigned char *v;
    size_t vl;
    mkey *pend;
    bs mem;
    int was;

    *payload = NULL;
    *plen = 0;
    qk(k, q, "meta");
    if (model_hget(m, k, strlen(k), "paused", 6, &v, &vl) == EMQ_OK)
        return EMQ_EMPTY;
    qk(k, q, "pending");
    if (kget(m, k, strlen(k), EMQ_T_ZSET, 0, &pend) || !pend)
        return EMQ_EMPTY;
    if (pend->z[0].m.n != 14) return EMQ_ECORRUPT;
    mem = bdup(pend->z[0].m.p, 14);
    zrem(m, k, mem.p, mem.n, &was);
    jk(j, q, mem.p, 14, NULL);
    model_hincrby(m, j, strlen(j), "attempts", 8, 1, att);
    hsets(m, j, "state", "active", 6);
    qk(k, q, "active");
    zadds(m, k, mem.p, 14, (double)now + (double)lease);
    if (model_hget(m, j, strlen(j), "payload", 7, &v, &vl) == EMQ_OK) {
        *payload = malloc(vl + 1);
        memcpy(*payload, v, vl);
        (*payload)[vl] = 0;
        *plen = vl;
    }
    memcpy(id, mem.p, 14);
    id[14] = 0;
    free(mem.p);
    return EMQ_OK;
}

/* ---- §6.0 group definitions */

static void lane(char *b, const char *q, const bs *g)
{
    snprintf(b, KMAX, "emq:{%s}:g:%.*s:pending", q, (int)g->n,
             (const char *)g->p);
}

static int64_t gact(emq_model *m, const char *q, const bs *g)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    int64_t a = 0;
    qk(k, q, "gactive");
    if (model_hget(m, k, strlen(k), g->p, g->n, &v, &vl) == EMQ_OK)
        parse(v, vl, &a);
    return a;
}

static void wake(emq_model *m, const char *q)
{
    char k[KMAX];
    qk(k, q, "wake");
    lpush(m, k, 0, "1", 1);
    ltrim_head(m, k, 64);
}

static void offer(emq_model *m, const char *q, const bs *g, int64_t act)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    int on;
    qk(k, q, "glimit");
    if (model_hget(m, k, strlen(k), g->p, g->n, &v, &vl) == EMQ_OK) {
        char t[64];
        memcpy(t, v, vl < 63 ? vl : 63);
        t[vl < 63 ? vl : 63] = 0;
        if (!((double)act < strtod(t, NULL))) return;
    }
    qk(k, q, "ring");
    lcontains(m, k, g->p, g->n, &on);
    if (on) return;
    lpush(m, k, 1, g->p, g->n);
    wake(m, q);
}

static int64_t charge(emq_model *m, const char *q, const bs *g, int64_t by)
{
    char k[KMAX];
    int64_t a;
    qk(k, q, "gactive");
    model_hincrby(m, k, strlen(k), g->p, g->n, by, &a);
    if (a <= 0) hdel(m, k, g->p, g->n);
    return a;
}

static int paused_g(emq_model *m, const char *q, const bs *g)
{
    char k[KMAX];
    int is;
    qk(k, q, "paused");
    sismember(m, k, g->p, g->n, &is);
    return is;
}

static int64_t depth(emq_model *m, const char *q, const bs *g)
{
    char k[KMAX];
    int64_t n;
    lane(k, q, g);
    zcard(m, k, &n);
    return n;
}

static void release(emq_model *m, const char *q, const bs *g)
{
    int64_t act = charge(m, q, g, -1);
    if (!paused_g(m, q, g) && depth(m, q, g) > 0) offer(m, q, g, act);
}

static void unclaimed(emq_model *m, const char *q, const bs *g,
                      const char *id)
{
    char k[KMAX];
    int was;
    lane(k, q, g);
    zrem(m, k, id, 14, &was);
    if (depth(m, q, g) == 0) {
        qk(k, q, "ring");
        lrem_all(m, k, g->p, g->n);
    }
}

/* Steps 3-5 of T1.5. */
static int settle(emq_model *m, const char *q, const char *id)
{
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl;
    bs g = {0};
    int was, has_g;
    jk(j, q, id, 14, NULL);
    has_g = model_hget(m, j, strlen(j), "group", 5, &v, &vl) == EMQ_OK;
    if (has_g) g = bdup(v, vl);
    qk(k, q, "active");
    zrem(m, k, id, 14, &was);
    if (has_g) {
        if (was) release(m, q, &g);
        else unclaimed(m, q, &g, id);
    } else if (!was) {
        int w2;
        qk(k, q, "pending");
        zrem(m, k, id, 14, &w2);
    }
    free(g.p);
    return was;
}

/* ---- LINK */

typedef struct link {
    int kind;          /* 0 none, 1 same, 2 cross */
    bs parent, pq;
    int pid;           /* policy id */
} link;

static int link_read(emq_model *m, const char *q, const char *id, link *l)
{
    char j[KMAX], t[16];
    const unsigned char *v;
    size_t vl;
    memset(l, 0, sizeof *l);
    jk(j, q, id, 14, NULL);
    if (model_hget(m, j, strlen(j), "parent", 6, &v, &vl) != EMQ_OK)
        return EMQ_OK;
    l->parent = bdup(v, vl);
    if (model_hget(m, j, strlen(j), "parent_policy", 13, &v, &vl) == EMQ_OK)
        l->pid = vl == 2 && memcmp(v, "id", 2) == 0;
    if (model_hget(m, j, strlen(j), "parent_queue", 12, &v, &vl) == EMQ_OK &&
        !(vl == strlen(q) && memcmp(v, q, vl) == 0)) {
        l->pq = bdup(v, vl);
        l->kind = 2;
        return EMQ_OK;
    }
    l->kind = 1;
    if (l->parent.n != 14) return EMQ_EID;
    memcpy(t, l->parent.p, 14);
    t[14] = 0;
    return emq_id_valid(t) ? EMQ_OK : EMQ_EID;
}

static void link_free(link *l)
{
    free(l->parent.p);
    free(l->pq.p);
}

static void cat(emq_buf *b, const void *p, size_t n, int nul)
{
    emq_buf_append(b, p, n);
    if (nul) emq_buf_append(b, "", 1);
}

static void set_state(emq_model *m, const char *q, const void *id,
                      const char *s)
{
    char j[KMAX];
    jk(j, q, id, 14, NULL);
    hsets(m, j, "state", s, strlen(s));
}

int model_complete(emq_model *m, const char *q, const char *id,
                   int64_t token)
{
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl;
    link l;
    int64_t n;
    int was, rc = link_read(m, q, id, &l);
    if (rc) goto done;
    jk(j, q, id, 14, NULL);
    if (model_hget(m, j, strlen(j), "attempts", 8, &v, &vl) != EMQ_OK) {
        rc = EMQ_GONE;
        goto done;
    }
    if (!token_eq(v, vl, token)) { rc = EMQ_ESTALE; goto done; }
    was = settle(m, q, id);
    if (l.kind == 2 && was) {
        emq_buf e = {0};
        cat(&e, l.pq.p, l.pq.n, 1);
        cat(&e, l.parent.p, l.parent.n, 1);
        cat(&e, id, 14, 1);
        cat(&e, id, 14, 0);
        qk(k, q, "flow:outbox");
        lpush(m, k, 1, e.p, e.len);
        emq_buf_free(&e);
    } else if (l.kind == 1 && was) {
        jk(k, q, l.parent.p, 14, "dependencies");
        sincrby(m, k, -1, &n);
        jk(k, q, l.parent.p, 14, "processed");
        model_hset(m, k, strlen(k), id, 14, id, 14);
        if (n <= 0) {
            qk(k, q, "pending");
            zadds(m, k, l.parent.p, 14, 0);
            set_state(m, q, l.parent.p, "pending");
        }
    }
    model_del(m, j, strlen(j));
    qk(k, q, "metrics:completed");
    model_hincrby(m, k, strlen(k), "count", 5, 1, &n);
    rc = EMQ_OK;
done:
    link_free(&l);
    return rc;
}

static void reemit(emq_model *m, const char *q, const void *node,
                   const void *err, size_t elen)
{
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl;
    bs parent, pq = {0};
    int pid = 0;
    emq_buf e = {0};
    jk(j, q, node, 14, NULL);
    if (model_hget(m, j, strlen(j), "parent", 6, &v, &vl) != EMQ_OK) return;
    parent = bdup(v, vl);
    if (model_hget(m, j, strlen(j), "parent_policy", 13, &v, &vl) == EMQ_OK)
        pid = vl == 2 && memcmp(v, "id", 2) == 0;
    if (model_hget(m, j, strlen(j), "parent_queue", 12, &v, &vl) == EMQ_OK &&
        !(vl == strlen(q) && memcmp(v, q, vl) == 0))
        pq = bdup(v, vl);
    else
        pq = bdup(q, strlen(q));
    cat(&e, "", 0, 1);
    cat(&e, "fail", 4, 1);
    cat(&e, pq.p, pq.n, 1);
    cat(&e, parent.p, parent.n, 1);
    cat(&e, node, 14, 1);
    cat(&e, pid ? "id" : "fp", 2, 1);
    cat(&e, err, elen, 0);
    qk(k, q, "flow:outbox");
    lpush(m, k, 1, e.p, e.len);
    emq_buf_free(&e);
    free(parent.p);
    free(pq.p);
}

int model_retry(emq_model *m, const char *q, const char *id, int64_t token,
                int64_t now, int64_t delay, int64_t max, const void *err,
                size_t elen)
{
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl;
    link l;
    int64_t n;
    int was, rc = link_read(m, q, id, &l);
    if (rc) goto done;
    jk(j, q, id, 14, NULL);
    if (model_hget(m, j, strlen(j), "attempts", 8, &v, &vl) != EMQ_OK) {
        rc = EMQ_ESTALE;
        goto done;
    }
    if (!token_eq(v, vl, token)) { rc = EMQ_ESTALE; goto done; }
    settle(m, q, id);
    hsets(m, j, "last_error", err, elen);
    if (token >= max) {
        hsets(m, j, "state", "dead", 4);
        qk(k, q, "dead");
        zadds(m, k, id, 14, 0);
        qk(k, q, "metrics:failed");
        model_hincrby(m, k, strlen(k), "count", 5, 1, &n);
        if (l.kind == 1) {
            const void *p = l.parent.p;
            if (!l.pid) {
                jk(k, q, p, 14, "failed");
                model_hset(m, k, strlen(k), id, 14, err, elen);
                set_state(m, q, p, "dead");
                qk(k, q, "dead");
                zadds(m, k, p, 14, 0);
                qk(k, q, "pending");
                zrem(m, k, p, 14, &was);
            } else {
                jk(k, q, p, 14, "unsuccessful");
                model_hset(m, k, strlen(k), id, 14, err, elen);
                jk(k, q, p, 14, "dependencies");
                sincrby(m, k, -1, &n);
                if (n <= 0) {
                    qk(k, q, "pending");
                    zadds(m, k, p, 14, 0);
                    set_state(m, q, p, "pending");
                }
            }
            jk(k, q, p, 14, NULL);
            if (model_hget(m, k, strlen(k), "state", 5, &v, &vl) == EMQ_OK &&
                vl == 4 && memcmp(v, "dead", 4) == 0)
                reemit(m, q, p, err, elen);
        } else if (l.kind == 2) {
            emq_buf e = {0};
            cat(&e, "", 0, 1);
            cat(&e, "fail", 4, 1);
            cat(&e, l.pq.p, l.pq.n, 1);
            cat(&e, l.parent.p, l.parent.n, 1);
            cat(&e, id, 14, 1);
            cat(&e, l.pid ? "id" : "fp", 2, 1);
            cat(&e, err, elen, 0);
            qk(k, q, "flow:outbox");
            lpush(m, k, 1, e.p, e.len);
            emq_buf_free(&e);
        }
        rc = EMQ_DEAD;
        goto done;
    }
    hsets(m, j, "state", "scheduled", 9);
    qk(k, q, "schedule");
    zadds(m, k, id, 14, (double)now + (double)delay);
    rc = EMQ_SCHEDULED;
done:
    link_free(&l);
    return rc;
}

/* Due members (score <= now) of a zset, up to limit, copied. */
static size_t due(emq_model *m, const char *k, int64_t now, int64_t limit,
                  bs **out)
{
    mkey *key;
    size_t n = 0, i;
    *out = NULL;
    if (kget(m, k, strlen(k), EMQ_T_ZSET, 0, &key) || !key) return 0;
    for (i = 0; i < key->zn && (int64_t)n < limit; i++) {
        if (!(key->z[i].s <= (double)now)) break;
        *out = realloc(*out, (n + 1) * sizeof **out);
        (*out)[n++] = bdup(key->z[i].m.p, key->z[i].m.n);
    }
    return n;
}

static void to_pending(emq_model *m, const char *q, const bs *id, int reap)
{
    char j[KMAX], k[KMAX];
    const unsigned char *v;
    size_t vl;
    jk(j, q, id->p, id->n, NULL);
    if (model_hget(m, j, strlen(j), "group", 5, &v, &vl) == EMQ_OK) {
        bs g = bdup(v, vl);
        int64_t act = 0;
        if (reap) act = charge(m, q, &g, -1);
        lane(k, q, &g);
        zadds(m, k, id->p, id->n, 0);
        if (!paused_g(m, q, &g)) offer(m, q, &g, reap ? act : gact(m, q, &g));
        free(g.p);
    } else {
        qk(k, q, "pending");
        zadds(m, k, id->p, id->n, 0);
    }
    hsets(m, j, "state", "pending", 7);
}

static int sweep(emq_model *m, const char *q, const char *from, int64_t now,
                 int64_t limit, int reap, int64_t *count)
{
    char k[KMAX];
    bs *ids;
    size_t n, i;
    int was;
    qk(k, q, from);
    n = due(m, k, now, limit, &ids);
    for (i = 0; i < n; i++) {
        zrem(m, k, ids[i].p, ids[i].n, &was);
        to_pending(m, q, &ids[i], reap);
        free(ids[i].p);
    }
    free(ids);
    if (count) *count = (int64_t)n;
    return EMQ_OK;
}

int model_promote(emq_model *m, const char *q, int64_t now, int64_t batch,
                  int64_t *count)
{
    return sweep(m, q, "schedule", now, batch, 0, count);
}

int model_reap(emq_model *m, const char *q, int64_t now, int64_t *count)
{
    return sweep(m, q, "active", now, 100, 1, count);
}

int model_browse(emq_model *m, const char *q, size_t n,
                 char (*ids)[EMQ_ID_SIZE], size_t *count)
{
    char k[KMAX];
    mkey *key;
    size_t i;
    qk(k, q, "pending");
    *count = 0;
    if (kget(m, k, strlen(k), EMQ_T_ZSET, 0, &key) || !key) return EMQ_OK;
    for (i = key->zn; i > 0 && *count < n; i--) {
        memcpy(ids[*count], key->z[i - 1].m.p, 14);
        ids[*count][14] = 0;
        (*count)++;
    }
    return EMQ_OK;
}

int model_pending_size(emq_model *m, const char *q, int64_t *size)
{
    char k[KMAX];
    qk(k, q, "pending");
    zcard(m, k, size);
    return EMQ_OK;
}

static int judge(emq_model *m, const char *q, const char *id, int64_t token)
{
    char j[KMAX];
    const unsigned char *v;
    size_t vl;
    jk(j, q, id, 14, NULL);
    if (model_hget(m, j, strlen(j), "attempts", 8, &v, &vl) != EMQ_OK)
        return EMQ_GONE;
    return token_eq(v, vl, token) ? EMQ_OK : EMQ_ESTALE;
}

int model_extend_lock(emq_model *m, const char *q, const char *id,
                      int64_t token, int64_t now, int64_t lease)
{
    char k[KMAX];
    int rc = judge(m, q, id, token);
    if (rc != EMQ_OK) return rc;
    qk(k, q, "active");
    zadds(m, k, id, 14, (double)now + (double)lease);
    return EMQ_OK;
}

int model_extend_locks(emq_model *m, const char *q, size_t n,
                       const char *const *ids, const int64_t *tokens,
                       int64_t now, int64_t lease, int *failed,
                       size_t *nfailed)
{
    char k[KMAX];
    size_t i;
    *nfailed = 0;
    qk(k, q, "active");
    for (i = 0; i < n; i++) {
        failed[i] = judge(m, q, ids[i], tokens[i]) != EMQ_OK;
        if (failed[i]) (*nfailed)++;
        else zadds(m, k, ids[i], 14, (double)now + (double)lease);
    }
    return EMQ_OK;
}

int model_pause(emq_model *m, const char *q)
{
    char k[KMAX];
    qk(k, q, "meta");
    return hsets(m, k, "paused", "1", 1);
}

int model_resume(emq_model *m, const char *q)
{
    char k[KMAX];
    qk(k, q, "meta");
    return hdel(m, k, "paused", 6);
}

static int64_t count_field(emq_model *m, const char *q, const char *sfx)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    int64_t n = 0;
    qk(k, q, sfx);
    if (model_hget(m, k, strlen(k), "count", 5, &v, &vl) == EMQ_OK)
        parse(v, vl, &n);
    return n;
}

int model_stats(emq_model *m, const char *q, emq_stats *st)
{
    char k[KMAX];
    const unsigned char *v;
    size_t vl;
    memset(st, 0, sizeof *st);
    qk(k, q, "pending");
    zcard(m, k, &st->pending);
    qk(k, q, "active");
    zcard(m, k, &st->active);
    qk(k, q, "schedule");
    zcard(m, k, &st->scheduled);
    qk(k, q, "dead");
    zcard(m, k, &st->dead);
    st->completed = count_field(m, q, "metrics:completed");
    st->failed = count_field(m, q, "metrics:failed");
    qk(k, q, "meta");
    st->paused = model_hget(m, k, strlen(k), "paused", 6, &v, &vl) == EMQ_OK;
    return EMQ_OK;
}
