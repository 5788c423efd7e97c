/*
 * gate.c — the writer gate: an open-file-description lock on a file beside
 * the database (<file>-emqlock) that keeps checkpoints and commits apart.
 *
 * Why: SQLite 3.7.0–3.51.2 can lose committed pages when a checkpoint races
 * a commit that resets the WAL. A RESTART checkpoint takes the writer lock,
 * but when it cannot get it SQLite quietly runs it as a PASSIVE one, without
 * the lock. So every emqlite write transaction holds the gate shared, and a
 * checkpoint runs only while holding it exclusive, taken without waiting:
 * no emqlite commit can be in flight during a checkpoint, whatever mode
 * SQLite falls back to. The lock is a byte lock of platform.h: it belongs
 * to the handle (an open), so it conflicts between handles of one process
 * too, and vanishes with a dead process. Handles in exclusive locking
 * mode, read-only handles and in-memory stores need no gate (gate =
 * NULL: every call is a no-op).
 *
 * Rules: a writer never waits for the gate longer than the handle's busy
 * timeout (it polls, backing off, then answers EMQ_EBUSY), so a stopped
 * checkpointer or a foreign lock on the file costs a writer at most that
 * timeout; the time it waited is taken off SQLite's own wait for the write
 * lock. The gate file is a side file (side.c): resolved name, no symlink,
 * the database file's permissions.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "store_int.h"
#include "platform.h"

/* The gate's byte: 0 on success, else an errno value (EAGAIN: held). */
static int lock(emq_plock *g, int type)
{
    return emq_plock_set(g, 0, type);
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int emq_wgate_open(emq_store *st)
{
    char err[sizeof st->errmsg];
    int rc, fd = -1;
    st->gate = NULL;
    if (st->memory || st->opts.exclusive || st->opts.readonly)
        return EMQ_OK;
    rc = emq_store_side_open(st, EMQ_SIDE_GATE, 1, &fd, err, sizeof err);
    if (rc != EMQ_OK)
        return emq_store_err(st, rc, "%s", err);
    if ((rc = emq_plock_open(fd, &st->gate)) != 0)
        return emq_store_err(st, rc == ENOMEM ? EMQ_ENOMEM : EMQ_EIO,
                             "writer gate %s-emqlock: %s", st->path,
                             strerror(rc));
    return EMQ_OK;
}

void emq_wgate_close(emq_store *st)
{
    emq_plock_close(st->gate);
    st->gate = NULL;
}

int emq_wgate_enter(emq_store *st, int budget_ms, int *waited_ms)
{
    int64_t start, limit, now;
    long pause_us = 50;
    int e;
    *waited_ms = 0;
    if (st->gate == NULL || (e = lock(st->gate, EMQ_PLOCK_RD)) == 0)
        return EMQ_OK;
    /* Held exclusive: a checkpoint runs (bounded work), or a process that
     * holds it is stopped, or someone else locked the file. Poll with a
     * growing pause, up to the busy timeout. */
    start = mono_us();
    limit = start + (int64_t)budget_ms * 1000;
    do {
        now = mono_us();
        *waited_ms = (int)((now - start) / 1000);
        if (e != EAGAIN) /* the portable table's ENOMEM too */
            return emq_store_err(st, e == ENOMEM ? EMQ_ENOMEM : EMQ_EIO,
                                 "writer gate %s-emqlock: %s", st->path,
                                 strerror(e));
        if (now >= limit)
            return emq_store_err(st, EMQ_EBUSY, "the writer gate "
                                 "%s-emqlock stayed locked for %d ms (a "
                                 "checkpoint, a stopped process or another "
                                 "lock on that file)", st->path, *waited_ms);
        struct timespec ts = {0, 0};
        ts.tv_nsec = (pause_us < limit - now ? pause_us : (long)(limit - now))
                     * 1000;
        nanosleep(&ts, NULL);
        if (pause_us < 8000)
            pause_us *= 2;
    } while ((e = lock(st->gate, EMQ_PLOCK_RD)) != 0);
    *waited_ms = (int)((mono_us() - start) / 1000);
    return EMQ_OK;
}

void emq_wgate_leave(emq_store *st)
{
    if (st->gate != NULL)
        lock(st->gate, EMQ_PLOCK_UN);
}

int emq_wgate_try_exclusive(emq_store *st)
{
    if (st->gate == NULL)
        return 1;
    return lock(st->gate, EMQ_PLOCK_WR) == 0;
}
