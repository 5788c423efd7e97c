/*
 * crash_test.c — producers, workers and a reaper on one file, SIGKILLed at
 * random instants, restarted, and checked after every round of kills.
 *
 * A round forks 2 producers, 2 workers and a reaper (tests/relwork.c; each
 * appends to its own ledger, with an intent line before every write verb)
 * and kills each of them with SIGKILL at its own random instant within the
 * window. With every process dead, the parent opens the file and asserts:
 *   - the checker finds no violation and no note (a killed transaction left
 *     nothing half-done, and no id sits in two sets);
 *   - every id acknowledged as enqueued is still present, or was retired by
 *     a completion (acknowledged, or intended when the kill came between
 *     the commit and the acknowledgement) — nothing is lost;
 *   - an id acknowledged as completed is absent and was completed once;
 *   - every present job was enqueued (acknowledged or intended);
 *   - no (id, token) pair was ever handed to two claims;
 * then starts the next round on the same file. Prints a final
 * "N passed, N failed".
 *
 * Knobs: EMQ_CRASH_KILLS (kills in total; default 500, 50 under
 * EMQ_TEST_QUICK), EMQ_CRASH_WINDOW_MS (the longest a process lives; default
 * 60, 400 under EMQ_TEST_QUICK), EMQ_CRASH_SEED, EMQ_CRASH_DIR (keep the
 * file and ledgers there).
 * Long mode: EMQ_CRASH_KILLS=100000 tests/crash_test.sh
 *
 * With --soak (tests/soak.sh), the contention soak instead: producers,
 * workers and a reaper run all the time on one file with a 100 ms busy
 * timeout, and every few tens of milliseconds one of them, picked at
 * random, is SIGKILLed and a fresh one started in its place; at the end
 * all are killed and the same accounting runs once over everything the
 * ledgers say: every acknowledged enqueue completed exactly once or still
 * present, no (id, token) claimed twice, no id in two sets, no violation or
 * note. Each process counts its calls in shared memory (rel_tally), so the
 * figures survive the kills: transitions per second, EMQ_EBUSY returned,
 * the longest wait (the longest call that answered EMQ_EBUSY, which must
 * stay within a few busy timeouts) and the longest call of all. Knobs:
 * EMQ_SOAK_SECONDS (3; 2 under EMQ_TEST_QUICK), EMQ_SOAK_PRODUCERS (2),
 * EMQ_SOAK_WORKERS (3), EMQ_SOAK_KILL_MS (the mean pause between kills,
 * 40), EMQ_CRASH_SEED, EMQ_CRASH_DIR. Long form: tests/soak.sh 60 4 8.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "emqlite.h"
#include "db.h"
#include "store.h"
#include "relutil.h"
#include "relwork.h"

#define Q "crash"
#define NPROC 5       /* a crash round: 2 producers, 2 workers, 1 reaper */
#define MAXPROC 64

static int nproc = NPROC;


/* -------------------------------------------------- what the ledgers say */

enum {
    F_INTENT = 1,    /* an enqueue was attempted                         */
    F_ENQ = 2,       /* an enqueue was acknowledged                      */
    F_CINTENT = 4,   /* a completion was attempted                       */
    F_DONE = 8,      /* a completion was acknowledged                    */
    F_SETTLED = 16   /* absent after an unacknowledged completion        */
};

typedef struct jent {
    char id[EMQ_ID_LEN];
    unsigned char used, flags;
    unsigned short ndone, nenq;
} jent;

typedef struct cent {       /* a claim: (id, token) */
    char id[EMQ_ID_LEN];
    int64_t token;
    unsigned char used;
} cent;

static jent *jobs;
static size_t jcap, jn;
static cent *claims;
static size_t ccap, cn;

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static jent *job_slot(jent *t, size_t cap, const char *id)
{
    size_t i = hash_bytes(id, EMQ_ID_LEN, 1469598103934665603ULL) & (cap - 1);
    while (t[i].used && memcmp(t[i].id, id, EMQ_ID_LEN) != 0)
        i = (i + 1) & (cap - 1);
    return &t[i];
}

static jent *job(const char *id)
{
    jent *e;
    if (2 * (jn + 1) > jcap) {
        size_t nc = jcap ? jcap * 2 : 4096;
        jent *t = calloc(nc, sizeof *t);
        if (t == NULL) abort();
        for (size_t i = 0; i < jcap; i++)
            if (jobs[i].used) *job_slot(t, nc, jobs[i].id) = jobs[i];
        free(jobs);
        jobs = t;
        jcap = nc;
    }
    e = job_slot(jobs, jcap, id);
    if (!e->used) {
        e->used = 1;
        memcpy(e->id, id, EMQ_ID_LEN);
        jn++;
    }
    return e;
}

