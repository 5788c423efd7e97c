/*
 * stream_api.c — the typed C calls of the Tier 5 stream verbs (emqlite.h
 * "Streams") and the T5.7 stream consumer loop.
 *
 * Every call is a thin wrapper over its registry row (emq_verb_exec); the
 * replies are turned into emq_stream_entry arrays here. The consumer loop
 * runs the same rows in the order the reference's loop issues them.
 */
#include <stdio.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "abi.h"
#include "verb.h"
#include "bus.h"

/* ------------------------------------------------------------- arguments */

/* q, name, then `extra` fixed arguments, then a field list. */
typedef struct vlist {
    emq_varg *a;
    size_t n;
} vlist;

static int vlist_make(emq_db *db, vlist *v, size_t fixed, size_t nfv)
{
    v->n = 0;
    v->a = emq_mem_calloc(fixed + nfv + 1, sizeof *v->a);
    return v->a ? EMQ_OK : emq_db_fail(db, EMQ_ENOMEM, NULL);
}

static void vput(vlist *v, emq_varg a)
{
    v->a[v->n++] = a;
}

static int vfields(emq_db *db, vlist *v, const void *const *fv,
                   const size_t *fvlen, size_t nfv)
{
    if (nfv && !fv)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL fields");
    for (size_t i = 0; i < nfv; i++) {
        if (!fv[i])
            return emq_db_wire(db, EMQ_EINVAL, "bad argument: a NULL field");
        vput(v, emq_varg_bytes(fv[i], fvlen ? fvlen[i] : strlen(fv[i])));
    }
    return EMQ_OK;
}

/* An optional integer argument: absent when v < 0. */
static emq_varg opt_int(int64_t v)
{
    return v < 0 ? emq_varg_str(NULL) : emq_varg_int(v);
}

/* --------------------------------------------------------------- entries */

