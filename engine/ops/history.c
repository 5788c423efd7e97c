/*
 * history.c — job history and retention (issue 34; doc/HISTORY.md): the
 * runner's hooks that record what each write transition did to each job
 * (history.h), the kept records of completed and dead jobs, their
 * settings in the host configuration, pruning, and the public reads.
 *
 * Rules: nothing here touches a key but to read it: the rows go to the
 * host-side tables of storage/hist.c, so an export, a digest and a check
 * are the same with history on or off. A row is written in the
 * transaction of the transition it records, at its NOW. The wire's event
 * channels are not written either: `emqlite events` reads this history
 * beside the event log.
 *
 * Encodings (history detail, kept body): a run of fields, each one tag
 * byte, a 4-byte little-endian length and the bytes; numbers are 8 bytes
 * little-endian. A reader skips a tag it does not know.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "verb.h"
#include "history.h"
#include "jobs.h"
#include "hist.h"

/* Built-in defaults (doc/HISTORY.md). */
#define PER_JOB 64
#define PER_QUEUE 100000
#define MAX_AGE (INT64_C(7) * 86400000)
#define C_KEEP 1000
#define C_AGE INT64_C(86400000)
#define D_KEEP 10000
#define D_AGE (INT64_C(30) * 86400000)
/* A queue's history is pruned when an append's seq is a multiple of
 * PRUNE_EVERY, its kept jobs when it is a multiple of KEPT_EVERY (counting
 * them walks them), each time at most PRUNE_BUDGET rows of the history
 * and KEPT_BUDGET records of each kind. The budgets are at least what can
 * come in between two prunes (one kept job per entry at most: at the
 * failures level a dead job may have its death as its only entry), so a
 * queue's rows come back to their bounds at each prune however fast they
 * are appended. */
#define PRUNE_EVERY 512
#define KEPT_EVERY 2048
#define PRUNE_BUDGET 1024
#define KEPT_BUDGET KEPT_EVERY

#define NS_HIST "history"
#define NS_KEEP "retention"
/* The row count of a queue's history as the last prune left it: two
 * numbers, the count and the seq it counts up to (hist.h). */
#define NS_COUNT "history-count"

/* Detail and body tags. */
enum {
    T_ATTEMPTS = 'a', T_DELAY = 'd', T_RUN_AT = 'r', T_ERROR = 'e',
    T_HOST = 'h', T_PID = 'p', T_WORKER = 'w', T_PAYLOAD = 'P',
    T_RESULT = 'R'
};

struct emq_hist {
    int loaded;
    emq_history_config cfg;
    char host[72];
    int64_t pid;
    char worker[72];
};

static const char *const kind_names[EMQ_HIST_KIND_MAX + 1] = {
#define EMQ_HK_(N, V, S) [V] = S,
    EMQ_HISTORY_KINDS(EMQ_HK_)
#undef EMQ_HK_
};

/* The enum spelled out in emqlite.h agrees with the table. */
#define EMQ_HK_(N, V, S) _Static_assert(EMQ_HIST_##N == V, #N);
EMQ_HISTORY_KINDS(EMQ_HK_)
#undef EMQ_HK_

const char *emq_history_kind_name(int kind)
{
    return kind > 0 && kind <= EMQ_HIST_KIND_MAX ? kind_names[kind] : NULL;
}

const char *emq_history_level_name(int level)
{
    switch (level) {
    case EMQ_HISTORY_OFF: return "off";
    case EMQ_HISTORY_ALL: return "on";
    case EMQ_HISTORY_FAILURES: return "failures";
    default: return NULL;
    }
}

int emq_history_kind_of(const char *name)
{
    for (int k = 1; name && k <= EMQ_HIST_KIND_MAX; k++)
        if (strcmp(kind_names[k], name) == 0) return k;
    return 0;
}

/* ------------------------------------------------------------ encoding */

static int put_f(emq_buf *b, int tag, const void *p, size_t n)
{
    unsigned char h[5];
    uint32_t len = (uint32_t)n;
    h[0] = (unsigned char)tag;
    for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)(len >> (8 * i));
    int rc = emq_buf_append(b, h, 5);
    return rc == EMQ_OK && n ? emq_buf_append(b, p, n) : rc;
}

static int put_i(emq_buf *b, int tag, int64_t v)
{
    unsigned char x[8];
    for (int i = 0; i < 8; i++) x[i] = (unsigned char)((uint64_t)v >> (8 * i));
    return put_f(b, tag, x, 8);
}

/* Walk the fields of p[0..n): fn(ctx, tag, bytes, len) per field. */
typedef void (*field_fn)(void *ctx, int tag, const unsigned char *p,
                         size_t n);
static void fields(const void *data, size_t n, field_fn fn, void *ctx)
{
    const unsigned char *p = data, *end = p + n;
    while (end - p >= 5) {
        uint32_t len = 0;
        for (int i = 0; i < 4; i++) len |= (uint32_t)p[1 + i] << (8 * i);
        if ((size_t)(end - p - 5) < len) break;
        fn(ctx, p[0], p + 5, len);
        p += 5 + len;
    }
}

static int64_t get_i(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    if (n != 8) return -1;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return (int64_t)v;
}

/* ------------------------------------------------------------- settings */

static void cfg_default(emq_history_config *c)
{
    c->enabled = EMQ_HISTORY_ALL;
    c->per_job = PER_JOB;
    c->per_queue = PER_QUEUE;
    c->max_age_ms = MAX_AGE;
}

static void keep_default(emq_retention *r)
{
    r->completed_keep = C_KEEP;
    r->completed_age_ms = C_AGE;
    r->dead_keep = D_KEEP;
    r->dead_age_ms = D_AGE;
}

/* Four int64 LE numbers (the history's level first). */
static int enc_nums(emq_buf *b, const int64_t *v, int n)
{
    int rc = EMQ_OK;
    for (int i = 0; i < n && rc == EMQ_OK; i++) rc = put_i(b, 'n', v[i]);
    return rc;
}

typedef struct nums {
    int64_t v[4];
    int n;
} nums;

static void num_cb(void *ctx, int tag, const unsigned char *p, size_t n)
{
    nums *x = ctx;
    if (tag == 'n' && x->n < 4) x->v[x->n++] = get_i(p, n);
}

static struct emq_hist *state(emq_db *db)
{
    if (db->hist == NULL) {
        struct emq_hist *h = emq_mem_calloc(1, sizeof *h);
        if (h == NULL) return NULL;
        cfg_default(&h->cfg);
        if (gethostname(h->host, sizeof h->host - 1) != 0) h->host[0] = 0;
        h->host[sizeof h->host - 1] = 0;
        h->pid = (int64_t)getpid();
        db->hist = h;
    }
    return db->hist;
}

