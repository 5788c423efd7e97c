/*
 * events.h — lifecycle events inside the engine (PROTOCOL.md T2.9, T2.17):
 * the message bytes, the publish step a transition runs inside its
 * transaction, the runner's after-reply hook, and the delivery to the
 * subscriptions of a handle once its transaction committed (events.c).
 */
#ifndef EMQ_EVENTS_H
#define EMQ_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"

struct emq_vctx;

/**
 * Publish event `name` about job `id` of queue `q` on the channel
 * `emq:{q}:events` with the message `msg` (its exact bytes), inside the
 * open write transaction: the message is logged with the transition and
 * delivered after its commit. Marks the handle for delivery.
 */
int emq_ev_publish(emq_db *db, emq_store *st, const char *q,
                   const char *name, const void *id, size_t idlen,
                   const void *msg, size_t msglen);

/** JSON-S (§6.0) of `n` bytes appended to `b`. */
int emq_ev_json_s(emq_buf *b, const void *p, size_t n);

/**
 * The lifecycle events L4 publishes after a transition's reply (T2.17),
 * each called by the body of the verb that publishes it, last, inside its
 * transaction (doc/EVENTS.md): complete answering ok → completed; retry
 * answering dead → failed, with the error; delay answering ok → delayed,
 * with the run-at score it wrote. Each returns EMQ_OK or a failure (the
 * body returns that failure, and the transition rolls back).
 */
int emq_ev_completed(struct emq_vctx *c);
int emq_ev_failed(struct emq_vctx *c, const void *error, size_t len);
int emq_ev_delayed(struct emq_vctx *c, double run_at);

/** After a call on `db` returned: hand the events committed since each
 *  subscription's cursor to its callback (a no-op unless a publish ran
 *  and the handle has subscriptions). Never changes the call's result. */
void emq_ev_dispatch(emq_db *db);

/** Free every subscription of `db` (emq_close). */
void emq_ev_close(emq_db *db);

#endif /* EMQ_EVENTS_H */
