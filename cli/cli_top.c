/*
 * cli_top.c — `emqlite top`, the operator's live view (issue 34 item 6).
 *
 * On a terminal it is an ncurses screen that fits whatever window it gets:
 * the size is read at start and followed on every resize (ncurses turns
 * SIGWINCH into KEY_RESIZE); the header, a totals line and the column
 * titles stay on the first three lines while the queue list scrolls under
 * them with the selection kept in view; columns are dropped, least useful
 * first, when the window is narrow, and a name wider than its column is
 * cut in the middle with a visible ellipsis ("notificat…email-eu"), never
 * silently. Enter opens the job view of the selected queue: its jobs in
 * one state at a time (pending, active, scheduled, dead, completed) with
 * attempts, last transition, error or payload preview, and below the
 * selected job's payload, last error and history. Actions on the
 * selection (retry a dead job, run a scheduled job now, remove a job,
 * pause/resume the queue, requeue every dead job) each ask y/n first and
 * go through a second, read-write handle; the view itself reads only.
 *
 * Off a terminal (a pipe, or --json) it writes one JSON line per interval;
 * --once prints one plain table (full names) and ends: what scripts use.
 *
 * Rates: DONE/s and DEAD/s are the growth of the completed and failed
 * (dead-lettered) counters between two refreshes over the real time
 * between them; RETRY/s counts the job history's "retried" entries in
 * that time (emq_history_read from a cursor; "-" when history is off), so
 * retries and dead-letters are counted apart.
 */
#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_NCURSES
#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#endif
#include "cli.h"
#include "cli_time.h"

#define MAX_NAMED 256   /* QUEUE arguments                              */
#define LAPSE_MS 60000  /* "leases lapsing in the next minute"          */
#define LAPSE_CAP 1000  /* the lapse count stops there ("1000+")        */
#define HIST_PAGE 4096  /* history entries read per call when counting */
#define HIST_CALLS 16   /* ... and calls per refresh (then skip ahead)  */

/* One queue's figures at one refresh. */
typedef struct row {
    char name[129];
    emq_stats st;
    int64_t lanes;
    double done_s, dead_s, retry_s; /* per second (-1: not known yet)    */
    int64_t retried;                /* history "retried" since the last  */
    int has_oldest;
    int64_t oldest_ms;              /* NOW - mint time of the oldest id  */
    int64_t lapsing;                /* active leases ending within 60 s  */
} row;

/* The states of the job view, in tab order. */
enum { JS_PENDING, JS_ACTIVE, JS_SCHEDULED, JS_DEAD, JS_COMPLETED, JS_N };

/* One job of the job view's list. */
typedef struct jrow {
    char id[EMQ_ID_SIZE];
    int64_t score;      /* deadline (active), run-at (scheduled)         */
    int64_t attempts;   /* -1: none                                      */
    int64_t last_at;    /* the last history entry's time, -1: none       */
    int last_kind;
    char err[256];      /* escaped, one line                             */
    char pay[256];
} jrow;

/* The view's state across refreshes. */
typedef struct view {
    row *rows, *prev;
    size_t n, nprev, cap, total;
    int64_t now, mono, interval;
    int sort, reverse;
    size_t sel, top;          /* selected row; first row shown          */
    char selname[129];        /* the selection by name, across re-sorts */
    int hist_on;              /* history recorded (RETRY/s known)        */
    int64_t hist_seq;         /* the history cursor                     */
    int hist_primed;
    /* the job view */
    int jobs;                 /* 1: the job view is open                */
    char jq[129];             /* ... of this queue                      */
    int js;                   /* its state tab                          */
    int64_t jcount[JS_N];
    jrow *jr;
    size_t jn, jsel, jtop;    /* rows loaded (from jtop), selection     */
    char jselid[EMQ_ID_SIZE];
    /* a pending confirmation and the last message */
    int ask;                  /* the action awaiting y/n (0: none)      */
    char ask_q[129], ask_id[EMQ_ID_SIZE], prompt[400];
    char msg[512];
    emq_db *wdb;              /* the read-write handle of the actions   */
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

/* ------------------------------------------------------------- reading */

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

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const row *)a)->name, ((const row *)b)->name);
}

/* A history entry counted against its queue's row (rows in name order). */
typedef struct hcount {
    row *rows;
    size_t n;
    size_t seen;
} hcount;

static int count_retried(void *ctx, const emq_history_entry *e)
{
    hcount *h = ctx;
    row key, *r;
    h->seen++;
    if (e->kind != EMQ_HIST_RETRIED || !e->queue) return 0;
    snprintf(key.name, sizeof key.name, "%s", e->queue);
    r = h->n ? bsearch(&key, h->rows, h->n, sizeof *h->rows, cmp_name)
             : NULL;
    if (r) r->retried++;
    return 0;
}

/* The retries since the last refresh, from the history (cursor kept). */
static int read_retries(emq_db *db, view *v)
{
    emq_history_config hc;
    hcount h = { v->rows, v->n, 0 };
    int rc, calls = 0;
    if ((rc = emq_history_config_get(db, &hc)) != EMQ_OK) return rc;
    v->hist_on = hc.enabled;
    if (!v->hist_primed) {
        v->hist_primed = 1;
        return emq_history_last(db, &v->hist_seq);
    }
    for (;;) {
        int64_t last = v->hist_seq;
        h.seen = 0;
        rc = emq_history_read(db, NULL, v->hist_seq, HIST_PAGE, count_retried,
                              &h, &last);
        if (rc != EMQ_OK) return rc;
        v->hist_seq = last;
        if (h.seen < HIST_PAGE) return EMQ_OK;
        if (++calls == HIST_CALLS) /* a flood: count what was read, go on */
            return emq_history_last(db, &v->hist_seq);
    }
}

static const row *prev_of(const view *v, const char *name)
{
    row key;
    snprintf(key.name, sizeof key.name, "%s", name);
    return v->nprev ? bsearch(&key, v->prev, v->nprev, sizeof *v->prev,
                              cmp_name)
                    : NULL;
}

