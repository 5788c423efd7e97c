/*
 * window.c — the push's window (remote.h): the stream's commands sent to
 * their slots' nodes with many unanswered, their replies read in each
 * connection's order, and what a node redirects sent again.
 *
 * A unit is what is sent again whole: one command, or one MULTI … EXEC
 * block. Each connection keeps the queue of the sendings it was given, in
 * order; replies are read from the connection whose oldest sending is the
 * oldest of all, so the window drains in the order the stream was sent. A
 * unit answered with a redirection (a MOVED, ASK or TRYAGAIN reply of any
 * of its commands) is sent again, whole, where rm_redirect_to says, after
 * ASKING for an ASK; nothing of it was applied (a redirected command does
 * nothing, a redirected block's EXEC aborts).
 *
 * Rules: per key, commands must reach the server in stream order. Every
 * command of a redirected key is redirected too (the node that refused
 * one refuses the next), and redirected units are sent again in the order
 * their replies are read, so they stay in order; after a MOVED changed the
 * map, nothing new is sent until everything in flight is answered (the
 * window settles), so that no later command overtakes an earlier one that
 * is still on its way to the old owner. While a MULTI is open on a
 * connection nothing else may go there: a unit redirected to it waits until
 * the block's EXEC is sent. Copies (for sending again) are kept on a
 * cluster only; one server never redirects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote.h"
#include "resp.h"

typedef struct wunit {
    emq_remote *to;        /* the connection of its current sending       */
    emq_buf copy;          /* its commands, RESP (clusters)               */
    unsigned slot;
    uint32_t sent, answered, keys;
    unsigned hops, waits;
    unsigned char block;   /* MULTI … EXEC                                */
    unsigned char closed;  /* every command sent (a block: EXEC)          */
    unsigned char asking;  /* an ASKING reply comes first                 */
    rm_redir rd;           /* the first redirection of this sending       */
    long next_free;
} wunit;

typedef struct wsend {
    uint32_t unit;
    uint64_t seq;
} wsend;

/* A connection's queue of sendings, oldest first (a ring). */
typedef struct wconn {
    emq_remote *r;
    wsend *q;
    size_t head, n, cap;
} wconn;

struct rm_window {
    emq_db *db;
    emq_remote *r;
    int keep;              /* keep copies (a cluster)                     */
    wunit *u;
    size_t nu, capu;
    long free_head;
    wconn *c;
    size_t nc;
    uint32_t *redo;        /* units waiting for a blocked connection      */
    size_t nredo, capredo;
    long open;             /* the unit of the open block, or -1           */
    uint64_t seq, inflight;
    int settle, refreshed;
    void (*wait)(void *, unsigned);
    void *wctx;
    int rc;
};

/* ---------------------------------------------------------------- units */

static long unit_new(rm_window *w)
{
    long i = w->free_head;
    if (i >= 0) {
        w->free_head = w->u[i].next_free;
    } else {
        if (w->nu == w->capu) {
            size_t cap = w->capu ? 2 * w->capu : 256;
            wunit *v = emq_mem_realloc(w->u, cap * sizeof *v);
            if (!v)
                return -1;
            memset(v + w->capu, 0, (cap - w->capu) * sizeof *v);
            w->u = v;
            w->capu = cap;
        }
        i = (long)w->nu++;
    }
    wunit *u = &w->u[i];
    emq_buf keep = u->copy;
    memset(u, 0, sizeof *u);
    u->copy = keep;
    u->copy.len = 0;
    u->next_free = -1;
    return i;
}

static void unit_free(rm_window *w, long i)
{
    w->u[i].copy.len = 0;
    w->u[i].next_free = w->free_head;
    w->free_head = i;
}

static int fail_mem(rm_window *w)
{
    return w->rc = emq_db_fail(w->db, EMQ_ENOMEM, NULL);
}

/* ---------------------------------------------------------- connections */

