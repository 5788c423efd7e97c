/*
 * turn.c — the writers' turn: the write transactions of every handle on a
 * file, in every process, take their turn first come, first served
 * (issue 27 item 9). Before, a writer that found the write lock taken
 * polled it through SQLite's busy handler (sleeping 1, 2, 5 ... 100 ms
 * between looks): under steady writes from other processes a newcomer
 * could look only while the lock was held, for its whole busy timeout,
 * and emq_open (whose fence is a write) answered EMQ_EBUSY.
 *
 * The queue lives in the wake file (notify.h): a ticket dispenser `next`,
 * the ticket being served `serving` (the word waiters wait on, through
 * platform.h), the instant `serving` last moved, and a ring of TURN_RING
 * cells, one per queued ticket: its ticket, its state and its process:
 *   WAIT  queued; the writer takes its turn by moving its cell from WAIT
 *         to HOLD once `serving` reached its ticket;
 *   HOLD  the writer holds the turn (its BEGIN IMMEDIATE ... COMMIT);
 *   GONE  released, given up at the busy timeout, or skipped.
 * A writer registers its cell for the ticket `next` shows, then moves
 * `next` on (any arriver that sees a registered cell for `next` moves it
 * on too, so a writer killed between the two steps stalls nobody).
 *
 * Robustness (no wait without bound): every wait ends at the handle's busy
 * timeout with EMQ_EBUSY, naming the process that holds the turn. A waiter
 * also moves `serving` past a head that will not take or end its turn:
 *   - a GONE cell (a writer gave up, or released);
 *   - a cell whose process is gone (killed while queued or holding: the
 *     kernel released its SQLite locks too), looked at once the head has
 *     not moved for TURN_LOOK_MS;
 *   - a WAIT cell still waiting TURN_SKIP_MS after its turn came (a
 *     process stopped while queued, or starved of CPU): it is skipped, and
 *     queues again at the tail when it runs.
 * A holder that is stopped (SIGSTOP, a debugger) keeps the turn, as it
 * keeps SQLite's write lock: the writers behind it answer EMQ_EBUSY at
 * their busy timeout, and the queue moves on when it runs again or dies.
 *
 * Handles in exclusive locking mode, read-only and in-memory handles take
 * no turn; nor does a handle that could not open its wake file (a full
 * disk): it falls back to SQLite's busy handler.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "store_int.h"
#include "notify.h"
#include "platform.h"

#define TURN_RING 128
#define TURN_LOOK_MS 10   /* a waiter's longest sleep between looks      */
#define TURN_SKIP_MS 250  /* a head that did not take its turn by then   */

enum { WAIT = 0, HOLD = 1, GONE = 2 };

typedef struct turn_area {
    _Atomic uint32_t next;       /* the ticket the next writer takes       */
    _Atomic uint32_t serving;    /* the ticket whose turn it is            */
    _Atomic int64_t since_ms;    /* CLOCK_MONOTONIC ms `serving` moved     */
    unsigned char pad[48];
    _Atomic uint64_t cell[TURN_RING]; /* ticket << 32 | state << 30 | pid */
} turn_area;

_Static_assert(sizeof(turn_area) <= EMQ_NOTIFY_TURN_BYTES / 2,
               "the turn fits its region of the wake file");

#define PID_MASK UINT64_C(0x3FFFFFFF)

static uint64_t pack(uint32_t t, unsigned state, uint32_t pid)
{
    return (uint64_t)t << 32 | (uint64_t)state << 30 | (pid & PID_MASK);
}
static uint32_t ticket_of(uint64_t c) { return (uint32_t)(c >> 32); }
static unsigned state_of(uint64_t c) { return (unsigned)(c >> 30) & 3u; }
static uint32_t pid_of(uint64_t c) { return (uint32_t)(c & PID_MASK); }

