/*
 * locks.c — T5.12 the lock plane (PROTOCOL.md §6.5): the lock key
 * J(id).lock and the row's `lock` field, each holding the holder's token
 * and expiring shortly after a crashed holder's lease; either makes
 * remove_job refuse EMQLOCK.
 *
 * Owns: the five store writes the reference issues as host commands, each a
 * registry verb replaying the golden traces' steps (lock_key_set,
 * lock_field_set, lock_key_del, lock_field_del, lock_key_refresh), and the
 * three helpers built from them — track, untrack, beat — each folded into
 * ONE transaction (strictly stronger than the reference's command
 * sequence: no crash leaves one marker without the other, and a beat's
 * extensions and refreshes share one NOW).
 *
 * The field TTL. PROTOCOL.md gives the lock field its own TTL (= the
 * marker TTL, §3.2, T5.12, D-19). The traces were recorded on Valkey 8.0.1,
 * which has no hash-field expiry: the reference's HPEXPIRE after
 * lock_field_set and lock_key_refresh was refused there and is no step, so
 * the `lock_field_set` verb writes the field exactly as recorded (no TTL).
 * lock_track and lock_beat do what the protocol says: they also give the
 * field the marker TTL (the store has per-field expiry), which an export
 * carries as HPEXPIREAT (Valkey >= 9.0).
 */
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"

/* J(id) and J(id).lock of the call's queue. */
typedef struct lkeys {
    char row[EMQ_KEY_MAX], lock[EMQ_KEY_MAX];
    size_t rowl, lockl;
} lkeys;

static void keys_of(const char *q, const char *id, lkeys *k)
{
    k->rowl = emq_key_of(k->row, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    k->lockl = emq_key_of(k->lock, q, EMQ_KT_JOB_LOCK, id, EMQ_ID_LEN);
}

/* SET J(id).lock token PX ttl. */
static int key_set(emq_store *st, const lkeys *k, int64_t token, int64_t now,
                   int64_t ttl)
{
    char num[24];
    size_t n = emq_fmt_i64(num, token);
    return emq_str_set(st, k->lock, k->lockl, num, n, now + ttl, 0, NULL);
}

/* HSET J(id) lock token; *added = fields created. */
static int field_set(emq_store *st, const lkeys *k, int64_t token,
                     int *added)
{
    char num[24];
    emq_bytes fv[2] = {{"lock", 4}, {num, 0}};
    fv[1].n = emq_fmt_i64(num, token);
    return emq_hash_set(st, k->row, k->rowl, fv, 1, added);
}

/* HPEXPIRE J(id) ttl FIELDS 1 lock (nothing when the field is absent). */
static int field_expire(emq_store *st, const lkeys *k, int64_t now,
                        int64_t ttl)
{
    int done;
    return emq_hash_expire_at(st, k->row, k->rowl, "lock", 4, now + ttl,
                              &done);
}

/* PEXPIRE J(id).lock ttl: *set = 1 when the key exists. */
static int key_refresh(emq_store *st, const lkeys *k, int64_t now,
                       int64_t ttl, int *set)
{
    int rc = emq_key_expire_at(st, k->lock, k->lockl, now + ttl);
    *set = rc == EMQ_OK;
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

/*
 * T5.12 lock_key_set(q, id, token, ttl_ms > 0) — track, part 1.
 * Keys: J(id).lock (SET ... PX ttl_ms). Reply: OK. Clock: NOW (expiry).
 */
int emq_v_lock_key_set(emq_vctx *c)
{
    lkeys k;
    int rc;
    keys_of(c->a[0].s, c->a[1].s, &k);
    if ((rc = key_set(c->st, &k, c->a[2].i, c->now, c->a[3].i)) < 0)
        return rc;
    return emq_reply_status(c->r, "OK");
}

/*
 * T5.12 lock_field_set(q, id, token) — track, part 2, as recorded: the
 * row's `lock` field, no field TTL (see the file comment).
 * Keys: J(id). Reply: the number of fields created (0/1). Clock: none.
 */
int emq_v_lock_field_set(emq_vctx *c)
{
    lkeys k;
    int added, rc;
    keys_of(c->a[0].s, c->a[1].s, &k);
    if ((rc = field_set(c->st, &k, c->a[2].i, &added)) < 0) return rc;
    emq_reply_int(c->r, added);
    return EMQ_OK;
}

/*
 * T5.12 lock_key_del(q, id) — untrack, part 1.
 * Keys: J(id).lock. Reply: 1 deleted, 0 absent. Clock: none.
 */
int emq_v_lock_key_del(emq_vctx *c)
{
    lkeys k;
    int deleted, rc;
    keys_of(c->a[0].s, c->a[1].s, &k);
    if ((rc = emq_key_del(c->st, k.lock, k.lockl, &deleted)) < 0) return rc;
    emq_reply_int(c->r, deleted);
    return EMQ_OK;
}

/*
 * T5.12 lock_field_del(q, id) — untrack, part 2.
 * Keys: J(id). Reply: 1 deleted, 0 absent. Clock: none.
 */
int emq_v_lock_field_del(emq_vctx *c)
{
    lkeys k;
    int removed, rc;
    keys_of(c->a[0].s, c->a[1].s, &k);
    if ((rc = emq_hash_del(c->st, k.row, k.rowl, "lock", 4, &removed)) < 0)
        return rc;
    emq_reply_int(c->r, removed);
    return EMQ_OK;
}

/*
 * T5.12 lock_key_refresh(q, id, ttl_ms > 0) — beat, per extended id.
 * Keys: J(id).lock (PEXPIRE). Reply: 1 reset, 0 no lock key. Clock: NOW.
 */
int emq_v_lock_key_refresh(emq_vctx *c)
{
    lkeys k;
    int set, rc;
    keys_of(c->a[0].s, c->a[1].s, &k);
    if ((rc = key_refresh(c->st, &k, c->now, c->a[2].i, &set)) < 0)
        return rc;
    emq_reply_int(c->r, set);
    return EMQ_OK;
}

/* ------------------------------------------------- the three helpers */

static int track_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    const emq_vctx *c = ctx;
    lkeys k;
    int added, rc;
    (void)db;
    keys_of(c->a[0].s, c->a[1].s, &k);
    if ((rc = key_set(st, &k, c->a[2].i, now, c->a[3].i)) < 0 ||
        (rc = field_set(st, &k, c->a[2].i, &added)) < 0)
        return rc;
    return field_expire(st, &k, now, c->a[3].i);
}

/*
 * T5.12 lock_track(q, id, token, marker_ttl_ms > 0) — one transaction:
 * lock_key_set, lock_field_set, and the field's TTL.
 * Keys: J(id).lock, J(id). Reply: nil. Clock: NOW (both expiries).
 */
int emq_v_lock_track(emq_vctx *c)
{
    int rc = emq_db_run(c->db, 1, track_tx, c);
    if (rc < 0) return rc;
    emq_reply_nil(c->r);
    return EMQ_OK;
}

static int untrack_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    const emq_vctx *c = ctx;
    lkeys k;
    int gone, rc;
    (void)db;
    (void)now;
    keys_of(c->a[0].s, c->a[1].s, &k);
    if ((rc = emq_key_del(st, k.lock, k.lockl, &gone)) < 0) return rc;
    return emq_hash_del(st, k.row, k.rowl, "lock", 4, &gone);
}

