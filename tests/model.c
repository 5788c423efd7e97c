/*
 * model.c — the model's keyspace, its replies and its dispatcher (model.h).
 *
 * Part 1 is a toy Redis keyspace over arrays (lazy key and field expiry at
 * the call's clock, empty aggregates vanish); part 2 the reply builders;
 * part 3 the verb table (tests/model_verbs.def), the binding of a caller's
 * arguments by name, the host gates by argument kind, and model_call; part
 * 4 raw store commands, the walk and the canonical dump. The transitions
 * live in tests/model_t1.c ... model_t5.c.
 *
 * Rule: nothing here calls storage/ or engine/ (only the emq_buf type, the
 * public header's types and emq_verb_find, the public description of a
 * registry row, are shared), so the model stays an independent oracle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "model_int.h"
#include "ksdump.h"

/* ---------------------------------------------------------------- values */

mbs mb_dup(const void *p, size_t n)
{
    mbs b;
    b.p = malloc(n + 1);
    if (b.p == NULL) abort();
    if (n) memcpy(b.p, p, n);
    b.p[n] = 0;
    b.n = n;
    return b;
}

int mb_cmp(const void *a, size_t an, const void *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

int mb_eq(const mbs *b, const void *p, size_t n)
{
    return b->n == n && (n == 0 || memcmp(b->p, p, n) == 0);
}

void mb_free_list(mbs *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) free(v[i].p);
    free(v);
}

size_t m_fmt(char *b, int64_t v)
{
    return (size_t)sprintf(b, "%lld", (long long)v);
}

int m_parse(const void *p, size_t n, int64_t *out)
{
    char t[32], *end;
    if (n == 0 || n >= sizeof t) return 0;
    memcpy(t, p, n);
    t[n] = 0;
    if (t[0] == '+' || t[0] == ' ' || memchr(t, 0, n)) return 0;
    *out = strtoll(t, &end, 10);
    return *end == 0;
}

double m_num(const void *p, size_t n, int *ok)
{
    char t[64], *end;
    double d;
    *ok = 0;
    if (n == 0 || n >= sizeof t) return 0;
    memcpy(t, p, n);
    t[n] = 0;
    d = strtod(t, &end);
    if (*end != 0 || end == t) return 0;
    *ok = 1;
    return d;
}

/* -------------------------------------------------------------- keyspace */

static void key_free(mkey *k)
{
    size_t i;
    free(k->name.p);
    free(k->str.p);
    for (i = 0; i < k->hn; i++) {
        free(k->h[i].f.p);
        free(k->h[i].v.p);
    }
    for (i = 0; i < k->zn; i++) free(k->z[i].m.p);
    for (i = 0; i < k->ln; i++) free(k->l[i].p);
    for (i = 0; i < k->sn; i++) free(k->s[i].p);
    free(k->h);
    free(k->z);
    free(k->l);
    free(k->s);
    free(k);
}

emq_model *model_new(void)
{
    emq_model *m = calloc(1, sizeof *m);
    if (m) m->node = 1;
    return m;
}

void model_set_node(emq_model *m, int node)
{
    m->node = node;
}

void model_free(emq_model *m)
{
    size_t i;
    if (!m) return;
    for (i = 0; i < m->n; i++) key_free(m->k[i]);
    free(m->k);
    free(m->pub_ch.p);
    free(m->pub_msg.p);
    free(m);
}

static void drop_at(emq_model *m, size_t i)
{
    key_free(m->k[i]);
    m->k[i] = m->k[--m->n];
}

/* The index of live key `k`, or -1 (an expired key is dropped here). */
static long kfind(emq_model *m, const void *k, size_t kl)
{
    size_t i;
    for (i = 0; i < m->n; i++)
        if (mb_eq(&m->k[i]->name, k, kl)) {
            if (m->k[i]->exp >= 0 && m->now > m->k[i]->exp) {
                drop_at(m, i);
                return -1;
            }
            return (long)i;
        }
    return -1;
}

/* Drop expired fields of hash `k` (a hash whose every field expired is
 * gone). */
static void hash_expire(emq_model *m, mkey *k)
{
    size_t i, o = 0;
    for (i = 0; i < k->hn; i++) {
        if (k->h[i].exp >= 0 && m->now > k->h[i].exp) {
            free(k->h[i].f.p);
            free(k->h[i].v.p);
        } else {
            k->h[o++] = k->h[i];
        }
    }
    k->hn = o;
}

static int mk_getn(emq_model *m, const void *k, size_t kl, int type,
                   int create, mkey **out)
{
    long i = kfind(m, k, kl);
    *out = NULL;
    if (i >= 0 && m->k[i]->type == EMQ_T_HASH) {
        hash_expire(m, m->k[i]);
        if (m->k[i]->hn == 0) {
            drop_at(m, (size_t)i);
            i = -1;
        }
    }
    if (i >= 0) {
        if (m->k[i]->type != type) return EMQ_EWRONGTYPE;
        *out = m->k[i];
        return 1;
    }
    if (!create) return 0;
    m->k = realloc(m->k, (m->n + 1) * sizeof *m->k);
    m->k[m->n] = calloc(1, sizeof(mkey));
    if (m->k == NULL || m->k[m->n] == NULL) abort();
    m->k[m->n]->name = mb_dup(k, kl);
    m->k[m->n]->type = type;
    m->k[m->n]->exp = -1;
    *out = m->k[m->n++];
    return 1;
}

int mk_get(emq_model *m, const char *k, int type, int create, mkey **out)
{
    return mk_getn(m, k, strlen(k), type, create, out);
}

static int mk_deln(emq_model *m, const void *k, size_t kl)
{
    long i = kfind(m, k, kl);
    if (i < 0) return 0;
    drop_at(m, (size_t)i);
    return 1;
}

int mk_del(emq_model *m, const char *k)
{
    return mk_deln(m, k, strlen(k));
}

int mk_exists(emq_model *m, const char *k)
{
    long i = kfind(m, k, strlen(k));
    if (i >= 0 && m->k[i]->type == EMQ_T_HASH) {
        hash_expire(m, m->k[i]);
        if (m->k[i]->hn == 0) {
            drop_at(m, (size_t)i);
            return 0;
        }
    }
    return i >= 0;
}

