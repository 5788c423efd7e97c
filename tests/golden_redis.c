/*
 * golden_redis.c — replay golden traces through the project's Lua bundle
 * (tests/lua/) on a real redis-server or valkey-server.
 *
 *   tests/golden_redis [--host H] [--port N] [--lua DIR] [replay options] FILE...
 *   tests/golden_redis --isolated [--quiet] [--port N] [--lua DIR] FILE...
 *
 * The port defaults to $EMQ_REDIS_PORT, the bundle directory to $EMQ_LUA_DIR
 * (else "tests/lua"); the replay options are those of emq_golden_main
 * (--quiet, --case NAME, --stop). The server must be private to the test:
 * every case starts with FLUSHALL.
 *
 * Owns: the Valkey executor of golden_redis.h. Every verb of the five tier
 * files is one row of the verb table (`verbs[]` below): its wire name, and
 * either a script of the bundle with the builder of its KEYS and ARGV and
 * the shaper of its reply, or a host handler that issues the plain store
 * commands the reference's host issues. Scripted rows that the reference
 * gates host-side (the claims' queue-wide pause, complete's and retry's
 * LINK read, counts' name gate) do so in the builder or by a row flag.
 * Every script call carries the step's `now` as its trailing clock
 * override (tests/lua/README.md).
 *
 * Time. Scripts take the virtual clock as their override; the server's own
 * clock still stamps what no script computes: key expiries (SET ... PX,
 * PEXPIRE), stream delivery times (XREADGROUP, XAUTOCLAIM) and the idle and
 * remaining-TTL readings derived from them. The executor keeps, per step,
 * the server-time window [t0, t1] (TIME before and after) in which the step
 * ran, with the step's virtual now; a later step with another virtual now
 * starts only once the server clock has left the previous window, so a
 * server instant maps to at most one virtual instant. A stream delivery time
 * is reported as the virtual now of the window holding it; an expiry as the
 * virtual now of the step that set it plus its TTL, once checked to lie in
 * that step's window plus the TTL; idle times and remaining TTLs are
 * recomputed from those. An advance lets real time pass too (beyond the
 * traces' 50 ms short window) when the case has used a stream, so the
 * server's min-idle comparisons agree with the virtual ones. A server time
 * that maps to no window is reported raw, and so shows as a difference.
 *
 * Engines. The traces were recorded on Valkey 8.0.1. One difference of an
 * older engine is bridged, openly: before Redis 7.2 an XREADGROUP `>` that
 * delivers nothing and an XAUTOCLAIM that claims nothing create no consumer
 * (consumer_compat); the program reports how many steps needed it.
 */
#include "golden_redis.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <hiredis/hiredis.h>

#include "luabundle.h"

/* Every script of the bundle: enum name and file name. */
#define SCRIPTS(X)                                                        \
    X(ENQUEUE, enqueue) X(SCHEDULE, schedule) X(CLAIM, claim)             \
    X(COMPLETE, complete) X(RETRY, retry) X(PROMOTE, promote)             \
    X(REAP, reap) X(EXTEND_LOCK, extend_lock)                             \
    X(EXTEND_LOCKS, extend_locks) X(SET_PAUSED, set_paused)               \
    X(CLEAR_PAUSED, clear_paused) X(DRAIN, drain)                         \
    X(OBLITERATE, obliterate) X(COUNTS, counts)                           \
    X(GET_JOB_STATE, get_job_state) X(UPDATE_DATA, update_data)           \
    X(UPDATE_PROGRESS, update_progress) X(ADD_LOG, add_log)               \
    X(REMOVE_JOB, remove_job) X(REPROCESS_JOB, reprocess_job)             \
    X(CLAIM_BATCH, claim_batch) X(DELAY, delay) X(IS_MAXED, is_maxed)     \
    X(GET_RATE_LIMIT_TTL, get_rate_limit_ttl)                             \
    X(LANE_ENQUEUE, lane_enqueue) X(LANE_CLAIM, lane_claim)               \
    X(WCLAIM, wclaim) X(BCLAIM, bclaim) X(WEIGHT, weight)                 \
    X(LANE_PAUSE, lane_pause) X(LANE_RESUME, lane_resume)                 \
    X(LIMIT, limit) X(REASSIGN, reassign) X(LANE_DRAIN, lane_drain)       \
    X(REAP_GROUP, reap_group) X(LANE_DEPTHS, lane_depths)                 \
    X(ENQUEUE_FLOW, enqueue_flow) X(HOLD_PARENT, hold_parent)             \
    X(FLOW_CHILD, flow_child) X(FLOW_DELIVER, flow_deliver)               \
    X(FLOW_FAIL_DELIVER, flow_fail_deliver)                               \
    X(REPEAT_REGISTER, repeat_register) X(REPEAT_CANCEL, repeat_cancel)   \
    X(REPEAT_ADVANCE, repeat_advance) X(STALLED_CHECK, stalled_check)

#define S_ENUM(e, f) S_##e,
#define S_NAME(e, f) #f,
enum { SCRIPTS(S_ENUM) S_N, HOST = -1 };
static const char *const script_names[S_N] = {SCRIPTS(S_NAME)};

/* A server-time window in which a step ran, with its virtual now. */
typedef struct win {
    int64_t t0, t1, v;
} win;

/* A key given an expiry by a step: set in window [t0, t1] at virtual v. */
typedef struct ttlrec {
    char *key;
    size_t klen;
    int64_t t0, t1, v, ttl;
} ttlrec;

struct emq_rx {
    redisContext *c;     /* commands                                   */
    redisContext *sub;   /* PSUBSCRIBE emq:{*}:events                  */
    char sha[S_N][41];
    win *wins;
    size_t nwins, capwins;
    ttlrec *ttls;
    size_t nttls, capttls;
    int64_t last_t1, last_v;
    int have_last;
    int streams;         /* the case has used a stream (see "Time")    */
    int old_consumers;   /* the engine predates Redis 7.2's eager consumer
                          * creation (see consumer_compat)               */
    long compat_steps;   /* steps consumer_compat completed             */
    uint64_t cell;       /* the host's mint cell (ts << 12 | seq), per case */
};

static void say(emq_json_buf *b, const char *fmt, ...)
{
    char tmp[700];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        emq_json_buf_puts(b, tmp, (size_t)n < sizeof tmp ? (size_t)n
                                                         : sizeof tmp - 1);
}

/* -------------------------------------------------- argument vectors */

/* A command under construction: views into the step's args, plus owned
 * copies of what the builder formats. Growth failure sets `oom`. */
typedef struct argv_t {
    const char **v;
    size_t *n;
    size_t argc, cap;
    char **own;
    size_t nown, capown;
    int oom;
} argv_t;

static void av_free(argv_t *a)
{
    for (size_t i = 0; i < a->nown; i++)
        free(a->own[i]);
    free(a->own);
    free(a->v);
    free(a->n);
    memset(a, 0, sizeof *a);
}

static void push(argv_t *a, const void *p, size_t n)
{
    if (a->argc == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 32;
        const char **v = realloc(a->v, cap * sizeof *v);
        if (v)
            a->v = v;
        size_t *nn = v ? realloc(a->n, cap * sizeof *nn) : NULL;
        if (!v || !nn) {
            a->oom = 1;
            return;
        }
        a->n = nn;
        a->cap = cap;
    }
    a->v[a->argc] = p;
    a->n[a->argc] = n;
    a->argc++;
}

/* An owned copy of p[0..n). */
static void push_own(argv_t *a, const void *p, size_t n)
{
    char *c = malloc(n + 1);
    if (c && a->nown == a->capown) {
        size_t cap = a->capown ? 2 * a->capown : 16;
        char **o = realloc(a->own, cap * sizeof *o);
        if (!o) {
            free(c);
            c = NULL;
        } else {
            a->own = o;
            a->capown = cap;
        }
    }
    if (!c) {
        a->oom = 1;
        return;
    }
    memcpy(c, p, n);
    c[n] = '\0';
    a->own[a->nown++] = c;
    push(a, c, n);
}

static void pushf(argv_t *a, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        a->oom = 1;
        return;
    }
    push_own(a, tmp, (size_t)n);
}

static void push_s(argv_t *a, const char *s)
{
    push(a, s, strlen(s));
}

static void push_i(argv_t *a, int64_t v)
{
    pushf(a, "%lld", (long long)v);
}

/* ------------------------------------------------------------ replies */

static emq_json *to_json(const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        return emq_json_new_int(r->integer);
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
        return emq_json_new_str(r->str, r->len);
    case REDIS_REPLY_NIL:
        return emq_json_new_null();
    case REDIS_REPLY_ERROR:
        return emq_golden_error_reply(r->str, r->len);
    case REDIS_REPLY_ARRAY: {
        emq_json *arr = emq_json_new_array();
        for (size_t i = 0; arr && i < r->elements; i++) {
            emq_json *e = to_json(r->element[i]);
            if (!e || emq_json_push(arr, e) != 0) {
                emq_json_free(arr);
                return NULL;
            }
        }
        return arr;
    }
    default:
        return NULL;
    }
}

/* {"map": obj}; `obj` is owned (freed on failure). */
static emq_json *as_map(emq_json *obj)
{
    emq_json *m = obj ? emq_json_new_object() : NULL;
    if (!m || emq_json_set(m, "map", 3, obj) != 0) {
        if (!m)
            emq_json_free(obj);
        emq_json_free(m);
        return NULL;
    }
    return m;
}

/* {"refused": text}. */
static emq_json *refused(const char *text)
{
    emq_json *o = emq_json_new_object();
    if (o && emq_json_set(o, "refused", 7,
                          emq_json_new_str(text, strlen(text))) != 0) {
        emq_json_free(o);
        return NULL;
    }
    return o;
}

/* A flat [k, v, k, v...] string reply as an object (first value wins). */
static emq_json *pairs_obj(const redisReply *r, size_t from)
{
    emq_json *o = emq_json_new_object();
    for (size_t i = from; o && i + 1 < r->elements; i += 2) {
        const redisReply *k = r->element[i], *v = r->element[i + 1];
        int dup = 0;
        for (size_t j = 0; j < o->n && !dup; j++)
            dup = o->members[j].klen == k->len &&
                  memcmp(o->members[j].key, k->str, k->len) == 0;
        if (!dup && emq_json_set(o, k->str, k->len,
                                 emq_json_new_str(v->str, v->len)) != 0) {
            emq_json_free(o);
            return NULL;
        }
    }
    return o;
}

/* The integer a string or integer reply holds; `dflt` for nil. */
static long long int_of(const redisReply *r, long long dflt)
{
    if (r->type == REDIS_REPLY_INTEGER)
        return r->integer;
    if (r->type == REDIS_REPLY_STRING)
        return strtoll(r->str, NULL, 10);
    return dflt;
}

/* ------------------------------------------------------------ the clock */

static int srv_ms(emq_rx *x, int64_t *ms)
{
    redisReply *r = redisCommand(x->c, "TIME");
    int ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2;
    if (ok)
        *ms = strtoll(r->element[0]->str, NULL, 10) * 1000 +
              strtoll(r->element[1]->str, NULL, 10) / 1000;
    if (r)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

static void nap_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Wait until the server clock reads at least `ms`. */
static int srv_wait_until(emq_rx *x, int64_t ms, int64_t *now)
{
    for (;;) {
        if (srv_ms(x, now) != 0)
            return -1;
        if (*now >= ms)
            return 0;
        nap_us(*now + 2 < ms ? 1000 * (long)(ms - *now - 1) : 200);
    }
}

static int win_add(emq_rx *x, int64_t t0, int64_t t1, int64_t v)
{
    if (x->nwins == x->capwins) {
        size_t cap = x->capwins ? 2 * x->capwins : 64;
        win *w = realloc(x->wins, cap * sizeof *w);
        if (!w)
            return -1;
        x->wins = w;
        x->capwins = cap;
    }
    x->wins[x->nwins++] = (win){t0, t1, v};
    return 0;
}

/* The virtual instant of server instant `d`: 1 with *v set, or 0. */
static int vmap(const emq_rx *x, int64_t d, int64_t *v)
{
    for (size_t i = x->nwins; i-- > 0;)
        if (x->wins[i].t0 <= d && d <= x->wins[i].t1) {
            *v = x->wins[i].v;
            return 1;
        }
    return 0;
}

static const ttlrec *ttl_find(const emq_rx *x, const char *k, size_t kn)
{
    for (size_t i = 0; i < x->nttls; i++)
        if (x->ttls[i].klen == kn && memcmp(x->ttls[i].key, k, kn) == 0)
            return &x->ttls[i];
    return NULL;
}

static int ttl_set(emq_rx *x, const char *k, size_t kn, int64_t t0,
                   int64_t t1, int64_t v, int64_t ttl)
{
    ttlrec *r = (ttlrec *)ttl_find(x, k, kn);
    if (!r) {
        if (x->nttls == x->capttls) {
            size_t cap = x->capttls ? 2 * x->capttls : 16;
            ttlrec *t = realloc(x->ttls, cap * sizeof *t);
            if (!t)
                return -1;
            x->ttls = t;
            x->capttls = cap;
        }
        char *key = malloc(kn + 1);
        if (!key)
            return -1;
        memcpy(key, k, kn);
        key[kn] = '\0';
        r = &x->ttls[x->nttls++];
        r->key = key;
        r->klen = kn;
    }
    r->t0 = t0;
    r->t1 = t1;
    r->v = v;
    r->ttl = ttl;
    return 0;
}

/* The virtual expiry of key k whose server expiry lies in [e0, e1]: 1 with
 * *out set when the step that set it accounts for it, else 0. */
static int ttl_virtual(const emq_rx *x, const char *k, size_t kn, int64_t e0,
                       int64_t e1, int64_t *out)
{
    const ttlrec *r = ttl_find(x, k, kn);
    if (!r || e1 < r->t0 + r->ttl || e0 > r->t1 + r->ttl)
        return 0;
    *out = r->v + r->ttl;
    return 1;
}

static void records_clear(emq_rx *x)
{
    for (size_t i = 0; i < x->nttls; i++)
        free(x->ttls[i].key);
    x->nttls = 0;
    x->nwins = 0;
    x->have_last = 0;
    x->streams = 0;
}

/* -------------------------------------------------------- a step's state */

typedef struct sc {
    emq_rx *x;
    const emq_json *args;
    int64_t now;
    emq_golden_result *res;
    emq_json_buf *err;
    argv_t a;
    size_t nkeys;
    int bad;                 /* an argument was missing; err says which */
    const char *q;           /* args.q (or cq), NUL-terminated          */
    int64_t t0;              /* server ms when the step started         */
    argv_t ttl;              /* [key, ttl]: an expiry this step wrote   */
    char link_p[256];        /* LINK(id): the parent, or ""             */
    char link_pq[256];       /* its queue when cross-queue, or ""       */
    int part;                /* a part of a multi-part verb (see rx_run) */
} sc;

static void bad_arg(sc *k, const char *name, const char *what)
{
    if (!k->bad)
        say(k->err, "argument \"%s\" missing or not %s", name, what);
    k->bad = 1;
}

static const emq_json *arg_t(sc *k, const char *name, emq_json_type t,
                             const char *what)
{
    const emq_json *v = emq_json_get(k->args, name);
    if (!v || v->type != t) {
        bad_arg(k, name, what);
        return NULL;
    }
    return v;
}

/* A byte-string argument; `*n` gets its length (it may hold NUL). */
static const char *arg_s(sc *k, const char *name, size_t *n)
{
    const emq_json *v = arg_t(k, name, EMQ_JSON_STRING, "a string");
    if (n)
        *n = v ? v->len : 0;
    return v ? v->s : "";
}

static int64_t arg_i(sc *k, const char *name)
{
    const emq_json *v = arg_t(k, name, EMQ_JSON_INT, "an integer");
    return v ? v->i : 0;
}

static int arg_b(sc *k, const char *name)
{
    const emq_json *v = emq_json_get(k->args, name);
    if (!v || (v->type != EMQ_JSON_TRUE && v->type != EMQ_JSON_FALSE)) {
        bad_arg(k, name, "a boolean");
        return 0;
    }
    return v->type == EMQ_JSON_TRUE;
}

/* An optional argument: absent or null takes the protocol's default (the
 * traces always give these; a differential caller may leave them out, as
 * emqlite's registry allows). */
static int absent(sc *k, const char *name)
{
    const emq_json *v = emq_json_get(k->args, name);
    return !v || v->type == EMQ_JSON_NULL;
}

static int arg_b_or(sc *k, const char *name, int dflt)
{
    return absent(k, name) ? dflt : arg_b(k, name);
}

static int64_t arg_i_or(sc *k, const char *name, int64_t dflt)
{
    return absent(k, name) ? dflt : arg_i(k, name);
}

static const emq_json *arg_a(sc *k, const char *name)
{
    return arg_t(k, name, EMQ_JSON_ARRAY, "an array");
}

/* A string or null argument: NULL for null (or absent). */
static const emq_json *arg_sn(sc *k, const char *name)
{
    const emq_json *v = emq_json_get(k->args, name);
    if (!v || v->type == EMQ_JSON_NULL)
        return NULL;
    if (v->type != EMQ_JSON_STRING) {
        bad_arg(k, name, "a string or null");
        return NULL;
    }
    return v;
}

/* Push the string argument `name` as it is. */
static void push_arg(sc *k, const char *name)
{
    size_t n;
    const char *p = arg_s(k, name, &n);
    push(&k->a, p, n);
}

/* Push a per-queue key B(q) + the formatted suffix. */
static void push_key(sc *k, const char *q, const char *fmt, ...)
{
    char sfx[900];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(sfx, sizeof sfx, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof sfx) {
        k->a.oom = 1;
        return;
    }
    pushf(&k->a, "emq:{%s}:%s", q, sfx);
}

/* J(id) of the step's queue, id from args.`name`. */
static void push_job(sc *k, const char *name, const char *sub)
{
    const char *id = arg_s(k, name, NULL);
    push_key(k, k->q, "job:%s%s%s", id, sub[0] ? ":" : "", sub);
}

/* Mark the end of KEYS: what was pushed after EVALSHA sha numkeys. */
static void keys_done(sc *k)
{
    k->nkeys = k->a.argc - 3;
}

/* -------------------------------------------------- talking to the server */

/* Send k->a as a plain command; the reply, or NULL with err filled. */
static redisReply *call(sc *k)
{
    if (k->a.oom) {
        say(k->err, "%s", "out of memory building a command");
        return NULL;
    }
    redisReply *r = redisCommandArgv(k->x->c, (int)k->a.argc, k->a.v, k->a.n);
    if (!r)
        say(k->err, "redis: %s", k->x->c->errstr);
    return r;
}

/* Start a fresh plain command in k->a. */
static void cmd(sc *k, const char *verb)
{
    av_free(&k->a);
    push_s(&k->a, verb);
}

/* Run k->a and answer its reply as the trace writes it (to_json). */
static int call_reply(sc *k)
{
    redisReply *r = call(k);
    if (!r)
        return -1;
    k->res->reply = to_json(r);
    freeReplyObject(r);
    return k->res->reply ? 0 : -1;
}

/* A command from a format (no binary arguments); the reply or NULL. */
static redisReply *cmdf(sc *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(k->x->c, fmt, ap);
    va_end(ap);
    if (!r)
        say(k->err, "redis: %s", k->x->c->errstr);
    return r;
}

/* Remember that this step gave `key` an expiry of `ttl` ms; emq_rx_run
 * records it with the step's window once the step is done. */
static void note_ttl(sc *k, const char *key, size_t kn, int64_t ttl)
{
    av_free(&k->ttl);
    push_own(&k->ttl, key, kn);
    push_i(&k->ttl, ttl);
}

/* -------------------------------------------------------- scripted verbs */

/*
 * Builders push KEYS (then call keys_done) and ARGV after the three leading
 * slots EVALSHA, sha, numkeys; the runner appends the clock override. A
 * builder may answer the step itself (a host gate) by setting
 * k->res->reply; the script then does not run.
 */

static void b_enqueue(sc *k)
{
    push_job(k, "id", "");
    push_key(k, k->q, "pending");
    keys_done(k);
    push_arg(k, "id");
    push_arg(k, "payload");
}

static void b_schedule(sc *k, int at)
{
    push_job(k, "id", "");
    push_key(k, k->q, "schedule");
    keys_done(k);
    push_arg(k, "id");
    push_arg(k, "payload");
    push_s(&k->a, at ? "at" : "in");
    push_i(&k->a, arg_i(k, at ? "run_at_ms" : "delay_ms"));
}

static void b_enqueue_at(sc *k)
{
    b_schedule(k, 1);
}

static void b_enqueue_in(sc *k)
{
    b_schedule(k, 0);
}

static void b_claim(sc *k)
{
    push_key(k, k->q, "pending");
    push_key(k, k->q, "active");
    keys_done(k);
    push_key(k, k->q, "job:");
    push_i(&k->a, arg_i(k, "lease_ms"));
}

static void b_claim_batch(sc *k)
{
    b_claim(k);
    push_i(&k->a, arg_i(k, "size"));
}

static int branded(const char *p, size_t n, uint64_t *snow);

#define GATE_ID_TEXT "job_key requires a valid branded id"

/*
 * LINK(id) as the reference's host reads it before complete and retry:
 * fields parent, parent_queue, parent_policy of J(id). *p gets the parent
 * ("" for none), *pq the parent's queue when the link is cross-queue (else
 * ""), *pid 1 when parent_policy is exactly "id"; both buffers hold 256
 * bytes. Returns 0; 1 when the link is same-queue and its parent fails
 * GATE-ID (PROTOCOL.md §6.0 LINK: the host refuses before the script);
 * -1 with err filled when the read failed.
 */
static int read_link(sc *k, char *p, char *pq, int *pid)
{
    const char *id = arg_s(k, "id", NULL);
    p[0] = pq[0] = '\0';
    *pid = 0;
    redisReply *r = cmdf(k, "HMGET emq:{%s}:job:%s parent parent_queue "
                         "parent_policy", k->q, id);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        if (r) {
            say(k->err, "HMGET: %s", r->str ? r->str : "?");
            freeReplyObject(r);
        }
        return -1;
    }
    const redisReply *par = r->element[0], *prq = r->element[1],
                     *pol = r->element[2];
    uint64_t snow;
    if (par->type == REDIS_REPLY_STRING &&
        !(prq->type == REDIS_REPLY_STRING &&
          (prq->len != strlen(k->q) || memcmp(prq->str, k->q, prq->len))) &&
        !branded(par->str, par->len, &snow)) {
        freeReplyObject(r);
        return 1;
    }
    if (par->type == REDIS_REPLY_STRING && par->len < 256) {
        memcpy(p, par->str, par->len);
        p[par->len] = '\0';
        if (prq->type == REDIS_REPLY_STRING && prq->len < 256 &&
            (prq->len != strlen(k->q) ||
             memcmp(prq->str, k->q, prq->len) != 0)) {
            memcpy(pq, prq->str, prq->len);
            pq[prq->len] = '\0';
        }
        *pid = pol->type == REDIS_REPLY_STRING && pol->len == 2 &&
               memcmp(pol->str, "id", 2) == 0;
    }
    freeReplyObject(r);
    return 0;
}

