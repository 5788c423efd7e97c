/*
 * pump.c — T5.9 the pump sweep (PROTOCOL.md §6.5) [multi-tx]: promote,
 * fire the due repeat registrations, deliver flow completions.
 *
 * Every step is a registry verb run as its own transition, in the
 * reference's order: promote(q, batch); repeat_due(q, batch); per due
 * registration either enqueue(q, <minted JOB id>, template) then
 * repeat_advance(q, name, every_ms), or repeat_cancel(q, name) when its
 * record lacks a field; then deliver_flow_completions(q, batch).
 *
 * Where a crash may cut it, and how the next run completes it: after
 * promote — nothing is lost, the next sweep promotes the rest; between an
 * occurrence's enqueue and its advance — the registration is still due,
 * so the next sweep fires it once more (a second occurrence with a fresh
 * id: occurrences are at least once per period, as in the reference);
 * after the advance or a cancel — nothing pending; in the delivery — the
 * outbox keeps the undelivered entries (T4.10 re-delivers).
 *
 * Failures: a step the store refuses for that registration alone (a
 * template above the handle's max_payload, a record's every_ms that is not
 * a positive integer, a key of the wrong type) skips the registration for
 * this tick — it stays due; a failure of the store itself (I/O, memory,
 * busy) ends the sweep with that failure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "jobs.h"
#include "link.h"
#include "rules.h"

#define SWEEP_BATCH 100

/* ------------------------------------------------ the registry and time */

/*
 * A repeat's next run is HOST-NOW + every_ms at its advance. A sweep under
 * a clock that ran ahead (an hour, say) scores it from that future, and once
 * the clock is back the registration stays silent until then (issue 27
 * item 16). So the sweep keeps, beside the keyspace (hostconf namespace
 * "repeat_hw", key the queue; never exported), the highest HOST-NOW at
 * which it fired anything. A sweep that finds HOST-NOW below that mark —
 * the clock went back — rebases, once: every registration scored more
 * than its period ahead of HOST-NOW, but no further than one period past
 * the mark (so that the advance of that future could have scored it; a
 * registration made with a long first_in_ms stays as it is), is scored
 * HOST-NOW + every_ms; then the mark is HOST-NOW.
 */
#define HW_NS "repeat_hw"

typedef struct rebase {
    const char *q;
    int64_t now;             /* HOST-NOW                                  */
    int fired;               /* 1: record the mark (after firing)         */
    emq_idlist names;
    double *scores;
    size_t nscores, cap;
} rebase;

static int collect(void *ctx, const unsigned char *m, size_t mlen, double s)
{
    rebase *r = ctx;
    if (r->nscores == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        double *v = emq_mem_realloc(r->scores, cap * sizeof *v);
        if (v == NULL) return EMQ_ENOMEM;
        r->scores = v;
        r->cap = cap;
    }
    r->scores[r->nscores++] = s;
    return emq_idlist_cb(&r->names, m, mlen, s);
}

