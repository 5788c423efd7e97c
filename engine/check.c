/*
 * check.c — the invariant checker, emq_check() (doc/RELIABILITY.md).
 *
 * Owns: one read-only pass over the whole file, inside one read transaction,
 * that reports every broken invariant (not just the first) through a
 * callback: the SQLite integrity check and stamp, the schema objects, the
 * key rows' checksums (when the file keeps them), the version fence, the key
 * grammar and the type of every key, the members and
 * scores of the job sets and lanes, decimal counters, and the agreement of
 * every job row's `state` with the sets that hold its id.
 *
 * Rules: the checker never writes. A finding is a VIOLATION only when no
 * sequence of PROTOCOL.md transitions can produce it from an empty file; the
 * states the protocol itself produces but a disciplined workload never does
 * (an id in two sets, a set entry without a row, a partial row) are NOTES,
 * each naming the transition that leaves it (see the table before
 * check_rows). Tests assert zero violations always and zero notes where the
 * workload is disciplined.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "db.h"
#include "keys.h"
#include "brandedid.h"

/* Membership bits of an id within one queue. */
enum {
    M_PENDING = 1,
    M_ACTIVE = 2,
    M_SCHEDULE = 4,
    M_DEAD = 8,
    M_LANE = 16,
    M_ROW = 32 /* a row J(id) exists */
};

typedef struct kent {       /* a live key of the file */
    unsigned char *name;
    size_t len;
    int type;
} kent;

typedef struct ment {       /* an id seen in a job set or lane */
    char id[EMQ_ID_LEN];
    unsigned bits;
} ment;

typedef struct lent {       /* (id, group) for each lane entry */
    char id[EMQ_ID_LEN];
    char gid[EMQ_ID_LEN];
} lent;

typedef struct elem {       /* one element of the aggregate being read */
    size_t off, len;        /* bytes in checker.vals                   */
    double score;           /* zset score, or a hash field's expiry    */
} elem;

typedef struct checker {
    emq_store *st;
    emq_check_fn cb;
    void *ctx;
    size_t nviol, nnote;
    kent *keys;
    size_t nkeys, capkeys;
    ment *mem;
    size_t nmem, capmem;
    lent *lanes;
    size_t nlanes, caplanes;
    emq_buf vals;           /* scratch: element bytes, concatenated    */
    elem *el;
    size_t nel, capel;
    kent *sumbad;           /* keys whose checksum failed, in name order */
    size_t nsumbad, capsumbad;
    int oom;
} checker;

/* ------------------------------------------------------------- reporting */

