/*
 * test_handle.c — suite "handle": opening and closing, the version fence
 * (§5), node-id leases, minting, options, messages and emq_strerror.
 * File tests run in a private mkdtemp directory removed afterwards.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>
#include "suites.h"
#include "tengine.h"
#include "brandedid.h"
#include "store.h"

emq_store *emq_db_store(emq_db *db);

static char dir[256];
static char path[300];

static void fsetup(void)
{
    tdir_make(dir, sizeof dir, "emqh5", path, sizeof path);
}

static void fteardown(void)
{
    tdir_remove(dir);
}

static unsigned char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    unsigned char *b;
    long sz;
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)sz + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static int file_exists(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0;
}

/* Overwrite {emq}:version of the file at `path` with `v` (NULL: delete),
 * through the store (an emq_open would be refused by the fence). */
static void restamp(const char *v)
{
    emq_store *st;
    emq_store_opts so;
    char err[128];
    memset(&so, 0, sizeof so);
    so.synchronous = EMQ_SYNC_NORMAL;
    so.busy_timeout_ms = 1000;
    ck_assert_int_eq(emq_store_open(path, &so, &st, err, sizeof err), EMQ_OK);
    ck_assert_int_eq(emq_store_begin(st, 1, 0), EMQ_OK);
    if (v)
        ck_assert_int_eq(emq_str_set(st, "{emq}:version", 13, v, strlen(v),
                                     -1, 0, NULL), EMQ_OK);
    else
        ck_assert(emq_key_del(st, "{emq}:version", 13, NULL) >= 0);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    emq_store_close(st);
}

/* ------------------------------------------------------------------ fence */

START_TEST(open_stamps_a_fresh_file_and_reopens_it)
{
    emq_db *db;
    char *v;
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", "x", 1),
                     EMQ_ENQUEUED);
    emq_close(db);
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    v = tk_str(db, "{emq}:version");
    ck_assert_str_eq(v, EMQ_WIRE);
    free(v);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", "x", 1),
                     EMQ_DUPLICATE);
    ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    emq_close(db);
}
END_TEST

START_TEST(fence_refuses_a_file_stamped_2_0_0_and_leaves_it_unchanged)
{
    emq_db *db = (emq_db *)1;
    char err[256] = "";
    size_t n1, n2;
    unsigned char *b1, *b2;
    char wal[320];
    restamp("echomq:2.0.0");
    snprintf(wal, sizeof wal, "%s-wal", path);
    ck_assert(!file_exists(wal));
    b1 = slurp(path, &n1);
    ck_assert_int_eq(emq_open_ex(path, NULL, &db, err, sizeof err), EMQ_EWIRE);
    ck_assert_ptr_null(db);
    ck_assert_ptr_nonnull(strstr(err, "echomq:2.0.0"));
    ck_assert_ptr_nonnull(strstr(err, "echomq:4.0.0"));
    b2 = slurp(path, &n2);
    ck_assert_uint_eq(n1, n2);
    ck_assert_mem_eq(b1, b2, n1);
    ck_assert(!file_exists(wal));
    free(b1);
    free(b2);
    /* A read-only open refuses it too. */
    emq_options o;
    emq_options_init(&o);
    o.readonly = 1;
    ck_assert_int_eq(emq_open_ex(path, &o, &db, err, sizeof err), EMQ_EWIRE);
}
END_TEST

/* Issue 28: the identities of the table open; a new file takes the one
 * the options name; the file keeps it until emq_set_wire changes it. */
