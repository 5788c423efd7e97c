/*
 * test_transfer.c — Check suite for engine/transfer/export.c: emq_export, emq_import
 * and emq_digest (doc/EXPORT.md).
 *
 * The keyspace under test is built through the public verbs (jobs pending,
 * active, scheduled and dead, NUL-bearing payloads and errors, completion
 * counters) and, for what no Tier 1 verb writes (logs, wake, ring, paused
 * groups, lock keys with a TTL, a lock field with a field TTL, aggregates
 * past 64 elements, an already expired key), through the store under the
 * handle. The clock is injected; nothing sleeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <xxhash.h>

#include "emqlite.h"
#include "store.h"
#include "db.h"
#include "resp.h"
#include "relutil.h"
#include "suites.h"

#define T0 INT64_C(1767225600000)

static int64_t clock_now = T0;
static int64_t test_clock(void *ctx)
{
    (void)ctx;
    return clock_now;
}

static emq_db *open_db(void)
{
    emq_options o;
    emq_db *db = NULL;
    emq_options_init(&o);
    o.clock = test_clock;
    o.node_id = 7;
    ck_assert_int_eq(emq_open(":memory:", &o, &db), EMQ_OK);
    return db;
}

/* A sink collecting bytes into an emq_buf. */
static int to_buf(void *ctx, const void *p, size_t n)
{
    return emq_buf_append(ctx, p, n) == EMQ_OK ? 0 : 1;
}

static void export_to(emq_db *db, const emq_export_options *o, emq_buf *out,
                      emq_transfer_summary *sum)
{
    out->len = 0;
    int rc = emq_export(db, o, to_buf, out, sum);
    ck_assert_msg(rc == EMQ_OK, "export: %d %s", rc, emq_errmsg(db));
    ck_assert_uint_eq(sum->bytes, out->len);
}

static uint64_t digest_of(emq_db *db)
{
    emq_transfer_summary s;
    ck_assert_int_eq(emq_digest(db, NULL, &s), EMQ_OK);
    return s.digest;
}

/* ----------------------------------------------------- the fixture */

static const char PAY_NUL[] = "a\0b\0\xff\xfe";
#define PAY_NUL_LEN 6

/* Job ids are fixed so that two builds give the same keyspace. */
static const char *jid(int i)
{
    static char ids[40][EMQ_ID_SIZE];
    ck_assert(i < 40);
    ck_assert_int_eq(emq_id_encode("JOB", (uint64_t)(1000 + i), ids[i]),
                     EMQ_OK);
    return ids[i];
}

typedef struct raw_ctx {
    int stage;
} raw_ctx;

/* Store writes no Tier 1 verb makes, in one write transaction. */
static int raw_writes(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    (void)db;
    (void)ctx;
    int64_t len;
    char f[16], v[16];
#define K(s) s, sizeof(s) - 1
    /* A log list with binary lines, longer than one RPUSH. */
    for (int i = 0; i < 70; i++) {
        int n = snprintf(v, sizeof v, "line %d", i);
        if (i == 3)
            ck_assert_int_eq(emq_list_push(st, K("emq:{mail}:job:JOB000000000g7:logs"),
                                           1, "x\0y", 3, &len), EMQ_OK);
        else
            ck_assert_int_eq(emq_list_push(st, K("emq:{mail}:job:JOB000000000g7:logs"),
                                           1, v, (size_t)n, &len), EMQ_OK);
    }
    /* wake and ring, and a paused group set. */
    ck_assert_int_eq(emq_list_push(st, K("emq:{mail}:wake"), 0, "1", 1, &len),
                     EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("emq:{mail}:ring"), 1,
                                   "PRT00000000001", 14, &len), EMQ_OK);
    ck_assert_int_eq(emq_sset_add(st, K("emq:{mail}:paused"), "PRT00000000002",
                                 14, NULL), EMQ_OK);
    ck_assert_int_eq(emq_sset_add(st, K("emq:{mail}:paused"), "PRT00000000001",
                                 14, NULL), EMQ_OK);
    /* A lock key with a TTL and a row field with a field TTL. */
    ck_assert_int_eq(emq_str_set(st, K("emq:{mail}:job:JOB000000000g7:lock"),
                                 "1", 1, now + 60000, 0, NULL), EMQ_OK);
    emq_bytes fv[2] = {{"lock", 4}, {"1", 1}};
    ck_assert_int_eq(emq_hash_set(st, K("emq:{mail}:job:JOB000000000g7"), fv, 1,
                                  NULL), EMQ_OK);
    int done;
    ck_assert_int_eq(emq_hash_expire_at(st, K("emq:{mail}:job:JOB000000000g7"),
                                        "lock", 4, now + 45000, &done), EMQ_OK);
    ck_assert_int_eq(done, 1);
    /* A hash of 100 fields (two HSETs) and a lane of 130 members. */
    for (int i = 0; i < 100; i++) {
        int fn = snprintf(f, sizeof f, "PRT%011d", i);
        int vn = snprintf(v, sizeof v, "%d", i % 7 + 1);
        emq_bytes p[2] = {{f, (size_t)fn}, {v, (size_t)vn}};
        ck_assert_int_eq(emq_hash_set(st, K("emq:{mail}:gweight"), p, 1, NULL),
                         EMQ_OK);
    }
    for (int i = 0; i < 130; i++) {
        char m[EMQ_ID_SIZE];
        ck_assert_int_eq(emq_id_encode("JOB", (uint64_t)(5000 + i), m), EMQ_OK);
        ck_assert_int_eq(emq_zset_add(st, K("emq:{mail}:g:PRT00000000001:pending"),
                                      m, 14, 0, NULL), EMQ_OK);
    }
    /* A dedup key, and a key already expired (never exported). */
    ck_assert_int_eq(emq_str_set(st, K("emq:{mail}:de:order-17"),
                                 "JOB000000000g7", 14, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_str_set(st, K("emq:{mail}:limiter"), "3", 1, now - 1,
                                 0, NULL), EMQ_OK);
    /* Another queue, sorting before and after "mail". */
    ck_assert_int_eq(emq_list_push(st, K("emq:{a.b}:flow:outbox"), 1,
                                   "mail\0JOB00000000001\0JOB00000000002\0r", 36,
                                   &len), EMQ_OK);
#undef K
    return EMQ_OK;
}

/* The shared fixture: every job set, binary bytes, counters, lists. */
static void build(emq_db *db)
{
    emq_job job;
    clock_now = T0;
    /* pending: 3 jobs, one with NULs in its payload */
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(1), PAY_NUL, PAY_NUL_LEN),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(2), "", 0), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(3), "three", 5), EMQ_ENQUEUED);
    /* active: claim the oldest (1), scheduled: retry it */
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &job), EMQ_OK);
    ck_assert_str_eq(job.id, jid(1));
    emq_job_clear(&job);
    ck_assert_int_eq(emq_retry(db, "mail", jid(1), 1, 600000, 5, "boom\0!", 6),
                     EMQ_SCHEDULED);
    /* dead: claim 2 and retry past its cap */
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &job), EMQ_OK);
    emq_job_clear(&job);
    ck_assert_int_eq(emq_retry(db, "mail", jid(2), 1, 0, 1, "fatal", 5),
                     EMQ_DEAD);
    /* active: claim 3; completed: 4 */
    ck_assert_int_eq(emq_claim(db, "mail", 45000, &job), EMQ_OK);
    emq_job_clear(&job);
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(4), "four", 4), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_complete(db, "mail", jid(4), 0), EMQ_OK);
    /* scheduled by enqueue_at, far in the future; pending again */
    ck_assert_int_eq(emq_enqueue_at(db, "mail", jid(5), "five", 4,
                                    INT64_C(4102444800000)), EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(6), "six", 3), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "zz-other", jid(7), "o", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_queue_pause(db, "zz-other"), EMQ_OK);
    ck_assert_int_eq(emq_db_run(db, 1, raw_writes, NULL), EMQ_OK);
}

