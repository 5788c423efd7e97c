/*
 * test_integrity.c — suite "integrity": the row checksums of
 * emq_options.checksums (storage/rowsum.c; issue 12, item 12).
 *
 * SQLite keeps no page checksums, so a byte the disk flipped inside a
 * payload reads back as a different payload, and PRAGMA integrity_check
 * stays clean. With checksums on, the same flip makes every read of that
 * row EMQ_ECORRUPT (naming the key) and the checker report it; every write
 * path keeps the sums right, and turning them on is for good and for every
 * handle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <sqlite3.h>
#include "emqlite.h"
#include "db.h"
#include "store.h"
#include "relutil.h"
#include "suites.h"

#define PAYLOAD "the quick brown fox jumps over the lazy dog, 0123456789"

static char dir[256], path[320];
static rel_clock clk = {1767225600000};

static void setup(void)
{
    ck_assert_int_eq(rel_mkdtemp(dir, sizeof dir, "integrity"), 0);
    rel_path(path, sizeof path, dir, "i.db");
}

static void teardown(void)
{
    rel_rmrf(dir);
}

static emq_db *open_h(int checksums)
{
    emq_options o;
    emq_db *db = NULL;
    char err[512];
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    o.checksums = checksums;
    int rc = emq_open_ex(path, &o, &db, err, sizeof err);
    ck_assert_msg(rc == EMQ_OK, "open: %d %s", rc, err);
    return db;
}

/* Flip one byte of the first copy of `needle` in the database file. */
static void flip_in_file(const char *needle)
{
    FILE *f = fopen(path, "r+b");
    long n;
    unsigned char *b;
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)n);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    unsigned char *at = memmem(b, (size_t)n, needle, strlen(needle));
    ck_assert_msg(at != NULL, "\"%s\" is not in the file", needle);
    long off = (long)(at - b) + 10;
    fseek(f, off, SEEK_SET);
    fputc(b[off] ^ 0x20, f);
    fclose(f);
    free(b);
}

/* One job enqueued, the file checkpointed and closed. */
static void one_job(int checksums)
{
    emq_db *db = open_h(checksums);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", PAYLOAD,
                                 sizeof PAYLOAD - 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    emq_close(db);
}

static void counting(void *ctx, const emq_finding *f)
{
    struct { const char *code; int n; } *c = ctx;
    if (strcmp(f->code, c->code) == 0) c->n++;
}

START_TEST(without_checksums_a_flipped_payload_byte_is_served)
{
    emq_job j;
    one_job(0);
    flip_in_file(PAYLOAD);
    emq_db *db = open_h(0);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 0), EMQ_OK);
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
    ck_assert(memcmp(j.payload, PAYLOAD, sizeof PAYLOAD - 1) != 0);
    emq_job_clear(&j);
    emq_close(db);
}
END_TEST

START_TEST(with_checksums_a_flipped_payload_byte_is_reported)
{
    emq_job j;
    emq_field *fs;
    size_t n, viol = 0;
    struct { const char *code; int n; } c = {"checksum", 0};
    one_job(1);
    flip_in_file(PAYLOAD);
    emq_db *db = open_h(0); /* the file keeps them on */
    ck_assert(emq_store_checksums(emq_db_store(db)));
    ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_ECORRUPT);
    ck_assert_msg(strstr(emq_errmsg(db), "checksum") &&
                  strstr(emq_errmsg(db), "emq:{q}:job:JOB00000000001"),
                  "%s", emq_errmsg(db));
    ck_assert_int_eq(emq_job_get(db, "q", "JOB00000000001", &fs, &n),
                     EMQ_ECORRUPT);
    ck_assert_int_eq(emq_check(db, counting, &c, &viol), EMQ_ECORRUPT);
    ck_assert_int_eq(c.n, 1);
    ck_assert_uint_eq(viol, 1); /* reported once, not again as unreadable */
    emq_close(db);
}
END_TEST

/* Every write path keeps every sum right: a workload over all of Tier 1,
 * then a clean check (which verifies every row). The batch is long enough
 * for the rows that go in 32 to a statement. */
