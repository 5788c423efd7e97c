/*
 * test_remote.c — Check suite for remote/: emq_push, emq_pull and
 * emq_verify over the transport interface, against the in-memory server of
 * tests/fakeserver.h (no network, no sleeping). What a real redis-server
 * does with the same calls is tests/redis_transfer.sh's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>

#include "emqlite.h"
#include "emqlite_remote.h"
#include "db.h"
#include "fakeserver.h"
#include "suites.h"
#include "tengine.h"

/* One clock for every handle of a test (the fake has its own). */
static tclock clk;

static emq_db *open_db(void)
{
    return topen(&clk);
}

static const char *jid(int i)
{
    static char ids[20][EMQ_ID_SIZE];
    emq_id_encode("JOB", (uint64_t)(100 + i), ids[i]);
    return ids[i];
}

/* Writes no Tier 1 verb makes: a lock field with a field TTL on the active
 * row, a lock key with a TTL, a log list, paused groups, a hash of 100
 * fields (two HSETs), a dedup key. */
static int raw(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    int64_t len;
    int done, rc = EMQ_OK;
    char key[80], f[16], v[8];
    (void)db;
    (void)ctx;
    snprintf(key, sizeof key, "emq:{mail}:job:%s", jid(3));
    emq_bytes fv[2] = {{"lock", 4}, {"1", 1}};
    rc = emq_hash_set(st, key, strlen(key), fv, 1, NULL);
    if (rc == EMQ_OK)
        rc = emq_hash_expire_at(st, key, strlen(key), "lock", 4, now + 45000,
                                &done);
    snprintf(key, sizeof key, "emq:{mail}:job:%s:lock", jid(3));
    if (rc == EMQ_OK)
        rc = emq_str_set(st, key, strlen(key), "1", 1, now + 60000, 0, NULL);
    snprintf(key, sizeof key, "emq:{mail}:job:%s:logs", jid(3));
    for (int i = 0; i < 70 && rc == EMQ_OK; i++)
        rc = emq_list_push(st, key, strlen(key), 1, i == 2 ? "b\0in" : "line",
                           i == 2 ? 4 : 4, &len);
    if (rc == EMQ_OK)
        rc = emq_sset_add(st, "emq:{mail}:paused", 17, "PRT00000000002", 14,
                          NULL);
    if (rc == EMQ_OK)
        rc = emq_sset_add(st, "emq:{mail}:paused", 17, "PRT00000000001", 14,
                          NULL);
    for (int i = 0; i < 100 && rc == EMQ_OK; i++) {
        int fn = snprintf(f, sizeof f, "PRT%011d", 99 - i);
        int vn = snprintf(v, sizeof v, "%d", i % 5 + 1);
        emq_bytes p[2] = {{f, (size_t)fn}, {v, (size_t)vn}};
        rc = emq_hash_set(st, "emq:{mail}:gweight", 18, p, 1, NULL);
    }
    if (rc == EMQ_OK)
        rc = emq_str_set(st, "emq:{mail}:de:o-1", 17, jid(1), 14, -1, 0,
                         NULL);
    return rc;
}

/* Every job set, binary payloads, counters, a paused second queue. */
static emq_db *fixture(void)
{
    emq_db *db = open_db();
    emq_job j;
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(1), "a\0b\xff", 4),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(2), "two", 3), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(3), "three", 5),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_retry(db, "mail", jid(1), 1, 0, 1, "e\0x", 3),
                     EMQ_DEAD);
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_retry(db, "mail", jid(2), 1, 5000, 5, "soon", 4),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_enqueue(db, "mail", jid(4), "four", 4), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "other", jid(5), "o", 1), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_pause(db, "other"), EMQ_OK);
    ck_assert_int_eq(emq_db_run(db, 1, raw, NULL), EMQ_OK);
    return db;
}

static int to_buf(void *ctx, const void *p, size_t n)
{
    return emq_buf_append(ctx, p, n) == EMQ_OK ? 0 : 1;
}

static void export_of(emq_db *db, emq_buf *out)
{
    emq_transfer_summary s;
    out->len = 0;
    ck_assert_int_eq(emq_export(db, NULL, to_buf, out, &s), EMQ_OK);
}

static emq_remote *remote_of(fake *f)
{
    emq_remote *r = NULL;
    char err[200];
    ck_assert_int_eq(emq_remote_open(&fake_transport, f, "fake:1", &r, err,
                                     sizeof err), EMQ_OK);
    return r;
}

