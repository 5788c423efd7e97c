/*
 * cli_ops.c — the operator's commands of the emqlite tool (Tier 2, the
 * read plane): list, job, requeue, remove, drain, obliterate, counts,
 * progress, logs, update, delay, claim-batch, events and metrics.
 *
 * Rules: only api/emqlite.h is used; every command has --help and --json
 * (one JSON document on stdout; `events` writes one JSON line per event
 * instead), reports failures through emq_cli_fail and answers the exit
 * statuses of doc/emqlite.1. Times are printed as integer Unix ms and as
 * UTC ISO-8601; durations and instants are parsed by emq_cli_duration and
 * emq_cli_time only.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_time.h"

static int cmd_requeue(emq_cli *c, int argc, char **argv);
static int cmd_remove(emq_cli *c, int argc, char **argv);
static int cmd_drain(emq_cli *c, int argc, char **argv);
static int cmd_obliterate(emq_cli *c, int argc, char **argv);
static int cmd_counts(emq_cli *c, int argc, char **argv);
static int cmd_progress(emq_cli *c, int argc, char **argv);
static int cmd_logs(emq_cli *c, int argc, char **argv);
static int cmd_update(emq_cli *c, int argc, char **argv);
static int cmd_delay(emq_cli *c, int argc, char **argv);
static int cmd_claim_batch(emq_cli *c, int argc, char **argv);
static int cmd_events(emq_cli *c, int argc, char **argv);
static int cmd_metrics(emq_cli *c, int argc, char **argv);

const emq_cli_command emq_cli_ops_commands[] = {
    { "list", emq_cli_list,
      "QUEUE --state S [--limit N] [--after ID] [--offset K] [--tail] [--lane G]",
      "List the jobs of QUEUE in one state, newest transition first, one\n"
      "line each: ID, the time of its last transition (Unix ms and UTC\n"
      "ISO-8601) and its kind (from the job history; without one, the id's\n"
      "mint time and '-'), its attempts, its lease deadline (active) or\n"
      "run-at (scheduled), its lane group, its last error and a preview of\n"
      "its payload (40 bytes, escaped; a completed job's result too).\n"
      "  --state S   pending, active, scheduled, dead, completed (kept\n"
      "              host-side: see 'emqlite retention') or\n"
      "              awaiting_children (flow parents)\n"
      "  --lane G    the jobs waiting in the lane of group G instead\n"
      "  --limit N   at most N jobs (default 100)\n"
      "  --after ID  the page after the job ID (the last of the previous\n"
      "              page; --json gives it as \"next\")\n"
      "  --offset K  skip K more\n"
      "  --tail      oldest transition first\n"
      "The cost grows with the size of the state's set (every job is read\n"
      "to sort them)." },
    { "job", emq_cli_job, "[QUEUE] ID",
      "Print the fields of a job's row, one 'name value' line each (bytes\n"
      "that are not printable are shown as C escapes), then what the sets\n"
      "say: its set (the state lookup; 'lane' for a job waiting in a lane),\n"
      "its lease deadline or run-at (ms and UTC), its number of log lines\n"
      "and whether it is locked; then its kept record when it completed or\n"
      "died (payload, attempts, last error, result), then its history: one\n"
      "line per transition with its time, attempt, claiming host, pid and\n"
      "worker, delay, run-at and error. Without QUEUE the job is looked up\n"
      "in every queue (its history first, then a walk of the keys).\n"
      "Exit: 0 found, 6 gone (no row and nothing kept)." },
    { "requeue", cmd_requeue,
      "QUEUE ID [--payload DATA|-]\n"
      "       | QUEUE --dead (--all [--batch N] | --count N)\n"
      "         [--older-than DUR | --minted-before INSTANT]",
      "Move a dead job back to pending (attempts kept, last_error cleared).\n"
      "With --payload, the job may also be scheduled (failed, waiting for\n"
      "its retry): its payload is replaced by DATA (stdin with '-') and it\n"
      "runs now, in one transaction.\n"
      "With --dead --all every dead job of QUEUE, N (default 100) per\n"
      "transaction; with --dead --count N the first N dead jobs (oldest\n"
      "first) in one transaction. --older-than DUR and --minted-before\n"
      "INSTANT keep only the jobs minted before that instant (a job id\n"
      "carries its mint time; the keyspace keeps no time of death).\n"
      "Prints 'requeued N skipped M' (skipped: dead ids without a row).\n"
      "Exit: 0 requeued, 6 gone (no such row), 12 EMQSTATE (not dead; with\n"
      "--payload: not dead or scheduled)." },
    { "remove", cmd_remove, "QUEUE ID [--dedup DID]",
      "Remove a job from every set with its row and logs; with --dedup,\n"
      "also release the dedup key DID when it points at this job.\n"
      "Exit: 0 removed, 6 gone, 12 EMQLOCK (the job is locked)." },
    { "drain", cmd_drain, "QUEUE [--schedule]",
      "Delete every pending job (and with --schedule every scheduled one)\n"
      "with its row and logs; prints the number removed. Active and dead\n"
      "jobs stay." },
    { "obliterate", cmd_obliterate,
      "QUEUE [--force] [--yes] [--budget N]",
      "Delete a paused queue: every job with its row, logs and lock, and\n"
      "the queue's keys (dedup keys, the flow outbox and streams stay). On\n"
      "a terminal it asks first unless --yes. It runs N (default 1000) jobs\n"
      "per transaction until the queue is gone.\n"
      "  --force   also delete active jobs (else they refuse it)\n"
      "Exit: 0 obliterated, 1 not confirmed, 12 EMQSTATE (not paused, or\n"
      "active jobs without --force)." },
    { "counts", cmd_counts, "QUEUE",
      "Print the sizes of the pending, active, scheduled and dead sets, the\n"
      "completed and failed counters, the jobs waiting in the queue's lanes\n"
      "(lane) and its flow parents awaiting their children\n"
      "(awaiting_children), one 'name value' line each." },
    { "progress", cmd_progress, "QUEUE ID [VALUE]",
      "Print a job's progress field, or set it to VALUE (which publishes a\n"
      "progress event) and print ok.\n"
      "Exit: 0 done, 6 gone (no such row; or no progress recorded)." },
    { "logs", cmd_logs, "QUEUE ID [--add LINE] [--keep N]",
      "Print a job's log lines, one per line (escaped), or append LINE,\n"
      "keeping only the last N lines when N > 0; prints the count.\n"
      "Exit: 0 done, 6 gone (no such row)." },
    { "update", cmd_update, "QUEUE ID PAYLOAD|-",
      "Replace a job's payload (PAYLOAD, or stdin for '-') in any state.\n"
      "Exit: 0 updated, 6 gone." },
    { "delay", cmd_delay, "QUEUE ID TOKEN --in DURATION | --at TIME",
      "Move a claimed job back to the schedule with its token (attempts are\n"
      "kept): DURATION from now (250ms, 5s, 10m, 2h, 1d; a bare number is\n"
      "milliseconds), or at TIME (UTC 2026-12-01T10:00:00Z, Unix ms, now+5m).\n"
      "Exit: 0 delayed, 4 EMQKIND, 5 EMQSTALE (token mismatch), 6 gone." },
    { "claim-batch", cmd_claim_batch, "QUEUE N [--lease DURATION]",
      "Claim up to N pending jobs on one lease deadline (default 30s);\n"
      "prints 'ID TOKEN PAYLOAD' per job (the payload escaped).\n"
      "Exit: 0 claimed, 2 empty (nothing pending, or the queue is paused)." },
    { "events", cmd_events,
      "[QUEUE] [--history] [--after SEQ] [--count N] [--timeout DURATION]",
      "Follow the lifecycle events of QUEUE (or of every queue) as JSON\n"
      "lines until interrupted: {\"seq\", \"at\", \"at_utc\", \"queue\",\n"
      "\"event\", \"job\", \"message\"}, message being the published bytes.\n"
      "  --history     follow the job history instead (host-side, every\n"
      "                kind: enqueued, scheduled, claimed, completed,\n"
      "                retried, dead, reaped, stalled, promoted, removed,\n"
      "                requeued, delayed, awaiting_children), one line\n"
      "                each with its details (attempts, delay_ms, run_at,\n"
      "                error, host, pid, worker); SEQ is a history seq\n"
      "  --after SEQ   start after event SEQ (0: every retained event);\n"
      "                default: events committed from now on\n"
      "  --count N     stop after N events\n"
      "  --timeout DURATION  stop after DURATION of real time (5s, 2m)\n"
      "Exit: 0 interrupted, N events printed, or the timeout passed without\n"
      "--count; 2 the timeout passed before N events." },
    { "metrics", cmd_metrics, "QUEUE",
      "Print the completed and failed counters with their data points." },
    { NULL, NULL, NULL, NULL }
};

/* ------------------------------------------------------------- helpers */

