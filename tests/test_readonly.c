/*
 * test_readonly.c — suite "readonly": a read-only handle (issue 12, item 7)
 * never creates the database or emqlite's side files, and reads a file on
 * a read-only mount or a file it may not write: there no writer can exist,
 * so it reads the file as immutable instead of failing on the -shm it
 * cannot create.
 *
 * The mount case needs root (a bind mount remounted read-only inside the
 * test's scratch directory, always unmounted); without it the case says so
 * and passes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <check.h>
#include "emqlite.h"
#include "relutil.h"
#include "suites.h"

static char dir[256], path[320], mnt[320];
static rel_clock clk = {1767225600000};

static void setup(void)
{
    ck_assert_int_eq(rel_mkdtemp(dir, sizeof dir, "readonly"), 0);
    rel_path(path, sizeof path, dir, "r.db");
    rel_path(mnt, sizeof mnt, dir, "ro");
}

static void teardown(void)
{
    rel_rmrf(dir);
}

/* The mount case's directory, made and removed by Check's own process
 * (an unchecked fixture), so the mount the test made is undone even when
 * the test failed. */
static char mdir[256];

static void mount_setup(void)
{
    if (rel_mkdtemp(mdir, sizeof mdir, "readonly-mnt") != 0) abort();
}

static void mount_teardown(void)
{
    char m[320];
    rel_path(m, sizeof m, mdir, "ro");
    umount2(m, MNT_DETACH); /* EINVAL when nothing is mounted there */
    rel_rmrf(mdir);
}

static emq_options opts(int readonly)
{
    emq_options o;
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    o.readonly = readonly;
    return o;
}

static int exists(const char *p, const char *suffix)
{
    char q[400];
    struct stat sb;
    snprintf(q, sizeof q, "%s%s", p, suffix);
    return lstat(q, &sb) == 0;
}

/* A closed emqlite file at `p` with three pending jobs, no side file. */
static void make_file(const char *p)
{
    emq_options o = opts(0);
    emq_db *db;
    ck_assert_int_eq(emq_open(p, &o, &db), EMQ_OK);
    for (int i = 1; i <= 3; i++) {
        char id[EMQ_ID_SIZE] = "JOB0000000000x";
        id[13] = (char)('0' + i);
        ck_assert_int_eq(emq_enqueue(db, "q", id, "x", 1), EMQ_ENQUEUED);
    }
    emq_close(db);
    char q[400];
    snprintf(q, sizeof q, "%s-emqnode", p);
    unlink(q);
    snprintf(q, sizeof q, "%s-emqlock", p);
    unlink(q);
    snprintf(q, sizeof q, "%s-shm", p); /* kept by the writer's close */
    unlink(q);
}

/* Open read-only, read, check: 0 when all worked. */
static int read_and_check(const char *p)
{
    emq_options o = opts(1);
    emq_db *db = NULL;
    int64_t n = -1;
    char err[512];
    int rc = emq_open_ex(p, &o, &db, err, sizeof err);
    if (rc != EMQ_OK) {
        fprintf(stderr, "readonly: open %s: %s\n", p, err);
        return 1;
    }
    if (emq_pending_size(db, "q", &n) != EMQ_OK || n != 3) rc = 2;
    if (rc == EMQ_OK && rel_check(db, NULL, NULL, 1) != EMQ_OK) rc = 3;
    if (rc == EMQ_OK && emq_enqueue(db, "q", "JOB00000000009", "x", 1) !=
                            EMQ_EREADONLY)
        rc = 4;
    emq_close(db);
    return rc;
}

START_TEST(a_read_only_open_of_a_missing_file_creates_nothing)
{
    emq_options o = opts(1);
    emq_db *db = (emq_db *)1;
    char err[512];
    ck_assert_int_eq(emq_open_ex(path, &o, &db, err, sizeof err),
                     EMQ_ECANTOPEN);
    ck_assert_ptr_null(db);
    ck_assert_msg(strstr(err, path) && strstr(err, "no such file"), "%s",
                  err);
    ck_assert(!exists(path, ""));
    ck_assert(!exists(path, "-emqnode"));
    ck_assert(!exists(path, "-emqlock"));
}
END_TEST

