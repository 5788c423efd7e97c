/*
 * golden_emq.c — the emqlite executor of the golden replay.
 *
 * Owns: running one trace step on an emqlite handle and rendering its result
 * as the trace writes replies, and dumping the handle's store as a trace
 * keyspace (streams in the traces' stream shape, through storage/stream.h).
 * Each case gets a fresh ":memory:" handle whose injected clock
 * answers the step's `now`. Tier 1 verbs go through the public API of
 * emqlite.h; `raw` store writes and the keyspace dump go through the store
 * (storage/store.h) under the handle, reached with emq_db_store().
 *
 * Published messages: each case's handle carries a subscription to every
 * queue's events channel (emq_subscribe), whose callback keeps the
 * `progress` events published during a step; an update_progress step
 * reports them as its `published` value ([channel, message], or null).
 *
 * Rules: a verdict maps to the trace's reply value exactly as the reference
 * script answers (enqueue 1/0, complete 1/0, extend_lock 1/-1, retry
 * "scheduled"/"dead"); a wire error becomes {"error": emq_errmsg(db)}; any
 * other failure (a host gate, an I/O error) becomes {"emqlite_error": ...},
 * which no trace contains, so it always shows as a mismatch.
 */
#include "golden_emq.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "emqlite.h"
#include "emqlite_protocol.h"
#include "store.h"
#include "db.h"
#include "vjson.h"
#include "stream.h"

typedef struct emqx {
    emq_db *db;
    emq_sub *sub;
    int64_t now;
    emq_json *published;   /* the last progress event of the step, or NULL */
    int npublished;        /* progress events seen during the step          */
    int oom;
    uint64_t cell;   /* the trace's mint cell (ts << 12 | seq), per case */
} emqx;

/* The subscription's callback: keep the step's progress event. */
static void on_event(void *ctx, const emq_event *ev)
{
    emqx *x = ctx;
    emq_json *m;
    if (ev->name_len != 8 || memcmp(ev->name, "progress", 8) != 0)
        return; /* completed / failed / delayed: no trace records them */
    m = emq_json_new_array();
    if (!m || emq_json_push(m, emq_json_new_str(ev->channel,
                                                ev->channel_len)) ||
        emq_json_push(m, emq_json_new_str(ev->message, ev->message_len))) {
        emq_json_free(m);
        x->oom = 1;
        return;
    }
    emq_json_free(x->published);
    x->published = m;
    x->npublished++;
}

static int64_t virtual_clock(void *ctx)
{
    return ((emqx *)ctx)->now;
}

/* Ids a verb mints (the sweep's occurrences), as the traces minted them
 * (golden README, Time): PROTOCOL.md §4.2 from the virtual clock, node 1,
 * a cell that starts empty at each case. */
static int trace_mint(void *ctx, char out[EMQ_ID_SIZE])
{
    emqx *x = ctx;
    uint64_t floor = (uint64_t)(x->now - EMQ_EPOCH_MS) << 12;
    uint64_t cell = x->cell > floor ? x->cell : floor;
    x->cell = cell + 1;
    return emq_id_encode("JOB", (cell >> 12) << 22 | UINT64_C(1) << 12 |
                         (cell & 0xFFF), out);
}

static void say(emq_json_buf *b, const char *fmt, const char *a)
{
    char tmp[400];
    int n = snprintf(tmp, sizeof tmp, fmt, a);
    if (n > 0)
        emq_json_buf_puts(b, tmp, (size_t)n < sizeof tmp ? (size_t)n
                                                         : sizeof tmp - 1);
}

/* ------------------------------------------------------------ lifecycle */

static int x_begin(void *ctx, const emq_golden_case *c, emq_json_buf *err)
{
    emqx *x = ctx;
    emq_options o;
    char msg[256] = "";
    int rc;
    x->now = c->n ? c->steps[0].now : 0;
    emq_options_init(&o);
    o.clock = virtual_clock;
    o.clock_ctx = x;
    rc = emq_open_ex(":memory:", &o, &x->db, msg, sizeof msg);
    if (rc != EMQ_OK) {
        say(err, "emq_open(\":memory:\") failed: %s", msg[0] ? msg
                                                           : emq_strerror(rc));
        return -1;
    }
    rc = emq_subscribe(x->db, NULL, EMQ_SUB_NOW, on_event, x, &x->sub);
    if (rc != EMQ_OK) {
        say(err, "emq_subscribe failed: %s", emq_strerror(rc));
        emq_close(x->db);
        x->db = NULL;
        return -1;
    }
    x->cell = 0;
    emq_sched_set_mint_hook(x->db, trace_mint, x);
    return 0;
}

