/*
 * cluster.c — a remote as the entry of a Valkey/Redis Cluster: the slot
 * map (CLUSTER SHARDS, or CLUSTER SLOTS before 7.0) read from a node, one
 * remote per node (dialled through the caller's function), the route of a
 * slot, redirections (MOVED, ASK, TRYAGAIN) and what each node did (the
 * tallies behind emq_node_report).
 *
 * Rules: the remote the caller holds stays the seed connection and owns the
 * cluster; node remotes are opened and closed here only, and a node that
 * lost its slots is kept (its replies may still be in flight). A MOVED
 * re-reads the whole map; an ASK changes nothing (the slot still belongs
 * to the node that sent it). Nothing here sends a data command: batch.c
 * and window.c do, and ask this file where to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "remote.h"

struct rm_cluster {
    emq_remote **node;       /* every node met; node[k] may be the seed   */
    size_t n, cap;
    int16_t owner[RM_SLOTS]; /* slot -> index in node, -1: none           */
    size_t *prim;            /* the primaries, by their lowest slot       */
    size_t nprim;
    emq_dial_fn dial;
    void *dctx;
    int stale;               /* a MOVED was met: read the map when quiet  */
};

/* One range of the map: slots lo..hi served by the node at addr. */
typedef struct span {
    unsigned lo, hi;
    char addr[256];
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

double rm_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ addresses */

/* The host part of "HOST:PORT" or "[V6]:PORT" (cap bytes, NUL-ended). */
static void host_of(const char *addr, char *host, size_t cap)
{
    const char *colon = strrchr(addr, ':');
    size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
    if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
        addr++;
        n -= 2;
    }
    if (n >= cap)
        n = cap - 1;
    memcpy(host, addr, n);
    host[n] = '\0';
}

/* "HOST:PORT", bracketing an IPv6 host; a host the node does not know
 * ("" or "?") is the host of `from`. */
static void make_addr(char *out, size_t cap, const char *host, size_t hlen,
                      long long port, const emq_remote *from)
{
    char h[200];
    if (hlen == 0 || (hlen == 1 && host[0] == '?')) {
        host_of(from->addr[0] ? from->addr : from->name, h, sizeof h);
    } else {
        size_t n = hlen < sizeof h - 1 ? hlen : sizeof h - 1;
        memcpy(h, host, n);
        h[n] = '\0';
    }
    snprintf(out, cap, strchr(h, ':') ? "[%s]:%lld" : "%s:%lld", h, port);
}

/* The seed's address as a cluster would name it: HOST:PORT as given, a
 * bare HOST with the default port; a unix socket has none. */
static void seed_addr(emq_remote *r)
{
    const char *s = r->name;
    r->addr[0] = '\0';
    if (s[0] == '/')
        return;
    if (s[0] == '[' ? strstr(s, "]:") != NULL : strchr(s, ':') != NULL)
        snprintf(r->addr, sizeof r->addr, "%s", s);
    else
        snprintf(r->addr, sizeof r->addr, "%.240s:6379", s);
}

/* ---------------------------------------------------------------- map */

static int is_str(const emq_rreply *x, const char *w)
{
    size_t n = strlen(w);
    return (x->type == EMQ_RREPLY_STRING || x->type == EMQ_RREPLY_STATUS) &&
           x->len == n && memcmp(x->str, w, n) == 0;
}

/* An integer reply, or a bulk of digits. */
static int num(const emq_rreply *x, long long *v)
{
    if (x->type == EMQ_RREPLY_INTEGER) {
        *v = x->integer;
        return 1;
    }
    if (x->type != EMQ_RREPLY_STRING || x->len == 0 || x->len > 18)
        return 0;
    *v = 0;
    for (size_t i = 0; i < x->len; i++) {
        if (x->str[i] < '0' || x->str[i] > '9')
            return 0;
        *v = *v * 10 + (x->str[i] - '0');
    }
    return 1;
}

