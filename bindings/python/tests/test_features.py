"""Issue 29's second pass: the waiting claim and its asyncio variant, the
worker, the task decorator and its inline mode, events as an iterator,
lanes and streams, the generated verb methods, one unit for time."""
import asyncio
import datetime as dt
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, List, Optional

import pytest

import emqlite
from emqlite.worker import Worker

Q = "mail"


@pytest.fixture
def path(tmp_path: Path) -> str:
    p = str(tmp_path / "f.db")
    emqlite.open(p).close()
    return p


# ------------------------------------------------------ the waiting claim

def test_claim_wait_times_out_with_none(path: str) -> None:
    with emqlite.open(path) as db:
        t = time.monotonic()
        assert db.queue(Q).claim(wait=0.3) is None
        assert 0.25 <= time.monotonic() - t < 3


def test_claim_wait_on_a_fake_clock_times_out_on_real_time() -> None:
    with emqlite.open(":memory:", clock=emqlite.FakeClock()) as db:
        assert db.queue(Q).claim(wait=dt.timedelta(milliseconds=100)) is None


def test_claim_wait_is_woken_by_another_threads_enqueue(path: str) -> None:
    def later() -> None:
        time.sleep(0.3)
        with emqlite.open(path) as other:
            other.queue(Q).enqueue(b"late")
    t = threading.Thread(target=later)
    with emqlite.open(path) as db:
        t.start()
        job = db.queue(Q).claim(wait=math.inf)
        t.join()
        assert job is not None and job.payload == b"late"


def test_close_from_another_thread_ends_a_wait(path: str) -> None:
    db = emqlite.open(path)
    closer = threading.Timer(0.3, db.close)
    closer.start()
    t = time.monotonic()
    assert db.queue(Q).claim(wait=30) is None
    assert time.monotonic() - t < 5
    closer.join()
    assert db.closed


def test_ctrl_c_interrupts_a_wait(path: str) -> None:
    with emqlite.open(path) as db:
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        t = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            db.queue(Q).claim(wait=30)
        assert time.monotonic() - t < 5


def test_the_gil_is_released_while_waiting(path: str) -> None:
    ticks: List[int] = []
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.01)
    t = threading.Thread(target=spin)
    t.start()
    with emqlite.open(path) as db:
        db.queue(Q).claim(wait=0.5)
    stop.set()
    t.join()
    assert len(ticks) > 10


def test_claim_async_waits_without_blocking_the_loop(path: str) -> None:
    async def main() -> Optional[emqlite.Job]:
        db = emqlite.open(path)
        q = db.queue(Q)

        async def feed() -> None:
            await asyncio.sleep(0.3)
            with emqlite.open(path) as other:
                other.queue(Q).enqueue(b"async")
        f = asyncio.ensure_future(feed())
        job = await q.claim_async(lease=30, wait=10)
        await f
        # cancellation ends a wait
        task = asyncio.ensure_future(q.claim_async(wait=30))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert q.pending_size() == 0      # the loop's thread still may call
        db.close()
        return job
    job = asyncio.run(main())
    assert job is not None and job.payload == b"async"


# ----------------------------------------------------------------- worker

def _send(job: emqlite.Job) -> bytes:
    if job.payload == b"boom":
        raise RuntimeError("boom on attempt %d" % job.attempts)
    return b"done:" + (job.payload or b"")


def test_a_worker_runs_jobs_and_retries_failures_with_the_traceback(
        path: str) -> None:
    with emqlite.open(path) as db:
        q = db.queue(Q)
        q.set_retry_policy(2, delay=0.05)
        ids = [q.enqueue(b"p%d" % i) for i in range(20)]
        bad = q.enqueue(b"boom")
    stats = Worker(path, Q, _send, threads=3, idle=1.0, pump=0.05).run()
    assert stats["completed"] == 20
    assert stats["dead"] == 1 and stats["retried"] >= 1
    with emqlite.open(path) as db:
        assert bad is not None
        row = db.queue(Q).job(bad)
        assert row is not None and row["state"] == b"dead"
        err = row["last_error"].decode()
        assert "Traceback" in err and "RuntimeError: boom on attempt 2" in err
        assert db.stats(Q)["completed"] == 20 and len(ids) == 20


def test_a_worker_with_processes(path: str) -> None:
    with emqlite.open(path) as db:
        q = db.queue(Q)
        for i in range(30):
            q.enqueue(b"p%d" % i)
    stats = Worker(path, Q, _send, threads=1, processes=2, idle=1.0).run()
    assert stats["completed"] == 30
    with emqlite.open(path) as db:
        assert db.stats(Q)["completed"] == 30


