/*
 * test_hostile.c — hostile input, one table row per case: every refusal is
 * the typed error it should be, and the file's bytes are unchanged (XXH3
 * digest of the database file and its WAL before and after; a refused open
 * leaves no WAL content behind).
 *
 * Verb rows run against a live file holding pending and claimed jobs:
 * malformed ids, a well-formed non-JOB id (EMQ_EKIND, nothing written), bad
 * queue names, NULL pointers, non-positive leases, batches and delays, a
 * payload past max_payload. File rows open hostile files: another SQLite
 * application's, a truncated one, garbage, another wire identity
 * (echomq:3.0.0), a newer schema, a read-only file or handle, a directory.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "emqlite.h"
#include "db.h"
#include "keys.h"
#include "store.h"
#include "relutil.h"
#include "suites.h"

#define Q "hostile"
#define JOB1 "JOB00000000001"   /* pending */
#define JOB2 "JOB00000000002"   /* claimed, token 1 */

static char dir[256], path[300];
static emq_db *db;
static rel_clock clk;

/* ------------------------------------------------------------ file digests */

typedef struct snap {
    uint64_t main, wal;
    int wal_exists;
} snap;

static snap take(void)
{
    snap s;
    char w[320];
    int e;
    snprintf(w, sizeof w, "%s-wal", path);
    ck_assert_int_eq(rel_file_digest(path, &s.main, &e), 0);
    ck_assert_int_eq(rel_file_digest(w, &s.wal, &s.wal_exists), 0);
    return s;
}

static void same(snap a, snap b, const char *what)
{
    ck_assert_msg(a.main == b.main, "%s: the database file changed", what);
    ck_assert_msg(a.wal_exists == b.wal_exists && a.wal == b.wal,
                  "%s: the WAL changed", what);
}

static emq_options opts(void)
{
    emq_options o;
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    o.max_payload = 64;
    return o;
}

static void setup(void)
{
    emq_options o = opts();
    emq_job j;
    clk.now = 1750000000000;
    ck_assert_int_eq(rel_mkdtemp(dir, sizeof dir, "hostile"), 0);
    rel_path(path, sizeof path, dir, "h.emq");
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, Q, JOB2, "two", 3), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, Q, JOB1, "one", 3), EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, Q, 60000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, JOB1);
    emq_job_clear(&j);
    /* JOB1 claimed (token 1), JOB2 pending */
}

static void teardown(void)
{
    emq_close(db);
    db = NULL;
    rel_rmrf(dir);
}

/* ------------------------------------------------------------- verb table */

enum {
    V_ENQ, V_ENQ_AT, V_ENQ_IN, V_MANY, V_CLAIM, V_COMPLETE, V_RETRY,
    V_EXTEND, V_EXTENDS, V_PROMOTE, V_REAP, V_BROWSE, V_SIZE, V_PAUSE,
    V_RESUME, V_GET, V_STATS, V_MINT
};

#define NULLP ((size_t)-1) /* payload row: NULL pointer with length 5 */

typedef struct row {
    const char *name;
    int verb;
    const char *q, *id;
    int64_t arg;        /* lease / batch / n / delay / token           */
    size_t plen;        /* payload length, or NULLP                    */
    int nullout;        /* pass NULL for the output argument           */
    int want;
} row;

static const char q129[] =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

#define BADID(nm, idv)                                                        \
    {nm " / enqueue", V_ENQ, Q, idv, 0, 3, 0, EMQ_EID},                       \
    {nm " / enqueue_at", V_ENQ_AT, Q, idv, 0, 3, 0, EMQ_EID},                 \
    {nm " / enqueue_in", V_ENQ_IN, Q, idv, 0, 3, 0, EMQ_EID},                 \
    {nm " / enqueue_many", V_MANY, Q, idv, 0, 3, 0, EMQ_EID},                 \
    {nm " / complete", V_COMPLETE, Q, idv, 1, 0, 0, EMQ_EID},                 \
    {nm " / retry", V_RETRY, Q, idv, 1, 0, 0, EMQ_EID},                       \
    {nm " / extend_lock", V_EXTEND, Q, idv, 1000, 0, 0, EMQ_EID},             \
    {nm " / extend_locks", V_EXTENDS, Q, idv, 1000, 0, 0, EMQ_EID},           \
    {nm " / job_get", V_GET, Q, idv, 0, 0, 0, EMQ_EID}

