/*
 * cli_lane.c — the fair-lane commands of the emqlite tool: `lane SUB ...`
 * with one subcommand per operation of PROTOCOL.md §6.3 (enqueue, claim,
 * pause, resume, limit, weight, reassign, drain, depth, reap), each mapping
 * onto one typed call of emqlite.h's "fair lanes" section.
 *
 * Rules: as every command of the tool — one transition per invocation, one
 * JSON document under --json, failures through emq_cli_fail with the
 * documented exit status. `lane SUB --help` prints that subcommand's help;
 * `lane --help` all of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

typedef int (*sub_fn)(emq_cli *c, int argc, char **argv);

/* One subcommand: its name, function, synopsis and help. */
typedef struct sub {
    const char *name;
    sub_fn fn;
    const char *synopsis;
    const char *help;
} sub;

/* {"queue": Q, "group": G, ...: the start of a lane document. */
static void json_head(const char *q, const char *g)
{
    fputs("{\"queue\":", stdout);
    emq_cli_json_str(stdout, q);
    if (g) {
        fputs(",\"group\":", stdout);
        emq_cli_json_str(stdout, g);
    }
}

/* A verdict with its own line and exit status: `result` printed (text) or
 * {"queue","group"[,"id"],"result"} (JSON). */
static int result(emq_cli *c, int ex, const char *q, const char *g,
                  const char *id, const char *res)
{
    if (c->json) {
        json_head(q, g);
        if (id) {
            fputs(",\"id\":", stdout);
            emq_cli_json_str(stdout, id);
        }
        printf(",\"result\":\"%s\"}\n", res);
    } else {
        puts(res);
    }
    return ex;
}

/* The outcome of a call whose only success is EMQ_OK ("ok"). */
static int ok_or_fail(emq_cli *c, int rc, const char *q, const char *g)
{
    if (rc == EMQ_OK) return result(c, EMQ_EXIT_OK, q, g, NULL, "ok");
    return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
}

/* Parse, then open the file; returns -1 to proceed or an exit status. */
static int prepare(emq_cli *c, int argc, char **argv, const emq_cli_opt *opts,
                   const char **pos, int minpos, int maxpos, int *npos)
{
    int ex = emq_cli_parse(c, argc, argv, opts, pos, minpos, maxpos, npos);
    if (ex >= 0) return ex;
    if ((ex = emq_cli_open(c))) return ex;
    return -1;
}

/* ---------------------------------------------------------------- enqueue */

/* A lane argument: a branded group id as it is, else a tenant name mapped
 * to its group id (minted and kept on first use: emq_tenant_group). One
 * that begins with 3 capitals is an id or nothing (tenant names never do).
 * 0 with `gid`, or the exit status (reported). */
static int group_of(emq_cli *c, const char *arg, char gid[EMQ_ID_SIZE])
{
    int rc;
    if (emq_id_valid(arg)) {
        memcpy(gid, arg, EMQ_ID_SIZE);
        return 0;
    }
    if (strlen(arg) >= 3 && arg[0] >= 'A' && arg[0] <= 'Z' &&
        arg[1] >= 'A' && arg[1] <= 'Z' && arg[2] >= 'A' && arg[2] <= 'Z')
        return emq_cli_usage(c, "GROUP '%s' is not a lane id (a branded "
                             "id): " EMQ_CLI_ID_RULE " (a tenant name never "
                             "begins with 3 capitals)", arg);
    if ((rc = emq_tenant_group(c->db, arg, 1, gid)) < 0)
        return emq_cli_fail(c, rc, NULL);
    return 0;
}

static int sub_enqueue(emq_cli *c, int argc, char **argv)
{
    const char *idopt = NULL, *pos[3];
    emq_cli_opt opts[] = { { "--id", 1, &idopt }, { NULL, 0, NULL } };
    char id[EMQ_ID_SIZE], g[EMQ_ID_SIZE];
    const char *idp = id;
    int npos, rc, ex;

    if ((ex = prepare(c, argc, argv, opts, pos, 3, 3, &npos)) >= 0)
        return ex;
    if ((ex = group_of(c, pos[1], g)) != 0) return ex;
    if (idopt)
        idp = idopt;       /* passed whole: the library gates its length */
    else if ((rc = emq_cli_mint(c, id)) != EMQ_OK)
        return emq_cli_fail(c, rc, NULL);
    rc = emq_lane_enqueue(c->db, pos[0], g, idp, pos[2], strlen(pos[2]));
    if (rc == EMQ_ENQUEUED)
        return result(c, EMQ_EXIT_OK, pos[0], g, idp, c->json ?
                      "enqueued" : idp);
    if (rc == EMQ_DUPLICATE) {
        if (!c->json)
            fprintf(stderr, "emqlite: duplicate: job %s exists; nothing "
                    "changed\n", idp);
        return result(c, EMQ_EXIT_DUPLICATE, pos[0], g, idp,
                      c->json ? "duplicate" : idp);
    }
    return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
}

