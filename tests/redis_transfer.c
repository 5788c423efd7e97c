/*
 * redis_transfer.c — emqlite and a real server running the Lua bundle
 * (tests/lua/) side by side: the fixtures of the transfer tests, the
 * differential conformance run, and the continuation checks after a push
 * and after a pull.
 *
 *   tests/redis_transfer fixture DB
 *       build the transfer fixture in the new file DB at a pinned clock T0
 *       (the wall clock when it runs, so that the server's own clock agrees
 *       about key expiries) and print T0
 *   tests/redis_transfer diff PORT LUADIR SEEDS STEPS
 *       run a scripted sequence and SEEDS randomized sequences of STEPS
 *       Tier 1 verbs on emqlite (injected clock) and through the bundle on
 *       the server at PORT (the clock override ARGV, same NOW): every reply
 *       must be identical, and the keyspaces every 10 steps and at the end
 *   tests/redis_transfer cont-server PORT LUADIR T0
 *       after `emqlite push` of the fixture: the bundle continues the
 *       replayed queues (claim with the next token, complete, reap,
 *       promote, retry to dead, pause gate, extend) at T0 + 1 h
 *   tests/redis_transfer seed-server PORT LUADIR
 *       create jobs on the (flushed) server through the bundle at T1 (the
 *       wall clock) and print T1
 *   tests/redis_transfer cont-file DB T1
 *       after `emqlite pull` of those: emqlite continues them at T1 + 60 s
 *   tests/redis_transfer bulk DB N
 *       (by hand, for measurements) N jobs of 100-byte payloads in queue
 *       "bulk", enqueue_many in batches of 1000
 *
 * Each mode prints what it checked and exits 0 when everything held. The
 * server must be private to the test (modes FLUSHALL it). Driven by
 * tests/redis_transfer.sh under tests/redis_harness.sh.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <hiredis/hiredis.h>

#include "emqlite.h"
#include "store.h"
#include "db.h"
#include "ksdump.h"
#include "luabundle.h"
#include "srvdump.h"

static int failures;

static void bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL: ", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    failures++;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- text */

/* Texts are emq_bufs (always NUL-terminated); STR(b) reads one as C text. */
#define STR(b) ((const char *)(b).p)

static void t_put(emq_buf *t, const void *p, size_t n)
{
    if (emq_buf_append(t, p, n) != EMQ_OK) {
        fputs("out of memory\n", stderr);
        exit(99);
    }
}

static void t_fmt(emq_buf *t, const char *fmt, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    t_put(t, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* Bytes, escaped so that any byte string is one readable token. */
static void t_bytes(emq_buf *t, const void *p, size_t n)
{
    const unsigned char *s = p;
    t_put(t, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7F && s[i] != '"' && s[i] != '\\')
            t_put(t, &s[i], 1);
        else
            t_fmt(t, "\\x%02x", s[i]);
    }
    t_put(t, "\"", 1);
}

/* A server reply in the common reply notation. */
static void t_reply(emq_buf *t, const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        t_fmt(t, "%lld", (long long)r->integer);
        break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
        t_bytes(t, r->str, r->len);
        break;
    case REDIS_REPLY_NIL:
        t_put(t, "nil", 3);
        break;
    case REDIS_REPLY_ERROR:
        t_put(t, "ERR(", 4);
        t_put(t, r->str, r->len);
        t_put(t, ")", 1);
        break;
    case REDIS_REPLY_ARRAY:
        t_put(t, "[", 1);
        for (size_t i = 0; i < r->elements; i++) {
            if (i)
                t_put(t, ",", 1);
            t_reply(t, r->element[i]);
        }
        t_put(t, "]", 1);
        break;
    default:
        t_fmt(t, "?%d", r->type);
    }
}

/* ------------------------------------------------------------ the bundle */

enum { S_ENQUEUE, S_SCHEDULE, S_CLAIM, S_COMPLETE, S_RETRY, S_PROMOTE, S_REAP,
       S_EXTEND_LOCK, S_EXTEND_LOCKS, S_SET_PAUSED, S_CLEAR_PAUSED, S_N };

static const char *const script_names[S_N] = {
    "enqueue", "schedule", "claim", "complete", "retry", "promote", "reap",
    "extend_lock", "extend_locks", "set_paused", "clear_paused"};

typedef struct bx {
    redisContext *c;
    char sha[S_N][41];
} bx;

static redisReply *must(redisContext *c, redisReply *r)
{
    if (!r) {
        fprintf(stderr, "redis_transfer: server: %s\n", c->errstr);
        exit(99);
    }
    return r;
}

/* A command whose reply does not matter (but must arrive). */
static void plain(bx *x, const char *cmd)
{
    freeReplyObject(must(x->c, redisCommand(x->c, cmd)));
}

static void bx_connect(bx *x, const char *port, const char *luadir)
{
    memset(x, 0, sizeof *x);
    x->c = redisConnect("127.0.0.1", atoi(port));
    if (!x->c || x->c->err) {
        fprintf(stderr, "redis_transfer: cannot connect to port %s\n", port);
        exit(99);
    }
    char err[600];
    if (luadir && emq_luabundle_load(x->c, luadir, script_names, S_N, x->sha,
                                     err, sizeof err) != 0) {
        fprintf(stderr, "redis_transfer: %s\n", err);
        exit(99);
    }
}

/* An argument vector: views plus owned number text. */
#define MAXA 160
typedef struct av_t {
    const char *v[MAXA];
    size_t n[MAXA];
    char own[MAXA][24];
    int argc;
    int eval;                  /* EVALSHA: a_run appends the clock override */
} av_t;

static void a_bytes(av_t *a, const void *p, size_t n)
{
    a->v[a->argc] = p;
    a->n[a->argc] = n;
    a->argc++;
}

static void a_str(av_t *a, const char *s)
{
    a_bytes(a, s, strlen(s));
}

static void a_int(av_t *a, int64_t v)
{
    int n = snprintf(a->own[a->argc], sizeof a->own[0], "%lld", (long long)v);
    a_bytes(a, a->own[a->argc], (size_t)n);
}

/* A plain command. */
static void a_cmd(av_t *a, const char *name)
{
    a->argc = 0;
    a->eval = 0;
    a_str(a, name);
}

/* A script call; its keys and arguments follow. */
static void a_start(av_t *a, bx *x, int script, int nkeys)
{
    a_cmd(a, "EVALSHA");
    a->eval = 1;
    a_bytes(a, x->sha[script], 40);
    a_int(a, nkeys);
}

