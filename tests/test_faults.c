/*
 * test_faults.c — every Tier 1 transition under injected faults
 * (tests/faultvfs.c) and failed allocations.
 *
 * For each transition a template file holds its "before" state; the
 * transition's I/O points are counted once, then for every N the template is
 * restored and the transition runs with the Nth read / write / sync failing
 * (SQLITE_IOERR_*, SQLITE_FULL) or with the power failing there. Each run
 * asserts: a typed result (the verdict, or EMQ_EIO / EMQ_EFULL), the
 * keyspace digest equal to "before" after a failure and "after" after a
 * success, a clean checker, a usable handle (the transition then succeeds),
 * and — with synchronous=FULL — that after a simulated power loss the file
 * reopens clean and every acknowledged transition is still there. The
 * allocation sweep fails the Nth SQLite allocation (SQLITE_CONFIG_MALLOC,
 * installed between sqlite3_shutdown and sqlite3_initialize), then the Nth
 * allocation of emqlite's own (emq_set_allocator), for the first and the
 * last N of every call path in the call (below: a loop's middle turns are
 * not run; EMQ_TEST_OOM_ALL=1 takes every N), and asserts EMQ_ENOMEM
 * or the verdict, no leak on either heap, and the same recovery.
 * Under EMQ_TEST_QUICK the sweeps take every 5th point. The files live in
 * memory when the machine has a /dev/shm (rel_mkdtemp_mem): the VFS, not the
 * disk, decides what a sync made durable, so the disk's write-back was only
 * cost (the sweep opens and restores a file thousands of times).
 */
#include <check.h>
#include <execinfo.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include <xxhash.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "db.h"
#include "faultvfs.h"
#include "relutil.h"
#include "export.h"
#include "transfer.h"
#include "tengine.h"
#include "suites.h"

#define Q "faults"

static const char *const ids[] = {
    "JOB00000000001", "JOB00000000002", "JOB00000000003", "JOB00000000004",
    "JOB00000000009", "JOB0000000000A",
};

static rel_clock clk;
static char dir[256], path[300];

/* --------------------------------------------------------------- scenarios */

/* A scenario: a setup, then the operation swept — a typed call (`op`) or
 * a registry verb run by name with `args` (a data row: new verbs need no
 * code here). `verb` names the registry row the scenario exercises (NULL
 * for calls outside the registry: reads of the handle, the checker,
 * export, import); every registered verb must appear (tests/
 * test_registry.c asks faults_sweep_row below). */
#define MAXARGS 12
typedef struct scen {
    const char *name;
    void (*setup)(emq_db *db);
    int (*op)(emq_db *db);
    int verdict;        /* the success result of op                      */
    int ckpt_frames;    /* the handle's checkpoint_frames               */
    int reads;          /* 1: op only reads (the keyspace stays "before") */
    const char *verb;
    const char *args[MAXARGS]; /* a data row's arguments (op NULL)       */
} scen;

static void put3(emq_db *db)
{
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(emq_enqueue(db, Q, ids[i], "payload", 7),
                         EMQ_ENQUEUED);
}

static void claim1(emq_db *db, int64_t lease)
{
    emq_job j;
    put3(db);
    ck_assert_int_eq(emq_claim(db, Q, lease, &j), EMQ_OK);
    ck_assert_str_eq(j.id, ids[0]);
    ck_assert_int_eq(j.attempts, 1);
    emq_job_clear(&j);
}

static void setup_put3(emq_db *db) { put3(db); }
/* Tier 5 streams: three records, a group with two of them delivered, an
 * archive watermark. */
#define SQ "emq:{" Q "}:stream:ev"
static void setup_stream(emq_db *db)
{
    static const char *const rec[] = { "EVT0JZGkP8smrw", "EVT0JZGkP8smrx",
                                       "EVT0JZGkP8smry" };
    const void *fv[2] = { "n", "v" };
    emq_stream_entry *e = NULL;
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(emq_stream_append_id(db, Q, "ev", rec[i], fv, NULL,
                                              2), EMQ_OK);
    ck_assert_int_eq(emq_stream_group_create(db, Q, "ev", "grp", "0", 0),
                     EMQ_OK);
    ck_assert_int_eq(emq_stream_group_read(db, Q, "ev", "grp", "c1", ">", 2,
                                           -1, &e, &n), EMQ_OK);
    ck_assert_uint_eq(n, 2);
    emq_stream_entries_free(e, n);
    ck_assert_int_eq(emq_stream_put_archived(db, Q, "ev", rec[0], 14),
                     EMQ_OK);
}
static void setup_claimed(emq_db *db) { claim1(db, 1000000); }
static void setup_lapsed(emq_db *db)
{
    emq_job j;
    claim1(db, 10);
    ck_assert_int_eq(emq_claim(db, Q, 10, &j), EMQ_OK);
    emq_job_clear(&j);
}
static void setup_due(emq_db *db)
{
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(emq_enqueue_at(db, Q, ids[i], "p", 1, T0 - 5 + i),
                         EMQ_SCHEDULED);
}
/* The group path (§6.0): ids[0] claimed in group G, ids[1] waiting in G's
 * lane, so completing ids[0] releases G and offers it to the ring. */
#define G "PRT0KHTOWnGLuC"
static void setup_grouped(emq_db *db)
{
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, Q, ids[0], "x", 1), EMQ_ENQUEUED);
    tk_hset(db, "emq:{" Q "}:job:JOB00000000001", "group", G);
    ck_assert_int_eq(emq_claim(db, Q, 1000000, &j), EMQ_OK);
    emq_job_clear(&j);
    tk_hset(db, "emq:{" Q "}:gactive", G, "1");
    tk_hset(db, "emq:{" Q "}:job:JOB00000000002", "state", "pending");
    tk_hset(db, "emq:{" Q "}:job:JOB00000000002", "attempts", "0");
    tk_hset(db, "emq:{" Q "}:job:JOB00000000002", "payload", "y");
    tk_hset(db, "emq:{" Q "}:job:JOB00000000002", "group", G);
    tk_zadd(db, "emq:{" Q "}:g:" G ":pending", ids[1], 0);
}
/* The flow link: ids[0] claimed, the last child of parent ids[3]. */
static void setup_flow(emq_db *db)
{
    emq_job j;
    tk_hset(db, "emq:{" Q "}:job:JOB00000000004", "state",
            "awaiting_children");
    tk_hset(db, "emq:{" Q "}:job:JOB00000000004", "attempts", "0");
    tk_hset(db, "emq:{" Q "}:job:JOB00000000004", "payload", "parent");
    tk_set(db, "emq:{" Q "}:job:JOB00000000004:dependencies", "1");
    ck_assert_int_eq(emq_enqueue(db, Q, ids[0], "child", 5), EMQ_ENQUEUED);
    tk_hset(db, "emq:{" Q "}:job:JOB00000000001", "parent", ids[3]);
    ck_assert_int_eq(emq_claim(db, Q, 1000000, &j), EMQ_OK);
    emq_job_clear(&j);
}
static void setup_paused(emq_db *db)
{
    put3(db);
    ck_assert_int_eq(emq_queue_pause(db, Q), EMQ_OK);
}
/* Tier 2 setups: a dead job (ids[0]), a parked dedup key, log lines, a
 * concurrency ceiling and a spent rate limit. */
static void setup_dead(emq_db *db)
{
    claim1(db, 1000000);
    ck_assert_int_eq(emq_retry(db, Q, ids[0], 1, 0, 1, "boom", 4), EMQ_DEAD);
}
static void setup_dedup(emq_db *db)
{
    put3(db);
    tk_set(db, "emq:{" Q "}:de:key-1", ids[0]);
}
static void setup_logs(emq_db *db)
{
    put3(db);
    ck_assert_int_eq(emq_job_add_log(db, Q, ids[0], "one", 3, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_job_add_log(db, Q, ids[0], "two", 3, 0, NULL), EMQ_OK);
}
static void setup_gates(emq_db *db)
{
    claim1(db, 1000000);
    tk_hset(db, "emq:{" Q "}:meta", "concurrency", "5");
    tk_hset(db, "emq:{" Q "}:meta", "max", "1");
    tk_set(db, "emq:{" Q "}:limiter", "1");
}

/* Flows (Tier 4). QX is a second queue for the children of a parent in Q. */
#define QX "faults.x"
/* ids[3] held in Q awaiting two children. */
static void setup_held(emq_db *db)
{
    put3(db);
    ck_assert_int_eq(emq_flow_hold(db, Q, ids[3], "parent", 6, 2), EMQ_OK);
}
/* ids[3] held in Q over ids[4] and ids[5] in QX, both claimed there:
 * ids[4] completed (a COMPLETE entry in QX's outbox), ids[5] dead with
 * policy id (a FAIL entry behind it). */
static void setup_outbox(emq_db *db)
{
    emq_job j;
    setup_held(db);
    for (int i = 4; i < 6; i++) {
        ck_assert_int_eq(emq_flow_child(db, QX, ids[i], "c", 1, ids[3], Q),
                         EMQ_OK);
        ck_assert_int_eq(emq_flow_set_policy(db, QX, ids[i], i == 5
                                             ? EMQ_FLOW_ID : EMQ_FLOW_FP),
                         EMQ_OK);
        ck_assert_int_eq(emq_claim(db, QX, 1000000, &j), EMQ_OK);
        emq_job_clear(&j);
    }
    ck_assert_int_eq(emq_complete_result(db, QX, ids[4], 1, "r4", 2), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, QX, ids[5], 1, 0, 1, "e5", 2), EMQ_DEAD);
}
/* setup_outbox swept: the parent's processed and unsuccessful hashes. */
static void setup_delivered(emq_db *db)
{
    int64_t d = 0;
    setup_outbox(db);
    ck_assert_int_eq(emq_flow_sweep(db, QX, 100, &d), EMQ_OK);
    ck_assert_int_eq(d, 2);
}
/* A cross-queue add cut after its first transaction (the hold of ids[3]):
 * its second step failed on a key of the wrong type, since deleted, so
 * the journal row waits for flow_recover. */