START_TEST(wire_identities_are_a_table_and_a_file_keeps_its_own)
{
    emq_db *db;
    emq_options o;
    const char *w, *was;
    char *v;
    ck_assert_str_eq(emq_wire_table(0), EMQ_WIRE);
    ck_assert_str_eq(emq_wire_table(1), "echomq:3.0.0");
    ck_assert_ptr_null(emq_wire_table(2));
    ck_assert_ptr_eq(emq_wire_known("echomq:3.0.0", 12), emq_wire_table(1));
    ck_assert_ptr_null(emq_wire_known("echomq:3.0.0", 11));
    ck_assert_ptr_null(emq_wire_known("echomq:2.0.0", 12));
    /* a file the runtime stamped opens and keeps its stamp */
    restamp("echomq:3.0.0");
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    ck_assert_int_eq(emq_wire(db, &w), EMQ_OK);
    ck_assert_str_eq(w, "echomq:3.0.0");
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", "x", 1),
                     EMQ_ENQUEUED);
    /* restamped on request, refused outside the table (nothing changed) */
    ck_assert_int_eq(emq_set_wire(db, "echomq:2.0.0", &was), EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "echomq:2.0.0"));
    ck_assert_int_eq(emq_set_wire(db, EMQ_WIRE, &was), EMQ_OK);
    ck_assert_str_eq(was, "echomq:3.0.0");
    v = tk_str(db, "{emq}:version");
    ck_assert_str_eq(v, EMQ_WIRE);
    free(v);
    emq_close(db);
    /* a new file takes the identity of the options; others are EINVAL */
    unlink(path);
    emq_options_init(&o);
    o.wire = "echomq:2.0.0";
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_EINVAL);
    ck_assert(!file_exists(path));
    o.wire = "echomq:3.0.0";
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_wire(db, &w), EMQ_OK);
    ck_assert_str_eq(w, "echomq:3.0.0");
    emq_close(db);
    /* an existing file keeps its own, whatever the options say */
    o.wire = EMQ_WIRE;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_wire(db, &w), EMQ_OK);
    ck_assert_str_eq(w, "echomq:3.0.0");
    emq_close(db);
    /* a read-only handle cannot restamp */
    o.readonly = 1;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_set_wire(db, EMQ_WIRE, NULL), EMQ_EREADONLY);
    emq_close(db);
}
END_TEST

START_TEST(fence_is_exact_no_minor_tolerance)
{
    emq_db *db;
    restamp("echomq:4.0.1");
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_EWIRE);
    restamp("echomq:4.0.0 ");
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_EWIRE);
}
END_TEST

START_TEST(an_absent_stamp_is_claimed_by_a_writer_and_refused_read_only)
{
    emq_db *db;
    emq_options o;
    char err[256];
    char *v;
    restamp(NULL);
    emq_options_init(&o);
    o.readonly = 1;
    ck_assert_int_eq(emq_open_ex(path, &o, &db, err, sizeof err), EMQ_EWIRE);
    ck_assert_ptr_nonnull(strstr(err, EMQ_WIRE));
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    v = tk_str(db, "{emq}:version");
    ck_assert_str_eq(v, EMQ_WIRE);
    free(v);
    emq_close(db);
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    emq_close(db);
}
END_TEST

START_TEST(a_version_key_of_another_type_is_refused)
{
    emq_db *db;
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    tk_del(db, "{emq}:version");
    tk_hset(db, "{emq}:version", "v", EMQ_WIRE);
    emq_close(db);
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_EWIRE);
}
END_TEST

START_TEST(a_read_only_handle_reads_and_refuses_writes)
{
    emq_db *db;
    emq_options o;
    int64_t n;
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", "x", 1), 1);
    emq_close(db);
    emq_options_init(&o);
    o.readonly = 1;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_pending_size(db, "q", &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000002", "x", 1),
                     EMQ_EREADONLY);
    ck_assert_str_ne(emq_errmsg(db), "");
    emq_close(db);
}
END_TEST

START_TEST(a_file_that_is_not_emqlite_is_refused_untouched)
{
    emq_db *db = NULL;
    FILE *f = fopen(path, "wb");
    size_t n;
    unsigned char *b;
    char side[320];
    fputs("this is not a database, just some bytes of text\n", f);
    fclose(f);
    ck_assert_int_lt(emq_open(path, NULL, &db), 0);
    ck_assert_ptr_null(db);
    b = slurp(path, &n);
    ck_assert_mem_eq(b, "this is not", 11);
    free(b);
    snprintf(side, sizeof side, "%s-emqnode", path);
    ck_assert(!file_exists(side));
}
END_TEST

/* --------------------------------------------------------------- node ids */