static char *dup_bytes(const char *p, size_t n)
{
    char *s = emq_mem_malloc(n + 1);
    if (s) {
        if (n)
            memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* An entry's fields are one allocation: the emq_field array, then each
 * name and value with its NUL (entry_from), so an entry costs one malloc
 * and one free, not 1 + 2 per field. */
void emq_stream_entries_free(emq_stream_entry *e, size_t n)
{
    if (!e)
        return;
    for (size_t i = 0; i < n; i++)
        emq_mem_free(e[i].fields);
    emq_mem_free(e);
}

/* 1 when the field at fv->elem[at] goes into the entry: every one in the
 * raw forms; in the read forms (idat: the first `id` field's index, taken
 * into e->id, or fv->n) every other name once, at its first place. */
static int kept(const emq_reply *fv, size_t at, int read, size_t idat)
{
    const emq_reply *f = &fv->elem[at];
    if (!read)
        return 1;
    if (at == idat)
        return 0;
    for (size_t k = 0; k < at; k += 2)
        if (k != idat && fv->elem[k].len == f->len &&
            memcmp(fv->elem[k].str, f->str, f->len) == 0)
            return 0;
    return 1;
}

/* Fill one entry from a raw [xid, [f, v, ...] | nil] (read: the first
 * `id` field into e->id, the remaining fields each name once). */
static int entry_from(emq_stream_entry *e, const emq_reply *r, int read)
{
    const emq_reply *fv;
    size_t nf = 0, bytes = 0, idat;
    char *at;
    memset(e, 0, sizeof *e);
    if (r->type != EMQ_REPLY_ARRAY || r->n != 2)
        return EMQ_EINTERNAL;
    snprintf(e->xid, sizeof e->xid, "%.*s", (int)r->elem[0].len,
             r->elem[0].str ? r->elem[0].str : "");
    fv = &r->elem[1];
    if (fv->type != EMQ_REPLY_ARRAY) {
        e->gone = 1;
        return EMQ_OK;
    }
    for (idat = 0; read && idat + 1 < fv->n; idat += 2)
        if (fv->elem[idat].len == 2 && memcmp(fv->elem[idat].str, "id", 2) == 0)
            break;
    if (!read || idat + 1 >= fv->n)
        idat = fv->n;
    else if (fv->elem[idat + 1].len == EMQ_ID_LEN)
        memcpy(e->id, fv->elem[idat + 1].str, EMQ_ID_LEN);
    for (size_t i = 0; i + 1 < fv->n; i += 2)
        if (kept(fv, i, read, idat)) {
            nf++;
            bytes += fv->elem[i].len + fv->elem[i + 1].len + 2;
        }
    if (nf == 0)
        return EMQ_OK;
    if (!(e->fields = emq_mem_malloc(nf * sizeof *e->fields + bytes)))
        return EMQ_ENOMEM;
    at = (char *)(e->fields + nf);
    for (size_t i = 0; i + 1 < fv->n; i += 2) {
        const emq_reply *f = &fv->elem[i], *v = &fv->elem[i + 1];
        if (!kept(fv, i, read, idat))
            continue;
        emq_field *o = &e->fields[e->nfields++];
        o->name = at;
        o->name_len = f->len;
        if (f->len)
            memcpy(at, f->str, f->len);
        at[f->len] = '\0';
        at += f->len + 1;
        o->value = at;
        o->value_len = v->len;
        if (v->len)
            memcpy(at, v->str, v->len);
        at[v->len] = '\0';
        at += v->len + 1;
    }
    return EMQ_OK;
}

/* An array of raw entries (or of bare ids with `ids`) into *e / *n. */
static int entries_from(emq_db *db, const emq_reply *r, int read, int ids,
                        emq_stream_entry **e, size_t *n)
{
    size_t cnt = r->type == EMQ_REPLY_ARRAY ? r->n : 0;
    emq_stream_entry *out = emq_mem_calloc(cnt ? cnt : 1, sizeof *out);
    int rc = EMQ_OK;
    *e = NULL;
    *n = 0;
    if (!out)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    for (size_t i = 0; i < cnt && rc == EMQ_OK; i++) {
        if (ids) {
            snprintf(out[i].xid, sizeof out[i].xid, "%.*s",
                     (int)r->elem[i].len, r->elem[i].str ? r->elem[i].str
                                                         : "");
            out[i].gone = 1;
        } else {
            rc = entry_from(&out[i], &r->elem[i], read);
        }
    }
    if (rc != EMQ_OK) {
        emq_stream_entries_free(out, cnt);
        return emq_db_fail(db, rc, "a stream reply");
    }
    *e = out;
    *n = cnt;
    return EMQ_OK;
}

static int need_out(emq_db *db, const void *a, const void *b)
{
    if (!a || !b)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL output");
    return EMQ_OK;
}

/* ----------------------------------------------------------------- calls */

/* append (id NULL: minted, into out) and append_id. */
static int append_call(emq_db *db, int verb, const char *q, const char *name,
                       const char *id, const void *const *fv,
                       const size_t *fvlen, size_t nfv, char *out)
{
    vlist v;
    int rc;
    if ((rc = emq_db_enter(db)) < 0 || (rc = vlist_make(db, &v, 3, nfv)) < 0)
        return rc;
    vput(&v, emq_varg_str(q));
    vput(&v, emq_varg_str(name));
    vput(&v, emq_varg_str(id));
    if ((rc = vfields(db, &v, fv, fvlen, nfv)) == EMQ_OK)
        rc = emq_verb_exec(db, verb, v.a, v.n, NULL, out);
    emq_mem_free(v.a);
    return rc;
}

int emq_stream_append_id(emq_db *db, const char *q, const char *name,
                         const char *id, const void *const *fv,
                         const size_t *fvlen, size_t nfv)
{
    return append_call(db, EMQ_V_APPEND_ID, q, name, id, fv, fvlen, nfv,
                       NULL);
}

int emq_stream_append(emq_db *db, const char *q, const char *name,
                      const void *const *fv, const size_t *fvlen, size_t nfv,
                      char id_out[EMQ_ID_SIZE])
{
    char id[EMQ_ID_SIZE] = "";
    int rc = append_call(db, EMQ_V_APPEND, q, name, NULL, fv, fvlen, nfv,
                         id);
    if (id_out)
        memcpy(id_out, rc == EMQ_OK ? id : "", rc == EMQ_OK ? EMQ_ID_SIZE : 1);
    return rc;
}

int emq_stream_append_batch(emq_db *db, const char *q, const char *name,
                            size_t nrec, const size_t *nfv,
                            const void *const *fv, const size_t *fvlen,
                            char (*ids)[EMQ_ID_SIZE], int *outcomes)
{
    size_t total = 0, i, at = 0;
    char (*counts)[24] = NULL;
    emq_reply r = {0};
    vlist v = { NULL, 0 };
    int rc;
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    if (nrec && (!nfv || !ids))
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL record "
                                           "sizes or ids");
    for (i = 0; i < nrec; i++)
        total += nfv[i];
    if (!(counts = emq_mem_malloc((nrec ? nrec : 1) * sizeof *counts)) ||
        (rc = vlist_make(db, &v, 2 + nrec, total)) < 0) {
        emq_mem_free(counts);
        return rc < 0 ? rc : emq_db_fail(db, EMQ_ENOMEM, NULL);
    }
    vput(&v, emq_varg_str(q));
    vput(&v, emq_varg_str(name));
    for (i = 0; i < nrec && rc == EMQ_OK; i++) {
        /* The record's field count frames it inside the byte-string
         * tail: it is text there, not an integer argument. */
        int len = snprintf(counts[i], sizeof counts[i], "%zu", nfv[i]);
        vput(&v, emq_varg_bytes(counts[i], (size_t)len));
        rc = vfields(db, &v, fv ? fv + at : NULL, fvlen ? fvlen + at : NULL,
                     nfv[i]);
        at += nfv[i];
    }
    if (rc == EMQ_OK)
        rc = emq_verb_exec(db, EMQ_V_APPEND_BATCH, v.a, v.n, &r, outcomes);
    for (i = 0; rc == EMQ_OK && i < r.n && i < nrec; i++)
        snprintf(ids[i], EMQ_ID_SIZE, "%s", r.elem[i].str);
    emq_reply_clear(&r);
    emq_mem_free(v.a);
    emq_mem_free(counts);
    return rc;
}

int emq_stream_add(emq_db *db, const char *q, const char *name,
                   const char *xid, const void *const *fv,
                   const size_t *fvlen, size_t nfv,
                   char xid_out[EMQ_XID_SIZE])
{
    emq_reply r = {0};
    vlist v;
    int rc;
    if ((rc = emq_db_enter(db)) < 0 || (rc = vlist_make(db, &v, 3, nfv)) < 0)
        return rc;
    vput(&v, emq_varg_str(q));
    vput(&v, emq_varg_str(name));
    vput(&v, emq_varg_str(xid));
    if ((rc = vfields(db, &v, fv, fvlen, nfv)) == EMQ_OK)
        rc = emq_verb_exec(db, EMQ_V_STREAM_ADD, v.a, v.n, &r, NULL);
    if (xid_out)
        snprintf(xid_out, EMQ_XID_SIZE, "%s",
                 rc == EMQ_OK && r.str ? r.str : "");
    emq_reply_clear(&r);
    emq_mem_free(v.a);
    return rc;
}

/* Run a reading row and convert its entries (read: via the raw reply the
 * body hands to c->out). */
static int run_entries(emq_db *db, int verb, const emq_varg *a, size_t n,
                       int read, emq_stream_entry **e, size_t *ne)
{
    emq_reply r = {0}, raw = {0};
    int rc;
    if ((rc = need_out(db, e, ne)) < 0)
        return rc;
    *e = NULL;
    *ne = 0;
    rc = emq_verb_exec(db, verb, a, n, &r, read ? &raw : NULL);
    if (rc >= 0) {
        int c = entries_from(db, read ? &raw : &r, read, 0, e, ne);
        if (c < 0)
            rc = c;
    }
    emq_reply_clear(&r);
    emq_reply_clear(&raw);
    return rc;
}

/* range and read: q, name, from, to, count. */
static int range_call(emq_db *db, int verb, const char *q, const char *name,
                      const char *from, const char *to, int64_t count,
                      emq_stream_entry **e, size_t *n)
{
    emq_varg a[5] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_str(from), emq_varg_str(to),
                      opt_int(count) };
    int rc = emq_db_enter(db);
    return rc < 0 ? rc : run_entries(db, verb, a, 5, verb == EMQ_V_READ, e,
                                     n);
}