/* Printable rendering of bytes: ASCII verbatim, other bytes \xNN. */
static void show(char *out, size_t cap, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t o = 0, i;
    for (i = 0; i < n && o + 5 < cap; i++) {
        if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\')
            out[o++] = (char)b[i];
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", b[i]);
    }
    if (i < n && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = 0;
}

static void report(checker *c, int sev, const char *code, const void *key,
                   size_t klen, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void report(checker *c, int sev, const char *code, const void *key,
                   size_t klen, const char *fmt, ...)
{
    char kbuf[700], msg[600];
    emq_finding f;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    show(kbuf, sizeof kbuf, key ? key : "", key ? klen : 0);
    if (sev == EMQ_CHECK_VIOLATION)
        c->nviol++;
    else
        c->nnote++;
    if (c->cb) {
        f.severity = sev;
        f.code = code;
        f.key = kbuf;
        f.message = msg;
        c->cb(c->ctx, &f);
    }
}

#define VIOL EMQ_CHECK_VIOLATION
#define NOTE EMQ_CHECK_NOTE

/* ----------------------------------------------------------- collections */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t n;
    void *q;
    if (need <= *cap) return 0;
    n = *cap ? *cap * 2 : 64;
    while (n < need) n *= 2;
    if (n > SIZE_MAX / size) return -1;
    q = emq_mem_realloc(*p, n * size);
    if (q == NULL) return -1;
    *p = q;
    *cap = n;
    return 0;
}

static int key_cb(void *ctx, const unsigned char *key, size_t klen, int type)
{
    checker *c = ctx;
    kent *k;
    if (grow((void **)&c->keys, &c->capkeys, c->nkeys + 1, sizeof *c->keys))
        return EMQ_ENOMEM;
    k = &c->keys[c->nkeys];
    k->name = emq_mem_malloc(klen ? klen : 1);
    if (k->name == NULL) return EMQ_ENOMEM;
    if (klen) memcpy(k->name, key, klen);
    k->len = klen;
    k->type = type;
    c->nkeys++;
    return 0;
}

static int el_add(checker *c, const void *p, size_t n, double score)
{
    elem *e;
    if (grow((void **)&c->el, &c->capel, c->nel + 1, sizeof *c->el) ||
        emq_buf_append(&c->vals, p, n) != EMQ_OK) {
        c->oom = 1;
        return EMQ_ENOMEM;
    }
    e = &c->el[c->nel++];
    e->off = c->vals.len - n;
    e->len = n;
    e->score = score;
    return 0;
}

static const unsigned char *el_p(const checker *c, size_t i)
{
    return c->vals.p + c->el[i].off;
}

static void el_reset(checker *c)
{
    c->vals.len = 0;
    c->nel = 0;
}

static int zset_cb(void *ctx, const unsigned char *m, size_t mlen, double s)
{
    return el_add(ctx, m, mlen, s);
}

static int value_cb(void *ctx, const unsigned char *v, size_t vlen)
{
    return el_add(ctx, v, vlen, 0);
}

/* Hash fields land as pairs: field (score = expiry), then value. */
static int field_cb(void *ctx, const unsigned char *f, size_t flen,
                    const unsigned char *v, size_t vlen, int64_t expire_at)
{
    int rc = el_add(ctx, f, flen, (double)expire_at);
    return rc ? rc : el_add(ctx, v, vlen, 0);
}

static int ment_cmp(const void *a, const void *b)
{
    return memcmp(a, b, EMQ_ID_LEN);
}

static int lent_cmp(const void *a, const void *b)
{
    return memcmp(a, b, 2 * EMQ_ID_LEN);
}

static int mem_add(checker *c, const void *id, unsigned bit)
{
    if (grow((void **)&c->mem, &c->capmem, c->nmem + 1, sizeof *c->mem)) {
        c->oom = 1;
        return EMQ_ENOMEM;
    }
    memcpy(c->mem[c->nmem].id, id, EMQ_ID_LEN);
    c->mem[c->nmem++].bits = bit;
    return 0;
}

static int lane_add(checker *c, const void *id, const void *gid)
{
    if (grow((void **)&c->lanes, &c->caplanes, c->nlanes + 1,
             sizeof *c->lanes)) {
        c->oom = 1;
        return EMQ_ENOMEM;
    }
    memcpy(c->lanes[c->nlanes].id, id, EMQ_ID_LEN);
    memcpy(c->lanes[c->nlanes++].gid, gid, EMQ_ID_LEN);
    return 0;
}

/* Sort the membership list and merge duplicates (OR of their bits). */
static void mem_merge(checker *c)
{
    size_t i, o = 0;
    if (c->nmem > 1) qsort(c->mem, c->nmem, sizeof *c->mem, ment_cmp);
    for (i = 0; i < c->nmem; i++) {
        if (o > 0 && memcmp(c->mem[o - 1].id, c->mem[i].id, EMQ_ID_LEN) == 0)
            c->mem[o - 1].bits |= c->mem[i].bits;
        else
            c->mem[o++] = c->mem[i];
    }
    c->nmem = o;
    if (c->nlanes > 1)
        qsort(c->lanes, c->nlanes, sizeof *c->lanes, lent_cmp);
}

static ment *mem_find(checker *c, const void *id)
{
    if (c->nmem == 0) return NULL;
    return bsearch(id, c->mem, c->nmem, sizeof *c->mem, ment_cmp);
}

static int in_lane(checker *c, const void *id, const void *gid)
{
    lent k;
    if (c->nlanes == 0) return 0;
    memcpy(k.id, id, EMQ_ID_LEN);
    memcpy(k.gid, gid, EMQ_ID_LEN);
    return bsearch(&k, c->lanes, c->nlanes, sizeof *c->lanes, lent_cmp) !=
           NULL;
}

/* "pending, active" for the set bits of a membership. */
static void bits_name(char *out, size_t cap, unsigned bits)
{
    static const struct { unsigned bit; const char *name; } n[] = {
        { M_PENDING, "pending" }, { M_ACTIVE, "active" },
        { M_SCHEDULE, "schedule" }, { M_DEAD, "dead" }, { M_LANE, "a lane" },
    };
    size_t i, o = 0;
    out[0] = 0;
    for (i = 0; i < sizeof n / sizeof *n; i++)
        if (bits & n[i].bit)
            o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, "%s%s",
                                  o ? ", " : "", n[i].name);
}

