/*
 * test_json.c — suite "json": the strict JSON reader of tests/json.c (the
 * golden traces' parser): values, escapes, refusals, depth, allocation
 * failure without leaks, the writer, base64 and UTF-8 validation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "json.h"
#include "suites.h"

static emq_json *parse_ok(const char *text)
{
    emq_json *v = NULL;
    emq_json_error e;
    int rc = emq_json_parse(text, strlen(text), &v, &e);
    ck_assert_msg(rc == EMQ_JSON_OK, "parse of %s failed at %zu: %s", text,
                  e.pos, e.msg);
    ck_assert_ptr_nonnull(v);
    return v;
}

static int parse_rc(const char *text, size_t len)
{
    emq_json *v = (emq_json *)1;
    int rc = emq_json_parse(text, len, &v, NULL);
    if (rc != EMQ_JSON_OK)
        ck_assert_ptr_null(v);
    emq_json_free(v);
    return rc;
}

/* ---------------------------------------------------------------- values */

START_TEST(parses_literals_and_integers_with_raw_text)
{
    emq_json *v = parse_ok(" [null, true, false, 0, -1, 1767225600000,"
                           " 9223372036854775807, -9223372036854775808] ");
    ck_assert_int_eq(v->type, EMQ_JSON_ARRAY);
    ck_assert_uint_eq(v->n, 8);
    ck_assert_int_eq(v->items[0]->type, EMQ_JSON_NULL);
    ck_assert_int_eq(v->items[1]->type, EMQ_JSON_TRUE);
    ck_assert_int_eq(v->items[2]->type, EMQ_JSON_FALSE);
    ck_assert_int_eq(v->items[3]->type, EMQ_JSON_INT);
    ck_assert_int_eq(v->items[3]->i, 0);
    ck_assert_int_eq(v->items[4]->i, -1);
    ck_assert_int_eq(v->items[5]->i, INT64_C(1767225600000));
    ck_assert_str_eq(v->items[5]->raw, "1767225600000");
    ck_assert_int_eq(v->items[6]->type, EMQ_JSON_INT);
    ck_assert_int_eq(v->items[6]->i, INT64_MAX);
    ck_assert_int_eq(v->items[7]->type, EMQ_JSON_INT);
    ck_assert_int_eq(v->items[7]->i, INT64_MIN);
    emq_json_free(v);
}
END_TEST

START_TEST(integers_beyond_int64_and_fractions_are_floats)
{
    emq_json *v = parse_ok("[9223372036854775808, -9223372036854775809, 1.5,"
                           " -2e3, 0.25E+1]");
    ck_assert_int_eq(v->items[0]->type, EMQ_JSON_FLOAT);
    ck_assert_str_eq(v->items[0]->raw, "9223372036854775808");
    ck_assert(v->items[0]->d == 9223372036854775808.0);
    ck_assert_int_eq(v->items[1]->type, EMQ_JSON_FLOAT);
    ck_assert_int_eq(v->items[2]->type, EMQ_JSON_FLOAT);
    ck_assert(v->items[2]->d == 1.5);
    ck_assert(v->items[3]->d == -2000.0);
    ck_assert(v->items[4]->d == 2.5);
    ck_assert_str_eq(v->items[4]->raw, "0.25E+1");
    emq_json_free(v);
}
END_TEST

START_TEST(objects_keep_document_order_and_lookup_by_name)
{
    emq_json *v = parse_ok("{\"b\": 1, \"a\": {\"x\": []}, \"\": \"e\"}");
    static const char *const names[] = { "a", "b", "", NULL };
    static const char *const fewer[] = { "a", "b", NULL };
    ck_assert_int_eq(v->type, EMQ_JSON_OBJECT);
    ck_assert_uint_eq(v->n, 3);
    ck_assert_str_eq(v->members[0].key, "b");
    ck_assert_str_eq(v->members[1].key, "a");
    ck_assert_int_eq(emq_json_get(v, "b")->i, 1);
    ck_assert_int_eq(emq_json_get(emq_json_get(v, "a"), "x")->type,
                     EMQ_JSON_ARRAY);
    ck_assert_str_eq(emq_json_get(v, "")->s, "e");
    ck_assert_ptr_null(emq_json_get(v, "c"));
    ck_assert(emq_json_has_exactly(v, names));
    ck_assert(!emq_json_has_exactly(v, fewer));
    emq_json_free(v);
}
END_TEST

