/*
 * cli_hist.c — what happened to a job, and what a queue holds (issue 34
 * items 1, 2 and 4): `list` (every state, with attempts, times, the last
 * error and a payload preview, sorted by the time of the last transition,
 * paged), `job` (found without its queue, with its kept record and its
 * history), and the settings commands `history` and `retention`.
 *
 * Rules: only api/emqlite.h is used; every command has --help and --json;
 * times are printed as Unix ms and UTC ISO-8601 (emq_cli_format_instant).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_time.h"

static int cmd_history(emq_cli *c, int argc, char **argv);
static int cmd_retention(emq_cli *c, int argc, char **argv);

const emq_cli_command emq_cli_hist_commands[] = {
    { "history", cmd_history,
      "[--on | --failures | --off] [--per-job N] [--per-queue N] "
      "[--max-age DURATION]",
      "Show the file's job history settings, or change them: --on records\n"
      "every transition of every job (host-side, never exported; the\n"
      "default), --failures only what went wrong (retried, dead, reaped,\n"
      "stalled, removed, requeued; dead jobs kept, completed ones not: a\n"
      "fraction of the cost), --off nothing;\n"
      "--per-job N entries kept per job (default 64);\n"
      "--per-queue N per queue (100000); --max-age DURATION none older\n"
      "(7d). See 'emqlite job ID' for a job's history and 'emqlite events\n"
      "--history' to follow it." },
    { "retention", cmd_retention,
      "[QUEUE] [--completed N] [--completed-age DURATION] [--dead N] "
      "[--dead-age DURATION] [--reset] [--prune]",
      "Show how many completed and dead jobs QUEUE keeps host-side, and for\n"
      "how long (without QUEUE: the file's default for every queue), or set\n"
      "it. Defaults: 1000 completed for 1d, 10000 dead for 30d. --reset\n"
      "removes the queue's own setting; --prune applies the windows now\n"
      "(transitions prune a little as they go) and prints the rows removed.\n"
      "Jobs are kept while the history is on; at its failures level only\n"
      "dead ones, and with it off none (see 'emqlite history')." },
    { NULL, NULL, NULL, NULL }
};

/* ------------------------------------------------------------- helpers */

static void json_time(int64_t ms)
{
    char b[48];
    emq_cli_format_instant(b, sizeof b, ms);
    printf("{\"ms\":%lld,\"utc\":\"%s\"}", (long long)ms, b);
}

static const char *iso(int64_t ms, char *b, size_t n)
{
    emq_cli_format_instant(b, n, ms);
    return b;
}

/* The mint time of a branded id, or -1. */
static int64_t mint_ms(const char *id)
{
    uint64_t snow;
    if (emq_id_parse(id, strlen(id), NULL, &snow) != EMQ_OK) return -1;
    return (int64_t)(snow >> 22) + EMQ_EPOCH_MS;
}

#define PREVIEW 40
#define ERR_PREVIEW 60

/* Bytes as a short escaped preview: at most `max` bytes, "..." after. */
static void text_preview(const void *p, size_t n, size_t max)
{
    if (p == NULL) {
        fputs("-", stdout);
        return;
    }
    putchar('"');
    emq_cli_text_bytes(stdout, p, n < max ? n : max);
    putchar('"');
    if (n > max) fputs("...", stdout);
}

/* ----------------------------------------------------------------- rows */

typedef struct lrow {
    char id[EMQ_ID_SIZE];
    char queue[129];
    int64_t last_ms;          /* the time of the last transition          */
    char last_kind[24];       /* its kind, or "" when unknown             */
    int64_t at_ms;            /* deadline (active) / run-at (scheduled)   */
    int has_at;
    int64_t attempts;         /* -1: none                                 */
    unsigned char *error, *payload, *result;
    size_t error_len, payload_len, result_len;
    int has_result;
    char group[EMQ_ID_SIZE];
} lrow;

typedef struct rows {
    lrow *v;
    size_t n, cap;
} rows;

static lrow *row_add(rows *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        lrow *v = realloc(r->v, cap * sizeof *v);
        if (v == NULL) return NULL;
        r->v = v;
        r->cap = cap;
    }
    memset(&r->v[r->n], 0, sizeof r->v[0]);
    r->v[r->n].attempts = -1;
    r->v[r->n].last_ms = -1;
    return &r->v[r->n++];
}