static void setup_journaled(emq_db *db)
{
    emq_flow_node kid = {ids[4], "c", 1, QX, EMQ_FLOW_FP, NULL, 0};
    emq_flow_node root = {ids[3], "p", 1, NULL, EMQ_FLOW_FP, &kid, 1};
    put3(db);
    tk_set(db, "emq:{" QX "}:job:JOB00000000009", "in the way");
    ck_assert_int_eq(emq_flow_add(db, Q, &root), EMQ_EWRONGTYPE);
    tk_del(db, "emq:{" QX "}:job:JOB00000000009");
}

/* Fair lanes (§6.3), built with the lane verbs: ids[0] and ids[1] wait
 * in group G's lane, ids[2] in group H's; both groups are on the ring. */
#define H "PRT0NgWEfAEJfs"
#define G3 "PRT00000000003"
static void lanes(emq_db *db)
{
    static const char *const g[3] = {G, G, H};
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(emq_lane_enqueue(db, Q, g[i], ids[i], "lane", 4),
                         EMQ_ENQUEUED);
}
static void setup_lanes(emq_db *db) { lanes(db); }
static void setup_lanes_weighted(emq_db *db)
{
    lanes(db);
    ck_assert_int_eq(emq_lane_weight(db, Q, G, 2), EMQ_OK);
}
static void setup_lane_paused(emq_db *db)
{
    lanes(db);
    ck_assert_int_eq(emq_lane_pause(db, Q, G), EMQ_OK);
}
/* G's oldest job claimed (gactive[G] = 1) with a lease of `lease` ms. */
static void lane_claimed(emq_db *db, int64_t lease)
{
    emq_job j;
    char g[EMQ_ID_SIZE];
    lanes(db);
    ck_assert_int_eq(emq_lane_claim(db, Q, lease, &j, g), EMQ_OK);
    ck_assert_str_eq(j.id, ids[0]);
    ck_assert_str_eq(g, G);
    emq_job_clear(&j);
}
static void setup_lane_claimed(emq_db *db) { lane_claimed(db, 1000000); }
/* G's and H's oldest jobs claimed with leases that have lapsed at T0. */
static void setup_lanes_lapsed(emq_db *db)
{
    emq_job j;
    char g[EMQ_ID_SIZE];
    lane_claimed(db, 10);
    ck_assert_int_eq(emq_lane_claim(db, Q, 10, &j, g), EMQ_OK);
    ck_assert_str_eq(g, H);
    emq_job_clear(&j);
}

/* Tier 5 (issue 17): a due repeat registration; ids[0] claimed and
 * tracked by the lock plane. */
static void setup_repeat(emq_db *db)
{
    ck_assert_int_eq(emq_repeat_register(db, Q, "r1", 1000, "tpl", 3, 0),
                     EMQ_OK);
}
static void setup_locked(emq_db *db)
{
    claim1(db, 1000000);
    ck_assert_int_eq(emq_lock_track(db, Q, ids[0], 1, 60000), EMQ_OK);
}

static int op_enqueue(emq_db *db)
{
    return emq_enqueue(db, Q, ids[4], "fresh payload", 13);
}
static int op_enqueue_many(emq_db *db)
{
    emq_item it[3] = {{ids[4], "a", 1}, {ids[5], "b", 1}, {ids[1], "c", 1}};
    int v[3];
    int rc = emq_enqueue_many(db, Q, it, 3, v);
    if (rc == EMQ_OK)
        ck_assert(v[0] == EMQ_ENQUEUED && v[1] == EMQ_ENQUEUED &&
                  v[2] == EMQ_DUPLICATE);
    return rc;
}
static int op_enqueue_at(emq_db *db)
{
    return emq_enqueue_at(db, Q, ids[4], "x", 1, T0 + 5000);
}
static int op_enqueue_in(emq_db *db)
{
    return emq_enqueue_in(db, Q, ids[4], "x", 1, 5000);
}
static int op_claim(emq_db *db)
{
    emq_job j;
    int rc = emq_claim(db, Q, 30000, &j);
    if (rc == EMQ_OK) {
        ck_assert_str_eq(j.id, ids[0]);
        ck_assert_int_eq(j.attempts, 1);
        ck_assert_uint_eq(j.payload_len, 7);
        emq_job_clear(&j);
    }
    return rc;
}
static int op_complete(emq_db *db) { return emq_complete(db, Q, ids[0], 1); }
static int op_retry_sched(emq_db *db)
{
    return emq_retry(db, Q, ids[0], 1, 1000, 5, "boom", 4);
}
static int op_retry_dead(emq_db *db)
{
    return emq_retry(db, Q, ids[0], 1, 1000, 1, "boom", 4);
}
static int op_promote(emq_db *db)
{
    int64_t n = -1;
    int rc = emq_promote(db, Q, 100, &n);
    if (rc == EMQ_OK) ck_assert_int_eq(n, 3);
    return rc;
}
static int op_reap(emq_db *db)
{
    int64_t n = -1;
    int rc = emq_reap(db, Q, &n);
    if (rc == EMQ_OK) ck_assert_int_eq(n, 2);
    return rc;
}
static int op_extend(emq_db *db)
{
    return emq_lock_extend(db, Q, ids[0], 1, 50000);
}
static int op_extend_many(emq_db *db)
{
    const char *const x[2] = {ids[0], ids[1]};
    const int64_t tok[2] = {1, 7};
    int failed[2];
    size_t nf = 9;
    int rc = emq_lock_extend_many(db, Q, 2, x, tok, 50000, failed, &nf);
    if (rc == EMQ_OK) ck_assert(nf == 1 && failed[0] == 0 && failed[1] == 1);
    return rc;
}
static int op_pause(emq_db *db) { return emq_queue_pause(db, Q); }
static int op_resume(emq_db *db) { return emq_queue_resume(db, Q); }
static int op_complete_result(emq_db *db)
{
    return emq_complete_result(db, Q, ids[0], 1, "the result", 10);
}

/* reads: the results the library allocates for the caller */
static int op_browse(emq_db *db)
{
    char got[4][EMQ_ID_SIZE];
    size_t n = 0;
    int rc = emq_browse(db, Q, 4, got, &n);
    if (rc == EMQ_OK)
        ck_assert(n == 3 && strcmp(got[0], ids[2]) == 0);
    return rc;
}
static int op_pending_size(emq_db *db)
{
    int64_t n = -1;
    int rc = emq_pending_size(db, Q, &n);
    if (rc == EMQ_OK) ck_assert_int_eq(n, 3);
    return rc;
}
static int op_job_get(emq_db *db)
{
    emq_field *f = NULL;
    size_t n = 0;
    int rc = emq_job_get(db, Q, ids[0], &f, &n);
    if (rc == EMQ_OK) {
        ck_assert_uint_ge(n, 3);
        ck_assert_str_eq(f[0].name, "state");
        emq_fields_free(f, n);
    }
    return rc;
}
static int op_queues(emq_db *db)
{
    char **v = NULL;
    size_t n = 0;
    int rc = emq_queues(db, &v, &n);
    if (rc == EMQ_OK) {
        ck_assert(n == 1 && strcmp(v[0], Q) == 0);
        emq_queues_free(v, n);
    }
    return rc;
}
/* export: the same bytes on every successful run */
typedef struct sink {
    uint64_t h;   /* FNV-1a of the stream */
    size_t n;
} sink;
static int sink_write(void *ctx, const void *p, size_t n)
{
    sink *k = ctx;
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) k->h = (k->h ^ b[i]) * 1099511628211u;
    k->n += n;
    return 0;
}
static int op_export(emq_db *db)
{
    static sink ref;
    sink k = {14695981039346656037u, 0};
    int rc = emq_export(db, NULL, sink_write, &k, NULL);
    if (rc == EMQ_OK) {
        if (ref.n == 0) ref = k;
        ck_assert(k.n == ref.n && k.h == ref.h);
    }
    return rc;
}
/* import: one more job, as a RESP stream */
static int op_import(emq_db *db)
{
    static const char stream[] =
        "*3\r\n$3\r\nSET\r\n$13\r\n{emq}:version\r\n$12\r\necho"
        "mq:4.0.0\r\n"
        "*8\r\n$4\r\nHSET\r\n$31\r\nemq:{faults}:job:JOB0000000000B"
        "\r\n$5\r\nstate\r\n$7\r\npending\r\n$8\r\nattempts\r\n$1\r\n0"
        "\r\n$7\r\npayload\r\n$8\r\nimported\r\n"
        "*4\r\n$4\r\nZADD\r\n$20\r\nemq:{faults}:pending\r\n$1\r\n0"
        "\r\n$14\r\nJOB0000000000B\r\n";
    /* An export's stream: the commands, then the end record. */
    char end[EMQ_EXPORT_END_MAX], whole[sizeof stream + 200];
    int n = emq_export_end_text(end, sizeof end, 3, sizeof stream - 1,
                                emq_hash64(stream, sizeof stream - 1));
    int len = snprintf(whole, sizeof whole, "%s*2\r\n$4\r\nECHO\r\n"
                       "$%d\r\n%s\r\n", stream, n, end);
    emq_transfer_summary sum;
    int rc = emq_import(db, whole, (size_t)len, &sum);
    if (rc == EMQ_OK) ck_assert_uint_eq(sum.commands, 4);
    return rc;
}
static int op_check(emq_db *db)
{
    size_t nv = 9;
    int rc = emq_check(db, NULL, NULL, &nv);
    if (rc == EMQ_OK) ck_assert_uint_eq(nv, 0);
    return rc;
}

