/*
 * crash_flows.c — SIGKILL inside the flow procedures: at every step
 * boundary of a scripted workload (deterministic), and at random instants
 * of a long multi-process run.
 *
 *   tests/crash_flows [boundaries|random|both]      (default: both)
 *
 * Boundaries. A fixed script over three queues (a nested add of eight
 * steps, a bulk of a cross-queue and a nested flow, workers completing and
 * killing children, sweeps of every outbox, until every flow has finished)
 * runs once uninterrupted on a fresh file: its final keyspace is the
 * reference, and the procedures' test hook (engine/flow/flow.h) numbers every
 * boundary — after each committed step of an add, and before each entry
 * delivered inside a sweep's transaction. Then for every boundary k the
 * script runs in a forked child that SIGKILLs itself at boundary k; the
 * parent opens the file, asserts the checker finds nothing, recovers as an
 * operator would (flow_recover; an interrupted sweep is simply run again:
 * the next sweep), runs the rest of the script, and asserts the final
 * keyspace equals the reference: no parent released twice, no child
 * result lost, no parent stuck forever, byte for byte.
 *
 * Random. A producer adding random flows (flat, cross-queue and nested
 * trees over three queues, both policies, single adds and bulks), two
 * workers (completing with a result, or killing a child; leases that
 * outlive a live worker's claim) and a sweeper (sweeps, promote, reap) run
 * on one file and are SIGKILLed at random instants; after each round the
 * parent checks the file (no violation) and recovers. At the end it drains everything (recover, reap, claim and
 * complete, sweep, until no work is left) and asserts: every child whose
 * completion a worker acknowledged is in its parent's processed hash with
 * its result, every acknowledged death in failed or unsuccessful; no row is
 * left awaiting children; no dependencies counter is below 0; every outbox
 * is empty and no add is left journaled.
 *
 * Knobs: EMQ_CRASH_KILLS (random mode's kills; default 200, 40 under
 * EMQ_TEST_QUICK), EMQ_CRASH_WINDOW_MS (default 80), EMQ_CRASH_SEED,
 * EMQ_CRASH_DIR (keep the files there). Long run by hand:
 *   EMQ_CRASH_KILLS=20000 tests/crash_flows random
 * Prints "N passed, N failed".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "store.h"
#include "flow.h"
#include "keys.h"
#include "ksdump.h"
#include "relutil.h"
#include "relwork.h"

emq_store *emq_db_store(emq_db *db);

static const char *const queues[3] = {"cf", "cf.x", "cf.y"};
#define NQ 3
#define T0 INT64_C(1767225600000)

static char dir[256], path[300];

static void wipe(void)
{
    char p[340];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

static emq_db *open_db(rel_clock *clk)
{
    emq_options o;
    emq_db *db = NULL;
    char err[512];
    int rc;
    emq_options_init(&o);
    if (clk) {
        o.clock = rel_clock_fn;
        o.clock_ctx = clk;
    }
    o.busy_timeout_ms = 10000;
    while ((rc = emq_open_ex(path, &o, &db, err, sizeof err)) == EMQ_EBUSY) {}
    if (rc != EMQ_OK) {
        fprintf(stderr, "crash_flows: open %s: %s\n", path, err);
        exit(2);
    }
    return db;
}

static char *dump(emq_db *db)
{
    emq_buf b = {0};
    char *s;
    if (kd_store(emq_db_store(db), emq_now(db), &b) != EMQ_OK) return NULL;
    s = strdup(b.p ? (char *)b.p : "");
    emq_buf_free(&b);
    return s;
}

static int clean(emq_db *db, const char *when)
{
    size_t v = 0, n = 0;
    int rc = rel_check(db, &v, &n, 1);
    EXPECT(rc == EMQ_OK && v == 0, "%s: checker rc %d, %zu violations", when,
           rc, v);
    return v == 0;
}

/* ----------------------------------------------------------- boundaries */

