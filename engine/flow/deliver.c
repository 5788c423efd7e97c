/*
 * deliver.c — cross-queue fan-in (PROTOCOL.md §6.4): T4.11 flow_deliver and
 * T4.12 flow_fail_deliver on the parent's queue, and T4.10
 * deliver_flow_completions, the sweep pass that runs them over a queue's
 * outbox (outbox.c holds the outbox's own host steps and REEMIT).
 *
 * Rules: a delivery records each (parent, child) once — the field is set
 * only if absent and only then counts — so re-delivering an entry changes
 * nothing. A sweep pass is ONE transaction (T4.10 allows "all in one"):
 * the read, every DELIVER with its re-emit and the trim commit together or
 * not at all, so a pass has no cut point for a crash to fall into, and two
 * passes over one outbox never deliver or trim the same entry twice.
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "flow.h"
#include "link.h"

/* ------------------------------------------------------------- helpers */

static int set1(emq_store *st, const char *k, size_t kl, const void *f,
                size_t fl, const void *v, size_t vl)
{
    emq_bytes fv[2];
    int added;
    fv[0].p = fl ? f : "";
    fv[0].n = fl;
    fv[1].p = vl ? v : "";
    fv[1].n = vl;
    return emq_hash_set(st, k, kl, fv, 1, &added);
}

/* HSETNX: *set = 1 when the field was absent and is now written. */
static int set_nx(emq_store *st, const char *q, const char *parent, int kt,
                  const void *f, size_t fl, const void *v, size_t vl,
                  int *set)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, q, kt, parent, EMQ_ID_LEN);
    int exists, rc = emq_hash_exists(st, k, kl, fl ? f : "", fl, &exists);
    *set = 0;
    if (rc < 0 || exists) return rc < 0 ? rc : EMQ_OK;
    *set = 1;
    return set1(st, k, kl, f, fl, v, vl);
}

static int set_state(emq_store *st, const char *q, const char *id,
                     const char *state)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    return set1(st, k, kl, "state", 5, state, strlen(state));
}

static int zset(emq_store *st, const char *q, int kt, const char *id, int add)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, kt);
    int done;
    return add ? emq_zset_add(st, k, kl, id, EMQ_ID_LEN, 0, &done)
               : emq_zset_rem(st, k, kl, id, EMQ_ID_LEN, &done);
}

/* dependencies -1; at <= 0 the parent is released to pending. */
static int count_down(emq_store *st, const char *q, const char *parent)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, q, EMQ_KT_JOB_DEPENDENCIES, parent, EMQ_ID_LEN);
    int64_t left;
    int rc = emq_str_incrby(st, k, kl, -1, &left);
    if (rc < 0 || left > 0) return rc < 0 ? rc : EMQ_OK;
    if ((rc = zset(st, q, EMQ_KT_PENDING, parent, 1)) < 0) return rc;
    return set_state(st, q, parent, "pending");
}

int emq_fl_deliver(emq_store *st, const char *pq, const char *parent,
                   const void *child, size_t cl, const void *r, size_t rl)
{
    int set, rc = set_nx(st, pq, parent, EMQ_KT_JOB_PROCESSED, child, cl, r,
                         rl, &set);
    if (rc < 0 || !set) return rc;
    return count_down(st, pq, parent);
}

int emq_fl_fail_deliver(emq_store *st, const char *pq, const char *parent,
                        const void *child, size_t cl, const void *err,
                        size_t el, const void *policy, size_t pl)
{
    int fp = pl == 2 && memcmp(policy, "fp", 2) == 0, set, rc;
    rc = set_nx(st, pq, parent, fp ? EMQ_KT_JOB_FAILED
                                   : EMQ_KT_JOB_UNSUCCESSFUL,
                child, cl, err, el, &set);
    if (rc < 0 || !set) return rc;
    if (!fp) return count_down(st, pq, parent);
    if ((rc = set_state(st, pq, parent, "dead")) < 0) return rc;
    if ((rc = zset(st, pq, EMQ_KT_DEAD, parent, 1)) < 0) return rc;
    return zset(st, pq, EMQ_KT_PENDING, parent, 0);
}