/* lane enqueue-many QUEUE [FILE|-]: one job per line "TENANT PAYLOAD". */
static int sub_enqueue_many(emq_cli *c, int argc, char **argv)
{
    const char *pos[2];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    char *line = NULL, id[EMQ_ID_SIZE], g[EMQ_ID_SIZE];
    size_t cap = 0;
    ssize_t len;
    int64_t n = 0, enq = 0, dup = 0, lineno = 0;
    FILE *f = stdin;
    int npos, rc = EMQ_OK, ex;

    if ((ex = prepare(c, argc, argv, opts, pos, 1, 2, &npos)) >= 0)
        return ex;
    if (npos == 2 && strcmp(pos[1], "-") != 0 &&
        (f = fopen(pos[1], "rb")) == NULL)
        return emq_cli_fail(c, EMQ_EIO, "cannot open the input file");
    while ((len = getline(&line, &cap, f)) >= 0) {
        char *sp;
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (len == 0) continue;
        if ((sp = strpbrk(line, " \t")) == NULL) {
            fprintf(stderr, "emqlite: lane enqueue-many: line %lld: want "
                    "'TENANT PAYLOAD' (a group id or a tenant name, a "
                    "space, the payload)\n", (long long)lineno);
            rc = EMQ_EPROTO;
            break;
        }
        *sp = 0;
        if ((ex = group_of(c, line, g)) != 0) {
            fprintf(stderr, "emqlite: lane enqueue-many: line %lld: the "
                    "lines before it stand\n", (long long)lineno);
            free(line);
            if (f != stdin) fclose(f);
            return ex;
        }
        if ((rc = emq_cli_mint(c, id)) != EMQ_OK) break;
        rc = emq_lane_enqueue(c->db, pos[0], g, id, sp + 1,
                              (size_t)(line + len - (sp + 1)));
        if (rc < 0) break;
        n++;
        if (rc == EMQ_ENQUEUED) enq++;
        else dup++;
        rc = EMQ_OK;
    }
    free(line);
    if (f != stdin) fclose(f);
    if (c->json) {
        json_head(pos[0], NULL);
        printf(",\"enqueued\":%lld,\"duplicate\":%lld%s}\n", (long long)enq,
               (long long)dup, rc < 0 ? ",\"stopped\":true" : "");
    } else {
        printf("enqueued %lld duplicate %lld\n", (long long)enq,
               (long long)dup);
    }
    if (rc == EMQ_EPROTO) return EMQ_EXIT_USAGE;
    if (rc < 0) return emq_cli_fail(c, rc, NULL);
    return EMQ_EXIT_OK;
}

/* ------------------------------------------------------------------ claim */

static void job_json(const emq_job *j)
{
    printf("{\"id\":\"%s\",\"attempts\":%lld,\"payload\":", j->id,
           (long long)j->attempts);
    if (j->payload)
        emq_cli_json_bytes(stdout, j->payload, j->payload_len);
    else
        fputs("null", stdout);
    putchar('}');
}

static void job_text(const emq_job *j, const char *g)
{
    printf("%s %lld %s\n", j->id, (long long)j->attempts, g);
    if (j->payload) fwrite(j->payload, 1, j->payload_len, stdout);
    putchar('\n');
}

