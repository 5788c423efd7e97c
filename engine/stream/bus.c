/*
 * stream.c — the Tier 5 stream verbs (PROTOCOL.md §6.5 T5.1-T5.6): stream
 * keys and branded record ids, append / append_id / append_batch, the raw
 * STREAM-ADD and range read, read / read_window / read_since, trim, the
 * archive watermark cache, and the consumer-group primitives.
 *
 * Each verb is what the reference's host code does: its host gates, then
 * one store command (engine/stream/xcmd.c runs it against the stream type), its
 * reply reshaped as the reference reshapes it. The typed C calls and the
 * T5.7 consumer loop are in stream_api.c.
 *
 * Rules: host refusals (malformed, kind, inverted window) come before the
 * store is touched, as EMQ_EREFUSED with the exact text; the engine's error
 * replies pass through verbatim (nonmonotonic as EMQ_ENONMONO, WRONGTYPE as
 * EMQ_EWRONGTYPE, the others as EMQ_EENGINE).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "xcmd.h"
#include "brandedid.h"
#include "bus.h"
#include "stream.h"

/* ---------------------------------------------------------- ids (T5.1) */

int emq_stream_entry_id(const char *branded, size_t len, char *out,
                        size_t *outlen)
{
    char ns[4];
    uint64_t snow;
    if (emq_id_check(branded, len, ns, &snow) != EMQ_ID_OK)
        return EMQ_STREAM_MALFORMED;
    if (memcmp(ns, "EVT", 3) != 0)
        return EMQ_STREAM_KIND;
    int n = snprintf(out, EMQ_XID_SIZE, "%lld-%llu",
                     (long long)emq_snow_unix_ms(snow),
                     (unsigned long long)(snow & 0x3FFFFF));
    *outlen = (size_t)n;
    return EMQ_OK;
}

/* The stream key of the call (q = a[0], name = a[1]) into buf. */
static size_t skey(const emq_vctx *c, int kt, char *buf)
{
    return emq_key_of(buf, c->a[0].s, kt, c->a[1].s, c->a[1].n);
}

/* ------------------------------------------------------------- commands */

/* A store command of up to XARGS arguments. */
#define XARGS 16
typedef struct xargv {
    const char *v[XARGS];
    size_t n[XARGS];
    size_t argc;
    const char *const *tail;   /* more arguments after these (fields) */
    const size_t *tailn;
    size_t ntail;
} xargv;

static void xa(xargv *x, const char *s, size_t n)
{
    x->v[x->argc] = s;
    x->n[x->argc++] = n;
}

static void xas(xargv *x, const char *s)
{
    xa(x, s, strlen(s));
}

/* Run command x in the verb's transaction into `out`; an error reply
 * becomes the handle's message (and the verb's reply, in c->r). */
static int xrun(emq_vctx *c, xargv *x, emq_reply *out)
{
    const char **v = (const char **)x->v;
    size_t *n = x->n, total = x->argc + x->ntail;
    int rc;
    if (x->ntail) {
        v = emq_mem_malloc(total * sizeof *v);
        n = emq_mem_malloc(total * sizeof *n);
        if (!v || !n) {
            emq_mem_free(v);
            emq_mem_free(n);
            return emq_db_fail(c->db, EMQ_ENOMEM, NULL);
        }
        memcpy(v, x->v, x->argc * sizeof *v);
        memcpy(n, x->n, x->argc * sizeof *n);
        memcpy(v + x->argc, x->tail, x->ntail * sizeof *v);
        memcpy(n + x->argc, x->tailn, x->ntail * sizeof *n);
    }
    rc = emq_xcmd(c->st, total, v, n, out, NULL);
    if (v != (const char **)x->v) {
        emq_mem_free(v);
        emq_mem_free(n);
    }
    if (rc < 0 && out->type == EMQ_REPLY_ERROR) {
        emq_db_wire(c->db, rc, out->str);
        if (out != c->r && emq_reply_error(c->r, EMQ_REPLY_ERROR, out->str))
            return emq_db_fail(c->db, EMQ_ENOMEM, NULL);
    }
    return rc;
}

