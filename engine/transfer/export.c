/*
 * export.c — export the file's L1 image as RESP commands and take the
 * logical digest of a keyspace (PROTOCOL.md §8, doc/EXPORT.md §1, §3).
 *
 * Owns: emq_export, emq_digest and the walk under them: which keys (the
 * queue filter), in which order (byte order of names, or by cluster slot),
 * the version fence first, the version record in its place in the digest,
 * and the summary. How one key becomes commands and a record is its type's
 * (storage/types.h, storage/transfer.h); the walk reaches the keyspace only
 * through storage/store.h and the grammar only through engine/core/keys.h.
 *
 * Rules: export bytes depend on nothing but the keyspace and the options.
 * The digest is computed from the same reads, in canonical order, and must
 * stay exactly as doc/EXPORT.md defines it: a verifier recomputes it from a
 * live server. The export is one read transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db.h"
#include "abi.h"
#include "export.h"
#include "export_stream.h"
#include "resp.h"
#include "transfer.h"

#define FLUSH_AT (64 * 1024)     /* hand bytes to the sink past this much   */

static const char VKEY[] = EMQ_VERSION_KEY;
#define VKEY_LEN (sizeof VKEY - 1)

typedef struct walk {
    emq_db *db;
    emq_store *st;
    emq_export_options opt;   /* the caller's, read under the ABI rule */
    emq_write_fn write;        /* NULL: digest only                       */
    void *ctx;
    emq_keyrec_fn each;        /* per-key records (digest walks)          */
    void *each_ctx;
    int by_slot;
    emq_buf out;               /* bytes not yet handed to the sink        */
    emq_dg dg;
    emq_keyout ko;             /* the key being written                   */
    emq_transfer_summary sum;
    const char *wire;          /* the identity the fence states          */
    int version_digested;
    int sink_failed;
    int rc;                    /* first failure inside a callback         */
    /* by-slot mode: the collected names */
    emq_buf names;             /* concatenated names                      */
    size_t *noff;              /* name i = names.p + noff[2i], len noff[2i+1] */
    unsigned *nslot;
    int *ntype;
    size_t nn, capn;
} walk;

static int sink(walk *w)
{
    if (!w->write || w->out.len == 0)
        return EMQ_OK;
    if (w->write(w->ctx, w->out.p, w->out.len) != 0) {
        w->sink_failed = 1;
        return EMQ_EIO;
    }
    w->out.len = 0;
    return EMQ_OK;
}

/* A command of the walk itself (the fence, MULTI, EXEC). */
static int emit(walk *w, size_t argc, const emq_bytes *argv)
{
    w->sum.commands++;
    if (!w->write)
        return EMQ_OK;
    if (emq_resp_write_cmd(&w->out, argc, argv) != EMQ_OK)
        return EMQ_ENOMEM;
    return w->out.len >= FLUSH_AT ? sink(w) : EMQ_OK;
}

/* A finished record, to the per-key callback. */
static int each(walk *w, const emq_typedef *t, const unsigned char *key,
                size_t klen, int64_t expire)
{
    emq_keyrec r = {key, klen, t->tag, expire, w->ko.n, w->ko.hash};
    int rc;
    if (!w->each || (rc = w->each(w->each_ctx, &r)) == 0)
        return EMQ_OK;
    return rc < 0 ? rc : emq_db_fail(w->db, EMQ_EINTERNAL, "digest walk");
}

/* --------------------------------------------------------- one key */

/* Write one key: its commands (when writing) and its record (when the
 * digest is being fed). A key with no element does not exist. */
static int put_key(walk *w, const unsigned char *key, size_t klen, int type)
{
    const emq_typedef *t = emq_typedef_of(type);
    int64_t expire = -1, n = -1;
    uint64_t c0 = w->ko.commands;
    int rc;
    if (!t)
        return emq_db_fail(w->db, EMQ_ECORRUPT, "export: a key of an "
                                                "unknown type");
    rc = emq_key_expiry(w->st, key, klen, &expire);
    if (rc == EMQ_NOTFOUND)
        return EMQ_OK;
    if (rc != EMQ_OK)
        return rc;
    /* The store yields this type in digest order: announce the count and
     * stream the value instead of holding it. */
    if (t->sorted) {
        if ((rc = t->count(w->st, key, klen, &n)) != EMQ_OK)
            return rc;
        if (n <= 0)
            return EMQ_OK;
    }
    w->ko.out = w->write ? &w->out : NULL;
    emq_keyout_begin(&w->ko, t, key, klen, expire, n);
    rc = t->scan(w->st, key, klen, emq_keyout_elem_fn, &w->ko);
    if (rc > 0)
        rc = w->ko.rc; /* the keyout stopped the scan */
    if (rc == EMQ_OK)
        rc = emq_keyout_end(&w->ko);
    if (rc != EMQ_OK)
        return rc;
    if (w->ko.n == 0)
        return EMQ_OK; /* every hash field expired: the hash does not exist */
    w->sum.keys++;
    w->sum.commands += w->ko.commands - c0;
    if ((rc = each(w, t, key, klen, expire)) != EMQ_OK)
        return rc;
    return w->out.len >= FLUSH_AT ? sink(w) : EMQ_OK;
}

