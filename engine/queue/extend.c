/*
 * extend.c — lease extension: T1.11 extend_lock and T1.12 extend_locks
 * (PROTOCOL.md §6.1).
 *
 * Rule: the lease is the B.active score and nothing else; a matching token
 * sets it to NOW + lease_ms whatever the job's state, inserting a member
 * that was not active (D-12). The kind is not checked.
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"

/* attempts of J(id) against the token: EMQ_OK match, EMQ_NOTFOUND no
 * attempts (or no row), EMQ_ESTALE mismatch, or a failure. */
static int judge(emq_store *st, const char *q, const char *id, int64_t token)
{
    char jk[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    emq_buf att = {0};
    int rc = emq_hash_get(st, jk, jkl, "attempts", 8, &att);
    if (rc == EMQ_OK && !emq_token_eq(&att, token)) rc = EMQ_ESTALE;
    emq_buf_free(&att);
    return rc;
}

/*
 * T1.11 extend_lock(q, id, token, lease_ms > 0)
 * Keys: B.active, J(id). Replies: 1 ok (EMQ_OK) · -1 gone (EMQ_GONE) ·
 * "EMQSTALE extend token mismatch" (EMQ_ESTALE). Clock: NOW.
 */
int emq_v_extend_lock(emq_vctx *c)
{
    const char *q = c->a[0].s, *id = c->a[1].s;
    char ak[EMQ_KEY_MAX];
    size_t akl = emq_key(ak, q, EMQ_KT_ACTIVE);
    int added, rc = judge(c->st, q, id, c->a[2].i);
    if (rc == EMQ_NOTFOUND) {
        emq_reply_int(c->r, -1);
        return EMQ_GONE;
    }
    if (rc == EMQ_ESTALE) return emq_db_wire(c->db, rc, EMQ_MSG_STALE_EXT);
    if (rc < 0) return rc;
    rc = emq_zset_add(c->st, ak, akl, id, EMQ_ID_LEN,
                      emq_score_add(c->now, c->a[3].i), &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

int emq_lock_extend(emq_db *db, const char *q, const char *id, int64_t token,
                    int64_t lease_ms)
{
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_int(token), emq_varg_int(lease_ms)};
    return emq_verb_exec(db, EMQ_V_EXTEND_LOCK, a, 4, NULL, NULL);
}

/*
 * T1.12 extend_locks(q, lease_ms > 0, [(id, token)...]) — one NOW, one
 * deadline for the whole batch.
 * Keys: B.active, J(id_i). Reply: the ids not extended (missing attempts or
 * token mismatch), in input order (c->out, when given: an int per pair,
 * 1 when not extended). Clock: NOW.
 */
int emq_v_extend_locks(emq_vctx *c)
{
    const char *q = c->a[0].s;
    char ak[EMQ_KEY_MAX];
    size_t akl = emq_key(ak, q, EMQ_KT_ACTIVE), n = (c->argc - 2) / 2, i;
    double deadline = emq_score_add(c->now, c->a[1].i);
    int *failed = c->out;
    int added, rc;
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0)) < 0) return rc;
    for (i = 0; i < n; i++) {
        const emq_varg *id = &c->a[2 + 2 * i];
        rc = judge(c->st, q, id->s, id[1].i);
        if (rc < 0 && rc != EMQ_ESTALE) return rc;
        if (failed) failed[i] = rc != EMQ_OK;
        if (rc != EMQ_OK) {
            if ((rc = emq_reply_push_bulk(c->r, id->s, id->n)) < 0)
                return rc;
            continue;
        }
        rc = emq_zset_add(c->st, ak, akl, id->s, EMQ_ID_LEN, deadline,
                          &added);
        if (rc < 0) return rc;
    }
    return EMQ_OK;
}

int emq_lock_extend_many(emq_db *db, const char *q, size_t n,
                     const char *const *ids, const int64_t *tokens,
                     int64_t lease_ms, int *failed, size_t *nfailed)
{
    char (*nums)[24] = NULL;
    emq_varg *a = NULL;
    emq_reply r = {0};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (nfailed) *nfailed = 0;
    if (n > 0 && (ids == NULL || tokens == NULL || failed == NULL)) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL ids, tokens "
                                           "or failed");
    }
    if ((a = emq_mem_calloc(2 + 2 * n, sizeof *a)) == NULL ||
        (nums = emq_mem_calloc(n ? n : 1, sizeof *nums)) == NULL) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    a[0] = emq_varg_str(q);
    a[1] = emq_varg_int(lease_ms);
    for (i = 0; i < n; i++) {
        a[2 + 2 * i] = emq_varg_str(ids[i]);
        a[3 + 2 * i] = emq_varg_int(tokens[i]);
    }
    rc = emq_verb_exec(db, EMQ_V_EXTEND_LOCKS, a, 2 + 2 * n, &r, failed);
    if (rc == EMQ_OK && nfailed) *nfailed = r.n;
done:
    emq_reply_clear(&r);
    emq_mem_free(a);
    emq_mem_free(nums);
    return rc;
}
