/*
 * sys_raw.c — the raw-SQL baseline: the same Tier 1 transitions written by
 * hand over one dedicated table, to show SQLite's own limit for this work.
 *
 *   jobs(id PRIMARY KEY, queue, state, attempts, payload, deadline)
 *        WITHOUT ROWID, plus one index jobs_claim(queue, state, id)
 *
 * enqueue  INSERT ... ON CONFLICT DO NOTHING            (state 0 = pending)
 * claim    SELECT id, attempts, payload of the smallest pending id of the
 *          queue, then UPDATE ... SET state 1, attempts + 1, deadline
 *          WHERE id (two plain statements: UPDATE ... RETURNING runs its
 *          rows through an ephemeral table, ~25k instructions per cycle of
 *          throwaway work no careful hand-written claim would pay)
 * complete DELETE WHERE id AND attempts (the token)
 *
 * Same file policy as emqlite: WAL, the same page size (1024 unless
 * --page-size), the same `synchronous`, auto-checkpoint
 * off, a RESTART checkpoint after any commit that leaves emqlite's default
 * interval of WAL frames (4000),
 * one BEGIN IMMEDIATE .. COMMIT per transition, statements prepared once.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"

enum { R_BEGIN, R_COMMIT, R_ROLLBACK, R_INSERT, R_OLDEST, R_CLAIM, R_DELETE,
       R_PENDING, R_COUNT };

static const char *const raw_sql[R_COUNT] = {
    [R_BEGIN] = "BEGIN IMMEDIATE",
    [R_COMMIT] = "COMMIT",
    [R_ROLLBACK] = "ROLLBACK",
    [R_INSERT] = "INSERT INTO jobs(id, queue, state, attempts, payload,"
                 " deadline) VALUES(?1, ?2, 0, 0, ?3, NULL)"
                 " ON CONFLICT DO NOTHING",
    [R_OLDEST] = "SELECT id, attempts, payload FROM jobs"
                 " WHERE queue = ?1 AND state = 0 ORDER BY id LIMIT 1",
    [R_CLAIM] = "UPDATE jobs SET state = 1, attempts = ?3,"
                " deadline = ?2 WHERE id = ?1",
    [R_DELETE] = "DELETE FROM jobs WHERE id = ?1 AND attempts = ?2",
    [R_PENDING] = "SELECT count(*) FROM jobs WHERE queue = ?1 AND state = 0",
};

static const char *const raw_schema =
    "CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, queue TEXT NOT NULL,"
    " state INTEGER NOT NULL, attempts INTEGER NOT NULL, payload BLOB,"
    " deadline INTEGER) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS jobs_claim ON jobs(queue, state, id);";

typedef struct raw_sys {
    sqlite3 *db;
    sqlite3_stmt *st[R_COUNT];
    int frames, ckpt_frames;
    char path[1024];
} raw_sys;

static int fail(bsys *s, raw_sys *r, const char *what)
{
    return bench_err(s, "raw %s: %s", what, sqlite3_errmsg(r->db));
}

static int wal_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
    (void)db;
    (void)name;
    ((raw_sys *)ctx)->frames = frames;
    return SQLITE_OK;
}

static int run0(raw_sys *r, int id)
{
    int rc = sqlite3_step(r->st[id]);
    sqlite3_reset(r->st[id]);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int begin(bsys *s, raw_sys *r)
{
    return run0(r, R_BEGIN) ? fail(s, r, "BEGIN") : 0;
}

/* COMMIT, then the checkpoint policy. */
static int commit(bsys *s, raw_sys *r)
{
    if (run0(r, R_COMMIT)) {
        int x = fail(s, r, "COMMIT");
        run0(r, R_ROLLBACK);
        return x;
    }
    if (r->frames >= r->ckpt_frames) {
        if (sqlite3_wal_checkpoint_v2(r->db, NULL, SQLITE_CHECKPOINT_RESTART,
                                      NULL, NULL) == SQLITE_OK)
            r->frames = 0;
    }
    return 0;
}

static int abort_tx(raw_sys *r, int rc)
{
    run0(r, R_ROLLBACK);
    return rc;
}

