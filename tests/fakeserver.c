/*
 * fakeserver.c — the in-memory server and the fake cluster of
 * fakeserver.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fakeserver.h"
#include "resp.h"
#include "transfer.h"
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

/* Run one command (a transaction is open); the reply into r. */
static void exec_one(fake *f, const emq_bytes *a, size_t argc, emq_rreply *r)
{
    emq_store *st = f->st;
    const void *k = argc > 1 ? a[1].p : NULL;
    size_t kl = argc > 1 ? a[1].n : 0;
    emq_buf v = {0};
    rlist l = {NULL, 0, 0};
    int rc = EMQ_OK;
    int64_t x;

    memset(r, 0, sizeof *r);
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
    } else if ((is(a, argc, 0, "PEXPIRETIME") || is(a, argc, 0, "PTTL")) &&
               f->stream_key && kl == strlen(f->stream_key) &&
               memcmp(k, f->stream_key, kl) == 0) {
        r_int(r, -1); /* the stream TYPE names lives without an expiry */
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
            for (const emq_cmddef *d = rows[i].cmds; d && d->name && !def;
                 d++)
                if (is(a, argc, 0, d->name))
                    def = d;
        if (!def || def->check(a, argc, &why) != EMQ_OK)
            error(r, "ERR unknown command or bad arguments");
        else if ((rc = def->apply(st, a, argc)) == EMQ_OK)
            ok(r);
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
    emq_buf_free(&v);
}

/* A command the fake knows with its arguments (checked when queued). */
static int known(const emq_bytes *a, size_t argc)
{
    static const char *const plain[] = {
        "SCAN", "TYPE", "PEXPIRETIME", "PTTL", "GET", "SET", "HGETALL",
        "LRANGE", "SMEMBERS", "ZRANGE", "HPEXPIRETIME", "ZCARD", "UNLINK",
        "DEL", NULL };
    size_t nt;
    const emq_typedef *rows = emq_typedefs(&nt);
    emq_why why;
    for (size_t i = 0; plain[i]; i++)
        if (is(a, argc, 0, plain[i]))
            return argc >= 2;
    for (const emq_cmddef *d = emq_key_cmds; d->name; d++)
        if (is(a, argc, 0, d->name))
            return d->check(a, argc, &why) == EMQ_OK;
    for (size_t i = 0; i < nt; i++)
        for (const emq_cmddef *d = rows[i].cmds; d && d->name; d++)
            if (is(a, argc, 0, d->name))
                return d->check(a, argc, &why) == EMQ_OK;
    return 0;
}

/* ------------------------------------------------------ cluster answers */

static int key_exists(fake *f, const void *k, size_t kl)
{
    int t = EMQ_T_NONE;
    emq_store_begin(f->st, 0, f->now);
    emq_key_type(f->st, k, kl, &t);
    emq_store_commit(f->st);
    return t != EMQ_T_NONE;
}

static void redirect(fake *f, emq_rreply *r, const char *kind,
                     unsigned slot, int node)
{
    char m[96];
    const char *addr = f->cl->addr[node];
    snprintf(m, sizeof m, "%s %u %s", kind, slot,
             f->cl->blank_host ? strchr(addr, ':') : addr);
    error(r, m);
}

/*
 * Whether this node serves a command on `keys` (one slot), as a Redis 7
 * cluster node decides: 1, or 0 with the redirection (or CLUSTERDOWN,
 * CROSSSLOT) in r. `multi_keys`: the keys of an EXEC, where several
 * distinct keys not all held are TRYAGAIN on either side of a move.
 */