/* ----------------------------------------------------------- predicates */

static int is_job_id(const void *p, size_t n)
{
    char ns[4];
    return emq_id_check(p, n, ns, NULL) == EMQ_ID_OK &&
           memcmp(ns, "JOB", 3) == 0;
}

static int is_branded(const void *p, size_t n)
{
    return emq_id_check(p, n, NULL, NULL) == EMQ_ID_OK;
}

/* A counter as the protocol writes it: shortest decimal, >= 0. */
static int is_count(const void *p, size_t n)
{
    int64_t v;
    return emq_parse_i64(p, n, &v) == 0 && v >= 0;
}

static int is_decimal(const void *p, size_t n)
{
    int64_t v;
    return emq_parse_i64(p, n, &v) == 0;
}

static int eq(const void *p, size_t n, const char *lit)
{
    return n == strlen(lit) && memcmp(p, lit, n) == 0;
}

/* A score the protocol can write: any finite integral double. NOW + lease
 * and far run-ats may pass 2^53 and round, as Valkey's doubles do. */
static int integral(double s)
{
    return isfinite(s) && s == floor(s);
}

/* Key order of SQLite's BLOB comparison: memcmp, then the shorter. */
static int kent_cmp(const void *a, const void *b)
{
    const kent *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* 1 when k's checksum was already reported (its failed read is not a
 * second finding). */
static int sum_reported(const checker *c, const kent *k)
{
    return c->nsumbad &&
           bsearch(k, c->sumbad, c->nsumbad, sizeof *c->sumbad, kent_cmp);
}

/* A store read failed: corruption is a finding, anything else aborts. */
static int read_failed(checker *c, int rc, const kent *k)
{
    if (rc == EMQ_ENOMEM || c->oom) return EMQ_ENOMEM;
    if (rc == EMQ_ECORRUPT && sum_reported(c, k)) return 0;
    if (rc == EMQ_ECORRUPT || rc == EMQ_EWRONGTYPE || rc == EMQ_EPROTO ||
        rc == EMQ_EINTERNAL) {
        report(c, VIOL, "read", k->name, k->len, "the key cannot be read: %s",
               emq_store_errmsg(c->st));
        return 0;
    }
    return rc;
}

/* Load the elements of aggregate key k (any type) into c->el. */
static int load(checker *c, const kent *k)
{
    int rc;
    el_reset(c);
    switch (k->type) {
    case EMQ_T_ZSET:
        rc = emq_zset_range(c->st, k->name, k->len, 0, -1, zset_cb, c);
        break;
    case EMQ_T_LIST:
        rc = emq_list_range(c->st, k->name, k->len, 0, -1, value_cb, c);
        break;
    case EMQ_T_SET:
        rc = emq_sset_members(c->st, k->name, k->len, value_cb, c);
        break;
    case EMQ_T_HASH:
        rc = emq_hash_getall(c->st, k->name, k->len, field_cb, c);
        break;
    case EMQ_T_STRING: {
        emq_buf v = {0};
        rc = emq_str_get(c->st, k->name, k->len, &v);
        if (rc == EMQ_OK) rc = el_add(c, v.p ? v.p : (unsigned char *)"",
                                      v.len, 0);
        emq_buf_free(&v);
        break;
    }
    default:
        rc = EMQ_OK;
    }
    if (c->oom) return EMQ_ENOMEM;
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

/* ------------------------------------------------------------ file level */

/* A failed PRAGMA that is not corruption: the check cannot go on. */
static int pragma_failed(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return EMQ_EBUSY;
    case SQLITE_IOERR: return EMQ_EIO;
    case SQLITE_NOMEM: return EMQ_ENOMEM;
    default: return EMQ_EINTERNAL;
    }
}

/*
 * integrity_check reports a page it could not read as a row ("... error
 * code=N"). A read that failed for I/O, memory or a lock is not damage:
 * answer that code's failure instead of a violation. 0 when `t` is not such
 * a row.
 */
