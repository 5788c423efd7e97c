/*
 * golden.h — the golden-trace model and the replay driver.
 *
 * Owns: reading a trace file (.jsonl, one step a line) into cases, decoding
 * its byte strings (a JSON string, or {"b64": "..."}), evaluating symbolic
 * times ({"now_plus": k, "at_step": s} = now of step s of the same case + k),
 * comparing a reply and a keyspace with what an executor produced, and
 * driving an executor through a case. It knows nothing of emqlite: an
 * executor (emqlite in-process, a Valkey server, ...) is a struct of function
 * pointers, so every executor shares the model and the comparison.
 *
 * Values. After loading, a step's `args`, `reply`, `published` and `seq` hold
 * plain values: every {"b64": s} is replaced by the string it encodes and
 * every symbolic time by its integer. Its `keyspace` is an object
 * key -> {"type": T, "value": V[, "expire_at": ms]} with the same decoding,
 * checked against the type: hash V is an object field -> string, zset V an
 * array of [member, score], list and set V arrays of strings, string V a
 * string, stream V kept as given (decoded). Executors produce replies and
 * keyspaces in exactly this shape (strings are raw bytes, scores numbers);
 * the builders below help.
 */
#ifndef EMQ_TEST_GOLDEN_H
#define EMQ_TEST_GOLDEN_H

#include <stddef.h>
#include <stdint.h>
#include "json.h"

/* ------------------------------------------------------------ the model */

typedef struct emq_golden_step {
    emq_json *line;        /* the parsed line; owns everything below        */
    size_t lineno;         /* 1-based line in the file                      */
    int64_t step;          /* 1-based within the case                       */
    const char *verb;      /* NUL-terminated                                */
    int64_t now;           /* the virtual clock for this step (Unix ms)     */
    emq_json *args;        /* object                                        */
    emq_json *reply;       /* the expected reply                            */
    emq_json *keyspace;    /* the expected keyspace after the step          */
    emq_json *published;   /* update_progress only, else NULL               */
    emq_json *seq;         /* tier 4/5 multi-part verbs, else NULL          */
    int host;              /* "host": true                                  */
} emq_golden_step;

typedef struct emq_golden_case {
    char *name;
    emq_golden_step *steps;
    size_t n, cap;
} emq_golden_case;

typedef struct emq_golden_file emq_golden_file;

/** Read the whole file at `path`. Returns 0, or -1 with `err` filled. */
int emq_golden_open(const char *path, emq_golden_file **out, char *err,
                    size_t errlen);
/** As emq_golden_open over a copy of `buf[0..len)`; `name` names it in
 *  messages. */
int emq_golden_open_mem(const char *name, const char *buf, size_t len,
                        emq_golden_file **out, char *err, size_t errlen);
void emq_golden_close(emq_golden_file *f);

/**
 * Parse the next case: every line up to the next case name, each checked
 * (fields present and typed, steps numbered 1.. in order, a case never
 * resumed later in the file) and decoded as described above.
 * Returns 1 with `*out` set (free with emq_golden_case_free), 0 at the end of
 * the file, or -1 with `err` filled (the file position then stays at the bad
 * line: further calls keep failing).
 */
int emq_golden_next_case(emq_golden_file *f, emq_golden_case **out,
                         char *err, size_t errlen);
void emq_golden_case_free(emq_golden_case *c);

/* ---------------------------------------------------- decoding helpers */

/**
 * Decode one trace byte string in place: a string stays, {"b64": s} becomes
 * the string s encodes. Returns 0, or -1 (not a byte string / bad base64 /
 * out of memory) with `err` filled.
 */
int emq_golden_decode_bytes(emq_json *v, char *err, size_t errlen);

/** The `name` member of step `s`'s args, typed. Each returns 0, or -1 when
 *  absent or of another type. Strings may contain NUL (see len). */
int emq_golden_arg_str(const emq_golden_step *s, const char *name,
                       const char **p, size_t *len);
int emq_golden_arg_int(const emq_golden_step *s, const char *name,
                       int64_t *v);
emq_json *emq_golden_arg(const emq_golden_step *s, const char *name);

/* ------------------------------------------------------------ builders */

/** A score as the comparison wants it: an integer when the double is one
 *  (and fits int64), else a float. NULL when out of memory. */
emq_json *emq_golden_score(double score);
/** Add `key` of type `type` ("hash", "zset", ...) with `value` (ownership
 *  passes, also on failure) and expiry `expire_at` (< 0: none) to the
 *  keyspace object `ks`. Returns 0 or -1 (out of memory). */
int emq_golden_ks_add(emq_json *ks, const void *key, size_t klen,
                      const char *type, emq_json *value, int64_t expire_at);
/** {"error": msg} (NULL when out of memory). */
emq_json *emq_golden_error_reply(const void *msg, size_t len);

/* ---------------------------------------------------------- comparison */

/**
 * Compare an expected reply with an actual one (numbers by value). Returns 0
 * when equal, else 1 with a description appended to `msg`.
 */