START_TEST(every_write_path_keeps_the_sums)
{
    emq_db *db = open_h(1);
    emq_job j;
    int64_t n;
    char id[EMQ_ID_SIZE];
    static char ids[40][32];
    emq_item items[40];
    int verdicts[40];
    for (int i = 0; i < 40; i++) {
        snprintf(ids[i], sizeof ids[i], "JOB0000000B%03d", i % 1000);
        items[i] = (emq_item){ids[i], ids[i], (size_t)(i % 5)};
    }
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB0000000000A", "a", 1),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue_many(db, "q", items, 40, verdicts), EMQ_OK);
    for (int i = 0; i < 40; i++)
        ck_assert_int_eq(verdicts[i], EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue_in(db, "q", "JOB0000000000E", "e", 1, 10),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_claim(db, "q", 100, &j), EMQ_OK);
    ck_assert_int_eq(emq_lock_extend(db, "q", j.id, j.attempts, 500), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, "q", j.id, j.attempts, 5, 3, "no", 2),
                     EMQ_SCHEDULED);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_claim(db, "q", 100, &j), EMQ_OK);
    ck_assert_int_eq(emq_complete_result(db, "q", j.id, j.attempts, "r", 1),
                     EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_claim(db, "q", 100, &j), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, "q", j.id, j.attempts, 5, 1, "x", 1),
                     EMQ_DEAD);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_claim(db, "q", 100, &j), EMQ_OK);
    emq_job_clear(&j);
    clk.now += 1000;
    ck_assert_int_eq(emq_reap(db, "q", &n), EMQ_OK);
    ck_assert_int_eq(emq_promote(db, "q", 10, &n), EMQ_OK);
    ck_assert_int_eq(emq_queue_pause(db, "q"), EMQ_OK);
    ck_assert_int_eq(emq_queue_resume(db, "q"), EMQ_OK);
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "r", id, "", 0), EMQ_ENQUEUED);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    /* an import writes through the same statements */
    static const char *const cmds[][8] = {
        {"SET", "{emq}:version", "echomq:4.0.0", NULL},
        {"HSET", "emq:{z}:job:JOB0000000000F", "state", "pending",
         "attempts", "0", "payload", "p"},
        {"ZADD", "emq:{z}:pending", "0", "JOB0000000000F", NULL},
    };
    char resp[1024];
    size_t o = 0;
    for (size_t c = 0; c < 3; c++) {
        int argc = 0;
        while (argc < 8 && cmds[c][argc]) argc++;
        o += (size_t)snprintf(resp + o, sizeof resp - o, "*%d\r\n", argc);
        for (int i = 0; i < argc; i++)
            o += (size_t)snprintf(resp + o, sizeof resp - o, "$%zu\r\n%s\r\n",
                                  strlen(cmds[c][i]), cmds[c][i]);
    }
    ck_assert_int_eq(rel_import_raw(db, resp, o, NULL), EMQ_OK);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    emq_close(db);
    db = open_h(0);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    emq_close(db);
}
END_TEST

START_TEST(turning_checksums_on_sums_every_existing_row)
{
    emq_db *db = open_h(0);
    for (int i = 0; i < 200; i++) {
        char id[EMQ_ID_SIZE];
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        ck_assert_int_eq(emq_enqueue(db, "q", id, PAYLOAD,
                                     sizeof PAYLOAD - 1), EMQ_ENQUEUED);
    }
    ck_assert(!emq_store_checksums(emq_db_store(db)));
    emq_close(db);
    db = open_h(1);
    ck_assert(emq_store_checksums(emq_db_store(db)));
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    /* every row has one: a removed sum is a finding */
    sqlite3 *raw;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(raw, "UPDATE kv SET sum = NULL WHERE name ="
                                  " (SELECT max(name) FROM kv WHERE"
                                  " CAST(name AS TEXT) LIKE 'emq:{q}:job:%')",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    struct { const char *code; int n; } c = {"checksum", 0};
    size_t viol;
    ck_assert_int_eq(emq_check(db, counting, &c, &viol), EMQ_ECORRUPT);
    ck_assert_int_eq(c.n, 1);
    emq_close(db);
}
END_TEST

START_TEST(only_the_files_only_handle_turns_checksums_on)
{
    emq_options o;
    emq_db *a = open_h(0), *b = NULL;
    char err[512];
    emq_options_init(&o);
    o.checksums = 1;
    ck_assert_int_eq(emq_open_ex(path, &o, &b, err, sizeof err), EMQ_EBUSY);
    ck_assert_ptr_nonnull(strstr(err, "no other handle"));
    ck_assert(!emq_store_checksums(emq_db_store(a)));
    emq_close(a);
    b = open_h(1);
    /* later handles write sums whatever they asked for */
    a = open_h(0);
    ck_assert(emq_store_checksums(emq_db_store(a)));
    ck_assert_int_eq(emq_enqueue(a, "q", "JOB00000000001", "x", 1),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(b, "q", "JOB00000000002", "y", 1),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(rel_check(a, NULL, NULL, 1), EMQ_OK);
    emq_close(a);
    emq_close(b);
    /* in memory too */
    emq_db *m = NULL;
    ck_assert_int_eq(emq_open(":memory:", &o, &m), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(m, "q", "JOB00000000001", "x", 1),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(rel_check(m, NULL, NULL, 1), EMQ_OK);
    emq_close(m);
}
END_TEST

Suite *suite_integrity(void)
{
    Suite *s = suite_create("integrity");
    TCase *t = tcase_create("checksums");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, without_checksums_a_flipped_payload_byte_is_served);
    tcase_add_test(t, with_checksums_a_flipped_payload_byte_is_reported);
    tcase_add_test(t, every_write_path_keeps_the_sums);
    tcase_add_test(t, turning_checksums_on_sums_every_existing_row);
    tcase_add_test(t, only_the_files_only_handle_turns_checksums_on);
    suite_add_tcase(s, t);
    return s;
}
