/*
 * brandedid.h — the 14-byte branded id codec and the snowflake minter.
 *
 * Owns: base62 (alphabet 0-9A-Za-z, width 11), validation in the order
 * length, namespace, charset, range, and minting by the snowflake layout
 * ts(41) | node(10) | seq(12) with ts in ms since 2024-01-01T00:00:00Z.
 * The public codec calls are declared in emqlite.h; this header adds the
 * minter and the error taxonomy.
 */
#ifndef EMQ_BRANDEDID_H
#define EMQ_BRANDEDID_H

#include <stdint.h>
#include <stddef.h>
#include "emqlite.h"

/** Why an id is invalid (checked in this order). */
enum emq_id_err {
    EMQ_ID_OK = 0,
    EMQ_ID_BADLEN,
    EMQ_ID_BADNS,
    EMQ_ID_BADCHARSET,
    EMQ_ID_BADRANGE
};

/** Validate and decode; returns enum emq_id_err. `ns`/`snow` may be NULL. */
int emq_id_check(const char *id, size_t len, char ns[4], uint64_t *snow);

/** Base62 encode `v` as 11 characters into out (no NUL). */
void emq_b62_encode(uint64_t v, char out[11]);

/** hash32 of §4.3. */
uint32_t emq_hash32(uint64_t snow);

/** Snowflake field accessors. */
int64_t emq_snow_unix_ms(uint64_t snow);
unsigned emq_snow_node(uint64_t snow);
unsigned emq_snow_seq(uint64_t snow);
/** The smallest snowflake mintable at or after Unix ms `t`. */
uint64_t emq_snow_min_for(int64_t unix_ms);

/** The last cell (ts << 12 | seq) an id can be minted from: sequence 4095
 *  of the 41-bit horizon's last millisecond, 2093-09-06T15:47:35.551Z. */
#define EMQ_CELL_MAX ((((uint64_t)1 << 41) - 1) << 12 | 0xFFF)
/** What emq_snow_mint answers once the node's cell is past EMQ_CELL_MAX. */
#define EMQ_SNOW_EXHAUSTED UINT64_MAX

/**
 * Mint the next snowflake for `node` (0..1023) at wall time `now_ms`.
 * One process-wide monotonic cell per node id, updated atomically: ids from
 * one node strictly increase across all threads of the process, through
 * clock regressions and bursts beyond 4096 per ms (they borrow the next ms).
 * EMQ_SNOW_EXHAUSTED when the cell has passed the horizon (no id is left).
 */
uint64_t emq_snow_mint(unsigned node, int64_t now_ms);

/**
 * Raise the cell of `node` to at least `cell` (ts << 12 | seq of the next id
 * the node may mint); never lowers it. Values past the 41-bit horizon are
 * clamped to one past it (exhausted). Thread-safe (a CAS max). File
 * handles seed the cell with the node's persisted reservation when they
 * take its lease (doc/IDS.md).
 */
void emq_snow_seed(unsigned node, uint64_t cell);

/** The cell value (ts << 12 | seq) a snowflake was minted from. */
uint64_t emq_snow_cell(uint64_t snow);

#endif /* EMQ_BRANDEDID_H */
