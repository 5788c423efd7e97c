/*
 * pause.c — T2.1 pause / resume: the queue-wide pause flag, field `paused`
 * of B.meta. Claims answer empty while the field is present (any value);
 * admissions, promote and reap ignore it. Idempotent; no member moves.
 */
#include "db.h"

static int pause_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    const char *q = *(const char **)ctx;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_q(k, q, "meta");
    emq_bytes fv[2];
    int added, rc;
    (void)db;
    (void)now;
    fv[0].p = "paused";
    fv[0].n = 6;
    fv[1].p = "1";
    fv[1].n = 1;
    rc = emq_hash_set(st, k, kl, fv, 1, &added);
    return rc < 0 ? rc : EMQ_OK;
}

static int resume_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    const char *q = *(const char **)ctx;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_q(k, q, "meta");
    int removed, rc;
    (void)db;
    (void)now;
    rc = emq_hash_del(st, k, kl, "paused", 6, &removed);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * T2.1 pause(q): set B.meta.paused = "1". Keys: B.meta. Reply: 1 ok
 * (EMQ_OK). Clock: none.
 */
int emq_pause(emq_db *db, const char *q)
{
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    return emq_db_run(db, 1, pause_body, &q);
}

/*
 * T2.1 resume(q): delete field `paused` of B.meta. Keys: B.meta. Reply: 1
 * ok (EMQ_OK). Clock: none.
 */
int emq_resume(emq_db *db, const char *q)
{
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    return emq_db_run(db, 1, resume_body, &q);
}