static void push_ok(emq_db *db, emq_remote *r, int replace,
                    emq_push_report *rep)
{
    emq_push_options o;
    emq_push_options_init(&o);
    o.replace = replace;
    int rc = emq_push(db, r, &o, rep);
    ck_assert_msg(rc == EMQ_OK, "push %d: %s", rc, emq_errmsg(db));
}

static int verify_equal(emq_db *db, emq_remote *r, emq_verify_report *rep)
{
    ck_assert_int_eq(emq_verify(db, r, NULL, rep), EMQ_OK);
    return rep->equal;
}

/* ================================================================ tests */

START_TEST(push_then_pull_round_trips_the_export_byte_for_byte)
{
    emq_db *db = fixture(), *back = open_db();
    fake f;
    emq_push_report pr;
    emq_pull_report lr;
    emq_verify_report vr;
    emq_buf a = {0}, b = {0};
    emq_transfer_summary s;
    fake_init(&f, T0);
    emq_remote *r = remote_of(&f);
    push_ok(db, r, 0, &pr);
    ck_assert_int_eq(emq_digest(db, NULL, &s), EMQ_OK);
    ck_assert(pr.match);
    ck_assert_uint_eq(pr.keys, s.keys);
    ck_assert_uint_eq(pr.digest, s.digest);
    ck_assert_uint_eq(pr.dropped, 0);
    ck_assert_uint_eq(pr.n_queues, 2);
    ck_assert_str_eq(pr.queues[0].queue, "mail");
    ck_assert_int_eq(pr.queues[0].sent.pending, 1);
    ck_assert_int_eq(pr.queues[0].sent.active, 1);
    ck_assert_int_eq(pr.queues[0].sent.scheduled, 1);
    ck_assert_int_eq(pr.queues[0].sent.dead, 1);
    ck_assert_int_eq(pr.queues[0].sent.rows, 4);
    ck_assert(verify_equal(db, r, &vr));
    ck_assert_uint_eq(vr.server_digest, s.digest);
    emq_verify_report_free(&vr);
    /* pull back into an empty file: the same bytes (SMEMBERS came unsorted,
     * SCAN in pages of two) */
    ck_assert_int_eq(emq_pull(back, r, NULL, &lr), EMQ_OK);
    ck_assert(lr.match && lr.version_present);
    ck_assert_uint_eq(lr.digest, s.digest);
    ck_assert_uint_eq(lr.keys, s.keys);
    ck_assert_uint_eq(lr.n_queues, 2);
    export_of(db, &a);
    export_of(back, &b);
    ck_assert_uint_eq(a.len, b.len);
    ck_assert_mem_eq(a.p, b.p, a.len);
    ck_assert_int_eq(emq_check(back, NULL, NULL, NULL), EMQ_OK);
    emq_pull_report_free(&lr);
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_free(&f);
    emq_buf_free(&a);
    emq_buf_free(&b);
    emq_close(db);
    emq_close(back);
}
END_TEST

START_TEST(push_refuses_a_target_holding_the_queues_unless_replace)
{
    emq_db *db = fixture();
    fake f;
    emq_push_report pr;
    emq_verify_report vr;
    emq_push_options o;
    fake_init(&f, T0);
    emq_remote *r = remote_of(&f);
    push_ok(db, r, 0, &pr);
    emq_push_report_free(&pr);
    const char *extra[] = { "RPUSH", "emq:{mail}:wake", "1" };
    fake_cmd(&f, 3, extra);
    emq_push_options_init(&o);
    long before = f.commands;
    ck_assert_int_eq(emq_push(db, r, &o, &pr), EMQ_EEXIST);
    ck_assert_uint_gt(pr.existing, 10);
    ck_assert_ptr_nonnull(strstr(pr.first_existing, "emq:{mail}:"));
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "nothing was written"));
    ck_assert_int_lt(f.commands - before, 40); /* reads only */
    ck_assert(!verify_equal(db, r, &vr));
    ck_assert_str_eq(vr.first, "emq:{mail}:wake");
    ck_assert_str_eq(vr.reason, "only on the server");
    emq_verify_report_free(&vr);
    emq_push_report_free(&pr);
    push_ok(db, r, 1, &pr);
    ck_assert_uint_eq(pr.replaced, pr.keys); /* every key, and the extra */
    ck_assert(pr.match);
    ck_assert(verify_equal(db, r, &vr));
    emq_verify_report_free(&vr);
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_free(&f);
    emq_close(db);
}
END_TEST