static int busy_file(emq_db *db);

/* The ids of the script: JOB + 11 digits, numbered. */
static void sid(char out[EMQ_ID_SIZE], int n)
{
    snprintf(out, EMQ_ID_SIZE, "JOB%011u", (unsigned)n % 1000000u);
}

static char ids[40][EMQ_ID_SIZE];

/* Nodes of the script's flows (filled by build()). */
static emq_flow_node t1[8], f2[3], f3[4];

static void build(void)
{
    for (int i = 0; i < 40; i++) sid(ids[i], i + 1);
    /* T1: R{A{A1(x), A2}, B(x, id){B1, B2(cf)}, C(y)} in cf */
    t1[3] = (emq_flow_node){ids[2], "a1", 2, "cf.x", EMQ_FLOW_FP, NULL, 0};
    t1[4] = (emq_flow_node){ids[3], "a2", 2, NULL, EMQ_FLOW_FP, NULL, 0};
    t1[5] = (emq_flow_node){ids[5], "b1", 2, NULL, EMQ_FLOW_FP, NULL, 0};
    t1[6] = (emq_flow_node){ids[6], "b2", 2, "cf", EMQ_FLOW_FP, NULL, 0};
    t1[1] = (emq_flow_node){ids[1], "A", 1, NULL, EMQ_FLOW_FP, &t1[3], 2};
    t1[2] = (emq_flow_node){ids[4], "B", 1, "cf.x", EMQ_FLOW_ID, &t1[5], 2};
    t1[7] = (emq_flow_node){ids[7], "C", 1, "cf.y", EMQ_FLOW_FP, NULL, 0};
    /* R's children must be contiguous: A, B, C */
    static emq_flow_node rk[3];
    rk[0] = t1[1];
    rk[1] = t1[2];
    rk[2] = t1[7];
    t1[0] = (emq_flow_node){ids[0], "R", 1, NULL, EMQ_FLOW_FP, rk, 3};
    /* F2: P2 (cf) over c21 (x), c22 (y): cross-queue */
    f2[1] = (emq_flow_node){ids[11], "c21", 3, "cf.x", EMQ_FLOW_FP, NULL, 0};
    f2[2] = (emq_flow_node){ids[12], "c22", 3, "cf.y", EMQ_FLOW_ID, NULL, 0};
    f2[0] = (emq_flow_node){ids[10], "P2", 2, NULL, EMQ_FLOW_FP, &f2[1], 2};
    /* F3: P3 (cf) over M3 (x) over l31 (cf, fp), l32 (x) */
    f3[2] = (emq_flow_node){ids[22], "l31", 3, "cf", EMQ_FLOW_FP, NULL, 0};
    f3[3] = (emq_flow_node){ids[23], "l32", 3, NULL, EMQ_FLOW_FP, NULL, 0};
    f3[1] = (emq_flow_node){ids[21], "M3", 2, "cf.x", EMQ_FLOW_FP, &f3[2], 2};
    f3[0] = (emq_flow_node){ids[20], "P3", 2, NULL, EMQ_FLOW_FP, &f3[1], 1};
}

/* Children that die instead of completing: B1 (fp: B dies, its death goes
 * to R with policy id) and l31 (fp: M3 dies, then P3). */
static int dies(const char *id)
{
    return strcmp(id, ids[5]) == 0 || strcmp(id, ids[22]) == 0;
}

/* Claim everything pending in q and settle it. */
static int work(emq_db *db, const char *q)
{
    emq_job j;
    int rc;
    while ((rc = emq_claim(db, q, 60000, &j)) == EMQ_OK) {
        char r[32];
        snprintf(r, sizeof r, "r-%s", j.id);
        rc = dies(j.id) ? emq_retry(db, q, j.id, j.attempts, 0, 1, "dead",
                                    4)
                        : emq_complete_result(db, q, j.id, j.attempts, r,
                                              strlen(r));
        emq_job_clear(&j);
        if (rc < 0) return rc;
    }
    return rc == EMQ_EMPTY ? EMQ_OK : rc;
}