static int sub_claim(emq_cli *c, int argc, char **argv)
{
    const char *lease_s = NULL, *weighted = NULL, *batch = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--lease", 1, &lease_s },
                           { "--weighted", 0, &weighted },
                           { "--batch", 0, &batch }, { NULL, 0, NULL } };
    int64_t lease = 30000;
    emq_lane_batch b;
    emq_job j;
    size_t i;
    int npos, rc, ex;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (weighted && batch)
        return emq_cli_usage(c, "--weighted and --batch exclude each other");
    if (lease_s && emq_cli_duration_pos(c, "--lease", lease_s, &lease))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c))) return ex;
    memset(&b, 0, sizeof b);
    if (weighted || batch) {
        rc = weighted ? emq_lane_wclaim(c->db, pos[0], lease, &b)
                      : emq_lane_bclaim(c->db, pos[0], lease, &b);
    } else {
        rc = emq_lane_claim(c->db, pos[0], lease, &j, b.group);
        if (rc == EMQ_OK) {
            b.jobs = &j;
            b.n = 1;
        }
    }
    if (rc == EMQ_EMPTY) {
        if (!c->json)
            fprintf(stderr, "emqlite: empty: nothing to claim (the ring is "
                    "empty, the rotated lane had nothing to serve, or the "
                    "queue is paused)\n");
        else
            result(c, EMQ_EXIT_EMPTY, pos[0], NULL, NULL, "empty");
        return EMQ_EXIT_EMPTY;
    }
    if (rc != EMQ_OK) return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL,
                                          NULL);
    if (c->json) {
        json_head(pos[0], b.group);
        fputs(",\"jobs\":[", stdout);
        for (i = 0; i < b.n; i++) {
            if (i) putchar(',');
            job_json(&b.jobs[i]);
        }
        puts("]}");
    } else {
        for (i = 0; i < b.n; i++) job_text(&b.jobs[i], b.group);
    }
    if (b.jobs == &j)
        emq_job_clear(&j);
    else
        emq_lane_batch_clear(&b);
    return EMQ_EXIT_OK;
}

/* ---------------------------------------------------- pause, resume, knobs */

/* pause and resume: QUEUE GROUP. */
static int toggle(emq_cli *c, int argc, char **argv,
                  int (*call)(emq_db *, const char *, const char *))
{
    const char *pos[2];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, ex;
    if ((ex = prepare(c, argc, argv, opts, pos, 2, 2, &npos)) >= 0) return ex;
    return ok_or_fail(c, call(c->db, pos[0], pos[1]), pos[0], pos[1]);
}

static int sub_pause(emq_cli *c, int argc, char **argv)
{
    return toggle(c, argc, argv, emq_lane_pause);
}

static int sub_resume(emq_cli *c, int argc, char **argv)
{
    return toggle(c, argc, argv, emq_lane_resume);
}

/* limit and weight: QUEUE GROUP N. */
static int knob(emq_cli *c, int argc, char **argv, const char *what,
                int (*call)(emq_db *, const char *, const char *, int64_t))
{
    const char *pos[3];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int64_t n;
    int npos, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 3, 3, &npos)) >= 0)
        return ex;
    if (emq_cli_int(c, what, pos[2], &n)) return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c))) return ex;
    return ok_or_fail(c, call(c->db, pos[0], pos[1], n), pos[0], pos[1]);
}

static int sub_limit(emq_cli *c, int argc, char **argv)
{
    return knob(c, argc, argv, "N", emq_lane_limit);
}

static int sub_weight(emq_cli *c, int argc, char **argv)
{
    return knob(c, argc, argv, "W", emq_lane_weight);
}

/* --------------------------------------------------------------- reassign */

static int sub_reassign(emq_cli *c, int argc, char **argv)
{
    const char *pos[3];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, ex, rc;
    if ((ex = prepare(c, argc, argv, opts, pos, 3, 3, &npos)) >= 0) return ex;
    rc = emq_reassign(c->db, pos[0], pos[1], pos[2]);
    switch (rc) {
    case EMQ_OK:
        return result(c, EMQ_EXIT_OK, pos[0], pos[2], pos[1], "reassigned");
    case EMQ_NOOP:
        return result(c, EMQ_EXIT_OK, pos[0], pos[2], pos[1], "noop");
    case EMQ_GONE:
        if (!c->json)
            fprintf(stderr, "emqlite: not_found: no job %s, or it is in no "
                    "lane\n", pos[1]);
        return result(c, EMQ_EXIT_GONE, pos[0], pos[2], pos[1],
                      "not_found");
    case EMQ_NOTPENDING:
        if (!c->json)
            fprintf(stderr, "emqlite: not_pending: job %s is not waiting in "
                    "its lane (claimed, scheduled or dead)\n", pos[1]);
        return result(c, EMQ_EXIT_STATE, pos[0], pos[2], pos[1],
                      "not_pending");
    default:
        return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
    }
}

