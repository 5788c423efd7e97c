/*
 * cli.c — the emqlite command-line tool: global options, the command table,
 * argument parsing, result-code to exit-status mapping, and the commands that
 * map one-to-one onto the public API (enqueue ... resume; the operator's
 * commands, job among them, are in cli_ops.c). The demo lives in
 * cli_demo.c, the JSON codec in cli_json.c.
 *
 * Rules: only api/emqlite.h is used; a command is one row of a group's
 * table (cli/cli_groups.def) plus one function; under --json every invocation writes exactly one JSON
 * document to stdout (a result, or {"error": ...}), and every failure also
 * writes one line "emqlite: <message>" to stderr.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli.h"
#include "cli_time.h"

#define DEFAULT_DB "./emqlite.db"

static int cmd_enqueue(emq_cli *c, int argc, char **argv);
static int cmd_enqueue_many(emq_cli *c, int argc, char **argv);
static int cmd_claim(emq_cli *c, int argc, char **argv);
static int cmd_complete(emq_cli *c, int argc, char **argv);
static int cmd_retry(emq_cli *c, int argc, char **argv);
static int cmd_extend(emq_cli *c, int argc, char **argv);
static int cmd_promote(emq_cli *c, int argc, char **argv);
static int cmd_reap(emq_cli *c, int argc, char **argv);
static int cmd_browse(emq_cli *c, int argc, char **argv);
static int cmd_stats(emq_cli *c, int argc, char **argv);
static int cmd_slot(emq_cli *c, int argc, char **argv);
static int cmd_version(emq_cli *c, int argc, char **argv);
static int cmd_pause(emq_cli *c, int argc, char **argv);
static int cmd_resume(emq_cli *c, int argc, char **argv);
static int cmd_help(emq_cli *c, int argc, char **argv);
static int cmd_bench(emq_cli *c, int argc, char **argv);

/* The core commands: adding one is one row here and one function (other
 * groups live in their own files, cli/cli_groups.def). */