static int unreadable(const char *t)
{
    const char *p = t ? strstr(t, "error code=") : NULL;
    long code;
    if (p == NULL) return 0;
    code = strtol(p + sizeof "error code=" - 1, NULL, 10);
    switch (code & 0xff) {
    case SQLITE_BUSY: case SQLITE_LOCKED: case SQLITE_IOERR:
    case SQLITE_NOMEM: return pragma_failed((int)code);
    default: return 0;
    }
}

static void schema_cb(void *ctx, const char *finding)
{
    report(ctx, VIOL, "schema", NULL, 0, "the file's schema has a %s (only "
           "emqlite's own objects belong in it)", finding);
}

static void row_cb(void *ctx, const void *key, size_t klen, const char *why)
{
    checker *c = ctx;
    kent *k;
    report(c, VIOL, "checksum", key, klen, "%s", why);
    if (grow((void **)&c->sumbad, &c->capsumbad, c->nsumbad + 1,
             sizeof *c->sumbad) ||
        (c->sumbad[c->nsumbad].name = emq_mem_malloc(klen ? klen : 1)) ==
            NULL) {
        c->oom = 1;
        return;
    }
    k = &c->sumbad[c->nsumbad++];
    if (klen) memcpy(k->name, key, klen);
    k->len = klen;
    k->type = 0;
}

/* PRAGMA integrity_check, application_id, user_version, the schema
 * objects, the row checksums. */
