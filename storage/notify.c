/*
 * notify.c — the wake file (notify.h) and the store's use of it: writes
 * that match the store's watch rules mark their key's bucket during a
 * transaction, and a successful commit signals every marked bucket (a
 * rollback forgets them).
 *
 * Layout of <db>-emqwake: one 64-byte header (the first 8 bytes are the
 * magic word, which also names the version and the bucket count), then
 * EMQ_NOTIFY_BUCKETS slots of 64 bytes (one cache line each): a 32-bit
 * sequence (the word waiters wait on) and a 32-bit count of waiters. The zeroed file
 * is a valid initial state; the magic word is set by compare-and-swap, so
 * concurrent creators agree. Its blocks are reserved (posix_fallocate)
 * before it is mapped, so no store to the map can fault on a full disk.
 * After the slots, EMQ_NOTIFY_TURN_BYTES for the writers' turn (turn.c;
 * a file of the first layout, without them, is grown: zeros are an empty
 * queue).
 * A slot also holds the count of the waiting claims claiming from its
 * bucket now (emq_notify_claim), and its bucket's lease (a holder token
 * and deadline in one 64-bit word, and the holder's pid): leases are
 * timed, so a holder that is stopped loses its role when its deadline
 * passes (before, an OFD lock held the role for as long as the stopped
 * process lived: issue 27 item 6).
 *
 * Waiting on a sequence word and waking its waiters go through
 * platform.h: a futex on the shared mapping on Linux (one FUTEX_WAKE
 * reaches every waiter of a bucket in every process, and the kernel's
 * check-then-sleep makes a signal between a waiter's look and its sleep
 * impossible to lose), a bounded polling of the word in the portable
 * build (which cannot lose one either: the waiter reads the word itself).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "store_int.h"
#include "notify.h"
#include "platform.h"

/* "EMQW", version 1, log2(buckets) = 10. */
#define MAGIC UINT64_C(0x454d5157000100a0)
#define HEADER 64
#define SLOT 64
#define TURN_AT (HEADER + (size_t)EMQ_NOTIFY_BUCKETS * SLOT)
#define FILE_SIZE (TURN_AT + EMQ_NOTIFY_TURN_BYTES)
#define RETRY_AFTER 1000 /* commits a store skips after a failed open */

_Static_assert(sizeof ((emq_store *)0)->wdirty * 8 == EMQ_NOTIFY_BUCKETS,
               "a dirty bit per bucket");

typedef struct slot {
    _Atomic uint32_t seq;
    _Atomic uint32_t waiters;
    _Atomic uint64_t lease;      /* the bucket's role: holder token << 40 |
                                    deadline (CLOCK_MONOTONIC ms, 40 bits);
                                    0: free                             */
    _Atomic uint32_t lease_pid;  /* the holder's process (death check)   */
    _Atomic uint64_t claimers;   /* waiting claims claiming now: count <<
                                    48 | CLOCK_MONOTONIC ms of the last
                                    change (48 bits); stale past
                                    CLAIMERS_STALE_MS                   */
} slot;

_Static_assert(sizeof(slot) <= SLOT, "a slot fits its 64 bytes");

#define CLAIMERS_MS_MASK ((UINT64_C(1) << 48) - 1)
#define CLAIMERS_STALE_MS 100

#define LEASE_MS_BITS 40
#define LEASE_MS_MASK ((UINT64_C(1) << LEASE_MS_BITS) - 1)

struct emq_notify {
    unsigned char *map;   /* FILE_SIZE bytes                             */
    int fd;               /* -1 for a private region                     */
    int priv;             /* 1: a private (in-memory store) region       */
    uint32_t token;       /* this open's lease token (24 bits, nonzero)  */
    unsigned char held[EMQ_NOTIFY_BUCKETS / 8]; /* leases taken here    */
};

static slot *slot_of(emq_notify *n, uint32_t b)
{
    return (slot *)(void *)(n->map + HEADER +
                            (size_t)(b % EMQ_NOTIFY_BUCKETS) * SLOT);
}

static int nerr(char *err, size_t errlen, int code, const char *what,
                const char *path, int e)
{
    if (err && errlen)
        snprintf(err, errlen, "wake file %s: %s%s%s", path, what,
                 e ? ": " : "", e ? strerror(e) : "");
    return code;
}

static int open_private(emq_notify *n)
{
    n->map = emq_mem_calloc(1, FILE_SIZE);
    if (n->map == NULL) return EMQ_ENOMEM;
    n->fd = -1;
    n->priv = 1;
    *(uint64_t *)(void *)n->map = MAGIC;
    return EMQ_OK;
}

