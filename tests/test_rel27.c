/*
 * test_rel27.c — Check suite for the third reliability pass (issue 27):
 * states that import and check let through and that stalled a queue for
 * good.
 *
 *   item 8:  a malformed flow outbox entry — import and check refuse it; a
 *            sweep that meets one sets it aside, says so, and delivers the
 *            entries behind it;
 *   item 12: a repeat record whose every_ms is not an integer > 0 (it would
 *            stay due forever, and 100 of them starve every later
 *            registration) — import and check refuse it;
 *   item 17: a stream name above 255 bytes (the API's limit) — import
 *            refuses it.
 *
 * Hand-written streams import in the raw format (no export end record).
 * The clock is injected; nothing sleeps.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emqlite.h"
#include "emqlite_protocol.h"
#include "db.h"
#include "resp.h"
#include "store.h"
#include "relutil.h"
#include "suites.h"

#define T0 INT64_C(1767225600000)

static emq_db *topen(rel_clock *c)
{
    emq_options o;
    emq_db *db = NULL;
    c->now = T0;
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = c;
    ck_assert_int_eq(emq_open(":memory:", &o, &db), EMQ_OK);
    return db;
}

/* Append one RESP command of (pointer, length) words. */
static void cmdn(emq_buf *s, int argc, const emq_bytes *argv)
{
    ck_assert_int_eq(emq_resp_write_cmd(s, (size_t)argc, argv), EMQ_OK);
}

static void stamped(emq_buf *s)
{
    emq_bytes v[3] = {{"SET", 3}, {"{emq}:version", 13},
                      {"echomq:4.0.0", 12}};
    s->len = 0;
    cmdn(s, 3, v);
}

typedef struct seen {
    const char *code;
    size_t violations, hits;
} seen;

static void on_finding(void *ctx, const emq_finding *f)
{
    seen *s = ctx;
    if (f->severity != EMQ_CHECK_VIOLATION)
        return;
    s->violations++;
    s->hits += strcmp(f->code, s->code) == 0;
}

/* Refused by a checked import with `code`, nothing applied; taken by an
 * unchecked one, after which check reports exactly that violation. */
static void refused_then_checked(const emq_buf *s, const char *code)
{
    rel_clock c;
    emq_db *db = topen(&c);
    emq_transfer_summary before, after;
    char want[80];
    ck_assert_int_eq(emq_digest(db, NULL, &before), EMQ_OK);
    int rc = rel_import_raw(db, s->p, s->len, NULL);
    ck_assert_msg(rc == EMQ_EPROTO, "%s: import %d (%s)", code, rc,
                  emq_errmsg(db));
    snprintf(want, sizeof want, " %s violation on ", code);
    ck_assert_msg(strstr(emq_errmsg(db), want) != NULL, "'%s' lacks '%s'",
                  emq_errmsg(db), want);
    ck_assert_int_eq(emq_digest(db, NULL, &after), EMQ_OK);
    ck_assert_uint_eq(after.digest, before.digest);
    /* a forensic copy takes it; check then names it */
    emq_import_options o;
    emq_importer *im;
    emq_import_options_init(&o);
    o.unchecked = 1;
    o.format = EMQ_IMPORT_RAW;
    ck_assert_int_eq(emq_import_begin(db, &o, &im), EMQ_OK);
    ck_assert_int_eq(emq_import_feed(im, s->p, s->len), EMQ_OK);
    ck_assert_int_eq(emq_import_finish(im, NULL), EMQ_OK);
    seen k = {code, 0, 0};
    ck_assert_int_eq(emq_check(db, on_finding, &k, NULL), EMQ_ECORRUPT);
    ck_assert_msg(k.hits == 1 && k.violations == 1,
                  "%s: %zu violations, %zu of that code", code, k.violations,
                  k.hits);
    emq_close(db);
}

/* ------------------------------------------------------------- item 8 */

#define PARENT "JOB00000000001"
#define CHILD "JOB00000000002"
#define CHILD2 "JOB00000000003"

/* A COMPLETE outbox entry: pq NUL parent NUL child NUL result. */
static size_t complete_entry(char *out, const char *pq, const char *parent,
                             const char *child, const char *result)
{
    size_t n = 0;
    const char *parts[3] = {pq, parent, child};
    for (int i = 0; i < 3; i++) {
        memcpy(out + n, parts[i], strlen(parts[i]));
        n += strlen(parts[i]);
        out[n++] = '\0';
    }
    memcpy(out + n, result, strlen(result));
    return n + strlen(result);
}

