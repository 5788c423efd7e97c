/*
 * history.h — job history and retention inside the engine (issue 34;
 * doc/HISTORY.md): the runner's hooks around every write transition, and
 * the handle's cached configuration.
 *
 * Where they run: emq_verb_exec's transaction body (verbs.c, run_tx) calls
 * emq_hist_before ahead of the verb's body and emq_hist_after once it
 * answered, inside the same transaction: a history row exists exactly when
 * its transition committed, and a failing history write fails (rolls back)
 * the transition, like an event publish. No verb body records anything
 * itself: the hooks read what a transition did from its verb, arguments,
 * verdict and reply (and, for the sweeps that answer a count, from the
 * members they were due to move).
 */
#ifndef EMQ_HISTORY_H
#define EMQ_HISTORY_H

#include "db.h"

struct emq_vctx;
struct emq_hist;

/** Per-transition state the two hooks share (kept on the runner's
 *  stack). */
typedef struct emq_hist_tx {
    int active;          /* history (or retention) applies to this verb   */
    void *snap;          /* the members or row read before the body      */
} emq_hist_tx;

/** Before the body (inside its transaction). */
int emq_hist_before(struct emq_vctx *c, emq_hist_tx *h);
/** After the body answered `rc` (>= 0); returns EMQ_OK or a failure that
 *  rolls the transition back. Frees what before kept. */
int emq_hist_after(struct emq_vctx *c, emq_hist_tx *h, int rc);
/** Free what before kept (a body that failed). */
void emq_hist_drop(emq_hist_tx *h);

/** Free the handle's history state (emq_close). */
void emq_hist_close(emq_db *db);

#endif /* EMQ_HISTORY_H */