/* The value of `key` in a flat key/value array (a RESP2 map), or NULL. */
static const emq_rreply *field(const emq_rreply *m, const char *key)
{
    if (m->type != EMQ_RREPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < m->elements; i += 2)
        if (is_str(&m->element[i], key))
            return &m->element[i + 1];
    return NULL;
}

static int span_add(spans *s, long long lo, long long hi, const char *addr)
{
    if (lo < 0 || hi < lo || hi >= RM_SLOTS)
        return EMQ_EPROTO;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        span *v = emq_mem_realloc(s->v, cap * sizeof *v);
        if (!v)
            return EMQ_ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n].lo = (unsigned)lo;
    s->v[s->n].hi = (unsigned)hi;
    snprintf(s->v[s->n].addr, sizeof s->v[s->n].addr, "%s", addr);
    s->n++;
    return EMQ_OK;
}

/* CLUSTER SHARDS: [ [ "slots", [lo, hi, ...], "nodes", [ {id, port, ip,
 * endpoint, role, health, ...}, ... ] ], ... ]; each shard's primary. */
static int parse_shards(const emq_rreply *rep, const emq_remote *from,
                        spans *out)
{
    if (rep->type != EMQ_RREPLY_ARRAY)
        return EMQ_EPROTO;
    for (size_t i = 0; i < rep->elements; i++) {
        const emq_rreply *sh = &rep->element[i];
        const emq_rreply *sl = field(sh, "slots"), *nodes = field(sh, "nodes");
        const emq_rreply *prim = NULL;
        if (!sl || !nodes || sl->type != EMQ_RREPLY_ARRAY ||
            nodes->type != EMQ_RREPLY_ARRAY)
            return EMQ_EPROTO;
        if (sl->elements == 0)
            continue; /* a shard without slots */
        for (size_t j = 0; j < nodes->elements && !prim; j++) {
            const emq_rreply *role = field(&nodes->element[j], "role");
            const emq_rreply *health = field(&nodes->element[j], "health");
            if (role && (is_str(role, "master") || is_str(role, "primary")) &&
                (!health || !is_str(health, "failed")))
                prim = &nodes->element[j];
        }
        if (!prim)
            continue; /* its slots are served by no one for now */
        const emq_rreply *ep = field(prim, "endpoint"), *ip = field(prim, "ip");
        const emq_rreply *pt = field(prim, "port");
        const emq_rreply *h = ep && ep->type == EMQ_RREPLY_STRING && ep->len &&
                                      !is_str(ep, "?") ? ep : ip;
        long long port, lo, hi;
        char addr[256];
        if (!h || h->type != EMQ_RREPLY_STRING || !pt || !num(pt, &port))
            return EMQ_EPROTO;
        make_addr(addr, sizeof addr, h->str, h->len, port, from);
        for (size_t k = 0; k + 1 < sl->elements; k += 2) {
            int rc;
            if (!num(&sl->element[k], &lo) || !num(&sl->element[k + 1], &hi))
                return EMQ_EPROTO;
            if ((rc = span_add(out, lo, hi, addr)) != EMQ_OK)
                return rc;
        }
    }
    return EMQ_OK;
}

/* CLUSTER SLOTS: [ [lo, hi, [host, port, id, ...], replicas...], ... ]. */
static int parse_slots(const emq_rreply *rep, const emq_remote *from,
                       spans *out)
{
    if (rep->type != EMQ_RREPLY_ARRAY)
        return EMQ_EPROTO;
    for (size_t i = 0; i < rep->elements; i++) {
        const emq_rreply *e = &rep->element[i];
        long long lo, hi, port;
        char addr[256];
        int rc;
        if (e->type != EMQ_RREPLY_ARRAY || e->elements < 3 ||
            !num(&e->element[0], &lo) || !num(&e->element[1], &hi))
            return EMQ_EPROTO;
        const emq_rreply *n = &e->element[2];
        if (n->type != EMQ_RREPLY_ARRAY || n->elements < 2 ||
            n->element[0].type != EMQ_RREPLY_STRING ||
            !num(&n->element[1], &port))
            return EMQ_EPROTO;
        make_addr(addr, sizeof addr, n->element[0].str, n->element[0].len,
                  port, from);
        if ((rc = span_add(out, lo, hi, addr)) != EMQ_OK)
            return rc;
    }
    return EMQ_OK;
}