void mk_tidy(emq_model *m, mkey *k)
{
    if (k && k->type != EMQ_T_STRING && k->hn == 0 && k->zn == 0 &&
        k->ln == 0 && k->sn == 0)
        mk_deln(m, k->name.p, k->name.n);
}

/* ---- strings */

int ms_get(emq_model *m, const char *k, const unsigned char **v, size_t *n)
{
    mkey *key;
    if (mk_get(m, k, EMQ_T_STRING, 0, &key) != 1) return 0;
    *v = key->str.p;
    *n = key->str.n;
    return 1;
}

void ms_set(emq_model *m, const char *k, const void *v, size_t n,
            int64_t exp)
{
    mkey *key;
    mk_del(m, k);
    mk_get(m, k, EMQ_T_STRING, 1, &key);
    key->str = mb_dup(v, n);
    key->exp = exp;
}

int ms_incrby(emq_model *m, const char *k, int64_t by, int64_t *out)
{
    mkey *key;
    int64_t v = 0;
    char b[32];
    int rc = mk_get(m, k, EMQ_T_STRING, 0, &key);
    if (rc < 0) return rc;
    if (rc == 1 && !m_parse(key->str.p, key->str.n, &v)) return EMQ_EPROTO;
    v += by;
    if (rc == 0) mk_get(m, k, EMQ_T_STRING, 1, &key);
    free(key->str.p);
    key->str = mb_dup(b, m_fmt(b, v));
    *out = v;
    return EMQ_OK;
}

int ms_pexpire(emq_model *m, const char *k, int64_t ttl)
{
    long i = kfind(m, k, strlen(k));
    if (i < 0) return 0;
    m->k[i]->exp = m->now + ttl;
    return 1;
}

int64_t ms_pttl(emq_model *m, const char *k)
{
    long i = kfind(m, k, strlen(k));
    if (i < 0) return -2;
    if (m->k[i]->exp < 0) return -1;
    return m->k[i]->exp - m->now;
}

/* ---- hashes */

static long hfind(const mkey *k, const void *f, size_t fl)
{
    size_t i;
    for (i = 0; k && i < k->hn; i++)
        if (mb_eq(&k->h[i].f, f, fl)) return (long)i;
    return -1;
}

int mh_get(emq_model *m, const char *k, const void *f, size_t fl,
           const unsigned char **v, size_t *vl)
{
    mkey *key;
    long i;
    if (mk_get(m, k, EMQ_T_HASH, 0, &key) != 1) return 0;
    if ((i = hfind(key, f, fl)) < 0) return 0;
    *v = key->h[i].v.p;
    *vl = key->h[i].v.n;
    return 1;
}

mbs mh_dup(emq_model *m, const char *k, const char *f)
{
    const unsigned char *v;
    size_t vl;
    mbs none = {NULL, 0};
    if (!mh_get(m, k, f, strlen(f), &v, &vl)) return none;
    return mb_dup(v, vl);
}

int mh_set(emq_model *m, const char *k, const void *f, size_t fl,
           const void *v, size_t vl)
{
    mkey *key;
    long i;
    if (mk_get(m, k, EMQ_T_HASH, 1, &key) < 0) return 0;
    if ((i = hfind(key, f, fl)) >= 0) {
        free(key->h[i].v.p);
        key->h[i].v = mb_dup(v, vl);
        key->h[i].exp = -1;
        return 0;
    }
    key->h = realloc(key->h, (key->hn + 1) * sizeof *key->h);
    if (key->h == NULL) abort();
    key->h[key->hn].f = mb_dup(f, fl);
    key->h[key->hn].v = mb_dup(v, vl);
    key->h[key->hn].exp = -1;
    key->hn++;
    return 1;
}

int mh_sets(emq_model *m, const char *k, const char *f, const void *v,
            size_t vl)
{
    return mh_set(m, k, f, strlen(f), v, vl);
}

int mh_setnx(emq_model *m, const char *k, const void *f, size_t fl,
             const void *v, size_t vl)
{
    const unsigned char *x;
    size_t xl;
    if (mh_get(m, k, f, fl, &x, &xl)) return 0;
    return mh_set(m, k, f, fl, v, vl);
}

int mh_del(emq_model *m, const char *k, const void *f, size_t fl)
{
    mkey *key;
    long i;
    if (mk_get(m, k, EMQ_T_HASH, 0, &key) != 1) return 0;
    if ((i = hfind(key, f, fl)) < 0) return 0;
    free(key->h[i].f.p);
    free(key->h[i].v.p);
    memmove(&key->h[i], &key->h[i + 1],
            (key->hn - (size_t)i - 1) * sizeof *key->h);
    key->hn--;
    mk_tidy(m, key);
    return 1;
}

int mh_incrby(emq_model *m, const char *k, const void *f, size_t fl,
              int64_t by, int64_t *out)
{
    const unsigned char *v;
    size_t vl;
    int64_t cur = 0;
    char b[32];
    if (mh_get(m, k, f, fl, &v, &vl) && !m_parse(v, vl, &cur))
        return EMQ_EPROTO;
    cur += by;
    *out = cur;
    mh_set(m, k, f, fl, b, m_fmt(b, cur));
    return EMQ_OK;
}

void mh_expire_field(emq_model *m, const char *k, const char *f,
                     int64_t exp)
{
    mkey *key;
    long i;
    if (mk_get(m, k, EMQ_T_HASH, 0, &key) != 1) return;
    if ((i = hfind(key, f, strlen(f))) >= 0) key->h[i].exp = exp;
}

mkey *mh_all(emq_model *m, const char *k)
{
    mkey *key;
    return mk_get(m, k, EMQ_T_HASH, 0, &key) == 1 ? key : NULL;
}

/* ---- zsets */

static int zless(const mzm *a, double s, const void *mm, size_t ml)
{
    if (a->s != s) return a->s < s;
    return mb_cmp(a->m.p, a->m.n, mm, ml) < 0;
}

