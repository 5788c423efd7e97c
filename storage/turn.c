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
 *   GONE  released, given up at the busy timeout, or skipped; or, while
 *         `linger` names its ticket, lingering (below).
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
 * Handing the turn over (issue 33 item 1). SQLite throws a connection's
 * whole page cache away when another connection has written the file, so
 * a write after another process's write reads every page it touches again
 * (about 25 reads of a 1 KiB page for an enqueue): three to four times
 * the work of a write after one's own. And a sleeping writer woken on
 * another CPU takes as long again to run. So, on a machine with more than
 * one CPU:
 *   - a writer lingers: after its commit its cell says GONE and `linger`
 *     names its ticket, with the instant; its handle's next write within
 *     TURN_LINGER_NS (20 µs: a worker's complete after its claim, a
 *     producer's next enqueue) takes the turn back without queueing, its
 *     cache still good; at most TURN_BURST writes
 *     in a row, then it hands the turn on and queues at the tail. The next
 *     writer in line takes the turn from a head that lingered longer (it
 *     will not write soon: working, stopped or gone);
 *   - the next writer in line watches `serving` (and the lingering head)
 *     before it sleeps, for as long as the head keeps writing (a write at
 *     least every TURN_SPIN_NS, TURN_SPIN_MAX_NS at most), so a hand-over
 *     costs no wake-up, and the head's writes wake nobody while it spins;
 *     on the head's own CPU (`head_cpu`: the scheduler tends to keep
 *     processes that wake each other on one CPU) it yields instead, so
 *     the head runs there at full speed (+5–9% from K = 4);
 *     a hand-over wakes the writer whose turn it is and the one behind
 *     it, who becomes the next in line. Each waiter sleeps on its
 *     ticket's bit of `serving` (FUTEX_WAIT_BITSET): a hand-over wakes two
 *     writers, not every writer queued.
 * Group commit (gsync.c) does not linger: its writer waits for a sync
 * after the turn.
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
#ifndef TURN_SPIN_NS
#define TURN_SPIN_NS 50000 /* the next in line watches a head this idle  */
#endif

#ifndef TURN_SPIN_MAX_NS
#define TURN_SPIN_MAX_NS 1000000 /* ... while the head's burst goes on */
#endif

#ifndef TURN_LINGER_NS
#define TURN_LINGER_NS 20000 /* a holder's turn waits for its next write */
#endif
#ifndef TURN_BURST
#define TURN_BURST 32 /* writes in a row before the turn moves on   */
#endif
#ifndef TURN_YIELD
#define TURN_YIELD 1  /* a spinner on the head's CPU yields it        */
#endif

enum { WAIT = 0, HOLD = 1, GONE = 2 };

