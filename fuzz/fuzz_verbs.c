/*
 * fuzz_verbs.c — sequences of Tier 1 verbs driven by the input, run on the
 * engine (a private in-memory file) and on the in-memory model of §6.1
 * (tests/model.c) side by side. Properties: every reply (code, claimed id,
 * token, payload, counts, failed lists) is the model's; the keyspaces are
 * equal (tests/ksdump.c) every 16 steps and at the end; host-gated inputs
 * (a bad queue name, a malformed id, a non-positive lease) are refused
 * without a change; and the invariant checker (every 64 steps and at the
 * end) finds no violation in any state the verbs reach (notes — states the protocol itself produces — are
 * allowed).
 */
#include <string.h>
#include "fuzz.h"
#include "emqlite.h"
#include "db.h"
#include "../tests/model.h"
#include "../tests/ksdump.h"

#define VERBS_MAX_STEPS 200

static const char *const verbs_q[2] = {"qa", "q.b"};
static const char *const verbs_ids[11] = {
    "JOB00000000001", "JOB00000000002", "JOB00000000003", "JOB00000000004",
    "JOB00000000005", "JOB00000000006", "JOB00000000007", "JOB0000000000A",
    "JOB0KHTOWnGLuC", "JOBAzL8n0Y58m7", "ORD0KHTOWnGLuC"};

typedef struct verbs_in {
    const uint8_t *p;
    size_t n, i;
} verbs_in;

static unsigned verbs_byte(verbs_in *in)
{
    return in->i < in->n ? in->p[in->i++] : 0;
}

static int64_t verbs_clock(void *ctx)
{
    return *(int64_t *)ctx;
}

static int64_t verbs_token(verbs_in *in, emq_model *m, const char *q,
                           const char *id)
{
    char k[64];
    const unsigned char *v;
    size_t vl;
    unsigned b = verbs_byte(in);
    snprintf(k, sizeof k, "emq:{%s}:job:%s", q, id);
    if (b < 180 &&
        model_hget(m, k, strlen(k), "attempts", 8, &v, &vl) == EMQ_OK) {
        char t[32];
        memcpy(t, v, vl < 31 ? vl : 31);
        t[vl < 31 ? vl : 31] = 0;
        return strtoll(t, NULL, 10);
    }
    return (int64_t)(b % 6) - 1;
}

static void verbs_compare(emq_db *db, emq_model *m, int64_t now, emq_buf *a,
                          emq_buf *b, int step, int check)
{
    FUZZ_CHECK(kd_store(emq_db_store(db), now, a) == EMQ_OK, "dump");
    model_dump(m, b);
    FUZZ_CHECK(a->len == b->len && memcmp(a->p, b->p, a->len) == 0,
               "step %d: keyspaces differ\n--- emqlite\n%.2000s\n--- model\n"
               "%.2000s", step, (char *)a->p, (char *)b->p);
    size_t viol = 0;
    int rc = check ? emq_check(db, NULL, NULL, &viol) : EMQ_OK;
    FUZZ_CHECK(rc == EMQ_OK && viol == 0, "step %d: checker rc %d, %zu "
               "violations", step, rc, viol);
}

#define VEQ(x, y, what)                                                       \
    FUZZ_CHECK((x) == (y), "step %d: %s: emqlite %lld, model %lld", step,     \
               what, (long long)(x), (long long)(y))

