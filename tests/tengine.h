/*
 * tengine.h — shared fixtures of the engine suites (test_queue.c,
 * test_lane.c, test_handle.c, test_model.c): an injectable test clock and
 * small typed reads of the keyspace through storage/store.h.
 */
#ifndef EMQ_TEST_TENGINE_H
#define EMQ_TEST_TENGINE_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"
#include "store.h"

/** 2026-01-01T00:00:00Z, the golden traces' start. */
#define T0 INT64_C(1767225600000)

typedef struct tclock {
    int64_t now;
    int reads;
} tclock;

int64_t tclock_fn(void *ctx);

/* A fresh directory (rel_mkdtemp) in `dir`, and `path` = dir/q.db. */
void tdir_make(char *dir, size_t dlen, const char *prefix, char *path,
               size_t plen);
/* Remove a tdir_make() directory and everything in it. */
void tdir_remove(const char *dir);
/** Open ":memory:" with the test clock at T0 (fails the test on error). */
emq_db *topen(tclock *c);

/** 1 when `key` exists. */
int tk_exists(emq_db *db, const char *key);
/** Type of `key` (EMQ_T_*). */
int tk_type(emq_db *db, const char *key);
/** The value of hash field `f` of `key`, as a malloc'd C string, or NULL. */
char *tk_hget(emq_db *db, const char *key, const char *f);
/** The number of fields of hash `key`. */
int64_t tk_hlen(emq_db *db, const char *key);
/** Card of zset `key`. */
int64_t tk_zcard(emq_db *db, const char *key);
/** Score of member (14-byte id or C string) in zset `key`; 1 if present. */
int tk_zscore(emq_db *db, const char *key, const char *m, double *s);
/** List `key` head to tail, joined by ',' (malloc'd); "" when absent. */
char *tk_list(emq_db *db, const char *key);
/** String value of `key` (malloc'd) or NULL. */
char *tk_str(emq_db *db, const char *key);
/** Run raw store writes: field set / zadd / set-add / del, in one tx. */
void tk_hset(emq_db *db, const char *key, const char *f, const char *v);
void tk_zadd(emq_db *db, const char *key, const char *m, double s);
void tk_sadd(emq_db *db, const char *key, const char *m);
void tk_del(emq_db *db, const char *key);
void tk_set(emq_db *db, const char *key, const char *v);
/** The canonical dump (tests/ksdump.h) of the whole store, malloc'd. */
char *tk_dump(emq_db *db);

#endif /* EMQ_TEST_TENGINE_H */