static int hw_get(emq_store *st, const char *q, int64_t *hw)
{
    emq_buf v = {0};
    int rc = emq_hostconf_get(st, HW_NS, q, strlen(q), &v);
    *hw = INT64_MIN;
    if (rc == EMQ_OK && emq_parse_i64(v.p, v.len, hw) != 0) *hw = INT64_MIN;
    emq_buf_free(&v);
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

static int hw_put(emq_store *st, const char *q, int64_t hw)
{
    char num[24];
    int n = emq_fmt_i64(num, hw);
    return emq_hostconf_put(st, HW_NS, q, strlen(q), num, (size_t)n);
}

static int rebase_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    rebase *r = ctx;
    char k[EMQ_KEY_MAX];
    size_t kl, i;
    int64_t hw, every;
    emq_buf hk = {0}, v = {0};
    int rc, added;
    (void)db;
    (void)now;
    if ((rc = hw_get(st, r->q, &hw)) < 0) return rc;
    if (r->fired) {
        if (hw >= r->now) return EMQ_OK;
        return hw_put(st, r->q, r->now);
    }
    if (hw == INT64_MIN || hw <= r->now) return EMQ_OK;
    /* The clock went back: the registrations scored ahead of now. */
    kl = emq_key(k, r->q, EMQ_KT_REPEAT);
    rc = emq_zset_range_score(st, k, kl, (double)r->now + 1, INFINITY, -1,
                              collect, r);
    for (i = 0; rc >= 0 && i < r->names.n; i++) {
        const emq_buf *m = &r->names.v[i];
        if ((rc = emq_key_buf(&hk, r->q, EMQ_KT_REPEAT_RECORD, m->p,
                              m->len)) < 0 ||
            (rc = emq_hash_get(st, hk.p, hk.len, "every_ms", 8, &v)) < 0)
            break;
        if (rc != EMQ_OK || emq_parse_i64(v.p, v.len, &every) != 0 ||
            every <= 0) {
            rc = EMQ_OK;
            continue; /* the sweep cancels or skips it as before */
        }
        if (r->scores[i] > (double)r->now + (double)every &&
            r->scores[i] <= (double)hw + (double)every)
            rc = emq_zset_add(st, k, kl, m->p, m->len,
                              emq_score_add(r->now, every), &added);
    }
    emq_buf_free(&hk);
    emq_buf_free(&v);
    if (rc < 0) return rc;
    return hw_put(st, r->q, r->now);
}

/* The rebase (fired 0) or the mark (fired 1) for queue q at HOST-NOW. */
static int repeat_clock(emq_db *db, const char *q, int64_t host_now,
                        int fired)
{
    rebase r;
    int rc;
    memset(&r, 0, sizeof r);
    r.q = q;
    r.now = host_now;
    r.fired = fired;
    rc = emq_db_run(db, 1, rebase_tx, &r);
    emq_idlist_free(&r.names);
    emq_mem_free(r.scores);
    return rc;
}

typedef struct next_due {
    const char *q;
    double at;
} next_due;

static int first_score(void *ctx, const unsigned char *m, size_t mlen,
                       double s)
{
    (void)m;
    (void)mlen;
    *(double *)ctx = s;
    return 1;
}

static int next_due_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    next_due *n = ctx;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, n->q, EMQ_KT_REPEAT);
    int rc;
    (void)db;
    (void)now;
    n->at = INFINITY;
    rc = emq_zset_range(st, k, kl, 0, 1, first_score, &n->at);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_repeat_next_in(emq_db *db, const char *q, int64_t *in_ms)
{
    next_due n = {q, INFINITY};
    int64_t now;
    int rc = emq_db_run(db, 0, next_due_tx, &n);
    *in_ms = -1;
    if (rc < 0 || n.at == INFINITY) return rc < 0 ? rc : EMQ_OK;
    now = emq_host_now(db);
    if (n.at <= (double)now) *in_ms = 0;
    else if (n.at - (double)now < 9.2e18) *in_ms = (int64_t)ceil(n.at -
                                                              (double)now);
    return EMQ_OK;
}

int emq_sched_mint(emq_db *db, char out[EMQ_ID_SIZE])
{
    if (db->sched.mint) return db->sched.mint(db->sched.mint_ctx, out);
    return emq_mint(db, "JOB", out);
}

void emq_sched_set_mint_hook(emq_db *db, emq_mint_hook fn, void *ctx)
{
    db->sched.mint = fn;
    db->sched.mint_ctx = fn ? ctx : NULL;
}

/* A refusal that concerns one registration only (the sweep skips it). */
static int skippable(int rc)
{
    return rc == EMQ_EINVAL || rc == EMQ_ETOOBIG || rc == EMQ_EWRONGTYPE ||
           rc == EMQ_EKIND || rc == EMQ_EPROTO;
}

