/*
 * lua_diff.c — the Lua differential runner: random sequences of registry
 * verbs run on emqlite and, through the project's own Lua bundle
 * (tests/lua/), on a private redis-server, compared step by step.
 *
 *   tests/lua_diff [--port N] [--lua DIR] [--seeds N] [--first S]
 *                  [--steps N] [--every K] [--verbose]
 *   tests/lua_diff [--port N] [--lua DIR] --replay FILE
 *
 * The port defaults to $EMQ_REDIS_PORT, the bundle to $EMQ_LUA_DIR (else
 * tests/lua); seeds, steps and the keyspace interval to $EMQ_DIFF_SEEDS,
 * $EMQ_DIFF_STEPS and $EMQ_DIFF_EVERY (8, 2000, 1), and $EMQ_DIFF_LONG=1
 * makes the long run (64 seeds of 2000 steps). Every sequence starts from
 * an empty keyspace on both sides: a fresh ":memory:" handle on a virtual
 * clock (tests/golden_emq.c) and a FLUSHALLed server (tests/golden_redis.c,
 * every script called with the same virtual now as its clock override).
 *
 * Owns: the choice of the verbs under test, the sequences and their
 * comparison, and the shrinking of a failing sequence. A step is
 *   - a call of a registry verb (tests/vgen.h draws its arguments from its
 *     row: two queues, eleven ids, groups, payloads with NUL and non-UTF-8
 *     bytes, tokens that are mostly current, no argument invalid for its
 *     kind), run on emqlite by wire name and on the server with the trace
 *     args the argv maps to (emq_vjson_from_argv; the runner checks that
 *     emq_vjson_args maps them back to the same argv, so both sides run the
 *     same call); every reply is compared, and update_progress's event;
 *   - a raw store write of a state no verb builds (vgen_raw_pick), applied
 *     to both stores when its row exists;
 *   - a clock advance.
 * The whole keyspace is compared every K steps and after the last one.
 *
 * Which verbs: every registered verb the bundle's executor runs
 * (emq_rx_verb_at), except the exclusions below, each with its reason, and
 * tier-0 rows (beyond the wire: no script and no trace shape). A row added
 * to the registry joins with no code here; a registered verb the bundle
 * lacks, and a bundle verb the registry lacks, are listed and skipped. A
 * call whose argv has no trace shape (an argument vgen drew that the trace
 * args cannot carry) is counted per verb and skipped on both sides. A few
 * arguments are held at one value (`pinned`, each with its reason).
 *
 * Replies compare as golden.h compares a trace's; one equivalence more: a
 * host refusal (PROTOCOL.md A.3, before any store access) is a typed
 * failure on emqlite's side and {"refused": text} on the executor's, the
 * same when the texts are (same_refusal).
 *
 * A difference stops its sequence: the runner prints it, shrinks the
 * sequence to a minimal one that still differs (whole steps removed while
 * some reply or keyspace still differs) and prints that as JSON lines
 * {"verb", "args", "now"} (raws as {"verb": "raw", "args": {"command"}}).
 * The program ends with "differential: N steps, F failures" and exits 0
 * when nothing differed, 1 when something did, 2 on a usage or harness
 * error. --replay runs such lines, each with a "case" name, as kept cases
 * (tests/lua_diff.jsonl) and ends with "replay: N cases, D differ".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emqlite.h"
#include "emqlite_protocol.h"
#include "golden.h"
#include "golden_emq.h"
#include "golden_redis.h"
#include "vgen.h"
#include "vjson.h"

/* ---------------------------------------------------------- the verbs */

/* Verbs the bundle runs that the differential leaves out, with the
 * reason (a verb not registered yet is listed when it is). */
static const struct {
    const char *verb, *why;
} excluded[] = {
    {"backoff", "host arithmetic without store access (the executor "
     "computes it in C, not on the server); its policy tail has no "
     "byte-string trace shape"},
    {"lock_key_set", "the lock key's TTL runs on the server's own clock, "
     "which the virtual clock's advances cannot move"},
    {"lock_key_refresh", "the lock key's TTL runs on the server's own "
     "clock, which the virtual clock's advances cannot move"},
    {"append", "without an id it mints the record's EVT id from emqlite's "
     "node id and mint cell; the bundle's host passes the id it minted"},
    {"group_read", "a block argument blocks the server for real ms, and the "
     "delivery times it stamps run on the server's clock"},
    {NULL, NULL},
};

/* One step in five or so admits work, so the other verbs have some: these
 * wire names, those that are registered and covered. */
static const char *const admissions[] = {"enqueue", "lane_enqueue",
                                         "flow_add", NULL};

/* Trace arguments whose bytes the protocol reads as words: vgen draws
 * BYTES from its payload pool, which almost never holds one; 7 calls in 8
 * take a word of the argument's vocabulary instead. */
