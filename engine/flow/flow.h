/*
 * flow.h — flows (PROTOCOL.md §6.4), internal: the store writes of the
 * Tier 4 transitions, shared by their registry bodies (flow.c, fanin.c)
 * and by the procedures that fold several of them into one transaction
 * (flowproc.c), and the procedures' test hook.
 *
 * Rules: every helper runs inside the caller's open transaction and never
 * checks KIND (the caller does, before its first write); ids are valid
 * 14-byte branded ids, NUL-terminated; queues are gated names.
 */
#ifndef EMQ_FLOW_H
#define EMQ_FLOW_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"

/** T4.2 steps 2-3: J(parent) = {state: awaiting_children, attempts: 0,
 *  payload} (field-wise), J(parent).dependencies = n. */
int emq_fl_hold(emq_store *st, const char *q, const char *parent,
                const void *payload, size_t plen, int64_t n);

/** T4.3 steps 2-3 on queue cq: J(child) = {state: pending, attempts: 0,
 *  payload, parent[, parent_queue: pq]} (pq NULL: none), child into
 *  emq:{cq}:pending at 0. */
int emq_fl_child(emq_store *st, const char *cq, const char *child,
                 const void *payload, size_t plen, const char *parent,
                 const char *pq);

/** HSET of `n` field/value pairs on J(id) in q; *added = fields created. */
int emq_fl_fields(emq_store *st, const char *q, const char *id,
                  const emq_bytes *fv, size_t n, int *added);

/** The policy words of parent_policy (index 0 fp, 1 id). */
#define EMQ_FL_POLICY_WORDS "fp|id"
/** "fp" or "id" for a policy index. */
const char *emq_fl_policy(int id_policy);

/** T4.11 step 1 on the parent's queue pq. */
int emq_fl_deliver(emq_store *st, const char *pq, const char *parent,
                   const void *child, size_t cl, const void *r, size_t rl);
/** T4.12 steps 1-2 on the parent's queue pq (`policy` "fp": the fail arm,
 *  any other bytes: the ignore arm). */
int emq_fl_fail_deliver(emq_store *st, const char *pq, const char *parent,
                        const void *child, size_t cl, const void *err,
                        size_t el, const void *policy, size_t pl);
/** *dead = 1 when J(id) in q has `state` = `dead`. */
int emq_fl_is_dead(emq_store *st, const char *q, const char *id, int *dead);

/*
 * The procedures' test hook (tests/crash_flows.c): when set, called in the
 * running process after each transaction a flow add commits (`step` = the
 * number of its steps committed so far) and, inside the one transaction of
 * a delivery pass, before each entry is delivered (`step` = the entries
 * delivered so far). A hook that ends the process there is a crash at that
 * point. Process-wide; NULL removes it.
 */
typedef void (*emq_proc_hook_fn)(void *ctx, const char *proc, int64_t step);
void emq_proc_set_hook(emq_proc_hook_fn fn, void *ctx);
/** Call the hook, if any. */
void emq_proc_hook(const char *proc, int64_t step);

#endif /* EMQ_FLOW_H */
