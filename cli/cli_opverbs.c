/*
 * cli_opverbs.c — the operator's commands of issue 34: `run-now` (run
 * scheduled jobs now: by id, or every job due before an instant), `mint`
 * (print a branded id) and `tenant` (the host-side names of lane groups).
 * The dead-letter requeues by count and age and the requeue with an
 * edited payload are options of `requeue` (cli/cli_ops.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static int cmd_run_now(emq_cli *c, int argc, char **argv);
static int cmd_mint(emq_cli *c, int argc, char **argv);
static int cmd_tenant(emq_cli *c, int argc, char **argv);

#define RUN_MAX_IDS 1024

const emq_cli_command emq_cli_opv_commands[] = {
    { "run-now", cmd_run_now,
      "QUEUE ID... | QUEUE (--due-before INSTANT | --all) [--batch N]",
      "Run scheduled jobs now: each ID that is scheduled (delayed, or\n"
      "failed and waiting for its retry) moves to pending, or to its lane,\n"
      "as the promote of a due job moves it; the others are left. Prints\n"
      "'ID moved' or 'ID not_scheduled' per ID (one transaction), or with\n"
      "--due-before every job due at or before INSTANT (--all: every\n"
      "scheduled job), N (default 100) per transaction, and 'moved N'.\n"
      "  --due-before INSTANT  2026-12-01T10:00:00Z, Unix ms, now+1h\n"
      "  --all                 every scheduled job, whatever its run-at\n"
      "  --batch N             jobs per transaction (default 100)\n"
      "Exit: 0 done (also when nothing moved), 1 invalid queue or id." },
    { "mint", cmd_mint, "[NAMESPACE]",
      "Print a fresh branded id of NAMESPACE (3 capitals; default JOB),\n"
      "minted by this file's id clock: e.g. 'emqlite mint PRT' for a lane\n"
      "group id. Ids of one namespace sort in mint order." },
    { "tenant", cmd_tenant, "NAME | --list | --id GROUP",
      "The readable names of lane groups: NAME's group id (a PRT id, minted\n"
      "and kept the first time NAME is used; the same id in every queue of\n"
      "the file), every NAME and its id with --list, or the NAME of a group\n"
      "id with --id. Kept beside the keyspace (host configuration), never\n"
      "in it: an export to Valkey does not change. `lane enqueue QUEUE NAME`\n"
      "and `lane enqueue-many` take a NAME wherever a GROUP goes.\n"
      "Exit: 0 done, 6 --id: the group has no name." },
    { NULL, NULL, NULL, NULL },
};

/* ---------------------------------------------------------------- run-now */

static int cmd_run_now(emq_cli *c, int argc, char **argv)
{
    const char *due_s = NULL, *all = NULL, *batch_s = NULL,
               *pos[1 + RUN_MAX_IDS];
    emq_cli_opt opts[] = { { "--due-before", 1, &due_s },
                           { "--all", 0, &all }, { "--batch", 1, &batch_s },
                           { NULL, 0, NULL } };
    int64_t batch = 100, until = INT64_MAX, moved = 0, n;
    int *v = NULL;
    int npos, rc, ex, i;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1 + RUN_MAX_IDS,
                            &npos)) >= 0)
        return ex;
    if (due_s && all)
        return emq_cli_usage(c, "use either --due-before or --all");
    if ((due_s || all) && npos > 1)
        return emq_cli_usage(c, "use either QUEUE ID... or QUEUE "
                             "--due-before INSTANT | --all");
    if (!due_s && !all && npos < 2)
        return emq_cli_usage(c, "missing argument: ID, --due-before or "
                             "--all");
    if (batch_s && emq_cli_int(c, "--batch", batch_s, &batch))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c))) return ex;
    if (due_s && emq_cli_time(c, "--due-before", due_s, &until))
        return EMQ_EXIT_USAGE;
    if (due_s || all) {
        /* batch by batch, each its own transaction: a cut run leaves the
         * moved ones pending and the rest scheduled; run it again. */
        do {
            rc = emq_schedule_run_due(c->db, pos[0], until, batch, &n);
            moved += rc == EMQ_OK ? n : 0;
        } while (rc == EMQ_OK && n == batch);
        if (rc < 0) return emq_cli_fail(c, rc, NULL);
        if (c->json) {
            fputs("{\"queue\":", stdout);
            emq_cli_json_str(stdout, pos[0]);
            printf(",\"moved\":%lld}\n", (long long)moved);
        } else {
            printf("moved %lld\n", (long long)moved);
        }
        return EMQ_EXIT_OK;
    }
    if ((v = calloc((size_t)npos, sizeof *v)) == NULL)
        return emq_cli_fail(c, EMQ_ENOMEM, NULL);
    rc = emq_job_run_now(c->db, pos[0], (size_t)(npos - 1), pos + 1, v,
                         &moved);
    if (rc < 0) {
        free(v);
        return emq_cli_fail(c, rc, NULL);
    }
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"moved\":%lld,\"jobs\":[", (long long)moved);
        for (i = 0; i < npos - 1; i++) {
            fputs(i ? ",{\"id\":" : "{\"id\":", stdout);
            emq_cli_json_str(stdout, pos[1 + i]);
            printf(",\"result\":\"%s\"}", v[i] ? "moved" : "not_scheduled");
        }
        puts("]}");
    } else {
        for (i = 0; i < npos - 1; i++)
            printf("%s %s\n", pos[1 + i], v[i] ? "moved" : "not_scheduled");
    }
    free(v);
    return EMQ_EXIT_OK;
}

