/*
 * stream.h — the stream type of the store: Valkey 8 streams over SQLite
 * (PROTOCOL.md §2.7, §6.5 T5.6).
 *
 * Owns: entries (explicit and generated ids, field lists), the stream's
 * metadata (length, last id, entries-added, max-deleted id), trims (exact,
 * and approximate as D-16 reads it), deletes, consumer groups with their
 * last-delivered id and entries-read counter, consumers, and the pending
 * entries list (PEL) with owners, delivery times and delivery counts; the
 * group reads, acks, claims and autoclaims that move them, and the lag and
 * entries-read estimates Valkey computes. Knows nothing of queues or of the
 * command syntax (engine/stream/xcmd.c parses commands and shapes the replies).
 *
 * Rules: every call runs inside a store transaction (store.h) and uses its
 * clock as Valkey's command time; a stream key holds type EMQ_T_STREAM and,
 * unlike the aggregates, exists with zero entries (§2.7.3) until deleted.
 * Results: EMQ_OK; EMQ_NOTFOUND when the key is absent; EMQ_XNOGROUP when
 * the group is absent; EMQ_EWRONGTYPE; the engine's own error replies as
 * EMQ_ENONMONO (the id is not above the top) or EMQ_EENGINE, with the exact
 * text in emq_store_errmsg(). Every refusal comes before the first write.
 *
 * Schema: the tables (EMQ_XS_DDL) are schema version 4, created by their
 * step of the ladder (storage/schema.def); the key row in kv carries the
 * type and the kid (through kv.c's key-row statements, checksummed when the
 * file's checksums are on), the stream's rows hang off that kid.
 */
#ifndef EMQ_STREAM_H
#define EMQ_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

/** The consumer group named in a call does not exist (positive). */
#define EMQ_XNOGROUP 101

/** The stream tables: schema step 4 of the ladder (schema.c) runs it. */
#define EMQ_XS_DDL                                                          \
    "CREATE TABLE xmeta(kid INTEGER PRIMARY KEY, length INTEGER NOT NULL,"  \
    " last_ms INTEGER NOT NULL, last_seq INTEGER NOT NULL,"                 \
    " added INTEGER NOT NULL, maxdel_ms INTEGER NOT NULL,"                  \
    " maxdel_seq INTEGER NOT NULL);"                                        \
    "CREATE TABLE xentry(kid INTEGER NOT NULL, ms INTEGER NOT NULL,"        \
    " seq INTEGER NOT NULL, fields BLOB NOT NULL,"                          \
    " PRIMARY KEY(kid, ms, seq)) WITHOUT ROWID;"                            \
    "CREATE TABLE xgroup(gid INTEGER PRIMARY KEY, kid INTEGER NOT NULL,"    \
    " name BLOB NOT NULL, last_ms INTEGER NOT NULL,"                        \
    " last_seq INTEGER NOT NULL, entries_read INTEGER);"                    \
    "CREATE UNIQUE INDEX xgroup_name ON xgroup(kid, name);"                 \
    "CREATE TABLE xconsumer(gid INTEGER NOT NULL, name BLOB NOT NULL,"      \
    " seen INTEGER NOT NULL, active INTEGER NOT NULL,"                      \
    " PRIMARY KEY(gid, name)) WITHOUT ROWID;"                               \
    "CREATE TABLE xpel(gid INTEGER NOT NULL, ms INTEGER NOT NULL,"          \
    " seq INTEGER NOT NULL, consumer BLOB NOT NULL, dtime INTEGER NOT NULL,"\
    " dcount INTEGER NOT NULL, PRIMARY KEY(gid, ms, seq)) WITHOUT ROWID;"   \
    "CREATE INDEX xpel_consumer ON xpel(gid, consumer, ms, seq);"

/** A stream entry id: two unsigned 64-bit halves, "<ms>-<seq>". */
typedef struct emq_xid {
    uint64_t ms, seq;
} emq_xid;

/** Longest rendering of an id, "18446744073709551615-18446744073709551615",
 *  plus its NUL. */
#define EMQ_XID_BUF 42