static const scen scens[] = {
    {"enqueue", setup_put3, op_enqueue, EMQ_ENQUEUED, 1000, 0, "enqueue",
     {0}},
    {"enqueue+checkpoint", setup_put3, op_enqueue, EMQ_ENQUEUED, 1, 0,
     "enqueue", {0}},
    {"enqueue_many", setup_put3, op_enqueue_many, EMQ_OK, 1000, 0,
     "enqueue_many", {0}},
    {"enqueue_at", setup_put3, op_enqueue_at, EMQ_SCHEDULED, 1000, 0,
     "enqueue_at", {0}},
    {"enqueue_in", setup_put3, op_enqueue_in, EMQ_SCHEDULED, 1000, 0,
     "enqueue_in", {0}},
    {"claim", setup_put3, op_claim, EMQ_OK, 1000, 0, "claim", {0}},
    {"complete", setup_claimed, op_complete, EMQ_OK, 1000, 0, "complete",
     {0}},
    {"complete+checkpoint", setup_claimed, op_complete, EMQ_OK, 1, 0,
     "complete", {0}},
    {"retry(scheduled)", setup_claimed, op_retry_sched, EMQ_SCHEDULED, 1000,
     0, "retry", {0}},
    {"retry(dead)", setup_claimed, op_retry_dead, EMQ_DEAD, 1000, 0, "retry",
     {0}},
    {"promote", setup_due, op_promote, EMQ_OK, 1000, 0, "promote", {0}},
    {"reap", setup_lapsed, op_reap, EMQ_OK, 1000, 0, "reap", {0}},
    {"extend_lock", setup_claimed, op_extend, EMQ_OK, 1000, 0, "extend_lock",
     {0}},
    {"extend_locks", setup_claimed, op_extend_many, EMQ_OK, 1000, 0,
     "extend_locks", {0}},
    {"pause", setup_put3, op_pause, EMQ_OK, 1000, 0, "set_paused", {0}},
    {"resume", setup_paused, op_resume, EMQ_OK, 1000, 0, "clear_paused",
     {0}},
    {"complete_result", setup_claimed, op_complete_result, EMQ_OK, 1000,
     0, "complete", {0}},
    {"complete(group)", setup_grouped, op_complete, EMQ_OK, 1000, 0,
     "complete", {0}},
    {"complete(flow)", setup_flow, op_complete, EMQ_OK, 1000, 0, "complete",
     {0}},
    {"browse", setup_put3, op_browse, EMQ_OK, 1000, 1, "browse", {0}},
    {"pending_size", setup_put3, op_pending_size, EMQ_OK, 1000, 1,
     "pending_size", {0}},
    {"job_get", setup_claimed, op_job_get, EMQ_OK, 1000, 1, NULL, {0}},
    {"queues", setup_put3, op_queues, EMQ_OK, 1000, 1, NULL, {0}},
    {"check", setup_claimed, op_check, EMQ_OK, 1000, 1, NULL, {0}},
    {"export", setup_claimed, op_export, EMQ_OK, 1000, 1, NULL, {0}},
    {"import", setup_put3, op_import, EMQ_OK, 1000, 0, NULL, {0}},
    /* Data rows: a registry verb by name. Append rows for new verbs. */
    {"call:claim", setup_put3, NULL, EMQ_OK, 1000, 0, "claim",
     {Q, "30000"}},
    /* Tier 2 (t2) */
    {"drain", setup_put3, NULL, EMQ_OK, 1000, 0, "drain", {Q, "1"}},
    {"obliterate", setup_paused, NULL, EMQ_OK, 1000, 0, "obliterate",
     {Q, "0", "1000"}},
    {"counts", setup_claimed, NULL, EMQ_OK, 1000, 1, "counts",
     {Q, "pending", "active", "completed"}},
    {"get_job", setup_claimed, NULL, EMQ_OK, 1000, 1, "get_job",
     {Q, "JOB00000000001"}},
    {"get_job_state", setup_claimed, NULL, EMQ_OK, 1000, 1,
     "get_job_state", {Q, "JOB00000000001"}},
    {"get_metrics", setup_dead, NULL, EMQ_OK, 1000, 1, "get_metrics",
     {Q, "failed"}},
    {"get_dedup", setup_dedup, NULL, EMQ_OK, 1000, 1,
     "get_deduplication_job_id", {Q, "key-1"}},
    {"update_data", setup_put3, NULL, EMQ_OK, 1000, 0, "update_data",
     {Q, "JOB00000000001", "new payload"}},
    {"update_progress", setup_put3, NULL, EMQ_OK, 1000, 0,
     "update_progress", {Q, "JOB00000000001", "50"}},
    {"add_log", setup_logs, NULL, EMQ_OK, 1000, 0, "add_log",
     {Q, "JOB00000000001", "three", "2"}},
    {"get_job_logs", setup_logs, NULL, EMQ_OK, 1000, 1, "get_job_logs",
     {Q, "JOB00000000001"}},
    {"remove_job", setup_dedup, NULL, EMQ_OK, 1000, 0, "remove_job",
     {Q, "JOB00000000001", "key-1"}},
    {"reprocess_job", setup_dead, NULL, EMQ_OK, 1000, 0, "reprocess_job",
     {Q, "JOB00000000001"}},
    {"claim_batch", setup_put3, NULL, EMQ_OK, 1000, 0, "claim_batch",
     {Q, "2", "30000"}},
    {"delay", setup_claimed, NULL, EMQ_OK, 1000, 0, "delay",
     {Q, "JOB00000000001", "1", "5000", "in"}},
    {"is_maxed", setup_gates, NULL, EMQ_OK, 1000, 1, "is_maxed", {Q}},
    {"get_rate_limit_ttl", setup_gates, NULL, EMQ_OK, 1000, 1,
     "get_rate_limit_ttl", {Q, "0"}},
    {"get_global_rate_limit", setup_gates, NULL, EMQ_OK, 1000, 1,
     "get_global_rate_limit", {Q}},
    {"list_set", setup_put3, NULL, EMQ_OK, 1000, 1, "list_set",
     {Q, "pending", "1", "2", "tail"}},
    {"lanes", setup_grouped, NULL, EMQ_OK, 1000, 1, "lanes", {Q}},
    {"list_lane", setup_grouped, NULL, EMQ_OK, 1000, 1, "list_lane",
     {Q, G, "0", "10"}},
    {"job_info", setup_claimed, NULL, EMQ_OK, 1000, 1, "job_info",
     {Q, "JOB00000000001"}},
    {"requeue_dead_batch", setup_dead, NULL, EMQ_OK, 1000, 0,
     "requeue_dead_batch", {Q, "10"}},
    {"requeue_dead", setup_dead, NULL, EMQ_OK, 1000, 0, "requeue_dead",
     {Q, "10"}},
    /* The operator's run-now and requeues (issue 34 item 5). */
    {"run_now", setup_due, NULL, EMQ_OK, 1000, 0, "run_now",
     {Q, "JOB00000000001", "JOB00000000003"}},
    {"run_due", setup_due, NULL, EMQ_OK, 1000, 0, "run_due",
     {Q, "9999999999999", "2"}},
    {"requeue_dead_before", setup_dead, NULL, EMQ_OK, 1000, 0,
     "requeue_dead_before", {Q, "9999999999999", "10"}},
    {"requeue_edited", setup_dead, NULL, EMQ_OK, 1000, 0, "requeue_edited",
     {Q, "JOB00000000001", "edited"}},
    /* Tier 4: flows. flow_add and add_bulk are swept on a flat flow (one
     * transaction); their multi-transaction paths are cut and recovered in
     * test_flow.c and tests/crash_flows.c. */
    {"enqueue_flow", setup_put3, NULL, EMQ_OK, 1000, 0, "enqueue_flow",
     {Q, "JOB00000000009", "P", "JOB0000000000A", "c"}},
    {"hold_parent", setup_put3, NULL, EMQ_OK, 1000, 0, "hold_parent",
     {Q, "JOB00000000009", "P", "2"}},
    {"flow_child", setup_put3, NULL, EMQ_OK, 1000, 0, "flow_child",
     {Q, "JOB0000000000A", "c", "JOB00000000009", QX}},
    {"set_policy", setup_put3, NULL, EMQ_OK, 1000, 0, "set_policy",
     {Q, "JOB00000000001", "id"}},
    {"set_link", setup_put3, NULL, EMQ_OK, 1000, 0, "set_link",
     {Q, "JOB00000000001", "JOB00000000009", QX, "fp"}},
    {"flow_deliver", setup_held, NULL, EMQ_OK, 1000, 0, "flow_deliver",
     {Q, "JOB00000000004", "JOB00000000009", "r"}},
    {"flow_fail_deliver", setup_held, NULL, EMQ_OK, 1000, 0,
     "flow_fail_deliver", {Q, "JOB00000000004", "JOB00000000009", "e", "fp"}},
    {"outbox_read", setup_outbox, NULL, EMQ_OK, 1000, 1, "outbox_read",
     {QX, "10"}},
    {"outbox_trim", setup_outbox, NULL, EMQ_OK, 1000, 0, "outbox_trim",
     {QX, "1"}},
    {"reemit", setup_flow, NULL, EMQ_OK, 1000, 0, "reemit",
     {Q, "JOB00000000001", "boom"}},
    {"children_values", setup_delivered, NULL, EMQ_OK, 1000, 1,
     "children_values", {Q, "JOB00000000004"}},
    {"ignored_failures", setup_delivered, NULL, EMQ_OK, 1000, 1,
     "ignored_failures", {Q, "JOB00000000004"}},
    {"dependencies", setup_held, NULL, EMQ_OK, 1000, 1, "dependencies",
     {Q, "JOB00000000004"}},
    {"flow_add", setup_put3, NULL, EMQ_OK, 1000, 0, "flow_add",
     {Q, "1", "JOB00000000009", "P", Q, "fp", "2", "JOB0000000000A", "c", Q,
      "id"}},
    {"add_bulk", setup_put3, NULL, EMQ_OK, 1000, 0, "add_bulk",
     {Q, "1", "JOB00000000009", "P", Q, "fp", "2", "JOB0000000000A", "c", Q,
      "fp"}},
    {"deliver_flow_completions", setup_outbox, NULL, EMQ_OK, 1000, 0,
     "deliver_flow_completions", {QX, "100"}},
    {"retry_tx", setup_flow, NULL, EMQ_DEAD, 1000, 0, "retry_tx",
     {Q, "JOB00000000001", "1", "1000", "1", "boom"}},
    {"flow_recover", setup_journaled, NULL, EMQ_OK, 1000, 0, "flow_recover",
     {0}},
    {"flow_tree", setup_outbox, NULL, EMQ_OK, 1000, 1, "flow_tree",
     {Q, "JOB00000000004"}},
    /* Tier 3: the fair lanes */
    {"lane_enqueue", setup_lanes, NULL, EMQ_ENQUEUED, 1000, 0,
     "lane_enqueue", {Q, G3, "JOB00000000009", "fresh payload"}},
    {"lane_claim", setup_lanes, NULL, EMQ_OK, 1000, 0, "lane_claim",
     {Q, "30000"}},
    {"wclaim", setup_lanes_weighted, NULL, EMQ_OK, 1000, 0, "wclaim",
     {Q, "30000"}},
    {"bclaim", setup_lanes, NULL, EMQ_OK, 1000, 0, "bclaim", {Q, "30000"}},
    {"weight", setup_lanes, NULL, EMQ_OK, 1000, 0, "weight", {Q, G, "3"}},
    {"lane_pause", setup_lanes, NULL, EMQ_OK, 1000, 0, "lane_pause",
     {Q, G}},
    {"lane_resume", setup_lane_paused, NULL, EMQ_OK, 1000, 0, "lane_resume",
     {Q, G}},
    {"limit", setup_lane_claimed, NULL, EMQ_OK, 1000, 0, "limit",
     {Q, G, "1"}},
    {"reassign", setup_lanes, NULL, EMQ_OK, 1000, 0, "reassign",
     {Q, "JOB00000000002", H}},
    {"lane_drain", setup_lanes, NULL, EMQ_OK, 1000, 0, "lane_drain",
     {Q, G}},
    {"reap_group", setup_lanes_lapsed, NULL, EMQ_OK, 1000, 0, "reap_group",
     {Q, G, "100"}},
    {"depth", setup_lanes, NULL, EMQ_OK, 1000, 1, "depth", {Q, G}},
    {"lane_depths", setup_lanes, NULL, EMQ_OK, 1000, 1, "lane_depths",
     {Q, G, H, G3}},
    {"complete(lane)", setup_lane_claimed, NULL, EMQ_OK, 1000, 0,
     "complete", {Q, "JOB00000000001", "1"}},
    /* Tier 5: scheduling and the lock plane (issue 17). The sweep is a
     * procedure of several transactions: its row is an idle sweep (every
     * step runs and writes nothing, so any fault must leave the file as it
     * was); the steps' writes have their own rows. */
    {"repeat_register", setup_put3, NULL, EMQ_OK, 1000, 0,
     "repeat_register", {Q, "r1", "1000", "tpl", "0"}},
    {"repeat_cancel", setup_repeat, NULL, EMQ_OK, 1000, 0, "repeat_cancel",
     {Q, "r1"}},
    {"repeat_advance", setup_repeat, NULL, EMQ_OK, 1000, 0,
     "repeat_advance", {Q, "r1", "5000"}},
    {"repeat_due", setup_repeat, NULL, EMQ_OK, 1000, 1, "repeat_due",
     {Q, "10"}},
    {"repeat_count", setup_repeat, NULL, EMQ_OK, 1000, 1, "repeat_count",
     {Q}},
    {"sweep(idle)", setup_put3, NULL, EMQ_OK, 1000, 1, "sweep", {Q, "100"}},
    {"stalled_check", setup_lapsed, NULL, EMQ_OK, 1000, 0, "stalled_check",
     {Q, "2", "100"}},
    {"job_stalled", setup_claimed, NULL, EMQ_OK, 1000, 1, "job_stalled",
     {Q, "JOB00000000001"}},
    {"lock_key_set", setup_claimed, NULL, EMQ_OK, 1000, 0, "lock_key_set",
     {Q, "JOB00000000001", "1", "60000"}},
    {"lock_field_set", setup_claimed, NULL, EMQ_OK, 1000, 0,
     "lock_field_set", {Q, "JOB00000000001", "1"}},
    {"lock_key_del", setup_locked, NULL, EMQ_OK, 1000, 0, "lock_key_del",
     {Q, "JOB00000000001"}},
    {"lock_field_del", setup_locked, NULL, EMQ_OK, 1000, 0, "lock_field_del",
     {Q, "JOB00000000001"}},
    {"lock_key_refresh", setup_locked, NULL, EMQ_OK, 1000, 0,
     "lock_key_refresh", {Q, "JOB00000000001", "90000"}},
    {"lock_track", setup_claimed, NULL, EMQ_OK, 1000, 0, "lock_track",
     {Q, "JOB00000000001", "1", "60000"}},
    {"lock_untrack", setup_locked, NULL, EMQ_OK, 1000, 0, "lock_untrack",
     {Q, "JOB00000000001"}},
    {"lock_beat", setup_locked, NULL, EMQ_OK, 1000, 0, "lock_beat",
     {Q, "50000", "60000", "JOB00000000001", "1"}},
    /* Tier 5 streams (issue 16). */
    {"call:append", setup_stream, NULL, EMQ_OK, 1000, 0, "append",
     {Q, "ev", "EVT0JZGkP8sms0", "n", "v"}},
    {"call:append_id", setup_stream, NULL, EMQ_OK, 1000, 0, "append_id",
     {Q, "ev", "EVT0JZGkP8sms1", "n", "v", "m", "w"}},
    {"call:stream_add", setup_stream, NULL, EMQ_OK, 1000, 0, "stream_add",
     {Q, "ev", "4102444800000-0", "f", "v"}},
    {"call:stream_range", setup_stream, NULL, EMQ_OK, 1000, 1,
     "stream_range", {Q, "ev", "-", "+", "2"}},
    {"call:read", setup_stream, NULL, EMQ_OK, 1000, 1, "read", {Q, "ev"}},
    {"call:read_window", setup_stream, NULL, EMQ_OK, 1000, 1, "read_window",
     {Q, "ev", "1767225600000", "1767225600000"}},
    {"call:read_since", setup_stream, NULL, EMQ_OK, 1000, 1, "read_since",
     {Q, "ev", "0", "2"}},
    {"call:trim", setup_stream, NULL, EMQ_OK, 1000, 0, "trim",
     {Q, "ev", "maxlen", "1", "1"}},
    {"call:put_archived", setup_stream, NULL, EMQ_OK, 1000, 0,
     "put_archived", {Q, "ev", "EVT0JZGkP8smry"}},
    {"call:get_archived", setup_stream, NULL, EMQ_OK, 1000, 1,
     "get_archived", {Q, "ev"}},
    {"call:clear_archived", setup_stream, NULL, EMQ_OK, 1000, 0,
     "clear_archived", {Q, "ev"}},
    {"call:group_create", setup_stream, NULL, EMQ_OK, 1000, 0,
     "group_create", {Q, "ev", "g2", "0"}},
    {"call:group_read", setup_stream, NULL, EMQ_OK, 1000, 0, "group_read",
     {Q, "ev", "grp", "c2", ">"}},
    {"call:group_read(history)", setup_stream, NULL, EMQ_OK, 1000, 0,
     "group_read", {Q, "ev", "grp", "c1", "0"}},
    {"call:ack", setup_stream, NULL, EMQ_OK, 1000, 0, "ack",
     {Q, "ev", "grp", "1767225600000-4096", "1767225600000-4097"}},
    {"call:autoclaim", setup_stream, NULL, EMQ_OK, 1000, 0, "autoclaim",
     {Q, "ev", "grp", "c2", "0", "0"}},
    {"call:stream_len", setup_stream, NULL, EMQ_OK, 1000, 1, "stream_len",
     {Q, "ev"}},
    {"call:pending_range", setup_stream, NULL, EMQ_OK, 1000, 1,
     "pending_range", {Q, "ev", "grp", "-", "+", "10"}},
};

