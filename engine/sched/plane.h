/*
 * plane.h — the per-handle state of the scheduling plane (internal to the
 * engine): the host clock of the repeat registry (HOST-NOW, D-11), the
 * random source of jitter, the waiting claim's interrupt, and the hooks
 * tests install to mint ids and to stand in for a blocking wait.
 *
 * Owns: struct emq_sched, embedded in every handle (db.h) and zeroed at
 * open, so every default is "not set": HOST-NOW is then the handle's
 * clock, the random source the handle's own generator, minting emq_mint.
 * The files of the plane: repeat.c (T5.8), pump.c (T5.9), backoff.c
 * (T5.10), stalled.c (T5.11), locks.c (T5.12), wait.c (T5.13's park as a
 * waiting claim), policy.c (retry policies), worker.c (the worker pool).
 */
#ifndef EMQ_PLANE_H
#define EMQ_PLANE_H

#include <stdatomic.h>
#include <stdint.h>
#include "emqlite.h"
#include "store.h"

struct emq_db;
struct emq_notify;

/** The store's watch rules of the waiting claim (wait.c): the writes that
 *  can make a job claimable — a member added to B.pending, a WAKE push
 *  (every OFFER), a field deleted from B.meta (resume). */
extern const emq_watch_rule emq_wake_rules[];

/** Mint a JOB id into `out` (tests: the golden replay mints as the trace
 *  did). Returns EMQ_OK or a failure. */
typedef int (*emq_mint_hook)(void *ctx, char out[EMQ_ID_SIZE]);

/** The waiting claim's test hook: the public emq_wait_fn (emqlite.h,
 *  emq_set_wait_hook says what it may do). */
typedef emq_wait_fn emq_wait_hook;

typedef struct emq_sched {
    emq_clock_fn host_clock;   /* HOST-NOW; NULL: the handle's clock     */
    void *host_ctx;
    emq_random_fn random;      /* jitter; NULL: the built-in generator  */
    void *random_ctx;
    uint64_t rng;              /* the built-in generator's state (0:
                                  seeded on first use)                  */
    emq_mint_hook mint;        /* NULL: emq_mint(db, "JOB", ...)        */
    void *mint_ctx;
    emq_wait_hook wait;        /* NULL: the real wait (storage/notify)  */
    void *wait_ctx;
    emq_clock_fn mono;         /* real time of the wait's timeout (µs);
                                  NULL: CLOCK_MONOTONIC                 */
    void *mono_ctx;
    atomic_uint interrupt;     /* emq_claim_wait_interrupt() pending   */
    atomic_uint wait_bucket;   /* the bucket a claim waits on, +1 (0:
                                  not waiting)                          */
    struct emq_notify *_Atomic wait_notify; /* the wake file it waits in */
    int lane_turn;             /* wait.c: try lanes first on odd turns  */
    int lanes_only;            /* wait.c: claim from the lanes alone (a
                                  pool with lanes = 1, issue 34)        */
} emq_sched;

/** HOST-NOW: the host clock, or the handle's clock when none is set. */
int64_t emq_host_now(struct emq_db *db);

/** Mint one JOB id through the mint hook or emq_mint. */
int emq_sched_mint(struct emq_db *db, char out[EMQ_ID_SIZE]);

/** 64 random bits from the handle's source; the _cb form is an
 *  emq_random_fn whose context is the handle. */
uint64_t emq_sched_random(struct emq_db *db);
uint64_t emq_sched_random_cb(void *db);

/** The time until queue q's earliest repeat registration is due, on
 *  HOST-NOW (0: due now; -1: none), for the pump to beat in time for a
 *  period shorter than its own (pump.c). */
int emq_repeat_next_in(struct emq_db *db, const char *q, int64_t *in_ms);

/** One beat of the pool's pump (worker.c) at `now`, in the beat's clock's
 *  milliseconds: sweep queue q (its counts in *counts, may be NULL; the
 *  sweep's result in *rc), and answer when the next beat is due: now +
 *  pump_ms (<= 0: 1000), or sooner when a repeat registration is due
 *  before then, so a period below pump_ms is not rounded up to it. The
 *  beat thread waits until then; a test drives it on its own clock. */
int64_t emq_pump_beat(struct emq_db *db, const char *q, int64_t now,
                      int64_t pump_ms, struct emq_sweep_counts *counts,
                      int *rc);

/** Install the test hooks (NULL restores the default). */
void emq_sched_set_mint_hook(struct emq_db *db, emq_mint_hook fn, void *ctx);
void emq_sched_set_wait_hook(struct emq_db *db, emq_wait_hook fn, void *ctx);
/** Stand in for the real time that bounds a waiting claim's timeout on a
 *  clock that does not move, in microseconds (tests: a real time that
 *  overshoots, or one read in the middle of a millisecond). */
void emq_sched_set_mono(struct emq_db *db, emq_clock_fn fn, void *ctx);

#endif /* EMQ_PLANE_H */
