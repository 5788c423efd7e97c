/*
 * ksdump.c — the canonical keyspace text of ksdump.h and the store dump.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksdump.h"

static void put(emq_buf *out, const char *s)
{
    emq_buf_append(out, s, strlen(s));
}

static void esc(emq_buf *out, const void *p, size_t n)
{
    const unsigned char *s = p;
    char t[8];
    size_t i;
    put(out, "\"");
    for (i = 0; i < n; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\') {
            emq_buf_append(out, &s[i], 1);
        } else {
            snprintf(t, sizeof t, "\\x%02x", s[i]);
            put(out, t);
        }
    }
    put(out, "\"");
}

void kd_key(emq_buf *out, const void *name, size_t n, int type,
            int64_t expire_at)
{
    char t[64];
    put(out, "key ");
    esc(out, name, n);
    put(out, " ");
    put(out, emq_type_name(type));
    if (expire_at >= 0) {
        snprintf(t, sizeof t, " expire_at=%lld", (long long)expire_at);
        put(out, t);
    }
    put(out, "\n");
}

void kd_string(emq_buf *out, const void *v, size_t n)
{
    put(out, "  = ");
    esc(out, v, n);
    put(out, "\n");
}

static int cmp_pair(const void *x, const void *y)
{
    const kd_pair *a = x, *b = y;
    size_t n = a->an < b->an ? a->an : b->an;
    int c = n ? memcmp(a->a, b->a, n) : 0;
    if (c) return c;
    return a->an < b->an ? -1 : a->an > b->an;
}

void kd_hash(emq_buf *out, kd_pair *f, size_t n)
{
    size_t i;
    if (n > 1) qsort(f, n, sizeof *f, cmp_pair);
    for (i = 0; i < n; i++) {
        put(out, "  ");
        esc(out, f[i].a, f[i].an);
        put(out, " : ");
        esc(out, f[i].b, f[i].bn);
        put(out, "\n");
    }
}

void kd_zmember(emq_buf *out, const void *m, size_t n, double score)
{
    char t[64];
    put(out, "  ");
    esc(out, m, n);
    snprintf(t, sizeof t, " @ %.17g\n", score);
    put(out, t);
}

void kd_elem(emq_buf *out, const void *v, size_t n)
{
    put(out, "  - ");
    esc(out, v, n);
    put(out, "\n");
}

/* ------------------------------------------------------------- the store */

typedef struct fields {
    kd_pair *v;
    size_t n, cap;
} fields;

static int field_cb(void *ctx, const unsigned char *f, size_t flen,
                    const unsigned char *v, size_t vlen, int64_t expire_at)
{
    fields *fs = ctx;
    unsigned char *a, *b;
    (void)expire_at;
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? fs->cap * 2 : 8;
        fs->v = realloc(fs->v, fs->cap * sizeof *fs->v);
    }
    a = malloc(flen + 1);
    b = malloc(vlen + 1);
    memcpy(a, f, flen);
    memcpy(b, v, vlen);
    fs->v[fs->n].a = a;
    fs->v[fs->n].an = flen;
    fs->v[fs->n].b = b;
    fs->v[fs->n].bn = vlen;
    fs->n++;
    return 0;
}

static int zm_cb(void *ctx, const unsigned char *m, size_t mlen, double s)
{
    kd_zmember(ctx, m, mlen, s);
    return 0;
}

static int el_cb(void *ctx, const unsigned char *v, size_t vlen)
{
    kd_elem(ctx, v, vlen);
    return 0;
}

typedef struct scan_ctx {
    emq_store *st;
    emq_buf *out;
} scan_ctx;

static int key_cb(void *ctx, const unsigned char *key, size_t klen, int type)
{
    scan_ctx *c = ctx;
    emq_buf v = {0};
    fields fs = {0};
    int64_t at = -1;
    size_t i;
    int rc = EMQ_OK;
    static const char ver[] = "{emq}:version";
    if (klen == sizeof ver - 1 && memcmp(key, ver, klen) == 0) return 0;
    /* The key name is owned by the walk; copy it before nested reads. */
    emq_buf name = {0};
    emq_buf_set(&name, key, klen);
    if (emq_key_expiry(c->st, name.p, name.len, &at) != EMQ_OK) at = -1;
    kd_key(c->out, name.p, name.len, type, at);
    switch (type) {
    case EMQ_T_STRING:
        rc = emq_str_get(c->st, name.p, name.len, &v);
        kd_string(c->out, v.p, v.len);
        break;
    case EMQ_T_HASH:
        rc = emq_hash_getall(c->st, name.p, name.len, field_cb, &fs);
        kd_hash(c->out, fs.v, fs.n);
        for (i = 0; i < fs.n; i++) {
            free((void *)fs.v[i].a);
            free((void *)fs.v[i].b);
        }
        free(fs.v);
        break;
    case EMQ_T_ZSET:
        rc = emq_zset_range(c->st, name.p, name.len, 0, -1, zm_cb, c->out);
        break;
    case EMQ_T_LIST:
        rc = emq_list_range(c->st, name.p, name.len, 0, -1, el_cb, c->out);
        break;
    case EMQ_T_SET:
        rc = emq_sset_members(c->st, name.p, name.len, el_cb, c->out);
        break;
    default:
        break;
    }
    emq_buf_free(&v);
    emq_buf_free(&name);
    return rc < 0 ? rc : 0;
}

int kd_store(emq_store *st, int64_t now, emq_buf *out)
{
    scan_ctx c = {st, out};
    int rc;
    out->len = 0;
    emq_buf_append(out, "", 0);
    if ((rc = emq_store_begin(st, 0, now)) < 0) return rc;
    rc = emq_key_scan(st, "", 0, key_cb, &c);
    emq_store_rollback(st);
    return rc < 0 ? rc : EMQ_OK;
}
