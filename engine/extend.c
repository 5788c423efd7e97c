/*
 * extend.c — lease extension: T1.11 extend_lock and T1.12 extend_locks
 * (PROTOCOL.md §6.1).
 *
 * Rule: the lease is the B.active score and nothing else; a matching token
 * sets it to NOW + lease_ms whatever the job's state, inserting a member
 * that was not active (D-12). The kind is not checked.
 */
#include <string.h>
#include "db.h"

/* attempts of J(id) against the token: EMQ_OK match, EMQ_NOTFOUND no
 * attempts (or no row), EMQ_ESTALE mismatch, or a failure. */
static int judge(emq_store *st, const char *q, const char *id, int64_t token)
{
    char jk[EMQ_KEY_MAX];
    size_t jkl = emq_key_job(jk, q, id);
    emq_buf att = {0};
    int rc = emq_hash_get(st, jk, jkl, "attempts", 8, &att);
    if (rc == EMQ_OK && !emq_token_eq(&att, token)) rc = EMQ_ESTALE;
    emq_buf_free(&att);
    return rc;
}

typedef struct ext_ctx {
    const char *q;
    size_t n;
    const char *const *ids;
    const int64_t *tokens;
    int64_t lease;
    int *failed;
    size_t nfailed;
} ext_ctx;

static int extend_one_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    ext_ctx *c = ctx;
    char ak[EMQ_KEY_MAX];
    size_t akl = emq_key_q(ak, c->q, "active");
    int added, rc = judge(st, c->q, c->ids[0], c->tokens[0]);
    if (rc == EMQ_NOTFOUND) return EMQ_GONE;
    if (rc == EMQ_ESTALE) return emq_db_wire(db, rc, EMQ_MSG_STALE_EXT);
    if (rc < 0) return rc;
    rc = emq_zset_add(st, ak, akl, c->ids[0], EMQ_ID_LEN,
                      emq_score_add(now, c->lease), &added);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * T1.11 extend_lock(q, id, token, lease_ms > 0)
 * Keys: B.active, J(id). Replies: 1 ok (EMQ_OK) · -1 gone (EMQ_GONE) ·
 * "EMQSTALE extend token mismatch" (EMQ_ESTALE). Clock: NOW.
 */
int emq_extend_lock(emq_db *db, const char *q, const char *id, int64_t token,
                    int64_t lease_ms)
{
    ext_ctx c = {q, 1, &id, &token, lease_ms, NULL, 0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if ((rc = emq_gate_id(db, id)) < 0) return rc;
    if (lease_ms <= 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: lease_ms <= 0");
    return emq_db_run(db, 1, extend_one_body, &c);
}

static int extend_many_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    ext_ctx *c = ctx;
    char ak[EMQ_KEY_MAX];
    size_t akl = emq_key_q(ak, c->q, "active"), i;
    double deadline = emq_score_add(now, c->lease);
    int added, rc;
    (void)db;
    c->nfailed = 0;
    for (i = 0; i < c->n; i++) {
        rc = judge(st, c->q, c->ids[i], c->tokens[i]);
        if (rc < 0 && rc != EMQ_ESTALE) return rc;
        if (rc != EMQ_OK) {
            c->failed[i] = 1;
            c->nfailed++;
            continue;
        }
        c->failed[i] = 0;
        rc = emq_zset_add(st, ak, akl, c->ids[i], EMQ_ID_LEN, deadline,
                          &added);
        if (rc < 0) return rc;
    }
    return EMQ_OK;
}

/*
 * T1.12 extend_locks(q, [(id, token)...], lease_ms > 0) — one NOW, one
 * deadline for the whole batch.
 * Keys: B.active, J(id_i). Reply: the ids not extended (missing attempts or
 * token mismatch), in input order → failed[i] = 1, *nfailed. Clock: NOW.
 */
int emq_extend_locks(emq_db *db, const char *q, size_t n,
                     const char *const *ids, const int64_t *tokens,
                     int64_t lease_ms, int *failed, size_t *nfailed)
{
    ext_ctx c = {q, n, ids, tokens, lease_ms, failed, 0};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (nfailed) *nfailed = 0;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (n > 0 && (ids == NULL || tokens == NULL || failed == NULL))
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL ids, tokens "
                                           "or failed");
    for (i = 0; i < n; i++)
        if ((rc = emq_gate_id(db, ids[i])) < 0) return rc;
    if (lease_ms <= 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: lease_ms <= 0");
    rc = emq_db_run(db, 1, extend_many_body, &c);
    if (rc == EMQ_OK && nfailed) *nfailed = c.nfailed;
    return rc;
}
