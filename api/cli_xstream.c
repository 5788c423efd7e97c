/*
 * cli_xstream.c — a stream's image for push, pull and verify
 * (cli_xstream.h): from a server's XINFO STREAM FULL or an export's stream
 * commands, to export commands and to the digest body of doc/EXPORT.md §3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_xstream.h"

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

void xs_buf_free(xs_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static int put(xs_buf *b, const void *p, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q)
            return -2;
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static int put_u64(xs_buf *b, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    return put(b, le, 8);
}

static int put_str(xs_buf *b, const void *p, size_t n)
{
    return put_u64(b, n) || put(b, p, n) ? -2 : 0;
}

static int str_set(xs_str *s, const void *p, size_t n)
{
    free(s->p);
    if (!(s->p = malloc(n + 1)))
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
    void *q = realloc(*v, cap * size);
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

xs_img *xs_new(void)
{
    xs_img *x = calloc(1, sizeof *x);
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
        free(x->e[i].id.p);
        for (size_t j = 0; j < x->e[i].nf; j++)
            free(x->e[i].f[j].p);
        free(x->e[i].f);
    }
    for (size_t i = 0; i < x->ng; i++) {
        xs_group *g = &x->g[i];
        free(g->name.p);
        free(g->last.p);
        for (size_t j = 0; j < g->ncons; j++)
            free(g->cons[j].p);
        for (size_t j = 0; j < g->npel; j++) {
            free(g->pel[j].id.p);
            free(g->pel[j].owner.p);
        }
        free(g->cons);
        free(g->pel);
    }
    free(x->e);
    free(x->g);
    free(x->last.p);
    free(x->maxdel.p);
    free(x);
}

size_t xs_entries(const xs_img *x)
{
    return x->ne;
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
        (nf && !(e->f = calloc(nf, sizeof *e->f))))
        return -2;
    x->ne++;
    return 0;
}

static xs_group *find_group(xs_img *x, const void *name, size_t n)
{
    xs_str s = { (unsigned char *)name, n };
    for (size_t i = 0; i < x->ng; i++)
        if (!bytes_cmp(&x->g[i].name, &s))
            return &x->g[i];
    return NULL;
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

/* The value of `key` in a flat RESP2 map node. */
static int field(const xs_node *m, xs_child_fn child, const char *key,
                 xs_node *out)
{
    xs_node k;
    if (m->kind != 'a')
        return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        child(m->self, i, &k);
        if (k.kind == 's' && k.len == strlen(key) &&
            !memcmp(k.str, key, k.len)) {
            child(m->self, i + 1, out);
            return 0;
        }
    }
    return -1;
}

static int xinfo_group(xs_img *x, const xs_node *gm, xs_child_fn child)
{
    xs_node name, last, er, pend, cons, row, a, b, c, d;
    xs_group *g;
    int rc;
    if (field(gm, child, "name", &name) || name.kind != 's' ||
        field(gm, child, "last-delivered-id", &last) || last.kind != 's' ||
        field(gm, child, "entries-read", &er) ||
        field(gm, child, "pending", &pend) || pend.kind != 'a' ||
        field(gm, child, "consumers", &cons) || cons.kind != 'a')
        return -1;
    if (!(g = add_group(x, name.str, name.len)) ||
        str_set(&g->last, last.str, last.len))
        return -2;
    g->entries_read = er.kind == 'i' ? er.integer : -1;
    for (size_t i = 0; i < cons.n; i++) {
        child(cons.self, i, &row);
        if (field(&row, child, "name", &a) || a.kind != 's')
            return -1;
        if ((rc = add_consumer(g, a.str, a.len)))
            return rc;
    }
    for (size_t i = 0; i < pend.n; i++) {
        child(pend.self, i, &row);
        if (row.kind != 'a' || row.n != 4)
            return -1;
        child(row.self, 0, &a);
        child(row.self, 1, &b);
        child(row.self, 2, &c);
        child(row.self, 3, &d);
        if (a.kind != 's' || b.kind != 's' || c.kind != 'i' || d.kind != 'i')
            return -1;
        if ((rc = add_pel(g, a.str, a.len, b.str, b.len, c.integer,
                          d.integer)))
            return rc;
    }
    return 0;
}