/* Run the command; a script call gets `now` as its trailing clock override
 * (tests/lua/README.md: every script accepts one, those without a clock
 * ignore it). */
static redisReply *a_run(bx *x, av_t *a, int64_t now)
{
    if (a->eval)
        a_int(a, now);
    return must(x->c, redisCommandArgv(x->c, a->argc, a->v, a->n));
}

/* ------------------------------------------------------------ the steps */

enum { V_ENQUEUE, V_AT, V_IN, V_CLAIM, V_COMPLETE, V_RETRY, V_PROMOTE,
       V_REAP, V_EXTEND, V_EXTENDS, V_PAUSE, V_RESUME, V_BROWSE, V_SIZE,
       V_MANY, V_N };

static const char *const verb_names[V_N] = {
    "enqueue", "enqueue_at", "enqueue_in", "claim", "complete", "retry",
    "promote", "reap", "extend_lock", "extend_locks", "pause", "resume",
    "browse", "pending_size", "enqueue_many"};

#define MAXIDS 8
typedef struct step {
    int verb;
    const char *q;
    char id[EMQ_ID_SIZE];
    unsigned char payload[64];
    size_t plen;
    int64_t token, a, b;       /* lease/delay/batch/n/run-at; max attempts */
    char error[24];
    size_t nids;               /* extend_locks, enqueue_many */
    char ids[MAXIDS][EMQ_ID_SIZE];
    int64_t tokens[MAXIDS];
} step;

static void describe(emq_buf *t, const step *s)
{
    t_fmt(t, "%s %s %s", verb_names[s->verb], s->q, s->id);
    if (s->verb == V_COMPLETE || s->verb == V_RETRY || s->verb == V_EXTEND)
        t_fmt(t, " token %lld", (long long)s->token);
    t_fmt(t, " a %lld b %lld", (long long)s->a, (long long)s->b);
}

/* --------------------------------------------------------- on emqlite */

static void e_rc(emq_buf *t, emq_db *db, int rc)
{
    if (rc < 0) {
        t_put(t, "ERR(", 4);
        t_put(t, emq_errmsg(db), strlen(emq_errmsg(db)));
        t_put(t, ")", 1);
    } else {
        t_fmt(t, "rc%d", rc);
    }
}

static void run_emq(emq_db *db, const step *s, emq_buf *t)
{
    int rc;
    int64_t n = 0;
    emq_job job;
    switch (s->verb) {
    case V_ENQUEUE:
    case V_AT:
    case V_IN:
        rc = s->verb == V_ENQUEUE
                 ? emq_enqueue(db, s->q, s->id, s->payload, s->plen)
             : s->verb == V_AT
                 ? emq_enqueue_at(db, s->q, s->id, s->payload, s->plen, s->a)
                 : emq_enqueue_in(db, s->q, s->id, s->payload, s->plen, s->a);
        if (rc == EMQ_ENQUEUED || rc == EMQ_SCHEDULED)
            t_put(t, "1", 1);
        else if (rc == EMQ_DUPLICATE)
            t_put(t, "0", 1);
        else
            e_rc(t, db, rc);
        break;
    case V_CLAIM:
        rc = emq_claim(db, s->q, s->a, &job);
        if (rc == EMQ_EMPTY) {
            t_put(t, "[]", 2);
        } else if (rc == EMQ_OK) {
            t_put(t, "[", 1);
            t_bytes(t, job.id, strlen(job.id));
            t_put(t, ",", 1);
            if (job.payload)
                t_bytes(t, job.payload, job.payload_len);
            else
                t_put(t, "nil", 3);
            t_fmt(t, ",%lld]", (long long)job.attempts);
            emq_job_clear(&job);
        } else {
            e_rc(t, db, rc);
        }
        break;
    case V_COMPLETE:
        rc = emq_complete(db, s->q, s->id, s->token);
        if (rc == EMQ_OK)
            t_put(t, "1", 1);
        else if (rc == EMQ_GONE)
            t_put(t, "0", 1);
        else
            e_rc(t, db, rc);
        break;
    case V_RETRY:
        rc = emq_retry(db, s->q, s->id, s->token, s->a, s->b, s->error,
                       strlen(s->error));
        if (rc == EMQ_SCHEDULED)
            t_bytes(t, "scheduled", 9);
        else if (rc == EMQ_DEAD)
            t_bytes(t, "dead", 4);
        else
            e_rc(t, db, rc);
        break;
    case V_PROMOTE:
    case V_REAP:
        rc = s->verb == V_PROMOTE ? emq_promote(db, s->q, s->a, &n)
                                  : emq_reap(db, s->q, &n);
        if (rc == EMQ_OK)
            t_fmt(t, "%lld", (long long)n);
        else
            e_rc(t, db, rc);
        break;
    case V_EXTEND:
        rc = emq_lock_extend(db, s->q, s->id, s->token, s->a);
        if (rc == EMQ_OK)
            t_put(t, "1", 1);
        else if (rc == EMQ_GONE)
            t_put(t, "-1", 2);
        else
            e_rc(t, db, rc);
        break;
    case V_EXTENDS: {
        const char *ids[MAXIDS];
        int failed[MAXIDS];
        for (size_t i = 0; i < s->nids; i++)
            ids[i] = s->ids[i];
        rc = emq_lock_extend_many(db, s->q, s->nids, ids, s->tokens, s->a, failed,
                              NULL);
        if (rc != EMQ_OK) {
            e_rc(t, db, rc);
            break;
        }
        t_put(t, "[", 1);
        for (size_t i = 0, k = 0; i < s->nids; i++)
            if (failed[i]) {
                if (k++)
                    t_put(t, ",", 1);
                t_bytes(t, ids[i], strlen(ids[i]));
            }
        t_put(t, "]", 1);
        break;
    }
    case V_PAUSE:
    case V_RESUME:
        rc = s->verb == V_PAUSE ? emq_queue_pause(db, s->q) : emq_queue_resume(db, s->q);
        if (rc == EMQ_OK)
            t_put(t, "1", 1);
        else
            e_rc(t, db, rc);
        break;
    case V_BROWSE: {
        char ids[16][EMQ_ID_SIZE];
        size_t cnt = 0;
        rc = emq_browse(db, s->q, (size_t)s->a, ids, &cnt);
        if (rc != EMQ_OK) {
            e_rc(t, db, rc);
            break;
        }
        t_put(t, "[", 1);
        for (size_t i = 0; i < cnt; i++) {
            if (i)
                t_put(t, ",", 1);
            t_bytes(t, ids[i], strlen(ids[i]));
        }
        t_put(t, "]", 1);
        break;
    }
    case V_SIZE:
        rc = emq_pending_size(db, s->q, &n);
        if (rc == EMQ_OK)
            t_fmt(t, "%lld", (long long)n);
        else
            e_rc(t, db, rc);
        break;
    case V_MANY: {
        emq_item it[MAXIDS];
        int verdicts[MAXIDS];
        for (size_t i = 0; i < s->nids; i++) {
            it[i].id = s->ids[i];
            it[i].payload = s->payload;
            it[i].len = s->plen;
        }
        rc = emq_enqueue_many(db, s->q, it, s->nids, verdicts);
        if (rc != EMQ_OK) {
            e_rc(t, db, rc);
            break;
        }
        t_put(t, "[", 1);
        for (size_t i = 0; i < s->nids; i++) {
            if (i)
                t_put(t, ",", 1);
            if (verdicts[i] == EMQ_ENQUEUED)
                t_put(t, "1", 1);
            else if (verdicts[i] == EMQ_DUPLICATE)
                t_put(t, "0", 1);
            else
                t_put(t, "ERR(EMQKIND job id must be JOB-namespaced)", 42);
        }
        t_put(t, "]", 1);
        break;
    }
    }
}

