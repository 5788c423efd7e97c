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
 * Owns: the Valkey executor of golden.h. Each verb runs as the reference's
 * host would run it: claim reads the pause flag first (HEXISTS) and runs
 * claim.lua only when it is absent; browse and pending_size are plain reads;
 * `raw` is sent as the command it names; every script call carries the
 * step's `now` as its trailing clock override (tests/lua/README.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hiredis/hiredis.h>

#include "golden.h"

#define MAXARGS 512

enum { S_ENQUEUE, S_SCHEDULE, S_CLAIM, S_COMPLETE, S_RETRY, S_PROMOTE, S_REAP,
       S_EXTEND_LOCK, S_EXTEND_LOCKS, S_SET_PAUSED, S_CLEAR_PAUSED, S_N };

static const char *const script_names[S_N] = {
    "enqueue", "schedule", "claim", "complete", "retry", "promote", "reap",
    "extend_lock", "extend_locks", "set_paused", "clear_paused"};

typedef struct rx {
    redisContext *c;
    char sha[S_N][41];
    int64_t now;
} rx;

/* An argument vector under construction: views plus owned scratch text. */
typedef struct argv_t {
    const char *v[MAXARGS];
    size_t n[MAXARGS];
    char num[MAXARGS][24];
    char keys[12][600];
    size_t argc, nkeys;
} argv_t;

static void say(emq_json_buf *b, const char *fmt, const char *a)
{
    char tmp[600];
    int n = snprintf(tmp, sizeof tmp, fmt, a);
    if (n > 0)
        emq_json_buf_puts(b, tmp, (size_t)n < sizeof tmp ? (size_t)n
                                                         : sizeof tmp - 1);
}

static int push(argv_t *a, const void *p, size_t n)
{
    if (a->argc >= MAXARGS)
        return -1;
    a->v[a->argc] = p;
    a->n[a->argc] = n;
    a->argc++;
    return 0;
}

static int push_s(argv_t *a, const char *s)
{
    return push(a, s, strlen(s));
}

static int push_i(argv_t *a, int64_t v)
{
    if (a->argc >= MAXARGS)
        return -1;
    int k = snprintf(a->num[a->argc], sizeof a->num[0], "%lld", (long long)v);
    return push(a, a->num[a->argc], (size_t)k);
}

/* Push the key B(q) + suffix (suffix may be "" for the base itself). */
static int push_key(argv_t *a, const char *q, const char *sfx)
{
    if (a->nkeys >= 12)
        return -1;
    char *k = a->keys[a->nkeys++];
    int n = snprintf(k, sizeof a->keys[0], "emq:{%s}:%s", q, sfx);
    if (n < 0 || (size_t)n >= sizeof a->keys[0])
        return -1;
    return push(a, k, (size_t)n);
}

/* ============================================================ replies */

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

static redisReply *call(rx *x, argv_t *a, emq_json_buf *err)
{
    redisReply *r = redisCommandArgv(x->c, (int)a->argc, a->v, a->n);
    if (!r) {
        say(err, "redis: %s", x->c->errstr);
        return NULL;
    }
    return r;
}

/* EVALSHA script `s` with the keys and args already pushed after the three
 * leading slots (EVALSHA, sha, numkeys) and the clock override appended. */
static int evalsha(rx *x, argv_t *a, int s, size_t nkeys,
                   emq_golden_result *res, emq_json_buf *err)
{
    a->v[0] = "EVALSHA";
    a->n[0] = 7;
    a->v[1] = x->sha[s];
    a->n[1] = 40;
    snprintf(a->num[2], sizeof a->num[2], "%zu", nkeys);
    a->v[2] = a->num[2];
    a->n[2] = strlen(a->num[2]);
    if (push_i(a, x->now) != 0) {
        say(err, "%s", "too many arguments");
        return -1;
    }
    redisReply *r = call(x, a, err);
    if (!r)
        return -1;
    res->reply = to_json(r);
    freeReplyObject(r);
    if (!res->reply) {
        say(err, "%s", "unexpected reply type or out of memory");
        return -1;
    }
    return 0;
}

/* ============================================================ the steps */

