/*
 * fuzz_streams.c — the stream type (storage/stream.c) driven by random
 * stream commands through engine/stream/xcmd.c. Each input is a program: every
 * command is decoded from a few bytes (the command, its keys, ids from a
 * small alphabet with the edge cases of Valkey's id grammar, counts,
 * options). Properties, checked after every command:
 *  - a command answered with an error leaves the keyspace as it was (the
 *    logical digest is unchanged);
 *  - every stream is consistent: its entries are in strictly increasing id
 *    order, at or below its last id; its length is the number of entries;
 *    its first id is the lowest entry (0-0 when empty); entries-added is
 *    at least the length; XLEN answers the length;
 *  - every group's pending entries belong to its consumers: the consumers'
 *    PEL sizes add up to the group's, and every owner is a consumer;
 * and once per input: an export imported into a fresh file gives the same
 * digest and the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "store.h"
#include "stream.h"
#include "db.h"
#include "xcmd.h"

typedef struct fz {
    const uint8_t *p;
    size_t n;
} fz;

static unsigned fz_byte(fz *f)
{
    if (!f->n)
        return 0;
    f->n--;
    return *f->p++;
}

static const char *const fz_keys[] = { "emq:{f}:stream:a", "emq:{f}:stream:b",
                                       "emq:{f}:limiter" };
static const char *const fz_groups[] = { "g1", "g2" };
static const char *const fz_cons[] = { "c1", "c2", "c3" };
static const char *const fz_weird[] = {
    "-", "+", "0", "0-0", "*", "1-*", "(3-1", "(0-0", "abc", "07",
    "18446744073709551615-18446744073709551615", "5--03", "$", ">", "", "(",
    "3-18446744073709551615", "18446744073709551616", " 9" };

typedef struct fcmd {
    char buf[40][64];
    const char *argv[40];
    size_t len[40];
    size_t argc;
} fcmd;

static void fz_add(fcmd *c, const char *s)
{
    if (c->argc == 40)
        return;
    snprintf(c->buf[c->argc], sizeof c->buf[c->argc], "%s", s);
    c->argv[c->argc] = c->buf[c->argc];
    c->len[c->argc] = strlen(c->buf[c->argc]);
    c->argc++;
}

static void fz_id(fcmd *c, fz *f)
{
    unsigned b = fz_byte(f);
    char t[64];
    if (b < 200) {
        snprintf(t, sizeof t, "%u-%u", 1 + b % 24, (b / 24) % 3);
        fz_add(c, t);
    } else {
        fz_add(c, fz_weird[b % (sizeof fz_weird / sizeof *fz_weird)]);
    }
}

static void fz_num(fcmd *c, fz *f, unsigned mod)
{
    char t[24];
    unsigned b = fz_byte(f);
    snprintf(t, sizeof t, "%d", b == 255 ? -1 : (int)(b % mod));
    fz_add(c, t);
}

static void fz_gen(fcmd *c, fz *f)
{
    unsigned op = fz_byte(f) % 15, i, n;
    const char *k = fz_keys[fz_byte(f) % 3];
    const char *g = fz_groups[fz_byte(f) % 2];
    const char *cn = fz_cons[fz_byte(f) % 3];
    c->argc = 0;
    switch (op) {
    case 0: case 1: case 2:
        fz_add(c, "XADD");
        fz_add(c, k);
        if (fz_byte(f) % 4 == 0) {
            fz_add(c, fz_byte(f) % 2 ? "MAXLEN" : "MINID");
            if (fz_byte(f) % 2)
                fz_add(c, fz_byte(f) % 2 ? "~" : "=");
            if (c->argv[2][1] == 'A')
                fz_num(c, f, 8);
            else
                fz_id(c, f);
        }
        fz_id(c, f);
        for (i = 0, n = 1 + fz_byte(f) % 2; i < n; i++) {
            fz_add(c, fz_byte(f) % 2 ? "f" : "id");
            fz_add(c, "v");
        }
        break;
    case 3:
        fz_add(c, fz_byte(f) % 2 ? "XRANGE" : "XREVRANGE");
        fz_add(c, k);
        fz_id(c, f);
        fz_id(c, f);
        if (fz_byte(f) % 2)
            fz_add(c, "COUNT"), fz_num(c, f, 4);
        break;
    case 4:
        fz_add(c, "XDEL");
        fz_add(c, k);
        fz_id(c, f);
        fz_id(c, f);
        break;
    case 5:
        fz_add(c, "XTRIM");
        fz_add(c, k);
        fz_add(c, fz_byte(f) % 2 ? "MAXLEN" : "MINID");
        if (fz_byte(f) % 2)
            fz_add(c, fz_byte(f) % 2 ? "~" : "=");
        if (c->argv[2][1] == 'A')
            fz_num(c, f, 8);
        else
            fz_id(c, f);
        break;
    case 6:
        fz_add(c, "XSETID");
        fz_add(c, k);
        fz_id(c, f);
        if (fz_byte(f) % 2)
            fz_add(c, "ENTRIESADDED"), fz_num(c, f, 40);
        if (fz_byte(f) % 2)
            fz_add(c, "MAXDELETEDID"), fz_id(c, f);
        break;
    case 7: {
        static const char *const subs[] = { "CREATE", "SETID", "DESTROY",
                                            "CREATECONSUMER", "DELCONSUMER" };
        const char *s = subs[fz_byte(f) % 5];
        fz_add(c, "XGROUP");
        fz_add(c, s);
        fz_add(c, k);
        fz_add(c, g);
        if (s[0] == 'C' && s[1] == 'R' && s[6] == '\0') {
            fz_id(c, f);
            if (fz_byte(f) % 2)
                fz_add(c, "MKSTREAM");
            if (fz_byte(f) % 3 == 0)
                fz_add(c, "ENTRIESREAD"), fz_num(c, f, 12);
        } else if (s[0] == 'S') {
            fz_id(c, f);
        } else if (s[0] != 'D' || s[1] != 'E' || s[2] != 'S') {
            fz_add(c, cn);
        }
        break;
    }
    case 8: case 9:
        fz_add(c, "XREADGROUP");
        fz_add(c, "GROUP");
        fz_add(c, g);
        fz_add(c, cn);
        if (fz_byte(f) % 2)
            fz_add(c, "COUNT"), fz_num(c, f, 4);
        if (fz_byte(f) % 5 == 0)
            fz_add(c, "NOACK");
        fz_add(c, "STREAMS");
        fz_add(c, k);
        if (fz_byte(f) % 2)
            fz_add(c, ">");
        else
            fz_id(c, f);
        break;
    case 10:
        fz_add(c, "XACK");
        fz_add(c, k);
        fz_add(c, g);
        fz_id(c, f);
        fz_id(c, f);
        break;
    case 11:
        fz_add(c, "XPENDING");
        fz_add(c, k);
        fz_add(c, g);
        if (fz_byte(f) % 2) {
            fz_id(c, f);
            fz_id(c, f);
            fz_num(c, f, 5);
            if (fz_byte(f) % 2)
                fz_add(c, cn);
        }
        break;
    case 12:
        fz_add(c, "XCLAIM");
        fz_add(c, k);
        fz_add(c, g);
        fz_add(c, cn);
        fz_num(c, f, 2);
        fz_id(c, f);
        if (fz_byte(f) % 2)
            fz_add(c, "FORCE");
        if (fz_byte(f) % 2)
            fz_add(c, "JUSTID");
        if (fz_byte(f) % 3 == 0)
            fz_add(c, "RETRYCOUNT"), fz_num(c, f, 5);
        if (fz_byte(f) % 4 == 0)
            fz_add(c, "LASTID"), fz_id(c, f);
        break;
    case 13:
        fz_add(c, "XAUTOCLAIM");
        fz_add(c, k);
        fz_add(c, g);
        fz_add(c, cn);
        fz_num(c, f, 2);
        fz_id(c, f);
        if (fz_byte(f) % 2)
            fz_add(c, "COUNT"), fz_num(c, f, 4);
        if (fz_byte(f) % 3 == 0)
            fz_add(c, "JUSTID");
        break;
    default:
        fz_add(c, "XINFO");
        switch (fz_byte(f) % 3) {
        case 0: fz_add(c, "STREAM"); fz_add(c, k); fz_add(c, "FULL"); break;
        case 1: fz_add(c, "GROUPS"); fz_add(c, k); break;
        default: fz_add(c, "CONSUMERS"); fz_add(c, k); fz_add(c, g); break;
        }
        break;
    }
}

/* ---------------------------------------------------------- properties */