static long zfind(const mkey *k, const void *mm, size_t ml)
{
    size_t i;
    for (i = 0; k && i < k->zn; i++)
        if (mb_eq(&k->z[i].m, mm, ml)) return (long)i;
    return -1;
}

static void zdrop(mkey *k, size_t i)
{
    free(k->z[i].m.p);
    memmove(&k->z[i], &k->z[i + 1], (k->zn - i - 1) * sizeof *k->z);
    k->zn--;
}

static void mz_addn(emq_model *m, const void *k, size_t kl, const void *mm,
                    size_t ml, double s)
{
    mkey *key;
    size_t at;
    long i;
    if (mk_getn(m, k, kl, EMQ_T_ZSET, 1, &key) < 0) return;
    if ((i = zfind(key, mm, ml)) >= 0) zdrop(key, (size_t)i);
    for (at = 0; at < key->zn && zless(&key->z[at], s, mm, ml); at++) {}
    key->z = realloc(key->z, (key->zn + 1) * sizeof *key->z);
    if (key->z == NULL) abort();
    memmove(&key->z[at + 1], &key->z[at], (key->zn - at) * sizeof *key->z);
    key->z[at].m = mb_dup(mm, ml);
    key->z[at].s = s;
    key->zn++;
}

void mz_add(emq_model *m, const char *k, const void *mm, size_t ml, double s)
{
    mz_addn(m, k, strlen(k), mm, ml, s);
}

static int mz_remn(emq_model *m, const void *k, size_t kl, const void *mm,
                   size_t ml)
{
    mkey *key;
    long i;
    if (mk_getn(m, k, kl, EMQ_T_ZSET, 0, &key) != 1) return 0;
    if ((i = zfind(key, mm, ml)) < 0) return 0;
    zdrop(key, (size_t)i);
    mk_tidy(m, key);
    return 1;
}

int mz_rem(emq_model *m, const char *k, const void *mm, size_t ml)
{
    return mz_remn(m, k, strlen(k), mm, ml);
}

int64_t mz_card(emq_model *m, const char *k)
{
    mkey *key;
    return mk_get(m, k, EMQ_T_ZSET, 0, &key) == 1 ? (int64_t)key->zn : 0;
}

int mz_has(emq_model *m, const char *k, const void *mm, size_t ml)
{
    mkey *key;
    if (mk_get(m, k, EMQ_T_ZSET, 0, &key) != 1) return 0;
    return zfind(key, mm, ml) >= 0;
}

size_t mz_head(emq_model *m, const char *k, int64_t limit, int bounded,
               double max, mbs **out)
{
    mkey *key;
    size_t n = 0, i;
    *out = NULL;
    if (mk_get(m, k, EMQ_T_ZSET, 0, &key) != 1) return 0;
    for (i = 0; i < key->zn && (limit < 0 || (int64_t)n < limit); i++) {
        if (bounded && !(key->z[i].s <= max)) break;
        *out = realloc(*out, (n + 1) * sizeof **out);
        if (*out == NULL) abort();
        (*out)[n++] = mb_dup(key->z[i].m.p, key->z[i].m.n);
    }
    return n;
}

/* ---- lists */

static int64_t ml_pushn(emq_model *m, const void *k, size_t kl, int right,
                        const void *v, size_t n)
{
    mkey *key;
    if (mk_getn(m, k, kl, EMQ_T_LIST, 1, &key) < 0) return 0;
    key->l = realloc(key->l, (key->ln + 1) * sizeof *key->l);
    if (key->l == NULL) abort();
    if (right) {
        key->l[key->ln] = mb_dup(v, n);
    } else {
        memmove(&key->l[1], &key->l[0], key->ln * sizeof *key->l);
        key->l[0] = mb_dup(v, n);
    }
    return (int64_t)++key->ln;
}

int64_t ml_push(emq_model *m, const char *k, int right, const void *v,
                size_t n)
{
    return ml_pushn(m, k, strlen(k), right, v, n);
}

void ml_trim(emq_model *m, const char *k, int64_t start, int64_t stop)
{
    mkey *key;
    int64_t len, i;
    size_t o = 0;
    if (mk_get(m, k, EMQ_T_LIST, 0, &key) != 1) return;
    len = (int64_t)key->ln;
    if (start < 0) start += len;
    if (stop < 0) stop += len;
    if (start < 0) start = 0;
    for (i = 0; i < len; i++) {
        if (i >= start && i <= stop) key->l[o++] = key->l[i];
        else free(key->l[i].p);
    }
    key->ln = o;
    mk_tidy(m, key);
}

void ml_rem_all(emq_model *m, const char *k, const void *v, size_t n)
{
    mkey *key;
    size_t i, o = 0;
    if (mk_get(m, k, EMQ_T_LIST, 0, &key) != 1) return;
    for (i = 0; i < key->ln; i++) {
        if (mb_eq(&key->l[i], v, n)) free(key->l[i].p);
        else key->l[o++] = key->l[i];
    }
    key->ln = o;
    mk_tidy(m, key);
}

int ml_has(emq_model *m, const char *k, const void *v, size_t n)
{
    mkey *key;
    size_t i;
    if (mk_get(m, k, EMQ_T_LIST, 0, &key) != 1) return 0;
    for (i = 0; i < key->ln; i++)
        if (mb_eq(&key->l[i], v, n)) return 1;
    return 0;
}

int64_t ml_len(emq_model *m, const char *k)
{
    mkey *key;
    return mk_get(m, k, EMQ_T_LIST, 0, &key) == 1 ? (int64_t)key->ln : 0;
}

mbs ml_rotate(emq_model *m, const char *k)
{
    mkey *key;
    mbs head = {NULL, 0};
    if (mk_get(m, k, EMQ_T_LIST, 0, &key) != 1) return head;
    head = key->l[0];
    memmove(&key->l[0], &key->l[1], (key->ln - 1) * sizeof *key->l);
    key->l[key->ln - 1] = head;
    return mb_dup(head.p, head.n);
}

/* ---- sets */