int emq_xid_cmp(emq_xid a, emq_xid b);
/** Render `id` into `buf` (>= EMQ_XID_BUF); returns the length. */
size_t emq_xid_fmt(char *buf, emq_xid id);
/** The next / previous id; -1 (unchanged) at the end of the id space. */
int emq_xid_incr(emq_xid *id);
int emq_xid_decr(emq_xid *id);
/** 1 when `id` is 0-0. */
int emq_xid_zero(emq_xid id);

/** A stream's metadata (XINFO STREAM). `first` is 0-0 when empty. */
typedef struct emq_xmeta {
    uint64_t length, entries_added;
    emq_xid last, max_deleted, first;
} emq_xmeta;

/**
 * One entry: its id and its fields as `nfv` alternating names and values
 * (views valid during the callback). `fv` is NULL for a pending entry whose
 * stream entry is gone (a PEL replay) and for JUSTID claims. A nonzero
 * return stops the walk and is returned.
 */
typedef int (*emq_xentry_cb)(void *ctx, emq_xid id, const emq_bytes *fv,
                             size_t nfv);

/* ---------------------------------------------------------------- keys */

/** The metadata of stream `key`: EMQ_OK, EMQ_NOTFOUND, EMQ_EWRONGTYPE. */
int emq_xs_meta(emq_store *st, const void *key, size_t klen, emq_xmeta *m);

/** XSETID: set the last id, entries-added (< 0: unchanged) and max-deleted
 *  id (NULL or 0-0: unchanged), with Valkey's checks. EMQ_NOTFOUND when
 *  the key is absent. */
int emq_xs_setid(emq_store *st, const void *key, size_t klen, emq_xid last,
                 int64_t entries_added, const emq_xid *max_deleted);

/** Remove every row of the stream with element id `kid` (kv.c calls it
 *  when the key is dropped). */
int emq_xs_drop(emq_store *st, int64_t kid);

/* ------------------------------------------------------------- entries */

enum { EMQ_XTRIM_NONE = 0, EMQ_XTRIM_MAXLEN, EMQ_XTRIM_MINID };

/** A trim: MAXLEN keeps at most `maxlen` entries, MINID removes those below
 *  `minid`. Approximate (`~`) removes only whole leading blocks of 100
 *  entries that the exact trim would remove (D-16), at most `limit` entries
 *  (< 0: 10000, Valkey's default; 0: no limit). */
typedef struct emq_xtrim {
    int how;           /* EMQ_XTRIM_*           */
    int approx;
    uint64_t maxlen;
    emq_xid minid;
    int64_t limit;
} emq_xtrim;

enum { EMQ_XADD_AUTO = 0, EMQ_XADD_EXPLICIT, EMQ_XADD_SEQAUTO };

/** XADD: the id (`*` AUTO, `<ms>-<seq>` EXPLICIT, `<ms>-*` SEQAUTO with
 *  id.ms), NOMKSTREAM, the trim to apply after the append, the fields. */
typedef struct emq_xadd {
    int idmode;
    emq_xid id;
    int nomkstream;
    emq_xtrim trim;
    const emq_bytes *fv;
    size_t nfv;        /* even, >= 2 */
} emq_xadd;

/**
 * Append an entry; *out receives its id. EMQ_NOTFOUND (nothing written)
 * for NOMKSTREAM on an absent key. Errors: "ERR The ID specified in XADD
 * must be greater than 0-0" (EMQ_EENGINE, before the key is looked at),
 * "ERR The ID specified in XADD is equal or smaller than the target stream
 * top item" (EMQ_ENONMONO), "ERR The stream has exhausted the last possible
 * ID, unable to add more items" (EMQ_EENGINE).
 */
int emq_xs_add(emq_store *st, const void *key, size_t klen,
               const emq_xadd *a, emq_xid *out);

/** XTRIM: *removed = the entries removed (0 for an absent key). */
int emq_xs_trim(emq_store *st, const void *key, size_t klen,
                const emq_xtrim *t, int64_t *removed);

/** XDEL of `n` ids: *deleted = how many existed. Each deleted id above
 *  the max-deleted id becomes it. */
int emq_xs_del(emq_store *st, const void *key, size_t klen,
               const emq_xid *ids, size_t n, int64_t *deleted);

