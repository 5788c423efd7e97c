/*
 * cli_work.c — the emqlite tool's scheduling commands: `work` (a worker
 * pool running a command per job), `repeat add|list|cancel`, `stalled`,
 * `sweep` and `policy`.
 *
 * work: every job's payload goes to COMMAND's stdin; exit status 0
 * completes the job, any other status retries it under the queue's stored
 * policy (else --max-attempts / --backoff), and a COMMAND killed by a
 * signal leaves the job to its lease (not completed, not retried: it lapses
 * and a later claim's reap returns it, as after a crash). COMMAND runs in
 * a process group of its own, so a terminal's Ctrl-C reaches the worker
 * only: the first SIGINT or SIGTERM lets every running COMMAND finish and
 * then exits; a second one sends SIGTERM to them. A COMMAND dies with its
 * worker (PR_SET_PDEATHSIG). Leases are extended while COMMAND runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "cli_time.h"

extern char **environ;

static int cmd_work(emq_cli *c, int argc, char **argv);
static int cmd_repeat(emq_cli *c, int argc, char **argv);
static int cmd_stalled(emq_cli *c, int argc, char **argv);
static int cmd_sweep(emq_cli *c, int argc, char **argv);
static int cmd_policy(emq_cli *c, int argc, char **argv);

const emq_cli_command emq_cli_work_commands[] = {
    { "work", cmd_work,
      "QUEUE [--lease DUR] [--concurrency N] [--max-attempts N]\n"
      "       [--backoff SPEC] [--once | --max-jobs N] [--timeout DUR]\n"
      "       [--no-pump] [--lock] [--lanes] [--keep-stderr BYTES]\n"
      "       -- COMMAND [ARG...]",
      "Run COMMAND once per job of QUEUE, with the job's payload on its stdin\n"
      "and EMQLITE_QUEUE, EMQLITE_JOB_ID, EMQLITE_JOB_ATTEMPTS in its\n"
      "environment. Exit status 0 completes the job; any other status retries\n"
      "it (the queue's stored policy, else --max-attempts and --backoff); a\n"
      "COMMAND killed by a signal leaves the job to its lease, which lapses\n"
      "and is reaped (a job claimed more than max-attempts times is\n"
      "dead-lettered 'abandoned'). The lease is extended while COMMAND runs.\n"
      "Waits for jobs without polling. Ctrl-C (SIGINT, SIGTERM) lets the running COMMANDs\n"
      "finish, then exits; a second one sends them SIGTERM. Prints one line\n"
      "per job: ID ATTEMPTS OUTCOME.\n"
      "  --lease DUR        lease of each claim (default 30s)\n"
      "  --concurrency N    worker threads, one COMMAND each (default 1)\n"
      "  --max-attempts N   attempts cap without a stored policy (default 3)\n"
      "  --backoff SPEC     delay policy without a stored one: fixed:MS,\n"
      "                     exponential:BASE:CAP, jitter:SPEC (fixed:1000)\n"
      "  --once             stop after one job (--max-jobs 1)\n"
      "  --max-jobs N       stop after N jobs\n"
      "  --timeout DUR      stop after waiting DUR with nothing to claim\n"
      "  --no-pump          do not run the sweep (promote, repeats, flows)\n"
      "  --lock             keep the lock plane's markers while a job runs\n"
      "  --lanes            claim from QUEUE's lanes only (fair lanes: the\n"
      "                     ring serves each tenant's group in turn); without\n"
      "                     it, the flat pending set and the lanes take turns\n"
      "  --keep-stderr BYTES  COMMAND's stderr goes to the terminal as it\n"
      "                     comes and its last BYTES (default 4096, at most\n"
      "                     65536, 0: none) become the failed job's last_error:\n"
      "                     'exit N: <the last lines>'\n"
      "Exit: 0 stopped, 2 stopped idle before claiming anything." },
    { "repeat", cmd_repeat,
      "add QUEUE NAME --every DUR [--first-in DUR] [TEMPLATE|-]\n"
      "       | list QUEUE | cancel QUEUE NAME",
      "The repeat registry: each registration enqueues a fresh job with its\n"
      "template every DUR, fired by the sweep (`sweep`, `work`).\n"
      "  add     register NAME (the template is TEMPLATE, or stdin with '-'\n"
      "          or nothing); the first run is --first-in from now (0)\n"
      "  list    every registration: NAME every DUR next INSTANT TEMPLATE\n"
      "  cancel  remove NAME\n"
      "Exit: 0 done, 3 add: NAME exists, 6 cancel: NAME is not registered." },
    { "stalled", cmd_stalled, "QUEUE [--max N] [--limit N]",
      "The stalled sweep: each job whose lease lapsed counts a stall; at N\n"
      "stalls (default 1) it is dead-lettered with last_error 'stalled',\n"
      "otherwise it goes back to pending. Prints 'recovered ID' and 'dead ID'\n"
      "lines, then the counts.\n"
      "  --max N    stalls that dead-letter a job (default 1)\n"
      "  --limit N  lapsed leases looked at (default 100)" },
    { "sweep", cmd_sweep, "QUEUE [--batch N]",
      "The pump: promote due jobs, fire due repeat registrations, deliver\n"
      "flow completions (up to N each, default 100). Prints\n"
      "'promoted N fired N delivered N'." },
    { "policy", cmd_policy,
      "QUEUE [--max-attempts N --backoff SPEC | --clear] [--job ID]",
      "Show, set or clear the retry policy of QUEUE (or of one job with\n"
      "--job): the attempts cap and the backoff `work` and\n"
      "emq_policy_retry use. Kept in the file beside the keyspace, never\n"
      "exported.\n"
      "Exit: 0 done, 6 no policy is set." },
    { NULL, NULL, NULL, NULL },
};

/* ------------------------------------------------------------ helpers */

