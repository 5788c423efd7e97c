/*
 * push.c — emq_push: the file's export streamed into a server
 * (doc/EXPORT.md §7).
 *
 * Owns: the target checks (the fence, keys of the pushed queues, replace),
 * the claim of an absent fence, the stream — every command of one
 * emq_export, cut by the library's RESP reader, handed to the window
 * (window.c) with its key's slot, at most two batches of INFLIGHT commands
 * per node unanswered, and the checkpoints — and the figures read back per
 * queue and per node.
 *
 * Rules: what is sent is one export, so one consistent cut of the file.
 * MULTI waits for the first command of its block to know its slot, so a
 * by-slot block goes whole to the connection that owns the queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote.h"
#include "export.h"
#include "keys.h"
#include "resp.h"
#include "rules.h"

#define INFLIGHT 1000   /* commands a batch per node; two unanswered */

static const char *const set_suffix[4] = { "pending", "active", "schedule",
                                           "dead" };

typedef struct pusher {
    emq_db *db;
    emq_remote *r;
    const emq_push_options *o;
    emq_push_report *rep;
    emq_resp_reader rd;
    rm_window *w;
    emq_buf lastrow;       /* the row counted last (its HSETs follow)     */
    emq_buf lastkey;       /* the key of the last command sent            */
    int multi;             /* a MULTI waits for its block's first key     */
    uint64_t window;       /* commands a batch: INFLIGHT per node         */
    uint64_t next_cp;      /* the next checkpoint (commands)              */
    const rm_resume *rs;   /* resume: the keys the target holds equal     */
    int skip;              /* resume: the current key is left out         */
    int rc;                /* the first failure                           */
    char msg[EMQ_ERRMSG_MAX]; /* its message (the export then sets its own) */
} pusher;

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

static int failed(pusher *p, int rc)
{
    return p->rc = rc;
}

/* After a command: keep at most two batches unanswered, and stop at the
 * checkpoints. */
static int pace(pusher *p)
{
    int rc;
    if (rm_win_inflight(p->w) >= 2 * p->window) {
        if ((rc = rm_win_drain(p->w, p->window)) != EMQ_OK)
            return failed(p, rc);
        if (p->o->progress)
            p->o->progress(p->o->progress_ctx, "push", p->rep->commands, 0,
                           "commands");
    }
    if (p->o->checkpoint_every && p->rep->commands >= p->next_cp) {
        if ((rc = rm_win_drain(p->w, 0)) != EMQ_OK)
            return failed(p, rc);
        if (p->o->checkpoint)
            p->o->checkpoint(p->o->checkpoint_ctx, p->rep->commands);
        p->next_cp += p->o->checkpoint_every;
    }
    return EMQ_OK;
}