/* ------------------------------------------------------ on the server */

static void run_srv(bx *x, int64_t now, const step *s, emq_buf *t)
{
    av_t a;
    char base[200], key1[300], key2[300], key3[300], key4[300];
    redisReply *r;
    snprintf(base, sizeof base, "emq:{%s}:", s->q);
#define K(buf, sfx) (snprintf(buf, sizeof buf, "%s%s", base, sfx), buf)
#define J(buf, id) (snprintf(buf, sizeof buf, "%sjob:%s", base, id), buf)
    switch (s->verb) {
    case V_ENQUEUE:
        a_start(&a, x, S_ENQUEUE, 2);
        a_str(&a, J(key1, s->id));
        a_str(&a, K(key2, "pending"));
        a_str(&a, s->id);
        a_bytes(&a, s->payload, s->plen);
        break;
    case V_AT:
    case V_IN:
        a_start(&a, x, S_SCHEDULE, 2);
        a_str(&a, J(key1, s->id));
        a_str(&a, K(key2, "schedule"));
        a_str(&a, s->id);
        a_bytes(&a, s->payload, s->plen);
        a_str(&a, s->verb == V_AT ? "at" : "in");
        a_int(&a, s->a);
        break;
    case V_CLAIM: {
        a_cmd(&a, "HEXISTS");
        a_str(&a, K(key1, "meta"));
        a_str(&a, "paused");
        r = a_run(x, &a, now);
        int paused = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
        freeReplyObject(r);
        if (paused) {
            t_put(t, "[]", 2);
            return;
        }
        a_start(&a, x, S_CLAIM, 2);
        a_str(&a, K(key1, "pending"));
        a_str(&a, K(key2, "active"));
        a_str(&a, K(key3, "job:"));
        a_int(&a, s->a);
        break;
    }
    case V_COMPLETE:
        a_start(&a, x, S_COMPLETE, 2);
        a_str(&a, K(key1, "active"));
        a_str(&a, J(key2, s->id));
        a_str(&a, s->id);
        a_int(&a, s->token);
        a_str(&a, base);
        break;
    case V_RETRY:
        a_start(&a, x, S_RETRY, 4);
        a_str(&a, K(key1, "active"));
        a_str(&a, K(key2, "schedule"));
        a_str(&a, K(key3, "dead"));
        a_str(&a, J(key4, s->id));
        a_str(&a, s->id);
        a_int(&a, s->token);
        a_int(&a, s->a);
        a_int(&a, s->b);
        a_str(&a, s->error);
        a_str(&a, base);
        break;
    case V_PROMOTE:
        a_start(&a, x, S_PROMOTE, 2);
        a_str(&a, K(key1, "schedule"));
        a_str(&a, K(key2, "pending"));
        a_str(&a, base);
        a_int(&a, s->a);
        break;
    case V_REAP:
        a_start(&a, x, S_REAP, 2);
        a_str(&a, K(key1, "active"));
        a_str(&a, K(key2, "pending"));
        a_str(&a, base);
        break;
    case V_EXTEND:
        a_start(&a, x, S_EXTEND_LOCK, 2);
        a_str(&a, K(key1, "active"));
        a_str(&a, J(key2, s->id));
        a_str(&a, s->id);
        a_int(&a, s->token);
        a_int(&a, s->a);
        break;
    case V_EXTENDS:
        a_start(&a, x, S_EXTEND_LOCKS, 1);
        a_str(&a, K(key1, "active"));
        a_str(&a, base);
        a_int(&a, s->a);
        for (size_t i = 0; i < s->nids; i++) {
            a_str(&a, s->ids[i]);
            a_int(&a, s->tokens[i]);
        }
        break;
    case V_PAUSE:
    case V_RESUME:
        a_start(&a, x, s->verb == V_PAUSE ? S_SET_PAUSED : S_CLEAR_PAUSED, 1);
        a_str(&a, K(key1, "meta"));
        break;
    case V_BROWSE:
        a_cmd(&a, "ZREVRANGE");
        a_str(&a, K(key1, "pending"));
        a_str(&a, "0");
        a_int(&a, s->a - 1);
        break;
    case V_SIZE:
        a_cmd(&a, "ZCARD");
        a_str(&a, K(key1, "pending"));
        break;
    case V_MANY:
        /* T1.2 on a server: the items in order, each one enqueue. */
        t_put(t, "[", 1);
        for (size_t i = 0; i < s->nids; i++) {
            a_start(&a, x, S_ENQUEUE, 2);
            a_str(&a, J(key1, s->ids[i]));
            a_str(&a, K(key2, "pending"));
            a_str(&a, s->ids[i]);
            a_bytes(&a, s->payload, s->plen);
            r = a_run(x, &a, now);
            if (i)
                t_put(t, ",", 1);
            t_reply(t, r);
            freeReplyObject(r);
        }
        t_put(t, "]", 1);
        return;
    }
#undef K
#undef J
    r = a_run(x, &a, now);
    t_reply(t, r);
    freeReplyObject(r);
}

/* ----------------------------------------------------- the keyspaces */

