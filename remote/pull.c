/*
 * pull.c — emq_pull: a server's EchoMQ keys imported into the file
 * (doc/EXPORT.md §7).
 *
 * Owns: the pull's checks (the fence on the server, no pulled queue in the
 * file), the stream in export form built from the server's replies key by
 * key (storage/transfer.h: the same commands an export writes) and fed to a
 * streaming import as it is built, the digest of what was read, and the
 * comparison with the file's digest after the import. On a cluster the
 * names come from every primary and each key is read at its slot's node
 * (remote.c); the report says what each node served.
 *
 * Rules: the import is one write transaction, held from the first key read
 * to the last; nothing is applied unless every key was read and the import
 * accepted the whole stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote.h"
#include "export.h"
#include "transfer.h"

typedef struct puller {
    emq_db *db;
    emq_importer *im;
    emq_keyout ko;
    emq_buf out;
    emq_dg dg;
    emq_pull_report *rep;
} puller;

/* One key: its commands (fed to the import) and, for a queue's key, its
 * record. The version key is written first and recorded last. */
static int put(puller *p, const emq_bytes *key, const emq_typedef *t,
               int64_t expire, emq_elem *e, size_t n)
{
    const char *q;
    size_t qlen;
    int rc;
    /* Elements the store yields in digest order are written in it, as an
     * export writes them (a set bytewise). */
    if (t->sorted)
        emq_elems_sort(t, e, n);
    p->ko.out = &p->out;
    p->ko.dg = rm_key_queue(key->p, key->n, &q, &qlen) ? &p->dg : NULL;
    emq_keyout_begin(&p->ko, t, key->p, key->n, expire,
                     t->sorted ? (int64_t)n : -1);
    for (size_t i = 0; i < n; i++)
        emq_keyout_add(&p->ko, &e[i]);
    if ((rc = emq_keyout_end(&p->ko)) != EMQ_OK)
        return emq_db_fail(p->db, rc, NULL);
    if (p->ko.dg && p->ko.n)
        p->rep->keys++;
    rc = emq_import_feed(p->im, p->out.p, p->out.len);
    p->out.len = 0;
    return rc;
}

static int visit(void *ctx, const emq_bytes *key, const emq_typedef *t,
                 int64_t expire, emq_elem *e, size_t n)
{
    if (key->n == RM_VKEY_LEN && memcmp(key->p, RM_VKEY, RM_VKEY_LEN) == 0)
        return EMQ_OK; /* checked and written first */
    return put(ctx, key, t, expire, e, n);
}

/* The sorted, unique queues of the (sorted) names. */
static int pulled_queues(emq_db *db, const rm_names *nl, emq_pull_report *rep)
{
    if (!(rep->queues = emq_mem_calloc(nl->nv + 1, sizeof *rep->queues)))
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    for (size_t i = 0; i < nl->nv; i++) {
        const char *q;
        size_t qlen;
        if (!rm_key_queue(nl->v[i].p, nl->v[i].n, &q, &qlen))
            continue;
        if (rep->n_queues) {
            const char *last = rep->queues[rep->n_queues - 1];
            if (strlen(last) == qlen && memcmp(last, q, qlen) == 0)
                continue; /* a queue's names are consecutive */
        }
        if (!(rep->queues[rep->n_queues] = rm_strndup(q, qlen)))
            return emq_db_fail(db, EMQ_ENOMEM, NULL);
        rep->n_queues++;
    }
    return EMQ_OK;
}

void emq_pull_options_init_size(emq_pull_options *o, size_t size)
{
    emq_pull_options d;
    memset(&d, 0, sizeof d);
    emq_struct_out(o, size, &d, sizeof d);
}

void emq_pull_report_free(emq_pull_report *rep)
{
    for (size_t i = 0; i < rep->n_queues; i++)
        emq_mem_free(rep->queues[i]);
    emq_mem_free(rep->queues);
    emq_mem_free(rep->conflict);
    rm_node_reports_free(rep->nodes, rep->n_nodes);
    memset(rep, 0, sizeof *rep);
}