/* The fields tail of the call from argument `from` on. */
typedef struct tailv {
    const char **v;
    size_t *n;
    size_t count;
} tailv;

static int tail_of(emq_vctx *c, size_t from, tailv *t)
{
    t->count = c->argc > from ? c->argc - from : 0;
    t->v = emq_mem_malloc((t->count + 1) * sizeof *t->v);
    t->n = emq_mem_malloc((t->count + 1) * sizeof *t->n);
    if (!t->v || !t->n) {
        emq_mem_free(t->v);
        emq_mem_free(t->n);
        return emq_db_fail(c->db, EMQ_ENOMEM, NULL);
    }
    for (size_t i = 0; i < t->count; i++) {
        t->v[i] = c->a[from + i].s;
        t->n[i] = c->a[from + i].n;
    }
    return EMQ_OK;
}

static void tail_free(tailv *t)
{
    emq_mem_free(t->v);
    emq_mem_free(t->n);
}

/* Run x with the call's arguments from `from` on as its tail (fields,
 * ids). A field list of odd length is XADD's to refuse, as the reference's
 * host sends it: "ERR wrong number of arguments for 'xadd' command" (after
 * the id's own error, as Valkey parses them). */
static int run_tail(emq_vctx *c, xargv *x, size_t from, emq_reply *out)
{
    tailv t;
    int rc = tail_of(c, from, &t);
    if (rc < 0)
        return rc;
    if (rc == EMQ_OK) {
        x->tail = t.v;
        x->tailn = t.n;
        x->ntail = t.count;
        rc = xrun(c, x, out);
    }
    tail_free(&t);
    return rc;
}

/* A body run as one transition of its own: the PROC verbs whose host gate
 * must come before the store is touched (append_id, read_window) and the
 * attempts of a blocking read. */
typedef struct txrun {
    emq_vctx *c;
    emq_verb_fn fn;
} txrun;

static int tx_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    txrun *t = ctx;
    (void)db;
    t->c->st = st;
    t->c->now = now;
    emq_reply_clear(t->c->r);
    return t->fn(t->c);
}

static int in_tx(emq_vctx *c, int write, emq_verb_fn fn)
{
    txrun t = { c, fn };
    return emq_db_run(c->db, write, tx_body, &t);
}

static int refuse(emq_vctx *c, const char *why)
{
    return emq_db_wire(c->db, EMQ_EREFUSED, why);
}

/* ---------------------------------------------------------------- appends */

/* STREAM-ADD(B.stream:<name>, entry id, [id, branded, fields...]). */
static int add_record(emq_vctx *c, const char *branded, size_t blen,
                      size_t from)
{
    char key[EMQ_KEY_MAX], xid[EMQ_XID_SIZE];
    size_t klen = skey(c, EMQ_KT_STREAM, key), xlen;
    xargv x = { .argc = 0 };
    emq_reply r = {0};
    int rc;
    if ((rc = emq_stream_entry_id(branded, blen, xid, &xlen)) != EMQ_OK)
        return refuse(c, rc == EMQ_STREAM_KIND ? "kind" : "malformed");
    xas(&x, "XADD");
    xa(&x, key, klen);
    xa(&x, xid, xlen);
    xas(&x, "id");
    xa(&x, branded, blen);
    if ((rc = run_tail(c, &x, from, &r)) == EMQ_OK)
        rc = emq_reply_bulk(c->r, branded, blen);
    emq_reply_clear(&r);
    return rc;
}

/*
 * T5.2 append_id(q, name, branded, fields...)
 * Keys: B.stream:<name>. Gates: `branded` not a valid branded id →
 * refused "malformed"; not EVT → refused "kind" (nothing touched). Then
 * STREAM-ADD under entry_id(branded) with the fields [id, branded, ...].
 * Replies: the branded id (EMQ_OK) · "ERR The ID specified in XADD is equal
 * or smaller than the target stream top item" (EMQ_ENONMONO) · WRONGTYPE.
 * Clock: none.
 */