enum { OP_ADD, OP_BULK, OP_WORK, OP_SWEEP };
typedef struct op {
    int kind;
    int q;
} op;

/* The script: two adds, then rounds of work and sweeps on every queue. */
static op script[64];
static int nops;

static void make_script(void)
{
    nops = 0;
    script[nops++] = (op){OP_ADD, 0};
    script[nops++] = (op){OP_BULK, 0};
    for (int round = 0; round < 5; round++) {
        for (int q = 0; q < NQ; q++) script[nops++] = (op){OP_WORK, q};
        for (int q = 0; q < NQ; q++) script[nops++] = (op){OP_SWEEP, q};
    }
}

static int run_op(emq_db *db, rel_clock *clk, int i)
{
    const op *o = &script[i];
    int64_t d;
    clk->now = T0 + 10 * i;
    switch (o->kind) {
    case OP_ADD: return emq_flow_add(db, queues[0], &t1[0]);
    case OP_BULK: {
        emq_flow_node roots[2] = {f2[0], f3[0]};
        int v[2];
        int rc = emq_flow_add_bulk(db, queues[0], roots, 2, v);
        return rc < 0 ? rc : v[0] != EMQ_OK ? v[0] : v[1];
    }
    case OP_WORK: return work(db, queues[o->q]);
    default: return emq_flow_sweep(db, queues[o->q], 100, &d);
    }
}

/* The hook: count boundaries; record the op of each; die at `kill_at`. */
static int64_t boundary, kill_at;
static int cur_op, op_of[256];

static void hook(void *ctx, const char *proc, int64_t step)
{
    (void)ctx;
    (void)proc;
    (void)step;
    boundary++;
    if (boundary < 256) op_of[boundary] = cur_op;
    if (boundary == kill_at) kill(getpid(), SIGKILL);
}

static void run_from(emq_db *db, rel_clock *clk, int from)
{
    for (cur_op = from; cur_op < nops; cur_op++) {
        int rc = run_op(db, clk, cur_op);
        if (rc < 0) {
            fprintf(stderr, "crash_flows: op %d: %s: %s\n", cur_op,
                    emq_strerror(rc), emq_errmsg(db));
            EXPECT(0, "op %d failed", cur_op);
            return;
        }
    }
}

static void boundaries(void)
{
    rel_clock clk = {T0};
    emq_db *db;
    char *ref, *got;
    int64_t total, k, recovered = 0, resweeps = 0;
    build();
    make_script();
    rel_path(path, sizeof path, dir, "boundaries.emq");
    /* the uninterrupted run */
    wipe();
    db = open_db(&clk);
    boundary = 0;
    kill_at = -1;
    emq_proc_set_hook(hook, NULL);
    run_from(db, &clk, 0);
    emq_proc_set_hook(NULL, NULL);
    total = boundary;
    ref = dump(db);
    clean(db, "uninterrupted");
    /* the script runs every flow to its end: nothing left to do */
    EXPECT(!busy_file(db), "the uninterrupted script left work");
    EXPECT(strstr(ref, "awaiting_children") == NULL, "the uninterrupted "
           "script left a parent awaiting children");
    emq_close(db);
    EXPECT(total >= 20 && total < 256, "%lld boundaries", (long long)total);
    for (k = 1; k <= total && k < 256; k++) {
        pid_t pid;
        int st, op;
        int64_t n = 0;
        wipe();
        fflush(NULL);
        if ((pid = fork()) == 0) {
            db = open_db(&clk);
            boundary = 0;
            kill_at = k;
            emq_proc_set_hook(hook, NULL);
            run_from(db, &clk, 0);
            _exit(3); /* never reached: the hook kills first */
        }
        waitpid(pid, &st, 0);
        EXPECT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
               "boundary %lld: child status %d", (long long)k, st);
        db = open_db(&clk);
        clean(db, "after the kill");
        EXPECT(emq_flow_recover(db, &n) == EMQ_OK, "recover");
        recovered += n;
        op = op_of[k];
        /* an add was finished by the recovery; a sweep runs again */
        if (script[op].kind == OP_SWEEP) {
            resweeps++;
            run_from(db, &clk, op);
        } else {
            run_from(db, &clk, op + 1);
        }
        got = dump(db);
        EXPECT(got && strcmp(got, ref) == 0, "boundary %lld (op %d): the "
               "recovered run differs from the uninterrupted one",
               (long long)k, op);
        free(got);
        emq_close(db);
    }
    printf("crash_flows: %lld boundaries killed (add steps and sweep "
           "entries); %lld adds finished by flow_recover, %lld sweeps run "
           "again; every final keyspace equal to the uninterrupted run's\n",
           (long long)total, (long long)recovered, (long long)resweeps);
    free(ref);
}