/* Read the file's history settings into h (inside a transaction). */
static int load(emq_db *db, emq_store *st, struct emq_hist *h)
{
    emq_buf v = {0};
    nums x = {{0}, 0};
    int rc = emq_hostconf_get(st, NS_HIST, "config", 6, &v);
    if (rc == EMQ_NOTFOUND) {
        cfg_default(&h->cfg);
        rc = EMQ_OK;
    } else if (rc == EMQ_OK) {
        fields(v.p, v.len, num_cb, &x);
        cfg_default(&h->cfg);
        if (x.n == 4) {
            /* A level this build does not know records everything. */
            h->cfg.enabled = x.v[0] >= EMQ_HISTORY_OFF &&
                                     x.v[0] <= EMQ_HISTORY_FAILURES
                                 ? (int)x.v[0] : EMQ_HISTORY_ALL;
            h->cfg.per_job = x.v[1];
            h->cfg.per_queue = x.v[2];
            h->cfg.max_age_ms = x.v[3];
        }
    } else {
        rc = emq_db_fail(db, rc, "reading the history settings");
    }
    emq_buf_free(&v);
    if (rc == EMQ_OK) h->loaded = 1;
    return rc;
}

/* The retention of q (or of the file when q is ""): *found = 1 when that
 * key was set. */
static int keep_read(emq_store *st, const char *q, emq_retention *r,
                     int *found)
{
    emq_buf v = {0};
    nums x = {{0}, 0};
    int rc = emq_hostconf_get(st, NS_KEEP, q, strlen(q), &v);
    *found = 0;
    if (rc == EMQ_OK) {
        fields(v.p, v.len, num_cb, &x);
        if (x.n == 4) {
            r->completed_keep = x.v[0];
            r->completed_age_ms = x.v[1];
            r->dead_keep = x.v[2];
            r->dead_age_ms = x.v[3];
            *found = 1;
        }
    } else if (rc == EMQ_NOTFOUND) {
        rc = EMQ_OK;
    }
    emq_buf_free(&v);
    return rc;
}

static int keep_of(emq_store *st, const char *q, emq_retention *r)
{
    int found = 0, rc;
    keep_default(r);
    if (q && (rc = keep_read(st, q, r, &found)) != EMQ_OK) return rc;
    if (found) return EMQ_OK;
    return keep_read(st, "", r, &found);
}

/* --------------------------------------------------------------- writes */

static emq_bytes bq(const char *q)
{
    emq_bytes b = {q, strlen(q)};
    return b;
}

/* Forget the row count kept for q (prune_q): the next prune counts the
 * queue's rows again. */
static int count_forget(emq_vctx *c, const char *q)
{
    int rc = emq_hostconf_put(c->st, NS_COUNT, q, strlen(q), NULL, 0);
    return rc < 0 ? emq_db_fail(c->db, rc, "recording the job history")
                  : EMQ_OK;
}

/* One history row of job `id` (14 bytes) of q. The job's own bound is
 * checked on every row but its admission and its completion (neither can
 * put it over) and all but every 16th claim (a claim is the hot path: a
 * job may hold up to 15 claims more than per_job between checks). */
/* seq[0] (when still 0) and seq[1] receive the first and the last seq
 * the transaction appended. */
static int note_n(emq_vctx *c, struct emq_hist *h, const char *q,
                  const void *id, int kind, const emq_buf *detail,
                  int64_t attempts, int64_t *seq)
{
    emq_bytes s = bq(q), j = {id, EMQ_ID_LEN};
    emq_bytes d = {detail ? detail->p : NULL, detail ? detail->len : 0};
    int64_t per = h->cfg.per_job, dropped = 0, got = 0;
    int rc;
    if (kind == EMQ_HIST_ENQUEUED || kind == EMQ_HIST_SCHEDULED ||
        kind == EMQ_HIST_AWAITING || kind == EMQ_HIST_COMPLETED ||
        (kind == EMQ_HIST_CLAIMED && attempts % 16 != 0))
        per = 0;
    rc = emq_hist_append(c->st, &s, &j, kind, &d, per, &got, &dropped);
    if (rc < 0) return emq_db_fail(c->db, rc, "recording the job history");
    if (seq[0] == 0) seq[0] = got;
    seq[1] = got;
    /* Rows the job's bound removed are not in the queue's count. */
    return dropped > 0 ? count_forget(c, q) : EMQ_OK;
}

static int note(emq_vctx *c, struct emq_hist *h, const char *q,
                const void *id, int kind, const emq_buf *detail,
                int64_t *seq)
{
    return note_n(c, h, q, id, kind, detail, 0, seq);
}

static int note_plain(emq_vctx *c, struct emq_hist *h, const char *q,
                      const void *id, int kind, int64_t *seq)
{
    return note(c, h, q, id, kind, NULL, seq);
}

typedef struct row_snap {
    emq_buf payload, error, attempts;
    int has_payload, has_error, has_attempts;
} row_snap;

static int snap_cb(void *ctx, const unsigned char *f, size_t flen,
                   const unsigned char *v, size_t vlen, int64_t exp)
{
    row_snap *r = ctx;
    emq_buf *to = NULL;
    int *has = NULL;
    (void)exp;
    if (flen == 7 && memcmp(f, "payload", 7) == 0) {
        to = &r->payload;
        has = &r->has_payload;
    } else if (flen == 10 && memcmp(f, "last_error", 10) == 0) {
        to = &r->error;
        has = &r->has_error;
    } else if (flen == 8 && memcmp(f, "attempts", 8) == 0) {
        to = &r->attempts;
        has = &r->has_attempts;
    }
    if (to == NULL) return 0;
    *has = 1;
    return emq_buf_set(to, v, vlen);
}

static void snap_free(row_snap *r)
{
    emq_buf_free(&r->payload);
    emq_buf_free(&r->error);
    emq_buf_free(&r->attempts);
}

static int snap_read(emq_vctx *c, const char *q, const char *id,
                     row_snap *r)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    memset(r, 0, sizeof *r);
    return emq_hash_getall(c->st, k, kl, snap_cb, r);
}

static int64_t dec(const emq_buf *b)
{
    int64_t v = 0;
    for (size_t i = 0; i < b->len; i++) {
        if (b->p[i] < '0' || b->p[i] > '9') return -1;
        v = v * 10 + (b->p[i] - '0');
    }
    return b->len ? v : -1;
}

/* Keep the finished job `id` of q from its row snapshot. */
static int keep_job(emq_vctx *c, const char *q, const char *id, int state,
                    const row_snap *r, const void *result, size_t rlen,
                    int has_result)
{
    emq_buf b = {0};
    emq_bytes s = bq(q), j = {id, EMQ_ID_LEN}, body;
    int rc = put_i(&b, T_ATTEMPTS, r->has_attempts ? dec(&r->attempts)
                                                   : -1);
    if (rc == EMQ_OK && r->has_payload)
        rc = put_f(&b, T_PAYLOAD, r->payload.p, r->payload.len);
    if (rc == EMQ_OK && r->has_error)
        rc = put_f(&b, T_ERROR, r->error.p, r->error.len);
    if (rc == EMQ_OK && has_result)
        rc = put_f(&b, T_RESULT, result, rlen);
    body.p = b.p;
    body.n = b.len;
    if (rc == EMQ_OK)
        rc = emq_hist_keep_put(c->st, &s, &j, state, c->now, &body);
    emq_buf_free(&b);
    return rc < 0 ? emq_db_fail(c->db, rc, "keeping a finished job") : rc;
}