START_TEST(handles_on_one_file_lease_distinct_node_ids)
{
    emq_db *a, *b, *c, *d;
    ck_assert_int_eq(emq_open(path, NULL, &a), EMQ_OK);
    ck_assert_int_eq(emq_open(path, NULL, &b), EMQ_OK);
    ck_assert_int_eq(emq_open(path, NULL, &c), EMQ_OK);
    ck_assert_int_eq(emq_node_id(a), 0);
    ck_assert_int_eq(emq_node_id(b), 1);
    ck_assert_int_eq(emq_node_id(c), 2);
    emq_close(b);
    ck_assert_int_eq(emq_open(path, NULL, &d), EMQ_OK);
    ck_assert_int_eq(emq_node_id(d), 1);     /* the freed lease */
    emq_close(a);
    emq_close(c);
    emq_close(d);
}
END_TEST

START_TEST(an_explicit_node_id_is_used_and_skipped_by_leases)
{
    emq_db *a, *b;
    emq_options o;
    emq_options_init(&o);
    o.node_id = 0;
    ck_assert_int_eq(emq_open(path, &o, &a), EMQ_OK);
    ck_assert_int_eq(emq_node_id(a), 0);
    ck_assert_int_eq(emq_open(path, NULL, &b), EMQ_OK);
    ck_assert_int_eq(emq_node_id(b), 1);
    emq_close(a);
    emq_close(b);
    o.node_id = 1024;
    ck_assert_int_eq(emq_open(path, &o, &a), EMQ_EINVAL);
    o.node_id = -2;
    ck_assert_int_eq(emq_open(path, &o, &a), EMQ_EINVAL);
    o.node_id = 1023;
    ck_assert_int_eq(emq_open(":memory:", &o, &a), EMQ_OK);
    ck_assert_int_eq(emq_node_id(a), 1023);
    emq_close(a);
}
END_TEST

static int cmp_id(const void *x, const void *y)
{
    return memcmp(x, y, EMQ_ID_SIZE);
}

START_TEST(mints_of_two_handles_on_one_file_never_collide)
{
    enum { N = 6000 };
    emq_db *h[2];
    char (*ids)[EMQ_ID_SIZE] = malloc(2 * N * EMQ_ID_SIZE);
    char last[2][EMQ_ID_SIZE] = {"", ""};
    tclock c = {T0, 0};
    emq_options o;
    int i, k;
    emq_options_init(&o);
    o.clock = tclock_fn;
    o.clock_ctx = &c;
    ck_assert_int_eq(emq_open(path, &o, &h[0]), EMQ_OK);
    ck_assert_int_eq(emq_open(path, &o, &h[1]), EMQ_OK);
    ck_assert_int_ne(emq_node_id(h[0]), emq_node_id(h[1]));
    for (i = 0; i < N; i++) {
        if (i % 1000 == 999) c.now -= 5;        /* clock regressions */
        for (k = 0; k < 2; k++) {
            char *id = ids[2 * i + k];
            uint64_t snow;
            ck_assert_int_eq(emq_mint(h[k], "JOB", id), EMQ_OK);
            ck_assert_int_eq(emq_id_parse(id, EMQ_ID_LEN, NULL, &snow), 0);
            ck_assert_uint_eq(emq_snow_node(snow),
                              (unsigned)emq_node_id(h[k]));
            ck_assert_int_gt(strcmp(id, last[k]), 0);   /* strictly rising */
            memcpy(last[k], id, EMQ_ID_SIZE);
        }
    }
    qsort(ids, 2 * N, EMQ_ID_SIZE, cmp_id);
    for (i = 1; i < 2 * N; i++)
        ck_assert_int_ne(memcmp(ids[i - 1], ids[i], EMQ_ID_SIZE), 0);
    emq_close(h[0]);
    emq_close(h[1]);
    free(ids);
}
END_TEST

START_TEST(memory_handles_take_distinct_node_ids)
{
    emq_db *a, *b;
    ck_assert_int_eq(emq_open(":memory:", NULL, &a), EMQ_OK);
    ck_assert_int_eq(emq_open("", NULL, &b), EMQ_OK);
    ck_assert_int_ne(emq_node_id(a), emq_node_id(b));
    ck_assert_int_ge(emq_node_id(a), 0);
    ck_assert_int_le(emq_node_id(a), 1023);
    emq_close(a);
    emq_close(b);
}
END_TEST

