/*
 * types.c — the type table (types.h): one row per store type, and the
 * functions the rows point at — reading a value as elements, counting it,
 * and the import commands that write it.
 *
 * Rules: the rows are the only place that lists the types. A function here
 * reaches the store through store.h only; an import command's `check` sees
 * bytes alone (no store), so a refused command touched nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "store_int.h"
#include "resp.h"
#include "types.h"
#include "stream.h"
#include "xsout.h"

/* ------------------------------------------------------------ arguments */

int emq_arg_is(const emq_bytes *argv, size_t argc, size_t i, const char *word)
{
    size_t n = strlen(word);
    if (i >= argc || argv[i].n != n)
        return 0;
    const unsigned char *a = argv[i].p;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = a[k];
        if (c >= 'a' && c <= 'z')
            c = (unsigned char)(c - 32);
        if (c != (unsigned char)word[k])
            return 0;
    }
    return 1;
}

int emq_parse_score(const void *p, size_t n, double *out)
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

/* An absolute time in ms: a decimal integer >= 0. */
static int parse_ms(const emq_bytes *a, int64_t *v)
{
    return emq_parse_i64(a->p, a->n, v) == 0 && *v >= 0;
}

static int refuse(emq_why *why, const char *msg, long arg)
{
    why->msg = msg;
    why->arg = arg;
    return EMQ_EPROTO;
}

/* -------------------------------------------------------------- reading */

typedef struct adapt {
    emq_elem_fn fn;
    void *ctx;
} adapt;

