/*
 * nodeid.c — the node id a handle mints with (PROTOCOL.md §4.2).
 *
 * Owns: leasing a 10-bit node id so that distinct live handles on one file,
 * in one process or in many, never mint with the same node. A file handle
 * opens the sidecar `<file>-emqnode` (a side file: named after the resolved
 * file, never through a symlink, created with the database file's mode,
 * storage/side.c; a read-only handle never creates it) and takes an
 * exclusive byte lock (storage/platform.h: an open-file-description lock
 * on Linux, a record lock made per open in the portable build) on byte N
 * for the first N in 0..1023 that is free (or for the explicit N asked
 * for, refused with EMQ_EBUSY when held). The lock belongs to the open,
 * not the process: two handles of one process conflict, closing one
 * handle releases only its byte, and the kernel releases every byte of a
 * process that dies. An
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
#include "platform.h"

#define NODE_COUNT 1024

static atomic_uint mem_next;

/* 0, or an errno value (EAGAIN: another live handle holds it). */
static int lock_byte(emq_plock *l, int n)
{
    return emq_plock_set(l, n, EMQ_PLOCK_WR);
}

/* A node of the process counter (in-memory handles, and read-only handles
 * that cannot open the sidecar: no other handle can lease there). */
static int counter_node(int want)
{
    return want >= 0 ? want
                     : (int)(atomic_fetch_add(&mem_next, 1) % NODE_COUNT);
}

int emq_node_lease(emq_store *st, int want, int readonly, int *node,
                   emq_plock **lease, char *err, size_t errlen)
{
    const char *path = emq_store_path(st);
    emq_plock *l = NULL;
    int fd = -1, n, rc, e;

    *lease = NULL;
    if (path == NULL) {
        *node = counter_node(want);
        return EMQ_OK;
    }
    /* The sidecar is a side file (store.h): named after the resolved file,
     * never followed through a symlink; a read-only handle never creates
     * it. */
    rc = emq_store_side_open(st, EMQ_SIDE_NODE, !readonly, &fd, err, errlen);
    if (readonly && (rc == EMQ_NOTFOUND || rc == EMQ_EREADONLY)) {
        if (err && errlen) err[0] = 0;
        *node = counter_node(want);
        return EMQ_OK;
    }
    if (rc != EMQ_OK)
        return rc;
    if ((e = emq_plock_open(fd, &l)) != 0) {
        if (err && errlen)
            snprintf(err, errlen, "cannot use the node-id sidecar "
                     "%s-emqnode: %s", path, strerror(e));
        return e == ENOMEM ? EMQ_ENOMEM : EMQ_EIO;
    }
    if (want >= 0) {
        /* Used as given, and leased like any other: leasing handles skip
         * it, and a second live handle asking for it is refused, since two
         * handles minting with one node id would mint the same ids. */
        if ((e = lock_byte(l, want)) != 0) {
            if (e == EAGAIN) {
                if (err && errlen)
                    snprintf(err, errlen, "node id %d of %s is leased by "
                             "another live handle", want, path);
                rc = EMQ_EBUSY;
            } else {
                if (err && errlen)
                    snprintf(err, errlen, "cannot lock node id %d in the "
                             "node-id sidecar %s-emqnode: %s", want, path,
                             strerror(e));
                rc = e == ENOMEM ? EMQ_ENOMEM : EMQ_EIO;
            }
            goto done;
        }
        *node = want;
        rc = EMQ_OK;
        goto done;
    }
    for (n = 0; n < NODE_COUNT; n++) {
        if ((e = lock_byte(l, n)) == 0) {
            *node = n;
            rc = EMQ_OK;
            goto done;
        }
        if (e != EAGAIN) {
            if (err && errlen)
                snprintf(err, errlen, "cannot lock the node-id sidecar "
                         "%s-emqnode: %s", path, strerror(e));
            /* ENOMEM: the portable lock table could not grow */
            rc = e == ENOMEM ? EMQ_ENOMEM : EMQ_EIO;
            goto done;
        }
    }
    if (err && errlen)
        snprintf(err, errlen, "all %d node ids of %s are leased by live "
                 "handles", NODE_COUNT, path);
    rc = EMQ_EBUSY;
done:
    if (rc == EMQ_OK) {
        *lease = l;
    } else {
        emq_plock_close(l);
    }
    return rc;
}

int emq_node_alone(emq_plock *lease)
{
    /* Our own lease is held through this very open, so only another
     * handle's shows; a lock that cannot be told counts as another. */
    return emq_plock_others(lease, 0, NODE_COUNT) == 0;
}

void emq_node_release(emq_plock *lease)
{
    emq_plock_close(lease);
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