static void rows_free(rows *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].error);
        free(r->v[i].payload);
        free(r->v[i].result);
    }
    free(r->v);
}

static unsigned char *dup(const void *p, size_t n)
{
    unsigned char *d = malloc(n + 1);
    if (d) {
        if (n) memcpy(d, p, n);
        d[n] = 0;
    }
    return d;
}

static int last_cb(void *ctx, const emq_history_entry *e)
{
    lrow *r = ctx;
    r->last_ms = e->at_ms;
    snprintf(r->last_kind, sizeof r->last_kind, "%s",
             emq_history_kind_name(e->kind));
    return 0;
}

/* Fill a keyspace job's row: its fields and its last transition. */
static int decorate(emq_cli *c, const char *q, lrow *r)
{
    emq_job_info ji;
    int rc = emq_job_inspect(c->db, q, r->id, &ji);
    if (rc == EMQ_GONE) {
        emq_job_info_clear(&ji);
        rc = EMQ_OK;
    } else if (rc == EMQ_OK) {
        for (size_t i = 0; i < ji.nfields; i++) {
            const emq_field *f = &ji.fields[i];
            if (strcmp(f->name, "attempts") == 0) {
                char b[32];
                size_t k = f->value_len < 31 ? f->value_len : 31;
                memcpy(b, f->value, k);
                b[k] = 0;
                r->attempts = strtoll(b, NULL, 10);
            } else if (strcmp(f->name, "last_error") == 0) {
                r->error = dup(f->value, f->value_len);
                r->error_len = f->value_len;
            } else if (strcmp(f->name, "payload") == 0) {
                r->payload = dup(f->value, f->value_len);
                r->payload_len = f->value_len;
            } else if (strcmp(f->name, "group") == 0 &&
                       f->value_len == EMQ_ID_LEN) {
                memcpy(r->group, f->value, EMQ_ID_LEN);
            }
        }
        if (ji.has_deadline) {
            r->has_at = 1;
            r->at_ms = ji.deadline_ms;
        } else if (ji.has_run_at) {
            r->has_at = 1;
            r->at_ms = ji.run_at_ms;
        }
        emq_job_info_clear(&ji);
    }
    if (rc < 0) return rc;
    rc = emq_job_history(c->db, q, r->id, last_cb, r);
    if (rc < 0) return rc;
    if (r->last_ms < 0) r->last_ms = mint_ms(r->id); /* no history */
    return EMQ_OK;
}

static int kept_cb(void *ctx, const emq_kept_job *j)
{
    rows *r = ctx;
    lrow *w = row_add(r);
    if (w == NULL) return EMQ_ENOMEM;
    memcpy(w->id, j->id, EMQ_ID_SIZE);
    snprintf(w->queue, sizeof w->queue, "%s", j->queue);
    w->last_ms = j->at_ms;
    snprintf(w->last_kind, sizeof w->last_kind, "%s",
             j->state == EMQ_KEPT_COMPLETED ? "completed" : "dead");
    w->attempts = j->attempts;
    if (j->payload) {
        w->payload = dup(j->payload, j->payload_len);
        w->payload_len = j->payload_len;
    }
    if (j->error) {
        w->error = dup(j->error, j->error_len);
        w->error_len = j->error_len;
    }
    if (j->result) {
        w->result = dup(j->result, j->result_len);
        w->result_len = j->result_len;
        w->has_result = 1;
    }
    return 0;
}

/* Newest transition first; ties by id, newest first. */
static int by_last_desc(const void *a, const void *b)
{
    const lrow *x = a, *y = b;
    if (x->last_ms != y->last_ms) return x->last_ms < y->last_ms ? 1 : -1;
    return -strcmp(x->id, y->id);
}

static const char *set_of(const char *s)
{
    if (strcmp(s, "pending") == 0) return "pending";
    if (strcmp(s, "active") == 0) return "active";
    if (strcmp(s, "scheduled") == 0 || strcmp(s, "schedule") == 0)
        return "schedule";
    if (strcmp(s, "dead") == 0) return "dead";
    return NULL;
}

