/*
 * soak_writers.c — the writers' turn (issue 27 item 9): writers on one
 * file, from many processes, take their turn first come, first served, so
 * a newcomer (emq_open's fence is a write) is not starved by processes
 * that write back to back. A standalone program (it forks); public API
 * only, so it runs against any build of the library.
 *
 *   tests/soak_writers                 the check (make check): rounds
 *                                      "contention" and "stopped and
 *                                      killed" below
 *   tests/soak_writers soak [SECS] [K...]
 *                                      by hand: for each K (default 2 4 8
 *                                      16), K processes each loop emq_open,
 *                                      5 enqueues, a claim and a complete,
 *                                      emq_close, for SECS (default 10);
 *                                      prints the writer waits (p50, p99,
 *                                      max) of the opens and of the writes
 *
 * Round "contention": one process writes back to back (write transactions
 * of 2000 enqueues, the next begun the instant the last ended) while 6
 * processes each open the file, enqueue 3 jobs and close it, 6 times (3
 * under EMQ_TEST_QUICK), with a busy timeout of 2000 ms. Before the turn,
 * SQLite's busy handler polled the lock (1, 2, 5 ... 100 ms apart) and
 * found it free only in the microseconds between two of the writer's
 * transactions: opens answered EMQ_EBUSY. With the turn the writer's next
 * transaction queues behind them, and each call waits for at most the
 * writers queued before it. Fails on any error (EMQ_EBUSY included);
 * prints the waits, and "writers: N passed, M failed".
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "emqlite.h"

#define Q "w"
#define CAP 200000 /* samples per process */
#define CONTENTION_BUSY_MS 2000

typedef struct shared {
    atomic_int stop;
    atomic_int go;
} shared;

typedef struct lane {          /* one process's samples, in µs */
    int64_t n_open, n_write, busy, errors;
    int32_t open_us[4096];
    int32_t write_us[CAP];
} lane;

static shared *sh;
static lane *lanes;
static int failed, passed;

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void note(lane *l, int rc, const char *what, emq_db *db)
{
    if (rc == EMQ_EBUSY) l->busy++;
    else l->errors++;
    if (l->busy + l->errors <= 3)
        fprintf(stderr, "writers: pid %d: %s: %s (%s)\n", (int)getpid(), what,
                emq_strerror(rc), db ? emq_errmsg(db) : "");
}

static int opened(const char *path, int busy_ms, lane *l, emq_db **db)
{
    emq_options o;
    char err[512] = "";
    int64_t t0 = mono_us();
    int rc;
    emq_options_init(&o);
    o.busy_timeout_ms = busy_ms;
    rc = emq_open_ex(path, &o, db, err, sizeof err);
    if (l->n_open < 4096) l->open_us[l->n_open++] = (int32_t)(mono_us() - t0);
    if (rc != EMQ_OK) {
        if (rc == EMQ_EBUSY) l->busy++;
        else l->errors++;
        if (l->busy + l->errors <= 3)
            fprintf(stderr, "writers: pid %d: open: %s\n", (int)getpid(),
                    err);
        return -1;
    }
    return 0;
}

static void write_one(emq_db *db, lane *l, int what)
{
    char id[EMQ_ID_SIZE];
    int64_t t0;
    int rc;
    emq_job j;
    if (what == 0) {
        if ((rc = emq_mint(db, "JOB", id)) != EMQ_OK) {
            note(l, rc, "mint", db);
            return;
        }
        t0 = mono_us();
        rc = emq_enqueue(db, Q, id, "x", 1);
        if (rc != EMQ_ENQUEUED) note(l, rc, "enqueue", db);
    } else {
        t0 = mono_us();
        rc = emq_claim(db, Q, 30000, &j);
        if (rc == EMQ_OK) {
            rc = emq_complete(db, Q, j.id, j.attempts);
            emq_job_clear(&j);
            if (rc != EMQ_OK) note(l, rc, "complete", db);
        } else if (rc != EMQ_EMPTY)
            note(l, rc, "claim", db);
    }
    if (l->n_write < CAP) l->write_us[l->n_write++] = (int32_t)(mono_us() - t0);
}