/* Who recorded it: the handle's host, pid and worker name. */
static int put_who(emq_buf *d, const struct emq_hist *h)
{
    int rc = put_f(d, T_HOST, h->host, strlen(h->host));
    if (rc == EMQ_OK) rc = put_i(d, T_PID, h->pid);
    if (rc == EMQ_OK && h->worker[0])
        rc = put_f(d, T_WORKER, h->worker, strlen(h->worker));
    return rc;
}

/* The claim of `t` (a claim reply [id, payload, attempts, ...]). */
static int note_claim(emq_vctx *c, struct emq_hist *h, const char *q,
                      const emq_reply *t, int64_t *seq)
{
    emq_buf d = {0};
    int rc;
    if (t->type != EMQ_REPLY_ARRAY || t->n < 3 ||
        t->elem[0].type != EMQ_REPLY_BULK || t->elem[0].len != EMQ_ID_LEN)
        return EMQ_OK;
    rc = put_i(&d, T_ATTEMPTS, t->elem[2].integer);
    if (rc == EMQ_OK) rc = put_who(&d, h);
    if (rc == EMQ_OK)
        rc = note_n(c, h, q, t->elem[0].str, EMQ_HIST_CLAIMED, &d,
                    t->elem[2].integer, seq);
    emq_buf_free(&d);
    return rc;
}

/* Every claim in a claim reply: one triple, or an array of them. */
static int note_claims(emq_vctx *c, struct emq_hist *h, const char *q,
                       const emq_reply *r, int64_t *seq)
{
    int rc = EMQ_OK;
    if (r->type != EMQ_REPLY_ARRAY || r->n == 0) return EMQ_OK;
    if (r->elem[0].type == EMQ_REPLY_BULK) return note_claim(c, h, q, r, seq);
    for (size_t i = 0; i < r->n && rc == EMQ_OK; i++)
        rc = note_claim(c, h, q, &r->elem[i], seq);
    return rc;
}

/* The members a sweep was due to move, read before its body. */
typedef struct due {
    int from;            /* key type of the set they leave */
    emq_idlist ms;
    row_snap row;        /* complete: the row before it went */
} due;

static int want_row(const emq_verb *v)
{
    return v->info.id == EMQ_V_COMPLETE;
}

static int sweep_from(int id)
{
    switch (id) {
    case EMQ_V_PROMOTE: case EMQ_V_RUN_DUE: return EMQ_KT_SCHEDULE;
    case EMQ_V_REAP: case EMQ_V_REAP_GROUP: return EMQ_KT_ACTIVE;
    case EMQ_V_REQUEUE_DEAD_BATCH: case EMQ_V_REQUEUE_DEAD_BEFORE:
        return EMQ_KT_DEAD;
    default: return -1;
    }
}

/* The lowest level that records verb `id`: EMQ_HISTORY_FAILURES for the
 * verbs that move a job because something went wrong (a failure, a lost
 * lease) or because an operator stepped in, EMQ_HISTORY_ALL for the other
 * recorded ones, EMQ_HISTORY_OFF for a verb never recorded. */
static int record_level(int id)
{
    switch (id) {
    case EMQ_V_RETRY: case EMQ_V_RETRY_TX: case EMQ_V_REAP:
    case EMQ_V_REAP_GROUP: case EMQ_V_STALLED_CHECK: case EMQ_V_REMOVE_JOB:
    case EMQ_V_REPROCESS_JOB: case EMQ_V_REQUEUE_DEAD_BATCH:
    case EMQ_V_REQUEUE_DEAD_BEFORE: case EMQ_V_REQUEUE_EDITED:
        return EMQ_HISTORY_FAILURES;
    case EMQ_V_ENQUEUE: case EMQ_V_ENQUEUE_MANY: case EMQ_V_ENQUEUE_AT:
    case EMQ_V_ENQUEUE_IN: case EMQ_V_LANE_ENQUEUE: case EMQ_V_CLAIM:
    case EMQ_V_CLAIM_BATCH: case EMQ_V_LANE_CLAIM: case EMQ_V_WCLAIM:
    case EMQ_V_BCLAIM: case EMQ_V_COMPLETE: case EMQ_V_PROMOTE:
    case EMQ_V_DELAY: case EMQ_V_ENQUEUE_FLOW: case EMQ_V_HOLD_PARENT:
    case EMQ_V_FLOW_CHILD: case EMQ_V_RUN_NOW: case EMQ_V_RUN_DUE:
        return EMQ_HISTORY_ALL;
    default:
        return EMQ_HISTORY_OFF;
    }
}

int emq_hist_before(emq_vctx *c, emq_hist_tx *t)
{
    struct emq_hist *h;
    int id = c->v->info.id, from, rc, level;
    due *d;
    t->active = 0;
    t->snap = NULL;
    if (c->v->info.kind != EMQ_VERB_WRITE ||
        (level = record_level(id)) == EMQ_HISTORY_OFF)
        return EMQ_OK;
    if ((h = state(c->db)) == NULL)
        return emq_db_fail(c->db, EMQ_ENOMEM, NULL);
    if (!h->loaded && (rc = load(c->db, c->st, h)) != EMQ_OK) return rc;
    if (h->cfg.enabled == EMQ_HISTORY_OFF ||
        (h->cfg.enabled == EMQ_HISTORY_FAILURES &&
         level != EMQ_HISTORY_FAILURES))
        return EMQ_OK;
    t->active = 1;
    from = sweep_from(id);
    if (from < 0 && !want_row(c->v)) return EMQ_OK;
    if ((d = emq_mem_calloc(1, sizeof *d)) == NULL)
        return emq_db_fail(c->db, EMQ_ENOMEM, NULL);
    t->snap = d;
    d->from = from;
    if (from == EMQ_KT_DEAD) {
        /* The requeues of dead jobs walk B.dead in byte order after their
         * cursor, at most `batch` (default 100): the members they may move
         * (one more: the cursor itself may still be there). Those past
         * requeue_dead_before's mint-time bound stay dead and are not
         * recorded. */
        char k[EMQ_KEY_MAX];
        size_t kl = emq_key(k, c->a[0].s, from);
        int bi = id == EMQ_V_REQUEUE_DEAD_BATCH ? 1 : 2;
        int64_t limit = c->a[bi].present ? c->a[bi].i : 100;
        emq_bytes min = {c->a[bi + 1].s, c->a[bi + 1].n};
        if (limit < INT64_MAX) limit++;
        rc = emq_zset_range_lex(c->st, k, kl,
                                c->a[bi + 1].present ? &min : NULL, NULL, 0,
                                limit, emq_idlist_cb, &d->ms);
    } else if (from >= 0) {
        char k[EMQ_KEY_MAX];
        size_t kl = emq_key(k, c->a[0].s, from);
        int64_t limit = id == EMQ_V_PROMOTE ? c->a[1].i
                        : id == EMQ_V_RUN_DUE
                            ? (c->a[2].present ? c->a[2].i : 100)
                        : id == EMQ_V_REAP_GROUP && c->a[2].present
                            ? c->a[2].i : 100;
        double until = id == EMQ_V_RUN_DUE ? (double)c->a[1].i
                                           : (double)c->now;
        rc = emq_zset_range_score(c->st, k, kl, -INFINITY, until, limit,
                                  emq_idlist_cb, &d->ms);
    } else {
        rc = snap_read(c, c->a[0].s, c->a[1].s, &d->row);
    }
    return rc < 0 ? emq_db_fail(c->db, rc, "reading a job for its history")
                  : EMQ_OK;
}

