/*
 * cli_top.c — `emqlite top`, the operator's live view: one row per queue
 * (pending, active, scheduled, dead, lanes, completed/s and failed/s over
 * the last interval, the age of the oldest pending job, the leases that
 * lapse within a minute, paused), sorted by a keystroke, with a detail pane
 * for the selected queue (its lanes, its newest dead jobs and their last
 * errors). On a terminal the screen is redrawn in place with plain ANSI
 * escape codes (no curses); elsewhere (a pipe, or --json) one JSON line per
 * interval.
 *
 * Rules: only api/emqlite.h is used, and only its reads — each figure is
 * one read transaction (emq_stats_get, emq_lanes, emq_list, emq_job_get),
 * so the view never holds a lock a writer waits on. Rates are the growth of
 * the completed and failed counters between two refreshes divided by the
 * real time between them; the age of the oldest pending job is NOW minus
 * the mint time of the lowest pending id. The terminal is restored on every
 * way out (q, a signal, an error).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_time.h"

#define MAX_QUEUES 256  /* rows shown; more are counted in the header  */
#define LAPSE_MS 60000  /* "leases lapsing in the next minute"          */
#define LAPSE_CAP 1000  /* the lapse count stops there ("1000+")        */
#define DETAIL_LANES 6
#define DETAIL_DEAD 5

/* One queue's figures at one refresh. */
typedef struct row {
    char name[129];
    emq_stats st;
    int64_t lanes;
    double done_s, fail_s;   /* per second over the last interval (-1: n/a) */
    int has_oldest;
    int64_t oldest_ms;       /* NOW - mint time of the oldest pending id   */
    int64_t lapsing;         /* active leases with deadline <= NOW + 60s   */
} row;

/* The view's state across refreshes. */
typedef struct view {
    row rows[MAX_QUEUES];
    size_t n, total;         /* rows held; queues in the file              */
    int64_t now;             /* the file's NOW at the refresh              */
    int64_t mono;            /* monotonic ms at the refresh                */
    int64_t interval;        /* ms                                         */
    int sort, reverse;       /* sort key (a keystroke), order flipped      */
    size_t sel;              /* the selected row (detail pane)             */
    char selname[129];       /* ... by name, kept across re-sorts          */
} view;

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The mint time (Unix ms) of a branded id; -1 when it is not one. */
static int64_t mint_of(const char *id, size_t len)
{
    uint64_t snow;
    if (emq_id_parse(id, len, NULL, &snow) != EMQ_OK) return -1;
    return (int64_t)(snow >> 22) + EMQ_EPOCH_MS;
}

/* The previous refresh's counters of queue `name`, or NULL. */
static const row *prev_of(const row *prev, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(prev[i].name, name) == 0) return &prev[i];
    return NULL;
}

/* Read one queue's figures: each call is its own read transaction. */
static int read_row(emq_db *db, int64_t now, row *r)
{
    emq_member *m = NULL;
    size_t n = 0, nl = 0, total = 0;
    int64_t off = 0;
    int rc;
    if ((rc = emq_stats_get(db, r->name, &r->st)) != EMQ_OK) return rc;
    if ((rc = emq_lanes(db, r->name, NULL, 0, &nl, &total)) != EMQ_OK)
        return rc;
    r->lanes = (int64_t)total;
    r->has_oldest = 0;
    if ((rc = emq_list(db, r->name, "pending", NULL, 0, 1, 0, &m, &n)) !=
        EMQ_OK)
        return rc;
    if (n == 1) {
        int64_t t = mint_of(m[0].member, m[0].len);
        if (t >= 0) {
            r->has_oldest = 1;
            r->oldest_ms = now > t ? now - t : 0;
        }
    }
    emq_members_free(m, n);
    /* The active set is ordered by deadline: walk it from the soonest
     * until a deadline beyond the minute (or the cap). */
    r->lapsing = 0;
    while (r->lapsing < LAPSE_CAP) {
        size_t i;
        m = NULL;
        n = 0;
        if ((rc = emq_list(db, r->name, "active", NULL, off, 100, 0, &m,
                           &n)) != EMQ_OK)
            return rc;
        for (i = 0; i < n && m[i].score <= now + LAPSE_MS; i++) r->lapsing++;
        emq_members_free(m, n);
        if (i < 100) break;
        off += 100;
    }
    return EMQ_OK;
}