static int insert_one(bsys *s, raw_sys *r, const char *id)
{
    sqlite3_stmt *st = r->st[R_INSERT];
    int rc;
    sqlite3_bind_text(st, 1, id, EMQ_ID_LEN, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, BENCH_QUEUE, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 3, bench_payload, BENCH_PAYLOAD, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return fail(s, r, "INSERT");
    if (sqlite3_changes(r->db) != 1)
        return bench_err(s, "raw enqueue %s: duplicate", id);
    return 0;
}

static int r_enqueue(bsys *s, const char *id)
{
    raw_sys *r = s->h;
    int rc;
    if ((rc = begin(s, r)) < 0) return rc;
    if ((rc = insert_one(s, r, id)) < 0) return abort_tx(r, rc);
    return commit(s, r);
}

static int r_many(bsys *s, const bench_item *it, size_t n)
{
    raw_sys *r = s->h;
    size_t i;
    int rc;
    if ((rc = begin(s, r)) < 0) return rc;
    for (i = 0; i < n; i++)
        if ((rc = insert_one(s, r, it[i].id)) < 0) return abort_tx(r, rc);
    return commit(s, r);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int r_claim(bsys *s, char id[EMQ_ID_SIZE], int64_t *token)
{
    raw_sys *r = s->h;
    sqlite3_stmt *st = r->st[R_OLDEST], *up = r->st[R_CLAIM];
    int rc, found = 0;
    if ((rc = begin(s, r)) < 0) return rc;
    sqlite3_bind_text(st, 1, BENCH_QUEUE, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (sqlite3_column_bytes(st, 0) != EMQ_ID_LEN ||
            sqlite3_column_bytes(st, 2) != BENCH_PAYLOAD ||
            memcmp(sqlite3_column_blob(st, 2), bench_payload,
                   BENCH_PAYLOAD) != 0) {
            sqlite3_reset(st);
            return abort_tx(r, bench_err(s, "raw claim: wrong row"));
        }
        memcpy(id, sqlite3_column_text(st, 0), EMQ_ID_LEN);
        id[EMQ_ID_LEN] = 0;
        *token = sqlite3_column_int64(st, 1) + 1;
        found = 1;
        rc = SQLITE_DONE;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return abort_tx(r, fail(s, r, "claim"));
    if (found) {
        sqlite3_bind_text(up, 1, id, EMQ_ID_LEN, SQLITE_STATIC);
        sqlite3_bind_int64(up, 2, wall_ms() + BENCH_LEASE_MS);
        sqlite3_bind_int64(up, 3, *token);
        rc = sqlite3_step(up);
        sqlite3_reset(up);
        if (rc != SQLITE_DONE || sqlite3_changes(r->db) != 1)
            return abort_tx(r, fail(s, r, "claim UPDATE"));
    }
    if ((rc = commit(s, r)) < 0) return rc;
    return found ? 0 : 1;
}

static int r_complete(bsys *s, const char *id, int64_t token)
{
    raw_sys *r = s->h;
    sqlite3_stmt *st = r->st[R_DELETE];
    int rc;
    if ((rc = begin(s, r)) < 0) return rc;
    sqlite3_bind_text(st, 1, id, EMQ_ID_LEN, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, token);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return abort_tx(r, fail(s, r, "DELETE"));
    if (sqlite3_changes(r->db) != 1)
        return abort_tx(r, bench_err(s, "raw complete %s: gone or stale", id));
    return commit(s, r);
}

static int r_pending(bsys *s, int64_t *n)
{
    raw_sys *r = s->h;
    sqlite3_stmt *st = r->st[R_PENDING];
    int rc;
    sqlite3_bind_text(st, 1, BENCH_QUEUE, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *n = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : fail(s, r, "count");
}

static int r_settle(bsys *s)
{
    raw_sys *r = s->h;
    if (sqlite3_wal_checkpoint_v2(r->db, NULL, SQLITE_CHECKPOINT_RESTART, NULL,
                                  NULL) != SQLITE_OK)
        return fail(s, r, "checkpoint");
    r->frames = 0;
    return 0;
}

static int r_foot(bsys *s, bench_foot *f)
{
    raw_sys *r = s->h;
    char wal[1100];
    snprintf(wal, sizeof wal, "%s-wal", r->path);
    f->disk_bytes = bench_file_size(r->path);
    f->wal_bytes = bench_file_size(wal);
    f->mem_bytes = -1;
    f->server_hwm_kb = -1;
    return 0;
}

static void r_close(bsys *s)
{
    raw_sys *r = s->h;
    int i;
    if (!r) return;
    for (i = 0; i < R_COUNT; i++) sqlite3_finalize(r->st[i]);
    sqlite3_close(r->db);
    free(r);
    s->h = NULL;
}

static const bsys_ops raw_ops = {
    r_enqueue, r_many, r_claim, r_complete, r_pending, r_settle, r_foot,
    r_close,
};

struct sqlite3 *bench_raw_sqlite(bsys *s)
{
    return ((raw_sys *)s->h)->db;
}

int bench_raw_open(const bench_conf *c, bsys *s)
{
    raw_sys *r = calloc(1, sizeof *r);
    char pragmas[200];
    int i;
    memset(s, 0, sizeof *s);
    s->ops = &raw_ops;
    s->name = "raw";
    if (!r) return bench_err(s, "out of memory");
    s->h = r;
    snprintf(r->path, sizeof r->path, "%s", c->path);
    if (sqlite3_open_v2(c->path, &r->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK)
        goto fail;
    r->ckpt_frames = c->ckpt_frames > 0 ? c->ckpt_frames : bench_default_ckpt();
    snprintf(pragmas, sizeof pragmas,
             "PRAGMA page_size = %d; %sPRAGMA journal_mode = WAL;"
             " PRAGMA synchronous = %s; PRAGMA wal_autocheckpoint = 0;",
             c->page_size > 0 ? c->page_size : 1024, /* emqlite's default */
             c->exclusive ? "PRAGMA locking_mode = EXCLUSIVE; " : "",
             c->sync == EMQ_SYNC_FULL ? "FULL" : "NORMAL");
    if (sqlite3_exec(r->db, pragmas, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(r->db, raw_schema, NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    for (i = 0; i < R_COUNT; i++)
        if (sqlite3_prepare_v3(r->db, raw_sql[i], -1,
                               SQLITE_PREPARE_PERSISTENT, &r->st[i],
                               NULL) != SQLITE_OK)
            goto fail;
    sqlite3_wal_hook(r->db, wal_hook, r);
    return 0;
fail:
    bench_err(s, "raw open %s: %s", c->path,
              r->db ? sqlite3_errmsg(r->db) : "cannot open");
    r_close(s);
    return -1;
}
