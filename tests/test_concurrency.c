/*
 * test_concurrency.c — many handles on one file (a standalone program run by
 * `make check`; it forks, so it is not a Check suite). Prints one line per
 * round and a final "N passed, N failed".
 *
 * Rounds:
 *   - processes: 4 producers, 4 workers and 1 reaper (fork), each with its
 *     own handle and its own ledger file, run until every produced job is
 *     retired (completed or dead), with checkpoint_frames 1000, then 8 and 1
 *     — the last two make RESTART checkpoints race the other processes'
 *     small commits constantly (the WAL-reset race, doc/RELIABILITY.md);
 *   - threads: 2 producers, 3 workers and a reaper as threads of this
 *     process, one handle each;
 *   - busy: a handle holding the write lock makes another handle's verb
 *     answer EMQ_EBUSY after its busy timeout, with nothing damaged.
 * After each round the parent merges the ledgers and asserts: every
 * enqueued id is distinct; no (id, token) was ever handed to two claims;
 * every job is retired exactly once (one acknowledged completion or one
 * dead-lettering, never both); the counters agree with the ledgers; every
 * set is empty; the checker finds no violation and no note; no process saw
 * an error other than EMQ_EBUSY / EMQ_ESTALE / EMQ_GONE.
 * EMQ_TEST_QUICK=1 shrinks the job counts; EMQ_CONC_JOBS=n sets the jobs per
 * producer.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "emqlite.h"
#include "db.h"
#include "relutil.h"
#include "relwork.h"

#define Q "conc"

enum { DIR_CAP = 256, PATH_CAP = 300 };

/* A scratch directory (tag) in dir[DIR_CAP] and path[PATH_CAP] = dir/name
 * in it; 0, or -1 after counting the failure. */
static int scratch(char *dir, const char *tag, char *path, const char *name)
{
    if (rel_mkdtemp(dir, DIR_CAP, tag) != 0) {
        EXPECT(0, "mkdtemp");
        return -1;
    }
    rel_path(path, PATH_CAP, dir, name);
    return 0;
}

/* ----------------------------------------------------------------- ledgers */

