/*
 * cli.h — internals shared by the files of the emqlite command-line tool
 * (cli/cli.c: dispatch, options, errors and the queue commands;
 * cli/cli_json.c: JSON output and NDJSON input; cli/cli_demo.c: the demo;
 * cli/cli_transfer.c: export, import, check, push, pull and verify;
 * cli/cli_ops.c: the operator's commands; cli/cli_time.c: human times;
 * cli/cli_top.c: the live view).
 *
 * Rules: the tool speaks to the library through api/emqlite.h only. Every
 * command writes at most one JSON document to stdout under --json, and every
 * failure goes through emq_cli_fail(), which prints "emqlite: <message>" on
 * stderr and maps the result code to the documented exit status.
 */
#ifndef EMQ_CLI_H
#define EMQ_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "emqlite.h"
#include "emqlite_protocol.h"

/* Exit statuses, fixed and documented in doc/emqlite.1 (EXIT STATUS). */
enum {
    EMQ_EXIT_OK = 0,        /* success                                      */
    EMQ_EXIT_USAGE = 1,     /* bad usage or a refused argument (host gate)  */
    EMQ_EXIT_EMPTY = 2,     /* claim: nothing to claim                      */
    EMQ_EXIT_DUPLICATE = 3, /* enqueue: the id exists, nothing changed      */
    EMQ_EXIT_KIND = 4,      /* EMQKIND: the id is not JOB-namespaced        */
    EMQ_EXIT_STALE = 5,     /* EMQSTALE: token mismatch / job gone (retry)  */
    EMQ_EXIT_GONE = 6,      /* complete, extend, job: no such row           */
    EMQ_EXIT_FENCE = 7,     /* version fence, not an emqlite file, schema   */
    EMQ_EXIT_BUSY = 8,      /* the file stayed locked past the busy timeout */
    EMQ_EXIT_ERROR = 9,     /* I/O, corruption, memory, any other failure   */
    EMQ_EXIT_NOTBUILT = 10, /* not in this build (hiredis, the benchmark)  */
    EMQ_EXIT_DIFFER = 11,   /* check: violations; verify/push: different    */
    EMQ_EXIT_STATE = 12     /* refused by the job's or queue's state:
                               EMQLOCK, EMQSTATE, EMQRATE, nonmonotonic    */
};

/* The state of one invocation. */
typedef struct emq_cli {
    const char *db_path; /* --db, $EMQLITE_DB, or "./emqlite.db"       */
    int json;            /* --json given                                */
    const char *cmd;     /* the command's name                          */
    emq_db *db;          /* opened by emq_cli_open(), closed by main    */
    const char *syn;     /* a subcommand's synopsis (lane, flow), or NULL:
                            emq_cli_parse checks positionals by its names */
    const char *sub;     /* that subcommand's name, for the usage line    */
} emq_cli;

typedef int (*emq_cli_fn)(emq_cli *c, int argc, char **argv);

/* One command: its name, function, argument synopsis and help text. Each
 * file of the tool that adds commands exports one table ending with a
 * NULL name, listed once in cli/cli_groups.def. */
typedef struct emq_cli_command {
    const char *name;
    emq_cli_fn fn;
    const char *synopsis;
    const char *help;
} emq_cli_command;

#define EMQ_CLI_GROUP(G) extern const emq_cli_command emq_cli_##G##_commands[];
#include "cli_groups.def"
#undef EMQ_CLI_GROUP

/* The command named `name` in any group, or NULL. */
const emq_cli_command *emq_cli_find(const char *name);

/* Print a success verdict: `text` as a line, or under --json the document
 * {"queue": q, "id": id, "result": result} (id may be NULL). */
int emq_cli_ok(emq_cli *c, const char *q, const char *id, const char *result,
               const char *text);

/* A verdict that is not a failure but has its own exit status (empty,
 * duplicate, gone): under --json the document {"queue", "id", "result"}
 * (id may be NULL), else "emqlite: <result>: <note>" on stderr. Returns
 * `code`. */
int emq_cli_verdict(emq_cli *c, int code, const char *result, const char *q,
                    const char *id, const char *note);

/* One option a command accepts ("--lease", "-n"). When `takes_value` is 0
 * the option is a flag and *value is set to "1". */