/* ------------------------------------------------------------------- mint */

static int cmd_mint(emq_cli *c, int argc, char **argv)
{
    const char *pos[1] = {NULL}, *ns;
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    char id[EMQ_ID_SIZE];
    int npos, rc, ex, i;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 1, &npos)) >= 0)
        return ex;
    ns = npos ? pos[0] : "JOB";
    for (i = 0; ns[i]; i++)
        if (ns[i] < 'A' || ns[i] > 'Z') break;
    if (i != 3 || ns[i] != '\0')
        return emq_cli_usage(c, "NAMESPACE must be 3 capitals A-Z (JOB, "
                             "PRT, EVT ...), not '%s'", ns);
    if ((ex = emq_cli_open(c))) return ex;
    if ((rc = emq_cli_mint_ns(c, ns, id)) != EMQ_OK)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        printf("{\"id\":\"%s\",\"namespace\":\"%s\"}\n", id, ns);
    } else {
        puts(id);
    }
    return EMQ_EXIT_OK;
}

/* ----------------------------------------------------------------- tenant */

typedef struct tlist {
    int json, first;
} tlist;

static int tenant_line(void *ctx, const char *name, const char *gid)
{
    tlist *t = ctx;
    if (t->json) {
        fputs(t->first ? "{\"name\":" : ",{\"name\":", stdout);
        emq_cli_json_str(stdout, name);
        printf(",\"group\":\"%s\"}", gid);
    } else {
        printf("%s %s\n", gid, name);
    }
    t->first = 0;
    return 0;
}

static int cmd_tenant(emq_cli *c, int argc, char **argv)
{
    const char *list = NULL, *gid_s = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--list", 0, &list }, { "--id", 1, &gid_s },
                           { NULL, 0, NULL } };
    char gid[EMQ_ID_SIZE], name[EMQ_TENANT_NAME_MAX + 1];
    tlist tl = {0, 1};
    int npos, rc, ex;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 1, &npos)) >= 0)
        return ex;
    if (!!list + !!gid_s + (npos == 1) != 1)
        return emq_cli_usage(c, "use one of NAME, --list and --id GROUP");
    if ((ex = emq_cli_open(c))) return ex;
    if (list) {
        tl.json = c->json;
        if (c->json) fputs("{\"tenants\":[", stdout);
        rc = emq_tenant_list(c->db, tenant_line, &tl);
        if (c->json) puts("]}");
        return rc < 0 ? emq_cli_fail(c, rc, NULL) : EMQ_EXIT_OK;
    }
    if (gid_s) {
        rc = emq_tenant_name(c->db, gid_s, name, sizeof name);
        if (rc == EMQ_GONE)
            return emq_cli_verdict(c, EMQ_EXIT_GONE, "gone", NULL, gid_s,
                                   "the group has no name");
        if (rc < 0) return emq_cli_fail(c, rc, NULL);
        if (c->json) {
            fputs("{\"name\":", stdout);
            emq_cli_json_str(stdout, name);
            printf(",\"group\":\"%s\"}\n", gid_s);
        } else {
            puts(name);
        }
        return EMQ_EXIT_OK;
    }
    rc = emq_tenant_group(c->db, pos[0], 1, gid);
    if (rc < 0) return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        fputs("{\"name\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"group\":\"%s\"}\n", gid);
    } else {
        puts(gid);
    }
    return EMQ_EXIT_OK;
}
