/*
 * fakeserver.c — the in-memory server of fakeserver.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fakeserver.h"
#include "types.h"

/* -------------------------------------------------------------- replies */

static void r_set(emq_rreply *r, int type, const void *p, size_t n)
{
    memset(r, 0, sizeof *r);
    r->type = type;
    if (p) {
        char *s = malloc(n + 1);
        memcpy(s, p, n);
        s[n] = '\0';
        r->str = s;
        r->len = n;
    }
}

static void r_int(emq_rreply *r, long long v)
{
    memset(r, 0, sizeof *r);
    r->type = EMQ_RREPLY_INTEGER;
    r->integer = v;
}

static emq_rreply *r_arr(emq_rreply *r, size_t n)
{
    memset(r, 0, sizeof *r);
    r->type = EMQ_RREPLY_ARRAY;
    r->elements = n;
    r->element = calloc(n ? n : 1, sizeof *r->element);
    return (emq_rreply *)r->element;
}

static void r_free(const emq_rreply *r)
{
    free((void *)r->str);
    for (size_t i = 0; i < r->elements; i++)
        r_free(&r->element[i]);
    free((void *)r->element);
}

/* A growable array reply. */
typedef struct rlist {
    emq_rreply *e;
    size_t n, cap;
} rlist;

static emq_rreply *rl_add(rlist *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->e = realloc(l->e, l->cap * sizeof *l->e);
    }
    return &l->e[l->n++];
}

static void rl_done(emq_rreply *r, rlist *l)
{
    memset(r, 0, sizeof *r);
    r->type = EMQ_RREPLY_ARRAY;
    r->elements = l->n;
    r->element = l->e ? l->e : calloc(1, sizeof *r->element);
}

/* ------------------------------------------------------------- commands */

static int is(const emq_bytes *a, size_t argc, size_t i, const char *w)
{
    return emq_arg_is(a, argc, i, w);
}

static int on_field(void *ctx, const unsigned char *f, size_t fl,
                    const unsigned char *v, size_t vl, int64_t at)
{
    (void)at;
    r_set(rl_add(ctx), EMQ_RREPLY_STRING, f, fl);
    r_set(rl_add(ctx), EMQ_RREPLY_STRING, v, vl);
    return 0;
}

static int on_value(void *ctx, const unsigned char *v, size_t n)
{
    r_set(rl_add(ctx), EMQ_RREPLY_STRING, v, n);
    return 0;
}

static int on_member(void *ctx, const unsigned char *m, size_t n, double s)
{
    char num[40];
    int k = snprintf(num, sizeof num, "%.17g", s);
    r_set(rl_add(ctx), EMQ_RREPLY_STRING, m, n);
    r_set(rl_add(ctx), EMQ_RREPLY_STRING, num, (size_t)k);
    return 0;
}

typedef struct scan {
    rlist keys;
    const emq_bytes *pat;
} scan;

/* The patterns the module sends: a prefix and '*', or a whole name. */
static int matches(const emq_bytes *pat, const void *k, size_t n)
{
    const unsigned char *p = pat->p;
    size_t pn = pat->n;
    int star = pn && p[pn - 1] == '*';
    size_t fixed = star ? pn - 1 : pn;
    return (star ? n >= fixed : n == fixed) && memcmp(k, p, fixed) == 0;
}

static int on_key(void *ctx, const unsigned char *k, size_t n, int type)
{
    scan *s = ctx;
    (void)type;
    if (matches(s->pat, k, n))
        r_set(rl_add(&s->keys), EMQ_RREPLY_STRING, k, n);
    return 0;
}

static void error(emq_rreply *r, const char *msg)
{
    r_set(r, EMQ_RREPLY_ERROR, msg, strlen(msg));
}

static void ok(emq_rreply *r)
{
    r_set(r, EMQ_RREPLY_STATUS, "OK", 2);
}

