/*
 * vgen.c — random verb calls from the registry and their differential run
 * (vgen.h).
 *
 * Rules: an argument is drawn from exactly two bytes of the source (the
 * choice and an auxiliary byte), a repeated tail from one byte for its
 * group count plus two per argument, so a call's interpretation depends
 * only on its row and its bytes; at most one argument of a call is made
 * invalid for its kind (hostile mode), so a refusal names one argument
 * whatever order the two implementations gate in.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "vgen.h"
#include "db.h"
#include "ksdump.h"

/* --------------------------------------------------------- byte sources */

void vgen_src_bytes(vgen_src *s, const uint8_t *p, size_t n)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->n = n;
}

void vgen_src_seed(vgen_src *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->s = seed ? seed : 1;
}

unsigned vgen_byte(vgen_src *s)
{
    if (s->p) return s->i < s->n ? s->p[s->i++] : 0;
    s->s ^= s->s >> 12;
    s->s ^= s->s << 25;
    s->s ^= s->s >> 27;
    return (unsigned)((s->s * UINT64_C(2685821657736338717)) >> 56);
}

int vgen_more(const vgen_src *s)
{
    return s->p == NULL || s->i < s->n;
}

/* ---------------------------------------------------------------- pools */

static const char *const QUEUES[2] = {"qa", "q.b"};
static const char *const IDS[11] = {
    "JOB00000000001", "JOB00000000002", "JOB00000000003", "JOB00000000004",
    "JOB00000000005", "JOB00000000006", "JOB00000000007", "JOB00000000008",
    "JOB0KHTOWnGLuC", "JOBAzL8n0Y58m7", "ORD0KHTOWnGLuC"};
static const char *const GROUPS[3] = {"PRT0KHTOWnGLuC", "USR0NgWEfAEJfs",
                                      "PRT00000000001"};
static const char *const DIDS[2] = {"d1", "order-42"};
static const char *const NAMES[3] = {"r1", "r2", "s"};

#define FLAT "{\"parent\":{\"id\":\"JOB00000000007\",\"payload\":\"P\"}," \
             "\"children\":[{\"id\":\"JOB00000000008\",\"payload\":\"c\"}]}"
#define CROSS "{\"parent\":{\"id\":\"JOB00000000005\",\"payload\":\"P\"}," \
              "\"children\":[{\"id\":\"JOB00000000006\",\"payload\":\"c\"," \
              "\"queue\":\"q.b\",\"ignore_dependency_on_failure\":true}]}"
#define TREE "{\"parent\":{\"id\":\"JOB00000000004\",\"payload\":\"R\"}," \
             "\"children\":[{\"id\":\"JOB00000000003\",\"payload\":\"N\"," \
             "\"children\":[{\"id\":\"JOB00000000002\",\"payload\":\"L\"}]}]}"

#define BULK "[" FLAT "," CROSS "]"

/* Byte strings: payloads (NUL inside, not UTF-8), the protocol's own words
 * (policies, queue names for a parent queue, "stalled"), and the texts of
 * structured arguments (flows, a bulk, backoff policies). */
static const struct {
    const char *p;
    size_t n;
} BYTES[16] = {
    {"", 0}, {"p", 1}, {"p2", 2}, {"a\0b", 3}, {"\xff\xfe", 2}, {"fp", 2},
    {"id", 2}, {"qa", 2}, {"q.b", 3}, {"stalled", 7}, {"p", 1},
    {FLAT, sizeof FLAT - 1}, {CROSS, sizeof CROSS - 1},
    {TREE, sizeof TREE - 1}, {BULK, sizeof BULK - 1},
    {"[\"exponential\",1,10]", 20}};

static const int64_t POSV[8] = {1, 2, 3, 5, 30, 100, 600000, 1};
static const int64_t NNEGV[8] = {0, 1, 5, 50, 600000, 0, 2, 100};

/* ---------------------------------------------------------------- calls */

static void put_int(vgen_call *c, int64_t v)
{
    c->argv[c->argc] = c->buf[c->argc];
    c->len[c->argc] = (size_t)snprintf(c->buf[c->argc], sizeof c->buf[0],
                                       "%" PRId64, v);
    c->argc++;
}

static void put_str(vgen_call *c, const char *p, size_t n)
{
    c->argv[c->argc] = p;
    c->len[c->argc] = n;
    c->argc++;
}