static int append_id_tx(emq_vctx *c)
{
    return add_record(c, c->a[2].s, c->a[2].n, 3);
}

int emq_v_append_id(emq_vctx *c)
{
    char xid[EMQ_XID_SIZE];
    size_t xlen;
    int rc = emq_stream_entry_id(c->a[2].s, c->a[2].n, xid, &xlen);
    if (rc != EMQ_OK)
        return refuse(c, rc == EMQ_STREAM_KIND ? "kind" : "malformed");
    return in_tx(c, 1, append_id_tx);
}

/*
 * The mint of an append, inside its write transaction (issue 27 item 4).
 * An id minted before the transaction could lose the race for the write
 * lock to another process's later id and land below the stream's top
 * (EMQ_ENONMONO). Minted under the lock instead, an id is above every
 * entry another handle committed before it, except when the top is of the
 * same millisecond from a node numbered above this one (the entry id
 * orders node before sequence), or a burst's borrowed millisecond. Then,
 * and only then — after the store refused the add, so the common path
 * reads nothing more — when the top is at most APPEND_NEAR_MS above the
 * id, the node's cell is raised to the millisecond after the top and the
 * id minted again: the record carries a time that much ahead, as a burst
 * past 4096 ids in a millisecond borrows the next one.
 */
typedef struct mint_add {
    char *id;                /* out: the minted id (EMQ_ID_SIZE)         */
} mint_add;

/* How far above the minted id's millisecond a top may be and still be
 * taken for another handle's id of about the same time (a lower node in
 * the same millisecond, a burst that borrowed the next ones): further up
 * it is a record from elsewhere (a far-future id), and the append is
 * refused as before (D-15) rather than dragging this node's ids there. */
#define APPEND_NEAR_MS 1000

static int append_mint_tx(emq_vctx *c)
{
    char *id = ((mint_add *)c->out)->id, key[EMQ_KEY_MAX], ns[4];
    emq_xmeta m;
    uint64_t snow;
    int64_t ms;
    int rc, tries;
    for (tries = 0;; tries++) {
        if ((rc = emq_mint(c->db, "EVT", id)) < 0) return rc;
        rc = add_record(c, id, EMQ_ID_LEN, 3);
        if (rc != EMQ_ENONMONO || tries == 1) return rc;
        if (emq_id_check(id, EMQ_ID_LEN, ns, &snow) != EMQ_ID_OK ||
            emq_xs_meta(c->st, key, skey(c, EMQ_KT_STREAM, key), &m) !=
                EMQ_OK)
            return rc;
        ms = emq_snow_unix_ms(snow);
        if (m.last.ms > (uint64_t)ms + APPEND_NEAR_MS) return rc;
        emq_snow_seed((unsigned)c->db->node_id,
                      emq_snow_cell(emq_snow_min_for((int64_t)m.last.ms +
                                                     1)));
        emq_db_clear(c->db);
    }
}

/* Append the record of verb arguments `a` (q, name, -, fields...) with an
 * id minted inside its own transaction (into `id`), the reply into `r`;
 * `parent` is the calling verb's context. */
static int append_minted(const emq_vctx *parent, emq_reply *r,
                         const emq_varg *a, size_t argc,
                         char id[EMQ_ID_SIZE])
{
    mint_add ma = {id};
    emq_vctx c = *parent;
    c.a = a;
    c.argc = argc;
    c.r = r;
    c.out = &ma;
    id[0] = 0;
    return in_tx(&c, 1, append_mint_tx);
}

/*
 * T5.2 append(q, name, [id], fields...) — mint an EVT id from HOST-NOW
 * (the handle's clock and node id) and append the record under it as
 * append_id does, the mint inside the append's write transaction (above:
 * appends from any number of processes land in order); `id`, when given
 * (and not empty), is the id the host already minted for this record (the
 * golden traces record it) and runs append_id. Keys, replies: as
 * append_id; c->out (a char[EMQ_ID_SIZE], may be NULL) receives the id.
 * Clock: HOST-NOW (mint).
 */
