/*
 * verbs.c — the verb registry's table (built from verbs.def) and the one
 * runner every caller goes through: emq_verb_exec for the typed calls,
 * emq_call for callers that name a verb and hand it byte strings.
 *
 * Rules: arguments are gated in spec order before anything else (a failing
 * gate touches nothing and names the argument); a body runs inside
 * emq_db_run (one transaction, NOW read once) unless its kind is PROC or
 * HOST; whatever the body put in the reply is dropped when the transition
 * fails, and a wire error (or a host refusal) becomes the reply instead.
 */
#include <stdio.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "keys.h"
#include "brandedid.h"
#include "events.h"
#include "history.h"

/* ------------------------------------------------------------------ table */

#define A(K, N) { #N, EMQ_ARG_##K, 0, NULL },
#define AO(K, N) { #N, EMQ_ARG_##K, EMQ_ARGF_OPT, NULL },
#define AR(K, N) { #N, EMQ_ARG_##K, EMQ_ARGF_REST, NULL },
#define AR1(K, N) { #N, EMQ_ARG_##K, EMQ_ARGF_REST | EMQ_ARGF_MIN1, NULL },
#define AW(N, W) { #N, EMQ_ARG_WORD, 0, W },
#define AWO(N, W) { #N, EMQ_ARG_WORD, EMQ_ARGF_OPT, W },
#define AWR(N, W) { #N, EMQ_ARG_WORD, EMQ_ARGF_REST, W },
#define ARGS(...) __VA_ARGS__

#define EMQ_VERB(ID, NAME, FAMILY, TIER, KIND, FN, ARGS_, REPLY, KEYS, SUMMARY) \
    static const emq_arg_info args_##ID[] = { ARGS_ { NULL, 0, 0, NULL } };
#include "verbs.def"
#undef EMQ_VERB

