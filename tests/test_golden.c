/*
 * test_golden.c — suite "golden": the trace model of tests/golden.c: case
 * grouping, the strict line checks, byte and symbolic-time decoding, the
 * reply and keyspace comparison, and the replay driver over a toy executor.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "golden.h"
#include "suites.h"

#define T0 "1767225600000"

/* Load `text` and return its first case (the file stays open in *f). */
static emq_golden_case *first_case(const char *text, emq_golden_file **f)
{
    emq_golden_case *c = NULL;
    char err[600] = "";
    ck_assert_int_eq(emq_golden_open_mem("t", text, strlen(text), f, err,
                                         sizeof err), 0);
    ck_assert_msg(emq_golden_next_case(*f, &c, err, sizeof err) == 1, "%s",
                  err);
    return c;
}

/* The load error of the first case of `text` ("" when it loads). */
static void load_error(const char *text, char *err, size_t errlen)
{
    emq_golden_file *f;
    emq_golden_case *c = NULL;
    int rc;
    err[0] = '\0';
    ck_assert_int_eq(emq_golden_open_mem("t", text, strlen(text), &f, err,
                                         errlen), 0);
    while ((rc = emq_golden_next_case(f, &c, err, errlen)) == 1)
        emq_golden_case_free(c);
    if (rc == 0)
        err[0] = '\0';
    emq_golden_close(f);
}

static emq_json *jp(const char *text)
{
    emq_json *v = NULL;
    ck_assert_int_eq(emq_json_parse(text, strlen(text), &v, NULL),
                     EMQ_JSON_OK);
    return v;
}

/* ----------------------------------------------------------------- model */

static const char two_cases[] =
    "{\"case\":\"a\",\"step\":1,\"verb\":\"enqueue\",\"args\":{\"q\":\"g.a\","
    "\"payload\":{\"b64\":\"YQBiAA==\"}},\"now\":" T0 ",\"reply\":1,"
    "\"keyspace\":{\"emq:{g.a}:job:J\":{\"type\":\"hash\",\"value\":"
    "{\"payload\":{\"b64\":\"//79\"},\"state\":\"pending\"}}}}\n"
    "{\"case\":\"a\",\"step\":2,\"verb\":\"advance\",\"args\":{\"ms\":60000},"
    "\"now\":1767225660000,\"reply\":null,\"keyspace\":{"
    "\"emq:{g.a}:active\":{\"type\":\"zset\",\"value\":[[\"J\","
    "{\"now_plus\":5,\"at_step\":1}],[{\"b64\":\"AA==\"},"
    "{\"now_plus\":-1,\"at_step\":2}]]},"
    "\"emq:{g.a}:lock\":{\"type\":\"string\",\"value\":\"1\",\"expire_at\":"
    "{\"now_plus\":30000,\"at_step\":2}},"
    "\"emq:{g.a}:s\":{\"type\":\"set\",\"value\":[{\"b64\":\"/w==\"},\"b\"]}}}\n"
    "{\"case\":\"b\",\"step\":1,\"verb\":\"claim\",\"args\":{},\"now\":" T0 ","
    "\"reply\":[\"J\",{\"b64\":\"AA==\"},1],\"keyspace\":{}}\n";

START_TEST(lines_group_into_cases_in_file_order)
{
    emq_golden_file *f;
    emq_golden_case *a = first_case(two_cases, &f), *b = NULL;
    char err[300];
    ck_assert_str_eq(a->name, "a");
    ck_assert_uint_eq(a->n, 2);
    ck_assert_str_eq(a->steps[0].verb, "enqueue");
    ck_assert_int_eq(a->steps[1].step, 2);
    ck_assert_int_eq(a->steps[1].now, INT64_C(1767225660000));
    ck_assert_uint_eq(a->steps[1].lineno, 2);
    ck_assert_int_eq(emq_golden_next_case(f, &b, err, sizeof err), 1);
    ck_assert_str_eq(b->name, "b");
    ck_assert_uint_eq(b->n, 1);
    emq_golden_case_free(b);
    ck_assert_int_eq(emq_golden_next_case(f, &b, err, sizeof err), 0);
    emq_golden_case_free(a);
    emq_golden_close(f);
}
END_TEST