START_TEST(import_and_check_refuse_a_malformed_outbox_entry)
{
    /* no NUL-separated parts; a parent that is no JOB id; a parent queue
     * that fails its gate; a FAIL entry cut short */
    char e[4][64];
    size_t n[4];
    n[0] = (size_t)snprintf(e[0], sizeof e[0], "not an entry");
    n[1] = complete_entry(e[1], "p", "nope", CHILD, "r");
    n[2] = complete_entry(e[2], "no{pe", PARENT, CHILD, "r");
    memcpy(e[3], "\0fail\0p\0" PARENT, 8 + 14);
    n[3] = 8 + 14;
    for (int i = 0; i < 4; i++) {
        emq_buf s = {0};
        stamped(&s);
        emq_bytes push[3] = {{"RPUSH", 5}, {"emq:{c}:flow:outbox", 19},
                             {e[i], n[i]}};
        cmdn(&s, 3, push);
        refused_then_checked(&s, "outbox");
        emq_buf_free(&s);
    }
    /* a well-formed one is accepted */
    emq_buf s = {0};
    char good[64];
    size_t gn = complete_entry(good, "p", PARENT, CHILD, "r");
    stamped(&s);
    emq_bytes push[3] = {{"RPUSH", 5}, {"emq:{c}:flow:outbox", 19},
                         {good, gn}};
    cmdn(&s, 3, push);
    rel_clock c;
    emq_db *db = topen(&c);
    ck_assert_msg(rel_import_raw(db, s.p, s.len, NULL) == EMQ_OK, "%s",
                  emq_errmsg(db));
    emq_close(db);
    emq_buf_free(&s);
}
END_TEST

typedef struct raw_push {
    const char *k;
    const void *v;
    size_t n;
} raw_push;

static int push_right(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    const raw_push *p = ctx;
    int64_t len;
    (void)db;
    (void)now;
    return emq_list_push(st, p->k, strlen(p->k), 1, p->v, p->n, &len);
}

static void raw_rpush(emq_db *db, const char *k, const void *v, size_t n)
{
    raw_push p = {k, v, n};
    ck_assert_int_eq(emq_db_run(db, 1, push_right, &p), EMQ_OK);
}

/* A bad entry at the head of an outbox (a raw write, an unchecked import)
 * no longer stalls the queue: the sweep sets it aside behind the others,
 * says so, and delivers the completions behind it, sweep after sweep. */
