/*
 * platform_posix.c — platform.h with POSIX.1-2008 alone (configure
 * --enable-portable): for macOS, the BSDs, and any system without futexes
 * or open-file-description locks. Compiled with _POSIX_C_SOURCE only, so a
 * call outside POSIX does not build.
 *
 * Waiting: a waiter polls the word, sleeping 50 µs, then twice as long
 * each time up to EMQ_PLAT_POLL_MAX_US (2 ms), until the word moves or its
 * timeout; a wake is a no-op (the waker already stored the new value).
 * Chosen over a pipe or FIFO per waiter because it needs no file, no
 * descriptor and no registry that a killed process would leave behind, it
 * is async-signal-safe on both sides, and it cannot lose a wake-up (the
 * waiter reads the word itself). Its price: a wake-up after a long wait
 * lands up to 2 ms late (BENCHMARKS.md, "Portable build"), and an idle
 * waiter wakes up to 500 times a second (a load and a nanosleep each).
 *
 * Locks: POSIX record locks (F_SETLK) belong to the process, and closing
 * any descriptor of a file drops every record lock the process holds on
 * it. So this file keeps, per file (device and inode) a process has locks
 * open on, one entry: the bytes each open (emq_plock) holds, and the
 * descriptors of the opens that closed while others still had the file
 * open (closed with the entry, when its last open closes). The process's
 * record lock on a byte is the strongest lock any of its opens holds
 * there; a conflict between two opens of this process is decided in the
 * table, one with another process by the kernel. One mutex guards the
 * table; no call under it blocks (F_SETLK and F_GETLK never wait). As with
 * OFD locks, the kernel drops the locks of a process that dies.
 */
#undef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "store.h"
#include "notify.h"
#include "platform.h"

const char *emq_plat_name(void) { return "posix"; }

int emq_plat_cpu(void) { return 0; } /* POSIX cannot tell */

void emq_plat_yield(void) { sched_yield(); }

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void emq_plat_wait(_Atomic uint32_t *w, uint32_t seen, int64_t timeout_ms,
                   int shared)
{
    int64_t end = 0, now;
    long pause_us = 50;
    (void)shared;
    if (atomic_load(w) != seen || timeout_ms == 0) return;
    if (timeout_ms > 0) {
        /* The same bound as the futex's timespec (a 32-bit time_t holds
         * 2^31 s), and never more than 2^31 s here, so the deadline in µs
         * cannot overflow (timeout_ms * 1000 did past 292,000 years: a
         * negative deadline, a wait that returned at once and a caller
         * that spun). A longer wait ends there; the caller looks again. */
        struct timespec t;
        int64_t sec;
        emq_notify_timespec(timeout_ms, &t);
        sec = (int64_t)t.tv_sec < INT32_MAX ? (int64_t)t.tv_sec : INT32_MAX;
        end = mono_us() + sec * 1000000 + t.tv_nsec / 1000;
    }
    while (atomic_load(w) == seen) {
        struct timespec ts;
        long us = pause_us;
        if (timeout_ms > 0) {
            now = mono_us();
            if (now >= end) return;
            if (end - now < us) us = (long)(end - now);
        }
        ts.tv_sec = 0;
        ts.tv_nsec = us * 1000L;
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
            return; /* a signal: the caller looks again */
        if (pause_us < EMQ_PLAT_POLL_MAX_US)
            pause_us = pause_us * 2 < EMQ_PLAT_POLL_MAX_US
                           ? pause_us * 2
                           : EMQ_PLAT_POLL_MAX_US;
    }
}

void emq_plat_wake(_Atomic uint32_t *w, int shared)
{
    (void)w;
    (void)shared;
}

void emq_plat_wait_bits(_Atomic uint32_t *w, uint32_t seen,
                        int64_t timeout_ms, uint32_t bits)
{
    (void)bits;
    emq_plat_wait(w, seen, timeout_ms, 1);
}

void emq_plat_wake_bits(_Atomic uint32_t *w, uint32_t bits)
{
    (void)bits;
    emq_plat_wake(w, 1);
}

/* ------------------------------------------------------------ byte locks */

typedef struct hold {
    const emq_plock *by;
    int64_t at;
    int type;
} hold;

typedef struct entry {
    struct entry *next;
    dev_t dev;
    ino_t ino;
    int lockfd;         /* the descriptor the record locks are set through */
    int opens;          /* live emq_plocks on this file                   */
    hold *holds;
    size_t nholds, capholds;
    int *parked;        /* descriptors of closed opens, closed with us     */
    size_t nparked, capparked;
} entry;

