/*
 * gsync.c — group commit for synchronous FULL (issue 33 item 2): writers
 * in any number of processes and threads share the -wal's fsyncs, and each
 * is acknowledged only once a sync that covers its commit has completed.
 *
 * How: a handle opened with EMQ_SYNC_FULL (shared locking mode, on a
 * file) runs SQLite at synchronous NORMAL, so COMMIT writes its frames to
 * the kernel (walbuf.c hands them over inside the commit) without syncing.
 * Still holding the writers' turn, the committer takes the next number of
 * a shared counter in the wake file (`committed`): every commit numbered
 * up to n had its frames written when n was taken. It then leaves the
 * turn (the next writer commits meanwhile) and waits until `synced`, the
 * shared count of commits known to be on disk, reaches its number. One
 * waiter at a time becomes the syncer: it reads `committed`, syncs the
 * -wal (SQLite's xSync on the connection's own -wal file, so a test VFS
 * sees it), and publishes that count as `synced`, waking the others. A
 * sync of the -wal covers every byte written to it before the sync began,
 * whichever process wrote them, so one sync acknowledges every commit
 * numbered when it started.
 *
 * Why that keeps FULL's promise: an acknowledged transition survives power
 * loss, because its frames were synced after they were written. What
 * SQLite's NORMAL adds to the picture is safe: frames in the -wal whose
 * sync did not complete may be lost, never half-applied (checksums end
 * the -wal's replay at the first frame not durable), and checkpoints
 * still sync the -wal before copying and the database after. The only
 * difference a reader can see: another handle may read a commit before
 * its sync completed (as a Valkey client may read a write that
 * appendfsync always has not yet synced); its writer is not told "done"
 * before.
 *
 * A sync that fails. The commits it was to cover are already visible (as
 * a Valkey write is before appendfsync always has synced it), so they can
 * no longer be undone: their writers get EMQ_EIO saying the commit is made
 * and its durability unknown. And a later sync that succeeds proves
 * nothing about them (after a failed fsync the kernel may have dropped
 * the unwritten pages and reports the next fsync clean), so the failure
 * poisons the group: `failed` is set in the shared area (or on the handle
 * without one), every waiter still waiting returns the same error, and no
 * handle of the file starts a write while it is set. The next writer
 * first runs a checkpoint (emq_store_checkpoint: SQLite syncs the -wal,
 * copies every frame into the database and syncs that): one that
 * completes makes every commit so far durable in the database file and
 * clears the flag; one that cannot answers the writer EMQ_EIO, and nothing
 * is applied. doc/RELIABILITY.md, "Group commit".
 *
 * Robustness: a syncer that dies or stops leaves its pid in `syncer`; a
 * waiter that sees no progress for GS_LOOK_MS checks whether that process
 * lives, takes the role from a dead one, and after GS_OWN_MS syncs by
 * itself whatever the role's state (an extra fsync is always safe). A
 * handle without a wake file (it could not be opened) syncs each commit
 * itself. Exclusive, in-memory and read-only handles keep SQLite's own
 * FULL (or have nothing to sync).
 */
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "store_int.h"
#include "notify.h"
#include "platform.h"

#define GS_LOOK_MS 2    /* a waiter's longest sleep between looks         */
#define GS_OWN_MS 200   /* a waiter syncs by itself after this long       */

typedef struct gsync_area {
    _Atomic uint32_t committed; /* numbers handed to commits so far       */
    _Atomic uint32_t synced;    /* commits up to this number are on disk  */
    _Atomic uint32_t syncer;    /* pid of the process syncing now, or 0   */
    _Atomic uint32_t failed;    /* a sync failed; no checkpoint since     */
} gsync_area;

_Static_assert(sizeof(gsync_area) <= EMQ_NOTIFY_TURN_BYTES / 2,
               "the group sync fits the second half of the turn region");

/* The shared area, or NULL for a handle without a wake file. */
static gsync_area *area(emq_store *st)
{
    unsigned char *t = st->notify ? emq_notify_turn_area(st->notify) : NULL;
    return t ? (gsync_area *)(t + EMQ_NOTIFY_TURN_BYTES / 2) : NULL;
}

/* a is at or past b, in wrapping 32-bit numbers. */
static int reached(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) >= 0;
}

/* The error of a commit made whose sync failed (rc: SQLite's, or 0 when
 * another handle's sync failed). */
