/*
 * test_flow.c — suite "flow": Tier 4 (PROTOCOL.md §6.4) through the typed
 * calls and the registry — the shapes of a flow add (flat, cross-queue,
 * nested), refusals and fail-closed adds, bulks, the sweep (delivery,
 * re-delivery, the D-5 re-emit gate, blocked passes), retry against
 * retry_tx, flow_tree, the procedure journal (an add cut at every step by a
 * failure, by an injected I/O fault, raced by a recovery on another
 * handle), and the golden driver's whole mode and vjson's flow trees.
 * States no flow verb builds (a malformed outbox entry, a key of the wrong
 * type) are written raw through storage/store.h.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "emqlite_protocol.h"
#include "suites.h"
#include "tengine.h"
#include "relutil.h"
#include "faultvfs.h"
#include "store.h"
#include "flow.h"
#include "golden.h"
#include "vjson.h"

emq_store *emq_db_store(emq_db *db);

#define Q "orders"
#define QX "orders.x"
#define QY "orders.y"
#define J(q, id) "emq:{" q "}:job:" id
#define K(q, sfx) "emq:{" q "}:" sfx

/* Ids in mint order (memcmp order is creation order). */
#define R "JOB00000000001"
#define A "JOB00000000002"
#define A1 "JOB00000000003"
#define A2 "JOB00000000004"
#define B "JOB00000000005"
#define B1 "JOB00000000006"
#define B2 "JOB00000000007"
#define C "JOB00000000008"
#define ORD "ORD0KHTOWnGLuC"

static tclock clk;
static emq_db *db;

static void setup(void) { db = topen(&clk); }
static void teardown(void) { emq_close(db); db = NULL; }

static void str_is(char *got, const char *want)
{
    if (want == NULL) {
        ck_assert_msg(got == NULL, "got %s, want nothing", got);
    } else {
        ck_assert_msg(got != NULL, "got nothing, want %s", want);
        ck_assert_str_eq(got, want);
    }
    free(got);
}

static int in_set(emq_db *h, const char *key, const char *m)
{
    double s;
    return tk_zscore(h, key, m, &s);
}

static int64_t deps(emq_db *h, const char *q, const char *parent)
{
    int64_t n = -99;
    ck_assert_int_eq(emq_flow_dependencies(h, q, parent, &n), EMQ_OK);
    return n;
}

/* A handle on the file at path with the test clock (and `sync`). */
static emq_db *open_file(const char *path, int sync)
{
    emq_options o;
    emq_db *h = NULL;
    emq_options_init(&o);
    o.clock = tclock_fn;
    o.clock_ctx = &clk;
    if (sync) o.synchronous = sync;
    ck_assert_int_eq(emq_open(path, &o, &h), EMQ_OK);
    return h;
}

