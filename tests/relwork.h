/*
 * relwork.h — the producer, worker and reaper loops the concurrency and
 * crash tests run in forked processes or threads, each on its own handle,
 * each writing what it observed to its own ledger (relutil.h).
 *
 * Ledger discipline: an acknowledgement line (E, C, D, R, X) is written only
 * after the verb returned it; with `intents`, an intent line precedes every
 * write verb (I before enqueue, K before complete, T before retry), so a
 * process killed between the commit and its acknowledgement leaves the
 * intent as evidence. Only EMQ_EBUSY is retried (nothing was applied);
 * EMQ_ESTALE and EMQ_GONE are the expected answers of a holder whose lease
 * lapsed; any other failure is counted in `errors` and printed.
 */
#ifndef EMQ_TEST_RELWORK_H
#define EMQ_TEST_RELWORK_H

#include <stdint.h>
#include "emqlite.h"
#include "relutil.h"

enum {
    L_COMPLETE_INTENT = 'K', /* intent: about to complete (id, token)   */
    L_RETRY_INTENT = 'T'     /* intent: about to retry (id, token)      */
};

/* A process's running counts, in memory its parent shares (mmap), so that
 * they survive the SIGKILL that ends the process (the soak reads them). */
typedef struct rel_tally {
    long ops;              /* write verbs that returned a verdict        */
    long busy;             /* calls that returned EMQ_EBUSY              */
    int64_t max_call_us;   /* the longest single call, any outcome      */
    const char *max_call;  /* its verb (a literal: valid in the parent) */
    int64_t max_busy_us;   /* the longest call that returned EMQ_EBUSY:
                              the longest a lock wait lasted            */
} rel_tally;

typedef struct rel_work {
    const char *path, *queue;
    int sync;              /* EMQ_SYNC_NORMAL / EMQ_SYNC_FULL          */
    int busy_ms;           /* the handle's busy timeout                 */
    int ckpt_frames;       /* the handle's checkpoint_frames            */
    long produce;          /* producer: jobs to enqueue (< 0: forever)  */
    long total;            /* worker/reaper: stop once completed + dead
                              reach this (0: run until killed/deadline) */
    int64_t lease_ms;
    int max_attempts;
    int pct_retry, pct_abandon; /* worker: chances in percent          */
    uint64_t seed;
    int intents;
    int pause_us;          /* producer: sleep after each enqueue         */
    int64_t deadline_ms;   /* wall-clock ms after which loops give up    */
    rel_ledger ledger;
    volatile rel_tally *tally; /* NULL, or where to count (see above)   */
    /* results */
    long done, busy, stale, errors;
} rel_work;

/** Wall clock in ms (CLOCK_REALTIME). */
int64_t rel_wall_ms(void);
/** The next number of the xorshift generator whose state is *s (not 0). */
uint64_t rel_rnd(uint64_t *s);

/** The three roles; each opens and closes its own handle. Return 0, or -1
 *  when the handle could not be opened or an unexpected error occurred. */
int rel_producer(rel_work *w);
int rel_worker(rel_work *w);
int rel_reaper(rel_work *w);

enum { REL_PRODUCER, REL_WORKER, REL_REAPER };
/** Run role REL_PRODUCER, REL_WORKER or REL_REAPER on w. */
int rel_run(rel_work *w, int role);

#endif /* EMQ_TEST_RELWORK_H */