static void x_end(void *ctx)
{
    emqx *x = ctx;
    emq_unsubscribe(x->sub);
    x->sub = NULL;
    emq_close(x->db);
    x->db = NULL;
    emq_json_free(x->published);
    x->published = NULL;
}

static void x_clock(void *ctx, int64_t now)
{
    ((emqx *)ctx)->now = now;
}

/* ----------------------------------------------------------------- raw */

static int parse_score(const char *s, size_t n, double *out)
{
    char tmp[64], *end;
    if (n == 0 || n >= sizeof tmp)
        return 0;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    *out = strtod(tmp, &end);
    return *end == '\0';
}

/* Run a store command as Redis would answer it. */
static int raw_body(emq_store *st, int64_t now, const emq_json *cmd,
                    emq_json **reply, emq_json_buf *err)
{
    const char *name;
    emq_json *const *it = cmd->items;
    size_t n = cmd->n, k;
    int64_t total = 0;
    int rc = EMQ_OK;
    for (k = 0; k < n; k++)
        if (it[k]->type != EMQ_JSON_STRING) {
            say(err, "raw: %s", "every command word must be a string");
            return -1;
        }
    if (n < 2) {
        say(err, "raw: %s", "command too short");
        return -1;
    }
    name = it[0]->s;
#define KEY it[1]->s, it[1]->len
    if (strcasecmp(name, "DEL") == 0) {
        for (k = 1; k < n && rc >= 0; k++) {
            int d = 0;
            rc = emq_key_del(st, it[k]->s, it[k]->len, &d);
            total += d;
        }
    } else if (strcasecmp(name, "HSET") == 0 && n >= 4 && n % 2 == 0) {
        emq_bytes *fv = calloc(n - 2, sizeof *fv);
        int added = 0;
        if (!fv) {
            say(err, "raw: %s", "out of memory");
            return -1;
        }
        for (k = 2; k < n; k++) {
            fv[k - 2].p = it[k]->s;
            fv[k - 2].n = it[k]->len;
        }
        rc = emq_hash_set(st, KEY, fv, (n - 2) / 2, &added);
        free(fv);
        total = added;
    } else if (strcasecmp(name, "HDEL") == 0 && n >= 3) {
        for (k = 2; k < n && rc >= 0; k++) {
            int r = 0;
            rc = emq_hash_del(st, KEY, it[k]->s, it[k]->len, &r);
            total += r;
        }
    } else if (strcasecmp(name, "ZADD") == 0 && n >= 4 && n % 2 == 0) {
        for (k = 2; k < n && rc >= 0; k += 2) {
            double sc;
            int added = 0;
            if (!parse_score(it[k]->s, it[k]->len, &sc)) {
                say(err, "raw: ZADD score \"%s\" is not a number", it[k]->s);
                return -1;
            }
            rc = emq_zset_add(st, KEY, it[k + 1]->s, it[k + 1]->len, sc,
                              &added);
            total += added;
        }
    } else if (strcasecmp(name, "ZREM") == 0 && n >= 3) {
        for (k = 2; k < n && rc >= 0; k++) {
            int r = 0;
            rc = emq_zset_rem(st, KEY, it[k]->s, it[k]->len, &r);
            total += r;
        }
    } else if (strcasecmp(name, "SET") == 0 && (n == 3 || n == 5)) {
        int64_t at = -1, px;
        if (n == 5) {
            if (strcasecmp(it[3]->s, "PX") != 0 ||
                emq_parse_i64(it[4]->s, it[4]->len, &px) != 0 || px <= 0) {
                say(err, "raw: %s", "SET takes only PX <ms> here");
                return -1;
            }
            at = now + px;
        }
        rc = emq_str_set(st, KEY, it[2]->s, it[2]->len, at, 0, NULL);
        if (rc >= 0) {
            *reply = emq_json_new_str("OK", 2);
            return 0;
        }
    } else if (strcasecmp(name, "RPUSH") == 0 && n >= 3) {
        for (k = 2; k < n && rc >= 0; k++)
            rc = emq_list_push(st, KEY, 1, it[k]->s, it[k]->len, &total);
    } else if (strcasecmp(name, "SADD") == 0 && n >= 3) {
        for (k = 2; k < n && rc >= 0; k++) {
            int added = 0;
            rc = emq_sset_add(st, KEY, it[k]->s, it[k]->len, &added);
            total += added;
        }
    } else {
        say(err, "raw: unsupported command %s", name);
        return -1;
    }
#undef KEY
    if (rc == EMQ_EWRONGTYPE) {
        *reply = emq_golden_error_reply(EMQ_WRONGTYPE_MSG,
                                        strlen(EMQ_WRONGTYPE_MSG));
        return 0;
    }
    if (rc < 0) {
        say(err, "raw: store error: %s", emq_strerror(rc));
        return -1;
    }
    *reply = emq_json_new_int(total);
    return 0;
}

