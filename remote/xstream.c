/*
 * xstream.c — a stream key read from a server (remote.h: rm_xstream): the
 * reply to XINFO STREAM <key> FULL COUNT 0 turned into the commands an
 * export writes for the stream and the body of its digest record
 * (doc/EXPORT.md §1, §3), so that pull imports a server's stream and
 * verify compares its record, as for the other types.
 *
 * Rules: built from the reply alone, in the canonical order of
 * storage/xsout.c (entries by id, groups and consumers by name, pending
 * entries by id, those whose entry is gone left out of the digest and of
 * the Valkey commands, and written last as EMQ.XPEL for a pull's import);
 * nothing here talks to a server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote.h"

typedef struct xs_img xs_img;
static void xs_free(xs_img *x);
typedef struct xs_str {
    unsigned char *p;
    size_t n;
} xs_str;

typedef struct xs_entry {
    xs_str id;
    uint64_t ms, seq;
    xs_str *f;
    size_t nf;
} xs_entry;

typedef struct xs_pel {
    xs_str id, owner;
    uint64_t ms, seq;
    int64_t time, count;
} xs_pel;

typedef struct xs_group {
    xs_str name, last;
    int64_t entries_read;
    xs_str *cons;
    size_t ncons;
    xs_pel *pel;
    size_t npel;
} xs_group;

struct xs_img {
    xs_str last, maxdel;
    int64_t added;
    xs_entry *e;
    size_t ne;
    xs_group *g;
    size_t ng;
};

/* ---------------------------------------------------------------- bytes */

static int put(emq_buf *b, const void *p, size_t n)
{
    return emq_buf_append(b, p, n) == EMQ_OK ? 0 : -2;
}

static int put_u64(emq_buf *b, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    return put(b, le, 8);
}

static int put_str(emq_buf *b, const void *p, size_t n)
{
    return put_u64(b, n) || put(b, p, n) ? -2 : 0;
}

static int str_set(xs_str *s, const void *p, size_t n)
{
    emq_mem_free(s->p);
    if (!(s->p = emq_mem_malloc(n + 1)))
        return -2;
    if (n)
        memcpy(s->p, p, n);
    s->p[n] = 0;
    s->n = n;
    return 0;
}

static int grow(void **v, size_t n, size_t size)
{
    /* Room for element n (arrays grow by powers of two). */
    if (n & (n - 1) && n > 8)
        return 0;
    size_t cap = n < 8 ? 8 : n * 2;
    void *q = emq_mem_realloc(*v, cap * size);
    if (!q)
        return -2;
    *v = q;
    return 0;
}

static int parse_id(const unsigned char *p, size_t n, uint64_t *ms,
                    uint64_t *seq)
{
    char b[64], *end;
    if (n == 0 || n >= sizeof b)
        return -1;
    memcpy(b, p, n);
    b[n] = 0;
    *ms = strtoull(b, &end, 10);
    if (*end != '-')
        return -1;
    *seq = strtoull(end + 1, &end, 10);
    return *end ? -1 : 0;
}

static int idcmp(uint64_t am, uint64_t as, uint64_t bm, uint64_t bs)
{
    return am != bm ? (am < bm ? -1 : 1) : as != bs ? (as < bs ? -1 : 1) : 0;
}

static int bytes_cmp(const xs_str *a, const xs_str *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    int c = n ? memcmp(a->p, b->p, n) : 0;
    return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* ---------------------------------------------------------------- image */

static xs_img *xs_new(void)
{
    xs_img *x = emq_mem_calloc(1, sizeof *x);
    if (x && (str_set(&x->last, "0-0", 3) || str_set(&x->maxdel, "0-0", 3))) {
        xs_free(x);
        return NULL;
    }
    return x;
}

void xs_free(xs_img *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->ne; i++) {
        emq_mem_free(x->e[i].id.p);
        for (size_t j = 0; j < x->e[i].nf; j++)
            emq_mem_free(x->e[i].f[j].p);
        emq_mem_free(x->e[i].f);
    }
    for (size_t i = 0; i < x->ng; i++) {
        xs_group *g = &x->g[i];
        emq_mem_free(g->name.p);
        emq_mem_free(g->last.p);
        for (size_t j = 0; j < g->ncons; j++)
            emq_mem_free(g->cons[j].p);
        for (size_t j = 0; j < g->npel; j++) {
            emq_mem_free(g->pel[j].id.p);
            emq_mem_free(g->pel[j].owner.p);
        }
        emq_mem_free(g->cons);
        emq_mem_free(g->pel);
    }
    emq_mem_free(x->e);
    emq_mem_free(x->g);
    emq_mem_free(x->last.p);
    emq_mem_free(x->maxdel.p);
    emq_mem_free(x);
}