static int str_scan(emq_store *st, const void *key, size_t klen,
                    emq_elem_fn fn, void *ctx)
{
    emq_buf v = {0};
    int rc = emq_str_get(st, key, klen, &v);
    if (rc == EMQ_OK) {
        emq_elem e = {{v.p ? (const void *)v.p : "", v.len}, {"", 0}, 0, -1};
        rc = fn(ctx, &e);
    }
    emq_buf_free(&v);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int str_count(emq_store *st, const void *key, size_t klen, int64_t *n)
{
    int type;
    int rc = emq_key_type(st, key, klen, &type);
    *n = rc == EMQ_OK && type == EMQ_T_STRING;
    return rc;
}

static int on_field(void *ctx, const unsigned char *f, size_t flen,
                    const unsigned char *v, size_t vlen, int64_t expire)
{
    const adapt *a = ctx;
    emq_elem e = {{f, flen}, {v, vlen}, 0, expire};
    return a->fn(a->ctx, &e);
}

static int hash_scan(emq_store *st, const void *key, size_t klen,
                     emq_elem_fn fn, void *ctx)
{
    adapt a = {fn, ctx};
    return emq_hash_getall(st, key, klen, on_field, &a);
}

static int on_member(void *ctx, const unsigned char *m, size_t n, double s)
{
    const adapt *a = ctx;
    emq_elem e = {{m, n}, {"", 0}, s, -1};
    return a->fn(a->ctx, &e);
}

static int zset_scan(emq_store *st, const void *key, size_t klen,
                     emq_elem_fn fn, void *ctx)
{
    adapt a = {fn, ctx};
    return emq_zset_range(st, key, klen, 0, -1, on_member, &a);
}

static int on_value(void *ctx, const unsigned char *v, size_t n)
{
    const adapt *a = ctx;
    emq_elem e = {{v, n}, {"", 0}, 0, -1};
    return a->fn(a->ctx, &e);
}

static int list_scan(emq_store *st, const void *key, size_t klen,
                     emq_elem_fn fn, void *ctx)
{
    adapt a = {fn, ctx};
    return emq_list_range(st, key, klen, 0, -1, on_value, &a);
}

static int set_scan(emq_store *st, const void *key, size_t klen,
                    emq_elem_fn fn, void *ctx)
{
    adapt a = {fn, ctx};
    return emq_sset_members(st, key, klen, on_value, &a);
}

/* A stream: one element, its export commands and its digest body
 * (xsout.c), built whole. */
typedef struct xsbuild {
    emq_buf cmds, body;
    uint64_t ncmd;
    int oom;     /* the body could not grow (reported after the walk) */
} xsbuild;

static int xs_emit(void *ctx, size_t argc, const emq_bytes *argv)
{
    xsbuild *b = ctx;
    b->ncmd++;
    return emq_resp_write_cmd(&b->cmds, argc, argv) == EMQ_OK ? EMQ_OK
                                                              : EMQ_ENOMEM;
}

static void xs_digest(void *ctx, const void *p, size_t n)
{
    xsbuild *b = ctx;
    if (emq_buf_append(&b->body, p, n) != EMQ_OK)
        b->oom = 1;
}

static int stream_count(emq_store *st, const void *key, size_t klen,
                        int64_t *n)
{
    int type;
    int rc = emq_key_type(st, key, klen, &type);
    *n = rc == EMQ_OK && type == EMQ_T_STREAM;
    return rc;
}

static int stream_scan(emq_store *st, const void *key, size_t klen,
                       emq_elem_fn fn, void *ctx)
{
    xsbuild b = {{0}, {0}, 0, 0};
    emq_xsink out = { xs_emit, xs_digest, &b };
    int rc = emq_stream_export(st, key, klen, &out);
    if (rc == EMQ_OK && b.oom)
        rc = EMQ_ENOMEM;
    if (rc == EMQ_OK) {
        emq_elem e = {{b.cmds.p ? (const void *)b.cmds.p : "", b.cmds.len},
                      {b.body.p ? (const void *)b.body.p : "", b.body.len},
                      (double)b.ncmd, -1};
        rc = fn(ctx, &e);
    }
    emq_buf_free(&b.cmds);
    emq_buf_free(&b.body);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

/* ----------------------------------------------------- import commands */

/* SET key value [PXAT ms] (the form an AOF uses). */
static int set_check(const emq_bytes *argv, size_t argc, emq_why *why)
{
    int64_t at;
    if (argc == 5 && emq_arg_is(argv, argc, 3, "PXAT"))
        return parse_ms(&argv[4], &at) ? EMQ_OK
                                       : refuse(why, "bad PXAT time", 4);
    return argc == 3 ? EMQ_OK
                     : refuse(why, "SET takes key value [PXAT ms]", -1);
}

static int set_apply(emq_store *st, const emq_bytes *argv, size_t argc)
{
    int64_t at = -1;
    if (argc == 5)
        emq_parse_i64(argv[4].p, argv[4].n, &at);
    return emq_str_set(st, argv[1].p, argv[1].n, argv[2].p, argv[2].n, at, 0,
                       NULL);
}

/* HSET key f v [f v ...] */
static int hset_check(const emq_bytes *argv, size_t argc, emq_why *why)
{
    (void)argv;
    return argc >= 4 && argc % 2 == 0
               ? EMQ_OK
               : refuse(why, "HSET takes key and field/value pairs", -1);
}

static int hset_apply(emq_store *st, const emq_bytes *argv, size_t argc)
{
    return emq_hash_set(st, argv[1].p, argv[1].n, argv + 2, (argc - 2) / 2,
                        NULL);
}

/* HPEXPIREAT key ms FIELDS n f1 ... fn (absent fields are skipped). */
static int hpexpireat_check(const emq_bytes *argv, size_t argc, emq_why *why)
{
    int64_t at, nf;
    if (argc < 6 || !emq_arg_is(argv, argc, 3, "FIELDS") ||
        emq_parse_i64(argv[4].p, argv[4].n, &nf) != 0 || nf < 1 ||
        (uint64_t)nf != argc - 5)
        return refuse(why, "HPEXPIREAT takes key ms FIELDS n field...", -1);
    return parse_ms(&argv[2], &at) ? EMQ_OK
                                   : refuse(why, "bad HPEXPIREAT time", 2);
}

static int hpexpireat_apply(emq_store *st, const emq_bytes *argv, size_t argc)
{
    int64_t at;
    emq_parse_i64(argv[2].p, argv[2].n, &at);
    for (size_t i = 5; i < argc; i++) {
        int done;
        int rc = emq_hash_expire_at(st, argv[1].p, argv[1].n, argv[i].p,
                                    argv[i].n, at, &done);
        if (rc != EMQ_OK && rc != EMQ_NOTFOUND)
            return rc;
    }
    return EMQ_OK;
}

/* ZADD key score member [score member ...] (no flags). */
static int zadd_check(const emq_bytes *argv, size_t argc, emq_why *why)
{
    double s;
    if (argc < 4 || argc % 2 != 0)
        return refuse(why, "ZADD takes key and score/member pairs (no flags)",
                      -1);
    for (size_t i = 2; i < argc; i += 2)
        if (!emq_parse_score(argv[i].p, argv[i].n, &s))
            return refuse(why, "bad score", (long)i);
    return EMQ_OK;
}

static int zadd_apply(emq_store *st, const emq_bytes *argv, size_t argc)
{
    for (size_t i = 2; i < argc; i += 2) {
        double s = 0;
        emq_parse_score(argv[i].p, argv[i].n, &s);
        int rc = emq_zset_add(st, argv[1].p, argv[1].n, argv[i + 1].p,
                              argv[i + 1].n, s, NULL);
        if (rc != EMQ_OK)
            return rc;
    }
    return EMQ_OK;
}

static int rpush_check(const emq_bytes *argv, size_t argc, emq_why *why)
{
    (void)argv;
    return argc >= 3 ? EMQ_OK : refuse(why, "RPUSH takes key and values", -1);
}

static int rpush_apply(emq_store *st, const emq_bytes *argv, size_t argc)
{
    for (size_t i = 2; i < argc; i++) {
        int64_t len;
        int rc = emq_list_push(st, argv[1].p, argv[1].n, 1, argv[i].p,
                               argv[i].n, &len);
        if (rc != EMQ_OK)
            return rc;
    }
    return EMQ_OK;
}

static int sadd_check(const emq_bytes *argv, size_t argc, emq_why *why)
{
    (void)argv;
    return argc >= 3 ? EMQ_OK : refuse(why, "SADD takes key and members", -1);
}

static int sadd_apply(emq_store *st, const emq_bytes *argv, size_t argc)
{
    for (size_t i = 2; i < argc; i++) {
        int rc = emq_sset_add(st, argv[1].p, argv[1].n, argv[i].p, argv[i].n,
                              NULL);
        if (rc != EMQ_OK)
            return rc;
    }
    return EMQ_OK;
}

/* PEXPIREAT key ms: no effect on an absent key (as Valkey). */
static int pexpireat_check(const emq_bytes *argv, size_t argc, emq_why *why)
{
    int64_t at;
    if (argc != 3)
        return refuse(why, "PEXPIREAT takes key ms", -1);
    return parse_ms(&argv[2], &at) ? EMQ_OK
                                   : refuse(why, "bad PEXPIREAT time", 2);
}

static int pexpireat_apply(emq_store *st, const emq_bytes *argv, size_t argc)
{
    int64_t at;
    (void)argc;
    emq_parse_i64(argv[2].p, argv[2].n, &at);
    int rc = emq_key_expire_at(st, argv[1].p, argv[1].n, at);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

const emq_cmddef emq_key_cmds[] = {
    { "PEXPIREAT", pexpireat_check, pexpireat_apply },
    { NULL, NULL, NULL }
};

/* ---------------------------------------------------------------- rows */

static const emq_cmddef set_cmds[] = {
    { "SET", set_check, set_apply }, { NULL, NULL, NULL } };
static const emq_cmddef hash_cmds[] = {
    { "HSET", hset_check, hset_apply },
    { "HPEXPIREAT", hpexpireat_check, hpexpireat_apply },
    { NULL, NULL, NULL } };
static const emq_cmddef zset_cmds[] = {
    { "ZADD", zadd_check, zadd_apply }, { NULL, NULL, NULL } };
static const emq_cmddef list_cmds[] = {
    { "RPUSH", rpush_check, rpush_apply }, { NULL, NULL, NULL } };
static const emq_cmddef sset_cmds[] = {
    { "SADD", sadd_check, sadd_apply }, { NULL, NULL, NULL } };

static const char *const read_get[] = { "GET", NULL };
static const char *const read_hgetall[] = { "HGETALL", NULL };
static const char *const read_lrange[] = { "LRANGE", "0", "-1", NULL };
static const char *const read_smembers[] = { "SMEMBERS", NULL };
static const char *const read_zrange[] = { "ZRANGE", "0", "-1", "WITHSCORES",
                                           NULL };
/* XINFO STREAM <key> FULL COUNT 0: the key goes after the subcommand
 * (remote/xstream.c reads the reply). */
static const char *const read_xinfo[] = { "XINFO", "STREAM", "FULL", "COUNT",
                                          "0", NULL };

/*
 * The rows, indexed by enum emq_type. A new type appends its row here; its
 * functions live in its own file. A stream's import commands (XADD,
 * XSETID, XGROUP, XCLAIM, ...) are Valkey's, run by the engine's stream
 * commands (engine/transfer/export_stream.c), not from this table.
 */
static const emq_typedef rows[] = {
    { EMQ_T_STRING, "string", 's', -1, -1,
      "SET", 1, 0, 0, EMQ_ORDER_ONE, 1, read_get, set_cmds,
      str_count, str_scan },
    { EMQ_T_HASH, "hash", 'h', -1, -1,
      "HSET", 2, 0, 1, EMQ_ORDER_BYTES, 0, read_hgetall, hash_cmds,
      emq_hash_len, hash_scan },
    { EMQ_T_LIST, "list", 'l', S_L_ANY, S_L_DROP,
      "RPUSH", 1, 0, 0, EMQ_ORDER_KEPT, 1, read_lrange, list_cmds,
      emq_list_len, list_scan },
    { EMQ_T_SET, "set", 'S', S_S_ANY, S_S_DROP,
      "SADD", 1, 0, 0, EMQ_ORDER_BYTES, 1, read_smembers, sset_cmds,
      emq_sset_card, set_scan },
    { EMQ_T_ZSET, "zset", 'z', S_Z_ANY, S_Z_DROP,
      "ZADD", 2, 1, 0, EMQ_ORDER_SCORE, 1, read_zrange, zset_cmds,
      emq_zset_card, zset_scan },
    { EMQ_T_STREAM, "stream", 'x', -1, -1,
      NULL, 1, 0, 0, EMQ_ORDER_OPAQUE, 1, read_xinfo, NULL,
      stream_count, stream_scan },
};
#define NROWS (sizeof rows / sizeof rows[0])

const emq_typedef *emq_typedefs(size_t *n)
{
    *n = NROWS;
    return rows;
}

const emq_typedef *emq_typedef_of(int type)
{
    /* rows[] is in enum order: the common case is one comparison */
    if (type >= 1 && (size_t)type <= NROWS && rows[type - 1].type == type)
        return &rows[type - 1];
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i].type == type)
            return &rows[i];
    return NULL;
}

const emq_typedef *emq_typedef_named(const void *name, size_t n)
{
    for (size_t i = 0; i < NROWS; i++)
        if (strlen(rows[i].name) == n && memcmp(rows[i].name, name, n) == 0)
            return &rows[i];
    return NULL;
}
