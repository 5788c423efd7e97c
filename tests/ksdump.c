/*
 * ksdump.c — the canonical keyspace text of ksdump.h and the store dump
 * (which reads each key through its row of storage/types.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksdump.h"
#include "types.h"

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

/* Hash fields are collected (they print sorted); other elements print as
 * they come, in the store's order. */
typedef struct dump {
    emq_store *st;
    emq_buf *out;
    const emq_typedef *t;
    kd_pair *f;
    size_t n, cap;
} dump;

static int on_elem(void *ctx, const emq_elem *e)
{
    dump *d = ctx;
    if (d->t->order == EMQ_ORDER_ONE) {
        kd_string(d->out, e->a.p, e->a.n);
    } else if (d->t->scored) {
        kd_zmember(d->out, e->a.p, e->a.n, e->score);
    } else if (d->t->arity == 1) {
        kd_elem(d->out, e->a.p, e->a.n);
    } else {
        if (d->n == d->cap) {
            d->cap = d->cap ? d->cap * 2 : 8;
            d->f = realloc(d->f, d->cap * sizeof *d->f);
        }
        unsigned char *a = malloc(e->a.n + 1), *b = malloc(e->b.n + 1);
        memcpy(a, e->a.p, e->a.n);
        memcpy(b, e->b.p, e->b.n);
        d->f[d->n++] = (kd_pair){a, e->a.n, b, e->b.n};
    }
    return 0;
}

static int key_cb(void *ctx, const unsigned char *key, size_t klen, int type)
{
    dump *d = ctx;
    int64_t at = -1;
    int rc = EMQ_OK;
    static const char ver[] = "{emq}:version";
    if (klen == sizeof ver - 1 && memcmp(key, ver, klen) == 0) return 0;
    /* The key name is owned by the walk; copy it before nested reads. */
    emq_buf name = {0};
    emq_buf_set(&name, key, klen);
    if (emq_key_expiry(d->st, name.p, name.len, &at) != EMQ_OK) at = -1;
    kd_key(d->out, name.p, name.len, type, at);
    d->t = emq_typedef_of(type);
    d->n = 0;
    if (d->t)
        rc = d->t->scan(d->st, name.p, name.len, on_elem, d);
    if (d->n)
        kd_hash(d->out, d->f, d->n);
    for (size_t i = 0; i < d->n; i++) {
        free((void *)d->f[i].a);
        free((void *)d->f[i].b);
    }
    emq_buf_free(&name);
    return rc < 0 ? rc : 0;
}

int kd_store(emq_store *st, int64_t now, emq_buf *out)
{
    dump d = {st, out, NULL, NULL, 0, 0};
    int rc;
    out->len = 0;
    emq_buf_append(out, "", 0);
    if ((rc = emq_store_begin(st, 0, now)) < 0) return rc;
    rc = emq_key_scan(st, "", 0, key_cb, &d);
    emq_store_rollback(st);
    free(d.f);
    return rc < 0 ? rc : EMQ_OK;
}
