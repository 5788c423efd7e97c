/*
 * dead.h — T2.13 on one dead job, and the walk over B.dead that requeues a
 * batch of them (operator.c); shared by requeue_dead_batch and the
 * operator's requeue_dead_before (opverbs.c).
 */
#ifndef EMQ_OPS_DEAD_H
#define EMQ_OPS_DEAD_H

#include "verb.h"

/* T2.13 on `id` (any bytes) inside the open transaction: EMQ_OK,
 * EMQ_GONE (no row: left dead) or EMQ_ENOTDEAD (not a member of B.dead). */
int emq_dead_reprocess(emq_store *st, const char *q, const void *id,
                       size_t n);

/* A walk over B.dead (emq_zset_range_lex with emq_dead_walk_cb): skips the
 * member `after`, stops at `bound` (EMQ_ID_LEN bytes; NULL: none) or once
 * `batch` members were looked at, requeuing each. */
typedef struct emq_dead_walk {
    emq_vctx *c;
    const emq_varg *after;    /* skip this member (the previous cursor) */
    const char *bound;        /* stop at this member; NULL: none        */
    int64_t batch;
    int64_t requeued, skipped, seen;
    emq_buf last;             /* the last member looked at              */
} emq_dead_walk;

int emq_dead_walk_cb(void *ctx, const unsigned char *m, size_t mlen,
                     double score);

#endif /* EMQ_OPS_DEAD_H */
