/*
 * cli_stream.c — the stream commands of the emqlite tool: `stream add |
 * range | len | trim` and `group create | read | ack | pending | claim`
 * (PROTOCOL.md §6.5, T5.2-T5.6).
 *
 * Each subcommand is one registry verb run with emq_call (the arguments
 * built from the options), its reply printed as `emqlite call` prints it:
 * one value a line for a human, or under --json the document
 * {"verb": ..., "reply": <the wire reply as JSON>, "code": <result>}.
 */
#include <stdio.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "cli.h"

#define MAXA 300

typedef struct sub {
    const char *name;       /* the subcommand                              */
    const char *synopsis;
} sub;

/* Run verb with argv[0..n) and print the reply; the exit status. */
static int run(emq_cli *c, const char *verb, size_t n, const char **argv)
{
    emq_reply r = {0};
    int ex, rc;
    if ((ex = emq_cli_open(c)) != 0)
        return ex;
    rc = emq_call(c->db, verb, n, argv, NULL, &r);
    if (rc < 0 && r.type != EMQ_REPLY_ERROR && r.type != EMQ_REPLY_REFUSED) {
        emq_reply_clear(&r);
        return emq_cli_fail(c, rc, NULL);
    }
    if (c->json) {
        fputs("{\"verb\":", stdout);
        emq_cli_json_str(stdout, verb);
        fputs(",\"reply\":", stdout);
        emq_cli_reply_json(stdout, &r);
        printf(",\"code\":%d}\n", rc);
    } else if (rc >= 0) {
        emq_cli_reply_text(stdout, &r, 0);
    }
    emq_reply_clear(&r);
    if (rc < 0)
        return c->json ? emq_cli_exit_of(rc) : emq_cli_fail(c, rc, NULL);
    return emq_cli_exit_of(rc); /* a verdict's exit: its table row */
}

/* argv[1] is the subcommand: shift it off, checking it is one of subs. */
static int subcommand(emq_cli *c, int argc, char **argv, const sub *subs,
                      const char *help, int *which)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        if (argc >= 2) {
            fputs(help, stdout);
            return EMQ_EXIT_OK;
        }
        return emq_cli_usage(c, "a subcommand is needed (see 'emqlite %s "
                             "--help')", argv[0]);
    }
    for (int i = 0; subs[i].name; i++)
        if (strcmp(argv[1], subs[i].name) == 0) {
            *which = i;
            return -1;
        }
    return emq_cli_usage(c, "unknown subcommand '%s' (see 'emqlite %s "
                         "--help')", argv[1], argv[0]);
}

/* ---------------------------------------------------------------- stream */

static const sub stream_subs[] = {
    { "add", "Q NAME [--id EVTID | --xid ID] FIELD VALUE..." },
    { "range", "Q NAME [FROM [TO]] [--count N] [--raw]" },
    { "len", "Q NAME" },
    { "trim", "Q NAME (--maxlen N | --minid MS) [--approx]" },
    { NULL, NULL }
};

static const char stream_help[] =
    "usage: emqlite [--db PATH] [--json] stream SUBCOMMAND ...\n"
    "\n"
    "The event streams of a queue (emq:{Q}:stream:NAME, PROTOCOL.md 6.5).\n"
    "  add Q NAME [--id EVTID | --xid ID] FIELD VALUE...\n"
    "        append a record under a freshly minted EVT id (append), under\n"
    "        the given EVT id (--id: append_id), or under the raw entry id\n"
    "        ID or '*' (--xid: stream_add); prints the id\n"
    "  range Q NAME [FROM [TO]] [--count N] [--raw]\n"
    "        the records FROM..TO (default - +; '(' before an id excludes\n"
    "        it) as [record id, {field: value}] (read); --raw: the entries\n"
    "        as stored, [entry id, [field, value...]] (stream_range)\n"
    "  len Q NAME\n"
    "        the number of entries (0 when the stream does not exist)\n"
    "  trim Q NAME (--maxlen N | --minid MS) [--approx]\n"
    "        keep the newest N entries, or remove those minted before Unix\n"
    "        ms MS; --approx removes whole blocks of 100 only (D-16);\n"
    "        prints the number removed\n"
    "Exit: 0 done, 1 usage or a refusal (kind, malformed), 12 nonmonotonic\n"
    "(an append at or below the top), 9 WRONGTYPE or another engine error.\n";