/* ----------------------------------------------------- key selection */

static int name_cmp(const void *a, size_t an, const void *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (an > bn) - (an < bn);
}

/* The digest record of "{emq}:version" as the export states it (the SET
 * itself is written first, by walk_tx). */
static int digest_version(walk *w)
{
    const emq_typedef *t = emq_typedef_of(EMQ_T_STRING);
    emq_elem v = {{w->wire, strlen(w->wire)}, {"", 0}, 0, -1};
    emq_buf *out = w->ko.out;
    if (w->version_digested)
        return EMQ_OK;
    w->version_digested = 1;
    w->ko.out = NULL;
    emq_keyout_begin(&w->ko, t, VKEY, VKEY_LEN, -1, 1);
    emq_keyout_add(&w->ko, &v);
    int rc = emq_keyout_end(&w->ko);
    w->ko.out = out;
    if (rc == EMQ_OK)
        rc = each(w, t, (const unsigned char *)VKEY, VKEY_LEN, -1);
    return rc;
}

/* Digest the version record once the walk passes its place in byte order. */
static int version_before(walk *w, const unsigned char *key, size_t klen)
{
    if (!w->version_digested && name_cmp(key, klen, VKEY, VKEY_LEN) > 0)
        return digest_version(w);
    return EMQ_OK;
}

static int collect(walk *w, const unsigned char *key, size_t klen, int type)
{
    if (w->nn == w->capn) {
        size_t cap = w->capn ? 2 * w->capn : 256;
        size_t *o = emq_mem_realloc(w->noff, 2 * cap * sizeof *o);
        if (!o)
            return EMQ_ENOMEM;
        w->noff = o;
        unsigned *s = emq_mem_realloc(w->nslot, cap * sizeof *s);
        if (!s)
            return EMQ_ENOMEM;
        w->nslot = s;
        int *t = emq_mem_realloc(w->ntype, cap * sizeof *t);
        if (!t)
            return EMQ_ENOMEM;
        w->ntype = t;
        w->capn = cap;
    }
    w->noff[2 * w->nn] = w->names.len;
    w->noff[2 * w->nn + 1] = klen;
    w->nslot[w->nn] = emq_slot(key, klen);
    w->ntype[w->nn] = type;
    if (emq_buf_append(&w->names, key, klen) != EMQ_OK)
        return EMQ_ENOMEM;
    w->nn++;
    return EMQ_OK;
}

/* emq_key_scan callback: every live key of the selection, in byte order. */
static int on_key(void *ctx, const unsigned char *key, size_t klen, int type)
{
    walk *w = ctx;
    int rc;
    if (klen == VKEY_LEN && memcmp(key, VKEY, VKEY_LEN) == 0) {
        /* Written first, digested in its place in byte order (by-slot
         * digests in its second pass). */
        rc = w->by_slot ? EMQ_OK : digest_version(w);
    } else if (w->by_slot) {
        rc = collect(w, key, klen, type);
    } else if ((rc = version_before(w, key, klen)) == EMQ_OK) {
        rc = put_key(w, key, klen, type);
    }
    if (rc != EMQ_OK) {
        w->rc = rc;
        return 1;
    }
    return 0;
}

/* by-slot: the digest stays in byte order, so it is computed by a first,
 * write-free pass; the bytes go out slot by slot. */
typedef struct slotted {
    unsigned slot;
    size_t i;     /* index in byte order */
} slotted;

static int cmp_slot(const void *a, const void *b)
{
    const slotted *x = a, *y = b;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i); /* byte order within a slot */
}

