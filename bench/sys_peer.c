/*
 * sys_peer.c — the peer: the same transitions on a redis-server (or
 * valkey-server) over loopback, executed by the Lua bundle of tests/lua
 * (embedded at build time) through EVALSHA, via hiredis.
 *
 * Calls follow tests/lua/README.md, including what the caller does host-side
 * as the reference does: claim reads the pause flag (HEXISTS B.meta paused)
 * before running claim.lua, and complete reads LINK(id) (HMGET J(id) parent
 * parent_queue parent_policy) to pick complete.lua's shape. So a claim is two
 * round trips and a complete two, as they are for a real EchoMQ client.
 * enqueue_many is pipelined: EVALSHA enqueue.lua per item with at most
 * BENCH_WINDOW requests in flight.
 *
 * Rule: every reply is checked as strictly as the other systems' verdicts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "bench.h"

#ifdef HAVE_HIREDIS
#include <hiredis/hiredis.h>
#include "lua_bundle.h"

#define B_Q "emq:{" BENCH_QUEUE "}:"

typedef struct peer_sys {
    redisContext *c;
    char sha_enq[41], sha_claim[41], sha_cmp[41];
    int server_pid;
    char dir[512];
} peer_sys;

static int reply_err(bsys *s, const char *what, redisContext *c, redisReply *r)
{
    int rc;
    if (r == NULL)
        rc = bench_err(s, "peer %s: %s", what, c->errstr);
    else if (r->type == REDIS_REPLY_ERROR)
        rc = bench_err(s, "peer %s: %s", what, r->str);
    else
        rc = bench_err(s, "peer %s: unexpected reply type %d", what, r->type);
    if (r) freeReplyObject(r);
    return rc;
}

static int load(bsys *s, peer_sys *p, const char *src, char sha[41])
{
    redisReply *r = redisCommand(p->c, "SCRIPT LOAD %s", src);
    if (r == NULL || r->type != REDIS_REPLY_STRING || r->len != 40)
        return reply_err(s, "SCRIPT LOAD", p->c, r);
    memcpy(sha, r->str, 41);
    freeReplyObject(r);
    return 0;
}

static void jkey(char *out, const char *id)
{
    memcpy(out, B_Q "job:", sizeof B_Q "job:" - 1);
    memcpy(out + sizeof B_Q "job:" - 1, id, EMQ_ID_LEN + 1);
}

/* EVALSHA enqueue.lua 2 J(id) B.pending id payload */
static void enq_args(peer_sys *p, const char *id, char *jk, const char **av,
                     size_t *al)
{
    jkey(jk, id);
    av[0] = "EVALSHA"; al[0] = 7;
    av[1] = p->sha_enq; al[1] = 40;
    av[2] = "2"; al[2] = 1;
    av[3] = jk; al[3] = strlen(jk);
    av[4] = B_Q "pending"; al[4] = sizeof B_Q "pending" - 1;
    av[5] = id; al[5] = EMQ_ID_LEN;
    av[6] = (const char *)bench_payload; al[6] = BENCH_PAYLOAD;
}

static int enq_reply(bsys *s, peer_sys *p, redisReply *r)
{
    if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer != 1)
        return reply_err(s, "enqueue", p->c, r);
    freeReplyObject(r);
    return 0;
}

static int p_enqueue(bsys *s, const char *id)
{
    peer_sys *p = s->h;
    char jk[64];
    const char *av[7];
    size_t al[7];
    enq_args(p, id, jk, av, al);
    return enq_reply(s, p, redisCommandArgv(p->c, 7, av, al));
}

static int p_many(bsys *s, const bench_item *it, size_t n)
{
    peer_sys *p = s->h;
    char jk[64];
    const char *av[7];
    size_t al[7], sent = 0, got = 0;
    void *r;
    int rc = 0;
    /* A sliding window: replies are read one at a time; hiredis flushes the
     * appended requests whenever it has to wait for a reply. */
    while (sent < n && sent < BENCH_WINDOW) {
        enq_args(p, it[sent].id, jk, av, al);
        if (redisAppendCommandArgv(p->c, 7, av, al) != REDIS_OK)
            return reply_err(s, "append", p->c, NULL);
        sent++;
    }
    while (got < n) {
        if (redisGetReply(p->c, &r) != REDIS_OK)
            return reply_err(s, "pipeline", p->c, NULL);
        got++;
        if (rc == 0) rc = enq_reply(s, p, r);
        else freeReplyObject(r);
        if (sent < n) {
            enq_args(p, it[sent].id, jk, av, al);
            if (redisAppendCommandArgv(p->c, 7, av, al) != REDIS_OK)
                return reply_err(s, "append", p->c, NULL);
            sent++;
        }
    }
    return rc;
}

