/*
 * events.c — lifecycle events (PROTOCOL.md T2.9, T2.17; doc/EVENTS.md):
 * the message bytes, publishing into the event log inside a transition's
 * transaction, the lifecycle events L4 publishes after a reply, and
 * subscriptions that read the log from a cursor.
 *
 * Rules: a message is logged in the transaction of the transition that
 * published it, so it exists exactly when that transition committed and
 * the log's order is commit order; delivery (a callback) happens only
 * after the commit, with no transaction open, and never changes the
 * result of the call that published. Events are not keys: nothing here
 * touches the keyspace, and no export sees them.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "verb.h"
#include "events.h"
#include "evlog.h"

/* Retention defaults (emq_events_retention). */
#define KEEP_DEFAULT INT64_C(10000)
#define AGE_DEFAULT INT64_C(86400000)
/* Events read per batch by a poll. */
#define POLL_BATCH 256

/* ------------------------------------------------------------ the bytes */

static int put(emq_buf *b, const char *s)
{
    return emq_buf_append(b, s, strlen(s));
}

int emq_ev_json_s(emq_buf *b, const void *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = p;
    size_t i, run = 0;
    int rc = EMQ_OK;
    for (i = 0; i < n && rc == EMQ_OK; i++) {
        unsigned char ch = s[i];
        char e[7];
        const char *esc = NULL;
        switch (ch) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '/': esc = "\\/"; break;
        case 0x08: esc = "\\b"; break;
        case 0x09: esc = "\\t"; break;
        case 0x0A: esc = "\\n"; break;
        case 0x0C: esc = "\\f"; break;
        case 0x0D: esc = "\\r"; break;
        default:
            if (ch < 0x20 || ch == 0x7F) {
                memcpy(e, "\\u00", 4);
                e[4] = hex[ch >> 4];
                e[5] = hex[ch & 15];
                e[6] = 0;
                esc = e;
            }
            break;
        }
        if (!esc)
            continue;
        if (i > run)
            rc = emq_buf_append(b, s + run, i - run);
        if (rc == EMQ_OK)
            rc = put(b, esc);
        run = i + 1;
    }
    if (rc == EMQ_OK && n > run)
        rc = emq_buf_append(b, s + run, n - run);
    return rc;
}

/* T2.17's value escaping: `\` -> `\\`, then `"` -> `\"`, nothing else. */
static int t217_escape(emq_buf *b, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t i, from = 0;
    int rc = EMQ_OK;
    /* Runs without a quote or backslash go in whole. */
    for (i = 0; i < n && rc == EMQ_OK; i++)
        if (s[i] == '\\' || s[i] == '"') {
            rc = emq_buf_append(b, s + from, i - from);
            if (rc == EMQ_OK) rc = put(b, s[i] == '"' ? "\\\"" : "\\\\");
            from = i + 1;
        }
    if (rc == EMQ_OK && from < n) rc = emq_buf_append(b, s + from, n - from);
    return rc;
}

/* The T2.17 message: {"event":"<name>","job":"<id>"[,"<k>":"<v>"]...}. */
static int t217_message(emq_buf *b, const char *name, const void *id,
                        size_t idlen, size_t n, const char *const *k,
                        const void *const *v, const size_t *vn)
{
    size_t i;
    int rc = put(b, "{\"event\":\"");
    if (rc == EMQ_OK) rc = t217_escape(b, name, strlen(name));
    if (rc == EMQ_OK) rc = put(b, "\",\"job\":\"");
    if (rc == EMQ_OK) rc = t217_escape(b, id, idlen);
    for (i = 0; i < n && rc == EMQ_OK; i++) {
        rc = put(b, "\",\"");
        if (rc == EMQ_OK) rc = t217_escape(b, k[i], strlen(k[i]));
        if (rc == EMQ_OK) rc = put(b, "\":\"");
        if (rc == EMQ_OK) rc = t217_escape(b, v[i], vn[i]);
    }
    if (rc == EMQ_OK) rc = put(b, "\"}");
    return rc;
}

/* ------------------------------------------------------------- publish */

static void retention(const emq_db *db, emq_evlog_keep *k)
{
    k->keep = db->ev_keep > 0 ? db->ev_keep : KEEP_DEFAULT;
    k->max_age_ms = db->ev_max_age > 0 ? db->ev_max_age : AGE_DEFAULT;
}