static int ev_cmp(const void *a, const void *b)
{
    const rel_event *x = a, *y = b;
    int c = memcmp(x->id, y->id, EMQ_ID_LEN);
    if (c) return c;
    if (x->ev != y->ev) return x->ev < y->ev ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

typedef struct merged {
    rel_event *ev;
    size_t n;
} merged;

static void read_ledgers(const char *dir, int nproc, merged *m)
{
    char p[400];
    m->ev = NULL;
    m->n = 0;
    for (int i = 0; i < nproc; i++) {
        rel_ledger_path(p, sizeof p, dir, i);
        EXPECT(rel_ledger_read(p, i, &m->ev, &m->n) == 0, "read %s", p);
    }
    if (m->n > 1) qsort(m->ev, m->n, sizeof *m->ev, ev_cmp);
}

/*
 * The ledger and the file agree: see the header. `produced` is the number
 * of jobs the producers were asked to enqueue.
 */
static void verify(const char *path, const char *dir, int nproc,
                   long produced, const char *round)
{
    merged m;
    long enq = 0, done = 0, dead = 0, claims = 0;
    long dup_enq = 0, dup_claim = 0, dup_done = 0, both = 0, unretired = 0,
         phantom = 0;
    size_t i, j;
    read_ledgers(dir, nproc, &m);
    for (i = 0; i < m.n; i = j) {
        long e = 0, d = 0, x = 0;
        for (j = i; j < m.n && memcmp(m.ev[j].id, m.ev[i].id, EMQ_ID_LEN) ==
                                   0; j++) {
            const rel_event *v = &m.ev[j];
            if (v->ev == L_ENQ) e++;
            else if (v->ev == L_DONE) d++;
            else if (v->ev == L_DEAD) x++;
            else if (v->ev == L_CLAIM) {
                claims++;
                if (j > i && m.ev[j - 1].ev == L_CLAIM &&
                    m.ev[j - 1].token == v->token)
                    dup_claim++;
            }
        }
        enq += e;
        done += d;
        dead += x;
        if (e > 1) dup_enq++;
        if (e == 0) phantom++;
        if (d > 1 || x > 1) dup_done++;
        if (d && x) both++;
        if (e && d + x == 0) unretired++;
    }
    EXPECT(enq == produced, "%s: %ld enqueues acknowledged, %ld produced",
           round, enq, produced);
    EXPECT(dup_enq == 0, "%s: %ld ids enqueued twice", round, dup_enq);
    EXPECT(phantom == 0, "%s: %ld ids used but never enqueued", round,
           phantom);
    EXPECT(dup_claim == 0, "%s: %ld (id, token) pairs claimed twice", round,
           dup_claim);
    EXPECT(dup_done == 0, "%s: %ld jobs retired twice", round, dup_done);
    EXPECT(both == 0, "%s: %ld jobs both completed and dead", round, both);
    EXPECT(unretired == 0, "%s: %ld jobs never retired (lost)", round,
           unretired);

    emq_db *db = NULL;
    emq_options o;
    emq_stats st;
    size_t viol = 9, notes = 9;
    emq_options_init(&o);
    EXPECT(emq_open(path, &o, &db) == EMQ_OK, "%s: reopen", round);
    if (db) {
        EXPECT(emq_stats_get(db, Q, &st) == EMQ_OK, "%s: stats", round);
        EXPECT(st.pending == 0 && st.active == 0 && st.scheduled == 0,
               "%s: leftovers pending %lld active %lld scheduled %lld",
               round, (long long)st.pending, (long long)st.active,
               (long long)st.scheduled);
        EXPECT(st.completed == done, "%s: completed %lld, ledger %ld", round,
               (long long)st.completed, done);
        EXPECT(st.failed == dead && st.dead == dead,
               "%s: failed %lld dead %lld, ledger %ld", round,
               (long long)st.failed, (long long)st.dead, dead);
        int rc = rel_check(db, &viol, &notes, 1);
        EXPECT(rc == EMQ_OK && viol == 0 && notes == 0,
               "%s: checker rc %d, %zu violations, %zu notes", round, rc,
               viol, notes);
        emq_close(db);
    }
    printf("%s: %ld jobs, %ld claims, %ld completed, %ld dead\n", round,
           enq, claims, done, dead);
    free(m.ev);
}

/* ------------------------------------------------------------ processes */

static void fill(rel_work *w, const char *path, int role, long per,
                 long total, int ckpt, int busy_ms, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->path = path;
    w->queue = Q;
    w->sync = EMQ_SYNC_NORMAL;
    w->busy_ms = busy_ms;
    w->ckpt_frames = ckpt;
    w->produce = role == REL_PRODUCER ? per : 0;
    w->total = role == REL_PRODUCER ? 0 : total;
    w->lease_ms = 200;
    w->max_attempts = 4;
    w->pct_retry = 15;
    w->pct_abandon = 5;
    w->seed = seed;
    w->deadline_ms = rel_wall_ms() + rel_env_long("EMQ_CONC_SECONDS", 240) *
                                         1000;
}

static void process_round(long per, int ckpt, int busy_ms)
{
    static const int roles[] = {
        REL_PRODUCER, REL_PRODUCER, REL_PRODUCER, REL_PRODUCER,
        REL_WORKER, REL_WORKER, REL_WORKER, REL_WORKER, REL_REAPER,
    };
    const int n = (int)(sizeof roles / sizeof *roles);
    char dir[DIR_CAP], path[PATH_CAP], round[96], lp[400];
    pid_t pid[9];
    emq_db *db;
    snprintf(round, sizeof round, "processes (9, checkpoint_frames %d)",
             ckpt);
    if (scratch(dir, "conc", path, "c.emq") != 0) return;
    EXPECT(emq_open(path, NULL, &db) == EMQ_OK, "create");
    emq_close(db);
    fflush(NULL);
    for (int i = 0; i < n; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            rel_work w;
            fill(&w, path, roles[i], per, 4 * per, ckpt, busy_ms,
                 0x1234567ULL * (uint64_t)(i + 1));
            rel_ledger_path(lp, sizeof lp, dir, i);
            if (rel_ledger_open(&w.ledger, lp) != 0) _exit(2);
            int rc = rel_run(&w, roles[i]);
            rel_ledger_close(&w.ledger);
            if (roles[i] == REL_WORKER && w.busy + w.stale)
                fprintf(stderr, "  worker %d: %ld claims, %ld busy, %ld "
                        "stale\n", i, w.done, w.busy, w.stale);
            _exit(rc == 0 ? 0 : 1);
        }
        EXPECT(pid[i] > 0, "fork");
    }
    for (int i = 0; i < n; i++) {
        int st = 0;
        if (pid[i] <= 0) continue;
        waitpid(pid[i], &st, 0);
        EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0,
               "%s: child %d (role %d) status %d", round, i, roles[i], st);
    }
    verify(path, dir, n, 4 * per, round);
    rel_rmrf(dir);
}

