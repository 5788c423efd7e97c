/*
 * logs.c — a job's log lines (PROTOCOL.md §6.2): T2.10 add_log with its
 * keep trim, and T2.11 get_job_logs.
 *
 * Rule: the row decides, not the list: a job without a row answers gone
 * even if its lines linger (completion leaves them, D-12), and a new row
 * under the same id reads the old lines.
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"

/* 1 in *is when J(id) exists. */
static int has_row(emq_vctx *c, int *is)
{
    char jk[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, c->a[0].s, EMQ_KT_JOB, c->a[1].s,
                            EMQ_ID_LEN);
    int type, rc = emq_key_type(c->st, jk, jkl, &type);
    *is = rc == EMQ_OK && type != EMQ_T_NONE;
    return rc;
}

/*
 * T2.10 add_log(q, id, line, keep = 0 >= 0)
 * Keys: J(id), J(id).logs. Steps: no row → -1; count = push-right line;
 * keep > 0: trim to the last keep lines, and reply keep when keep < count;
 * else reply count. Replies: n (EMQ_OK; c->out, when given: n) · -1 gone
 * (EMQ_GONE). Clock: none.
 */
int emq_v_add_log(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, c->a[0].s, EMQ_KT_JOB_LOGS, c->a[1].s,
                           EMQ_ID_LEN);
    int64_t keep = c->a[3].present ? c->a[3].i : 0, count;
    int is, rc = has_row(c, &is);
    if (rc < 0) return rc;
    if (!is) {
        emq_reply_int(c->r, -1);
        return EMQ_GONE;
    }
    rc = emq_list_push(c->st, k, kl, 1, c->a[2].s, c->a[2].n, &count);
    if (rc < 0) return rc;
    if (keep > 0) {
        if ((rc = emq_list_trim(c->st, k, kl, -keep, -1)) < 0) return rc;
        if (keep < count) count = keep;
    }
    if (c->out) *(int64_t *)c->out = count;
    emq_reply_int(c->r, count);
    return EMQ_OK;
}

int emq_job_add_log(emq_db *db, const char *q, const char *id, const void *line,
                size_t len, int64_t keep, int64_t *count)
{
    int64_t n = 0;
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_bytes(line, len), emq_varg_int(keep)};
    int rc = emq_verb_exec(db, EMQ_V_ADD_LOG, a, 4, NULL, &n);
    if (count) *count = rc == EMQ_OK ? n : 0;
    return rc;
}

static int line_cb(void *ctx, const unsigned char *v, size_t vlen)
{
    return emq_reply_push_bulk(ctx, v, vlen);
}

/*
 * T2.11 get_job_logs(q, id)
 * Keys: J(id), J(id).logs. Replies: every line in order, [] when none
 * (EMQ_OK) · nil, gone (EMQ_GONE: no row). Clock: none.
 */
int emq_v_get_job_logs(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, c->a[0].s, EMQ_KT_JOB_LOGS, c->a[1].s,
                           EMQ_ID_LEN);
    int is, rc = has_row(c, &is);
    if (rc < 0) return rc;
    if (!is) {
        emq_reply_nil(c->r);
        return EMQ_GONE;
    }
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0)) < 0) return rc;
    rc = emq_list_range(c->st, k, kl, 0, -1, line_cb, c->r);
    return rc < 0 ? rc : EMQ_OK;
}

void emq_lines_free(emq_line *lines, size_t n)
{
    size_t i;
    if (lines == NULL) return;
    for (i = 0; i < n; i++) emq_mem_free(lines[i].p);
    emq_mem_free(lines);
}

int emq_job_logs(emq_db *db, const char *q, const char *id,
                 emq_line **lines, size_t *n)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(id)};
    emq_reply r = {0};
    emq_line *l;
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (lines) *lines = NULL;
    if (n) *n = 0;
    if (lines == NULL || n == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL output");
    }
    rc = emq_verb_exec(db, EMQ_V_GET_JOB_LOGS, a, 2, &r, NULL);
    if (rc != EMQ_OK) goto done;
    if ((l = emq_mem_calloc(r.n ? r.n : 1, sizeof *l)) == NULL) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    for (i = 0; i < r.n; i++) {
        l[i].p = r.elem[i].str;   /* moves out of the reply */
        l[i].len = r.elem[i].len;
        r.elem[i].str = NULL;
        r.elem[i].type = EMQ_REPLY_NIL;
    }
    *lines = l;
    *n = r.n;
done:
    emq_reply_clear(&r);
    return rc;
}