static int x_raw(emqx *x, const emq_golden_step *s, emq_golden_result *res,
                 emq_json_buf *err)
{
    emq_store *st = emq_db_store(x->db);
    const emq_json *cmd = emq_golden_arg(s, "command");
    emq_json *reply = NULL;
    int rc;
    if (!cmd || cmd->type != EMQ_JSON_ARRAY) {
        say(err, "raw: %s", "argument \"command\" missing or not an array");
        return -1;
    }
    rc = emq_store_begin(st, 1, x->now);
    if (rc != EMQ_OK) {
        say(err, "raw: begin: %s", emq_strerror(rc));
        return -1;
    }
    rc = raw_body(st, x->now, cmd, &reply, err);
    if (rc != 0 || !reply) {
        emq_store_rollback(st);
        emq_json_free(reply);
        if (rc == 0)
            say(err, "raw: %s", "out of memory");
        return -1;
    }
    rc = emq_store_commit(st);
    if (rc != EMQ_OK) {
        emq_json_free(reply);
        say(err, "raw: commit: %s", emq_strerror(rc));
        return -1;
    }
    res->reply = reply;
    return 0;
}

/* ---------------------------------------------------------------- verbs */

/*
 * The registry row a step runs. A step that is one part of a multi-part
 * verb and carries that verb's own name (a retry followed by its reemit)
 * is the verb's first transaction alone, registered as <verb>_tx: emqlite
 * folds the later parts (RECURSE-SQ) into the verb itself, which is what a
 * whole replay runs.
 */
static const emq_verb_info *row_of(const emq_golden_step *s)
{
    const emq_json *sv = s->seq ? emq_json_get(s->seq, "verb") : NULL;
    const emq_json *parts = s->seq ? emq_json_get(s->seq, "parts") : NULL;
    if (sv && sv->type == EMQ_JSON_STRING && strcmp(sv->s, s->verb) == 0 &&
        parts && parts->type == EMQ_JSON_INT && parts->i > 1) {
        char name[128];
        const emq_verb_info *v;
        snprintf(name, sizeof name, "%s_tx", s->verb);
        if ((v = emq_verb_find(name)) != NULL) return v;
    }
    return emq_verb_find(s->verb);
}

/* Every other verb is a registry row, run by its wire name with the step's
 * arguments (tests/vjson.h maps them). */
static int x_verb(emqx *x, const emq_golden_step *s, emq_golden_result *res,
                  emq_json_buf *err)
{
    const emq_verb_info *v = row_of(s);
    emq_vargv av;
    emq_reply r = {0};
    char msg[300] = "";
    int rc;
    if (v == NULL) {
        say(err, "verb \"%s\" is not in emqlite's registry", s->verb);
        return -1;
    }
    if (emq_vjson_args(v, s->args, &av, msg, sizeof msg) != 0) {
        say(err, "%s", msg);
        return -1;
    }
    emq_json_free(x->published);
    x->published = NULL;
    x->npublished = 0;
    rc = emq_call(x->db, v->name, av.argc, av.argv, av.len, &r);
    res->reply = emq_vjson_reply(&r, rc, emq_errmsg(x->db));
    emq_reply_clear(&r);
    emq_vargv_free(&av);
    if (!res->reply || x->oom) {
        say(err, "%s: out of memory", s->verb);
        return -1;
    }
    if (strcmp(s->verb, "update_progress") == 0) {
        if (x->npublished > 1) {
            say(err, "%s published more than one progress event", s->verb);
            return -1;
        }
        res->has_published = 1;
        res->published = x->published ? x->published : emq_json_new_null();
        x->published = NULL;
        if (!res->published) {
            say(err, "%s: out of memory", s->verb);
            return -1;
        }
    }
    return 0;
}

