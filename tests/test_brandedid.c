/*
 * test_brandedid.c — suite "brandedid": the branded id codec, base62,
 * hash32, snowflake fields, min_for and the minter (PROTOCOL.md §4, App. B).
 *
 * Minting tests each use their own node id, so they stay independent even
 * when Check runs without forking (CK_FORK=no) and the process-wide cells
 * persist between tests.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "brandedid.h"
#include "suites.h"

#define SNOW_MAX UINT64_C(9223372036854775807)

/* Unix ms of 2025-03-01T12:00:00.500Z. */
#define T_2025_03_01 INT64_C(1740830400500)

static int check_id(const char *s)
{
    return emq_id_check(s, strlen(s), NULL, NULL);
}

/* ----------------------------------------------------------- §4.4 vectors */

START_TEST(b62_encodes_the_appendix_b_vectors)
{
    char out[12] = { 0 };

    emq_b62_encode(UINT64_C(274557032793636864), out);
    ck_assert_str_eq(out, "0KHTOWnGLuC");
    emq_b62_encode(0, out);
    ck_assert_str_eq(out, "00000000000");
    emq_b62_encode(SNOW_MAX, out);
    ck_assert_str_eq(out, "AzL8n0Y58m7");
}
END_TEST

START_TEST(encode_usr_vector_gives_usr0khtownGluc)
{
    char id[EMQ_ID_SIZE];

    ck_assert_int_eq(emq_id_encode("USR", UINT64_C(274557032793636864), id),
                     EMQ_OK);
    ck_assert_str_eq(id, "USR0KHTOWnGLuC");
    ck_assert_int_eq(emq_id_encode("JOB", 0, id), EMQ_OK);
    ck_assert_str_eq(id, "JOB00000000000");
}
END_TEST

START_TEST(parse_usr_vector_gives_namespace_and_snowflake)
{
    char ns[4] = "xxx";
    uint64_t snow = 0;

    ck_assert_int_eq(emq_id_parse("USR0NgWEfAEJfs", 14, ns, &snow), EMQ_OK);
    ck_assert_str_eq(ns, "USR");
    ck_assert_uint_eq(snow, UINT64_C(320636799581945856));
    ck_assert_int_eq(emq_id_parse("USR0NgWEfAEJfs", 14, NULL, NULL), EMQ_OK);
}
END_TEST

START_TEST(payload_zzzzzzzzzzz_is_out_of_range)
{
    ck_assert_int_eq(check_id("USRzzzzzzzzzzz"), EMQ_ID_BADRANGE);
    ck_assert_int_eq(emq_id_parse("USRzzzzzzzzzzz", 14, NULL, NULL), EMQ_EID);
    ck_assert_int_eq(emq_id_valid("USRzzzzzzzzzzz"), 0);
}
END_TEST

START_TEST(hash32_matches_the_vector)
{
    ck_assert_uint_eq(emq_hash32(UINT64_C(274557032793636864)), 234878118u);
}
END_TEST

START_TEST(snowflake_fields_decode_the_vectors)
{
    uint64_t s = UINT64_C(274557032793636864);
    uint64_t evt = 0;

    ck_assert_int_eq(emq_snow_unix_ms(s), INT64_C(1769526697641));
    ck_assert_uint_eq(emq_snow_node(s), 0);
    ck_assert_uint_eq(emq_snow_seq(s), 0);

    ck_assert_int_eq(emq_id_parse("EVT000xY9Wvvcd", 14, NULL, &evt), EMQ_OK);
    ck_assert_uint_eq(evt, UINT64_C(209715201620567));
    ck_assert_int_eq(emq_snow_unix_ms(evt), INT64_C(1704117200000));
    ck_assert_uint_eq(emq_snow_node(evt), 395);
    ck_assert_uint_eq(emq_snow_seq(evt), 2647);
    /* The stream entry id tail of §T5.1: node|seq = 1620567. */
    ck_assert_uint_eq(evt & 0x3FFFFF, 1620567);
}
END_TEST

START_TEST(snowflake_zero_is_the_epoch)
{
    ck_assert_int_eq(emq_snow_unix_ms(0), INT64_C(1704067200000));
    ck_assert_int_eq(emq_snow_unix_ms(0), EMQ_EPOCH_MS);
}
END_TEST