static int duration(emq_cli *c, const char *what, const char *s,
                    int64_t *out)
{
    if (emq_cli_parse_duration(s, out) == 0) {
        emq_cli_bare_duration(c, what, s, *out);
        return 0;
    }
    emq_cli_usage(c, "%s must be a duration (250ms, 5s, 10m, 2h, 1d or "
                  "milliseconds), not '%s'", what, s);
    return EMQ_EXIT_USAGE;
}

static int positive(emq_cli *c, const char *what, const char *s,
                    int64_t *out)
{
    if (emq_cli_int(c, what, s, out)) return EMQ_EXIT_USAGE;
    if (*out <= 0) {
        emq_cli_usage(c, "%s must be > 0", what);
        return EMQ_EXIT_USAGE;
    }
    return 0;
}

static int read_stdin(unsigned char **out, size_t *len)
{
    size_t cap = 4096, n = 0, r;
    unsigned char *b = malloc(cap + 1), *nb;
    while (b) {
        if (n == cap) {
            if (!(nb = realloc(b, 2 * cap + 1))) break;
            b = nb;
            cap *= 2;
        }
        r = fread(b + n, 1, cap - n, stdin);
        n += r;
        if (r == 0) {
            if (ferror(stdin)) break;
            b[n] = 0;
            *out = b;
            *len = n;
            return 0;
        }
    }
    free(b);
    return -1;
}

/* ------------------------------------------------------------- work */

#define MAX_KIDS 1024

static emq_pool *volatile the_pool;
static int64_t work_pinned;           /* $EMQLITE_NOW_MS for the pool      */

static int64_t work_clock(void *ctx)
{
    (void)ctx;
    return work_pinned;
}
/* Signals taken so far. Atomic, not a sig_atomic_t counted with ++: the
 * pool's threads take signals too, so a SIGINT and a SIGTERM sent at once
 * can run the handler on two threads at the same instant, and two
 * unsynchronised increments both saw 0 (both "first": nothing stopped the
 * COMMAND, and `work` waited for it for ever; seen by work_cli.sh under
 * ASan). A lock-free atomic is async-signal-safe. */
static _Atomic int stops;
static _Atomic pid_t kids[MAX_KIDS];  /* running COMMANDs (process groups) */

static void on_stop_signal(int sig)
{
    int i;
    (void)sig;
    if (atomic_fetch_add(&stops, 1) == 0) {
        if (the_pool) emq_pool_stop(the_pool);
        return;
    }
    for (i = 0; i < MAX_KIDS; i++) {
        pid_t k = atomic_load(&kids[i]);
        if (k > 0) kill(-k, SIGTERM);
    }
}

typedef struct work {
    emq_cli *c;
    char *const *cmd;            /* COMMAND and its arguments, NULL-ended */
    int json;
    size_t keep;                 /* stderr bytes kept as last_error       */
} work;