static int serves(fake *f, const emq_bytes *keys, size_t nk, emq_rreply *r)
{
    fake_cluster *cl = f->cl;
    size_t missing = 0, distinct = 0;
    unsigned slot;
    if (!cl || nk == 0)
        return 1;
    slot = emq_slot(keys[0].p, keys[0].n);
    for (size_t i = 0; i < nk; i++) {
        int dup = 0;
        if (emq_slot(keys[i].p, keys[i].n) != slot) {
            error(r, "CROSSSLOT Keys in request don't hash to the same slot");
            return 0;
        }
        for (size_t j = 0; j < i && !dup; j++)
            dup = keys[j].n == keys[i].n &&
                  memcmp(keys[j].p, keys[i].p, keys[i].n) == 0;
        if (!dup) {
            distinct++;
            missing += !key_exists(f, keys[i].p, keys[i].n);
        }
    }
    int owner = cl->owner[slot], to = cl->moving[slot];
    if (owner < 0) {
        error(r, "CLUSTERDOWN Hash slot not served");
        return 0;
    }
    if (owner == f->node) {
        if (to >= 0 && missing) {
            if (missing < distinct)
                error(r, "TRYAGAIN Multiple keys request during rehashing "
                         "of slot");
            else
                redirect(f, r, "ASK", slot, to);
            return 0;
        }
        return 1;
    }
    if (to == f->node && f->asking) {
        if (distinct > 1 && missing) {
            error(r, "TRYAGAIN Multiple keys request during rehashing of "
                     "slot");
            return 0;
        }
        return 1;
    }
    redirect(f, r, "MOVED", slot, owner);
    return 0;
}

/* CLUSTER SHARDS or SLOTS from the map. */
static void map_reply(fake *f, int shards, emq_rreply *r)
{
    fake_cluster *cl = f->cl;
    rlist out = {NULL, 0, 0};
    for (size_t node = 0; node < cl->n; node++) {
        long ranges[2 * FAKE_SLOTS];
        size_t nr = 0;
        for (long s = 0; s < FAKE_SLOTS; s++)
            if (cl->owner[s] == (int)node) {
                if (nr && ranges[nr - 1] == s - 1)
                    ranges[nr - 1] = s;
                else
                    ranges[nr++] = s, ranges[nr++] = s;
            }
        if (!nr)
            continue;
        const char *host = cl->blank_host ? "" : "fake";
        char id[48];
        snprintf(id, sizeof id, "%040zu", node + 1);
        if (shards) {
            emq_rreply *sh = rl_add(&out), *e = r_arr(sh, 4);
            r_set(&e[0], EMQ_RREPLY_STRING, "slots", 5);
            emq_rreply *sl = r_arr(&e[1], nr);
            for (size_t i = 0; i < nr; i++)
                r_int(&sl[i], ranges[i]);
            r_set(&e[2], EMQ_RREPLY_STRING, "nodes", 5);
            emq_rreply *nodes = r_arr(&e[3], 1);
            emq_rreply *m = r_arr(&nodes[0], 14);
            const char *kv[] = { "id", id, "ip", host, "endpoint", host,
                                 "role", "master", "health", "online" };
            for (size_t i = 0; i < 10; i++)
                r_set(&m[i], EMQ_RREPLY_STRING, kv[i], strlen(kv[i]));
            r_set(&m[10], EMQ_RREPLY_STRING, "port", 4);
            r_int(&m[11], 7000 + (long long)node);
            r_set(&m[12], EMQ_RREPLY_STRING, "replication-offset", 18);
            r_int(&m[13], 0);
        } else {
            for (size_t i = 0; i < nr; i += 2) {
                emq_rreply *e = r_arr(rl_add(&out), 3);
                r_int(&e[0], ranges[i]);
                r_int(&e[1], ranges[i + 1]);
                emq_rreply *n = r_arr(&e[2], 3);
                r_set(&n[0], EMQ_RREPLY_STRING, host, strlen(host));
                r_int(&n[1], 7000 + (long long)node);
                r_set(&n[2], EMQ_RREPLY_STRING, id, strlen(id));
            }
        }
    }
    rl_done(r, &out);
}

/* ------------------------------------------------------------- commands */

