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

/** Schema step 8 (schema.c). One index: the subject's, for a job's
 * history (and finding a job without its queue); it ends in the rowid, so
 * a subject reads in seq order. A scope (queue) is read and pruned in seq
 * order from the table itself (bounded scans), so an append writes one
 * table row and one index entry. A kept record is one row, keyed for the
 * listing (scope, kind, newest first) and the pruning (oldest first). */
#define EMQ_HIST_DDL                                                      \
    "CREATE TABLE emq_hist(seq INTEGER PRIMARY KEY, at INTEGER NOT NULL," \
    " scope BLOB NOT NULL, subject BLOB NOT NULL, kind INTEGER NOT NULL," \
    " detail BLOB NOT NULL);"                                             \
    "CREATE INDEX emq_hist_subject ON emq_hist(subject);"                 \
    "CREATE TABLE emq_kept(scope BLOB NOT NULL, kind INTEGER NOT NULL,"   \
    " at INTEGER NOT NULL, subject BLOB NOT NULL, body BLOB NOT NULL,"    \
    " PRIMARY KEY(scope, kind, at, subject)) WITHOUT ROWID;"

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
 * in the scope (its oldest go); pass 0 when the caller knows the subject
 * cannot be over (its first row). *dropped (may be NULL) receives the
 * number of older rows removed.
 */
int emq_hist_append(emq_store *st, const emq_bytes *scope,
                    const emq_bytes *subject, int kind,
                    const emq_bytes *detail, int64_t per_subject,
                    int64_t *seq, int64_t *dropped);

/**
 * Prune the rows of `scope`: the oldest with at < min_at, then the oldest
 * beyond `keep` (>= 0); at most `budget` rows go per call. `*count` is the
 * number of rows the scope held up to seq `*upto` (both 0 when unknown:
 * they are counted then); both are brought up to date (the caller keeps
 * them between calls). *dropped (may be NULL) receives the number removed.
 * The rows that go are one range of the scope's oldest (one walk to find
 * the last, one delete).
 */
int emq_hist_prune(emq_store *st, const emq_bytes *scope, int64_t keep,
                   int64_t min_at, int64_t budget, int64_t *count,
                   int64_t *upto, int64_t *dropped);

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

/* ----------------------------------------------------------- kept rows */

/** One kept record (valid during the call). */
typedef struct emq_hist_keep_row {
    int kind;
    int64_t at;
    emq_bytes scope, subject, body;
} emq_hist_keep_row;
typedef int (*emq_hist_keep_cb)(void *ctx, const emq_hist_keep_row *r);

/** Keep a record of `subject` in `scope` (a job finished again later gets
 *  a second record: readers take the newest). */
int emq_hist_keep_put(emq_store *st, const emq_bytes *scope,
                 const emq_bytes *subject, int kind, int64_t at,
                 const emq_bytes *body);

/** The records of `subject`, newest first: in `scope` only (a walk of the
 *  scope's records), or in every scope when scope is NULL (a walk of the
 *  table: find the scope first where it matters). */
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
 *  those with at < min_at; at most `budget` per call. They are the first
 *  rows of the scope and kind in key order (at, then subject), deleted as
 *  one range up to the last that goes. */
int emq_hist_keep_prune(emq_store *st, const emq_bytes *scope, int kind,
                   int64_t keep, int64_t min_at, int64_t budget,
                   int64_t *dropped);

#endif /* EMQ_HIST_H */
