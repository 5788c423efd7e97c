/*
 * nodeid.c — the node id a handle mints with (PROTOCOL.md §4.2).
 *
 * Owns: leasing a 10-bit node id so that distinct live handles on one file,
 * in one process or in many, never mint with the same node. A file handle
 * opens the sidecar `<path>-emqnode` and takes an open-file-description
 * (OFD) write lock on byte N for the first N in 0..1023 that is free (or
 * for the explicit N asked for, refused with EMQ_EBUSY when held). OFD
 * locks belong to the open file description, not the process: two handles
 * of one process conflict, closing one handle's descriptor releases only
 * its byte, and the kernel releases every byte of a process that dies. An
 * in-memory handle (private database) takes the next value of a
 * process-wide counter mod 1024. See doc/IDS.md.
 *
 * The sidecar also holds each node's mint reservation: 8 bytes
 * (little-endian) at offset node * 8, a cell value (ts << 12 | seq) above
 * every id a handle holding the node has minted. Only the holder of node
 * N's lock reads or writes slot N (the byte ranges of locks and slots
 * differ; the locks are advisory), so slots are never written concurrently.
 * A missing slot (a shorter file) reads as 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "db.h"

#define NODE_COUNT 1024

static atomic_uint mem_next;

int emq_path_is_memory(const char *path)
{
    return path[0] == 0 || strcmp(path, ":memory:") == 0;
}

static int lock_byte(int fd, int n)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = n;
    fl.l_len = 1;
    fl.l_pid = 0;               /* required by F_OFD_SETLK */
    return fcntl(fd, F_OFD_SETLK, &fl);
}

int emq_node_lease(const char *path, int want, int readonly, int *node,
                   int *fd_out, char *err, size_t errlen)
{
    char *side = NULL;
    size_t pl;
    int fd = -1, n, rc;

    *fd_out = -1;
    if (emq_path_is_memory(path)) {
        *node = want >= 0 ? want
                          : (int)(atomic_fetch_add(&mem_next, 1) % NODE_COUNT);
        return EMQ_OK;
    }
    pl = strlen(path);
    side = emq_mem_malloc(pl + sizeof "-emqnode");
    if (side == NULL) return EMQ_ENOMEM;
    memcpy(side, path, pl);
    memcpy(side + pl, "-emqnode", sizeof "-emqnode");
    fd = open(side, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        if (readonly && (e == EACCES || e == EROFS || e == EPERM)) {
            /* A read-only handle on a read-only file: no other handle can
             * lease there, so fall back to the process counter. */
            *node = want >= 0 ? want
                   : (int)(atomic_fetch_add(&mem_next, 1) % NODE_COUNT);
            rc = EMQ_OK;
            goto done;
        }
        if (err && errlen)
            snprintf(err, errlen, "cannot open the node-id sidecar %s: %s",
                     side, strerror(e));
        rc = (e == EACCES || e == EROFS || e == EPERM) ? EMQ_EREADONLY
                                                        : EMQ_ECANTOPEN;
        goto done;
    }
    if (want >= 0) {
        /* Used as given, and leased like any other: leasing handles skip
         * it, and a second live handle asking for it is refused, since two
         * handles minting with one node id would mint the same ids. */
        if (lock_byte(fd, want) != 0) {
            int e = errno;
            if (e == EAGAIN || e == EACCES) {
                if (err && errlen)
                    snprintf(err, errlen, "node id %d of %s is leased by "
                             "another live handle", want, path);
                rc = EMQ_EBUSY;
            } else {
                if (err && errlen)
                    snprintf(err, errlen, "cannot lock node id %d in the "
                             "node-id sidecar %s: %s", want, side,
                             strerror(e));
                rc = EMQ_EIO;
            }
            goto done;
        }
        *node = want;
        *fd_out = fd;
        fd = -1;
        rc = EMQ_OK;
        goto done;
    }
    for (n = 0; n < NODE_COUNT; n++) {
        if (lock_byte(fd, n) == 0) {
            *node = n;
            *fd_out = fd;
            fd = -1;
            rc = EMQ_OK;
            goto done;
        }
        if (errno != EAGAIN && errno != EACCES) {
            if (err && errlen)
                snprintf(err, errlen, "cannot lock the node-id sidecar %s: %s",
                         side, strerror(errno));
            rc = EMQ_EIO;
            goto done;
        }
    }
    if (err && errlen)
        snprintf(err, errlen, "all %d node ids of %s are leased by live "
                 "handles", NODE_COUNT, path);
    rc = EMQ_EBUSY;
done:
    if (fd >= 0) close(fd);
    emq_mem_free(side);
    return rc;
}

void emq_node_release(int fd)
{
    if (fd >= 0) close(fd);
}

#define SLOT 8

int emq_node_reserve_read(int fd, int node, uint64_t *cell)
{
    unsigned char b[SLOT];
    size_t got = 0;
    uint64_t v = 0;

    while (got < SLOT) {
        ssize_t r = pread(fd, b + got, SLOT - got,
                          (off_t)node * SLOT + (off_t)got);
        if (r < 0) {
            if (errno == EINTR) continue;
            return EMQ_EIO;
        }
        if (r == 0) break;          /* past the end: the rest is zero */
        got += (size_t)r;
    }
    memset(b + got, 0, SLOT - got);
    for (int i = SLOT - 1; i >= 0; i--)
        v = v << 8 | b[i];
    *cell = v;
    return EMQ_OK;
}

int emq_node_reserve_write(int fd, int node, uint64_t cell)
{
    unsigned char b[SLOT];
    size_t put = 0;

    for (int i = 0; i < SLOT; i++)
        b[i] = (unsigned char)(cell >> (8 * i));
    while (put < SLOT) {
        ssize_t r = pwrite(fd, b + put, SLOT - put,
                           (off_t)node * SLOT + (off_t)put);
        if (r < 0) {
            if (errno == EINTR) continue;
            return errno == ENOSPC || errno == EDQUOT ? EMQ_EFULL : EMQ_EIO;
        }
        put += (size_t)r;
    }
    return EMQ_OK;
}
