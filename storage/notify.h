/*
 * notify.h — wake-ups between handles of one file, in one process or many:
 * a shared-memory side file of sequence counters, one per bucket of names,
 * each a futex word.
 *
 * A waiter reads its bucket's sequence, looks at the store, and waits only
 * while the sequence is still the one it read; a signaller bumps the
 * sequence after its commit and wakes the bucket's waiters. So a signal
 * that lands between the look and the wait is never lost. Names are
 * arbitrary bytes hashed to buckets (a collision costs a spurious wake-up,
 * never a lost one). Nothing in here knows what is signalled: the store's
 * commits signal the buckets its watch rules marked (store.h), and any
 * other producer of events (lifecycle events, T2.17) can use its own names.
 *
 * Robustness: the file holds no lock and no pointer, only counters; a
 * process that dies at any instant leaves it valid (at worst a waiter count
 * stays raised, which costs signallers one futex call each). The file is
 * created beside the database with the database's permissions, opened
 * O_NOFOLLOW | O_CLOEXEC, must be a regular file and carry the magic word;
 * it is never truncated (like SQLite's -shm, it must not be truncated while
 * in use) and never sparse (a store to a hole on a full disk would be a
 * SIGBUS). In-memory stores get a private region of the same shape.
 */
#ifndef EMQ_NOTIFY_H
#define EMQ_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#define EMQ_NOTIFY_BUCKETS 1024
/* The writers' turn (turn.c), then the group sync (gsync.c): a region
 * after the buckets, each in its half. */
#define EMQ_NOTIFY_TURN_BYTES 4096
#define EMQ_NOTIFY_SUFFIX "-emqwake"

typedef struct emq_notify emq_notify;

struct emq_store;

/**
 * Open (creating when absent) the wake file of store `st`: its side file
 * `<file>-emqwake` (side.c's rules: named after the resolved file, no
 * symlink, one link, its owner, the database's permissions), or a private
 * region for a memory store. A read-only handle has none (it never claims
 * and never creates a side file). Its blocks are reserved before it is
 * mapped (a disk that cannot give them: EMQ_EFULL). Returns EMQ_OK with
 * `*out`, or EMQ_ECANTOPEN / EMQ_EREADONLY / EMQ_ECORRUPT / EMQ_EFULL /
 * EMQ_EIO / EMQ_ENOMEM with `err` filled.
 */
int emq_notify_open(struct emq_store *st, emq_notify **out, char *err,
                    size_t errlen);
void emq_notify_close(emq_notify *n);

/** The bucket of a name (FNV-1a, mod EMQ_NOTIFY_BUCKETS). */
uint32_t emq_notify_bucket(const void *name, size_t len);

/** The current sequence of bucket `b` (read before looking). */
uint32_t emq_notify_seq(emq_notify *n, uint32_t b);

/** Bump bucket `b`'s sequence and wake its waiters (after a commit). Safe
 *  from any thread and from a signal handler. */
void emq_notify_signal(emq_notify *n, uint32_t b);

/**
 * Wait until bucket `b`'s sequence differs from `seen`, or `timeout_ms`
 * passed (< 0: no limit; 0: do not block). Returns 1 when the sequence
 * moved, 0 on a timeout or an interrupted wait (the caller looks again).
 */
int emq_notify_wait(emq_notify *n, uint32_t b, uint32_t seen,
                    int64_t timeout_ms);

/** The futex timeout emq_notify_wait uses for `timeout_ms` (> 0). */
struct timespec;
void emq_notify_timespec(int64_t timeout_ms, struct timespec *ts);

/**
 * A role per bucket held by at most one open wake file at a time, for a
 * time: the worker pool's pump uses it so that one process sweeps a queue.
 * The bucket's slot holds the holder's token and deadline (`now_ms` +
 * `lease_ms`, on CLOCK_MONOTONIC, which every process of the machine
 * shares); the holder renews it by calling again before the deadline.
 * Returns 1 when this open holds it now (taken: free, lapsed, or its
 * holder's process is gone; or renewed), 0 when another holds it — which
 * is also how a holder that was stopped past its deadline (SIGSTOP, a
 * debugger, a stalled VM) learns it lost the role: it must stop acting on
 * it. emq_notify_unlease and emq_notify_close release it at once; a
 * holder that died is replaced at once by the next caller (its pid is
 * gone), one that is stopped when its lease lapses.
 */
int emq_notify_lease(emq_notify *n, uint32_t b, int64_t lease_ms,
                     int64_t now_ms);
void emq_notify_unlease(emq_notify *n, uint32_t b);

/**
 * The waiting claims woken by one commit share out what it made claimable
 * instead of all claiming (each claim is a write transaction, and all but
 * the first find nothing): a waiter whose look saw `want` claimable jobs
 * counts itself among the bucket's claimers when fewer than `want` are
 * claiming, and returns 2 (it claims, then calls emq_notify_unclaim); 0
 * when `want` or more are claiming already (it waits a little, then looks
 * again); 1 when not counted (no shared region: it claims). `now_ms` on
 * CLOCK_MONOTONIC: a count left by claimers that died or stopped expires
 * 100 ms after its last change.
 */
int emq_notify_claim(emq_notify *n, uint32_t b, int64_t want,
                     int64_t now_ms);
void emq_notify_unclaim(emq_notify *n, uint32_t b);

/** The writers' turn region of the wake file (turn.c), EMQ_NOTIFY_TURN_BYTES
 *  zeroed bytes at first; NULL for a private region (one handle). */
void *emq_notify_turn_area(emq_notify *n);

#endif /* EMQ_NOTIFY_H */