const emq_cli_command emq_cli_core_commands[] = {
    { "enqueue", cmd_enqueue, "QUEUE [PAYLOAD|-] [--id ID] [--at TIME | --in DURATION]",
      "Admit one job into QUEUE and print its id. The payload is PAYLOAD, or\n"
      "all of stdin (byte for byte) when PAYLOAD is absent or '-'.\n"
      "  --id ID   use this branded id (else one is minted, namespace JOB)\n"
      "  --at TIME      schedule it at TIME: UTC ISO-8601\n"
      "                 (2026-12-01T10:00:00Z), Unix ms, now or now+5m\n"
      "  --in DURATION  schedule it DURATION from now (250ms, 5s, 10m, 2h,\n"
      "                 1d, 1h30m; a bare number is milliseconds)\n"
      "Exit: 0 enqueued or scheduled, 3 duplicate (the first payload stands),\n"
      "4 EMQKIND (the id is not JOB-namespaced), 1 invalid queue or id." },
    { "enqueue-many", cmd_enqueue_many, "QUEUE [FILE|-] [--ndjson]",
      "Enqueue one job per line of FILE (or stdin) in one transaction and\n"
      "print the counts: enqueued N duplicate N kind N.\n"
      "  --ndjson  each line is a JSON string (the payload) or an object\n"
      "            {\"id\": ID, \"payload\": P}, P a string or {\"b64\": ...};\n"
      "            blank lines are skipped. Without it each line's bytes,\n"
      "            without the newline, are one payload.\n"
      "Exit: 0 applied (see the counts), 1 malformed input or empty batch." },
    { "claim", cmd_claim, "QUEUE [--lease DURATION]",
      "Claim the oldest pending job of QUEUE. Prints a line 'ID TOKEN', then\n"
      "the payload bytes and a newline. TOKEN (the attempts count) must be\n"
      "presented to complete, retry and extend.\n"
      "  --lease DURATION  lease length (default 30s; 250ms, 5s, 10m, 2h,\n"
      "                    1d, or milliseconds)\n"
      "Exit: 0 claimed, 2 empty (nothing pending, or the queue is paused)." },
    { "complete", cmd_complete, "QUEUE ID TOKEN",
      "Complete a claimed job: its row is deleted and counted as completed.\n"
      "Exit: 0 ok, 5 EMQSTALE (token mismatch), 6 gone (no such job)." },
    { "retry", cmd_retry,
      "QUEUE ID TOKEN [--delay DURATION] [--max N] [--error TEXT]",
      "Fail a claimed job: record TEXT as last_error and schedule it again in\n"
      "DURATION, or dead-letter it once its attempts reach N.\n"
      "Prints 'scheduled' or 'dead'.\n"
      "  --delay DURATION  backoff before the next attempt (default 1s)\n"
      "  --max N           attempts cap (default 3)\n"
      "  --error TEXT      the reason (default empty)\n"
      "Exit: 0 scheduled or dead, 5 EMQSTALE (token mismatch or job gone)." },
    { "extend", cmd_extend, "QUEUE ID TOKEN [--lease DURATION]",
      "Extend a claimed job's lease to now + DURATION (default 30s).\n"
      "Exit: 0 ok, 5 EMQSTALE (token mismatch), 6 gone (no such job)." },
    { "promote", cmd_promote, "QUEUE [--batch N]",
      "Move up to N (default 100) due scheduled jobs to pending; prints the\n"
      "number moved." },
    { "reap", cmd_reap, "QUEUE",
      "Return up to 100 jobs whose lease lapsed to pending; prints the\n"
      "number reaped." },
    { "browse", cmd_browse, "QUEUE [-n N]",
      "Print the newest N (default 10) pending ids, newest first." },
    { "stats", cmd_stats, "[QUEUE...]",
      "Print, per queue, the pending/active/scheduled/dead set sizes and the\n"
      "completed/failed counters as an aligned table (all queues of the file\n"
      "when none is named)." },
    { "slot", cmd_slot, "KEY",
      "Print the cluster slot of KEY (CRC16 of its hash tag, mod 16384)." },
    { "version", cmd_version, "",
      "Print the library version, the wire identities (the default of a new\n"
      "file first), the identity the --db file speaks when it exists, and\n"
      "the SQLite version." },
    { "pause", cmd_pause, "QUEUE",
      "Pause QUEUE: claims answer empty until it is resumed." },
    { "resume", cmd_resume, "QUEUE", "Resume a paused QUEUE." },
    { "demo", emq_cli_demo, "",
      "Run a short, self-contained story on the file: a few thousand jobs\n"
      "over the queues mail, thumbnails and billing, a worker that completes\n"
      "most, retries with exponential backoff until one dead-letters, a\n"
      "delayed job promoted, a lapsed lease reaped. A virtual clock drives\n"
      "time, so it never sleeps. Safe to run again." },
    { "help", cmd_help, "[COMMAND]", "Show the commands, or one command's help." },
    { "export", emq_cli_export,
      "[--out FILE] [--queue Q]... [--by-slot] [--wire IDENTITY]",
      "Write the file's keyspace as a RESP command stream (doc/EXPORT.md) to\n"
      "stdout or FILE, for 'redis-cli --pipe' or as an appendonly.aof. A\n"
      "summary goes to stderr: keys, commands, bytes and the XXH3-64 digest.\n"
      "  --out FILE   write the stream to FILE (needed with --json)\n"
      "  --queue Q    only queue Q's keys (repeatable), plus {emq}:version\n"
      "  --by-slot    order keys by cluster slot, each slot in MULTI/EXEC\n"
      "  --wire IDENTITY  state this identity in the stream's {emq}:version\n"
      "               (one of 'emqlite wire'; default: the file's own)\n"
      "Exit: 0 written, 9 the stream could not be written." },
    { "import", emq_cli_import, "[--unchecked] [--aof] [--raw] [FILE|DIR|-]",
      "Apply a RESP stream (an export, or with --aof an AOF Valkey wrote)\n"
      "from FILE or stdin in one transaction, on top of what the file holds.\n"
      "A directory or a *.manifest is a multi-part AOF: its base and\n"
      "incremental files are read in the manifest's order (--aof implied).\n"
      "The queues written are judged by the rules of 'check' before the\n"
      "commit. An export must end with its end record (the commands, bytes\n"
      "and XXH3-64 before it): a cut export is refused.\n"
      "  --aof        the stream is an AOF: Valkey's rewrite forms (HMSET)\n"
      "               and an incremental AOF's deletes and overwrites (DEL,\n"
      "               UNLINK, HDEL, ZREM, SREM, LREM, LPOP, RPOP, LTRIM,\n"
      "               LMOVE, ZPOPMIN, HINCRBY, INCRBY, PEXPIRE, FLUSHALL, ...)\n"
      "               applied as Valkey applies them; an RDB preamble is\n"
      "               refused (start a server on it and 'emqlite pull')\n"
      "  --raw        a bare command stream (hand-written): no end record\n"
      "               required\n"
      "  --unchecked  skip that judgement (forensic copies)\n"
      "Exit: 0 applied, 1 refused (malformed or cut stream, unknown command, key\n"
      "outside the grammar, a state 'check' calls a violation: the message\n"
      "names the byte offset; nothing is applied), 7 the stream's\n"
      "{emq}:version is no identity of the wire table (or not the file's,\n"
      "for a file holding keys)." },
    { "push", emq_cli_push,
      "--to HOST:PORT [--cluster] [--replace | --resume] [--by-slot]\n"
      "     [--queue Q]... [--wire IDENTITY] [--timeout D]",
      "Stream the export into a live Valkey/Redis server (pipelined), after\n"
      "checking its {emq}:version: a stamp of the wire table is kept and\n"
      "spoken; an absent one is claimed with the file's identity (or\n"
      "--wire IDENTITY). Then compare each\n"
      "queue's four set sizes and job-row count with the file. A cluster\n"
      "node is detected: every key goes to its slot's primary (MOVED and\n"
      "ASK followed) and each node's figures are printed.\n"
      "  --cluster   HOST:PORT must be a node of a cluster (a seed)\n"
      "  --timeout D the longest one read or write to a server may stall\n"
      "              (e.g. 300ms, 30s; default 10m), then exit 9 naming it\n"
      "  --replace   delete the target's keys of the exported queues first\n"
      "  --resume    continue a push that stopped half way: send only the\n"
      "              keys the target does not hold equal (per-key XXH3 of\n"
      "              the digest record), delete first its keys that differ\n"
      "              or the file does not hold; prints keys sent/skipped\n"
      "  --by-slot   wrap each queue's keys in MULTI/EXEC (atomic per queue)\n"
      "  --queue Q   only queue Q (repeatable)\n"
      "Exit: 0 pushed and matching, 3 the target holds keys of an exported\n"
      "queue (nothing written), 7 the target's stamp is no identity of the\n"
      "wire table, 9 server\n"
      "or I/O error, 10 built without hiredis, 11 the counts disagree." },
    { "pull", emq_cli_pull, "--from HOST:PORT [--cluster] [--timeout D] [--queue Q]...",
      "Read the EchoMQ keys of a live server (SCAN, by TYPE) and import them\n"
      "into the file in one transaction; the file must not hold the pulled\n"
      "queues yet. From a cluster, every primary is read. The file takes the\n"
      "server's identity (a file holding keys must already speak it); a\n"
      "pull refused leaves no new file behind.\n"
      "  --cluster   HOST:PORT must be a node of a cluster (a seed)\n"
      "  --timeout D the longest one read or write to a server may stall\n"
      "              (e.g. 300ms, 30s; default 10m), then exit 9 naming it\n"
      "Exit: 0 pulled, 3 the file already holds a pulled queue, 7 the server's\n"
      "stamp is no identity of the wire table (or not the file's), 9 server\n"
      "or I/O error, 10 built without hiredis,\n"
      "11 the file's digest disagrees with the server's after the import." },
    { "verify", emq_cli_verify,
      "--against HOST:PORT [--cluster] [--timeout D] [--queue Q]...",
      "Compute the logical digest of the file and of a live server (every\n"
      "primary of a cluster) and say 'equal', or name the first differing\n"
      "key.\n"
      "  --cluster   HOST:PORT must be a node of a cluster (a seed)\n"
      "  --timeout D the longest one read or write to a server may stall\n"
      "              (e.g. 300ms, 30s; default 10m), then exit 9 naming it\n"
      "Exit: 0 equal, 11 different, 9 server or I/O error, 10 built without\n"
      "hiredis." },
    { "wire", emq_cli_wire, "[--set IDENTITY]",
      "Print the wire identity the file speaks (its {emq}:version), then\n"
      "the identities this emqlite implements; they differ in nothing but\n"
      "the stamp (echomq:3.0.0 is the deployed EchoMQ runtime's).\n"
      "  --set IDENTITY  restamp the file (one of the table); only the\n"
      "                  stamp changes\n"
      "Exit: 0 shown or changed, 1 IDENTITY is none of the table." },
    { "check", emq_cli_check, "",
      "Check the file's invariants and print every finding (violations and\n"
      "notes), then the counts.\n"
      "Exit: 0 no violation (notes allowed), 11 at least one violation." },
    { "bench", cmd_bench, "[--smoke] [--scale F] [--repeat K] [BENCH OPTIONS]",
      "Run the benchmark (emqlite-bench): emqlite, hand-written SQL and a\n"
      "private redis-server running the Lua bundle, side by side; see\n"
      "BENCHMARKS.md. The program is found as $EMQLITE_BENCH, then\n"
      "bench/emqlite-bench beside this tool (a build tree), then the\n"
      "installed " PKGLIBEXECDIR "/emqlite-bench; every argument after\n"
      "'bench' is passed to it unchanged (emqlite bench -- --help lists\n"
      "them).\n"
      "Exit: the benchmark's own, or 10 when it is not built (make bench)." },
    { NULL, NULL, NULL, NULL }
};

static const emq_cli_command *const groups[] = {
#define EMQ_CLI_GROUP(G) emq_cli_##G##_commands,
#include "cli_groups.def"
#undef EMQ_CLI_GROUP
};
#define NGROUPS (sizeof groups / sizeof groups[0])

