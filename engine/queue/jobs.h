/*
 * jobs.h — internal entry points shared by the Tier 1 transition files and
 * reused by later tiers (flows complete with a result; lane verbs release).
 */
#ifndef EMQ_JOBS_H
#define EMQ_JOBS_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite_protocol.h"
#include "db.h"

/**
 * Steps 3-5 of T1.5 (also step 3 of T1.6): g = J(id).group; was = remove id
 * from B.active; with g: RELEASE(g) when was, else UNCLAIMED(g, id); without
 * g and not was: remove id from B.pending. *was receives was.
 */
int emq_job_release(emq_store *st, const char *q, const char *id, int *was);

/** LINK(id) (link.h) for complete and retry, with GATE-ID(parent)'s
 *  refusal as the handle's message. */
struct emq_link;
int emq_job_link(emq_db *db, emq_store *st, const char *q, const char *id,
                 struct emq_link *l);

/**
 * T1.5 complete with an explicit result `r` (NULL with rlen 0: the job's
 * own id; NULL with rlen > 0: EMQ_EINVAL) — the value recorded in the
 * parent's `processed` or carried by the COMPLETE outbox entry.
 * emq_complete() is this with r = NULL; emq_complete_result() (public) is
 * this function.
 */
int emq_complete_r(emq_db *db, const char *q, const char *id, int64_t token,
                   const void *r, size_t rlen);

/** Fill `job` from a claim triple [id, payload|nil, attempts] (the
 *  payload's memory moves from the reply into the job). EMQ_OK, or
 *  EMQ_ECORRUPT when the id is not 14 bytes. */
struct emq_reply;
int emq_job_from_reply(emq_job *job, struct emq_reply *t);

/**
 * The claim of one popped member `m` (T1.4 steps 3-6, shared by the lane
 * claims T3.2-T3.4): attempts + 1, state active, B.active at `deadline`,
 * and [id, payload (nil if absent), attempts] appended to the array `arr`.
 * A member that is not 14 bytes is EMQ_ECORRUPT (nothing written).
 */
int emq_job_take(emq_db *db, emq_store *st, const char *q, const emq_buf *m,
                 double deadline, struct emq_reply *arr);

/** A list of members collected from a zset read before a loop writes
 *  (sweep.c): emq_idlist_cb is the emq_member_cb that appends to it. */
typedef struct emq_idlist {
    emq_buf *v;
    size_t n, cap;
} emq_idlist;
int emq_idlist_cb(void *ctx, const unsigned char *m, size_t mlen, double s);
void emq_idlist_free(emq_idlist *ms);

#endif /* EMQ_JOBS_H */
