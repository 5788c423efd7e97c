/*
 * export.h — the export walk's internals that the transfer module (remote/)
 * and the import share: the digest of a keyspace key by key, and the
 * digest taken inside a transaction already open.
 *
 * Rules: the walk is export.c's; these calls read, never write.
 */
#ifndef EMQ_EXPORT_H
#define EMQ_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"
#include "store.h"

/** One key's record in the logical digest (doc/EXPORT.md §3). */
typedef struct emq_keyrec {
    const unsigned char *key;  /* valid during the callback */
    size_t klen;
    unsigned char tag;         /* the record's type byte            */
    int64_t expire;            /* -1: none                          */
    uint64_t n;                /* elements                          */
    uint64_t hash;             /* XXH3-64 of the record alone       */
} emq_keyrec;

/** Receives each key's record in name order; nonzero stops the walk (the
 *  call then returns EMQ_EINTERNAL unless the callback set a message and
 *  returned a negative code, which is returned). */
typedef int (*emq_keyrec_fn)(void *ctx, const emq_keyrec *r);

/**
 * emq_digest, and `fn` called with every key's record in name order (the
 * version key in its place), in one read transaction.
 */
int emq_digest_each(emq_db *db, const emq_export_options *opt,
                    emq_keyrec_fn fn, void *ctx, emq_transfer_summary *sum);

/** The digest of the whole file inside the transaction open on `st`
 *  (the import's summary); `sum->commands`, `sum->bytes` are 0. */
int emq_digest_tx(emq_db *db, emq_store *st, emq_transfer_summary *sum);

/** Let importer `im` accept EMQ.XPEL key group consumer id time count: a
 *  pending record put back whether or not its entry exists (a pull
 *  carries those of entries the server trimmed; remote/xstream.c). */
void emq_import_carry_pel(emq_importer *im);

/** The end record an export closes with (doc/EXPORT.md §1.1): the one
 *  argument of a final ECHO, "emqlite-export-end 1 commands=C bytes=B
 *  xxh3=H" — the commands and bytes before the record and the XXH3-64 of
 *  those bytes (16 lowercase hex digits). */
#define EMQ_EXPORT_END "emqlite-export-end"
#define EMQ_EXPORT_END_MAX 128

/** Write the end record's text into out[cap]; returns its length. */
int emq_export_end_text(char *out, size_t cap, uint64_t commands,
                        uint64_t bytes, uint64_t xxh3);

/**
 * emq_export, with (`seal` 1) or without (0) the end record. A push
 * streams the commands to a live server, which keeps no file that could be
 * cut: it sends no end record.
 */
int emq_export_sealed(emq_db *db, const emq_export_options *opt,
                      emq_write_fn write, void *ctx,
                      emq_transfer_summary *sum, int seal);

#endif /* EMQ_EXPORT_H */