/* Run one command inside its own transaction; the reply into r. */
static void run(fake *f, const emq_bytes *a, size_t argc, emq_rreply *r)
{
    emq_store *st = f->st;
    const void *k = argc > 1 ? a[1].p : NULL;
    size_t kl = argc > 1 ? a[1].n : 0;
    emq_buf v = {0};
    rlist l = {NULL, 0, 0};
    int rc = EMQ_OK;
    int64_t x;

    if (f->error_on && is(a, argc, 0, f->error_on)) {
        error(r, "ERR injected");
        return;
    }
    if (is(a, argc, 0, "COMMAND")) {
        emq_rreply *e = r_arr(r, argc - 2);
        for (size_t i = 2; i < argc; i++) {
            if (i - 2 < 4 && f->has[i - 2])
                r_set(r_arr(&e[i - 2], 1), EMQ_RREPLY_STRING, a[i].p, a[i].n);
            else
                r_set(&e[i - 2], EMQ_RREPLY_NIL, NULL, 0);
        }
        return;
    }
    if (is(a, argc, 0, "MULTI")) {
        f->multi = 1;
        f->queued = 0;
        ok(r);
        return;
    }
    if (is(a, argc, 0, "EXEC")) {
        emq_rreply *e = r_arr(r, f->queued);
        for (size_t i = 0; i < f->queued; i++)
            ok(&e[i]);
        f->multi = 0;
        return;
    }
    emq_store_begin(st, 1, f->now);
    if (is(a, argc, 0, "SCAN")) {
        scan s = {{NULL, 0, 0}, &a[3]};
        size_t at = (size_t)strtoul(a[1].p, NULL, 10), page = 2, i;
        emq_key_scan(st, "", 0, on_key, &s);
        if (f->stream_key &&
            matches(s.pat, f->stream_key, strlen(f->stream_key)))
            r_set(rl_add(&s.keys), EMQ_RREPLY_STRING, f->stream_key,
                  strlen(f->stream_key));
        emq_rreply *e = r_arr(r, 2);
        char cur[24];
        int cn = snprintf(cur, sizeof cur, "%zu",
                          at + page < s.keys.n ? at + page : 0);
        r_set(&e[0], EMQ_RREPLY_STRING, cur, (size_t)cn);
        rlist pg = {NULL, 0, 0};
        for (i = at; i < at + page && i < s.keys.n; i++)
            *rl_add(&pg) = s.keys.e[i];
        for (i = 0; i < s.keys.n; i++)
            if (i < at || i >= at + page)
                free((void *)s.keys.e[i].str);
        free(s.keys.e);
        rl_done(&e[1], &pg);
    } else if (is(a, argc, 0, "TYPE")) {
        int t;
        if (f->stream_key && kl == strlen(f->stream_key) &&
            memcmp(k, f->stream_key, kl) == 0) {
            r_set(r, EMQ_RREPLY_STATUS, "stream", 6);
        } else {
            rc = emq_key_type(st, k, kl, &t);
            r_set(r, EMQ_RREPLY_STATUS, emq_type_name(t),
                  strlen(emq_type_name(t)));
        }
    } else if (is(a, argc, 0, "PEXPIRETIME")) {
        rc = emq_key_expiry(st, k, kl, &x);
        r_int(r, rc == EMQ_NOTFOUND ? -2 : x);
        rc = EMQ_OK;
    } else if (is(a, argc, 0, "PTTL")) {
        rc = emq_key_pttl(st, k, kl, &x);
        r_int(r, x);
    } else if (is(a, argc, 0, "GET")) {
        rc = emq_str_get(st, k, kl, &v);
        if (rc == EMQ_OK)
            r_set(r, EMQ_RREPLY_STRING, v.p ? (void *)v.p : "", v.len);
        else if (rc == EMQ_NOTFOUND)
            r_set(r, EMQ_RREPLY_NIL, NULL, 0);
        rc = rc == EMQ_NOTFOUND ? EMQ_OK : rc;
    } else if (is(a, argc, 0, "SET") && argc == 4 && is(a, argc, 3, "NX")) {
        int done;
        rc = emq_str_set(st, k, kl, a[2].p, a[2].n, -1, EMQ_SET_NX, &done);
        if (done)
            ok(r);
        else
            r_set(r, EMQ_RREPLY_NIL, NULL, 0);
    } else if (is(a, argc, 0, "HGETALL")) {
        rc = emq_hash_getall(st, k, kl, on_field, &l);
        rl_done(r, &l);
    } else if (is(a, argc, 0, "LRANGE")) {
        rc = emq_list_range(st, k, kl, 0, -1, on_value, &l);
        rl_done(r, &l);
    } else if (is(a, argc, 0, "SMEMBERS")) {
        rc = emq_sset_members(st, k, kl, on_value, &l);
        for (size_t i = 0; i < l.n / 2; i++) { /* reverse: not sorted */
            emq_rreply t = l.e[i];
            l.e[i] = l.e[l.n - 1 - i];
            l.e[l.n - 1 - i] = t;
        }
        rl_done(r, &l);
    } else if (is(a, argc, 0, "ZRANGE")) {
        rc = emq_zset_range(st, k, kl, 0, -1, on_member, &l);
        rl_done(r, &l);
    } else if (is(a, argc, 0, "HPEXPIRETIME")) {
        emq_rreply *e = r_arr(r, argc - 4);
        for (size_t i = 4; i < argc; i++) {
            emq_hash_field_expiry(st, k, kl, a[i].p, a[i].n, &x);
            r_int(&e[i - 4], x);
        }
    } else if (is(a, argc, 0, "ZCARD")) {
        rc = emq_zset_card(st, k, kl, &x);
        r_int(r, x);
    } else if (is(a, argc, 0, "UNLINK") || is(a, argc, 0, "DEL")) {
        int d;
        rc = emq_key_del(st, k, kl, &d);
        r_int(r, d);
    } else {
        /* A data command of an export: the import's own table. */
        size_t nt;
        const emq_typedef *rows = emq_typedefs(&nt);
        const emq_cmddef *def = NULL;
        emq_why why;
        for (const emq_cmddef *d = emq_key_cmds; d->name && !def; d++)
            if (is(a, argc, 0, d->name))
                def = d;
        for (size_t i = 0; i < nt && !def; i++)
            for (const emq_cmddef *d = rows[i].cmds; d->name && !def; d++)
                if (is(a, argc, 0, d->name))
                    def = d;
        if (!def || def->check(a, argc, &why) != EMQ_OK)
            error(r, "ERR unknown command or bad arguments");
        else if ((rc = def->apply(st, a, argc)) == EMQ_OK)
            f->multi ? (f->queued++, r_set(r, EMQ_RREPLY_STATUS, "QUEUED", 6))
                     : ok(r);
    }
    if (rc == EMQ_EWRONGTYPE) {
        r_free(r);
        error(r, "WRONGTYPE Operation against a key holding the wrong kind "
                 "of value");
        rc = EMQ_OK;
    }
    if (rc < 0) {
        r_free(r);
        error(r, "ERR store");
    }
    emq_store_commit(st);
    emq_buf_free(&v);
}

