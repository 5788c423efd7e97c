/*
 * verify.c — emq_verify: the file's keyspace and a server's, compared key
 * by key through their digest records (doc/EXPORT.md §3, §7).
 *
 * Owns: the file side (one digest walk, engine/transfer/export.h, keeping each key's
 * record), the server side (the pull's reads, each key's record built with
 * storage/transfer.h as the file's is, and compared with the file's as it
 * arrives, in name order), and the first difference with its reason. On
 * a cluster the server side is every primary's keys, read at their slots'
 * nodes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote.h"
#include "export.h"
#include "transfer.h"
#include "export_stream.h"
#include "resp.h"

/* One key's record, without its bytes. */
typedef struct kent {
    size_t off, len;
    unsigned char tag;
    int64_t expire;
    uint64_t n, hash;
} kent;

typedef struct verifier {
    emq_db *db;
    emq_buf names;      /* the file's names, concatenated                 */
    kent *k;            /* the file's records, in name order              */
    size_t nk, cap;
    size_t at;          /* the next file record to compare                */
    emq_keyout ko;      /* the server's record of the key being read      */
    emq_dg dg;          /* the server's digest                            */
    uint64_t server_keys;
    emq_verify_report *rep;
    /* pending records of trimmed entries, per stream and group: the one
     * known difference (no digest record holds them) */
    struct uh { char *key, *group; size_t klen, glen; uint64_t file, server;
    } *uh;
    size_t nuh, capuh;
    int oom;
} verifier;

static void uh_add(verifier *v, const void *k, size_t kl, const void *g,
                   size_t gl, uint64_t file, uint64_t server)
{
    for (size_t i = 0; i < v->nuh; i++)
        if (v->uh[i].klen == kl && v->uh[i].glen == gl &&
            !memcmp(v->uh[i].key, k, kl) && !memcmp(v->uh[i].group, g, gl)) {
            v->uh[i].file += file;
            v->uh[i].server += server;
            return;
        }
    if (v->nuh == v->capuh) {
        size_t cap = v->capuh ? 2 * v->capuh : 8;
        void *n = emq_mem_realloc(v->uh, cap * sizeof *v->uh);
        if (!n) {
            v->oom = 1;
            return;
        }
        v->uh = n;
        v->capuh = cap;
    }
    struct uh *u = &v->uh[v->nuh];
    if (!(u->key = rm_strndup(k, kl)) || !(u->group = rm_strndup(g, gl))) {
        emq_mem_free(u->key);
        v->oom = 1;
        return;
    }
    u->klen = kl;
    u->glen = gl;
    u->file = file;
    u->server = server;
    v->nuh++;
}

static void on_file_unheld(void *ctx, const unsigned char *key, size_t klen,
                           const unsigned char *g, size_t glen, uint64_t n)
{
    uh_add(ctx, key, klen, g, glen, n, 0);
}

/* The server's: the EMQ.XPEL commands rm_xstream wrote for a stream. */
static void server_unheld(verifier *v, const emq_elem *e)
{
    emq_resp_reader rd;
    const emq_resp_cmd *c;
    emq_resp_reader_init(&rd);
    if (emq_resp_feed(&rd, e->a.p, e->a.n) == EMQ_OK)
        while (emq_resp_next(&rd, &c) == EMQ_OK)
            if (c->argc == 7 && c->lens[0] == 8 &&
                !memcmp(c->argv[0], "EMQ.XPEL", 8))
                uh_add(v, c->argv[1], c->lens[1], c->argv[2], c->lens[2], 0,
                       1);
    emq_resp_reader_free(&rd);
}

static int on_file_key(void *ctx, const emq_keyrec *r)
{
    verifier *v = ctx;
    if (v->nk == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256;
        kent *k = emq_mem_realloc(v->k, cap * sizeof *k);
        if (!k)
            return emq_db_fail(v->db, EMQ_ENOMEM, NULL);
        v->k = k;
        v->cap = cap;
    }
    v->k[v->nk] = (kent){v->names.len, r->klen, r->tag, r->expire, r->n,
                         r->hash};
    if (emq_buf_append(&v->names, r->key, r->klen) != EMQ_OK)
        return emq_db_fail(v->db, EMQ_ENOMEM, NULL);
    v->nk++;
    return 0;
}

static int name_cmp(const void *a, size_t an, const void *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (an > bn) - (an < bn);
}

static const char *tag_name(unsigned char tag)
{
    size_t n;
    const emq_typedef *rows = emq_typedefs(&n);
    for (size_t i = 0; i < n; i++)
        if (rows[i].tag == tag)
            return rows[i].name;
    return "?";
}

/* Record the first difference (keys come in name order, so the first one
 * noted is the smallest differing key). */
