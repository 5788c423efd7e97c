/*
 * flowreads.c — the flow reads: T4.8 children_values, ignored_failures and
 * dependencies (pure host reads in the reference), and flow_tree, emqlite's
 * own read of a whole flow below a parent with every node's state (the
 * CLI's `flow show`).
 *
 * Rules: each runs in one read transaction and writes nothing; map replies
 * are sorted by field bytes (the traces' order); everything returned to a
 * typed caller is a fresh copy it owns.
 */
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"
#include "link.h"

/* --------------------------------------------------------- field maps */

typedef struct pairs {
    emq_buf *f, *v;
    size_t n, cap;
} pairs;

static int pair_cb(void *ctx, const unsigned char *f, size_t fl,
                   const unsigned char *v, size_t vl, int64_t expire_at)
{
    pairs *p = ctx;
    (void)expire_at;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        emq_buf *nf = emq_mem_realloc(p->f, cap * sizeof *nf), *nv;
        if (nf == NULL) return EMQ_ENOMEM;
        p->f = nf;
        if ((nv = emq_mem_realloc(p->v, cap * sizeof *nv)) == NULL)
            return EMQ_ENOMEM;
        p->v = nv;
        memset(p->f + p->cap, 0, (cap - p->cap) * sizeof *p->f);
        memset(p->v + p->cap, 0, (cap - p->cap) * sizeof *p->v);
        p->cap = cap;
    }
    if (emq_buf_set(&p->f[p->n], f, fl) < 0 ||
        emq_buf_set(&p->v[p->n], v, vl) < 0)
        return EMQ_ENOMEM;
    p->n++;
    return 0;
}

static void pairs_free(pairs *p)
{
    size_t i;
    for (i = 0; i < p->cap; i++) {
        emq_buf_free(&p->f[i]);
        emq_buf_free(&p->v[i]);
    }
    emq_mem_free(p->f);
    emq_mem_free(p->v);
    memset(p, 0, sizeof *p);
}

static int bufcmp(const emq_buf *a, const emq_buf *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->p, b->p, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The hash J(id).<kt> of q as a map reply, fields in byte order. */
static int hash_map(emq_vctx *c, int kt)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, c->a[0].s, kt, c->a[1].s, EMQ_ID_LEN), i, j;
    pairs p = {NULL, NULL, 0, 0};
    int rc = emq_hash_getall(c->st, k, kl, pair_cb, &p);
    for (i = 1; rc >= 0 && i < p.n; i++) /* insertion sort: small maps */
        for (j = i; j > 0 && bufcmp(&p.f[j - 1], &p.f[j]) > 0; j--) {
            emq_buf t = p.f[j];
            p.f[j] = p.f[j - 1];
            p.f[j - 1] = t;
            t = p.v[j];
            p.v[j] = p.v[j - 1];
            p.v[j - 1] = t;
        }
    if (rc >= 0) rc = emq_reply_array(c->r, EMQ_REPLY_MAP, 2 * p.n);
    for (i = 0; rc >= 0 && i < p.n; i++)
        if ((rc = emq_reply_push_bulk(c->r, p.f[i].p, p.f[i].len)) >= 0)
            rc = emq_reply_push_bulk(c->r, p.v[i].p, p.v[i].len);
    pairs_free(&p);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * T4.8 children_values(q, parent): every field of J(p).processed (child id
 * -> result; a child completed without a result records its own id).
 * Keys: J(p).processed. Reply: a map, empty without the key (EMQ_OK).
 * Clock: none (read transaction).
 */
int emq_v_children_values(emq_vctx *c)
{
    return hash_map(c, EMQ_KT_JOB_PROCESSED);
}

/*
 * T4.8 ignored_failures(q, parent): every field of J(p).unsuccessful (child
 * id -> error of an `id`-policy child's death). Keys: J(p).unsuccessful.
 * Reply: a map (EMQ_OK). Clock: none (read transaction).
 */