/* What the last command on this thread did, for its report line. */
static _Thread_local int last_status = -1;

static int kid_add(pid_t pid)
{
    int i;
    for (i = 0; i < MAX_KIDS; i++) {
        pid_t zero = 0;
        if (atomic_compare_exchange_strong(&kids[i], &zero, pid)) return i;
    }
    return -1;
}

/* environ plus the job's three variables (a copy made before fork). */
static char **job_env(const char *q, const emq_job *job, char *vars[3])
{
    size_t n = 0, i, k = 0;
    char **env;
    while (environ[n]) n++;
    if (!(env = calloc(n + 4, sizeof *env))) return NULL;
    for (i = 0; i < n; i++)
        if (strncmp(environ[i], "EMQLITE_QUEUE=", 14) &&
            strncmp(environ[i], "EMQLITE_JOB_ID=", 15) &&
            strncmp(environ[i], "EMQLITE_JOB_ATTEMPTS=", 21))
            env[k++] = environ[i];
    if (asprintf(&vars[0], "EMQLITE_QUEUE=%s", q) < 0) vars[0] = NULL;
    if (asprintf(&vars[1], "EMQLITE_JOB_ID=%s", job->id) < 0) vars[1] = NULL;
    if (asprintf(&vars[2], "EMQLITE_JOB_ATTEMPTS=%lld",
                 (long long)job->attempts) < 0)
        vars[2] = NULL;
    for (i = 0; i < 3; i++)
        if (vars[i]) env[k++] = vars[i];
    env[k] = NULL;
    return env;
}

/* The failed job's error with its stderr (run_command makes it, the pool
 * records it, report_job frees it: all on the worker's thread). */
static _Thread_local char *kept;

/* The tail of a command's stderr: the last `cap` bytes seen, in a ring. */
typedef struct tail {
    unsigned char *b;
    size_t cap, at, total;
} tail;

static void tail_add(tail *t, const unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; t->cap && i < n; i++) {
        t->b[t->at] = p[i];
        t->at = (t->at + 1) % t->cap;
    }
    t->total += n;
}

/* "exit N" and, when the command wrote to stderr, ": " and its last
 * bytes (from the first line start inside them when the head was cut,
 * "..." marking the cut; trailing newlines dropped) into a malloc'd
 * string. */
static char *tail_error(const tail *t, int status)
{
    size_t n = t->total < t->cap ? t->total : t->cap, i, from = 0, len;
    unsigned char *lin = malloc(n + 1);
    char *out;
    int cut = t->total > t->cap;
    if (lin == NULL) return NULL;
    for (i = 0; i < n; i++)
        lin[i] = t->b[(t->at + t->cap - n + i) % (t->cap ? t->cap : 1)];
    if (cut)
        for (i = 0; i + 1 < n; i++)
            if (lin[i] == '\n') { from = i + 1; break; }
    len = n;
    while (len > from && (lin[len - 1] == '\n' || lin[len - 1] == '\r'))
        len--;
    out = malloc(len - from + 32);
    if (out) {
        int k = snprintf(out, 32, "exit %d%s%s", status,
                         len > from ? ": " : "", len > from && cut ? "..." : "");
        memcpy(out + k, lin + from, len - from);
        out[k + (len - from)] = 0;
    }
    free(lin);
    return out;
}

/* Feed the payload to the command's stdin (`in`, nonblocking) and copy its
 * stderr (`err`) to ours as it comes, keeping the tail; until stderr ends,
 * or the command exited and what it left is read (a background child that
 * keeps stderr open does not hold the job). Returns with `in` closed. */
