/*
 * golden_replay.c — replay golden traces against emqlite.
 *
 *   tests/golden_replay [--quiet] [--parse-only] [--case NAME] [--stop] FILE...
 *   tests/golden_replay --isolated [--tier N] [--quiet] FILE...
 *   tests/golden_replay --borrow-streams [replay options] FILE...
 *
 * Every case of every file runs on a fresh in-memory emqlite handle (see
 * golden_emq.c); the program prints PASS or the first mismatch per case and
 * ends with "N passed, N failed" (see emq_golden_main in golden.h).
 *
 * --isolated replays steps alone: each step whose verb is a registry row
 * (of tier N only, with --tier) starts from a handle loaded with the
 * keyspace the trace recorded before it, runs at its `now`, and its reply,
 * published message and keyspace are compared with the trace. This checks
 * verbs against traces whose other verbs emqlite may not run yet (a Tier 2
 * verb's lane and repeat paths in tier3.jsonl and tier5.jsonl). Skipped:
 * raw and advance steps, verbs outside the registry, parts of multi-part
 * verbs (`seq`), and steps starting from a stream. Ends with "isolated: N
 * steps passed, N failed, N skipped".
 *
 * --borrow-streams replays whole cases that use stream verbs (T5.1-T5.7)
 * while emqlite's registry has none: a step of such a verb answers the
 * trace's reply, the stream keys of the trace's keyspace after it stand in
 * the dump, and a record id its host minted moves the case's mint cell
 * (emq_golden_emq_observe). Streams touch only stream keys, so every other
 * step and key is emqlite's own. Multi-part stream verbs run part by part;
 * with --whole every other multi-part verb runs whole but a sweep in a case
 * with streams (b_whole). Ends with "N borrowed stream steps".
 */
#include "golden.h"
#include "golden_emq.h"
#include "emqlite.h"
#include "emqlite_protocol.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when step s is replayed alone (see above). */
static int wanted(const emq_golden_step *s, int tier)
{
    const emq_verb_info *v = emq_verb_find(s->verb);
    return v && !s->seq && (tier < 0 || v->tier == tier);
}

/* One isolated step: 0 passed, 1 failed (msg says why), 2 skipped. */
static int one_step(emq_golden_exec *ex, const emq_golden_case *c, size_t k,
                    emq_json_buf *msg)
{
    const emq_golden_step *s = &c->steps[k];
    emq_golden_result res;
    emq_json *ks = NULL;
    int rc = 1, r;
    memset(&res, 0, sizeof res);
    if (ex->case_begin(ex->ctx, c, msg) != 0) return 1;
    ex->set_clock(ex->ctx, k > 0 ? c->steps[k - 1].now : s->now);
    r = k > 0 ? emq_golden_emq_load(ex, c->steps[k - 1].keyspace, msg) : 0;
    if (r != 0) {
        ex->case_end(ex->ctx);
        return r > 0 ? 2 : 1;
    }
    ex->set_clock(ex->ctx, s->now);
    if (ex->run_step(ex->ctx, s, &res, msg) != 0 || !res.reply)
        goto done;
    if (emq_golden_reply_diff(s->reply, res.reply, msg)) goto done;
    if (res.has_published) {
        emq_json null_v;
        memset(&null_v, 0, sizeof null_v);
        if (!res.published ||
            !emq_golden_published_equal(s->published ? s->published : &null_v,
                                        res.published)) {
            emq_json_buf_puts(msg, "published differs", 17);
            goto done;
        }
    }
    if (ex->dump_keyspace(ex->ctx, &ks, msg) != 0 || !ks) goto done;
    if (emq_golden_keyspace_diff(s->keyspace, ks, msg)) goto done;
    rc = 0;
done:
    emq_json_free(ks);
    emq_json_free(res.reply);
    emq_json_free(res.published);
    ex->case_end(ex->ctx);
    return rc;
}

static int isolated_main(emq_golden_exec *ex, int argc, char **argv)
{
    long passed = 0, failed = 0, skipped = 0;
    int quiet = 0, tier = -1, load_error = 0, i;
    for (i = 2; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else if (strcmp(argv[i], "--tier") == 0 && i + 1 < argc)
            tier = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s --isolated [--tier N] [--quiet] "
                    "FILE...\n", argv[0]);
            return 2;
        }
    }
    for (; i < argc; i++) {
        emq_golden_file *f;
        emq_golden_case *c;
        char err[600];
        int rc;
        if (emq_golden_open(argv[i], &f, err, sizeof err) != 0) {
            fprintf(stderr, "ERROR %s\n", err);
            load_error = 1;
            continue;
        }
        while ((rc = emq_golden_next_case(f, &c, err, sizeof err)) == 1) {
            for (size_t k = 0; k < c->n; k++) {
                emq_json_buf msg = {0};
                int r = wanted(&c->steps[k], tier) ? one_step(ex, c, k, &msg)
                                                   : 2;
                if (r == 2) {
                    skipped++;
                } else if (r == 1) {
                    failed++;
                    printf("FAIL %s: step %" PRId64 " (%s): %s\n", c->name,
                           c->steps[k].step, c->steps[k].verb,
                           msg.p ? msg.p : "");
                } else {
                    passed++;
                    if (!quiet)
                        printf("PASS %s step %" PRId64 " (%s)\n", c->name,
                               c->steps[k].step, c->steps[k].verb);
                }
                emq_json_buf_free(&msg);
            }
            emq_golden_case_free(c);
        }
        if (rc < 0) {
            fprintf(stderr, "ERROR %s\n", err);
            load_error = 1;
        }
        emq_golden_close(f);
    }
    printf("isolated: %ld steps passed, %ld failed, %ld skipped\n", passed,
           failed, skipped);
    return load_error ? 2 : failed ? 1 : 0;
}