START_TEST(min_for_matches_the_vector_and_clamps)
{
    char id[EMQ_ID_SIZE];
    uint64_t m = emq_snow_min_for(T_2025_03_01);

    ck_assert_uint_eq(m, UINT64_C(154196038909952000));
    ck_assert_int_eq(emq_id_encode("EVT", m, id), EMQ_OK);
    ck_assert_str_eq(id, "EVT0BODbjai1b6");
    ck_assert_int_eq(emq_snow_unix_ms(m), T_2025_03_01);
    ck_assert_uint_eq(emq_snow_node(m), 0);
    ck_assert_uint_eq(emq_snow_seq(m), 0);
    /* The stream bounds of T5.3 derive from it. */
    ck_assert_int_eq(emq_snow_unix_ms(m), INT64_C(1740830400500));

    ck_assert_uint_eq(emq_snow_min_for(EMQ_EPOCH_MS), 0);
    ck_assert_uint_eq(emq_snow_min_for(0), 0);
    ck_assert_uint_eq(emq_snow_min_for(EMQ_EPOCH_MS + 1), UINT64_C(1) << 22);
    /* Past the 41-bit horizon it saturates and stays in range. */
    ck_assert_uint_le(emq_snow_min_for(INT64_MAX), SNOW_MAX);
}
END_TEST

/* --------------------------------------------------------------- validity */

START_TEST(largest_payload_is_valid_and_decodes_to_2_63_minus_1)
{
    uint64_t snow = 0;
    char ns[4];

    ck_assert_int_eq(emq_id_check("USRAzL8n0Y58m7", 14, ns, &snow), EMQ_ID_OK);
    ck_assert_uint_eq(snow, SNOW_MAX);
    ck_assert_str_eq(ns, "USR");
    ck_assert_int_eq(check_id("USRAzL8n0Y58m8"), EMQ_ID_BADRANGE);
    ck_assert_int_eq(check_id("USRAzL8n0Y58n0"), EMQ_ID_BADRANGE);
    ck_assert_int_eq(check_id("USRB0000000000"), EMQ_ID_BADRANGE);
    ck_assert_int_eq(check_id("USRA0000000000"), EMQ_ID_OK);
}
END_TEST

START_TEST(wrong_length_is_badlen)
{
    ck_assert_int_eq(check_id(""), EMQ_ID_BADLEN);
    ck_assert_int_eq(check_id("USR0KHTOWnGLu"), EMQ_ID_BADLEN);
    ck_assert_int_eq(check_id("USR0KHTOWnGLuCC"), EMQ_ID_BADLEN);
    ck_assert_int_eq(emq_id_check(NULL, 14, NULL, NULL), EMQ_ID_BADLEN);
    ck_assert_int_eq(emq_id_valid("USR0KHTOWnGLu"), 0);
    ck_assert_int_eq(emq_id_valid("USR0KHTOWnGLuCC"), 0);
    ck_assert_int_eq(emq_id_valid("USR0KHTOWnGLuC"), 1);
    ck_assert_int_eq(emq_id_valid(NULL), 0);
    ck_assert_int_eq(emq_id_valid(""), 0);
}
END_TEST

START_TEST(non_uppercase_namespace_is_badns)
{
    ck_assert_int_eq(check_id("usr0KHTOWnGLuC"), EMQ_ID_BADNS);
    ck_assert_int_eq(check_id("US10KHTOWnGLuC"), EMQ_ID_BADNS);
    ck_assert_int_eq(check_id("@SR0KHTOWnGLuC"), EMQ_ID_BADNS);
    ck_assert_int_eq(check_id("US[0KHTOWnGLuC"), EMQ_ID_BADNS);
    ck_assert_int_eq(check_id("\xC3\x89R0KHTOWnGLuC"), EMQ_ID_BADNS);
    ck_assert_int_eq(check_id("\xC9SR0KHTOWnGLuC"), EMQ_ID_BADNS);
    ck_assert_int_eq(check_id("AAA0KHTOWnGLuC"), EMQ_ID_OK);
    ck_assert_int_eq(check_id("ZZZ0KHTOWnGLuC"), EMQ_ID_OK);
}
END_TEST

START_TEST(payload_outside_alphabet_is_badcharset)
{
    char nul[14];

    ck_assert_int_eq(check_id("USR0KHTOWnGLu-"), EMQ_ID_BADCHARSET);
    ck_assert_int_eq(check_id("USR0KHTOWnGLu+"), EMQ_ID_BADCHARSET);
    ck_assert_int_eq(check_id("USR 0KHTOWnGLu"), EMQ_ID_BADCHARSET);
    ck_assert_int_eq(check_id("USR0KHTOWnGLu\x80"), EMQ_ID_BADCHARSET);
    ck_assert_int_eq(check_id("USR0KHTOWnGL:C"), EMQ_ID_BADCHARSET);
    memcpy(nul, "USR0KHTOWnGLuC", 14);
    nul[8] = '\0';
    ck_assert_int_eq(emq_id_check(nul, 14, NULL, NULL), EMQ_ID_BADCHARSET);
    ck_assert_int_eq(emq_id_parse(nul, 14, NULL, NULL), EMQ_EID);
}
END_TEST

