/*
 * procs.c — emqlite-procs: many processes on one file (issue 33 item 1).
 *
 * For each K: K producer processes enqueue J jobs in all; then K worker
 * processes claim and complete until the queue is empty; then a mixed
 * steady state, K/2 producers offering a fixed total rate while K/2
 * workers take jobs with the waiting claim, each job timed from its
 * enqueue call to its claim. The same for K clients of one redis/valkey
 * server running the reference's Lua (tests/lua) over its Unix socket and
 * over TCP. Nothing is pinned: every process may run on either CPU.
 *
 * Rules: every reply is checked (each payload 100 bytes, each job claimed
 * exactly once, nothing pending at the end); a failed call is counted and
 * its first message printed, an EMQ_EBUSY counted apart; the systems are
 * interleaved within each round and every cell is a median with its
 * spread over the rounds; the load average is printed before and after.
 * The peer's workers have no waiting claim for the flat queue (the
 * reference's core consumer parks one beat, 1 s, on a list only lane
 * offers feed), so in the mixed phase they claim again after 1 ms when
 * the queue is empty: kinder to the peer than its own park.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "config.h"
#include "bench.h"

#ifdef HAVE_HIREDIS
#define HAVE_PEER 1
#else
#define HAVE_PEER 0 /* bench_peer_open answers "not built" */
#endif

#define MAX_K 64
#define MAX_ROUNDS 9

enum { SYS_EMQ, SYS_UNIX, SYS_TCP, NSYS };
static const char *const sys_name[NSYS] = { "emqlite", "peer-unix",
                                            "peer-tcp" };
enum { PH_PRODUCE, PH_CONSUME, PH_MIXED, NPH };

/* What every child reports through shared memory. */
typedef struct slot {
    int64_t ops, fails, busy;
    char err[512];
} slot;

typedef struct shared {
    slot slots[MAX_K];
    int64_t claimed;          /* mixed phase: jobs claimed so far         */
    int64_t produced;         /* mixed phase: producers finished          */
} shared;

/* One cell: a system at one K in one round. */
typedef struct cell {
    double rate[NPH];         /* jobs per second                           */
    double wait_p99, wait_max;/* produce phase: one enqueue call, ms       */
    double lat_p50, lat_p99;  /* mixed: enqueue call to claim, ms          */
    int64_t fails, busy;
    int ran;
} cell;

static struct {
    int64_t jobs, mixed_jobs;
    double mixed_rate;
    int sync, rounds, nk, ks[16], sys_on[NSYS], page_size, ckpt_frames;
    int history;          /* BENCH_HIST_*                                 */
    const char *dir;
} O;

static shared *SH;
static unsigned char *seen;   /* per seq: times claimed                    */
static double *enq_at;        /* per seq: monotonic s before the enqueue   */
static double *lat;           /* per seq: µs (enqueue call, or delivery)   */

static void *shmem(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
        perror("emqlite-procs: mmap");
        exit(2);
    }
    return p;
}

static void fail(slot *sl, bsys *s)
{
    if (sl->fails++ == 0)
        snprintf(sl->err, sizeof sl->err, "%s", s->err);
    if (s->rc == EMQ_EBUSY)
        sl->busy++;
}

static int64_t seq_of(const char *id)
{
    char ns[4];
    uint64_t snow;
    if (emq_id_parse(id, strlen(id), ns, &snow) != EMQ_OK)
        return -1;
    return (int64_t)(snow - (UINT64_C(1) << 40));
}

static void sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* -------------------------------------------------------------- roles */

typedef struct role {
    int phase, sys, k, nprod, nwork;
    bench_conf conf;
} role;

static int open_sys(const role *r, bsys *s)
{
    return r->sys == SYS_EMQ ? bench_emq_open(&r->conf, s)
                             : bench_peer_open(&r->conf, s);
}

/* Producer `i` of n: seqs [lo, hi); in the mixed phase at its share of the
 * rate from t0. */