/* --------------------------------------------------------------- random */

enum { L_ADD_INTENT = 'A', L_ADDED = 'B', L_CHILD_DONE = 'F',
       L_CHILD_DEAD = 'G' };

#define GEN_MAX 48

static uint64_t rs; /* the run's generator (EMQ_CRASH_SEED) */

/* A random flow: nodes in one array, each children block contiguous. */
typedef struct gen {
    emq_flow_node n[GEN_MAX];
    char id[GEN_MAX][EMQ_ID_SIZE];
    int used;
} gen;

static int grow(emq_db *db, gen *g, emq_flow_node *x, int level,
                uint64_t *r)
{
    int kids = level < 3 ? (int)(rel_rnd(r) % 3) : 0, i, base;
    /* a root always has a child: a root without one is held forever by
     * the protocol (D-14), which is not what the drain checks */
    if (level == 1 && kids == 0) kids = 1;
    if (g->used + kids > GEN_MAX) kids = 0;
    x->payload = level == 1 ? "r" : "c";
    x->len = 1;
    x->queue = level > 1 && rel_rnd(r) % 3 == 0 ? queues[rel_rnd(r) % NQ]
                                                : NULL;
    x->policy = rel_rnd(r) % 4 == 0 ? EMQ_FLOW_ID : EMQ_FLOW_FP;
    x->n_children = (size_t)kids;
    x->children = kids ? &g->n[g->used] : NULL;
    base = g->used;
    g->used += kids;
    for (i = 0; i < kids; i++) {
        emq_flow_node *k = &g->n[base + i];
        k->id = g->id[base + i];
        if (emq_mint(db, "JOB", g->id[base + i]) != EMQ_OK) return -1;
        if (grow(db, g, k, level + 1, r) != 0) return -1;
    }
    return 0;
}

static int new_flow(emq_db *db, gen *g, emq_flow_node *root, uint64_t *r)
{
    char rid[EMQ_ID_SIZE];
    if (emq_mint(db, "JOB", rid) != EMQ_OK) return -1;
    memcpy(g->id[g->used], rid, EMQ_ID_SIZE);
    root->id = g->id[g->used++];
    return grow(db, g, root, 1, r);
}

/* Retry a call while the file is busy (nothing was applied). */
#define BUSY(call) do { rc = (call); } while (rc == EMQ_EBUSY)

/* An add that failed after its first step is journaled: recover it rather
 * than adding it again; one that failed at its first step left nothing. */
static int add_flows(emq_db *db, const char *q, emq_flow_node *roots, int n)
{
    int rc, v[4];
    BUSY(n == 1 ? emq_flow_add(db, q, roots)
                : emq_flow_add_bulk(db, q, roots, (size_t)n, v));
    if (rc == EMQ_OK || rc == EMQ_EKIND) return EMQ_OK;
    BUSY(emq_flow_recover(db, NULL));
    return rc;
}

