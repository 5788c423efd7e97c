/*
 * hashcodec.c — encode and decode the hash blob (see hashcodec.h).
 * Varints are LEB128 (7 bits a byte, low first), at most 10 bytes.
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

int emq_varint_put(emq_buf *b, uint64_t v)
{
    unsigned char tmp[10];
    int n = 0;
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        tmp[n++] = c | (v ? 0x80 : 0);
    } while (v);
    return emq_buf_append(b, tmp, (size_t)n);
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

int emq_hc_decode(const unsigned char *p, size_t len, int64_t now,
                  emq_hfields *h)
{
    const unsigned char *end = p + len;
    h->n = 0;
    while (p < end) {
        uint64_t fl, vl, ex;
        if (emq_varint_get(&p, end, &fl) || fl > (uint64_t)(end - p))
            return EMQ_ECORRUPT;
        const unsigned char *f = p;
        p += fl;
        if (emq_varint_get(&p, end, &vl) || vl > (uint64_t)(end - p))
            return EMQ_ECORRUPT;
        const unsigned char *v = p;
        p += vl;
        if (emq_varint_get(&p, end, &ex))
            return EMQ_ECORRUPT;
        int64_t expire = (int64_t)ex - 1;
        if (expire >= 0 && now > expire)
            continue; /* lazily expired field */
        if (grow(h) != EMQ_OK)
            return EMQ_ENOMEM;
        h->e[h->n++] = (emq_hfield){f, v, (size_t)fl, (size_t)vl, expire};
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

int emq_hc_encode(const emq_hfields *h, emq_buf *out)
{
    out->len = 0;
    if (emq_buf_append(out, "", 0) != EMQ_OK)
        return EMQ_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const emq_hfield *e = &h->e[i];
        if (emq_varint_put(out, e->flen) || emq_buf_append(out, e->f, e->flen) ||
            emq_varint_put(out, e->vlen) || emq_buf_append(out, e->v, e->vlen) ||
            emq_varint_put(out, (uint64_t)(e->expire < 0 ? 0 : e->expire + 1)))
            return EMQ_ENOMEM;
    }
    return EMQ_OK;
}

void emq_hc_free(emq_hfields *h)
{
    emq_mem_free(h->e);
    h->e = NULL;
    h->n = h->cap = 0;
}