/* The wall clock in Unix ms (for "now" before the file is open). */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void emq_cli_bare_duration(emq_cli *c, const char *what, const char *s,
                           int64_t ms)
{
    size_t i;
    for (i = 0; s[i] >= '0' && s[i] <= '9'; i++)
        ;
    if (i == 0 || s[i] != '\0' || ms <= 0 || ms >= 1000) return;
    fprintf(stderr, "emqlite: %s: warning: %s %s is %lld milliseconds; "
            "write %lldms to mean that, or %llds for seconds\n",
            c->sub ? c->sub : c->cmd, what, s, (long long)ms, (long long)ms,
            (long long)ms);
}

int emq_cli_duration(emq_cli *c, const char *what, const char *s,
                     int64_t *ms)
{
    if (emq_cli_parse_duration(s, ms) == 0) {
        emq_cli_bare_duration(c, what, s, *ms);
        return 0;
    }
    return emq_cli_usage(c, "%s must be a duration (250ms, 5s, 10m, 2h, 1d, "
                         "or milliseconds), not '%s'", what, s);
}

int emq_cli_duration_pos(emq_cli *c, const char *what, const char *s,
                         int64_t *ms)
{
    if (emq_cli_parse_duration(s, ms) == 0 && *ms > 0) {
        emq_cli_bare_duration(c, what, s, *ms);
        return 0;
    }
    return emq_cli_usage(c, "%s must be a duration of more than 0 (250ms, "
                         "5s, 10m, 2h, 1d, or milliseconds), not '%s'", what,
                         s);
}