/* The invalid value of each kind (a gate refusal). */
static const char *hostile_of(int kind)
{
    switch (kind) {
    case EMQ_ARG_QUEUE: return "bad:q";
    case EMQ_ARG_ID: return "JOBzzzzzzzzzzz";
    case EMQ_ARG_GROUP: return "G";
    case EMQ_ARG_INT: return "1x";
    case EMQ_ARG_POS: return "0";
    case EMQ_ARG_NNEG: return "-1";
    case EMQ_ARG_BOOL: return "2";
    case EMQ_ARG_WORD: return "nope";
    case EMQ_ARG_DID: return "a b";
    case EMQ_ARG_NAME: return "a:b";
    default: return NULL;
    }
}

/* The n-th word of a '|'-separated list (cycling). */
static void put_word(vgen_call *c, const char *words, unsigned n)
{
    const char *w = words ? words : "";
    unsigned count = 1, i;
    const char *e;
    for (e = w; *e; e++) count += *e == '|';
    n %= count;
    for (i = 0; i < n; i++) w = strchr(w, '|') + 1;
    e = strchr(w, '|');
    put_str(c, w, e ? (size_t)(e - w) : strlen(w));
}

typedef struct genstate {
    const char *q, *id;        /* the last queue and id drawn            */
    int hostile_done;
    int64_t level;             /* the last flow node's level, or 0       */
    const char *q0;            /* the call's first queue                 */
} genstate;

static int ends_with(const char *s, const char *t)
{
    size_t a = strlen(s), b = strlen(t);
    return a >= b && strcmp(s + a - b, t) == 0;
}

static void one_arg(const vgen *g, const emq_arg_info *a, vgen_src *s,
                    vgen_call *c, genstate *st)
{
    unsigned ch = vgen_byte(s), aux = vgen_byte(s);
    const char *bad;
    if (c->argc >= VGEN_MAXARGS) return;
    if ((a->flags & EMQ_ARGF_OPT) && aux < 32) {
        put_str(c, NULL, 0);
        return;
    }
    if (g->hostile && ch >= 248 && !st->hostile_done &&
        (bad = hostile_of(a->kind)) != NULL) {
        st->hostile_done = 1;
        put_str(c, bad, strlen(bad));
        return;
    }
    /* a flow's root (level 1) mostly in the call's queue, policy fp */
    if (st->level == 1 && st->q0 && (a->flags & EMQ_ARGF_REST) && aux % 8 &&
        (ends_with(a->name, ".queue") || ends_with(a->name, ".policy"))) {
        if (a->kind == EMQ_ARG_QUEUE)
            put_str(c, st->q0, strlen(st->q0));
        else
            put_word(c, a->words, 0);
        return;
    }
    switch (a->kind) {
    case EMQ_ARG_QUEUE:
        st->q = QUEUES[ch % 2];
        if (!st->q0) st->q0 = st->q;
        put_str(c, st->q, strlen(st->q));
        break;
    case EMQ_ARG_ID:
        st->id = IDS[ch % 11];
        put_str(c, st->id, 14);
        break;
    case EMQ_ARG_GROUP:
        put_str(c, GROUPS[ch % 3], 14);
        break;
    case EMQ_ARG_BYTES:
        put_str(c, BYTES[ch % 16].p, BYTES[ch % 16].n);
        break;
    case EMQ_ARG_INT: {
        int64_t att;
        if (ends_with(a->name, "token")) {
            if (ch < 200 && g->attempts && st->q && st->id &&
                g->attempts(g->actx, st->q, st->id, &att))
                put_int(c, att);
            else
                put_int(c, (int64_t)(ch % 6) - 1);
            break;
        }
        switch (ch % 12) {
        case 0: put_int(c, -1); break;
        case 1: put_int(c, 0); break;
        case 2: put_int(c, 1); break;
        case 3: put_int(c, 2); break;
        case 4: put_int(c, 3); break;
        case 5: put_int(c, 50); break;
        case 6: put_int(c, g->now - 1000); break;
        case 7: put_int(c, g->now); break;
        case 8: put_int(c, g->now + 50); break;
        case 9: put_int(c, g->now + 600000); break;
        case 10: put_int(c, INT64_C(4102444800000)); break;
        default: put_int(c, 5); break;
        }
        break;
    }
    case EMQ_ARG_POS:
        if ((a->flags & EMQ_ARGF_REST) && ends_with(a->name, ".level")) {
            /* flow nodes in pre-order: one root, then each node a child
             * of the node before it or of one of that node's ancestors */
            st->level = st->level ? 2 + (int64_t)(ch % (unsigned)st->level)
                                  : 1;
            put_int(c, st->level);
            break;
        }
        put_int(c, aux & 1 ? POSV[ch % 8] : 1 + (int64_t)(ch % 100));
        break;
    case EMQ_ARG_NNEG:
        put_int(c, NNEGV[ch % 8]);
        break;
    case EMQ_ARG_BOOL:
        put_word(c, "0|1|true|false", ch);
        break;
    case EMQ_ARG_WORD:
        put_word(c, a->words, ch);
        break;
    case EMQ_ARG_DID:
        put_str(c, DIDS[ch % 2], strlen(DIDS[ch % 2]));
        break;
    case EMQ_ARG_NAME:
        put_str(c, NAMES[ch % 3], strlen(NAMES[ch % 3]));
        break;
    default:
        put_str(c, "?", 1);
        break;
    }
}

