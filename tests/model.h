/*
 * model.h — an in-memory model of PROTOCOL.md §6.1 (Tier 1, with the group
 * paths of §6.0 and the flow link of complete/retry), used as the oracle of
 * the randomized engine test and by fuzzers.
 *
 * Owns: a tiny Redis-typed keyspace (strings, hashes in insertion order,
 * zsets, lists, sets; empty aggregates vanish; WRONGTYPE) written with plain
 * arrays — deliberately sharing no code with storage/ — and the Tier 1
 * transitions written straight from the protocol text over it. Every verb
 * takes NOW explicitly and returns the same EMQ_* code the C API returns.
 * Host gates are not modelled: callers pass gated arguments.
 */
#ifndef EMQ_TEST_MODEL_H
#define EMQ_TEST_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"
#include "store.h"

typedef struct emq_model emq_model;

emq_model *model_new(void);
void model_free(emq_model *m);

/* ------------------------------------------------------------ transitions */

int model_enqueue(emq_model *m, const char *q, const char *id,
                  const void *p, size_t len);
int model_enqueue_at(emq_model *m, const char *q, const char *id,
                     const void *p, size_t len, int64_t run_at);
int model_enqueue_in(emq_model *m, const char *q, const char *id,
                     const void *p, size_t len, int64_t now, int64_t delay);
/** On EMQ_OK fills id (15 bytes), *att, and *payload (malloc'd, caller
 *  frees) / *plen, or *payload = NULL for nil. */
int model_claim(emq_model *m, const char *q, int64_t now, int64_t lease,
                char id[EMQ_ID_SIZE], int64_t *att, unsigned char **payload,
                size_t *plen);
int model_complete(emq_model *m, const char *q, const char *id,
                   int64_t token);
int model_retry(emq_model *m, const char *q, const char *id, int64_t token,
                int64_t now, int64_t delay, int64_t max, const void *err,
                size_t elen);
int model_promote(emq_model *m, const char *q, int64_t now, int64_t batch,
                  int64_t *count);
int model_reap(emq_model *m, const char *q, int64_t now, int64_t *count);
int model_browse(emq_model *m, const char *q, size_t n,
                 char (*ids)[EMQ_ID_SIZE], size_t *count);
int model_pending_size(emq_model *m, const char *q, int64_t *size);
int model_extend_lock(emq_model *m, const char *q, const char *id,
                      int64_t token, int64_t now, int64_t lease);
int model_extend_locks(emq_model *m, const char *q, size_t n,
                       const char *const *ids, const int64_t *tokens,
                       int64_t now, int64_t lease, int *failed,
                       size_t *nfailed);
int model_pause(emq_model *m, const char *q);
int model_resume(emq_model *m, const char *q);
int model_stats(emq_model *m, const char *q, emq_stats *st);

/* ------------------------------------------------- raw keyspace (fixtures) */

int model_hset(emq_model *m, const void *k, size_t kl, const void *f,
               size_t fl, const void *v, size_t vl);
/** HGET: EMQ_OK with *v and *vl pointing into the model, or EMQ_NOTFOUND. */
int model_hget(emq_model *m, const void *k, size_t kl, const void *f,
               size_t fl, const unsigned char **v, size_t *vl);
int model_hincrby(emq_model *m, const void *k, size_t kl, const void *f,
                  size_t fl, int64_t by, int64_t *out);
int model_del(emq_model *m, const void *k, size_t kl);
int model_sadd(emq_model *m, const void *k, size_t kl, const void *v,
               size_t vl);
int model_srem(emq_model *m, const void *k, size_t kl, const void *v,
               size_t vl);
int model_zadd(emq_model *m, const void *k, size_t kl, const void *v,
               size_t vl, double score);
int model_set(emq_model *m, const void *k, size_t kl, const void *v,
              size_t vl);

/** The canonical text of tests/ksdump.h for the whole model keyspace. */
void model_dump(emq_model *m, emq_buf *out);

#endif /* EMQ_TEST_MODEL_H */
