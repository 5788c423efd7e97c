/*
 * instr.c — the cost of one transition in instructions and in pages.
 *
 * --instr WHAT: run WHAT's loop N times with callgrind collection switched on
 * around the loop only (CALLGRIND_TOGGLE_COLLECT, run under valgrind
 * --tool=callgrind --collect-atstart=no); bench/instructions.sh divides the
 * total by N. Without <valgrind/callgrind.h> the loop still runs and the
 * script subtracts an N run from a 2N run instead.
 *
 *   emq-enqueue, raw-enqueue   one enqueue per transaction
 *   emq-enqueue-many,          enqueue_many in batches of BENCH_BATCH (N
 *   raw-enqueue-many           rounded down to whole batches; per job)
 *   emq-cycle, raw-cycle       enqueue + claim + complete (3 transactions)
 *   emq-enqueue-sums,          the same two on a file with row checksums on
 *   emq-cycle-sums             (emq_options.checksums: the option's cost)
 *   emq-enqueue-nohist,        the same two with the job history off
 *   emq-cycle-nohist           (emq_history_config: its cost, issue 34)
 *   emq-enqueue-histfail,      the same two at the history's failures level
 *   emq-cycle-histfail         (EMQ_HISTORY_FAILURES: its cost)
 *   emq-enqueue-histfull,      the same two with the history at its bounds
 *   emq-cycle-histfull         (per_queue 1000, 1000 completed jobs kept:
 *                              every entry and kept job pushes one out, as
 *                              on a file that ran past its windows)
 *   store-hset3-zadd           storage/store.h: HSET of three fields + ZADD,
 *                              one transaction (the floor under an enqueue)
 *
 * With --exclusive the emqlite and raw loops open their file in exclusive
 * locking mode (bench/syscalls.sh counts both modes).
 *
 * Every loop runs on a fresh file with 10,000 jobs already pending and after
 * 1,000 unmeasured warm-up iterations (statements prepared, cache warm).
 *
 * --pages: per transition, the SQL statements run, their VDBE steps, and the
 * b-tree pages fetched and written (sqlite3_db_status), for emqlite and raw.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "store.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_CALLGRIND 1
#endif
#endif
#ifndef BENCH_CALLGRIND
#define CALLGRIND_TOGGLE_COLLECT
#endif

#define PREFILL 10000
#define WARMUP 1000

/* Pages the loop wrote to the WAL (SQLITE_DBSTATUS_CACHE_WRITE summed over
 * its transactions): WAL frames, printed by --instr for the scripts. */
static long long loop_frames = -1;

/* --page-size and --checkpoint-frames for the loops (0: the defaults). */
int bench_instr_page_size, bench_instr_ckpt_frames;

/* ------------------------------------------------------ through bsys */

static int prefill(bsys *s, uint64_t *seq)
{
    bench_item *it = malloc(BENCH_BATCH * sizeof *it);
    int i, k, rc = 0;
    if (!it) return bench_err(s, "out of memory");
    for (i = 0; i < PREFILL / BENCH_BATCH && rc == 0; i++) {
        for (k = 0; k < BENCH_BATCH; k++) bench_id((*seq)++, it[k].id);
        rc = s->ops->enqueue_many(s, it, BENCH_BATCH);
    }
    free(it);
    return rc;
}

/* One batch of BENCH_BATCH jobs through enqueue_many. */
static int batch(bsys *s, uint64_t *seq)
{
    static bench_item it[BENCH_BATCH];
    for (int k = 0; k < BENCH_BATCH; k++) bench_id((*seq)++, it[k].id);
    return s->ops->enqueue_many(s, it, BENCH_BATCH);
}

/* cycle 0: one enqueue; 1: enqueue + claim + complete; 2: one batch. */
static int one(bsys *s, int cycle, uint64_t *seq)
{
    char id[EMQ_ID_SIZE];
    int64_t token;
    int rc;
    if (cycle == 2) return batch(s, seq);
    bench_id((*seq)++, id);
    if ((rc = s->ops->enqueue(s, id)) < 0 || !cycle) return rc;
    if ((rc = s->ops->claim(s, id, &token)) != 0)
        return rc < 0 ? rc : bench_err(s, "claim found nothing");
    return s->ops->complete(s, id, token);
}