/* A backoff policy's words in prefix order (T5.10): fixed(ms), exponential
 * (base, cap), or a jitter over a fixed 0 (a positive jitter bound draws a
 * random delay, which no second implementation can predict). Out-of-range
 * numbers now and then. */
static void put_policy(vgen_src *s, vgen_call *c, unsigned b)
{
    unsigned x = vgen_byte(s), y = vgen_byte(s);
    switch (b % 4) {
    case 0:
        put_str(c, "fixed", 5);
        put_int(c, x < 16 ? -1 : NNEGV[x % 8]);
        break;
    case 1:
    case 2:
        put_str(c, "exponential", 11);
        put_int(c, x < 16 ? 0 : POSV[x % 8]);
        put_int(c, POSV[y % 8] * (y & 8 ? 100 : 1));
        break;
    default:
        put_str(c, "jitter", 6);
        put_str(c, "fixed", 5);
        put_int(c, 0);
        break;
    }
}

void vgen_args(const vgen *g, const emq_verb_info *v, vgen_src *s,
               vgen_call *c)
{
    genstate st = {NULL, NULL, 0, 0, NULL};
    size_t fix = 0, grp, k, i, groups;
    unsigned b;
    memset(c, 0, sizeof *c);
    c->v = v;
    while (fix < v->nargs && !(v->args[fix].flags & EMQ_ARGF_REST)) fix++;
    for (i = 0; i < fix; i++) one_arg(g, &v->args[i], s, c, &st);
    grp = v->nargs - fix;
    if (grp == 0) {
        /* trailing absent optional arguments are left out */
        while (c->argc > 0 && c->argv[c->argc - 1] == NULL) c->argc--;
        return;
    }
    b = vgen_byte(s);
    if (grp == 1 && strcmp(v->args[fix].name, "policy") == 0 && b < 224) {
        put_policy(s, c, b);
        return;
    }
    groups = b % 4;
    if (groups == 0 && (v->args[fix].flags & EMQ_ARGF_MIN1) && b < 240)
        groups = 1;
    for (k = 0; k < groups && c->argc + grp <= VGEN_MAXARGS; k++)
        for (i = 0; i < grp; i++) one_arg(g, &v->args[fix + i], s, c, &st);
}

void vgen_describe(const vgen_call *c, char *out, size_t cap)
{
    size_t o = 0, i, k;
    o += (size_t)snprintf(out, cap, "%s", c->v ? c->v->name : "?");
    for (i = 0; i < c->argc && o + 8 < cap; i++) {
        out[o++] = ' ';
        if (c->argv[i] == NULL) {
            o += (size_t)snprintf(out + o, cap - o, "(absent)");
            continue;
        }
        for (k = 0; k < c->len[i] && k < 40 && o + 6 < cap; k++) {
            unsigned char ch = (unsigned char)c->argv[i][k];
            if (ch >= 0x21 && ch < 0x7f) out[o++] = (char)ch;
            else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
        }
        if (c->len[i] == 0 && o + 2 < cap) {
            out[o++] = '"';
            out[o++] = '"';
        }
    }
    out[o < cap ? o : cap - 1] = 0;
}

/* ----------------------------------------------------------- raw writes */