static int x_step(void *ctx, const emq_golden_step *s, emq_golden_result *res,
                  emq_json_buf *err)
{
    emqx *x = ctx;
    if (strcmp(s->verb, "raw") == 0)
        return x_raw(x, s, res, err);
    if (strcmp(s->verb, "advance") == 0) {
        res->reply = emq_json_new_null(); /* the clock already moved */
        return res->reply ? 0 : -1;
    }
    return x_verb(x, s, res, err);
}

/* -------------------------------------------------------- keyspace dump */

typedef struct keyname {
    unsigned char *p;
    size_t n;
    int type;
} keyname;

typedef struct keylist {
    keyname *v;
    size_t n, cap;
    int oom;
} keylist;

static int collect_key(void *ctx, const unsigned char *key, size_t klen,
                       int type)
{
    keylist *kl = ctx;
    if (kl->n == kl->cap) {
        size_t cap = kl->cap ? kl->cap * 2 : 32;
        keyname *nv = realloc(kl->v, cap * sizeof *nv);
        if (!nv) {
            kl->oom = 1;
            return 1;
        }
        kl->v = nv;
        kl->cap = cap;
    }
    kl->v[kl->n].p = malloc(klen + 1);
    if (!kl->v[kl->n].p) {
        kl->oom = 1;
        return 1;
    }
    memcpy(kl->v[kl->n].p, key, klen);
    kl->v[kl->n].n = klen;
    kl->v[kl->n].type = type;
    kl->n++;
    return 0;
}

/* Callback context: the value being built; `oom` set on failure. */
typedef struct fill {
    emq_json *v;
    int oom;
    int field_ttl; /* a hash field with its own expiry was seen */
} fill;

static int fill_field(void *ctx, const unsigned char *f, size_t flen,
                      const unsigned char *v, size_t vlen, int64_t expire_at)
{
    fill *fl = ctx;
    if (expire_at >= 0)
        fl->field_ttl = 1;
    if (emq_json_set(fl->v, f, flen, emq_json_new_str(v, vlen))) {
        fl->oom = 1;
        return 1;
    }
    return 0;
}

static int fill_member(void *ctx, const unsigned char *m, size_t mlen,
                       double score)
{
    fill *fl = ctx;
    emq_json *pair = emq_json_new_array();
    if (!pair || emq_json_push(pair, emq_json_new_str(m, mlen)) ||
        emq_json_push(pair, emq_golden_score(score)) ||
        emq_json_push(fl->v, pair)) {
        if (pair && pair->n < 2)
            emq_json_free(pair);
        fl->oom = 1;
        return 1;
    }
    return 0;
}