/* Refresh every figure; rates from the counters' growth since the last. */
static int reread(emq_cli *c, view *v, char **only, int nonly)
{
    int64_t mono = mono_ms(), dt = mono - v->mono;
    char **names = NULL;
    size_t nn = 0, i;
    row *t;
    int rc = EMQ_OK, first = v->mono == 0;
    /* The last refresh becomes prev (kept in name order for bsearch). */
    t = v->prev;
    v->prev = v->rows;
    v->nprev = v->n;
    v->rows = t;
    if (v->nprev > 1) qsort(v->prev, v->nprev, sizeof *v->prev, cmp_name);
    if (nonly > 0) {
        names = only;
        nn = (size_t)nonly;
    } else if ((rc = emq_queues(c->db, &names, &nn)) != EMQ_OK) {
        return rc;
    }
    if (nn > v->cap) {
        row *a = realloc(v->rows, nn * sizeof *a);
        row *b = a ? realloc(v->prev == NULL ? NULL : v->prev,
                             nn * sizeof *b) : NULL;
        if (a) v->rows = a;
        if (!a || !b) {
            if (nonly == 0) emq_queues_free(names, nn);
            return EMQ_ENOMEM;
        }
        v->prev = b;
        v->cap = nn;
    }
    v->now = emq_now(c->db);
    v->total = nn;
    v->n = 0;
    for (i = 0; i < nn; i++) {
        row *r = &v->rows[v->n];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", names[i]);
        if ((rc = read_row(c->db, v->now, r)) != EMQ_OK) break;
        v->n++;
    }
    if (nonly == 0) emq_queues_free(names, nn);
    if (rc != EMQ_OK) return rc;
    if (v->n > 1) qsort(v->rows, v->n, sizeof *v->rows, cmp_name);
    if ((rc = read_retries(c->db, v)) != EMQ_OK) return rc;
    for (i = 0; i < v->n; i++) {
        row *r = &v->rows[i];
        const row *p = prev_of(v, r->name);
        if (p && !first && dt > 0) {
            r->done_s = (double)(r->st.completed - p->st.completed) * 1000.0 /
                        (double)dt;
            r->dead_s = (double)(r->st.failed - p->st.failed) * 1000.0 /
                        (double)dt;
            r->retry_s = v->hist_on ? (double)r->retried * 1000.0 / (double)dt
                                    : -1;
        } else {
            r->done_s = r->dead_s = r->retry_s = -1;
        }
    }
    v->mono = mono;
    return EMQ_OK;
}

/* ----------------------------------------------------------------- sort */

static const struct {
    int key;
    const char *name;
} sorts[] = {
    {'n', "name"}, {'p', "pending"}, {'a', "active"}, {'s', "scheduled"},
    {'d', "dead"}, {'l', "lanes"}, {'c', "completed/s"}, {'f', "dead/s"},
    {'t', "retried/s"}, {'o', "oldest"}, {'e', "lapsing"},
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
    case 'f': return r->dead_s;
    case 't': return r->retry_s;
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
    if (v->n > 1) qsort(v->rows, v->n, sizeof *v->rows, cmp_rows);
    v->sel = 0;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->rows[i].name, v->selname) == 0) v->sel = i;
    if (v->n > 0)
        snprintf(v->selname, sizeof v->selname, "%s", v->rows[v->sel].name);
}

/* --------------------------------------------------------------- figures */

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