static void pump_io(pid_t pid, int in, int err, const emq_job *job,
                    tail *t, int *status, int *reaped)
{
    size_t off = 0;
    int exited = 0;
    unsigned char buf[4096];
    if (job->payload == NULL || job->payload_len == 0) {
        close(in);
        in = -1;
    } else {
        fcntl(in, F_SETFL, fcntl(in, F_GETFL) | O_NONBLOCK);
    }
    fcntl(err, F_SETFL, fcntl(err, F_GETFL) | O_NONBLOCK);
    while (err >= 0) {
        struct pollfd pf[2];
        int np = 0, r, ei = -1, ii = -1;
        if (err >= 0) { pf[np].fd = err; pf[np].events = POLLIN; ei = np++; }
        if (in >= 0) { pf[np].fd = in; pf[np].events = POLLOUT; ii = np++; }
        /* The only timed wake: after the command exited, a stderr kept
         * open by its own children is given up (below). */
        r = poll(pf, (nfds_t)np, exited ? 0 : 250);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        if (ii >= 0 && pf[ii].revents) {
            ssize_t k = write(in, job->payload + off, job->payload_len - off);
            if (k > 0) off += (size_t)k;
            if ((k < 0 && errno != EAGAIN && errno != EINTR) ||
                off >= job->payload_len || (pf[ii].revents & (POLLERR |
                                                              POLLHUP))) {
                close(in); /* done, or EPIPE: it does not read it all */
                in = -1;
            }
        }
        if (ei >= 0 && pf[ei].revents) {
            ssize_t k = read(err, buf, sizeof buf);
            if (k > 0) {
                size_t w = 0;
                tail_add(t, buf, (size_t)k);
                while (w < (size_t)k) {
                    ssize_t x = write(2, buf + w, (size_t)k - w);
                    if (x < 0 && errno == EINTR) continue;
                    if (x <= 0) break; /* our stderr is gone: keep going */
                    w += (size_t)x;
                }
                continue;
            }
            if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(err);
                err = -1;
                break;
            }
        }
        if (r == 0 && exited) break;  /* drained after the exit */
        if (r == 0 || !exited) {
            pid_t w = waitpid(pid, status, WNOHANG);
            if (w == pid) exited = *reaped = 1;
        }
    }
    if (in >= 0) close(in);
    if (err >= 0) close(err);
}

static void run_command(void *ctx, const char *q, const emq_job *job,
                        emq_outcome *out)
{
    static _Thread_local char why[64];
    work *w = ctx;
    char *vars[3] = {NULL, NULL, NULL}, **env = job_env(q, job, vars);
    pid_t parent = getpid(), pid;
    int fd[2], efd[2] = {-1, -1}, st = 0, slot = -1, reaped = 0;
    size_t off = 0;
    tail t = {NULL, w->keep, 0, 0};

    last_status = -1;
    free(kept);
    kept = NULL;
    if (w->keep > 0 && (t.b = malloc(w->keep)) == NULL) t.cap = 0;
    if (env == NULL || pipe2(fd, O_CLOEXEC) != 0 ||
        (t.cap > 0 && pipe2(efd, O_CLOEXEC) != 0)) {
        out->verdict = EMQ_WORK_FAILED;
        out->error = "cannot start the command";
        out->error_len = strlen(out->error);
        goto done;
    }
    pid = fork();
    if (pid == 0) {
        /* The child: its own process group (Ctrl-C is the worker's), dead
         * with its worker, the payload as stdin, default signals. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (dup2(fd[0], 0) < 0) _exit(127);
        if (efd[1] >= 0 && dup2(efd[1], 2) < 0) _exit(127);
        execvpe(w->cmd[0], w->cmd, env);
        _exit(127);
    }
    close(fd[0]);
    if (efd[1] >= 0) close(efd[1]);
    if (pid < 0) {
        close(fd[1]);
        if (efd[0] >= 0) close(efd[0]);
        out->verdict = EMQ_WORK_FAILED;
        out->error = "cannot start the command";
        out->error_len = strlen(out->error);
        goto done;
    }
    setpgid(pid, pid); /* both sides, whichever runs first */
    slot = kid_add(pid);
    /* A second signal that came before the command was registered (it
     * can start, and be seen started, before this line runs) found no
     * kid to stop: stop it now. */
    if (atomic_load(&stops) > 1) kill(-pid, SIGTERM);
    if (efd[0] >= 0) {
        pump_io(pid, fd[1], efd[0], job, &t, &st, &reaped);
    } else {
        while (job->payload && off < job->payload_len) {
            ssize_t k = write(fd[1], job->payload + off,
                              job->payload_len - off);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break; /* EPIPE: the command does not read it all */
            off += (size_t)k;
        }
        close(fd[1]);
    }
    if (!reaped)
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    if (slot >= 0) atomic_store(&kids[slot], 0);
    last_status = st;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        out->verdict = EMQ_WORK_DONE;
    } else if (WIFEXITED(st)) {
        snprintf(why, sizeof why, "exit %d", WEXITSTATUS(st));
        out->verdict = EMQ_WORK_FAILED;
        out->error = why;
        if (t.cap > 0 && t.total > 0 &&
            (kept = tail_error(&t, WEXITSTATUS(st))) != NULL)
            out->error = kept;
        out->error_len = strlen(out->error);
    } else {
        out->verdict = EMQ_WORK_ABANDONED;
    }
done:
    free(t.b);
    free(env);
    free(vars[0]);
    free(vars[1]);
    free(vars[2]);
}