int64_t emq_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int emq_pid_gone(uint32_t pid)
{
    return pid != 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Move `serving` from `s` to the next ticket, and wake the waiters. */
static void advance(turn_area *a, uint32_t s, int64_t now)
{
    uint32_t want = s;
    atomic_store(&a->since_ms, now);
    /* No system call when nobody queued behind: a writer that registers
     * after the load of `next` loads `serving` after our store, so it
     * sees its turn and does not sleep. */
    if (atomic_compare_exchange_strong(&a->serving, &want, s + 1) &&
        atomic_load(&a->next) != s + 1)
        emq_plat_wake(&a->serving, 1);
}

/* Move past the head when it will not take or end its turn. */
static void reap(turn_area *a, int64_t now)
{
    uint32_t s = atomic_load(&a->serving);
    _Atomic uint64_t *c = &a->cell[s % TURN_RING];
    uint64_t v = atomic_load(c);
    int64_t idle = now - atomic_load(&a->since_ms);
    if (s == atomic_load(&a->next) || pid_of(v) == 0 || ticket_of(v) != s)
        return; /* nobody queued, or the head is registering */
    if (state_of(v) == GONE ||
        (idle >= TURN_LOOK_MS && emq_pid_gone(pid_of(v)) &&
         atomic_compare_exchange_strong(c, &v, pack(s, GONE, pid_of(v)))) ||
        (state_of(v) == WAIT && idle >= TURN_SKIP_MS &&
         atomic_compare_exchange_strong(c, &v, pack(s, GONE, pid_of(v)))))
        advance(a, s, now);
}

/* Queue: register a cell for a ticket. 0, or -1 when the ring stayed full
 * until `deadline`. */
static int arrive(turn_area *a, uint32_t pid, uint32_t *ticket,
                  int64_t deadline)
{
    for (;;) {
        uint32_t t = atomic_load(&a->next), s;
        _Atomic uint64_t *c = &a->cell[t % TURN_RING];
        uint64_t v = atomic_load(c);
        if (pid_of(v) != 0 && ticket_of(v) == t) {
            /* registered, `next` not moved yet: move it for them */
            atomic_compare_exchange_strong(&a->next, &t, t + 1);
            continue;
        }
        s = atomic_load(&a->serving);
        if (pid_of(v) != 0 && (int32_t)(ticket_of(v) - s) >= 0) {
            /* TURN_RING writers queued: wait for the queue to move */
            int64_t now = emq_mono_ms();
            if (now >= deadline) return -1;
            reap(a, now);
            emq_plat_wait(&a->serving, s,
                          deadline - now < TURN_LOOK_MS ? deadline - now
                                                        : TURN_LOOK_MS,
                          1);
            continue;
        }
        if (atomic_compare_exchange_strong(c, &v, pack(t, WAIT, pid))) {
            uint32_t want = t;
            atomic_compare_exchange_strong(&a->next, &want, t + 1);
            if (atomic_load(&a->serving) == t)
                atomic_store(&a->since_ms, emq_mono_ms()); /* at the head */
            *ticket = t;
            return 0;
        }
    }
}

int emq_wturn_enter(emq_store *st, int budget_ms, int *waited_ms)
{
    emq_notify *n;
    turn_area *a;
    uint32_t pid = (uint32_t)getpid(), t, s;
    int64_t start = emq_mono_ms(), deadline = start + budget_ms, now;
    uint64_t v, held;

    *waited_ms = 0;
    st->turn_held = 0;
    if (st->memory || st->opts.exclusive || st->opts.readonly) return EMQ_OK;
    if (st->notify == NULL) {
        if (st->notify_failed > 0) return EMQ_OK;
        if (emq_store_notifier(st, &n) != EMQ_OK) {
            st->errmsg[0] = '\0'; /* falls back to SQLite's busy handler */
            return EMQ_OK;
        }
    }
    if ((a = emq_notify_turn_area(st->notify)) == NULL) return EMQ_OK;
    if (arrive(a, pid, &t, deadline) != 0) goto busy;
    for (;;) {
        _Atomic uint64_t *c = &a->cell[t % TURN_RING];
        v = atomic_load(c);
        if (ticket_of(v) != t || state_of(v) == GONE) {
            /* skipped while it did not run: queue again */
            if (arrive(a, pid, &t, deadline) != 0) goto busy;
            continue;
        }
        s = atomic_load(&a->serving);
        if (s == t) {
            if (atomic_compare_exchange_strong(c, &v, pack(t, HOLD, pid)))
                break;
            continue;
        }
        now = emq_mono_ms();
        if (now >= deadline) {
            /* give the place up; the head moves past it */
            if (atomic_compare_exchange_strong(c, &v, pack(t, GONE, pid)) &&
                atomic_load(&a->serving) == t)
                advance(a, t, now);
            goto busy;
        }
        reap(a, now);
        if (atomic_load(&a->serving) != s) continue;
        emq_plat_wait(&a->serving, s,
                      deadline - now < TURN_LOOK_MS ? deadline - now
                                                    : TURN_LOOK_MS,
                      1);
    }
    st->turn_held = 1;
    st->turn_ticket = t;
    *waited_ms = (int)(emq_mono_ms() - start);
    return EMQ_OK;
busy:
    *waited_ms = (int)(emq_mono_ms() - start);
    s = atomic_load(&a->serving);
    held = atomic_load(&a->cell[s % TURN_RING]);
    return emq_store_err(st, EMQ_EBUSY, "the writers' queue of %s did not "
                         "reach this writer within the busy timeout (%d ms; "
                         "the turn is with process %u, %s)", st->path,
                         *waited_ms, (unsigned)pid_of(held),
                         state_of(held) == HOLD ? "in its transaction "
                                                  "(stopped or slow?)"
                                                : "which has not taken it");
}

void emq_wturn_leave(emq_store *st)
{
    turn_area *a;
    uint32_t t = st->turn_ticket;
    if (!st->turn_held) return;
    st->turn_held = 0;
    a = emq_notify_turn_area(st->notify);
    atomic_store(&a->cell[t % TURN_RING],
                 pack(t, GONE, (uint32_t)getpid()));
    advance(a, t, emq_mono_ms());
}