const emq_cli_command *emq_cli_find(const char *name)
{
    for (size_t g = 0; g < NGROUPS; g++)
        for (const emq_cli_command *c = groups[g]; c->name; c++)
            if (strcmp(c->name, name) == 0)
                return c;
    return NULL;
}

/* ------------------------------------------------------------ help, usage */

static void print_usage(FILE *f)
{
    fputs("usage: emqlite [--db PATH] [--json] COMMAND [ARGS...]\n"
          "       emqlite COMMAND --help\n\n"
          "Options (anywhere on the line):\n"
          "  --db PATH  the emqlite file (default $EMQLITE_DB, else "
          DEFAULT_DB ")\n"
          "  --json     write one JSON document to stdout\n"
          "  --help     show help\n\n"
          "Commands:\n", f);
    for (size_t g = 0; g < NGROUPS; g++)
        for (const emq_cli_command *c = groups[g]; c->name; c++)
            fprintf(f, "  %-13s %s\n", c->name, c->synopsis);
    fputs("\nSee emqlite(1) for exit statuses and the JSON shapes.\n", f);
}

static void print_command_help(FILE *f, const emq_cli_command *cmd)
{
    fprintf(f, "usage: emqlite [--db PATH] [--json] %s%s%s\n\n%s\n", cmd->name,
            cmd->synopsis[0] ? " " : "", cmd->synopsis, cmd->help);
}

int emq_cli_usage(emq_cli *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "emqlite: %s%s%s%s%s\n", c->cmd ? c->cmd : "",
            c->cmd && c->sub ? " " : "", c->cmd && c->sub ? c->sub : "",
            c->cmd ? ": " : "", msg);
    if (c->cmd && c->sub && c->syn)
        fprintf(stderr, "usage: emqlite %s %s%s%s (see 'emqlite %s %s "
                "--help')\n", c->cmd, c->sub, c->syn[0] ? " " : "", c->syn,
                c->cmd, c->sub);
    else if (c->cmd)
        fprintf(stderr, "usage: emqlite %s %s (see 'emqlite %s --help')\n",
                c->cmd, emq_cli_find(c->cmd)->synopsis, c->cmd);
    if (c->json) {
        fputs("{\"error\":{\"class\":\"usage\",\"message\":", stdout);
        emq_cli_json_str(stdout, msg);
        printf("},\"exit\":%d}\n", EMQ_EXIT_USAGE);
    }
    return EMQ_EXIT_USAGE;
}

/* ---------------------------------------------------------------- options */

/* The names of the positionals in a synopsis, in order: uppercase words
 * outside option values ("QUEUE ID TOKEN [--lease MS]" -> QUEUE ID TOKEN),
 * up to the first alternative ('|'), redirection or literal word. *rep is
 * 1 when the last name repeats ("[QUEUE...]"). Returns the count. */
static int syn_names(const char *syn, char names[][16], int max, int *rep)
{
    int n = 0, skip = 0;
    *rep = 0;
    while (syn && *syn && n < max) {
        char tok[64];
        size_t len = strcspn(syn, " ");
        const char *t = tok;
        if (len >= sizeof tok) break;
        memcpy(tok, syn, len);
        tok[len] = '\0';
        syn += len;
        syn += strspn(syn, " ");
        if (len == 0) continue;
        while (*t == '[') t++;
        if (*t == '-') {
            skip = tok[len - 1] != ']'; /* "--lease MS": MS is its value */
            continue;
        }
        if (skip) {
            skip = 0;
            continue;
        }
        if (strcmp(t, "|") == 0 || strchr(t, '<')) break;
        size_t k = strcspn(t, "|]. ");
        for (size_t j = 0; j < k; j++)
            if (t[j] >= 'a' && t[j] <= 'z') return n; /* a literal word */
        if (k == 0 || k >= sizeof names[0]) break;
        memcpy(names[n], t, k);
        names[n][k] = '\0';
        n++;
        if (strstr(t, "...")) {
            *rep = 1;
            break;
        }
    }
    return n;
}

/* Check one value by the name it has in the synopsis. */
static int check_named(emq_cli *c, const char *name, const char *v)
{
    if (strcmp(name, "QUEUE") == 0 && !emq_queue_valid(v))
        return emq_cli_usage(c, "QUEUE '%s' is not a queue name: "
                             EMQ_CLI_QUEUE_RULE, v);
    if ((strcmp(name, "ID") == 0 || strcmp(name, "PARENT") == 0 ||
         strcmp(name, "--id") == 0) && !emq_id_valid(v))
        return emq_cli_usage(c, "%s '%s' is not a branded id: "
                             EMQ_CLI_ID_RULE, name, v);
    if ((strcmp(name, "GROUP") == 0 || strcmp(name, "--lane") == 0) &&
        !emq_id_valid(v))
        return emq_cli_usage(c, "%s '%s' is not a lane id (a branded id): "
                             EMQ_CLI_ID_RULE, name, v);
    /* A group id or a tenant name: one that begins as an id does is read
     * as an id (tenant names never begin with 3 capitals). */
    if (strcmp(name, "TENANT") == 0 && strlen(v) >= 3 &&
        v[0] >= 'A' && v[0] <= 'Z' && v[1] >= 'A' && v[1] <= 'Z' &&
        v[2] >= 'A' && v[2] <= 'Z' && !emq_id_valid(v))
        return emq_cli_usage(c, "GROUP '%s' is not a lane id (a branded id): "
                             EMQ_CLI_ID_RULE " (a tenant name never begins "
                             "with 3 capitals)", v);
    return -1;
}

/* "missing QUEUE ID": the names of positionals have..want-1. */
static int missing(emq_cli *c, int have, int want)
{
    const emq_cli_command *cmd = c->cmd ? emq_cli_find(c->cmd) : NULL;
    char names[12][16], list[200] = "";
    int rep, nn = syn_names(c->syn ? c->syn : cmd ? cmd->synopsis : "",
                            names, 12, &rep);
    size_t at = 0;
    if (nn < want)
        return emq_cli_usage(c, "missing argument%s",
                             want - have > 1 ? "s" : "");
    for (int i = have; i < want && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, " %s", names[i]);
    return emq_cli_usage(c, "missing%s", list);
}

/* The positionals, --id and --lane checked by their names
 * (emq_cli_parse). */
static int check_args(emq_cli *c, const char **pos, int n,
                      const emq_cli_opt *opts)
{
    const emq_cli_command *cmd = c->cmd ? emq_cli_find(c->cmd) : NULL;
    char names[12][16];
    int rep, nn, ex;
    nn = syn_names(c->syn ? c->syn : cmd ? cmd->synopsis : "", names, 12,
                   &rep);
    for (int i = 0; i < n; i++) {
        const char *name = i < nn ? names[i] : rep && nn ? names[nn - 1]
                                                         : NULL;
        if (name && (ex = check_named(c, name, pos[i])) >= 0) return ex;
    }
    /* An option is checked as an id where the synopsis says so ("--id ID",
     * "--lane GROUP"); a stream's --id is an entry id, not a branded one. */
    const char *syn = c->syn ? c->syn : cmd ? cmd->synopsis : "";
    for (const emq_cli_opt *o = opts; o && o->name; o++)
        if (((strcmp(o->name, "--id") == 0 && strstr(syn, "--id ID")) ||
             (strcmp(o->name, "--lane") == 0 && strstr(syn, "--lane "))) &&
            o->takes_value && *o->value &&
            (ex = check_named(c, o->name, *o->value)) >= 0)
            return ex;
    return -1;
}

