/*
 * xsout.c — a stream key's transfer form (xsout.h): the commands an export
 * writes for it and its digest body (doc/EXPORT.md §1, §3), read from the
 * store's stream type (stream.c). The type table's stream row (types.c)
 * reads a stream through here.
 *
 * Digest body of a stream (after str(name) 'x' i64(expiry)):
 *   str(last id) u64(entries-added) str(max-deleted id)
 *   u64(entries) then per entry in id order: str(id) u64(n) str(x) * n
 *     (the n names and values in stored order)
 *   u64(groups) then per group in name order: str(name)
 *     str(last-delivered id) i64(entries-read, -1 unknown)
 *     u64(consumers) str(consumer) * in name order
 *     u64(pending) then per pending entry whose entry exists, in id order:
 *       str(id) str(owner) i64(delivery ms) u64(delivery count)
 * Ids are their "<ms>-<seq>" text. A consumer's seen and active times are
 * not part of it (a replay sets them to its own time).
 */
#include <stdio.h>
#include <string.h>
#include "stream.h"
#include "xsout.h"

typedef struct xw {
    emq_store *st;
    const void *key;
    size_t klen;
    const emq_xsink *out;
    int rc;
    /* the group being written */
    const unsigned char *g;
    size_t glen;
    uint64_t n;           /* a count being taken (first pass) */
} xw;

/* ------------------------------------------------------------ digest */

static void d_u64(const emq_xsink *o, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    o->digest(o->ctx, b, 8);
}

static void d_str(const emq_xsink *o, const void *p, size_t n)
{
    d_u64(o, n);
    if (n)
        o->digest(o->ctx, p, n);
}

/* ---------------------------------------------------------- commands */

static int emit(xw *w, size_t argc, const emq_bytes *argv)
{
    int rc = w->out->emit(w->out->ctx, argc, argv);
    if (rc != EMQ_OK)
        w->rc = rc;
    return rc;
}

static int on_entry(void *ctx, emq_xid id, const emq_bytes *fv, size_t nfv)
{
    xw *w = ctx;
    char b[EMQ_XID_BUF];
    size_t n = emq_xid_fmt(b, id);
    emq_bytes *argv = emq_mem_malloc((3 + nfv) * sizeof *argv);
    int rc;
    if (!argv)
        return w->rc = EMQ_ENOMEM;
    argv[0] = (emq_bytes){ "XADD", 4 };
    argv[1] = (emq_bytes){ w->key, w->klen };
    argv[2] = (emq_bytes){ b, n };
    memcpy(argv + 3, fv, nfv * sizeof *fv);
    rc = emit(w, 3 + nfv, argv);
    emq_mem_free(argv);
    if (rc != EMQ_OK)
        return rc;
    d_str(w->out, b, n);
    d_u64(w->out, nfv);
    for (size_t i = 0; i < nfv; i++)
        d_str(w->out, fv[i].p, fv[i].n);
    return EMQ_OK;
}

static int count_consumer(void *ctx, const unsigned char *c, size_t clen,
                          int64_t seen, int64_t active, int64_t pending)
{
    (void)c, (void)clen, (void)seen, (void)active, (void)pending;
    ((xw *)ctx)->n++;
    return EMQ_OK;
}

static int on_consumer(void *ctx, const unsigned char *c, size_t clen,
                       int64_t seen, int64_t active, int64_t pending)
{
    xw *w = ctx;
    emq_bytes argv[5] = { { "XGROUP", 6 }, { "CREATECONSUMER", 14 },
                          { w->key, w->klen }, { w->g, w->glen },
                          { c, clen } };
    (void)seen, (void)active, (void)pending;
    if (emit(w, 5, argv) != EMQ_OK)
        return w->rc;
    d_str(w->out, c, clen);
    return EMQ_OK;
}

/* Pending records whose entry exists: counted, then written. */
static int live_pel(xw *w, emq_xid id, int *live)
{
    int rc;
    *live = emq_xs_exists(w->st, w->key, w->klen, id, &rc);
    if (rc != EMQ_OK)
        w->rc = rc;
    return rc;
}

static int count_pel(void *ctx, emq_xid id, const unsigned char *c,
                     size_t clen, int64_t delivered, int64_t count)
{
    xw *w = ctx;
    int live;
    (void)c, (void)clen, (void)delivered, (void)count;
    if (live_pel(w, id, &live) != EMQ_OK)
        return w->rc;
    w->n += live;
    return EMQ_OK;
}