typedef struct walkst {
    emq_xid prev;
    uint64_t n;
    int first;
} walkst;

static int fz_entry(void *ctx, emq_xid id, const emq_bytes *fv, size_t nfv)
{
    walkst *w = ctx;
    FUZZ_CHECK(fv != NULL && nfv >= 2 && nfv % 2 == 0, "entry fields");
    FUZZ_CHECK(w->first || emq_xid_cmp(w->prev, id) < 0, "entry order");
    w->prev = id;
    w->first = 0;
    w->n++;
    return EMQ_OK;
}

typedef struct gst {
    emq_store *st;
    const char *key;
} gst;

static int64_t fz_sum;

static int fz_consumer(void *ctx, const unsigned char *c, size_t clen,
                       int64_t seen, int64_t active, int64_t pending)
{
    (void)ctx, (void)c, (void)clen, (void)seen, (void)active;
    fz_sum += pending;
    return EMQ_OK;
}

static int fz_group(void *ctx, const emq_xgroup_info *g)
{
    gst *s = ctx;
    fz_sum = 0;
    FUZZ_CHECK(emq_xs_consumers(s->st, s->key, strlen(s->key), g->name,
                                g->nlen, fz_consumer, NULL) == EMQ_OK,
               "consumers walk");
    FUZZ_CHECK(fz_sum == g->pending, "PEL owners: %lld of %lld",
               (long long)fz_sum, (long long)g->pending);
    return EMQ_OK;
}