/* -------------------------------------------------- stream inspection */

typedef struct cmds {
    emq_resp_cmd c;
    const unsigned char *p;
    size_t n, pos;
} cmds;

/* The next command of `s`, or 0 at the end. */
static int next_cmd(cmds *s)
{
    emq_resp_error e;
    if (s->pos >= s->n)
        return 0;
    ck_assert_int_eq(emq_resp_parse(s->p + s->pos, s->n - s->pos, s->pos,
                                    &s->c, &e), EMQ_OK);
    s->pos += s->c.size;
    return 1;
}

static int arg_eq(const emq_resp_cmd *c, size_t i, const char *s, size_t n)
{
    return i < c->argc && c->lens[i] == n && memcmp(c->argv[i], s, n) == 0;
}
#define ARG(c, i, lit) arg_eq((c), (i), (lit), sizeof(lit) - 1)

/* ---------------------------------------------------------------- tests */

START_TEST(export_starts_with_the_fence_and_is_deterministic)
{
    emq_db *a = open_db(), *b = open_db();
    emq_buf x = {0}, y = {0}, z = {0};
    emq_transfer_summary sx, sy, sz;
    build(a);
    build(b);
    export_to(a, NULL, &x, &sx);
    export_to(a, NULL, &y, &sy);
    export_to(b, NULL, &z, &sz);
    ck_assert_uint_eq(x.len, y.len);
    ck_assert_mem_eq(x.p, y.p, x.len);
    ck_assert_uint_eq(x.len, z.len);
    ck_assert_mem_eq(x.p, z.p, x.len);
    ck_assert_uint_eq(sx.digest, sz.digest);
    ck_assert_uint_eq(sx.digest, digest_of(a));
    static const char head[] = "*3\r\n$3\r\nSET\r\n$13\r\n{emq}:version\r\n"
                               "$12\r\necho" "mq:4.0.0\r\n";
    ck_assert_mem_eq(x.p, head, sizeof head - 1);
    emq_buf_free(&x);
    emq_buf_free(&y);
    emq_buf_free(&z);
    emq_close(a);
    emq_close(b);
}
END_TEST

START_TEST(export_commands_follow_the_documented_shapes)
{
    emq_db *db = open_db();
    emq_buf x = {0};
    emq_transfer_summary s;
    build(db);
    export_to(db, NULL, &x, &s);
    cmds it = {.p = x.p, .n = x.len};
    size_t ncmd = 0, hset_gw = 0, zadd_lane = 0, rpush_logs = 0;
    int saw_pexpire_lock = 0, saw_hpexpire = 0, saw_limiter = 0;
    int saw_sched_far = 0, saw_nul_payload = 0, saw_sadd = 0;
    unsigned char last_key[600];
    size_t last_klen = 0;
    while (next_cmd(&it)) {
        const emq_resp_cmd *c = &it.c;
        ncmd++;
        ck_assert_uint_ge(c->argc, 2);
        /* keys in byte order after the fence (expiries repeat their key) */
        if (ncmd > 1 && !ARG(c, 0, "PEXPIREAT") && !ARG(c, 0, "HPEXPIREAT")) {
            size_t n = c->lens[1] < last_klen ? c->lens[1] : last_klen;
            int cmp = memcmp(c->argv[1], last_key, n);
            ck_assert(cmp > 0 || (cmp == 0 && c->lens[1] >= last_klen));
        }
        if (ncmd > 1) {
            memcpy(last_key, c->argv[1], c->lens[1]);
            last_klen = c->lens[1];
        }
        if (ARG(c, 1, "emq:{mail}:limiter"))
            saw_limiter = 1;
        if (ARG(c, 0, "HSET") && ARG(c, 1, "emq:{mail}:gweight")) {
            ck_assert_uint_eq(c->argc, 2 + 2 * (hset_gw == 0 ? 64 : 36));
            hset_gw++;
        }
        if (ARG(c, 0, "ZADD") && ARG(c, 1, "emq:{mail}:g:PRT00000000001:pending")) {
            ck_assert_uint_eq(c->argc, 2 + 2 * (zadd_lane < 2 ? 64 : 2));
            ck_assert(ARG(c, 2, "0"));
            zadd_lane++;
        }
        if (ARG(c, 0, "RPUSH") && ARG(c, 1, "emq:{mail}:job:JOB000000000g7:logs")) {
            ck_assert_uint_eq(c->argc, 2 + (rpush_logs == 0 ? 64 : 6));
            if (rpush_logs == 0)
                ck_assert(arg_eq(c, 5, "x\0y", 3));
            rpush_logs++;
        }
        if (ARG(c, 0, "PEXPIREAT") &&
            ARG(c, 1, "emq:{mail}:job:JOB000000000g7:lock")) {
            ck_assert(ARG(c, 2, "1767225660000"));
            saw_pexpire_lock = 1;
        }
        if (ARG(c, 0, "HPEXPIREAT")) {
            ck_assert_uint_eq(c->argc, 6);
            ck_assert(ARG(c, 1, "emq:{mail}:job:JOB000000000g7"));
            ck_assert(ARG(c, 2, "1767225645000"));
            ck_assert(ARG(c, 3, "FIELDS"));
            ck_assert(ARG(c, 4, "1"));
            ck_assert(ARG(c, 5, "lock"));
            saw_hpexpire = 1;
        }
        if (ARG(c, 0, "ZADD") && ARG(c, 1, "emq:{mail}:schedule")) {
            /* integer scores: the retry's NOW + 600000 and the far run-at */
            ck_assert_uint_eq(c->argc, 6);
            ck_assert(ARG(c, 2, "1767226200000"));
            ck_assert(ARG(c, 4, "4102444800000"));
            saw_sched_far = 1;
        }
        if (ARG(c, 0, "HSET") && c->lens[1] == 29 &&
            memcmp(c->argv[1], "emq:{mail}:job:", 15) == 0 &&
            memcmp(c->argv[1] + 15, jid(1), 14) == 0) {
            for (size_t i = 2; i + 1 < c->argc; i += 2)
                if (ARG(c, i, "payload"))
                    saw_nul_payload = arg_eq(c, i + 1, PAY_NUL, PAY_NUL_LEN);
        }
        if (ARG(c, 0, "SADD")) {
            ck_assert(ARG(c, 1, "emq:{mail}:paused"));
            ck_assert_uint_eq(c->argc, 4);
            ck_assert(ARG(c, 2, "PRT00000000001"));
            ck_assert(ARG(c, 3, "PRT00000000002"));
            saw_sadd = 1;
        }
    }
    ck_assert_uint_eq(ncmd, s.commands);
    ck_assert_uint_eq(hset_gw, 2);
    ck_assert_uint_eq(zadd_lane, 3);
    ck_assert_uint_eq(rpush_logs, 2);
    ck_assert(saw_pexpire_lock && saw_hpexpire && saw_sched_far);
    ck_assert(saw_nul_payload && saw_sadd);
    ck_assert_msg(!saw_limiter, "an expired key was exported");
    emq_resp_cmd_free(&it.c);
    emq_buf_free(&x);
    emq_close(db);
}
END_TEST

