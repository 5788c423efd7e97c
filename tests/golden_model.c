/*
 * golden_model.c — replay golden traces through the in-memory model
 * (tests/model.h) instead of emqlite, so the model is checked against what
 * the reference did, step by step: every reply, every published message and
 * the whole keyspace.
 *
 *   tests/golden_model [--whole] [replay options] FILE...
 *
 * Each case gets a fresh model (node 1, an empty mint cell, as the traces
 * were minted). A verb runs by its wire name through model_call with the
 * step's arguments mapped by the model's own argument names (tests/vjson.h;
 * a structured argument the model takes as text — a flow, a bulk of flows,
 * a backoff policy — is passed as its JSON text); `raw` runs through
 * model_raw; `advance` only moves the clock. Multi-part verbs (`seq`) are
 * replayed part by part, except retry (the model's retry includes the
 * RECURSE-SQ re-emit that follows it) and, with --whole, every multi-part
 * verb the model has: run once at part 1 with seq.args and compared with
 * the last part's seq.reply and keyspace. A case using a verb the model
 * does not have, for a reason on record (model_unmodelled), is reported
 * SKIP with that reason; any other unknown verb fails the case.
 *
 * A published message is compared as the golden README says: the same
 * channel and the same set of members "name":"value" (member order is not
 * part of the contract, D-4); the driver compares exactly, so when the
 * member sets agree the executor hands the trace's own message back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "golden.h"
#include "vjson.h"
#include "model.h"

typedef struct mx {
    emq_model *m;
    int64_t now;
    int whole;
    int borrow;      /* --borrow-streams                                 */
    long wholes;     /* multi-part verbs run as one                      */
    long borrowed;   /* stream steps answered from the trace             */
    const emq_golden_step *last;  /* the step run last                   */
    int streams;     /* the case has steps the model borrows             */
} mx;

static void say(emq_json_buf *b, const char *what, const char *detail)
{
    char tmp[500];
    int n = snprintf(tmp, sizeof tmp, "%s%s", what, detail ? detail : "");
    if (n > 0)
        emq_json_buf_puts(b, tmp, (size_t)n < sizeof tmp ? (size_t)n
                                                         : sizeof tmp - 1);
}

static int x_begin(void *ctx, const emq_golden_case *c, emq_json_buf *err)
{
    mx *x = ctx;
    size_t k;
    x->streams = 0;
    for (k = 0; k < c->n; k++)
        x->streams |= model_unmodelled(c->steps[k].verb) != NULL;
    x->m = model_new();
    if (!x->m) {
        say(err, "model_new: out of memory", NULL);
        return -1;
    }
    return 0;
}

static void x_end(void *ctx)
{
    mx *x = ctx;
    model_free(x->m);
    x->m = NULL;
}

static void x_clock(void *ctx, int64_t now)
{
    ((mx *)ctx)->now = now;
}

/* ---------------------------------------------------------------- steps */

static int x_raw(mx *x, const emq_golden_step *s, emq_golden_result *res,
                 emq_json_buf *err)
{
    const emq_json *cmd = emq_golden_arg(s, "command");
    const char *argv[64];
    size_t len[64], i;
    emq_reply r;
    if (!cmd || cmd->type != EMQ_JSON_ARRAY || cmd->n > 64) {
        say(err, "raw: command missing or too long", NULL);
        return -1;
    }
    for (i = 0; i < cmd->n; i++) {
        if (cmd->items[i]->type != EMQ_JSON_STRING) {
            say(err, "raw: a command word is not a string", NULL);
            return -1;
        }
        argv[i] = cmd->items[i]->s;
        len[i] = cmd->items[i]->len;
    }
    if (model_raw(x->m, x->now, cmd->n, argv, len, &r) != 0) {
        say(err, "raw: the model does not run ", cmd->n ? argv[0] : "");
        return -1;
    }
    res->reply = emq_vjson_reply(&r, 0, NULL);
    model_reply_free(&r);
    return res->reply ? 0 : -1;
}

