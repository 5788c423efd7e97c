/*
 * hiredis.c — the network transport (emq_remote_connect): a hiredis
 * connection to HOST:PORT, [V6]:PORT, HOST or a unix socket, AUTH,
 * hiredis replies handed out as emq_rreply trees, and, for a cluster, the
 * dial function that connects to its other nodes with the same options.
 * Built only when configure found hiredis; otherwise emq_remote_connect
 * answers EMQ_ENOTSUP.
 *
 * Rules: a reply's tree is one allocation (emq_mem) that points into the
 * hiredis reply it came from; both go at release.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote.h"

static void put_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

#ifndef HAVE_HIREDIS

int emq_remote_available(void)
{
    return 0;
}

int emq_remote_connect(const char *spec, const emq_remote_options *o,
                       emq_remote **out, char *err, size_t errlen)
{
    (void)spec;
    (void)o;
    if (out)
        *out = NULL;
    put_err(err, errlen, "built without hiredis");
    return EMQ_ENOTSUP;
}

#else /* HAVE_HIREDIS */

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

typedef struct hconn {
    redisContext *c;
    int io_timeout_ms;   /* for the message of a timed-out read or write */
    char why[256];       /* that message */
} hconn;

/*
 * No SIGPIPE, ever. hiredis writes with write(2), which raises SIGPIPE in
 * the calling thread when the peer has gone; a library must not change the
 * process's disposition, so every call that may write runs with SIGPIPE
 * blocked in this thread (pthread_sigmask). When the write failed with
 * EPIPE and a SIGPIPE is now pending for the thread that was not pending
 * before, it is the one the write raised: it is taken (sigtimedwait, zero
 * timeout) before the old mask comes back, so it is never delivered; the
 * failure stays a return code (errno EPIPE, hiredis's errstr "Broken
 * pipe"), which the transfer reports as EMQ_EIO naming the node.
 */
typedef struct nopipe {
    sigset_t old;
    int was_pending;     /* a SIGPIPE pending before the call: not ours */
    int ok;              /* the mask was changed */
} nopipe;

static void nopipe_begin(nopipe *np)
{
    sigset_t pipe_only, pend;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    np->was_pending = sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE);
    np->ok = pthread_sigmask(SIG_BLOCK, &pipe_only, &np->old) == 0;
}

static void nopipe_end(nopipe *np, const redisContext *c)
{
    int saved = errno;
    if (!np->ok)
        return;
    if (!np->was_pending && c && c->err == REDIS_ERR_IO) {
        sigset_t pipe_only, pend;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        if (sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE)) {
            struct timespec zero = { 0, 0 };
            while (sigtimedwait(&pipe_only, NULL, &zero) < 0 &&
                   errno == EINTR)
                ;
        }
    }
    pthread_sigmask(SIG_SETMASK, &np->old, NULL);
    errno = saved;
}

/* A reply tree: the nodes, then the hiredis reply they point into. */
typedef struct tree {
    redisReply *raw;
    emq_rreply node[];
} tree;

static size_t count(const redisReply *r)
{
    size_t n = 1;
    if (r->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r->elements; i++)
            n += count(r->element[i]);
    return n;
}

/* Fill node `at` from r; its children go to the next free run of nodes. */
static void fill(emq_rreply *nodes, size_t at, size_t *next,
                 const redisReply *r)
{
    emq_rreply *x = &nodes[at];
    memset(x, 0, sizeof *x);
    switch (r->type) {
    case REDIS_REPLY_STRING: x->type = EMQ_RREPLY_STRING; break;
    case REDIS_REPLY_ARRAY: x->type = EMQ_RREPLY_ARRAY; break;
    case REDIS_REPLY_INTEGER: x->type = EMQ_RREPLY_INTEGER; break;
    case REDIS_REPLY_STATUS: x->type = EMQ_RREPLY_STATUS; break;
    case REDIS_REPLY_ERROR: x->type = EMQ_RREPLY_ERROR; break;
    default: x->type = EMQ_RREPLY_NIL; break;
    }
    x->integer = r->integer;
    x->str = r->str;
    x->len = r->str ? r->len : 0;
    if (r->type != REDIS_REPLY_ARRAY)
        return;
    size_t first = *next;
    *next += r->elements;
    x->elements = r->elements;
    x->element = &nodes[first];
    for (size_t i = 0; i < r->elements; i++)
        fill(nodes, first + i, next, r->element[i]);
}