/* Remove a file and its WAL and shared-memory files. */
static void wipe(const char *path)
{
    char p[320];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* The mixed tree of three queues (8 nodes, 8 steps):
 *   R (Q) ── A (Q) ── A1 (QX), A2 (Q)
 *         ├─ B (QX, policy id) ── B1 (QX), B2 (Q)
 *         └─ C (QY) */
static emq_flow_node a_kids[2] = {
    {A1, "a1", 2, QX, EMQ_FLOW_FP, NULL, 0},
    {A2, "a2", 2, NULL, EMQ_FLOW_FP, NULL, 0},
};
static emq_flow_node b_kids[2] = {
    {B1, "b1", 2, NULL, EMQ_FLOW_FP, NULL, 0},
    {B2, "b2", 2, Q, EMQ_FLOW_FP, NULL, 0},
};
static emq_flow_node r_kids[3] = {
    {A, "A", 1, NULL, EMQ_FLOW_FP, a_kids, 2},
    {B, "B", 1, QX, EMQ_FLOW_ID, b_kids, 2},
    {C, "C", 1, QY, EMQ_FLOW_FP, NULL, 0},
};
static const emq_flow_node tree = {R, "R", 1, NULL, EMQ_FLOW_FP, r_kids, 3};
/* The queue and id of each node in landing order (pre-order). */
static const char *const tree_q[8] = {Q, Q, QX, Q, QX, QX, Q, QY};
static const char *const tree_id[8] = {R, A, A1, A2, B, B1, B2, C};

/* The dump of a fresh handle after the uninterrupted add of `tree`. */
static char *reference_dump(void)
{
    tclock c2;
    emq_db *ref = topen(&c2);
    char *d;
    ck_assert_int_eq(emq_flow_add(ref, Q, &tree), EMQ_OK);
    d = tk_dump(ref);
    emq_close(ref);
    return d;
}

/* ------------------------------------------------------------- adds */

START_TEST(flat_flow_is_one_transaction_with_policies)
{
    emq_flow_node kids[2] = {{A, "a", 1, NULL, EMQ_FLOW_FP, NULL, 0},
                             {B, "b", 1, Q, EMQ_FLOW_ID, NULL, 0}};
    emq_flow_node root = {R, "P", 1, NULL, EMQ_FLOW_FP, kids, 2};
    int64_t n = -1;
    ck_assert_int_eq(emq_flow_add(db, Q, &root), EMQ_OK);
    str_is(tk_hget(db, J(Q, R), "state"), "awaiting_children");
    ck_assert_int_eq(deps(db, Q, R), 2);
    str_is(tk_hget(db, J(Q, A), "parent"), R);
    str_is(tk_hget(db, J(Q, A), "parent_queue"), NULL);
    str_is(tk_hget(db, J(Q, A), "parent_policy"), "fp");
    str_is(tk_hget(db, J(Q, B), "parent_policy"), "id");
    ck_assert(in_set(db, K(Q, "pending"), A));
    ck_assert(in_set(db, K(Q, "pending"), B));
    ck_assert(!in_set(db, K(Q, "pending"), R));
    ck_assert_int_eq(emq_flow_recover(db, &n), EMQ_OK);
    ck_assert_int_eq(n, 0); /* nothing journaled */
}
END_TEST

START_TEST(registry_replies_mirror_the_input)
{
    const char *flat[] = {Q, "1", R, "P", Q, "fp", "2", A, "a", Q, "fp"};
    const char *cross[] = {QX, "1", B, "P", QX, "fp", "2", B1, "c", QY, "id"};
    emq_reply r = {0};
    ck_assert_int_eq(emq_call(db, "flow_add", 11, flat, NULL, &r), EMQ_OK);
    ck_assert_int_eq(r.type, EMQ_REPLY_ARRAY);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_str_eq(r.elem[0].str, R);
    ck_assert_uint_eq(r.elem[1].n, 1);
    ck_assert_str_eq(r.elem[1].elem[0].str, A);
    emq_reply_clear(&r);
    ck_assert_int_eq(emq_call(db, "flow_add", 11, cross, NULL, &r), EMQ_OK);
    ck_assert_str_eq(r.elem[1].elem[0].str, B1);
    str_is(tk_hget(db, J(QY, B1), "parent_queue"), QX);
    str_is(tk_hget(db, J(QY, B1), "parent_policy"), "id");
    emq_reply_clear(&r);
    /* the nested form: [id, [[child, [...]], ...]], a leaf [id, []] */
    {
        const char *nested[] = {QY, "1", C, "R", QY, "fp", "2", A, "N", QY,
                                "fp", "3", A1, "L", QY, "id"};
        ck_assert_int_eq(emq_call(db, "flow_add", 16, nested, NULL, &r),
                         EMQ_OK);
        ck_assert_str_eq(r.elem[0].str, C);
        ck_assert_uint_eq(r.elem[1].n, 1);
        ck_assert_str_eq(r.elem[1].elem[0].elem[0].str, A);
        ck_assert_str_eq(r.elem[1].elem[0].elem[1].elem[0].elem[0].str, A1);
        ck_assert_uint_eq(r.elem[1].elem[0].elem[1].elem[0].elem[1].n, 0);
        emq_reply_clear(&r);
    }
}
END_TEST

START_TEST(nested_tree_links_each_node)
{
    ck_assert_int_eq(emq_flow_add(db, Q, &tree), EMQ_OK);
    ck_assert_int_eq(deps(db, Q, R), 3);
    ck_assert_int_eq(deps(db, Q, A), 2);
    ck_assert_int_eq(deps(db, QX, B), 2);
    str_is(tk_hget(db, J(Q, A), "state"), "awaiting_children");
    str_is(tk_hget(db, J(Q, A), "parent"), R);
    str_is(tk_hget(db, J(Q, A), "parent_queue"), NULL);
    str_is(tk_hget(db, J(QX, B), "parent_queue"), Q);
    str_is(tk_hget(db, J(QX, B), "parent_policy"), "id");
    str_is(tk_hget(db, J(QX, A1), "parent_queue"), Q);
    str_is(tk_hget(db, J(QX, B1), "parent_queue"), NULL);
    str_is(tk_hget(db, J(Q, B2), "parent_queue"), QX);
    str_is(tk_hget(db, J(QY, C), "parent"), R);
    str_is(tk_hget(db, J(QY, C), "parent_queue"), Q);
    ck_assert(!in_set(db, K(Q, "pending"), A));
    ck_assert(in_set(db, K(QX, "pending"), A1));
    ck_assert(in_set(db, K(Q, "pending"), B2));
}
END_TEST

START_TEST(tree_refusals_write_nothing)
{
    emq_flow_node chain[9];
    emq_flow_node loop_kids[2] = {{A1, "a", 1, NULL, 0, NULL, 0},
                                  {R, "loop", 4, NULL, 0, NULL, 0}};
    emq_flow_node mid = {A, "N", 1, NULL, 0, loop_kids, 2};
    emq_flow_node loop = {R, "R", 1, NULL, 0, &mid, 1};
    char ids[9][EMQ_ID_SIZE], *before, *after;
    for (int i = 8; i >= 0; i--) {
        snprintf(ids[i], sizeof ids[i], "JOB000000000%02u",
                 (unsigned)(i + 1) % 100u);
        chain[i] = (emq_flow_node){ids[i], "n", 1, NULL, 0,
                                   i < 8 ? &chain[i + 1] : NULL, i < 8};
    }
    before = tk_dump(db);
    ck_assert_int_eq(emq_flow_add(db, Q, &chain[0]), EMQ_EREFUSED);
    ck_assert_str_eq(emq_errmsg(db), "flow_too_deep(8)");
    ck_assert_int_eq(emq_flow_add(db, Q, &loop), EMQ_EREFUSED);
    ck_assert_str_eq(emq_errmsg(db), "flow_cycle(" R ")");
    after = tk_dump(db);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    /* eight levels land */
    chain[7].n_children = 0;
    ck_assert_int_eq(emq_flow_add(db, Q, &chain[0]), EMQ_OK);
    str_is(tk_hget(db, J(Q, "JOB00000000008"), "parent"), "JOB00000000007");
}
END_TEST

START_TEST(kind_refusals_fail_closed)
{
    emq_flow_node flat_kids[2] = {{A, "a", 1, NULL, 0, NULL, 0},
                                  {ORD, "b", 1, NULL, 0, NULL, 0}};
    emq_flow_node flat = {R, "P", 1, NULL, 0, flat_kids, 2};
    emq_flow_node cross_kids[2] = {{B1, "a", 1, QX, 0, NULL, 0},
                                   {ORD, "b", 1, QX, 0, NULL, 0}};
    emq_flow_node cross = {B, "P", 1, NULL, 0, cross_kids, 2};
    char *before = tk_dump(db), *after;
    ck_assert_int_eq(emq_flow_add(db, Q, &flat), EMQ_EKIND);
    ck_assert_str_eq(emq_errmsg(db), "EMQKIND job id must be JOB-namespaced");
    after = tk_dump(db);
    ck_assert_str_eq(before, after); /* a flat flow writes nothing */
    free(before);
    free(after);
    ck_assert_int_eq(emq_flow_add(db, Q, &cross), EMQ_EKIND);
    /* the parent stays held over both children, the first one landed */
    str_is(tk_hget(db, J(Q, B), "state"), "awaiting_children");
    ck_assert_int_eq(deps(db, Q, B), 2);
    ck_assert(in_set(db, K(QX, "pending"), B1));
    ck_assert(!tk_exists(db, J(QX, ORD)));
}
END_TEST

START_TEST(bulk_lands_the_good_flows_in_order)
{
    emq_flow_node k1 = {A, "a", 1, NULL, 0, NULL, 0};
    emq_flow_node k2 = {ORD, "b", 1, QX, 0, NULL, 0};
    emq_flow_node k3 = {B1, "c", 1, QX, 0, NULL, 0};
    emq_flow_node roots[3] = {{R, "1", 1, NULL, 0, &k1, 1},
                              {B, "2", 1, NULL, 0, &k2, 1},
                              {C, "3", 1, NULL, 0, &k3, 1}};
    const char *argv[] = {Q, "1", R, "1", Q, "fp", "2", A, "a", Q, "fp",
                          "1", B, "2", Q, "fp", "2", ORD, "b", QX, "fp"};
    int v[3] = {-1, -1, -1};
    emq_reply r = {0};
    ck_assert_int_eq(emq_flow_add_bulk(db, Q, roots, 3, v), EMQ_OK);
    ck_assert(v[0] == EMQ_OK && v[1] == EMQ_EKIND && v[2] == EMQ_OK);
    str_is(tk_hget(db, J(Q, B), "state"), "awaiting_children"); /* held */
    ck_assert(in_set(db, K(QX, "pending"), B1));
    /* the registry's reply leaves the refused flow out */
    ck_assert_int_eq(emq_call(db, "add_bulk", 21, argv, NULL, &r), EMQ_OK);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_str_eq(r.elem[0].elem[0].str, R);
    emq_reply_clear(&r);
    /* an ill-formed id anywhere refuses the whole bulk before any write */
    argv[17] = "ORD0KHTOWnGLu";
    ck_assert_int_eq(emq_call(db, "add_bulk", 21, argv, NULL, &r), EMQ_EID);
    emq_reply_clear(&r);
    ck_assert_int_eq(emq_flow_add_bulk(db, Q, NULL, 0, NULL), EMQ_OK);
}
END_TEST

START_TEST(bad_node_lists_are_refused_by_name)
{
    const char *gap[] = {Q, "1", R, "P", Q, "fp", "3", A, "a", Q, "fp"};
    const char *two[] = {Q, "1", R, "P", Q, "fp", "1", A, "a", Q, "fp"};
    const char *away[] = {Q, "1", R, "P", QX, "fp"};
    emq_flow_node bad = {R, "P", 1, NULL, 0, NULL, 2};
    ck_assert_int_eq(emq_call(db, "flow_add", 11, gap, NULL, NULL),
                     EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "flow.level"));
    ck_assert_int_eq(emq_call(db, "flow_add", 11, two, NULL, NULL),
                     EMQ_EINVAL);
    ck_assert_int_eq(emq_call(db, "flow_add", 6, away, NULL, NULL),
                     EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "flow.queue"));
    ck_assert_int_eq(emq_call(db, "flow_add", 1, away, NULL, NULL),
                     EMQ_EEMPTY);
    ck_assert_int_eq(emq_flow_add(db, Q, &bad), EMQ_EINVAL);
    ck_assert_int_eq(emq_flow_add(db, Q, NULL), EMQ_EINVAL);
}
END_TEST