START_TEST(byte_strings_decode_in_args_replies_and_keyspaces)
{
    emq_golden_file *f;
    emq_golden_case *a = first_case(two_cases, &f), *b = NULL;
    char err[300];
    const char *p;
    size_t n;
    emq_json *row, *set;
    ck_assert_int_eq(emq_golden_arg_str(&a->steps[0], "payload", &p, &n), 0);
    ck_assert_uint_eq(n, 4);
    ck_assert_mem_eq(p, "a\0b\0", 4);
    row = emq_json_get(emq_json_get(a->steps[0].keyspace,
                                    "emq:{g.a}:job:J"), "value");
    ck_assert_uint_eq(emq_json_get(row, "payload")->len, 3);
    ck_assert_mem_eq(emq_json_get(row, "payload")->s, "\xff\xfe\xfd", 3);
    set = emq_json_get(emq_json_get(a->steps[1].keyspace, "emq:{g.a}:s"),
                       "value");
    ck_assert_mem_eq(set->items[0]->s, "\xff", 1);
    ck_assert_int_eq(emq_golden_next_case(f, &b, err, sizeof err), 1);
    ck_assert_int_eq(b->steps[0].reply->items[1]->type, EMQ_JSON_STRING);
    ck_assert_uint_eq(b->steps[0].reply->items[1]->len, 1);
    ck_assert_int_eq(b->steps[0].reply->items[1]->s[0], 0);
    emq_golden_case_free(a);
    emq_golden_case_free(b);
    emq_golden_close(f);
}
END_TEST

START_TEST(symbolic_times_evaluate_against_the_named_step)
{
    emq_golden_file *f;
    emq_golden_case *a = first_case(two_cases, &f);
    emq_json *z = emq_json_get(emq_json_get(a->steps[1].keyspace,
                                            "emq:{g.a}:active"), "value");
    emq_json *lock = emq_json_get(a->steps[1].keyspace, "emq:{g.a}:lock");
    ck_assert_int_eq(z->items[0]->items[1]->type, EMQ_JSON_INT);
    ck_assert_int_eq(z->items[0]->items[1]->i, INT64_C(1767225600005));
    ck_assert_int_eq(z->items[1]->items[1]->i, INT64_C(1767225659999));
    ck_assert_uint_eq(z->items[1]->items[0]->len, 1);
    ck_assert_int_eq(emq_json_get(lock, "expire_at")->i,
                     INT64_C(1767225690000));
    emq_golden_case_free(a);
    emq_golden_close(f);
}
END_TEST

START_TEST(map_replies_keep_their_names)
{
    const char *t = "{\"case\":\"m\",\"step\":1,\"verb\":\"get_job\",\"args\":{},"
                    "\"now\":1,\"reply\":{\"map\":{\"b64\":{\"b64\":\"AA==\"}}},"
                    "\"keyspace\":{}}\n";
    emq_golden_file *f;
    emq_golden_case *c = first_case(t, &f);
    emq_json *m = emq_json_get(c->steps[0].reply, "map");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(emq_json_get(m, "b64")->type, EMQ_JSON_STRING);
    ck_assert_uint_eq(emq_json_get(m, "b64")->len, 1);
    emq_golden_case_free(c);
    emq_golden_close(f);
}
END_TEST

#define L1(rest) "{\"case\":\"c\",\"step\":1,\"verb\":\"v\",\"args\":{}," \
                 "\"now\":10,\"reply\":1" rest "}\n"