static int h_send(void *ctx, size_t argc, const char *const *argv,
                  const size_t *lens)
{
    hconn *h = ctx;
    return redisAppendCommandArgv(h->c, (int)argc, (const char **)argv,
                                  lens) == REDIS_OK ? 0 : -1;
}

static int h_recv(void *ctx, const emq_rreply **out)
{
    hconn *h = ctx;
    void *v = NULL;
    *out = NULL;
    nopipe np;
    nopipe_begin(&np);
    int got = redisGetReply(h->c, &v);
    nopipe_end(&np, h->c);
    if (got != REDIS_OK || !v)
        return -1;
    redisReply *r = v;
    size_t n = count(r), next = 1;
    tree *t = emq_mem_malloc(sizeof *t + n * sizeof t->node[0]);
    if (!t) {
        freeReplyObject(r);
        snprintf(h->c->errstr, sizeof h->c->errstr, "out of memory");
        return -1;
    }
    t->raw = r;
    fill(t->node, 0, &next, r);
    *out = &t->node[0];
    return 0;
}

static void h_release(void *ctx, const emq_rreply *rep)
{
    (void)ctx;
    tree *t = (tree *)(void *)((char *)(void *)(emq_rreply *)rep -
                               offsetof(tree, node));
    freeReplyObject(t->raw);
    emq_mem_free(t);
}

/* hiredis's text, except for a blocking socket's timeout, which it
 * reports as EAGAIN's strerror: that one says what happened. */
static const char *h_error(void *ctx)
{
    hconn *h = ctx;
    if (!h->c)
        return "out of memory";
    if (h->c->err == REDIS_ERR_IO &&
        (strstr(h->c->errstr, "temporarily unavailable") ||
         strstr(h->c->errstr, "would block"))) {
        snprintf(h->why, sizeof h->why, "no progress within the I/O "
                 "timeout (%d ms): %s", h->io_timeout_ms, h->c->errstr);
        return h->why;
    }
    return h->c->errstr;
}

static void h_close(void *ctx)
{
    hconn *h = ctx;
    if (h->c)
        redisFree(h->c);
    emq_mem_free(h);
}

/* Write the output buffer whole (hiredis writes it only when a reply is
 * awaited otherwise), so that every node of a cluster starts at once. */
static int h_flush(void *ctx)
{
    hconn *h = ctx;
    int done = 0, rc = 0;
    nopipe np;
    nopipe_begin(&np);
    while (!done && rc == 0)
        if (redisBufferWrite(h->c, &done) != REDIS_OK)
            rc = -1;
    nopipe_end(&np, h->c);
    return rc;
}

static const emq_transport hiredis_transport = {
    h_send, h_recv, h_release, h_error, h_close, h_flush
};

/* The other nodes of a cluster: the seed's options (and a copy of its
 * password), cluster mode off. */
typedef struct hdial {
    emq_remote_options o;
    char password[];
} hdial;

static int h_dial(void *ctx, const char *addr, emq_remote **out, char *err,
                  size_t errlen)
{
    hdial *d = ctx;
    return emq_remote_connect(addr, &d->o, out, err, errlen);
}

/* Make the new remote r the entry of a cluster when it is one (o->cluster
 * says whether to ask and what is required). */
static int h_cluster(emq_remote *r, const emq_remote_options *o, char *err,
                     size_t errlen)
{
    size_t pl = o->password ? strlen(o->password) : 0;
    hdial *d = emq_mem_malloc(sizeof *d + pl + 1);
    int rc;
    if (!d) {
        put_err(err, errlen, "out of memory");
        return EMQ_ENOMEM;
    }
    d->o = *o;
    d->o.cluster = EMQ_CLUSTER_OFF;
    memcpy(d->password, pl ? o->password : "", pl + 1);
    d->o.password = d->password;
    rc = emq_remote_cluster(r, o->cluster, h_dial, d, err, errlen);
    if (rc == EMQ_OK && emq_remote_nodes(r))
        r->dial_own = d;
    else
        emq_mem_free(d);
    return rc;
}

