/*
 * web_bench.c — emqlite-web: how long the dashboard's handler takes to
 * answer a page of a big queue (issue 30 item 5; BENCHMARKS.md "The
 * dashboard's pages").
 *
 * Fills queue "big" of a file with N pending jobs (default 1,000,000; ids
 * minted, ~60-byte JSON payloads, 1000 per transaction) unless the file
 * already holds them, then times GET /api/queues/big/jobs?limit=50 through
 * emq_web_handle — the whole request: the read transaction, the rows of
 * the page, the JSON — at the head, at 10%, 50% and 99.99% of the set (a
 * cursor "0:ID" as the page's "next" gives it), from the tail, and a
 * payload-prefix search page (which reads up to 5000 rows), and the
 * overview. Each is run R times (default 21); the median and the maximum
 * are printed as a Markdown table.
 *
 * Usage: emqlite-web [--jobs N] [--db PATH] [--repeat R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "emqlite.h"
#include "emqlite_web.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_id(const void *a, const void *b)
{
    return memcmp(a, b, EMQ_ID_SIZE);
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "emqlite-web: %s: %s\n", what, emq_strerror(rc));
    exit(1);
}

/* Time one GET R times: median and max into m[0], m[1]; the body's job
 * count into *jobs. */
static void timed(emq_web *w, const char *path, const char *query, int r,
                  double *m, int *jobs)
{
    double *t = calloc((size_t)r, sizeof *t);
    emq_web_request q = {"GET", path, query, NULL, 0, NULL, 0};
    for (int i = 0; i < r; i++) {
        emq_web_response rs;
        double t0 = now_ms();
        int rc = emq_web_handle(w, &q, &rs);
        t[i] = now_ms() - t0;
        if (rc != EMQ_OK || rs.status != 200) {
            fprintf(stderr, "emqlite-web: %s?%s: %d %.200s\n", path, query,
                    rs.status, rs.body ? rs.body : "");
            exit(1);
        }
        if (i == 0 && jobs) {
            int n = 0;
            for (const char *p = rs.body; (p = strstr(p, "{\"id\":")); p++)
                n++;
            *jobs = n;
        }
        emq_web_response_clear(&rs);
    }
    qsort(t, (size_t)r, sizeof *t, cmp_d);
    m[0] = t[r / 2];
    m[1] = t[r - 1];
    free(t);
}

int main(int argc, char **argv)
{
    long n = 1000000, reps = 21;
    const char *path = NULL;
    char tmp[] = "/tmp/emqlite-web.XXXXXX", dbp[64];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--jobs") && i + 1 < argc) n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--db") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            reps = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: emqlite-web [--jobs N] [--db PATH] "
                    "[--repeat R]\n");
            return 1;
        }
    }
    if (n < 100 || reps < 1) {
        fprintf(stderr, "emqlite-web: --jobs >= 100, --repeat >= 1\n");
        return 1;
    }
    if (path == NULL) {
        if (mkdtemp(tmp) == NULL) { perror("mkdtemp"); return 1; }
        snprintf(dbp, sizeof dbp, "%s/web.db", tmp);
        path = dbp;
    }
    emq_db *db;
    int rc = emq_open(path, NULL, &db);
    if (rc != EMQ_OK) die("open", rc);
    char (*ids)[EMQ_ID_SIZE] = calloc((size_t)n, EMQ_ID_SIZE);
    int64_t have = 0;
    if ((rc = emq_pending_size(db, "big", &have)) != EMQ_OK)
        die("pending_size", rc);
    double t0 = now_ms();
    if (have < n) {
        emq_item it[1000];
        char pay[1000][80];
        int verdicts[1000];
        for (long at = 0; at < n; at += 1000) {
            long k = n - at < 1000 ? n - at : 1000;
            for (long i = 0; i < k; i++) {
                if ((rc = emq_mint(db, "JOB", ids[at + i])) != EMQ_OK)
                    die("mint", rc);
                int l = snprintf(pay[i], sizeof pay[i], "{\"to\":\"user%ld@"
                                 "example.com\",\"template\":\"welcome\"}",
                                 at + i);
                it[i].id = ids[at + i];
                it[i].payload = pay[i];
                it[i].len = (size_t)l;
            }
            if ((rc = emq_enqueue_many(db, "big", it, (size_t)k, verdicts)) !=
                EMQ_OK)
                die("enqueue_many", rc);
        }
        fprintf(stderr, "emqlite-web: %ld jobs enqueued in %.1f s\n", n,
                (now_ms() - t0) / 1e3);
    } else {
        /* the ids of a file filled before: read them page by page */
        emq_member *m;
        size_t got, at = 0;
        n = (long)have;
        ids = realloc(ids, (size_t)n * EMQ_ID_SIZE);
        while ((long)at < n) {
            if ((rc = emq_list(db, "big", "pending", NULL, (int64_t)at, 10000,
                               0, &m, &got)) != EMQ_OK)
                die("list", rc);
            if (got == 0) break;
            for (size_t i = 0; i < got; i++)
                memcpy(ids[at + i], m[i].member, EMQ_ID_SIZE);
            at += got;
            emq_members_free(m, got);
        }
        n = (long)at;
    }
    qsort(ids, (size_t)n, EMQ_ID_SIZE, cmp_id);
    emq_web *w;
    if ((rc = emq_web_new(db, NULL, &w)) != EMQ_OK) die("web_new", rc);
    printf("| request (queue of %ld pending jobs, 50 a page) | jobs | "
           "median ms | max ms |\n|---|---:|---:|---:|\n", n);
    const double at[] = {0.10, 0.50, 0.9999};
    double m[2];
    int jobs = 0;
    timed(w, "/api/queues/big/jobs", "limit=50", (int)reps, m, &jobs);
    printf("| first page | %d | %.2f | %.2f |\n", jobs, m[0], m[1]);
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        char q[96];
        long k = (long)(at[i] * (double)n);
        snprintf(q, sizeof q, "limit=50&after=0:%s", ids[k]);
        timed(w, "/api/queues/big/jobs", q, (int)reps, m, &jobs);
        printf("| page after job %ld (%.2f%%) | %d | %.2f | %.2f |\n", k,
               at[i] * 100, jobs, m[0], m[1]);
    }
    timed(w, "/api/queues/big/jobs", "limit=50&desc=1", (int)reps, m, &jobs);
    printf("| last page (from the tail) | %d | %.2f | %.2f |\n", jobs, m[0],
           m[1]);
    timed(w, "/api/queues/big/jobs",
          "limit=50&prefix=%7B%22to%22%3A%22user99", (int)reps, m, &jobs);
    printf("| payload-prefix search page (reads up to 5000 rows) | %d | "
           "%.2f | %.2f |\n", jobs, m[0], m[1]);
    char jp[64];
    snprintf(jp, sizeof jp, "/api/queues/big/jobs/%s", ids[n / 2]);
    timed(w, jp, "", (int)reps, m, NULL);
    printf("| a job's page | - | %.2f | %.2f |\n", m[0], m[1]);
    timed(w, "/api/queues/big", "", (int)reps, m, NULL);
    printf("| one queue's figures (emq_stats_get, lanes, series) | - | "
           "%.2f | %.2f |\n", m[0], m[1]);
    timed(w, "/api/overview", "", (int)reps, m, NULL);
    printf("| overview (every queue's figures) | - | %.2f | %.2f |\n", m[0],
           m[1]);
    emq_web_free(w);
    free(ids);
    emq_close(db);
    return 0;
}