static const emq_verb verbs[EMQ_V_COUNT] = {
#define EMQ_VERB(ID, NAME, FAMILY, TIER, KIND, FN, ARGS_, REPLY, KEYS, SUMMARY)    \
    { { EMQ_V_##ID, NAME, TIER, EMQ_VERB_##KIND, args_##ID,                \
        sizeof args_##ID / sizeof args_##ID[0] - 1, EMQ_REPLY_##REPLY,    \
        KEYS, SUMMARY, #FAMILY }, FN },
#include "verbs.def"
#undef EMQ_VERB
};

const emq_verb *emq_verb_get(int id)
{
    return id >= 0 && id < EMQ_V_COUNT ? &verbs[id] : NULL;
}

size_t emq_verb_count(void)
{
    return EMQ_V_COUNT;
}

const emq_verb_info *emq_verb_at(size_t i)
{
    return i < EMQ_V_COUNT ? &verbs[i].info : NULL;
}

const emq_verb_info *emq_verb_find(const char *name)
{
    size_t i;
    if (name == NULL) return NULL;
    for (i = 0; i < EMQ_V_COUNT; i++)
        if (strcmp(verbs[i].info.name, name) == 0) return &verbs[i].info;
    return NULL;
}

/* ------------------------------------------------------------- arguments */

emq_varg emq_varg_str(const char *s)
{
    emq_varg a = { s, s ? strlen(s) : 0, 0, 0 };
    return a;
}

emq_varg emq_varg_bytes(const void *p, size_t n)
{
    emq_varg a = { p, n, 0, 0 };
    return a;
}

emq_varg emq_varg_int(int64_t v)
{
    emq_varg a = { NULL, 0, v, EMQ_VARG_TYPED };
    return a;
}

emq_bytes emq_varg_text(const emq_varg *a, char *buf)
{
    emq_bytes b;
    if (a->s != NULL) {
        b.p = a->s;
        b.n = a->n;
    } else {
        b.n = emq_fmt_i64(buf, a->i);
        b.p = buf;
    }
    return b;
}

static int bad(emq_db *db, const emq_arg_info *s, const char *why)
{
    char m[320];
    snprintf(m, sizeof m, "bad argument: %.60s %.200s", s->name, why);
    return emq_db_wire(db, EMQ_EINVAL, m);
}

/* A C-string kind holds no NUL within its length. */
static int cstr_ok(const emq_varg *a)
{
    return a->s != NULL && memchr(a->s, '\0', a->n) == NULL;
}

/* The index of `a` among the '|'-separated `words`, or -1. */
static int64_t word_index(const char *words, const emq_varg *a)
{
    const char *w = words;
    int64_t i = 0;
    while (w && *w) {
        const char *e = strchr(w, '|');
        size_t n = e ? (size_t)(e - w) : strlen(w);
        if (n == a->n && memcmp(w, a->s, n) == 0) return i;
        i++;
        w = e ? e + 1 : NULL;
    }
    return -1;
}

/* Gate one argument by its spec into `o`. */
static int gate_one(emq_db *db, const emq_arg_info *s, const emq_varg *in,
                    emq_varg *o)
{
    *o = *in;
    if (in->present == EMQ_VARG_TYPED && in->s == NULL) {
        /* A typed call's integer: bounds only, no decimal round trip. */
        o->present = 1;
        switch (s->kind) {
        case EMQ_ARG_INT:
            return EMQ_OK;
        case EMQ_ARG_POS:
            return o->i > 0 ? EMQ_OK : bad(db, s, "must be > 0");
        case EMQ_ARG_NNEG:
            return o->i >= 0 ? EMQ_OK : bad(db, s, "must be >= 0");
        default:
            return bad(db, s, "is not an integer argument");
        }
    }
    o->present = in->s != NULL;
    /* An optional queue given as "" is absent (flow_child's pq: the
     * parent shares the child's queue). */
    if (o->present && s->kind == EMQ_ARG_QUEUE && (s->flags & EMQ_ARGF_OPT) &&
        in->n == 0) {
        o->s = NULL;
        o->present = 0;
        return EMQ_OK;
    }
    if (!o->present) {
        if (s->kind == EMQ_ARG_BYTES && in->n > 0)
            return emq_gate_bytes(db, NULL, in->n);
        if (s->flags & EMQ_ARGF_OPT) return EMQ_OK;
        switch (s->kind) {
        case EMQ_ARG_QUEUE: return emq_gate_q(db, NULL);
        case EMQ_ARG_ID: return emq_gate_id(db, NULL);
        case EMQ_ARG_GROUP: return emq_gate_g(db, NULL);
        case EMQ_ARG_BYTES:
            o->s = "";
            o->present = 1;
            return EMQ_OK;
        default: return bad(db, s, "is missing");
        }
    }
    switch (s->kind) {
    case EMQ_ARG_QUEUE:
        return emq_gate_q(db, cstr_ok(in) ? in->s : NULL);
    case EMQ_ARG_ID:
        return emq_gate_id(db, cstr_ok(in) ? in->s : NULL);
    case EMQ_ARG_GROUP:
        return emq_gate_g(db, cstr_ok(in) ? in->s : NULL);
    case EMQ_ARG_BYTES:
        return emq_gate_bytes(db, in->s, in->n);
    case EMQ_ARG_INT:
    case EMQ_ARG_POS:
    case EMQ_ARG_NNEG:
        if (emq_parse_i64(in->s, in->n, &o->i) != 0)
            return bad(db, s, "is not an integer");
        if (s->kind == EMQ_ARG_POS && o->i <= 0)
            return bad(db, s, "must be > 0");
        if (s->kind == EMQ_ARG_NNEG && o->i < 0)
            return bad(db, s, "must be >= 0");
        return EMQ_OK;
    case EMQ_ARG_BOOL:
        if ((in->n == 1 && in->s[0] == '1') ||
            (in->n == 4 && memcmp(in->s, "true", 4) == 0))
            o->i = 1;
        else if ((in->n == 1 && in->s[0] == '0') ||
                 (in->n == 5 && memcmp(in->s, "false", 5) == 0))
            o->i = 0;
        else
            return bad(db, s, "must be 1, 0, true or false");
        return EMQ_OK;
    case EMQ_ARG_WORD:
        if ((o->i = word_index(s->words, in)) < 0) {
            char m[160];
            snprintf(m, sizeof m, "must be one of %s", s->words);
            return bad(db, s, m);
        }
        return EMQ_OK;
    case EMQ_ARG_DID:
        if (!emq_dedup_valid(in->s, in->n))
            return bad(db, s, "must match [A-Za-z0-9._-]{1,255}");
        return EMQ_OK;
    case EMQ_ARG_NAME:
        if (in->n == 0 || in->n > 255 || !cstr_ok(in) ||
            memchr(in->s, ':', in->n) != NULL)
            return bad(db, s, "must be 1-255 bytes without NUL or ':'");
        return EMQ_OK;
    default:
        return bad(db, s, "has an unknown kind");
    }
}

/* Gate every argument: the fixed ones, then the repeated tail in groups. */
static int gate_all(emq_db *db, const emq_verb *v, const emq_varg *in,
                    size_t argc, emq_varg *out)
{
    const emq_arg_info *sp = v->info.args;
    size_t nfixed = 0, group, i;
    int rc;
    while (nfixed < v->info.nargs && !(sp[nfixed].flags & EMQ_ARGF_REST))
        nfixed++;
    group = v->info.nargs - nfixed;
    if (argc < nfixed) {
        /* Trailing optional arguments may be left out. */
        for (i = argc; i < nfixed; i++)
            if (!(sp[i].flags & EMQ_ARGF_OPT))
                return bad(db, &sp[i], "is missing");
    }
    if (group == 0 && argc > nfixed)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: too many "
                                           "arguments");
    for (i = 0; i < argc && i < nfixed; i++)
        if ((rc = gate_one(db, &sp[i], &in[i], &out[i])) < 0) return rc;
    for (; i < nfixed; i++)
        memset(&out[i], 0, sizeof out[i]);
    if (group == 0) return EMQ_OK;
    if (argc < nfixed || (argc - nfixed) % group != 0) {
        char m[160];
        snprintf(m, sizeof m, "bad argument: %s must come in groups of %zu",
                 sp[nfixed].name, group);
        return emq_db_wire(db, EMQ_EINVAL, m);
    }
    if (argc == nfixed && (sp[nfixed].flags & EMQ_ARGF_MIN1))
        return emq_db_wire(db, EMQ_EEMPTY, "empty_pipeline");
    for (i = nfixed; i < argc; i++)
        if ((rc = gate_one(db, &sp[nfixed + (i - nfixed) % group], &in[i],
                           &out[i])) < 0)
            return rc;
    return EMQ_OK;
}

/* ------------------------------------------------------------------ runner */

static int run_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    emq_vctx *c = ctx;
    (void)db;
    emq_hist_tx h;
    int rc;
    c->st = st;
    c->now = now;
    emq_reply_clear(c->r); /* a retried body starts from an empty reply */
    /* The job history (history.h): what the body did to each job is
     * recorded in its own transaction, or the transition fails. */
    if ((rc = emq_hist_before(c, &h)) < 0) {
        emq_hist_drop(&h);
        return rc;
    }
    rc = c->v->fn(c);
    if (rc < 0) {
        emq_hist_drop(&h);
        return rc;
    }
    int hr = emq_hist_after(c, &h, rc);
    return hr < 0 ? hr : rc;
}