static int write_by_slot(walk *w)
{
    int rc = EMQ_OK;
    slotted *sl = emq_mem_malloc((w->nn ? w->nn : 1) * sizeof *sl);
    size_t *ord = emq_mem_malloc((w->nn ? w->nn : 1) * sizeof *ord);
    if (!ord || !sl) {
        emq_mem_free(sl);
        emq_mem_free(ord);
        return EMQ_ENOMEM;
    }
    for (size_t i = 0; i < w->nn; i++) {
        sl[i].slot = w->nslot[i];
        sl[i].i = i;
    }
    qsort(sl, w->nn, sizeof *sl, cmp_slot);
    for (size_t i = 0; i < w->nn; i++)
        ord[i] = sl[i].i;
    emq_mem_free(sl);
    /* The digest is not part of this pass. */
    emq_dg *dg = w->ko.dg;
    w->ko.dg = NULL;
    emq_bytes multi[1] = {{"MULTI", 5}}, exec[1] = {{"EXEC", 4}};
    for (size_t k = 0; k < w->nn && rc == EMQ_OK; k++) {
        size_t i = ord[k];
        int first = k == 0 || w->nslot[ord[k - 1]] != w->nslot[i];
        int last = k + 1 == w->nn || w->nslot[ord[k + 1]] != w->nslot[i];
        if (first && (rc = emit(w, 1, multi)) != EMQ_OK)
            break;
        rc = put_key(w, w->names.p + w->noff[2 * i], w->noff[2 * i + 1],
                     w->ntype[i]);
        if (rc == EMQ_OK && last)
            rc = emit(w, 1, exec);
    }
    w->ko.dg = dg;
    emq_mem_free(ord);
    return rc;
}

/* Sorted, de-duplicated key prefixes "emq:{q}:" of the queue filter. */
static int prefixes(emq_db *db, const emq_export_options *o, char ***out)
{
    *out = NULL;
    if (!o || !o->queues)
        return EMQ_OK;
    char **p = emq_mem_calloc(o->n_queues ? o->n_queues : 1, sizeof *p);
    if (!p)
        return EMQ_ENOMEM;
    for (size_t i = 0; i < o->n_queues; i++) {
        if (!o->queues[i] || !emq_queue_valid(o->queues[i])) {
            for (size_t j = 0; j < i; j++)
                emq_mem_free(p[j]);
            emq_mem_free(p);
            return emq_db_fail(db, EMQ_EINVAL, "export: invalid queue "
                                               "name in the filter");
        }
        size_t n = strlen(o->queues[i]);
        p[i] = emq_mem_malloc(n + 8);
        if (!p[i]) {
            for (size_t j = 0; j < i; j++)
                emq_mem_free(p[j]);
            emq_mem_free(p);
            return EMQ_ENOMEM;
        }
        memcpy(p[i], "emq:{", 5);
        memcpy(p[i] + 5, o->queues[i], n);
        memcpy(p[i] + 5 + n, "}:", 3);
    }
    *out = p;
    return EMQ_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The whole walk, in a transaction (export: a read; import: its write). */
static int walk_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    walk *w = ctx;
    char **pre = NULL;
    int rc;
    (void)now;
    w->st = st;
    rc = prefixes(db, &w->opt, &pre);
    if (rc != EMQ_OK)
        return rc;
    size_t np = pre ? w->opt.n_queues : 0;
    if (pre)
        qsort(pre, np, sizeof *pre, cmp_str);

    /* The fence first: the identity asked for, else the file's own. */
    if (!w->opt.wire) {
        emq_buf v = {0};
        rc = emq_str_get(st, VKEY, VKEY_LEN, &v);
        w->wire = rc == EMQ_OK ? emq_wire_known(v.p, v.len) : NULL;
        emq_buf_free(&v);
        if (rc < 0 && rc != EMQ_NOTFOUND)
            goto done;
        if (!w->wire) {
            rc = emq_db_wire(db, EMQ_EWIRE, "export: the file's "
                             "{emq}:version is absent or no identity of the "
                             "wire table");
            goto done;
        }
    }
    emq_bytes fence[3] = {{"SET", 3}, {VKEY, VKEY_LEN},
                          {w->wire, strlen(w->wire)}};
    if ((rc = emit(w, 3, fence)) != EMQ_OK)
        goto done;
    w->sum.keys++;

    w->rc = EMQ_OK;
    if (!pre) {
        rc = emq_key_scan(st, "", 0, on_key, w);
    } else {
        rc = EMQ_OK;
        for (size_t i = 0; i < np && rc == EMQ_OK; i++) {
            if (i > 0 && strcmp(pre[i], pre[i - 1]) == 0)
                continue;
            rc = emq_key_scan(st, pre[i], strlen(pre[i]), on_key, w);
        }
    }
    if (rc == 1 && w->rc != EMQ_OK)
        rc = w->rc;
    if (rc != EMQ_OK)
        goto done;
    if (w->by_slot) {
        /* Digest in byte order from the collected names, then write. */
        emq_write_fn keep = w->write;
        emq_transfer_summary s0 = w->sum;
        w->write = NULL;
        for (size_t i = 0; i < w->nn && rc == EMQ_OK; i++) {
            const unsigned char *k = w->names.p + w->noff[2 * i];
            if ((rc = version_before(w, k, w->noff[2 * i + 1])) == EMQ_OK)
                rc = put_key(w, k, w->noff[2 * i + 1], w->ntype[i]);
        }
        w->write = keep;
        w->sum = s0;
        if (rc == EMQ_OK && (rc = digest_version(w)) == EMQ_OK)
            rc = write_by_slot(w);
        if (rc != EMQ_OK)
            goto done;
    }
    if ((rc = digest_version(w)) == EMQ_OK)
        rc = sink(w);
done:
    if (pre) {
        for (size_t i = 0; i < np; i++)
            emq_mem_free(pre[i]);
        emq_mem_free(pre);
    }
    if (rc == EMQ_EIO && w->sink_failed)
        return emq_db_fail(db, EMQ_EIO, "export: the sink refused bytes");
    return rc;
}

