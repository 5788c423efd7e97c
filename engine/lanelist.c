/*
 * lanelist.c — the operator's list of a queue's lanes (emq_lanes): each
 * group that has a lane key, its depth and whether it is paused, in one
 * read transaction. Beyond the wire (no verb of the registry): the lanes
 * are the keys emq:{q}:g:<gid>:pending, found by a prefix walk of the key
 * names, as emq_queues finds the queues.
 *
 * Rule: reads only; the walk collects the group ids first and reads the
 * depths after it, so no store statement runs inside another's walk.
 */
#include <string.h>
#include "verb.h"

typedef struct lanes_ctx {
    const char *q;
    size_t max, n, total;
    emq_lane_info *out;
    size_t plen; /* length of "emq:{q}:g:" */
} lanes_ctx;

static int lane_cb(void *ctx, const unsigned char *key, size_t klen, int type)
{
    lanes_ctx *c = ctx;
    static const char tail[] = ":pending";
    size_t tl = sizeof tail - 1;
    (void)type;
    if (klen != c->plen + EMQ_ID_LEN + tl ||
        memcmp(key + c->plen + EMQ_ID_LEN, tail, tl) != 0)
        return 0;
    if (c->n < c->max) {
        memcpy(c->out[c->n].group, key + c->plen, EMQ_ID_LEN);
        c->out[c->n].group[EMQ_ID_LEN] = '\0';
        c->n++;
    }
    c->total++;
    return 0;
}

static int lanes_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    lanes_ctx *c = ctx;
    char pre[EMQ_KEY_MAX], pk[EMQ_KEY_MAX], lk[EMQ_KEY_MAX];
    size_t pkl = emq_key(pk, c->q, EMQ_KT_PAUSED), i;
    int rc;
    (void)db;
    (void)now;
    /* "emq:{q}:g:" is the lane key of an empty group id, minus ":pending" */
    c->plen = emq_key_of(pre, c->q, EMQ_KT_LANE, "", 0);
    if (c->plen < 8 || pkl == 0) return EMQ_EINTERNAL;
    c->plen -= 8;
    c->n = c->total = 0;
    if ((rc = emq_key_scan(st, pre, c->plen, lane_cb, c)) < 0) return rc;
    for (i = 0; i < c->n; i++) {
        emq_lane_info *l = &c->out[i];
        size_t lkl = emq_key_of(lk, c->q, EMQ_KT_LANE, l->group, EMQ_ID_LEN);
        if (lkl == 0) return EMQ_EINTERNAL;
        if ((rc = emq_zset_card(st, lk, lkl, &l->depth)) < 0) return rc;
        if ((rc = emq_sset_ismember(st, pk, pkl, l->group, EMQ_ID_LEN,
                                    &l->paused)) < 0)
            return rc;
    }
    return EMQ_OK;
}

int emq_lanes(emq_db *db, const char *q, emq_lane_info *out, size_t max,
              size_t *n, size_t *total)
{
    lanes_ctx c = {q, max, 0, 0, out, 0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n) *n = 0;
    if (total) *total = 0;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (n == NULL || (max > 0 && out == NULL))
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL lanes or n");
    rc = emq_db_run(db, 0, lanes_body, &c);
    if (rc < 0) return rc;
    *n = c.n;
    if (total) *total = c.total;
    return EMQ_OK;
}