/* ----------------------------------------------------- borrowed streams */

/* The stream verbs of T5.1-T5.7 as the traces name them. */
static int stream_verb(const char *v)
{
    static const char *const names[] = {
        "append", "append_id", "append_batch", "stream_add", "stream_range",
        "read", "read_window", "read_since", "trim", "put_archived",
        "get_archived", "clear_archived", "group_create", "group_read", "ack",
        "autoclaim", "pending_range", NULL};
    for (size_t i = 0; names[i]; i++)
        if (strcmp(names[i], v) == 0) return 1;
    return 0;
}

typedef struct borrow {
    emq_golden_exec *in;
    const emq_golden_step *last;
    long borrowed;
    int streams;     /* the case has a stream step */
} borrow;

static int b_begin(void *ctx, const emq_golden_case *c, emq_json_buf *err)
{
    borrow *b = ctx;
    b->last = NULL;
    b->streams = 0;
    for (size_t k = 0; k < c->n; k++)
        b->streams |= stream_verb(c->steps[k].verb);
    return b->in->case_begin(b->in->ctx, c, err);
}

static void b_clock(void *ctx, int64_t now)
{
    borrow *b = ctx;
    b->in->set_clock(b->in->ctx, now);
}

static int b_step(void *ctx, const emq_golden_step *s, emq_golden_result *res,
                  emq_json_buf *err)
{
    borrow *b = ctx;
    b->last = s;
    if (stream_verb(s->verb) && !emq_verb_find(s->verb)) {
        const emq_json *id = emq_golden_arg(s, "id");
        if (id && id->type == EMQ_JSON_STRING)
            emq_golden_emq_observe(b->in, id->s, id->len);
        b->borrowed++;
        res->reply = emq_json_dup(s->reply);
        return res->reply ? 0 : -1;
    }
    return b->in->run_step(b->in->ctx, s, res, err);
}

/* 1 when `key` is a stream's (B.stream:<name> or its :archived cache). */
static int stream_key(const char *key, size_t n)
{
    const char *e = memchr(key, '}', n);
    return e && (size_t)(e - key) + 9 <= n && memcmp(e, "}:stream:", 9) == 0;
}

static int b_dump(void *ctx, emq_json **ks, emq_json_buf *err)
{
    borrow *b = ctx;
    const emq_json *want = b->last ? b->last->keyspace : NULL;
    if (b->in->dump_keyspace(b->in->ctx, ks, err) != 0) return -1;
    for (size_t k = 0; want && *ks && k < want->n; k++) {
        const emq_json_member *e = &want->members[k];
        if (stream_key(e->key, e->klen) && !emq_json_get(*ks, e->key) &&
            emq_json_set(*ks, e->key, e->klen, emq_json_dup(e->val)) != 0) {
            emq_json_buf_puts(err, "out of memory", 13);
            return -1;
        }
    }
    return 0;
}

static void b_end(void *ctx)
{
    borrow *b = ctx;
    b->in->case_end(b->in->ctx);
}

/* --whole: every multi-part verb but a stream verb's (its parts are
 * borrowed one by one) and, in a case with streams, the sweep: it mints
 * from the cell the reference's stream appends share, which the borrowed
 * steps do not all show (an append's own mints beside its record id), so
 * its parts run one by one there. */
static int b_whole(void *ctx, const char *seq_verb)
{
    borrow *b = ctx;
    return !stream_verb(seq_verb) &&
           !(b->streams && strcmp(seq_verb, "sweep") == 0);
}

static int borrow_main(emq_golden_exec *in, int argc, char **argv)
{
    borrow b = {in, NULL, 0, 0};
    emq_golden_exec ex = {"emqlite+borrowed streams", &b, b_begin, b_clock,
                          b_step, b_dump, b_end};
    emq_golden_opts o = {b_whole, NULL};
    int whole = 0, rc;
    for (int i = 1; i < argc; i++)
        whole |= strcmp(argv[i], "--whole") == 0;
    argv[1] = argv[0]; /* drop --borrow-streams */
    rc = emq_golden_main_opts(argc - 1, argv + 1, &ex, whole ? &o : NULL);
    printf("%ld borrowed stream steps\n", b.borrowed);
    return rc;
}

int main(int argc, char **argv)
{
    emq_golden_exec ex;
    int rc;
    if (emq_golden_emq_exec(&ex) != 0) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 2;
    }
    if (argc > 1 && strcmp(argv[1], "--isolated") == 0)
        rc = isolated_main(&ex, argc, argv);
    else if (argc > 1 && strcmp(argv[1], "--borrow-streams") == 0)
        rc = borrow_main(&ex, argc, argv);
    else
        rc = emq_golden_main(argc, argv, &ex);
    emq_golden_emq_exec_free(&ex);
    return rc;
}
