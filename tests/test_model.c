/*
 * test_model.c — suite "model": emqlite against the in-memory model of
 * PROTOCOL.md §6.1 (tests/model.c). Eight fixed seeds, 2000 random steps
 * each over two queues, ten JOB ids and an ORD id: every Tier 1 verb with
 * current and wrong tokens, pause/resume, clock advances, and raw writes of
 * what Tier 1 verbs never build (group fields, gactive/glimit, lane pauses,
 * flow links, deleted rows, meta.paused = "0"). Every reply is compared,
 * and the whole keyspace after every step.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "tengine.h"
#include "model.h"
#include "ksdump.h"

emq_store *emq_db_store(emq_db *db);

#define STEPS 2000
#define NIDS 11

static const char *const QS[2] = {"qa", "qb"};
static const char *const IDS[NIDS] = {
    "JOB00000000001", "JOB00000000002", "JOB00000000003", "JOB00000000004",
    "JOB00000000005", "JOB00000000006", "JOB00000000007", "JOB00000000008",
    "JOB00000000009", "JOB0000000000A", "ORD0KHTOWnGLuC"};
static const char *const GS[2] = {"PRT0KHTOWnGLuC", "USR0NgWEfAEJfs"};
static const char *const ERRS[4] = {"boom", "", "e\0x", "stalled"};
static const size_t ERRL[4] = {4, 0, 3, 7};

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * UINT64_C(2685821657736338717);
}

static int pick(rng *r, int n) { return (int)(rnd(r) % (uint64_t)n); }

typedef struct world {
    emq_db *db;
    emq_model *m;
    tclock clk;
    rng r;
    char what[256];
    int seed, step;
} world;

#define FAILW(w, ...) ck_abort_msg("seed %d step %d (%s): " __VA_ARGS__)

static void eq(world *w, int64_t got, int64_t want, const char *what)
{
    if (got != want)
        ck_abort_msg("seed %d step %d (%s): %s: emqlite %lld, model %lld",
                     w->seed, w->step, w->what, what, (long long)got,
                     (long long)want);
}

/* The current token of a row in the model, or a random (often wrong) one. */
static int64_t token_for(world *w, const char *q, const char *id)
{
    char k[64];
    const unsigned char *v;
    size_t vl;
    snprintf(k, sizeof k, "emq:{%s}:job:%s", q, id);
    if (pick(&w->r, 10) < 7 &&
        model_hget(w->m, k, strlen(k), "attempts", 8, &v, &vl) == EMQ_OK) {
        char t[32];
        memcpy(t, v, vl < 31 ? vl : 31);
        t[vl < 31 ? vl : 31] = 0;
        return strtoll(t, NULL, 10);
    }
    return pick(&w->r, 6) - 1;
}

/* ------------------------------------------------------------ raw writes */

static void raw_begin(world *w)
{
    ck_assert_int_eq(emq_store_begin(emq_db_store(w->db), 1, w->clk.now), 0);
}

static void raw_end(world *w)
{
    ck_assert_int_eq(emq_store_commit(emq_db_store(w->db)), EMQ_OK);
}

static void raw_hset(world *w, const char *k, const char *f, const char *v)
{
    emq_bytes fv[2] = {{f, strlen(f)}, {v, strlen(v)}};
    raw_begin(w);
    ck_assert_int_eq(emq_hash_set(emq_db_store(w->db), k, strlen(k), fv, 1,
                                  NULL), EMQ_OK);
    raw_end(w);
    ck_assert_int_eq(model_hset(w->m, k, strlen(k), f, strlen(f), v,
                                strlen(v)), EMQ_OK);
}

static void raw_ghincr(world *w, const char *k, const char *f)
{
    int64_t a, b;
    raw_begin(w);
    ck_assert_int_eq(emq_hash_incrby(emq_db_store(w->db), k, strlen(k), f,
                                     strlen(f), 1, &a), EMQ_OK);
    raw_end(w);
    ck_assert_int_eq(model_hincrby(w->m, k, strlen(k), f, strlen(f), 1, &b),
                     EMQ_OK);
    eq(w, a, b, "raw hincrby");
}

static void raw_set_member(world *w, const char *k, const char *v, int add)
{
    int x;
    raw_begin(w);
    if (add)
        ck_assert_int_eq(emq_sset_add(emq_db_store(w->db), k, strlen(k), v,
                                     strlen(v), &x), EMQ_OK);
    else
        ck_assert_int_eq(emq_sset_rem(emq_db_store(w->db), k, strlen(k), v,
                                     strlen(v), &x), EMQ_OK);
    raw_end(w);
    if (add) model_sadd(w->m, k, strlen(k), v, strlen(v));
    else model_srem(w->m, k, strlen(k), v, strlen(v));
}

