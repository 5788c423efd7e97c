/*
 * test_review.c — suite "review": the findings of the protocol review of
 * engine/ and what now holds instead:
 *   1. an explicit node id held by another live handle is refused
 *      (EMQ_EBUSY naming the node), in one process and across a fork;
 *   2. minting resumes above the node's persisted reservation after a
 *      close and after a crash (a process that _exits without closing);
 *   3. import refuses set members that are not 14-byte ids and
 *      non-integer attempts / metrics counts (nothing applied);
 *   4. emq_complete_result records the given result;
 *   5. store errors of Valkey's ("ERR ...") reach emq_errmsg verbatim.
 * File tests run in a private mkdtemp directory removed afterwards.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "relutil.h"
#include "suites.h"
#include "tengine.h"
#include "brandedid.h"
#include "resp.h"
#include "store.h"

emq_store *emq_db_store(emq_db *db);

static char dir[256];
static char path[300];

static void fsetup(void)
{
    tdir_make(dir, sizeof dir, "emqrv", path, sizeof path);
}

static void fteardown(void)
{
    tdir_remove(dir);
}

static emq_db *open_node(int node, tclock *c)
{
    emq_options o;
    emq_db *db = NULL;
    char err[512];
    int rc;
    emq_options_init(&o);
    o.node_id = node;
    if (c) {
        o.clock = tclock_fn;
        o.clock_ctx = c;
    }
    rc = emq_open_ex(path, &o, &db, err, sizeof err);
    ck_assert_msg(rc == EMQ_OK, "open: %d %s", rc, err);
    return db;
}

/* ------------------------------------------- 1. explicit node id leases */

START_TEST(an_explicit_node_id_held_by_a_live_handle_is_refused)
{
    emq_db *a, *b = NULL, *c;
    emq_options o;
    char err[512];
    a = open_node(5, NULL);
    ck_assert_int_eq(emq_node_id(a), 5);
    emq_options_init(&o);
    o.node_id = 5;
    err[0] = 0;
    ck_assert_int_eq(emq_open_ex(path, &o, &b, err, sizeof err), EMQ_EBUSY);
    ck_assert_ptr_null(b);
    ck_assert_msg(strstr(err, "node id 5 ") != NULL, "message: %s", err);
    /* Another explicit node and a leased one are still available. */
    c = open_node(6, NULL);
    ck_assert_int_eq(emq_node_id(c), 6);
    emq_close(c);
    /* Released by close: the node can be taken again. */
    emq_close(a);
    a = open_node(5, NULL);
    ck_assert_int_eq(emq_node_id(a), 5);
    emq_close(a);
}
END_TEST

/* The child holds the node; the parent (which has no connection open at
 * the fork, so none is carried into the child) asks for it. */
START_TEST(an_explicit_node_id_held_by_another_process_is_refused)
{
    emq_options o;
    emq_db *b = NULL, *c;
    int up[2], down[2], status;
    char ch = 0;
    pid_t pid;
    ck_assert_int_eq(pipe(up), 0);
    ck_assert_int_eq(pipe(down), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        emq_db *a = NULL;
        emq_options_init(&o);
        o.node_id = 9;
        ch = emq_open(path, &o, &a) == EMQ_OK ? 'y' : 'n';
        if (write(up[1], &ch, 1) != 1) _exit(2);
        if (read(down[0], &ch, 1) != 1) _exit(3);
        emq_close(a);
        _exit(0);
    }
    ck_assert_int_eq(read(up[0], &ch, 1), 1);
    ck_assert_int_eq(ch, 'y');
    emq_options_init(&o);
    o.node_id = 9;
    ck_assert_int_eq(emq_open(path, &o, &b), EMQ_EBUSY);
    ck_assert_ptr_null(b);
    c = open_node(10, NULL);
    emq_close(c);
    ck_assert_int_eq(write(down[1], "x", 1), 1);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    /* The child is gone and so is its lease. */
    c = open_node(9, NULL);
    emq_close(c);
    close(up[0]); close(up[1]); close(down[0]); close(down[1]);
}
END_TEST

/* ------------------------------------------ 2. persisted reservations */

#define CELL(ms) ((uint64_t)((ms) - EMQ_EPOCH_MS) << 12)
#define AHEAD (UINT64_C(1000) << 12)

