/*
 * test_hostile.c — hostile input, one table row per case: every refusal is
 * the typed error it should be, and the file's bytes are unchanged (XXH3
 * digest of the database file and its WAL before and after; a refused open
 * leaves no WAL content behind).
 *
 * Verbs run against a live file holding a pending and a claimed job. The
 * registry drives the table: every argument of every registered verb gets
 * every hostile value of its kind (NULL, empty, overlong, NUL inside,
 * malformed and out-of-range ids, bad queue names, non-numbers, leading
 * zeros, negatives and zero for the positive kinds, values past int64,
 * unknown words, bad dedup ids and names, a payload past max_payload),
 * and every call's shape is broken once (an argument too many, a tail
 * group cut short, an empty tail that must not be): each is a typed
 * refusal whose message names the argument (or is the gate's text of
 * PROTOCOL.md Appendix A.3), and the handle keeps serving. Typed rows cover
 * what only the C calls can be handed (NULL outputs, a NULL pointer with a
 * length, the mint's namespace) and the kind refusal of the admissions. File rows open hostile files: another SQLite
 * application's, a truncated one, garbage, another wire identity
 * (echomq:2.0.0), a newer schema, a read-only file or handle, a directory.
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
#include "emqlite_protocol.h"
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

/* ------------------------------------------------ the registry's verbs */

/* Hostile values by argument kind: each is refused by the argument's gate
 * before any store access, with the code given. A NULL value is an absent
 * argument (only hostile for a required one). */
typedef struct hval {
    const char *what, *p;
    size_t n;
} hval;

#define HV(w, s) {w, s, sizeof s - 1}
static const char q129[] =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char a256[] =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

static const hval H_QUEUE[] = {
    {"NULL", NULL, 0}, HV("empty", ""), HV("braces", "{a}"),
    HV("a closing brace", "a}b"), HV("a colon", "a:b"),
    HV("non-ASCII", "caf\xc3\xa9"), HV("a space", "a b"), HV("emq", "emq"),
    {"129 bytes", q129, 129}, HV("NUL inside", "a\0b"), {NULL, NULL, 0}};
static const hval H_ID[] = {
    {"NULL", NULL, 0}, HV("empty", ""), HV("13 bytes", "JOB0000000001"),
    HV("15 bytes", "JOB000000000001"), HV("bad alphabet", "JOB0000000000!"),
    HV("a space", "JOB00000 00001"), HV("a high byte", "JOB0000000000\xc3"),
    HV("lowercase namespace", "job00000000001"),
    HV("digit in namespace", "J0B00000000001"),
    HV("above AzL8n0Y58m7", "JOBAzL8n0Y58m8"),
    HV("payload zzzzzzzzzzz", "JOBzzzzzzzzzzz"),
    HV("NUL inside", "JOB000000\0" "0001"), {NULL, NULL, 0}};
static const hval H_INT[] = {
    {"NULL", NULL, 0}, HV("empty", ""), HV("not a number", "x"),
    HV("trailing junk", "1x"), HV("a leading space", " 1"),
    HV("a leading zero", "01"), HV("minus zero", "-0"), HV("a plus", "+1"),
    HV("a fraction", "1.5"), HV("hex", "0x10"),
    HV("past INT64_MAX", "9223372036854775808"),
    HV("below INT64_MIN", "-9223372036854775809"),
    HV("NUL inside", "1\0" "2"), {NULL, NULL, 0}};
static const hval H_POS[] = {
    HV("zero", "0"), HV("negative", "-1"),
    HV("INT64_MIN", "-9223372036854775808"), {NULL, NULL, 0}};
static const hval H_NNEG[] = {
    HV("negative", "-1"), HV("INT64_MIN", "-9223372036854775808"),
    {NULL, NULL, 0}};
static const hval H_BOOL[] = {
    {"NULL", NULL, 0}, HV("empty", ""), HV("two", "2"), HV("yes", "yes"),
    HV("upper case", "TRUE"), HV("NUL inside", "1\0"), {NULL, NULL, 0}};
static const hval H_WORD[] = {
    {"NULL", NULL, 0}, HV("empty", ""), HV("unknown", "nope"),
    HV("NUL inside", "in\0"), {NULL, NULL, 0}};
static const hval H_DID[] = {
    {"NULL", NULL, 0}, HV("empty", ""), HV("a space", "a b"),
    HV("a colon", "a:b"), {"256 bytes", a256, 256}, HV("NUL inside", "a\0b"),
    HV("non-ASCII", "caf\xc3\xa9"), {NULL, NULL, 0}};
