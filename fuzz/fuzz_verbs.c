/*
 * fuzz_verbs.c — sequences of registered verbs driven by the input, run on
 * the engine (a private in-memory file) and on the in-memory model
 * (tests/model.c) side by side, every verb of the registry reached through
 * tests/vgen.h. The input is frames [verb byte][length][argument bytes]
 * (vgen.h): a verb byte is a registry id (ids are append-only, an id not
 * registered yet is a no-op), so registering a verb never reinterprets a
 * committed input; bytes from VGEN_HARNESS up are a clock advance or a raw
 * write. Properties: every reply and every refusal code is the model's; the
 * keyspaces are equal every 16 steps and at the end; a verb the model does
 * not have runs on the engine alone and the invariant checker finds no
 * violation after it; and the checker finds none every 64 steps and at the
 * end (notes — states the protocol itself produces — are allowed). A raw
 * write builds a state no verb builds, some of them outside the checker's
 * rules (a row holding only a group field): from the first raw write of an
 * input on, only the differential properties are checked.
 */
#include <string.h>
#include "fuzz.h"
#include "emqlite.h"
#include "db.h"
#include "../tests/model.h"
#include "../tests/vgen.h"

#define VERBS_MAX_STEPS 200

static int64_t verbs_clock(void *ctx)
{
    return *(int64_t *)ctx;
}

typedef struct verbs_world {
    emq_model *m;
    int64_t *now;
} verbs_world;

static int verbs_attempts(void *ctx, const char *q, const char *id,
                          int64_t *att)
{
    verbs_world *w = ctx;
    return model_attempts(w->m, *w->now, q, id, att);
}

/* The first violation the checker reports, for the failure message. */
static void verbs_finding(void *ctx, const emq_finding *f)
{
    char *out = ctx;
    if (f->severity == EMQ_CHECK_VIOLATION && out[0] == 0)
        snprintf(out, 300, "%s %s: %s", f->code, f->key, f->message);
}

static void verbs_check(emq_db *db, emq_model *m, int64_t now, int step,
                        int keyspace, int checker)
{
    static char err[4000];
    char first[300] = "";
    size_t viol = 0;
    int rc;
    if (keyspace)
        FUZZ_CHECK(vgen_keyspace_diff(db, m, now, err, sizeof err) == 0,
                   "step %d: %s", step, err);
    if (!checker) return;
    rc = emq_check(db, verbs_finding, first, &viol);
    FUZZ_CHECK(rc == EMQ_OK && viol == 0, "step %d: checker rc %d, %zu "
               "violations (%s)", step, rc, viol, first);
}

FUZZ_ENTRY(verbs)
{
    static char err[4000];
    vgen_src in, frame;
    int64_t now = INT64_C(1767225600000);
    emq_options o;
    emq_db *db = NULL;
    verbs_world w;
    vgen g;
    int step, raw = 0;
    emq_options_init(&o);
    o.clock = verbs_clock;
    o.clock_ctx = &now;
    FUZZ_CHECK(emq_open(":memory:", &o, &db) == EMQ_OK, "open");
    w.m = model_new();
    w.now = &now;
    FUZZ_CHECK(w.m != NULL, "model");
    memset(&g, 0, sizeof g);
    g.attempts = verbs_attempts;
    g.actx = &w;
    g.hostile = 1;
    vgen_src_bytes(&in, data, size);
    for (step = 1; step <= VERBS_MAX_STEPS && vgen_more(&in); step++) {
        unsigned v = vgen_byte(&in), len = vgen_byte(&in);
        const uint8_t *p = in.p + in.i;
        size_t n = len < in.n - in.i ? len : in.n - in.i;
        in.i += n;
        vgen_src_bytes(&frame, p, n);
        if (v >= VGEN_HARNESS) {
            if (v & 1) {
                now += vgen_byte(&frame) % 50;
            } else {
                vgen_raw r;
                raw = 1;
                vgen_raw_pick(&frame, &r);
                FUZZ_CHECK(vgen_raw_apply(db, w.m, now, &r, err, sizeof err)
                               == 0, "step %d: %s", step, err);
            }
        } else if (v < emq_verb_count()) {
            vgen_call c;
            int modelled;
            g.now = now;
            vgen_args(&g, emq_verb_at(v), &frame, &c);
            FUZZ_CHECK(vgen_run(db, w.m, now, &c, &modelled, err,
                                sizeof err) == 0, "step %d: %s", step, err);
            if (!modelled) verbs_check(db, w.m, now, step, 0, !raw);
        }
        if (step % 16 == 0)
            verbs_check(db, w.m, now, step, 1, !raw && step % 64 == 0);
    }
    verbs_check(db, w.m, now, step, 1, !raw);
    model_free(w.m);
    emq_close(db);
    return 0;
}