int emq_fl_is_dead(emq_store *st, const char *q, const char *id, int *dead)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    emq_buf s = {0};
    int rc = emq_hash_get(st, k, kl, "state", 5, &s);
    *dead = rc == EMQ_OK && s.len == 4 && memcmp(s.p, "dead", 4) == 0;
    emq_buf_free(&s);
    return rc < 0 ? rc : EMQ_OK;
}

/* --------------------------------------------------- the single steps */

/*
 * T4.11 flow_deliver(q, parent, child, result) — on the parent's queue q.
 * Keys: J(p).dependencies, J(p).processed, J(p); B.pending. Only if
 * processed[child] is absent: set it to result, dependencies -1, and at
 * <= 0 the parent into pending (state pending; a one-field row when the
 * parent's row is gone, D-14). Reply: 1 (EMQ_OK). Clock: none.
 */
int emq_v_flow_deliver(emq_vctx *c)
{
    int rc = emq_fl_deliver(c->st, c->a[0].s, c->a[1].s, c->a[2].s,
                            c->a[2].n, c->a[3].s, c->a[3].n);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T4.12 flow_fail_deliver(q, parent, child, error, policy) — on the
 * parent's queue q. Keys: J(p).dependencies, J(p).failed, J(p).unsuccessful,
 * J(p); B.pending, B.dead. policy "fp": only if failed[child] is absent, set
 * it to error and kill the parent (state dead, into B.dead, out of
 * B.pending); any other policy: only if unsuccessful[child] is absent, set
 * it and count down as T4.11. Reply: 1 (EMQ_OK). Clock: none. (The sweep
 * adds the re-emit of T4.10; this row is the transition alone.)
 */
int emq_v_flow_fail_deliver(emq_vctx *c)
{
    int rc = emq_fl_fail_deliver(c->st, c->a[0].s, c->a[1].s, c->a[2].s,
                                 c->a[2].n, c->a[3].s, c->a[3].n, c->a[4].s,
                                 c->a[4].n);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/* ------------------------------------------------------------ the sweep */

typedef struct entries {
    emq_buf *v;
    size_t n, cap;
} entries;

static int collect(void *ctx, const unsigned char *p, size_t n)
{
    entries *es = ctx;
    if (es->n == es->cap) {
        size_t cap = es->cap ? es->cap * 2 : 16;
        emq_buf *v = emq_mem_realloc(es->v, cap * sizeof *v);
        if (v == NULL) return EMQ_ENOMEM;
        memset(v + es->cap, 0, (cap - es->cap) * sizeof *v);
        es->v = v;
        es->cap = cap;
    }
    return emq_buf_set(&es->v[es->n++], p, n);
}

/* The bytes of a parsed field as a C string into buf[cap]: 0 when they do
 * not fit or hold a NUL (then no gate can pass them). */
static int cstr(const emq_bytes *b, char *buf, size_t cap)
{
    if (b->n >= cap || memchr(b->p, 0, b->n)) return 0;
    memcpy(buf, b->p, b->n);
    buf[b->n] = '\0';
    return 1;
}

/*
 * DELIVER(entry) inside the pass's transaction: parse (malformed: 0),
 * GATE-ID(parent_id) and GATE-Q(parent_queue) (failing: 0), then T4.11 for
 * a COMPLETE entry, or for a FAIL entry T4.12 followed by REEMIT(parent)
 * when the delivery moved the parent to dead (not dead before, dead after:
 * D-5). *ok = 1 when delivered.
 */
static int deliver(emq_store *st, const emq_buf *e, int *ok)
{
    emq_outbox_entry x;
    char pq[EMQ_KEY_MAX], parent[EMQ_ID_SIZE];
    int was, dead, rc;
    *ok = 0;
    if (!emq_outbox_deliverable(e->p, e->len, NULL) ||
        !emq_outbox_parse(e->p, e->len, &x) ||
        !cstr(&x.parent, parent, sizeof parent) ||
        !cstr(&x.pq, pq, sizeof pq))
        return EMQ_OK;
    if (!x.fail) {
        rc = emq_fl_deliver(st, pq, parent, x.child.p, x.child.n, x.value.p,
                            x.value.n);
    } else {
        if ((rc = emq_fl_is_dead(st, pq, parent, &was)) < 0) return rc;
        rc = emq_fl_fail_deliver(st, pq, parent, x.child.p, x.child.n,
                                 x.value.p, x.value.n, x.policy.p,
                                 x.policy.n);
        if (rc < 0) return rc;
        if ((rc = emq_fl_is_dead(st, pq, parent, &dead)) < 0) return rc;
        if (!was && dead)
            rc = emq_outbox_reemit(st, pq, parent, EMQ_ID_LEN, x.value.p,
                                   x.value.n, NULL);
    }
    if (rc >= 0) *ok = 1;
    return rc;
}

/*
 * T4.10 deliver_flow_completions(q, batch > 0) — one sweep pass over the
 * outbox of the children's queue q, in one transaction: read the first
 * batch entries; DELIVER each in order, stopping at the first that is not
 * delivered (a bad entry blocks the ones behind it); drop the d delivered
 * entries from the head. Keys: B.flow:outbox; per entry, the parent's keys
 * of T4.11 / T4.12 on the entry's parent_queue, and that queue's
 * flow:outbox for a re-emit. Reply: d (EMQ_OK). Clock: none.
 */
int emq_v_deliver_flow_completions(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_OUTBOX), i;
    entries es = {NULL, 0, 0};
    int64_t d = 0;
    int ok = 1, rc = emq_list_range(c->st, k, kl, 0, c->a[1].i - 1, collect,
                                    &es);
    for (i = 0; rc >= 0 && ok && i < es.n; i++) {
        emq_proc_hook("deliver_flow_completions", d);
        if ((rc = deliver(c->st, &es.v[i], &ok)) >= 0 && ok) d++;
    }
    if (rc >= 0 && d > 0) rc = emq_list_trim(c->st, k, kl, d, -1);
    for (i = 0; i < es.cap; i++) emq_buf_free(&es.v[i]);
    emq_mem_free(es.v);
    if (rc < 0) return rc;
    emq_reply_int(c->r, d);
    return EMQ_OK;
}

/* ----------------------------------------------------------- typed calls */

int emq_flow_deliver(emq_db *db, const char *q, const char *parent,
                     const char *child, const void *result, size_t len)
{
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(parent),
                     emq_varg_str(child), emq_varg_bytes(result, len)};
    return emq_verb_exec(db, EMQ_V_FLOW_DELIVER, a, 4, NULL, NULL);
}

int emq_flow_fail_deliver(emq_db *db, const char *q, const char *parent,
                          const char *child, const void *error, size_t len,
                          const char *policy)
{
    emq_varg a[5] = {emq_varg_str(q), emq_varg_str(parent),
                     emq_varg_str(child), emq_varg_bytes(error, len),
                     emq_varg_str(policy)};
    return emq_verb_exec(db, EMQ_V_FLOW_FAIL_DELIVER, a, 5, NULL, NULL);
}

int emq_flow_sweep(emq_db *db, const char *q, int64_t batch,
                   int64_t *delivered)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(batch)};
    emq_reply r = {0};
    int rc = emq_verb_exec(db, EMQ_V_DELIVER_FLOW_COMPLETIONS, a, 2, &r,
                           NULL);
    if (delivered) *delivered = rc == EMQ_OK ? r.integer : 0;
    emq_reply_clear(&r);
    return rc;
}