static void b_complete(sc *k)
{
    char *link_p = k->link_p, *link_pq = k->link_pq;
    int pid;
    size_t idl;
    const char *id = arg_s(k, "id", &idl);
    const emq_json *result = arg_sn(k, "result");
    int64_t token = arg_i(k, "token");
    int lk = k->bad ? -1 : read_link(k, link_p, link_pq, &pid);
    if (lk != 0) {
        if (lk > 0)
            k->res->reply = refused(GATE_ID_TEXT);
        k->bad = lk < 0;
        return;
    }
    push_key(k, k->q, "active");
    push_job(k, "id", "");
    if (link_p[0] && !link_pq[0]) {
        push_key(k, k->q, "job:%s:dependencies", link_p);
        push_key(k, k->q, "job:%s:processed", link_p);
        push_key(k, k->q, "job:%s", link_p);
    } else if (link_p[0]) {
        push_key(k, k->q, "flow:outbox");
    }
    keys_done(k);
    push(&k->a, id, idl);
    push_i(&k->a, token);
    push_key(k, k->q, "");
    if (link_p[0]) {
        push_s(&k->a, link_p);
        if (result)
            push(&k->a, result->s, result->len);
        else
            push(&k->a, id, idl);
        if (link_pq[0]) {
            push_s(&k->a, "xq");
            push_s(&k->a, link_pq);
        }
    }
}

static void b_retry(sc *k)
{
    char *link_p = k->link_p, *link_pq = k->link_pq;
    int pid;
    size_t idl, el;
    const char *id = arg_s(k, "id", &idl);
    const char *e = arg_s(k, "error", &el);
    int64_t token = arg_i(k, "token"), delay = arg_i(k, "delay_ms"),
            max = arg_i(k, "max_attempts");
    int lk = k->bad ? -1 : read_link(k, link_p, link_pq, &pid);
    if (lk != 0) {
        if (lk > 0)
            k->res->reply = refused(GATE_ID_TEXT);
        k->bad = lk < 0;
        return;
    }
    push_key(k, k->q, "active");
    push_key(k, k->q, "schedule");
    push_key(k, k->q, "dead");
    push_job(k, "id", "");
    if (link_p[0] && !link_pq[0]) {
        push_key(k, k->q, "job:%s:failed", link_p);
        push_key(k, k->q, "job:%s:unsuccessful", link_p);
        push_key(k, k->q, "job:%s:dependencies", link_p);
        push_key(k, k->q, "job:%s", link_p);
    } else if (link_p[0]) {
        push_key(k, k->q, "flow:outbox");
    }
    keys_done(k);
    push(&k->a, id, idl);
    push_i(&k->a, token);
    push_i(&k->a, delay);
    push_i(&k->a, max);
    push(&k->a, e, el);
    push_key(k, k->q, "");
    if (link_p[0] && !link_pq[0]) {
        push_s(&k->a, pid ? "sq:id" : "sq:fp");
        push_s(&k->a, link_p);
    } else if (link_p[0]) {
        push_s(&k->a, pid ? "xq:id" : "xq:fp");
        push_s(&k->a, link_pq);
        push_s(&k->a, link_p);
    }
}

static void b_promote(sc *k)
{
    push_key(k, k->q, "schedule");
    push_key(k, k->q, "pending");
    keys_done(k);
    push_key(k, k->q, "");
    push_i(&k->a, arg_i(k, "batch"));
}

static void b_reap(sc *k)
{
    push_key(k, k->q, "active");
    push_key(k, k->q, "pending");
    keys_done(k);
    push_key(k, k->q, "");
}

static void b_extend_lock(sc *k)
{
    push_key(k, k->q, "active");
    push_job(k, "id", "");
    keys_done(k);
    push_arg(k, "id");
    push_i(&k->a, arg_i(k, "token"));
    push_i(&k->a, arg_i(k, "lease_ms"));
}

static void b_extend_locks(sc *k)
{
    const emq_json *pairs = arg_a(k, "pairs");
    int64_t lease = arg_i(k, "lease_ms");
    push_key(k, k->q, "active");
    keys_done(k);
    push_key(k, k->q, "");
    push_i(&k->a, lease);
    for (size_t i = 0; pairs && i < pairs->n; i++) {
        const emq_json *p = pairs->items[i];
        if (p->type != EMQ_JSON_ARRAY || p->n != 2 ||
            p->items[0]->type != EMQ_JSON_STRING ||
            p->items[1]->type != EMQ_JSON_INT) {
            bad_arg(k, "pairs", "a list of [id, token]");
            return;
        }
        push(&k->a, p->items[0]->s, p->items[0]->len);
        push_i(&k->a, p->items[1]->i);
    }
}

static void b_meta(sc *k)
{
    push_key(k, k->q, "meta");
    keys_done(k);
}

/* ---------------------------------------------------------- Tier 2 */

static void b_drain(sc *k)
{
    int sched = arg_b_or(k, "include_schedule", 0);
    push_key(k, k->q, "");
    push_key(k, k->q, "pending");
    if (sched)
        push_key(k, k->q, "schedule");
    keys_done(k);
}

static void b_obliterate(sc *k)
{
    int force = arg_b_or(k, "force", 0);
    push_key(k, k->q, "meta");
    push_key(k, k->q, "");
    keys_done(k);
    push_s(&k->a, force ? "force" : "");
    push_i(&k->a, arg_i_or(k, "budget", 1000));
}

static const char *const set_names[] = {"pending", "active", "schedule",
                                        "dead", NULL};
static const char *const metric_names[] = {"completed", "failed", NULL};

static int name_in(const emq_json *s, const char *const *set)
{
    for (int i = 0; set[i]; i++)
        if (s->len == strlen(set[i]) && memcmp(s->s, set[i], s->len) == 0)
            return 1;
    return 0;
}

/* counts: the host gate, then KEYS = B(q), the set names' keys in list
 * order; ARGV = the metric names in list order. */
static void b_counts(sc *k)
{
    const emq_json *names = arg_a(k, "names");
    if (!names)
        return;
    for (size_t i = 0; i < names->n; i++) {
        const emq_json *s = names->items[i];
        if (s->type != EMQ_JSON_STRING) {
            bad_arg(k, "names", "a list of strings");
            return;
        }
        if (!name_in(s, set_names) && !name_in(s, metric_names)) {
            char text[300];
            snprintf(text, sizeof text, "unknown_state(%.*s)", (int)s->len,
                     s->s);
            k->res->reply = refused(text);
            return;
        }
    }
    push_key(k, k->q, "");
    for (size_t i = 0; i < names->n; i++)
        if (name_in(names->items[i], set_names))
            push_key(k, k->q, "%s", names->items[i]->s);
    keys_done(k);
    for (size_t i = 0; i < names->n; i++)
        if (name_in(names->items[i], metric_names))
            push(&k->a, names->items[i]->s, names->items[i]->len);
}

/* Pair `names` (those in `set`, in order) with r's elements from *at on. */
static int map_names(emq_json *o, const emq_json *names,
                     const char *const *set, const redisReply *r, size_t *at)
{
    for (size_t i = 0; i < names->n; i++) {
        const emq_json *s = names->items[i];
        if (!name_in(s, set))
            continue;
        if (*at >= r->elements)
            return -1;
        const redisReply *e = r->element[(*at)++];
        if (emq_json_get(o, s->s))
            continue; /* a repeated name: the first stands */
        if (emq_json_set(o, s->s, s->len, emq_json_new_int(int_of(e, 0))))
            return -1;
    }
    return 0;
}

static emq_json *sh_counts(sc *k, const redisReply *r)
{
    const emq_json *names = emq_json_get(k->args, "names");
    emq_json *o = emq_json_new_object();
    size_t at = 0;
    if (r->type != REDIS_REPLY_ARRAY ||
        map_names(o, names, set_names, r, &at) != 0 ||
        map_names(o, names, metric_names, r, &at) != 0) {
        emq_json_free(o);
        return to_json(r);
    }
    return as_map(o);
}

static void b_get_job_state(sc *k)
{
    push_key(k, k->q, "pending");
    push_key(k, k->q, "active");
    push_key(k, k->q, "schedule");
    push_key(k, k->q, "dead");
    push_job(k, "id", "");
    keys_done(k);
    push_arg(k, "id");
}

static void b_update_data(sc *k)
{
    push_job(k, "id", "");
    keys_done(k);
    push_arg(k, "payload");
}

static void b_update_progress(sc *k)
{
    push_job(k, "id", "");
    keys_done(k);
    push_arg(k, "progress");
    push_arg(k, "id");
    push_key(k, k->q, "");
}

static void b_add_log(sc *k)
{
    int64_t keep = arg_i_or(k, "keep", 0);
    push_job(k, "id", "");
    push_job(k, "id", "logs");
    keys_done(k);
    push_arg(k, "line");
    if (keep > 0)
        push_i(&k->a, keep);
    else
        push_s(&k->a, "");
}

static void b_remove_job(sc *k)
{
    const emq_json *did = arg_sn(k, "did");
    push_job(k, "id", "");
    push_key(k, k->q, "pending");
    push_key(k, k->q, "active");
    push_key(k, k->q, "schedule");
    push_key(k, k->q, "dead");
    push_key(k, k->q, "de:%s", did ? did->s : "");
    keys_done(k);
    push_arg(k, "id");
    if (did)
        push(&k->a, did->s, did->len);
    else
        push_s(&k->a, "");
}

static void b_reprocess_job(sc *k)
{
    push_job(k, "id", "");
    push_key(k, k->q, "dead");
    push_key(k, k->q, "pending");
    keys_done(k);
    push_arg(k, "id");
}

static void b_delay(sc *k)
{
    size_t ml = 2;
    const char *mode = absent(k, "mode") ? "in" : arg_s(k, "mode", &ml);
    push_job(k, "id", "");
    push_key(k, k->q, "active");
    push_key(k, k->q, "schedule");
    keys_done(k);
    push_arg(k, "id");
    push_i(&k->a, arg_i(k, "token"));
    push(&k->a, mode, ml);
    push_i(&k->a, arg_i(k, "ms"));
}

static void b_is_maxed(sc *k)
{
    push_key(k, k->q, "meta");
    push_key(k, k->q, "active");
    keys_done(k);
}

static void b_get_rate_limit_ttl(sc *k)
{
    push_key(k, k->q, "limiter");
    push_key(k, k->q, "meta");
    keys_done(k);
    push_i(&k->a, arg_i_or(k, "max_jobs", 0));
}

/* A positive reply is the limiter's remaining TTL by the server's clock;
 * the trace writes it in virtual time: its virtual expiry minus now. */
static emq_json *sh_rate_ttl(sc *k, const redisReply *r)
{
    int64_t t1, e;
    char key[600];
    if (r->type != REDIS_REPLY_INTEGER || r->integer <= 0 ||
        srv_ms(k->x, &t1) != 0)
        return to_json(r);
    int n = snprintf(key, sizeof key, "emq:{%s}:limiter", k->q);
    /* the reading was taken between the step's start and now, so the
     * server's expiry lies in [t0 + r, t1 + r] */
    if (n > 0 && ttl_virtual(k->x, key, (size_t)n, k->t0 + r->integer,
                             t1 + r->integer, &e))
        return emq_json_new_int(e - k->now);
    return to_json(r);
}

/* ---------------------------------------------------------- Tier 3 */

static void b_lane_enqueue(sc *k)
{
    const char *g = arg_s(k, "g", NULL);
    push_job(k, "id", "");
    push_key(k, k->q, "g:%s:pending", g);
    push_key(k, k->q, "ring");
    push_key(k, k->q, "paused");
    push_key(k, k->q, "glimit");
    push_key(k, k->q, "gactive");
    push_key(k, k->q, "wake");
    keys_done(k);
    push_arg(k, "id");
    push_arg(k, "payload");
    push_arg(k, "g");
}

static void b_lane_claim(sc *k)
{
    push_key(k, k->q, "ring");
    push_key(k, k->q, "active");
    keys_done(k);
    push_key(k, k->q, "");
    push_i(&k->a, arg_i(k, "lease_ms"));
}

static void b_weight(sc *k)
{
    push_key(k, k->q, "gweight");
    keys_done(k);
    push_arg(k, "g");
    push_i(&k->a, arg_i(k, "w"));
}

static void b_lane_pause(sc *k)
{
    push_key(k, k->q, "paused");
    push_key(k, k->q, "ring");
    keys_done(k);
    push_arg(k, "g");
}

static void b_lane_resume(sc *k)
{
    push_key(k, k->q, "paused");
    push_key(k, k->q, "ring");
    push_key(k, k->q, "glimit");
    push_key(k, k->q, "gactive");
    push_key(k, k->q, "wake");
    keys_done(k);
    push_key(k, k->q, "");
    push_arg(k, "g");
}

static void b_limit(sc *k)
{
    push_key(k, k->q, "glimit");
    push_key(k, k->q, "gactive");
    push_key(k, k->q, "ring");
    push_key(k, k->q, "paused");
    push_key(k, k->q, "wake");
    keys_done(k);
    push_key(k, k->q, "");
    push_arg(k, "g");
    push_i(&k->a, arg_i(k, "n"));
}

static void b_reassign(sc *k)
{
    const char *dst = arg_s(k, "dst", NULL);
    push_job(k, "id", "");
    push_key(k, k->q, "g:%s:pending", dst);
    push_key(k, k->q, "ring");
    push_key(k, k->q, "paused");
    push_key(k, k->q, "glimit");
    push_key(k, k->q, "gactive");
    push_key(k, k->q, "wake");
    keys_done(k);
    push_arg(k, "id");
    push_arg(k, "dst");
    push_key(k, k->q, "");
}

static void b_lane_drain(sc *k)
{
    const char *g = arg_s(k, "g", NULL);
    push_key(k, k->q, "");
    push_key(k, k->q, "g:%s:pending", g);
    push_key(k, k->q, "ring");
    keys_done(k);
    push_arg(k, "g");
}

static void b_reap_group(sc *k)
{
    push_key(k, k->q, "active");
    push_key(k, k->q, "");
    keys_done(k);
    push_arg(k, "g");
    push_i(&k->a, arg_i_or(k, "limit", 100));
}

static void b_lane_depths(sc *k)
{
    const emq_json *gs = arg_a(k, "groups");
    push_key(k, k->q, "");
    keys_done(k);
    push_key(k, k->q, "");
    for (size_t i = 0; gs && i < gs->n; i++) {
        if (gs->items[i]->type != EMQ_JSON_STRING) {
            bad_arg(k, "groups", "a list of group ids");
            return;
        }
        push(&k->a, gs->items[i]->s, gs->items[i]->len);
    }
}