static void report_job(void *ctx, const char *q, const emq_job *job,
                       int verdict, int rc)
{
    work *w = ctx;
    const char *what;
    char extra[64] = "";
    (void)q;
    free(kept);
    kept = NULL;
    if (w->json) {
        last_status = -1;
        return;
    }
    if (verdict == EMQ_WORK_ABANDONED) {
        what = "abandoned";
        if (last_status >= 0 && WIFSIGNALED(last_status))
            snprintf(extra, sizeof extra, " (signal %d: left to its lease)",
                     WTERMSIG(last_status));
    } else if (rc == EMQ_OK) {
        what = "done";
    } else if (rc == EMQ_SCHEDULED || rc == EMQ_DEAD) {
        what = rc == EMQ_DEAD ? "dead" : "scheduled";
        if (last_status >= 0 && WIFEXITED(last_status))
            snprintf(extra, sizeof extra, " (exit %d)",
                     WEXITSTATUS(last_status));
        else if (last_status < 0)
            snprintf(extra, sizeof extra, " (abandoned)");
    } else if (rc == EMQ_ESTALE || rc == EMQ_GONE) {
        what = "stale";
    } else {
        what = "error";
        snprintf(extra, sizeof extra, " (%s)", emq_strerror(rc));
    }
    /* One call per line: lines of several workers do not interleave. */
    fprintf(stdout, "%s %lld %s%s\n", job->id, (long long)job->attempts, what,
            extra);
    fflush(stdout);
    last_status = -1; /* a job that runs no command reports none */
}