static int cmd_stream(emq_cli *c, int argc, char **argv)
{
    const char *id = NULL, *xid = NULL, *count = NULL, *maxlen = NULL,
               *minid = NULL, *raw = NULL, *approx = NULL;
    emq_cli_opt opts[] = {
        { "--id", 1, &id }, { "--xid", 1, &xid }, { "--count", 1, &count },
        { "--raw", 0, &raw }, { "--maxlen", 1, &maxlen },
        { "--minid", 1, &minid }, { "--approx", 0, &approx },
        { NULL, 0, NULL } };
    const char *pos[MAXA], *a[MAXA + 4];
    char minted[EMQ_ID_SIZE];
    int which, npos, ex;
    size_t n = 0;
    int64_t v;
    if ((ex = subcommand(c, argc, argv, stream_subs, stream_help, &which)) >=
        0)
        return ex;
    if ((ex = emq_cli_parse(c, argc - 1, argv + 1, opts, pos, 2, MAXA,
                            &npos)) >= 0)
        return ex;
    a[n++] = pos[0];
    a[n++] = pos[1];
    switch (which) {
    case 0: /* add */
        if (npos < 4 || (npos - 2) % 2)
            return emq_cli_usage(c, "stream add needs FIELD VALUE pairs");
        if (id && xid)
            return emq_cli_usage(c, "--id and --xid exclude each other");
        if (!xid && !id) {
            /* append: the id is minted under the wall clock, as the tool
             * mints every id (EMQLITE_NOW_MS pins transitions only; the
             * append that follows reads no clock). */
            if ((ex = emq_cli_open(c)) != 0)
                return ex;
            emq_set_clock(c->db, NULL, NULL);
            int rc = emq_mint(c->db, "EVT", minted);
            if (rc < 0)
                return emq_cli_fail(c, rc, NULL);
        }
        a[n++] = xid ? xid : id ? id : minted;
        for (int i = 2; i < npos; i++)
            a[n++] = pos[i];
        return run(c, xid ? "stream_add" : id ? "append_id" : "append", n, a);
    case 1: /* range */
        if (npos > 4)
            return emq_cli_usage(c, "stream range takes Q NAME [FROM [TO]]");
        if (count && emq_cli_int(c, "--count", count, &v))
            return EMQ_EXIT_USAGE;
        a[n++] = npos > 2 ? pos[2] : "-";
        a[n++] = npos > 3 ? pos[3] : "+";
        if (count)
            a[n++] = count;
        return run(c, raw ? "stream_range" : "read", n, a);
    case 2: /* len */
        if (npos != 2)
            return emq_cli_usage(c, "stream len takes Q NAME");
        return run(c, "stream_len", n, a);
    default: /* trim */
        if (npos != 2 || !maxlen == !minid)
            return emq_cli_usage(c, "stream trim takes Q NAME and one of "
                                 "--maxlen N, --minid MS");
        if (emq_cli_int(c, maxlen ? "--maxlen" : "--minid",
                        maxlen ? maxlen : minid, &v))
            return EMQ_EXIT_USAGE;
        a[n++] = maxlen ? "maxlen" : "minid";
        a[n++] = maxlen ? maxlen : minid;
        a[n++] = approx ? "0" : "1";
        return run(c, "trim", n, a);
    }
}

/* ----------------------------------------------------------------- group */

static const sub group_subs[] = {
    { "create", "Q NAME GROUP [--start new|head|ID] [--mkstream]" },
    { "read", "Q NAME GROUP CONSUMER [--id >|ID] [--count N] [--block MS]" },
    { "ack", "Q NAME GROUP ID..." },
    { "pending", "Q NAME GROUP [START END] [--count N]" },
    { "claim", "Q NAME GROUP CONSUMER [--min-idle MS] [--start ID] "
               "[--count N]" },
    { NULL, NULL }
};