/*
 * T5.12 lock_untrack(q, id) — one transaction: lock_key_del,
 * lock_field_del. Keys: J(id).lock, J(id). Reply: nil. Clock: none.
 */
int emq_v_lock_untrack(emq_vctx *c)
{
    int rc = emq_db_run(c->db, 1, untrack_tx, c);
    if (rc < 0) return rc;
    emq_reply_nil(c->r);
    return EMQ_OK;
}

typedef struct beat {
    emq_vctx *c;
    emq_varg *sub;    /* extend_locks' arguments: q, lease_ms, pairs      */
    int *failed;      /* per pair: 1 when not extended                    */
    emq_reply dropped;
    int64_t extended;
} beat;

static int beat_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    beat *b = ctx;
    const emq_vctx *c = b->c;
    size_t n = (c->argc - 3) / 2, i;
    emq_vctx e;
    lkeys k;
    int set, rc;
    memset(&e, 0, sizeof e);
    e.db = db;
    e.st = st;
    e.now = now;
    e.v = emq_verb_get(EMQ_V_EXTEND_LOCKS);
    e.a = b->sub;
    e.argc = c->argc - 1;
    e.r = &b->dropped;
    e.out = b->failed;
    emq_reply_clear(&b->dropped);
    b->extended = 0;
    /* Part 1: T1.12 over every pair. */
    if ((rc = emq_v_extend_locks(&e)) < 0) return rc;
    /* Parts 2..: both markers of each extended id. */
    for (i = 0; i < n; i++) {
        if (b->failed[i]) continue;
        keys_of(c->a[0].s, c->a[3 + 2 * i].s, &k);
        if ((rc = key_refresh(st, &k, now, c->a[2].i, &set)) < 0 ||
            (rc = field_expire(st, &k, now, c->a[2].i)) < 0)
            return rc;
        b->extended++;
    }
    return EMQ_OK;
}

/*
 * T5.12 lock_beat(q, lease_ms > 0, marker_ttl_ms > 0, pairs) — one
 * transaction: extend_locks over the pairs, then for each extended id
 * lock_key_refresh and the field's TTL.
 * Keys: B.active, J(id_i).lock, J(id_i). Reply: {dropped: the ids not
 * extended, in input order; extended: how many were} (c->out, when given:
 * an int per pair, 1 when dropped). Clock: NOW, once.
 */