int emq_remote_available(void)
{
    return 1;
}

/* HOST:PORT, [V6]:PORT or HOST into host/port; 0 or -1. */
static int parse_spec(const char *spec, char *host, size_t cap, long *port)
{
    const char *h = spec, *end, *colon = NULL;
    *port = 6379;
    if (spec[0] == '[') {
        h = spec + 1;
        end = strchr(h, ']');
        if (!end || (end[1] && end[1] != ':'))
            return -1;
        colon = end[1] ? end + 1 : NULL;
    } else {
        colon = strrchr(spec, ':');
        end = colon ? colon : spec + strlen(spec);
    }
    if ((size_t)(end - h) >= cap || end == h)
        return -1;
    memcpy(host, h, (size_t)(end - h));
    host[end - h] = '\0';
    if (colon) {
        char *e;
        errno = 0;
        *port = strtol(colon + 1, &e, 10);
        if (!colon[1] || *e || errno || *port < 1 || *port > 65535)
            return -1;
    }
    return 0;
}

int emq_remote_connect(const char *spec, const emq_remote_options *opt,
                       emq_remote **out, char *err, size_t errlen)
{
    emq_remote_options o;
    char host[256], msg[600];
    long port = 6379;
    hconn *h;
    if (out)
        *out = NULL;
    emq_remote_options_init(&o);
    if (opt && emq_struct_in(&o, sizeof o, opt) != EMQ_OK) {
        put_err(err, errlen, "options not set by emq_remote_options_init(), "
                "or a field this library does not know");
        return EMQ_EINVAL;
    }
    if (!out || !spec || !spec[0] ||
        (spec[0] != '/' && parse_spec(spec, host, sizeof host, &port))) {
        put_err(err, errlen, "not HOST:PORT");
        return EMQ_EINVAL;
    }
    if (!(h = emq_mem_calloc(1, sizeof *h))) {
        put_err(err, errlen, "out of memory");
        return EMQ_ENOMEM;
    }
    struct timeval tv = { o.connect_timeout_ms / 1000,
                          (o.connect_timeout_ms % 1000) * 1000 };
    h->c = spec[0] == '/' ? redisConnectUnixWithTimeout(spec, tv)
                          : redisConnectWithTimeout(host, (int)port, tv);
    if (!h->c || h->c->err) {
        snprintf(msg, sizeof msg, "%s: cannot connect%s%s", spec,
                 h->c && h->c->errstr[0] ? ": " : "",
                 h->c ? h->c->errstr : "");
        put_err(err, errlen, msg);
        h_close(h);
        return EMQ_EIO;
    }
    struct timeval op = { o.io_timeout_ms / 1000,
                          (o.io_timeout_ms % 1000) * 1000 };
    redisSetTimeout(h->c, op);
    h->io_timeout_ms = o.io_timeout_ms;
    if (o.password && o.password[0]) {
        const char *av[2] = { "AUTH", o.password };
        size_t al[2] = { 4, strlen(o.password) };
        nopipe np;
        nopipe_begin(&np);
        redisReply *r = redisCommandArgv(h->c, 2, av, al);
        nopipe_end(&np, h->c);
        int rc = EMQ_OK;
        if (!r) {
            snprintf(msg, sizeof msg, "%s: AUTH: %s", spec, h->c->errstr);
            rc = EMQ_EIO;
        } else if (r->type == REDIS_REPLY_ERROR) {
            snprintf(msg, sizeof msg, "%s: AUTH refused: %s", spec, r->str);
            rc = EMQ_EREMOTE;
        }
        if (r)
            freeReplyObject(r);
        if (rc != EMQ_OK) {
            put_err(err, errlen, msg);
            h_close(h);
            return rc;
        }
    }
    int rc = emq_remote_open(&hiredis_transport, h, spec, out, err, errlen);
    if (rc != EMQ_OK || o.cluster == EMQ_CLUSTER_OFF)
        return rc;
    if ((rc = h_cluster(*out, &o, err, errlen)) != EMQ_OK) {
        emq_remote_close(*out);
        *out = NULL;
    }
    return rc;
}

#endif /* HAVE_HIREDIS */
