/*
 * link.h — a row's flow link (PROTOCOL.md §6.0 LINK) and the outbox entries
 * and re-emit of §6.4 that complete and retry need.
 *
 * Owns: reading `parent`, `parent_queue`, `parent_policy` of J(id) inside
 * the caller's transaction and classifying them none / same / cross; the
 * byte layout of COMPLETE and FAIL outbox entries (T4.9), building and
 * parsing them; REEMIT (T4.14).
 */
#ifndef EMQ_LINK_H
#define EMQ_LINK_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

enum emq_link_kind { EMQ_LINK_NONE = 0, EMQ_LINK_SAME, EMQ_LINK_CROSS };

typedef struct emq_link {
    int kind;          /* enum emq_link_kind                          */
    emq_buf parent;    /* the parent's id (bytes as stored)            */
    emq_buf pqueue;    /* parent_queue (cross only)                    */
    int policy_id;     /* 1: policy `id`; 0: `fp` (absent or other)   */
} emq_link;

/**
 * LINK(id) of J(id) in queue q. For `same` the parent must be a valid
 * branded id (GATE-ID): otherwise EMQ_EID. Free with emq_link_free.
 */
int emq_link_read(emq_store *st, const char *q, const void *id, size_t idlen,
                  emq_link *l);
void emq_link_free(emq_link *l);

/** COMPLETE entry: parent_queue NUL parent NUL child NUL result. */
int emq_outbox_complete(emq_buf *b, const void *pq, size_t pql,
                        const void *parent, size_t pl, const void *child,
                        size_t cl, const void *r, size_t rl);
/** FAIL entry: NUL fail NUL parent_queue NUL parent NUL child NUL policy NUL
 *  error. */
int emq_outbox_fail(emq_buf *b, const void *pq, size_t pql,
                    const void *parent, size_t pl, const void *child,
                    size_t cl, int policy_id, const void *err, size_t el);

/** A parsed outbox entry: views into the entry's bytes. */
typedef struct emq_outbox_entry {
    int fail;               /* 1: a FAIL entry; 0: a COMPLETE entry      */
    emq_bytes pq, parent, child;
    emq_bytes policy;       /* FAIL only                                 */
    emq_bytes value;        /* COMPLETE: the result; FAIL: the error     */
} emq_outbox_entry;

/**
 * Parse an outbox entry (T4.9): a first byte NUL is a FAIL entry (after it
 * exactly five NUL-terminated fields, the first of which must be `fail`;
 * the rest is the error, any bytes), anything else a COMPLETE entry (three
 * NUL-terminated fields; the rest is the result). Returns 1, or 0 for a
 * malformed entry (fewer separators, a wrong tag).
 */
int emq_outbox_parse(const void *e, size_t n, emq_outbox_entry *out);

/**
 * Would DELIVER (T4.10) take this entry: it parses, its parent is a JOB id
 * (GATE-ID) and its parent queue a valid name (GATE-Q)? Returns 1, or 0 with
 * *why (may be NULL) saying what is wrong. The sweep sets aside, and import
 * and check refuse, the entries it does not take.
 */
int emq_outbox_deliverable(const void *e, size_t n, const char **why);

/**
 * REEMIT(nq, node, error) (T4.14): read the node's link in nq; without a
 * parent nothing happens (*outlen = -1); otherwise push-right the FAIL
 * entry (pq, parent, node, policy(node), error) onto emq:{nq}:flow:outbox
 * and store the outbox's new length in *outlen (may be NULL).
 */
int emq_outbox_reemit(emq_store *st, const char *nq, const void *node,
                      size_t nlen, const void *err, size_t elen,
                      int64_t *outlen);

#endif /* EMQ_LINK_H */