static emq_json *sh_lane_depths(sc *k, const redisReply *r)
{
    const emq_json *gs = emq_json_get(k->args, "groups");
    emq_json *o = emq_json_new_object();
    if (r->type != REDIS_REPLY_ARRAY || r->elements != gs->n) {
        emq_json_free(o);
        return to_json(r);
    }
    for (size_t i = 0; o && i < gs->n; i++) {
        if (emq_json_get(o, gs->items[i]->s))
            continue;
        if (emq_json_set(o, gs->items[i]->s, gs->items[i]->len,
                         emq_json_new_int(int_of(r->element[i], 0)))) {
            emq_json_free(o);
            o = NULL;
        }
    }
    return as_map(o);
}

/* ---------------------------------------------------------- Tier 4 */

static void b_enqueue_flow(sc *k)
{
    const emq_json *ch = arg_a(k, "children");
    const char *p = arg_s(k, "parent", NULL);
    if (!ch)
        return;
    for (size_t i = 0; i < ch->n; i++)
        if (ch->items[i]->type != EMQ_JSON_ARRAY || ch->items[i]->n != 2 ||
            ch->items[i]->items[0]->type != EMQ_JSON_STRING ||
            ch->items[i]->items[1]->type != EMQ_JSON_STRING) {
            bad_arg(k, "children", "a list of [id, payload]");
            return;
        }
    push_key(k, k->q, "job:%s", p);
    push_key(k, k->q, "job:%s:dependencies", p);
    push_key(k, k->q, "pending");
    for (size_t i = 0; i < ch->n; i++)
        push_key(k, k->q, "job:%s", ch->items[i]->items[0]->s);
    keys_done(k);
    push_arg(k, "parent");
    push_arg(k, "payload");
    push_i(&k->a, (int64_t)ch->n);
    for (size_t i = 0; i < ch->n; i++) {
        const emq_json *c = ch->items[i];
        push(&k->a, c->items[0]->s, c->items[0]->len);
        push(&k->a, c->items[1]->s, c->items[1]->len);
    }
}

static void b_hold_parent(sc *k)
{
    const char *p = arg_s(k, "parent", NULL);
    push_key(k, k->q, "job:%s", p);
    push_key(k, k->q, "job:%s:dependencies", p);
    keys_done(k);
    push_arg(k, "parent");
    push_arg(k, "payload");
    push_i(&k->a, arg_i(k, "n"));
}

static void b_flow_child(sc *k)
{
    const char *c = arg_s(k, "child", NULL);
    push_key(k, k->q, "job:%s", c);
    push_key(k, k->q, "pending");
    keys_done(k);
    push_arg(k, "child");
    push_arg(k, "payload");
    push_arg(k, "parent");
    if (absent(k, "pq"))
        push_s(&k->a, ""); /* the parent's queue */
    else
        push_arg(k, "pq");
}

static void b_flow_deliver(sc *k)
{
    const char *p = arg_s(k, "parent", NULL);
    push_key(k, k->q, "job:%s:dependencies", p);
    push_key(k, k->q, "job:%s:processed", p);
    push_key(k, k->q, "job:%s", p);
    keys_done(k);
    push_arg(k, "child");
    push_arg(k, "result");
    push_arg(k, "parent");
    push_key(k, k->q, "");
}

static void b_flow_fail_deliver(sc *k)
{
    const char *p = arg_s(k, "parent", NULL);
    push_key(k, k->q, "job:%s:dependencies", p);
    push_key(k, k->q, "job:%s:failed", p);
    push_key(k, k->q, "job:%s:unsuccessful", p);
    push_key(k, k->q, "job:%s", p);
    keys_done(k);
    push_arg(k, "child");
    push_arg(k, "error");
    push_arg(k, "policy");
    push_key(k, k->q, "");
    push_arg(k, "parent");
}

/* ---------------------------------------------------------- Tier 5 */

/* Repeat scores use HOST-NOW, which the traces keep virtual: the step's
 * now (README "Time"). */
static void b_repeat_register(sc *k)
{
    const char *name = arg_s(k, "name", NULL);
    push_key(k, k->q, "repeat");
    push_key(k, k->q, "repeat:%s", name);
    keys_done(k);
    push_arg(k, "name");
    push_i(&k->a, arg_i(k, "every_ms"));
    push_arg(k, "template");
    push_i(&k->a, k->now + arg_i(k, "first_in_ms"));
}

static void b_repeat_cancel(sc *k)
{
    const char *name = arg_s(k, "name", NULL);
    push_key(k, k->q, "repeat");
    push_key(k, k->q, "repeat:%s", name);
    keys_done(k);
    push_arg(k, "name");
}

static void b_repeat_advance(sc *k)
{
    b_repeat_cancel(k);
    push_i(&k->a, k->now + arg_i(k, "every_ms"));
}

static void b_stalled_check(sc *k)
{
    push_key(k, k->q, "active");
    push_key(k, k->q, "pending");
    push_key(k, k->q, "dead");
    keys_done(k);
    push_key(k, k->q, "");
    push_i(&k->a, arg_i_or(k, "max_stalled", 1));
    push_i(&k->a, arg_i_or(k, "limit", 100));
}

/* ------------------------------------------------------------ host verbs */

/* A host handler fills k->res->reply (or returns -1 with err). */

static int h_advance(sc *k)
{
    emq_rx *x = k->x;
    int64_t ms = arg_i(k, "ms"), t;
    if (k->bad)
        return -1;
    /* Let real time pass as the recording did, so that the server's
     * min-idle readings agree with the virtual clock (see "Time"). */
    if (x->streams && x->have_last &&
        srv_wait_until(x, x->last_t1 + (ms < 60 ? ms : 60) + 1, &t) != 0) {
        say(k->err, "%s", "TIME failed");
        return -1;
    }
    k->res->reply = emq_json_new_null();
    return k->res->reply ? 0 : -1;
}

/* `raw`: the store write it names, as it is. */
static int h_raw(sc *k)
{
    const emq_json *c = arg_a(k, "command");
    if (!c || c->n == 0) {
        bad_arg(k, "command", "a non-empty array");
        return -1;
    }
    av_free(&k->a);
    for (size_t i = 0; i < c->n; i++) {
        if (c->items[i]->type != EMQ_JSON_STRING) {
            bad_arg(k, "command", "an array of strings");
            return -1;
        }
        push(&k->a, c->items[i]->s, c->items[i]->len);
    }
    if (c->n >= 5 && strcasecmp(c->items[0]->s, "SET") == 0)
        for (size_t i = 3; i + 1 < c->n; i++)
            if (strcasecmp(c->items[i]->s, "PX") == 0)
                note_ttl(k, c->items[1]->s, c->items[1]->len,
                         strtoll(c->items[i + 1]->s, NULL, 10));
    return call_reply(k);
}

static int h_browse(sc *k)
{
    int64_t n = arg_i(k, "n");
    cmd(k, "ZREVRANGE");
    push_key(k, k->q, "pending");
    push_i(&k->a, 0);
    push_i(&k->a, n - 1);
    return call_reply(k);
}

/* A one-key command on B(q) + suffix. */
static int key_cmd(sc *k, const char *verb, const char *sfx)
{
    cmd(k, verb);
    push_key(k, k->q, "%s", sfx);
    return call_reply(k);
}

static int h_pending_size(sc *k)
{
    return key_cmd(k, "ZCARD", "pending");
}

/* T1.2 enqueue_many: the host's gates (an empty list is refused
 * empty_pipeline, GATE-ID on every id before any item runs), then
 * enqueue.lua once per item in input order; the reply lists the verdicts
 * (1, 0, or the EMQKIND error). */
static int h_enqueue_many(sc *k)
{
    const emq_json *items = arg_a(k, "items");
    uint64_t snow;
    size_t i;
    if (!items)
        return -1;
    for (i = 0; i < items->n; i++) {
        const emq_json *e = items->items[i];
        if (e->type != EMQ_JSON_ARRAY || e->n != 2 ||
            e->items[0]->type != EMQ_JSON_STRING ||
            e->items[1]->type != EMQ_JSON_STRING) {
            bad_arg(k, "items", "a list of [id, payload]");
            return -1;
        }
        if (!branded(e->items[0]->s, e->items[0]->len, &snow)) {
            k->res->reply = refused(GATE_ID_TEXT);
            return k->res->reply ? 0 : -1;
        }
    }
    if (items->n == 0) {
        k->res->reply = refused("empty_pipeline");
        return k->res->reply ? 0 : -1;
    }
    emq_json *out = emq_json_new_array();
    for (i = 0; out && i < items->n; i++) {
        const emq_json *id = items->items[i]->items[0],
                       *pl = items->items[i]->items[1];
        av_free(&k->a);
        push_s(&k->a, "EVALSHA");
        push(&k->a, k->x->sha[S_ENQUEUE], 40);
        push_s(&k->a, "2");
        push_key(k, k->q, "job:%s", id->s);
        push_key(k, k->q, "pending");
        push(&k->a, id->s, id->len);
        push(&k->a, pl->s, pl->len);
        push_i(&k->a, k->now);
        redisReply *r = call(k);
        if (!r) {
            emq_json_free(out);
            return -1;
        }
        if (emq_json_push(out, to_json(r)) != 0) {
            emq_json_free(out);
            out = NULL;
        }
        freeReplyObject(r);
    }
    k->res->reply = out;
    return out ? 0 : -1;
}

/* Run k->a, answer its integer (nil and absent: 0). */
static int call_int(sc *k, long long dflt)
{
    redisReply *r = call(k);
    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ERROR)
        k->res->reply = to_json(r);
    else
        k->res->reply = emq_json_new_int(int_of(r, dflt));
    freeReplyObject(r);
    return k->res->reply ? 0 : -1;
}

/* Run k->a (HGETALL), answer {"map": ...}; `nil_empty` answers null for an
 * empty hash (no row) instead of an empty map. */
static int call_map(sc *k, int nil_empty)
{
    redisReply *r = call(k);
    if (!r)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY)
        k->res->reply = to_json(r);
    else if (nil_empty && r->elements == 0)
        k->res->reply = emq_json_new_null();
    else
        k->res->reply = as_map(pairs_obj(r, 0));
    freeReplyObject(r);
    return k->res->reply ? 0 : -1;
}

static int h_get_job(sc *k)
{
    cmd(k, "HGETALL");
    push_job(k, "id", "");
    return call_map(k, 1);
}

static int h_get_metrics(sc *k)
{
    const char *which = arg_s(k, "which", NULL);
    if (k->bad)
        return -1;
    redisReply *c = cmdf(k, "HGET emq:{%s}:metrics:%s count", k->q, which);
    redisReply *d = c ? cmdf(k, "LLEN emq:{%s}:metrics:%s:data", k->q, which)
                      : NULL;
    emq_json *o = NULL;
    if (c && d && (o = emq_json_new_object()) &&
        (emq_json_set(o, "count", 5, emq_json_new_int(int_of(c, 0))) ||
         emq_json_set(o, "data_points", 11, emq_json_new_int(int_of(d, 0))))) {
        emq_json_free(o);
        o = NULL;
    }
    if (c)
        freeReplyObject(c);
    if (d)
        freeReplyObject(d);
    k->res->reply = o ? as_map(o) : NULL;
    return k->res->reply ? 0 : -1;
}

static int h_get_dedup(sc *k)
{
    const emq_json *did = arg_t(k, "did", EMQ_JSON_STRING, "a string");
    cmd(k, "GET");
    push_key(k, k->q, "de:%s", did ? did->s : "");
    return call_reply(k);
}

/* get_job_logs: null (gone) without a row, else the lines. */
static int h_get_job_logs(sc *k)
{
    cmd(k, "EXISTS");
    push_job(k, "id", "");
    redisReply *r = call(k);
    if (!r)
        return -1;
    int exists = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (!exists) {
        k->res->reply = emq_json_new_null();
        return k->res->reply ? 0 : -1;
    }
    cmd(k, "LRANGE");
    push_job(k, "id", "logs");
    push_s(&k->a, "0");
    push_s(&k->a, "-1");
    return call_reply(k);
}

static int h_get_global_rate_limit(sc *k)
{
    cmd(k, "HGET");
    push_key(k, k->q, "meta");
    push_s(&k->a, "max");
    return call_int(k, 0);
}

static int h_depth(sc *k)
{
    const char *g = arg_s(k, "g", NULL);
    cmd(k, "ZCARD");
    push_key(k, k->q, "g:%s:pending", g);
    return call_reply(k);
}

/* ---------------------------------------------------------- flows */

static int h_set_policy(sc *k)
{
    cmd(k, "HSET");
    push_job(k, "id", "");
    push_s(&k->a, "parent_policy");
    push_arg(k, "policy");
    return call_reply(k);
}

static int h_set_link(sc *k)
{
    const emq_json *pq = arg_sn(k, "parent_queue");
    cmd(k, "HSET");
    push_job(k, "id", "");
    push_s(&k->a, "parent");
    push_arg(k, "parent");
    if (pq) {
        push_s(&k->a, "parent_queue");
        push(&k->a, pq->s, pq->len);
    }
    push_s(&k->a, "parent_policy");
    push_arg(k, "policy");
    return call_reply(k);
}

static int h_children_values(sc *k)
{
    cmd(k, "HGETALL");
    push_job(k, "parent", "processed");
    return call_map(k, 0);
}

static int h_ignored_failures(sc *k)
{
    cmd(k, "HGETALL");
    push_job(k, "parent", "unsuccessful");
    return call_map(k, 0);
}

static int h_dependencies(sc *k)
{
    cmd(k, "GET");
    push_job(k, "parent", "dependencies");
    return call_int(k, 0);
}

static int h_outbox_read(sc *k)
{
    int64_t batch = arg_i(k, "batch");
    cmd(k, "LRANGE");
    push_key(k, k->q, "flow:outbox");
    push_i(&k->a, 0);
    push_i(&k->a, batch - 1);
    return call_reply(k);
}

static int h_outbox_trim(sc *k)
{
    int64_t n = arg_i(k, "n");
    cmd(k, "LTRIM");
    push_key(k, k->q, "flow:outbox");
    push_i(&k->a, n);
    push_i(&k->a, -1);
    return call_reply(k);
}

/* REEMIT(q, id, error), T4.14: the node's link, then one FAIL entry pushed
 * onto its queue's outbox; null when the node has no parent. */
static int h_reemit(sc *k)
{
    size_t el;
    const char *e = arg_s(k, "error", &el);
    cmd(k, "HMGET");
    push_job(k, "id", "");
    push_s(&k->a, "parent");
    push_s(&k->a, "parent_queue");
    push_s(&k->a, "parent_policy");
    redisReply *r = call(k);
    if (!r)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        k->res->reply = to_json(r);
        freeReplyObject(r);
        return k->res->reply ? 0 : -1;
    }
    const redisReply *par = r->element[0], *prq = r->element[1],
                     *pol = r->element[2];
    if (par->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        k->res->reply = emq_json_new_null();
        return k->res->reply ? 0 : -1;
    }
    const char *id = arg_s(k, "id", NULL);
    const char *pq = k->q;
    size_t pql = strlen(k->q);
    if (prq->type == REDIS_REPLY_STRING &&
        (prq->len != pql || memcmp(prq->str, k->q, pql) != 0)) {
        pq = prq->str;
        pql = prq->len;
    }
    const char *policy = pol->type == REDIS_REPLY_STRING && pol->len == 2 &&
                         memcmp(pol->str, "id", 2) == 0 ? "id" : "fp";
    emq_json_buf ent = {0};
    emq_json_buf_puts(&ent, "\0fail\0", 6);
    emq_json_buf_puts(&ent, pq, pql);
    emq_json_buf_puts(&ent, "", 1);
    emq_json_buf_puts(&ent, par->str, par->len);
    emq_json_buf_puts(&ent, "", 1);
    emq_json_buf_puts(&ent, id, strlen(id));
    emq_json_buf_puts(&ent, "", 1);
    emq_json_buf_puts(&ent, policy, 2);
    emq_json_buf_puts(&ent, "", 1);
    emq_json_buf_puts(&ent, e, el);
    freeReplyObject(r);
    cmd(k, "RPUSH");
    push_key(k, k->q, "flow:outbox");
    if (ent.oom)
        k->a.oom = 1;
    else
        push_own(&k->a, ent.p, ent.len);
    emq_json_buf_free(&ent);
    return call_reply(k);
}

/* 1 when J(id) of queue q is in state dead, 0 when not, -1 (err). */
static int state_dead(sc *k, const char *q, const char *id)
{
    redisReply *r = cmdf(k, "HGET emq:{%s}:job:%s state", q, id);
    int dead;
    if (!r)
        return -1;
    dead = r->type == REDIS_REPLY_STRING && r->len == 4 &&
           memcmp(r->str, "dead", 4) == 0;
    freeReplyObject(r);
    return dead;
}

/* REEMIT(q, node, error) (T4.14) as the reemit verb runs it, its reply
 * dropped. 0, or -1 with err filled. */
static int reemit_node(sc *k, const char *q, const char *node, const char *e,
                       size_t el)
{
    emq_golden_result res;
    emq_json *args = emq_json_new_object();
    sc up;
    int rc;
    if (!args ||
        emq_json_set(args, "id", 2, emq_json_new_str(node, strlen(node))) ||
        emq_json_set(args, "error", 5, emq_json_new_str(e, el))) {
        emq_json_free(args);
        say(k->err, "%s", "out of memory");
        return -1;
    }
    memset(&up, 0, sizeof up);
    memset(&res, 0, sizeof res);
    up.x = k->x;
    up.args = args;
    up.now = k->now;
    up.res = &res;
    up.err = k->err;
    up.q = q;
    up.t0 = k->t0;
    rc = h_reemit(&up);
    av_free(&up.a);
    av_free(&up.ttl);
    emq_json_free(res.reply);
    emq_json_free(args);
    return rc;
}

/* GATE-Q (PROTOCOL.md §2.2): ^[A-Za-z0-9._-]{1,128}$ and not "emq". */
static int queue_ok(const char *q, size_t n)
{
    if (n < 1 || n > 128 || (n == 3 && memcmp(q, "emq", 3) == 0))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((q[i] >= 'A' && q[i] <= 'Z') || (q[i] >= 'a' && q[i] <= 'z') ||
              (q[i] >= '0' && q[i] <= '9') || q[i] == '.' || q[i] == '_' ||
              q[i] == '-'))
            return 0;
    return 1;
}

/* Cut `nf` NUL-terminated fields off p[0..n) into f/fl (each copied into
 * buf, 256 bytes a field) and point *rest at what is left. 0, or -1 when
 * there are fewer separators (malformed) or a field is too long. */