#define BADQ(nm, qv)                                                          \
    {nm " / enqueue", V_ENQ, qv, JOB2, 0, 3, 0, EMQ_EQUEUE},                  \
    {nm " / enqueue_many", V_MANY, qv, "JOB00000000005", 0, 3, 0,             \
     EMQ_EQUEUE},                                                             \
    {nm " / claim", V_CLAIM, qv, NULL, 1000, 0, 0, EMQ_EQUEUE},               \
    {nm " / complete", V_COMPLETE, qv, JOB1, 1, 0, 0, EMQ_EQUEUE},            \
    {nm " / retry", V_RETRY, qv, JOB1, 1, 0, 0, EMQ_EQUEUE},                  \
    {nm " / extend_locks", V_EXTENDS, qv, JOB1, 1000, 0, 0, EMQ_EQUEUE},      \
    {nm " / promote", V_PROMOTE, qv, NULL, 10, 0, 0, EMQ_EQUEUE},             \
    {nm " / reap", V_REAP, qv, NULL, 0, 0, 0, EMQ_EQUEUE},                    \
    {nm " / browse", V_BROWSE, qv, NULL, 5, 0, 0, EMQ_EQUEUE},                \
    {nm " / pending_size", V_SIZE, qv, NULL, 0, 0, 0, EMQ_EQUEUE},            \
    {nm " / pause", V_PAUSE, qv, NULL, 0, 0, 0, EMQ_EQUEUE},                  \
    {nm " / resume", V_RESUME, qv, NULL, 0, 0, 0, EMQ_EQUEUE}