START_TEST(export_import_export_is_byte_exact)
{
    emq_db *a = open_db(), *b = open_db();
    emq_buf x = {0}, y = {0};
    emq_transfer_summary sx, si, sy;
    build(a);
    export_to(a, NULL, &x, &sx);
    ck_assert_msg(emq_import(b, x.p, x.len, &si) == EMQ_OK, "%s",
                  emq_errmsg(b));
    ck_assert_uint_eq(si.bytes, x.len);
    ck_assert_uint_eq(si.commands, sx.commands);
    ck_assert_uint_eq(si.keys, sx.keys);
    ck_assert_uint_eq(si.digest, sx.digest);
    export_to(b, NULL, &y, &sy);
    ck_assert_uint_eq(x.len, y.len);
    ck_assert_mem_eq(x.p, y.p, x.len);
    ck_assert_uint_eq(sy.digest, sx.digest);
    /* The imported file works: the job with NULs is claimable as before. */
    emq_job job;
    ck_assert_int_eq(emq_claim(b, "mail", 1000, &job), EMQ_OK);
    ck_assert_str_eq(job.id, jid(6));
    emq_job_clear(&job);
    ck_assert_int_eq(emq_claim(a, "mail", 1000, &job), EMQ_OK);
    ck_assert_str_eq(job.id, jid(6));
    emq_job_clear(&job);
    ck_assert_uint_eq(digest_of(a), digest_of(b));
    emq_buf_free(&x);
    emq_buf_free(&y);
    emq_close(a);
    emq_close(b);
}
END_TEST

START_TEST(by_slot_export_groups_slots_and_keeps_the_digest)
{
    emq_db *a = open_db(), *b = open_db();
    emq_buf plain = {0}, slotted = {0}, again = {0};
    emq_transfer_summary sp, ss, sa, si;
    emq_export_options o;
    build(a);
    export_to(a, NULL, &plain, &sp);
    emq_export_options_init(&o);
    o.by_slot = 1;
    export_to(a, &o, &slotted, &ss);
    ck_assert_uint_eq(ss.digest, sp.digest);
    ck_assert_uint_eq(ss.keys, sp.keys);
    /* three queues, three slots: three MULTI/EXEC pairs */
    ck_assert_uint_eq(ss.commands, sp.commands + 6);
    cmds it = {.p = slotted.p, .n = slotted.len};
    unsigned last_slot = 0;
    int in_block = 0, blocks = 0;
    size_t n = 0;
    while (next_cmd(&it)) {
        const emq_resp_cmd *c = &it.c;
        if (n++ == 0) {
            ck_assert(ARG(c, 0, "SET") && ARG(c, 1, "{emq}:version"));
            continue;
        }
        if (ARG(c, 0, "ECHO")) { /* the end record, last, outside */
            ck_assert(!in_block);
            ck_assert_uint_eq(it.pos, slotted.len);
            continue;
        }
        if (ARG(c, 0, "MULTI")) {
            ck_assert(!in_block);
            in_block = 1;
            blocks++;
            continue;
        }
        if (ARG(c, 0, "EXEC")) {
            ck_assert(in_block);
            in_block = 0;
            continue;
        }
        ck_assert(in_block);
        unsigned slot = emq_slot(c->argv[1], c->lens[1]);
        ck_assert_uint_ge(slot, last_slot);
        last_slot = slot;
    }
    ck_assert_int_eq(blocks, 3);
    ck_assert(!in_block);
    /* Importing it rebuilds the same keyspace as the plain export. */
    ck_assert_msg(emq_import(b, slotted.p, slotted.len, &si) == EMQ_OK, "%s",
                  emq_errmsg(b));
    ck_assert_uint_eq(si.digest, sp.digest);
    export_to(b, NULL, &again, &sa);
    ck_assert_uint_eq(again.len, plain.len);
    ck_assert_mem_eq(again.p, plain.p, plain.len);
    emq_resp_cmd_free(&it.c);
    emq_buf_free(&plain);
    emq_buf_free(&slotted);
    emq_buf_free(&again);
    emq_close(a);
    emq_close(b);
}
END_TEST

START_TEST(queue_filter_exports_only_those_queues_and_the_fence)
{
    emq_db *a = open_db();
    emq_buf x = {0};
    emq_transfer_summary s, d;
    emq_export_options o;
    const char *qs[] = {"zz-other", "a.b", "zz-other"};
    build(a);
    emq_export_options_init(&o);
    o.queues = qs;
    o.n_queues = 3;
    export_to(a, &o, &x, &s);
    cmds it = {.p = x.p, .n = x.len};
    size_t keys_other = 0, keys_ab = 0, n = 0;
    while (next_cmd(&it)) {
        const emq_resp_cmd *c = &it.c;
        if (n++ == 0 || it.pos == x.len) /* the fence, the end record */
            continue;
        if (c->lens[1] >= 15 && memcmp(c->argv[1], "emq:{zz-other}:", 15) == 0)
            keys_other++;
        else if (memcmp(c->argv[1], "emq:{a.b}:", 10) == 0)
            keys_ab++;
        else
            ck_abort_msg("a key of another queue was exported");
    }
    /* zz-other: row, pending, meta; a.b: the outbox; plus the fence */
    ck_assert_uint_eq(keys_other, 3);
    ck_assert_uint_eq(keys_ab, 1);
    ck_assert_uint_eq(s.keys, 5);
    ck_assert_int_eq(emq_digest(a, &o, &d), EMQ_OK);
    ck_assert_uint_eq(d.digest, s.digest);
    ck_assert_uint_eq(d.keys, s.keys);
    ck_assert(d.digest != digest_of(a));
    const char *bad[] = {"no{brace}"};
    o.queues = bad;
    o.n_queues = 1;
    ck_assert_int_eq(emq_export(a, &o, to_buf, &x, &s), EMQ_EINVAL);
    emq_resp_cmd_free(&it.c);
    emq_buf_free(&x);
    emq_close(a);
}
END_TEST

/* The digest as doc/EXPORT.md §3 defines it, computed by hand. */
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
    XXH3_64bits_update(h, p, n);
}
static void h_head(XXH3_state_t *h, const char *k, char type, int64_t exp)
{
    h_str(h, k, strlen(k));
    XXH3_64bits_update(h, &type, 1);
    h_u64(h, (uint64_t)exp);
}

