/*
 * test_registry.c — suite "registry": every registered verb (engine/
 * verbs.def, iterated with emq_verb_at) has its coverage, or a written
 * reason in this file's table for that kind of coverage:
 *   golden  a step of tests/fixtures/tier*.jsonl runs it (its `verb`, or
 *           the `seq.verb` of a multi-part step);
 *   lua     a line of tests/lua/verbs.txt maps it to a script of the bundle
 *           (which exists) or a host handler;
 *   model   the in-memory model has it (tests/model_verbs.def) with the same
 *           argument names in the same shape, or states why not
 *           (model_unmodelled);
 *   faults  a scenario of the fault and allocation sweeps names it, or
 *           no_sweep there gives the reason (tests/test_faults.c);
 *   cli     `emqlite call VERB --help` answers the verb's generated help,
 *           naming every argument.
 * Each missing coverage is printed as one line naming the verb and what it
 * lacks; a reason naming a verb the registry does not have is stale and
 * fails too. A verb registered without its coverage fails here until the
 * coverage (or a reason) is added: that is the point.
 *
 * The fixtures and tests/lua are found under $srcdir (set by make check),
 * else next to this file; the tool is $EMQLITE, else ./emqlite (make check
 * runs from the build directory).
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "model.h"
#include "suites.h"

/* tests/test_faults.c */
int faults_sweep_row(const char *verb, const char **why);

typedef struct reason {
    const char *verb, *why;
} reason;

/* ---------------------------------------------------------- the reasons */

/* Registered verbs without a golden case. */
/* Tier 0 rows are emqlite's reads and loops beyond the wire (PROTOCOL.md
 * §1 rule 4: L4 is free): the reference has no such verb, so no trace step
 * and no server script can exist for them. They are proven instead by
 * their own suites (test_operator, ...) and by the model test, which every
 * tier-0 row must still have. */
static int beyond_the_wire(const char *v)
{
    const emq_verb_info *vi = emq_verb_find(v);
    return vi != NULL && vi->tier == 0;
}

static const reason golden_reasons[] = {
    {"retry_tx", "retry's first transaction alone: the traces record a "
     "retry followed by RECURSE-SQ's reemit as the parts retry, reemit, and "
     "the replayer runs that part through this row (tests/golden_emq.c)"},
    {"enqueue_many", "T1.2 is emqlite's batch of T1.1 admissions; the "
     "reference's host sends each item as its own enqueue, so the traces "
     "hold enqueue steps only (test_engine and the model cover the batch)"},
    {NULL, NULL},
};

/* Registered verbs the Lua bundle does not run. */
static const reason lua_reasons[] = {
    {"add_bulk", "T4.6 is a host loop over flow adds; the bundle runs its "
     "parts (hold_parent, flow_child, set_policy, enqueue_flow) step by "
     "step, each a script or host write"},
    {"deliver_flow_completions", "T4.10 is host-orchestrated in the "
     "reference (outbox_read, flow_deliver / flow_fail_deliver, reemit, "
     "outbox_trim), each a part the bundle runs"},
    {"retry_tx", "the retry part of a retry seq, which the bundle runs as "
     "retry.lua (RECURSE-SQ is its separate reemit part)"},
    {"lock_track", "T5.12 track gives the lock field a TTL (HPEXPIRE, Valkey "
     ">= 9.0); the bundle's server (redis-server 7.0) has no hash-field "
     "expiry. The bundle runs its parts lock_key_set and lock_field_set, as "
     "the traces recorded them on Valkey 8.0"},
    {"lock_beat", "T5.12 beat refreshes the lock field's TTL (HPEXPIRE, "
     "Valkey >= 9.0), which the bundle's server has not; the bundle runs "
     "its parts extend_locks and lock_key_refresh"},
    {"append_batch", "T5.2 / D-15 is a host loop minting one id per record; "
     "the traces record its parts as append_id steps, each a host XADD the "
     "bundle runs (host:append_id)"},
    {NULL, NULL},
};