static void producer(const char *ledger, uint64_t seed)
{
    rel_ledger l;
    emq_db *db = open_db(NULL);
    uint64_t r = seed | 1;
    if (rel_ledger_open(&l, ledger) != 0) _exit(2);
    for (;;) {
        static gen g[3];
        emq_flow_node roots[3];
        int n = rel_rnd(&r) % 5 == 0 ? 2 + (int)(rel_rnd(&r) % 2) : 1, i;
        for (i = 0; i < n; i++) {
            g[i].used = 0;
            memset(&roots[i], 0, sizeof roots[i]);
            if (new_flow(db, &g[i], &roots[i], &r) != 0) _exit(2);
            rel_ledger_put(&l, L_ADD_INTENT, roots[i].id, 0, 0);
        }
        if (add_flows(db, queues[0], roots, n) != EMQ_OK) _exit(1);
        for (i = 0; i < n; i++)
            rel_ledger_put(&l, L_ADDED, roots[i].id, 0, 0);
    }
}

/* Settle one claim: a child ("c") dies one time in eight, anything else
 * completes with the result r-<id>. Acknowledged children go to the
 * ledger. */
static int settle(emq_db *db, rel_ledger *l, const char *q, const emq_job *j,
                  uint64_t *r)
{
    int child = j->payload_len == 1 && j->payload[0] == 'c', rc;
    char res[32];
    snprintf(res, sizeof res, "r-%s", j->id);
    if (child && l && rel_rnd(r) % 8 == 0) {
        BUSY(emq_retry(db, q, j->id, j->attempts, 0, 1, "died", 4));
        if (rc == EMQ_DEAD && l)
            rel_ledger_put(l, L_CHILD_DEAD, j->id, j->attempts, 0);
    } else {
        BUSY(emq_complete_result(db, q, j->id, j->attempts, res,
                                 strlen(res)));
        if (rc == EMQ_OK && child && l)
            rel_ledger_put(l, L_CHILD_DONE, j->id, j->attempts, 0);
    }
    return rc == EMQ_ESTALE || rc == EMQ_GONE ? EMQ_OK : rc < 0 ? rc
                                                               : EMQ_OK;
}

static void worker(const char *ledger, uint64_t seed)
{
    rel_ledger l;
    emq_db *db = open_db(NULL);
    uint64_t r = seed | 1;
    if (rel_ledger_open(&l, ledger) != 0) _exit(2);
    for (;;) {
        const char *q = queues[rel_rnd(&r) % NQ];
        emq_job j;
        int rc;
        /* a lease that outlives the claim-to-settle of a live worker: a
         * completion after the reaper took the lease back answers ok yet
         * fans in nothing (T1.5: only an active job fans in), which is
         * the protocol, not a lost result; only a killed worker's claims
         * lapse (the drain reaps them) */
        BUSY(emq_claim(db, q, 60000, &j));
        if (rc == EMQ_EMPTY) {
            usleep(200);
            continue;
        }
        if (rc != EMQ_OK || settle(db, &l, q, &j, &r) != EMQ_OK) _exit(1);
        emq_job_clear(&j);
    }
}

static void sweeper(uint64_t seed)
{
    emq_db *db = open_db(NULL);
    uint64_t r = seed | 1;
    for (;;) {
        for (int q = 0; q < NQ; q++) {
            int rc;
            BUSY(emq_flow_sweep(db, queues[q], 1 + (int64_t)(rel_rnd(&r) %
                                                             100), NULL));
            if (rc < 0) _exit(1);
            BUSY(emq_promote(db, queues[q], 100, NULL));
            BUSY(emq_reap(db, queues[q], NULL));
            if (rc < 0) _exit(1);
        }
        usleep(500);
    }
}

/* ------------------------------------------------------- verification */

typedef struct acks {
    rel_event *v;
    size_t n;
} acks;