int emq_v_append(emq_vctx *c)
{
    char id[EMQ_ID_SIZE];
    emq_varg *v;
    int rc;
    if (!c->a[2].present || c->a[2].n == 0) {
        rc = append_minted(c, c->r, c->a, c->argc, id);
        if (c->out) memcpy(c->out, id, EMQ_ID_SIZE);
        return rc;
    }
    snprintf(id, sizeof id, "%.*s", (int)(c->a[2].n < EMQ_ID_LEN
                                          ? c->a[2].n : EMQ_ID_LEN),
             c->a[2].s);
    if (!(v = emq_mem_malloc(c->argc * sizeof *v)))
        return emq_db_fail(c->db, EMQ_ENOMEM, NULL);
    memcpy(v, c->a, c->argc * sizeof *v);
    rc = emq_verb_exec(c->db, EMQ_V_APPEND_ID, v, c->argc, c->r, NULL);
    emq_mem_free(v);
    if (c->out)
        memcpy(c->out, id, EMQ_ID_SIZE);
    return rc;
}

/*
 * T5.2 / D-15 append_batch(q, name, records...) — each record is a field
 * list (its length, then its names and values, as the registry passes a
 * nested list: tests/vjson.h): append each in order as append does, one
 * transition each with its id minted inside it (not atomic as a set).
 * Reply: every minted id, in order, whatever each append answered;
 * c->out (int[], one per record) receives each append's result code.
 * A crash may cut the batch between two appends: the appended records
 * stay, the rest were never written (the receipts were not returned).
 */
int emq_v_append_batch(emq_vctx *c)
{
    size_t at = 2, nrec = 0, i;
    int *outcomes = c->out, rc;
    char (*ids)[EMQ_ID_SIZE] = NULL;
    /* Check the shape first: count, then that many byte strings. */
    while (at < c->argc) {
        int64_t n;
        if (emq_parse_i64(c->a[at].s, c->a[at].n, &n) != 0 || n < 0 ||
            (uint64_t)n > c->argc - at - 1 || n % 2)
            return emq_db_wire(c->db, EMQ_EINVAL, "bad argument: records "
                               "must be field lists of name/value pairs");
        at += 1 + (size_t)n;
        nrec++;
    }
    if (!(ids = emq_mem_malloc((nrec ? nrec : 1) * sizeof *ids)))
        return emq_db_fail(c->db, EMQ_ENOMEM, NULL);
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, nrec)) < 0)
        goto done;
    for (i = 0, at = 2; i < nrec; i++) {
        int64_t n;
        emq_parse_i64(c->a[at].s, c->a[at].n, &n);
        emq_varg *v = emq_mem_malloc((3 + (size_t)n) * sizeof *v);
        if (!v) {
            rc = emq_db_fail(c->db, EMQ_ENOMEM, NULL);
            goto done;
        }
        v[0] = c->a[0];
        v[1] = c->a[1];
        v[2] = emq_varg_bytes("", 0);
        memcpy(v + 3, c->a + at + 1, (size_t)n * sizeof *v);
        emq_reply one_r = {0};
        int one = append_minted(c, &one_r, v, 3 + (size_t)n, ids[i]);
        emq_reply_clear(&one_r);
        emq_mem_free(v);
        if (outcomes)
            outcomes[i] = one;
        /* An append refused by the engine still reports its receipt;
         * anything else (I/O, memory) ends the batch here. */
        if (one < 0 && one != EMQ_ENONMONO && one != EMQ_EWRONGTYPE &&
            one != EMQ_EENGINE) {
            rc = one;
            goto done;
        }
        if ((rc = emq_reply_push_bulk(c->r, ids[i], EMQ_ID_LEN)) < 0)
            goto done;
        at += 1 + (size_t)n;
    }
    emq_db_clear(c->db);
    rc = EMQ_OK;