static void raw_cmd5(vgen_raw *r, const char *w0, const char *w1,
                     const char *w2, const char *w3, const char *w4)
{
    const char *w[5] = {w0, w1, w2, w3, w4};
    size_t k = r->ncmd++, i;
    r->argc[k] = 0;
    for (i = 0; i < 5 && w[i]; i++) {
        snprintf(r->buf[k][i], sizeof r->buf[k][i], "%s", w[i]);
        r->argv[k][i] = r->buf[k][i];
        r->argc[k]++;
    }
}

static void raw_cmd(vgen_raw *r, const char *w0, const char *w1,
                    const char *w2, const char *w3)
{
    raw_cmd5(r, w0, w1, w2, w3, NULL);
}

/* The kinds a kind byte of 240..255 picks (added after the first ten,
 * so that the other bytes keep their kind): a producer's parked dedup key,
 * the queue's concurrency ceiling and rate limit, a spent limiter with a
 * TTL, a lock key and a lock field, and metric counters and data points. */
static void raw_more(vgen_raw *r, unsigned kind, unsigned x, const char *q,
                     const char *id, const char *k)
{
    char key[112], v[8];
    snprintf(v, sizeof v, "%u", 1 + x % 3);
    switch (kind) {
    case 0:
        snprintf(key, sizeof key, "emq:{%s}:de:%s", q, DIDS[x % 2]);
        raw_cmd(r, "SET", key, id, NULL);
        break;
    case 1:
    case 2:
        snprintf(key, sizeof key, "emq:{%s}:meta", q);
        raw_cmd(r, "HSET", key, kind == 1 ? "concurrency" : "max", v);
        break;
    case 3: /* a TTL no sequence's clock reaches: a server's expiry runs
             * on its own clock, which a virtual one cannot move */
        snprintf(key, sizeof key, "emq:{%s}:limiter", q);
        raw_cmd5(r, "SET", key, v, "PX", "900000000000");
        break;
    case 4:
        snprintf(key, sizeof key, "%s:lock", k);
        raw_cmd(r, "SET", key, v, NULL);
        if (x & 8) {
            raw_cmd(r, "HSET", k, "lock", v);
            snprintf(r->rowbuf, sizeof r->rowbuf, "%s", k);
            r->row = r->rowbuf;
        }
        break;
    default:
        snprintf(key, sizeof key, "emq:{%s}:metrics:%s%s", q,
                 x & 1 ? "completed" : "failed", x & 2 ? ":data" : "");
        if (x & 2)
            raw_cmd(r, "RPUSH", key, "1,2", NULL);
        else
            raw_cmd(r, "HSET", key, "count", v);
        break;
    }
}

void vgen_raw_pick(vgen_src *s, vgen_raw *r)
{
    unsigned kb = vgen_byte(s), kind = kb % 10, x = vgen_byte(s),
             y = vgen_byte(s);
    const char *q = QUEUES[vgen_byte(s) % 2], *id = IDS[vgen_byte(s) % 11];
    const char *g = GROUPS[vgen_byte(s) % 3];
    char k[96], pk[96], v[8];
    memset(r, 0, sizeof *r);
    snprintf(k, sizeof k, "emq:{%s}:job:%s", q, id);
    if (kb >= 240) {
        raw_more(r, kb % 6, x, q, id, k);
        return;
    }
    switch (kind) {
    case 0: /* a row in a lane's group */
        raw_cmd(r, "HSET", k, "group", g);
        snprintf(r->rowbuf, sizeof r->rowbuf, "%s", k);
        r->row = r->rowbuf;
        break;
    case 1: /* a charged in-flight counter */
        snprintf(k, sizeof k, "emq:{%s}:gactive", q);
        raw_cmd(r, "HINCRBY", k, g, "1");
        break;
    case 2: /* a ceiling */
        snprintf(k, sizeof k, "emq:{%s}:glimit", q);
        snprintf(v, sizeof v, "%u", 1 + x % 3);
        raw_cmd(r, "HSET", k, g, v);
        break;
    case 3: /* a lane pause by set, without the verb */
        snprintf(k, sizeof k, "emq:{%s}:paused", q);
        raw_cmd(r, x & 1 ? "SADD" : "SREM", k, g, NULL);
        break;
    case 4:
    case 8:
    case 9: { /* a flow link and its parent's counter */
        const char *parent = IDS[x % 10];
        unsigned how = y % 4;
        raw_cmd(r, "HSET", k, "parent", how == 3 ? "bogus" : parent);
        snprintf(r->rowbuf, sizeof r->rowbuf, "%s", k);
        r->row = r->rowbuf;
        if (how == 1)
            raw_cmd(r, "HSET", k, "parent_queue", QUEUES[y / 4 % 2]);
        if (how == 2)
            raw_cmd(r, "HSET", k, "parent_policy", y & 16 ? "id" : "zz");
        snprintf(pk, sizeof pk, "emq:{%s}:job:%s:dependencies", q, parent);
        raw_cmd(r, "SET", pk, y & 32 ? "1" : "2", NULL);
        break;
    }
    case 5: /* a deleted row */
        raw_cmd(r, "DEL", k, NULL, NULL);
        break;
    case 6: /* meta.paused = "0": still paused */
        snprintf(k, sizeof k, "emq:{%s}:meta", q);
        raw_cmd(r, "HSET", k, "paused", "0");
        break;
    default: /* the ring deleted behind the lanes */
        snprintf(k, sizeof k, "emq:{%s}:ring", q);
        raw_cmd(r, "DEL", k, NULL, NULL);
        break;
    }
}

