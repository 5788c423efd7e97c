/*
 * test_judge.c — suite "judge": a file emqlite refuses is judged before a
 * byte of it is written (issue 12, item 5) and foreign schema objects are
 * refused at open and reported by the checker (item 12).
 *
 * Every refusal here is checked byte for byte: the database file's digest
 * and its header's journal-mode bytes (18 and 19) are unchanged, and no WAL
 * or side file appears.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <check.h>
#include <sqlite3.h>
#include "emqlite.h"
#include "relutil.h"
#include "suites.h"

static char dir[256], path[320];
static rel_clock clk = {1767225600000};

static void setup(void)
{
    ck_assert_int_eq(rel_mkdtemp(dir, sizeof dir, "judge"), 0);
    rel_path(path, sizeof path, dir, "j.db");
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

static int exists(const char *suffix)
{
    char p[400];
    struct stat sb;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return stat(p, &sb) == 0;
}

/* An emqlite file with one job, closed (no WAL left), side files removed. */
static void make_emq(void)
{
    emq_options o = opts();
    emq_db *db;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", "payload", 7),
                     EMQ_ENQUEUED);
    emq_close(db);
    ck_assert(!exists("-wal"));
    char p[400];
    snprintf(p, sizeof p, "%s-emqnode", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-emqlock", path);
    unlink(p);
}

/* Run SQL on the file with a plain connection. */
static void raw(const char *sql)
{
    sqlite3 *s;
    char *msg = NULL;
    ck_assert_int_eq(sqlite3_open(path, &s), SQLITE_OK);
    int rc = sqlite3_exec(s, sql, NULL, NULL, &msg);
    ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, msg ? msg : "");
    sqlite3_close(s);
}

static void header(unsigned char h[100])
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(h, 1, 100, f), 100);
    fclose(f);
}

/* Open (read-write, then read-only) and expect `want` with `must_say` in
 * the message, the file untouched and nothing created beside it. */
static void refused(int want, const char *must_say)
{
    static const char *const sides[] = {"-wal", "-shm", "-emqnode",
                                        "-emqlock", "-journal"};
    unsigned char h0[100], h1[100];
    uint64_t d0, d1;
    int e, had[5];
    header(h0);
    ck_assert_int_eq(rel_file_digest(path, &d0, &e), 0);
    for (int i = 0; i < 5; i++) had[i] = exists(sides[i]);
    for (int ro = 0; ro < 2; ro++) {
        emq_options o = opts();
        emq_db *db = (emq_db *)1;
        char err[512] = "";
        o.readonly = ro;
        int rc = emq_open_ex(path, &o, &db, err, sizeof err);
        ck_assert_msg(rc == want, "%s open: rc %d (%s) %s", ro ? "read-only"
                      : "read-write", rc, emq_strerror(rc), err);
        ck_assert_ptr_null(db);
        ck_assert_msg(strstr(err, must_say), "\"%s\" lacks \"%s\"", err,
                      must_say);
        header(h1);
        ck_assert_msg(h1[18] == h0[18] && h1[19] == h0[19],
                      "the journal mode changed: %d/%d -> %d/%d", h0[18],
                      h0[19], h1[18], h1[19]);
        ck_assert(memcmp(h0, h1, 100) == 0);
        ck_assert_int_eq(rel_file_digest(path, &d1, &e), 0);
        ck_assert_msg(d0 == d1, "the file changed");
        for (int i = 0; i < 5; i++)
            ck_assert_msg(had[i] || !exists(sides[i]), "%s was created",
                          sides[i]);
    }
}

START_TEST(a_rollback_mode_file_of_another_wire_is_refused_untouched)
{
    make_emq();
    raw("PRAGMA journal_mode = DELETE;"
        "UPDATE kv SET val = CAST('echomq:2.0.0' AS BLOB)"
        " WHERE name = CAST('{emq}:version' AS BLOB);");
    unsigned char h[100];
    header(h);
    ck_assert_int_eq(h[18], 1); /* rollback journal */
    refused(EMQ_EWIRE, "echomq:2.0.0");
}
END_TEST