/* The server's keyspace in tests/ksdump.h text ({emq}:version left out). */
static void server_dump(bx *x, emq_buf *out)
{
    if (sd_dump(x->c, out, NULL, NULL) < 0) {
        fprintf(stderr, "redis_transfer: server: %s\n", x->c->errstr);
        exit(99);
    }
}

static int same_keyspace(emq_db *db, bx *x, int64_t now, const char *where)
{
    emq_buf mine = {0}, theirs = {0};
    int ok = 1;
    if (kd_store(emq_db_store(db), now, &mine) != EMQ_OK) {
        bad("%s: cannot dump the file", where);
        return 0;
    }
    emq_buf_append(&mine, "", 1);
    server_dump(x, &theirs);
    if (mine.len != theirs.len || memcmp(mine.p, theirs.p, mine.len) != 0) {
        bad("%s: keyspaces differ\n--- emqlite\n%s--- server\n%s", where,
            STR(mine), STR(theirs));
        ok = 0;
    }
    emq_buf_free(&mine);
    emq_buf_free(&theirs);
    return ok;
}

/* ---------------------------------------------------------- the clock */

static int64_t clock_now;

static int64_t test_clock(void *ctx)
{
    (void)ctx;
    return clock_now;
}

static emq_db *open_db(const char *path)
{
    emq_options o;
    emq_db *db;
    char err[256] = "";
    emq_options_init(&o);
    o.clock = test_clock;
    if (emq_open_ex(path, &o, &db, err, sizeof err) != EMQ_OK) {
        fprintf(stderr, "redis_transfer: open %s: %s\n", path, err);
        exit(99);
    }
    return db;
}

/* --------------------------------------------------------- differential */

static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t range(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

#define NPOOL 24
static const char *const queues[2] = { "alpha", "beta-2" };

static void pick_id(char id[EMQ_ID_SIZE])
{
    if (rnd() % 25 == 0)
        emq_id_encode("ORD", (uint64_t)range(1, 3), id); /* EMQKIND */
    else
        emq_id_encode("JOB", (uint64_t)(5000 + range(0, NPOOL - 1)), id);
}

/* A token that is mostly the live one (read from emqlite's row). */
static int64_t pick_token(emq_db *db, const char *q, const char *id)
{
    emq_field *f = NULL;
    size_t n = 0;
    int64_t att = 1;
    if (emq_job_get(db, q, id, &f, &n) == EMQ_OK) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(f[i].name, "attempts") == 0)
                att = strtoll(f[i].value, NULL, 10);
        emq_fields_free(f, n);
    }
    int r = (int)(rnd() % 10);
    return r < 7 ? att : r < 9 ? att + 1 : 0;
}

static void random_step(emq_db *db, step *s)
{
    static const int weights[V_N] = { 16, 5, 5, 18, 12, 10, 6, 5, 6, 3, 2, 3,
                                      3, 2, 3 };
    int total = 0, w;
    for (int i = 0; i < V_N; i++)
        total += weights[i];
    w = (int)(rnd() % (uint64_t)total);
    memset(s, 0, sizeof *s);
    for (s->verb = 0; w >= weights[s->verb]; s->verb++)
        w -= weights[s->verb];
    s->q = queues[rnd() % 4 == 0 ? 1 : 0];
    pick_id(s->id);
    s->plen = (size_t)range(0, 20);
    for (size_t i = 0; i < s->plen; i++)
        s->payload[i] = (unsigned char)(rnd() % 4 == 0 ? 0 : range(1, 255));
    switch (s->verb) {
    case V_AT:
        s->a = clock_now + range(-5000, 20000);
        break;
    case V_IN:
        s->a = range(0, 10000);
        break;
    case V_CLAIM:
        s->a = range(500, 20000);
        break;
    case V_COMPLETE:
    case V_EXTEND:
        s->token = pick_token(db, s->q, s->id);
        s->a = range(500, 20000);
        break;
    case V_RETRY:
        s->token = pick_token(db, s->q, s->id);
        s->a = range(0, 5000);
        s->b = range(1, 4);
        snprintf(s->error, sizeof s->error, "err\x01%d", (int)range(0, 99));
        break;
    case V_PROMOTE:
        s->a = range(1, 5);
        break;
    case V_BROWSE:
        s->a = range(1, 16);
        break;
    case V_EXTENDS:
    case V_MANY:
        s->nids = (size_t)range(1, 4);
        s->a = range(500, 20000);
        for (size_t i = 0; i < s->nids; i++) {
            pick_id(s->ids[i]);
            s->tokens[i] = pick_token(db, s->q, s->ids[i]);
        }
        break;
    }
}

/* What the randomized runs reached: (verb, reply shape) counts. */
static struct { int verb; char shape[48]; int n; } reached[96];
static int nreached;

static void tally(const step *s, const char *reply)
{
    char shape[48];
    if (strncmp(reply, "ERR(", 4) == 0)
        snprintf(shape, sizeof shape, "%.*s", (int)strcspn(reply + 4, ")"),
                 reply + 4);
    else if (reply[0] == '[')
        snprintf(shape, sizeof shape, "%s", strcmp(reply, "[]") == 0 ? "[]"
                 : s->verb == V_CLAIM ? "job" : "[...]");
    else if (reply[0] == '"')
        snprintf(shape, sizeof shape, "%s", reply);
    else
        snprintf(shape, sizeof shape, "%s", atoll(reply) > 1 ? ">1" : reply);
    for (int i = 0; i < nreached; i++)
        if (reached[i].verb == s->verb && !strcmp(reached[i].shape, shape)) {
            reached[i].n++;
            return;
        }
    if (nreached < 96) {
        reached[nreached].verb = s->verb;
        snprintf(reached[nreached].shape, sizeof reached[0].shape, "%s",
                 shape);
        reached[nreached++].n = 1;
    }
}

/* One step on both sides at the same NOW; the replies must agree. */
static int both(emq_db *db, bx *x, const step *s, const char *where, int n)
{
    emq_buf a = {0}, b = {0};
    int ok = 1;
    run_emq(db, s, &a);
    run_srv(x, clock_now, s, &b);
    if (strcmp(STR(a), STR(b)) != 0) {
        emq_buf d = {0};
        describe(&d, s);
        bad("%s step %d (%s) at %lld: emqlite %s, server %s", where, n, STR(d),
            (long long)clock_now, STR(a), STR(b));
        emq_buf_free(&d);
        ok = 0;
    }
    tally(s, STR(a));
    emq_buf_free(&a);
    emq_buf_free(&b);
    return ok;
}