static int x_begin(void *ctx, const emq_golden_case *c, emq_json_buf *err)
{
    rx *x = ctx;
    (void)c;
    redisReply *r = redisCommand(x->c, "FLUSHALL");
    if (!r || r->type == REDIS_REPLY_ERROR) {
        say(err, "FLUSHALL failed: %s", r ? r->str : x->c->errstr);
        if (r)
            freeReplyObject(r);
        return -1;
    }
    freeReplyObject(r);
    return 0;
}

static void x_clock(void *ctx, int64_t now)
{
    ((rx *)ctx)->now = now;
}

static void x_end(void *ctx)
{
    (void)ctx;
}

/* Fetch the string argument `name`, or fail the step. */
#define STR(name, p, n)                                                   \
    do {                                                                  \
        if (emq_golden_arg_str(s, (name), &(p), &(n)) != 0) {             \
            say(err, "step lacks string argument %s", (name));            \
            return -1;                                                    \
        }                                                                 \
    } while (0)
#define INT(name, v)                                                      \
    do {                                                                  \
        if (emq_golden_arg_int(s, (name), &(v)) != 0) {                   \
            say(err, "step lacks integer argument %s", (name));           \
            return -1;                                                    \
        }                                                                 \
    } while (0)

/*
 * LINK(id) as the reference's host reads it before complete and retry:
 * fields parent, parent_queue, parent_policy of J(id). Fills `p` (parent,
 * or "" for none), `pq` (parent_queue when the link is cross-queue, else ""),
 * and *policy_id (1 when parent_policy is exactly "id"). Returns 0 or -1.
 */
static int read_link(rx *x, const char *jkey, const char *q, char *p,
                     char *pq, int *policy_id, emq_json_buf *err)
{
    redisReply *r = redisCommand(x->c, "HMGET %s parent parent_queue "
                                 "parent_policy", jkey);
    p[0] = pq[0] = '\0';
    *policy_id = 0;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        say(err, "HMGET failed: %s", r && r->str ? r->str : x->c->errstr);
        if (r)
            freeReplyObject(r);
        return -1;
    }
    const redisReply *par = r->element[0], *prq = r->element[1],
                     *pol = r->element[2];
    if (par->type == REDIS_REPLY_STRING && par->len < 256) {
        memcpy(p, par->str, par->len);
        p[par->len] = '\0';
        if (prq->type == REDIS_REPLY_STRING && prq->len < 256 &&
            (prq->len != strlen(q) || memcmp(prq->str, q, prq->len) != 0)) {
            memcpy(pq, prq->str, prq->len);
            pq[prq->len] = '\0';
        }
        *policy_id = pol->type == REDIS_REPLY_STRING && pol->len == 2 &&
                     memcmp(pol->str, "id", 2) == 0;
    }
    freeReplyObject(r);
    return 0;
}

/* J(p) + suffix of queue q into a key slot of `a`. */
static int push_pkey(argv_t *a, const char *q, const char *p, const char *sub)
{
    char sfx[300];
    snprintf(sfx, sizeof sfx, "job:%s%s%s", p, sub[0] ? ":" : "", sub);
    return push_key(a, q, sfx);
}

