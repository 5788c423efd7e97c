/*
 * wake.c — emqlite-wake: what the waiting claim costs and how fast it wakes
 * (issue 17; figures in BENCHMARKS.md, never asserted).
 *
 *   emqlite-wake [--samples N] [--idle-ms MS] [--emqlite PATH] DIR
 *
 * 1. Wake latency across processes: a child process loops emq_claim_wait
 *    (no timeout) on one queue of DIR/wake.db; the parent enqueues one job
 *    at a time and waits for the child to report the CLOCK_MONOTONIC
 *    instant its emq_claim_wait returned the job, then waits a random
 *    0.5-2.5 ms (so the child is asleep again) and enqueues the next.
 *    Latency from the enqueue call: its commit (with an occasional WAL
 *    checkpoint), the signal, the futex wake-up, the look and the claim
 *    transaction; from the enqueue's return: the wake path alone.
 * 2. Idle CPU: a process blocked in emq_claim_wait on an empty queue for
 *    --idle-ms, and `emqlite work` (the tool, with its pump sweeping every
 *    second) idle as long; CPU time from wait4's rusage over the wall time.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "emqlite.h"

#define Q "wake"

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t pct(const int64_t *v, size_t n, double p)
{
    size_t k = (size_t)(p * (double)(n - 1) + 0.5);
    return v[k < n ? k : n - 1];
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "emqlite-wake: %s: %d %s\n", what, rc, emq_strerror(rc));
    exit(1);
}

/* The waiting child: claim, report the latency, complete. */
static void waiter(const char *path, int n, int out)
{
    emq_db *db;
    int rc, i;
    if ((rc = emq_open(path, NULL, &db)) != EMQ_OK) die("child open", rc);
    for (i = 0; i < n; i++) {
        emq_job j;
        int64_t t1;
        rc = emq_claim_wait(db, Q, 30000, -1, &j);
        t1 = mono_ns();
        if (rc != EMQ_OK) die("claim_wait", rc);
        if ((rc = emq_complete(db, Q, j.id, j.attempts)) != EMQ_OK)
            die("complete", rc);
        emq_job_clear(&j);
        if (write(out, &t1, sizeof t1) != (ssize_t)sizeof t1) _exit(2);
    }
    emq_close(db);
    _exit(0);
}

static void latency(const char *dir, int n)
{
    char path[4200];
    emq_db *db;
    int fd[2], i, rc, st;
    int64_t *v = calloc((size_t)n, sizeof *v);
    int64_t *w = calloc((size_t)n, sizeof *w);
    pid_t pid;
    unsigned seed = 12345;
    snprintf(path, sizeof path, "%s/wake.db", dir);
    unlink(path);
    if ((rc = emq_open(path, NULL, &db)) != EMQ_OK) die("open", rc);
    if (!v || !w || pipe(fd) != 0) die("pipe", EMQ_ENOMEM);
    if ((pid = fork()) == 0) {
        close(fd[0]);
        waiter(path, n, fd[1]);
    }
    close(fd[1]);
    for (i = 0; i < n; i++) {
        char id[EMQ_ID_SIZE];
        struct timespec pause = {0, 500000 + (long)(rand_r(&seed) % 2000000)};
        int64_t t0, tr, t1;
        nanosleep(&pause, NULL); /* the child is asleep in its wait again */
        if ((rc = emq_mint(db, "JOB", id)) != EMQ_OK) die("mint", rc);
        t0 = mono_ns();
        if ((rc = emq_enqueue(db, Q, id, "x", 1)) != EMQ_ENQUEUED)
            die("enqueue", rc);
        tr = mono_ns();
        if (read(fd[0], &t1, sizeof t1) != (ssize_t)sizeof t1)
            die("child died", EMQ_EIO);
        v[i] = t1 - t0; /* from the enqueue call */
        w[i] = t1 - tr; /* from its return: the commit was signalled */
    }
    waitpid(pid, &st, 0);
    qsort(v, (size_t)n, sizeof *v, cmp64);
    qsort(w, (size_t)n, sizeof *w, cmp64);
    printf("wake latency across processes, %d samples:\n", n);
    printf("  from the enqueue call:   p50 %.3f ms  p90 %.3f ms  p99 %.3f ms"
           "  max %.3f ms\n", pct(v, (size_t)n, 0.50) / 1e6,
           pct(v, (size_t)n, 0.90) / 1e6, pct(v, (size_t)n, 0.99) / 1e6,
           v[n - 1] / 1e6);
    printf("  from its return:         p50 %.3f ms  p90 %.3f ms  p99 %.3f ms"
           "  max %.3f ms\n", pct(w, (size_t)n, 0.50) / 1e6,
           pct(w, (size_t)n, 0.90) / 1e6, pct(w, (size_t)n, 0.99) / 1e6,
           w[n - 1] / 1e6);
    emq_close(db);
    free(v);
    free(w);
}

/* CPU share of a child over its wall time, from wait4's rusage. */
static double cpu_share(pid_t pid, int64_t t0, double *wall_s)
{
    struct rusage ru;
    int st;
    double cpu;
    wait4(pid, &st, 0, &ru);
    *wall_s = (double)(mono_ns() - t0) / 1e9;
    cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
          (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    return 100.0 * cpu / *wall_s;
}

static void idle(const char *dir, int64_t ms, const char *tool)
{
    char path[4200], tmo[32];
    emq_db *db;
    int64_t t0;
    double wall, share;
    pid_t pid;
    int rc;
    snprintf(path, sizeof path, "%s/idle.db", dir);
    unlink(path);
    if ((rc = emq_open(path, NULL, &db)) != EMQ_OK) die("open", rc);
    emq_close(db);
    t0 = mono_ns();
    if ((pid = fork()) == 0) {
        emq_job j;
        if (emq_open(path, NULL, &db) != EMQ_OK) _exit(1);
        rc = emq_claim_wait(db, Q, 30000, ms, &j);
        emq_close(db);
        _exit(rc == EMQ_EMPTY ? 0 : 1);
    }
    share = cpu_share(pid, t0, &wall);
    printf("idle emq_claim_wait, %.1f s: %.4f %% of a CPU\n", wall, share);
    if (!tool) return;
    snprintf(tmo, sizeof tmo, "%lldms", (long long)ms);
    t0 = mono_ns();
    if ((pid = fork()) == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, 1);
            dup2(nul, 2);
        }
        execl(tool, tool, "--db", path, "work", Q, "--timeout", tmo, "--",
              "true", (char *)NULL);
        _exit(127);
    }
    share = cpu_share(pid, t0, &wall);
    printf("idle `emqlite work` (pump every 1 s), %.1f s: %.4f %% of a "
           "CPU\n", wall, share);
}

int main(int argc, char **argv)
{
    int n = 2000, i;
    int64_t idle_ms = 10000;
    const char *tool = NULL, *dir = NULL;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--idle-ms") == 0 && i + 1 < argc)
            idle_ms = atoll(argv[++i]);
        else if (strcmp(argv[i], "--emqlite") == 0 && i + 1 < argc)
            tool = argv[++i];
        else if (argv[i][0] != '-')
            dir = argv[i];
        else
            break;
    }
    if (!dir || n < 1 || idle_ms < 1) {
        fprintf(stderr, "usage: emqlite-wake [--samples N] [--idle-ms MS] "
                "[--emqlite PATH] DIR\n");
        return 2;
    }
    latency(dir, n);
    idle(dir, idle_ms, tool);
    return 0;
}