static int sys_loop(int raw, int cycle, int sums, int excl, const char *path,
                    int64_t n)
{
    bench_conf c;
    bsys s;
    uint64_t seq = 0;
    int64_t i;
    int rc;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.sync = EMQ_SYNC_NORMAL;
    c.checksums = sums & 1;
    c.history = (sums & 8)   ? BENCH_HIST_FAILURES
                : (sums & 2) ? BENCH_HIST_OFF
                             : BENCH_HIST_ON;
    c.hist_full = (sums & 4) != 0;
    c.exclusive = excl;
    c.page_size = bench_instr_page_size;
    c.ckpt_frames = bench_instr_ckpt_frames;
    rc = raw ? bench_raw_open(&c, &s) : bench_emq_open(&c, &s);
    if (rc < 0) goto fail;
    if ((rc = prefill(&s, &seq)) < 0) goto fail;
    if (cycle == 2) n /= BENCH_BATCH;
    for (i = 0; i < (cycle == 2 ? 2 : WARMUP) && rc == 0; i++)
        rc = one(&s, cycle, &seq);
    if (rc < 0) goto fail;
    sqlite3 *db = raw ? bench_raw_sqlite(&s) : bench_emq_sqlite(&s);
    int cur = 0, hi = 0;
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 1);
    CALLGRIND_TOGGLE_COLLECT;
    for (i = 0; i < n && rc == 0; i++) rc = one(&s, cycle, &seq);
    CALLGRIND_TOGGLE_COLLECT;
    if (rc < 0) goto fail;
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0);
    loop_frames = cur;
    s.ops->close(&s);
    return 0;
fail:
    fprintf(stderr, "emqlite-bench: %s\n", s.err);
    if (s.h) s.ops->close(&s);
    return -1;
}

/* ------------------------------------------------- through the store */

static int store_one(emq_store *st, uint64_t seq)
{
    char id[EMQ_ID_SIZE], jk[64];
    emq_bytes fv[6] = {{"state", 5}, {"pending", 7}, {"attempts", 8},
                       {"0", 1}, {"payload", 7},
                       {bench_payload, BENCH_PAYLOAD}};
    static const char pk[] = "emq:{" BENCH_QUEUE "}:pending";
    int added, rc;
    bench_id(seq, id);
    snprintf(jk, sizeof jk, "emq:{" BENCH_QUEUE "}:job:%s", id);
    if ((rc = emq_store_begin(st, 1, 0)) < 0) return rc;
    if ((rc = emq_hash_set(st, jk, strlen(jk), fv, 3, &added)) < 0 ||
        (rc = emq_zset_add(st, pk, sizeof pk - 1, id, EMQ_ID_LEN, 0,
                           &added)) < 0) {
        emq_store_rollback(st);
        return rc;
    }
    return emq_store_commit(st);
}

static int store_loop(const char *path, int64_t n)
{
    emq_store_opts o = {.synchronous = EMQ_SYNC_NORMAL, .busy_timeout_ms = 5000,
                        .checkpoint_frames = EMQ_CHECKPOINT_FRAMES};
    emq_store *st = NULL;
    char err[256];
    uint64_t seq = 0;
    int64_t i;
    int rc = emq_store_open(path, &o, &st, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "emqlite-bench: store open: %s\n", err);
        return -1;
    }
    for (i = 0; i < PREFILL + WARMUP && rc >= 0; i++)
        rc = store_one(st, seq++);
    CALLGRIND_TOGGLE_COLLECT;
    for (i = 0; i < n && rc >= 0; i++) rc = store_one(st, seq++);
    CALLGRIND_TOGGLE_COLLECT;
    if (rc < 0)
        fprintf(stderr, "emqlite-bench: store: %s\n", emq_store_errmsg(st));
    emq_store_close(st);
    return rc < 0 ? -1 : 0;
}