/* Every "field=value" of every hash whose key ends in `suffix` (each cut
 * at 63 bytes: a child id and its short result), sorted for lookups; and
 * what the same scan sees of the rows, counters and outboxes. */
typedef struct rec {
    char s[64];
} rec;

typedef struct fields {
    rec *v;
    size_t n, cap;
    const char *suffix;
    emq_store *st;
    long negative, awaiting, outbox;
} fields;

static int field_cb(void *ctx, const unsigned char *f, size_t fl,
                    const unsigned char *v, size_t vl, int64_t x)
{
    fields *fs = ctx;
    (void)x;
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 1024;
        rec *nv = realloc(fs->v, cap * sizeof *nv);
        if (nv == NULL) return EMQ_ENOMEM;
        fs->v = nv;
        fs->cap = cap;
    }
    snprintf(fs->v[fs->n++].s, sizeof fs->v[0].s, "%.*s=%.*s", (int)fl,
             (const char *)f, (int)vl, (const char *)v);
    return 0;
}

static int rec_cmp(const void *a, const void *b)
{
    return strcmp(((const rec *)a)->s, ((const rec *)b)->s);
}

/* Compares only the child id and the '=' after it. */
static int rec_id_cmp(const void *a, const void *b)
{
    return strncmp(((const rec *)a)->s, ((const rec *)b)->s, EMQ_ID_LEN + 1);
}

static int has(const fields *fs, const char *want, int whole)
{
    rec k;
    snprintf(k.s, sizeof k.s, "%s", want);
    return fs->n && bsearch(&k, fs->v, fs->n, sizeof *fs->v,
                            whole ? rec_cmp : rec_id_cmp) != NULL;
}

static int ends(const unsigned char *k, size_t kl, const char *sfx)
{
    size_t n = strlen(sfx);
    return kl >= n && memcmp(k + kl - n, sfx, n) == 0;
}

static int key_cb(void *ctx, const unsigned char *k, size_t kl, int type)
{
    fields *fs = ctx;
    emq_keyinfo ki;
    if (type == EMQ_T_HASH && ends(k, kl, fs->suffix))
        return emq_hash_getall(fs->st, k, kl, field_cb, fs);
    if (type == EMQ_T_STRING && ends(k, kl, ":dependencies")) {
        emq_buf v = {0};
        int64_t n = 0;
        int rc = emq_str_get(fs->st, k, kl, &v);
        if (rc == EMQ_OK && emq_parse_i64(v.p, v.len, &n) == 0 && n < 0)
            fs->negative++;
        emq_buf_free(&v);
        return rc < 0 ? rc : 0;
    }
    if (type == EMQ_T_HASH && emq_key_parse(k, kl, &ki) && ki.is_job_row) {
        emq_buf v = {0};
        int rc = emq_hash_get(fs->st, k, kl, "state", 5, &v);
        if (rc == EMQ_OK && v.len == 17 &&
            memcmp(v.p, "awaiting_children", 17) == 0) {
            fs->awaiting++;
            if (strcmp(fs->suffix, ":processed") == 0)
                fprintf(stderr, "  awaiting children: %.*s\n", (int)kl, k);
        }
        emq_buf_free(&v);
        return rc < 0 ? rc : 0;
    }
    if (type == EMQ_T_LIST && ends(k, kl, ":flow:outbox")) fs->outbox++;
    return 0;
}

/* Scan the file once for the hashes ending in `suffix`. */
static int collect(emq_db *db, const char *suffix, fields *fs)
{
    emq_store *st = emq_db_store(db);
    int rc;
    memset(fs, 0, sizeof *fs);
    fs->suffix = suffix;
    fs->st = st;
    if ((rc = emq_store_begin(st, 0, emq_now(db))) != EMQ_OK) return rc;
    rc = emq_key_scan(st, "emq:{", 5, key_cb, fs);
    emq_store_rollback(st);
    if (fs->n > 1) qsort(fs->v, fs->n, sizeof *fs->v, rec_cmp);
    return rc;
}