int emq_v_ignored_failures(emq_vctx *c)
{
    return hash_map(c, EMQ_KT_JOB_UNSUCCESSFUL);
}

/* The integer of J(id).dependencies in q into *n (0 when absent): EMQ_OK,
 * EMQ_NOTFOUND (absent) or EMQ_EPROTO (not an integer). */
static int deps_of(emq_store *st, const char *q, const void *id, size_t idl,
                   int64_t *n)
{
    emq_buf k = {0}, v = {0};
    int rc = emq_key_buf(&k, q, EMQ_KT_JOB_DEPENDENCIES, id, idl);
    *n = 0;
    if (rc >= 0) rc = emq_str_get(st, k.p, k.len, &v);
    if (rc == EMQ_OK && emq_parse_i64(v.p, v.len, n) != 0) rc = EMQ_EPROTO;
    emq_buf_free(&k);
    emq_buf_free(&v);
    return rc;
}

/*
 * T4.8 dependencies(q, parent): the integer of J(p).dependencies, 0 when
 * absent. Keys: J(p).dependencies. Reply: an integer (EMQ_OK); a value that
 * is not an integer is "ERR value is not an integer or out of range"
 * (EMQ_EPROTO). Clock: none (read transaction).
 */
int emq_v_dependencies(emq_vctx *c)
{
    int64_t n;
    int rc = deps_of(c->st, c->a[0].s, c->a[1].s, EMQ_ID_LEN, &n);
    if (rc == EMQ_EPROTO)
        return emq_db_wire(c->db, rc, "ERR value is not an integer or out "
                                      "of range");
    if (rc < 0) return rc;
    emq_reply_int(c->r, n);
    return EMQ_OK;
}

/* ----------------------------------------------------------- flow_tree */

/* A job row with a `parent` field, or an outbox entry naming a parent. */
typedef struct link_rec {
    char q[EMQ_KEY_MAX];   /* the child's queue                         */
    emq_buf id, parent, pq; /* pq: the parent's queue (effective)        */
    emq_buf state;          /* the row's state (rows)                    */
    emq_buf value;          /* the entry's result or error (entries)     */
    int entry;              /* 0: a row; 1: a COMPLETE entry; 2: a FAIL  */
} link_rec;

typedef struct tree {
    emq_store *st;
    link_rec *r;
    size_t n, cap;
    emq_reply *out;
} tree;

static link_rec *rec_new(tree *t)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        link_rec *nr = emq_mem_realloc(t->r, cap * sizeof *nr);
        if (nr == NULL) return NULL;
        memset(nr + t->cap, 0, (cap - t->cap) * sizeof *nr);
        t->r = nr;
        t->cap = cap;
    }
    return &t->r[t->n++];
}

static void tree_free(tree *t)
{
    size_t i;
    for (i = 0; i < t->cap; i++) {
        emq_buf_free(&t->r[i].id);
        emq_buf_free(&t->r[i].parent);
        emq_buf_free(&t->r[i].pq);
        emq_buf_free(&t->r[i].state);
        emq_buf_free(&t->r[i].value);
    }
    emq_mem_free(t->r);
}

typedef struct entry_ctx {
    tree *t;
    const char *q;
} entry_ctx;

static int entry_cb(void *ctx, const unsigned char *v, size_t n)
{
    entry_ctx *e = ctx;
    emq_outbox_entry x;
    link_rec *r;
    if (!emq_outbox_parse(v, n, &x)) return 0;
    if ((r = rec_new(e->t)) == NULL) return EMQ_ENOMEM;
    memcpy(r->q, e->q, strlen(e->q) + 1);
    r->entry = x.fail ? 2 : 1;
    if (emq_buf_set(&r->id, x.child.p, x.child.n) < 0 ||
        emq_buf_set(&r->parent, x.parent.p, x.parent.n) < 0 ||
        emq_buf_set(&r->pq, x.pq.p, x.pq.n) < 0 ||
        emq_buf_set(&r->value, x.value.p, x.value.n) < 0)
        return EMQ_ENOMEM;
    return 0;
}