/* Registered verbs that have no sweep row, each with the reason. */
static const struct { const char *verb, *why; } no_sweep[] = {
    {"backoff", "a host verb: no store access, no I/O to fault"},
    {"append_batch", "a procedure of append_id transitions (swept above) "
                     "whose ids are minted afresh on every run, so no "
                     "after-state can be fixed"},
    {NULL, NULL},
};
#define NSCEN (sizeof scens / sizeof *scens)

/* Run scenario s's operation once. */
static int run_op(emq_db *db, const scen *s)
{
    size_t argc = 0;
    if (s->op) return s->op(db);
    while (argc < MAXARGS && s->args[argc]) argc++;
    return emq_call(db, s->verb, argc, s->args, NULL, NULL);
}

/* ---------------------------------------------------------------- helpers */

static unsigned char *tpl;   /* the template file's bytes */
static size_t tpl_len;
static uint64_t d_before, d_after;

static int excl;      /* open_db opens exclusive handles */
static int node_id = 7; /* and leases this node id */

static emq_db *open_db(int sync, int ckpt)
{
    emq_options o;
    emq_db *db = NULL;
    char err[512];
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    o.synchronous = sync;
    o.checkpoint_frames = ckpt;
    o.node_id = node_id;
    o.exclusive = excl;
    int rc = emq_open_ex(path, &o, &db, err, sizeof err);
    ck_assert_msg(rc == EMQ_OK, "open: %d %s", rc, err);
    return db;
}

static uint64_t digest(emq_db *db)
{
    emq_transfer_summary s;
    int rc = emq_digest(db, NULL, &s);
    ck_assert_msg(rc == EMQ_OK, "digest: rc %d (%s) %s", rc,
                  emq_strerror(rc), emq_errmsg(db));
    return s.digest;
}