static const struct { const char *text, *expect; } bad_traces[] = {
    { L1(",\"keyspace\":{}") L1(",\"keyspace\":{}"), "step 1 where 2" },
    { L1(",\"keyspace\":{}")
      "{\"case\":\"d\",\"step\":1,\"verb\":\"v\",\"args\":{},\"now\":1,"
      "\"reply\":1,\"keyspace\":{}}\n" L1(",\"keyspace\":{}"),
      "resumes" },
    { L1(",\"keyspace\":{},\"extra\":1"), "unknown field" },
    { L1(""), "\"keyspace\" missing" },
    { "{\"case\":\"c\",\"step\":1,\"verb\":\"v\",\"args\":[],\"now\":1,"
      "\"reply\":1,\"keyspace\":{}}\n", "\"args\"" },
    { L1(",\"keyspace\":{\"k\":{\"type\":\"zset\",\"value\":[[\"m\","
         "{\"now_plus\":1,\"at_step\":2}]]}}"), "at_step 2 outside" },
    { L1(",\"keyspace\":{\"b\":{\"type\":\"string\",\"value\":\"x\"},"
         "\"a\":{\"type\":\"string\",\"value\":\"x\"}}"), "bytewise order" },
    { L1(",\"keyspace\":{\"k\":{\"type\":\"tree\",\"value\":1}}"),
      "unknown type" },
    { L1(",\"keyspace\":{\"k\":{\"type\":\"hash\",\"value\":{\"f\":1}}}"),
      "byte string expected" },
    { L1(",\"keyspace\":{\"k\":{\"type\":\"string\",\"value\":"
         "{\"b64\":\"A\"}}}"), "bad base64" },
    { L1(",\"keyspace\":{\"k\":{\"type\":\"zset\",\"value\":[[\"m\"]]}}"),
      "malformed zset" },
    { L1(",\"keyspace\":{},\"host\":false"), "\"host\" must be true" },
    { L1(",\"keyspace\":{}") "\n", "empty line" },
    { "{\"case\":\"c\",\"step\":1,\n", "column" },
};

START_TEST(malformed_traces_are_load_errors_naming_the_fault)
{
    char err[600];
    load_error(bad_traces[_i].text, err, sizeof err);
    ck_assert_msg(strstr(err, bad_traces[_i].expect) != NULL,
                  "trace %d: wanted \"%s\" in \"%s\"", _i,
                  bad_traces[_i].expect, err);
}
END_TEST

START_TEST(a_trace_without_a_final_newline_loads)
{
    char err[600];
    load_error("{\"case\":\"c\",\"step\":1,\"verb\":\"v\",\"args\":{},\"now\":1,"
               "\"reply\":1,\"keyspace\":{}}", err, sizeof err);
    ck_assert_str_eq(err, "");
}
END_TEST

/* ------------------------------------------------------------ comparison */

static int ks_diff(const char *want, const char *got, char *msg, size_t n)
{
    emq_json *e = jp(want), *a = jp(got);
    emq_json_buf b = { NULL, 0, 0, 0 };
    int rc = emq_golden_keyspace_diff(e, a, &b);
    snprintf(msg, n, "%s", b.p ? b.p : "");
    emq_json_buf_free(&b);
    emq_json_free(e);
    emq_json_free(a);
    return rc;
}

#define H(v) "{\"type\":\"hash\",\"value\":" v "}"
#define Z(v) "{\"type\":\"zset\",\"value\":" v "}"

START_TEST(equal_keyspaces_compare_equal_in_any_member_order)
{
    char m[600];
    ck_assert_int_eq(ks_diff("{\"a\":" H("{\"x\":\"1\",\"y\":\"2\"}") ","
                             "\"b\":" Z("[[\"m\",1],[\"n\",2]]") ","
                             "\"c\":{\"type\":\"set\",\"value\":[\"p\",\"q\"]}}",
                             "{\"c\":{\"type\":\"set\",\"value\":[\"q\",\"p\"]},"
                             "\"b\":" Z("[[\"m\",1.0],[\"n\",2]]") ","
                             "\"a\":" H("{\"y\":\"2\",\"x\":\"1\"}") "}",
                             m, sizeof m), 0);
    ck_assert_str_eq(m, "");
}
END_TEST

