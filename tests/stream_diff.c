/*
 * stream_diff.c — the stream type against a real server: the same random
 * command sequences run on emqlite's stream commands (engine/stream/xcmd.c over
 * storage/stream.c) and on a private redis-server, every reply compared,
 * and the final state of every stream compared through XINFO STREAM FULL,
 * XINFO GROUPS and XINFO CONSUMERS.
 *
 *   tests/stream_diff PORT [SEQUENCES [COMMANDS [SEED]]]
 *
 * Driven by tests/stream_diff.sh under tests/redis_harness.sh. Prints one
 * summary line (sequences, commands, per-command counts, differences) and
 * exits 1 on any difference, showing the first few.
 *
 * What may legitimately differ is normalised, and only that (each is a
 * difference between the server installed here, Redis 7.0, and Valkey 8,
 * whose semantics emqlite implements, or a property of the clocks):
 *  - times: two clocks read a few ms apart: every epoch-ms integer
 *    (delivery and seen times), XPENDING's idle time and XINFO CONSUMERS'
 *    idle compare within TOL ms; the sequences make every min-idle
 *    decision robust (idle times are either fresh or older than 10^7 ms,
 *    thresholds are 0 or 5 * 10^6 ms);
 *  - Valkey 8's `active-time` (XINFO STREAM FULL) and `inactive` (XINFO
 *    CONSUMERS), which Redis 7.0 does not report, are dropped from
 *    emqlite's reply; `radix-tree-keys` and `radix-tree-nodes` describe a
 *    server's memory layout and are dropped from both;
 *  - XREADGROUP, XCLAIM and XAUTOCLAIM create their consumer up front in
 *    Valkey 8 (a read or claim of nothing still creates it), in 7.0 only
 *    once they serve or claim something: before each such command that
 *    emqlite answered without an error, the server is sent XGROUP
 *    CREATECONSUMER for it (its reply ignored);
 *  - approximate trims (`~`) remove whole internal nodes on the server and
 *    whole leading blocks of 100 in emqlite (PROTOCOL.md D-16): their
 *    counts are not compared; emqlite's must be a multiple of 100 no
 *    larger than the exact count, and both sides are then trimmed exactly
 *    to the higher of their first ids, so the sequence goes on from one
 *    state.
 *  - XSETID to an id below the max-deleted id is refused by Valkey 8 (Redis
 *    7.2, redis#11444) and accepted by 7.0: when emqlite refuses one, the
 *    server is not sent it (counted in the summary).
 * `*` ids are used only on the stream whose top is in the far future, where
 * both sides generate the same id whatever the clock.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <hiredis/hiredis.h>

#include "emqlite.h"
#include "emqlite_protocol.h"
#include "store.h"
#include "db.h"
#include "xcmd.h"

#define TOL 2000          /* ms between the two clocks' readings          */
#define OLD 10000000      /* an old delivery: 10^7 ms ago                 */
#define IDLE_T "5000000"  /* the min-idle threshold between fresh and old */
#define FAR "9000000000000"

static redisContext *srv;
static emq_db *db;
static uint64_t rng;
static long ndiff, shown, ncmds, nresync, ngap;
static long kinds[32];
static const char *const kind_names[] = {
    "XADD", "XRANGE", "XREVRANGE", "XLEN", "XDEL", "XTRIM", "XSETID",
    "XGROUP", "XREADGROUP", "XACK", "XPENDING", "XCLAIM", "XAUTOCLAIM",
    "XINFO", NULL };
static int64_t past; /* an absolute delivery time long ago (TIME) */
static long trace = -1; /* STREAM_DIFF_TRACE: print this sequence's steps */
static long maxshow = 5; /* STREAM_DIFF_SHOW: differences shown */

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static unsigned below(unsigned n)
{
    return (unsigned)(rnd() % n);
}

static int chance(unsigned pct)
{
    return below(100) < pct;
}

/* --------------------------------------------------------------- commands */