START_TEST(a_wal_file_of_another_wire_is_refused_untouched)
{
    make_emq();
    raw("UPDATE kv SET val = CAST('echomq:2.0.0' AS BLOB)"
        " WHERE name = CAST('{emq}:version' AS BLOB);");
    refused(EMQ_EWIRE, "echomq:2.0.0");
}
END_TEST

START_TEST(a_stamped_file_without_tables_gets_a_typed_error_untouched)
{
    char q[128];
    snprintf(q, sizeof q, "PRAGMA application_id = %d;"
             "PRAGMA user_version = 1;", 0x454D514C);
    raw(q);
    refused(EMQ_ENOTEMQ, "missing table");
    /* stamped with emqlite's id but no version at all */
    unlink(path);
    snprintf(q, sizeof q, "PRAGMA application_id = %d;", 0x454D514C);
    raw(q);
    refused(EMQ_ENOTEMQ, "no schema version");
}
END_TEST

START_TEST(foreign_schema_objects_are_refused_at_open_untouched)
{
    static const struct { const char *sql, *says; } cases[] = {
        { "CREATE TRIGGER eat AFTER INSERT ON kv BEGIN"
          " DELETE FROM zset; END;",
          "foreign trigger \"eat\" on table \"kv\"" },
        { "CREATE VIEW jobs AS SELECT name FROM kv;", "foreign view \"jobs\"" },
        { "CREATE INDEX kv_val ON kv(val);", "foreign index \"kv_val\"" },
        { "CREATE TABLE notes(x);", "foreign table \"notes\"" },
        { "ALTER TABLE kv ADD COLUMN extra;", "table \"kv\" differs" },
        { "DROP INDEX zset_member;", "missing index \"zset_member\"" },
        { "DROP INDEX list_val;", "missing index \"list_val\"" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unlink(path);
        make_emq();
        raw(cases[i].sql);
        refused(EMQ_ENOTEMQ, cases[i].says);
    }
    /* ANALYZE's statistics are not foreign */
    unlink(path);
    make_emq();
    raw("ANALYZE;");
    emq_options o = opts();
    emq_db *db;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    emq_close(db);
}
END_TEST

/* A trigger added while a handle is open: the checker reports it. */
static void schema_finding(void *ctx, const emq_finding *f)
{
    int *n = ctx;
    if (strcmp(f->code, "schema") == 0 &&
        strstr(f->message, "trigger \"spy\""))
        (*n)++;
}

START_TEST(check_reports_a_foreign_trigger_added_behind_its_back)
{
    emq_options o = opts();
    emq_db *db;
    size_t nv = 0;
    int n = 0;
    make_emq();
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    raw("CREATE TRIGGER spy AFTER UPDATE ON kv BEGIN SELECT 1; END;");
    ck_assert_int_eq(emq_check(db, schema_finding, &n, &nv), EMQ_ECORRUPT);
    ck_assert_int_eq(n, 1);
    ck_assert_uint_eq(nv, 1);
    emq_close(db);
    refused(EMQ_ENOTEMQ, "trigger \"spy\"");
}
END_TEST

Suite *suite_judge(void)
{
    Suite *s = suite_create("judge");
    TCase *t = tcase_create("judge");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t,
                   a_rollback_mode_file_of_another_wire_is_refused_untouched);
    tcase_add_test(t, a_wal_file_of_another_wire_is_refused_untouched);
    tcase_add_test(t,
                   a_stamped_file_without_tables_gets_a_typed_error_untouched);
    tcase_add_test(t, foreign_schema_objects_are_refused_at_open_untouched);
    tcase_add_test(t, check_reports_a_foreign_trigger_added_behind_its_back);
    suite_add_tcase(s, t);
    return s;
}