static int add_entry(xs_img *x, const void *id, size_t idn, size_t nf)
{
    xs_entry *e;
    if (grow((void **)&x->e, x->ne, sizeof *x->e))
        return -2;
    e = &x->e[x->ne];
    memset(e, 0, sizeof *e);
    if (parse_id(id, idn, &e->ms, &e->seq))
        return -1;
    if (str_set(&e->id, id, idn) ||
        (nf && !(e->f = emq_mem_calloc(nf, sizeof *e->f))))
        return -2;
    x->ne++;
    return 0;
}

static xs_group *add_group(xs_img *x, const void *name, size_t n)
{
    xs_group *g;
    if (grow((void **)&x->g, x->ng, sizeof *x->g))
        return NULL;
    g = &x->g[x->ng];
    memset(g, 0, sizeof *g);
    g->entries_read = -1;
    if (str_set(&g->name, name, n) || str_set(&g->last, "0-0", 3))
        return NULL;
    x->ng++;
    return g;
}

static int add_consumer(xs_group *g, const void *c, size_t n)
{
    if (grow((void **)&g->cons, g->ncons, sizeof *g->cons))
        return -2;
    memset(&g->cons[g->ncons], 0, sizeof *g->cons);
    if (str_set(&g->cons[g->ncons], c, n))
        return -2;
    g->ncons++;
    return 0;
}

static int add_pel(xs_group *g, const void *id, size_t idn, const void *c,
                   size_t cn, int64_t time, int64_t count)
{
    xs_pel *p;
    if (grow((void **)&g->pel, g->npel, sizeof *g->pel))
        return -2;
    p = &g->pel[g->npel];
    memset(p, 0, sizeof *p);
    if (parse_id(id, idn, &p->ms, &p->seq))
        return -1;
    if (str_set(&p->id, id, idn) || str_set(&p->owner, c, cn))
        return -2;
    p->time = time;
    p->count = count;
    g->npel++;
    return 0;
}

/* ------------------------------------------------------- from XINFO FULL */

/* A node's kind: 's' string/status, 'i' integer, 'a' array, 'n' nil. */
static int kind(const emq_rreply *r)
{
    switch (r->type) {
    case EMQ_RREPLY_STRING:
    case EMQ_RREPLY_STATUS: return 's';
    case EMQ_RREPLY_INTEGER: return 'i';
    case EMQ_RREPLY_ARRAY: return 'a';
    case EMQ_RREPLY_NIL: return 'n';
    default: return '?';
    }
}

/* The value of `key` in a flat RESP2 map node, or NULL. */
static const emq_rreply *field(const emq_rreply *m, const char *key)
{
    if (kind(m) != 'a')
        return NULL;
    for (size_t i = 0; i + 1 < m->elements; i += 2) {
        const emq_rreply *k = &m->element[i];
        if (kind(k) == 's' && k->len == strlen(key) &&
            !memcmp(k->str, key, k->len))
            return &m->element[i + 1];
    }
    return NULL;
}

#define KIND(r, k) ((r) != NULL && kind(r) == (k))

static int xinfo_group(xs_img *x, const emq_rreply *gm)
{
    const emq_rreply *name = field(gm, "name"),
                     *last = field(gm, "last-delivered-id"),
                     *er = field(gm, "entries-read"),
                     *pend = field(gm, "pending"),
                     *cons = field(gm, "consumers");
    xs_group *g;
    int rc;
    if (!KIND(name, 's') || !KIND(last, 's') || !er || !KIND(pend, 'a') ||
        !KIND(cons, 'a'))
        return -1;
    if (!(g = add_group(x, name->str, name->len)) ||
        str_set(&g->last, last->str, last->len))
        return -2;
    g->entries_read = kind(er) == 'i' ? er->integer : -1;
    for (size_t i = 0; i < cons->elements; i++) {
        const emq_rreply *a = field(&cons->element[i], "name");
        if (!KIND(a, 's'))
            return -1;
        if ((rc = add_consumer(g, a->str, a->len)))
            return rc;
    }
    for (size_t i = 0; i < pend->elements; i++) {
        const emq_rreply *row = &pend->element[i];
        if (kind(row) != 'a' || row->elements != 4)
            return -1;
        const emq_rreply *a = &row->element[0], *b = &row->element[1],
                         *c = &row->element[2], *d = &row->element[3];
        if (kind(a) != 's' || kind(b) != 's' || kind(c) != 'i' ||
            kind(d) != 'i')
            return -1;
        if ((rc = add_pel(g, a->str, a->len, b->str, b->len, c->integer,
                          d->integer)))
            return rc;
    }
    return 0;
}

