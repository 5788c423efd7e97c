/*
 * pause.c — T2.1 pause / resume: the queue-wide pause flag, field `paused`
 * of B.meta. Claims answer empty while the field is present (any value);
 * admissions, promote and reap ignore it. Idempotent; no member moves.
 */
#include "verb.h"

/*
 * T2.1 pause(q) — wire name set_paused: set B.meta.paused = "1".
 * Keys: B.meta. Reply: 1 ok (EMQ_OK). Clock: none.
 */
int emq_v_set_paused(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_META);
    emq_bytes fv[2] = {{"paused", 6}, {"1", 1}};
    int added, rc = emq_hash_set(c->st, k, kl, fv, 1, &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T2.1 resume(q) — wire name clear_paused: delete field `paused` of B.meta.
 * Keys: B.meta. Reply: 1 ok (EMQ_OK). Clock: none.
 */
int emq_v_clear_paused(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_META);
    int removed, rc = emq_hash_del(c->st, k, kl, "paused", 6, &removed);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

int emq_queue_pause(emq_db *db, const char *q)
{
    emq_varg a[1] = {emq_varg_str(q)};
    return emq_verb_exec(db, EMQ_V_SET_PAUSED, a, 1, NULL, NULL);
}

int emq_queue_resume(emq_db *db, const char *q)
{
    emq_varg a[1] = {emq_varg_str(q)};
    return emq_verb_exec(db, EMQ_V_CLEAR_PAUSED, a, 1, NULL, NULL);
}
