"""The three defects of issue 29, each failing on the package before the
fix: a handle dropped without close() is finalised from any thread (no
reference cycle keeps it); a NUL byte or a wrong type in a name or id is
refused before it reaches C; a handle used after fork() is refused."""
import gc
import os
import threading
import weakref
from pathlib import Path

import pytest

import emqlite


def test_a_dropped_handle_is_freed_at_once_no_cycle_keeps_it(
        tmp_path: Path) -> None:
    clock = emqlite.FakeClock()
    gc.disable()
    try:
        for kw in ({}, {"clock": clock}):
            db = emqlite.open(str(tmp_path / "a.db"), **kw)  # type: ignore
            ref = weakref.ref(db)
            del db
            assert ref() is None, "a reference cycle keeps the handle"
    finally:
        gc.enable()


def test_handles_dropped_in_short_lived_threads_are_closed(
        tmp_path: Path) -> None:
    # Every handle leases one of the file's 1024 node ids until it is
    # closed; handles leaked by threads used to exhaust them.
    path = str(tmp_path / "threads.db")
    emqlite.open(path).close()
    errors = []

    def use() -> None:
        try:
            db = emqlite.open(path)
            db.queue("q").pending_size()
        except Exception as e:       # pragma: no cover - the failure
            errors.append(e)

    for _ in range(1100):
        t = threading.Thread(target=use)
        t.start()
        t.join()
    assert errors == []
    with emqlite.open(path) as db:
        assert db.queue("q").pending_size() == 0


@pytest.mark.parametrize("bad", ["victim\x00x", b"victim\x00x"])
def test_a_nul_in_a_queue_name_is_refused(bad: str) -> None:
    with emqlite.open(":memory:") as db:
        with pytest.raises(ValueError) as e:
            db.queue(bad).enqueue(b"x")
        assert "NUL" in str(e.value)
        assert db.queues() == []


def test_a_nul_in_an_id_or_a_group_is_refused() -> None:
    with emqlite.open(":memory:") as db:
        q = db.queue("mail")
        with pytest.raises(ValueError):
            q.enqueue(b"x", id="JOB0000000000A\x00tail")
        with pytest.raises(ValueError):
            q.complete("JOB0000000000A\x00", 1)
        with pytest.raises(ValueError):
            db.call("lane_enqueue", "mail", "PRT0KHTOWnGLuC\x00x",
                    "JOB0000000000B", b"p")
        assert db.queues() == []


@pytest.mark.parametrize("bad", [None, 5, 1.5, ["a"]])
def test_wrong_types_in_names_are_refused(bad: object,
                                          tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError):
        emqlite.open(bad)  # type: ignore
    assert os.listdir(tmp_path) == []       # no file named "None"
    with emqlite.open(":memory:") as db:
        with pytest.raises(TypeError):
            db.queue(bad).enqueue(b"x")  # type: ignore
        if bad is not None:                 # id=None: a fresh id
            with pytest.raises(TypeError):
                db.queue("mail").enqueue(b"x", id=bad)  # type: ignore


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_handle_used_after_fork_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "fork.db")
    db = emqlite.open(path)
    q = db.queue("mail")
    q.enqueue(b"before")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child
        code = 0
        try:
            try:
                q.enqueue(b"from the child")
                code = 1                            # accepted: the defect
            except RuntimeError as e:
                if "fork" not in str(e):
                    code = 2
            with emqlite.open(path) as mine:        # a handle of its own
                ids = [mine.mint() for _ in range(200)]
            os.write(w, "\n".join(ids).encode())
        except BaseException:
            code = 3
        os._exit(code)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0, "child exit %d" % os.WEXITSTATUS(
        status)
    child_ids = set(data.decode().split("\n"))
    parent_ids = {db.mint() for _ in range(200)}
    assert not (parent_ids & child_ids)                   # ids never meet
    assert q.pending_size() == 1                    # the parent's is intact
    db.close()