/* Every member of a set (or lane), in pages. */
static int collect_set(emq_cli *c, const char *q, const char *set,
                       const char *lane, rows *r)
{
    const int64_t page = 1000;
    for (int64_t off = 0;; off += page) {
        emq_member *m = NULL;
        size_t n = 0;
        int rc = emq_list(c->db, q, set, lane, off, page, 0, &m, &n);
        if (rc < 0) return rc;
        for (size_t i = 0; i < n; i++) {
            lrow *w;
            if (m[i].len != EMQ_ID_LEN) continue;
            if ((w = row_add(r)) == NULL) {
                emq_members_free(m, n);
                return EMQ_ENOMEM;
            }
            memcpy(w->id, m[i].member, EMQ_ID_LEN);
        }
        emq_members_free(m, n);
        if ((int64_t)n < page) return EMQ_OK;
    }
}

/* ---------------------------------------------------------------- list */

int emq_cli_list(emq_cli *c, int argc, char **argv)
{
    const char *state = NULL, *lim_s = NULL, *off_s = NULL, *tail = NULL;
    const char *lane = NULL, *after = NULL, *pos[1], *set = NULL;
    emq_cli_opt opts[] = { { "--state", 1, &state }, { "--limit", 1, &lim_s },
                           { "--offset", 1, &off_s }, { "--tail", 0, &tail },
                           { "--lane", 1, &lane }, { "--after", 1, &after },
                           { NULL, 0, NULL } };
    int64_t limit = 100, offset = 0;
    rows r = {NULL, 0, 0};
    size_t from = 0, shown = 0;
    int npos, rc = EMQ_OK, ex, kept = 0, awaiting = 0;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (!lane && !state)
        return emq_cli_usage(c, "--state (or --lane) is required");
    if (lane && state)
        return emq_cli_usage(c, "use either --state or --lane");
    if (state) {
        kept = strcmp(state, "completed") == 0;
        awaiting = strcmp(state, "awaiting_children") == 0;
        if (!kept && !awaiting && !(set = set_of(state)))
            return emq_cli_usage(c, "--state must be pending, active, "
                                 "scheduled, dead, completed or "
                                 "awaiting_children, not '%s'", state);
    }
    if ((lim_s && emq_cli_int(c, "--limit", lim_s, &limit)) ||
        (off_s && emq_cli_int(c, "--offset", off_s, &offset)))
        return EMQ_EXIT_USAGE;
    if (limit <= 0 || offset < 0)
        return emq_cli_usage(c, "--limit must be > 0 and --offset >= 0");
    if (after && !emq_id_valid(after))
        return emq_cli_usage(c, "--after '%s' is not a branded id: the id "
                             "of the last job of the previous page", after);
    if ((ex = emq_cli_open(c)))
        return ex;
    if (kept) {
        rc = emq_kept_list(c->db, pos[0], EMQ_KEPT_COMPLETED, NULL, 0,
                           kept_cb, &r);
    } else if (awaiting) {
        char (*ids)[EMQ_ID_SIZE] = NULL;
        size_t n = 0;
        rc = emq_list_awaiting(c->db, pos[0], &ids, &n);
        for (size_t i = 0; i < n && rc >= 0; i++) {
            lrow *w = row_add(&r);
            if (w == NULL) rc = EMQ_ENOMEM;
            else memcpy(w->id, ids[i], EMQ_ID_SIZE);
        }
        emq_free(ids);
    } else {
        rc = collect_set(c, pos[0], set ? set : "pending", lane, &r);
    }
    for (size_t i = 0; i < r.n && rc >= 0 && !kept; i++)
        rc = decorate(c, pos[0], &r.v[i]);
    if (rc < 0) {
        rows_free(&r);
        return emq_cli_fail(c, rc, NULL);
    }
    if (r.n > 1) /* qsort of no rows: a NULL base, undefined */
        qsort(r.v, r.n, sizeof *r.v, by_last_desc);
    if (tail) {
        for (size_t i = 0; i < r.n / 2; i++) {
            lrow t = r.v[i];
            r.v[i] = r.v[r.n - 1 - i];
            r.v[r.n - 1 - i] = t;
        }
    }
    if (after) {
        for (from = 0; from < r.n && strcmp(r.v[from].id, after) != 0; from++)
            ;
        from = from < r.n ? from + 1 : r.n; /* an id not listed: nothing */
    }
    from += (size_t)offset;
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        if (lane) {
            fputs(",\"lane\":", stdout);
            emq_cli_json_str(stdout, lane);
        } else {
            printf(",\"state\":\"%s\"", state);
        }
        printf(",\"total\":%zu,\"jobs\":[", r.n);
    }
    for (size_t i = from; i < r.n && shown < (size_t)limit; i++, shown++) {
        const lrow *w = &r.v[i];
        char b[48];
        const char *atname = set && strcmp(set, "active") == 0 ? "deadline"
                                                               : "run_at";
        if (c->json) {
            printf("%s{\"id\":\"%s\",\"last\":", shown ? "," : "", w->id);
            if (w->last_ms >= 0) json_time(w->last_ms);
            else fputs("null", stdout);
            fputs(",\"last_event\":", stdout);
            if (w->last_kind[0]) emq_cli_json_str(stdout, w->last_kind);
            else fputs("null", stdout);
            if (w->attempts >= 0)
                printf(",\"attempts\":%lld", (long long)w->attempts);
            else
                fputs(",\"attempts\":null", stdout);
            if (w->has_at) {
                printf(",\"%s\":", atname);
                json_time(w->at_ms);
            }
            if (w->group[0]) printf(",\"group\":\"%s\"", w->group);
            fputs(",\"last_error\":", stdout);
            if (w->error) emq_cli_json_bytes(stdout, w->error, w->error_len);
            else fputs("null", stdout);
            printf(",\"payload_len\":%zu,\"payload_preview\":",
                   w->payload_len);
            if (w->payload)
                emq_cli_json_bytes(stdout, w->payload,
                                   w->payload_len < PREVIEW ? w->payload_len
                                                            : PREVIEW);
            else
                fputs("null", stdout);
            if (kept) {
                fputs(",\"result\":", stdout);
                if (w->has_result)
                    emq_cli_json_bytes(stdout, w->result, w->result_len);
                else
                    fputs("null", stdout);
            }
            fputc('}', stdout);
        } else {
            printf("%s  ", w->id);
            if (w->last_ms >= 0)
                printf("%lld  %s", (long long)w->last_ms,
                       iso(w->last_ms, b, sizeof b));
            else
                fputs("-  -", stdout);
            printf("  %s", w->last_kind[0] ? w->last_kind : "-");
            if (w->attempts >= 0)
                printf("  attempts %lld", (long long)w->attempts);
            else
                fputs("  attempts -", stdout);
            if (w->has_at)
                printf("  %s %s", atname, iso(w->at_ms, b, sizeof b));
            if (w->group[0]) printf("  group %s", w->group);
            fputs("  error ", stdout);
            text_preview(w->error, w->error_len, ERR_PREVIEW);
            fputs("  payload ", stdout);
            text_preview(w->payload, w->payload_len, PREVIEW);
            if (w->has_result) {
                fputs("  result ", stdout);
                text_preview(w->result, w->result_len, PREVIEW);
            }
            putchar('\n');
        }
    }
    if (c->json) {
        fputs("],\"next\":", stdout);
        if (from + shown < r.n && shown > 0)
            printf("\"%s\"", r.v[from + shown - 1].id);
        else
            fputs("null", stdout);
        puts("}");
    }
    rows_free(&r);
    return EMQ_EXIT_OK;
}