/* Collect every linked row and every outbox entry of the file. */
static int scan_cb(void *ctx, const unsigned char *key, size_t kl, int type)
{
    tree *t = ctx;
    emq_keyinfo ki;
    char q[EMQ_KEY_MAX];
    link_rec *r;
    emq_buf parent = {0};
    int rc;
    if (!emq_key_parse(key, kl, &ki) || ki.family != EMQ_K_QUEUE ||
        ki.qlen >= sizeof q)
        return 0;
    memcpy(q, ki.q, ki.qlen);
    q[ki.qlen] = 0;
    if (ki.kt == EMQ_KT_OUTBOX && type == EMQ_T_LIST) {
        entry_ctx e = {t, q};
        return emq_list_range(t->st, key, kl, 0, -1, entry_cb, &e);
    }
    if (!ki.is_job_row || type != EMQ_T_HASH) return 0;
    rc = emq_hash_get(t->st, key, kl, "parent", 6, &parent);
    if (rc != EMQ_OK) return rc < 0 ? rc : 0;
    if ((r = rec_new(t)) == NULL) {
        emq_buf_free(&parent);
        return EMQ_ENOMEM;
    }
    memcpy(r->q, q, ki.qlen + 1);
    r->parent = parent;
    if (emq_buf_set(&r->id, ki.id, EMQ_ID_LEN) < 0) return EMQ_ENOMEM;
    rc = emq_hash_get(t->st, key, kl, "parent_queue", 12, &r->pq);
    if (rc == EMQ_NOTFOUND) rc = emq_buf_set(&r->pq, q, ki.qlen);
    if (rc >= 0) rc = emq_hash_get(t->st, key, kl, "state", 5, &r->state);
    return rc < 0 ? rc : 0;
}

/* One child of a node while the node's children are merged. */
typedef struct kid {
    emq_buf id;
    const char *q;          /* the child's queue, NULL when unknown       */
    const emq_buf *state;   /* its row's state, NULL without a row        */
    const char *outcome;    /* processed / failed / ignored / in_outbox   */
    emq_buf value;
    int rank;               /* the outcome's precedence (lower wins)      */
} kid;

typedef struct kids {
    kid *v;
    size_t n, cap;
} kids;

static kid *kid_of(kids *k, const void *id, size_t n)
{
    size_t i;
    for (i = 0; i < k->n; i++)
        if (k->v[i].id.len == n && memcmp(k->v[i].id.p, id, n) == 0)
            return &k->v[i];
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 8;
        kid *nv = emq_mem_realloc(k->v, cap * sizeof *nv);
        if (nv == NULL) return NULL;
        memset(nv + k->cap, 0, (cap - k->cap) * sizeof *nv);
        k->v = nv;
        k->cap = cap;
    }
    if (emq_buf_set(&k->v[k->n].id, id, n) < 0) return NULL;
    k->v[k->n].rank = 9;
    return &k->v[k->n++];
}

static void kids_free(kids *k)
{
    size_t i;
    for (i = 0; i < k->cap; i++) {
        emq_buf_free(&k->v[i].id);
        emq_buf_free(&k->v[i].value);
    }
    emq_mem_free(k->v);
}

static int kid_outcome(kid *d, const char *outcome, int rank, const void *v,
                       size_t n)
{
    if (rank >= d->rank) return EMQ_OK;
    d->rank = rank;
    d->outcome = outcome;
    return emq_buf_set(&d->value, v, n);
}

typedef struct hash_kids {
    kids *k;
    const char *outcome;
    int rank;
} hash_kids;

static int hash_kid_cb(void *ctx, const unsigned char *f, size_t fl,
                       const unsigned char *v, size_t vl, int64_t expire_at)
{
    hash_kids *h = ctx;
    kid *d = kid_of(h->k, f, fl);
    (void)expire_at;
    if (d == NULL) return EMQ_ENOMEM;
    return kid_outcome(d, h->outcome, h->rank, v, vl);
}

