/*
 * test_keys.c — suite "keys": key builders, the queue and dedup gates, the
 * slot rule and the key parser (PROTOCOL.md §2, Appendix B).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "keys.h"
#include "brandedid.h"
#include "store.h"
#include "suites.h"

#define ID "JOB0KHTOWnGLuC"

static unsigned slot_s(const char *k)
{
    return emq_slot(k, strlen(k));
}

/* ------------------------------------------------------------- slot rule */

START_TEST(crc16_xmodem_reference_vector)
{
    ck_assert_uint_eq(emq_crc16("123456789", 9), 0x31C3);
    ck_assert_uint_eq(slot_s("123456789"), 12739);
    ck_assert_uint_eq(emq_crc16("", 0), 0);
}
END_TEST

START_TEST(hashtag_takes_the_first_nonempty_brace_span)
{
    const void *tag;
    size_t n;
    const char *k;

    k = "emq:{q1}:pending";
    emq_key_hashtag(k, strlen(k), &tag, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(memcmp(tag, "q1", 2), 0);

    k = "emq:{}:pending";
    emq_key_hashtag(k, strlen(k), &tag, &n);
    ck_assert_ptr_eq(tag, k);
    ck_assert_uint_eq(n, strlen(k));

    k = "123456789";
    emq_key_hashtag(k, strlen(k), &tag, &n);
    ck_assert_ptr_eq(tag, k);
    ck_assert_uint_eq(n, 9);

    /* Redis rule edges: first '{', first '}' after it. */
    k = "a{b";
    emq_key_hashtag(k, strlen(k), &tag, &n);
    ck_assert_ptr_eq(tag, k);
    ck_assert_uint_eq(n, 3);
    k = "a{";
    emq_key_hashtag(k, strlen(k), &tag, &n);
    ck_assert_ptr_eq(tag, k);
    ck_assert_uint_eq(n, 2);
    k = "x{}{y}";
    emq_key_hashtag(k, strlen(k), &tag, &n);
    ck_assert_ptr_eq(tag, k);
    ck_assert_uint_eq(n, 6);
    k = "}{x}{y}";
    emq_key_hashtag(k, strlen(k), &tag, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(memcmp(tag, "x", 1), 0);
    k = "{a{b}c}";
    emq_key_hashtag(k, strlen(k), &tag, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(tag, "a{b", 3), 0);
}
END_TEST

START_TEST(slot_vectors_of_appendix_b)
{
    ck_assert_uint_eq(slot_s("emq:{orders}:pending"), 105);
    ck_assert_uint_eq(slot_s("emq:{orders}:job:" ID), 105);
    ck_assert_uint_eq(slot_s("emq:{q1}:pending"), 7450);
    ck_assert_uint_eq(slot_s("emq:{}:pending"), 7387);
    ck_assert_uint_eq(slot_s("{emq}:version"), 9051);
    ck_assert_uint_eq(slot_s("{emq}:locks"), 9051);
    ck_assert_uint_eq(emq_slot(NULL, 0), 0);
}
END_TEST

/* --------------------------------------------------------------- builders */

START_TEST(builders_write_the_grammar)
{
    char buf[EMQ_KEY_MAX];

    ck_assert_uint_eq(emq_key(buf, "q1", EMQ_KT_PENDING), 16);
    ck_assert_str_eq(buf, "emq:{q1}:pending");
    ck_assert_uint_eq(emq_key(buf, "orders", EMQ_KT_METRICS_COMPLETED_DATA),
                      strlen("emq:{orders}:metrics:completed:data"));
    ck_assert_str_eq(buf, "emq:{orders}:metrics:completed:data");
    ck_assert_uint_eq(emq_key_of(buf, "orders", EMQ_KT_JOB, ID, 14), 31);
    ck_assert_str_eq(buf, "emq:{orders}:job:" ID);
    ck_assert_uint_eq(emq_key_of(buf, "orders", EMQ_KT_JOB_LOGS, ID, 14), 36);
    ck_assert_str_eq(buf, "emq:{orders}:job:" ID ":logs");
    emq_key_of(buf, "orders", EMQ_KT_LANE, "PRT0000000000A", 14);
    ck_assert_str_eq(buf, "emq:{orders}:g:PRT0000000000A:pending");
    emq_key_of(buf, "orders", EMQ_KT_DEDUP, "order-7", 7);
    ck_assert_str_eq(buf, "emq:{orders}:de:order-7");
    emq_key_of(buf, "orders", EMQ_KT_REPEAT_RECORD, "nightly", 7);
    ck_assert_str_eq(buf, "emq:{orders}:repeat:nightly");
    emq_key_of(buf, "orders", EMQ_KT_STREAM, "ev", 2);
    ck_assert_str_eq(buf, "emq:{orders}:stream:ev");
    emq_key_of(buf, "orders", EMQ_KT_STREAM_ARCHIVED, "ev", 2);
    ck_assert_str_eq(buf, "emq:{orders}:stream:ev:archived");
    ck_assert_str_eq(EMQ_VERSION_KEY, "{emq}:version");
    /* A fixed builder refuses a family, and the other way round. */
    ck_assert_uint_eq(emq_key(buf, "q1", EMQ_KT_JOB), 0);
    ck_assert_uint_eq(emq_key_of(buf, "q1", EMQ_KT_PENDING, "x", 1), 0);
    ck_assert_uint_eq(emq_key(buf, "q1", EMQ_KT_COUNT), 0);
}
END_TEST

START_TEST(every_registered_key_type_round_trips_through_the_parser)
{
    char buf[EMQ_KEY_MAX];
    emq_keyinfo ki;
    emq_buf b = {0};
    for (int kt = 1; kt < EMQ_KT_COUNT; kt++) {
        const emq_keydef *d = emq_keydef_get(kt);
        const char *part = d->form == EMQ_KF_DEDUP ? "d-1"
                           : d->form == EMQ_KF_REPEAT ? "every minute"
                           : d->form == EMQ_KF_STREAM ||
                             d->form == EMQ_KF_ARCHIVED ? "ev" : ID;
        size_t n = d->form == EMQ_KF_FIXED
                       ? emq_key(buf, "orders", kt)
                       : emq_key_of(buf, "orders", kt, part, strlen(part));
        ck_assert_uint_gt(n, 0);
        ck_assert_int_eq(emq_key_parse(buf, n, &ki), 1);
        ck_assert_int_eq(ki.kt, kt);
        ck_assert_int_eq(ki.role, d->role);
        ck_assert_int_eq(ki.type, d->type);
        ck_assert_uint_eq(ki.qlen, 6);
        if (d->form != EMQ_KF_FIXED) {
            ck_assert_uint_eq(ki.partlen, strlen(part));
            ck_assert_int_eq(memcmp(ki.part, part, ki.partlen), 0);
            ck_assert_int_eq(emq_key_buf(&b, "orders", kt, part,
                                         strlen(part)), EMQ_OK);
            ck_assert_uint_eq(b.len, n);
            ck_assert_int_eq(memcmp(b.p, buf, n), 0);
        }
    }
    emq_buf_free(&b);
}
END_TEST

START_TEST(grammar_budget_is_17_bytes_before_the_id)
{
    char buf[EMQ_KEY_MAX];
    size_t n = emq_key_of(buf, "orders", EMQ_KT_JOB, ID, 14);

    ck_assert_uint_eq(n - EMQ_ID_LEN, 17);
    ck_assert_int_eq(memcmp(buf, "emq:{orders}:job:", 17), 0);
    ck_assert_int_eq(memcmp(buf + 17, ID, 14), 0);
}
END_TEST

START_TEST(builders_fit_the_longest_keys_and_refuse_overflow)
{
    char buf[EMQ_KEY_MAX];
    char q[129], did[256], big[EMQ_KEY_MAX];

    memset(q, 'q', 128);
    q[128] = '\0';
    memset(did, 'd', 255);
    did[255] = '\0';
    ck_assert_uint_eq(emq_key_of(buf, q, EMQ_KT_DEDUP, did, 255),
                      5 + 128 + 2 + 258);
    ck_assert_uint_eq(emq_key_of(buf, q, EMQ_KT_JOB_UNSUCCESSFUL, ID, 14),
                      5 + 128 + 2 + 4 + 14 + 1 + 12);
    ck_assert_uint_eq(emq_key_of(buf, q, EMQ_KT_LANE, ID, 14),
                      5 + 128 + 2 + 24);

    /* One byte too long for the buffer and its NUL: nothing written. */
    memset(big, 's', sizeof big);
    size_t fit = EMQ_KEY_MAX - 1 - 5 - 1 - 2 - 3;   /* emq:{a}:de: */
    ck_assert_uint_eq(emq_key_of(buf, "a", EMQ_KT_DEDUP, big, fit),
                      EMQ_KEY_MAX - 1);
    ck_assert_uint_eq(strlen(buf), EMQ_KEY_MAX - 1);
    ck_assert_uint_eq(emq_key_of(buf, "a", EMQ_KT_DEDUP, big, fit + 1), 0);
    ck_assert_str_eq(buf, "");
}
END_TEST

/* ------------------------------------------------------------- name gates */

START_TEST(queue_gate_accepts_the_alphabet_up_to_128)
{
    char q[130];

    ck_assert_int_eq(emq_queue_valid("q1"), 1);
    ck_assert_int_eq(emq_queue_valid("a.b_c-D9"), 1);
    ck_assert_int_eq(emq_queue_valid("EMQ"), 1);
    ck_assert_int_eq(emq_queue_valid("emq1"), 1);
    ck_assert_int_eq(emq_queue_valid("em"), 1);
    ck_assert_int_eq(emq_queue_valid("-"), 1);
    memset(q, 'a', 129);
    q[128] = '\0';
    ck_assert_int_eq(emq_queue_valid(q), 1);
    q[128] = 'a';
    q[129] = '\0';
    ck_assert_int_eq(emq_queue_valid(q), 0);
}
END_TEST

START_TEST(queue_gate_refuses_everything_else)
{
    ck_assert_int_eq(emq_queue_valid(NULL), 0);
    ck_assert_int_eq(emq_queue_valid(""), 0);
    ck_assert_int_eq(emq_queue_valid("emq"), 0);
    ck_assert_int_eq(emq_queue_valid("{q}"), 0);
    ck_assert_int_eq(emq_queue_valid("a{"), 0);
    ck_assert_int_eq(emq_queue_valid("a}"), 0);
    ck_assert_int_eq(emq_queue_valid("a:b"), 0);
    ck_assert_int_eq(emq_queue_valid("a b"), 0);
    ck_assert_int_eq(emq_queue_valid(" "), 0);
    ck_assert_int_eq(emq_queue_valid("caf\xC3\xA9"), 0);
    ck_assert_int_eq(emq_queue_valid("\x80"), 0);
    ck_assert_int_eq(emq_queue_valid("a\x7F"), 0);
    ck_assert_int_eq(emq_queue_valid("a/b"), 0);
    ck_assert_int_eq(emq_queue_valid("a*"), 0);
    /* A C string ends at its NUL: the gate sees "ab" and nothing after. */
    ck_assert_int_eq(emq_queue_valid("ab\0{}"), 1);
}
END_TEST

START_TEST(dedup_gate_is_the_alphabet_up_to_255)
{
    char d[257];

    memset(d, 'x', sizeof d);
    ck_assert_int_eq(emq_dedup_valid(d, 1), 1);
    ck_assert_int_eq(emq_dedup_valid(d, 255), 1);
    ck_assert_int_eq(emq_dedup_valid(d, 256), 0);
    ck_assert_int_eq(emq_dedup_valid(d, 0), 0);
    ck_assert_int_eq(emq_dedup_valid(NULL, 3), 0);
    ck_assert_int_eq(emq_dedup_valid("emq", 3), 1);
    ck_assert_int_eq(emq_dedup_valid("order-17.v2_x", 13), 1);
    ck_assert_int_eq(emq_dedup_valid("a b", 3), 0);
    ck_assert_int_eq(emq_dedup_valid("a:b", 3), 0);
    ck_assert_int_eq(emq_dedup_valid("a{b", 3), 0);
    ck_assert_int_eq(emq_dedup_valid("a\0b", 3), 0);
    ck_assert_int_eq(emq_dedup_valid("\xC3\xA9", 2), 0);
}
END_TEST

/* ---------------------------------------------------------------- parser */

typedef struct accept_row {
    const char *key;
    size_t len;      /* 0: strlen(key) */
    int family;
    const char *q;   /* expected queue, NULL for none */
    int type;
    int is_job_row;
    int has_id;
} accept_row;

#define QK(s, t) { "emq:{q1}:" s, 0, EMQ_K_QUEUE, "q1", t, 0, 0 }
#define JK(s, t) { "emq:{q1}:job:" ID s, 0, EMQ_K_QUEUE, "q1", t, 0, 1 }

static const accept_row accepted[] = {
    { "{emq}:version", 0, EMQ_K_VERSION, NULL, EMQ_T_STRING, 0, 0 },
    { "{emq}:locks", 0, EMQ_K_RESERVE, NULL, 0, 0, 0 },
    { "{emq}:bundle", 0, EMQ_K_RESERVE, NULL, 0, 0, 0 },
    { "{emq}:migration:orders", 0, EMQ_K_RESERVE, "orders", 0, 0, 0 },
    QK("pending", EMQ_T_ZSET),
    QK("active", EMQ_T_ZSET),
    QK("schedule", EMQ_T_ZSET),
    QK("dead", EMQ_T_ZSET),
    QK("meta", EMQ_T_HASH),
    QK("metrics:completed", EMQ_T_HASH),
    QK("metrics:failed", EMQ_T_HASH),
    QK("metrics:completed:data", EMQ_T_LIST),
    QK("metrics:failed:data", EMQ_T_LIST),
    QK("de:order-17.v2_x", EMQ_T_STRING),
    QK("limiter", EMQ_T_STRING),
    QK("wake", EMQ_T_LIST),
    QK("ring", EMQ_T_LIST),
    QK("gactive", EMQ_T_HASH),
    QK("glimit", EMQ_T_HASH),
    QK("gweight", EMQ_T_HASH),
    QK("paused", EMQ_T_SET),
    QK("g:PRT0KHTOWnGLuC:pending", EMQ_T_ZSET),
    QK("flow:outbox", EMQ_T_LIST),
    QK("repeat", EMQ_T_ZSET),
    QK("repeat:nightly", EMQ_T_HASH),
    QK("repeat:a:b c{}", EMQ_T_HASH),
    QK("stream:audit", EMQ_T_STREAM),
    QK("stream:audit:archived", EMQ_T_STRING),
    QK("stream:archived", EMQ_T_STREAM),
    { "emq:{q1}:job:" ID, 0, EMQ_K_QUEUE, "q1", EMQ_T_HASH, 1, 1 },
    { "emq:{q1}:job:ORD0KHTOWnGLuC", 0, EMQ_K_QUEUE, "q1", EMQ_T_HASH, 1, 1 },
    JK(":logs", EMQ_T_LIST),
    JK(":lock", EMQ_T_STRING),
    JK(":dependencies", EMQ_T_STRING),
    JK(":processed", EMQ_T_HASH),
    JK(":failed", EMQ_T_HASH),
    JK(":unsuccessful", EMQ_T_HASH),
    { "emq:{EMQ}:pending", 0, EMQ_K_QUEUE, "EMQ", EMQ_T_ZSET, 0, 0 },
    { "emq:{a.b_c-9}:meta", 0, EMQ_K_QUEUE, "a.b_c-9", EMQ_T_HASH, 0, 0 },
    /* A repeat name is any non-empty byte string, NUL included. */
    { "emq:{q1}:repeat:a\0b", 19, EMQ_K_QUEUE, "q1", EMQ_T_HASH, 0, 0 },
};

START_TEST(parse_accepts_every_registered_key)
{
    const accept_row *r = &accepted[_i];
    size_t len = r->len ? r->len : strlen(r->key);
    emq_keyinfo ki;

    memset(&ki, 0x5A, sizeof ki);
    ck_assert_msg(emq_key_parse(r->key, len, &ki) == 1, "refused %s", r->key);
    ck_assert_int_eq(ki.family, r->family);
    ck_assert_int_eq(ki.type, r->type);
    ck_assert_int_eq(ki.is_job_row, r->is_job_row);
    if (r->q) {
        ck_assert_uint_eq(ki.qlen, strlen(r->q));
        ck_assert_int_eq(memcmp(ki.q, r->q, ki.qlen), 0);
        ck_assert_ptr_eq(ki.q, strstr(r->key, r->q));
    } else {
        ck_assert_ptr_null(ki.q);
        ck_assert_uint_eq(ki.qlen, 0);
    }
    if (r->has_id) {
        ck_assert_ptr_eq(ki.id, r->key + 11 + ki.qlen);
        ck_assert_int_eq(emq_id_check(ki.id, 14, NULL, NULL), EMQ_ID_OK);
    } else {
        ck_assert_ptr_null(ki.id);
    }
}
END_TEST

typedef struct reject_row {
    const char *key;
    size_t len; /* 0: strlen(key) */
} reject_row;

static const reject_row rejected[] = {
    { "", 0 },
    { "emq", 0 },
    { "emq:", 0 },
    { "emq:{", 0 },
    { "emq:{q1", 0 },
    { "emq:{q1}", 0 },
    { "emq:{q1}:", 0 },
    { "emq:{q1}pending", 0 },
    { "emq:{q1}:pendingx", 0 },
    { "emq:{q1}:Pending", 0 },
    { "emq:{q1}:pending:", 0 },
    { "emq:{q1}:events", 0 },
    { "emq:{q1}:metrics", 0 },
    { "emq:{q1}:metrics:", 0 },
    { "emq:{q1}:metrics:completed:", 0 },
    { "emq:{q1}:flow", 0 },
    { "emq:{q1}:pending\0", 17 },
    { "emq:{q1}:pen\0ding", 17 },
    { "EMQ:{q1}:pending", 0 },
    { " emq:{q1}:pending", 0 },
    { "emq:{}:pending", 0 },
    { "emq:{emq}:pending", 0 },
    { "emq:{q 1}:pending", 0 },
    { "emq:{q:1}:pending", 0 },
    { "emq:{q{1}:pending", 0 },
    { "emq:{caf\xC3\xA9}:pending", 0 },
    { "emq:{q1}}:pending", 0 },
    { "emq:{q\0}:pending", 16 },
    /* queue names are at most 128 bytes: built below for the exact edge */
    { "emq:{q1}:de:", 0 },
    { "emq:{q1}:de:a b", 0 },
    { "emq:{q1}:de:a:b", 0 },
    { "emq:{q1}:de", 0 },
    { "emq:{q1}:g:PRT0KHTOWnGLuC", 0 },
    { "emq:{q1}:g:PRT0KHTOWnGLuC:", 0 },
    { "emq:{q1}:g:PRT0KHTOWnGLuC:pend", 0 },
    { "emq:{q1}:g:PRT0KHTOWnGLuC:pendingx", 0 },
    { "emq:{q1}:g:PRTzzzzzzzzzzz:pending", 0 },
    { "emq:{q1}:g:prt0KHTOWnGLuC:pending", 0 },
    { "emq:{q1}:g:PRT0KHTOWnGLu:pending", 0 },
    { "emq:{q1}:g::pending", 0 },
    { "emq:{q1}:repeat:", 0 },
    { "emq:{q1}:stream:", 0 },
    { "emq:{q1}:stream", 0 },
    { "emq:{q1}:stream::archived", 0 },
    { "emq:{q1}:stream:a:", 0 },
    { "emq:{q1}:stream:a:b", 0 },
    { "emq:{q1}:stream:a:archived:x", 0 },
    { "emq:{q1}:stream:a:archivedx", 0 },
    { "emq:{q1}:stream:a\0b", 19 },
    { "emq:{q1}:stream:a\0:archived", 27 },
    { "emq:{q1}:job:", 0 },
    { "emq:{q1}:job", 0 },
    { "emq:{q1}:job:JOB0KHTOWnGLu", 0 },
    { "emq:{q1}:job:JOB0KHTOWnGLuCx", 0 },
    { "emq:{q1}:job:JOBzzzzzzzzzzz", 0 },
    { "emq:{q1}:job:job0KHTOWnGLuC", 0 },
    { "emq:{q1}:job:" ID ":", 0 },
    { "emq:{q1}:job:" ID ":bogus", 0 },
    { "emq:{q1}:job:" ID ":logsx", 0 },
    { "emq:{q1}:job:" ID ":logs:x", 0 },
    { "emq:{q1}:job:" ID "logs", 0 },
    { "emq:{q1}:job:" ID ":pending", 0 },
    { "{emq}", 0 },
    { "{emq}:", 0 },
    { "{emq}:versio", 0 },
    { "{emq}:versionx", 0 },
    { "{emq}:version\0", 14 },
    { "{emq}:Version", 0 },
    { "{emq}:locks:x", 0 },
    { "{emq}:bundles", 0 },
    { "{emq}:migration", 0 },
    { "{emq}:migration:", 0 },
    { "{emq}:migration:emq", 0 },
    { "{emq}:migration:a b", 0 },
    { "{emq}:pending", 0 },
    { "{EMQ}:version", 0 },
    { "{q1}:version", 0 },
    { "emq:{q1}:{emq}:version", 0 },
    { "123456789", 0 },
    { "\xFF\xFE", 0 },
};

START_TEST(parse_rejects_non_grammar_keys)
{
    const reject_row *r = &rejected[_i];
    size_t len = r->len ? r->len : strlen(r->key);
    char *copy = malloc(len ? len : 1); /* exact size: catches over-reads */
    emq_keyinfo ki;

    ck_assert_ptr_nonnull(copy);
    memcpy(copy, r->key, len);
    memset(&ki, 0x5A, sizeof ki);
    ck_assert_msg(emq_key_parse(copy, len, &ki) == 0, "accepted row %d", _i);
    ck_assert_int_eq(ki.family, EMQ_K_INVALID);
    ck_assert_ptr_null(ki.q);
    ck_assert_ptr_null(ki.id);
    free(copy);
}
END_TEST

START_TEST(parse_queue_length_edge_128_ok_129_refused)
{
    char key[5 + 129 + 2 + 7];
    size_t n;

    memcpy(key, "emq:{", 5);
    memset(key + 5, 'q', 128);
    memcpy(key + 5 + 128, "}:pending", 9);
    n = 5 + 128 + 9;
    ck_assert_int_eq(emq_key_parse(key, n, NULL), 1);
    memset(key + 5, 'q', 129);
    memcpy(key + 5 + 129, "}:pending", 9);
    ck_assert_int_eq(emq_key_parse(key, n + 1, NULL), 0);
}
END_TEST

START_TEST(parse_null_and_empty_are_refused)
{
    emq_keyinfo ki;

    ck_assert_int_eq(emq_key_parse(NULL, 0, &ki), 0);
    ck_assert_int_eq(emq_key_parse(NULL, 10, &ki), 0);
    ck_assert_int_eq(ki.family, EMQ_K_INVALID);
    ck_assert_int_eq(emq_key_parse("", 0, NULL), 0);
}
END_TEST

START_TEST(parse_round_trips_every_builder_output)
{
    static const int sfx[] = {
        EMQ_KT_PENDING, EMQ_KT_ACTIVE, EMQ_KT_SCHEDULE, EMQ_KT_DEAD,
        EMQ_KT_META, EMQ_KT_METRICS_COMPLETED, EMQ_KT_METRICS_FAILED,
        EMQ_KT_WAKE, EMQ_KT_RING, EMQ_KT_PAUSED, EMQ_KT_OUTBOX,
        EMQ_KT_REPEAT,
    };
    static const int subs[] = {
        EMQ_KT_JOB_LOGS, EMQ_KT_JOB_LOCK, EMQ_KT_JOB_DEPENDENCIES,
        EMQ_KT_JOB_PROCESSED, EMQ_KT_JOB_FAILED, EMQ_KT_JOB_UNSUCCESSFUL,
    };
    char buf[EMQ_KEY_MAX];
    emq_keyinfo ki;

    for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
        size_t n = emq_key(buf, "orders", sfx[i]);
        ck_assert_int_eq(emq_key_parse(buf, n, &ki), 1);
        ck_assert_int_eq(ki.family, EMQ_K_QUEUE);
        ck_assert_int_eq(ki.is_job_row, 0);
    }
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        size_t n = emq_key_of(buf, "orders", subs[i], ID, 14);
        ck_assert_int_eq(emq_key_parse(buf, n, &ki), 1);
        ck_assert_int_eq(ki.is_job_row, 0);
        ck_assert_int_eq(memcmp(ki.id, ID, 14), 0);
    }
    size_t n = emq_key_of(buf, "orders", EMQ_KT_JOB, ID, 14);
    ck_assert_int_eq(emq_key_parse(buf, n, &ki), 1);
    ck_assert_int_eq(ki.is_job_row, 1);
    ck_assert_int_eq(ki.type, EMQ_T_HASH);
}
END_TEST