static int contains(const emq_rreply *x, const char *w)
{
    size_t n = strlen(w);
    for (size_t i = 0; x->str && i + n <= x->len; i++)
        if (strncasecmp(x->str + i, w, n) == 0)
            return 1;
    return 0;
}

/* One command on `from` alone, for the map (no batch: nothing is in flight
 * on a connection asked for the map). */
static int ask_node(emq_remote *from, const char *sub, const emq_rreply **rep)
{
    const char *av[2] = { "CLUSTER", sub };
    return rm_sendz(from, 2, av) == 0 && rm_recv(from, rep) == 0 ? 0 : -1;
}

/*
 * Read the map from `from` into *out. EMQ_OK (with *standalone 1 when the
 * server has cluster support disabled), EMQ_EIO, EMQ_EREMOTE, EMQ_EPROTO
 * (a reply of another shape) or EMQ_ENOMEM; msg says why.
 */
static int read_map(emq_remote *from, spans *out, int *standalone, char *msg,
                    size_t cap)
{
    const emq_rreply *rep = NULL;
    int rc = EMQ_OK, slots = 0;
    *standalone = 0;
    if (ask_node(from, "SHARDS", &rep) != 0)
        goto io;
    if (rep->type == EMQ_RREPLY_ERROR && contains(rep, "unknown subcommand")) {
        rm_release(from, rep);
        slots = 1;
        if (ask_node(from, "SLOTS", &rep) != 0)
            goto io;
    }
    if (rep->type == EMQ_RREPLY_ERROR) {
        if (contains(rep, "cluster support disabled")) {
            *standalone = 1;
        } else {
            snprintf(msg, cap, "%s refused CLUSTER %s: %.*s", from->name,
                     slots ? "SLOTS" : "SHARDS",
                     (int)(rep->len > 300 ? 300 : rep->len), rep->str);
            rc = EMQ_EREMOTE;
        }
    } else {
        rc = slots ? parse_slots(rep, from, out) : parse_shards(rep, from, out);
        if (rc == EMQ_EPROTO) {
            snprintf(msg, cap, "%s answered CLUSTER %s with a reply of "
                     "another shape", from->name, slots ? "SLOTS" : "SHARDS");
            rc = EMQ_EREMOTE;
        } else if (rc == EMQ_OK && out->n == 0) {
            snprintf(msg, cap, "%s: the cluster's map names no primary",
                     from->name);
            rc = EMQ_EREMOTE;
        }
    }
    rm_release(from, rep);
    return rc;
io:
    {
        const char *e = from->t.error ? from->t.error(from->ctx) : NULL;
        snprintf(msg, cap, "%s: CLUSTER %s%s%s", from->name,
                 slots ? "SLOTS" : "SHARDS", e && e[0] ? ": " : "",
                 e ? e : "");
    }
    return EMQ_EIO;
}

/* -------------------------------------------------------------- nodes */

/* The index of the node at addr, dialled when it is new: EMQ_OK and *idx,
 * or dial's code with msg. */