static int cmp_kid(const void *a, const void *b)
{
    return bufcmp(&((const kid *)a)->id, &((const kid *)b)->id);
}

static int push_nil(emq_reply *m)
{
    emq_reply *e = emq_reply_push(m);
    if (e == NULL) return EMQ_ENOMEM;
    emq_reply_nil(e);
    return EMQ_OK;
}

/* Key k and value (v, n) — nil when v is NULL — onto map m. */
static int push_kv(emq_reply *m, const char *k, const void *v, size_t n)
{
    int rc = emq_reply_push_bulk(m, k, strlen(k));
    if (rc < 0) return rc;
    return v ? emq_reply_push_bulk(m, v, n) : push_nil(m);
}

/* The map of one node: id, level, queue, state, dependencies, outcome,
 * value (nil where unknown or none). */
static int node_map(tree *t, int level, const emq_buf *id, const char *q,
                    const emq_buf *state, const char *outcome,
                    const emq_buf *value)
{
    emq_reply *m = emq_reply_push(t->out);
    int64_t deps = 0;
    int has_deps = 0, rc;
    if (m == NULL) return EMQ_ENOMEM;
    if ((rc = emq_reply_array(m, EMQ_REPLY_MAP, 14)) < 0) return rc;
    if (q != NULL) {
        rc = deps_of(t->st, q, id->p, id->len, &deps);
        if (rc < 0 && rc != EMQ_EPROTO) return rc;
        has_deps = rc == EMQ_OK;
    }
    if ((rc = push_kv(m, "id", id->p, id->len)) < 0 ||
        (rc = emq_reply_push_bulk(m, "level", 5)) < 0 ||
        (rc = emq_reply_push_int(m, level)) < 0 ||
        (rc = push_kv(m, "queue", q, q ? strlen(q) : 0)) < 0 ||
        (rc = push_kv(m, "state", state ? state->p : NULL,
                      state ? state->len : 0)) < 0 ||
        (rc = emq_reply_push_bulk(m, "dependencies", 12)) < 0 ||
        (rc = has_deps ? emq_reply_push_int(m, deps) : push_nil(m)) < 0 ||
        (rc = push_kv(m, "outcome", outcome,
                      outcome ? strlen(outcome) : 0)) < 0)
        return rc;
    return push_kv(m, "value", value ? value->p : NULL,
                   value ? value->len : 0);
}

/* Nodes nest at most this deep in a reply (a tree is at most 8 levels; a
 * link cycle made by raw writes stops here). */
#define TREE_DEPTH 16

/* The children of node (q, id) at `level`, each followed by its own. */
static int children(tree *t, int level, const char *q, const emq_buf *id)
{
    static const struct { int kt; const char *outcome; } recs[] = {
        {EMQ_KT_JOB_PROCESSED, "processed"},
        {EMQ_KT_JOB_FAILED, "failed"},
        {EMQ_KT_JOB_UNSUCCESSFUL, "ignored"},
    };
    kids k = {NULL, 0, 0};
    emq_buf key = {0}, completed = {0};
    size_t i, ql = strlen(q);
    int rc = EMQ_OK;
    if (level > TREE_DEPTH) return EMQ_OK;
    for (i = 0; rc >= 0 && i < t->n; i++) {
        link_rec *r = &t->r[i];
        kid *d;
        if (bufcmp(&r->parent, id) != 0 || r->pq.len != ql ||
            memcmp(r->pq.p, q, ql) != 0)
            continue;
        if ((d = kid_of(&k, r->id.p, r->id.len)) == NULL) {
            rc = EMQ_ENOMEM;
            break;
        }
        if (r->entry == 0) {
            d->q = r->q;
            d->state = r->state.len ? &r->state : d->state;
        } else {
            if (d->q == NULL) d->q = r->q;
            rc = kid_outcome(d, "in_outbox", 3, r->value.p, r->value.len);
        }
    }
    for (i = 0; rc >= 0 && i < sizeof recs / sizeof *recs; i++) {
        hash_kids h = {&k, recs[i].outcome, (int)i};
        if ((rc = emq_key_buf(&key, q, recs[i].kt, id->p, id->len)) >= 0)
            rc = emq_hash_getall(t->st, key.p, key.len, hash_kid_cb, &h);
    }
    if (rc >= 0 && k.n > 1) qsort(k.v, k.n, sizeof *k.v, cmp_kid);
    if (rc >= 0) rc = emq_buf_set(&completed, "completed", 9);
    for (i = 0; rc >= 0 && i < k.n; i++) {
        kid *d = &k.v[i];
        const emq_buf *state = d->state;
        if (state == NULL && d->rank == 0) state = &completed;
        rc = node_map(t, level, &d->id, d->q, state, d->outcome,
                      d->outcome ? &d->value : NULL);
        if (rc >= 0 && d->q != NULL) rc = children(t, level + 1, d->q, &d->id);
    }
    kids_free(&k);
    emq_buf_free(&key);
    emq_buf_free(&completed);
    return rc;
}