static void produce(bsys *s, slot *sl, int64_t lo, int64_t hi, double t0,
                    double rate)
{
    char id[EMQ_ID_SIZE];
    for (int64_t q = lo; q < hi; q++) {
        double t;
        if (rate > 0)
            sleep_until(t0 + (double)(q - lo) / rate);
        bench_id((uint64_t)q, id);
        t = bench_now();
        enq_at[q] = t;
        if (s->ops->enqueue(s, id) < 0) {
            fail(sl, s);
            continue;
        }
        if (rate <= 0)
            lat[q] = (bench_now() - t) * 1e6;
        sl->ops++;
    }
}

static int take(slot *sl, const char *id, int64_t *q)
{
    if ((*q = seq_of(id)) < 0 || *q >= O.jobs + O.mixed_jobs) {
        snprintf(sl->err, sizeof sl->err, "claimed an id of no job: %.14s",
                 id);
        sl->fails++;
        return -1;
    }
    __atomic_fetch_add(&seen[*q], 1, __ATOMIC_RELAXED);
    return 0;
}

static void consume(bsys *s, slot *sl, int mixed, int64_t total,
                    int nprod)
{
    char id[EMQ_ID_SIZE];
    int64_t token, q;
    for (;;) {
        /* Read before the claim: an empty claim after every producer had
         * finished means the queue is drained (a failed enqueue left a
         * job out of `total`). */
        int rc, done = __atomic_load_n(&SH->produced, __ATOMIC_ACQUIRE) ==
                       nprod;
        if (mixed && strcmp(s->name, "emqlite") == 0) {
            emq_job job;
            rc = emq_claim_wait(bench_emq_db(s), BENCH_QUEUE, BENCH_LEASE_MS,
                                50, &job);
            if (rc == EMQ_OK) {
                if (job.payload_len != BENCH_PAYLOAD ||
                    memcmp(job.payload, bench_payload, BENCH_PAYLOAD)) {
                    bench_err(s, "emq_claim_wait: wrong payload");
                    emq_job_clear(&job);
                    fail(sl, s);
                    return;
                }
                memcpy(id, job.id, EMQ_ID_SIZE);
                token = job.attempts;
                emq_job_clear(&job);
                rc = 0;
            } else if (rc == EMQ_EMPTY) {
                rc = 1;
            } else {
                s->rc = rc;
                bench_err(s, "emq_claim_wait: %d %s", rc,
                          emq_errmsg(bench_emq_db(s)));
                rc = -1;
            }
        } else {
            rc = s->ops->claim(s, id, &token);
        }
        if (rc < 0) {
            fail(sl, s);
            return;
        }
        if (rc == 1) {
            if (!mixed || done ||
                __atomic_load_n(&SH->claimed, __ATOMIC_RELAXED) >= total)
                return;
            if (strcmp(s->name, "emqlite") != 0)
                usleep(1000);
            continue;
        }
        if (take(sl, id, &q) < 0)
            return;
        if (mixed)
            lat[q] = (bench_now() - enq_at[q]) * 1e6;
        if (s->ops->complete(s, id, token) < 0) {
            fail(sl, s);
            return;
        }
        sl->ops++;
        if (mixed)
            __atomic_fetch_add(&SH->claimed, 1, __ATOMIC_RELAXED);
    }
}

/* Child `i` of the phase: open, say ready, wait for the start, work. */
static void child(const role *r, int i, int ready, int go)
{
    bsys s;
    slot *sl = &SH->slots[i];
    char b = 0;
    double t0;
    if (open_sys(r, &s) < 0) {
        fail(sl, &s);
        b = 'x';
        if (write(ready, &b, 1) != 1) _exit(1);
        _exit(1);
    }
    if (write(ready, &b, 1) != 1 || read(go, &b, 1) != 1)
        _exit(1);
    t0 = bench_now();
    if (r->phase == PH_PRODUCE) {
        int64_t per = O.jobs / r->nprod;
        produce(&s, sl, per * i, i == r->nprod - 1 ? O.jobs : per * (i + 1),
                t0, 0);
    } else if (r->phase == PH_CONSUME) {
        consume(&s, sl, 0, O.jobs, 0);
    } else if (i < r->nprod) {
        int64_t per = O.mixed_jobs / r->nprod;
        produce(&s, sl, O.jobs + per * i,
                O.jobs + (i == r->nprod - 1 ? O.mixed_jobs : per * (i + 1)),
                t0,
                O.mixed_rate / r->nprod);
        __atomic_fetch_add(&SH->produced, 1, __ATOMIC_RELEASE);
    } else {
        consume(&s, sl, 1, O.mixed_jobs, r->nprod);
    }
    s.ops->close(&s);
    _exit(0);
}