static void raw_del(world *w, const char *k)
{
    raw_begin(w);
    ck_assert(emq_key_del(emq_db_store(w->db), k, strlen(k), NULL) >= 0);
    raw_end(w);
    model_del(w->m, k, strlen(k));
}

static void raw_str(world *w, const char *k, const char *v)
{
    raw_begin(w);
    ck_assert_int_eq(emq_str_set(emq_db_store(w->db), k, strlen(k), v,
                                 strlen(v), -1, 0, NULL), EMQ_OK);
    raw_end(w);
    model_set(w->m, k, strlen(k), v, strlen(v));
}

static void raw_step(world *w, const char *q, const char *id)
{
    char k[96], pk[96];
    const char *g = GS[pick(&w->r, 2)];
    int c = pick(&w->r, 10);
    switch (c == 8 || c == 9 ? 4 : c) {
    case 0:
        snprintf(k, sizeof k, "emq:{%s}:job:%s", q, id);
        snprintf(w->what, sizeof w->what, "raw group %s %s", k, g);
        raw_hset(w, k, "group", g);
        break;
    case 1:
        snprintf(k, sizeof k, "emq:{%s}:gactive", q);
        snprintf(w->what, sizeof w->what, "raw gactive+1 %s %s", q, g);
        raw_ghincr(w, k, g);
        break;
    case 2: {
        char v[8];
        snprintf(k, sizeof k, "emq:{%s}:glimit", q);
        snprintf(v, sizeof v, "%d", 1 + pick(&w->r, 3));
        snprintf(w->what, sizeof w->what, "raw glimit %s %s %s", q, g, v);
        raw_hset(w, k, g, v);
        break;
    }
    case 3:
        snprintf(k, sizeof k, "emq:{%s}:paused", q);
        snprintf(w->what, sizeof w->what, "raw lane pause %s %s", q, g);
        raw_set_member(w, k, g, pick(&w->r, 2));
        break;
    case 4: {
        const char *parent = IDS[pick(&w->r, NIDS - 1)];
        int how = pick(&w->r, 4);
        snprintf(k, sizeof k, "emq:{%s}:job:%s", q, id);
        snprintf(w->what, sizeof w->what, "raw link %s -> %s (%d)", k,
                 parent, how);
        raw_hset(w, k, "parent", how == 3 ? "bogus" : parent);
        if (how == 1) raw_hset(w, k, "parent_queue", QS[pick(&w->r, 2)]);
        if (how == 2)
            raw_hset(w, k, "parent_policy", pick(&w->r, 2) ? "id" : "zz");
        snprintf(pk, sizeof pk, "emq:{%s}:job:%s:dependencies", q, parent);
        raw_str(w, pk, pick(&w->r, 2) ? "1" : "2");
        break;
    }
    case 5:
        snprintf(k, sizeof k, "emq:{%s}:job:%s", q, id);
        snprintf(w->what, sizeof w->what, "raw del %s", k);
        raw_del(w, k);
        break;
    case 6:
        snprintf(k, sizeof k, "emq:{%s}:meta", q);
        snprintf(w->what, sizeof w->what, "raw meta.paused=0 %s", q);
        raw_hset(w, k, "paused", "0");
        break;
    default:
        snprintf(k, sizeof k, "emq:{%s}:ring", q);
        snprintf(w->what, sizeof w->what, "raw del ring %s", q);
        raw_del(w, k);
        break;
    }
}

/* ------------------------------------------------------------------ verbs */