/* -------------------------------------------------------------- threads */

typedef struct tjob {
    rel_work w;
    int role, rc;
} tjob;

static void *thread_main(void *arg)
{
    tjob *t = arg;
    t->rc = rel_run(&t->w, t->role);
    return NULL;
}

static void thread_round(long per)
{
    static const int roles[] = {
        REL_PRODUCER, REL_PRODUCER, REL_WORKER, REL_WORKER, REL_WORKER,
        REL_REAPER,
    };
    const int n = (int)(sizeof roles / sizeof *roles);
    char dir[DIR_CAP], path[PATH_CAP], lp[400];
    pthread_t th[6];
    tjob t[6];
    emq_db *db;
    if (scratch(dir, "conct", path, "t.emq") != 0) return;
    EXPECT(emq_open(path, NULL, &db) == EMQ_OK, "create");
    emq_close(db);
    for (int i = 0; i < n; i++) {
        fill(&t[i].w, path, roles[i], per, 2 * per, 8, 5000,
             0xABCDEFULL * (uint64_t)(i + 1));
        t[i].role = roles[i];
        rel_ledger_path(lp, sizeof lp, dir, i);
        EXPECT(rel_ledger_open(&t[i].w.ledger, lp) == 0, "ledger");
        EXPECT(pthread_create(&th[i], NULL, thread_main, &t[i]) == 0,
               "pthread_create");
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        rel_ledger_close(&t[i].w.ledger);
        EXPECT(t[i].rc == 0, "threads: role %d failed", roles[i]);
    }
    verify(path, dir, n, 2 * per, "threads (6 handles, one process)");
    rel_rmrf(dir);
}

/* ----------------------------------------------------------------- busy */

