/*
 * export_stream.h — streams in an export, an import and the logical digest
 * (PROTOCOL.md §8.1, doc/EXPORT.md §1-§3; internal to the engine).
 *
 * The hook export.c calls for a key of type EMQ_T_STREAM, and the one its
 * import calls for the stream commands of an export or an AOF. Both sides
 * go through the store's stream type and engine/xcmd.c only.
 */
#ifndef EMQ_EXPORT_STREAM_H
#define EMQ_EXPORT_STREAM_H

#include <stddef.h>
#include "store.h"
#include "resp.h"

struct emq_db;

/** Where a stream's export goes: one command at a time (`emit`, returning
 *  EMQ_OK or a failure), and the bytes of its digest body (`digest`). */
typedef struct emq_xsink {
    int (*emit)(void *ctx, size_t argc, const emq_bytes *argv);
    void (*digest)(void *ctx, const void *p, size_t n);
    void *ctx;
} emq_xsink;

/**
 * Export stream `key` as Valkey's AOF rewrite restores one: each entry by
 * `XADD key <id> <fields...>` in id order (an emptied stream by `XADD key
 * MAXLEN 0 0-1 x y`); `XSETID key <last id> ENTRIESADDED <n>
 * MAXDELETEDID <id>`; per group in name order `XGROUP CREATE key <group>
 * <last-delivered id> [ENTRIESREAD <n>]` (without it when unknown), `XGROUP
 * CREATECONSUMER key <group> <consumer>` per consumer in name order, and
 * `XCLAIM key <group> <owner> 0 <id> TIME <delivery ms> RETRYCOUNT <count>
 * FORCE JUSTID` per pending entry in id order whose entry still exists
 * (§8.3.5: the others cannot be recreated). The digest body (after the
 * record head the caller writes) follows doc/EXPORT.md §3. The caller
 * writes the key's expiry. Returns EMQ_OK, EMQ_NOTFOUND (no such stream),
 * or a failure.
 */
int emq_stream_export(emq_store *st, const void *key, size_t klen,
                      const emq_xsink *out);

/** 1 when command `c` is a stream command an import applies (XADD, XDEL,
 *  XTRIM, XSETID, XGROUP, XCLAIM, XACK). */
int emq_stream_import_cmd(const emq_resp_cmd *c);

/**
 * Apply stream command `c` of an import inside its open transaction, with
 * Valkey's semantics (engine/xcmd.c). The key must be a stream key of the
 * EchoMQ grammar. Returns EMQ_OK, or EMQ_EPROTO with the handle's message
 * "import refused at byte <offset>: <why>" (an error reply, a key outside
 * the grammar), or a store failure.
 */
int emq_stream_import(struct emq_db *db, emq_store *st,
                      const emq_resp_cmd *c);

#endif /* EMQ_EXPORT_STREAM_H */