/* ---------------------------------------------------- drain, reap, depth */

/* A count: the number (text) or {"queue","group",<what>: N}. */
static int count_out(emq_cli *c, int rc, const char *q, const char *g,
                     const char *what, int64_t n)
{
    if (rc != EMQ_OK) return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL,
                                          NULL);
    if (c->json) {
        json_head(q, g);
        printf(",\"%s\":%lld}\n", what, (long long)n);
    } else {
        printf("%lld\n", (long long)n);
    }
    return EMQ_EXIT_OK;
}

static int sub_drain(emq_cli *c, int argc, char **argv)
{
    const char *pos[2];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int64_t n = 0;
    int npos, ex, rc;
    if ((ex = prepare(c, argc, argv, opts, pos, 2, 2, &npos)) >= 0) return ex;
    rc = emq_lane_drain(c->db, pos[0], pos[1], &n);
    return count_out(c, rc, pos[0], pos[1], "drained", n);
}

static int sub_reap(emq_cli *c, int argc, char **argv)
{
    const char *limit_s = NULL, *pos[2];
    emq_cli_opt opts[] = { { "--limit", 1, &limit_s }, { NULL, 0, NULL } };
    int64_t limit = 100, n = 0;
    int npos, ex, rc;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 2, 2, &npos)) >= 0)
        return ex;
    if (limit_s && emq_cli_int(c, "--limit", limit_s, &limit))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c))) return ex;
    rc = emq_lane_reap(c->db, pos[0], pos[1], limit, &n);
    return count_out(c, rc, pos[0], pos[1], "reaped", n);
}

#define MAX_GROUPS 64

static int sub_depth(emq_cli *c, int argc, char **argv)
{
    const char *pos[1 + MAX_GROUPS];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int64_t d[MAX_GROUPS];
    int npos, ex, rc, i;
    if ((ex = prepare(c, argc, argv, opts, pos, 2, 1 + MAX_GROUPS,
                      &npos)) >= 0)
        return ex;
    rc = emq_lane_depths(c->db, pos[0], (size_t)(npos - 1), pos + 1, d);
    if (rc != EMQ_OK) return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL,
                                          NULL);
    if (c->json) {
        json_head(pos[0], NULL);
        fputs(",\"depths\":{", stdout);
    }
    for (i = 1; i < npos; i++) {
        int j;
        for (j = 1; j < i && strcmp(pos[j], pos[i]) != 0; j++)
            ;
        if (j < i) continue;                  /* named twice: once */
        if (c->json) {
            if (i > 1) putchar(',');
            emq_cli_json_str(stdout, pos[i]);
            printf(":%lld", (long long)d[i - 1]);
        } else if (npos == 2) {
            printf("%lld\n", (long long)d[0]);
        } else {
            printf("%s %lld\n", pos[i], (long long)d[i - 1]);
        }
    }
    if (c->json) puts("}}");
    return EMQ_EXIT_OK;
}

/* -------------------------------------------------------------- the table */