int emq_notify_open(emq_store *st, emq_notify **out, char *err,
                    size_t errlen)
{
    emq_notify *n;
    char p[EMQ_PATH_MAX + 16];
    struct stat sb;
    _Atomic uint64_t *magic;
    uint64_t want = 0;
    int rc, e;

    *out = NULL;
    if ((n = emq_mem_calloc(1, sizeof *n)) == NULL) return EMQ_ENOMEM;
    n->fd = -1;
    if (st->memory) {
        if ((rc = open_private(n)) < 0) goto fail;
        *out = n;
        return EMQ_OK;
    }
    if (st->opts.readonly) {
        rc = nerr(err, errlen, EMQ_EREADONLY, "a read-only handle opens none",
                  st->path, 0);
        goto fail;
    }
    snprintf(p, sizeof p, "%s%s", st->path, EMQ_NOTIFY_SUFFIX);
    if ((rc = emq_store_side_open(st, EMQ_NOTIFY_SUFFIX, 1, &n->fd, err,
                                  errlen)) != EMQ_OK) {
        n->fd = -1;
        goto fail;
    }
    if (fstat(n->fd, &sb) != 0) {
        rc = nerr(err, errlen, EMQ_EIO, "cannot inspect", p, errno);
        goto fail;
    }
    if (sb.st_size > 0) {
        /* Someone else's bytes are refused before anything is written. */
        uint64_t head = 0;
        ssize_t got = pread(n->fd, &head, sizeof head, 0);
        if (got < 0 || (got == (ssize_t)sizeof head && head != 0 &&
                        head != MAGIC) ||
            (got > 0 && got < (ssize_t)sizeof head && head != 0)) {
            rc = nerr(err, errlen, EMQ_ECORRUPT, "not an emqlite wake file",
                      p, 0);
            goto fail;
        }
    }
    /* Every page of the map owns its blocks before it is mapped: a store
     * to a page of a sparse file on a full disk is a SIGBUS, not an error
     * (issue 27). posix_fallocate grows the file when it is short (growing
     * only: concurrent creators agree, the new bytes read as zero, a valid
     * state) and allocates the holes of a file an older emqlite left
     * sparse. A file whose blocks are all there is taken as it is. */
    if ((e = posix_fallocate(n->fd, 0, (off_t)FILE_SIZE)) != 0 &&
        !((size_t)sb.st_size >= FILE_SIZE &&
          (uint64_t)sb.st_blocks * 512 >= FILE_SIZE)) {
        rc = nerr(err, errlen,
                  e == ENOSPC || e == EDQUOT ? EMQ_EFULL : EMQ_EIO,
                  "cannot reserve its blocks", p, e);
        goto fail;
    }
    n->map = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, n->fd,
                  0);
    if (n->map == MAP_FAILED) {
        n->map = NULL;
        rc = nerr(err, errlen, EMQ_ENOMEM, "cannot map", p, errno);
        goto fail;
    }
    magic = (_Atomic uint64_t *)(void *)n->map;
    atomic_compare_exchange_strong(magic, &want, MAGIC);
    if (want != 0 && want != MAGIC) {
        rc = nerr(err, errlen, EMQ_ECORRUPT, "not an emqlite wake file", p,
                  0);
        goto fail;
    }
    *out = n;
    return EMQ_OK;
fail:
    emq_notify_close(n);
    return rc;
}

void emq_notify_close(emq_notify *n)
{
    uint32_t b;
    if (n == NULL) return;
    for (b = 0; n->map && !n->priv && b < EMQ_NOTIFY_BUCKETS; b++)
        if (n->held[b / 8] & (1u << (b % 8))) emq_notify_unlease(n, b);
    if (n->priv)
        emq_mem_free(n->map);
    else if (n->map)
        munmap(n->map, FILE_SIZE);
    if (n->fd >= 0) close(n->fd);
    emq_mem_free(n);
}

void *emq_notify_turn_area(emq_notify *n)
{
    return n == NULL || n->priv ? NULL : n->map + TURN_AT;
}

uint32_t emq_notify_bucket(const void *name, size_t len)
{
    const unsigned char *p = name;
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < len; i++) h = (h ^ p[i]) * 16777619u;
    return h % EMQ_NOTIFY_BUCKETS;
}

uint32_t emq_notify_seq(emq_notify *n, uint32_t b)
{
    return atomic_load(&slot_of(n, b)->seq);
}

void emq_notify_signal(emq_notify *n, uint32_t b)
{
    slot *s;
    if (n == NULL) return;
    s = slot_of(n, b);
    atomic_fetch_add(&s->seq, 1);
    /* Both sides are sequentially consistent: either the waiter saw the
     * new sequence, or we see its count and wake it. */
    if (atomic_load(&s->waiters) != 0)
        emq_plat_wake(&s->seq, !n->priv);
}

