/*
 * jobdata.c — writes to a job's row that keep its state (PROTOCOL.md
 * §6.2): T2.8 update_data and T2.9 update_progress, with the progress
 * event T2.9 publishes.
 *
 * Rule: both apply in any state, on any row (a partial row included); a
 * missing row answers -1 and writes nothing (and publishes nothing).
 */
#include <string.h>
#include "verb.h"
#include "events.h"

/* Set field `f` of J(id) to `v` when the row exists: EMQ_OK or EMQ_GONE. */
static int set_if_row(emq_vctx *c, const char *f, const emq_varg *v)
{
    char jk[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, c->a[0].s, EMQ_KT_JOB, c->a[1].s,
                            EMQ_ID_LEN);
    emq_bytes fv[2];
    int type, added, rc = emq_key_type(c->st, jk, jkl, &type);
    if (rc < 0) return rc;
    if (type == EMQ_T_NONE) {
        emq_reply_int(c->r, -1);
        return EMQ_GONE;
    }
    fv[0].p = f;
    fv[0].n = strlen(f);
    fv[1].p = v->n ? v->s : "";
    fv[1].n = v->n;
    if ((rc = emq_hash_set(c->st, jk, jkl, fv, 1, &added)) < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T2.8 update_data(q, id, payload)
 * Keys: J(id). Replies: 1 ok (EMQ_OK) · -1 gone (EMQ_GONE). Any state.
 * Clock: none.
 */
int emq_v_update_data(emq_vctx *c)
{
    return set_if_row(c, "payload", &c->a[2]);
}

int emq_job_update_data(emq_db *db, const char *q, const char *id,
                    const void *payload, size_t len)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_bytes(payload, len)};
    return emq_verb_exec(db, EMQ_V_UPDATE_DATA, a, 3, NULL, NULL);
}

/*
 * T2.9 update_progress(q, id, progress)
 * Keys: J(id); channel emq:{q}:events. Steps: no row → -1, no event; set
 * J(id).progress; publish {"event":"progress","job":"<id>","progress":
 * "<progress, JSON-S>"} (delivered after the commit); reply 1.
 * Replies: 1 ok (EMQ_OK) · -1 gone (EMQ_GONE). Clock: none.
 */
int emq_v_update_progress(emq_vctx *c)
{
    const emq_varg *id = &c->a[1], *p = &c->a[2];
    emq_buf m = {0};
    int rc = set_if_row(c, "progress", p);
    if (rc != EMQ_OK) return rc;
    rc = emq_buf_append(&m, "{\"event\":\"progress\",\"job\":\"", 27);
    if (rc == EMQ_OK) rc = emq_ev_json_s(&m, id->s, id->n);
    if (rc == EMQ_OK) rc = emq_buf_append(&m, "\",\"progress\":\"", 14);
    if (rc == EMQ_OK) rc = emq_ev_json_s(&m, p->s, p->n);
    if (rc == EMQ_OK) rc = emq_buf_append(&m, "\"}", 2);
    if (rc == EMQ_OK)
        rc = emq_ev_publish(c->db, c->st, c->a[0].s, "progress", id->s,
                            id->n, m.p, m.len);
    emq_buf_free(&m);
    return rc;
}

int emq_job_update_progress(emq_db *db, const char *q, const char *id,
                        const void *progress, size_t len)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_bytes(progress, len)};
    return emq_verb_exec(db, EMQ_V_UPDATE_PROGRESS, a, 3, NULL, NULL);
}