START_TEST(keyspace_diff_names_the_first_differing_key)
{
    char m[600];
    ck_assert_int_eq(ks_diff("{\"a\":" H("{\"x\":\"1\"}") ",\"b\":" H("{}") "}",
                             "{\"b\":" H("{}") "}", m, sizeof m), 1);
    ck_assert_msg(strstr(m, "key \"a\": missing") != NULL, "%s", m);
    ck_assert_int_eq(ks_diff("{\"b\":" H("{}") "}",
                             "{\"a\":" H("{}") ",\"b\":" H("{}") "}", m,
                             sizeof m), 1);
    ck_assert_msg(strstr(m, "key \"a\": unexpected") != NULL, "%s", m);
    ck_assert_int_eq(ks_diff("{\"a\":" H("{}") "}", "{\"a\":" Z("[]") "}", m,
                             sizeof m), 1);
    ck_assert_msg(strstr(m, "type: expected hash, got zset") != NULL, "%s",
                  m);
}
END_TEST

START_TEST(keyspace_diff_names_the_field_member_or_expiry)
{
    char m[600];
    ck_assert_int_eq(ks_diff("{\"a\":" H("{\"state\":\"active\"}") "}",
                             "{\"a\":" H("{\"state\":\"pending\"}") "}", m,
                             sizeof m), 1);
    ck_assert_msg(strstr(m, "field \"state\": expected \"active\", got "
                            "\"pending\"") != NULL, "%s", m);
    ck_assert_int_eq(ks_diff("{\"a\":" H("{\"x\":\"1\"}") "}",
                             "{\"a\":" H("{\"x\":\"1\",\"y\":\"2\"}") "}", m,
                             sizeof m), 1);
    ck_assert_msg(strstr(m, "field \"y\": unexpected") != NULL, "%s", m);
    ck_assert_int_eq(ks_diff("{\"z\":" Z("[[\"m\",1],[\"n\",2]]") "}",
                             "{\"z\":" Z("[[\"m\",1],[\"n\",3]]") "}", m,
                             sizeof m), 1);
    ck_assert_msg(strstr(m, "zset[1]: expected [\"n\",2], got [\"n\",3]") !=
                      NULL, "%s", m);
    ck_assert_int_eq(ks_diff("{\"z\":" Z("[[\"m\",1],[\"n\",2]]") "}",
                             "{\"z\":" Z("[[\"n\",2],[\"m\",1]]") "}", m,
                             sizeof m), 1);
    ck_assert_int_eq(ks_diff("{\"l\":{\"type\":\"list\",\"value\":[\"1\"]}}",
                             "{\"l\":{\"type\":\"list\",\"value\":[\"1\","
                             "\"1\"]}}", m, sizeof m), 1);
    ck_assert_msg(strstr(m, "list[1]: unexpected \"1\"") != NULL, "%s", m);
    ck_assert_int_eq(ks_diff("{\"s\":{\"type\":\"string\",\"value\":\"v\","
                             "\"expire_at\":5}}",
                             "{\"s\":{\"type\":\"string\",\"value\":\"v\"}}",
                             m, sizeof m), 1);
    ck_assert_msg(strstr(m, "expire_at: expected 5, got (none)") != NULL, "%s",
                  m);
}
END_TEST

START_TEST(reply_diff_shows_both_values)
{
    emq_json *e = jp("[\"J\",null,1]"), *a = jp("[\"J\",\"\",1]");
    emq_json *x = jp("{\"error\":\"EMQSTALE job gone\"}");
    emq_json_buf b = { NULL, 0, 0, 0 };
    ck_assert_int_eq(emq_golden_reply_diff(e, e, &b), 0);
    ck_assert_int_eq(emq_golden_reply_diff(e, a, &b), 1);
    ck_assert_str_eq(b.p, "reply: expected [\"J\",null,1], got [\"J\",\"\",1]");
    ck_assert_int_eq(emq_golden_reply_diff(x, x, &b), 0);
    emq_json_buf_free(&b);
    emq_json_free(e);
    emq_json_free(a);
    emq_json_free(x);
}
END_TEST