/* A 32-bit time_t (armhf's glibc) holds 2^31 s, about 68 years: a longer
 * wait is cut to that (the caller looks again when it ends). A plain cast
 * made a negative tv_sec there, which the futex refused at once (EINVAL),
 * and a waiting claim spun. */
void emq_notify_timespec(int64_t timeout_ms, struct timespec *ts)
{
    int64_t sec = timeout_ms / 1000;
    if (sizeof(time_t) < sizeof(int64_t) && sec > INT32_MAX) {
        ts->tv_sec = (time_t)INT32_MAX;
        ts->tv_nsec = 0;
        return;
    }
    ts->tv_sec = (time_t)sec;
    ts->tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
}

int emq_notify_wait(emq_notify *n, uint32_t b, uint32_t seen,
                    int64_t timeout_ms)
{
    slot *s = slot_of(n, b);
    if (atomic_load(&s->seq) != seen) return 1;
    if (timeout_ms == 0) return 0;
    atomic_fetch_add(&s->waiters, 1);
    if (atomic_load(&s->seq) == seen)
        emq_plat_wait(&s->seq, seen, timeout_ms, !n->priv);
    atomic_fetch_sub(&s->waiters, 1);
    return atomic_load(&s->seq) != seen;
}

/* This open's token: 24 bits, nonzero, distinct between the opens of one
 * process (a counter) and unlikely to meet another process's (the pid and
 * the time mixed in). */
static uint32_t new_token(const emq_notify *n)
{
    static _Atomic uint32_t count;
    struct timespec ts;
    uint64_t x;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    x = (uint64_t)getpid() * UINT64_C(0x9E3779B97F4A7C15) ^
        (uint64_t)ts.tv_nsec * UINT64_C(0xC2B2AE3D27D4EB4F) ^
        (uint64_t)(uintptr_t)n ^ (uint64_t)atomic_fetch_add(&count, 1) << 7;
    x ^= x >> 29;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 32;
    return (uint32_t)(x & 0xFFFFFF) ? (uint32_t)(x & 0xFFFFFF) : 1;
}

/* 1 when process `pid` is known to be gone. */
static int pid_gone(uint32_t pid)
{
    return pid != 0 && (pid_t)pid != getpid() && kill((pid_t)pid, 0) != 0 &&
           errno == ESRCH;
}

int emq_notify_claim(emq_notify *n, uint32_t b, int64_t want,
                     int64_t now_ms)
{
    _Atomic uint64_t *c;
    uint64_t v, count;
    if (n == NULL || n->priv || want <= 0) return 1;
    c = &slot_of(n, b)->claimers;
    for (;;) {
        v = atomic_load(c);
        count = v >> 48;
        /* a count nobody moved for CLAIMERS_STALE_MS was left by claimers
         * that died or stopped before they ended: it counts as none */
        if (now_ms - (int64_t)(v & CLAIMERS_MS_MASK) > CLAIMERS_STALE_MS)
            count = 0;
        if ((int64_t)count >= want) return 0;
        if (count >= 0xFFFF) return 1; /* saturated: claim uncounted */
        if (atomic_compare_exchange_weak(
                c, &v, (count + 1) << 48 |
                           ((uint64_t)now_ms & CLAIMERS_MS_MASK)))
            return 2;
    }
}

void emq_notify_unclaim(emq_notify *n, uint32_t b)
{
    _Atomic uint64_t *c;
    uint64_t v;
    if (n == NULL || n->priv) return;
    c = &slot_of(n, b)->claimers;
    v = atomic_load(c);
    while (v >> 48 != 0 &&
           !atomic_compare_exchange_weak(c, &v,
                                         ((v >> 48) - 1) << 48 |
                                             (v & CLAIMERS_MS_MASK)))
        ;
}