/* ----------------------------------------------------------------- minting */

START_TEST(mint_uses_the_handle_clock_and_refuses_bad_namespaces)
{
    tclock c;
    emq_db *db = topen(&c);
    char id[EMQ_ID_SIZE];
    char ns[4];
    uint64_t snow;
    ck_assert_int_eq(emq_mint(db, "EVT", id), EMQ_OK);
    ck_assert_int_eq(emq_id_parse(id, EMQ_ID_LEN, ns, &snow), EMQ_OK);
    ck_assert_str_eq(ns, "EVT");
    ck_assert_int_ge(emq_snow_unix_ms(snow), T0);
    ck_assert_int_eq(emq_mint(db, "job", id), EMQ_EID);
    ck_assert_int_eq(emq_mint(db, "JOBS", id), EMQ_EID);
    ck_assert_int_eq(emq_mint(db, "JO", id), EMQ_EID);
    ck_assert_int_eq(emq_mint(db, NULL, id), EMQ_EINVAL);
    emq_close(db);
}
END_TEST

START_TEST(set_clock_replaces_and_restores_the_clock)
{
    tclock c, d = {42, 0};
    emq_db *db = topen(&c);
    ck_assert_int_eq(emq_now(db), T0);
    emq_set_clock(db, tclock_fn, &d);
    ck_assert_int_eq(emq_now(db), 42);
    emq_set_clock(db, NULL, NULL);
    ck_assert_int_gt(emq_now(db), INT64_C(1700000000000));
    emq_close(db);
}
END_TEST

/* ------------------------------------------------- options, codes, messages */

START_TEST(options_init_fills_the_documented_defaults)
{
    emq_options o;
    memset(&o, 0x5a, sizeof o);
    emq_options_init(&o);
    ck_assert_int_eq(o.synchronous, EMQ_SYNC_NORMAL);
    ck_assert_int_eq(o.busy_timeout_ms, 5000);
    ck_assert_int_eq(o.node_id, -1);
    ck_assert_ptr_null(o.clock);
    ck_assert_ptr_null(o.clock_ctx);
    ck_assert_int_eq(o.exclusive, 0);
    ck_assert_int_eq(o.readonly, 0);
    ck_assert_uint_eq(o.max_payload, UINT64_C(512) * 1024 * 1024);
    ck_assert_int_eq(o.checkpoint_frames, 4000);
    ck_assert_int_eq(o.page_size, 1024);
}
END_TEST

/* The page size of the file at `path`, from its header (bytes 16-17). */
static int header_page_size(void)
{
    size_t n;
    unsigned char *b = slurp(path, &n);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_ge(n, 100);
    int ps = b[16] << 8 | b[17];
    free(b);
    return ps == 1 ? 65536 : ps;
}