START_TEST(another_wire_on_the_server_refuses_push_and_pull)
{
    emq_db *db = fixture(), *back = open_db();
    fake f;
    emq_push_report pr;
    emq_pull_report lr;
    emq_transfer_summary s0, s1;
    fake_init(&f, T0);
    const char *v3[] = { "SET", "{emq}:version", "echomq:3.0.0" };
    const char *q[] = { "ZADD", "emq:{x}:pending", "0", "JOB00000000001" };
    fake_cmd(&f, 3, v3);
    fake_cmd(&f, 4, q);
    emq_remote *r = remote_of(&f);
    ck_assert_int_eq(emq_push(db, r, NULL, &pr), EMQ_EWIRE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "'echomq:3.0.0'"));
    ck_assert_int_eq(emq_digest(back, NULL, &s0), EMQ_OK);
    ck_assert_int_eq(emq_pull(back, r, NULL, &lr), EMQ_EWIRE);
    ck_assert_int_eq(emq_digest(back, NULL, &s1), EMQ_OK);
    ck_assert_uint_eq(s0.digest, s1.digest);
    emq_push_report_free(&pr);
    emq_pull_report_free(&lr);
    emq_remote_close(r);
    fake_free(&f);
    emq_close(db);
    emq_close(back);
}
END_TEST

START_TEST(verify_names_the_first_difference_and_why)
{
    emq_db *db = fixture();
    fake f;
    emq_push_report pr;
    emq_verify_report vr;
    char row[64];
    fake_init(&f, T0);
    emq_remote *r = remote_of(&f);
    push_ok(db, r, 0, &pr);
    snprintf(row, sizeof row, "emq:{mail}:job:%s", jid(4));
    const char *weird[] = { "HSET", row, "state", "weird" };
    fake_cmd(&f, 4, weird);
    const char *del[] = { "DEL", "emq:{other}:pending" };
    fake_cmd(&f, 2, del);
    ck_assert(!verify_equal(db, r, &vr));
    ck_assert_str_eq(vr.first, row);
    ck_assert_str_eq(vr.reason, "the contents differ");
    ck_assert(vr.file_digest != vr.server_digest);
    emq_verify_report_free(&vr);
    emq_verify_options o;
    const char *other[] = { "other" };
    emq_verify_options_init(&o);
    o.queues = other;
    o.n_queues = 1;
    ck_assert_int_eq(emq_verify(db, r, &o, &vr), EMQ_OK);
    ck_assert(!vr.equal);
    ck_assert_str_eq(vr.first, "emq:{other}:pending");
    ck_assert_str_eq(vr.reason, "only in the file");
    emq_verify_report_free(&vr);
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_free(&f);
    emq_close(db);
}
END_TEST

START_TEST(a_refused_command_or_a_lost_connection_fails_the_push)
{
    emq_db *db = fixture();
    fake f;
    emq_push_report pr;
    fake_init(&f, T0);
    emq_remote *r = remote_of(&f);
    f.error_on = "ZADD";
    ck_assert_int_eq(emq_push(db, r, NULL, &pr), EMQ_EREMOTE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "ERR injected"));
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "partial copy"));
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_free(&f);
    for (long k = 1; k < 40; k += 7) {
        fake_init(&f, T0);
        r = remote_of(&f);
        f.fail_after = f.commands + k;
        ck_assert_int_eq(emq_push(db, r, NULL, &pr), EMQ_EIO);
        ck_assert_msg(strstr(emq_errmsg(db), "fake:1: ") != NULL, "k %ld: %s", k, emq_errmsg(db));
        ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "the fake connection"));
        emq_push_report_free(&pr);
        emq_remote_close(r);
        fake_free(&f);
    }
    /* the probe itself */
    fake_init(&f, T0);
    f.fail_after = 0;
    char err[200];
    ck_assert_int_eq(emq_remote_open(&fake_transport, &f, "fake:1", &r, err,
                                     sizeof err), EMQ_EIO);
    ck_assert_ptr_null(r);
    ck_assert_ptr_nonnull(strstr(err, "COMMAND INFO"));
    fake_free(&f);
    emq_close(db);
}
END_TEST

