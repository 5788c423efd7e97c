/*
 * export.c — export the file's L1 image as RESP commands, import such a
 * stream back, and the logical digest of a keyspace (PROTOCOL.md §8,
 * doc/EXPORT.md).
 *
 * Owns: emq_export, emq_import, emq_digest. The export is one read
 * transaction, the import one write transaction; both reach the keyspace
 * only through storage/store.h and the grammar only through engine/keys.h.
 *
 * Rules: export bytes depend on nothing but the keyspace and the options
 * (byte order of keys, stored order of hash fields, 64 elements a command).
 * The digest is computed from the same reads, in canonical order, and must
 * stay exactly as doc/EXPORT.md defines it: a verifier recomputes it from a
 * live server. An import validates every frame before applying it and rolls
 * everything back on the first refusal.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Inlined, so the hash states can live on the stack: every heap byte of the
 * library goes through emq_mem (storage/alloc.c), and xxHash's own state
 * allocator would not. */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "db.h"
#include "resp.h"
#include "export_stream.h"

#define CHUNK 64                 /* elements per HSET/ZADD/RPUSH/SADD       */
#define FLUSH_AT (64 * 1024)     /* hand bytes to the sink past this much   */

static const char VKEY[] = EMQ_VERSION_KEY;
#define VKEY_LEN (sizeof VKEY - 1)

/* ================================================================ digest */

/* Canonical serialisation helpers (doc/EXPORT.md §3): little-endian
 * 8-byte counts, lengths, expiries and score bits. */
static void d_u64(XXH3_state_t *h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    XXH3_64bits_update(h, b, 8);
}

static void d_bytes(XXH3_state_t *h, const void *p, size_t n)
{
    d_u64(h, n);
    if (n)
        XXH3_64bits_update(h, p, n);
}

static void d_i64(XXH3_state_t *h, int64_t v)
{
    d_u64(h, (uint64_t)v);
}

static void d_score(XXH3_state_t *h, double s)
{
    uint64_t bits;
    if (s == 0)
        s = 0; /* -0 is written as +0 */
    memcpy(&bits, &s, 8);
    d_u64(h, bits);
}

/* The type byte of a record. */
static unsigned char type_tag(int type)
{
    switch (type) {
    case EMQ_T_STRING: return 's';
    case EMQ_T_HASH:   return 'h';
    case EMQ_T_LIST:   return 'l';
    case EMQ_T_SET:    return 'S';
    case EMQ_T_ZSET:   return 'z';
    case EMQ_T_STREAM: return 'x';
    default:           return '?';
    }
}

static void d_head(XXH3_state_t *h, const void *key, size_t klen, int type,
                   int64_t expire)
{
    unsigned char t = type_tag(type);
    d_bytes(h, key, klen);
    XXH3_64bits_update(h, &t, 1);
    d_i64(h, expire);
}

/* ============================================================ the walk */

/* One hash field, copied out of the store. */
typedef struct field {
    size_t f, flen, v, vlen;  /* offsets into the arena */
    const unsigned char *name; /* set once the arena stops growing */
    int64_t expire;
} field;