int emq_stream_range(emq_db *db, const char *q, const char *name,
                     const char *from, const char *to, int64_t count,
                     emq_stream_entry **e, size_t *n)
{
    return range_call(db, EMQ_V_STREAM_RANGE, q, name, from, to, count, e,
                      n);
}

int emq_stream_len(emq_db *db, const char *q, const char *name,
                   int64_t *len)
{
    emq_varg a[2] = { emq_varg_str(q), emq_varg_str(name) };
    emq_reply r = {0};
    int rc = emq_db_enter(db);
    if (rc < 0 || (rc = need_out(db, len, len)) < 0)
        return rc;
    rc = emq_verb_exec(db, EMQ_V_STREAM_LEN, a, 2, &r, NULL);
    *len = rc == EMQ_OK ? r.integer : 0;
    emq_reply_clear(&r);
    return rc;
}

int emq_stream_read(emq_db *db, const char *q, const char *name,
                    const char *from, const char *to, int64_t count,
                    emq_stream_entry **e, size_t *n)
{
    return range_call(db, EMQ_V_READ, q, name, from, to, count, e, n);
}

int emq_stream_read_window(emq_db *db, const char *q, const char *name,
                           int64_t t0_ms, int64_t t1_ms, int64_t count,
                           emq_stream_entry **e, size_t *n)
{
    emq_varg a[5] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_int(t0_ms), emq_varg_int(t1_ms),
                      opt_int(count) };
    int rc = emq_db_enter(db);
    return rc < 0 ? rc : run_entries(db, EMQ_V_READ_WINDOW, a, 5, 1, e, n);
}