START_TEST(exclusive_handle_is_the_only_one)
{
    emq_db *db, *other = NULL;
    emq_options o, ro;
    emq_job job;
    char err[256] = "";
    emq_options_init(&o);
    o.exclusive = 1;
    o.busy_timeout_ms = 50;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", "x", 1),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_claim(db, "q", 30000, &job), EMQ_OK);
    ck_assert_int_eq(emq_complete(db, "q", job.id, job.attempts), EMQ_OK);
    emq_job_clear(&job);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000002", "y", 1),
                     EMQ_ENQUEUED);
    /* No -shm and no writer gate beside the file. */
    char side[400];
    snprintf(side, sizeof side, "%s-shm", path);
    ck_assert(!file_exists(side));
    snprintf(side, sizeof side, "%s-emqlock", path);
    ck_assert(!file_exists(side));
    /* Every other open, shared, exclusive or read-only, is refused. */
    emq_options_init(&ro);
    ro.busy_timeout_ms = 50;
    ck_assert_int_eq(emq_open_ex(path, &ro, &other, err, sizeof err),
                     EMQ_EBUSY);
    ck_assert_ptr_null(other);
    ck_assert_int_eq(emq_open(path, &o, &other), EMQ_EBUSY);
    ro.readonly = 1;
    ck_assert_int_eq(emq_open(path, &ro, &other), EMQ_EBUSY);
    emq_close(db);
    /* Closed: a shared handle opens it and finds what was committed. */
    emq_options_init(&ro);
    ck_assert_int_eq(emq_open(path, &ro, &other), EMQ_OK);
    int64_t n = 0;
    ck_assert_int_eq(emq_pending_size(other, "q", &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    emq_close(other);
}
END_TEST

/* An exclusive handle SIGKILLed mid-stream: every enqueue it acknowledged
 * is in the file when it is opened again (the same guarantee as shared
 * mode: the WAL recovers, the locks died with the process). */
START_TEST(exclusive_handle_killed_keeps_every_acknowledged_enqueue)
{
    int fds[2], status;
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        emq_db *db;
        emq_options o;
        char id[EMQ_ID_SIZE];
        close(fds[0]);
        emq_options_init(&o);
        o.exclusive = 1;
        if (emq_open(path, &o, &db) != EMQ_OK)
            _exit(2);
        for (int i = 0;; i++) {
            snprintf(id, sizeof id, "JOB%011d", i);
            if (emq_enqueue(db, "q", id, "x", 1) != EMQ_ENQUEUED)
                _exit(3);
            if (write(fds[1], &i, sizeof i) != (ssize_t)sizeof i)
                _exit(4);
        }
    }
    close(fds[1]);
    int last = -1, v;
    while (last < 300 && read(fds[0], &v, sizeof v) == (ssize_t)sizeof v)
        last = v;
    kill(pid, SIGKILL);
    while (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v)
        last = v;       /* acknowledgements written before it died */
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    ck_assert_int_ge(last, 300);
    emq_db *db;
    int64_t n = 0;
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    ck_assert_int_eq(emq_pending_size(db, "q", &n), EMQ_OK);
    /* Every acknowledged one, and at most the one committed unacknowledged. */
    ck_assert_int_ge(n, last + 1);
    ck_assert_int_le(n, last + 2);
    emq_close(db);
}
END_TEST

START_TEST(page_size_applies_to_a_new_file_only)
{
    emq_db *db;
    emq_options o;
    emq_options_init(&o);
    o.page_size = 2048;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(emq_enqueue(db, "q", "JOB00000000001", "p", 1),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    emq_close(db);
    ck_assert_int_eq(header_page_size(), 2048);
    /* An existing file keeps its own. */
    o.page_size = 8192;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    int64_t n = 0;
    ck_assert_int_eq(emq_pending_size(db, "q", &n), EMQ_OK);
    ck_assert_int_eq(n, 1);
    emq_close(db);
    ck_assert_int_eq(header_page_size(), 2048);
    /* Out of range or not a power of two: refused. */
    o.page_size = 3000;
    ck_assert_int_eq(emq_open(":memory:", &o, &db), EMQ_EINVAL);
    o.page_size = 256;
    ck_assert_int_eq(emq_open(":memory:", &o, &db), EMQ_EINVAL);
    o.page_size = 131072;
    ck_assert_int_eq(emq_open(":memory:", &o, &db), EMQ_EINVAL);
}
END_TEST

/* The ABI rule of emqlite.h: an options struct from an older header (a
 * shorter size) is filled and read only up to its size, the fields beyond
 * it taking their defaults; one from a newer header is accepted while its
 * unknown tail is zero and refused once a byte there is set. */
START_TEST(options_follow_the_abi_rule_both_ways)
{
    size_t older = offsetof(emq_options, checksums);
    unsigned char buf[sizeof(emq_options) + 32];
    char err[256] = "";
    emq_db *db = NULL;
    emq_export_options eo;
    emq_transfer_summary sum;

    memset(buf, 0x5a, sizeof buf);
    emq_options_init_size((emq_options *)(void *)buf, older);
    for (size_t i = older; i < sizeof buf; i++)
        ck_assert_uint_eq(buf[i], 0x5a); /* nothing written past its size */
    ck_assert_uint_eq(((emq_options *)(void *)buf)->size, older);
    ck_assert_int_eq(emq_open(":memory:", (emq_options *)(void *)buf, &db),
                     EMQ_OK);
    emq_close(db);

    emq_options_init_size((emq_options *)(void *)buf, sizeof buf);
    for (size_t i = sizeof(emq_options); i < sizeof buf; i++)
        ck_assert_uint_eq(buf[i], 0);
    ck_assert_int_eq(emq_open(":memory:", (emq_options *)(void *)buf, &db),
                     EMQ_OK);
    emq_close(db);
    buf[sizeof buf - 1] = 1; /* a field this library does not know */
    ck_assert_int_eq(emq_open_ex(":memory:", (emq_options *)(void *)buf, &db,
                                 err, sizeof err), EMQ_EINVAL);
    ck_assert_ptr_null(db);
    ck_assert_ptr_nonnull(strstr(err, "emq_options_init"));
    ((emq_options *)(void *)buf)->size = 0; /* never initialised */
    ck_assert_int_eq(emq_open(":memory:", (emq_options *)(void *)buf, &db),
                     EMQ_EINVAL);

    ck_assert_int_eq(emq_open(":memory:", NULL, &db), EMQ_OK);
    emq_export_options_init(&eo);
    ck_assert_uint_eq(eo.size, sizeof eo);
    ck_assert_int_eq(emq_digest(db, &eo, &sum), EMQ_OK);
    eo.size = 0;
    ck_assert_int_eq(emq_digest(db, &eo, &sum), EMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db),
                                 "emq_export_options_init"));
    emq_close(db);
}
END_TEST