static const struct {
    const char *arg;
    const char *const *words;
} vocab[] = {
    {"names", (const char *const[]){"pending", "active", "schedule", "dead",
                                    "completed", "failed", NULL}},
    /* the stream verbs: entry ids and bounds, EVT records, a few groups
     * and consumers, so that calls meet the entries and groups of others */
    /* (no "*": the server mints it from its own clock, not the virtual
     * one; "5-*" takes the given ms) */
    {"xid", (const char *const[]){"1-1", "2-0", "5-*", "0-0", "3-1", NULL}},
    {"from", (const char *const[]){"-", "+", "0", "1-1", "2", NULL}},
    {"to", (const char *const[]){"+", "-", "2-0", "1767225600000", NULL}},
    {"start", (const char *const[]){"0", "$", "0-0", "1-1", NULL}},
    {"end", (const char *const[]){"+", "-", "5", NULL}},
    {"group", (const char *const[]){"g1", "g2", NULL}},
    {"consumer", (const char *const[]){"c1", "c2", NULL}},
    {"ids", (const char *const[]){"1-1", "2-0", "0-1", NULL}},
    {"id", (const char *const[]){"EVT0JZGkP8smrw", "EVT0JZGkP8smrx",
                                 "EVT0JZGkP8smry", NULL}},
    {NULL, NULL},
};

/* Arguments held at one value, with the reason: what the differential
 * cannot compare. */
static const struct {
    const char *verb, *arg, *value, *why;
} pinned[] = {
    {"trim", "window.exact", "1", "an approximate trim may remove fewer "
     "entries than Valkey's node-based one (D-16: never more than the exact "
     "form), so only exact trims are compared; tests/stream_diff resyncs "
     "the approximate ones"},
    {NULL, NULL, NULL, NULL},
};

#define MAXCLASS 24

/* What a verb's calls reached: reply classes with their counts. */
typedef struct tally {
    long calls, unshaped;
    size_t nclass;
    char cls[MAXCLASS][48];
    long count[MAXCLASS];
} tally;

typedef struct verb {
    const emq_verb_info *v;
    tally t;
} verb;

/* ----------------------------------------------------------- the world */

enum { ST_VERB, ST_RAW };

/* A recorded step (heap-allocated once: a vgen_raw points into itself). */
typedef struct dstep {
    int kind;
    const emq_verb_info *v;   /* ST_VERB */
    emq_json *args;           /* ST_VERB: the trace args                 */
    vgen_raw raw;             /* ST_RAW                                  */
    int64_t now;
} dstep;

typedef struct world {
    emq_golden_exec ex;       /* emqlite                                 */
    emq_rx *x;                /* the server                              */
    int64_t now;
    int open;                 /* a sequence is running on ex             */
    vgen gen;
    vgen_src src;
    verb *verbs;              /* the covered ones                        */
    size_t nverbs;
    dstep **trail;            /* the current sequence                    */
    size_t ntrail, captrail;
    long calls, raws, raws_skipped, advances, ks_compares;
    int verbose;
} world;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *why_excluded(const emq_verb_info *v)
{
    size_t i;
    if (v->tier == 0)
        return "tier 0, beyond the wire: no script in the bundle and no "
               "trace shape";
    for (i = 0; excluded[i].verb; i++)
        if (strcmp(excluded[i].verb, v->name) == 0) return excluded[i].why;
    return NULL;
}

static int bundle_has(const char *name)
{
    const char *b;
    size_t i;
    for (i = 0; (b = emq_rx_verb_at(i)) != NULL; i++)
        if (strcmp(b, name) == 0) return 1;
    return 0;
}

/* Sort the registry into covered, excluded and unknown verbs; print the
 * last two kinds, each with its reason. Returns the number covered, or -1
 * (out of memory). */
static long pick_verbs(world *w)
{
    size_t n = emq_verb_count(), i, k = 0;
    const char *b;
    w->verbs = calloc(n ? n : 1, sizeof *w->verbs);
    if (!w->verbs) return -1;
    for (i = 0; i < n; i++) {
        const emq_verb_info *v = emq_verb_at(i);
        const char *why = why_excluded(v);
        if (why)
            printf("excluded: %s (%s)\n", v->name, why);
        else if (!bundle_has(v->name))
            printf("skipped: %s (registered, but the bundle's executor does "
                   "not run it)\n", v->name);
        else
            w->verbs[w->nverbs++].v = v;
    }
    for (i = 0; (b = emq_rx_verb_at(i)) != NULL; i++)
        if (!emq_verb_find(b))
            printf("%s%s", k++ ? " " : "skipped, in the bundle but not in "
                   "emqlite's registry: ", b);
    if (k) printf(" (%zu verbs)\n", k);
    for (i = 0; pinned[i].verb; i++)
        printf("pinned: %s %s = %s (%s)\n", pinned[i].verb, pinned[i].arg,
               pinned[i].value, pinned[i].why);
    return (long)w->nverbs;
}

static verb *covered(world *w, const char *name)
{
    size_t i;
    for (i = 0; i < w->nverbs; i++)
        if (strcmp(w->verbs[i].v->name, name) == 0) return &w->verbs[i];
    return NULL;
}

/* The token hook: the attempts of J(id) on the emqlite side. */
static int attempts_of(void *ctx, const char *q, const char *id,
                       int64_t *att)
{
    world *w = ctx;
    emq_field *f = NULL;
    size_t n = 0, i;
    int found = 0;
    if (emq_job_get(emq_golden_emq_db(&w->ex), q, id, &f, &n) != EMQ_OK)
        return 0;
    for (i = 0; i < n; i++)
        if (strcmp(f[i].name, "attempts") == 0) {
            *att = strtoll(f[i].value, NULL, 10);
            found = 1;
        }
    emq_fields_free(f, n);
    return found;
}