/* Refresh every figure; rates from the counters' growth since `prev`. */
static int refresh(emq_cli *c, view *v, char **only, int nonly)
{
    static row prev[MAX_QUEUES];
    size_t nprev = v->n, i;
    int64_t mono = mono_ms(), dt = mono - v->mono;
    char **names = NULL;
    size_t nn = 0;
    int rc = EMQ_OK;
    memcpy(prev, v->rows, nprev * sizeof *prev);
    if (nonly > 0) {
        names = only;
        nn = (size_t)nonly;
    } else if ((rc = emq_queues(c->db, &names, &nn)) != EMQ_OK) {
        return rc;
    }
    v->now = emq_now(c->db);
    v->total = nn;
    v->n = 0;
    for (i = 0; i < nn && v->n < MAX_QUEUES; i++) {
        row *r = &v->rows[v->n];
        const row *p;
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", names[i]);
        if ((rc = read_row(c->db, v->now, r)) != EMQ_OK) break;
        p = prev_of(prev, nprev, r->name);
        if (p && nprev > 0 && dt > 0) {
            r->done_s = (double)(r->st.completed - p->st.completed) * 1000.0 /
                        (double)dt;
            r->fail_s = (double)(r->st.failed - p->st.failed) * 1000.0 /
                        (double)dt;
        } else {
            r->done_s = r->fail_s = -1;
        }
        v->n++;
    }
    if (nonly == 0) emq_queues_free(names, nn);
    v->mono = mono;
    return rc;
}

/* ----------------------------------------------------------------- sort */

static const struct {
    int key;
    const char *name;
} sorts[] = {
    {'n', "name"}, {'p', "pending"}, {'a', "active"}, {'s', "scheduled"},
    {'d', "dead"}, {'l', "lanes"}, {'c', "completed/s"}, {'f', "failed/s"},
    {'o', "oldest"}, {'e', "lapsing"},
};

static const char *sort_name(int key)
{
    for (size_t i = 0; i < sizeof sorts / sizeof *sorts; i++)
        if (sorts[i].key == key) return sorts[i].name;
    return NULL;
}

static int sort_key;
static int sort_rev;

static double sort_value(const row *r)
{
    switch (sort_key) {
    case 'p': return (double)r->st.pending;
    case 'a': return (double)r->st.active;
    case 's': return (double)r->st.scheduled;
    case 'd': return (double)r->st.dead;
    case 'l': return (double)r->lanes;
    case 'c': return r->done_s;
    case 'f': return r->fail_s;
    case 'o': return r->has_oldest ? (double)r->oldest_ms : -1;
    case 'e': return (double)r->lapsing;
    default: return 0;
    }
}

/* Names ascending; figures descending (largest first); ties by name. */
static int cmp_rows(const void *a, const void *b)
{
    const row *x = a, *y = b;
    int k = 0;
    if (sort_key != 'n') {
        double vx = sort_value(x), vy = sort_value(y);
        k = vx > vy ? -1 : vx < vy ? 1 : 0;
    }
    if (k == 0) k = strcmp(x->name, y->name);
    return sort_rev ? -k : k;
}

static void sort_rows(view *v)
{
    sort_key = v->sort;
    sort_rev = v->reverse;
    qsort(v->rows, v->n, sizeof *v->rows, cmp_rows);
    v->sel = 0;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->rows[i].name, v->selname) == 0) v->sel = i;
    if (v->n > 0)
        snprintf(v->selname, sizeof v->selname, "%s", v->rows[v->sel].name);
}

/* --------------------------------------------------------------- output */

/* A duration for a column: "3s", "2m", "1h" (the largest whole unit). */
static const char *short_age(char *b, size_t n, int has, int64_t ms)
{
    if (!has) snprintf(b, n, "-");
    else if (ms < 1000) snprintf(b, n, "%lldms", (long long)ms);
    else if (ms < 60000) snprintf(b, n, "%llds", (long long)(ms / 1000));
    else if (ms < 3600000) snprintf(b, n, "%lldm", (long long)(ms / 60000));
    else if (ms < 86400000) snprintf(b, n, "%lldh", (long long)(ms / 3600000));
    else snprintf(b, n, "%lldd", (long long)(ms / 86400000));
    return b;
}

