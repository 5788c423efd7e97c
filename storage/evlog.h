/*
 * evlog.h — the event log: a table of published messages beside the
 * keyspace, in commit order, read by subscribers from a cursor.
 *
 * Owns: the table emq_events (its DDL, appends, reads, pruning). A message
 * is (seq, at, channel, kind, subject, payload): seq is dense and grows in
 * commit order (it is the rowid; the newest row is never pruned, so an
 * append always takes the previous maximum + 1), `at` is the appending
 * transaction's clock, the four byte strings are opaque here (the engine
 * puts a channel name, an event name, a job id and the message bytes in
 * them).
 *
 * Rules: appends run inside the caller's write transaction, so a message
 * exists exactly when the transition that published it committed. The log
 * is not part of the keyspace: no key command, scan, export or digest sees
 * it. A file without the table (made before it, opened read-only) reads as
 * an empty log.
 */
#ifndef EMQ_EVLOG_H
#define EMQ_EVLOG_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

/** The table, created with the schema of a fresh file and, by
 *  emq_evlog_ensure, in a file made before it. */
#define EMQ_EVLOG_DDL                                                     \
    "CREATE TABLE IF NOT EXISTS emq_events(seq INTEGER PRIMARY KEY,"      \
    " at INTEGER NOT NULL, channel BLOB NOT NULL, kind BLOB NOT NULL,"    \
    " subject BLOB NOT NULL, payload BLOB NOT NULL);"

/** Create the table when it is missing (inside a write transaction). */
int emq_evlog_ensure(emq_store *st);

/** Retention applied by an append: at most `keep` (>= 1) messages, none
 *  older than `max_age_ms` (> 0) before the transaction's clock. */
typedef struct emq_evlog_keep {
    int64_t keep;
    int64_t max_age_ms;
} emq_evlog_keep;

/**
 * Append one message at the transaction's clock; *seq (may be NULL)
 * receives its sequence number. Every 64th append also prunes by `k`
 * (oldest first, at most a bounded number of rows, never the newest).
 */
int emq_evlog_append(emq_store *st, const emq_bytes *channel,
                     const emq_bytes *kind, const emq_bytes *subject,
                     const emq_bytes *payload, const emq_evlog_keep *k,
                     int64_t *seq);

/** The highest sequence number in the log (0 when empty) and the lowest
 *  (0 when empty). */
int emq_evlog_bounds(emq_store *st, int64_t *first, int64_t *last);

/** One message as emq_evlog_read hands it over (valid during the call). */
typedef struct emq_evlog_msg {
    int64_t seq, at;
    emq_bytes channel, kind, subject, payload;
} emq_evlog_msg;

/**
 * The messages with seq > `after`, in order, at most `limit`; the callback
 * (which must not use the store) may stop the walk by returning nonzero,
 * which is then returned. EMQ_OK at the end.
 */
typedef int (*emq_evlog_cb)(void *ctx, const emq_evlog_msg *m);
int emq_evlog_read(emq_store *st, int64_t after, int64_t limit,
                   emq_evlog_cb cb, void *ctx);

#endif /* EMQ_EVLOG_H */