int emq_cli_time(emq_cli *c, const char *what, const char *s, int64_t *ms)
{
    /* "now" is the file's clock: $EMQLITE_NOW_MS when pinned (the file is
     * not open yet when options are parsed). */
    const char *pin = getenv("EMQLITE_NOW_MS");
    int64_t now = c->db ? emq_now(c->db) : wall_ms();
    if (!c->db && pin && pin[0]) {
        char *end;
        long long v = strtoll(pin, &end, 10);
        if (*end == '\0') now = (int64_t)v; /* else the open refuses it */
    }
    if (emq_cli_parse_instant(s, now, ms) == 0) return 0;
    return emq_cli_usage(c, "%s must be an instant (2026-12-01T10:00:00Z, "
                         "Unix ms, now or now+5m), not '%s'", what, s);
}

/* Unix ms as UTC ISO-8601 with milliseconds into buf (>= 32 bytes). */
static const char *iso(int64_t ms, char *buf, size_t n)
{
    emq_cli_format_instant(buf, n, ms);
    return buf;
}

/* {"queue": q, "id": id, then the caller's members..., closed by the
 * caller. */
static void json_head(const char *q, const char *id)
{
    fputs("{\"queue\":", stdout);
    emq_cli_json_str(stdout, q);
    if (id) {
        fputs(",\"id\":", stdout);
        emq_cli_json_str(stdout, id);
    }
}

/* The common answers of a job verb: gone, or a failure. */
static int job_failed(emq_cli *c, int rc, const char *q, const char *id)
{
    if (rc == EMQ_GONE)
        return emq_cli_verdict(c, EMQ_EXIT_GONE, "gone", q, id,
                               "no such job");
    return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
}

/* Read all of stdin (for payload '-'). */
static int read_stdin(unsigned char **out, size_t *len)
{
    size_t cap = 4096, n = 0, r;
    unsigned char *b = malloc(cap + 1), *nb;
    if (!b) return -1;
    while ((r = fread(b + n, 1, cap - n, stdin)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            if (!(nb = realloc(b, cap + 1))) {
                free(b);
                return -1;
            }
            b = nb;
        }
    }
    if (ferror(stdin)) {
        free(b);
        return -1;
    }
    b[n] = 0;
    *out = b;
    *len = n;
    return 0;
}

/* ------------------------------------------------------ requeue, remove */

/* One batch of requeue_dead_batch (age < 0) or requeue_dead_before, from
 * the cursor `after` (NULL: the start); the cursor it answers goes back
 * into `after` (freed and NULL when none). */
static int requeue_batch(emq_cli *c, const char *q, int64_t before,
                         int64_t batch, char **after, int64_t *requeued,
                         int64_t *skipped)
{
    char b[24], t[24];
    const char *av[4];
    size_t al[4];
    emq_reply r = {0};
    int rc;
    snprintf(b, sizeof b, "%lld", (long long)batch);
    snprintf(t, sizeof t, "%lld", (long long)before);
    av[0] = q;
    if (before < 0) {
        av[1] = b;
        av[2] = *after;
    } else {
        av[1] = t;
        av[2] = b;
        av[3] = *after;
    }
    for (rc = 0; rc < 4; rc++) al[rc] = av[rc] ? strlen(av[rc]) : 0;
    rc = emq_call(c->db, before < 0 ? "requeue_dead_batch"
                                    : "requeue_dead_before",
                  before < 0 ? 3 : 4, av, al, &r);
    free(*after);
    *after = NULL;
    if (rc == EMQ_OK && r.type == EMQ_REPLY_ARRAY && r.n == 3) {
        *requeued += r.elem[0].integer;
        *skipped += r.elem[1].integer;
        if (r.elem[2].type == EMQ_REPLY_BULK &&
            (*after = strndup(r.elem[2].str, r.elem[2].len)) == NULL)
            rc = EMQ_ENOMEM;
    }
    emq_reply_clear(&r);
    return rc;
}

