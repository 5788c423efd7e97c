/*
 * test_walbuf.c — the WAL write coalescer (storage/walbuf.c): a commit's
 * frames reach the -wal in one write, a big transaction in writes of at
 * most the buffer, and frames a rolled-back transaction spilled never land
 * on top of another connection's later commit. Durability under faults and
 * power loss is the fault suite's (every handle opens through the shim).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <sqlite3.h>
#include "emqlite.h"
#include "db.h"
#include "store.h"
#include "store_int.h"
#include "faultvfs.h"
#include "relutil.h"
#include "suites.h"

static char dir[512], path[600];
static rel_clock clk = {1700000000000};

static void setup(void)
{
    ck_assert_int_eq(rel_mkdtemp(dir, sizeof dir, "walbuf"), 0);
    rel_path(path, sizeof path, dir, "w.emq");
}

static void teardown(void)
{
    rel_rmrf(dir);
}

static emq_db *open_db(void)
{
    emq_options o;
    emq_db *db = NULL;
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    return db;
}

static void enqueue(emq_db *db)
{
    char id[EMQ_ID_SIZE];
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "q", id, "payload-bytes", 13),
                     EMQ_ENQUEUED);
}

/* The writes SQLite made to db's -wal and those that reached the file. */
static void wal_stats(emq_db *db, long *writes, long *out)
{
    emq_walbuf_stats(emq_store_sqlite(emq_db_store(db)), writes, out);
}

static int64_t pending(emq_db *db)
{
    const char *name = "pending";
    int64_t v = -1;
    ck_assert_int_eq(emq_counts(db, "q", 1, &name, &v), EMQ_OK);
    return v;
}

/* Under the fault VFS, which counts the writes that reach it: SQLite
 * writes a frame as two calls (header, page), the shim passes one. */
START_TEST(a_commit_reaches_the_wal_in_one_write)
{
    long writes, flushes;
    emq_db *db;
    ck_assert_int_eq(fv_install(), 0);
    db = open_db();
    for (int i = 0; i < 20; i++)
        enqueue(db);
    wal_stats(db, &writes, &flushes);
    ck_assert_int_gt(flushes, 0);
    for (int i = 0; i < 50; i++) {
        long w0, f0;
        wal_stats(db, &w0, &f0);
        fv_count_reset();
        enqueue(db);
        wal_stats(db, &writes, &flushes);
        /* one enqueue: at least two frames from SQLite, one write out
         * (no checkpoint runs: the default waits for 4000 frames) */
        ck_assert_int_ge(writes - w0, 4);
        ck_assert_int_eq(flushes - f0, 1);
        ck_assert_int_eq(fv_count(FV_WRITE), 1);
    }
    ck_assert_int_eq(pending(db), 70);
    emq_close(db);
    db = open_db();
    ck_assert_int_eq(pending(db), 70);
    emq_close(db);
    fv_uninstall();
}
END_TEST

/* Enqueue `n` jobs with `size`-byte payloads in one transaction; the
 * calls SQLite made to the -wal and those that reached the file. */
static void batch(emq_db *db, int n, size_t size, long *writes, long *out)
{
    emq_item *items = calloc((size_t)n, sizeof *items);
    int *verdicts = calloc((size_t)n, sizeof *verdicts);
    char (*ids)[EMQ_ID_SIZE] = calloc((size_t)n, sizeof *ids);
    char *payload = malloc(size);
    long w0, f0;
    ck_assert_ptr_nonnull(items);
    ck_assert_ptr_nonnull(verdicts);
    ck_assert_ptr_nonnull(ids);
    ck_assert_ptr_nonnull(payload);
    memset(payload, 'p', size);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(emq_mint(db, "JOB", ids[i]), EMQ_OK);
        items[i].id = ids[i];
        items[i].payload = payload;
        items[i].len = size;
    }
    wal_stats(db, &w0, &f0);
    ck_assert_int_eq(emq_enqueue_many(db, "q", items, (size_t)n, verdicts),
                     EMQ_OK);
    wal_stats(db, writes, out);
    *writes -= w0;
    *out -= f0;
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(verdicts[i], EMQ_ENQUEUED);
    free(items);
    free(verdicts);
    free(ids);
    free(payload);
}