int emq_cli_parse(emq_cli *c, int argc, char **argv, const emq_cli_opt *opts,
                  const char **pos, int minpos, int maxpos, int *npos)
{
    int n = 0, dashdash = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (dashdash || a[0] != '-' || a[1] == 0) {
            if (n >= maxpos)
                return emq_cli_usage(c, "unexpected argument '%s'", a);
            pos[n++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            dashdash = 1;
            continue;
        }
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        if ((nlen == 6 && strncmp(a, "--help", 6) == 0) ||
            (nlen == 2 && strncmp(a, "-h", 2) == 0)) {
            print_command_help(stdout, emq_cli_find(c->cmd));
            return EMQ_EXIT_OK;
        }
        if (nlen == 6 && strncmp(a, "--json", 6) == 0 && !eq) {
            c->json = 1;
            continue;
        }
        const char *val = NULL;
        int takes = 0, is_db = 0;
        const emq_cli_opt *o = NULL;
        if (nlen == 4 && strncmp(a, "--db", 4) == 0) {
            takes = 1;
            is_db = 1;
        } else {
            for (o = opts; o && o->name; o++)
                if (strlen(o->name) == nlen && strncmp(o->name, a, nlen) == 0)
                    break;
            if (!o || !o->name)
                return emq_cli_usage(c, "unknown option '%.*s'", (int)nlen, a);
            takes = o->takes_value;
        }
        if (takes) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return emq_cli_usage(c, "option '%s' needs a value", a);
        } else {
            if (eq)
                return emq_cli_usage(c, "option '%.*s' takes no value",
                                     (int)nlen, a);
            val = "1";
        }
        if (is_db)
            c->db_path = val;
        else
            *o->value = val;
    }
    if (n < minpos)
        return missing(c, n, minpos);
    *npos = n;
    return check_args(c, pos, n, opts);
}

/* The one rule for every number on the command line and in the
 * environment: an optional '-', then 1 to 19 ASCII digits, nothing before
 * or after (no space, tab or newline, no '+'), within int64. */
int emq_cli_int(emq_cli *c, const char *what, const char *s, int64_t *out)
{
    const char *d = s[0] == '-' ? s + 1 : s;
    size_t n = strspn(d, "0123456789");
    char *end;
    long long v = 0;
    int ok = n > 0 && n <= 19 && d[n] == '\0';
    if (ok) {
        errno = 0;
        v = strtoll(s, &end, 10);
        ok = errno == 0 && *end == '\0';
    }
    if (!ok)
        return emq_cli_usage(c, "%s must be a decimal integer, not '%s'",
                             what, s);
    *out = (int64_t)v;
    return 0;
}

/* -------------------------------------------------------- errors and exits */

/* The exit status and class of a code are its row of EMQ_RESULT_MAP
 * (emqlite.h); a code outside the table is a plain error. */
int emq_cli_exit_of(int rc)
{
    const emq_result_row *r = emq_result_info(rc);
    return r ? r->exit : EMQ_EXIT_ERROR;
}

const char *emq_cli_class_of(int rc)
{
    const emq_result_row *r = emq_result_info(rc);
    return r ? r->cls : "error";
}

int emq_cli_fail(emq_cli *c, int rc, const char *msg)
{
    const char *cls = emq_cli_class_of(rc);
    int code = emq_cli_exit_of(rc);
    if (!msg || !msg[0])
        msg = c->db ? emq_errmsg(c->db) : "";
    if (!msg[0])
        msg = emq_strerror(rc);
    /* The host gates' wire texts (PROTOCOL.md A.3, kept verbatim by the
     * library and by `call`) say the rule here; the arguments the tool
     * names are checked before (emq_cli_parse), so these are values read
     * from input (a file, stdin). */
    if (!c->cmd || strcmp(c->cmd, "call") != 0) {
        if (rc == EMQ_EID && strcmp(msg, "job_key requires a valid branded "
                                         "id") == 0)
            msg = "a job id is not a branded id: " EMQ_CLI_ID_RULE;
        else if (rc == EMQ_EID && strcmp(msg, "a lane is named by a valid "
                                              "branded id") == 0)
            msg = "a group id is not a branded id: " EMQ_CLI_ID_RULE;
        else if (rc == EMQ_EQUEUE && strcmp(msg, "invalid queue name") == 0)
            msg = "a queue name is not valid: " EMQ_CLI_QUEUE_RULE;
    }
    /* Wire errors are printed verbatim (their first word is the class);
     * other failures are prefixed with emqlite's class name. */
    size_t cl = strlen(cls);
    int verbatim = strncmp(msg, cls, cl) == 0 && (msg[cl] == ' ' || !msg[cl]);
    fprintf(stderr, "emqlite: %s%s%s\n", verbatim ? "" : cls,
            verbatim ? "" : ": ", msg);
    if (c->json) {
        fputs("{\"error\":{\"class\":", stdout);
        emq_cli_json_str(stdout, cls);
        fputs(",\"message\":", stdout);
        emq_cli_json_str(stdout, msg);
        printf(",\"code\":%d},\"exit\":%d}\n", rc, code);
    }
    return code;
}

/* {"queue","id","result"}: the JSON document of a verdict. */
static void json_result(const char *q, const char *id, const char *result)
{
    fputs("{\"queue\":", stdout);
    emq_cli_json_str(stdout, q);
    if (id) {
        fputs(",\"id\":", stdout);
        emq_cli_json_str(stdout, id);
    }
    printf(",\"result\":\"%s\"}\n", result);
}

int emq_cli_verdict(emq_cli *c, int code, const char *result, const char *q,
                    const char *id, const char *note)
{
    if (c->json) {
        json_result(q, id, result);
    } else {
        fprintf(stderr, "emqlite: %s: %s\n", result, note);
    }
    return code;
}

/* Print a success result: text `text` (a line) or {"queue","id","result"}. */
int emq_cli_ok(emq_cli *c, const char *q, const char *id, const char *result,
               const char *text)
{
    if (c->json) {
        json_result(q, id, result);
    } else {
        puts(text);
    }
    return EMQ_EXIT_OK;
}

/* ------------------------------------------------------------------ file */

/* $EMQLITE_NOW_MS pins the clock every transition reads. */
static int64_t pinned_now;

static int64_t pinned_clock(void *ctx)
{
    (void)ctx;
    return pinned_now;
}

/* The commands that only read the file: they open it read-only, so they
 * never create it (or anything beside it) and work on a read-only mount. */