int emq_stream_read_since(emq_db *db, const char *q, const char *name,
                          int64_t t0_ms, int64_t count, emq_stream_entry **e,
                          size_t *n)
{
    emq_varg a[4] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_int(t0_ms), opt_int(count) };
    int rc = emq_db_enter(db);
    return rc < 0 ? rc : run_entries(db, EMQ_V_READ_SINCE, a, 4, 1, e, n);
}

int emq_stream_trim(emq_db *db, const char *q, const char *name, int kind,
                    int64_t value, int exact, int64_t *removed)
{
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    if (kind != EMQ_TRIM_MAXLEN && kind != EMQ_TRIM_MINID)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: window.kind must "
                                           "be EMQ_TRIM_MAXLEN or _MINID");
    emq_varg a[5] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_str(kind == EMQ_TRIM_MINID ? "minid"
                                                          : "maxlen"),
                      emq_varg_int(value),
                      emq_varg_str(exact ? "1" : "0") };
    rc = emq_verb_exec(db, EMQ_V_TRIM, a, 5, &r, NULL);
    if (removed)
        *removed = rc == EMQ_OK ? r.integer : 0;
    emq_reply_clear(&r);
    return rc;
}

int emq_stream_put_archived(emq_db *db, const char *q, const char *name,
                            const void *w, size_t wlen)
{
    emq_varg a[3] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_bytes(w, wlen) };
    int rc = emq_db_enter(db);
    return rc < 0 ? rc : emq_verb_exec(db, EMQ_V_PUT_ARCHIVED, a, 3, NULL,
                                       NULL);
}

int emq_stream_get_archived(emq_db *db, const char *q, const char *name,
                            char **w, size_t *wlen)
{
    emq_varg a[2] = { emq_varg_str(q), emq_varg_str(name) };
    emq_reply r = {0};
    int rc = emq_db_enter(db);
    if (rc < 0 || (rc = need_out(db, w, wlen)) < 0)
        return rc;
    *w = NULL;
    *wlen = 0;
    rc = emq_verb_exec(db, EMQ_V_GET_ARCHIVED, a, 2, &r, NULL);
    if (rc == EMQ_OK) {
        *w = r.str;
        *wlen = r.len;
        r.str = NULL;
    }
    emq_reply_clear(&r);
    return rc;
}

int emq_stream_clear_archived(emq_db *db, const char *q, const char *name)
{
    emq_varg a[2] = { emq_varg_str(q), emq_varg_str(name) };
    int rc = emq_db_enter(db);
    return rc < 0 ? rc : emq_verb_exec(db, EMQ_V_CLEAR_ARCHIVED, a, 2, NULL,
                                       NULL);
}

int emq_stream_group_create(emq_db *db, const char *q, const char *name,
                            const char *group, const char *start,
                            int mkstream)
{
    emq_varg a[5] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_str(group), emq_varg_str(start),
                      emq_varg_str(mkstream ? "1" : "0") };
    int rc = emq_db_enter(db);
    return rc < 0 ? rc : emq_verb_exec(db, EMQ_V_GROUP_CREATE, a, 5, NULL,
                                       NULL);
}