/* --------------------------------------------------------------- strings */

START_TEST(simple_escapes_decode_to_their_bytes)
{
    emq_json *v = parse_ok("\"q\\\"b\\\\s\\/b\\bf\\fn\\nr\\rt\\t\"");
    ck_assert_uint_eq(v->len, 16);
    ck_assert_mem_eq(v->s, "q\"b\\s/b\bf\fn\nr\rt\t", 16);
    ck_assert_int_eq(v->s[v->len], '\0');
    emq_json_free(v);
}
END_TEST

START_TEST(unicode_escapes_become_utf8_including_nul)
{
    emq_json *v = parse_ok("\"\\u0000\\u0041\\u00e9\\u20AC\\ud83d\\ude00\"");
    static const unsigned char want[] = { 0x00, 'A', 0xC3, 0xA9, 0xE2, 0x82,
                                          0xAC, 0xF0, 0x9F, 0x98, 0x80 };
    ck_assert_uint_eq(v->len, sizeof want);
    ck_assert_mem_eq(v->s, want, sizeof want);
    emq_json_free(v);
}
END_TEST

START_TEST(raw_utf8_passes_through)
{
    emq_json *v = parse_ok("\"h\xC3\xA9llo \xF0\x9F\x98\x80\"");
    ck_assert_uint_eq(v->len, 11);
    ck_assert_mem_eq(v->s, "h\xC3\xA9llo \xF0\x9F\x98\x80", 11);
    emq_json_free(v);
}
END_TEST

/* -------------------------------------------------------------- refusals */

static const char *const refused[] = {
    "", " ", "nul", "truex", "[1,]", "[1 2]", "{\"a\":1,}", "{\"a\" 1}",
    "{a:1}", "{\"a\":1,\"a\":2}", "01", "-", "-01", "1.", ".5", "1e", "1e+",
    "+1", "NaN", "Infinity", "'s'", "\"abc", "[1", "{\"a\":1", "1 2",
    "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud800\"", "\"\\udc00\"",
    "\"\\ud800\\u0041\"", "\"\\ud800x\"", "\"a\tb\"", "\"a\nb\"",
    "\"\xC0\x80\"", "\"\xED\xA0\x80\"", "\"\xF5\x80\x80\x80\"", "\"\xC3\"",
    "\"\x80\"", "\"\xE2\x82\"", "[] []", "{\"a\":}",
};

START_TEST(malformed_texts_are_refused_without_a_tree)
{
    const char *t = refused[_i];
    ck_assert_msg(parse_rc(t, strlen(t)) == EMQ_JSON_ESYNTAX,
                  "accepted: %s", t);
}
END_TEST

START_TEST(an_embedded_nul_outside_strings_is_refused)
{
    ck_assert_int_eq(parse_rc("[1]\0", 4), EMQ_JSON_ESYNTAX);
    ck_assert_int_eq(parse_rc("\"a\0b\"", 5), EMQ_JSON_ESYNTAX);
}
END_TEST

START_TEST(error_reports_the_byte_offset)
{
    emq_json *v;
    emq_json_error e;
    const char *t = "{\"a\": [1, 2,, 3]}";
    ck_assert_int_eq(emq_json_parse(t, strlen(t), &v, &e), EMQ_JSON_ESYNTAX);
    ck_assert_uint_eq(e.pos, 12);
    ck_assert(strlen(e.msg) > 0);
    t = "{\"k\": 1, \"k\": 2}";
    ck_assert_int_eq(emq_json_parse(t, strlen(t), &v, &e), EMQ_JSON_ESYNTAX);
    ck_assert_uint_eq(e.pos, 9);
    ck_assert_str_eq(e.msg, "duplicate key");
}
END_TEST