static int mset_addn(emq_model *m, const void *k, size_t kl, const void *v,
                     size_t n)
{
    mkey *key;
    size_t at, i;
    if (mk_getn(m, k, kl, EMQ_T_SET, 1, &key) < 0) return 0;
    for (i = 0; i < key->sn; i++)
        if (mb_eq(&key->s[i], v, n)) return 0;
    for (at = 0; at < key->sn &&
                 mb_cmp(key->s[at].p, key->s[at].n, v, n) < 0; at++) {}
    key->s = realloc(key->s, (key->sn + 1) * sizeof *key->s);
    if (key->s == NULL) abort();
    memmove(&key->s[at + 1], &key->s[at], (key->sn - at) * sizeof *key->s);
    key->s[at] = mb_dup(v, n);
    key->sn++;
    return 1;
}

int mset_add(emq_model *m, const char *k, const void *v, size_t n)
{
    return mset_addn(m, k, strlen(k), v, n);
}

static int mset_remn(emq_model *m, const void *k, size_t kl, const void *v,
                     size_t n)
{
    mkey *key;
    size_t i;
    if (mk_getn(m, k, kl, EMQ_T_SET, 0, &key) != 1) return 0;
    for (i = 0; i < key->sn; i++)
        if (mb_eq(&key->s[i], v, n)) {
            free(key->s[i].p);
            memmove(&key->s[i], &key->s[i + 1],
                    (key->sn - i - 1) * sizeof *key->s);
            key->sn--;
            mk_tidy(m, key);
            return 1;
        }
    return 0;
}

int mset_rem(emq_model *m, const char *k, const void *v, size_t n)
{
    return mset_remn(m, k, strlen(k), v, n);
}

int mset_has(emq_model *m, const char *k, const void *v, size_t n)
{
    mkey *key;
    size_t i;
    if (mk_get(m, k, EMQ_T_SET, 0, &key) != 1) return 0;
    for (i = 0; i < key->sn; i++)
        if (mb_eq(&key->s[i], v, n)) return 1;
    return 0;
}

/* ------------------------------------------------------------------ keys */

void qk(char *b, const char *q, const char *sfx)
{
    snprintf(b, KMAX, "emq:{%s}:%s", q, sfx);
}

void jk(char *b, const char *q, const void *id, size_t n, const char *sub)
{
    snprintf(b, KMAX, "emq:{%s}:job:%.*s%s%s", q, (int)n, (const char *)id,
             sub ? ":" : "", sub ? sub : "");
}

void lk(char *b, const char *q, const void *g, size_t n)
{
    snprintf(b, KMAX, "emq:{%s}:g:%.*s:pending", q, (int)n,
             (const char *)g);
}

/* --------------------------------------------------------------- replies */

void model_reply_free(emq_reply *r)
{
    size_t i;
    if (r == NULL) return;
    for (i = 0; i < r->n; i++) model_reply_free(&r->elem[i]);
    free(r->elem);
    free(r->str);
    memset(r, 0, sizeof *r);
}

void mr_nil(emq_reply *r)
{
    model_reply_free(r);
}

void mr_int(emq_reply *r, int64_t v)
{
    model_reply_free(r);
    r->type = EMQ_REPLY_INT;
    r->integer = v;
}

void mr_bool(emq_reply *r, int v)
{
    model_reply_free(r);
    r->type = EMQ_REPLY_BOOL;
    r->integer = v != 0;
}

static void mr_str(emq_reply *r, int type, const void *p, size_t n)
{
    model_reply_free(r);
    r->type = type;
    r->str = malloc(n + 1);
    if (r->str == NULL) abort();
    if (n) memcpy(r->str, p, n);
    r->str[n] = 0;
    r->len = n;
}

void mr_bulk(emq_reply *r, const void *p, size_t n)
{
    mr_str(r, EMQ_REPLY_BULK, p, n);
}

void mr_status(emq_reply *r, const char *s)
{
    mr_str(r, EMQ_REPLY_STATUS, s, strlen(s));
}

void mr_array(emq_reply *r, int type)
{
    model_reply_free(r);
    r->type = type;
}

emq_reply *mr_push(emq_reply *r)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4;
        r->elem = realloc(r->elem, r->cap * sizeof *r->elem);
        if (r->elem == NULL) abort();
    }
    memset(&r->elem[r->n], 0, sizeof *r->elem);
    return &r->elem[r->n++];
}

void mr_push_bulk(emq_reply *r, const void *p, size_t n)
{
    mr_bulk(mr_push(r), p, n);
}

void mr_push_int(emq_reply *r, int64_t v)
{
    mr_int(mr_push(r), v);
}

int mc_err(mcall *c, int code, const char *msg)
{
    mr_str(c->r, EMQ_REPLY_ERROR, msg, strlen(msg));
    return code;
}

int mc_refuse(mcall *c, const char *msg)
{
    mr_str(c->r, EMQ_REPLY_REFUSED, msg, strlen(msg));
    return EMQ_EREFUSED;
}

/* ---------------------------------------------------------- ids, queues */

static const char B62[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

int m_is_job(const void *id, size_t n)
{
    return n >= 3 && memcmp(id, "JOB", 3) == 0;
}

int m_token_eq(const unsigned char *att, size_t n, int64_t token)
{
    char b[32];
    size_t l = m_fmt(b, token);
    return n == l && memcmp(att, b, l) == 0;
}

int m_id_valid(const void *id, size_t n)
{
    const unsigned char *p = id;
    size_t i;
    if (n != 14) return 0;
    for (i = 0; i < 3; i++)
        if (p[i] < 'A' || p[i] > 'Z') return 0;
    for (i = 3; i < 14; i++)
        if (p[i] == 0 || strchr(B62, p[i]) == NULL) return 0;
    return memcmp(p + 3, "AzL8n0Y58m7", 11) <= 0;
}

int m_queue_valid(const void *q, size_t n)
{
    const unsigned char *p = q;
    size_t i;
    if (n < 1 || n > 128 || (n == 3 && memcmp(q, "emq", 3) == 0)) return 0;
    for (i = 0; i < n; i++)
        if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z') ||
              (p[i] >= '0' && p[i] <= '9') || p[i] == '.' || p[i] == '_' ||
              p[i] == '-'))
            return 0;
    return 1;
}