/* Work is left: pending, active or scheduled jobs, or outbox entries. */
static int busy_file(emq_db *db)
{
    for (int q = 0; q < NQ; q++) {
        emq_stats s;
        emq_reply e = {0};
        if (emq_stats_get(db, queues[q], &s) != EMQ_OK) return 1;
        if (emq_flow_outbox_read(db, queues[q], 1, &e) != EMQ_OK) return 1;
        if (s.pending || s.active || s.scheduled || e.n) {
            emq_reply_clear(&e);
            return 1;
        }
        emq_reply_clear(&e);
    }
    return 0;
}

/* Finish everything: recover, then rounds of reap, promote, claim and
 * complete, and sweeps, under a clock a day ahead (every lease lapsed). */
static void drain(void)
{
    rel_clock clk = {rel_wall_ms() + 86400000};
    emq_db *db = open_db(&clk);
    uint64_t r = 1;
    int round;
    EXPECT(emq_flow_recover(db, NULL) == EMQ_OK, "drain: recover");
    for (round = 0; round < 200 && busy_file(db); round++)
        for (int q = 0; q < NQ; q++) {
            emq_job j;
            emq_reap(db, queues[q], NULL);
            emq_promote(db, queues[q], 1000, NULL);
            while (emq_claim(db, queues[q], 60000, &j) == EMQ_OK) {
                EXPECT(settle(db, NULL, queues[q], &j, &r) == EMQ_OK,
                       "drain: settle");
                emq_job_clear(&j);
            }
            emq_flow_sweep(db, queues[q], 1000, NULL);
        }
    EXPECT(round < 200, "drain: work left after %d rounds", round);
    emq_close(db);
}

