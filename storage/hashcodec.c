/*
 * hashcodec.c — encode and decode the hash blob (see hashcodec.h), and the
 * upgrade of schema 5's blobs. Varints are LEB128 (7 bits a byte, low
 * first), at most 10 bytes.
 */
#include <stdlib.h>
#include <string.h>
#include "hashcodec.h"

int emq_varint_get(const unsigned char **p, const unsigned char *end,
                   uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end)
            return -1;
        unsigned char c = *(*p)++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* Write v as a varint at o; the byte after it. */
static unsigned char *varint_at(unsigned char *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *o++ = (unsigned char)v;
    return o;
}

int emq_varint_put(emq_buf *b, uint64_t v)
{
    unsigned char tmp[10];
    return emq_buf_append(b, tmp, (size_t)(varint_at(tmp, v) - tmp));
}

static int grow(emq_hfields *h)
{
    if (h->n < h->cap)
        return EMQ_OK;
    size_t cap = h->cap ? h->cap * 2 : 8;
    emq_hfield *e = emq_mem_realloc(h->e, cap * sizeof *e);
    if (!e)
        return EMQ_ENOMEM;
    h->e = e;
    h->cap = cap;
    return EMQ_OK;
}

/* ---------------------------------------------------------------- tokens */

/* The token of bytes p[0..n) in table t, or -1. */
static long token_of(const emq_hash_word *t, size_t nt, const void *p,
                     size_t n)
{
    for (size_t i = 0; i < nt; i++)
        if (t[i].n == n && memcmp(t[i].s, p, n) == 0)
            return (long)i;
    return -1;
}

/* One side of an entry, from its head h: a token (h odd: h >> 1 is its
 * index in t) or h >> 1 bytes at *p. */
static int read_side(const unsigned char **p, const unsigned char *end,
                     uint64_t head, const emq_hash_word *t, size_t nt,
                     const unsigned char **out, size_t *len)
{
    if (head & 1) {
        if ((head >> 1) >= nt)
            return EMQ_ECORRUPT;
        *out = (const unsigned char *)t[head >> 1].s;
        *len = t[head >> 1].n;
        return EMQ_OK;
    }
    if ((head >> 1) > (uint64_t)(end - *p))
        return EMQ_ECORRUPT;
    *out = *p;
    *len = (size_t)(head >> 1);
    *p += head >> 1;
    return EMQ_OK;
}

/*
 * An entry (schema 6): varint(F) field varint(V) value [varint(expiry)],
 * where F = (x << 2) | (has_expiry << 1) | is_token — x the field's token
 * or its length — and V = (y << 1) | is_token, y the value's token or its
 * length; a token stands for the table's bytes and has no bytes of its own.
 */
int emq_hc_decode(const unsigned char *p, size_t len, int64_t now,
                  emq_hfields *h)
{
    const unsigned char *end = p + len;
    const emq_hash_dict *d = h->dict;
    const emq_hash_word *ft = d ? d->field : NULL, *vt = d ? d->value : NULL;
    size_t nft = d ? d->nfield : 0, nvt = d ? d->nvalue : 0;
    h->n = 0;
    while (p < end) {
        uint64_t fh, vh, ex = 0;
        const unsigned char *f, *v;
        size_t fl, vl;
        if (emq_varint_get(&p, end, &fh) ||
            read_side(&p, end, ((fh >> 2) << 1) | (fh & 1), ft, nft, &f,
                      &fl) ||
            emq_varint_get(&p, end, &vh) ||
            read_side(&p, end, vh, vt, nvt, &v, &vl) ||
            ((fh & 2) && (emq_varint_get(&p, end, &ex) ||
                          ex > (uint64_t)INT64_MAX)))
            return EMQ_ECORRUPT;
        int64_t expire = fh & 2 ? (int64_t)ex : -1;
        if (expire >= 0 && now > expire)
            continue; /* lazily expired field */
        if (grow(h) != EMQ_OK)
            return EMQ_ENOMEM;
        h->e[h->n++] = (emq_hfield){f, v, fl, vl, expire};
    }
    return EMQ_OK;
}

long emq_hc_find(const emq_hfields *h, const void *f, size_t flen)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->e[i].flen == flen && memcmp(h->e[i].f, f, flen) == 0)
            return (long)i;
    return -1;
}

