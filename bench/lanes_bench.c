/*
 * lanes.c — emqlite-lanes: what the fair lanes (PROTOCOL.md §6.3) buy and
 * what they cost.
 *
 * Fairness: 100 lanes of one queue, one of them holding 90% of the jobs
 * (enqueued first, as a noisy tenant's burst would be), drained by three
 * workers' loops — lane claims (weights ignored), weighted claims (weights
 * 1..4), grouped batch claims (every lane limited to 4) — each job completed
 * as soon as it is claimed. Reported: the share of the jobs each lane got
 * while every lane still had work, against the share its weight entitles it
 * to and against its share of the backlog, and when each light lane was
 * first served.
 *
 * Cost: a queue with 20,000 jobs waiting, spread over L lanes (10, 100,
 * 1,000, 10,000), in steady cycles — lane claim, complete, lane enqueue of
 * one job into a lane picked at random — timed per transition, against the
 * same cycle on a plain queue (claim, complete, enqueue). `--instr` runs
 * the cycles under callgrind, collecting each transition in turn
 * (bench/lanes.sh turns the dumps into instructions per transition).
 *
 *   emqlite-lanes [--dir D] [--jobs J] [--lanes L,...] [-n N] [--smoke]
 *   emqlite-lanes --instr [--lanes L | --plain] [-n N] [--dir D]
 *
 * The cost fixtures are written through storage/store.h in one transaction
 * (L offers through the API would cost O(L) each: that cost is what is
 * measured, not what should build the fixture); they are the keys the lane
 * verbs would have written. Every claim is checked (the group it served, the
 * job's token). Exit status: 0, or 1 when a check or a call failed, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "store.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define LANES_CALLGRIND 1
#endif
#endif
#ifndef LANES_CALLGRIND
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#define Q BENCH_QUEUE
#define FAIR_LANES 100
#define COST_PENDING 20000
#define MAX_L 8

static char dir[512] = "/tmp";
static uint64_t seq;                  /* job ids: bench_id(seq++) */

static int die(const char *what, emq_db *db, int rc)
{
    fprintf(stderr, "emqlite-lanes: %s: %s (%s)\n", what, emq_strerror(rc),
            db ? emq_errmsg(db) : "");
    return -1;
}

static void group_id(int i, char g[EMQ_ID_SIZE])
{
    emq_id_encode("PRT", (uint64_t)i + 1, g);
}

static void file_path(char *p, size_t n, const char *tag)
{
    snprintf(p, n, "%s/emqlite-lanes.%d.%s.db", dir, (int)getpid(), tag);
}

static emq_db *open_file(const char *path)
{
    emq_options o;
    emq_db *db = NULL;
    emq_options_init(&o);
    int rc = emq_open(path, &o, &db);
    if (rc != EMQ_OK) {
        die("open", NULL, rc);
        return NULL;
    }
    return db;
}

/* ------------------------------------------------------------- fairness */

enum { FAIR_ONE, FAIR_WEIGHTED, FAIR_BATCH };

typedef struct lane_tally {
    char g[EMQ_ID_SIZE];
    int64_t depth;        /* jobs enqueued                          */
    int64_t weight;
    int64_t served;       /* jobs served inside the window          */
    int64_t first;        /* claim call that first served it, or -1 */
} lane_tally;

/* Lane 0 holds 90% of `jobs`, the other 99 share the rest evenly; the
 * heavy lane is filled first. Weights (FAIR_WEIGHTED): 1 for the heavy
 * lane, 1..4 in turn for the others. Limits (FAIR_BATCH): 4 for all. */
static int fair_fill(emq_db *db, int how, int64_t jobs, lane_tally *t)
{
    int64_t heavy = jobs * 9 / 10, rest = jobs - heavy, k;
    char id[EMQ_ID_SIZE];
    int i, rc;
    for (i = 0; i < FAIR_LANES; i++) {
        memset(&t[i], 0, sizeof t[i]);
        group_id(i, t[i].g);
        t[i].depth = i == 0 ? heavy : rest / (FAIR_LANES - 1) +
                     (i <= rest % (FAIR_LANES - 1));
        t[i].weight = how == FAIR_WEIGHTED && i > 0 ? i % 4 + 1 : 1;
        t[i].first = -1;
        if (how == FAIR_WEIGHTED &&
            (rc = emq_lane_weight(db, Q, t[i].g, t[i].weight)) < 0)
            return die("weight", db, rc);
        if (how == FAIR_BATCH &&
            (rc = emq_lane_limit(db, Q, t[i].g, 4)) < 0)
            return die("limit", db, rc);
        for (k = 0; k < t[i].depth; k++) {
            bench_id(seq++, id);
            rc = emq_lane_enqueue(db, Q, t[i].g, id, bench_payload,
                                  BENCH_PAYLOAD);
            if (rc != EMQ_ENQUEUED) return die("lane enqueue", db, rc);
        }
    }
    return 0;
}

