/*
 * import.c — import a RESP command stream into the file (doc/EXPORT.md §2):
 * emq_import, and the streaming importer under it (begin / feed / finish).
 *
 * Owns: the one write transaction of an import, the command table (the
 * stream's own commands, then the key commands and every type's commands
 * from storage/types.h), the checks an import makes on each frame (the
 * command's arguments, the key grammar and the type its name fixes, the
 * version fence), and, before the commit, the judgement of every queue the
 * stream wrote by the rule set of rules.h — the checker's.
 *
 * Rules: a frame is checked whole before anything of it applies; the first
 * refusal rolls the whole import back. Messages name the byte offset of the
 * refused frame: "import refused at byte N: ...". Under `unchecked` only the
 * rule set is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "db.h"
#include "abi.h"
#include "export.h"
#include "export_stream.h"
#include "resp.h"
#include "rules.h"
#include "transfer.h"
#include "types.h"
#include "stream.h"

/* ---------------------------------------------------------- small maps */

/* An open-addressed map from a 64-bit hash (never 0) to a value. */
typedef struct hmap {
    uint64_t *k, *v;
    size_t cap, n;   /* cap: 0 or a power of two */
} hmap;

static uint64_t hkey(const void *p, size_t n)
{
    uint64_t h = emq_hash64(p, n);
    return h ? h : 1;
}

static int hm_grow(hmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 64;
    uint64_t *k = emq_mem_calloc(cap, sizeof *k);
    uint64_t *v = emq_mem_calloc(cap, sizeof *v);
    if (!k || !v) {
        emq_mem_free(k);
        emq_mem_free(v);
        return EMQ_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->k[i])
            continue;
        size_t j = m->k[i] & (cap - 1);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = m->k[i];
        v[j] = m->v[i];
    }
    emq_mem_free(m->k);
    emq_mem_free(m->v);
    m->k = k;
    m->v = v;
    m->cap = cap;
    return EMQ_OK;
}

/* The slot of `h`: its entry, or the free slot where it would go. */
static size_t hm_slot(const hmap *m, uint64_t h)
{
    size_t j = h & (m->cap - 1);
    while (m->k[j] && m->k[j] != h)
        j = (j + 1) & (m->cap - 1);
    return j;
}

/* Set h -> v; *fresh (may be NULL) = 1 when h was not there. */
static int hm_put(hmap *m, uint64_t h, uint64_t v, int *fresh)
{
    if (4 * (m->n + 1) > 3 * m->cap && hm_grow(m) != EMQ_OK)
        return EMQ_ENOMEM;
    size_t j = hm_slot(m, h);
    if (fresh)
        *fresh = !m->k[j];
    if (!m->k[j])
        m->n++;
    m->k[j] = h;
    m->v[j] = v;
    return EMQ_OK;
}

static int hm_get(const hmap *m, uint64_t h, uint64_t *v)
{
    if (!m->cap)
        return 0;
    size_t j = hm_slot(m, h);
    if (!m->k[j])
        return 0;
    *v = m->v[j];
    return 1;
}