START_TEST(errors_are_reported_in_taxonomy_order)
{
    /* Bad namespace, charset and range at once: length still wins. */
    ck_assert_int_eq(check_id("us!zzzzzzzzzz"), EMQ_ID_BADLEN);
    /* Namespace before charset and range. */
    ck_assert_int_eq(check_id("us!zzzzzzzzz-z"), EMQ_ID_BADNS);
    ck_assert_int_eq(check_id("usrzzzzzzzzzzz"), EMQ_ID_BADNS);
    /* Charset before range (the payload also begins above 'A'). */
    ck_assert_int_eq(check_id("USRzzzzzzzzz-z"), EMQ_ID_BADCHARSET);
}
END_TEST

START_TEST(parse_leaves_outputs_alone_on_failure_and_never_normalises)
{
    char ns[4] = "abc";
    uint64_t snow = 77;

    ck_assert_int_eq(emq_id_parse("usr0KHTOWnGLuC", 14, ns, &snow), EMQ_EID);
    ck_assert_str_eq(ns, "abc");
    ck_assert_uint_eq(snow, 77);
    /* Leading/trailing space is not trimmed. */
    ck_assert_int_eq(emq_id_valid(" USR0KHTOWnGLu"), 0);
    ck_assert_int_eq(emq_id_valid("USR0KHTOWnGLuC "), 0);
}
END_TEST

START_TEST(encode_refuses_bad_namespace_and_out_of_range)
{
    char id[EMQ_ID_SIZE];

    ck_assert_int_eq(emq_id_encode("job", 1, id), EMQ_EID);
    ck_assert_int_eq(emq_id_encode("JO", 1, id), EMQ_EID);
    ck_assert_int_eq(emq_id_encode("", 1, id), EMQ_EID);
    ck_assert_int_eq(emq_id_encode("JOBS", 1, id), EMQ_EID);
    ck_assert_int_eq(emq_id_encode("J1B", 1, id), EMQ_EID);
    ck_assert_int_eq(emq_id_encode(NULL, 1, id), EMQ_EID);
    ck_assert_int_eq(emq_id_encode("JOB", SNOW_MAX + 1, id), EMQ_EID);
    ck_assert_int_eq(emq_id_encode("JOB", UINT64_MAX, id), EMQ_EID);
    ck_assert_int_eq(emq_id_encode("JOB", SNOW_MAX, id), EMQ_OK);
    ck_assert_str_eq(id, "JOBAzL8n0Y58m7");
}
END_TEST

START_TEST(encode_parse_round_trip_and_order_theorem)
{
    uint64_t x = UINT64_C(0x9E3779B97F4A7C15), prev = 0;
    char prev_id[EMQ_ID_SIZE] = "";

    for (int i = 0; i < 20000; i++) {
        /* xorshift, masked to 63 bits; plus the small and large edges. */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t v = (i % 3 == 0) ? (uint64_t)i : (x & SNOW_MAX);
        if (i % 3 == 2)
            v >>= (unsigned)(i % 60);
        char id[EMQ_ID_SIZE], ns[4];
        uint64_t back = 0;

        ck_assert_int_eq(emq_id_encode("ORD", v, id), EMQ_OK);
        ck_assert_uint_eq(strlen(id), 14);
        ck_assert_int_eq(emq_id_parse(id, 14, ns, &back), EMQ_OK);
        ck_assert_uint_eq(back, v);
        ck_assert_str_eq(ns, "ORD");
        if (i > 0) {
            int c = memcmp(id, prev_id, 14);
            ck_assert_int_eq(c < 0, v < prev);
            ck_assert_int_eq(c == 0, v == prev);
        }
        prev = v;
        memcpy(prev_id, id, EMQ_ID_SIZE);
    }
}
END_TEST

/* ---------------------------------------------------------------- minting */

#define MINTS 100000

