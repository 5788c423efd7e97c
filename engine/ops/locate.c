/*
 * locate.c — two operator reads beyond the wire (issue 34 item 4): the
 * queue of a job named by its id alone, and the flow parents a queue holds
 * in awaiting_children. Neither writes; both walk keys only where no index
 * answers (the history's subject index answers first).
 */
#include <string.h>
#include "verb.h"
#include "jobs.h"
#include "hist.h"

typedef struct loc {
    const char *id;
    char *q;
    int found;
    emq_idlist keys;
} loc;

static int newest_cb(void *ctx, const emq_hist_row *r)
{
    loc *l = ctx;
    size_t n = r->scope.n < 128 ? r->scope.n : 128;
    memcpy(l->q, r->scope.p, n);
    l->q[n] = 0;
    l->found = 1;
    return 0;               /* the last one read is the newest */
}

static int kept_cb(void *ctx, const emq_hist_keep_row *r)
{
    loc *l = ctx;
    size_t n = r->scope.n < 128 ? r->scope.n : 128;
    memcpy(l->q, r->scope.p, n);
    l->q[n] = 0;
    l->found = 1;
    return 1;
}

/* A key "emq:{q}:job:<id>" of this id: its queue. */
static int key_cb(void *ctx, const unsigned char *key, size_t klen, int type)
{
    loc *l = ctx;
    const unsigned char *e;
    size_t ql;
    (void)type;
    if (klen < 5 + 1 + 6 + EMQ_ID_LEN ||
        memcmp(key + klen - EMQ_ID_LEN, l->id, EMQ_ID_LEN) != 0 ||
        memcmp(key + klen - EMQ_ID_LEN - 6, "}:job:", 6) != 0)
        return 0;
    e = key + klen - EMQ_ID_LEN - 6;
    ql = (size_t)(e - (key + 5));
    if (ql == 0 || ql > 128 || memchr(key + 5, '}', ql)) return 0;
    memcpy(l->q, key + 5, ql);
    l->q[ql] = 0;
    l->found = 1;
    return 1;
}

static int locate_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    loc *l = ctx;
    emq_bytes j = {l->id, EMQ_ID_LEN};
    int rc;
    (void)now;
    l->found = 0;
    rc = emq_hist_read(st, NULL, &j, 0, 0, newest_cb, l);
    if (rc >= 0 && !l->found)
        rc = emq_hist_keep_find(st, NULL, &j, kept_cb, l);
    if (rc >= 0 && !l->found)
        rc = emq_key_scan(st, "emq:{", 5, key_cb, l);
    return rc < 0 ? emq_db_fail(db, rc, "locating a job") : EMQ_OK;
}

int emq_job_locate(emq_db *db, const char *id, char q[129])
{
    loc l;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_id(db, id)) < 0) return rc;
    if (q == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: q is NULL");
    q[0] = 0;
    memset(&l, 0, sizeof l);
    l.id = id;
    l.q = q;
    if ((rc = emq_db_run(db, 0, locate_tx, &l)) < 0) return rc;
    return l.found ? EMQ_OK : EMQ_ABSENT;
}

typedef struct await {
    const char *q;
    emq_idlist keys;
    char (*ids)[EMQ_ID_SIZE];
    size_t n;
} await;

static int job_key_cb(void *ctx, const unsigned char *key, size_t klen,
                      int type)
{
    await *a = ctx;
    size_t pl = 5 + strlen(a->q) + 6;
    if (type != EMQ_T_HASH || klen != pl + EMQ_ID_LEN) return 0;
    return emq_idlist_cb(&a->keys, key, klen, 0);
}

static int await_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    await *a = ctx;
    char prefix[EMQ_KEY_MAX];
    size_t pl = emq_key_of(prefix, a->q, EMQ_KT_JOB, "", 0);
    emq_buf v = {0};
    int rc;
    (void)now;
    emq_idlist_free(&a->keys);
    emq_mem_free(a->ids);     /* a body run again after a busy retry */
    a->ids = NULL;
    a->n = 0;
    rc = emq_key_scan(st, prefix, pl, job_key_cb, a);
    if (rc >= 0 && a->keys.n &&
        (a->ids = emq_mem_calloc(a->keys.n, sizeof *a->ids)) == NULL)
        rc = EMQ_ENOMEM;
    for (size_t i = 0; i < a->keys.n && rc >= 0; i++) {
        rc = emq_hash_get(st, a->keys.v[i].p, a->keys.v[i].len, "state", 5,
                          &v);
        if (rc == EMQ_OK && v.len == 17 &&
            memcmp(v.p, "awaiting_children", 17) == 0) {
            memcpy(a->ids[a->n], a->keys.v[i].p + pl, EMQ_ID_LEN);
            a->ids[a->n++][EMQ_ID_LEN] = 0;
        }
        if (rc == EMQ_NOTFOUND) rc = EMQ_OK;
    }
    emq_buf_free(&v);
    return rc < 0 ? emq_db_fail(db, rc, "listing awaiting parents") : EMQ_OK;
}

int emq_list_awaiting(emq_db *db, const char *q, char (**ids)[EMQ_ID_SIZE],
                      size_t *n)
{
    await a;
    int rc;
    if (ids) *ids = NULL;
    if (n) *n = 0;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (ids == NULL || n == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL output");
    memset(&a, 0, sizeof a);
    a.q = q;
    rc = emq_db_run(db, 0, await_tx, &a);
    emq_idlist_free(&a.keys);
    if (rc < 0 || a.n == 0) {
        emq_mem_free(a.ids);
        return rc < 0 ? rc : EMQ_OK;
    }
    *ids = a.ids;
    *n = a.n;
    return EMQ_OK;
}