static int cmd_requeue(emq_cli *c, int argc, char **argv)
{
    const char *dead = NULL, *all = NULL, *batch_s = NULL, *count_s = NULL,
               *older_s = NULL, *minted_s = NULL, *payload_s = NULL, *pos[2];
    emq_cli_opt opts[] = { { "--dead", 0, &dead }, { "--all", 0, &all },
                           { "--batch", 1, &batch_s },
                           { "--count", 1, &count_s },
                           { "--older-than", 1, &older_s },
                           { "--minted-before", 1, &minted_s },
                           { "--payload", 1, &payload_s },
                           { NULL, 0, NULL } };
    int64_t batch = 100, count = 0, older = 0, before = -1, requeued = 0,
            skipped = 0;
    char text[96], *after = NULL;
    int npos, rc, ex;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 2, &npos)) >= 0)
        return ex;
    if (dead && npos == 1 && !!all + !!count_s != 1)
        return emq_cli_usage(c, "--dead needs one of --all and --count N");
    if ((dead || all || count_s) && !(dead && npos == 1))
        return emq_cli_usage(c, "use either QUEUE ID or QUEUE --dead "
                             "(--all | --count N)");
    if (!dead && npos != 2)
        return emq_cli_usage(c, "missing argument");
    if (!dead && (batch_s || older_s || minted_s))
        return emq_cli_usage(c, "--batch, --older-than and --minted-before "
                             "go with --dead");
    if (dead && payload_s)
        return emq_cli_usage(c, "--payload edits one job: QUEUE ID "
                             "--payload DATA");
    if (older_s && minted_s)
        return emq_cli_usage(c, "use either --older-than or --minted-before");
    if (batch_s && emq_cli_int(c, "--batch", batch_s, &batch))
        return EMQ_EXIT_USAGE;
    if (count_s && emq_cli_int(c, "--count", count_s, &count))
        return EMQ_EXIT_USAGE;
    if (count_s && count <= 0)
        return emq_cli_usage(c, "--count must be > 0, not '%s'", count_s);
    if (older_s && emq_cli_duration(c, "--older-than", older_s, &older))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c)))
        return ex;
    if (minted_s && emq_cli_time(c, "--minted-before", minted_s, &before))
        return EMQ_EXIT_USAGE;
    if (older_s) before = emq_now(c->db) - older;
    if ((older_s || minted_s) && before < 0)
        before = 0; /* before the epoch: none qualifies */
    if (dead) {
        if (count_s) {
            rc = requeue_batch(c, pos[0], before, count, &after, &requeued,
                               &skipped);
        } else if (before < 0) {
            rc = emq_dead_requeue(c->db, pos[0], batch, &requeued, &skipped);
        } else {
            /* batch by batch, each its own transaction, by the cursor */
            do {
                rc = requeue_batch(c, pos[0], before, batch, &after,
                                   &requeued, &skipped);
            } while (rc == EMQ_OK && after != NULL);
        }
        free(after);
        if (rc < 0) return emq_cli_fail(c, rc, NULL);
        if (c->json) {
            json_head(pos[0], NULL);
            printf(",\"requeued\":%lld,\"skipped\":%lld}\n",
                   (long long)requeued, (long long)skipped);
        } else {
            printf("requeued %lld skipped %lld\n", (long long)requeued,
                   (long long)skipped);
        }
        return EMQ_EXIT_OK;
    }
    if (payload_s) {
        unsigned char *p = (unsigned char *)payload_s;
        size_t len = strlen(payload_s);
        if (strcmp(payload_s, "-") == 0 && read_stdin(&p, &len) != 0)
            return emq_cli_fail(c, EMQ_EIO, "cannot read the payload from "
                                "stdin");
        rc = emq_job_requeue_edited(c->db, pos[0], pos[1], p, len);
        if (p != (unsigned char *)payload_s) free(p);
        if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
        snprintf(text, sizeof text, "requeued %s (payload replaced)",
                 pos[1]);
        return emq_cli_ok(c, pos[0], pos[1], "ok", text);
    }
    rc = emq_job_reprocess(c->db, pos[0], pos[1]);
    if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
    snprintf(text, sizeof text, "requeued %s", pos[1]);
    return emq_cli_ok(c, pos[0], pos[1], "ok", text);
}

