/*
 * test_remote.c — Check suite for remote/: emq_push, emq_pull and
 * emq_verify over the transport interface, against the in-memory server of
 * tests/fakeserver.h (no network, no sleeping), and against a fake cluster
 * of three such nodes whose slot map changes in the middle of a push. What
 * a real redis-server does with the same calls is tests/redis_transfer.sh's,
 * what a real cluster does tests/redis_cluster_transfer.sh's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>

#include "emqlite.h"
#include "emqlite_remote.h"
#include "db.h"
#include "fakeserver.h"
#include "resp.h"
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
    ck_assert_int_eq(emq_queue_pause(db, "other"), EMQ_OK);
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

/* ---------------------------------------------------------------- tests */

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
    const char *v3[] = { "SET", "{emq}:version", "echomq:2.0.0" };
    const char *q[] = { "ZADD", "emq:{x}:pending", "0", "JOB00000000001" };
    fake_cmd(&f, 3, v3);
    fake_cmd(&f, 4, q);
    emq_remote *r = remote_of(&f);
    ck_assert_int_eq(emq_push(db, r, NULL, &pr), EMQ_EWIRE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "'echomq:2.0.0'"));
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

START_TEST(pull_refuses_a_held_queue_an_unreadable_stream_and_what_check_rejects)
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
    /* a stream on the server is read by XINFO STREAM FULL (the fake answers
     * TYPE for it but holds no stream): its refusal names the key, and
     * nothing is applied (tests/stream_roundtrip.sh pulls real streams) */
    f.stream_key = "emq:{mail}:stream:events";
    ck_assert_int_eq(emq_digest(back, NULL, &s0), EMQ_OK);
    int prc = emq_pull(back, r, NULL, &lr);
    ck_assert_msg(prc == EMQ_EREMOTE, "%d %s", prc, emq_errmsg(back));
    ck_assert_ptr_nonnull(strstr(emq_errmsg(back),
                                 "(key emq:{mail}:stream:events)"));
    ck_assert_int_eq(emq_digest(back, NULL, &s1), EMQ_OK);
    ck_assert_uint_eq(s0.digest, s1.digest);
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

/* ------------------------------------------------------------ clusters */

/* The fixture plus queue "c": mail on node 0 (slot 4247), c on node 1
 * (7365, beside {emq}:version's 9051), other on node 2 (11361). */
static emq_db *cluster_fixture(void)
{
    emq_db *db = fixture();
    for (int i = 10; i < 14; i++)
        ck_assert_int_eq(emq_enqueue(db, "c", jid(i), "c-job", 5),
                         EMQ_ENQUEUED);
    return db;
}

#define SLOT_MAIL 4247u

/* A remote on node 0 of the fake cluster, made a cluster's entry. */
static emq_remote *cluster_of(fake_cluster *fc)
{
    emq_remote *r = NULL;
    char err[300] = "";
    ck_assert_int_eq(emq_remote_open(&fake_transport, &fc->node[0],
                                     fc->addr[0], &r, err, sizeof err),
                     EMQ_OK);
    int rc = emq_remote_cluster(r, EMQ_CLUSTER_ON, fake_cluster_dial, fc,
                                err, sizeof err);
    ck_assert_msg(rc == EMQ_OK, "cluster %d: %s", rc, err);
    return r;
}

typedef struct owncheck {
    const fake_cluster *fc;
    int node;
    long wrong;
} owncheck;

static int on_owned(void *ctx, const unsigned char *k, size_t n, int type)
{
    owncheck *o = ctx;
    (void)type;
    o->wrong += o->fc->owner[emq_slot(k, n)] != o->node;
    return 0;
}

/* Every key of every node sits on its slot's owner. */
static void assert_keys_where_they_belong(fake_cluster *fc)
{
    for (size_t i = 0; i < fc->n; i++) {
        owncheck o = {fc, (int)i, 0};
        emq_store_begin(fc->node[i].st, 0, fc->node[i].now);
        emq_key_scan(fc->node[i].st, "", 0, on_owned, &o);
        emq_store_commit(fc->node[i].st);
        ck_assert_msg(o.wrong == 0, "node %zu holds %ld keys of other "
                      "nodes' slots", i, o.wrong);
    }
}