static int small_keyspace(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    (void)db;
    (void)ctx;
    int64_t len;
#define K(s) s, sizeof(s) - 1
    emq_bytes fv[4] = {{"zeta", 4}, {"1", 1}, {"alpha", 5}, {"x\0", 2}};
    ck_assert_int_eq(emq_hash_set(st, K("emq:{q}:job:JOB00000000001"), fv, 2,
                                  NULL), EMQ_OK);
    int done;
    ck_assert_int_eq(emq_hash_expire_at(st, K("emq:{q}:job:JOB00000000001"),
                                        "zeta", 4, now + 5, &done), EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("emq:{q}:active"), "b", 1, -0.0, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_zset_add(st, K("emq:{q}:active"), "a", 1, 7, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("emq:{q}:wake"), 1, "1", 1, &len),
                     EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, K("emq:{q}:wake"), 1, "2", 1, &len),
                     EMQ_OK);
    ck_assert_int_eq(emq_sset_add(st, K("emq:{q}:paused"), "y", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_sset_add(st, K("emq:{q}:paused"), "x", 1, NULL), EMQ_OK);
    ck_assert_int_eq(emq_str_set(st, K("emq:{q}:limiter"), "9", 1, now + 100,
                                 0, NULL), EMQ_OK);
#undef K
    return EMQ_OK;
}

START_TEST(digest_matches_the_documented_serialisation)
{
    emq_db *db = open_db();
    clock_now = T0;
    ck_assert_int_eq(emq_db_run(db, 1, small_keyspace, NULL), EMQ_OK);
    XXH3_state_t *h = XXH3_createState();
    XXH3_64bits_reset(h);
    double zero = 0, seven = 7;
    uint64_t bz, b7;
    memcpy(&bz, &zero, 8);
    memcpy(&b7, &seven, 8);
    /* memcmp order: active, job:..., limiter, paused, wake, {emq}:version */
    h_head(h, "emq:{q}:active", 'z', -1);
    h_u64(h, 2);
    h_str(h, "b", 1);
    h_u64(h, bz);
    h_str(h, "a", 1);
    h_u64(h, b7);
    h_head(h, "emq:{q}:job:JOB00000000001", 'h', -1);
    h_u64(h, 2);
    h_str(h, "alpha", 5);
    h_str(h, "x\0", 2);
    h_u64(h, (uint64_t)-1);
    h_str(h, "zeta", 4);
    h_str(h, "1", 1);
    h_u64(h, (uint64_t)(T0 + 5));
    h_head(h, "emq:{q}:limiter", 's', T0 + 100);
    h_str(h, "9", 1);
    h_head(h, "emq:{q}:paused", 'S', -1);
    h_u64(h, 2);
    h_str(h, "x", 1);
    h_str(h, "y", 1);
    h_head(h, "emq:{q}:wake", 'l', -1);
    h_u64(h, 2);
    h_str(h, "1", 1);
    h_str(h, "2", 1);
    h_head(h, "{emq}:version", 's', -1);
    h_str(h, "echomq:4.0.0", 12);
    uint64_t want = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    emq_transfer_summary s;
    ck_assert_int_eq(emq_digest(db, NULL, &s), EMQ_OK);
    ck_assert_uint_eq(s.keys, 6);
    ck_assert_msg(s.digest == want, "digest %016llx, documented %016llx",
                  (unsigned long long)s.digest, (unsigned long long)want);
    emq_buf x = {0};
    export_to(db, NULL, &x, &s);
    ck_assert_uint_eq(s.digest, want);
    /* Past the field's expiry the field is gone, and so is its record. */
    clock_now = T0 + 6;
    ck_assert(digest_of(db) != want);
    emq_buf_free(&x);
    emq_close(db);
}
END_TEST

/* ------------------------------------------------------- refusals */

/* A valid stream prefix (writes that must be rolled back) plus `tail`. */
static void refused(const char *tail, size_t tlen, int want_rc,
                    const char *want_fmt)
{
    char want_msg[200];
    emq_db *db = open_db();
    build(db);
    uint64_t before = digest_of(db);
    emq_buf s = {0};
    emq_bytes v[3] = {{"SET", 3}, {"{emq}:version", 13}, {"echomq:4.0.0", 12}};
    emq_bytes h[4] = {{"HSET", 4}, {"emq:{mail}:meta", 15}, {"max", 3},
                      {"5", 1}};
    emq_bytes z[4] = {{"ZADD", 4}, {"emq:{new}:pending", 17}, {"0", 1},
                      {"JOB00000000009", 14}};
    ck_assert_int_eq(emq_resp_write_cmd(&s, 3, v), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_cmd(&s, 4, h), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_cmd(&s, 4, z), EMQ_OK);
    /* The refused frame starts right after the three good ones. */
    snprintf(want_msg, sizeof want_msg, want_fmt, s.len);
    ck_assert_int_eq(emq_buf_append(&s, tail, tlen), EMQ_OK);
    emq_transfer_summary sum;
    int rc = emq_import(db, s.p, s.len, &sum);
    ck_assert_msg(rc == want_rc, "import %d (%s), want %d", rc,
                  emq_errmsg(db), want_rc);
    ck_assert_msg(strstr(emq_errmsg(db), want_msg) != NULL,
                  "message '%s' lacks '%s'", emq_errmsg(db), want_msg);
    ck_assert_uint_eq(digest_of(db), before);
    emq_buf_free(&s);
    emq_close(db);
}

/* want_fmt's %zu is the offset of the refused frame. */
#define PREFIX "%zu"

START_TEST(import_refuses_an_unknown_command_with_its_offset)
{
    static const char t[] = "*2\r\n$3\r\nDEL\r\n$15\r\nemq:{mail}:meta\r\n";
    refused(t, sizeof t - 1, EMQ_EPROTO,
            "at byte " PREFIX ": unknown command 'DEL'");
}
END_TEST

START_TEST(import_refuses_a_key_outside_the_grammar)
{
    static const char t[] = "*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$1\r\n1\r\n";
    refused(t, sizeof t - 1, EMQ_EPROTO,
            "at byte " PREFIX ": key outside the EchoMQ grammar 'foo'");
}
END_TEST

START_TEST(import_refuses_a_key_of_the_wrong_type)
{
    static const char t[] =
        "*4\r\n$4\r\nHSET\r\n$17\r\nemq:{mail}:active\r\n$1\r\nf\r\n$1\r\nv\r\n";
    refused(t, sizeof t - 1, EMQ_EPROTO, "at byte " PREFIX ": wrong type");
}
END_TEST

START_TEST(import_refuses_a_truncated_stream)
{
    static const char t[] = "*3\r\n$3\r\nSET\r\n$16\r\nemq:{mail}:de:x1\r\n$4\r\nJO";
    refused(t, sizeof t - 1, EMQ_EPROTO, "at byte " PREFIX ": truncated");
}
END_TEST

START_TEST(import_refuses_malformed_resp)
{
    static const char t[] = "PING\r\n";
    refused(t, sizeof t - 1, EMQ_EPROTO, "at byte " PREFIX ": malformed RESP");
}
END_TEST

START_TEST(import_refuses_bad_arguments)
{
    static const char t[] =
        "*4\r\n$4\r\nZADD\r\n$15\r\nemq:{mail}:dead\r\n$2\r\nNX\r\n$1\r\nj\r\n";
    refused(t, sizeof t - 1, EMQ_EPROTO, "at byte " PREFIX ": bad score 'NX'");
}
END_TEST

START_TEST(import_refuses_another_wire)
{
    static const char t[] =
        "*3\r\n$3\r\nSET\r\n$13\r\n{emq}:version\r\n$12\r\necho" "mq:2.0.0\r\n";
    refused(t, sizeof t - 1, EMQ_EWIRE, "at byte " PREFIX);
}
END_TEST