/* A count in at most `w` characters: 1234567 -> "1.2M" when it must. */
static const char *count(char *b, size_t n, int64_t v, int w)
{
    static const char units[] = "kMGTPE";
    double d = (double)v;
    int u = -1;
    snprintf(b, n, "%lld", (long long)v);
    if ((int)strlen(b) <= w) return b;
    while (d >= 999.95 && u < 5) {
        d /= 1000;
        u++;
    }
    snprintf(b, n, d < 9.95 ? "%.1f%c" : "%.0f%c", d, units[u < 0 ? 0 : u]);
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
        json_rate("failed_per_s", r->dead_s);
        json_rate("retried_per_s", r->retry_s);
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

/* The columns after the name: title, width (with its leading spaces),
 * and the order they are dropped in when the window is narrow (lowest
 * first). */
enum { C_PEND, C_ACT, C_SCHED, C_DEAD, C_LANES, C_DONE, C_RETRY, C_DEADS,
       C_OLD, C_LAPSE, C_PAUSED, C_N };
static const struct {
    const char *title;
    int w, drop;
} cols[C_N] = {
    [C_PEND] = { "PENDING", 8, 11 }, [C_ACT] = { "ACTIVE", 7, 9 },
    [C_SCHED] = { "SCHED", 6, 7 },   [C_DEAD] = { "DEAD", 6, 10 },
    [C_LANES] = { "LANES", 6, 2 },   [C_DONE] = { "DONE/s", 7, 6 },
    [C_RETRY] = { "RETRY/s", 8, 8 }, [C_DEADS] = { "DEAD/s", 7, 8 },
    [C_OLD] = { "OLDEST", 7, 3 },    [C_LAPSE] = { "LAPSE1m", 8, 1 },
    [C_PAUSED] = { "PAUSED", 7, 4 },
};

/* One cell's text (no padding). */
static const char *cell(char *b, size_t n, const row *r, int col)
{
    char t[32];
    switch (col) {
    case C_PEND: return count(b, n, r->st.pending, cols[col].w - 1);
    case C_ACT: return count(b, n, r->st.active, cols[col].w - 1);
    case C_SCHED: return count(b, n, r->st.scheduled, cols[col].w - 1);
    case C_DEAD: return count(b, n, r->st.dead, cols[col].w - 1);
    case C_LANES: return count(b, n, r->lanes, cols[col].w - 1);
    case C_DONE: return rate(b, n, r->done_s);
    case C_RETRY: return rate(b, n, r->retry_s);
    case C_DEADS: return rate(b, n, r->dead_s);
    case C_OLD: return short_age(b, n, r->has_oldest, r->oldest_ms);
    case C_LAPSE:
        snprintf(b, n, "%s%s", count(t, sizeof t, r->lapsing, 5),
                 r->lapsing >= LAPSE_CAP ? "+" : "");
        return b;
    default: return r->st.paused ? "yes" : "no";
    }
}

/* --once: one plain table, every column, full names. */
static void print_plain(emq_cli *c, const view *v)
{
    char t[48], b[64];
    int w = 5;
    emq_cli_format_instant(t, sizeof t, v->now);
    printf("emqlite top  %s  %s  queues %zu\n", c->db_path, t, v->total);
    for (size_t i = 0; i < v->n; i++)
        if ((int)strlen(v->rows[i].name) > w) w = (int)strlen(v->rows[i].name);
    printf("%-*s", w, "QUEUE");
    for (int k = 0; k < C_N; k++) printf("%*s", cols[k].w, cols[k].title);
    putchar('\n');
    for (size_t i = 0; i < v->n; i++) {
        printf("%-*s", w, v->rows[i].name);
        for (int k = 0; k < C_N; k++)
            printf("%*s", cols[k].w, cell(b, sizeof b, &v->rows[i], k));
        putchar('\n');
    }
    if (v->n == 0) puts("(no queues in the file yet)");
    fflush(stdout);
}

#ifdef HAVE_NCURSES
/* ------------------------------------------------------------- the job view */

static const char *const js_name[JS_N] = { "pending", "active", "scheduled",
                                           "dead", "completed" };
static const char *const js_set[JS_N] = { "pending", "active", "schedule",
                                          "dead", NULL };

/* Bytes as one printable line: controls and non-ASCII as C escapes,
 * at most `max` bytes of the source. */
static void escape_line(char *out, size_t on, const void *p, size_t len,
                        size_t max)
{
    const unsigned char *s = p;
    size_t o = 0;
    if (on == 0) return;
    for (size_t i = 0; s && i < len && i < max && o + 5 < on; i++) {
        unsigned char ch = s[i];
        if (ch == '\n') o += (size_t)snprintf(out + o, on - o, "\\n");
        else if (ch == '\t') o += (size_t)snprintf(out + o, on - o, "\\t");
        else if (ch == '\\') o += (size_t)snprintf(out + o, on - o, "\\\\");
        else if (ch < 0x20 || ch >= 0x7f)
            o += (size_t)snprintf(out + o, on - o, "\\x%02x", ch);
        else out[o++] = (char)ch;
    }
    out[o] = '\0';
}

static int last_cb(void *ctx, const emq_history_entry *e)
{
    jrow *j = ctx;
    j->last_at = e->at_ms;
    j->last_kind = e->kind;
    return 0;
}

/* Attempts, last error, payload and last transition of one job. */
static void decorate(emq_db *db, const char *q, jrow *j)
{
    emq_field *f = NULL;
    size_t nf = 0;
    j->attempts = j->last_at = -1;
    j->last_kind = 0;
    j->err[0] = j->pay[0] = '\0';
    if (emq_job_get(db, q, j->id, &f, &nf) == EMQ_OK) {
        for (size_t k = 0; k < nf; k++) {
            if (strcmp(f[k].name, "attempts") == 0)
                j->attempts = strtoll(f[k].value, NULL, 10);
            else if (strcmp(f[k].name, "last_error") == 0)
                escape_line(j->err, sizeof j->err, f[k].value, f[k].value_len,
                            120);
            else if (strcmp(f[k].name, "payload") == 0)
                escape_line(j->pay, sizeof j->pay, f[k].value, f[k].value_len,
                            120);
        }
        emq_fields_free(f, nf);
    }
    emq_job_history(db, q, j->id, last_cb, j);
}

typedef struct kwalk {
    view *v;
    size_t skip, want;
} kwalk;

static int kept_cb(void *ctx, const emq_kept_job *k)
{
    kwalk *w = ctx;
    jrow *j;
    if (w->skip > 0) {
        w->skip--;
        return 0;
    }
    if (w->v->jn >= w->want) return 1;
    j = &w->v->jr[w->v->jn++];
    memset(j, 0, sizeof *j);
    snprintf(j->id, sizeof j->id, "%s", k->id);
    j->score = k->at_ms;
    j->attempts = k->attempts;
    j->last_at = k->at_ms;
    j->last_kind = EMQ_HIST_COMPLETED;
    escape_line(j->err, sizeof j->err, k->error, k->error_len, 120);
    escape_line(j->pay, sizeof j->pay, k->payload, k->payload_len, 120);
    return 0;
}

/* Load the job view's rows jtop .. jtop+want-1 of its state. */
static int load_jobs(emq_cli *c, view *v, size_t want)
{
    emq_stats st;
    int64_t kc = 0;
    int rc;
    v->jn = 0;
    if ((rc = emq_stats_get(c->db, v->jq, &st)) != EMQ_OK) return rc;
    if ((rc = emq_kept_count(c->db, v->jq, EMQ_KEPT_COMPLETED, &kc)) !=
        EMQ_OK)
        return rc;
    v->jcount[JS_PENDING] = st.pending;
    v->jcount[JS_ACTIVE] = st.active;
    v->jcount[JS_SCHEDULED] = st.scheduled;
    v->jcount[JS_DEAD] = st.dead;
    v->jcount[JS_COMPLETED] = kc;
    free(v->jr);
    v->jr = calloc(want ? want : 1, sizeof *v->jr);
    if (!v->jr) return EMQ_ENOMEM;
    if (want == 0) return EMQ_OK;
    if (v->js == JS_COMPLETED) {
        kwalk w = { v, v->jtop, want };
        rc = emq_kept_list(c->db, v->jq, EMQ_KEPT_COMPLETED, NULL,
                           v->jtop + want, kept_cb, &w);
        return rc == 1 ? EMQ_OK : rc;
    } else {
        emq_member *m = NULL;
        size_t n = 0;
        /* dead: newest first; the others in the order they are served */
        rc = emq_list(c->db, v->jq, js_set[v->js], NULL, (int64_t)v->jtop,
                      (int64_t)want, v->js == JS_DEAD, &m, &n);
        if (rc != EMQ_OK) return rc;
        for (size_t i = 0; i < n; i++) {
            jrow *j = &v->jr[v->jn++];
            memset(j, 0, sizeof *j);
            snprintf(j->id, sizeof j->id, "%.*s", (int)m[i].len, m[i].member);
            j->score = m[i].score;
            decorate(c->db, v->jq, j);
        }
        emq_members_free(m, n);
    }
    return EMQ_OK;
}

/* ------------------------------------------------------------ the screen */

static const char *ell = "~"; /* "…" when the terminal speaks UTF-8 */

/* `s` fitted into `w` columns: as is when it fits, else cut in the middle
 * (mid) or at the end with the ellipsis standing for what was cut. Bytes
 * outside printable ASCII show as '?' so that one byte is one column. */
static void fit(char *out, size_t on, const char *s, int w, int mid)
{
    char clean[1024];
    size_t n = 0, o = 0;
    for (; s[n] && n + 1 < sizeof clean; n++)
        clean[n] = (s[n] >= 0x20 && s[n] < 0x7f) ? s[n] : '?';
    clean[n] = '\0';
    if (w <= 0) {
        out[0] = '\0';
        return;
    }
    if ((int)n <= w) {
        snprintf(out, on, "%s", clean);
        return;
    }
    if (w == 1) {
        snprintf(out, on, "%s", ell);
        return;
    }
    {
        int keep = w - 1, head = mid ? (keep + 1) / 2 : keep;
        int tail = keep - head;
        o = (size_t)snprintf(out, on, "%.*s%s", head, clean, ell);
        if (o < on) snprintf(out + o, on - o, "%s", clean + n - (size_t)tail);
    }
}

/* Write `s` (ASCII and the ellipsis) at row y, at most COLS columns (the
 * bottom-right cell is left alone), and clear the rest of the line. A line
 * wider than the window ends in the ellipsis: nothing is cut silently. */
static void line(int y, int attr, const char *s)
{
    int w = COLS - (y == LINES - 1 ? 1 : 0), cols_used = 0, total = 0;
    size_t el = strlen(ell);
    const char *p;
    if (y < 0 || y >= LINES) return;
    for (p = s; *p; total++) p += strncmp(p, ell, el) == 0 ? el : 1;
    move(y, 0);
    if (attr) attron(attr);
    while (*s && cols_used < w) {
        size_t k = strncmp(s, ell, el) == 0 ? el : 1;
        if (total > w && cols_used == w - 1) {
            addstr(ell);
            cols_used++;
            break;
        }
        addnstr(s, (int)k);
        s += k;
        cols_used++;
    }
    if (attr) {
        while (cols_used++ < w) addch(' ');
        attroff(attr);
    }
    clrtoeol();
}

/* Which columns fit in `width` beside a name column of at least
 * min(20, longest name): drop the least useful first. */
static int layout(const view *v, int width, int show[C_N])
{
    int longest = 5, sum = 0, want, namew;
    for (size_t i = 0; i < v->n; i++) {
        int l = (int)strlen(v->rows[i].name);
        if (l > longest) longest = l;
    }
    for (int k = 0; k < C_N; k++) {
        show[k] = 1;
        sum += cols[k].w;
    }
    want = longest < 20 ? longest : 20;
    for (int d = 1; d <= 11 && width - 2 - sum < want; d++)
        for (int k = 0; k < C_N; k++)
            if (show[k] && cols[k].drop == d) {
                show[k] = 0;
                sum -= cols[k].w;
            }
    namew = width - 2 - sum;
    if (namew > longest) namew = longest;
    return namew < 1 ? 1 : namew;
}

static int list_rows(void)
{
    int n = LINES - 5;
    return n < 1 ? 1 : n;
}

/* Keep the selection in view: move the first row shown. */
static void follow(size_t *top, size_t sel, size_t n, size_t rows)
{
    if (sel < *top) *top = sel;
    if (sel >= *top + rows) *top = sel - rows + 1;
    if (n <= rows) *top = 0;
    else if (*top > n - rows) *top = n - rows;
}

static void draw_bottom(const view *v, const char *keys)
{
    char b[1024];
    if (v->ask) {
        line(LINES - 1, A_BOLD, v->prompt);
        return;
    }
    snprintf(b, sizeof b, "%s", v->msg[0] ? v->msg : keys);
    line(LINES - 1, 0, b);
}

static void draw_queues(emq_cli *c, view *v)
{
    int show[C_N], namew = layout(v, COLS, show);
    size_t rows = (size_t)list_rows();
    char b[2048], f[1024], t[48], x[64];
    int64_t sum[4] = {0, 0, 0, 0};
    double rr = 0, dr = 0;
    int o;
    emq_cli_format_instant(t, sizeof t, v->now);
    fit(f, sizeof f, c->db_path, COLS / 3, 1);
    snprintf(b, sizeof b, "emqlite top  %s  %s  every %lldms  sort: %s%s", f,
             t, (long long)v->interval, sort_name(v->sort),
             v->reverse ? " (reversed)" : "");
    line(0, A_BOLD, b);
    for (size_t i = 0; i < v->n; i++) {
        sum[0] += v->rows[i].st.pending;
        sum[1] += v->rows[i].st.active;
        sum[2] += v->rows[i].st.scheduled;
        sum[3] += v->rows[i].st.dead;
        if (v->rows[i].retry_s > 0) rr += v->rows[i].retry_s;
        if (v->rows[i].dead_s > 0) dr += v->rows[i].dead_s;
    }
    snprintf(b, sizeof b, "%zu queues  pending %lld  active %lld  "
             "scheduled %lld  dead %lld  retried/s %s  dead/s %.1f", v->total,
             (long long)sum[0], (long long)sum[1], (long long)sum[2],
             (long long)sum[3], v->hist_on ? (snprintf(x, sizeof x, "%.1f", rr), x)
                                           : "- (history off)", dr);
    line(1, 0, b);
    o = snprintf(b, sizeof b, "  %-*s", namew, "QUEUE");
    for (int k = 0; k < C_N; k++)
        if (show[k])
            o += snprintf(b + o, sizeof b - (size_t)o, "%*s", cols[k].w,
                          cols[k].title);
    line(2, A_REVERSE, b);
    follow(&v->top, v->sel, v->n, rows);
    for (size_t i = 0; i < rows; i++) {
        size_t k = v->top + i;
        if (k >= v->n) {
            line(3 + (int)i, 0, i == 0 && v->n == 0
                                    ? "  (no queues in the file yet)" : "");
            continue;
        }
        fit(f, sizeof f, v->rows[k].name, namew, 1);
        /* pad by columns: the ellipsis is one column but several bytes */
        o = snprintf(b, sizeof b, "%s %s", k == v->sel ? ">" : " ", f);
        {
            int used = (int)strlen(v->rows[k].name) > namew
                           ? namew : (int)strlen(v->rows[k].name);
            for (; used < namew; used++) b[o++] = ' ';
            b[o] = '\0';
        }
        for (int col = 0; col < C_N; col++)
            if (show[col])
                o += snprintf(b + o, sizeof b - (size_t)o, "%*s", cols[col].w,
                              cell(x, sizeof x, &v->rows[k], col));
        line(3 + (int)i, k == v->sel ? A_BOLD : 0, b);
    }
    if (v->n > 0) {
        const row *r = &v->rows[v->sel];
        char pos[64];
        int pl = snprintf(pos, sizeof pos, "queue %zu/%zu%s  ", v->sel + 1,
                          v->n, r->st.paused ? " paused" : "");
        fit(f, sizeof f, r->name, COLS - pl, 1);
        snprintf(b, sizeof b, "%s%s", pos, f);
    } else {
        b[0] = '\0';
    }
    line(LINES - 2, A_REVERSE, b);
    draw_bottom(v, "q quit  j/k PgUp/PgDn g/G move  Enter jobs  P pause/resume"
                   "  R requeue dead  n p a s d l c f t o e sort  r reverse");
}

typedef struct hlines {
    char (*l)[512];
    size_t n, cap;
} hlines;

static int hist_line(void *ctx, const emq_history_entry *e)
{
    hlines *h = ctx;
    char t[48], err[300] = "", d[48] = "", *s;
    const char *k = emq_history_kind_name(e->kind);
    size_t o;
    if (h->n == h->cap) { /* keep the newest: shift out the oldest */
        memmove(h->l, h->l + 1, (h->cap - 1) * sizeof *h->l);
        h->n--;
    }
    s = h->l[h->n++];
    emq_cli_format_instant(t, sizeof t, e->at_ms);
    o = (size_t)snprintf(s, 512, "  %s  %-9s", t, k ? k : "?");
    if (e->attempts >= 0)
        o += (size_t)snprintf(s + o, 512 - o, "  attempt %lld",
                              (long long)e->attempts);
    if (e->delay_ms >= 0) {
        emq_cli_format_duration(d, sizeof d, e->delay_ms);
        o += (size_t)snprintf(s + o, 512 - o, "  delay %s", d);
    }
    if (e->error && o < 512) {  /* before who: the width may cut the end */
        escape_line(err, sizeof err, e->error, e->error_len, 200);
        o += (size_t)snprintf(s + o, 512 - o, "  error: %s", err);
    }
    if (e->host && e->host[0] && o < 512)
        snprintf(s + o, 512 - o, "  by %s pid %lld%s%s", e->host,
                 (long long)e->pid, e->worker ? " " : "",
                 e->worker ? e->worker : "");
    return 0;
}

static void draw_jobs(emq_cli *c, view *v)
{
    int h = LINES - 5, lr, dr, y, o;
    size_t rows;
    char b[2048], f[1024], t[48], a[112];
    if (h < 2) h = 2;
    lr = h / 2;
    if (lr < 1) lr = 1;
    dr = h - lr;
    rows = (size_t)lr;
    fit(f, sizeof f, v->jq, COLS - 40 > 8 ? COLS - 40 : 8, 1);
    emq_cli_format_instant(t, sizeof t, v->now);
    snprintf(b, sizeof b, "emqlite top  jobs of %s  %s", f, t);
    line(0, A_BOLD, b);
    o = 0;
    b[0] = '\0';
    for (int k = 0; k < JS_N; k++)
        o += snprintf(b + o, sizeof b - (size_t)o, "%s%d %s %lld%s  ",
                      k == v->js ? "[" : " ", k + 1, js_name[k],
                      (long long)v->jcount[k], k == v->js ? "]" : " ");
    line(1, 0, b);
    line(2, A_REVERSE, "  JOB             ATT  LAST                 "
                       "ERROR / PAYLOAD");
    follow(&v->jtop, v->jsel, (size_t)v->jcount[v->js], rows);
    if (load_jobs(c, v, rows) != EMQ_OK) v->jn = 0;
    if (v->jsel >= v->jtop + v->jn && v->jn > 0) v->jsel = v->jtop + v->jn - 1;
    if (v->jn == 0) v->jsel = 0;
    for (size_t i = 0; i < rows; i++) {
        const jrow *j = i < v->jn ? &v->jr[i] : NULL;
        int sel = j && v->jtop + i == v->jsel, w;
        if (!j) {
            line(3 + (int)i, 0, i == 0 ? "  (none)" : "");
            continue;
        }
        if (j->last_at >= 0)
            snprintf(a, sizeof a, "%-9s %s ago",
                     emq_history_kind_name(j->last_kind)
                         ? emq_history_kind_name(j->last_kind) : "?",
                     short_age(t, sizeof t, 1,
                               v->now > j->last_at ? v->now - j->last_at : 0));
        else
            snprintf(a, sizeof a, "-");
        o = snprintf(b, sizeof b, "%s %-14s %4s  %-20.20s ", sel ? ">" : " ",
                     j->id, j->attempts >= 0 ? (snprintf(t, sizeof t, "%lld",
                     (long long)j->attempts), t) : "-", a);
        w = COLS - o;
        if (j->err[0]) {
            snprintf(t, sizeof t, "error: ");
            fit(f, sizeof f, j->err, w - 7, 0);
        } else {
            t[0] = '\0';
            fit(f, sizeof f, j->pay, w, 0);
        }
        snprintf(b + o, sizeof b - (size_t)o, "%s%s", t, f);
        line(3 + (int)i, sel ? A_BOLD : 0, b);
        if (sel) snprintf(v->jselid, sizeof v->jselid, "%s", j->id);
    }
    if (v->jn == 0) v->jselid[0] = '\0';
    /* the selected job: payload, error, history (newest last) */
    y = 3 + lr;
    if (v->jn > 0 && v->jsel >= v->jtop) {
        const jrow *j = &v->jr[v->jsel - v->jtop];
        hlines hl = { NULL, 0, 0 };
        int left = dr - 3;
        snprintf(b, sizeof b, "job %s  %s  attempts %lld", j->id,
                 js_name[v->js], (long long)j->attempts);
        line(y++, A_REVERSE, b);
        fit(f, sizeof f, j->pay, COLS - 10, 0);
        snprintf(b, sizeof b, "payload   %s", f);
        line(y++, 0, b);
        fit(f, sizeof f, j->err[0] ? j->err : "-", COLS - 10, 0);
        snprintf(b, sizeof b, "error     %s", f);
        line(y++, 0, b);
        if (left > 1) {
            hl.cap = (size_t)(left - 1);
            hl.l = calloc(hl.cap, sizeof *hl.l);
            if (hl.l) emq_job_history(c->db, v->jq, j->id, hist_line, &hl);
            snprintf(b, sizeof b, "history%s",
                     hl.n ? " (newest last)"
                     : v->hist_on == EMQ_HISTORY_OFF ? ": off"
                     : v->hist_on == EMQ_HISTORY_FAILURES
                         ? ": none recorded (failures only)"
                         : ": none recorded");
            line(y++, 0, b);
            for (size_t i = 0; i < hl.n; i++) {
                fit(f, sizeof f, hl.l[i], COLS, 0);
                line(y++, 0, f);
            }
            free(hl.l);
        }
    }
    while (y < LINES - 2) line(y++, 0, "");
    snprintf(b, sizeof b, "job %zu/%lld", v->jn ? v->jsel + 1 : 0,
             (long long)v->jcount[v->js]);
    line(LINES - 2, A_REVERSE, b);
    draw_bottom(v, "q back  Tab/1-5 state  j/k move  r retry dead  n run now"
                   "  x remove  P pause/resume  R requeue dead  Q quit");
}

static void draw(emq_cli *c, view *v)
{
    erase();
    if (v->jobs) draw_jobs(c, v);
    else draw_queues(c, v);
    refresh();
}

/* ---------------------------------------------------------- the actions */

enum { A_NONE, A_RETRY, A_RUNNOW, A_REMOVE, A_PAUSE, A_RESUME, A_REQDEAD };

static void ask(view *v, int what, const char *q, const char *id)
{
    char qn[64];
    static const char *const verbs[] = {
        "", "Retry dead job %s of %s", "Run scheduled job %s of %s now",
        "Remove job %s of %s", "Pause queue %s%s", "Resume queue %s%s",
        "Requeue every dead job of %s%s",
    };
    fit(qn, sizeof qn, q, 40, 1);
    v->ask = what;
    snprintf(v->ask_q, sizeof v->ask_q, "%s", q);
    snprintf(v->ask_id, sizeof v->ask_id, "%s", id ? id : "");
    if (what == A_PAUSE || what == A_RESUME || what == A_REQDEAD)
        snprintf(v->prompt, sizeof v->prompt, verbs[what], qn, "");
    else
        snprintf(v->prompt, sizeof v->prompt, verbs[what], id, qn);
    strncat(v->prompt, "? y/n", sizeof v->prompt - strlen(v->prompt) - 1);
    v->msg[0] = '\0';
}

/* Carry out the confirmed action on the read-write handle. */
static void act(emq_cli *c, view *v)
{
    char err[512] = "";
    int rc = EMQ_OK, what = v->ask;
    int64_t moved = 0, skipped = 0;
    const char *q = v->ask_q, *id = v->ask_id;
    v->ask = A_NONE;
    if (!v->wdb) {
        /* The first action: the read-only handle makes way for one
         * read-write handle, which the view reads through from then on (one
         * handle per process on the file). */
        emq_options o;
        emq_options_init(&o);
        emq_close(c->db);
        c->db = NULL;
        rc = emq_open_ex(c->db_path, &o, &v->wdb, err, sizeof err);
        if (rc != EMQ_OK) {
            v->wdb = NULL;
            snprintf(v->msg, sizeof v->msg, "cannot open %.200s for writing: %.180s",
                     c->db_path, err[0] ? err : emq_strerror(rc));
            o.readonly = 1;
            if (emq_open_ex(c->db_path, &o, &c->db, err, sizeof err) !=
                EMQ_OK)
                c->db = NULL;
            return;
        }
        c->db = v->wdb;
    }
    switch (what) {
    case A_RETRY: rc = emq_job_reprocess(v->wdb, q, id); break;
    case A_RUNNOW: {
        const char *ids[1] = { id };
        int verdict = 0;
        rc = emq_job_run_now(v->wdb, q, 1, ids, &verdict, &moved);
        if (rc == EMQ_OK && moved == 0) {
            snprintf(v->msg, sizeof v->msg, "%s is no longer scheduled", id);
            return;
        }
        break;
    }
    case A_REMOVE: rc = emq_job_remove(v->wdb, q, id, NULL); break;
    case A_PAUSE: rc = emq_queue_pause(v->wdb, q); break;
    case A_RESUME: rc = emq_queue_resume(v->wdb, q); break;
    case A_REQDEAD:
        rc = emq_requeue_dead(v->wdb, q, 100, &moved, &skipped);
        break;
    default: return;
    }
    if (rc != EMQ_OK)
        snprintf(v->msg, sizeof v->msg, "failed: %s (%s)", emq_strerror(rc),
                 emq_cli_class_of(rc));
    else if (what == A_REQDEAD)
        snprintf(v->msg, sizeof v->msg, "requeued %lld dead jobs (skipped "
                 "%lld)", (long long)moved, (long long)skipped);
    else
        snprintf(v->msg, sizeof v->msg, "done: %.300s",
                 v->prompt + 0);
    if (rc == EMQ_OK) {
        char *qm = strstr(v->msg, "? y/n");
        if (qm) *qm = '\0';
    }
}

/* --------------------------------------------------------------- keys */

static void move_sel(size_t *sel, size_t n, long d)
{
    long s = (long)*sel + d;
    if (n == 0) { *sel = 0; return; }
    if (s < 0) s = 0;
    if (s >= (long)n) s = (long)n - 1;
    *sel = (size_t)s;
}

/* One key; returns 1 when the figures should be read again now. */
static int on_key(view *v, int k)
{
    long page = v->jobs ? (LINES - 5) / 2 : list_rows();
    if (page < 1) page = 1;
    if (v->ask) {
        if (k == 'y' || k == 'Y') return 2;
        v->ask = A_NONE;
        snprintf(v->msg, sizeof v->msg, "cancelled");
        return 0;
    }
    v->msg[0] = '\0';
    if (k == 'Q') { stop_flag = 1; return 0; }
    if (!v->jobs) {
        const row *r = v->n ? &v->rows[v->sel] : NULL;
        size_t old = v->sel;
        switch (k) {
        case 'q': case 3: stop_flag = 1; return 0;
        case 'j': case KEY_DOWN: move_sel(&v->sel, v->n, 1); break;
        case 'k': case KEY_UP: move_sel(&v->sel, v->n, -1); break;
        case KEY_NPAGE: case ' ': move_sel(&v->sel, v->n, page);
            if (v->top + (size_t)page < v->n) v->top += (size_t)page;
            break;
        case KEY_PPAGE: case 'b': move_sel(&v->sel, v->n, -page);
            v->top = v->top > (size_t)page ? v->top - (size_t)page : 0;
            break;
        case 'g': case KEY_HOME: v->sel = 0; break;
        case 'G': case KEY_END: move_sel(&v->sel, v->n, (long)v->n); break;
        case 'r': v->reverse = !v->reverse; sort_rows(v); break;
        case '\n': case '\r': case KEY_ENTER: case KEY_RIGHT:
            if (!r) break;
            v->jobs = 1;
            snprintf(v->jq, sizeof v->jq, "%s", r->name);
            v->js = r->st.dead ? JS_DEAD : JS_PENDING;
            v->jsel = v->jtop = 0;
            return 1;
        case 'P':
            if (r) ask(v, r->st.paused ? A_RESUME : A_PAUSE, r->name, NULL);
            break;
        case 'R':
            if (r && r->st.dead) ask(v, A_REQDEAD, r->name, NULL);
            else if (r) snprintf(v->msg, sizeof v->msg, "no dead job here");
            break;
        default:
            if (k > 0 && k < 128 && sort_name(k)) {
                v->sort = k;
                v->reverse = 0;
                sort_rows(v);
            }
            return 0;
        }
        if (v->sel != old && v->n)
            snprintf(v->selname, sizeof v->selname, "%s",
                     v->rows[v->sel].name);
        return 0;
    }
    switch (k) {
    case 'q': case 27: case KEY_BACKSPACE: case KEY_LEFT: case 'h': case 127:
        v->jobs = 0;
        return 1;
    case '\t': v->js = (v->js + 1) % JS_N; v->jsel = v->jtop = 0; return 1;
    case KEY_BTAB: v->js = (v->js + JS_N - 1) % JS_N; v->jsel = v->jtop = 0;
        return 1;
    case '1': case '2': case '3': case '4': case '5':
        v->js = k - '1'; v->jsel = v->jtop = 0; return 1;
    case 'j': case KEY_DOWN: move_sel(&v->jsel, (size_t)v->jcount[v->js], 1);
        break;
    case 'k': case KEY_UP: move_sel(&v->jsel, (size_t)v->jcount[v->js], -1);
        break;
    case KEY_NPAGE: case ' ':
        move_sel(&v->jsel, (size_t)v->jcount[v->js], page); break;
    case KEY_PPAGE: case 'b':
        move_sel(&v->jsel, (size_t)v->jcount[v->js], -page); break;
    case 'g': case KEY_HOME: v->jsel = 0; break;
    case 'G': case KEY_END:
        move_sel(&v->jsel, (size_t)v->jcount[v->js], v->jcount[v->js]); break;
    case 'r':
        if (!v->jselid[0] || v->js != JS_DEAD)
            snprintf(v->msg, sizeof v->msg, "r retries a dead job: "
                     "choose one in the dead tab (4)");
        else ask(v, A_RETRY, v->jq, v->jselid);
        break;
    case 'n':
        if (!v->jselid[0] || v->js != JS_SCHEDULED)
            snprintf(v->msg, sizeof v->msg, "n runs a scheduled job now: "
                     "choose one in the scheduled tab (3)");
        else ask(v, A_RUNNOW, v->jq, v->jselid);
        break;
    case 'x': case KEY_DC:
        if (!v->jselid[0] || v->js == JS_COMPLETED)
            snprintf(v->msg, sizeof v->msg, "x removes the selected job "
                     "(not a completed one: it has no row)");
        else ask(v, A_REMOVE, v->jq, v->jselid);
        break;
    case 'P': {
        emq_stats st;
        int paused = 0;
        for (size_t i = 0; i < v->n; i++)
            if (strcmp(v->rows[i].name, v->jq) == 0)
                paused = v->rows[i].st.paused;
        (void)st;
        ask(v, paused ? A_RESUME : A_PAUSE, v->jq, NULL);
        break;
    }
    case 'R':
        if (v->jcount[JS_DEAD] > 0) ask(v, A_REQDEAD, v->jq, NULL);
        else snprintf(v->msg, sizeof v->msg, "no dead job here");
        break;
    default: return 0;
    }
    return 0;
}

/* The interactive view; returns the library's code of a failed read. */
static int run_curses(emq_cli *c, view *v, char **only, int nonly,
                      int64_t limit)
{
    int rc = EMQ_OK;
    int64_t done = 0;
    setlocale(LC_ALL, "");
    if (strcmp(nl_langinfo(CODESET), "UTF-8") == 0) ell = "\xe2\x80\xa6";
    if (!initscr()) return EMQ_EINVAL;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    while (!stop_flag) {
        int64_t due;
        if ((rc = reread(c, v, only, nonly)) != EMQ_OK) break;
        sort_rows(v);
        done++;
        draw(c, v);
        if (limit && done >= limit) break;
        due = v->mono + v->interval;
        for (;;) {
            int64_t left = due - mono_ms();
            int k, r;
            if (left <= 0 || stop_flag) break;
            timeout((int)(left > 1000 ? 1000 : left));
            k = getch();
            if (k == ERR) continue;
            if (k == KEY_RESIZE) {
                draw(c, v);
                continue;
            }
            r = on_key(v, k);
            if (stop_flag) break;
            if (r == 2) {
                act(c, v);
                break; /* read the figures again at once */
            }
            if (r == 1) break;
            draw(c, v);
        }
    }
    endwin();
    return rc;
}
#endif /* HAVE_NCURSES */

/* ---------------------------------------------------------------- command */

static int cmd_top(emq_cli *c, int argc, char **argv)
{
    const char *interval_s = NULL, *count_s = NULL, *sort_s = NULL;
    const char *once = NULL;
    const char *pos[MAX_NAMED];
    emq_cli_opt opts[] = { { "--interval", 1, &interval_s },
                           { "--count", 1, &count_s },
                           { "--sort", 1, &sort_s },
                           { "--once", 0, &once }, { NULL, 0, NULL } };
    static view v;
    int64_t limit = 0, done = 0;
    int npos, ex, rc, tty;
    struct sigaction sa;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, MAX_NAMED,
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
        if (emq_cli_int(c, "--count", count_s, &limit)) return EMQ_EXIT_USAGE;
        if (limit < 1)
            return emq_cli_usage(c, "--count must be at least 1, not '%s'",
                                 count_s);
    }
    if (sort_s) {
        if (strlen(sort_s) != 1 || !sort_name(sort_s[0]))
            return emq_cli_usage(c, "--sort must be one of the sort keys n "
                                 "p a s d l c f t o e, not '%s'", sort_s);
        v.sort = sort_s[0];
    }
    if (once) limit = 1;
    if ((ex = emq_cli_open(c))) return ex;
    tty = !c->json && !once && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    rc = EMQ_OK;
    if (tty) {
#ifdef HAVE_NCURSES
        rc = run_curses(c, &v, (char **)pos, npos, limit);
#else
        emq_cli_fail(c, EMQ_EINVAL, "this emqlite was built without ncurses "
                     "(configure --without-ncurses): the interactive view is "
                     "not there; use --once or --json");
        return EMQ_EXIT_USAGE;
#endif
    } else {
        while (!stop_flag) {
            int64_t due;
            if ((rc = reread(c, &v, (char **)pos, npos)) != EMQ_OK) break;
            sort_rows(&v);
            done++;
            if (once && !c->json) print_plain(c, &v);
            else print_json(&v);
            if (limit && done >= limit) break;
            due = mono_ms() + v.interval;
            while (!stop_flag && mono_ms() < due) {
                struct timespec ts = {0, 50 * 1000000L};
                nanosleep(&ts, NULL);
            }
        }
    }
    free(v.rows);
    free(v.prev);
    free(v.jr);
    if (rc != EMQ_OK) return emq_cli_fail(c, rc, NULL);
    return EMQ_EXIT_OK;
}