/* -------------------------------------------------------- one sequence */

static int seq_begin(world *w, int64_t now, emq_json_buf *err)
{
    emq_golden_case c;
    memset(&c, 0, sizeof c);
    if (w->ex.case_begin(w->ex.ctx, &c, err) != 0) return -1;
    w->open = 1;
    w->now = now;
    w->ex.set_clock(w->ex.ctx, now);
    return emq_rx_reset(w->x, err);
}

static void seq_end(world *w)
{
    if (w->open) w->ex.case_end(w->ex.ctx);
    w->open = 0;
}

static void trail_clear(world *w)
{
    size_t i;
    for (i = 0; i < w->ntrail; i++) {
        emq_json_free(w->trail[i]->args);
        free(w->trail[i]);
    }
    w->ntrail = 0;
}

/* A new step at the end of the trail (NULL when out of memory). */
static dstep *trail_add(world *w)
{
    dstep *s;
    if (w->ntrail == w->captrail) {
        size_t cap = w->captrail ? 2 * w->captrail : 256;
        dstep **t = realloc(w->trail, cap * sizeof *t);
        if (!t) return NULL;
        w->trail = t;
        w->captrail = cap;
    }
    if (!(s = calloc(1, sizeof *s))) return NULL;
    w->trail[w->ntrail++] = s;
    return s;
}

/* The keyspaces of both sides: 0 equal, 1 differ (diff says how), -1. */
static int same_keyspace(world *w, emq_json_buf *diff)
{
    emq_json *a = NULL, *b = NULL;
    int rc = -1;
    w->ks_compares++;
    if (w->ex.dump_keyspace(w->ex.ctx, &a, diff) != 0 ||
        emq_rx_dump(w->x, &b, diff) != 0)
        goto done;
    rc = emq_golden_keyspace_diff(a, b, diff) ? 1 : 0;
    if (rc) emq_json_buf_puts(diff, " (expected: emqlite, got: server)", 33);
done:
    emq_json_free(a);
    emq_json_free(b);
    return rc;
}

/* A reply's class for the tally ("int:1", "[]", "error:EMQSTALE ..."). */
static void classify(const emq_json *r, char *out, size_t cap)
{
    const emq_json *e;
    switch (r->type) {
    case EMQ_JSON_NULL: snprintf(out, cap, "nil"); break;
    case EMQ_JSON_INT:
        if (r->i > 2) snprintf(out, cap, "int>2");
        else snprintf(out, cap, "int:%" PRId64, r->i);
        break;
    case EMQ_JSON_TRUE: snprintf(out, cap, "true"); break;
    case EMQ_JSON_FALSE: snprintf(out, cap, "false"); break;
    case EMQ_JSON_ARRAY: snprintf(out, cap, r->n ? "[...]" : "[]"); break;
    case EMQ_JSON_STRING: snprintf(out, cap, "\"%.30s\"", r->s); break;
    case EMQ_JSON_OBJECT:
        if ((e = emq_json_get(r, "error")) || (e = emq_json_get(r, "refused"))
            || (e = emq_json_get(r, "emqlite_error")))
            snprintf(out, cap, "%s:%.30s", r->members[0].key,
                     e->type == EMQ_JSON_STRING ? e->s : "?");
        else
            snprintf(out, cap, "map");
        break;
    default: snprintf(out, cap, "?"); break;
    }
}

static void tally_reply(tally *t, const emq_json *reply)
{
    char c[48];
    size_t i;
    classify(reply, c, sizeof c);
    for (i = 0; c[i]; i++)
        if ((unsigned char)c[i] < 0x20 || (unsigned char)c[i] >= 0x7f)
            c[i] = '?';
    for (i = 0; i < t->nclass; i++)
        if (strcmp(t->cls[i], c) == 0) {
            t->count[i]++;
            return;
        }
    if (t->nclass < MAXCLASS) {
        snprintf(t->cls[t->nclass], sizeof t->cls[0], "%s", c);
        t->count[t->nclass++] = 1;
    }
}

/*
 * 1 when emqlite's reply `a` is a host refusal (a typed failure outside
 * the wire classes, which golden_emq.c writes {"emqlite_error": "<class>
 * (<rc>): <message>"}) and the server's `b` is the executor's refusal
 * {"refused": <message>} with the same message: the same refusal before
 * any store access (PROTOCOL.md Appendix A.3, e.g. LINK's GATE-ID).
 */
static int same_refusal(const emq_json *a, const emq_json *b)
{
    const emq_json *e = emq_json_get(a, "emqlite_error");
    const emq_json *t = emq_json_get(b, "refused");
    const char *m;
    if (!e || !t || a->n != 1 || b->n != 1 || e->type != EMQ_JSON_STRING ||
        t->type != EMQ_JSON_STRING || !(m = strstr(e->s, " (-")))
        return 0;
    m += 3;
    while (*m >= '0' && *m <= '9') m++;
    if (strncmp(m, "): ", 3) != 0) return 0;
    m += 3;
    return (size_t)(e->s + e->len - m) == t->len &&
           memcmp(m, t->s, t->len) == 0;
}