START_TEST(nesting_is_bounded)
{
    char buf[2 * (EMQ_JSON_MAX_DEPTH + 1) + 1];
    size_t d;
    emq_json *v;
    for (d = 0; d < EMQ_JSON_MAX_DEPTH; d++) {
        buf[d] = '[';
        buf[2 * EMQ_JSON_MAX_DEPTH - 1 - d] = ']';
    }
    ck_assert_int_eq(emq_json_parse(buf, 2 * EMQ_JSON_MAX_DEPTH, &v, NULL),
                     EMQ_JSON_OK);
    emq_json_free(v);
    for (d = 0; d <= EMQ_JSON_MAX_DEPTH; d++) {
        buf[d] = '[';
        buf[2 * EMQ_JSON_MAX_DEPTH + 1 - d] = ']';
    }
    ck_assert_int_eq(emq_json_parse(buf, 2 * EMQ_JSON_MAX_DEPTH + 2, &v,
                                    NULL),
                     EMQ_JSON_EDEPTH);
    ck_assert_ptr_null(v);
}
END_TEST

/* ------------------------------------------------------------ allocation */

static long live, budget;

static void *t_malloc(size_t n)
{
    void *p;
    if (budget == 0)
        return NULL;
    if (budget > 0)
        budget--;
    p = malloc(n);
    if (p)
        live++;
    return p;
}

static void *t_realloc(void *o, size_t n)
{
    void *p;
    if (budget == 0)
        return NULL;
    if (budget > 0)
        budget--;
    p = realloc(o, n);
    if (p && !o)
        live++;
    return p;
}

static void t_free(void *p)
{
    if (p)
        live--;
    free(p);
}

static const emq_json_allocator counting = { t_malloc, t_realloc, t_free };

START_TEST(every_allocation_failure_is_reported_and_leaks_nothing)
{
    const char *doc = "{\"case\":\"c\",\"args\":{\"q\":\"g\",\"pairs\":[[\"a\",1],"
                      "[\"b\",-2]]},\"reply\":[\"x\\u00e9\",null,1.5,true],"
                      "\"keyspace\":{\"k\":{\"type\":\"zset\",\"value\":[[\"m\","
                      "0],[\"n\",7]]},\"l\":[1,2,3,4,5,6,7,8,9,10]}}";
    long n;
    int ok = 0;
    emq_json_set_allocator(&counting);
    for (n = 0; n < 10000 && !ok; n++) {
        emq_json *v = NULL;
        int rc;
        live = 0;
        budget = n;
        rc = emq_json_parse(doc, strlen(doc), &v, NULL);
        if (rc == EMQ_JSON_OK) {
            ok = 1;
            ck_assert_int_gt(live, 0);
            emq_json_free(v);
        } else {
            ck_assert_int_eq(rc, EMQ_JSON_ENOMEM);
            ck_assert_ptr_null(v);
        }
        ck_assert_int_eq(live, 0);
    }
    emq_json_set_allocator(NULL);
    ck_assert(ok);
    ck_assert_int_gt(n, 20); /* the loop really failed many allocations */
}
END_TEST

START_TEST(builders_free_the_item_when_they_fail)
{
    emq_json *arr, *obj;
    emq_json_set_allocator(&counting);
    live = 0;
    budget = -1;
    arr = emq_json_new_array();
    obj = emq_json_new_object();
    budget = 2; /* the integer's node and text, not the array's growth */
    ck_assert_int_eq(emq_json_push(arr, emq_json_new_int(1)), EMQ_JSON_ENOMEM);
    budget = -1;
    ck_assert_int_eq(emq_json_push(arr, emq_json_new_int(2)), EMQ_JSON_OK);
    {
        emq_json *item = emq_json_new_str("v", 1);
        budget = 0;
        ck_assert_int_eq(emq_json_set(obj, "k", 1, item), EMQ_JSON_ENOMEM);
        budget = -1;
    }
    ck_assert_uint_eq(arr->n, 1);
    ck_assert_uint_eq(obj->n, 0);
    emq_json_free(arr);
    emq_json_free(obj);
    ck_assert_int_eq(live, 0);
    emq_json_set_allocator(NULL);
}
END_TEST