/* §4.2: the cell holds ts << 12 | seq; snow = ts << 22 | node << 12 | seq */
void m_mint(emq_model *m, int64_t now, char out[15])
{
    int64_t floor = (now - INT64_C(1704067200000)) * 4096, cell, snow;
    int i;
    cell = floor > m->cell ? floor : m->cell + 1;
    m->cell = cell;
    snow = ((cell >> 12) << 22) | ((int64_t)m->node << 12) | (cell & 0xFFF);
    memcpy(out, "JOB", 3);
    for (i = 13; i >= 3; i--) {
        out[i] = B62[snow % 62];
        snow /= 62;
    }
    out[14] = 0;
}

void model_mint_observe(emq_model *m, const char *id, size_t n)
{
    int64_t snow = 0, cell;
    size_t i;
    if (!m_id_valid(id, n)) return;
    for (i = 3; i < 14; i++)
        snow = snow * 62 + (int64_t)(strchr(B62, id[i]) - B62);
    cell = ((snow >> 22) << 12) | (snow & 0xFFF);
    if (cell > m->cell) m->cell = cell;
}

/* ---------------------------------------------------------------- table */

#define A(K, N) { #N, EMQ_ARG_##K, 0, NULL },
#define AO(K, N) { #N, EMQ_ARG_##K, EMQ_ARGF_OPT, NULL },
#define AR(K, N) { #N, EMQ_ARG_##K, EMQ_ARGF_REST, NULL },
#define AR1(K, N) { #N, EMQ_ARG_##K, EMQ_ARGF_REST | EMQ_ARGF_MIN1, NULL },
#define AW(N, W) { #N, EMQ_ARG_WORD, 0, W },
#define AWO(N, W) { #N, EMQ_ARG_WORD, EMQ_ARGF_OPT, W },
#define AWR(N, W) { #N, EMQ_ARG_WORD, EMQ_ARGF_REST, W },
#define ARGS(...) __VA_ARGS__

typedef struct mrow {
    model_verb v;
    model_fn fn;
} mrow;

#define MV(NAME, TIER, FN, ARGS_) \
    static const emq_arg_info args_##FN[] = { ARGS_ { NULL, 0, 0, NULL } };
#include "model_verbs.def"
#undef MV

static const mrow rows[] = {
#define MV(NAME, TIER, FN, ARGS_)                                           \
    { { NAME, TIER, args_##FN,                                              \
        sizeof args_##FN / sizeof args_##FN[0] - 1 }, FN },
#include "model_verbs.def"
#undef MV
};
#define NROWS (sizeof rows / sizeof rows[0])

size_t model_verb_count(void)
{
    return NROWS;
}

const model_verb *model_verb_at(size_t i)
{
    return i < NROWS ? &rows[i].v : NULL;
}

const model_verb *model_verb_find(const char *name)
{
    size_t i;
    for (i = 0; name && i < NROWS; i++)
        if (strcmp(rows[i].v.name, name) == 0) return &rows[i].v;
    return NULL;
}

void model_verb_info(const model_verb *v, emq_verb_info *out)
{
    memset(out, 0, sizeof *out);
    out->id = -1;
    out->name = v->name;
    out->tier = v->tier;
    out->kind = EMQ_VERB_WRITE;
    out->args = v->args;
    out->nargs = v->nargs;
    out->keys = "";
    out->summary = "the model's row";
}

/* Verbs the model does not have, each with the reason. */
#define NO_STREAMS "the model has no stream type (T5.1-T5.7 are streams " \
                   "over entries, groups and PELs); streams are checked by " \
                   "the golden traces and the stream engineer's suites"
static const struct {
    const char *name, *why;
} unmodelled[] = {
    {"flow_recover", "it replays emqlite's procedure journal, which lives "
     "outside the keyspace and holds nothing unless a crash cut an add "
     "(tests/crash_flows.c and test_flows prove it); on any state the model "
     "test builds it changes nothing"},
    {"flow_tree", "a read of emqlite's own (every job row and outbox of the "
     "file, depth first), beyond the wire; test_flows and cli_flow_test "
     "check its trees"},
    {"append", NO_STREAMS},
    {"append_id", NO_STREAMS},
    {"append_batch", NO_STREAMS},
    {"stream_add", NO_STREAMS},
    {"stream_range", NO_STREAMS},
    {"read", NO_STREAMS},
    {"read_window", NO_STREAMS},
    {"read_since", NO_STREAMS},
    {"trim", NO_STREAMS},
    {"put_archived", NO_STREAMS},
    {"get_archived", NO_STREAMS},
    {"clear_archived", NO_STREAMS},
    {"group_create", NO_STREAMS},
    {"group_read", NO_STREAMS},
    {"ack", NO_STREAMS},
    {"autoclaim", NO_STREAMS},
    {"pending_range", NO_STREAMS},
    {"stream_len", NO_STREAMS},
};

const char *model_unmodelled(const char *name)
{
    size_t i;
    if (name == NULL || model_verb_find(name)) return NULL;
    for (i = 0; i < sizeof unmodelled / sizeof unmodelled[0]; i++)
        if (strcmp(unmodelled[i].name, name) == 0) return unmodelled[i].why;
    return NULL;
}

/* ------------------------------------------------------------- binding */

static size_t nfixed_of(const emq_arg_info *a, size_t n)
{
    size_t k = 0;
    while (k < n && !(a[k].flags & EMQ_ARGF_REST)) k++;
    return k;
}

/* The index of the spec named `name` in `a[0..n)`, or -1. */
static long spec_index(const emq_arg_info *a, size_t n, const char *name)
{
    size_t k;
    for (k = 0; k < n; k++)
        if (strcmp(a[k].name, name) == 0) return (long)k;
    return -1;
}

typedef struct rawarg {
    const char *p;
    size_t n;
} rawarg;

/* Reorder the caller's arguments (in the registry row's order) into the
 * model's: fixed arguments by name, the repeated tail group by group with
 * its members by name. Returns 0, or EMQ_EINVAL when the two rows do not
 * name the same arguments. */
static int bind(const model_verb *mv, const emq_verb_info *rv, size_t argc,
                const rawarg *in, rawarg **out, size_t *outc)
{
    size_t mfix = nfixed_of(mv->args, mv->nargs);
    size_t rfix = nfixed_of(rv->args, rv->nargs);
    size_t mg = mv->nargs - mfix, rg = rv->nargs - rfix, i, k, groups;
    rawarg *o;
    if (mfix != rfix || mg != rg) return EMQ_EINVAL;
    o = calloc(argc > mfix ? argc : mfix ? mfix : 1, sizeof *o);
    if (o == NULL) abort();
    for (i = 0; i < rfix; i++) {
        long at = spec_index(mv->args, mfix, rv->args[i].name);
        if (at < 0) {
            free(o);
            return EMQ_EINVAL;
        }
        if (i < argc) o[at] = in[i];
    }
    *outc = argc < mfix ? argc : mfix;
    /* absent trailing arguments of the registry's order may sit anywhere
     * in the model's: keep every fixed slot, absent as NULL */
    if (argc < rfix) *outc = mfix;
    if (rg && argc > rfix) {
        groups = (argc - rfix) / rg;
        for (k = 0; k < rg; k++) {
            long at = spec_index(mv->args + mfix, mg, rv->args[rfix + k].name);
            if (at < 0) {
                free(o);
                return EMQ_EINVAL;
            }
            for (i = 0; i < groups; i++)
                o[mfix + i * mg + (size_t)at] = in[rfix + i * rg + k];
        }
        *outc = argc;
    }
    *out = o;
    return 0;
}

/* ---------------------------------------------------------------- gates */

static int64_t word_index(const char *words, const char *s, size_t n)
{
    const char *w = words;
    int64_t i = 0;
    while (w && *w) {
        const char *e = strchr(w, '|');
        size_t l = e ? (size_t)(e - w) : strlen(w);
        if (l == n && memcmp(w, s, n) == 0) return i;
        i++;
        w = e ? e + 1 : NULL;
    }
    return -1;
}

static int did_valid(const char *s, size_t n)
{
    size_t i;
    if (n < 1 || n > 255) return 0;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
              (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
              ch == '-'))
            return 0;
    }
    return 1;
}