/*
 * Run one verb step on both sides and compare. Returns 0 same, 1 differ
 * (diff says how), -1 harness error (diff says why). `t` (may be NULL)
 * tallies emqlite's reply.
 */
static int run_verb(world *w, const dstep *s, tally *t, emq_json_buf *diff)
{
    emq_golden_step gs;
    emq_golden_result ra, rb;
    emq_json null_v;
    int rc = -1;
    memset(&gs, 0, sizeof gs);
    memset(&ra, 0, sizeof ra);
    memset(&rb, 0, sizeof rb);
    memset(&null_v, 0, sizeof null_v);
    gs.verb = s->v->name;
    gs.now = s->now;
    gs.args = s->args;
    gs.step = 1;
    w->ex.set_clock(w->ex.ctx, s->now);
    if (w->ex.run_step(w->ex.ctx, &gs, &ra, diff) != 0 || !ra.reply ||
        emq_rx_run(w->x, s->v->name, s->args, s->now, &rb, diff) != 0 ||
        !rb.reply)
        goto done;
    if (t) tally_reply(t, ra.reply);
    rc = 0;
    if (!same_refusal(ra.reply, rb.reply) &&
        emq_golden_reply_diff(ra.reply, rb.reply, diff)) {
        emq_json_buf_puts(diff, " (expected: emqlite, got: server)", 33);
        rc = 1;
    } else if ((ra.has_published || rb.has_published) &&
               !emq_golden_published_equal(
                   ra.published ? ra.published : &null_v,
                   rb.published ? rb.published : &null_v)) {
        emq_json_buf_puts(diff, "published: emqlite ", 19);
        emq_json_write(diff, ra.published ? ra.published : &null_v, 300);
        emq_json_buf_puts(diff, ", server ", 9);
        emq_json_write(diff, rb.published ? rb.published : &null_v, 300);
        rc = 1;
    }
done:
    emq_json_free(ra.reply);
    emq_json_free(ra.published);
    emq_json_free(rb.reply);
    emq_json_free(rb.published);
    return rc;
}

/* Command k of a raw write as trace args {"command": [...]}. */
static emq_json *raw_args(const vgen_raw *r, size_t k)
{
    emq_json *o = emq_json_new_object(), *c = emq_json_new_array();
    size_t i;
    if (!o || !c || emq_json_set(o, "command", 7, c) != 0) {
        emq_json_free(o);
        return NULL;
    }
    for (i = 0; i < r->argc[k]; i++)
        if (emq_json_push(c, emq_json_new_str(r->argv[k][i],
                                              strlen(r->argv[k][i]))) != 0) {
            emq_json_free(o);
            return NULL;
        }
    return o;
}

/* Apply a raw write to both sides (none when its row is absent on
 * emqlite's: the keyspaces agree up to here). 0, or -1 (diff says why). */
static int run_raw(world *w, const dstep *s, int *applied, emq_json_buf *diff)
{
    char err[300] = "";
    size_t k;
    w->ex.set_clock(w->ex.ctx, s->now);
    if (vgen_raw_apply_engine(emq_golden_emq_db(&w->ex), s->now, &s->raw,
                              applied, err, sizeof err) != 0) {
        emq_json_buf_puts(diff, err, strlen(err));
        return -1;
    }
    for (k = 0; *applied && k < s->raw.ncmd; k++) {
        emq_golden_result res;
        emq_json *a = raw_args(&s->raw, k);
        int rc;
        memset(&res, 0, sizeof res);
        rc = a ? emq_rx_run(w->x, "raw", a, s->now, &res, diff) : -1;
        emq_json_free(a);
        emq_json_free(res.reply);
        if (rc != 0) return -1;
    }
    return 0;
}

/* Run `s` on both sides: 0 same (keyspaces not compared), 1, -1. */
static int run_step(world *w, const dstep *s, tally *t, emq_json_buf *diff)
{
    int applied;
    if (s->kind == ST_VERB) return run_verb(w, s, t, diff);
    return run_raw(w, s, &applied, diff);
}

/* -------------------------------------------------- generating a step */

/* The spec of argv position i of a call of v. */
static const emq_arg_info *spec_of(const emq_verb_info *v, size_t i)
{
    size_t nfixed = 0;
    while (nfixed < v->nargs && !(v->args[nfixed].flags & EMQ_ARGF_REST))
        nfixed++;
    if (i < nfixed || nfixed == v->nargs)
        return &v->args[i < v->nargs ? i : 0];
    return &v->args[nfixed + (i - nfixed) % (v->nargs - nfixed)];
}

