/*
 * ksdump.h — a canonical text image of a keyspace, for comparing emqlite's
 * store with the in-memory model (tests/model.c) after every step.
 *
 * Owns: the text format (one block per key in memcmp order of names; hash
 * fields sorted, since their order is not part of the contract; zsets in
 * zset order with %.17g scores; lists head to tail; sets sorted; bytes
 * escaped) and the dump of a live store. `{emq}:version` is left out.
 */
#ifndef EMQ_TEST_KSDUMP_H
#define EMQ_TEST_KSDUMP_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

typedef struct kd_pair {
    const unsigned char *a;
    size_t an;
    const unsigned char *b;
    size_t bn;
} kd_pair;

/* Format pieces, shared by the store dump and the model dump. */
void kd_key(emq_buf *out, const void *name, size_t n, int type,
            int64_t expire_at);
void kd_string(emq_buf *out, const void *v, size_t n);
/** A hash: sorts `f` (n pairs) by field in place, then writes them. */
void kd_hash(emq_buf *out, kd_pair *f, size_t n);
void kd_zmember(emq_buf *out, const void *m, size_t n, double score);
void kd_elem(emq_buf *out, const void *v, size_t n);

/** Dump every live key of `st` (in a read transaction at `now`) into out
 *  (reset first). Returns EMQ_OK or a store failure. */
int kd_store(emq_store *st, int64_t now, emq_buf *out);

#endif /* EMQ_TEST_KSDUMP_H */