/* Pull the cluster into a new file: the same export bytes as db's. */
static void assert_pulls_back_identical(emq_db *db, emq_remote *r)
{
    emq_db *back = open_db();
    emq_pull_report lr;
    emq_buf a = {0}, b = {0};
    int rc = emq_pull(back, r, NULL, &lr);
    ck_assert_msg(rc == EMQ_OK, "pull %d: %s", rc, emq_errmsg(back));
    ck_assert(lr.match);
    ck_assert(lr.cluster);
    export_of(db, &a);
    export_of(back, &b);
    ck_assert_uint_eq(a.len, b.len);
    ck_assert_mem_eq(a.p, b.p, a.len);
    emq_pull_report_free(&lr);
    emq_buf_free(&a);
    emq_buf_free(&b);
    emq_close(back);
}

static void cluster_done(emq_db *db, emq_remote *r, fake_cluster *fc)
{
    emq_remote_close(r);
    fake_cluster_free(fc);
    emq_close(db);
}

/* Push with `o`; then every queue's figures match, every key sits on its
 * slot's owner and verify finds the keyspaces equal. */
static void push_checked(emq_db *db, emq_remote *r, fake_cluster *fc,
                         const emq_push_options *o, emq_push_report *pr)
{
    emq_verify_report vr;
    int rc = emq_push(db, r, o, pr);
    ck_assert_msg(rc == EMQ_OK, "push %d: %s", rc, emq_errmsg(db));
    ck_assert(pr->match);
    assert_keys_where_they_belong(fc);
    ck_assert(verify_equal(db, r, &vr));
    emq_verify_report_free(&vr);
}

START_TEST(cluster_push_sends_each_queue_to_its_slot_s_primary)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    emq_verify_report vr;
    long in;
    fake_cluster_init(&fc, 3, T0);
    emq_remote *r = cluster_of(&fc);
    ck_assert_uint_eq(emq_remote_nodes(r), 3);
    ck_assert_int_eq(fc.dials, 2); /* node 0 is the seed's connection */
    push_ok(db, r, 0, &pr);
    ck_assert(pr.match && pr.cluster);
    ck_assert_uint_eq(pr.n_nodes, 3);
    uint64_t keys = 0;
    for (size_t i = 0; i < 3; i++) {
        ck_assert_str_eq(pr.nodes[i].node, fc.addr[i]);
        ck_assert_uint_gt(pr.nodes[i].keys, 0);
        ck_assert_uint_gt(pr.nodes[i].bytes_out, 0);
        ck_assert_uint_eq(pr.nodes[i].moved + pr.nodes[i].asked, 0);
        keys += pr.nodes[i].keys;
    }
    ck_assert_uint_eq(keys, pr.keys);
    assert_keys_where_they_belong(&fc);
    fake_node_keys(&fc.node[1], 9051, &in);
    ck_assert_int_eq(in, 1); /* the fence, on its slot's node */
    fake_node_keys(&fc.node[0], SLOT_MAIL, &in);
    ck_assert_int_eq(in, (long)pr.nodes[0].keys);
    ck_assert(verify_equal(db, r, &vr));
    ck_assert(vr.cluster);
    ck_assert_uint_eq(vr.n_nodes, 3);
    ck_assert_uint_eq(vr.server_keys, pr.keys);
    emq_verify_report_free(&vr);
    assert_pulls_back_identical(db, r);
    /* by slot: each queue a MULTI/EXEC on its node */
    emq_push_options o;
    emq_push_report_free(&pr);
    emq_push_options_init(&o);
    o.replace = 1;
    o.by_slot = 1;
    push_checked(db, r, &fc, &o, &pr);
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
}
END_TEST

START_TEST(the_map_comes_from_cluster_slots_where_shards_is_unknown)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    fake_cluster_init(&fc, 3, T0);
    fc.no_shards = 1;
    fc.blank_host = 1; /* "" hosts: the seed's host is taken */
    emq_remote *r = cluster_of(&fc);
    ck_assert_uint_eq(emq_remote_nodes(r), 3);
    push_checked(db, r, &fc, NULL, &pr);
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
}
END_TEST

START_TEST(a_server_without_cluster_support_stays_one_server)
{
    emq_db *db = fixture();
    fake f;
    emq_push_report pr;
    char err[300];
    fake_init(&f, T0);
    emq_remote *r = remote_of(&f);
    ck_assert_int_eq(emq_remote_cluster(r, EMQ_CLUSTER_ON, fake_cluster_dial,
                                        NULL, err, sizeof err), EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not a cluster node"));
    ck_assert_int_eq(emq_remote_cluster(r, EMQ_CLUSTER_AUTO,
                                        fake_cluster_dial, NULL, err,
                                        sizeof err), EMQ_OK);
    ck_assert_uint_eq(emq_remote_nodes(r), 0);
    push_ok(db, r, 0, &pr);
    ck_assert(pr.match && !pr.cluster);
    ck_assert_uint_eq(pr.n_nodes, 1);
    ck_assert_str_eq(pr.nodes[0].node, "fake:1");
    ck_assert_uint_eq(pr.nodes[0].keys, pr.keys);
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_free(&f);
    /* a cluster node talked to as one server: its MOVED is refused */
    fake_cluster fc;
    fake_cluster_init(&fc, 3, T0);
    ck_assert_int_eq(emq_remote_open(&fake_transport, &fc.node[0],
                                     fc.addr[0], &r, err, sizeof err),
                     EMQ_OK);
    ck_assert_int_eq(emq_push(db, r, NULL, &pr), EMQ_EREMOTE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "is a cluster node"));
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
}
END_TEST

