/*
 * main.c — emqlite-bench: one run of the whole comparison on one machine.
 *
 * Systems: emqlite (the public API), raw SQL (sys_raw.c, SQLite's own limit
 * for this work), and the peer: a private redis-server running the Lua bundle
 * by EVALSHA over loopback, with no persistence (paired with synchronous
 * NORMAL) and with appendonly yes + appendfsync always (paired with FULL),
 * each measured with client and server on one CPU and on two.
 *
 * Every phase runs in a forked child pinned to CPU 0 (the server to CPU 0 or
 * 1), on a fresh file or a fresh server, so its VmHWM is the peak RSS of that
 * phase alone. The parent only collects numbers and writes the report: a
 * Markdown table with the ratios emqlite/peer and emqlite/raw and the verdict
 * on each target, plus depth.tsv for bench/plot.gp.
 *
 *   emqlite-bench [--smoke] [--dir D] [--out D] [--scale F] [--repeat K]
 *                 [--no-pin] [--exclusive] [--systems emqlite,raw,peer]
 *                 [--depths N,...] [--page-size B] [--checkpoint-frames F]
 *   emqlite-bench --instr WHAT [-n N] [--dir D] [--exclusive]
 *                                  (under callgrind or strace)
 *   emqlite-bench --pages [--dir D]               (statements and pages)
 *
 * Exit status: 0 when every phase ran and every check passed (targets are
 * reported, never asserted), 1 when a phase failed, 2 for bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "config.h"
#include "bench.h"

/* SYS_PEERU: the same peer over its Unix socket (the faster local path). */
enum { SYS_EMQ, SYS_RAW, SYS_PEER, SYS_PEERU };
enum { PIN_NONE, PIN_SAME, PIN_SPLIT };
enum { PH_ENQ, PH_MANY, PH_CYCLE, PH_DEPTH };

#define MAX_DEPTHS 8

typedef struct counts {
    int64_t enq, many_batches, cycles, depth_cycles;
} counts;

typedef struct result {
    char label[48];
    int sys, sync, pin, ran;
    bench_phase enq, many, cyc;
    bench_phase depth[MAX_DEPTHS];
    int ndepth;
    int64_t hwm_kb;          /* max over phases, this side's process       */
} result;

typedef struct run {
    const char *workdir;
    int smoke, pin, repeat, exclusive, page_size, ckpt_frames, with[4];
    int history;          /* BENCH_HIST_*                                 */
    counts normal, full;
    int64_t depths[MAX_DEPTHS];
    int ndepth;
    result res[16];
    int nres;
    int failed;
} run;

typedef struct child_msg {
    int rc;
    bench_phase ph;
    uint64_t seq, oldest;
    char err[512];
} child_msg;

static const char *sync_name(int sync)
{
    return sync == EMQ_SYNC_FULL ? "FULL" : "NORMAL";
}

static int open_sys(int sys, const bench_conf *c, bsys *s)
{
    switch (sys) {
    case SYS_EMQ: return bench_emq_open(c, s);
    case SYS_RAW: return bench_raw_open(c, s);
    default: return bench_peer_open(c, s);
    }
}