/*
 * flow_tree(q, parent) — emqlite's read of the flow below `parent` in q:
 * the parent, then depth first every child (in id order) with its own
 * children. A child is found by its row's link (`parent`, and
 * `parent_queue` or the row's own queue naming q), by its field in the
 * parent's processed / failed / unsuccessful hash, or by an outbox entry
 * not yet delivered. Keys: every job row and outbox of the file (one scan).
 * Reply: one map per node — id, level (the parent 1), queue (nil when the
 * child's row is gone), state (the row's, "completed" for a processed child
 * whose row is gone, nil when unknown), dependencies (nil without the key),
 * outcome (processed, failed, ignored, in_outbox or nil) and value (the
 * result or error recorded) (EMQ_OK). Clock: none (read transaction).
 */
int emq_v_flow_tree(emq_vctx *c)
{
    tree t = {c->st, NULL, 0, 0, c->r};
    emq_buf id = {0}, state = {0}, jk = {0};
    int rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0);
    if (rc >= 0) rc = emq_key_scan(c->st, "emq:{", 5, scan_cb, &t);
    if (rc >= 0) rc = emq_buf_set(&id, c->a[1].s, EMQ_ID_LEN);
    if (rc >= 0) rc = emq_key_buf(&jk, c->a[0].s, EMQ_KT_JOB, id.p, id.len);
    if (rc >= 0) rc = emq_hash_get(c->st, jk.p, jk.len, "state", 5, &state);
    if (rc >= 0)
        rc = node_map(&t, 1, &id, c->a[0].s, rc == EMQ_OK ? &state : NULL,
                      NULL, NULL);
    if (rc >= 0) rc = children(&t, 2, c->a[0].s, &id);
    tree_free(&t);
    emq_buf_free(&id);
    emq_buf_free(&state);
    emq_buf_free(&jk);
    return rc < 0 ? rc : EMQ_OK;
}

/* ----------------------------------------------------------- typed calls */

static char *dup_reply(const emq_reply *r, size_t *len)
{
    char *s;
    if (r->type != EMQ_REPLY_BULK) {
        if (len) *len = 0;
        return NULL;
    }
    if ((s = emq_mem_malloc(r->len + 1)) == NULL) return NULL;
    if (r->len) memcpy(s, r->str, r->len);
    s[r->len] = 0;
    if (len) *len = r->len;
    return s;
}

/* A map reply as emq_field pairs. */
static int map_fields(emq_db *db, int verb, const char *q, const char *id,
                      emq_field **fields, size_t *n)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(id)};
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (fields) *fields = NULL;
    if (n) *n = 0;
    if (fields == NULL || n == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL fields or n");
    }
    if ((rc = emq_verb_exec(db, verb, a, 2, &r, NULL)) == EMQ_OK)
        rc = emq_reply_take_fields(db, &r, fields, n);
    emq_reply_clear(&r);
    return rc;
}