int bench_instr_main(const char *what, const char *dir, int64_t n, int excl)
{
    char path[1024];
    int rc;
    snprintf(path, sizeof path, "%s/emqlite-bench-instr.%d.db", dir,
             (int)getpid());
    if (strcmp(what, "emq-enqueue") == 0)
        rc = sys_loop(0, 0, 0, excl, path, n);
    else if (strcmp(what, "emq-cycle") == 0)
        rc = sys_loop(0, 1, 0, excl, path, n);
    else if (strcmp(what, "emq-enqueue-sums") == 0)
        rc = sys_loop(0, 0, 1, excl, path, n);
    else if (strcmp(what, "emq-cycle-sums") == 0)
        rc = sys_loop(0, 1, 1, excl, path, n);
    else if (strcmp(what, "emq-enqueue-nohist") == 0)
        rc = sys_loop(0, 0, 2, excl, path, n);
    else if (strcmp(what, "emq-cycle-nohist") == 0)
        rc = sys_loop(0, 1, 2, excl, path, n);
    else if (strcmp(what, "emq-enqueue-histfail") == 0)
        rc = sys_loop(0, 0, 8, excl, path, n);
    else if (strcmp(what, "emq-cycle-histfail") == 0)
        rc = sys_loop(0, 1, 8, excl, path, n);
    else if (strcmp(what, "emq-enqueue-histfull") == 0)
        rc = sys_loop(0, 0, 4, excl, path, n);
    else if (strcmp(what, "emq-cycle-histfull") == 0)
        rc = sys_loop(0, 1, 4, excl, path, n);
    else if (strcmp(what, "emq-enqueue-many") == 0)
        rc = sys_loop(0, 2, 0, excl, path, n);
    else if (strcmp(what, "raw-enqueue-many") == 0)
        rc = sys_loop(1, 2, 0, excl, path, n);
    else if (strcmp(what, "raw-enqueue") == 0)
        rc = sys_loop(1, 0, 0, excl, path, n);
    else if (strcmp(what, "raw-cycle") == 0)
        rc = sys_loop(1, 1, 0, excl, path, n);
    else if (strcmp(what, "store-hset3-zadd") == 0) rc = store_loop(path, n);
    else {
        fprintf(stderr, "emqlite-bench: unknown --instr %s\n", what);
        return -1;
    }
    emq_remove_files(path);
#ifdef BENCH_CALLGRIND
    printf("instr %s n=%lld callgrind-macros=yes", what, (long long)n);
#else
    printf("instr %s n=%lld callgrind-macros=no", what, (long long)n);
#endif
    printf(" frames=%lld\n", loop_frames);
    return rc;
}

/* ------------------------------------------------------------- pages */

#define MAX_TRACE 64

typedef struct tracer {
    int on, n;
    sqlite3_stmt *stmt[MAX_TRACE];
} tracer;

static int trace_cb(unsigned type, void *ctx, void *p, void *x)
{
    tracer *t = ctx;
    (void)type;
    (void)x;
    if (t->on && t->n < MAX_TRACE) t->stmt[t->n++] = p;
    return 0;
}

static int db_stat(sqlite3 *db, int op)
{
    int cur = 0, hi = 0;
    sqlite3_db_status(db, op, &cur, &hi, 1);
    return cur;
}

static void reset_counters(sqlite3 *db)
{
    sqlite3_stmt *s = NULL;
    db_stat(db, SQLITE_DBSTATUS_CACHE_HIT);
    db_stat(db, SQLITE_DBSTATUS_CACHE_MISS);
    db_stat(db, SQLITE_DBSTATUS_CACHE_WRITE);
    while ((s = sqlite3_next_stmt(db, s)) != NULL)
        sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 1);
}

/* Run one transition with the tracer on and print what it did. */
static int show(FILE *out, bsys *s, sqlite3 *db, tracer *t, const char *verb,
                int which, uint64_t *seq, char *cid, int64_t *tok)
{
    char id[EMQ_ID_SIZE];
    int i, j, rc, hit, miss, wr, steps = 0, seen;
    reset_counters(db);
    t->n = 0;
    t->on = 1;
    if (which == 0) {
        bench_id((*seq)++, id);
        rc = s->ops->enqueue(s, id);
    } else if (which == 1) {
        rc = s->ops->claim(s, cid, tok);
    } else {
        rc = s->ops->complete(s, cid, *tok);
    }
    t->on = 0;
    if (rc != 0) return rc < 0 ? rc : bench_err(s, "claim found nothing");
    hit = db_stat(db, SQLITE_DBSTATUS_CACHE_HIT);
    miss = db_stat(db, SQLITE_DBSTATUS_CACHE_MISS);
    wr = db_stat(db, SQLITE_DBSTATUS_CACHE_WRITE);
    fprintf(out, "\n%s %s: %d statements run, pages fetched %d (hit %d, "
                 "miss %d), pages written %d\n",
            s->name, verb, t->n, hit + miss, hit, miss, wr);
    for (i = 0; i < t->n; i++) {
        /* A statement run twice shows its steps once, on the first line. */
        for (seen = 0, j = 0; j < i; j++) seen |= t->stmt[j] == t->stmt[i];
        int v = seen ? 0 : sqlite3_stmt_status(t->stmt[i],
                                               SQLITE_STMTSTATUS_VM_STEP, 0);
        steps += v;
        fprintf(out, "  %5d  %s\n", v, sqlite3_sql(t->stmt[i]));
    }
    fprintf(out, "  %5d  VDBE steps in all\n", steps);
    return 0;
}