static int on_pel(void *ctx, emq_xid id, const unsigned char *c, size_t clen,
                  int64_t delivered, int64_t count)
{
    xw *w = ctx;
    char b[EMQ_XID_BUF], t[24], n[24];
    int live;
    if (live_pel(w, id, &live) != EMQ_OK)
        return w->rc;
    if (!live)
        return EMQ_OK;
    size_t bl = emq_xid_fmt(b, id);
    emq_bytes argv[12] = { { "XCLAIM", 6 }, { w->key, w->klen },
                           { w->g, w->glen }, { c, clen }, { "0", 1 },
                           { b, bl }, { "TIME", 4 },
                           { t, emq_fmt_i64(t, delivered) },
                           { "RETRYCOUNT", 10 },
                           { n, emq_fmt_i64(n, count) }, { "FORCE", 5 },
                           { "JUSTID", 6 } };
    if (emit(w, 12, argv) != EMQ_OK)
        return w->rc;
    d_str(w->out, b, bl);
    d_str(w->out, c, clen);
    d_u64(w->out, (uint64_t)delivered);
    d_u64(w->out, (uint64_t)count);
    return EMQ_OK;
}

static int count_group(void *ctx, const emq_xgroup_info *g)
{
    (void)g;
    ((xw *)ctx)->n++;
    return EMQ_OK;
}

static int on_group(void *ctx, const emq_xgroup_info *g)
{
    xw *w = ctx;
    char b[EMQ_XID_BUF], er[24];
    size_t bl = emq_xid_fmt(b, g->last);
    emq_bytes argv[7] = { { "XGROUP", 6 }, { "CREATE", 6 },
                          { w->key, w->klen }, { g->name, g->nlen },
                          { b, bl }, { "ENTRIESREAD", 11 },
                          { er, g->entries_read >= 0
                                    ? emq_fmt_i64(er, g->entries_read) : 0 } };
    int rc;
    if (emit(w, g->entries_read >= 0 ? 7 : 5, argv) != EMQ_OK)
        return w->rc;
    d_str(w->out, g->name, g->nlen);
    d_str(w->out, b, bl);
    d_u64(w->out, (uint64_t)g->entries_read);
    w->g = g->name;
    w->glen = g->nlen;
    /* Consumers, then pending entries: each counted first for the
     * digest's length prefix. */
    w->n = 0;
    if ((rc = emq_xs_consumers(w->st, w->key, w->klen, g->name, g->nlen,
                               count_consumer, w)) != EMQ_OK)
        return rc;
    d_u64(w->out, w->n);
    if ((rc = emq_xs_consumers(w->st, w->key, w->klen, g->name, g->nlen,
                               on_consumer, w)) != EMQ_OK)
        return rc;
    w->n = 0;
    if ((rc = emq_xs_pel(w->st, w->key, w->klen, g->name, g->nlen, NULL, 0,
                         0, count_pel, w)) != EMQ_OK)
        return rc;
    d_u64(w->out, w->n);
    return emq_xs_pel(w->st, w->key, w->klen, g->name, g->nlen, NULL, 0, 0,
                      on_pel, w);
}

int emq_stream_export(emq_store *st, const void *key, size_t klen,
                      const emq_xsink *out)
{
    emq_xmeta m;
    emq_xid lo = { 0, 0 }, hi = { UINT64_MAX, UINT64_MAX };
    xw w = { st, key, klen, out, EMQ_OK, NULL, 0, 0 };
    char last[EMQ_XID_BUF], maxdel[EMQ_XID_BUF], added[24];
    int rc = emq_xs_meta(st, key, klen, &m);
    if (rc != EMQ_OK)
        return rc;
    size_t ll = emq_xid_fmt(last, m.last);
    size_t ml = emq_xid_fmt(maxdel, m.max_deleted);
    d_str(out, last, ll);
    d_u64(out, m.entries_added);
    d_str(out, maxdel, ml);
    d_u64(out, m.length);
    if (m.length == 0) {
        /* An emptied stream, as Valkey's AOF rewrite makes one: an entry
         * at 0-1 trimmed at once; XSETID below sets the real last id. */
        emq_bytes argv[7] = { { "XADD", 4 }, { key, klen }, { "MAXLEN", 6 },
                              { "0", 1 }, { "0-1", 3 }, { "x", 1 },
                              { "y", 1 } };
        if ((rc = emit(&w, 7, argv)) != EMQ_OK)
            return rc;
    } else if ((rc = emq_xs_range(st, key, klen, lo, hi, 0, 0, on_entry, &w))
               != EMQ_OK) {
        return w.rc != EMQ_OK ? w.rc : rc;
    }
    emq_bytes set[7] = { { "XSETID", 6 }, { key, klen }, { last, ll },
                         { "ENTRIESADDED", 12 },
                         { added, emq_fmt_i64(added,
                                              (int64_t)m.entries_added) },
                         { "MAXDELETEDID", 12 }, { maxdel, ml } };
    if ((rc = emit(&w, 7, set)) != EMQ_OK)
        return rc;
    w.n = 0;
    if ((rc = emq_xs_groups(st, key, klen, count_group, &w)) != EMQ_OK)
        return rc;
    d_u64(out, w.n);
    rc = emq_xs_groups(st, key, klen, on_group, &w);
    return w.rc != EMQ_OK ? w.rc : rc;
}