/* Run one phase's processes; the wall time from the start signal to the
 * last exit, or -1. */
static double run_phase(const role *r)
{
    int ready[2], go[2], n = r->nprod + r->nwork, pids[MAX_K * 2], bad = 0;
    char b;
    double t0, t1;
    memset(SH, 0, sizeof *SH);
    if (pipe(ready) || pipe(go)) {
        perror("emqlite-procs: pipe");
        exit(2);
    }
    for (int i = 0; i < n; i++) {
        if ((pids[i] = fork()) == 0) {
            close(ready[0]);
            close(go[1]);
            child(r, i, ready[1], go[0]);
        }
        if (pids[i] < 0) {
            perror("emqlite-procs: fork");
            exit(2);
        }
    }
    close(ready[1]);
    close(go[0]);
    for (int i = 0; i < n; i++)
        if (read(ready[0], &b, 1) != 1 || b == 'x')
            bad = 1;
    t0 = bench_now();
    for (int i = 0; i < n; i++)
        if (write(go[1], "g", 1) != 1)
            bad = 1;
    close(go[1]);
    close(ready[0]);
    for (int i = 0; i < n; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0)
            bad = 1;
    }
    t1 = bench_now();
    return bad ? -1 : t1 - t0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sum the slots; print the first failure. */
static void tally(cell *c, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        slot *sl = &SH->slots[i];
        c->fails += sl->fails;
        c->busy += sl->busy;
        if (sl->fails)
            fprintf(stderr, "emqlite-procs: %s, process %d: %lld failed "
                    "(%lld EMQ_EBUSY); first: %s\n", what, i,
                    (long long)sl->fails, (long long)sl->busy, sl->err);
    }
}

/* One system at one K: the three phases on a fresh file or server. */
static int run_cell(int sys, int k, cell *c)
{
    char dir[600], path[700], what[64];
    bench_server sv;
    role r;
    double w;
    int64_t bad = 0, n;
    memset(c, 0, sizeof *c);
    memset(&r, 0, sizeof r);
    memset(&sv, 0, sizeof sv);
    snprintf(dir, sizeof dir, "%s/procs.XXXXXX", O.dir);
    if (!mkdtemp(dir)) {
        perror("emqlite-procs: mkdtemp");
        return -1;
    }
    r.sys = sys;
    r.k = k;
    r.conf.sync = O.sync;
    r.conf.page_size = O.page_size;
    r.conf.ckpt_frames = O.ckpt_frames;
    r.conf.history = O.history;
    snprintf(path, sizeof path, "%s/bench.db", dir);
    r.conf.path = path;
    if (sys != SYS_EMQ) {
        if (bench_server_start(&sv, dir, O.sync == EMQ_SYNC_FULL, -1) < 0)
            return -1;
        r.conf.port = sv.port;
        r.conf.server_pid = sv.pid;
        r.conf.server_dir = sv.dir;
        r.conf.unix_path = sys == SYS_UNIX ? sv.sock : NULL;
    }
    snprintf(what, sizeof what, "%s K=%d", sys_name[sys], k);
    memset(seen, 0, (size_t)(O.jobs + O.mixed_jobs));
    /* Produce. */
    r.phase = PH_PRODUCE;
    r.nprod = k;
    r.nwork = 0;
    w = run_phase(&r);
    tally(c, k, what);
    if (w > 0) {
        bench_lat l;
        bench_lat_summary(lat, (size_t)O.jobs, &l); /* sorts: max last */
        c->rate[PH_PRODUCE] = (double)O.jobs / w;
        c->wait_p99 = l.p99 / 1000;
        c->wait_max = lat[O.jobs - 1] / 1000;
    }
    /* Consume. */
    r.phase = PH_CONSUME;
    r.nprod = 0;
    r.nwork = k;
    if (w > 0 && (w = run_phase(&r)) > 0)
        c->rate[PH_CONSUME] = (double)O.jobs / w;
    tally(c, k, what);
    for (n = 0; n < O.jobs; n++)
        bad += seen[n] != 1;
    if (w > 0 && bad) {
        fprintf(stderr, "emqlite-procs: %s: %lld jobs not claimed exactly "
                "once\n", what, (long long)bad);
        c->fails += bad;
    }
    /* Mixed: the next ids (seq jobs .. jobs + mixed_jobs - 1). */
    r.phase = PH_MIXED;
    r.nprod = k / 2 > 0 ? k / 2 : 1;
    r.nwork = k / 2 > 0 ? k / 2 : 1;
    if (w > 0 && (w = run_phase(&r)) > 0) {
        bench_lat l;
        bench_lat_summary(lat + O.jobs, (size_t)O.mixed_jobs, &l);
        c->rate[PH_MIXED] = (double)O.mixed_jobs / w;
        c->lat_p50 = l.p50 / 1000;
        c->lat_p99 = l.p99 / 1000;
    }
    tally(c, r.nprod + r.nwork, what);
    for (bad = 0, n = O.jobs; n < O.jobs + O.mixed_jobs; n++)
        bad += seen[n] != 1;
    if (w > 0 && bad) {
        fprintf(stderr, "emqlite-procs: %s mixed: %lld jobs not claimed "
                "exactly once\n", what, (long long)bad);
        c->fails += bad;
    }
    if (sys != SYS_EMQ)
        bench_server_stop(&sv);
    bench_rmrf(dir);
    c->ran = w > 0;
    return c->ran ? 0 : -1;
}