/* A copy of `args` where every fixed BYTES argument given as an object or
 * an array is replaced by its JSON text. */
static emq_json *text_args(const emq_verb_info *v, const emq_json *args)
{
    emq_json *a = emq_json_dup(args);
    size_t i, k;
    if (!a) return NULL;
    for (i = 0; i < v->nargs; i++) {
        const emq_arg_info *s = &v->args[i];
        if (s->kind != EMQ_ARG_BYTES || (s->flags & EMQ_ARGF_REST) ||
            strchr(s->name, '.'))
            continue;
        for (k = 0; k < a->n; k++) {
            emq_json *val = a->members[k].val;
            emq_json_buf b;
            emq_json *str;
            if (strcmp(a->members[k].key, s->name) != 0 ||
                (val->type != EMQ_JSON_OBJECT && val->type != EMQ_JSON_ARRAY))
                continue;
            memset(&b, 0, sizeof b);
            if (emq_json_write(&b, val, 0) != EMQ_JSON_OK ||
                !(str = emq_json_new_str(b.p, b.len))) {
                emq_json_buf_free(&b);
                emq_json_free(a);
                return NULL;
            }
            emq_json_buf_free(&b);
            emq_json_move(val, str);
        }
    }
    return a;
}

/* The members of a flat JSON object of strings, as their exact bytes
 * "name":"value", sorted: 0, or -1 when it is not such an object. */
typedef struct members {
    char **v;
    size_t *n;
    size_t count;
} members;

static int cmp_member(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    return strcmp(*x, *y);
}

static int split_members(const char *s, size_t n, members *out)
{
    size_t i = 0;
    memset(out, 0, sizeof *out);
    if (n < 2 || s[0] != '{' || s[n - 1] != '}') return -1;
    i = 1;
    while (i < n - 1) {
        size_t start = i;
        int strings = 0;
        while (i < n - 1 && strings < 2) {
            if (s[i] != '"') return -1;
            for (i++; i < n - 1 && s[i] != '"'; i++)
                if (s[i] == '\\') i++;
            if (i >= n - 1) return -1;
            i++;
            strings++;
            if (strings == 1) {
                if (s[i] != ':') return -1;
                i++;
            }
        }
        out->v = realloc(out->v, (out->count + 1) * sizeof *out->v);
        if (!out->v) abort();
        out->v[out->count] = calloc(1, i - start + 1);
        if (!out->v[out->count]) abort();
        memcpy(out->v[out->count++], s + start, i - start);
        if (i < n - 1) {
            if (s[i] != ',') return -1;
            i++;
        }
    }
    qsort(out->v, out->count, sizeof *out->v, cmp_member);
    return 0;
}

static void members_free(members *m)
{
    size_t i;
    for (i = 0; i < m->count; i++) free(m->v[i]);
    free(m->v);
}

/* 1 when [ch, msg] matches the trace's `want` by the README's rule. */
static int same_message(const emq_json *want, const char *ch, size_t chl,
                        const char *msg, size_t ml)
{
    members a, b;
    size_t i;
    int same;
    if (!want || want->type != EMQ_JSON_ARRAY || want->n != 2 ||
        want->items[0]->type != EMQ_JSON_STRING ||
        want->items[1]->type != EMQ_JSON_STRING ||
        want->items[0]->len != chl || memcmp(want->items[0]->s, ch, chl))
        return 0;
    if (split_members(want->items[1]->s, want->items[1]->len, &a) != 0) {
        members_free(&a);
        return 0;
    }
    if (split_members(msg, ml, &b) != 0) {
        members_free(&a);
        members_free(&b);
        return 0;
    }
    same = a.count == b.count;
    for (i = 0; same && i < a.count; i++) same = !strcmp(a.v[i], b.v[i]);
    members_free(&a);
    members_free(&b);
    return same;
}

