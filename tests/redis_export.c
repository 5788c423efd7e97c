/*
 * redis_export.c — the export's round trip through a real server: build a
 * file, export it, and after `redis-cli --pipe` has replayed the export,
 * verify the server's keyspace against the file.
 *
 *   tests/redis_export make DB OUT [--by-slot]
 *       create the emqlite file DB with the fixture keyspace and write its
 *       export to OUT; prints "digest <hex> keys <n> commands <n>"
 *   tests/redis_export verify DB PORT
 *       recompute the logical digest from the server at 127.0.0.1:PORT as
 *       doc/EXPORT.md §3 says (a verifier that knows nothing of emqlite's
 *       file), compare it with emq_digest(DB), and compare the server's
 *       keyspace with the file's key by key (tests/ksdump.h text)
 *
 * Driven by tests/redis_export.sh under tests/redis_harness.sh. The fixture
 * uses the wall clock (the server judges expiries by its own clock) and
 * carries no hash-field expiry, which servers before Valkey 9 / Redis 7.4
 * cannot take.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hiredis/hiredis.h>
#include <xxhash.h>

#include "emqlite.h"
#include "store.h"
#include "db.h"
#include "ksdump.h"
#include "srvdump.h"

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "redis_export: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    return 1;
}

/* ---------------------------------------------------------------- make */

static int raw(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    (void)db;
    (void)ctx;
    int64_t len;
    int rc = EMQ_OK;
#define K(s) s, sizeof(s) - 1
#define TRY(x) if (rc == EMQ_OK) rc = (x)
    for (int i = 0; i < 70 && rc == EMQ_OK; i++) {
        char v[32];
        int n = snprintf(v, sizeof v, "log line %d", i);
        TRY(emq_list_push(st, K("emq:{mail}:job:JOB00000000007:logs"), 1,
                          i == 5 ? "bin\0\xff" : v, i == 5 ? 5 : (size_t)n,
                          &len));
    }
    TRY(emq_list_push(st, K("emq:{mail}:wake"), 0, "1", 1, &len));
    TRY(emq_list_push(st, K("emq:{mail}:ring"), 1, "PRT00000000001", 14, &len));
    TRY(emq_sset_add(st, K("emq:{mail}:paused"), "PRT00000000002", 14, NULL));
    TRY(emq_sset_add(st, K("emq:{mail}:paused"), "PRT00000000001", 14, NULL));
    TRY(emq_str_set(st, K("emq:{mail}:job:JOB00000000007:lock"), "1", 1,
                    now + 3600 * 1000, 0, NULL));
    TRY(emq_str_set(st, K("emq:{mail}:de:order-17"), "JOB00000000007", 14, -1,
                    0, NULL));
    for (int i = 0; i < 100 && rc == EMQ_OK; i++) {
        char f[16], v[8];
        int fn = snprintf(f, sizeof f, "PRT%011d", i);
        int vn = snprintf(v, sizeof v, "%d", i % 5 + 1);
        emq_bytes p[2] = {{f, (size_t)fn}, {v, (size_t)vn}};
        TRY(emq_hash_set(st, K("emq:{mail}:gweight"), p, 1, NULL));
    }
    for (int i = 0; i < 130 && rc == EMQ_OK; i++) {
        char m[EMQ_ID_SIZE];
        emq_id_encode("JOB", (uint64_t)(9000 + i), m);
        TRY(emq_zset_add(st, K("emq:{mail}:g:PRT00000000001:pending"), m, 14, 0,
                         NULL));
    }
    TRY(emq_list_push(st, K("emq:{a.b}:flow:outbox"), 1,
                      "mail\0JOB00000000001\0JOB00000000002\0r\0esult", 42,
                      &len));
#undef TRY
#undef K
    return rc;
}