#define MAXARG 400
typedef struct cmd {
    size_t argc;
    char *argv[MAXARG];
    size_t len[MAXARG];
} cmd;

static void add(cmd *c, const void *p, size_t n)
{
    if (c->argc == MAXARG)
        return;
    char *s = malloc(n + 1);
    if (!s) {
        fprintf(stderr, "stream_diff: out of memory\n");
        exit(99);
    }
    memcpy(s, p, n);
    s[n] = '\0';
    c->argv[c->argc] = s;
    c->len[c->argc++] = n;
}

static void adds(cmd *c, const char *s)
{
    add(c, s, strlen(s));
}

static void addf(cmd *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void addf(cmd *c, const char *fmt, ...)
{
    char b[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    add(c, b, (size_t)n);
}

static void cmd_free(cmd *c)
{
    for (size_t i = 0; i < c->argc; i++)
        free(c->argv[i]);
    c->argc = 0;
}

/* ------------------------------------------------------------ generation */

static const char *const keys[] = { "s1", "s2", "s3", "w" };
static const char *const groups[] = { "g1", "g2", "g3" };
static const char *const consumers[] = { "c1", "c2", "c3" };
static uint64_t last_ms[3]; /* the generator's idea of each stream's top */

static const char *key(void)
{
    unsigned k = below(100);
    return keys[k < 55 ? 0 : k < 85 ? 1 : k < 95 ? 2 : 3];
}

static int kidx(const char *k)
{
    return k[0] == 's' ? k[1] - '1' : -1;
}

static const char *const weird[] = {
    "0-0", "-", "+", "abc", "5-", "-5", "05-1", " 7", "+3-1", "7--03",
    "18446744073709551615-18446744073709551615", "18446744073709551616",
    "3-18446744073709551615", "1-*", "0", "(", "((3", "4-1x", "", "2-2-2" };

/* A plausible id for stream k (bounds, group starts, acks, claims). */
static void any_id(cmd *c, int k)
{
    uint64_t base = k == 1 ? UINT64_C(9000000000000) : 0;
    unsigned p = below(100);
    if (p < 70)
        addf(c, "%llu-%u", (unsigned long long)(base + 1 + below(40)),
             below(4));
    else if (p < 80)
        addf(c, "%llu", (unsigned long long)(base + 1 + below(40)));
    else if (p < 88)
        adds(c, below(2) ? "0" : "0-0");
    else
        adds(c, weird[below(sizeof weird / sizeof *weird)]);
}

static void bound(cmd *c, int k)
{
    unsigned p = below(100);
    if (p < 20)
        adds(c, "-");
    else if (p < 40)
        adds(c, "+");
    else if (p < 55) {
        cmd t = { 0 };
        any_id(&t, k);
        char b[200];
        snprintf(b, sizeof b, "(%s", t.argv[0]);
        adds(c, b);
        cmd_free(&t);
    } else
        any_id(c, k);
}

static void fields(cmd *c)
{
    static const char *const f[] = { "a", "b", "id", "c" };
    unsigned n = 1 + below(3);
    for (unsigned i = 0; i < n; i++) {
        adds(c, f[below(4)]);
        if (chance(10))
            add(c, "v\0\xff", 3);
        else
            addf(c, "v%u", below(100));
    }
    if (chance(2))
        adds(c, "odd");
}

static void trim_spec(cmd *c, int k)
{
    if (chance(50)) {
        adds(c, "MAXLEN");
        if (chance(30))
            adds(c, chance(50) ? "~" : "=");
        addf(c, "%u", below(chance(20) ? 200 : 8));
    } else {
        adds(c, "MINID");
        if (chance(30))
            adds(c, chance(50) ? "~" : "=");
        any_id(c, k);
    }
    if (chance(10))
        adds(c, "LIMIT"), addf(c, "%u", below(300));
}

static void gen_xadd(cmd *c, const char *k)
{
    int ki = kidx(k);
    adds(c, "XADD");
    adds(c, k);
    if (chance(10))
        adds(c, "NOMKSTREAM");
    if (chance(12))
        trim_spec(c, ki < 0 ? 0 : ki);
    unsigned p = below(100);
    if (ki == 1 && p < 25) {
        adds(c, "*");
    } else if (ki >= 0 && p < 80) {
        uint64_t ms = last_ms[ki] + below(3);
        if (ki == 1 && ms < UINT64_C(9000000000000))
            ms = UINT64_C(9000000000000);
        if (chance(20))
            addf(c, "%llu-*", (unsigned long long)ms);
        else
            addf(c, "%llu-%u", (unsigned long long)ms, below(3));
    } else {
        any_id(c, ki < 0 ? 0 : ki);
    }
    fields(c);
}

static void gen(cmd *c)
{
    const char *k = key();
    int ki = kidx(k) < 0 ? 0 : kidx(k);
    unsigned p = below(100);
    if (p < 30) {
        gen_xadd(c, k);
    } else if (p < 38) {
        int rev = chance(50);
        adds(c, rev ? "XREVRANGE" : "XRANGE");
        adds(c, k);
        bound(c, ki);
        bound(c, ki);
        if (chance(40))
            adds(c, "COUNT"), addf(c, "%d", (int)below(6) - 1);
    } else if (p < 40) {
        adds(c, "XLEN");
        adds(c, k);
    } else if (p < 44) {
        adds(c, "XDEL");
        adds(c, k);
        for (unsigned i = 0, n = 1 + below(3); i < n; i++)
            any_id(c, ki);
    } else if (p < 48) {
        adds(c, "XTRIM");
        adds(c, k);
        trim_spec(c, ki);
    } else if (p < 49) {
        adds(c, "XSETID");
        adds(c, k);
        addf(c, "%llu-%u",
             (unsigned long long)(last_ms[ki] + below(3)), below(3));
        if (chance(50))
            adds(c, "ENTRIESADDED"), addf(c, "%u", 100 + below(100));
        if (chance(30))
            adds(c, "MAXDELETEDID"), any_id(c, ki);
    } else if (p < 60) {
        static const char *const subs[] = { "CREATE", "CREATE", "CREATE",
            "SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER" };
        const char *sub = subs[below(7)];
        adds(c, "XGROUP");
        adds(c, sub);
        adds(c, k);
        adds(c, groups[below(3)]);
        if (!strcmp(sub, "CREATE") || !strcmp(sub, "SETID")) {
            if (chance(40))
                adds(c, "$");
            else
                any_id(c, ki);
            if (!strcmp(sub, "CREATE") && chance(40))
                adds(c, "MKSTREAM");
            if (chance(25))
                adds(c, "ENTRIESREAD"), addf(c, "%d", (int)below(12) - 1);
        } else if (strcmp(sub, "DESTROY") != 0) {
            adds(c, consumers[below(3)]);
        }
    } else if (p < 72) {
        adds(c, "XREADGROUP");
        adds(c, "GROUP");
        adds(c, groups[below(3)]);
        adds(c, consumers[below(3)]);
        if (chance(50))
            adds(c, "COUNT"), addf(c, "%u", below(5));
        if (chance(10))
            adds(c, "NOACK");
        if (chance(5))
            adds(c, "BLOCK"), adds(c, "1");
        adds(c, "STREAMS");
        int two = chance(15);
        adds(c, k);
        if (two)
            adds(c, "s2");
        for (int i = 0; i < 1 + two; i++) {
            unsigned q = below(100);
            if (q < 60)
                adds(c, ">");
            else if (q < 80)
                adds(c, "0");
            else
                any_id(c, i ? 1 : ki);
        }
    } else if (p < 78) {
        adds(c, "XACK");
        adds(c, k);
        adds(c, groups[below(3)]);
        for (unsigned i = 0, n = 1 + below(3); i < n; i++)
            any_id(c, ki);
    } else if (p < 84) {
        adds(c, "XPENDING");
        adds(c, k);
        adds(c, groups[below(3)]);
        if (chance(60)) {
            if (chance(30))
                adds(c, "IDLE"), adds(c, chance(50) ? "0" : IDLE_T);
            bound(c, ki);
            bound(c, ki);
            addf(c, "%d", (int)below(6) - 1);
            if (chance(30))
                adds(c, consumers[below(3)]);
        }
    } else if (p < 89) {
        adds(c, "XCLAIM");
        adds(c, k);
        adds(c, groups[below(3)]);
        adds(c, consumers[below(3)]);
        adds(c, chance(50) ? "0" : IDLE_T);
        for (unsigned i = 0, n = 1 + below(3); i < n; i++)
            addf(c, "%llu-%u", (unsigned long long)(
                     (ki == 1 ? UINT64_C(9000000000000) : 0) + 1 + below(40)),
                 below(4));
        if (chance(25))
            adds(c, "IDLE"), addf(c, "%d", OLD);
        else if (chance(20))
            adds(c, "TIME"), addf(c, "%lld", (long long)past);
        if (chance(20))
            adds(c, "RETRYCOUNT"), addf(c, "%u", below(9));
        if (chance(30))
            adds(c, "FORCE");
        if (chance(30))
            adds(c, "JUSTID");
        if (chance(10))
            adds(c, "LASTID"), any_id(c, ki);
    } else if (p < 94) {
        adds(c, "XAUTOCLAIM");
        adds(c, k);
        adds(c, groups[below(3)]);
        adds(c, consumers[below(3)]);
        adds(c, chance(60) ? "0" : IDLE_T);
        if (chance(70))
            adds(c, "0");
        else
            bound(c, ki);
        if (chance(60))
            adds(c, "COUNT"), addf(c, "%u", below(5));
        if (chance(20))
            adds(c, "JUSTID");
    } else {
        unsigned q = below(4);
        adds(c, "XINFO");
        if (q == 0) {
            adds(c, "STREAM");
            adds(c, k);
        } else if (q == 1) {
            adds(c, "STREAM");
            adds(c, k);
            adds(c, "FULL");
            if (chance(50))
                adds(c, "COUNT"), addf(c, "%u", below(4));
        } else if (q == 2) {
            adds(c, "GROUPS");
            adds(c, k);
        } else {
            adds(c, "CONSUMERS");
            adds(c, k);
            adds(c, groups[below(3)]);
        }
    }
}

/* ------------------------------------------------------------- comparing */

/* The map keys a side leaves out before comparing (see the file comment). */
static int dropped_mine(const emq_reply *k)
{
    return k->type == EMQ_REPLY_BULK &&
           (!strcmp(k->str, "active-time") || !strcmp(k->str, "inactive") ||
            !strcmp(k->str, "radix-tree-keys") ||
            !strcmp(k->str, "radix-tree-nodes"));
}

static int dropped_theirs(const redisReply *k)
{
    return (k->type == REDIS_REPLY_STRING || k->type == REDIS_REPLY_STATUS) &&
           (!strcmp(k->str, "radix-tree-keys") ||
            !strcmp(k->str, "radix-tree-nodes"));
}

static int near(long long a, long long b)
{
    return a - b <= TOL && b - a <= TOL;
}

static int same(const emq_reply *a, const redisReply *b, int tol);

/* An RESP3 map against RESP2's flat array. */
static int same_map(const emq_reply *a, const redisReply *b)
{
    size_t i = 0, j = 0;
    if (b->type != REDIS_REPLY_ARRAY || b->elements % 2)
        return 0;
    for (;;) {
        while (i + 1 < a->n && dropped_mine(&a->elem[i]))
            i += 2;
        while (j + 1 < b->elements && dropped_theirs(b->element[j]))
            j += 2;
        if (i + 1 >= a->n || j + 1 >= b->elements)
            return i + 1 >= a->n && j + 1 >= b->elements;
        int tol = a->elem[i].type == EMQ_REPLY_BULK &&
                  !strcmp(a->elem[i].str, "idle");
        if (!same(&a->elem[i], b->element[j], 0) ||
            !same(&a->elem[i + 1], b->element[j + 1], tol))
            return 0;
        i += 2;
        j += 2;
    }
}

static int same(const emq_reply *a, const redisReply *b, int tol)
{
    switch (a->type) {
    case EMQ_REPLY_NIL:
        return b->type == REDIS_REPLY_NIL;
    case EMQ_REPLY_INT:
        if (b->type != REDIS_REPLY_INTEGER)
            return 0;
        if (a->integer == b->integer)
            return 1;
        if ((a->integer > 1000000000000LL && b->integer > 1000000000000LL) ||
            tol == 1)
            return near(a->integer, b->integer);
        return 0;
    case EMQ_REPLY_BULK:
    case EMQ_REPLY_STATUS:
        return (b->type == REDIS_REPLY_STRING ||
                b->type == REDIS_REPLY_STATUS) &&
               b->len == a->len && memcmp(a->str, b->str, a->len) == 0;
    case EMQ_REPLY_ERROR:
        return b->type == REDIS_REPLY_ERROR && b->len == a->len &&
               memcmp(a->str, b->str, a->len) == 0;
    case EMQ_REPLY_ARRAY:
        if (b->type != REDIS_REPLY_ARRAY || b->elements != a->n)
            return 0;
        for (size_t i = 0; i < a->n; i++)
            if (!same(&a->elem[i], b->element[i],
                      tol == 2 ? 3 : tol == 3 && i == 2))
                return 0;
        return 1;
    case EMQ_REPLY_MAP:
        return same_map(a, b);
    default:
        return 0;
    }
}

/* XREADGROUP: RESP3's {key: entries} against RESP2's [[key, entries]]. */
static int same_read(const emq_reply *a, const redisReply *b)
{
    if (a->type != EMQ_REPLY_MAP)
        return same(a, b, 0);
    if (b->type != REDIS_REPLY_ARRAY || b->elements * 2 != a->n)
        return 0;
    for (size_t i = 0; i < b->elements; i++) {
        const redisReply *p = b->element[i];
        if (p->type != REDIS_REPLY_ARRAY || p->elements != 2 ||
            !same(&a->elem[2 * i], p->element[0], 0) ||
            !same(&a->elem[2 * i + 1], p->element[1], 0))
            return 0;
    }
    return 1;
}

static void show_mine(FILE *f, const emq_reply *r)
{
    switch (r->type) {
    case EMQ_REPLY_NIL: fputs("nil", f); break;
    case EMQ_REPLY_INT: fprintf(f, "%lld", (long long)r->integer); break;
    case EMQ_REPLY_ERROR: fprintf(f, "(error %s)", r->str); break;
    case EMQ_REPLY_BULK:
    case EMQ_REPLY_STATUS: fprintf(f, "\"%s\"", r->str); break;
    default:
        fputc(r->type == EMQ_REPLY_MAP ? '{' : '[', f);
        for (size_t i = 0; i < r->n; i++) {
            if (i) fputc(' ', f);
            show_mine(f, &r->elem[i]);
        }
        fputc(r->type == EMQ_REPLY_MAP ? '}' : ']', f);
    }
}

static void show_theirs(FILE *f, const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_NIL: fputs("nil", f); break;
    case REDIS_REPLY_INTEGER: fprintf(f, "%lld", r->integer); break;
    case REDIS_REPLY_ERROR: fprintf(f, "(error %s)", r->str); break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS: fprintf(f, "\"%s\"", r->str); break;
    default:
        fputc('[', f);
        for (size_t i = 0; i < r->elements; i++) {
            if (i) fputc(' ', f);
            show_theirs(f, r->element[i]);
        }
        fputc(']', f);
    }
}

static void show_cmd(FILE *f, const cmd *c)
{
    for (size_t i = 0; i < c->argc; i++)
        fprintf(f, "%s%s", i ? " " : "", c->argv[i]);
}

/* ----------------------------------------------------------------- running */

static redisReply *theirs(const cmd *c)
{
    redisReply *r = redisCommandArgv(srv, (int)c->argc,
                                     (const char **)c->argv, c->len);
    if (!r) {
        fprintf(stderr, "stream_diff: the server went away: %s\n",
                srv->errstr);
        exit(99);
    }
    return r;
}

static int mine(const cmd *c, emq_reply *r)
{
    int rc = emq_xcmd_run(db, c->argc, (const char *const *)c->argv, c->len,
                          r);
    if (rc < 0 && r->type != EMQ_REPLY_ERROR) {
        fprintf(stderr, "stream_diff: emqlite failed: %s\n", emq_errmsg(db));
        exit(99);
    }
    return rc;
}

static void differ(const char *what, const cmd *c, const emq_reply *a,
                   const redisReply *b, long seq)
{
    ndiff++;
    if (shown++ >= maxshow)
        return;
    printf("DIFF sequence %ld, %s: ", seq, what);
    show_cmd(stdout, c);
    printf("\n  emqlite: ");
    show_mine(stdout, a);
    printf("\n  server:  ");
    show_theirs(stdout, b);
    printf("\n");
}

/* Run both, no comparison (setup, resync). */
static void both(const cmd *c)
{
    emq_reply r = {0};
    mine(c, &r);
    emq_reply_clear(&r);
    freeReplyObject(theirs(c));
}

static void both_str(const char *a0, const char *a1, const char *a2,
                     const char *a3, const char *a4)
{
    cmd c = { 0 };
    const char *v[] = { a0, a1, a2, a3, a4 };
    for (int i = 0; i < 5 && v[i]; i++)
        adds(&c, v[i]);
    both(&c);
    cmd_free(&c);
}

static int has_tilde(const cmd *c)
{
    for (size_t i = 2; i < c->argc; i++)
        if (!strcmp(c->argv[i], "~"))
            return 1;
    return 0;
}

/* The first id of stream k on each side ("" when empty or absent). */
static void first_ids(const char *k, char *m, char *s)
{
    cmd c = { 0 };
    emq_reply r = {0};
    adds(&c, "XRANGE"), adds(&c, k), adds(&c, "-"), adds(&c, "+"),
        adds(&c, "COUNT"), adds(&c, "1");
    m[0] = s[0] = '\0';
    mine(&c, &r);
    if (r.type == EMQ_REPLY_ARRAY && r.n == 1)
        snprintf(m, 64, "%s", r.elem[0].elem[0].str);
    emq_reply_clear(&r);
    redisReply *b = theirs(&c);
    if (b->type == REDIS_REPLY_ARRAY && b->elements == 1)
        snprintf(s, 64, "%s", b->element[0]->element[0]->str);
    freeReplyObject(b);
    cmd_free(&c);
}

static int id_less(const char *a, const char *b)
{
    unsigned long long am, as, bm, bs;
    sscanf(a, "%llu-%llu", &am, &as);
    sscanf(b, "%llu-%llu", &bm, &bs);
    return am < bm || (am == bm && as < bs);
}

/* After an approximate trim: both sides trimmed exactly to the later head. */
static void resync(const char *k)
{
    char m[64], s[64];
    first_ids(k, m, s);
    if (!strcmp(m, s))
        return;
    nresync++;
    const char *to = !m[0] ? m : !s[0] ? s : id_less(m, s) ? s : m;
    if (!to[0]) { /* one side is empty: empty the other */
        both_str("XTRIM", k, "MAXLEN", "0", NULL);
        return;
    }
    both_str("XTRIM", k, "MINID", to, NULL);
}

static void note_top(const cmd *c, const emq_reply *a)
{
    int k = kidx(c->argv[1]);
    unsigned long long ms;
    if (k >= 0 && a->type == EMQ_REPLY_BULK &&
        sscanf(a->str, "%llu-", &ms) == 1)
        last_ms[k] = ms;
}

/* Valkey 8 creates the consumer of XREADGROUP, XCLAIM and XAUTOCLAIM
 * before it serves or claims anything; Redis 7.0 only once it does: the
 * server is given the consumer first (its reply ignored). */
static void precreate(const char *k, const char *g, const char *c)
{
    cmd cc = { 0 };
    adds(&cc, "XGROUP"), adds(&cc, "CREATECONSUMER");
    adds(&cc, k), adds(&cc, g), adds(&cc, c);
    freeReplyObject(theirs(&cc));
    cmd_free(&cc);
}

static void step(const cmd *c, long seq)
{
    emq_reply a = {0};
    int rc = mine(c, &a);
    int claim = !strcmp(c->argv[0], "XCLAIM") ||
                !strcmp(c->argv[0], "XAUTOCLAIM");
    if (claim && rc >= 0)
        precreate(c->argv[1], c->argv[2], c->argv[3]);
    if (!strcmp(c->argv[0], "XREADGROUP") && rc >= 0) {
        size_t sa = 0;
        while (strcasecmp(c->argv[sa], "STREAMS") != 0)
            sa++;
        for (size_t i = sa + 1; i < sa + 1 + (c->argc - sa - 1) / 2; i++)
            precreate(c->argv[i], c->argv[2], c->argv[3]);
    }
    if (a.type == EMQ_REPLY_ERROR &&
        !strcmp(a.str, "ERR The ID specified in XSETID is smaller than "
                       "current max_deleted_entry_id")) {
        /* Valkey 8 (Redis 7.2, #11444) refuses what 7.0 accepts: the
         * command is not sent to the server. */
        ngap++;
        ncmds++;
        emq_reply_clear(&a);
        return;
    }
    redisReply *b = theirs(c);
    int tilde = has_tilde(c);
    if (seq == trace) {
        show_cmd(stdout, c);
        printf("\n  -> ");
        show_mine(stdout, &a);
        printf("\n");
    }
    int ok;
    for (int i = 0; kind_names[i]; i++)
        if (!strcmp(kind_names[i], c->argv[0]))
            kinds[i]++;
    ncmds++;
    if (!strcmp(c->argv[0], "XREADGROUP"))
        ok = same_read(&a, b);
    else if (tilde && !strcmp(c->argv[0], "XTRIM") && a.type == EMQ_REPLY_INT)
        ok = b->type == REDIS_REPLY_INTEGER && a.integer % 100 == 0;
    else
        ok = same(&a, b, !strcmp(c->argv[0], "XPENDING") ? 2 : 0);
    if (!ok)
        differ("reply", c, &a, b, seq);
    if (!strcmp(c->argv[0], "XADD"))
        note_top(c, &a);
    if (tilde)
        resync(c->argv[1]);
    emq_reply_clear(&a);
    freeReplyObject(b);
}

/* The final state of every key, as XINFO reports it. */
static void final_state(long seq)
{
    for (int k = 0; k < 3; k++) {
        cmd c = { 0 };
        adds(&c, "XINFO"), adds(&c, "STREAM"), adds(&c, keys[k]);
        adds(&c, "FULL"), adds(&c, "COUNT"), adds(&c, "0");
        emq_reply a = {0};
        mine(&c, &a);
        redisReply *b = theirs(&c);
        if (!same(&a, b, 0))
            differ("final XINFO STREAM FULL", &c, &a, b, seq);
        emq_reply_clear(&a);
        freeReplyObject(b);
        cmd_free(&c);
        for (int g = 0; g < 3; g++) {
            adds(&c, "XINFO"), adds(&c, "CONSUMERS"), adds(&c, keys[k]);
            adds(&c, groups[g]);
            mine(&c, &a);
            b = theirs(&c);
            if (!same(&a, b, 0))
                differ("final XINFO CONSUMERS", &c, &a, b, seq);
            emq_reply_clear(&a);
            freeReplyObject(b);
            cmd_free(&c);
        }
        adds(&c, "XINFO"), adds(&c, "GROUPS"), adds(&c, keys[k]);
        mine(&c, &a);
        b = theirs(&c);
        if (!same(&a, b, 0))
            differ("final XINFO GROUPS", &c, &a, b, seq);
        emq_reply_clear(&a);
        freeReplyObject(b);
        cmd_free(&c);
    }
}

static void open_db(void)
{
    emq_options o;
    emq_options_init(&o);
    if (emq_open(":memory:", &o, &db) != EMQ_OK) {
        fprintf(stderr, "stream_diff: cannot open a database\n");
        exit(99);
    }
    /* The string key for WRONGTYPE, on both sides. */
    emq_store *st = emq_db_store(db);
    if (emq_store_begin(st, 1, emq_now(db)) != EMQ_OK ||
        emq_str_set(st, "w", 1, "str", 3, -1, 0, NULL) != EMQ_OK ||
        emq_store_commit(st) != EMQ_OK) {
        fprintf(stderr, "stream_diff: setup failed\n");
        exit(99);
    }
}

int main(int argc, char **argv)
{
    long nseq = argc > 2 ? atol(argv[2]) : 200;
    long ncmd = argc > 3 ? atol(argv[3]) : 250;
    uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 20260116;
    if (argc < 2) {
        fprintf(stderr, "usage: %s PORT [SEQUENCES [COMMANDS [SEED]]]\n",
                argv[0]);
        return 2;
    }
    srv = redisConnect("127.0.0.1", atoi(argv[1]));
    if (!srv || srv->err) {
        fprintf(stderr, "stream_diff: cannot connect to port %s\n", argv[1]);
        return 99;
    }
    redisReply *v = redisCommand(srv, "INFO server");
    char ver[32] = "?";
    const char *p = v && v->str ? strstr(v->str, "redis_version:") : NULL;
    if (p)
        sscanf(p, "redis_version:%31[^\r\n]", ver);
    freeReplyObject(v);
    past = emq_wall_clock(NULL) - OLD;
    if (getenv("STREAM_DIFF_TRACE"))
        trace = atol(getenv("STREAM_DIFF_TRACE"));
    if (getenv("STREAM_DIFF_SHOW"))
        maxshow = atol(getenv("STREAM_DIFF_SHOW"));
    for (long s = 0; s < nseq; s++) {
        rng = seed * 2654435761u + (uint64_t)s * 40503u + 1;
        freeReplyObject(redisCommand(srv, "FLUSHALL"));
        freeReplyObject(redisCommand(srv, "SET w str"));
        open_db();
        memset(last_ms, 0, sizeof last_ms);
        last_ms[1] = UINT64_C(9000000000000);
        both_str("XADD", "s2", FAR "-0", "a", "far");
        for (long i = 0; i < ncmd; i++) {
            cmd c = { 0 };
            if (chance(1)) { /* a burst that fills several blocks */
                unsigned n = 120 + below(200);
                for (unsigned j = 0; j < n; j++) {
                    adds(&c, "XADD"), adds(&c, "s1");
                    addf(&c, "%llu-%u",
                         (unsigned long long)(last_ms[0] + 1), j);
                    adds(&c, "n"), addf(&c, "%u", j);
                    step(&c, s);
                    cmd_free(&c);
                }
                last_ms[0]++;
                continue;
            }
            gen(&c);
            step(&c, s);
            cmd_free(&c);
        }
        final_state(s);
        emq_close(db);
        db = NULL;
    }
    printf("stream_diff: %ld sequences, %ld commands against redis %s (",
           nseq, ncmds, ver);
    for (int i = 0; kind_names[i]; i++)
        printf("%s%s %ld", i ? ", " : "", kind_names[i], kinds[i]);
    printf("), %ld approximate trims resynced, %ld XSETID below the "
           "max-deleted id refused (Valkey 8 only), %ld differences\n",
           nresync, ngap, ndiff);
    redisFree(srv);
    return ndiff ? 1 : 0;
}