static int lane_of(const lane_tally *t, const char *g)
{
    int i;
    for (i = 0; i < FAIR_LANES; i++)
        if (strcmp(t[i].g, g) == 0) return i;
    return -1;
}

/* One claim call of kind `how`: the jobs served go to `t` (inside the
 * window), all completed. Returns the number served (0: empty), or -1. */
static int64_t fair_claim(emq_db *db, int how, lane_tally *t, int64_t call,
                          int in_window)
{
    emq_lane_batch b;
    emq_job j;
    size_t i;
    int rc, lane;
    memset(&b, 0, sizeof b);
    if (how == FAIR_ONE) {
        rc = emq_lane_claim(db, Q, BENCH_LEASE_MS, &j, b.group);
        if (rc == EMQ_OK) {
            b.jobs = &j;
            b.n = 1;
        }
    } else {
        rc = how == FAIR_WEIGHTED ? emq_lane_wclaim(db, Q, BENCH_LEASE_MS, &b)
                                  : emq_lane_bclaim(db, Q, BENCH_LEASE_MS, &b);
    }
    if (rc == EMQ_EMPTY) return 0;
    if (rc != EMQ_OK) return die("claim", db, rc);
    if ((lane = lane_of(t, b.group)) < 0) {
        fprintf(stderr, "emqlite-lanes: a claim served an unknown group\n");
        return -1;
    }
    if (t[lane].first < 0) t[lane].first = call;
    if (in_window) t[lane].served += (int64_t)b.n;
    for (i = 0; i < b.n && rc == EMQ_OK; i++) {
        if (b.jobs[i].payload_len != BENCH_PAYLOAD || b.jobs[i].attempts != 1)
            rc = EMQ_ECORRUPT;
        else
            rc = emq_complete(db, Q, b.jobs[i].id, b.jobs[i].attempts);
    }
    int64_t n = (int64_t)b.n;
    if (b.jobs == &j) emq_job_clear(&j);
    else emq_lane_batch_clear(&b);
    return rc == EMQ_OK ? n : die("complete", db, rc);
}

static const char *const fair_name[] = {
    "lane_claim (one job per rotation, weights ignored)",
    "wclaim (min(weight, depth) jobs per rotation; weights 1..4)",
    "bclaim (the lane up to its limit per rotation; every lane limited to 4)",
};

/* One drain: fill, then claim until empty; the window is the first R
 * rotations, R = the number every light lane can fill with its share. */