/* The entry of id (added when new), with `flag` set. */
static jent *mark(const char *id, int flag)
{
    jent *e = job(id);
    e->flags |= flag;
    return e;
}

static jent *job_find(const char *id)
{
    jent *e;
    if (jcap == 0) return NULL;
    e = job_slot(jobs, jcap, id);
    return e->used ? e : NULL;
}

static cent *claim_slot(cent *t, size_t cap, const char *id, int64_t tok)
{
    size_t i = hash_bytes(&tok, sizeof tok,
                          hash_bytes(id, EMQ_ID_LEN, 1469598103934665603ULL)) &
               (cap - 1);
    while (t[i].used &&
           (memcmp(t[i].id, id, EMQ_ID_LEN) != 0 || t[i].token != tok))
        i = (i + 1) & (cap - 1);
    return &t[i];
}

/* Record a claim; 0 when (id, token) was already claimed. */
static int claim_add(const char *id, int64_t tok)
{
    cent *e;
    if (2 * (cn + 1) > ccap) {
        size_t nc = ccap ? ccap * 2 : 4096;
        cent *t = calloc(nc, sizeof *t);
        if (t == NULL) abort();
        for (size_t i = 0; i < ccap; i++)
            if (claims[i].used)
                *claim_slot(t, nc, claims[i].id, claims[i].token) = claims[i];
        free(claims);
        claims = t;
        ccap = nc;
    }
    e = claim_slot(claims, ccap, id, tok);
    if (e->used) return 0;
    e->used = 1;
    memcpy(e->id, id, EMQ_ID_LEN);
    e->token = tok;
    cn++;
    return 1;
}

/* --------------------------------------------------- incremental ledgers */

static long off[MAXPROC];
static long n_enq, n_done, n_claim, dup_enq, dup_done, dup_claim, phantom;

/* Read the new whole lines of ledger i. */
static void ingest(const char *dir, int i)
{
    char p[400], line[128];
    FILE *f;
    rel_ledger_path(p, sizeof p, dir, i);
    if ((f = fopen(p, "r")) == NULL) return;
    fseek(f, off[i], SEEK_SET);
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        rel_event v;
        if (len == 0 || line[len - 1] != '\n') break; /* torn by the kill */
        off[i] += (long)len;
        if (!rel_ledger_parse(line, i, &v)) {
            EXPECT(0, "ledger %d: bad line %s", i, line);
            continue;
        }
        jent *e;
        switch (v.ev) {
        case L_INTENT: mark(v.id, F_INTENT); break;
        case L_ENQ:
            if (++mark(v.id, F_ENQ)->nenq > 1) dup_enq++;
            n_enq++;
            break;
        case L_CLAIM:
            e = job_find(v.id);
            if (e == NULL || !(e->flags & (F_INTENT | F_ENQ))) phantom++;
            if (!claim_add(v.id, v.token)) dup_claim++;
            n_claim++;
            break;
        case L_COMPLETE_INTENT: mark(v.id, F_CINTENT); break;
        case L_DONE:
            if (++mark(v.id, F_DONE)->ndone > 1) dup_done++;
            n_done++;
            break;
        default: break; /* retry intents and acknowledgements */
        }
    }
    fclose(f);
}

/* ------------------------------------------------------------ the file */

typedef struct present {
    char (*ids)[EMQ_ID_LEN];
    size_t n, cap;
} present;

static int row_cb(void *ctx, const unsigned char *k, size_t kl, int type)
{
    present *p = ctx;
    static const char pre[] = "emq:{" Q "}:job:";
    const size_t pl = sizeof pre - 1;
    if (type != EMQ_T_HASH || kl != pl + EMQ_ID_LEN) return 0;
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 1024;
        void *t = realloc(p->ids, nc * EMQ_ID_LEN);
        if (t == NULL) return EMQ_ENOMEM;
        p->ids = t;
        p->cap = nc;
    }
    memcpy(p->ids[p->n++], k + pl, EMQ_ID_LEN);
    return 0;
}

static int id_cmp(const void *a, const void *b)
{
    return memcmp(a, b, EMQ_ID_LEN);
}

static long settled, lost_total, max_present;