START_TEST(the_fence_is_read_and_claimed_on_its_slot_s_node)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    long in;
    fake_cluster_init(&fc, 3, T0);
    const char *v3[] = { "SET", "{emq}:version", "echomq:2.0.0" };
    fake_cmd(&fc.node[1], 3, v3);
    emq_remote *r = cluster_of(&fc);
    ck_assert_int_eq(emq_push(db, r, NULL, &pr), EMQ_EWIRE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "fake:7001 holds"));
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(fake_node_keys(&fc.node[i], 0, NULL), i == 1);
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_cluster_free(&fc);
    /* absent: claimed there, and nowhere else */
    fake_cluster_init(&fc, 3, T0);
    r = cluster_of(&fc);
    const char *only[] = { "mail" };
    emq_push_options o;
    emq_push_options_init(&o);
    o.queues = only;
    o.n_queues = 1;
    ck_assert_int_eq(emq_push(db, r, &o, &pr), EMQ_OK);
    fake_node_keys(&fc.node[1], 9051, &in);
    ck_assert_int_eq(in, 1);
    ck_assert_int_eq(fake_node_keys(&fc.node[1], 0, NULL), 1);
    ck_assert_int_eq(fake_node_keys(&fc.node[2], 0, NULL), 0);
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
}
END_TEST

/* The slot of queue mail moves from node 0 to node 1 while the push
 * streams: once node 0 holds a few of its keys the move starts and those
 * keys migrate (the rest must follow ASK); once a key has reached node 1
 * through ASK the move ends (the rest must follow MOVED). Runs before
 * every command, so the map changes with commands in flight; the push
 * settles every 7 commands so that the move ends before mail's last key
 * is sent. */
typedef struct mover {
    int state;
    long moved_keys;
    int waits;
} mover;

static void move_mid_push(fake_cluster *fc, void *ctx, long total)
{
    mover *m = ctx;
    long in = 0;
    (void)total;
    if (m->state == 0) {
        fake_node_keys(&fc->node[0], SLOT_MAIL, &in);
        if (in >= 5) {
            fake_slot_begin_move(fc, SLOT_MAIL, 1);
            fake_slot_move_keys(fc, SLOT_MAIL);
            fake_node_keys(&fc->node[1], SLOT_MAIL, &m->moved_keys);
            m->state = 1;
        }
    } else if (m->state == 1) {
        fake_node_keys(&fc->node[1], SLOT_MAIL, &in);
        if (in > m->moved_keys) {
            fake_slot_end_move(fc, SLOT_MAIL);
            m->state = 2;
        }
    }
}

START_TEST(push_follows_ask_then_moved_while_a_slot_moves)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    mover m = {0, 0, 0};
    long in;
    emq_push_options o;
    fake_cluster_init(&fc, 3, T0);
    emq_remote *r = cluster_of(&fc);
    fc.hook = move_mid_push;
    fc.hook_ctx = &m;
    emq_push_options_init(&o);
    o.checkpoint_every = 7;
    push_checked(db, r, &fc, &o, &pr); /* nothing lost, nothing twice */
    fc.hook = NULL;
    ck_assert_int_eq(m.state, 2);
    ck_assert_uint_gt(pr.asked, 0);
    ck_assert_uint_gt(pr.moved, 0);
    ck_assert_uint_eq(pr.nodes[0].asked, pr.asked); /* node 0 sent them */
    ck_assert_uint_eq(pr.nodes[0].moved, pr.moved);
    fake_node_keys(&fc.node[0], SLOT_MAIL, &in);
    ck_assert_int_eq(in, 0);
    assert_pulls_back_identical(db, r);
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
}
END_TEST

/* By slot: the move starts while mail's MULTI is open on node 0, so the
 * block's EXEC aborts (ASK); on node 1 after ASKING its EXEC of several
 * new keys is TRYAGAIN until the move ends — in the push's wait, where a
 * test stands for the time the resharding takes. */