const emq_cli_command emq_cli_top_commands[] = {
    { "top", cmd_top,
      "[QUEUE...] [--interval DURATION] [--count N] [--sort KEY] [--once]",
      "A live view of the file's queues (or of the QUEUEs named), refreshed\n"
      "every DURATION (default 1s), sized to the terminal and following its\n"
      "resizes: per queue the pending, active, scheduled and dead jobs, the\n"
      "lanes, completed/s, retried/s and dead-lettered/s over the last\n"
      "interval (retries from the job history), the age of the oldest\n"
      "pending job, the leases lapsing in the next minute and the paused\n"
      "flag. The header and column titles stay; the list scrolls under\n"
      "them; a name too long for its column is cut in the middle with an\n"
      "ellipsis. Columns are dropped when the window is narrow.\n"
      "Keys: j/k or arrows, PgUp/PgDn, g/G move; n p a s d l c f t o e sort\n"
      "(name, pending, active, scheduled, dead, lanes, completed/s, dead/s,\n"
      "retried/s, oldest, lapsing; figures largest first), r reverse; Enter\n"
      "opens the job view of the queue: its jobs by state (Tab or 1-5:\n"
      "pending, active, scheduled, dead, completed) with attempts, last\n"
      "transition, error or payload, and the selected job's payload, error\n"
      "and history. Actions, each asking y/n first: r retry a dead job, n run\n"
      "a scheduled job now, x remove a job (job view), P pause/resume the\n"
      "queue, R requeue every dead job. q leaves the job view, or quits.\n"
      "The view reads in short read transactions; actions use a second,\n"
      "read-write handle opened at the first one.\n"
      "When stdout is not a terminal (or with --json) it writes one JSON\n"
      "line per interval instead (emqlite(1) documents the shape); --once\n"
      "prints one plain table with full names (or one JSON line) and ends.\n"
      "  --interval DURATION  time between refreshes (>= 100ms; 2s, 1m)\n"
      "  --count N            stop after N refreshes\n"
      "  --sort KEY           the first sort key (default n)\n"
      "  --once               one snapshot, plain text (JSON with --json)\n"
      "Exit: 0 quit or N refreshes done; the failure's status otherwise." },
    { NULL, NULL, NULL, NULL }
};