int emq_v_lock_beat(emq_vctx *c)
{
    size_t n = (c->argc - 3) / 2, i;
    beat b;
    emq_reply *e;
    int rc;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.sub = emq_mem_calloc(c->argc - 1, sizeof *b.sub);
    b.failed = emq_mem_calloc(n ? n : 1, sizeof *b.failed);
    if (b.sub == NULL || b.failed == NULL) {
        rc = EMQ_ENOMEM;
        goto done;
    }
    b.sub[0] = c->a[0];
    b.sub[1] = c->a[1];
    for (i = 0; i < 2 * n; i++) b.sub[2 + i] = c->a[3 + i];
    /* The map first, so that nothing needs memory after the commit. */
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_MAP, 4)) < 0 ||
        (rc = emq_reply_push_bulk(c->r, "dropped", 7)) < 0 ||
        (e = emq_reply_push(c->r)) == NULL ||
        (rc = emq_reply_push_bulk(c->r, "extended", 8)) < 0 ||
        (rc = emq_reply_push_int(c->r, 0)) < 0) {
        rc = rc < 0 ? rc : EMQ_ENOMEM;
        goto done;
    }
    if ((rc = emq_db_run(c->db, 1, beat_tx, &b)) < 0) goto done;
    c->r->elem[1] = b.dropped; /* the failed ids move into the map */
    memset(&b.dropped, 0, sizeof b.dropped);
    c->r->elem[3].integer = b.extended;
    if (c->out) memcpy(c->out, b.failed, n * sizeof *b.failed);
    rc = EMQ_OK;
done:
    emq_reply_clear(&b.dropped);
    emq_mem_free(b.sub);
    emq_mem_free(b.failed);
    return rc;
}

/* ------------------------------------------------------------ typed calls */

emq_lock_timing emq_lock_timing_compute(int64_t lease_ms, double ratio,
                                        double multiple)
{
    emq_lock_timing t;
    double x;
    if (ratio <= 0) ratio = 0.5;
    if (multiple <= 0) multiple = 2;
    if (lease_ms < 1) lease_ms = 1;
    x = (double)lease_ms * ratio + 0.5;
    t.extend_ms = x >= 9.2e18 ? INT64_MAX : (int64_t)x;
    if (t.extend_ms > lease_ms - 1) t.extend_ms = lease_ms - 1;
    if (t.extend_ms < 1) t.extend_ms = 1;
    x = (double)lease_ms * multiple + 0.5;
    t.marker_ttl_ms = x >= 9.2e18 ? INT64_MAX : (int64_t)x;
    if (t.marker_ttl_ms < 1) t.marker_ttl_ms = 1;
    return t;
}

int emq_lock_track(emq_db *db, const char *q, const char *id, int64_t token,
                   int64_t marker_ttl_ms)
{
    emq_varg a[4] = {emq_varg_str(q), emq_varg_str(id),
                     emq_varg_int(token), emq_varg_int(marker_ttl_ms)};
    return emq_verb_exec(db, EMQ_V_LOCK_TRACK, a, 4, NULL, NULL);
}

int emq_lock_untrack(emq_db *db, const char *q, const char *id)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(id)};
    return emq_verb_exec(db, EMQ_V_LOCK_UNTRACK, a, 2, NULL, NULL);
}

int emq_lock_beat(emq_db *db, const char *q, size_t n,
                  const char *const *ids, const int64_t *tokens,
                  int64_t lease_ms, int64_t marker_ttl_ms, int *dropped,
                  size_t *ndropped)
{
    char (*nums)[24] = NULL;
    emq_varg *a = NULL;
    emq_reply r = {0};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (ndropped) *ndropped = 0;
    if (n > 0 && (ids == NULL || tokens == NULL || dropped == NULL)) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL ids, tokens "
                                           "or dropped");
    }
    if ((a = emq_mem_calloc(3 + 2 * n, sizeof *a)) == NULL ||
        (nums = emq_mem_calloc(n ? n : 1, sizeof *nums)) == NULL) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    a[0] = emq_varg_str(q);
    a[1] = emq_varg_int(lease_ms);
    a[2] = emq_varg_int(marker_ttl_ms);
    for (i = 0; i < n; i++) {
        a[3 + 2 * i] = emq_varg_str(ids[i]);
        a[4 + 2 * i] = emq_varg_int(tokens[i]);
    }
    rc = emq_verb_exec(db, EMQ_V_LOCK_BEAT, a, 3 + 2 * n, &r, dropped);
    if (rc == EMQ_OK && ndropped) *ndropped = r.elem[1].n;
done:
    emq_reply_clear(&r);
    emq_mem_free(a);
    emq_mem_free(nums);
    return rc;
}