static int x_verb(mx *x, const emq_golden_step *s, emq_golden_result *res,
                  emq_json_buf *err)
{
    const model_verb *v = model_verb_find(s->verb);
    emq_verb_info vi;
    emq_vargv av;
    emq_json *args;
    emq_reply r;
    char msg[300] = "";
    const char *ch, *pm;
    size_t chl, pml;
    int rc;
    if (v == NULL) {
        say(err, "the model has no verb ", s->verb);
        return -1;
    }
    model_verb_info(v, &vi);
    if (!(args = text_args(&vi, s->args))) {
        say(err, "out of memory", NULL);
        return -1;
    }
    if (emq_vjson_args(&vi, args, &av, msg, sizeof msg) != 0) {
        emq_json_free(args);
        say(err, "arguments: ", msg);
        return -1;
    }
    rc = model_call(x->m, v->name, x->now, av.argc, av.argv, av.len, &r);
    res->reply = emq_vjson_reply(&r, rc, "refused by the model");
    model_reply_free(&r);
    emq_vargv_free(&av);
    emq_json_free(args);
    res->has_published = 1;
    if (model_published(x->m, &ch, &chl, &pm, &pml)) {
        if (same_message(s->published, ch, chl, pm, pml)) {
            res->published = emq_json_dup(s->published);
        } else {
            res->published = emq_json_new_array();
            if (res->published &&
                (emq_json_push(res->published, emq_json_new_str(ch, chl)) ||
                 emq_json_push(res->published, emq_json_new_str(pm, pml)))) {
                emq_json_free(res->published);
                res->published = NULL;
            }
        }
    } else {
        res->published = emq_json_new_null();
    }
    if (!res->reply || !res->published) {
        say(err, "out of memory", NULL);
        return -1;
    }
    return 0;
}

/* 1 when `key` is a stream's (B.stream:<name> or its :archived cache). */
static int stream_key(const char *key, size_t n)
{
    const char *b = memchr(key, '}', n);
    return b && (size_t)(b - key) + 9 <= n && memcmp(b, "}:stream:", 9) == 0;
}

static int x_step(void *ctx, const emq_golden_step *s, emq_golden_result *res,
                  emq_json_buf *err)
{
    mx *x = ctx;
    x->last = s;
    if (x->borrow && model_unmodelled(s->verb)) {
        /* a stream verb: the trace's answer, and its keys, are borrowed */
        const emq_json *id = emq_golden_arg(s, "id");
        x->borrowed++;
        if (id && id->type == EMQ_JSON_STRING)   /* a host-minted record id */
            model_mint_observe(x->m, id->s, id->len);
        res->reply = emq_json_dup(s->reply);
        return res->reply ? 0 : -1;
    }
    if (strcmp(s->verb, "raw") == 0) return x_raw(x, s, res, err);
    if (strcmp(s->verb, "advance") == 0) {
        res->reply = emq_json_new_null();
        return res->reply ? 0 : -1;
    }
    return x_verb(x, s, res, err);
}

/* ----------------------------------------------------------------- dump */

typedef struct dump {
    emq_json *ks, *val;
    const char *type;
    char *key;
    size_t keyn;
    int64_t exp;
    int oom;
} dump;

static void d_flush(dump *d)
{
    if (d->val && emq_golden_ks_add(d->ks, d->key, d->keyn, d->type, d->val,
                                    d->exp) != 0)
        d->oom = 1;
    d->val = NULL;
    free(d->key);
    d->key = NULL;
}

static void d_key(void *ctx, const void *name, size_t n, int type,
                  int64_t exp)
{
    dump *d = ctx;
    d_flush(d);
    d->key = malloc(n + 1);
    if (!d->key) abort();
    memcpy(d->key, name, n);
    d->key[n] = 0;
    d->keyn = n;
    d->exp = exp;
    switch (type) {
    case EMQ_T_STRING: d->type = "string"; d->val = NULL; break;
    case EMQ_T_HASH: d->type = "hash"; d->val = emq_json_new_object(); break;
    case EMQ_T_ZSET: d->type = "zset"; d->val = emq_json_new_array(); break;
    case EMQ_T_LIST: d->type = "list"; d->val = emq_json_new_array(); break;
    default: d->type = "set"; d->val = emq_json_new_array(); break;
    }
    if (type != EMQ_T_STRING && !d->val) d->oom = 1;
}