static int cut_fields(const char *p, size_t n, int nf, char buf[][256],
                      size_t *fl, const char **rest, size_t *rn)
{
    for (int i = 0; i < nf; i++) {
        const char *z = memchr(p, 0, n);
        if (!z || (size_t)(z - p) >= 256)
            return -1;
        fl[i] = (size_t)(z - p);
        memcpy(buf[i], p, fl[i]);
        buf[i][fl[i]] = 0;
        n -= fl[i] + 1;
        p = z + 1;
    }
    *rest = p;
    *rn = n;
    return 0;
}


/* ------------------------------------------------------ T4.5's host gate */

/* Depth-first in spec order: level > 8, an id seen before (GATE-ID is
 * not checked here: every trace id passes it). 1 with `text` set when the
 * tree is refused, 0 when it passes, -1 when malformed. */
/* The host's validation of one node and its subtree, depth-first in spec
 * order: in a nested tree (`tree`, T4.5) level > 8 → flow_too_deep(8) and
 * an id seen before → flow_cycle(id); then GATE-ID (T4.1, T4.4, T4.5).
 * 0 passed, 1 refused (`text` says how), -1 not a flow node. */
static int tree_check(const emq_json *node, int level, int tree,
                      const emq_json **seen, size_t *nseen, size_t cap,
                      char *text, size_t tn)
{
    const emq_json *id = emq_json_get(node, "id");
    const emq_json *ch = emq_json_get(node, "children");
    uint64_t snow;
    if (!id || id->type != EMQ_JSON_STRING)
        return -1;
    if (tree && level > 8) {
        snprintf(text, tn, "flow_too_deep(8)");
        return 1;
    }
    for (size_t i = 0; tree && i < *nseen; i++)
        if (seen[i]->len == id->len &&
            memcmp(seen[i]->s, id->s, id->len) == 0) {
            snprintf(text, tn, "flow_cycle(%.*s)", (int)id->len, id->s);
            return 1;
        }
    if (!branded(id->s, id->len, &snow)) {
        snprintf(text, tn, "%s", GATE_ID_TEXT);
        return 1;
    }
    if (*nseen == cap)
        return -1;
    seen[(*nseen)++] = id;
    for (size_t i = 0; ch && ch->type == EMQ_JSON_ARRAY && i < ch->n; i++) {
        int rc = tree_check(ch->items[i], level + 1, tree, seen, nseen, cap,
                            text, tn);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* 1 when a flow's children array `ch` holds a child with children (the
 * flow is a nested tree, T4.5). */
static int nested_flow(const emq_json *ch)
{
    for (size_t i = 0; ch && ch->type == EMQ_JSON_ARRAY && i < ch->n; i++) {
        const emq_json *cc = emq_json_get(ch->items[i], "children");
        if (cc && cc->type == EMQ_JSON_ARRAY && cc->n > 0)
            return 1;
    }
    return 0;
}

/* The host's validation of a whole flow {"parent", "children"}: as
 * tree_check, the parent at level 1. */
static int flow_check(const emq_json *flow, char *text, size_t tn)
{
    const emq_json *seen[512];
    const emq_json *parent = emq_json_get(flow, "parent");
    const emq_json *ch = emq_json_get(flow, "children");
    int tree = nested_flow(ch);
    size_t nseen = 0;
    if (!parent || (ch && ch->type != EMQ_JSON_ARRAY))
        return -1;
    int rc = tree_check(parent, 1, tree, seen, &nseen, 512, text, tn);
    for (size_t i = 0; rc == 0 && ch && i < ch->n; i++)
        rc = tree_check(ch->items[i], 2, tree, seen, &nseen, 512, text, tn);
    return rc;
}

/* Start an EVALSHA of script `sid`: KEYS and ARGV follow (keys_done
 * between them); flow_eval adds the clock override and runs it. */
static void flow_script(sc *k, int sid)
{
    av_free(&k->a);
    push_s(&k->a, "EVALSHA");
    push(&k->a, k->x->sha[sid], 40);
    push_s(&k->a, "0");
}

/* Run the command flow_script began: its reply (caller frees) or NULL. */
static redisReply *flow_eval(sc *k)
{
    char nk[24];
    push_i(&k->a, k->now);
    snprintf(nk, sizeof nk, "%zu", k->nkeys);
    if (!k->a.oom) {
        k->a.v[2] = nk;
        k->a.n[2] = strlen(nk);
    }
    return call(k);
}

/* The string member `name` of node `n` ("" when absent). */
static const emq_json *node_str(const emq_json *n, const char *name)
{
    static emq_json empty;
    const emq_json *v = emq_json_get(n, name);
    empty.type = EMQ_JSON_STRING;
    empty.s = (char *)"";
    return v && v->type == EMQ_JSON_STRING ? v : &empty;
}

/* A child's queue: its own, else its parent's (`pq`). */
static const char *node_queue(const emq_json *n, const char *pq)
{
    const emq_json *v = emq_json_get(n, "queue");
    return v && v->type == EMQ_JSON_STRING ? v->s : pq;
}

/* A child's policy: id when it asks to ignore its failure, else fp. */
static const char *node_policy(const emq_json *n)
{
    const emq_json *v = emq_json_get(n, "ignore_dependency_on_failure");
    return v && v->type == EMQ_JSON_TRUE ? "id" : "fp";
}

/* The reply of a landing command: 0 when it succeeded, 1 with *fail set
 * to its error reply (the flow's result), -1 on a broken connection. */
static int landed(redisReply *r, emq_json **fail)
{
    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ERROR) {
        *fail = to_json(r);
        freeReplyObject(r);
        return *fail ? 1 : -1;
    }
    freeReplyObject(r);
    return 0;
}

/* T4.2 hold_parent on queue `q`: node `id` awaiting n children. */
static int flow_hold(sc *k, const char *q, const emq_json *id,
                     const emq_json *payload, size_t n, emq_json **fail)
{
    flow_script(k, S_HOLD_PARENT);
    push_key(k, q, "job:%s", id->s);
    push_key(k, q, "job:%s:dependencies", id->s);
    keys_done(k);
    push(&k->a, id->s, id->len);
    push(&k->a, payload->s, payload->len);
    push_i(&k->a, (int64_t)n);
    return landed(flow_eval(k), fail);
}

/* T4.3 flow_child of node `c` on queue `cq` (`pq` "" for the parent's
 * queue), then the child's parent_policy. */
static int flow_leaf(sc *k, const char *cq, const emq_json *c,
                     const char *parent, const char *pq, const char *policy,
                     emq_json **fail)
{
    const emq_json *id = node_str(c, "id"), *pl = node_str(c, "payload");
    flow_script(k, S_FLOW_CHILD);
    push_key(k, cq, "job:%s", id->s);
    push_key(k, cq, "pending");
    keys_done(k);
    push(&k->a, id->s, id->len);
    push(&k->a, pl->s, pl->len);
    push_s(&k->a, parent);
    push_s(&k->a, pq);
    int rc = landed(flow_eval(k), fail);
    if (rc != 0)
        return rc;
    cmd(k, "HSET");
    push_key(k, cq, "job:%s", id->s);
    push_s(&k->a, "parent_policy");
    push_s(&k->a, policy);
    return landed(call(k), fail);
}

/* The result [id, list] (list's ownership passes); NULL when out of
 * memory. */
static emq_json *flow_pair(const emq_json *id, emq_json *list)
{
    emq_json *o = emq_json_new_array();
    if (!o) {
        emq_json_free(list);
        return NULL;
    }
    if (emq_json_push(o, emq_json_new_str(id->s, id->len)) != 0) {
        emq_json_free(list);
        emq_json_free(o);
        return NULL;
    }
    if (emq_json_push(o, list) != 0) {
        emq_json_free(o);
        return NULL;
    }
    return o;
}

/* T4.5: land node `node` (its children `ch`) on queue `nq` below `parent`
 * in queue `pq` (parent NULL for the root), parent first, depth first; its
 * result [id, [children's results]] into *out, or the first refusal into
 * *fail. 0, 1 refused, -1 failed. */
static int flow_node(sc *k, const emq_json *node, const emq_json *ch,
                     const char *nq, const char *parent, const char *pq,
                     const char *policy, emq_json **out, emq_json **fail)
{
    const emq_json *id = node_str(node, "id");
    const emq_json *pl = node_str(node, "payload");
    size_t n = ch && ch->type == EMQ_JSON_ARRAY ? ch->n : 0;
    emq_json *list = emq_json_new_array();
    int rc;
    *out = NULL;
    if (!list)
        return -1;
    if (n == 0 && parent) {
        rc = flow_leaf(k, nq, node, parent, strcmp(nq, pq) ? pq : "",
                       policy, fail);
    } else {
        rc = flow_hold(k, nq, id, pl, n, fail);
        if (rc == 0 && parent) {
            cmd(k, "HSET");
            push_key(k, nq, "job:%s", id->s);
            push_s(&k->a, "parent");
            push_s(&k->a, parent);
            if (strcmp(nq, pq) != 0) {
                push_s(&k->a, "parent_queue");
                push_s(&k->a, pq);
            }
            push_s(&k->a, "parent_policy");
            push_s(&k->a, policy);
            rc = landed(call(k), fail);
        }
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const emq_json *c = ch->items[i];
            emq_json *r = NULL;
            rc = flow_node(k, c, emq_json_get(c, "children"),
                           node_queue(c, nq), id->s, nq, node_policy(c), &r,
                           fail);
            if (rc == 0 && emq_json_push(list, r) != 0)
                rc = -1;
        }
    }
    if (rc != 0) {
        emq_json_free(list);
        return rc;
    }
    *out = flow_pair(id, list);
    return *out ? 0 : -1;
}

/* T4.1: the flat same-queue flow, one enqueue_flow, then each child's
 * parent_policy; the result [parent, [children]] into *out. */
static int flow_flat(sc *k, const emq_json *pid, const emq_json *ppl,
                     const emq_json *ch, emq_json *list, emq_json **fail)
{
    size_t n = ch ? ch->n : 0, i;
    int rc;
    flow_script(k, S_ENQUEUE_FLOW);
    push_key(k, k->q, "job:%s", pid->s);
    push_key(k, k->q, "job:%s:dependencies", pid->s);
    push_key(k, k->q, "pending");
    for (i = 0; i < n; i++)
        push_key(k, k->q, "job:%s", node_str(ch->items[i], "id")->s);
    keys_done(k);
    push(&k->a, pid->s, pid->len);
    push(&k->a, ppl->s, ppl->len);
    push_i(&k->a, (int64_t)n);
    for (i = 0; i < n; i++) {
        const emq_json *id = node_str(ch->items[i], "id");
        const emq_json *pl = node_str(ch->items[i], "payload");
        push(&k->a, id->s, id->len);
        push(&k->a, pl->s, pl->len);
    }
    rc = landed(flow_eval(k), fail);
    for (i = 0; rc == 0 && i < n; i++) {
        const emq_json *id = node_str(ch->items[i], "id");
        cmd(k, "HSET");
        push_key(k, k->q, "job:%s", id->s);
        push_s(&k->a, "parent_policy");
        push_s(&k->a, node_policy(ch->items[i]));
        rc = landed(call(k), fail);
        if (rc == 0 && emq_json_push(list, emq_json_new_str(id->s, id->len)))
            rc = -1;
    }
    return rc;
}

/* T4.4: the flat flow with a child elsewhere: hold_parent, then each
 * child's flow_child and parent_policy, the first refusal stopping it. */
static int flow_cross(sc *k, const emq_json *pid, const emq_json *ppl,
                      const emq_json *ch, emq_json *list, emq_json **fail)
{
    size_t n = ch ? ch->n : 0, i;
    int rc = flow_hold(k, k->q, pid, ppl, n, fail);
    for (i = 0; rc == 0 && i < n; i++) {
        const emq_json *c = ch->items[i];
        const char *cq = node_queue(c, k->q);
        const emq_json *id = node_str(c, "id");
        rc = flow_leaf(k, cq, c, pid->s, strcmp(cq, k->q) ? k->q : "",
                       node_policy(c), fail);
        if (rc == 0 && emq_json_push(list, emq_json_new_str(id->s, id->len)))
            rc = -1;
    }
    return rc;
}

/*
 * Land one validated flow as the reference's host does (PROTOCOL.md T4.1,
 * T4.4, T4.5): every child in q and none nested, flow_flat; a direct child
 * elsewhere and none nested, flow_cross; any child with children, the
 * tree node by node. Its result (the flat [parent, [children]], the
 * nested [id, [results]]) or the first refusal's error into *out. 0, or
 * -1 (err says why).
 */
static int flow_land(sc *k, const emq_json *flow, emq_json **out)
{
    const emq_json *parent = emq_json_get(flow, "parent");
    const emq_json *ch = emq_json_get(flow, "children");
    const emq_json *pid = node_str(parent, "id");
    const emq_json *ppl = node_str(parent, "payload");
    size_t n = ch ? ch->n : 0, i;
    int nested = nested_flow(ch), cross = 0, rc;
    emq_json *fail = NULL, *list = NULL;
    *out = NULL;
    for (i = 0; i < n; i++)
        cross |= strcmp(node_queue(ch->items[i], k->q), k->q) != 0;
    if (nested) {
        rc = flow_node(k, parent, ch, k->q, NULL, k->q, "fp", out, &fail);
    } else if (!(list = emq_json_new_array())) {
        rc = -1;
    } else {
        rc = cross ? flow_cross(k, pid, ppl, ch, list, &fail)
                   : flow_flat(k, pid, ppl, ch, list, &fail);
        if (rc == 0)
            rc = (*out = flow_pair(pid, list)) ? 0 : -1;
        else
            emq_json_free(list);
    }
    if (rc > 0) {
        *out = fail;
        return 0;
    }
    if (rc < 0) {
        emq_json_free(fail);
        if (!k->err->len)
            say(k->err, "%s", "flow: out of memory");
        return -1;
    }
    return 0;
}

/* flow_add (T4.1 / T4.4 / T4.5, with the host's validation): the host's
 * refusal, the first script's refusal, or the flow's result. A trace
 * records a flow that passes its validation part by part (and is replayed
 * so); a differential runs it whole. */
static int h_flow_add(sc *k)
{
    const emq_json *flow = arg_t(k, "flow", EMQ_JSON_OBJECT, "an object");
    char text[300];
    int rc;
    if (!flow)
        return -1;
    if ((rc = flow_check(flow, text, sizeof text)) < 0) {
        bad_arg(k, "flow", "a well-formed flow");
        return -1;
    }
    if (rc > 0) {
        k->res->reply = refused(text);
        return k->res->reply ? 0 : -1;
    }
    return flow_land(k, flow, &k->res->reply);
}

/* add_bulk (T4.6): GATE-ID on every id of every flow before any write
 * (one invalid id refuses the bulk), then each flow as flow_add lands it,
 * in input order; the reply lists the results of the flows that landed (a
 * flow refused, or stopped by a refusal, is left out). `flows` is a list
 * of flows, or one flow. */
static int h_add_bulk(sc *k)
{
    const emq_json *fl = emq_json_get(k->args, "flows");
    size_t n, i;
    char text[300];
    if (!fl || (fl->type != EMQ_JSON_ARRAY && fl->type != EMQ_JSON_OBJECT)) {
        bad_arg(k, "flows", "a flow or a list of flows");
        return -1;
    }
    n = fl->type == EMQ_JSON_ARRAY ? fl->n : 1;
    for (i = 0; i < n; i++) {
        const emq_json *f = fl->type == EMQ_JSON_ARRAY ? fl->items[i] : fl;
        int rc = flow_check(f, text, sizeof text);
        if (rc < 0) {
            bad_arg(k, "flows", "a list of well-formed flows");
            return -1;
        }
        if (rc > 0 && strcmp(text, GATE_ID_TEXT) == 0) {
            k->res->reply = refused(text);
            return k->res->reply ? 0 : -1;
        }
    }
    emq_json *out = emq_json_new_array();
    for (i = 0; out && i < n; i++) {
        const emq_json *f = fl->type == EMQ_JSON_ARRAY ? fl->items[i] : fl;
        emq_json *r = NULL;
        if (flow_check(f, text, sizeof text) != 0)
            continue;
        if (flow_land(k, f, &r) != 0) {
            emq_json_free(out);
            return -1;
        }
        if (r->type != EMQ_JSON_ARRAY) {
            emq_json_free(r); /* stopped by a refusal: left out */
            continue;
        }
        if (emq_json_push(out, r) != 0) {
            emq_json_free(out);
            out = NULL;
        }
    }
    k->res->reply = out;
    return out ? 0 : -1;
}

/*
 * deliver_flow_completions (T4.10), the host's sweep pass over q's outbox:
 * the first `batch` entries in order, each parsed (T4.9) and gated
 * (GATE-ID of the parent and, emqlite's chosen reading D-2, GATE-Q of its
 * queue), then delivered on the parent's queue — COMPLETE by
 * flow_deliver.lua, FAIL by flow_fail_deliver.lua and, when that moved the
 * parent to dead, REEMIT of the parent (D-5); the first entry that does
 * not deliver stops the pass. The delivered entries are trimmed off; the
 * reply counts them.
 */
static int deliver_pass(sc *k, int64_t batch, int64_t *out)
{
    int64_t d = 0;
    redisReply *r;
    uint64_t snow;
    r = cmdf(k, "LRANGE emq:{%s}:flow:outbox 0 %lld", k->q,
             (long long)batch - 1);
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        if (r) {
            k->res->reply = to_json(r);
            freeReplyObject(r);
        }
        return k->res->reply ? 0 : -1;
    }
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        char f[5][256];
        size_t fl[5], rn;
        const char *rest;
        int fail = e->len > 0 && e->str[0] == 0;
        if (e->type != REDIS_REPLY_STRING ||
            (fail ? cut_fields(e->str + 1, e->len - 1, 5, f, fl, &rest, &rn)
                  : cut_fields(e->str, e->len, 3, f, fl, &rest, &rn)) != 0 ||
            (fail && strcmp(f[0], "fail") != 0))
            break; /* malformed */
        const char *pq = f[fail], *pid = f[fail + 1], *cid = f[fail + 2];
        if (!branded(pid, fl[fail + 1], &snow) || !queue_ok(pq, fl[fail]))
            break;
        int was_dead = fail ? state_dead(k, pq, pid) : 0, rc;
        if (was_dead < 0)
            break;
        flow_script(k, fail ? S_FLOW_FAIL_DELIVER : S_FLOW_DELIVER);
        push_key(k, pq, "job:%s:dependencies", pid);
        push_key(k, pq, "job:%s:%s", pid, fail ? "failed" : "processed");
        if (fail)
            push_key(k, pq, "job:%s:unsuccessful", pid);
        push_key(k, pq, "job:%s", pid);
        keys_done(k);
        push(&k->a, cid, fl[fail + 2]); /* as b_flow_deliver and */
        push(&k->a, rest, rn);          /* b_flow_fail_deliver   */
        if (fail)
            push(&k->a, f[4], fl[4]);
        else
            push_s(&k->a, pid);
        push_key(k, pq, "");
        if (fail)
            push_s(&k->a, pid);
        redisReply *dr = flow_eval(k);
        emq_json *err = NULL;
        if ((rc = landed(dr, &err)) != 0) {
            freeReplyObject(r);
            if (rc > 0) {
                k->res->reply = err;
                return 0;
            }
            return -1;
        }
        if (fail && !was_dead && state_dead(k, pq, pid) > 0 &&
            reemit_node(k, pq, pid, rest, rn) != 0) {
            freeReplyObject(r);
            return -1;
        }
        d++;
    }
    freeReplyObject(r);
    if (d > 0) {
        r = cmdf(k, "LTRIM emq:{%s}:flow:outbox %lld -1", k->q, (long long)d);
        if (!r)
            return -1;
        freeReplyObject(r);
    }
    *out = d;
    return 0;
}