static void one_step(world *w)
{
    const char *q = QS[pick(&w->r, 2)];
    const char *id = IDS[pick(&w->r, NIDS)];
    int64_t now = w->clk.now, a, b, t;
    int v = pick(&w->r, 100), rc, mrc;
    char pay[16];
    size_t plen = (size_t)snprintf(pay, sizeof pay, "p%d", w->step);
    if (pick(&w->r, 8) == 0) pay[1] = 0;       /* a NUL inside */

    if (v < 12) {
        snprintf(w->what, sizeof w->what, "enqueue %s %s", q, id);
        eq(w, emq_enqueue(w->db, q, id, pay, plen),
           model_enqueue(w->m, q, id, pay, plen), "rc");
    } else if (v < 17) {
        static const int64_t offs[6] = {-1000, 0, 50, 1000000, 0, -5};
        int o = pick(&w->r, 6);
        int64_t at = o >= 4 ? offs[o] : now + offs[o];
        snprintf(w->what, sizeof w->what, "enqueue_at %s %s %lld", q, id,
                 (long long)at);
        eq(w, emq_enqueue_at(w->db, q, id, pay, plen, at),
           model_enqueue_at(w->m, q, id, pay, plen, at), "rc");
    } else if (v < 21) {
        int64_t d = pick(&w->r, 4) ? pick(&w->r, 100) : 600000;
        snprintf(w->what, sizeof w->what, "enqueue_in %s %s %lld", q, id,
                 (long long)d);
        eq(w, emq_enqueue_in(w->db, q, id, pay, plen, d),
           model_enqueue_in(w->m, q, id, pay, plen, now, d), "rc");
    } else if (v < 24) {
        emq_item it[4];
        int ve[4], vm[4];
        size_t n = 1 + (size_t)pick(&w->r, 4), i;
        for (i = 0; i < n; i++) {
            it[i].id = IDS[pick(&w->r, NIDS)];
            it[i].payload = pay;
            it[i].len = plen;
        }
        snprintf(w->what, sizeof w->what, "enqueue_many %s %zu", q, n);
        eq(w, emq_enqueue_many(w->db, q, it, n, ve), EMQ_OK, "rc");
        for (i = 0; i < n; i++) {
            vm[i] = model_enqueue(w->m, q, it[i].id, pay, plen);
            eq(w, ve[i], vm[i], "verdict");
        }
    } else if (v < 40) {
        emq_job j;
        char mid[EMQ_ID_SIZE];
        int64_t matt;
        unsigned char *mp;
        size_t mpl;
        int64_t lease = pick(&w->r, 3) ? 1 + pick(&w->r, 100) : 600000;
        snprintf(w->what, sizeof w->what, "claim %s %lld", q,
                 (long long)lease);
        rc = emq_claim(w->db, q, lease, &j);
        mrc = model_claim(w->m, q, now, lease, mid, &matt, &mp, &mpl);
        eq(w, rc, mrc, "rc");
        if (rc == EMQ_OK) {
            if (strcmp(j.id, mid) != 0)
                ck_abort_msg("seed %d step %d: claim id %s vs %s", w->seed,
                             w->step, j.id, mid);
            eq(w, j.attempts, matt, "attempts");
            eq(w, j.payload != NULL, mp != NULL, "payload nil");
            if (mp) {
                eq(w, (int64_t)j.payload_len, (int64_t)mpl, "payload len");
                ck_assert_mem_eq(j.payload, mp, mpl);
            }
        }
        emq_job_clear(&j);
        free(mp);
    } else if (v < 52) {
        t = token_for(w, q, id);
        snprintf(w->what, sizeof w->what, "complete %s %s %lld", q, id,
                 (long long)t);
        eq(w, emq_complete(w->db, q, id, t), model_complete(w->m, q, id, t),
           "rc");
    } else if (v < 62) {
        int e = pick(&w->r, 4);
        int64_t d = pick(&w->r, 60), max = pick(&w->r, 5);
        t = token_for(w, q, id);
        snprintf(w->what, sizeof w->what, "retry %s %s %lld d%lld max%lld", q,
                 id, (long long)t, (long long)d, (long long)max);
        eq(w, emq_retry(w->db, q, id, t, d, max, ERRS[e], ERRL[e]),
           model_retry(w->m, q, id, t, now, d, max, ERRS[e], ERRL[e]), "rc");
    } else if (v < 67) {
        static const int64_t bs[3] = {1, 2, 100};
        int64_t batch = bs[pick(&w->r, 3)];
        snprintf(w->what, sizeof w->what, "promote %s %lld", q,
                 (long long)batch);
        eq(w, emq_promote(w->db, q, batch, &a),
           model_promote(w->m, q, now, batch, &b), "rc");
        eq(w, a, b, "count");
    } else if (v < 72) {
        snprintf(w->what, sizeof w->what, "reap %s", q);
        eq(w, emq_reap(w->db, q, &a), model_reap(w->m, q, now, &b), "rc");
        eq(w, a, b, "count");
    } else if (v < 75) {
        char e1[12][EMQ_ID_SIZE], m1[12][EMQ_ID_SIZE];
        size_t n = 1 + (size_t)pick(&w->r, 12), c1, c2, i;
        snprintf(w->what, sizeof w->what, "browse %s %zu", q, n);
        eq(w, emq_browse(w->db, q, n, e1, &c1),
           model_browse(w->m, q, n, m1, &c2), "rc");
        eq(w, (int64_t)c1, (int64_t)c2, "count");
        for (i = 0; i < c1; i++) ck_assert_str_eq(e1[i], m1[i]);
    } else if (v < 77) {
        snprintf(w->what, sizeof w->what, "pending_size %s", q);
        eq(w, emq_pending_size(w->db, q, &a),
           model_pending_size(w->m, q, &b), "rc");
        eq(w, a, b, "size");
    } else if (v < 82) {
        int64_t lease = pick(&w->r, 2) ? 1 + pick(&w->r, 100) : 600000;
        t = token_for(w, q, id);
        snprintf(w->what, sizeof w->what, "extend_lock %s %s %lld", q, id,
                 (long long)t);
        eq(w, emq_extend_lock(w->db, q, id, t, lease),
           model_extend_lock(w->m, q, id, t, now, lease), "rc");
    } else if (v < 85) {
        const char *ids[4];
        int64_t toks[4];
        int f1[4], f2[4];
        size_t n = (size_t)pick(&w->r, 5), i, n1, n2;
        for (i = 0; i < n; i++) {
            ids[i] = IDS[pick(&w->r, NIDS)];
            toks[i] = token_for(w, q, ids[i]);
        }
        snprintf(w->what, sizeof w->what, "extend_locks %s %zu", q, n);
        eq(w, emq_extend_locks(w->db, q, n, ids, toks, 77, f1, &n1),
           model_extend_locks(w->m, q, n, ids, toks, now, 77, f2, &n2), "rc");
        eq(w, (int64_t)n1, (int64_t)n2, "nfailed");
        for (i = 0; i < n; i++) eq(w, f1[i], f2[i], "failed[i]");
    } else if (v < 87) {
        snprintf(w->what, sizeof w->what, "pause %s", q);
        eq(w, emq_pause(w->db, q), model_pause(w->m, q), "rc");
    } else if (v < 90) {
        snprintf(w->what, sizeof w->what, "resume %s", q);
        eq(w, emq_resume(w->db, q), model_resume(w->m, q), "rc");
    } else if (v < 91) {
        emq_stats s1, s2;
        snprintf(w->what, sizeof w->what, "stats %s", q);
        eq(w, emq_stats_get(w->db, q, &s1), model_stats(w->m, q, &s2), "rc");
        eq(w, s1.pending, s2.pending, "pending");
        eq(w, s1.active, s2.active, "active");
        eq(w, s1.scheduled, s2.scheduled, "scheduled");
        eq(w, s1.dead, s2.dead, "dead");
        eq(w, s1.completed, s2.completed, "completed");
        eq(w, s1.failed, s2.failed, "failed");
        eq(w, s1.paused, s2.paused, "paused");
    } else if (v < 94) {
        int64_t d = pick(&w->r, 10) ? pick(&w->r, 80) : 1000000;
        snprintf(w->what, sizeof w->what, "advance %lld", (long long)d);
        w->clk.now += d;
    } else {
        raw_step(w, q, id);
    }
}

START_TEST(random_steps_match_the_model)
{
    world w;
    emq_buf d1 = {0}, d2 = {0};
    memset(&w, 0, sizeof w);
    w.seed = 1001 + _i;
    w.r.s = UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)w.seed;
    w.db = topen(&w.clk);
    w.m = model_new();
    for (w.step = 1; w.step <= STEPS; w.step++) {
        one_step(&w);
        ck_assert_int_eq(kd_store(emq_db_store(w.db), w.clk.now, &d1), 0);
        model_dump(w.m, &d2);
        if (d1.len != d2.len || memcmp(d1.p, d2.p, d1.len) != 0)
            ck_abort_msg("seed %d step %d (%s): keyspaces differ\n"
                         "--- emqlite\n%.1500s\n--- model\n%.1500s", w.seed,
                         w.step, w.what, (char *)d1.p, (char *)d2.p);
    }
    emq_buf_free(&d1);
    emq_buf_free(&d2);
    model_free(w.m);
    emq_close(w.db);
}
END_TEST

Suite *suite_model(void)
{
    Suite *s = suite_create("model");
    TCase *t = tcase_create("random");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, random_steps_match_the_model, 0, 8);
    suite_add_tcase(s, t);
    return s;
}