static void differ(verifier *v, const void *key, size_t klen, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

static void differ(verifier *v, const void *key, size_t klen, const char *fmt,
                   ...)
{
    va_list ap;
    if (!v->rep->equal || v->rep->first)
        return;
    v->rep->first = rm_strndup(key, klen); /* NULL: no memory; still differ */
    v->rep->first_len = v->rep->first ? klen : 0;
    v->rep->equal = 0;
    va_start(ap, fmt);
    vsnprintf(v->rep->reason, sizeof v->rep->reason, fmt, ap);
    va_end(ap);
}

/* Merge step: `y` is the server's next key (record hash `hash`). */
static void compare(verifier *v, const emq_bytes *y, unsigned char tag,
                    int64_t expire, uint64_t n, uint64_t hash)
{
    while (v->at < v->nk) {
        const kent *x = &v->k[v->at];
        const unsigned char *xname = v->names.p + x->off;
        int c = name_cmp(xname, x->len, y->p, y->n);
        if (c > 0)
            break;
        v->at++;
        if (c < 0) {
            differ(v, xname, x->len, "only in the file");
            continue;
        }
        if (x->hash == hash)
            return;
        if (x->tag != tag)
            differ(v, xname, x->len, "a %s in the file, a %s on the server",
                   tag_name(x->tag), tag_name(tag));
        else if (x->expire != expire)
            differ(v, xname, x->len, "expiry %lld in the file, %lld on the "
                   "server", (long long)x->expire, (long long)expire);
        else if (x->n != n)
            differ(v, xname, x->len, "%llu elements in the file, %llu on the "
                   "server", (unsigned long long)x->n, (unsigned long long)n);
        else
            differ(v, xname, x->len, "the contents differ");
        return;
    }
    differ(v, y->p, y->n, "only on the server");
}

static int visit(void *ctx, const emq_bytes *key, const emq_typedef *t,
                 int64_t expire, emq_elem *e, size_t n)
{
    verifier *v = ctx;
    int rc;
    if (t->order == EMQ_ORDER_OPAQUE && n == 1)
        server_unheld(v, &e[0]);
    emq_keyout_begin(&v->ko, t, key->p, key->n, expire, -1);
    for (size_t i = 0; i < n; i++)
        emq_keyout_add(&v->ko, &e[i]);
    if ((rc = emq_keyout_end(&v->ko)) != EMQ_OK)
        return emq_db_fail(v->db, rc, NULL);
    if (!v->ko.n)
        return EMQ_OK;
    v->server_keys++;
    compare(v, key, t->tag, expire, v->ko.n, v->ko.hash);
    return EMQ_OK;
}

static int cmp_q(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Drop from `nl` the names of queues the file does not hold, reporting
 * each such queue (and its number of keys) through o->note. */
static int others(emq_db *db, rm_names *nl, const emq_verify_options *o)
{
    char **fq = NULL, qb[300];
    size_t nfq = 0, k = 0, run = 0;
    const char *lastq = NULL;
    size_t lastlen = 0;
    int rc = emq_queues(db, &fq, &nfq);
    if (rc != EMQ_OK)
        return rc;
    qsort(fq, nfq, sizeof *fq, cmp_q);
    for (size_t i = 0; i <= nl->nv; i++) {
        const char *q = NULL, *key;
        size_t qlen = 0;
        int other = 0;
        if (i < nl->nv && rm_key_queue(nl->v[i].p, nl->v[i].n, &q, &qlen) &&
            qlen < sizeof qb) {
            memcpy(qb, q, qlen);
            qb[qlen] = 0;
            key = qb;
            other = !bsearch(&key, fq, nfq, sizeof *fq, cmp_q);
        }
        /* a run of one other queue's names ends: say so */
        if (run && (!other || qlen != lastlen || memcmp(q, lastq, qlen))) {
            char name[300];
            snprintf(name, sizeof name, "%.*s", (int)lastlen, lastq);
            if (o->note) {
                emq_transfer_note t = { EMQ_NOTE_OTHER_QUEUE, name, NULL, 0,
                                        NULL, 0, run };
                o->note(o->note_ctx, &t);
            }
            run = 0;
        }
        if (i == nl->nv)
            break;
        if (other) {
            lastq = q;
            lastlen = qlen;
            run++;
            continue;
        }
        nl->v[k++] = nl->v[i];
    }
    nl->nv = k;
    emq_queues_free(fq, nfq);
    return EMQ_OK;
}

void emq_verify_options_init_size(emq_verify_options *o, size_t size)
{
    emq_verify_options d;
    memset(&d, 0, sizeof d);
    emq_struct_out(o, size, &d, sizeof d);
}

void emq_verify_report_free(emq_verify_report *rep)
{
    emq_mem_free(rep->first);
    rm_node_reports_free(rep->nodes, rep->n_nodes);
    memset(rep, 0, sizeof *rep);
}

int emq_verify(emq_db *db, emq_remote *against, const emq_verify_options *opt,
               emq_verify_report *rep)
{
    emq_verify_options o;
    emq_export_options eo;
    emq_transfer_summary fs;
    verifier v;
    rm_names nl;
    const char *wire = NULL;
    int rc, present;

    if (!rep)
        return emq_db_fail(db, EMQ_EINVAL, "verify: no report");
    memset(rep, 0, sizeof *rep);
    memset(&v, 0, sizeof v);
    memset(&nl, 0, sizeof nl);
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    if (!against)
        return emq_db_fail(db, EMQ_EINVAL, "verify: no server");
    emq_verify_options_init(&o);
    if (opt && emq_struct_in(&o, sizeof o, opt) != EMQ_OK)
        return emq_db_fail(db, EMQ_EINVAL, "verify: options not set by "
                           "emq_verify_options_init(), or a field this library "
                           "does not know");
    v.db = db;
    v.rep = rep;
    rep->equal = 1;
    /* The file is compared as the server's identity when that is one of
     * the table (a push speaks it and leaves it), else as its own. */
    if ((rc = rm_version(db, against, &present, &wire)) != EMQ_OK &&
        rc != EMQ_EWIRE)
        goto done;
    rc = EMQ_OK;
    emq_db_clear(db);
    if (!wire && (rc = emq_wire(db, &wire)) != EMQ_OK)
        goto done;
    if (o.note) {
        emq_transfer_note n = { EMQ_NOTE_WIRE, wire, NULL, 0, NULL, 0, 0 };
        o.note(o.note_ctx, &n);
    }
    emq_export_options_init(&eo);
    eo.queues = o.queues;
    eo.n_queues = o.queues ? o.n_queues : 0;
    eo.wire = wire;
    if ((rc = emq_digest_each(db, &eo, on_file_key, &v, &fs)) != EMQ_OK)
        goto done;
    rep->file_keys = fs.keys;
    rep->file_digest = fs.digest;
    if (o.progress)
        o.progress(o.progress_ctx, "reading the file", fs.keys, fs.keys,
                   "keys");
    emq_dg_init(&v.dg);
    v.ko.dg = &v.dg;
    v.ko.one = 1;
    rep->cluster = against->cl != NULL;
    rm_tally_reset(against);
    if ((rc = rm_selection(db, against, o.queues, eo.n_queues, &nl)) !=
        EMQ_OK)
        goto done;
    /* Without a selection: the queues the file holds are compared; the
     * server's other EchoMQ queues are listed apart (a shared server). */
    if (!eo.n_queues && (rc = others(db, &nl, &o)) != EMQ_OK)
        goto done;
    if ((rc = rm_read(db, against, nl.v, nl.nv, visit, &v, o.progress,
                      o.progress_ctx, "reading the server")) != EMQ_OK)
        goto done;
    if (rm_tally_report(against, &rep->nodes, &rep->n_nodes) != EMQ_OK) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    if (v.at < v.nk)
        differ(&v, v.names.p + v.k[v.at].off, v.k[v.at].len,
               "only in the file");
    rep->server_keys = v.server_keys;
    rep->server_digest = emq_dg_value(&v.dg);
    if (o.note && (rc = emq_unheld(db, &eo, on_file_unheld, &v)) != EMQ_OK)
        goto done;
    if (v.oom) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    for (size_t i = 0; o.note && i < v.nuh; i++) {
        char text[160];
        const struct uh *u = &v.uh[i];
        snprintf(text, sizeof text, "the known difference: the file holds "
                 "%llu, the server %llu; no digest record holds them",
                 (unsigned long long)u->file, (unsigned long long)u->server);
        emq_transfer_note t = { EMQ_NOTE_UNHELD, text, u->key, u->klen,
                                u->group, u->glen,
                                u->file > u->server ? u->file : u->server };
        o.note(o.note_ctx, &t);
    }
    /* Same keys and records but another digest cannot happen; say so
     * rather than claim equality. */
    if (rep->equal && rep->file_digest != rep->server_digest) {
        rep->equal = 0;
        snprintf(rep->reason, sizeof rep->reason, "the digests differ");
    }
done:
    for (size_t i = 0; i < v.nuh; i++) {
        emq_mem_free(v.uh[i].key);
        emq_mem_free(v.uh[i].group);
    }
    emq_mem_free(v.uh);
    emq_keyout_free(&v.ko);
    emq_buf_free(&v.names);
    emq_mem_free(v.k);
    rm_names_free(&nl);
    return rc;
}