int emq_stream_group_read(emq_db *db, const char *q, const char *name,
                          const char *group, const char *consumer,
                          const char *id, int64_t count, int64_t block_ms,
                          emq_stream_entry **e, size_t *n)
{
    emq_varg a[7] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_str(group), emq_varg_str(consumer),
                      emq_varg_str(id), opt_int(count > 0 ? count : -1),
                      opt_int(block_ms) };
    int rc = emq_db_enter(db);
    return rc < 0 ? rc : run_entries(db, EMQ_V_GROUP_READ, a, 7, 0, e, n);
}

int emq_stream_ack(emq_db *db, const char *q, const char *name,
                   const char *group, const char *const *xids, size_t n,
                   int64_t *acked)
{
    emq_reply r = {0};
    vlist v;
    int rc;
    if ((rc = emq_db_enter(db)) < 0 || (rc = vlist_make(db, &v, 3, n)) < 0)
        return rc;
    vput(&v, emq_varg_str(q));
    vput(&v, emq_varg_str(name));
    vput(&v, emq_varg_str(group));
    if ((rc = vfields(db, &v, (const void *const *)xids, NULL, n)) == EMQ_OK)
        rc = emq_verb_exec(db, EMQ_V_ACK, v.a, v.n, &r, NULL);
    if (acked)
        *acked = rc == EMQ_OK ? r.integer : 0;
    emq_reply_clear(&r);
    emq_mem_free(v.a);
    return rc;
}

int emq_stream_autoclaim(emq_db *db, const char *q, const char *name,
                         const char *group, const char *consumer,
                         int64_t min_idle_ms, const char *start,
                         int64_t count, char next[EMQ_XID_SIZE],
                         emq_stream_entry **e, size_t *n,
                         emq_stream_entry **deleted, size_t *ndeleted)
{
    emq_reply r = {0};
    int rc = emq_db_enter(db);
    if (rc < 0 || (rc = need_out(db, e, n)) < 0)
        return rc;
    *e = NULL;
    *n = 0;
    if (deleted)
        *deleted = NULL;
    if (ndeleted)
        *ndeleted = 0;
    emq_varg a[7] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_str(group), emq_varg_str(consumer),
                      emq_varg_int(min_idle_ms), emq_varg_str(start),
                      opt_int(count > 0 ? count : -1) };
    rc = emq_verb_exec(db, EMQ_V_AUTOCLAIM, a, 7, &r, NULL);
    if (rc == EMQ_OK && r.n == 3) {
        if (next)
            snprintf(next, EMQ_XID_SIZE, "%s", r.elem[0].str);
        rc = entries_from(db, &r.elem[1], 0, 0, e, n);
        if (rc == EMQ_OK && deleted && ndeleted &&
            (rc = entries_from(db, &r.elem[2], 0, 1, deleted, ndeleted)) < 0) {
            emq_stream_entries_free(*e, *n);
            *e = NULL;
            *n = 0;
        }
    }
    emq_reply_clear(&r);
    return rc;
}

void emq_stream_pending_free(emq_stream_pending *p, size_t n)
{
    if (!p)
        return;
    for (size_t i = 0; i < n; i++)
        emq_mem_free(p[i].consumer);
    emq_mem_free(p);
}

int emq_stream_pending_range(emq_db *db, const char *q, const char *name,
                             const char *group, const char *start,
                             const char *end, int64_t count,
                             emq_stream_pending **p, size_t *n)
{
    emq_reply r = {0};
    int rc = emq_db_enter(db);
    if (rc < 0 || (rc = need_out(db, p, n)) < 0)
        return rc;
    *p = NULL;
    *n = 0;
    emq_varg a[6] = { emq_varg_str(q), emq_varg_str(name),
                      emq_varg_str(group), emq_varg_str(start),
                      emq_varg_str(end), emq_varg_int(count) };
    rc = emq_verb_exec(db, EMQ_V_PENDING_RANGE, a, 6, &r, NULL);
    if (rc == EMQ_OK) {
        emq_stream_pending *o = emq_mem_calloc(r.n ? r.n : 1, sizeof *o);
        if (!o) {
            rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        } else {
            for (size_t i = 0; i < r.n; i++) {
                const emq_reply *row = &r.elem[i];
                snprintf(o[i].xid, sizeof o[i].xid, "%s", row->elem[0].str);
                if (!(o[i].consumer = dup_bytes(row->elem[1].str,
                                                row->elem[1].len))) {
                    emq_stream_pending_free(o, i);
                    o = NULL;
                    rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
                    break;
                }
                o[i].consumer_len = row->elem[1].len;
                o[i].idle_ms = row->elem[2].integer;
                o[i].deliveries = row->elem[3].integer;
            }
            if (o) {
                *p = o;
                *n = r.n;
            }
        }
    }
    emq_reply_clear(&r);
    return rc;
}