int emq_pull(emq_db *db, emq_remote *from, const emq_pull_options *opt,
             emq_pull_report *rep)
{
    emq_pull_options o;
    emq_import_options io;
    puller p;
    rm_names nl;
    char **fq = NULL;
    size_t nfq = 0;
    const char *wire = NULL;
    int rc;

    if (!rep)
        return emq_db_fail(db, EMQ_EINVAL, "pull: no report");
    memset(rep, 0, sizeof *rep);
    memset(&p, 0, sizeof p);
    memset(&nl, 0, sizeof nl);
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    if (!from)
        return emq_db_fail(db, EMQ_EINVAL, "pull: no server");
    emq_pull_options_init(&o);
    if (opt && emq_struct_in(&o, sizeof o, opt) != EMQ_OK)
        return emq_db_fail(db, EMQ_EINVAL, "pull: options not set by "
                           "emq_pull_options_init(), or a field this library "
                           "does not know");
    p.db = db;
    p.rep = rep;
    rep->cluster = from->cl != NULL;
    emq_dg_init(&p.dg);
    rm_tally_reset(from);
    if ((rc = rm_version(db, from, &rep->version_present, &wire)) !=
            EMQ_OK ||
        (rc = rm_selection(db, from, o.queues, o.n_queues, &nl)) != EMQ_OK ||
        (rc = pulled_queues(db, &nl, rep)) != EMQ_OK ||
        (rc = emq_queues(db, &fq, &nfq)) != EMQ_OK)
        goto done;
    /* The queues found, which the file must not hold yet (both sorted). */
    for (size_t i = 0, j = 0; i < rep->n_queues && j < nfq;) {
        int c = strcmp(rep->queues[i], fq[j]);
        if (c == 0) {
            char msg[EMQ_ERRMSG_MAX];
            if (!(rep->conflict = rm_strndup(fq[j], strlen(fq[j])))) {
                rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
                goto done;
            }
            snprintf(msg, sizeof msg, "the file already holds keys of queue "
                     "'%s'; nothing changed", fq[j]);
            rc = emq_db_wire(db, EMQ_EEXIST, msg);
            goto done;
        }
        if (c < 0)
            i++;
        else
            j++;
    }
    /* The identity the file keeps: the server's, or (no stamp) the
     * file's own. */
    if (!wire && (rc = emq_wire(db, &wire)) != EMQ_OK)
        goto done;
    emq_import_options_init(&io);
    io.unchecked = o.unchecked;
    io.format = EMQ_IMPORT_RAW; /* commands made from a live server's reads */
    if ((rc = emq_import_begin(db, &io, &p.im)) != EMQ_OK)
        goto done;
    emq_import_carry_pel(p.im); /* trimmed entries' pending records */
    /* The version first; its record takes its place in name order, after
     * every emq:… key, so it is added last. */
    emq_elem v = {{wire, strlen(wire)}, {"", 0}, 0, -1};
    emq_bytes vk = {RM_VKEY, RM_VKEY_LEN};
    const emq_typedef *st = emq_typedef_of(EMQ_T_STRING);
    p.ko.out = &p.out;
    p.ko.dg = NULL;
    emq_keyout_begin(&p.ko, st, vk.p, vk.n, -1, 1);
    emq_keyout_add(&p.ko, &v);
    if ((rc = emq_keyout_end(&p.ko)) != EMQ_OK) {
        rc = emq_db_fail(db, rc, NULL);
        goto done;
    }
    if ((rc = emq_import_feed(p.im, p.out.p, p.out.len)) != EMQ_OK)
        goto done;
    p.out.len = 0;
    rc = rm_read(db, from, nl.v, nl.nv, visit, &p, o.progress,
                 o.progress_ctx, "pull");
    if (rc == EMQ_OK &&
        rm_tally_report(from, &rep->nodes, &rep->n_nodes) != EMQ_OK)
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
    if (rc != EMQ_OK)
        goto done;
    p.ko.out = NULL;
    p.ko.dg = &p.dg;
    emq_keyout_begin(&p.ko, st, vk.p, vk.n, -1, 1);
    emq_keyout_add(&p.ko, &v);
    if ((rc = emq_keyout_end(&p.ko)) != EMQ_OK) {
        rc = emq_db_fail(db, rc, NULL);
        goto done;
    }
    rep->keys++;
    rep->digest = emq_dg_value(&p.dg);
    rc = emq_import_finish(p.im, &rep->file);
    p.im = NULL;
    if (rc != EMQ_OK)
        goto done;
    if (o.note) {
        emq_transfer_note n = { EMQ_NOTE_WIRE, wire, NULL, 0, NULL, 0, 0 };
        o.note(o.note_ctx, &n);
    }
    rep->commands = rep->file.commands;
    rep->bytes = rep->file.bytes;
    rep->match = 1;
    /* The file's digest of the pulled queues must be the server's. */
    if (rep->n_queues) {
        emq_export_options eo;
        emq_transfer_summary fs;
        emq_export_options_init(&eo);
        eo.queues = (const char *const *)rep->queues;
        eo.n_queues = rep->n_queues;
        if ((rc = emq_digest(db, &eo, &fs)) != EMQ_OK)
            goto done;
        rep->file_digest = fs.digest;
        rep->match = fs.digest == rep->digest;
    } else {
        rep->file_digest = rep->digest;
    }
done:
    if (p.im)
        emq_import_abort(p.im);
    if (fq)
        emq_queues_free(fq, nfq);
    emq_keyout_free(&p.ko);
    emq_buf_free(&p.out);
    rm_names_free(&nl);
    return rc;
}