START_TEST(a_read_only_handle_creates_no_side_file)
{
    make_file(path);
    ck_assert_int_eq(read_and_check(path), 0);
    ck_assert(!exists(path, "-emqnode"));
    ck_assert(!exists(path, "-emqlock"));
    /* an existing sidecar is used (a leased node), not replaced */
    emq_options o = opts(0);
    emq_db *w, *r;
    ck_assert_int_eq(emq_open(path, &o, &w), EMQ_OK);
    o = opts(1);
    ck_assert_int_eq(emq_open(path, &o, &r), EMQ_OK);
    ck_assert_int_ne(emq_node_id(r), emq_node_id(w));
    emq_close(r);
    emq_close(w);
}
END_TEST

/* A bind mount of a directory holding the file, remounted read-only. */
static int mount_ro(void)
{
    char src[320];
    rel_path(mnt, sizeof mnt, mdir, "ro");
    rel_path(src, sizeof src, mdir, "src");
    if (mkdir(src, 0755) != 0 || mkdir(mnt, 0755) != 0) return -1;
    rel_path(path, sizeof path, src, "r.db");
    make_file(path);
    if (mount(src, mnt, "none", MS_BIND, NULL) != 0) return -1;
    if (mount("none", mnt, "none", MS_BIND | MS_REMOUNT | MS_RDONLY,
              NULL) != 0)
        return -1;
    rel_path(path, sizeof path, mnt, "r.db");
    return 0;
}

START_TEST(check_works_on_a_read_only_mount)
{
    if (geteuid() != 0 || mount_ro() != 0) {
        fprintf(stderr, "readonly: cannot make a read-only mount here (%s); "
                "the mount case is skipped\n",
                geteuid() ? "not root" : "mount refused");
        return;
    }
    ck_assert_int_eq(read_and_check(path), 0);
    ck_assert(!exists(path, "-shm"));
    /* a read-write open says why it cannot */
    emq_options o = opts(0);
    emq_db *db = (emq_db *)1;
    char err[512];
    int rc = emq_open_ex(path, &o, &db, err, sizeof err);
    ck_assert_msg(rc == EMQ_EREADONLY || rc == EMQ_ECANTOPEN, "rc %d %s", rc,
                  err);
    ck_assert_ptr_null(db);
}
END_TEST

/* chmod 0444 in a directory the reader may not write: as root the reader
 * runs in a child dropped to uid 65534 (root ignores permissions). */
START_TEST(check_works_on_a_file_it_may_not_write)
{
    char sub[320];
    rel_path(sub, sizeof sub, dir, "locked");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    rel_path(path, sizeof path, sub, "r.db");
    make_file(path);
    ck_assert_int_eq(chmod(path, 0444), 0);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    if (geteuid() != 0) {
        ck_assert_int_eq(chmod(sub, 0555), 0);
        ck_assert_int_eq(read_and_check(path), 0);
        ck_assert_int_eq(chmod(sub, 0755), 0);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(9);
        _exit(read_and_check(path));
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_msg(WEXITSTATUS(st) == 0, "outcome %d", WEXITSTATUS(st));
    ck_assert(!exists(path, "-shm"));
}
END_TEST

Suite *suite_readonly(void)
{
    Suite *s = suite_create("readonly");
    TCase *t = tcase_create("readonly");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, a_read_only_open_of_a_missing_file_creates_nothing);
    tcase_add_test(t, a_read_only_handle_creates_no_side_file);
    tcase_add_test(t, check_works_on_a_file_it_may_not_write);
    suite_add_tcase(s, t);
    TCase *m = tcase_create("mount");
    tcase_add_checked_fixture(m, setup, teardown);
    tcase_add_unchecked_fixture(m, mount_setup, mount_teardown);
    tcase_add_test(m, check_works_on_a_read_only_mount);
    suite_add_tcase(s, m);
    return s;
}