/* ---------------------------------------------------------------- writer */

START_TEST(writer_round_trips_compact_json)
{
    const char *t = "{\"a\":[1,-2,null,true,false,\"x\\\"y\\\\z\\n\"],"
                    "\"b\":{\"c\":1.5}}";
    emq_json *v = parse_ok(t), *w;
    emq_json_buf b = { NULL, 0, 0, 0 };
    ck_assert_int_eq(emq_json_write(&b, v, 0), EMQ_JSON_OK);
    ck_assert_str_eq(b.p, t);
    w = parse_ok(b.p);
    ck_assert(emq_json_equal(v, w));
    emq_json_free(v);
    emq_json_free(w);
    emq_json_buf_free(&b);
}
END_TEST

START_TEST(writer_uses_b64_for_binary_and_truncates)
{
    emq_json *v = emq_json_new_str("a\0b\0", 4);
    emq_json *u = emq_json_new_str("\xff\xfe\xfd", 3);
    emq_json *c = emq_json_new_str("\x01\x7f", 2);
    emq_json *l = emq_json_new_str("0123456789abcdef", 16);
    emq_json_buf b = { NULL, 0, 0, 0 };
    emq_json_write(&b, v, 0);
    ck_assert_str_eq(b.p, "{\"b64\":\"YQBiAA==\"}");
    b.len = 0;
    emq_json_write(&b, u, 0);
    ck_assert_str_eq(b.p, "{\"b64\":\"//79\"}");
    b.len = 0;
    emq_json_write(&b, c, 0);
    ck_assert_str_eq(b.p, "\"\\u0001\\u007f\"");
    b.len = 0;
    emq_json_write(&b, l, 5);
    ck_assert_str_eq(b.p, "\"0123...");
    emq_json_buf_free(&b);
    emq_json_free(v);
    emq_json_free(u);
    emq_json_free(c);
    emq_json_free(l);
}
END_TEST

START_TEST(equality_is_by_value_and_ignores_member_order)
{
    emq_json *a = parse_ok("{\"x\":[1,\"s\"],\"y\":2}");
    emq_json *b = parse_ok("{\"y\":2.0,\"x\":[1,\"s\"]}");
    emq_json *c = parse_ok("{\"y\":2,\"x\":[\"s\",1]}");
    emq_json *d = parse_ok("{\"y\":2,\"x\":[1,\"s\"],\"z\":null}");
    emq_json *e;
    ck_assert(emq_json_equal(a, b));
    ck_assert(!emq_json_equal(a, c));
    ck_assert(!emq_json_equal(a, d));
    ck_assert(!emq_json_equal(d, a));
    e = emq_json_dup(d);
    ck_assert(emq_json_equal(d, e));
    emq_json_free(a);
    emq_json_free(b);
    emq_json_free(c);
    emq_json_free(d);
    emq_json_free(e);
}
END_TEST

/* ---------------------------------------------------------- base64, UTF-8 */

