/*
 * platform.h — the little emqlite needs from the system beyond C11 and
 * the POSIX calls every supported system has: waiting on a 32-bit word
 * (between threads of a process, or between processes through a shared
 * file mapping), and locks on single bytes of a side file that belong to
 * an open (a handle), not to a process.
 *
 * Two implementations, one linked (configure --enable-portable picks the
 * second; doc/ARCHITECTURE.md, "Platform"):
 *   platform_linux.c  futexes (FUTEX_WAIT/FUTEX_WAKE on the word, keyed by
 *                     the file and offset for a shared mapping) and
 *                     open-file-description locks (F_OFD_SETLK/GETLK);
 *   platform_posix.c  no futex: a waiter polls the word with a bounded
 *                     backoff (50 µs doubling to EMQ_PLAT_POLL_MAX_US),
 *                     and a wake is a no-op beyond the store the waker
 *                     already made; fcntl record locks (F_SETLK/GETLK),
 *                     which belong to the process, made per open by a
 *                     process-wide table of the bytes each open holds, and
 *                     by keeping every descriptor of a locked file open
 *                     until the last open of that file closes (closing any
 *                     descriptor of a file drops all the process's record
 *                     locks on it).
 *
 * Every call here is bounded: a wait ends by its timeout, a lock call
 * never blocks (held elsewhere: EAGAIN at once; the callers retry within
 * their busy timeout). emq_plat_wake is safe in a signal handler.
 * Handles do not cross fork() (as with SQLite's connections): a child
 * opens its own.
 */
#ifndef EMQ_PLATFORM_H
#define EMQ_PLATFORM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** "linux" or "posix": the implementation this library was built with. */
const char *emq_plat_name(void);

/** The longest pause of the portable wait's polling, in microseconds. */
#define EMQ_PLAT_POLL_MAX_US 2000

/**
 * Wait while `*w` still equals `seen`, at most `timeout_ms` (< 0: no
 * limit; 0: do not wait). `shared`: the word lives in a MAP_SHARED mapping
 * that other processes wait on and wake. Returns when the word moved, when
 * woken (which may be spurious), on a signal, or at the timeout: callers
 * look at the word again.
 */
void emq_plat_wait(_Atomic uint32_t *w, uint32_t seen, int64_t timeout_ms,
                   int shared);

/** Wake every waiter of `w` (after changing it). Async-signal-safe. */
void emq_plat_wake(_Atomic uint32_t *w, int shared);

/**
 * emq_plat_wait and emq_plat_wake on a shared word, for waiters that need
 * not all wake: a waiter names the `bits` it waits for, and a wake reaches
 * only the waiters whose bits meet its own (emq_plat_wake reaches every
 * waiter). The writers' turn wakes the next ticket only, not every writer
 * queued behind it. The portable build polls, and ignores the bits.
 */
void emq_plat_wait_bits(_Atomic uint32_t *w, uint32_t seen,
                        int64_t timeout_ms, uint32_t bits);
void emq_plat_wake_bits(_Atomic uint32_t *w, uint32_t bits);

/** 1 + the CPU this thread runs on now, or 0 when the platform cannot
 *  tell (the portable build): a spinner that shares its CPU with the
 *  writer it waits for yields instead of spinning (turn.c). */
int emq_plat_cpu(void);
/** Give the CPU to another runnable thread (sched_yield). */
void emq_plat_yield(void);

/** A hint inside a spin loop that this CPU waits on another. */
static inline void emq_plat_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
    __asm__ __volatile__("yield");
#endif
}

/* ------------------------------------------------------------ byte locks */

typedef struct emq_plock emq_plock;

enum { EMQ_PLOCK_UN = 0, EMQ_PLOCK_RD = 1, EMQ_PLOCK_WR = 2 };

/**
 * Take ownership of `fd` (an open side file) for byte locks owned by this
 * open. Returns 0 with `*out`, or an errno value (the descriptor is then
 * closed).
 */
int emq_plock_open(int fd, emq_plock **out);

/** The descriptor, for reads and writes (never close it yourself). */
int emq_plock_fd(const emq_plock *l);

/**
 * Set this open's lock on byte `at` to `type` without waiting: shared
 * (RD) locks of several opens coexist, an exclusive (WR) one excludes
 * every other open's lock, in this process or another. Returns 0, EAGAIN
 * when another open's lock conflicts, or another errno value.
 */
int emq_plock_set(emq_plock *l, int64_t at, int type);

/**
 * 1 when an open other than `l` (in any process) holds a lock on a byte of
 * [start, start + len); 0 when none does; -1 when it cannot be told.
 */
int emq_plock_others(emq_plock *l, int64_t start, int64_t len);

/** Release this open's locks and close it (NULL: nothing). */
void emq_plock_close(emq_plock *l);

#endif /* EMQ_PLATFORM_H */