void emq_hist_drop(emq_hist_tx *t)
{
    due *d = t->snap;
    if (d) {
        emq_idlist_free(&d->ms);
        snap_free(&d->row);
        emq_mem_free(d);
    }
    t->snap = NULL;
}

/* The sweeps: each member read before that left its set moved. */
static int note_swept(emq_vctx *c, struct emq_hist *h, due *d, int kind,
                      int64_t *seq)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, d->from);
    int rc = EMQ_OK;
    for (size_t i = 0; i < d->ms.n && rc == EMQ_OK; i++) {
        double s;
        if (d->ms.v[i].len != EMQ_ID_LEN) continue;
        rc = emq_zset_score(c->st, k, kl, d->ms.v[i].p, d->ms.v[i].len, &s);
        if (rc == EMQ_NOTFOUND)
            rc = note_plain(c, h, c->a[0].s, d->ms.v[i].p, kind, seq);
        else if (rc >= 0)
            rc = EMQ_OK;
    }
    return rc;
}

/* The retry's outcome: retried (error, delay, run-at) or dead (kept). */
static int note_retry(emq_vctx *c, struct emq_hist *h, int rc0, int64_t *seq)
{
    const char *q = c->a[0].s, *id = c->a[1].s;
    emq_buf d = {0};
    row_snap r;
    int dead = rc0 == EMQ_DEAD, rc;
    rc = put_i(&d, T_ATTEMPTS, c->a[2].i);
    if (rc == EMQ_OK) rc = put_f(&d, T_ERROR, c->a[5].s, c->a[5].n);
    if (rc == EMQ_OK && !dead) rc = put_i(&d, T_DELAY, c->a[3].i);
    if (rc == EMQ_OK && !dead)
        rc = put_i(&d, T_RUN_AT, (int64_t)emq_score_add(c->now, c->a[3].i));
    if (rc == EMQ_OK) rc = put_who(&d, h);
    if (rc == EMQ_OK)
        rc = note(c, h, q, id, dead ? EMQ_HIST_DEAD : EMQ_HIST_RETRIED, &d,
                  seq);
    emq_buf_free(&d);
    if (rc != EMQ_OK || !dead) return rc;
    if ((rc = snap_read(c, q, id, &r)) >= 0)
        rc = keep_job(c, q, id, EMQ_KEPT_DEAD, &r, NULL, 0, 0);
    snap_free(&r);
    return rc;
}

/* The stalled sweep's reply: [recovered ids, dead ids]. */
static int note_stalled(emq_vctx *c, struct emq_hist *h, int64_t *seq)
{
    const emq_reply *r = c->r;
    const char *q = c->a[0].s;
    int rc = EMQ_OK;
    if (r->type != EMQ_REPLY_ARRAY || r->n < 2) return EMQ_OK;
    for (size_t w = 0; w < 2 && rc == EMQ_OK; w++) {
        const emq_reply *ids = &r->elem[w];
        for (size_t i = 0; ids->type == EMQ_REPLY_ARRAY && i < ids->n &&
                           rc == EMQ_OK; i++) {
            const emq_reply *e = &ids->elem[i];
            if (e->type != EMQ_REPLY_BULK || e->len != EMQ_ID_LEN) continue;
            rc = note_plain(c, h, q, e->str,
                            w == 0 ? EMQ_HIST_STALLED : EMQ_HIST_DEAD, seq);
            if (rc == EMQ_OK && w == 1) {
                row_snap s;
                char id[EMQ_ID_SIZE];
                memcpy(id, e->str, EMQ_ID_LEN);
                id[EMQ_ID_LEN] = 0;
                if ((rc = snap_read(c, q, id, &s)) >= 0)
                    rc = keep_job(c, q, id, EMQ_KEPT_DEAD, &s, NULL, 0, 0);
                snap_free(&s);
            }
        }
    }
    return rc;
}

static int note_admit(emq_vctx *c, struct emq_hist *h, const char *q,
                      const char *id, int64_t run_at, int64_t *seq)
{
    emq_buf d = {0};
    int rc;
    if (run_at < 0)
        return note_plain(c, h, q, id, EMQ_HIST_ENQUEUED, seq);
    rc = put_i(&d, T_RUN_AT, run_at);
    if (rc == EMQ_OK) rc = note(c, h, q, id, EMQ_HIST_SCHEDULED, &d, seq);
    emq_buf_free(&d);
    return rc;
}

/* Prune q's history and (with kept) its kept rows, budgeted. */
static int prune_q(emq_db *db, emq_store *st, struct emq_hist *h,
                   const char *q, int64_t now, int kept, int64_t *dropped)
{
    emq_bytes s = bq(q);
    emq_retention r;
    emq_buf v = {0};
    nums x = {{0}, 0};
    int64_t n = 0, total = 0, count = 0, upto = 0;
    int rc = emq_hostconf_get(st, NS_COUNT, q, strlen(q), &v);
    if (rc == EMQ_OK) {
        fields(v.p, v.len, num_cb, &x);
        if (x.n == 2) {
            count = x.v[0];
            upto = x.v[1];
        }
    }
    emq_buf_free(&v);
    if (rc == EMQ_OK || rc == EMQ_NOTFOUND)
        rc = emq_hist_prune(st, &s, h->cfg.per_queue,
                            now - h->cfg.max_age_ms, PRUNE_BUDGET, &count,
                            &upto, &n);
    total += rc >= 0 ? n : 0;
    if (rc >= 0) {
        int64_t cv[2] = {count, upto};
        if ((rc = enc_nums(&v, cv, 2)) == EMQ_OK)
            rc = emq_hostconf_put(st, NS_COUNT, q, strlen(q), v.p, v.len);
        emq_buf_free(&v);
    }
    if (rc >= 0 && !kept) goto out;
    if (rc >= 0) rc = keep_of(st, q, &r);
    if (rc >= 0)
        rc = emq_hist_keep_prune(st, &s, EMQ_KEPT_COMPLETED, r.completed_keep,
                                 now - r.completed_age_ms, KEPT_BUDGET, &n);
    total += rc >= 0 ? n : 0;
    if (rc >= 0)
        rc = emq_hist_keep_prune(st, &s, EMQ_KEPT_DEAD, r.dead_keep,
                                 now - r.dead_age_ms, KEPT_BUDGET, &n);
    total += rc >= 0 ? n : 0;
out:
    if (dropped) *dropped += total;
    return rc < 0 ? emq_db_fail(db, rc, "pruning the job history") : EMQ_OK;
}

