/*
 * hashcodec.h — the on-disk encoding of a hash: one blob per hash key.
 *
 * A hash is stored as the `val` of its kv row: a sequence of entries in
 * insertion order, each varint(F) [field] varint(V) [value] [varint(expiry)]
 * with F = (x << 2) | (has_expiry << 1) | is_token, V = (y << 1) | is_token:
 * a field or value that is a word of the opener's dictionary (the engine's:
 * the job row's names and state strings, PROTOCOL.md §3; store.h) is a
 * one-byte token, any other is its length and bytes
 * (schema 6; schema 5 spelled every name out: emq_hc_upgrade_v5). Small
 * hashes (job rows, meta, counters) are read and written in one row access,
 * as Valkey keeps small hashes in one listpack. Decoding never copies:
 * entries point into the blob or at the dictionary's strings.
 */
#ifndef EMQ_HASHCODEC_H
#define EMQ_HASHCODEC_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

/** LEB128 varints (at most 10 bytes), shared with stream.c's field lists:
 *  read one at *p (advanced; -1 when truncated), append one to b. */
int emq_varint_get(const unsigned char **p, const unsigned char *end,
                   uint64_t *v);
int emq_varint_put(emq_buf *b, uint64_t v);

typedef struct emq_hfield {
    const unsigned char *f, *v;
    size_t flen, vlen;
    int64_t expire; /* absolute ms, -1 none */
} emq_hfield;

typedef struct emq_hfields {
    emq_hfield *e;
    size_t n, cap;
    const emq_hash_dict *dict; /* the words decode and encode use as tokens */
} emq_hfields;

/** Decode `len` bytes with h->dict, dropping fields expired at `now`
 *  (now > expire). EMQ_ECORRUPT on a malformed blob or a token h->dict does
 *  not have. Entries point into `p`, or at the dictionary's strings. */
int emq_hc_decode(const unsigned char *p, size_t len, int64_t now,
                  emq_hfields *h);
/** Index of field f, or -1. */
long emq_hc_find(const emq_hfields *h, const void *f, size_t flen);
/** Set (replace or append) field f; the views must outlive encoding. */
int emq_hc_put(emq_hfields *h, const void *f, size_t flen, const void *v,
               size_t vlen, int64_t expire);
/** Remove entry i. */
void emq_hc_remove(emq_hfields *h, size_t i);
/** Encode all entries into `out` (replacing its contents), h->dict's words
 *  as tokens. */
int emq_hc_encode(const emq_hfields *h, emq_buf *out);
void emq_hc_free(emq_hfields *h);
/** A schema-5 blob `p` re-encoded in the current form with `dict` into
 *  `out` (every field kept, expired or not). EMQ_ECORRUPT when it does not
 *  parse. */
int emq_hc_upgrade_v5(const emq_hash_dict *dict, const unsigned char *p,
                      size_t len, emq_buf *out);

#endif /* EMQ_HASHCODEC_H */