static int reads_only(const char *cmd)
{
    static const char *const readers[] = {
        "stats", "job", "browse", "check", "export", "verify", "push",
        "top",
    };
    for (size_t i = 0; cmd && i < sizeof readers / sizeof *readers; i++)
        if (strcmp(cmd, readers[i]) == 0)
            return 1;
    return 0;
}

int emq_cli_open(emq_cli *c)
{
    emq_options o;
    char err[512] = "";
    const char *bt = getenv("EMQLITE_BUSY_TIMEOUT");
    const char *now = getenv("EMQLITE_NOW_MS");
    int64_t ms;
    if (c->db)
        return 0;
    /* The library's in-memory database would vanish with the command. */
    if (c->db_path[0] == '\0')
        return emq_cli_usage(c, "--db is empty: give the path of a file "
                             "(is a variable unset?)");
    if (strcmp(c->db_path, ":memory:") == 0)
        return emq_cli_usage(c, "--db :memory: would be a private in-memory "
                             "database, gone when this command ends: give "
                             "the path of a file");
    emq_options_init(&o);
    o.readonly = reads_only(c->cmd);
    if (bt && bt[0]) {
        if (emq_cli_parse_duration(bt, &ms) != 0 || ms > 86400000)
            return emq_cli_usage(c, "EMQLITE_BUSY_TIMEOUT must be a duration "
                                 "of at most 1d (250ms, 5s, or "
                                 "milliseconds), not '%s'", bt);
        o.busy_timeout_ms = (int)ms;
    }
    if (now && now[0]) {
        if (emq_cli_int(c, "EMQLITE_NOW_MS", now, &pinned_now))
            return EMQ_EXIT_USAGE;
        o.clock = pinned_clock;
    }
    int rc = emq_open_ex(c->db_path, &o, &c->db, err, sizeof err);
    if (rc != EMQ_OK) {
        c->db = NULL;
        char msg[700];
        if (err[0] && strstr(err, c->db_path))
            snprintf(msg, sizeof msg, "%s", err);
        else
            snprintf(msg, sizeof msg, "%s: %s", c->db_path,
                     err[0] ? err : emq_strerror(rc));
        return emq_cli_fail(c, rc, msg);
    }
    return 0;
}

int emq_cli_mint(emq_cli *c, char id[EMQ_ID_SIZE])
{
    return emq_cli_mint_ns(c, "JOB", id);
}

int emq_cli_mint_ns(emq_cli *c, const char *ns, char id[EMQ_ID_SIZE])
{
    emq_set_clock(c->db, NULL, NULL);
    int rc = emq_mint(c->db, ns, id);
    if (getenv("EMQLITE_NOW_MS") && getenv("EMQLITE_NOW_MS")[0])
        emq_set_clock(c->db, pinned_clock, NULL);
    return rc;
}

/* Read all of `f` into a malloc'd buffer (NUL-terminated). */
static int read_all(FILE *f, unsigned char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap + 1), *nb;
    if (!buf)
        return -1;
    for (;;) {
        if (n == cap) {
            cap *= 2;
            if (!(nb = realloc(buf, cap + 1))) {
                free(buf);
                return -1;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                free(buf);
                return -1;
            }
            break;
        }
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

/* ------------------------------------------------------------- commands */

static int cmd_enqueue(emq_cli *c, int argc, char **argv)
{
    const char *idopt = NULL, *at = NULL, *in = NULL, *pos[2];
    emq_cli_opt opts[] = { { "--id", 1, &idopt }, { "--at", 1, &at },
                           { "--in", 1, &in }, { NULL, 0, NULL } };
    int npos, rc, ex;
    int64_t when = 0;
    unsigned char *stdin_buf = NULL;
    const void *payload;
    size_t len;
    char id[EMQ_ID_SIZE];
    const char *idp = id;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 2, &npos)) >= 0)
        return ex;
    if (at && in)
        return emq_cli_usage(c, "--at and --in exclude each other");
    if ((at && emq_cli_time(c, "--at", at, &when)) ||
        (in && emq_cli_duration(c, "--in", in, &when)))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c)))
        return ex;
    if (npos == 2 && strcmp(pos[1], "-") != 0) {
        payload = pos[1];
        len = strlen(pos[1]);
    } else {
        if (read_all(stdin, &stdin_buf, &len) < 0)
            return emq_cli_fail(c, EMQ_EIO, "cannot read the payload from stdin");
        payload = stdin_buf;
    }
    if (idopt) {
        snprintf(id, sizeof id, "%s", idopt); /* for printing only */
        idp = idopt; /* passed whole: the library gates its length */
    } else if ((rc = emq_cli_mint(c, id)) != EMQ_OK) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    if (at)
        rc = emq_enqueue_at(c->db, pos[0], idp, payload, len, when);
    else if (in)
        rc = emq_enqueue_in(c->db, pos[0], idp, payload, len, when);
    else
        rc = emq_enqueue(c->db, pos[0], idp, payload, len);
    if (rc == EMQ_ENQUEUED || rc == EMQ_SCHEDULED) {
        ex = emq_cli_ok(c, pos[0], idp,
                       rc == EMQ_ENQUEUED ? "enqueued" : "scheduled", idp);
    } else if (rc == EMQ_DUPLICATE) {
        char note[200];
        snprintf(note, sizeof note, "job %s exists; nothing changed (the "
                 "first payload stands)", idp);
        if (!c->json)
            puts(idp);
        ex = emq_cli_verdict(c, EMQ_EXIT_DUPLICATE, "duplicate", pos[0], idp,
                             note);
    } else {
        ex = emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
    }
done:
    free(stdin_buf);
    return ex;
}

/* One enqueue-many item while the batch is built. */
typedef struct mitem {
    char id[EMQ_ID_SIZE];
    unsigned char *owned; /* a decoded NDJSON payload, or NULL */
} mitem;