static int raw_engine(emq_store *st, int64_t now, size_t argc,
                      const char *const *w)
{
    int x;
    int64_t n;
    emq_bytes fv[2];
#define K w[1], strlen(w[1])
    if (argc == 4 && strcmp(w[0], "HSET") == 0) {
        fv[0].p = w[2];
        fv[0].n = strlen(w[2]);
        fv[1].p = w[3];
        fv[1].n = strlen(w[3]);
        return emq_hash_set(st, K, fv, 1, NULL);
    }
    if (argc == 4 && strcmp(w[0], "HINCRBY") == 0)
        return emq_hash_incrby(st, K, w[2], strlen(w[2]), atoi(w[3]), &n);
    if (argc == 3 && strcmp(w[0], "SADD") == 0)
        return emq_sset_add(st, K, w[2], strlen(w[2]), &x);
    if (argc == 3 && strcmp(w[0], "SREM") == 0)
        return emq_sset_rem(st, K, w[2], strlen(w[2]), &x);
    if (argc == 3 && strcmp(w[0], "SET") == 0)
        return emq_str_set(st, K, w[2], strlen(w[2]), -1, 0, NULL);
    if (argc == 5 && strcmp(w[0], "SET") == 0 && strcmp(w[3], "PX") == 0)
        return emq_str_set(st, K, w[2], strlen(w[2]),
                           now + strtoll(w[4], NULL, 10), 0, NULL);
    if (argc == 3 && strcmp(w[0], "RPUSH") == 0)
        return emq_list_push(st, K, 1, w[2], strlen(w[2]), &n);
    if (argc == 2 && strcmp(w[0], "DEL") == 0)
        return emq_key_del(st, K, NULL);
#undef K
    return EMQ_EINVAL;
}

int vgen_raw_apply(emq_db *db, emq_model *m, int64_t now, const vgen_raw *r,
                   char *err, size_t errlen)
{
    emq_store *st = emq_db_store(db);
    size_t k;
    int rc;
    if (r->row && !model_exists(m, now, r->row)) return 0;
    if ((rc = emq_store_begin(st, 1, now)) != EMQ_OK) {
        snprintf(err, errlen, "raw: begin: %s", emq_strerror(rc));
        return -1;
    }
    for (k = 0; k < r->ncmd; k++) {
        emq_reply mr;
        if ((rc = raw_engine(st, now, r->argc[k], r->argv[k])) < 0) {
            emq_store_rollback(st);
            snprintf(err, errlen, "raw %s %s: %s", r->argv[k][0],
                     r->argv[k][1], emq_strerror(rc));
            return -1;
        }
        if (model_raw(m, now, r->argc[k], r->argv[k], NULL, &mr) != 0) {
            emq_store_rollback(st);
            snprintf(err, errlen, "raw %s: the model does not run it",
                     r->argv[k][0]);
            return -1;
        }
        model_reply_free(&mr);
    }
    if ((rc = emq_store_commit(st)) != EMQ_OK) {
        snprintf(err, errlen, "raw: commit: %s", emq_strerror(rc));
        return -1;
    }
    return 0;
}