/* Slot `node` of the sidecar (8 bytes LE at node * 8; absent = 0). */
static uint64_t slot(int node)
{
    char side[320];
    unsigned char b[8] = {0};
    uint64_t v = 0;
    int fd;
    snprintf(side, sizeof side, "%s-emqnode", path);
    fd = open(side, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(pread(fd, b, 8, (off_t)node * 8), 0);
    close(fd);
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* A child process: open `path` (node by lease) with its clock frozen at
 * `at`, mint `n` ids, report its node and last id through a pipe, then
 * close (clean) or _exit holding the handle (a crash: no close runs). The
 * parent has no connection open at the fork. */
static void child_burst(int64_t at, int n, int clean, char last[EMQ_ID_SIZE],
                        int *node)
{
    int p[2], status;
    pid_t pid;
    ck_assert_int_eq(pipe(p), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        tclock c = {at, 0};
        emq_options o;
        emq_db *db = NULL;
        char id[EMQ_ID_SIZE], prev[EMQ_ID_SIZE] = "";
        int nd;
        close(p[0]);
        emq_options_init(&o);
        o.clock = tclock_fn;
        o.clock_ctx = &c;
        if (emq_open(path, &o, &db) != EMQ_OK) _exit(2);
        for (int i = 0; i < n; i++) {
            if (emq_mint(db, "JOB", id) != EMQ_OK) _exit(3);
            if (strcmp(id, prev) <= 0) _exit(4);
            memcpy(prev, id, EMQ_ID_SIZE);
        }
        nd = emq_node_id(db);
        if (write(p[1], &nd, sizeof nd) != (ssize_t)sizeof nd ||
            write(p[1], prev, EMQ_ID_SIZE) != EMQ_ID_SIZE)
            _exit(5);
        if (!clean)
            raise(SIGKILL); /* a crash: no close, no exit handlers */
        emq_close(db);
        _exit(0);
    }
    close(p[1]);
    ck_assert_int_eq(read(p[0], node, sizeof *node), (ssize_t)sizeof *node);
    ck_assert_int_eq(read(p[0], last, EMQ_ID_SIZE), EMQ_ID_SIZE);
    close(p[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    if (clean) {
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
    } else {
        ck_assert(WIFSIGNALED(status));
        ck_assert_int_eq(WTERMSIG(status), SIGKILL);
    }
}

static void mint_above(emq_db *db, const char *floor_id, char out[EMQ_ID_SIZE])
{
    ck_assert_int_eq(emq_mint(db, "JOB", out), EMQ_OK);
    ck_assert_msg(strcmp(out, floor_id) > 0, "minted %s, not above %s", out,
                  floor_id);
}

START_TEST(a_burst_reserves_once_a_second_and_close_keeps_the_exact_mark)
{
    tclock c = {T0, 0};
    /* A node no other test mints on: its process-wide cell is fresh even
     * when the suite runs without forking (CK_FORK=no). */
    emq_db *db = open_node(901, &c);
    char id[EMQ_ID_SIZE];
    uint64_t snow;
    int node = emq_node_id(db);
    ck_assert_int_eq(node, 901);
    ck_assert_uint_eq(slot(node), 0);
    for (int i = 0; i < 20000; i++)
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    /* One write at the first mint; the burst (~5 ms of cells) stays under
     * it. */
    ck_assert_uint_eq(slot(node), CELL(T0) + AHEAD);
    c.now = T0 + 999;
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    ck_assert_uint_eq(slot(node), CELL(T0) + AHEAD);
    c.now = T0 + 1000;           /* the cell reaches the reservation */
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    ck_assert_uint_eq(slot(node), CELL(T0 + 1000) + AHEAD);
    emq_close(db);
    /* A clean close leaves one past the last minted cell. */
    ck_assert_int_eq(emq_id_parse(id, EMQ_ID_LEN, NULL, &snow), EMQ_OK);
    ck_assert_uint_eq(slot(node), emq_snow_cell(snow) + 1);
    ck_assert_uint_eq(slot(node), CELL(T0 + 1000) + 1);
}
END_TEST

START_TEST(a_restarted_process_mints_above_ids_of_a_closed_one)
{
    char last[EMQ_ID_SIZE], id[EMQ_ID_SIZE], id2[EMQ_ID_SIZE];
    int node;
    tclock c = {T0, 0};
    emq_db *db;
    /* 20,000 ids in one frozen ms: the burst borrows ~5 ms ahead. */
    child_burst(T0, 20000, 1, last, &node);
    db = open_node(-1, &c);
    ck_assert_int_eq(emq_node_id(db), node);     /* the same node, leased */
    mint_above(db, last, id);
    emq_close(db);
    db = open_node(-1, &c);
    ck_assert_int_eq(emq_node_id(db), node);
    mint_above(db, id, id2);
    emq_close(db);
}
END_TEST

START_TEST(a_restarted_process_mints_above_ids_of_a_killed_one)
{
    char last[EMQ_ID_SIZE], id[EMQ_ID_SIZE];
    int node;
    tclock c = {T0, 0};
    emq_db *db;
    child_burst(T0, 20000, 0, last, &node);
    db = open_node(-1, &c);
    ck_assert_int_eq(emq_node_id(db), node);
    mint_above(db, last, id);
    emq_close(db);
    /* A process that died 5 s ahead of our clock (a clock stepped back). */
    child_burst(T0 + 5000, 20000, 0, last, &node);
    db = open_node(-1, &c);
    ck_assert_int_eq(emq_node_id(db), node);
    mint_above(db, last, id);
    emq_close(db);
    /* An explicit node id reads the same reservation. */
    child_burst(T0 + 9000, 10, 0, last, &node);
    db = open_node(node, &c);
    mint_above(db, last, id);
    emq_close(db);
}
END_TEST

START_TEST(a_memory_handle_mints_without_a_sidecar)
{
    tclock c;
    emq_db *db = topen(&c);
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE];
    ck_assert_int_eq(emq_mint(db, "JOB", a), EMQ_OK);
    ck_assert_int_eq(emq_mint(db, "JOB", b), EMQ_OK);
    ck_assert_int_gt(strcmp(b, a), 0);
    emq_close(db);
    ck_assert_int_ne(access(":memory:-emqnode", F_OK), 0);
}
END_TEST

/* ------------------------------------- 3. import refuses stuck states */

/* Append one RESP command of NUL-terminated words; returns its offset. */
static size_t cmd(emq_buf *s, int argc, const char *const *argv)
{
    size_t at = s->len;
    ck_assert_int_eq(emq_resp_write_array(s, (size_t)argc), EMQ_OK);
    for (int i = 0; i < argc; i++)
        ck_assert_int_eq(emq_resp_write_bulk(s, argv[i], strlen(argv[i])),
                         EMQ_OK);
    return at;
}

/* Start the stream over with the version stamp. */
static void stamped(emq_buf *s)
{
    static const char *const v[] = {"SET", "{emq}:version", "echomq:4.0.0"};
    s->len = 0;
    cmd(s, 3, v);
}

/* Import `s` and expect a refusal of the frame at `at`, the file as it
 * was. */
static void refused(emq_db *db, const emq_buf *s, size_t at)
{
    emq_transfer_summary before, after;
    char want[64];
    ck_assert_int_eq(emq_digest(db, NULL, &before), EMQ_OK);
    ck_assert_int_eq(rel_import_raw(db, s->p, s->len, NULL), EMQ_EPROTO);
    snprintf(want, sizeof want, "import refused at byte %zu: ", at);
    ck_assert_msg(strncmp(emq_errmsg(db), want, strlen(want)) == 0,
                  "message: %s (want %s)", emq_errmsg(db), want);
    ck_assert_int_eq(emq_digest(db, NULL, &after), EMQ_OK);
    ck_assert_uint_eq(before.digest, after.digest);
    ck_assert_uint_eq(before.keys, after.keys);
}

START_TEST(import_refuses_job_set_members_that_are_not_ids)
{
    static const char *const sets[] = {
        "emq:{q}:pending", "emq:{q}:active", "emq:{q}:schedule",
        "emq:{q}:dead", "emq:{q}:g:PRT0KHTOWnGLuC:pending",
    };
    static const char *const bad[] = {"A", "JOB000000000011", ""};
    tclock c;
    emq_db *db = topen(&c);
    emq_buf s = {0};
    int64_t size;
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            const char *const z[] = {"ZADD", sets[i], "0", "JOB00000000001",
                                     "0", bad[k]};
            const char *const e[] = {"ZADD", "emq:{q}:pending", "0",
                                     "JOB00000000002"};
            stamped(&s);
            cmd(&s, 4, e);              /* applied first, then rolled back */
            refused(db, &s, cmd(&s, 6, z));
        }
    ck_assert_int_eq(emq_pending_size(db, "q", &size), EMQ_OK);
    ck_assert_int_eq(size, 0);
    /* 14-byte members are accepted, and a zset that is no job set takes
     * any member. */
    {
        const char *const z[] = {"ZADD", "emq:{q}:pending", "0",
                                 "JOB00000000001"};
        const char *const r[] = {"ZADD", "emq:{q}:repeat", "5", "every-min"};
        emq_job j;
        stamped(&s);
        cmd(&s, 4, z);
        cmd(&s, 4, r);
        ck_assert_int_eq(rel_import_raw(db, s.p, s.len, NULL), EMQ_OK);
        ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
        ck_assert_str_eq(j.id, "JOB00000000001");
        emq_job_clear(&j);
    }
    emq_buf_free(&s);
    emq_close(db);
}
END_TEST

START_TEST(import_refuses_counters_a_transition_cannot_increment)
{
    static const char *const badv[] = {"x", "", "1.0", " 1", "+1", "01",
                                       "9223372036854775807",
                                       "99999999999999999999"};
    tclock c;
    emq_db *db = topen(&c);
    emq_buf s = {0};
    for (size_t k = 0; k < sizeof badv / sizeof *badv; k++) {
        const char *const row[] = {"HSET", "emq:{q}:job:JOB00000000001",
                                   "payload", "p", "attempts", badv[k]};
        const char *const mc[] = {"HSET", "emq:{q}:metrics:completed",
                                  "count", badv[k]};
        const char *const mf[] = {"HSET", "emq:{q}:metrics:failed",
                                  "other", "1", "count", badv[k]};
        stamped(&s);
        refused(db, &s, cmd(&s, 6, row));
        stamped(&s);
        refused(db, &s, cmd(&s, 4, mc));
        stamped(&s);
        refused(db, &s, cmd(&s, 6, mf));
    }
    /* Counters in [0, 2^63-1) are accepted (a negative one is a state the
     * checker rejects, so the import refuses it: test_transfer.c), and other
     * fields are not counters. */
    {
        const char *const row[] = {"HSET", "emq:{q}:job:JOB00000000001",
                                   "payload", "p", "attempts", "7",
                                   "state", "pending", "note", "x"};
        const char *const pend[] = {"ZADD", "emq:{q}:pending", "0",
                                    "JOB00000000001"};
        const char *const mc[] = {"HSET", "emq:{q}:metrics:completed",
                                  "count", "9223372036854775806",
                                  "attempts", "x"};
        const char *const meta[] = {"HSET", "emq:{q}:meta", "count", "x"};
        emq_job j;
        stamped(&s);
        cmd(&s, 10, row);
        cmd(&s, 4, pend);
        cmd(&s, 6, mc);
        cmd(&s, 4, meta);
        ck_assert_int_eq(rel_import_raw(db, s.p, s.len, NULL), EMQ_OK);
        ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_OK);
        ck_assert_int_eq(j.attempts, 8);
        emq_job_clear(&j);
    }
    emq_buf_free(&s);
    emq_close(db);
}
END_TEST

/* ---------------------------------------- 4. complete with a result */

#define RQ "mail"
#define RJ(id) "emq:{" RQ "}:job:" id
#define CA "JOB00000000001"
#define CB "JOB00000000002"
#define CC "JOB00000000003"
#define PP "JOB00000000009"

static void child_of(emq_db *db, const char *c, const char *pq)
{
    char key[64];
    ck_assert_int_eq(emq_enqueue(db, RQ, c, "child", 5), EMQ_ENQUEUED);
    snprintf(key, sizeof key, RJ("%s"), c);
    tk_hset(db, key, "parent", PP);
    if (pq) tk_hset(db, key, "parent_queue", pq);
}

static void claim_one(emq_db *db)
{
    emq_job j;
    ck_assert_int_eq(emq_claim(db, RQ, 1000, &j), EMQ_OK);
    emq_job_clear(&j);
}

START_TEST(complete_result_records_the_result_for_the_parent)
{
    static const char bin[] = {'r', 0, 'x'};
    static const char want[] = "other\0" PP "\0" CC "\0r\0x";
    tclock c;
    emq_db *db = topen(&c);
    emq_store *st;
    emq_buf e = {0};
    char *v;
    tk_hset(db, RJ(PP), "state", "awaiting_children");
    tk_hset(db, RJ(PP), "attempts", "0");
    tk_set(db, RJ(PP) ":dependencies", "3");
    child_of(db, CA, NULL);
    child_of(db, CB, NULL);
    child_of(db, CC, "other");
    claim_one(db);
    claim_one(db);
    claim_one(db);
    /* Gates first: nothing changes. */
    ck_assert_int_eq(emq_complete_result(db, RQ, CA, 1, NULL, 2),
                     EMQ_EINVAL);
    ck_assert_int_eq(emq_complete_result(db, RQ, CA, 2, "r", 1),
                     EMQ_ESTALE);
    ck_assert_str_eq(emq_errmsg(db), "EMQSTALE complete token mismatch");
    /* Same queue: processed[child] = result (an empty one too). */
    ck_assert_int_eq(emq_complete_result(db, RQ, CA, 1, "done:42", 7),
                     EMQ_OK);
    v = tk_hget(db, RJ(PP) ":processed", CA);
    ck_assert_str_eq(v, "done:42");
    free(v);
    ck_assert_int_eq(emq_complete_result(db, RQ, CB, 1, "", 0), EMQ_OK);
    v = tk_hget(db, RJ(PP) ":processed", CB);
    ck_assert_str_eq(v, "");
    free(v);
    ck_assert_int_eq(emq_complete_result(db, RQ, CB, 1, "r", 1), EMQ_GONE);
    /* Cross queue: the COMPLETE entry carries the binary result. */
    ck_assert_int_eq(emq_complete_result(db, RQ, CC, 1, bin, sizeof bin),
                     EMQ_OK);
    st = emq_db_store(db);
    ck_assert_int_eq(emq_store_begin(st, 0, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_pop(st, "emq:{" RQ "}:flow:outbox",
                                  strlen("emq:{" RQ "}:flow:outbox"), 0, &e),
                     EMQ_OK);
    emq_store_rollback(st);
    ck_assert_uint_eq(e.len, sizeof want - 1);
    ck_assert_mem_eq(e.p, want, e.len);
    emq_buf_free(&e);
    emq_close(db);
}
END_TEST

START_TEST(complete_result_without_a_result_is_complete)
{
    tclock c;
    emq_db *db = topen(&c);
    char *v;
    tk_hset(db, RJ(PP), "state", "awaiting_children");
    tk_hset(db, RJ(PP), "attempts", "0");
    tk_set(db, RJ(PP) ":dependencies", "1");
    child_of(db, CA, NULL);
    claim_one(db);
    ck_assert_int_eq(emq_complete_result(db, RQ, CA, 1, NULL, 0), EMQ_OK);
    v = tk_hget(db, RJ(PP) ":processed", CA);
    ck_assert_str_eq(v, CA);
    free(v);
    v = tk_hget(db, RJ(PP), "state");
    ck_assert_str_eq(v, "pending");
    free(v);
    emq_close(db);
}
END_TEST

/* ------------------------------------ 5. Valkey error strings verbatim */

START_TEST(a_valkey_error_of_the_store_reaches_errmsg_verbatim)
{
    tclock c;
    emq_db *db = topen(&c);
    emq_job j;
    memset(&j, 0, sizeof j);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", "x", 1),
                     EMQ_ENQUEUED);
    tk_hset(db, "emq:{q}:job:JOB00000000001", "attempts", "x");
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(emq_claim(db, "q", 1000, &j), EMQ_EPROTO);
        ck_assert_str_eq(emq_errmsg(db), "ERR hash value is not an integer");
    }
    /* Another verb on a well-formed row clears it; a bad counter of the
     * metrics hash gives the same reply from complete. */
    ck_assert_int_eq(emq_enqueue(db, "r", "JOB00000000002", "y", 1),
                     EMQ_ENQUEUED);
    ck_assert_str_eq(emq_errmsg(db), "");
    ck_assert_int_eq(emq_claim(db, "r", 1000, &j), EMQ_OK);
    tk_hset(db, "emq:{r}:metrics:completed", "count", "1.5");
    ck_assert_int_eq(emq_complete(db, "r", j.id, j.attempts), EMQ_EPROTO);
    ck_assert_str_eq(emq_errmsg(db), "ERR hash value is not an integer");
    emq_job_clear(&j);
    /* WRONGTYPE keeps its own wire string. */
    tk_set(db, "emq:{r}:pending", "s");
    ck_assert_int_eq(emq_claim(db, "r", 1000, &j), EMQ_EWRONGTYPE);
    ck_assert_str_eq(emq_errmsg(db), "WRONGTYPE Operation against a key "
                                     "holding the wrong kind of value");
    emq_close(db);
}
END_TEST

