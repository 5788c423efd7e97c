/*
 * gate.c — the writer gate: an open-file-description lock on a file beside
 * the database (<path>-emqlock) that keeps checkpoints and commits apart.
 *
 * Why: SQLite 3.7.0–3.51.2 can lose committed pages when a checkpoint races
 * a commit that resets the WAL. A RESTART checkpoint takes the writer lock,
 * but when it cannot get it SQLite quietly runs it as a PASSIVE one, without
 * the lock. So every emqlite write transaction holds the gate shared, and a
 * checkpoint runs only while holding it exclusive, taken without waiting:
 * no emqlite commit can be in flight during a checkpoint, whatever mode
 * SQLite falls back to. OFD locks (Linux) belong to the open file, so they
 * conflict between handles of one process too and vanish with a dead
 * process. Handles in exclusive locking mode and in-memory stores need no
 * gate (gate_fd = -1: every call is a no-op).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

int emq_wgate_open(emq_store *st, const char *path)
{
    char p[4096];
    st->gate_fd = -1;
    if (st->memory || st->opts.exclusive || st->opts.readonly)
        return EMQ_OK;
    if (snprintf(p, sizeof p, "%s-emqlock", path) >= (int)sizeof p)
        return emq_store_err(st, EMQ_ECANTOPEN, "path too long");
    st->gate_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (st->gate_fd < 0)
        return emq_store_err(st, errno == EROFS || errno == EACCES
                                     ? EMQ_EREADONLY : EMQ_ECANTOPEN,
                             "cannot open %s: %s", p, strerror(errno));
    return EMQ_OK;
}

void emq_wgate_close(emq_store *st)
{
    if (st->gate_fd >= 0)
        close(st->gate_fd);
    st->gate_fd = -1;
}

int emq_wgate_enter(emq_store *st)
{
    if (st->gate_fd < 0)
        return EMQ_OK;
    /* Waits only while a checkpoint runs. */
    if (lock(st->gate_fd, F_OFD_SETLKW, F_RDLCK) != 0)
        return emq_store_err(st, EMQ_EIO, "writer gate: %s", strerror(errno));
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