static int made_not_durable(emq_store *st, int rc)
{
    st->gs_failed = 1;
    if (rc)
        return emq_store_err(st, EMQ_EIO, "%s: the commit is made but the "
                             "sync of its -wal failed (SQLite %d): its "
                             "durability is unknown, and writes wait for a "
                             "checkpoint", st->path, rc);
    return emq_store_err(st, EMQ_EIO, "%s: the commit is made but the sync "
                         "of the -wal that was to cover it failed: its "
                         "durability is unknown, and writes wait for a "
                         "checkpoint", st->path);
}

/* Sync the connection's -wal. */
static int sync_wal(emq_store *st)
{
    sqlite3_file *f = NULL;
    int rc = sqlite3_file_control(st->db, "main",
                                  SQLITE_FCNTL_JOURNAL_POINTER, &f);
    if (rc != SQLITE_OK || f == NULL || f->pMethods == NULL)
        return emq_store_err(st, EMQ_EIO, "%s: no -wal to sync after a "
                             "commit (synchronous FULL)", st->path);
    rc = f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
    if (rc != SQLITE_OK)
        return made_not_durable(st, rc);
    return EMQ_OK;
}

int emq_gsync_on(const emq_store *st)
{
    return st->opts.synchronous == EMQ_SYNC_FULL && !st->memory &&
           !st->opts.exclusive && !st->opts.readonly;
}

void emq_gsync_mark(emq_store *st)
{
    gsync_area *a = area(st);
    st->gs_pending = 1;
    st->gs_seq = a ? atomic_fetch_add(&a->committed, 1) + 1 : 0;
}

int emq_gsync_wait(emq_store *st)
{
    gsync_area *a;
    uint32_t me = (uint32_t)getpid(), want = st->gs_seq, done, who, target;
    int64_t start, last_move;
    int rc;
    if (!st->gs_pending) return EMQ_OK;
    st->gs_pending = 0;
    if ((a = area(st)) == NULL)
        return sync_wal(st);
    start = last_move = emq_mono_ms();
    done = atomic_load(&a->synced);
    while (!reached(done, want)) {
        int64_t now = emq_mono_ms();
        who = 0;
        if (now - start >= GS_OWN_MS ||
            atomic_compare_exchange_strong(&a->syncer, &who, me)) {
            int owner = now - start < GS_OWN_MS;
            target = atomic_load(&a->committed);
            rc = sync_wal(st);
            if (owner) atomic_store(&a->syncer, 0);
            if (rc != EMQ_OK) {
                atomic_store(&a->failed, 1); /* before the others look */
                emq_plat_wake(&a->synced, 1);
                return rc;
            }
            /* Publish: synced only moves forward. */
            done = atomic_load(&a->synced);
            while (!reached(done, target) &&
                   !atomic_compare_exchange_weak(&a->synced, &done, target))
                ;
            emq_plat_wake(&a->synced, 1);
            if (!owner) break; /* its own sync covered its commit */
            done = atomic_load(&a->synced);
            continue;
        }
        if (atomic_load(&a->failed))
            return made_not_durable(st, 0);
        /* Another syncs: wait for its publish. A syncer that is gone (or
         * stopped) gives its role up after GS_LOOK_MS of no progress. */
        if (now - last_move >= GS_LOOK_MS && who != me && emq_pid_gone(who))
            atomic_compare_exchange_strong(&a->syncer, &who, 0);
        emq_plat_wait(&a->synced, done, GS_LOOK_MS, 1);
        {
            uint32_t d = atomic_load(&a->synced);
            if (d != done) last_move = emq_mono_ms();
            done = d;
        }
    }
    return EMQ_OK;
}

int emq_gsync_ready(emq_store *st)
{
    gsync_area *a = area(st);
    char why[sizeof st->errmsg];
    if (!st->gs_failed && !(a && atomic_load(&a->failed)))
        return EMQ_OK;
    if (emq_store_checkpoint(st) == EMQ_OK) {
        st->gs_failed = 0;
        if (a) atomic_store(&a->failed, 0);
        return EMQ_OK;
    }
    snprintf(why, sizeof why, "%s", st->errmsg);
    return emq_store_err(st, EMQ_EIO, "%s: a sync of the -wal failed "
                         "earlier (on this or another handle), and the "
                         "checkpoint that would make every commit durable "
                         "again did not complete (%s): nothing is written "
                         "until one does", st->path, why);
}