/* ----------------------------------------------------------------- job */

/* A JSON object key: bytes that are not valid UTF-8 escaped one by one as
 * \u00xx (field names are ASCII in practice). */
static void json_key(const char *p, size_t len)
{
    if (emq_cli_utf8_valid((const unsigned char *)p, len)) {
        emq_cli_json_bytes(stdout, p, len);
        return;
    }
    fputc('"', stdout);
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)p[i];
        if (b < 0x20 || b >= 0x7F || b == '"' || b == '\\')
            printf("\\u%04x", b);
        else
            fputc(b, stdout);
    }
    fputc('"', stdout);
}

typedef struct hprint {
    emq_cli *c;
    int n;
} hprint;

static int hist_print(void *ctx, const emq_history_entry *e)
{
    hprint *h = ctx;
    char b[48];
    if (h->c->json) {
        printf("%s{\"seq\":%lld,\"at\":", h->n ? "," : "", (long long)e->seq);
        json_time(e->at_ms);
        printf(",\"event\":\"%s\"", emq_history_kind_name(e->kind));
        emq_cli_json_hist_details(stdout, e, 1);
        fputc('}', stdout);
    } else {
        printf("%s  %s", iso(e->at_ms, b, sizeof b),
               emq_history_kind_name(e->kind));
        if (e->attempts >= 0) printf("  attempt %lld", (long long)e->attempts);
        if (e->host) printf("  by %s pid %lld", e->host, (long long)e->pid);
        if (e->worker) printf(" worker %s", e->worker);
        if (e->delay_ms >= 0) printf("  delay %lldms", (long long)e->delay_ms);
        if (e->run_at_ms >= 0)
            printf("  run_at %s", iso(e->run_at_ms, b, sizeof b));
        if (e->error) {
            fputs("  error ", stdout);
            text_preview(e->error, e->error_len, 4096);
        }
        putchar('\n');
    }
    h->n++;
    return 0;
}

