/*
 * emqlite-edge: the figures of an edge device's budget (BENCHMARKS.md
 * "Footprint", doc/RELIABILITY.md "Flash"), one measurement per run:
 *
 *   emqlite-edge rss  FILE [N]       open FILE, enqueue N jobs (10000), then
 *                                    claim and complete each; the process's
 *                                    peak RSS and heap
 *   emqlite-edge idle FILE [MS]      open FILE and wait in emq_claim_wait on
 *                                    an empty queue for MS ms (2000): an idle
 *                                    worker's peak RSS
 *   emqlite-edge io   FILE N SYNC [PAGE [FRAMES [BATCH]]]
 *                                    enqueue N jobs (100-byte payloads), one
 *                                    commit each (BATCH > 1: emq_enqueue_many
 *                                    of BATCH jobs a commit), with
 *                                    synchronous SYNC
 *                                    (normal|full), page size PAGE (1024)
 *                                    and checkpoint_frames FRAMES (4000);
 *                                    then claim and complete them: the
 *                                    bytes written per call from
 *                                    /proc/self/io (write_bytes)
 *
 * Each prints one line of "key=value" pairs. Peak RSS is the kernel's
 * (getrusage ru_maxrss, VmHWM); heap is glibc's mallinfo2 at the end of
 * each phase (arena + mmapped bytes in use). Under qemu-user the RSS
 * figures are the emulator's, not the program's: the heap figures are the
 * guest's own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "emqlite.h"

static void die(const char *what, emq_db *db, int rc)
{
    fprintf(stderr, "emqlite-edge: %s: %s (%s)\n", what, emq_strerror(rc),
            db ? emq_errmsg(db) : "");
    exit(1);
}

static long maxrss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static long heap_kib(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long)((mi.uordblks + mi.hblkhd) / 1024);
}

/* /proc/self/io's write_bytes (bytes this process caused to be sent to
 * the storage layer, counted as page-cache pages are dirtied) and
 * cancelled_write_bytes (dirty bytes dropped again, by a truncate). */
static void io_bytes(long long *written, long long *cancelled)
{
    char line[128];
    FILE *f = fopen("/proc/self/io", "r");
    *written = *cancelled = -1;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "write_bytes: %lld", written);
        sscanf(line, "cancelled_write_bytes: %lld", cancelled);
    }
    fclose(f);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void enqueue_n(emq_db *db, long n, size_t payload_len)
{
    char id[EMQ_ID_SIZE], payload[4096];
    int rc;
    memset(payload, 'x', sizeof payload);
    for (long i = 0; i < n; i++) {
        if ((rc = emq_mint(db, "JOB", id)) != EMQ_OK)
            die("mint", db, rc);
        if ((rc = emq_enqueue(db, "edge", id, payload, payload_len)) !=
            EMQ_ENQUEUED)
            die("enqueue", db, rc);
    }
}

static void enqueue_batched(emq_db *db, long n, long batch)
{
    char (*ids)[EMQ_ID_SIZE] = calloc((size_t)batch, EMQ_ID_SIZE);
    emq_item *items = calloc((size_t)batch, sizeof *items);
    int *verdicts = calloc((size_t)batch, sizeof *verdicts);
    static const char payload[100] = {'x'};
    int rc;
    if (!ids || !items || !verdicts)
        die("out of memory", NULL, EMQ_ENOMEM);
    for (long done = 0; done < n; done += batch) {
        long k = n - done < batch ? n - done : batch;
        for (long i = 0; i < k; i++) {
            if ((rc = emq_mint(db, "JOB", ids[i])) != EMQ_OK)
                die("mint", db, rc);
            items[i] = (emq_item){ids[i], payload, sizeof payload};
        }
        if ((rc = emq_enqueue_many(db, "edge", items, (size_t)k, verdicts)) !=
            EMQ_OK)
            die("enqueue_many", db, rc);
    }
    free(ids);
    free(items);
    free(verdicts);
}

static void drain_n(emq_db *db, long n)
{
    emq_job job;
    int rc;
    for (long i = 0; i < n; i++) {
        memset(&job, 0, sizeof job);
        if ((rc = emq_claim(db, "edge", 30000, &job)) != EMQ_OK)
            die("claim", db, rc);
        if ((rc = emq_complete(db, "edge", job.id, job.attempts)) != EMQ_OK)
            die("complete", db, rc);
        emq_job_clear(&job);
    }
}

