/*
 * reads.c — the pure reads: T1.9 browse, T1.10 pending_size, per-queue
 * figures (emq_stats_get) and the queue list (emq_queues); the job row
 * (emq_job_get) is T2.5's get_job, in jobread.c. Each runs in one read transaction and writes nothing.
 *
 * Rule: everything returned is a fresh malloc'd copy owned by the caller.
 */
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"

/* ------------------------------------------------------------------ browse */

static int browse_cb(void *ctx, const unsigned char *m, size_t mlen, double s)
{
    (void)s;
    return emq_reply_push_bulk(ctx, m, mlen);
}

/*
 * T1.9 browse(q, n > 0): the first n members of B.pending in memcmp-
 * descending order (newest first).
 * Keys: B.pending. Reply: the ids. Clock: none (read transaction).
 */
int emq_v_browse(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_PENDING);
    int rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0);
    if (rc < 0) return rc;
    rc = emq_zset_range(c->st, k, kl, 1, c->a[1].i, browse_cb, c->r);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_browse(emq_db *db, const char *q, size_t n, char (*ids)[EMQ_ID_SIZE],
               size_t *count)
{
    int64_t lim = n > (size_t)INT64_MAX ? INT64_MAX : (int64_t)n;
    emq_varg a[2] = {emq_varg_str(q), emq_varg_int(lim)};
    emq_reply r = {0};
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (count) *count = 0;
    if (n > 0 && (ids == NULL || count == NULL)) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL ids or count");
    }
    rc = emq_verb_exec(db, EMQ_V_BROWSE, a, 2, &r, NULL);
    for (i = 0; rc == EMQ_OK && i < r.n; i++) {
        if (r.elem[i].len != EMQ_ID_LEN) {
            rc = emq_db_fail(db, EMQ_ECORRUPT, "the pending set holds a "
                             "member that is not a 14-byte id");
            break;
        }
        memcpy(ids[i], r.elem[i].str, EMQ_ID_SIZE);
    }
    if (rc == EMQ_OK) *count = r.n;
    emq_reply_clear(&r);
    return rc;
}

/* ------------------------------------------------------------ pending_size */

/*
 * T1.10 pending_size(q): card(B.pending).
 * Keys: B.pending. Clock: none (read transaction).
 */
int emq_v_pending_size(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, EMQ_KT_PENDING);
    int64_t n;
    int rc = emq_zset_card(c->st, k, kl, &n);
    if (rc < 0) return rc;
    emq_reply_int(c->r, n);
    return EMQ_OK;
}

int emq_pending_size(emq_db *db, const char *q, int64_t *size)
{
    emq_varg a[1] = {emq_varg_str(q)};
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (size == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL size");
    }
    rc = emq_verb_exec(db, EMQ_V_PENDING_SIZE, a, 1, &r, NULL);
    if (rc == EMQ_OK) *size = r.integer;
    return rc;
}

/* -------------------------------------------------------------------- stats */

typedef struct stats_ctx {
    const char *q;
    emq_stats *st;
} stats_ctx;

static int count_of(emq_store *st, const char *q, int kt, int64_t *out)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, kt);
    emq_buf v = {0};
    int rc = emq_hash_get(st, k, kl, "count", 5, &v);
    *out = 0;
    if (rc == EMQ_OK && emq_parse_i64(v.p, v.len, out) != 0) rc = EMQ_EPROTO;
    emq_buf_free(&v);
    return rc < 0 ? rc : EMQ_OK;
}