static int cmd_remove(emq_cli *c, int argc, char **argv)
{
    const char *did = NULL, *pos[2];
    emq_cli_opt opts[] = { { "--dedup", 1, &did }, { NULL, 0, NULL } };
    char text[96];
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 2, 2, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)))
        return ex;
    rc = emq_job_remove(c->db, pos[0], pos[1], did);
    if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
    snprintf(text, sizeof text, "removed %s", pos[1]);
    return emq_cli_ok(c, pos[0], pos[1], "ok", text);
}

/* ------------------------------------------------- drain, obliterate */

static int cmd_drain(emq_cli *c, int argc, char **argv)
{
    const char *sched = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--schedule", 0, &sched }, { NULL, 0, NULL } };
    int64_t n = 0;
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)))
        return ex;
    if ((rc = emq_drain(c->db, pos[0], sched != NULL, &n)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        json_head(pos[0], NULL);
        printf(",\"removed\":%lld}\n", (long long)n);
    } else {
        printf("%lld\n", (long long)n);
    }
    return EMQ_EXIT_OK;
}

/* Ask on the terminal; 1 when the answer is yes. */
static int confirm(const char *q)
{
    char line[32];
    fprintf(stderr, "emqlite: obliterate queue '%s' and every job in it? "
            "[y/N] ", q);
    fflush(stderr);
    if (!fgets(line, sizeof line, stdin)) return 0;
    return strcmp(line, "y\n") == 0 || strcmp(line, "yes\n") == 0 ||
           strcmp(line, "Y\n") == 0;
}

static int cmd_obliterate(emq_cli *c, int argc, char **argv)
{
    const char *force = NULL, *yes = NULL, *budget_s = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--force", 0, &force }, { "--yes", 0, &yes },
                           { "--budget", 1, &budget_s }, { NULL, 0, NULL } };
    int64_t budget = 1000, calls = 0;
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (budget_s && emq_cli_int(c, "--budget", budget_s, &budget))
        return EMQ_EXIT_USAGE;
    if (!yes && isatty(STDIN_FILENO) && !confirm(pos[0]))
        return emq_cli_usage(c, "not confirmed; nothing was deleted");
    if ((ex = emq_cli_open(c)))
        return ex;
    do {
        rc = emq_obliterate(c->db, pos[0], force != NULL, budget);
        calls++;
    } while (rc == EMQ_MORE);
    if (rc < 0) return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        json_head(pos[0], NULL);
        printf(",\"result\":\"ok\",\"calls\":%lld}\n", (long long)calls);
    } else {
        printf("obliterated %s\n", pos[0]);
    }
    return EMQ_EXIT_OK;
}

/* ----------------------------------------------------- counts, metrics */

static int cmd_counts(emq_cli *c, int argc, char **argv)
{
    static const char *const names[6] = {"pending", "active", "schedule",
                                         "dead", "completed", "failed"};
    /* The tool's word for the set is "scheduled" (stats, list --state,
     * job); "schedule" is the wire's counts name only (issue 34 item 9). */
    static const char *const shown[8] = {"pending", "active", "scheduled",
                                         "dead", "completed", "failed",
                                         "lane", "awaiting_children"};
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int64_t v[8];
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)))
        return ex;
    if ((rc = emq_counts(c->db, pos[0], 6, names, v)) < 0 ||
        (rc = emq_cli_extra_counts(c->db, pos[0], &v[6], &v[7])) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        json_head(pos[0], NULL);
        fputs(",\"counts\":{", stdout);
        for (int i = 0; i < 8; i++)
            printf("%s\"%s\":%lld", i ? "," : "", shown[i], (long long)v[i]);
        puts("}}");
    } else {
        for (int i = 0; i < 8; i++)
            printf("%-17s  %lld\n", shown[i], (long long)v[i]);
    }
    return EMQ_EXIT_OK;
}

static int cmd_metrics(emq_cli *c, int argc, char **argv)
{
    static const char *const which[2] = {"completed", "failed"};
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int64_t count[2], points[2];
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)))
        return ex;
    for (int i = 0; i < 2; i++)
        if ((rc = emq_metrics_get(c->db, pos[0], which[i], &count[i],
                                  &points[i])) < 0)
            return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        json_head(pos[0], NULL);
        for (int i = 0; i < 2; i++)
            printf(",\"%s\":{\"count\":%lld,\"data_points\":%lld}", which[i],
                   (long long)count[i], (long long)points[i]);
        puts("}");
    } else {
        for (int i = 0; i < 2; i++)
            printf("%-9s  %lld  (data points %lld)\n", which[i],
                   (long long)count[i], (long long)points[i]);
    }
    return EMQ_EXIT_OK;
}