static int cmd_enqueue_many(emq_cli *c, int argc, char **argv)
{
    const char *ndjson = NULL, *pos[2];
    emq_cli_opt opts[] = { { "--ndjson", 0, &ndjson }, { NULL, 0, NULL } };
    int npos, rc, ex;
    unsigned char *buf = NULL;
    size_t len = 0, n = 0, cap = 0, line = 0;
    emq_item *items = NULL;
    mitem *mi = NULL;
    int *verdicts = NULL;
    FILE *in = stdin;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 2, &npos)) >= 0)
        return ex;
    if (npos == 2 && strcmp(pos[1], "-") != 0) {
        if (!(in = fopen(pos[1], "rb"))) {
            char msg[600];
            snprintf(msg, sizeof msg, "%s: %s", pos[1], strerror(errno));
            return emq_cli_fail(c, EMQ_ECANTOPEN, msg);
        }
    }
    rc = read_all(in, &buf, &len);
    if (in != stdin)
        fclose(in);
    if (rc < 0)
        return emq_cli_fail(c, EMQ_EIO, "cannot read the input");
    if ((ex = emq_cli_open(c)))
        goto done;

    for (size_t off = 0; off < len;) {
        unsigned char *nl = memchr(buf + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - buf) : len;
        const unsigned char *p = buf + off;
        size_t plen = end - off;
        unsigned char *owned = NULL;
        char idbuf[64] = "", err[128];
        line++;
        off = end + 1;
        if (ndjson) {
            size_t k = 0;
            while (k < plen && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
                k++;
            if (k == plen)
                continue;
            if (emq_cli_ndjson_item((const char *)p, plen, idbuf, sizeof idbuf,
                                    &owned, &plen, err, sizeof err) < 0) {
                ex = emq_cli_usage(c, "line %zu: %s", line, err);
                goto done;
            }
            p = owned;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            emq_item *ni = realloc(items, nc * sizeof *ni);
            if (ni)
                items = ni;
            mitem *nm = ni ? realloc(mi, nc * sizeof *nm) : NULL;
            if (!nm) {
                free(owned);
                ex = emq_cli_fail(c, EMQ_ENOMEM, NULL);
                goto done;
            }
            mi = nm;
            cap = nc;
        }
        mi[n].owned = owned;
        if (idbuf[0]) {
            if (strlen(idbuf) != EMQ_ID_LEN) {
                n++;
                ex = emq_cli_usage(c, "line %zu: \"id\" is not a branded id",
                                   line);
                goto done;
            }
            memcpy(mi[n].id, idbuf, EMQ_ID_SIZE);
        } else if ((rc = emq_cli_mint(c, mi[n].id)) != EMQ_OK) {
            n++;
            ex = emq_cli_fail(c, rc, NULL);
            goto done;
        }
        items[n].payload = p;
        items[n].len = plen;
        n++;
    }
    for (size_t i = 0; i < n; i++)
        items[i].id = mi[i].id; /* mi may have moved while growing */
    if (!(verdicts = calloc(n ? n : 1, sizeof *verdicts))) {
        ex = emq_cli_fail(c, EMQ_ENOMEM, NULL);
        goto done;
    }
    rc = emq_enqueue_many(c->db, pos[0], items, n, verdicts);
    if (rc != EMQ_OK) {
        ex = emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
        goto done;
    }
    size_t ne = 0, nd = 0, nk = 0;
    for (size_t i = 0; i < n; i++) {
        if (verdicts[i] == EMQ_ENQUEUED)
            ne++;
        else if (verdicts[i] == EMQ_DUPLICATE)
            nd++;
        else
            nk++;
    }
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"enqueued\":%zu,\"duplicate\":%zu,\"kind\":%zu,\"items\":[",
               ne, nd, nk);
        for (size_t i = 0; i < n; i++)
            printf("%s{\"id\":\"%s\",\"result\":\"%s\"}", i ? "," : "",
                   mi[i].id, verdicts[i] == EMQ_ENQUEUED ? "enqueued"
                             : verdicts[i] == EMQ_DUPLICATE ? "duplicate"
                             : "kind");
        puts("]}");
    } else {
        printf("enqueued %zu duplicate %zu kind %zu\n", ne, nd, nk);
    }
    ex = EMQ_EXIT_OK;
done:
    for (size_t i = 0; i < n; i++)
        free(mi[i].owned);
    free(mi);
    free(items);
    free(verdicts);
    free(buf);
    return ex;
}

static int cmd_claim(emq_cli *c, int argc, char **argv)
{
    const char *lease_s = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--lease", 1, &lease_s }, { NULL, 0, NULL } };
    int npos, rc, ex;
    int64_t lease = 30000;
    emq_job job;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (lease_s && emq_cli_duration_pos(c, "--lease", lease_s, &lease))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c)))
        return ex;
    memset(&job, 0, sizeof job);
    rc = emq_claim(c->db, pos[0], lease, &job);
    if (rc == EMQ_EMPTY) {
        /* Say which (issue 34 item 9): a second read, after the claim's
         * transaction; a pause or an enqueue in between is possible and
         * harmless (the verdict stays "empty", the note is a hint). */
        emq_stats st;
        int paused = emq_stats_get(c->db, pos[0], &st) == EMQ_OK &&
                     st.paused;
        return emq_cli_verdict(c, EMQ_EXIT_EMPTY, "empty", pos[0], NULL,
                               paused ? "nothing to claim: the queue is "
                                        "paused (emqlite resume QUEUE)"
                                      : "nothing to claim: no pending job");
    }
    if (rc != EMQ_OK)
        return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"id\":\"%s\",\"attempts\":%lld,\"payload\":", job.id,
               (long long)job.attempts);
        if (job.payload)
            emq_cli_json_bytes(stdout, job.payload, job.payload_len);
        else
            fputs("null", stdout);
        puts("}");
    } else {
        printf("%s %lld\n", job.id, (long long)job.attempts);
        if (job.payload)
            fwrite(job.payload, 1, job.payload_len, stdout);
        putchar('\n');
    }
    emq_job_clear(&job);
    return EMQ_EXIT_OK;
}

/* Parse the QUEUE ID TOKEN positionals shared by complete/retry/extend. */
static int token_of(emq_cli *c, const char *s, int64_t *token)
{
    return emq_cli_int(c, "TOKEN", s, token);
}

static int cmd_complete(emq_cli *c, int argc, char **argv)
{
    const char *pos[3];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, rc, ex;
    int64_t token;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 3, 3, &npos)) >= 0)
        return ex;
    if (token_of(c, pos[2], &token))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c)))
        return ex;
    rc = emq_complete(c->db, pos[0], pos[1], token);
    if (rc == EMQ_OK)
        return emq_cli_ok(c, pos[0], pos[1], "ok", "ok");
    if (rc == EMQ_GONE)
        return emq_cli_verdict(c, EMQ_EXIT_GONE, "gone", pos[0], pos[1],
                               "no such job (already completed or never "
                               "enqueued)");
    return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
}

static int cmd_retry(emq_cli *c, int argc, char **argv)
{
    const char *delay_s = NULL, *max_s = NULL, *error = "", *pos[3];
    emq_cli_opt opts[] = { { "--delay", 1, &delay_s }, { "--max", 1, &max_s },
                           { "--error", 1, &error }, { NULL, 0, NULL } };
    int npos, rc, ex;
    int64_t token, delay = 1000, max = 3;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 3, 3, &npos)) >= 0)
        return ex;
    if (token_of(c, pos[2], &token) ||
        (delay_s && emq_cli_duration(c, "--delay", delay_s, &delay)) ||
        (max_s && emq_cli_int(c, "--max", max_s, &max)))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c)))
        return ex;
    rc = emq_retry(c->db, pos[0], pos[1], token, delay, max, error,
                   strlen(error));
    if (rc == EMQ_SCHEDULED)
        return emq_cli_ok(c, pos[0], pos[1], "scheduled", "scheduled");
    if (rc == EMQ_DEAD)
        return emq_cli_ok(c, pos[0], pos[1], "dead", "dead");
    return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
}