static int h_deliver_flow_completions(sc *k)
{
    int64_t batch = arg_i(k, "batch"), d = 0;
    if (k->bad)
        return -1;
    if (deliver_pass(k, batch, &d) != 0)
        return -1;
    if (k->res->reply)
        return 0; /* the pass answered (an error reply) */
    k->res->reply = emq_json_new_int(d);
    return k->res->reply ? 0 : -1;
}

/* ---------------------------------------------------------- Tier 5 */

static int h_repeat_due(sc *k)
{
    int64_t lim = arg_i(k, "limit");
    if (k->bad)
        return -1;
    redisReply *r = cmdf(k, "ZRANGEBYSCORE emq:{%s}:repeat -inf %lld LIMIT 0 "
                         "%lld", k->q, (long long)k->now, (long long)lim);
    if (!r)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY) {
        k->res->reply = to_json(r);
        freeReplyObject(r);
        return k->res->reply ? 0 : -1;
    }
    emq_json *out = emq_json_new_array();
    for (size_t i = 0; out && i < r->elements; i++) {
        const redisReply *n = r->element[i];
        cmd(k, "HMGET");
        push_key(k, k->q, "repeat:%.*s", (int)n->len, n->str);
        push_s(&k->a, "every_ms");
        push_s(&k->a, "template");
        redisReply *f = call(k);
        emq_json *e = emq_json_new_array();
        if (!f || f->type != REDIS_REPLY_ARRAY || f->elements != 2 || !e ||
            emq_json_push(e, emq_json_new_str(n->str, n->len)) ||
            emq_json_push(e, to_json(f->element[0])) ||
            emq_json_push(e, to_json(f->element[1])) ||
            emq_json_push(out, e)) {
            if (f && e && e->n < 3)
                emq_json_free(e);
            emq_json_free(out);
            out = NULL;
        }
        if (f)
            freeReplyObject(f);
    }
    freeReplyObject(r);
    k->res->reply = out;
    return out ? 0 : -1;
}

static int h_repeat_count(sc *k)
{
    return key_cmd(k, "ZCARD", "repeat");
}

static int h_job_stalled(sc *k)
{
    cmd(k, "HGET");
    push_job(k, "id", "");
    push_s(&k->a, "stalled");
    redisReply *r = call(k);
    if (!r)
        return -1;
    k->res->reply = emq_json_new_bool(r->type == REDIS_REPLY_STRING &&
                                      strtoll(r->str, NULL, 10) > 0);
    freeReplyObject(r);
    return k->res->reply ? 0 : -1;
}

/* T5.10: pure. */
static int64_t backoff_of(const emq_json *p, int64_t att, int *ok)
{
    if (!p || p->type != EMQ_JSON_ARRAY || p->n < 2 ||
        p->items[0]->type != EMQ_JSON_STRING) {
        *ok = 0;
        return 0;
    }
    const char *kind = p->items[0]->s;
    if (strcmp(kind, "fixed") == 0 && p->items[1]->type == EMQ_JSON_INT)
        return p->items[1]->i;
    if (strcmp(kind, "exponential") == 0 && p->n == 3 &&
        p->items[1]->type == EMQ_JSON_INT &&
        p->items[2]->type == EMQ_JSON_INT) {
        int64_t base = p->items[1]->i, cap = p->items[2]->i, d = base;
        for (int64_t i = 1; i < att && d < cap; i++)
            d *= 2;
        return d < cap ? d : cap;
    }
    if (strcmp(kind, "jitter") == 0) {
        int64_t bound = backoff_of(p->items[1], att, ok);
        return bound <= 0 ? 0 : (int64_t)(rand() % (bound + 1));
    }
    *ok = 0;
    return 0;
}

static int h_backoff(sc *k)
{
    int ok = 1;
    int64_t att = arg_i(k, "attempts");
    int64_t d = backoff_of(emq_json_get(k->args, "policy"), att, &ok);
    if (!ok || k->bad) {
        bad_arg(k, "policy", "a backoff policy");
        return -1;
    }
    k->res->reply = emq_json_new_int(d);
    return k->res->reply ? 0 : -1;
}

/* ---------------------------------------------------------- streams */

static void push_stream(sc *k, const char *name_arg)
{
    const char *name = arg_s(k, name_arg, NULL);
    push_key(k, k->q, "stream:%s", name);
    k->x->streams = 1;
}

/* Push each string of args.`name` (a flat list). */
static void push_list(sc *k, const char *name)
{
    const emq_json *f = arg_a(k, name);
    for (size_t i = 0; f && i < f->n; i++) {
        if (f->items[i]->type != EMQ_JSON_STRING) {
            bad_arg(k, name, "a list of strings");
            return;
        }
        push(&k->a, f->items[i]->s, f->items[i]->len);
    }
}

static int h_stream_add(sc *k)
{
    cmd(k, "XADD");
    push_stream(k, "name");
    push_arg(k, "xid");
    push_list(k, "fields");
    return call_reply(k);
}

static const char b62[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* valid(id) of §4.1; *snow gets its snowflake. */
static int branded(const char *p, size_t n, uint64_t *snow)
{
    uint64_t s = 0;
    if (n != 14)
        return 0;
    for (int i = 0; i < 3; i++)
        if (p[i] < 'A' || p[i] > 'Z')
            return 0;
    for (int i = 3; i < 14; i++)
        if (!p[i] || !strchr(b62, p[i]))
            return 0;
    if (memcmp(p + 3, "AzL8n0Y58m7", 11) > 0)
        return 0;
    for (int i = 3; i < 14; i++)
        s = s * 62 + (uint64_t)(strchr(b62, p[i]) - b62);
    *snow = s;
    return 1;
}

/* append_id (and append, whose id the host minted): the id gates, then
 * XADD at the id's entry id with the `id` field first. */
static int h_append_id(sc *k)
{
    size_t n;
    uint64_t s;
    const char *id = arg_s(k, "id", &n);
    if (k->bad)
        return -1;
    if (!branded(id, n, &s) || memcmp(id, "EVT", 3) != 0) {
        k->res->reply = refused(n == 14 && branded(id, n, &s) ? "kind"
                                                              : "malformed");
        return k->res->reply ? 0 : -1;
    }
    cmd(k, "XADD");
    push_stream(k, "name");
    pushf(&k->a, "%llu-%llu",
          (unsigned long long)((s >> 22) + 1704067200000ULL),
          (unsigned long long)(s & 0x3FFFFF));
    push_s(&k->a, "id");
    push(&k->a, id, n);
    push_list(k, "fields");
    redisReply *r = call(k);
    if (!r)
        return -1;
    k->res->reply = r->type == REDIS_REPLY_ERROR ? to_json(r)
                                                 : emq_json_new_str(id, n);
    freeReplyObject(r);
    return k->res->reply ? 0 : -1;
}

/* Optional COUNT from args.`name` (an integer, or null for none). */
static void push_count(sc *k, const char *name)
{
    const emq_json *c = emq_json_get(k->args, name);
    if (c && c->type == EMQ_JSON_INT) {
        push_s(&k->a, "COUNT");
        push_i(&k->a, c->i);
    } else if (c && c->type != EMQ_JSON_NULL) {
        bad_arg(k, name, "an integer or null");
    }
}

static int h_stream_range(sc *k)
{
    cmd(k, "XRANGE");
    push_stream(k, "name");
    push_arg(k, "from");
    push_arg(k, "to");
    push_count(k, "count");
    return call_reply(k);
}

/* T5.3's record shape: [value of the first `id` field or null, {"map" of
 * the other fields, the first value of a repeated name winning}]. */
static emq_json *record_of(const redisReply *e)
{
    emq_json *rec = emq_json_new_array(), *id = NULL, *o;
    const redisReply *f;
    if (!rec || e->type != REDIS_REPLY_ARRAY || e->elements != 2) {
        emq_json_free(rec);
        return NULL;
    }
    f = e->element[1];
    o = emq_json_new_object();
    for (size_t i = 0; o && f->type == REDIS_REPLY_ARRAY && i + 1 < f->elements;
         i += 2) {
        const redisReply *kk = f->element[i], *v = f->element[i + 1];
        if (!id && kk->len == 2 && memcmp(kk->str, "id", 2) == 0) {
            id = emq_json_new_str(v->str, v->len);
            continue;
        }
        int dup = 0;
        for (size_t j = 0; j < o->n && !dup; j++)
            dup = o->members[j].klen == kk->len &&
                  memcmp(o->members[j].key, kk->str, kk->len) == 0;
        if (!dup && emq_json_set(o, kk->str, kk->len,
                                 emq_json_new_str(v->str, v->len))) {
            emq_json_free(o);
            o = NULL;
        }
    }
    if (!o || emq_json_push(rec, id ? id : emq_json_new_null()) ||
        emq_json_push(rec, as_map(o))) {
        emq_json_free(rec);
        return NULL;
    }
    return rec;
}

static int read_reply(sc *k)
{
    redisReply *r = call(k);
    if (!r)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY) {
        k->res->reply = to_json(r);
    } else {
        emq_json *out = emq_json_new_array();
        for (size_t i = 0; out && i < r->elements; i++)
            if (emq_json_push(out, record_of(r->element[i]))) {
                emq_json_free(out);
                out = NULL;
            }
        k->res->reply = out;
    }
    freeReplyObject(r);
    return k->res->reply ? 0 : -1;
}

static int h_read(sc *k)
{
    cmd(k, "XRANGE");
    push_stream(k, "name");
    if (absent(k, "from")) /* T5.3: from = "-", to = "+" */
        push_s(&k->a, "-");
    else
        push_arg(k, "from");
    if (absent(k, "to"))
        push_s(&k->a, "+");
    else
        push_arg(k, "to");
    push_count(k, "count");
    return read_reply(k);
}

static int h_read_window(sc *k)
{
    int64_t t0 = arg_i(k, "t0_ms"), t1 = arg_i(k, "t1_ms");
    if (k->bad)
        return -1;
    if (t1 < t0) {
        k->res->reply = refused("inverted window");
        return k->res->reply ? 0 : -1;
    }
    cmd(k, "XRANGE");
    push_stream(k, "name");
    pushf(&k->a, "%lld-0", (long long)t0);
    pushf(&k->a, "%lld-4194303", (long long)t1);
    push_count(k, "count");
    return read_reply(k);
}

static int h_read_since(sc *k)
{
    int64_t t0 = arg_i(k, "t0_ms");
    cmd(k, "XRANGE");
    push_stream(k, "name");
    pushf(&k->a, "%lld-0", (long long)t0);
    push_s(&k->a, "+");
    push_count(k, "count");
    return read_reply(k);
}

static int h_trim(sc *k)
{
    const emq_json *w = arg_a(k, "window");
    if (!w || w->n != 3 || w->items[0]->type != EMQ_JSON_STRING ||
        w->items[1]->type != EMQ_JSON_INT) {
        bad_arg(k, "window", "[maxlen|minid, n, exact]");
        return -1;
    }
    int minid = strcmp(w->items[0]->s, "minid") == 0;
    cmd(k, "XTRIM");
    push_stream(k, "name");
    push_s(&k->a, minid ? "MINID" : "MAXLEN");
    push_s(&k->a, w->items[2]->type == EMQ_JSON_TRUE ? "=" : "~");
    if (minid)
        pushf(&k->a, "%lld-0", (long long)w->items[1]->i);
    else
        push_i(&k->a, w->items[1]->i);
    return call_reply(k);
}

static void push_archived(sc *k)
{
    const char *name = arg_s(k, "name", NULL);
    push_key(k, k->q, "stream:%s:archived", name);
}

static int h_put_archived(sc *k)
{
    cmd(k, "SET");
    push_archived(k);
    push_arg(k, "w");
    return call_reply(k);
}

static int h_get_archived(sc *k)
{
    cmd(k, "GET");
    push_archived(k);
    return call_reply(k);
}

static int h_clear_archived(sc *k)
{
    cmd(k, "DEL");
    push_archived(k);
    return call_reply(k);
}

static int h_group_create(sc *k)
{
    int mk = arg_b(k, "mkstream");
    cmd(k, "XGROUP");
    push_s(&k->a, "CREATE");
    push_stream(k, "name");
    push_arg(k, "group");
    push_arg(k, "start");
    if (mk)
        push_s(&k->a, "MKSTREAM");
    return call_reply(k);
}

/*
 * Redis 7.0 (observed on 7.0.15) creates the named consumer of an XREADGROUP
 * with id `>` only when the read delivers something, and that of an
 * XAUTOCLAIM only when it claims something; Valkey 8 (Redis 7.2 onwards),
 * on which the traces were recorded, creates it in every case (PROTOCOL.md
 * T5.6: "create the consumer if new"). Replies are the same. On such an
 * engine the executor completes the step with XGROUP CREATECONSUMER, which
 * changes nothing else, and counts it; emq_rx_open reports the engine.
 */
static int consumer_compat(sc *k, const char *key, size_t kn)
{
    if (!k->x->old_consumers)
        return 0;
    size_t gn, cn;
    const char *g = arg_s(k, "group", &gn), *c = arg_s(k, "consumer", &cn);
    const char *v[5] = {"XGROUP", "CREATECONSUMER", key, g, c};
    size_t n[5] = {6, 14, kn, gn, cn};
    redisReply *r = redisCommandArgv(k->x->c, 5, v, n);
    if (!r) {
        say(k->err, "redis: %s", k->x->c->errstr);
        return -1;
    }
    if (r->type == REDIS_REPLY_INTEGER && r->integer == 1)
        k->x->compat_steps++;
    freeReplyObject(r);
    return 0;
}

/* READ-GROUP: the entries of the one stream read, or null. */
static int h_group_read(sc *k)
{
    const emq_json *block = emq_json_get(k->args, "block");
    char key[900];
    cmd(k, "XREADGROUP");
    push_s(&k->a, "GROUP");
    push_arg(k, "group");
    push_arg(k, "consumer");
    push_count(k, "count");
    if (block && block->type == EMQ_JSON_INT) {
        push_s(&k->a, "BLOCK");
        push_i(&k->a, block->i);
    }
    push_s(&k->a, "STREAMS");
    push_stream(k, "name");
    snprintf(key, sizeof key, "%s", k->a.v[k->a.argc - 1]);
    push_arg(k, "id");
    if (k->bad)
        return -1;
    redisReply *r = call(k);
    if (!r)
        return -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
        r->element[0]->type == REDIS_REPLY_ARRAY &&
        r->element[0]->elements == 2)
        k->res->reply = to_json(r->element[0]->element[1]);
    else
        k->res->reply = to_json(r);
    int none = r->type == REDIS_REPLY_NIL;
    freeReplyObject(r);
    if (none && consumer_compat(k, key, strlen(key)) != 0)
        return -1;
    return k->res->reply ? 0 : -1;
}

static int h_ack(sc *k)
{
    cmd(k, "XACK");
    push_stream(k, "name");
    push_arg(k, "group");
    push_list(k, "ids");
    return call_reply(k);
}

static int h_autoclaim(sc *k)
{
    char key[900];
    cmd(k, "XAUTOCLAIM");
    push_stream(k, "name");
    snprintf(key, sizeof key, "%s", k->a.v[k->a.argc - 1]);
    push_arg(k, "group");
    push_arg(k, "consumer");
    push_i(&k->a, arg_i(k, "min_idle_ms"));
    push_arg(k, "start");
    push_s(&k->a, "COUNT");
    push_i(&k->a, arg_i_or(k, "count", 100)); /* T5.6: count = 100 */
    if (k->bad)
        return -1;
    redisReply *r = call(k);
    if (!r)
        return -1;
    k->res->reply = to_json(r);
    int none = r->type == REDIS_REPLY_ARRAY && r->elements >= 2 &&
               r->element[1]->type == REDIS_REPLY_ARRAY &&
               r->element[1]->elements == 0;
    freeReplyObject(r);
    if (none && consumer_compat(k, key, strlen(key)) != 0)
        return -1;
    return k->res->reply ? 0 : -1;
}

static const redisReply *field(const redisReply *m, const char *name);
static int pel_time(emq_rx *x, const char *key, size_t kn, const char *grp,
                    size_t gn, const char *id, size_t idn, int64_t *d);

/* PENDING-RANGE: [[id, consumer, idle, count]...], the idle time in virtual
 * time: now minus the virtual instant of the entry's delivery. */
static int h_pending_range(sc *k)
{
    size_t gn;
    const char *grp = arg_s(k, "group", &gn);
    cmd(k, "XPENDING");
    push_stream(k, "name");
    char *key = strdup(k->a.v[1]);
    size_t kn = k->a.n[1];
    push(&k->a, grp, gn);
    push_arg(k, "start");
    push_arg(k, "end");
    push_i(&k->a, arg_i(k, "count"));
    redisReply *r = key && !k->bad ? call(k) : NULL;
    if (!r) {
        free(key);
        return -1;
    }
    k->res->reply = to_json(r);
    for (size_t i = 0; k->res->reply && r->type == REDIS_REPLY_ARRAY &&
                       i < r->elements; i++) {
        const redisReply *e = r->element[i];
        int64_t d, v;
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 4)
            continue;
        if (pel_time(k->x, key, kn, grp, gn, e->element[0]->str,
                     e->element[0]->len, &d) == 0 && vmap(k->x, d, &v)) {
            emq_json *idle = k->res->reply->items[i]->items[2];
            idle->i = k->now - v;
            idle->d = (double)idle->i;
        }
    }
    free(key);
    freeReplyObject(r);
    return k->res->reply ? 0 : -1;
}

/* ---------------------------------------------------------- lock plane */

static int h_lock_key_set(sc *k)
{
    int64_t ttl = arg_i(k, "ttl_ms");
    cmd(k, "SET");
    push_job(k, "id", "lock");
    push_i(&k->a, arg_i(k, "token"));
    push_s(&k->a, "PX");
    push_i(&k->a, ttl);
    if (!k->bad && !k->a.oom)
        note_ttl(k, k->a.v[1], k->a.n[1], ttl);
    return call_reply(k);
}

static int h_lock_field_set(sc *k)
{
    cmd(k, "HSET");
    push_job(k, "id", "");
    push_s(&k->a, "lock");
    push_i(&k->a, arg_i(k, "token"));
    return call_reply(k);
}