/* ------------------------------------------------ progress, logs, update */

static int cmd_progress(emq_cli *c, int argc, char **argv)
{
    const char *pos[3];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    emq_field *f = NULL;
    size_t n = 0, i;
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 2, 3, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)))
        return ex;
    if (npos == 3) {
        rc = emq_job_update_progress(c->db, pos[0], pos[1], pos[2],
                                 strlen(pos[2]));
        if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
        return emq_cli_ok(c, pos[0], pos[1], "ok", "ok");
    }
    rc = emq_job_get(c->db, pos[0], pos[1], &f, &n);
    if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
    for (i = 0; i < n; i++)
        if (f[i].name_len == 8 && memcmp(f[i].name, "progress", 8) == 0)
            break;
    if (i == n) {
        emq_fields_free(f, n);
        return emq_cli_verdict(c, EMQ_EXIT_GONE, "absent", pos[0], pos[1],
                               "no progress recorded");
    }
    if (c->json) {
        json_head(pos[0], pos[1]);
        fputs(",\"progress\":", stdout);
        emq_cli_json_bytes(stdout, f[i].value, f[i].value_len);
        puts("}");
    } else {
        emq_cli_text_bytes(stdout, f[i].value, f[i].value_len);
        putchar('\n');
    }
    emq_fields_free(f, n);
    return EMQ_EXIT_OK;
}

static int cmd_logs(emq_cli *c, int argc, char **argv)
{
    const char *add = NULL, *keep_s = NULL, *pos[2];
    emq_cli_opt opts[] = { { "--add", 1, &add }, { "--keep", 1, &keep_s },
                           { NULL, 0, NULL } };
    int64_t keep = 0, count = 0;
    emq_line *l = NULL;
    size_t n = 0;
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 2, 2, &npos)) >= 0)
        return ex;
    if (keep_s && emq_cli_int(c, "--keep", keep_s, &keep))
        return EMQ_EXIT_USAGE;
    if (keep_s && !add)
        return emq_cli_usage(c, "--keep goes with --add");
    if ((ex = emq_cli_open(c)))
        return ex;
    if (add) {
        rc = emq_job_add_log(c->db, pos[0], pos[1], add, strlen(add), keep,
                         &count);
        if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
        if (c->json) {
            json_head(pos[0], pos[1]);
            printf(",\"count\":%lld}\n", (long long)count);
        } else {
            printf("%lld\n", (long long)count);
        }
        return EMQ_EXIT_OK;
    }
    rc = emq_job_logs(c->db, pos[0], pos[1], &l, &n);
    if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
    if (c->json) {
        json_head(pos[0], pos[1]);
        fputs(",\"lines\":[", stdout);
        for (size_t i = 0; i < n; i++) {
            if (i) fputc(',', stdout);
            emq_cli_json_bytes(stdout, l[i].p, l[i].len);
        }
        puts("]}");
    } else {
        for (size_t i = 0; i < n; i++) {
            emq_cli_text_bytes(stdout, l[i].p, l[i].len);
            putchar('\n');
        }
    }
    emq_lines_free(l, n);
    return EMQ_EXIT_OK;
}

static int cmd_update(emq_cli *c, int argc, char **argv)
{
    const char *pos[3];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    unsigned char *buf = NULL;
    const void *p = NULL;
    size_t len = 0;
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 3, 3, &npos)) >= 0)
        return ex;
    if (strcmp(pos[2], "-") == 0) {
        if (read_stdin(&buf, &len) != 0)
            return emq_cli_fail(c, EMQ_EIO, "cannot read stdin");
        p = buf;
    } else {
        p = pos[2];
        len = strlen(pos[2]);
    }
    if ((ex = emq_cli_open(c))) {
        free(buf);
        return ex;
    }
    rc = emq_job_update_data(c->db, pos[0], pos[1], p, len);
    free(buf);
    if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
    return emq_cli_ok(c, pos[0], pos[1], "ok", "updated");
}

/* ---------------------------------------------------- delay, claim-batch */

