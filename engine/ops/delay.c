/*
 * delay.c — T2.15 delay (PROTOCOL.md §6.2): an active job parked back on
 * the schedule with its token.
 *
 * Rule: delay checks the kind before the row and the row before the token;
 * its missing-row answer is the error string "EMQSTALE job gone" with the
 * verdict gone.
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "events.h"
#include "jobs.h"

#define MSG_STALE_DELAY "EMQSTALE delay token mismatch"

/*
 * T2.15 delay(q, id, token, ms, mode ∈ {in, at} = in)
 * Keys: J(id), B.active, B.schedule. Steps: KIND(id); no attempts →
 * "EMQSTALE job gone"; attempts ≠ token → "EMQSTALE delay token mismatch";
 * remove id from B.active; state = scheduled (attempts, payload kept); add
 * id to B.schedule at NOW + ms (in) or ms (at). Other sets, the group and
 * B.gactive are not consulted (D-10).
 * Replies: 1 ok (EMQ_OK) · "EMQSTALE job gone" (EMQ_GONE, the error reply
 * set here: nothing was written) · "EMQSTALE delay token mismatch"
 * (EMQ_ESTALE) · EMQKIND (EMQ_EKIND). Clock: NOW in the `in` mode only.
 */
int emq_v_delay(emq_vctx *c)
{
    const char *q = c->a[0].s, *id = c->a[1].s;
    int at = c->a[4].present && c->a[4].i == 1;
    char jk[EMQ_KEY_MAX], k[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN), kl;
    emq_buf att = {0};
    double run_at;
    int removed, added, rc;

    if (!emq_is_job_kind(id, EMQ_ID_LEN))
        return emq_db_wire(c->db, EMQ_EKIND, EMQ_MSG_KIND);
    rc = emq_hash_get(c->st, jk, jkl, "attempts", 8, &att);
    if (rc == EMQ_OK && !emq_token_eq(&att, c->a[2].i)) rc = EMQ_ESTALE;
    emq_buf_free(&att);
    if (rc == EMQ_NOTFOUND) {
        rc = emq_reply_error(c->r, EMQ_REPLY_ERROR, EMQ_MSG_STALE_GONE);
        emq_db_wire(c->db, EMQ_GONE, EMQ_MSG_STALE_GONE);
        return rc < 0 ? rc : EMQ_GONE;
    }
    if (rc == EMQ_ESTALE) return emq_db_wire(c->db, rc, MSG_STALE_DELAY);
    if (rc < 0) return rc;
    kl = emq_key(k, q, EMQ_KT_ACTIVE);
    if ((rc = emq_zset_rem(c->st, k, kl, id, EMQ_ID_LEN, &removed)) < 0)
        return rc;
    {
        emq_hop op = {.op = EMQ_HOP_SET, .f = {"state", 5},
                      .v = {"scheduled", 9}};
        if ((rc = emq_hash_apply(c->st, jk, jkl, &op, 1, NULL)) < 0)
            return rc;
    }
    kl = emq_key(k, q, EMQ_KT_SCHEDULE);
    run_at = at ? (double)c->a[3].i : emq_score_add(c->now, c->a[3].i);
    rc = emq_zset_add(c->st, k, kl, id, EMQ_ID_LEN, run_at, &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return emq_ev_delayed(c, run_at); /* T2.17, after the reply */
}

int emq_delay(emq_db *db, const char *q, const char *id, int64_t token,
              int64_t ms, int mode)
{
    emq_varg a[5] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_int(token), emq_varg_int(ms),
                     emq_varg_str(mode == EMQ_DELAY_AT ? "at" : "in")};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (mode != EMQ_DELAY_IN && mode != EMQ_DELAY_AT) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: mode must be "
                                           "EMQ_DELAY_IN or EMQ_DELAY_AT");
    }
    return emq_verb_exec(db, EMQ_V_DELAY, a, 5, NULL, NULL);
}