static int stats_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    stats_ctx *c = ctx;
    static const int sets[4] = {EMQ_KT_PENDING, EMQ_KT_ACTIVE,
                                EMQ_KT_SCHEDULE, EMQ_KT_DEAD};
    int64_t *cards[4];
    char k[EMQ_KEY_MAX];
    size_t kl;
    int i, rc;
    (void)db;
    (void)now;
    cards[0] = &c->st->pending;
    cards[1] = &c->st->active;
    cards[2] = &c->st->scheduled;
    cards[3] = &c->st->dead;
    for (i = 0; i < 4; i++) {
        kl = emq_key(k, c->q, sets[i]);
        if ((rc = emq_zset_card(st, k, kl, cards[i])) < 0) return rc;
    }
    if ((rc = count_of(st, c->q, EMQ_KT_METRICS_COMPLETED,
                       &c->st->completed)) < 0)
        return rc;
    if ((rc = count_of(st, c->q, EMQ_KT_METRICS_FAILED, &c->st->failed)) < 0)
        return rc;
    kl = emq_key(k, c->q, EMQ_KT_META);
    rc = emq_hash_exists(st, k, kl, "paused", 6, &c->st->paused);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * Per-queue figures in one read transaction: card of B.pending, B.active,
 * B.schedule, B.dead; `count` of B.metrics:completed / :failed (0 when
 * absent); whether B.meta has field `paused`. Clock: none.
 */
int emq_stats_get(emq_db *db, const char *q, emq_stats *st)
{
    stats_ctx c = {q, st};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    if (st == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL stats");
    memset(st, 0, sizeof *st);
    rc = emq_db_run(db, 0, stats_body, &c);
    if (rc < 0) memset(st, 0, sizeof *st);
    return rc;
}

/* ------------------------------------------------------------------- queues */

static char *dup_bytes(const unsigned char *p, size_t n)
{
    char *s = emq_mem_malloc(n + 1);
    if (s == NULL) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = 0;
    return s;
}

typedef struct queues_ctx {
    char **v;
    size_t n, cap;
} queues_ctx;

static int queue_cb(void *ctx, const unsigned char *key, size_t klen,
                    int type)
{
    queues_ctx *c = ctx;
    const unsigned char *s = key + 5, *e;
    char *name;
    (void)type;
    if (klen <= 5) return 0;
    e = memchr(s, '}', klen - 5);
    if (e == NULL || e == s) return 0;
    if ((name = dup_bytes(s, (size_t)(e - s))) == NULL) return EMQ_ENOMEM;
    if (strlen(name) != (size_t)(e - s) || !emq_queue_valid(name)) {
        emq_mem_free(name);
        return 0;
    }
    if (c->n > 0 && strcmp(c->v[c->n - 1], name) == 0) {
        emq_mem_free(name);     /* the common case: keys of one queue run */
        return 0;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        char **nv = emq_mem_realloc(c->v, cap * sizeof *nv);
        if (nv == NULL) { emq_mem_free(name); return EMQ_ENOMEM; }
        c->v = nv;
        c->cap = cap;
    }
    c->v[c->n++] = name;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int queues_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    (void)db;
    (void)now;
    return emq_key_scan(st, "emq:{", 5, queue_cb, ctx);
}

/*
 * The queues that have keys: the names between "emq:{" and the first "}" of
 * every live per-queue key, distinct, in byte order. Clock: none.
 */
int emq_queues(emq_db *db, char ***queues, size_t *n)
{
    queues_ctx c = {NULL, 0, 0};
    size_t i, o;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (queues) *queues = NULL;
    if (n) *n = 0;
    if (queues == NULL || n == NULL)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL output");
    rc = emq_db_run(db, 0, queues_body, &c);
    if (rc < 0) {
        emq_queues_free(c.v, c.n);
        return rc;
    }
    /* "a.b" sorts before "a" among keys ('.' < '}'), so sort the names and
     * drop the duplicates the key order left apart. */
    if (c.n > 1) qsort(c.v, c.n, sizeof *c.v, cmp_name);
    for (i = 0, o = 0; i < c.n; i++) {
        if (o > 0 && strcmp(c.v[o - 1], c.v[i]) == 0) emq_mem_free(c.v[i]);
        else c.v[o++] = c.v[i];
    }
    *queues = c.v;
    *n = o;
    return EMQ_OK;
}

void emq_queues_free(char **queues, size_t n)
{
    size_t i;
    if (queues == NULL) return;
    for (i = 0; i < n; i++) emq_mem_free(queues[i]);
    emq_mem_free(queues);
}