static int check_file(checker *c)
{
    sqlite3 *db = emq_store_sqlite(c->st);
    sqlite3_stmt *s = NULL;
    int rc, n = 0;

    rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        int failed = unreadable(t);
        if (failed) {
            sqlite3_finalize(s);
            return failed;
        }
        n++;
        if (t == NULL || strcmp(t, "ok") != 0)
            report(c, VIOL, "integrity", NULL, 0,
                   "PRAGMA integrity_check: %s", t ? t : "(null)");
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) {
            report(c, VIOL, "integrity", NULL, 0,
                   "PRAGMA integrity_check failed: %s", sqlite3_errstr(rc));
            return EMQ_OK;
        }
        return pragma_failed(rc);
    }
    if (n == 0)
        report(c, VIOL, "integrity", NULL, 0,
               "PRAGMA integrity_check returned nothing");

    static const struct { const char *sql, *what; long want; } stamp[] = {
        { "PRAGMA application_id", "application_id", EMQ_APPLICATION_ID },
        { "PRAGMA user_version", "user_version", EMQ_SCHEMA_VERSION },
    };
    for (size_t i = 0; i < 2; i++) {
        long v = 0;
        rc = sqlite3_prepare_v2(db, stamp[i].sql, -1, &s, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
            v = (long)sqlite3_column_int64(s, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(s);
        if (rc != SQLITE_OK) return pragma_failed(rc);
        if (v != stamp[i].want)
            report(c, VIOL, "stamp", NULL, 0, "%s is %ld, expected %ld",
                   stamp[i].what, v, stamp[i].want);
    }
    if ((rc = emq_store_check_schema(c->st, schema_cb, c)) < 0 ||
        (rc = emq_store_check_rows(c->st, row_cb, c)) < 0)
        return rc;
    return c->oom ? EMQ_ENOMEM : EMQ_OK;
}

/* {emq}:version: a string holding exactly the wire, with no TTL. */
static int check_version(checker *c, const kent *k)
{
    int64_t at;
    int rc;
    if (k->type != EMQ_T_STRING) return 0; /* reported as "type" */
    if ((rc = load(c, k)) < 0) return read_failed(c, rc, k);
    if (c->nel != 1 || !eq(el_p(c, 0), c->el[0].len, EMQ_WIRE)) {
        char v[300];
        show(v, sizeof v, c->nel ? el_p(c, 0) : (const void *)"",
             c->nel ? c->el[0].len : 0);
        report(c, VIOL, "fence", k->name, k->len,
               "the version fence holds \"%s\", not \"%s\"", v, EMQ_WIRE);
    }
    rc = emq_key_expiry(c->st, k->name, k->len, &at);
    if (rc < 0) return read_failed(c, rc, k);
    if (rc == EMQ_OK && at >= 0)
        report(c, VIOL, "fence", k->name, k->len,
               "the version fence carries an expiry");
    return 0;
}

/* The type the grammar gives the key. (Emptiness is the store's: a key
 * whose last element went is absent to every read, scans included.) */
static int check_shape(checker *c, const kent *k, const emq_keyinfo *ki)
{
    if (ki->type != 0 && ki->type != k->type)
        report(c, VIOL, "type", k->name, k->len,
               "the key holds a %s where the grammar says %s",
               emq_type_name(k->type), emq_type_name(ki->type));
    return 0;
}

/* --------------------------------------------------------- queue level */

/* A job set or lane: members are JOB ids; scores by set. */
static int check_jobset(checker *c, const kent *k, unsigned bit,
                        const void *gid)
{
    size_t i;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    for (i = 0; i < c->nel; i++) {
        const unsigned char *m = el_p(c, i);
        size_t ml = c->el[i].len;
        double s = c->el[i].score;
        char mv[100];
        if (!is_job_id(m, ml)) {
            show(mv, sizeof mv, m, ml);
            report(c, VIOL, "member", k->name, k->len,
                   "member \"%s\" is not a JOB branded id", mv);
            continue;
        }
        if ((bit & (M_ACTIVE | M_SCHEDULE)) ? !integral(s) : s != 0) {
            report(c, VIOL, "score", k->name, k->len,
                   "member %.14s has score %.17g (expected %s)", m, s,
                   (bit & (M_ACTIVE | M_SCHEDULE)) ? "an integer ms"
                                                   : "0");
        }
        if (mem_add(c, m, bit)) return EMQ_ENOMEM;
        if (gid && lane_add(c, m, gid)) return EMQ_ENOMEM;
    }
    return 0;
}

/* Hash fields named `field` (NULL: every field) hold decimal counters;
 * with `ids`, field names are branded ids. */
static int check_counters(checker *c, const kent *k, const char *field,
                          int ids)
{
    size_t i;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    for (i = 0; i + 1 < c->nel; i += 2) {
        const unsigned char *f = el_p(c, i), *v = el_p(c, i + 1);
        size_t fl = c->el[i].len, vl = c->el[i + 1].len;
        char fv[100], vv[100];
        if (field && !eq(f, fl, field)) continue;
        show(fv, sizeof fv, f, fl);
        if (ids && !is_branded(f, fl))
            report(c, VIOL, "member", k->name, k->len,
                   "field \"%s\" is not a branded group id", fv);
        if (!is_decimal(v, vl)) {
            show(vv, sizeof vv, v, vl);
            report(c, VIOL, "counter", k->name, k->len,
                   "field \"%s\" holds \"%s\", not a decimal integer", fv,
                   vv);
        }
    }
    return 0;
}

/* A string counter (limiter, lock key, dependencies). */
static int check_strcount(checker *c, const kent *k)
{
    char vv[100];
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    if (c->nel == 1 && !is_decimal(el_p(c, 0), c->el[0].len)) {
        show(vv, sizeof vv, el_p(c, 0), c->el[0].len);
        report(c, VIOL, "counter", k->name, k->len,
               "holds \"%s\", not a decimal integer", vv);
    }
    return 0;
}

static int check_ring(checker *c, const kent *k)
{
    size_t i, j;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    for (i = 0; i < c->nel; i++) {
        char g[100];
        show(g, sizeof g, el_p(c, i), c->el[i].len);
        if (!is_branded(el_p(c, i), c->el[i].len))
            report(c, VIOL, "ring", k->name, k->len,
                   "element \"%s\" is not a branded group id", g);
        for (j = 0; j < i; j++)
            if (c->el[j].len == c->el[i].len &&
                memcmp(el_p(c, j), el_p(c, i), c->el[i].len) == 0) {
                report(c, VIOL, "ring", k->name, k->len,
                       "group \"%s\" is on the ring twice (OFFER pushes only "
                       "a group that is not on it)", g);
                break;
            }
    }
    return 0;
}

static int check_wake(checker *c, const kent *k)
{
    size_t i;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    if (c->nel > 64)
        report(c, VIOL, "wake", k->name, k->len,
               "%zu wake tokens (WAKE trims to 64)", c->nel);
    for (i = 0; i < c->nel; i++)
        if (!eq(el_p(c, i), c->el[i].len, "1")) {
            report(c, VIOL, "wake", k->name, k->len,
                   "element %zu is not the token \"1\"", i);
            break;
        }
    return 0;
}

static int check_paused(checker *c, const kent *k)
{
    size_t i;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    for (i = 0; i < c->nel; i++)
        if (!is_branded(el_p(c, i), c->el[i].len)) {
            char g[100];
            show(g, sizeof g, el_p(c, i), c->el[i].len);
            report(c, VIOL, "member", k->name, k->len,
                   "member \"%s\" is not a branded group id", g);
        }
    return 0;
}

/* Pass 1 over a non-row key of a queue: sets, lanes and counters. */
static int check_qkey(checker *c, const kent *k, size_t plen)
{
    const unsigned char *s = k->name + plen;
    size_t n = k->len - plen;
    static const struct { const char *sfx; unsigned bit; } sets[] = {
        { "pending", M_PENDING }, { "active", M_ACTIVE },
        { "schedule", M_SCHEDULE }, { "dead", M_DEAD },
    };
    for (size_t i = 0; i < 4; i++)
        if (eq(s, n, sets[i].sfx))
            return check_jobset(c, k, sets[i].bit, NULL);
    if (n == 2 + EMQ_ID_LEN + 8 && memcmp(s, "g:", 2) == 0)
        return check_jobset(c, k, M_LANE, s + 2);
    if (eq(s, n, "ring")) return check_ring(c, k);
    if (eq(s, n, "wake")) return check_wake(c, k);
    if (eq(s, n, "paused")) return check_paused(c, k);
    if (eq(s, n, "metrics:completed") || eq(s, n, "metrics:failed"))
        return check_counters(c, k, "count", 0);
    if (eq(s, n, "gactive") || eq(s, n, "glimit") || eq(s, n, "gweight"))
        return check_counters(c, k, NULL, 1);
    if (eq(s, n, "limiter")) return check_strcount(c, k);
    if (n > 4 + EMQ_ID_LEN && memcmp(s, "job:", 4) == 0 &&
        (eq(s + 4 + EMQ_ID_LEN, n - 4 - EMQ_ID_LEN, ":lock") ||
         eq(s + 4 + EMQ_ID_LEN, n - 4 - EMQ_ID_LEN, ":dependencies")))
        return check_strcount(c, k);
    return 0;
}

/*
 * Pass 2: a job row J(id). Violations — states no transition produces:
 *   - a row without `state` (unless its only field is `lock`, see below);
 *   - a `state` outside pending / active / scheduled / dead /
 *     awaiting_children;
 *   - a row whose `state` names a set that does not hold the id: pending
 *     (B.pending, or the lane of the row's `group`), active (B.active),
 *     scheduled (B.schedule), dead (B.dead). Every transition that removes
 *     an id from one of these sets also rewrites `state` or deletes the row,
 *     and every transition that writes `state` adds the id to its set;
 *   - `attempts`, `stalled` or `lock` not a decimal integer.
 * Notes — tolerated, each produced by the protocol as written:
 *   - "partial": a row without `attempts` or `payload` (D-12: promote and
 *     reap write `state` on a missing row; claim then adds `attempts`), or a
 *     row holding only `lock` (T5.12 track after another holder completed
 *     the job; the field's TTL removes it);
 *   - "multi" and "ghost": see check_members.
 */
static int check_row(checker *c, const kent *k, const char *id)
{
    const unsigned char *state = NULL, *group = NULL;
    size_t slen = 0, glen = 0, i, nf;
    int has_att = 0, has_pay = 0, only_lock = 1;
    ment *me;
    unsigned bits;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    nf = c->nel / 2;
    for (i = 0; i + 1 < c->nel; i += 2) {
        const unsigned char *f = el_p(c, i), *v = el_p(c, i + 1);
        size_t fl = c->el[i].len, vl = c->el[i + 1].len;
        if (!eq(f, fl, "lock")) only_lock = 0;
        if (eq(f, fl, "state")) { state = v; slen = vl; }
        else if (eq(f, fl, "group")) { group = v; glen = vl; }
        else if (eq(f, fl, "payload")) has_pay = 1;
        else if (eq(f, fl, "attempts")) {
            has_att = 1;
            if (!is_count(v, vl))
                report(c, VIOL, "counter", k->name, k->len,
                       "attempts is not a decimal integer >= 0");
        } else if (eq(f, fl, "stalled") || eq(f, fl, "lock")) {
            if (!is_decimal(v, vl))
                report(c, VIOL, "counter", k->name, k->len,
                       "%s is not a decimal integer", fl == 4 ? "lock"
                                                              : "stalled");
        }
    }
    me = mem_find(c, id);
    if (me) me->bits |= M_ROW;
    bits = me ? me->bits : 0;
    if (state == NULL) {
        if (nf > 0 && only_lock)
            report(c, NOTE, "partial", k->name, k->len,
                   "a row holding only the lock field (T5.12 tracked a job "
                   "another holder had completed; the field expires)");
        else
            report(c, VIOL, "row", k->name, k->len,
                   "the job row has no state field");
        return 0;
    }
    if (!has_att || !has_pay)
        report(c, NOTE, "partial", k->name, k->len,
               "the row has no %s (D-12: promote, reap or claim of an id "
               "whose row was deleted recreates a partial row)",
               !has_att ? "attempts" : "payload");
    if (eq(state, slen, "pending")) {
        if (!(bits & M_PENDING) &&
            !(group && glen == EMQ_ID_LEN && in_lane(c, id, group)))
            report(c, VIOL, "state-set", k->name, k->len,
                   "the row says pending but the id is neither in pending "
                   "nor in its group's lane");
    } else if (eq(state, slen, "active")) {
        if (!(bits & M_ACTIVE))
            report(c, VIOL, "state-set", k->name, k->len,
                   "the row says active but the id is not in active");
    } else if (eq(state, slen, "scheduled")) {
        if (!(bits & M_SCHEDULE))
            report(c, VIOL, "state-set", k->name, k->len,
                   "the row says scheduled but the id is not in schedule");
    } else if (eq(state, slen, "dead")) {
        if (!(bits & M_DEAD))
            report(c, VIOL, "state-set", k->name, k->len,
                   "the row says dead but the id is not in dead");
    } else if (!eq(state, slen, "awaiting_children")) {
        char sv[100];
        show(sv, sizeof sv, state, slen);
        report(c, VIOL, "state", k->name, k->len,
               "unknown state \"%s\"", sv);
    }
    return 0;
}

/*
 * After the rows: every id met in the sets of the queue.
 *   - "ghost" (note): an id in a set with no row. T1.5 deletes only the row
 *     and clears only active (or pending when it was not active): completing
 *     a scheduled or dead job with its current token (token 0 for a job never
 *     claimed) leaves the id in schedule or dead; completing a job that an
 *     extend put back into active while it sat in pending leaves it in
 *     pending; T2.2 drain of such a job leaves it in active; T2.12
 *     remove_job leaves lane entries (D-9).
 *   - "multi" (note): an id in more than one set. T1.11/T1.12 extend inserts
 *     the id into active whatever its state; T1.6 retry and T1.5 clear only
 *     active or pending, so a retry of a scheduled job leaves it in schedule
 *     as well as in dead, and T2.13 reprocess then adds pending; D-14
 *     (a failed flow parent put back in pending while in dead).
 */
static void check_members(checker *c, const char *q, size_t qlen)
{
    size_t i;
    for (i = 0; i < c->nmem; i++) {
        const ment *m = &c->mem[i];
        unsigned sets = m->bits & ~(unsigned)M_ROW;
        char key[EMQ_KEY_MAX], names[80];
        int n = snprintf(key, sizeof key, "emq:{%.*s}:job:%.14s", (int)qlen,
                         q, m->id);
        bits_name(names, sizeof names, sets);
        if (!(m->bits & M_ROW))
            report(c, NOTE, "ghost", key, (size_t)n,
                   "the id is in %s but has no row (T1.5 deletes only the "
                   "row and clears only active or pending; D-9, D-12)",
                   names);
        if (sets & (sets - 1))
            report(c, NOTE, "multi", key, (size_t)n,
                   "the id is in %s at once (T1.11 extend re-inserts into "
                   "active; T1.5/T1.6 clear only active or pending; D-12, "
                   "D-14)", names);
    }
}

/* One queue: keys[i0, i1) all start with `emq:{q}:` (plen bytes). */
static int check_queue(checker *c, size_t i0, size_t i1, size_t plen)
{
    emq_keyinfo ki;
    size_t i;
    int rc;
    c->nmem = 0;
    c->nlanes = 0;
    for (i = i0; i < i1; i++) {
        const kent *k = &c->keys[i];
        if (!emq_key_parse(k->name, k->len, &ki)) {
            report(c, VIOL, "key", k->name, k->len,
                   "not a key of the EchoMQ grammar (PROTOCOL.md 2.4)");
            continue;
        }
        if ((rc = check_shape(c, k, &ki)) < 0) return rc;
        if (ki.type != 0 && ki.type != k->type) continue;
        if (!ki.is_job_row && (rc = check_qkey(c, k, plen)) < 0) return rc;
    }
    mem_merge(c);
    for (i = i0; i < i1; i++) {
        const kent *k = &c->keys[i];
        if (!emq_key_parse(k->name, k->len, &ki) || !ki.is_job_row ||
            k->type != EMQ_T_HASH)
            continue;
        if ((rc = check_row(c, k, ki.id)) < 0) return rc;
    }
    check_members(c, (const char *)c->keys[i0].name + 5, plen - 7);
    return 0;
}

/* ----------------------------------------------------------------- walk */

static int walk(checker *c)
{
    emq_keyinfo ki;
    size_t i = 0, j;
    int rc, fence = 0;
    if ((rc = check_file(c)) < 0) return rc;
    rc = emq_key_scan(c->st, "", 0, key_cb, c);
    if (rc != EMQ_OK) return rc < 0 ? rc : EMQ_EINTERNAL;
    while (i < c->nkeys) {
        const kent *k = &c->keys[i];
        if (!emq_key_parse(k->name, k->len, &ki)) {
            report(c, VIOL, "key", k->name, k->len,
                   "not a key of the EchoMQ grammar (PROTOCOL.md 2.1)");
            i++;
            continue;
        }
        if (ki.family == EMQ_K_QUEUE) {
            size_t plen = 5 + ki.qlen + 2;
            for (j = i + 1; j < c->nkeys; j++)
                if (c->keys[j].len < plen ||
                    memcmp(c->keys[j].name, k->name, plen) != 0)
                    break;
            if ((rc = check_queue(c, i, j, plen)) < 0) return rc;
            i = j;
            continue;
        }
        if ((rc = check_shape(c, k, &ki)) < 0) return rc;
        if (ki.family == EMQ_K_VERSION) {
            fence = 1;
            if ((rc = check_version(c, k)) < 0) return rc;
        } else {
            report(c, NOTE, "reserve", k->name, k->len,
                   "a reserved unit no transition writes (PROTOCOL.md 2.5)");
        }
        i++;
    }
    if (!fence)
        report(c, VIOL, "fence", EMQ_VERSION_KEY, sizeof EMQ_VERSION_KEY - 1,
               "the version fence is absent");
    return 0;
}

int emq_check(emq_db *db, emq_check_fn cb, void *ctx, size_t *nviolations)
{
    checker c;
    int rc;
    size_t i;
    if (db == NULL) return EMQ_EINVAL; /* no handle, no message to set */
    if (nviolations) *nviolations = 0;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    memset(&c, 0, sizeof c);
    c.st = emq_db_store(db);
    c.cb = cb;
    c.ctx = ctx;
    rc = emq_store_begin(c.st, 0, emq_now(db));
    if (rc < 0) {
        emq_db_fail(db, rc, emq_store_errmsg(c.st));
        goto done;
    }
    rc = walk(&c);
    emq_store_rollback(c.st);
    if (rc < 0) {
        emq_db_fail(db, rc, c.oom ? "" : emq_store_errmsg(c.st));
        goto done;
    }
    if (c.nviol) {
        char m[96];
        snprintf(m, sizeof m, "%zu invariant violation%s", c.nviol,
                 c.nviol == 1 ? "" : "s");
        rc = emq_db_fail(db, EMQ_ECORRUPT, m);
    } else {
        rc = EMQ_OK;
    }
done:
    if (nviolations) *nviolations = c.nviol;
    for (i = 0; i < c.nkeys; i++) emq_mem_free(c.keys[i].name);
    emq_mem_free(c.keys);
    for (i = 0; i < c.nsumbad; i++) emq_mem_free(c.sumbad[i].name);
    emq_mem_free(c.sumbad);
    emq_mem_free(c.mem);
    emq_mem_free(c.lanes);
    emq_mem_free(c.el);
    emq_buf_free(&c.vals);
    return rc;
}