static int node_for(emq_remote *r, const char *addr, size_t *idx, char *msg,
                    size_t cap)
{
    rm_cluster *cl = r->cl;
    emq_remote *n = NULL;
    char err[600] = "";
    int rc;
    for (size_t i = 0; i < cl->n; i++)
        if (strcmp(cl->node[i]->addr, addr) == 0) {
            *idx = i;
            return EMQ_OK;
        }
    if (cl->n == cl->cap) {
        size_t c = cl->cap ? 2 * cl->cap : 8;
        emq_remote **v = emq_mem_realloc(cl->node, c * sizeof *v);
        if (!v)
            return EMQ_ENOMEM;
        cl->node = v;
        cl->cap = c;
    }
    if (strcmp(r->addr, addr) == 0) {
        n = r; /* the seed is this node */
    } else {
        if ((rc = cl->dial(cl->dctx, addr, &n, err, sizeof err)) != EMQ_OK ||
            !n) {
            snprintf(msg, cap, "%s", err[0] ? err : "cannot reach the node");
            return rc != EMQ_OK ? rc : EMQ_EIO;
        }
        snprintf(n->addr, sizeof n->addr, "%s", addr);
    }
    cl->node[cl->n] = n;
    *idx = cl->n++;
    return EMQ_OK;
}

/* Take the map: every span's node (dialled when new), the owner table,
 * the primaries in order of their lowest slot; r's commands are those all
 * primaries have. */
static int apply_map(emq_remote *r, const spans *m, char *msg, size_t cap)
{
    rm_cluster *cl = r->cl;
    int16_t owner[RM_SLOTS];
    int rc;
    for (size_t s = 0; s < RM_SLOTS; s++)
        owner[s] = -1;
    for (size_t i = 0; i < m->n; i++) {
        size_t idx;
        if ((rc = node_for(r, m->v[i].addr, &idx, msg, cap)) != EMQ_OK)
            return rc;
        for (unsigned s = m->v[i].lo; s <= m->v[i].hi; s++)
            owner[s] = (int16_t)idx;
    }
    size_t *prim = emq_mem_malloc(cl->n * sizeof *prim), np = 0;
    if (!prim)
        return EMQ_ENOMEM;
    /* the primaries, each once, ordered by the first slot it serves */
    char *seen = emq_mem_calloc(cl->n, 1);
    if (!seen) {
        emq_mem_free(prim);
        return EMQ_ENOMEM;
    }
    for (size_t s = 0; s < RM_SLOTS; s++)
        if (owner[s] >= 0 && !seen[owner[s]]) {
            seen[owner[s]] = 1;
            prim[np++] = (size_t)owner[s];
        }
    emq_mem_free(seen);
    memcpy(cl->owner, owner, sizeof owner);
    emq_mem_free(cl->prim);
    cl->prim = prim;
    cl->nprim = np;
    int has[4] = { 1, 1, 1, 1 };
    for (size_t i = 0; i < np; i++) {
        emq_remote *n = cl->node[prim[i]];
        has[0] &= n->pexpiretime;
        has[1] &= n->hpexpiretime;
        has[2] &= n->hpexpireat;
        has[3] &= n->unlink_ok;
    }
    r->pexpiretime = has[0];
    r->hpexpiretime = has[1];
    r->hpexpireat = has[2];
    r->unlink_ok = has[3];
    return EMQ_OK;
}

/* Close every node but the seed and forget the cluster (emq_remote_close
 * calls this for a cluster's seed). */
void rm_cluster_close(emq_remote *r)
{
    rm_cluster *cl = r->cl;
    if (!cl)
        return;
    for (size_t i = 0; i < cl->n; i++)
        if (cl->node[i] != r)
            emq_remote_close(cl->node[i]);
    emq_mem_free(cl->node);
    emq_mem_free(cl->prim);
    emq_mem_free(cl);
    r->cl = NULL;
}

/* Re-read the map from the first quiet primary that answers (the seed
 * last). A connection with replies in flight or a MULTI open cannot be
 * asked; with none quiet the map stays stale until rm_refresh_stale. */