static step mk(int verb, const char *q, uint64_t snow, int64_t token,
               int64_t a, int64_t b, const char *payload)
{
    step s;
    memset(&s, 0, sizeof s);
    s.verb = verb;
    s.q = q;
    emq_id_encode(snow >= 900000 ? "ORD" : "JOB", snow, s.id);
    s.token = token;
    s.a = a;
    s.b = b;
    if (payload) {
        s.plen = strlen(payload);
        memcpy(s.payload, payload, s.plen);
    }
    snprintf(s.error, sizeof s.error, "boom");
    return s;
}

/* Every verb and every reply shape, in an order that reaches them. */
static int scripted(emq_db *db, bx *x)
{
    const char *q = "alpha";
    step s[64];
    int n = 0, ok = 1;
    s[n++] = mk(V_ENQUEUE, q, 1, 0, 0, 0, "one");
    s[n++] = mk(V_ENQUEUE, q, 1, 0, 0, 0, "dup");            /* 0 */
    s[n++] = mk(V_ENQUEUE, q, 900001, 0, 0, 0, "kind");      /* EMQKIND */
    s[n++] = mk(V_ENQUEUE, q, 2, 0, 0, 0, "two");
    s[n++] = mk(V_SIZE, q, 0, 0, 0, 0, NULL);
    s[n++] = mk(V_BROWSE, q, 0, 0, 5, 0, NULL);
    s[n++] = mk(V_CLAIM, q, 0, 0, 1000, 0, NULL);            /* 1, token 1 */
    s[n++] = mk(V_COMPLETE, q, 1, 2, 0, 0, NULL);            /* stale */
    s[n++] = mk(V_EXTEND, q, 1, 2, 5000, 0, NULL);           /* stale */
    s[n++] = mk(V_EXTEND, q, 1, 1, 5000, 0, NULL);           /* 1 */
    s[n++] = mk(V_EXTEND, q, 77, 1, 5000, 0, NULL);          /* -1 gone */
    s[n++] = mk(V_RETRY, q, 1, 1, 2000, 3, NULL);            /* scheduled */
    s[n++] = mk(V_RETRY, q, 78, 1, 2000, 3, NULL);           /* job gone */
    s[n++] = mk(V_RETRY, q, 1, 7, 2000, 3, NULL);            /* mismatch */
    s[n++] = mk(V_PROMOTE, q, 0, 0, 10, 0, NULL);            /* 0: not due */
    s[n++] = mk(V_AT, q, 3, 0, 0, 0, "at");                  /* run-at 0 */
    s[n++] = mk(V_IN, q, 4, 0, 60000, 0, "in");
    s[n++] = mk(V_IN, q, 3, 0, 1, 0, "dup");                 /* 0 */
    s[n++] = mk(V_PAUSE, q, 0, 0, 0, 0, NULL);
    s[n++] = mk(V_CLAIM, q, 0, 0, 1000, 0, NULL);            /* paused: [] */
    s[n++] = mk(V_RESUME, q, 0, 0, 0, 0, NULL);
    s[n++] = mk(V_CLAIM, q, 0, 0, 1000, 0, NULL);            /* 2 */
    s[n++] = mk(V_COMPLETE, q, 2, 1, 0, 0, NULL);            /* 1 */
    s[n++] = mk(V_COMPLETE, q, 2, 1, 0, 0, NULL);            /* 0 gone */
    s[n++] = mk(V_CLAIM, q, 0, 0, 1000, 0, NULL);            /* [] */
    s[n++] = mk(V_PROMOTE, q, 0, 0, 10, 0, NULL);            /* 1 and 3 */
    s[n++] = mk(V_CLAIM, q, 0, 0, 500, 0, NULL);             /* 1, token 2 */
    s[n++] = mk(V_CLAIM, q, 0, 0, 500, 0, NULL);             /* 3 */
    s[n++] = mk(V_REAP, q, 0, 0, 0, 0, NULL);                /* 0 */
    s[n++] = mk(V_REAP, q, 0, 0, 0, 0, NULL);                /* later: 2 */
    s[n++] = mk(V_CLAIM, q, 0, 0, 1000, 0, NULL);            /* 1, token 3 */
    s[n++] = mk(V_RETRY, q, 1, 3, 0, 3, NULL);               /* dead */
    s[n++] = mk(V_COMPLETE, q, 1, 3, 0, 0, NULL);            /* dead row: 1 */
    s[n++] = mk(V_MANY, q, 0, 0, 0, 0, "many");
    s[n - 1].nids = 4;
    emq_id_encode("JOB", 10, s[n - 1].ids[0]);
    emq_id_encode("JOB", 11, s[n - 1].ids[1]);
    emq_id_encode("ORD", 12, s[n - 1].ids[2]);
    emq_id_encode("JOB", 10, s[n - 1].ids[3]);
    s[n++] = mk(V_CLAIM, q, 0, 0, 1000, 0, NULL);
    s[n++] = mk(V_CLAIM, q, 0, 0, 1000, 0, NULL);
    s[n++] = mk(V_EXTENDS, q, 0, 0, 9000, 0, NULL);
    s[n - 1].nids = 3;
    emq_id_encode("JOB", 3, s[n - 1].ids[0]);
    s[n - 1].tokens[0] = 1;
    emq_id_encode("JOB", 10, s[n - 1].ids[1]);
    s[n - 1].tokens[1] = 2;                                  /* mismatch */
    emq_id_encode("JOB", 99, s[n - 1].ids[2]);
    s[n - 1].tokens[2] = 1;                                  /* no row */
    s[n++] = mk(V_BROWSE, q, 0, 0, 3, 0, NULL);
    s[n++] = mk(V_SIZE, "beta-2", 0, 0, 0, 0, NULL);
    for (int i = 0; i < n; i++) {
        clock_now += i == 29 ? 10000 : 700;
        ok &= both(db, x, &s[i], "scripted", i);
    }
    ok &= same_keyspace(db, x, clock_now, "scripted");
    return ok;
}