static int frame(pusher *p, const emq_resp_cmd *c)
{
    const char *const *argv = (const char *const *)c->argv;
    const char *key;
    size_t klen = 0;
    int rc;
    if (c->argc == 1 && c->lens[0] == 5 && memcmp(c->argv[0], "MULTI", 5) == 0) {
        p->multi = 1; /* sent with the block's first command */
        return EMQ_OK;
    }
    if (c->argc == 1 && c->lens[0] == 4 && memcmp(c->argv[0], "EXEC", 4) == 0) {
        if (p->multi) { /* an empty block: nothing to send */
            p->multi = 0;
            return EMQ_OK;
        }
        p->rep->bytes += c->size;
        p->rep->commands++;
        if ((rc = rm_win_exec(p->w)) != EMQ_OK)
            return failed(p, rc);
        return pace(p);
    }
    if (c->lens[0] == 10 && memcmp(c->argv[0], "HPEXPIREAT", 10) == 0 &&
        !p->r->hpexpireat) {
        p->rep->dropped++; /* PROTOCOL.md §8.3.6: the engine floor */
        return EMQ_OK;
    }
    if (!(key = rm_cmd_key(c->argc, argv, c->lens, &klen)))
        return failed(p, emq_db_fail(p->db, EMQ_EINTERNAL, "push: a command "
                                     "of the stream names no key"));
    unsigned slot = emq_slot(key, klen);
    int newkey = p->lastkey.len != klen ||
                 (klen && memcmp(p->lastkey.p, key, klen) != 0);
    if (newkey && emq_buf_set(&p->lastkey, key, klen) != EMQ_OK)
        return failed(p, emq_db_fail(p->db, EMQ_ENOMEM, NULL));
    count(p, c); /* the file's figures, sent or held equal already */
    if (newkey)
        p->skip = p->rs && rm_resume_equal(p->rs, key, klen);
    if (p->skip)
        return EMQ_OK; /* an open MULTI waits for a command sent */
    if (p->multi) {
        p->multi = 0;
        p->rep->bytes += 15; /* "*1\r\n$5\r\nMULTI\r\n" */
        p->rep->commands++;
        if ((rc = rm_win_multi(p->w, slot)) != EMQ_OK)
            return failed(p, rc);
    }
    p->rep->bytes += c->size;
    p->rep->commands++;
    if ((rc = rm_win_cmd(p->w, slot, c->argc, argv, c->lens, newkey)) !=
        EMQ_OK)
        return failed(p, rc);
    return pace(p);
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

/* Delete keys in pipelined batches, each at its slot's node (UNLINK where
 * the server has it). */
static int delete_keys(emq_db *db, emq_remote *r, const emq_bytes *k,
                       size_t n)
{
    const char *cmd = r->unlink_ok ? "UNLINK" : "DEL";
    rm_batch b;
    int rc = EMQ_OK;
    rm_batch_init(&b, r);
    for (size_t at = 0; at < n && rc == EMQ_OK; at += RM_KEYBATCH) {
        size_t m = n - at < RM_KEYBATCH ? n - at : RM_KEYBATCH;
        for (size_t i = 0; i < m; i++) {
            const char *av[2] = { cmd, k[at + i].p };
            size_t al[2] = { strlen(cmd), k[at + i].n };
            rm_batch_add(&b, emq_slot(k[at + i].p, k[at + i].n), NULL, 2, av,
                         al);
        }
        rc = rm_batch_run(db, &b, cmd);
        for (size_t i = 0; i < m && rc == EMQ_OK; i++) {
            const emq_rreply *x = rm_batch_reply(&b, i);
            if (x->type == EMQ_RREPLY_ERROR)
                rc = rm_refused(db, rm_batch_node(&b, i), x->str, x->len,
                                k[at + i].p, k[at + i].n);
        }
        rm_batch_clear(&b);
    }
    rm_batch_free(&b);
    return rc;
}

/* The names, on every primary, of the pushed queues' keys whose part
 * after "emq:{q}:" matches `tail` ("*", "job:*"), sorted: one SCAN per
 * queue for a few queues, else one pass for all and a filter. */
static int queue_keys(emq_db *db, emq_remote *r, const emq_push_report *rep,
                      const char *tail, rm_names *out)
{
    char m[300];
    int rc = EMQ_OK;
    if (rep->n_queues <= 8) {
        for (size_t i = 0; i < rep->n_queues && rc == EMQ_OK; i++) {
            snprintf(m, sizeof m, "emq:{%s}:%s", rep->queues[i].queue, tail);
            rc = rm_scan_all(db, r, m, out);
        }
    } else {
        snprintf(m, sizeof m, "emq:{*}:%s", tail);
        rc = rm_scan_all(db, r, m, out);
    }
    if (rc == EMQ_OK && rm_names_sort(out) != EMQ_OK)
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
    if (rc != EMQ_OK || rep->n_queues <= 8)
        return rc;
    size_t k = 0;
    for (size_t i = 0; i < out->nv; i++) {
        const char *q;
        size_t qlen;
        if (rm_key_queue(out->v[i].p, out->v[i].n, &q, &qlen) &&
            find_queue(rep, q, qlen) >= 0)
            out->v[k++] = out->v[i];
    }
    out->nv = k;
    return EMQ_OK;
}

/* The server's figures for each queue: ZCARD of the four sets (each at
 * its queue's node) and the number of job rows (emq:{q}:job:<id>, exactly)
 * on every primary. */
static int figures(emq_db *db, emq_remote *r, emq_push_report *rep)
{
    rm_batch b;
    rm_names nl;
    int rc = EMQ_OK;
    rm_batch_init(&b, r);
    for (size_t i = 0; i < rep->n_queues && rc == EMQ_OK; i++) {
        const char *q = rep->queues[i].queue;
        emq_queue_figures *f = &rep->queues[i].found;
        int64_t *sets[4] = { &f->pending, &f->active, &f->scheduled,
                             &f->dead };
        char key[4][300];
        for (int k = 0; k < 4; k++) {
            snprintf(key[k], sizeof key[k], "emq:{%s}:%s", q, set_suffix[k]);
            const char *av[2] = { "ZCARD", key[k] };
            rm_batch_addz(&b, 2, av);
        }
        rc = rm_batch_run(db, &b, "ZCARD");
        for (int k = 0; k < 4 && rc == EMQ_OK; k++) {
            const emq_rreply *x = rm_batch_reply(&b, (size_t)k);
            if (x->type == EMQ_RREPLY_INTEGER)
                *sets[k] = x->integer;
            else
                rc = x->type == EMQ_RREPLY_ERROR
                         ? rm_refused(db, rm_batch_node(&b, (size_t)k), x->str,
                                      x->len, key[k], strlen(key[k]))
                         : rm_refused(db, rm_batch_node(&b, (size_t)k),
                                      "ZCARD answered an unexpected reply",
                                      34, key[k], strlen(key[k]));
        }
        rm_batch_clear(&b);
    }
    rm_batch_free(&b);
    if (rc != EMQ_OK)
        return rc;
    memset(&nl, 0, sizeof nl);
    if ((rc = queue_keys(db, r, rep, "job:*", &nl)) == EMQ_OK)
        for (size_t j = 0; j < nl.nv; j++) {
            emq_keyinfo ki;
            long i;
            if (emq_key_parse(nl.v[j].p, nl.v[j].n, &ki) && ki.is_job_row &&
                (i = find_queue(rep, ki.q, ki.qlen)) >= 0)
                rep->queues[i].found.rows++;
        }
    rm_names_free(&nl);
    return rc;
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

void emq_push_options_init_size(emq_push_options *o, size_t size)
{
    emq_push_options d;
    memset(&d, 0, sizeof d);
    emq_struct_out(o, size, &d, sizeof d);
}

void emq_push_report_free(emq_push_report *rep)
{
    for (size_t i = 0; i < rep->n_queues; i++)
        emq_mem_free(rep->queues[i].queue);
    emq_mem_free(rep->queues);
    emq_mem_free(rep->first_existing);
    rm_node_reports_free(rep->nodes, rep->n_nodes);
    memset(rep, 0, sizeof *rep);
}

int emq_push(emq_db *db, emq_remote *to, const emq_push_options *opt,
             emq_push_report *rep)
{
    emq_push_options o;
    pusher p;
    rm_names nl;
    rm_resume rs;
    int rc, present;
    const char *speak = NULL;
    const char **qn = NULL;
    emq_export_options eo;
    emq_transfer_summary sum;

    if (!rep)
        return emq_db_fail(db, EMQ_EINVAL, "push: no report");
    memset(rep, 0, sizeof *rep);
    memset(&p, 0, sizeof p);
    memset(&nl, 0, sizeof nl);
    memset(&rs, 0, sizeof rs);
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    if (!to)
        return emq_db_fail(db, EMQ_EINVAL, "push: no server");
    emq_push_options_init(&o);
    if (opt && emq_struct_in(&o, sizeof o, opt) != EMQ_OK)
        return emq_db_fail(db, EMQ_EINVAL, "push: options not set by "
                           "emq_push_options_init(), or a field this library "
                           "does not know");
    if (o.resume && o.replace)
        return emq_db_fail(db, EMQ_EINVAL, "push: resume and replace "
                           "exclude each other (resume deletes only the "
                           "target's keys that differ from the file's)");
    rep->cluster = to->cl != NULL;
    emq_resp_reader_init(&p.rd);
    if (o.wire && !emq_wire_known(o.wire, strlen(o.wire))) {
        char known[100], msg[EMQ_ERRMSG_MAX];
        emq_wire_list(known, sizeof known);
        snprintf(msg, sizeof msg, "push: wire '%.100s' is no identity of "
                 "the table (%s); nothing was written", o.wire, known);
        rc = emq_db_fail(db, EMQ_EINVAL, msg);
        goto done;
    }
    if ((rc = queues_of(db, &o, rep)) != EMQ_OK ||
        (rc = rm_version(db, to, &present, &speak)) != EMQ_OK)
        goto done;
    /* The identity spoken: a stamped target's own (never changed), else
     * the one asked for, else the file's. */
    if (!present) {
        if (o.wire)
            speak = emq_wire_known(o.wire, strlen(o.wire));
        else if ((rc = emq_wire(db, &speak)) != EMQ_OK)
            goto done;
    }
    /* The target must not hold keys of the pushed queues, unless they are
     * to be replaced. */
    if (!(qn = emq_mem_calloc(rep->n_queues + 1, sizeof *qn))) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    for (size_t i = 0; i < rep->n_queues; i++)
        qn[i] = rep->queues[i].queue;
    if ((rc = queue_keys(db, to, rep, "*", &nl)) != EMQ_OK)
        goto done;
    emq_export_options_init(&eo);
    eo.queues = o.queues && o.n_queues ? qn : NULL;
    eo.n_queues = o.queues && o.n_queues ? rep->n_queues : 0;
    eo.by_slot = o.by_slot;
    eo.wire = speak;
    if (o.resume) {
        /* The target's keys against the file's: the equal ones stay, the
         * others are deleted and sent (resume.c). */
        if ((rc = rm_resume_plan(db, to, &eo, &nl, &rs, o.progress,
                                 o.progress_ctx)) != EMQ_OK)
            goto done;
        rm_names_free(&nl);
        nl = rs.del;
        memset(&rs.del, 0, sizeof rs.del);
        p.rs = &rs;
    }
    if (nl.nv && !o.replace && !o.resume) {
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
    rm_names_free(&nl); /* the figures read names again: hold one list */
    /* Claim the fence (PROTOCOL.md §5) on the node owning its slot. */
    if (!present && (rc = rm_version_claim(db, to, speak, &speak)) != EMQ_OK)
        goto done;
    if (o.note) {
        emq_transfer_note n = { EMQ_NOTE_WIRE, speak, NULL, 0, NULL, 0, 0 };
        o.note(o.note_ctx, &n);
    }
    /* Stream the export, INFLIGHT commands per node at a time. */
    p.db = db;
    p.r = to;
    p.o = &o;
    p.rep = rep;
    p.window = (uint64_t)INFLIGHT * rm_nodes_n(to);
    p.next_cp = o.checkpoint_every;
    if ((rc = rm_win_open(db, to, o.wait, o.wait_ctx, &p.w)) != EMQ_OK)
        goto done;
    eo.wire = speak; /* the claim may have found another's stamp */
    eo.note = o.note;
    eo.note_ctx = o.note_ctx;
    rm_tally_reset(to);
    double t0 = rm_mono();
    /* A live server keeps no file that could be cut: no end record. */
    rc = emq_export_sealed(db, &eo, sink, &p, &sum, 0);
    if (p.rc == EMQ_OK && rc == EMQ_OK) {
        p.rc = rm_win_drain(p.w, 0);
        if (p.rc != EMQ_OK)
            snprintf(p.msg, sizeof p.msg, "%s", emq_errmsg(db));
        else if (o.progress)
            o.progress(o.progress_ctx, "push", rep->commands, 0, "commands");
    }
    rep->seconds = rm_mono() - t0;
    if (rm_tally_report(to, &rep->nodes, &rep->n_nodes) != EMQ_OK &&
        p.rc == EMQ_OK && rc == EMQ_OK)
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
    for (size_t i = 0; i < rep->n_nodes; i++) {
        rep->moved += rep->nodes[i].moved;
        rep->asked += rep->nodes[i].asked;
        rep->tryagain += rep->nodes[i].tryagain;
    }
    if (p.rc != EMQ_OK) {
        rc = p.msg[0] ? emq_db_wire(db, p.rc, p.msg) : p.rc;
        goto done;
    }
    if (rc != EMQ_OK)
        goto done;
    rep->keys = sum.keys;
    rep->digest = sum.digest;
    if (o.resume && o.note) {
        emq_transfer_note n = { EMQ_NOTE_SKIPPED, "already equal", NULL, 0,
                                NULL, 0, rs.equal };
        o.note(o.note_ctx, &n);
    }
    if ((rc = figures(db, to, rep)) != EMQ_OK)
        goto done;
    rep->match = 1;
    for (size_t i = 0; i < rep->n_queues; i++)
        rep->match &= memcmp(&rep->queues[i].sent, &rep->queues[i].found,
                             sizeof rep->queues[i].sent) == 0;
done:
    rm_win_close(p.w);
    emq_mem_free(qn);
    emq_buf_free(&p.lastrow);
    emq_buf_free(&p.lastkey);
    emq_resp_reader_free(&p.rd);
    rm_names_free(&nl);
    rm_resume_free(&rs);
    return rc;
}