static int cmd_work(emq_cli *c, int argc, char **argv)
{
    const char *lease_s = NULL, *conc_s = NULL, *max_s = NULL,
               *backoff_s = NULL, *once = NULL, *jobs_s = NULL,
               *timeout_s = NULL, *nopump = NULL, *lock = NULL,
               *lanes = NULL, *keep_s = NULL, *pos[1];
    emq_cli_opt opts[] = {
        { "--lease", 1, &lease_s }, { "--concurrency", 1, &conc_s },
        { "--max-attempts", 1, &max_s }, { "--backoff", 1, &backoff_s },
        { "--once", 0, &once }, { "--max-jobs", 1, &jobs_s },
        { "--timeout", 1, &timeout_s }, { "--no-pump", 0, &nopump },
        { "--lock", 0, &lock }, { "--lanes", 0, &lanes },
        { "--keep-stderr", 1, &keep_s }, { NULL, 0, NULL } };
    emq_worker_options wo;
    emq_pool_stats st;
    struct sigaction sa, old_int, old_term, old_pipe;
    emq_pool *pool = NULL;
    emq_options o;
    int npos, ex, rc, dd;
    int64_t v, keep = 4096;
    work w;

    for (dd = 1; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
        ;
    if ((ex = emq_cli_parse(c, dd, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (dd >= argc - 1)
        return emq_cli_usage(c, "no COMMAND after '--'");
    emq_worker_options_init(&wo);
    wo.queue = pos[0];
    wo.worker_name = getenv("EMQLITE_WORKER"); /* the history's claims */
    if (lease_s && (ex = duration(c, "--lease", lease_s, &wo.lease_ms)))
        return ex;
    if (wo.lease_ms <= 0) return emq_cli_usage(c, "--lease must be > 0");
    if (conc_s) {
        if ((ex = positive(c, "--concurrency", conc_s, &v))) return ex;
        if (v > 1024) return emq_cli_usage(c, "--concurrency is at most 1024");
        wo.workers = (int)v;
    }
    if (max_s && (ex = positive(c, "--max-attempts", max_s,
                                &wo.retry.max_attempts)))
        return ex;
    if (backoff_s && emq_backoff_parse(backoff_s, &wo.retry.backoff) != 0)
        return emq_cli_usage(c, "--backoff must be fixed:MS, "
                             "exponential:BASE:CAP or jitter:SPEC, not '%s'",
                             backoff_s);
    if (once) wo.max_jobs = 1;
    if (jobs_s && (ex = positive(c, "--max-jobs", jobs_s, &wo.max_jobs)))
        return ex;
    if (timeout_s && (ex = duration(c, "--timeout", timeout_s, &wo.idle_ms)))
        return ex;
    if (nopump) wo.pump_ms = -1;
    wo.track_locks = lock != NULL;
    wo.lanes = lanes != NULL;
    if (keep_s) {
        if (emq_cli_int(c, "--keep-stderr", keep_s, &keep))
            return EMQ_EXIT_USAGE;
        if (keep < 0 || keep > 65536)
            return emq_cli_usage(c, "--keep-stderr must be 0 to 65536 "
                                 "bytes, not '%s'", keep_s);
    }
    if (!emq_queue_valid(pos[0]))
        return emq_cli_fail(c, EMQ_EQUEUE, "invalid queue name");
    /* The file must exist and pass the fence before the pool opens it. */
    if ((ex = emq_cli_open(c))) return ex;
    w.c = c;
    w.cmd = argv + dd + 1;
    w.json = c->json;
    w.keep = (size_t)keep;
    wo.handler = run_command;
    wo.handler_ctx = &w;
    wo.on_event = report_job;
    wo.event_ctx = &w;
    emq_options_init(&o);
    {
        /* The pool's handles read the clock and wait for the lock as the
         * tool's own handle does. */
        const char *now = getenv("EMQLITE_NOW_MS");
        const char *bt = getenv("EMQLITE_BUSY_TIMEOUT");
        if (now && now[0]) {
            if (emq_cli_int(c, "EMQLITE_NOW_MS", now, &work_pinned))
                return EMQ_EXIT_USAGE;
            o.clock = work_clock;
        }
        if (bt && bt[0] && emq_cli_int(c, "EMQLITE_BUSY_TIMEOUT", bt, &v) == 0
            && v >= 0 && v <= 86400000)
            o.busy_timeout_ms = (int)v;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT); /* the handlers never nest */
    sigaddset(&sa.sa_mask, SIGTERM);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &old_pipe);
    rc = emq_pool_start(c->db_path, &o, &wo, &pool);
    if (rc == EMQ_OK) {
        the_pool = pool;
        if (atomic_load(&stops)) emq_pool_stop(pool); /* a signal before it was set */
        rc = emq_pool_join(pool, &st);
        the_pool = NULL; /* before it is freed: a late signal finds none */
        emq_pool_free(pool);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    if (rc < 0) return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"claimed\":%lld,\"completed\":%lld,\"retried\":%lld,"
               "\"dead\":%lld,\"abandoned\":%lld,\"stale\":%lld,"
               "\"errors\":%lld}\n", (long long)st.claimed,
               (long long)st.completed, (long long)st.retried,
               (long long)st.dead, (long long)st.abandoned,
               (long long)st.stale, (long long)st.errors);
    } else {
        fprintf(stderr, "emqlite: work: claimed %lld completed %lld retried "
                "%lld dead %lld abandoned %lld stale %lld\n",
                (long long)st.claimed, (long long)st.completed,
                (long long)st.retried, (long long)st.dead,
                (long long)st.abandoned, (long long)st.stale);
    }
    return st.claimed == 0 && atomic_load(&stops) == 0 ? EMQ_EXIT_EMPTY
                                                        : EMQ_EXIT_OK;
}

/* ----------------------------------------------------------- repeat */

static void repeat_line(emq_cli *c, const emq_repeat *r, int first)
{
    char every[64] = "?", next[64];
    if (r->every_ms > 0)
        emq_cli_format_duration(every, sizeof every, r->every_ms);
    emq_cli_format_instant(next, sizeof next, r->next_ms);
    if (c->json) {
        fputs(first ? "" : ",", stdout);
        fputs("{\"name\":", stdout);
        emq_cli_json_bytes(stdout, r->name, r->name_len);
        printf(",\"every_ms\":%lld,\"next_ms\":%lld,\"template\":",
               (long long)r->every_ms, (long long)r->next_ms);
        if (r->tpl) emq_cli_json_bytes(stdout, r->tpl, r->tpl_len);
        else fputs("null", stdout);
        fputs("}", stdout);
        return;
    }
    emq_cli_text_bytes(stdout, r->name, r->name_len);
    printf(" every %s next %s ", every, next);
    if (r->tpl) emq_cli_text_bytes(stdout, r->tpl, r->tpl_len);
    else fputs("(no template)", stdout);
    putchar('\n');
}

static int cmd_repeat(emq_cli *c, int argc, char **argv)
{
    const char *every_s = NULL, *first_s = NULL, *pos[4];
    emq_cli_opt opts[] = { { "--every", 1, &every_s },
                           { "--first-in", 1, &first_s },
                           { NULL, 0, NULL } };
    int npos, ex, rc;
    int64_t every = 0, first = 0;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 2, 4, &npos)) >= 0)
        return ex;
    if (strcmp(pos[0], "add") == 0) {
        unsigned char *buf = NULL;
        const void *tpl;
        size_t len;
        if (npos < 3) return emq_cli_usage(c, "repeat add QUEUE NAME");
        if (!every_s) return emq_cli_usage(c, "repeat add needs --every");
        if ((ex = duration(c, "--every", every_s, &every))) return ex;
        if (first_s && (ex = duration(c, "--first-in", first_s, &first)))
            return ex;
        if (npos == 4 && strcmp(pos[3], "-") != 0) {
            tpl = pos[3];
            len = strlen(pos[3]);
        } else {
            if (read_stdin(&buf, &len) != 0)
                return emq_cli_fail(c, EMQ_EIO, "cannot read stdin");
            tpl = buf;
        }
        if ((ex = emq_cli_open(c))) {
            free(buf);
            return ex;
        }
        rc = emq_repeat_register(c->db, pos[1], pos[2], every, tpl, len,
                                 first);
        free(buf);
        if (rc == EMQ_EXISTS) {
            if (c->json) emq_cli_ok(c, pos[1], NULL, "exists", "");
            else fprintf(stderr, "emqlite: exists: %s is registered already "
                         "(nothing changed)\n", pos[2]);
            return EMQ_EXIT_DUPLICATE;
        }
        if (rc < 0) return emq_cli_fail(c, rc, NULL);
        return emq_cli_ok(c, pos[1], NULL, "registered", "registered");
    }
    if (every_s || first_s)
        return emq_cli_usage(c, "--every and --first-in are for repeat add");
    if (strcmp(pos[0], "cancel") == 0) {
        if (npos != 3) return emq_cli_usage(c, "repeat cancel QUEUE NAME");
        if ((ex = emq_cli_open(c))) return ex;
        rc = emq_repeat_cancel(c->db, pos[1], pos[2]);
        if (rc == EMQ_ABSENT) {
            if (c->json) emq_cli_ok(c, pos[1], NULL, "absent", "");
            else fprintf(stderr, "emqlite: absent: %s is not registered\n",
                         pos[2]);
            return EMQ_EXIT_GONE;
        }
        if (rc < 0) return emq_cli_fail(c, rc, NULL);
        return emq_cli_ok(c, pos[1], NULL, "cancelled", "cancelled");
    }
    if (strcmp(pos[0], "list") == 0) {
        emq_repeat *r = NULL;
        size_t n = 0, i;
        if (npos != 2) return emq_cli_usage(c, "repeat list QUEUE");
        if ((ex = emq_cli_open(c))) return ex;
        if ((rc = emq_repeat_list(c->db, pos[1], &r, &n)) < 0)
            return emq_cli_fail(c, rc, NULL);
        if (c->json) fputs("[", stdout);
        for (i = 0; i < n; i++) repeat_line(c, &r[i], i == 0);
        if (c->json) fputs("]\n", stdout);
        emq_repeats_free(r, n);
        return EMQ_EXIT_OK;
    }
    return emq_cli_usage(c, "repeat takes add, list or cancel, not '%s'",
                         pos[0]);
}