/* Issue 28: an export states the identity asked for (else the file's);
 * an import into an empty file keeps the stream's, into a file holding
 * keys of another identity it is refused with nothing written. */
START_TEST(import_and_export_keep_the_wire_identity)
{
    emq_db *db = open_db(), *back = open_db(), *full = open_db();
    emq_buf s = {0};
    emq_export_options eo;
    emq_transfer_summary es, is;
    const char *w;
    build(db);
    build(full);
    emq_export_options_init(&eo);
    eo.wire = "echomq:2.0.0";
    ck_assert_int_eq(emq_export(db, &eo, to_buf, &s, &es), EMQ_EINVAL);
    ck_assert_uint_eq(s.len, 0);
    eo.wire = "echomq:3.0.0";
    ck_assert_int_eq(emq_export(db, &eo, to_buf, &s, &es), EMQ_OK);
    ck_assert_mem_eq(s.p, "*3\r\n$3\r\nSET\r\n$13\r\n{emq}:version\r\n$12\r\n"
                     "echomq:3.0.0\r\n", 45);
    ck_assert_int_eq(emq_import(back, s.p, s.len, &is), EMQ_OK);
    ck_assert_int_eq(emq_wire(back, &w), EMQ_OK);
    ck_assert_str_eq(w, "echomq:3.0.0");
    ck_assert_uint_eq(is.digest, es.digest);
    ck_assert_uint_ne(digest_of(db), es.digest); /* the version record */
    /* the file's own identity is what a plain export states */
    emq_buf s2 = {0};
    ck_assert_int_eq(emq_export(back, NULL, to_buf, &s2, &is), EMQ_OK);
    ck_assert_uint_eq(s2.len, s.len);
    ck_assert_mem_eq(s2.p, s.p, s.len);
    /* a file holding keys keeps its identity: refused, nothing written */
    uint64_t before = digest_of(full);
    ck_assert_int_eq(emq_import(full, s.p, s.len, NULL), EMQ_EWIRE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(full), "at byte 0"));
    ck_assert_ptr_nonnull(strstr(emq_errmsg(full), "speaks echomq:4.0.0"));
    ck_assert_uint_eq(digest_of(full), before);
    emq_buf_free(&s);
    emq_buf_free(&s2);
    emq_close(db);
    emq_close(back);
    emq_close(full);
}
END_TEST

/* A stream of commands given as NULL-separated words. */
static void words(emq_buf *s, const char *const *w)
{
    while (*w) {
        emq_bytes a[16];
        size_t n = 0;
        for (; *w; w++)
            a[n++] = (emq_bytes){*w, strlen(*w)};
        ck_assert_int_eq(emq_resp_write_cmd(s, n, a), EMQ_OK);
        w++;
    }
}

static int import_aof(emq_db *db, const emq_buf *s, int aof)
{
    emq_import_options o;
    emq_importer *im;
    emq_import_options_init(&o);
    o.aof = aof;
    if (!aof) o.format = EMQ_IMPORT_RAW; /* hand-written: no end record */
    ck_assert_int_eq(emq_import_begin(db, &o, &im), EMQ_OK);
    int rc = emq_import_feed(im, s->p, s->len);
    if (rc != EMQ_OK) {
        emq_import_abort(im);
        return rc;
    }
    return emq_import_finish(im, NULL);
}

/* Issue 28: an AOF's forms, applied as Valkey applies them, leave what an
 * export of the same end state leaves. */
START_TEST(import_aof_applies_valkeys_forms_as_valkey_does)
{
    static const char *const aof[] = {
        "SELECT", "0", NULL,
        "SET", "{emq}:version", "echomq:3.0.0", "NX", NULL,
        "MULTI", NULL,
        "HMSET", "emq:{q}:meta", "a", "1", "b", "2", "c", "3", NULL,
        "HDEL", "emq:{q}:meta", "b", NULL,
        "HINCRBY", "emq:{q}:meta", "a", "41", NULL,
        "HSETNX", "emq:{q}:meta", "a", "no", NULL,
        "HSETNX", "emq:{q}:meta", "d", "4", NULL,
        "EXEC", NULL,
        "RPUSH", "emq:{q}:wake", "x", "1", "1", "1", NULL,
        "LPOP", "emq:{q}:wake", NULL,
        "RPOP", "emq:{q}:wake", "1", NULL,
        "LPUSH", "emq:{q}:ring", "GRP00000000001", "GRP00000000002",
        "GRP00000000003", NULL,
        "LREM", "emq:{q}:ring", "0", "GRP00000000002", NULL,
        "LMOVE", "emq:{q}:ring", "emq:{q}:ring", "LEFT", "RIGHT", NULL,
        "LTRIM", "emq:{q}:ring", "0", "0", NULL,
        "SADD", "emq:{q}:paused", "GRP00000000001", "GRP00000000002", NULL,
        "SREM", "emq:{q}:paused", "GRP00000000001", NULL,
        "ZADD", "emq:{q}:repeat", "1", "r1", "2", "r2", "3", "r3", NULL,
        "ZREM", "emq:{q}:repeat", "r2", NULL,
        "ZPOPMIN", "emq:{q}:repeat", NULL,
        "SET", "emq:{q}:limiter", "5", NULL,
        "INCRBY", "emq:{q}:limiter", "10", NULL,
        "DECR", "emq:{q}:limiter", NULL,
        "PEXPIRE", "emq:{q}:limiter", "5000", NULL,
        "RPUSH", "emq:{gone}:ring", "z", NULL,
        "UNLINK", "emq:{gone}:ring", NULL,
        NULL };
    char at[32];
    snprintf(at, sizeof at, "%lld", (long long)(T0 + 5000));
    const char *const fin[] = {
        "SET", "{emq}:version", "echomq:3.0.0", NULL,
        "HSET", "emq:{q}:meta", "a", "42", "c", "3", "d", "4", NULL,
        "RPUSH", "emq:{q}:wake", "1", "1", NULL,
        "RPUSH", "emq:{q}:ring", "GRP00000000001", NULL,
        "SADD", "emq:{q}:paused", "GRP00000000002", NULL,
        "ZADD", "emq:{q}:repeat", "3", "r3", NULL,
        "SET", "emq:{q}:limiter", "14", "PXAT", at, NULL,
        NULL };
    emq_db *a = open_db(), *b = open_db();
    emq_buf sa = {0}, sb = {0};
    clock_now = T0;
    words(&sa, aof);
    words(&sb, fin);
    { int r_ = import_aof(a, &sa, 1); ck_assert_msg(r_ == EMQ_OK, "%d %s", r_, emq_errmsg(a)); }
    ck_assert_int_eq(import_aof(b, &sb, 0), EMQ_OK);
    ck_assert_uint_eq(digest_of(a), digest_of(b));
    /* without the option the AOF's own commands are refused, naming it */
    emq_db *c = open_db();
    emq_buf sc = {0};
    static const char *const hm[] = { "SET", "{emq}:version", EMQ_WIRE,
        NULL, "HMSET", "emq:{q}:meta", "a", "1", NULL, NULL };
    words(&sc, hm);
    ck_assert_int_eq(import_aof(c, &sc, 0), EMQ_EPROTO);
    emq_buf_free(&sc);
    ck_assert_msg(strstr(emq_errmsg(c), "unknown command 'HMSET'"), "%s", emq_errmsg(c));
    ck_assert_ptr_nonnull(strstr(emq_errmsg(c), "--aof"));
    /* FLUSHALL empties the keyspace, the file's keys with it */
    emq_buf sf = {0};
    static const char *const fl[] = { "FLUSHALL", NULL,
        "HSET", "emq:{z}:meta", "k", "v", NULL, NULL };
    words(&sf, fl);
    ck_assert_int_eq(import_aof(a, &sf, 1), EMQ_OK);
    emq_buf sz = {0};
    static const char *const fz[] = { "SET", "{emq}:version", "echomq:3.0.0",
        NULL, "HSET", "emq:{z}:meta", "k", "v", NULL, NULL };
    emq_db *z = open_db();
    words(&sz, fz);
    ck_assert_int_eq(import_aof(z, &sz, 0), EMQ_OK);
    ck_assert_uint_eq(digest_of(a), digest_of(z));
    /* refusals name the byte offset and the command; nothing is written */
    uint64_t before = digest_of(a);
    emq_buf s1 = {0};
    static const char *const bad1[] = { "DEL", "emq:{z}:meta", NULL,
        "SELECT", "1", NULL, NULL };
    words(&s1, bad1);
    ck_assert_int_eq(import_aof(a, &s1, 1), EMQ_EPROTO);
    ck_assert_msg(strstr(emq_errmsg(a), "at byte 32: SELECT"), "%s", emq_errmsg(a));
    ck_assert_uint_eq(digest_of(a), before);
    emq_buf s2 = {0};
    static const char *const bad2[] = { "HDEL", "emq:{z}:pending", "x",
        NULL, NULL };
    words(&s2, bad2);
    ck_assert_int_eq(import_aof(a, &s2, 1), EMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(a), "at byte 0: wrong type"));
    emq_buf s3 = {0};
    ck_assert_int_eq(emq_buf_append(&s3, "REDIS0011\xfa", 10), EMQ_OK);
    ck_assert_int_eq(import_aof(a, &s3, 1), EMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(a), "at byte 0: 'REDIS...' is "
                                 "an RDB file"));
    ck_assert_ptr_nonnull(strstr(emq_errmsg(a), "emqlite pull"));
    ck_assert_uint_eq(digest_of(a), before);
    emq_buf *bufs[] = { &sa, &sb, &sf, &sz, &s1, &s2, &s3 };
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        emq_buf_free(bufs[i]);
    emq_close(a);
    emq_close(b);
    emq_close(c);
    emq_close(z);
}
END_TEST