static const char *rate(char *b, size_t n, double r)
{
    if (r < 0) snprintf(b, n, "-");
    else snprintf(b, n, "%.1f", r);
    return b;
}

static void json_rate(const char *name, double r)
{
    if (r < 0) printf(",\"%s\":null", name);
    else printf(",\"%s\":%.3f", name, r);
}

/* One JSON line: the snapshot (doc/emqlite.1 documents the shape). */
static void print_json(const view *v)
{
    char t[48];
    emq_cli_format_instant(t, sizeof t, v->now);
    printf("{\"at\":%lld,\"at_utc\":\"%s\",\"interval_ms\":%lld,"
           "\"queues_total\":%zu,\"queues\":[",
           (long long)v->now, t, (long long)v->interval, v->total);
    for (size_t i = 0; i < v->n; i++) {
        const row *r = &v->rows[i];
        printf("%s{\"queue\":", i ? "," : "");
        emq_cli_json_str(stdout, r->name);
        printf(",\"pending\":%lld,\"active\":%lld,\"scheduled\":%lld,"
               "\"dead\":%lld,\"lanes\":%lld,\"completed\":%lld,"
               "\"failed\":%lld",
               (long long)r->st.pending, (long long)r->st.active,
               (long long)r->st.scheduled, (long long)r->st.dead,
               (long long)r->lanes, (long long)r->st.completed,
               (long long)r->st.failed);
        json_rate("completed_per_s", r->done_s);
        json_rate("failed_per_s", r->fail_s);
        if (r->has_oldest)
            printf(",\"oldest_pending_ms\":%lld", (long long)r->oldest_ms);
        else
            fputs(",\"oldest_pending_ms\":null", stdout);
        printf(",\"lapsing_60s\":%lld,\"paused\":%s}", (long long)r->lapsing,
               r->st.paused ? "true" : "false");
    }
    puts("]}");
    fflush(stdout);
}

/* The detail pane of the selected queue: lanes, newest dead jobs. */
static void print_detail(emq_cli *c, const view *v, FILE *f)
{
    const row *r;
    emq_lane_info lanes[DETAIL_LANES];
    size_t nl = 0, total = 0, nd = 0, i;
    emq_member *dead = NULL;
    if (v->n == 0) return;
    r = &v->rows[v->sel];
    fprintf(f, "\033[K\r\n\033[7m %s \033[0m\033[K\r\n", r->name);
    if (emq_lanes(c->db, r->name, lanes, DETAIL_LANES, &nl, &total) ==
        EMQ_OK) {
        fprintf(f, " lanes: %zu\033[K\r\n", total);
        for (i = 0; i < nl; i++)
            fprintf(f, "   %s  depth %lld%s\033[K\r\n", lanes[i].group,
                    (long long)lanes[i].depth,
                    lanes[i].paused ? "  paused" : "");
        if (total > nl)
            fprintf(f, "   ... %zu more\033[K\r\n", total - nl);
    }
    fprintf(f, " dead: %lld, newest first\033[K\r\n", (long long)r->st.dead);
    if (emq_list(c->db, r->name, "dead", NULL, 0, DETAIL_DEAD, 1, &dead,
                 &nd) != EMQ_OK)
        return;
    for (i = 0; i < nd; i++) {
        emq_field *fl = NULL;
        size_t nf = 0, k;
        const char *err = "", *att = "?";
        size_t elen = 0;
        int64_t t = mint_of(dead[i].member, dead[i].len);
        char iso[48] = "";
        if (emq_job_get(c->db, r->name, dead[i].member, &fl, &nf) == EMQ_OK)
            for (k = 0; k < nf; k++) {
                if (strcmp(fl[k].name, "last_error") == 0) {
                    err = fl[k].value;
                    elen = fl[k].value_len;
                } else if (strcmp(fl[k].name, "attempts") == 0) {
                    att = fl[k].value;
                }
            }
        if (t >= 0) emq_cli_format_instant(iso, sizeof iso, t);
        fprintf(f, "   %s  %s  attempts %s  ", dead[i].member, iso, att);
        if (elen > 60) elen = 60;
        emq_cli_text_bytes(f, err, elen);
        fputs("\033[K\r\n", f);
        emq_fields_free(fl, nf);
    }
    emq_members_free(dead, nd);
}