static void fz_check(emq_db *db)
{
    emq_store *st = emq_db_store(db);
    emq_xid lo = { 0, 0 }, hi = { UINT64_MAX, UINT64_MAX };
    FUZZ_CHECK(emq_store_begin(st, 0, emq_now(db)) == EMQ_OK, "begin");
    for (int k = 0; k < 2; k++) {
        const char *key = fz_keys[k];
        emq_xmeta m;
        walkst w = { { 0, 0 }, 0, 1 };
        gst g = { st, key };
        int rc = emq_xs_meta(st, key, strlen(key), &m);
        if (rc == EMQ_NOTFOUND)
            continue;
        FUZZ_CHECK(rc == EMQ_OK, "meta %d", rc);
        FUZZ_CHECK(emq_xs_range(st, key, strlen(key), lo, hi, 0, 0, fz_entry,
                                &w) == EMQ_OK, "range");
        FUZZ_CHECK(w.n == m.length, "length %llu, %llu entries",
                   (unsigned long long)m.length, (unsigned long long)w.n);
        FUZZ_CHECK(m.entries_added >= m.length, "entries-added");
        FUZZ_CHECK(w.n == 0 || emq_xid_cmp(w.prev, m.last) <= 0, "last id");
        if (m.length == 0)
            FUZZ_CHECK(emq_xid_zero(m.first), "first of an empty stream");
        FUZZ_CHECK(emq_xs_groups(st, key, strlen(key), fz_group, &g) ==
                   EMQ_OK, "groups");
    }
    emq_store_rollback(st);
}

typedef struct fzmem {
    char *p;
    size_t n;
} fzmem;

static int fz_write(void *ctx, const void *p, size_t n)
{
    fzmem *m = ctx;
    char *q = realloc(m->p, m->n + n + 1);
    if (!q)
        return 1;
    memcpy(q + m->n, p, n);
    m->p = q;
    m->n += n;
    return 0;
}

static int64_t fz_clock(void *ctx)
{
    return *(int64_t *)ctx;
}

FUZZ_ENTRY(streams)
{
    fz f = { data, size };
    emq_db *db = NULL, *db2 = NULL;
    emq_options o;
    static int64_t now;
    emq_transfer_summary before, after, s2;
    emq_reply r = {0};
    fzmem a = { NULL, 0 }, b = { NULL, 0 };
    int steps = 0;
    now = INT64_C(1767225600000);
    emq_options_init(&o);
    o.clock = fz_clock;
    o.clock_ctx = &now;
    FUZZ_CHECK(emq_open(":memory:", &o, &db) == EMQ_OK, "open");
    {
        /* A key of another type (WRONGTYPE), holding a value the import's
         * judgement accepts: the limiter is a counter. */
        emq_store *st = emq_db_store(db);
        FUZZ_CHECK(emq_store_begin(st, 1, now) == EMQ_OK &&
                   emq_str_set(st, fz_keys[2], strlen(fz_keys[2]), "1", 1, -1,
                               0, NULL) == EMQ_OK &&
                   emq_store_commit(st) == EMQ_OK, "setup");
    }
    while (f.n && steps++ < 200) {
        fcmd c;
        fz_gen(&c, &f);
        now += fz_byte(&f) % 3 == 0 ? 1000 : 0;
        FUZZ_CHECK(emq_digest(db, NULL, &before) == EMQ_OK, "digest");
        int rc = emq_xcmd_run(db, c.argc, c.argv, c.len, &r);
        FUZZ_CHECK(rc >= 0 || r.type == EMQ_REPLY_ERROR,
                   "%s failed outside a reply: %s", c.argv[0], emq_errmsg(db));
        if (rc < 0) {
            FUZZ_CHECK(emq_digest(db, NULL, &after) == EMQ_OK, "digest");
            FUZZ_CHECK(before.digest == after.digest,
                       "%s answered %s and changed the keyspace", c.argv[0],
                       r.str);
        }
        fz_check(db);
        emq_reply_clear(&r);
    }
    /* The image survives an export and an import. */
    FUZZ_CHECK(emq_export(db, NULL, fz_write, &a, &before) == EMQ_OK,
               "export");
    FUZZ_CHECK(emq_open(":memory:", &o, &db2) == EMQ_OK, "open 2");
    FUZZ_CHECK(emq_import(db2, a.p, a.n, &s2) == EMQ_OK, "import: %s",
               emq_errmsg(db2));
    FUZZ_CHECK(emq_export(db2, NULL, fz_write, &b, &after) == EMQ_OK,
               "export 2");
    FUZZ_CHECK(before.digest == after.digest && a.n == b.n &&
               memcmp(a.p, b.p, a.n) == 0, "round trip");
    free(a.p);
    free(b.p);
    emq_close(db2);
    emq_close(db);
    return 0;
}