def test_sigterm_stops_a_worker_gracefully(path: str, tmp_path: Path
                                           ) -> None:
    app = os.path.join(os.path.dirname(__file__), "..", "examples",
                       "worker_app.py")
    with emqlite.open(path) as db:
        for i in range(5):
            db.queue(Q).enqueue(b'{"to": "x%d"}' % i)
    p = subprocess.Popen([sys.executable, app, path],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    lines = [p.stdout.readline() for _ in range(5)]
    p.send_signal(signal.SIGTERM)
    rest = p.communicate(timeout=30)[0]
    assert p.returncode == 0
    assert all(line.startswith("sent ") for line in lines)
    assert "worker stopped" in rest and "'completed': 5" in rest


# ------------------------------------------------- tasks and inline mode

def test_task_inline_mode_runs_at_once_on_the_fake_clock() -> None:
    clock = emqlite.FakeClock()
    with emqlite.open(":memory:", clock=clock, inline=True) as db:
        q = db.queue(Q)
        q.set_retry_policy(3, delay=10)
        seen: List[int] = []

        @q.task
        def send(job: emqlite.Job) -> None:
            seen.append(job.attempts)
            if job.attempts < 2:
                raise ConnectionError("smtp 421")

        jid = send.enqueue(b"hi")
        assert seen == [1]                       # ran at once, failed
        assert jid is not None
        row = q.job(jid)
        assert row is not None and b"ConnectionError" in row["last_error"]
        assert send.run_due() == 0               # not due before 10 s
        clock.advance(10)
        assert send.run_due() == 1 and seen == [1, 2]
        assert db.stats(Q)["completed"] == 1


# ----------------------------------------------------------------- events

def test_events_are_an_iterator() -> None:
    with emqlite.open(":memory:", clock=emqlite.FakeClock()) as db:
        q = db.queue(Q)
        with db.events(Q, after=0, timeout=0) as ev:
            a = q.enqueue(b"a")
            job = q.claim()
            assert job is not None
            job.complete()
            got = list(ev)
        assert [(e.name, e.job) for e in got] == [("completed", a)]
        assert got[0].data()["event"] == "completed"
        assert got[0].at == dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def test_events_wait_for_another_handle(path: str) -> None:
    def later() -> None:
        time.sleep(0.3)
        with emqlite.open(path) as o:
            q = o.queue(Q)
            q.enqueue(b"x")
            j = q.claim()
            assert j is not None
            j.complete()
    with emqlite.open(path) as db:
        t = threading.Thread(target=later)
        t.start()
        ev = db.events(Q, timeout=10)
        e = next(ev)
        t.join()
        assert e.name == "completed"
        ev.close()


# ------------------------------------------------------ lanes and streams

def test_lanes() -> None:
    with emqlite.open(":memory:", clock=emqlite.FakeClock()) as db:
        q = db.queue(Q)
        a, b = q.lane("PRT0KHTOWnGLuC"), q.lane("PRT0KHTOWnGLuD")
        a.enqueue(b"a1")
        a.enqueue(b"a2")
        b.enqueue(b"b1")
        assert a.depth() == 2 and b.depth() == 1
        groups = set()
        for _ in range(3):
            j = q.claim_lane(lease=30)
            assert j is not None and j.group is not None
            groups.add(j.group)
            j.complete()
        assert groups == {"PRT0KHTOWnGLuC", "PRT0KHTOWnGLuD"}
        assert q.claim_lane() is None


def test_streams() -> None:
    with emqlite.open(":memory:", clock=emqlite.FakeClock()) as db:
        s = db.queue(Q).stream("audit")
        s.append({"k": b"v1"})
        s.append({"k": b"v2"})
        assert len(s) == 2
        entries = s.range()
        assert [e[1]["k"] for e in entries] == [b"v1", b"v2"]


# ------------------------------------------------ the generated methods

def test_every_registry_verb_is_a_typed_method() -> None:
    from emqlite import _verbs
    db = emqlite.open(":memory:")
    live = {v.name: v for v in emqlite.verbs()}
    gen = {r[0]: r for r in _verbs.REGISTRY}
    assert set(live) == set(gen)                  # the build's registry
    for name, v in live.items():
        assert [a[0] for a in v.args] == [a[0] for a in gen[name][3]]
        assert v.gates == [a[1] for a in gen[name][3]]
        assert name in dir(db) and callable(getattr(db, name))
    q = db.queue(Q)
    for name, v in live.items():
        if v.args and v.args[0][0] == "q":
            assert hasattr(q, name)
    assert q.counts(["pending"]) == {"pending": 0}
    q.enqueue(b"x")
    assert q.counts() == {"pending": 1, "active": 0, "schedule": 0,
                          "dead": 0, "completed": 0, "failed": 0}
    db.close()


# ------------------------------------------------------- one unit for time

def test_old_time_forms_are_refused_with_what_to_write() -> None:
    with pytest.raises(TypeError, match="advance\\(seconds\\)"):
        emqlite.FakeClock().advance(ms=1000)
    with pytest.raises(TypeError, match="FakeClock\\(datetime"):
        emqlite.FakeClock(start_ms=0)
    with pytest.raises(TypeError, match="fromtimestamp"):
        emqlite.FakeClock().set(1767225600)  # type: ignore[arg-type]
    with emqlite.open(":memory:", clock=emqlite.FakeClock()) as db:
        with pytest.raises(TypeError, match="fromtimestamp"):
            db.queue(Q).enqueue(b"x", at=1767225600)  # type: ignore
        with pytest.raises(TypeError, match="lease= with float seconds"):
            db.call("claim", Q, lease_ms=1000)
    with pytest.raises(ValueError, match="divide by 1000"):
        emqlite.open(":memory:", clock=lambda: 1767225600000).queue(
            Q).enqueue(b"x")
    with emqlite.open(":memory:", clock=time.time) as db:   # seconds: fine
        assert db.queue(Q).enqueue(b"x") is not None
        assert abs((db.now() - dt.datetime.now(dt.timezone.utc))
                   .total_seconds()) < 60


def test_iterators_are_typed() -> None:
    it: Iterator[emqlite.Event] = emqlite.open(":memory:").events(timeout=0)
    assert list(it) == []