START_TEST(open_refuses_bad_arguments)
{
    emq_db *db;
    emq_options o;
    char err[128] = "";
    ck_assert_int_eq(emq_open(":memory:", NULL, NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_open_ex(NULL, NULL, &db, err, sizeof err),
                     EMQ_EINVAL);
    ck_assert_ptr_null(db);
    ck_assert_str_ne(err, "");
    emq_options_init(&o);
    o.synchronous = 7;
    ck_assert_int_eq(emq_open(":memory:", &o, &db), EMQ_EINVAL);
}
END_TEST

/* emq_remove_files removes the file and every side file an open and a write
 * made (each one named here, so a side file added later without its suffix
 * in the library's list fails this test), leaves other files alone, takes
 * an absent file as done, tries every file when one cannot go (a
 * directory in the -wal's place: EMQ_EIO, errno EISDIR), and refuses a
 * path that names no file. */
START_TEST(remove_files_removes_the_file_and_every_side_file)
{
    static const char *const sfx[] = {"", "-wal", "-shm", "-emqlock",
                                      "-emqnode", "-emqwake"};
    char p[700], other[700];
    emq_db *db;
    char id[EMQ_ID_SIZE];
    DIR *d;
    struct dirent *e;
    int n = 0;
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
    ck_assert_int_ge(emq_enqueue(db, "q", id, "x", 1), 0);
    emq_close(db);
    snprintf(other, sizeof other, "%s/keep.txt", dir);
    fclose(fopen(other, "w"));
    /* every side file the library makes is one of the six named here */
    ck_assert_ptr_nonnull(d = opendir(dir));
    while ((e = readdir(d)) != NULL) {
        int known = e->d_name[0] == '.' || strcmp(e->d_name, "keep.txt") == 0;
        for (size_t i = 0; i < 6 && !known; i++) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            char w[700];
            snprintf(w, sizeof w, "%s%s", path, sfx[i]);
            known = strcmp(p, w) == 0;
        }
        ck_assert_msg(known, "an unnamed side file: %s", e->d_name);
    }
    closedir(d);
    for (size_t i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        n += file_exists(p);
    }
    ck_assert_int_ge(n, 4); /* the file, -emqlock, -emqnode, -emqwake */
    ck_assert_int_eq(emq_remove_files(path), EMQ_OK);
    for (size_t i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        ck_assert_msg(!file_exists(p), "%s is left", p);
    }
    ck_assert(file_exists(other));
    ck_assert_int_eq(emq_remove_files(path), EMQ_OK); /* nothing there */
    /* one that cannot go: the others still do */
    ck_assert_int_eq(emq_open(path, NULL, &db), EMQ_OK);
    emq_close(db);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    ck_assert_int_eq(mkdir(p, 0700), 0);
    errno = 0;
    ck_assert_int_eq(emq_remove_files(path), EMQ_EIO);
    ck_assert_int_eq(errno, EISDIR);
    ck_assert(!file_exists(path));
    snprintf(other, sizeof other, "%s-emqwake", path);
    ck_assert(!file_exists(other));
    ck_assert_int_eq(rmdir(p), 0);
    ck_assert_int_eq(emq_remove_files(NULL), EMQ_EINVAL);
    ck_assert_int_eq(emq_remove_files(""), EMQ_EINVAL);
    ck_assert_int_eq(emq_remove_files(":memory:"), EMQ_EINVAL);
    {
        static char lng[5000];
        memset(lng, 'a', sizeof lng - 1);
        errno = 0;
        ck_assert_int_eq(emq_remove_files(lng), EMQ_EIO);
        ck_assert_int_eq(errno, ENAMETOOLONG);
    }
}
END_TEST