int emq_ev_publish(emq_db *db, emq_store *st, const char *q,
                   const char *name, const void *id, size_t idlen,
                   const void *msg, size_t msglen)
{
    char chan[EMQ_KEY_MAX];
    size_t ql = strlen(q);
    emq_bytes c, k, s, p;
    emq_evlog_keep keep;
    int rc;
    if (ql + 13 >= sizeof chan)
        return EMQ_EINVAL;   /* a gated queue name is at most 128 bytes */
    memcpy(chan, "emq:{", 5);
    memcpy(chan + 5, q, ql);
    memcpy(chan + 5 + ql, "}:events", 8);
    c.p = chan;
    c.n = ql + 13;
    k.p = name;
    k.n = strlen(name);
    s.p = idlen ? id : "";
    s.n = idlen;
    p.p = msglen ? msg : "";
    p.n = msglen;
    retention(db, &keep);
    rc = emq_evlog_append(st, &c, &k, &s, &p, &keep, NULL);
    if (rc == EMQ_OK)
        db->ev_dirty = 1;
    return rc;
}

/* One T2.17 event inside the open transaction. */
static int publish217(emq_vctx *c, const char *name, size_t n,
                      const char *const *k, const void *const *v,
                      const size_t *vn)
{
    const char *q = c->a[0].s;
    const emq_varg *id = &c->a[1];
    emq_buf b = {0};
    int rc = t217_message(&b, name, id->s, id->n, n, k, v, vn);
    if (rc == EMQ_OK)
        rc = emq_ev_publish(c->db, c->st, q, name, id->s, id->n, b.p,
                            b.len);
    emq_buf_free(&b);
    return rc;
}

/* The publishes of T2.17 (events.h): completed, failed with its error,
 * delayed with the run-at it wrote; update_progress publishes its own
 * (T2.9). */
int emq_ev_completed(emq_vctx *c)
{
    return publish217(c, "completed", 0, NULL, NULL, NULL);
}

int emq_ev_failed(emq_vctx *c, const void *error, size_t len)
{
    const char *k[1] = {"error"};
    const void *v[1] = {error};
    size_t vn[1] = {len};
    return publish217(c, "failed", 1, k, v, vn);
}

int emq_ev_delayed(emq_vctx *c, double run_at)
{
    char at[32];
    const char *k[1] = {"run_at"};
    const void *v[1] = {at};
    size_t vn[1];
    vn[0] = (size_t)snprintf(at, sizeof at, "%.0f", run_at);
    return publish217(c, "delayed", 1, k, v, vn);
}

/* -------------------------------------------------------- subscriptions */

struct emq_sub {
    emq_db *db;
    char chan[EMQ_KEY_MAX]; /* "emq:{q}:events", or "" for every queue */
    size_t chan_len;
    int64_t cursor;         /* the last seq looked at                   */
    int64_t lost;           /* seqs pruned before this one read them    */
    emq_event_fn fn;
    void *ctx;
    emq_sub *next;
};

/* A batch read out of the log: packed records (see pack/unpack). */
typedef struct batch {
    const emq_sub *sub;
    emq_buf b;
    int64_t last;           /* the highest seq read                     */
    int64_t first_kept;     /* the log's lowest seq when it was read    */
    size_t n;
    int64_t limit;
} batch;

static int pack_bytes(emq_buf *b, const emq_bytes *x)
{
    uint64_t n = x->n;
    int rc = emq_buf_append(b, &n, sizeof n);
    return rc == EMQ_OK ? emq_buf_append(b, x->p, x->n) : rc;
}

static int collect(void *ctx, const emq_evlog_msg *m)
{
    batch *t = ctx;
    int rc;
    t->last = m->seq;
    if (t->sub->chan_len && (m->channel.n != t->sub->chan_len ||
                             memcmp(m->channel.p, t->sub->chan,
                                    m->channel.n) != 0))
        return 0;
    rc = emq_buf_append(&t->b, &m->seq, sizeof m->seq);
    if (rc == EMQ_OK) rc = emq_buf_append(&t->b, &m->at, sizeof m->at);
    if (rc == EMQ_OK) rc = pack_bytes(&t->b, &m->channel);
    if (rc == EMQ_OK) rc = pack_bytes(&t->b, &m->kind);
    if (rc == EMQ_OK) rc = pack_bytes(&t->b, &m->subject);
    if (rc == EMQ_OK) rc = pack_bytes(&t->b, &m->payload);
    if (rc == EMQ_OK) t->n++;
    return rc;
}

static int read_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    batch *t = ctx;
    int64_t last;
    int rc;
    (void)db;
    (void)now;
    rc = emq_evlog_bounds(st, &t->first_kept, &last);
    if (rc < 0) return rc;
    return emq_evlog_read(st, t->sub->cursor, t->limit, collect, t);
}

