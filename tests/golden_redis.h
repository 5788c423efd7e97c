/*
 * golden_redis.h — the Valkey executor of the golden traces: every verb of
 * tier1..tier5.jsonl run on a real redis-server or valkey-server as the
 * reference's host runs it, scripted transitions through the project's Lua
 * bundle (tests/lua/), host-side verbs as plain store commands.
 *
 * Owns: one connection (plus a pattern subscription to emq:{*}:events for
 * the progress event), the bundle's SHA-1s, and the records that translate
 * the server's own clock into the trace's virtual clock (see "Time" in
 * tests/golden_redis.c). Not thread-safe; one executor per server, and the
 * server must be private to it (emq_rx_reset runs FLUSHALL).
 *
 * The Lua differential runner (tests/lua_diff.c) needs only emq_rx_open,
 * emq_rx_reset, emq_rx_verb_at, emq_rx_run (one verb by its wire name,
 * JSON-shaped args, the virtual now) and emq_rx_dump; nothing here reads a
 * trace. Arguments the traces always give but the registry marks optional
 * (drain's include_schedule, obliterate's force and budget, add_log's keep,
 * delay's mode, get_rate_limit_ttl's max_jobs, reap_group's limit,
 * stalled_check's max_stalled and limit, flow_child's pq) may be absent or
 * null: they take PROTOCOL.md's defaults (false, false, 1000, 0, in, 0,
 * 100, 1, 100, the parent's queue).
 */
#ifndef EMQ_TEST_GOLDEN_REDIS_H
#define EMQ_TEST_GOLDEN_REDIS_H

#include <stdint.h>
#include "golden.h"

typedef struct emq_rx emq_rx;

/** Connect to host:port, SCRIPT LOAD the bundle from `lua_dir` and subscribe
 *  to the events channels. NULL on failure with `err` filled. */
emq_rx *emq_rx_open(const char *host, int port, const char *lua_dir,
                    char *err, size_t errlen);
void emq_rx_close(emq_rx *x);

/** An empty keyspace (FLUSHALL) and a fresh clock record: call before each
 *  independent sequence (a trace case). 0, or -1 with `err` appended. */
int emq_rx_reset(emq_rx *x, emq_json_buf *err);

/**
 * Run `verb` (a trace wire name: "claim", "lane_enqueue", "autoclaim", ...,
 * "raw", "advance") with `args` (an object shaped as the trace's args, byte
 * strings decoded) at virtual instant `now_ms`. Fills `res->reply` in the
 * trace's reply shape and, for update_progress, `res->published` ([channel,
 * message] or null) with has_published set; the caller frees both. Returns
 * 0, or -1 with `err` appended (unknown verb, missing argument, server
 * gone). Instants must not go backwards between calls after a reset.
 * A verb runs whole: a retry that dead-letters a child with a same-queue
 * link runs RECURSE-SQ after it (T4.14), which a trace records as the
 * retry's second part, a step of its own (the replay runs that part alone).
 */
int emq_rx_run(emq_rx *x, const char *verb, const emq_json *args,
               int64_t now_ms, emq_golden_result *res, emq_json_buf *err);

/** The name of the i-th verb of the executor's table (0, 1, ...; the
 *  replayer steps raw and advance left out), or NULL past the last: what a
 *  differential runner may call emq_rx_run with. */
const char *emq_rx_verb_at(size_t i);

/** The whole keyspace in the trace's shape, times in the virtual clock,
 *  without {emq}:version. 0 with *out set (caller frees), or -1. */
int emq_rx_dump(emq_rx *x, emq_json **out, emq_json_buf *err);

/** Write a trace keyspace into the (reset) server as of virtual instant
 *  `now_ms`: expiries and stream delivery times are placed so that the
 *  server's clock agrees with the virtual one. 0, or -1 with `err`. */
int emq_rx_load(emq_rx *x, const emq_json *ks, int64_t now_ms,
                emq_json_buf *err);

/** The golden.h executor over `x`. */
emq_golden_exec emq_rx_exec(emq_rx *x);

#endif /* EMQ_TEST_GOLDEN_REDIS_H */