static int xs_from_xinfo(xs_img *x, const emq_rreply *root)
{
    const emq_rreply *last = field(root, "last-generated-id"),
                     *maxdel = field(root, "max-deleted-entry-id"),
                     *added = field(root, "entries-added"),
                     *entries = field(root, "entries"),
                     *groups = field(root, "groups");
    int rc;
    if (!KIND(last, 's') || !KIND(maxdel, 's') || !KIND(added, 'i') ||
        !KIND(entries, 'a') || !KIND(groups, 'a'))
        return -1;
    if (str_set(&x->last, last->str, last->len) ||
        str_set(&x->maxdel, maxdel->str, maxdel->len))
        return -2;
    x->added = added->integer;
    for (size_t i = 0; i < entries->elements; i++) {
        const emq_rreply *e = &entries->element[i];
        if (kind(e) != 'a' || e->elements != 2)
            return -1;
        const emq_rreply *id = &e->element[0], *fv = &e->element[1];
        if (kind(id) != 's' || kind(fv) != 'a')
            return -1;
        if ((rc = add_entry(x, id->str, id->len, fv->elements)))
            return rc;
        xs_entry *ent = &x->e[x->ne - 1];
        for (size_t j = 0; j < fv->elements; j++) {
            const emq_rreply *f = &fv->element[j];
            if (kind(f) != 's')
                return -1;
            if (str_set(&ent->f[j], f->str, f->len))
                return -2;
            ent->nf++;
        }
    }
    for (size_t i = 0; i < groups->elements; i++)
        if ((rc = xinfo_group(x, &groups->element[i])))
            return rc;
    return 0;
}

/* --------------------------------------------------------------- output */

