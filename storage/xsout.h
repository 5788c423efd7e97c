/*
 * xsout.h — a stream key's transfer form: the commands an export writes
 * for it and the body of its digest record (doc/EXPORT.md §1, §3).
 *
 * Rules: reads the store's stream type (stream.h) only; the bytes depend
 * on the stream's state alone.
 */
#ifndef EMQ_XSOUT_H
#define EMQ_XSOUT_H

#include <stddef.h>
#include "store.h"

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

#endif /* EMQ_XSOUT_H */