done:
    emq_mem_free(ids);
    return rc;
}

/*
 * T5.2 STREAM-ADD(q, name, xid, fields...) — the engine primitive: XADD
 * with the explicit entry id `xid` (or `*`, `<ms>-*`). Replies: the entry
 * id · "ERR The ID specified in XADD must be greater than 0-0" ·
 * nonmonotonic (EMQ_ENONMONO) · WRONGTYPE · other XADD errors verbatim.
 * Clock: NOW for `*`.
 */
int emq_v_stream_add(emq_vctx *c)
{
    char key[EMQ_KEY_MAX];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    xas(&x, "XADD");
    xa(&x, key, klen);
    xa(&x, c->a[2].s, c->a[2].n);
    return run_tail(c, &x, 3, c->r);
}

/* ----------------------------------------------------------------- reads */

static void add_count(xargv *x, const emq_varg *count, char *num)
{
    if (count->present) {
        xas(x, "COUNT");
        xa(x, num, emq_fmt_i64(num, count->i));
    }
}

/* XRANGE key from to [COUNT n] into out. */
static int range(emq_vctx *c, const char *from, size_t fn, const char *to,
                 size_t tn, const emq_varg *count, emq_reply *out)
{
    char key[EMQ_KEY_MAX], num[24];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    xas(&x, "XRANGE");
    xa(&x, key, klen);
    xa(&x, from, fn);
    xa(&x, to, tn);
    add_count(&x, count, num);
    return xrun(c, &x, out);
}

/*
 * The raw range read (the engine's XRANGE): [[entry id, [field, value,
 * ...]], ...]; an exclusive `(` bound and a bare `<ms>` work as in Valkey.
 * Keys: B.stream:<name>. Clock: none.
 */
int emq_v_stream_range(emq_vctx *c)
{
    return range(c, c->a[2].s, c->a[2].n, c->a[3].s, c->a[3].n, &c->a[4],
                 c->r);
}

/* One raw entry as the T5.3 read shapes it: [record id or nil, {field:
 * value}] — the record id is the value of the entry's first `id` field;
 * every remaining field (a later `id` too) goes into the map once, with
 * its first value. */
static int shape_entry(const emq_reply *e, emq_reply *out)
{
    const emq_reply *fv = e->n == 2 ? &e->elem[1] : NULL;
    emq_reply *idv, *m;
    int took = 0;
    if (emq_reply_array(out, EMQ_REPLY_ARRAY, 2) < 0 ||
        !(idv = emq_reply_push(out)) || !(m = emq_reply_push(out)) ||
        emq_reply_array(m, EMQ_REPLY_MAP, 0) < 0)
        return EMQ_ENOMEM;
    for (size_t i = 0; fv && i + 1 < fv->n; i += 2) {
        const emq_reply *f = &fv->elem[i], *v = &fv->elem[i + 1];
        int seen = 0;
        if (!took && f->len == 2 && memcmp(f->str, "id", 2) == 0) {
            took = 1;
            if (emq_reply_bulk(idv, v->str, v->len) < 0)
                return EMQ_ENOMEM;
            continue;
        }
        for (size_t k = 0; k + 1 < m->n && !seen; k += 2)
            seen = m->elem[k].len == f->len &&
                   memcmp(m->elem[k].str, f->str, f->len) == 0;
        if (!seen && (emq_reply_push_bulk(m, f->str, f->len) < 0 ||
                      emq_reply_push_bulk(m, v->str, v->len) < 0))
            return EMQ_ENOMEM;
    }
    return EMQ_OK;
}