static const sub subs[] = {
    { "enqueue", sub_enqueue, "QUEUE TENANT PAYLOAD [--id ID]",
      "Admit one job into TENANT's lane of QUEUE and print its id; the group\n"
      "is offered to the ring (with a wake token) unless it is paused, at\n"
      "its limit or already there. TENANT is a group id (a branded id,\n"
      "PRT...), or a tenant name ('acme') mapped to its group id, which is\n"
      "minted and kept the first time the name is used (see `emqlite\n"
      "tenant`).\n"
      "  --id ID   use this branded id (else one is minted, namespace JOB)\n"
      "Exit: 0 enqueued, 3 duplicate (a row with that id exists), 4 EMQKIND,\n"
      "1 invalid queue, group or id." },
    { "enqueue-many", sub_enqueue_many, "QUEUE [FILE|-]",
      "Enqueue one job per line of FILE (or stdin): 'TENANT PAYLOAD', a\n"
      "group id or tenant name, one space or tab, the payload (the rest of\n"
      "the line). Each job is its own transaction (an id minted per line):\n"
      "a cut run leaves the lines before the cut enqueued. Blank lines are\n"
      "skipped. Prints 'enqueued N duplicate N'.\n"
      "Exit: 0 done, 1 a malformed line (the lines before it stand)." },
    { "claim", sub_claim, "QUEUE [--lease DURATION] [--weighted | --batch]",
      "Rotate the ring one step and claim from the group it lands on: one\n"
      "job, or with --weighted min(weight, depth, limit headroom) jobs, or\n"
      "with --batch the lane up to its limit. Prints per job a line\n"
      "'ID TOKEN GROUP', then the payload bytes and a newline.\n"
      "  --lease DURATION  lease length (default 30s; 5s, 10m, or ms)\n"
      "Exit: 0 claimed, 2 empty (the ring is empty, the rotated lane had\n"
      "nothing to serve and left the ring, or the queue is paused)." },
    { "pause", sub_pause, "QUEUE GROUP",
      "Pause one lane: GROUP leaves the ring; its waiting and claimed jobs\n"
      "stay. Prints ok." },
    { "resume", sub_resume, "QUEUE GROUP",
      "Resume a paused lane: GROUP is offered again when it has work.\n"
      "Prints ok." },
    { "limit", sub_limit, "QUEUE GROUP N",
      "Set GROUP's concurrency ceiling to N (> 0): at or above it the group\n"
      "leaves the ring, below it it is offered again. Prints ok." },
    { "weight", sub_weight, "QUEUE GROUP W",
      "Set GROUP's weight to W (>= 1): how many jobs a weighted claim\n"
      "serves it per rotation. Prints ok." },
    { "reassign", sub_reassign, "QUEUE ID GROUP",
      "Move job ID, waiting in its lane, to GROUP's lane.\n"
      "Prints reassigned, or noop when it is in GROUP already.\n"
      "Exit: 0 reassigned or noop, 6 not_found (no such job, or it has no\n"
      "group), 12 not_pending (claimed, scheduled or dead)." },
    { "drain", sub_drain, "QUEUE GROUP",
      "Delete every job waiting in GROUP's lane (rows and logs) and print\n"
      "the number deleted; claimed jobs, the limit, weight and pause stay." },
    { "depth", sub_depth, "QUEUE GROUP...",
      "Print the number of jobs waiting in each GROUP's lane: the number\n"
      "for one group, 'GROUP DEPTH' lines for several (read in one\n"
      "transaction)." },
    { "reap", sub_reap, "QUEUE GROUP [--limit N]",
      "Of the first N (default 100) lapsed leases of QUEUE, return GROUP's\n"
      "to its lane; print the number returned." },
    { NULL, NULL, NULL, NULL }
};

static const sub *sub_find(const char *name)
{
    const sub *s;
    for (s = subs; s->name; s++)
        if (strcmp(s->name, name) == 0) return s;
    return NULL;
}

/* 1 when --help or -h is among the options (before "--"). */
static int wants_help(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

static int cmd_lane(emq_cli *c, int argc, char **argv)
{
    const sub *s;
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && wants_help(argc, argv)) {
            printf("usage: emqlite [--db PATH] [--json] lane SUBCOMMAND "
                   "...\n\nFair lanes (PROTOCOL.md 6.3): tenants of one queue "
                   "each get a lane,\nand grouped claims serve the lanes in "
                   "turn.\n\n");
            for (s = subs; s->name; s++)
                printf("lane %s %s\n%s\n\n", s->name, s->synopsis, s->help);
            return EMQ_EXIT_OK;
        }
        return emq_cli_usage(c, "missing subcommand");
    }
    if ((s = sub_find(argv[1])) == NULL)
        return emq_cli_usage(c, "unknown subcommand '%s'", argv[1]);
    if (wants_help(argc - 1, argv + 1)) {
        printf("usage: emqlite [--db PATH] [--json] lane %s %s\n\n%s\n",
               s->name, s->synopsis, s->help);
        return EMQ_EXIT_OK;
    }
    c->syn = s->synopsis; /* positionals are checked by these names */
    c->sub = s->name;
    return s->fn(c, argc - 1, argv + 1);
}

const emq_cli_command emq_cli_lane_commands[] = {
    { "lane", cmd_lane,
      "enqueue|enqueue-many|claim|pause|resume|limit|weight|reassign|"
      "drain|depth|reap ...",
      "Fair lanes: per-tenant lanes of one queue served in turn.\n"
      "Run 'emqlite lane --help' for every subcommand, or\n"
      "'emqlite lane SUBCOMMAND --help' for one." },
    { NULL, NULL, NULL, NULL }
};
