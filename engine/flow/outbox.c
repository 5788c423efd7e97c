/*
 * outbox.c — a queue's flow outbox (PROTOCOL.md §6.4, B.flow:outbox): the
 * host steps T4.10 reads and trims it with (outbox_read, outbox_trim) and
 * T4.14 REEMIT, which pushes a node's FAIL entry onto it, as the traces
 * record them. The entry layouts and their parser are link.c's; the sweep
 * pass that delivers the entries is deliver.c's.
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "flow.h"
#include "link.h"

static int push_entry(void *ctx, const unsigned char *v, size_t n)
{
    return emq_reply_push_bulk(ctx, v, n);
}

/*
 * outbox_read(q, batch > 0) — T4.10 step 1: the first batch entries of
 * B.flow:outbox, head first, not removed. Keys: B.flow:outbox. Reply: the
 * entries (EMQ_OK). Clock: none (read transaction).
 */
int emq_v_outbox_read(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_OUTBOX);
    int rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0);
    if (rc < 0) return rc;
    rc = emq_list_range(c->st, k, kl, 0, c->a[1].i - 1, push_entry, c->r);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * outbox_trim(q, n >= 0) — T4.10 step 3: drop the first n entries of
 * B.flow:outbox. Keys: B.flow:outbox. Reply: OK (EMQ_OK). Clock: none.
 */
int emq_v_outbox_trim(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_OUTBOX);
    int rc = emq_list_trim(c->st, k, kl, c->a[1].i, -1);
    if (rc < 0) return rc;
    return emq_reply_status(c->r, "OK") < 0 ? EMQ_ENOMEM : EMQ_OK;
}

/*
 * reemit(q, id, error) — T4.14 REEMIT of node id in its queue q: without a
 * `parent` nothing happens; otherwise push-right onto B.flow:outbox the FAIL
 * entry (parent_queue when it differs from q, else q; parent; id; the
 * node's policy; error). Keys: J(id), B.flow:outbox. Replies: the outbox's
 * length after the push (EMQ_OK) · nil when the node has no parent
 * (EMQ_ABSENT). Clock: none.
 */
int emq_v_reemit(emq_vctx *c)
{
    int64_t len;
    int rc = emq_outbox_reemit(c->st, c->a[0].s, c->a[1].s, EMQ_ID_LEN,
                               c->a[2].s, c->a[2].n, &len);
    if (rc < 0) return rc;
    if (len < 0) {
        emq_reply_nil(c->r);
        return EMQ_ABSENT;
    }
    emq_reply_int(c->r, len);
    return EMQ_OK;
}

/* ------------------------------------------------------------ typed calls */

int emq_flow_outbox_read(emq_db *db, const char *q, int64_t batch,
                         emq_reply *entries_out)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(batch)};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (entries_out == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL entries");
    }
    return emq_verb_exec(db, EMQ_V_OUTBOX_READ, a, 2, entries_out, NULL);
}

int emq_flow_outbox_trim(emq_db *db, const char *q, int64_t n)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(n)};
    return emq_verb_exec(db, EMQ_V_OUTBOX_TRIM, a, 2, NULL, NULL);
}

int emq_flow_reemit(emq_db *db, const char *q, const char *id,
                    const void *error, size_t len, int64_t *outbox_len)
{
    emq_varg a[3] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_bytes(error, len)};
    emq_reply r = {0};
    int rc = emq_verb_exec(db, EMQ_V_REEMIT, a, 3, &r, NULL);
    if (outbox_len) *outbox_len = rc == EMQ_OK ? r.integer : 0;
    emq_reply_clear(&r);
    return rc;
}
