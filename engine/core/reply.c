/*
 * reply.c — wire-shaped replies (emq_reply of emqlite.h): the builders the
 * verb bodies fill them with, and emq_reply_clear.
 *
 * Rule: a reply owns everything it points to (strings and element arrays,
 * all from emq_mem); a builder either completes or leaves the reply as it
 * was, so a body that fails mid-way leaks nothing once the runner clears it.
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"

void emq_reply_clear(emq_reply *r)
{
    size_t i;
    if (r == NULL) return;
    for (i = 0; i < r->n; i++) emq_reply_clear(&r->elem[i]);
    emq_mem_free(r->elem);
    emq_mem_free(r->str);
    memset(r, 0, sizeof *r);
}

void emq_reply_nil(emq_reply *r)
{
    emq_reply_clear(r);
}

void emq_reply_int(emq_reply *r, int64_t v)
{
    emq_reply_clear(r);
    r->type = EMQ_REPLY_INT;
    r->integer = v;
}

void emq_reply_bool(emq_reply *r, int v)
{
    emq_reply_clear(r);
    r->type = EMQ_REPLY_BOOL;
    r->integer = v != 0;
}

static int set_str(emq_reply *r, int type, const void *p, size_t n)
{
    char *s = emq_mem_malloc(n + 1);
    if (s == NULL) return EMQ_ENOMEM;
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    emq_reply_clear(r);
    r->type = type;
    r->str = s;
    r->len = n;
    return EMQ_OK;
}

int emq_reply_bulk(emq_reply *r, const void *p, size_t n)
{
    return set_str(r, EMQ_REPLY_BULK, p, n);
}

int emq_reply_status(emq_reply *r, const char *s)
{
    return set_str(r, EMQ_REPLY_STATUS, s, strlen(s));
}

int emq_reply_error(emq_reply *r, int type, const char *msg)
{
    return set_str(r, type, msg, strlen(msg));
}

int emq_reply_array(emq_reply *r, int type, size_t hint)
{
    emq_reply *e = NULL;
    if (hint && (e = emq_mem_calloc(hint, sizeof *e)) == NULL)
        return EMQ_ENOMEM;
    emq_reply_clear(r);
    r->type = type;
    r->elem = e;
    r->cap = hint;
    return EMQ_OK;
}

emq_reply *emq_reply_push(emq_reply *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4;
        emq_reply *e = emq_mem_realloc(r->elem, cap * sizeof *e);
        if (e == NULL) return NULL;
        memset(e + r->cap, 0, (cap - r->cap) * sizeof *e);
        r->elem = e;
        r->cap = cap;
    }
    return &r->elem[r->n++];
}

int emq_reply_push_bulk(emq_reply *r, const void *p, size_t n)
{
    emq_reply *e = emq_reply_push(r);
    if (e == NULL) return EMQ_ENOMEM;
    if (emq_reply_bulk(e, p, n) < 0) {
        r->n--;
        return EMQ_ENOMEM;
    }
    return EMQ_OK;
}

int emq_reply_push_int(emq_reply *r, int64_t v)
{
    emq_reply *e = emq_reply_push(r);
    if (e == NULL) return EMQ_ENOMEM;
    emq_reply_int(e, v);
    return EMQ_OK;
}