static int cmd_extend(emq_cli *c, int argc, char **argv)
{
    const char *lease_s = NULL, *pos[3];
    emq_cli_opt opts[] = { { "--lease", 1, &lease_s }, { NULL, 0, NULL } };
    int npos, rc, ex;
    int64_t token, lease = 30000;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 3, 3, &npos)) >= 0)
        return ex;
    if (token_of(c, pos[2], &token) ||
        (lease_s && emq_cli_duration_pos(c, "--lease", lease_s, &lease)))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c)))
        return ex;
    rc = emq_lock_extend(c->db, pos[0], pos[1], token, lease);
    if (rc == EMQ_OK)
        return emq_cli_ok(c, pos[0], pos[1], "ok", "ok");
    if (rc == EMQ_GONE)
        return emq_cli_verdict(c, EMQ_EXIT_GONE, "gone", pos[0], pos[1],
                               "no such job");
    return emq_cli_fail(c, rc < 0 ? rc : EMQ_EINTERNAL, NULL);
}

/* Print {"queue": q, "<what>": n} or n. */
static int count_result(emq_cli *c, const char *q, const char *what, int64_t n)
{
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, q);
        printf(",\"%s\":%lld}\n", what, (long long)n);
    } else {
        printf("%lld\n", (long long)n);
    }
    return EMQ_EXIT_OK;
}

static int cmd_promote(emq_cli *c, int argc, char **argv)
{
    const char *batch_s = NULL, *pos[1];
    emq_cli_opt opts[] = { { "--batch", 1, &batch_s }, { NULL, 0, NULL } };
    int npos, rc, ex;
    int64_t batch = 100, count = 0;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (batch_s && emq_cli_int(c, "--batch", batch_s, &batch))
        return EMQ_EXIT_USAGE;
    if ((ex = emq_cli_open(c)))
        return ex;
    if ((rc = emq_promote(c->db, pos[0], batch, &count)) < 0)
        return emq_cli_fail(c, rc, NULL);
    return count_result(c, pos[0], "promoted", count);
}

static int cmd_reap(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, rc, ex;
    int64_t count = 0;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)))
        return ex;
    if ((rc = emq_reap(c->db, pos[0], &count)) < 0)
        return emq_cli_fail(c, rc, NULL);
    return count_result(c, pos[0], "reaped", count);
}

static int cmd_browse(emq_cli *c, int argc, char **argv)
{
    const char *n_s = NULL, *pos[1];
    emq_cli_opt opts[] = { { "-n", 1, &n_s }, { NULL, 0, NULL } };
    int npos, rc, ex;
    int64_t n = 10;
    size_t count = 0;
    char (*ids)[EMQ_ID_SIZE];

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if (n_s && emq_cli_int(c, "-n", n_s, &n))
        return EMQ_EXIT_USAGE;
    if (n <= 0 || n > 1000000)
        return emq_cli_fail(c, EMQ_EINVAL, "-n must be between 1 and 1000000");
    if ((ex = emq_cli_open(c)))
        return ex;
    if (!(ids = calloc((size_t)n, sizeof *ids)))
        return emq_cli_fail(c, EMQ_ENOMEM, NULL);
    if ((rc = emq_browse(c->db, pos[0], (size_t)n, ids, &count)) < 0) {
        free(ids);
        return emq_cli_fail(c, rc, NULL);
    }
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        fputs(",\"ids\":[", stdout);
        for (size_t i = 0; i < count; i++)
            printf("%s\"%s\"", i ? "," : "", ids[i]);
        puts("]}");
    } else {
        for (size_t i = 0; i < count; i++)
            puts(ids[i]);
    }
    free(ids);
    return EMQ_EXIT_OK;
}

static int num_width(int64_t v)
{
    char b[32];
    return snprintf(b, sizeof b, "%lld", (long long)v);
}

void emq_cli_stats_table(FILE *f, char **names, const emq_stats *st, size_t n)
{
    static const char *hdr[] = { "QUEUE", "PENDING", "ACTIVE", "SCHEDULED",
                                 "DEAD", "COMPLETED", "FAILED" };
    int w[7];
    for (int k = 0; k < 7; k++)
        w[k] = (int)strlen(hdr[k]);
    for (size_t i = 0; i < n; i++) {
        int64_t v[6] = { st[i].pending, st[i].active, st[i].scheduled,
                         st[i].dead, st[i].completed, st[i].failed };
        if ((int)strlen(names[i]) > w[0])
            w[0] = (int)strlen(names[i]);
        for (int k = 0; k < 6; k++)
            if (num_width(v[k]) > w[k + 1])
                w[k + 1] = num_width(v[k]);
    }
    fprintf(f, "%-*s", w[0], hdr[0]);
    for (int k = 1; k < 7; k++)
        fprintf(f, "  %*s", w[k], hdr[k]);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        int64_t v[6] = { st[i].pending, st[i].active, st[i].scheduled,
                         st[i].dead, st[i].completed, st[i].failed };
        fprintf(f, "%-*s", w[0], names[i]);
        for (int k = 0; k < 6; k++)
            fprintf(f, "  %*lld", w[k + 1], (long long)v[k]);
        fputs(st[i].paused ? "  (paused)\n" : "\n", f);
    }
}

static int cmd_stats(emq_cli *c, int argc, char **argv)
{
    const char **pos = NULL;
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, rc, ex;
    char **names = NULL, **owned = NULL;
    size_t n = 0, nowned = 0;
    emq_stats *st = NULL;

    if (!(pos = calloc((size_t)argc + 1, sizeof *pos)))
        return emq_cli_fail(c, EMQ_ENOMEM, NULL);
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, argc, &npos)) >= 0)
        goto done;
    if ((ex = emq_cli_open(c)))
        goto done;
    if (npos == 0) {
        if ((rc = emq_queues(c->db, &owned, &nowned)) < 0) {
            ex = emq_cli_fail(c, rc, NULL);
            goto done;
        }
        names = owned;
        n = nowned;
    } else {
        names = (char **)pos;
        n = (size_t)npos;
    }
    if (!(st = calloc(n ? n : 1, sizeof *st))) {
        ex = emq_cli_fail(c, EMQ_ENOMEM, NULL);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = emq_stats_get(c->db, names[i], &st[i])) < 0) {
            ex = emq_cli_fail(c, rc, NULL);
            goto done;
        }
    }
    const char *fw = NULL;
    if ((rc = emq_wire(c->db, &fw)) < 0) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    if (c->json) {
        fputs("{\"wire\":", stdout);
        emq_cli_json_str(stdout, fw);
        fputs(",\"queues\":[", stdout);
        emq_cli_json_stats(names, st, n);
        puts("]}");
    } else if (n == 0) {
        puts("no queues in this file");
        printf("wire: %s\n", fw);
    } else {
        emq_cli_stats_table(stdout, names, st, n);
        printf("wire: %s\n", fw);
    }
    ex = EMQ_EXIT_OK;
done:
    if (owned)
        emq_queues_free(owned, nowned);
    free(st);
    free(pos);
    return ex;
}

static int cmd_slot(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, ex;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    unsigned slot = emq_slot(pos[0], strlen(pos[0]));
    if (c->json) {
        fputs("{\"key\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"slot\":%u}\n", slot);
    } else {
        printf("%u\n", slot);
    }
    return EMQ_EXIT_OK;
}

