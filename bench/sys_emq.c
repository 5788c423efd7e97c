/*
 * sys_emq.c — emqlite as a system under test: every transition is one call
 * of the public API (api/emqlite.h), one SQLite transaction each, with the
 * library's own checkpoint policy (auto-checkpoint off, RESTART once the WAL
 * holds 4000 frames after a commit).
 *
 * Rule: verdicts are checked, not trusted — enqueue must answer
 * EMQ_ENQUEUED, complete EMQ_OK, a claim must carry a 100-byte payload.
 */
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "db.h"   /* emq_db_store: the connection, for --pages */

typedef struct emq_sys {
    emq_db *db;
    char path[1024];
    emq_item *items;  /* scratch for enqueue_many */
    int *verdicts;
    size_t cap;
} emq_sys;

static int e_enqueue(bsys *s, const char *id)
{
    emq_sys *e = s->h;
    int rc = emq_enqueue(e->db, BENCH_QUEUE, id, bench_payload, BENCH_PAYLOAD);
    if (rc != EMQ_ENQUEUED)
        return s->rc = rc, bench_err(s, "emq_enqueue %s: %d %s", id, rc,
                                     emq_errmsg(e->db));
    return 0;
}

static int e_many(bsys *s, const bench_item *it, size_t n)
{
    emq_sys *e = s->h;
    size_t i;
    int rc;
    if (n > e->cap) {
        free(e->items);
        free(e->verdicts);
        e->items = malloc(n * sizeof *e->items);
        e->verdicts = malloc(n * sizeof *e->verdicts);
        if (!e->items || !e->verdicts) {
            e->cap = 0;
            return bench_err(s, "out of memory");
        }
        e->cap = n;
    }
    for (i = 0; i < n; i++) {
        e->items[i].id = it[i].id;
        e->items[i].payload = bench_payload;
        e->items[i].len = BENCH_PAYLOAD;
    }
    rc = emq_enqueue_many(e->db, BENCH_QUEUE, e->items, n, e->verdicts);
    if (rc != EMQ_OK)
        return bench_err(s, "emq_enqueue_many: %d %s", rc, emq_errmsg(e->db));
    for (i = 0; i < n; i++)
        if (e->verdicts[i] != EMQ_ENQUEUED)
            return bench_err(s, "emq_enqueue_many item %zu: verdict %d", i,
                             e->verdicts[i]);
    return 0;
}

static int e_claim(bsys *s, char id[EMQ_ID_SIZE], int64_t *token)
{
    emq_sys *e = s->h;
    emq_job job;
    int rc = emq_claim(e->db, BENCH_QUEUE, BENCH_LEASE_MS, &job);
    if (rc == EMQ_EMPTY) return 1;
    if (rc != EMQ_OK)
        return s->rc = rc, bench_err(s, "emq_claim: %d %s", rc,
                                     emq_errmsg(e->db));
    if (job.payload_len != BENCH_PAYLOAD ||
        memcmp(job.payload, bench_payload, BENCH_PAYLOAD) != 0) {
        emq_job_clear(&job);
        return bench_err(s, "emq_claim: wrong payload");
    }
    memcpy(id, job.id, EMQ_ID_SIZE);
    *token = job.attempts;
    emq_job_clear(&job);
    return 0;
}

static int e_complete(bsys *s, const char *id, int64_t token)
{
    emq_sys *e = s->h;
    int rc = emq_complete(e->db, BENCH_QUEUE, id, token);
    if (rc != EMQ_OK)
        return s->rc = rc, bench_err(s, "emq_complete %s: %d %s", id, rc,
                                     emq_errmsg(e->db));
    return 0;
}

static int e_pending(bsys *s, int64_t *n)
{
    emq_sys *e = s->h;
    int rc = emq_pending_size(e->db, BENCH_QUEUE, n);
    if (rc != EMQ_OK)
        return bench_err(s, "emq_pending_size: %d %s", rc, emq_errmsg(e->db));
    return 0;
}

static int e_settle(bsys *s)
{
    emq_sys *e = s->h;
    int rc = emq_checkpoint(e->db);
    if (rc != EMQ_OK)
        return bench_err(s, "emq_checkpoint: %d %s", rc, emq_errmsg(e->db));
    return 0;
}

static int e_foot(bsys *s, bench_foot *f)
{
    emq_sys *e = s->h;
    char wal[1100];
    snprintf(wal, sizeof wal, "%s-wal", e->path);
    f->disk_bytes = bench_file_size(e->path);
    f->wal_bytes = bench_file_size(wal);
    f->mem_bytes = -1;
    f->server_hwm_kb = -1;
    return 0;
}

static void e_close(bsys *s)
{
    emq_sys *e = s->h;
    if (!e) return;
    emq_close(e->db);
    free(e->items);
    free(e->verdicts);
    free(e);
    s->h = NULL;
}

static const bsys_ops emq_ops = {
    e_enqueue, e_many, e_claim, e_complete, e_pending, e_settle, e_foot,
    e_close,
};

emq_db *bench_emq_db(bsys *s)
{
    return ((emq_sys *)s->h)->db;
}

struct sqlite3 *bench_emq_sqlite(bsys *s)
{
    return emq_store_sqlite(emq_db_store(((emq_sys *)s->h)->db));
}

int bench_emq_open(const bench_conf *c, bsys *s)
{
    emq_options o;
    emq_sys *e = calloc(1, sizeof *e);
    char err[256];
    int rc;
    memset(s, 0, sizeof *s);
    s->ops = &emq_ops;
    s->name = "emqlite";
    if (!e) return bench_err(s, "out of memory");
    snprintf(e->path, sizeof e->path, "%s", c->path);
    emq_options_init(&o);
    o.synchronous = c->sync;
    o.exclusive = c->exclusive;
    o.checksums = c->checksums;
    if (c->page_size > 0) o.page_size = c->page_size; /* else the default */
    if (c->ckpt_frames > 0) o.checkpoint_frames = c->ckpt_frames;
    rc = emq_open_ex(c->path, &o, &e->db, err, sizeof err);
    if (rc != EMQ_OK) {
        free(e);
        s->rc = rc;
        return bench_err(s, "emq_open %s: %s", c->path, err);
    }
    if (c->history != BENCH_HIST_ON) {
        emq_history_config h;
        if (emq_history_config_get(e->db, &h) != EMQ_OK ||
            (h.enabled = c->history == BENCH_HIST_FAILURES
                             ? EMQ_HISTORY_FAILURES : EMQ_HISTORY_OFF,
             emq_history_config_set(e->db, &h)) != EMQ_OK) {
            bench_err(s, "history level: %s", emq_errmsg(e->db));
            emq_close(e->db);
            free(e);
            return -1;
        }
    }
    if (c->hist_full) {
        emq_history_config h;
        emq_retention r;
        int rc2 = emq_history_config_get(e->db, &h);
        if (rc2 == EMQ_OK) {
            h.per_queue = 1000;
            rc2 = emq_history_config_set(e->db, &h);
        }
        if (rc2 == EMQ_OK) rc2 = emq_retention_get(e->db, NULL, &r);
        if (rc2 == EMQ_OK) {
            r.completed_keep = 1000;
            rc2 = emq_retention_set(e->db, NULL, &r);
        }
        if (rc2 != EMQ_OK) {
            bench_err(s, "history bounds: %s", emq_errmsg(e->db));
            emq_close(e->db);
            free(e);
            return -1;
        }
    }
    s->h = e;
    return 0;
}