/* The whole screen, from the top-left corner, each line cleared to its
 * end and the rest of the screen cleared after the last. */
static void print_screen(emq_cli *c, const view *v)
{
    FILE *f = stdout;
    char t[48], a[32], b[32], o[32];
    emq_cli_format_instant(t, sizeof t, v->now);
    fprintf(f, "\033[H\033[1memqlite top\033[0m  %s  %s  every %lldms  "
            "sort: %s%s\033[K\r\n", c->db_path, t, (long long)v->interval,
            sort_name(v->sort), v->reverse ? " (reversed)" : "");
    if (v->total > v->n)
        fprintf(f, "%zu queues, %zu shown\033[K\r\n", v->total, v->n);
    fprintf(f, "\033[7m  %-20s %8s %7s %7s %7s %5s %7s %7s %7s %7s %6s"
            "\033[0m\033[K\r\n",
            "QUEUE", "PENDING", "ACTIVE", "SCHED", "DEAD", "LANES", "DONE/s",
            "FAIL/s", "OLDEST", "LAPSE1m", "PAUSED");
    for (size_t i = 0; i < v->n; i++) {
        const row *r = &v->rows[i];
        fprintf(f, "%s %-20.20s %8lld %7lld %7lld %7lld %5lld %7s %7s %7s "
                "%6lld%s %6s\033[K\r\n",
                i == v->sel ? ">" : " ", r->name, (long long)r->st.pending,
                (long long)r->st.active, (long long)r->st.scheduled,
                (long long)r->st.dead, (long long)r->lanes,
                rate(a, sizeof a, r->done_s), rate(b, sizeof b, r->fail_s),
                short_age(o, sizeof o, r->has_oldest, r->oldest_ms),
                (long long)r->lapsing, r->lapsing >= LAPSE_CAP ? "+" : " ",
                r->st.paused ? "yes" : "no");
    }
    if (v->n == 0) fputs("  (no queues in the file yet)\033[K\r\n", f);
    print_detail(c, v, f);
    fputs("\033[K\r\n keys: n p a s d l c f o e sort, r reverse, j/k or "
          "arrows select, q quit\033[K\r\n\033[J", f);
    fflush(f);
}

/* --------------------------------------------------------------- terminal */

static struct termios saved_tio;
static int tio_saved;

static void term_restore(void)
{
    if (tio_saved) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
        tio_saved = 0;
    }
    fputs("\033[?25h\033[?1049l", stdout);
    fflush(stdout);
}

static int term_raw(void)
{
    struct termios t;
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
        t = saved_tio;
        t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        t.c_cc[VMIN] = 0;
        t.c_cc[VTIME] = 0;
        if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0) tio_saved = 1;
    }
    fputs("\033[?1049h\033[?25l\033[2J", stdout);
    return 0;
}

/* Wait up to `ms` for a key; returns it, 0 on timeout, -1 on a signal.
 * Arrow keys (ESC [ A / B) answer 'k' / 'j'. */
static int read_key(int64_t ms)
{
    fd_set rf;
    struct timeval tv;
    unsigned char ch[3];
    ssize_t n;
    FD_ZERO(&rf);
    FD_SET(STDIN_FILENO, &rf);
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
    if (select(STDIN_FILENO + 1, &rf, NULL, NULL, &tv) <= 0)
        return stop_flag ? -1 : 0;
    /* One key a call: keys typed together are read one by one. */
    n = read(STDIN_FILENO, ch, 1);
    if (n <= 0) return n == 0 ? 'q' : 0; /* end of input: quit */
    if (ch[0] == 27 && read(STDIN_FILENO, ch + 1, 2) == 2 && ch[1] == '[')
        return ch[2] == 'A' ? 'k' : ch[2] == 'B' ? 'j' : 0;
    return ch[0];
}

/* ---------------------------------------------------------------- command */