/* A decimal argument in its shortest form only (as Valkey reads counters:
 * no sign '+', no spaces, no leading zeros, no "-0"). */
static int arg_int(const char *p, size_t n, int64_t *out)
{
    char back[32];
    return m_parse(p, n, out) && m_fmt(back, *out) == n &&
           memcmp(back, p, n) == 0;
}

/* Gate one argument by its model spec (PROTOCOL.md §6.0 and A.3). */
static int gate(const emq_arg_info *s, const rawarg *in, marg *o)
{
    memset(o, 0, sizeof *o);
    o->s = in->p;
    o->n = in->n;
    o->present = in->p != NULL;
    /* An optional queue given empty is absent (flow_child's pq, set_link's
     * parent_queue: "" for a parent in the same queue). */
    if (o->present && s->kind == EMQ_ARG_QUEUE && (s->flags & EMQ_ARGF_OPT) &&
        in->n == 0)
        o->present = 0;
    if (!o->present) {
        if (s->flags & EMQ_ARGF_OPT) return 0;
        switch (s->kind) {
        case EMQ_ARG_QUEUE: return EMQ_EQUEUE;
        case EMQ_ARG_ID: case EMQ_ARG_GROUP: return EMQ_EID;
        case EMQ_ARG_BYTES:
            o->s = "";
            o->present = 1;
            return 0;
        default: return EMQ_EINVAL;
        }
    }
    switch (s->kind) {
    case EMQ_ARG_QUEUE:
        return m_queue_valid(in->p, in->n) ? 0 : EMQ_EQUEUE;
    case EMQ_ARG_ID:
    case EMQ_ARG_GROUP:
        return m_id_valid(in->p, in->n) ? 0 : EMQ_EID;
    case EMQ_ARG_BYTES:
        return 0;
    case EMQ_ARG_INT:
    case EMQ_ARG_POS:
    case EMQ_ARG_NNEG:
        if (!arg_int(in->p, in->n, &o->i)) return EMQ_EINVAL;
        if (s->kind == EMQ_ARG_POS && o->i <= 0) return EMQ_EINVAL;
        if (s->kind == EMQ_ARG_NNEG && o->i < 0) return EMQ_EINVAL;
        return 0;
    case EMQ_ARG_BOOL:
        if ((in->n == 1 && in->p[0] == '1') ||
            (in->n == 4 && memcmp(in->p, "true", 4) == 0))
            o->i = 1;
        else if ((in->n == 1 && in->p[0] == '0') ||
                 (in->n == 5 && memcmp(in->p, "false", 5) == 0))
            o->i = 0;
        else
            return EMQ_EINVAL;
        return 0;
    case EMQ_ARG_WORD:
        return (o->i = word_index(s->words, in->p, in->n)) < 0 ? EMQ_EINVAL
                                                              : 0;
    case EMQ_ARG_DID:
        return did_valid(in->p, in->n) ? 0 : EMQ_EINVAL;
    case EMQ_ARG_NAME:
        return in->n >= 1 && in->n <= 255 && !memchr(in->p, 0, in->n) &&
                       !memchr(in->p, ':', in->n)
                   ? 0
                   : EMQ_EINVAL;
    default:
        return EMQ_EINVAL;
    }
}

/* Gate all arguments in the model's order: fixed ones (absent trailing
 * optional ones allowed), then the tail in whole groups. */