/* The reply of a failed call: a wire error's exact text, a refusal, or
 * nothing (a host gate, an I/O error: the code and emq_errmsg say it). */
static void fail_reply(emq_db *db, int rc, emq_reply *r)
{
    const char *m = emq_errmsg(db);
    if (r->type == EMQ_REPLY_ERROR) return; /* the body chose its error */
    emq_reply_clear(r);
    /* A code with a wire class (EMQ_RESULT_MAP's WIRE column) is a wire
     * error reply; malformed input the engine answered with ERR is one too;
     * a host refusal is a refusal reply; anything else has no reply. */
    const emq_result_row *row = emq_result_info(rc);
    if (row && row->wire[0])
        emq_reply_error(r, EMQ_REPLY_ERROR, m);
    else if (rc == EMQ_EPROTO && strncmp(m, "ERR ", 4) == 0)
        emq_reply_error(r, EMQ_REPLY_ERROR, m);
    else if (rc == EMQ_EREFUSED)
        emq_reply_error(r, EMQ_REPLY_REFUSED, m);
}

#define STACK_ARGS 16

/* The transitions that retire work rather than add it: on a full disk
 * they may spend the room the file keeps in reserve (storage/store.c,
 * "room"), so workers and flow deliveries keep committing after growth is
 * refused (doc/RELIABILITY.md, "Full disks"). */
