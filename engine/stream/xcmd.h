/*
 * xcmd.h — Valkey's stream commands over the store's stream type (internal
 * to the engine and its tests).
 *
 * Owns: the command surface of storage/stream.h as Valkey 8 answers it —
 * argument parsing with Valkey's id grammar and its exact error texts, and
 * the reply shapes (RESP3: XINFO answers maps) — for XADD, XRANGE,
 * XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XGROUP (CREATE, SETID, DESTROY,
 * CREATECONSUMER, DELCONSUMER), XREADGROUP, XACK, XPENDING, XCLAIM,
 * XAUTOCLAIM and XINFO (STREAM [FULL [COUNT n]], GROUPS, CONSUMERS).
 * The stream verbs of Tier 5 (engine/stream/bus.c), the import of stream
 * commands (engine/transfer/export_stream.c), the differential test against a
 * server and the stream fuzz target all run commands through here.
 *
 * Rules: a command runs inside the caller's open store transaction, with
 * the store's clock as Valkey's command time; XREADGROUP's BLOCK is parsed
 * and never waits here (the caller waits between transactions, stream.c).
 */
#ifndef EMQ_XCMD_H
#define EMQ_XCMD_H

#include <stddef.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "store.h"

/**
 * Run the stream command argv[0..argc) (argv[0] the name, any case; each
 * argument `len[i]` bytes, NUL-terminated) in the open transaction `st`.
 * Returns EMQ_OK with `r` holding Valkey's reply; or an error reply in `r`
 * (EMQ_REPLY_ERROR, the exact text) with EMQ_EWRONGTYPE, EMQ_ENONMONO (the
 * id is not above the top) or EMQ_EENGINE (every other error reply: ERR,
 * NOGROUP, BUSYGROUP); or a store failure (r untouched, the message in
 * emq_store_errmsg). Writes are made only when the result is EMQ_OK, except
 * that a store failure may leave partial writes for the caller to roll back.
 * `blocked` (may be NULL) is set to the BLOCK milliseconds of an XREADGROUP
 * (-1 without BLOCK).
 */
int emq_xcmd(emq_store *st, size_t argc, const char *const *argv,
             const size_t *len, emq_reply *r, int64_t *blocked);

struct emq_db;

/**
 * emq_xcmd as one transition on handle `db` (a write transaction, NOW read
 * once as the command time): committed when the reply is not an error,
 * rolled back otherwise. Returns what emq_xcmd returns; on a store failure
 * emq_errmsg(db) names it and `r` is cleared.
 */
int emq_xcmd_run(struct emq_db *db, size_t argc, const char *const *argv,
                 const size_t *len, emq_reply *r);

#endif /* EMQ_XCMD_H */