static int refresh(emq_db *db, emq_remote *r)
{
    rm_cluster *cl = r->cl;
    char msg[EMQ_ERRMSG_MAX] = "";
    int rc = EMQ_EIO, standalone, asked = 0;
    cl->stale = 1;
    for (size_t i = 0; i <= cl->nprim; i++) {
        emq_remote *from = i < cl->nprim ? cl->node[cl->prim[i]] : r;
        spans m = { NULL, 0, 0 };
        if (from->block || from->pending)
            continue;
        asked = 1;
        rc = read_map(from, &m, &standalone, msg, sizeof msg);
        if (rc == EMQ_OK && standalone) {
            snprintf(msg, sizeof msg, "%s left the cluster", from->name);
            rc = EMQ_EREMOTE;
        }
        if (rc == EMQ_OK)
            rc = apply_map(r, &m, msg, sizeof msg);
        emq_mem_free(m.v);
        if (rc != EMQ_EIO)
            break;
    }
    if (!asked)
        return EMQ_OK;
    if (rc == EMQ_OK)
        cl->stale = 0;
    if (rc == EMQ_ENOMEM)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    return rc == EMQ_OK ? EMQ_OK : emq_db_wire(db, rc, msg);
}

int rm_refresh_stale(emq_db *db, emq_remote *r)
{
    return r->cl && r->cl->stale ? refresh(db, r) : EMQ_OK;
}

/* ------------------------------------------------------------ routing */

emq_remote *rm_route(emq_remote *r, unsigned slot)
{
    if (!r->cl)
        return r;
    int i = slot < RM_SLOTS ? r->cl->owner[slot] : -1;
    return i >= 0 ? r->cl->node[i] : NULL;
}

int rm_noslot(emq_db *db, emq_remote *r, unsigned slot)
{
    char msg[EMQ_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s: no node of the cluster serves slot %u "
             "(is every slot assigned?)", r->name, slot);
    return emq_db_wire(db, EMQ_EREMOTE, msg);
}

size_t rm_nodes_n(const emq_remote *r)
{
    return r->cl ? r->cl->nprim : 1;
}

emq_remote *rm_node_at(emq_remote *r, size_t i)
{
    return r->cl ? r->cl->node[r->cl->prim[i]] : r;
}

/* "MOVED 3300 127.0.0.1:7001", "ASK 3300 :7001", "TRYAGAIN ...". */
int rm_redirect(const emq_rreply *rep, const emq_remote *from, rm_redir *out)
{
    const char *s = rep->str;
    size_t n = rep->len, w;
    memset(out, 0, sizeof *out);
    out->slot = RM_NOSLOT;
    if (rep->type != EMQ_RREPLY_ERROR || !s)
        return RM_REDIR_NONE;
    if (n >= 8 && memcmp(s, "TRYAGAIN", 8) == 0)
        return out->kind = RM_REDIR_TRYAGAIN;
    if (n > 6 && memcmp(s, "MOVED ", 6) == 0)
        w = 6, out->kind = RM_REDIR_MOVED;
    else if (n > 4 && memcmp(s, "ASK ", 4) == 0)
        w = 4, out->kind = RM_REDIR_ASK;
    else
        return RM_REDIR_NONE;
    long long slot = 0;
    size_t i = w;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && slot < RM_SLOTS; i++)
        slot = slot * 10 + (s[i] - '0');
    const char *a = s + i + 1, *colon = NULL;
    size_t alen = i < n ? n - i - 1 : 0;
    for (size_t k = alen; k > 0 && !colon; k--)
        if (a[k - 1] == ':')
            colon = a + k - 1;
    if (i == w || i >= n || s[i] != ' ' || slot >= RM_SLOTS || !colon)
        return out->kind = RM_REDIR_NONE;
    long long port = 0;
    for (const char *p = colon + 1; p < a + alen; p++) {
        if (*p < '0' || *p > '9' || port > 65535)
            return out->kind = RM_REDIR_NONE;
        port = port * 10 + (*p - '0');
    }
    const char *h = a;
    size_t hl = (size_t)(colon - a);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']')
        h++, hl -= 2;
    out->slot = (unsigned)slot;
    make_addr(out->addr, sizeof out->addr, h, hl, port, from);
    return out->kind;
}