typedef struct walk {
    emq_db *db;
    emq_store *st;
    const emq_export_options *opt;
    emq_write_fn write;        /* NULL: digest only                       */
    void *ctx;
    int by_slot;
    emq_buf out;               /* bytes not yet handed to the sink        */
    XXH3_state_t *h;           /* the digest being fed: &hs, or a scratch */
    XXH3_state_t hs;
    emq_transfer_summary sum;
    int version_digested;
    int sink_failed;
    /* per key scratch */
    emq_buf arena;             /* copied elements of the current chunk/key */
    field *fields;             /* hash fields (offsets into arena)         */
    size_t nf, capf;
    size_t *elem;              /* chunk element offsets/lengths (pairs)    */
    double *scores;
    size_t ne;
    const unsigned char *key;  /* the key being written                   */
    size_t klen;
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

/* Account for a finished command and flush past the threshold. */
static int cmd_done(walk *w)
{
    w->sum.commands++;
    return w->out.len >= FLUSH_AT ? sink(w) : EMQ_OK;
}

static int emit(walk *w, size_t argc, const emq_bytes *argv)
{
    if (!w->write) {
        w->sum.commands++;
        return EMQ_OK;
    }
    if (emq_resp_write_cmd(&w->out, argc, argv) != EMQ_OK)
        return EMQ_ENOMEM;
    return cmd_done(w);
}

/* The score's decimal text: an integer when the double is one, else the
 * shortest %.17g form (which parses back to the same double). */
static size_t score_text(char *buf, size_t cap, double s)
{
    if (s == floor(s) && fabs(s) < 9.2e18)
        return (size_t)snprintf(buf, cap, "%lld", (long long)s);
    return (size_t)snprintf(buf, cap, "%.17g", s);
}

/* Emit the buffered chunk (w->ne elements) as `cmd key e1 e2 ...`; for
 * ZADD each element is preceded by its score. */
static int flush_chunk(walk *w, const char *cmd)
{
    if (w->ne == 0)
        return EMQ_OK;
    int zadd = strcmp(cmd, "ZADD") == 0;
    if (w->write) {
        size_t argc = 2 + w->ne * (zadd ? 2 : 1);
        if (emq_resp_write_array(&w->out, argc) != EMQ_OK ||
            emq_resp_write_bulk(&w->out, cmd, strlen(cmd)) != EMQ_OK ||
            emq_resp_write_bulk(&w->out, w->key, w->klen) != EMQ_OK)
            return EMQ_ENOMEM;
        for (size_t i = 0; i < w->ne; i++) {
            if (zadd) {
                char num[40];
                size_t n = score_text(num, sizeof num, w->scores[i]);
                if (emq_resp_write_bulk(&w->out, num, n) != EMQ_OK)
                    return EMQ_ENOMEM;
            }
            if (emq_resp_write_bulk(&w->out, w->arena.p + w->elem[2 * i],
                                    w->elem[2 * i + 1]) != EMQ_OK)
                return EMQ_ENOMEM;
        }
    }
    w->ne = 0;
    w->arena.len = 0;
    return w->write ? cmd_done(w) : (w->sum.commands++, EMQ_OK);
}

/* Buffer one element of the current chunk; emits at CHUNK elements. */
static int chunk_add(walk *w, const char *cmd, const void *p, size_t n,
                     double score)
{
    if (!w->elem && !(w->elem = emq_mem_malloc(2 * CHUNK * sizeof *w->elem)))
        return EMQ_ENOMEM;
    if (!w->scores && !(w->scores = emq_mem_malloc(CHUNK * sizeof *w->scores)))
        return EMQ_ENOMEM;
    w->elem[2 * w->ne] = w->arena.len;
    w->elem[2 * w->ne + 1] = n;
    w->scores[w->ne] = score;
    if (emq_buf_append(&w->arena, p, n) != EMQ_OK)
        return EMQ_ENOMEM;
    w->ne++;
    return w->ne == CHUNK ? flush_chunk(w, cmd) : EMQ_OK;
}

/* --------------------------------------------------- aggregate callbacks */

static int on_value(walk *w, const char *cmd, const unsigned char *v,
                    size_t n, double score, int scored)
{
    d_bytes(w->h, v, n);
    if (scored)
        d_score(w->h, score);
    int rc = chunk_add(w, cmd, v, n, score);
    if (rc != EMQ_OK)
        w->rc = rc;
    return rc != EMQ_OK;
}

static int on_list(void *ctx, const unsigned char *v, size_t n)
{
    return on_value(ctx, "RPUSH", v, n, 0, 0);
}

static int on_set(void *ctx, const unsigned char *v, size_t n)
{
    return on_value(ctx, "SADD", v, n, 0, 0);
}

static int on_zset(void *ctx, const unsigned char *m, size_t n, double score)
{
    return on_value(ctx, "ZADD", m, n, score, 1);
}

static int on_field(void *ctx, const unsigned char *f, size_t flen,
                    const unsigned char *v, size_t vlen, int64_t expire)
{
    walk *w = ctx;
    if (w->nf == w->capf) {
        size_t cap = w->capf ? 2 * w->capf : 16;
        field *p = emq_mem_realloc(w->fields, cap * sizeof *p);
        if (!p)
            goto oom;
        w->fields = p;
        w->capf = cap;
    }
    field *e = &w->fields[w->nf];
    e->f = w->arena.len;
    e->flen = flen;
    if (emq_buf_append(&w->arena, f, flen) != EMQ_OK)
        goto oom;
    e->v = w->arena.len;
    e->vlen = vlen;
    if (emq_buf_append(&w->arena, v, vlen) != EMQ_OK)
        goto oom;
    e->expire = expire;
    w->nf++;
    return 0;
oom:
    w->rc = EMQ_ENOMEM;
    return 1;
}

static int cmp_field(const void *a, const void *b)
{
    const field *x = a, *y = b;
    size_t n = x->flen < y->flen ? x->flen : y->flen;
    int c = n ? memcmp(x->name, y->name, n) : 0;
    if (c)
        return c;
    return (x->flen > y->flen) - (x->flen < y->flen);
}

/* --------------------------------------------------------- one key */

static int put_expiry(walk *w, const unsigned char *key, size_t klen,
                      int64_t at)
{
    char num[24];
    size_t n = (size_t)snprintf(num, sizeof num, "%lld", (long long)at);
    emq_bytes argv[3] = {{"PEXPIREAT", 9}, {key, klen}, {num, n}};
    return emit(w, 3, argv);
}

static int put_hash(walk *w, const unsigned char *key, size_t klen,
                    int64_t expire)
{
    w->nf = 0;
    w->arena.len = 0;
    w->rc = EMQ_OK;
    int rc = emq_hash_getall(w->st, key, klen, on_field, w);
    if (rc == 1 && w->rc != EMQ_OK)
        return w->rc;
    if (rc < 0)
        return rc;
    if (w->nf == 0)
        return EMQ_OK; /* every field expired: the hash does not exist */
    w->sum.keys++;
    /* Writes, in stored order, 64 pairs a command. */
    if (w->write) {
        for (size_t i = 0; i < w->nf; i += CHUNK) {
            size_t k = w->nf - i < CHUNK ? w->nf - i : CHUNK;
            if (emq_resp_write_array(&w->out, 2 + 2 * k) != EMQ_OK ||
                emq_resp_write_bulk(&w->out, "HSET", 4) != EMQ_OK ||
                emq_resp_write_bulk(&w->out, key, klen) != EMQ_OK)
                return EMQ_ENOMEM;
            for (size_t j = i; j < i + k; j++) {
                const field *e = &w->fields[j];
                if (emq_resp_write_bulk(&w->out, w->arena.p + e->f,
                                        e->flen) != EMQ_OK ||
                    emq_resp_write_bulk(&w->out, w->arena.p + e->v,
                                        e->vlen) != EMQ_OK)
                    return EMQ_ENOMEM;
            }
            if ((rc = cmd_done(w)) != EMQ_OK)
                return rc;
        }
        for (size_t j = 0; j < w->nf; j++) {
            const field *e = &w->fields[j];
            if (e->expire < 0)
                continue;
            char num[24];
            size_t n = (size_t)snprintf(num, sizeof num, "%lld",
                                        (long long)e->expire);
            emq_bytes argv[6] = {{"HPEXPIREAT", 10}, {key, klen}, {num, n},
                                 {"FIELDS", 6}, {"1", 1},
                                 {w->arena.p + e->f, e->flen}};
            if ((rc = emit(w, 6, argv)) != EMQ_OK)
                return rc;
        }
    } else {
        w->sum.commands += (w->nf + CHUNK - 1) / CHUNK;
        for (size_t j = 0; j < w->nf; j++)
            w->sum.commands += w->fields[j].expire >= 0;
    }
    /* Digest: fields in byte order of names. */
    d_head(w->h, key, klen, EMQ_T_HASH, expire);
    d_u64(w->h, w->nf);
    for (size_t j = 0; j < w->nf; j++)
        w->fields[j].name = w->arena.p + w->fields[j].f;
    qsort(w->fields, w->nf, sizeof *w->fields, cmp_field);
    for (size_t j = 0; j < w->nf; j++) {
        const field *e = &w->fields[j];
        d_bytes(w->h, w->arena.p + e->f, e->flen);
        d_bytes(w->h, w->arena.p + e->v, e->vlen);
        d_i64(w->h, e->expire);
    }
    w->arena.len = 0;
    return expire >= 0 ? put_expiry(w, key, klen, expire) : EMQ_OK;
}

/* ---- streams (issue 16): the hook into engine/export_stream.c ---- */

static int xs_emit(void *ctx, size_t argc, const emq_bytes *argv)
{
    return emit(ctx, argc, argv);
}

static void xs_digest(void *ctx, const void *p, size_t n)
{
    XXH3_64bits_update(((walk *)ctx)->h, p, n);
}

/* A stream: its record head here, its commands and digest body there. */
static int put_stream(walk *w, const unsigned char *key, size_t klen,
                      int64_t expire)
{
    emq_xsink s = { xs_emit, xs_digest, w };
    d_head(w->h, key, klen, EMQ_T_STREAM, expire);
    int rc = emq_stream_export(w->st, key, klen, &s);
    if (rc != EMQ_OK)
        return rc == EMQ_NOTFOUND ? EMQ_ECORRUPT : rc;
    w->sum.keys++;
    return expire >= 0 ? put_expiry(w, key, klen, expire) : EMQ_OK;
}

static int put_key(walk *w, const unsigned char *key, size_t klen, int type)
{
    int64_t expire = -1, n = 0;
    int rc = emq_key_expiry(w->st, key, klen, &expire);
    if (rc == EMQ_NOTFOUND)
        return EMQ_OK;
    if (rc != EMQ_OK)
        return rc;
    if (type == EMQ_T_HASH)
        return put_hash(w, key, klen, expire);
    if (type == EMQ_T_STREAM)
        return put_stream(w, key, klen, expire);

    const char *cmd = NULL;
    switch (type) {
    case EMQ_T_STRING: {
        emq_buf v = {0};
        rc = emq_str_get(w->st, key, klen, &v);
        if (rc == EMQ_OK) {
            emq_bytes argv[3] = {{"SET", 3}, {key, klen},
                                 {v.p ? (void *)v.p : "", v.len}};
            w->sum.keys++;
            d_head(w->h, key, klen, type, expire);
            d_bytes(w->h, v.p, v.len);
            rc = emit(w, 3, argv);
        }
        emq_buf_free(&v);
        if (rc == EMQ_NOTFOUND)
            return EMQ_OK;
        if (rc != EMQ_OK)
            return rc;
        return expire >= 0 ? put_expiry(w, key, klen, expire) : EMQ_OK;
    }
    case EMQ_T_LIST:
        cmd = "RPUSH";
        rc = emq_list_len(w->st, key, klen, &n);
        break;
    case EMQ_T_SET:
        cmd = "SADD";
        rc = emq_sset_card(w->st, key, klen, &n);
        break;
    case EMQ_T_ZSET:
        cmd = "ZADD";
        rc = emq_zset_card(w->st, key, klen, &n);
        break;
    default:
        return emq_db_fail(w->db, EMQ_ECORRUPT, "export: a key of an "
                                                "unknown type");
    }
    if (rc != EMQ_OK)
        return rc;
    if (n <= 0)
        return EMQ_OK;
    w->sum.keys++;
    d_head(w->h, key, klen, type, expire);
    d_u64(w->h, (uint64_t)n);
    w->key = key;
    w->klen = klen;
    w->ne = 0;
    w->arena.len = 0;
    w->rc = EMQ_OK;
    if (type == EMQ_T_LIST)
        rc = emq_list_range(w->st, key, klen, 0, -1, on_list, w);
    else if (type == EMQ_T_SET)
        rc = emq_sset_members(w->st, key, klen, on_set, w);
    else
        rc = emq_zset_range(w->st, key, klen, 0, -1, on_zset, w);
    if (rc == 1 && w->rc != EMQ_OK)
        return w->rc;
    if (rc < 0)
        return rc;
    if ((rc = flush_chunk(w, cmd)) != EMQ_OK)
        return rc;
    return expire >= 0 ? put_expiry(w, key, klen, expire) : EMQ_OK;
}

/* ----------------------------------------------------- key selection */

static int name_cmp(const void *a, size_t an, const void *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (an > bn) - (an < bn);
}

/* The digest record of "{emq}:version" as the export states it. */
static void digest_version(walk *w)
{
    if (w->version_digested)
        return;
    w->version_digested = 1;
    d_head(w->h, VKEY, VKEY_LEN, EMQ_T_STRING, -1);
    d_bytes(w->h, EMQ_WIRE, sizeof EMQ_WIRE - 1);
}

/* Digest the version record once the walk passes its place in byte order. */
static void version_before(walk *w, const unsigned char *key, size_t klen)
{
    if (!w->version_digested && name_cmp(key, klen, VKEY, VKEY_LEN) > 0)
        digest_version(w);
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
        if (!w->by_slot)
            digest_version(w);
        return 0;
    }
    if (w->by_slot) {
        rc = collect(w, key, klen, type);
    } else {
        version_before(w, key, klen);
        rc = put_key(w, key, klen, type);
    }
    if (rc != EMQ_OK) {
        w->rc = rc;
        return 1;
    }
    return 0;
}

