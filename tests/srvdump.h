/*
 * srvdump.h — a live server's keyspace read plainly (KEYS, TYPE,
 * PEXPIRETIME, GET / HGETALL / LRANGE / SMEMBERS / ZRANGE WITHSCORES) in
 * name order, written as tests/ksdump.h text ({emq}:version left out), for
 * comparing a server with a file. Knows nothing of emqlite's transfer
 * module: the tests use it to judge that module.
 */
#ifndef EMQ_TEST_SRVDUMP_H
#define EMQ_TEST_SRVDUMP_H

#include <stdint.h>
#include <hiredis/hiredis.h>
#include "store.h"

/** Receives each key (the version key too): its enum emq_type (0 for a
 *  type the store has not), absolute expiry or -1, and the value's reply
 *  (a set's members sorted bytewise). */
typedef void (*sd_key_fn)(void *ctx, const char *key, size_t klen, int type,
                          int64_t expire, const redisReply *v);

/** Dump the server's keyspace into `out` (reset first, NUL-terminated);
 *  `fn` (may be NULL) sees every key. Returns the number of keys, or -1
 *  when the server failed. */
long sd_dump(redisContext *c, emq_buf *out, sd_key_fn fn, void *ctx);

#endif /* EMQ_TEST_SRVDUMP_H */