static void move_in_block(fake_cluster *fc, void *ctx, long total)
{
    mover *m = ctx;
    (void)total;
    if (m->state == 0 && fc->node[0].multi && fc->node[0].nqueued >= 3) {
        fake_slot_begin_move(fc, SLOT_MAIL, 1);
        m->state = 1;
    }
}

static void end_move_on_wait(void *ctx, unsigned ms)
{
    fake_cluster *fc = ctx;
    (void)ms;
    if (fc->moving[SLOT_MAIL] >= 0 && ++((mover *)fc->hook_ctx)->waits == 2)
        fake_slot_end_move(fc, SLOT_MAIL);
}

/* The number of commands of a by-slot export up to the EXEC of the block
 * of `slot` (counted as a push counts them). */
static uint64_t exec_of(emq_db *db, unsigned slot)
{
    emq_export_options eo;
    emq_transfer_summary sum;
    emq_buf b = {0};
    emq_resp_cmd c;
    uint64_t n = 0, at_exec = 0;
    size_t at = 0;
    int in = 0;
    memset(&c, 0, sizeof c);
    emq_export_options_init(&eo);
    eo.by_slot = 1;
    ck_assert_int_eq(emq_export(db, &eo, to_buf, &b, &sum), EMQ_OK);
    while (!at_exec && at < b.len &&
           emq_resp_parse(b.p + at, b.len - at, at, &c, NULL) == EMQ_OK) {
        n++;
        at += c.size;
        if (c.argc > 1 && emq_slot(c.argv[1], c.lens[1]) == slot)
            in = 1;
        else if (c.argc == 1 && c.lens[0] == 4 && in)
            at_exec = n;
    }
    emq_resp_cmd_free(&c);
    emq_buf_free(&b);
    return at_exec;
}

/*
 * Push the fixture by slot while mail's slot moves (move_in_block,
 * end_move_on_wait): the block follows ASK, waits out TRYAGAIN twice and
 * follows MOVED. With `in_next_block` the push settles first inside the
 * next block, queue c's on node 1, so that mail's block comes back (ASK)
 * while c's is open there: it must wait for c's EXEC.
 */
static void push_block_during_move(int in_next_block)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    emq_push_options o;
    mover m = {0, 0, 0};
    fake_cluster_init(&fc, 3, T0);
    emq_remote *r = cluster_of(&fc);
    fc.hook = move_in_block;
    fc.hook_ctx = &m;
    emq_push_options_init(&o);
    o.by_slot = 1;
    o.wait = end_move_on_wait;
    o.wait_ctx = &fc;
    if (in_next_block) {
        o.checkpoint_every = exec_of(db, SLOT_MAIL) + 2;
        ck_assert_uint_gt(o.checkpoint_every, 2);
        ck_assert_int_eq(fake_cluster_node_of(&fc, "emq:{c}:pending"), 1);
    }
    push_checked(db, r, &fc, &o, &pr);
    fc.hook = NULL;
    ck_assert_uint_gt(pr.asked, 0);
    ck_assert_uint_eq(pr.tryagain, 2);
    ck_assert_uint_gt(pr.moved, 0);
    ck_assert_int_eq(fc.owner[SLOT_MAIL], 1);
    assert_pulls_back_identical(db, r);
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
}

START_TEST(a_block_follows_ask_waits_out_tryagain_and_follows_moved)
{
    push_block_during_move(0);
}
END_TEST

START_TEST(a_block_redirected_to_a_node_with_an_open_block_waits_for_it)
{
    push_block_during_move(1);
}
END_TEST

static void never_ends(void *ctx, unsigned ms)
{
    (*(int *)ctx)++;
    (void)ms;
}

START_TEST(a_move_that_never_ends_fails_the_push_after_its_waits)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    emq_push_options o;
    int waits = 0;
    fake_cluster_init(&fc, 3, T0);
    emq_remote *r = cluster_of(&fc);
    fake_slot_begin_move(&fc, SLOT_MAIL, 1);
    emq_push_options_init(&o);
    o.by_slot = 1;
    o.wait = never_ends;
    o.wait_ctx = &waits;
    ck_assert_int_eq(emq_push(db, r, &o, &pr), EMQ_EREMOTE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "TRYAGAIN for slot 4247"));
    ck_assert_int_eq(waits, 60);
    emq_push_report_free(&pr);
    /* the remote is usable again: the move ends, the push goes through */
    fake_slot_end_move(&fc, SLOT_MAIL);
    emq_push_options_init(&o);
    o.replace = 1;
    push_checked(db, r, &fc, &o, &pr);
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
}
END_TEST