int emq_flow_children_values(emq_db *db, const char *q, const char *parent,
                             emq_field **fields, size_t *n)
{
    return map_fields(db, EMQ_V_CHILDREN_VALUES, q, parent, fields, n);
}

int emq_flow_ignored_failures(emq_db *db, const char *q, const char *parent,
                              emq_field **fields, size_t *n)
{
    return map_fields(db, EMQ_V_IGNORED_FAILURES, q, parent, fields, n);
}

int emq_flow_dependencies(emq_db *db, const char *q, const char *parent,
                          int64_t *n)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(parent)};
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL n");
    }
    rc = emq_verb_exec(db, EMQ_V_DEPENDENCIES, a, 2, &r, NULL);
    *n = rc == EMQ_OK ? r.integer : 0;
    emq_reply_clear(&r);
    return rc;
}

void emq_flow_tree_free(emq_flow_info *nodes, size_t n)
{
    size_t i;
    if (nodes == NULL) return;
    for (i = 0; i < n; i++) {
        emq_mem_free(nodes[i].id);
        emq_mem_free(nodes[i].queue);
        emq_mem_free(nodes[i].state);
        emq_mem_free(nodes[i].outcome);
        emq_mem_free(nodes[i].value);
    }
    emq_mem_free(nodes);
}

/* The value of key `k` in map reply m, or NULL. */
static const emq_reply *map_get(const emq_reply *m, const char *k)
{
    size_t i, n = strlen(k);
    for (i = 0; i + 1 < m->n; i += 2)
        if (m->elem[i].len == n && memcmp(m->elem[i].str, k, n) == 0)
            return &m->elem[i + 1];
    return NULL;
}

static int info_of(const emq_reply *m, emq_flow_info *f)
{
    const emq_reply *v;
    f->id = dup_reply(map_get(m, "id"), &f->id_len);
    v = map_get(m, "level");
    f->level = v && v->type == EMQ_REPLY_INT ? (int)v->integer : 0;
    f->queue = dup_reply(map_get(m, "queue"), NULL);
    f->state = dup_reply(map_get(m, "state"), NULL);
    v = map_get(m, "dependencies");
    f->has_dependencies = v && v->type == EMQ_REPLY_INT;
    f->dependencies = f->has_dependencies ? v->integer : 0;
    f->outcome = dup_reply(map_get(m, "outcome"), NULL);
    f->value = dup_reply(map_get(m, "value"), &f->value_len);
    if (f->id == NULL) return EMQ_ENOMEM;
#define LOST(k, p) ((v = map_get(m, k)) && v->type == EMQ_REPLY_BULK && !(p))
    if (LOST("queue", f->queue) || LOST("state", f->state) ||
        LOST("outcome", f->outcome) || LOST("value", f->value))
        return EMQ_ENOMEM;
#undef LOST
    return EMQ_OK;
}

int emq_flow_tree(emq_db *db, const char *q, const char *parent,
                  emq_flow_info **nodes, size_t *n)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(parent)};
    emq_reply r = {0};
    emq_flow_info *f = NULL;
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (nodes) *nodes = NULL;
    if (n) *n = 0;
    if (nodes == NULL || n == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL nodes or n");
    }
    if ((rc = emq_verb_exec(db, EMQ_V_FLOW_TREE, a, 2, &r, NULL)) != EMQ_OK)
        goto done;
    if ((f = emq_mem_calloc(r.n ? r.n : 1, sizeof *f)) == NULL) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    for (i = 0; i < r.n; i++)
        if (info_of(&r.elem[i], &f[i]) < 0) {
            emq_flow_tree_free(f, r.n);
            rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
            goto done;
        }
    *nodes = f;
    *n = r.n;
done:
    emq_reply_clear(&r);
    return rc;
}