static int cmd_version(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, ex;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 0, &npos)) >= 0)
        return ex;
    /* The file's identity when the file exists (never created here). */
    const char *fw = NULL;
    struct stat sb;
    if (c->db_path[0] && strcmp(c->db_path, ":memory:") != 0 &&
        stat(c->db_path, &sb) == 0 && S_ISREG(sb.st_mode)) {
        emq_options o;
        emq_db *db = NULL;
        emq_options_init(&o);
        o.readonly = 1;
        if (emq_open(c->db_path, &o, &db) == EMQ_OK && emq_wire(db, &fw) != 0)
            fw = NULL;
        emq_close(db);
    }
    if (c->json) {
        fputs("{\"emqlite\":", stdout);
        emq_cli_json_str(stdout, emq_version());
        fputs(",\"wire\":", stdout);
        emq_cli_json_str(stdout, EMQ_WIRE);
        fputs(",\"wires\":[", stdout);
        for (size_t i = 0; emq_wire_table(i); i++) {
            if (i)
                putchar(',');
            emq_cli_json_str(stdout, emq_wire_table(i));
        }
        putchar(']');
        if (fw) {
            fputs(",\"file\":{\"path\":", stdout);
            emq_cli_json_str(stdout, c->db_path);
            fputs(",\"wire\":", stdout);
            emq_cli_json_str(stdout, fw);
            putchar('}');
        }
        fputs(",\"sqlite\":", stdout);
        emq_cli_json_str(stdout, emq_sqlite_version());
        puts("}");
    } else {
        printf("emqlite %s\nwire    %s (new files)", emq_version(), EMQ_WIRE);
        for (size_t i = 1; emq_wire_table(i); i++)
            printf("%s%s", i == 1 ? "; also " : ", ", emq_wire_table(i));
        printf("\n");
        if (fw)
            printf("file    %s speaks %s\n", c->db_path, fw);
        printf("sqlite  %s\n", emq_sqlite_version());
    }
    return EMQ_EXIT_OK;
}

static int pause_resume(emq_cli *c, int argc, char **argv, int pause)
{
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, rc, ex;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)))
        return ex;
    rc = pause ? emq_queue_pause(c->db, pos[0]) : emq_queue_resume(c->db, pos[0]);
    if (rc < 0)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        fputs("{\"queue\":", stdout);
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"paused\":%s}\n", pause ? "true" : "false");
    } else {
        puts("ok");
    }
    return EMQ_EXIT_OK;
}

static int cmd_pause(emq_cli *c, int argc, char **argv)
{
    return pause_resume(c, argc, argv, 1);
}

static int cmd_resume(emq_cli *c, int argc, char **argv)
{
    return pause_resume(c, argc, argv, 0);
}

static int cmd_help(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, ex;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 1, &npos)) >= 0)
        return ex;
    if (npos == 0) {
        print_usage(stdout);
        return EMQ_EXIT_OK;
    }
    const emq_cli_command *cmd = emq_cli_find(pos[0]);
    if (!cmd)
        return emq_cli_usage(c, "unknown command '%s'", pos[0]);
    print_command_help(stdout, cmd);
    return EMQ_EXIT_OK;
}

/* The benchmark program: $EMQLITE_BENCH, bench/emqlite-bench beside this
 * tool or one level up (libtool keeps the real binary in .libs/), then the
 * installed one. Returns 1 and fills `out` when one is executable. */
static int find_bench(char *out, size_t len)
{
    const char *env = getenv("EMQLITE_BENCH");
    if (env && env[0]) {
        snprintf(out, len, "%s", env);
        return access(out, X_OK) == 0;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(out, len, "%s/bench/emqlite-bench", self);
            if (access(out, X_OK) == 0)
                return 1;
            snprintf(out, len, "%s/../bench/emqlite-bench", self);
            if (access(out, X_OK) == 0)
                return 1;
        }
    }
    snprintf(out, len, "%s/emqlite-bench", PKGLIBEXECDIR);
    return access(out, X_OK) == 0;
}

static int cmd_bench(emq_cli *c, int argc, char **argv)
{
    char path[4200];
    int first = 1;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
                     strcmp(argv[1], "-h") == 0)) {
        print_command_help(stdout, emq_cli_find(c->cmd));
        return EMQ_EXIT_OK;
    }
    if (argc > 1 && strcmp(argv[1], "--") == 0)
        first = 2;
    if (!find_bench(path, sizeof path)) {
        char msg[4400];
        snprintf(msg, sizeof msg, "the benchmark is not built (%s): run "
                 "'make bench', or set EMQLITE_BENCH", path);
        fprintf(stderr, "emqlite: %s\n", msg);
        if (c->json) {
            fputs("{\"error\":{\"class\":\"not_built\",\"message\":",
                  stdout);
            emq_cli_json_str(stdout, msg);
            printf("},\"exit\":%d}\n", EMQ_EXIT_NOTBUILT);
        }
        return EMQ_EXIT_NOTBUILT;
    }
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args)
        return EMQ_EXIT_ERROR;
    int k = 0;
    args[k++] = path;
    for (int i = first; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    fflush(stdout);
    execv(path, args);
    fprintf(stderr, "emqlite: cannot run %s: %s\n", path, strerror(errno));
    free(args);
    return EMQ_EXIT_ERROR;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    emq_cli c;
    int i, ex;

    memset(&c, 0, sizeof c);
    c.db_path = getenv("EMQLITE_DB");
    if (!c.db_path || !c.db_path[0])
        c.db_path = DEFAULT_DB;

    /* global options before the command */
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            c.json = 1;
        } else if (strcmp(a, "--db") == 0) {
            if (i + 1 >= argc)
                return emq_cli_usage(&c, "option '--db' needs a value");
            c.db_path = argv[++i];
        } else if (strncmp(a, "--db=", 5) == 0) {
            c.db_path = a + 5;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_usage(stdout);
            return EMQ_EXIT_OK;
        } else if (strcmp(a, "--version") == 0) {
            char *v[] = { "version", NULL };
            c.cmd = "version";
            return cmd_version(&c, 1, v);
        } else if (a[0] == '-' && a[1] != 0) {
            return emq_cli_usage(&c, "unknown option '%s'", a);
        } else {
            break;
        }
    }
    if (i >= argc) {
        print_usage(stderr);
        if (c.json)
            return emq_cli_usage(&c, "no command given");
        return EMQ_EXIT_USAGE;
    }
    const emq_cli_command *cmd = emq_cli_find(argv[i]);
    if (!cmd) {
        emq_cli_usage(&c, "unknown command '%s' (see 'emqlite --help')",
                      argv[i]);
        return EMQ_EXIT_USAGE;
    }
    c.cmd = cmd->name;
    ex = cmd->fn(&c, argc - i, argv + i);
    emq_close(c.db);
    if (fflush(stdout) != 0 && ex == EMQ_EXIT_OK) {
        fprintf(stderr, "emqlite: io: cannot write the output: %s\n",
                strerror(errno));
        ex = EMQ_EXIT_ERROR;
    }
    return ex;
}