static void unlink_side(void)
{
    char p[320];
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

static void restore(void)
{
    unlink_side();
    ck_assert_int_eq(rel_write_file(path, tpl, tpl_len), 0);
}

/* The same, the file already grown by the headroom a writable handle keeps
 * past its pages (storage/store.c, ROOM_HEAD), as a hole: the allocation
 * sweep skips the growth's writes (a quarter of its time, one byte per
 * block, and no allocation among them); the I/O sweep keeps them, each a
 * write point. */
static void restore_roomy(void)
{
    restore();
    ck_assert_int_eq(truncate(path, (off_t)tpl_len + 2 * 1024 * 1024), 0);
}

/* Drop the connection's page cache so the transition reads from the file. */
static void cold(emq_db *db)
{
    sqlite3_db_release_memory(emq_store_sqlite(emq_db_store(db)));
}

static void assert_clean(emq_db *db, const char *what)
{
    size_t v = 0, n = 0;
    int rc = rel_check(db, &v, &n, 1);
    ck_assert_msg(rc == EMQ_OK && v == 0 && n == 0,
                  "%s: checker rc %d, %zu violations, %zu notes", what, rc,
                  v, n);
}

/* Build the template of scenario s and its before/after digests. */
static void prepare(const scen *s)
{
    FILE *f;
    long n;
    emq_db *db;
    clk.now = T0 - 1000;
    unlink(path);
    unlink_side();
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    s->setup(db);
    emq_close(db);
    free(tpl);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    tpl_len = (size_t)n;
    tpl = malloc(tpl_len);
    ck_assert_uint_eq(fread(tpl, 1, tpl_len, f), tpl_len);
    fclose(f);
    clk.now = T0;
    restore();
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    d_before = digest(db);
    ck_assert_int_eq(run_op(db, s), s->verdict);
    d_after = digest(db);
    if (s->reads)
        ck_assert_uint_eq(d_before, d_after);
    else
        ck_assert_uint_ne(d_before, d_after);
    assert_clean(db, s->name);
    emq_close(db);
}

/* I/O points of scenario s's transition on a cold handle. */
static void measure(const scen *s, long counts[FV_NKIND])
{
    emq_db *db;
    restore();
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    cold(db);
    fv_count_reset();
    ck_assert_int_eq(run_op(db, s), s->verdict);
    for (int k = 0; k < FV_NKIND; k++) counts[k] = fv_count(k);
    emq_close(db);
}

static int typed(int sqlite_err)
{
    if (sqlite_err == 0) return EMQ_EIO; /* the power failed: an I/O error */
    return (sqlite_err & 0xff) == SQLITE_FULL ? EMQ_EFULL : EMQ_EIO;
}

static long stride(void) { return rel_quick() ? 5 : 1; }

typedef struct tally {
    long runs, failed, succeeded, resurrected, made;
} tally;

/* The failure of a group commit's sync (storage/gsync.c): the commit was
 * made and is visible, its durability unknown. Only a sync can say so. */
static int made_not_durable(emq_db *db, int rc)
{
    return rc == EMQ_EIO && strstr(emq_errmsg(db), "the commit is made");
}

/*
 * One faulted run of s: point n of `kind` fails with `err` (0: power
 * failure). `rerun`: after a failure, run the transition again on the same
 * handle (it must succeed) before the power loss.
 */
static void faulted_run(const scen *s, int kind, long n, int err, int rerun,
                        tally *t)
{
    emq_db *db;
    int rc, power = err == 0, made;
    uint64_t d;
    restore();
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    cold(db);
    fv_track(1);
    fv_count_reset();
    fv_arm(kind, n, err, 0);
    rc = run_op(db, s);
    fv_disarm();
    t->runs++;
    made = made_not_durable(db, rc);
    ck_assert_msg(!made || kind == FV_SYNC, "%s: point %ld of "
                  "kind %d: a commit made and not durable", s->name, n, kind);
    t->made += made;
    if (rc >= 0) {
        t->succeeded++;
        ck_assert_msg(rc == s->verdict, "%s: point %ld of kind %d: rc %d",
                      s->name, n, kind, rc);
    } else {
        t->failed++;
        ck_assert_msg(rc == typed(err), "%s: point %ld of kind %d (err %d):"
                      " rc %d (%s) msg %s", s->name, n, kind, err, rc,
                      emq_strerror(rc), emq_errmsg(db));
    }
    if (!power) {
        /* in-process: all or nothing (a group sync that failed: all, and
         * said so), a clean file, a usable handle */
        d = digest(db);
        ck_assert_msg(d == (rc >= 0 || made ? d_after : d_before),
                      "%s: point %ld kind %d: partial state after rc %d",
                      s->name, n, kind, rc);
        assert_clean(db, s->name);
        if (rc < 0 && rerun && !made) {
            ck_assert_int_eq(run_op(db, s), s->verdict);
            ck_assert_uint_eq(digest(db), d_after);
            rc = s->verdict;
        }
        fv_power_off();
    }
    emq_close(db);
    /* a random in-order prefix of the unsynced writes reaches the disk */
    ck_assert_int_ge(fv_power_loss(1, (uint64_t)(n * 31 + kind)), 0);
    /* after the power loss: the file reopens clean; acknowledged stays */
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    assert_clean(db, s->name);
    d = digest(db);
    if (rc >= 0)
        ck_assert_msg(d == d_after, "%s: point %ld kind %d: an acknowledged "
                      "transition was lost by the power loss", s->name, n,
                      kind);
    else
        ck_assert_msg(d == d_before || d == d_after,
                      "%s: point %ld kind %d: partial state after recovery",
                      s->name, n, kind);
    if (rc < 0 && d == d_after && !s->reads) t->resurrected++;
    if (d == d_before) { /* the reopened handle works */
        ck_assert_int_eq(run_op(db, s), s->verdict);
        ck_assert_uint_eq(digest(db), d_after);
    }
    emq_close(db);
    fv_track(0);
}

/* ------------------------------------------------------------- I/O sweeps */

static void io_setup(void)
{
    clk.now = T0;
    ck_assert_int_eq(rel_mkdtemp_mem(dir, sizeof dir, "faults"), 0);
    rel_path(path, sizeof path, dir, "f.emq");
    ck_assert_int_eq(fv_install(), 0);
}

static void io_teardown(void)
{
    fv_uninstall();
    free(tpl);
    tpl = NULL;
    rel_rmrf(dir);
}

static const struct {
    int kind, err;
    const char *name;
} faults[] = {
    {FV_WRITE, SQLITE_IOERR_WRITE, "write EIO"},
    {FV_WRITE, SQLITE_FULL, "write FULL"},
    {FV_SYNC, SQLITE_IOERR_FSYNC, "sync EIO"},
    {FV_READ, SQLITE_IOERR_READ, "read EIO"},
    {FV_WRITE, 0, "power at write"},
    {FV_SYNC, 0, "power at sync"},
};

START_TEST(io_faults_at_every_point)
{
    const scen *s = &scens[_i];
    long counts[FV_NKIND];
    tally t = {0, 0, 0, 0, 0};
    prepare(s);
    measure(s, counts);
    if (s->reads) {
        ck_assert_int_gt(counts[FV_READ], 0); /* a cold handle reads */
        ck_assert_int_eq(counts[FV_WRITE], 0);
    } else {
        ck_assert_int_gt(counts[FV_WRITE], 0);
        ck_assert_int_gt(counts[FV_SYNC], 0); /* FULL syncs every commit */
    }
    for (size_t f = 0; f < sizeof faults / sizeof *faults; f++)
        for (long n = 1; n <= counts[faults[f].kind]; n += stride())
            faulted_run(s, faults[f].kind, n, faults[f].err, (int)(n & 1),
                        &t);
    fprintf(stderr, "faults: %-20s io points r/w/s %ld/%ld/%ld: %ld runs, "
            "%ld typed failures (%ld made, sync failed), %ld successes, "
            "%ld failed-but-durable\n",
            s->name, counts[FV_READ], counts[FV_WRITE], counts[FV_SYNC],
            t.runs, t.failed, t.made, t.succeeded, t.resurrected);
}
END_TEST

/*
 * emq_open under every I/O fault, on an existing file and on a fresh one
 * (creation: schema, stamp, fence): a typed error or a working handle, and
 * after a power loss at any point the file opens clean — a crash during the
 * very first open never leaves a file emqlite then refuses.
 */
START_TEST(io_faults_while_opening)
{
    int fresh = _i;
    long counts[FV_NKIND], runs = 0, failed = 0;
    emq_options o;
    emq_db *db;
    char err[512];
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    o.synchronous = EMQ_SYNC_FULL;
    o.node_id = 7;
    if (!fresh) {
        scen s0 = scens[0];
        prepare(&s0); /* the template: three pending jobs */
    }
#define RESET() do { if (fresh) { unlink(path); unlink_side(); } \
                     else restore(); } while (0)
    RESET();
    fv_count_reset();
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    for (int k = 0; k < FV_NKIND; k++) counts[k] = fv_count(k);
    emq_close(db);
    if (fresh) ck_assert_int_gt(counts[FV_WRITE], 0);
    for (size_t f = 0; f < sizeof faults / sizeof *faults; f++)
        for (long n = 1; n <= counts[faults[f].kind]; n += stride()) {
            int power = faults[f].err == 0, rc;
            uint64_t d;
            RESET();
            fv_track(1);
            fv_count_reset();
            fv_arm(faults[f].kind, n, faults[f].err, 0);
            db = NULL;
            rc = emq_open_ex(path, &o, &db, err, sizeof err);
            fv_disarm();
            runs++;
            if (rc != EMQ_OK) {
                failed++;
                ck_assert_msg(rc == typed(faults[f].err), "open (%s) %s at "
                              "point %ld: rc %d (%s) %s", fresh ? "fresh" :
                              "existing", faults[f].name, n, rc,
                              emq_strerror(rc), err);
                ck_assert_ptr_null(db);
            } else {
                assert_clean(db, "open under a fault");
            }
            if (power) {
                fv_power_off();
                emq_close(db);
                /* every kind of disk: nothing unsynced kept, a prefix,
                 * everything */
                ck_assert_int_ge(fv_power_loss((int)(n % 3), (uint64_t)n),
                                 0);
            } else {
                emq_close(db);
            }
            fv_track(0);
            rc = emq_open_ex(path, &o, &db, err, sizeof err);
            ck_assert_msg(rc == EMQ_OK, "reopen after open (%s) %s at point "
                          "%ld: rc %d (%s) %s", fresh ? "fresh" : "existing",
                          faults[f].name, n, rc, emq_strerror(rc), err);
            assert_clean(db, "reopen");
            d = digest(db);
            if (!fresh)
                ck_assert_uint_eq(d, d_before);
            emq_close(db);
        }
#undef RESET
    fprintf(stderr, "faults: emq_open (%s) io points r/w/s %ld/%ld/%ld: %ld "
            "runs, %ld typed failures\n", fresh ? "fresh" : "existing",
            counts[FV_READ], counts[FV_WRITE], counts[FV_SYNC], runs, failed);
}
END_TEST