static int do_diff(const char *port, const char *lua, int seeds, int steps)
{
    bx x;
    bx_connect(&x, port, lua);
    int total = 0, ok;
    /* the scripted sequence */
    plain(&x, "FLUSHALL");
    clock_now = INT64_C(1767225600000);
    emq_db *db = open_db(":memory:");
    ok = scripted(db, &x);
    emq_close(db);
    printf("scripted: %s\n", ok ? "replies and keyspace identical" : "FAIL");
    for (int seed = 1; seed <= seeds; seed++) {
        plain(&x, "FLUSHALL");
        rng = 0x9E3779B97F4A7C15ull * (uint64_t)seed;
        clock_now = INT64_C(1767225600000) + seed * 1000;
        db = open_db(":memory:");
        int before = failures;
        for (int i = 0; i < steps && failures == before; i++) {
            step s;
            clock_now += rnd() % 20 == 0 ? 30000 : range(0, 2500);
            random_step(db, &s);
            both(db, &x, &s, "random", i);
            if ((i + 1) % 10 == 0 || i + 1 == steps) {
                char where[64];
                snprintf(where, sizeof where, "seed %d after step %d", seed,
                         i);
                same_keyspace(db, &x, clock_now, where);
            }
            total++;
        }
        emq_close(db);
        printf("seed %d: %d steps %s\n", seed, steps,
               failures == before ? "identical" : "DIFFER");
    }
    printf("reached:");
    for (int v = 0; v < V_N; v++)
        for (int i = 0; i < nreached; i++)
            if (reached[i].verb == v)
                printf(" %s %s x%d;", verb_names[v], reached[i].shape,
                       reached[i].n);
    printf("\ndifferential: %d random steps, %d failures\n", total,
           failures);
    redisFree(x.c);
    return failures != 0;
}

/* ------------------------------------------------------------- fixtures */

#define KX(s) s, sizeof(s) - 1

static int raw_fixture(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    const char *const *ids = ctx;
    char key[128];
    int64_t len;
    int rc = EMQ_OK;
    (void)db;
    snprintf(key, sizeof key, "emq:{mail}:job:%s:logs", ids[3]);
    for (int i = 0; i < 70 && rc == EMQ_OK; i++) {
        char v[32];
        int n = snprintf(v, sizeof v, "log line %d", i);
        rc = emq_list_push(st, key, strlen(key), 1, i == 3 ? "b\0in\xff" : v,
                           i == 3 ? 5 : (size_t)n, &len);
    }
    snprintf(key, sizeof key, "emq:{mail}:job:%s:lock", ids[2]);
    if (rc == EMQ_OK)
        rc = emq_str_set(st, key, strlen(key), KX("1"),
                         now + 4 * INT64_C(3600000), 0, NULL);
    return rc;
}

/* The fixture's ids: F D E A B C G H I J K (snowflakes 101..111). */
static void fixture_ids(char id[11][EMQ_ID_SIZE])
{
    for (int i = 0; i < 11; i++)
        emq_id_encode("JOB", (uint64_t)(101 + i), id[i]);
}

enum { F, D, E, A, B, C, G, H, I, Jj, Kk };

static const char payload_a[] = "alpha\0\x01\xff bin";
#define PAYLOAD_A_LEN (sizeof payload_a - 1)

static int do_fixture(const char *path)
{
    char id[11][EMQ_ID_SIZE], big[300];
    emq_job job;
    int rc = 0;
    remove(path);
    clock_now = wall_ms();
    emq_db *db = open_db(path);
    fixture_ids(id);
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)('a' + i % 26);
    big[17] = '\0';
    int64_t T0 = clock_now;
#define TRY(x, want) do { int r_ = (x); if (r_ != (want)) { \
        bad("%s: %d %s", #x, r_, emq_errmsg(db)); rc = 1; goto out; } } while (0)
#define CLAIM(want) do { TRY(emq_claim(db, "mail", lease, &job), EMQ_OK); \
        if (strcmp(job.id, id[want])) { bad("claimed %s", job.id); rc = 1; } \
        emq_job_clear(&job); } while (0)
    int64_t lease = 1000;
    TRY(emq_enqueue(db, "mail", id[F], "f", 1), EMQ_ENQUEUED);
    TRY(emq_enqueue(db, "mail", id[D], "d", 1), EMQ_ENQUEUED);
    TRY(emq_enqueue(db, "mail", id[E], "e", 1), EMQ_ENQUEUED);
    CLAIM(F);
    TRY(emq_retry(db, "mail", id[F], 1, 0, 5, "flaky", 5), EMQ_SCHEDULED);
    lease = 600000;
    CLAIM(D);
    lease = 7200000;
    CLAIM(E);
    TRY(emq_enqueue(db, "mail", id[I], "i", 1), EMQ_ENQUEUED);
    lease = 1000;
    CLAIM(I);
    TRY(emq_retry(db, "mail", id[I], 1, 0, 1, "fatal\0x", 7), EMQ_DEAD);
    TRY(emq_enqueue(db, "mail", id[Jj], "j", 1), EMQ_ENQUEUED);
    CLAIM(Jj);
    TRY(emq_complete(db, "mail", id[Jj], 1), EMQ_OK);
    int64_t moved;
    TRY(emq_promote(db, "mail", 10, &moved), EMQ_OK);
    TRY(emq_enqueue(db, "mail", id[A], payload_a, PAYLOAD_A_LEN),
        EMQ_ENQUEUED);
    TRY(emq_enqueue(db, "mail", id[B], "b\r\n", 3), EMQ_ENQUEUED);
    TRY(emq_enqueue(db, "mail", id[C], big, sizeof big), EMQ_ENQUEUED);
    TRY(emq_enqueue_at(db, "mail", id[G], "g", 1, T0 + 60000), EMQ_SCHEDULED);
    TRY(emq_enqueue_at(db, "mail", id[H], "h", 1, T0 + 86400000),
        EMQ_SCHEDULED);
    TRY(emq_enqueue(db, "other", id[Kk], "k", 1), EMQ_ENQUEUED);
    TRY(emq_queue_pause(db, "other"), EMQ_OK);
    const char *ids[11];
    for (int i = 0; i < 11; i++)
        ids[i] = id[i];
    TRY(emq_db_run(db, 1, raw_fixture, (void *)ids), EMQ_OK);
    printf("%lld\n", (long long)T0);
out:
    emq_close(db);
    return rc;
#undef CLAIM
#undef TRY
}

/* ------------------------------------------------------ continuations */

static int expect_reply(bx *x, int64_t now, const step *s, const char *want)
{
    emq_buf t = {0};
    run_srv(x, now, s, &t);
    int ok = strcmp(STR(t), want) == 0;
    emq_buf d = {0};
    describe(&d, s);
    if (!ok)
        bad("server %s: got %s, want %s", STR(d), STR(t), want);
    else
        printf("ok: server %s -> %s\n", STR(d), STR(t));
    emq_buf_free(&t);
    emq_buf_free(&d);
    return ok;
}

