/*
 * golden_replay.c — replay golden traces against emqlite.
 *
 *   tests/golden_replay [--quiet] [--parse-only] [--case NAME] [--stop] FILE...
 *   tests/golden_replay --isolated [--tier N] [--quiet] FILE...
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
 */
#include "golden.h"
#include "golden_emq.h"
#include "emqlite.h"

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
    else
        rc = emq_golden_main(argc, argv, &ex);
    emq_golden_emq_exec_free(&ex);
    return rc;
}