int emq_golden_reply_diff(const emq_json *expected, const emq_json *actual,
                          emq_json_buf *msg);
/**
 * Compare two keyspaces (both in the shape above) key by key in bytewise key
 * order. Hash fields and set elements compare as sets, zset and list
 * elements in order, scores and expiries numerically. Returns 0 when equal,
 * else 1 with the first difference appended to `msg` (which key, and what).
 */
int emq_golden_keyspace_diff(const emq_json *expected, const emq_json *actual,
                             emq_json_buf *msg);

/**
 * A published value against the trace's (README "Reproducing a case"):
 * [channel, message] pairs match when the channels are equal and the
 * messages hold the same `"name":"value"` members, each byte for byte, in
 * any order; anything else compares as JSON. 1 when equal.
 */
int emq_golden_published_equal(const emq_json *want, const emq_json *got);

/* ------------------------------------------------------------ executors */

/** What one step produced. `published` is compared only when the executor
 *  sets `has_published`. */
typedef struct emq_golden_result {
    emq_json *reply;
    emq_json *published;
    int has_published;
} emq_golden_result;

/**
 * An executor. Every callback gets `ctx`. Callbacks return 0 on success or
 * -1 with a message appended to `err` (an unsupported verb, a broken
 * connection): the case then fails with that message.
 *   case_begin    start an empty keyspace for case `c`;
 *   set_clock     the virtual clock for the next step (Unix ms);
 *   run_step      run `s`, filling `res` (reply required; caller frees);
 *   dump_keyspace the whole keyspace in the shape above, without
 *                 `{emq}:version` (caller frees);
 *   case_end      release what case_begin made (called after every
 *                 successful case_begin).
 */
typedef struct emq_golden_exec {
    const char *name;
    void *ctx;
    int (*case_begin)(void *ctx, const emq_golden_case *c, emq_json_buf *err);
    void (*set_clock)(void *ctx, int64_t now_ms);
    int (*run_step)(void *ctx, const emq_golden_step *s,
                    emq_golden_result *res, emq_json_buf *err);
    int (*dump_keyspace)(void *ctx, emq_json **ks, emq_json_buf *err);
    void (*case_end)(void *ctx);
} emq_golden_exec;

/**
 * What an executor may add (every member optional, NULL: never; each gets
 * the executor's ctx):
 *   whole     1 when the executor runs the multi-part verb `seq_verb` as one
 *             verb: at a step with seq part 1 it gets a step whose verb and
 *             args are seq.verb and seq.args, whose reply is the last
 *             part's seq.reply and whose keyspace the last part's; the parts
 *             in between are not run;
 *   case_skip a sentence why case `c` cannot run on this executor (the case
 *             is reported as SKIP and counted apart), or NULL.
 */
typedef struct emq_golden_opts {
    int (*whole)(void *ctx, const char *seq_verb);
    const char *(*case_skip)(void *ctx, const emq_golden_case *c);
} emq_golden_opts;

/** The outcome of one case. */
typedef struct emq_golden_outcome {
    int passed;
    int64_t step;         /* the failing step, 0 when passed / before any  */
    const char *verb;     /* its verb (points into the case)               */
    emq_json_buf msg;     /* what differed; free with emq_json_buf_free    */
} emq_golden_outcome;

/**
 * Run every step of `c` on `ex`: set the clock to the step's `now`, run it,
 * compare its reply, its published message and the keyspace after it, and
 * stop at the first difference. Returns 0 when the case passed, 1 on a
 * mismatch, -1 when the executor failed; `out` says which step and what.
 */
int emq_golden_run_case(const emq_golden_exec *ex, const emq_golden_case *c,
                        emq_golden_outcome *out);
/** As emq_golden_run_case, with the executor's options (may be NULL). */
int emq_golden_run_case_opts(const emq_golden_exec *ex,
                             const emq_golden_opts *opts,
                             const emq_golden_case *c,
                             emq_golden_outcome *out);

/**
 * The whole replay program, shared by every executor's main():
 *   PROG [--quiet] [--parse-only] [--case NAME] [--stop] [--whole] FILE...
 * replays every case of each file on `ex` and prints one line per case,
 * "PASS <case>" (not with --quiet) or "FAIL <case>: step N (<verb>): what
 * differed" (or "SKIP <case>: why" for a case the executor's case_skip
 * refuses), then exactly "N passed, N failed" (", N skipped" appended when
 * a case was skipped). --parse-only loads and
 * decodes every step without running anything (`ex` may be NULL); --case
 * runs only the cases of that name; --stop ends at the first failure;
 * --whole replays multi-part verbs whole (the executor's choice of verbs,
 * else every one).
 * Returns the exit status: 0 when every case passed, 1 when one failed, 2 on
 * a usage or load error.
 */
int emq_golden_main(int argc, char **argv, const emq_golden_exec *ex);
/** As emq_golden_main, with the executor's options (may be NULL). */
int emq_golden_main_opts(int argc, char **argv, const emq_golden_exec *ex,
                         const emq_golden_opts *opts);

#endif /* EMQ_TEST_GOLDEN_H */