/*
 * Robustness: every prefix of every accepted key, every single-byte
 * mutation of them, and pseudo-random byte strings go through the parser
 * from exact-size heap copies (an over-read shows under ASan/valgrind).
 * Whatever is accepted must carry pointers inside the input.
 */
static void parse_probe(const unsigned char *src, size_t len)
{
    unsigned char *copy = malloc(len ? len : 1);
    emq_keyinfo ki;

    ck_assert_ptr_nonnull(copy);
    memcpy(copy, src, len);
    if (emq_key_parse(copy, len, &ki)) {
        ck_assert_int_ne(ki.family, EMQ_K_INVALID);
        if (ki.q) {
            ck_assert((const unsigned char *)ki.q >= copy);
            ck_assert((const unsigned char *)ki.q + ki.qlen <= copy + len);
        }
        if (ki.id)
            ck_assert((const unsigned char *)ki.id + 14 <= copy + len);
        /* The slot of any grammar key is its queue's (or emq's). */
        if (ki.family == EMQ_K_QUEUE)
            ck_assert_uint_eq(emq_slot(copy, len),
                              emq_crc16(ki.q, ki.qlen) & 16383);
        else
            ck_assert_uint_eq(emq_slot(copy, len), 9051);
    } else {
        ck_assert_int_eq(ki.family, EMQ_K_INVALID);
    }
    (void)emq_slot(copy, len);
    free(copy);
}