static int p_claim(bsys *s, char id[EMQ_ID_SIZE], int64_t *token)
{
    peer_sys *p = s->h;
    redisReply *r, *e;
    char lease[24];
    snprintf(lease, sizeof lease, "%d", BENCH_LEASE_MS);
    const char *av[7];
    size_t al[7];
    /* Step 1, host-side: the queue-wide pause gate. */
    r = redisCommand(p->c, "HEXISTS %s paused", B_Q "meta");
    if (r == NULL || r->type != REDIS_REPLY_INTEGER)
        return reply_err(s, "HEXISTS", p->c, r);
    if (r->integer == 1) {
        freeReplyObject(r);
        return 1;
    }
    freeReplyObject(r);
    /* EVALSHA claim.lua 2 B.pending B.active B(q)job: lease_ms */
    av[0] = "EVALSHA"; al[0] = 7;
    av[1] = p->sha_claim; al[1] = 40;
    av[2] = "2"; al[2] = 1;
    av[3] = B_Q "pending"; al[3] = sizeof B_Q "pending" - 1;
    av[4] = B_Q "active"; al[4] = sizeof B_Q "active" - 1;
    av[5] = B_Q "job:"; al[5] = sizeof B_Q "job:" - 1;
    av[6] = lease; al[6] = strlen(lease);
    r = redisCommandArgv(p->c, 7, av, al);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY)
        return reply_err(s, "claim", p->c, r);
    if (r->elements == 0) {
        freeReplyObject(r);
        return 1;
    }
    if (r->elements != 3 || r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[0]->len != EMQ_ID_LEN ||
        r->element[1]->type != REDIS_REPLY_STRING ||
        r->element[1]->len != BENCH_PAYLOAD ||
        memcmp(r->element[1]->str, bench_payload, BENCH_PAYLOAD) != 0 ||
        r->element[2]->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        return bench_err(s, "peer claim: malformed reply");
    }
    e = r->element[0];
    memcpy(id, e->str, EMQ_ID_LEN);
    id[EMQ_ID_LEN] = 0;
    *token = r->element[2]->integer;
    freeReplyObject(r);
    return 0;
}

static int p_complete(bsys *s, const char *id, int64_t token)
{
    peer_sys *p = s->h;
    redisReply *r;
    char jk[64], tok[24];
    const char *av[8];
    size_t al[8], i;
    jkey(jk, id);
    /* LINK(id), host-side: no parent fields → the two-KEYS shape. */
    r = redisCommand(p->c, "HMGET %s parent parent_queue parent_policy", jk);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3)
        return reply_err(s, "HMGET", p->c, r);
    for (i = 0; i < 3; i++)
        if (r->element[i]->type != REDIS_REPLY_NIL) {
            freeReplyObject(r);
            return bench_err(s, "peer complete: unexpected link");
        }
    freeReplyObject(r);
    snprintf(tok, sizeof tok, "%lld", (long long)token);
    av[0] = "EVALSHA"; al[0] = 7;
    av[1] = p->sha_cmp; al[1] = 40;
    av[2] = "2"; al[2] = 1;
    av[3] = B_Q "active"; al[3] = sizeof B_Q "active" - 1;
    av[4] = jk; al[4] = strlen(jk);
    av[5] = id; al[5] = EMQ_ID_LEN;
    av[6] = tok; al[6] = strlen(tok);
    av[7] = B_Q; al[7] = sizeof B_Q - 1;
    r = redisCommandArgv(p->c, 8, av, al);
    if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer != 1)
        return reply_err(s, "complete", p->c, r);
    freeReplyObject(r);
    return 0;
}

static int p_pending(bsys *s, int64_t *n)
{
    peer_sys *p = s->h;
    redisReply *r = redisCommand(p->c, "ZCARD %s", B_Q "pending");
    if (r == NULL || r->type != REDIS_REPLY_INTEGER)
        return reply_err(s, "ZCARD", p->c, r);
    *n = r->integer;
    freeReplyObject(r);
    return 0;
}

static int p_settle(bsys *s)
{
    (void)s;
    return 0;   /* appendfsync always: the AOF is complete after each reply */
}

static int p_foot(bsys *s, bench_foot *f)
{
    peer_sys *p = s->h;
    redisReply *r = redisCommand(p->c, "INFO memory");
    const char *m;
    if (r == NULL || r->type != REDIS_REPLY_STRING)
        return reply_err(s, "INFO", p->c, r);
    m = strstr(r->str, "used_memory:");
    f->mem_bytes = m ? strtoll(m + 12, NULL, 10) : -1;
    freeReplyObject(r);
    f->disk_bytes = bench_dir_size(p->dir);
    f->wal_bytes = -1;
    f->server_hwm_kb = bench_hwm_kb(p->server_pid);
    return 0;
}

static void p_close(bsys *s)
{
    peer_sys *p = s->h;
    if (!p) return;
    if (p->c) redisFree(p->c);
    free(p);
    s->h = NULL;
}

static const bsys_ops peer_ops = {
    p_enqueue, p_many, p_claim, p_complete, p_pending, p_settle, p_foot,
    p_close,
};

int bench_peer_open(const bench_conf *c, bsys *s)
{
    peer_sys *p = calloc(1, sizeof *p);
    memset(s, 0, sizeof *s);
    s->ops = &peer_ops;
    s->name = "peer";
    if (!p) return bench_err(s, "out of memory");
    s->h = p;
    p->server_pid = c->server_pid;
    snprintf(p->dir, sizeof p->dir, "%s", c->server_dir ? c->server_dir : "");
    if (c->unix_path) {
        s->name = "peer-unix";
        p->c = redisConnectUnix(c->unix_path);
    } else {
        p->c = redisConnect("127.0.0.1", c->port);
    }
    if (p->c == NULL || p->c->err) {
        if (c->unix_path)
            bench_err(s, "peer connect %s: %s", c->unix_path,
                      p->c ? p->c->errstr : "out of memory");
        else
            bench_err(s, "peer connect 127.0.0.1:%d: %s", c->port,
                      p->c ? p->c->errstr : "out of memory");
        p_close(s);
        return -1;
    }
    if (load(s, p, bench_lua_enqueue, p->sha_enq) < 0 ||
        load(s, p, bench_lua_claim, p->sha_claim) < 0 ||
        load(s, p, bench_lua_complete, p->sha_cmp) < 0) {
        p_close(s);
        return -1;
    }
    return 0;
}

#else /* !HAVE_HIREDIS */

int bench_peer_open(const bench_conf *c, bsys *s)
{
    (void)c;
    memset(s, 0, sizeof *s);
    s->name = "peer";
    bench_err(s, "the peer was not built: configure found no hiredis "
                 "(Debian: libhiredis-dev)");
    return -2;
}

#endif