/* Writes back to back until told to stop: write transactions of BATCH
 * enqueues of the same ids (the first enqueues them, the later ones find
 * them there), the next begun as soon as the last ended. */
#define BATCH 2000
static void hammer(const char *path, lane *l)
{
    static char ids[BATCH][EMQ_ID_SIZE];
    static emq_item it[BATCH];
    static int verdicts[BATCH];
    emq_db *db;
    int i, rc;
    if (opened(path, 10000, l, &db) != 0) _exit(1);
    for (i = 0; i < BATCH; i++) {
        if ((rc = emq_mint(db, "JOB", ids[i])) != EMQ_OK) {
            note(l, rc, "mint", db);
            _exit(1);
        }
        it[i].id = ids[i];
        it[i].payload = "x";
        it[i].len = 1;
    }
    atomic_fetch_add(&sh->go, 1);
    while (!atomic_load(&sh->stop)) {
        int64_t t0 = mono_us();
        rc = emq_enqueue_many(db, Q, it, BATCH, verdicts);
        if (rc != EMQ_OK) note(l, rc, "enqueue_many", db);
        if (l->n_write < CAP)
            l->write_us[l->n_write++] = (int32_t)(mono_us() - t0);
    }
    emq_close(db);
    _exit(0);
}

/* Opens, writes `per` jobs, closes; `rounds` times, or until stop. */
static void opener(const char *path, int busy_ms, int rounds, int per,
                   int claim, lane *l)
{
    emq_db *db;
    int r, i;
    for (r = 0; rounds < 0 ? !atomic_load(&sh->stop) : r < rounds; r++) {
        if (opened(path, busy_ms, l, &db) != 0) continue;
        for (i = 0; i < per; i++) write_one(db, l, 0);
        if (claim) write_one(db, l, 1);
        emq_close(db);
    }
    _exit(0);
}

static int cmp32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* Percentiles of the samples of lanes [from, to): open or write. */
static void waits(const char *what, int from, int to, int opens, char *out,
                  size_t cap)
{
    int64_t n = 0, k = 0;
    int32_t *all;
    int i;
    for (i = from; i < to; i++) n += opens ? lanes[i].n_open : lanes[i].n_write;
    if (n == 0) {
        snprintf(out, cap, "%s: none", what);
        return;
    }
    all = malloc((size_t)n * sizeof *all);
    if (!all) {
        snprintf(out, cap, "%s: out of memory", what);
        return;
    }
    for (i = from; i < to; i++) {
        int64_t m = opens ? lanes[i].n_open : lanes[i].n_write;
        memcpy(all + k, opens ? lanes[i].open_us : lanes[i].write_us,
               (size_t)m * sizeof *all);
        k += m;
    }
    qsort(all, (size_t)n, sizeof *all, cmp32);
    snprintf(out, cap, "%s %lld: p50 %.1f ms, p99 %.1f ms, max %.1f ms", what,
             (long long)n, all[n / 2] / 1e3,
             all[(size_t)((double)(n - 1) * 0.99)] / 1e3, all[n - 1] / 1e3);
    free(all);
}

static int reap_all(pid_t *pids, int n)
{
    int i, st, bad = 0;
    for (i = 0; i < n; i++) {
        if (pids[i] <= 0) continue;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0)
            bad++;
    }
    return bad;
}