int emq_notify_lease(emq_notify *n, uint32_t b, int64_t lease_ms,
                     int64_t now_ms)
{
    slot *s;
    uint64_t w, mine;
    int64_t deadline;
    if (n->priv) return 1; /* a private region has one user */
    if (n->token == 0) n->token = new_token(n);
    s = slot_of(n, b);
    b %= EMQ_NOTIFY_BUCKETS;
    deadline = now_ms + (lease_ms > 0 ? lease_ms : 1);
    mine = (uint64_t)n->token << LEASE_MS_BITS |
           ((uint64_t)deadline & LEASE_MS_MASK);
    for (;;) {
        w = atomic_load(&s->lease);
        if (w != 0 && (uint32_t)(w >> LEASE_MS_BITS) != n->token) {
            /* Another's: it stands until its deadline, unless its process
             * is gone (a holder that died or closed without release). */
            int64_t until = (int64_t)(w & LEASE_MS_MASK);
            uint32_t pid = atomic_load(&s->lease_pid);
            if (until >= now_ms &&
                !(pid_gone(pid) && atomic_load(&s->lease) == w)) {
                n->held[b / 8] &= (unsigned char)~(1u << (b % 8));
                return 0;
            }
        }
        /* Free, lapsed, its holder gone, or already this open's: take or
         * renew it. A holder that was stopped past its deadline and finds
         * another's token here has lost it (above). */
        if (atomic_compare_exchange_weak(&s->lease, &w, mine)) break;
    }
    atomic_store(&s->lease_pid, (uint32_t)getpid());
    n->held[b / 8] |= (unsigned char)(1u << (b % 8));
    return 1;
}

void emq_notify_unlease(emq_notify *n, uint32_t b)
{
    slot *s;
    uint64_t w;
    if (n == NULL || n->priv || n->map == NULL) return;
    s = slot_of(n, b);
    b %= EMQ_NOTIFY_BUCKETS;
    n->held[b / 8] &= (unsigned char)~(1u << (b % 8));
    w = atomic_load(&s->lease);
    if (w != 0 && (uint32_t)(w >> LEASE_MS_BITS) == n->token)
        atomic_compare_exchange_strong(&s->lease, &w, 0);
}

/* ------------------------------------------------------ the store's use */

/* The span after a key's hash tag ("{...}") and the tag itself; 0 when
 * the key has no non-empty tag. */
static int split_tag(const unsigned char *k, size_t n, size_t *tag,
                     size_t *taglen, size_t *rest)
{
    const unsigned char *o = memchr(k, '{', n), *c;
    if (o == NULL) return 0;
    c = memchr(o + 1, '}', n - (size_t)(o + 1 - k));
    if (c == NULL || c == o + 1) return 0;
    *tag = (size_t)(o + 1 - k);
    *taglen = (size_t)(c - o - 1);
    *rest = (size_t)(c + 1 - k);
    return 1;
}

void emq_store_watch(emq_store *st, int event, const void *key, size_t klen)
{
    const emq_watch_rule *r = st->watch;
    const unsigned char *k = key;
    size_t tag, taglen, rest, rl;
    uint32_t b;
    if (r == NULL || !split_tag(k, klen, &tag, &taglen, &rest)) return;
    for (; r->rest; r++) {
        rl = strlen(r->rest);
        if (r->event == event && klen - rest == rl &&
            memcmp(k + rest, r->rest, rl) == 0) {
            b = emq_notify_bucket(k + tag, taglen);
            st->wdirty[b / 64] |= UINT64_C(1) << (b % 64);
            st->wdirty_any = 1;
            return;
        }
    }
}

void emq_store_set_watch(emq_store *st, const emq_watch_rule *rules)
{
    st->watch = rules;
}

int emq_store_notifier(emq_store *st, emq_notify **out)
{
    int rc;
    if (st->notify == NULL) {
        rc = emq_notify_open(st, &st->notify, st->errmsg,
                             sizeof st->errmsg);
        if (rc < 0) {
            st->notify = NULL;
            st->notify_failed = RETRY_AFTER;
            return rc;
        }
    }
    st->notify_failed = 0;
    *out = st->notify;
    return EMQ_OK;
}

/* The index of the lowest set bit of a nonzero word. */
static int lowest_bit(uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(v);
#else
    int i = 0;
    while (!(v & 1)) {
        v >>= 1;
        i++;
    }
    return i;
#endif
}

void emq_store_watch_end(emq_store *st, int committed)
{
    emq_notify *n;
    size_t w;
    int bit;
    if (!st->wdirty_any) return;
    /* A commit signals what it marked; a store that could not open its
     * wake file tries again only every RETRY_AFTER commits. */
    if (committed && st->notify_failed > 0) {
        st->notify_failed--;
        committed = 0;
    }
    if (committed && emq_store_notifier(st, &n) == EMQ_OK) {
        for (w = 0; w < EMQ_NOTIFY_BUCKETS / 64; w++)
            for (uint64_t set = st->wdirty[w]; set; set &= set - 1) {
                bit = lowest_bit(set);
                emq_notify_signal(n, (uint32_t)(w * 64 + (size_t)bit));
            }
    }
    memset(st->wdirty, 0, sizeof st->wdirty);
    st->wdirty_any = 0;
}
