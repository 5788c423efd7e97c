/*
 * test_lane_list.c — suite "lane_list": emq_lanes, the operator's list of a
 * queue's lanes (engine/lane/lanelist.c): groups in byte order with depth and
 * paused flag, the cap on the array with the total counted past it, other
 * queues' lanes and keys that only look like lanes left out, the gates.
 */
#include <check.h>
#include <string.h>
#include "suites.h"
#include "tengine.h"

#define G "PRT0KHTOWnGLuC"
#define H "PRT0NgWEfAEJfs"

static tclock clk;
static emq_db *db;

static void setup(void) { db = topen(&clk); }
static void teardown(void) { emq_close(db); db = NULL; }

static void lane_job(const char *q, const char *g)
{
    char id[EMQ_ID_SIZE];
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    ck_assert_int_eq(emq_lane_enqueue(db, q, g, id, "x", 1), EMQ_ENQUEUED);
}

START_TEST(lists_groups_with_depth_and_pause)
{
    emq_lane_info l[4];
    size_t n = 9, total = 9;
    lane_job("mail", H);
    lane_job("mail", G);
    lane_job("mail", H);
    lane_job("other", G);
    ck_assert_int_eq(emq_enqueue(db, "mail", "JOB00000000001", "p", 1),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_lane_pause(db, "mail", H), EMQ_OK);
    ck_assert_int_eq(emq_lanes(db, "mail", l, 4, &n, &total), EMQ_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(total, 2);
    ck_assert_str_eq(l[0].group, G); /* "PRT0K..." < "PRT0N..." */
    ck_assert_int_eq(l[0].depth, 1);
    ck_assert_int_eq(l[0].paused, 0);
    ck_assert_str_eq(l[1].group, H);
    ck_assert_int_eq(l[1].depth, 2);
    ck_assert_int_eq(l[1].paused, 1);
}
END_TEST

START_TEST(caps_the_array_and_counts_past_it)
{
    emq_lane_info l[1];
    size_t n = 9, total = 9;
    lane_job("mail", G);
    lane_job("mail", H);
    ck_assert_int_eq(emq_lanes(db, "mail", l, 1, &n, &total), EMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(total, 2);
    ck_assert_str_eq(l[0].group, G);
    ck_assert_int_eq(emq_lanes(db, "mail", NULL, 0, &n, &total), EMQ_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(total, 2);
    ck_assert_int_eq(emq_lanes(db, "none", NULL, 0, &n, NULL), EMQ_OK);
    ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(gates)
{
    emq_lane_info l[1];
    size_t n = 9;
    ck_assert_int_eq(emq_lanes(db, "no/such", l, 1, &n, NULL), EMQ_EQUEUE);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(emq_lanes(db, "mail", NULL, 1, &n, NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_lanes(db, "mail", l, 1, NULL, NULL), EMQ_EINVAL);
    ck_assert_ptr_null(strstr(emq_errmsg(db), "emq_"));
}
END_TEST

Suite *suite_lane_list(void)
{
    Suite *s = suite_create("lane_list");
    TCase *tc = tcase_create("lanelist");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, lists_groups_with_depth_and_pause);
    tcase_add_test(tc, caps_the_array_and_counts_past_it);
    tcase_add_test(tc, gates);
    suite_add_tcase(s, tc);
    return s;
}