static wconn *conn_of(rm_window *w, emq_remote *r)
{
    for (size_t i = 0; i < w->nc; i++)
        if (w->c[i].r == r)
            return &w->c[i];
    wconn *v = emq_mem_realloc(w->c, (w->nc + 1) * sizeof *v);
    if (!v)
        return NULL;
    w->c = v;
    memset(&v[w->nc], 0, sizeof *v);
    v[w->nc].r = r;
    return &v[w->nc++];
}

static int conn_push(rm_window *w, emq_remote *r, long unit)
{
    wconn *c = conn_of(w, r);
    if (!c)
        return -1;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        wsend *q = emq_mem_malloc(cap * sizeof *q);
        if (!q)
            return -1;
        for (size_t i = 0; i < c->n; i++)
            q[i] = c->q[(c->head + i) % c->cap];
        emq_mem_free(c->q);
        c->q = q;
        c->cap = cap;
        c->head = 0;
    }
    c->q[(c->head + c->n) % c->cap] = (wsend){(uint32_t)unit, w->seq++};
    c->n++;
    return 0;
}

static void conn_pop(wconn *c)
{
    c->head = (c->head + 1) % c->cap;
    c->n--;
}

/* -------------------------------------------------------------- sending */

static int io_fail(rm_window *w, emq_remote *r)
{
    return w->rc = rm_io(w->db, r, "writing the stream");
}

/* Send one command of unit i on its connection (and copy it). */
static int put(rm_window *w, long i, size_t argc, const char *const *argv,
               const size_t *lens)
{
    wunit *u = &w->u[i];
    if (w->keep) {
        int rc = emq_resp_write_array(&u->copy, argc);
        for (size_t k = 0; k < argc && rc == EMQ_OK; k++)
            rc = emq_resp_write_bulk(&u->copy, argv[k], lens[k]);
        if (rc != EMQ_OK)
            return fail_mem(w);
    }
    if (rm_send(u->to, argc, argv, lens) != 0)
        return io_fail(w, u->to);
    u->sent++;
    w->inflight++;
    return EMQ_OK;
}

/* Send unit i again, whole, from its copy, to u->to (ASKING first when
 * u->asking). */
static int send_again(rm_window *w, long i)
{
    wunit *u = &w->u[i];
    emq_resp_cmd d;
    size_t at = 0;
    int rc = EMQ_OK;
    u->sent = u->answered = 0;
    u->rd.kind = RM_REDIR_NONE;
    if (conn_push(w, u->to, i) != 0)
        return fail_mem(w);
    if (u->asking) {
        const char *av[1] = { "ASKING" };
        if (rm_sendz(u->to, 1, av) != 0)
            return io_fail(w, u->to);
        w->inflight++;
    }
    memset(&d, 0, sizeof d);
    while (at < u->copy.len && rc == EMQ_OK) {
        if (emq_resp_parse(u->copy.p + at, u->copy.len - at, at, &d, NULL) !=
            EMQ_OK) {
            rc = w->rc = emq_db_fail(w->db, EMQ_EINTERNAL, "push: a kept "
                                     "command could not be read back");
            break;
        }
        at += d.size;
        if (rm_send(u->to, d.argc, (const char *const *)d.argv, d.lens) != 0)
            rc = io_fail(w, u->to);
        else
            u->sent++, w->inflight++;
    }
    emq_resp_cmd_free(&d);
    if (rc == EMQ_OK && u->to->t.flush && u->to->t.flush(u->to->ctx) != 0)
        rc = io_fail(w, u->to);
    return rc;
}

/* Send the waiting units whose connection has no open block, in order. */
static int send_waiting(rm_window *w)
{
    size_t k = 0;
    for (size_t j = 0; j < w->nredo; j++) {
        long i = w->redo[j];
        if (w->rc == EMQ_OK && !w->u[i].to->block) {
            if (send_again(w, i) != EMQ_OK)
                return w->rc;
        } else {
            w->redo[k++] = (uint32_t)i;
        }
    }
    w->nredo = k;
    return w->rc;
}

/* Unit i (closed, every reply read) is done: applied, or to be sent again
 * where its redirection says. */