static void sleep_ms(void *ctx, unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    (void)ctx;
    nanosleep(&ts, NULL);
}

int rm_redirect_to(emq_db *db, emq_remote *r, emq_remote *from,
                   const rm_redir *rd, unsigned slot, unsigned tries,
                   int *refreshed, void (*wait)(void *, unsigned), void *wctx,
                   emq_remote **to)
{
    char msg[EMQ_ERRMSG_MAX + 300];
    size_t idx;
    int rc;
    *to = NULL;
    if (!r->cl) {
        snprintf(msg, sizeof msg, "%s is a cluster node: it answered %s; "
                 "connect to it as a cluster (--cluster)", from->name,
                 rd->kind == RM_REDIR_TRYAGAIN ? "TRYAGAIN"
                 : rd->kind == RM_REDIR_ASK    ? "ASK" : "MOVED");
        return emq_db_wire(db, EMQ_EREMOTE, msg);
    }
    if (rd->kind == RM_REDIR_TRYAGAIN) {
        from->tally.tryagain++;
        if (tries > RM_TRYAGAIN_WAITS) {
            snprintf(msg, sizeof msg, "%s kept answering TRYAGAIN for slot "
                     "%u (a migration that does not end?)", from->name, slot);
            return emq_db_wire(db, EMQ_EREMOTE, msg);
        }
        unsigned ms = 10u << (tries > 8 ? 7 : tries ? tries - 1 : 0);
        (wait ? wait : sleep_ms)(wctx, ms > 1000 ? 1000 : ms);
        if (!(*to = rm_route(r, slot)))
            return rm_noslot(db, r, slot);
        return EMQ_OK;
    }
    if (tries > RM_MAX_REDIRECTS) {
        snprintf(msg, sizeof msg, "slot %u: redirected %u times in a row "
                 "(last by %s to %s)", rd->slot, tries, from->name, rd->addr);
        return emq_db_wire(db, EMQ_EREMOTE, msg);
    }
    if (rd->kind == RM_REDIR_MOVED) {
        from->tally.moved++;
        if (!*refreshed) {
            if ((rc = refresh(db, r)) != EMQ_OK)
                return rc;
            *refreshed = 1;
        }
    } else {
        from->tally.asked++;
    }
    if ((rc = node_for(r, rd->addr, &idx, msg, sizeof msg)) != EMQ_OK)
        return rc == EMQ_ENOMEM ? emq_db_fail(db, rc, NULL)
                                : emq_db_wire(db, rc, msg);
    if (rd->kind == RM_REDIR_MOVED)
        r->cl->owner[rd->slot] = (int16_t)idx; /* the node knows best */
    *to = r->cl->node[idx];
    return EMQ_OK;
}

/* ------------------------------------------------------------- tallies */

void rm_tally_reset(emq_remote *r)
{
    memset(&r->tally, 0, sizeof r->tally);
    for (size_t i = 0; r->cl && i < r->cl->n; i++)
        memset(&r->cl->node[i]->tally, 0, sizeof r->tally);
}

void rm_node_reports_free(emq_node_report *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        emq_mem_free(v[i].node);
    emq_mem_free(v);
}

static int report_one(emq_node_report *o, const emq_remote *n)
{
    const rm_tally *t = &n->tally;
    const char *name = n->addr[0] ? n->addr : n->name;
    if (!(o->node = rm_strndup(name, strlen(name))))
        return EMQ_ENOMEM;
    o->keys = t->keys;
    o->commands = t->commands;
    o->bytes_out = t->bytes_out;
    o->bytes_in = t->bytes_in;
    o->moved = t->moved;
    o->asked = t->asked;
    o->tryagain = t->tryagain;
    o->seconds = t->first > 0 && t->last > t->first ? t->last - t->first : 0;
    return EMQ_OK;
}

/* The primaries in map order, then every other node that was sent
 * something (a node that lost its slots, a seed that is a replica). */