static const unsigned char *unpack(const unsigned char *p, const char **s,
                                   size_t *n)
{
    uint64_t len;
    memcpy(&len, p, sizeof len);
    *s = (const char *)p + sizeof len;
    *n = (size_t)len;
    return p + sizeof len + len;
}

/* Read up to `limit` log rows after the cursor and deliver the matching
 * ones in order; *n = the number delivered. */
static int poll_once(emq_sub *s, int64_t limit, size_t *n)
{
    batch t;
    const unsigned char *p, *end;
    size_t i;
    int rc;
    memset(&t, 0, sizeof t);
    t.sub = s;
    t.limit = limit;
    *n = 0;
    rc = emq_db_run(s->db, 0, read_body, &t);
    if (rc < 0) {
        emq_buf_free(&t.b);
        return rc;
    }
    /* Pruned before we read them: the log starts above our cursor. */
    if (t.first_kept > s->cursor + 1)
        s->lost += t.first_kept - (s->cursor + 1);
    p = t.b.p;
    end = p + t.b.len;
    for (i = 0; i < t.n && p < end; i++) {
        emq_event e;
        memcpy(&e.seq, p, sizeof e.seq);
        memcpy(&e.at_ms, p + sizeof e.seq, sizeof e.at_ms);
        p += sizeof e.seq + sizeof e.at_ms;
        p = unpack(p, &e.channel, &e.channel_len);
        p = unpack(p, &e.name, &e.name_len);
        p = unpack(p, &e.job, &e.job_len);
        p = unpack(p, &e.message, &e.message_len);
        /* "emq:{" q "}:events" */
        e.queue = e.channel_len >= 13 ? e.channel + 5 : "";
        e.queue_len = e.channel_len >= 13 ? e.channel_len - 13 : 0;
        if (e.seq > s->cursor) s->cursor = e.seq;
        s->fn(s->ctx, &e);
        (*n)++;
    }
    if (t.last > s->cursor) s->cursor = t.last;
    emq_buf_free(&t.b);
    return EMQ_OK;
}

static int sub_gate(emq_db *db, const char *q, emq_event_fn fn,
                    emq_sub **out)
{
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (out) *out = NULL;
    if (q && (rc = emq_gate_q(db, q)) < 0) return rc;
    if (fn == NULL || out == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL callback "
                                           "or output");
    return EMQ_OK;
}

typedef struct bounds_ctx {
    int64_t first, last;
} bounds_ctx;

static int bounds_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    bounds_ctx *b = ctx;
    (void)db;
    (void)now;
    return emq_evlog_bounds(st, &b->first, &b->last);
}

int emq_subscribe(emq_db *db, const char *q, int64_t after,
                  emq_event_fn fn, void *ctx, emq_sub **out)
{
    emq_sub *s;
    bounds_ctx b = {0, 0};
    int rc = sub_gate(db, q, fn, out);
    if (rc < 0) return rc;
    if (after < EMQ_SUB_NOW)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: after must be "
                                           "EMQ_SUB_NOW or >= 0");
    if (after == EMQ_SUB_NOW && (rc = emq_db_run(db, 0, bounds_body, &b)) < 0)
        return rc;
    if ((s = emq_mem_calloc(1, sizeof *s)) == NULL)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    s->db = db;
    if (q) {
        s->chan_len = (size_t)snprintf(s->chan, sizeof s->chan,
                                       "emq:{%s}:events", q);
    }
    s->cursor = after == EMQ_SUB_NOW ? b.last : after;
    s->fn = fn;
    s->ctx = ctx;
    s->next = db->subs;
    db->subs = s;
    *out = s;
    return EMQ_OK;
}

int emq_sub_poll(emq_sub *s, size_t max, size_t *delivered)
{
    size_t total = 0, n;
    int rc = EMQ_OK;
    if (delivered) *delivered = 0;
    if (s == NULL) return EMQ_EINVAL;
    if ((rc = emq_db_enter(s->db)) < 0) return rc;
    if (max == 0) max = SIZE_MAX;
    do {
        size_t want = max - total < POLL_BATCH ? max - total : POLL_BATCH;
        int64_t before = s->cursor;
        if ((rc = poll_once(s, (int64_t)want, &n)) < 0) break;
        total += n;
        if (s->cursor == before) break;     /* nothing more in the log */
    } while (total < max);
    if (delivered) *delivered = total;
    return rc;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int emq_sub_wait(emq_sub *s, int64_t timeout_ms, size_t *delivered)
{
    int64_t deadline, nap = 1;
    size_t n = 0;
    int rc;
    if (delivered) *delivered = 0;
    if (s == NULL) return EMQ_EINVAL;
    deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        if ((rc = emq_sub_poll(s, 0, &n)) < 0) return rc;
        if (n > 0 || mono_ms() >= deadline) break;
        /* Another handle's commit is seen by the next poll: nap 1 ms,
         * doubling to 32 ms, and never past the deadline. */
        {
            int64_t left = deadline - mono_ms();
            struct timespec ts;
            if (left <= 0) continue;
            if (nap > left) nap = left;
            ts.tv_sec = (time_t)(nap / 1000);
            ts.tv_nsec = (long)(nap % 1000) * 1000000L;
            nanosleep(&ts, NULL);
            if (nap < 32) nap *= 2;
        }
    }
    if (delivered) *delivered = n;
    return n > 0 ? EMQ_OK : EMQ_EMPTY;
}