static int gate_all(const model_verb *v, const rawarg *in, size_t argc,
                    marg **out, size_t *nfixed)
{
    size_t fix = nfixed_of(v->args, v->nargs), grp = v->nargs - fix, i;
    rawarg none = {NULL, 0};
    marg *a;
    int rc;
    *nfixed = fix;
    if (grp == 0 && argc > fix) return EMQ_EINVAL;
    if (grp && argc > fix && (argc - fix) % grp != 0) return EMQ_EINVAL;
    a = calloc((argc > fix ? argc : fix) + 1, sizeof *a);
    if (a == NULL) abort();
    *out = a;
    for (i = 0; i < fix; i++)
        if ((rc = gate(&v->args[i], i < argc ? &in[i] : &none, &a[i])) != 0)
            return rc;
    if (grp && argc <= fix && (v->args[fix].flags & EMQ_ARGF_MIN1))
        return EMQ_EEMPTY;
    for (i = fix; i < argc; i++)
        if ((rc = gate(&v->args[fix + (i - fix) % grp], &in[i], &a[i])) != 0)
            return rc;
    return 0;
}

int model_call(emq_model *m, const char *verb, int64_t now, size_t argc,
               const char *const *argv, const size_t *len, emq_reply *r)
{
    const model_verb *mv = model_verb_find(verb);
    const emq_verb_info *rv = emq_verb_find(verb);
    const mrow *row;
    rawarg *in, *bound = NULL;
    size_t i, bc = argc, nfixed = 0;
    marg *a = NULL;
    mcall c;
    int rc;

    memset(r, 0, sizeof *r);
    m->now = now;
    m->published = 0;
    if (mv == NULL) return EMQ_ENOTSUP;
    row = (const mrow *)(const void *)mv;
    in = calloc(argc ? argc : 1, sizeof *in);
    if (in == NULL) abort();
    for (i = 0; i < argc; i++) {
        in[i].p = argv[i];
        in[i].n = argv[i] ? (len ? len[i] : strlen(argv[i])) : 0;
    }
    if (rv != NULL) {
        if ((rc = bind(mv, rv, argc, in, &bound, &bc)) != 0) goto done;
    } else {
        bound = in;
        in = NULL;
    }
    if ((rc = gate_all(mv, bound, bc, &a, &nfixed)) != 0) goto done;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.now = now;
    c.a = a;
    c.argc = bc > nfixed ? bc : nfixed;
    c.nfixed = nfixed;
    c.r = r;
    rc = row->fn(&c);
done:
    if (rc < 0 && r->type != EMQ_REPLY_ERROR && r->type != EMQ_REPLY_REFUSED)
        model_reply_free(r);
    free(a);
    free(in);
    free(bound);
    return rc;
}

int model_published(const emq_model *m, const char **ch, size_t *chl,
                    const char **msg, size_t *ml)
{
    if (!m->published) return 0;
    *ch = (const char *)m->pub_ch.p;
    *chl = m->pub_ch.n;
    *msg = (const char *)m->pub_msg.p;
    *ml = m->pub_msg.n;
    return 1;
}

int model_attempts(emq_model *m, int64_t now, const char *q, const char *id,
                   int64_t *att)
{
    char j[KMAX];
    const unsigned char *v;
    size_t vl;
    m->now = now;
    jk(j, q, id, strlen(id), NULL);
    return mh_get(m, j, "attempts", 8, &v, &vl) && m_parse(v, vl, att);
}

int model_exists(emq_model *m, int64_t now, const char *key)
{
    m->now = now;
    return mk_exists(m, key);
}

/* ------------------------------------------------------------------ raw */

static int is(const rawarg *a, const char *w)
{
    size_t n = strlen(w), i;
    if (a->n != n) return 0;
    for (i = 0; i < n; i++) {
        char x = a->p[i];
        if (x >= 'a' && x <= 'z') x = (char)(x - 32);
        if (x != w[i]) return 0;
    }
    return 1;
}

static int raw_type(emq_model *m, const rawarg *k, int type)
{
    long i = kfind(m, k->p, k->n);
    return i >= 0 && m->k[i]->type != type;
}

int model_raw(emq_model *m, int64_t now, size_t argc,
              const char *const *argv, const size_t *len, emq_reply *r)
{
    rawarg a[64];
    int64_t total = 0, v;
    size_t i;
    memset(r, 0, sizeof *r);
    m->now = now;
    if (argc < 2 || argc > 64) return -1;
    for (i = 0; i < argc; i++) {
        a[i].p = argv[i];
        a[i].n = len ? len[i] : strlen(argv[i]);
    }
#define WRONG(t)                                                           \
    do {                                                                   \
        if (raw_type(m, &a[1], t)) {                                       \
            mr_str(r, EMQ_REPLY_ERROR, WRONGTYPE_TEXT,                     \
                   strlen(WRONGTYPE_TEXT));                                \
            return 0;                                                      \
        }                                                                  \
    } while (0)
#define WRONGTYPE_TEXT "WRONGTYPE Operation against a key holding the " \
                       "wrong kind of value"
    if (is(&a[0], "DEL")) {
        for (i = 1; i < argc; i++) total += mk_deln(m, a[i].p, a[i].n);
    } else if (is(&a[0], "HSET") && argc >= 4 && argc % 2 == 0) {
        char k[KMAX];
        WRONG(EMQ_T_HASH);
        snprintf(k, sizeof k, "%.*s", (int)a[1].n, a[1].p);
        for (i = 2; i < argc; i += 2)
            total += mh_set(m, k, a[i].p, a[i].n, a[i + 1].p, a[i + 1].n);
    } else if (is(&a[0], "HDEL") && argc >= 3) {
        char k[KMAX];
        WRONG(EMQ_T_HASH);
        snprintf(k, sizeof k, "%.*s", (int)a[1].n, a[1].p);
        for (i = 2; i < argc; i++) total += mh_del(m, k, a[i].p, a[i].n);
    } else if (is(&a[0], "HINCRBY") && argc == 4) {
        char k[KMAX];
        WRONG(EMQ_T_HASH);
        snprintf(k, sizeof k, "%.*s", (int)a[1].n, a[1].p);
        if (!m_parse(a[3].p, a[3].n, &v) ||
            mh_incrby(m, k, a[2].p, a[2].n, v, &total) != EMQ_OK)
            return -1;
    } else if (is(&a[0], "ZADD") && argc >= 4 && argc % 2 == 0) {
        WRONG(EMQ_T_ZSET);
        for (i = 2; i < argc; i += 2) {
            char t[64], *end;
            double s;
            if (a[i].n == 0 || a[i].n >= sizeof t) return -1;
            memcpy(t, a[i].p, a[i].n);
            t[a[i].n] = 0;
            s = strtod(t, &end);
            if (*end) return -1;
            {
                mkey *key;
                int had = mk_getn(m, a[1].p, a[1].n, EMQ_T_ZSET, 0, &key) ==
                              1 && zfind(key, a[i + 1].p, a[i + 1].n) >= 0;
                mz_addn(m, a[1].p, a[1].n, a[i + 1].p, a[i + 1].n, s);
                total += !had;
            }
        }
    } else if (is(&a[0], "ZREM") && argc >= 3) {
        WRONG(EMQ_T_ZSET);
        for (i = 2; i < argc; i++)
            total += mz_remn(m, a[1].p, a[1].n, a[i].p, a[i].n);
    } else if (is(&a[0], "SET") && (argc == 3 || argc == 5)) {
        char k[KMAX];
        int64_t exp = -1;
        if (argc == 5) {
            if (!is(&a[3], "PX") || !m_parse(a[4].p, a[4].n, &v) || v <= 0)
                return -1;
            exp = now + v;
        }
        snprintf(k, sizeof k, "%.*s", (int)a[1].n, a[1].p);
        ms_set(m, k, a[2].p, a[2].n, exp);
        mr_status(r, "OK");
        return 0;
    } else if (is(&a[0], "RPUSH") && argc >= 3) {
        WRONG(EMQ_T_LIST);
        for (i = 2; i < argc; i++)
            total = ml_pushn(m, a[1].p, a[1].n, 1, a[i].p, a[i].n);
    } else if (is(&a[0], "SADD") && argc >= 3) {
        WRONG(EMQ_T_SET);
        for (i = 2; i < argc; i++)
            total += mset_addn(m, a[1].p, a[1].n, a[i].p, a[i].n);
    } else if (is(&a[0], "SREM") && argc >= 3) {
        WRONG(EMQ_T_SET);
        for (i = 2; i < argc; i++)
            total += mset_remn(m, a[1].p, a[1].n, a[i].p, a[i].n);
    } else {
        return -1;
    }
#undef WRONG
    mr_int(r, total);
    return 0;
}