static int cmd_top(emq_cli *c, int argc, char **argv)
{
    const char *interval_s = NULL, *count_s = NULL, *sort_s = NULL;
    const char *pos[MAX_QUEUES];
    emq_cli_opt opts[] = { { "--interval", 1, &interval_s },
                           { "--count", 1, &count_s },
                           { "--sort", 1, &sort_s }, { NULL, 0, NULL } };
    static view v;
    int64_t count = 0, done = 0;
    int npos, ex, rc, tty;
    struct sigaction sa;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, MAX_QUEUES,
                            &npos)) >= 0)
        return ex;
    memset(&v, 0, sizeof v);
    v.interval = 1000;
    v.sort = 'n';
    if (interval_s &&
        (emq_cli_parse_duration(interval_s, &v.interval) != 0 ||
         v.interval < 100))
        return emq_cli_usage(c, "--interval must be a duration of at least "
                             "100ms (500ms, 2s, 1m; a bare number is "
                             "milliseconds), not '%s'", interval_s);
    if (count_s) {
        if (emq_cli_int(c, "--count", count_s, &count)) return EMQ_EXIT_USAGE;
        if (count < 1)
            return emq_cli_usage(c, "--count must be at least 1, not '%s'",
                                 count_s);
    }
    if (sort_s) {
        if (strlen(sort_s) != 1 || !sort_name(sort_s[0]))
            return emq_cli_usage(c, "--sort must be one of the sort keys n "
                                 "p a s d l c f o e, not '%s'", sort_s);
        v.sort = sort_s[0];
    }
    if ((ex = emq_cli_open(c))) return ex;
    tty = !c->json && isatty(STDOUT_FILENO);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (tty) term_raw();
    v.mono = mono_ms();
    rc = EMQ_OK;
    while (!stop_flag) {
        int64_t due;
        if ((rc = refresh(c, &v, (char **)pos, npos)) != EMQ_OK) break;
        sort_rows(&v);
        done++;
        if (!tty) {
            print_json(&v);
            if (count && done >= count) break;
            due = mono_ms() + v.interval;
            while (!stop_flag && mono_ms() < due) {
                struct timespec ts = {0, 50 * 1000000L};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        print_screen(c, &v);
        if (count && done >= count) break;
        /* Keys redraw at once from the figures held; the figures are read
         * again when the interval is over. */
        due = v.mono + v.interval;
        for (;;) {
            int64_t left = due - mono_ms();
            int k;
            if (left <= 0 || stop_flag) break;
            k = read_key(left);
            if (k < 0) break;
            if (k == 0) continue;
            if (k == 'q' || k == 'Q' || k == 3) {
                stop_flag = 1;
                break;
            }
            if (k == 'r') {
                v.reverse = !v.reverse;
            } else if (k == 'j' && v.sel + 1 < v.n) {
                snprintf(v.selname, sizeof v.selname, "%s",
                         v.rows[++v.sel].name);
            } else if (k == 'k' && v.sel > 0) {
                snprintf(v.selname, sizeof v.selname, "%s",
                         v.rows[--v.sel].name);
            } else if (sort_name(k)) {
                v.sort = k;
                v.reverse = 0;
            } else {
                continue;
            }
            sort_rows(&v);
            print_screen(c, &v);
        }
    }
    if (tty) term_restore();
    if (rc != EMQ_OK) return emq_cli_fail(c, rc, NULL);
    return EMQ_EXIT_OK;
}

const emq_cli_command emq_cli_top_commands[] = {
    { "top", cmd_top,
      "[QUEUE...] [--interval DURATION] [--count N] [--sort KEY]",
      "A live view of the file's queues (or of the QUEUEs named), refreshed\n"
      "every DURATION (default 1s): per queue the pending, active, scheduled\n"
      "and dead jobs, the lanes, completed/s and failed/s over the last\n"
      "interval, the age of the oldest pending job, the leases lapsing in the\n"
      "next minute and the paused flag; below, the selected queue's lanes and\n"
      "newest dead jobs with their last errors. Reads only, in short read\n"
      "transactions: it never blocks a writer.\n"
      "Keys: n name, p pending, a active, s scheduled, d dead, l lanes,\n"
      "c completed/s, f failed/s, o oldest, e lapsing (figures sort largest\n"
      "first), r reverse, j/k or the arrows select a queue, q quit.\n"
      "When stdout is not a terminal (or with --json) it writes one JSON\n"
      "line per interval instead (emqlite(1) documents the shape).\n"
      "  --interval DURATION  time between refreshes (>= 100ms; 2s, 1m)\n"
      "  --count N            stop after N refreshes\n"
      "  --sort KEY           the first sort key (default n)\n"
      "Exit: 0 quit or N refreshes done; the failure's status otherwise." },
    { NULL, NULL, NULL, NULL }
};