/* Registered verbs the model lacks are explained by the model itself
 * (model_unmodelled in tests/model.c), next to its table. */

/* ------------------------------------------------------------- helpers */

static void top(char *out, size_t cap)
{
    const char *s = getenv("srcdir");
    char *t;
    size_t n;
    if (s && s[0]) {
        snprintf(out, cap, "%s", s);
        return;
    }
    snprintf(out, cap, "%s", __FILE__);
    t = strstr(out, "tests/test_registry.c");
    if (t) *t = 0;
    if (out[0] == 0 || t == NULL) snprintf(out, cap, ".");
    n = strlen(out);
    if (n > 1 && out[n - 1] == '/') out[n - 1] = 0;
}

static const char *reason_of(const reason *t, const char *verb)
{
    for (; t->verb; t++)
        if (strcmp(t->verb, verb) == 0) return t->why;
    return NULL;
}

/* A reason for a verb the registry does not have is stale. */
static size_t stale(const reason *t, const char *table)
{
    size_t n = 0;
    for (; t->verb; t++)
        if (!emq_verb_find(t->verb)) {
            fprintf(stderr, "registry: %s names %s, which is not "
                    "registered\n", table, t->verb);
            n++;
        }
    return n;
}

/* A set of names (small: linear). */
typedef struct names {
    char **v;
    size_t n;
} names;

static int names_has(const names *s, const char *x)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0) return 1;
    return 0;
}

static void names_add(names *s, const char *p, size_t n)
{
    char *x = malloc(n + 1);
    ck_assert_ptr_nonnull(x);
    memcpy(x, p, n);
    x[n] = 0;
    if (names_has(s, x)) {
        free(x);
        return;
    }
    s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
    ck_assert_ptr_nonnull(s->v);
    s->v[s->n++] = x;
}

static void names_free(names *s)
{
    size_t i;
    for (i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Every `"verb": "X"` of a trace file (a step's verb and its seq.verb; a
 * quote inside a JSON string is escaped, so the pattern is never data). */
static void trace_verbs(const char *path, names *out)
{
    static const char pat[] = "\"verb\":";
    FILE *f = fopen(path, "rb");
    char *buf, *p;
    long len;
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = 0;
    fclose(f);
    for (p = strstr(buf, pat); p; p = strstr(p, pat)) {
        char *e;
        p += sizeof pat - 1;
        while (*p == ' ') p++;
        if (*p++ != '"' || (e = strchr(p, '"')) == NULL) continue;
        names_add(out, p, (size_t)(e - p));
        p = e;
    }
    free(buf);
}

/* -------------------------------------------------------------- golden */

/* Every verb a step (or a seq) of tests/fixtures/tier*.jsonl runs, into
 * `seen`; returns the number of files read. */
static size_t fixture_verbs(names *seen)
{
    char root[800], dir[900], path[1200];
    size_t files = 0;
    DIR *d;
    struct dirent *e;
    top(root, sizeof root);
    snprintf(dir, sizeof dir, "%s/tests/fixtures", root);
    d = opendir(dir);
    ck_assert_msg(d != NULL, "no fixtures in %s", dir);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "tier", 4) != 0 || n < 6 ||
            strcmp(e->d_name + n - 6, ".jsonl") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        trace_verbs(path, seen);
        files++;
    }
    closedir(d);
    return files;
}

START_TEST(every_verb_has_a_golden_case)
{
    names seen = {NULL, 0};
    size_t i, missing = 0, files = fixture_verbs(&seen);
    ck_assert_msg(files > 0, "no tier*.jsonl in tests/fixtures");
    for (i = 0; i < emq_verb_count(); i++) {
        const char *v = emq_verb_at(i)->name;
        if (names_has(&seen, v) || reason_of(golden_reasons, v) ||
            beyond_the_wire(v))
            continue;
        fprintf(stderr, "registry: verb %s has no golden case (no step of "
                "tests/fixtures/tier*.jsonl runs it) and no reason in "
                "golden_reasons\n", v);
        missing++;
    }
    missing += stale(golden_reasons, "golden_reasons");
    names_free(&seen);
    ck_assert_msg(missing == 0, "%zu golden coverage problems (listed "
                  "above)", missing);
}
END_TEST