START_TEST(scores_render_as_integers_when_integral)
{
    emq_json *a = emq_golden_score(9007199254740992.0);
    emq_json *b = emq_golden_score(-1.0);
    emq_json *c = emq_golden_score(0.5);
    ck_assert_int_eq(a->type, EMQ_JSON_INT);
    ck_assert_int_eq(a->i, INT64_C(9007199254740992));
    ck_assert_int_eq(b->i, -1);
    ck_assert_int_eq(c->type, EMQ_JSON_FLOAT);
    emq_json_free(a);
    emq_json_free(b);
    emq_json_free(c);
}
END_TEST

/* ----------------------------------------------------------- the driver */

/* A toy executor: "put" stores args.v under args.k (reply 1), "now" replies
 * the clock, anything else is unsupported. */
typedef struct toy {
    emq_json *ks;
    int64_t now;
    int begun, ended;
    char verb[32]; /* the outcome's verb, copied before the case is freed */
} toy;

static int toy_begin(void *ctx, const emq_golden_case *c, emq_json_buf *err)
{
    toy *t = ctx;
    (void)c;
    (void)err;
    t->ks = emq_json_new_object();
    t->begun++;
    return 0;
}

static void toy_clock(void *ctx, int64_t now) { ((toy *)ctx)->now = now; }

static int toy_step(void *ctx, const emq_golden_step *s,
                    emq_golden_result *res, emq_json_buf *err)
{
    toy *t = ctx;
    const char *k, *v;
    size_t kl, vl;
    if (strcmp(s->verb, "put") == 0 &&
        emq_golden_arg_str(s, "k", &k, &kl) == 0 &&
        emq_golden_arg_str(s, "v", &v, &vl) == 0) {
        emq_golden_ks_add(t->ks, k, kl, "string", emq_json_new_str(v, vl), -1);
        res->reply = emq_json_new_int(1);
        return 0;
    }
    if (strcmp(s->verb, "now") == 0) {
        res->reply = emq_json_new_int(t->now);
        return 0;
    }
    emq_json_buf_puts(err, "unsupported", 11);
    return -1;
}

static int toy_dump(void *ctx, emq_json **ks, emq_json_buf *err)
{
    (void)err;
    *ks = emq_json_dup(((toy *)ctx)->ks);
    return *ks ? 0 : -1;
}

static void toy_end(void *ctx)
{
    toy *t = ctx;
    emq_json_free(t->ks);
    t->ks = NULL;
    t->ended++;
}

static int run_toy(const char *text, emq_golden_outcome *out, toy *t)
{
    emq_golden_exec ex = { "toy", t, toy_begin, toy_clock, toy_step,
                           toy_dump, toy_end };
    emq_golden_file *f;
    emq_golden_case *c = first_case(text, &f);
    int rc = emq_golden_run_case(&ex, c, out);
    snprintf(t->verb, sizeof t->verb, "%s", out->verb ? out->verb : "");
    emq_golden_case_free(c);
    emq_golden_close(f);
    return rc;
}

#define STEP(n, verb, args, now, reply, ks)                                  \
    "{\"case\":\"t\",\"step\":" #n ",\"verb\":\"" verb "\",\"args\":" args   \
    ",\"now\":" now ",\"reply\":" reply ",\"keyspace\":" ks "}\n"
#define KS1 "{\"k\":{\"type\":\"string\",\"value\":{\"b64\":\"AA==\"}}}"