/* by-slot: the digest stays in byte order, so it is computed by a second,
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
    /* The digest is not part of this pass: park it on a scratch state. */
    XXH3_state_t *real = w->h, scratch;
    memset(&scratch, 0, sizeof scratch);
    XXH3_64bits_reset(&scratch);
    w->h = &scratch;
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
    w->h = real;
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
    rc = prefixes(db, w->opt, &pre);
    if (rc != EMQ_OK)
        return rc;
    size_t np = pre ? w->opt->n_queues : 0;
    if (pre)
        qsort(pre, np, sizeof *pre, cmp_str);

    /* The fence first. */
    if (w->write) {
        emq_bytes argv[3] = {{"SET", 3}, {VKEY, VKEY_LEN},
                             {EMQ_WIRE, sizeof EMQ_WIRE - 1}};
        if ((rc = emit(w, 3, argv)) != EMQ_OK)
            goto done;
    } else {
        w->sum.commands++;
    }
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
            version_before(w, k, w->noff[2 * i + 1]);
            rc = put_key(w, k, w->noff[2 * i + 1], w->ntype[i]);
        }
        w->write = keep;
        w->sum = s0;
        if (rc == EMQ_OK) {
            digest_version(w);
            rc = write_by_slot(w);
        }
        if (rc != EMQ_OK)
            goto done;
    }
    digest_version(w);
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
    emq_buf_free(&w->arena);
    emq_buf_free(&w->names);
    emq_mem_free(w->fields);
    emq_mem_free(w->elem);
    emq_mem_free(w->scores);
    emq_mem_free(w->noff);
    emq_mem_free(w->nslot);
    emq_mem_free(w->ntype);
}

