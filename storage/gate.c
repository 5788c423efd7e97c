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
 * SQLite falls back to. OFD locks (Linux) belong to the open file, so they
 * conflict between handles of one process too and vanish with a dead
 * process. Handles in exclusive locking mode, read-only handles and
 * in-memory stores need no gate (gate_fd = -1: every call is a no-op).
 *
 * Rules: a writer never waits for the gate longer than the handle's busy
 * timeout (it polls, backing off, then answers EMQ_EBUSY), so a stopped
 * checkpointer or a foreign lock on the file costs a writer at most that
 * timeout; the time it waited is taken off SQLite's own wait for the write
 * lock. The gate file is a side file (side.c): resolved name, no symlink,
 * the database file's permissions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "store_int.h"

static int lock(int fd, int cmd, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 1;
    int rc;
    do
        rc = fcntl(fd, cmd, &fl);
    while (rc != 0 && errno == EINTR);
    return rc;
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
    int rc;
    st->gate_fd = -1;
    if (st->memory || st->opts.exclusive || st->opts.readonly)
        return EMQ_OK;
    rc = emq_store_side_open(st, "-emqlock", 1, &st->gate_fd, err, sizeof err);
    if (rc != EMQ_OK)
        return emq_store_err(st, rc, "%s", err);
    return EMQ_OK;
}

void emq_wgate_close(emq_store *st)
{
    if (st->gate_fd >= 0)
        close(st->gate_fd);
    st->gate_fd = -1;
}

int emq_wgate_enter(emq_store *st, int *waited_ms)
{
    int64_t start, limit, now;
    long pause_us = 50;
    *waited_ms = 0;
    if (st->gate_fd < 0 || lock(st->gate_fd, F_OFD_SETLK, F_RDLCK) == 0)
        return EMQ_OK;
    /* Held exclusive: a checkpoint runs (bounded work), or a process that
     * holds it is stopped, or someone else locked the file. Poll with a
     * growing pause, up to the busy timeout. */
    start = mono_us();
    limit = start + (int64_t)st->opts.busy_timeout_ms * 1000;
    do {
        int e = errno;
        now = mono_us();
        *waited_ms = (int)((now - start) / 1000);
        if (e != EAGAIN && e != EACCES)
            return emq_store_err(st, EMQ_EIO, "writer gate %s-emqlock: %s",
                                 st->path, strerror(e));
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
    } while (lock(st->gate_fd, F_OFD_SETLK, F_RDLCK) != 0);
    *waited_ms = (int)((mono_us() - start) / 1000);
    return EMQ_OK;
}

void emq_wgate_leave(emq_store *st)
{
    if (st->gate_fd >= 0)
        lock(st->gate_fd, F_OFD_SETLK, F_UNLCK);
}

int emq_wgate_try_exclusive(emq_store *st)
{
    if (st->gate_fd < 0)
        return 1;
    return lock(st->gate_fd, F_OFD_SETLK, F_WRLCK) == 0;
}