/** XRANGE / XREVRANGE over start..end inclusive (rev: from end down to
 *  start), at most `count` entries (0: all). EMQ_NOTFOUND when absent. */
int emq_xs_range(emq_store *st, const void *key, size_t klen, emq_xid start,
                 emq_xid end, int rev, uint64_t count, emq_xentry_cb cb,
                 void *ctx);

/* -------------------------------------------------------------- groups */

/** EMQ_OK when group `g` of stream `key` exists; else EMQ_NOTFOUND (no
 *  key), EMQ_XNOGROUP or EMQ_EWRONGTYPE. */
int emq_xs_group_exists(emq_store *st, const void *key, size_t klen,
                        const void *g, size_t glen);

/** XGROUP CREATE: `id` NULL means `$` (the last id); entries_read < 0 is
 *  unknown. EMQ_NOTFOUND (absent, no mkstream), EMQ_EXISTS (the group
 *  exists: BUSYGROUP), EMQ_OK. */
int emq_xs_group_create(emq_store *st, const void *key, size_t klen,
                        const void *g, size_t glen, const emq_xid *id,
                        int mkstream, int64_t entries_read);
/** XGROUP SETID (`id` NULL: `$`; entries_read < 0: unknown). */
int emq_xs_group_setid(emq_store *st, const void *key, size_t klen,
                       const void *g, size_t glen, const emq_xid *id,
                       int64_t entries_read);
/** XGROUP DESTROY: *removed = 1 when the group existed. */
int emq_xs_group_destroy(emq_store *st, const void *key, size_t klen,
                         const void *g, size_t glen, int *removed);
/** XGROUP CREATECONSUMER: *created = 1 when it was new. */
int emq_xs_consumer_create(emq_store *st, const void *key, size_t klen,
                           const void *g, size_t glen, const void *c,
                           size_t clen, int *created);
/** XGROUP DELCONSUMER: *pending = the PEL entries it owned (dropped). */
int emq_xs_consumer_delete(emq_store *st, const void *key, size_t klen,
                           const void *g, size_t glen, const void *c,
                           size_t clen, int64_t *pending);

/* ---------------------------------------------------------- group reads */

/**
 * XREADGROUP on one stream for consumer `c` of group `g` (the consumer is
 * created if new). `after` NULL is `>`: deliver up to `count` (0: all)
 * entries above the group's last-delivered id, each recorded in the PEL
 * (consumer, now, 1) unless `noack`, advancing last-delivered and
 * entries-read. Otherwise replay the consumer's own PEL above `after`: an
 * entry that exists is re-stamped (now, count + 1), a gone one is reported
 * with fv NULL and left as it was. *served = the entries passed to cb.
 */
int emq_xs_readgroup(emq_store *st, const void *key, size_t klen,
                     const void *g, size_t glen, const void *c, size_t clen,
                     const emq_xid *after, uint64_t count, int noack,
                     emq_xentry_cb cb, void *ctx, int64_t *served);

/** XACK: *acked = the ids removed from the group's PEL (0 without the key
 *  or the group). */
int emq_xs_ack(emq_store *st, const void *key, size_t klen, const void *g,
               size_t glen, const emq_xid *ids, size_t n, int64_t *acked);

/** The summary form of XPENDING. */
typedef struct emq_xpsum {
    uint64_t count;
    emq_xid min, max;  /* valid when count > 0 */
} emq_xpsum;
/** Per consumer of the summary: name and how many entries it holds. */
typedef int (*emq_xowner_cb)(void *ctx, const unsigned char *c, size_t clen,
                             int64_t n);
int emq_xs_pending_summary(emq_store *st, const void *key, size_t klen,
                           const void *g, size_t glen, emq_xpsum *sum,
                           emq_xowner_cb cb, void *ctx);

/** One PEL record: entry id, owner, delivery time (ms) and count. */
typedef int (*emq_xpel_cb)(void *ctx, emq_xid id, const unsigned char *c,
                           size_t clen, int64_t delivered, int64_t count);
/**
 * The extended form of XPENDING: records with start <= id <= end, of
 * consumer `c` only when `c` is not NULL, idle for at least `min_idle` ms
 * when min_idle > 0, at most `count`. The callback's `delivered` is the
 * delivery time; the idle time is now - delivered.
 */