/* The registry coverage test (tests/test_registry.c) asks here whether
 * verb `verb` is swept: 1 when a scenario names it, 2 when no_sweep gives
 * the reason (in *why), 0 when neither; -1 when a scenario names a verb
 * the registry does not have (that name in *why). */
int faults_sweep_row(const char *verb, const char **why)
{
    size_t k;
    for (k = 0; k < NSCEN; k++)
        if (scens[k].verb && !emq_verb_find(scens[k].verb)) {
            *why = scens[k].verb;
            return -1;
        }
    for (k = 0; k < NSCEN; k++)
        if (scens[k].verb && strcmp(scens[k].verb, verb) == 0) return 1;
    for (k = 0; no_sweep[k].verb; k++)
        if (strcmp(no_sweep[k].verb, verb) == 0) {
            *why = no_sweep[k].why;
            return 2;
        }
    return 0;
}

/* The group and flow scenarios take the paths they are named for. */
START_TEST(path_scenarios_take_their_paths)
{
    emq_db *db;
    char *v;
    double score;
    db = open_db(EMQ_SYNC_NORMAL, 1000);
    setup_grouped(db);
    ck_assert_int_eq(op_complete(db), EMQ_OK);
    v = tk_list(db, "emq:{" Q "}:ring"); /* released and offered */
    ck_assert_str_eq(v, G);
    free(v);
    emq_close(db);
    unlink(path);
    unlink_side();
    db = open_db(EMQ_SYNC_NORMAL, 1000);
    setup_flow(db);
    ck_assert_int_eq(op_complete(db), EMQ_OK);
    v = tk_hget(db, "emq:{" Q "}:job:JOB00000000004", "state");
    ck_assert_str_eq(v, "pending"); /* the parent, released */
    free(v);
    ck_assert(tk_zscore(db, "emq:{" Q "}:pending", ids[3], &score));
    emq_close(db);
}
END_TEST

/* A sticky full disk: every write fails until space comes back. */
START_TEST(disk_full_persists_then_recovers)
{
    const scen *s = &scens[0];
    emq_db *db;
    prepare(s);
    restore();
    db = open_db(EMQ_SYNC_FULL, 1000);
    fv_arm(FV_WRITE, 1, SQLITE_FULL, 1);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(run_op(db, s), EMQ_EFULL);
        ck_assert_str_ne(emq_errmsg(db), "");
    }
    fv_disarm();
    ck_assert_uint_eq(digest(db), d_before);
    ck_assert_int_eq(run_op(db, s), s->verdict);
    ck_assert_uint_eq(digest(db), d_after);
    assert_clean(db, "after disk full");
    emq_close(db);
}
END_TEST

/* Run s on db (unsynced writes tracked from here) with its last sync,
 * counted by measure(), failing: the call answers EMQ_EIO. */
static void run_with_the_last_sync_failing(emq_db *db, const scen *s,
                                           const long counts[FV_NKIND])
{
    fv_track(1);
    fv_count_reset();
    fv_arm(FV_SYNC, counts[FV_SYNC], SQLITE_IOERR_FSYNC, 0);
    ck_assert_int_eq(run_op(db, s), EMQ_EIO);
    ck_assert(fv_fired());
    fv_disarm();
}

/*
 * The limit of "nothing was applied": a commit whose WAL sync fails answers
 * EMQ_EIO and is invisible to every handle of the running system, but its
 * frames were written; if the disk got them before the power failed, the
 * recovered file holds the transition. (Same as any WAL database: the
 * outcome of a commit that failed in its sync is decided by the disk.)
 * This is SQLite's own FULL, which an exclusive handle keeps; a shared one
 * commits in groups (next test).
 */
START_TEST(failed_commit_sync_can_still_reach_the_disk)
{
    const scen *s = &scens[0];
    long counts[FV_NKIND];
    emq_db *db;
    prepare(s);
    excl = 1;
    measure(s, counts);
    restore();
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    run_with_the_last_sync_failing(db, s, counts); /* the commit's */
    ck_assert(!made_not_durable(db, EMQ_EIO));
    ck_assert_uint_eq(digest(db), d_before);
    fv_power_off();
    emq_close(db);
    ck_assert_int_ge(fv_power_loss(2, 0), 0);
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    excl = 0;
    assert_clean(db, "after the power loss");
    ck_assert_uint_eq(digest(db), d_after);
    emq_close(db);
    fv_track(0);
}
END_TEST

/*
 * Group commit (storage/gsync.c): when the shared sync after a commit
 * fails, the commit is already visible, so its writer is told EMQ_EIO "the
 * commit is made", and the file's writers are held: every handle's next
 * write first runs a checkpoint; while that fails the write is refused with
 * nothing applied, and once it completes writes go on. A power loss then
 * keeps everything acknowledged and the held commit (the checkpoint made
 * it durable).
 */
START_TEST(a_failed_group_sync_holds_writes_until_a_checkpoint)
{
    const scen *s = &scens[0];
    long counts[FV_NKIND];
    emq_db *db, *db2;
    uint64_t d2;
    prepare(s);
    measure(s, counts);
    restore();
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    node_id = 8;
    db2 = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    node_id = 7;
    run_with_the_last_sync_failing(db, s, counts); /* the group's */
    ck_assert_msg(made_not_durable(db, EMQ_EIO), "%s", emq_errmsg(db));
    ck_assert_uint_eq(digest(db), d_after); /* made, and visible */
    ck_assert_uint_eq(digest(db2), d_after);
    /* The other handle's write: its checkpoint fails, nothing is written. */
    fv_count_reset();
    fv_arm(FV_SYNC, 1, SQLITE_IOERR_FSYNC, 0);
    ck_assert_int_eq(emq_enqueue(db2, Q, ids[5], "x", 1), EMQ_EIO);
    ck_assert(fv_fired());
    fv_disarm();
    ck_assert_msg(strstr(emq_errmsg(db2), "nothing is written") != NULL,
                  "%s", emq_errmsg(db2));
    ck_assert_uint_eq(digest(db2), d_after);
    /* And the first handle's, the same. */
    fv_count_reset();
    fv_arm(FV_SYNC, 1, SQLITE_IOERR_FSYNC, 0);
    ck_assert_int_eq(emq_enqueue(db, Q, ids[5], "x", 1), EMQ_EIO);
    fv_disarm();
    ck_assert_uint_eq(digest(db), d_after);
    /* The disk is back: the checkpoint completes and the write goes on. */
    ck_assert_int_eq(emq_enqueue(db2, Q, ids[5], "x", 1), EMQ_ENQUEUED);
    d2 = digest(db2);
    ck_assert_uint_ne(d2, d_after);
    ck_assert_int_eq(emq_enqueue(db, Q, ids[5], "x", 1), EMQ_DUPLICATE);
    assert_clean(db, "after the held writes");
    /* A power loss that keeps nothing unsynced keeps both. */
    fv_power_off();
    emq_close(db);
    emq_close(db2);
    ck_assert_int_ge(fv_power_loss(0, 0), 0);
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    assert_clean(db, "after the power loss");
    ck_assert_uint_eq(digest(db), d2);
    emq_close(db);
    fv_track(0);
}
END_TEST

/*
 * Group commit under threads: GC_THREADS handles on one file (shared mode,
 * synchronous FULL) enqueue as fast as they can, sharing the -wal's syncs;
 * the power fails at a point drawn per round, and a random prefix of the
 * unsynced writes reaches the disk. Every enqueue that answered
 * EMQ_ENQUEUED is in the recovered file, which is clean. (The fault VFS
 * counts the syncs: fewer than the commits when they were shared.)
 */
#define GC_THREADS 4
#define GC_MAX 400

typedef struct gc_writer {
    emq_db *db;
    char acked[GC_MAX][EMQ_ID_SIZE];
    int nacked, last_rc;
    _Atomic int *total, *running;
} gc_writer;

static void *gc_run(void *arg)
{
    gc_writer *w = arg;
    char id[EMQ_ID_SIZE];
    while (w->nacked < GC_MAX) {
        int rc = emq_mint(w->db, "JOB", id);
        if (rc == EMQ_OK) rc = emq_enqueue(w->db, Q, id, "group", 5);
        if (rc != EMQ_ENQUEUED) {
            w->last_rc = rc;
            break;
        }
        memcpy(w->acked[w->nacked++], id, EMQ_ID_SIZE);
        atomic_fetch_add(w->total, 1);
    }
    atomic_fetch_sub(w->running, 1);
    return NULL;
}