/* ----------------------------------------------------------------- lua */

START_TEST(every_verb_has_a_lua_script)
{
    char root[800], path[1000], line[512];
    names mapped = {NULL, 0}, traced = {NULL, 0};
    size_t i, missing = 0;
    FILE *f;
    top(root, sizeof root);
    fixture_verbs(&traced);
    snprintf(path, sizeof path, "%s/tests/lua/verbs.txt", root);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    while (fgets(line, sizeof line, f)) {
        char verb[128], how[256];
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "%127s %255s", verb, how) != 2) {
            fprintf(stderr, "registry: tests/lua/verbs.txt: malformed line "
                    "\"%s\"\n", line);
            missing++;
            continue;
        }
        /* The bundle may run a verb of the traces before the engine
         * registers it; a name found nowhere is a mistake. */
        if (!emq_verb_find(verb) && !names_has(&traced, verb)) {
            fprintf(stderr, "registry: tests/lua/verbs.txt maps %s, which "
                    "is neither registered nor run by a trace\n", verb);
            missing++;
        }
        if (strncmp(how, "host:", 5) != 0) {
            char script[1100];
            FILE *s;
            snprintf(script, sizeof script, "%s/tests/lua/%s", root, how);
            if ((s = fopen(script, "r")) == NULL) {
                fprintf(stderr, "registry: tests/lua/verbs.txt maps %s to "
                        "%s, which is not in tests/lua\n", verb, how);
                missing++;
            } else {
                fclose(s);
            }
        }
        names_add(&mapped, verb, strlen(verb));
    }
    fclose(f);
    for (i = 0; i < emq_verb_count(); i++) {
        const char *v = emq_verb_at(i)->name;
        if (names_has(&mapped, v) || reason_of(lua_reasons, v) ||
            beyond_the_wire(v))
            continue;
        fprintf(stderr, "registry: verb %s has no Lua script (no line in "
                "tests/lua/verbs.txt) and no reason in lua_reasons\n", v);
        missing++;
    }
    missing += stale(lua_reasons, "lua_reasons");
    names_free(&mapped);
    names_free(&traced);
    ck_assert_msg(missing == 0, "%zu Lua coverage problems (listed above)",
                  missing);
}
END_TEST

/* --------------------------------------------------------------- model */

/* The model binds a caller's arguments by name: the registry's row and
 * the model's name the same arguments, each fixed or in the repeated tail
 * on both sides. 0, or 1 with the difference printed. */
static int binds(const emq_verb_info *v, const model_verb *mv)
{
    size_t k, j;
    if (mv->nargs != v->nargs) {
        fprintf(stderr, "registry: verb %s: the registry has %zu "
                "arguments, the model %zu\n", v->name, v->nargs, mv->nargs);
        return 1;
    }
    for (k = 0; k < v->nargs; k++) {
        int found = 0;
        for (j = 0; j < mv->nargs && !found; j++)
            found = strcmp(mv->args[j].name, v->args[k].name) == 0 &&
                    (mv->args[j].flags & EMQ_ARGF_REST) ==
                        (v->args[k].flags & EMQ_ARGF_REST);
        if (!found) {
            fprintf(stderr, "registry: verb %s: the model has no argument "
                    "%s in that shape\n", v->name, v->args[k].name);
            return 1;
        }
    }
    return 0;
}

START_TEST(every_verb_has_a_model_entry)
{
    size_t i, missing = 0;
    for (i = 0; i < emq_verb_count(); i++) {
        const emq_verb_info *v = emq_verb_at(i);
        const model_verb *mv = model_verb_find(v->name);
        if (mv) {
            missing += (size_t)binds(v, mv);
            continue;
        }
        if (model_unmodelled(v->name)) continue;
        fprintf(stderr, "registry: verb %s has no model entry "
                "(tests/model_verbs.def) and no reason in the model's "
                "unmodelled table\n", v->name);
        missing++;
    }
    ck_assert_msg(missing == 0, "%zu model coverage problems (listed "
                  "above)", missing);
}
END_TEST