static int setup(char *dir, size_t cap, char *path, size_t pcap, int nlanes)
{
    const char *base = getenv("TMPDIR");
    emq_db *db;
    snprintf(dir, cap, "%s/emq-writers-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir)) return -1;
    snprintf(path, pcap, "%s/w.db", dir);
    if (emq_open(path, NULL, &db) != EMQ_OK) return -1;
    emq_close(db);
    memset(lanes, 0, sizeof *lanes * (size_t)nlanes);
    atomic_store(&sh->stop, 0);
    atomic_store(&sh->go, 0);
    return 0;
}

static void cleanup(const char *dir)
{
    static const char *const sfx[] = {"", "-wal", "-shm", "-emqwake",
                                      "-emqnode", "-emqlock"};
    char p[600];
    for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
        snprintf(p, sizeof p, "%s/w.db%s", dir, sfx[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void contention(void)
{
    enum { OPENERS = 6, HAMMERS = 1 };
    char dir[300], path[400], line[200];
    pid_t hp[HAMMERS], pids[OPENERS];
    int i, rounds = getenv("EMQ_TEST_QUICK") ? 3 : 6, bad;
    int busy_ms = getenv("EMQ_WRITERS_BUSY_MS")
                      ? atoi(getenv("EMQ_WRITERS_BUSY_MS"))
                      : CONTENTION_BUSY_MS;
    int64_t busy = 0, errors = 0, hw = 0;
    if (setup(dir, sizeof dir, path, sizeof path, OPENERS + HAMMERS) != 0) {
        printf("FAIL: contention: cannot set up a file\n");
        failed++;
        return;
    }
    for (i = 0; i < HAMMERS; i++)
        if ((hp[i] = fork()) == 0) hammer(path, &lanes[OPENERS + i]);
    while (atomic_load(&sh->go) < HAMMERS) {
        int st;
        if (waitpid(-1, &st, WNOHANG) > 0) {
            printf("FAIL: contention: a writing process exited\n");
            failed++;
            return;
        }
        usleep(1000);
    }
    for (i = 0; i < OPENERS; i++)
        if ((pids[i] = fork()) == 0)
            opener(path, busy_ms, rounds, 3, 0, &lanes[i]);
    bad = reap_all(pids, OPENERS);
    atomic_store(&sh->stop, 1);
    bad += reap_all(hp, HAMMERS);
    for (i = 0; i < OPENERS + HAMMERS; i++) {
        busy += lanes[i].busy;
        errors += lanes[i].errors;
        if (i >= OPENERS) hw += lanes[i].n_write;
    }
    waits("opens", 0, OPENERS, 1, line, sizeof line);
    printf("contention: %d processes x %d opens beside %d back-to-back "
           "writer (%lld transactions of %d enqueues): %s\n", OPENERS,
           rounds, HAMMERS, (long long)hw, BATCH, line);
    waits("writes", 0, OPENERS, 0, line, sizeof line);
    printf("contention: %s; EMQ_EBUSY %lld, other errors %lld\n", line,
           (long long)busy, (long long)errors);
    if (busy || errors || bad) {
        printf("FAIL: contention: %lld EMQ_EBUSY, %lld other errors, %d "
               "processes failed\n", (long long)busy, (long long)errors, bad);
        failed++;
    } else {
        printf("PASS: contention\n");
        passed++;
    }
    cleanup(dir);
}

/* A clock that stops its process inside the transaction once armed: the
 * transaction's clock is read after the turn and the write lock are held
 * (emq_db_tx_begin), so the process is stopped holding the turn. */
static int stop_armed;
static int64_t stopping_clock(void *ctx)
{
    (void)ctx;
    if (stop_armed) {
        stop_armed = 0;
        raise(SIGSTOP);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t ms_since(int64_t t0_us) { return (mono_us() - t0_us) / 1000; }

static int check(int ok, const char *what)
{
    if (!ok) printf("FAIL: stopped and killed: %s\n", what);
    return ok;
}

/*
 * Round "stopped and killed": process A is stopped (SIGSTOP) holding the
 * turn; a writer with a 300 ms busy timeout answers EMQ_EBUSY naming A's
 * process, in bounded time. Process B queues behind A and is stopped
 * there. A is SIGKILLed: the next writer passes both (A's process gone, B's
 * turn not taken in time) and commits; B, continued, queues again and
 * commits too.
 */
static void stopped_and_killed(void)
{
    char dir[300], path[400], id[EMQ_ID_SIZE], pid_s[32], err[512] = "";
    emq_options o;
    emq_db *db;
    pid_t a, b;
    int st, ok = 1, rc;
    int64_t t0, took;
    if (setup(dir, sizeof dir, path, sizeof path, 0) != 0) {
        printf("FAIL: stopped and killed: cannot set up a file\n");
        failed++;
        return;
    }
    if ((a = fork()) == 0) {
        emq_options_init(&o);
        o.clock = stopping_clock;
        if (emq_open(path, &o, &db) != EMQ_OK || emq_mint(db, "JOB", id))
            _exit(1);
        stop_armed = 1;
        _exit(emq_enqueue(db, Q, id, "a", 1) == EMQ_ENQUEUED ? 0 : 1);
    }
    ok &= check(waitpid(a, &st, WUNTRACED) == a && WIFSTOPPED(st),
                "process A did not stop in its transaction");
    snprintf(pid_s, sizeof pid_s, "process %d", (int)a);
    emq_options_init(&o);
    o.busy_timeout_ms = 300;
    t0 = mono_us();
    rc = emq_open_ex(path, &o, &db, err, sizeof err);
    took = ms_since(t0);
    ok &= check(rc == EMQ_EBUSY && strstr(err, pid_s) != NULL,
                "an open behind a stopped holder did not answer EMQ_EBUSY "
                "naming it");
    ok &= check(took >= 250 && took < 3000, "EMQ_EBUSY not at the timeout");
    printf("stopped and killed: behind a stopped holder, EMQ_EBUSY after "
           "%lld ms (busy timeout 300 ms): %s\n", (long long)took, err);
    if ((b = fork()) == 0) {
        emq_options_init(&o);
        o.busy_timeout_ms = 30000;
        if (emq_open(path, &o, &db) != EMQ_OK || emq_mint(db, "JOB", id))
            _exit(1);
        _exit(emq_enqueue(db, Q, id, "b", 1) == EMQ_ENQUEUED ? 0 : 1);
    }
    usleep(300000); /* B opens and queues behind A */
    kill(b, SIGSTOP);
    ok &= check(waitpid(b, &st, WUNTRACED) == b && WIFSTOPPED(st),
                "process B did not stop");
    kill(a, SIGKILL);
    waitpid(a, &st, 0);
    emq_options_init(&o);
    o.busy_timeout_ms = 5000;
    t0 = mono_us();
    rc = emq_open(path, &o, &db);
    took = ms_since(t0);
    ok &= check(rc == EMQ_OK, "an open after A was killed did not succeed");
    if (rc == EMQ_OK) {
        ok &= check(emq_mint(db, "JOB", id) == EMQ_OK &&
                        emq_enqueue(db, Q, id, "c", 1) == EMQ_ENQUEUED,
                    "an enqueue after A was killed did not succeed");
        emq_close(db);
    }
    kill(b, SIGCONT);
    ok &= check(waitpid(b, &st, 0) == b && WIFEXITED(st) &&
                    WEXITSTATUS(st) == 0,
                "process B, continued, did not commit");
    printf("stopped and killed: the open and enqueue after the holder's "
           "SIGKILL (a stopped writer queued too) took %lld ms\n",
           (long long)took);
    if (ok) {
        printf("PASS: stopped and killed\n");
        passed++;
    } else
        failed++;
    cleanup(dir);
}

/*
 * Round "stopped between writes": process A commits an enqueue (its handle
 * lingers on the turn, waiting for its next write: turn.c) and stops
 * (SIGSTOP) before writing again. A writer with a 300 ms busy timeout
 * takes the turn from the lingering head and commits (no time asserted:
 * a head it could not pass would make it answer EMQ_EBUSY); A,
 * continued, queues again, commits its second enqueue and closes.
 */
static void stopped_between_writes(void)
{
    char dir[300], path[400], id[EMQ_ID_SIZE];
    emq_options o;
    emq_db *db;
    emq_stats n;
    pid_t a;
    int st, ok = 1, rc = -1;
    int64_t t0, took = -1;
    if (setup(dir, sizeof dir, path, sizeof path, 0) != 0) {
        printf("FAIL: stopped between writes: cannot set up a file\n");
        failed++;
        return;
    }
    if ((a = fork()) == 0) {
        if (emq_open(path, NULL, &db) != EMQ_OK || emq_mint(db, "JOB", id) ||
            emq_enqueue(db, Q, id, "a1", 2) != EMQ_ENQUEUED)
            _exit(1);
        raise(SIGSTOP); /* between two writes, lingering on the turn */
        if (emq_mint(db, "JOB", id) ||
            emq_enqueue(db, Q, id, "a2", 2) != EMQ_ENQUEUED)
            _exit(1);
        emq_close(db);
        _exit(0);
    }
    if (!(waitpid(a, &st, WUNTRACED) == a && WIFSTOPPED(st))) {
        printf("FAIL: stopped between writes: process A did not stop\n");
        ok = 0;
    } else {
        emq_options_init(&o);
        o.busy_timeout_ms = 300;
        t0 = mono_us();
        if ((rc = emq_open(path, &o, &db)) == EMQ_OK) {
            if ((rc = emq_mint(db, "JOB", id)) == EMQ_OK)
                rc = emq_enqueue(db, Q, id, "b", 1);
            emq_close(db);
        }
        took = ms_since(t0);
        if (rc != EMQ_ENQUEUED) { /* EMQ_EBUSY at 300 ms: not passed */
            printf("FAIL: stopped between writes: the open and enqueue "
                   "behind a stopped process's lingering turn answered %d "
                   "after %lld ms (busy timeout 300 ms)\n", rc,
                   (long long)took);
            ok = 0;
        }
    }
    kill(a, SIGCONT);
    if (!(waitpid(a, &st, 0) == a && WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        printf("FAIL: stopped between writes: process A, continued, did not "
               "commit its second enqueue\n");
        ok = 0;
    }
    if (emq_open(path, NULL, &db) == EMQ_OK) {
        if (emq_stats_get(db, Q, &n) != EMQ_OK || n.pending != 3) {
            printf("FAIL: stopped between writes: %lld jobs pending, not "
                   "3\n", (long long)n.pending);
            ok = 0;
        }
        emq_close(db);
    }
    printf("stopped between writes: the open and enqueue behind a stopped "
           "process's lingering turn took %lld ms\n", (long long)took);
    if (ok) {
        printf("PASS: stopped between writes\n");
        passed++;
    } else
        failed++;
    cleanup(dir);
}

static void soak(int secs, int k)
{
    char dir[300], path[400], a[200], b[200];
    pid_t pids[64];
    int i, bad;
    int64_t busy = 0, errors = 0;
    if (k > 64) k = 64;
    if (setup(dir, sizeof dir, path, sizeof path, k) != 0) {
        printf("FAIL: soak K=%d: cannot set up a file\n", k);
        failed++;
        return;
    }
    for (i = 0; i < k; i++)
        if ((pids[i] = fork()) == 0) opener(path, 5000, -1, 5, 1, &lanes[i]);
    sleep((unsigned)secs);
    atomic_store(&sh->stop, 1);
    bad = reap_all(pids, k);
    for (i = 0; i < k; i++) {
        busy += lanes[i].busy;
        errors += lanes[i].errors;
    }
    waits("opens", 0, k, 1, a, sizeof a);
    waits("writes", 0, k, 0, b, sizeof b);
    printf("soak K=%d, %d s: %s; %s; EMQ_EBUSY %lld, other errors %lld\n", k,
           secs, a, b, (long long)busy, (long long)errors);
    if (busy || errors || bad) failed++;
    else passed++;
    cleanup(dir);
}

int main(int argc, char **argv)
{
    size_t size = sizeof *sh + 64 * sizeof *lanes;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    sh = m;
    lanes = (lane *)(void *)((char *)m + 64);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "soak") == 0) {
        int secs = argc > 2 ? atoi(argv[2]) : 10, i;
        static const int ks[] = {2, 4, 8, 16};
        if (secs < 1) secs = 1;
        if (argc > 3)
            for (i = 3; i < argc; i++) soak(secs, atoi(argv[i]));
        else
            for (i = 0; i < 4; i++) soak(secs, ks[i]);
    } else {
        contention();
        stopped_and_killed();
        stopped_between_writes();
    }
    printf("writers: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
