/*
 * golden_emq.c — the emqlite executor of the golden replay.
 *
 * Owns: running one trace step on an emqlite handle and rendering its result
 * as the trace writes replies, and dumping the handle's store as a trace
 * keyspace. Each case gets a fresh ":memory:" handle whose injected clock
 * answers the step's `now`. Tier 1 verbs go through the public API of
 * emqlite.h; `raw` store writes and the keyspace dump go through the store
 * (storage/store.h) under the handle, reached with emq_db_store().
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
#include "store.h"
#include "db.h"

typedef struct emqx {
    emq_db *db;
    int64_t now;
} emqx;

static int64_t virtual_clock(void *ctx)
{
    return ((emqx *)ctx)->now;
}

static void say(emq_json_buf *b, const char *fmt, const char *a)
{
    char tmp[400];
    int n = snprintf(tmp, sizeof tmp, fmt, a);
    if (n > 0)
        emq_json_buf_puts(b, tmp, (size_t)n < sizeof tmp ? (size_t)n
                                                         : sizeof tmp - 1);
}

/* ============================================================ lifecycle */

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
    return 0;
}

static void x_end(void *ctx)
{
    emqx *x = ctx;
    emq_close(x->db);
    x->db = NULL;
}

static void x_clock(void *ctx, int64_t now)
{
    ((emqx *)ctx)->now = now;
}

/* ============================================================== replies */

static int is_wire(int rc)
{
    return rc == EMQ_EKIND || rc == EMQ_ESTALE || rc == EMQ_EWRONGTYPE;
}

/* The reply for a negative result. */
static emq_json *fail_reply(emq_db *db, int rc)
{
    const char *m = emq_errmsg(db);
    emq_json *o;
    char tmp[600];
    if (is_wire(rc))
        return emq_golden_error_reply(m, strlen(m));
    o = emq_json_new_object();
    if (!o)
        return NULL;
    snprintf(tmp, sizeof tmp, "%s (%d): %s", emq_strerror(rc), rc, m);
    if (emq_json_set(o, "emqlite_error", 13,
                     emq_json_new_str(tmp, strlen(tmp)))) {
        emq_json_free(o);
        return NULL;
    }
    return o;
}

/* A verdict that is not one of the expected ones. */
static emq_json *odd_verdict(const char *verb, int rc)
{
    char tmp[120];
    emq_json *o = emq_json_new_object();
    if (!o)
        return NULL;
    snprintf(tmp, sizeof tmp, "%s returned unexpected verdict %d", verb, rc);
    if (emq_json_set(o, "emqlite_verdict", 15,
                     emq_json_new_str(tmp, strlen(tmp)))) {
        emq_json_free(o);
        return NULL;
    }
    return o;
}

/* ============================================================ arguments */

typedef struct argv_ {
    const emq_golden_step *s;
    emq_json_buf *err;
    int bad;
} argv_;

static const char *a_str(argv_ *a, const char *name, size_t *len)
{
    const char *p = "";
    size_t n = 0;
    if (emq_golden_arg_str(a->s, name, &p, &n) != 0) {
        if (!a->bad)
            say(a->err, "argument \"%s\" missing or not a string", name);
        a->bad = 1;
        return "";
    }
    if (len)
        *len = n;
    return p;
}

/* A C string argument (queue, id): must not contain NUL. */
static const char *a_cstr(argv_ *a, const char *name)
{
    size_t n = 0;
    const char *p = a_str(a, name, &n);
    if (!a->bad && strlen(p) != n) {
        say(a->err, "argument \"%s\" contains NUL", name);
        a->bad = 1;
    }
    return p;
}

static int64_t a_int(argv_ *a, const char *name)
{
    int64_t v = 0;
    if (emq_golden_arg_int(a->s, name, &v) != 0) {
        if (!a->bad)
            say(a->err, "argument \"%s\" missing or not an integer", name);
        a->bad = 1;
    }
    return v;
}

