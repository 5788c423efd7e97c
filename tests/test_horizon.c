/*
 * test_horizon.c — suite "horizon": the 41-bit millisecond horizon of the
 * snowflake (2093-09-06T15:47:35.551Z; issue 12, item 9). A node-id
 * sidecar whose reservation reaches it is refused at open with
 * EMQ_EEXHAUSTED and a message naming the sidecar, instead of a handle that
 * mints one id for ever; a handle whose clock reaches it mints its last
 * 4,096 ids, then answers EMQ_EEXHAUSTED with a message, never an id out of
 * range or twice.
 *
 * Minting tests use node ids no other test uses: the mint cells are
 * process-wide, and Check may run without forking.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "emqlite.h"
#include "brandedid.h"
#include "relutil.h"
#include "suites.h"

/* Unix ms of the last millisecond of the horizon. */
#define HORIZON_MS (EMQ_EPOCH_MS + ((INT64_C(1) << 41) - 1))

static char dir[256], path[320];

static void setup(void)
{
    ck_assert_int_eq(rel_mkdtemp(dir, sizeof dir, "horizon"), 0);
    rel_path(path, sizeof path, dir, "h.db");
}

static void teardown(void)
{
    rel_rmrf(dir);
}

/* Slot `node` of the sidecar holds `cell` (8 bytes, little-endian). */
static void write_reservation(int node, uint64_t cell)
{
    char p[400];
    unsigned char b[8];
    snprintf(p, sizeof p, "%s-emqnode", path);
    FILE *f = fopen(p, "r+b");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(cell >> (8 * i));
    ck_assert_int_eq(fseek(f, (long)node * 8, SEEK_SET), 0);
    ck_assert_uint_eq(fwrite(b, 1, 8, f), 8);
    fclose(f);
}

START_TEST(a_reservation_at_the_horizon_is_refused_at_open)
{
    static const uint64_t cells[] = {
        (EMQ_CELL_MAX & ~(uint64_t)0xFFF),    /* the last millisecond */
        EMQ_CELL_MAX + 1,                     /* past it */
        UINT64_MAX,                           /* garbage */
    };
    emq_options o;
    emq_db *db;
    char err[512];
    emq_options_init(&o);
    o.node_id = 3;
    for (size_t i = 0; i < sizeof cells / sizeof *cells; i++) {
        ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
        emq_close(db);
        write_reservation(3, cells[i]);
        db = (emq_db *)1;
        ck_assert_int_eq(emq_open_ex(path, &o, &db, err, sizeof err),
                         EMQ_EEXHAUSTED);
        ck_assert_ptr_null(db);
        ck_assert_msg(strstr(err, "-emqnode") && strstr(err, "horizon"),
                      "%s", err);
        write_reservation(3, 0);
    }
    /* one millisecond before it still opens */
    write_reservation(3, (EMQ_CELL_MAX & ~(uint64_t)0xFFF) - 4096);
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    emq_close(db);
}
END_TEST

static int64_t at_horizon(void *ctx)
{
    (void)ctx;
    return HORIZON_MS;
}

START_TEST(minting_at_the_horizon_ends_with_exhausted_and_a_message)
{
    emq_options o;
    emq_db *db;
    char id[EMQ_ID_SIZE], prev[EMQ_ID_SIZE] = "";
    emq_options_init(&o);
    o.node_id = 1011;
    o.clock = at_horizon;
    ck_assert_int_eq(emq_open(":memory:", &o, &db), EMQ_OK);
    for (int i = 0; i < 4096; i++) {
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        ck_assert(emq_id_valid(id));
        ck_assert_msg(strcmp(id, prev) > 0, "%s after %s", id, prev);
        memcpy(prev, id, EMQ_ID_SIZE);
    }
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_EEXHAUSTED);
        ck_assert_str_eq(id, "");
        ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "2093"));
    }
    ck_assert_str_ne(emq_strerror(EMQ_EEXHAUSTED), "unknown result code");
    emq_close(db);
}
END_TEST

/* A process whose clock was past 2093 leaves a reservation that makes the
 * next open refuse, with a message, rather than mint duplicates. */
START_TEST(a_handle_at_the_horizon_leaves_a_file_the_next_open_refuses)
{
    emq_options o;
    emq_db *db;
    char id[EMQ_ID_SIZE], err[512];
    emq_options_init(&o);
    o.node_id = 1012;
    o.clock = at_horizon;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "q", id, "x", 1), EMQ_ENQUEUED);
    emq_close(db);
    emq_options_init(&o);
    o.node_id = 1012;
    ck_assert_int_eq(emq_open_ex(path, &o, &db, err, sizeof err),
                     EMQ_EEXHAUSTED);
    /* another node is unaffected */
    o.node_id = 1013;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    emq_close(db);
}
END_TEST

Suite *suite_horizon(void)
{
    Suite *s = suite_create("horizon");
    TCase *t = tcase_create("horizon");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, a_reservation_at_the_horizon_is_refused_at_open);
    tcase_add_test(t, minting_at_the_horizon_ends_with_exhausted_and_a_message);
    tcase_add_test(t,
                   a_handle_at_the_horizon_leaves_a_file_the_next_open_refuses);
    suite_add_tcase(s, t);
    return s;
}
