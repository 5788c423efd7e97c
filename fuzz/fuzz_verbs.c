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
 * input on, only the differential properties are checked. With
 * EMQ_FUZZ_TRACE set in the environment each step is printed to stderr (a
 * found input, replayed, tells its story).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "emqlite.h"
#include "emqlite_protocol.h"
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

/* Ids of another kind than JOB that a flow delivery named as its parent:
 * T4.11 and T4.12 gate a parent id's form, not its kind (the wire does the
 * same), so a delivery to an ORD parent releases that id into pending. The
 * checker flags such a row; findings naming one of these ids are the
 * protocol's own state, as the flows suite states for its hostile calls. */
typedef struct verbs_poison {
    size_t n;
    char id[8][EMQ_ID_SIZE];
} verbs_poison;

static void verbs_note_parent(verbs_poison *p, const vgen_call *c)
{
    if (strcmp(c->v->name, "flow_deliver") != 0 &&
        strcmp(c->v->name, "flow_fail_deliver") != 0)
        return;
    if (c->argc < 2 || c->len[1] != EMQ_ID_LEN ||
        memcmp(c->argv[1], "JOB", 3) == 0 || p->n == 8)
        return;
    memcpy(p->id[p->n], c->argv[1], EMQ_ID_LEN);
    p->id[p->n++][EMQ_ID_LEN] = 0;
}

typedef struct verbs_findings {
    const verbs_poison *poison;
    char first[300];
    size_t viol;
} verbs_findings;

/* Count the violations not about a poisoned parent; keep the first. */
static void verbs_finding(void *ctx, const emq_finding *f)
{
    verbs_findings *out = ctx;
    if (f->severity != EMQ_CHECK_VIOLATION)
        return;
    for (size_t i = 0; i < out->poison->n; i++)
        if (strstr(f->key, out->poison->id[i]) ||
            strstr(f->message, out->poison->id[i]))
            return;
    if (out->viol++ == 0)
        snprintf(out->first, sizeof out->first, "%s %s: %s", f->code,
                 f->key, f->message);
}

static void verbs_check(emq_db *db, emq_model *m, int64_t now, int step,
                        int keyspace, int checker, const verbs_poison *p)
{
    static char err[4000];
    verbs_findings f;
    int rc;
    if (keyspace)
        FUZZ_CHECK(vgen_keyspace_diff(db, m, now, err, sizeof err) == 0,
                   "step %d: %s", step, err);
    if (!checker) return;
    memset(&f, 0, sizeof f);
    f.poison = p;
    rc = emq_check(db, verbs_finding, &f, NULL);
    FUZZ_CHECK((rc == EMQ_OK || rc == EMQ_ECORRUPT) && f.viol == 0,
               "step %d: checker rc %d, %zu violations (%s)", step, rc,
               f.viol, f.first);
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
    int step, raw = 0, trace = getenv("EMQ_FUZZ_TRACE") != NULL;
    verbs_poison poison;
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
    memset(&poison, 0, sizeof poison);
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
                if (trace) fprintf(stderr, "step %d: advance to %lld\n",
                                   step, (long long)now);
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
            if (trace) {
                char d[1024];
                vgen_describe(&c, d, sizeof d);
                fprintf(stderr, "step %d: %s\n", step, d);
            }
            FUZZ_CHECK(vgen_run(db, w.m, now, &c, &modelled, err,
                                sizeof err) == 0, "step %d: %s", step, err);
            verbs_note_parent(&poison, &c);
            if (!modelled)
                verbs_check(db, w.m, now, step, 0, !raw, &poison);
        }
        if (step % 16 == 0)
            verbs_check(db, w.m, now, step, 1, !raw && step % 64 == 0,
                        &poison);
    }
    verbs_check(db, w.m, now, step, 1, !raw, &poison);
    model_free(w.m);
    emq_close(db);
    return 0;
}