static int retires_work(int id)
{
    switch (id) {
    case EMQ_V_CLAIM: case EMQ_V_COMPLETE: case EMQ_V_RETRY:
    case EMQ_V_PROMOTE: case EMQ_V_REAP: case EMQ_V_EXTEND_LOCK:
    case EMQ_V_EXTEND_LOCKS: case EMQ_V_DELIVER_FLOW_COMPLETIONS:
    case EMQ_V_LANE_CLAIM: case EMQ_V_WCLAIM: case EMQ_V_BCLAIM:
    case EMQ_V_REAP_GROUP:
        return 1;
    default:
        return 0;
    }
}

int emq_verb_exec(emq_db *db, int id, const emq_varg *in, size_t argc,
                  emq_reply *r, void *out)
{
    const emq_verb *v = emq_verb_get(id);
    emq_varg stack[STACK_ARGS], *a = stack;
    emq_reply scratch = {0};
    emq_vctx c;
    size_t nfixed;
    int rc;

    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (r) emq_reply_clear(r);
    else r = &scratch;
    if (v == NULL) return emq_db_wire(db, EMQ_EINVAL, "unknown verb");
    nfixed = v->info.nargs > argc ? v->info.nargs : argc;
    if (nfixed > STACK_ARGS &&
        (a = emq_mem_calloc(nfixed, sizeof *a)) == NULL)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    if ((rc = gate_all(db, v, in, argc, a)) < 0) goto done;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.v = v;
    c.a = a;
    c.argc = argc;
    c.r = r;
    c.out = out;
    switch (v->info.kind) {
    case EMQ_VERB_WRITE:
    case EMQ_VERB_READ:
        emq_store_set_spend(db->st, retires_work(id));
        rc = emq_db_run(db, v->info.kind == EMQ_VERB_WRITE, run_tx, &c);
        emq_store_set_spend(db->st, 0);
        break;
    default:
        rc = v->fn(&c);
        break;
    }
done:
    if (rc < 0) fail_reply(db, rc, r);
    if (a != stack) emq_mem_free(a);
    emq_reply_clear(&scratch);
    if (rc >= 0) emq_ev_dispatch(db); /* committed: deliver its events */
    return rc;
}

int emq_call(emq_db *db, const char *verb, size_t argc,
             const char *const *argv, const size_t *argvlen,
             emq_reply *reply)
{
    const emq_verb_info *vi;
    emq_varg *a = NULL;
    char *bytes = NULL, *at;
    size_t total = 0, i;
    int rc;

    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (reply) emq_reply_clear(reply);
    if ((vi = emq_verb_find(verb)) == NULL) {
        char m[200];
        snprintf(m, sizeof m, "unknown verb '%.100s'", verb ? verb : "");
        return emq_db_wire(db, EMQ_EINVAL, m);
    }
    if (argc > 0 && argv == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL argv");
    /* One block: the argument views, then each argument's bytes with a NUL
     * after it, so C-string kinds are terminated whatever the caller gave. */
    for (i = 0; i < argc; i++)
        if (argv[i])
            total += (argvlen ? argvlen[i] : strlen(argv[i])) + 1;
    if ((a = emq_mem_calloc(argc ? argc : 1, sizeof *a)) == NULL ||
        (bytes = emq_mem_malloc(total ? total : 1)) == NULL) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    for (at = bytes, i = 0; i < argc; i++) {
        if (argv[i] == NULL) continue;
        a[i].n = argvlen ? argvlen[i] : strlen(argv[i]);
        if (a[i].n) memcpy(at, argv[i], a[i].n);
        at[a[i].n] = '\0';
        a[i].s = at;
        at += a[i].n + 1;
    }
    rc = emq_verb_exec(db, vi->id, a, argc, reply, NULL);
done:
    emq_mem_free(a);
    emq_mem_free(bytes);
    return rc;
}