static int cmp_group(const void *a, const void *b)
{
    return bytes_cmp(&((const xs_group *)a)->name,
                     &((const xs_group *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
    return bytes_cmp(a, b);
}

static int cmp_pel(const void *a, const void *b)
{
    const xs_pel *x = a, *y = b;
    return idcmp(x->ms, x->seq, y->ms, y->seq);
}

/* 1 when entry (ms, seq) is in the image (entries are in id order). */
static int live(const xs_img *x, uint64_t ms, uint64_t seq)
{
    size_t lo = 0, hi = x->ne;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = idcmp(x->e[mid].ms, x->e[mid].seq, ms, seq);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static void canon(xs_img *x)
{
    if (x->ng > 1)
        qsort(x->g, x->ng, sizeof *x->g, cmp_group);
    for (size_t i = 0; i < x->ng; i++) {
        if (x->g[i].ncons > 1)
            qsort(x->g[i].cons, x->g[i].ncons, sizeof *x->g[i].cons,
                  cmp_str);
        if (x->g[i].npel > 1)
            qsort(x->g[i].pel, x->g[i].npel, sizeof *x->g[i].pel, cmp_pel);
    }
}

static int xs_body(xs_img *x, emq_buf *o)
{
    canon(x);
    if (put_str(o, x->last.p, x->last.n) || put_u64(o, (uint64_t)x->added) ||
        put_str(o, x->maxdel.p, x->maxdel.n) || put_u64(o, x->ne))
        return -2;
    for (size_t i = 0; i < x->ne; i++) {
        const xs_entry *e = &x->e[i];
        if (put_str(o, e->id.p, e->id.n) || put_u64(o, e->nf))
            return -2;
        for (size_t j = 0; j < e->nf; j++)
            if (put_str(o, e->f[j].p, e->f[j].n))
                return -2;
    }
    if (put_u64(o, x->ng))
        return -2;
    for (size_t i = 0; i < x->ng; i++) {
        const xs_group *g = &x->g[i];
        size_t nlive = 0;
        if (put_str(o, g->name.p, g->name.n) ||
            put_str(o, g->last.p, g->last.n) ||
            put_u64(o, (uint64_t)g->entries_read) || put_u64(o, g->ncons))
            return -2;
        for (size_t j = 0; j < g->ncons; j++)
            if (put_str(o, g->cons[j].p, g->cons[j].n))
                return -2;
        for (size_t j = 0; j < g->npel; j++)
            nlive += live(x, g->pel[j].ms, g->pel[j].seq);
        if (put_u64(o, nlive))
            return -2;
        for (size_t j = 0; j < g->npel; j++) {
            const xs_pel *p = &g->pel[j];
            if (!live(x, p->ms, p->seq))
                continue;
            if (put_str(o, p->id.p, p->id.n) ||
                put_str(o, p->owner.p, p->owner.n) ||
                put_u64(o, (uint64_t)p->time) ||
                put_u64(o, (uint64_t)p->count))
                return -2;
        }
    }
    return 0;
}

/* One RESP command of `argc` bulks. */
typedef struct cmdw {
    emq_buf *o;
    uint64_t n;
} cmdw;

static int hdr(cmdw *w, char c, size_t n)
{
    char b[32];
    int k = snprintf(b, sizeof b, "%c%zu\r\n", c, n);
    return put(w->o, b, (size_t)k);
}

static int bulk(cmdw *w, const void *p, size_t n)
{
    return hdr(w, '$', n) || put(w->o, p, n) || put(w->o, "\r\n", 2) ? -2
                                                                      : 0;
}

static int bulks(cmdw *w, const char *s)
{
    return bulk(w, s, strlen(s));
}

static int bulkn(cmdw *w, int64_t v)
{
    char b[24];
    int k = snprintf(b, sizeof b, "%lld", (long long)v);
    return bulk(w, b, (size_t)k);
}

static int start(cmdw *w, size_t argc, const char *cmd, const void *key,
                 size_t klen)
{
    w->n++;
    return hdr(w, '*', argc) || bulks(w, cmd) || bulk(w, key, klen) ? -2 : 0;
}

static int xs_commands(xs_img *x, const void *key, size_t klen, emq_buf *o,
                uint64_t *ncmd)
{
    cmdw w = { o, 0 };
    canon(x);
    if (x->ne == 0 &&
        (start(&w, 7, "XADD", key, klen) || bulks(&w, "MAXLEN") ||
         bulks(&w, "0") || bulks(&w, "0-1") || bulks(&w, "x") ||
         bulks(&w, "y")))
        return -2;
    for (size_t i = 0; i < x->ne; i++) {
        const xs_entry *e = &x->e[i];
        if (start(&w, 3 + e->nf, "XADD", key, klen) ||
            bulk(&w, e->id.p, e->id.n))
            return -2;
        for (size_t j = 0; j < e->nf; j++)
            if (bulk(&w, e->f[j].p, e->f[j].n))
                return -2;
    }
    if (start(&w, 7, "XSETID", key, klen) || bulk(&w, x->last.p, x->last.n) ||
        bulks(&w, "ENTRIESADDED") || bulkn(&w, x->added) ||
        bulks(&w, "MAXDELETEDID") || bulk(&w, x->maxdel.p, x->maxdel.n))
        return -2;
    for (size_t i = 0; i < x->ng; i++) {
        const xs_group *g = &x->g[i];
        int er = g->entries_read >= 0;
        w.n++;
        if (hdr(&w, '*', er ? 7 : 5) || bulks(&w, "XGROUP") ||
            bulks(&w, "CREATE") || bulk(&w, key, klen) ||
            bulk(&w, g->name.p, g->name.n) || bulk(&w, g->last.p, g->last.n) ||
            (er && (bulks(&w, "ENTRIESREAD") || bulkn(&w, g->entries_read))))
            return -2;
        for (size_t j = 0; j < g->ncons; j++) {
            w.n++;
            if (hdr(&w, '*', 5) || bulks(&w, "XGROUP") ||
                bulks(&w, "CREATECONSUMER") || bulk(&w, key, klen) ||
                bulk(&w, g->name.p, g->name.n) ||
                bulk(&w, g->cons[j].p, g->cons[j].n))
                return -2;
        }
        for (size_t j = 0; j < g->npel; j++) {
            const xs_pel *p = &g->pel[j];
            if (!live(x, p->ms, p->seq))
                continue;
            if (start(&w, 12, "XCLAIM", key, klen) ||
                bulk(&w, g->name.p, g->name.n) ||
                bulk(&w, p->owner.p, p->owner.n) || bulks(&w, "0") ||
                bulk(&w, p->id.p, p->id.n) || bulks(&w, "TIME") ||
                bulkn(&w, p->time) || bulks(&w, "RETRYCOUNT") ||
                bulkn(&w, p->count) || bulks(&w, "FORCE") ||
                bulks(&w, "JUSTID"))
                return -2;
        }
        /* The records of trimmed entries: no Valkey command recreates
         * them; a pull's import takes them as EMQ.XPEL (engine/transfer/import.c).
         * They are in no digest record, on either side. */
        for (size_t j = 0; j < g->npel; j++) {
            const xs_pel *p = &g->pel[j];
            if (live(x, p->ms, p->seq))
                continue;
            if (start(&w, 7, "EMQ.XPEL", key, klen) ||
                bulk(&w, g->name.p, g->name.n) ||
                bulk(&w, p->owner.p, p->owner.n) ||
                bulk(&w, p->id.p, p->id.n) || bulkn(&w, p->time) ||
                bulkn(&w, p->count))
                return -2;
        }
    }
    *ncmd = w.n;
    return 0;
}

int rm_xstream(const emq_rreply *v, const void *key, size_t klen,
               emq_buf *cmds, emq_buf *body, uint64_t *ncmd)
{
    xs_img *x = xs_new();
    int rc;
    if (!x)
        return -2;
    rc = xs_from_xinfo(x, v);
    if (rc == 0)
        rc = xs_body(x, body);
    if (rc == 0)
        rc = xs_commands(x, key, klen, cmds, ncmd);
    xs_free(x);
    return rc;
}