int xs_from_xinfo(xs_img *x, const xs_node *root, xs_child_fn child)
{
    xs_node last, maxdel, added, entries, groups, e, id, fv, f;
    int rc;
    if (field(root, child, "last-generated-id", &last) || last.kind != 's' ||
        field(root, child, "max-deleted-entry-id", &maxdel) ||
        maxdel.kind != 's' ||
        field(root, child, "entries-added", &added) || added.kind != 'i' ||
        field(root, child, "entries", &entries) || entries.kind != 'a' ||
        field(root, child, "groups", &groups) || groups.kind != 'a')
        return -1;
    if (str_set(&x->last, last.str, last.len) ||
        str_set(&x->maxdel, maxdel.str, maxdel.len))
        return -2;
    x->added = added.integer;
    for (size_t i = 0; i < entries.n; i++) {
        child(entries.self, i, &e);
        if (e.kind != 'a' || e.n != 2)
            return -1;
        child(e.self, 0, &id);
        child(e.self, 1, &fv);
        if (id.kind != 's' || fv.kind != 'a')
            return -1;
        if ((rc = add_entry(x, id.str, id.len, fv.n)))
            return rc;
        xs_entry *ent = &x->e[x->ne - 1];
        for (size_t j = 0; j < fv.n; j++) {
            child(fv.self, j, &f);
            if (f.kind != 's')
                return -1;
            if (str_set(&ent->f[j], f.str, f.len))
                return -2;
            ent->nf++;
        }
    }
    for (size_t i = 0; i < groups.n; i++) {
        child(groups.self, i, &e);
        if ((rc = xinfo_group(x, &e, child)))
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------- from commands */

static int is(const unsigned char *p, size_t n, const char *w)
{
    size_t k = strlen(w);
    if (n != k)
        return 0;
    for (size_t i = 0; i < k; i++) {
        unsigned char a = p[i];
        if (a >= 'a' && a <= 'z')
            a = (unsigned char)(a - 32);
        if (a != (unsigned char)w[i])
            return 0;
    }
    return 1;
}

int xs_is_cmd(const unsigned char *arg0, size_t len)
{
    return is(arg0, len, "XADD") || is(arg0, len, "XSETID") ||
           is(arg0, len, "XGROUP") || is(arg0, len, "XCLAIM");
}

static int num(const unsigned char *p, size_t n, int64_t *v)
{
    char b[32], *end;
    if (n == 0 || n >= sizeof b)
        return -1;
    memcpy(b, p, n);
    b[n] = 0;
    *v = strtoll(b, &end, 10);
    return *end ? -1 : 0;
}

int xs_feed(xs_img *x, size_t argc, const unsigned char *const *argv,
            const size_t *lens)
{
    int rc;
#define ARG(i, w) (argc > (i) && is(argv[i], lens[i], w))
    if (ARG(0, "XADD") && argc >= 5) {
        if (ARG(2, "MAXLEN"))
            return argc == 7 ? 0 : -1; /* an emptied stream's marker */
        if ((argc - 3) % 2)
            return -1;
        if ((rc = add_entry(x, argv[2], lens[2], argc - 3)))
            return rc;
        xs_entry *e = &x->e[x->ne - 1];
        for (size_t i = 3; i < argc; i++) {
            if (str_set(&e->f[i - 3], argv[i], lens[i]))
                return -2;
            e->nf++;
        }
        return 0;
    }
    if (ARG(0, "XSETID") && argc == 7 && ARG(3, "ENTRIESADDED") &&
        ARG(5, "MAXDELETEDID")) {
        if (num(argv[4], lens[4], &x->added))
            return -1;
        return str_set(&x->last, argv[2], lens[2]) ||
               str_set(&x->maxdel, argv[6], lens[6]) ? -2 : 0;
    }
    if (ARG(0, "XGROUP") && ARG(1, "CREATE") && (argc == 5 || argc == 7)) {
        xs_group *g = add_group(x, argv[3], lens[3]);
        if (!g || str_set(&g->last, argv[4], lens[4]))
            return -2;
        if (argc == 7 && (!ARG(5, "ENTRIESREAD") ||
                          num(argv[6], lens[6], &g->entries_read)))
            return -1;
        return 0;
    }
    if (ARG(0, "XGROUP") && ARG(1, "CREATECONSUMER") && argc == 5) {
        xs_group *g = find_group(x, argv[3], lens[3]);
        return g ? add_consumer(g, argv[4], lens[4]) : -1;
    }
    if (ARG(0, "XCLAIM") && argc == 12 && ARG(6, "TIME") &&
        ARG(8, "RETRYCOUNT")) {
        xs_group *g = find_group(x, argv[2], lens[2]);
        int64_t t, n;
        if (!g || num(argv[7], lens[7], &t) || num(argv[9], lens[9], &n))
            return -1;
        return add_pel(g, argv[5], lens[5], argv[3], lens[3], t, n);
    }
#undef ARG
    return -1;
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

int xs_body(xs_img *x, xs_buf *o)
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
    xs_buf *o;
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

int xs_commands(xs_img *x, const void *key, size_t klen, xs_buf *o,
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
    }
    *ncmd = w.n;
    return 0;
}
