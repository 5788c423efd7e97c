"""emqlite.worker — run a function over a queue with N threads (the
library's worker pool) or N processes (each with its own pool).

    from emqlite.worker import Worker

    def send(job):                       # job.id, job.attempts, job.payload
        deliver(job.payload)             # return: done (bytes/str: result)
                                         # raise: failed, retried under the
                                         # queue's policy, traceback = error
    Worker("jobs.db", "mail", send, threads=4).run()   # until SIGTERM

Each thread has its own handle on the file and loops the library's waiting
claim -> handler -> complete or retry; one more thread extends the leases
of the jobs in hand (every lease/2) and runs the pump (due jobs, repeats,
flow completions). A handler that raises fails the attempt: the job is
retried under the queue's stored retry policy (Queue.set_retry_policy; the
worker's `max_attempts`/`backoff` when none is stored) and the formatted
traceback becomes its `last_error`. SIGTERM and SIGINT (when run() runs on
the main thread) stop it gracefully: every worker finishes the job in hand
and settles it, then run() returns the pool's figures.
"""
import multiprocessing as _mp
import os
import signal
import threading
from typing import Any, Callable, Dict, List, Optional, Union

from . import (Bytes, Database, Duration, Job, _error, _ms,
               _qname, _run_handler)
from ._native import ffi, lib

__all__ = ["Worker", "Handler"]

#: A handler: takes the Job, returns None or a result (bytes or str).
Handler = Callable[[Job], Optional[Bytes]]

_FIELDS = ("claimed", "completed", "retried", "dead", "abandoned", "stale",
           "errors")


class _Box:
    """What the C handler callback reaches through its context: the
    function and, per worker thread, the outcome bytes that must stay
    valid until that thread's next call (no reference to the Worker)."""

    def __init__(self, fn: Handler) -> None:
        self.fn = fn
        self.keep = threading.local()


@ffi.def_extern()  # type: ignore
def _emq_py_handler(ctx: Any, q: Any, job: Any, out: Any) -> None:
    box = ffi.from_handle(ctx)
    payload = (ffi.buffer(job.payload, job.payload_len)[:]
               if job.payload != ffi.NULL else None)
    j = Job(None, ffi.string(job.id).decode(), int(job.attempts), payload)
    ok, result, error = _run_handler(box.fn, j)
    if ok:
        out.verdict = lib.EMQ_WORK_DONE
        if result is not None:
            buf = ffi.new("char[]", result)
            box.keep.buf = buf
            out.result, out.result_len = buf, len(result)
    else:
        buf = ffi.new("char[]", error)
        box.keep.buf = buf
        out.verdict = lib.EMQ_WORK_FAILED
        out.error, out.error_len = buf, len(error)
        out.delay_ms = -1