START_TEST(import_refuses_a_stream_without_the_fence)
{
    emq_db *db = open_db();
    build(db);
    uint64_t before = digest_of(db);
    static const char t[] = "*4\r\n$4\r\nHSET\r\n$15\r\nemq:{mail}:meta\r\n"
                            "$3\r\nmax\r\n$1\r\n5\r\n";
    ck_assert_int_eq(emq_import(db, t, sizeof t - 1, NULL), EMQ_EWIRE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "{emq}:version"));
    ck_assert_uint_eq(digest_of(db), before);
    ck_assert_int_eq(emq_import(db, "", 0, NULL), EMQ_EWIRE);
    ck_assert_uint_eq(digest_of(db), before);
    emq_close(db);
}
END_TEST

START_TEST(import_ignores_select_multi_exec_and_applies_aof_forms)
{
    emq_db *db = open_db();
    emq_buf s = {0};
    emq_bytes c1[2] = {{"SELECT", 6}, {"0", 1}};
    emq_bytes c2[1] = {{"multi", 5}};
    emq_bytes c3[3] = {{"set", 3}, {"{emq}:version", 13}, {"echomq:4.0.0", 12}};
    emq_bytes c4[5] = {{"SET", 3}, {"emq:{q}:job:JOB00000000001:lock", 31},
                       {"1", 1}, {"PXAT", 4}, {"1767225700000", 13}};
    emq_bytes c5[1] = {{"EXEC", 4}};
    emq_bytes c6[3] = {{"PEXPIREAT", 9}, {"emq:{q}:de:gone", 15},
                       {"1767225700000", 13}};
    emq_bytes c7[6] = {{"RPUSH", 5}, {"emq:{q}:job:JOB00000000001:logs", 31},
                       {"g1", 2}, {"g2", 2}, {"g1", 2}, {"", 0}};
    ck_assert_int_eq(emq_resp_write_cmd(&s, 2, c1), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_cmd(&s, 1, c2), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_cmd(&s, 3, c3), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_cmd(&s, 5, c4), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_cmd(&s, 1, c5), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_cmd(&s, 3, c6), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_cmd(&s, 6, c7), EMQ_OK);
    emq_transfer_summary sum;
    ck_assert_msg(rel_import_raw(db, s.p, s.len, &sum) == EMQ_OK, "%s",
                  emq_errmsg(db));
    ck_assert_uint_eq(sum.commands, 7);
    ck_assert_uint_eq(sum.keys, 3); /* version, lock, logs */
    emq_buf x = {0};
    emq_transfer_summary sx;
    export_to(db, NULL, &x, &sx);
    static const char want[] =
        "*3\r\n$3\r\nSET\r\n$13\r\n{emq}:version\r\n$12\r\necho" "mq:4.0.0\r\n"
        "*3\r\n$3\r\nSET\r\n$31\r\nemq:{q}:job:JOB00000000001:lock\r\n$1\r\n1\r\n"
        "*3\r\n$9\r\nPEXPIREAT\r\n$31\r\nemq:{q}:job:JOB00000000001:lock\r\n"
        "$13\r\n1767225700000\r\n"
        "*6\r\n$5\r\nRPUSH\r\n$31\r\nemq:{q}:job:JOB00000000001:logs\r\n"
        "$2\r\ng1\r\n$2\r\ng2\r\n$2\r\ng1\r\n$0\r\n\r\n";
    ck_assert_uint_gt(x.len, sizeof want - 1); /* then the end record */
    ck_assert_mem_eq(x.p, want, sizeof want - 1);
    ck_assert_uint_eq(sx.digest, sum.digest);
    emq_buf_free(&x);
    emq_buf_free(&s);
    emq_close(db);
}
END_TEST

static int failing_sink(void *ctx, const void *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n;
    return -1;
}

START_TEST(a_failing_sink_fails_the_export)
{
    emq_db *db = open_db();
    emq_transfer_summary s;
    build(db);
    ck_assert_int_eq(emq_export(db, NULL, failing_sink, NULL, &s), EMQ_EIO);
    ck_assert(emq_errmsg(db)[0] != '\0');
    ck_assert_int_eq(emq_export(db, NULL, NULL, NULL, &s), EMQ_EINVAL);
    emq_close(db);
}
END_TEST


/* --------------------------------- imports the checker would reject */

#define J1 "JOB00000000001"
#define ROW "emq:{q}:job:" J1
#define FAR "4102444800000"

/* One command of a case: up to 8 arguments, NULL-terminated. */
typedef struct icmd {
    const char *argv[9];
} icmd;

/* A stream (after the version SET) holding exactly one state emq_check
 * calls a violation (issue 12, item 4), the command whose offset the
 * refusal must name, and the checker's code for it. */
typedef struct icase {
    const char *name;
    icmd cmds[3];
    int blamed;        /* index in cmds of the last command writing the key */
    const char *code;
} icase;