static int fill_value(void *ctx, const unsigned char *v, size_t vlen)
{
    fill *fl = ctx;
    if (emq_json_push(fl->v, emq_json_new_str(v, vlen))) {
        fl->oom = 1;
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ streams */

/* A stream as the traces write it: {"entries", "last_id", "entries_added",
 * "max_deleted_id", "groups": [{"name", "last_delivered_id",
 * "entries_read", "consumers", "pending"}]}. */
typedef struct sfill {
    emq_store *st;
    const keyname *k;
    emq_json *arr;   /* the array being filled */
    int oom;
} sfill;

static emq_json *xid_json(emq_xid id)
{
    char b[EMQ_XID_BUF];
    size_t n = emq_xid_fmt(b, id);
    return emq_json_new_str(b, n);
}

static int s_entry(void *ctx, emq_xid id, const emq_bytes *fv, size_t nfv)
{
    sfill *f = ctx;
    emq_json *e = emq_json_new_array(), *l = emq_json_new_array();
    if (!e || !l || emq_json_push(e, xid_json(id))) {
        emq_json_free(e);
        emq_json_free(l);
        f->oom = 1;
        return EMQ_ENOMEM;
    }
    for (size_t i = 0; i < nfv; i++)
        if (emq_json_push(l, emq_json_new_str(fv[i].p, fv[i].n))) {
            emq_json_free(e);
            emq_json_free(l);
            f->oom = 1;
            return EMQ_ENOMEM;
        }
    if (emq_json_push(e, l)) {
        emq_json_free(e);
        f->oom = 1;
        return EMQ_ENOMEM;
    }
    if (emq_json_push(f->arr, e)) {
        f->oom = 1;
        return EMQ_ENOMEM;
    }
    return EMQ_OK;
}

static int s_consumer(void *ctx, const unsigned char *c, size_t clen,
                      int64_t seen, int64_t active, int64_t pending)
{
    sfill *f = ctx;
    (void)seen, (void)active, (void)pending;
    if (emq_json_push(f->arr, emq_json_new_str(c, clen))) {
        f->oom = 1;
        return EMQ_ENOMEM;
    }
    return EMQ_OK;
}

static int s_pel(void *ctx, emq_xid id, const unsigned char *c, size_t clen,
                 int64_t delivered, int64_t count)
{
    sfill *f = ctx;
    emq_json *e = emq_json_new_array();
    if (!e || emq_json_push(e, xid_json(id)) ||
        emq_json_push(e, emq_json_new_str(c, clen)) ||
        emq_json_push(e, emq_json_new_int(delivered)) ||
        emq_json_push(e, emq_json_new_int(count))) {
        emq_json_free(e);
        f->oom = 1;
        return EMQ_ENOMEM;
    }
    if (emq_json_push(f->arr, e)) {
        f->oom = 1;
        return EMQ_ENOMEM;
    }
    return EMQ_OK;
}

static int s_group(void *ctx, const emq_xgroup_info *g)
{
    sfill *f = ctx, sub = *f;
    emq_json *o = emq_json_new_object(), *cons, *pel;
    int rc;
    if (!o || emq_json_push(f->arr, o) ||
        emq_json_set(o, "name", 4, emq_json_new_str(g->name, g->nlen)) ||
        emq_json_set(o, "last_delivered_id", 17, xid_json(g->last)) ||
        emq_json_set(o, "entries_read", 12, g->entries_read < 0
                     ? emq_json_new_null()
                     : emq_json_new_int(g->entries_read)) ||
        emq_json_set(o, "consumers", 9, cons = emq_json_new_array()) ||
        emq_json_set(o, "pending", 7, pel = emq_json_new_array())) {
        f->oom = 1;
        return EMQ_ENOMEM;
    }
    sub.arr = cons;
    if ((rc = emq_xs_consumers(f->st, f->k->p, f->k->n, g->name, g->nlen,
                               s_consumer, &sub)) != EMQ_OK)
        return rc;
    sub.arr = pel;
    rc = emq_xs_pel(f->st, f->k->p, f->k->n, g->name, g->nlen, NULL, 0, 0,
                    s_pel, &sub);
    f->oom |= sub.oom;
    return rc;
}

static int read_stream(emq_store *st, const keyname *k, emq_json **out)
{
    emq_xmeta m;
    emq_xid lo = { 0, 0 }, hi = { UINT64_MAX, UINT64_MAX };
    emq_json *o = emq_json_new_object(), *entries, *groups;
    sfill f = { st, k, NULL, 0 };
    int rc;
    *out = NULL;
    if (!o)
        return EMQ_ENOMEM;
    if ((rc = emq_xs_meta(st, k->p, k->n, &m)) != EMQ_OK)
        goto fail;
    if (emq_json_set(o, "entries", 7, entries = emq_json_new_array()) ||
        emq_json_set(o, "last_id", 7, xid_json(m.last)) ||
        emq_json_set(o, "entries_added", 13,
                     emq_json_new_int((int64_t)m.entries_added)) ||
        emq_json_set(o, "max_deleted_id", 14, xid_json(m.max_deleted)) ||
        emq_json_set(o, "groups", 6, groups = emq_json_new_array())) {
        rc = EMQ_ENOMEM;
        goto fail;
    }
    f.arr = entries;
    if ((rc = emq_xs_range(st, k->p, k->n, lo, hi, 0, 0, s_entry, &f)) != 0)
        goto fail;
    f.arr = groups;
    if ((rc = emq_xs_groups(st, k->p, k->n, s_group, &f)) != 0)
        goto fail;
    if (f.oom) {
        rc = EMQ_ENOMEM;
        goto fail;
    }
    *out = o;
    return EMQ_OK;
fail:
    emq_json_free(o);
    return rc < 0 ? rc : EMQ_ENOMEM;
}

/* Read one key's value into a trace value. */
static int read_key(emq_store *st, const keyname *k, emq_json **out,
                    const char **tname, emq_json_buf *err)
{
    fill fl = { NULL, 0, 0 };
    int rc = EMQ_OK;
    *out = NULL;
    switch (k->type) {
    case EMQ_T_STRING: {
        emq_buf b = { NULL, 0, 0 };
        *tname = "string";
        rc = emq_str_get(st, k->p, k->n, &b);
        if (rc == EMQ_OK)
            fl.v = emq_json_new_str(b.p ? (const char *)b.p : "", b.len);
        emq_buf_free(&b);
        break;
    }
    case EMQ_T_HASH:
        *tname = "hash";
        fl.v = emq_json_new_object();
        if (fl.v)
            rc = emq_hash_getall(st, k->p, k->n, fill_field, &fl);
        break;
    case EMQ_T_ZSET:
        *tname = "zset";
        fl.v = emq_json_new_array();
        if (fl.v)
            rc = emq_zset_range(st, k->p, k->n, 0, -1, fill_member, &fl);
        break;
    case EMQ_T_LIST:
        *tname = "list";
        fl.v = emq_json_new_array();
        if (fl.v)
            rc = emq_list_range(st, k->p, k->n, 0, -1, fill_value, &fl);
        break;
    case EMQ_T_SET:
        *tname = "set";
        fl.v = emq_json_new_array();
        if (fl.v)
            rc = emq_sset_members(st, k->p, k->n, fill_value, &fl);
        break;
    case EMQ_T_STREAM:
        *tname = "stream";
        rc = read_stream(st, k, &fl.v);
        if (rc < 0) {
            say(err, "dump: reading stream %s failed", (const char *)k->p);
            return -1;
        }
        break;
    default:
        say(err, "key %s has an unknown store type", (const char *)k->p);
        return -1;
    }
    if (!fl.v || fl.oom) {
        emq_json_free(fl.v);
        say(err, "dump: %s", "out of memory");
        return -1;
    }
    if (rc < 0 || rc == EMQ_NOTFOUND) {
        emq_json_free(fl.v);
        say(err, "dump: reading key %s failed", (const char *)k->p);
        return -1;
    }
    *out = fl.v;
    return 0;
}

static int x_dump(void *ctx, emq_json **ks_out, emq_json_buf *err)
{
    emqx *x = ctx;
    emq_store *st = emq_db_store(x->db);
    keylist kl = { NULL, 0, 0, 0 };
    emq_json *ks = NULL;
    size_t k;
    int rc, ok = -1;
    *ks_out = NULL;
    rc = emq_store_begin(st, 0, x->now);
    if (rc != EMQ_OK) {
        say(err, "dump: begin: %s", emq_strerror(rc));
        return -1;
    }
    rc = emq_key_scan(st, "", 0, collect_key, &kl);
    if (kl.oom || rc < 0) {
        say(err, "dump: key scan failed: %s",
            kl.oom ? "out of memory" : emq_strerror(rc));
        goto done;
    }
    ks = emq_json_new_object();
    if (!ks) {
        say(err, "dump: %s", "out of memory");
        goto done;
    }
    for (k = 0; k < kl.n; k++) {
        const keyname *kn = &kl.v[k];
        emq_json *val;
        const char *tname = "?";
        int64_t at = -1;
        kn->p[kn->n] = '\0';
        if (kn->n == strlen(EMQ_VERSION_KEY) &&
            memcmp(kn->p, EMQ_VERSION_KEY, kn->n) == 0)
            continue;
        if (read_key(st, kn, &val, &tname, err) != 0)
            goto done;
        rc = emq_key_expiry(st, kn->p, kn->n, &at);
        if (rc < 0) {
            emq_json_free(val);
            say(err, "dump: expiry of %s failed", (const char *)kn->p);
            goto done;
        }
        if (emq_golden_ks_add(ks, kn->p, kn->n, tname, val,
                              rc == EMQ_OK ? at : -1) != 0) {
            say(err, "dump: %s", "out of memory");
            goto done;
        }
    }
    *ks_out = ks;
    ks = NULL;
    ok = 0;
done:
    emq_store_rollback(st);
    emq_json_free(ks);
    for (k = 0; k < kl.n; k++)
        free(kl.v[k].p);
    free(kl.v);
    return ok;
}

/* ------------------------------------------------------------ loading */

static int load_key(emq_store *st, const emq_json_member *m)
{
    const emq_json *t = emq_json_get(m->val, "type");
    const emq_json *v = emq_json_get(m->val, "value");
    const emq_json *ex = emq_json_get(m->val, "expire_at");
    int64_t at = ex && ex->type == EMQ_JSON_INT ? ex->i : -1;
    size_t j;
    int rc = EMQ_OK, d;
    if (!t || t->type != EMQ_JSON_STRING || !v)
        return -1;
    if (strcmp(t->s, "stream") == 0)
        return 1;
    if (strcmp(t->s, "string") == 0 && v->type == EMQ_JSON_STRING)
        return emq_str_set(st, m->key, m->klen, v->s, v->len, at, 0, NULL) < 0
                   ? -1 : 0;
    if (strcmp(t->s, "hash") == 0 && v->type == EMQ_JSON_OBJECT) {
        for (j = 0; j < v->n && rc >= 0; j++) {
            emq_bytes fv[2] = {{v->members[j].key, v->members[j].klen},
                               {v->members[j].val->s,
                                v->members[j].val->len}};
            rc = emq_hash_set(st, m->key, m->klen, fv, 1, &d);
        }
    } else if (strcmp(t->s, "zset") == 0 && v->type == EMQ_JSON_ARRAY) {
        for (j = 0; j < v->n && rc >= 0; j++) {
            const emq_json *pr = v->items[j];
            double sc = pr->items[1]->type == EMQ_JSON_INT
                            ? (double)pr->items[1]->i : pr->items[1]->d;
            rc = emq_zset_add(st, m->key, m->klen, pr->items[0]->s,
                              pr->items[0]->len, sc, &d);
        }
    } else if (strcmp(t->s, "list") == 0 && v->type == EMQ_JSON_ARRAY) {
        for (j = 0; j < v->n && rc >= 0; j++) {
            int64_t len;
            rc = emq_list_push(st, m->key, m->klen, 1, v->items[j]->s,
                               v->items[j]->len, &len);
        }
    } else if (strcmp(t->s, "set") == 0 && v->type == EMQ_JSON_ARRAY) {
        for (j = 0; j < v->n && rc >= 0; j++)
            rc = emq_sset_add(st, m->key, m->klen, v->items[j]->s,
                              v->items[j]->len, &d);
    } else {
        return -1;
    }
    if (rc >= 0 && at >= 0)
        rc = emq_key_expire_at(st, m->key, m->klen, at);
    return rc < 0 ? -1 : 0;
}

int emq_golden_emq_load(emq_golden_exec *ex, const emq_json *ks,
                        emq_json_buf *err)
{
    emqx *x = ex->ctx;
    emq_store *st = emq_db_store(x->db);
    size_t i;
    int rc = emq_store_begin(st, 1, x->now), r = 0;
    if (rc != EMQ_OK) {
        say(err, "load: begin: %s", emq_strerror(rc));
        return -1;
    }
    for (i = 0; i < ks->n && r == 0; i++)
        r = load_key(st, &ks->members[i]);
    if (r != 0) {
        emq_store_rollback(st);
        if (r < 0)
            say(err, "load: cannot write key %s", ks->members[i - 1].key);
        return r;
    }
    rc = emq_store_commit(st);
    if (rc != EMQ_OK) {
        say(err, "load: commit: %s", emq_strerror(rc));
        return -1;
    }
    return 0;
}

/* -------------------------------------------------------------- public */

emq_db *emq_golden_emq_db(const emq_golden_exec *ex)
{
    return ex && ex->ctx ? ((const emqx *)ex->ctx)->db : NULL;
}

void emq_golden_emq_observe(emq_golden_exec *ex, const char *id, size_t n)
{
    emqx *x = ex->ctx;
    char ns[4];
    uint64_t snow, cell;
    if (emq_id_parse(id, n, ns, &snow) != EMQ_OK)
        return;
    cell = (snow >> 22) << 12 | (snow & 0xFFF);
    if (cell + 1 > x->cell)
        x->cell = cell + 1;
}

int emq_golden_emq_exec(emq_golden_exec *ex)
{
    emqx *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    memset(ex, 0, sizeof *ex);
    ex->name = "emqlite";
    ex->ctx = x;
    ex->case_begin = x_begin;
    ex->set_clock = x_clock;
    ex->run_step = x_step;
    ex->dump_keyspace = x_dump;
    ex->case_end = x_end;
    return 0;
}

void emq_golden_emq_exec_free(emq_golden_exec *ex)
{
    if (ex && ex->ctx) {
        emqx *x = ex->ctx;
        emq_unsubscribe(x->sub);
        emq_close(x->db);
        emq_json_free(x->published);
        free(x);
        ex->ctx = NULL;
    }
}