/* ----------------------------------------------------------- T5.7 loop */

void emq_consumer_options_init_size(emq_consumer_options *o, size_t size)
{
    emq_consumer_options d;
    memset(&d, 0, sizeof d);
    d.min_idle_ms = 30000;
    d.beat_ms = 1000;
    d.count = 100;
    emq_struct_out(o, size, &d, sizeof d);
}

typedef struct loop {
    emq_db *db;
    const char *q, *name, *group, *consumer;
    emq_stream_handler handler;
    void *ctx;
} loop;

/* Settle one entry: attempts from its PEL record, the handler, ACK. */
static int settle(loop *l, const emq_stream_entry *e)
{
    emq_stream_pending *p = NULL;
    size_t np = 0;
    int64_t attempts = 1;
    int rc = emq_stream_pending_range(l->db, l->q, l->name, l->group, e->xid,
                                      e->xid, 1, &p, &np);
    if (rc < 0)
        return rc;
    if (np == 1)
        attempts = p[0].deliveries;
    emq_stream_pending_free(p, np);
    if (l->handler(l->ctx, e, attempts) != 0)
        return EMQ_OK; /* failure: left pending, delivered again later */
    const char *x = e->xid;
    return emq_stream_ack(l->db, l->q, l->name, l->group, &x, 1, NULL);
}

static int settle_all(loop *l, const emq_stream_entry *e, size_t n)
{
    int rc = EMQ_OK;
    for (size_t i = 0; i < n && rc >= 0; i++)
        rc = settle(l, &e[i]);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_stream_consume(emq_db *db, const char *q, const char *name,
                       const char *group, const char *consumer,
                       const char *start, const emq_consumer_options *o,
                       emq_stream_handler handler, void *ctx)
{
    emq_consumer_options d;
    loop l = { db, q, name, group, consumer, handler, ctx };
    char from[EMQ_XID_SIZE] = "0";
    emq_stream_entry *e;
    size_t n;
    int rc;
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    emq_consumer_options_init(&d);
    if (o && emq_struct_in(&d, sizeof d, o) != EMQ_OK)
        return emq_db_fail(db, EMQ_EINVAL, "consume: options not set by "
                           "emq_consumer_options_init(), or a field this "
                           "library does not know");
    o = &d;
    if (!handler || !start ||
        (strcmp(start, "new") != 0 && strcmp(start, "head") != 0))
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: start must be new "
                           "or head, with a handler");
    rc = emq_stream_group_create(db, q, name, group,
                                 strcmp(start, "new") == 0 ? "$" : "0", 1);
    if (rc < 0 && !(rc == EMQ_EENGINE &&
                    strncmp(emq_errmsg(db), "BUSYGROUP ", 10) == 0))
        return rc;
    /* Drain the consumer's own PEL; each read goes on after the last entry
     * returned, so a failed entry is not replayed forever. */
    for (;;) {
        rc = emq_stream_group_read(db, q, name, group, consumer, from,
                                   o->count, -1, &e, &n);
        if (rc < 0)
            return rc;
        if (n == 0) {
            emq_stream_entries_free(e, n);
            break;
        }
        snprintf(from, sizeof from, "%s", e[n - 1].xid);
        rc = settle_all(&l, e, n);
        emq_stream_entries_free(e, n);
        if (rc < 0)
            return rc;
    }
    for (int64_t round = 0; !o->rounds || round < o->rounds; round++) {
        if (o->stop && *o->stop)
            break;
        rc = emq_stream_autoclaim(db, q, name, group, consumer,
                                  o->min_idle_ms, "0", o->count, NULL, &e, &n,
                                  NULL, NULL);
        if (rc < 0)
            return rc;
        rc = settle_all(&l, e, n);
        emq_stream_entries_free(e, n);
        if (rc < 0)
            return rc;
        rc = emq_stream_group_read(db, q, name, group, consumer, ">",
                                   o->count, o->beat_ms, &e, &n);
        if (rc < 0)
            return rc;
        rc = settle_all(&l, e, n);
        emq_stream_entries_free(e, n);
        if (rc < 0)
            return rc;
    }
    emq_db_clear(db);
    return EMQ_OK;
}