static int resolve(rm_window *w, long i)
{
    wunit *u = &w->u[i];
    emq_remote *to;
    unsigned tries;
    int rc;
    if (u->rd.kind == RM_REDIR_NONE) {
        u->to->tally.keys += u->keys;
        unit_free(w, i);
        return EMQ_OK;
    }
    if (u->rd.kind == RM_REDIR_TRYAGAIN) {
        tries = ++u->waits;
        u->hops = 0;
    } else {
        tries = ++u->hops;
    }
    if (u->rd.kind == RM_REDIR_MOVED)
        w->settle = 1;
    if ((rc = rm_redirect_to(w->db, w->r, u->to, &u->rd, u->slot, tries,
                             &w->refreshed, w->wait, w->wctx, &to)) != EMQ_OK)
        return w->rc = rc;
    u = &w->u[i];
    u->asking = u->rd.kind == RM_REDIR_ASK;
    u->to = to;
    if (to->block) {
        if (w->nredo == w->capredo) {
            size_t cap = w->capredo ? 2 * w->capredo : 16;
            uint32_t *v = emq_mem_realloc(w->redo, cap * sizeof *v);
            if (!v)
                return fail_mem(w);
            w->redo = v;
            w->capredo = cap;
        }
        w->redo[w->nredo++] = (uint32_t)i;
        return EMQ_OK;
    }
    return send_again(w, i);
}

static int is_execabort(const emq_rreply *e)
{
    return e->len >= 9 && memcmp(e->str, "EXECABORT", 9) == 0;
}

/* Read the next reply of connection c's oldest sending. */
static int read_one(rm_window *w, wconn *c)
{
    long i = c->q[c->head].unit;
    wunit *u = &w->u[i];
    emq_remote *from = c->r;
    const emq_rreply *rep;
    rm_redir rd;
    if (rm_recv(from, &rep) != 0)
        return io_fail(w, from);
    w->inflight--;
    if (u->asking) {
        u->asking = 0;
        if (rep->type == EMQ_RREPLY_ERROR)
            w->rc = rm_refused(w->db, from, rep->str, rep->len, NULL, 0);
        rm_release(from, rep);
        return w->rc;
    }
    u->answered++;
    if (rm_redirect(rep, from, &rd) != RM_REDIR_NONE) {
        if (u->rd.kind == RM_REDIR_NONE)
            u->rd = rd;
    } else {
        const emq_rreply *e = rm_error_in(rep);
        if (e && !(u->block && is_execabort(e) &&
                   u->rd.kind != RM_REDIR_NONE)) {
            char msg[EMQ_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "%s refused a command of the stream: "
                     "%.*s; the target now holds a partial copy", from->name,
                     (int)(e->len > 300 ? 300 : e->len), e->str);
            w->rc = emq_db_wire(w->db, EMQ_EREMOTE, msg);
        }
    }
    rm_release(from, rep);
    if (w->rc != EMQ_OK)
        return w->rc;
    if (u->closed && u->answered == u->sent && !u->asking) {
        conn_pop(c);
        return resolve(w, i);
    }
    return EMQ_OK;
}

/* The connection to read from: the one whose oldest sending with a reply
 * to come is the oldest; NULL when nothing is to come. */
static wconn *next_conn(rm_window *w)
{
    wconn *best = NULL;
    uint64_t seq = 0;
    for (size_t k = 0; k < w->nc; k++) {
        wconn *c = &w->c[k];
        if (!c->n)
            continue;
        const wsend *s = &c->q[c->head];
        const wunit *u = &w->u[s->unit];
        if (u->answered == u->sent && !u->asking)
            continue; /* the open block, answered so far */
        if (!best || s->seq < seq) {
            best = c;
            seq = s->seq;
        }
    }
    return best;
}

/* ----------------------------------------------------------------- API */

int rm_win_open(emq_db *db, emq_remote *r, void (*wait)(void *, unsigned),
                void *wctx, rm_window **out)
{
    rm_window *w = emq_mem_calloc(1, sizeof *w);
    *out = w;
    if (!w)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    w->db = db;
    w->r = r;
    w->keep = r->cl != NULL;
    w->free_head = -1;
    w->open = -1;
    w->wait = wait;
    w->wctx = wctx;
    return EMQ_OK;
}