START_TEST(mint_fields_decode_node_time_and_sequence)
{
    int64_t t = T_2025_03_01;
    uint64_t a = emq_snow_mint(13, t);
    uint64_t b = emq_snow_mint(13, t);
    uint64_t c = emq_snow_mint(13, t + 5);

    ck_assert_int_eq(emq_snow_unix_ms(a), t);
    ck_assert_uint_eq(emq_snow_node(a), 13);
    ck_assert_uint_eq(emq_snow_seq(a), 0);
    ck_assert_int_eq(emq_snow_unix_ms(b), t);
    ck_assert_uint_eq(emq_snow_seq(b), 1);
    ck_assert_int_eq(emq_snow_unix_ms(c), t + 5);
    ck_assert_uint_eq(emq_snow_node(c), 13);
    ck_assert_uint_eq(emq_snow_seq(c), 0);
    ck_assert_uint_ge(a, emq_snow_min_for(t));
    ck_assert_uint_eq(a, emq_snow_min_for(t) | 13u << 12);
    ck_assert_uint_le(c, SNOW_MAX);

    /* Node 1023 packs into the top of the node field. */
    uint64_t d = emq_snow_mint(1023, t);
    ck_assert_uint_eq(emq_snow_node(d), 1023);
    ck_assert_int_eq(emq_snow_unix_ms(d), t);
}
END_TEST

START_TEST(mint_before_epoch_clamps_to_zero)
{
    uint64_t a = emq_snow_mint(14, 0);
    uint64_t b = emq_snow_mint(14, EMQ_EPOCH_MS - 5);
    uint64_t c = emq_snow_mint(14, INT64_MIN);

    ck_assert_int_eq(emq_snow_unix_ms(a), EMQ_EPOCH_MS);
    ck_assert_uint_eq(emq_snow_seq(a), 0);
    ck_assert_uint_eq(emq_snow_node(a), 14);
    ck_assert_uint_eq(emq_snow_seq(b), 1);
    ck_assert_uint_eq(emq_snow_seq(c), 2);
    ck_assert_int_eq(emq_snow_unix_ms(c), EMQ_EPOCH_MS);
}
END_TEST

START_TEST(mint_strictly_increases_through_clock_regressions)
{
    int64_t base = T_2025_03_01;
    uint64_t prev = 0;
    char prev_id[EMQ_ID_SIZE] = "";
    int regressions = 0;
    int64_t last_now = base;

    for (int i = 0; i < MINTS; i++) {
        /* Advance one ms every 3 mints, jump back 2 s every 1000 mints
         * and 7 ms every 17: the clock steps backwards often. */
        int64_t now = base + i / 3;
        if (i % 1000 >= 500)
            now -= 2000;
        if (i % 17 == 0)
            now -= 7;
        if (now < last_now)
            regressions++;
        last_now = now;

        uint64_t s = emq_snow_mint(21, now);
        char id[EMQ_ID_SIZE];
        ck_assert_uint_eq(emq_snow_node(s), 21);
        ck_assert_int_eq(emq_id_encode("JOB", s, id), EMQ_OK);
        if (i > 0) {
            ck_assert_uint_gt(s, prev);
            ck_assert_int_lt(memcmp(prev_id, id, 14), 0);
        }
        /* Never behind the wall clock. */
        ck_assert_int_ge(emq_snow_unix_ms(s), now);
        prev = s;
        memcpy(prev_id, id, EMQ_ID_SIZE);
    }
    ck_assert_int_gt(regressions, 1000);
}
END_TEST

START_TEST(mint_burst_past_4096_in_one_ms_borrows_the_next_ms)
{
    int64_t t = T_2025_03_01 + 123;
    uint64_t prev = 0;

    for (int i = 0; i < MINTS; i++) {
        uint64_t s = emq_snow_mint(22, t);
        if (i > 0)
            ck_assert_uint_gt(s, prev);
        ck_assert_uint_eq(emq_snow_node(s), 22);
        ck_assert_int_eq(emq_snow_unix_ms(s), t + i / 4096);
        ck_assert_uint_eq(emq_snow_seq(s), (unsigned)(i % 4096));
        prev = s;
    }
    /* The clock catches up: minting resumes at the logical clock, not
     * at the (now stale) wall time. */
    uint64_t s = emq_snow_mint(22, t + 1);
    ck_assert_uint_gt(s, prev);
    ck_assert_int_eq(emq_snow_unix_ms(s), t + (MINTS - 1) / 4096);
    /* Once the wall clock passes the logical one it wins again. */
    s = emq_snow_mint(22, t + 1000);
    ck_assert_int_eq(emq_snow_unix_ms(s), t + 1000);
    ck_assert_uint_eq(emq_snow_seq(s), 0);
}
END_TEST

