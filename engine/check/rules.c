/*
 * rules.c — the invariants of an EchoMQ keyspace (rules.h): one rule set,
 * judged by emq_check over the whole file and by emq_import over the queues
 * an import wrote, so that an import refuses exactly what the checker would
 * report.
 *
 * Owns: the rules on every key of a queue (the grammar's type, expiries,
 * the members and scores of the job sets and lanes, decimal counters, the
 * ring, wake and paused sets) and across the keys of a queue (every job
 * row's `state` against the sets that hold its id), the version fence, and
 * the reserve.
 *
 * Rules: judging never writes. A finding is a VIOLATION only when no
 * sequence of PROTOCOL.md transitions can produce it from an empty file; the
 * states the protocol itself produces but a disciplined workload never does
 * (an id in two sets, a set entry without a row, a partial row) are NOTES,
 * each naming the transition that leaves it (see the table before
 * check_row). A new rule goes here, never into one of the two callers.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db.h"
#include "keys.h"
#include "link.h"
#include "brandedid.h"
#include "rules.h"
#include "types.h"

/* Membership bits of an id within one queue. */
enum {
    M_PENDING = 1,
    M_ACTIVE = 2,
    M_SCHEDULE = 4,
    M_DEAD = 8,
    M_LANE = 16,
    M_ROW = 32 /* a row J(id) exists */
};

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

struct emq_judge {
    emq_store *st;
    emq_rule_fn fn;
    void *ctx;
    int fence;              /* {emq}:version was met                   */
    ment *mem;
    size_t nmem, capmem;
    lent *lanes;
    size_t nlanes, caplanes;
    emq_buf vals;           /* scratch: element bytes, concatenated    */
    elem *el;
    size_t nel, capel;
    const emq_typedef *loading; /* the row of the key being loaded */
    int oom;
};
typedef struct emq_judge checker;

/* ------------------------------------------------------------- reporting */

/* Printable rendering of bytes: ASCII verbatim, other bytes \xNN. */
void emq_show_bytes(char *out, size_t cap, const void *p, size_t n)
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