static void expect_int(bx *x, const char *cmd, const char *key, long long want)
{
    redisReply *r = must(x->c, redisCommand(x->c, "%s %s", cmd, key));
    long long got = r->type == REDIS_REPLY_INTEGER ? r->integer
                  : r->type == REDIS_REPLY_STRING ? atoll(r->str) : -999;
    if (got != want)
        bad("%s %s = %lld, want %lld", cmd, key, got, want);
    else
        printf("ok: %s %s = %lld\n", cmd, key, got);
    freeReplyObject(r);
}

static void expect_hget(bx *x, const char *key, const char *field,
                        long long want)
{
    redisReply *r = must(x->c, redisCommand(x->c, "HGET %s %s", key, field));
    long long got = r->type == REDIS_REPLY_STRING ? atoll(r->str) : -999;
    if (got != want)
        bad("HGET %s %s = %lld, want %lld", key, field, got, want);
    else
        printf("ok: HGET %s %s = %lld\n", key, field, got);
    freeReplyObject(r);
}

/* The claim reply the server must give for job `who` with `token`. */
static void claim_want(emq_buf *t, const char *id, const void *p, size_t n,
                       int64_t token)
{
    t->len = 0;
    t_put(t, "[", 1);
    t_bytes(t, id, strlen(id));
    t_put(t, ",", 1);
    t_bytes(t, p, n);
    t_fmt(t, ",%lld]", (long long)token);
}

static int do_cont_server(const char *port, const char *lua, int64_t T0)
{
    bx x;
    char id[11][EMQ_ID_SIZE];
    emq_buf w = {0};
    bx_connect(&x, port, lua);
    fixture_ids(id);
    int64_t now = T0 + 3600000;
    step s;
    s = mk(V_CLAIM, "mail", 0, 0, 30000, 0, NULL);
    claim_want(&w, id[F], "f", 1, 2);                 /* the next token */
    expect_reply(&x, now, &s, STR(w));
    s = mk(V_COMPLETE, "mail", 101 + F, 2, 0, 0, NULL);
    expect_reply(&x, now, &s, "1");
    s = mk(V_REAP, "mail", 0, 0, 0, 0, NULL);         /* D lapsed, E not */
    expect_reply(&x, now, &s, "1");
    s = mk(V_PROMOTE, "mail", 0, 0, 100, 0, NULL);    /* G due, H not */
    expect_reply(&x, now, &s, "1");
    s = mk(V_CLAIM, "mail", 0, 0, 30000, 0, NULL);
    claim_want(&w, id[D], "d", 1, 2);
    expect_reply(&x, now, &s, STR(w));
    s = mk(V_RETRY, "mail", 101 + D, 2, 1000, 2, NULL);
    expect_reply(&x, now, &s, "\"dead\"");
    s = mk(V_CLAIM, "mail", 0, 0, 30000, 0, NULL);
    claim_want(&w, id[A], payload_a, PAYLOAD_A_LEN, 1);  /* NUL bytes */
    expect_reply(&x, now, &s, STR(w));
    s = mk(V_COMPLETE, "mail", 101 + A, 1, 0, 0, NULL);
    expect_reply(&x, now, &s, "1");
    s = mk(V_COMPLETE, "mail", 101 + B, 5, 0, 0, NULL);
    expect_reply(&x, now, &s, "ERR(EMQSTALE complete token mismatch)");
    s = mk(V_CLAIM, "other", 0, 0, 30000, 0, NULL);   /* paused */
    expect_reply(&x, now, &s, "[]");
    s = mk(V_EXTEND, "mail", 101 + E, 1, 60000, 0, NULL);
    expect_reply(&x, now, &s, "1");
    expect_int(&x, "ZCARD", "emq:{mail}:pending", 3);   /* B C G */
    expect_int(&x, "ZCARD", "emq:{mail}:active", 1);    /* E */
    expect_int(&x, "ZCARD", "emq:{mail}:schedule", 1);  /* H */
    expect_int(&x, "ZCARD", "emq:{mail}:dead", 2);      /* I D */
    expect_hget(&x, "emq:{mail}:metrics:completed", "count", 3);
    expect_hget(&x, "emq:{mail}:metrics:failed", "count", 2);
    char k[80];
    snprintf(k, sizeof k, "emq:{mail}:job:%s:logs", id[A]);
    expect_int(&x, "LLEN", k, 70);
    snprintf(k, sizeof k, "emq:{mail}:job:%s:lock", id[E]);
    redisReply *r = must(x.c, redisCommand(x.c, "PEXPIRETIME %s", k));
    if (r->type != REDIS_REPLY_INTEGER || r->integer != T0 + 4 * 3600000)
        bad("the lock key's expiry did not survive the push");
    else
        printf("ok: the lock key expires at T0 + 4 h\n");
    freeReplyObject(r);
    emq_buf_free(&w);
    redisFree(x.c);
    return failures != 0;
}

static int do_seed_server(const char *port, const char *lua)
{
    bx x;
    bx_connect(&x, port, lua);
    int64_t T1 = wall_ms();
    step s;
    plain(&x, "FLUSHALL");
    plain(&x, "SET {emq}:version echomq:4.0.0 NX");
    s = mk(V_ENQUEUE, "jobs", 201, 0, 0, 0, "p1");
    expect_reply(&x, T1, &s, "1");
    s = mk(V_ENQUEUE, "jobs", 202, 0, 0, 0, NULL);
    memcpy(s.payload, "p\0two", 5);
    s.plen = 5;
    expect_reply(&x, T1, &s, "1");
    s = mk(V_ENQUEUE, "jobs", 203, 0, 0, 0, "p3");
    expect_reply(&x, T1, &s, "1");
    char id[EMQ_ID_SIZE];
    emq_buf w = {0};
    s = mk(V_CLAIM, "jobs", 0, 0, 1000, 0, NULL);
    emq_id_encode("JOB", 201, id);
    claim_want(&w, id, "p1", 2, 1);
    expect_reply(&x, T1, &s, STR(w));
    s = mk(V_CLAIM, "jobs", 0, 0, 1000, 0, NULL);
    emq_id_encode("JOB", 202, id);
    claim_want(&w, id, "p\0two", 5, 1);
    expect_reply(&x, T1, &s, STR(w));
    emq_buf_free(&w);
    s = mk(V_RETRY, "jobs", 202, 1, 0, 5, NULL);
    expect_reply(&x, T1, &s, "\"scheduled\"");
    s = mk(V_AT, "jobs", 204, 0, T1 + 86400000, 0, "p4");
    expect_reply(&x, T1, &s, "1");
    s = mk(V_ENQUEUE, "jobs2", 205, 0, 0, 0, "q1");
    expect_reply(&x, T1, &s, "1");
    s = mk(V_PAUSE, "jobs2", 0, 0, 0, 0, NULL);
    expect_reply(&x, T1, &s, "1");
    printf("%lld\n", (long long)T1);
    redisFree(x.c);
    return failures != 0;
}