struct emq_plock {
    int fd;
    entry *e;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry *files;

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    void *q;
    size_t c;
    if (n < *cap) return 0;
    c = *cap ? *cap * 2 : 8;
    if ((q = emq_mem_realloc(*p, c * size)) == NULL) return ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

int emq_plock_open(int fd, emq_plock **out)
{
    struct stat sb;
    emq_plock *l;
    entry *e;
    *out = NULL;
    if (fstat(fd, &sb) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    if ((l = emq_mem_calloc(1, sizeof *l)) == NULL) {
        close(fd);
        return ENOMEM;
    }
    l->fd = fd;
    pthread_mutex_lock(&mu);
    for (e = files; e; e = e->next)
        if (e->dev == sb.st_dev && e->ino == sb.st_ino) break;
    if (e == NULL) {
        if ((e = emq_mem_calloc(1, sizeof *e)) == NULL) {
            pthread_mutex_unlock(&mu);
            emq_mem_free(l);
            close(fd);
            return ENOMEM;
        }
        e->dev = sb.st_dev;
        e->ino = sb.st_ino;
        e->lockfd = fd;
        e->next = files;
        files = e;
    }
    e->opens++;
    l->e = e;
    pthread_mutex_unlock(&mu);
    *out = l;
    return 0;
}

int emq_plock_fd(const emq_plock *l) { return l->fd; }

static int rec(int fd, int cmd, short type, int64_t start, int64_t len,
               struct flock *fl)
{
    int rc;
    memset(fl, 0, sizeof *fl);
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = (off_t)start;
    fl->l_len = (off_t)len;
    do
        rc = fcntl(fd, cmd, fl);
    while (rc != 0 && errno == EINTR);
    return rc;
}

static int set_process(entry *e, int64_t at, short type)
{
    struct flock fl;
    if (rec(e->lockfd, F_SETLK, type, at, 1, &fl) == 0) return 0;
    return errno == EACCES ? EAGAIN : errno;
}

int emq_plock_set(emq_plock *l, int64_t at, int type)
{
    entry *e = l->e;
    hold *mine = NULL;
    size_t i;
    int others = 0, other_wr = 0, rc = 0;
    pthread_mutex_lock(&mu);
    for (i = 0; i < e->nholds; i++) {
        hold *h = &e->holds[i];
        if (h->at != at) continue;
        if (h->by == l)
            mine = h;
        else {
            others++;
            other_wr |= h->type == EMQ_PLOCK_WR;
        }
    }
    if (type == EMQ_PLOCK_UN) {
        if (mine) {
            /* Another open still holding the byte holds it shared (an
             * exclusive hold excludes ours): the process keeps its lock. */
            if (others == 0) rc = set_process(e, at, F_UNLCK);
            else if (mine->type == EMQ_PLOCK_WR)
                rc = set_process(e, at, F_RDLCK);
            *mine = e->holds[--e->nholds];
        }
        goto out;
    }
    if (type == EMQ_PLOCK_WR ? others > 0 : other_wr) {
        rc = EAGAIN; /* another open of this process */
        goto out;
    }
    if (mine && mine->type == type) goto out;
    /* The process's lock: exclusive for WR; for RD, shared unless another
     * open already holds it shared (then it is already). */
    if (type == EMQ_PLOCK_WR || others == 0)
        rc = set_process(e, at, type == EMQ_PLOCK_WR ? F_WRLCK : F_RDLCK);
    if (rc != 0) goto out;
    if (mine == NULL) {
        if ((rc = grow((void **)&e->holds, &e->capholds, e->nholds,
                       sizeof *e->holds)) != 0) {
            if (others == 0) (void)set_process(e, at, F_UNLCK);
            goto out;
        }
        mine = &e->holds[e->nholds++];
        mine->by = l;
        mine->at = at;
    }
    mine->type = type;
out:
    pthread_mutex_unlock(&mu);
    return rc;
}

int emq_plock_others(emq_plock *l, int64_t start, int64_t len)
{
    entry *e = l->e;
    struct flock fl;
    size_t i;
    int rc = 0;
    pthread_mutex_lock(&mu);
    for (i = 0; i < e->nholds && !rc; i++)
        rc = e->holds[i].by != l && e->holds[i].at >= start &&
             e->holds[i].at < start + len;
    /* Another process's: F_GETLK never reports this process's own. */
    if (!rc)
        rc = rec(e->lockfd, F_GETLK, F_WRLCK, start, len, &fl) != 0
                 ? -1
                 : fl.l_type != F_UNLCK;
    pthread_mutex_unlock(&mu);
    return rc;
}

void emq_plock_close(emq_plock *l)
{
    entry *e, **pe;
    size_t i;
    if (l == NULL) return;
    e = l->e;
    pthread_mutex_lock(&mu);
    for (i = e->nholds; i-- > 0;) {
        if (e->holds[i].by != l) continue;
        int alone = 1;
        for (size_t j = 0; j < e->nholds; j++)
            if (j != i && e->holds[j].at == e->holds[i].at) alone = 0;
        if (alone) (void)set_process(e, e->holds[i].at, F_UNLCK);
        e->holds[i] = e->holds[--e->nholds];
    }
    if (--e->opens > 0) {
        /* Closing it now would drop the locks the other opens hold: it is
         * parked until the last one closes. Without room to park it, it
         * stays open (a descriptor lost, never a lock). */
        if (grow((void **)&e->parked, &e->capparked, e->nparked,
                 sizeof *e->parked) == 0)
            e->parked[e->nparked++] = l->fd;
    } else {
        for (pe = &files; *pe != e; pe = &(*pe)->next) {}
        *pe = e->next;
        for (i = 0; i < e->nparked; i++) close(e->parked[i]);
        close(l->fd);
        emq_mem_free(e->parked);
        emq_mem_free(e->holds);
        emq_mem_free(e);
    }
    pthread_mutex_unlock(&mu);
    emq_mem_free(l);
}
