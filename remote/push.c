/*
 * push.c — emq_push: the file's export streamed into a server
 * (doc/EXPORT.md §7).
 *
 * Owns: the target checks (the fence, keys of the pushed queues, replace),
 * the claim of an absent fence, the stream — every command of one
 * emq_export, cut by the library's RESP reader, routed by its key's slot,
 * with at most two batches of INFLIGHT commands unanswered — and the
 * figures read back per queue.
 *
 * Rules: what is sent is one export, so one consistent cut of the file.
 * MULTI waits for the first command of its block to know its slot, so a
 * by-slot block goes whole to the connection that owns the queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "remote.h"
#include "keys.h"
#include "resp.h"
#include "rules.h"

#define INFLIGHT 1000   /* commands a batch; at most two unanswered */

static const char *const set_suffix[4] = { "pending", "active", "schedule",
                                           "dead" };

typedef struct pusher {
    emq_db *db;
    emq_remote *r;
    const emq_push_options *o;
    emq_push_report *rep;
    emq_resp_reader rd;
    emq_buf lastrow;       /* the row counted last (its HSETs follow)     */
    const char **argv;     /* the frame being sent                        */
    size_t *lens, capv;
    int multi;             /* a MULTI waits for its block's first key     */
    long inflight;
    int rc;                /* the first failure                           */
    char msg[EMQ_ERRMSG_MAX]; /* its message (the export then sets its own) */
} pusher;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Index of queue q (qlen bytes) in the report, or -1. */
static long find_queue(const emq_push_report *rep, const char *q, size_t qlen)
{
    size_t lo = 0, hi = rep->n_queues;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *m = rep->queues[mid].queue;
        size_t ml = strlen(m), n = ml < qlen ? ml : qlen;
        int c = memcmp(m, q, n);
        if (c == 0)
            c = (ml > qlen) - (ml < qlen);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Count what a command adds to its queue's figures. */
static void count(pusher *p, const emq_resp_cmd *c)
{
    emq_keyinfo ki;
    long i;
    if (c->argc < 3 || !emq_key_parse(c->argv[1], c->lens[1], &ki) ||
        ki.family != EMQ_K_QUEUE ||
        (i = find_queue(p->rep, ki.q, ki.qlen)) < 0)
        return;
    emq_queue_figures *f = &p->rep->queues[i].sent;
    const unsigned char *s = c->argv[1] + 5 + ki.qlen + 2;
    size_t n = c->lens[1] - (5 + ki.qlen + 2);
    int64_t *sets[4] = { &f->pending, &f->active, &f->scheduled, &f->dead };
    if (ki.role == EMQ_ROLE_JOBSET && c->lens[0] == 4 &&
        memcmp(c->argv[0], "ZADD", 4) == 0) {
        for (int k = 0; k < 4; k++)
            if (n == strlen(set_suffix[k]) && memcmp(s, set_suffix[k], n) == 0)
                *sets[k] += (int64_t)(c->argc - 2) / 2;
    } else if (ki.is_job_row && c->lens[0] == 4 &&
               memcmp(c->argv[0], "HSET", 4) == 0 &&
               (p->lastrow.len != c->lens[1] ||
                memcmp(p->lastrow.p, c->argv[1], c->lens[1]) != 0)) {
        f->rows++;
        emq_buf_set(&p->lastrow, c->argv[1], c->lens[1]);
    }
}

/* Read replies until at most `keep` commands are unanswered. The first
 * read sends what is queued, so the server works on the newer batch while
 * the replies of the older one are read. */
static int drain(pusher *p, long keep)
{
    while (p->inflight > keep) {
        const emq_rreply *r;
        if (rm_recv(p->r, &r) != 0)
            return p->rc = rm_io(p->db, p->r, "writing the stream");
        p->inflight--;
        const emq_rreply *e = rm_error_in(r);
        if (e && p->rc == EMQ_OK) {
            char msg[EMQ_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "%s refused a command of the stream: "
                     "%.*s; the target now holds a partial copy", p->r->name,
                     (int)(e->len > 300 ? 300 : e->len), e->str);
            p->rc = emq_db_wire(p->db, EMQ_EREMOTE, msg);
        }
        rm_release(p->r, r);
    }
    return p->rc;
}

/* Send one command to the connection owning `slot`. */
static int send_cmd(pusher *p, unsigned slot, size_t argc,
                    const char *const *argv, const size_t *lens)
{
    emq_remote *to = rm_route(p->r, slot);
    if (rm_send(to, argc, argv, lens) != 0)
        return p->rc = rm_io(p->db, to, "writing the stream");
    p->inflight++;
    p->rep->commands++;
    return EMQ_OK;
}

static int frame(pusher *p, const emq_resp_cmd *c)
{
    if (c->argc > p->capv) {
        const char **a = emq_mem_realloc(p->argv, c->argc * sizeof *a);
        size_t *l = a ? emq_mem_realloc(p->lens, c->argc * sizeof *l) : NULL;
        if (a)
            p->argv = a;
        if (!l)
            return p->rc = emq_db_fail(p->db, EMQ_ENOMEM, NULL);
        p->lens = l;
        p->capv = c->argc;
    }
    for (size_t i = 0; i < c->argc; i++) {
        p->argv[i] = (const char *)c->argv[i];
        p->lens[i] = c->lens[i];
    }
    if (c->argc == 1 && c->lens[0] == 5 && memcmp(c->argv[0], "MULTI", 5) == 0) {
        p->multi = 1; /* sent with the block's first command */
        return EMQ_OK;
    }
    if (c->argc == 1) { /* EXEC: to the block's connection (one server) */
        p->rep->bytes += c->size;
        return send_cmd(p, 0, c->argc, p->argv, p->lens);
    }
    if (c->lens[0] == 10 && memcmp(c->argv[0], "HPEXPIREAT", 10) == 0 &&
        !p->r->hpexpireat) {
        p->rep->dropped++; /* PROTOCOL.md §8.3.6: the engine floor */
        return EMQ_OK;
    }
    unsigned slot = emq_slot(c->argv[1], c->lens[1]);
    count(p, c);
    if (p->multi) {
        const char *m[1] = { "MULTI" };
        size_t ml[1] = { 5 };
        p->multi = 0;
        if (send_cmd(p, slot, 1, m, ml) != EMQ_OK)
            return p->rc;
        p->rep->bytes += 15; /* "*1\r\n$5\r\nMULTI\r\n" */
    }
    if (send_cmd(p, slot, c->argc, p->argv, p->lens) != EMQ_OK)
        return p->rc;
    p->rep->bytes += c->size;
    if (p->inflight >= 2 * INFLIGHT) {
        if (drain(p, INFLIGHT) != EMQ_OK)
            return p->rc;
        if (p->o->progress)
            p->o->progress(p->o->progress_ctx, "push", p->rep->commands, 0,
                           "commands");
    }
    return EMQ_OK;
}

static int stop(pusher *p)
{
    snprintf(p->msg, sizeof p->msg, "%s", emq_errmsg(p->db));
    return 1;
}

/* The export's sink: cut the bytes into commands and send them. */
static int sink(void *ctx, const void *b, size_t n)
{
    pusher *p = ctx;
    const emq_resp_cmd *c;
    int rc;
    if (p->rc != EMQ_OK)
        return 1;
    if (emq_resp_feed(&p->rd, b, n) != EMQ_OK) {
        p->rc = emq_db_fail(p->db, EMQ_ENOMEM, NULL);
        return stop(p);
    }
    while ((rc = emq_resp_next(&p->rd, &c)) == EMQ_OK)
        if (frame(p, c) != EMQ_OK)
            return stop(p);
    if (rc != EMQ_RESP_MORE) {
        p->rc = emq_db_fail(p->db, EMQ_EINTERNAL, "the export stream could "
                                                  "not be cut into commands");
        return stop(p);
    }
    return 0;
}

/* Delete keys in pipelined batches (UNLINK where the server has it). */
static int delete_keys(emq_db *db, emq_remote *r, const emq_bytes *k,
                       size_t n)
{
    const char *cmd = r->unlink_ok ? "UNLINK" : "DEL";
    for (size_t b = 0; b < n; b += RM_KEYBATCH) {
        size_t m = n - b < RM_KEYBATCH ? n - b : RM_KEYBATCH;
        for (size_t i = 0; i < m; i++) {
            const char *av[2] = { cmd, k[b + i].p };
            size_t al[2] = { strlen(cmd), k[b + i].n };
            if (rm_send(r, 2, av, al) != 0)
                return rm_io(db, r, cmd);
        }
        for (size_t i = 0; i < m; i++) {
            const emq_rreply *rep;
            int rc = EMQ_OK;
            if (rm_recv(r, &rep) != 0)
                return rm_io(db, r, cmd);
            if (rep->type == EMQ_RREPLY_ERROR)
                rc = rm_refused(db, r, rep->str, rep->len, k[b + i].p,
                                k[b + i].n);
            rm_release(r, rep);
            if (rc != EMQ_OK)
                return rc;
        }
    }
    return EMQ_OK;
}

/* The server's figures for each queue: ZCARD of the four sets and the
 * number of job rows (emq:{q}:job:<id>, exactly). */
static int figures(emq_db *db, emq_remote *r, emq_push_report *rep)
{
    for (size_t i = 0; i < rep->n_queues; i++) {
        const char *q = rep->queues[i].queue;
        emq_queue_figures *f = &rep->queues[i].found;
        int64_t *sets[4] = { &f->pending, &f->active, &f->scheduled,
                             &f->dead };
        char key[4][300], m[300];
        int rc = EMQ_OK;
        for (int k = 0; k < 4; k++) {
            snprintf(key[k], sizeof key[k], "emq:{%s}:%s", q, set_suffix[k]);
            const char *av[2] = { "ZCARD", key[k] };
            if (rm_sendz(r, 2, av) != 0)
                return rm_io(db, r, "ZCARD");
        }
        for (int k = 0; k < 4; k++) {
            const emq_rreply *x;
            if (rm_recv(r, &x) != 0)
                return rm_io(db, r, "ZCARD");
            if (x->type == EMQ_RREPLY_INTEGER)
                *sets[k] = x->integer;
            else if (rc == EMQ_OK)
                rc = x->type == EMQ_RREPLY_ERROR
                         ? rm_refused(db, r, x->str, x->len, key[k],
                                      strlen(key[k]))
                         : rm_refused(db, r, "ZCARD answered an unexpected "
                                      "reply", 34, key[k], strlen(key[k]));
            rm_release(r, x);
        }
        if (rc != EMQ_OK)
            return rc;
        rm_names nl;
        memset(&nl, 0, sizeof nl);
        snprintf(m, sizeof m, "emq:{%s}:job:*", q);
        if ((rc = rm_scan(db, r, m, &nl)) == EMQ_OK &&
            rm_names_sort(&nl) != EMQ_OK)
            rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        size_t plen = strlen(m) - 1;
        f->rows = 0;
        for (size_t j = 0; rc == EMQ_OK && j < nl.nv; j++)
            f->rows += nl.v[j].n == plen + EMQ_ID_LEN;
        rm_names_free(&nl);
        if (rc != EMQ_OK)
            return rc;
    }
    return EMQ_OK;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The report's queues: the listed ones (sorted, unique) or the file's. */
static int queues_of(emq_db *db, const emq_push_options *o,
                     emq_push_report *rep)
{
    char **fq = NULL;
    size_t n = 0;
    const char *const *src;
    int rc;
    if (o->queues && o->n_queues) {
        src = o->queues;
        n = o->n_queues;
    } else {
        if ((rc = emq_queues(db, &fq, &n)) != EMQ_OK)
            return rc;
        src = (const char *const *)fq;
    }
    rc = EMQ_OK;
    if (!(rep->queues = emq_mem_calloc(n + 1, sizeof *rep->queues)))
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
    for (size_t i = 0; rc == EMQ_OK && i < n; i++) {
        if (!src[i] || !emq_queue_valid(src[i]))
            rc = emq_db_fail(db, EMQ_EINVAL, "push: invalid queue name");
        else if (!(rep->queues[i].queue = rm_strndup(src[i], strlen(src[i]))))
            rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        else
            rep->n_queues++;
    }
    if (fq)
        emq_queues_free(fq, n);
    if (rc != EMQ_OK)
        return rc;
    /* sorted, unique (the push's figures are looked up by name) */
    qsort(rep->queues, rep->n_queues, sizeof *rep->queues, cmp_cstr);
    size_t k = 0;
    for (size_t i = 0; i < rep->n_queues; i++) {
        if (k && strcmp(rep->queues[k - 1].queue, rep->queues[i].queue) == 0)
            emq_mem_free(rep->queues[i].queue);
        else
            rep->queues[k++] = rep->queues[i];
    }
    rep->n_queues = k;
    return EMQ_OK;
}

void emq_push_options_init(emq_push_options *o)
{
    memset(o, 0, sizeof *o);
}

void emq_push_report_free(emq_push_report *rep)
{
    for (size_t i = 0; i < rep->n_queues; i++)
        emq_mem_free(rep->queues[i].queue);
    emq_mem_free(rep->queues);
    emq_mem_free(rep->first_existing);
    memset(rep, 0, sizeof *rep);
}

int emq_push(emq_db *db, emq_remote *to, const emq_push_options *opt,
             emq_push_report *rep)
{
    emq_push_options o;
    pusher p;
    rm_names nl;
    int rc, present;
    const char **qn = NULL;
    emq_export_options eo;
    emq_transfer_summary sum;

    if (!rep)
        return emq_db_fail(db, EMQ_EINVAL, "push: no report");
    memset(rep, 0, sizeof *rep);
    memset(&p, 0, sizeof p);
    memset(&nl, 0, sizeof nl);
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    if (!to)
        return emq_db_fail(db, EMQ_EINVAL, "push: no server");
    if (opt)
        o = *opt;
    else
        emq_push_options_init(&o);
    emq_resp_reader_init(&p.rd);
    if ((rc = queues_of(db, &o, rep)) != EMQ_OK ||
        (rc = rm_version(db, to, &present)) != EMQ_OK)
        goto done;
    /* The target must not hold keys of the pushed queues, unless they are
     * to be replaced. */
    if (!(qn = emq_mem_calloc(rep->n_queues + 1, sizeof *qn))) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    for (size_t i = 0; i < rep->n_queues; i++)
        qn[i] = rep->queues[i].queue;
    for (size_t i = 0; i < rep->n_queues && rc == EMQ_OK; i++) {
        char m[300];
        snprintf(m, sizeof m, "emq:{%s}:*", qn[i]);
        rc = rm_scan(db, to, m, &nl);
    }
    if (rc == EMQ_OK && rm_names_sort(&nl) != EMQ_OK)
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
    if (rc != EMQ_OK)
        goto done;
    if (nl.nv && !o.replace) {
        char msg[EMQ_ERRMSG_MAX + 512], shown[200];
        rep->existing = nl.nv;
        rep->first_len = nl.v[0].n;
        if (!(rep->first_existing = rm_strndup(nl.v[0].p, nl.v[0].n))) {
            rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
            goto done;
        }
        emq_show_bytes(shown, sizeof shown, nl.v[0].p, nl.v[0].n);
        snprintf(msg, sizeof msg, "%s already holds %zu key%s of the pushed "
                 "queues (the first: %s); nothing was written", to->name,
                 nl.nv, nl.nv == 1 ? "" : "s", shown);
        rc = emq_db_wire(db, EMQ_EEXIST, msg);
        goto done;
    }
    if (nl.nv && (rc = delete_keys(db, to, nl.v, nl.nv)) != EMQ_OK)
        goto done;
    rep->replaced = nl.nv;
    if (!present) {
        /* Claim the fence (PROTOCOL.md §5): SET NX, then read it back. */
        const char *av[4] = { "SET", RM_VKEY, EMQ_WIRE, "NX" };
        const emq_rreply *x;
        if (rm_sendz(to, 4, av) != 0 || rm_recv(to, &x) != 0) {
            rc = rm_io(db, to, "SET " RM_VKEY " NX");
            goto done;
        }
        rm_release(to, x);
        if ((rc = rm_version(db, to, &present)) != EMQ_OK)
            goto done;
    }
    /* Stream the export, INFLIGHT commands at a time. */
    p.db = db;
    p.r = to;
    p.o = &o;
    p.rep = rep;
    emq_export_options_init(&eo);
    eo.queues = o.queues && o.n_queues ? qn : NULL;
    eo.n_queues = o.queues && o.n_queues ? rep->n_queues : 0;
    eo.by_slot = o.by_slot;
    double t0 = mono();
    rc = emq_export(db, &eo, sink, &p, &sum);
    if (p.rc == EMQ_OK && rc == EMQ_OK) {
        drain(&p, 0);
        if (o.progress && p.rc == EMQ_OK)
            o.progress(o.progress_ctx, "push", rep->commands, 0, "commands");
    }
    if (p.rc != EMQ_OK) {
        rc = p.msg[0] ? emq_db_wire(db, p.rc, p.msg) : p.rc;
        goto done;
    }
    if (rc != EMQ_OK)
        goto done;
    rep->seconds = mono() - t0;
    rep->keys = sum.keys;
    rep->digest = sum.digest;
    if ((rc = figures(db, to, rep)) != EMQ_OK)
        goto done;
    rep->match = 1;
    for (size_t i = 0; i < rep->n_queues; i++)
        rep->match &= memcmp(&rep->queues[i].sent, &rep->queues[i].found,
                             sizeof rep->queues[i].sent) == 0;
done:
    emq_mem_free(qn);
    emq_mem_free(p.argv);
    emq_mem_free(p.lens);
    emq_buf_free(&p.lastrow);
    emq_resp_reader_free(&p.rd);
    rm_names_free(&nl);
    return rc;
}