START_TEST(base64_decodes_standard_padded_text)
{
    unsigned char *o;
    size_t n;
    ck_assert_int_eq(emq_json_b64_decode("YQBiAA==", 8, &o, &n), EMQ_JSON_OK);
    ck_assert_uint_eq(n, 4);
    ck_assert_mem_eq(o, "a\0b\0", 4);
    emq_json_release(o);
    ck_assert_int_eq(emq_json_b64_decode("//79", 4, &o, &n), EMQ_JSON_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_mem_eq(o, "\xff\xfe\xfd", 3);
    emq_json_release(o);
    ck_assert_int_eq(emq_json_b64_decode("", 0, &o, &n), EMQ_JSON_OK);
    ck_assert_uint_eq(n, 0);
    emq_json_release(o);
    ck_assert_int_eq(emq_json_b64_decode("YWI=", 4, &o, &n), EMQ_JSON_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_mem_eq(o, "ab", 2);
    emq_json_release(o);
}
END_TEST

START_TEST(base64_refuses_malformed_text)
{
    static const char *const bad[] = { "YQ", "YQB", "Y===", "YQ=A", "Y-8=",
                                       "YR==", "YWJ=", "YQ==YQ==", "YQ\n=" };
    size_t k;
    for (k = 0; k < sizeof bad / sizeof *bad; k++) {
        unsigned char *o = (unsigned char *)1;
        size_t n;
        ck_assert_msg(emq_json_b64_decode(bad[k], strlen(bad[k]), &o, &n) ==
                          EMQ_JSON_ESYNTAX,
                      "accepted %s", bad[k]);
        ck_assert_ptr_null(o);
    }
}
END_TEST

START_TEST(utf8_validation_follows_rfc3629)
{
    ck_assert(emq_json_utf8_valid("", 0));
    ck_assert(emq_json_utf8_valid("plain", 5));
    ck_assert(emq_json_utf8_valid("\xC2\x80\xDF\xBF", 4));
    ck_assert(emq_json_utf8_valid("\xEF\xBF\xBF\xF4\x8F\xBF\xBF", 7));
    ck_assert(!emq_json_utf8_valid("\xC1\xBF", 2));         /* overlong   */
    ck_assert(!emq_json_utf8_valid("\xE0\x9F\xBF", 3));     /* overlong   */
    ck_assert(!emq_json_utf8_valid("\xED\xA0\x80", 3));     /* surrogate  */
    ck_assert(!emq_json_utf8_valid("\xF4\x90\x80\x80", 4)); /* > U+10FFFF */
    ck_assert(!emq_json_utf8_valid("\xFF", 1));
    ck_assert(!emq_json_utf8_valid("\xE2\x82", 2));         /* truncated  */
}
END_TEST

Suite *suite_json(void)
{
    Suite *s = suite_create("json");
    TCase *v = tcase_create("values");
    TCase *r = tcase_create("refusals");
    TCase *m = tcase_create("memory");
    TCase *w = tcase_create("writer");

    tcase_add_test(v, parses_literals_and_integers_with_raw_text);
    tcase_add_test(v, integers_beyond_int64_and_fractions_are_floats);
    tcase_add_test(v, objects_keep_document_order_and_lookup_by_name);
    tcase_add_test(v, simple_escapes_decode_to_their_bytes);
    tcase_add_test(v, unicode_escapes_become_utf8_including_nul);
    tcase_add_test(v, raw_utf8_passes_through);
    suite_add_tcase(s, v);

    tcase_add_loop_test(r, malformed_texts_are_refused_without_a_tree, 0,
                        (int)(sizeof refused / sizeof *refused));
    tcase_add_test(r, an_embedded_nul_outside_strings_is_refused);
    tcase_add_test(r, error_reports_the_byte_offset);
    tcase_add_test(r, nesting_is_bounded);
    suite_add_tcase(s, r);

    tcase_add_test(m, every_allocation_failure_is_reported_and_leaks_nothing);
    tcase_add_test(m, builders_free_the_item_when_they_fail);
    suite_add_tcase(s, m);

    tcase_add_test(w, writer_round_trips_compact_json);
    tcase_add_test(w, writer_uses_b64_for_binary_and_truncates);
    tcase_add_test(w, equality_is_by_value_and_ignores_member_order);
    tcase_add_test(w, base64_decodes_standard_padded_text);
    tcase_add_test(w, base64_refuses_malformed_text);
    tcase_add_test(w, utf8_validation_follows_rfc3629);
    suite_add_tcase(s, w);
    return s;
}