static void walk_init(walk *w, emq_db *db, const emq_export_options *opt,
                      emq_write_fn write, void *ctx)
{
    memset(w, 0, sizeof *w);
    w->db = db;
    w->opt = opt;
    w->write = write;
    w->ctx = ctx;
    w->by_slot = write && opt && opt->by_slot;
    w->h = &w->hs;
    XXH3_64bits_reset(w->h);
}

/* The counts and digest of a walk that succeeded. */
static void walk_sum(walk *w, emq_transfer_summary *sum)
{
    w->sum.digest = XXH3_64bits_digest(w->h);
    if (!w->write)
        w->sum.commands = 0, w->sum.bytes = 0;
    if (sum)
        *sum = w->sum;
}

static int run_walk(emq_db *db, const emq_export_options *opt,
                    emq_write_fn write, void *ctx, emq_transfer_summary *sum)
{
    walk w;
    walk_init(&w, db, opt, write, ctx);
    int rc = emq_db_run(db, 0, walk_tx, &w);
    if (rc == EMQ_OK)
        walk_sum(&w, sum);
    walk_free(&w);
    return rc;
}

/* Count bytes on their way to the caller's sink. */
typedef struct counted {
    emq_write_fn write;
    void *ctx;
    uint64_t bytes;
} counted;

