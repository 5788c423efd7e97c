/*
 * enqueue.c — admissions: T1.1 enqueue, T1.2 enqueue_many, T1.3 enqueue_at /
 * enqueue_in (PROTOCOL.md §6.1).
 *
 * Rule: KIND first, then existence (any key at J(id), any type), then the
 * three-field row and the set entry; a duplicate changes nothing.
 */
#include <string.h>
#include "verb.h"

enum { ADMIT_PENDING, ADMIT_AT, ADMIT_IN };

typedef struct admit {
    const char *q, *id;
    const void *p;
    size_t len;
    int mode;
    int64_t v;          /* run_at_ms (at) or delay_ms (in) */
} admit;

/* The keys admissions to one queue write: `jk` holds J("") (jpre bytes)
 * that each id is copied after, `sk` the set they join. Built once per
 * verb call (an enqueue_many of 1,000 builds them once, not 1,000 times). */
typedef struct admit_keys {
    char jk[EMQ_KEY_MAX], sk[EMQ_KEY_MAX];
    size_t jpre, skl;
    emq_bytes *defer; /* non-NULL: pending members gathered here, added */
    size_t ndefer;    /* after the batch's rows (emq_zset_add0_many)    */
} admit_keys;

static void admit_keys_init(admit_keys *k, const char *q, int mode)
{
    k->jpre = emq_key_of(k->jk, q, EMQ_KT_JOB, "", 0);
    k->skl = emq_key(k->sk, q, mode == ADMIT_PENDING ? EMQ_KT_PENDING
                                                     : EMQ_KT_SCHEDULE);
    k->defer = NULL;
    k->ndefer = 0;
}

/* One admission inside the open transaction: EMQ_ENQUEUED / EMQ_SCHEDULED,
 * EMQ_DUPLICATE, EMQ_EKIND (no message set; callers decide), or a failure.
 * The queue was gated (emq_queue_valid: at most 128 bytes), so J(id) fits. */
static int admit_one(emq_store *st, int64_t now, const admit *a,
                     admit_keys *k)
{
    size_t jkl = k->jpre + EMQ_ID_LEN;
    emq_bytes fv[6];
    int created, added, rc;
    double score;

    if (!emq_is_job_kind(a->id, strlen(a->id))) return EMQ_EKIND;
    memcpy(k->jk + k->jpre, a->id, EMQ_ID_LEN);
    k->jk[jkl] = '\0';

    fv[0].p = "state";
    fv[0].n = 5;
    fv[1].p = a->mode == ADMIT_PENDING ? "pending" : "scheduled";
    fv[1].n = strlen(fv[1].p);
    fv[2].p = "attempts";
    fv[2].n = 8;
    fv[3].p = "0";
    fv[3].n = 1;
    fv[4].p = "payload";
    fv[4].n = 7;
    fv[5].p = a->len ? a->p : "";
    fv[5].n = a->len;
    /* Existence (any key at J(id), any type) and the row in one step. */
    if ((rc = emq_hash_create(st, k->jk, jkl, fv, 3, &created)) < 0)
        return rc;
    if (!created) return EMQ_DUPLICATE;

    if (k->defer) {
        k->defer[k->ndefer].p = a->id;
        k->defer[k->ndefer++].n = EMQ_ID_LEN;
        return EMQ_ENQUEUED;
    }
    if (a->mode == ADMIT_PENDING)
        score = 0;
    else
        score = a->mode == ADMIT_AT ? (double)a->v : emq_score_add(now, a->v);
    rc = emq_zset_add(st, k->sk, k->skl, a->id, EMQ_ID_LEN, score, &added);
    if (rc < 0) return rc;
    return a->mode == ADMIT_PENDING ? EMQ_ENQUEUED : EMQ_SCHEDULED;
}

/* A single admission's reply: 1 (enqueued or scheduled), 0 (duplicate). */
static int admit_verb(emq_vctx *c, int mode)
{
    admit a = {c->a[0].s, c->a[1].s, c->a[2].s, c->a[2].n, mode,
               mode == ADMIT_PENDING ? 0 : c->a[3].i};
    admit_keys k;
    int rc;
    admit_keys_init(&k, a.q, mode);
    rc = admit_one(c->st, c->now, &a, &k);
    if (rc == EMQ_EKIND) return emq_db_wire(c->db, rc, EMQ_MSG_KIND);
    if (rc >= 0) emq_reply_int(c->r, rc == EMQ_DUPLICATE ? 0 : 1);
    return rc;
}

/*
 * T1.1 enqueue(q, id, payload)
 * Keys: J(id), B.pending. Replies: 1 enqueued (EMQ_ENQUEUED) · 0 duplicate
 * (EMQ_DUPLICATE) · "EMQKIND job id must be JOB-namespaced" (EMQ_EKIND).
 * Clock: none.
 */
int emq_v_enqueue(emq_vctx *c)
{
    return admit_verb(c, ADMIT_PENDING);
}