static const hval H_NAME[] = {
    {"NULL", NULL, 0}, HV("empty", ""), HV("a colon", "a:b"),
    HV("NUL inside", "a\0b"), {"256 bytes", a256, 256}, {NULL, NULL, 0}};

/* The gate's code for a kind. */
static int gate_code(int kind)
{
    switch (kind) {
    case EMQ_ARG_QUEUE: return EMQ_EQUEUE;
    case EMQ_ARG_ID: case EMQ_ARG_GROUP: return EMQ_EID;
    case EMQ_ARG_BYTES: return EMQ_ETOOBIG;
    default: return EMQ_EINVAL;
    }
}

/* A valid value of each kind, for the arguments that are not under test:
 * the call would pass every gate. */
static void valid_of(const emq_arg_info *a, const char **p, size_t *n)
{
    static const char *const v[] = {"", "hostile", JOB1, "PRT0KHTOWnGLuC",
                                    "x", "1", "1000", "0", "0", NULL, "d1",
                                    "n1"};
    if (a->kind == EMQ_ARG_WORD) {
        const char *bar = strchr(a->words, '|');
        *p = a->words;
        *n = bar ? (size_t)(bar - a->words) : strlen(a->words);
        return;
    }
    *p = a->kind >= 1 && a->kind <= 11 ? v[a->kind] : "x";
    *n = strlen(*p);
}

/* The hostile values of `a`'s kind, and a second list (POS/NNEG also get
 * every INT one). */
static const hval *hostile_of(const emq_arg_info *a, const hval **more)
{
    *more = NULL;
    switch (a->kind) {
    case EMQ_ARG_QUEUE: return H_QUEUE;
    case EMQ_ARG_ID: case EMQ_ARG_GROUP: return H_ID;
    case EMQ_ARG_INT: return H_INT;
    case EMQ_ARG_POS: *more = H_INT; return H_POS;
    case EMQ_ARG_NNEG: *more = H_INT; return H_NNEG;
    case EMQ_ARG_BOOL: return H_BOOL;
    case EMQ_ARG_WORD: return H_WORD;
    case EMQ_ARG_DID: return H_DID;
    case EMQ_ARG_NAME: return H_NAME;
    default: return NULL;   /* BYTES: the overlong one, below */
    }
}

#define MAXA 32

typedef struct hcall {
    size_t argc;
    const char *argv[MAXA];
    size_t len[MAXA];
} hcall;

/* A call of `v` that passes every gate: each argument valid, a repeated
 * tail of one group. */
static void baseline(const emq_verb_info *v, hcall *c)
{
    size_t i;
    c->argc = 0;
    for (i = 0; i < v->nargs && c->argc < MAXA; i++, c->argc++)
        valid_of(&v->args[i], &c->argv[c->argc], &c->len[c->argc]);
}

static long nhostile;

/* Run `c` and check the refusal: the code, a message naming the argument
 * (or the gate's own text of PROTOCOL.md Appendix A.3), no byte of the
 * file changed, and the handle still serving and clean. */