static int count_write(void *ctx, const void *p, size_t n)
{
    counted *c = ctx;
    c->bytes += n;
    return c->write(c->ctx, p, n);
}

void emq_export_options_init(emq_export_options *o)
{
    memset(o, 0, sizeof *o);
}

int emq_export(emq_db *db, const emq_export_options *opt, emq_write_fn write,
               void *ctx, emq_transfer_summary *sum)
{
    int rc = emq_db_enter(db);
    if (rc < 0) return rc;
    if (!write || (opt && opt->n_queues && !opt->queues))
        return emq_db_fail(db, EMQ_EINVAL, "export: no sink or no queues");
    counted c = {write, ctx, 0};
    emq_transfer_summary s;
    rc = run_walk(db, opt, count_write, &c, &s);
    if (rc == EMQ_OK && sum) {
        s.bytes = c.bytes;
        *sum = s;
    }
    return rc;
}

int emq_digest(emq_db *db, const emq_export_options *opt,
               emq_transfer_summary *sum)
{
    int rc = emq_db_enter(db);
    if (rc < 0) return rc;
    if (opt && opt->n_queues && !opt->queues)
        return emq_db_fail(db, EMQ_EINVAL, "digest: no queues");
    return run_walk(db, opt, NULL, NULL, sum);
}

/* ================================================================ import */

typedef struct importer {
    const unsigned char *p;
    size_t len;
    int version_seen;
    uint64_t commands;
    emq_resp_cmd cmd;
    emq_transfer_summary *sum; /* NULL: no digest wanted                  */
} importer;

/* Refuse the frame at `off` with EMQ_EPROTO and a message naming it. */
static int refuse(emq_db *db, uint64_t off, const char *why,
                  const void *arg, size_t alen)
{
    char msg[EMQ_ERRMSG_MAX];
    char shown[48];
    size_t k = 0;
    if (arg) {
        const unsigned char *a = arg;
        size_t i = 0;
        for (; i < alen && k < 36; i++) {
            if (a[i] >= 0x20 && a[i] < 0x7F && a[i] != '\'')
                shown[k++] = (char)a[i];
            else
                k += (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x",
                                      a[i]);
        }
        if (i < alen)
            k += (size_t)snprintf(shown + k, sizeof shown - k, "...");
    }
    shown[k] = '\0';
    if (arg)
        snprintf(msg, sizeof msg, "import refused at byte %llu: %s '%s'",
                 (unsigned long long)off, why, shown);
    else
        snprintf(msg, sizeof msg, "import refused at byte %llu: %s",
                 (unsigned long long)off, why);
    return emq_db_wire(db, EMQ_EPROTO, msg);
}