START_TEST(group_commit_keeps_every_acknowledged_write_at_power_loss)
{
    int rounds = rel_quick() ? 4 : 16;
    long acked_all = 0, syncs_all = 0, made_all = 0;
    scen s0 = scens[0];
    prepare(&s0); /* the template: three pending jobs */
    for (int r = 0; r < rounds; r++) {
        gc_writer *w = calloc(GC_THREADS, sizeof *w);
        pthread_t th[GC_THREADS];
        _Atomic int total = 0, running = GC_THREADS;
        int stop_at = 10 + (r * 37) % 200, acked = 0, st;
        emq_db *db;
        ck_assert_ptr_nonnull(w);
        restore();
        fv_track(1);
        for (int i = 0; i < GC_THREADS; i++) {
            node_id = 20 + i;
            w[i].db = open_db(EMQ_SYNC_FULL, 1000);
            w[i].total = &total;
            w[i].running = &running;
        }
        node_id = 7;
        fv_count_reset();
        for (int i = 0; i < GC_THREADS; i++)
            ck_assert_int_eq(pthread_create(&th[i], NULL, gc_run, &w[i]), 0);
        while (atomic_load(&total) < stop_at && atomic_load(&running) > 0)
            sched_yield();
        fv_power_off();
        for (int i = 0; i < GC_THREADS; i++) pthread_join(th[i], NULL);
        syncs_all += fv_count(FV_SYNC);
        for (int i = 0; i < GC_THREADS; i++) {
            /* each stopped at the power failure, with a typed error */
            ck_assert_msg(w[i].nacked < GC_MAX && w[i].last_rc == EMQ_EIO,
                          "round %d writer %d: %d acknowledged, rc %d (%s)",
                          r, i, w[i].nacked, w[i].last_rc,
                          emq_errmsg(w[i].db));
            made_all += made_not_durable(w[i].db, w[i].last_rc);
            acked += w[i].nacked;
            emq_close(w[i].db);
        }
        acked_all += acked;
        ck_assert_int_ge(fv_power_loss(1, (uint64_t)r * 7919 + 1), 0);
        db = open_db(EMQ_SYNC_FULL, 1000);
        assert_clean(db, "group commit after the power loss");
        for (int i = 0; i < GC_THREADS; i++)
            for (int k = 0; k < w[i].nacked; k++) {
                ck_assert_int_eq(emq_job_state(db, Q, w[i].acked[k], &st),
                                 EMQ_OK);
                ck_assert_msg(st == EMQ_STATE_PENDING, "round %d: writer "
                              "%d's acknowledged enqueue %d (%s) was lost "
                              "by the power loss", r, i, k, w[i].acked[k]);
            }
        emq_close(db);
        fv_track(0);
        free(w);
    }
    fprintf(stderr, "faults: group commit: %d rounds, %d threads: %ld "
            "acknowledged enqueues kept, %ld syncs, %ld writers told "
            "\"made, durability unknown\"\n", rounds, GC_THREADS, acked_all,
            syncs_all, made_all);
}
END_TEST

/*
 * Random Tier 1 workloads, then a power loss that keeps a random prefix of
 * the unsynced writes. FULL: the recovered keyspace is exactly the last
 * acknowledged one. NORMAL: it is the keyspace after some acknowledged
 * transition, never older than the last one that synced (a checkpoint),
 * and the checker passes.
 */
static void power_loss_rounds(int sync)
{
    long rounds = rel_size(40, 6), steps = rel_size(60, 25);
    uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (uint64_t)sync;
    uint64_t *dg = calloc(2 * (size_t)steps + 1, sizeof *dg);
    long kept_old = 0, synced_floor_total = 0;
    for (long r = 0; r < rounds; r++) {
        emq_db *db;
        long last_sync = 0, nd = 0; /* every state up to last_sync is on disk */
        unlink(path);
        unlink_side();
        clk.now = T0;
        db = open_db(sync, 8);
        fv_track(1);
        dg[nd++] = digest(db);
        for (long i = 0; i < steps; i++) {
            char id[EMQ_ID_SIZE];
            emq_job j;
            long syncs = fv_count(FV_SYNC);
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            int pick = (int)((seed >> 33) % 6);
            clk.now += 7;
            int rc;
            switch (pick) {
            case 0:
            case 1:
                ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
                rc = emq_enqueue(db, Q, id, "payload", 7);
                break;
            case 2:
                rc = emq_claim(db, Q, 20, &j);
                if (rc == EMQ_OK) {
                    /* the claim is a state of its own */
                    dg[nd++] = digest(db);
                    if (fv_count(FV_SYNC) != syncs) last_sync = nd - 2;
                    syncs = fv_count(FV_SYNC);
                    if ((seed >> 20) & 1)
                        rc = emq_complete(db, Q, j.id, j.attempts);
                    else
                        rc = emq_retry(db, Q, j.id, j.attempts, 5, 3, "e", 1);
                    emq_job_clear(&j);
                }
                break;
            case 3: rc = emq_promote(db, Q, 10, NULL); break;
            case 4: rc = emq_reap(db, Q, NULL); break;
            default:
                ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
                rc = emq_enqueue_in(db, Q, id, "x", 1, 3);
            }
            ck_assert_int_ge(rc, 0);
            dg[nd++] = digest(db);
            /* A sync inside transition i makes every earlier transition
             * durable; whether i itself is depends on where the sync fell
             * (the checkpoint after its commit: yes; the WAL header sync of
             * a restarted WAL before its frames: no). */
            if (fv_count(FV_SYNC) != syncs) last_sync = nd - 2;
        }
        fv_power_off();
        emq_close(db);
        ck_assert_int_ge(fv_power_loss(1, seed | 1), 0);
        db = open_db(sync, 8);
        assert_clean(db, "after power loss");
        uint64_t d = digest(db);
        long at = -1;
        for (long k = nd - 1; k >= 0; k--)
            if (dg[k] == d) { at = k; break; }
        ck_assert_msg(at >= 0, "round %ld: the recovered keyspace is not the "
                      "state after any acknowledged transition", r);
        if (sync == EMQ_SYNC_FULL)
            ck_assert_msg(at == nd - 1, "round %ld: FULL lost acknowledged "
                          "transitions (recovered state %ld of %ld)", r, at,
                          nd - 1);
        else
            ck_assert_msg(at >= last_sync, "round %ld: NORMAL recovered "
                          "state %ld, older than the last sync at %ld", r,
                          at, last_sync);
        kept_old += (nd - 1) - at;
        synced_floor_total += last_sync;
        fv_track(0);
        emq_close(db);
    }
    fprintf(stderr, "faults: power loss %s: %ld rounds of %ld transitions, "
            "%ld acknowledged transitions rolled back in total\n",
            sync == EMQ_SYNC_FULL ? "FULL" : "NORMAL", rounds, steps,
            kept_old);
    (void)synced_floor_total;
    free(dg);
}

START_TEST(power_loss_full_keeps_every_acknowledged_transition)
{
    power_loss_rounds(EMQ_SYNC_FULL);
}
END_TEST

START_TEST(power_loss_normal_rolls_back_to_a_consistent_prefix)
{
    power_loss_rounds(EMQ_SYNC_NORMAL);
}
END_TEST

/* ------------------------------------------------------ allocation sweeps */

/*
 * Two heaps can fail: SQLite's (SQLITE_CONFIG_MALLOC) and emqlite's own
 * (emq_set_allocator). Both are hooked for the whole test case; `heap`
 * says which one counts allocations and fails the alloc_fail_at'th. Both
 * are watched for leaks on every run.
 */
enum { HEAP_SQLITE, HEAP_EMQ, NHEAP };
static const char *const heap_name[NHEAP] = {"SQLite", "emqlite"};
static int heap;
static sqlite3_mem_methods real_mem;
static long alloc_count, alloc_fail_at;
static long emq_blocks; /* emqlite blocks outstanding */

/*
 * The points swept: the first and the last allocation of each call path
 * (the return addresses of the stack, through SQLite and emqlite, as
 * backtrace(3) gives them) in the counting run. The allocations between
 * them on the same path are the same code failing in the middle turns of a
 * loop (a row, a column, a page): the first turn stands for them, with
 * nothing done yet, and the last, with all the turns before it done.
 * Every distinct path is failed; EMQ_TEST_OOM_ALL=1 fails every allocation
 * (the long mode, by hand).
 */
static int counting;      /* the counting run: note each point's path */
static int oom_all;       /* EMQ_TEST_OOM_ALL: every point */
typedef struct point {
    uint64_t h;           /* the hash of its stack */
    long n;               /* its number in the run */
} point;
static point *points;     /* the counting run's points, in order */
static size_t npoints, points_cap;
static long *sweep_at;    /* points to fail, ascending */
static size_t nsweep;
static size_t npaths;     /* distinct paths among the points */

static void note_point(long n)
{
    void *fr[64];
    int depth = backtrace(fr, 64);
    if (npoints == points_cap) {
        points_cap = points_cap ? 2 * points_cap : 1024;
        points = realloc(points, points_cap * sizeof *points);
        ck_assert_ptr_nonnull(points);
    }
    points[npoints].h = XXH3_64bits(fr, (size_t)depth * sizeof *fr);
    points[npoints++].n = n;
}

/* Start counting. */
static void count_points(void)
{
    npoints = 0;
    alloc_count = 0;
    counting = 1;
}

static int by_path(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return (x->n > y->n) - (x->n < y->n);
}