static void d_str(void *ctx, const void *v, size_t n)
{
    dump *d = ctx;
    if (!(d->val = emq_json_new_str(v, n))) d->oom = 1;
}

static void d_field(void *ctx, const void *f, size_t fl, const void *v,
                    size_t vl)
{
    dump *d = ctx;
    if (emq_json_set(d->val, f, fl, emq_json_new_str(v, vl))) d->oom = 1;
}

static void d_member(void *ctx, const void *m, size_t n, double s)
{
    dump *d = ctx;
    emq_json *pair = emq_json_new_array();
    if (!pair || emq_json_push(pair, emq_json_new_str(m, n)) ||
        emq_json_push(pair, emq_golden_score(s)) ||
        emq_json_push(d->val, pair))
        d->oom = 1;
}

static void d_elem(void *ctx, const void *v, size_t n)
{
    dump *d = ctx;
    if (emq_json_push(d->val, emq_json_new_str(v, n))) d->oom = 1;
}

static int x_dump(void *ctx, emq_json **ks, emq_json_buf *err)
{
    static const model_visitor vis = {d_key, d_str, d_field, d_member,
                                      d_elem};
    mx *x = ctx;
    dump d;
    memset(&d, 0, sizeof d);
    if (!(d.ks = emq_json_new_object())) {
        say(err, "out of memory", NULL);
        return -1;
    }
    model_walk(x->m, x->now, &vis, &d);
    d_flush(&d);
    if (x->borrow && x->last) {
        const emq_json *want = x->last->keyspace;
        size_t k;
        for (k = 0; k < want->n && !d.oom; k++) {
            const emq_json_member *e = &want->members[k];
            if (stream_key(e->key, e->klen) && !emq_json_get(d.ks, e->key) &&
                emq_json_set(d.ks, e->key, e->klen, emq_json_dup(e->val)))
                d.oom = 1;
        }
    }
    if (d.oom) {
        emq_json_free(d.ks);
        say(err, "dump: out of memory", NULL);
        return -1;
    }
    *ks = d.ks;
    return 0;
}

/* ---------------------------------------------------- skips and wholes */

static int x_whole(void *ctx, const char *verb)
{
    mx *x = ctx;
    /* sweep mints from the cell the (borrowed) stream appends share: run
     * it whole only where the model made every mint of the case */
    int yes = strcmp(verb, "retry") == 0 ||
              (x->whole && model_verb_find(verb) != NULL &&
               !(x->streams && strcmp(verb, "sweep") == 0));
    x->wholes += yes;
    return yes;
}

static const char *x_skip(void *ctx, const emq_golden_case *c)
{
    static char why[400];
    size_t k;
    if (((mx *)ctx)->borrow) return NULL;
    for (k = 0; k < c->n; k++) {
        const char *v = c->steps[k].verb, *r = model_unmodelled(v);
        if (r) {
            snprintf(why, sizeof why, "uses %s, which the model does not "
                     "have: %s", v, r);
            return why;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    mx x;
    emq_golden_exec ex;
    emq_golden_opts opts;
    int i, o = 1;
    memset(&x, 0, sizeof x);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--whole") == 0) x.whole = 1;
        else if (strcmp(argv[i], "--borrow-streams") == 0) x.borrow = 1;
        else argv[o++] = argv[i];
    }
    argv[o] = NULL;
    memset(&ex, 0, sizeof ex);
    ex.name = "model";
    ex.ctx = &x;
    ex.case_begin = x_begin;
    ex.set_clock = x_clock;
    ex.run_step = x_step;
    ex.dump_keyspace = x_dump;
    ex.case_end = x_end;
    opts.whole = x_whole;
    opts.case_skip = x_skip;
    i = emq_golden_main_opts(o, argv, &ex, &opts);
    printf("%ld multi-part verbs run whole", x.wholes);
    if (x.borrow) printf(", %ld stream steps borrowed", x.borrowed);
    printf("\n");
    return i;
}