static int is(const emq_resp_cmd *c, size_t i, const char *word)
{
    size_t n = strlen(word);
    if (c->lens[i] != n)
        return 0;
    for (size_t k = 0; k < n; k++) {
        unsigned char a = c->argv[i][k];
        if (a >= 'a' && a <= 'z')
            a = (unsigned char)(a - 32);
        if (a != (unsigned char)word[k])
            return 0;
    }
    return 1;
}

/* 1 when argument i is a decimal integer (stored in *v). */
static int parse_ms(const emq_resp_cmd *c, size_t i, int64_t *v)
{
    return emq_parse_i64(c->argv[i], c->lens[i], v) == 0;
}

/* A score: a decimal integer or any text strtod reads whole (not NaN). */
static int parse_score(const unsigned char *p, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, p, n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (buf[i] == ' ' || (buf[i] >= '\t' && buf[i] <= '\r'))
            return 0;
    char *end;
    double d = strtod(buf, &end);
    if (end != buf + n || isnan(d))
        return 0;
    *out = d;
    return 1;
}

/* Check the key of a data command against the grammar and its type. */
static int check_key(emq_db *db, const emq_resp_cmd *c, int type)
{
    emq_keyinfo ki;
    if (!emq_key_parse(c->argv[1], c->lens[1], &ki))
        return refuse(db, c->offset, "key outside the EchoMQ grammar",
                      c->argv[1], c->lens[1]);
    if (ki.family == EMQ_K_VERSION && type != EMQ_T_STRING)
        return refuse(db, c->offset, "the version key is a string",
                      c->argv[1], c->lens[1]);
    if (ki.type != 0 && ki.type != type)
        return refuse(db, c->offset, "wrong type for the key",
                      c->argv[1], c->lens[1]);
    return EMQ_OK;
}

/*
 * Values an import must not let in: a claim pops a job-set member into
 * emq_job.id (14 bytes) and HINCRBYs the row's `attempts`; complete and
 * retry HINCRBY a metrics `count`. Valkey would fail such a step and keep
 * the pop; emqlite rolls the whole transition back, so the queue would be
 * stuck at that member for good. Refused instead, before anything applies.
 */
enum { V_NONE = 0, V_JOBSET, V_ROW, V_METRICS };

static int value_rule(const emq_resp_cmd *c)
{
    emq_keyinfo ki;
    if (!emq_key_parse(c->argv[1], c->lens[1], &ki) ||
        ki.family != EMQ_K_QUEUE)
        return V_NONE;
    if (ki.is_job_row)
        return V_ROW;
    switch (ki.role) {
    case EMQ_ROLE_JOBSET:
    case EMQ_ROLE_LANE: return V_JOBSET;
    case EMQ_ROLE_METRICS: return V_METRICS;
    default: return V_NONE;
    }
}

/* A counter the engine increments by 1: a decimal integer below
 * INT64_MAX (HINCRBY's parse; the maximum would overflow). */
static int incrementable(const unsigned char *p, size_t n)
{
    int64_t v;
    return emq_parse_i64(p, n, &v) == 0 && v < INT64_MAX;
}

/* Store failures inside the import name the frame too. */
static int store_rc(emq_db *db, emq_store *st, const emq_resp_cmd *c, int rc)
{
    char msg[EMQ_ERRMSG_MAX];
    if (rc == EMQ_EWRONGTYPE)
        snprintf(msg, sizeof msg, "import refused at byte %llu: %s",
                 (unsigned long long)c->offset, EMQ_WRONGTYPE_MSG);
    else
        snprintf(msg, sizeof msg, "import failed at byte %llu: %s",
                 (unsigned long long)c->offset, emq_store_errmsg(st));
    return emq_db_wire(db, rc, msg);
}