/* ---------------------------------------------------- stalled, sweep */

static void id_list(const char *name, char (*ids)[EMQ_ID_SIZE], size_t n,
                    int json)
{
    size_t i;
    if (json) {
        printf("\"%s\":[", name);
        for (i = 0; i < n; i++) printf("%s\"%s\"", i ? "," : "", ids[i]);
        fputs("]", stdout);
        return;
    }
    for (i = 0; i < n; i++) printf("%s %s\n", name, ids[i]);
}

static int cmd_stalled(emq_cli *c, int argc, char **argv)
{
    const char *max_s = NULL, *limit_s = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--max", 1, &max_s }, { "--limit", 1, &limit_s },
                           { NULL, 0, NULL } };
    int npos, ex, rc;
    int64_t max = 1, limit = 100;
    emq_stalled s;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (max_s && (ex = positive(c, "--max", max_s, &max))) return ex;
    if (limit_s && (ex = positive(c, "--limit", limit_s, &limit))) return ex;
    if ((ex = emq_cli_open(c))) return ex;
    if ((rc = emq_stalled_check(c->db, pos[0], max, limit, &s)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        fputs(",", stdout);
        id_list("recovered", s.recovered, s.nrecovered, 1);
        fputs(",", stdout);
        id_list("dead", s.dead, s.ndead, 1);
        fputs("}\n", stdout);
    } else {
        id_list("recovered", s.recovered, s.nrecovered, 0);
        id_list("dead", s.dead, s.ndead, 0);
        printf("recovered %zu dead %zu\n", s.nrecovered, s.ndead);
    }
    emq_stalled_clear(&s);
    return EMQ_EXIT_OK;
}

