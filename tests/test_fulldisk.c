/*
 * test_fulldisk.c — suite "fulldisk": a full disk does not wedge the
 * workers (issue 12, item 11; storage/store.c, "room"). On a small tmpfs
 * filled to its last block by another file: an enqueue that needs the file
 * to grow answers EMQ_EFULL with nothing applied, while complete, retry,
 * extend, claim, reap and checkpoints keep committing in the room the WAL
 * and the file already own; once space is freed, enqueues succeed again.
 *
 * Needs root (mount -t tmpfs inside the test's scratch directory, always
 * unmounted); elsewhere the case says so and passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <check.h>
#include "emqlite.h"
#include "relutil.h"
#include "suites.h"

#define JOBS 300
#define HELD 60

static char dir[256], mnt[320], path[400], filler[400];
static rel_clock clk = {1767225600000};

/* Unchecked fixtures: they run in Check's own process, so the mount the
 * test (a child) made is unmounted even when the test failed. */
static void setup(void)
{
    if (rel_mkdtemp(dir, sizeof dir, "fulldisk") != 0) abort();
    rel_path(mnt, sizeof mnt, dir, "disk");
    if (mkdir(mnt, 0755) != 0) abort();
    snprintf(path, sizeof path, "%s/q.db", mnt);
    snprintf(filler, sizeof filler, "%s/filler", mnt);
}

static void teardown(void)
{
    umount2(mnt, MNT_DETACH); /* EINVAL when nothing is mounted there */
    rel_rmrf(dir);
}

/* Fill the file system: the filler grows until ENOSPC. Its size. */
static long fill(void)
{
    static char block[4096];
    long n = 0;
    int fd = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0644);
    ck_assert_int_ge(fd, 0);
    memset(block, 0xEE, sizeof block);
    while (write(fd, block, sizeof block) == (ssize_t)sizeof block) n++;
    /* the last partial block too */
    while (write(fd, block, 1) == 1) n++;
    ck_assert_int_eq(errno, ENOSPC);
    close(fd);
    return n;
}

static void payload(char *p, int i)
{
    memset(p, 'a' + i % 26, 200);
}

START_TEST(a_full_disk_refuses_growth_and_lets_workers_retire_jobs)
{
    emq_options o;
    emq_db *db;
    emq_job held[HELD];
    char id[EMQ_ID_SIZE], p[200];
    int i, rc, enq = 0;
    int64_t n;
    if (geteuid() != 0 ||
        mount("tmpfs", mnt, "tmpfs", 0, "size=3m,mode=0755") != 0) {
        fprintf(stderr, "fulldisk: cannot mount a tmpfs here (%s); the full "
                "disk case is skipped\n", geteuid() ? "not root" : "refused");
        return;
    }
    emq_options_init(&o);
    o.clock = rel_clock_fn;
    o.clock_ctx = &clk;
    o.checkpoint_frames = 64;
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    for (i = 0; i < JOBS; i++) {
        payload(p, i);
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        ck_assert_int_eq(emq_enqueue(db, "q", id, p, sizeof p), EMQ_ENQUEUED);
    }
    for (i = 0; i < HELD; i++)
        ck_assert_int_eq(emq_claim(db, "q", 3600000, &held[i]), EMQ_OK);
    ck_assert_int_gt(fill(), 0);

    /* growth: refused, typed, nothing applied */
    for (i = 0; i < 20000; i++) {
        payload(p, i);
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        rc = emq_enqueue(db, "q", id, p, sizeof p);
        if (rc != EMQ_ENQUEUED) break;
        enq++;
    }
    ck_assert_msg(rc == EMQ_EFULL, "enqueue on a full disk: rc %d (%s)", rc,
                  emq_errmsg(db));
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "full"));
    ck_assert_int_eq(emq_pending_size(db, "q", &n), EMQ_OK);
    ck_assert_int_eq(n, JOBS - HELD + enq);

    /* the workers: every shrinking transition commits, many times over
     * the WAL's cycle, with checkpoints between */
    for (i = 0; i < HELD; i++) {
        emq_job *j = &held[i];
        if (i % 3 == 0)
            rc = emq_complete(db, "q", j->id, j->attempts);
        else if (i % 3 == 1)
            rc = emq_retry(db, "q", j->id, j->attempts, 1000, 5, "full", 4);
        else
            rc = emq_lock_extend(db, "q", j->id, j->attempts, 60000);
        ck_assert_msg(rc >= 0, "job %d on a full disk: rc %d (%s)", i, rc,
                      emq_errmsg(db));
    }
    for (i = 0; i < 150; i++) {
        emq_job j;
        rc = emq_claim(db, "q", 1000, &j);
        ck_assert_msg(rc == EMQ_OK, "claim %d on a full disk: %d (%s)", i, rc,
                      emq_errmsg(db));
        ck_assert_int_eq(emq_complete(db, "q", j.id, j.attempts), EMQ_OK);
        emq_job_clear(&j);
        if (i % 25 == 0) ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    }
    clk.now += 3600000 * 2;
    ck_assert_int_eq(emq_reap(db, "q", &n), EMQ_OK);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(emq_promote(db, "q", 100, &n), EMQ_OK);
    ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);

    /* space again: growth again */
    ck_assert_int_eq(unlink(filler), 0);
    ck_assert_int_eq(emq_checkpoint(db), EMQ_OK);
    for (i = 0; i < 200; i++) {
        payload(p, i);
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        ck_assert_int_eq(emq_enqueue(db, "q", id, p, sizeof p), EMQ_ENQUEUED);
    }
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    for (i = 0; i < HELD; i++) emq_job_clear(&held[i]);
    emq_close(db);
    /* and the file reopens clean */
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    ck_assert_int_eq(rel_check(db, NULL, NULL, 1), EMQ_OK);
    emq_close(db);
}
END_TEST

Suite *suite_fulldisk(void)
{
    Suite *s = suite_create("fulldisk");
    TCase *t = tcase_create("fulldisk");
    tcase_add_unchecked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 30);
    tcase_add_test(t, a_full_disk_refuses_growth_and_lets_workers_retire_jobs);
    suite_add_tcase(s, t);
    return s;
}