int emq_xs_pending_range(emq_store *st, const void *key, size_t klen,
                         const void *g, size_t glen, emq_xid start,
                         emq_xid end, uint64_t count, const void *c,
                         size_t clen, int64_t min_idle, emq_xpel_cb cb,
                         void *ctx);

/** XCLAIM's options: delivery time (< 0: now), retry count (< 0: count +
 *  1 unless justid), force, justid, and a last id to raise the group's
 *  last-delivered id to. */
typedef struct emq_xclaim {
    int64_t delivery_time;
    int64_t retrycount;
    int force, justid;
    int has_lastid;
    emq_xid lastid;
} emq_xclaim;

/** XCLAIM of `n` ids by consumer `c` (created if new). A claimed entry is
 *  passed to cb (fv NULL with justid); a PEL record whose entry is gone is
 *  dropped silently. */
int emq_xs_claim(emq_store *st, const void *key, size_t klen, const void *g,
                 size_t glen, const void *c, size_t clen, int64_t min_idle,
                 const emq_xid *ids, size_t n, const emq_xclaim *o,
                 emq_xentry_cb cb, void *ctx);

/** A pending record put back as a server listed it (a pull), whether or
 *  not its entry is still in the stream: owner `c` (created if new),
 *  delivery time and count as given; a record of that id is replaced.
 *  Valkey has no command for it (XCLAIM ... FORCE needs the entry). */
int emq_xs_pel_restore(emq_store *st, const void *key, size_t klen,
                       const void *g, size_t glen, const void *c,
                       size_t clen, emq_xid id, int64_t dtime, int64_t count);

/**
 * XAUTOCLAIM: scan the group's PEL from `start` (at most count * 10
 * records): a record whose entry is gone is dropped and passed to
 * `deleted`; one idle for at least min_idle ms goes to `c` (now, count + 1
 * unless justid) and is passed to `claimed`; both spend `count`. *cursor =
 * the first record not scanned, 0-0 at the end.
 */
int emq_xs_autoclaim(emq_store *st, const void *key, size_t klen,
                     const void *g, size_t glen, const void *c, size_t clen,
                     int64_t min_idle, emq_xid start, uint64_t count,
                     int justid, emq_xentry_cb claimed, void *cctx,
                     emq_xentry_cb deleted, void *dctx, emq_xid *cursor);

/* ---------------------------------------------------------------- info */

/** A group as XINFO GROUPS shows it. */
typedef struct emq_xgroup_info {
    const unsigned char *name;
    size_t nlen;
    emq_xid last;           /* last-delivered id                       */
    int64_t entries_read;   /* -1: unknown                             */
    int64_t consumers, pending;
    int lag_known;
    int64_t lag;
} emq_xgroup_info;
typedef int (*emq_xgroup_cb)(void *ctx, const emq_xgroup_info *g);
/** Every group of the stream in name order (memcmp). */
int emq_xs_groups(emq_store *st, const void *key, size_t klen,
                  emq_xgroup_cb cb, void *ctx);

/** A consumer: name, seen time, active time (-1: never), PEL size. */
typedef int (*emq_xconsumer_cb)(void *ctx, const unsigned char *c,
                                size_t clen, int64_t seen, int64_t active,
                                int64_t pending);
/** Every consumer of group `g` in name order. */
int emq_xs_consumers(emq_store *st, const void *key, size_t klen,
                     const void *g, size_t glen, emq_xconsumer_cb cb,
                     void *ctx);

/** The group's PEL in id order (of consumer `c` only when not NULL), at
 *  most `count` records (0: all). */
int emq_xs_pel(emq_store *st, const void *key, size_t klen, const void *g,
               size_t glen, const void *c, size_t clen, uint64_t count,
               emq_xpel_cb cb, void *ctx);

/** 1 when entry `id` exists in the stream (0 when absent or on error:
 *  *rc tells). */
int emq_xs_exists(emq_store *st, const void *key, size_t klen, emq_xid id,
                  int *rc);

#endif /* EMQ_STREAM_H */