START_TEST(pull_refuses_a_held_queue_a_stream_and_what_check_rejects)
{
    emq_db *db = fixture(), *back = open_db();
    fake f;
    emq_push_report pr;
    emq_pull_report lr;
    emq_pull_options o;
    emq_transfer_summary s0, s1;
    fake_init(&f, T0);
    emq_remote *r = remote_of(&f);
    push_ok(db, r, 0, &pr);
    emq_push_report_free(&pr);
    ck_assert_int_eq(emq_pull(db, r, NULL, &lr), EMQ_EEXIST);
    ck_assert_str_eq(lr.conflict, "mail");
    emq_pull_report_free(&lr);
    /* a stream on the server: not a type emqlite files hold */
    f.stream_key = "emq:{mail}:stream:events";
    ck_assert_int_eq(emq_pull(back, r, NULL, &lr), EMQ_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(back), "is a stream"));
    emq_pull_report_free(&lr);
    f.stream_key = NULL;
    /* a state the checker rejects: refused, nothing applied; unchecked
     * takes it */
    const char *bad[] = { "ZADD", "emq:{mail}:pending", "5", jid(4) };
    fake_cmd(&f, 4, bad);
    ck_assert_int_eq(emq_digest(back, NULL, &s0), EMQ_OK);
    ck_assert_int_eq(emq_pull(back, r, NULL, &lr), EMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(back), "score violation on "
                                 "emq:{mail}:pending"));
    ck_assert_int_eq(emq_digest(back, NULL, &s1), EMQ_OK);
    ck_assert_uint_eq(s0.digest, s1.digest);
    emq_pull_report_free(&lr);
    emq_pull_options_init(&o);
    o.unchecked = 1;
    ck_assert_int_eq(emq_pull(back, r, &o, &lr), EMQ_OK);
    ck_assert(lr.match);
    ck_assert_int_eq(emq_check(back, NULL, NULL, NULL), EMQ_ECORRUPT);
    emq_pull_report_free(&lr);
    emq_remote_close(r);
    fake_free(&f);
    emq_close(db);
    emq_close(back);
}
END_TEST

START_TEST(field_expiries_travel_or_are_dropped_by_the_server_s_commands)
{
    emq_db *db = fixture(), *back = open_db();
    fake f;
    emq_push_report pr;
    emq_pull_report lr;
    fake_init(&f, T0);
    f.has[2] = 0; /* no HPEXPIREAT */
    emq_remote *r = remote_of(&f);
    push_ok(db, r, 0, &pr);
    ck_assert_uint_eq(pr.dropped, 1);
    emq_push_report_free(&pr);
    /* the server has the field without its expiry: the row differs */
    emq_verify_report vr;
    ck_assert(!verify_equal(db, r, &vr));
    ck_assert_ptr_nonnull(strstr(vr.first, jid(3)));
    emq_verify_report_free(&vr);
    emq_remote_close(r);
    fake_free(&f);
    /* a server with HPEXPIREAT and HPEXPIRETIME carries it both ways */
    fake_init(&f, T0);
    r = remote_of(&f);
    push_ok(db, r, 0, &pr);
    ck_assert_uint_eq(pr.dropped, 0);
    ck_assert_int_eq(emq_pull(back, r, NULL, &lr), EMQ_OK);
    ck_assert(lr.match);
    emq_transfer_summary a, b;
    ck_assert_int_eq(emq_digest(db, NULL, &a), EMQ_OK);
    ck_assert_int_eq(emq_digest(back, NULL, &b), EMQ_OK);
    ck_assert_uint_eq(a.digest, b.digest);
    emq_pull_report_free(&lr);
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_free(&f);
    emq_close(db);
    emq_close(back);
}
END_TEST

START_TEST(by_slot_push_wraps_each_queue_in_multi_exec)
{
    emq_db *db = fixture();
    fake f;
    emq_push_report pr;
    emq_push_options o;
    emq_verify_report vr;
    fake_init(&f, T0);
    emq_remote *r = remote_of(&f);
    emq_push_options_init(&o);
    o.by_slot = 1;
    ck_assert_int_eq(emq_push(db, r, &o, &pr), EMQ_OK);
    ck_assert(pr.match);
    ck_assert(verify_equal(db, r, &vr));
    emq_verify_report_free(&vr);
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_free(&f);
    emq_close(db);
}
END_TEST

Suite *suite_remote(void)
{
    Suite *s = suite_create("remote");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, push_then_pull_round_trips_the_export_byte_for_byte);
    tcase_add_test(tc, push_refuses_a_target_holding_the_queues_unless_replace);
    tcase_add_test(tc, another_wire_on_the_server_refuses_push_and_pull);
    tcase_add_test(tc, verify_names_the_first_difference_and_why);
    tcase_add_test(tc, a_refused_command_or_a_lost_connection_fails_the_push);
    tcase_add_test(tc, pull_refuses_a_held_queue_a_stream_and_what_check_rejects);
    tcase_add_test(tc, field_expiries_travel_or_are_dropped_by_the_server_s_commands);
    tcase_add_test(tc, by_slot_push_wraps_each_queue_in_multi_exec);
    suite_add_tcase(s, tc);
    return s;
}