static void busy_round(void)
{
    char dir[DIR_CAP], path[PATH_CAP];
    emq_db *a = NULL, *b = NULL;
    emq_options o;
    int64_t t0, t1;
    size_t viol = 9;
    if (scratch(dir, "busy", path, "b.emq") != 0) return;
    emq_options_init(&o);
    o.busy_timeout_ms = 100;
    EXPECT(emq_open(path, &o, &a) == EMQ_OK, "open a");
    EXPECT(emq_open(path, &o, &b) == EMQ_OK, "open b");
    if (!a || !b) goto out;
    sqlite3 *sa = emq_store_sqlite(emq_db_store(a));
    EXPECT(sqlite3_exec(sa, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK,
           "hold the write lock");
    t0 = rel_wall_ms();
    int rc = emq_enqueue(b, Q, "JOB00000000001", "x", 1);
    t1 = rel_wall_ms();
    EXPECT(rc == EMQ_EBUSY, "busy: enqueue answered %d (%s)", rc,
           emq_strerror(rc));
    EXPECT(t1 - t0 >= 90, "busy: gave up after %lld ms, timeout 100",
           (long long)(t1 - t0));
    EXPECT(emq_errmsg(b)[0] != 0, "busy: no message");
    emq_job j;
    EXPECT(emq_claim(b, Q, 1000, &j) == EMQ_EBUSY, "busy: claim");
    EXPECT(sqlite3_exec(sa, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK,
           "release");
    EXPECT(emq_enqueue(b, Q, "JOB00000000001", "x", 1) == EMQ_ENQUEUED,
           "busy: enqueue after release");
    EXPECT(rel_check(b, &viol, NULL, 1) == EMQ_OK && viol == 0,
           "busy: checker");
    printf("busy: EMQ_EBUSY after %lld ms with a 100 ms timeout; the file "
           "is clean\n", (long long)(t1 - t0));
out:
    emq_close(a);
    emq_close(b);
    rel_rmrf(dir);
}

/*
 * What the store's RESTART checkpoint really does when another connection
 * holds the writer lock: SQLite does not wait (busy timeout 0) and does not
 * give up either — it downgrades to a PASSIVE checkpoint that backfills
 * without the writer lock and reports SQLITE_BUSY (wal.c,
 * sqlite3WalCheckpoint). So "RESTART never races a commit" holds only when
 * the checkpoint got the lock; doc/RELIABILITY.md draws the consequence for
 * the WAL-reset bug of SQLite 3.7.0 .. 3.51.2.
 */
static void downgrade_round(void)
{
    char dir[DIR_CAP], path[PATH_CAP];
    emq_db *a = NULL, *b = NULL;
    emq_options o;
    int nlog = -1, nckpt = -1;
    if (scratch(dir, "ckpt", path, "k.emq") != 0) return;
    emq_options_init(&o);
    o.checkpoint_frames = 0;
    EXPECT(emq_open(path, &o, &a) == EMQ_OK, "open a");
    EXPECT(emq_open(path, &o, &b) == EMQ_OK, "open b");
    if (!a || !b) goto out;
    for (int i = 0; i < 20; i++) {
        char id[EMQ_ID_SIZE];
        emq_mint(a, "JOB", id);
        EXPECT(emq_enqueue(a, Q, id, "x", 1) == EMQ_ENQUEUED, "enqueue");
    }
    sqlite3 *sa = emq_store_sqlite(emq_db_store(a));
    sqlite3 *sb = emq_store_sqlite(emq_db_store(b));
    EXPECT(sqlite3_exec(sb, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK,
           "b holds the writer lock");
    EXPECT(emq_checkpoint(a) == EMQ_EBUSY, "emq_checkpoint under a writer");
    sqlite3_busy_timeout(sa, 0);
    int rc = sqlite3_wal_checkpoint_v2(sa, NULL, SQLITE_CHECKPOINT_RESTART,
                                       &nlog, &nckpt);
    EXPECT(rc == SQLITE_BUSY, "RESTART under a writer: rc %d", rc);
    EXPECT(nlog > 0 && nckpt == nlog, "the busy RESTART checkpoint "
           "backfilled %d of %d frames without the writer lock", nckpt,
           nlog);
    sqlite3_exec(sb, "ROLLBACK", NULL, NULL, NULL);
    printf("checkpoint: a RESTART checkpoint under another writer answers "
           "BUSY after backfilling %d of %d frames as PASSIVE\n", nckpt,
           nlog);
out:
    emq_close(a);
    emq_close(b);
    rel_rmrf(dir);
}

int main(void)
{
    long per = rel_env_long("EMQ_CONC_JOBS", rel_size(400, 25));
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    busy_round();
    downgrade_round();
    process_round(per, 1000, 5000);
    process_round(per, 8, 5000);
    process_round(per, 1, 50);
    thread_round(per);
    printf("%ld passed, %ld failed\n", rel_passed, rel_failed);
    return rel_failed == 0 ? 0 : 1;
}