static int x_step(void *ctx, const emq_golden_step *s, emq_golden_result *res,
                  emq_json_buf *err)
{
    rx *x = ctx;
    const char *verb = s->verb;
    static argv_t a; /* large: keep it off the stack */
    const char *q = NULL, *id = NULL, *pl = NULL, *e = NULL;
    size_t ql = 0, idl = 0, pll = 0, el = 0;
    int64_t v1, v2, v3;
    char jkey[600];

    memset(&a, 0, sizeof a);
    a.argc = 3; /* EVALSHA sha numkeys */
    if (strcmp(verb, "advance") == 0) {
        res->reply = emq_json_new_null();
        return res->reply ? 0 : -1;
    }
    if (strcmp(verb, "raw") == 0) {
        emq_json *cmd = emq_golden_arg(s, "command");
        if (!cmd || cmd->type != EMQ_JSON_ARRAY || cmd->n == 0) {
            say(err, "%s", "raw step without a command");
            return -1;
        }
        a.argc = 0;
        for (size_t i = 0; i < cmd->n; i++)
            if (cmd->items[i]->type != EMQ_JSON_STRING ||
                push(&a, cmd->items[i]->s, cmd->items[i]->len) != 0) {
                say(err, "%s", "raw command element is not a string");
                return -1;
            }
        redisReply *r = call(x, &a, err);
        if (!r)
            return -1;
        res->reply = to_json(r);
        freeReplyObject(r);
        return res->reply ? 0 : -1;
    }
    STR("q", q, ql);
    (void)ql;
    if (emq_golden_arg(s, "id")) {
        STR("id", id, idl);
        snprintf(jkey, sizeof jkey, "emq:{%s}:job:%.*s", q, (int)idl, id);
    }

    if (strcmp(verb, "enqueue") == 0) {
        STR("payload", pl, pll);
        push_s(&a, jkey);
        push_key(&a, q, "pending");
        push(&a, id, idl);
        push(&a, pl, pll);
        return evalsha(x, &a, S_ENQUEUE, 2, res, err);
    }
    if (strcmp(verb, "enqueue_at") == 0 || strcmp(verb, "enqueue_in") == 0) {
        int at = verb[8] == 'a';
        STR("payload", pl, pll);
        if (at)
            INT("run_at_ms", v1);
        else
            INT("delay_ms", v1);
        push_s(&a, jkey);
        push_key(&a, q, "schedule");
        push(&a, id, idl);
        push(&a, pl, pll);
        push_s(&a, at ? "at" : "in");
        push_i(&a, v1);
        return evalsha(x, &a, S_SCHEDULE, 2, res, err);
    }
    if (strcmp(verb, "claim") == 0) {
        char meta[600];
        INT("lease_ms", v1);
        snprintf(meta, sizeof meta, "emq:{%s}:meta", q);
        redisReply *r = redisCommand(x->c, "HEXISTS %s paused", meta);
        if (!r || r->type != REDIS_REPLY_INTEGER) {
            say(err, "HEXISTS failed: %s", r ? (r->str ? r->str : "?")
                                             : x->c->errstr);
            if (r)
                freeReplyObject(r);
            return -1;
        }
        long long paused = r->integer;
        freeReplyObject(r);
        if (paused) {
            res->reply = emq_json_new_array();
            return res->reply ? 0 : -1;
        }
        push_key(&a, q, "pending");
        push_key(&a, q, "active");
        push_key(&a, q, "job:");
        push_i(&a, v1);
        return evalsha(x, &a, S_CLAIM, 2, res, err);
    }
    if (strcmp(verb, "complete") == 0) {
        char p[256], pq[256];
        int pid;
        const emq_json *res_arg = emq_golden_arg(s, "result");
        INT("token", v1);
        if (read_link(x, jkey, q, p, pq, &pid, err) != 0)
            return -1;
        push_key(&a, q, "active");
        push_s(&a, jkey);
        if (p[0] && !pq[0]) {
            push_pkey(&a, q, p, "dependencies");
            push_pkey(&a, q, p, "processed");
            push_pkey(&a, q, p, "");
        } else if (p[0]) {
            push_key(&a, q, "flow:outbox");
        }
        size_t nkeys = a.argc - 3;
        push(&a, id, idl);
        push_i(&a, v1);
        push_key(&a, q, "");
        if (p[0]) {
            push_s(&a, p);
            if (res_arg && res_arg->type == EMQ_JSON_STRING)
                push(&a, res_arg->s, res_arg->len);
            else
                push(&a, id, idl);
            if (pq[0]) {
                push_s(&a, "xq");
                push_s(&a, pq);
            }
        }
        return evalsha(x, &a, S_COMPLETE, nkeys, res, err);
    }
    if (strcmp(verb, "retry") == 0) {
        char p[256], pq[256];
        int pid;
        INT("token", v1);
        INT("delay_ms", v2);
        INT("max_attempts", v3);
        STR("error", e, el);
        if (read_link(x, jkey, q, p, pq, &pid, err) != 0)
            return -1;
        push_key(&a, q, "active");
        push_key(&a, q, "schedule");
        push_key(&a, q, "dead");
        push_s(&a, jkey);
        if (p[0] && !pq[0]) {
            push_pkey(&a, q, p, "failed");
            push_pkey(&a, q, p, "unsuccessful");
            push_pkey(&a, q, p, "dependencies");
            push_pkey(&a, q, p, "");
        } else if (p[0]) {
            push_key(&a, q, "flow:outbox");
        }
        size_t nkeys = a.argc - 3;
        push(&a, id, idl);
        push_i(&a, v1);
        push_i(&a, v2);
        push_i(&a, v3);
        push(&a, e, el);
        push_key(&a, q, "");
        if (p[0] && !pq[0]) {
            push_s(&a, pid ? "sq:id" : "sq:fp");
            push_s(&a, p);
        } else if (p[0]) {
            push_s(&a, pid ? "xq:id" : "xq:fp");
            push_s(&a, pq);
            push_s(&a, p);
        }
        return evalsha(x, &a, S_RETRY, nkeys, res, err);
    }
    if (strcmp(verb, "promote") == 0) {
        INT("batch", v1);
        push_key(&a, q, "schedule");
        push_key(&a, q, "pending");
        push_key(&a, q, "");
        push_i(&a, v1);
        return evalsha(x, &a, S_PROMOTE, 2, res, err);
    }
    if (strcmp(verb, "reap") == 0) {
        push_key(&a, q, "active");
        push_key(&a, q, "pending");
        push_key(&a, q, "");
        return evalsha(x, &a, S_REAP, 2, res, err);
    }
    if (strcmp(verb, "extend_lock") == 0) {
        INT("token", v1);
        INT("lease_ms", v2);
        push_key(&a, q, "active");
        push_s(&a, jkey);
        push(&a, id, idl);
        push_i(&a, v1);
        push_i(&a, v2);
        return evalsha(x, &a, S_EXTEND_LOCK, 2, res, err);
    }
    if (strcmp(verb, "extend_locks") == 0) {
        emq_json *pairs = emq_golden_arg(s, "pairs");
        INT("lease_ms", v1);
        if (!pairs || pairs->type != EMQ_JSON_ARRAY) {
            say(err, "%s", "extend_locks without pairs");
            return -1;
        }
        push_key(&a, q, "active");
        push_key(&a, q, "");
        push_i(&a, v1);
        for (size_t i = 0; i < pairs->n; i++) {
            const emq_json *p = pairs->items[i];
            if (p->type != EMQ_JSON_ARRAY || p->n != 2 ||
                p->items[0]->type != EMQ_JSON_STRING ||
                p->items[1]->type != EMQ_JSON_INT ||
                push(&a, p->items[0]->s, p->items[0]->len) != 0 ||
                push_i(&a, p->items[1]->i) != 0) {
                say(err, "%s", "malformed extend_locks pair");
                return -1;
            }
        }
        return evalsha(x, &a, S_EXTEND_LOCKS, 1, res, err);
    }
    if (strcmp(verb, "set_paused") == 0 || strcmp(verb, "clear_paused") == 0) {
        push_key(&a, q, "meta");
        return evalsha(x, &a, verb[0] == 's' ? S_SET_PAUSED : S_CLEAR_PAUSED,
                       1, res, err);
    }
    if (strcmp(verb, "browse") == 0 || strcmp(verb, "pending_size") == 0) {
        int browse = verb[0] == 'b';
        a.argc = 0;
        push_s(&a, browse ? "ZREVRANGE" : "ZCARD");
        push_key(&a, q, "pending");
        if (browse) {
            INT("n", v1);
            push_i(&a, 0);
            push_i(&a, v1 - 1);
        }
        redisReply *r = call(x, &a, err);
        if (!r)
            return -1;
        res->reply = to_json(r);
        freeReplyObject(r);
        return res->reply ? 0 : -1;
    }
    say(err, "verb %s is not in the Lua bundle", verb);
    return -1;
}