int emq_hist_after(emq_vctx *c, emq_hist_tx *t, int rc0)
{
    struct emq_hist *h = c->db->hist;
    const char *q;
    due *d = t->snap;
    int64_t seq[2] = {0, 0};  /* the first and last seq appended */
    int rc = EMQ_OK, id;
    if (!t->active || h == NULL) goto out;
    q = c->a[0].s;
    id = c->v->info.id;
    switch (id) {
    case EMQ_V_ENQUEUE: case EMQ_V_LANE_ENQUEUE:
        if (c->r->integer == 1) {
            const char *j = c->a[id == EMQ_V_ENQUEUE ? 1 : 2].s;
            rc = note_admit(c, h, q, j, -1, seq);
        }
        break;
    case EMQ_V_ENQUEUE_AT: case EMQ_V_ENQUEUE_IN:
        if (c->r->integer == 1)
            rc = note_admit(c, h, q, c->a[1].s,
                            id == EMQ_V_ENQUEUE_AT
                                ? c->a[3].i
                                : (int64_t)emq_score_add(c->now, c->a[3].i),
                            seq);
        break;
    case EMQ_V_ENQUEUE_MANY:
        for (size_t i = 0; c->r->type == EMQ_REPLY_ARRAY && i < c->r->n &&
                           1 + 2 * i < c->argc && rc == EMQ_OK; i++)
            if (c->r->elem[i].type == EMQ_REPLY_INT &&
                c->r->elem[i].integer == 1)
                rc = note_admit(c, h, q, c->a[1 + 2 * i].s, -1, seq);
        break;
    case EMQ_V_ENQUEUE_FLOW:
        rc = note_plain(c, h, q, c->a[1].s, EMQ_HIST_AWAITING, seq);
        for (size_t i = 3; i + 1 < c->argc && rc == EMQ_OK; i += 2)
            rc = note_admit(c, h, q, c->a[i].s, -1, seq);
        break;
    case EMQ_V_HOLD_PARENT:
        rc = note_plain(c, h, q, c->a[1].s, EMQ_HIST_AWAITING, seq);
        break;
    case EMQ_V_FLOW_CHILD:
        rc = note_admit(c, h, q, c->a[1].s, -1, seq);
        break;
    case EMQ_V_CLAIM: case EMQ_V_CLAIM_BATCH: case EMQ_V_LANE_CLAIM:
    case EMQ_V_WCLAIM: case EMQ_V_BCLAIM:
        rc = note_claims(c, h, q, c->r, seq);
        break;
    case EMQ_V_COMPLETE:
        if (rc0 == EMQ_OK && c->r->integer == 1 && d) {
            emq_buf b = {0};
            rc = put_i(&b, T_ATTEMPTS, c->a[2].i);
            if (rc == EMQ_OK)
                rc = note(c, h, q, c->a[1].s, EMQ_HIST_COMPLETED, &b, seq);
            emq_buf_free(&b);
            if (rc == EMQ_OK)
                rc = keep_job(c, q, c->a[1].s, EMQ_KEPT_COMPLETED, &d->row,
                              c->a[3].s, c->a[3].n, c->a[3].present);
        }
        break;
    case EMQ_V_RETRY: case EMQ_V_RETRY_TX:
        if (rc0 == EMQ_SCHEDULED || rc0 == EMQ_DEAD)
            rc = note_retry(c, h, rc0, seq);
        break;
    case EMQ_V_PROMOTE: case EMQ_V_RUN_DUE:
        if (d) rc = note_swept(c, h, d, EMQ_HIST_PROMOTED, seq);
        break;
    case EMQ_V_REQUEUE_DEAD_BATCH: case EMQ_V_REQUEUE_DEAD_BEFORE:
        if (d) rc = note_swept(c, h, d, EMQ_HIST_REQUEUED, seq);
        break;
    case EMQ_V_RUN_NOW:
        /* One verdict per id: 1 moved now (as a promote would). */
        for (size_t i = 0; c->r->type == EMQ_REPLY_ARRAY && i < c->r->n &&
                           1 + i < c->argc && rc == EMQ_OK; i++)
            if (c->r->elem[i].type == EMQ_REPLY_INT &&
                c->r->elem[i].integer == 1 && c->a[1 + i].n == EMQ_ID_LEN)
                rc = note_plain(c, h, q, c->a[1 + i].s, EMQ_HIST_PROMOTED,
                                seq);
        break;
    case EMQ_V_REQUEUE_EDITED:
        if (rc0 == EMQ_OK && c->r->integer == 1)
            rc = note_plain(c, h, q, c->a[1].s, EMQ_HIST_REQUEUED, seq);
        break;
    case EMQ_V_REAP: case EMQ_V_REAP_GROUP:
        if (d) rc = note_swept(c, h, d, EMQ_HIST_REAPED, seq);
        break;
    case EMQ_V_STALLED_CHECK:
        rc = note_stalled(c, h, seq);
        break;
    case EMQ_V_REMOVE_JOB:
        if (c->r->integer == 1)
            rc = note_plain(c, h, q, c->a[1].s, EMQ_HIST_REMOVED, seq);
        break;
    case EMQ_V_REPROCESS_JOB:
        if (c->r->integer == 1)
            rc = note_plain(c, h, q, c->a[1].s, EMQ_HIST_REQUEUED, seq);
        break;
    case EMQ_V_DELAY:
        if (c->r->integer == 1) {
            emq_buf b = {0};
            int at = c->a[4].present && c->a[4].n == 2 &&
                     memcmp(c->a[4].s, "at", 2) == 0;
            rc = put_i(&b, T_RUN_AT, at ? c->a[3].i
                                        : (int64_t)emq_score_add(c->now,
                                                                 c->a[3].i));
            if (rc == EMQ_OK)
                rc = note(c, h, q, c->a[1].s, EMQ_HIST_DELAYED, &b, seq);
            emq_buf_free(&b);
        }
        break;
    default:
        break;
    }
    /* Crossing a multiple of PRUNE_EVERY (anywhere in this transaction's
     * appends: an enqueue_many appends many) prunes this queue, and
     * crossing one of KEPT_EVERY its kept jobs too. */
    if (rc == EMQ_OK && seq[1] > 0 &&
        (seq[0] - 1) / PRUNE_EVERY != seq[1] / PRUNE_EVERY)
        rc = prune_q(c->db, c->st, h, q, c->now,
                     (seq[0] - 1) / KEPT_EVERY != seq[1] / KEPT_EVERY, NULL);
out:
    emq_hist_drop(t);
    return rc;
}

