/*
 * test_schema.c — suite "schema": the schema ladder (storage/schema.def).
 *
 * tests/fixtures/schema1.emq is a file of schema 1 written by the emqlite of
 * commit 58b2b9c (tests/fixtures/make_schema1.c says how, and what it
 * holds). Opened read-write by this build it climbs every step to
 * EMQ_SCHEMA_VERSION in one write transaction and keeps every job; a
 * read-only handle refuses it untouched; a fault at any write of the climb
 * leaves the file wholly at its old version or wholly at the new one. A
 * file of every older version (the fixture climbed part of the way with the
 * ladder's own steps) opens current; a newer one is refused untouched.
 * When a step is added, these tests prove it with no change; version 4
 * (the stream type) is also proven on its own: a schema-3 file gets the
 * stream tables and holds streams.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <check.h>
#include <sqlite3.h>
#include "emqlite.h"
#include "db.h"
#include "store_int.h"
#include "faultvfs.h"
#include "relutil.h"
#include "suites.h"

static char dir[256], path[320];
static rel_clock clk = {1767225600000};

static void fixture(char *out, size_t cap)
{
    const char *s = getenv("srcdir");
    if (s && s[0]) {
        snprintf(out, cap, "%s/tests/fixtures/schema1.emq", s);
        return;
    }
    snprintf(out, cap, "%s", __FILE__);
    char *t = strstr(out, "test_schema.c");
    if (t) snprintf(t, cap - (size_t)(t - out), "fixtures/schema1.emq");
}

/* A fresh copy of the fixture at `path`, nothing beside it. */
static void copy_fixture(void)
{
    char src[1024];
    FILE *f;
    long n;
    unsigned char *b;
    fixture(src, sizeof src);
    f = fopen(src, "rb");
    ck_assert_msg(f != NULL, "cannot read the fixture %s", src);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)n);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    rel_rmrf(dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(rel_write_file(path, b, (size_t)n), 0);
    free(b);
}

static void setup(void)
{
    ck_assert_int_eq(rel_mkdtemp(dir, sizeof dir, "schema"), 0);
    rel_path(path, sizeof path, dir, "s.emq");
    copy_fixture();
}

static void teardown(void)
{
    rel_rmrf(dir);
}

static emq_options opts(void)
{
    emq_options o;
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    return o;
}

static emq_db *must_open(int readonly)
{
    emq_options o = opts();
    emq_db *db = NULL;
    char err[512];
    o.readonly = readonly;
    int rc = emq_open_ex(path, &o, &db, err, sizeof err);
    ck_assert_msg(rc == EMQ_OK, "open: %d %s", rc, err);
    return db;
}

/* user_version through a plain read-only connection, and whether the
 * file's schema objects are exactly those of that version. */
static int raw_version(int *exact)
{
    sqlite3 *s;
    sqlite3_stmt *q;
    int v = -1;
    ck_assert_int_eq(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(s, "PRAGMA user_version", -1, &q,
                                        NULL), SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW) v = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    if (exact) {
        *exact = v >= 1 && v <= EMQ_SCHEMA_VERSION &&
                 emq_schema_judge(s, v, NULL, NULL) == 0;
    }
    sqlite3_close(s);
    return v;
}

static char *field(emq_db *db, const char *q, const char *id, const char *f)
{
    emq_field *fs;
    size_t n;
    char *v = NULL;
    ck_assert_int_eq(emq_job_get(db, q, id, &fs, &n), EMQ_OK);
    for (size_t i = 0; i < n; i++)
        if (strcmp(fs[i].name, f) == 0) v = strdup(fs[i].value);
    emq_fields_free(fs, n);
    ck_assert_msg(v != NULL, "%s has no field %s", id, f);
    return v;
}

static void field_is(emq_db *db, const char *q, const char *id,
                     const char *f, const char *want)
{
    char *v = field(db, q, id, f);
    ck_assert_msg(strcmp(v, want) == 0, "%s.%s is %s, not %s", id, f, v,
                  want);
    free(v);
}