START_TEST(parse_survives_prefixes_mutations_and_noise)
{
    static const unsigned char bytes[] = "{}:emqjobJOB0zZ\0\xFF-_.";
    uint32_t x = 2463534242u;

    for (size_t r = 0; r < sizeof accepted / sizeof *accepted; r++) {
        const char *k = accepted[r].key;
        size_t len = accepted[r].len ? accepted[r].len : strlen(k);
        unsigned char m[EMQ_KEY_MAX];

        for (size_t n = 0; n <= len; n++)
            parse_probe((const unsigned char *)k, n);
        memcpy(m, k, len);
        for (size_t i = 0; i < len; i++) {
            unsigned char keep = m[i];
            for (size_t b = 0; b < sizeof bytes; b++) {
                m[i] = bytes[b];
                parse_probe(m, len);
            }
            m[i] = keep;
        }
    }
    for (int t = 0; t < 20000; t++) {
        unsigned char buf[48];
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        size_t len = x % sizeof buf;
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            buf[i] = (x & 1) ? bytes[(x >> 1) % sizeof bytes]
                             : (unsigned char)(x >> 8);
        }
        if (len >= 6 && (x & 0x300) == 0x100)
            memcpy(buf, "emq:{", 5);
        parse_probe(buf, len);
    }
}
END_TEST