static int cmd_delay(emq_cli *c, int argc, char **argv)
{
    const char *in = NULL, *at = NULL, *pos[3];
    emq_cli_opt opts[] = { { "--in", 1, &in }, { "--at", 1, &at },
                           { NULL, 0, NULL } };
    int64_t token, ms;
    char b[48], text[96];
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 3, 3, &npos)) >= 0)
        return ex;
    if (!in == !at)
        return emq_cli_usage(c, "give exactly one of --in and --at");
    if (emq_cli_int(c, "TOKEN", pos[2], &token) ||
        (in && emq_cli_duration(c, "--in", in, &ms)) ||
        (at && emq_cli_time(c, "--at", at, &ms)))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c)))
        return ex;
    rc = emq_delay(c->db, pos[0], pos[1], token, ms,
                   at ? EMQ_DELAY_AT : EMQ_DELAY_IN);
    if (rc != EMQ_OK) return job_failed(c, rc, pos[0], pos[1]);
    if (in) { /* the run-at it wrote, for the message */
        emq_job_info ji;
        memset(&ji, 0, sizeof ji);
        if (emq_job_inspect(c->db, pos[0], pos[1], &ji) >= 0 && ji.has_run_at)
            ms = ji.run_at_ms;
        emq_job_info_clear(&ji);
    }
    snprintf(text, sizeof text, "delayed until %lld  %s", (long long)ms,
             iso(ms, b, sizeof b));
    return emq_cli_ok(c, pos[0], pos[1], "ok", text);
}

static int cmd_claim_batch(emq_cli *c, int argc, char **argv)
{
    const char *lease_s = NULL, *pos[2];
    emq_cli_opt opts[] = { { "--lease", 1, &lease_s }, { NULL, 0, NULL } };
    int64_t n, lease = 30000;
    emq_job *jobs;
    size_t got = 0;
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 2, 2, &npos)) >= 0)
        return ex;
    if (emq_cli_int(c, "N", pos[1], &n) ||
        (lease_s && emq_cli_duration_pos(c, "--lease", lease_s, &lease)))
        return EMQ_EXIT_USAGE;
    if (n <= 0 || n > 1000000)
        return emq_cli_usage(c, "N must be between 1 and 1000000");
    if ((ex = emq_cli_open(c)))
        return ex;
    if (!(jobs = calloc((size_t)n, sizeof *jobs)))
        return emq_cli_fail(c, EMQ_ENOMEM, NULL);
    rc = emq_claim_batch(c->db, pos[0], (size_t)n, lease, jobs, &got);
    if (rc == EMQ_EMPTY) {
        free(jobs);
        return emq_cli_verdict(c, EMQ_EXIT_EMPTY, "empty", pos[0], NULL,
                               "nothing to claim (no pending job, or the "
                               "queue is paused)");
    }
    if (rc != EMQ_OK) {
        free(jobs);
        return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
    }
    if (c->json) {
        json_head(pos[0], NULL);
        fputs(",\"jobs\":[", stdout);
    }
    for (size_t i = 0; i < got; i++) {
        if (c->json) {
            printf("%s{\"id\":\"%s\",\"attempts\":%lld,\"payload\":",
                   i ? "," : "", jobs[i].id, (long long)jobs[i].attempts);
            if (jobs[i].payload)
                emq_cli_json_bytes(stdout, jobs[i].payload,
                                   jobs[i].payload_len);
            else
                fputs("null", stdout);
            fputc('}', stdout);
        } else {
            printf("%s %lld ", jobs[i].id, (long long)jobs[i].attempts);
            if (jobs[i].payload)
                emq_cli_text_bytes(stdout, jobs[i].payload,
                                   jobs[i].payload_len);
            putchar('\n');
        }
        emq_job_clear(&jobs[i]);
    }
    if (c->json) puts("]}");
    free(jobs);
    return EMQ_EXIT_OK;
}

/* --------------------------------------------------------------- events */

static volatile sig_atomic_t stop_events;

static void on_signal(int sig)
{
    (void)sig;
    stop_events = 1;
}

typedef struct follow {
    int64_t seen, want;
} follow;

static void print_event(void *ctx, const emq_event *e)
{
    follow *f = ctx;
    char b[48];
    if (f->want > 0 && f->seen >= f->want) return; /* the rest: not asked */
    printf("{\"seq\":%lld,\"at\":%lld,\"at_utc\":\"%s\",\"queue\":",
           (long long)e->seq, (long long)e->at_ms, iso(e->at_ms, b, sizeof b));
    emq_cli_json_bytes(stdout, e->queue, e->queue_len);
    fputs(",\"event\":", stdout);
    emq_cli_json_bytes(stdout, e->name, e->name_len);
    fputs(",\"job\":", stdout);
    emq_cli_json_bytes(stdout, e->job, e->job_len);
    fputs(",\"message\":", stdout);
    emq_cli_json_bytes(stdout, e->message, e->message_len);
    puts("}");
    fflush(stdout);
    f->seen++;
}