FUZZ_ENTRY(verbs)
{
    verbs_in in = {data, size, 0};
    int64_t now = INT64_C(1767225600000);
    emq_options o;
    emq_db *db = NULL;
    emq_model *m;
    emq_buf d1 = {0}, d2 = {0};
    int step;
    emq_options_init(&o);
    o.clock = verbs_clock;
    o.clock_ctx = &now;
    FUZZ_CHECK(emq_open(":memory:", &o, &db) == EMQ_OK, "open");
    m = model_new();
    FUZZ_CHECK(m != NULL, "model");
    for (step = 1; step <= VERBS_MAX_STEPS && in.i < in.n; step++) {
        unsigned v = verbs_byte(&in) % 20;
        const char *q = verbs_q[verbs_byte(&in) & 1];
        const char *id = verbs_ids[verbs_byte(&in) % 11];
        char pay[4] = {'p', (char)('0' + step % 10), 0, 'z'};
        size_t plen = verbs_byte(&in) % 5;
        int64_t x, y, t;
        int rc, mrc;
        switch (v) {
        case 0:
        case 1:
            VEQ(emq_enqueue(db, q, id, pay, plen),
                model_enqueue(m, q, id, pay, plen), "enqueue");
            break;
        case 2: {
            int64_t at = now + (int64_t)(verbs_byte(&in) % 100) - 50;
            VEQ(emq_enqueue_at(db, q, id, pay, plen, at),
                model_enqueue_at(m, q, id, pay, plen, at), "enqueue_at");
            break;
        }
        case 3: {
            int64_t d = verbs_byte(&in) % 100;
            VEQ(emq_enqueue_in(db, q, id, pay, plen, d),
                model_enqueue_in(m, q, id, pay, plen, now, d), "enqueue_in");
            break;
        }
        case 4: {
            emq_item it[3];
            int ve[3];
            size_t n = 1 + verbs_byte(&in) % 3, i;
            for (i = 0; i < n; i++) {
                it[i].id = verbs_ids[verbs_byte(&in) % 11];
                it[i].payload = pay;
                it[i].len = plen;
            }
            VEQ(emq_enqueue_many(db, q, it, n, ve), EMQ_OK, "enqueue_many");
            for (i = 0; i < n; i++)
                VEQ(ve[i], model_enqueue(m, q, it[i].id, pay, plen),
                    "verdict");
            break;
        }
        case 5:
        case 6: {
            emq_job j;
            char mid[EMQ_ID_SIZE];
            int64_t att;
            unsigned char *mp = NULL;
            size_t mpl = 0;
            int64_t lease = 1 + verbs_byte(&in) % 60;
            rc = emq_claim(db, q, lease, &j);
            mrc = model_claim(m, q, now, lease, mid, &att, &mp, &mpl);
            VEQ(rc, mrc, "claim");
            if (rc == EMQ_OK) {
                FUZZ_CHECK(strcmp(j.id, mid) == 0, "claimed %s, model %s",
                           j.id, mid);
                VEQ(j.attempts, att, "attempts");
                VEQ(j.payload != NULL, mp != NULL, "payload nil");
                if (mp)
                    FUZZ_CHECK(j.payload_len == mpl &&
                                   memcmp(j.payload, mp, mpl) == 0,
                               "payload");
            }
            emq_job_clear(&j);
            free(mp);
            break;
        }
        case 7:
        case 8:
            t = verbs_token(&in, m, q, id);
            VEQ(emq_complete(db, q, id, t), model_complete(m, q, id, t),
                "complete");
            break;
        case 9: {
            int64_t d = verbs_byte(&in) % 40, max = verbs_byte(&in) % 4;
            t = verbs_token(&in, m, q, id);
            VEQ(emq_retry(db, q, id, t, d, max, "boom", 4),
                model_retry(m, q, id, t, now, d, max, "boom", 4), "retry");
            break;
        }
        case 10: {
            int64_t batch = 1 + verbs_byte(&in) % 4;
            VEQ(emq_promote(db, q, batch, &x),
                model_promote(m, q, now, batch, &y), "promote");
            VEQ(x, y, "promoted");
            break;
        }
        case 11:
            VEQ(emq_reap(db, q, &x), model_reap(m, q, now, &y), "reap");
            VEQ(x, y, "reaped");
            break;
        case 12: {
            int64_t lease = 1 + verbs_byte(&in) % 60;
            t = verbs_token(&in, m, q, id);
            VEQ(emq_extend_lock(db, q, id, t, lease),
                model_extend_lock(m, q, id, t, now, lease), "extend_lock");
            break;
        }
        case 13: {
            const char *ids[3];
            int64_t toks[3];
            int f1[3], f2[3];
            size_t n = verbs_byte(&in) % 4, i, n1 = 9, n2 = 9;
            for (i = 0; i < n; i++) {
                ids[i] = verbs_ids[verbs_byte(&in) % 11];
                toks[i] = verbs_token(&in, m, q, ids[i]);
            }
            VEQ(emq_extend_locks(db, q, n, ids, toks, 30, f1, &n1),
                model_extend_locks(m, q, n, ids, toks, now, 30, f2, &n2),
                "extend_locks");
            VEQ(n1, n2, "nfailed");
            for (i = 0; i < n; i++) VEQ(f1[i], f2[i], "failed[i]");
            break;
        }
        case 14:
            VEQ(emq_pause(db, q), model_pause(m, q), "pause");
            break;
        case 15:
            VEQ(emq_resume(db, q), model_resume(m, q), "resume");
            break;
        case 16: {
            char e1[4][EMQ_ID_SIZE], m1[4][EMQ_ID_SIZE];
            size_t n = 1 + verbs_byte(&in) % 4, c1 = 9, c2 = 9, i;
            VEQ(emq_browse(db, q, n, e1, &c1),
                model_browse(m, q, n, m1, &c2), "browse");
            VEQ(c1, c2, "browsed");
            for (i = 0; i < c1; i++)
                FUZZ_CHECK(strcmp(e1[i], m1[i]) == 0, "browse order");
            break;
        }
        case 17: {
            emq_stats s1, s2;
            VEQ(emq_stats_get(db, q, &s1), model_stats(m, q, &s2), "stats");
            VEQ(s1.pending, s2.pending, "pending");
            VEQ(s1.active, s2.active, "active");
            VEQ(s1.scheduled, s2.scheduled, "scheduled");
            VEQ(s1.dead, s2.dead, "dead");
            VEQ(s1.completed, s2.completed, "completed");
            VEQ(s1.failed, s2.failed, "failed");
            VEQ(s1.paused, s2.paused, "paused");
            break;
        }
        case 18: {
            /* host gates: refused, nothing changes (compared below) */
            unsigned g = verbs_byte(&in) % 4;
            emq_job j;
            if (g == 0)
                VEQ(emq_enqueue(db, "q:x", id, pay, plen), EMQ_EQUEUE,
                    "bad queue");
            else if (g == 1)
                VEQ(emq_enqueue(db, q, "JOBzzzzzzzzzzz", pay, plen), EMQ_EID,
                    "bad id");
            else if (g == 2)
                VEQ(emq_claim(db, q, 0, &j), EMQ_EINVAL, "lease 0");
            else
                VEQ(emq_promote(db, q, 0, NULL), EMQ_EINVAL, "batch 0");
            break;
        }
        default:
            now += verbs_byte(&in) % 50;
            break;
        }
        if (step % 16 == 0)
            verbs_compare(db, m, now, &d1, &d2, step, step % 64 == 0);
    }
    verbs_compare(db, m, now, &d1, &d2, step, 1);
    emq_buf_free(&d1);
    emq_buf_free(&d2);
    model_free(m);
    emq_close(db);
    return 0;
}