void emq_hist_close(emq_db *db)
{
    emq_mem_free(db->hist);
    db->hist = NULL;
}

/* ------------------------------------------------------------ the reads */

typedef struct read_ctx {
    emq_history_fn fn;
    void *ctx;
    int64_t last;
    size_t n;
} read_ctx;

typedef struct dec_ctx {
    emq_history_entry *e;
} dec_ctx;

static void entry_cb(void *ctx, int tag, const unsigned char *p, size_t n)
{
    emq_history_entry *e = ctx;
    switch (tag) {
    case T_ATTEMPTS: e->attempts = get_i(p, n); break;
    case T_DELAY: e->delay_ms = get_i(p, n); break;
    case T_RUN_AT: e->run_at_ms = get_i(p, n); break;
    case T_PID: e->pid = get_i(p, n); break;
    case T_ERROR: e->error = n ? (const void *)p : ""; e->error_len = n;
        break;
    default: break;
    }
}

/* Text fields need a NUL: they are copied into these. */
typedef struct texts {
    char q[136], id[EMQ_ID_SIZE], host[72], worker[72];
} texts;

static void text_cb(void *ctx, int tag, const unsigned char *p, size_t n)
{
    texts *t = ctx;
    char *to = tag == T_HOST ? t->host : tag == T_WORKER ? t->worker : NULL;
    if (to == NULL) return;
    if (n > 71) n = 71;
    if (n) memcpy(to, p, n);
    to[n] = 0;
}

static int row_cb(void *ctx, const emq_hist_row *r)
{
    read_ctx *x = ctx;
    emq_history_entry e;
    texts t;
    size_t n;
    memset(&e, 0, sizeof e);
    memset(&t, 0, sizeof t);
    e.seq = r->seq;
    e.at_ms = r->at;
    e.kind = r->kind;
    n = r->scope.n < sizeof t.q - 1 ? r->scope.n : sizeof t.q - 1;
    memcpy(t.q, r->scope.p, n);
    n = r->subject.n < EMQ_ID_LEN ? r->subject.n : EMQ_ID_LEN;
    memcpy(t.id, r->subject.p, n);
    e.queue = t.q;
    e.id = t.id;
    e.attempts = e.delay_ms = e.run_at_ms = e.pid = -1;
    fields(r->detail.p, r->detail.n, entry_cb, &e);
    fields(r->detail.p, r->detail.n, text_cb, &t);
    e.host = t.host[0] ? t.host : NULL;
    e.worker = t.worker[0] ? t.worker : NULL;
    x->last = r->seq;
    x->n++;
    return x->fn(x->ctx, &e);
}

typedef struct rd {
    const char *q, *id;
    int64_t after, max;
    read_ctx x;
} rd;

static int read_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    rd *r = ctx;
    emq_bytes s, j;
    (void)db;
    (void)now;
    if (r->q) s = bq(r->q);
    if (r->id) {
        j.p = r->id;
        j.n = EMQ_ID_LEN;
    }
    return emq_hist_read(st, r->q ? &s : NULL, r->id ? &j : NULL, r->after,
                         r->max, row_cb, &r->x);
}

int emq_job_history(emq_db *db, const char *q, const char *id,
                    emq_history_fn fn, void *ctx)
{
    rd r;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (q && (rc = emq_gate_q(db, q)) < 0) return rc;
    if ((rc = emq_gate_id(db, id)) < 0) return rc;
    if (fn == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: fn is NULL");
    memset(&r, 0, sizeof r);
    r.q = q;
    r.id = id;
    r.x.fn = fn;
    r.x.ctx = ctx;
    return emq_db_run(db, 0, read_tx, &r);
}

int emq_history_read(emq_db *db, const char *q, int64_t after, size_t max,
                     emq_history_fn fn, void *ctx, int64_t *last)
{
    rd r;
    int rc;
    if (last) *last = after;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (q && (rc = emq_gate_q(db, q)) < 0) return rc;
    if (fn == NULL || after < 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: fn is NULL or "
                                           "after < 0");
    memset(&r, 0, sizeof r);
    r.q = q;
    r.after = after;
    r.max = (int64_t)max;
    r.x.fn = fn;
    r.x.ctx = ctx;
    r.x.last = after;
    rc = emq_db_run(db, 0, read_tx, &r);
    if (last) *last = r.x.last;
    return rc;
}

static int last_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    (void)now;
    int rc = emq_hist_last(st, ctx);
    return rc < 0 ? emq_db_fail(db, rc, "reading the job history") : rc;
}

int emq_history_last(emq_db *db, int64_t *seq)
{
    int64_t v = 0;
    int rc;
    if (seq) *seq = 0;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (seq == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: seq is NULL");
    rc = emq_db_run(db, 0, last_tx, &v);
    if (rc >= 0) *seq = v;
    return rc;
}

/* ------------------------------------------------------------- settings */

typedef struct conf_ctx {
    const char *ns, *k;
    emq_buf v;
    int del;
    emq_retention *got;
    int *found;
} conf_ctx;

static int put_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    conf_ctx *x = ctx;
    (void)now;
    int rc = emq_hostconf_put(st, x->ns, x->k, strlen(x->k),
                              x->del ? NULL : x->v.p, x->v.len);
    return rc < 0 ? emq_db_fail(db, rc, "writing the host configuration")
                  : rc;
}

static int load_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    (void)now;
    (void)ctx;
    return load(db, st, db->hist);
}