/* One job history entry as an event line (events --history). */
static int print_hist(void *ctx, const emq_history_entry *e)
{
    follow *f = ctx;
    char b[48];
    if (f->want > 0 && f->seen >= f->want) return 1;
    printf("{\"seq\":%lld,\"at\":%lld,\"at_utc\":\"%s\",\"queue\":",
           (long long)e->seq, (long long)e->at_ms, iso(e->at_ms, b, sizeof b));
    emq_cli_json_str(stdout, e->queue);
    printf(",\"event\":\"%s\",\"job\":\"%s\"",
           emq_history_kind_name(e->kind), e->id);
    emq_cli_json_hist_details(stdout, e, 0);
    puts("}");
    fflush(stdout);
    f->seen++;
    return 0;
}

/* events --history: follow the job history (host-side) by polling. */
static int follow_history(emq_cli *c, const char *q, int64_t after,
                          int64_t timeout, follow *f)
{
    struct timespec t0, t1, nap = {0, 50 * 1000000L};
    int64_t cur = after;
    int rc;
    if (after == EMQ_SUB_NOW && (rc = emq_history_last(c->db, &cur)) < 0)
        return emq_cli_fail(c, rc, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        rc = emq_history_read(c->db, q, cur, 256, print_hist, f, &cur);
        if (rc < 0 && rc != EMQ_EBUSY && rc != 1)
            return emq_cli_fail(c, rc, NULL);
        if (stop_events || (f->want > 0 && f->seen >= f->want)) break;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (timeout >= 0 && (int64_t)(t1.tv_sec - t0.tv_sec) * 1000 +
                                    (t1.tv_nsec - t0.tv_nsec) / 1000000 >=
                                timeout)
            break;
        nanosleep(&nap, NULL);
    }
    if (!stop_events && timeout >= 0 && (f->want == 0 || f->seen < f->want))
        return f->want > 0 ? EMQ_EXIT_EMPTY : EMQ_EXIT_OK;
    return EMQ_EXIT_OK;
}

static int cmd_events(emq_cli *c, int argc, char **argv)
{
    const char *after_s = NULL, *count_s = NULL, *timeout_s = NULL, *pos[1];
    const char *hist = NULL;
    emq_cli_opt opts[] = { { "--after", 1, &after_s },
                           { "--count", 1, &count_s },
                           { "--timeout", 1, &timeout_s },
                           { "--history", 0, &hist },
                           { NULL, 0, NULL } };
    int64_t after = EMQ_SUB_NOW, timeout = -1;
    follow f = {0, 0};
    struct sigaction sa;
    struct timespec t0, t1;
    emq_sub *s;
    size_t n;
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 1, &npos)) >= 0)
        return ex;
    if ((after_s && emq_cli_int(c, "--after", after_s, &after)) ||
        (count_s && emq_cli_int(c, "--count", count_s, &f.want)) ||
        (timeout_s && emq_cli_duration(c, "--timeout", timeout_s, &timeout)))
        return EMQ_EXIT_USAGE;
    if ((after_s && after < 0) || (count_s && f.want <= 0) ||
        (timeout_s && timeout < 0))
        return emq_cli_usage(c, "--after must be >= 0, --count > 0 and "
                             "--timeout >= 0");
    if ((ex = emq_cli_open(c)))
        return ex;
    if (hist) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        return follow_history(c, npos ? pos[0] : NULL, after, timeout, &f);
    }
    rc = emq_subscribe(c->db, npos ? pos[0] : NULL, after, print_event, &f,
                       &s);
    if (rc < 0) return emq_cli_fail(c, rc, NULL);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int64_t left = 200, spent;
        if (stop_events || (f.want > 0 && f.seen >= f.want)) break;
        if (timeout >= 0) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            spent = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000 +
                    (t1.tv_nsec - t0.tv_nsec) / 1000000;
            if (spent >= timeout) break;
            if (timeout - spent < left) left = timeout - spent;
        }
        rc = emq_sub_wait(s, left, &n);
        if (rc < 0 && rc != EMQ_EBUSY) {
            emq_unsubscribe(s);
            return emq_cli_fail(c, rc, NULL);
        }
    }
    emq_unsubscribe(s);
    if (!stop_events && timeout >= 0 && (f.want == 0 || f.seen < f.want))
        return f.want > 0 ? EMQ_EXIT_EMPTY : EMQ_EXIT_OK;
    return EMQ_EXIT_OK;
}
