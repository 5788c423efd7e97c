/*
 * export_stream.h — streams in an export, an import and the logical digest
 * (PROTOCOL.md §8.1, doc/EXPORT.md §1-§3; internal to the engine).
 *
 * The hook import.c calls for the stream commands of an export or an AOF
 * (through engine/stream/xcmd.c); a stream's export and digest form is the
 * store's (storage/xsout.h), reached through the type table.
 */
#ifndef EMQ_EXPORT_STREAM_H
#define EMQ_EXPORT_STREAM_H

#include <stddef.h>
#include "store.h"
#include "resp.h"
#include "xsout.h"
#include "emqlite.h"

struct emq_db;

/** 1 when command `c` is a stream command an import applies (XADD, XDEL,
 *  XTRIM, XSETID, XGROUP, XCLAIM, XACK). */
int emq_stream_import_cmd(const emq_resp_cmd *c);

/**
 * Apply stream command `c` of an import inside its open transaction, with
 * Valkey's semantics (engine/stream/xcmd.c). The key must be a stream key of the
 * EchoMQ grammar. Returns EMQ_OK, or EMQ_EPROTO with the handle's message
 * "import refused at byte <offset>: <why>" (an error reply, a key outside
 * the grammar), or a store failure.
 */
int emq_stream_import(struct emq_db *db, emq_store *st,
                      const emq_resp_cmd *c);

/** Called per stream and group holding pending records whose entry is
 *  gone (`n` of them): what Valkey cannot hold. */
typedef void (*emq_unheld_fn)(void *ctx, const unsigned char *key,
                              size_t klen, const unsigned char *g,
                              size_t glen, uint64_t n);

/**
 * Walk the stream keys of the selection `eo` (its queues; NULL: every
 * key) in one read transaction and call `fn` for each group holding such
 * records. EMQ_OK or a store failure.
 */
int emq_unheld(struct emq_db *db, const emq_export_options *eo,
               emq_unheld_fn fn, void *ctx);

#endif /* EMQ_EXPORT_STREAM_H */