static const icase bad_imports[] = {
    { "a pending score of 5",
      {{{"ZADD", "emq:{q}:pending", "5", J1, NULL}}}, 0, "score" },
    { "a pending member that is no id",
      {{{"ZADD", "emq:{q}:pending", "0", "!!!!!!!!!!!!!!", NULL}}}, 0,
      "member" },
    { "a pending member that is not a JOB id",
      {{{"ZADD", "emq:{q}:pending", "0", "ORD0SWQMnG3jRB", NULL}}}, 0,
      "member" },
    { "an active score of inf",
      {{{"ZADD", "emq:{q}:active", "inf", J1, NULL}}}, 0, "score" },
    { "a schedule score of 1.5",
      {{{"ZADD", "emq:{q}:schedule", "1.5", J1, NULL}}}, 0, "score" },
    { "a row state bogus",
      {{{"HSET", ROW, "state", "bogus", NULL}}}, 0, "state" },
    { "a row with no state",
      {{{"HSET", ROW, "payload", "x", "attempts", "0", NULL}}}, 0, "row" },
    { "an orphan pending row",
      {{{"HSET", ROW, "state", "pending", "attempts", "0", "payload", "x",
         NULL}}}, 0, "state-set" },
    { "attempts -3",
      {{{"HSET", ROW, "state", "dead", "attempts", "-3", NULL}},
       {{"ZADD", "emq:{q}:dead", "0", J1, NULL}}}, 0, "counter" },
    { "PEXPIREAT on the pending set",
      {{{"ZADD", "emq:{q}:pending", "0", J1, NULL}},
       {{"PEXPIREAT", "emq:{q}:pending", FAR, NULL}}}, 1, "expiry" },
    { "HPEXPIREAT on the state field",
      {{{"HSET", ROW, "state", "dead", NULL}},
       {{"ZADD", "emq:{q}:dead", "0", J1, NULL}},
       {{"HPEXPIREAT", ROW, FAR, "FIELDS", "1", "state", NULL}}}, 2,
      "expiry" },
};

/* The stream of case `c`; offs[i] receives the offset of command i. */
static void bad_stream(const icase *c, emq_buf *s, size_t offs[3])
{
    emq_bytes v[3] = {{"SET", 3}, {"{emq}:version", 13}, {"echomq:4.0.0", 12}};
    s->len = 0;
    ck_assert_int_eq(emq_resp_write_cmd(s, 3, v), EMQ_OK);
    for (size_t i = 0; i < 3 && c->cmds[i].argv[0]; i++) {
        emq_bytes a[8];
        size_t n = 0;
        for (; c->cmds[i].argv[n]; n++)
            a[n] = (emq_bytes){c->cmds[i].argv[n],
                               strlen(c->cmds[i].argv[n])};
        offs[i] = s->len;
        ck_assert_int_eq(emq_resp_write_cmd(s, n, a), EMQ_OK);
    }
}

typedef struct codes {
    const char *want;
    size_t seen, violations;
} codes;

static void count_code(void *ctx, const emq_finding *f)
{
    codes *c = ctx;
    if (f->severity != EMQ_CHECK_VIOLATION)
        return;
    c->violations++;
    c->seen += strcmp(f->code, c->want) == 0;
}

/* Refused, with the rule and the offset, nothing applied; imported under
 * `unchecked`, after which emq_check reports exactly that violation. */
START_TEST(import_refuses_what_the_checker_rejects)
{
    const icase *c = &bad_imports[_i];
    emq_db *db = open_db();
    emq_buf s = {0};
    size_t offs[3] = {0, 0, 0};
    char want[160];
    emq_transfer_summary before, after;
    build(db);
    bad_stream(c, &s, offs);
    ck_assert_int_eq(emq_digest(db, NULL, &before), EMQ_OK);
    int rc = rel_import_raw(db, s.p, s.len, NULL);
    ck_assert_msg(rc == EMQ_EPROTO, "%s: import %d (%s)", c->name, rc,
                  emq_errmsg(db));
    snprintf(want, sizeof want, "import refused at byte %zu: %s violation on ",
             offs[c->blamed], c->code);
    ck_assert_msg(strncmp(emq_errmsg(db), want, strlen(want)) == 0,
                  "%s: message '%s', want '%s...'", c->name, emq_errmsg(db),
                  want);
    ck_assert_int_eq(emq_digest(db, NULL, &after), EMQ_OK);
    ck_assert_uint_eq(after.digest, before.digest);
    ck_assert_uint_eq(after.keys, before.keys);
    ck_assert_int_eq(emq_check(db, NULL, NULL, NULL), EMQ_OK);

    /* A forensic copy takes it as it is. */
    emq_import_options o;
    emq_importer *im;
    emq_import_options_init(&o);
    o.unchecked = 1;
    o.format = EMQ_IMPORT_RAW;
    ck_assert_int_eq(emq_import_begin(db, &o, &im), EMQ_OK);
    ck_assert_int_eq(emq_import_feed(im, s.p, s.len), EMQ_OK);
    ck_assert_msg(emq_import_finish(im, NULL) == EMQ_OK, "%s: %s", c->name,
                  emq_errmsg(db));
    codes k = {c->code, 0, 0};
    ck_assert_int_eq(emq_check(db, count_code, &k, NULL), EMQ_ECORRUPT);
    ck_assert_msg(k.violations == 1 && k.seen == 1,
                  "%s: %zu violations, %zu of code %s", c->name,
                  k.violations, k.seen, c->code);
    emq_buf_free(&s);
    emq_close(db);
}
END_TEST

/* A file the checker finds clean imports the same, whole or fed in any
 * split; the pieces of a refused stream leave nothing either. */
START_TEST(streaming_import_in_any_split_is_the_whole_import)
{
    emq_db *src = open_db(), *a = open_db(), *b = open_db();
    emq_buf x = {0}, y = {0};
    emq_transfer_summary sx, sa, sb;
    build(src);
    export_to(src, NULL, &x, &sx);
    ck_assert_msg(emq_import(a, x.p, x.len, &sa) == EMQ_OK, "%s",
                  emq_errmsg(a));
    for (size_t step = 1; step < 700; step = step * 3 + 1) {
        emq_db *c = open_db();
        emq_importer *im;
        ck_assert_int_eq(emq_import_begin(c, NULL, &im), EMQ_OK);
        /* the handle is the import's until it ends */
        ck_assert_int_lt(emq_queue_pause(c, "mail"), 0);
        for (size_t i = 0; i < x.len; i += step)
            ck_assert_int_eq(emq_import_feed(im, x.p + i, i + step < x.len
                                             ? step : x.len - i), EMQ_OK);
        ck_assert_msg(emq_import_finish(im, &sb) == EMQ_OK, "%s",
                      emq_errmsg(c));
        ck_assert_uint_eq(sb.digest, sa.digest);
        ck_assert_uint_eq(sb.commands, sa.commands);
        ck_assert_uint_eq(sb.bytes, x.len);
        export_to(c, NULL, &y, &sb);
        ck_assert_uint_eq(y.len, x.len);
        ck_assert_mem_eq(y.p, x.p, x.len);
        emq_close(c);
    }
    ck_assert_uint_eq(sa.digest, sx.digest);
    /* A refusal is sticky and rolls back at once. */
    emq_importer *im;
    ck_assert_int_eq(emq_import_begin(b, NULL, &im), EMQ_OK);
    ck_assert_int_eq(emq_import_feed(im, x.p, 52), EMQ_OK); /* the fence */
    ck_assert_int_eq(emq_import_feed(im, "PING\r\n", 6), EMQ_EPROTO);
    ck_assert_int_eq(emq_import_feed(im, x.p + 52, x.len - 52), EMQ_EPROTO);
    ck_assert_int_eq(emq_queue_pause(b, "mail"), EMQ_OK); /* the handle is free */
    ck_assert_int_eq(emq_import_finish(im, NULL), EMQ_EPROTO);
    /* A truncated end, and an abort, leave nothing. */
    ck_assert_int_eq(emq_digest(b, NULL, &sb), EMQ_OK);
    ck_assert_int_eq(emq_import_begin(b, NULL, &im), EMQ_OK);
    ck_assert_int_eq(emq_import_feed(im, x.p, x.len - 1), EMQ_OK);
    ck_assert_int_eq(emq_import_finish(im, NULL), EMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(b), "truncated frame"));
    ck_assert_int_eq(emq_import_begin(b, NULL, &im), EMQ_OK);
    ck_assert_int_eq(emq_import_feed(im, x.p, x.len), EMQ_OK);
    emq_import_abort(im);
    ck_assert_int_eq(emq_digest(b, NULL, &sa), EMQ_OK);
    ck_assert_uint_eq(sa.digest, sb.digest);
    emq_buf_free(&x);
    emq_buf_free(&y);
    emq_close(src);
    emq_close(a);
    emq_close(b);
}
END_TEST

