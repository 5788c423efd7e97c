/*
 * test_model.c — suite "model": emqlite against the in-memory model
 * (tests/model.c), verb by verb from the registry. Eight fixed seeds, 2000
 * random steps each: a registered verb with arguments generated from its
 * row (tests/vgen.h: two queues, ten JOB ids and an ORD id, groups,
 * payloads with NUL bytes, tokens that are often current, now and then one
 * argument invalid for its kind), a clock advance, or a raw write of what
 * no verb builds (group fields, gactive/glimit, lane pauses, flow links,
 * deleted rows, meta.paused = "0"). Every reply (and every refusal code) is
 * compared, and the whole keyspace after every step.
 *
 * A registered verb the model does not have runs on emqlite alone and the
 * invariant checker must find no more violations after it than before (stream keys are left out of
 * the comparison: the model has no streams); the suite prints how many
 * such steps ran, verb by verb, so none is skipped silently.
 *
 * Long mode by hand: EMQ_MODEL_SEEDS=64 EMQ_MODEL_STEPS=20000.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "suites.h"
#include "tengine.h"
#include "model.h"
#include "relutil.h"
#include "vgen.h"

typedef struct world {
    emq_db *db;
    emq_model *m;
    tclock clk;
    vgen_src src;
    vgen gen;
    long calls, engine_only, refused;
    long only[256];       /* engine-only steps by verb id */
} world;

static int attempts_hook(void *ctx, const char *q, const char *id,
                         int64_t *att)
{
    world *w = ctx;
    return model_attempts(w->m, w->clk.now, q, id, att);
}

/* The first violation the checker reports, for the failure message. */
static void first_violation(void *ctx, const emq_finding *f)
{
    char *out = ctx;
    if (f->severity == EMQ_CHECK_VIOLATION && out[0] == 0)
        snprintf(out, 300, "%s %s: %s", f->code, f->key, f->message);
}

/* One step; 0, or 1 with `err` filled. */
static int one_step(world *w, char *what, size_t wcap, char *err,
                    size_t errlen)
{
    unsigned b = vgen_byte(&w->src) % 100;
    size_t count = emq_verb_count();
    const emq_verb_info *v = NULL;
    vgen_call c;
    int modelled;

    if (b < 6) {
        int64_t d = vgen_byte(&w->src) % 10 ? vgen_byte(&w->src) % 80
                                            : 1000000;
        snprintf(what, wcap, "advance %lld", (long long)d);
        w->clk.now += d;
        return 0;
    }
    if (b < 12) {
        vgen_raw r;
        vgen_raw_pick(&w->src, &r);
        snprintf(what, wcap, "raw %s %s", r.argv[0][0], r.argv[0][1]);
        return vgen_raw_apply(w->db, w->m, w->clk.now, &r, err, errlen) != 0;
    }
    /* one step in five admits a job, so the other verbs have work */
    if (b < 30) v = emq_verb_find("enqueue");
    if (v == NULL) v = emq_verb_at(vgen_byte(&w->src) % count);
    w->gen.now = w->clk.now;
    vgen_args(&w->gen, v, &w->src, &c);
    vgen_describe(&c, what, wcap);
    w->calls++;
    /* A verb the model lacks runs on emqlite alone: it must not add a
     * violation to what the checker found before it (the random steps and
     * raw writes build states the checker already flags, such as an ORD
     * member a retry dead-lettered). */
    size_t nv_before = 0;
    if (model_verb_find(v->name) == NULL)
        emq_check(w->db, NULL, NULL, &nv_before);
    if (vgen_run(w->db, w->m, w->clk.now, &c, &modelled, err, errlen))
        return 1;
    if (!modelled) {
        char first[300] = "";
        size_t nv = 0;
        int rc = emq_check(w->db, first_violation, first, &nv);
        w->engine_only++;
        if (v->id >= 0 && v->id < 256) w->only[v->id]++;
        if ((rc != EMQ_OK && rc != EMQ_ECORRUPT) || nv > nv_before) {
            snprintf(err, errlen, "after the engine-only %s: the checker "
                     "says rc %d, %zu violations where there were %zu "
                     "before (%s)", v->name, rc, nv, nv_before, first);
            return 1;
        }
    }
    return 0;
}

START_TEST(random_steps_match_the_model)
{
    world w;
    long steps = rel_env_long("EMQ_MODEL_STEPS", rel_size(2000, 400)), s;
    int seed = 1001 + _i;
    char what[300], err[4000];
    size_t i;
    memset(&w, 0, sizeof w);
    vgen_src_seed(&w.src, UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)seed);
    w.gen.attempts = attempts_hook;
    w.gen.actx = &w;
    w.gen.hostile = 1;
    w.db = topen(&w.clk);
    w.m = model_new();
    for (s = 1; s <= steps; s++) {
        what[0] = 0;
        if (one_step(&w, what, sizeof what, err, sizeof err) ||
            vgen_keyspace_diff(w.db, w.m, w.clk.now, err, sizeof err))
            ck_abort_msg("seed %d step %ld (%s): %s", seed, s, what, err);
    }
    fprintf(stderr, "model: seed %d: %ld steps, %ld verb calls, %ld on "
            "emqlite only", seed, steps, w.calls, w.engine_only);
    for (i = 0; i < emq_verb_count() && i < 256; i++)
        if (w.only[i])
            fprintf(stderr, " %s:%ld", emq_verb_at(i)->name, w.only[i]);
    fprintf(stderr, "\n");
    model_free(w.m);
    emq_close(w.db);
}
END_TEST

Suite *suite_model(void)
{
    Suite *s = suite_create("model");
    TCase *t = tcase_create("random");
    tcase_set_timeout(t, 600);
    tcase_add_loop_test(t, random_steps_match_the_model, 0,
                        (int)rel_env_long("EMQ_MODEL_SEEDS", 8));
    suite_add_tcase(s, t);
    return s;
}