/*
 * T1.3 enqueue_at(q, id, payload, run_at_ms) — score = run_at_ms (a double,
 * so beyond 2^53 it rounds as the store's scores do).
 * Keys: J(id), B.schedule. Replies: 1 scheduled (EMQ_SCHEDULED) · 0
 * duplicate · EMQKIND. Clock: none (the caller's clock priced the score).
 */
int emq_v_enqueue_at(emq_vctx *c)
{
    return admit_verb(c, ADMIT_AT);
}

/*
 * T1.3 enqueue_in(q, id, payload, delay_ms >= 0) — score = NOW + delay_ms.
 * Keys, replies: as enqueue_at. Clock: NOW.
 */
int emq_v_enqueue_in(emq_vctx *c)
{
    return admit_verb(c, ADMIT_IN);
}

/* enqueue_many's rows and verdicts, the new ids gathered in k->defer. */
static int many_rows(emq_vctx *c, admit_keys *k, size_t n, int *verdicts)
{
    size_t i;
    int rc;
    for (i = 0; i < n; i++) {
        const emq_varg *id = &c->a[1 + 2 * i], *p = id + 1;
        admit a = {c->a[0].s, id->s, p->s, p->n, ADMIT_PENDING, 0};
        emq_reply *e;
        rc = admit_one(c->st, c->now, &a, k);
        if (rc < 0 && rc != EMQ_EKIND) return rc;
        if (verdicts) verdicts[i] = rc;
        if ((e = emq_reply_push(c->r)) == NULL) return EMQ_ENOMEM;
        if (rc == EMQ_EKIND) {
            if (emq_reply_error(e, EMQ_REPLY_ERROR, EMQ_MSG_KIND) < 0)
                return EMQ_ENOMEM;
        } else {
            emq_reply_int(e, rc == EMQ_ENQUEUED);
        }
    }
    return EMQ_OK;
}

/*
 * T1.2 enqueue_many(q, [(id, payload)...]) — T1.1 per item in input order,
 * in one transaction (the items are independent). Every id and payload is
 * gated before any item runs; an empty batch is refused (empty_pipeline).
 * Reply: one verdict per item, in input order: 1 enqueued, 0 duplicate, or
 * the EMQKIND error reply (c->out, when given, receives EMQ_ENQUEUED /
 * EMQ_DUPLICATE / EMQ_EKIND per item). Clock: none.
 * The rows are created item by item (a verdict is its row's); the new ids
 * then join B.pending together, which gives the same set as T1.1's ZADD
 * per item (a set has no insertion order) at half the statements' cost.
 */
int emq_v_enqueue_many(emq_vctx *c)
{
    size_t n = (c->argc - 1) / 2;
    int *verdicts = c->out;
    admit_keys k;
    int rc;
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, n)) < 0) return rc;
    admit_keys_init(&k, c->a[0].s, ADMIT_PENDING);
    if ((k.defer = emq_mem_malloc((n ? n : 1) * sizeof *k.defer)) == NULL)
        return EMQ_ENOMEM;
    rc = many_rows(c, &k, n, verdicts);
    if (rc == EMQ_OK)
        rc = emq_zset_add0_many(c->st, k.sk, k.skl, k.defer, k.ndefer, NULL);
    emq_mem_free(k.defer);
    return rc;
}

/* ------------------------------------------------------ the typed calls */

static int admit_call(emq_db *db, int verb, const char *q, const char *id,
                      const void *p, size_t len, const int64_t *v)
{
    char num[24];
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_bytes(p, len), {0}};
    if (v) a[3] = emq_varg_int(*v, num);
    return emq_verb_exec(db, verb, a, v ? 4 : 3, NULL, NULL);
}

int emq_enqueue(emq_db *db, const char *q, const char *id,
                const void *payload, size_t len)
{
    return admit_call(db, EMQ_V_ENQUEUE, q, id, payload, len, NULL);
}

int emq_enqueue_at(emq_db *db, const char *q, const char *id,
                   const void *payload, size_t len, int64_t run_at_ms)
{
    return admit_call(db, EMQ_V_ENQUEUE_AT, q, id, payload, len, &run_at_ms);
}

int emq_enqueue_in(emq_db *db, const char *q, const char *id,
                   const void *payload, size_t len, int64_t delay_ms)
{
    return admit_call(db, EMQ_V_ENQUEUE_IN, q, id, payload, len, &delay_ms);
}

int emq_enqueue_many(emq_db *db, const char *q, const emq_item *items,
                     size_t n, int *verdicts)
{
    emq_varg *a;
    emq_reply r = {0};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n > 0 && (items == NULL || verdicts == NULL)) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL items or "
                                           "verdicts");
    }
    if ((a = emq_mem_calloc(1 + 2 * n, sizeof *a)) == NULL)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    a[0] = emq_varg_str(q);
    for (i = 0; i < n; i++) {
        a[1 + 2 * i] = emq_varg_str(items[i].id);
        a[2 + 2 * i] = emq_varg_bytes(items[i].payload, items[i].len);
    }
    rc = emq_verb_exec(db, EMQ_V_ENQUEUE_MANY, a, 1 + 2 * n, &r, verdicts);
    emq_reply_clear(&r);
    emq_mem_free(a);
    return rc;
}