static int h_lock_key_del(sc *k)
{
    cmd(k, "DEL");
    push_job(k, "id", "lock");
    return call_reply(k);
}

static int h_lock_field_del(sc *k)
{
    cmd(k, "HDEL");
    push_job(k, "id", "");
    push_s(&k->a, "lock");
    return call_reply(k);
}

static int h_lock_key_refresh(sc *k)
{
    int64_t ttl = arg_i(k, "ttl_ms");
    cmd(k, "PEXPIRE");
    push_job(k, "id", "lock");
    push_i(&k->a, ttl);
    if (!k->bad && !k->a.oom)
        note_ttl(k, k->a.v[1], k->a.n[1], ttl);
    return call_reply(k);
}

/* T5.12 untrack(q, id): delete the lock key, then the row's lock field
 * (two host commands); nil. */
static int h_lock_untrack(sc *k)
{
    redisReply *r;
    cmd(k, "DEL");
    push_job(k, "id", "lock");
    if ((r = call(k)) == NULL)
        return -1;
    freeReplyObject(r);
    cmd(k, "HDEL");
    push_job(k, "id", "");
    push_s(&k->a, "lock");
    if ((r = call(k)) == NULL)
        return -1;
    freeReplyObject(r);
    k->res->reply = emq_json_new_null();
    return k->res->reply ? 0 : -1;
}

/* ------------------------------------------------------------ the pump */

/* A JOB id minted by §4.2 from the virtual clock, node 1, the case's cell
 * (golden README, Time). */
static void mint_job(sc *k, char out[15])
{
    uint64_t floor = (uint64_t)(k->now - INT64_C(1704067200000)) << 12;
    uint64_t cell = k->x->cell > floor ? k->x->cell : floor, snow;
    k->x->cell = cell + 1;
    snow = (cell >> 12) << 22 | UINT64_C(1) << 12 | (cell & 0xFFF);
    memcpy(out, "JOB", 3);
    for (int i = 13; i >= 3; i--) {
        out[i] = b62[snow % 62];
        snow /= 62;
    }
    out[14] = 0;
}

/* Run script `sid` on q's repeat keys for `name`, with `every` (>= 0: the
 * advance's next run HOST-NOW + every) as its last ARGV. */
static redisReply *repeat_script(sc *k, int sid, const char *name, size_t nl,
                                 int64_t every)
{
    flow_script(k, sid);
    push_key(k, k->q, "repeat");
    push_key(k, k->q, "repeat:%.*s", (int)nl, name);
    keys_done(k);
    push(&k->a, name, nl);
    if (every >= 0)
        push_i(&k->a, k->now + every);
    return flow_eval(k);
}

/*
 * sweep (T5.9), the host's pump pass over q: promote.lua (batch); the due
 * registrations (repeat_due); for each, when both its fields are there,
 * enqueue.lua of a freshly minted JOB id with the template (fired when
 * it answers 1) and repeat_advance.lua by every_ms (an error reply skips
 * it for this tick), else repeat_cancel.lua; then deliver_flow_completions'
 * pass. The reply is {promoted, fired, delivered}.
 */
static int h_sweep(sc *k)
{
    int64_t batch = arg_i_or(k, "batch", 100), promoted, fired = 0, d = 0;
    redisReply *r, *due, *f;
    emq_json *o;
    if (k->bad)
        return -1;
    flow_script(k, S_PROMOTE);
    push_key(k, k->q, "schedule");
    push_key(k, k->q, "pending");
    keys_done(k);
    push_key(k, k->q, "");
    push_i(&k->a, batch);
    if ((r = flow_eval(k)) == NULL)
        return -1;
    promoted = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    due = cmdf(k, "ZRANGEBYSCORE emq:{%s}:repeat -inf %lld LIMIT 0 %lld",
               k->q, (long long)k->now, (long long)batch);
    if (due == NULL)
        return -1;
    for (size_t i = 0; due->type == REDIS_REPLY_ARRAY && i < due->elements;
         i++) {
        const redisReply *n = due->element[i];
        char id[15], *end;
        long long every;
        cmd(k, "HMGET");
        push_key(k, k->q, "repeat:%.*s", (int)n->len, n->str);
        push_s(&k->a, "every_ms");
        push_s(&k->a, "template");
        if ((f = call(k)) == NULL) {
            freeReplyObject(due);
            return -1;
        }
        if (f->type != REDIS_REPLY_ARRAY || f->elements != 2 ||
            f->element[0]->type != REDIS_REPLY_STRING ||
            f->element[1]->type != REDIS_REPLY_STRING) {
            r = repeat_script(k, S_REPEAT_CANCEL, n->str, n->len, -1);
            freeReplyObject(f);
            if (r == NULL) {
                freeReplyObject(due);
                return -1;
            }
            freeReplyObject(r);
            continue;
        }
        /* an every_ms that is no positive integer fires nothing (its
         * advance would be refused): the registration stays due */
        every = strtoll(f->element[0]->str, &end, 10);
        if (end == f->element[0]->str || *end || every <= 0) {
            freeReplyObject(f);
            continue;
        }
        mint_job(k, id);
        flow_script(k, S_ENQUEUE);
        push_key(k, k->q, "job:%s", id);
        push_key(k, k->q, "pending");
        keys_done(k);
        push_s(&k->a, id);
        push(&k->a, f->element[1]->str, f->element[1]->len);
        r = flow_eval(k);
        freeReplyObject(f);
        if (r == NULL) {
            freeReplyObject(due);
            return -1;
        }
        if (r->type == REDIS_REPLY_ERROR) {
            freeReplyObject(r);
            continue;
        }
        fired += r->type == REDIS_REPLY_INTEGER && r->integer == 1;
        freeReplyObject(r);
        r = repeat_script(k, S_REPEAT_ADVANCE, n->str, n->len, every);
        if (r == NULL) {
            freeReplyObject(due);
            return -1;
        }
        freeReplyObject(r);
    }
    freeReplyObject(due);
    if (deliver_pass(k, batch, &d) != 0)
        return -1;
    if (k->res->reply)
        return 0; /* the pass answered (an error reply) */
    o = emq_json_new_object();
    if (!o || emq_json_set(o, "promoted", 8, emq_json_new_int(promoted)) ||
        emq_json_set(o, "fired", 5, emq_json_new_int(fired)) ||
        emq_json_set(o, "delivered", 9, emq_json_new_int(d))) {
        emq_json_free(o);
        return -1;
    }
    k->res->reply = as_map(o);
    return k->res->reply ? 0 : -1;
}

/* ------------------------------------------------------------ the table */

enum {
    F_PAUSE = 1,  /* the host's read of B.meta `paused` first: [] if set */
    F_QUEUE_CQ = 2, /* the queue argument is `cq` (flow_child)          */
    F_NOQUEUE = 4,  /* no queue argument (advance, raw, backoff)        */
    F_PUBLISH = 8,  /* capture what the step publishes                  */
    F_RECURSE = 16  /* a dead same-queue child: RECURSE-SQ after it,
                       unless the step is part 1 of a multi-part verb   */
};

typedef struct verb_row {
    const char *name;                 /* the trace's wire verb            */
    int script;                       /* S_*, or HOST                     */
    unsigned flags;
    void (*build)(sc *);              /* script: KEYS then ARGV           */
    emq_json *(*shape)(sc *, const redisReply *); /* NULL: as answered    */
    int (*host)(sc *);                /* HOST: the whole verb             */
} verb_row;

#define SCR(n, s, f, b, sh) {n, s, f, b, sh, NULL}
#define HST(n, f, h) {n, HOST, f, NULL, NULL, h}

static const verb_row verbs[] = {
    /* Tier 1 and the queue-wide pause flag */
    SCR("enqueue", S_ENQUEUE, 0, b_enqueue, NULL),
    SCR("enqueue_at", S_SCHEDULE, 0, b_enqueue_at, NULL),
    SCR("enqueue_in", S_SCHEDULE, 0, b_enqueue_in, NULL),
    SCR("claim", S_CLAIM, F_PAUSE, b_claim, NULL),
    SCR("complete", S_COMPLETE, 0, b_complete, NULL),
    SCR("retry", S_RETRY, F_RECURSE, b_retry, NULL),
    SCR("promote", S_PROMOTE, 0, b_promote, NULL),
    SCR("reap", S_REAP, 0, b_reap, NULL),
    SCR("extend_lock", S_EXTEND_LOCK, 0, b_extend_lock, NULL),
    SCR("extend_locks", S_EXTEND_LOCKS, 0, b_extend_locks, NULL),
    SCR("set_paused", S_SET_PAUSED, 0, b_meta, NULL),
    SCR("clear_paused", S_CLEAR_PAUSED, 0, b_meta, NULL),
    HST("enqueue_many", 0, h_enqueue_many),
    HST("browse", 0, h_browse),
    HST("pending_size", 0, h_pending_size),
    HST("raw", F_NOQUEUE, h_raw),
    HST("advance", F_NOQUEUE, h_advance),
    /* Tier 2 */
    SCR("drain", S_DRAIN, 0, b_drain, NULL),
    SCR("obliterate", S_OBLITERATE, 0, b_obliterate, NULL),
    SCR("counts", S_COUNTS, 0, b_counts, sh_counts),
    HST("get_job", 0, h_get_job),
    SCR("get_job_state", S_GET_JOB_STATE, 0, b_get_job_state, NULL),
    HST("get_metrics", 0, h_get_metrics),
    HST("get_deduplication_job_id", 0, h_get_dedup),
    SCR("update_data", S_UPDATE_DATA, 0, b_update_data, NULL),
    SCR("update_progress", S_UPDATE_PROGRESS, F_PUBLISH, b_update_progress,
        NULL),
    SCR("add_log", S_ADD_LOG, 0, b_add_log, NULL),
    HST("get_job_logs", 0, h_get_job_logs),
    SCR("remove_job", S_REMOVE_JOB, 0, b_remove_job, NULL),
    SCR("reprocess_job", S_REPROCESS_JOB, 0, b_reprocess_job, NULL),
    SCR("claim_batch", S_CLAIM_BATCH, F_PAUSE, b_claim_batch, NULL),
    SCR("delay", S_DELAY, 0, b_delay, NULL),
    SCR("is_maxed", S_IS_MAXED, 0, b_is_maxed, NULL),
    SCR("get_rate_limit_ttl", S_GET_RATE_LIMIT_TTL, 0, b_get_rate_limit_ttl,
        sh_rate_ttl),
    HST("get_global_rate_limit", 0, h_get_global_rate_limit),
    /* Tier 3 */
    SCR("lane_enqueue", S_LANE_ENQUEUE, 0, b_lane_enqueue, NULL),
    SCR("lane_claim", S_LANE_CLAIM, F_PAUSE, b_lane_claim, NULL),
    SCR("wclaim", S_WCLAIM, F_PAUSE, b_lane_claim, NULL),
    SCR("bclaim", S_BCLAIM, F_PAUSE, b_lane_claim, NULL),
    SCR("weight", S_WEIGHT, 0, b_weight, NULL),
    SCR("lane_pause", S_LANE_PAUSE, 0, b_lane_pause, NULL),
    SCR("lane_resume", S_LANE_RESUME, 0, b_lane_resume, NULL),
    SCR("limit", S_LIMIT, 0, b_limit, NULL),
    SCR("reassign", S_REASSIGN, 0, b_reassign, NULL),
    SCR("lane_drain", S_LANE_DRAIN, 0, b_lane_drain, NULL),
    SCR("reap_group", S_REAP_GROUP, 0, b_reap_group, NULL),
    HST("depth", 0, h_depth),
    SCR("lane_depths", S_LANE_DEPTHS, 0, b_lane_depths, sh_lane_depths),
    /* Tier 4 */
    SCR("enqueue_flow", S_ENQUEUE_FLOW, 0, b_enqueue_flow, NULL),
    HST("set_policy", 0, h_set_policy),
    SCR("hold_parent", S_HOLD_PARENT, 0, b_hold_parent, NULL),
    SCR("flow_child", S_FLOW_CHILD, F_QUEUE_CQ, b_flow_child, NULL),
    HST("set_link", 0, h_set_link),
    HST("children_values", 0, h_children_values),
    HST("ignored_failures", 0, h_ignored_failures),
    HST("dependencies", 0, h_dependencies),
    HST("outbox_read", 0, h_outbox_read),
    SCR("flow_deliver", S_FLOW_DELIVER, 0, b_flow_deliver, NULL),
    SCR("flow_fail_deliver", S_FLOW_FAIL_DELIVER, 0, b_flow_fail_deliver,
        NULL),
    HST("reemit", 0, h_reemit),
    HST("outbox_trim", 0, h_outbox_trim),
    HST("flow_add", 0, h_flow_add),
    HST("add_bulk", 0, h_add_bulk),
    HST("deliver_flow_completions", 0, h_deliver_flow_completions),
    /* Tier 5 */
    SCR("repeat_register", S_REPEAT_REGISTER, 0, b_repeat_register, NULL),
    SCR("repeat_cancel", S_REPEAT_CANCEL, 0, b_repeat_cancel, NULL),
    SCR("repeat_advance", S_REPEAT_ADVANCE, 0, b_repeat_advance, NULL),
    HST("repeat_due", 0, h_repeat_due),
    HST("repeat_count", 0, h_repeat_count),
    SCR("stalled_check", S_STALLED_CHECK, 0, b_stalled_check, NULL),
    HST("job_stalled", 0, h_job_stalled),
    HST("backoff", F_NOQUEUE, h_backoff),
    HST("append", 0, h_append_id),
    HST("append_id", 0, h_append_id),
    HST("stream_add", 0, h_stream_add),
    HST("stream_range", 0, h_stream_range),
    HST("read", 0, h_read),
    HST("read_window", 0, h_read_window),
    HST("read_since", 0, h_read_since),
    HST("trim", 0, h_trim),
    HST("put_archived", 0, h_put_archived),
    HST("get_archived", 0, h_get_archived),
    HST("clear_archived", 0, h_clear_archived),
    HST("group_create", 0, h_group_create),
    HST("group_read", 0, h_group_read),
    HST("ack", 0, h_ack),
    HST("autoclaim", 0, h_autoclaim),
    HST("pending_range", 0, h_pending_range),
    HST("lock_key_set", 0, h_lock_key_set),
    HST("lock_field_set", 0, h_lock_field_set),
    HST("lock_key_del", 0, h_lock_key_del),
    HST("lock_field_del", 0, h_lock_field_del),
    HST("lock_key_refresh", 0, h_lock_key_refresh),
    HST("sweep", 0, h_sweep),
    HST("lock_untrack", 0, h_lock_untrack),
};

static const verb_row *verb_find(const char *name)
{
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strcmp(verbs[i].name, name) == 0)
            return &verbs[i];
    return NULL;
}

/* raw and advance are replayer steps, not verbs (backoff, with no queue
 * argument either, is a verb). */
static int is_verb(const verb_row *vb)
{
    return !(vb->flags & F_NOQUEUE && vb->script == HOST &&
             strcmp(vb->name, "backoff") != 0);
}

const char *emq_rx_verb_at(size_t i)
{
    for (size_t v = 0; v < sizeof verbs / sizeof verbs[0]; v++)
        if (is_verb(&verbs[v]) && i-- == 0)
            return verbs[v].name;
    return NULL;
}

/* ------------------------------------------------------------ running */

/* The queue-wide pause gate of the claims: 1 when B.meta has `paused`. */
static int paused(sc *k, int *is)
{
    redisReply *r = cmdf(k, "HEXISTS emq:{%s}:meta paused", k->q);
    if (!r || r->type != REDIS_REPLY_INTEGER) {
        if (r) {
            say(k->err, "HEXISTS: %s", r->str ? r->str : "?");
            freeReplyObject(r);
        }
        return -1;
    }
    *is = r->integer != 0;
    freeReplyObject(r);
    return 0;
}

/*
 * RECURSE-SQ (T4.14): after retry answered dead for a child with a
 * same-queue link, the reference's host reads the parent's state and, when
 * it is dead, re-emits its death: REEMIT(q, parent, error). 0, or -1.
 */
static int recurse_sq(sc *k)
{
    size_t el;
    const char *e = arg_s(k, "error", &el);
    int dead = state_dead(k, k->q, k->link_p);
    if (dead <= 0)
        return dead;
    return reemit_node(k, k->q, k->link_p, e, el);
}

static int run_script(sc *k, const verb_row *vb)
{
    int is = 0;
    if ((vb->flags & F_PAUSE) && paused(k, &is) != 0)
        return -1;
    if (is) {
        k->res->reply = emq_json_new_array();
        return k->res->reply ? 0 : -1;
    }
    av_free(&k->a);
    push_s(&k->a, "EVALSHA");
    push(&k->a, k->x->sha[vb->script], 40);
    push_s(&k->a, "0");           /* numkeys, set below */
    vb->build(k);
    if (k->bad)
        return -1;
    if (k->res->reply)            /* answered by a host gate */
        return 0;
    push_i(&k->a, k->now);        /* the clock override */
    char nk[24];
    snprintf(nk, sizeof nk, "%zu", k->nkeys);
    if (!k->a.oom) {
        k->a.v[2] = nk;
        k->a.n[2] = strlen(nk);
    }
    redisReply *r = call(k);
    if (!r)
        return -1;
    k->res->reply = vb->shape && r->type != REDIS_REPLY_ERROR
                        ? vb->shape(k, r) : to_json(r);
    int died = r->type == REDIS_REPLY_STRING && r->len == 4 &&
               memcmp(r->str, "dead", 4) == 0;
    freeReplyObject(r);
    if (!k->res->reply) {
        say(k->err, "%s", "unexpected reply type or out of memory");
        return -1;
    }
    if ((vb->flags & F_RECURSE) && !k->part && died && k->link_p[0] &&
        !k->link_pq[0])
        return recurse_sq(k);
    return 0;
}

/* What the subscriber received during the step: [channel, message] of the
 * one message, or null. A PING marks the end: the server writes published
 * messages to the subscriber before it reads the PING. */
static int published(emq_rx *x, emq_json **out, emq_json_buf *err)
{
    void *rv;
    *out = NULL;
    if (redisAppendCommand(x->sub, "PING") != REDIS_OK)
        goto broken;
    for (;;) {
        if (redisGetReply(x->sub, &rv) != REDIS_OK)
            goto broken;
        redisReply *r = rv;
        if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
            r->element[0]->type == REDIS_REPLY_STRING) {
            if (strcmp(r->element[0]->str, "pong") == 0) {
                freeReplyObject(r);
                break;
            }
            if (strcmp(r->element[0]->str, "pmessage") == 0 &&
                r->elements == 4) {
                if (*out) {
                    say(err, "%s", "more than one message published");
                    emq_json_free(*out);
                    *out = NULL;
                    freeReplyObject(r);
                    return -1;
                }
                *out = emq_json_new_array();
                if (emq_json_push(*out, to_json(r->element[2])) ||
                    emq_json_push(*out, to_json(r->element[3]))) {
                    freeReplyObject(r);
                    return -1;
                }
            }
        }
        freeReplyObject(r);
    }
    if (!*out)
        *out = emq_json_new_null();
    return *out ? 0 : -1;