START_TEST(verify_and_pull_follow_ask_and_moved_for_moved_keys)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    emq_verify_report vr;
    fake_cluster_init(&fc, 3, T0);
    emq_remote *r = cluster_of(&fc);
    push_ok(db, r, 0, &pr);
    emq_push_report_free(&pr);
    fake_slot_begin_move(&fc, SLOT_MAIL, 1);
    fake_slot_move_keys(&fc, SLOT_MAIL); /* all on node 1, still node 0's */
    ck_assert(verify_equal(db, r, &vr));
    ck_assert_uint_gt(vr.nodes[0].asked, 0);
    emq_verify_report_free(&vr);
    assert_pulls_back_identical(db, r);
    fake_slot_end_move(&fc, SLOT_MAIL);
    ck_assert(verify_equal(db, r, &vr));
    ck_assert_uint_gt(vr.nodes[0].moved, 0);
    emq_verify_report_free(&vr);
    ck_assert(verify_equal(db, r, &vr)); /* the map was read again */
    ck_assert_uint_eq(vr.nodes[0].moved, 0);
    emq_verify_report_free(&vr);
    cluster_done(db, r, &fc);
}
END_TEST

START_TEST(a_slot_no_node_serves_or_a_lost_node_fails_the_push)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    fake_cluster_init(&fc, 3, T0);
    fc.owner[SLOT_MAIL] = -1;
    emq_remote *r = cluster_of(&fc);
    ck_assert_int_eq(emq_push(db, r, NULL, &pr), EMQ_EREMOTE);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "serves slot 4247"));
    emq_push_report_free(&pr);
    emq_remote_close(r);
    fake_cluster_free(&fc);
    fake_cluster_init(&fc, 3, T0);
    r = cluster_of(&fc);
    fc.node[2].fail_after = fc.node[2].commands + 3;
    ck_assert_int_eq(emq_push(db, r, NULL, &pr), EMQ_EIO);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "fake:7002: "));
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
}
END_TEST

static void count_checkpoint(void *ctx, uint64_t commands)
{
    uint64_t *c = ctx;
    ck_assert_uint_ge(commands, c[0] + 10);
    c[0] = commands;
    c[1]++;
}

START_TEST(checkpoints_come_every_n_commands_with_nothing_in_flight)
{
    emq_db *db = cluster_fixture();
    fake_cluster fc;
    emq_push_report pr;
    emq_push_options o;
    uint64_t seen[2] = {0, 0};
    fake_cluster_init(&fc, 3, T0);
    emq_remote *r = cluster_of(&fc);
    emq_push_options_init(&o);
    o.checkpoint_every = 10;
    o.checkpoint = count_checkpoint;
    o.checkpoint_ctx = seen;
    ck_assert_int_eq(emq_push(db, r, &o, &pr), EMQ_OK);
    ck_assert_uint_eq(seen[1], pr.commands / 10);
    emq_push_report_free(&pr);
    cluster_done(db, r, &fc);
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
    tcase_add_test(tc,
                   pull_refuses_a_held_queue_an_unreadable_stream_and_what_check_rejects);
    tcase_add_test(tc, field_expiries_travel_or_are_dropped_by_the_server_s_commands);
    tcase_add_test(tc, by_slot_push_wraps_each_queue_in_multi_exec);
    suite_add_tcase(s, tc);
    TCase *cl = tcase_create("cluster");
    tcase_add_test(cl, cluster_push_sends_each_queue_to_its_slot_s_primary);
    tcase_add_test(cl, the_map_comes_from_cluster_slots_where_shards_is_unknown);
    tcase_add_test(cl, a_server_without_cluster_support_stays_one_server);
    tcase_add_test(cl, the_fence_is_read_and_claimed_on_its_slot_s_node);
    tcase_add_test(cl, push_follows_ask_then_moved_while_a_slot_moves);
    tcase_add_test(cl, a_block_follows_ask_waits_out_tryagain_and_follows_moved);
    tcase_add_test(cl, a_block_redirected_to_a_node_with_an_open_block_waits_for_it);
    tcase_add_test(cl, a_move_that_never_ends_fails_the_push_after_its_waits);
    tcase_add_test(cl, verify_and_pull_follow_ask_and_moved_for_moved_keys);
    tcase_add_test(cl, a_slot_no_node_serves_or_a_lost_node_fails_the_push);
    tcase_add_test(cl, checkpoints_come_every_n_commands_with_nothing_in_flight);
    suite_add_tcase(s, cl);
    return s;
}