/* The result table (EMQ_RESULT_MAP) is the one declaration of every code:
 * each row has every column, codes and names are distinct, failures sit in
 * the reserved range with an exception name, verdicts without one, and
 * emq_strerror answers each row's text. The header declares no code
 * outside the table (read from $srcdir/api/emqlite.h). */
START_TEST(result_table_gives_every_code_every_column)
{
    const emq_result_row *r, *o;
    size_t i, j, n = 0;
    for (i = 0; (r = emq_result_at(i)) != NULL; i++, n++) {
        ck_assert_msg(r->name && strncmp(r->name, "EMQ_", 4) == 0 &&
                      r->name[4], "row %zu: no name", i);
        ck_assert_msg(r->text && r->text[0], "%s: no text", r->name);
        ck_assert_msg(r->cls && r->cls[0], "%s: no class", r->name);
        ck_assert_msg(r->wire && r->exception && r->kind,
                      "%s: a NULL column", r->name);
        ck_assert_msg(r->exit >= 0 && r->exit <= 12, "%s: exit %d",
                      r->name, r->exit);
        if (r->code < 0) {
            ck_assert_msg(r->code <= -30001 && r->code > -31000,
                          "%s: %d outside the reserved range", r->name,
                          r->code);
            ck_assert_msg(r->exception[0], "%s: a failure with no "
                          "exception name", r->name);
            ck_assert_msg(r->exit != 0, "%s: a failure exiting 0", r->name);
            ck_assert_msg(!r->wire[0] || strcmp(r->wire, r->cls) == 0 ||
                          r->code == EMQ_EENGINE,
                          "%s: wire class %s but class %s", r->name,
                          r->wire, r->cls);
        } else {
            ck_assert_msg(!r->exception[0] && !r->wire[0],
                          "%s: a verdict with an exception or wire class",
                          r->name);
        }
        ck_assert_ptr_eq(emq_result_info(r->code), r);
        ck_assert_str_eq(emq_strerror(r->code), r->text);
        for (j = 0; j < i; j++) {
            o = emq_result_at(j);
            ck_assert_msg(o->code != r->code, "%s and %s share %d", o->name,
                          r->name, r->code);
            ck_assert_str_ne(o->name, r->name);
            ck_assert_str_ne(o->text, r->text);
            if (r->exception[0])
                ck_assert_str_ne(o->exception, r->exception);
        }
    }
    ck_assert_uint_ge(n, 44);
    ck_assert_ptr_null(emq_result_info(12345));
    ck_assert_str_eq(emq_strerror(12345), "unknown result code");
    ck_assert_str_eq(emq_errmsg(NULL), "");

    /* No code is declared outside the table. */
    const char *src = getenv("srcdir");
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s/api/emqlite.h", src ? src : ".");
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(path, sizeof path, "%s/../api/emqlite.h",
                 src ? src : ".");
        f = fopen(path, "r");
    }
    ck_assert_msg(f != NULL, "cannot read %s", path);
    while (fgets(line, sizeof line, f)) {
        char name[64];
        int v;
        if (sscanf(line, "#define EMQ_%63[A-Z_] (%d)", name, &v) == 2 ||
            sscanf(line, "#define EMQ_%63[A-Z_] %d", name, &v) == 2)
            ck_assert_msg(v > -30001 || (emq_result_info(v) != NULL &&
                          strcmp(emq_result_info(v)->name + 4, name) == 0),
                          "EMQ_%s = %d is declared outside EMQ_RESULT_MAP",
                          name, v);
    }
    fclose(f);
}
END_TEST