/* Bytes per pending job by b-tree (the dbstat virtual table, when SQLite
 * was built with it; Debian's is). */
static void footprint(FILE *out, sqlite3 *db, const char *name, int64_t jobs)
{
    sqlite3_stmt *st = NULL;
    double total = 0;
    if (sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_RESTART, NULL,
                                  NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT name, count(*), sum(ncell),"
                               " sum(payload), sum(unused), sum(pgsize)"
                               " FROM dbstat GROUP BY name"
                               " ORDER BY sum(pgsize) DESC", -1, &st,
                           NULL) != SQLITE_OK) {
        fprintf(out, "\n%s: no dbstat table in this SQLite\n", name);
        sqlite3_finalize(st);
        return;
    }
    fprintf(out, "\n%s on disk, %lld jobs pending: per job, by b-tree\n"
                 "  %-28s %7s %8s %9s %9s %9s\n", name, (long long)jobs,
            "b-tree", "pages", "cells", "payload/j", "unused/j", "bytes/j");
    while (sqlite3_step(st) == SQLITE_ROW) {
        double pg = (double)sqlite3_column_int64(st, 5);
        total += pg;
        fprintf(out, "  %-28s %7lld %8lld %9.1f %9.1f %9.1f\n",
                (const char *)sqlite3_column_text(st, 0),
                (long long)sqlite3_column_int64(st, 1),
                (long long)sqlite3_column_int64(st, 2),
                (double)sqlite3_column_int64(st, 3) / (double)jobs,
                (double)sqlite3_column_int64(st, 4) / (double)jobs,
                pg / (double)jobs);
    }
    fprintf(out, "  %-28s %7s %8s %9s %9s %9.1f\n", "all", "", "", "", "",
            total / (double)jobs);
    sqlite3_finalize(st);
}

int bench_pages_main(const char *dir, FILE *out)
{
    int raw, rc = 0;
    fprintf(out, "Per transition, on a file with %d jobs pending, after %d "
                 "warm-up cycles (synchronous NORMAL).\n"
                 "Columns: VDBE steps of the statement, its SQL.\n",
            PREFILL, WARMUP);
    for (raw = 0; raw < 2 && rc == 0; raw++) {
        char path[1024], cid[EMQ_ID_SIZE];
        bench_conf c;
        bsys s;
        tracer t;
        uint64_t seq = 0;
        int64_t tok = 0;
        int i;
        sqlite3 *db;
        memset(&c, 0, sizeof c);
        memset(&t, 0, sizeof t);
        snprintf(path, sizeof path, "%s/pages-%d.db", dir, raw);
        c.path = path;
        c.sync = EMQ_SYNC_NORMAL;
        rc = raw ? bench_raw_open(&c, &s) : bench_emq_open(&c, &s);
        if (rc == 0) rc = prefill(&s, &seq);
        for (i = 0; i < WARMUP && rc == 0; i++) rc = one(&s, 1, &seq);
        if (rc == 0) {
            db = raw ? bench_raw_sqlite(&s) : bench_emq_sqlite(&s);
            sqlite3_trace_v2(db, SQLITE_TRACE_STMT, trace_cb, &t);
            rc = show(out, &s, db, &t, "enqueue", 0, &seq, cid, &tok);
            if (rc == 0) rc = show(out, &s, db, &t, "claim", 1, &seq, cid,
                                   &tok);
            if (rc == 0) rc = show(out, &s, db, &t, "complete", 2, &seq, cid,
                                   &tok);
            sqlite3_trace_v2(db, 0, NULL, NULL);
            footprint(out, db, s.name, PREFILL);
        }
        if (rc != 0) fprintf(stderr, "emqlite-bench: %s\n", s.err);
        if (s.h) s.ops->close(&s);
        emq_remove_files(path);
    }
    return rc;
}