/* Give the arguments named in `vocab` a word of their vocabulary. */
static void apply_vocab(world *w, vgen_call *c)
{
    size_t i, k, n;
    for (i = 0; i < c->argc; i++) {
        const emq_arg_info *a = spec_of(c->v, i);
        unsigned b = vgen_byte(&w->src);
        if (c->argv[i] == NULL || a->kind != EMQ_ARG_BYTES) continue;
        for (k = 0; vocab[k].arg; k++) {
            if (strcmp(vocab[k].arg, a->name) != 0 || b % 8 == 7) continue;
            for (n = 0; vocab[k].words[n]; n++)
                ;
            c->argv[i] = vocab[k].words[b / 8 % n];
            c->len[i] = strlen(c->argv[i]);
        }
    }
}

/* Hold the arguments of `pinned` at their value. */
static void apply_pinned(vgen_call *c)
{
    size_t i, k;
    for (k = 0; pinned[k].verb; k++) {
        if (strcmp(pinned[k].verb, c->v->name) != 0) continue;
        for (i = 0; i < c->argc; i++)
            if (c->argv[i] &&
                strcmp(spec_of(c->v, i)->name, pinned[k].arg) == 0) {
                c->argv[i] = pinned[k].value;
                c->len[i] = strlen(pinned[k].value);
            }
    }
}

/* 1 when emq_vjson_args(args) gives back c's argv (a boolean by value),
 * else 0 with `why` filled. */
static int maps_back(const vgen_call *c, const emq_json *args, char *why,
                     size_t cap)
{
    emq_vargv av;
    size_t i;
    int ok = 1;
    if (emq_vjson_args(c->v, args, &av, why, cap) != 0) return 0;
    if (av.argc != c->argc) {
        snprintf(why, cap, "%zu arguments come back as %zu", c->argc,
                 av.argc);
        ok = 0;
    }
    for (i = 0; ok && i < c->argc; i++) {
        const emq_arg_info *a = spec_of(c->v, i);
        int same;
        if ((c->argv[i] == NULL) != (av.argv[i] == NULL))
            same = 0;
        else if (c->argv[i] == NULL)
            same = 1;
        else if (a->kind == EMQ_ARG_BOOL)
            same = (c->argv[i][0] == '1' || c->argv[i][0] == 't') ==
                   (av.argv[i][0] == '1');
        else
            same = c->len[i] == av.len[i] &&
                   memcmp(c->argv[i], av.argv[i], c->len[i]) == 0;
        if (!same) {
            snprintf(why, cap, "argument %zu (%s) does not come back", i,
                     a->name);
            ok = 0;
        }
    }
    emq_vargv_free(&av);
    return ok;
}

/* Draw the next step into a new trail entry. Returns the entry, or NULL
 * for an advance or a call with no trace shape (counted). *oom on failure. */
static dstep *next_step(world *w, int *oom)
{
    unsigned b = vgen_byte(&w->src) % 100;
    const char *const *adm;
    verb *vb = NULL;
    vgen_call c;
    dstep *s;
    char why[300];
    *oom = 0;
    if (b < 6) {
        w->now += vgen_byte(&w->src) % 10 ? (int64_t)(vgen_byte(&w->src) % 80)
                                           : 1000000;
        w->advances++;
        return NULL;
    }
    if (b < 12) {
        if (!(s = trail_add(w))) goto oom;
        s->kind = ST_RAW;
        s->now = w->now;
        vgen_raw_pick(&w->src, &s->raw);
        w->raws++;
        return s;
    }
    if (b < 30) { /* the r-th of the admissions that are covered */
        unsigned n = 0, r;
        for (adm = admissions; *adm; adm++) n += covered(w, *adm) != NULL;
        r = n ? vgen_byte(&w->src) % n : 0;
        for (adm = admissions; n && *adm && !vb; adm++)
            if (covered(w, *adm) && r-- == 0) vb = covered(w, *adm);
    }
    if (!vb) vb = &w->verbs[vgen_byte(&w->src) % w->nverbs];
    w->gen.now = w->now;
    vgen_args(&w->gen, vb->v, &w->src, &c);
    apply_vocab(w, &c);
    apply_pinned(&c);
    vb->t.calls++;
    if (!(s = trail_add(w))) goto oom;
    s->kind = ST_VERB;
    s->v = vb->v;
    s->now = w->now;
    s->args = emq_vjson_from_argv(vb->v, c.argc, c.argv, c.len, why,
                                  sizeof why);
    if (!s->args || !maps_back(&c, s->args, why, sizeof why)) {
        char d[300];
        vgen_describe(&c, d, sizeof d);
        if (w->verbose) printf("no trace shape: %s: %s\n", d, why);
        vb->t.unshaped++;
        emq_json_free(s->args);
        free(s);
        w->ntrail--;
        return NULL;
    }
    w->calls++;
    return s;
oom:
    *oom = 1;
    return NULL;
}

/* ----------------------------------------------------------- shrinking */

/* Run the steps of `keep` (flags over the trail) on fresh sides, comparing
 * every reply and the keyspace after every step: 1 when something differs,
 * 0 when nothing does, -1 on a harness error. */
static int replay(world *w, const char *keep, int64_t start,
                  emq_json_buf *diff)
{
    size_t i;
    int rc = 0;
    seq_end(w);
    if (seq_begin(w, start, diff) != 0) return -1;
    for (i = 0; i < w->ntrail && rc == 0; i++) {
        if (!keep[i]) continue;
        rc = run_step(w, w->trail[i], NULL, diff);
        if (rc == 0) rc = same_keyspace(w, diff);
    }
    seq_end(w);
    return rc;
}

