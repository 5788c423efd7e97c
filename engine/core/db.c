/*
 * db.c — the emq_db handle: open (store, fence, node lease), close, options,
 * the last message, the clock, minting, checkpoints, and emq_db_run, the one
 * way a transition touches the store.
 *
 * Rules: the handle is opened only after the fence passed, and a failed open
 * leaves nothing behind (store closed, lease released). A transition reads
 * the clock exactly once, inside its transaction once the lock is held, and
 * that value is both its NOW and the store's expiry clock; every negative
 * result rolls the transaction back, so the handle stays usable after any
 * failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "brandedid.h"
#include "events.h"
#include "history.h"
#include "abi.h"
#include "platform.h"

#define DEFAULT_MAX_PAYLOAD (UINT64_C(512) * 1024 * 1024)

/* The first cell of the 41-bit horizon's last millisecond: a reservation
 * there leaves at most 4,096 ids (emq_open refuses it). */
#define HORIZON_CELL (EMQ_CELL_MAX & ~(uint64_t)0xFFF)

const char *emq_version(void) { return EMQLITE_VERSION; }
const char *emq_sqlite_version(void) { return sqlite3_libversion(); }

void emq_options_init_size(emq_options *o, size_t size)
{
    emq_options d;
    memset(&d, 0, sizeof d);
    d.synchronous = EMQ_SYNC_NORMAL;
    d.busy_timeout_ms = 5000;
    d.node_id = -1;
    d.clock = NULL;
    d.clock_ctx = NULL;
    d.exclusive = 0;
    d.readonly = 0;
    d.max_payload = DEFAULT_MAX_PAYLOAD;
    d.checkpoint_frames = EMQ_CHECKPOINT_FRAMES;
    d.page_size = 1024;   /* measured: BENCHMARKS.md, "Page size" */
    emq_struct_out(o, size, &d, sizeof d);
}