/* T5.3's read over from..to, shaped (c->out: see below). */
static int read_shaped(emq_vctx *c, const char *from, size_t fn,
                       const char *to, size_t tn, const emq_varg *count)
{
    emq_reply raw = {0};
    int rc = range(c, from, fn, to, tn, count, &raw);
    if (rc != EMQ_OK)
        goto done;
    if (raw.type == EMQ_REPLY_NIL) {
        /* XRANGE's null array (COUNT <= 0) reaches the host as nil */
        emq_reply_nil(c->r);
        goto done;
    }
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, raw.n)) < 0)
        goto done;
    for (size_t i = 0; i < raw.n; i++) {
        emq_reply *e = emq_reply_push(c->r);
        if (!e || shape_entry(&raw.elem[i], e) < 0) {
            rc = emq_db_fail(c->db, EMQ_ENOMEM, NULL);
            goto done;
        }
    }
done:
    /* A typed caller (c->out, an emq_reply) also gets the raw entries,
     * with their entry ids. */
    if (rc == EMQ_OK && c->out) {
        emq_reply_clear(c->out);
        *(emq_reply *)c->out = raw;
    } else {
        emq_reply_clear(&raw);
    }
    return rc;
}

/*
 * T5.3 read(q, name, from = "-", to = "+", count = none) — the entries
 * from..to in id order, each as [record id, {field: value}] (the value of
 * the entry's first `id` field, nil without one; every other field once,
 * with its first value); nil for count <= 0 (XRANGE's null array).
 * Keys: B.stream:<name>. Clock: none.
 */
int emq_v_read(emq_vctx *c)
{
    const emq_varg *f = &c->a[2], *t = &c->a[3];
    return read_shaped(c, f->present ? f->s : "-", f->present ? f->n : 1,
                       t->present ? t->s : "+", t->present ? t->n : 1,
                       &c->a[4]);
}

/* minid_floor(t) = "<t>-0", maxid_ceil(t) = "<t>-4194303". */
static size_t bound_of(char *buf, int64_t t, int ceil)
{
    size_t n = emq_fmt_i64(buf, t);
    memcpy(buf + n, ceil ? "-4194303" : "-0", ceil ? 9 : 3);
    return n + (ceil ? 8 : 2);
}

/*
 * T5.3 read_window(q, name, t0_ms, t1_ms, count) — read(minid_floor(t0),
 * maxid_ceil(t1), count): the records minted in [t0, t1] at ms precision.
 * Host gate: t1 < t0 → refused "inverted window". Clock: none.
 */
static int window_tx(emq_vctx *c)
{
    char lo[32], hi[32];
    size_t ln = bound_of(lo, c->a[2].i, 0), hn = bound_of(hi, c->a[3].i, 1);
    return read_shaped(c, lo, ln, hi, hn, &c->a[4]);
}

int emq_v_read_window(emq_vctx *c)
{
    if (c->a[3].i < c->a[2].i)
        return refuse(c, "inverted window");
    return in_tx(c, 0, window_tx);
}

/* T5.3 read_since(q, name, t0_ms, count) — read(minid_floor(t0), "+"). */
int emq_v_read_since(emq_vctx *c)
{
    char lo[32];
    size_t ln = bound_of(lo, c->a[2].i, 0);
    return read_shaped(c, lo, ln, "+", 1, &c->a[3]);
}

/*
 * T5.4 trim(q, name, window) — window = (maxlen, count >= 0, exact) keeps
 * the newest `count`; (minid, t_ms, exact) removes the entries below
 * minid_floor(t). Not exact: XTRIM's `~`, which here removes only whole
 * leading blocks of 100 the exact trim would remove (D-16). Reply: the
 * entries removed (0 for an absent stream). The last id and max-deleted
 * id do not move; the key stays. Keys: B.stream:<name>. Clock: none.
 */
int emq_v_trim(emq_vctx *c)
{
    char key[EMQ_KEY_MAX], num[32];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    int minid = c->a[2].i == 1;
    xas(&x, "XTRIM");
    xa(&x, key, klen);
    xas(&x, minid ? "MINID" : "MAXLEN");
    xas(&x, c->a[4].i ? "=" : "~");
    if (minid)
        xa(&x, num, bound_of(num, c->a[3].i, 0));
    else
        xa(&x, num, emq_fmt_i64(num, c->a[3].i));
    return xrun(c, &x, c->r);
}

