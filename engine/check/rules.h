/*
 * rules.h — the invariants of an EchoMQ keyspace, one rule set shared by
 * the checker (check.c: the whole file) and the import (import.c: the
 * queues an import wrote, before it commits).
 *
 * A judge reads keys through the store of an open transaction and reports
 * each finding to a callback: severity (EMQ_CHECK_VIOLATION or
 * EMQ_CHECK_NOTE), a stable code ("score", "member", "state-set", ...), the
 * key's raw bytes and one sentence.
 */
#ifndef EMQ_RULES_H
#define EMQ_RULES_H

#include <stdarg.h>
#include <stddef.h>
#include "store.h"

/** A live key to judge (the name is owned by the list holding it). */
typedef struct emq_rkey {
    unsigned char *name;
    size_t len;
    int type;           /* enum emq_type */
} emq_rkey;

/** A growable list of keys, filled by emq_rkeys_scan. */
typedef struct emq_rkeys {
    emq_rkey *k;
    size_t n, cap;
} emq_rkeys;

/** Append every live key starting with `prefix` (plen may be 0), in name
 *  order. EMQ_OK, EMQ_ENOMEM or a store failure. */
int emq_rkeys_scan(emq_store *st, const void *prefix, size_t plen,
                   emq_rkeys *l);
void emq_rkeys_free(emq_rkeys *l);

typedef void (*emq_rule_fn)(void *ctx, int severity, const char *code,
                            const void *key, size_t klen, const char *msg);

/** Format a finding (printf style) and hand it to `fn`. */
void emq_rule_vreport(emq_rule_fn fn, void *ctx, int sev, const char *code,
                      const void *key, size_t klen, const char *fmt,
                      va_list ap);

typedef struct emq_judge emq_judge;

int emq_judge_new(emq_store *st, emq_rule_fn fn, void *ctx, emq_judge **out);
void emq_judge_free(emq_judge *j);
/**
 * Judge `n` keys sorted by name: the keys of a queue must all be present
 * (the cross-key rules see the queue's whole range). Returns 0, or a
 * negative code when a read failed for another reason than damage
 * (EMQ_ENOMEM, EMQ_EBUSY, EMQ_EIO...).
 */
int emq_judge_keys(emq_judge *j, const emq_rkey *keys, size_t n);
/** The whole file was judged: report a missing {emq}:version (the checker;
 *  an import judges queues only). */
void emq_judge_file_done(emq_judge *j);

/** Printable bytes: ASCII as is, others as \xNN, "..." when cut; out is
 *  NUL-terminated within cap. */
void emq_show_bytes(char *out, size_t cap, const void *p, size_t n);

#endif /* EMQ_RULES_H */