/* Everything make_schema1.c put in the file, and a clean check. */
static void fixture_contents(emq_db *db)
{
    emq_stats s;
    ck_assert_int_eq(emq_stats_get(db, "mail", &s), EMQ_OK);
    ck_assert_int_eq(s.pending, 1);
    ck_assert_int_eq(s.active, 2);
    ck_assert_int_eq(s.scheduled, 3);
    ck_assert_int_eq(s.dead, 1);
    ck_assert_int_eq(s.completed, 1);
    ck_assert_int_eq(s.failed, 1);
    ck_assert_int_eq(s.paused, 0);
    ck_assert_int_eq(emq_stats_get(db, "thumbs", &s), EMQ_OK);
    ck_assert_int_eq(s.pending, 1);
    ck_assert_int_eq(s.paused, 1);
    field_is(db, "mail", "JOB00000000001", "state", "active");
    field_is(db, "mail", "JOB00000000001", "attempts", "1");
    field_is(db, "mail", "JOB00000000003", "state", "dead");
    field_is(db, "mail", "JOB00000000003", "last_error", "smtp 550");
    field_is(db, "mail", "JOB00000000005", "state", "scheduled");
    field_is(db, "mail", "JOB00000000005", "last_error", "smtp 421");
    field_is(db, "mail", "JOB00000000006", "payload", "{\"mail\":6}");
    field_is(db, "mail", "JOB00000000007", "state", "scheduled");
    emq_field *fs;
    size_t n;
    ck_assert_int_eq(emq_job_get(db, "mail", "JOB00000000004", &fs, &n),
                     EMQ_GONE);
    ck_assert_int_eq(emq_job_get(db, "thumbs", "JOB00000000009", &fs, &n),
                     EMQ_OK);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(fs[i].name, "payload") == 0) {
            ck_assert_uint_eq(fs[i].value_len, 256);
            for (int b = 0; b < 256; b++)
                ck_assert_uint_eq((unsigned char)fs[i].value[b], b);
            found = 1;
        }
    emq_fields_free(fs, n);
    ck_assert(found);
    size_t viol = 9, notes = 9;
    ck_assert_int_eq(rel_check(db, &viol, &notes, 1), EMQ_OK);
    ck_assert_uint_eq(viol, 0);
    ck_assert_uint_eq(notes, 0);
}

START_TEST(the_schema_1_fixture_is_schema_1)
{
    int exact;
    ck_assert_int_eq(raw_version(&exact), 1);
    ck_assert_msg(exact, "the fixture's objects are not schema 1's as the "
                  "ladder builds it");
}
END_TEST

START_TEST(the_schema_1_fixture_opens_upgraded_with_every_job)
{
    emq_db *db = must_open(0);
    int exact;
    ck_assert_int_eq(raw_version(&exact), EMQ_SCHEMA_VERSION);
    ck_assert(exact);
    fixture_contents(db);
    /* the upgraded file works: a full cycle on it */
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, "mail", "JOB0000000000A", "new", 3),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "mail", 1000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, "JOB00000000006");
    ck_assert_int_eq(emq_complete(db, "mail", j.id, j.attempts), EMQ_OK);
    emq_job_clear(&j);
    emq_close(db);
    /* and opens again, read-only as well */
    db = must_open(1);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    emq_close(db);
}
END_TEST

START_TEST(a_read_only_handle_refuses_an_older_schema_untouched)
{
    emq_options o = opts();
    emq_db *db = (emq_db *)1;
    char err[512], side[400];
    uint64_t d0, d1;
    int e;
    struct stat sb;
    o.readonly = 1;
    ck_assert_int_eq(rel_file_digest(path, &d0, &e), 0);
    ck_assert_int_eq(emq_open_ex(path, &o, &db, err, sizeof err),
                     EMQ_ESCHEMA);
    ck_assert_ptr_null(db);
    ck_assert_msg(strstr(err, "schema version 1") && strstr(err, "upgrade"),
                  "%s", err);
    ck_assert_int_eq(rel_file_digest(path, &d1, &e), 0);
    ck_assert_uint_eq(d0, d1);
    static const char *const sides[] = {"-wal", "-shm", "-emqnode",
                                        "-emqlock"};
    for (int i = 0; i < 4; i++) {
        snprintf(side, sizeof side, "%s%s", path, sides[i]);
        ck_assert_msg(stat(side, &sb) != 0, "%s was created", side);
    }
}
END_TEST