int vgen_raw_apply_engine(emq_db *db, int64_t now, const vgen_raw *r,
                          int *applied, char *err, size_t errlen)
{
    emq_store *st = emq_db_store(db);
    size_t k = 0;
    int rc, type = EMQ_T_NONE;
    *applied = 0;
    if ((rc = emq_store_begin(st, 1, now)) != EMQ_OK) {
        snprintf(err, errlen, "raw: begin: %s", emq_strerror(rc));
        return -1;
    }
    if (r->row && (rc = emq_key_type(st, r->row, strlen(r->row), &type)) < 0)
        goto fail;
    if (r->row && type == EMQ_T_NONE) {
        emq_store_rollback(st);
        return 0;
    }
    for (k = 0; k < r->ncmd; k++)
        if ((rc = raw_engine(st, now, r->argc[k], r->argv[k])) < 0)
            goto fail;
    if ((rc = emq_store_commit(st)) != EMQ_OK) goto fail;
    *applied = 1;
    return 0;
fail:
    emq_store_rollback(st);
    k = k < r->ncmd ? k : 0;
    snprintf(err, errlen, "raw %s %s: %s", r->argv[k][0], r->argv[k][1],
             emq_strerror(rc));
    return -1;
}

/* --------------------------------------------------------- differential */

static void show(char *out, size_t cap, const emq_reply *r, int depth)
{
    size_t o = strlen(out), i;
    if (o + 32 >= cap) return;
    switch (r->type) {
    case EMQ_REPLY_NIL: snprintf(out + o, cap - o, "nil"); break;
    case EMQ_REPLY_INT:
    case EMQ_REPLY_BOOL:
        snprintf(out + o, cap - o, "%s%" PRId64,
                 r->type == EMQ_REPLY_BOOL ? "bool:" : "", r->integer);
        break;
    case EMQ_REPLY_ARRAY:
    case EMQ_REPLY_MAP:
        snprintf(out + o, cap - o, r->type == EMQ_REPLY_MAP ? "{" : "[");
        for (i = 0; i < r->n && depth < 6; i++) {
            if (i) strncat(out, ",", cap - strlen(out) - 1);
            show(out, cap, &r->elem[i], depth + 1);
        }
        strncat(out, r->type == EMQ_REPLY_MAP ? "}" : "]",
                cap - strlen(out) - 1);
        break;
    default: {
        static const char *const tag[] = {"", "", "", "status:", "", "",
                                          "", "error:", "refused:"};
        size_t k;
        snprintf(out + o, cap - o, "%s\"",
                 r->type < 9 ? tag[r->type] : "?");
        o = strlen(out);
        for (k = 0; k < r->len && o + 6 < cap; k++) {
            unsigned char ch = (unsigned char)r->str[k];
            if (ch >= 0x20 && ch < 0x7f && ch != '"') out[o++] = (char)ch;
            else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
        }
        out[o] = 0;
        strncat(out, "\"", cap - strlen(out) - 1);
    }
    }
}

static int reply_eq(const emq_reply *a, const emq_reply *b);

/* Maps as sets of (key, value) pairs. */
static int map_eq(const emq_reply *a, const emq_reply *b)
{
    size_t i, j;
    if (a->n != b->n) return 0;
    for (i = 0; i + 1 < a->n; i += 2) {
        int found = 0;
        for (j = 0; j + 1 < b->n && !found; j += 2)
            found = reply_eq(&a->elem[i], &b->elem[j]) &&
                    reply_eq(&a->elem[i + 1], &b->elem[j + 1]);
        if (!found) return 0;
    }
    return 1;
}

static int reply_eq(const emq_reply *a, const emq_reply *b)
{
    size_t i;
    if (a->type != b->type) return 0;
    switch (a->type) {
    case EMQ_REPLY_NIL: return 1;
    case EMQ_REPLY_INT:
    case EMQ_REPLY_BOOL: return a->integer == b->integer;
    case EMQ_REPLY_ARRAY:
        if (a->n != b->n) return 0;
        for (i = 0; i < a->n; i++)
            if (!reply_eq(&a->elem[i], &b->elem[i])) return 0;
        return 1;
    case EMQ_REPLY_MAP: return map_eq(a, b);
    default:
        return a->len == b->len && (a->len == 0 ||
                                    memcmp(a->str, b->str, a->len) == 0);
    }
}