static int fairness(int how, int64_t jobs)
{
    char path[1024];
    lane_tally t[FAIR_LANES];
    int64_t call = 0, total = 0, got, window, per, rot, wsum = 0,
            inw = 0, first_max = 0;
    double t0, t1;
    emq_db *db;
    int i, rc = -1;

    file_path(path, sizeof path, "fair");
    emq_remove_files(path);
    if ((db = open_file(path)) == NULL) return -1;
    if (fair_fill(db, how, jobs, t) < 0) goto done;
    /* rotations every light lane survives: depth / (jobs per rotation) */
    rot = INT64_MAX;
    for (i = 1; i < FAIR_LANES; i++) {
        per = how == FAIR_ONE ? 1 : how == FAIR_WEIGHTED ? t[i].weight : 4;
        if (t[i].depth / per < rot) rot = t[i].depth / per;
        wsum += how == FAIR_WEIGHTED ? t[i].weight : 1;
    }
    wsum += 1;                         /* the heavy lane: weight 1 */
    window = rot * FAIR_LANES;         /* one rotation = one claim a lane */
    t0 = bench_now();
    while ((got = fair_claim(db, how, t, call, call < window)) > 0) {
        call++;
        total += got;
    }
    t1 = bench_now();
    if (got < 0) goto done;
    if (total != jobs) {
        fprintf(stderr, "emqlite-lanes: drained %lld of %lld jobs\n",
                (long long)total, (long long)jobs);
        goto done;
    }
    for (i = 0; i < FAIR_LANES; i++) {
        inw += t[i].served;
        if (i > 0 && t[i].first > first_max) first_max = t[i].first;
    }
    printf("\n#### %s\n\n", fair_name[how]);
    printf("%lld jobs over %d lanes (lane 1: %lld jobs, %.0f%% of the "
           "backlog, enqueued first), drained in %lld claim calls, %.2f s "
           "(%.0f jobs/s claimed and completed). Window: the first %lld "
           "rotations (%lld claim calls, %lld jobs), while every lane had "
           "work. Every light lane was first served by claim call %lld at "
           "the latest (a plain FIFO queue would first serve one after "
           "%lld claims).\n\n",
           (long long)jobs, FAIR_LANES, (long long)t[0].depth,
           100.0 * (double)t[0].depth / (double)jobs, (long long)call,
           t1 - t0, (double)jobs / (t1 - t0), (long long)rot,
           (long long)window, (long long)inw, (long long)first_max + 1,
           (long long)t[0].depth);
    printf("| lanes | weight | backlog share (each) | share entitled "
           "(weight / sum) | share served in the window (min – max) |\n"
           "|---|---:|---:|---:|---:|\n");
    for (int w = 0; w <= 4; w++) {
        double lo = 2, hi = -1, bl = 0, ent = 0;
        int n = 0, a = -1;
        for (i = 0; i < FAIR_LANES; i++) {
            if ((w == 0) != (i == 0) || (w > 0 && t[i].weight != w)) continue;
            double s = (double)t[i].served / (double)inw;
            if (s < lo) lo = s;
            if (s > hi) hi = s;
            bl = (double)t[i].depth / (double)jobs;
            ent = (double)(how == FAIR_WEIGHTED ? t[i].weight : 1) /
                  (double)wsum;
            if (a < 0) a = i;
            n++;
        }
        if (n == 0) continue;
        if (w == 0) printf("| the heavy one |");
        else printf("| %d light ones |", n);
        printf(" %lld | %.2f%% | %.2f%% | %.2f%% – %.2f%% |\n",
               (long long)t[a].weight, 100 * bl, 100 * ent, 100 * lo,
               100 * hi);
    }
    rc = 0;
done:
    emq_close(db);
    emq_remove_files(path);
    return rc;
}

/* ----------------------------------------------------------------- cost */

/* The keys L lane enqueues of `pending` jobs leave: rows, lanes, the ring
 * (every group once, in lane order), the wake tokens (64, the cap). With
 * L = 0 a plain queue of `pending` jobs. One store transaction. */
static int cost_fixture(const char *path, int L, int64_t pending)
{
    emq_store_opts o = {.synchronous = EMQ_SYNC_NORMAL, .busy_timeout_ms = 5000};
    emq_store *st = NULL;
    char err[256], id[EMQ_ID_SIZE], g[EMQ_ID_SIZE], k[128];
    const char *ring = "emq:{" Q "}:ring", *wake = "emq:{" Q "}:wake";
    int64_t i, len;
    int added, rc = emq_store_open(path, &o, &st, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "emqlite-lanes: store open: %s\n", err);
        return -1;
    }
    if ((rc = emq_store_begin(st, 1, 0)) < 0) goto done;
    for (i = 0; i < pending && rc >= 0; i++) {
        int lane = L ? (int)(i % L) : 0;
        emq_bytes fv[8] = {{"state", 5}, {"pending", 7}, {"attempts", 8},
                           {"0", 1}, {"payload", 7},
                           {bench_payload, BENCH_PAYLOAD}, {"group", 5},
                           {g, EMQ_ID_LEN}};
        bench_id(seq++, id);
        group_id(lane, g);
        snprintf(k, sizeof k, "emq:{" Q "}:job:%s", id);
        rc = emq_hash_set(st, k, strlen(k), fv, L ? 4 : 3, &added);
        if (L) snprintf(k, sizeof k, "emq:{" Q "}:g:%s:pending", g);
        else snprintf(k, sizeof k, "emq:{" Q "}:pending");
        if (rc >= 0)
            rc = emq_zset_add(st, k, strlen(k), id, EMQ_ID_LEN, 0, &added);
    }
    for (i = 0; i < L && rc >= 0; i++) {
        group_id((int)i, g);
        rc = emq_list_push(st, ring, strlen(ring), 1, g, EMQ_ID_LEN, &len);
    }
    for (i = 0; L && i < 64 && rc >= 0; i++)
        rc = emq_list_push(st, wake, strlen(wake), 0, "1", 1, &len);
    if (rc >= 0) rc = emq_store_commit(st);
    else emq_store_rollback(st);