static int by_number(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* End counting: the points to fail, ascending: each path's first and last
 * (every point under EMQ_TEST_OOM_ALL). */
static void end_count(void)
{
    counting = 0;
    nsweep = npaths = 0;
    free(sweep_at);
    sweep_at = calloc(npoints ? npoints : 1, sizeof *sweep_at);
    ck_assert_ptr_nonnull(sweep_at);
    if (npoints) qsort(points, npoints, sizeof *points, by_path);
    for (size_t i = 0, j; i < npoints; i = j) {
        for (j = i + 1; j < npoints && points[j].h == points[i].h; j++)
            if (oom_all) sweep_at[nsweep++] = points[j].n;
        npaths++;
        sweep_at[nsweep++] = points[i].n;
        if (!oom_all && j - 1 > i) sweep_at[nsweep++] = points[j - 1].n;
    }
    qsort(sweep_at, nsweep, sizeof *sweep_at, by_number);
}

static int fail_now(int h)
{
    if (h != heap) return 0;
    ++alloc_count;
    if (counting) note_point(alloc_count);
    return alloc_count == alloc_fail_at;
}

static void *oom_malloc(int n)
{
    return fail_now(HEAP_SQLITE) ? NULL : real_mem.xMalloc(n);
}

static void *oom_realloc(void *p, int n)
{
    return fail_now(HEAP_SQLITE) ? NULL : real_mem.xRealloc(p, n);
}

static void *emq_oom_malloc(void *ctx, size_t n)
{
    void *p;
    (void)ctx;
    if (fail_now(HEAP_EMQ)) return NULL;
    if ((p = malloc(n)) != NULL) emq_blocks++;
    return p;
}

static void *emq_oom_realloc(void *ctx, void *p, size_t n)
{
    void *q;
    (void)ctx;
    if (fail_now(HEAP_EMQ)) return NULL;
    if ((q = realloc(p, n)) != NULL && p == NULL) emq_blocks++;
    return q;
}

static void emq_oom_free(void *ctx, void *p)
{
    (void)ctx;
    if (p != NULL) emq_blocks--;
    free(p);
}

typedef struct heap_use {
    int64_t sqlite_bytes;
    long emq_blocks;
} heap_use;

static heap_use in_use(void)
{
    heap_use u = {sqlite3_memory_used(), emq_blocks};
    return u;
}

static void assert_no_leak(heap_use base, const char *what, long n)
{
    heap_use u = in_use();
    ck_assert_msg(u.sqlite_bytes == base.sqlite_bytes &&
                  u.emq_blocks == base.emq_blocks, "%s: %s allocation %ld: "
                  "leaked %lld SQLite bytes, %ld emqlite blocks", what,
                  heap_name[heap], n,
                  (long long)(u.sqlite_bytes - base.sqlite_bytes),
                  u.emq_blocks - base.emq_blocks);
}

static void oom_setup(void)
{
    sqlite3_mem_methods m;
    const emq_allocator a = {emq_oom_malloc, emq_oom_realloc, emq_oom_free,
                             NULL};
    clk.now = T0;
    ck_assert_int_eq(rel_mkdtemp_mem(dir, sizeof dir, "oom"), 0);
    rel_path(path, sizeof path, dir, "m.emq");
    ck_assert_int_eq(sqlite3_shutdown(), SQLITE_OK);
    ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_mem),
                     SQLITE_OK);
    m = real_mem;
    m.xMalloc = oom_malloc;
    m.xRealloc = oom_realloc;
    ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &m), SQLITE_OK);
    ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
    ck_assert_int_eq(emq_set_allocator(&a), EMQ_OK);
    ck_assert_int_eq(fv_install(), 0); /* simulated syncs: fast */
    alloc_fail_at = 0;
    emq_blocks = 0;
    oom_all = rel_env_long("EMQ_TEST_OOM_ALL", 0) != 0;
    {   /* backtrace(3) loads its unwinder at its first call: not while
         * counting (an allocation of the C library's, not a point) */
        void *fr[4];
        (void)backtrace(fr, 4);
    }
}

static void oom_teardown(void)
{
    alloc_fail_at = 0;
    fv_uninstall();
    ck_assert_int_eq(emq_set_allocator(NULL), EMQ_OK);
    sqlite3_shutdown();
    sqlite3_config(SQLITE_CONFIG_MALLOC, &real_mem);
    sqlite3_initialize();
    free(tpl);
    tpl = NULL;
    free(sweep_at);
    free(points);
    sweep_at = NULL;
    points = NULL;
    nsweep = npoints = points_cap = npaths = 0;
    rel_rmrf(dir);
}

/* Loop index i: scenario i % NSCEN on heap i / NSCEN. */
START_TEST(failed_allocations_at_every_point)
{
    const scen *s = &scens[_i % (int)NSCEN];
    long total, runs = 0, nomem = 0;
    emq_db *db;
    heap_use base;
    heap = _i / (int)NSCEN;
    prepare(s);
    /* warm-up: the first open allocates process-wide state once */
    restore_roomy();
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    emq_close(db);
    base = in_use();
    restore_roomy();
    db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
    cold(db);
    count_points();
    ck_assert_int_eq(run_op(db, s), s->verdict);
    end_count();
    total = alloc_count;
    emq_close(db);
    assert_no_leak(base, s->name, 0);
    for (size_t k = 0; k < nsweep; k += (size_t)stride()) {
        long n = sweep_at[k];
        int rc;
        restore_roomy();
        db = open_db(EMQ_SYNC_FULL, s->ckpt_frames);
        cold(db);
        alloc_count = 0;
        alloc_fail_at = n;
        rc = run_op(db, s);
        alloc_fail_at = 0;
        runs++;
        if (rc < 0) {
            nomem++;
            ck_assert_msg(rc == EMQ_ENOMEM, "%s: %s allocation %ld: rc %d "
                          "(%s) %s", s->name, heap_name[heap], n, rc,
                          emq_strerror(rc), emq_errmsg(db));
            ck_assert_uint_eq(digest(db), d_before);
            assert_clean(db, s->name);
            ck_assert_int_eq(run_op(db, s), s->verdict);
        } else {
            ck_assert_int_eq(rc, s->verdict);
        }
        ck_assert_uint_eq(digest(db), d_after);
        emq_close(db);
        assert_no_leak(base, s->name, n);
    }
    fprintf(stderr, "oom: %-20s %ld %s allocations on %zu paths, %ld "
            "runs, %ld EMQ_ENOMEM\n", s->name, total, heap_name[heap],
            npaths, runs, nomem);
}
END_TEST

/* Loop index: the heap. */
START_TEST(failed_allocations_while_opening)
{
    long total, runs = 0, paths_all = 0, points_all = 0;
    emq_db *db;
    emq_options o;
    heap_use base;
    char id[EMQ_ID_SIZE];
    heap = _i;
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    /* an existing file, then a fresh one */
    for (int fresh = 0; fresh < 2; fresh++) {
        unlink(path);
        unlink_side();
        if (!fresh) {
            ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
            ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
            ck_assert_int_eq(emq_enqueue(db, Q, id, "p", 1), EMQ_ENQUEUED);
            emq_close(db);
        }
        base = in_use();
        count_points();
        ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
        end_count();
        total = alloc_count;
        emq_close(db);
        paths_all += npaths;
        points_all += total;
        for (size_t k = 0; k < nsweep; k += (size_t)stride()) {
            long n = sweep_at[k];
            if (fresh) {
                unlink(path);
                unlink_side();
            }
            alloc_count = 0;
            alloc_fail_at = n;
            int rc = emq_open(path, &o, &db);
            alloc_fail_at = 0;
            runs++;
            if (rc == EMQ_OK) {
                ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
                emq_close(db);
            } else {
                ck_assert_msg(rc == EMQ_ENOMEM, "open at %s allocation %ld: "
                              "rc %d (%s)", heap_name[heap], n, rc,
                              emq_strerror(rc));
                ck_assert_ptr_null(db);
            }
            assert_no_leak(base, "emq_open", n);
            /* the file stays openable */
            ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
            ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
            emq_close(db);
        }
    }
    fprintf(stderr, "oom: emq_open: %s heap: %ld allocations on %ld "
            "paths, %ld runs\n", heap_name[heap], points_all, paths_all,
            runs);
}
END_TEST

/* The allocator cannot change under an open handle; NULL functions are
 * refused; every block a handle made goes back through the same one. */
START_TEST(allocator_is_fixed_while_a_handle_is_open)
{
    emq_allocator bad = {emq_oom_malloc, NULL, emq_oom_free, NULL};
    emq_db *db;
    emq_job j;
    ck_assert_int_eq(emq_set_allocator(&bad), EMQ_EINVAL);
    db = open_db(EMQ_SYNC_NORMAL, 1000);
    ck_assert_int_gt(emq_blocks, 0);
    ck_assert_int_eq(emq_set_allocator(NULL), EMQ_EINVAL);
    put3(db);
    ck_assert_int_eq(emq_claim(db, Q, 1000, &j), EMQ_OK);
    emq_close(db);
    ck_assert_int_eq(emq_blocks, 1); /* the claimed payload, still held */
    emq_job_clear(&j);
    ck_assert_int_eq(emq_blocks, 0);
}
END_TEST

Suite *suite_faults(void)
{
    Suite *s = suite_create("faults");
    TCase *io = tcase_create("io");
    tcase_add_checked_fixture(io, io_setup, io_teardown);
    tcase_set_timeout(io, 600);
    tcase_add_loop_test(io, io_faults_at_every_point, 0, (int)NSCEN);
    tcase_add_loop_test(io, io_faults_while_opening, 0, 2);
    tcase_add_test(io, path_scenarios_take_their_paths);
    tcase_add_test(io, disk_full_persists_then_recovers);
    tcase_add_test(io, failed_commit_sync_can_still_reach_the_disk);
    tcase_add_test(io, a_failed_group_sync_holds_writes_until_a_checkpoint);
    tcase_add_test(io, group_commit_keeps_every_acknowledged_write_at_power_loss);
    tcase_add_test(io, power_loss_full_keeps_every_acknowledged_transition);
    tcase_add_test(io, power_loss_normal_rolls_back_to_a_consistent_prefix);
    suite_add_tcase(s, io);
    TCase *mem = tcase_create("oom");
    tcase_add_checked_fixture(mem, oom_setup, oom_teardown);
    tcase_set_timeout(mem, 600);
    tcase_add_loop_test(mem, failed_allocations_at_every_point, 0,
                        (int)(NHEAP * NSCEN));
    tcase_add_loop_test(mem, failed_allocations_while_opening, 0, NHEAP);
    tcase_add_test(mem, allocator_is_fixed_while_a_handle_is_open);
    suite_add_tcase(s, mem);
    return s;
}