/* ------------------------------------------------------ archive (T5.5) */

/* T5.5 put_archived(q, name, w): SET B.stream:<name>:archived w → OK. */
int emq_v_put_archived(emq_vctx *c)
{
    char key[EMQ_KEY_MAX];
    size_t klen = skey(c, EMQ_KT_STREAM_ARCHIVED, key);
    int rc = emq_str_set(c->st, key, klen, c->a[2].s, c->a[2].n, -1, 0,
                         NULL);
    return rc < 0 ? rc : emq_reply_status(c->r, "OK");
}

/* T5.5 get_archived(q, name): the value (EMQ_OK), or nil (EMQ_ABSENT). */
int emq_v_get_archived(emq_vctx *c)
{
    char key[EMQ_KEY_MAX];
    size_t klen = skey(c, EMQ_KT_STREAM_ARCHIVED, key);
    emq_buf v = {0};
    int rc = emq_str_get(c->st, key, klen, &v);
    if (rc == EMQ_NOTFOUND) {
        emq_reply_nil(c->r);
        rc = EMQ_ABSENT;
    } else if (rc == EMQ_OK) {
        rc = emq_reply_bulk(c->r, v.p ? (const char *)v.p : "", v.len);
    }
    emq_buf_free(&v);
    return rc;
}

/* T5.5 clear_archived(q, name): DEL → 1 (EMQ_OK), 0 (EMQ_ABSENT). */
int emq_v_clear_archived(emq_vctx *c)
{
    char key[EMQ_KEY_MAX];
    size_t klen = skey(c, EMQ_KT_STREAM_ARCHIVED, key);
    int deleted = 0;
    int rc = emq_key_del(c->st, key, klen, &deleted);
    if (rc < 0)
        return rc;
    emq_reply_int(c->r, deleted);
    return deleted ? EMQ_OK : EMQ_ABSENT;
}

/* ------------------------------------------------------- groups (T5.6) */

/*
 * T5.6 GROUP-CREATE(q, name, group, start, mkstream) — XGROUP CREATE at
 * `start` ($: the last id, 0: the head) [MKSTREAM]. Replies: OK · "BUSYGROUP
 * Consumer Group name already exists" · "ERR The XGROUP subcommand requires
 * the key to exist. ..." (both EMQ_EENGINE). Clock: none.
 */
int emq_v_group_create(emq_vctx *c)
{
    char key[EMQ_KEY_MAX];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    xas(&x, "XGROUP");
    xas(&x, "CREATE");
    xa(&x, key, klen);
    xa(&x, c->a[2].s, c->a[2].n);
    xa(&x, c->a[3].s, c->a[3].n);
    if (c->a[4].present && c->a[4].i)
        xas(&x, "MKSTREAM");
    return xrun(c, &x, c->r);
}