START_TEST(driver_passes_a_matching_case_with_the_steps_clock)
{
    toy t = { NULL, 0, 0, 0, "" };
    emq_golden_outcome out;
    int rc = run_toy(STEP(1, "now", "{}", "100", "100", "{}")
                     STEP(2, "put", "{\"k\":\"k\",\"v\":{\"b64\":\"AA==\"}}",
                          "100", "1", KS1)
                     STEP(3, "now", "{}", "160", "160", KS1), &out, &t);
    ck_assert_msg(rc == 0, "%s", out.msg.p ? out.msg.p : "");
    ck_assert(out.passed);
    ck_assert_int_eq(t.now, 160);
    ck_assert_int_eq(t.begun, 1);
    ck_assert_int_eq(t.ended, 1);
    emq_json_buf_free(&out.msg);
}
END_TEST

START_TEST(driver_stops_at_the_first_reply_mismatch)
{
    toy t = { NULL, 0, 0, 0, "" };
    emq_golden_outcome out;
    int rc = run_toy(STEP(1, "now", "{}", "100", "100", "{}")
                     STEP(2, "now", "{}", "150", "151", "{}")
                     STEP(3, "now", "{}", "200", "0", "{}"), &out, &t);
    ck_assert_int_eq(rc, 1);
    ck_assert(!out.passed);
    ck_assert_int_eq(out.step, 2);
    ck_assert_str_eq(t.verb, "now");
    ck_assert_str_eq(out.msg.p, "reply: expected 151, got 150");
    ck_assert_int_eq(t.ended, 1);
    emq_json_buf_free(&out.msg);
}
END_TEST

START_TEST(driver_reports_a_keyspace_mismatch_and_executor_failures)
{
    toy t = { NULL, 0, 0, 0, "" };
    emq_golden_outcome out;
    int rc = run_toy(STEP(1, "put", "{\"k\":\"k\",\"v\":\"x\"}", "1", "1", KS1),
                     &out, &t);
    ck_assert_int_eq(rc, 1);
    ck_assert_int_eq(out.step, 1);
    ck_assert_msg(strstr(out.msg.p, "keyspace: key \"k\" (string): expected "
                                    "{\"b64\":\"AA==\"}, got \"x\"") != NULL,
                  "%s", out.msg.p);
    emq_json_buf_free(&out.msg);
    rc = run_toy(STEP(1, "fly", "{}", "1", "1", "{}"), &out, &t);
    ck_assert_int_eq(rc, -1);
    ck_assert_str_eq(out.msg.p, "executor toy: unsupported");
    ck_assert_int_eq(t.ended, 2);
    emq_json_buf_free(&out.msg);
}
END_TEST

Suite *suite_golden(void)
{
    Suite *s = suite_create("golden");
    TCase *m = tcase_create("model");
    TCase *c = tcase_create("compare");
    TCase *d = tcase_create("driver");

    tcase_add_test(m, lines_group_into_cases_in_file_order);
    tcase_add_test(m, byte_strings_decode_in_args_replies_and_keyspaces);
    tcase_add_test(m, symbolic_times_evaluate_against_the_named_step);
    tcase_add_test(m, map_replies_keep_their_names);
    tcase_add_loop_test(m, malformed_traces_are_load_errors_naming_the_fault,
                        0, (int)(sizeof bad_traces / sizeof *bad_traces));
    tcase_add_test(m, a_trace_without_a_final_newline_loads);
    suite_add_tcase(s, m);

    tcase_add_test(c, equal_keyspaces_compare_equal_in_any_member_order);
    tcase_add_test(c, keyspace_diff_names_the_first_differing_key);
    tcase_add_test(c, keyspace_diff_names_the_field_member_or_expiry);
    tcase_add_test(c, reply_diff_shows_both_values);
    tcase_add_test(c, scores_render_as_integers_when_integral);
    suite_add_tcase(s, c);

    tcase_add_test(d, driver_passes_a_matching_case_with_the_steps_clock);
    tcase_add_test(d, driver_stops_at_the_first_reply_mismatch);
    tcase_add_test(d, driver_reports_a_keyspace_mismatch_and_executor_failures);
    suite_add_tcase(s, d);
    return s;
}