static const char group_help[] =
    "usage: emqlite [--db PATH] [--json] group SUBCOMMAND ...\n"
    "\n"
    "The consumer groups of a stream (PROTOCOL.md 6.5 T5.6).\n"
    "  create Q NAME GROUP [--start new|head|ID] [--mkstream]\n"
    "        a group whose consumers read from the end (new, the default:\n"
    "        '$'), the head ('0') or after ID; --mkstream creates an absent\n"
    "        stream empty\n"
    "  read Q NAME GROUP CONSUMER [--id >|ID] [--count N] [--block MS]\n"
    "        deliver new entries (--id >, the default) or replay the\n"
    "        consumer's own pending entries after ID; --block waits up to\n"
    "        MS ms for new ones (0: until one arrives)\n"
    "  ack Q NAME GROUP ID...\n"
    "        acknowledge entries; prints how many were pending\n"
    "  pending Q NAME GROUP [START END] [--count N]\n"
    "        the pending entries (default - +, 100): [id, consumer, idle ms,\n"
    "        deliveries]\n"
    "  claim Q NAME GROUP CONSUMER [--min-idle MS] [--start ID] [--count N]\n"
    "        autoclaim entries idle at least MS (default 30000) from ID\n"
    "        (default 0): [next cursor, claimed entries, deleted ids]\n"
    "Exit: 0 done, 2 read found nothing new, 1 usage, 9 an engine error\n"
    "(BUSYGROUP, NOGROUP, ...).\n";

static int cmd_group(emq_cli *c, int argc, char **argv)
{
    const char *start = NULL, *mkstream = NULL, *id = NULL, *count = NULL,
               *block = NULL, *idle = NULL;
    emq_cli_opt opts[] = {
        { "--start", 1, &start }, { "--mkstream", 0, &mkstream },
        { "--id", 1, &id }, { "--count", 1, &count }, { "--block", 1, &block },
        { "--min-idle", 1, &idle }, { NULL, 0, NULL } };
    const char *pos[MAXA], *a[MAXA + 8];
    int which, npos, ex;
    size_t n = 0;
    int64_t v;
    if ((ex = subcommand(c, argc, argv, group_subs, group_help, &which)) >=
        0)
        return ex;
    if ((ex = emq_cli_parse(c, argc - 1, argv + 1, opts, pos, 3, MAXA,
                            &npos)) >= 0)
        return ex;
    if ((count && emq_cli_int(c, "--count", count, &v)) ||
        (block && emq_cli_int(c, "--block", block, &v)) ||
        (idle && emq_cli_int(c, "--min-idle", idle, &v)))
        return EMQ_EXIT_USAGE;
    for (int i = 0; i < 3; i++)
        a[n++] = pos[i];
    switch (which) {
    case 0: /* create */
        if (npos != 3)
            return emq_cli_usage(c, "group create takes Q NAME GROUP");
        a[n++] = !start || !strcmp(start, "new") ? "$"
               : !strcmp(start, "head") ? "0" : start;
        a[n++] = mkstream ? "1" : "0";
        return run(c, "group_create", n, a);
    case 1: /* read */
        if (npos != 4)
            return emq_cli_usage(c, "group read takes Q NAME GROUP CONSUMER");
        a[n++] = pos[3];
        a[n++] = id ? id : ">";
        a[n++] = count;           /* NULL: absent */
        if (block)
            a[n++] = block;
        else if (!count)
            n--;                  /* both absent: leave them out */
        return run(c, "group_read", n, a);
    case 2: /* ack */
        if (npos < 4)
            return emq_cli_usage(c, "group ack needs at least one ID");
        for (int i = 3; i < npos; i++)
            a[n++] = pos[i];
        return run(c, "ack", n, a);
    case 3: /* pending */
        if (npos != 3 && npos != 5)
            return emq_cli_usage(c, "group pending takes Q NAME GROUP "
                                 "[START END]");
        a[n++] = npos == 5 ? pos[3] : "-";
        a[n++] = npos == 5 ? pos[4] : "+";
        a[n++] = count ? count : "100";
        return run(c, "pending_range", n, a);
    default: /* claim */
        if (npos != 4)
            return emq_cli_usage(c, "group claim takes Q NAME GROUP "
                                 "CONSUMER");
        a[n++] = pos[3];
        a[n++] = idle ? idle : "30000";
        a[n++] = start ? start : "0";
        if (count)
            a[n++] = count;
        return run(c, "autoclaim", n, a);
    }
}

const emq_cli_command emq_cli_stream_commands[] = {
    { "stream", cmd_stream, "SUBCOMMAND ... (add, range, len, trim)",
      stream_help },
    { "group", cmd_group,
      "SUBCOMMAND ... (create, read, ack, pending, claim)", group_help },
    { NULL, NULL, NULL, NULL }
};