static void verify_end(const acks *a)
{
    emq_db *db = open_db(NULL);
    fields done, failed, ignored;
    int64_t n = -1;
    long lost = 0, wrong = 0, unrecorded = 0, checked = 0;
    EXPECT(collect(db, ":processed", &done) == EMQ_OK, "scan processed");
    EXPECT(collect(db, ":failed", &failed) == EMQ_OK, "scan failed");
    EXPECT(collect(db, ":unsuccessful", &ignored) == EMQ_OK, "scan ignored");
    for (size_t i = 0; i < a->n; i++) {
        char want[64];
        const rel_event *e = &a->v[i];
        if (e->ev == L_CHILD_DONE) {
            snprintf(want, sizeof want, "%s=r-%s", e->id, e->id);
            checked++;
            if (!has(&done, want, 1)) {
                int other = has(&done, want, 0);
                if (other) wrong++;
                else lost++;
                fprintf(stderr, "  child %s: completion acknowledged, %s\n",
                        e->id, other ? "recorded with another result"
                                     : "not recorded");
            }
        } else if (e->ev == L_CHILD_DEAD) {
            snprintf(want, sizeof want, "%s=died", e->id);
            checked++;
            if (!has(&failed, want, 1) && !has(&ignored, want, 1)) {
                unrecorded++;
                fprintf(stderr, "  child %s: death acknowledged, not "
                        "recorded\n", e->id);
            }
        }
    }
    EXPECT(lost == 0 && wrong == 0 && unrecorded == 0, "%ld acknowledged "
           "child completions lost, %ld recorded with another result, %ld "
           "acknowledged deaths unrecorded", lost, wrong, unrecorded);
    EXPECT(done.awaiting == 0, "%ld parents still awaiting children after "
           "the drain", done.awaiting);
    EXPECT(done.negative == 0, "%ld dependencies counters below 0",
           done.negative);
    EXPECT(done.outbox == 0, "%ld outboxes left after the drain",
           done.outbox);
    EXPECT(emq_flow_recover(db, &n) == EMQ_OK && n == 0, "journal left: %lld",
           (long long)n);
    clean(db, "after the drain");
    printf("crash_flows: drained: %ld acknowledged child outcomes checked "
           "against their parents\n", checked);
    free(done.v);
    free(failed.v);
    free(ignored.v);
    emq_close(db);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

#define NPROC 4

static void random_run(void)
{
    long goal = rel_env_long("EMQ_CRASH_KILLS", rel_size(200, 40));
    long window = rel_env_long("EMQ_CRASH_WINDOW_MS", 80);
    long kills = 0, rounds = 0, recovered = 0;
    acks a = {NULL, 0};
    rel_path(path, sizeof path, dir, "random.emq");
    wipe();
    emq_close(open_db(NULL));
    while (kills < goal && rel_failed == 0) {
        pid_t pid[NPROC];
        char lp[NPROC][400];
        for (int i = 0; i < NPROC; i++) {
            uint64_t seed = rel_rnd(&rs);
            rel_ledger_path(lp[i], sizeof lp[i], dir, i);
            fflush(NULL);
            if ((pid[i] = fork()) == 0) {
                if (i == 0) producer(lp[i], seed);
                else if (i < 3) worker(lp[i], seed);
                else sweeper(seed);
                _exit(0);
            }
        }
        for (int i = 0; i < NPROC; i++) {
            int st;
            sleep_ms(1 + (long)(rel_rnd(&rs) % (uint64_t)window));
            if (waitpid(pid[i], &st, WNOHANG) == pid[i]) {
                EXPECT(0, "round %ld: process %d ended by itself (status "
                       "%d)", rounds, i, st);
                continue;
            }
            kill(pid[i], SIGKILL);
            waitpid(pid[i], &st, 0);
            kills++;
        }
        {
            emq_db *db = open_db(NULL);
            int64_t n = 0;
            clean(db, "after a round of kills");
            EXPECT(emq_flow_recover(db, &n) == EMQ_OK, "round recover");
            recovered += n;
            emq_close(db);
        }
        rounds++;
    }
    for (int i = 0; i < NPROC; i++) {
        char lp[400];
        rel_ledger_path(lp, sizeof lp, dir, i);
        EXPECT(rel_ledger_read(lp, i, &a.v, &a.n) == 0, "ledger %d", i);
    }
    drain();
    verify_end(&a);
    {
        long added = 0;
        for (size_t i = 0; i < a.n; i++) added += a.v[i].ev == L_ADDED;
        printf("crash_flows: %ld rounds, %ld SIGKILLs, %ld flows added and "
               "acknowledged, %ld cut adds finished by flow_recover\n",
               rounds, kills, added, recovered);
    }
    free(a.v);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "both";
    const char *keep = getenv("EMQ_CRASH_DIR");
    setvbuf(stdout, NULL, _IOLBF, 0);
    rs = (uint64_t)rel_env_long("EMQ_CRASH_SEED", (long)time(NULL)) | 1;
    if (strcmp(mode, "both") && strcmp(mode, "boundaries") &&
        strcmp(mode, "random")) {
        fprintf(stderr, "usage: %s [boundaries|random|both]\n", argv[0]);
        return 2;
    }
    if (keep && keep[0]) {
        snprintf(dir, sizeof dir, "%s", keep);
        mkdir(dir, 0755);
    } else if (rel_mkdtemp(dir, sizeof dir, "crashflows") != 0) {
        perror("mkdtemp");
        return 1;
    }
    printf("crash_flows: seed %llu\n", (unsigned long long)rs);
    if (strcmp(mode, "random") != 0) boundaries();
    if (strcmp(mode, "boundaries") != 0 && rel_failed == 0) random_run();
    printf("%ld passed, %ld failed\n", rel_passed, rel_failed);
    if (!(keep && keep[0]) && rel_failed == 0) rel_rmrf(dir);
    else if (rel_failed) printf("crash_flows: the files are in %s\n", dir);
    return rel_failed == 0 ? 0 : 1;
}