int emq_history_config_get(emq_db *db, emq_history_config *cfg)
{
    struct emq_hist *h;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (cfg == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: cfg is NULL");
    if ((h = state(db)) == NULL) return emq_db_fail(db, EMQ_ENOMEM, NULL);
    if (!h->loaded && (rc = emq_db_run(db, 0, load_tx, NULL)) < 0) return rc;
    *cfg = h->cfg;
    return EMQ_OK;
}

static int bad_num(emq_db *db, const char *name, int64_t v, int64_t min)
{
    char m[200];
    snprintf(m, sizeof m, "bad argument: %s must be >= %lld (got %lld)",
             name, (long long)min, (long long)v);
    return emq_db_wire(db, EMQ_EINVAL, m);
}

int emq_history_config_set(emq_db *db, const emq_history_config *cfg)
{
    struct emq_hist *h;
    conf_ctx x;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((h = state(db)) == NULL) return emq_db_fail(db, EMQ_ENOMEM, NULL);
    if (cfg && (cfg->enabled < EMQ_HISTORY_OFF ||
                cfg->enabled > EMQ_HISTORY_FAILURES)) {
        char m[200];
        snprintf(m, sizeof m, "bad argument: enabled must be "
                 "EMQ_HISTORY_OFF (0), EMQ_HISTORY_ALL (1) or "
                 "EMQ_HISTORY_FAILURES (2) (got %d)", cfg->enabled);
        return emq_db_wire(db, EMQ_EINVAL, m);
    }
    if (cfg && cfg->per_job < 1) return bad_num(db, "per_job", cfg->per_job, 1);
    if (cfg && cfg->per_queue < 1)
        return bad_num(db, "per_queue", cfg->per_queue, 1);
    if (cfg && cfg->max_age_ms < 1)
        return bad_num(db, "max_age_ms", cfg->max_age_ms, 1);
    memset(&x, 0, sizeof x);
    x.ns = NS_HIST;
    x.k = "config";
    x.del = cfg == NULL;
    if (cfg) {
        int64_t v[4] = {cfg->enabled, cfg->per_job, cfg->per_queue,
                        cfg->max_age_ms};
        if (enc_nums(&x.v, v, 4) != EMQ_OK)
            return emq_db_fail(db, EMQ_ENOMEM, NULL);
    }
    rc = emq_db_run(db, 1, put_tx, &x);
    emq_buf_free(&x.v);
    if (rc >= 0) {
        if (cfg) h->cfg = *cfg; else cfg_default(&h->cfg);
        h->loaded = 1;
    }
    return rc;
}

int emq_history_worker(emq_db *db, const char *name)
{
    struct emq_hist *h;
    size_t n = name ? strlen(name) : 0;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n > 64)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: the worker name is "
                                           "longer than 64 bytes");
    if ((h = state(db)) == NULL) return emq_db_fail(db, EMQ_ENOMEM, NULL);
    memcpy(h->worker, name ? name : "", n);
    h->worker[n] = 0;
    return EMQ_OK;
}

typedef struct kget {
    const char *q;
    emq_retention *r;
} kget;

static int kget_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    kget *k = ctx;
    (void)now;
    int rc = keep_of(st, k->q, k->r);
    return rc < 0 ? emq_db_fail(db, rc, "reading the retention") : rc;
}

int emq_retention_get(emq_db *db, const char *q, emq_retention *r)
{
    kget k = {q, r};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (q && (rc = emq_gate_q(db, q)) < 0) return rc;
    if (r == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: r is NULL");
    return emq_db_run(db, 0, kget_tx, &k);
}

int emq_retention_set(emq_db *db, const char *q, const emq_retention *r)
{
    conf_ctx x;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (q && (rc = emq_gate_q(db, q)) < 0) return rc;
    if (r && r->completed_keep < 0)
        return bad_num(db, "completed_keep", r->completed_keep, 0);
    if (r && r->completed_age_ms < 0)
        return bad_num(db, "completed_age_ms", r->completed_age_ms, 0);
    if (r && r->dead_keep < 0)
        return bad_num(db, "dead_keep", r->dead_keep, 0);
    if (r && r->dead_age_ms < 0)
        return bad_num(db, "dead_age_ms", r->dead_age_ms, 0);
    memset(&x, 0, sizeof x);
    x.ns = NS_KEEP;
    x.k = q ? q : "";
    x.del = r == NULL;
    if (r) {
        int64_t v[4] = {r->completed_keep, r->completed_age_ms, r->dead_keep,
                        r->dead_age_ms};
        if (enc_nums(&x.v, v, 4) != EMQ_OK)
            return emq_db_fail(db, EMQ_ENOMEM, NULL);
    }
    rc = emq_db_run(db, 1, put_tx, &x);
    emq_buf_free(&x.v);
    return rc;
}

/* ------------------------------------------------------------ kept jobs */

static int dup_bytes(unsigned char **to, size_t *len, const void *p,
                     size_t n)
{
    *to = emq_mem_malloc(n + 1);
    if (*to == NULL) return EMQ_ENOMEM;
    if (n) memcpy(*to, p, n);
    (*to)[n] = 0;
    *len = n;
    return EMQ_OK;
}

typedef struct kfill {
    emq_kept_job *j;
    int rc;
    int copy;          /* 1: copy the bytes (get), 0: point at them (list) */
} kfill;

static void body_cb(void *ctx, int tag, const unsigned char *p, size_t n)
{
    kfill *f = ctx;
    emq_kept_job *j = f->j;
    unsigned char **to = NULL;
    size_t *len = NULL;
    switch (tag) {
    case T_ATTEMPTS: j->attempts = get_i(p, n); return;
    case T_PAYLOAD: to = &j->payload; len = &j->payload_len; break;
    case T_ERROR: to = &j->error; len = &j->error_len; break;
    case T_RESULT: to = &j->result; len = &j->result_len; break;
    default: return;
    }
    if (f->copy) {
        if (f->rc == EMQ_OK) f->rc = dup_bytes(to, len, p, n);
    } else {
        *to = (unsigned char *)(n ? p : (const unsigned char *)"");
        *len = n;
    }
}

static void kept_fill(emq_kept_job *j, const emq_hist_keep_row *r,
                      kfill *f)
{
    size_t n;
    memset(j, 0, sizeof *j);
    n = r->scope.n < sizeof j->queue - 1 ? r->scope.n : sizeof j->queue - 1;
    memcpy(j->queue, r->scope.p, n);
    n = r->subject.n < EMQ_ID_LEN ? r->subject.n : EMQ_ID_LEN;
    memcpy(j->id, r->subject.p, n);
    j->state = r->kind;
    j->at_ms = r->at;
    j->attempts = -1;
    f->j = j;
    fields(r->body.p, r->body.n, body_cb, f);
}

typedef struct loc_ctx {
    char q[136];
    int found;
} loc_ctx;

static int scope_of(void *ctx, const emq_hist_row *r)
{
    loc_ctx *l = ctx;
    size_t n = r->scope.n < sizeof l->q - 1 ? r->scope.n : sizeof l->q - 1;
    memcpy(l->q, r->scope.p, n);
    l->q[n] = 0;
    l->found = 1;
    return 0;
}

typedef struct kctx {
    char qbuf[136];
    const char *q, *id, *after;
    int state;
    int64_t max;
    emq_kept_job *out;
    int found;
    emq_kept_fn fn;
    void *ctx;
    int64_t count;
} kctx;

static int kget_cb(void *ctx, const emq_hist_keep_row *r)
{
    kctx *k = ctx;
    kfill f = {NULL, EMQ_OK, 1};
    emq_kept_clear(k->out);
    kept_fill(k->out, r, &f);
    k->found = 1;
    return f.rc == EMQ_OK ? 1 : f.rc;   /* the first (newest) row */
}

static int kfind_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    kctx *k = ctx;
    emq_bytes s, j = {k->id, EMQ_ID_LEN};
    int rc;
    (void)now;
    if (k->q) {
        s = bq(k->q);
    } else {
        /* The queue from the job's history (the subject index) when it
         * has one: the kept rows are then one queue's walk. */
        loc_ctx l = {{0}, 0};
        rc = emq_hist_read(st, NULL, &j, 0, 0, scope_of, &l);
        if (rc < 0) return emq_db_fail(db, rc, "reading a kept job");
        if (l.found) {
            memcpy(k->qbuf, l.q, sizeof l.q);
            k->q = k->qbuf;
            s = bq(k->q);
        }
    }
    rc = emq_hist_keep_find(st, k->q ? &s : NULL, &j, kget_cb, k);
    if (rc == 1) rc = EMQ_OK;
    return rc < 0 ? emq_db_fail(db, rc, "reading a kept job") : rc;
}

