/*
 * vgen.h — random verb calls generated from the registry, and their
 * differential run on emqlite and on the in-memory model.
 *
 * Owns: (1) the choice of a verb and of a plausible argv for it from its
 * registry row alone (emq_verb_info: each argument's kind and flags) and a
 * byte source (a PRNG or a fuzz input), drawing from small pools — two
 * queues, ten JOB ids and an ORD id, two group ids, payloads with NUL and
 * non-UTF-8 bytes and the protocol's own tokens, small integers by kind,
 * and tokens that are often right (a hook supplies the current attempts);
 * (2) the raw store writes the differential tests interleave (states no
 * verb builds); (3) running one call on both sides and comparing the
 * replies and the keyspaces.
 *
 * The input format is frames: [verb byte][length byte][length bytes of
 * argument choices]. A verb byte below VGEN_HARNESS is a registry id (verb
 * ids are append-only; an id not registered yet is a no-op frame), so
 * adding a verb never reinterprets an old input: its frames and every
 * other frame keep their meaning, and only frames that named an unassigned
 * id (no-ops before) gain one. A verb byte at or above VGEN_HARNESS is a
 * harness step (a clock advance or a raw write).
 */
#ifndef EMQ_TEST_VGEN_H
#define EMQ_TEST_VGEN_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "store.h"
#include "model.h"

/* --------------------------------------------------------- byte sources */

/** A byte source: a fuzz input (bytes, then zeroes) or a PRNG. */
typedef struct vgen_src {
    const uint8_t *p;     /* input bytes (NULL: the PRNG)                */
    size_t n, i;
    uint64_t s;           /* PRNG state (xorshift64*)                    */
} vgen_src;

void vgen_src_bytes(vgen_src *s, const uint8_t *p, size_t n);
void vgen_src_seed(vgen_src *s, uint64_t seed);
unsigned vgen_byte(vgen_src *s);
/** 1 while an input source has bytes left (a PRNG: always). */
int vgen_more(const vgen_src *s);

/* ------------------------------------------------------------- calls */

#define VGEN_HARNESS 200   /* verb bytes from here are harness steps   */
#define VGEN_MAXARGS 40

/** The current attempts of J(id) in queue q (the model's view): 1 with
 *  *att, 0 when there is none. */
typedef int (*vgen_attempts_fn)(void *ctx, const char *q, const char *id,
                                int64_t *att);

typedef struct vgen {
    int64_t now;                 /* the clock (relative run-ats)         */
    vgen_attempts_fn attempts;   /* the token hook (may be NULL)         */
    void *actx;
    int hostile;                 /* 1 in 32 arguments invalid for its
                                    kind (0: always valid)               */
} vgen;

/** One generated call: argv points into `buf` or static pools. */
typedef struct vgen_call {
    const emq_verb_info *v;
    size_t argc;
    const char *argv[VGEN_MAXARGS];
    size_t len[VGEN_MAXARGS];
    char buf[VGEN_MAXARGS][32];
} vgen_call;

/**
 * Fill `c` with a call of verb `v`, its arguments drawn from `s`: every
 * fixed argument (an optional one absent now and then), then 0-3 groups of
 * a repeated tail (at least 1 for a tail that must not be empty, mostly).
 * A tail's `x.level` (a flow's nodes) counts one flow in pre-order: 1, then
 * 2 .. the level before + 1; the root's x.queue is mostly the call's queue
 * and its x.policy mostly the first word (fp).
 */
void vgen_args(const vgen *g, const emq_verb_info *v, vgen_src *s,
               vgen_call *c);

/** The call as text for messages ("complete qa JOB00000000001 1"). */
void vgen_describe(const vgen_call *c, char *out, size_t cap);

/* ------------------------------------------------------- raw writes */

/** A raw store write of a state no verb builds (group fields, in-flight
 *  counters, ceilings, lane pauses, flow links and counters, deleted rows,
 *  meta.paused = "0", a deleted ring; and, for a kind byte of 240..255, a
 *  parked dedup key, meta.concurrency and meta.max, a spent limiter with a
 *  TTL no sequence reaches, a lock key and lock field, metric counters and
 *  data points): up to 3 commands of up to 5 words.
 *  A field written into a job row is written only when the row exists (a
 *  row without a state field is outside every rule the checker knows). */
typedef struct vgen_raw {
    const char *row;      /* the commands need this key to exist, or NULL */
    char rowbuf[96];
    size_t ncmd;
    size_t argc[3];
    const char *argv[3][5];
    char buf[3][5][64];
} vgen_raw;

void vgen_raw_pick(vgen_src *s, vgen_raw *out);
/** Apply command k of `r` to the engine's store (one transaction) and to
 *  the model. Returns 0, or -1 with `err` filled. */
int vgen_raw_apply(emq_db *db, emq_model *m, int64_t now, const vgen_raw *r,
                   char *err, size_t errlen);
/** As vgen_raw_apply on emqlite alone (for a differential whose other
 *  side is not the model): every command of `r` in one transaction, none
 *  when `r->row` is not a live key of the store (*applied = 0, else 1).
 *  Returns 0, or -1 with `err` filled. */
int vgen_raw_apply_engine(emq_db *db, int64_t now, const vgen_raw *r,
                          int *applied, char *err, size_t errlen);

/* ------------------------------------------------------ differential */

/** Compare an engine reply (rc, r) with the model's (mrc, mr); maps
 *  compare as sets of pairs. 0 when equal, else 1 with `err` filled. */
int vgen_reply_diff(int rc, const emq_reply *r, int mrc,
                    const emq_reply *mr, char *err, size_t errlen);

/** Both keyspaces in the ksdump text, stream keys left out (the model has
 *  no streams). 0 when equal, else 1 with the two dumps in `err`. */
int vgen_keyspace_diff(emq_db *db, emq_model *m, int64_t now, char *err,
                       size_t errlen);

/**
 * Run call `c` on emqlite (emq_call) and, when the model has the verb, on
 * the model (model_call), and compare the replies. `*modelled` says which.
 * Returns 0, or 1 with `err` filled (the call, and what differed).
 */
int vgen_run(emq_db *db, emq_model *m, int64_t now, const vgen_call *c,
             int *modelled, char *err, size_t errlen);

#endif /* EMQ_TEST_VGEN_H */