/* Issue 27 item 7: an export cut anywhere — at a command boundary
 * included — is refused, naming where it ends, with nothing applied; the
 * whole export imports. The export ends with its end record, a harmless
 * ECHO carrying the commands, bytes and XXH3-64 of what came before. */
START_TEST(a_cut_export_is_refused_wherever_it_is_cut)
{
    emq_db *src = open_db();
    emq_buf x = {0};
    emq_transfer_summary sx;
    build(src);
    export_to(src, NULL, &x, &sx);
    /* The last command is the end record, and it states what came before. */
    cmds st = {.p = x.p, .n = x.len};
    size_t ncmd = 0, last = 0;
    while (next_cmd(&st)) {
        ncmd++;
        last = (size_t)st.c.offset;
        if (st.pos == x.len) {
            char want[120];
            ck_assert(ARG(&st.c, 0, "ECHO"));
            ck_assert_uint_eq(st.c.argc, 2);
            snprintf(want, sizeof want, "emqlite-export-end 1 commands=%zu "
                     "bytes=%zu xxh3=%016llx", ncmd - 1, last,
                     (unsigned long long)XXH3_64bits(x.p, last));
            ck_assert_uint_eq(st.c.lens[1], strlen(want));
            ck_assert_mem_eq(st.c.argv[1], want, strlen(want));
        }
    }
    ck_assert_uint_eq(sx.commands, ncmd);
    /* Every cut at a command boundary, and a few inside commands. */
    cmds cs = {.p = x.p, .n = x.len};
    size_t cuts = 0;
    for (;;) {
        size_t at = cs.pos;
        for (int inside = 0; inside < 2; inside++) {
            size_t cut = inside ? at + 3 : at;
            if (cut >= x.len)
                continue;
            emq_db *db = open_db();
            uint64_t before = digest_of(db);
            int rc = emq_import(db, x.p, cut, NULL);
            ck_assert_msg(rc == (cut == 0 ? EMQ_EWIRE : EMQ_EPROTO),
                          "cut at %zu of %zu imported: %d %s", cut, x.len, rc,
                          emq_errmsg(db));
            if (cut >= 52 && !inside) {
                char want[80];
                snprintf(want, sizeof want, "import refused at byte %zu: the "
                         "stream ends", cut);
                ck_assert_msg(strstr(emq_errmsg(db), want) != NULL,
                              "cut at %zu: '%s'", cut, emq_errmsg(db));
                ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "end record"));
            }
            ck_assert_uint_eq(digest_of(db), before);
            emq_close(db);
            cuts++;
        }
        if (!next_cmd(&cs))
            break;
    }
    ck_assert_uint_ge(cuts, 2 * ncmd - 2);
    /* An end record that does not match what came before is refused. */
    emq_buf y = {0};
    ck_assert_int_eq(emq_buf_append(&y, x.p, x.len), EMQ_OK);
    y.p[100] ^= 1; /* inside a value: still valid RESP */
    emq_db *db = open_db();
    ck_assert_int_eq(emq_import(db, y.p, y.len, NULL), EMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "end record"));
    ck_assert_int_eq(emq_import(db, x.p, x.len, NULL), EMQ_OK);
    /* Nothing may follow the end record. */
    y.len = 0;
    ck_assert_int_eq(emq_buf_append(&y, x.p, x.len), EMQ_OK);
    ck_assert_int_eq(emq_buf_append(&y, x.p, 52), EMQ_OK);
    emq_close(db);
    db = open_db();
    ck_assert_int_eq(emq_import(db, y.p, y.len, NULL), EMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "after the export's end "
                                                 "record"));
    emq_db *empty = open_db();
    ck_assert_uint_eq(digest_of(db), digest_of(empty));
    emq_close(empty);
    emq_close(db);
    emq_resp_cmd_free(&st.c);
    emq_resp_cmd_free(&cs.c);
    emq_buf_free(&x);
    emq_buf_free(&y);
    emq_close(src);
}
END_TEST

Suite *suite_transfer(void)
{
    Suite *s = suite_create("transfer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, export_starts_with_the_fence_and_is_deterministic);
    tcase_add_test(tc, export_commands_follow_the_documented_shapes);
    tcase_add_test(tc, export_import_export_is_byte_exact);
    tcase_add_test(tc, by_slot_export_groups_slots_and_keeps_the_digest);
    tcase_add_test(tc, queue_filter_exports_only_those_queues_and_the_fence);
    tcase_add_test(tc, digest_matches_the_documented_serialisation);
    tcase_add_test(tc, import_refuses_an_unknown_command_with_its_offset);
    tcase_add_test(tc, import_refuses_a_key_outside_the_grammar);
    tcase_add_test(tc, import_refuses_a_key_of_the_wrong_type);
    tcase_add_test(tc, import_refuses_a_truncated_stream);
    tcase_add_test(tc, import_refuses_malformed_resp);
    tcase_add_test(tc, import_refuses_bad_arguments);
    tcase_add_test(tc, import_refuses_another_wire);
    tcase_add_test(tc, import_and_export_keep_the_wire_identity);
    tcase_add_test(tc, import_aof_applies_valkeys_forms_as_valkey_does);
    tcase_add_test(tc, import_refuses_a_stream_without_the_fence);
    tcase_add_test(tc, import_ignores_select_multi_exec_and_applies_aof_forms);
    tcase_add_test(tc, a_failing_sink_fails_the_export);
    tcase_add_loop_test(tc, import_refuses_what_the_checker_rejects, 0,
                        (int)(sizeof bad_imports / sizeof *bad_imports));
    tcase_add_test(tc, streaming_import_in_any_split_is_the_whole_import);
    tcase_add_test(tc, a_cut_export_is_refused_wherever_it_is_cut);
    suite_add_tcase(s, tc);
    return s;
}