void emq_rule_vreport(emq_rule_fn fn, void *ctx, int sev, const char *code,
                      const void *key, size_t klen, const char *fmt,
                      va_list ap)
{
    char msg[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fn(ctx, sev, code, key ? key : "", key ? klen : 0, msg);
}

static void report(checker *c, int sev, const char *code, const void *key,
                   size_t klen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emq_rule_vreport(c->fn, c->ctx, sev, code, key, klen, fmt, ap);
    va_end(ap);
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

/* A hash field lands as a pair: field (score = its expiry), then value. */
static int elem_cb(void *ctx, const emq_elem *e)
{
    checker *c = ctx;
    const emq_typedef *t = c->loading;
    int rc = el_add(c, e->a.p, e->a.n, t->scored ? e->score
                                                 : (double)e->expire);
    if (rc == 0 && t->arity == 2 && !t->scored)
        rc = el_add(c, e->b.p, e->b.n, 0);
    return rc;
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

/* A counter the engine increments by 1 (attempts, count): shortest
 * decimal, >= 0, and below INT64_MAX (HINCRBY would overflow: the claim or
 * complete rolls back, and the next one meets the same value for good). */
static int is_count(const void *p, size_t n)
{
    int64_t v;
    return emq_parse_i64(p, n, &v) == 0 && v >= 0 && v < INT64_MAX;
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

/* A store read failed: corruption is a finding, anything else aborts. */
static int read_failed(checker *c, int rc, const emq_rkey *k)
{
    if (rc == EMQ_ENOMEM || c->oom) return EMQ_ENOMEM;
    if (rc == EMQ_ECORRUPT || rc == EMQ_EWRONGTYPE || rc == EMQ_EPROTO ||
        rc == EMQ_EINTERNAL) {
        report(c, VIOL, "read", k->name, k->len, "the key cannot be read: %s",
               emq_store_errmsg(c->st));
        return 0;
    }
    return rc;
}

/* Load the elements of key k (any type) into c->el. */
static int load(checker *c, const emq_rkey *k)
{
    int rc = EMQ_OK;
    el_reset(c);
    /* A stream's one opaque element (its whole export) holds nothing a
     * rule reads: its entries, groups and PEL are kept consistent by the
     * store's stream type (storage/stream.c) and checked there. */
    if ((c->loading = emq_typedef_of(k->type)) != NULL &&
        c->loading->order != EMQ_ORDER_OPAQUE)
        rc = c->loading->scan(c->st, k->name, k->len, elem_cb, c);
    if (c->oom) return EMQ_ENOMEM;
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

/* {emq}:version: a string holding exactly an identity of the wire table,
 * with no TTL. */
static int check_version(checker *c, const emq_rkey *k)
{
    int64_t at;
    int rc;
    if (k->type != EMQ_T_STRING) return 0; /* reported as "type" */
    if ((rc = load(c, k)) < 0) return read_failed(c, rc, k);
    if (c->nel != 1 || !emq_wire_known(el_p(c, 0), c->el[0].len)) {
        char v[300], known[100];
        emq_show_bytes(v, sizeof v, c->nel ? el_p(c, 0) : (const void *)"",
             c->nel ? c->el[0].len : 0);
        emq_wire_list(known, sizeof known);
        report(c, VIOL, "fence", k->name, k->len,
               "the version fence holds \"%s\", not \"%s\"", v, known);
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
static int check_shape(checker *c, const emq_rkey *k, const emq_keyinfo *ki)
{
    if (ki->type != 0 && ki->type != k->type)
        report(c, VIOL, "type", k->name, k->len,
               "the key holds a %s where the grammar says %s",
               emq_type_name(k->type), emq_type_name(ki->type));
    return 0;
}

/* --------------------------------------------------------- queue level */

/* A job set or lane: members are JOB ids; scores by set. */
static int check_jobset(checker *c, const emq_rkey *k, unsigned bit,
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
            emq_show_bytes(mv, sizeof mv, m, ml);
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
static int check_counters(checker *c, const emq_rkey *k, const char *field,
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
        emq_show_bytes(fv, sizeof fv, f, fl);
        if (ids && !is_branded(f, fl))
            report(c, VIOL, "member", k->name, k->len,
                   "field \"%s\" is not a branded group id", fv);
        if (field ? !is_count(v, vl) : !is_decimal(v, vl)) {
            emq_show_bytes(vv, sizeof vv, v, vl);
            report(c, VIOL, "counter", k->name, k->len,
                   "field \"%s\" holds \"%s\", not a decimal integer%s",
                   fv, vv, field ? " in [0, 2^63-1)" : "");
        }
    }
    return 0;
}

/* A string counter (limiter, lock key, dependencies). */
static int check_strcount(checker *c, const emq_rkey *k)
{
    char vv[100];
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    if (c->nel == 1 && !is_decimal(el_p(c, 0), c->el[0].len)) {
        emq_show_bytes(vv, sizeof vv, el_p(c, 0), c->el[0].len);
        report(c, VIOL, "counter", k->name, k->len,
               "holds \"%s\", not a decimal integer", vv);
    }
    return 0;
}

static int check_ring(checker *c, const emq_rkey *k)
{
    size_t i, j;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    for (i = 0; i < c->nel; i++) {
        char g[100];
        emq_show_bytes(g, sizeof g, el_p(c, i), c->el[i].len);
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

static int check_wake(checker *c, const emq_rkey *k)
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

static int check_paused(checker *c, const emq_rkey *k)
{
    size_t i;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    for (i = 0; i < c->nel; i++)
        if (!is_branded(el_p(c, i), c->el[i].len)) {
            char g[100];
            emq_show_bytes(g, sizeof g, el_p(c, i), c->el[i].len);
            report(c, VIOL, "member", k->name, k->len,
                   "member \"%s\" is not a branded group id", g);
        }
    return 0;
}

/* B.flow:outbox: every entry must be one DELIVER takes (T4.10). A bad
 * entry at the head blocks the protocol's pass over every entry behind it
 * (the host sweep sets it aside, but no transition writes one). */
static int check_outbox(checker *c, const emq_rkey *k)
{
    size_t i;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    for (i = 0; i < c->nel; i++) {
        const char *why;
        if (!emq_outbox_deliverable(el_p(c, i), c->el[i].len, &why)) {
            char v[100];
            emq_show_bytes(v, sizeof v, el_p(c, i), c->el[i].len);
            report(c, VIOL, "outbox", k->name, k->len,
                   "entry %zu \"%s\": %s", i, v, why);
        }
    }
    return 0;
}

/* B.repeat:<name>: a present every_ms is a decimal integer > 0 (T5.8's
 * gate; repeat_advance refuses any other, so the registration would stay
 * due for ever and, 100 of them, starve every registration behind). */
static int check_repeat(checker *c, const emq_rkey *k)
{
    size_t i;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    for (i = 0; i + 1 < c->nel; i += 2) {
        int64_t v;
        if (!eq(el_p(c, i), c->el[i].len, "every_ms")) continue;
        if (emq_parse_i64(el_p(c, i + 1), c->el[i + 1].len, &v) != 0 ||
            v <= 0) {
            char vv[100];
            emq_show_bytes(vv, sizeof vv, el_p(c, i + 1), c->el[i + 1].len);
            report(c, VIOL, "repeat", k->name, k->len,
                   "every_ms is \"%s\", not a decimal integer > 0 (the "
                   "registration would stay due for ever)", vv);
        }
    }
    return 0;
}

/*
 * Expiries. A key expiry is set only on J(id).lock (T5.12), B.de:<did>
 * (producer-side) and B.limiter (operator-side); a field expiry only on a
 * row's `lock` field (T5.12, PROTOCOL.md 8.3.6). Anything else would make
 * a queue's sets, rows or counters vanish at an instant no transition
 * chose. Rows' fields are judged in check_row.
 */
static int may_expire(const unsigned char *s, size_t n)
{
    return eq(s, n, "limiter") || (n > 3 && memcmp(s, "de:", 3) == 0) ||
           (n == 4 + EMQ_ID_LEN + 5 && memcmp(s, "job:", 4) == 0 &&
            memcmp(s + 4 + EMQ_ID_LEN, ":lock", 5) == 0);
}

static int check_expiry(checker *c, const emq_rkey *k, size_t plen,
                        int is_row)
{
    int64_t at;
    size_t i;
    int rc = emq_key_expiry(c->st, k->name, k->len, &at);
    if (rc < 0) return read_failed(c, rc, k);
    if (rc == EMQ_OK && at >= 0 && !may_expire(k->name + plen, k->len - plen))
        report(c, VIOL, "expiry", k->name, k->len,
               "the key expires at %lld (only lock, de: and limiter keys "
               "carry an expiry)", (long long)at);
    if (k->type != EMQ_T_HASH || is_row) return 0;
    if ((rc = load(c, k)) < 0) return read_failed(c, rc, k);
    for (i = 0; i + 1 < c->nel; i += 2)
        if (c->el[i].score >= 0) {
            char fv[100];
            emq_show_bytes(fv, sizeof fv, el_p(c, i), c->el[i].len);
            report(c, VIOL, "expiry", k->name, k->len,
                   "field \"%s\" carries an expiry (only a job row's lock "
                   "field does)", fv);
        }
    return 0;
}

/* Pass 1 over a non-row key of a queue: sets, lanes and counters. */
static int check_qkey(checker *c, const emq_rkey *k, size_t plen)
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
    if (eq(s, n, "flow:outbox") && k->type == EMQ_T_LIST)
        return check_outbox(c, k);
    if (n > 7 && memcmp(s, "repeat:", 7) == 0 && k->type == EMQ_T_HASH)
        return check_repeat(c, k);
    if (n > 4 + EMQ_ID_LEN && memcmp(s, "job:", 4) == 0 &&
        (eq(s + 4 + EMQ_ID_LEN, n - 4 - EMQ_ID_LEN, ":lock") ||
         eq(s + 4 + EMQ_ID_LEN, n - 4 - EMQ_ID_LEN, ":dependencies")))
        return check_strcount(c, k);
    return 0;
}

/*
 * Pass 2: a job row J(id). Violations — states no transition produces:
 *   - a row without `state` holding a field no state-keeping write puts on
 *     a row that lacks one (see "partial" below);
 *   - a `state` outside pending / active / scheduled / dead /
 *     awaiting_children;
 *   - a row whose `state` names a set that does not hold the id: pending
 *     (B.pending, or the lane of the row's `group`), active (B.active),
 *     scheduled (B.schedule), dead (B.dead). Every transition that removes
 *     an id from one of these sets also rewrites `state` or deletes the row,
 *     and every transition that writes `state` adds the id to its set;
 *   - `attempts`, `stalled` or `lock` not a decimal integer (`attempts`
 *     also below 2^63-1);
 *   - a field other than `lock` carrying an expiry.
 * Notes — tolerated, each produced by the protocol as written:
 *   - "partial": a row without `attempts` or `payload` (D-12: promote and
 *     reap write `state` on a missing row; claim then adds `attempts`), or a
 *     row without `state` whose every field is a stateless write's: `lock`
 *     (T5.12 track after another holder completed the job; the field's TTL
 *     removes it), `parent`, `parent_queue`, `parent_policy` (T4.1's policy
 *     write, T4.5's link write), `payload`, `progress` (T2.8, T2.9 write on
 *     any row that exists, one of these included);
 *   - "multi" and "ghost": see check_members.
 */
static int check_row(checker *c, const emq_rkey *k, const char *id)
{
    const unsigned char *state = NULL, *group = NULL;
    size_t slen = 0, glen = 0, i, nf;
    int has_att = 0, has_pay = 0, stateless = 1;
    ment *me;
    unsigned bits;
    int rc = load(c, k);
    if (rc < 0) return read_failed(c, rc, k);
    nf = c->nel / 2;
    for (i = 0; i + 1 < c->nel; i += 2) {
        const unsigned char *f = el_p(c, i), *v = el_p(c, i + 1);
        size_t fl = c->el[i].len, vl = c->el[i + 1].len;
        if (!eq(f, fl, "parent") && !eq(f, fl, "parent_queue") &&
            !eq(f, fl, "parent_policy") && !eq(f, fl, "lock") &&
            !eq(f, fl, "payload") && !eq(f, fl, "progress"))
            stateless = 0;
        if (!eq(f, fl, "lock")) {
            if (c->el[i].score >= 0) {
                char fv[100];
                emq_show_bytes(fv, sizeof fv, f, fl);
                report(c, VIOL, "expiry", k->name, k->len,
                       "field \"%s\" carries an expiry (only the lock field "
                       "does)", fv);
            }
        }
        if (eq(f, fl, "state")) { state = v; slen = vl; }
        else if (eq(f, fl, "group")) { group = v; glen = vl; }
        else if (eq(f, fl, "payload")) has_pay = 1;
        else if (eq(f, fl, "attempts")) {
            has_att = 1;
            if (!is_count(v, vl))
                report(c, VIOL, "counter", k->name, k->len,
                       "attempts is not a decimal integer in "
                       "[0, 2^63-1)");
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
        if (nf > 0 && stateless)
            report(c, NOTE, "partial", k->name, k->len,
                   "a row without state holding only fields written on any "
                   "row (T5.12's lock on a job another holder completed, "
                   "T4.1/T4.5's flow link on an id with no row, T2.8/T2.9 "
                   "on such a row)");
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
        emq_show_bytes(sv, sizeof sv, state, slen);
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
static int check_queue(checker *c, const emq_rkey *keys, size_t i0,
                       size_t i1, size_t plen)
{
    emq_keyinfo ki;
    size_t i;
    int rc;
    c->nmem = 0;
    c->nlanes = 0;
    for (i = i0; i < i1; i++) {
        const emq_rkey *k = &keys[i];
        if (!emq_key_parse(k->name, k->len, &ki)) {
            report(c, VIOL, "key", k->name, k->len,
                   "not a key of the EchoMQ grammar (PROTOCOL.md 2.4)");
            continue;
        }
        if ((rc = check_shape(c, k, &ki)) < 0) return rc;
        if ((rc = check_expiry(c, k, plen, ki.is_job_row)) < 0) return rc;
        if (ki.type != 0 && ki.type != k->type) continue;
        if (!ki.is_job_row && (rc = check_qkey(c, k, plen)) < 0) return rc;
    }
    mem_merge(c);
    for (i = i0; i < i1; i++) {
        const emq_rkey *k = &keys[i];
        if (!emq_key_parse(k->name, k->len, &ki) || !ki.is_job_row ||
            k->type != EMQ_T_HASH)
            continue;
        if ((rc = check_row(c, k, ki.id)) < 0) return rc;
    }
    check_members(c, (const char *)keys[i0].name + 5, plen - 7);
    return 0;
}

int emq_judge_keys(emq_judge *c, const emq_rkey *keys, size_t n)
{
    emq_keyinfo ki;
    size_t i = 0, j;
    int rc;
    while (i < n) {
        const emq_rkey *k = &keys[i];
        if (!emq_key_parse(k->name, k->len, &ki)) {
            report(c, VIOL, "key", k->name, k->len,
                   "not a key of the EchoMQ grammar (PROTOCOL.md 2.1)");
            i++;
            continue;
        }
        if (ki.family == EMQ_K_QUEUE) {
            size_t plen = 5 + ki.qlen + 2;
            for (j = i + 1; j < n; j++)
                if (keys[j].len < plen ||
                    memcmp(keys[j].name, k->name, plen) != 0)
                    break;
            if ((rc = check_queue(c, keys, i, j, plen)) < 0) return rc;
            i = j;
            continue;
        }
        if ((rc = check_shape(c, k, &ki)) < 0) return rc;
        if (ki.family == EMQ_K_VERSION) {
            c->fence = 1;
            if ((rc = check_version(c, k)) < 0) return rc;
        } else {
            report(c, NOTE, "reserve", k->name, k->len,
                   "a reserved unit no transition writes (PROTOCOL.md 2.5)");
        }
        i++;
    }
    return 0;
}

void emq_judge_file_done(emq_judge *c)
{
    if (!c->fence)
        report(c, VIOL, "fence", EMQ_VERSION_KEY, sizeof EMQ_VERSION_KEY - 1,
               "the version fence is absent");
}

int emq_judge_new(emq_store *st, emq_rule_fn fn, void *ctx, emq_judge **out)
{
    checker *c = emq_mem_calloc(1, sizeof *c);
    *out = c;
    if (!c) return EMQ_ENOMEM;
    c->st = st;
    c->fn = fn;
    c->ctx = ctx;
    return EMQ_OK;
}

void emq_judge_free(emq_judge *c)
{
    if (!c) return;
    emq_mem_free(c->mem);
    emq_mem_free(c->lanes);
    emq_mem_free(c->el);
    emq_buf_free(&c->vals);
    emq_mem_free(c);
}

/* ------------------------------------------------------------ key lists */

static int rkey_cb(void *ctx, const unsigned char *key, size_t klen, int type)
{
    emq_rkeys *l = ctx;
    emq_rkey *k;
    if (grow((void **)&l->k, &l->cap, l->n + 1, sizeof *l->k))
        return EMQ_ENOMEM;
    k = &l->k[l->n];
    k->name = emq_mem_malloc(klen ? klen : 1);
    if (k->name == NULL) return EMQ_ENOMEM;
    if (klen) memcpy(k->name, key, klen);
    k->len = klen;
    k->type = type;
    l->n++;
    return 0;
}

int emq_rkeys_scan(emq_store *st, const void *prefix, size_t plen,
                   emq_rkeys *l)
{
    int rc = emq_key_scan(st, prefix, plen, rkey_cb, l);
    return rc > 0 ? EMQ_ENOMEM : rc;
}

void emq_rkeys_free(emq_rkeys *l)
{
    for (size_t i = 0; i < l->n; i++) emq_mem_free(l->k[i].name);
    emq_mem_free(l->k);
    memset(l, 0, sizeof *l);
}