/* ------------------------------------------------------------ the suite */

START_TEST(every_call_refuses_a_null_handle)
{
    const char *id = "JOB00000000001";
    const char *ids[1] = {id};
    int64_t tok = 0, n;
    int failed[1], v[1];
    size_t nf, cnt, nq;
    emq_item it = {id, "x", 1};
    emq_job job;
    emq_stats stt;
    emq_field *fields;
    char **queues;
    char out[EMQ_ID_SIZE], (*bids)[EMQ_ID_SIZE] = &out;
    ck_assert_int_eq(emq_enqueue(NULL, "q", id, "x", 1), EMQ_EINVAL);
    ck_assert_int_eq(emq_enqueue_many(NULL, "q", &it, 1, v), EMQ_EINVAL);
    ck_assert_int_eq(emq_enqueue_at(NULL, "q", id, "x", 1, 5), EMQ_EINVAL);
    ck_assert_int_eq(emq_enqueue_in(NULL, "q", id, "x", 1, 5), EMQ_EINVAL);
    ck_assert_int_eq(emq_claim(NULL, "q", 10, &job), EMQ_EINVAL);
    ck_assert_int_eq(emq_complete(NULL, "q", id, 0), EMQ_EINVAL);
    ck_assert_int_eq(emq_complete_result(NULL, "q", id, 0, "r", 1),
                     EMQ_EINVAL);
    ck_assert_int_eq(emq_retry(NULL, "q", id, 0, 1, 1, "e", 1), EMQ_EINVAL);
    ck_assert_int_eq(emq_promote(NULL, "q", 1, &n), EMQ_EINVAL);
    ck_assert_int_eq(emq_reap(NULL, "q", &n), EMQ_EINVAL);
    ck_assert_int_eq(emq_browse(NULL, "q", 1, bids, &cnt), EMQ_EINVAL);
    ck_assert_int_eq(emq_pending_size(NULL, "q", &n), EMQ_EINVAL);
    ck_assert_int_eq(emq_lock_extend(NULL, "q", id, 0, 10), EMQ_EINVAL);
    ck_assert_int_eq(emq_lock_extend_many(NULL, "q", 1, ids, &tok, 10, failed,
                                      &nf), EMQ_EINVAL);
    ck_assert_int_eq(emq_queue_pause(NULL, "q"), EMQ_EINVAL);
    ck_assert_int_eq(emq_queue_resume(NULL, "q"), EMQ_EINVAL);
    ck_assert_int_eq(emq_job_get(NULL, "q", id, &fields, &cnt), EMQ_EINVAL);
    ck_assert_int_eq(emq_stats_get(NULL, "q", &stt), EMQ_EINVAL);
    ck_assert_int_eq(emq_queues(NULL, &queues, &nq), EMQ_EINVAL);
    ck_assert_int_eq(emq_mint(NULL, "JOB", out), EMQ_EINVAL);
    ck_assert_int_eq(emq_checkpoint(NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_check(NULL, NULL, NULL, &nf), EMQ_EINVAL);
    ck_assert_int_eq(emq_node_id(NULL), -1);
    ck_assert_str_eq(emq_errmsg(NULL), "");
    emq_set_clock(NULL, NULL, NULL);
    emq_close(NULL);
}
END_TEST

Suite *suite_review(void)
{
    Suite *s = suite_create("review");
    TCase *t = tcase_create("review");
    tcase_add_checked_fixture(t, fsetup, fteardown);
    tcase_add_test(t, every_call_refuses_a_null_handle);
    tcase_add_test(t, an_explicit_node_id_held_by_a_live_handle_is_refused);
    tcase_add_test(t, an_explicit_node_id_held_by_another_process_is_refused);
    tcase_add_test(t, a_burst_reserves_once_a_second_and_close_keeps_the_exact_mark);
    tcase_add_test(t, a_restarted_process_mints_above_ids_of_a_closed_one);
    tcase_add_test(t, a_restarted_process_mints_above_ids_of_a_killed_one);
    tcase_add_test(t, a_memory_handle_mints_without_a_sidecar);
    tcase_add_test(t, import_refuses_job_set_members_that_are_not_ids);
    tcase_add_test(t, import_refuses_counters_a_transition_cannot_increment);
    tcase_add_test(t, complete_result_records_the_result_for_the_parent);
    tcase_add_test(t, complete_result_without_a_result_is_complete);
    tcase_add_test(t, a_valkey_error_of_the_store_reaches_errmsg_verbatim);
    suite_add_tcase(s, t);
    return s;
}