int emq_cli_job(emq_cli *c, int argc, char **argv)
{
    const char *pos[2], *q, *id;
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    emq_job_info ji;
    emq_kept_job k;
    char qbuf[129], b[48];
    int npos, rc, ex, w = 0, live, has_kept;
    hprint hp;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 2, &npos)) >= 0)
        return ex;
    id = npos == 2 ? pos[1] : pos[0];
    if (npos == 1 && !emq_id_valid(id))
        return emq_cli_usage(c, "missing ID");
    if (!emq_id_valid(id))
        return emq_cli_usage(c, "ID '%s' is not a branded id: "
                             EMQ_CLI_ID_RULE, id);
    if ((ex = emq_cli_open(c)))
        return ex;
    if (npos == 2) {
        q = pos[0];
    } else {
        rc = emq_job_locate(c->db, id, qbuf);
        if (rc == EMQ_ABSENT)
            return emq_cli_verdict(c, EMQ_EXIT_GONE, "gone", NULL, id,
                                   "no such job in any queue");
        if (rc < 0) return emq_cli_fail(c, rc, NULL);
        q = qbuf;
    }
    rc = emq_job_inspect(c->db, q, id, &ji);
    if (rc != EMQ_OK && rc != EMQ_GONE) return emq_cli_fail(c, rc, NULL);
    live = rc == EMQ_OK;
    if (!live) emq_job_info_clear(&ji);
    rc = emq_kept_get(c->db, q, id, &k);
    if (rc < 0) {
        if (live) emq_job_info_clear(&ji);
        return emq_cli_fail(c, rc, NULL);
    }
    has_kept = rc == EMQ_OK;
    if (!live && !has_kept)
        return emq_cli_verdict(c, EMQ_EXIT_GONE, "gone", q, id,
                               "no such job");
    const char *set = !live ? (k.state == EMQ_KEPT_COMPLETED ? "completed"
                                                             : "gone")
                            : emq_state_name(ji.state);
    const char *group = NULL;
    for (size_t i = 0; live && i < ji.nfields; i++)
        if (strcmp(ji.fields[i].name, "group") == 0) group = ji.fields[i].value;
    if (live && ji.state == EMQ_STATE_UNKNOWN && group) set = "lane";
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, q);
        printf(",\"id\":\"%s\",\"fields\":", id);
        if (live) {
            fputc('{', stdout);
            for (size_t i = 0; i < ji.nfields; i++) {
                if (i) fputc(',', stdout);
                json_key(ji.fields[i].name, ji.fields[i].name_len);
                fputc(':', stdout);
                emq_cli_json_bytes(stdout, ji.fields[i].value,
                                   ji.fields[i].value_len);
            }
            printf("},\"info\":{\"set\":\"%s\",\"deadline\":", set);
            if (ji.has_deadline) json_time(ji.deadline_ms);
            else fputs("null", stdout);
            fputs(",\"run_at\":", stdout);
            if (ji.has_run_at) json_time(ji.run_at_ms);
            else fputs("null", stdout);
            printf(",\"logs\":%lld,\"locked\":%s}", (long long)ji.logs,
                   ji.locked ? "true" : "false");
        } else {
            printf("null,\"info\":{\"set\":\"%s\"}", set);
        }
        fputs(",\"kept\":", stdout);
        if (has_kept) {
            printf("{\"state\":\"%s\",\"at\":",
                   k.state == EMQ_KEPT_COMPLETED ? "completed" : "dead");
            json_time(k.at_ms);
            printf(",\"attempts\":%lld,\"payload\":", (long long)k.attempts);
            if (k.payload) emq_cli_json_bytes(stdout, k.payload, k.payload_len);
            else fputs("null", stdout);
            fputs(",\"last_error\":", stdout);
            if (k.error) emq_cli_json_bytes(stdout, k.error, k.error_len);
            else fputs("null", stdout);
            fputs(",\"result\":", stdout);
            if (k.result) emq_cli_json_bytes(stdout, k.result, k.result_len);
            else fputs("null", stdout);
            fputc('}', stdout);
        } else {
            fputs("null", stdout);
        }
        fputs(",\"history\":[", stdout);
    } else {
        for (size_t i = 0; live && i < ji.nfields; i++)
            if ((int)ji.fields[i].name_len > w) w = (int)ji.fields[i].name_len;
        if (w < 8) w = 8;
        if (has_kept && w < 10) w = 10;     /* "last_error" */
        if (npos == 1) printf("%-*s  %s\n", w, "queue", q);
        for (size_t i = 0; live && i < ji.nfields; i++) {
            emq_cli_text_bytes(stdout, ji.fields[i].name,
                               ji.fields[i].name_len);
            printf("%*s  ", w - (int)ji.fields[i].name_len, "");
            emq_cli_text_bytes(stdout, ji.fields[i].value,
                               ji.fields[i].value_len);
            putchar('\n');
        }
        printf("--\n%-*s  %s\n", w, "set", set);
        if (live) {
            if (ji.has_deadline)
                printf("%-*s  %lld  %s\n", w, "deadline",
                       (long long)ji.deadline_ms,
                       iso(ji.deadline_ms, b, sizeof b));
            if (ji.has_run_at)
                printf("%-*s  %lld  %s\n", w, "run_at",
                       (long long)ji.run_at_ms, iso(ji.run_at_ms, b, sizeof b));
            printf("%-*s  %lld\n%-*s  %s\n", w, "logs", (long long)ji.logs, w,
                   "locked", ji.locked ? "yes" : "no");
        }
        if (has_kept) {
            printf("-- kept (%s)\n", k.state == EMQ_KEPT_COMPLETED
                                         ? "completed" : "dead");
            printf("%-*s  %lld  %s\n", w, "at", (long long)k.at_ms,
                   iso(k.at_ms, b, sizeof b));
            printf("%-*s  %lld\n", w, "attempts", (long long)k.attempts);
            if (k.payload) {
                printf("%-*s  ", w, "payload");
                emq_cli_text_bytes(stdout, k.payload, k.payload_len);
                putchar('\n');
            }
            if (k.error) {
                printf("%-*s  ", w, "last_error");
                emq_cli_text_bytes(stdout, k.error, k.error_len);
                putchar('\n');
            }
            if (k.result) {
                printf("%-*s  ", w, "result");
                emq_cli_text_bytes(stdout, k.result, k.result_len);
                putchar('\n');
            }
        }
        puts("-- history");
    }
    hp.c = c;
    hp.n = 0;
    rc = emq_job_history(c->db, q, id, hist_print, &hp);
    if (rc >= 0 && !c->json && hp.n == 0) {
        /* say why it is empty when the file records less than all */
        emq_history_config h;
        if (emq_history_config_get(c->db, &h) == EMQ_OK &&
            h.enabled != EMQ_HISTORY_ALL)
            puts(h.enabled == EMQ_HISTORY_OFF
                     ? "(none: the history is off, see 'emqlite history')"
                     : "(none: the history records failures only, see "
                       "'emqlite history')");
    }
    if (c->json) puts("]}");
    if (live) emq_job_info_clear(&ji);
    emq_kept_clear(&k);
    if (rc < 0) return emq_cli_fail(c, rc, NULL);
    return EMQ_EXIT_OK;
}