static void verify(const char *path, const char *dir, long round)
{
    emq_db *db = NULL;
    emq_options o;
    char err[512];
    size_t viol = 0, notes = 0;
    present p = {NULL, 0, 0};
    long lost = 0, stray = 0, done_present = 0;
    emq_options_init(&o);
    int rc = emq_open_ex(path, &o, &db, err, sizeof err);
    EXPECT(rc == EMQ_OK, "round %ld: reopen after the kills: %s", round, err);
    if (db == NULL) return;
    rc = rel_check(db, &viol, &notes, 1);
    EXPECT(rc == EMQ_OK && viol == 0 && notes == 0,
           "round %ld: checker rc %d, %zu violations, %zu notes", round, rc,
           viol, notes);
    for (int i = 0; i < nproc; i++) ingest(dir, i);

    emq_store *st = emq_db_store(db);
    static const char pre[] = "emq:{" Q "}:job:";
    EXPECT(emq_store_begin(st, 0, rel_wall_ms()) == EMQ_OK, "read tx");
    EXPECT(emq_key_scan(st, pre, sizeof pre - 1, row_cb, &p) == EMQ_OK,
           "scan rows");
    emq_store_rollback(st);
    if (p.n > 1) qsort(p.ids, p.n, EMQ_ID_LEN, id_cmp);
    if ((long)p.n > max_present) max_present = (long)p.n;

    for (size_t i = 0; i < p.n; i++) {
        char id[EMQ_ID_SIZE];
        memcpy(id, p.ids[i], EMQ_ID_LEN);
        id[EMQ_ID_LEN] = 0;
        jent *e = job_find(id);
        if (e == NULL || !(e->flags & (F_INTENT | F_ENQ))) {
            stray++;
            fprintf(stderr, "  present but never enqueued: %s\n", id);
        } else if (e->flags & F_DONE) {
            done_present++;
            fprintf(stderr, "  completed but present: %s\n", id);
        }
    }
    for (size_t i = 0; i < jcap; i++) {
        jent *e = &jobs[i];
        if (!e->used || !(e->flags & F_ENQ) ||
            (e->flags & (F_DONE | F_SETTLED)))
            continue;
        if (p.n && bsearch(e->id, p.ids, p.n, EMQ_ID_LEN, id_cmp)) continue;
        if (e->flags & F_CINTENT) { /* the unacknowledged completion landed */
            e->flags |= F_SETTLED;
            settled++;
            continue;
        }
        lost++;
        fprintf(stderr, "  lost: %.14s\n", e->id);
    }
    lost_total += lost;
    EXPECT(lost == 0, "round %ld: %ld acknowledged jobs lost", round, lost);
    EXPECT(stray == 0, "round %ld: %ld jobs present but never enqueued",
           round, stray);
    EXPECT(done_present == 0, "round %ld: %ld completed jobs present", round,
           done_present);
    EXPECT(dup_enq == 0 && dup_done == 0 && dup_claim == 0 && phantom == 0,
           "round %ld: duplicates: %ld enqueues, %ld completions, %ld "
           "claims; %ld claims of unknown ids", round, dup_enq, dup_done,
           dup_claim, phantom);
    free(p.ids);
    emq_close(db);
}

/* ----------------------------------------------------------- the rounds */

static uint64_t rs;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

/* How the processes work: a crash round's, or the soak's. */
static struct {
    int busy_ms, ckpt_frames, pause_us, producers, workers;
    int64_t lease_ms;
    volatile rel_tally *tally; /* shared memory, one per slot, or NULL */
} cfg = {10000, 16, 300, 2, 2, 30, NULL};

static pid_t spawn(const char *path, const char *dir, int slot)
{
    pid_t pid;
    uint64_t seed = rel_rnd(&rs) | 1;
    fflush(NULL);
    pid = fork();
    if (pid != 0) return pid;
    rel_work w;
    char lp[400];
    memset(&w, 0, sizeof w);
    w.path = path;
    w.queue = Q;
    w.sync = EMQ_SYNC_NORMAL;
    w.busy_ms = cfg.busy_ms;
    w.ckpt_frames = cfg.ckpt_frames;
    w.produce = -1;
    w.lease_ms = cfg.lease_ms;
    w.max_attempts = 1000000;
    w.pct_retry = 10;
    w.pct_abandon = 5;
    w.seed = seed;
    w.intents = 1;
    w.pause_us = cfg.pause_us;
    w.tally = cfg.tally ? &cfg.tally[slot] : NULL;
    rel_ledger_path(lp, sizeof lp, dir, slot);
    if (rel_ledger_open(&w.ledger, lp) != 0) _exit(2);
    int rc = rel_run(&w, slot < cfg.producers ? REL_PRODUCER
                         : slot < cfg.producers + cfg.workers ? REL_WORKER
                                                              : REL_REAPER);
    _exit(rc == 0 ? 0 : 1);
}