static const row rows[] = {
    /* malformed ids: length, alphabet, namespace case, range */
    BADID("empty id", ""),
    BADID("short id", "JOB0000000001"),
    BADID("long id", "JOB000000000001"),
    BADID("bad alphabet", "JOB0000000000!"),
    BADID("space in payload", "JOB00000 00001"),
    BADID("high byte", "JOB0000000000\xc3"),
    BADID("lowercase namespace", "job00000000001"),
    BADID("digit in namespace", "J0B00000000001"),
    BADID("payload above AzL8n0Y58m7", "JOBAzL8n0Y58m8"),
    BADID("payload zzzzzzzzzzz", "JOBzzzzzzzzzzz"),
    BADID("NULL id", NULL),
    /* a well-formed id of another namespace: refused by the transition */
    {"ORD id / enqueue", V_ENQ, Q, "ORD00000000007", 0, 3, 0, EMQ_EKIND},
    {"ORD id / enqueue_at", V_ENQ_AT, Q, "ORD00000000007", 0, 3, 0,
     EMQ_EKIND},
    {"ORD id / enqueue_in", V_ENQ_IN, Q, "ORD00000000007", 0, 3, 0,
     EMQ_EKIND},
    /* bad queue names */
    BADQ("empty queue", ""),
    BADQ("queue with braces", "{a}"),
    BADQ("queue with a closing brace", "a}b"),
    BADQ("queue with a colon", "a:b"),
    BADQ("non-ASCII queue", "caf\xc3\xa9"),
    BADQ("queue with a space", "a b"),
    BADQ("queue emq", "emq"),
    BADQ("129-byte queue", q129),
    BADQ("NULL queue", NULL),
    /* NULL pointers */
    {"NULL payload, length 5 / enqueue", V_ENQ, Q, "JOB00000000005", 0,
     NULLP, 0, EMQ_EINVAL},
    {"NULL payload, length 5 / enqueue_many", V_MANY, Q, "JOB00000000005", 0,
     NULLP, 0, EMQ_EINVAL},
    {"NULL error text, length 5 / retry", V_RETRY, Q, JOB1, 1, NULLP, 0,
     EMQ_EINVAL},
    {"NULL job / claim", V_CLAIM, Q, NULL, 1000, 0, 1, EMQ_EINVAL},
    {"NULL items / enqueue_many", V_MANY, Q, "JOB00000000005", 0, 3, 1,
     EMQ_EINVAL},
    {"NULL ids / extend_locks", V_EXTENDS, Q, JOB1, 1000, 0, 1, EMQ_EINVAL},
    {"NULL output / browse", V_BROWSE, Q, NULL, 5, 0, 1, EMQ_EINVAL},
    {"NULL output / pending_size", V_SIZE, Q, NULL, 0, 0, 1, EMQ_EINVAL},
    {"NULL output / job_get", V_GET, Q, JOB1, 0, 0, 1, EMQ_EINVAL},
    {"NULL output / stats", V_STATS, Q, NULL, 0, 0, 1, EMQ_EINVAL},
    {"NULL namespace / mint", V_MINT, NULL, NULL, 0, 0, 1, EMQ_EINVAL},
    {"lowercase namespace / mint", V_MINT, NULL, "job", 0, 0, 0, EMQ_EID},
    /* non-positive leases, batches, counts and delays */
    {"lease 0 / claim", V_CLAIM, Q, NULL, 0, 0, 0, EMQ_EINVAL},
    {"lease -1 / claim", V_CLAIM, Q, NULL, -1, 0, 0, EMQ_EINVAL},
    {"lease INT64_MIN / claim", V_CLAIM, Q, NULL, INT64_MIN, 0, 0,
     EMQ_EINVAL},
    {"lease 0 / extend_lock", V_EXTEND, Q, JOB1, 0, 0, 0, EMQ_EINVAL},
    {"lease -5 / extend_locks", V_EXTENDS, Q, JOB1, -5, 0, 0, EMQ_EINVAL},
    {"batch 0 / promote", V_PROMOTE, Q, NULL, 0, 0, 0, EMQ_EINVAL},
    {"batch -3 / promote", V_PROMOTE, Q, NULL, -3, 0, 0, EMQ_EINVAL},
    {"n 0 / browse", V_BROWSE, Q, NULL, 0, 0, 0, EMQ_EINVAL},
    {"delay -1 / enqueue_in", V_ENQ_IN, Q, "JOB00000000005", -1, 3, 0,
     EMQ_EINVAL},
    {"delay -1 / retry", V_RETRY, Q, JOB1, -1, 0, 0, EMQ_EINVAL},
    {"empty batch / enqueue_many", V_MANY, Q, "JOB00000000005", -1, 3, 0,
     EMQ_EEMPTY},
    /* max_payload is 64 on this handle */
    {"65-byte payload / enqueue", V_ENQ, Q, "JOB00000000005", 0, 65, 0,
     EMQ_ETOOBIG},
    {"65-byte payload / enqueue_at", V_ENQ_AT, Q, "JOB00000000005", 0, 65, 0,
     EMQ_ETOOBIG},
    {"65-byte payload / enqueue_many", V_MANY, Q, "JOB00000000005", 0, 65, 0,
     EMQ_ETOOBIG},
    {"65-byte error / retry", V_RETRY, Q, JOB1, 1, 65, 0, EMQ_ETOOBIG},
};
#define NROWS (sizeof rows / sizeof *rows)