/* The fixture climbed by the ladder's own steps to `v` (through a plain
 * connection): a file as a build of schema v would have left it. */
static void climb_fixture_to(int v)
{
    emq_store *sc = calloc(1, sizeof *sc);
    ck_assert_ptr_nonnull(sc);
    ck_assert_int_eq(sqlite3_open(path, &sc->db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(sc->db, "BEGIN IMMEDIATE", NULL, NULL,
                                  NULL), SQLITE_OK);
    ck_assert_msg(emq_schema_climb(sc, 1, v, 0) == EMQ_OK, "climb to %d: %s",
                  v, sc->errmsg);
    ck_assert_int_eq(sqlite3_exec(sc->db, "COMMIT", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(sc->db);
    free(sc);
}

START_TEST(every_older_version_climbs_to_the_current_one)
{
    for (int v = 1; v < EMQ_SCHEMA_VERSION; v++) {
        int exact;
        copy_fixture();
        climb_fixture_to(v);
        ck_assert_int_eq(raw_version(&exact), v);
        ck_assert_msg(exact, "version %d as climbed is not version %d", v, v);
        emq_db *db = must_open(0);
        ck_assert_int_eq(raw_version(&exact), EMQ_SCHEMA_VERSION);
        ck_assert(exact);
        fixture_contents(db);
        emq_close(db);
    }
}
END_TEST

/* 1 when the file at `path` has table `t` (a plain read-only look). */
static int has_table(const char *t)
{
    sqlite3 *c;
    sqlite3_stmt *q;
    int found;
    ck_assert_int_eq(sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(c, "SELECT 1 FROM sqlite_schema "
                                        "WHERE type = 'table' AND name = ?",
                                        -1, &q, NULL), SQLITE_OK);
    sqlite3_bind_text(q, 1, t, -1, SQLITE_STATIC);
    found = sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    sqlite3_close(c);
    return found;
}

/* Version 4 is the stream type: a file of version 3 (events and journal,
 * no stream tables) gets them at its first read-write open, its jobs kept,
 * and holds streams from then on. */
START_TEST(a_schema_3_file_gets_the_stream_tables)
{
    static const char *const tables[] = {"xmeta", "xentry", "xgroup",
                                         "xconsumer", "xpel"};
    const void *fv[2] = {"kind", "sent"};
    char id[EMQ_ID_SIZE];
    emq_stream_entry *e;
    size_t n;
    int exact;
    ck_assert_int_ge(EMQ_SCHEMA_VERSION, 4);
    copy_fixture();
    climb_fixture_to(3);
    ck_assert_int_eq(raw_version(&exact), 3);
    ck_assert(exact);
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        ck_assert_msg(!has_table(tables[i]), "%s before version 4",
                      tables[i]);
    emq_db *db = must_open(0);
    ck_assert_int_eq(raw_version(&exact), EMQ_SCHEMA_VERSION);
    ck_assert(exact);
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        ck_assert_msg(has_table(tables[i]), "no %s after the upgrade",
                      tables[i]);
    fixture_contents(db);
    ck_assert_int_eq(emq_stream_append(db, "mail", "events", fv, NULL, 2,
                                       id), EMQ_OK);
    ck_assert_int_eq(emq_stream_group_create(db, "mail", "events", "w", "0",
                                             0), EMQ_OK);
    ck_assert_int_eq(emq_stream_group_read(db, "mail", "events", "w", "c1",
                                           ">", 10, -1, &e, &n), EMQ_OK);
    ck_assert_uint_eq(n, 1);
    emq_stream_entries_free(e, n);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    emq_close(db);
    /* read-only, the upgraded file reads back its stream */
    db = must_open(1);
    ck_assert_int_eq(emq_stream_read(db, "mail", "events", NULL, NULL, -1,
                                     &e, &n), EMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(e[0].id, id);
    emq_stream_entries_free(e, n);
    emq_close(db);
}
END_TEST

static int hist_count(void *ctx, const emq_history_entry *e)
{
    (void)e;
    (*(int *)ctx)++;
    return 0;
}

/* Version 9 is the job history (issue 34): a file of version 8, the
 * schema before it, gets the two host-side tables at its first read-write
 * open, its jobs kept, and records history from then on; the upgraded
 * file reads it back read-only. */
START_TEST(a_schema_8_file_gets_the_history_tables)
{
    static const char *const tables[] = {"emq_hist", "emq_kept"};
    emq_job j;
    int exact, n = 0;
    ck_assert_int_ge(EMQ_SCHEMA_VERSION, 9);
    copy_fixture();
    climb_fixture_to(8);
    ck_assert_int_eq(raw_version(&exact), 8);
    ck_assert(exact);
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        ck_assert_msg(!has_table(tables[i]), "%s before version 9",
                      tables[i]);
    emq_db *db = must_open(0);
    ck_assert_int_eq(raw_version(&exact), EMQ_SCHEMA_VERSION);
    ck_assert(exact);
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        ck_assert_msg(has_table(tables[i]), "no %s after the upgrade",
                      tables[i]);
    fixture_contents(db);
    /* the pending job of `mail`: claimed, failed to death, kept */
    ck_assert_int_eq(emq_claim(db, "mail", 1000, &j), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, "mail", j.id, j.attempts, 0, 1, "x", 1),
                     EMQ_DEAD);
    emq_close(db);
    db = must_open(1);
    ck_assert_int_eq(emq_job_history(db, NULL, j.id, hist_count, &n),
                     EMQ_OK);
    ck_assert_int_eq(n, 2);
    emq_kept_job k;
    ck_assert_int_eq(emq_kept_get(db, NULL, j.id, &k), EMQ_OK);
    ck_assert_int_eq(k.state, EMQ_KEPT_DEAD);
    emq_kept_clear(&k);
    emq_job_clear(&j);
    emq_close(db);
}
END_TEST

/* The sum of the encoded bytes of every hash row (a plain look). */
static int64_t hash_bytes(void)
{
    sqlite3 *c;
    sqlite3_stmt *q;
    int64_t n;
    ck_assert_int_eq(sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(c, "SELECT sum(length(val)) FROM kv "
                                        "WHERE type = 2", -1, &q, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(c);
    return n;
}

/* Version 6 spells the job row's names and states as tokens: a file of
 * version 5 whose rows carry checksums gets every hash row re-encoded
 * (smaller) and its checksum recomputed — the checker verifies each one —
 * with every field, binary payloads included, read back as before. */
START_TEST(a_schema_5_file_with_checksums_gets_its_hash_rows_tokenized)
{
    emq_store *sc = calloc(1, sizeof *sc);
    int64_t before, after;
    int exact;
    ck_assert_int_ge(EMQ_SCHEMA_VERSION, 6);
    ck_assert_ptr_nonnull(sc);
    copy_fixture();
    climb_fixture_to(5);
    ck_assert_int_eq(raw_version(&exact), 5);
    ck_assert(exact);
    /* checksums on, as a schema-5 emqlite would have written them */
    ck_assert_int_eq(sqlite3_open(path, &sc->db), SQLITE_OK);
    ck_assert_int_eq(emq_rowsum_register(sc), EMQ_OK);
    ck_assert_int_eq(sqlite3_exec(sc->db, "UPDATE kv SET sum = emq_sum_of("
                                  "name, type, kid, expire, val); UPDATE "
                                  "emq_meta SET v = 1 WHERE k = 'checksums'",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(sc->db);
    free(sc);
    before = hash_bytes();
    emq_db *db = must_open(0);
    ck_assert(emq_store_checksums(emq_db_store(db)));
    ck_assert_int_eq(raw_version(&exact), EMQ_SCHEMA_VERSION);
    ck_assert(exact);
    after = hash_bytes();
    /* 9 job rows: at least "state" + "attempts" + "payload" spelled out */
    ck_assert_msg(after + 9 * 18 <= before, "hash bytes %lld -> %lld",
                  (long long)before, (long long)after);
    fixture_contents(db);
    emq_close(db);
    db = must_open(1);
    fixture_contents(db);
    emq_close(db);
}
END_TEST

START_TEST(a_newer_schema_is_refused_untouched_by_every_handle)
{
    char q[64];
    emq_db *db = must_open(0);
    emq_close(db);
    sqlite3 *s;
    ck_assert_int_eq(sqlite3_open(path, &s), SQLITE_OK);
    snprintf(q, sizeof q, "PRAGMA user_version = %d", EMQ_SCHEMA_VERSION + 1);
    ck_assert_int_eq(sqlite3_exec(s, q, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    for (int ro = 0; ro < 2; ro++) {
        emq_options o = opts();
        uint64_t d0, d1;
        int e;
        char err[512];
        o.readonly = ro;
        ck_assert_int_eq(rel_file_digest(path, &d0, &e), 0);
        ck_assert_int_eq(emq_open_ex(path, &o, &db, err, sizeof err),
                         EMQ_ESCHEMA);
        ck_assert_ptr_nonnull(strstr(err, "schema version"));
        ck_assert_int_eq(rel_file_digest(path, &d1, &e), 0);
        ck_assert_uint_eq(d0, d1);
    }
}
END_TEST

/* A write that fails anywhere in the open of an old file: afterwards the
 * file is exactly at its old version or exactly at the new one, and it
 * opens with every job. */
START_TEST(an_upgrade_is_all_or_nothing_under_write_faults)
{
    emq_options o = opts();
    emq_db *db;
    long writes, failed = 0;
    char err[512];
    ck_assert_int_eq(fv_install(), 0);
    fv_count_reset();
    db = must_open(0);
    writes = fv_count(FV_WRITE);
    emq_close(db);
    ck_assert_int_gt(writes, 0);
    for (long n = 1; n <= writes; n++) {
        int exact, v, rc;
        copy_fixture();
        fv_arm(FV_WRITE, n, SQLITE_IOERR_WRITE, 0);
        db = NULL;
        rc = emq_open_ex(path, &o, &db, err, sizeof err);
        fv_disarm();
        if (rc != EMQ_OK) {
            failed++;
            ck_assert_msg(rc == EMQ_EIO, "write %ld: rc %d %s", n, rc, err);
        }
        emq_close(db);
        v = raw_version(&exact);
        ck_assert_msg((v == 1 || v == EMQ_SCHEMA_VERSION) && exact,
                      "write %ld failed: a file at version %d with %s "
                      "objects", n, v, exact ? "its" : "other");
        db = must_open(0);
        fixture_contents(db);
        emq_close(db);
    }
    fv_uninstall();
    ck_assert_int_gt(failed, 0);
}
END_TEST

Suite *suite_schema(void)
{
    Suite *s = suite_create("schema");
    TCase *t = tcase_create("ladder");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, the_schema_1_fixture_is_schema_1);
    tcase_add_test(t, the_schema_1_fixture_opens_upgraded_with_every_job);
    tcase_add_test(t, a_read_only_handle_refuses_an_older_schema_untouched);
    tcase_add_test(t, every_older_version_climbs_to_the_current_one);
    tcase_add_test(t, a_schema_3_file_gets_the_stream_tables);
    tcase_add_test(t, a_schema_8_file_gets_the_history_tables);
    tcase_add_test(t, a_schema_5_file_with_checksums_gets_its_hash_rows_tokenized);
    tcase_add_test(t, a_newer_schema_is_refused_untouched_by_every_handle);
    tcase_add_test(t, an_upgrade_is_all_or_nothing_under_write_faults);
    suite_add_tcase(s, t);
    return s;
}