/* -------------------------------------------------------------- the soak */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reap the process of slot i after a SIGKILL (or find it ended early). */
static void reap_slot(pid_t pid, int i, int killed)
{
    int st = 0;
    EXPECT(waitpid(pid, &st, 0) == pid, "waitpid");
    EXPECT(killed ? WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL : 0,
           "soak: process %d ended by itself (status %d)", i, st);
}

static int soak(const char *path, const char *dir)
{
    long secs = rel_env_long("EMQ_SOAK_SECONDS", rel_size(3, 2));
    long gap = rel_env_long("EMQ_SOAK_KILL_MS", 40);
    pid_t pid[MAXPROC];
    int64_t t0, end, ops = 0, maxcall = 0, maxbusy = 0;
    const char *maxverb = "none";
    long kills = 0, busy = 0;
    size_t mapsz = MAXPROC * sizeof(rel_tally);
    cfg.producers = (int)rel_env_long("EMQ_SOAK_PRODUCERS", 2);
    cfg.workers = (int)rel_env_long("EMQ_SOAK_WORKERS", 3);
    nproc = cfg.producers + cfg.workers + 1;
    if (cfg.producers < 1 || cfg.workers < 1 || nproc > MAXPROC || gap < 1) {
        fprintf(stderr, "soak: bad knobs\n");
        return 1;
    }
    cfg.busy_ms = 100;          /* as the outside campaign ran it */
    cfg.ckpt_frames = 64;       /* checkpoints (and the gate) all the time */
    cfg.lease_ms = 250;
    cfg.pause_us = 200;
    cfg.tally = mmap(NULL, mapsz, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (cfg.tally == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memset((void *)cfg.tally, 0, mapsz);
    printf("soak: seed %llu, %ld s, %d producers, %d workers, 1 reaper, a "
           "SIGKILL every ~%ld ms, busy timeout %d ms\n",
           (unsigned long long)rs, secs, cfg.producers, cfg.workers, gap,
           cfg.busy_ms);
    for (int i = 0; i < nproc; i++) pid[i] = spawn(path, dir, i);
    t0 = mono_ms();
    end = t0 + secs * 1000;
    while (mono_ms() < end && rel_failed == 0) {
        sleep_ms(1 + (long)(rel_rnd(&rs) % (uint64_t)(2 * gap)));
        int i = (int)(rel_rnd(&rs) % (uint64_t)nproc);
        kill(pid[i], SIGKILL);
        reap_slot(pid[i], i, 1);
        kills++;
        pid[i] = spawn(path, dir, i);
    }
    for (int i = 0; i < nproc; i++) {
        kill(pid[i], SIGKILL);
        reap_slot(pid[i], i, 1);
    }
    end = mono_ms();
    for (int i = 0; i < nproc; i++) {
        ops += cfg.tally[i].ops;
        busy += cfg.tally[i].busy;
        if (cfg.tally[i].max_busy_us > maxbusy)
            maxbusy = cfg.tally[i].max_busy_us;
        if (cfg.tally[i].max_call_us > maxcall) {
            maxcall = cfg.tally[i].max_call_us;
            maxverb = cfg.tally[i].max_call ? cfg.tally[i].max_call : "?";
        }
    }
    verify(path, dir, 0);
    printf("soak: %.1f s, %ld SIGKILLs; %lld transitions (%.0f/s), %ld "
           "EMQ_EBUSY returned (the longest after %.1f ms), longest call %.1f "
           "ms (%s); %ld enqueues and %ld "
           "completions acknowledged, %ld claims, %ld completions landed "
           "unacknowledged, %ld jobs left in the file, %ld lost\n",
           (double)(end - t0) / 1000, kills, (long long)ops,
           (double)ops * 1000 / (double)(end - t0 > 0 ? end - t0 : 1), busy,
           (double)maxbusy / 1000, (double)maxcall / 1000, maxverb, n_enq,
           n_done, n_claim, settled, max_present, lost_total);
    EXPECT(kills > 0 && n_enq > 0 && n_done > 0, "soak: nothing happened");
    /* A wait is bounded by the busy timeout; scheduling on a loaded
     * machine adds to it, but not a multiple of it. */
    EXPECT(maxbusy < (int64_t)(5 * cfg.busy_ms) * 1000, "soak: an "
           "EMQ_EBUSY came after %.1f ms with a %d ms timeout",
           (double)maxbusy / 1000, cfg.busy_ms);
    munmap((void *)cfg.tally, mapsz);
    return 0;
}

/* ---------------------------------------------------------- the rounds */

static void crash_rounds(const char *path, const char *dir)
{
    long kills_goal = rel_env_long("EMQ_CRASH_KILLS", rel_size(500, 50));
    long window = rel_env_long("EMQ_CRASH_WINDOW_MS", rel_size(60, 400));
    long kills = 0, rounds = 0, early = 0;
    printf("crash_test: seed %llu, %ld kills, window %ld ms\n",
           (unsigned long long)rs, kills_goal, window);
    while (kills < kills_goal && rel_failed == 0) {
        pid_t pid[NPROC];
        long at[NPROC], t = 0;
        int order[NPROC];
        for (int i = 0; i < NPROC; i++) {
            pid[i] = spawn(path, dir, i);
            EXPECT(pid[i] > 0, "fork");
            at[i] = 1 + (long)(rel_rnd(&rs) % (uint64_t)window);
            order[i] = i;
        }
        for (int i = 1; i < NPROC; i++) /* kill in order of their instants */
            for (int j = i; j > 0 && at[order[j]] < at[order[j - 1]]; j--) {
                int x = order[j];
                order[j] = order[j - 1];
                order[j - 1] = x;
            }
        for (int k = 0; k < NPROC; k++) {
            int i = order[k];
            sleep_ms(at[i] - t);
            t = at[i];
            if (pid[i] <= 0) continue;
            int st;
            if (waitpid(pid[i], &st, WNOHANG) == pid[i]) {
                early++; /* it ended by itself: an error it reported */
                EXPECT(0, "round %ld: process %d exited early (status %d)",
                       rounds, i, st);
                pid[i] = 0;
                continue;
            }
            kill(pid[i], SIGKILL);
            kills++;
        }
        for (int i = 0; i < NPROC; i++) {
            int st;
            if (pid[i] <= 0) continue;
            waitpid(pid[i], &st, 0);
            EXPECT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
                   "round %ld: process %d status %d", rounds, i, st);
        }
        verify(path, dir, rounds);
        rounds++;
        if (rounds % 200 == 0)
            printf("crash_test: %ld kills, %ld enqueued, %ld completed, %ld "
                   "in the file\n", kills, n_enq, n_done, max_present);
    }
    printf("crash_test: %ld rounds, %ld SIGKILLs; %ld enqueues and %ld "
           "completions acknowledged, %ld claims; %ld completions landed "
           "unacknowledged; at most %ld jobs in the file; %ld lost\n",
           rounds, kills, n_enq, n_done, n_claim, settled, max_present,
           lost_total);
}

int main(int argc, char **argv)
{
    int soaking = argc > 1 && strcmp(argv[1], "--soak") == 0;
    const char *keep = getenv("EMQ_CRASH_DIR");
    char dir[256], path[300];
    emq_db *db;
    setvbuf(stdout, NULL, _IOLBF, 0);
    rs = (uint64_t)rel_env_long("EMQ_CRASH_SEED", (long)time(NULL)) | 1;
    if (keep && keep[0]) {
        snprintf(dir, sizeof dir, "%s", keep);
        mkdir(dir, 0755);
    } else if (rel_mkdtemp(dir, sizeof dir, soaking ? "soak" : "crash") != 0) {
        perror("mkdtemp");
        return 1;
    }
    rel_path(path, sizeof path, dir, "crash.emq");
    EXPECT(emq_open(path, NULL, &db) == EMQ_OK, "create");
    emq_close(db);
    if (soaking) {
        if (soak(path, dir) != 0) rel_failed++;
    } else {
        crash_rounds(path, dir);
    }
    printf("%ld passed, %ld failed\n", rel_passed, rel_failed);
    if (!(keep && keep[0]) && rel_failed == 0) rel_rmrf(dir);
    else if (rel_failed) printf("%s: the file and ledgers are in %s\n",
                                soaking ? "soak" : "crash_test", dir);
    free(jobs);
    free(claims);
    return rel_failed == 0 ? 0 : 1;
}