static int run_row(const row *r)
{
    static const char big[128] = "payload";
    const void *p = r->plen == NULLP ? NULL : big;
    size_t plen = r->plen == NULLP ? 5 : r->plen;
    emq_job j;
    int rc;
    switch (r->verb) {
    case V_ENQ: return emq_enqueue(db, r->q, r->id, p, plen);
    case V_ENQ_AT: return emq_enqueue_at(db, r->q, r->id, p, plen, 5);
    case V_ENQ_IN: return emq_enqueue_in(db, r->q, r->id, p, plen, r->arg);
    case V_MANY: {
        emq_item it[2] = {{JOB2, "dup", 3}, {r->id, p, plen}};
        int v[2];
        return emq_enqueue_many(db, r->q, r->nullout ? NULL : it,
                                r->arg < 0 ? 0 : 2, v);
    }
    case V_CLAIM:
        rc = emq_claim(db, r->q, r->arg, r->nullout ? NULL : &j);
        if (rc == EMQ_OK) emq_job_clear(&j);
        return rc;
    case V_COMPLETE: return emq_complete(db, r->q, r->id, r->arg);
    case V_RETRY:
        return emq_retry(db, r->q, r->id, 1, r->arg < 0 ? -1 : 10, 3, p,
                         r->plen ? plen : 0);
    case V_EXTEND: return emq_extend_lock(db, r->q, r->id, 1, r->arg);
    case V_EXTENDS: {
        const char *x[1] = {r->id};
        int64_t t[1] = {1};
        int f[1];
        size_t nf;
        return emq_extend_locks(db, r->q, 1, r->nullout ? NULL : x, t,
                                r->arg, f, &nf);
    }
    case V_PROMOTE: return emq_promote(db, r->q, r->arg, NULL);
    case V_REAP: return emq_reap(db, r->q, NULL);
    case V_BROWSE: {
        char ids[8][EMQ_ID_SIZE];
        size_t n;
        return emq_browse(db, r->q, (size_t)r->arg, r->nullout ? NULL : ids,
                          &n);
    }
    case V_SIZE: {
        int64_t n;
        return emq_pending_size(db, r->q, r->nullout ? NULL : &n);
    }
    case V_PAUSE: return emq_pause(db, r->q);
    case V_RESUME: return emq_resume(db, r->q);
    case V_GET: {
        emq_field *f = NULL;
        size_t n = 0;
        rc = emq_job_get(db, r->q, r->id, r->nullout ? NULL : &f, &n);
        emq_fields_free(f, n);
        return rc;
    }
    case V_STATS: return emq_stats_get(db, r->q, NULL);
    case V_MINT: {
        char out[EMQ_ID_SIZE];
        return emq_mint(db, r->nullout ? NULL : r->id, out);
    }
    }
    return 0;
}