/* ------------------------------------------------------------ transport */

static int f_send(void *ctx, size_t argc, const char *const *argv,
                  const size_t *lens)
{
    fake *f = ctx;
    emq_bytes a[256];
    if (f->fail_after >= 0 && f->commands >= f->fail_after)
        return -1;
    f->commands++;
    if (argc > 256)
        return -1;
    for (size_t i = 0; i < argc; i++)
        a[i] = (emq_bytes){argv[i], lens[i]};
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        emq_rreply **q = malloc(cap * sizeof *q);
        for (size_t i = 0; i < f->n; i++)
            q[i] = f->q[(f->head + i) % f->cap];
        free(f->q);
        f->q = q;
        f->cap = cap;
        f->head = 0;
    }
    emq_rreply *r = calloc(1, sizeof *r);
    run(f, a, argc, r);
    f->q[(f->head + f->n) % f->cap] = r;
    f->n++;
    return 0;
}

static int f_recv(void *ctx, const emq_rreply **out)
{
    fake *f = ctx;
    if (f->n == 0 || (f->fail_after >= 0 && f->commands >= f->fail_after))
        return -1;
    *out = f->q[f->head];
    f->head = (f->head + 1) % f->cap;
    f->n--;
    return 0;
}

static void f_release(void *ctx, const emq_rreply *r)
{
    (void)ctx;
    r_free(r);
    free((void *)r);
}

static const char *f_error(void *ctx)
{
    (void)ctx;
    return "the fake connection failed";
}

static void f_close(void *ctx)
{
    fake *f = ctx;
    while (f->n) {
        f_release(f, f->q[f->head]);
        f->head = (f->head + 1) % f->cap;
        f->n--;
    }
}

const emq_transport fake_transport = {
    f_send, f_recv, f_release, f_error, f_close
};

void fake_init(fake *f, int64_t now)
{
    emq_store_opts o = {0};
    memset(f, 0, sizeof *f);
    f->now = now;
    f->fail_after = -1;
    for (int i = 0; i < 4; i++)
        f->has[i] = 1;
    emq_store_open(":memory:", &o, &f->st, NULL, 0);
}

void fake_free(fake *f)
{
    f_close(f);
    free(f->q);
    emq_store_close(f->st);
    f->st = NULL;
}

void fake_cmd(fake *f, size_t argc, const char *const *argv)
{
    size_t lens[16];
    const emq_rreply *r = NULL;
    for (size_t i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    long keep = f->fail_after;
    f->fail_after = -1;
    if (f_send(f, argc, argv, lens) == 0 && f_recv(f, &r) == 0)
        f_release(f, r);
    f->fail_after = keep;
}