static void hm_free(hmap *m)
{
    emq_mem_free(m->k);
    emq_mem_free(m->v);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------ importer */

struct emq_importer {
    emq_db *db;
    emq_store *st;
    emq_import_options opt;
    int rc;                 /* < 0 once refused: the import is over      */
    int open;               /* the write transaction is the import's     */
    emq_resp_reader rd;
    emq_bytes *argv;        /* the frame being applied, as views         */
    size_t capv;
    int version_seen;
    int carry_pel;          /* a pull: EMQ.XPEL accepted (export.h)      */
    int64_t now;            /* the import's NOW (PEXPIRE's base)         */
    unsigned char head[5];  /* the stream's first bytes (an RDB's magic) */
    const char *file_wire;  /* the file's identity when the import began */
    int file_empty;         /* ... and it held no other key              */
    uint64_t commands, bytes;
    /* the end record (doc/EXPORT.md §1.1) */
    emq_dg seal;            /* XXH3-64 of the frames before the record   */
    uint64_t sealed_bytes;  /* bytes of those frames                     */
    int ended;              /* the record was met: nothing may follow    */
    /* what the judgement needs (checked imports only) */
    hmap offsets;           /* key -> offset of the last frame writing it */
    hmap queues;            /* queue name -> 1                           */
    emq_buf qnames;         /* the queues written: "emq:{q}:" each, NUL-ended */
};

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

static int refuse_arg(emq_db *db, const emq_resp_cmd *c, const char *why,
                      size_t i)
{
    return refuse(db, c->offset, why, c->argv[i], c->lens[i]);
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

/* ------------------------------------------------------ command table */

/* The stream's own commands: an AOF holds them; they change nothing. */
static const struct {
    const char *name;
    size_t argc;
    const char *usage;
} stream_cmds[] = {
    { "SELECT", 2, "SELECT takes one index" },
    { "MULTI", 1, "MULTI/EXEC take no arguments" },
    { "EXEC", 1, "MULTI/EXEC take no arguments" },
};

/* A command of the table: a key command (t NULL) or one of a type's. */
typedef struct cmdref {
    const emq_cmddef *def;
    const emq_typedef *t;
} cmdref;

static int find_cmd(const emq_bytes *argv, size_t argc, cmdref *out)
{
    size_t nt;
    const emq_typedef *rows = emq_typedefs(&nt);
    for (const emq_cmddef *d = emq_key_cmds; d->name; d++)
        if (emq_arg_is(argv, argc, 0, d->name)) {
            out->def = d;
            out->t = NULL;
            return 1;
        }
    for (size_t i = 0; i < nt; i++)
        for (const emq_cmddef *d = rows[i].cmds; d && d->name; d++)
            if (emq_arg_is(argv, argc, 0, d->name)) {
                out->def = d;
                out->t = &rows[i];
                return 1;
            }
    return 0;
}

/* Remember what the judgement needs: the key's frame and its queue (the
 * key is argument `ka` of the command: 1, XGROUP's 2). */
static int note_write(emq_importer *im, const emq_resp_cmd *c, size_t ka,
                      const emq_keyinfo *ki)
{
    int fresh;
    if (im->opt.unchecked)
        return EMQ_OK;
    if (hm_put(&im->offsets, hkey(c->argv[ka], c->lens[ka]), c->offset,
               NULL) != EMQ_OK)
        return EMQ_ENOMEM;
    if (ki->family != EMQ_K_QUEUE)
        return EMQ_OK;
    size_t plen = 5 + ki->qlen + 2; /* "emq:{" q "}:" */
    if (hm_put(&im->queues, hkey(c->argv[ka], plen), 1, &fresh) != EMQ_OK)
        return EMQ_ENOMEM;
    if (fresh && (emq_buf_append(&im->qnames, c->argv[ka], plen) != EMQ_OK ||
                  emq_buf_append(&im->qnames, "", 1) != EMQ_OK))
        return EMQ_ENOMEM;
    return EMQ_OK;
}

/* ----------------------------------------------- AOF forms (opt.aof) */

/* What an AOF holds beyond an export's commands: the rewrite's own forms
 * (HMSET) and an incremental AOF's writes, deletes and overwrites — the
 * effects Valkey propagates for the Lua bundle's scripts and for expired
 * keys — each applied as Valkey applies it. */
typedef struct aofcmd {
    const char *name;
    int type;          /* EMQ_T_* the key must be; 0: any (key commands) */
    size_t min, max;   /* argc bounds (max 0: no bound)                  */
    int keys;          /* 1: argv[1]; 2: argv[1..] (DEL); 3: argv[1], [2] */
    const char *usage;
    int (*apply)(emq_importer *im, const emq_bytes *a, size_t argc,
                 const char **why);
} aofcmd;

static int num(const emq_bytes *a, int64_t *v)
{
    return emq_parse_i64(a->p, a->n, v) == 0;
}

static int a_del(emq_importer *im, const emq_bytes *a, size_t argc,
                 const char **why)
{
    (void)why;
    for (size_t i = 1; i < argc; i++) {
        int rc = emq_key_del(im->st, a[i].p, a[i].n, NULL);
        if (rc < 0)
            return rc;
    }
    return EMQ_OK;
}

static int a_pexpire(emq_importer *im, const emq_bytes *a, size_t argc,
                     const char **why)
{
    int64_t ms;
    (void)argc;
    if (!num(&a[2], &ms) || ms > INT64_MAX - im->now) {
        *why = "bad PEXPIRE time";
        return EMQ_EPROTO;
    }
    int rc = emq_key_expire_at(im->st, a[1].p, a[1].n, im->now + ms);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int a_persist(emq_importer *im, const emq_bytes *a, size_t argc,
                     const char **why)
{
    (void)argc, (void)why;
    int rc = emq_key_expire_at(im->st, a[1].p, a[1].n, -1);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int a_hmset(emq_importer *im, const emq_bytes *a, size_t argc,
                   const char **why)
{
    if (argc % 2) {
        *why = "HMSET takes key and field/value pairs";
        return EMQ_EPROTO;
    }
    return emq_hash_set(im->st, a[1].p, a[1].n, a + 2, (argc - 2) / 2, NULL);
}

static int a_hsetnx(emq_importer *im, const emq_bytes *a, size_t argc,
                    const char **why)
{
    int there;
    (void)argc, (void)why;
    int rc = emq_hash_exists(im->st, a[1].p, a[1].n, a[2].p, a[2].n, &there);
    if (rc < 0 || there)
        return rc < 0 ? rc : EMQ_OK;
    return emq_hash_set(im->st, a[1].p, a[1].n, a + 2, 1, NULL);
}

static int a_hdel(emq_importer *im, const emq_bytes *a, size_t argc,
                  const char **why)
{
    (void)why;
    for (size_t i = 2; i < argc; i++) {
        int rc = emq_hash_del(im->st, a[1].p, a[1].n, a[i].p, a[i].n, NULL);
        if (rc < 0)
            return rc;
    }
    return EMQ_OK;
}

static int a_hincrby(emq_importer *im, const emq_bytes *a, size_t argc,
                     const char **why)
{
    int64_t by, r;
    (void)argc;
    if (!num(&a[3], &by)) {
        *why = "bad HINCRBY increment";
        return EMQ_EPROTO;
    }
    return emq_hash_incrby(im->st, a[1].p, a[1].n, a[2].p, a[2].n, by, &r);
}

static int a_incr(emq_importer *im, const emq_bytes *a, size_t argc,
                  const char **why)
{
    int64_t by = 1, r;
    int neg = emq_arg_is(a, 1, 0, "DECR") || emq_arg_is(a, 1, 0, "DECRBY");
    if (argc == 3 && (!num(&a[2], &by) || by == INT64_MIN)) {
        *why = "bad increment";
        return EMQ_EPROTO;
    }
    return emq_str_incrby(im->st, a[1].p, a[1].n, neg ? -by : by, &r);
}

static int a_lpush(emq_importer *im, const emq_bytes *a, size_t argc,
                   const char **why)
{
    int64_t len;
    (void)why;
    for (size_t i = 2; i < argc; i++) {
        int rc = emq_list_push(im->st, a[1].p, a[1].n, 0, a[i].p, a[i].n,
                               &len);
        if (rc < 0)
            return rc;
    }
    return EMQ_OK;
}

static int a_lrem(emq_importer *im, const emq_bytes *a, size_t argc,
                  const char **why)
{
    int64_t count, removed;
    (void)argc;
    if (!num(&a[2], &count)) {
        *why = "bad LREM count";
        return EMQ_EPROTO;
    }
    int rc = emq_list_rem(im->st, a[1].p, a[1].n, count, a[3].p, a[3].n,
                          &removed);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int a_pop(emq_importer *im, const emq_bytes *a, size_t argc,
                 const char **why)
{
    int64_t count = 1;
    int right = emq_arg_is(a, 1, 0, "RPOP");
    emq_buf v = {0};
    int rc = EMQ_OK;
    if (argc == 3 && (!num(&a[2], &count) || count < 0)) {
        *why = "bad pop count";
        return EMQ_EPROTO;
    }
    for (int64_t i = 0; i < count && rc == EMQ_OK; i++) {
        v.len = 0;
        rc = emq_list_pop(im->st, a[1].p, a[1].n, right, &v);
    }
    emq_buf_free(&v);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int a_ltrim(emq_importer *im, const emq_bytes *a, size_t argc,
                   const char **why)
{
    int64_t b, e;
    (void)argc;
    if (!num(&a[2], &b) || !num(&a[3], &e)) {
        *why = "bad LTRIM range";
        return EMQ_EPROTO;
    }
    int rc = emq_list_trim(im->st, a[1].p, a[1].n, b, e);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int side(const emq_bytes *a, int *right)
{
    if (emq_arg_is(a, 1, 0, "LEFT"))
        return *right = 0, 1;
    if (emq_arg_is(a, 1, 0, "RIGHT"))
        return *right = 1, 1;
    return 0;
}

static int a_lmove(emq_importer *im, const emq_bytes *a, size_t argc,
                   const char **why)
{
    int from, to, rc;
    int64_t len;
    emq_buf v = {0};
    (void)argc;
    if (!side(&a[3], &from) || !side(&a[4], &to)) {
        *why = "LMOVE takes source destination LEFT|RIGHT LEFT|RIGHT";
        return EMQ_EPROTO;
    }
    /* The rotation keeps the key (and its expiry), as Valkey does. */
    if (a[1].n == a[2].n && !memcmp(a[1].p, a[2].p, a[1].n) && !from && to)
        rc = emq_list_rotate(im->st, a[1].p, a[1].n, &v);
    else if ((rc = emq_list_pop(im->st, a[1].p, a[1].n, from, &v)) == EMQ_OK)
        rc = emq_list_push(im->st, a[2].p, a[2].n, to, v.p ? (void *)v.p : "",
                           v.len, &len);
    emq_buf_free(&v);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int a_zrem(emq_importer *im, const emq_bytes *a, size_t argc,
                  const char **why)
{
    (void)why;
    for (size_t i = 2; i < argc; i++) {
        int rc = emq_zset_rem(im->st, a[1].p, a[1].n, a[i].p, a[i].n, NULL);
        if (rc < 0)
            return rc;
    }
    return EMQ_OK;
}

static int a_zpopmin(emq_importer *im, const emq_bytes *a, size_t argc,
                     const char **why)
{
    int64_t count = 1;
    double sc;
    emq_buf m = {0};
    int rc = EMQ_OK;
    if (argc == 3 && (!num(&a[2], &count) || count < 0)) {
        *why = "bad ZPOPMIN count";
        return EMQ_EPROTO;
    }
    for (int64_t i = 0; i < count && rc == EMQ_OK; i++) {
        m.len = 0;
        rc = emq_zset_popmin(im->st, a[1].p, a[1].n, &m, &sc);
    }
    emq_buf_free(&m);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int a_srem(emq_importer *im, const emq_bytes *a, size_t argc,
                  const char **why)
{
    (void)why;
    for (size_t i = 2; i < argc; i++) {
        int rc = emq_sset_rem(im->st, a[1].p, a[1].n, a[i].p, a[i].n, NULL);
        if (rc < 0)
            return rc;
    }
    return EMQ_OK;
}

/* FLUSHALL / FLUSHDB [ASYNC|SYNC]: the keyspace emptied, the file's keys
 * and the stamp with it (the stream then sets the stamp again). */
typedef struct names {
    emq_buf b;
    int oom;
} names;

static int collect_name(void *ctx, const unsigned char *key, size_t klen,
                        int type)
{
    names *n = ctx;
    uint32_t l = (uint32_t)klen;
    (void)type;
    if (emq_buf_append(&n->b, &l, sizeof l) != EMQ_OK ||
        emq_buf_append(&n->b, key, klen) != EMQ_OK)
        return n->oom = 1;
    return 0;
}

static int a_flush(emq_importer *im, const emq_bytes *a, size_t argc,
                   const char **why)
{
    names n = {{0}, 0};
    int rc;
    (void)why;
    if (argc == 2 && !emq_arg_is(a, argc, 1, "ASYNC") &&
        !emq_arg_is(a, argc, 1, "SYNC")) {
        *why = "FLUSHALL/FLUSHDB take [ASYNC|SYNC]";
        return EMQ_EPROTO;
    }
    rc = emq_key_scan(im->st, "", 0, collect_name, &n);
    if (rc == 1 && n.oom)
        rc = EMQ_ENOMEM;
    for (size_t at = 0; rc == EMQ_OK && at < n.b.len;) {
        uint32_t l;
        memcpy(&l, n.b.p + at, sizeof l);
        at += sizeof l;
        rc = emq_key_del(im->st, n.b.p + at, l, NULL);
        at += l;
    }
    emq_buf_free(&n.b);
    if (rc == EMQ_OK) {
        im->version_seen = 0;
        im->file_empty = 1;
    }
    return rc;
}

static const aofcmd aof_cmds[] = {
    { "FLUSHALL", 0, 1, 2, 0, "FLUSHALL takes [ASYNC|SYNC]", a_flush },
    { "FLUSHDB", 0, 1, 2, 0, "FLUSHDB takes [ASYNC|SYNC]", a_flush },
    { "DEL", 0, 2, 0, 2, "DEL takes keys", a_del },
    { "UNLINK", 0, 2, 0, 2, "UNLINK takes keys", a_del },
    { "PEXPIRE", 0, 3, 3, 1, "PEXPIRE takes key ms", a_pexpire },
    { "PERSIST", 0, 2, 2, 1, "PERSIST takes a key", a_persist },
    { "HMSET", EMQ_T_HASH, 4, 0, 1, "HMSET takes key and field/value pairs",
      a_hmset },
    { "HSETNX", EMQ_T_HASH, 4, 4, 1, "HSETNX takes key field value",
      a_hsetnx },
    { "HDEL", EMQ_T_HASH, 3, 0, 1, "HDEL takes key and fields", a_hdel },
    { "HINCRBY", EMQ_T_HASH, 4, 4, 1, "HINCRBY takes key field increment",
      a_hincrby },
    { "INCRBY", EMQ_T_STRING, 3, 3, 1, "INCRBY takes key increment", a_incr },
    { "DECRBY", EMQ_T_STRING, 3, 3, 1, "DECRBY takes key decrement", a_incr },
    { "INCR", EMQ_T_STRING, 2, 2, 1, "INCR takes a key", a_incr },
    { "DECR", EMQ_T_STRING, 2, 2, 1, "DECR takes a key", a_incr },
    { "LPUSH", EMQ_T_LIST, 3, 0, 1, "LPUSH takes key and values", a_lpush },
    { "LREM", EMQ_T_LIST, 4, 4, 1, "LREM takes key count value", a_lrem },
    { "LPOP", EMQ_T_LIST, 2, 3, 1, "LPOP takes key [count]", a_pop },
    { "RPOP", EMQ_T_LIST, 2, 3, 1, "RPOP takes key [count]", a_pop },
    { "LTRIM", EMQ_T_LIST, 4, 4, 1, "LTRIM takes key start stop", a_ltrim },
    { "LMOVE", EMQ_T_LIST, 5, 5, 3, "LMOVE takes source destination "
      "LEFT|RIGHT LEFT|RIGHT", a_lmove },
    { "ZREM", EMQ_T_ZSET, 3, 0, 1, "ZREM takes key and members", a_zrem },
    { "ZPOPMIN", EMQ_T_ZSET, 2, 3, 1, "ZPOPMIN takes key [count]",
      a_zpopmin },
    { "SREM", EMQ_T_SET, 3, 0, 1, "SREM takes key and members", a_srem },
    { NULL, 0, 0, 0, 0, NULL, NULL }
};

/* Check one AOF frame whole (arity, every key in the grammar with the type
 * the command writes, never the version key), then apply it. */
static int apply_aof(emq_importer *im, const emq_resp_cmd *c,
                     const emq_bytes *argv, const aofcmd *d)
{
    emq_db *db = im->db;
    size_t argc = c->argc, k0 = 1, k1 = 1;
    emq_keyinfo ki;
    const char *why = NULL;
    int rc;
    if (argc < d->min || (d->max && argc > d->max))
        return refuse_arg(im->db, c, d->usage, 0);
    if (d->keys == 0)
        k1 = 0; /* no key */
    else if (d->keys == 2)
        k1 = argc - 1;
    else if (d->keys == 3)
        k1 = 2;
    for (size_t i = k0; i <= k1; i++) {
        if (!emq_key_parse(c->argv[i], c->lens[i], &ki))
            return refuse_arg(db, c, "key outside the EchoMQ grammar", i);
        if (ki.family == EMQ_K_VERSION)
            return refuse_arg(db, c, "the version key is only ever SET", 0);
        if (d->type && ki.type != 0 && ki.type != d->type)
            return refuse_arg(db, c, "wrong type for the key", i);
    }
    if ((rc = d->apply(im, argv, argc, &why)) == EMQ_EPROTO && why)
        return refuse_arg(db, c, why, 0);
    if (rc < 0) {
        /* Valkey's own error reply (a non-integer HINCRBY, WRONGTYPE). */
        if (rc == EMQ_EPROTO && !strncmp(emq_store_errmsg(im->st), "ERR ", 4))
            return refuse_arg(db, c, emq_store_errmsg(im->st), 0);
        return store_rc(db, im->st, c, rc);
    }
    for (size_t i = k0; i <= k1; i++) {
        emq_key_parse(c->argv[i], c->lens[i], &ki);
        if ((rc = note_write(im, c, i, &ki)) != EMQ_OK)
            return emq_db_fail(db, rc, NULL);
    }
    return EMQ_OK;
}

/* ------------------------------------------ a pull's pending records */

void emq_import_carry_pel(emq_importer *im)
{
    if (im)
        im->carry_pel = 1;
}

static int parse_xid(const emq_bytes *a, emq_xid *id)
{
    char b[48], *e;
    const char *dash;
    if (a->n == 0 || a->n >= sizeof b)
        return 0;
    memcpy(b, a->p, a->n);
    b[a->n] = 0;
    if (!(dash = strchr(b, '-')) || b[0] < '0' || b[0] > '9' ||
        dash[1] < '0' || dash[1] > '9')
        return 0;
    id->ms = strtoull(b, &e, 10);
    if (e != dash)
        return 0;
    id->seq = strtoull(dash + 1, &e, 10);
    return *e == 0;
}

/* EMQ.XPEL key group consumer id time count: a pending record whose entry
 * the server trimmed, as XINFO STREAM FULL listed it. Only a pull writes
 * it (emq_import_carry_pel): it is no Valkey command and never in an
 * export. */
static int apply_pel(emq_importer *im, const emq_resp_cmd *c,
                     const emq_bytes *a)
{
    emq_keyinfo ki;
    emq_xid id;
    int64_t t, n;
    int rc;
    if (c->argc != 7 || !parse_xid(&a[4], &id) || !num(&a[5], &t) ||
        !num(&a[6], &n) || t < 0 || n < 0)
        return refuse_arg(im->db, c, "EMQ.XPEL takes key group consumer id "
                          "time count", 0);
    if (!emq_key_parse(c->argv[1], c->lens[1], &ki) ||
        ki.family != EMQ_K_QUEUE || ki.kt != EMQ_KT_STREAM)
        return refuse_arg(im->db, c, "EMQ.XPEL names no stream key of the "
                          "EchoMQ grammar", 1);
    rc = emq_xs_pel_restore(im->st, a[1].p, a[1].n, a[2].p, a[2].n, a[3].p,
                            a[3].n, id, t, n);
    if (rc == EMQ_XNOGROUP || rc == EMQ_NOTFOUND)
        return refuse_arg(im->db, c, "EMQ.XPEL: no such stream or group", 2);
    if (rc < 0)
        return store_rc(im->db, im->st, c, rc);
    return note_write(im, c, 1, &ki) == EMQ_OK
               ? EMQ_OK : emq_db_fail(im->db, EMQ_ENOMEM, NULL);
}

/* Check one frame whole, then apply it. */
static int apply(emq_importer *im, const emq_resp_cmd *c)
{
    emq_db *db = im->db;
    size_t argc = c->argc;
    emq_keyinfo ki;
    emq_why why = {NULL, -1};
    cmdref cmd;
    int rc;

    if (argc > im->capv) {
        emq_bytes *a = emq_mem_realloc(im->argv, argc * sizeof *a);
        if (!a)
            return emq_db_fail(db, EMQ_ENOMEM, NULL);
        im->argv = a;
        im->capv = argc;
    }
    for (size_t i = 0; i < argc; i++)
        im->argv[i] = (emq_bytes){c->argv[i], c->lens[i]};
    const emq_bytes *argv = im->argv;

    for (size_t i = 0; i < sizeof stream_cmds / sizeof *stream_cmds; i++)
        if (emq_arg_is(argv, argc, 0, stream_cmds[i].name)) {
            if (argc != stream_cmds[i].argc)
                return refuse(db, c->offset, stream_cmds[i].usage, NULL, 0);
            /* One keyspace: database 0's (an AOF selects it first). */
            if (i == 0 && !(argv[1].n == 1 && c->argv[1][0] == '0'))
                return refuse_arg(db, c, "SELECT: only database 0 is read; "
                                  "EchoMQ keys live in it, not in", 1);
            return EMQ_OK;
        }
    if (im->carry_pel && emq_arg_is(argv, argc, 0, "EMQ.XPEL"))
        return apply_pel(im, c, argv);
    for (const aofcmd *d = aof_cmds; d->name; d++)
        if (emq_arg_is(argv, argc, 0, d->name)) {
            if (im->opt.aof)
                return apply_aof(im, c, argv, d);
            char msg[EMQ_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "import refused at byte %llu: unknown "
                     "command '%s' (an AOF's, not an export's: import an "
                     "AOF with the aof option, 'emqlite import --aof')",
                     (unsigned long long)c->offset, d->name);
            return emq_db_wire(db, EMQ_EPROTO, msg);
        }
    if (emq_stream_import_cmd(c)) {
        /* A stream command (XADD, XSETID, XGROUP, XCLAIM, ...): Valkey's
         * own, run by the engine's stream commands; it checks the key is a
         * stream key of the grammar and refuses an error reply. */
        size_t ka = emq_arg_is(argv, argc, 0, "XGROUP") ? 2 : 1;
        if ((rc = emq_stream_import(db, im->st, c)) != EMQ_OK)
            return rc;
        if (!emq_key_parse(c->argv[ka], c->lens[ka], &ki))
            return refuse_arg(db, c, "key outside the EchoMQ grammar", ka);
        if ((rc = note_write(im, c, ka, &ki)) != EMQ_OK)
            return emq_db_fail(db, rc, NULL);
        return EMQ_OK;
    }
    /* SET key value NX, as an AOF holds it (a SET NX that wrote): applied
     * when the key is absent, as a plain SET. */
    if (im->opt.aof && argc == 4 && emq_arg_is(argv, argc, 0, "SET") &&
        emq_arg_is(argv, argc, 3, "NX")) {
        int type = EMQ_T_NONE;
        /* The server held no stamp when it wrote this one: the stream's
         * stamp is the keyspace's (the identity rule below applies). */
        int vkey = emq_key_parse(c->argv[1], c->lens[1], &ki) &&
                   ki.family == EMQ_K_VERSION;
        if (!vkey &&
            (rc = emq_key_type(im->st, argv[1].p, argv[1].n, &type)) < 0)
            return store_rc(db, im->st, c, rc);
        if (type != EMQ_T_NONE) {
            if (!emq_key_parse(c->argv[1], c->lens[1], &ki))
                return refuse_arg(db, c, "key outside the EchoMQ grammar", 1);
            return EMQ_OK;
        }
        argc = 3;
    }
    if (!find_cmd(argv, argc, &cmd))
        return refuse_arg(db, c, "unknown command", 0);
    if (cmd.def->check(argv, argc, &why) != EMQ_OK)
        return why.arg >= 0 ? refuse_arg(db, c, why.msg, (size_t)why.arg)
                            : refuse(db, c->offset, why.msg, NULL, 0);
    if (!emq_key_parse(c->argv[1], c->lens[1], &ki))
        return refuse_arg(db, c, "key outside the EchoMQ grammar", 1);
    if (!cmd.t) {
        if (ki.family == EMQ_K_VERSION)
            return refuse(db, c->offset, "the version key never expires",
                          NULL, 0);
    } else if (ki.family == EMQ_K_VERSION && cmd.t->type != EMQ_T_STRING) {
        return refuse_arg(db, c, "the version key is a string", 1);
    } else if (ki.type != 0 && ki.type != cmd.t->type) {
        return refuse_arg(db, c, "wrong type for the key", 1);
    } else if (ki.family == EMQ_K_VERSION) {
        /* SET {emq}:version: an identity of the table, without an
         * expiry; the file takes it, unless it holds keys already and
         * speaks another one (a file has one identity). */
        const char *w = argc == 3 ? emq_wire_known(c->argv[2], c->lens[2])
                                  : NULL;
        if (!w || (im->file_wire && w != im->file_wire && !im->file_empty)) {
            char msg[EMQ_ERRMSG_MAX], known[100], shown[120];
            emq_wire_list(known, sizeof known);
            emq_show_bytes(shown, sizeof shown, c->argv[2], c->lens[2]);
            if (!w)
                snprintf(msg, sizeof msg, "import refused at byte %llu: SET "
                         "{emq}:version '%s': the stream's identity is not "
                         "%s%s", (unsigned long long)c->offset, shown, known,
                         argc == 3 ? "" : " (or it carries an option)");
            else
                snprintf(msg, sizeof msg, "import refused at byte %llu: SET "
                         "{emq}:version '%s': the file holds keys and speaks "
                         "%s (a file has one identity: 'emqlite wire --set' "
                         "changes it)", (unsigned long long)c->offset, shown,
                         im->file_wire);
            return emq_db_wire(db, EMQ_EWIRE, msg);
        }
        im->version_seen = 1;
    }
    if ((rc = cmd.def->apply(im->st, argv, argc)) != EMQ_OK)
        return store_rc(db, im->st, c, rc);
    if ((rc = note_write(im, c, 1, &ki)) != EMQ_OK)
        return emq_db_fail(db, rc, NULL);
    return EMQ_OK;
}

/* --------------------------------------------------------- end record */

/* Is `c` the export's end record: ECHO "emqlite-export-end ..."? */
static int is_end_record(const emq_resp_cmd *c)
{
    static const char lead[] = EMQ_EXPORT_END " ";
    return c->argc >= 1 && c->lens[0] == 4 &&
           strncasecmp((const char *)c->argv[0], "ECHO", 4) == 0 &&
           c->argc == 2 && c->lens[1] >= sizeof lead - 1 &&
           memcmp(c->argv[1], lead, sizeof lead - 1) == 0;
}

/* The end record must state exactly the commands, bytes and XXH3-64 of the
 * frames before it. */
static int end_record(emq_importer *im, const emq_resp_cmd *c)
{
    char want[EMQ_EXPORT_END_MAX], msg[EMQ_ERRMSG_MAX];
    uint64_t h = emq_dg_value(&im->seal);
    int n = emq_export_end_text(want, sizeof want, im->commands,
                                im->sealed_bytes, h);
    if (c->lens[1] == (size_t)n && memcmp(c->argv[1], want, (size_t)n) == 0) {
        im->ended = 1;
        return EMQ_OK;
    }
    char shown[EMQ_EXPORT_END_MAX];
    emq_show_bytes(shown, sizeof shown, c->argv[1], c->lens[1]);
    snprintf(msg, sizeof msg, "import refused at byte %llu: the export's end "
             "record says '%s', but what came before it is '%s' (the "
             "stream was damaged, or cut and joined); nothing was applied",
             (unsigned long long)c->offset, shown, want);
    return emq_db_wire(im->db, EMQ_EPROTO, msg);
}

/* ---------------------------------------------------------- judgement */

typedef struct verdict {
    int found;
    char code[16];
    unsigned char key[EMQ_KEY_MAX];
    size_t klen;
    char msg[300];
} verdict;

static void on_rule(void *ctx, int sev, const char *code, const void *key,
                    size_t klen, const char *msg)
{
    verdict *v = ctx;
    if (sev != EMQ_CHECK_VIOLATION || v->found)
        return;
    v->found = 1;
    snprintf(v->code, sizeof v->code, "%s", code);
    v->klen = klen < sizeof v->key ? klen : sizeof v->key;
    memcpy(v->key, key, v->klen);
    snprintf(v->msg, sizeof v->msg, "%s", msg);
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Judge every queue the stream wrote, as emq_check would: the first
 * violation refuses the import. */
static int judge(emq_importer *im)
{
    emq_db *db = im->db;
    verdict v;
    emq_judge *j = NULL;
    const char **q = NULL;
    size_t nq = im->queues.n;
    int rc;

    memset(&v, 0, sizeof v);
    if (nq == 0)
        return EMQ_OK;
    if (!(q = emq_mem_malloc(nq * sizeof *q)) ||
        emq_judge_new(im->st, on_rule, &v, &j) != EMQ_OK) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    const char *p = (const char *)im->qnames.p;
    for (size_t i = 0; i < nq; i++, p += strlen(p) + 1)
        q[i] = p;
    qsort(q, nq, sizeof *q, cmp_cstr);
    rc = EMQ_OK;
    for (size_t i = 0; i < nq && rc == EMQ_OK && !v.found; i++) {
        emq_rkeys keys = {NULL, 0, 0};
        rc = emq_rkeys_scan(im->st, q[i], strlen(q[i]), &keys);
        if (rc == EMQ_OK)
            rc = emq_judge_keys(j, keys.k, keys.n);
        emq_rkeys_free(&keys);
    }
    if (rc < 0) {
        rc = emq_db_fail(db, rc, rc == EMQ_ENOMEM ? NULL
                                                  : emq_store_errmsg(im->st));
        goto done;
    }
    if (v.found) {
        char shown[200], msg[EMQ_ERRMSG_MAX + 600];
        uint64_t off = im->bytes;
        int known = hm_get(&im->offsets, hkey(v.key, v.klen), &off);
        emq_show_bytes(shown, sizeof shown, v.key, v.klen);
        snprintf(msg, sizeof msg, "import refused at byte %llu: %s "
                 "violation on %s%s: %s", (unsigned long long)off, v.code,
                 shown, known ? "" : " (a key the file held)", v.msg);
        rc = emq_db_wire(db, EMQ_EPROTO, msg);
    }
done:
    emq_judge_free(j);
    emq_mem_free(q);
    return rc;
}

/* ---------------------------------------------------------------- API */

void emq_import_options_init_size(emq_import_options *o, size_t size)
{
    emq_import_options d;
    memset(&d, 0, sizeof d);
    emq_struct_out(o, size, &d, sizeof d);
}

static void importer_free(emq_importer *im)
{
    emq_resp_reader_free(&im->rd);
    emq_mem_free(im->argv);
    hm_free(&im->offsets);
    hm_free(&im->queues);
    emq_buf_free(&im->qnames);
    emq_mem_free(im);
}

/* End the import's transaction with `rc` (< 0: roll back); sticky. */
static int over(emq_importer *im, int rc)
{
    if (im->open) {
        im->open = 0;
        rc = emq_db_tx_end(im->db, rc);
    }
    if (rc < 0)
        im->rc = rc;
    return rc;
}

/* A key scan's visit: stop (1) at the first key but the version's. */
static int other_key(void *ctx, const unsigned char *key, size_t klen,
                     int type)
{
    static const char vk[] = EMQ_VERSION_KEY;
    (void)ctx;
    (void)type;
    return !(klen == sizeof vk - 1 && memcmp(key, vk, klen) == 0);
}

int emq_import_begin(emq_db *db, const emq_import_options *opt,
                     emq_importer **out)
{
    int64_t now;
    int rc;
    if (out)
        *out = NULL;
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    if (!out)
        return emq_db_fail(db, EMQ_EINVAL, "import: no importer pointer");
    emq_import_options o;
    emq_import_options_init(&o);
    if (opt && emq_struct_in(&o, sizeof o, opt) != EMQ_OK)
        return emq_db_fail(db, EMQ_EINVAL, "import: options not set by "
                           "emq_import_options_init(), or a field this "
                           "library does not know");
    emq_importer *im = emq_mem_calloc(1, sizeof *im);
    if (!im)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    im->db = db;
    im->st = emq_db_store(db);
    im->opt = o;
    if (o.format != EMQ_IMPORT_EXPORT && o.format != EMQ_IMPORT_RAW) {
        char msg[EMQ_ERRMSG_MAX];
        emq_mem_free(im);
        snprintf(msg, sizeof msg, "import: format %d is neither "
                 "EMQ_IMPORT_EXPORT (0) nor EMQ_IMPORT_RAW (1)", o.format);
        return emq_db_fail(db, EMQ_EINVAL, msg);
    }
    emq_dg_init(&im->seal);
    emq_resp_reader_init(&im->rd);
    if ((rc = emq_db_tx_begin(db, 1, &now)) < 0) {
        importer_free(im);
        return rc;
    }
    im->now = now;
    im->open = 1;
    /* What the file is before the stream: its identity, and whether it
     * holds any key but the stamp. */
    {
        static const char vk[] = EMQ_VERSION_KEY;
        emq_buf v = {0};
        rc = emq_str_get(im->st, vk, sizeof vk - 1, &v);
        if (rc == EMQ_OK)
            im->file_wire = emq_wire_known(v.p, v.len);
        emq_buf_free(&v);
        if (rc >= 0 || rc == EMQ_NOTFOUND)
            rc = emq_key_scan(im->st, "", 0, other_key, im);
        if (rc < 0) {
            rc = emq_db_fail(db, rc, emq_store_errmsg(im->st));
            over(im, rc);
            importer_free(im);
            return rc;
        }
        im->file_empty = rc == EMQ_OK;
    }
    *out = im;
    return EMQ_OK;
}

int emq_import_feed(emq_importer *im, const void *bytes, size_t len)
{
    const emq_resp_cmd *c;
    int rc;
    if (!im)
        return EMQ_EINVAL;
    if (im->rc < 0)
        return im->rc;
    emq_db_clear(im->db);
    if (!bytes && len)
        return over(im, emq_db_fail(im->db, EMQ_EINVAL, "import: no bytes"));
    /* An RDB (a whole dump, or the preamble of an AOF written with
     * aof-use-rdb-preamble) is no command stream. */
    if (im->bytes < 5 && len) {
        size_t k = im->bytes;
        for (size_t i = 0; i < len && k < 5; i++, k++)
            im->head[k] = ((const unsigned char *)bytes)[i];
        if (k == 5 && memcmp(im->head, "REDIS", 5) == 0) {
            char msg[EMQ_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "import refused at byte 0: 'REDIS...' "
                     "is an RDB file (or an AOF whose base has an RDB "
                     "preamble), not RESP commands: start a server on it "
                     "(or rewrite the AOF with aof-use-rdb-preamble no) and "
                     "'emqlite pull --from HOST:PORT'");
            return over(im, emq_db_wire(im->db, EMQ_EPROTO, msg));
        }
    }
    if (emq_resp_feed(&im->rd, bytes, len) != EMQ_OK)
        return over(im, emq_db_fail(im->db, EMQ_ENOMEM, NULL));
    im->bytes += len;
    while ((rc = emq_resp_next(&im->rd, &c)) == EMQ_OK) {
        if (im->ended)
            return over(im, refuse(im->db, c->offset, "a command after the "
                                   "export's end record", NULL, 0));
        if (is_end_record(c)) {
            if ((rc = end_record(im, c)) != EMQ_OK)
                return over(im, rc);
        } else {
            emq_dg_feed(&im->seal, emq_resp_frame(&im->rd), c->size);
            im->sealed_bytes += c->size;
            if ((rc = apply(im, c)) != EMQ_OK)
                return over(im, rc);
        }
        im->commands++;
    }
    if (rc == EMQ_EPROTO) {
        const emq_resp_error *e = emq_resp_reader_error(&im->rd);
        char why[160];
        snprintf(why, sizeof why, "malformed RESP (%s at byte %llu)", e->msg,
                 (unsigned long long)e->at);
        return over(im, refuse(im->db, e->frame, why, NULL, 0));
    }
    if (rc != EMQ_RESP_MORE)
        return over(im, emq_db_fail(im->db, rc, "import"));
    return EMQ_OK;
}

int emq_import_finish(emq_importer *im, emq_transfer_summary *sum)
{
    emq_transfer_summary s;
    int rc;
    if (!im)
        return EMQ_EINVAL;
    if ((rc = im->rc) < 0)
        goto done;
    emq_db_clear(im->db);
    if (emq_resp_pending(&im->rd)) {
        rc = refuse(im->db, emq_resp_offset(&im->rd), "truncated frame",
                    NULL, 0);
    } else if (!im->version_seen && im->opt.aof) {
        /* An AOF of a server that held no stamp: its keys are taken as
         * the file's identity, as a pull takes them (a FLUSHALL in the
         * stream removed the file's stamp: it is set again). */
        static const char vk[] = EMQ_VERSION_KEY;
        const char *w = im->file_wire ? im->file_wire : EMQ_WIRE;
        int type = EMQ_T_NONE, done;
        rc = emq_key_type(im->st, vk, sizeof vk - 1, &type);
        if (rc >= 0 && type == EMQ_T_NONE)
            rc = emq_str_set(im->st, vk, sizeof vk - 1, w, strlen(w), -1, 0,
                             &done);
        if (rc < 0)
            rc = emq_db_fail(im->db, rc, emq_store_errmsg(im->st));
        else if (!im->opt.unchecked)
            rc = judge(im);
        else
            rc = EMQ_OK;
    } else if (!im->ended && im->opt.format != EMQ_IMPORT_RAW &&
               !im->opt.aof && im->version_seen) {
        char msg[EMQ_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "import refused at byte %llu: the stream "
                 "ends after %llu commands without the export's end record "
                 "(ECHO " EMQ_EXPORT_END " ...): the export was cut there, "
                 "or the stream is not an emqlite export (a bare command "
                 "stream imports with the raw format, emqlite import --raw); "
                 "nothing was applied", (unsigned long long)im->bytes,
                 (unsigned long long)im->commands);
        rc = emq_db_wire(im->db, EMQ_EPROTO, msg);
    } else if (!im->version_seen) {
        rc = emq_db_wire(im->db, EMQ_EWIRE, "import refused: the stream "
                         "never sets {emq}:version (to an identity of the "
                         "wire table: echomq:4.0.0 or echomq:3.0.0)");
    } else if (!im->opt.unchecked) {
        rc = judge(im);
    }
    /* Digested inside the transaction: a digest that fails (out of memory)
     * takes the import back with it. */
    if (rc == EMQ_OK && sum && (rc = emq_digest_tx(im->db, im->st, &s)) ==
                                   EMQ_OK) {
        s.commands = im->commands;
        s.bytes = im->bytes;
    }
    rc = over(im, rc);
    if (rc == EMQ_OK && sum)
        *sum = s;
done:
    importer_free(im);
    return rc;
}

void emq_import_abort(emq_importer *im)
{
    if (!im)
        return;
    if (im->open)
        emq_store_rollback(im->st);
    importer_free(im);
}

int emq_import(emq_db *db, const void *bytes, size_t len,
               emq_transfer_summary *sum)
{
    emq_importer *im;
    int rc = emq_db_enter(db);
    if (rc < 0)
        return rc;
    if (!bytes && len)
        return emq_db_fail(db, EMQ_EINVAL, "import: no bytes");
    if ((rc = emq_import_begin(db, NULL, &im)) != EMQ_OK)
        return rc;
    if ((rc = emq_import_feed(im, bytes, len)) != EMQ_OK) {
        emq_import_abort(im);
        return rc;
    }
    return emq_import_finish(im, sum);
}