static void print_step(const dstep *s)
{
    emq_json_buf b = {0};
    size_t k;
    if (s->kind == ST_VERB) {
        emq_json_buf_puts(&b, "{\"verb\":\"", 9);
        emq_json_buf_puts(&b, s->v->name, strlen(s->v->name));
        emq_json_buf_puts(&b, "\",\"args\":", 9);
        emq_json_write(&b, s->args, 0);
        printf("  %s,\"now\":%" PRId64 "}\n", b.p, s->now);
    }
    for (k = 0; s->kind == ST_RAW && k < s->raw.ncmd; k++) {
        emq_json *a = raw_args(&s->raw, k);
        emq_json_buf_free(&b);
        emq_json_buf_puts(&b, "{\"verb\":\"raw\",\"args\":", 21);
        if (a) emq_json_write(&b, a, 0);
        emq_json_free(a);
        printf("  %s,\"now\":%" PRId64 "}%s\n", b.p, s->now,
               !s->raw.row || k > 0 ? ""
               : s->raw.ncmd > 1 ? " (this and the next: only when the "
                                   "row exists)"
                                 : " (only when the row exists)");
    }
    emq_json_buf_free(&b);
}

/* Shrink the failing trail: drop chunks of steps (halving the chunk)
 * while the rest still differs; print what is left and how it differs. */
static void shrink(world *w, int64_t start)
{
    size_t n = w->ntrail, chunk, i, j, left;
    char *keep = malloc(n ? n : 1), *trial = malloc(n ? n : 1);
    emq_json_buf diff = {0};
    long runs = 0;
    double t0 = mono_s();
    if (!keep || !trial) goto done;
    memset(keep, 1, n);
    for (chunk = n / 2 ? n / 2 : 1; chunk >= 1; chunk /= 2) {
        int changed = 1;
        while (changed) {
            changed = 0;
            for (i = 0; i < n; i += chunk) {
                size_t dropped = 0;
                memcpy(trial, keep, n);
                for (j = i; j < i + chunk && j < n; j++) {
                    dropped += trial[j];
                    trial[j] = 0;
                }
                if (dropped == 0) continue;
                emq_json_buf_free(&diff);
                runs++;
                if (replay(w, trial, start, &diff) == 1) {
                    memcpy(keep, trial, n);
                    changed = 1;
                }
            }
        }
        if (chunk == 1) break;
    }
    emq_json_buf_free(&diff);
    if (replay(w, keep, start, &diff) != 1) {
        printf("shrink: the shrunk sequence no longer differs (%s); the "
               "whole one stands\n", diff.p ? diff.p : "");
        memset(keep, 1, n);
    }
    for (i = 0, left = 0; i < n; i++) left += keep[i] != 0;
    printf("minimal sequence (%zu of %zu steps, %ld replays, %.1f s):\n",
           left, n, runs, mono_s() - t0);
    for (i = 0; i < n; i++)
        if (keep[i]) print_step(w->trail[i]);
    emq_json_buf_free(&diff);
    replay(w, keep, start, &diff);
    printf("  differs: %s\n", diff.p ? diff.p : "");
done:
    emq_json_buf_free(&diff);
    free(keep);
    free(trial);
}

/* ------------------------------------------------------------ --replay */

/* Decode every {"b64": s} inside `v` in place. 0, or -1. */
static int decode_all(emq_json *v, char *err, size_t errlen)
{
    static const char *const b64[] = {"b64", NULL};
    size_t i;
    if (emq_json_has_exactly(v, b64))
        return emq_golden_decode_bytes(v, err, errlen);
    for (i = 0; v->type == EMQ_JSON_ARRAY && i < v->n; i++)
        if (decode_all(v->items[i], err, errlen) != 0) return -1;
    for (i = 0; v->type == EMQ_JSON_OBJECT && i < v->n; i++)
        if (decode_all(v->members[i].val, err, errlen) != 0) return -1;
    return 0;
}

/* A recorded step from one line {"case", "verb", "args", "now"}: a verb
 * of both sides, or "raw" with args.command (one command of at most 5
 * words of at most 63 bytes, run as it is). NULL with `err` filled, and
 * *missing = 1 when the verb is one a side lacks. */