/* ================================================================= raw */

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
                !emq_parse_i64(it[4]->s, it[4]->len, &px) || px <= 0) {
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

/* ================================================================ verbs */

static emq_json *claim_reply(emq_job *job)
{
    emq_json *arr = emq_json_new_array();
    if (!arr)
        return NULL;
    if (emq_json_push(arr, emq_json_new_str(job->id, strlen(job->id))) ||
        emq_json_push(arr, job->payload
                               ? emq_json_new_str(job->payload,
                                                  job->payload_len)
                               : emq_json_new_null()) ||
        emq_json_push(arr, emq_json_new_int(job->attempts))) {
        emq_json_free(arr);
        return NULL;
    }
    return arr;
}

static emq_json *v_enqueue(emqx *x, argv_ *a, const char *verb)
{
    const char *q = a_cstr(a, "q"), *id = a_cstr(a, "id");
    size_t plen = 0;
    const char *p = a_str(a, "payload", &plen);
    int rc;
    if (a->bad)
        return NULL;
    if (strcmp(verb, "enqueue") == 0)
        rc = emq_enqueue(x->db, q, id, p, plen);
    else if (strcmp(verb, "enqueue_at") == 0) {
        int64_t at = a_int(a, "run_at_ms");
        if (a->bad)
            return NULL;
        rc = emq_enqueue_at(x->db, q, id, p, plen, at);
    } else {
        int64_t d = a_int(a, "delay_ms");
        if (a->bad)
            return NULL;
        rc = emq_enqueue_in(x->db, q, id, p, plen, d);
    }
    if (rc == EMQ_ENQUEUED || rc == EMQ_SCHEDULED)
        return emq_json_new_int(1);
    if (rc == EMQ_DUPLICATE)
        return emq_json_new_int(0);
    return rc < 0 ? fail_reply(x->db, rc) : odd_verdict(verb, rc);
}

static emq_json *v_claim(emqx *x, argv_ *a)
{
    const char *q = a_cstr(a, "q");
    int64_t lease = a_int(a, "lease_ms");
    emq_job job;
    emq_json *r;
    int rc;
    if (a->bad)
        return NULL;
    memset(&job, 0, sizeof job);
    rc = emq_claim(x->db, q, lease, &job);
    if (rc == EMQ_EMPTY)
        return emq_json_new_array();
    if (rc != EMQ_OK)
        return rc < 0 ? fail_reply(x->db, rc) : odd_verdict("claim", rc);
    r = claim_reply(&job);
    emq_job_clear(&job);
    return r;
}

static emq_json *v_complete(emqx *x, argv_ *a)
{
    const char *q = a_cstr(a, "q"), *id = a_cstr(a, "id");
    int64_t tok = a_int(a, "token");
    int rc;
    if (a->bad)
        return NULL;
    rc = emq_complete(x->db, q, id, tok);
    if (rc == EMQ_OK)
        return emq_json_new_int(1);
    if (rc == EMQ_GONE)
        return emq_json_new_int(0);
    return rc < 0 ? fail_reply(x->db, rc) : odd_verdict("complete", rc);
}

static emq_json *v_retry(emqx *x, argv_ *a)
{
    const char *q = a_cstr(a, "q"), *id = a_cstr(a, "id");
    int64_t tok = a_int(a, "token"), delay = a_int(a, "delay_ms");
    int64_t max = a_int(a, "max_attempts");
    size_t elen = 0;
    const char *e = a_str(a, "error", &elen);
    int rc;
    if (a->bad)
        return NULL;
    rc = emq_retry(x->db, q, id, tok, delay, max, e, elen);
    if (rc == EMQ_SCHEDULED)
        return emq_json_new_str("scheduled", 9);
    if (rc == EMQ_DEAD)
        return emq_json_new_str("dead", 4);
    return rc < 0 ? fail_reply(x->db, rc) : odd_verdict("retry", rc);
}

static emq_json *v_count(emqx *x, argv_ *a, const char *verb)
{
    const char *q = a_cstr(a, "q");
    int64_t n = 0, batch = 0;
    int rc;
    if (strcmp(verb, "promote") == 0)
        batch = a_int(a, "batch");
    if (a->bad)
        return NULL;
    if (strcmp(verb, "promote") == 0)
        rc = emq_promote(x->db, q, batch, &n);
    else if (strcmp(verb, "reap") == 0)
        rc = emq_reap(x->db, q, &n);
    else
        rc = emq_pending_size(x->db, q, &n);
    if (rc == EMQ_OK)
        return emq_json_new_int(n);
    return rc < 0 ? fail_reply(x->db, rc) : odd_verdict(verb, rc);
}

static emq_json *v_extend_lock(emqx *x, argv_ *a)
{
    const char *q = a_cstr(a, "q"), *id = a_cstr(a, "id");
    int64_t tok = a_int(a, "token"), lease = a_int(a, "lease_ms");
    int rc;
    if (a->bad)
        return NULL;
    rc = emq_extend_lock(x->db, q, id, tok, lease);
    if (rc == EMQ_OK)
        return emq_json_new_int(1);
    if (rc == EMQ_GONE)
        return emq_json_new_int(-1);
    return rc < 0 ? fail_reply(x->db, rc) : odd_verdict("extend_lock", rc);
}

static emq_json *v_extend_locks(emqx *x, argv_ *a)
{
    const char *q = a_cstr(a, "q");
    int64_t lease = a_int(a, "lease_ms");
    const emq_json *pairs = emq_golden_arg(a->s, "pairs");
    const char **ids = NULL;
    int64_t *toks = NULL;
    int *failed = NULL;
    emq_json *r = NULL;
    size_t n, k, nf = 0;
    int rc;
    if (a->bad)
        return NULL;
    if (!pairs || pairs->type != EMQ_JSON_ARRAY) {
        say(a->err, "argument \"%s\" missing or not an array", "pairs");
        a->bad = 1;
        return NULL;
    }
    n = pairs->n;
    ids = calloc(n + 1, sizeof *ids);
    toks = calloc(n + 1, sizeof *toks);
    failed = calloc(n + 1, sizeof *failed);
    if (!ids || !toks || !failed)
        goto done;
    for (k = 0; k < n; k++) {
        const emq_json *p = pairs->items[k];
        if (p->type != EMQ_JSON_ARRAY || p->n != 2 ||
            p->items[0]->type != EMQ_JSON_STRING ||
            p->items[1]->type != EMQ_JSON_INT) {
            say(a->err, "pairs: %s", "each pair must be [id, token]");
            a->bad = 1;
            goto done;
        }
        ids[k] = p->items[0]->s;
        toks[k] = p->items[1]->i;
    }
    rc = emq_extend_locks(x->db, q, n, ids, toks, lease, failed, &nf);
    if (rc != EMQ_OK) {
        r = rc < 0 ? fail_reply(x->db, rc) : odd_verdict("extend_locks", rc);
        goto done;
    }
    r = emq_json_new_array();
    for (k = 0; r && k < n; k++)
        if (failed[k] && emq_json_push(r, emq_json_new_str(ids[k],
                                                           strlen(ids[k])))) {
            emq_json_free(r);
            r = NULL;
        }
done:
    free(ids);
    free(toks);
    free(failed);
    return r;
}

static emq_json *v_browse(emqx *x, argv_ *a)
{
    const char *q = a_cstr(a, "q");
    int64_t n = a_int(a, "n");
    char (*ids)[EMQ_ID_SIZE];
    size_t count = 0, k;
    emq_json *r = NULL;
    int rc;
    if (a->bad)
        return NULL;
    if (n <= 0 || n > 1000000) {
        say(a->err, "browse: n out of range%s", "");
        a->bad = 1;
        return NULL;
    }
    ids = calloc((size_t)n, sizeof *ids);
    if (!ids)
        return NULL;
    rc = emq_browse(x->db, q, (size_t)n, ids, &count);
    if (rc != EMQ_OK) {
        r = rc < 0 ? fail_reply(x->db, rc) : odd_verdict("browse", rc);
    } else {
        r = emq_json_new_array();
        for (k = 0; r && k < count; k++)
            if (emq_json_push(r, emq_json_new_str(ids[k], strlen(ids[k])))) {
                emq_json_free(r);
                r = NULL;
            }
    }
    free(ids);
    return r;
}

static emq_json *v_pause(emqx *x, argv_ *a, int pause)
{
    const char *q = a_cstr(a, "q");
    int rc;
    if (a->bad)
        return NULL;
    rc = pause ? emq_pause(x->db, q) : emq_resume(x->db, q);
    if (rc == EMQ_OK)
        return emq_json_new_int(1);
    return rc < 0 ? fail_reply(x->db, rc)
                  : odd_verdict(pause ? "set_paused" : "clear_paused", rc);
}

static int x_step(void *ctx, const emq_golden_step *s, emq_golden_result *res,
                  emq_json_buf *err)
{
    emqx *x = ctx;
    const char *v = s->verb;
    argv_ a = { s, err, 0 };
    emq_json *r;
    if (strcmp(v, "raw") == 0)
        return x_raw(x, s, res, err);
    if (strcmp(v, "advance") == 0)
        r = emq_json_new_null(); /* the clock already moved: `now` */
    else if (strcmp(v, "enqueue") == 0 || strcmp(v, "enqueue_at") == 0 ||
             strcmp(v, "enqueue_in") == 0)
        r = v_enqueue(x, &a, v);
    else if (strcmp(v, "claim") == 0)
        r = v_claim(x, &a);
    else if (strcmp(v, "complete") == 0)
        r = v_complete(x, &a);
    else if (strcmp(v, "retry") == 0)
        r = v_retry(x, &a);
    else if (strcmp(v, "promote") == 0 || strcmp(v, "reap") == 0 ||
             strcmp(v, "pending_size") == 0)
        r = v_count(x, &a, v);
    else if (strcmp(v, "extend_lock") == 0)
        r = v_extend_lock(x, &a);
    else if (strcmp(v, "extend_locks") == 0)
        r = v_extend_locks(x, &a);
    else if (strcmp(v, "browse") == 0)
        r = v_browse(x, &a);
    else if (strcmp(v, "set_paused") == 0)
        r = v_pause(x, &a, 1);
    else if (strcmp(v, "clear_paused") == 0)
        r = v_pause(x, &a, 0);
    else {
        say(err, "verb \"%s\" is not supported by the emqlite executor", v);
        return -1;
    }
    if (!r) {
        if (!a.bad)
            say(err, "%s: out of memory", v);
        return -1;
    }
    res->reply = r;
    return 0;
}

/* ======================================================== keyspace dump */

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

/* ============================================================== public */

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
        emq_close(x->db);
        free(x);
        ex->ctx = NULL;
    }
}
