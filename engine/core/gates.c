/*
 * gates.c — host gates (L4 checks that run before any store access) and the
 * value helpers every transition shares: shortest decimal rendering, the
 * token comparison, NOW-derived scores, the kind test, row keys for members
 * read from the store.
 *
 * Rule: a gate touches nothing but the handle's message; it returns EMQ_OK
 * or the refusal code with the reference's refusal text as the message.
 */
#include <string.h>
#include "db.h"

int emq_gate_q(emq_db *db, const char *q)
{
    if (q == NULL || !emq_queue_valid(q))
        return emq_db_wire(db, EMQ_EQUEUE, "invalid queue name");
    return EMQ_OK;
}

int emq_gate_id(emq_db *db, const char *id)
{
    if (id == NULL || !emq_id_valid(id))
        return emq_db_wire(db, EMQ_EID, "job_key requires a valid branded id");
    return EMQ_OK;
}

int emq_gate_g(emq_db *db, const char *g)
{
    if (g == NULL || !emq_id_valid(g))
        return emq_db_wire(db, EMQ_EID, "a lane is named by a valid branded "
                                        "id");
    return EMQ_OK;
}

int emq_gate_bytes(emq_db *db, const void *p, size_t len)
{
    if (p == NULL && len > 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL bytes with a "
                                           "non-zero length");
    if ((uint64_t)len > db->opt.max_payload)
        return emq_db_wire(db, EMQ_ETOOBIG, "payload too big: it exceeds the "
                                            "configured max_payload");
    return EMQ_OK;
}

int emq_token_eq(const emq_buf *att, int64_t token)
{
    char t[24];
    size_t n = emq_fmt_i64(t, token);
    return att->len == n && memcmp(att->p, t, n) == 0;
}

double emq_score_add(int64_t a, int64_t b)
{
    return (double)a + (double)b;
}

int emq_is_job_kind(const void *id, size_t len)
{
    return len >= 3 && memcmp(id, "JOB", 3) == 0;
}
