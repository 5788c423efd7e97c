/*
 * repeat.c — T5.8 the repeat registry (PROTOCOL.md §6.5): register,
 * cancel, advance, due and count, and the host clock they score with.
 *
 * Keys: B.repeat (zset: name -> next run ms) and B.repeat:<name> (hash:
 * every_ms, template). Clock: HOST-NOW for every score (D-11): read once
 * per transition from the host clock (emq_set_host_clock), which is the
 * handle's clock unless one is installed.
 *
 * Rule: a record decides existence (register answers 0 when the hash
 * exists, whatever the registry holds; advance of a name without a record
 * removes the name), the registry decides what is due.
 */
#include <math.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"

int64_t emq_host_now(emq_db *db)
{
    if (db->sched.host_clock)
        return db->sched.host_clock(db->sched.host_ctx);
    return db->clock(db->clock_ctx);
}

void emq_set_host_clock(emq_db *db, emq_clock_fn clock, void *ctx)
{
    if (db == NULL) return;
    db->sched.host_clock = clock;
    db->sched.host_ctx = clock ? ctx : NULL;
}

/* The registry key and the record key of `name`. */
typedef struct rkeys {
    char z[EMQ_KEY_MAX], h[EMQ_KEY_MAX];
    size_t zl, hl;
} rkeys;

static int keys_of(const emq_vctx *c, rkeys *k)
{
    const emq_varg *name = &c->a[1];
    k->zl = emq_key(k->z, c->a[0].s, EMQ_KT_REPEAT);
    k->hl = emq_key_of(k->h, c->a[0].s, EMQ_KT_REPEAT_RECORD, name->s,
                       name->n);
    return k->zl && k->hl ? EMQ_OK
                          : emq_db_wire(c->db, EMQ_EINVAL, "bad argument: "
                                        "name makes a key too long");
}

/*
 * T5.8 register(q, name, every_ms > 0, template, first_in_ms >= 0)
 * Keys: B.repeat, B.repeat:<name>. Replies: 1 registered (EMQ_OK) · 0
 * exists (EMQ_EXISTS: a record of that name, nothing changes).
 * Clock: HOST-NOW (score = HOST-NOW + first_in_ms).
 */
