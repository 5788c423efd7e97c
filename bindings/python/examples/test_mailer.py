"""An application's unit test with emqlite's pytest fixtures: a tiny mailer
that sends queued mail and retries with backoff, tested with a fake clock
and no sleeps. Run: python3 -m pytest bindings/python/examples"""
import json
from typing import Callable, List, Optional

import emqlite


class Mailer:
    """The application code under test: one delivery attempt per call."""

    def __init__(self, db: emqlite.Database,
                 transport: Callable[[str, str], None]) -> None:
        self.queue = db.queue("mail")
        self.transport = transport

    def send_later(self, to: str, body: str) -> Optional[str]:
        return self.queue.enqueue(json.dumps({"to": to, "body": body}))

    def work_once(self) -> Optional[str]:
        self.queue.promote()
        job = self.queue.claim(lease=30)
        if job is None:
            return None
        mail = json.loads(job.payload or b"{}")
        try:
            self.transport(mail["to"], mail["body"])
        except ConnectionError as e:
            # 10 s, then 20 s, ...: the application's backoff
            return job.retry(delay=10 * 2 ** (job.attempts - 1),
                             max_attempts=3, error=str(e))
        job.complete()
        return "sent"


def test_a_failed_send_is_retried_after_its_backoff(
        emqlite_db: emqlite.Database, emqlite_clock: emqlite.FakeClock) -> None:
    calls: List[str] = []

    def flaky(to: str, body: str) -> None:
        calls.append(to)
        if len(calls) == 1:
            raise ConnectionError("smtp 421")

    m = Mailer(emqlite_db, flaky)
    m.send_later("ada@example.com", "hello")
    assert m.work_once() == "scheduled"
    assert m.work_once() is None            # not due yet
    emqlite_clock.advance(10)
    assert m.work_once() == "sent"
    assert calls == ["ada@example.com"] * 2
    assert emqlite_db.stats("mail")["completed"] == 1


def test_three_failures_dead_letter_the_mail(
        emqlite_db: emqlite.Database, emqlite_clock: emqlite.FakeClock) -> None:
    def down(to: str, body: str) -> None:
        raise ConnectionError("smtp down")

    m = Mailer(emqlite_db, down)
    jid = m.send_later("bob@example.com", "hi")
    results: List[Optional[str]] = []
    for _ in range(3):
        results.append(m.work_once())
        emqlite_clock.advance(60)
    assert results == ["scheduled", "scheduled", "dead"]
    assert jid is not None
    row = emqlite_db.queue("mail").job(jid)
    assert row is not None
    assert row["state"] == b"dead" and row["last_error"] == b"smtp down"