START_TEST(a_sweep_sets_a_bad_outbox_entry_aside_and_moves_on)
{
    rel_clock c;
    emq_db *db = topen(&c);
    char good[64];
    size_t gn;
    emq_sweep_counts k;
    int64_t n;
    ck_assert_int_eq(emq_flow_hold(db, "p", PARENT, "pp", 2, 2), EMQ_OK);
    raw_rpush(db, "emq:{c}:flow:outbox", "garbage", 7);
    gn = complete_entry(good, "p", PARENT, CHILD, "r1");
    raw_rpush(db, "emq:{c}:flow:outbox", good, gn);
    /* The protocol's own pass stops at the bad entry (T4.10). */
    ck_assert_int_eq(emq_flow_sweep(db, "c", 100, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    /* The sweep delivers past it and names it. */
    ck_assert_int_eq(emq_sweep(db, "c", 100, &k), EMQ_OK);
    ck_assert_int_eq(k.delivered, 1);
    ck_assert_msg(strstr(emq_errmsg(db), "set aside") != NULL &&
                  strstr(emq_errmsg(db), "emq:{c}:flow:outbox") != NULL &&
                  strstr(emq_errmsg(db), "garbage") != NULL,
                  "sweep said '%s'", emq_errmsg(db));
    /* Later completions are delivered too, every sweep. */
    for (int i = 0; i < 3; i++) {
        char child[EMQ_ID_SIZE];
        ck_assert_int_eq(emq_id_encode("JOB", (uint64_t)(100 + i), child),
                         EMQ_OK);
        gn = complete_entry(good, "p", PARENT, i == 0 ? CHILD2 : child,
                            "r2");
        raw_rpush(db, "emq:{c}:flow:outbox", good, gn);
        ck_assert_int_eq(emq_sweep(db, "c", 100, &k), EMQ_OK);
        ck_assert_int_eq(k.delivered, 1);
    }
    /* The parent got both of its children and is pending. */
    ck_assert_int_eq(emq_pending_size(db, "p", &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    /* The bad entry is kept (nothing is lost), and check names it. */
    emq_reply r = {0};
    ck_assert_int_eq(emq_flow_outbox_read(db, "c", 100, &r), EMQ_OK);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(r.elem[0].len, 7);
    emq_reply_clear(&r);
    seen s = {"outbox", 0, 0};
    ck_assert_int_eq(emq_check(db, on_finding, &s, NULL), EMQ_ECORRUPT);
    ck_assert_uint_eq(s.hits, 1);
    /* An outbox of bad entries only ends the sweep at once. */
    ck_assert_int_eq(emq_sweep(db, "c", 100, &k), EMQ_OK);
    ck_assert_int_eq(k.delivered, 0);
    emq_close(db);
}
END_TEST

/* ------------------------------------------------------------ item 12 */

START_TEST(import_and_check_refuse_a_repeat_with_no_positive_period)
{
    static const char *const bad[] = {"0", "-5", "x", "1.5", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        emq_buf s = {0};
        stamped(&s);
        emq_bytes z[4] = {{"ZADD", 4}, {"emq:{q}:repeat", 14},
                          {"1767225600000", 13}, {"r", 1}};
        emq_bytes h[6] = {{"HSET", 4}, {"emq:{q}:repeat:r", 16},
                          {"every_ms", 8}, {bad[i], strlen(bad[i])},
                          {"template", 8}, {"t", 1}};
        cmdn(&s, 4, z);
        cmdn(&s, 6, h);
        refused_then_checked(&s, "repeat");
        emq_buf_free(&s);
    }
    /* 100 zero-period records would starve a registration behind them:
     * none can be imported, and a good record imports. */
    emq_buf s = {0};
    stamped(&s);
    emq_bytes z[4] = {{"ZADD", 4}, {"emq:{q}:repeat", 14},
                      {"1767225600000", 13}, {"r", 1}};
    emq_bytes h[6] = {{"HSET", 4}, {"emq:{q}:repeat:r", 16},
                      {"every_ms", 8}, {"1000", 4}, {"template", 8},
                      {"t", 1}};
    cmdn(&s, 4, z);
    cmdn(&s, 6, h);
    rel_clock c;
    emq_db *db = topen(&c);
    ck_assert_msg(rel_import_raw(db, s.p, s.len, NULL) == EMQ_OK, "%s",
                  emq_errmsg(db));
    emq_sweep_counts k;
    ck_assert_int_eq(emq_sweep(db, "q", 100, &k), EMQ_OK);
    ck_assert_int_eq(k.fired, 1);
    emq_close(db);
    emq_buf_free(&s);
}
END_TEST

/* ------------------------------------------------------------ item 17 */

START_TEST(import_refuses_a_stream_name_above_255_bytes)
{
    for (size_t len = 255; len <= 256; len++) {
        char key[300], name[300];
        memset(name, 'a', len);
        name[len] = '\0';
        int kn = snprintf(key, sizeof key, "emq:{q}:stream:%s", name);
        emq_buf s = {0};
        stamped(&s);
        emq_bytes x[5] = {{"XADD", 4}, {key, (size_t)kn}, {"1-1", 3},
                          {"f", 1}, {"v", 1}};
        cmdn(&s, 5, x);
        rel_clock c;
        emq_db *db = topen(&c);
        int rc = rel_import_raw(db, s.p, s.len, NULL);
        if (len == 255) {
            ck_assert_msg(rc == EMQ_OK, "%s", emq_errmsg(db));
        } else {
            ck_assert_msg(rc == EMQ_EPROTO, "a %zu-byte stream name "
                          "imported", len);
            ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "grammar"));
        }
        /* the API agrees */
        int64_t n;
        rc = emq_stream_len(db, "q", name, &n);
        ck_assert_int_eq(rc < 0, len > 255);
        emq_close(db);
        emq_buf_free(&s);
    }
}
END_TEST

Suite *suite_rel27(void)
{
    Suite *s = suite_create("rel27");
    TCase *t = tcase_create("core");
    tcase_add_test(t, import_and_check_refuse_a_malformed_outbox_entry);
    tcase_add_test(t, a_sweep_sets_a_bad_outbox_entry_aside_and_moves_on);
    tcase_add_test(t, import_and_check_refuse_a_repeat_with_no_positive_period);
    tcase_add_test(t, import_refuses_a_stream_name_above_255_bytes);
    suite_add_tcase(s, t);
    return s;
}