/* ------------------------------------------------------------ fan-in */

/* Claim id from q (it must be next) and complete it with a result. */
static void finish(emq_db *h, const char *q, const char *id, const char *r)
{
    emq_job j;
    ck_assert_int_eq(emq_claim(h, q, 60000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, id);
    ck_assert_int_eq(emq_complete_result(h, q, id, j.attempts, r, strlen(r)),
                     EMQ_OK);
    emq_job_clear(&j);
}

static void kill_child(emq_db *h, const char *q, const char *id, const char *e)
{
    emq_job j;
    ck_assert_int_eq(emq_claim(h, q, 60000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, id);
    ck_assert_int_eq(emq_retry(h, q, id, j.attempts, 0, 1, e, strlen(e)),
                     EMQ_DEAD);
    emq_job_clear(&j);
}

static int64_t sweep(emq_db *h, const char *q)
{
    int64_t d = -1;
    ck_assert_int_eq(emq_flow_sweep(h, q, 100, &d), EMQ_OK);
    return d;
}

START_TEST(a_tree_completes_upward_across_sweeps)
{
    emq_field *f = NULL;
    size_t n = 0;
    ck_assert_int_eq(emq_flow_add(db, Q, &tree), EMQ_OK);
    finish(db, QX, A1, "r-a1");  /* cross: into QX's outbox */
    finish(db, Q, A2, "r-a2");   /* same queue: fanned in at once */
    ck_assert_int_eq(deps(db, Q, A), 1);
    ck_assert_int_eq(sweep(db, QX), 1);
    ck_assert_int_eq(sweep(db, QX), 0);
    ck_assert_int_eq(deps(db, Q, A), 0);
    str_is(tk_hget(db, J(Q, A), "state"), "pending");
    ck_assert_int_eq(emq_flow_children_values(db, Q, A, &f, &n), EMQ_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(f[0].name, A1);
    ck_assert_str_eq(f[0].value, "r-a1");
    ck_assert_str_eq(f[1].value, "r-a2");
    emq_fields_free(f, n);
    finish(db, Q, A, "r-A");     /* Q's pending in id order: A, B2 */
    ck_assert_int_eq(deps(db, Q, R), 2);
    finish(db, Q, B2, "r-b2");   /* B lives in QX: Q's outbox */
    kill_child(db, QX, B1, "boom-b1");  /* fp child of B: B dies */
    str_is(tk_hget(db, J(QX, B), "state"), "dead");
    /* B's death travels up on QX's outbox (RECURSE-SQ) with B's policy,
     * and its sibling's completion waits on Q's outbox */
    ck_assert_int_eq(sweep(db, Q), 1); /* B2 -> B (dead: recorded, D-14) */
    ck_assert_int_eq(sweep(db, QX), 1); /* B's death, policy id -> R */
    ck_assert_int_eq(emq_flow_ignored_failures(db, Q, R, &f, &n), EMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(f[0].name, B);
    ck_assert_str_eq(f[0].value, "boom-b1");
    emq_fields_free(f, n);
    ck_assert_int_eq(deps(db, Q, R), 1);
    finish(db, QY, C, "r-C");
    ck_assert_int_eq(sweep(db, QY), 1);
    str_is(tk_hget(db, J(Q, R), "state"), "pending");
    finish(db, Q, R, "done");
}
END_TEST

START_TEST(redelivery_changes_nothing_and_records_once)
{
    emq_reply out = {0};
    char *before, *after;
    emq_flow_node k = {A, "a", 1, QX, 0, NULL, 0};
    emq_flow_node root = {R, "P", 1, NULL, 0, &k, 1};
    ck_assert_int_eq(emq_flow_add(db, Q, &root), EMQ_OK);
    kill_child(db, QX, A, "boom");
    ck_assert_int_eq(emq_flow_outbox_read(db, QX, 10, &out), EMQ_OK);
    ck_assert_uint_eq(out.n, 1);
    ck_assert_int_eq(sweep(db, QX), 1);
    str_is(tk_hget(db, J(Q, R), "state"), "dead");
    ck_assert(in_set(db, K(Q, "dead"), R));
    before = tk_dump(db);
    /* the same entry pushed again: delivered, nothing changes */
    {
        emq_store *st = emq_db_store(db);
        int64_t len;
        ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
        ck_assert_int_eq(emq_list_push(st, K(QX, "flow:outbox"),
                                       strlen(K(QX, "flow:outbox")), 1,
                                       out.elem[0].str, out.elem[0].len,
                                       &len), EMQ_OK);
        ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    }
    ck_assert_int_eq(sweep(db, QX), 1);
    after = tk_dump(db);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    emq_reply_clear(&out);
}
END_TEST

/* D-5: an `id` delivery into a held node that has a parent of its own
 * releases or counts it, never re-emits; an fp delivery that kills it
 * re-emits once. */
START_TEST(reemit_only_when_the_delivery_kills)
{
    emq_flow_node kids[2] = {{A1, "x", 1, QX, EMQ_FLOW_ID, NULL, 0},
                             {A2, "y", 1, QX, EMQ_FLOW_FP, NULL, 0}};
    emq_flow_node mid = {A, "N", 1, NULL, EMQ_FLOW_FP, kids, 2};
    emq_flow_node root = {R, "R", 1, NULL, EMQ_FLOW_FP, &mid, 1};
    int64_t len = 0;
    ck_assert_int_eq(emq_flow_add(db, Q, &root), EMQ_OK);
    kill_child(db, QX, A1, "ignored");
    ck_assert_int_eq(sweep(db, QX), 1);
    ck_assert_int_eq(deps(db, Q, A), 1);
    ck_assert(!tk_exists(db, K(Q, "flow:outbox"))); /* no spurious death */
    kill_child(db, QX, A2, "fatal");
    ck_assert_int_eq(sweep(db, QX), 1);
    str_is(tk_hget(db, J(Q, A), "state"), "dead");
    ck_assert_int_eq(tk_type(db, K(Q, "flow:outbox")), EMQ_T_LIST);
    ck_assert_int_eq(sweep(db, Q), 1); /* A's death reaches R */
    str_is(tk_hget(db, J(Q, R), "state"), "dead");
    /* reemit by hand: a node without a parent pushes nothing */
    ck_assert_int_eq(emq_flow_reemit(db, Q, R, "e", 1, &len), EMQ_ABSENT);
    ck_assert_int_eq(emq_flow_reemit(db, Q, A, "e", 1, &len), EMQ_OK);
    ck_assert_int_eq(len, 1);
}
END_TEST

START_TEST(a_bad_entry_blocks_the_pass)
{
    emq_store *st = emq_db_store(db);
    static const char entry[] = "orders\0JOB00000000001\0" A "\0r";
    static const char badq[] = "or ders\0JOB00000000001\0" A "\0r";
    const char *k = K(QX, "flow:outbox");
    int64_t len;
    ck_assert_int_eq(emq_flow_hold(db, Q, R, "P", 1, 2), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, k, strlen(k), 1, entry,
                                   sizeof entry - 1, &len), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, k, strlen(k), 1, "junk", 4, &len),
                     EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, k, strlen(k), 1, entry,
                                   sizeof entry - 1, &len), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(sweep(db, QX), 1);
    ck_assert_int_eq(sweep(db, QX), 0); /* "junk" stays at the head */
    ck_assert_int_eq(deps(db, Q, R), 1);
    ck_assert_int_eq(emq_flow_outbox_trim(db, QX, 1), EMQ_OK);
    ck_assert_int_eq(sweep(db, QX), 1); /* once per (parent, child) */
    ck_assert_int_eq(deps(db, Q, R), 1);
    /* a parent queue that fails GATE-Q blocks too */
    ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
    ck_assert_int_eq(emq_list_push(st, k, strlen(k), 1, badq,
                                   sizeof badq - 1, &len), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(sweep(db, QX), 0);
    ck_assert_int_eq(emq_flow_sweep(db, QX, 0, NULL), EMQ_EINVAL);
}
END_TEST

START_TEST(retry_folds_recurse_sq_and_retry_tx_does_not)
{
    emq_flow_node leaf = {A1, "x", 1, NULL, EMQ_FLOW_FP, NULL, 0};
    emq_flow_node mid = {A, "N", 1, NULL, EMQ_FLOW_FP, &leaf, 1};
    emq_flow_node root = {R, "R", 1, NULL, EMQ_FLOW_FP, &mid, 1};
    const char *argv[] = {Q, A1, "1", "0", "1", "boom"};
    emq_job j;
    ck_assert_int_eq(emq_flow_add(db, Q, &root), EMQ_OK);
    ck_assert_int_eq(emq_claim(db, Q, 60000, &j), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(emq_call(db, "retry_tx", 6, argv, NULL, NULL),
                     EMQ_DEAD);
    str_is(tk_hget(db, J(Q, A), "state"), "dead");
    ck_assert(!tk_exists(db, K(Q, "flow:outbox"))); /* left to reemit */
    ck_assert_int_eq(emq_flow_reemit(db, Q, A, "boom", 4, NULL), EMQ_OK);
    ck_assert_int_eq(sweep(db, Q), 1);
    str_is(tk_hget(db, J(Q, R), "state"), "dead");
    /* retry itself carries the death up in its own transaction */
    ck_assert_int_eq(emq_flow_add(db, QX, &root), EMQ_OK);
    ck_assert_int_eq(emq_claim(db, QX, 60000, &j), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, QX, A1, j.attempts, 0, 1, "e", 1),
                     EMQ_DEAD);
    emq_job_clear(&j);
    ck_assert_int_eq(tk_zcard(db, K(QX, "dead")), 2);
    ck_assert(tk_exists(db, K(QX, "flow:outbox")));
}
END_TEST

START_TEST(flow_tree_shows_every_node_with_its_state)
{
    emq_flow_info *v = NULL;
    size_t n = 0;
    ck_assert_int_eq(emq_flow_add(db, Q, &tree), EMQ_OK);
    finish(db, QX, A1, "r-a1");
    finish(db, Q, A2, "r-a2");
    ck_assert_int_eq(emq_flow_tree(db, Q, R, &v, &n), EMQ_OK);
    ck_assert_uint_eq(n, 8);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(v[i].id_len == EMQ_ID_LEN &&
                      memcmp(v[i].id, tree_id[i], EMQ_ID_LEN) == 0,
                      "node %zu is %s", i, v[i].id);
    ck_assert_int_eq(v[0].level, 1);
    ck_assert_str_eq(v[0].state, "awaiting_children");
    ck_assert(v[0].has_dependencies && v[0].dependencies == 3);
    ck_assert_int_eq(v[2].level, 3);
    ck_assert_ptr_null(v[2].state);          /* A1: completed, not swept */
    ck_assert_str_eq(v[2].queue, QX);
    ck_assert_str_eq(v[2].outcome, "in_outbox");
    ck_assert_str_eq(v[3].state, "completed"); /* A2: fanned in */
    ck_assert_ptr_null(v[3].queue);
    ck_assert_str_eq(v[3].outcome, "processed");
    ck_assert_str_eq(v[3].value, "r-a2");
    ck_assert_str_eq(v[7].queue, QY);
    ck_assert_str_eq(v[7].state, "pending");
    emq_flow_tree_free(v, n);
    ck_assert_int_eq(emq_flow_tree(db, Q, C, &v, &n), EMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_ptr_null(v[0].state); /* no row of C in Q */
    emq_flow_tree_free(v, n);
}
END_TEST

START_TEST(an_empty_optional_queue_is_absent)
{
    ck_assert_int_eq(emq_flow_child(db, Q, A, "c", 1, R, ""), EMQ_OK);
    str_is(tk_hget(db, J(Q, A), "parent_queue"), NULL);
    ck_assert_int_eq(emq_flow_child(db, Q, B, "c", 1, R, "no queue"),
                     EMQ_EQUEUE);
    ck_assert_int_eq(emq_flow_set_link(db, Q, A, R, NULL, EMQ_FLOW_ID),
                     EMQ_OK);
    str_is(tk_hget(db, J(Q, A), "parent_policy"), "id");
    ck_assert_int_eq(emq_flow_set_policy(db, Q, A, 7), EMQ_EINVAL);
}
END_TEST

/* Every Tier 4 row called with argument vectors drawn from valid and
 * hostile values (bad queues and ids, ORD ids, out-of-range numbers,
 * words, bytes with NULs, empty strings, wrong counts): each call runs or
 * is refused with a typed code, and the file stays free of violations. */
/* Count violations that are not about an ORD id (see below). */
static void count_other_violations(void *ctx, const emq_finding *f)
{
    if (f->severity != EMQ_CHECK_VIOLATION) return;
    if (strstr(f->key, "ORD0KHTOWnGLuC") || strstr(f->message,
                                                   "ORD0KHTOWnGLuC"))
        return;
    fprintf(stderr, "flows: violation %s %s: %s\n", f->code, f->key,
            f->message);
    ++*(size_t *)ctx;
}

START_TEST(hostile_arguments_are_refused_or_run)
{
    static const char *const pick[] = {
        Q, QX, "", "no queue", "emq", "{x}", R, A, A1, B, ORD,
        "JOB0000000000", "JOBzzzzzzzzzzz", "0", "1", "2", "3", "9", "-1",
        "99999999999999999999", "fp", "id", "zz", "payload", "x\001y",
    };
    const size_t npick = sizeof pick / sizeof *pick;
    uint64_t r = 0x9E3779B97F4A7C15ULL;
    size_t nv = emq_verb_count(), calls = 0, viol = 0, notes = 0;
    for (int round = 0; round < 4000; round++) {
        const emq_verb_info *v;
        const char *argv[16];
        size_t len[16], argc, i;
        emq_reply rep = {0};
        int rc;
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        v = emq_verb_at(r % nv);
        if (v->tier != 4 && strncmp(v->name, "flow_", 5) != 0) continue;
        argc = (size_t)(r >> 8) % 12;
        for (i = 0; i < argc; i++) {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            argv[i] = pick[r % npick];
            len[i] = strlen(argv[i]);
            if ((r >> 20) % 11 == 0) len[i] = 0;            /* truncated */
            if ((r >> 24) % 13 == 0) argv[i] = "a\0b", len[i] = 3; /* NUL */
        }
        rc = emq_call(db, v->name, argc, argv, len, &rep);
        calls++;
        ck_assert_msg(rc >= 0 || (rc <= -30001 && rc >= -30099),
                      "%s: rc %d", v->name, rc);
        emq_reply_clear(&rep);
    }
    ck_assert_int_gt(calls, 500);
    /* A flow_deliver or flow_fail_deliver named with an ORD parent
     * releases it into pending (T4.11/T4.12 gate the id, not its kind):
     * the checker flags that poison, and it is the only thing it may flag. */
    (void)viol;
    (void)notes;
    emq_check(db, count_other_violations, &viol, NULL);
    ck_assert_uint_eq(viol, 0);
}
END_TEST

/* --------------------------------------------------- the journal */

/* Cut the add of `tree` before step k (1..7) with a key of the wrong type
 * at that node's row: the add fails, the steps before it stay, a journal
 * row waits; flow_recover then lands exactly what the uninterrupted add
 * lands. */
START_TEST(an_add_cut_before_any_step_is_finished_by_recover)
{
    int k = _i;
    char key[64], *want = reference_dump(), *got;
    int64_t n = -1;
    size_t viol = 0, notes = 0;
    snprintf(key, sizeof key, "emq:{%s}:job:%s", tree_q[k], tree_id[k]);
    tk_set(db, key, "in the way");
    ck_assert_int_eq(emq_flow_add(db, Q, &tree), EMQ_EWRONGTYPE);
    tk_del(db, key);
    for (int i = 0; i < 8; i++) {
        snprintf(key, sizeof key, "emq:{%s}:job:%s", tree_q[i], tree_id[i]);
        ck_assert_int_eq(tk_exists(db, key), i < k);
    }
    ck_assert_int_eq(rel_check(db, &viol, &notes, 1), EMQ_OK);
    ck_assert_uint_eq(viol, 0);
    ck_assert_int_eq(emq_flow_recover(db, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    got = tk_dump(db);
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(emq_flow_recover(db, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    free(got);
    free(want);
}
END_TEST

/* A recovery on another handle running between two steps of a live add
 * takes the remaining steps; the live add then skips them all and still
 * answers its reply. */
typedef struct race {
    emq_db *other;
    int64_t at, finished;
    int rc;
} race;

static void race_hook(void *ctx, const char *proc, int64_t step)
{
    race *r = ctx;
    if (strcmp(proc, "flow_add") == 0 && step == r->at)
        r->rc = emq_flow_recover(r->other, &r->finished);
}

START_TEST(a_recovery_racing_a_live_add_takes_each_step_once)
{
    char dir[256], path[300], *want = reference_dump(), *got;
    emq_db *a, *b;
    race r = {NULL, 3, 0, -1};
    int64_t n = -1;
    tdir_make(dir, sizeof dir, "flows", path, sizeof path);
    a = open_file(path, 0);
    b = open_file(path, 0);
    r.other = b;
    emq_proc_set_hook(race_hook, &r);
    ck_assert_int_eq(emq_flow_add(a, Q, &tree), EMQ_OK);
    emq_proc_set_hook(NULL, NULL);
    ck_assert_int_eq(r.rc, EMQ_OK);
    ck_assert_int_eq(r.finished, 1);
    got = tk_dump(a);
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(emq_flow_recover(a, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    free(got);
    free(want);
    emq_close(a);
    emq_close(b);
    tdir_remove(dir);
}
END_TEST

/* The tree's shape again over other ids (a second, unrelated add). */
static emq_flow_node a2_kids[2] = {
    {"JOB00000000013", "a1", 2, QX, EMQ_FLOW_FP, NULL, 0},
    {"JOB00000000014", "a2", 2, NULL, EMQ_FLOW_FP, NULL, 0},
};
static emq_flow_node b2_kids[2] = {
    {"JOB00000000016", "b1", 2, NULL, EMQ_FLOW_FP, NULL, 0},
    {"JOB00000000017", "b2", 2, Q, EMQ_FLOW_FP, NULL, 0},
};
static emq_flow_node r2_kids[3] = {
    {"JOB00000000012", "A", 1, NULL, EMQ_FLOW_FP, a2_kids, 2},
    {"JOB00000000015", "B", 1, QX, EMQ_FLOW_ID, b2_kids, 2},
    {"JOB00000000018", "C", 1, QY, EMQ_FLOW_FP, NULL, 0},
};
static const emq_flow_node tree2 = {"JOB00000000011", "R", 1, NULL,
                                    EMQ_FLOW_FP, r2_kids, 3};

/* While a live add sits after its step 3, another handle recovers it (its
 * journal row is deleted) and then starts a second add that is cut after
 * its own step 3. The live add must not mistake the second add's row for
 * its own (issue 27 item 1: SQLite handed the deleted row's jid out again,
 * the live add then took the second add's steps 3..7 and deleted its row,
 * so the second tree's nodes never landed and recover found nothing). */
typedef struct reuse {
    emq_db *other;
    int fired, rc_recover, rc_add;
    int64_t finished;
} reuse;

static void reuse_hook(void *ctx, const char *proc, int64_t step)
{
    reuse *r = ctx;
    if (r->fired || strcmp(proc, "flow_add") != 0 || step != 3) return;
    r->fired = 1;
    r->rc_recover = emq_flow_recover(r->other, &r->finished);
    /* The second add stops before its step 3 (index 3: A2's row is in
     * the way), leaving its row journaled with next = 3. */
    tk_set(r->other, "emq:{" Q "}:job:JOB00000000014", "in the way");
    r->rc_add = emq_flow_add(r->other, Q, &tree2);
    tk_del(r->other, "emq:{" Q "}:job:JOB00000000014");
}

START_TEST(a_journal_id_is_never_reused_under_a_live_add)
{
    char dir[256], path[300], *want, *got;
    emq_db *a, *b, *ref;
    tclock c2;
    reuse r = {NULL, 0, -1, -1, 0};
    int64_t n = -1;
    ref = topen(&c2);
    ck_assert_int_eq(emq_flow_add(ref, Q, &tree), EMQ_OK);
    ck_assert_int_eq(emq_flow_add(ref, Q, &tree2), EMQ_OK);
    want = tk_dump(ref);
    emq_close(ref);
    tdir_make(dir, sizeof dir, "flows", path, sizeof path);
    a = open_file(path, 0);
    b = open_file(path, 0);
    r.other = b;
    emq_proc_set_hook(reuse_hook, &r);
    ck_assert_int_eq(emq_flow_add(a, Q, &tree), EMQ_OK);
    emq_proc_set_hook(NULL, NULL);
    ck_assert_int_eq(r.fired, 1);
    ck_assert_int_eq(r.rc_recover, EMQ_OK);
    ck_assert_int_eq(r.finished, 1);
    ck_assert_int_eq(r.rc_add, EMQ_EWRONGTYPE);
    /* The second add's row is still there, and recover finishes it. */
    ck_assert_int_eq(emq_flow_recover(a, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    got = tk_dump(a);
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(deps(a, Q, "JOB00000000011"), 3);
    ck_assert_int_eq(emq_flow_recover(b, &n), EMQ_OK);
    ck_assert_int_eq(n, 0);
    free(got);
    free(want);
    emq_close(a);
    emq_close(b);
    tdir_remove(dir);
}
END_TEST

/* An injected I/O fault (EIO at every write and sync point) anywhere in a
 * multi-step add: a typed failure, then recovery (or, when nothing was
 * journaled, the add again) reaches the uninterrupted state. */
START_TEST(io_faults_in_a_multi_step_add_are_recovered)
{
    static const struct { int kind, err; } f[] = {
        {FV_WRITE, SQLITE_IOERR_WRITE}, {FV_SYNC, SQLITE_IOERR_FSYNC},
        {FV_WRITE, SQLITE_FULL},
    };
    char dir[256], path[300], *want = reference_dump();
    emq_db *h;
    long counts[FV_NKIND], runs = 0, failed = 0, recovered = 0;
    tdir_make(dir, sizeof dir, "flows", path, sizeof path);
    ck_assert_int_eq(fv_install(), 0);
    h = open_file(path, EMQ_SYNC_FULL);
    fv_count_reset();
    ck_assert_int_eq(emq_flow_add(h, Q, &tree), EMQ_OK);
    for (int k = 0; k < FV_NKIND; k++) counts[k] = fv_count(k);
    emq_close(h);
    ck_assert_int_ge(counts[FV_SYNC], 8); /* FULL: a sync per step */
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        for (long n = 1; n <= counts[f[i].kind]; n += rel_quick() ? 3 : 1) {
            char *got;
            int64_t done = 0;
            int rc;
            wipe(path);
            h = open_file(path, EMQ_SYNC_FULL);
            fv_count_reset();
            fv_arm(f[i].kind, n, f[i].err, 0);
            rc = emq_flow_add(h, Q, &tree);
            fv_disarm();
            runs++;
            if (rc != EMQ_OK) {
                failed++;
                ck_assert_msg(rc == EMQ_EIO || rc == EMQ_EFULL, "rc %d %s",
                              rc, emq_errmsg(h));
                ck_assert_int_eq(emq_flow_recover(h, &done), EMQ_OK);
                recovered += done;
                if (done == 0 && !tk_exists(h, J(Q, R)))
                    ck_assert_int_eq(emq_flow_add(h, Q, &tree), EMQ_OK);
            }
            got = tk_dump(h);
            ck_assert_msg(strcmp(got, want) == 0, "fault %zu at %ld: the "
                          "recovered add differs", i, n);
            free(got);
            emq_close(h);
        }
    fv_uninstall();
    fprintf(stderr, "flows: a multi-step add under %ld I/O faults: %ld "
            "failed, %ld finished by flow_recover\n", runs, failed,
            recovered);
    ck_assert_int_gt(recovered, 0);
    free(want);
    tdir_remove(dir);
}
END_TEST

/* ------------------------------------------------- the golden driver */

/* A stub executor that records the verbs it ran. */
typedef struct stub {
    char ran[256];
} stub;

static int st_begin(void *ctx, const emq_golden_case *c, emq_json_buf *e)
{
    (void)c;
    (void)e;
    ((stub *)ctx)->ran[0] = 0;
    return 0;
}
static void st_clock(void *ctx, int64_t now) { (void)ctx; (void)now; }
static int st_step(void *ctx, const emq_golden_step *s,
                   emq_golden_result *res, emq_json_buf *e)
{
    stub *x = ctx;
    (void)e;
    if (strcmp(s->verb, "missing") == 0) return -1;
    strcat(x->ran, s->verb);
    strcat(x->ran, " ");
    res->reply = emq_json_new_int(strcmp(s->verb, "proc") == 0 ? 7 : 1);
    return 0;
}
static int st_dump(void *ctx, emq_json **ks, emq_json_buf *e)
{
    (void)ctx;
    (void)e;
    *ks = emq_json_new_object();
    return 0;
}
static void st_end(void *ctx) { (void)ctx; }

static int st_whole(void *ctx, const char *verb)
{
    (void)ctx;
    return strcmp(verb, "proc") == 0;
}

START_TEST(whole_mode_runs_a_multi_part_verb_once)
{
    static const char trace[] =
        "{\"case\":\"c\",\"step\":1,\"verb\":\"a\",\"args\":{},\"now\":0,"
        "\"reply\":1,\"seq\":{\"verb\":\"proc\",\"part\":1,\"parts\":2,"
        "\"args\":{}},\"keyspace\":{}}\n"
        "{\"case\":\"c\",\"step\":2,\"verb\":\"b\",\"args\":{},\"now\":0,"
        "\"reply\":1,\"seq\":{\"verb\":\"proc\",\"part\":2,\"parts\":2,"
        "\"reply\":7},\"keyspace\":{}}\n"
        "{\"case\":\"c\",\"step\":3,\"verb\":\"missing\",\"args\":{},"
        "\"now\":0,\"reply\":1,\"keyspace\":{}}\n";
    stub x;
    emq_golden_exec ex = {"stub", &x, st_begin, st_clock, st_step, st_dump,
                          st_end};
    emq_golden_opts parts = {NULL, NULL}, whole = {st_whole, NULL};
    emq_golden_file *f;
    emq_golden_case *c;
    emq_golden_outcome out;
    char err[200];
    ck_assert_int_eq(emq_golden_open_mem("t", trace, sizeof trace - 1, &f,
                                         err, sizeof err), 0);
    ck_assert_int_eq(emq_golden_next_case(f, &c, err, sizeof err), 1);
    /* part by part: a and b run, then the step the executor cannot run */
    ck_assert_int_eq(emq_golden_run_case_opts(&ex, &parts, c, &out), -1);
    ck_assert_str_eq(x.ran, "a b ");
    ck_assert_int_eq(out.step, 3);
    emq_json_buf_free(&out.msg);
    /* whole: proc runs once for both parts */
    ck_assert_int_eq(emq_golden_run_case_opts(&ex, &whole, c, &out), -1);
    ck_assert_str_eq(x.ran, "proc ");
    emq_json_buf_free(&out.msg);
    emq_golden_case_free(c);
    emq_golden_close(f);
}
END_TEST

START_TEST(vjson_flattens_a_flow_tree_in_pre_order)
{
    static const char args[] =
        "{\"q\":\"q1\",\"flow\":{\"parent\":{\"id\":\"P\",\"payload\":\"p\"},"
        "\"children\":[{\"id\":\"A\",\"payload\":\"a\",\"queue\":\"q2\","
        "\"ignore_dependency_on_failure\":true,\"children\":[{\"id\":\"B\","
        "\"payload\":\"b\"}]},{\"id\":\"C\",\"payload\":\"c\"}]}}";
    static const char *const want =
        "q1|1|P|p|q1|fp|2|A|a|q2|id|3|B|b|q2|fp|2|C|c|q1|fp|";
    emq_json *j = NULL;
    emq_vargv av;
    char err[200] = "", got[256] = "";
    ck_assert_int_eq(emq_json_parse(args, sizeof args - 1, &j, NULL),
                     EMQ_JSON_OK);
    ck_assert_int_eq(emq_vjson_args(emq_verb_find("flow_add"), j, &av, err,
                                    sizeof err), 0);
    for (size_t i = 0; i < av.argc; i++) {
        strncat(got, av.argv[i], av.len[i]);
        strcat(got, "|");
    }
    ck_assert_str_eq(got, want);
    emq_vargv_free(&av);
    emq_json_free(j);
}
END_TEST

Suite *suite_flow(void)
{
    Suite *s = suite_create("flow");
    TCase *t = tcase_create("flows");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, flat_flow_is_one_transaction_with_policies);
    tcase_add_test(t, registry_replies_mirror_the_input);
    tcase_add_test(t, nested_tree_links_each_node);
    tcase_add_test(t, tree_refusals_write_nothing);
    tcase_add_test(t, kind_refusals_fail_closed);
    tcase_add_test(t, bulk_lands_the_good_flows_in_order);
    tcase_add_test(t, bad_node_lists_are_refused_by_name);
    tcase_add_test(t, a_tree_completes_upward_across_sweeps);
    tcase_add_test(t, redelivery_changes_nothing_and_records_once);
    tcase_add_test(t, reemit_only_when_the_delivery_kills);
    tcase_add_test(t, a_bad_entry_blocks_the_pass);
    tcase_add_test(t, retry_folds_recurse_sq_and_retry_tx_does_not);
    tcase_add_test(t, flow_tree_shows_every_node_with_its_state);
    tcase_add_test(t, an_empty_optional_queue_is_absent);
    tcase_add_test(t, hostile_arguments_are_refused_or_run);
    tcase_add_test(t, a_journal_id_is_never_reused_under_a_live_add);
    tcase_add_loop_test(t, an_add_cut_before_any_step_is_finished_by_recover,
                        1, 8);
    tcase_add_test(t, a_recovery_racing_a_live_add_takes_each_step_once);
    tcase_add_test(t, io_faults_in_a_multi_step_add_are_recovered);
    tcase_add_test(t, whole_mode_runs_a_multi_part_verb_once);
    tcase_add_test(t, vjson_flattens_a_flow_tree_in_pre_order);
    suite_add_tcase(s, t);
    return s;
}
