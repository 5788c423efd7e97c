/*
 * buf.c — emq_buf, the growable NUL-terminated byte buffer storage hands
 * values back in. The caller owns it and frees it with emq_buf_free().
 */
#include <stdlib.h>
#include <string.h>
#include "store.h"

static int reserve(emq_buf *b, size_t need)
{
    if (need + 1 <= b->cap)
        return EMQ_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need + 1) {
        if (cap > SIZE_MAX / 2)
            return EMQ_ENOMEM;
        cap *= 2;
    }
    unsigned char *p = emq_mem_realloc(b->p, cap);
    if (!p)
        return EMQ_ENOMEM;
    b->p = p;
    b->cap = cap;
    return EMQ_OK;
}

int emq_buf_set(emq_buf *b, const void *p, size_t n)
{
    b->len = 0;
    return emq_buf_append(b, p, n);
}

int emq_buf_reserve(emq_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - 1 - b->len)
        return EMQ_ENOMEM;
    return reserve(b, b->len + extra);
}

int emq_buf_append(emq_buf *b, const void *p, size_t n)
{
    if (n > SIZE_MAX - 1 - b->len || reserve(b, b->len + n) != EMQ_OK)
        return EMQ_ENOMEM;
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return EMQ_OK;
}

void emq_buf_free(emq_buf *b)
{
    emq_mem_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