int emq_kept_get(emq_db *db, const char *q, const char *id,
                 emq_kept_job *out)
{
    kctx k;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (q && (rc = emq_gate_q(db, q)) < 0) return rc;
    if ((rc = emq_gate_id(db, id)) < 0) return rc;
    if (out == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: out is NULL");
    memset(out, 0, sizeof *out);
    memset(&k, 0, sizeof k);
    k.q = q;
    k.id = id;
    k.out = out;
    if ((rc = emq_db_run(db, 0, kfind_tx, &k)) < 0) {
        emq_kept_clear(out);
        return rc;
    }
    return k.found ? EMQ_OK : EMQ_ABSENT;
}

void emq_kept_clear(emq_kept_job *j)
{
    if (j == NULL) return;
    emq_mem_free(j->payload);
    emq_mem_free(j->error);
    emq_mem_free(j->result);
    memset(j, 0, sizeof *j);
}

static int klist_cb(void *ctx, const emq_hist_keep_row *r)
{
    kctx *k = ctx;
    emq_kept_job j;
    kfill f = {NULL, EMQ_OK, 0};
    kept_fill(&j, r, &f);
    return k->fn(k->ctx, &j);
}

/* The cursor of after_id: its kept row's at. */
static int cursor_cb(void *ctx, const emq_hist_keep_row *r)
{
    int64_t *at = ctx;
    *at = r->at;
    return 1;
}

static int klist_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    kctx *k = ctx;
    emq_bytes s = bq(k->q), a;
    int64_t at = INT64_MAX;
    int rc = EMQ_OK;
    (void)now;
    if (k->after) {
        a.p = k->after;
        a.n = EMQ_ID_LEN;
        rc = emq_hist_keep_find(st, &s, &a, cursor_cb, &at);
        if (rc == 1) rc = EMQ_OK;
    }
    if (rc >= 0)
        rc = emq_hist_keep_list(st, &s, k->state, at, k->after ? &a : NULL,
                                k->max, klist_cb, k);
    if (rc >= 0 && rc != 0) return rc;      /* the callback's stop */
    return rc < 0 ? emq_db_fail(db, rc, "listing kept jobs") : rc;
}

static int state_ok(emq_db *db, int state)
{
    if (state == EMQ_KEPT_COMPLETED || state == EMQ_KEPT_DEAD) return EMQ_OK;
    return emq_db_wire(db, EMQ_EINVAL, "bad argument: state must be "
                                       "EMQ_KEPT_COMPLETED or EMQ_KEPT_DEAD");
}

int emq_kept_list(emq_db *db, const char *q, int state, const char *after_id,
                  size_t max, emq_kept_fn fn, void *ctx)
{
    kctx k;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (after_id && (rc = emq_gate_id(db, after_id)) < 0) return rc;
    if ((rc = state_ok(db, state)) < 0) return rc;
    if (fn == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: fn is NULL");
    memset(&k, 0, sizeof k);
    k.q = q;
    k.after = after_id;
    k.state = state;
    k.max = (int64_t)max;
    k.fn = fn;
    k.ctx = ctx;
    return emq_db_run(db, 0, klist_tx, &k);
}

static int kcount_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    kctx *k = ctx;
    emq_bytes s = bq(k->q);
    (void)now;
    int rc = emq_hist_keep_count(st, &s, k->state, &k->count);
    return rc < 0 ? emq_db_fail(db, rc, "counting kept jobs") : rc;
}

int emq_kept_count(emq_db *db, const char *q, int state, int64_t *n)
{
    kctx k;
    int rc;
    if (n) *n = 0;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if ((rc = state_ok(db, state)) < 0) return rc;
    memset(&k, 0, sizeof k);
    k.q = q;
    k.state = state;
    rc = emq_db_run(db, 0, kcount_tx, &k);
    if (rc >= 0 && n) *n = k.count;
    return rc;
}

/* ---------------------------------------------------------------- prune */

typedef struct pctx {
    const char *q;
    int64_t dropped;
    /* every queue: the scopes seen so far */
    emq_idlist scopes;
} pctx;

static int scope_cb(void *ctx, const emq_hist_row *r)
{
    pctx *p = ctx;
    for (size_t i = 0; i < p->scopes.n; i++)
        if (p->scopes.v[i].len == r->scope.n &&
            memcmp(p->scopes.v[i].p, r->scope.p, r->scope.n) == 0)
            return 0;
    return emq_idlist_cb(&p->scopes, r->scope.p, r->scope.n, 0);
}

static int prune_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    pctx *p = ctx;
    struct emq_hist *h = db->hist;
    int rc;
    if (!h->loaded && (rc = load(db, st, h)) != EMQ_OK) return rc;
    if (p->q) return prune_q(db, st, h, p->q, now, 1, &p->dropped);
    /* Every queue with history: pruned in turn until nothing goes. */
    emq_idlist_free(&p->scopes);
    if ((rc = emq_hist_read(st, NULL, NULL, 0, 0, scope_cb, p)) < 0)
        return emq_db_fail(db, rc, "reading the job history");
    for (size_t i = 0; i < p->scopes.n && rc >= 0; i++) {
        char q[136];
        size_t n = p->scopes.v[i].len < 135 ? p->scopes.v[i].len : 135;
        memcpy(q, p->scopes.v[i].p, n);
        q[n] = 0;
        rc = prune_q(db, st, h, q, now, 1, &p->dropped);
    }
    return rc;
}

int emq_history_prune(emq_db *db, const char *q, int64_t *dropped)
{
    pctx p;
    int64_t before;
    int rc;
    if (dropped) *dropped = 0;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (q && (rc = emq_gate_q(db, q)) < 0) return rc;
    if (state(db) == NULL) return emq_db_fail(db, EMQ_ENOMEM, NULL);
    memset(&p, 0, sizeof p);
    p.q = q;
    do {
        before = p.dropped;
        rc = emq_db_run(db, 1, prune_tx, &p);
    } while (rc >= 0 && p.dropped > before);
    emq_idlist_free(&p.scopes);
    if (dropped) *dropped = p.dropped;
    return rc < 0 ? rc : EMQ_OK;
}
