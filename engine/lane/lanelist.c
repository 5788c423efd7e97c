/*
 * lanelist.c — the operator's list of a queue's lanes (tier 0 of the
 * registry, beyond the wire): each group that has a lane key, its depth and
 * whether it is paused, in byte order of the group ids, in one read
 * transaction. The lanes are the keys emq:{q}:g:<gid>:pending, found by a
 * prefix walk of the key names, as emq_queues finds the queues. The verb
 * `lanes` (verbs.def) and its typed call emq_lanes.
 *
 * Rule: reads only; the walk collects the group ids first and reads the
 * depths after it, so no store statement runs inside another's walk.
 */
#include <stdint.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"

typedef struct lanes_ctx {
    size_t plen;      /* length of "emq:{q}:g:"                           */
    size_t max;       /* lanes to list                                    */
    int64_t total;    /* lanes counted, past max too                      */
    emq_reply *list;  /* [group] arrays, completed after the walk         */
} lanes_ctx;

static int lane_cb(void *ctx, const unsigned char *key, size_t klen, int type)
{
    lanes_ctx *c = ctx;
    static const char tail[] = ":pending";
    size_t tl = sizeof tail - 1;
    emq_reply *e;
    (void)type;
    if (klen != c->plen + EMQ_ID_LEN + tl ||
        memcmp(key + c->plen + EMQ_ID_LEN, tail, tl) != 0)
        return 0;
    c->total++;
    if (c->list->n >= c->max)
        return 0;
    if ((e = emq_reply_push(c->list)) == NULL ||
        emq_reply_array(e, EMQ_REPLY_ARRAY, 3) < 0 ||
        emq_reply_push_bulk(e, key + c->plen, EMQ_ID_LEN) < 0)
        return EMQ_ENOMEM;
    return 0;
}

/* lanes(q, count = all): [total, [[group, depth, paused], ...]] */
int emq_v_lanes(emq_vctx *c)
{
    char pre[EMQ_KEY_MAX], pk[EMQ_KEY_MAX], lk[EMQ_KEY_MAX];
    const char *q = c->a[0].s;
    size_t pkl = emq_key(pk, q, EMQ_KT_PAUSED), lkl, i;
    lanes_ctx l;
    int rc;

    memset(&l, 0, sizeof l);
    l.max = c->argc > 1 && c->a[1].present ? (size_t)c->a[1].i : SIZE_MAX;
    /* "emq:{q}:g:" is the lane key of an empty group id, minus ":pending" */
    l.plen = emq_key_of(pre, q, EMQ_KT_LANE, "", 0);
    if (l.plen < 8 || pkl == 0) return EMQ_EINTERNAL;
    l.plen -= 8;
    if (emq_reply_array(c->r, EMQ_REPLY_ARRAY, 2) < 0 ||
        emq_reply_push(c->r) == NULL || emq_reply_push(c->r) == NULL ||
        emq_reply_array(&c->r->elem[1], EMQ_REPLY_ARRAY, 0) < 0)
        return EMQ_ENOMEM;
    l.list = &c->r->elem[1];
    if ((rc = emq_key_scan(c->st, pre, l.plen, lane_cb, &l)) != 0)
        return rc < 0 ? rc : EMQ_EINTERNAL;
    for (i = 0; i < l.list->n; i++) {
        emq_reply *e = &l.list->elem[i];
        int64_t depth;
        int paused;
        lkl = emq_key_of(lk, q, EMQ_KT_LANE, e->elem[0].str, EMQ_ID_LEN);
        if (lkl == 0) return EMQ_EINTERNAL;
        if ((rc = emq_zset_card(c->st, lk, lkl, &depth)) < 0 ||
            (rc = emq_sset_ismember(c->st, pk, pkl, e->elem[0].str,
                                    EMQ_ID_LEN, &paused)) < 0)
            return rc;
        if (emq_reply_push_int(e, depth) < 0 ||
            emq_reply_push_int(e, paused) < 0)
            return EMQ_ENOMEM;
    }
    emq_reply_int(&c->r->elem[0], l.total);
    return EMQ_OK;
}

int emq_lanes(emq_db *db, const char *q, emq_lane_info *out, size_t max,
              size_t *n, size_t *total)
{
    emq_varg a[2];
    emq_reply r = {0};
    const emq_reply *list;
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n) *n = 0;
    if (total) *total = 0;
    if (n == NULL || (max > 0 && out == NULL)) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL lanes or n");
    }
    a[0] = emq_varg_str(q);
#if SIZE_MAX > INT64_MAX
    a[1] = emq_varg_int(max > INT64_MAX ? INT64_MAX : (int64_t)max);
#else /* a 32-bit size_t always fits (gcc's -Wtype-limits says so) */
    a[1] = emq_varg_int((int64_t)max);
#endif
    rc = emq_verb_exec(db, EMQ_V_LANES, a, 2, &r, NULL);
    if (rc != EMQ_OK) goto done;
    list = &r.elem[1];
    for (i = 0; i < list->n && i < max; i++) {
        const emq_reply *e = &list->elem[i];
        memcpy(out[i].group, e->elem[0].str, EMQ_ID_LEN);
        out[i].group[EMQ_ID_LEN] = '\0';
        out[i].depth = e->elem[1].integer;
        out[i].paused = (int)e->elem[2].integer;
    }
    *n = i;
    if (total) *total = (size_t)r.elem[0].integer;
done:
    emq_reply_clear(&r);
    return rc;
}