/* Step 2 for one due entry [name, every_ms | nil, template | nil]. */
static int fire(emq_db *db, const emq_varg *q, const emq_reply *e,
                int64_t *fired)
{
    char id[EMQ_ID_SIZE];
    const emq_reply *name = &e->elem[0], *every = &e->elem[1],
                    *tpl = &e->elem[2];
    emq_varg a[3];
    emq_reply r = {0};
    int rc;
    a[0] = *q;
    a[1] = emq_varg_bytes(name->str, name->len);
    if (every->type != EMQ_REPLY_BULK || tpl->type != EMQ_REPLY_BULK) {
        rc = emq_verb_exec(db, EMQ_V_REPEAT_CANCEL, a, 2, NULL, NULL);
        return rc < 0 && skippable(rc) ? EMQ_OK : rc;
    }
    /* The every_ms gate of repeat_advance judges the record's value;
     * check it first so that a bad one fires nothing. */
    {
        int64_t v;
        if (emq_parse_i64(every->str, every->len, &v) != 0 || v <= 0)
            return EMQ_OK;
    }
    if ((rc = emq_sched_mint(db, id)) < 0) return rc;
    a[1] = emq_varg_str(id);
    a[2] = emq_varg_bytes(tpl->str, tpl->len);
    rc = emq_verb_exec(db, EMQ_V_ENQUEUE, a, 3, &r, NULL);
    emq_reply_clear(&r);
    if (rc < 0) return skippable(rc) ? EMQ_OK : rc;
    if (rc == EMQ_ENQUEUED) (*fired)++;
    a[1] = emq_varg_bytes(name->str, name->len);
    a[2] = emq_varg_bytes(every->str, every->len);
    rc = emq_verb_exec(db, EMQ_V_REPEAT_ADVANCE, a, 3, NULL, NULL);
    return rc < 0 && skippable(rc) ? EMQ_OK : rc;
}

/* Setting aside the entry at the head of an outbox that DELIVER does not
 * take (malformed, or a parent id or queue that fails its gate): T4.10
 * stops at it, so every completion behind it would wait for good. */
typedef struct aside {
    const char *q;
    int moved;            /* 1: the head was bad and went to the tail     */
    int64_t len;          /* the outbox's length                           */
    char shown[100];      /* the entry, printable                          */
    const char *why;
} aside;

static int head_cb(void *ctx, const unsigned char *v, size_t n)
{
    emq_buf *b = ctx;
    return emq_buf_set(b, v, n) == EMQ_OK ? 0 : EMQ_ENOMEM;
}

/* One transaction: when the head entry is bad, move it to the tail (LMOVE
 * LEFT RIGHT: nothing is lost, and the entries behind it come first). */
static int set_aside_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    aside *a = ctx;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, a->q, EMQ_KT_OUTBOX);
    emq_buf e = {0};
    int rc;
    (void)db;
    (void)now;
    a->moved = 0;
    rc = emq_list_range(st, k, kl, 0, 0, head_cb, &e);
    if (rc >= 0 && e.p && !emq_outbox_deliverable(e.p, e.len, &a->why)) {
        emq_show_bytes(a->shown, sizeof a->shown, e.p, e.len);
        if ((rc = emq_list_trim(st, k, kl, 1, -1)) >= 0)
            rc = emq_list_push(st, k, kl, 1, e.p, e.len, &a->len);
        if (rc >= 0) a->moved = 1;
    }
    emq_buf_free(&e);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * T5.9 sweep(q, batch = 100 > 0) [multi-tx]
 * Keys: those of promote, repeat_due, enqueue, repeat_advance,
 * repeat_cancel and deliver_flow_completions. Reply: {delivered, fired,
 * promoted} (c->out, when given: an emq_sweep_counts). Clock: NOW per
 * transition; HOST-NOW for the registry.
 */