Suite *suite_keys(void)
{
    Suite *s = suite_create("keys");
    TCase *slot = tcase_create("slot");
    TCase *b = tcase_create("builders");
    TCase *g = tcase_create("gates");
    TCase *p = tcase_create("parse");

    tcase_add_test(slot, crc16_xmodem_reference_vector);
    tcase_add_test(slot, hashtag_takes_the_first_nonempty_brace_span);
    tcase_add_test(slot, slot_vectors_of_appendix_b);
    suite_add_tcase(s, slot);

    tcase_add_test(b, builders_write_the_grammar);
    tcase_add_test(b, every_registered_key_type_round_trips_through_the_parser);
    tcase_add_test(b, grammar_budget_is_17_bytes_before_the_id);
    tcase_add_test(b, builders_fit_the_longest_keys_and_refuse_overflow);
    suite_add_tcase(s, b);

    tcase_add_test(g, queue_gate_accepts_the_alphabet_up_to_128);
    tcase_add_test(g, queue_gate_refuses_everything_else);
    tcase_add_test(g, dedup_gate_is_the_alphabet_up_to_255);
    suite_add_tcase(s, g);

    tcase_add_loop_test(p, parse_accepts_every_registered_key, 0,
                        (int)(sizeof accepted / sizeof *accepted));
    tcase_add_loop_test(p, parse_rejects_non_grammar_keys, 0,
                        (int)(sizeof rejected / sizeof *rejected));
    tcase_add_test(p, parse_queue_length_edge_128_ok_129_refused);
    tcase_add_test(p, parse_null_and_empty_are_refused);
    tcase_add_test(p, parse_round_trips_every_builder_output);
    tcase_add_test(p, parse_survives_prefixes_mutations_and_noise);
    tcase_set_timeout(p, 60);
    suite_add_tcase(s, p);
    return s;
}