int emq_v_repeat_register(emq_vctx *c)
{
    rkeys k;
    char every[24];
    emq_bytes fv[4];
    int created, added, rc;
    int64_t now;
    if ((rc = keys_of(c, &k)) < 0) return rc;
    fv[0].p = "every_ms";
    fv[0].n = 8;
    fv[1].p = every;
    fv[1].n = emq_fmt_i64(every, c->a[2].i);
    fv[2].p = "template";
    fv[2].n = 8;
    fv[3].p = c->a[3].s;
    fv[3].n = c->a[3].n;
    /* Steps 1 and 2: only if the record key is absent (of any type, as
     * EXISTS answers). */
    if ((rc = emq_hash_create(c->st, k.h, k.hl, fv, 2, &created)) < 0)
        return rc;
    if (!created) {
        emq_reply_int(c->r, 0);
        return EMQ_EXISTS;
    }
    now = emq_host_now(c->db);
    rc = emq_zset_add(c->st, k.z, k.zl, c->a[1].s, c->a[1].n,
                      emq_score_add(now, c->a[4].i), &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/*
 * T5.8 cancel(q, name)
 * Keys: B.repeat, B.repeat:<name>. Replies: 1 cancelled (EMQ_OK: the name
 * was in the registry) · 0 absent (EMQ_ABSENT). The record is deleted
 * either way. Clock: none.
 */
int emq_v_repeat_cancel(emq_vctx *c)
{
    rkeys k;
    int removed, deleted, rc;
    if ((rc = keys_of(c, &k)) < 0) return rc;
    rc = emq_zset_rem(c->st, k.z, k.zl, c->a[1].s, c->a[1].n, &removed);
    if (rc < 0) return rc;
    if ((rc = emq_key_del(c->st, k.h, k.hl, &deleted)) < 0) return rc;
    emq_reply_int(c->r, removed);
    return removed ? EMQ_OK : EMQ_ABSENT;
}

/*
 * T5.8 advance(q, name, every_ms > 0)
 * Keys: B.repeat, B.repeat:<name>. Replies: 1 advanced (EMQ_OK: score =
 * HOST-NOW + every_ms) · 0 absent (EMQ_ABSENT: no record; the name is
 * removed from the registry). Clock: HOST-NOW.
 */
int emq_v_repeat_advance(emq_vctx *c)
{
    rkeys k;
    int type, added, rc;
    if ((rc = keys_of(c, &k)) < 0) return rc;
    if ((rc = emq_key_type(c->st, k.h, k.hl, &type)) < 0) return rc;
    if (type == EMQ_T_NONE) {
        rc = emq_zset_rem(c->st, k.z, k.zl, c->a[1].s, c->a[1].n, &added);
        if (rc < 0) return rc;
        emq_reply_int(c->r, 0);
        return EMQ_ABSENT;
    }
    rc = emq_zset_add(c->st, k.z, k.zl, c->a[1].s, c->a[1].n,
                      emq_score_add(emq_host_now(c->db), c->a[2].i), &added);
    if (rc < 0) return rc;
    emq_reply_int(c->r, 1);
    return EMQ_OK;
}

/* ------------------------------------------------------------- due reads */

typedef struct scores {
    int64_t *v;
    size_t n, cap;
} scores;

typedef struct due_walk {
    emq_vctx *c;
    emq_buf hk, v;
    scores *sc;        /* emq_repeat_list: each name's score, or NULL */
    int rc;
} due_walk;

/* One due name: [name, every_ms | nil, template | nil]. */
static int due_entry(void *ctx, const unsigned char *m, size_t mlen,
                     double score)
{
    static const char *const fields[2] = {"every_ms", "template"};
    due_walk *w = ctx;
    emq_reply *e;
    int i, rc = EMQ_ENOMEM;
    if (w->sc) {
        scores *sc = w->sc;
        if (sc->n == sc->cap) {
            size_t cap = sc->cap ? sc->cap * 2 : 16;
            int64_t *nv = emq_mem_realloc(sc->v, cap * sizeof *nv);
            if (nv == NULL) goto fail;
            sc->v = nv;
            sc->cap = cap;
        }
        sc->v[sc->n++] = (int64_t)score;
    }
    if ((rc = emq_key_buf(&w->hk, w->c->a[0].s, EMQ_KT_REPEAT_RECORD, m,
                          mlen)) < 0 ||
        (e = emq_reply_push(w->c->r)) == NULL ||
        (rc = emq_reply_array(e, EMQ_REPLY_ARRAY, 3)) < 0 ||
        (rc = emq_reply_push_bulk(e, m, mlen)) < 0)
        goto fail;
    for (i = 0; i < 2; i++) {
        rc = emq_hash_get(w->c->st, w->hk.p, w->hk.len, fields[i],
                          strlen(fields[i]), &w->v);
        if (rc < 0) goto fail;
        if (rc == EMQ_OK) rc = emq_reply_push_bulk(e, w->v.p, w->v.len);
        else if (emq_reply_push(e) == NULL) rc = EMQ_ENOMEM; /* nil */
        else rc = EMQ_OK;
        if (rc < 0) goto fail;
    }
    return 0;
fail:
    w->rc = rc < 0 ? rc : EMQ_ENOMEM;
    return 1;
}

/*
 * T5.8 due(q, limit > 0) — a pure read.
 * Keys: B.repeat, B.repeat:<name>. Reply: up to `limit` entries [name,
 * every_ms, template] of the names scored at or before HOST-NOW, in zset
 * order, each field nil when the record lacks it. Clock: HOST-NOW.
 */
int emq_v_repeat_due(emq_vctx *c)
{
    char zk[EMQ_KEY_MAX];
    size_t zkl = emq_key(zk, c->a[0].s, EMQ_KT_REPEAT);
    due_walk w = {c, {0}, {0}, NULL, EMQ_OK};
    int rc;
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0)) < 0) return rc;
    rc = emq_zset_range_score(c->st, zk, zkl, -INFINITY,
                              (double)emq_host_now(c->db), c->a[1].i,
                              due_entry, &w);
    if (rc > 0) rc = w.rc;
    emq_buf_free(&w.hk);
    emq_buf_free(&w.v);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * T5.8 count(q) — card(B.repeat). Keys: B.repeat. Reply: integer.
 * Clock: none.
 */
int emq_v_repeat_count(emq_vctx *c)
{
    char zk[EMQ_KEY_MAX];
    size_t zkl = emq_key(zk, c->a[0].s, EMQ_KT_REPEAT);
    int64_t n;
    int rc = emq_zset_card(c->st, zk, zkl, &n);
    if (rc < 0) return rc;
    emq_reply_int(c->r, n);
    return EMQ_OK;
}

/* ------------------------------------------------------------ typed calls */

static int name_call(emq_db *db, int verb, const char *q, const char *name,
                     emq_varg *extra, size_t nextra)
{
    emq_varg a[5];
    size_t i;
    a[0] = emq_varg_str(q);
    a[1] = emq_varg_str(name);
    for (i = 0; i < nextra; i++) a[2 + i] = extra[i];
    return emq_verb_exec(db, verb, a, 2 + nextra, NULL, NULL);
}

int emq_repeat_register(emq_db *db, const char *q, const char *name,
                        int64_t every_ms, const void *tpl, size_t len,
                        int64_t first_in_ms)
{
    emq_varg x[3] = {emq_varg_int(every_ms), emq_varg_bytes(tpl, len),
                     emq_varg_int(first_in_ms)};
    return name_call(db, EMQ_V_REPEAT_REGISTER, q, name, x, 3);
}

int emq_repeat_cancel(emq_db *db, const char *q, const char *name)
{
    return name_call(db, EMQ_V_REPEAT_CANCEL, q, name, NULL, 0);
}