/* -------------------------------------------------------------- faults */

START_TEST(every_verb_has_a_fault_sweep_row)
{
    size_t i, missing = 0;
    const char *why = NULL;
    for (i = 0; i < emq_verb_count(); i++) {
        const char *v = emq_verb_at(i)->name;
        int r = faults_sweep_row(v, &why);
        ck_assert_msg(r >= 0, "a fault scenario names %s, which is not "
                      "registered", why);
        if (r > 0) continue;
        fprintf(stderr, "registry: verb %s has no fault-sweep row "
                "(tests/test_faults.c scens) and no reason in no_sweep\n",
                v);
        missing++;
    }
    ck_assert_msg(missing == 0, "%zu fault-sweep coverage problems (listed "
                  "above)", missing);
}
END_TEST

/* ----------------------------------------------------------------- cli */

START_TEST(every_verb_has_a_cli_path)
{
    const char *tool = getenv("EMQLITE");
    size_t i, k, missing = 0;
    char cmd[600], out[8192];
    if (!tool || !tool[0]) tool = "./emqlite";
    for (i = 0; i < emq_verb_count(); i++) {
        const emq_verb_info *v = emq_verb_at(i);
        size_t n;
        int st;
        FILE *p;
        char usage[200];
        snprintf(cmd, sizeof cmd, "'%s' call '%s' --help 2>&1", tool,
                 v->name);
        p = popen(cmd, "r");
        ck_assert_msg(p != NULL, "cannot run %s", cmd);
        n = fread(out, 1, sizeof out - 1, p);
        out[n] = 0;
        st = pclose(p);
        snprintf(usage, sizeof usage, "usage: emqlite [--db PATH] [--json] "
                 "call %s ", v->name);
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
            strstr(out, usage) == NULL) {
            fprintf(stderr, "registry: verb %s has no CLI path: '%s call %s "
                    "--help' exited %d and said: %.200s\n", v->name, tool,
                    v->name, WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
            missing++;
            continue;
        }
        for (k = 0; k < v->nargs; k++)
            if (strstr(out, v->args[k].name) == NULL) {
                fprintf(stderr, "registry: verb %s: its CLI help does not "
                        "name the argument %s\n", v->name, v->args[k].name);
                missing++;
            }
    }
    ck_assert_msg(missing == 0, "%zu CLI coverage problems (listed above)",
                  missing);
}
END_TEST

/* ----------------------------------------------------------- the table */

/* Registry ids are positions: stable, dense, unique by name. */
START_TEST(registry_ids_are_positions_and_names_are_unique)
{
    size_t i, j;
    for (i = 0; i < emq_verb_count(); i++) {
        const emq_verb_info *v = emq_verb_at(i);
        ck_assert_int_eq(v->id, (int)i);
        ck_assert_ptr_eq(emq_verb_find(v->name), v);
        for (j = 0; j < i; j++)
            ck_assert_str_ne(emq_verb_at(j)->name, v->name);
    }
    ck_assert_ptr_null(emq_verb_at(emq_verb_count()));
}
END_TEST

Suite *suite_registry(void)
{
    Suite *s = suite_create("registry");
    TCase *t = tcase_create("coverage");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, registry_ids_are_positions_and_names_are_unique);
    tcase_add_test(t, every_verb_has_a_golden_case);
    tcase_add_test(t, every_verb_has_a_lua_script);
    tcase_add_test(t, every_verb_has_a_model_entry);
    tcase_add_test(t, every_verb_has_a_fault_sweep_row);
    tcase_add_test(t, every_verb_has_a_cli_path);
    suite_add_tcase(s, t);
    return s;
}