/* ----------------------------------------------------------------- walk */

static int cmp_keyp(const void *a, const void *b)
{
    const mkey *x = *(const mkey *const *)a, *y = *(const mkey *const *)b;
    return mb_cmp(x->name.p, x->name.n, y->name.p, y->name.n);
}

void model_walk(emq_model *m, int64_t now, const model_visitor *v,
                void *ctx)
{
    size_t i, j;
    m->now = now;
    /* drop what expired, then walk in key order */
    for (i = 0; i < m->n;) {
        mkey *k = m->k[i];
        if (k->exp >= 0 && now > k->exp) {
            drop_at(m, i);
            continue;
        }
        if (k->type == EMQ_T_HASH) {
            hash_expire(m, k);
            if (k->hn == 0) {
                drop_at(m, i);
                continue;
            }
        }
        i++;
    }
    if (m->n > 1) qsort(m->k, m->n, sizeof *m->k, cmp_keyp);
    for (i = 0; i < m->n; i++) {
        const mkey *k = m->k[i];
        v->key(ctx, k->name.p, k->name.n, k->type, k->exp);
        switch (k->type) {
        case EMQ_T_STRING:
            v->str(ctx, k->str.p, k->str.n);
            break;
        case EMQ_T_HASH:
            for (j = 0; j < k->hn; j++)
                v->field(ctx, k->h[j].f.p, k->h[j].f.n, k->h[j].v.p,
                         k->h[j].v.n);
            break;
        case EMQ_T_ZSET:
            for (j = 0; j < k->zn; j++)
                v->member(ctx, k->z[j].m.p, k->z[j].m.n, k->z[j].s);
            break;
        case EMQ_T_LIST:
            for (j = 0; j < k->ln; j++) v->elem(ctx, k->l[j].p, k->l[j].n);
            break;
        case EMQ_T_SET:
            for (j = 0; j < k->sn; j++) v->elem(ctx, k->s[j].p, k->s[j].n);
            break;
        }
    }
}

/* The dump: a hash's fields are gathered and written sorted at the next
 * key (or the end). */
typedef struct dumpctx {
    emq_buf *out;
    kd_pair *f;
    size_t fn, fcap;
} dumpctx;

static void d_flush(dumpctx *d)
{
    if (d->fn) kd_hash(d->out, d->f, d->fn);
    d->fn = 0;
}

static void d_key(void *ctx, const void *name, size_t n, int type,
                  int64_t exp)
{
    dumpctx *d = ctx;
    d_flush(d);
    kd_key(d->out, name, n, type, exp);
}

static void d_str(void *ctx, const void *v, size_t n)
{
    kd_string(((dumpctx *)ctx)->out, v, n);
}

static void d_field(void *ctx, const void *f, size_t fl, const void *v,
                    size_t vl)
{
    dumpctx *d = ctx;
    if (d->fn == d->fcap) {
        d->fcap = d->fcap ? d->fcap * 2 : 16;
        d->f = realloc(d->f, d->fcap * sizeof *d->f);
        if (d->f == NULL) abort();
    }
    d->f[d->fn].a = f;
    d->f[d->fn].an = fl;
    d->f[d->fn].b = v;
    d->f[d->fn].bn = vl;
    d->fn++;
}

static void d_member(void *ctx, const void *mm, size_t n, double s)
{
    kd_zmember(((dumpctx *)ctx)->out, mm, n, s);
}

static void d_elem(void *ctx, const void *v, size_t n)
{
    kd_elem(((dumpctx *)ctx)->out, v, n);
}

void model_dump(emq_model *m, int64_t now, emq_buf *out)
{
    static const model_visitor vis = {d_key, d_str, d_field, d_member,
                                      d_elem};
    dumpctx d = {out, NULL, 0, 0};
    out->len = 0;
    emq_buf_append(out, "", 0);
    model_walk(m, now, &vis, &d);
    d_flush(&d);
    free(d.f);
}
