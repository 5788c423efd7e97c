/*
 * transfer.h — a key's value in transfer form: the commands that write it
 * (an export, a pull) and its record in the logical digest (doc/EXPORT.md
 * §1 and §3), built from its elements (types.h) whatever they were read
 * from — the store, or a server's replies.
 *
 * Owns: the digest state (XXH3-64, seed 0, inlined: its state lives in the
 * caller's memory) and emq_keyout, which turns the elements of one key into
 * `cmd key e1 … e64` commands, the field-expiry and key-expiry commands,
 * and the key's record.
 *
 * Rules: the bytes produced depend on the elements, the row and the key's
 * expiry only. Elements given "in digest order" must really be in it (the
 * record is then fed as they come, without holding the value); otherwise
 * the value is held and sorted at the end.
 */
#ifndef EMQ_TRANSFER_H
#define EMQ_TRANSFER_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"
#include "types.h"

/** Elements per data command of an export (HSET, ZADD, RPUSH, SADD). */
#define EMQ_XFER_CHUNK 64

/** The running logical digest: XXH3-64 (seed 0) of the concatenated
 *  records. The bytes hold an XXH3 state (checked in transfer.c). */
typedef struct emq_dg {
    _Alignas(64) unsigned char state[640];
} emq_dg;

void emq_dg_init(emq_dg *d);
/** Feed raw bytes (a record already serialised elsewhere). */
void emq_dg_feed(emq_dg *d, const void *p, size_t n);
uint64_t emq_dg_value(const emq_dg *d);

/** XXH3-64 (seed 0) of bytes: a hash for tables, not a digest record. */
uint64_t emq_hash64(const void *p, size_t n);

/**
 * One key on its way out. Set `out` (commands are appended; NULL: none),
 * `dg` (the record is fed to it; NULL: none) and `one` (1: also hash the
 * record alone into `hash`) before emq_keyout_begin; the struct is reused
 * key after key (its buffers are kept) and released by emq_keyout_free.
 */
typedef struct emq_keyout {
    emq_buf *out;
    emq_dg *dg;
    int one;
    /* results of the last key (after emq_keyout_end) */
    uint64_t commands;  /* commands appended to `out` (cumulative)       */
    uint64_t n;         /* elements of the key                            */
    uint64_t hash;      /* XXH3-64 of the key's record alone (with `one`) */
    /* private */
    const emq_typedef *t;
    const void *key;
    size_t klen;
    int64_t expire;
    int streamed;       /* elements come in digest order                  */
    uint64_t announced; /* streamed: the element count given at begin     */
    emq_dg rec;     /* the record alone                               */
    struct emq_held *h; /* held elements: offsets into `arena`            */
    size_t nh, cap;
    emq_buf arena;
    int rc;
} emq_keyout;

/**
 * Start key `key` (klen bytes, kept alive by the caller until _end) of row
 * `t` with key expiry `expire` (-1: none). `n` >= 0 announces that exactly
 * n elements follow in the digest's order of `t`; n < 0 that they follow in
 * any order (held, sorted at the end). Returns EMQ_OK.
 */
int emq_keyout_begin(emq_keyout *ko, const emq_typedef *t, const void *key,
                     size_t klen, int64_t expire, int64_t n);
/** Add the next element (copied as needed). EMQ_OK or EMQ_ENOMEM; may be
 *  used as an emq_elem_fn (returns nonzero on failure). */
int emq_keyout_add(emq_keyout *ko, const emq_elem *e);
int emq_keyout_elem_fn(void *ko, const emq_elem *e);
/** Finish the key: the remaining commands and the record. A key of no
 *  element writes nothing (it does not exist); ko->n says which. Returns
 *  EMQ_OK or EMQ_ENOMEM (the first failure since _begin). */
int emq_keyout_end(emq_keyout *ko);
void emq_keyout_free(emq_keyout *ko);

/** Sort elements into the digest order of row `t` (no change for a
 *  kept or single-element order). */
void emq_elems_sort(const emq_typedef *t, emq_elem *e, size_t n);

/** A score as an export writes it: an integer when the double is one, else
 *  C's %.17g (which reads back to the same double). Returns the length. */
size_t emq_score_text(char *buf, size_t cap, double s);

#endif /* EMQ_TRANSFER_H */