/* Apply one validated command. */
static int apply(emq_db *db, emq_store *st, importer *im)
{
    const emq_resp_cmd *c = &im->cmd;
    size_t argc = c->argc;
    const void *k = argc > 1 ? c->argv[1] : NULL;
    size_t kl = argc > 1 ? c->lens[1] : 0;
    int rc;

    if (is(c, 0, "SELECT")) {
        return argc == 2 ? EMQ_OK
                         : refuse(db, c->offset, "SELECT takes one index",
                                  NULL, 0);
    }
    if (is(c, 0, "MULTI") || is(c, 0, "EXEC"))
        return argc == 1 ? EMQ_OK
                         : refuse(db, c->offset, "MULTI/EXEC take no "
                                                 "arguments", NULL, 0);
    if (is(c, 0, "SET")) {
        int64_t at = -1;
        if (argc == 5 && is(c, 3, "PXAT")) {
            if (!parse_ms(c, 4, &at) || at < 0)
                return refuse(db, c->offset, "bad PXAT time", c->argv[4],
                              c->lens[4]);
        } else if (argc != 3) {
            return refuse(db, c->offset, "SET takes key value [PXAT ms]",
                          NULL, 0);
        }
        if ((rc = check_key(db, c, EMQ_T_STRING)) != EMQ_OK)
            return rc;
        if (kl == VKEY_LEN && memcmp(k, VKEY, VKEY_LEN) == 0) {
            if (c->lens[2] != sizeof EMQ_WIRE - 1 ||
                memcmp(c->argv[2], EMQ_WIRE, sizeof EMQ_WIRE - 1) != 0 ||
                at >= 0) {
                char msg[EMQ_ERRMSG_MAX];
                snprintf(msg, sizeof msg, "import refused at byte %llu: the "
                         "stream's {emq}:version is not " EMQ_WIRE,
                         (unsigned long long)c->offset);
                return emq_db_wire(db, EMQ_EWIRE, msg);
            }
            im->version_seen = 1;
        }
        rc = emq_str_set(st, k, kl, c->argv[2], c->lens[2], at, 0, NULL);
        return rc == EMQ_OK ? EMQ_OK : store_rc(db, st, c, rc);
    }
    if (is(c, 0, "HSET")) {
        if (argc < 4 || argc % 2 != 0)
            return refuse(db, c->offset, "HSET takes key and field/value "
                                         "pairs", NULL, 0);
        if ((rc = check_key(db, c, EMQ_T_HASH)) != EMQ_OK)
            return rc;
        int rule = value_rule(c);
        const char *cf = rule == V_ROW ? "attempts"
                       : rule == V_METRICS ? "count" : NULL;
        for (size_t i = 2; cf && i < argc; i += 2)
            if (c->lens[i] == strlen(cf) &&
                memcmp(c->argv[i], cf, c->lens[i]) == 0 &&
                !incrementable(c->argv[i + 1], c->lens[i + 1]))
                return refuse(db, c->offset, rule == V_ROW
                              ? "attempts of a job row is not an integer "
                                "below 2^63-1"
                              : "count of a metrics hash is not an integer "
                                "below 2^63-1",
                              c->argv[i + 1], c->lens[i + 1]);
        size_t n = (argc - 2) / 2;
        emq_bytes *fv = emq_mem_malloc(2 * n * sizeof *fv);
        if (!fv)
            return emq_db_fail(db, EMQ_ENOMEM, NULL);
        for (size_t i = 0; i < 2 * n; i++) {
            fv[i].p = c->argv[2 + i];
            fv[i].n = c->lens[2 + i];
        }
        rc = emq_hash_set(st, k, kl, fv, n, NULL);
        emq_mem_free(fv);
        return rc == EMQ_OK ? EMQ_OK : store_rc(db, st, c, rc);
    }
    if (is(c, 0, "ZADD")) {
        if (argc < 4 || argc % 2 != 0)
            return refuse(db, c->offset, "ZADD takes key and score/member "
                                         "pairs (no flags)", NULL, 0);
        if ((rc = check_key(db, c, EMQ_T_ZSET)) != EMQ_OK)
            return rc;
        int jobset = value_rule(c) == V_JOBSET;
        for (size_t i = 2; i < argc; i += 2) {
            double s;
            if (!parse_score(c->argv[i], c->lens[i], &s))
                return refuse(db, c->offset, "bad score", c->argv[i],
                              c->lens[i]);
            if (jobset && c->lens[i + 1] != EMQ_ID_LEN)
                return refuse(db, c->offset, "a job set member is not a "
                              "14-byte id", c->argv[i + 1], c->lens[i + 1]);
        }
        for (size_t i = 2; i < argc; i += 2) {
            double s;
            parse_score(c->argv[i], c->lens[i], &s);
            rc = emq_zset_add(st, k, kl, c->argv[i + 1], c->lens[i + 1], s,
                              NULL);
            if (rc != EMQ_OK)
                return store_rc(db, st, c, rc);
        }
        return EMQ_OK;
    }
    if (is(c, 0, "RPUSH") || is(c, 0, "SADD")) {
        int list = is(c, 0, "RPUSH");
        if (argc < 3)
            return refuse(db, c->offset, list ? "RPUSH takes key and values"
                                              : "SADD takes key and members",
                          NULL, 0);
        if ((rc = check_key(db, c, list ? EMQ_T_LIST : EMQ_T_SET)) != EMQ_OK)
            return rc;
        for (size_t i = 2; i < argc; i++) {
            int64_t len;
            rc = list ? emq_list_push(st, k, kl, 1, c->argv[i], c->lens[i],
                                      &len)
                      : emq_sset_add(st, k, kl, c->argv[i], c->lens[i], NULL);
            if (rc != EMQ_OK)
                return store_rc(db, st, c, rc);
        }
        return EMQ_OK;
    }
    if (is(c, 0, "PEXPIREAT")) {
        int64_t at;
        if (argc != 3)
            return refuse(db, c->offset, "PEXPIREAT takes key ms", NULL, 0);
        if (!parse_ms(c, 2, &at) || at < 0)
            return refuse(db, c->offset, "bad PEXPIREAT time", c->argv[2],
                          c->lens[2]);
        emq_keyinfo ki;
        if (!emq_key_parse(k, kl, &ki))
            return refuse(db, c->offset, "key outside the EchoMQ grammar", k,
                          kl);
        if (ki.family == EMQ_K_VERSION)
            return refuse(db, c->offset, "the version key never expires",
                          NULL, 0);
        rc = emq_key_expire_at(st, k, kl, at);
        if (rc == EMQ_NOTFOUND)
            return EMQ_OK; /* as Valkey: no key, no effect */
        return rc == EMQ_OK ? EMQ_OK : store_rc(db, st, c, rc);
    }
    if (is(c, 0, "HPEXPIREAT")) {
        int64_t at, nf;
        if (argc < 6 || !is(c, 3, "FIELDS") || !parse_ms(c, 4, &nf) ||
            nf < 1 || (uint64_t)nf != argc - 5)
            return refuse(db, c->offset, "HPEXPIREAT takes key ms FIELDS n "
                                         "field...", NULL, 0);
        if (!parse_ms(c, 2, &at) || at < 0)
            return refuse(db, c->offset, "bad HPEXPIREAT time", c->argv[2],
                          c->lens[2]);
        if ((rc = check_key(db, c, EMQ_T_HASH)) != EMQ_OK)
            return rc;
        for (size_t i = 5; i < argc; i++) {
            int done;
            rc = emq_hash_expire_at(st, k, kl, c->argv[i], c->lens[i], at,
                                    &done);
            if (rc != EMQ_OK && rc != EMQ_NOTFOUND)
                return store_rc(db, st, c, rc);
        }
        return EMQ_OK;
    }
    if (emq_stream_import_cmd(c)) /* engine/export_stream.c (issue 16) */
        return emq_stream_import(db, st, c);
    return refuse(db, c->offset, "unknown command", c->argv[0], c->lens[0]);
}