done:
    if (rc < 0)
        fprintf(stderr, "emqlite-lanes: fixture: %s\n", emq_store_errmsg(st));
    emq_store_close(st);
    return rc < 0 ? -1 : 0;
}

enum { T_CLAIM, T_COMPLETE, T_ENQUEUE, T_N };

/* Which transition callgrind collects (--instr), or -1 (timed run). */
static int collect = -1;

#define TIMED(which, call)                                              \
    do {                                                                \
        double a_ = 0;                                                  \
        if (collect == (which)) CALLGRIND_TOGGLE_COLLECT;               \
        else if (us) a_ = bench_now();                                  \
        rc = (call);                                                    \
        if (collect == (which)) CALLGRIND_TOGGLE_COLLECT;               \
        else if (us) us[which][i] = (bench_now() - a_) * 1e6;           \
    } while (0)

/* A fixed xorshift sequence: the lane each cycle's producer picks. */
static uint64_t next_rand(void)
{
    static uint64_t x = 88172645463325252u;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

/* n cycles on a fixture of L lanes (0: the plain queue). `us` (may be
 * NULL): the latency of each transition of each cycle. */
static int cycles(emq_db *db, int L, int64_t n, double *us[T_N])
{
    char id[EMQ_ID_SIZE], g[EMQ_ID_SIZE], last[EMQ_ID_SIZE] = "";
    emq_job j;
    int64_t i;
    int rc = EMQ_OK;
    for (i = 0; i < n; i++) {
        if (L) TIMED(T_CLAIM, emq_lane_claim(db, Q, BENCH_LEASE_MS, &j, g));
        else TIMED(T_CLAIM, emq_claim(db, Q, BENCH_LEASE_MS, &j));
        if (rc != EMQ_OK) return die("claim", db, rc);
        /* the ring serves the lanes in turn: never the same one twice in a
         * row while several hold work */
        if (L > 1 && strcmp(g, last) == 0) {
            fprintf(stderr, "emqlite-lanes: lane %s served twice\n", g);
            emq_job_clear(&j);
            return -1;
        }
        if (L) memcpy(last, g, sizeof last);
        TIMED(T_COMPLETE, emq_complete(db, Q, j.id, j.attempts));
        emq_job_clear(&j);
        if (rc != EMQ_OK) return die("complete", db, rc);
        bench_id(seq++, id);
        if (L) group_id((int)(next_rand() % (uint64_t)L), g);
        if (L) TIMED(T_ENQUEUE, emq_lane_enqueue(db, Q, g, id, bench_payload,
                                                 BENCH_PAYLOAD));
        else TIMED(T_ENQUEUE, emq_enqueue(db, Q, id, bench_payload,
                                          BENCH_PAYLOAD));
        if (rc != EMQ_ENQUEUED) return die("enqueue", db, rc);
    }
    return 0;
}

#define WARMUP 500

/* Build the fixture of L lanes, warm up, run: timed (`lat` filled, one
 * summary per transition) or under callgrind (one dump per transition). */
static int cost_run(int L, int64_t n, bench_lat lat[T_N])
{
    char path[1024];
    double *us[T_N] = {NULL, NULL, NULL};
    emq_db *db = NULL;
    int t, rc = -1;
    file_path(path, sizeof path, "cost");
    emq_remove_files(path);
    if (cost_fixture(path, L, COST_PENDING) < 0) goto done;
    if ((db = open_file(path)) == NULL) goto done;
    if (cycles(db, L, WARMUP, NULL) < 0) goto done;
    if (lat) {
        for (t = 0; t < T_N; t++)
            if ((us[t] = malloc((size_t)n * sizeof *us[t])) == NULL) goto done;
        if (cycles(db, L, n, us) < 0) goto done;
        for (t = 0; t < T_N; t++) bench_lat_summary(us[t], (size_t)n, &lat[t]);
    } else {
        static const char *const tag[T_N] = {"claim", "complete", "enqueue"};
        for (t = 0; t < T_N; t++) {
            collect = t;
            if (cycles(db, L, n, NULL) < 0) goto done;
            CALLGRIND_DUMP_STATS_AT(tag[t]);
        }
        collect = -1;
    }
    rc = 0;
done:
    for (t = 0; t < T_N; t++) free(us[t]);
    emq_close(db);
    emq_remove_files(path);
    return rc;
}

static int cost_table(const int *ls, int nl, int64_t n)
{
    bench_lat plain[T_N], lat[T_N];
    int k;
    if (cost_run(0, n, plain) < 0) return -1;
    printf("\n#### Time per transition against the number of lanes "
           "(%d jobs waiting, %lld timed cycles after %d warm-up; p50 µs, "
           "mean in brackets)\n\n"
           "| lanes | lane_claim | ×claim | complete (grouped) | ×complete "
           "| lane_enqueue (random lane) | ×enqueue |\n|---:|---:|---:|---:|"
           "---:|---:|---:|\n", COST_PENDING, (long long)n, WARMUP);
    printf("| plain queue | %.1f (%.1f) | 1.00 | %.1f (%.1f) | 1.00 | "
           "%.1f (%.1f) | 1.00 |\n", plain[0].p50, plain[0].mean,
           plain[1].p50, plain[1].mean, plain[2].p50, plain[2].mean);
    for (k = 0; k < nl; k++) {
        if (cost_run(ls[k], n, lat) < 0) return -1;
        printf("| %d | %.1f (%.1f) | %.2f | %.1f (%.1f) | %.2f | %.1f "
               "(%.1f) | %.2f |\n", ls[k], lat[0].p50, lat[0].mean,
               lat[0].p50 / plain[0].p50, lat[1].p50, lat[1].mean,
               lat[1].p50 / plain[1].p50, lat[2].p50, lat[2].mean,
               lat[2].p50 / plain[2].p50);
        fflush(stdout);
    }
    return 0;
}

/* ----------------------------------------------------------------- main */

static int parse_lanes(const char *s, int *ls, int *nl)
{
    char *end;
    *nl = 0;
    while (*s && *nl < MAX_L) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > COST_PENDING / 2) return -1;
        ls[(*nl)++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return *nl ? 0 : -1;
}

static int usage(void)
{
    fputs("usage: emqlite-lanes [--dir D] [--jobs J] [--lanes L,...] [-n N] "
          "[--smoke]\n"
          "       emqlite-lanes --instr [--lanes L | --plain] [-n N] "
          "[--dir D]   (under callgrind)\n", stderr);
    return 2;
}

int main(int argc, char **argv)
{
    int ls[MAX_L] = {10, 100, 1000, 10000}, nl = 4, instr = 0, plain = 0;
    int64_t jobs = 100000, n = 2000;
    int i, how;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--smoke") == 0) {
            jobs = 2000;
            n = 50;
            ls[0] = 10;
            ls[1] = 100;
            nl = 2;
        } else if (strcmp(a, "--instr") == 0) {
            instr = 1;
        } else if (strcmp(a, "--plain") == 0) {
            plain = 1;
        } else if (strcmp(a, "--dir") == 0 && v) {
            snprintf(dir, sizeof dir, "%s", v);
            i++;
        } else if (strcmp(a, "--jobs") == 0 && v && atoll(v) >= 1000) {
            jobs = atoll(v);
            i++;
        } else if (strcmp(a, "-n") == 0 && v && atoll(v) > 0) {
            n = atoll(v);
            i++;
        } else if (strcmp(a, "--lanes") == 0 && v) {
            if (parse_lanes(v, ls, &nl) < 0) return usage();
            i++;
        } else {
            return usage();
        }
    }
    if (instr) {
        int rc = cost_run(plain ? 0 : ls[0], n, NULL);
        printf("instr lanes=%d n=%lld callgrind-macros=%s\n",
               plain ? 0 : ls[0], (long long)n,
#ifdef LANES_CALLGRIND
               "yes"
#else
               "no"
#endif
        );
        return rc < 0;
    }
    printf("emqlite %s, SQLite %s; synchronous NORMAL; 100-byte payloads\n",
           emq_version(), emq_sqlite_version());
    printf("\n### Fairness: 100 lanes, one holding 90%% of the jobs\n");
    for (how = FAIR_ONE; how <= FAIR_BATCH; how++)
        if (fairness(how, jobs) < 0) return 1;
    return cost_table(ls, nl, n) < 0;
}