int main(int argc, char **argv)
{
    emq_options o;
    emq_db *db = NULL;
    int rc;

    if (argc < 3) {
        fprintf(stderr, "usage: emqlite-edge rss|idle|io FILE [...]\n");
        return 2;
    }
    const char *mode = argv[1], *path = argv[2];
    emq_options_init(&o);

    if (strcmp(mode, "rss") == 0) {
        long n = argc > 3 ? atol(argv[3]) : 10000;
        long rss0 = maxrss_kib();
        if ((rc = emq_open(path, &o, &db)) != EMQ_OK)
            die("open", NULL, rc);
        long rss_open = maxrss_kib(), heap_open = heap_kib();
        enqueue_n(db, n, 100);
        long heap_enq = heap_kib();
        drain_n(db, n);
        long heap_done = heap_kib();
        emq_close(db);
        printf("mode=rss jobs=%ld maxrss_start_kib=%ld maxrss_open_kib=%ld "
               "maxrss_kib=%ld heap_open_kib=%ld heap_enqueued_kib=%ld "
               "heap_drained_kib=%ld\n", n, rss0, rss_open, maxrss_kib(),
               heap_open, heap_enq, heap_done);
        return 0;
    }
    if (strcmp(mode, "idle") == 0) {
        long ms = argc > 3 ? atol(argv[3]) : 2000;
        emq_job job;
        memset(&job, 0, sizeof job);
        if ((rc = emq_open(path, &o, &db)) != EMQ_OK)
            die("open", NULL, rc);
        double t0 = now_s();
        rc = emq_claim_wait(db, "idle", 30000, ms, &job);
        double waited = now_s() - t0;
        if (rc != EMQ_EMPTY)
            die("claim_wait on an empty queue", db, rc);
        long heap = heap_kib();
        emq_close(db);
        printf("mode=idle waited_ms=%.0f maxrss_kib=%ld heap_kib=%ld\n",
               waited * 1000, maxrss_kib(), heap);
        return 0;
    }
    if (strcmp(mode, "io") == 0 && argc >= 5) {
        long n = atol(argv[3]);
        long long w0, c0, w1, c1, w2, c2;
        if (strcmp(argv[4], "full") == 0)
            o.synchronous = EMQ_SYNC_FULL;
        else if (strcmp(argv[4], "normal") == 0)
            o.synchronous = EMQ_SYNC_NORMAL;
        else {
            fprintf(stderr, "emqlite-edge: SYNC is normal or full, not %s\n",
                    argv[4]);
            return 2;
        }
        if (argc > 5)
            o.page_size = atoi(argv[5]);
        if (argc > 6)
            o.checkpoint_frames = atoi(argv[6]);
        long batch = argc > 7 ? atol(argv[7]) : 1;
        if (n <= 0 || batch <= 0) {
            fprintf(stderr, "emqlite-edge: N and BATCH must be > 0\n");
            return 2;
        }
        if ((rc = emq_open(path, &o, &db)) != EMQ_OK)
            die("open", NULL, rc);
        /* a first job outside the count: the file's first pages */
        enqueue_n(db, 1, 100);
        drain_n(db, 1);
        io_bytes(&w0, &c0);
        double t0 = now_s();
        if (batch > 1)
            enqueue_batched(db, n, batch);
        else
            enqueue_n(db, n, 100);
        double t1 = now_s();
        io_bytes(&w1, &c1);
        drain_n(db, n);
        double t2 = now_s();
        io_bytes(&w2, &c2);
        emq_close(db);
        if (w0 < 0) {
            fprintf(stderr, "emqlite-edge: no /proc/self/io here\n");
            return 1;
        }
        printf("mode=io sync=%s page=%d frames=%d batch=%ld jobs=%ld "
               "enqueue_bytes=%.0f claim_complete_bytes=%.0f "
               "enqueue_cancelled=%.0f enqueue_us=%.0f claim_complete_us=%.0f\n",
               argv[4], o.page_size, o.checkpoint_frames, batch, n,
               (double)(w1 - w0) / n, (double)(w2 - w1) / n,
               (double)(c1 - c0) / n, (t1 - t0) * 1e6 / n,
               (t2 - t1) * 1e6 / n);
        return 0;
    }
    fprintf(stderr, "usage: emqlite-edge rss|idle|io FILE [...]\n");
    return 2;
}