/* After a failure the connections are put back in step: an open MULTI
 * is discarded, and the replies still to come are read and dropped (a
 * connection that failed stays broken). */
void rm_win_close(rm_window *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->capu; i++)
        emq_buf_free(&w->u[i].copy);
    for (size_t i = 0; i < w->nc; i++) {
        emq_remote *r = w->c[i].r;
        const char *av[1] = { "DISCARD" };
        if (r->block && rm_sendz(r, 1, av) != 0)
            r->pending = 0;
        r->block = 0;
        while (r->pending) {
            const emq_rreply *x;
            if (rm_recv(r, &x) != 0)
                break;
            rm_release(r, x);
        }
        emq_mem_free(w->c[i].q);
    }
    emq_mem_free(w->u);
    emq_mem_free(w->c);
    emq_mem_free(w->redo);
    emq_mem_free(w);
}

uint64_t rm_win_inflight(const rm_window *w)
{
    return w->inflight;
}

int rm_win_drain(rm_window *w, uint64_t keep)
{
    emq_remote *bad;
    if (w->rc != EMQ_OK)
        return w->rc;
    if ((bad = rm_flush(w->r)) != NULL)
        return io_fail(w, bad);
    for (;;) {
        if (send_waiting(w) != EMQ_OK)
            return w->rc;
        if (w->inflight <= keep && !w->settle)
            break;
        wconn *c = next_conn(w);
        if (!c)
            break;
        if (read_one(w, c) != EMQ_OK)
            return w->rc;
    }
    if (w->settle && w->inflight == 0) {
        w->settle = 0;
        w->refreshed = 0;
        if ((w->rc = rm_refresh_stale(w->db, w->r)) != EMQ_OK)
            return w->rc;
    }
    return EMQ_OK;
}

/* A new unit for the stream, at slot's node (settled first after a MOVED). */
static long start_unit(rm_window *w, unsigned slot)
{
    emq_remote *to;
    long i;
    if (w->settle && rm_win_drain(w, 0) != EMQ_OK)
        return -1;
    if (!(to = rm_route(w->r, slot))) {
        w->rc = rm_noslot(w->db, w->r, slot);
        return -1;
    }
    if ((i = unit_new(w)) < 0 || conn_push(w, to, i) != 0) {
        fail_mem(w);
        return -1;
    }
    w->u[i].to = to;
    w->u[i].slot = slot;
    return i;
}

int rm_win_cmd(rm_window *w, unsigned slot, size_t argc,
               const char *const *argv, const size_t *lens, int newkey)
{
    long i = w->open;
    if (w->rc != EMQ_OK)
        return w->rc;
    if (i < 0 && (i = start_unit(w, slot)) < 0)
        return w->rc;
    w->u[i].keys += newkey != 0;
    if (put(w, i, argc, argv, lens) != EMQ_OK)
        return w->rc;
    if (w->open < 0)
        w->u[i].closed = 1;
    return EMQ_OK;
}

int rm_win_multi(rm_window *w, unsigned slot)
{
    const char *m[1] = { "MULTI" };
    size_t ml[1] = { 5 };
    long i;
    if (w->rc != EMQ_OK)
        return w->rc;
    if (w->open >= 0)
        return w->rc = emq_db_fail(w->db, EMQ_EINTERNAL, "push: MULTI "
                                   "inside a block");
    if ((i = start_unit(w, slot)) < 0)
        return w->rc;
    w->u[i].block = 1;
    w->u[i].to->block = 1;
    w->open = i;
    return put(w, i, 1, m, ml);
}

int rm_win_exec(rm_window *w)
{
    const char *x[1] = { "EXEC" };
    size_t xl[1] = { 4 };
    long i = w->open;
    if (w->rc != EMQ_OK)
        return w->rc;
    if (i < 0)
        return w->rc = emq_db_fail(w->db, EMQ_EINTERNAL, "push: EXEC "
                                   "outside a block");
    if (put(w, i, 1, x, xl) != EMQ_OK)
        return w->rc;
    w->u[i].closed = 1;
    w->u[i].to->block = 0;
    w->open = -1;
    return send_waiting(w);
}