/* The keys of the queued commands (views into f->queued). */
static size_t queued_keys(fake *f, emq_bytes *keys, emq_resp_cmd *d)
{
    size_t at = 0, nk = 0;
    while (at < f->queued.len &&
           emq_resp_parse(f->queued.p + at, f->queued.len - at, at, d,
                          NULL) == EMQ_OK) {
        if (d->argc > 1)
            keys[nk++] = (emq_bytes){d->argv[1], d->lens[1]};
        at += d->size;
    }
    return nk;
}

static void run_exec(fake *f, emq_rreply *r)
{
    emq_resp_cmd d;
    emq_bytes *keys = calloc(f->nqueued + 1, sizeof *keys);
    emq_bytes a[256];
    size_t at = 0, i = 0;
    memset(&d, 0, sizeof d);
    if (f->multi_bad) {
        error(r, "EXECABORT Transaction discarded because of previous "
                 "errors.");
    } else if (serves(f, keys, queued_keys(f, keys, &d), r)) {
        emq_rreply *e = r_arr(r, f->nqueued);
        emq_store_begin(f->st, 1, f->now);
        while (at < f->queued.len &&
               emq_resp_parse(f->queued.p + at, f->queued.len - at, at, &d,
                              NULL) == EMQ_OK) {
            for (size_t k = 0; k < d.argc && k < 256; k++)
                a[k] = (emq_bytes){d.argv[k], d.lens[k]};
            exec_one(f, a, d.argc, &e[i++]);
            at += d.size;
        }
        emq_store_commit(f->st);
    }
    emq_resp_cmd_free(&d);
    free(keys);
    f->multi = f->multi_bad = f->asking = 0;
    f->queued.len = 0;
    f->nqueued = 0;
}

/* Run one command as the node would; the reply into r. */
static void run(fake *f, const emq_bytes *a, size_t argc, emq_rreply *r)
{
    int was_asking = f->asking;
    memset(r, 0, sizeof *r);
    if (f->error_on && is(a, argc, 0, f->error_on)) {
        error(r, "ERR injected");
    } else if (is(a, argc, 0, "COMMAND")) {
        emq_rreply *e = r_arr(r, argc - 2);
        for (size_t i = 2; i < argc; i++) {
            if (i - 2 < 4 && f->has[i - 2])
                r_set(r_arr(&e[i - 2], 1), EMQ_RREPLY_STRING, a[i].p, a[i].n);
            else
                r_set(&e[i - 2], EMQ_RREPLY_NIL, NULL, 0);
        }
    } else if (is(a, argc, 0, "CLUSTER")) {
        if (!f->cl)
            error(r, "ERR This instance has cluster support disabled");
        else if (argc == 2 && is(a, argc, 1, "SHARDS") && !f->cl->no_shards)
            map_reply(f, 1, r);
        else if (argc == 2 && is(a, argc, 1, "SLOTS"))
            map_reply(f, 0, r);
        else
            error(r, "ERR unknown subcommand. Try CLUSTER HELP.");
    } else if (is(a, argc, 0, "ASKING")) {
        if (!f->cl) {
            error(r, "ERR This instance has cluster support disabled");
        } else {
            f->asking = 1;
            ok(r);
        }
        return;
    } else if (is(a, argc, 0, "MULTI")) {
        f->multi = 1;
        f->multi_bad = 0;
        f->queued.len = 0;
        f->nqueued = 0;
        ok(r);
        return; /* ASKING holds through the block */
    } else if (is(a, argc, 0, "EXEC")) {
        if (!f->multi)
            error(r, "ERR EXEC without MULTI");
        else
            run_exec(f, r);
        return;
    } else if (argc > 1 && !is(a, argc, 0, "SCAN") &&
               !serves(f, &a[1], 1, r)) {
        f->multi_bad |= f->multi;
    } else if (f->multi) {
        if (!known(a, argc)) {
            error(r, "ERR unknown command or bad arguments");
            f->multi_bad = 1;
        } else {
            emq_resp_write_cmd(&f->queued, argc, a);
            f->nqueued++;
            r_set(r, EMQ_RREPLY_STATUS, "QUEUED", 6);
        }
        return;
    } else {
        emq_store_begin(f->st, 1, f->now);
        exec_one(f, a, argc, r);
        emq_store_commit(f->st);
    }
    if (!f->multi && was_asking)
        f->asking = 0;
}