/* A transaction bigger than the buffer (64 KiB) goes out in a few writes
 * of at most the buffer; one bigger than the page cache (SQLite spills
 * pages into the WAL, rewrites some in place and re-reads frames to redo
 * their checksums) commits whole as well. */
START_TEST(a_big_transaction_commits_whole)
{
    long writes, out;
    emq_db *db = open_db();
    batch(db, 1000, 100, &writes, &out);
    /* ~250 frames of 1 KiB pages, 2 calls each: 4 writes of <= 64 KiB */
    ck_assert_int_ge(out, 4);
    ck_assert_int_lt(out * 20, writes);
    batch(db, 4000, 300, &writes, &out);
    ck_assert_int_gt(out, 10);
    emq_close(db);
    db = open_db();
    ck_assert_int_eq(pending(db), 5000);
    ck_assert_int_eq(emq_check(db, NULL, NULL, NULL), EMQ_OK);
    emq_close(db);
}
END_TEST

static sqlite3 *conn(int cache_pages)
{
    sqlite3 *c = NULL;
    char q[64];
    ck_assert_int_eq(sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE |
                                     SQLITE_OPEN_CREATE, emq_walbuf_vfs()),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(c, "PRAGMA journal_mode=WAL", NULL, NULL,
                                  NULL), SQLITE_OK);
    snprintf(q, sizeof q, "PRAGMA cache_size=%d", cache_pages);
    ck_assert_int_eq(sqlite3_exec(c, q, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_busy_timeout(c, 2000);
    return c;
}

static void exec(sqlite3 *c, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(c, sql, NULL, NULL, &err);
    ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, err ? err : "");
    sqlite3_free(err);
}

static int64_t one(sqlite3 *c, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v;
    ck_assert_int_eq(sqlite3_prepare_v2(c, sql, -1, &s, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
    v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/*
 * Connection A spills uncommitted pages into the WAL (a page cache of 4
 * pages, a transaction of ~10: all of them still gathered), rolls back,
 * and stays open; B then commits frames at the same offsets; A reads and
 * closes. Had A kept its
 * spilled frames gathered past its write lock, they would land on B's
 * frames now: B's rows would be lost or the file corrupt.
 */
START_TEST(spilled_frames_of_a_rollback_never_land_on_later_frames)
{
    sqlite3 *a, *b, *c;
    a = conn(4);
    b = conn(2000);
    exec(a, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
    exec(a, "BEGIN IMMEDIATE");
    exec(a, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
            "WHERE i < 40) INSERT INTO t SELECT i, zeroblob(900) FROM n");
    exec(a, "ROLLBACK");
    exec(b, "BEGIN IMMEDIATE");
    exec(b, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
            "WHERE i < 60) INSERT INTO t SELECT i, randomblob(700) FROM n");
    exec(b, "COMMIT");
    ck_assert_int_eq(one(a, "SELECT count(*) FROM t"), 60);
    ck_assert_int_eq(sqlite3_close(a), SQLITE_OK);
    c = conn(2000);
    ck_assert_int_eq(one(c, "SELECT count(*) FROM t"), 60);
    ck_assert_int_eq(one(c, "SELECT sum(length(v)) FROM t"), 60 * 700);
    {
        sqlite3_stmt *s;
        ck_assert_int_eq(sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1,
                                            &s, NULL), SQLITE_OK);
        ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
        ck_assert_str_eq((const char *)sqlite3_column_text(s, 0), "ok");
        sqlite3_finalize(s);
    }
    ck_assert_int_eq(sqlite3_close(b), SQLITE_OK);
    ck_assert_int_eq(sqlite3_close(c), SQLITE_OK);
}
END_TEST

Suite *suite_walbuf(void)
{
    Suite *s = suite_create("walbuf");
    TCase *t = tcase_create("walbuf");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, a_commit_reaches_the_wal_in_one_write);
    tcase_add_test(t, a_big_transaction_commits_whole);
    tcase_add_test(t, spilled_frames_of_a_rollback_never_land_on_later_frames);
    suite_add_tcase(s, t);
    return s;
}
