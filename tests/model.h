/*
 * model.h — an in-memory model of PROTOCOL.md §6.1–§6.4 and the non-stream
 * verbs of §6.5, the independent oracle of the randomized engine test
 * (tests/test_model.c), the verb fuzzer (fuzz/fuzz_verbs.c) and the golden
 * model replay (tests/golden_model.c).
 *
 * Owns: a tiny Redis-typed keyspace (strings with key expiry, hashes with
 * field expiry, zsets, lists, sets; empty aggregates vanish; WRONGTYPE)
 * written over plain arrays — deliberately sharing no code with storage/ or
 * engine/ — and every transition written straight from the protocol text
 * over it (tests/model_t1.c ... model_t5.c), each registered by its wire
 * name in one table (tests/model.c): a new verb is one function and one
 * row.
 *
 * The interface is emq_call's: model_call runs a verb by its wire name with
 * byte-string arguments and answers the wire reply in the public emq_reply
 * shape (built with the model's own allocation: free it with
 * model_reply_free, never emq_reply_clear). Arguments come in the order of
 * the engine's registry row when the registry has the verb (emq_verb_find,
 * the public description of the call), else in the model's own order; the
 * model binds them by name, so the two orders may differ. Host gates
 * (PROTOCOL.md §6.0, Appendix A.3) are modelled from the text by argument
 * kind, so the refusal codes can be compared too; the payload size limit is
 * the handle's configuration and is not modelled.
 */
#ifndef EMQ_TEST_MODEL_H
#define EMQ_TEST_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "store.h"

typedef struct emq_model emq_model;

emq_model *model_new(void);
void model_free(emq_model *m);
/** The node id (0-1023) the model mints ids with (sweep's occurrences);
 *  1 by default, as in the golden traces. The mint cell starts empty. */
void model_set_node(emq_model *m, int node);
/** Advance the mint cell past `id` (a branded id minted from the same cell
 *  by a step the model did not run, such as a stream append). */
void model_mint_observe(emq_model *m, const char *id, size_t n);

/* ------------------------------------------------------------- the verbs */

/**
 * Run verb `verb` at clock `now` (NOW and HOST-NOW, Unix ms) with `argc`
 * arguments (`argv[i]` of `len[i]` bytes; `len` may be NULL for C strings;
 * a NULL argv[i] is an absent optional argument). Fills `r` (zeroed first;
 * free with model_reply_free) with the wire reply: a value, an
 * EMQ_REPLY_ERROR with the exact wire text, or an EMQ_REPLY_REFUSED with a
 * host refusal's text. Returns >= 0 when the transition answered a value,
 * the EMQ_E* code of the wire class (Appendix A.1: EMQKIND -> EMQ_EKIND,
 * ...) for an error reply, EMQ_EREFUSED for a refusal, or a host gate's
 * code (EMQ_EQUEUE, EMQ_EID, EMQ_EINVAL, EMQ_EEMPTY; `r` is then nil).
 * An unknown verb is EMQ_ENOTSUP.
 */
int model_call(emq_model *m, const char *verb, int64_t now, size_t argc,
               const char *const *argv, const size_t *len, emq_reply *r);
/** Free what `r` holds (a reply model_call built) and zero it. */
void model_reply_free(emq_reply *r);

/** One verb of the model's table. */
typedef struct model_verb {
    const char *name;          /* the wire name                           */
    int tier;                  /* PROTOCOL.md tier                        */
    const emq_arg_info *args;  /* the model's own argument specs          */
    size_t nargs;
} model_verb;

size_t model_verb_count(void);
const model_verb *model_verb_at(size_t i);
const model_verb *model_verb_find(const char *name);
/** The model's row as an emq_verb_info (name, tier, args), for harnesses
 *  that map named arguments (tests/vjson.h). */
void model_verb_info(const model_verb *v, emq_verb_info *out);
/** Why the model does not have verb `name` (a sentence), or NULL when it
 *  has it or has no reason on record. */
const char *model_unmodelled(const char *name);

/** The message the last model_call published (update_progress): 1 with
 *  the channel and message bytes (valid until the next call), else 0. */
int model_published(const emq_model *m, const char **ch, size_t *chl,
                    const char **msg, size_t *ml);

/** The current attempts of J(id) of queue `q` (the token a hook supplies):
 *  1 with *att, or 0 when the row or field is absent or not a number. */
int model_attempts(emq_model *m, int64_t now, const char *q,
                   const char *id, int64_t *att);

/* ------------------------------------------------------ the raw keyspace */

/** 1 when `key` (a C string) exists at `now`. */
int model_exists(emq_model *m, int64_t now, const char *key);

/**
 * Run one store command as Redis answers it (the golden traces' `raw`
 * commands): DEL, HSET, HDEL, ZADD, ZREM, SET [PX ms], RPUSH, SADD, SREM,
 * HINCRBY. Fills `r` as model_call does; a wrong type answers the WRONGTYPE
 * error. Returns 0, or -1 for a command it does not know (r is nil).
 */
int model_raw(emq_model *m, int64_t now, size_t argc,
              const char *const *argv, const size_t *len, emq_reply *r);

/** What model_walk reports, key by key in bytewise key order (hash fields
 *  in insertion order, zsets in zset order, lists head to tail, sets in
 *  bytewise order). Expired keys and fields are left out. */
typedef struct model_visitor {
    void (*key)(void *ctx, const void *name, size_t n, int type,
                int64_t expire_at);          /* EMQ_T_*; -1: no expiry   */
    void (*str)(void *ctx, const void *v, size_t n);
    void (*field)(void *ctx, const void *f, size_t fl, const void *v,
                  size_t vl);
    void (*member)(void *ctx, const void *mm, size_t n, double score);
    void (*elem)(void *ctx, const void *v, size_t n);
} model_visitor;

void model_walk(emq_model *m, int64_t now, const model_visitor *v,
                void *ctx);
/** The canonical text of tests/ksdump.h for the whole model keyspace. */
void model_dump(emq_model *m, int64_t now, emq_buf *out);

#endif /* EMQ_TEST_MODEL_H */