/* ------------------------------------------------------------ transport */

static int f_send(void *ctx, size_t argc, const char *const *argv,
                  const size_t *lens)
{
    fake *f = ctx;
    emq_bytes a[256];
    if (f->home->fail_after >= 0 && f->home->commands >= f->home->fail_after)
        return -1;
    if (f->cl && f->cl->hook)
        f->cl->hook(f->cl, f->cl->hook_ctx, f->cl->total);
    if (f->cl)
        f->cl->total++;
    if (f->home != f)
        f->commands++;
    f->home->commands++;
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
    if (f->n == 0 || (f->home->fail_after >= 0 &&
                      f->home->commands >= f->home->fail_after))
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

static void drop_replies(fake *f)
{
    while (f->n) {
        f_release(f, f->q[f->head]);
        f->head = (f->head + 1) % f->cap;
        f->n--;
    }
}

/* A node's own connection stays (the node's state lives in it); a dialled
 * one is freed. */
static void f_close(void *ctx)
{
    fake *f = ctx;
    drop_replies(f);
    f->multi = f->multi_bad = f->asking = 0;
    if (f->home != f) {
        free(f->q);
        emq_buf_free(&f->queued);
        free(f);
    }
}

static int f_flush(void *ctx)
{
    fake *f = ctx;
    return f->home->fail_after >= 0 &&
           f->home->commands >= f->home->fail_after ? -1 : 0;
}

const emq_transport fake_transport = {
    f_send, f_recv, f_release, f_error, f_close, f_flush
};

void fake_init(fake *f, int64_t now)
{
    emq_store_opts o = {0};
    memset(f, 0, sizeof *f);
    f->now = now;
    f->fail_after = -1;
    for (int i = 0; i < 4; i++)
        f->has[i] = 1;
    f->home = f;
    emq_store_open(":memory:", &o, &f->st, NULL, 0);
}

void fake_free(fake *f)
{
    drop_replies(f);
    free(f->q);
    emq_buf_free(&f->queued);
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

/* ------------------------------------------------------------ a cluster */

void fake_cluster_init(fake_cluster *fc, size_t n, int64_t now)
{
    memset(fc, 0, sizeof *fc);
    fc->n = n < FAKE_NODES ? n : FAKE_NODES;
    for (size_t i = 0; i < fc->n; i++) {
        fake_init(&fc->node[i], now);
        fc->node[i].cl = fc;
        fc->node[i].node = (int)i;
        snprintf(fc->addr[i], sizeof fc->addr[i], "fake:%zu", 7000 + i);
    }
    for (size_t s = 0; s < FAKE_SLOTS; s++) {
        fc->owner[s] = (int)(s * fc->n / FAKE_SLOTS);
        fc->moving[s] = -1;
    }
}

void fake_cluster_free(fake_cluster *fc)
{
    for (size_t i = 0; i < fc->n; i++)
        fake_free(&fc->node[i]);
}

int fake_cluster_dial(void *ctx, const char *addr, emq_remote **out,
                      char *err, size_t errlen)
{
    fake_cluster *fc = ctx;
    for (size_t i = 0; i < fc->n; i++) {
        if (strcmp(fc->addr[i], addr) != 0)
            continue;
        fake *home = &fc->node[i], *c = calloc(1, sizeof *c);
        c->st = home->st;
        c->now = home->now;
        memcpy(c->has, home->has, sizeof c->has);
        c->fail_after = -1;
        c->cl = fc;
        c->node = (int)i;
        c->home = home;
        fc->dials++;
        return emq_remote_open(&fake_transport, c, addr, out, err, errlen);
    }
    snprintf(err, errlen, "%s: no such fake node", addr);
    *out = NULL;
    return EMQ_EIO;
}

int fake_cluster_node_of(const fake_cluster *fc, const char *key)
{
    return fc->owner[emq_slot(key, strlen(key))];
}

void fake_slot_begin_move(fake_cluster *fc, unsigned slot, int to)
{
    fc->moving[slot] = to;
}

typedef struct keylist {
    emq_buf names;
    size_t off[4096], n;
    unsigned slot;
} keylist;

static int on_slot_key(void *ctx, const unsigned char *k, size_t n, int type)
{
    keylist *l = ctx;
    (void)type;
    if (emq_slot(k, n) == l->slot && l->n < 4096) {
        l->off[l->n++] = l->names.len;
        emq_buf_append(&l->names, &n, sizeof n);
        emq_buf_append(&l->names, k, n);
    }
    return 0;
}

/* MIGRATE: each key of the slot written on the importing node from its
 * transfer form (the commands an export writes), then deleted here. */
void fake_slot_move_keys(fake_cluster *fc, unsigned slot)
{
    fake *from = &fc->node[fc->owner[slot]], *to = &fc->node[fc->moving[slot]];
    keylist l;
    emq_keyout ko;
    emq_buf out = {0};
    emq_resp_cmd d;
    memset(&l, 0, sizeof l);
    memset(&ko, 0, sizeof ko);
    memset(&d, 0, sizeof d);
    l.slot = slot;
    emq_store_begin(from->st, 0, from->now);
    emq_key_scan(from->st, "", 0, on_slot_key, &l);
    emq_store_commit(from->st);
    for (size_t i = 0; i < l.n; i++) {
        size_t kl;
        int t, del;
        int64_t exp = -1;
        memcpy(&kl, l.names.p + l.off[i], sizeof kl);
        const unsigned char *k = l.names.p + l.off[i] + sizeof kl;
        emq_store_begin(from->st, 1, from->now);
        emq_key_type(from->st, k, kl, &t);
        const emq_typedef *row = emq_typedef_of(t);
        if (emq_key_expiry(from->st, k, kl, &exp) != EMQ_OK)
            exp = -1;
        out.len = 0;
        ko.out = &out;
        emq_keyout_begin(&ko, row, k, kl, exp, -1);
        row->scan(from->st, k, kl, emq_keyout_elem_fn, &ko);
        emq_keyout_end(&ko);
        emq_key_del(from->st, k, kl, &del);
        emq_store_commit(from->st);
        emq_store_begin(to->st, 1, to->now);
        for (size_t at = 0; at < out.len &&
                            emq_resp_parse(out.p + at, out.len - at, at, &d,
                                           NULL) == EMQ_OK;
             at += d.size) {
            emq_bytes a[256];
            emq_rreply r;
            for (size_t j = 0; j < d.argc && j < 256; j++)
                a[j] = (emq_bytes){d.argv[j], d.lens[j]};
            exec_one(to, a, d.argc, &r);
            r_free(&r);
        }
        emq_store_commit(to->st);
    }
    emq_resp_cmd_free(&d);
    emq_keyout_free(&ko);
    emq_buf_free(&out);
    emq_buf_free(&l.names);
}

void fake_slot_end_move(fake_cluster *fc, unsigned slot)
{
    fc->owner[slot] = fc->moving[slot];
    fc->moving[slot] = -1;
}

typedef struct counter {
    long all, in;
    unsigned slot;
} counter;

static int on_count(void *ctx, const unsigned char *k, size_t n, int type)
{
    counter *c = ctx;
    (void)type;
    c->all++;
    c->in += emq_slot(k, n) == c->slot;
    return 0;
}

long fake_node_keys(fake *node, unsigned slot, long *in_slot)
{
    counter c = {0, 0, slot};
    emq_store_begin(node->st, 0, node->now);
    emq_key_scan(node->st, "", 0, on_count, &c);
    emq_store_commit(node->st);
    if (in_slot)
        *in_slot = c.in;
    return c.all;
}