class Worker:
    """Run `fn` over queue `queue` of the file at `path` (not ":memory:")
    with `threads` threads — or `processes` processes (fork) of `threads`
    threads each. `lease` and `extend` (the beat; None: lease/2) are
    durations; `max_attempts` and `backoff` (a duration) the retry policy
    used when the queue has none stored; `pump` the sweep interval (None:
    no pump); `max_jobs` (0: no limit) and `idle` (None: never) stop it."""

    def __init__(self, path: str, queue: str, fn: Handler, *,
                 threads: int = 1, processes: int = 0,
                 lease: Duration = 30.0, extend: Optional[Duration] = None,
                 max_attempts: int = 3, backoff: Duration = 1.0,
                 pump: Optional[Duration] = 1.0, max_jobs: int = 0,
                 idle: Optional[Duration] = None,
                 track_locks: bool = False) -> None:
        if not callable(fn):
            raise TypeError("fn: a callable taking a Job")
        if not isinstance(path, str) or path in ("", ":memory:"):
            raise ValueError("path: a worker needs a file (every thread "
                             "opens its own handle), not %r" % (path,))
        if threads < 1 or processes < 0:
            raise ValueError("threads >= 1 and processes >= 0")
        self.path, self.queue, self.fn = path, queue, fn
        _qname(queue)
        self.threads, self.processes = threads, processes
        self._opts: Dict[str, int] = {
            "lease_ms": _ms(lease, "lease"),
            "extend_ms": 0 if extend is None else _ms(extend, "extend"),
            "max_attempts": int(max_attempts),
            "delay_ms": _ms(backoff, "backoff"),
            "pump_ms": -1 if pump is None else _ms(pump, "pump"),
            "max_jobs": int(max_jobs),
            "idle_ms": -1 if idle is None else _ms(idle, "idle"),
            "track_locks": 1 if track_locks else 0,
        }
        self._pool: Any = None
        self._box: Optional[_Box] = None
        self._ctx: Any = None
        self._children: List[Any] = []
        self._stop = threading.Event()
        self.stats: Dict[str, int] = {}

    # -- threads in this process
    def start(self) -> None:
        """Start the pool's threads (this process) and return."""
        if self._pool is not None:
            raise RuntimeError("the worker is running")
        w = ffi.new("emq_worker_options *")
        lib.emq_worker_options_init_size(w, ffi.sizeof("emq_worker_options"))
        qb = ffi.new("char[]", _qname(self.queue))
        self._keep = [qb]
        self._box = _Box(self.fn)
        self._ctx = ffi.new_handle(self._box)
        o = self._opts
        w.queue = qb
        w.handler = lib._emq_py_handler
        w.handler_ctx = self._ctx
        w.workers = self.threads
        w.lease_ms = o["lease_ms"]
        w.extend_ms = o["extend_ms"]
        w.retry.max_attempts = o["max_attempts"]
        w.retry.backoff.kind = lib.EMQ_BACKOFF_FIXED
        w.retry.backoff.delay_ms = o["delay_ms"]
        w.pump_ms = o["pump_ms"]
        w.max_jobs = o["max_jobs"]
        w.idle_ms = o["idle_ms"]
        w.track_locks = o["track_locks"]
        out = ffi.new("emq_pool **")
        rc = lib.emq_pool_start(os.fsencode(self.path), ffi.NULL, w, out)
        if rc != 0:
            raise _error(rc, "worker: cannot start on %s" % self.path)
        self._pool = out[0]
        if self._stop.is_set():
            lib.emq_pool_stop(self._pool)

    def stop(self) -> None:
        """Ask every worker (thread or process) to finish its job in hand
        and stop. Safe from any thread and from a signal handler."""
        self._stop.set()
        if self._pool is not None:
            lib.emq_pool_stop(self._pool)
        for p in self._children:
            if p.is_alive():
                p.terminate()       # SIGTERM: the child stops gracefully

    def beat(self) -> None:
        """Extend the leases of the jobs in hand now."""
        if self._pool is not None:
            lib.emq_pool_beat(self._pool)

    def join(self) -> Dict[str, int]:
        """Wait until the pool stopped; its figures (claimed, completed,
        retried, dead, abandoned, stale, errors)."""
        if self._pool is None:
            return self.stats
        st = ffi.new("emq_pool_stats *")
        done = threading.Event()
        rcs: List[int] = []

        def joiner() -> None:
            rcs.append(lib.emq_pool_join(self._pool, st))
            done.set()
        t = threading.Thread(target=joiner, daemon=True)
        t.start()
        while not done.wait(0.2):   # the main thread stays responsive to
            pass                    # signals (the handlers call stop())
        lib.emq_pool_free(self._pool)
        self._pool = None
        self.stats = {f: int(getattr(st, f)) for f in _FIELDS}
        if rcs and rcs[0] < 0:
            raise _error(rcs[0], "worker: stopped by a failure")
        return self.stats

    # -- the whole run
    def run(self) -> Dict[str, int]:
        """Run until stopped (SIGTERM/SIGINT on the main thread, stop(),
        max_jobs or idle); the figures, summed over processes."""
        old: Dict[Any, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                old[sig] = signal.signal(sig, lambda s, f: self.stop())
        try:
            if self.processes:
                return self._run_processes()
            self.start()
            return self.join()
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)

    def _run_processes(self) -> Dict[str, int]:
        ctx = _mp.get_context("fork")
        q = ctx.SimpleQueue()
        for _ in range(self.processes):
            p = ctx.Process(target=_child, args=(self, q), daemon=False)
            p.start()
            self._children.append(p)
        for p in self._children:
            while p.is_alive():
                p.join(0.2)
        total = {f: 0 for f in _FIELDS}
        while not q.empty():
            r = q.get()
            for f in _FIELDS:
                total[f] += r.get(f, 0)
        self.stats = total
        self._children = []
        return total


def _child(w: Worker, q: Any) -> None:
    w.processes = 0
    w._children = []
    stats = w.run()
    q.put(stats)


def run_forever(db: Union[Database, str], queue: str, fn: Handler,
                **options: Any) -> Dict[str, int]:
    """Worker(path, queue, fn, **options).run(); `db` a Database (its
    file) or a path."""
    path = db.path if isinstance(db, Database) else db
    return Worker(path, queue, fn, **options).run()