broken:
    say(err, "subscriber: %s", x->sub->errstr);
    return -1;
}

/*
 * One verb, whole (part 0: a retry runs RECURSE-SQ after it, as the
 * registry's retry does), or as part 1 of its multi-part sequence (part 1:
 * the trace records the reemit as the next step).
 */
static int rx_run(emq_rx *x, const char *verb, const emq_json *args,
                  int64_t now_ms, emq_golden_result *res, emq_json_buf *err,
                  int part)
{
    const verb_row *vb = verb_find(verb);
    sc k;
    int64_t t0, t1;
    int rc;
    memset(&k, 0, sizeof k);
    k.part = part;
    k.x = x;
    k.args = args;
    k.now = now_ms;
    k.res = res;
    k.err = err;
    if (!vb) {
        say(err, "verb %s is not in the executor's table", verb);
        return -1;
    }
    if (!(vb->flags & F_NOQUEUE)) {
        const char *qn = vb->flags & F_QUEUE_CQ ? "cq" : "q";
        size_t ql;
        k.q = arg_s(&k, qn, &ql);
        if (k.bad)
            return -1;
    }
    /* An advance touches no key: no window (it may let real time pass). */
    if (strcmp(verb, "advance") == 0) {
        rc = h_advance(&k);
        goto done;
    }
    /* A new virtual instant starts only once the server clock has left the
     * previous step's window (see "Time"). */
    if (srv_ms(x, &t0) != 0 ||
        (x->have_last && now_ms != x->last_v && t0 <= x->last_t1 &&
         srv_wait_until(x, x->last_t1 + 1, &t0) != 0)) {
        say(err, "TIME: %s", x->c->errstr);
        return -1;
    }
    k.t0 = t0;
    rc = vb->script == HOST ? vb->host(&k) : run_script(&k, vb);
    if (rc == 0 && srv_ms(x, &t1) == 0) {
        if (win_add(x, t0, t1, now_ms) != 0)
            rc = -1;
        x->last_t1 = t1;
        x->last_v = now_ms;
        x->have_last = 1;
        if (k.ttl.argc == 2 &&
            ttl_set(x, k.ttl.v[0], k.ttl.n[0], t0, t1, now_ms,
                    strtoll(k.ttl.v[1], NULL, 10)) != 0)
            rc = -1;
    } else if (rc == 0) {
        rc = -1;
    }
    if (rc == 0 && (vb->flags & F_PUBLISH)) {
        rc = published(x, &res->published, err);
        res->has_published = 1;
    }
done:
    if (rc != 0 && k.bad && !err->len)
        say(err, "%s", "bad arguments");
    av_free(&k.a);
    av_free(&k.ttl);
    return rc;
}

int emq_rx_run(emq_rx *x, const char *verb, const emq_json *args,
               int64_t now_ms, emq_golden_result *res, emq_json_buf *err)
{
    return rx_run(x, verb, args, now_ms, res, err, 0);
}

/* 1 when trace step `s` is one part of a multi-part verb of its own name
 * (a retry followed by its reemit): it runs as that part alone. */
static int first_part(const emq_golden_step *s)
{
    const emq_json *sv = s->seq ? emq_json_get(s->seq, "verb") : NULL;
    const emq_json *parts = s->seq ? emq_json_get(s->seq, "parts") : NULL;
    return sv && sv->type == EMQ_JSON_STRING && strcmp(sv->s, s->verb) == 0 &&
           parts && parts->type == EMQ_JSON_INT && parts->i > 1;
}

/* ------------------------------------------------------------ the dump */

typedef struct bkey {
    const char *p;
    size_t n;
} bkey;

static int cmp_bkey(const void *a, const void *b)
{
    const bkey *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->p, y->p, n) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The member `name` of a flat [name, value, ...] reply, or NULL. */
static const redisReply *field(const redisReply *m, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; m && m->type == REDIS_REPLY_ARRAY && i + 1 < m->elements;
         i += 2)
        if ((m->element[i]->type == REDIS_REPLY_STRING ||
             m->element[i]->type == REDIS_REPLY_STATUS) &&
            m->element[i]->len == n && memcmp(m->element[i]->str, name, n) == 0)
            return m->element[i + 1];
    return NULL;
}

static redisReply *xinfo_full(emq_rx *x, const char *k, size_t kn)
{
    const char *v[6] = {"XINFO", "STREAM", k, "FULL", "COUNT", "0"};
    size_t n[6] = {5, 6, kn, 4, 5, 1};
    redisReply *r = redisCommandArgv(x->c, 6, v, n);
    if (r && r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        r = NULL;
    }
    return r;
}

static const redisReply *group_of(const redisReply *info, const char *g,
                                  size_t gn)
{
    const redisReply *gs = field(info, "groups");
    for (size_t i = 0; gs && gs->type == REDIS_REPLY_ARRAY && i < gs->elements;
         i++) {
        const redisReply *name = field(gs->element[i], "name");
        if (name && name->len == gn && memcmp(name->str, g, gn) == 0)
            return gs->element[i];
    }
    return NULL;
}

/* The server's delivery time of PEL record `id` of group `grp`. */
static int pel_time(emq_rx *x, const char *key, size_t kn, const char *grp,
                    size_t gn, const char *id, size_t idn, int64_t *d)
{
    redisReply *info = xinfo_full(x, key, kn);
    const redisReply *g = info ? group_of(info, grp, gn) : NULL;
    const redisReply *pel = g ? field(g, "pending") : NULL;
    int rc = -1;
    for (size_t i = 0; pel && pel->type == REDIS_REPLY_ARRAY &&
                       i < pel->elements; i++) {
        const redisReply *e = pel->element[i];
        if (e->type == REDIS_REPLY_ARRAY && e->elements == 4 &&
            e->element[0]->len == idn &&
            memcmp(e->element[0]->str, id, idn) == 0) {
            *d = e->element[2]->integer;
            rc = 0;
        }
    }
    if (info)
        freeReplyObject(info);
    return rc;
}

static int cmp_json_str(const void *a, const void *b)
{
    const emq_json *x = *(emq_json *const *)a, *y = *(emq_json *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->s, y->s, n) : 0;
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The member "name" of a group object (for sorting groups). */
static int cmp_group(const void *a, const void *b)
{
    emq_json *x = emq_json_get(*(emq_json *const *)a, "name");
    emq_json *y = emq_json_get(*(emq_json *const *)b, "name");
    return cmp_json_str(&x, &y);
}

/* One consumer group in the trace's shape, delivery times virtual. */
static emq_json *dump_group(emq_rx *x, const redisReply *g)
{
    const redisReply *name = field(g, "name"),
                     *ld = field(g, "last-delivered-id"),
                     *er = field(g, "entries-read"),
                     *pel = field(g, "pending"), *cs = field(g, "consumers");
    emq_json *o = emq_json_new_object(), *cons = emq_json_new_array(),
             *pend = emq_json_new_array();
    if (!o || !cons || !pend || !name || !ld || !er || !pel || !cs)
        goto fail;
    for (size_t i = 0; i < cs->elements; i++) {
        const redisReply *cn = field(cs->element[i], "name");
        if (!cn || emq_json_push(cons, emq_json_new_str(cn->str, cn->len)))
            goto fail;
    }
    if (cons->n > 1)
        qsort(cons->items, cons->n, sizeof *cons->items, cmp_json_str);
    for (size_t i = 0; i < pel->elements; i++) {
        const redisReply *e = pel->element[i];
        int64_t v;
        emq_json *rec = emq_json_new_array();
        if (!rec || e->type != REDIS_REPLY_ARRAY || e->elements != 4 ||
            emq_json_push(rec, to_json(e->element[0])) ||
            emq_json_push(rec, to_json(e->element[1])) ||
            emq_json_push(rec, emq_json_new_int(
                              vmap(x, e->element[2]->integer, &v)
                                  ? v : e->element[2]->integer)) ||
            emq_json_push(rec, to_json(e->element[3])) ||
            emq_json_push(pend, rec)) {
            if (rec && rec->n < 4)
                emq_json_free(rec);
            goto fail;
        }
    }
    if (emq_json_set(o, "name", 4, to_json(name)) ||
        emq_json_set(o, "last_delivered_id", 17, to_json(ld)) ||
        emq_json_set(o, "entries_read", 12, to_json(er)) ||
        emq_json_set(o, "consumers", 9, cons)) {
        cons = NULL;
        goto fail;
    }
    cons = NULL;
    if (emq_json_set(o, "pending", 7, pend)) {
        pend = NULL;
        goto fail;
    }
    return o;
fail:
    emq_json_free(o);
    emq_json_free(cons);
    emq_json_free(pend);
    return NULL;
}

/* A stream value in the trace's shape (XINFO STREAM FULL). */
static emq_json *dump_stream(emq_rx *x, const char *k, size_t kn)
{
    redisReply *info = xinfo_full(x, k, kn);
    const redisReply *ents = field(info, "entries"),
                     *last = field(info, "last-generated-id"),
                     *added = field(info, "entries-added"),
                     *maxdel = field(info, "max-deleted-entry-id"),
                     *gs = field(info, "groups");
    emq_json *o = NULL, *groups = NULL;
    if (!info || !ents || !last || !added || !maxdel || !gs)
        goto fail;
    if (!(o = emq_json_new_object()) || !(groups = emq_json_new_array()))
        goto fail;
    for (size_t i = 0; i < gs->elements; i++)
        if (emq_json_push(groups, dump_group(x, gs->element[i])))
            goto fail;
    if (groups->n > 1)
        qsort(groups->items, groups->n, sizeof *groups->items, cmp_group);
    if (emq_json_set(o, "entries", 7, to_json(ents)) ||
        emq_json_set(o, "last_id", 7, to_json(last)) ||
        emq_json_set(o, "entries_added", 13, to_json(added)) ||
        emq_json_set(o, "max_deleted_id", 14, to_json(maxdel))) {
        goto fail;
    }
    if (emq_json_set(o, "groups", 6, groups)) {
        groups = NULL;
        goto fail;
    }
    freeReplyObject(info);
    return o;
fail:
    if (info)
        freeReplyObject(info);
    emq_json_free(o);
    emq_json_free(groups);
    return NULL;
}

/* One key's value as the trace writes it; NULL on failure. */
/* Queue the read of a plain key's value (GET, HGETALL, SMEMBERS, LRANGE,
 * ZRANGE WITHSCORES); 0, or -1 for a type read otherwise (a stream). */
static int value_send(emq_rx *x, const char *k, size_t kn, const char *type)
{
    const char *av[5] = {NULL, k, "0", "-1", "WITHSCORES"};
    size_t an[5] = {0, kn, 1, 2, 10};
    int n = 2;
    if (strcmp(type, "string") == 0)
        av[0] = "GET";
    else if (strcmp(type, "hash") == 0)
        av[0] = "HGETALL";
    else if (strcmp(type, "set") == 0)
        av[0] = "SMEMBERS";
    else if (strcmp(type, "list") == 0)
        av[0] = "LRANGE", n = 4;
    else if (strcmp(type, "zset") == 0)
        av[0] = "ZRANGE", n = 5;
    else
        return -1;
    an[0] = strlen(av[0]);
    return redisAppendCommandArgv(x->c, n, av, an) == REDIS_OK ? 0 : -1;
}

/* A plain key's value from the reply value_send asked for (NULL when the
 * reply is not of its shape or out of memory). */
static emq_json *value_of(const redisReply *r, const char *type)
{
    emq_json *v = NULL;
    if (strcmp(type, "string") == 0) {
        if (r->type == REDIS_REPLY_STRING)
            v = emq_json_new_str(r->str, r->len);
    } else if (strcmp(type, "hash") == 0) {
        if (r->type == REDIS_REPLY_ARRAY)
            v = pairs_obj(r, 0);
    } else if (strcmp(type, "list") == 0 || strcmp(type, "set") == 0) {
        int set = type[0] == 's';
        if (r->type == REDIS_REPLY_ARRAY) {
            bkey *m = calloc(r->elements ? r->elements : 1, sizeof *m);
            if (m && (v = emq_json_new_array())) {
                for (size_t i = 0; i < r->elements; i++) {
                    m[i].p = r->element[i]->str;
                    m[i].n = r->element[i]->len;
                }
                if (set)
                    qsort(m, r->elements, sizeof *m, cmp_bkey);
                for (size_t i = 0; i < r->elements; i++)
                    if (emq_json_push(v, emq_json_new_str(m[i].p, m[i].n))) {
                        emq_json_free(v);
                        v = NULL;
                        break;
                    }
            }
            free(m);
        }
    } else if (strcmp(type, "zset") == 0) {
        if (r->type == REDIS_REPLY_ARRAY && (v = emq_json_new_array()))
            for (size_t i = 0; i + 1 < r->elements; i += 2) {
                emq_json *pair = emq_json_new_array();
                double sc = strtod(r->element[i + 1]->str, NULL);
                if (!pair ||
                    emq_json_push(pair, emq_json_new_str(r->element[i]->str,
                                                         r->element[i]->len)) ||
                    emq_json_push(pair, emq_golden_score(sc)) ||
                    emq_json_push(v, pair)) {
                    emq_json_free(v);
                    v = NULL;
                    break;
                }
            }
    }
    return v;
}

int emq_rx_dump(emq_rx *x, emq_json **out, emq_json_buf *err)
{
    emq_json *ks = emq_json_new_object();
    bkey *keys = NULL;
    redisReply **vals = NULL;
    char (*types)[16] = NULL, *plain = NULL;
    long long *exps = NULL;
    int rc = -1;
    redisReply *r = redisCommand(x->c, "KEYS *");
    *out = NULL;
    if (!ks || !r || r->type != REDIS_REPLY_ARRAY) {
        say(err, "KEYS failed: %s", r && r->str ? r->str : x->c->errstr);
        goto done;
    }
    keys = calloc(r->elements ? r->elements : 1, sizeof *keys);
    if (!keys)
        goto done;
    for (size_t i = 0; i < r->elements; i++) {
        keys[i].p = r->element[i]->str;
        keys[i].n = r->element[i]->len;
    }
    qsort(keys, r->elements, sizeof *keys, cmp_bkey);
    /* TYPE and PEXPIRETIME of every key in one pipeline */
    for (size_t i = 0; i < r->elements; i++) {
        const char *v[2][2] = {{"TYPE", keys[i].p}, {"PEXPIRETIME", keys[i].p}};
        size_t n[2][2] = {{4, keys[i].n}, {11, keys[i].n}};
        redisAppendCommandArgv(x->c, 2, v[0], n[0]);
        redisAppendCommandArgv(x->c, 2, v[1], n[1]);
    }
    types = calloc(r->elements ? r->elements : 1, sizeof *types);
    exps = calloc(r->elements ? r->elements : 1, sizeof *exps);
    plain = calloc(r->elements ? r->elements : 1, 1);
    int broken = !types || !exps || !plain;
    for (size_t i = 0; i < r->elements; i++) {
        void *t = NULL, *e = NULL;
        if (redisGetReply(x->c, &t) != REDIS_OK ||
            redisGetReply(x->c, &e) != REDIS_OK) {
            broken = 1;
            if (t)
                freeReplyObject(t);
            break;
        }
        redisReply *tr = t, *er = e;
        if (!broken && tr->type == REDIS_REPLY_STATUS && tr->len < 16)
            memcpy(types[i], tr->str, tr->len);
        if (!broken)
            exps[i] = er->type == REDIS_REPLY_INTEGER ? er->integer : -1;
        freeReplyObject(tr);
        freeReplyObject(er);
    }
    if (broken) {
        say(err, "%s", "TYPE/PEXPIRETIME pipeline failed");
        goto done;
    }
    /* the plain values in a second pipeline (streams after it, each
     * with its own commands) */
    vals = calloc(r->elements ? r->elements : 1, sizeof *vals);
    if (!vals)
        say(err, "%s", "dump: out of memory");
    for (size_t i = 0; vals && i < r->elements; i++)
        plain[i] = value_send(x, keys[i].p, keys[i].n, types[i]) == 0;
    for (size_t i = 0; vals && i < r->elements; i++) {
        void *v = NULL;
        if (plain[i] && redisGetReply(x->c, &v) != REDIS_OK) {
            say(err, "%s", "value pipeline failed");
            goto done;
        }
        vals[i] = v;
    }
    for (size_t i = 0; vals && i < r->elements; i++) {
        const char *k = keys[i].p;
        size_t kn = keys[i].n;
        int64_t exp = exps[i];
        if (kn == 13 && memcmp(k, "{emq}:version", 13) == 0)
            continue;
        if (exp >= 0) {
            int64_t v;
            if (ttl_virtual(x, k, kn, exp, exp, &v))
                exp = v;
        }
        emq_json *v = plain[i] ? value_of(vals[i], types[i])
                               : strcmp(types[i], "stream") == 0
                                     ? dump_stream(x, k, kn) : NULL;
        if (!v) {
            say(err, "cannot read key %.*s of type '%s'", (int)kn, k,
                types[i]);
            goto done;
        }
        if (emq_golden_ks_add(ks, k, kn, types[i], v, exp) != 0)
            goto done;
    }
    if (vals) {
        *out = ks;
        ks = NULL;
        rc = 0;
    }
done:
    for (size_t i = 0; vals && r && i < r->elements; i++)
        if (vals[i])
            freeReplyObject(vals[i]);
    free(vals);
    free(plain);
    free(types);
    free(exps);
    emq_json_free(ks);
    free(keys);
    if (r)
        freeReplyObject(r);
    return rc;
}

/* ------------------------------------------------------------ loading */

/* Send one command built from views; 0 unless the server refused it. */
static int send_cmd(emq_rx *x, argv_t *a, emq_json_buf *err)
{
    if (a->oom) {
        say(err, "%s", "out of memory loading the keyspace");
        return -1;
    }
    redisReply *r = redisCommandArgv(x->c, (int)a->argc, a->v, a->n);
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (!ok)
        say(err, "loading the keyspace (%.*s): %s", (int)a->n[0], a->v[0],
            r && r->str ? r->str : x->c->errstr);
    if (r)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

/* An entry id's (ms, seq), for ordering. */
static void xid_of(const char *s, unsigned long long *ms,
                   unsigned long long *seq)
{
    char *end;
    *ms = strtoull(s, &end, 10);
    *seq = *end == '-' ? strtoull(end + 1, NULL, 10) : 0;
}

static int cmp_xid(const void *a, const void *b)
{
    unsigned long long am, as, bm, bs;
    xid_of(*(const char *const *)a, &am, &as);
    xid_of(*(const char *const *)b, &bm, &bs);
    return am != bm ? (am > bm) - (am < bm) : (as > bs) - (as < bs);
}

static const emq_json *member(const emq_json *o, const char *name,
                              emq_json_type t)
{
    const emq_json *v = emq_json_get(o, name);
    return v && v->type == t ? v : NULL;
}

/*
 * A stream as PROTOCOL.md §8.1 restores one, plus the PEL records whose
 * entries were trimmed (§8.3 item 5 drops them; the traces keep them): the
 * trimmed entries are appended as placeholders so that XCLAIM can create
 * their records, then trimmed away again (in these traces only trims remove
 * entries, so they all lie below the first live entry). Each delivery time
 * d is placed at server instant base - (now - d) and recorded as a window,
 * so the dump and the server's idle readings see it as the virtual d.
 */
static int load_stream(emq_rx *x, const char *key, size_t kn,
                       const emq_json *v, int64_t now, emq_json_buf *err)
{
    const emq_json *ents = member(v, "entries", EMQ_JSON_ARRAY),
                   *last = member(v, "last_id", EMQ_JSON_STRING),
                   *added = member(v, "entries_added", EMQ_JSON_INT),
                   *maxdel = member(v, "max_deleted_id", EMQ_JSON_STRING),
                   *groups = member(v, "groups", EMQ_JSON_ARRAY);
    const char **ids = NULL;
    size_t nids = 0, cap = 0;
    int64_t base;
    argv_t a = {0};
    int rc = -1;
    if (!ents || !last || !added || !maxdel || !groups) {
        say(err, "malformed stream value for %.*s", (int)kn, key);
        return -1;
    }
    x->streams = 1;
    if (srv_ms(x, &base) != 0)
        return -1;
    for (size_t g = 0; g < groups->n; g++) {
        const emq_json *pel = member(groups->items[g], "pending",
                                     EMQ_JSON_ARRAY);
        cap += pel ? pel->n : 0;
    }
    cap += ents->n + 1;
    ids = calloc(cap, sizeof *ids);
    if (!ids)
        return -1;
    for (size_t i = 0; i < ents->n; i++)
        ids[nids++] = ents->items[i]->items[0]->s;
    size_t live = nids;
    for (size_t g = 0; g < groups->n; g++) {
        const emq_json *pel = member(groups->items[g], "pending",
                                     EMQ_JSON_ARRAY);
        for (size_t i = 0; pel && i < pel->n; i++) {
            const char *id = pel->items[i]->items[0]->s;
            int have = 0;
            for (size_t j = 0; j < nids && !have; j++)
                have = strcmp(ids[j], id) == 0;
            if (!have)
                ids[nids++] = id;
        }
    }
    qsort(ids, nids, sizeof *ids, cmp_xid);
    /* the entries (live and placeholders) in id order */
    for (size_t i = 0; i < nids; i++) {
        const emq_json *fields = NULL;
        for (size_t j = 0; j < ents->n && !fields; j++)
            if (strcmp(ents->items[j]->items[0]->s, ids[i]) == 0)
                fields = ents->items[j]->items[1];
        av_free(&a);
        push_s(&a, "XADD");
        push(&a, key, kn);
        push_s(&a, ids[i]);
        if (fields && fields->n)
            for (size_t f = 0; f < fields->n; f++)
                push(&a, fields->items[f]->s, fields->items[f]->len);
        else
            push_s(&a, "_"), push_s(&a, "_");
        if (send_cmd(x, &a, err) != 0)
            goto done;
    }
    if (nids == 0) {
        av_free(&a);
        push_s(&a, "XADD");
        push(&a, key, kn);
        push_s(&a, "MAXLEN");
        push_s(&a, "0");
        push_s(&a, "1-1");
        push_s(&a, "_");
        push_s(&a, "_");
        if (send_cmd(x, &a, err) != 0)
            goto done;
    }
    for (size_t g = 0; g < groups->n; g++) {
        const emq_json *gr = groups->items[g];
        const emq_json *name = member(gr, "name", EMQ_JSON_STRING),
                       *ld = member(gr, "last_delivered_id", EMQ_JSON_STRING),
                       *er = member(gr, "entries_read", EMQ_JSON_INT),
                       *cons = member(gr, "consumers", EMQ_JSON_ARRAY),
                       *pel = member(gr, "pending", EMQ_JSON_ARRAY);
        if (!name || !ld || !cons || !pel) {
            say(err, "malformed group in %.*s", (int)kn, key);
            goto done;
        }
        av_free(&a);
        push_s(&a, "XGROUP");
        push_s(&a, "CREATE");
        push(&a, key, kn);
        push(&a, name->s, name->len);
        push(&a, ld->s, ld->len);
        if (er) {
            push_s(&a, "ENTRIESREAD");
            push_i(&a, er->i);
        }
        if (send_cmd(x, &a, err) != 0)
            goto done;
        for (size_t c = 0; c < cons->n; c++) {
            av_free(&a);
            push_s(&a, "XGROUP");
            push_s(&a, "CREATECONSUMER");
            push(&a, key, kn);
            push(&a, name->s, name->len);
            push(&a, cons->items[c]->s, cons->items[c]->len);
            if (send_cmd(x, &a, err) != 0)
                goto done;
        }
        for (size_t i = 0; i < pel->n; i++) {
            const emq_json *p = pel->items[i];
            int64_t d = p->items[2]->i, at = base - (now - d);
            av_free(&a);
            push_s(&a, "XCLAIM");
            push(&a, key, kn);
            push(&a, name->s, name->len);
            push(&a, p->items[1]->s, p->items[1]->len);
            push_s(&a, "0");
            push(&a, p->items[0]->s, p->items[0]->len);
            push_s(&a, "TIME");
            push_i(&a, at);
            push_s(&a, "RETRYCOUNT");
            push_i(&a, p->items[3]->i);
            push_s(&a, "FORCE");
            push_s(&a, "JUSTID");
            if (send_cmd(x, &a, err) != 0 || win_add(x, at, at, d) != 0)
                goto done;
        }
    }
    /* drop the placeholders: they all precede the first live entry */
    if (nids > live || (nids == 0)) {
        av_free(&a);
        push_s(&a, "XTRIM");
        push(&a, key, kn);
        if (live == 0) {
            push_s(&a, "MAXLEN");
            push_s(&a, "0");
        } else {
            const char *first = ents->items[0]->items[0]->s;
            for (size_t i = 0; i < nids; i++) {
                int is_live = 0;
                for (size_t j = 0; j < ents->n && !is_live; j++)
                    is_live = strcmp(ents->items[j]->items[0]->s, ids[i]) == 0;
                if (!is_live && cmp_xid(&ids[i], &first) > 0) {
                    say(err, "stream %.*s: a trimmed PEL record above a live "
                        "entry cannot be loaded", (int)kn, key);
                    goto done;
                }
            }
            push_s(&a, "MINID");
            push_s(&a, first);
        }
        if (send_cmd(x, &a, err) != 0)
            goto done;
    }
    av_free(&a);
    push_s(&a, "XSETID");
    push(&a, key, kn);
    push(&a, last->s, last->len);
    push_s(&a, "ENTRIESADDED");
    push_i(&a, added->i);
    push_s(&a, "MAXDELETEDID");
    push(&a, maxdel->s, maxdel->len);
    rc = send_cmd(x, &a, err);
done:
    av_free(&a);
    free(ids);
    return rc;
}

int emq_rx_load(emq_rx *x, const emq_json *ks, int64_t now, emq_json_buf *err)
{
    argv_t a = {0};
    for (size_t i = 0; i < ks->n; i++) {
        const emq_json_member *m = &ks->members[i];
        const emq_json *t = emq_json_get(m->val, "type");
        const emq_json *v = emq_json_get(m->val, "value");
        const emq_json *ex = emq_json_get(m->val, "expire_at");
        int64_t t0 = 0, t1 = 0;
        int rc;
        if (!t || t->type != EMQ_JSON_STRING || !v) {
            say(err, "%s", "malformed keyspace entry");
            return -1;
        }
        if (strcmp(t->s, "stream") == 0) {
            if (load_stream(x, m->key, m->klen, v, now, err) != 0)
                return -1;
            continue;
        }
        av_free(&a);
        push_s(&a, "?");
        push(&a, m->key, m->klen);
        if (strcmp(t->s, "string") == 0 && v->type == EMQ_JSON_STRING) {
            a.v[0] = "SET";
            push(&a, v->s, v->len);
            if (ex && ex->type == EMQ_JSON_INT) {
                /* the remaining virtual TTL, recorded as set now */
                push_s(&a, "PX");
                push_i(&a, ex->i - now > 0 ? ex->i - now : 1);
            }
        } else if (strcmp(t->s, "hash") == 0 && v->type == EMQ_JSON_OBJECT) {
            a.v[0] = "HSET";
            for (size_t j = 0; j < v->n; j++) {
                push(&a, v->members[j].key, v->members[j].klen);
                push(&a, v->members[j].val->s, v->members[j].val->len);
            }
        } else if (strcmp(t->s, "zset") == 0 && v->type == EMQ_JSON_ARRAY) {
            a.v[0] = "ZADD";
            for (size_t j = 0; j < v->n; j++) {
                const emq_json *pr = v->items[j], *sc = pr->items[1];
                if (sc->type == EMQ_JSON_INT)
                    push_i(&a, sc->i);
                else
                    pushf(&a, "%.17g", sc->d);
                push(&a, pr->items[0]->s, pr->items[0]->len);
            }
        } else if ((strcmp(t->s, "list") == 0 || strcmp(t->s, "set") == 0) &&
                   v->type == EMQ_JSON_ARRAY) {
            a.v[0] = t->s[0] == 'l' ? "RPUSH" : "SADD";
            for (size_t j = 0; j < v->n; j++)
                push(&a, v->items[j]->s, v->items[j]->len);
        } else {
            say(err, "cannot load a key of type %s", t->s);
            av_free(&a);
            return -1;
        }
        if (!a.oom)
            a.n[0] = strlen(a.v[0]);
        if (ex && (srv_ms(x, &t0) != 0))
            rc = -1;
        else
            rc = send_cmd(x, &a, err);
        if (rc == 0 && ex && ex->type == EMQ_JSON_INT &&
            (srv_ms(x, &t1) != 0 ||
             ttl_set(x, m->key, m->klen, t0, t1, now, ex->i - now) != 0))
            rc = -1;
        if (rc != 0) {
            av_free(&a);
            return -1;
        }
    }
    av_free(&a);
    return 0;
}

/* ------------------------------------------------------ the executor */

int emq_rx_reset(emq_rx *x, emq_json_buf *err)
{
    redisReply *r = redisCommand(x->c, "FLUSHALL");
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (!ok)
        say(err, "FLUSHALL failed: %s", r ? r->str : x->c->errstr);
    if (r)
        freeReplyObject(r);
    records_clear(x);
    x->cell = 0;
    return ok ? 0 : -1;
}

emq_rx *emq_rx_open(const char *host, int port, const char *lua_dir,
                    char *err, size_t errlen)
{
    emq_rx *x = calloc(1, sizeof *x);
    redisReply *r = NULL;
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    x->c = redisConnect(host, port);
    x->sub = redisConnect(host, port);
    if (!x->c || x->c->err || !x->sub || x->sub->err) {
        snprintf(err, errlen, "connect %s:%d: %s", host, port,
                 !x->c || !x->sub ? "out of memory"
                 : x->c->err ? x->c->errstr : x->sub->errstr);
        goto fail;
    }
    if (emq_luabundle_load(x->c, lua_dir, script_names, S_N, x->sha, err,
                           errlen) != 0)
        goto fail;
    r = redisCommand(x->c, "INFO server");
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *vv = strstr(r->str, "redis_version:");
        int major = 0, minor = 0;
        if (vv && sscanf(vv + 14, "%d.%d", &major, &minor) == 2)
            x->old_consumers = major < 7 || (major == 7 && minor < 2);
    }
    if (r)
        freeReplyObject(r);
    r = redisCommand(x->sub, "PSUBSCRIBE emq:{*}:events");
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        snprintf(err, errlen, "PSUBSCRIBE failed: %s", x->sub->errstr);
        goto fail;
    }
    freeReplyObject(r);
    return x;
fail:
    if (r)
        freeReplyObject(r);
    emq_rx_close(x);
    return NULL;
}