static int is_wire(const emq_reply *r)
{
    return r->type == EMQ_REPLY_ERROR || r->type == EMQ_REPLY_REFUSED;
}

int vgen_reply_diff(int rc, const emq_reply *r, int mrc,
                    const emq_reply *mr, char *err, size_t errlen)
{
    char a[700] = "", b[700] = "";
    if (!is_wire(r) && !is_wire(mr) && (rc < 0 || mrc < 0)) {
        if (rc == mrc) return 0;
        snprintf(err, errlen, "refusals differ: emqlite %d (%s), model %d "
                 "(%s)", rc, emq_strerror(rc), mrc,
                 mrc == EMQ_ENOTSUP ? "not modelled" : emq_strerror(mrc));
        return 1;
    }
    if (reply_eq(r, mr)) return 0;
    show(a, sizeof a, r, 0);
    show(b, sizeof b, mr, 0);
    snprintf(err, errlen, "replies differ: emqlite (rc %d) %s, model (rc %d) "
             "%s", rc, a, mrc, b);
    return 1;
}

/* Drop the blocks of stream keys from a ksdump text in place. */
static void drop_streams(emq_buf *d)
{
    char *p = (char *)d->p, *o = p, *end = p + d->len;
    int skip = 0;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        if (strncmp(p, "key ", 4) == 0) {
            char *b = memchr(p, '}', n);
            skip = b && (size_t)(b - p) + 9 <= n &&
                   memcmp(b, "}:stream:", 9) == 0;
        }
        if (!skip) {
            memmove(o, p, n);
            o += n;
        }
        p += n;
    }
    d->len = (size_t)(o - (char *)d->p);
    if (d->p) d->p[d->len] = 0;
}

int vgen_keyspace_diff(emq_db *db, emq_model *m, int64_t now, char *err,
                       size_t errlen)
{
    emq_buf a = {0}, b = {0};
    int rc = 0, x;
    if ((x = kd_store(emq_db_store(db), now, &a)) != EMQ_OK) {
        snprintf(err, errlen, "keyspace dump: %s", emq_strerror(x));
        rc = 1;
        goto done;
    }
    model_dump(m, now, &b);
    drop_streams(&a);
    drop_streams(&b);
    if (a.len != b.len || memcmp(a.p, b.p, a.len) != 0) {
        size_t i = 0;
        while (i < a.len && i < b.len && a.p[i] == b.p[i]) i++;
        while (i > 0 && a.p[i - 1] != '\n') i--;
        snprintf(err, errlen, "keyspaces differ from byte %zu\n--- emqlite "
                 "(%zu bytes)\n%.1200s\n--- model (%zu bytes)\n%.1200s", i,
                 a.len, (char *)a.p + i, b.len, (char *)b.p + i);
        rc = 1;
    }
done:
    emq_buf_free(&a);
    emq_buf_free(&b);
    return rc;
}

int vgen_run(emq_db *db, emq_model *m, int64_t now, const vgen_call *c,
             int *modelled, char *err, size_t errlen)
{
    emq_reply r = {0}, mr = {0};
    char what[300], why[1600];
    int rc, mrc, bad = 0;
    *modelled = model_verb_find(c->v->name) != NULL;
    if (*modelled) {
        /* Verbs that mint (the sweep's occurrences) must mint the same ids
         * on both sides: the model takes the handle's node id and, from an
         * id minted just before the call, the state of its mint cell. */
        char last[EMQ_ID_SIZE];
        model_set_node(m, emq_node_id(db));
        if (emq_mint(db, "JOB", last) == EMQ_OK)
            model_mint_observe(m, last, EMQ_ID_LEN);
    }
    rc = emq_call(db, c->v->name, c->argc, c->argv, c->len, &r);
    if (*modelled) {
        mrc = model_call(m, c->v->name, now, c->argc, c->argv, c->len, &mr);
        if (vgen_reply_diff(rc, &r, mrc, &mr, why, sizeof why)) {
            vgen_describe(c, what, sizeof what);
            snprintf(err, errlen, "%s: %s (emqlite says: %s)", what, why,
                     rc < 0 ? emq_errmsg(db) : "ok");
            bad = 1;
        }
        model_reply_free(&mr);
    }
    emq_reply_clear(&r);
    return bad;
}