static void refused_call(const emq_verb_info *v, const hcall *c, int want,
                         const char *arg, const char *what)
{
    emq_reply r = {0};
    snap before = take();
    int64_t n = -1;
    int rc = emq_call(db, v->name, c->argc, c->argv, c->len, &r);
    const char *m = emq_errmsg(db);
    nhostile++;
    ck_assert_msg(rc == want, "%s / %s: %s: rc %d (%s), expected %d (%s)",
                  v->name, arg, what, rc, emq_strerror(rc), want,
                  emq_strerror(want));
    ck_assert_msg(r.type == EMQ_REPLY_NIL, "%s / %s: %s: a refusal with a "
                  "reply", v->name, arg, what);
    switch (want) {
    case EMQ_EQUEUE:
        ck_assert_str_eq(m, "invalid queue name");
        break;
    case EMQ_EID:
        ck_assert_msg(strcmp(m, "job_key requires a valid branded id") == 0 ||
                          strcmp(m, "a lane is named by a valid branded id")
                              == 0,
                      "%s / %s: %s: message \"%s\"", v->name, arg, what, m);
        break;
    case EMQ_ETOOBIG:
        ck_assert_msg(strstr(m, "max_payload") != NULL, "%s / %s: %s: "
                      "message \"%s\"", v->name, arg, what, m);
        break;
    case EMQ_EEMPTY:
        ck_assert_str_eq(m, "empty_pipeline");
        break;
    default:
        ck_assert_msg(strstr(m, arg) != NULL, "%s / %s: %s: message \"%s\" "
                      "does not name the argument", v->name, arg, what, m);
    }
    emq_reply_clear(&r);
    same(before, take(), v->name);
    ck_assert_int_eq(emq_pending_size(db, Q, &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
}

/* Every argument of verb _i gets every hostile value of its kind, one at
 * a time; then the call's shape: too many arguments, a tail group cut
 * short, an empty tail that must not be. */
START_TEST(every_registered_verb_refuses_hostile_arguments)
{
    const emq_verb_info *v = emq_verb_at((size_t)_i);
    static char big[65];
    size_t k, fix = 0, grp;
    long before = nhostile;
    hcall c;
    memset(big, 'x', sizeof big);
    while (fix < v->nargs && !(v->args[fix].flags & EMQ_ARGF_REST)) fix++;
    grp = v->nargs - fix;
    for (k = 0; k < v->nargs; k++) {
        const emq_arg_info *a = &v->args[k];
        const hval *h, *more;
        int round;
        baseline(v, &c);
        if (a->kind == EMQ_ARG_BYTES) {
            c.argv[k] = big;
            c.len[k] = sizeof big; /* max_payload is 64 on this handle */
            refused_call(v, &c, EMQ_ETOOBIG, a->name, "65 bytes");
            continue;
        }
        h = hostile_of(a, &more);
        for (round = 0; round < 2 && h; round++, h = more) {
            for (; h->what; h++) {
                if (h->p == NULL && (a->flags & EMQ_ARGF_OPT)) continue;
                /* an optional queue given empty is absent (flow_child's pq,
                 * set_link's parent_queue), not a refusal */
                if (h->n == 0 && h->p && a->kind == EMQ_ARG_QUEUE &&
                    (a->flags & EMQ_ARGF_OPT))
                    continue;
                baseline(v, &c);
                c.argv[k] = h->p;
                c.len[k] = h->n;
                refused_call(v, &c, h->p == NULL && a->kind == EMQ_ARG_QUEUE
                                        ? EMQ_EQUEUE
                                        : h->p == NULL && (a->kind ==
                                                           EMQ_ARG_ID ||
                                                           a->kind ==
                                                           EMQ_ARG_GROUP)
                                        ? EMQ_EID : gate_code(a->kind),
                             a->name, h->what);
            }
        }
    }
    baseline(v, &c);
    if (grp == 0) {
        c.argv[c.argc] = "1";
        c.len[c.argc++] = 1;
        refused_call(v, &c, EMQ_EINVAL, "too many", "one argument too many");
    } else {
        if (grp > 1) {
            c.argc--;  /* the tail's last group cut short */
            refused_call(v, &c, EMQ_EINVAL, v->args[fix].name,
                         "a tail group cut short");
        }
        if (v->args[fix].flags & EMQ_ARGF_MIN1) {
            c.argc = fix;
            refused_call(v, &c, EMQ_EEMPTY, v->args[fix].name,
                         "an empty tail");
        }
    }
    fprintf(stderr, "hostile: %s: %ld refusals\n", v->name,
            nhostile - before);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
}
END_TEST

START_TEST(unknown_verbs_and_null_argv_are_refused)
{
    snap before = take();
    const char *a[1] = {Q};
    ck_assert_int_eq(emq_call(db, "no_such_verb", 1, a, NULL, NULL),
                     EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "no_such_verb"));
    ck_assert_int_eq(emq_call(db, NULL, 0, NULL, NULL, NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_call(db, "pending_size", 1, NULL, NULL, NULL),
                     EMQ_EINVAL);
    same(before, take(), "unknown verbs");
}
END_TEST

/* ------------------------------------------------- the typed calls */

/* What only the typed C calls can be handed: NULL output pointers, a NULL
 * pointer with a length, a well-formed id of another namespace refused by
 * the transition (nothing written), the mint's namespace. */
enum {
    V_ENQ, V_ENQ_AT, V_ENQ_IN, V_MANY, V_CLAIM, V_RETRY, V_BROWSE, V_SIZE,
    V_GET, V_STATS, V_MINT, V_EXTENDS
};

#define NULLP ((size_t)-1) /* payload row: NULL pointer with length 5 */

typedef struct row {
    const char *name;
    int verb;
    const char *id;
    size_t plen;        /* payload length, or NULLP                    */
    int nullout;        /* pass NULL for the output argument           */
    int want;
} row;

static const row rows[] = {
    {"ORD id / enqueue", V_ENQ, "ORD00000000007", 3, 0, EMQ_EKIND},
    {"ORD id / enqueue_at", V_ENQ_AT, "ORD00000000007", 3, 0, EMQ_EKIND},
    {"ORD id / enqueue_in", V_ENQ_IN, "ORD00000000007", 3, 0, EMQ_EKIND},
    {"NULL payload, length 5 / enqueue", V_ENQ, "JOB00000000005", NULLP, 0,
     EMQ_EINVAL},
    {"NULL payload, length 5 / enqueue_many", V_MANY, "JOB00000000005",
     NULLP, 0, EMQ_EINVAL},
    {"NULL error text, length 5 / retry", V_RETRY, JOB1, NULLP, 0,
     EMQ_EINVAL},
    {"NULL job / claim", V_CLAIM, NULL, 0, 1, EMQ_EINVAL},
    {"NULL items / enqueue_many", V_MANY, "JOB00000000005", 3, 1,
     EMQ_EINVAL},
    {"NULL ids / extend_locks", V_EXTENDS, JOB1, 0, 1, EMQ_EINVAL},
    {"NULL output / browse", V_BROWSE, NULL, 0, 1, EMQ_EINVAL},
    {"NULL output / pending_size", V_SIZE, NULL, 0, 1, EMQ_EINVAL},
    {"NULL output / job_get", V_GET, JOB1, 0, 1, EMQ_EINVAL},
    {"NULL output / stats", V_STATS, NULL, 0, 1, EMQ_EINVAL},
    {"NULL namespace / mint", V_MINT, NULL, 0, 1, EMQ_EINVAL},
    {"lowercase namespace / mint", V_MINT, "job", 0, 0, EMQ_EID},
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
    case V_ENQ: return emq_enqueue(db, Q, r->id, p, plen);
    case V_ENQ_AT: return emq_enqueue_at(db, Q, r->id, p, plen, 5);
    case V_ENQ_IN: return emq_enqueue_in(db, Q, r->id, p, plen, 10);
    case V_MANY: {
        emq_item it[2] = {{JOB2, "dup", 3}, {r->id, p, plen}};
        int v[2];
        return emq_enqueue_many(db, Q, r->nullout ? NULL : it, 2, v);
    }
    case V_CLAIM:
        rc = emq_claim(db, Q, 1000, r->nullout ? NULL : &j);
        if (rc == EMQ_OK) emq_job_clear(&j);
        return rc;
    case V_RETRY: return emq_retry(db, Q, r->id, 1, 10, 3, p, plen);
    case V_EXTENDS: {
        const char *x[1] = {r->id};
        int64_t t[1] = {1};
        int f[1];
        size_t nf;
        return emq_lock_extend_many(db, Q, 1, r->nullout ? NULL : x, t, 1000, f,
                                &nf);
    }
    case V_BROWSE: {
        char ids[8][EMQ_ID_SIZE];
        size_t n;
        return emq_browse(db, Q, 5, r->nullout ? NULL : ids, &n);
    }
    case V_SIZE: {
        int64_t n;
        return emq_pending_size(db, Q, r->nullout ? NULL : &n);
    }
    case V_GET: {
        emq_field *f = NULL;
        size_t n = 0;
        rc = emq_job_get(db, Q, r->id, r->nullout ? NULL : &f, &n);
        emq_fields_free(f, n);
        return rc;
    }
    case V_STATS: return emq_stats_get(db, Q, NULL);
    case V_MINT: {
        char out[EMQ_ID_SIZE];
        return emq_mint(db, r->nullout ? NULL : r->id, out);
    }
    }
    return 0;
}

START_TEST(hostile_typed_input_is_refused_and_writes_nothing)
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
                                 sizeof EMQ_VERSION_KEY - 1, "echomq:2.0.0",
                                 12, -1, 0, NULL), EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    emq_close(h);
    refused(p, EMQ_EWIRE, EMQ_EWIRE, "echomq:2.0.0", "echomq:2.0.0");
    refused(p, EMQ_EWIRE, EMQ_EWIRE, "echomq:2.0.0", EMQ_WIRE);
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
    ck_assert_int_eq(emq_queue_pause(ro, Q), EMQ_EREADONLY);
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
    tcase_add_loop_test(v, every_registered_verb_refuses_hostile_arguments,
                        0, (int)emq_verb_count());
    tcase_add_test(v, unknown_verbs_and_null_argv_are_refused);
    tcase_add_loop_test(v, hostile_typed_input_is_refused_and_writes_nothing,
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