typedef struct emq_cli_opt {
    const char *name;
    int takes_value;
    const char **value;
} emq_cli_opt;

/*
 * Parse a command's arguments (argv[0] is the command name): the options in
 * `opts` (a NULL-named entry ends the list) plus the global --json, --db and
 * --help, anywhere; "--" ends the options. Positionals go to pos[0..maxpos).
 * Positionals are then checked by their names in the synopsis (c->syn, or
 * the command's): QUEUE a queue name, ID and PARENT a branded id, GROUP a
 * lane id; so are the values of --id (an id) and --lane (a lane id). A refusal names the argument,
 * the value and the rule.
 * Returns -1 to proceed, or an exit status (>= 0) to return at once (usage
 * errors are reported; --help prints the command's help: EMQ_EXIT_OK).
 */
int emq_cli_parse(emq_cli *c, int argc, char **argv, const emq_cli_opt *opts,
                  const char **pos, int minpos, int maxpos, int *npos);

/* Print an aligned per-queue table of the four sets and two counters. */
void emq_cli_stats_table(FILE *f, char **names, const emq_stats *st,
                         const int64_t *extra, size_t n);
/* The jobs waiting in the lanes of q and its flow parents awaiting their
 * children (the LANE and AWAITING columns; `extra` above holds the two per
 * queue, or is NULL to leave them out). */
int emq_cli_extra_counts(emq_db *db, const char *q, int64_t *lane,
                         int64_t *awaiting);