static void walk_free(walk *w)
{
    emq_buf_free(&w->out);
    emq_buf_free(&w->names);
    emq_keyout_free(&w->ko);
    emq_mem_free(w->noff);
    emq_mem_free(w->nslot);
    emq_mem_free(w->ntype);
}

/* A walk under the caller's options `opt` (NULL: the defaults), read under
 * the ABI rule of emqlite.h. EMQ_EINVAL (set on `db`, nothing to free)
 * for options the init did not set or a filter without its names. */
static int walk_init(walk *w, emq_db *db, const emq_export_options *opt,
                     emq_write_fn write, void *ctx)
{
    memset(w, 0, sizeof *w);
    emq_export_options_init(&w->opt);
    if (opt && emq_struct_in(&w->opt, sizeof w->opt, opt) != EMQ_OK)
        return emq_db_fail(db, EMQ_EINVAL, "export: options not set by "
                           "emq_export_options_init(), or a field this "
                           "library does not know");
    if (w->opt.n_queues && !w->opt.queues)
        return emq_db_fail(db, EMQ_EINVAL, "export: n_queues without "
                           "queues");
    if (w->opt.wire &&
        !(w->wire = emq_wire_known(w->opt.wire, strlen(w->opt.wire)))) {
        char known[100], msg[EMQ_ERRMSG_MAX];
        emq_wire_list(known, sizeof known);
        snprintf(msg, sizeof msg, "export: wire '%.100s' is no identity of "
                 "the table (%s)", w->opt.wire, known);
        return emq_db_fail(db, EMQ_EINVAL, msg);
    }
    w->db = db;
    w->write = write;
    w->ctx = ctx;
    w->by_slot = write && w->opt.by_slot;
    emq_dg_init(&w->dg);
    w->ko.dg = &w->dg;
    return EMQ_OK;
}

/* The counts and digest of a walk that succeeded. */
static void walk_sum(walk *w, emq_transfer_summary *sum)
{
    w->sum.digest = emq_dg_value(&w->dg);
    if (!w->write)
        w->sum.commands = 0, w->sum.bytes = 0;
    if (sum)
        *sum = w->sum;
}

static int run_walk(walk *w, emq_transfer_summary *sum)
{
    int rc = emq_db_run(w->db, 0, walk_tx, w);
    if (rc == EMQ_OK)
        walk_sum(w, sum);
    walk_free(w);
    return rc;
}

/* -------------------------------------------------------------- the API */

typedef struct unheld_note {
    emq_note_fn note;
    void *ctx;
} unheld_note;

static void on_unheld(void *ctx, const unsigned char *key, size_t klen,
                      const unsigned char *g, size_t glen, uint64_t n)
{
    unheld_note *u = ctx;
    emq_transfer_note t = { EMQ_NOTE_UNHELD, "left out: a Valkey target "
                            "cannot hold them", key, klen, g, glen, n };
    u->note(u->ctx, &t);
}

