"""emqlite.testing — a pytest plugin for application tests.

Installed with the package (entry point `pytest11`), it gives every test
two fixtures:

- `emqlite_clock`: a FakeClock at 2026-01-01T00:00:00Z that moves only when
  the test calls `emqlite_clock.advance(seconds)` (or a timedelta);
- `emqlite_db`: an in-memory emqlite Database driven by that clock, closed
  after the test.

So a test checks lease expiry, retries and schedules without sleeping:

    def test_a_lapsed_lease_is_reaped(emqlite_db, emqlite_clock):
        q = emqlite_db.queue("mail")
        q.enqueue(b"hi")
        job = q.claim(lease=30)
        emqlite_clock.advance(31)
        assert q.reap() == 1
        assert q.claim().attempts == 2
"""
from typing import Iterator

import pytest

import emqlite


@pytest.fixture
def emqlite_clock() -> emqlite.FakeClock:
    """A FakeClock that tests advance by hand (seconds or a timedelta)."""
    return emqlite.FakeClock()


@pytest.fixture
def emqlite_db(emqlite_clock: emqlite.FakeClock
               ) -> Iterator[emqlite.Database]:
    """An in-memory emqlite Database on `emqlite_clock`."""
    db = emqlite.open(":memory:", clock=emqlite_clock)
    try:
        yield db
    finally:
        db.close()
