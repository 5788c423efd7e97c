/*
 * groups.h — the shared group (fair-lane) definitions of PROTOCOL.md §6.0,
 * as store operations inside an open transaction.
 *
 * Owns: lane(g), GACT, WAKE, OFFER, RELEASE, UNCLAIMED, DERING, the reads
 * of B.glimit and B.gweight, and the return of a job to its lane. They are
 * used by the Tier 1 transitions that have group paths (complete, retry,
 * promote, reap) and by the Tier 3 lane verbs. A group id is whatever bytes
 * the row's `group` field holds (the host gates ids it writes, not ids it
 * reads), so every helper takes (pointer, length).
 */
#ifndef EMQ_GROUPS_H
#define EMQ_GROUPS_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

/** GACT(g): integer of B.gactive[g], 0 when absent. */
int emq_g_gact(emq_store *st, const char *q, const void *g, size_t glen,
               int64_t *act);
/** *is = 1 when g is a member of B.paused. */
int emq_g_paused(emq_store *st, const char *q, const void *g, size_t glen,
                 int *is);
/** Card of lane(g) into *n. */
int emq_g_depth(emq_store *st, const char *q, const void *g, size_t glen,
                int64_t *n);
/** *busy = card(lane(g)) > 0, without counting the lane. */
int emq_g_busy(emq_store *st, const char *q, const void *g, size_t glen,
               int *busy);
/** WAKE: push-left "1" onto B.wake, trim it to indices 0..63. */
int emq_g_wake(emq_store *st, const char *q);
/** OFFER(g, act): ring push + WAKE when below the limit and not on the ring. */
int emq_g_offer(emq_store *st, const char *q, const void *g, size_t glen,
                int64_t act);
/** RELEASE(g): gactive[g] -= 1 (field deleted at <= 0); offer if the lane
 *  has work and g is not paused. */
int emq_g_release(emq_store *st, const char *q, const void *g, size_t glen);
/** UNCLAIMED(g, id): remove id from lane(g); an emptied lane leaves the ring. */
int emq_g_unclaimed(emq_store *st, const char *q, const void *g, size_t glen,
                    const void *id, size_t idlen);
/** DERING(g, act): take g off the ring at its ceiling or with an empty lane. */
int emq_g_dering(emq_store *st, const char *q, const void *g, size_t glen,
                 int64_t act);
/** Remove every occurrence of g from B.ring. */
int emq_g_unring(emq_store *st, const char *q, const void *g, size_t glen);
/** B.glimit[g] as Lua's tonumber reads it: *has = 0 when absent; a value
 *  that is not a number is EMQ_EPROTO. */
int emq_g_limit(emq_store *st, const char *q, const void *g, size_t glen,
                int *has, double *lim);
/** B.gweight[g] as T3.3 reads it: 1 when absent, not a number or < 1;
 *  otherwise its integer part. */
int emq_g_weight(emq_store *st, const char *q, const void *g, size_t glen,
                 int64_t *w);
/**
 * Return job `id` to lane(g) (T1.7 promote, T1.8 reap, T3.11 reap_group):
 * with `lapsed` (a lease that ran out) act = gactive[g] - 1 first (the
 * field deleted at <= 0), else act = GACT(g); add id to lane(g) at 0; then
 * OFFER(g, act) unless g is paused. The row is not touched.
 */
int emq_g_requeue(emq_store *st, const char *q, const void *g, size_t glen,
                  const void *id, size_t idlen, int lapsed);
/** gactive[g] += by; the field is deleted when the result is <= 0. The
 *  result goes to *act (may be NULL). */
int emq_g_charge(emq_store *st, const char *q, const void *g, size_t glen,
                 int64_t by, int64_t *act);

#endif /* EMQ_GROUPS_H */
