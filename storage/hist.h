/*
 * hist.h — the history log and the kept records: two host-side tables
 * beside the keyspace (schema version 8).
 *
 * Owns: the tables emq_hist (one row per recorded step of a subject: seq,
 * at, scope, subject, kind, detail) and emq_kept (the last record of a
 * subject in a scope: kind, at, body), their DDL, appends, reads and
 * bounded pruning. Scope, subject, detail and body are opaque bytes here
 * (the engine puts a queue name, a job id and its own encodings in them);
 * kind is a small integer the engine defines.
 *
 * Rules: writes run inside the caller's write transaction, so a row exists
 * exactly when the transition that wrote it committed. Neither table is
 * part of the keyspace: no key command, scan, export, digest or check sees
 * them (like hostconf and the event log). seq is the rowid: it grows in
 * commit order; pruning removes the oldest rows of a subject or a scope
 * and never rewrites one.
 */
#ifndef EMQ_HIST_H
#define EMQ_HIST_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

/** Schema step 8 (schema.c). The subject index serves a job's history
 *  (and finding a job without its queue), the scope index a queue's
 *  pruning; both end in the rowid, so each reads in seq order. */
#define EMQ_HIST_DDL                                                      \
    "CREATE TABLE emq_hist(seq INTEGER PRIMARY KEY, at INTEGER NOT NULL," \
    " scope BLOB NOT NULL, subject BLOB NOT NULL, kind INTEGER NOT NULL," \
    " detail BLOB NOT NULL);"                                             \
    "CREATE INDEX emq_hist_subject ON emq_hist(subject);"                 \
    "CREATE INDEX emq_hist_scope ON emq_hist(scope);"                     \
    "CREATE TABLE emq_kept(scope BLOB NOT NULL, subject BLOB NOT NULL,"   \
    " kind INTEGER NOT NULL, at INTEGER NOT NULL, body BLOB NOT NULL,"    \
    " PRIMARY KEY(scope, subject)) WITHOUT ROWID;"                        \
    "CREATE INDEX emq_kept_age ON emq_kept(scope, kind, at);"             \
    "CREATE INDEX emq_kept_subject ON emq_kept(subject);"

/** One history row as the readers hand it over (valid during the call). */
typedef struct emq_hist_row {
    int64_t seq, at;
    int kind;
    emq_bytes scope, subject, detail;
} emq_hist_row;
typedef int (*emq_hist_cb)(void *ctx, const emq_hist_row *r);

/**
 * Append one row at the transaction's clock; *seq (may be NULL) receives
 * its seq. With per_subject > 0 the subject keeps at most that many rows
 * (its oldest go); pass 0 when the caller knows the subject cannot be over
 * (its first row).
 */
int emq_hist_append(emq_store *st, const emq_bytes *scope,
                    const emq_bytes *subject, int kind,
                    const emq_bytes *detail, int64_t per_subject,
                    int64_t *seq);

/**
 * Prune the rows of `scope`: the oldest beyond `keep` (>= 0), and the
 * oldest with at < min_at; at most `budget` rows go per call. *dropped
 * (may be NULL) receives the number removed.
 */
int emq_hist_prune(emq_store *st, const emq_bytes *scope, int64_t keep,
                   int64_t min_at, int64_t budget, int64_t *dropped);

/**
 * The rows with seq > after, in seq order, at most `limit` (<= 0: all):
 * of `subject` when it is not NULL (then also of `scope` when that is not
 * NULL), else of `scope` when that is not NULL, else every row. The
 * callback must not use the store; a nonzero return stops the walk and is
 * returned.
 */
int emq_hist_read(emq_store *st, const emq_bytes *scope,
                  const emq_bytes *subject, int64_t after, int64_t limit,
                  emq_hist_cb cb, void *ctx);

/** The highest seq (0 when empty). */
int emq_hist_last(emq_store *st, int64_t *last);

/** Drop every row of `subject` in `scope` (both tables). */
int emq_hist_forget(emq_store *st, const emq_bytes *scope,
                    const emq_bytes *subject);

/* ----------------------------------------------------------- kept rows */

/** One kept record (valid during the call). */
typedef struct emq_hist_keep_row {
    int kind;
    int64_t at;
    emq_bytes scope, subject, body;
} emq_hist_keep_row;
typedef int (*emq_hist_keep_cb)(void *ctx, const emq_hist_keep_row *r);

/** Keep (replace) the record of `subject` in `scope`. */
int emq_hist_keep_put(emq_store *st, const emq_bytes *scope,
                 const emq_bytes *subject, int kind, int64_t at,
                 const emq_bytes *body);

/** Remove the record of `subject` in `scope`; *removed (may be NULL). */
int emq_hist_keep_del(emq_store *st, const emq_bytes *scope,
                 const emq_bytes *subject, int *removed);

/** The records of `subject`: in `scope` only, or in every scope when
 *  scope is NULL. */
int emq_hist_keep_find(emq_store *st, const emq_bytes *scope,
                  const emq_bytes *subject, emq_hist_keep_cb cb, void *ctx);

/**
 * The records of `kind` in `scope`, newest first (by at, then subject),
 * starting strictly after the cursor (before_at, before_subject) when
 * before_subject is not NULL; at most `limit`.
 */
int emq_hist_keep_list(emq_store *st, const emq_bytes *scope, int kind,
                  int64_t before_at, const emq_bytes *before_subject,
                  int64_t limit, emq_hist_keep_cb cb, void *ctx);

/** The number of records of `kind` in `scope`. */
int emq_hist_keep_count(emq_store *st, const emq_bytes *scope, int kind,
                   int64_t *n);

/** Prune the records of `kind` in `scope`: the oldest beyond `keep`, and
 *  those with at < min_at; at most `budget` per call. */
int emq_hist_keep_prune(emq_store *st, const emq_bytes *scope, int kind,
                   int64_t keep, int64_t min_at, int64_t budget,
                   int64_t *dropped);

#endif /* EMQ_HIST_H */