int64_t emq_sub_cursor(const emq_sub *s)
{
    return s ? s->cursor : 0;
}

int64_t emq_sub_lost(const emq_sub *s)
{
    return s ? s->lost : 0;
}

void emq_unsubscribe(emq_sub *s)
{
    emq_sub **pp;
    if (s == NULL) return;
    for (pp = &s->db->subs; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    emq_mem_free(s);
}

void emq_ev_dispatch(emq_db *db)
{
    char saved[EMQ_ERRMSG_MAX];
    if (db == NULL || !db->ev_dirty) return;
    if (db->subs == NULL || db->ev_depth > 0) {
        if (db->subs == NULL) db->ev_dirty = 0;
        return;   /* a callback's own call: the outer loop delivers it */
    }
    memcpy(saved, db->errmsg, sizeof saved);
    db->ev_depth++;
    while (db->ev_dirty) {
        emq_sub *s = db->subs, *next;
        db->ev_dirty = 0;
        for (; s; s = next) {
            size_t n;
            next = s->next;
            /* Best effort: what a failed read leaves stays in the log for
             * the next poll, and the call that published stays done. */
            (void)emq_sub_poll(s, 0, &n);
        }
    }
    db->ev_depth--;
    memcpy(db->errmsg, saved, sizeof saved);
}

void emq_ev_close(emq_db *db)
{
    while (db->subs) {
        emq_sub *s = db->subs;
        db->subs = s->next;
        emq_mem_free(s);
    }
}

int emq_events_retention(emq_db *db, int64_t keep, int64_t max_age_ms)
{
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (keep < 0 || max_age_ms < 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: keep and "
                                           "max_age_ms must be >= 0");
    db->ev_keep = keep;
    db->ev_max_age = max_age_ms;
    return EMQ_OK;
}

/* --------------------------------------------------------- T2.17 publish */

typedef struct pub_ctx {
    const char *q, *event, *id;
    size_t n;
    const char *const *k;
    const void *const *v;
    const size_t *vn;
} pub_ctx;

static int pub_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    pub_ctx *p = ctx;
    emq_buf b = {0};
    int rc;
    (void)now;
    rc = t217_message(&b, p->event, p->id, EMQ_ID_LEN, p->n, p->k, p->v,
                      p->vn);
    if (rc == EMQ_OK)
        rc = emq_ev_publish(db, st, p->q, p->event, p->id, EMQ_ID_LEN, b.p,
                            b.len);
    emq_buf_free(&b);
    return rc;
}

/* A name of an event or an extra member: [A-Za-z0-9_.-]{1,64}. */
static int name_ok(const char *s)
{
    size_t i, n = s ? strlen(s) : 0;
    if (n == 0 || n > 64) return 0;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
              ch == '-'))
            return 0;
    }
    return 1;
}

int emq_publish(emq_db *db, const char *q, const char *event,
                const char *id, size_t n, const char *const *keys,
                const void *const *values, const size_t *value_lens)
{
    pub_ctx p = {q, event, id, n, keys, values, value_lens};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if ((rc = emq_gate_id(db, id)) < 0) return rc;
    if (!name_ok(event))
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: event must match "
                                           "[A-Za-z0-9_.-]{1,64}");
    if (n > 0 && (keys == NULL || values == NULL || value_lens == NULL))
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL keys or "
                                           "values");
    for (i = 0; i < n; i++) {
        if (!name_ok(keys[i]))
            return emq_db_wire(db, EMQ_EINVAL, "bad argument: a key must "
                                               "match [A-Za-z0-9_.-]{1,64}");
        if ((rc = emq_gate_bytes(db, values[i], value_lens[i])) < 0)
            return rc;
    }
    rc = emq_db_run(db, 1, pub_body, &p);
    if (rc >= 0) emq_ev_dispatch(db);
    return rc;
}