int emq_v_sweep(emq_vctx *c)
{
    const emq_verb_info *deliver;
    int64_t batch = c->a[1].present ? c->a[1].i : SWEEP_BATCH;
    emq_sweep_counts k = {0, 0, 0};
    int64_t host_now;
    emq_varg a[2];
    emq_reply r = {0};
    size_t i;
    int rc;

    a[0] = c->a[0];
    a[1] = emq_varg_int(batch);
    /* The reply map first (names in byte order, counts filled at the end),
     * so that nothing can fail for memory after a step committed. */
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_MAP, 6)) < 0 ||
        (rc = emq_reply_push_bulk(c->r, "delivered", 9)) < 0 ||
        (rc = emq_reply_push_int(c->r, 0)) < 0 ||
        (rc = emq_reply_push_bulk(c->r, "fired", 5)) < 0 ||
        (rc = emq_reply_push_int(c->r, 0)) < 0 ||
        (rc = emq_reply_push_bulk(c->r, "promoted", 8)) < 0 ||
        (rc = emq_reply_push_int(c->r, 0)) < 0)
        goto done;
    /* 1: promote. */
    if ((rc = emq_verb_exec(c->db, EMQ_V_PROMOTE, a, 2, &r, NULL)) < 0)
        goto done;
    k.promoted = r.integer;
    /* 2: the due registrations, each fired or cancelled — after the
     * rebase of a clock that went back (above). */
    host_now = emq_host_now(c->db);
    if ((rc = repeat_clock(c->db, c->a[0].s, host_now, 0)) < 0) goto done;
    if ((rc = emq_verb_exec(c->db, EMQ_V_REPEAT_DUE, a, 2, &r, NULL)) < 0)
        goto done;
    for (i = 0; i < r.n; i++)
        if ((rc = fire(c->db, &a[0], &r.elem[i], &k.fired)) < 0) goto done;
    if (k.fired > 0 &&
        (rc = repeat_clock(c->db, c->a[0].s, host_now, 1)) < 0)
        goto done;
    /* 3: deliver flow completions (T4.10, a procedure of its own). It is
     * built by the flows tier; a build without it has nothing to deliver:
     * 0, wired at merge by name. */
    deliver = emq_verb_find("deliver_flow_completions");
    if (deliver) {
        /* A pass that stops short of `batch` met the end of the outbox or
         * an entry DELIVER does not take; such an entry goes behind the
         * others (each at most once per sweep) and the pass runs again,
         * so that one bad entry never stalls the queue (issue 27). */
        aside sa;
        int64_t set = 0, first_len = 0;
        char first[100] = "";
        const char *why = NULL;
        memset(&sa, 0, sizeof sa);
        sa.q = c->a[0].s;
        for (;;) {
            if ((rc = emq_verb_exec(c->db, deliver->id, a, 2, &r, NULL)) < 0)
                goto done;
            k.delivered += r.type == EMQ_REPLY_INT ? r.integer : 0;
            if (r.type == EMQ_REPLY_INT && r.integer >= batch) break;
            if (set > 0 && set >= first_len) break;
            if ((rc = emq_db_run(c->db, 1, set_aside_tx, &sa)) < 0)
                goto done;
            if (!sa.moved) break;
            if (set++ == 0) {
                first_len = sa.len;
                memcpy(first, sa.shown, sizeof first);
                why = sa.why;
            }
        }
        if (set > 0) {
            char msg[EMQ_ERRMSG_MAX], ok[EMQ_KEY_MAX];
            emq_key(ok, sa.q, EMQ_KT_OUTBOX);
            snprintf(msg, sizeof msg, "sweep: set aside %lld undeliverable "
                     "entr%s of %.300s behind the others (emqlite check reports "
                     "%s); the first: \"%.64s\": %.60s", (long long)set,
                     set == 1 ? "y" : "ies", ok, set == 1 ? "it" : "them",
                     first, why ? why : "");
            emq_db_wire(c->db, EMQ_OK, msg);
        }
    }
    /* 4: the counts. */
    c->r->elem[1].integer = k.delivered;
    c->r->elem[3].integer = k.fired;
    c->r->elem[5].integer = k.promoted;
    if (c->out) *(emq_sweep_counts *)c->out = k;
    rc = EMQ_OK;
done:
    emq_reply_clear(&r);
    return rc;
}

int emq_sweep(emq_db *db, const char *q, int64_t batch,
              emq_sweep_counts *out)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(batch)};
    emq_sweep_counts k;
    int rc;
    if (out) memset(out, 0, sizeof *out);
    rc = emq_verb_exec(db, EMQ_V_SWEEP, a, 2, NULL, &k);
    if (rc == EMQ_OK && out) *out = k;
    return rc;
}