/* ------------------------------------------------------------ report */

static double med(double *v, int n, double *lo, double *hi)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    *lo = v[0];
    *hi = v[n - 1];
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

static cell R[MAX_ROUNDS][16][NSYS];

static double field(const cell *c, int what)
{
    switch (what) {
    case 0: return c->rate[PH_PRODUCE];
    case 1: return c->rate[PH_CONSUME];
    case 2: return c->rate[PH_MIXED];
    case 3: return c->wait_p99;
    case 4: return c->wait_max;
    case 5: return c->lat_p50;
    default: return c->lat_p99;
    }
}

static void table(const char *title, int what, int ratios)
{
    double v[MAX_ROUNDS], m[NSYS], lo, hi;
    printf("\n#### %s\n\n| K |", title);
    for (int s = 0; s < NSYS; s++)
        if (O.sys_on[s]) printf(" %s |", sys_name[s]);
    if (ratios && O.sys_on[SYS_EMQ])
        for (int s = SYS_UNIX; s < NSYS; s++)
            if (O.sys_on[s]) printf(" emqlite / %s |", sys_name[s]);
    printf("\n|---:|");
    for (int s = 0; s < NSYS; s++)
        if (O.sys_on[s]) printf("---:|");
    if (ratios && O.sys_on[SYS_EMQ])
        for (int s = SYS_UNIX; s < NSYS; s++)
            if (O.sys_on[s]) printf("---:|");
    printf("\n");
    for (int ki = 0; ki < O.nk; ki++) {
        printf("| %d |", O.ks[ki]);
        for (int s = 0; s < NSYS; s++) {
            if (!O.sys_on[s]) continue;
            for (int r = 0; r < O.rounds; r++)
                v[r] = field(&R[r][ki][s], what);
            m[s] = med(v, O.rounds, &lo, &hi);
            if (what <= 2)
                printf(" %.0f (%.0f–%.0f) |", m[s], lo, hi);
            else
                printf(" %.2f (%.2f–%.2f) |", m[s], lo, hi);
        }
        if (ratios && O.sys_on[SYS_EMQ])
            for (int s = SYS_UNIX; s < NSYS; s++)
                if (O.sys_on[s])
                    printf(" %.2f× |", m[s] > 0 ? m[SYS_EMQ] / m[s] : 0);
        printf("\n");
    }
}

