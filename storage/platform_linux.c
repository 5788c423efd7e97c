/*
 * platform_linux.c — platform.h on Linux: futexes and open-file-description
 * locks.
 *
 * Why a futex: one FUTEX_WAKE reaches every waiter of a word in every
 * process (on a MAP_SHARED file mapping the futex is keyed by the file and
 * offset; on private memory FUTEX_PRIVATE_FLAG keys it by the address), a
 * waiter blocks in the kernel with no timer of its own, and the kernel
 * checks the word and sleeps atomically (FUTEX_WAIT returns at once when
 * the word moved), so a wake between a waiter's look and its sleep is
 * never lost.
 *
 * Why OFD locks: they belong to the open file description, so two handles
 * of one process conflict like two processes do, closing one handle's
 * descriptor releases only its own locks, and the kernel drops every lock
 * of a process that dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "store.h"
#include "notify.h"
#include "platform.h"

const char *emq_plat_name(void) { return "linux"; }

int emq_plat_cpu(void)
{
    int c = sched_getcpu(); /* the vDSO: no system call */
    return c < 0 ? 0 : c + 1;
}

void emq_plat_yield(void) { sched_yield(); }

void emq_plat_wait(_Atomic uint32_t *w, uint32_t seen, int64_t timeout_ms,
                   int shared)
{
    struct timespec ts, *tp = NULL;
    if (atomic_load(w) != seen || timeout_ms == 0) return;
    if (timeout_ms > 0) {
        emq_notify_timespec(timeout_ms, &ts); /* a 32-bit time_t: clamped */
        tp = &ts;
    }
    /* EAGAIN: it moved; EINTR, ETIMEDOUT: the caller looks again. */
    syscall(SYS_futex, (uint32_t *)(void *)w,
            shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, seen, tp, NULL, 0);
}

void emq_plat_wake(_Atomic uint32_t *w, int shared)
{
    syscall(SYS_futex, (uint32_t *)(void *)w,
            shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
            0);
}

void emq_plat_wait_bits(_Atomic uint32_t *w, uint32_t seen,
                        int64_t timeout_ms, uint32_t bits)
{
    struct timespec ts, now, *tp = NULL;
    if (atomic_load(w) != seen || timeout_ms == 0 || bits == 0) return;
    if (timeout_ms > 0) {
        /* FUTEX_WAIT_BITSET's timeout is an instant of CLOCK_MONOTONIC */
        emq_notify_timespec(timeout_ms, &ts);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (ts.tv_sec > (time_t)INT32_MAX - now.tv_sec) {
            ts.tv_sec = (time_t)INT32_MAX;
        } else {
            ts.tv_sec += now.tv_sec;
            ts.tv_nsec += now.tv_nsec;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
        }
        tp = &ts;
    }
    syscall(SYS_futex, (uint32_t *)(void *)w, FUTEX_WAIT_BITSET, seen, tp,
            NULL, bits);
}

void emq_plat_wake_bits(_Atomic uint32_t *w, uint32_t bits)
{
    syscall(SYS_futex, (uint32_t *)(void *)w, FUTEX_WAKE_BITSET, INT_MAX,
            NULL, NULL, bits);
}

struct emq_plock {
    int fd;
};

int emq_plock_open(int fd, emq_plock **out)
{
    emq_plock *l = emq_mem_calloc(1, sizeof *l);
    *out = NULL;
    if (l == NULL) {
        close(fd);
        return ENOMEM;
    }
    l->fd = fd;
    *out = l;
    return 0;
}

int emq_plock_fd(const emq_plock *l) { return l->fd; }

static int ofd(int fd, int cmd, short type, int64_t start, int64_t len,
               struct flock *fl)
{
    int rc;
    memset(fl, 0, sizeof *fl);
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = (off_t)start;
    fl->l_len = (off_t)len;
    fl->l_pid = 0; /* required by the OFD commands */
    do
        rc = fcntl(fd, cmd, fl);
    while (rc != 0 && errno == EINTR);
    return rc;
}

int emq_plock_set(emq_plock *l, int64_t at, int type)
{
    struct flock fl;
    short t = type == EMQ_PLOCK_WR   ? F_WRLCK
              : type == EMQ_PLOCK_RD ? F_RDLCK
                                     : F_UNLCK;
    if (ofd(l->fd, F_OFD_SETLK, t, at, 1, &fl) == 0) return 0;
    return errno == EACCES ? EAGAIN : errno;
}

int emq_plock_others(emq_plock *l, int64_t start, int64_t len)
{
    struct flock fl;
    /* This open's own locks never show as a conflict. */
    if (ofd(l->fd, F_OFD_GETLK, F_WRLCK, start, len, &fl) != 0) return -1;
    return fl.l_type != F_UNLCK;
}

void emq_plock_close(emq_plock *l)
{
    if (l == NULL) return;
    close(l->fd);
    emq_mem_free(l);
}