static int import_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    importer *im = ctx;
    size_t pos = 0;
    while (pos < im->len) {
        emq_resp_error e;
        int rc = emq_resp_parse(im->p + pos, im->len - pos, pos, &im->cmd,
                                &e);
        if (rc == EMQ_RESP_MORE)
            return refuse(db, pos, "truncated frame", NULL, 0);
        if (rc == EMQ_EPROTO) {
            char why[160];
            snprintf(why, sizeof why, "malformed RESP (%s at byte %llu)",
                     e.msg, (unsigned long long)e.at);
            return refuse(db, e.frame, why, NULL, 0);
        }
        if (rc != EMQ_OK)
            return emq_db_fail(db, rc, "import");
        if ((rc = apply(db, st, im)) != EMQ_OK)
            return rc;
        im->commands++;
        pos += im->cmd.size;
    }
    if (!im->version_seen)
        return emq_db_wire(db, EMQ_EWIRE, "import refused: the stream never "
                                          "sets {emq}:version to " EMQ_WIRE);
    if (im->sum) {
        /* Digested inside the transaction: a digest that fails (out of
         * memory) takes the import back with it. */
        walk w;
        int rc;
        walk_init(&w, db, NULL, NULL, NULL);
        if ((rc = walk_tx(db, st, now, &w)) == EMQ_OK) {
            walk_sum(&w, im->sum);
            im->sum->commands = im->commands;
            im->sum->bytes = im->len;
        }
        walk_free(&w);
        return rc;
    }
    return EMQ_OK;
}

int emq_import(emq_db *db, const void *bytes, size_t len,
               emq_transfer_summary *sum)
{
    int rc = emq_db_enter(db);
    if (rc < 0) return rc;
    if (!bytes && len)
        return emq_db_fail(db, EMQ_EINVAL, "import: no bytes");
    importer im;
    emq_transfer_summary s;
    memset(&im, 0, sizeof im);
    im.p = bytes;
    im.len = len;
    im.sum = sum ? &s : NULL;
    rc = emq_db_run(db, 1, import_tx, &im);
    emq_resp_cmd_free(&im.cmd);
    if (rc == EMQ_OK && sum)
        *sum = s;
    return rc;
}
