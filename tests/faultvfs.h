/*
 * faultvfs.h — a test VFS wrapped around SQLite's default one, in the spirit
 * of SQLite's own crash and fault VFSes: it counts the I/O points of every
 * file it opens, makes the Nth read, write or sync fail with a chosen SQLite
 * code, and simulates a power loss by dropping the writes that were not
 * synced.
 *
 * Power loss: while armed with fv_track(1), every write and truncate first
 * saves the bytes (and size) it replaces in a per-path undo log, and a
 * successful sync of that path forgets its log — the synced bytes are on
 * "disk". fv_power_off() makes every later write, truncate, sync and delete
 * fail (the machine is dead: a closing connection's checkpoint reaches
 * nothing); the caller then closes its handles and calls fv_power_loss(),
 * which reverts each file to its last synced image (all unsynced writes
 * dropped) or keeps a random in-order prefix of them (a disk that persisted
 * its queue up to some point), removes the -shm files, and turns power back
 * on. Directory entries are assumed durable (files are not unlinked by the
 * power loss). Syncs are simulated: the real file is never fsync'ed, so the
 * tests run at memory speed.
 *
 * Rules: one process-wide instance; install it before opening the handles it
 * should see and uninstall it after closing them. Not thread-safe (the
 * fault tests are single-threaded). Memory-mapped I/O is disabled (the
 * wrapped files report iVersion 2), so every page read is an xRead.
 */
#ifndef EMQ_TEST_FAULTVFS_H
#define EMQ_TEST_FAULTVFS_H

#include <stdint.h>

enum { FV_READ = 0, FV_WRITE = 1, FV_SYNC = 2, FV_NKIND = 3 };

/** Register the VFS as SQLite's default ("emqfault"). 0 or -1. */
int fv_install(void);
/** Restore the previous default VFS. Drops every undo log. */
void fv_uninstall(void);

/** Zero the I/O counters (every kind). */
void fv_count_reset(void);
/** I/O points of `kind` since the last reset. */
long fv_count(int kind);

/**
 * Make the `nth` (1-based, counted from this call) I/O point of `kind` fail
 * with SQLite code `err` (SQLITE_IOERR_WRITE, SQLITE_FULL, ...); with
 * `sticky`, every later point of that kind fails too. nth = 0 disarms.
 * err = 0 means the power fails at that point: it fails and the machine is
 * off from then on (fv_power_off), ready for fv_power_loss().
 * fv_fired() tells whether the armed fault was hit.
 */
void fv_arm(int kind, long nth, int err, int sticky);
void fv_disarm(void);
int fv_fired(void);

/** Start (1) or stop (0) keeping undo logs of unsynced writes. Starting
 *  clears the logs: what is on disk now counts as synced. */
void fv_track(int on);
/** The number of unsynced writes currently logged (all files). */
long fv_unsynced(void);
/** From now on every read, write, truncate, sync and delete fails. */
void fv_power_off(void);
/**
 * Revert every tracked file to its last synced image (keep_prefix = 0),
 * keep a random in-order prefix of its unsynced writes (keep_prefix = 1,
 * drawn from `seed`) or keep them all (keep_prefix = 2: the disk had
 * written everything before the power failed); remove `<db>-shm` files;
 * power back on, logs cleared.
 * Call with every handle closed. Returns the number of writes dropped, or
 * -1 on an I/O error.
 */
long fv_power_loss(int keep_prefix, uint64_t seed);

#endif /* EMQ_TEST_FAULTVFS_H */