static int parse_ks(const char *a)
{
    char *end;
    O.nk = 0;
    while (*a && O.nk < 16) {
        long k = strtol(a, &end, 10);
        if (end == a || k < 1 || k > MAX_K / 2 * 2) return -1;
        O.ks[O.nk++] = (int)k;
        a = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return O.nk > 0 ? 0 : -1;
}

static void usage(FILE *f)
{
    fprintf(f,
"usage: emqlite-procs [--k 1,2,4,8,16] [--jobs 40000] [--mixed-jobs 10000]\n"
"                     [--mixed-rate 2000] [--rounds 3] [--full]\n"
"                     [--only emqlite|peer-unix|peer-tcp] [--dir DIR]\n"
"                     [--page-size BYTES] [--checkpoint-frames F]\n"
"                     [--history on|failures|off]\n"
"Many processes on one file against K clients of one redis/valkey server\n"
"(Unix socket and TCP) running the reference's Lua: K producers enqueue\n"
"--jobs jobs, K workers claim and complete them, then K/2 producers offer\n"
"--mixed-rate jobs/s in all while K/2 workers take them (emqlite: the\n"
"waiting claim). --full: synchronous FULL against appendfsync always.\n"
"--page-size, --checkpoint-frames: emqlite's page size and checkpoint\n"
"interval (default: the library's). --history: emqlite's job history\n"
"level (default on: every transition, as a file has it by default).\n"
"Prints markdown tables: medians (min–max) over --rounds interleaved\n"
"rounds; exits 1 when any call failed or any job was not claimed exactly\n"
"once.\n");
}

int main(int argc, char **argv)
{
    int only = -1, status = 0;
    double l0;
    O.jobs = 40000;
    O.mixed_jobs = 10000;
    O.mixed_rate = 2000;
    O.sync = EMQ_SYNC_NORMAL;
    O.rounds = 3;
    O.dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    parse_ks("1,2,4,8,16");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--full")) {
            O.sync = EMQ_SYNC_FULL;
        } else if (v && !strcmp(a, "--k")) {
            if (parse_ks(v) < 0) {
                fprintf(stderr, "emqlite-procs: --k %s: a comma list of "
                        "1..%d\n", v, MAX_K / 2 * 2);
                return 2;
            }
            i++;
        } else if (v && (!strcmp(a, "--jobs") || !strcmp(a, "--mixed-jobs") ||
                         !strcmp(a, "--rounds"))) {
            long long n = strtoll(v, NULL, 10);
            if (n < 1 || (!strcmp(a, "--rounds") && n > MAX_ROUNDS)) {
                fprintf(stderr, "emqlite-procs: %s %s: a positive count%s\n",
                        a, v, !strcmp(a, "--rounds") ? " up to 9" : "");
                return 2;
            }
            if (!strcmp(a, "--jobs")) O.jobs = n;
            else if (!strcmp(a, "--mixed-jobs")) O.mixed_jobs = n;
            else O.rounds = (int)n;
            i++;
        } else if (v && !strcmp(a, "--mixed-rate")) {
            O.mixed_rate = strtod(v, NULL);
            if (!(O.mixed_rate > 0)) {
                fprintf(stderr, "emqlite-procs: --mixed-rate %s: jobs per "
                        "second, above 0\n", v);
                return 2;
            }
            i++;
        } else if (v && !strcmp(a, "--only")) {
            for (int s = 0; s < NSYS; s++)
                if (!strcmp(v, sys_name[s])) only = s;
            if (only < 0) {
                fprintf(stderr, "emqlite-procs: --only %s: emqlite, "
                        "peer-unix or peer-tcp\n", v);
                return 2;
            }
            i++;
        } else if (v && !strcmp(a, "--page-size")) {
            long n = strtol(v, NULL, 10);
            if (n < 512 || n > 65536 || (n & (n - 1))) {
                fprintf(stderr, "emqlite-procs: --page-size %s: a power of "
                        "two from 512 to 65536\n", v);
                return 2;
            }
            O.page_size = (int)n;
            i++;
        } else if (v && !strcmp(a, "--checkpoint-frames")) {
            long n = strtol(v, NULL, 10);
            if (n < 1 || n > 1000000000) {
                fprintf(stderr, "emqlite-procs: --checkpoint-frames %s: a "
                        "count of WAL frames, above 0\n", v);
                return 2;
            }
            O.ckpt_frames = (int)n;
            i++;
        } else if (v && !strcmp(a, "--history")) {
            if (!strcmp(v, "on")) O.history = BENCH_HIST_ON;
            else if (!strcmp(v, "off")) O.history = BENCH_HIST_OFF;
            else if (!strcmp(v, "failures")) O.history = BENCH_HIST_FAILURES;
            else {
                fprintf(stderr, "emqlite-procs: --history %s: on, failures "
                        "or off\n", v);
                return 2;
            }
            i++;
        } else if (v && !strcmp(a, "--dir")) {
            O.dir = v;
            i++;
        } else {
            fprintf(stderr, "emqlite-procs: %s: unknown or missing value\n", a);
            usage(stderr);
            return 2;
        }
    }
    for (int s = 0; s < NSYS; s++)
        O.sys_on[s] = only < 0 ? (s == SYS_EMQ ||
                                  (HAVE_PEER && bench_server_binary()))
                               : s == only;
    if (only > SYS_EMQ && !(HAVE_PEER && bench_server_binary())) {
        fprintf(stderr, "emqlite-procs: no peer: it needs hiredis at build "
                "time and a redis-server or valkey-server\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    SH = shmem(sizeof *SH);
    seen = shmem((size_t)(O.jobs + O.mixed_jobs));
    enq_at = shmem((size_t)(O.jobs + O.mixed_jobs) * sizeof *enq_at);
    lat = shmem((size_t)(O.jobs + O.mixed_jobs) * sizeof *lat);
    l0 = loadavg();
    for (int r = 0; r < O.rounds; r++)
        for (int ki = 0; ki < O.nk; ki++)
            for (int s = 0; s < NSYS; s++) {
                cell *c = &R[r][ki][s];
                if (!O.sys_on[s]) continue;
                if (run_cell(s, O.ks[ki], c) < 0 || c->fails)
                    status = 1;
                fprintf(stderr, "round %d K=%d %s: %.0f / %.0f / %.0f jobs/s"
                        "%s\n", r + 1, O.ks[ki], sys_name[s],
                        c->rate[0], c->rate[1], c->rate[2],
                        c->fails ? " (FAILED)" : "");
            }
    printf("### Many processes on one file (`emqlite-procs`)\n\n"
           "%lld jobs, %d rounds interleaved, synchronous %s, no pinning; "
           "%ld CPUs; load average %.2f before, %.2f after; emqlite's "
           "job history %s. Medians (min–max).\n",
           (long long)O.jobs, O.rounds,
           O.sync == EMQ_SYNC_FULL ? "FULL (peer: appendfsync always)"
                                   : "NORMAL (peer: no persistence)",
           (long)bench_ncpu(), l0, loadavg(),
           O.history == BENCH_HIST_OFF        ? "off"
           : O.history == BENCH_HIST_FAILURES ? "at its failures level"
                                              : "on");
    table("K producers: jobs enqueued per second", 0, 1);
    table("K workers: jobs claimed and completed per second", 1, 1);
    table("One enqueue call under K producers: p99 ms (the longest writer "
          "wait's tail)", 3, 0);
    table("One enqueue call under K producers: max ms", 4, 0);
    printf("\nMixed: K/2 producers offer %.0f jobs/s in all, K/2 workers "
           "(at least one of each), %lld jobs.\n", O.mixed_rate,
           (long long)O.mixed_jobs);
    table("Mixed: jobs per second", 2, 1);
    table("Mixed: enqueue call to claim, p50 ms", 5, 0);
    table("Mixed: enqueue call to claim, p99 ms", 6, 0);
    {
        int64_t f = 0, b = 0;
        for (int r = 0; r < O.rounds; r++)
            for (int ki = 0; ki < O.nk; ki++)
                for (int s = 0; s < NSYS; s++)
                    f += R[r][ki][s].fails, b += R[r][ki][s].busy;
        printf("\nFailed calls: %lld (EMQ_EBUSY: %lld).\n", (long long)f,
               (long long)b);
    }
    return status;
}