/* One READ-GROUP attempt (a transaction of its own). */
static int read_once(emq_vctx *c)
{
    char key[EMQ_KEY_MAX], num[24];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    emq_reply raw = {0};
    int rc;
    xas(&x, "XREADGROUP");
    xas(&x, "GROUP");
    xa(&x, c->a[2].s, c->a[2].n);
    xa(&x, c->a[3].s, c->a[3].n);
    add_count(&x, &c->a[5], num);
    xas(&x, "STREAMS");
    xa(&x, key, klen);
    xa(&x, c->a[4].s, c->a[4].n);
    if ((rc = xrun(c, &x, &raw)) == EMQ_OK) {
        /* {key: entries} → entries; nil stays nil (EMQ_EMPTY). */
        if (raw.type == EMQ_REPLY_MAP && raw.n == 2) {
            *c->r = raw.elem[1];
            memset(&raw.elem[1], 0, sizeof raw.elem[1]);
        } else {
            rc = EMQ_EMPTY;
        }
    }
    emq_reply_clear(&raw);
    return rc;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(int64_t ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

/*
 * T5.6 READ-GROUP(q, name, group, consumer, id, count, block) — XREADGROUP
 * GROUP group consumer [COUNT count] STREAMS B.stream:<name> id. `>`
 * delivers new entries (each gets a PEL record (consumer, NOW, 1); the
 * group's last-delivered id and entries-read advance); another id replays
 * the consumer's own PEL above it (existing entries re-stamped NOW, count
 * + 1; trimmed ones come back as [id, nil], untouched). The consumer is
 * created if new. Replies: the entries ([] for an empty replay) · nil when
 * `>` found nothing (EMQ_EMPTY) · "NOGROUP No such key '<key>' or consumer
 * group '<group>' in XREADGROUP with GROUP option" (EMQ_EENGINE).
 * `block` (ms; 0 waits for as long as it takes, as Valkey's BLOCK 0): when
 * `>` finds nothing, the read is retried in new transactions until an
 * entry arrives or `block` ms of the monotonic clock have passed. Clock:
 * NOW of the attempt that delivered.
 */
int emq_v_group_read(emq_vctx *c)
{
    int64_t deadline = c->a[6].present ? mono_ms() + c->a[6].i : 0;
    int64_t step = 1;
    int rc;
    for (;;) {
        rc = in_tx(c, 1, read_once);
        if (rc != EMQ_EMPTY || !c->a[6].present)
            return rc;
        int64_t left = deadline - mono_ms();
        if (c->a[6].i > 0 && left <= 0)
            return rc;
        pause_ms(c->a[6].i > 0 && left < step ? left : step);
        if (step < 16)
            step *= 2;
    }
}

/* T5.6 ACK(q, name, group, ids...): XACK → the PEL entries removed
 * (0 without the key or the group). */
int emq_v_ack(emq_vctx *c)
{
    char key[EMQ_KEY_MAX];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    xas(&x, "XACK");
    xa(&x, key, klen);
    xa(&x, c->a[2].s, c->a[2].n);
    return run_tail(c, &x, 3, c->r);
}

/*
 * T5.6 AUTOCLAIM(q, name, group, consumer, min_idle_ms, start, count = 100)
 * — XAUTOCLAIM: [next cursor (0-0 at the end), claimed entries, deleted
 * ids]; NOGROUP verbatim. Clock: NOW (idle times, new delivery times).
 */
int emq_v_autoclaim(emq_vctx *c)
{
    char key[EMQ_KEY_MAX], idle[24], num[24];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    xas(&x, "XAUTOCLAIM");
    xa(&x, key, klen);
    xa(&x, c->a[2].s, c->a[2].n);
    xa(&x, c->a[3].s, c->a[3].n);
    xa(&x, idle, emq_fmt_i64(idle, c->a[4].i));
    xa(&x, c->a[5].s, c->a[5].n);
    add_count(&x, &c->a[6], num);
    return xrun(c, &x, c->r);
}

/*
 * T5.6 PENDING-RANGE(q, name, group, start, end, count) — XPENDING's
 * extended form: [[entry id, consumer, idle ms, delivery count], ...];
 * NOGROUP verbatim. Clock: NOW (idle times).
 */
int emq_v_pending_range(emq_vctx *c)
{
    char key[EMQ_KEY_MAX], num[24];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    xas(&x, "XPENDING");
    xa(&x, key, klen);
    xa(&x, c->a[2].s, c->a[2].n);
    xa(&x, c->a[3].s, c->a[3].n);
    xa(&x, c->a[4].s, c->a[4].n);
    xa(&x, num, emq_fmt_i64(num, c->a[5].i));
    return xrun(c, &x, c->r);
}

/* The entries of a stream (XLEN; 0 when absent). Beyond the wire (tier 0):
 * the tool's `stream len`. Keys: B.stream:<name>. Clock: none. */
int emq_v_stream_len(emq_vctx *c)
{
    char key[EMQ_KEY_MAX];
    size_t klen = skey(c, EMQ_KT_STREAM, key);
    xargv x = { .argc = 0 };
    xas(&x, "XLEN");
    xa(&x, key, klen);
    return xrun(c, &x, c->r);
}