int emq_repeat_advance(emq_db *db, const char *q, const char *name,
                       int64_t every_ms)
{
    emq_varg x[1] = {emq_varg_int(every_ms)};
    return name_call(db, EMQ_V_REPEAT_ADVANCE, q, name, x, 1);
}

int emq_repeat_count(emq_db *db, const char *q, int64_t *n)
{
    emq_varg a[1] = {emq_varg_str(q)};
    emq_reply r = {0};
    int rc;
    if (n) *n = 0;
    rc = emq_verb_exec(db, EMQ_V_REPEAT_COUNT, a, 1, &r, NULL);
    if (rc == EMQ_OK && n) *n = r.integer;
    emq_reply_clear(&r);
    return rc;
}

void emq_repeats_free(emq_repeat *r, size_t n)
{
    size_t i;
    if (r == NULL) return;
    for (i = 0; i < n; i++) {
        emq_mem_free(r[i].name);
        emq_mem_free(r[i].tpl);
    }
    emq_mem_free(r);
}

/* Move the bytes of element `e` (a bulk: emq_mem, NUL-terminated) out of
 * the reply; NULL for a nil. */
static char *take(emq_reply *e, size_t *n)
{
    char *p = NULL;
    *n = 0;
    if (e->type == EMQ_REPLY_BULK) {
        p = e->str;
        *n = e->len;
        e->str = NULL;
        e->type = EMQ_REPLY_NIL;
    }
    return p;
}

/* Fill registrations from a due reply (entries [name, every, template]);
 * scores from `next` (one per entry) when given. */
static int from_reply(emq_reply *r, const int64_t *next, emq_repeat **out,
                      size_t *n)
{
    emq_repeat *v;
    size_t i;
    *out = NULL;
    *n = 0;
    if ((v = emq_mem_calloc(r->n ? r->n : 1, sizeof *v)) == NULL)
        return EMQ_ENOMEM;
    for (i = 0; i < r->n; i++) {
        emq_reply *e = r->elem[i].elem;
        char *every;
        size_t elen;
        v[i].name = take(&e[0], &v[i].name_len);
        v[i].tpl = (unsigned char *)take(&e[2], &v[i].tpl_len);
        every = take(&e[1], &elen);
        if (every == NULL || emq_parse_i64(every, elen, &v[i].every_ms) != 0)
            v[i].every_ms = -1;
        emq_mem_free(every);
        v[i].next_ms = next ? next[i] : 0;
    }
    *out = v;
    *n = r->n;
    return EMQ_OK;
}

typedef struct list_ctx {
    const char *q;
    emq_reply *r;
    scores sc;
} list_ctx;

/* emq_repeat_list: the due read's entries over the whole registry, plus
 * each name's score, in one read transaction. */
static int list_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    list_ctx *l = ctx;
    emq_varg a[1] = {emq_varg_str(l->q)};
    emq_vctx c;
    char zk[EMQ_KEY_MAX];
    size_t zkl = emq_key(zk, l->q, EMQ_KT_REPEAT);
    due_walk w;
    int rc;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.st = st;
    c.now = now;
    c.a = a;
    c.argc = 1;
    c.r = l->r;
    l->sc.n = 0;
    emq_reply_clear(l->r);
    if ((rc = emq_reply_array(l->r, EMQ_REPLY_ARRAY, 0)) < 0) return rc;
    memset(&w, 0, sizeof w);
    w.c = &c;
    w.sc = &l->sc;
    rc = emq_zset_range(st, zk, zkl, 0, -1, due_entry, &w);
    if (rc > 0) rc = w.rc;
    emq_buf_free(&w.hk);
    emq_buf_free(&w.v);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_repeat_list(emq_db *db, const char *q, emq_repeat **out, size_t *n)
{
    emq_reply r = {0};
    list_ctx l = {q, &r, {NULL, 0, 0}};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (out) *out = NULL;
    if (n) *n = 0;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (out == NULL || n == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL output");
    rc = emq_db_run(db, 0, list_tx, &l);
    if (rc >= 0 && l.sc.n != r.n) rc = emq_db_fail(db, EMQ_EINTERNAL, NULL);
    if (rc >= 0 && (rc = from_reply(&r, l.sc.v, out, n)) < 0)
        emq_db_fail(db, rc, NULL);
    emq_reply_clear(&r);
    emq_mem_free(l.sc.v);
    return rc;
}

int emq_repeat_due(emq_db *db, const char *q, int64_t limit,
                   emq_repeat **out, size_t *n)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(limit)};
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (out) *out = NULL;
    if (n) *n = 0;
    if (out == NULL || n == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL output");
    }
    rc = emq_verb_exec(db, EMQ_V_REPEAT_DUE, a, 2, &r, NULL);
    if (rc == EMQ_OK && (rc = from_reply(&r, NULL, out, n)) < 0)
        emq_db_fail(db, rc, NULL);
    emq_reply_clear(&r);
    return rc;
}