int emq_hc_put(emq_hfields *h, const void *f, size_t flen, const void *v,
               size_t vlen, int64_t expire)
{
    long i = emq_hc_find(h, f, flen);
    if (i >= 0) {
        h->e[i].v = v;
        h->e[i].vlen = vlen;
        h->e[i].expire = expire;
        return EMQ_OK;
    }
    if (grow(h) != EMQ_OK)
        return EMQ_ENOMEM;
    h->e[h->n++] = (emq_hfield){f, v, flen, vlen, expire};
    return EMQ_OK;
}

void emq_hc_remove(emq_hfields *h, size_t i)
{
    memmove(&h->e[i], &h->e[i + 1], (h->n - i - 1) * sizeof h->e[0]);
    h->n--;
}

/* Bytes an entry takes at most beyond its field and value: three varints
 * of at most 10 bytes each. */
#define HC_ENTRY_OVER 30

static unsigned char *bytes_at(unsigned char *o, const void *p, size_t n)
{
    if (n) memcpy(o, p, n);
    return o + n;
}

int emq_hc_encode(const emq_hfields *h, emq_buf *out)
{
    size_t need = 0, i;
    unsigned char *o;
    for (i = 0; i < h->n; i++) {
        size_t add = h->e[i].flen + h->e[i].vlen;
        if (add < h->e[i].flen || add > SIZE_MAX - HC_ENTRY_OVER - need)
            return EMQ_ENOMEM;
        need += add + HC_ENTRY_OVER;
    }
    out->len = 0;
    if (emq_buf_reserve(out, need) != EMQ_OK)
        return EMQ_ENOMEM;
    o = out->p;
    const emq_hash_dict *d = h->dict;
    for (i = 0; i < h->n; i++) {
        const emq_hfield *e = &h->e[i];
        long ft = d ? token_of(d->field, d->nfield, e->f, e->flen) : -1;
        long vt = d ? token_of(d->value, d->nvalue, e->v, e->vlen) : -1;
        o = varint_at(o, (ft >= 0 ? (uint64_t)ft : (uint64_t)e->flen) << 2 |
                             (e->expire >= 0 ? 2u : 0u) | (ft >= 0 ? 1u : 0u));
        if (ft < 0) o = bytes_at(o, e->f, e->flen);
        o = varint_at(o, (vt >= 0 ? (uint64_t)vt : (uint64_t)e->vlen) << 1 |
                             (vt >= 0 ? 1u : 0u));
        if (vt < 0) o = bytes_at(o, e->v, e->vlen);
        if (e->expire >= 0) o = varint_at(o, (uint64_t)e->expire);
    }
    out->len = (size_t)(o - out->p);
    out->p[out->len] = '\0';
    return EMQ_OK;
}

/* Schema 5's entry: varint(field length) field varint(value length) value
 * varint(expiry + 1), 0 for none. Only the upgrade reads it. */
static int decode_v5(const unsigned char *p, size_t len, emq_hfields *h)
{
    const unsigned char *end = p + len;
    h->n = 0;
    while (p < end) {
        uint64_t fl, vl, ex;
        const unsigned char *f, *v;
        if (emq_varint_get(&p, end, &fl) || fl > (uint64_t)(end - p))
            return EMQ_ECORRUPT;
        f = p;
        p += fl;
        if (emq_varint_get(&p, end, &vl) || vl > (uint64_t)(end - p))
            return EMQ_ECORRUPT;
        v = p;
        p += vl;
        if (emq_varint_get(&p, end, &ex) || ex > (uint64_t)INT64_MAX)
            return EMQ_ECORRUPT;
        if (grow(h) != EMQ_OK)
            return EMQ_ENOMEM;
        h->e[h->n++] = (emq_hfield){f, v, (size_t)fl, (size_t)vl,
                                    (int64_t)ex - 1};
    }
    return EMQ_OK;
}

int emq_hc_upgrade_v5(const emq_hash_dict *dict, const unsigned char *p,
                      size_t len, emq_buf *out)
{
    emq_hfields h = {.dict = dict};
    int rc = decode_v5(p, len, &h);
    if (rc == EMQ_OK)
        rc = emq_hc_encode(&h, out);
    emq_hc_free(&h);
    return rc;
}

void emq_hc_free(emq_hfields *h)
{
    emq_mem_free(h->e);
    h->e = NULL;
    h->n = h->cap = 0; /* the dictionary stays */
}