int64_t emq_wall_clock(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

emq_store *emq_db_store(emq_db *db) { return db->st; }

/* ----------------------------------------------------------------- messages */

void emq_db_clear(emq_db *db) { db->errmsg[0] = 0; }

int emq_db_enter(emq_db *db)
{
    if (db == NULL)
        return EMQ_EINVAL; /* no handle, no message to set */
    emq_db_clear(db);
    return EMQ_OK;
}

int emq_db_wire(emq_db *db, int rc, const char *msg)
{
    snprintf(db->errmsg, sizeof db->errmsg, "%s", msg);
    return rc;
}

int emq_db_fail(emq_db *db, int rc, const char *detail)
{
    if (detail && detail[0])
        snprintf(db->errmsg, sizeof db->errmsg, "%s: %s", emq_strerror(rc),
                 detail);
    else
        snprintf(db->errmsg, sizeof db->errmsg, "%s", emq_strerror(rc));
    return rc;
}

/* A store-level failure: WRONGTYPE is a wire error with its exact string,
 * and so is a Valkey error reply the store reproduces ("ERR hash value is
 * not an integer", always with EMQ_EPROTO): both reach emq_errmsg verbatim.
 * Others name their class and carry the store's detail. */
static int store_fail(emq_db *db, int rc)
{
    const char *m = emq_store_errmsg(db->st);
    if (rc == EMQ_EWRONGTYPE) return emq_db_wire(db, rc, EMQ_WRONGTYPE_MSG);
    if (rc == EMQ_EPROTO && strncmp(m, "ERR ", 4) == 0)
        return emq_db_wire(db, rc, m);
    return emq_db_fail(db, rc, m);
}

const char *emq_errmsg(const emq_db *db)
{
    return db ? db->errmsg : "";
}

/* --------------------------------------------------------------- the runner */

int emq_db_tx_begin(emq_db *db, int write, int64_t *now)
{
    int rc;
    emq_db_clear(db);     /* a body's wire message must not be stale */
    if (write && db->opt.readonly)
        return emq_db_fail(db, EMQ_EREADONLY, "the handle was opened "
                                              "read-only");
    rc = emq_store_begin(db->st, write, 0);
    if (rc < 0) return store_fail(db, rc);
    /* NOW is read once, inside the transaction: after the write lock is
     * held, so a wait for the lock never makes it stale. */
    *now = db->clock(db->clock_ctx);
    if (*now == EMQ_CLOCK_FAILED) {
        emq_store_rollback(db->st);
        return emq_db_fail(db, EMQ_EINVAL, "the clock callback failed");
    }
    emq_store_set_now(db->st, *now);
    return EMQ_OK;
}

int emq_db_tx_end(emq_db *db, int rc)
{
    int c;
    if (rc < 0) {
        emq_store_rollback(db->st);
        if (db->errmsg[0] == 0) store_fail(db, rc);
        return rc;
    }
    c = emq_store_commit(db->st);
    if (c < 0) return store_fail(db, c);
    return rc;
}

int emq_db_run(emq_db *db, int write, emq_tx_fn fn, void *ctx)
{
    int64_t now;
    int rc = emq_db_tx_begin(db, write, &now);
    if (rc < 0) return rc;
    return emq_db_tx_end(db, fn(db, db->st, now, ctx));
}

/* ------------------------------------------------------------ open / close */

int emq_remove_files(const char *path)
{
    char p[4096 + 32]; /* PATH_MAX and the longest suffix */
    size_t n, i;
    int rc = EMQ_OK, err = 0;
    if (path == NULL || path[0] == 0 || strcmp(path, ":memory:") == 0)
        return EMQ_EINVAL;
    if ((n = strlen(path)) + 16 >= sizeof p) {
        errno = ENAMETOOLONG; /* no file can have such a name */
        return EMQ_EIO;
    }
    memcpy(p, path, n + 1);
    for (i = 0;; i++) {
        if (unlink(p) != 0 && errno != ENOENT && err == 0) {
            err = errno;
            rc = EMQ_EIO;
        }
        if (emq_store_side_suffixes[i] == NULL) break;
        snprintf(p + n, sizeof p - n, "%s", emq_store_side_suffixes[i]);
    }
    if (err) errno = err;
    return rc;
}

static int bad_options(const emq_options *o)
{
    return (o->synchronous != EMQ_SYNC_NORMAL &&
            o->synchronous != EMQ_SYNC_FULL) ||
           o->busy_timeout_ms < 0 || o->node_id < -1 || o->node_id > 1023 ||
           o->checkpoint_frames < 0 ||
           (o->page_size != 0 &&
            (o->page_size < 512 || o->page_size > 65536 ||
             (o->page_size & (o->page_size - 1)) != 0)) ||
           (o->wire && !emq_wire_known(o->wire, strlen(o->wire)));
}

static void put_err(char *errbuf, size_t errlen, const char *msg)
{
    if (errbuf && errlen) snprintf(errbuf, errlen, "%s", msg);
}

int emq_open_ex(const char *path, const emq_options *opt, emq_db **out,
                char *errbuf, size_t errlen)
{
    emq_options o;
    emq_store_opts so;
    emq_store *st = NULL;
    emq_db *db = NULL;
    char err[EMQ_ERRMSG_MAX];
    int rc, node = -1, fd = -1;
    emq_plock *lease = NULL;
    uint64_t reserved = 0;
    emq_clock_fn clock;

    err[0] = 0;
    if (out) *out = NULL;
    emq_options_init(&o);
    if (opt && emq_struct_in(&o, sizeof o, opt) != EMQ_OK) {
        rc = EMQ_EINVAL;
        snprintf(err, sizeof err, "%s: options not set by emq_options_init(), "
                 "or a field this library does not know", emq_strerror(rc));
        goto fail;
    }
    if (out == NULL || path == NULL || bad_options(&o)) {
        rc = EMQ_EINVAL;
        snprintf(err, sizeof err, "%s: NULL path or handle pointer, or an "
                 "option out of range", emq_strerror(rc));
        goto fail;
    }
    clock = o.clock ? o.clock : emq_wall_clock;

    memset(&so, 0, sizeof so);
    so.synchronous = o.synchronous;
    so.busy_timeout_ms = o.busy_timeout_ms;
    so.exclusive = o.exclusive;
    so.readonly = o.readonly;
    so.checkpoint_frames = o.checkpoint_frames;
    so.page_size = o.page_size;
    /* The fence is judged before the store writes anything. */
    so.judge_key = EMQ_VERSION_KEY;
    so.judge = emq_fence_judge;
    so.judge_ctx = &o.readonly;
    so.dict = &emq_jobrow_dict;
    rc = emq_store_open(path, &so, &st, err, sizeof err);
    if (rc < 0) {
        if (err[0] == 0) snprintf(err, sizeof err, "%s", emq_strerror(rc));
        goto fail;
    }
    emq_store_set_watch(st, emq_wake_rules); /* commits that can wake a
                                                claim signal (wait.c) */
    rc = emq_fence_pass(st, o.readonly, o.wire, clock(o.clock_ctx), err,
                        sizeof err);
    if (rc < 0) goto fail;
    rc = emq_node_lease(st, o.node_id, o.readonly, &node, &lease, err,
                        sizeof err);
    if (rc < 0) goto fail;
    fd = lease ? emq_plock_fd(lease) : -1;
    if (fd >= 0) {
        /* Mint above every id an earlier holder of the node may have
         * minted, whether it closed or died (doc/IDS.md). */
        rc = emq_node_reserve_read(fd, node, &reserved);
        if (rc < 0) {
            snprintf(err, sizeof err, "%s: cannot read the mint reservation "
                     "of node id %d from the node-id sidecar",
                     emq_strerror(rc), node);
            goto fail;
        }
        /* A reservation at the horizon's last millisecond leaves no id to
         * mint: a clock set past 2093, or a damaged or hostile sidecar. */
        if (reserved >= HORIZON_CELL) {
            rc = EMQ_EEXHAUSTED;
            snprintf(err, sizeof err, "%s: the node-id sidecar %s-emqnode "
                     "reserves node id %d up to the 41-bit id horizon "
                     "(2093-09-06T15:47:35.551Z), so no id is left to mint "
                     "(a clock set past 2093, or a damaged sidecar: remove "
                     "it while no handle is open)", emq_strerror(rc),
                     emq_store_path(st), node);
            goto fail;
        }
        emq_snow_seed((unsigned)node, reserved);
    }
    if (o.checksums && !emq_store_checksums(st)) {
        /* Every handle of the file must write sums from the first row on:
         * turned on only by the file's only handle. */
        if (o.readonly ||
            (emq_store_path(st) && (lease == NULL || !emq_node_alone(lease)))) {
            rc = o.readonly ? EMQ_EREADONLY : EMQ_EBUSY;
            snprintf(err, sizeof err, "%s: checksums can be turned on only "
                     "by a read-write handle while no other handle has the "
                     "file open", emq_strerror(rc));
            goto fail;
        }
        if ((rc = emq_store_enable_checksums(st)) < 0) {
            snprintf(err, sizeof err, "%s: cannot turn checksums on: %s",
                     emq_strerror(rc), emq_store_errmsg(st));
            goto fail;
        }
    }

    db = emq_mem_calloc(1, sizeof *db);
    if (db == NULL) {
        rc = EMQ_ENOMEM;
        snprintf(err, sizeof err, "%s", emq_strerror(rc));
        goto fail;
    }
    emq_mem_hold();
    db->st = st;
    db->clock = clock;
    db->clock_ctx = o.clock_ctx;
    db->node_id = node;
    db->opt = o;
    db->lease = lease;
    db->reserved = reserved;
    *out = db;
    return EMQ_OK;
fail:
    emq_node_release(lease);
    if (st) emq_store_close(st);
    put_err(errbuf, errlen, err);
    return rc;
}

int emq_open(const char *path, const emq_options *opt, emq_db **out)
{
    return emq_open_ex(path, opt, out, NULL, 0);
}

void emq_close(emq_db *db)
{
    if (db == NULL) return;
    emq_ev_close(db);
    emq_hist_close(db);
    emq_store_close(db->st);
    /* A clean close lowers the reservation to the exact high-water mark,
     * so the next holder does not start up to RESERVE_AHEAD in the future.
     * On failure the higher reservation stands, which is still safe. */
    if (db->lease && db->minted != 0 && db->minted < db->reserved)
        (void)emq_node_reserve_write(emq_plock_fd(db->lease), db->node_id,
                                     db->minted);
    emq_node_release(db->lease);
    emq_mem_free(db);
    emq_mem_release();
}

int emq_node_id(const emq_db *db) { return db ? db->node_id : -1; }

void emq_set_clock(emq_db *db, emq_clock_fn clock, void *ctx)
{
    if (db == NULL)
        return;
    db->clock = clock ? clock : emq_wall_clock;
    db->clock_ctx = clock ? ctx : NULL;
    db->opt.clock = clock;
    db->opt.clock_ctx = db->clock_ctx;
}

int64_t emq_now(emq_db *db)
{
    return db ? db->clock(db->clock_ctx) : emq_wall_clock(NULL);
}

/* How far ahead of the minted cell a reservation is written: one second
 * of cells, so a handle minting steadily writes at most once a second. */
#define RESERVE_AHEAD (UINT64_C(1000) << 12)

/*
 * A file handle persists a reservation above the cell before it hands out
 * an id whose cell reached the last one, so a process killed at any point
 * has minted only below what the sidecar says, and the next holder of the
 * node (seeded from it at open) mints above (doc/IDS.md).
 */
int emq_mint(emq_db *db, const char *ns, char out[EMQ_ID_SIZE])
{
    uint64_t snow, cell;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (ns == NULL || out == NULL)
        return emq_db_fail(db, EMQ_EINVAL, "NULL namespace or output");
    if (strlen(ns) != 3 || emq_id_encode(ns, 0, out) != EMQ_OK)
        return emq_db_wire(db, EMQ_EID, "a namespace is three bytes A-Z");
    snow = emq_snow_mint((unsigned)db->node_id, db->clock(db->clock_ctx));
    if (snow == EMQ_SNOW_EXHAUSTED) {
        out[0] = 0;
        return emq_db_fail(db, EMQ_EEXHAUSTED, "no id is left to mint: "
                           "the snowflake's 41-bit millisecond field ends at "
                           "2093-09-06T15:47:35.551Z (is the clock right?)");
    }
    if (db->lease) {
        cell = emq_snow_cell(snow);
        if (cell >= db->reserved) {
            uint64_t ahead = cell < EMQ_CELL_MAX + 1 - RESERVE_AHEAD
                                 ? cell + RESERVE_AHEAD : EMQ_CELL_MAX + 1;
            rc = emq_node_reserve_write(emq_plock_fd(db->lease),
                                        db->node_id, ahead);
            if (rc < 0) {
                out[0] = 0;
                return emq_db_fail(db, rc, "cannot write the mint "
                                   "reservation to the node-id sidecar");
            }
            db->reserved = ahead;
        }
        db->minted = cell + 1;
    }
    return emq_id_encode(ns, snow, out);
}

int emq_checkpoint(emq_db *db)
{
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    rc = emq_store_checkpoint(db->st);
    return rc < 0 ? store_fail(db, rc) : EMQ_OK;
}

/* ---------------------------------------------------------- owned memory */

void emq_free(void *p) { emq_mem_free(p); }

void emq_job_clear(emq_job *job)
{
    if (job == NULL) return;
    emq_mem_free(job->payload);
    memset(job, 0, sizeof *job);
}

void emq_fields_free(emq_field *fields, size_t n)
{
    size_t i;
    if (fields == NULL) return;
    for (i = 0; i < n; i++) {
        emq_mem_free(fields[i].name);
        emq_mem_free(fields[i].value);
    }
    emq_mem_free(fields);
}
