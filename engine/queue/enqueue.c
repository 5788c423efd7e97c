/*
 * enqueue.c — admissions: T1.1 enqueue, T1.2 enqueue_many, T1.3 enqueue_at /
 * enqueue_in (PROTOCOL.md §6.1).
 *
 * Rule: KIND first, then existence (any key at J(id), any type), then the
 * three-field row and the set entry; a duplicate changes nothing.
 */
#include <string.h>
#include "emqlite_protocol.h"
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
 * that each id is copied after, `sk` the set they join. */
typedef struct admit_keys {
    char jk[EMQ_KEY_MAX], sk[EMQ_KEY_MAX];
    size_t jpre, skl;
} admit_keys;

static void admit_keys_init(admit_keys *k, const char *q, int mode)
{
    k->jpre = emq_key_of(k->jk, q, EMQ_KT_JOB, "", 0);
    k->skl = emq_key(k->sk, q, mode == ADMIT_PENDING ? EMQ_KT_PENDING
                                                     : EMQ_KT_SCHEDULE);
}

/* The three fields of a new job row (T1.1 step 2), into fv[0..6). */
static void admit_fields(emq_bytes *fv, const char *state, const void *p,
                         size_t len)
{
    fv[0] = (emq_bytes){"state", 5};
    fv[1] = (emq_bytes){state, strlen(state)};
    fv[2] = (emq_bytes){"attempts", 8};
    fv[3] = (emq_bytes){"0", 1};
    fv[4] = (emq_bytes){"payload", 7};
    fv[5] = (emq_bytes){len ? p : "", len};
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
    admit_fields(fv, a->mode == ADMIT_PENDING ? "pending" : "scheduled",
                 a->p, a->len);
    /* Existence (any key at J(id), any type) and the row in one step. */
    if ((rc = emq_hash_create(st, k->jk, jkl, fv, 3, &created)) < 0)
        return rc;
    if (!created) return EMQ_DUPLICATE;

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

/* What enqueue_many works with: per JOB-kind item (m of them) its J(id)
 * (in `names`), its three fields and whether its row was made; the verdict
 * of every item; the ids that joined pending. */
typedef struct many {
    char *names;
    emq_bytes *keys, *fv, *ids;
    int *made, *verdict;
} many;

static void many_free(many *b)
{
    emq_mem_free(b->names);
    emq_mem_free(b->keys);
    emq_mem_free(b->fv);
    emq_mem_free(b->ids);
    emq_mem_free(b->made);
    emq_mem_free(b->verdict);
}

/* The replies, one per item in input order. */
static int many_reply(emq_vctx *c, const int *verdict, size_t n)
{
    int rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, n);
    for (size_t i = 0; rc >= 0 && i < n; i++) {
        emq_reply *e = emq_reply_push(c->r);
        if (e == NULL)
            rc = EMQ_ENOMEM;
        else if (verdict[i] == EMQ_EKIND)
            rc = emq_reply_error(e, EMQ_REPLY_ERROR, EMQ_MSG_KIND);
        else
            emq_reply_int(e, verdict[i] == EMQ_ENQUEUED);
    }
    return rc < 0 ? EMQ_ENOMEM : EMQ_OK;
}

/*
 * T1.2 enqueue_many(q, [(id, payload)...]) — T1.1 per item in input order,
 * in one transaction (the items are independent). Every id and payload is
 * gated before any item runs; an empty batch is refused (empty_pipeline).
 * Reply: one verdict per item, in input order: 1 enqueued, 0 duplicate, or
 * the EMQKIND error reply (c->out, when given, receives EMQ_ENQUEUED /
 * EMQ_DUPLICATE / EMQ_EKIND per item). Clock: none.
 * The rows are made in input order, many to a statement
 * (emq_hash_create_many: a verdict is its row's, a second item with the
 * same id a duplicate), then the new ids join B.pending together
 * (emq_zset_add0_many): the same keyspace as T1.1 item by item, since a
 * set has no insertion order, at about half the statements' cost.
 */
int emq_v_enqueue_many(emq_vctx *c)
{
    size_t n = (c->argc - 1) / 2, m = 0, nid = 0, i, j, kl;
    admit_keys k;
    many b = {0};
    int rc = EMQ_ENOMEM;
    if (n == 0) return many_reply(c, NULL, 0); /* the gate refuses it */
    admit_keys_init(&k, c->a[0].s, ADMIT_PENDING);
    kl = k.jpre + EMQ_ID_LEN;
    if ((b.names = emq_mem_malloc(n * kl)) == NULL ||
        (b.keys = emq_mem_malloc(n * sizeof *b.keys)) == NULL ||
        (b.fv = emq_mem_malloc(6 * n * sizeof *b.fv)) == NULL ||
        (b.ids = emq_mem_malloc(n * sizeof *b.ids)) == NULL ||
        (b.made = emq_mem_malloc(n * sizeof *b.made)) == NULL ||
        (b.verdict = emq_mem_malloc(n * sizeof *b.verdict)) == NULL)
        goto done;
    for (i = 0; i < n; i++) {
        const emq_varg *id = &c->a[1 + 2 * i], *p = id + 1;
        if (!emq_is_job_kind(id->s, id->n)) {
            b.verdict[i] = EMQ_EKIND;
            continue;
        }
        b.verdict[i] = EMQ_ENQUEUED;
        memcpy(b.names + m * kl, k.jk, k.jpre);
        memcpy(b.names + m * kl + k.jpre, id->s, EMQ_ID_LEN);
        b.keys[m] = (emq_bytes){b.names + m * kl, kl};
        admit_fields(b.fv + 6 * m++, "pending", p->s, p->n);
    }
    if ((rc = emq_hash_create_many(c->st, b.keys, b.fv, 3, m, b.made)) < 0)
        goto done;
    for (i = 0, j = 0; i < n; i++) {
        if (b.verdict[i] == EMQ_EKIND) continue;
        if (!b.made[j++]) {
            b.verdict[i] = EMQ_DUPLICATE;
            continue;
        }
        b.ids[nid++] = (emq_bytes){c->a[1 + 2 * i].s, EMQ_ID_LEN};
    }
    if ((rc = emq_zset_add0_many(c->st, k.sk, k.skl, b.ids, nid, NULL)) < 0)
        goto done;
    if (c->out) memcpy(c->out, b.verdict, n * sizeof *b.verdict);
    rc = many_reply(c, b.verdict, n);
done:
    many_free(&b);
    return rc;
}

/* ------------------------------------------------------ the typed calls */

static int admit_call(emq_db *db, int verb, const char *q, const char *id,
                      const void *p, size_t len, const int64_t *v)
{
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_bytes(p, len), {0}};
    if (v) a[3] = emq_varg_int(*v);
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