static void expect_claim(emq_db *db, const char *q, uint64_t snow,
                         const void *p, size_t n, int64_t token)
{
    emq_job job;
    char id[EMQ_ID_SIZE];
    emq_id_encode("JOB", snow, id);
    int rc = emq_claim(db, q, 30000, &job);
    if (rc != EMQ_OK || strcmp(job.id, id) || job.attempts != token ||
        job.payload_len != n || memcmp(job.payload, p, n))
        bad("emqlite claim %s: rc %d id %s token %lld, want %s token %lld",
            q, rc, rc == EMQ_OK ? job.id : "-",
            rc == EMQ_OK ? (long long)job.attempts : -1LL, id,
            (long long)token);
    else
        printf("ok: emqlite claim %s -> %s token %lld\n", q, id,
               (long long)token);
    if (rc == EMQ_OK)
        emq_job_clear(&job);
}

static void expect_rc(emq_db *db, const char *what, int rc, int want)
{
    if (rc != want)
        bad("emqlite %s: %d (%s), want %d", what, rc, emq_errmsg(db), want);
    else
        printf("ok: emqlite %s -> %d\n", what, rc);
}

static int do_cont_file(const char *path, int64_t T1)
{
    char id[6][EMQ_ID_SIZE];
    int64_t n = -1;
    emq_job job;
    emq_stats st;
    size_t nv = 99;
    for (int i = 0; i < 6; i++)
        emq_id_encode("JOB", (uint64_t)(200 + i), id[i]);
    clock_now = T1 + 60000;
    emq_db *db = open_db(path);
    expect_rc(db, "reap jobs", emq_reap(db, "jobs", &n), EMQ_OK);
    if (n != 1)
        bad("reap moved %lld, want 1 (P1's lease lapsed)", (long long)n);
    expect_rc(db, "promote jobs", emq_promote(db, "jobs", 100, &n), EMQ_OK);
    if (n != 1)
        bad("promote moved %lld, want 1 (P2 is due)", (long long)n);
    expect_claim(db, "jobs", 201, "p1", 2, 2);
    expect_rc(db, "complete P1", emq_complete(db, "jobs", id[1], 2), EMQ_OK);
    expect_claim(db, "jobs", 202, "p\0two", 5, 2);
    expect_rc(db, "retry P2 to dead",
              emq_retry(db, "jobs", id[2], 2, 0, 2, "x", 1), EMQ_DEAD);
    expect_claim(db, "jobs", 203, "p3", 2, 1);
    expect_rc(db, "complete P3", emq_complete(db, "jobs", id[3], 1), EMQ_OK);
    expect_rc(db, "claim jobs (empty)", emq_claim(db, "jobs", 1000, &job),
              EMQ_EMPTY);
    expect_rc(db, "claim jobs2 (paused)", emq_claim(db, "jobs2", 1000, &job),
              EMQ_EMPTY);
    expect_rc(db, "stats jobs", emq_stats_get(db, "jobs", &st), EMQ_OK);
    if (st.pending || st.active || st.scheduled != 1 || st.dead != 1 ||
        st.completed != 2 || st.failed != 1)
        bad("stats jobs: pending %lld active %lld scheduled %lld dead %lld "
            "completed %lld failed %lld", (long long)st.pending,
            (long long)st.active, (long long)st.scheduled,
            (long long)st.dead, (long long)st.completed,
            (long long)st.failed);
    else
        printf("ok: stats jobs: scheduled 1 dead 1 completed 2 failed 1\n");
    expect_rc(db, "check", emq_check(db, NULL, NULL, &nv), EMQ_OK);
    if (nv != 0)
        bad("check: %zu violations", nv);
    emq_close(db);
    return failures != 0;
}

/* By hand (not in make check): N jobs with 100-byte payloads in queue
 * "bulk", enqueue_many in batches of 1000; prints the time taken. */
static int do_bulk(const char *path, long n)
{
    emq_db *db;
    emq_item items[1000];
    int verdicts[1000];
    char ids[1000][EMQ_ID_SIZE];
    unsigned char payload[1000][100];
    remove(path);
    if (emq_open(path, NULL, &db) != EMQ_OK)
        return 1;
    double t0 = (double)wall_ms();
    for (long done = 0; done < n;) {
        size_t k = n - done < 1000 ? (size_t)(n - done) : 1000;
        for (size_t i = 0; i < k; i++) {
            emq_mint(db, "JOB", ids[i]);
            for (int b = 0; b < 100; b++)
                payload[i][b] = (unsigned char)((done + (long)i) * 31 + b);
            items[i].id = ids[i];
            items[i].payload = payload[i];
            items[i].len = 100;
        }
        if (emq_enqueue_many(db, "bulk", items, k, verdicts) != EMQ_OK) {
            fprintf(stderr, "enqueue_many: %s\n", emq_errmsg(db));
            emq_close(db);
            return 1;
        }
        done += (long)k;
    }
    printf("enqueued %ld jobs in %.2f s\n", n,
           ((double)wall_ms() - t0) / 1000);
    emq_close(db);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "bulk") == 0)
        return do_bulk(argv[2], atol(argv[3]));
    if (argc == 3 && strcmp(argv[1], "fixture") == 0)
        return do_fixture(argv[2]);
    if (argc == 6 && strcmp(argv[1], "diff") == 0)
        return do_diff(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
    if (argc == 5 && strcmp(argv[1], "cont-server") == 0)
        return do_cont_server(argv[2], argv[3], strtoll(argv[4], NULL, 10));
    if (argc == 4 && strcmp(argv[1], "seed-server") == 0)
        return do_seed_server(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "cont-file") == 0)
        return do_cont_file(argv[2], strtoll(argv[3], NULL, 10));
    fprintf(stderr, "usage: %s fixture DB | diff PORT LUADIR SEEDS STEPS | "
            "cont-server PORT LUADIR T0 | seed-server PORT LUADIR | "
            "cont-file DB T1 | bulk DB N\n", argv[0]);
    return 2;
}