int rm_tally_report(emq_remote *r, emq_node_report **out, size_t *n)
{
    rm_cluster *cl = r->cl;
    size_t cap = cl ? cl->n + 1 : 1, k = 0;
    emq_node_report *v = emq_mem_calloc(cap, sizeof *v);
    *out = NULL;
    *n = 0;
    if (!v)
        return EMQ_ENOMEM;
    if (!cl) {
        if (report_one(&v[0], r) != EMQ_OK)
            goto nomem;
        *out = v;
        *n = 1;
        return EMQ_OK;
    }
    char *done = emq_mem_calloc(cl->n + 1, 1);
    if (!done)
        goto nomem;
    for (size_t i = 0; i < cl->nprim; i++, k++) {
        done[cl->prim[i]] = 1;
        if (report_one(&v[k], cl->node[cl->prim[i]]) != EMQ_OK)
            goto nomem_done;
    }
    int seed_listed = 0;
    for (size_t i = 0; i < cl->n; i++) {
        seed_listed |= cl->node[i] == r;
        if (!done[i] && cl->node[i]->tally.commands &&
            report_one(&v[k++], cl->node[i]) != EMQ_OK)
            goto nomem_done;
    }
    if (!seed_listed && r->tally.commands &&
        report_one(&v[k++], r) != EMQ_OK)
        goto nomem_done;
    emq_mem_free(done);
    *out = v;
    *n = k;
    return EMQ_OK;
nomem_done:
    emq_mem_free(done);
nomem:
    rm_node_reports_free(v, cap);
    return EMQ_ENOMEM;
}

/* --------------------------------------------------------- public API */

static void put_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

int emq_remote_cluster(emq_remote *r, int mode, emq_dial_fn dial, void *ctx,
                       char *err, size_t errlen)
{
    char msg[EMQ_ERRMSG_MAX + 300] = "";
    spans m = { NULL, 0, 0 };
    int rc, standalone;
    if (!r || mode == EMQ_CLUSTER_OFF)
        return r ? EMQ_OK : EMQ_EINVAL;
    if (!dial || r->cl || (mode != EMQ_CLUSTER_AUTO && mode != EMQ_CLUSTER_ON)) {
        put_err(err, errlen, r->cl ? "emq_remote_cluster: already a cluster"
                                   : "emq_remote_cluster: no dial function "
                                     "or an unknown mode");
        return EMQ_EINVAL;
    }
    rc = read_map(r, &m, &standalone, msg, sizeof msg);
    if (rc == EMQ_OK && standalone) {
        emq_mem_free(m.v);
        if (mode == EMQ_CLUSTER_AUTO)
            return EMQ_OK;
        snprintf(msg, sizeof msg, "%s is not a cluster node (its cluster "
                 "support is disabled)", r->name);
        put_err(err, errlen, msg);
        return EMQ_EINVAL;
    }
    if (rc == EMQ_OK) {
        if (!(r->cl = emq_mem_calloc(1, sizeof *r->cl))) {
            rc = EMQ_ENOMEM;
        } else {
            r->cl->dial = dial;
            r->cl->dctx = ctx;
            seed_addr(r);
            int has[4] = { r->pexpiretime, r->hpexpiretime, r->hpexpireat,
                           r->unlink_ok };
            if ((rc = apply_map(r, &m, msg, sizeof msg)) != EMQ_OK) {
                rm_cluster_close(r);
                r->addr[0] = '\0';
                r->pexpiretime = has[0];
                r->hpexpiretime = has[1];
                r->hpexpireat = has[2];
                r->unlink_ok = has[3];
            }
        }
    }
    emq_mem_free(m.v);
    if (rc == EMQ_ENOMEM)
        snprintf(msg, sizeof msg, "out of memory");
    if (rc != EMQ_OK)
        put_err(err, errlen, msg);
    return rc;
}

size_t emq_remote_nodes(const emq_remote *r)
{
    return r && r->cl ? r->cl->nprim : 0;
}