static int cmd_sweep(emq_cli *c, int argc, char **argv)
{
    const char *batch_s = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--batch", 1, &batch_s }, { NULL, 0, NULL } };
    int npos, ex, rc;
    int64_t batch = 100;
    emq_sweep_counts k;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (batch_s && (ex = positive(c, "--batch", batch_s, &batch))) return ex;
    if ((ex = emq_cli_open(c))) return ex;
    if ((rc = emq_sweep(c->db, pos[0], batch, &k)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (emq_errmsg(c->db)[0]) /* entries set aside: say so */
        fprintf(stderr, "emqlite: note: %s\n", emq_errmsg(c->db));
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"promoted\":%lld,\"fired\":%lld,\"delivered\":%lld}\n",
               (long long)k.promoted, (long long)k.fired,
               (long long)k.delivered);
    } else {
        printf("promoted %lld fired %lld delivered %lld\n",
               (long long)k.promoted, (long long)k.fired,
               (long long)k.delivered);
    }
    return EMQ_EXIT_OK;
}

/* ------------------------------------------------------------ policy */

static int cmd_policy(emq_cli *c, int argc, char **argv)
{
    const char *max_s = NULL, *backoff_s = NULL, *clear = NULL,
               *job = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--max-attempts", 1, &max_s },
                           { "--backoff", 1, &backoff_s },
                           { "--clear", 0, &clear }, { "--job", 1, &job },
                           { NULL, 0, NULL } };
    emq_retry_policy p;
    char spec[200];
    int npos, ex, rc;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    memset(&p, 0, sizeof p);
    if (clear && (max_s || backoff_s))
        return emq_cli_usage(c, "--clear takes no --max-attempts/--backoff");
    if ((max_s != NULL) != (backoff_s != NULL))
        return emq_cli_usage(c, "set a policy with both --max-attempts and "
                             "--backoff");
    if (max_s && (ex = positive(c, "--max-attempts", max_s,
                                &p.max_attempts)))
        return ex;
    if (backoff_s && emq_backoff_parse(backoff_s, &p.backoff) != 0)
        return emq_cli_usage(c, "--backoff must be fixed:MS, "
                             "exponential:BASE:CAP or jitter:SPEC, not '%s'",
                             backoff_s);
    if ((ex = emq_cli_open(c))) return ex;
    if (clear || max_s) {
        rc = emq_policy_set(c->db, pos[0], job, clear ? NULL : &p);
        if (rc < 0) return emq_cli_fail(c, rc, NULL);
        return emq_cli_ok(c, pos[0], job, clear ? "cleared" : "set",
                          clear ? "cleared" : "set");
    }
    rc = emq_policy_get(c->db, pos[0], job, &p);
    if (rc == EMQ_ABSENT) {
        if (c->json) emq_cli_ok(c, pos[0], job, "absent", "");
        else fprintf(stderr, "emqlite: absent: no retry policy is set\n");
        return EMQ_EXIT_GONE;
    }
    if (rc < 0) return emq_cli_fail(c, rc, NULL);
    emq_backoff_format(&p.backoff, spec, sizeof spec);
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"max_attempts\":%lld,\"backoff\":\"%s\"}\n",
               (long long)p.max_attempts, spec);
    } else {
        printf("max-attempts %lld backoff %s\n", (long long)p.max_attempts,
               spec);
    }
    return EMQ_EXIT_OK;
}