void emq_rx_close(emq_rx *x)
{
    if (!x)
        return;
    if (x->c)
        redisFree(x->c);
    if (x->sub)
        redisFree(x->sub);
    records_clear(x);
    free(x->ttls);
    free(x->wins);
    free(x);
}

static int x_begin(void *ctx, const emq_golden_case *c, emq_json_buf *err)
{
    (void)c;
    return emq_rx_reset(ctx, err);
}

static void x_clock(void *ctx, int64_t now)
{
    (void)ctx;
    (void)now;
}

static int x_step(void *ctx, const emq_golden_step *s, emq_golden_result *res,
                  emq_json_buf *err)
{
    return rx_run(ctx, s->verb, s->args, s->now, res, err, first_part(s));
}

static int x_dump(void *ctx, emq_json **out, emq_json_buf *err)
{
    return emq_rx_dump(ctx, out, err);
}

static void x_end(void *ctx)
{
    (void)ctx;
}

emq_golden_exec emq_rx_exec(emq_rx *x)
{
    emq_golden_exec ex = {"redis", x, x_begin, x_clock, x_step, x_dump,
                          x_end};
    return ex;
}

#ifndef EMQ_RX_NO_MAIN
/* ------------------------------------------------------ isolated steps */

/*
 * --isolated: every step is replayed alone: the server is loaded with the
 * keyspace the trace recorded before it (as of the step's now), the step
 * runs, and its reply, its published message and the keyspace after it are
 * compared with the trace. This reaches each step's paths without the steps
 * before it.
 */
static int isolated_main(emq_rx *x, int argc, char **argv, int quiet)
{
    long passed = 0, failed = 0;
    int load_error = 0;
    for (int i = 0; i < argc; i++) {
        emq_golden_file *f;
        emq_golden_case *c;
        char err[600];
        int rc;
        if (emq_golden_open(argv[i], &f, err, sizeof err) != 0) {
            fprintf(stderr, "ERROR %s\n", err);
            load_error = 1;
            continue;
        }
        while ((rc = emq_golden_next_case(f, &c, err, sizeof err)) == 1) {
            for (size_t k = 0; k < c->n; k++) {
                const emq_golden_step *s = &c->steps[k];
                emq_json_buf msg = {0};
                emq_golden_result res = {0};
                emq_json *ks = NULL;
                int bad = 0;
                if (emq_rx_reset(x, &msg) != 0 ||
                    (k > 0 && emq_rx_load(x, c->steps[k - 1].keyspace,
                                          s->now, &msg) != 0)) {
                    bad = 1;
                } else if (rx_run(x, s->verb, s->args, s->now, &res, &msg,
                                  first_part(s)) != 0) {
                    bad = 1;
                } else if (emq_golden_reply_diff(s->reply, res.reply, &msg)) {
                    bad = 1;
                } else if (res.has_published) {
                    emq_json null_v;
                    memset(&null_v, 0, sizeof null_v);
                    const emq_json *want = s->published ? s->published
                                                        : &null_v;
                    if (!res.published ||
                        !emq_json_equal(want, res.published)) {
                        emq_json_buf_puts(&msg, "published: expected ", 20);
                        emq_json_write(&msg, want, 400);
                        emq_json_buf_puts(&msg, ", got ", 6);
                        if (res.published)
                            emq_json_write(&msg, res.published, 400);
                        bad = 1;
                    }
                }
                if (!bad && (emq_rx_dump(x, &ks, &msg) != 0 ||
                             emq_golden_keyspace_diff(s->keyspace, ks, &msg)))
                    bad = 1;
                if (bad) {
                    failed++;
                    printf("FAIL %s: step %lld (%s): %s\n", c->name,
                           (long long)s->step, s->verb, msg.p ? msg.p : "");
                } else {
                    passed++;
                    if (!quiet)
                        printf("PASS %s step %lld (%s)\n", c->name,
                               (long long)s->step, s->verb);
                }
                emq_json_free(res.reply);
                emq_json_free(res.published);
                emq_json_free(ks);
                emq_json_buf_free(&msg);
            }
            emq_golden_case_free(c);
        }
        if (rc < 0) {
            fprintf(stderr, "ERROR %s\n", err);
            load_error = 1;
        }
        emq_golden_close(f);
    }
    printf("isolated: %ld steps passed, %ld failed\n", passed, failed);
    return load_error ? 2 : failed ? 1 : 0;
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    /* --list-verbs: the table as tests/lua/verbs.txt writes it. */
    if (argc == 2 && strcmp(argv[1], "--list-verbs") == 0) {
        const char *name;
        for (size_t i = 0; (name = emq_rx_verb_at(i)) != NULL; i++) {
            const verb_row *vb = verb_find(name);
            if (vb->script == HOST)
                printf("%s host:%s\n", name, name);
            else
                printf("%s %s.lua\n", name, script_names[vb->script]);
        }
        return 0;
    }
    const char *host = "127.0.0.1";
    const char *port_s = getenv("EMQ_REDIS_PORT");
    const char *lua = getenv("EMQ_LUA_DIR");
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0, rc, isolated = 0, quiet = 0;
    char err[700];

    if (!rest)
        return 2;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--host") == 0 && i + 1 < argc)
            host = argv[++i];
        else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port_s = argv[++i];
        else if (strcmp(argv[i], "--lua") == 0 && i + 1 < argc)
            lua = argv[++i];
        else if (strcmp(argv[i], "--isolated") == 0)
            isolated = 1;
        else {
            if (strcmp(argv[i], "--quiet") == 0)
                quiet = 1;
            rest[nrest++] = argv[i];
        }
    }
    if (!lua)
        lua = "tests/lua";
    if (!port_s) {
        fprintf(stderr, "golden_redis: no --port and no EMQ_REDIS_PORT\n");
        free(rest);
        return 2;
    }
    emq_rx *x = emq_rx_open(host, atoi(port_s), lua, err, sizeof err);
    if (!x) {
        fprintf(stderr, "golden_redis: %s\n", err);
        free(rest);
        return 2;
    }
    if (isolated) {
        int first = 1;
        while (first < nrest && rest[first][0] == '-')
            first++;
        rc = isolated_main(x, nrest - first, rest + first, quiet);
    } else {
        emq_golden_exec ex = emq_rx_exec(x);
        rc = emq_golden_main(nrest, rest, &ex);
    }
    if (x->old_consumers && x->compat_steps > 0)
        fprintf(stderr, "golden_redis: engine older than Redis 7.2: %ld "
                "step(s) completed with XGROUP CREATECONSUMER (an empty "
                "XREADGROUP > or XAUTOCLAIM creates no consumer there)\n",
                x->compat_steps);
    emq_rx_close(x);
    free(rest);
    return rc;
}
#endif /* EMQ_RX_NO_MAIN */