/* Report a usage error for the current command; returns EMQ_EXIT_USAGE. */
int emq_cli_usage(emq_cli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parse a decimal int64 option value named `what`; on error reports usage
 * and returns EMQ_EXIT_USAGE, else 0. */
int emq_cli_int(emq_cli *c, const char *what, const char *s, int64_t *out);

/* A duration option value named `what` into *ms (milliseconds: a decimal
 * integer), and an instant into Unix ms (a decimal integer, or UTC
 * YYYY-MM-DDTHH:MM:SS[.mmm]Z); on error report usage and return
 * EMQ_EXIT_USAGE, else 0. Every command parses durations and instants
 * with these two (cli/cli_ops.c). */
int emq_cli_duration(emq_cli *c, const char *what, const char *s,
                     int64_t *ms);
int emq_cli_time(emq_cli *c, const char *what, const char *s, int64_t *ms);
/* A bare number of milliseconds below 1000 (`--in 90`: 90 ms, not 90 s)
 * is accepted with a warning on stderr naming the option and what to
 * write instead (issue 34 item 9; doc/DECISIONS.md). Both calls above and
 * below do it; a command parsing a duration itself calls this. */
void emq_cli_bare_duration(emq_cli *c, const char *what, const char *s,
                           int64_t ms);
/* A duration that must be more than 0 (a lease). */
int emq_cli_duration_pos(emq_cli *c, const char *what, const char *s,
                         int64_t *ms);

/* The rules of queue names and ids, as the messages state them. */
#define EMQ_CLI_QUEUE_RULE "1 to 128 characters of A-Z a-z 0-9 . _ - " \
    "(and not 'emq')"
#define EMQ_CLI_ID_RULE "14 characters: a namespace of 3 capitals, then 11 " \
    "of 0-9 A-Z a-z, e.g. JOB0SWkOLCBtp2"

/* Open the file (once); returns 0 or the exit status of the failure. */
int emq_cli_open(emq_cli *c);

/* Mint a JOB id. Ids are always minted under the wall clock, even when
 * $EMQLITE_NOW_MS pins the transitions' clock, so that two invocations at
 * one pinned instant never mint the same id. */
int emq_cli_mint(emq_cli *c, char id[EMQ_ID_SIZE]);
/* The same in namespace `ns` (3 capitals). */
int emq_cli_mint_ns(emq_cli *c, const char *ns, char id[EMQ_ID_SIZE]);

/* Report the failure `rc` (a negative EMQ_E* code) with the handle's message
 * (or `msg` when not NULL) and return its exit status. */
int emq_cli_fail(emq_cli *c, int rc, const char *msg);

/* The exit status and class name (wire class for wire errors) of `rc`. */
int emq_cli_exit_of(int rc);
const char *emq_cli_class_of(int rc);

/* ------------------------------------------------------------ JSON output */

/* Write `len` bytes as a JSON value: a string when they are valid UTF-8
 * (control bytes as \b \t \n \f \r or \u00xx), else {"b64":"..."}. */
void emq_cli_json_bytes(FILE *f, const void *p, size_t len);
/* A NUL-terminated string as a JSON value (same rule). */
void emq_cli_json_str(FILE *f, const char *s);
/* The per-queue figures of stats, as the members of a JSON array. */
void emq_cli_json_stats(char *const *names, const emq_stats *st,
                        const int64_t *extra, size_t n);
/* A history entry's details as JSON members, each when the entry has it:
 * ,"attempts", ,"delay_ms", ,"run_at" (an instant object {"ms","utc"}
 * when run_at_obj, else milliseconds), ,"error", ,"host" with ,"pid",
 * ,"worker". */
void emq_cli_json_hist_details(FILE *f, const emq_history_entry *e,
                               int run_at_obj);
/* 1 when the bytes are valid UTF-8. */
int emq_cli_utf8_valid(const unsigned char *p, size_t len);
/* Standard base64 (RFC 4648, padded) of `len` bytes to `f`. */
void emq_cli_b64_write(FILE *f, const unsigned char *p, size_t len);

/* Write bytes for a human: printable ASCII and UTF-8 as they are, other
 * bytes as C escapes (\n, \t, \\, \xNN), so one value stays on one line. */
void emq_cli_text_bytes(FILE *f, const void *p, size_t len);

/* ------------------------------------------------------------ NDJSON input */

/*
 * Parse one NDJSON line: a JSON string (the payload), or an object with
 * "payload" (a string or {"b64": "..."}) and optional "id" (a string).
 * On success returns 0, *payload is a malloc'd buffer of *plen bytes (plus a
 * NUL) and id[] holds the id or "" when absent. On failure returns -1 and
 * writes a short reason to err.
 */
int emq_cli_ndjson_item(const char *line, size_t len, char *id, size_t idsize,
                        unsigned char **payload, size_t *plen, char *err,
                        size_t errlen);

/* A cursor over JSON text (cli_json.c's reader, for the flow commands):
 * each call skips nothing but what it reads, returns 0, or -1 with `err`
 * set to a short reason. Strings are decoded into malloc'd buffers
 * (NUL-terminated); a payload is a string or {"b64": "..."}. */
typedef struct emq_cli_jin {
    const unsigned char *p, *end;
    const char *err;
} emq_cli_jin;
void emq_cli_jws(emq_cli_jin *j);
int emq_cli_jstring(emq_cli_jin *j, unsigned char **out, size_t *olen);
int emq_cli_jpayload(emq_cli_jin *j, unsigned char **out, size_t *olen);
int emq_cli_jskip(emq_cli_jin *j);
int emq_cli_jlit(emq_cli_jin *j, const char *lit);

/* ------------------------------------------------- replies (cli_call.c) */

/* Write a wire reply as JSON (maps as objects, errors as {"error": s},
 * refusals as {"refused": s}) or, for a human, as indented lines. */
void emq_cli_reply_json(FILE *f, const emq_reply *r);
void emq_cli_reply_text(FILE *f, const emq_reply *r, int indent);

/* ------------------------------------------------------------------ demo */

int emq_cli_demo(emq_cli *c, int argc, char **argv);
/* list and job (cli_hist.c; in the operator's table, cli_ops.c). */
int emq_cli_list(emq_cli *c, int argc, char **argv);
int emq_cli_job(emq_cli *c, int argc, char **argv);

/* ------------------------------------------- transfers (cli_transfer.c) */

int emq_cli_export(emq_cli *c, int argc, char **argv);
int emq_cli_import(emq_cli *c, int argc, char **argv);
int emq_cli_push(emq_cli *c, int argc, char **argv);
int emq_cli_pull(emq_cli *c, int argc, char **argv);
int emq_cli_verify(emq_cli *c, int argc, char **argv);
int emq_cli_wire(emq_cli *c, int argc, char **argv);
int emq_cli_check(emq_cli *c, int argc, char **argv);

#endif /* EMQ_CLI_H */