static int build(emq_db *db)
{
    char id[8][EMQ_ID_SIZE];
    emq_job job;
    int rc = EMQ_OK;
    for (int i = 0; i < 8; i++)
        emq_id_encode("JOB", (uint64_t)(1 + i), id[i]);
#define TRY(x, want) if (rc >= 0 && (rc = (x)) != (want)) \
        return fail(#x, emq_errmsg(db))
    TRY(emq_enqueue(db, "mail", id[0], "pay\0load\r\n", 11), EMQ_ENQUEUED);
    TRY(emq_enqueue(db, "mail", id[1], "", 0), EMQ_ENQUEUED);
    TRY(emq_enqueue(db, "mail", id[2], "caf\xc3\xa9", 5), EMQ_ENQUEUED);
    TRY(emq_claim(db, "mail", 600000, &job), EMQ_OK);
    emq_job_clear(&job);
    TRY(emq_retry(db, "mail", id[0], 1, 600000, 5, "boom\0!", 6), EMQ_SCHEDULED);
    TRY(emq_claim(db, "mail", 600000, &job), EMQ_OK);
    emq_job_clear(&job);
    TRY(emq_retry(db, "mail", id[1], 1, 0, 1, "fatal", 5), EMQ_DEAD);
    TRY(emq_claim(db, "mail", 600000, &job), EMQ_OK);
    emq_job_clear(&job);
    TRY(emq_enqueue(db, "mail", id[3], "four", 4), EMQ_ENQUEUED);
    TRY(emq_complete(db, "mail", id[3], 0), EMQ_OK);
    TRY(emq_enqueue_at(db, "mail", id[4], "far", 3, INT64_C(4102444800000)),
        EMQ_SCHEDULED);
    TRY(emq_enqueue_at(db, "mail", id[5], "past", 4, -5), EMQ_SCHEDULED);
    TRY(emq_enqueue(db, "mail", id[6], "six", 3), EMQ_ENQUEUED);
    TRY(emq_enqueue(db, "zz-other", id[7], "o", 1), EMQ_ENQUEUED);
    TRY(emq_queue_pause(db, "zz-other"), EMQ_OK);
#undef TRY
    rc = emq_db_run(db, 1, raw, NULL);
    return rc == EMQ_OK ? 0 : fail("raw writes", emq_errmsg(db));
}

static int write_file(void *ctx, const void *p, size_t n)
{
    return fwrite(p, 1, n, ctx) == n ? 0 : 1;
}

static int do_make(const char *path, const char *out, int by_slot)
{
    emq_db *db;
    emq_export_options o;
    emq_transfer_summary s;
    remove(path);
    if (emq_open(path, NULL, &db) != EMQ_OK)
        return fail("open", path);
    if (build(db) != 0) {
        emq_close(db);
        return 1;
    }
    FILE *f = fopen(out, "wb");
    if (!f) {
        emq_close(db);
        return fail("cannot write", out);
    }
    emq_export_options_init(&o);
    o.by_slot = by_slot;
    int rc = emq_export(db, &o, write_file, f, &s);
    if (fclose(f) != 0)
        rc = EMQ_EIO;
    if (rc != EMQ_OK) {
        fail("export", emq_errmsg(db));
        emq_close(db);
        return 1;
    }
    printf("digest %016llx keys %llu commands %llu\n",
           (unsigned long long)s.digest, (unsigned long long)s.keys,
           (unsigned long long)s.commands);
    emq_close(db);
    return 0;
}

/* -------------------------------------------------------------- verify */

static void h_u64(XXH3_state_t *h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    XXH3_64bits_update(h, b, 8);
}

static void h_str(XXH3_state_t *h, const void *p, size_t n)
{
    h_u64(h, n);
    if (n)
        XXH3_64bits_update(h, p, n);
}

typedef struct bkey {
    const char *p;
    size_t n;
} bkey;

static int cmp_bkey(const void *a, const void *b)
{
    const bkey *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->p, y->p, n) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/*
 * One key's record of the digest (doc/EXPORT.md §3), computed here from
 * the server's replies only (tests/srvdump.c reads them, in name order).
 */
static void digest_key(void *ctx, const char *key, size_t klen, int type,
                       int64_t exp, const redisReply *v)
{
    XXH3_state_t *h = ctx;
    static const char tags[] = "?shlSz"; /* by enum emq_type */
    h_str(h, key, klen);
    XXH3_64bits_update(h, &tags[type], 1);
    h_u64(h, (uint64_t)exp);
    if (type == EMQ_T_STRING) {
        h_str(h, v->str, v->len);
    } else if (type == EMQ_T_HASH) {
        size_t n = v->elements / 2;
        bkey *f = calloc(2 * n + 1, sizeof *f); /* field, value pairs */
        for (size_t j = 0; j < 2 * n; j++)
            f[j] = (bkey){v->element[j]->str, v->element[j]->len};
        qsort(f, n, 2 * sizeof *f, cmp_bkey); /* by field */
        h_u64(h, n);
        for (size_t j = 0; j < n; j++) {
            h_str(h, f[2 * j].p, f[2 * j].n);
            h_str(h, f[2 * j + 1].p, f[2 * j + 1].n);
            h_u64(h, (uint64_t)-1); /* no field expiry on this server */
        }
        free(f);
    } else if (type == EMQ_T_LIST || type == EMQ_T_SET) {
        h_u64(h, v->elements); /* a set's members come sorted */
        for (size_t j = 0; j < v->elements; j++)
            h_str(h, v->element[j]->str, v->element[j]->len);
    } else if (type == EMQ_T_ZSET) {
        h_u64(h, v->elements / 2);
        for (size_t j = 0; j + 1 < v->elements; j += 2) {
            double s = strtod(v->element[j + 1]->str, NULL);
            uint64_t bits;
            if (s == 0)
                s = 0;
            memcpy(&bits, &s, 8);
            h_str(h, v->element[j]->str, v->element[j]->len);
            h_u64(h, bits);
        }
    }
}

/* The server's digest (from its replies only) and its ksdump text. */
static int server_walk(redisContext *c, uint64_t *digest, uint64_t *nkeys,
                       emq_buf *text)
{
    XXH3_state_t *h = XXH3_createState();
    XXH3_64bits_reset(h);
    long n = sd_dump(c, text, digest_key, h);
    *digest = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    if (n < 0)
        return fail("reading the server", c->errstr);
    *nkeys = (uint64_t)n;
    return 0;
}

static int do_verify(const char *path, const char *port)
{
    emq_db *db;
    emq_options o;
    emq_transfer_summary s;
    emq_buf mine = {0}, theirs = {0};
    uint64_t digest = 0, nkeys = 0;
    int rc = 1;
    emq_options_init(&o);
    o.readonly = 1;
    if (emq_open(path, &o, &db) != EMQ_OK)
        return fail("open", path);
    redisContext *c = redisConnect("127.0.0.1", atoi(port));
    if (!c || c->err) {
        fail("connect", c ? c->errstr : "out of memory");
        goto done;
    }
    if (server_walk(c, &digest, &nkeys, &theirs) != 0)
        goto done;
    if (emq_digest(db, NULL, &s) != EMQ_OK) {
        fail("digest", emq_errmsg(db));
        goto done;
    }
    if (kd_store(emq_db_store(db), emq_now(db), &mine) != EMQ_OK) {
        fail("dump", NULL);
        goto done;
    }
    emq_buf_append(&mine, "", 1); /* as the server's text */
    if (mine.len != theirs.len || memcmp(mine.p, theirs.p, mine.len) != 0) {
        fprintf(stderr, "keyspaces differ\n--- file\n%s--- server\n%s",
                (const char *)mine.p, (const char *)theirs.p);
        goto done;
    }
    if (s.digest != digest || s.keys != nkeys) {
        fprintf(stderr, "digest: file %016llx (%llu keys), server %016llx "
                "(%llu keys)\n", (unsigned long long)s.digest,
                (unsigned long long)s.keys, (unsigned long long)digest,
                (unsigned long long)nkeys);
        goto done;
    }
    printf("server keyspace matches the file: %llu keys, digest %016llx\n",
           (unsigned long long)nkeys, (unsigned long long)digest);
    rc = 0;
done:
    if (c)
        redisFree(c);
    emq_buf_free(&mine);
    emq_buf_free(&theirs);
    emq_close(db);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "make") == 0)
        return do_make(argv[2], argv[3],
                       argc > 4 && strcmp(argv[4], "--by-slot") == 0);
    if (argc == 4 && strcmp(argv[1], "verify") == 0)
        return do_verify(argv[2], argv[3]);
    fprintf(stderr, "usage: %s make DB OUT [--by-slot] | verify DB PORT\n",
            argv[0]);
    return 2;
}