static dstep *line_step(world *w, emq_json *line, int *missing, char *err,
                        size_t errlen)
{
    const emq_json *verb = emq_json_get(line, "verb");
    const emq_json *now = emq_json_get(line, "now");
    emq_json *args = emq_json_get(line, "args");
    const emq_json *cmd = emq_json_get(args, "command");
    dstep *s;
    size_t i;
    if (!verb || verb->type != EMQ_JSON_STRING || !now ||
        now->type != EMQ_JSON_INT || !args ||
        args->type != EMQ_JSON_OBJECT || decode_all(args, err, errlen)) {
        if (!err[0]) snprintf(err, errlen, "a step needs verb, args, now");
        return NULL;
    }
    if (strcmp(verb->s, "raw") == 0 &&
        (!cmd || cmd->type != EMQ_JSON_ARRAY || cmd->n < 2 || cmd->n > 5)) {
        snprintf(err, errlen, "raw: args.command is 2 to 5 words");
        return NULL;
    }
    if (strcmp(verb->s, "raw") != 0 && (!emq_verb_find(verb->s) ||
                                        !bundle_has(verb->s))) {
        snprintf(err, errlen, "verb %s is not in %s", verb->s,
                 emq_verb_find(verb->s) ? "the bundle's executor"
                                        : "the registry");
        *missing = 1;
        return NULL;
    }
    if (!(s = trail_add(w))) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->now = now->i;
    if (strcmp(verb->s, "raw") != 0) {
        s->kind = ST_VERB;
        s->v = emq_verb_find(verb->s);
        s->args = emq_json_dup(args);
        return s->args ? s : NULL;
    }
    s->kind = ST_RAW;
    s->raw.ncmd = 1;
    s->raw.argc[0] = cmd->n;
    for (i = 0; i < cmd->n; i++) {
        const emq_json *word = cmd->items[i];
        if (word->type != EMQ_JSON_STRING ||
            word->len >= sizeof s->raw.buf[0][0]) {
            snprintf(err, errlen, "raw: a command word is not a string of "
                     "at most 63 bytes");
            return NULL;
        }
        memcpy(s->raw.buf[0][i], word->s, word->len + 1);
        s->raw.argv[0][i] = s->raw.buf[0][i];
    }
    return s;
}

/*
 * --replay FILE: run the recorded sequences of FILE (JSON lines as the
 * shrinker prints them, each with a "case" name; a case's lines are
 * contiguous, each case starts from empty sides) and compare as a random
 * sequence is compared. A case naming a verb one side lacks (a tier not
 * merged yet) is reported SKIP. Returns the exit status.
 */
static int replay_file(world *w, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, cur[128] = "", err[300], why[300] = "";
    size_t cap = 0;
    ssize_t n;
    long cases = 0, bad = 0, skipped = 0, lineno = 0;
    int rc = 0, skip = 0;
    if (!f) {
        fprintf(stderr, "lua_diff: cannot open %s\n", path);
        return 2;
    }
    for (;;) {
        emq_json *j = NULL;
        const emq_json *name = NULL;
        n = getline(&line, &cap, f);
        lineno += n >= 0;
        if (n >= 0 && (line[0] == '#' || line[0] == '\n')) continue;
        err[0] = 0;
        if (n >= 0 && (emq_json_parse(line, (size_t)n, &j, NULL) != 0 ||
                       !(name = emq_json_get(j, "case")) ||
                       name->type != EMQ_JSON_STRING)) {
            fprintf(stderr, "lua_diff: %s:%ld: not a step line\n", path,
                    lineno);
            emq_json_free(j);
            rc = 2;
            break;
        }
        if (cur[0] && skip && (n < 0 || strcmp(name->s, cur) != 0)) {
            printf("SKIP %s: %s\n", cur, why);
            skipped++;
            trail_clear(w);
            cur[0] = 0;
            skip = 0;
        }
        if (cur[0] && (n < 0 || strcmp(name->s, cur) != 0)) {
            char *keep = malloc(w->ntrail);
            emq_json_buf diff = {0};
            int r = -1;
            if (keep) {
                memset(keep, 1, w->ntrail);
                r = replay(w, keep, w->trail[0]->now, &diff);
            }
            cases++;
            bad += r != 0;
            printf("%s %s%s%s\n", r == 0 ? "PASS" : "FAIL", cur,
                   r ? ": " : "", r && diff.p ? diff.p : "");
            if (r < 0) rc = 2;
            emq_json_buf_free(&diff);
            free(keep);
            trail_clear(w);
            cur[0] = 0;
        }
        if (n < 0) break;
        snprintf(cur, sizeof cur, "%s", name->s);
        if (skip) {
            emq_json_free(j);
            continue;
        }
        if (!line_step(w, j, &skip, err, sizeof err) && !skip) {
            fprintf(stderr, "lua_diff: %s:%ld: %s\n", path, lineno, err);
            emq_json_free(j);
            rc = 2;
            break;
        }
        if (skip) snprintf(why, sizeof why, "%s", err);
        emq_json_free(j);
    }
    free(line);
    fclose(f);
    trail_clear(w);
    printf("replay: %ld cases, %ld differ", cases, bad);
    if (skipped) printf(", %ld skipped", skipped);
    printf("\n");
    return rc ? rc : bad ? 1 : 0;
}

/* ------------------------------------------------------------ the run */