/* The child's side of one phase: pin, reset the peak, open, run, report. */
static void child_phase(int fd, int sys, const bench_conf *c, int pin,
                        int phase, int64_t n, int64_t depth, uint64_t seq,
                        uint64_t oldest)
{
    child_msg m;
    bsys s;
    ssize_t w;
    size_t off = 0;
    memset(&m, 0, sizeof m);
    if (pin != PIN_NONE) bench_pin(0);
    bench_hwm_reset();
    if ((m.rc = open_sys(sys, c, &s)) < 0) {
        snprintf(m.err, sizeof m.err, "%s", s.err);
    } else {
        switch (phase) {
        case PH_ENQ: m.rc = bench_w_enqueue(&s, &seq, n, &m.ph); break;
        case PH_MANY: m.rc = bench_w_many(&s, &seq, n, &m.ph); break;
        case PH_CYCLE: m.rc = bench_w_cycle(&s, &seq, n, &m.ph); break;
        default:
            m.rc = bench_w_depth(&s, &seq, &oldest, depth, n, &m.ph);
        }
        m.ph.hwm_kb = bench_hwm_kb(0);
        if (m.rc < 0) snprintf(m.err, sizeof m.err, "%s", s.err);
        s.ops->close(&s);
    }
    m.seq = seq;
    m.oldest = oldest;
    while (off < sizeof m) {
        w = write(fd, (char *)&m + off, sizeof m - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    _exit(m.rc < 0 ? 1 : 0);
}

/* Run one phase in a fresh child; 0, -1 (failed: message printed) or -2
 * (the system is not available: skipped). */
static int phase(int sys, const bench_conf *c, int pin, int ph, int64_t n,
                 int64_t depth, uint64_t *seq, uint64_t *oldest,
                 bench_phase *out)
{
    int fds[2], status;
    pid_t pid;
    child_msg m;
    size_t off = 0;
    ssize_t r;
    fflush(stdout);
    fflush(stderr);
    if (pipe(fds) != 0) return -1;
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        child_phase(fds[1], sys, c, pin, ph, n, depth, *seq, *oldest);
    }
    close(fds[1]);
    memset(&m, 0, sizeof m);
    while (off < sizeof m) {
        r = read(fds[0], (char *)&m + off, sizeof m - off);
        if (r <= 0) break;
        off += (size_t)r;
    }
    close(fds[0]);
    waitpid(pid, &status, 0);
    if (off != sizeof m) {
        fprintf(stderr, "emqlite-bench: a phase process died (status %d)\n",
                status);
        return -1;
    }
    if (m.rc == -2) return -2;
    if (m.rc < 0) {
        fprintf(stderr, "emqlite-bench: FAILED: %s\n", m.err);
        return -1;
    }
    *out = m.ph;
    *seq = m.seq;
    *oldest = m.oldest;
    return 0;
}

/* ------------------------------------------------------------- one config */

static void note_hwm(result *r, const bench_phase *ph)
{
    if (ph->hwm_kb > r->hwm_kb) r->hwm_kb = ph->hwm_kb;
}

/* Start the peer's server for one phase group (or do nothing). */
static int server_up(run *R, result *r, bench_server *sv, bench_conf *c)
{
    if (r->sys != SYS_PEER && r->sys != SYS_PEERU) return 0;
    if (bench_server_start(sv, R->workdir, r->sync == EMQ_SYNC_FULL,
                           r->pin == PIN_SPLIT ? 1 : r->pin == PIN_SAME ? 0
                                                                        : -1))
        return -1;
    c->port = sv->port;
    c->server_pid = sv->pid;
    c->server_dir = sv->dir;
    c->unix_path = r->sys == SYS_PEERU ? sv->sock : NULL;
    return 0;
}

static void server_down(result *r, bench_server *sv)
{
    if (r->sys == SYS_PEER || r->sys == SYS_PEERU) bench_server_stop(sv);
}

static void db_path(run *R, result *r, int p, char *path, size_t n)
{
    static const char *const stem[] = {"enq", "many", "cycle", "depth"};
    snprintf(path, n, "%s/%s-%s-%s.db", R->workdir,
             r->sys == SYS_EMQ ? "emqlite" : "raw", sync_name(r->sync),
             stem[p]);
}

/* The three throughput phases once, each on a fresh file or server; a rate
 * better than the one kept replaces it (best of --repeat runs). */
static int run_throughput(run *R, result *r)
{
    const counts *k = r->sync == EMQ_SYNC_FULL ? &R->full : &R->normal;
    bench_phase *slot[3] = {&r->enq, &r->many, &r->cyc}, ph;
    int64_t n[3] = {k->enq, k->many_batches, k->cycles};
    bench_conf c;
    bench_server sv;
    char path[1024];
    uint64_t seq, oldest;
    int p, rc = 0;
    for (p = PH_ENQ; p <= PH_CYCLE && rc == 0; p++) {
        memset(&c, 0, sizeof c);
        memset(&sv, 0, sizeof sv);
        db_path(R, r, p, path, sizeof path);
        c.path = path;
        c.sync = r->sync;
        c.exclusive = R->exclusive;
        c.history = R->history;
        c.page_size = R->page_size;
        c.ckpt_frames = R->ckpt_frames;
        emq_remove_files(path); /* raw SQL's too */
        if (server_up(R, r, &sv, &c) < 0) return -1;
        seq = oldest = (uint64_t)p << 32;  /* ids distinct across phases */
        rc = phase(r->sys, &c, r->pin, p, n[p], 0, &seq, &oldest, &ph);
        if (rc == 0) {
            note_hwm(r, &ph);
            if (ph.rate > slot[p]->rate) *slot[p] = ph;
        }
        server_down(r, &sv);
        emq_remove_files(path);
    }
    return rc;
}

/* The depth sweep: one file (or server) grown depth by depth. */
static int run_depths(run *R, result *r)
{
    const counts *k = r->sync == EMQ_SYNC_FULL ? &R->full : &R->normal;
    bench_conf c;
    bench_server sv;
    char path[1024];
    uint64_t seq = (uint64_t)PH_DEPTH << 32, oldest = seq;
    int i, rc = 0;
    memset(&c, 0, sizeof c);
    memset(&sv, 0, sizeof sv);
    db_path(R, r, PH_DEPTH, path, sizeof path);
    c.path = path;
    c.sync = r->sync;
    c.exclusive = R->exclusive;
    c.history = R->history;
    c.page_size = R->page_size;
    c.ckpt_frames = R->ckpt_frames;
    emq_remove_files(path);
    if (server_up(R, r, &sv, &c) < 0) return -1;
    for (i = 0; i < R->ndepth && rc == 0; i++) {
        rc = phase(r->sys, &c, r->pin, PH_DEPTH, k->depth_cycles,
                   R->depths[i], &seq, &oldest, &r->depth[i]);
        if (rc == 0) {
            note_hwm(r, &r->depth[i]);
            r->ndepth = i + 1;
        }
    }
    server_down(r, &sv);
    emq_remove_files(path);
    return rc;
}

/* ----------------------------------------------------------------- report */

static double mib(int64_t kb) { return (double)kb / 1024.0; }

static void cell_rate(FILE *f, double v)
{
    if (v >= 100) fprintf(f, " %.0f |", v);
    else fprintf(f, " %.1f |", v);
}

static void cell_ratio(FILE *f, double a, double b)
{
    if (a > 0 && b > 0) fprintf(f, " %.2f× |", a / b);
    else fprintf(f, " — |");
}

static result *find(run *R, int sys, int sync, int pin)
{
    int i;
    for (i = 0; i < R->nres; i++)
        if (R->res[i].ran && R->res[i].sys == sys && R->res[i].sync == sync &&
            R->res[i].pin == pin)
            return &R->res[i];
    return NULL;
}

static const bench_phase *deepest(const result *r)
{
    return r && r->ndepth ? &r->depth[r->ndepth - 1] : NULL;
}

/* Bytes on disk per pending job at the deepest depth (peer without
 * persistence: -1; see the memory row instead). */
static double bytes_per_job(const result *r)
{
    const bench_phase *d = deepest(r);
    if (!d || d->depth <= 0) return -1;
    if ((r->sys == SYS_PEER || r->sys == SYS_PEERU) && r->sync != EMQ_SYNC_FULL) return -1;
    return (double)d->foot.disk_bytes / (double)d->depth;
}

static double mem_per_job(const result *r)
{
    const bench_phase *d = deepest(r);
    if (!d || d->depth <= 0 || d->foot.mem_bytes < 0) return -1;
    return (double)d->foot.mem_bytes / (double)d->depth;
}

typedef double (*metric_fn)(const result *r);
static double m_enq(const result *r) { return r->enq.rate; }
static double m_many(const result *r) { return r->many.rate; }
static double m_cyc(const result *r) { return r->cyc.rate; }
static double m_p50(const result *r) { return r->cyc.claim.p50; }
static double m_p99(const result *r) { return r->cyc.claim.p99; }
static double m_rss(const result *r) { return mib(r->hwm_kb); }
static double m_srv(const result *r)
{
    const bench_phase *d = deepest(r);
    return d && d->foot.server_hwm_kb > 0 ? mib(d->foot.server_hwm_kb) : -1;
}

static void table(run *R, FILE *f, int sync)
{
    static const struct {
        const char *name;
        metric_fn fn;
    } rows[] = {
        {"enqueue, ops/s (1 transition per transaction)", m_enq},
        {"enqueue_many, jobs/s (batches of 1,000; peer pipelined, 100 in "
         "flight)", m_many},
        {"full cycle, cycles/s (enqueue + claim + complete)", m_cyc},
        {"claim latency p50, µs (in the cycle)", m_p50},
        {"claim latency p99, µs (in the cycle)", m_p99},
        {"bytes on disk per job (100-byte payload, deepest queue)",
         bytes_per_job},
        {"memory per job, bytes (peer: used_memory)", mem_per_job},
        {"peak RSS, MiB (in-process / client; max over phases)", m_rss},
        {"peak RSS of the server, MiB (deepest queue)", m_srv},
    };
    result *col[5] = {find(R, SYS_EMQ, sync, R->pin ? PIN_SAME : PIN_NONE),
                      find(R, SYS_RAW, sync, R->pin ? PIN_SAME : PIN_NONE),
                      find(R, SYS_PEER, sync, R->pin ? PIN_SAME : PIN_NONE),
                      R->pin ? find(R, SYS_PEER, sync, PIN_SPLIT) : NULL,
                      find(R, SYS_PEERU, sync, R->pin ? PIN_SAME : PIN_NONE)};
    size_t i;
    int j;
    fprintf(f, "\n### synchronous %s — peer %s\n\n", sync_name(sync),
            sync == EMQ_SYNC_FULL ? "appendonly yes, appendfsync always"
                                  : "no persistence");
    fprintf(f, "| | emqlite | raw SQL | peer, 1 CPU | peer, 2 CPUs | "
               "peer unix, 1 CPU | emqlite/peer 1 CPU | emqlite/peer 2 CPUs "
               "| emqlite/peer unix | emqlite/raw |\n");
    fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (i = 0; i < sizeof rows / sizeof *rows; i++) {
        double v[5];
        fprintf(f, "| %s |", rows[i].name);
        for (j = 0; j < 5; j++) {
            v[j] = col[j] ? rows[i].fn(col[j]) : -1;
            if (v[j] < 0) fprintf(f, " — |");
            else cell_rate(f, v[j]);
        }
        cell_ratio(f, v[0], v[2]);
        cell_ratio(f, v[0], v[3]);
        cell_ratio(f, v[0], v[4]);
        cell_ratio(f, v[0], v[1]);
        fputc('\n', f);
    }
}

static void depth_table(run *R, FILE *f, FILE *tsv)
{
    int i, j;
    fprintf(f, "\n### Queue depth (steady cycles: claim the oldest, complete "
               "it, enqueue one)\n\n");
    fprintf(f, "| system | sync | pending | cycles/s | claim p50 µs | claim "
               "p99 µs | claim mean µs | bytes/job on disk | RSS MiB | "
               "server RSS MiB |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    if (tsv)
        fprintf(tsv, "# system\tsync\tpending\tcycles_per_s\tclaim_p50_us\t"
                     "claim_p99_us\tclaim_mean_us\tbytes_per_job\trss_kb\t"
                     "server_rss_kb\n");
    for (i = 0; i < R->nres; i++) {
        result *r = &R->res[i];
        const char *name = r->sys == SYS_EMQ     ? "emqlite"
                           : r->sys == SYS_RAW   ? "raw"
                           : r->sys == SYS_PEERU ? "peer-unix"
                                               : "peer";
        if (!r->ran || r->pin == PIN_SPLIT) continue;
        for (j = 0; j < r->ndepth; j++) {
            const bench_phase *d = &r->depth[j];
            double bpj = (double)d->foot.disk_bytes / (double)d->depth;
            if (r->sys == SYS_PEER && r->sync != EMQ_SYNC_FULL) bpj = -1;
            fprintf(f, "| %s | %s | %lld | %.0f | %.1f | %.1f | %.1f |",
                    r->label, sync_name(r->sync), (long long)d->depth,
                    d->rate, d->claim.p50, d->claim.p99, d->claim.mean);
            if (bpj >= 0) fprintf(f, " %.0f |", bpj);
            else fprintf(f, " — |");
            fprintf(f, " %.1f |", mib(d->hwm_kb));
            if (d->foot.server_hwm_kb > 0)
                fprintf(f, " %.1f |\n", mib(d->foot.server_hwm_kb));
            else fprintf(f, " — |\n");
            if (tsv)
                fprintf(tsv, "%s\t%s\t%lld\t%.1f\t%.2f\t%.2f\t%.2f\t%.1f\t"
                             "%lld\t%lld\n",
                        name, sync_name(r->sync), (long long)d->depth,
                        d->rate, d->claim.p50, d->claim.p99, d->claim.mean,
                        bpj, (long long)d->hwm_kb,
                        (long long)d->foot.server_hwm_kb);
        }
    }
}

static const bench_phase *at_depth(const result *r, int64_t depth)
{
    int j;
    for (j = 0; r && j < r->ndepth; j++)
        if (r->depth[j].depth == depth) return &r->depth[j];
    return NULL;
}

static void verdict(FILE *f, const char *what, double have, double need,
                    int higher_is_better, const char *detail)
{
    const char *v;
    if (have < 0 || need < 0) detail = "—";
    if (have < 0 || need < 0) v = "not measured";
    else if (higher_is_better ? have >= need : have <= need) v = "**met**";
    else v = "**not met**";
    fprintf(f, "| %s | %s | %s |\n", what, detail, v);
}

/* A target "emqlite / that system ≥ need" (-1: not measured). */
static void ratio_verdict(FILE *f, const char *what, double mine,
                          double theirs, double need)
{
    char buf[64];
    double x = mine > 0 && theirs > 0 ? mine / theirs : -1;
    snprintf(buf, sizeof buf, "%.2f×", x);
    verdict(f, what, x, need, 1, buf);
}

static void targets(run *R, FILE *f)
{
    int pin = R->pin ? PIN_SAME : PIN_NONE;
    result *e = find(R, SYS_EMQ, EMQ_SYNC_NORMAL, pin);
    result *p = find(R, SYS_PEER, EMQ_SYNC_NORMAL, pin);
    result *ef = find(R, SYS_EMQ, EMQ_SYNC_FULL, pin);
    result *pf = find(R, SYS_PEER, EMQ_SYNC_FULL, pin);
    const bench_phase *d10 = at_depth(e, 10000), *d1m = at_depth(e, 1000000);
    char buf[200];
    double x;
    fprintf(f, "\n### Targets (from this run; instruction targets: `make "
               "bench-instructions`)\n\n| target | measured | verdict |\n"
               "|---|---|---|\n");
    result *p2 = find(R, SYS_PEER, EMQ_SYNC_NORMAL, PIN_SPLIT);
    result *pu = find(R, SYS_PEERU, EMQ_SYNC_NORMAL, pin);
    double need = R->exclusive ? 1.3 : 1.0;
    x = e && p ? e->enq.rate / p->enq.rate : -1;
    snprintf(buf, sizeof buf, "%.2f×", x);
    verdict(f, R->exclusive ? "exclusive: enqueue ≥ 1.3× the pinned peer "
                              "(NORMAL vs no persistence)"
                            : "shared: enqueue ≥ 1.0× the pinned peer "
                              "(NORMAL vs no persistence)",
            x, need, 1, buf);
    x = e && p ? e->cyc.rate / p->cyc.rate : -1;
    snprintf(buf, sizeof buf, "%.2f×", x);
    verdict(f, R->exclusive ? "exclusive: full cycle ≥ 1.3× the pinned peer"
                            : "shared: full cycle ≥ 1.0× the pinned peer",
            x, need, 1, buf);
    if (!R->exclusive) {
        x = e && p2 ? e->enq.rate / p2->enq.rate : -1;
        snprintf(buf, sizeof buf, "%.2f× (that peer: %.0f ops/s)", x,
                 p2 ? p2->enq.rate : 0);
        verdict(f, "shared: enqueue ≥ the peer on 2 CPUs", x, 1.0, 1, buf);
        x = e && p2 ? e->cyc.rate / p2->cyc.rate : -1;
        snprintf(buf, sizeof buf, "%.2f× (that peer: %.0f cycles/s)", x,
                 p2 ? p2->cyc.rate : 0);
        verdict(f, "shared: full cycle ≥ the peer on 2 CPUs", x, 1.0, 1, buf);
    }
    /* Issue 33 item 5: against the pinned peer over its Unix socket. */
    ratio_verdict(f, R->exclusive ? "exclusive: enqueue ≥ 2× the pinned "
                                    "peer over its Unix socket"
                                  : "shared: enqueue ≥ 1.5× the pinned peer "
                                    "over its Unix socket",
                  e && pu ? e->enq.rate : -1, pu ? pu->enq.rate : -1,
                  R->exclusive ? 2.0 : 1.5);
    ratio_verdict(f, R->exclusive ? "exclusive: full cycle ≥ 3× the pinned "
                                    "peer over its Unix socket"
                                  : "shared: full cycle ≥ 2× the pinned peer "
                                    "over its Unix socket",
                  e && pu ? e->cyc.rate : -1, pu ? pu->cyc.rate : -1,
                  R->exclusive ? 3.0 : 2.0);
    x = e && p ? e->many.rate / p->many.rate : -1;
    snprintf(buf, sizeof buf, "%.2f×", x);
    verdict(f, "enqueue_many ≥ 2× the pipelined peer (pinned)", x, 2.0, 1,
            buf);
    x = d10 && d1m ? d1m->claim.p50 / d10->claim.p50 : -1;
    snprintf(buf, sizeof buf, "p50 %.1f µs at 1M / %.1f µs at 10k = %.2f×",
             d1m ? d1m->claim.p50 : 0, d10 ? d10->claim.p50 : 0, x);
    verdict(f, "claim at 1M pending ≤ 1.3× claim at 10k (NORMAL)", x, 1.3, 0,
            buf);
    x = ef && pf ? ef->enq.rate / pf->enq.rate : -1;
    snprintf(buf, sizeof buf, "%.2f×", x);
    verdict(f, "with FULL, enqueue ≥ the peer with appendfsync always", x,
            1.0, 1, buf);
    x = e ? bytes_per_job(e) : -1;
    snprintf(buf, sizeof buf, "%.0f bytes at %lld pending", x,
             (long long)(deepest(e) ? deepest(e)->depth : 0));
    verdict(f, "≤ 200 bytes on disk per job (100-byte payload)", x, 200, 0,
            buf);
    x = e ? mib(e->hwm_kb) : -1;
    snprintf(buf, sizeof buf, "%.1f MiB", x);
    verdict(f, "peak RSS ≤ 32 MiB (NORMAL, every phase)", x, 32, 0, buf);
    x = d10 && d1m ? (double)d1m->hwm_kb / (double)d10->hwm_kb : -1;
    snprintf(buf, sizeof buf, "%.1f MiB at 10k → %.1f MiB at 1M (%.2f×)",
             d10 ? mib(d10->hwm_kb) : 0, d1m ? mib(d1m->hwm_kb) : 0, x);
    verdict(f, "peak RSS flat from 10k to 1M pending (≤ 1.10×)", x, 1.10, 0,
            buf);
}

static void report(run *R, FILE *f, FILE *tsv)
{
    fprintf(f, "emqlite %s, SQLite %s; %d CPU(s) available; %s; "
               "throughput: best of %d interleaved round(s)%s\n",
            emq_version(), emq_sqlite_version(), bench_ncpu(),
            R->pin ? "in-process side and peer client pinned to CPU 0, "
                     "server on CPU 0 (1 CPU) or CPU 1 (2 CPUs)"
                   : "no pinning", R->repeat,
            R->exclusive ? "; emqlite and raw SQL with locking_mode "
                           "EXCLUSIVE (one process per file)" : "");
    if (R->history != BENCH_HIST_ON)
        fprintf(f, "emqlite's job history %s (emq_history_config_set)\n",
                R->history == BENCH_HIST_FAILURES ? "at its failures level"
                                                  : "off");
    if (R->page_size || R->ckpt_frames)
        fprintf(f, "page size %d, checkpoint every %d WAL frames\n",
                R->page_size ? R->page_size : 4096,
                R->ckpt_frames ? R->ckpt_frames : bench_default_ckpt());
    table(R, f, EMQ_SYNC_NORMAL);
    table(R, f, EMQ_SYNC_FULL);
    depth_table(R, f, tsv);
    targets(R, f);
}

/* ------------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: emqlite-bench [--smoke] [--dir DIR] [--out DIR] "
            "[--scale F] [--repeat K] [--no-pin] [--exclusive]\n"
            "                     [--systems emqlite,raw,peer] "
            "[--depths N,N,...]\n"
            "                     [--page-size B] [--checkpoint-frames F] "
            "[--no-history | --history-failures]\n"
            "       emqlite-bench --instr WHAT [-n N] [--dir DIR] "
            "[--exclusive]\n"
            "       emqlite-bench --pages [--dir DIR]\n"
            "WHAT: emq-enqueue emq-cycle emq-enqueue-many raw-enqueue "
            "raw-cycle raw-enqueue-many store-hset3-zadd\n");
}

static int parse_depths(run *R, const char *s)
{
    char *end;
    R->ndepth = 0;
    while (*s && R->ndepth < MAX_DEPTHS) {
        long long v = strtoll(s, &end, 10);
        if (end == s || v <= 0) return -1;
        R->depths[R->ndepth++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return R->ndepth ? 0 : -1;
}

static void scale(counts *k, double f)
{
    k->enq = (int64_t)(k->enq * f) > 0 ? (int64_t)(k->enq * f) : 1;
    k->many_batches = (int64_t)(k->many_batches * f) > 0
                          ? (int64_t)(k->many_batches * f) : 1;
    k->cycles = (int64_t)(k->cycles * f) > 0 ? (int64_t)(k->cycles * f) : 1;
    k->depth_cycles = (int64_t)(k->depth_cycles * f) > 0
                          ? (int64_t)(k->depth_cycles * f) : 1;
}

static void add(run *R, int sys, int sync, int pin, const char *label)
{
    result *r = &R->res[R->nres++];
    memset(r, 0, sizeof *r);
    r->sys = sys;
    r->sync = sync;
    r->pin = pin;
    snprintf(r->label, sizeof r->label, "%s", label);
}

int main(int argc, char **argv)
{
    static run R;
    const char *dir = NULL, *outdir = NULL, *instr = NULL, *systems = NULL;
    char work[1024];
    double sc = 1.0;
    int64_t n = 10000;
    int i, pages = 0, rc = 0, s, sync, rep;

    R.pin = 1;
    R.repeat = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--smoke") == 0) R.smoke = 1;
        else if (strcmp(a, "--no-pin") == 0) R.pin = 0;
        else if (strcmp(a, "--exclusive") == 0) R.exclusive = 1;
        else if (strcmp(a, "--no-history") == 0) R.history = BENCH_HIST_OFF;
        else if (strcmp(a, "--history-failures") == 0)
            R.history = BENCH_HIST_FAILURES;
        else if (strcmp(a, "--pages") == 0) pages = 1;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (v && strcmp(a, "--dir") == 0) dir = v, i++;
        else if (v && strcmp(a, "--out") == 0) outdir = v, i++;
        else if (v && strcmp(a, "--instr") == 0) instr = v, i++;
        else if (v && strcmp(a, "--systems") == 0) systems = v, i++;
        else if (v && strcmp(a, "-n") == 0) n = strtoll(v, NULL, 10), i++;
        else if (v && strcmp(a, "--scale") == 0) sc = strtod(v, NULL), i++;
        else if (v && strcmp(a, "--repeat") == 0) R.repeat = atoi(v), i++;
        else if (v && strcmp(a, "--page-size") == 0)
            R.page_size = atoi(v), i++;
        else if (v && strcmp(a, "--checkpoint-frames") == 0)
            R.ckpt_frames = atoi(v), i++;
        else if (v && strcmp(a, "--depths") == 0) {
            if (parse_depths(&R, v) < 0) {
                usage(stderr);
                return 2;
            }
            i++;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!dir) dir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR")
                                                            : "/tmp";
    bench_instr_page_size = R.page_size;
    bench_instr_ckpt_frames = R.ckpt_frames;
    if (instr)
        return bench_instr_main(instr, dir, n, R.exclusive) < 0 ? 1 : 0;
    if (sc <= 0 || n <= 0 || R.repeat < 1) {
        usage(stderr);
        return 2;
    }

    if (R.smoke) {
        R.normal = (counts){300, 1, 300, 200};
        R.full = (counts){60, 1, 60, 40};
        if (!R.ndepth) parse_depths(&R, "1000,2000");
    } else {
        R.normal = (counts){20000, 100, 10000, 5000};
        R.full = (counts){2000, 20, 1000, 500};
        if (!R.ndepth) parse_depths(&R, "1000,10000,100000,1000000");
    }
    scale(&R.normal, sc);
    scale(&R.full, sc);
    R.with[SYS_EMQ] = R.with[SYS_RAW] = R.with[SYS_PEER] = R.with[SYS_PEERU] =
        systems == NULL;
    if (systems) {
        R.with[SYS_EMQ] = strstr(systems, "emqlite") != NULL;
        R.with[SYS_RAW] = strstr(systems, "raw") != NULL;
        R.with[SYS_PEER] = strstr(systems, "peer") != NULL;
        R.with[SYS_PEERU] = R.with[SYS_PEER];
    }
#ifndef HAVE_HIREDIS
    if (R.with[SYS_PEER])
        fprintf(stderr, "emqlite-bench: peer skipped: built without hiredis\n");
    R.with[SYS_PEER] = R.with[SYS_PEERU] = 0;
#endif
    if (R.with[SYS_PEER] && bench_server_binary() == NULL) {
        fprintf(stderr, "emqlite-bench: peer skipped: no redis-server or "
                        "valkey-server on PATH (Debian: redis-server)\n");
        R.with[SYS_PEER] = R.with[SYS_PEERU] = 0;
    }
    if (R.pin && bench_ncpu() < 2) {
        fprintf(stderr, "emqlite-bench: one CPU only: not pinning\n");
        R.pin = 0;
    }

    snprintf(work, sizeof work, "%s/emqlite-bench.XXXXXX", dir);
    if (mkdtemp(work) == NULL) {
        fprintf(stderr, "emqlite-bench: mkdtemp %s: %s\n", work,
                strerror(errno));
        return 1;
    }
    R.workdir = work;
    if (pages) {
        rc = bench_pages_main(work, stdout) < 0;
        rmdir(work);
        return rc;
    }

    for (s = 0; s < 2; s++) {
        sync = s ? EMQ_SYNC_FULL : EMQ_SYNC_NORMAL;
        int pin = R.pin ? PIN_SAME : PIN_NONE;
        if (R.with[SYS_EMQ]) add(&R, SYS_EMQ, sync, pin, "emqlite");
        if (R.with[SYS_RAW]) add(&R, SYS_RAW, sync, pin, "raw SQL");
        if (R.with[SYS_PEER]) {
            add(&R, SYS_PEER, sync, pin, R.pin ? "peer, 1 CPU" : "peer");
            if (R.pin) add(&R, SYS_PEER, sync, PIN_SPLIT, "peer, 2 CPUs");
            add(&R, SYS_PEERU, sync, pin,
                R.pin ? "peer unix, 1 CPU" : "peer unix");
        }
    }
    /* Throughput: every configuration once per round, rounds interleaved,
     * so a burst of background load hits all systems alike. */
    for (rep = 0; rep < R.repeat && !R.failed; rep++) {
        for (i = 0; i < R.nres && !R.failed; i++) {
            result *r = &R.res[i];
            double t0 = bench_now();
            fprintf(stderr, "emqlite-bench: round %d/%d: %s, %s ...",
                    rep + 1, R.repeat, r->label, sync_name(r->sync));
            if (run_throughput(&R, r) < 0) {
                R.failed = 1;
                fprintf(stderr, " FAILED\n");
            } else {
                fprintf(stderr, " %.1f s\n", bench_now() - t0);
            }
        }
    }
    /* Depth sweeps (the 2-CPU and Unix-socket peers add little: skipped). */
    for (i = 0; i < R.nres && !R.failed; i++) {
        result *r = &R.res[i];
        double t0 = bench_now();
        if (r->pin == PIN_SPLIT || r->sys == SYS_PEERU) {
            r->ran = 1;
            continue;
        }
        fprintf(stderr, "emqlite-bench: depths: %s, %s ...", r->label,
                sync_name(r->sync));
        if (run_depths(&R, r) < 0) {
            R.failed = 1;
            fprintf(stderr, " FAILED\n");
        } else {
            r->ran = 1;
            fprintf(stderr, " %.1f s\n", bench_now() - t0);
        }
    }
    rmdir(work);

    report(&R, stdout, NULL);
    if (outdir) {
        char p[1100];
        FILE *md, *tsv;
        mkdir(outdir, 0777);
        snprintf(p, sizeof p, "%s/report.md", outdir);
        md = fopen(p, "w");
        snprintf(p, sizeof p, "%s/depth.tsv", outdir);
        tsv = fopen(p, "w");
        if (!md || !tsv) {
            fprintf(stderr, "emqlite-bench: cannot write to %s\n", outdir);
            rc = 1;
        } else {
            report(&R, md, tsv);
        }
        if (md) fclose(md);
        if (tsv) fclose(tsv);
    }
    if (R.failed) {
        printf("\nFAILED: at least one phase failed (see above)\n");
        rc = 1;
    }
    return rc;
}