START_TEST(distinct_nodes_never_collide)
{
    int64_t t = T_2025_03_01 + 777;
    uint64_t a = emq_snow_mint(31, t);
    uint64_t b = emq_snow_mint(32, t);

    ck_assert_uint_ne(a, b);
    ck_assert_int_eq(emq_snow_unix_ms(a), emq_snow_unix_ms(b));
    ck_assert_uint_eq(emq_snow_seq(a), emq_snow_seq(b));
    ck_assert_uint_eq(emq_snow_node(a), 31);
    ck_assert_uint_eq(emq_snow_node(b), 32);
}
END_TEST

#define THREADS 4
#define PER_THREAD 25000

typedef struct minter {
    int k;
    uint64_t out[PER_THREAD];
} minter;

static void *mint_thread(void *arg)
{
    minter *m = arg;
    int64_t base = T_2025_03_01 + 50000;

    for (int i = 0; i < PER_THREAD; i++) {
        /* Each thread reads its own clock, some ahead of others and some
         * stepping back, all hammering node 41. */
        int64_t now = base + i / 8 - (m->k % 2 ? 300 : 0) -
                      ((i % 97) == 0 ? 50 : 0);
        m->out[i] = emq_snow_mint(41, now);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

START_TEST(four_threads_mint_unique_strictly_increasing_ids)
{
    minter *m = calloc(THREADS, sizeof *m);
    uint64_t *all = malloc(sizeof *all * THREADS * PER_THREAD);
    pthread_t th[THREADS];

    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(all);
    for (int k = 0; k < THREADS; k++) {
        m[k].k = k;
        ck_assert_int_eq(pthread_create(&th[k], NULL, mint_thread, &m[k]), 0);
    }
    for (int k = 0; k < THREADS; k++)
        ck_assert_int_eq(pthread_join(th[k], NULL), 0);

    for (int k = 0; k < THREADS; k++) {
        for (int i = 0; i < PER_THREAD; i++) {
            ck_assert_uint_eq(emq_snow_node(m[k].out[i]), 41);
            if (i > 0) /* each thread sees its own ids increase */
                ck_assert_uint_gt(m[k].out[i], m[k].out[i - 1]);
        }
        memcpy(all + (size_t)k * PER_THREAD, m[k].out, sizeof m[k].out);
    }
    qsort(all, THREADS * PER_THREAD, sizeof *all, cmp_u64);
    for (size_t i = 1; i < THREADS * PER_THREAD; i++)
        ck_assert_uint_ne(all[i], all[i - 1]);
    free(all);
    free(m);
}
END_TEST

Suite *suite_brandedid(void)
{
    Suite *s = suite_create("brandedid");
    TCase *v = tcase_create("vectors");
    TCase *c = tcase_create("validity");
    TCase *m = tcase_create("mint");

    tcase_add_test(v, b62_encodes_the_appendix_b_vectors);
    tcase_add_test(v, encode_usr_vector_gives_usr0khtownGluc);
    tcase_add_test(v, parse_usr_vector_gives_namespace_and_snowflake);
    tcase_add_test(v, payload_zzzzzzzzzzz_is_out_of_range);
    tcase_add_test(v, hash32_matches_the_vector);
    tcase_add_test(v, snowflake_fields_decode_the_vectors);
    tcase_add_test(v, snowflake_zero_is_the_epoch);
    tcase_add_test(v, min_for_matches_the_vector_and_clamps);
    suite_add_tcase(s, v);

    tcase_add_test(c, largest_payload_is_valid_and_decodes_to_2_63_minus_1);
    tcase_add_test(c, wrong_length_is_badlen);
    tcase_add_test(c, non_uppercase_namespace_is_badns);
    tcase_add_test(c, payload_outside_alphabet_is_badcharset);
    tcase_add_test(c, errors_are_reported_in_taxonomy_order);
    tcase_add_test(c,
                   parse_leaves_outputs_alone_on_failure_and_never_normalises);
    tcase_add_test(c, encode_refuses_bad_namespace_and_out_of_range);
    tcase_add_test(c, encode_parse_round_trip_and_order_theorem);
    suite_add_tcase(s, c);

    tcase_add_test(m, mint_fields_decode_node_time_and_sequence);
    tcase_add_test(m, mint_before_epoch_clamps_to_zero);
    tcase_add_test(m, mint_strictly_increases_through_clock_regressions);
    tcase_add_test(m, mint_burst_past_4096_in_one_ms_borrows_the_next_ms);
    tcase_add_test(m, distinct_nodes_never_collide);
    tcase_add_test(m, four_threads_mint_unique_strictly_increasing_ids);
    tcase_set_timeout(m, 60);
    suite_add_tcase(s, m);
    return s;
}