START_TEST(errmsg_names_the_last_failure_and_clears_on_the_next_call)
{
    tclock c;
    emq_db *db = topen(&c);
    int64_t n;
    ck_assert_str_eq(emq_errmsg(db), "");
    ck_assert_int_eq(emq_pending_size(db, "no good", &n), EMQ_EQUEUE);
    ck_assert_str_eq(emq_errmsg(db), "invalid queue name");
    ck_assert_int_eq(emq_pending_size(db, "fine", &n), EMQ_OK);
    ck_assert_str_eq(emq_errmsg(db), "");
    emq_close(db);
}
END_TEST

START_TEST(version_strings_are_reported)
{
    ck_assert_str_eq(emq_version(), EMQLITE_VERSION);
    ck_assert_ptr_nonnull(emq_sqlite_version());
    ck_assert_int_eq(emq_sqlite_version()[0], '3');
    emq_job j = {0};
    emq_job_clear(&j);
    emq_job_clear(NULL);
    emq_fields_free(NULL, 0);
    emq_queues_free(NULL, 0);
    emq_close(NULL);
}
END_TEST

Suite *suite_handle(void)
{
    Suite *s = suite_create("handle");
    TCase *t = tcase_create("file");
    tcase_add_checked_fixture(t, fsetup, fteardown);
    tcase_add_test(t, page_size_applies_to_a_new_file_only);
    tcase_add_test(t, exclusive_handle_is_the_only_one);
    tcase_add_test(t, exclusive_handle_killed_keeps_every_acknowledged_enqueue);
    tcase_add_test(t, open_stamps_a_fresh_file_and_reopens_it);
    tcase_add_test(t, fence_refuses_a_file_stamped_2_0_0_and_leaves_it_unchanged);
    tcase_add_test(t, wire_identities_are_a_table_and_a_file_keeps_its_own);
    tcase_add_test(t, fence_is_exact_no_minor_tolerance);
    tcase_add_test(t, an_absent_stamp_is_claimed_by_a_writer_and_refused_read_only);
    tcase_add_test(t, a_version_key_of_another_type_is_refused);
    tcase_add_test(t, a_read_only_handle_reads_and_refuses_writes);
    tcase_add_test(t, a_file_that_is_not_emqlite_is_refused_untouched);
    tcase_add_test(t, handles_on_one_file_lease_distinct_node_ids);
    tcase_add_test(t, an_explicit_node_id_is_used_and_skipped_by_leases);
    tcase_add_test(t, mints_of_two_handles_on_one_file_never_collide);
    tcase_add_test(t, remove_files_removes_the_file_and_every_side_file);
    suite_add_tcase(s, t);
    t = tcase_create("memory");
    tcase_add_test(t, memory_handles_take_distinct_node_ids);
    tcase_add_test(t, mint_uses_the_handle_clock_and_refuses_bad_namespaces);
    tcase_add_test(t, set_clock_replaces_and_restores_the_clock);
    tcase_add_test(t, options_init_fills_the_documented_defaults);
    tcase_add_test(t, options_follow_the_abi_rule_both_ways);
    tcase_add_test(t, open_refuses_bad_arguments);
    tcase_add_test(t, result_table_gives_every_code_every_column);
    tcase_add_test(t, errmsg_names_the_last_failure_and_clears_on_the_next_call);
    tcase_add_test(t, version_strings_are_reported);
    suite_add_tcase(s, t);
    return s;
}
