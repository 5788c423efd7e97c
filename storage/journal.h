/*
 * journal.h — the procedure journal: one row per multi-transaction
 * procedure in flight, kept beside the keyspace (never exported, never in a
 * digest, never a key), so that a procedure a crash cut between two of its
 * transactions can be finished by any later handle.
 *
 * Owns: the `emq_journal` table (doc/SCHEMA.md): jid, the procedure's kind
 * (a short text), `next` (the index of its first step not yet committed)
 * and its body (the bytes the procedure needs to replay its remaining steps;
 * opaque here). Storage knows nothing of what the steps are.
 *
 * Rules: every call runs inside the caller's open transaction (a write one,
 * except emq_journal_scan), so a step's effect and the advance of `next`
 * commit together. A file created before the table existed gets it at the
 * first emq_journal_add; reading such a file finds no row.
 */
#ifndef EMQ_JOURNAL_H
#define EMQ_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

/* The journal table (schema 3, storage/schema.c; journal.c also creates it
 * if missing). */
#define JOURNAL_DDL                                                         \
    "CREATE TABLE IF NOT EXISTS emq_journal(jid INTEGER PRIMARY KEY,"      \
    " kind TEXT NOT NULL, next INTEGER NOT NULL, body BLOB NOT NULL)"

/** Add a row (kind, next, body) and store its jid in *jid. A jid is never
 *  handed out twice in a file's life: it is above every row there and every
 *  jid emq_journal_end ever ended (emq_meta `journal_hw`), so a procedure
 *  still holding an ended jid can never reach another's row. */
int emq_journal_add(emq_store *st, const char *kind, const void *body,
                    size_t n, int64_t next, int64_t *jid);
/** The `next` of row jid into *next; EMQ_NOTFOUND when the row is gone. */
int emq_journal_next(emq_store *st, int64_t jid, int64_t *next);
/** Set the `next` of row jid (a gone row is left gone). */
int emq_journal_set(emq_store *st, int64_t jid, int64_t next);
/** Delete row jid (the procedure is finished) and raise the high-water
 *  mark to it. */
int emq_journal_end(emq_store *st, int64_t jid);

/** One row, valid during the callback only; nonzero stops the scan and is
 *  returned. */
typedef int (*emq_journal_cb)(void *ctx, int64_t jid, const char *kind,
                              int64_t next, const unsigned char *body,
                              size_t n);
/** Every row in jid order (oldest first). */
int emq_journal_scan(emq_store *st, emq_journal_cb cb, void *ctx);

#endif /* EMQ_JOURNAL_H */