/* Count and hash bytes on their way to the caller's sink. */
typedef struct counted {
    emq_write_fn write;
    void *ctx;
    uint64_t bytes;
    emq_dg hash;     /* XXH3-64 of the bytes (the end record states it) */
} counted;

static int count_write(void *ctx, const void *p, size_t n)
{
    counted *c = ctx;
    c->bytes += n;
    emq_dg_feed(&c->hash, p, n);
    return c->write(c->ctx, p, n);
}

int emq_export_end_text(char *out, size_t cap, uint64_t commands,
                        uint64_t bytes, uint64_t xxh3)
{
    return snprintf(out, cap, EMQ_EXPORT_END " 1 commands=%llu bytes=%llu "
                    "xxh3=%016llx", (unsigned long long)commands,
                    (unsigned long long)bytes, (unsigned long long)xxh3);
}

/* The end record: ECHO "<EMQ_EXPORT_END> 1 commands=C bytes=B xxh3=H",
 * stating what came before it (doc/EXPORT.md §1.1). */
static int write_end(emq_db *db, counted *c, emq_transfer_summary *s)
{
    char text[EMQ_EXPORT_END_MAX];
    emq_buf out = {0};
    int n = emq_export_end_text(text, sizeof text, s->commands, c->bytes,
                                emq_dg_value(&c->hash));
    emq_bytes argv[2] = {{"ECHO", 4}, {text, (size_t)n}};
    int rc = emq_resp_write_cmd(&out, 2, argv);
    if (rc != EMQ_OK) {
        emq_buf_free(&out);
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    }
    if (c->write(c->ctx, out.p, out.len) != 0)
        rc = emq_db_fail(db, EMQ_EIO, "export: the sink refused bytes");
    c->bytes += out.len;
    s->commands++;
    emq_buf_free(&out);
    return rc;
}

void emq_export_options_init_size(emq_export_options *o, size_t size)
{
    emq_export_options d;
    memset(&d, 0, sizeof d);
    emq_struct_out(o, size, &d, sizeof d);
}

int emq_export_sealed(emq_db *db, const emq_export_options *opt,
                      emq_write_fn write, void *ctx,
                      emq_transfer_summary *sum, int seal)
{
    int rc = emq_db_enter(db);
    if (rc < 0) return rc;
    if (!write)
        return emq_db_fail(db, EMQ_EINVAL, "export: no sink");
    counted c;
    c.write = write;
    c.ctx = ctx;
    c.bytes = 0;
    emq_dg_init(&c.hash);
    emq_transfer_summary s;
    walk w;
    if ((rc = walk_init(&w, db, opt, count_write, &c)) != EMQ_OK)
        return rc;
    emq_note_fn note = w.opt.note;
    void *note_ctx = w.opt.note_ctx;
    emq_export_options sel = w.opt;
    rc = run_walk(&w, &s);
    if (rc == EMQ_OK && seal)
        rc = write_end(db, &c, &s);
    if (rc == EMQ_OK && sum) {
        s.bytes = c.bytes;
        *sum = s;
    }
    /* What the stream left out: pending records of trimmed entries. */
    if (rc == EMQ_OK && note) {
        unheld_note un = { note, note_ctx };
        rc = emq_unheld(db, &sel, on_unheld, &un);
    }
    return rc;
}

int emq_export(emq_db *db, const emq_export_options *opt, emq_write_fn write,
               void *ctx, emq_transfer_summary *sum)
{
    return emq_export_sealed(db, opt, write, ctx, sum, 1);
}

int emq_digest_each(emq_db *db, const emq_export_options *opt,
                    emq_keyrec_fn fn, void *ctx, emq_transfer_summary *sum)
{
    int rc = emq_db_enter(db);
    if (rc < 0) return rc;
    walk w;
    if ((rc = walk_init(&w, db, opt, NULL, NULL)) != EMQ_OK)
        return rc;
    w.each = fn;
    w.each_ctx = ctx;
    w.ko.one = fn != NULL;
    return run_walk(&w, sum);
}

int emq_digest(emq_db *db, const emq_export_options *opt,
               emq_transfer_summary *sum)
{
    return emq_digest_each(db, opt, NULL, NULL, sum);
}

int emq_digest_tx(emq_db *db, emq_store *st, emq_transfer_summary *sum)
{
    walk w;
    int rc = walk_init(&w, db, NULL, NULL, NULL);
    if (rc == EMQ_OK)
        rc = walk_tx(db, st, 0, &w);
    if (rc == EMQ_OK)
        walk_sum(&w, sum);
    walk_free(&w);
    return rc;
}