/* ============================================================ the dump */

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

static redisReply *cmd2(rx *x, const char *verb, const char *k, size_t kn)
{
    const char *v[2] = {verb, k};
    size_t n[2] = {strlen(verb), kn};
    return redisCommandArgv(x->c, 2, v, n);
}

/* One key's value as the trace writes it; NULL on failure. */
static emq_json *dump_value(rx *x, const char *k, size_t kn, const char *type)
{
    emq_json *v = NULL;
    redisReply *r = NULL;
    if (strcmp(type, "string") == 0) {
        r = cmd2(x, "GET", k, kn);
        if (r && r->type == REDIS_REPLY_STRING)
            v = emq_json_new_str(r->str, r->len);
    } else if (strcmp(type, "hash") == 0) {
        r = cmd2(x, "HGETALL", k, kn);
        if (r && r->type == REDIS_REPLY_ARRAY && (v = emq_json_new_object()))
            for (size_t i = 0; i + 1 < r->elements; i += 2)
                if (emq_json_set(v, r->element[i]->str, r->element[i]->len,
                                 emq_json_new_str(r->element[i + 1]->str,
                                                  r->element[i + 1]->len))) {
                    emq_json_free(v);
                    v = NULL;
                    break;
                }
    } else if (strcmp(type, "list") == 0 || strcmp(type, "set") == 0) {
        int set = type[0] == 's';
        if (set) {
            r = cmd2(x, "SMEMBERS", k, kn);
        } else {
            const char *av[4] = {"LRANGE", k, "0", "-1"};
            size_t an[4] = {6, kn, 1, 2};
            r = redisCommandArgv(x->c, 4, av, an);
        }
        if (r && r->type == REDIS_REPLY_ARRAY) {
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
        const char *av[5] = {"ZRANGE", k, "0", "-1", "WITHSCORES"};
        size_t an[5] = {6, kn, 1, 2, 10};
        r = redisCommandArgv(x->c, 5, av, an);
        if (r && r->type == REDIS_REPLY_ARRAY && (v = emq_json_new_array()))
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
    if (r)
        freeReplyObject(r);
    return v;
}

static int x_dump(void *ctx, emq_json **out, emq_json_buf *err)
{
    rx *x = ctx;
    emq_json *ks = emq_json_new_object();
    bkey *keys = NULL;
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
    for (size_t i = 0; i < r->elements; i++) {
        const char *k = keys[i].p;
        size_t kn = keys[i].n;
        if (kn == 13 && memcmp(k, "{emq}:version", 13) == 0)
            continue;
        redisReply *t = cmd2(x, "TYPE", k, kn);
        char type[16] = "";
        if (t && t->type == REDIS_REPLY_STATUS && t->len < sizeof type)
            memcpy(type, t->str, t->len);
        if (t)
            freeReplyObject(t);
        long long exp = -1;
        redisReply *e = cmd2(x, "PEXPIRETIME", k, kn);
        if (e && e->type == REDIS_REPLY_INTEGER && e->integer >= 0)
            exp = e->integer;
        if (e)
            freeReplyObject(e);
        emq_json *v = dump_value(x, k, kn, type);
        if (!v) {
            say(err, "cannot read key of type '%s'", type);
            goto done;
        }
        if (emq_golden_ks_add(ks, k, kn, type, v, exp) != 0)
            goto done;
    }
    *out = ks;
    ks = NULL;
    rc = 0;
done:
    emq_json_free(ks);
    free(keys);
    if (r)
        freeReplyObject(r);
    return rc;
}

/* ====================================================== isolated steps */

/* The verbs the bundle (and the host reads around it) can run. */
static int in_bundle(const char *verb)
{
    static const char *const v[] = {
        "enqueue", "enqueue_at", "enqueue_in", "claim", "complete", "retry",
        "promote", "reap", "extend_lock", "extend_locks", "set_paused",
        "clear_paused", "browse", "pending_size", NULL};
    for (int i = 0; v[i]; i++)
        if (strcmp(verb, v[i]) == 0)
            return 1;
    return 0;
}

/* Send one command built from views; 0 unless the server refused it. */
static int send_cmd(rx *x, size_t argc, const char **v, const size_t *n,
                    emq_json_buf *err)
{
    redisReply *r = redisCommandArgv(x->c, (int)argc, v, n);
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (!ok)
        say(err, "loading the keyspace: %s",
            r && r->str ? r->str : x->c->errstr);
    if (r)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

/*
 * Write a trace keyspace into the (flushed) server: one HSET / ZADD / RPUSH /
 * SADD / SET per key. Key expiries are not loaded (the trace's virtual
 * instants are in the server's past); the caller leaves them out of the
 * comparison too.
 */
static int load_keyspace(rx *x, const emq_json *ks, emq_json_buf *err)
{
    for (size_t i = 0; i < ks->n; i++) {
        const emq_json_member *m = &ks->members[i];
        const emq_json *t = emq_json_get(m->val, "type");
        const emq_json *v = emq_json_get(m->val, "value");
        if (!t || t->type != EMQ_JSON_STRING || !v) {
            say(err, "%s", "malformed keyspace entry");
            return -1;
        }
        size_t cap = 2 + 2 * (v->type == EMQ_JSON_STRING ? 1 : v->n);
        const char **av = calloc(cap, sizeof *av);
        size_t *an = calloc(cap, sizeof *an);
        char (*num)[32] = calloc(cap, sizeof *num);
        size_t argc = 0;
        int rc = -1;
        if (!av || !an || !num)
            goto next;
        av[1] = m->key;
        an[1] = m->klen;
        argc = 2;
        if (strcmp(t->s, "string") == 0 && v->type == EMQ_JSON_STRING) {
            av[0] = "SET";
            av[argc] = v->s;
            an[argc++] = v->len;
        } else if (strcmp(t->s, "hash") == 0 && v->type == EMQ_JSON_OBJECT) {
            av[0] = "HSET";
            for (size_t j = 0; j < v->n; j++) {
                av[argc] = v->members[j].key;
                an[argc++] = v->members[j].klen;
                av[argc] = v->members[j].val->s;
                an[argc++] = v->members[j].val->len;
            }
        } else if (strcmp(t->s, "zset") == 0 && v->type == EMQ_JSON_ARRAY) {
            av[0] = "ZADD";
            for (size_t j = 0; j < v->n; j++) {
                const emq_json *pr = v->items[j];
                const emq_json *sc = pr->items[1];
                if (sc->type == EMQ_JSON_INT)
                    snprintf(num[argc], sizeof num[0], "%lld",
                             (long long)sc->i);
                else
                    snprintf(num[argc], sizeof num[0], "%.17g", sc->d);
                av[argc] = num[argc];
                an[argc] = strlen(num[argc]);
                argc++;
                av[argc] = pr->items[0]->s;
                an[argc++] = pr->items[0]->len;
            }
        } else if ((strcmp(t->s, "list") == 0 || strcmp(t->s, "set") == 0) &&
                   v->type == EMQ_JSON_ARRAY) {
            av[0] = t->s[0] == 'l' ? "RPUSH" : "SADD";
            for (size_t j = 0; j < v->n; j++) {
                av[argc] = v->items[j]->s;
                an[argc++] = v->items[j]->len;
            }
        } else {
            say(err, "cannot load a key of type %s", t->s);
            goto next;
        }
        an[0] = strlen(av[0]);
        rc = send_cmd(x, argc, av, an, err);
    next:
        free(av);
        free(an);
        free(num);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* A copy of a trace keyspace without its key expiries (see load_keyspace). */
static emq_json *without_expiry(const emq_json *ks)
{
    emq_json *out = emq_json_new_object();
    for (size_t i = 0; out && i < ks->n; i++) {
        const emq_json *e = ks->members[i].val;
        emq_json *c = emq_json_new_object();
        const emq_json *t = emq_json_get(e, "type"), *v = emq_json_get(e, "value");
        if (!c || emq_json_set(c, "type", 4, emq_json_dup(t)) ||
            emq_json_set(c, "value", 5, emq_json_dup(v)) ||
            emq_json_set(out, ks->members[i].key, ks->members[i].klen, c)) {
            emq_json_free(out);
            return NULL;
        }
    }
    return out;
}

/*
 * --isolated: every step whose verb the bundle runs is replayed alone: the
 * server is loaded with the keyspace the trace recorded before it, the step
 * runs at its `now`, and its reply and the keyspace after it are compared
 * with the trace. This checks the bundle's group and flow paths against the
 * Tier 2-4 traces, whose other verbs the bundle does not implement.
 */
static int isolated_main(rx *x, int argc, char **argv, int quiet)
{
    long passed = 0, failed = 0, skipped = 0;
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
                emq_json *ks = NULL, *want = NULL;
                int bad = 0;
                if (!in_bundle(s->verb)) {
                    skipped++;
                    continue;
                }
                if (x_begin(x, c, &msg) != 0 ||
                    (k > 0 && load_keyspace(x, c->steps[k - 1].keyspace,
                                            &msg) != 0)) {
                    bad = 1;
                } else {
                    x->now = s->now;
                    if (x_step(x, s, &res, &msg) != 0)
                        bad = 1;
                    else if (emq_golden_reply_diff(s->reply, res.reply, &msg))
                        bad = 1;
                    else if (x_dump(x, &ks, &msg) != 0 ||
                             !(want = without_expiry(s->keyspace)))
                        bad = 1;
                    else if (emq_golden_keyspace_diff(want, ks, &msg))
                        bad = 1;
                }
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
                emq_json_free(ks);
                emq_json_free(want);
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
    printf("isolated: %ld steps passed, %ld failed, %ld skipped (verbs "
           "outside the bundle)\n", passed, failed, skipped);
    return load_error ? 2 : failed ? 1 : 0;
}

/* ============================================================ main */

static int load_scripts(rx *x, const char *dir)
{
    for (int i = 0; i < S_N; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.lua", dir, script_names[i]);
        FILE *f = fopen(path, "rb");
        if (!f) {
            fprintf(stderr, "golden_redis: %s: %s\n", path, strerror(errno));
            return -1;
        }
        char *src = NULL;
        size_t n = 0, cap = 0;
        for (;;) {
            if (n + 4096 > cap) {
                cap = cap ? 2 * cap : 16384;
                char *p = realloc(src, cap);
                if (!p) {
                    free(src);
                    fclose(f);
                    return -1;
                }
                src = p;
            }
            size_t got = fread(src + n, 1, cap - n, f);
            n += got;
            if (got == 0)
                break;
        }
        fclose(f);
        const char *av[3] = {"SCRIPT", "LOAD", src};
        size_t an[3] = {6, 4, n};
        redisReply *r = redisCommandArgv(x->c, 3, av, an);
        free(src);
        if (!r || r->type != REDIS_REPLY_STRING || r->len != 40) {
            fprintf(stderr, "golden_redis: SCRIPT LOAD %s: %s\n", path,
                    r && r->str ? r->str : x->c->errstr);
            if (r)
                freeReplyObject(r);
            return -1;
        }
        memcpy(x->sha[i], r->str, 40);
        x->sha[i][40] = '\0';
        freeReplyObject(r);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1";
    const char *port_s = getenv("EMQ_REDIS_PORT");
    const char *lua = getenv("EMQ_LUA_DIR");
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0, rc, isolated = 0, quiet = 0;
    rx x;

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
    memset(&x, 0, sizeof x);
    x.c = redisConnect(host, atoi(port_s));
    if (!x.c || x.c->err) {
        fprintf(stderr, "golden_redis: connect %s:%s: %s\n", host, port_s,
                x.c ? x.c->errstr : "out of memory");
        if (x.c)
            redisFree(x.c);
        free(rest);
        return 2;
    }
    if (load_scripts(&x, lua) != 0) {
        redisFree(x.c);
        free(rest);
        return 2;
    }
    emq_golden_exec ex = {"redis", &x, x_begin, x_clock, x_step, x_dump,
                          x_end};
    if (isolated) {
        int first = 1;
        while (first < nrest && rest[first][0] == '-')
            first++;
        rc = isolated_main(&x, nrest - first, rest + first, quiet);
    } else {
        rc = emq_golden_main(nrest, rest, &ex);
    }
    redisFree(x.c);
    free(rest);
    return rc;
}