/* -------------------------------------------------------- the settings */

static int cmd_history(emq_cli *c, int argc, char **argv)
{
    const char *on = NULL, *off = NULL, *pj = NULL, *pq = NULL, *age = NULL;
    const char *fail = NULL, *pos[1], *level;
    emq_cli_opt opts[] = { { "--on", 0, &on }, { "--off", 0, &off },
                           { "--failures", 0, &fail },
                           { "--per-job", 1, &pj }, { "--per-queue", 1, &pq },
                           { "--max-age", 1, &age }, { NULL, 0, NULL } };
    emq_history_config h;
    int64_t v;
    int npos, rc, ex, change;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 0, &npos)) >= 0)
        return ex;
    if (!!on + !!off + !!fail > 1)
        return emq_cli_usage(c, "use one of --on, --failures or --off");
    if ((ex = emq_cli_open(c))) return ex;
    if ((rc = emq_history_config_get(c->db, &h)) < 0)
        return emq_cli_fail(c, rc, NULL);
    change = on || off || fail || pj || pq || age;
    if (on) h.enabled = EMQ_HISTORY_ALL;
    if (fail) h.enabled = EMQ_HISTORY_FAILURES;
    if (off) h.enabled = EMQ_HISTORY_OFF;
    if (pj) {
        if (emq_cli_int(c, "--per-job", pj, &v)) return EMQ_EXIT_USAGE;
        h.per_job = v;
    }
    if (pq) {
        if (emq_cli_int(c, "--per-queue", pq, &v)) return EMQ_EXIT_USAGE;
        h.per_queue = v;
    }
    if (age) {
        if (emq_cli_duration_pos(c, "--max-age", age, &v))
            return EMQ_EXIT_USAGE;
        h.max_age_ms = v;
    }
    if (change && (rc = emq_history_config_set(c->db, &h)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if ((level = emq_history_level_name(h.enabled)) == NULL) level = "on";
    if (c->json)
        printf("{\"enabled\":%s,\"level\":\"%s\",\"per_job\":%lld,"
               "\"per_queue\":%lld,\"max_age_ms\":%lld}\n",
               h.enabled ? "true" : "false", level, (long long)h.per_job,
               (long long)h.per_queue, (long long)h.max_age_ms);
    else
        printf("history    %s\nper_job    %lld\nper_queue  %lld\n"
               "max_age    %lldms\n", level,
               (long long)h.per_job, (long long)h.per_queue,
               (long long)h.max_age_ms);
    return EMQ_EXIT_OK;
}

static int cmd_retention(emq_cli *c, int argc, char **argv)
{
    const char *cn = NULL, *ca = NULL, *dn = NULL, *da = NULL, *reset = NULL;
    const char *prune = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--completed", 1, &cn },
                           { "--completed-age", 1, &ca },
                           { "--dead", 1, &dn }, { "--dead-age", 1, &da },
                           { "--reset", 0, &reset }, { "--prune", 0, &prune },
                           { NULL, 0, NULL } };
    emq_retention r;
    int64_t v, dropped = -1;
    int npos, rc, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 1, &npos)) >= 0)
        return ex;
    const char *q = npos ? pos[0] : NULL;
    if (reset && (cn || ca || dn || da))
        return emq_cli_usage(c, "--reset takes no other setting");
    if ((ex = emq_cli_open(c))) return ex;
    if ((rc = emq_retention_get(c->db, q, &r)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (cn) {
        if (emq_cli_int(c, "--completed", cn, &v)) return EMQ_EXIT_USAGE;
        r.completed_keep = v;
    }
    if (dn) {
        if (emq_cli_int(c, "--dead", dn, &v)) return EMQ_EXIT_USAGE;
        r.dead_keep = v;
    }
    if (ca) {
        if (emq_cli_duration(c, "--completed-age", ca, &v))
            return EMQ_EXIT_USAGE;
        r.completed_age_ms = v;
    }
    if (da) {
        if (emq_cli_duration(c, "--dead-age", da, &v)) return EMQ_EXIT_USAGE;
        r.dead_age_ms = v;
    }
    if ((cn || ca || dn || da) && (rc = emq_retention_set(c->db, q, &r)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (reset) {
        if ((rc = emq_retention_set(c->db, q, NULL)) < 0 ||
            (rc = emq_retention_get(c->db, q, &r)) < 0)
            return emq_cli_fail(c, rc, NULL);
    }
    if (prune && (rc = emq_history_prune(c->db, q, &dropped)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        fputs("{\"queue\":", stdout);
        if (q) emq_cli_json_str(stdout, q);
        else fputs("null", stdout);
        printf(",\"completed\":%lld,\"completed_age_ms\":%lld,\"dead\":%lld,"
               "\"dead_age_ms\":%lld", (long long)r.completed_keep,
               (long long)r.completed_age_ms, (long long)r.dead_keep,
               (long long)r.dead_age_ms);
        if (prune) printf(",\"pruned\":%lld", (long long)dropped);
        puts("}");
    } else {
        printf("completed      %lld\ncompleted_age  %lldms\ndead           "
               "%lld\ndead_age       %lldms\n", (long long)r.completed_keep,
               (long long)r.completed_age_ms, (long long)r.dead_keep,
               (long long)r.dead_age_ms);
        if (prune) printf("pruned         %lld\n", (long long)dropped);
    }
    return EMQ_EXIT_OK;
}