START_TEST(hostile_verb_input_is_refused_and_writes_nothing)
{
    const row *r = &rows[_i];
    snap before = take();
    int rc = run_row(r);
    ck_assert_msg(rc == r->want, "%s: rc %d (%s), expected %d (%s)", r->name,
                  rc, emq_strerror(rc), r->want, emq_strerror(r->want));
    ck_assert_msg(emq_errmsg(db)[0] != 0, "%s: no message", r->name);
    same(before, take(), r->name);
    /* the handle is still good and the file still clean */
    int64_t n = -1;
    ck_assert_int_eq(emq_pending_size(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
}
END_TEST

START_TEST(wire_messages_are_exact)
{
    ck_assert_int_eq(emq_enqueue(db, Q, "job00000000001", "x", 1), EMQ_EID);
    ck_assert_str_eq(emq_errmsg(db), "job_key requires a valid branded id");
    ck_assert_int_eq(emq_enqueue(db, Q, "ORD00000000001", "x", 1), EMQ_EKIND);
    ck_assert_str_eq(emq_errmsg(db), "EMQKIND job id must be JOB-namespaced");
    ck_assert_int_eq(emq_complete(db, Q, JOB1, 9), EMQ_ESTALE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE complete token mismatch");
}
END_TEST

START_TEST(ord_item_in_a_batch_writes_nothing)
{
    emq_item it[1] = {{"ORD00000000007", "x", 1}};
    int v[1] = {-1};
    snap before = take();
    ck_assert_int_eq(emq_enqueue_many(db, Q, it, 1, v), EMQ_OK);
    ck_assert_int_eq(v[0], EMQ_EKIND);
    same(before, take(), "ORD item");
}
END_TEST

START_TEST(null_handles_are_tolerated_where_documented)
{
    emq_close(NULL);
    ck_assert_str_eq(emq_errmsg(NULL), "");
    ck_assert_int_eq(emq_check(NULL, NULL, NULL, NULL), EMQ_EINVAL);
    emq_job_clear(NULL);
    emq_fields_free(NULL, 0);
    emq_db *x = (emq_db *)1;
    ck_assert_int_eq(emq_open(path, NULL, NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_open(NULL, NULL, &x), EMQ_EINVAL);
    ck_assert_ptr_null(x);
}
END_TEST

/* ------------------------------------------------------------- file rows */

/* Open `p` and expect `want` (either of two codes); the file's bytes are
 * unchanged and no WAL is left beside it. */
static void refused(const char *p, int want, int want2, const char *what,
                    const char *must_say)
{
    char err[512], w[320];
    uint64_t d0, d1, wd;
    int e, we;
    emq_db *h = (emq_db *)1;
    emq_options o = opts();
    snprintf(w, sizeof w, "%s-wal", p);
    ck_assert_int_eq(rel_file_digest(p, &d0, &e), 0);
    err[0] = 0;
    int rc = emq_open_ex(p, &o, &h, err, sizeof err);
    ck_assert_msg(rc == want || rc == want2, "%s: rc %d (%s) %s", what, rc,
                  emq_strerror(rc), err);
    ck_assert_ptr_null(h);
    ck_assert_msg(err[0] != 0, "%s: no message", what);
    if (must_say)
        ck_assert_msg(strstr(err, must_say) != NULL, "%s: \"%s\" lacks %s",
                      what, err, must_say);
    ck_assert_int_eq(rel_file_digest(p, &d1, &e), 0);
    ck_assert_msg(d0 == d1, "%s: the file changed", what);
    /* A refused open may leave an empty WAL and an -shm (the store's
     * read-only look at a WAL-mode file creates them); never WAL content. */
    ck_assert_int_eq(rel_file_digest(w, &wd, &we), 0);
    if (we) {
        struct stat sb;
        ck_assert_int_eq(stat(w, &sb), 0);
        ck_assert_msg(sb.st_size == 0, "%s: a WAL with %lld bytes was left "
                      "behind", what, (long long)sb.st_size);
    }
}

static void other(char *out, size_t cap, const char *name)
{
    rel_path(out, cap, dir, name);
}

START_TEST(foreign_sqlite_file_is_refused_untouched)
{
    char p[320];
    sqlite3 *s;
    other(p, sizeof p, "foreign.db");
    ck_assert_int_eq(sqlite3_open(p, &s), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(s, "CREATE TABLE t(x); INSERT INTO t "
                                  "VALUES(1)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    refused(p, EMQ_ENOTEMQ, EMQ_ENOTEMQ, "foreign", NULL);
    /* same with a foreign application_id and no tables */
    other(p, sizeof p, "foreign2.db");
    ck_assert_int_eq(sqlite3_open(p, &s), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(s, "PRAGMA application_id = 1234; "
                                  "PRAGMA user_version = 1", NULL, NULL,
                                  NULL), SQLITE_OK);
    sqlite3_close(s);
    refused(p, EMQ_ENOTEMQ, EMQ_ENOTEMQ, "foreign application_id", NULL);
}
END_TEST

/* A checkpointed copy of the live file with its bytes cut at `keep`. */
static void truncated_copy(const char *p, long keep)
{
    FILE *f;
    long n;
    unsigned char *b;
    ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)n);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    ck_assert_int_eq(rel_write_file(p, b, keep < 0 ? (size_t)n / 2
                                                   : (size_t)keep), 0);
    free(b);
}

START_TEST(truncated_file_is_refused_untouched)
{
    char p[320];
    /* grow the file past a few pages first */
    for (int i = 0; i < 300; i++) {
        char id[EMQ_ID_SIZE];
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        ck_assert_int_eq(emq_enqueue(db, Q, id, "a payload to fill pages",
                                     23), EMQ_ENQUEUED);
    }
    other(p, sizeof p, "half.emq");
    truncated_copy(p, -1);
    refused(p, EMQ_ECORRUPT, EMQ_ENOTEMQ, "truncated to half", NULL);
    other(p, sizeof p, "stub.emq");
    truncated_copy(p, 50);
    refused(p, EMQ_ENOTEMQ, EMQ_ENOTEMQ, "truncated to 50 bytes", NULL);
}
END_TEST

START_TEST(garbage_is_refused_untouched)
{
    char p[320];
    unsigned char g[8192];
    uint64_t s = 12345;
    for (size_t i = 0; i < sizeof g; i++) {
        s = s * 6364136223846793005ULL + 1;
        g[i] = (unsigned char)(s >> 56);
    }
    other(p, sizeof p, "garbage.emq");
    ck_assert_int_eq(rel_write_file(p, g, sizeof g), 0);
    refused(p, EMQ_ENOTEMQ, EMQ_ENOTEMQ, "random garbage", NULL);
    /* an SQLite header followed by garbage */
    memcpy(g, "SQLite format 3", 16);
    other(p, sizeof p, "header.emq");
    ck_assert_int_eq(rel_write_file(p, g, sizeof g), 0);
    refused(p, EMQ_ENOTEMQ, EMQ_ECORRUPT, "SQLite header + garbage", NULL);
    /* text */
    other(p, sizeof p, "text.emq");
    ck_assert_int_eq(rel_write_file(p, "hello, world\n", 13), 0);
    refused(p, EMQ_ENOTEMQ, EMQ_ENOTEMQ, "a text file", NULL);
}
END_TEST

START_TEST(another_wire_identity_is_refused_untouched)
{
    char p[320];
    emq_db *h;
    emq_options o = opts();
    other(p, sizeof p, "wire3.emq");
    ck_assert_int_eq(emq_open(p, &o, &h), EMQ_OK);
    emq_store *st = emq_db_store(h);
    ck_assert_int_eq(emq_store_begin(st, 1, clk.now), EMQ_OK);
    ck_assert_int_eq(emq_str_set(st, EMQ_VERSION_KEY,
                                 sizeof EMQ_VERSION_KEY - 1, "echomq:3.0.0",
                                 12, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    emq_close(h);
    refused(p, EMQ_EWIRE, EMQ_EWIRE, "echomq:3.0.0", "echomq:3.0.0");
    refused(p, EMQ_EWIRE, EMQ_EWIRE, "echomq:3.0.0", EMQ_WIRE);
}
END_TEST

START_TEST(newer_schema_is_refused_untouched)
{
    char p[320];
    emq_db *h;
    sqlite3 *s;
    emq_options o = opts();
    other(p, sizeof p, "newer.emq");
    ck_assert_int_eq(emq_open(p, &o, &h), EMQ_OK);
    emq_close(h);
    ck_assert_int_eq(sqlite3_open(p, &s), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(s, "PRAGMA user_version = 99", NULL, NULL,
                                  NULL), SQLITE_OK);
    sqlite3_close(s);
    refused(p, EMQ_ESCHEMA, EMQ_ESCHEMA, "user_version 99", NULL);
}
END_TEST

START_TEST(readonly_handle_refuses_writes_untouched)
{
    emq_db *ro;
    emq_options o = opts();
    int64_t n = -1;
    emq_job j;
    ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    o.readonly = 1;
    ck_assert_int_eq(emq_open(path, &o, &ro), EMQ_OK);
    snap before = take();
    ck_assert_int_eq(emq_enqueue(ro, Q, "JOB00000000005", "x", 1),
                     EMQ_EREADONLY);
    ck_assert_int_eq(emq_claim(ro, Q, 1000, &j), EMQ_EREADONLY);
    ck_assert_int_eq(emq_complete(ro, Q, JOB1, 1), EMQ_EREADONLY);
    ck_assert_int_eq(emq_pause(ro, Q), EMQ_EREADONLY);
    ck_assert_str_ne(emq_errmsg(ro), "");
    same(before, take(), "read-only handle");
    ck_assert_int_eq(emq_pending_size(ro, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(rel_check(ro, NULL, NULL, 1), EMQ_OK);
    emq_close(ro);
}
END_TEST

/* The chmod 0444 case, run as the current user: 0 when the file was
 * refused with a typed error or opened with writes refused. */
static int open_readonly_file(const char *p)
{
    emq_db *h = NULL;
    emq_options o = opts();
    int rc = emq_open(p, &o, &h);
    if (rc == EMQ_OK) { /* SQLite fell back to read-only: writes refused */
        rc = emq_enqueue(h, Q, "JOB00000000005", "x", 1);
        emq_close(h);
        return rc == EMQ_EREADONLY ? 0 : 1;
    }
    return (rc == EMQ_EREADONLY || rc == EMQ_ECANTOPEN) && h == NULL ? 0 : 2;
}

/* chmod 0444: the kernel ignores permissions for root (CI runs as root),
 * so as root the open runs in a child that dropped to uid/gid 65534. */
START_TEST(readonly_file_is_refused_or_read_only)
{
    char p[320];
    emq_db *h = NULL;
    emq_options o = opts();
    uint64_t d0, d1;
    int e, rc;
    other(p, sizeof p, "ro.emq");
    ck_assert_int_eq(emq_open(p, &o, &h), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(h, Q, JOB1, "x", 1), EMQ_ENQUEUED);
    emq_close(h);
    ck_assert_int_eq(chmod(p, 0444), 0);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    ck_assert_int_eq(rel_file_digest(p, &d0, &e), 0);
    /* no open handle crosses the fork (the child would inherit it) */
    emq_close(db);
    db = NULL;
    if (geteuid() != 0) {
        rc = open_readonly_file(p);
    } else {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
            _exit(open_readonly_file(p));
        }
        int st = 0;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert(WIFEXITED(st));
        rc = WEXITSTATUS(st);
    }
    ck_assert_msg(rc == 0, "read-only file: outcome %d", rc);
    ck_assert_int_eq(rel_file_digest(p, &d1, &e), 0);
    ck_assert_uint_eq(d0, d1);
}
END_TEST

START_TEST(directories_and_missing_paths_cannot_open)
{
    char p[320];
    emq_db *h = (emq_db *)1;
    emq_options o = opts();
    int rc = emq_open(dir, &o, &h);
    ck_assert_msg(rc == EMQ_ECANTOPEN || rc == EMQ_ENOTEMQ,
                  "directory: rc %d (%s)", rc, emq_strerror(rc));
    ck_assert_ptr_null(h);
    other(p, sizeof p, "no/such/dir/x.emq");
    ck_assert_int_eq(emq_open(p, &o, &h), EMQ_ECANTOPEN);
    ck_assert_ptr_null(h);
}
END_TEST

/* A WAL full of garbage beside a good file: SQLite's frame checksums
 * reject it; the file opens with its data and passes the checker. */
START_TEST(garbage_wal_is_ignored)
{
    char w[320];
    unsigned char g[4096];
    int64_t n = -1;
    emq_options o = opts();
    memset(g, 0xA5, sizeof g);
    emq_close(db);
    db = NULL;
    snprintf(w, sizeof w, "%s-wal", path);
    ck_assert_int_eq(rel_write_file(w, g, sizeof g), 0);
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_pending_size(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
}
END_TEST

Suite *suite_hostile(void)
{
    Suite *s = suite_create("hostile");
    TCase *v = tcase_create("verbs");
    tcase_add_checked_fixture(v, setup, teardown);
    tcase_add_loop_test(v, hostile_verb_input_is_refused_and_writes_nothing,
                        0, (int)NROWS);
    tcase_add_test(v, wire_messages_are_exact);
    tcase_add_test(v, ord_item_in_a_batch_writes_nothing);
    tcase_add_test(v, null_handles_are_tolerated_where_documented);
    suite_add_tcase(s, v);
    TCase *f = tcase_create("files");
    tcase_add_checked_fixture(f, setup, teardown);
    tcase_add_test(f, foreign_sqlite_file_is_refused_untouched);
    tcase_add_test(f, truncated_file_is_refused_untouched);
    tcase_add_test(f, garbage_is_refused_untouched);
    tcase_add_test(f, another_wire_identity_is_refused_untouched);
    tcase_add_test(f, newer_schema_is_refused_untouched);
    tcase_add_test(f, readonly_handle_refuses_writes_untouched);
    tcase_add_test(f, readonly_file_is_refused_or_read_only);
    tcase_add_test(f, directories_and_missing_paths_cannot_open);
    tcase_add_test(f, garbage_wal_is_ignored);
    suite_add_tcase(s, f);
    return s;
}