/* One sequence: 0 identical, 1 differed (printed), -1 harness error. */
static int sequence(world *w, int seed, long steps, long every, int minimize)
{
    int64_t start = INT64_C(1767225600000) + (int64_t)seed * 1000;
    emq_json_buf diff = {0};
    long i;
    int rc = 0, oom;
    trail_clear(w);
    vgen_src_seed(&w->src, UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)seed);
    if (seq_begin(w, start, &diff) != 0) {
        printf("seed %d: %s\n", seed, diff.p ? diff.p : "reset failed");
        emq_json_buf_free(&diff);
        return -1;
    }
    for (i = 1; i <= steps && rc == 0; i++) {
        dstep *s = next_step(w, &oom);
        verb *vb = NULL;
        if (oom) {
            rc = -1;
            emq_json_buf_puts(&diff, "out of memory", 13);
            break;
        }
        if (s) {
            if (s->kind == ST_VERB) vb = covered(w, s->v->name);
            if (s->kind == ST_RAW) {
                int applied = 0;
                rc = run_raw(w, s, &applied, &diff);
                w->raws_skipped += !applied;
            } else {
                rc = run_verb(w, s, vb ? &vb->t : NULL, &diff);
            }
        }
        if (rc == 0 && (i % every == 0 || i == steps))
            rc = same_keyspace(w, &diff);
    }
    seq_end(w);
    if (rc != 0) {
        printf("seed %d: step %ld: %s\n", seed, i - 1,
               diff.p ? diff.p : "(no message)");
        if (w->ntrail) {
            printf("  the step: ");
            print_step(w->trail[w->ntrail - 1]);
        }
        if (rc > 0 && minimize) shrink(w, start);
    } else if (w->verbose) {
        printf("seed %d: %ld steps identical\n", seed, steps);
    }
    emq_json_buf_free(&diff);
    return rc;
}

static long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : dflt;
}

static void report(const world *w)
{
    size_t i, k;
    printf("covered (%zu verbs; calls, then emqlite's replies by class):\n",
           w->nverbs);
    for (i = 0; i < w->nverbs; i++) {
        const tally *t = &w->verbs[i].t;
        printf("  %s %ld:", w->verbs[i].v->name, t->calls - t->unshaped);
        for (k = 0; k < t->nclass; k++)
            printf(" %s x%ld", t->cls[k], t->count[k]);
        if (t->unshaped) printf(" (%ld calls with no trace shape)",
                                t->unshaped);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    const char *port_s = getenv("EMQ_REDIS_PORT");
    const char *lua = getenv("EMQ_LUA_DIR");
    int longrun = env_long("EMQ_DIFF_LONG", 0) != 0;
    long seeds = env_long("EMQ_DIFF_SEEDS", longrun ? 64 : 8);
    long steps = env_long("EMQ_DIFF_STEPS", 2000);
    long every = env_long("EMQ_DIFF_EVERY", 1), first = 1, fails = 0;
    int minimize = env_long("EMQ_DIFF_SHRINK", 1) != 0, errors = 0, i;
    const char *replay_path = NULL;
    world w;
    char err[700];
    double t0;
    memset(&w, 0, sizeof w);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port_s = argv[++i];
        else if (strcmp(argv[i], "--lua") == 0 && i + 1 < argc)
            lua = argv[++i];
        else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            seeds = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--first") == 0 && i + 1 < argc)
            first = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            steps = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc)
            every = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--verbose") == 0)
            w.verbose = 1;
        else if (strcmp(argv[i], "--replay") == 0 && i + 1 < argc)
            replay_path = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--port N] [--lua DIR] [--seeds N] "
                    "[--first S] [--steps N] [--every K] [--verbose] "
                    "[--replay FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!port_s) {
        fprintf(stderr, "lua_diff: no --port and no EMQ_REDIS_PORT\n");
        return 2;
    }
    if (seeds < 1 || steps < 1 || every < 1) {
        fprintf(stderr, "lua_diff: seeds, steps and every must be >= 1\n");
        return 2;
    }
    if (!(w.x = emq_rx_open("127.0.0.1", atoi(port_s), lua ? lua
                            : "tests/lua", err, sizeof err))) {
        fprintf(stderr, "lua_diff: %s\n", err);
        return 2;
    }
    if (emq_golden_emq_exec(&w.ex) != 0 || pick_verbs(&w) < 1) {
        fprintf(stderr, "lua_diff: out of memory or no verb to run\n");
        emq_rx_close(w.x);
        return 2;
    }
    w.gen.attempts = attempts_of;
    w.gen.actx = &w;
    if (replay_path) {
        int rc = replay_file(&w, replay_path);
        free(w.trail);
        free(w.verbs);
        emq_golden_emq_exec_free(&w.ex);
        emq_rx_close(w.x);
        return rc;
    }
    t0 = mono_s();
    for (i = 0; i < seeds; i++) {
        int rc = sequence(&w, (int)(first + i), steps, every,
                          minimize && fails < 3);
        fails += rc > 0;
        errors += rc < 0;
    }
    report(&w);
    printf("sequences: %ld x %ld steps (seeds %ld..%ld): %ld verb calls, "
           "%ld raw writes (%ld skipped: no row), %ld advances; keyspaces "
           "compared %ld times (every %ld steps and at the end)\n", seeds,
           steps, first, first + seeds - 1, w.calls, w.raws, w.raws_skipped,
           w.advances, w.ks_compares, every);
    printf("time: %.1f s\n", mono_s() - t0);
    printf("differential: %ld steps, %ld failures%s\n", seeds * steps, fails,
           errors ? ", harness errors" : "");
    trail_clear(&w);
    free(w.trail);
    free(w.verbs);
    emq_golden_emq_exec_free(&w.ex);
    emq_rx_close(w.x);
    return errors ? 2 : fails ? 1 : 0;
}