typedef struct turn_area {
    _Atomic uint32_t next;       /* the ticket the next writer takes       */
    _Atomic uint32_t serving;    /* the ticket whose turn it is            */
    _Atomic int64_t since_ms;    /* CLOCK_MONOTONIC ms `serving` moved     */
    _Atomic int64_t linger_ns;   /* CLOCK_MONOTONIC ns the head lingered   */
    _Atomic uint32_t linger;     /* the head's ticket while it lingers     */
    _Atomic uint32_t spinner;    /* 1 + the ticket of the next in line
                                    while it spins (0: none)            */
    _Atomic uint32_t head_cpu;   /* 1 + the CPU the head ran its last
                                    write on (0: unknown; an earlier
                                    build leaves it 0)                  */
    unsigned char pad[28];
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

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t emq_mono_ms(void)
{
    return mono_ns() / 1000000;
}

int emq_pid_gone(uint32_t pid)
{
    return pid != 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* The bit a waiter for ticket `t` waits on: the wake that gives the turn
 * to `t` reaches it, and the writers queued behind it sleep on (one in 32
 * tickets shares its bit; they look, and wait again). */
static uint32_t bit_of(uint32_t t) { return UINT32_C(1) << (t % 32); }

/* Move `serving` from `s` to the next ticket, past the writers that gave
 * their place up, and wake the writer whose turn it is. */
static void advance(turn_area *a, uint32_t s, int64_t now)
{
    for (;;) {
        uint32_t want = s;
        uint64_t v;
        atomic_store(&a->since_ms, now);
        if (!atomic_compare_exchange_strong(&a->serving, &want, s + 1))
            return;
        s++;
        /* No system call when nobody queued behind: a writer that
         * registers after the load of `next` loads `serving` after our
         * store, so it sees its turn and does not sleep. */
        if (atomic_load(&a->next) == s) return;
        /* `next` moved past `s` only once its cell was registered */
        v = atomic_load(&a->cell[s % TURN_RING]);
        if (ticket_of(v) == s && pid_of(v) != 0 && state_of(v) == GONE)
            continue;
        /* the writer whose turn it is, and the next in line, who
         * watches from now on (spin_for_turn) */
        emq_plat_wake_bits(&a->serving, bit_of(s) | bit_of(s + 1));
        return;
    }
}

/* Whether the head `s`, whose cell reads `v`, lingers (its GONE cell is
 * not to be passed until TURN_LINGER_NS has gone by). A build before the
 * linger passes it as GONE: harmless, SQLite's lock still orders the
 * writes. */
static int lingers(turn_area *a, uint32_t s, uint64_t v)
{
    return state_of(v) == GONE && ticket_of(v) == s &&
           atomic_load(&a->linger) == s;
}

/* Take the turn from a head that lingered past TURN_LINGER_NS: claim the
 * linger (the head's own retake claims it the same way, so one of the two
 * wins), and move on. 1 when the turn moved. */
static int end_linger(turn_area *a, uint32_t s, uint64_t v)
{
    uint32_t want = s;
    if (!lingers(a, s, v) ||
        mono_ns() - atomic_load(&a->linger_ns) < TURN_LINGER_NS ||
        !atomic_compare_exchange_strong(&a->linger, &want, s - 1))
        return 0;
    advance(a, s, emq_mono_ms());
    return 1;
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
    if (lingers(a, s, v)) {
        end_linger(a, s, v);
        return;
    }
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
            emq_plat_wait_bits(&a->serving, s,
                               deadline - now < TURN_LOOK_MS ? deadline - now
                                                             : TURN_LOOK_MS,
                               UINT32_MAX); /* any move of the queue */
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

/* Whether another CPU can run a writer while this one watches: on one
 * CPU, a writer neither spins nor lingers. */
static int many_cpus(void)
{
    static _Atomic int cpus; /* 0: not read yet */
    int n = atomic_load_explicit(&cpus, memory_order_relaxed);
    if (n == 0) {
        n = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
        atomic_store_explicit(&cpus, n, memory_order_relaxed);
    }
    return n > 1;
}

/* The writer next in line watches the head before it sleeps, when another
 * CPU can run the holder meanwhile: a transaction takes tens of
 * microseconds, and a sleeper's wake-up on another CPU costs about as much
 * again at every hand-over. It watches while the head makes progress (a
 * write of its burst at least every TURN_SPIN_NS) for TURN_SPIN_MAX_NS at
 * most (a burst), and takes the turn from a head that lingered too long.
 * While it spins, the head's writes need not wake it; sharing the head's
 * CPU, it yields that CPU between looks. 1 when the turn moved. */
static int spin_for_turn(turn_area *a, uint32_t s)
{
    int64_t t0, last, now, seen, at;
    uint32_t me = s + 2; /* 1 + this waiter's ticket, s + 1 */
    int moved = 0;
    if (!many_cpus() || TURN_SPIN_NS <= 0) return 0;
    atomic_store(&a->spinner, me);
    t0 = last = mono_ns();
    seen = atomic_load(&a->linger_ns);
    for (;;) {
        uint32_t cpu;
        for (int i = 0; i < 64 && !moved; i++) {
            moved = atomic_load_explicit(&a->serving,
                                         memory_order_acquire) != s;
            emq_plat_relax();
        }
        /* On the head's own CPU a spin only takes the time the head
         * needs: let it run (the scheduler keeps processes that wake each
         * other on one CPU, so this is common with many writers). */
        if (TURN_YIELD && !moved &&
            (cpu = atomic_load_explicit(&a->head_cpu,
                                        memory_order_relaxed)) &&
            cpu == (uint32_t)emq_plat_cpu())
            emq_plat_yield();
        if (moved ||
            (moved = end_linger(a, s, atomic_load(&a->cell[s % TURN_RING]))))
            break;
        now = mono_ns();
        if ((at = atomic_load(&a->linger_ns)) != seen) {
            seen = at; /* the head wrote again: its burst goes on */
            last = now;
        }
        if (now - last >= TURN_SPIN_NS || now - t0 >= TURN_SPIN_MAX_NS)
            break;
    }
    atomic_compare_exchange_strong(&a->spinner, &me, 0);
    return moved;
}

/* Take the turn back without queueing: this handle lingered on it since
 * its last write (fewer than TURN_BURST in a row: emq_wturn_leave) and
 * nobody took it meanwhile. 1 when held.
 * The cell says HOLD before the linger is claimed, so a waiter never sees
 * a GONE head whose linger is over while its writer takes it back; a
 * waiter that claimed the linger first (end_linger) is moving the turn
 * on, and this writer queues. */
static int retake(emq_store *st, turn_area *a)
{
    uint32_t t = st->turn_ticket, want = t;
    uint64_t v = pack(t, GONE, st->turn_pid);
    _Atomic uint64_t *c = &a->cell[t % TURN_RING];
    st->turn_linger = 0;
    if (atomic_load(&a->serving) == t &&
        atomic_compare_exchange_strong(c, &v, pack(t, HOLD, st->turn_pid))) {
        if (atomic_compare_exchange_strong(&a->linger, &want, t - 1) &&
            atomic_load(&a->serving) == t) {
            st->turn_burst++;
            return 1;
        }
        /* taken over (or passed by an earlier build's writer) */
        atomic_store(c, pack(t, GONE, st->turn_pid));
    }
    st->turn_burst = 0;
    return 0;
}

int emq_wturn_enter(emq_store *st, int budget_ms, int *waited_ms)
{
    emq_notify *n;
    turn_area *a;
    uint32_t pid, t, s;
    int64_t start = emq_mono_ms(), deadline = start + budget_ms, now;
    uint64_t v, held;
    int64_t nap;

    *waited_ms = 0;
    st->turn_held = 0;
    if (st->memory || st->opts.exclusive || st->opts.readonly) return EMQ_OK;
    if (st->turn_pid == 0) st->turn_pid = (uint32_t)getpid();
    pid = st->turn_pid;
    if (st->notify == NULL) {
        if (st->notify_failed > 0) return EMQ_OK;
        if (emq_store_notifier(st, &n) != EMQ_OK) {
            st->errmsg[0] = '\0'; /* falls back to SQLite's busy handler */
            return EMQ_OK;
        }
    }
    if ((a = emq_notify_turn_area(st->notify)) == NULL) return EMQ_OK;
    if (st->turn_linger && retake(st, a)) {
        st->turn_held = 1;
        return EMQ_OK;
    }
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
        if (t - s == 1 && spin_for_turn(a, s)) continue;
        /* the next in line behind a lingering head looks again soon */
        nap = t - s == 1 && lingers(a, s, atomic_load(&a->cell[s % TURN_RING]))
                  ? 1 : TURN_LOOK_MS;
        emq_plat_wait_bits(&a->serving, s,
                           deadline - now < nap ? deadline - now : nap,
                           bit_of(t));
    }
    st->turn_held = 1;
    st->turn_ticket = t;
    atomic_store_explicit(&a->head_cpu, (uint32_t)emq_plat_cpu(),
                          memory_order_relaxed);
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
    /* Linger: the handle that wrote last has the pages of its write in its
     * cache, which any other writer's commit would throw away (SQLite
     * drops a connection's whole cache when another changed the file).
     * Its next write within TURN_LINGER_NS takes the turn back at once.
     * Not for group commit: the writer waits for a sync after the turn. */
    if (st->turn_burst < TURN_BURST && !emq_gsync_on(st) && many_cpus()) {
        atomic_store_explicit(&a->head_cpu, (uint32_t)emq_plat_cpu(),
                              memory_order_relaxed);
        atomic_store(&a->linger_ns, mono_ns());
        atomic_store(&a->linger, t); /* before the cell says GONE */
        atomic_store(&a->cell[t % TURN_RING], pack(t, GONE, st->turn_pid));
        st->turn_linger = 1;
        /* the next in line watches: wake it unless it spins (one that
         * stops spinning just now naps 1 ms at most, behind a lingerer) */
        if (atomic_load(&a->next) != t + 1 &&
            atomic_load(&a->spinner) != t + 2)
            emq_plat_wake_bits(&a->serving, bit_of(t + 1));
        return;
    }
    st->turn_burst = 0;
    atomic_store(&a->cell[t % TURN_RING], pack(t, GONE, st->turn_pid));
    advance(a, t, emq_mono_ms());
}

void emq_wturn_release(emq_store *st)
{
    turn_area *a;
    uint32_t t = st->turn_ticket;
    if (!st->turn_linger) return;
    st->turn_linger = 0;
    st->turn_burst = 0;
    a = emq_notify_turn_area(st->notify);
    if (atomic_compare_exchange_strong(&a->linger, &t, t - 1))
        advance(a, st->turn_ticket, emq_mono_ms());
}
