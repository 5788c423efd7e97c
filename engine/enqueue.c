/*
 * enqueue.c — admissions: T1.1 enqueue, T1.2 enqueue_many, T1.3 enqueue_at /
 * enqueue_in (PROTOCOL.md §6.1).
 *
 * Rule: KIND first, then existence (any key at J(id), any type), then the
 * three-field row and the set entry; a duplicate changes nothing.
 */
#include <string.h>
#include "db.h"

enum { ADMIT_PENDING, ADMIT_AT, ADMIT_IN };

typedef struct admit {
    const char *q, *id;
    const void *p;
    size_t len;
    int mode;
    int64_t v;          /* run_at_ms (at) or delay_ms (in) */
} admit;

/* One admission inside the open transaction: EMQ_ENQUEUED / EMQ_SCHEDULED,
 * EMQ_DUPLICATE, EMQ_EKIND (no message set; callers decide), or a failure. */
static int admit_one(emq_store *st, int64_t now, const admit *a)
{
    char jk[EMQ_KEY_MAX], sk[EMQ_KEY_MAX];
    size_t jkl, skl;
    emq_bytes fv[6];
    int created, added, rc;
    double score;

    if (!emq_is_job_kind(a->id, strlen(a->id))) return EMQ_EKIND;
    jkl = emq_key_job(jk, a->q, a->id);

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
    if ((rc = emq_hash_create(st, jk, jkl, fv, 3, &created)) < 0) return rc;
    if (!created) return EMQ_DUPLICATE;

    if (a->mode == ADMIT_PENDING) {
        skl = emq_key_q(sk, a->q, "pending");
        score = 0;
    } else {
        skl = emq_key_q(sk, a->q, "schedule");
        score = a->mode == ADMIT_AT ? (double)a->v : emq_score_add(now, a->v);
    }
    rc = emq_zset_add(st, sk, skl, a->id, EMQ_ID_LEN, score, &added);
    if (rc < 0) return rc;
    return a->mode == ADMIT_PENDING ? EMQ_ENQUEUED : EMQ_SCHEDULED;
}

static int admit_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    int rc = admit_one(st, now, ctx);
    if (rc == EMQ_EKIND) return emq_db_wire(db, rc, EMQ_MSG_KIND);
    return rc;
}

static int admit_verb(emq_db *db, admit *a)
{
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, a->q)) < 0) return rc;
    if ((rc = emq_gate_id(db, a->id)) < 0) return rc;
    if ((rc = emq_gate_bytes(db, a->p, a->len)) < 0) return rc;
    if (a->mode == ADMIT_IN && a->v < 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: delay_ms < 0");
    return emq_db_run(db, 1, admit_body, a);
}

/*
 * T1.1 enqueue(q, id, payload)
 * Keys: J(id), B.pending. Replies: 1 enqueued (EMQ_ENQUEUED) · 0 duplicate
 * (EMQ_DUPLICATE) · "EMQKIND job id must be JOB-namespaced" (EMQ_EKIND).
 * Clock: none.
 */
int emq_enqueue(emq_db *db, const char *q, const char *id,
                const void *payload, size_t len)
{
    admit a = {q, id, payload, len, ADMIT_PENDING, 0};
    return admit_verb(db, &a);
}

/*
 * T1.3 enqueue_at(q, id, payload, run_at_ms) — score = run_at_ms (a double,
 * so beyond 2^53 it rounds as the store's scores do).
 * Keys: J(id), B.schedule. Replies: 1 scheduled (EMQ_SCHEDULED) · 0
 * duplicate · EMQKIND. Clock: none (the caller's clock priced the score).
 */
int emq_enqueue_at(emq_db *db, const char *q, const char *id,
                   const void *payload, size_t len, int64_t run_at_ms)
{
    admit a = {q, id, payload, len, ADMIT_AT, run_at_ms};
    return admit_verb(db, &a);
}

/*
 * T1.3 enqueue_in(q, id, payload, delay_ms >= 0) — score = NOW + delay_ms.
 * Keys, replies: as enqueue_at. Clock: NOW.
 */
int emq_enqueue_in(emq_db *db, const char *q, const char *id,
                   const void *payload, size_t len, int64_t delay_ms)
{
    admit a = {q, id, payload, len, ADMIT_IN, delay_ms};
    return admit_verb(db, &a);
}

typedef struct batch {
    const char *q;
    const emq_item *items;
    size_t n;
    int *verdicts;
} batch;

static int batch_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    batch *b = ctx;
    size_t i;
    (void)db;
    for (i = 0; i < b->n; i++) {
        admit a = {b->q, b->items[i].id, b->items[i].payload,
                   b->items[i].len, ADMIT_PENDING, 0};
        int rc = admit_one(st, now, &a);
        if (rc < 0 && rc != EMQ_EKIND) return rc;
        b->verdicts[i] = rc;
    }
    return EMQ_OK;
}

/*
 * T1.2 enqueue_many(q, [(id, payload)...]) — T1.1 per item in input order,
 * in one transaction (the items are independent). Every id and payload is
 * gated before any item runs; an empty batch is refused (empty_pipeline).
 * Replies: EMQ_OK with per-item verdicts EMQ_ENQUEUED / EMQ_DUPLICATE /
 * EMQ_EKIND. Clock: none.
 */
int emq_enqueue_many(emq_db *db, const char *q, const emq_item *items,
                     size_t n, int *verdicts)
{
    batch b = {q, items, n, verdicts};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (n == 0) return emq_db_wire(db, EMQ_EEMPTY, "empty_pipeline");
    if (items == NULL || verdicts == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL items or "
                                           "verdicts");
    for (i = 0; i < n; i++) {
        if ((rc = emq_gate_id(db, items[i].id)) < 0) return rc;
        if ((rc = emq_gate_bytes(db, items[i].payload, items[i].len)) < 0)
            return rc;
    }
    return emq_db_run(db, 1, batch_body, &b);
}
